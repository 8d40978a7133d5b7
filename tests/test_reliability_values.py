"""Issue 20, items 3, 4 and 15: answers that differed from NumPy's without an error.

Masked arrays and stride tricks through the fallback, fractional ``ddof``, NaN-aware
variance with too few values, empty FFT axes, float16 inverse real FFTs, random draws into
an ``out=``, memory orders, ``a.flat`` assignment, ``linalg.cond`` of singular matrices,
``matmul(axes=)``, ``take(out=)``, and fallback results that must come back as cupynum
arrays (also through returned callables and index-trick objects)."""
import numpy as np
import pytest

import cupynum as cp
from helpers import assert_same, compare

# --- item 3: masked arrays and stride tricks ---------------------------------------------


def test_masked_where_keeps_the_mask():
    compare(lambda xp, a: xp.ma.masked_where(a > 3, a).sum(), np.arange(6.0))


def test_masked_invalid_keeps_the_mask():
    compare(lambda xp, a: xp.ma.masked_invalid(a).mean(), np.array([1.0, np.nan, 2.0]))


def test_masked_array_comes_back_masked():
    m = cp.ma.masked_where(cp.arange(6.0) > 3, cp.arange(6.0))
    assert isinstance(m, np.ma.MaskedArray)
    assert m.mask.tolist() == [False] * 4 + [True] * 2


def test_as_strided_is_a_view():
    def fn(xp, a):
        v = xp.lib.stride_tricks.as_strided(a, shape=(3,), strides=(16,))
        v[0] = 99
        v[2] = -1
        return a
    compare(fn, np.arange(6.0))


def test_as_strided_overlapping_rows():
    def fn(xp, a):
        return xp.lib.stride_tricks.as_strided(a, shape=(4, 3), strides=(8, 8)).sum(axis=1)
    compare(fn, np.arange(6.0))


def test_as_strided_defaults_and_mismatch():
    compare(lambda xp, a: xp.lib.stride_tricks.as_strided(a), np.arange(6.0).reshape(2, 3))
    compare(lambda xp, a: xp.lib.stride_tricks.as_strided(a, shape=(2,), strides=(8, 8)),
            np.arange(6.0))


@pytest.mark.parametrize("window, axis", [((2, 2), None), (3, 1), ((2, 2), (1, 1)),
                                          ((1, 4), (0, 1)), (5, 1), (-1, 0), ((2,), None)])
def test_sliding_window_view(window, axis):
    def fn(xp, a):
        w = xp.lib.stride_tricks.sliding_window_view(a, window, axis=axis)
        return w, w.strides
    compare(fn, np.arange(12.0).reshape(3, 4))


def test_sliding_window_view_shares_memory():
    a = cp.arange(6.0)
    w = cp.lib.stride_tricks.sliding_window_view(a, 3)
    assert w.strides == (8, 8)
    a[2] = 50  # later writes to the source show through the windows
    assert_same(w[:, 0], np.array([0.0, 1.0, 50.0, 3.0]))


# --- item 4: values --------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("ddof", [2.5, 0.5, 1.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_fractional_ddof(fn, ddof, dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    compare(lambda xp, a: getattr(xp, fn)(a, ddof=ddof), a, rtol=1e-6)
    compare(lambda xp, a: getattr(xp, fn)(a, axis=0, ddof=ddof), a, rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fn", ["nanvar", "nanstd"])
def test_nan_variance_with_too_few_values_is_nan(fn):
    compare(lambda xp, a: getattr(xp, fn)(a, ddof=2), np.array([1.0, 2.0]))
    compare(lambda xp, a: getattr(xp, fn)(a, ddof=3), np.array([1.0, np.nan, 2.0]))
    compare(lambda xp, a: getattr(xp, fn)(a, axis=1, ddof=2),
            np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 4.0]]), rtol=1e-12)
    compare(lambda xp, a: getattr(xp, fn)(a, ddof=0.5), np.array([1.0, 2.0, 4.0]), rtol=1e-12)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "fft2", "ifft2"])
@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.complex64])
def test_fft_over_no_axes_returns_the_input(name, dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    compare(lambda xp, a: getattr(xp.fft, name)(a, axes=()), a)
    x = cp.asarray(a)
    assert getattr(cp.fft, name)(x, axes=[]) is x  # NumPy returns its input itself


@pytest.mark.parametrize("name", ["rfftn", "irfftn", "rfft2", "irfft2"])
def test_real_fft_over_no_axes_raises_as_numpy(name):
    compare(lambda xp, a: getattr(xp.fft, name)(a, axes=()), np.arange(6.0).reshape(2, 3))


def _out_draw(xp, method, out_dtype, size=None, dtype=np.float64, out_shape=(3,)):
    g = xp.random.default_rng(0)
    out = xp.zeros(out_shape, out_dtype)
    kwargs = {"dtype": dtype, "out": out} if size is None else {"dtype": dtype, "out": out,
                                                                "size": size}
    args = (2.0,) if method == "standard_gamma" else ()
    res = getattr(g, method)(*args, **kwargs)
    return res is out, res.shape, res.dtype


@pytest.mark.parametrize("method", ["random", "standard_normal", "standard_exponential",
                                    "standard_gamma"])
@pytest.mark.parametrize("out_dtype, dtype", [(np.int64, np.float64), (np.float32, np.float64),
                                              (np.float64, np.float32), (np.float32, np.float32)])
def test_random_out_of_another_dtype_raises(method, out_dtype, dtype):
    compare(lambda xp: _out_draw(xp, method, out_dtype, dtype=dtype))


@pytest.mark.parametrize("method", ["random", "standard_normal", "standard_gamma"])
@pytest.mark.parametrize("size", [4, (1, 3), 3, (3,)])
def test_random_size_with_out_must_match(method, size):
    compare(lambda xp: _out_draw(xp, method, np.float64, size=size))


def test_random_out_layout():
    compare(lambda xp: xp.random.default_rng(0).random(out=xp.zeros((3, 2)).T).shape)
    compare(lambda xp: xp.random.default_rng(0).random(out=xp.zeros(6)[::2]))


# --- item 15: more differences ---------------------------------------------------------------


@pytest.mark.parametrize("name, kwargs", [("irfft", {}), ("irfft", {"norm": "ortho"}),
                                          ("irfft", {"n": 7}), ("irfftn", {}),
                                          ("irfftn", {"axes": (1,)}), ("irfft2", {}),
                                          ("irfftn", {"axes": (0, 1)}), ("hfft", {})])
def test_inverse_real_fft_of_float16(name, kwargs):
    a = np.linspace(-1, 1, 10).reshape(2, 5).astype(np.float16)
    compare(lambda xp, a: getattr(xp.fft, name)(a, **kwargs), a, rtol=2e-3, atol=2e-3)


def test_lower_case_order():
    for order in "cf":
        compare(lambda xp: xp.ones((2, 3), order=order).strides)
        compare(lambda xp: xp.zeros((2, 3), order=order).strides)
    for order in "cfak":
        compare(lambda xp, a: a.astype(np.float32, order=order).strides,
                np.arange(6.0).reshape(2, 3))
        compare(lambda xp, a: a.copy(order=order).strides, np.arange(6.0).reshape(2, 3).T)
        compare(lambda xp, a: xp.empty_like(a, order=order).strides, np.zeros((2, 3)).T)
        compare(lambda xp, a: xp.asarray(a, order=order).strides, np.arange(6.0).reshape(2, 3))
        compare(lambda xp: xp.ndarray((2, 3), order=order).strides)
    compare(lambda xp, a: a.reshape(3, 2, order="f"), np.arange(6.0).reshape(2, 3))
    compare(lambda xp, a: xp.reshape(a, (3, 2), order="f"), np.arange(6.0).reshape(2, 3))
    compare(lambda xp, a: xp.ravel(a, order="f"), np.arange(6.0).reshape(2, 3))
    compare(lambda xp: xp.eye(3, order="f").strides)
    compare(lambda xp, a: xp.full_like(a, 1, order="f").strides, np.zeros((2, 3)))
    compare(lambda xp, a: a.ravel(order="a"), np.arange(6.0).reshape(2, 3).T)


@pytest.mark.parametrize("order", ["x", "CC", "", "cf"])
def test_bad_order_raises(order):
    compare(lambda xp: xp.zeros(2, order=order))
    compare(lambda xp, a: a.astype(np.float32, order=order), np.arange(3.0))
    compare(lambda xp, a: a.copy(order=order), np.arange(3.0))
    compare(lambda xp: xp.ndarray((2,), order=order))
    compare(lambda xp, a: xp.ndarray((2,), strides=(8,), buffer=a, order=order), np.zeros(2))


@pytest.mark.parametrize("view", [lambda a: a.transpose(1, 0, 2), lambda a: a.transpose(2, 0, 1),
                                  lambda a: a[:, ::-1], lambda a: a.transpose(1, 0, 2)[::2],
                                  lambda a: a.swapaxes(0, 2)[:, 1:]])
def test_astype_order_k_keeps_the_layout(view):
    a = np.arange(24.0).reshape(2, 3, 4)
    compare(lambda xp, a: (lambda r: (r, r.strides))(view(a).astype(np.float32)), a)
    compare(lambda xp, a: (lambda r: (r, r.strides))(view(a).copy(order="K")), a)
    compare(lambda xp, a: (lambda r: (r, r.strides))(xp.array(view(a), order="K")), a)


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a.transpose(1, 0, 2),
                                  lambda a: a[:, ::-1], lambda a: a[0, :, 0],
                                  lambda a: a[::-1, :, ::2].transpose(2, 0, 1)])
@pytest.mark.parametrize("order", ["K", "k", "a", "f"])
def test_ravel_and_flatten_in_memory_order(view, order):
    a = np.arange(24.0).reshape(2, 3, 4)
    compare(lambda xp, a: view(a).ravel(order=order), a)
    compare(lambda xp, a: view(a).flatten(order=order), a)


def test_index_tricks_give_cupynum_arrays():
    compare(lambda xp: xp.mgrid[0:3, 0:2])
    compare(lambda xp: xp.mgrid[0:1:5j])
    compare(lambda xp: xp.ogrid[0:3, 0:2])
    compare(lambda xp, a: xp.r_[a, 0, a], np.arange(3))
    compare(lambda xp, a: xp.c_[a, a], np.arange(3))
    assert cp.s_[1:2] == np.s_[1:2]
    assert len(cp.r_) == len(np.r_)


def test_vectorize_gives_cupynum_arrays():
    compare(lambda xp, a: xp.vectorize(lambda x: x + 1)(a), np.arange(3))
    compare(lambda xp, a: xp.vectorize(lambda x, y: (x * y, x - y))(a, 2.0), np.arange(3))
    compare(lambda xp, a: xp.vectorize(lambda v: v.sum(), signature="(n)->()")(a),
            np.arange(6.0).reshape(2, 3))
    assert isinstance(cp.vectorize(abs), np.vectorize)

    @cp.vectorize
    def twice(x):
        return 2 * x

    assert isinstance(twice(cp.arange(3)), cp.ndarray)


def test_callables_returned_by_fallbacks_give_cupynum_arrays(monkeypatch):
    def make_scaler(k):
        return lambda a: np.asarray(a) * k

    monkeypatch.setattr(np, "_cupynum_test_make_scaler", make_scaler, raising=False)
    scale = cp._cupynum_test_make_scaler(3)
    res = scale(cp.arange(3))
    assert isinstance(res, cp.ndarray)
    assert_same(res, np.arange(3) * 3)


def _flat_set(key, value, view=lambda a: a):
    def fn(xp, a):
        v = view(a)
        v.flat[key] = value
        return a
    return fn


@pytest.mark.parametrize("key, value", [
    (slice(None), [1.0, 2.0, 3.0]), (slice(None), [1.0, 2.0, 3.0, 4.0]),
    (slice(1, None), [[7.0], [8.0]]), (slice(None, 2), [1.0, 2.0, 3.0]),
    ([0, 2, 4, 5], [1.0, 2.0]), ([[0, 1], [2, 3]], [1.0, 2.0, 3.0, 4.0, 5.0]),
    (Ellipsis, [1.0, 2.0]), (3, 5.0), (slice(None), []), (slice(0, 0), []), (3, [7.0, 8.0]),
    ((), [1.0, 2.0]), (slice(None), 4.0)])
def test_flat_assignment_repeats_the_value(key, value):
    compare(_flat_set(key, value), np.zeros((2, 3)))
    compare(_flat_set(key, value, lambda a: a.T), np.zeros((2, 3)))


def test_flat_assignment_with_a_mask_and_an_array():
    def fn(xp, a):
        a.flat[a.flat[:] > 1] = xp.asarray([10, 20])
        return a
    compare(fn, np.arange(6).reshape(2, 3))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("p", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"])
def test_cond_of_singular_matrices_is_inf(p):
    """A singular matrix's condition number is inf (never LinAlgError).  Through the
    singular values (p None, +-2) NumPy's own answer depends on how its SVD rounds
    the zero singular value (inf, or ~1e16): there any value past 1/eps is right."""
    by_svd = p in (None, 2, -2)
    for a in (np.ones((2, 2)), np.zeros((3, 3)), np.stack([np.eye(2), np.ones((2, 2))]),
              np.ones((2, 2), np.float32)):
        if not by_svd:
            compare(lambda xp, a: xp.linalg.cond(a, p), a, rtol=1e-12)
            continue
        want = np.asarray(np.linalg.cond(a, p))
        got = cp.asnumpy(cp.linalg.cond(cp.asarray(a), p))
        assert got.dtype == want.dtype and got.shape == want.shape
        huge = 1 / np.finfo(want.dtype).eps
        np.testing.assert_array_equal(got >= huge, want >= huge)
        # (p=-2 gives s_min / s_max: a singular matrix's is 0 to within the SVD's rounding)
        tiny = 8 * np.finfo(want.dtype).eps
        np.testing.assert_allclose(got[want < huge], want[want < huge], rtol=1e-6, atol=tiny)
    compare(lambda xp, a: xp.linalg.cond(a, p), np.array([[1.0, np.nan], [0.0, 1.0]]))


@pytest.mark.parametrize("axes", [[(0, 1), (0, 1), (0, 1)], [(-2, -1), (-2, -1), (-2, -1)],
                                  [(1, 0), (0, 1), (1, 2)], [(0, 2), (1, 2), (2, 0)]])
def test_matmul_with_axes(axes):
    a = np.arange(30.0).reshape(3, 2, 5)
    b = np.arange(30.0).reshape(2, 3, 5)
    compare(lambda xp, a, b: xp.matmul(a, b, axes=axes), a, b, rtol=1e-12)


def test_matmul_axes_into_out_and_errors():
    a, b = np.arange(30.0).reshape(3, 2, 5), np.arange(30.0).reshape(2, 3, 5)

    def into(xp, a, b):
        out = xp.zeros((5, 3, 3))
        res = xp.matmul(a, b, axes=[(0, 1), (0, 1), (-2, -1)], out=out)
        return res is out, out
    compare(into, a, b)
    m, n = np.ones((3, 2)), np.ones((2, 3))
    for axes in ([(0, 1), (0, 1)], [(0, 5), (0, 1), (0, 1)], [0, (0, 1), (0, 1)],
                 [0, (0, 1), 0]):
        compare(lambda xp, m, n: xp.matmul(m, n, axes=axes), m, n)
    compare(lambda xp, v, n: xp.matmul(v, n, axes=[0, (0, 1), 0]), np.ones(3), n)


@pytest.mark.parametrize("src, out", [("f8", "c16"), ("i8", "f8"), ("f8", "i8"), ("f4", "f8"),
                                      ("f8", "f4"), ("i4", "i8"), ("?", "i1"), ("f8", "f8")])
@pytest.mark.parametrize("mode", ["raise", "clip", "wrap"])
def test_take_out_dtype(src, out, mode):
    def fn(xp, a):
        o = xp.zeros(2, out)
        res = xp.take(a, [0, 2], out=o, mode=mode)
        return res is o, o
    compare(fn, np.arange(3).astype(src))
