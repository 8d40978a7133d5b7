"""``vander`` and ``polyval``: NumPy's own compositions, written with cupynum's ufuncs so
they run on the device with NumPy's order of operations."""
from __future__ import annotations

import numpy as np

__all__ = ["vander", "polyval"]


def vander(x, N=None, increasing=False):
    from .creation import asarray, empty

    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = len(x)
    v = empty((len(x), N), dtype=np.promote_types(x.dtype, int))
    powers = v if increasing else v[:, ::-1]
    if N > 0:
        powers[:, 0] = 1
    if N > 1:
        powers[:, 1:] = x[:, None]
        from .._ufunc import UFUNCS

        UFUNCS["multiply"].accumulate(powers[:, 1:], out=powers[:, 1:], axis=1)
    return v


def polyval(p, x):
    """Horner's rule, one multiply and one add a coefficient, as NumPy evaluates it.  (A
    ``numpy.poly1d`` x goes through NumPy on the host.)"""
    from .._ufunc import UFUNCS
    from .creation import asarray, zeros_like

    if isinstance(x, np.poly1d):
        from .._fallback import call_on_host

        return call_on_host(np.polyval, (p, x), {})
    p = asarray(p)
    if p.ndim == 0:  # NumPy iterates over p
        raise TypeError("iteration over a 0-d array")
    x = asarray(x)
    y = zeros_like(x)
    multiply, add = UFUNCS["multiply"], UFUNCS["add"]
    for i in range(p.shape[0]):
        y = add(multiply(y, x), p[i])
    return y
