"""Statistics (mean, var, std, NaN variants, average, median, quantiles, cov) vs NumPy.

Tolerances: these are sums followed by a division, so the sum bound applies (see
test_reductions.py): rtol 1e-5 for float32/float16 inputs (float16 means accumulate in
float32, as NumPy's do), 1e-12 for float64 and integer inputs (computed in float64).
Order statistics are exact gathers plus NumPy's interpolation formula: rtol 1e-12.
"""
import warnings

import numpy as np
import pytest

import cupynum as cp
from data import sample, seed_each_test
from helpers import compare

rng = np.random.default_rng(5)

_seed = seed_each_test(rng)


def data(dtype, shape):
    return sample(rng, dtype, shape, ints=(0, 40))


def tol(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f" and dt.itemsize <= 4 or dt == np.complex64:
        # float16: NumPy rounds the deviations to float16 before squaring (so do we), and
        # the sums then differ in the last float16 bit
        return {"rtol": 4e-3 if dt == np.float16 else 1e-5, "atol": 2e-3 if dt == np.float16
                else 1e-6}
    return {"rtol": 1e-12, "atol": 1e-12}


DTYPES = ["?", "b", "i", "L", "e", "f", "d", "F", "D"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_mean_var_std(dtype, axis):
    x = data(dtype, (4, 5, 6))
    for name in ("mean", "var", "std"):
        compare(lambda xp, a: getattr(xp, name)(a, axis=axis), x, **tol(dtype))
        compare(lambda xp, a: getattr(xp, name)(a, axis=axis, keepdims=True), x, **tol(dtype))
    compare(lambda xp, a: xp.var(a, axis=axis, ddof=1), x, **tol(dtype))
    compare(lambda xp, a: xp.std(a, axis=axis, correction=1), x, **tol(dtype))
    compare(lambda xp, a: xp.mean(a, axis=axis, dtype=np.float64), x, **tol("d"))
    compare(lambda xp, a: a.mean(axis=axis), x, **tol(dtype))
    compare(lambda xp, a: a.var(axis=axis), x, **tol(dtype))


def test_statistics_edge_cases():
    x = data("d", (5, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        compare(lambda xp, a: xp.mean(a), np.zeros(0))
        compare(lambda xp, a: xp.mean(a, axis=0), np.zeros((0, 3)))
        compare(lambda xp, a: xp.var(a, ddof=5), x[:, 0].copy())
    with pytest.warns(RuntimeWarning):
        cp.mean(cp.zeros(0))
    compare(lambda xp, a: xp.var(a, ddof=1, correction=1), x)  # ValueError
    m = rng.random((5, 4)) < 0.6
    compare(lambda xp, a, m: xp.mean(a, axis=0, where=m), x, m, **tol("d"))
    compare(lambda xp, a, m: xp.var(a, axis=1, where=m), x, m, **tol("d"))
    compare(lambda xp, a: xp.mean(a.T[::-1]), x, **tol("d"))
    compare(lambda xp, a: xp.mean(a, out=xp.zeros(())), x, **tol("d"))

    def out(xp, a):
        o = xp.zeros(4)
        xp.mean(a, axis=0, out=o)
        return o
    compare(out, x, **tol("d"))


@pytest.mark.parametrize("dtype", ["f", "d", "F"])
def test_nan_statistics(dtype):
    x = data(dtype, (6, 7))
    x[1, 2] = np.nan
    x[4, :] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nanmean", "nanvar", "nanstd", "nansum", "nanprod"):
            for axis in (None, 0, 1):
                compare(lambda xp, a: getattr(xp, name)(a, axis=axis), x, **tol(dtype))
        compare(lambda xp, a: xp.nanvar(a, axis=1, ddof=1), x, **tol(dtype))
        compare(lambda xp, a: xp.nanmean(a, axis=0, keepdims=True), x, **tol(dtype))
    xi = data("i", (3, 4))
    compare(lambda xp, a: xp.nanmean(a, axis=0), xi, **tol("d"))
    compare(lambda xp, a: xp.nanstd(a), xi, **tol("d"))


def test_average():
    x = data("d", (4, 5))
    w = rng.random((4, 5))
    w1 = rng.random(5)
    compare(lambda xp, a: xp.average(a), x, **tol("d"))
    compare(lambda xp, a: xp.average(a, axis=0), x, **tol("d"))
    compare(lambda xp, a, w: xp.average(a, weights=w), x, w, **tol("d"))
    compare(lambda xp, a, w: xp.average(a, axis=1, weights=w, returned=True), x, w1, **tol("d"))
    compare(lambda xp, a, w: xp.average(a, axis=1, weights=w, keepdims=True), x, w1, **tol("d"))
    compare(lambda xp, a, w: xp.average(a, weights=w), x, w1)  # TypeError: axis needed
    compare(lambda xp, a: xp.average(a, weights=xp.zeros((4, 5))), x)  # ZeroDivisionError
    compare(lambda xp, a: xp.average(a, returned=True, axis=0), x, **tol("d"))
    compare(lambda xp, a: xp.average(a), data("i", (3, 3)), **tol("d"))


@pytest.mark.parametrize("dtype", ["i", "f", "d", "?"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_median_quantiles(dtype, axis):
    x = data(dtype, (7, 6))
    t = tol("d" if dtype in "i?" else dtype)
    compare(lambda xp, a: xp.median(a, axis=axis), x, **t)
    compare(lambda xp, a: xp.median(a, axis=axis, keepdims=True), x, **t)
    if dtype == "?":
        return
    for q in (0.3, [0.0, 0.25, 1.0]):
        compare(lambda xp, a: xp.quantile(a, q, axis=axis), x, **tol(dtype))
        compare(lambda xp, a: xp.percentile(a, np.multiply(q, 100), axis=axis), x,
                **tol(dtype))
    for method in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                   "interpolated_inverted_cdf", "hazen", "weibull", "linear",
                   "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint",
                   "nearest"):
        compare(lambda xp, a: xp.quantile(a, [0.1, 0.5, 0.9], axis=axis, method=method), x,
                **tol(dtype))


@pytest.mark.parametrize("method", ["inverted_cdf", "closest_observation", "lower", "higher",
                                    "nearest"])
def test_discontinuous_quantiles_native(method, monkeypatch):
    """The methods that pick one order statistic run natively (no host round trip), with
    NumPy's values, dtypes (integers stay integers) and NaN slices."""
    import cupynum._api.statistics as S

    def fail(name, *a, **k):
        raise AssertionError(f"{name} ran on the host")

    monkeypatch.setattr(S, "_host", fail)
    x = data("d", (7, 9))
    x[2, 3] = np.nan
    xi = data("q", (6, 5))
    for a in (x, xi):
        for axis in (None, 0, 1):
            for q in (0.3, [0.0, 0.5, 1.0]):
                compare(lambda xp, a: xp.quantile(a, q, axis=axis, method=method), a)
                compare(lambda xp, a: xp.percentile(a, np.multiply(q, 100), axis=axis,
                                                    method=method, keepdims=True), a)


def test_quantile_nan_and_errors():
    x = data("d", (5, 8))
    x[2, 3] = np.nan
    compare(lambda xp, a: xp.median(a, axis=1), x)
    compare(lambda xp, a: xp.quantile(a, 0.4, axis=0), x, **tol("d"))
    compare(lambda xp, a: xp.nanmedian(a, axis=1), x, **tol("d"))
    compare(lambda xp, a: xp.nanquantile(a, [0.2, 0.7], axis=0), x, **tol("d"))
    compare(lambda xp, a: xp.nanpercentile(a, 40), x, **tol("d"))
    compare(lambda xp, a: xp.quantile(a, 1.5), x)  # ValueError
    compare(lambda xp, a: xp.quantile(a, 0.5, method="bogus"), x)
    compare(lambda xp, a: xp.quantile(a, 0.5, weights=xp.ones_like(a),
                                      method="inverted_cdf"), x)
    compare(lambda xp, a: xp.median(a[:, :0], axis=1), x)


def nan_data(dtype, shape, nans):
    """Floats with no NaN, some NaN, or some NaN and all-NaN slices along every axis form
    (including the first slice, which decides NumPy's result dtype for array q)."""
    x = data(dtype, shape)
    if nans != "none":
        x[rng.random(shape) < 0.3] = np.nan
    if nans == "rows":
        x[0] = np.nan
        x[:, 0, 0] = np.nan
        x[2, 3, :] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["e", "f", "d"])
@pytest.mark.parametrize("nans", ["none", "some", "rows"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
def test_nan_order_statistics(dtype, nans, axis):
    """nanmedian/nanquantile/nanpercentile (native for the continuous methods): NumPy's
    per-slice results, dtypes (weak Python-number q, float16 means) and shapes."""
    x = nan_data(dtype, (4, 5, 6), nans)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for kd in (False, True):
            compare(lambda xp, a: xp.nanmedian(a, axis=axis, keepdims=kd), x, ulp=1)
            for q in (0.3, 1, [0.0, 0.25, 0.5, 1.0], np.array([[0.1], [0.9]], np.float32)):
                compare(lambda xp, a: xp.nanquantile(a, q, axis=axis, keepdims=kd), x, ulp=1)
            compare(lambda xp, a: xp.nanpercentile(a, [10, 62.5], axis=axis, keepdims=kd), x,
                    ulp=1)
            compare(lambda xp, a: xp.nanpercentile(a, 40.0, axis=axis, keepdims=kd), x, ulp=1)
        for method in ("interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                       "normal_unbiased", "lower", "midpoint", "inverted_cdf"):
            compare(lambda xp, a: xp.nanquantile(a, [0.1, 0.5, 0.9], axis=axis, method=method),
                    x, ulp=1)


ALL_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
               "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
               "normal_unbiased", "lower", "higher", "nearest", "midpoint")


@pytest.mark.parametrize("method", ALL_METHODS)
@pytest.mark.parametrize("dtype", ["e", "d"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_nan_quantile_methods_native(method, dtype, axis, monkeypatch):
    """Every method of nanquantile/nanpercentile runs natively (no host call) and matches
    NumPy: values (q on the jumps of the discrete methods: k/n, k/n +- half a
    step, 0 and 1), dtypes for array and Python-number q, keepdims and out=."""
    x = nan_data(dtype, (4, 5, 6), "rows")
    x[1, 1, ::2] = 7.0  # ties
    from cupynum._api import statistics

    def no_host(name, *args, **kwargs):
        raise AssertionError(f"{name} ran on the host")
    monkeypatch.setattr(statistics, "_host", no_host)
    # (an integer q still takes the host for the interpolating methods)
    one = 1 if method in ("inverted_cdf", "closest_observation", "lower", "higher",
                          "nearest") else 1.0
    qs = (0.5, one, 0.0, [0.0, 0.2, 0.25, 1 / 3, 0.5, 0.6, 0.75, 0.9, 1.0],
          np.array([[0.05], [0.95]], np.float32), np.linspace(0, 1, 17))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for q in qs:
            for kd in (False, True):
                compare(lambda xp, a: xp.nanquantile(a, q, axis=axis, method=method,
                                                     keepdims=kd), x, ulp=1)
        compare(lambda xp, a: xp.nanpercentile(a, [0, 12.5, 40, 100], axis=axis,
                                               method=method), x, ulp=1)
        compare(lambda xp, a: xp.nanpercentile(a, 30, axis=axis, method=method), x, ulp=1)

        def out(xp, a):
            o = xp.zeros((2, 5))
            r = xp.nanquantile(a, [0.3, 0.8], axis=(0, 2), method=method, out=o)
            assert r is o
            return o
        compare(out, x, ulp=1)


def test_nan_order_statistics_edges():
    x = data("d", (4, 6))
    x[0] = np.nan  # one all-NaN row along axis 1, none along axis 0
    x[2, 3] = np.nan
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        cp.nanmedian(cp.asarray(x), axis=1)
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        cp.nanquantile(cp.asarray(x), [0.5], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cp.nanpercentile(cp.asarray(x), 50, axis=0)
        cp.nanmedian(cp.asarray(x[1:]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dt in ("e", "f", "d"):
            allnan = np.full((3, 4), np.nan, dt)
            compare(lambda xp, a: xp.nanmedian(a), allnan)
            compare(lambda xp, a: xp.nanquantile(a, [0.5, 0.9], axis=0), allnan)
            compare(lambda xp, a: xp.nanpercentile(a, 30), allnan)
        big = data("f", (3, 700))
        big[1, ::3] = np.nan
        compare(lambda xp, a: xp.nanmedian(a, axis=1), big)  # NumPy's 1-D path (axis >= 600)
        for e in (np.zeros(0), np.zeros((0, 3)), np.zeros((3, 0))):
            compare(lambda xp, a: xp.nanmedian(a, axis=0), e)
            compare(lambda xp, a: xp.nanquantile(a, [0.5, 0.2], axis=-1), e)
            compare(lambda xp, a: xp.nanpercentile(a, 30, keepdims=True), e)
    xi = data("i", (5, 6))
    compare(lambda xp, a: xp.nanmedian(a, axis=1), xi, **tol("d"))
    compare(lambda xp, a: xp.nanquantile(a, [0.2, 0.7], axis=0), xi, **tol("d"))
    compare(lambda xp, a: xp.nanpercentile(a, 35), xi, **tol("d"))
    compare(lambda xp, a: xp.nanquantile(a, 1.5), x)  # ValueError
    compare(lambda xp, a: xp.nanquantile(a, [-0.1, 0.5], axis=0), x)  # ValueError
    compare(lambda xp, a: xp.nanpercentile(a, 101), x)  # ValueError
    compare(lambda xp, a: xp.nanquantile(a, 0.5, method="bogus"), x)  # ValueError
    compare(lambda xp, a: xp.nanquantile(a, 0.5, axis=2), x)  # AxisError
    compare(lambda xp, a: xp.nanmedian(a, axis=(0, 0)), x)  # ValueError
    compare(lambda xp, a: xp.nanquantile(a.astype(complex), 0.5), x)  # TypeError

    def out(xp, a):
        o = xp.zeros((2, 6))
        r = xp.nanquantile(a, [0.2, 0.7], axis=0, out=o)
        assert r is o
        o2 = xp.zeros((4, 1), dtype=np.float32)
        assert xp.nanmedian(a, axis=1, out=o2, keepdims=True) is o2
        return o, o2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        compare(out, x)


def test_cov_corrcoef():
    x = data("d", (3, 20))
    y = data("d", (20,))
    compare(lambda xp, a: xp.cov(a), x, **tol("d"))
    compare(lambda xp, a: xp.cov(a.T, rowvar=False), x, **tol("d"))
    compare(lambda xp, a, b: xp.cov(a, b), x, y, **tol("d"))
    compare(lambda xp, a: xp.cov(a, bias=True), x, **tol("d"))
    compare(lambda xp, a: xp.cov(a, ddof=3), x, **tol("d"))
    compare(lambda xp, a: xp.cov(a[0]), x, **tol("d"))
    compare(lambda xp, a: xp.corrcoef(a), x, **tol("d"))
    compare(lambda xp, a, b: xp.corrcoef(a, b), x, y, **tol("d"))
    c = data("D", (2, 10))
    compare(lambda xp, a: xp.cov(a), c, **tol("d"))
    compare(lambda xp, a: xp.corrcoef(a), c, **tol("d"))
    compare(lambda xp, a: xp.cov(a, fweights=np.arange(1, 21)), x, **tol("d"))


def test_host_composed_functions_still_work():
    """histogram & co. (native since issue 4, tests/test_histograms.py): a smoke test."""
    x = data("d", (200,))
    compare(lambda xp, a: xp.histogram(a, bins=10), x)
    compare(lambda xp, a: xp.histogram_bin_edges(a, bins="auto"), x)
    compare(lambda xp, a: xp.histogram2d(a[:100], a[100:], bins=5), x)
    compare(lambda xp, a: xp.histogramdd(a.reshape(100, 2), bins=4), x)
    compare(lambda xp, a: xp.bincount(xp.asarray(np.arange(10) % 3)), x)
    compare(lambda xp, a: xp.digitize(a, np.array([-1.0, 0.0, 1.0])), x)
    compare(lambda xp, a: xp.correlate(a[:10], a[10:15], "full"), x, **tol("d"))
    compare(lambda xp, a: xp.convolve(a[:10], a[10:15]), x, **tol("d"))
    compare(lambda xp, a: xp.gradient(a[:20]), x, **tol("d"))


def _weights(shape, kind):
    """Non-negative weights: random, with zeros (leading ones too), or integers."""
    w = rng.random(shape)
    if kind == "zeros":
        w[rng.random(shape) < 0.4] = 0
        w.reshape(-1)[:3] = 0
    elif kind == "ints":
        w = rng.integers(0, 4, shape).astype(np.int64)
        w.reshape(-1)[-1] = 1
    return w


@pytest.mark.parametrize("func", ["quantile", "percentile", "nanquantile", "nanpercentile"])
@pytest.mark.parametrize("dtype,nans", [("f", "some"), ("d", "rows"), ("d", "none"),
                                        ("i", "none")])
def test_weighted_quantiles_native(func, dtype, nans, monkeypatch):
    """weights= (method='inverted_cdf') on the device: NumPy's values and dtypes for
    weights of a's shape and along the reduced axes, zero weights, every q form, axis
    forms, keepdims and out=; no host call."""
    from cupynum._api import statistics

    shape = (4, 5, 6)
    x = nan_data(dtype, shape, nans) if dtype != "i" else data(dtype, shape)
    x[1, 1, ::2] = x[1, 1, 0]  # ties
    pct = func.endswith("percentile")
    scale = 100 if pct else 1

    host = statistics._host
    allow_host = [False]

    def no_host(name, *args, **kwargs):
        assert allow_host[0], f"{name} ran on the host"
        return host(name, *args, **kwargs)
    monkeypatch.setattr(statistics, "_host", no_host)
    qs = (0.5 * scale, 0, 1 * scale, np.array([[0.05], [0.95]], np.float32) * scale,
          np.linspace(0, scale, 13))
    cases = [(None, shape), (0, (4,)), (-1, (6,)), (1, shape), ((0, 2), (4, 6)),
             ((2, 0), (6, 4)), ((0, 1, 2), shape)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for kind in ("random", "zeros", "ints"):
            for axis, wshape in cases:
                w = _weights(wshape, kind)
                if kind == "zeros" and w.ndim == len(shape):
                    w[..., 0] = 1  # no slice all zero (an error: tested below)
                    w[0, 0, 0] = 0
                # NumPy 2.4's nan-variants fail (IndexError) on weights that are not of
                # a's shape when several slices are reduced: the host runs NumPy there
                allow_host[0] = func.startswith("nan") and w.ndim < 3 and axis is not None
                for q in qs:
                    compare(lambda xp, a, w: getattr(xp, func)(
                        a, q, axis=axis, method="inverted_cdf", weights=w), x, w)
                compare(lambda xp, a, w: getattr(xp, func)(
                    a, [0.3 * scale, 0.6 * scale], axis=axis, method="inverted_cdf",
                    weights=w, keepdims=True), x, w)

        def out(xp, a, w):
            o = xp.zeros((2, 5), dtype=a.dtype)
            r = getattr(xp, func)(a, [0.3 * scale, 0.8 * scale], axis=(0, 2),
                                  method="inverted_cdf", weights=w, out=o)
            assert r is o
            return o
        allow_host[0] = False
        compare(out, x, _weights(shape, "random"))
        if not func.startswith("nan"):
            compare(out, x, _weights((4, 6), "random"))


@pytest.mark.parametrize("func", ["quantile", "nanquantile"])
def test_weighted_quantile_errors(func):
    x = data("d", (3, 4))
    x[0, 1] = np.nan
    w = rng.random((3, 4))
    f = getattr(np, func)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for bad_w, axis, method in (
                (-w, 0, "inverted_cdf"),               # negative
                (np.zeros((3, 4)), 0, "inverted_cdf"),  # all zero
                (np.where(w > 0.5, np.nan, w), 1, "inverted_cdf"),  # NaN weights
                (np.full((3, 4), np.inf), 1, "inverted_cdf"),       # inf
                (w, 0, "linear"),                       # only inverted_cdf takes weights
                (w[0], None, "inverted_cdf"),           # shapes differ, no axis: TypeError
                (w[0], 0, "inverted_cdf"),              # wrong shape along the axis
                (w, 2, "inverted_cdf")):                # AxisError
            compare(lambda xp, a, ww: getattr(xp, func)(a, [0.5], axis=axis, method=method,
                                                        weights=ww), x, bad_w)
        assert f is not None
        x2 = x.copy()
        x2[1] = np.nan  # an all-NaN row: NaN and a warning for nanquantile
        compare(lambda xp, a, ww: getattr(xp, func)(a, 0.4, axis=1, method="inverted_cdf",
                                                    weights=ww), x2, w)


@pytest.mark.parametrize("func", ["quantile", "percentile"])
@pytest.mark.parametrize("method", ["linear", "median_unbiased", "inverted_cdf", "nearest",
                                    "midpoint"])
@pytest.mark.parametrize("dtype", ["i", "f", "d"])
def test_quantile_axis_tuples_out_and_device_q_native(func, method, dtype, monkeypatch):
    """Axis tuples, out= and a q given as a device array take the device path (no host
    call) and give NumPy's values bit for bit (the interpolation takes b - a in the data's
    dtype, as NumPy's _lerp does), dtypes and shapes, keepdims included."""
    from cupynum._api import statistics

    def no_host(name, *args, **kwargs):
        raise AssertionError(f"{name} ran on the host")

    monkeypatch.setattr(statistics, "_host", no_host)
    x = data(dtype, (4, 5, 6))
    scale = 100 if func == "percentile" else 1
    q = np.array([0.1, 0.5, 0.95]) * scale
    for axis in [(0, 2), (2, 0), (0, 1, 2), (-1, 1)]:
        for keepdims in (False, True):
            compare(lambda xp, a: getattr(xp, func)(a, q, axis=axis, method=method,
                                                    keepdims=keepdims), x)
    expected = getattr(np, func)(x, q, axis=(0, 2), method=method)
    out = cp.empty(expected.shape, expected.dtype)
    got = getattr(cp, func)(cp.asarray(x), cp.asarray(q), axis=(0, 2), method=method, out=out)
    assert got is out
    np.testing.assert_array_equal(out.get(), expected)
    got = getattr(cp, func)(cp.asarray(x), cp.asarray(q), axis=1, method=method)
    assert got.dtype == getattr(np, func)(x, q, axis=1, method=method).dtype
    np.testing.assert_array_equal(got.get(), getattr(np, func)(x, q, axis=1, method=method))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_integer_q_runs_natively(dtype, monkeypatch):
    """An integer q (0 or 1, e.g. ``quantile(x, [0, 1])``) takes the device path for every
    method: NumPy's integer gammas are all 0, and its result dtype (float64 for float32
    data) comes from NumPy's own answer on a stand-in."""
    from numpy.lib import _function_base_impl as fb

    from cupynum._api import statistics as st

    def no_host(*args, **kwargs):
        raise AssertionError("took the host path")

    monkeypatch.setattr(st, "_host", no_host)
    h = (np.random.default_rng(1).standard_normal((5, 7)) * 10).astype(dtype)
    for q in ([0, 1], 1, np.array([[1], [0]])):
        for method in fb._QuantileMethods:
            for axis in (None, 1, (0, 1)):
                expected = np.quantile(h, q, axis=axis, method=method)
                got = cp.quantile(cp.asarray(h), q, axis=axis, method=method)
                got = np.asarray(cp.asnumpy(got))
                assert got.dtype == np.asarray(expected).dtype
                np.testing.assert_array_equal(got, expected)


def test_integer_q_nanquantile_runs_natively(monkeypatch):
    """nanquantile with an integer q, every method, NaN slices included: the device path."""
    from numpy.lib import _function_base_impl as fb

    from cupynum._api import statistics as st

    def no_host(*args, **kwargs):
        raise AssertionError("took the host path")

    monkeypatch.setattr(st, "_host", no_host)
    for dtype in ("float32", "float64"):
        h = (np.random.default_rng(3).standard_normal((5, 7)) * 10).astype(dtype)
        h[1, 2] = np.nan
        h[3, :] = np.nan
        for q in ([0, 1], 1, np.array([[1], [0]])):
            for method in fb._QuantileMethods:
                for axis in (None, 0, 1):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        expected = np.nanquantile(h, q, axis=axis, method=method)
                        got = cp.nanquantile(cp.asarray(h), q, axis=axis, method=method)
                    got = np.asarray(cp.asnumpy(got))
                    assert got.dtype == np.asarray(expected).dtype
                    np.testing.assert_array_equal(got, expected)
