"""GPU probe for the Philox sampler kernels of NumPy's remaining distributions
(cupynum/_backends/cuda/rng.py: hypergeometric, logseries, zipf, vonmises, and the
multivariate hypergeometric).  Standalone; run from the repo root:

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/random_probe.py

1. Checks (PASS/FAIL lines): mean and variance against the exact moments, a chi-square
   against the exact pmf for the discrete ones (tests/distributions.py: scipy.stats when
   installed, else closed forms), a two-sample KS against NumPy for von Mises, device-array parameters,
   reproducibility with a seed, and NumPy's ValueErrors.
2. Timings (CUDA events, median of REPS after a warm-up) of 2^24 draws beside CuPy where
   CuPy has the distribution, then a sweep of the launch knobs block and grid_per_sm of
   tuning.RANDOM.  Exit status 1 if any check failed.
"""
import functools
import math
import os
import sys

import numpy as np

import cupynum as cn
from cupynum._backends.cuda import tuning

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import event_median_ms, import_cupy, ks_two_sample, run_check  # noqa: E402

# the tests folder, for the exact pmfs the tests check the samplers against
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                os.pardir, "tests"))
from distributions import (at_least_1, chi2_limit, chi2_stat, hypergeom_pmf,  # noqa: E402
                           logseries_pmf, zipf_pmf)

cupy = import_cupy()

N = 1_000_000
M = 1 << 24
WARM, REPS = 1, 5
FAILS = []
check = functools.partial(run_check, fails=FAILS)


# --- exact pmfs (tests/distributions.py, shared with the tests) and moments ----------------
def chi2(x, pmf, kmax):
    """(statistic, degrees of freedom, 99.99% limit) of x against pmf over 0..kmax."""
    stat, dof = chi2_stat(x, pmf, kmax)
    return stat, dof, chi2_limit(dof)


def moments_and_chi2(x, mean, var, pmf, kmax, lo=0):
    assert x.dtype == np.int64, x.dtype
    dm = abs(x.mean() - mean)
    assert dm <= 6 * math.sqrt(var / x.size) + 1e-12, f"mean {x.mean()} vs {mean}"
    if var > 0:
        dv = abs(x.var() / var - 1)
        assert dv < 0.02 + 4 / math.sqrt(x.size * var), f"var {x.var()} vs {var}"
    stat, dof, limit = chi2(x - lo, lambda k: pmf(k + lo), kmax - lo)
    assert stat < limit, f"chi2 {stat:.1f} on {dof} dof > {limit:.1f}"
    return f"mean {x.mean():.5g}/{mean:.5g}, chi2 {stat:.0f}/{dof}"


def hyper_case(good, bad, sample):
    def run():
        x = np.asarray(cn.random.default_rng(1).hypergeometric(good, bad, sample, size=N))
        tot = good + bad
        mean = sample * good / tot
        var = mean * bad / tot * (tot - sample) / max(tot - 1, 1)
        lo = int(max(0, mean - 12 * math.sqrt(var) - 1))
        return moments_and_chi2(x, mean, var, lambda k: hypergeom_pmf(k, good, bad, sample),
                                int(min(good, sample)), lo)
    return run


def logser_case(p):
    def run():
        x = np.asarray(cn.random.default_rng(2).logseries(p, size=N))
        lq = math.log1p(-p)
        mean = -p / ((1 - p) * lq)
        var = -p * (p + lq) / ((1 - p) ** 2 * lq ** 2)
        return moments_and_chi2(x, mean, var, at_least_1(lambda k: logseries_pmf(k, p)), 400)
    return run


def zipf_case(a):
    def run():
        x = np.asarray(cn.random.default_rng(3).zipf(a, size=N))
        assert x.dtype == np.int64 and x.min() >= 1
        stat, dof, limit = chi2(x, at_least_1(lambda k: zipf_pmf(k, a)), 400)
        assert stat < limit, f"chi2 {stat:.1f} on {dof} dof > {limit:.1f}"
        return f"chi2 {stat:.0f}/{dof}"
    return run


def vonmises_case(mu, kappa):
    def run():
        x = np.asarray(cn.random.default_rng(4).vonmises(mu, kappa, size=N))
        ref = np.random.default_rng(4).vonmises(mu, kappa, N)
        assert x.dtype == np.float64 and (np.abs(x) <= np.pi).all()
        d = ks_two_sample(x, ref)
        assert d < 1.95 * math.sqrt(2 / N), f"KS {d:.4f}"
        dc = abs(np.cos(x - mu).mean() - np.cos(ref - mu).mean())
        assert dc < 8 / math.sqrt(N), f"E cos off by {dc:.2e}"
        return f"KS {d:.4f}"
    return run


for args in ((5, 3, 2), (50, 30, 40), (1000, 10, 995), (10**6, 10**6, 5000),
             (999_999_999, 3, 10**6), (30, 10**8, 200)):
    check(f"hypergeometric{args}", hyper_case(*args))
for p in (0.1, 0.6, 0.99):
    check(f"logseries({p})", logser_case(p))
for a in (1.2, 2.0, 4.5):
    check(f"zipf({a})", zipf_case(a))
for mu, kappa in ((0.5, 4.0), (-2.0, 1e-6), (1.0, 1e7), (3.0, 0.5)):
    check(f"vonmises({mu}, {kappa})", vonmises_case(mu, kappa))


def mvhyper():
    colors = [16, 8, 0, 40, 1]
    tot = sum(colors)
    out = []
    for method in ("marginals", "count"):
        for nsample in (10, 50):
            x = np.asarray(cn.random.default_rng(5).multivariate_hypergeometric(
                colors, nsample, size=N // 4, method=method))
            assert x.shape == (N // 4, 5) and x.dtype == np.int64
            assert (x.sum(axis=1) == nsample).all() and (x <= colors).all() and (x >= 0).all()
            for j, c in enumerate(colors):
                if 0 < c < tot:
                    stat, dof, limit = chi2(x[:, j], lambda k: hypergeom_pmf(k, c, tot - c,
                                                                             nsample),
                                            min(c, nsample))
                    assert stat < limit, f"{method} n={nsample} color {j}: chi2 {stat:.1f}"
            out.append(f"{method}/{nsample} ok")
    return ", ".join(out)


check("multivariate_hypergeometric marginals", mvhyper)


def device_params():
    g = cn.random.default_rng(6)
    good = cn.asarray(np.array([5, 500, 0, 40]))
    bad = cn.asarray(np.array([5, 300, 9, 0]))
    samp = cn.asarray(np.array([3, 400, 4, 17]))
    m = np.asarray(g.hypergeometric(good, bad, samp, size=(N // 4, 4))).mean(axis=0)
    assert np.allclose(m, [1.5, 250, 0, 17], atol=0.05), m
    v = np.asarray(g.vonmises(cn.asarray(np.array([0.0, 2.0, np.nan])),
                              cn.asarray(np.array([10.0, 1.0, 1.0])), size=(N // 4, 3)))
    assert np.isnan(v[:, 2]).all()
    ang = np.angle(np.exp(1j * v[:, :2]).mean(axis=0))
    assert np.allclose(ang, [0, 2], atol=0.02), ang
    lp = np.asarray(g.logseries(cn.asarray(np.array([0.0, 0.5])), size=(N // 4, 2)))
    assert (lp[:, 0] == 1).all() and abs(lp[:, 1].mean() - 1 / math.log(2)) < 0.01
    z = np.asarray(g.zipf(cn.asarray(np.array([2.0, 3000.0])), size=(N // 4, 2)))
    assert (z[:, 1] == 1).all() and z[:, 0].min() >= 1


check("device-array parameters", device_params)


def reproducible():
    for name, args in (("hypergeometric", (50, 30, 40, 1000)), ("logseries", (0.7, 1000)),
                       ("zipf", (1.5, 1000)), ("vonmises", (1.0, 2.0, 1000)),
                       ("multivariate_hypergeometric", ([4, 9, 2], 7, 100))):
        a = np.asarray(getattr(cn.random.default_rng(9), name)(*args))
        b = np.asarray(getattr(cn.random.default_rng(9), name)(*args))
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
        g = cn.random.default_rng(9)
        getattr(g, name)(*args)
        assert not np.array_equal(a, np.asarray(getattr(g, name)(*args))), name + " repeats"


check("reproducible with a seed; the stream advances", reproducible)


def errors():
    for name, args in (("hypergeometric", (1, 3, 5)), ("hypergeometric", (-1, 3, 2)),
                       ("hypergeometric", (10**9, 3, 5)), ("logseries", (1.0,)),
                       ("zipf", (1.0,)), ("vonmises", (0.0, -1.0)),
                       ("multivariate_hypergeometric", ([3, 4], 8))):
        for gen in (np.random.default_rng(0), cn.random.default_rng(0)):
            try:
                getattr(gen, name)(*args)
            except ValueError:
                continue
            raise AssertionError(f"{name}{args}: no ValueError from {type(gen).__module__}")
        dev = [cn.asarray(np.asarray(a)) for a in args] if name != \
            "multivariate_hypergeometric" else args
        try:
            getattr(cn.random.default_rng(0), name)(*dev)
            raise AssertionError(f"{name}{args}: no ValueError for device parameters")
        except ValueError:
            pass


check("ValueErrors as NumPy", errors)


# --- timings ---------------------------------------------------------------------------------
def t_cn(fn):
    return event_median_ms(cn, fn, REPS, WARM)


def t_cp(fn):
    return event_median_ms(cupy, fn, REPS, WARM)


def cupy_fn(name, args, size):
    """CuPy's sampler of ``name``: its Generator's where it has one, else its legacy
    RandomState (cupy.random.<name>); None where CuPy has neither."""
    if cupy is None:
        return None, ""
    gen = cupy.random.default_rng(0)
    if hasattr(gen, name):
        return (lambda: getattr(gen, name)(*args, size=size)), "Generator"
    rs = cupy.random.RandomState(0)
    if hasattr(rs, name):
        return (lambda: getattr(rs, name)(*args, size=size)), "RandomState"
    return None, ""


CASES = [("hypergeometric", (5, 3, 2)), ("hypergeometric", (50, 30, 40)),
         ("hypergeometric", (10**6, 10**6, 5000)), ("logseries", (0.6,)),
         ("logseries", (0.99,)), ("zipf", (1.2,)), ("zipf", (3.0,)),
         ("vonmises", (0.5, 4.0)), ("vonmises", (0.5, 0.01))]
print(f"\n{'op (2^24 draws)':40s} {'cupynum ms':>11s} {'cupy ms':>9s}  cupy via")
for name, args in CASES:
    g = cn.random.default_rng(0)
    label = f"{name}{args}"
    try:
        tc = f"{t_cn(lambda: getattr(g, name)(*args, size=M)):11.2f}"
    except Exception as e:  # noqa: BLE001
        tc = f"{'ERR':>11s}"
        FAILS.append("time " + label)
        print(f"  cupynum {label}: {type(e).__name__}: {e}")
    fp, via = cupy_fn(name, args, M)
    tp = "n/a"
    if fp is not None:
        try:
            tp = f"{t_cp(fp):9.2f}"
        except Exception as e:  # noqa: BLE001
            tp, via = "err", f"{type(e).__name__}: {str(e)[:60]}"
    print(f"{label:40s} {tc} {tp:>9s}  {via}")

# arrays of parameters (one per draw) and the multivariate hypergeometric
hp = [cn.asarray(np.random.default_rng(0).integers(lo, hi, M)) for lo, hi in
      ((100, 1000), (100, 1000), (0, 200))]
kp = cn.asarray(np.random.default_rng(1).uniform(0, 20, M))
g = cn.random.default_rng(0)
for label, fn in (("hypergeometric(array params)", lambda: g.hypergeometric(*hp)),
                  ("vonmises(0, kappa array)", lambda: g.vonmises(0.0, kp)),
                  ("mv_hypergeometric 5 colors, 2^22 rows",
                   lambda: g.multivariate_hypergeometric([16, 8, 100, 40, 1], 50, size=M // 4))):
    try:
        print(f"{label:40s} {t_cn(fn):11.2f}")
    except Exception as e:  # noqa: BLE001
        FAILS.append("time " + label)
        print(f"  cupynum {label}: {type(e).__name__}: {e}")

# the launch knobs (tuning.RANDOM; the kernels do not depend on them)
print(f"\n{'knobs: block x grid_per_sm':40s} " +
      " ".join(f"{f'{n}{a}':>22s}" for n, a in CASES[2:3] + CASES[5:6] + CASES[7:8]))
for block in (128, 256, 512):
    for per_sm in (4, 16, 64):
        tuning.override("RANDOM", block=block, grid_per_sm=per_sm)
        g = cn.random.default_rng(0)
        ts = []
        for name, args in CASES[2:3] + CASES[5:6] + CASES[7:8]:
            try:
                ts.append(f"{t_cn(lambda: getattr(g, name)(*args, size=M)):22.2f}")
            except Exception as e:  # noqa: BLE001
                ts.append(f"{'ERR ' + type(e).__name__:>22s}")
        print(f"{f'{block} x {per_sm}':40s} " + " ".join(ts))
tuning.reset("RANDOM")

print(f"\n{len(FAILS)} failed" + (": " + ", ".join(FAILS) if FAILS else ""))
sys.exit(1 if FAILS else 0)
