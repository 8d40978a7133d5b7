"""The keyword-free general ufunc path (``ufunc._plain_call``): non-contiguous arrays,
broadcasting and Python scalars, with NumPy's resolution cached per operand kinds.

Every case runs twice, so the second call reads the cached plan (and a cached failure
must raise NumPy's error again)."""
import sys
import warnings

import numpy as np
import pytest

import cupynum as cp

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]
SCALARS = [True, 3, -1, 300, 2**70, 2.5, 1e300, 1 - 2j]
OPS = ["add", "subtract", "multiply", "true_divide", "less", "equal", "power", "maximum",
       "divmod", "bitwise_and"]


def strided(dtype, transpose=False):
    """A non-contiguous 2-D view (and its NumPy twin), F-contiguous when transposed."""
    base = (np.arange(48).reshape(6, 8) % 7 + 1).astype(dtype)
    view = base[::2, 1:6]
    dev = cp.asarray(base)[::2, 1:6]
    return (view.T, dev.T) if transpose else (view, dev)


def outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as e:  # the error itself must match NumPy's
            return e


def assert_same(expected, got, ulps=0):
    """Same error, or same dtype, shape and values; ``ulps``: float and complex values
    within that many units of their dtype's epsilon, relative (a transcendental's
    tolerance: the GPU's pow is not the C library's)."""
    if isinstance(expected, Exception):
        assert type(got) is type(expected), (expected, got)
        assert str(got) == str(expected)
        return
    assert not isinstance(got, Exception), got
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            assert_same(e, g, ulps)
        return
    host = np.asarray(got)
    assert host.dtype == expected.dtype
    assert host.shape == expected.shape
    if ulps and expected.dtype.kind in "fc":
        np.testing.assert_allclose(host, expected, rtol=ulps * np.finfo(expected.dtype).eps,
                                   atol=0)
    else:
        np.testing.assert_array_equal(host, expected)


def check_with_scalars(name, dtype, scalars):
    """``ufunc(view, s)`` and ``ufunc(s, view)`` for each scalar, each twice (the second
    call reads the cached plan), against NumPy."""
    view, dev = strided(dtype)
    nf, cf = getattr(np, name), getattr(cp, name)
    ulps = 4 if name == "power" else 0
    for s in scalars:
        for _ in range(2):
            assert_same(outcome(lambda: nf(view, s)), outcome(lambda: cf(dev, s)), ulps)
            assert_same(outcome(lambda: nf(s, view)), outcome(lambda: cf(s, dev)), ulps)
    return view, dev


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_array_and_python_scalar(name, dtype):
    check_with_scalars(name, dtype, SCALARS)


NUMPY_SCALARS = [np.bool_(True), np.int8(-3), np.uint8(200), np.int64(2**40), np.float16(0.5),
                 np.float32(2.5), np.float64(1e300), np.complex64(1 - 2j)]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_array_and_numpy_scalar(name, dtype, device_placement):
    """NumPy scalars are strong (NEP 50) and passed by value: the plan's kind for them is
    their dtype marked as a scalar, never the kind of an array of that dtype."""
    view, dev = check_with_scalars(name, dtype, NUMPY_SCALARS)
    for s in NUMPY_SCALARS:  # (the scalar's own operator: NumPy's __array_ufunc__ call)
        assert_same(outcome(lambda: s * view), outcome(lambda: s * dev))


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int8", "uint8"),
                                    ("float32", "int64"), ("bool", "complex64"),
                                    ("uint8", "float16")])
def test_strided_arrays(name, dtypes):
    (va, da), (vb, db) = strided(dtypes[0]), strided(dtypes[1], transpose=True)
    vb, db = vb.T, db.T  # same shape, other strides
    nf, cf = getattr(np, name), getattr(cp, name)
    for _ in range(2):
        assert_same(outcome(lambda: nf(va, vb)), outcome(lambda: cf(da, db)),
                    4 if name == "power" else 0)


def test_operators_on_slices_match_numpy():
    host = np.arange(100.0).reshape(10, 10)
    u = cp.asarray(host)
    for _ in range(2):
        expected = host[1:-1, 1:-1] + 0.2 * (host[2:, 1:-1] + host[:-2, 1:-1]
                                             - 4 * host[1:-1, 1:-1])
        got = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 4 * u[1:-1, 1:-1])
        np.testing.assert_array_equal(np.asarray(got), expected)
        np.testing.assert_array_equal(np.asarray(-u[::2]), -host[::2])
        np.testing.assert_array_equal(np.asarray(u[::3] ** 2), host[::3] ** 2)


def test_broadcasting_and_errors():
    a, da = strided("float64")  # (3, 5)
    col, dcol = a[:, :1], da[:, :1]
    row = np.arange(5.0)[::-1]
    drow = cp.asarray(np.arange(5.0))[::-1]
    for _ in range(2):
        assert_same(col + row, dcol + drow)
        assert_same(a * row, da * drow)
        assert_same(outcome(lambda: a + a[:2]), outcome(lambda: da + da[:2]))
        assert_same(outcome(lambda: np.add(a, a[:, :4])), outcome(lambda: cp.add(da, da[:, :4])))


def test_layout_of_results_follows_numpy():
    view = np.arange(12, dtype=np.float32).reshape(3, 4).T  # F-contiguous, not C
    dev = cp.asarray(view.T).T
    got = dev + dev
    expected = view + view
    assert got.flags.f_contiguous == expected.flags.f_contiguous
    assert got.flags.c_contiguous == expected.flags.c_contiguous
    np.testing.assert_array_equal(np.asarray(got), expected)
    half, dhalf = strided("float32")
    assert (dhalf + 1.5).flags.c_contiguous


def test_negative_integer_exponent_is_refused_each_time():
    view, dev = strided("int64")
    for _ in range(2):
        with pytest.raises(ValueError, match="negative integer powers"):
            dev ** -1
        with pytest.raises(ValueError, match="negative integer powers"):
            cp.power(dev, -dev)
    np.testing.assert_array_equal(np.asarray(dev ** 2), view ** 2)


def test_out_of_range_comparisons_go_to_numpy():
    view, dev = strided("uint8")
    for _ in range(2):
        assert_same(view < -1, dev < -1)
        assert_same(view == 2**70, dev == 2**70)
        assert_same(outcome(lambda: view + 300), outcome(lambda: dev + 300))
    for dtype in ("uint8", "int64", "float16", "float32", "float64", "complex64"):
        h = (np.arange(6) - 2).astype(dtype)
        d = cp.asarray(h)
        for s in (2.5, -0.5, 1e300, -1e300, float("nan"), float("inf"), True, 1 + 0j):
            for name in ("less", "equal", "greater_equal", "not_equal"):
                nf, cf = getattr(np, name), getattr(cp, name)
                assert_same(outcome(lambda: nf(h, s)), outcome(lambda: cf(d, s)))
                assert_same(outcome(lambda: nf(s, h)), outcome(lambda: cf(s, d)))


def test_strided_call_makes_no_numpy_calls_after_warm_up(device_placement):
    u = cp.asarray(np.arange(100.0).reshape(10, 10))
    a, b = u[1:-1, 1:-1], u[2:, 1:-1]
    cases = [lambda: a + b, lambda: 0.2 * a, lambda: a - 4, lambda: -a, lambda: cp.add(a, b),
             lambda: np.float64(0.2) * a, lambda: a < np.int64(3)]
    for case in cases:
        case()  # warm-up: resolves the loop once
        called = []

        def hook(frame, event, arg):
            if event == "call":
                called.append(frame.f_code.co_name)
            elif event == "c_call":
                called.append(getattr(arg, "__name__", ""))

        keep = []
        sys.setprofile(hook)
        try:
            keep.append(case())
        finally:
            sys.setprofile(None)
        for name in ("resolve_dtypes", "broadcast_shapes", "_broadcast_shape", "errstate"):
            assert name not in called, (name, called)


@pytest.mark.skipif(cp._backends.get().side != "device", reason="needs a device backend")
def test_lines_of_any_length_share_one_launcher(device_placement, monkeypatch):
    """One-dimensional results (two elements or more) take the launcher of their layout
    whatever their length (``any_length``): a loop over shrinking columns plans once."""
    h = np.arange(400.0).reshape(20, 20) + 1
    u = cp.asarray(h)
    for uf in (cp.subtract, cp.true_divide):
        monkeypatch.setattr(uf, "_layouts", {})
    for i in range(18):  # a column minus a column, then over an element (a broadcast)
        got = (u[i + 1:, i] - u[i + 1:, i + 1]) / u[i, i]
        np.testing.assert_array_equal(got.get(), (h[i + 1:, i] - h[i + 1:, i + 1]) / h[i, i])
    for uf in (cp.subtract, cp.true_divide):
        assert [k[1] for k in uf._layouts] == ["line"]


def test_fast_scalar_power_as_numpy():
    """``x ** 2``, ``x ** -1`` and ``x ** 0.5`` of float and complex arrays are square,
    reciprocal and sqrt, as NumPy's operator makes them (exact; sqrt keeps -0.0)."""
    host = np.array([-0.0, 0.0, 2.0, 3.0, -np.inf, np.nan, 1e200])
    for dt in ("float16", "float32", "float64", "complex64", "complex128"):
        h = host.astype(dt)
        for e in (2, -1, 0.5):
            with np.errstate(all="ignore"):
                expected = h ** e
                got = cp.asarray(h) ** e
                assert_same(expected, got)
                if expected.dtype.kind == "f":  # zeros keep their sign (a NaN's is arbitrary)
                    num = ~np.isnan(expected)
                    assert np.array_equal(np.signbit(np.asarray(got))[num],
                                          np.signbit(expected)[num])
                x = cp.asarray(h)
                x **= e
                assert_same(expected, x)
    # integers keep the power ufunc (no fast path): -1 raises as NumPy's power does
    with pytest.raises(ValueError, match="negative integer powers"):
        cp.arange(1, 4) ** -1
    np.testing.assert_array_equal(np.asarray(cp.arange(4) ** 2), np.arange(4) ** 2)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float32", "float64",
                                   "complex64"])
def test_inplace_operators_as_numpy(dtype):
    """``x op= y`` (the in-place hot path for contiguous operands of x's shape, the general
    path for the rest): NumPy's values and dtype in x itself, NumPy's errors for casts it
    refuses and Python scalars out of range, overlapping operands as NumPy computes them."""
    host = (np.arange(12) % 5).astype(dtype)
    others = [2, 2.5, True, 1 + 1j, 300, -1, host.copy(), host[::-1].copy()]
    for name in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                 "__iand__", "__ior__", "__imod__"):
        for other in others:
            for _ in range(2):  # the second call reads the cached record
                h, d = host.copy(), cp.asarray(host)
                o_dev = cp.asarray(other) if isinstance(other, np.ndarray) else other
                expected = outcome(lambda: getattr(h, name)(other))
                got = outcome(lambda: getattr(d, name)(o_dev))
                if isinstance(expected, Exception):
                    assert type(got) is type(expected), (name, other, expected, got)
                    continue
                assert got is d
                assert_same(h, d)
    h, d = host.copy(), cp.asarray(host)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h[1:] += h[:-1]  # overlapping views of one buffer: the general path
        d[1:] += d[:-1]
        assert_same(h, d)
        h += h
        d += d
    assert_same(h, d)
