"""Advanced indexing and the indexing routines (NumPy: "Indexing routines").

``a[key]`` with integer arrays, lists and boolean masks is decomposed here into what the
backend does (see docs/internals.md, "Gather, scatter, compaction, sort"):

1. the key is normalised (Ellipsis expanded, masks turned into integer arrays by
   ``nonzero``, NumPy's errors raised for bad keys);
2. slices, ``None`` and integers are applied as a view (no copy), the integer-array
   axes kept;
3. the view is transposed so that the array-indexed axes are consecutive (NumPy's rule:
   they stay in place when the advanced indices are adjacent in the key, else they go
   first), the index arrays are broadcast together (shape B);
4. one ``backend.gather(src, indices, axis, out, check)`` (or ``scatter``) moves the data.

Host index arrays (lists, NumPy arrays) are checked and wrapped on the host for free;
device index arrays are checked by the backend, which costs one sync (docs/differences.md).
"""
from __future__ import annotations

import operator

import functools

import numpy as np

from .. import _backends
from .._array import (_make, assign, broadcast_view, empty_array, from_host,
                      install_advanced_indexing, may_overlap, ndarray)
from .._shapes import dim
from .._host_path import host_getitem
from .._backends.base import ElementwiseOp
from .._indexing import int_axis, normalize_axis, slice_axis, zero_d_axis
from .._ufunc import uf
from .creation import arange, asarray, diagonal_view, ones, zeros
from .elementwise import clip, where
from .reductions import sum as _sum

__all__ = ["take", "take_along_axis", "put", "put_along_axis", "place", "putmask", "choose",
           "compress", "extract", "select", "nonzero", "flatnonzero", "argwhere",
           "diagonal", "fill_diagonal", "diag_indices", "diag_indices_from", "tril_indices",
           "tril_indices_from", "triu_indices", "triu_indices_from", "mask_indices", "ix_",
           "ravel_multi_index", "unravel_index", "count_nonzero"]

_INTP = np.dtype(np.intp)
_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
              "integer or boolean arrays are valid indices")


def _asarray(x):
    return asarray(x)


# --- key normalisation -----------------------------------------------------------------------
class _Idx:
    """An integer index array on one axis: ``dev`` (device int64) or ``host`` (NumPy intp,
    already wrapped and bounds-checked); ``in_bounds``: ``dev`` holds only valid
    non-negative indices (a mask's ``nonzero``), so the gather needs no check of them."""

    __slots__ = ("dev", "host", "in_bounds")

    def __init__(self, dev=None, host=None, in_bounds=False):
        self.dev, self.host, self.in_bounds = dev, host, in_bounds

    @property
    def shape(self):
        return (self.dev if self.dev is not None else self.host).shape


def _classify(k):
    """('none'|'ellipsis'|'slice'|'int'|'bool0'|'mask'|'array', payload)."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ellipsis", None
    if type(k) is slice:
        return "slice", k
    if isinstance(k, (bool, np.bool_)):
        return "bool0", bool(k)
    if isinstance(k, (int, np.integer)):
        return "int", int(k)
    if isinstance(k, ndarray):
        if k.dtype.kind == "b":
            return ("bool0", bool(k)) if k.ndim == 0 else ("mask", k)
        if k.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        if k.ndim == 0:
            return "int", int(k)  # a sync, as NumPy reads it on the host too
        return "array", k
    if isinstance(k, (float, complex, str, bytes, np.floating, np.complexfloating)):
        raise IndexError(_BAD_INDEX)
    if hasattr(k, "__index__") and not hasattr(k, "__len__"):
        return "int", operator.index(k)
    try:
        h = np.asarray(k)
    except Exception:
        raise IndexError(_BAD_INDEX) from None
    if h.dtype == object:
        raise IndexError(_BAD_INDEX)
    if h.size == 0 and h.dtype.kind not in "biu" and not isinstance(k, np.ndarray):
        h = h.astype(_INTP)  # [] is an empty integer index; an empty float array is not
    if h.dtype.kind == "b":
        return ("bool0", bool(h)) if h.ndim == 0 else ("mask", h)
    if h.dtype.kind not in "iu":
        if isinstance(k, (list, tuple)) or isinstance(k, np.ndarray):
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        raise IndexError(_BAD_INDEX)
    if h.ndim == 0:
        return "int", int(h)
    return "array", h


def _mask_to_indices(mask, dims_sizes, first_axis):
    """A k-d boolean mask (device or host) over axes of sizes ``dims_sizes`` -> k _Idx."""
    if tuple(mask.shape) != tuple(dims_sizes):
        for j, (m, n) in enumerate(zip(mask.shape, dims_sizes)):
            if m != n and m != 0:  # as NumPy: a size-0 mask axis selects nothing from any
                raise IndexError(f"boolean index did not match indexed array along axis "
                                 f"{first_axis + j}; size of axis is {n} but size of "
                                 f"corresponding boolean axis is {m}")
    if isinstance(mask, np.ndarray):
        return [_Idx(host=x.astype(_INTP, copy=False)) for x in np.nonzero(mask)]
    return [_Idx(dev=x, in_bounds=True) for x in nonzero(mask)]  # (no check: no sync)


def _normalize_key(a, key):
    """The key as a list of ('none'|'slice'|'int'|'idx', payload), Ellipsis expanded,
    masks split into per-axis index arrays (each tagged with its axis of ``a``)."""
    if type(key) is not tuple:
        key = (key,)
    items = [_classify(k) for k in key]
    consumed = sum(1 if t in ("slice", "int", "array") else (p.ndim if t == "mask" else 0)
                   for t, p in items)
    n_ell = sum(t == "ellipsis" for t, _ in items)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but "
                         f"{consumed} were indexed")
    out, axis = [], 0
    for t, p in items:
        if t == "ellipsis":
            for _ in range(a.ndim - consumed):
                out.append(("slice", slice(None), axis))
                axis += 1
        elif t == "none":
            out.append(("none", None, None))
        elif t == "bool0":  # a new axis of length 1 indexed by [0] (True) or [] (False)
            out.append(("newidx", _Idx(host=np.zeros(1 if p else 0, _INTP)), None))
        elif t == "slice":
            out.append(("slice", p, axis))
            axis += 1
        elif t == "int":
            n = a.shape[axis]
            if not -n <= p < n:
                raise IndexError(f"index {p} is out of bounds for axis {axis} with size {n}")
            out.append(("int", p + n if p < 0 else p, axis))
            axis += 1
        elif t == "mask":
            sizes = a.shape[axis:axis + p.ndim]
            for ix in _mask_to_indices(p, sizes, axis):
                out.append(("idx", ix, axis))
                axis += 1
        else:  # integer array
            n = a.shape[axis]
            if isinstance(p, np.ndarray):
                h = p.astype(_INTP, copy=False)
                bad = (h < -n) | (h >= n)
                if bad.any():
                    raise IndexError(f"index {int(h[bad].flat[0])} is out of bounds for axis "
                                     f"{axis} with size {n}")
                out.append(("idx", _Idx(host=np.where(h < 0, h + n, h)), axis))
            else:
                out.append(("idx", _Idx(dev=p), axis))
            axis += 1
    while axis < a.ndim:
        out.append(("slice", slice(None), axis))
        axis += 1
    return out


class _Plan:
    """What a gather/scatter needs: the source view (indexed axes consecutive from
    ``axis``), the device index arrays broadcast to B, which need checking, and the result
    shape."""

    __slots__ = ("src", "indices", "axis", "shape", "checks", "axes")


def _plan(a, key):
    items = _normalize_key(a, key)
    adv = [i for i, (t, _, _) in enumerate(items) if t in ("idx", "newidx", "int")]
    arrays = [i for i, (t, _, _) in enumerate(items) if t in ("idx", "newidx")]
    if not arrays:
        return None
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    # The view: slices applied, ints applied, None and newidx as new unit axes.
    offset, shape, strides = a._offset, [], []
    vpos = {}  # item index -> dim in the view (array-indexed dims)
    orig_axis = {}
    for i, (t, p, ax) in enumerate(items):
        if t == "none":
            shape.append(1)
            strides.append(0)
        elif t == "newidx":
            vpos[i] = len(shape)
            orig_axis[i] = 0
            shape.append(1)
            strides.append(0)
        elif t == "slice":
            moved, length, stride = slice_axis(p, a.shape[ax], a.strides[ax])
            offset += moved
            shape.append(length)
            strides.append(stride)
        elif t == "int":
            offset += p * a.strides[ax]
        else:
            vpos[i] = len(shape)
            orig_axis[i] = ax
            shape.append(a.shape[ax])
            strides.append(a.strides[ax])
    view = _make(a._buf, offset, tuple(shape), tuple(strides), a.dtype, a._root())
    dims = [vpos[i] for i in arrays]
    rest = [d for d in range(view.ndim) if d not in dims]
    if adjacent:
        axis = dims[0]
        order = rest[:axis] + dims + rest[axis:]
    else:
        axis = 0
        order = dims + rest
    src = view.transpose(order) if order != list(range(view.ndim)) else view
    idx = [items[i][1] for i in arrays]
    try:
        bshape = np.broadcast_shapes(*[ix.shape for ix in idx])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + " ".join(str(ix.shape) for ix in idx)) from None
    devs, checks = [], []
    for ix in idx:
        if ix.dev is not None:
            d = ix.dev if ix.dev.dtype == _INTP else ix.dev.astype(_INTP)
            checks.append(not ix.in_bounds)
        else:
            d = from_host(ix.host)
            checks.append(False)
        devs.append(broadcast_view(d, bshape))
    k = len(idx)
    plan = _Plan()
    plan.src, plan.indices, plan.axis = src, devs, axis
    plan.shape = src.shape[:axis] + bshape + src.shape[axis + k:]
    plan.checks = checks
    plan.axes = [orig_axis[i] for i in arrays]
    return plan


def _raise_bad(plan, bad):
    j, value = bad
    n = plan.src.shape[plan.axis + j]
    raise IndexError(f"index {value} is out of bounds for axis {plan.axes[j]} with size {n}")


def _gather(plan):
    out = empty_array(plan.shape, plan.src.dtype)
    if out._size:
        backend = _backends.for_arrays(plan.src, *plan.indices, out)
        bad = backend.gather(plan.src, plan.indices, plan.axis, out, any(plan.checks))
        if bad is not None:
            _raise_bad(plan, bad)
    elif any(plan.checks) and plan.src._size == 0:
        pass
    return out


def getitem_advanced(a, key):
    res = host_getitem(a, key)
    if res is not None:
        return res
    if type(key) is ndarray and key.dtype == _INTP and len(a._shape) == 1 and key._c_contig:
        res = _gather_flat(a, key)
        if res is not None:
            return res
    if (isinstance(key, ndarray) and key.dtype.kind == "b" and key.ndim >= 1
            and key.shape == a.shape):
        res = _mask_select(a, key)
        if res is not None:
            return res
    plan = _plan(a, key)
    if plan is None:  # only basic parts after all (e.g. 0-d integer arrays)
        return a[tuple(_basic(k) for k in (key if type(key) is tuple else (key,)))]
    return _gather(plan)


def _gather_flat(a, idx):
    """``a[idx]`` for a 1-D ``a`` and a C-contiguous intp device ``idx`` through the
    backend's ``gather_flat`` where it takes the layout; else None."""
    out = empty_array(idx._shape, a.dtype)
    if not out._size:
        return out
    bad = _backends.for_arrays(a, idx).gather_flat(a, idx, out)
    if bad is False:
        return None
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for axis 0 with size {a._shape[0]}")
    return out


def _mask_select(a, mask):
    """``a[mask]`` for a device mask of ``a``'s shape through the backend's ``mask_select``
    (selected elements written directly, one sync), where it takes the layout; else None
    (the caller takes nonzero + gather)."""
    res = _backends.for_arrays(a, mask).mask_select(a, mask)
    if res is None:
        return None
    buf, count = res
    return _make(buf, 0, (count,), (a.dtype.itemsize,), a.dtype, None)


def _basic(k):
    t, p = _classify(k)
    return p if t in ("int", "slice") else k


def _value_array(value, dtype):
    """``value`` as a device array of ``dtype`` (NumPy's setitem conversions)."""
    if isinstance(value, ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    if isinstance(value, (int, float, complex, bool, np.generic)):
        host = np.empty((), dtype)
        host[()] = value
        return from_host(host)
    host = np.asarray(value)
    if host.dtype.kind not in "biufc":
        host = np.asarray(value, dtype=dtype)
    return from_host(host.astype(dtype))


def setitem_advanced(a, key, value):
    # a[mask] = scalar over leading axes: a select on the device, no sync.
    if (isinstance(key, ndarray) and key.dtype.kind == "b" and key.ndim >= 1
            and key.shape == a.shape[:key.ndim] and _is_scalar(value)):
        _masked_fill(a, key, value)
        return
    plan = _plan(a, key)
    if plan is None:
        a[tuple(_basic(k) for k in (key if type(key) is tuple else (key,)))] = value
        return
    v = _value_array(value, a.dtype)
    try:
        v = broadcast_view(v, plan.shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be "
                         f"broadcast to indexing result of shape {plan.shape}") from None
    if may_overlap(v, a):
        v = v.copy()
    if not v._size:
        return
    backend = _backends.for_writing(plan.src, *plan.indices, v)
    bad = backend.scatter(plan.src, plan.indices, plan.axis, v, any(plan.checks))
    if bad is not None:
        _raise_bad(plan, bad)


def _is_scalar(v):
    return isinstance(v, (int, float, complex, bool, np.generic)) or (
        isinstance(v, ndarray) and v.ndim == 0)


def _masked_fill(a, mask, value):
    if isinstance(value, ndarray):
        value = value.astype(a.dtype)
        ops_v = broadcast_view(value, a.shape)
    else:
        host = np.empty((), a.dtype)
        host[()] = value
        ops_v = host[()]
    if not a._size:
        return
    m = mask.reshape(mask.shape + (1,) * (a.ndim - mask.ndim))
    m = broadcast_view(m, a.shape)
    op = ElementwiseOp("where", "where_", ("?", a.dtype.char, a.dtype.char, a.dtype.char), 3)
    _backends.for_writing(a, m, ops_v).elementwise(op, (m, ops_v, a), (a,))


# --- nonzero and friends ---------------------------------------------------------------------
def _flatnonzero_bool(mask):
    """Flat (C-order) indices of the True elements of a bool array (one sync)."""
    if not mask._c_contig:
        mask = mask.copy()
    buf, count = _backends.for_arrays(mask).flatnonzero(mask)
    return _make(buf, 0, (count,), (8,), _INTP, None)


def _as_bool(a):
    if a.dtype.kind == "b":
        return a
    return uf.not_equal(a, 0)


def flatnonzero(a):
    a = _asarray(a)
    return _flatnonzero_bool(_as_bool(a).reshape(-1))


def _unravel(flat, shape):
    out, stride = [], 1
    strides = []
    for n in reversed(shape):
        strides.append(stride)
        stride *= n
    strides = strides[::-1]
    for n, s in zip(shape, strides):
        v = flat if s == 1 else uf.floor_divide(flat, s)
        out.append(v if v is flat and len(shape) == 1 else uf.remainder(v, n) if n else v)
    return out


def nonzero(a):
    a = _asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead. If the context of this "
                         "error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.")
    flat = _flatnonzero_bool(_as_bool(a).reshape(-1))
    if a.ndim == 1:
        return (flat,)
    return tuple(_unravel(flat, a.shape))


def argwhere(a):
    a = _asarray(a)
    if a.ndim == 0:
        n = _flatnonzero_bool(_as_bool(a).reshape(1)).size
        return empty_array((n, 0), _INTP)
    columns = nonzero(a)
    out = empty_array((columns[0].size, len(columns)), _INTP)
    for d, column in enumerate(columns):
        out[:, d] = column
    return out


def count_nonzero(a, axis=None, *, keepdims=False):
    a = _asarray(a)
    if axis is None and not keepdims:
        if not a.size:
            return from_host(np.asarray(0, _INTP))
        return from_host(np.asarray(_flatnonzero_bool(_as_bool(a).reshape(-1)).size, _INTP))
    # NumPy: ``a.astype(bool).sum(axis, dtype=intp, keepdims=keepdims)``
    return _sum(_as_bool(a), axis=axis, dtype=_INTP, keepdims=keepdims)


# --- take / put ------------------------------------------------------------------------------
def _mode_indices(ind, n, mode):
    if mode == "raise":
        return ind, True
    if mode == "wrap":
        if n == 0:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        return uf.remainder(ind, n), False
    if mode == "clip":
        if n == 0:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        return clip(ind, 0, n - 1), False
    raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")


def _index_array(ind):
    """An index argument of take/put as (device int64 array, check needed?).  As in NumPy,
    an array must cast to intp safely (same kind), while anything else converts as
    ``asarray(ind, intp)`` does: 1.0, [1.0] and '1' are index 1."""
    if isinstance(ind, np.ndarray) and ind.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {ind.dtype!r} to dtype('int64') "
                        f"according to the rule 'same_kind'")
    if isinstance(ind, ndarray):
        if ind.dtype.kind not in "iu":
            if ind.dtype.kind == "b":
                return ind.astype(_INTP), True
            raise TypeError(f"Cannot cast array data from {ind.dtype!r} to dtype('int64') "
                            f"according to the rule 'safe'")
        return (ind if ind.dtype == _INTP else ind.astype(_INTP)), True
    h = ind if isinstance(ind, np.ndarray) else np.asarray(ind, dtype=_INTP)
    return from_host(h.astype(_INTP, copy=False)), True


def take(a, indices, axis=None, out=None, mode="raise"):
    a = _asarray(a)
    if axis is None or zero_d_axis(a.ndim, axis):  # (NumPy: a 0-d array takes as 1-d)
        a, axis = a.reshape(-1), 0
    else:
        axis = normalize_axis(int_axis(axis), a.ndim)
    ind, _ = _index_array(indices)
    n = a.shape[axis]
    ind, check = _mode_indices(ind, n, mode)
    src = a
    plan = _Plan()
    plan.src, plan.indices, plan.axis = src, [ind], axis
    plan.shape = a.shape[:axis] + ind.shape + a.shape[axis + 1:]
    plan.checks, plan.axes = [check], [axis]
    res = _gather(plan)
    if out is not None:
        if out.shape != res.shape:
            raise ValueError("output array does not match result of ndarray.take")
        _check_take_out(res.dtype, out.dtype)
        assign(out, res)
        return out
    return res


@functools.cache
def _take_out_error(src: np.dtype, out: np.dtype):
    """What NumPy's own ``take`` raises for this pair of dtypes (None: it takes), asked once
    per pair: NumPy versions differ in which direction the cast must be safe."""
    try:
        np.take(np.zeros(1, src), [0], out=np.zeros(1, out))
    except TypeError as e:
        return str(e)
    return None


def _check_take_out(src, out):
    error = _take_out_error(np.dtype(src), np.dtype(out))
    if error is not None:
        raise TypeError(error)


def take_along_axis(arr, indices, axis=-1):
    arr = _asarray(arr)
    indices = _asarray(indices)
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.reshape(-1), 0
    axis = normalize_axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return arr[_fancy_along(arr.shape, indices, axis)]


def _fancy_along(shape, indices, axis):
    key = []
    nd = len(shape)
    for d in range(nd):
        if d == axis:
            key.append(indices)
        else:
            key.append(arange(shape[d]).reshape((1,) * d + (-1,) + (1,) * (nd - d - 1)))
    return tuple(key)


def put_along_axis(arr, indices, values, axis):
    indices = _asarray(indices)
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = arr.reshape(-1)
        if not _shares(flat, arr):
            raise ValueError("put_along_axis with axis=None needs a contiguous array")
        flat[indices] = values
        return None
    axis = normalize_axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    arr[_fancy_along(arr.shape, indices, axis)] = values
    return None


def _shares(v, a):
    return v._buf is a._buf


def _cycled(v, n):
    """``numpy.resize(v, n)``: v's values in C order, repeated to length n (zeros when v is
    empty)."""
    flat = v.reshape(-1)
    if not flat.size or not n:
        return zeros(n, v.dtype)
    return take(flat, uf.remainder(arange(n, dtype=_INTP), flat.size))


def put(a, ind, v, mode="raise"):
    if not isinstance(a, ndarray):
        raise TypeError("argument 1 must be cupynum.ndarray, not " + type(a).__name__)
    ind, _ = _index_array(ind)
    ind = ind.reshape(-1)
    n = a.size
    if ind.size == 0:
        return None
    if n == 0:
        raise IndexError("cannot replace elements of an empty array")
    ind, check = _mode_indices(ind, n, mode)
    vals = _value_array(v, a.dtype).reshape(-1)
    if vals.size == 0:
        return None
    if vals.size != ind.size:
        vals = _cycled(vals, ind.size)
    flat = a.reshape(-1) if a._c_contig else a.copy().reshape(-1)
    if may_overlap(vals, a):
        vals = vals.copy()
    plan = _Plan()
    plan.src, plan.indices, plan.axis = flat, [ind], 0
    plan.shape, plan.checks, plan.axes = ind.shape, [check], [0]
    bad = _backends.for_writing(flat, ind, vals).scatter(flat, [ind], 0, vals, check)
    if bad is not None:
        _raise_bad(plan, bad)
    if not a._c_contig:
        assign(a, flat.reshape(a.shape))
    return None


def place(arr, mask, vals):
    if not isinstance(arr, ndarray):
        raise TypeError("argument 1 must be cupynum.ndarray")
    mask = _asarray(mask)
    if mask.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    idx = _flatnonzero_bool(_as_bool(mask).reshape(-1))
    if idx.size == 0:
        return None
    vals = _value_array(vals, arr.dtype).reshape(-1)
    if vals.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    put(arr, idx, vals)
    return None


def putmask(a, mask, values):
    if not isinstance(a, ndarray):
        raise TypeError("argument a of putmask must be a cupynum.ndarray")
    mask = _asarray(mask)
    if mask.shape != a.shape:
        raise ValueError("putmask: mask and data must be the same size")
    vals = _value_array(values, a.dtype)
    if vals.size == 0:
        if a.size and mask.size:
            raise ValueError("putmask: cannot put values from an empty array")
        return None
    if vals.shape != a.shape:
        vals = _cycled(vals, a.size).reshape(a.shape)
    _masked_fill(a, _as_bool(mask), vals)
    return None


def choose(a, choices, out=None, mode="raise"):
    a = _asarray(a)
    if a.dtype.kind not in "iub":
        raise TypeError("Cannot cast array data from dtype to int64 according to the rule 'safe'")
    choices = [_asarray(c) for c in choices] if not isinstance(choices, ndarray) else list(choices)
    n = len(choices)
    dt = np.result_type(*[c.dtype for c in choices]) if choices else np.dtype(float)
    shape = np.broadcast_shapes(a.shape, *[c.shape for c in choices])
    if not choices:
        raise ValueError("0-length sequence.")
    st = empty_array((n,) + shape, dt)  # the choices stacked along a new first axis
    for i, c in enumerate(choices):
        assign(st[i], broadcast_view(c, shape))
    ind, check = _mode_indices(a.astype(_INTP, copy=False), n, mode)
    ind = broadcast_view(ind, shape)
    key = (ind,) + tuple(arange(m).reshape((-1,) + (1,) * (len(shape) - d - 1))
                         for d, m in enumerate(shape))
    try:
        res = st[key]
    except IndexError:
        raise ValueError("invalid entry in choice array") from None
    if out is not None:
        assign(out, res)
        return out
    return res


def compress(condition, a, axis=None, out=None):
    a = _asarray(a)
    cond = _asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis(int_axis(axis), a.ndim)
    n = a.shape[axis]
    if cond.size > n:
        raise IndexError(f"index {cond.size - 1} is out of bounds for axis {axis} with size {n}")
    idx = _flatnonzero_bool(_as_bool(cond))
    res = take(a, idx, axis=axis)
    if out is not None:
        assign(out, res)
        return out
    return res


def extract(condition, arr):
    arr = _asarray(arr)
    cond = _asarray(condition)
    return take(arr.reshape(-1), _flatnonzero_bool(_as_bool(cond).reshape(-1)))


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [c if isinstance(c, ndarray) else _asarray(c) if not np.isscalar(c) else c
               for c in choicelist]
    conds = [_asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype.kind != "b":
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    dts = [c.dtype if isinstance(c, ndarray) else c for c in choices]
    dt = np.result_type(*dts, default if not isinstance(default, ndarray) else default.dtype)
    res = _asarray(np.asarray(default, dt) if not isinstance(default, ndarray)
                   else default.astype(dt))
    for c, v in zip(conds[::-1], choices[::-1]):
        v = v.astype(dt) if isinstance(v, ndarray) else dt.type(v)
        res = where(c, v, res)
    shape = np.broadcast_shapes(*[c.shape for c in conds],
                                *[c.shape for c in choices if isinstance(c, ndarray)])
    if res.shape != shape:
        res = broadcast_view(res, shape).copy()
    return res


# --- diagonals and index generators ---------------------------------------------------------
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _asarray(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [d for d in range(a.ndim) if d not in (a1, a2)]
    return diagonal_view(a.transpose(rest + [a1, a2]), operator.index(offset))


def fill_diagonal(a, val, wrap=False):
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        n_rows, n_cols = a.shape
        step = n_cols + 1
        end = None if wrap else n_cols * n_cols
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(a.shape[0] ** k for k in range(1, a.ndim))
        end = None
    if a._c_contig:
        flat = a.reshape(-1)
        target = flat[:end:step]
        if _is_scalar(val):
            assign(target, val)
        else:
            _assign_cycled(target, val, a.dtype)
        return None
    tmp = a.copy()
    fill_diagonal(tmp, val, wrap)
    assign(a, tmp)
    return None


def _assign_cycled(target, val, dtype):
    v = _value_array(val, dtype).reshape(-1)
    if v.size == 0 or target.size == 0:
        return
    if v.size != target.size:
        v = _cycled(v, target.size)
    assign(target, v)


def _host_tuple(f, *args, **kwargs):
    return tuple(from_host(np.asarray(x)) for x in f(*args, **kwargs))


def diag_indices(n, ndim=2):
    return _host_tuple(np.diag_indices, n, ndim)


def diag_indices_from(arr):
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def tril_indices(n, k=0, m=None):
    return _host_tuple(np.tril_indices, n, k, m)


def triu_indices(n, k=0, m=None):
    return _host_tuple(np.triu_indices, n, k, m)


def tril_indices_from(arr, k=0):
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(arr.shape[-2], k=k, m=arr.shape[-1])


def triu_indices_from(arr, k=0):
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(arr.shape[-2], k=k, m=arr.shape[-1])


def mask_indices(n, mask_func, k=0):
    m = ones((n, n), int)
    a = mask_func(m, k)
    return nonzero(_asarray(a) != 0)


def ix_(*args):
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if isinstance(new, ndarray):
            dev = new
        else:
            h = np.asarray(new)
            if h.size == 0:
                h = h.astype(_INTP)
            dev = from_host(h)
        if dev.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if dev.dtype.kind == "b":
            dev = nonzero(dev)[0]
        out.append(dev.reshape((1,) * k + (dev.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = tuple(dim(d) for d in (dims if isinstance(dims, (tuple, list)) else (dims,)))
    idx = [_asarray(i) for i in multi_index]
    if len(idx) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    for i in idx:
        if i.dtype.kind not in "iu":
            raise TypeError("only int indices permitted")
    strides, s = [], 1
    order_dims = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    st = [0] * len(dims)
    for d in order_dims:
        st[d] = s
        s *= dims[d]
    res = None
    for i, n, m, stv in zip(idx, dims, modes, st):
        i = i.astype(_INTP)
        if m == "raise":
            if i.size:
                h = i._host()
                bad = (h < 0) | (h >= n)
                if bad.any():
                    raise ValueError("invalid entry in coordinates array")
        else:
            i, _ = _mode_indices(i, n, m)
        term = uf.multiply(i, stv) if stv != 1 else i
        res = term if res is None else uf.add(res, term)
    return res


def unravel_index(indices, shape, order="C"):
    shape = tuple(dim(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    ind = _asarray(indices)
    if ind.dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    total = 1
    for n in shape:
        total *= n
    if ind.size:
        h = ind._host()  # a sync: NumPy raises for out-of-range indices
        bad = (h < 0) | (h >= total)
        if bad.any():
            raise ValueError(f"index {int(h[bad].flat[0])} is out of bounds for array with "
                             f"size {total}")
    ind = ind.astype(_INTP)
    out = [None] * len(shape)
    rng = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    cur = ind
    for d in rng:
        out[d] = uf.remainder(cur, shape[d])
        cur = uf.floor_divide(cur, shape[d])
    return tuple(out)


install_advanced_indexing(getitem_advanced, setitem_advanced)
