"""bincount, digitize, histogram_bin_edges, histogram, histogram2d, histogramdd, correlate,
convolve and gradient (cupynum/_api/histograms.py) vs NumPy.

Counts and bin indices are exact.  Weighted sums are differences of a float64 prefix sum
(NumPy adds sequentially): rtol 1e-12 (plus a small atol for cancellation near zero).
correlate/convolve are dot products (rtol 1e-12 for float64, 1e-5 for float32/float16 in
float32); gradient is NumPy's formula, term for term (rtol 1e-12).

The ``native`` fixture makes every host fallback of the module fail, so these tests check
that the functions run natively (their error cases still raise NumPy's exception types).
"""
import warnings

import numpy as np
import pytest

import cupynum as cp
import cupynum._api.histograms as H
from data import sample, seed_each_test
from helpers import compare

rng = np.random.default_rng(11)
_seed = seed_each_test(rng)

F64 = {"rtol": 1e-12, "atol": 1e-12}
F32 = {"rtol": 1e-5, "atol": 3e-5}  # single-precision weights: the device sums in another order


@pytest.fixture
def native(monkeypatch):
    def fail(name, *a, **k):
        raise AssertionError(f"{name} ran on the host")
    monkeypatch.setattr(H, "_host", fail)


def tol(dtype):
    dt = np.dtype(dtype)
    if dt.kind in "fc" and dt.itemsize <= (8 if dt.kind == "c" else 4):
        return {"rtol": 2e-3 if dt in (np.float16,) else 1e-5, "atol": 1e-5}
    return F64


# --- bincount -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["?", "b", "B", "h", "i", "I", "l", "L"])
def test_bincount_dtypes(native, dtype):
    x = sample(rng, dtype, (300,), ints=(0, 40))
    compare(lambda xp, a: xp.bincount(a), x)
    compare(lambda xp, a: xp.bincount(a, minlength=60), x)
    compare(lambda xp, a: xp.bincount(a, minlength=np.int64(2)), x)
    compare(lambda xp, a: xp.bincount(a[::-3]), x)  # non-contiguous
    for wdt in ["d", "f", "i", "?", "B"]:
        w = sample(rng, wdt, (300,))
        compare(lambda xp, a, w: xp.bincount(a, w), x, w, **F64)
        compare(lambda xp, a, w: xp.bincount(a[::2], w[1::2], minlength=50), x, w, **F64)


def test_bincount_edges(native):
    x = np.array([0, 3, 3, 7, 0, 2], np.int64)
    compare(lambda xp, a: xp.bincount(a[:0]), x)
    compare(lambda xp, a: xp.bincount(a[:0], minlength=4), x)
    compare(lambda xp, a: xp.bincount(a[:0], weights=a[:0].astype(float)), x)
    compare(lambda xp, a: xp.bincount(a, weights=np.array([np.inf, 1, -np.inf, np.nan, -1,
                                                            2.5])), x)
    compare(lambda xp, a: xp.bincount(a, weights=np.array([np.inf, 1, np.inf, 3, np.inf,
                                                            -0.0])), x)
    compare(lambda xp, a: xp.bincount(a, weights=np.array([1.0, 1e300, -1e300, 5, -1, 2])),
            x, **F64)
    compare(lambda xp, a: xp.bincount(a), np.array([5], np.uint64))
    compare(lambda xp: xp.bincount(xp.asarray([1, 4, 1])))
    compare(lambda xp: xp.bincount([1, 4, 1]))
    big = np.array([0, 2**40], np.int64)  # minlength from the max: no overflow
    compare(lambda xp, a: xp.bincount(a[1:] - 2**40 + 3), big)


def test_bincount_errors(native):
    x = np.array([1, 2, 3])
    compare(lambda xp, a: xp.bincount(a - 2), x)  # ValueError: negative
    compare(lambda xp, a: xp.bincount(a.astype(np.uint64) + np.uint64(2**63)), x)
    compare(lambda xp, a: xp.bincount(a, minlength=-1), x)
    compare(lambda xp, a: xp.bincount(a, minlength=None), x)  # TypeError
    compare(lambda xp, a: xp.bincount(a, minlength=1.5), x)
    compare(lambda xp, a: xp.bincount(a.astype(float)), x)  # TypeError: float input
    compare(lambda xp, a: xp.bincount(a.reshape(3, 1)), x)  # ValueError: 2-d
    compare(lambda xp, a: xp.bincount(a[0]), x)  # ValueError: 0-d
    compare(lambda xp, a: xp.bincount(a, weights=a[:2].astype(float)), x)  # length
    compare(lambda xp, a: xp.bincount(a, weights=a.astype(complex)), x)  # TypeError
    compare(lambda xp, a: xp.bincount(a, weights=np.ones((3, 1))), x)


# --- digitize -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["b", "i", "L", "e", "f", "d"])
@pytest.mark.parametrize("right", [False, True])
def test_digitize(native, dtype, right):
    x = sample(rng, dtype, (7, 9), ints=(0, 20))
    inc = np.array([0, 2, 2, 5, 9, 15], dtype)
    for bins in (inc, inc[::-1], np.array([1.5, 3.25]), np.array([], dtype), inc[:1]):
        compare(lambda xp, a, b: xp.digitize(a, b, right=right), x, bins)
        compare(lambda xp, a, b: xp.digitize(a.T[::2], b, right), x, bins)  # non-contiguous
        compare(lambda xp, a: xp.digitize(a, bins.tolist(), right), x)  # host bins
    compare(lambda xp, a, b: xp.digitize(a[0, 0], b, right), x, inc)  # 0-d
    compare(lambda xp, a, b: xp.digitize(a[:0], b, right), x, inc)  # empty


def test_digitize_nan_and_errors(native):
    x = np.array([np.nan, -np.inf, 0.0, 1.0, np.inf, 2.0])
    for bins in ([0.0, 1.0, np.inf], [np.inf, 1.0, 0.0], [0.0, 1.0, np.nan],
                 [1.0, 1.0, 0.0], [1.0, 1.0]):
        compare(lambda xp, a, b: xp.digitize(a, b), x, np.array(bins))
        compare(lambda xp, a, b: xp.digitize(a, b, True), x, np.array(bins))
    compare(lambda xp, a, b: xp.digitize(a, b), x, np.array([3.0, 1.0, 2.0]))  # ValueError
    compare(lambda xp, a, b: xp.digitize(a, b), x, np.ones((2, 2)))  # ValueError
    compare(lambda xp, a: xp.digitize(a, 1.0), x)  # ValueError
    compare(lambda xp, a: xp.digitize(a.astype(complex), [1.0]), x)  # TypeError


# --- histograms ---------------------------------------------------------------------------

BINS = [10, 1, 3, np.int64(7), [-1.0, 0.0, 0.5, 2.0], [-2, 0, 0, 3]]
ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


@pytest.mark.parametrize("dtype", ["?", "b", "B", "i", "l", "e", "f", "d"])
def test_histogram_dtypes(native, dtype):
    a = sample(rng, dtype, (5, 60), ints=(-20, 30))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # bool input: NumPy warns
        for bins in BINS + ESTIMATORS:
            compare(lambda xp, x: xp.histogram_bin_edges(x, bins), a, **tol(dtype))
            compare(lambda xp, x: xp.histogram(x, bins), a, **tol(dtype))
            compare(lambda xp, x: xp.histogram(x[:, ::-3], bins, range=(-1, 2)), a,
                    **tol(dtype))
        for bins in BINS:
            compare(lambda xp, x: xp.histogram(x, bins, density=True), a, **tol(dtype))


@pytest.mark.parametrize("wdt", ["d", "f", "i", "b", "L", "D", "F"])
def test_histogram_weights(native, wdt):
    a = sample(rng, "d", (400,))
    w = sample(rng, wdt, (400,))
    tol = F32 if wdt in "fF" else F64
    for bins in BINS:
        compare(lambda xp, x, w: xp.histogram(x, bins, weights=w), a, w, **tol)
        compare(lambda xp, x, w: xp.histogram(x[::2], bins, weights=w[::2], range=(0, 1)),
                a, w, **tol)
        if wdt in "dfi":
            compare(lambda xp, x, w: xp.histogram(x, bins, weights=w, density=True), a, w,
                    **tol)


def test_histogram_edges_and_errors(native):
    a = np.array([0.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0])  # values on the edges
    compare(lambda xp, x: xp.histogram(x, 4), a)  # the last edge is in the last bin
    compare(lambda xp, x: xp.histogram(x, [0, 1, 3]), a)
    compare(lambda xp, x: xp.histogram(x, [0, 1, 3], weights=x), a)
    compare(lambda xp, x: xp.histogram(x, 2, range=(1, 3)), a)  # outside dropped
    compare(lambda xp, x: xp.histogram(x[:0], 3), a)  # empty: range (0, 1)
    compare(lambda xp, x: xp.histogram(x[:0], "auto"), a)
    compare(lambda xp, x: xp.histogram(x[:1], 3), a)  # one value: +-0.5
    compare(lambda xp, x: xp.histogram(x * 0 + 2, "fd"), a)
    compare(lambda xp, x: xp.histogram(x, "auto", range=(1, 2)), a)
    compare(lambda xp, x: xp.histogram(x, 3, weights=x[:3]), a)  # ValueError: shape
    compare(lambda xp, x: xp.histogram(x, 0), a)  # ValueError
    compare(lambda xp, x: xp.histogram(x, 2.5), a)  # TypeError
    compare(lambda xp, x: xp.histogram(x, "bogus"), a)  # ValueError
    compare(lambda xp, x: xp.histogram(x, "auto", weights=x), a)  # TypeError
    compare(lambda xp, x: xp.histogram(x, [2, 1, 3]), a)  # ValueError: not monotonic
    compare(lambda xp, x, b: xp.histogram(x, b), a, np.array([2.0, 1.0]))  # device bins
    compare(lambda xp, x: xp.histogram(x, [[1, 2]]), a)  # ValueError: 2-d bins
    compare(lambda xp, x: xp.histogram(x, 3, range=(2, 1)), a)  # ValueError
    compare(lambda xp, x: xp.histogram(x, 3, range=(0, np.inf)), a)
    compare(lambda xp, x: xp.histogram(x + np.nan, 3), a)  # ValueError: not finite
    b = a.copy()
    b[2] = np.nan
    compare(lambda xp, x: xp.histogram(x, 3, range=(0, 4)), b)  # NaN dropped
    compare(lambda xp, x: xp.histogram(x, [0.0, 2.0, 4.0]), b)
    ints = np.array([0, 1, 1, 2, 9, 9, 9, 3], np.int8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # stone: "may be suboptimal"
        for bins in ESTIMATORS:
            compare(lambda xp, x: xp.histogram(x, bins), ints)  # integer widths >= 1


@pytest.mark.parametrize("dtype", ["i", "f", "d"])
def test_histogramdd_2d(native, dtype):
    x = sample(rng, dtype, (3, 150), ints=(0, 9))
    w = rng.random(150)
    for bins in (5, [3, 4], [np.array([0, 2, 5, 9.0]), 2], np.array([-1.0, 0.0, 1, 8]),
                 [2, [0.0, 1.0]]):
        compare(lambda xp, a: xp.histogram2d(a[0], a[1], bins), x, **F64)
        compare(lambda xp, a, w: xp.histogram2d(a[0], a[1], bins, density=True, weights=w),
                x, w, **F64)
    compare(lambda xp, a: xp.histogram2d(a[0], a[1], 4, range=[[0, 3], [1, 5]]), x, **F64)
    for bins in (4, [2, 3, 4], (np.array([0.0, 1.0, 9.0]), 3, 2)):
        compare(lambda xp, a: xp.histogramdd(a.T, bins), x, **F64)
        compare(lambda xp, a: xp.histogramdd(a.T[::-2], bins, density=True), x, **F64)
        compare(lambda xp, a, w: xp.histogramdd(a.T, bins, weights=w), x, w, **F64)
        compare(lambda xp, a: xp.histogramdd([a[0], a[1], a[2]], bins), x, **F64)
    compare(lambda xp, a: xp.histogramdd(a[0], 6), x, **F64)  # 1-d sample
    compare(lambda xp, a: xp.histogramdd(a.T[:0], 3), x, **F64)  # empty


def test_histogramdd_errors(native):
    x = rng.random((20, 2))
    compare(lambda xp, a: xp.histogram2d(a[:, 0], a[:4, 1]), x)  # ValueError: lengths
    compare(lambda xp, a: xp.histogramdd(a, [2, 2, 2]), x)  # ValueError
    compare(lambda xp, a: xp.histogramdd(a, 0), x)  # ValueError
    compare(lambda xp, a: xp.histogramdd(a, 2.5), x)  # TypeError
    compare(lambda xp, a: xp.histogramdd(a, [[2, 1], 2]), x)  # ValueError: not monotonic
    compare(lambda xp, a: xp.histogramdd(a, 2, range=[(0, 1)]), x)  # ValueError
    compare(lambda xp, a: xp.histogramdd(a, [np.ones((2, 2)), 2]), x)  # ValueError


# --- correlate / convolve -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["?", "b", "B", "i", "L", "e", "f", "d", "F", "D"])
@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_correlate_convolve(native, dtype, mode):
    a = sample(rng, dtype, (23,), ints=(-9, 9))
    for n in (1, 4, 7, 23, 30):
        v = sample(rng, dtype, (n,), ints=(-9, 9))
        t = tol(dtype)
        compare(lambda xp, a, v: xp.correlate(a, v, mode), a, v, **t)
        compare(lambda xp, a, v: xp.convolve(a, v, mode), a, v, **t)
        compare(lambda xp, a, v: xp.correlate(a[::-2], v, mode), a, v, **t)  # strided
        compare(lambda xp, a, v: xp.convolve(v, a[::2], mode), a, v, **t)


def test_correlate_mixed_and_errors(native):
    a = sample(rng, "i", (10,))
    v = sample(rng, "f", (3,))
    compare(lambda xp, a, v: xp.correlate(a, v, "full"), a, v, **tol("d"))
    compare(lambda xp, a, v: xp.convolve(a.astype(np.int8), v.astype(np.uint8)), a, v)
    compare(lambda xp, a, v: xp.correlate(a.astype(np.int8) * 20, a.astype(np.int8) * 7,
                                          "full"), a, v)  # wrap-around as NumPy
    compare(lambda xp, a: xp.correlate(a, [1, 2], 0), a)
    compare(lambda xp, a: xp.convolve(a, 3), a)  # 0-d operand of convolve
    compare(lambda xp, a, v: xp.correlate(a, v, "bogus"), a, v)  # ValueError
    compare(lambda xp, a, v: xp.correlate(a[:0], v), a, v)  # ValueError: empty
    compare(lambda xp, a, v: xp.correlate(a, v[:0]), a, v)
    compare(lambda xp, a, v: xp.convolve(a[:0], v[:0]), a, v)
    compare(lambda xp, a, v: xp.convolve(a, v[:0]), a, v)
    compare(lambda xp, a, v: xp.correlate(a.reshape(2, 5), v), a, v)  # ValueError: 2-d
    compare(lambda xp, a, v: xp.correlate(a[0], v), a, v)  # ValueError: 0-d


# --- gradient -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["b", "B", "i", "l", "e", "f", "d", "F", "D"])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(native, dtype, edge_order):
    f = sample(rng, dtype, (6, 7, 5))
    t = tol(dtype)
    sp = np.array([0.0, 0.5, 1.5, 1.75, 3.0, 4.5, 5.0])
    compare(lambda xp, f: xp.gradient(f, edge_order=edge_order), f, **t)
    compare(lambda xp, f: xp.gradient(f, 2.0, edge_order=edge_order), f, **t)
    compare(lambda xp, f: xp.gradient(f, np.float32(0.5), axis=1, edge_order=edge_order), f,
            **t)
    compare(lambda xp, f: xp.gradient(f, 1.0, sp, [1, 2, 4, 8, 9], edge_order=edge_order), f,
            **t)
    compare(lambda xp, f, s: xp.gradient(f, s, axis=-2, edge_order=edge_order), f, sp, **t)
    compare(lambda xp, f: xp.gradient(f, np.arange(7) * 3, axis=1, edge_order=edge_order),
            f, **t)  # uniform integer spacing
    compare(lambda xp, f: xp.gradient(f.transpose(2, 0, 1)[::-1], axis=(0, 2),
                                      edge_order=edge_order), f, **t)
    compare(lambda xp, f: xp.gradient(f[0, 0], edge_order=edge_order), f, **t)


def test_gradient_errors(native):
    f = rng.random((4, 3))
    compare(lambda xp, f: xp.gradient(f, 1.0, 2.0, 3.0), f)  # TypeError
    compare(lambda xp, f: xp.gradient(f, [1, 2], axis=0), f)  # ValueError: length
    compare(lambda xp, f: xp.gradient(f, np.ones((4, 1)), axis=0), f)  # ValueError: 2-d
    compare(lambda xp, f: xp.gradient(f, edge_order=3), f)  # ValueError
    compare(lambda xp, f: xp.gradient(f[:, :2], axis=1, edge_order=2), f)  # too small
    compare(lambda xp, f: xp.gradient(f, axis=2), f)  # AxisError
    compare(lambda xp, f: xp.gradient(f[:1]), f)  # ValueError: too small
    compare(lambda xp, f: xp.gradient(f > 0.5), f)  # TypeError: bool subtract
