"""Probe: cumsum (single-pass chained scan), argmax and var at memory speed, against CuPy.

Run from the repo root on the GPU machine:
    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/reduce_probe.py
Checks values against NumPy first (prints FAIL lines), then times cupynum and CuPy side by
side (median of a few synchronised wall-clock runs of 3 calls each; fewer when a call is
slow), then where the time goes (CUDA events around every step of a plan: the status memset
and the scan kernel; the arg passes), then the tuning variants (reduction.configure): for
the chained scan the tile size (CHAIN_ITEMS), the look-back window (CHAIN_WINDOW: 32 * it
tiles a poll), kept windows (CHAIN_KEEP), the poll sleep and first-poll delay (CHAIN_SLEEP,
CHAIN_DELAY, ns), each thread moving its own elements instead of warp-striped loads and
stores through shared memory (CHAIN_TRANSPOSE=False), no register cap (CHAIN_MINB=0),
CHAIN=False (the old 3-phase scan); for
argmax the fast path on or off (ARG_FAST), loads in flight (ARG_LOADS), a register cap
(ARG_MINB).  Every variant of the same tile size must give the same bits (the look-back
folds left whatever the timing).  Compact lines; about a minute of GPU time.
"""
import os
import statistics
import time

import numpy as np

import cupynum as cp
from cupynum._backends.cuda import reduction as red
from cupynum._backends.cuda import runtime as rt

try:
    import cupy
except Exception:  # noqa: BLE001
    cupy = None

rng = np.random.default_rng(0)
fails = []


def check(name, got, want, rtol=0.0, atol=0.0):
    got = cp.asnumpy(got) if hasattr(cp, "asnumpy") else np.asarray(got)
    ok = got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
    if ok:
        if rtol or atol:
            ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(got, want, equal_nan=got.dtype.kind in "fc")
    if not ok:
        fails.append(name)
        print(f"FAIL {name}: got {got.dtype}{got.shape} want {np.asarray(want).dtype}"
              f"{np.shape(want)}")


def checks():
    n = (1 << 22) + 12345
    for dt in ("f4", "f8", "i4", "i8", "c8", "c16"):
        a = (rng.standard_normal(n) * 10).astype(dt) if dt[0] != "c" else \
            (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        d = cp.asarray(a)
        want = np.cumsum(a)
        tol = dict(rtol=1e-3, atol=1e-2 * np.sqrt(n)) if dt[0] in "fc" else {}
        check(f"cumsum {dt}", cp.cumsum(d), want, **tol)
        r1, r2 = cp.asnumpy(cp.cumsum(d)), cp.asnumpy(cp.cumsum(d))
        if r1.tobytes() != r2.tobytes():
            fails.append(f"cumsum {dt} not deterministic")
            print(f"FAIL cumsum {dt}: two runs differ")
        check(f"cumsum {dt} [1:]", cp.cumsum(d[1:]), np.cumsum(a[1:]), **tol)
    a = 1 + rng.standard_normal(5000) * 1e-3
    check("cumprod f8", cp.cumprod(cp.asarray(a)), np.cumprod(a), rtol=1e-9)
    b = rng.integers(-2, 3, 3001)
    check("cumprod i8", cp.cumprod(cp.asarray(b)), np.cumprod(b))
    m = rng.standard_normal((1000, 3000)).astype(np.float32)
    for ax in (0, 1):
        check(f"cumsum 2d axis={ax}", cp.cumsum(cp.asarray(m), axis=ax), np.cumsum(m, axis=ax),
              rtol=1e-3, atol=1e-2)
    x = rng.integers(-5, 5, (1 << 20) + 3).astype(np.float32)
    for k in ("argmax", "argmin"):
        check(f"{k} ties", getattr(cp, k)(cp.asarray(x)), getattr(np, k)(x))
        check(f"{k} ties [1:]", getattr(cp, k)(cp.asarray(x)[1:]), getattr(np, k)(x[1:]))
        y = x.copy()
        y[777777] = np.nan
        y[900000] = np.nan
        check(f"{k} nan", getattr(cp, k)(cp.asarray(y)), getattr(np, k)(y))
        check(f"{k} axis0", getattr(cp, k)(cp.asarray(m), axis=0), getattr(np, k)(m, axis=0))
        check(f"{k} axis1", getattr(cp, k)(cp.asarray(m), axis=1), getattr(np, k)(m, axis=1))
        for dt in ("f8", "f2", "i1", "?"):
            z = (x.astype(dt) if dt != "?" else x > 3)
            check(f"{k} {dt}", getattr(cp, k)(cp.asarray(z)), getattr(np, k)(z))
    for dt in ("f4", "f8", "c8", "c16"):
        v = (rng.standard_normal((700, 900)) * 3 + 5).astype(dt)
        if dt[0] == "c":
            v = v + 1j * v[::-1]
        tol = 1e-4 if dt in ("f4", "c8") else 1e-10
        for ax in (None, 0, 1):
            check(f"var {dt} axis={ax}", cp.var(cp.asarray(v), axis=ax), np.var(v, axis=ax),
                  rtol=tol)
            check(f"std {dt} axis={ax} ddof=1", cp.std(cp.asarray(v), axis=ax, ddof=1),
                  np.std(v, axis=ax, ddof=1), rtol=tol)
    check("var keepdims", cp.var(cp.asarray(m), axis=1, keepdims=True),
          np.var(m, axis=1, keepdims=True), rtol=1e-4)


def timed(sync, fn, reps=15, inner=3, budget=0.4):
    """Median microseconds a call; fewer repetitions when a call is slow (budget seconds)."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = time.perf_counter() - t0
    inner = max(1, min(inner, int(budget / max(one, 1e-6) / reps)))
    reps = max(1, min(reps, int(budget / max(one * inner, 1e-6))))
    s = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        s.append((time.perf_counter() - t0) / inner)
    return statistics.median(s) * 1e6


class Steps:
    """CUDA events around every memset and kernel launch of the reduction engine."""

    def __init__(self):
        self.rec = None
        self._launch = red.Prepared.launch
        self._memset = red._memset0
        steps = self

        def launch(p, grid, values):
            kind = next((k[1] for k, v in red._prepared.items() if v is p), "kernel")
            steps._around(f"{kind} {grid[0]}x{grid[1]}", lambda: steps._launch(p, grid, values))

        def memset(ptr, n):
            steps._around(f"memset {n} B", lambda: steps._memset(ptr, n))

        red.Prepared.launch = launch
        red._memset0 = memset

    def _around(self, what, fn):
        if self.rec is None:
            return fn()
        e0, e1 = rt.create_event(), rt.create_event()
        rt.record_event(e0)
        fn()
        rt.record_event(e1)
        self.rec.append((what, e0, e1))

    def run(self, fn, sync, n=5):
        """Per-step median microseconds over n calls (after one warm-up)."""
        fn()
        sync()
        per = []
        for _ in range(n):
            self.rec = []
            fn()
            sync()
            per.append([(w, rt.elapsed_time(a, b) * 1e3) for w, a, b in self.rec])
            for _, a, b in self.rec:
                rt.destroy_event(a)
                rt.destroy_event(b)
        self.rec = None
        return [(per[0][i][0], statistics.median(p[i][1] for p in per))
                for i in range(len(per[0]))] or [("(no kernel launches)", 0.0)]

    def close(self):
        red.Prepared.launch = self._launch
        red._memset0 = self._memset


def main():
    checks()
    print(f"checks: {'OK' if not fails else f'{len(fails)} FAIL'}")
    try:
        csync = cp.cuda.Device().synchronize
    except Exception:  # noqa: BLE001  (no GPU: a smoke run on the host backend)
        csync = lambda: None  # noqa: E731
    ksync = (lambda: cupy.cuda.Device().synchronize()) if cupy else None
    N = 1 << int(os.environ.get("PROBE_LOG2N", "28"))  # (smaller: a smoke run off the GPU)
    side = 1 << (N.bit_length() // 2)
    h32 = rng.standard_normal(N, dtype=np.float32)
    a32 = cp.asarray(h32)
    a64 = cp.asarray(rng.standard_normal(N // 2))
    sq = a32.reshape(side, -1)
    k32 = cupy.asarray(h32) if cupy else None
    k64 = cupy.asarray(cp.asnumpy(a64)) if cupy else None
    ksq = k32.reshape(side, -1) if cupy else None
    del h32
    cases = [
        ("copy 2^28 f32", lambda x: x.copy(), a32, k32, 8 * N),
        ("sum 2^28 f32", lambda x: x.sum(), a32, k32, 4 * N),
        ("cumsum 2^28 f32", lambda x: x.cumsum(), a32, k32, 8 * N),
        ("cumsum 2^27 f64", lambda x: x.cumsum(), a64, k64, 8 * N),
        ("cumsum 16k^2 ax1", lambda x: x.cumsum(axis=1), sq, ksq, 8 * N),
        ("cumsum 16k^2 ax0", lambda x: x.cumsum(axis=0), sq, ksq, 8 * N),
        ("argmax 2^28 f32", lambda x: x.argmax(), a32, k32, 4 * N),
        ("argmin 2^27 f64", lambda x: x.argmin(), a64, k64, 4 * N),
        ("var 2^28 f32", lambda x: x.var(), a32, k32, 4 * N),
    ]
    print(f"{'case':20s} {'cupynum us':>11s} {'TB/s':>6s} {'cupy us':>9s} {'TB/s':>6s}")
    for name, fn, x, kx, nbytes in cases:
        t = timed(csync, lambda: fn(x))
        tk = timed(ksync, lambda: fn(kx)) if cupy else float("nan")
        print(f"{name:20s} {t:11.1f} {nbytes / t / 1e6:6.2f} {tk:9.1f} {nbytes / tk / 1e6:6.2f}")

    # where the time goes: every step of the plan, CUDA events
    steps = Steps()
    try:
        for name, fn in (("cumsum 2^28 f32", lambda: a32.cumsum()),
                         ("cumsum 2^27 f64", lambda: a64.cumsum()),
                         ("cumsum 16k^2 ax1", lambda: sq.cumsum(axis=1)),
                         ("argmax 2^28 f32", lambda: a32.argmax())):
            parts = steps.run(fn, csync)
            print(f"steps {name}: " + "; ".join(f"{w} {us:.1f} us" for w, us in parts))
    finally:
        steps.close()

    # scan tuning variants: times, and the bits against the default of the same tile size
    base = {k: getattr(red, k) for k in ("CHAIN", "CHAIN_ITEMS", "CHAIN_WINDOW", "CHAIN_KEEP",
                                         "CHAIN_SLEEP", "CHAIN_DELAY", "CHAIN_TRANSPOSE",
                                         "CHAIN_MINB", "ARG_FAST", "ARG_LOADS", "ARG_MINB")}
    print("defaults:", base)
    ref = {}
    chk32, chk64 = a32[: 1 << 24], a64[: 1 << 23]

    def bits():
        return (cp.asnumpy(chk32.cumsum()).tobytes(), cp.asnumpy(chk64.cumsum()).tobytes())

    ref[base["CHAIN_ITEMS"]] = bits()
    variants = ([dict(CHAIN_ITEMS=i) for i in (8, 32)] +
                [dict(CHAIN_WINDOW=w) for w in (1, 4)] +
                [dict(CHAIN_KEEP=1)] +
                [dict(CHAIN_SLEEP=s) for s in (100, 400)] +
                [dict(CHAIN_DELAY=1000)] +
                [dict(CHAIN_TRANSPOSE=False), dict(CHAIN_MINB=0)] +
                [dict(CHAIN=False)])
    for var in variants:
        red.configure(**dict(base, **var))
        try:
            r = [timed(csync, lambda: a32.cumsum(), reps=7),
                 timed(csync, lambda: a64.cumsum(), reps=7),
                 timed(csync, lambda: sq.cumsum(axis=1), reps=7)]
            same = ""
            if red.CHAIN:
                b = bits()
                it = red.CHAIN_ITEMS
                if it in ref and b != ref[it]:
                    fails.append(f"variant {var} bits")
                    same = "  FAIL: bits differ from the default's"
                ref.setdefault(it, b)
            print(f"variant {var}: f32 {r[0]:.1f} us ({8 * N / r[0] / 1e6:.2f} TB/s)  "
                  f"f64 {r[1]:.1f} us  16k^2 ax1 {r[2]:.1f} us{same}")
        except Exception as e:  # noqa: BLE001
            print(f"variant {var}: ERROR {type(e).__name__}: {str(e)[:300]}")
    for var in ([dict(ARG_FAST=False)] + [dict(ARG_LOADS=n) for n in (2, 8)] +
                [dict(ARG_MINB=5)]):
        red.configure(**dict(base, **var))
        try:
            r = [timed(csync, lambda: a32.argmax()), timed(csync, lambda: a64.argmin())]
            print(f"variant {var}: argmax f32 {r[0]:.1f} us ({4 * N / r[0] / 1e6:.2f} TB/s)  "
                  f"argmin f64 {r[1]:.1f} us")
        except Exception as e:  # noqa: BLE001
            print(f"variant {var}: ERROR {type(e).__name__}: {str(e)[:300]}")
    red.configure(**base)
    print(f"done: {'OK' if not fails else 'FAIL ' + ', '.join(fails)}")


if __name__ == "__main__":
    main()
