"""Window functions, isposinf/isneginf and numpy.astype against NumPy."""
import numpy as np
import pytest

import cupynum as cp
from helpers import compare


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [-2, 0, 1, 2, 5, 12, 13, 7.0, np.int16(9)])
def test_windows(name, M):
    # cos on the device may differ from the host's in the last bits: a few ulp
    compare(lambda xp: getattr(xp, name)(M), ulp=4)


@pytest.mark.parametrize("M,beta", [(0, 3.0), (1, 3.0), (5, 0), (12, 14), (13, 5.5),
                                    (6, np.float32(2.5))])
def test_kaiser(M, beta):
    compare(lambda xp: xp.kaiser(M, beta), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dtype", ["e", "f", "d", "i", "?"])
@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_isposinf_isneginf(name, dtype):
    with np.errstate(invalid="ignore"):  # inf and nan into ints: NumPy's unspecified values
        x = np.array([np.inf, -np.inf, 1.0, -0.0, np.nan, -3.0]).astype(dtype)
    compare(lambda xp, a: getattr(xp, name)(a), x)
    out = np.zeros(x.shape, bool)
    compare(lambda xp, a, o: getattr(xp, name)(a, o), x, out)


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_isposinf_complex_raises(name):
    x = np.array([np.inf + 1j])
    compare(lambda xp, a: getattr(xp, name)(a), x)


def test_astype_function():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    compare(lambda xp, a: xp.astype(a, np.float32), x)
    compare(lambda xp, a: xp.astype(a, "c16"), x)
    d = cp.asarray(x)
    assert cp.astype(d, np.int32, copy=False) is d
    assert cp.astype(d, np.int32) is not d
    assert cp.astype(d, np.int8, device=d.device).dtype == np.int8
    with pytest.raises(ValueError):
        cp.astype(d, np.int8, device="elsewhere")
    with pytest.raises(TypeError):
        cp.astype([1, 2], np.int8)
    assert cp.astype(np.float32(1.5), np.float64) == np.astype(np.float32(1.5), np.float64)
