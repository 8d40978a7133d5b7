"""dtype normalisation: NumPy's dtype objects are ours, limited to what cupynum stores."""
from __future__ import annotations

import numpy as np

from ._ops import SUPPORTED_DTYPES

# NumPy has two spellings of the 64-bit integers ('l' and 'q'); keep one so cache keys agree.
_CANONICAL = {np.dtype("q"): np.dtype("l"), np.dtype("Q"): np.dtype("L")}
_cache: dict = {}


def normalize(dtype) -> np.dtype:
    """``numpy.dtype(dtype)`` in canonical form; TypeError for dtypes cupynum cannot store."""
    try:
        return _cache[dtype]
    except (KeyError, TypeError):
        pass
    dt = np.dtype(dtype)
    dt = _CANONICAL.get(dt, dt)
    if dt not in SUPPORTED_DTYPES or dt.byteorder == ">":
        raise TypeError(f"cupynum does not support dtype {dt!r} ({dt.name}); supported: bool, "
                        "int8-64, uint8-64, float16/32/64, complex64/128")
    if dt.byteorder == "|" or dt.isnative:
        dt = dt.newbyteorder("=") if dt.byteorder not in "=|" else dt
    try:
        _cache[dtype] = dt
    except TypeError:  # unhashable spelling
        pass
    return dt


def check(dt: np.dtype) -> np.dtype:
    """Canonical form of an already-made numpy dtype (raises for unsupported)."""
    return normalize(dt)
