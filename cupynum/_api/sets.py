"""Set routines (NumPy: "Set routines"), built on device sort, compare and compaction.

``unique`` is a sort, a neighbour comparison and one compaction (a sync: the number of
unique values decides the output shape); the others follow NumPy's own algorithms over
these pieces.  ``unique(..., axis=k)`` sorts the slices as rows (``lexsort`` over
their columns), then marks the first of each run of equal rows.
"""
from __future__ import annotations

import numpy as np

from .._array import empty_array, from_host
from .._indexing import normalize_axis
from .._ufunc import uf
from . import reductions
from .creation import arange, asarray, empty, full
from .indexing import _flatnonzero_bool
from .manipulation import concatenate, moveaxis
from .reductions import any as _any
from .sorting import argsort, lexsort, searchsorted, sort

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d"]

_INTP = np.dtype(np.intp)


def _asarray(x):
    return asarray(x)


def _group_starts(s, equal_nan):
    """Bool mask over sorted s: True at the first element of each group of equal values."""
    n = s.shape[0]
    mask = empty(n, bool)
    mask[:1] = True
    if n > 1:
        neq = uf.not_equal(s[1:], s[:-1])
        if equal_nan and s.dtype.kind in "fc":
            isn = uf.isnan
            both = uf.logical_and(isn(s[1:]), isn(s[:-1]))
            neq = uf.logical_and(neq, uf.logical_not(both))
        mask[1:] = neq
    return mask


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    ar = _asarray(ar)
    if axis is not None:
        res = _unique_axis(ar, axis, return_index, return_inverse, return_counts)
        if res is not None:
            return res
    flat = ar.reshape(-1)
    n = flat.shape[0]
    need_perm = return_index or return_inverse
    if need_perm:
        perm = argsort(flat, kind="stable")
        s = flat[perm]
    else:
        s = sort(flat)
    mask = _group_starts(s, equal_nan)
    idx = _flatnonzero_bool(mask) if n else empty_array((0,), _INTP)
    res = (s[idx],)
    if return_index:
        res += (perm[idx],)
    if return_inverse:
        inv = empty(n, _INTP)
        if n:
            csum = reductions.cumsum(mask.astype(_INTP))
            inv[perm] = uf.subtract(csum, 1)
        res += (inv.reshape(ar.shape),)
    if return_counts:
        ends = concatenate([idx, from_host(np.asarray([n], _INTP))])
        res += (uf.subtract(ends[1:], ends[:-1]),)
    return res[0] if len(res) == 1 else res


def _unique_axis(ar, axis, return_index, return_inverse, return_counts):
    """NumPy's ``unique(..., axis=k)``: the slices along ``axis`` compared as rows of
    ``(n, m)`` (NumPy's structured view: lexicographic by column, each column in NumPy's
    sort order; rows holding NaN never compare equal, whatever ``equal_nan``)."""
    if ar.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    if isinstance(axis, (tuple, list)):  # NumPy's moveaxis refuses them: its errors
        axes = np.lib.array_utils.normalize_axis_tuple(axis, ar.ndim, "source")
        if len(axes) != 1:
            raise ValueError("`source` and `destination` arguments must have the same number "
                             "of elements")
    axis = normalize_axis(axis, ar.ndim)
    if ar.ndim == 1:  # NumPy: the 1-D path (equal_nan applies)
        return None
    if ar.dtype.kind not in "biufc":
        raise TypeError(f"The axis argument to unique is not supported for dtype {ar.dtype}")
    moved = moveaxis(ar, axis, 0)
    rest = moved.shape[1:]
    n = moved.shape[0]
    m = int(np.prod(rest, dtype=np.intp))
    rows = moved.reshape(n, m)
    if n and m:
        keys = []
        for j in range(m - 1, -1, -1):
            keys.append(rows[:, j])
            if ar.dtype == np.float16:  # NumPy's structured float16 compare puts NaN first
                keys.append(uf.logical_not(uf.isnan(rows[:, j])))
        perm = lexsort(keys)
    else:
        perm = arange(n, dtype=_INTP)
    s = rows[perm] if n else rows
    mask = empty(n, bool)
    mask[:1] = True
    if n > 1:
        mask[1:] = _any(uf.not_equal(s[1:], s[:-1]), axis=1)
    idx = _flatnonzero_bool(mask) if n else empty_array((0,), _INTP)
    uniq = moveaxis(s[idx].reshape((idx.shape[0],) + rest), 0, axis)
    res = (uniq,)
    if return_index:
        res += (perm[idx],)
    if return_inverse:
        inv = empty(n, _INTP)
        if n:
            csum = reductions.cumsum(mask.astype(_INTP))
            inv[perm] = uf.subtract(csum, 1)
        res += (inv,)
    if return_counts:
        ends = concatenate([idx, from_host(np.asarray([n], _INTP))])
        res += (uf.subtract(ends[1:], ends[:-1]),)
    return res[0] if len(res) == 1 else res


def unique_values(x):
    return unique(x, equal_nan=False)


def unique_counts(x):
    from numpy.lib._arraysetops_impl import UniqueCountsResult

    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x):
    from numpy.lib._arraysetops_impl import UniqueInverseResult

    v, inv = unique(x, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(v, inv.reshape(_asarray(x).shape))


def unique_all(x):
    from numpy.lib._arraysetops_impl import UniqueAllResult

    v, i, inv, c = unique(x, True, True, True, equal_nan=False)
    return UniqueAllResult(v, i, inv.reshape(_asarray(x).shape), c)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    el = _asarray(element)
    te = _asarray(test_elements).reshape(-1)
    if te.size == 0:
        return full(el.shape, bool(invert), bool)
    s = sort(te)
    dt = np.result_type(s.dtype, el.dtype)
    s = s.astype(dt, copy=False)
    e = el.astype(dt, copy=False)
    pos = searchsorted(s, e, "left")
    posc = uf.minimum(pos, s.size - 1)
    found = uf.equal(s[posc], e)
    return uf.logical_not(found) if invert else found


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    ar1, ar2 = _asarray(ar1), _asarray(ar2)
    if not assume_unique:
        if return_indices:
            ar1, ind1 = unique(ar1, return_index=True)
            ar2, ind2 = unique(ar2, return_index=True)
        else:
            ar1, ar2 = unique(ar1), unique(ar2)
    else:
        ar1, ar2 = ar1.reshape(-1), ar2.reshape(-1)
    aux = concatenate((ar1, ar2))
    if return_indices:
        aux_sort_indices = argsort(aux, kind="stable")
        aux = aux[aux_sort_indices]
    else:
        aux = sort(aux)
    mask = uf.equal(aux[1:], aux[:-1])
    int1d = aux[:-1][mask]
    if return_indices:
        ar1_indices = aux_sort_indices[:-1][mask]
        ar2_indices = uf.subtract(aux_sort_indices[1:][mask], ar1.size)
        if not assume_unique:
            ar1_indices = ind1[ar1_indices]
            ar2_indices = ind2[ar2_indices]
        return int1d, ar1_indices, ar2_indices
    return int1d


def union1d(ar1, ar2):
    return unique(concatenate((_asarray(ar1), _asarray(ar2)), axis=None))


def setdiff1d(ar1, ar2, assume_unique=False):
    ar1 = _asarray(ar1)
    ar1 = ar1.reshape(-1) if assume_unique else unique(ar1)
    return ar1[isin(ar1, ar2, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    ar1, ar2 = _asarray(ar1), _asarray(ar2)
    if not assume_unique:
        ar1, ar2 = unique(ar1), unique(ar2)
    aux = sort(concatenate((ar1, ar2), axis=None))
    if aux.size == 0:
        return aux
    t = from_host(np.ones(1, bool))
    flag = concatenate((t, uf.not_equal(aux[1:], aux[:-1]), t))
    return aux[uf.logical_and(flag[1:], flag[:-1])]
