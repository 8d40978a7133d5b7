"""Probe: cumsum (single-pass chained scan), argmax and var at memory speed, against CuPy.

Run from the repo root on the GPU machine:
    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/reduce_probe.py
Checks values against NumPy first (prints FAIL lines), then times cupynum and CuPy side by
side (median of a few synchronised wall-clock runs of 3 calls each; fewer when a call is
slow), then where the time goes (CUDA events around every step of a plan: the status memset
and the scan kernel; the arg passes), then the tuning variants (``tuning.override``, reset after each): for the chained scan
(``tuning.SCAN``) the tile size (chain_items), the look-back window (chain_window: 32 * it
tiles a poll), kept windows (chain_keep), the poll sleep and first-poll delay (chain_sleep,
chain_delay, ns), each thread moving its own elements instead of warp-striped loads and
stores through shared memory (chain_transpose=False), no register cap
(chain_min_blocks=0); for the column scan (axis 0 of a C-contiguous matrix, scan_blocks)
loads in flight (col_unroll), chunking (col_waves, col_min_rows); for argmax
(``tuning.REDUCTION``) the fast path on or off (arg_fast), loads in flight (arg_loads), a
register cap (arg_min_blocks).  Every variant of the same tile size must give the same bits (the look-back
folds left whatever the timing).  Compact lines; about a minute of GPU time.
"""
import ast
import os
import statistics
import sys
import time

import numpy as np

import cupynum as cp
from cupynum._backends.cuda import launch
from cupynum._backends.cuda import reduction as red
from cupynum._backends.cuda import runtime as rt
from cupynum._backends.cuda import tuning

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import import_cupy, wall_median  # noqa: E402

cupy = import_cupy()

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


def scan_checks():
    """cumsum / cumprod / nancumsum against NumPy: f32 f64 i32 i64 c64, odd sizes, 1-D and
    both axes of 2-D and 3-D arrays (the column scans included), views; each result twice,
    bitwise equal (determinism).  Float error bound: 4 * n * eps * cumsum(|x|) against a
    float64/longdouble reference (NumPy's own sequential sum is within n * eps)."""
    def data(dt, shape):
        if dt[0] == "c":
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        if dt[0] == "i":
            return rng.integers(-1000, 1000, shape).astype(dt)
        return (rng.standard_normal(shape) + 0.1).astype(dt)

    def one(name, fn, npfn, x, axis):
        try:
            d = cp.asarray(x)
            got = cp.asnumpy(fn(d, axis=axis))
            again = cp.asnumpy(fn(d, axis=axis))
            want = npfn(x, axis=axis)
            ok = got.shape == want.shape and got.dtype == want.dtype
            why = "" if ok else f"got {got.dtype}{got.shape} want {want.dtype}{want.shape}"
            if ok and got.tobytes() != again.tobytes():
                ok, why = False, "two runs differ"
            if ok and want.dtype.kind in "fc" and npfn is not np.cumprod:
                xs = np.where(np.isnan(x), 0, x) if npfn is np.nancumsum else x
                wide = np.clongdouble if want.dtype.kind == "c" else np.longdouble
                ref = np.cumsum(xs.astype(wide), axis=axis)
                mag = np.cumsum(np.abs(np.where(np.isnan(xs), 0, xs)).astype(np.longdouble),
                                axis=axis)
                n = x.size if axis is None else x.shape[axis]
                eps = np.finfo(want.dtype).eps
                nan = np.isnan(ref)
                err = np.where(nan, 0, np.abs(got.astype(wide) - np.where(nan, 0, ref)))
                ok = bool(np.array_equal(np.isnan(got), nan) and
                          np.all(err <= 4 * n * eps * mag + np.finfo(want.dtype).tiny))
                worst = float(np.max(err / (n * eps * mag + 1e-300), initial=0))
                why = "" if ok else f"NaNs differ or err/(n eps |x|) = {worst:.3g}"
            elif ok and want.dtype.kind in "fc":
                ok = np.allclose(got, want, rtol=1e-5 if want.dtype.itemsize >= 8 else 1e-3,
                                 equal_nan=True)
                why = "" if ok else "cumprod differs"
            elif ok:
                ok = np.array_equal(got, want)
                why = "" if ok else "values differ"
        except Exception as e:  # noqa: BLE001
            ok, why = False, f"{type(e).__name__}: {str(e)[:200]}"
        if not ok:
            fails.append(name)
            print(f"FAIL {name}: {why}")
        return ok

    fns = (("cumsum", cp.cumsum, np.cumsum), ("nancumsum", cp.nancumsum, np.nancumsum),
           ("cumprod", cp.cumprod, np.cumprod))
    n_ok = n_all = 0
    for dt in ("f4", "f8", "i4", "i8", "c8"):
        shapes = [((1,), 0), ((7,), 0), ((4097,), 0), (((1 << 20) + 12345,), None),
                  ((1000, 3000), 0), ((1000, 3000), 1), ((4097, 33), 0), ((33, 4097), 1),
                  ((31, 5000), 0), ((3, 5, 7000), 0), ((3, 500, 70), 1), ((300, 7, 64), 0)]
        for shape, axis in shapes:
            x = data(dt, shape)
            if dt[0] == "f" and x.size > 10:
                x.flat[x.size // 2] = np.nan  # nancumsum; cumsum propagates it
            for name, f, npf in fns:
                if name == "nancumsum" and dt[0] != "f":
                    continue
                if name == "cumprod":  # products: short lines of values near 1
                    if x.size > 300000:
                        continue
                    xx = (1 + 1e-3 * x.real).astype(dt) if dt[0] in "fc" else \
                        np.clip(x, -2, 2).astype(dt)
                else:
                    xx = x
                n_all += 1
                n_ok += one(f"{name} {dt} {shape} axis={axis}", f, npf, xx, axis)
        v = data(dt, (2000, 600))  # views: reversed rows, column slices, transposed
        for name, view, axis in (("rev", v[::-1], 0), ("cols", v[:, 5:405], 0),
                                 ("T", v.T, 1), ("T0", v.T, 0), ("step", v[:, ::3], 1)):
            n_all += 1
            n_ok += one(f"cumsum {dt} view {name} axis={axis}", cp.cumsum, np.cumsum,
                        view, axis)
    print(f"scan checks: {n_ok}/{n_all} PASS")


def checks():
    scan_checks()
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
    return wall_median(fn, sync, reps, warm=0, calls=inner) * 1e6


class Steps:
    """CUDA events around every memset and kernel launch of the reduction engine."""

    def __init__(self):
        self.rec = None
        self._launch = launch.Prepared.launch  # (every family's; only the reduction's timed)
        self._memset = red._memset0
        steps = self

        def timed_launch(p, values, grid, block, shmem=0):
            kind = next((k[1] for k, v in red._prepared.items() if v is p), None)
            if kind is None:
                return steps._launch(p, values, grid, block, shmem)
            steps._around(f"{kind} {grid[0]}x{grid[1]}",
                          lambda: steps._launch(p, values, grid, block, shmem))

        def memset(ptr, n):
            steps._around(f"memset {n} B", lambda: steps._memset(ptr, n))

        launch.Prepared.launch = timed_launch
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
        launch.Prepared.launch = self._launch
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
                         ("cumsum 16k^2 ax0", lambda: sq.cumsum(axis=0)),
                         ("argmax 2^28 f32", lambda: a32.argmax())):
            parts = steps.run(fn, csync)
            print(f"steps {name}: " + "; ".join(f"{w} {us:.1f} us" for w, us in parts))
    finally:
        steps.close()

    # scan tuning variants: times, and the bits against the default of the same tile size
    print("defaults:", tuning.SCAN, tuning.REDUCTION)
    ref = {}
    chk32, chk64 = a32[: 1 << 24], a64[: 1 << 23]

    def use(family, var):  # the defaults, then this variant's knobs
        tuning.reset()
        tuning.override(family, **var)

    def bits():
        return (cp.asnumpy(chk32.cumsum()).tobytes(), cp.asnumpy(chk64.cumsum()).tobytes())

    def bits_key():  # variants of the same tile sizes must give the same bits
        return repr(tuning.SCAN.chain_items)

    ref[bits_key()] = bits()
    settled = ([dict(chain_window=1), dict(chain_keep=1)] +  # PROBE_ALL=1: these too
               [dict(chain_sleep=s) for s in (100, 400)] + [dict(chain_items=8)] +
               [dict(chain_delay=1000), dict(chain_transpose=False),
                dict(chain_min_blocks=0)])
    variants = ([dict(chain_items=32), dict(chain_window=4)] +
                (settled if os.environ.get("PROBE_ALL") else []))
    if os.environ.get("PROBE_VARIANTS"):  # a list of SCAN knob dicts instead (a literal)
        variants = ast.literal_eval(os.environ["PROBE_VARIANTS"])
    for var in variants:
        use("SCAN", var)
        try:
            r = [timed(csync, lambda: a32.cumsum(), reps=7),
                 timed(csync, lambda: a64.cumsum(), reps=7),
                 timed(csync, lambda: sq.cumsum(axis=1), reps=7)]
            same = ""
            b = bits()
            it = bits_key()
            if it in ref and b != ref[it]:
                fails.append(f"variant {var} bits")
                same = "  FAIL: bits differ from the default's"
            ref.setdefault(it, b)
            print(f"variant {var}: f32 {r[0]:.1f} us ({8 * N / r[0] / 1e6:.2f} TB/s)  "
                  f"f64 {r[1]:.1f} us  16k^2 ax1 {r[2]:.1f} us{same}")
        except Exception as e:  # noqa: BLE001
            print(f"variant {var}: ERROR {type(e).__name__}: {str(e)[:300]}")
    if os.environ.get("PROBE_SCAN_ONLY"):  # the chained-scan variants alone
        tuning.reset()
        print(f"done: {'OK' if not fails else 'FAIL ' + ', '.join(fails)}")
        return
    # column scans (axis 0): scan_blocks knobs; bits must not depend on col_unroll
    col_ref = None
    chk_sq = sq[:4096, :4096]
    for var in ([{}] + [dict(col_unroll=u) for u in (4, 16)] +
                [dict(col_waves=w) for w in (1, 4)] + [dict(col_min_rows=r) for r in (16, 512)]):
        use("SCAN", var)
        try:
            t = timed(csync, lambda: sq.cumsum(axis=0), reps=7)
            same = ""
            if set(var) <= {"col_unroll"}:
                b = cp.asnumpy(chk_sq.cumsum(axis=0)).tobytes()
                col_ref = col_ref or b
                if b != col_ref:
                    fails.append(f"variant {var} column bits")
                    same = "  FAIL: bits differ from the default's"
            print(f"variant {var}: 16k^2 ax0 {t:.1f} us ({8 * N / t / 1e6:.2f} TB/s){same}")
        except Exception as e:  # noqa: BLE001
            print(f"variant {var}: ERROR {type(e).__name__}: {str(e)[:300]}")
    for var in ([dict(arg_fast=False)] + [dict(arg_loads=n) for n in (2, 8)] +
                [dict(arg_min_blocks=5)]):
        use("REDUCTION", var)
        try:
            r = [timed(csync, lambda: a32.argmax()), timed(csync, lambda: a64.argmin())]
            print(f"variant {var}: argmax f32 {r[0]:.1f} us ({4 * N / r[0] / 1e6:.2f} TB/s)  "
                  f"argmin f64 {r[1]:.1f} us")
        except Exception as e:  # noqa: BLE001
            print(f"variant {var}: ERROR {type(e).__name__}: {str(e)[:300]}")
    tuning.reset()
    print(f"done: {'OK' if not fails else 'FAIL ' + ', '.join(fails)}")


if __name__ == "__main__":
    main()
