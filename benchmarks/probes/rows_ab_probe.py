"""The side_by_side rows that were slower at the head than at c87cbae (issue 17), taken apart,
for any tree on PYTHONPATH (an older cupynum included: public API and CUDA events only).

    PYTHONPATH=<tree> CUPYNUM_BACKEND=cuda python benchmarks/probes/rows_ab_probe.py

Per case, the median of 7 rounds: device time per call of a batch (CUDA events around the
batch, as side_by_side times it) and the wall time per call of the same batch closed by a
sync.  A generator's birth is timed alone, so that a row's ``default_rng(0).random(n)``
can be split into the generator and the draw.
"""
import statistics
import time

import numpy as np

import cupynum as cp

N_RNG = 1 << int(__import__("os").environ.get("ROWS_AB_LOG2", "28"))


def rounds(fn, inner, reps=7):
    fn()
    cp.cuda.synchronize()
    dev, wall = [], []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        t0 = time.perf_counter()
        s.record()
        for _ in range(inner):
            fn()
        e.record()
        e.synchronize()
        wall.append((time.perf_counter() - t0) / inner)
        dev.append(cp.cuda.get_elapsed_time(s, e) / 1e3 / inner)
    return statistics.median(dev), statistics.median(wall)


def show(name, fn, inner):
    d, w = rounds(fn, inner)
    print(f"{name:<44} device {d * 1e6:10.2f} us   wall {w * 1e6:10.2f} us", flush=True)


def main():
    print("cupynum from", cp.__file__)
    g = cp.random.default_rng(0)
    show("default_rng(0) (the generator alone)", lambda: cp.random.default_rng(0), 50)
    show("default_rng(0) + first draw of 1", lambda: cp.random.default_rng(0).random(1), 50)
    show("g.random(2^28, f32), one generator", lambda: g.random(N_RNG, dtype=np.float32), 5)
    show("default_rng(0).random(2^28, f32) (the row)",
         lambda: cp.random.default_rng(0).random(N_RNG, dtype=np.float32), 5)
    show("g.standard_normal(2^28, f32), one generator",
         lambda: g.standard_normal(N_RNG, dtype=np.float32), 5)
    show("default_rng(0).standard_normal(2^28) (the row)",
         lambda: cp.random.default_rng(0).standard_normal(N_RNG, dtype=np.float32), 5)
    show("empty(2^28, f32)", lambda: cp.empty(N_RNG, np.float32), 5)
    small = cp.asarray(np.random.default_rng(1).standard_normal((10000, 4, 4)).astype(np.float32))
    show("batch 10000 4x4 f32 a @ a", lambda: small @ small, 200)
    for dt in (np.float64, np.float64, np.float32):
        a = cp.asarray(np.random.default_rng(2).standard_normal((8192, 8192)).astype(dt))
        show(f"A@B 8192^2 {np.dtype(dt).name}", lambda a=a: a @ a, 3)


if __name__ == "__main__":
    main()
