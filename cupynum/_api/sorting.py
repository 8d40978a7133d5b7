"""Sorting and searching (NumPy: "Sorting, searching, and counting").

Every sort is one ``backend.sort`` over C-contiguous rows (the sorted axis moved last and
copied if need be).  Floats sort with NaN last; complex in NumPy's order
(``R + Rj < R + nanj < nan + Rj < nan + nanj``).  ``argsort`` is always stable (so it
equals NumPy's ``kind='stable'``, and any valid answer for the other kinds); ``sort`` is
stable when asked for.  ``partition``/``argpartition`` return a full sort, which satisfies
their contract.  ``searchsorted`` on complex values is one stable sort of both operands
(the backends' binary search is for real keys).
"""
from __future__ import annotations

import operator

import numpy as np

from .. import _backends
from .._array import empty_array, ndarray
from .._indexing import int_axis, normalize_axis, zero_d_axis
from .._ufunc import uf
from . import creation, reductions
from .creation import asarray
from .indexing import take, take_along_axis
from .manipulation import concatenate

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted",
           "sort_complex"]

_INTP = np.dtype(np.intp)
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _asarray(x):
    return asarray(x)


def _rows(a, axis):
    """(C-contiguous (rows, n) copy or view of a with ``axis`` last, moved shape, axis)."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(operator.index(axis), 0)  # (TypeError for 1.0 first)
    axis = normalize_axis(axis, a.ndim)
    moved = a if axis == a.ndim - 1 else a.swapaxes(axis, -1)
    src = moved if moved._c_contig else moved.copy()
    n = moved.shape[-1]
    return src.reshape(-1, n) if n else src, moved.shape, axis


def _back(res, moved_shape, axis, ndim):
    res = res.reshape(moved_shape)
    if axis != ndim - 1:
        res = res.swapaxes(axis, -1).copy()
    return res


def _check_kind(kind, stable):
    if kind not in _KINDS:
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
    if stable is not None and kind is not None:
        raise ValueError("`kind` and `stable` parameters can't be provided at the same time. "
                         "Use only one of them.")
    return bool(stable) or kind in ("stable", "mergesort")


def _reversed(a, axis):
    """a reversed along ``axis`` (a view); None flattens first, as sorting does."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    axis = normalize_axis(axis, a.ndim)
    return a[(slice(None),) * axis + (slice(None, None, -1),)], axis


def _descending(sort_func, a, axis, kind, stable):
    """The array API's ``descending=True``: sort the reversed array ascending and reverse
    the result, so that equal elements keep their original order (NaNs come first);
    indices are mapped back to the unreversed axis.  Stable unless ``stable=False`` (the
    array API's default, and what keeps equal elements such as -0.0 and 0.0 in order)."""
    flipped, ax = _reversed(a, axis)
    if stable is None:
        kind, stable = None, True
    res, _ = _reversed(sort_func(flipped, ax, kind, stable=stable), ax)
    if sort_func is argsort:
        from .._ufunc import UFUNCS

        res = UFUNCS["subtract"](flipped.shape[ax] - 1, res)
    return res


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    st = _check_kind(kind, stable)
    a = _asarray(a)
    if descending:
        return _descending(sort, a, axis, kind, stable)
    src, moved, ax = _rows(a, axis)
    nd = 1 if axis is None else a.ndim
    out = empty_array(src.shape, a.dtype)
    if out._size:
        _backends.for_arrays(src, out).sort(src, out, None, st)
    return _back(out, moved, ax, nd)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    _check_kind(kind, stable)
    a = _asarray(a)
    if descending:
        return _descending(argsort, a, axis, kind, stable)
    if zero_d_axis(a.ndim, axis):  # NumPy's legacy: a 0-d array sorts as 1-d here
        a, axis = a.reshape(1), 0
    src, moved, ax = _rows(a, int_axis(axis))
    nd = 1 if axis is None else a.ndim
    out = empty_array(src.shape, _INTP)
    if out._size:
        _backends.for_arrays(src, out).sort(src, None, out, True)
    return _back(out, moved, ax, nd)


def sort_complex(a):
    b = sort(_asarray(a))
    if b.dtype.kind != "c":
        return b.astype(np.complex64 if b.dtype.char in "bhBH" else np.complex128)
    return b


def lexsort(keys, axis=-1):
    if isinstance(keys, ndarray):
        keys = [keys[i] for i in range(keys.shape[0])] if keys.ndim > 1 else [keys]
    keys = [_asarray(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in keys}) != 1:
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        raise np.exceptions.AxisError(axis, 0) if axis not in (-1, 0) else None
    perm = argsort(keys[0], axis=axis, kind="stable")
    for k in keys[1:]:
        kp = take_along_axis(k, perm, axis=axis)
        perm = take_along_axis(perm, argsort(kp, axis=axis, kind="stable"), axis=axis)
    return perm


def _check_kth(kth, n):
    ks = np.atleast_1d(np.asarray(kth._host() if isinstance(kth, ndarray) else kth))
    if ks.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    for k in ks.ravel():
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    a = _asarray(a)
    n = a.size if axis is None else (a.shape[normalize_axis(axis, a.ndim)] if a.ndim else 0)
    _check_kth(kth, n)
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    a = _asarray(a)
    n = a.size if axis is None else (a.shape[normalize_axis(axis, a.ndim)] if a.ndim else 0)
    _check_kth(kth, n)
    return argsort(a, axis=axis)


def searchsorted(a, v, side="left", sorter=None):
    a = _asarray(a)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array" if a.ndim > 1 else
                         "object of too small depth for desired array")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        sorter = _asarray(sorter)
        if sorter.shape != a.shape:
            raise ValueError("sorter.size must equal a.size")
        a = take(a, sorter)
    v = _asarray(v)
    dt = np.result_type(a.dtype, v.dtype)
    a = a.astype(dt, copy=False)
    v = v.astype(dt, copy=False)
    if dt.kind == "c":
        return _searchsorted_merge(a, v, side)
    out = empty_array(v.shape, _INTP)
    if out._size:
        _backends.for_arrays(a, v, out).searchsorted(a, v, side, out)
    return out


def _searchsorted_merge(a, v, side):
    """searchsorted by one stable sort of a and v together (complex values, whose order
    the backends' binary search does not know): v goes before a for 'left' (so equal
    elements of a come after it), after a for 'right'; the answer for v[i] is the number
    of a's elements sorted before it.  No host round trip; ``a`` must be sorted."""
    n, m = a.shape[0], v._size
    if m == 0:
        return empty_array(v.shape, _INTP)
    vf = v.reshape(-1)
    left = side == "left"
    perm = argsort(concatenate([vf, a] if left else [a, vf]), kind="stable")
    pos = empty_array((n + m,), _INTP)
    pos[perm] = creation.arange(n + m, dtype=_INTP)  # sorted position of each element
    is_v = uf.less(perm, m) if left else uf.greater_equal(perm, n)
    v_upto = reductions.cumsum(is_v, dtype=_INTP)  # v elements at or before each position
    pv = pos[:m] if left else pos[n:]
    return uf.subtract(uf.add(pv, 1), v_upto[pv]).reshape(v.shape)
