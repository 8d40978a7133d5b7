"""GPU probe for the batched linalg routines (issue 6): stacks (B, n, n) through cuBLAS
getrf/getrsBatched, geqrfBatched, cuSOLVER potrfBatched, syevjBatched / XsyevBatched and
gesvdjBatched, against today's per-matrix loop and CuPy.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/linalg_batched_probe.py

Knobs (``tuning.SOLVER``, set through tuning.overridden):
  batched              False = the per-matrix loop everywhere ("loop" rows below)
  lu_batched_max_n, cholesky_batched_max_n, qr_batched_max_n   largest n sent to the batched
                       routine (each row here is run with the limit raised to n, so the
                       crossover can be read off the table)
  eigh_batched         "syevj" (n <= 32) or "xsyev" (cusolverDnXsyevBatched, any n)
First every op x path is checked against NumPy (PASS/FAIL), including a singular member
(LinAlgError) and a non-positive-definite member; then one line per (op, shape, path):
median milliseconds per call (CUDA events around the call, which includes the info read-back
that every decomposition does) and CuPy's time for the same call.
"""
import functools
import os
import sys
import time
import traceback

import numpy as np

import cupynum as cpn
from cupynum._backends.cuda import tuning

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import (event_median_ms, finish, import_cupy,  # noqa: E402
                         past_budget, random_array, run_check)

cupy = import_cupy()

FAILS = []
T0 = time.perf_counter()
BIG = 10**6
check = functools.partial(run_check, fails=FAILS)


def well(shape, dt):
    n = shape[-1]
    return (random_array(shape, dt) + n * np.eye(n)).astype(dt)


def hpd(shape, dt):
    a = random_array(shape, dt)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dt)


# path name -> solver knob values
PATHS = {
    "loop": dict(batched=False),
    "batched": dict(batched=True, lu_batched_max_n=BIG, cholesky_batched_max_n=BIG,
                    qr_batched_max_n=BIG, eigh_batched="syevj", eigh_batched_max_n=32,
                    svd_batched_max_n=32),
    "xsyev": dict(batched=True, eigh_batched="xsyev", eigh_batched_max_n=BIG),
}


TOL = {np.float32: 2e-3, np.float64: 1e-9, np.complex64: 2e-3, np.complex128: 1e-9}


def _ops():
    """name -> (make input, cupynum call, NumPy reference comparison)."""
    def cmp_vals(got, exp, tol):
        got, exp = np.asarray(got), np.asarray(exp)
        assert got.dtype == exp.dtype and got.shape == exp.shape, (got.dtype, exp.dtype,
                                                                   got.shape, exp.shape)
        err = np.abs(got - exp).max() / max(np.abs(exp).max(), 1)
        assert err < tol, f"rel err {err:.1e}"
        return err

    def svd_check(a, res, tol):
        u, s, vh = (np.asarray(x) for x in res)
        es = np.linalg.svd(a, compute_uv=False)
        cmp_vals(s, es, tol)
        assert (np.diff(s, axis=-1) <= 0).all(), "not descending"
        k = s.shape[-1]
        return cmp_vals((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, tol)

    def eigh_check(a, res, tol):
        w, v = (np.asarray(x) for x in res)
        cmp_vals(w, np.linalg.eigvalsh(a), tol)
        return cmp_vals(a @ v, v * w[..., None, :], tol)

    def qr_check(a, res, tol):
        q, r = (np.asarray(x) for x in res)
        return cmp_vals(q @ r, a, tol)

    return {
        "solve": (well, lambda m, a: m.linalg.solve(a, a[..., :2]),
                  lambda a, got, tol: cmp_vals(got, np.linalg.solve(a, a[..., :2]), tol)),
        "inv": (well, lambda m, a: m.linalg.inv(a),
                lambda a, got, tol: cmp_vals(got, np.linalg.inv(a), tol)),
        "slogdet": (well, lambda m, a: m.linalg.slogdet(a)[1],
                    lambda a, got, tol: cmp_vals(got, np.linalg.slogdet(a)[1], tol)),
        "cholesky": (hpd, lambda m, a: m.linalg.cholesky(a),
                     lambda a, got, tol: cmp_vals(got, np.linalg.cholesky(a), tol)),
        "eigvalsh": (hpd, lambda m, a: m.linalg.eigvalsh(a),
                     lambda a, got, tol: cmp_vals(got, np.linalg.eigvalsh(a), tol * 10)),
        "eigh": (hpd, lambda m, a: m.linalg.eigh(a), lambda a, got, tol: eigh_check(a, got, tol * 10)),
        "svdvals": (random_array, lambda m, a: m.linalg.svd(a, compute_uv=False),
                    lambda a, got, tol: cmp_vals(got, np.linalg.svd(a, compute_uv=False), tol * 10)),
        "svd": (random_array, lambda m, a: m.linalg.svd(a, full_matrices=False),
                lambda a, got, tol: svd_check(a, got, tol * 10)),
        "qr": (random_array, lambda m, a: m.linalg.qr(a),
               lambda a, got, tol: qr_check(a, got, tol)),
    }


SHAPES = [(1024, 4, 4), (512, 8, 8), (256, 32, 32), (64, 64, 64), (16, 128, 128)]
CHECK_SHAPES = [(7, 5, 5), (6, 32, 32), (3, 2, 33, 33)]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def checks():
    print("== checks ==", flush=True)
    for name, (make, call, ref) in _ops().items():
        for path, knobs in PATHS.items():
            if path == "xsyev" and not name.startswith("eig"):
                continue
            for dt in DTYPES:
                for shape in CHECK_SHAPES:
                    def run(make=make, call=call, ref=ref, dt=dt, shape=shape, knobs=knobs):
                        a = make(shape, dt)
                        with tuning.overridden("SOLVER", **knobs):
                            got = call(cpn, cpn.asarray(a))
                        err = ref(a, got, TOL[dt] * shape[-1])
                        return f"err {err:.1e}"
                    check(f"{name:<9s} {path:<7s} {np.dtype(dt).name:<10s} {shape}", run)
    for path, knobs in PATHS.items():
        if path == "xsyev":
            continue
        for dt in (np.float32, np.complex128):
            check(f"singular member raises {path} {np.dtype(dt).name}",
                  _raises_case(knobs, dt, "solve"))
            check(f"singular member raises inv {path} {np.dtype(dt).name}",
                  _raises_case(knobs, dt, "inv"))
            check(f"non-PD member raises cholesky {path} {np.dtype(dt).name}",
                  _raises_case(knobs, dt, "cholesky"))
            check(f"det of singular member is 0 {path} {np.dtype(dt).name}",
                  _det_zero_case(knobs, dt))


def _raises_case(knobs, dt, op):
    def run():
        if op == "cholesky":
            a = hpd((6, 8, 8), dt)
            a[4] = -a[4]
        else:
            a = well((6, 8, 8), dt)
            a[4, 2] = 0
        with tuning.overridden("SOLVER", **knobs):
            x = cpn.asarray(a)
            try:
                if op == "solve":
                    cpn.linalg.solve(x, x)
                elif op == "inv":
                    cpn.linalg.inv(x)
                else:
                    cpn.linalg.cholesky(x)
            except np.linalg.LinAlgError:
                return "LinAlgError"
        raise AssertionError("no LinAlgError")
    return run


def _det_zero_case(knobs, dt):
    def run():
        a = well((6, 8, 8), dt)
        a[4, 2] = 0
        with tuning.overridden("SOLVER", **knobs):
            d = np.asarray(cpn.linalg.det(cpn.asarray(a)))
        assert d[4] == 0 and (d[[0, 1, 2, 3, 5]] != 0).all(), d
    return run


def t_cpn(fn, calls, rounds=5):
    return event_median_ms(cpn, fn, rounds, calls=calls)


def t_cupy(fn, calls, rounds=5):
    return event_median_ms(cupy, fn, rounds, calls=calls)


def timings(budget_s=50):
    print("\n== timings (ms per call; float64 and complex64) ==", flush=True)
    print(f"  {'op':<9s} {'dtype':<10s} {'shape':<16s} " +
          " ".join(f"{p:>9s}" for p in PATHS) + f" {'CuPy':>9s}  best", flush=True)
    start = time.perf_counter()
    for name, (make, call, _) in _ops().items():
        for dt in (np.float64, np.complex64):
            for shape in SHAPES:
                if past_budget(start, budget_s):
                    print("  (time budget reached: remaining rows skipped)")
                    return
                a = make(shape, dt)
                x = cpn.asarray(a)
                cols = {}
                for path, knobs in PATHS.items():
                    if path == "xsyev" and not name.startswith("eig"):
                        cols[path] = None
                        continue
                    calls = 1 if path == "loop" else 3
                    try:
                        with tuning.overridden("SOLVER", **knobs):
                            cols[path] = t_cpn(lambda: call(cpn, x), calls, rounds=3)
                    except Exception as e:  # noqa: BLE001
                        cols[path] = None
                        print(f"  {name} {path} {shape}: {type(e).__name__}: {e}")
                ref = None
                if cupy is not None:
                    try:
                        cx = cupy.asarray(a)
                        ref = t_cupy(lambda: call(cupy, cx), 1, rounds=3)
                    except Exception as e:  # noqa: BLE001
                        print(f"  CuPy {name} {shape}: {type(e).__name__}: {e}")
                vals = {k: v for k, v in cols.items() if v is not None}
                best = min(vals, key=vals.get) if vals else "-"
                fmt = " ".join(f"{v:9.3f}" if v is not None else f"{'-':>9s}"
                               for v in list(cols.values()) + [ref])
                print(f"  {name:<9s} {np.dtype(dt).name:<10s} {str(shape):<16s} {fmt}  {best}",
                      flush=True)


def main():
    try:
        checks()
    except Exception as e:  # noqa: BLE001
        FAILS.append("checks")
        print(f"FAIL checks: {type(e).__name__}: {e}")
    try:
        timings()
    except Exception as e:  # noqa: BLE001
        print(f"timings stopped: {type(e).__name__}: {e}")
        traceback.print_exc()
    return finish(FAILS, T0)


if __name__ == "__main__":
    sys.exit(main())
