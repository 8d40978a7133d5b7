"""Basic indexing as view arithmetic: (offset, shape, strides) of the result, no copy.

Advanced keys (integer arrays, lists, boolean masks) are told apart here, so the caller
can take its advanced path.
"""
from __future__ import annotations

import operator

import numpy as np


class AdvancedIndex(Exception):
    """The key holds an integer-array, list or boolean index."""


def _as_int(k):
    """``k`` as a Python int if it is an integer index (not bool), else None."""
    t = type(k)
    if t is int:
        return k
    if t is bool or isinstance(k, (np.bool_, bool)):
        return None
    if isinstance(k, np.integer):
        return int(k)
    if hasattr(k, "_buf") and k.ndim == 0 and k.dtype.kind in "iu":
        return int(k)
    return None


def expand_key(key, ndim: int):
    """The key as a tuple with Ellipsis expanded; raises AdvancedIndex for advanced keys."""
    if type(key) is not tuple:
        key = (key,)
    n_real = 0
    has_ellipsis = False
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            if has_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            has_ellipsis = True
            continue
        if type(k) is slice or _as_int(k) is not None:
            n_real += 1
            continue
        raise AdvancedIndex
    if n_real > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {n_real} were indexed"
        )
    if has_ellipsis:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - n_real) + key[i + 1 :]
    else:
        key = key + (slice(None),) * (ndim - n_real)
    return key


def slice_axis(k: slice, n: int, s: int):
    """(bytes the view's start moves, length, stride) of slice ``k`` over an axis of ``n``
    elements ``s`` bytes apart (an empty view keeps its start)."""
    start, stop, step = k.indices(n)
    length = len(range(start, stop, step))
    return (start * s if length else 0), length, s * step


def basic_view(offset: int, shape, strides, key):
    """Apply a basic-indexing key to a view; returns (offset, shape, strides)."""
    key = expand_key(key, len(shape))
    new_shape, new_strides = [], []
    axis = 0
    for k in key:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        n, s = shape[axis], strides[axis]
        if type(k) is slice:
            moved, length, stride = slice_axis(k, n, s)
            offset += moved
            new_shape.append(length)
            new_strides.append(stride)
        else:
            i = _as_int(k)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            offset += (i + n if i < 0 else i) * s
        axis += 1
    if len(new_shape) > 64:  # NumPy's limit on the number of axes (None keys add them)
        raise IndexError(f"number of dimensions must be within [0, 64], indexing result "
                         f"would have {len(new_shape)}")
    return offset, tuple(new_shape), tuple(new_strides)


def int_axis(axis):
    """``axis`` as NumPy's C-level functions take it (take, repeat, concatenate, squeeze,
    argsort, ...): a bool is refused there, not read as axis 0 or 1."""
    if type(axis) is bool:
        raise TypeError("an integer is required for the axis")
    return axis


def zero_d_axis(ndim: int, axis) -> bool:
    """Whether ``axis`` is NumPy's legacy axis of a 0-d array: an integer 0 or -1 (not a
    tuple, not a bool), which its C-level functions and ufunc reductions accept there."""
    if ndim or axis is None or type(axis) is bool or not hasattr(axis, "__index__"):
        return False
    return operator.index(axis) in (0, -1)


def normalize_axis(axis, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis + ndim if axis < 0 else axis
