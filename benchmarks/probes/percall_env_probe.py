"""Why per-call times grow in the full side-by-side run: ``a + b`` (1,000 float32) per call,
timed as side_by_side.py times it (1,000 warm-up calls, then the median of 5 rounds of
20,000 calls closed by a sync), for cupynum, CuPy and the bare pre-packed launch, in one
process before and after what the full benchmark does first (GiB transfers and large
elementwise work in both libraries), then after each candidate remedy: a garbage
collection, both pools' cached blocks freed.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/percall_env_probe.py
"""
from __future__ import annotations

import gc
import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import device_sync, import_cupy, log, wall_median  # noqa: E402

import cupynum as cpn  # noqa: E402

cupy = import_cupy(need_device=True)


def per_call(lib, fn, calls=20000, rounds=5):
    """side_by_side.py's per-call figure: 1,000 warm-up calls, median of 5 rounds."""
    return wall_median(fn, device_sync(lib), rounds, warm=1000, calls=calls) * 1e6


def bare_launch():
    a = cpn.ones(1000, np.float32)
    b = cpn.ones(1000, np.float32)
    a + b
    launcher = cpn.add._fast[(a.dtype, b.dtype, 0)][1]
    out = cpn.empty(1000, np.float32)
    return launcher.bare((a, b), (out,), 1000)


def measure(label):
    h = np.random.default_rng(0).standard_normal(1000, dtype=np.float32)
    a, b = cpn.asarray(h), cpn.asarray(h)
    ours = per_call(cpn, lambda: a + b)
    bare = per_call(cpn, bare_launch())
    theirs = float("nan")
    if cupy is not None:
        ka, kb = cupy.asarray(h), cupy.asarray(h)
        theirs = per_call(cupy, lambda: ka + kb)
    log(f"{label:44s} cupynum {ours:6.2f} us  bare {bare:5.2f}  cupy {theirs:6.2f}  "
        f"ratio {ours / theirs:.2f}  threads {threading.active_count()}  "
        f"gc objects {len(gc.get_objects())}")


def heavy(keep):
    """What the full benchmark runs before its per-call rows, for both libraries."""
    n = 2**28
    rng = np.random.default_rng(1)
    h = [rng.standard_normal(n, dtype=np.float32) for _ in range(2)]
    keep.extend(h)  # side_by_side keeps its host inputs alive
    for lib in [cpn] + ([cupy] if cupy is not None else []):
        for _ in range(3):
            x, y = lib.asarray(h[0]), lib.asarray(h[1])
            for _ in range(5):
                z = x + y
                z = lib.sin(x)
                z = (x * 1.5 + 2.0) * y
            device_sync(lib)()
            back = z.get() if hasattr(z, "get") else cpn.asnumpy(z)
            del x, y, z, back


def main():
    measure("fresh process")
    keep = []
    heavy(keep)
    measure("after GiB transfers and big ops")
    gc.collect()
    measure("after gc.collect()")
    cpn.cuda.get_default_memory_pool().free_all_blocks()
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()
    measure("after both pools freed their blocks")
    keep.clear()
    measure("after the host inputs were dropped")


if __name__ == "__main__":
    main()
