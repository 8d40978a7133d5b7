"""Where fusion starts to pay in a Python loop: fused and eager wall time per statement by
size (``fusion.MIN_ELEMENTS``, CUPYNUM_FUSION_MIN_ELEMENTS).

A fused statement saves device time (one pass over memory instead of one per op) and costs
Python time (the deferral and the graph walk).  In a loop, the device runs behind the
Python that issues the launches, so the statement costs the larger of the two: fusion pays
once the eager ops' device time exceeds the fused statement's Python.  Each statement runs
20 times between syncs, fused (floor 0) and eager (floor past every size) alternating in
one process; the best of 5 batches, per statement.

    CUPYNUM_BACKEND=cuda CUPYNUM_PLACEMENT=device python benchmarks/probes/fusion_floor_probe.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _probe_util  # noqa: E402,F401  (the repository root on sys.path)

import numpy as np  # noqa: E402

import cupynum as cp  # noqa: E402
from cupynum._backends import fusion  # noqa: E402

STATEMENTS = {
    "chain9": lambda a, b, c: ((a * b + c) * a - b) / (c + 1.5) + cp.sqrt(a) * 0.5 - b * c,
    "axpb": lambda a, b, c: a * b + c,
    "nbody-like": lambda a, b, c: ((a * a + b * b + c * c + 0.01) ** -1.5 * a).sum(axis=1),
}


def batch(fn, args, floor, calls=20):
    fusion.MIN_ELEMENTS = floor
    t0 = time.perf_counter()
    for _ in range(calls):
        r = fn(*args)
        if r._buf.pending is not None:  # (a dropped pending result would compute nothing)
            r._buf.on_device()
    cp.cuda.synchronize()
    return (time.perf_counter() - t0) / calls


def main():
    saved = fusion.MIN_ELEMENTS
    print("statement dtype log2(n): fused us, eager us, fused/eager", flush=True)
    for dtype in ("float64", "float32"):
        for log2n in (20, 21, 22, 23, 24, 25, 26):
            n = 1 << log2n
            rows = 1 << (log2n // 2)
            rng = np.random.default_rng(0)
            args = [cp.asarray(rng.random((rows, n // rows)).astype(dtype) + 0.5)
                    for _ in range(3)]
            for name, fn in STATEMENTS.items():
                best = {}
                for floor in (0, 1 << 62, 0, 1 << 62):  # (warm-up: compiles, plans)
                    batch(fn, args, floor, 3)
                for _ in range(5):
                    for key, floor in (("fused", 0), ("eager", 1 << 62)):
                        t = batch(fn, args, floor)
                        best[key] = min(best.get(key, t), t)
                print(f"{name:11s} {dtype} {log2n}: {best['fused'] * 1e6:9.1f} "
                      f"{best['eager'] * 1e6:9.1f} {best['fused'] / best['eager']:6.2f}",
                      flush=True)
            del args
    fusion.MIN_ELEMENTS = saved


if __name__ == "__main__":
    main()
