"""vander and polyval against NumPy: values, dtypes, shapes and errors."""
import numpy as np
import pytest

from helpers import compare

X = [np.array([1.5, 2, -3, 0.25]), np.array([1, 2, 3, 5]), np.array([1, 2, 3], np.uint8),
     np.array([0.5, -1.25], np.float32), np.array([1 + 2j, -0.5j])]


@pytest.mark.parametrize("x", X, ids=lambda x: x.dtype.char)
@pytest.mark.parametrize("N", [None, 0, 1, 3, 6])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander(x, N, increasing):
    compare(lambda m, a: m.vander(a, N, increasing), x)


def test_vander_errors():
    compare(lambda m, a: m.vander(a), np.ones((2, 2)))
    compare(lambda m, a: m.vander(a, -1), np.ones(3))


@pytest.mark.parametrize("p", [[3, 0, 1], [1.5, -2, 0.5, 4], np.array([2, 3], np.int32),
                               np.array([1.0], np.float32), np.array([1j, 2])],
                         ids=["ints", "floats", "i4", "f4", "complex"])
@pytest.mark.parametrize("x", X[:4] + [np.array(2.5), np.ones((2, 3), np.float32)],
                         ids=lambda x: f"{x.dtype.char}{x.ndim}")
def test_polyval(p, x):
    compare(lambda m, c, a: m.polyval(c, a), np.asarray(p), x)


def test_polyval_python_scalar_and_errors():
    compare(lambda m: m.polyval([1.0, 2.0, 3.0], 2.5))
    compare(lambda m, c: m.polyval(c, 2.0), np.array(3.0))
