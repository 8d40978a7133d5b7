"""The Python path's per-call time of small statements, two source trees side by side (A/B),
without a GPU: the CUDA backend against the fake ``libcuda.so.1`` of
tests/test_launch_paths.py (launches are recorded, kernels never run), so what is timed is
everything but the driver's own work.

    python benchmarks/probes/fake_ab_probe.py TREE_A TREE_B [TREE_C ...] [rounds]

Each round runs every tree once in a fresh interpreter (in turn), each statement's
figure being the minimum over 21 repeats of about a millisecond within the process; the table gives, per tree, the
median of the rounds' figures (a busy host adds noise, never speed, and drifts over the
rounds: interleaving puts the drift on all trees).  The statements cover every kernel
family's launch path: the elementwise hot path (``a + b``, ``a * 2.0``, a 9-op chain, and
``launch.new`` alone: the CUDA backend's part of ``a + b``, allocation, result Buffer,
packing, launch and count), the general elementwise path (a strided slice assignment), a
reduction, a hand-written kernel (a 64x64 transpose copy) and ``ufunc.at``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CODE = r'''
import json, timeit
import numpy as np
import cupynum as cp
a = cp.asarray(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
b = a + 1
x = cp.asarray(np.arange(2000, dtype=np.float32))
m = cp.asarray(np.arange(64 * 64, dtype=np.float32).reshape(64, 64))
idx = cp.asarray(np.arange(5))
one = np.float32(1)

def chain9(a):
    return ((((a * 1.5 + 2.0) * a - 0.5) * 0.25 + a) * a - 1.0) * 2.0

def setstrided():
    x[::2] = b

from cupynum._array import ndarray
a + b  # (fills the hot path's cache)
new = cp.add._fast[(a.dtype, b.dtype, 0)][1].new  # the CUDA backend's part of a + b

def backend_part():  # allocation, result Buffer, pack, launch, count
    o = object.__new__(ndarray)
    new(a, b, o, 1000, 4000)

cases = {"a + b: launch.new alone": backend_part, "a + b": lambda: a + b, "a * 2.0": lambda: a * 2.0, "9-op chain": lambda: chain9(a),
         "x[::2] = b (strided kernel)": setstrided, "a.sum() (reduction)": lambda: a.sum(),
         "m.T copy (hand-written kernel)": lambda: cp.ascontiguousarray(m.T),
         "add.at (ufunc_at kernel)": lambda: cp.add.at(a, idx, one)}

def per_call(fn):
    # repeats of about a millisecond each: short enough that most run without the process
    # being preempted on a busy host (the minimum is taken)
    for _ in range(300):
        fn()
    one = min(timeit.repeat(fn, number=50, repeat=3)) / 50
    n = max(20, int(1e-3 / max(one, 1e-7)))
    return min(timeit.repeat(fn, number=n, repeat=21)) / n * 1e6

print(json.dumps({k: per_call(f) for k, f in cases.items()}))
'''


def run(tree, fake_dir, cache_dir):
    env = dict(os.environ, PYTHONPATH=tree, CUPYNUM_BACKEND="cuda",
               LD_LIBRARY_PATH=f"{fake_dir}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               CUPYNUM_CACHE_DIR=os.environ.get("CUPYNUM_CACHE_DIR", cache_dir))
    p = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env,
                       cwd="/tmp")
    if p.returncode:
        return {"error": p.stderr[-1500:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    from percall_probe import fake_driver_dir

    args = sys.argv[1:]
    rounds = int(args.pop()) if args and args[-1].isdigit() else 5
    trees = [os.path.abspath(t) for t in args]
    fake_dir = fake_driver_dir()
    cache_dir = os.path.join(fake_dir, "kernel-cache")
    results = {t: [] for t in trees}
    for _ in range(rounds):
        for t in trees:
            results[t].append(run(t, fake_dir, cache_dir))
    good = {t: [r for r in rs if "error" not in r] for t, rs in results.items()}
    for t, rs in results.items():
        if len(good[t]) < len(rs):
            print(f"== {t}: {len(rs) - len(good[t])} of {len(rs)} runs failed")
            print(next(r["error"] for r in rs if "error" in r))
    if not all(good.values()):
        return
    print(f"per call, us (median over {rounds} rounds of the min of 21 repeats)")
    names = list(good[trees[0]][0])
    print(f"  {'':34s}" + "".join(f"{os.path.basename(t) or t:>12s}" for t in trees))
    for k in names:
        print(f"  {k:34s}" + "".join(f"{statistics.median(r[k] for r in good[t]):12.2f}"
                                     for t in trees))


if __name__ == "__main__":
    main()
