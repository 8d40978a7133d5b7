"""GPU probe for linalg.eig/eigvals (cuSOLVER Xgeev) and the native random samplers
(rejection kernels, argsort permutations).  Standalone; run from the repo root:

    CUPYNUM_BACKEND=cuda python benchmarks/probes/linalg_random_probe.py

Checks (PASS/FAIL lines), then timings for cupynum and CuPy side by side (median of 5
after warm-up, synchronize + perf_counter).  Exit status 1 if any check failed.
"""
import functools
import math
import os
import sys
import time

import numpy as np

import cupynum as cpn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import (import_cupy, ks_two_sample, random_array,  # noqa: E402
                         run_check, wall_median)

cupy = import_cupy()

FAILS = []
check = functools.partial(run_check, fails=FAILS)


# --- eig -------------------------------------------------------------------------------------
TOL = {np.float32: 2e-3, np.float64: 1e-9, np.complex64: 2e-3, np.complex128: 1e-9}


def eig_case(dt, shape):
    def run():
        a = random_array(shape, dt)
        ew = np.linalg.eigvals(a)
        w = np.asarray(cpn.linalg.eigvals(cpn.asarray(a)))
        assert w.dtype == ew.dtype and w.shape == ew.shape, (w.dtype, ew.dtype, w.shape)
        r = TOL[dt] * shape[-1]
        dw = np.abs(np.sort_complex(w) - np.sort_complex(ew)).max()
        assert dw < r, f"eigvals off by {dw}"
        res = cpn.linalg.eig(cpn.asarray(a))
        w, v = np.asarray(res.eigenvalues), np.asarray(res.eigenvectors)
        assert v.dtype == np.linalg.eig(a).eigenvectors.dtype and v.shape == a.shape
        rec = np.abs(a @ v - v * w[..., None, :]).max()
        assert rec < r * 10, f"|AV - Vw| = {rec}"
        nrm = np.abs(np.linalg.norm(v, axis=-2) - 1).max()
        assert nrm < r, f"vector norms off by {nrm}"
        return f"eigvals err {dw:.1e}, recon {rec:.1e}"
    return run


for dt in (np.float32, np.float64, np.complex64, np.complex128):
    check(f"eig {np.dtype(dt).name} (40,40)", eig_case(dt, (40, 40)))
check("eig float64 stacked (3,2,16,16)", eig_case(np.float64, (3, 2, 16, 16)))
check("eig complex64 stacked (4,8,8)", eig_case(np.complex64, (4, 8, 8)))


def eig_real_spectrum():
    a = np.triu(random_array((20, 20), np.float64)) + np.diag(np.arange(20.0))
    w, v = cpn.linalg.eig(cpn.asarray(a))
    assert w.dtype == np.float64 and v.dtype == np.float64, (w.dtype, v.dtype)
    assert np.allclose(np.sort(np.asarray(w)), np.sort(np.linalg.eigvals(a)))
    try:
        cpn.linalg.eig(cpn.asarray(np.array([[1.0, np.nan], [0, 1]])))
        raise AssertionError("no LinAlgError for NaN input")
    except np.linalg.LinAlgError:
        pass


check("eig real spectrum -> real dtype; NaN -> LinAlgError", eig_real_spectrum)

# --- random ----------------------------------------------------------------------------------
N = 1_000_000
DISTS = [("standard_gamma", (0.3,)), ("standard_gamma", (1.0,)), ("standard_gamma", (7.5,)),
         ("gamma", (2.0, 3.0)), ("beta", (0.5, 0.5)), ("beta", (2.0, 5.0)),
         ("chisquare", (4,)), ("standard_t", (6.0,)), ("f", (5.0, 12.0)),
         ("binomial", (8, 0.3)), ("binomial", (2000, 0.45)), ("binomial", (100, 0.97)),
         ("negative_binomial", (3, 0.4)), ("poisson", (2e7,)),
         ("noncentral_chisquare", (3.0, 2.0)), ("noncentral_f", (4.0, 9.0, 1.5)),
         ("power", (3.0,))]


def dist_case(name, args):
    def run():
        g = cpn.random.default_rng(123)
        x = getattr(g, name)(*args, size=N)
        xh = np.asarray(x)
        ref = getattr(np.random.default_rng(123), name)(*args, size=N)
        assert xh.dtype == ref.dtype and xh.shape == ref.shape, (xh.dtype, ref.dtype)
        tol = 6 * ref.std() / math.sqrt(N) + 1e-3 * abs(ref.mean())
        dm = abs(xh.mean() - ref.mean())
        assert dm < tol, f"mean {xh.mean()} vs {ref.mean()}"
        d = ks_two_sample(xh, ref)
        assert d < 1.95 * math.sqrt(2 / N), f"KS {d:.4f}"
        y = np.asarray(getattr(cpn.random.default_rng(123), name)(*args, size=N))
        assert np.array_equal(xh, y), "not reproducible"
        return f"mean {xh.mean():.4g}/{ref.mean():.4g} KS {d:.4f}"
    return run


for name, args in DISTS:
    check(f"{name}{args}", dist_case(name, args))


def perms():
    g = cpn.random.default_rng(7)
    p = np.asarray(g.permutation(1 << 20))
    assert p.dtype == np.int64 and np.array_equal(np.sort(p), np.arange(1 << 20))
    first = np.array([int(g.permutation(4)[0]) for _ in range(400)])
    assert np.bincount(first, minlength=4).min() > 60
    x = np.arange(60).reshape(6, 10)
    r = np.asarray(g.permuted(cpn.asarray(x), axis=1))
    assert (np.sort(r, axis=1) == x).all()
    c = np.asarray(g.choice(1000, size=100, replace=False))
    assert np.unique(c).size == 100
    pw = np.array([0.1, 0.0, 0.6, 0.3])
    w = np.asarray(g.choice(4, size=N, p=pw))
    assert np.allclose(np.bincount(w, minlength=4) / N, pw, atol=3e-3)
    m = cpn.asarray(x.copy())
    g.shuffle(m)
    assert (np.sort(np.asarray(m), axis=0) == x).all()
    a = np.asarray(cpn.random.default_rng(1).permutation(1000))
    b = np.asarray(cpn.random.default_rng(1).permutation(1000))
    assert np.array_equal(a, b)


check("permutation / permuted / shuffle / choice", perms)


def params_arrays():
    g = cpn.random.default_rng(3)
    a = cpn.asarray(np.array([0.2, 1.0, 30.0]))
    m = np.asarray(g.standard_gamma(a, size=(200000, 3))).mean(axis=0)
    assert np.allclose(m, [0.2, 1.0, 30.0], rtol=0.02), m
    b = np.asarray(g.binomial(cpn.asarray(np.array([5, 500])), 0.3, size=(200000, 2)))
    assert np.allclose(b.mean(axis=0), [1.5, 150], rtol=0.01)
    p = np.asarray(g.poisson(cpn.asarray(np.array([0.5, 40.0])), size=(200000, 2)))
    assert np.allclose(p.mean(axis=0), [0.5, 40], rtol=0.02)


check("device-array parameters", params_arrays)

# --- timings ---------------------------------------------------------------------------------


def timeit(fn, sync, reps=5):
    """Median wall-clock milliseconds of one call closed by ``sync`` (one warm-up call)."""
    return wall_median(fn, sync, reps) * 1e3


def sync_cpn():
    from cupynum import _backends

    _backends.get().synchronize()


def sync_cupy():
    cupy.cuda.runtime.deviceSynchronize()


M = 1 << 24
print(f"\n{'op':34s} {'cupynum ms':>11s} {'cupy ms':>9s}")
a512 = random_array((512, 512), np.float64, 1)
ga, gc = cpn.random.default_rng(0), (cupy.random.default_rng(0) if cupy else None)
rows = [
    ("eig 512x512 float64", lambda: cpn.linalg.eig(A_c),
     (lambda: cupy.linalg.eig(A_p)) if cupy is not None and hasattr(cupy.linalg, "eig")
     else None),
    ("eigvals 512x512 float64", lambda: cpn.linalg.eigvals(A_c),
     (lambda: cupy.linalg.eigvals(A_p)) if cupy is not None and hasattr(cupy.linalg, "eigvals")
     else None),
    ("numpy eig 512 (host, reference)", None, None),
    ("standard_gamma(2.5) 2^24", lambda: ga.standard_gamma(2.5, size=M),
     (lambda: gc.standard_gamma(2.5, size=M)) if gc else None),
    ("gamma(0.5, 2) 2^24", lambda: ga.gamma(0.5, 2.0, size=M),
     (lambda: gc.gamma(0.5, 2.0, size=M)) if gc else None),
    ("beta(2, 5) 2^24", lambda: ga.beta(2.0, 5.0, size=M),
     (lambda: gc.beta(2.0, 5.0, size=M)) if gc else None),
    ("binomial(20, 0.3) 2^24", lambda: ga.binomial(20, 0.3, size=M),
     (lambda: gc.binomial(20, 0.3, size=M)) if gc else None),
    ("binomial(1000, 0.4) 2^24", lambda: ga.binomial(1000, 0.4, size=M),
     (lambda: gc.binomial(1000, 0.4, size=M)) if gc else None),
    ("poisson(lam array) 2^24", lambda: ga.poisson(LAM_c),
     (lambda: gc.poisson(LAM_p)) if gc else None),
    ("permutation 2^24", lambda: ga.permutation(M),
     (lambda: gc.permutation(M)) if gc else None),
    ("choice 2^24 -> 2^20 no replace", lambda: ga.choice(M, 1 << 20, replace=False),
     (lambda: gc.choice(M, 1 << 20, replace=False)) if gc else None),
]
A_c = cpn.asarray(a512)
A_p = cupy.asarray(a512) if cupy else None
lam = np.random.default_rng(0).uniform(0, 50, M)
LAM_c = cpn.asarray(lam)
LAM_p = cupy.asarray(lam) if cupy else None
for name, fc, fp in rows:
    if name.startswith("numpy"):
        t = time.perf_counter()
        np.linalg.eig(a512)
        print(f"{name:34s} {(time.perf_counter() - t) * 1e3:11.2f}")
        continue
    try:
        tc = f"{timeit(fc, sync_cpn):11.2f}"
    except Exception as e:  # noqa: BLE001
        tc = f"{'ERR':>11s}"
        FAILS.append(name)
        print(f"  cupynum {name}: {type(e).__name__}: {e}")
    tp = "n/a"
    if fp is not None:
        try:
            tp = f"{timeit(fp, sync_cupy):9.2f}"
        except Exception as e:  # noqa: BLE001
            tp = f"err:{type(e).__name__}"
    print(f"{name:34s} {tc} {tp:>9s}")

print(f"\n{len(FAILS)} failed" + (": " + ", ".join(FAILS) if FAILS else ""))
sys.exit(1 if FAILS else 0)
