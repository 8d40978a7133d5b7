"""fromfunction, asarray_chkfinite and isfortran against NumPy."""
import numpy as np
import pytest

import cupynum as cp
from helpers import compare


@pytest.mark.parametrize("dtype", [float, int, np.float32])
def test_fromfunction(dtype):
    compare(lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=dtype))
    compare(lambda m: m.fromfunction(lambda i, j, k=2: i + k * j, (2, 5), dtype=dtype, k=3))


@pytest.mark.parametrize("values", [[1.0, 2.0], [1.0, np.inf], [np.nan], [1, 2], [1 + 1j, 2j],
                                    [np.inf + 0j]])
def test_asarray_chkfinite(values):
    compare(lambda m, a: m.asarray_chkfinite(a), np.array(values))
    compare(lambda m: m.asarray_chkfinite(values, dtype=np.float32))


def test_isfortran():
    views = [lambda m, x: x, lambda m, x: x.T, lambda m, x: x[:, ::2], lambda m, x: x[0],
             lambda m, x: x[:1].T, lambda m, x: m.asfortranarray(x)]
    for view in views:
        got = cp.isfortran(view(cp, cp.ones((3, 4))))
        assert got is np.isfortran(view(np, np.ones((3, 4))))
