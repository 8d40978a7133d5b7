"""Reductions along a short innermost axis (many rows of a few elements: nbody's
``(dx ** 2).sum(axis=2)`` over (n, n, 3), kmeans' ``.sum(axis=2)`` over (n, k, d) and its
``argmin(axis=1)``), timed with ``tuning.REDUCTION.thread_rows`` at each value given (rows
of at most that many elements take a thread a row, the ``cols`` kernel; longer ones a warp a
row, ``rows32``), beside CuPy.  Results are checked first: sums within eps * r * sum |x|
of the float64 sum (r: the row's length), argmin against NumPy's exactly.

    python benchmarks/probes/short_rows_probe.py [--values 0,8,16,32] [--reps 20]
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CUPYNUM_PLACEMENT", "device")
from _probe_util import event_median_ms, finish, import_cupy, log, run_check  # noqa: E402

import numpy as np  # noqa: E402

FAILS: list = []
check = functools.partial(run_check, fails=FAILS)


def cases(rng):
    """(label, host array, the reduction as a function of (lib, array))."""
    out = [("(1000,1000,3) f64 sum(axis=2)", rng.standard_normal((1000, 1000, 3)),
            lambda xp, a: a.sum(axis=2)),
           ("(100000,8,4) f64 sum(axis=2)", rng.standard_normal((100000, 8, 4)),
            lambda xp, a: a.sum(axis=2)),
           ("(100000,8) f64 argmin(axis=1)", rng.standard_normal((100000, 8)),
            lambda xp, a: a.argmin(axis=1))]
    for r in (2, 4, 8, 16, 32, 64):
        m = (1 << 22) // r
        out.append((f"({m},{r}) f32 sum(axis=1)", rng.standard_normal((m, r)).astype(np.float32),
                    lambda xp, a: a.sum(axis=1)))
    out.append(("(2048,2048) f64 sum(axis=1)", rng.standard_normal((2048, 2048)),
                lambda xp, a: a.sum(axis=1)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", default="0,8,16,32")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    started = time.perf_counter()
    import cupynum as cp
    from cupynum._backends.cuda import tuning
    cupy = import_cupy(need_device=True)
    values = [int(v) for v in args.values.split(",")]
    log(f"us per call (CUDA events, median of {args.reps}); thread_rows = " +
        ", ".join(map(str, values)) + (", CuPy" if cupy is not None else ""))
    for label, host, fn in cases(np.random.default_rng(0)):
        want = fn(np, host)
        a = cp.asarray(host)
        row = []
        for v in values:
            with tuning.overridden("REDUCTION", thread_rows=v):
                def same(v=v):
                    got = cp.asnumpy(fn(cp, a))
                    if want.dtype.kind == "f":  # (a sum's rounding: eps * r * sum |x|)
                        r = host.shape[-1]
                        bound = np.abs(host).sum(axis=-1) * np.finfo(host.dtype).eps * r
                        assert np.all(np.abs(got - host.astype(np.float64).sum(axis=-1))
                                      <= bound), "beyond the summation bound"
                    else:
                        np.testing.assert_array_equal(got, want)
                check(f"{label} thread_rows={v}", same)
                row.append(event_median_ms(cp, lambda: fn(cp, a), args.reps, warm=2,
                                           calls=5) * 1e3)
        if cupy is not None:
            c = cupy.asarray(host)
            row.append(event_median_ms(cupy, lambda: fn(cupy, c), args.reps, warm=2,
                                       calls=5) * 1e3)
        log(f"{label:34s} " + " ".join(f"{t:9.2f}" for t in row))
    return finish(FAILS, started)


if __name__ == "__main__":
    sys.exit(main())
