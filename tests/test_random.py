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


def ks2(x, y):
    """Two-sample Kolmogorov-Smirnov statistic (cupynum's draws against NumPy's)."""
    x, y = np.sort(np.asarray(x, np.float64).ravel()), np.sort(np.asarray(y, np.float64).ravel())
    grid = np.concatenate([x, y])
    return np.abs(np.searchsorted(x, grid, "right") / x.size -
                  np.searchsorted(y, grid, "right") / y.size).max()


KS2 = 1.95 * math.sqrt(2 / N)

# (method, args): drawn natively (rejection kernels on CUDA) and compared with NumPy's
# sampler of the same distribution: dtype, mean, variance, two-sample KS
NATIVE = [("standard_gamma", (0.4,)), ("standard_gamma", (3.0,)), ("gamma", (2.0, 3.0)),
          ("beta", (2.0, 5.0)), ("beta", (0.05, 0.3)), ("chisquare", (3,)),
          ("standard_t", (5.0,)), ("f", (5.0, 12.0)), ("binomial", (10, 0.3)),
          ("binomial", (500, 0.7)), ("negative_binomial", (3, 0.4)), ("poisson", (2e7,)),
          ("noncentral_chisquare", (3.0, 2.0)), ("noncentral_chisquare", (0.5, 1.5)),
          ("noncentral_f", (4.0, 9.0, 1.5)), ("power", (3.0,)),
          ("triangular", (-1.0, 0.5, 2.0)), ("triangular", (0.0, 0.0, 1.0)),
          ("wald", (1.5, 2.0)), ("vonmises", (0.5, 4.0)), ("vonmises", (-2.0, 1e-6)),
          ("vonmises", (1.0, 1e7)), ("vonmises", (1.0, 0.3)), ("hypergeometric", (50, 30, 40)),
          ("hypergeometric", (5, 3, 2)), ("hypergeometric", (1000, 10, 995)),
          ("logseries", (0.6,)), ("logseries", (0.9,)), ("zipf", (4.5,))]


@pytest.mark.parametrize("name,args", NATIVE, ids=[f"{n}{a}" for n, a in NATIVE])
def test_native_distributions(name, args):
    x = h(getattr(cp.random.default_rng(5), name)(*args, size=N))
    ref = getattr(np.random.default_rng(5), name)(*args, size=N)
    assert x.dtype == ref.dtype and x.shape == (N,)
    assert abs(x.mean() - ref.mean()) < 6 * ref.std() / math.sqrt(N) + 1e-3 * abs(ref.mean())
    if name not in ("standard_t", "f", "noncentral_f", "wald"):  # heavy tails: KS only
        assert abs(x.var() / ref.var() - 1) < 0.05
    assert ks2(x, ref) < KS2


def test_native_shapes_dtypes_and_arrays():
    g = cp.random.default_rng(8)
    assert g.standard_gamma(2.0).shape == ()
    x = g.standard_gamma(2.0, size=(3, 4), dtype=np.float32)
    assert x.dtype == np.float32 and x.shape == (3, 4)
    out = cp.empty((5,), np.float64)
    assert g.standard_gamma(1.0, out=out) is out
    a = cp.asarray(np.array([[0.5], [50.0]]))
    m = h(g.gamma(a, 2.0, size=(2, 20000))).mean(axis=1)
    np.testing.assert_allclose(m, [1.0, 100.0], rtol=0.03)
    b = h(g.binomial(np.array([5, 50, 500]), [0.2, 0.5, 0.9], size=(20000, 3))).mean(axis=0)
    np.testing.assert_allclose(b, [1, 25, 450], rtol=0.02)
    assert g.binomial(10, 0.5).shape == () and h(g.binomial(10, 0.5, 3)).dtype == np.int64
    lam = cp.asarray(np.array([0.0, 3.0, 1e3]))
    p = h(g.poisson(lam, size=(20000, 3)))
    assert p.dtype == np.int64 and (p[:, 0] == 0).all()
    np.testing.assert_allclose(p.mean(axis=0)[1:], [3.0, 1e3], rtol=0.02)
    d = h(g.dirichlet([0.5, 1.0, 2.5], size=(N // 10,)))
    assert d.shape == (N // 10, 3) and np.allclose(d.sum(axis=1), 1)
    np.testing.assert_allclose(d.mean(axis=0), np.array([0.5, 1, 2.5]) / 4, atol=0.01)
    tiny = h(g.dirichlet([1e-3, 1e-3], size=100))
    assert np.isfinite(tiny).all() and np.allclose(tiny.sum(axis=1), 1)
    assert np.array_equal(h(g.dirichlet([0.0, 0.0])), [0.0, 0.0])
    bt = h(g.beta(1e-3, 1e-3, size=1000))
    assert np.isfinite(bt).all() and ((bt == 0) | (bt == 1) | ((bt > 0) & (bt < 1))).all()


def test_multivariate_normal_and_multinomial():
    g = cp.random.default_rng(3)
    mean, cov = np.array([1.0, -2.0, 0.5]), np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2],
                                                     [0.1, -0.2, 0.5]])
    for method in ("svd", "eigh", "cholesky"):
        x = h(g.multivariate_normal(mean, cov, size=(N // 4,), method=method))
        assert x.shape == (N // 4, 3) and x.dtype == np.float64
        np.testing.assert_allclose(x.mean(axis=0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)
    assert g.multivariate_normal(mean, cov).shape == (3,)
    assert g.multivariate_normal(cp.asarray(mean), cp.asarray(cov), size=(2, 5)).shape == (2, 5, 3)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])  # not positive semi-definite
    for lib in (np, cp):
        with pytest.warns(RuntimeWarning):
            lib.random.default_rng(0).multivariate_normal([0, 0], bad)
        with pytest.raises(ValueError):
            lib.random.default_rng(0).multivariate_normal([0, 0], bad, check_valid="raise")
        with pytest.raises(ValueError):
            lib.random.default_rng(0).multivariate_normal([0, 0, 0], bad)
    pv = [0.2, 0.5, 0.3]
    m = h(g.multinomial(40, pv, size=(N // 4,)))
    ref = np.random.default_rng(3).multinomial(40, pv, size=(N // 4,))
    assert m.dtype == ref.dtype and m.shape == ref.shape and (m.sum(axis=1) == 40).all()
    np.testing.assert_allclose(m.mean(axis=0), ref.mean(axis=0), rtol=0.02)
    np.testing.assert_allclose(m.var(axis=0), ref.var(axis=0), rtol=0.08)
    assert h(g.multinomial(7, [0.0, 1.0])).tolist() == [0, 7]
    assert h(g.multinomial(5, [0.5, 0.5], size=(2, 3))).shape == (2, 3, 2)
    # array n and stacked pvals broadcast as NumPy's
    for n, pvals in (([10, 100], [0.2, 0.3, 0.5]), (50, [[0.5, 0.5], [0.1, 0.9]]),
                     (cp.asarray(np.array([3, 7])), [0.5, 0.5])):
        ref_n = h(n) if isinstance(n, cp.ndarray) else n
        ref = np.random.default_rng(1).multinomial(ref_n, pvals, size=(N // 10, 2))
        got = h(g.multinomial(n, pvals, size=(N // 10, 2)))
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_array_equal(got.sum(axis=-1), ref.sum(axis=-1))
        np.testing.assert_allclose(got.mean(axis=0), ref.mean(axis=0), rtol=0.05, atol=0.05)
        assert g.multinomial(n, pvals).shape == np.random.default_rng(0).multinomial(
            ref_n, pvals).shape
    for args in ((-1, pv), (5, [0.5, 0.7, -0.2]), (5, [0.7, 0.6, 0.0])):
        for lib in (np, cp):
            with pytest.raises(ValueError):
                lib.random.default_rng(0).multinomial(*args)


def test_new_native_distributions_bad_arguments():
    for name, args in (("triangular", (1.0, 0.0, 2.0)), ("triangular", (0.0, 3.0, 2.0)),
                       ("triangular", (1.0, 1.0, 1.0)), ("wald", (0.0, 1.0)),
                       ("wald", (1.0, -1.0)), ("vonmises", (0.0, -1.0))):
        for lib in (np, cp):
            with pytest.raises(ValueError):
                getattr(lib.random.default_rng(0), name)(*args)


@pytest.mark.parametrize("call", [
    ("standard_gamma", (-1.0,)), ("gamma", (1.0, -1.0)), ("beta", (0.0, 1.0)),
    ("beta", (1.0, -2.0)), ("chisquare", (0,)), ("standard_t", (-1,)), ("f", (0, 1)),
    ("f", (1, 0)), ("binomial", (-1, 0.5)), ("binomial", (5, 1.5)), ("binomial", (5, np.nan)),
    ("negative_binomial", (0, 0.5)), ("negative_binomial", (1, 0.0)), ("poisson", (-1.0,)),
    ("poisson", (np.nan,)), ("poisson", (1e19,)), ("dirichlet", ([-1.0, 1.0],)),
    ("noncentral_chisquare", (1, -1)), ("noncentral_f", (1, 1, -1)), ("power", (0.0,))],
    ids=lambda c: f"{c[0]}{c[1]}")
def test_native_bad_arguments(call):
    name, args = call
    for g in (np.random.default_rng(0), cp.random.default_rng(0)):
        with pytest.raises(ValueError):
            getattr(g, name)(*args)
    with pytest.raises(ValueError):  # the same checks on device-array parameters
        getattr(cp.random.default_rng(0), name)(*[cp.asarray(np.asarray(a)) if
                                                   np.ndim(a) == 0 and name != "dirichlet"
                                                   else a for a in args])
    with pytest.raises(TypeError):
        cp.random.default_rng(0).standard_gamma(1.0, dtype=np.int32)


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


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.uint64, bool])
def test_integers_array_bounds(dtype):
    """Array bounds draw on the device, element by element, with NumPy's checks."""
    g = cp.random.default_rng(6)
    if dtype is bool:
        lo, hi = np.array([0, 1]), np.array([2, 2])
    else:
        info = np.iinfo(dtype)
        lo = np.array([info.min, 0, info.max - 3], dtype)
        hi = np.array([info.min + 2, 1, info.max], dtype)
    for endpoint in (False, True):
        top = hi - 1 if endpoint else hi  # the same ranges both ways
        want = np.random.default_rng(0).integers(lo, top, size=(N // 10, lo.size), dtype=dtype,
                                                 endpoint=endpoint)
        for lo_, hi_ in ((lo, top), (cp.asarray(lo), cp.asarray(top))):
            x = h(g.integers(lo_, hi_, size=(N // 10, lo.size), dtype=dtype, endpoint=endpoint))
            assert x.dtype == want.dtype and x.shape == want.shape
            np.testing.assert_array_equal(x.min(axis=0), want.min(axis=0))
            np.testing.assert_array_equal(x.max(axis=0), want.max(axis=0))
    assert g.integers(lo, hi, dtype=dtype).shape == lo.shape


def test_integers_array_bounds_wide_and_errors():
    g = cp.random.default_rng(7)
    x = h(g.integers(np.array([0, -2**63]), np.array([3 * 2**40, 2**63 - 1]), size=(N, 2),
                     endpoint=True))
    assert abs(x[:, 0].mean() / (3 * 2**40) - 0.5) < 0.01 and (x[:, 1] < 0).any()
    for args, kw in [(([5, 0], [5, 1]), {}), (([0], [300]), {"dtype": np.uint8}),
                     (([-1], [3]), {"dtype": np.uint8}), (([4], [3]), {"endpoint": True})]:
        for lib in (np, cp):
            with pytest.raises(ValueError):
                lib.random.default_rng(0).integers(*args, **kw)


def test_a_seed_reproduces_after_other_generators_died():
    """On the GPU, a dead generator's cuRAND handle is reseeded for the next one: the
    stream of a seed must not depend on which generators came and went before."""
    first = h(cp.random.default_rng(5).standard_normal(1001))
    for seed in (7, 8):  # their handles retire, advanced past their streams' start
        h(cp.random.default_rng(seed).standard_normal(4096, dtype=np.float32))
    np.testing.assert_array_equal(h(cp.random.default_rng(5).standard_normal(1001)), first)
    g = cp.random.default_rng(11)
    u = h(g.standard_exponential(64))
    del g
    np.testing.assert_array_equal(h(cp.random.default_rng(11).standard_exponential(64)), u)


def test_reproducible():
    a = cp.random.default_rng(42)
    b = cp.random.default_rng(42)
    for name, args in [("random", (100,)), ("standard_normal", (101,)),
                       ("integers", (0, 10, 50)), ("gamma", (2.0, 1.0, 10)),
                       ("permutation", (10,)), ("beta", (0.5, 0.5, 20)),
                       ("binomial", (100, 0.3, 20)), ("poisson", ([1.0, 50.0],)),
                       ("dirichlet", ([1.0, 2.0], 5)), ("choice", (50, 10, False)),
                       ("permuted", (np.arange(12).reshape(3, 4), 1)),
                       ("negative_binomial", (2, 0.5, 10)),
                       ("hypergeometric", ([20, 5], 30, 12, (4, 2))), ("logseries", (0.7, 9)),
                       ("zipf", (1.5, 9)), ("vonmises", ([0.0, 2.0], 3.0)),
                       ("multivariate_hypergeometric", ([4, 9, 2], 7, 5))]:
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


def test_permutations_native():
    g = cp.random.default_rng(6)
    p = h(g.permutation(5000))
    assert p.dtype == np.int64 and np.array_equal(np.sort(p), np.arange(5000))
    assert h(g.permutation(0)).shape == (0,)
    firsts = np.array([h(g.permutation(4))[0] for _ in range(400)])
    assert np.bincount(firsts, minlength=4).min() > 60  # uniform-ish: 100 expected each
    x = np.arange(24).reshape(4, 6)
    r = h(g.permuted(x, axis=1))
    assert r.shape == x.shape and (np.sort(r, axis=1) == x).all()
    r0 = h(g.permuted(x))
    assert np.array_equal(np.sort(r0.ravel()), np.arange(24))
    xc = cp.asarray(x.copy())
    assert g.permuted(xc, axis=0, out=xc) is xc and (np.sort(h(xc), axis=0) == x).all()
    with pytest.raises(ValueError):
        g.permuted(x, out=cp.empty((2, 2), np.int64))
    m = cp.asarray(x.copy())
    g.shuffle(m, axis=1)
    assert (np.sort(h(m), axis=1) == x).all()
    with pytest.raises(np.exceptions.AxisError):
        g.permutation(cp.asarray(3.0))


def test_choice_native():
    g = cp.random.default_rng(9)
    c = h(g.choice(100, size=(4, 5), replace=False))
    assert c.shape == (4, 5) and np.unique(c).size == 20 and c.max() < 100
    assert g.choice(7, replace=False).shape == ()
    assert h(g.choice(0, size=0)).shape == (0,)
    p = np.array([0.1, 0.0, 0.6, 0.3])
    w = h(g.choice(4, size=N, p=p))
    np.testing.assert_allclose(np.bincount(w, minlength=4) / N, p, atol=0.005)
    firsts = np.array([h(g.choice(4, size=2, replace=False, p=p)) for _ in range(300)])
    assert (firsts[:, 0] != firsts[:, 1]).all() and not (firsts == 1).any()
    assert abs((firsts[:, 0] == 2).mean() - 0.6) < 0.1
    a = cp.asarray(np.arange(30).reshape(10, 3))
    s = h(g.choice(a, size=4, replace=False, axis=0))
    assert s.shape == (4, 3) and (s[:, 1] == s[:, 0] + 1).all()
    for bad in [dict(a=3, size=2, p=[0.5, 0.5]), dict(a=3, size=2, p=[0.5, 0.6, -0.1]),
                dict(a=3, size=2, p=[0.5, 0.5, 0.1]), dict(a=3, size=2, p=[1.0, 0, 0],
                                                            replace=False),
                dict(a=0), dict(a=-1, size=1)]:
        for gg in (np.random.default_rng(0), g):
            with pytest.raises(ValueError):
                gg.choice(**bad)


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


def test_discrete_samplers_shapes_dtypes_and_arrays():
    g = cp.random.default_rng(11)
    for name, args in (("hypergeometric", (5, 3, 2)), ("logseries", (0.5,)), ("zipf", (2.0,)),
                       ("vonmises", (0.0, 1.0))):
        ref = getattr(np.random.default_rng(0), name)(*args)
        x = getattr(g, name)(*args)
        assert isinstance(x, cp.ndarray) and x.shape == () and x.dtype == np.asarray(ref).dtype
        y = getattr(g, name)(*args, size=(2, 3))
        assert y.shape == (2, 3) and y.dtype == x.dtype
    # array parameters broadcast with each other and against size, as NumPy's
    for args, size in ((([10, 200], [5, 100], 6), None), (([[10], [20]], 8, [1, 2, 3]), None),
                       ((40, 30, 20), (3, 2)), (([40, 4], 30, 20), (3, 2))):
        ref = np.random.default_rng(0).hypergeometric(*args, size=size)
        got = g.hypergeometric(*args, size=size)
        assert got.shape == ref.shape and got.dtype == ref.dtype == np.int64
    dev = [cp.asarray(np.array(v)) for v in ([5, 500, 0], [5, 300, 9], [3, 400, 4])]
    m = h(g.hypergeometric(*dev, size=(20000, 3))).mean(axis=0)
    np.testing.assert_allclose(m, [1.5, 250, 0], atol=0.1)
    assert h(g.hypergeometric(5.9, 3, 8)) == 5  # floats truncate to int64, as NumPy's
    lp = h(g.logseries(cp.asarray(np.array([0.0, 0.5])), size=(50000, 2)))
    assert (lp[:, 0] == 1).all() and abs(lp[:, 1].mean() - 0.5 / (0.5 * math.log(2))) < 0.02
    z = h(g.zipf([2.0, 5000.0], size=(1000, 2)))
    assert z.min() >= 1 and (z[:, 1] == 1).all()
    v = h(g.vonmises(cp.asarray(np.array([0.0, 2.0, np.nan])), [10.0, 1.0, 1.0],
                     size=(20000, 3)))
    assert np.isnan(v[:, 2]).all() and np.isnan(h(g.vonmises(0.0, np.nan)))
    np.testing.assert_allclose(np.angle(np.exp(1j * v[:, :2]).mean(axis=0)), [0, 2],
                               atol=0.06)
    with pytest.raises(ValueError):  # size not a broadcast of the parameters
        g.hypergeometric([5, 4], 3, 2, size=(3,))


@pytest.mark.parametrize("method", ["marginals", "count"])
def test_multivariate_hypergeometric(method):
    g = cp.random.default_rng(12)
    colors = [16, 8, 0, 4]
    for size in (None, 3, (2, 5)):
        ref = np.random.default_rng(0).multivariate_hypergeometric(colors, 6, size, method)
        got = g.multivariate_hypergeometric(colors, 6, size, method)
        assert isinstance(got, cp.ndarray) and got.shape == ref.shape and got.dtype == ref.dtype
    for nsample in (6, 20, 28, 0):  # below and above half the total (drawn as complement)
        x = h(g.multivariate_hypergeometric(colors, nsample, N // 10, method))
        assert (x.sum(axis=1) == nsample).all() and (x <= colors).all() and (x >= 0).all()
        want = nsample * np.array(colors) / 28
        np.testing.assert_allclose(x.mean(axis=0), want, atol=0.05)
    assert h(g.multivariate_hypergeometric([], 0, size=3)).shape == (3, 0)
    assert h(g.multivariate_hypergeometric(np.array([3, 4]), np.int64(7))).tolist() == [3, 4]


@pytest.mark.parametrize("call", [
    ("hypergeometric", (-1, 3, 2)), ("hypergeometric", (1, -3, 2)),
    ("hypergeometric", (1, 3, -2)), ("hypergeometric", (1, 3, 5)),
    ("hypergeometric", (10**9, 3, 5)), ("hypergeometric", ([1, -1], 3, 2)),
    ("hypergeometric", ([1, 2], [3, 4], [5, 2])), ("logseries", (1.0,)),
    ("logseries", (-0.1,)), ("logseries", (np.nan,)), ("logseries", ([0.5, 1.0],)),
    ("zipf", (1.0,)), ("zipf", (np.nan,)), ("zipf", ([2, 0.5],)), ("vonmises", (0.0, -1.0)),
    ("vonmises", ([0, 1], [1, -1])),
    ("multivariate_hypergeometric", ([3, 4], 8)), ("multivariate_hypergeometric", ([3, -4], 2)),
    ("multivariate_hypergeometric", ([3.0, 4], 2)),
    ("multivariate_hypergeometric", ([[3, 4]], 2)),
    ("multivariate_hypergeometric", ([3, 4], -2)),
    ("multivariate_hypergeometric", ([3, 4], 2.5)),
    ("multivariate_hypergeometric", ([3, 4], 2, None, "x")),
    ("multivariate_hypergeometric", ([10**9, 4], 2)),
    ("multivariate_hypergeometric", ([2**62, 2**62], 2, None, "count"))],
    ids=lambda c: f"{c[0]}{c[1]}")
def test_discrete_samplers_errors_match_numpy(call):
    name, args = call
    with pytest.raises(ValueError) as want:
        getattr(np.random.default_rng(0), name)(*args)
    with pytest.raises(ValueError) as got:
        getattr(cp.random.default_rng(0), name)(*args)
    assert str(got.value) == str(want.value)
    if name != "multivariate_hypergeometric":  # the same checks on device-array parameters
        dev_args = [cp.asarray(np.asarray(a)) for a in args]
        with pytest.raises(ValueError):
            getattr(cp.random.default_rng(0), name)(*dev_args)


def test_bytes_and_legacy_discrete():
    b = cp.random.default_rng(3).bytes(13)
    assert isinstance(b, bytes) and len(b) == 13 and b == cp.random.default_rng(3).bytes(13)
    assert cp.random.default_rng(3).bytes(0) == b""
    from cupynum.random import _generator

    for name in ("hypergeometric", "logseries", "zipf", "vonmises", "wald", "triangular",
                 "multinomial", "multivariate_normal", "bytes"):
        assert name in _generator.__all__ and callable(getattr(cp.random, name))
    cp.random.seed(5)
    assert cp.random.hypergeometric(10, 10, 5, size=4).shape == (4,)
    assert cp.random.RandomState(2).zipf(3.0, size=(2, 2)).dtype == np.int64
    # RandomState keeps its own checks: nsample >= 1, no 10**9 limit
    for args in ((3, 4, 0), (-1, 4, 2), (3, 4, 8)):
        with pytest.raises(ValueError):
            np.random.RandomState(0).hypergeometric(*args)
        with pytest.raises(ValueError):
            cp.random.RandomState(0).hypergeometric(*args)
    big = h(cp.random.RandomState(0).hypergeometric(10**9, 10**9, 1000, size=20000))
    assert abs(big.mean() - 500) < 1
