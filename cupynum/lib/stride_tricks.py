"""cupynum.lib.stride_tricks: views with strides of the caller's choosing.

``as_strided`` and ``sliding_window_view`` return views of the same memory (no copy), so
writes through them reach the source as in NumPy.  cupynum has no read-only arrays: the
views are writeable whatever ``writeable`` says (docs/differences.md).  Other names run
through the host fallback.
"""
from __future__ import annotations

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from .._api.creation import asarray as _to_array
from .._array import _make, ndarray
from .._fallback import fallback_proxy as _fallback_proxy

__all__ = ["as_strided", "sliding_window_view"]


def _asarray(x):
    return x if isinstance(x, ndarray) else _to_array(x)


def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """A view of x's memory with the given shape and byte strides.  As in NumPy nothing is
    checked: strides that leave x's memory read or write outside it."""
    x = _asarray(x)
    shape = x.shape if shape is None else tuple(int(n) for n in shape)
    strides = x.strides if strides is None else tuple(int(s) for s in strides)
    if len(shape) != len(strides):
        raise ValueError("mismatch in length of strides and shape")
    return _make(x._buf, x._offset, shape, strides, x.dtype, x._root())


def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """A view of every window of ``window_shape`` sliding over x (along ``axis``); the
    window axes come last."""
    window_shape = (tuple(window_shape) if _np.iterable(window_shape) else (window_shape,))
    x = _asarray(x)
    if any(w < 0 for w in window_shape):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        axis = tuple(range(x.ndim))
        if len(window_shape) != len(axis):
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window_shape)} window_shape "
                             f"elements and `x.ndim` is {x.ndim}.")
    else:
        axis = _normalize_axis_tuple(axis, x.ndim, allow_duplicate=True)
        if len(window_shape) != len(axis):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(window_shape)} window_shape elements and {len(axis)} "
                             f"axes elements.")
    shape = list(x.shape)
    for ax, w in zip(axis, window_shape):
        if shape[ax] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        shape[ax] -= w - 1
    strides = x.strides + tuple(x.strides[ax] for ax in axis)
    return as_strided(x, tuple(shape) + window_shape, strides)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum.lib.stride_tricks' has no attribute {name!r}")
    return _fallback_proxy(_np.lib.stride_tricks, name, "cupynum.lib.stride_tricks")
