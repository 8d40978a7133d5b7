"""Window functions (NumPy: bartlett, blackman, hamming, hanning, kaiser), computed on the
device with NumPy's formulas, term by term, in float64."""
from __future__ import annotations

import numpy as np
from .._ufunc import uf
from .creation import arange, empty, ones
from .elementwise import i0, where

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _length(M, *extra):
    """M (and extra parameters) as NumPy reads them: float64 values via ``[0.0, M, ...]``."""
    values = np.array([0.0, M, *extra])
    return values.dtype, values[1:]


def _short(M, dtype):
    """The window when M < 2 (empty, or [1.0]); None otherwise."""
    if M < 1:
        return empty((0,), dtype)
    if M == 1:
        return ones(1, dtype)
    return None


def _positions(M):
    """NumPy's n = arange(1 - M, M, 2) over the window's float M."""
    return arange(1 - M, M, 2)


def _cosine_window(M, terms):
    """sum of c * cos(k * pi * n / (M - 1)) over terms (c, k), NumPy's order of operations:
    ``a0 + a1 * cos(pi * n / (M - 1)) [+ a2 * cos(2.0 * pi * n / (M - 1))]``."""
    dtype, (M,) = _length(M)
    short = _short(M, dtype)
    if short is not None:
        return short
    n = _positions(M)
    mul, div, cos, add = uf.multiply, uf.true_divide, uf.cos, uf.add
    (a0, _), *rest = terms
    result = None
    for c, k in rest:
        angle = div(mul(np.pi, n) if k == 1 else mul(k * np.pi, n), M - 1)
        term = mul(c, cos(angle))
        result = add(a0, term) if result is None else add(result, term)
    return result


def hanning(M):
    return _cosine_window(M, ((0.5, 0), (0.5, 1)))


def hamming(M):
    return _cosine_window(M, ((0.54, 0), (0.46, 1)))


def blackman(M):
    return _cosine_window(M, ((0.42, 0), (0.5, 1), (0.08, 2.0)))


def bartlett(M):
    dtype, (M,) = _length(M)
    short = _short(M, dtype)
    if short is not None:
        return short
    n = _positions(M)
    ramp = uf.true_divide(n, M - 1)
    return where(uf.less_equal(n, 0), uf.add(1, ramp), uf.subtract(1, ramp))


def kaiser(M, beta):
    dtype, (M, beta) = _length(M, beta)
    if M == 1:
        return ones(1, dtype)
    n = arange(0, M)
    alpha = (M - 1) / 2.0
    x = uf.power(uf.true_divide(uf.subtract(n, alpha), alpha), 2.0)
    return uf.true_divide(i0(uf.multiply(beta, uf.sqrt(uf.subtract(1, x)))),
                            i0(np.asarray(beta)))
