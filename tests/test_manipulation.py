"""Shape and layout manipulation, compared with NumPy (views where NumPy gives views)."""
import numpy as np
import pytest

import cupynum as cp
from helpers import compare

DTYPES = [np.bool_, np.int8, np.uint32, np.int64, np.float16, np.float32, np.float64,
          np.complex128]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


A = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("fn", [
    lambda xp, a: xp.moveaxis(a, 0, -1), lambda xp, a: xp.moveaxis(a, [0, 1], [2, 0]),
    lambda xp, a: xp.rollaxis(a, 2), lambda xp, a: xp.rollaxis(a, 0, 3),
    lambda xp, a: xp.swapaxes(a, 0, 2), lambda xp, a: xp.transpose(a, (1, 0, 2)),
    lambda xp, a: xp.permute_dims(a, (2, 0, 1)), lambda xp, a: xp.matrix_transpose(a),
    lambda xp, a: xp.squeeze(a[:, :1]), lambda xp, a: xp.squeeze(a[:1], axis=0),
    lambda xp, a: xp.expand_dims(a, (0, -1)), lambda xp, a: xp.expand_dims(a, 1),
    lambda xp, a: xp.broadcast_to(a[:, :1], (5, 2, 3, 4)),
    lambda xp, a: xp.broadcast_arrays(a, a[0, :1]),
    lambda xp, a: xp.flip(a), lambda xp, a: xp.flip(a, (0, 2)), lambda xp, a: xp.fliplr(a),
    lambda xp, a: xp.flipud(a), lambda xp, a: xp.rot90(a), lambda xp, a: xp.rot90(a, 2),
    lambda xp, a: xp.rot90(a, -1, (2, 1)), lambda xp, a: xp.atleast_1d(a[0, 0, 0]),
    lambda xp, a: xp.atleast_2d(a[0, 0]), lambda xp, a: xp.atleast_3d(a[0]),
    lambda xp, a: xp.atleast_3d(a[0, 0], a[0, 0, 0]),
    lambda xp, a: xp.split(a, 2), lambda xp, a: xp.split(a, [1, 3], axis=2),
    lambda xp, a: xp.array_split(a, 3, axis=2), lambda xp, a: xp.hsplit(a, 3),
    lambda xp, a: xp.vsplit(a, 2), lambda xp, a: xp.dsplit(a, [1]),
    lambda xp, a: xp.unstack(a, axis=1), lambda xp, a: xp.ravel(a.T),
    lambda xp, a: xp.reshape(a, (4, -1)),
])
def test_views_and_shapes(fn):
    compare(fn, A)


def test_flip_is_a_view():
    d = cp.arange(5)
    v = cp.flip(d)
    v[0] = 100
    assert int(d[4]) == 100
    b = cp.broadcast_to(d, (3, 5))
    assert b.strides[0] == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_joining(dtype):
    a, b = sample((2, 3), dtype), sample((2, 3), dtype, 1)
    compare(lambda xp, a, b: xp.concatenate([a, b]), a, b)
    compare(lambda xp, a, b: xp.concatenate([a, b.T.T[:, ::-1]], axis=1), a, b)
    compare(lambda xp, a, b: xp.concatenate([a, b], axis=None), a, b)
    compare(lambda xp, a, b: xp.stack([a, b], axis=-1), a, b)
    compare(lambda xp, a, b: xp.vstack([a, b[0]]), a, b)
    compare(lambda xp, a, b: xp.hstack([a[0], b[1]]), a, b)
    compare(lambda xp, a, b: xp.dstack([a, b]), a, b)
    compare(lambda xp, a, b: xp.column_stack([a[0], b[1]]), a, b)
    compare(lambda xp, a, b: xp.row_stack([a, b]), a, b)
    compare(lambda xp, a, b: xp.block([[a, b], [b, a]]), a, b)
    compare(lambda xp, a, b: xp.append(a, b, axis=0), a, b)
    compare(lambda xp, a, b: xp.append(a, b), a, b)


def test_concatenate_dtypes_and_errors():
    i, f = np.arange(3, dtype=np.int8), np.ones(2, np.float32)
    compare(lambda xp, i, f: xp.concatenate([i, f]), i, f)
    compare(lambda xp, i, f: xp.concatenate([i, f], dtype=np.int16, casting="unsafe"), i, f)
    compare(lambda xp, i, f: xp.concatenate([i, f], dtype=np.int16), i, f)
    compare(lambda xp: xp.concatenate([xp.zeros((2, 3)), xp.zeros((2, 4))]))
    compare(lambda xp: xp.concatenate([xp.zeros((2, 3)), xp.zeros(3)]))
    compare(lambda xp: xp.concatenate([xp.asarray(1), xp.asarray(2)]))
    compare(lambda xp: xp.stack([xp.zeros(2), xp.zeros(3)]))
    compare(lambda xp: xp.concatenate([]))
    compare(lambda xp: xp.block([[xp.zeros(2)], xp.zeros(2)]))
    compare(lambda xp: xp.split(xp.arange(7), 3))
    compare(lambda xp: xp.concatenate([xp.zeros((0, 3)), xp.ones((2, 3))]))

    def out(xp):
        o = xp.zeros(5)
        xp.concatenate([xp.ones(2), xp.zeros(3) + 2], out=o)
        return o

    compare(out)


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_tile_roll_resize(dtype):
    a = sample((3, 4), dtype)
    compare(lambda xp, a: xp.tile(a, 2), a)
    compare(lambda xp, a: xp.tile(a, (2, 1, 3)), a)
    compare(lambda xp, a: xp.tile(a[0], (3, 2)), a)
    compare(lambda xp, a: xp.repeat(a, 2), a)
    compare(lambda xp, a: xp.repeat(a, [1, 0, 3], axis=0), a)
    compare(lambda xp, a: a.repeat(3, axis=1), a)
    compare(lambda xp, a: xp.repeat(a, -1), a)
    compare(lambda xp, a: xp.roll(a, 5), a)
    compare(lambda xp, a: xp.roll(a, -1, axis=1), a)
    compare(lambda xp, a: xp.roll(a, (1, 2), axis=(0, 1)), a)
    compare(lambda xp, a: xp.resize(a, (5, 3)), a)
    compare(lambda xp, a: xp.resize(a, 2), a)
    compare(lambda xp, a: xp.resize(a[:0], 4), a)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric",
                                  "linear_ramp", "maximum", "mean"])
def test_pad(mode):
    a = np.arange(12.0).reshape(3, 4)
    compare(lambda xp, a: xp.pad(a, 2, mode=mode), a)
    compare(lambda xp, a: xp.pad(a, ((1, 7), (0, 3)), mode=mode), a)
    compare(lambda xp, a: xp.pad(a[0], (5, 2), mode=mode), a)
    if mode == "constant":
        compare(lambda xp, a: xp.pad(a, ((1, 2), (3, 1)), constant_values=((7, 8), (9, -1))), a)
    compare(lambda xp: xp.pad(xp.zeros((0, 2)), 1, mode=mode))


def test_trim_insert_delete():
    a = np.array([0, 0, 3, 0, 2, 0, 0])
    compare(lambda xp, a: xp.trim_zeros(a), a)
    compare(lambda xp, a: xp.trim_zeros(a, "b"), a)
    compare(lambda xp, a: xp.trim_zeros(a * 0), a)
    m = np.arange(12).reshape(3, 4)
    compare(lambda xp, m: xp.delete(m, 1, axis=1), m)
    compare(lambda xp, m: xp.delete(m, [0, -1]), m)
    compare(lambda xp, m: xp.delete(m, slice(0, 4, 2), axis=1), m)
    compare(lambda xp, m: xp.delete(m, [True, False, True], axis=0), m)
    compare(lambda xp, m: xp.delete(m, 7, axis=0), m)
    compare(lambda xp, m: xp.insert(m, 1, 5, axis=1), m)
    compare(lambda xp, m: xp.insert(m, [1], [[7], [8], [9]], axis=1), m)
    compare(lambda xp, m: xp.insert(m, [0, 2, 2], [-1, -2, -3]), m)
    compare(lambda xp, m: xp.insert(m, 1, [1, 2, 3, 4], axis=0), m)
    compare(lambda xp, m: xp.insert(m, slice(0, 2), 0, axis=0), m)
    compare(lambda xp, m: xp.insert(m, 9, 0, axis=0), m)


def test_copyto():
    def f(xp, d, s):
        xp.copyto(d, s)
        xp.copyto(d, 7, where=s > 0)
        xp.copyto(d, s[::-1] * 2, where=d < 0)
        return d

    compare(f, np.zeros((3, 4)), sample((3, 4), np.float64))
    compare(lambda xp, d, s: xp.copyto(d, s), np.zeros(3, np.int32), np.ones(3))
    compare(lambda xp, d: xp.copyto(d, 1.5), np.zeros(3, np.int32))
    compare(lambda xp, d: xp.copyto(d, 1.5, casting="unsafe"), np.zeros(3, np.int32))


def test_empty_and_zero_d():
    e = np.zeros((0, 3))
    compare(lambda xp, e: xp.concatenate([e, e], axis=1), e)
    compare(lambda xp, e: xp.flip(e), e)
    compare(lambda xp, e: xp.tile(e, 2), e)
    compare(lambda xp, e: xp.roll(e, 1, axis=1), e)
    compare(lambda xp: xp.expand_dims(xp.asarray(5), 0))
    compare(lambda xp: xp.broadcast_to(xp.asarray(5), (2, 2)))
    compare(lambda xp: xp.broadcast_to(xp.ones(3), (2, 4)))
    compare(lambda xp: xp.squeeze(xp.ones((2, 1)), axis=0))
    compare(lambda xp: xp.moveaxis(xp.ones((2, 1)), 0, 5))


# --- issue 5: pad's ramp/statistic modes and odd reflections, n-d trim_zeros, boolean insert,
# count_nonzero(axis=...), all native compositions now -----------------------------------------
PAD_CASES = [("linear_ramp", {}), ("linear_ramp", {"end_values": (5, -2)}),
             ("linear_ramp", {"end_values": 2.5}),
             ("linear_ramp", {"end_values": [[1, 2], [3, 4]]}),
             ("maximum", {}), ("minimum", {"stat_length": 2}), ("maximum", {"stat_length": 9}),
             ("mean", {}), ("mean", {"stat_length": (1, 3)}), ("median", {}),
             ("median", {"stat_length": ((2, 1), (3, 4))}),
             ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
             ("reflect", {"reflect_type": "even"})]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,kw", PAD_CASES)
def test_pad_native_modes(dtype, mode, kw):
    base = (np.arange(24).reshape(4, 6) * 7 % 11 - 3).astype(dtype)
    # float means: NumPy sums pairwise, so only within a summation bound there
    tol = {"rtol": 1e-3 if dtype == np.float16 else 1e-6} if (
        mode == "mean" and np.dtype(dtype).kind in "fc") else {}
    for a in (base, base[::-1, ::2], base[1], base[:1]):
        pws = [2, (1, 3), (7, 0) if a.ndim == 1 else ((0, 9), (4, 1))]
        if "stat_length" in kw and np.ndim(kw["stat_length"]) == 2 and a.ndim == 1:
            continue
        if "end_values" in kw and np.ndim(kw["end_values"]) == 2 and a.ndim == 1:
            continue
        for pw in pws:
            compare(lambda xp, a: xp.pad(a, pw, mode, **kw), a, **tol)


def test_pad_native_modes_edges():
    a = np.arange(12.0).reshape(3, 4)
    for mode in ("linear_ramp", "maximum", "mean", "median", "minimum"):
        compare(lambda xp: xp.pad(xp.zeros((0, 2)), 1, mode=mode))  # empty axis: ValueError
        compare(lambda xp: xp.pad(xp.zeros((0, 2)), ((0, 0), (1, 2)), mode=mode))
        compare(lambda xp: xp.pad(xp.asarray(3.0), 2, mode=mode))  # 0-d
        compare(lambda xp, a: xp.pad(a, 0, mode=mode), a)
        compare(lambda xp, a: xp.pad(a, 1, mode=mode, bogus=1), a)  # ValueError
    compare(lambda xp: xp.pad(xp.asarray(3.0), 2, "reflect", reflect_type="odd"))
    compare(lambda xp, a: xp.pad(a[:1], 3, "reflect", reflect_type="odd"), a)  # singleton axis
    compare(lambda xp, a: xp.pad(a, 1, "maximum", stat_length=0), a)  # ValueError
    compare(lambda xp, a: xp.pad(a, 1, "mean", stat_length=-1), a)  # ValueError
    compare(lambda xp, a: xp.pad(a, 2, "median", stat_length=1.6), a)  # rounded to 2
    compare(lambda xp, a: xp.pad(a, 2, "no-such-mode"), a)  # ValueError
    i = np.array([[1, 2, 4], [7, 8, 10]], np.int32)  # integer means round half to even
    compare(lambda xp, i: xp.pad(i, 2, "mean"), i)
    compare(lambda xp, i: xp.pad(i, (3, 2), "linear_ramp", end_values=(-7, 100)), i)
    u = np.array([1, 200, 3], np.uint8)  # odd reflection wraps like NumPy's uint8 arithmetic
    compare(lambda xp, u: xp.pad(u, 5, "reflect", reflect_type="odd"), u)
    compare(lambda xp, u: xp.pad(u, 5, "symmetric", reflect_type="odd"), u)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trim_zeros_nd(dtype):
    b = np.array([[0, 0, 2, 3, 0, 0], [0, 1, 0, 3, 0, 0], [0, 0, 0, 0, 0, 0]]).astype(dtype)
    c = np.zeros((4, 3, 5), dtype)
    c[1, 2, 1] = 1
    c[2, 0, 3] = 1
    for x in (b, b.T, b[::-1, ::2], c, c[:, ::-1]):
        for trim in ("fb", "f", "b", "BF"):
            compare(lambda xp, x: xp.trim_zeros(x, trim), x)
            for axis in [0, -1, (0, 1), ()]:
                compare(lambda xp, x: xp.trim_zeros(x, trim, axis=axis), x)
    compare(lambda xp, x: xp.trim_zeros(x * 0), b)  # all zero: every trimmed axis empty
    compare(lambda xp, x: xp.trim_zeros(x * 0, "f", axis=1), b)
    compare(lambda xp: xp.trim_zeros(xp.zeros((0, 3), dtype)))
    compare(lambda xp: xp.trim_zeros(xp.zeros((2, 0, 3), dtype), axis=0))
    compare(lambda xp: xp.trim_zeros(xp.asarray(5)))  # 0-d: returned as is
    compare(lambda xp, x: xp.trim_zeros(x, axis=2), b)  # AxisError
    compare(lambda xp, x: xp.trim_zeros(x, axis=(0, 0)), b)  # ValueError
    compare(lambda xp, x: xp.trim_zeros(x, "x"), b)  # ValueError
    compare(lambda xp, x: xp.trim_zeros(x[0], "fx"), b)  # ValueError (1-D too)


@pytest.mark.parametrize("dtype", DTYPES)
def test_insert_boolean_obj(dtype):
    a = sample((3, 4), dtype)
    m = np.array([True, False, False, True])
    compare(lambda xp, a, m: xp.insert(a, m, 5, axis=1), a, m)
    compare(lambda xp, a, m: xp.insert(a, m[:3], a[:, :1], axis=0), a, m)  # values rows
    compare(lambda xp, a, m: xp.insert(a[::-1, ::2], m[:2], 7, axis=1), a, m)
    compare(lambda xp, a, m: xp.insert(a, m, [1, 2]), a, m)  # flattened
    compare(lambda xp, a, m: xp.insert(a, m[1:3], 9, axis=0), a, m)  # one True: one slot
    compare(lambda xp, a, m: xp.insert(a, m & False, 9, axis=1), a, m)  # none
    compare(lambda xp, a, m: xp.insert(a[:0], m[:0], 9, axis=0), a, m)  # empty
    compare(lambda xp, a: xp.insert(a, np.array(True), 9), a)  # ValueError: not 1-D
    compare(lambda xp, a: xp.insert(a, np.ones((2, 2), bool), 9), a)  # ValueError
    compare(lambda xp, a: xp.insert(a, [True, False], 9), a)  # NumPy: AttributeError


@pytest.mark.parametrize("dtype", DTYPES)
def test_count_nonzero_axis(dtype):
    a = sample((3, 4, 5), dtype)
    a[a.real > 3] = 0
    for x in (a, a[::-1, :, ::2], a.transpose(2, 0, 1), a[:0], a[0, 0, 0]):
        for axis in [None, 0, -1, (0, 2), ()] if x.ndim == 3 else [None, ()]:
            for kd in (False, True):
                compare(lambda xp, x: xp.count_nonzero(x, axis=axis, keepdims=kd), x)
    compare(lambda xp, x: xp.count_nonzero(x, axis=3), a)  # AxisError
    compare(lambda xp, x: xp.count_nonzero(x, axis=(1, 1)), a)  # ValueError
    f = np.array([[np.nan, 0.0, -0.0], [np.inf, 0, 1]])
    compare(lambda xp, f: xp.count_nonzero(f, axis=1), f)
