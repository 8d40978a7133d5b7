"""cross, unwrap, packbits/unpackbits, apply_along_axis/apply_over_axes/piecewise, the poly
family (poly, roots, polyadd/sub/mul/div, polyder/polyint, polyfit), require, iterable,
binary_repr/base_repr and the printing functions against NumPy: values, dtype, shape and
error types.  Every test runs with CUPYNUM_FALLBACK=error, so a host fallback would fail it."""
import warnings

import numpy as np
import pytest

import cupynum as cp
from cupynum import _config
from helpers import compare

NAMES = ["cross", "unwrap", "packbits", "unpackbits", "apply_along_axis", "apply_over_axes",
         "piecewise", "poly", "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv",
         "polyfit", "roots", "require", "iterable", "binary_repr", "base_repr", "array2string",
         "array_repr", "array_str"]

rng = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fallbacks_raise(monkeypatch):
    monkeypatch.setattr(_config, "FALLBACK", "error")


@pytest.mark.parametrize("name", NAMES)
def test_native_not_fallback(name):
    assert name in vars(cp)
    assert not getattr(getattr(cp, name), "__cupynum_fallback__", False)


def test_no_fallback_warning(monkeypatch):
    monkeypatch.setattr(_config, "FALLBACK", "warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error", cp.FallbackWarning)
        cp.cross(cp.arange(3.0), cp.ones(3))
        cp.unwrap(cp.arange(5.0) * 2)
        cp.unpackbits(cp.packbits(cp.arange(10) % 3))
        cp.polyfit(cp.arange(5.0), cp.arange(5.0) ** 2, 2)
        cp.roots(cp.asarray([1.0, -3, 2]))
        cp.array_repr(cp.arange(3))


# --- cross -----------------------------------------------------------------------------------

CROSS_SHAPES = [((3,), (3,)), ((4, 3), (3,)), ((2, 1, 3), (5, 3)), ((0, 3), (3,)),
                ((3,), (2,)), ((2,), (3,)), ((2,), (2,)), ((4, 2), (4, 2)), ((3, 2), (3,))]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("sa,sb", CROSS_SHAPES, ids=str)
@pytest.mark.parametrize("dtypes", [("f8", "f8"), ("i4", "f4"), ("i8", "i8"), ("c16", "f8"),
                                    ("u1", "i2")], ids=str)
def test_cross(sa, sb, dtypes):
    a = (rng.normal(size=sa) * 10).astype(dtypes[0])
    b = (rng.normal(size=sb) * 10).astype(dtypes[1])
    compare(lambda m, x, y: m.cross(x, y), a, b)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("kw", [dict(axisa=0, axisb=0), dict(axisc=0), dict(axis=0),
                                dict(axisa=0, axisb=1, axisc=1), dict(axisa=-2, axisb=0)])
def test_cross_axes(kw):
    a = rng.normal(size=(3, 4))
    b = rng.normal(size=(3, 4)) if "axisb" not in kw or kw["axisb"] != 1 else rng.normal(
        size=(4, 3))
    compare(lambda m, x, y: m.cross(x, y, **kw), a, b)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cross_errors_and_warning():
    compare(lambda m: m.cross(m.ones(4), m.ones(3)))  # ValueError: dimension must be 2 or 3
    compare(lambda m: m.cross(m.ones(3), m.ones((2, 4))))
    compare(lambda m: m.cross(m.ones(()), m.ones(3)))  # zero dimension
    compare(lambda m: m.cross(m.ones(3), m.ones(3), axisa=1))  # AxisError
    compare(lambda m: m.cross(m.ones(3), m.ones(3), axisc=2))
    compare(lambda m: m.cross(m.ones((2, 3)), m.ones((4, 3))))  # broadcast error
    compare(lambda m: m.cross(m.ones(3, bool), m.ones(3, bool)))  # bool subtract: TypeError
    compare(lambda m: m.cross([1, 2, 3], [4, 5, 6]))
    # 2-vectors: deprecated in NumPy 2.0 (a warning), refused by later NumPy (ValueError)
    from cupynum._api.products import _numpy_cross_takes_2d

    if _numpy_cross_takes_2d():
        with pytest.warns(DeprecationWarning):
            cp.cross(cp.ones(2), cp.ones(3))
    else:
        with pytest.raises(ValueError, match="3-dimensional vectors"):
            cp.cross(cp.ones(2), cp.ones(3))


# --- unwrap ----------------------------------------------------------------------------------

def _phase():
    p = np.linspace(0, np.pi, num=5)
    p[3:] += np.pi
    return p


@pytest.mark.parametrize("p,kw", [
    (_phase(), {}),
    (np.array([0, 1, 2, -1, 0]), dict(period=4)),
    (np.array([1, 2, 3, 4, 5, 6, 1, 2, 3]), dict(period=6)),
    (np.array([2, 3, 4, 5, 2, 3, 4, 5]), dict(period=4)),
    (np.array([0, 5, 1, 7, 2], np.int16), dict(period=5)),  # odd integer period
    (np.mod(np.linspace(0, 720, 19), 360) - 180, dict(period=360)),
    (rng.normal(0, 4, (3, 7)).astype(np.float32), dict(axis=0)),
    (rng.normal(0, 4, (3, 7)), dict(discont=5.0, axis=1)),
    (rng.normal(0, 4, (2, 3, 5)), dict(axis=-2, period=3.0)),
    (np.array([0.0, np.pi, 2 * np.pi, 0.0]), {}),  # differences exactly period/2
    (np.array([1.5]), {}), (np.zeros((0, 3)), dict(axis=0)),
], ids=lambda v: v.dtype.char if isinstance(v, np.ndarray) else str(v))
def test_unwrap(p, kw):
    compare(lambda m, x: m.unwrap(x, **kw), p)


def test_unwrap_errors_and_lists():
    compare(lambda m: m.unwrap([0.0, 4.0, 8.0]))
    compare(lambda m, x: m.unwrap(x, axis=2), np.ones((2, 3)))
    compare(lambda m, x: m.unwrap(x), np.array(1.0))  # diff of a 0-d array


# --- packbits / unpackbits -------------------------------------------------------------------

PACK_INPUTS = [rng.integers(-2, 3, (13,)), rng.integers(0, 2, (3, 10, 4)).astype(bool),
               rng.integers(0, 3, (16, 3)).astype(np.uint16), np.zeros((0,), np.int8),
               np.zeros((2, 0), np.int32), np.array(5), np.array([-1, 2, 0], np.int64)]


@pytest.mark.parametrize("a", PACK_INPUTS, ids=lambda a: f"{a.dtype.char}{a.shape}")
@pytest.mark.parametrize("axis", [None, 0, -1, 1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits(a, axis, bitorder):
    compare(lambda m, x: m.packbits(x, axis=axis, bitorder=bitorder), a)


UNPACK_INPUTS = [rng.integers(0, 256, (5,)).astype(np.uint8),
                 rng.integers(0, 256, (2, 3, 4)).astype(np.uint8), np.array(173, np.uint8),
                 rng.integers(0, 256, (3, 1)).astype(np.uint8)[::2]]


@pytest.mark.parametrize("a", UNPACK_INPUTS, ids=lambda a: f"{a.shape}")
@pytest.mark.parametrize("axis", [None, 0, -1, 2])
@pytest.mark.parametrize("count", [None, 0, 3, 8, -3, 21, -8, -1000])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_unpackbits(a, axis, count, bitorder):
    compare(lambda m, x: m.unpackbits(x, axis=axis, count=count, bitorder=bitorder), a)


def test_unpackbits_empty():
    # (NumPy leaves the padding of an empty input uninitialised for count > 0; only count
    # <= 0 is comparable there.)
    compare(lambda m, x: m.unpackbits(x), np.zeros(0, np.uint8))
    compare(lambda m, x: m.unpackbits(x, axis=1, count=0), np.zeros((2, 0), np.uint8))
    out = cp.unpackbits(cp.zeros(0, np.uint8), count=5)
    assert out.shape == (5,) and out.dtype == np.uint8 and not out.any()


def test_packbits_roundtrip_and_lists():
    compare(lambda m: m.packbits([1, 0, 1]))
    compare(lambda m: m.unpackbits(m.packbits([[1, 0, 1, 1, 0, 0, 0, 1, 1]], axis=1), axis=1))
    compare(lambda m: m.packbits([1, 0, 1], bitorder="littlest"))  # NumPy reads the prefix


@pytest.mark.parametrize("call", [
    lambda m: m.packbits(m.ones(3)),  # TypeError: float input
    lambda m: m.packbits(m.ones(3, int), bitorder="middle"),  # ValueError
    lambda m: m.packbits(m.ones(3, int), bitorder=None),  # TypeError
    lambda m: m.packbits(m.ones((2, 3), int), axis=2),  # AxisError
    lambda m: m.packbits(m.ones(3, int), axis=1.0),  # TypeError
    lambda m: m.unpackbits(m.ones(3, m.int8)),  # TypeError: not uint8
    lambda m: m.unpackbits(m.ones(3, m.uint8), count=-25),  # ValueError
    lambda m: m.unpackbits(m.ones(3, m.uint8), count=2.0),  # TypeError
    lambda m: m.unpackbits(m.ones(3, m.uint8), bitorder="x"),  # ValueError
])
def test_pack_errors(call):
    compare(call)


# --- apply_along_axis / apply_over_axes / piecewise ------------------------------------------

B = np.array([[8, 1, 7], [4, 3, 9], [5, 2, 6]])


@pytest.mark.parametrize("func", [lambda m, a: (a[0] + a[-1]) * 0.5, lambda m, a: m.sort(a),
                                  lambda m, a: m.diag(a), lambda m, a: a.sum(),
                                  lambda m, a: m.cumsum(a) > 5],
                         ids=["scalar", "sort", "diag", "sum", "bool"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis(func, axis):
    compare(lambda m, b: m.apply_along_axis(lambda a: func(m, a), axis, b), B)


def test_apply_along_axis_3d_args_and_errors():
    x = rng.normal(size=(2, 3, 4))
    compare(lambda m, a: m.apply_along_axis(lambda v, k: v * k, 1, a, 3.0), x)
    compare(lambda m, a: m.apply_along_axis(lambda v, k: m.outer(v, v)[:k], 2, a, k=2), x)
    compare(lambda m, a: m.apply_along_axis(lambda v: v.sum(), 0, a), np.ones((0, 3)))
    compare(lambda m, a: m.apply_along_axis(lambda v: v.sum(), 2, a), B)  # AxisError


@pytest.mark.parametrize("axes", [0, [0, 2], [-1], (1, 2)])
def test_apply_over_axes(axes):
    a = np.arange(24).reshape(2, 3, 4)
    compare(lambda m, x: m.apply_over_axes(m.sum, x, axes), a)
    compare(lambda m, x: m.apply_over_axes(lambda v, ax: m.cumsum(v, ax), x, axes), a)


def test_apply_over_axes_wrong_shape():
    compare(lambda m, x: m.apply_over_axes(lambda v, ax: v.sum(), x, [0, 1]), np.ones((2, 3, 4)))


X = np.linspace(-2.5, 2.5, 6)


@pytest.mark.parametrize("conds,funcs", [
    (lambda x: [x < 0, x >= 0], [-1, 1]),
    (lambda x: [x < 0, x >= 0], [lambda v: -v, lambda v: v]),
    (lambda x: x < 0, [lambda v: -v, 5]),  # one condition, one "otherwise"
    (lambda x: [x < -1, x > 1], [lambda v: -v, 5, lambda v: v * 10]),
    (lambda x: [x > 10], [lambda v: v]),  # selects nothing
    (lambda x: [x < 0], [lambda v: v, lambda v: v]),
])
def test_piecewise(conds, funcs):
    compare(lambda m, x: m.piecewise(x, conds(x), funcs), X)
    compare(lambda m, x: m.piecewise(x, conds(x), funcs), X.astype(np.int32))


def test_piecewise_scalar_args_and_errors():
    compare(lambda m: m.piecewise(-2, [-2 < 0, -2 >= 0], [lambda v: -v, lambda v: v]))
    compare(lambda m, x: m.piecewise(x, [x < 0], [lambda v, k: v * k], 3), X)
    compare(lambda m, x: m.piecewise(x, [x < 0], [lambda v, k: v * k], k=2), X)
    compare(lambda m, x: m.piecewise(x, [x < 0, x > 1, x > 2], [1, 2]), X)  # ValueError
    compare(lambda m, x: m.piecewise(x, [[True, False], [False, True]], [1, 2]),
            np.array([3.0, 4.0]))


# --- the poly family ---------------------------------------------------------------------------

@pytest.mark.parametrize("z", [np.array([1, 2, 3]), np.array([0.5, -1.25], np.float32),
                               np.array([1 + 1j, 1 - 1j]), np.array([1j, 2]), np.array([]),
                               np.array([[1, 2], [3, 4.0]]), np.array(2.0), np.array([True])],
                         ids=lambda z: f"{z.dtype.char}{z.shape}")
def test_poly(z):
    compare(lambda m, x: m.poly(x), z, rtol=1e-12 if z.ndim == 2 else None)


def test_poly_errors():
    compare(lambda m, x: m.poly(x), np.ones((2, 3)))
    compare(lambda m, x: m.poly(x), np.ones((0, 0)))


@pytest.mark.parametrize("p", [[1, -3, 2], [1, -3, 2, 0, 0], [0, 0, 1, 2, 1], [0, 0], [5],
                               [0, 3, 0], np.array([1, 0, 1], np.float32),
                               np.array([1, 1j, 2])], ids=str)
def test_roots(p):
    p = np.asarray(p)
    # eigenvalue order is unspecified: values compared sorted, dtype and shape as returned
    compare(lambda m, x: m.sort_complex(m.roots(x)), p, rtol=1e-6, atol=1e-6)
    got, expected = cp.roots(cp.asarray(p)), np.roots(p)
    assert got.dtype == expected.dtype and got.shape == expected.shape


def test_roots_errors():
    compare(lambda m, x: m.roots(x), np.ones((2, 2)))
    compare(lambda m: m.roots(3.0))


PAIRS = [(np.array([1, 2]), np.array([1, 2, 3.0])), (np.array([1, 2, 3]), np.array([1, 2])),
         (np.array([1.5], np.float32), np.array([2, 3], np.int16)),
         (np.array([0, 0, 1, 2]), np.array([1j, 2])), (np.array(3), np.array([1, 1]))]


@pytest.mark.parametrize("a,b", PAIRS, ids=lambda v: f"{v.dtype.char}{v.shape}")
@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul"])
def test_poly_arith(name, a, b):
    compare(lambda m, x, y: getattr(m, name)(x, y), a, b)
    compare(lambda m, x, y: getattr(m, name)(x, y), b, a)


def test_polymul_trim_and_errors():
    compare(lambda m, x, y: m.polymul(x, y), np.zeros(3), np.array([1.0, 2]))
    compare(lambda m, x, y: m.polymul(x, y), np.ones((2, 2)), np.array([1.0, 2]))
    compare(lambda m: m.polyadd([1, 2], [3.0]))


@pytest.mark.parametrize("u,v", [([3.0, 5, 2], [2.0, 1]), ([1, 2, 3], [1, 2, 3]),
                                 ([1, 0, -1], [1, -1]), ([1.0], [2, 3, 4]),
                                 (np.array([1, 2, 3], np.float32), np.array([1j, 1])),
                                 ([1, 2, 3, 4, 5, 6], [2, 0, 1])], ids=str)
def test_polydiv(u, v):
    compare(lambda m, a, b: m.polydiv(a, b), np.asarray(u), np.asarray(v))


@pytest.mark.parametrize("p", [np.array([1, 2, 3, 4]), np.array([1.5, -2, 0.5], np.float32),
                               np.array([1j, 2]), np.array([7]), np.array([])],
                         ids=lambda p: f"{p.dtype.char}{p.shape}")
@pytest.mark.parametrize("m_", [0, 1, 2, 5])
def test_polyder(p, m_):
    compare(lambda m, x: m.polyder(x, m_), p)


@pytest.mark.parametrize("p", [np.array([1, 2, 3]), np.array([1.5, -2], np.float32),
                               np.array([1j, 2]), np.array([4.0])],
                         ids=lambda p: f"{p.dtype.char}{p.shape}")
@pytest.mark.parametrize("m_,k", [(0, None), (1, None), (2, None), (3, [1, 2, 3]), (3, 5),
                                  (2, np.array([1, 2], np.int32)), (1, [2j])], ids=str)
def test_polyint(p, m_, k):
    compare(lambda m, x: m.polyint(x, m_, k), p)


def test_polyder_polyint_errors():
    compare(lambda m: m.polyder([1, 2], -1))
    compare(lambda m, x: m.polyder(x, 0), np.array(3))
    compare(lambda m: m.polyint([1, 2], -1))
    compare(lambda m: m.polyint([1, 2], 3, k=[1, 2]))


XF = np.linspace(0, 1, 20)
YF = XF ** 3 - 2 * XF + 0.5 + np.sin(7 * XF) * 0.01


@pytest.mark.parametrize("kw", [dict(deg=3), dict(deg=1), dict(deg=2, cov=True),
                                dict(deg=2, cov="unscaled"), dict(deg=2, full=True),
                                dict(deg=2, w=np.linspace(1, 2, 20)),
                                dict(deg=2, rcond=1e-3)], ids=str)
@pytest.mark.parametrize("y", [YF, np.stack([YF, 2 * YF + 1], 1)], ids=["1d", "2d"])
def test_polyfit(kw, y):
    kw = dict(kw)
    compare(lambda m, x, yy: m.polyfit(x, yy, **kw), XF, y, rtol=1e-7, atol=1e-10)


def test_polyfit_int_inputs_and_rank_warning():
    compare(lambda m: m.polyfit([0, 1, 2, 3], [1, 3, 5, 7], 1), rtol=1e-10, atol=1e-12)
    with pytest.warns(np.exceptions.RankWarning):
        cp.polyfit(cp.asarray([1.0, 1, 1]), cp.asarray([1.0, 2, 3]), 2)


@pytest.mark.parametrize("call", [
    lambda m: m.polyfit([1.0, 2], [1.0, 2], -1),
    lambda m: m.polyfit(m.ones((2, 2)), [1.0, 2], 1),
    lambda m: m.polyfit([], [], 1),
    lambda m: m.polyfit([1.0, 2], m.ones((2, 2, 2)), 1),
    lambda m: m.polyfit([1.0, 2, 3], [1.0, 2], 1),
    lambda m: m.polyfit([1.0, 2], [1.0, 2], 1, w=m.ones((2, 2))),
    lambda m: m.polyfit([1.0, 2], [1.0, 2], 1, w=[1.0]),
    lambda m: m.polyfit([1.0, 2], [1.0, 2], 1, cov=True),
])
def test_polyfit_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        compare(call)


def test_poly1d_goes_through_host():
    p = np.poly1d([1.0, 2.0])
    assert isinstance(cp.polyadd(p, [1.0]), np.poly1d)
    assert isinstance(cp.polymul(p, cp.asarray([1.0, 1.0])), np.poly1d)
    assert isinstance(cp.polyder(p), np.poly1d)
    q, r = cp.polydiv(p, np.poly1d([1.0]))
    assert isinstance(q, np.poly1d)


# --- require ---------------------------------------------------------------------------------

@pytest.mark.parametrize("req", [None, "C", "F", "O", ["A", "W"], ["E"], ["F", "O"],
                                 ["C_CONTIGUOUS", "OWNDATA"], "aligned", ["FORTRAN"]], ids=str)
@pytest.mark.parametrize("dtype", [None, np.float32])
@pytest.mark.parametrize("layout", ["c", "f", "view"])
def test_require(req, dtype, layout):
    base = np.arange(12.0).reshape(3, 4)
    a = {"c": np.ascontiguousarray(base), "f": np.asfortranarray(base), "view": base[:, ::2]}
    got = compare(lambda m, x: m.require(x, dtype, req), a[layout])
    if got is None:  # both raised
        return
    expected = np.require(a[layout], dtype, req)
    for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
        assert got.flags[flag] == expected.flags[flag], flag
    if req and "O" in [r[0].upper() for r in req]:
        assert got.flags["OWNDATA"]


def test_require_copies_only_when_needed():
    a = cp.ones((3, 4))
    assert cp.require(a, requirements="C") is a
    assert cp.require(a, requirements="O") is a
    v = a[:, :2]
    assert cp.require(v, requirements="O") is not v
    assert cp.require(v, requirements="O").flags["OWNDATA"]
    compare(lambda m, x: m.require(x, requirements="CF"), np.ones(3))  # ValueError
    compare(lambda m, x: m.require(x, requirements="X"), np.ones(3))  # KeyError
    compare(lambda m: m.require([1, 2, 3], requirements="F"))


# --- Python helpers and printing -------------------------------------------------------------

def test_iterable_and_reprs():
    assert cp.iterable(cp.arange(3)) and not cp.iterable(cp.array(1.0))
    assert cp.iterable([1]) and not cp.iterable(2)
    assert cp.binary_repr(5) == np.binary_repr(5)
    assert cp.binary_repr(-5, width=8) == np.binary_repr(-5, width=8)
    assert cp.binary_repr(cp.array(6)) == "110"
    assert cp.base_repr(255, 16, padding=2) == np.base_repr(255, 16, padding=2)
    with pytest.raises(ValueError):
        cp.base_repr(3, 40)


PRINT_ARRAYS = [np.arange(3), np.ones((2, 2), np.float32), np.array(2.5), np.zeros((0, 3)),
                np.arange(2000.0), np.array([1 + 2j, np.nan]), np.array([True, False]),
                np.array([1e-9, 1.0])]


@pytest.mark.parametrize("a", PRINT_ARRAYS, ids=lambda a: f"{a.dtype.char}{a.shape}")
def test_printing(a):
    d = cp.asarray(a)
    assert cp.array_repr(d) == np.array_repr(a) == repr(d)
    assert cp.array_str(d) == np.array_str(a) == str(d)
    assert cp.array2string(d) == np.array2string(a)
    assert cp.array2string(d, separator=", ", precision=3, suppress_small=True) == \
        np.array2string(a, separator=", ", precision=3, suppress_small=True)
    assert cp.array_repr(d, 40, 2, True) == np.array_repr(a, 40, 2, True)
    assert cp.array_str(d, max_line_width=30, precision=1) == \
        np.array_str(a, max_line_width=30, precision=1)
    assert cp.array2string(a) == np.array2string(a)  # host arrays pass through


def test_piecewise_condition_shapes():
    compare(lambda m, x: m.piecewise(x, [x < 0, m.ones(3, bool)], [1, 2]), X)  # ValueError
    compare(lambda m, x: m.piecewise(x, [(x < 0).astype(int), x > 1], [1, 2]), X)
    compare(lambda m, x: m.piecewise(x, (x < 0, x > 1), [1, 2]), X)


# --- text and npz files, einsum_path, NumPy's error settings ----------------------------------

def test_text_and_npz_files_give_device_arrays(tmp_path):
    import io

    h = np.arange(12.0).reshape(3, 4)
    d = cp.asarray(h)
    f = io.StringIO()
    cp.savetxt(f, d, fmt="%.3f")
    f.seek(0)
    got = cp.loadtxt(f)
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(got), h)
    f.seek(0)
    cols = cp.loadtxt(f, unpack=True)
    assert all(isinstance(c, cp.ndarray) for c in cols)
    np.testing.assert_array_equal(cp.asnumpy(cols[1]), h[:, 1])
    f.seek(0)
    np.testing.assert_array_equal(cp.asnumpy(cp.genfromtxt(f)), h)
    f = io.StringIO("1 2\n3 4\n")
    rec = cp.fromregex(f, r"(\d+) (\d+)", [("a", np.int64), ("b", np.int64)])
    assert isinstance(rec, np.ndarray) and rec["b"].tolist() == [2, 4]  # structured: NumPy's
    path = tmp_path / "a.npz"
    cp.savez(path, d, twice=d * 2)
    with cp.load(path) as z:
        assert sorted(z.files) == ["arr_0", "twice"]
        np.testing.assert_array_equal(z["twice"], h * 2)
    cp.savez_compressed(path, d)
    with cp.load(path) as z:
        np.testing.assert_array_equal(z["arr_0"], h)


def test_einsum_path_reads_shapes_only():
    a, b, c = (np.ones((3, 4)), np.ones((4, 5)), np.ones((5, 2)))
    for opt in ("greedy", "optimal"):
        expected = np.einsum_path("ij,jk,kl->il", a, b, c, optimize=opt)
        got = cp.einsum_path("ij,jk,kl->il", cp.asarray(a), cp.asarray(b), cp.asarray(c),
                             optimize=opt)
        assert got[0] == expected[0] and got[1] == expected[1]
    with pytest.raises(ValueError):
        cp.einsum_path("ij,jk->ik", cp.asarray(a), cp.asarray(a))


def test_error_settings_are_numpys():
    assert cp.seterr is np.seterr and cp.geterr is np.geterr
    old = cp.seterr(divide="raise")
    try:
        assert np.geterr()["divide"] == "raise"
    finally:
        cp.seterr(**old)


# --- numpy.emath -------------------------------------------------------------------------------

EMATH_INPUTS = {
    "float64": np.array([-4.0, -1.0, -0.5, 0.0, 0.5, 1.0, 4.0, np.nan, np.inf, -np.inf]),
    "float32": np.array([-4.0, 0.25, 9.0], np.float32),
    "int64": np.array([-4, 0, 9]),
    "int16": np.array([-4, 1], np.int16),
    "uint8": np.array([0, 4], np.uint8),
    "complex128": np.array([-4 + 0j, 1j, 2]),
    "in domain": np.array([0.25, 1.0, 0.5]),
}


@pytest.mark.parametrize("name", ["sqrt", "log", "log2", "log10", "arccos", "arcsin",
                                  "arctanh"])
@pytest.mark.parametrize("kind", list(EMATH_INPUTS))
def test_emath_as_numpy(name, kind):
    """Complex results exactly where a real input leaves the domain, NumPy's dtypes
    (complex64 for float32 and small integers), values within a few ulps."""
    h = EMATH_INPUTS[kind]
    compare(lambda m, x: getattr(m.emath, name)(x), h, rtol=1e-6, atol=1e-12)


def test_emath_power_and_logn():
    x = EMATH_INPUTS["float64"]
    for p in (2, -1, 0.5, np.array(2.0)):
        compare(lambda m, x: m.emath.power(x, p), x, rtol=1e-12, atol=0)
    compare(lambda m, x: m.emath.power(x, m.asarray(x)), x, rtol=1e-12, atol=1e-300)
    compare(lambda m, x: m.emath.power(m.asarray([2, 3]), x), np.array([-1, 2]))
    compare(lambda m, x: m.emath.logn(2, x), x, rtol=1e-12, atol=1e-300)
    compare(lambda m, x: m.emath.logn(x, 8.0), np.array([-2.0, 2.0]), rtol=1e-12)
    assert complex(cp.emath.sqrt(-1)) == 1j
