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
    if not dt.isnative:  # '>f8' etc. (data from files): stored, and computed, natively
        dt = dt.newbyteorder("=")
    dt = _CANONICAL.get(dt, dt)
    if dt not in SUPPORTED_DTYPES:
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


def normalize_for_view(dtype) -> np.dtype:
    """``normalize`` for a dtype that reinterprets existing bytes (``view``, ``getfield``,
    ``ndarray(buffer=...)``): there a foreign byte order would change the values, and
    cupynum arrays are native, so it is refused rather than silently converted."""
    if not np.dtype(dtype).isnative:
        raise TypeError(f"cupynum arrays are stored in native byte order; a view as "
                        f"{np.dtype(dtype)!r} would reinterpret their bytes (use astype, or "
                        "byteswap() for the swapped values)")
    return normalize(dtype)


# A Python bool is not weak in NEP 50: it resolves as numpy.bool.
BOOL = np.dtype(np.bool_)


def resolution_type(x):
    """What NumPy's resolution sees for a non-array operand: Python int, float and complex
    are weak (their type stands for them); bools and NumPy scalars have a dtype."""
    if isinstance(x, np.generic):
        return normalize(x.dtype)
    if isinstance(x, bool):
        return BOOL
    for t in (int, float, complex):
        if isinstance(x, t):
            return t
    raise TypeError(f"unsupported operand type {type(x).__name__}")
