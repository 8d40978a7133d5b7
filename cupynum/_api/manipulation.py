"""Array manipulation (NumPy: "Array manipulation routines").

Views wherever NumPy gives views (transposes, flips, broadcasting, splits, squeeze,
expand_dims): no copy, no kernel.  Everything that moves data is a composition of views and
``backend.copy`` (strided copy with cast) or ``backend.gather`` (through indexing), so this
module has no kernels of its own.  Index layouts that only depend on shapes (pad's
reflect/wrap maps, insert/delete positions, repeat counts given on the host) are computed
with NumPy on the host and applied with one gather.  pad's linear_ramp and statistic modes
and odd reflections follow NumPy's own algorithm (axis by axis, in place on the padded array)
with device ufuncs and reductions; only a callable mode or a dict pad_width goes to NumPy.
"""
from __future__ import annotations

import operator

import numpy as np

from .._array import (_make, _shape_tuple, assign, broadcast_view, empty_array, from_host,
                      may_overlap, ndarray)
from .. import _backends
from .._shapes import _prod, dim
from .._dtypes import normalize
from .._indexing import int_axis, normalize_axis
from .._ufunc import uf
from .creation import asarray, zeros
from .indexing import _as_bool, _masked_fill, flatnonzero, take
from .reductions import argmax
from .reductions import all as _all
from .reductions import any as _any

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
           "moveaxis", "rollaxis", "squeeze", "expand_dims", "broadcast_to",
           "broadcast_arrays", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d",
           "concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack",
           "block", "split", "array_split", "hsplit", "vsplit", "dsplit",
           "unstack", "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90",
           "resize", "trim_zeros", "insert", "delete", "append", "copyto",
           "asarray_chkfinite"]

broadcast_shapes = np.broadcast_shapes
_INTP = np.dtype(np.intp)


def _asarray(x):
    return asarray(x)


def _axes(axis, ndim):
    if isinstance(axis, (int, np.integer)) or hasattr(axis, "__index__"):
        axis = (axis,)
    out = tuple(normalize_axis(a, ndim) for a in axis)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return out


# --- views -----------------------------------------------------------------------------------
def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    return _asarray(a).reshape(shape, order=order, copy=copy)


def ravel(a, order="C"):
    return _asarray(a).ravel(order)


def transpose(a, axes=None):
    a = _asarray(a)
    return a.transpose() if axes is None else a.transpose(axes)


def permute_dims(a, /, axes=None):
    return transpose(a, axes)


def matrix_transpose(x, /):
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.swapaxes(-1, -2)


def swapaxes(a, axis1, axis2):
    return _asarray(a).swapaxes(axis1, axis2)


def moveaxis(a, source, destination):
    a = _asarray(a)
    src = _axes(source, a.ndim)
    dst = _axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def rollaxis(a, axis, start=0):
    a = _asarray(a)
    n = a.ndim
    axis = normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but "
                                      f"{start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return a.transpose(axes)


def squeeze(a, axis=None):
    return _asarray(a).squeeze(axis)


def expand_dims(a, axis):
    a = _asarray(a)
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    nd = a.ndim + len(axis)
    axes = _axes(axis, nd)
    it = iter(a.shape)
    shape = tuple(1 if d in axes else next(it) for d in range(nd))
    return a.reshape(shape)


def broadcast_to(array, shape, subok=False):
    a = _asarray(array)
    shape = (dim(shape),) if not isinstance(shape, (tuple, list)) else tuple(
        dim(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    if a.ndim > len(shape):
        raise ValueError(f"input operand has more dimensions than allowed by the axis remapping")
    try:
        np.broadcast_shapes(a.shape, shape)
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape {shape}") from None
    if np.broadcast_shapes(a.shape, shape) != shape:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape {shape}")
    return broadcast_view(a, shape)


def broadcast_arrays(*args, subok=False):
    arrs = [_asarray(a) for a in args]
    shape = np.broadcast_shapes(*[a.shape for a in arrs])
    return tuple(broadcast_view(a, shape) for a in arrs)


def _atleast(arys, nd, where):
    res = []
    for a in arys:
        a = _asarray(a)
        if a.ndim < nd:
            if nd == 1 or a.ndim == 0:
                a = a.reshape((1,) * nd)
            elif nd == 2:
                a = a.reshape(1, -1) if a.ndim == 1 else a
            elif a.ndim == 1:
                a = a.reshape(1, -1, 1)
            else:
                a = a.reshape(a.shape + (1,))
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    return _atleast(arys, 1, None)


def atleast_2d(*arys):
    return _atleast(arys, 2, None)


def atleast_3d(*arys):
    return _atleast(arys, 3, None)


def flip(m, axis=None):
    m = _asarray(m)
    axes = range(m.ndim) if axis is None else _axes(axis, m.ndim)
    off, strides = m._offset, list(m._strides)
    if m._size:
        for d in axes:
            off += (m._shape[d] - 1) * strides[d]
    for d in axes:
        strides[d] = -strides[d]
    return _make(m._buf, off, m._shape, tuple(strides), m.dtype, m._root())


def fliplr(m):
    m = _asarray(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m):
    m = _asarray(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    m = _asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return flip(m, axes[1]).transpose(order)
    return flip(m.transpose(order), axes[1])


def split(ary, indices_or_sections, axis=0):
    ary = _asarray(ary)
    if not hasattr(indices_or_sections, "__len__"):
        n = ary.shape[normalize_axis(axis, ary.ndim)]
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if n % sections:
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    ary = _asarray(ary)
    axis = normalize_axis(axis, ary.ndim)
    n = ary.shape[axis]
    if hasattr(indices_or_sections, "__len__"):
        bounds = [0] + [operator.index(i) for i in indices_or_sections] + [n]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extras = divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        bounds = list(np.cumsum(sizes))
    pre = (slice(None),) * axis
    return [ary[pre + (slice(int(bounds[i]), int(bounds[i + 1])),)]
            for i in range(len(bounds) - 1)]


def hsplit(ary, indices_or_sections):
    ary = _asarray(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    ary = _asarray(ary)
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    ary = _asarray(ary)
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def unstack(x, /, *, axis=0):
    x = _asarray(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return tuple(moveaxis(x, axis, 0))


# --- joining ---------------------------------------------------------------------------------
def _check_casting(src_dt, dst_dt, casting):
    if not np.can_cast(src_dt, dst_dt, casting=casting):
        raise TypeError(f"Cannot cast array data from {src_dt!r} to {dst_dt!r} according to "
                        f"the rule {casting!r}")


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if isinstance(arrays, ndarray):
        arrays = list(arrays)
    arrs = [_asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to concatenate")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    if axis is None:
        arrs = [a.reshape(-1) for a in arrs]
        axis = 0
    int_axis(axis)
    if arrs[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    nd = arrs[0].ndim
    axis = normalize_axis(axis, nd)
    for i, a in enumerate(arrs[1:], 1):
        if a.ndim != nd:
            raise ValueError(f"all the input array dimensions except for the concatenation axis "
                             f"must match exactly, but along dimension 0, the array at index 0 "
                             f"has {nd} dimension(s) and the array at index {i} has {a.ndim} "
                             f"dimension(s)" if a.ndim else
                             "zero-dimensional arrays cannot be concatenated")
        for d in range(nd):
            if d != axis and a.shape[d] != arrs[0].shape[d]:
                raise ValueError(f"all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array "
                                 f"at index 0 has size {arrs[0].shape[d]} and the array at "
                                 f"index {i} has size {a.shape[d]}")
    if dtype is not None:
        dt = normalize(dtype)
    elif out is not None:
        dt = out.dtype
    else:
        dt = np.result_type(*[a.dtype for a in arrs])
    for a in arrs:
        _check_casting(a.dtype, dt, casting)
    shape = list(arrs[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrs)
    shape = tuple(shape)
    if out is not None:
        if out.shape != shape:
            raise ValueError("Output array is the wrong shape")
        res = out
    else:  # (allocated where the copies run, as the parts' placement decides)
        dt = normalize(dt)
        res = empty_array(shape, dt, backend=_backends.for_result(
            _prod(shape) * dt.itemsize, *arrs))
    pos, pre = 0, (slice(None),) * axis
    for a in arrs:
        m = a.shape[axis]
        if m:
            assign(res[pre + (slice(pos, pos + m),)], a)
        pos += m
    return res


def concat(arrays, /, *, axis=0):
    return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrs = [_asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("need at least one array to stack")
    if len({a.shape for a in arrs}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis(axis, arrs[0].ndim + 1)
    expanded = [expand_dims(a, axis) for a in arrs]
    return concatenate(expanded, axis=axis, out=out, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = atleast_2d(*tup)
    arrs = [arrs] if isinstance(arrs, ndarray) else arrs
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


if hasattr(np, "row_stack"):  # NumPy 2.5 removed it; cupynum has it where NumPy does
    row_stack = vstack
    __all__.append("row_stack")


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = atleast_1d(*tup)
    arrs = [arrs] if isinstance(arrs, ndarray) else arrs
    if arrs and arrs[0].ndim == 1:
        return concatenate(arrs, 0, dtype=dtype, casting=casting)
    return concatenate(arrs, 1, dtype=dtype, casting=casting)


def dstack(tup):
    arrs = atleast_3d(*tup)
    arrs = [arrs] if isinstance(arrs, ndarray) else arrs
    return concatenate(arrs, 2)


def column_stack(tup):
    arrs = []
    for v in tup:
        a = _asarray(v)
        if a.ndim < 2:
            a = a.reshape(-1, 1) if a.ndim == 1 else a.reshape(1, 1)
        arrs.append(a)
    return concatenate(arrs, 1)


def _block_depth(x, index=()):
    """(depth, first array's index path) of a nested-list block; NumPy's errors."""
    if isinstance(x, tuple):
        raise TypeError(f"arrays is a tuple. Only lists can be used to arrange blocks, and "
                        f"np.block does not allow implicit conversion from tuple to ndarray.")
    if isinstance(x, list):
        if not x:
            raise ValueError("Lists cannot be empty")
        depths = [_block_depth(v, index + (i,)) for i, v in enumerate(x)]
        d0 = depths[0]
        for d in depths[1:]:
            if d != d0:
                raise ValueError("List depths are mismatched.")
        return d0 + 1
    return 0


def block(arrays):
    depth = _block_depth(arrays)

    def leaves(x):
        if isinstance(x, list):
            for v in x:
                yield from leaves(v)
        else:
            yield x

    ndim = max([depth] + [_asarray(x).ndim for x in leaves(arrays)])

    def rec(x, d):
        if d < depth:
            parts = [rec(v, d + 1) for v in x]
            return concatenate(parts, axis=-(depth - d))
        a = _asarray(x)
        return a.reshape((1,) * (ndim - a.ndim) + a.shape)

    res = rec(arrays, 0)
    if depth == 0:
        res = res.copy()
    return res


# --- repeating and rearranging ---------------------------------------------------------------
def tile(A, reps):
    A = _asarray(A)
    reps = (operator.index(reps),) if not hasattr(reps, "__len__") else tuple(
        operator.index(r) for r in reps)
    d = len(reps)
    if all(r == 1 for r in reps) and A.ndim >= d:
        return A.copy()
    nd = max(d, A.ndim)
    a = A.reshape((1,) * (nd - A.ndim) + A.shape)
    reps = (1,) * (nd - d) + reps
    inter = []
    for r, n in zip(reps, a.shape):
        inter += [r, n]
    v = a.reshape(sum(([1, n] for n in a.shape), []))
    v = broadcast_view(v, tuple(inter))
    return v.copy().reshape(tuple(r * n for r, n in zip(reps, a.shape)))


def repeat(a, repeats, axis=None):
    a = _asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = normalize_axis(int_axis(axis), a.ndim)
    n = a.shape[axis]
    reps = repeats._host() if isinstance(repeats, ndarray) else repeats
    if isinstance(reps, np.ndarray):  # as NumPy: an array casts safely, anything else as
        reps = reps.astype(np.intp, casting="safe")  # asarray(x, intp) converts it (1.5: 1)
    else:
        reps = np.asarray(reps, dtype=np.intp)
    reps = reps.astype(np.intp)
    if (reps < 0).any():
        raise ValueError("repeats may not contain negative values.")
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(-1)[0])
        shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
        v = broadcast_view(a.reshape(a.shape[:axis + 1] + (1,) + a.shape[axis + 1:]), shape)
        return v.copy().reshape(a.shape[:axis] + (n * r,) + a.shape[axis + 1:])
    if reps.shape != (n,):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) "
                         f"{reps.shape}")
    return take(a, from_host(np.repeat(np.arange(n, dtype=np.intp), reps)), axis=axis)


def roll(a, shift, axis=None):
    a = _asarray(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    axes = _axes_list(axis, a.ndim)
    b = np.broadcast(np.asarray(shift), np.asarray(axes))
    if b.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {}
    for sh, ax in b:  # int(sh) as NumPy: a float shift truncates
        total[int(ax)] = total.get(int(ax), 0) + int(sh)
    res = a
    for ax, sh in total.items():
        n = res.shape[ax]
        if n == 0:
            continue
        sh %= n
        if sh == 0:
            continue
        pre = (slice(None),) * ax
        res = concatenate([res[pre + (slice(n - sh, None),)], res[pre + (slice(0, n - sh),)]],
                          axis=ax)
    return res.copy() if res is a else res


def _axes_list(axis, ndim):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return [normalize_axis(ax, ndim) for ax in axes]


def resize(a, new_shape):
    a = _asarray(a)
    new_shape = _shape_tuple(new_shape)
    if any(n < 0 for n in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = 1
    for n in new_shape:
        total *= n
    flat = a.reshape(-1)
    if a.size == 0 or total == 0:
        return zeros(new_shape, a.dtype)
    reps = -(-total // a.size)
    return tile(flat, reps)[:total].reshape(new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    a = _asarray(filt)
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim)
    if not axes:
        return a  # NumPy returns the input unmodified
    if a.ndim == 1:
        nz = flatnonzero(a)
        if nz.size == 0:
            return a[0:0]
        ends = nz[[0, -1]]._host()  # one read of two values
        start = int(ends[0]) if "f" in trim else 0
        stop = int(ends[1]) + 1 if "b" in trim else a.shape[0]
        return a[start:stop]
    # n-d: the bounding box of the nonzero values along each trimmed axis (one host read)
    starts = stops = None
    if a.size:
        b = _as_bool(a)
        parts = [_any(b).astype(_INTP).reshape(1)]
        for d in axes:
            v = _any(b, axis=tuple(e for e in range(a.ndim) if e != d))
            parts.append(argmax(v).reshape(1))
            parts.append(argmax(v[::-1]).reshape(1))
        h = concatenate(parts)._host()
        if h[0]:
            starts = {d: int(h[1 + 2 * k]) for k, d in enumerate(axes)}
            stops = {d: a.shape[d] - int(h[2 + 2 * k]) for k, d in enumerate(axes)}
    if starts is None:  # all zero: every trimmed axis becomes empty
        return a[tuple(slice(0, 0) if d in axes else slice(None) for d in range(a.ndim))]
    return a[tuple(slice(starts[d] if "f" in trim else None, stops[d] if "b" in trim else None)
                   if d in axes else slice(None) for d in range(a.ndim))]


def delete(arr, obj, axis=None):
    arr = _asarray(arr)
    if axis is None:
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        axis = 0
    axis = normalize_axis(axis, arr.ndim)
    n = arr.shape[axis]
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        o = obj._host() if isinstance(obj, ndarray) else np.asarray(obj)
        if o.dtype.kind == "b":
            if o.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one dimensional "
                                 f"and match the axis length of {n}")
            keep = ~o
        else:
            if o.size == 0 and o.dtype.kind == "f" and not isinstance(obj, (np.ndarray, ndarray)):
                o = o.astype(np.intp)  # [] deletes nothing; an empty float array is refused
            if o.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            o = o.reshape(-1).astype(np.intp)
            bad = (o < -n) | (o >= n)
            if bad.any():
                raise IndexError(f"index {int(o[bad][0])} is out of bounds for axis {axis} with "
                                 f"size {n}")
            keep[o] = False
    return take(arr, from_host(np.flatnonzero(keep).astype(np.intp)), axis=axis)


def insert(arr, obj, values, axis=None):
    arr = _asarray(arr)
    if axis is None:
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        axis = 0
    ndim = arr.ndim
    axis = normalize_axis(axis, ndim)
    n = arr.shape[axis]
    pre = (slice(None),) * axis
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n), dtype=np.intp)
    else:
        indices = obj._host() if isinstance(obj, ndarray) else np.asarray(obj)
        if indices.dtype == bool:  # NumPy: a 1-D mask selects the insertion points
            if not hasattr(obj, "ndim"):  # NumPy reads obj.ndim (lists raise)
                raise AttributeError(f"'{type(obj).__name__}' object has no attribute 'ndim'")
            if obj.ndim != 1:
                raise ValueError("boolean array argument obj to insert must be one "
                                 "dimensional")
            indices = np.flatnonzero(indices)
        if indices.size == 0 and indices.dtype.kind == "f" and not isinstance(
                obj, (np.ndarray, ndarray)):
            indices = indices.astype(np.intp)
        if indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or "
                             "scalar")
    vals = values if isinstance(values, ndarray) else from_host(
        np.asarray(values, dtype=arr.dtype) if not isinstance(values, np.ndarray)
        else values.astype(arr.dtype))
    vals = vals.astype(arr.dtype, copy=False)
    if indices.size == 1:
        if indices.dtype.kind not in "iu":  # NumPy slices with it
            raise TypeError("slice indices must be integers or None or have an __index__ "
                            "method")
        index = int(indices.item())
        if not -n <= index <= n:
            raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
        if index < 0:
            index += n
        v = vals.reshape((1,) * (ndim - vals.ndim) + vals.shape) if vals.ndim < ndim else vals
        if indices.ndim == 0:
            v = moveaxis(v, 0, axis)
        numnew = v.shape[axis]
        shape = list(arr.shape)
        shape[axis] += numnew
        new = empty_array(tuple(shape), arr.dtype)
        assign(new[pre + (slice(None, index),)], arr[pre + (slice(None, index),)])
        assign(new[pre + (slice(index, index + numnew),)], v)
        assign(new[pre + (slice(index + numnew, None),)], arr[pre + (slice(index, None),)])
        return new
    if indices.dtype.kind not in "iu":
        raise IndexError("index arrays used as indices must be of integer (or boolean) type")
    indices = indices.astype(np.intp).copy()
    bad = (indices < -n) | (indices > n)
    if bad.any():
        raise IndexError(f"index {int(indices[bad][0])} is out of bounds for axis {axis} with "
                         f"size {n}")
    indices[indices < 0] += n
    numnew = len(indices)
    order = indices.argsort(kind="mergesort")
    indices[order] += np.arange(numnew)
    shape = list(arr.shape)
    shape[axis] += numnew
    old_mask = np.ones(shape[axis], dtype=bool)
    old_mask[indices] = False
    new = empty_array(tuple(shape), arr.dtype)
    new[pre + (from_host(indices),)] = vals
    new[pre + (from_host(np.flatnonzero(old_mask).astype(np.intp)),)] = arr
    return new


def append(arr, values, axis=None):
    arr = _asarray(arr)
    values = _asarray(values)
    if axis is None:
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        values = values.reshape(-1)
        axis = arr.ndim - 1
    return concatenate((arr, values), axis=axis)


def copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, ndarray):
        raise TypeError("copyto() argument 1 must be cupynum.ndarray")
    if isinstance(src, ndarray):
        np.copyto(np.empty(0, dst.dtype), np.empty(0, src.dtype), casting=casting)
        s = src
    else:
        h = np.empty((), dst.dtype) if np.ndim(src) == 0 else None
        if h is not None:
            np.copyto(h, src, casting=casting)  # NumPy's NEP 50 rules and errors
            s = from_host(h)
        else:
            hs = np.asarray(src)
            np.copyto(np.empty(0, dst.dtype), np.empty(0, hs.dtype), casting=casting)
            s = from_host(hs)
    if where is True:
        assign(dst, s)
        return
    w = _asarray(where)
    w = broadcast_view(w if w.dtype == np.bool_ else w.astype(bool), dst.shape)
    sv = broadcast_view(s.astype(dst.dtype, copy=False), dst.shape)
    if may_overlap(sv, dst):
        sv = sv.copy()
    _masked_fill(dst, w, sv)


def asarray_chkfinite(a, dtype=None, order=None):
    """``asarray``, raising ValueError when a float or complex result holds inf or NaN (one
    read back: a sync point)."""
    a = asarray(a, dtype=dtype, order=order)
    if a.dtype.char in np.typecodes["AllFloat"]:
        if not bool(_all(uf.isfinite(a))):
            raise ValueError("array must not contain infs or NaNs")
    return a
