"""cupynum.random: shapes, dtypes, errors as NumPy; values by seeded statistics
(streams differ from NumPy's, docs/differences.md) and reproducibility."""
import math

import numpy as np
import pytest

import cupynum as cp

N = 200_000


def h(x):
    return np.asarray(x)


def ks_uniform(u):
    """Kolmogorov-Smirnov statistic against U[0, 1)."""
    u = np.sort(u.ravel())
    n = u.size
    i = np.arange(1, n + 1)
    return max(np.max(i / n - u), np.max(u - (i - 1) / n))


def ks_cdf(x, cdf):
    return ks_uniform(cdf(np.asarray(x, np.float64)))


KS = 1.95 / math.sqrt(N)  # ~0.1% false alarm; the seeds are fixed, so it is deterministic


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_uniform(dtype):
    g = cp.random.default_rng(1234)
    x = g.random(N, dtype=dtype)
    assert isinstance(x, cp.ndarray) and x.shape == (N,) and x.dtype == dtype
    u = h(x)
    assert u.min() >= 0 and u.max() < 1
    assert ks_uniform(u) < KS
    y = h(g.uniform(-2, 3, size=(N // 2, 2)))
    assert y.shape == (N // 2, 2) and y.dtype == np.float64 and y.min() >= -2 and y.max() < 3
    assert abs(y.mean() - 0.5) < 0.03


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal(dtype):
    g = cp.random.default_rng(7)
    z = h(g.standard_normal(N + 1, dtype=dtype))  # odd count on purpose
    assert z.dtype == dtype and z.shape == (N + 1,)
    erf = np.vectorize(math.erf)
    assert ks_cdf(z[:20000], lambda v: 0.5 * (1 + erf(v / math.sqrt(2)))) < 1.95 / math.sqrt(
        20000)
    y = h(g.normal(3.0, 2.0, size=N))
    assert abs(y.mean() - 3) < 0.03 and abs(y.std() - 2) < 0.03
    loc = cp.asarray(np.array([0.0, 100.0]))
    assert h(g.normal(loc, 1.0)).shape == (2,)


def test_exponential_family():
    g = cp.random.default_rng(3)
    e = h(g.standard_exponential(N))
    assert e.min() >= 0 and ks_cdf(e, lambda v: 1 - np.exp(-v)) < KS
    assert abs(h(g.exponential(2.0, N)).mean() - 2) < 0.03
    assert abs(h(g.lognormal(0, 0.5, N)).mean() - math.exp(0.125)) < 0.02
    assert abs(h(g.laplace(1.0, 2.0, N)).var() - 8) < 0.3
    assert abs(h(g.logistic(0, 1, N)).var() - math.pi ** 2 / 3) < 0.1
    assert abs(h(g.gumbel(0, 1, N)).mean() - 0.5772) < 0.02
    assert abs(h(g.rayleigh(1.0, N)).mean() - math.sqrt(math.pi / 2)) < 0.02
    assert abs(h(g.weibull(2.0, N)).mean() - math.gamma(1.5)) < 0.02
    assert abs(np.median(h(g.standard_cauchy(N)))) < 0.02
    geo = h(g.geometric(0.25, N))
    assert geo.dtype == np.int64 and geo.min() >= 1 and abs(geo.mean() - 4) < 0.05
    p = h(g.poisson(3.5, N))
    assert p.dtype == np.int64 and abs(p.mean() - 3.5) < 0.03 and abs(p.var() - 3.5) < 0.1


def test_host_distributions():
    g = cp.random.default_rng(5)
    x = g.gamma(2.0, 3.0, size=N)
    assert isinstance(x, cp.ndarray) and abs(h(x).mean() - 6) < 0.1
    b = h(g.binomial(10, 0.3, size=N))
    assert b.dtype == np.int64 and abs(b.mean() - 3) < 0.03
    assert abs(h(g.beta(2, 5, N)).mean() - 2 / 7) < 0.01


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64,
                                   np.bool_])
@pytest.mark.parametrize("endpoint", [False, True])
def test_integers(dtype, endpoint):
    g = cp.random.default_rng(11)
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    lo, hi = (0, 1) if info is None else (max(info.min, -50), min(info.max, 50))
    hi_arg = hi if endpoint else hi + 1
    x = h(g.integers(lo, hi_arg, size=N, dtype=dtype, endpoint=endpoint))
    assert x.dtype == dtype and x.shape == (N,)
    counts = np.bincount((x.astype(np.int64) - lo))
    k = hi - lo + 1
    assert counts.size == k
    chi2 = ((counts - N / k) ** 2 / (N / k)).sum()
    assert chi2 < k + 5 * math.sqrt(2 * k)  # mean k-1, sd sqrt(2(k-1))


def test_integers_wide_and_errors():
    g = cp.random.default_rng(2)
    x = h(g.integers(-2**63, 2**63 - 1, size=1000, endpoint=True))
    assert x.dtype == np.int64 and (x < 0).any() and (x > 0).any()
    y = h(g.integers(2**63, 2**64, size=100, dtype=np.uint64))
    assert (y >= 2**63).all()
    z = h(g.integers(0, 3 * 2**40, size=N))
    assert abs(z.mean() / (3 * 2**40) - 0.5) < 0.01
    for args, kw in [((5, 5), {}), ((0, 300), {"dtype": np.uint8}), ((-1, 3), {"dtype": np.uint8})]:
        with pytest.raises(ValueError):
            g.integers(*args, **kw)
        with pytest.raises(ValueError):
            np.random.default_rng(0).integers(*args, **kw)
    with pytest.raises(ValueError):
        g.random(-1)
    with pytest.raises(ValueError):
        g.normal(0, -1.0, 3)
    with pytest.raises(TypeError):
        g.random(3, dtype=np.int32)
    with pytest.raises(ValueError):
        cp.random.rand(-2)


def test_reproducible():
    a = cp.random.default_rng(42)
    b = cp.random.default_rng(42)
    for name, args in [("random", (100,)), ("standard_normal", (101,)),
                       ("integers", (0, 10, 50)), ("gamma", (2.0, 1.0, 10)),
                       ("permutation", (10,))]:
        np.testing.assert_array_equal(h(getattr(a, name)(*args)), h(getattr(b, name)(*args)))
    assert not np.array_equal(h(cp.random.default_rng(1).random(10)),
                              h(cp.random.default_rng(2).random(10)))
    x, y = h(a.random(10)), h(a.random(10))
    assert not np.array_equal(x, y)  # the stream advances
    cp.random.seed(9)
    r1 = h(cp.random.rand(3, 2))
    cp.random.seed(9)
    np.testing.assert_array_equal(h(cp.random.rand(3, 2)), r1)
    assert r1.shape == (3, 2)
    rs = cp.random.RandomState(4)
    np.testing.assert_array_equal(h(rs.randn(5)), h(cp.random.RandomState(4).randn(5)))


def test_choice_permutation_shuffle():
    g = cp.random.default_rng(0)
    c = h(g.choice(5, size=N))
    assert c.dtype == np.int64 and set(np.unique(c)) == set(range(5))
    a = cp.arange(10) * 10
    s = h(g.choice(a, size=(3, 4)))
    assert s.shape == (3, 4) and set(s.ravel()) <= set(range(0, 100, 10))
    u = h(g.choice(10, size=10, replace=False))
    assert sorted(u) == list(range(10))
    w = h(g.choice(3, size=N, p=[0.5, 0.25, 0.25]))
    assert abs((w == 0).mean() - 0.5) < 0.01
    p = h(g.permutation(20))
    assert sorted(p) == list(range(20))
    m = cp.asarray(np.arange(12).reshape(4, 3))
    pm = h(g.permutation(m))
    assert sorted(pm[:, 0]) == [0, 3, 6, 9] and (pm[:, 1] == pm[:, 0] + 1).all()
    g.shuffle(m)
    assert sorted(h(m)[:, 0]) == [0, 3, 6, 9]
    with pytest.raises(ValueError):
        g.choice(3, size=5, replace=False)


def test_legacy_functions():
    cp.random.seed(0)
    assert cp.random.rand().shape == ()
    assert cp.random.rand(2, 3).shape == (2, 3)
    assert cp.random.randn(4).dtype == np.float64
    r = h(cp.random.randint(3, 7, size=1000))
    assert r.min() >= 3 and r.max() <= 6 and r.dtype == np.int64
    assert cp.random.random_sample((2,)).shape == (2,)
    assert cp.random.random((2,)).shape == (2,)
    assert cp.random.uniform(0, 1, 5).shape == (5,)
    assert cp.random.normal(0, 1, (5,)).shape == (5,)
    assert isinstance(cp.random.RandomState(1).uniform(size=3), cp.ndarray)
    assert isinstance(cp.random.Generator(cp.random.Philox(3)).random(2), cp.ndarray)
    assert isinstance(cp.random.Generator(np.random.PCG64(3)).random(2), cp.ndarray)
