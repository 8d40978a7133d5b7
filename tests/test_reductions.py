"""Reductions, arg-reductions, scans and ufunc.reduce/accumulate/reduceat against NumPy.

Tolerances (internals.md principle 1): integer, bool, min/max/arg and logical results are
exact.  Float sums and scans may differ from NumPy's pairwise / sequential order by the
summation error bound: |err| <= c * n * eps * sum|x|; with the test sizes here (n <= 3000,
values of mixed sign and unit scale) rtol 1e-4 (float32, float16 accumulating in float),
1e-12 (float64) covers that bound with margin (we compare against values whose magnitude
is not the result of cancellation: ``atol`` scales with the data).
"""
import itertools
import warnings

import numpy as np
import pytest

import cupynum as cp
from data import sample, seed_each_test
from helpers import compare

DTYPES = ["?", "b", "B", "h", "H", "i", "I", "l", "L", "e", "f", "d", "F", "D"]
rng = np.random.default_rng(123)

_seed = seed_each_test(rng)


def data(dtype, shape):
    return sample(rng, dtype, shape, ints=(-50, 50))


def tol(dtype, op="sum"):
    dt = np.dtype(dtype)
    if dt.kind not in "fc" or op in ("max", "min", "argmax", "argmin", "any", "all"):
        return {}
    if dt == np.float16 and op in ("prod", "scan"):
        # NumPy rounds float16 products and running sums to float16 after every step (a
        # large error of its own); we accumulate in float32
        return {"rtol": 5e-2, "atol": 0.25}
    if dt.itemsize <= 4 or dt == np.complex64:
        return {"rtol": 2e-3 if dt == np.float16 else 1e-4, "atol": 1e-2 if
                dt == np.float16 else 1e-4}
    return {"rtol": 1e-12, "atol": 1e-12}


AXES = [None, 0, 1, -1, 2, (0, 2), (0, 1, 2), (), (-1, 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", AXES)
def test_sum_axes(dtype, axis):
    x = data(dtype, (5, 6, 7))
    compare(lambda xp, a: xp.sum(a, axis=axis), x, **tol(dtype))
    compare(lambda xp, a: a.sum(axis=axis, keepdims=True), x, **tol(dtype))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "amax", "amin", "any", "all",
                                  "ptp", "count_nonzero", "argmax", "argmin"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_functions_each_dtype(name, dtype):
    x = data(dtype, (9, 33))
    if name == "prod" and np.dtype(dtype).kind in "fc":
        x = (x * 0 + 1 + 0.01 * x).astype(dtype)  # keep the product in range
    if name == "ptp" and dtype == "?":
        return  # NumPy raises TypeError for bool subtract: checked below
    kw = tol(dtype, name) if name in ("sum", "prod") else {}
    for axis in (None, 0, 1, -1):
        compare(lambda xp, a: getattr(xp, name)(a, axis=axis), x, **kw)
    if name not in ("count_nonzero",):
        compare(lambda xp, a: getattr(xp, name)(a, axis=1, keepdims=True), x, **kw)


@pytest.mark.parametrize("layout", ["T", "step", "neg", "sliced3d", "fortran"])
@pytest.mark.parametrize("name", ["sum", "max", "argmax", "argmin", "cumsum", "mean"])
def test_non_contiguous(layout, name):
    base = data("f", (30, 40))
    x = {"T": base.T, "step": base[::3, ::2], "neg": base[::-1, ::-2],
         "sliced3d": data("f", (6, 7, 8))[1:, ::2, ::-1], "fortran": np.asfortranarray(base)}[
        layout]
    kw = tol("f") if name in ("sum", "cumsum", "mean") else {}
    for axis in [None] + list(range(x.ndim)):
        compare(lambda xp, a: getattr(xp, name)(a, axis=axis), x, **kw)


@pytest.mark.parametrize("dtype", ["l", "f", "d", "?"])
def test_zero_d_and_empty(dtype):
    x0 = data(dtype, ())
    for name in ("sum", "prod", "max", "min", "argmax", "any", "all"):
        compare(lambda xp, a: getattr(xp, name)(a), x0)
    e = np.zeros((0, 3), dtype)
    compare(lambda xp, a: xp.sum(a), e)
    compare(lambda xp, a: xp.sum(a, axis=0), e)
    compare(lambda xp, a: xp.sum(a, axis=1), e)
    compare(lambda xp, a: xp.prod(a, axis=0), e)
    compare(lambda xp, a: xp.max(a), e)  # ValueError: no identity
    compare(lambda xp, a: xp.max(a, axis=0), e)
    compare(lambda xp, a: xp.max(a, axis=1), e)  # empty result: fine
    compare(lambda xp, a: xp.max(a, axis=0, initial=5), e)
    compare(lambda xp, a: xp.argmax(a), e)
    compare(lambda xp, a: xp.any(a, axis=0), e)
    compare(lambda xp, a: xp.all(a, axis=0), e)


def test_nan_inf_semantics():
    x = np.array([[1.0, np.nan, 3.0, -np.inf], [np.inf, 2.0, np.nan, 0.0],
                  [5.0, 1.0, -2.0, 7.0]])
    for name in ("max", "min", "argmax", "argmin", "sum", "prod", "nanmax", "nanmin",
                 "nansum", "nanprod", "nanargmax", "nanargmin"):
        for axis in (None, 0, 1):
            compare(lambda xp, a: getattr(xp, name)(a, axis=axis), x)
    compare(lambda xp, a: xp.argmax(a), np.array([1.0, np.nan, 5.0, np.nan]))
    compare(lambda xp, a: xp.argmin(a), np.array([1.0, 0.5, np.nan, np.nan]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        compare(lambda xp, a: xp.nanmax(a, axis=0), np.array([[np.nan, 1.0], [np.nan, 2.0]]))
    compare(lambda xp, a: xp.nanargmax(a, axis=0), np.array([[np.nan, 1.0], [np.nan, 2.0]]))


def test_complex_ordering():
    x = np.array([1 + 2j, 1 + 3j, 0 + 9j, 1 + 3j, -1 - 1j], np.complex128)
    for name in ("max", "min", "argmax", "argmin"):
        compare(lambda xp, a: getattr(xp, name)(a), x)
    y = np.array([1 + 2j, complex(np.nan, 0), 3 + 0j, complex(0, np.nan)])
    for name in ("max", "argmax", "argmin", "nanargmax"):
        compare(lambda xp, a: getattr(xp, name)(a), y)


@pytest.mark.parametrize("dtype", ["b", "B", "i", "l", "f", "d", "?", "e"])
def test_dtype_argument_and_accumulators(dtype):
    x = data(dtype, (4, 50))
    compare(lambda xp, a: xp.sum(a), x, **tol(dtype))
    for dt in ("i", "l", "f", "d"):
        compare(lambda xp, a: xp.sum(a, axis=1, dtype=dt), x, **tol(dt))
        compare(lambda xp, a: xp.prod(a, axis=0, dtype=dt), x, **tol(dt))
        compare(lambda xp, a: xp.cumsum(a, axis=1, dtype=dt), x, **tol(dt))


def test_integer_overflow_wraps_like_numpy():
    x = np.full(1000, 2**40, np.int64)
    compare(lambda xp, a: xp.sum(a), x)
    compare(lambda xp, a: xp.prod(a[:5]), x)
    compare(lambda xp, a: xp.cumsum(a), x)
    y = np.full(300, 200, np.uint8)
    compare(lambda xp, a: xp.sum(a, dtype=np.uint8), y)
    compare(lambda xp, a: xp.add.reduce(a), y)


def test_out_argument():
    x = data("d", (6, 5))
    for axis in (0, 1):
        shape = (5,) if axis == 0 else (6,)

        def f(xp, a, axis=axis, shape=shape):
            o = xp.zeros(shape, np.float32)
            r = xp.sum(a, axis=axis, out=o)
            assert r is o
            return o
        compare(f, x, rtol=1e-6)

    def keep(xp, a):
        o = xp.zeros((1, 5))
        xp.max(a, axis=0, keepdims=True, out=o)
        return o
    compare(keep, x)

    def strided_out(xp, a):
        o = xp.zeros((6, 4))
        xp.sum(a, axis=1, out=o[:, 2])
        return o
    compare(strided_out, x, rtol=1e-12)

    def bad(xp, a):
        return xp.sum(a, axis=0, out=xp.zeros((6,)))
    compare(bad, x)

    def bad_ndim(xp, a):
        return xp.sum(a, axis=0, out=xp.zeros((1, 5)))
    compare(bad_ndim, x)

    def argout(xp, a):
        o = xp.zeros(5, np.intp)
        xp.argmax(a, axis=0, out=o)
        return o
    compare(argout, x)


def test_errors():
    x = data("f", (3, 4))
    compare(lambda xp, a: xp.sum(a, axis=2), x)  # AxisError
    compare(lambda xp, a: xp.sum(a, axis=-3), x)
    compare(lambda xp, a: xp.sum(a, axis=(0, 0)), x)  # repeated axis
    compare(lambda xp, a: xp.subtract.reduce(a, axis=(0, 1)), x)  # not reorderable
    compare(lambda xp, a: xp.maximum.reduce(a, where=a > 0), x)  # where without initial
    compare(lambda xp, a: xp.argmax(a, axis=2), x)
    compare(lambda xp, a: xp.sum(a, axis=1.5), x)
    compare(lambda xp, a: xp.bitwise_and.reduce(a), x)  # no float loop


def test_initial_and_where():
    x = data("d", (4, 6))
    m = rng.random((4, 6)) < 0.5
    compare(lambda xp, a: xp.sum(a, initial=10.0), x, rtol=1e-12)
    compare(lambda xp, a: xp.sum(a, axis=0, initial=10.0), x, rtol=1e-12)
    compare(lambda xp, a: xp.max(a, axis=1, initial=0.5), x)
    compare(lambda xp, a, m: xp.sum(a, axis=1, where=m), x, m, rtol=1e-12, atol=1e-12)
    compare(lambda xp, a, m: xp.max(a, axis=0, where=m, initial=-5.0), x, m)
    compare(lambda xp, a, m: xp.min(a, where=m, initial=5.0), x, m)
    compare(lambda xp, a: xp.sum(a, where=np.array([True, False] * 3)), x, rtol=1e-12)
    compare(lambda xp, a, m: xp.any(a > 0, axis=0, where=m), x, m)
    compare(lambda xp, a, m: xp.subtract.reduce(a, axis=1, where=m, initial=1.0), x, m,
            rtol=1e-12)
    xi = data("l", (5, 5))
    compare(lambda xp, a: xp.prod(a, axis=0, initial=2), xi)


UFUNC_REDUCE = ["add", "multiply", "minimum", "maximum", "fmin", "fmax", "logical_and",
                "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
                "subtract", "divide", "floor_divide", "power", "gcd", "lcm", "hypot",
                "arctan2", "logaddexp", "remainder", "equal", "not_equal"]


@pytest.mark.parametrize("name", UFUNC_REDUCE)
@pytest.mark.parametrize("dtype", ["?", "b", "i", "L", "f", "d", "D"])
def test_ufunc_methods(name, dtype):
    x = data(dtype, (4, 7))
    if np.dtype(dtype).kind in "iu" and name in ("power", "floor_divide", "remainder",
                                                 "divide", "lcm"):
        x = (np.abs(x) % 3 + 1).astype(dtype)
    kw = {"rtol": 1e-5, "atol": 1e-6}  # float loops (also of int inputs); ints stay exact
    nonseq = name in ("arctan2", "power") and np.dtype(dtype).kind in "fiuc"
    with np.errstate(all="ignore"):
        for axis in (0, 1, None):
            if axis == 1 and nonseq:
                # NumPy's vectorised loops reduce a contiguous row of these in their own
                # order, not left to right; we reduce left to right (checked on axis 0)
                continue
            compare(lambda xp, a: getattr(xp, name).reduce(a, axis=axis), x, **kw)
        compare(lambda xp, a: getattr(xp, name).accumulate(a, axis=1), x, **kw)
        compare(lambda xp, a: getattr(xp, name).accumulate(a), x, **kw)
        if not nonseq:
            compare(lambda xp, a: getattr(xp, name).reduceat(a, [0, 3, 1, 6], axis=1), x, **kw)
        compare(lambda xp, a: getattr(xp, name).reduceat(a, [0, 2, 1, 3], axis=0), x, **kw)
        compare(lambda xp, a: getattr(xp, name).reduce(a, axis=0, keepdims=True), x, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_scans(dtype, axis):
    x = data(dtype, (7, 300))
    compare(lambda xp, a: xp.cumsum(a, axis=axis), x, **tol(dtype, "scan"))
    y = (x * 0 + 1).astype(dtype) if np.dtype(dtype).kind != "b" else x
    if np.dtype(dtype).kind in "fc":
        y = (1 + 0.001 * x).astype(dtype)
    compare(lambda xp, a: xp.cumprod(a, axis=axis), y, **tol(dtype, "scan"))


def test_scan_layouts_and_variants():
    x = data("d", (3000,))
    compare(lambda xp, a: xp.cumsum(a), x, rtol=1e-10, atol=1e-10)
    compare(lambda xp, a: xp.cumsum(a[::-3]), x, rtol=1e-10, atol=1e-10)
    m = data("f", (40, 50))
    compare(lambda xp, a: xp.cumsum(a.T, axis=1), m, **tol("f"))
    compare(lambda xp, a: xp.cumsum(a, axis=0), m, **tol("f"))
    compare(lambda xp, a: xp.cumulative_sum(a, axis=1, include_initial=True), m, **tol("f"))
    compare(lambda xp, a: xp.cumulative_prod(a[0, :5]), m, **tol("f"))
    compare(lambda xp, a: xp.cumulative_sum(a), m)  # ValueError: axis required
    n = m.copy()
    n[3, 4] = np.nan
    compare(lambda xp, a: xp.nancumsum(a, axis=1), n, **tol("f"))
    compare(lambda xp, a: xp.nancumprod(a[:, :3], axis=0), n, **tol("f"))
    compare(lambda xp, a: xp.cumsum(a), np.zeros(0))
    compare(lambda xp, a: xp.cumsum(a), np.array(3.0))

    def out(xp, a):
        o = xp.zeros((40, 50))
        xp.cumsum(a, axis=1, out=o)
        return o
    compare(out, m, rtol=1e-5, atol=1e-5)


def test_large_float_sum_accuracy():
    """A tree is at least as accurate as NumPy's pairwise summation."""
    x = rng.random(200_003).astype(np.float32)
    exact = np.sum(x.astype(np.float64))
    got = float(cp.sum(cp.asarray(x)))
    assert abs(got - exact) <= 1e-5 * exact


@pytest.mark.parametrize("where", ["host", "device"])
def test_full_reductions_are_0d_arrays_on_the_device_and_scalars_on_the_host(where):
    from cupynum._backends import placement
    from cupynum.testing import place

    if placement.MODE == "random":
        pytest.skip("operands move at random between ops")
    a = cp.asarray(np.arange(10.0))
    place(a, where)  # (no effect on the host backend: every array is on the host)
    s = a.sum()
    if cp.placement(a) == "host":  # NumPy's scalar, as NumPy gives (docs/guide/placement.md)
        assert type(s) is np.float64 and type(a.argmax()) is np.intp
        assert type(cp.max(a)) is np.float64 and type(a.mean()) is np.float64
        out = cp.zeros(())
        assert cp.sum(a, out=out) is out and a.sum(None, None, out) is out
    else:
        assert isinstance(s, cp.ndarray) and s.shape == ()
    assert float(s) == 45.0 and f"{s:.1f}" == "45.0" and s == 45
    assert int(a.argmax()) == 9 and bool(a.any())
    assert isinstance(a.sum(axis=0, keepdims=True), cp.ndarray)


def test_differences_and_comparisons():
    x = data("d", (6, 7))
    for n in (1, 2):
        for axis in (0, -1):
            compare(lambda xp, a: xp.diff(a, n=n, axis=axis), x)
    compare(lambda xp, a: xp.diff(a, prepend=0.0, append=a[:, :1]), x)
    compare(lambda xp, a: xp.diff(a > 0), x)
    compare(lambda xp, a: xp.diff(a, n=-1), x)
    compare(lambda xp, a: xp.ediff1d(a), x)
    compare(lambda xp, a: xp.ediff1d(a, to_begin=[-1.0], to_end=[5.0, 6.0]), x)
    compare(lambda xp, a: xp.trapezoid(a), x, rtol=1e-12)
    compare(lambda xp, a: xp.trapezoid(a, dx=0.5, axis=0), x, rtol=1e-12)
    compare(lambda xp, a: xp.trapezoid(a, x=xp.arange(7.0) ** 2), x, rtol=1e-12)
    compare(lambda xp, a: xp.allclose(a, a + 1e-9), x)
    compare(lambda xp, a: xp.allclose(a, a + 1), x)
    compare(lambda xp, a: xp.array_equal(a, a.copy()), x)
    compare(lambda xp, a: xp.array_equal(a, a[:2]), x)
    y = x.copy()
    y[0, 0] = np.nan
    compare(lambda xp, a: xp.array_equal(a, a, equal_nan=True), y)
    compare(lambda xp, a: xp.array_equal(a, a), y)
    compare(lambda xp, a: xp.array_equiv(a[:1], a[:1].repeat(3, 0)), x)
    compare(lambda xp, a: xp.array_equiv(a, a[:, :2]), x)


def test_ndarray_methods_are_native():
    import inspect

    import cupynum._api.reductions as r

    for name in ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "cumsum",
                 "cumprod", "ptp"):
        # (the public ones return NumPy scalars for host arrays: unwrapped, the same)
        assert inspect.unwrap(getattr(cp, name)) is getattr(r, name)
    assert not getattr(cp.mean, "__cupynum_fallback__", False)


@pytest.mark.parametrize("shape, axis", [((1000,), None), ((64, 70), 1), ((70, 64), 0),
                                         ((3, 4, 5, 6, 7), (0, 2, 4)),
                                         ((2, 3, 2, 3, 2, 3, 2, 3, 2, 3), (0, 2, 4, 6, 8)),
                                         ((2, 3, 2, 3, 2, 3, 2, 3, 2, 3), (1, 3, 5, 7, 9))])
def test_many_dims(shape, axis):
    x = data("l", shape)
    compare(lambda xp, a: xp.sum(a, axis=axis), x)
    compare(lambda xp, a: xp.max(a, axis=axis), x)
    if not isinstance(axis, tuple):
        compare(lambda xp, a: xp.argmax(a, axis=axis), x)


def test_repeated_axis_calls_take_the_cached_path():
    """Calls with only ``axis`` and ``keepdims`` are cached per (ufunc, dtype, shape, axis,
    keepdims) after their first call: the repeats give NumPy's values, shapes and flags,
    fresh arrays each time, and NumPy's errors for what the cache must not accept."""
    # small values: no partial product overflows in any order (inf * 0 would be NaN)
    h = ((np.arange(60) % 7 - 3) * 0.5).astype(np.float32).reshape(4, 15)
    x = cp.asarray(h)
    for _ in range(3):
        for axis, kd in ((1, True), (0, True), (-1, False), (None, True), (None, False)):
            for name in ("sum", "max", "min", "prod"):
                got = getattr(x, name)(axis=axis, keepdims=kd)
                want = getattr(h, name)(axis=axis, keepdims=kd)
                assert got.shape == want.shape and got.dtype == want.dtype
                assert got.flags.c_contiguous == want.flags.c_contiguous
                assert got.flags.f_contiguous == want.flags.f_contiguous
                if name in ("max", "min"):
                    np.testing.assert_array_equal(cp.asnumpy(got), want)
                else:  # float32 sums and products of 15 terms: another order than NumPy's
                    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=2e-6, atol=0)
    first = x.sum(axis=1, keepdims=True)
    second = x.sum(axis=1, keepdims=True)
    second[...] = 0  # a new array each call
    np.testing.assert_array_equal(cp.asnumpy(first), h.sum(axis=1, keepdims=True))
    for bad in (1.0, 2, np.float64(1)):  # after axis=1's entry exists
        compare(lambda xp, a, bad=bad: a.sum(axis=bad, keepdims=True), h)
    compare(lambda xp, a: xp.add.reduce(a, axis=[1]), h)  # a list: NumPy's own answer
