"""Issue 20, item 14: array API conformance that NumPy has and cupynum lacked.

``sort``/``argsort(descending=True)`` (array API 2023.12; NumPy 2.4 has no such argument, so
the expected answers are built from NumPy's stable ascending sort of the reversed array),
boolean masks with a size-0 axis, and ``meshgrid`` of empty inputs."""
import numpy as np
import pytest

import cupynum as cp
from helpers import assert_same, compare


def _numpy_descending_argsort(a, axis):
    """Indices of a stable descending sort: equal elements keep their original order."""
    flipped = np.flip(a, axis)
    n = a.shape[axis]
    return np.flip(n - 1 - np.argsort(flipped, axis=axis, kind="stable"), axis)


CASES = [np.array([3, 1, 2, 1, 3, 0]), np.array([[3, 1, 2], [1, 3, 3], [0, 0, 5]]),
         np.array([1.0, -0.0, 0.0, 2.5, -1.0]), np.array([True, False, True]),
         np.arange(24).reshape(2, 3, 4) % 5, np.zeros((0, 3)), np.array([2 + 1j, 1 + 2j, 2 + 0j])]


@pytest.mark.parametrize("a", CASES, ids=lambda a: f"{a.dtype}{a.shape}")
@pytest.mark.parametrize("stable", [True, None])
def test_descending_sort_and_argsort(a, stable):
    for axis in range(-1, a.ndim - 1) if a.ndim else [-1]:
        idx = _numpy_descending_argsort(a, axis)
        assert_same(cp.argsort(cp.asarray(a), axis=axis, descending=True, stable=stable), idx)
        assert_same(cp.sort(cp.asarray(a), axis=axis, descending=True, stable=stable),
                    np.take_along_axis(a, idx, axis))
        assert_same(cp.asarray(a).argsort(axis=axis, descending=True), idx)


def test_descending_false_is_the_default_sort():
    a = np.array([3, 1, 2, 1])
    compare(lambda xp, a: xp.sort(a, **({} if xp is np else {"descending": False})), a)
    compare(lambda xp, a: xp.argsort(a, **({} if xp is np else {"descending": False})), a)


def test_descending_sort_flattens_with_axis_none():
    a = np.array([[3, 1], [2, 1]])
    idx = _numpy_descending_argsort(a.ravel(), 0)
    assert_same(cp.argsort(cp.asarray(a), axis=None, descending=True), idx)
    assert_same(cp.sort(cp.asarray(a), axis=None, descending=True), a.ravel()[idx])


def test_descending_sort_of_a_0d_array_raises_as_sort_does():
    compare(lambda xp, a: xp.sort(a, **({} if xp is np else {"descending": True})),
            np.array(1.0))


@pytest.mark.parametrize("shape, mask_shape", [
    ((1,), (0,)), ((2,), (0,)), ((1, 3), (0,)), ((1, 3), (0, 3)), ((1, 3), (1, 0)),
    ((1, 1), (0, 0)), ((2, 3), (2, 0)), ((0,), (1,)), ((2, 3), (0, 5)), ((2, 3), (5, 0))])
def test_mask_with_a_size_0_axis(shape, mask_shape):
    mask = np.zeros(mask_shape, dtype=bool)
    compare(lambda xp, a, m: a[m], np.ones(shape), mask)
    compare(lambda xp, a: a[mask], np.ones(shape))  # a host mask

    def assign(xp, a, m):
        a[m] = 5.0
        return a
    compare(assign, np.ones(shape), mask)


@pytest.mark.parametrize("sizes", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0)])
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_of_empty_inputs(sizes, indexing, sparse):
    arrays = [np.arange(n, dtype=np.uint8) for n in sizes]
    compare(lambda xp, *xs: xp.meshgrid(*xs, indexing=indexing, sparse=sparse), *arrays)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float64])
def test_fftfreq_dtype(name, dtype):
    """The array API's ``dtype=`` (NumPy 2.4 has none): NumPy's float64 values, cast."""
    got = getattr(cp.fft, name)(7, 0.5, dtype=dtype)
    assert_same(got, getattr(np.fft, name)(7, 0.5).astype(dtype or np.float64))
    assert_same(getattr(cp.fft, name)(8), getattr(np.fft, name)(8))
