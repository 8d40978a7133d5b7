"""NumPy's array printing (``array2string``, ``array_repr``, ``array_str``).  Printing is a
host operation: a cupynum array is copied to the host once and NumPy formats it, so the text
is exactly what ``repr``/``str`` of the cupynum array give (they format the same host copy)."""
from __future__ import annotations

import numpy as np

from .._array import ndarray

__all__ = ["array2string", "array_repr", "array_str"]


def _host(a):
    return a._host() if isinstance(a, ndarray) else a


def array2string(a, *args, **kwargs):
    return np.array2string(_host(a), *args, **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(_host(a), max_line_width, precision, suppress_small)
