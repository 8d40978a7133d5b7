"""Array creation and transfer, compared with NumPy."""
import io

import numpy as np
import pytest

import cupynum as cp
from helpers import assert_same, compare


@pytest.mark.parametrize("obj", [
    [1, 2, 3], [[1.5, 2], [3, 4]], (1, 2.0), 5, 2.5, True, 1 + 2j, [True, False],
    [[1, 2], [3, 4j]], np.arange(6).reshape(2, 3), np.float32(1.5), [], [[]],
    [np.int8(1), np.int8(2)], np.arange(6.0).reshape(2, 3).T,
])
def test_array_from_host_objects(obj):
    compare(lambda xp: xp.array(obj))
    compare(lambda xp: xp.asarray(obj))
    compare(lambda xp: xp.array(obj, dtype=np.float32))
    compare(lambda xp: xp.array(obj, ndmin=3))


def test_array_of_device_arrays_and_copy_semantics():
    d = cp.arange(4)
    assert cp.asarray(d) is d
    assert cp.array(d) is not d
    e = cp.array(d, copy=False)
    assert e is d
    with pytest.raises(ValueError):
        cp.array([1, 2], copy=False)
    nested = cp.array([cp.asarray(1.0), cp.asarray(2.0)])
    assert_same(nested, np.array([1.0, 2.0]))
    f = cp.asarray(d, dtype=np.float32)
    assert f.dtype == np.float32
    assert cp.asfortranarray(cp.ones((2, 3))).flags.f_contiguous
    assert cp.ascontiguousarray(cp.ones((2, 3)).T).flags.c_contiguous
    assert cp.ascontiguousarray(cp.asarray(3.0)).shape == (1,)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("dtype", [None, np.int8, np.uint64, np.float16, np.complex64, bool])
@pytest.mark.parametrize("shape", [3, (2, 3), (), (0, 4), [2, 2]])
def test_shape_functions(fn, dtype, shape):
    kw = {} if dtype is None else {"dtype": dtype}
    if fn == "empty":
        got = getattr(cp, fn)(shape, **kw)
        exp = getattr(np, fn)(shape, **kw)
        assert got.shape == exp.shape and got.dtype == exp.dtype
    else:
        compare(lambda xp: getattr(xp, fn)(shape, **kw))
    compare(lambda xp: getattr(xp, fn)(shape, order="F", **kw).flags.f_contiguous)


@pytest.mark.parametrize("value", [0, 7, -1, 2.5, True, 1 + 1j, np.float32(3.5), np.int8(-3)])
def test_full(value):
    compare(lambda xp: xp.full((2, 3), value))
    compare(lambda xp: xp.full(4, value, dtype=np.float64))
    compare(lambda xp: xp.full((2, 2), np.array([1, 2]) if xp is np else xp.asarray([1, 2])))


def test_full_errors():
    compare(lambda xp: xp.full(3, 300, dtype=np.uint8))
    compare(lambda xp: xp.full(3, -1, dtype=np.uint32))


@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like"])
def test_like(fn):
    h = np.arange(6, dtype=np.int16).reshape(2, 3).T
    for kw in ({}, {"dtype": np.float32}, {"shape": (4,)}, {"order": "C"}):
        if fn == "empty_like":
            got, exp = getattr(cp, fn)(cp.asarray(h), **kw), getattr(np, fn)(h, **kw)
            assert got.shape == exp.shape and got.dtype == exp.dtype
            assert got.flags.f_contiguous == exp.flags.f_contiguous
        else:
            compare(lambda xp, a: getattr(xp, fn)(a, **kw), h)
    compare(lambda xp, a: xp.full_like(a, 9.7), h)
    compare(lambda xp, a: xp.full_like(a, 9.7, dtype=np.float64), h)


@pytest.mark.parametrize("args", [(5,), (2, 10), (2, 10, 3), (10, 2, -1), (0.5, 3.2, 0.3),
                                  (1, 2, 0.1), (-3,), (5, 1)])
@pytest.mark.parametrize("dtype", [None, np.float32, np.int8, np.uint16])
def test_arange(args, dtype):
    compare(lambda xp: xp.arange(*args, dtype=dtype))


def test_arange_errors():
    compare(lambda xp: xp.arange(0, 10, 0))


def test_ranges():
    compare(lambda xp: xp.linspace(0, 1, 7))
    compare(lambda xp: xp.linspace(0, 1, 7, endpoint=False, dtype=np.float32))
    compare(lambda xp: xp.linspace(2, 3, 5, retstep=True))
    compare(lambda xp: xp.linspace(np.array([0.0, 1]), 5, 4, axis=1)
            if xp is np else xp.linspace(xp.asarray([0.0, 1]), 5, 4, axis=1))
    compare(lambda xp: xp.logspace(0, 3, 4))
    compare(lambda xp: xp.logspace(0, 3, 4, base=2.0, dtype=np.float32))
    compare(lambda xp: xp.geomspace(1, 1000, 4))
    compare(lambda xp: xp.linspace(0, 1, -1))


def test_matrices():
    compare(lambda xp: xp.eye(3))
    compare(lambda xp: xp.eye(3, 4, k=1, dtype=np.int32))
    compare(lambda xp: xp.eye(4, k=-2))
    compare(lambda xp: xp.identity(3, dtype=np.complex64))
    compare(lambda xp: xp.tri(3, 5, 1))
    h = np.arange(1, 21, dtype=np.float32).reshape(4, 5)
    for k in (-2, 0, 1, 7):
        compare(lambda xp, a: xp.tril(a, k), h)
        compare(lambda xp, a: xp.triu(a, k), h)
        compare(lambda xp, a: xp.diag(a, k), h)
        compare(lambda xp, a: xp.diag(a, k), np.arange(3))
        compare(lambda xp, a: xp.diagflat(a, k), np.arange(4).reshape(2, 2))
    compare(lambda xp, a: xp.triu(a), np.arange(24).reshape(2, 3, 4))
    compare(lambda xp, a: xp.diag(a), np.zeros((2, 2, 2)))


def test_meshgrid_indices():
    x, y = np.arange(3.0), np.arange(4)
    for kw in ({}, {"indexing": "ij"}, {"sparse": True}, {"copy": False}):
        compare(lambda xp, a, b: xp.meshgrid(a, b, **kw), x, y)
    compare(lambda xp, a, b, c: xp.meshgrid(a, b, c), x, y, np.arange(2))
    compare(lambda xp: xp.indices((2, 3)))
    compare(lambda xp: xp.indices((2, 3), sparse=True))


def test_buffers_and_files(tmp_path):
    raw = np.arange(8, dtype=np.int32).tobytes()
    compare(lambda xp: xp.frombuffer(raw, dtype=np.int32))
    compare(lambda xp: xp.frombuffer(raw, dtype=np.int16, count=4, offset=2))
    path = tmp_path / "a.bin"
    np.arange(5.0).tofile(path)
    compare(lambda xp: xp.fromfile(path))
    d = cp.arange(12.0).reshape(3, 4).T
    f = io.BytesIO()
    cp.save(f, d)
    f.seek(0)
    back = cp.load(f)
    assert isinstance(back, cp.ndarray)
    assert_same(back, np.arange(12.0).reshape(3, 4).T)
    compare(lambda xp: xp.fromiter(range(5), dtype=np.int8))
