"""Reductions of pending expressions on the GPU (issue 19: the reduction's prologue).

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/fused_reduce_probe.py
    (--quick: 2^20 instead of 2^28, a dry run of the script)

Checks (PASS/FAIL), bit for bit: a reduction of a pending expression (the expression
computed inside the reduction's loads) against the same reduction of the expression's value
stored first (what ran before), for full and axis reductions, views, broadcast operands,
int8 and float16 inputs.  Then the device time (CUDA events, median) and the launches of
``(a*b).sum()`` at 2^28 float32, fused and stored-first, beside ``a.sum()`` and CuPy's
``(a*b).sum()``, and of axis reductions of a 2-D product.
"""
from __future__ import annotations

import functools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import (bits_equal, event_median_ms, finish, import_cupy, log,  # noqa: E402
                         run_check)

BIG = 1 << 20 if "--quick" in sys.argv else 1 << 28
SIDE = 1 << 10 if "--quick" in sys.argv else 1 << 14
FAILS: list = []
check = functools.partial(run_check, fails=FAILS)


def main():
    start = time.perf_counter()
    import cupynum as cp
    from cupynum.testing import device_counters, reset_device_counters

    def launches(fn):
        fn()
        cp.cuda.synchronize()
        reset_device_counters()
        fn()
        cp.cuda.synchronize()
        return device_counters()["launches"]

    def stored_first(expr, reduce):
        def run():
            x = expr()
            x._buf.on_device()  # the value stored, then reduced (the unfused path)
            return reduce(x)
        return run

    def fused(expr, reduce):
        return lambda: reduce(expr())

    def same(expr, reduce):
        for _ in range(2):  # the second sighting of a structure compiles it
            got = fused(expr, reduce)()
        want = stored_first(expr, reduce)()
        assert bits_equal(np.asarray(got.get()), np.asarray(want.get())), (got, want)

    rng = np.random.default_rng(0)
    a, b = (cp.asarray(rng.uniform(-1, 1, BIG).astype(np.float32)) for _ in range(2))
    m, n = (cp.asarray(rng.uniform(-1, 1, (SIDE, SIDE)).astype(np.float32)) for _ in range(2))
    col = cp.asarray(rng.uniform(-1, 1, (SIDE, 1)).astype(np.float32))
    i8 = cp.asarray(rng.integers(-128, 128, BIG).astype(np.int8))
    f2 = cp.asarray(rng.uniform(-1, 1, BIG).astype(np.float16))
    cases = [
        ("(a*b).sum()", lambda: a * b, lambda x: x.sum()),
        ("(a*b+1).max()", lambda: a * b + 1.0, lambda x: x.max()),
        ("(a*b).mean()", lambda: a * b, lambda x: x.mean()),
        ("(a*b)[1:-3:3].sum()", lambda: a * b, lambda x: x[1:-3:3].sum()),
        ("(m*n).sum(axis=0)", lambda: m * n, lambda x: x.sum(axis=0)),
        ("(m*n).sum(axis=1)", lambda: m * n, lambda x: x.sum(axis=1)),
        ("(m*n).T.sum(axis=0)", lambda: m * n, lambda x: x.T.sum(axis=0)),
        ("(m[:, ::-1]*col + n).sum(axis=1)", lambda: m[:, ::-1] * col + n,
         lambda x: x.sum(axis=1)),
        ("(i8*i8).sum() int64", lambda: i8 * i8, lambda x: x.sum()),
        ("(f2*f2).sum() float16", lambda: f2 * f2, lambda x: x.sum()),
        ("(a>b).any()", lambda: a > b, lambda x: x.any()),
    ]
    for name, expr, reduce in cases:
        check(f"{name} fused == stored first, bits", lambda: same(expr, reduce))

    rows = []
    timed = [("(a*b).sum()", lambda: a * b, lambda x: x.sum()),
             ("(m*n).sum(axis=0)", lambda: m * n, lambda x: x.sum(axis=0)),
             ("(m*n).sum(axis=1)", lambda: m * n, lambda x: x.sum(axis=1))]
    for name, expr, reduce in timed:
        for how, fn in (("fused", fused(expr, reduce)),
                        ("stored first", stored_first(expr, reduce))):
            rows.append((f"{name} {how}", event_median_ms(cp, fn, reps=10, warm=3),
                         launches(fn)))
    rows.append(("a.sum()", event_median_ms(cp, lambda: a.sum(), reps=10, warm=3),
                 launches(lambda: a.sum())))
    rows.append(("m.sum(axis=0)", event_median_ms(cp, lambda: m.sum(axis=0), reps=10, warm=3),
                 launches(lambda: m.sum(axis=0))))
    cupy = import_cupy(need_device=True)
    if cupy is not None:
        ca, cb = cupy.asarray(a.get()), cupy.asarray(b.get())
        rows.append(("cupy (a*b).sum()", event_median_ms(cupy, lambda: (ca * cb).sum(),
                                                          reps=10, warm=3), None))
    label = f"2^{BIG.bit_length() - 1} / {SIDE}^2 float32"
    for name, ms, k in rows:
        extra = "" if k is None else f"  ({k} launches)"
        log(f"  {name:<34} {label:<22} {ms:8.3f} ms{extra}")
    return finish(FAILS, start)


if __name__ == "__main__":
    sys.exit(main())
