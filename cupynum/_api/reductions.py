"""Reductions and scans (NumPy: "Sums, products, differences", "Order statistics" minima and
maxima, "Logic functions" truth tests, ``ufunc.reduce/accumulate/reduceat``).

NumPy is the metadata engine: each distinct call shape is first run by NumPy itself on a
tiny host array with the same pattern of empty axes (sizes 0 or 1), which raises NumPy's
exceptions (AxisError, repeated axes, non-reorderable ops over several axes, empty reduction
without identity, ``where`` without ``initial``, bad dtypes or casts) and gives the result
dtype (and, for empty reductions, the fill value); the loop (accumulator) dtype is
``ufunc.resolve_dtypes((dtype or out.dtype, a.dtype, None), reduction=True)``.  Answers are
cached per call shape, so a repeated ``a.sum()`` is a dict lookup, an allocation and the
backend's launch.  Results are 0-d device arrays where NumPy returns scalars.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import _backends
from .._backends import placement as _placement
from .._array import _fill, _make, assign, broadcast_view, empty_array, may_overlap, ndarray
from .._backends.base import ReduceOp
from .._shapes import _prod
from .._dtypes import normalize
from .._fallback import call_on_host
from .._host_path import host_view, on_host, wrap_host
from .._indexing import normalize_axis, zero_d_axis
from .._ops import BY_NAME, neutral_element
from .._ufunc import UFUNCS, uf, ufunc
from .creation import asarray
from .elementwise import _weak, isclose
from .elementwise import where as _where

__all__ = ["sum", "prod", "product", "amin", "amax", "min", "max", "argmin", "argmax", "ptp",
           "any", "all", "count_nonzero", "cumsum", "cumprod", "cumulative_sum",
           "cumulative_prod", "nansum", "nanprod", "nanmin", "nanmax", "nanargmin",
           "nanargmax", "nancumsum", "nancumprod", "diff", "unwrap", "ediff1d", "trapezoid",
           "allclose", "array_equal", "array_equiv"]

_NoValue = np._NoValue
_builtin_all, _builtin_any, _builtin_sum = all, any, sum  # (shadowed below)


def _asarray(a):
    if type(a) is ndarray:
        return a
    return asarray(a)


_ops: dict = {}


def _neutral(name, dt):
    row = BY_NAME.get(name)
    return None if row is None else neutral_element(row, dt)


def _reduce_op(name, functor, loop):
    key = (name, loop)
    op = _ops.get(key)
    if op is None:
        op = _ops[key] = ReduceOp(name, functor, loop.char, _neutral(name, loop))
    return op


# --- ufunc.reduce ----------------------------------------------------------------------------

_new = object.__new__
_meta: dict = {}
# Calls with only ``axis`` and ``keepdims`` given, by (ufunc, dtype, shape, axis, keepdims):
# (result dtype, ReduceOp, axes, kept shape, None or the keepdims view's (shape, strides,
# C-contiguous, F-contiguous)), filled by the general path of ``ufunc_reduce``.
_fast: dict = {}


def _pattern(shape):
    return tuple(0 if n == 0 else 1 for n in shape)


def _axis_key(axis):
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return tuple(_axis_int(x) for x in axis)
    return _axis_int(axis)  # TypeError like NumPy (a list too)


def _axis_int(x):
    if type(x) is bool:  # NumPy's reductions refuse a bool axis (True is not axis 1)
        raise TypeError("an integer is required")
    return operator.index(x)


def _normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    from numpy.lib.array_utils import normalize_axis_tuple

    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def _probe(uf, a, axis_key, dtype, out, keepdims, has_initial, initial, has_where):
    """NumPy's own answer for this call shape: (axes, result dtype, loop dtype, fill value
    of an empty reduction), or NumPy's exception."""
    pat = _pattern(a._shape)
    key = (uf.__name__, a.dtype, pat, axis_key, dtype, None if out is None else
           (out.dtype, out.ndim), keepdims, has_initial, has_where)
    m = _meta.get(key)
    if m is not None:
        return m
    npu = uf._np
    host = np.zeros(pat, a.dtype)
    kw = {"axis": axis_key, "keepdims": keepdims}
    if dtype is not None:
        kw["dtype"] = dtype
    if has_initial:
        kw["initial"] = initial
    if has_where:
        kw["where"] = np.ones(pat, bool)
    axes = _normalize_axes(axis_key, a.ndim) if a.ndim or axis_key is not None else ()
    if out is not None:
        oshape = tuple(1 if i in axes else n for i, n in enumerate(pat)) if keepdims else tuple(
            n for i, n in enumerate(pat) if i not in axes)
        if len(oshape) != out.ndim:
            raise ValueError(f"output parameter for reduction operation {uf.__name__} has the "
                             f"wrong number of dimensions: Found {out.ndim} but expected "
                             f"{len(oshape)}")
        kw["out"] = np.empty(oshape, out.dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = npu.reduce(host, **kw)
    res = np.asarray(res)
    loop = _loop(npu, a.dtype, dtype, None if out is None else out.dtype)
    fill = res.reshape(-1)[0] if res.size else None
    m = (axes, normalize(res.dtype), normalize(loop), fill)
    if len(_meta) > 4096:
        _meta.clear()
    _meta[key] = m
    return m


def _loop(npu, in_dt, dtype, out_dt):
    """NumPy's reduction loop: ``dtype`` fixes it (the input is cast), else ``out``'s dtype
    takes part in the resolution as the first operand."""
    if dtype is not None:
        return npu.resolve_dtypes((None, in_dt, None), signature=(np.dtype(dtype), None, None),
                                  reduction=True, casting="unsafe")[0]
    return npu.resolve_dtypes((out_dt, in_dt, None), reduction=True, casting="unsafe")[0]


def _out_arg(out):
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("The 'out' tuple must have exactly one entry")
        out = out[0]
    if out is not None and not isinstance(out, ndarray):
        raise TypeError("output must be a cupynum array")
    return out


def ufunc_reduce(uf, a, axis=0, dtype=None, out=None, keepdims=False, initial=_NoValue,
                 where=True):
    """``uf.reduce`` (NumPy's semantics; see the module docstring)."""
    if (type(a) is ndarray and on_host(a) and out is None and where is True and dtype is None
            and initial is _NoValue and (axis is None or type(axis) is int)
            and type(keepdims) is bool):  # the host path: NumPy's reduce
        return wrap_host(uf._np.reduce(host_view(a), axis=axis, dtype=dtype,
                                       keepdims=keepdims))
    # ``a.sum()``, ``x.max(axis=1, keepdims=True)``: a lookup, an allocation, the backend's
    # launch (axis None or an int: 1.0 would find 1's entry, and NumPy refuses it)
    plain = (dtype is None and out is None and initial is _NoValue and where is True and
             type(a) is ndarray and (axis is None or type(axis) is int))
    if plain:
        e = _fast.get((uf, a.dtype, a._shape, axis, keepdims))
        if e is not None:
            odt, op, axes, kept, view = e
            backend = _backends.for_arrays(a)
            target = empty_array(kept, odt, backend=backend)  # (where it is computed)
            backend.reduce(op, a, target, axes, None)
            if view is None:
                return target
            res = _new(ndarray)  # the keepdims view of the new result, its layout cached
            res._buf, res._offset, res.dtype, res._size, res._base = (target._buf, 0, odt,
                                                                       target._size, None)
            res._shape, res._strides, res._c_contig, res._f_contig = view
            return res
    a = _asarray(a)
    out = _out_arg(out)
    if dtype is not None:
        dtype = np.dtype(dtype)
    if zero_d_axis(a.ndim, axis):
        axis = None  # NumPy's legacy: a 0-d array reduces over axis 0 or -1 as over none
    if type(keepdims) is not bool:
        operator.index(keepdims)  # NumPy's check: 1 passes, None, 2.5 and 'yes' raise
    if isinstance(where, (ndarray, np.ndarray)) and where.dtype != np.bool_:
        raise TypeError(f"Cannot cast array data from {where.dtype!r} to dtype('bool') "
                        f"according to the rule 'safe'")
    has_initial = initial is not _NoValue and initial is not None
    has_where = where is not True
    axes, rdt, loop, fill = _probe(uf, a, _axis_key(axis), dtype, out, bool(keepdims),
                                   has_initial, initial if has_initial else None, has_where)
    shape = a._shape
    kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    kshape = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else kept
    if out is not None and out._shape != kshape:
        raise ValueError(f"output parameter for reduction operation {uf.__name__} has a "
                         f"non-reduction dimension not equal to the output: {out._shape} "
                         f"vs {kshape}")
    R = 1
    for i in axes:
        R *= shape[i]
    odt = out.dtype if out is not None else rdt
    if has_where:
        mask = _asarray(where)
        mask = broadcast_view(mask if mask.dtype == np.bool_ else mask.astype(np.bool_), shape)
    # where the result goes: the out array (viewed without the reduced axes), or a new one
    if out is not None and not may_overlap(out, a):
        target = out if not keepdims else _squeeze_axes(out, axes)
    else:
        target = empty_array(kept, odt)
    M = target._size
    if M and R == 0:
        value = initial if has_initial else fill
        _fill_value(target, value)
    elif M:
        op = _reduce_op(uf.__name__, uf._row.functor, loop)
        src = a
        if has_where:
            if op.neutral is None:
                kw = dict(axis=axis, dtype=dtype, keepdims=keepdims, where=where)
                if has_initial:
                    kw["initial"] = initial
                res = call_on_host(uf._np.reduce, (a,), kw)
                return _finish_host(res, out)
            src = _where(mask, a.astype(loop, copy=False), op.neutral)
        init = loop.type(initial) if has_initial else None
        _backends.for_writing(target, src).reduce(op, src, target, axes, init)
        if plain and keepdims in (False, True) and src is a:
            if len(_fast) > 1024:
                _fast.clear()
            view = None
            if keepdims:
                v = target.reshape(kshape)
                view = (v._shape, v._strides, v._c_contig, v._f_contig)
            _fast[(uf, a.dtype, a._shape, axis, keepdims)] = (odt, op, axes, kept, view)
    if out is not None:
        if target is not out and not _is_view_of(target, out):
            assign(_squeeze_axes(out, axes) if keepdims else out, target)
        return out
    if keepdims:
        return target.reshape(kshape)
    return target


def _is_view_of(t, out):
    return t._buf is out._buf and t._offset == out._offset


def _finish_host(res, out):
    if out is not None:
        return out
    return res


def _squeeze_axes(x, axes):
    keep = [i for i in range(x.ndim) if i not in axes]
    return _make(x._buf, x._offset, tuple(x._shape[i] for i in keep),
                 tuple(x._strides[i] for i in keep), x.dtype, x._root())


def _fill_value(target, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fill(target, value, casting="unsafe")


# --- ufunc.accumulate / reduceat -----------------------------------------------------------

_acc_meta: dict = {}


def _scan(uf, a, axis, dtype, out, np_func):
    """``np_func`` is NumPy's own function for this call (``cumsum`` or ``uf.accumulate``),
    probed on a tiny array for errors and the result dtype."""
    out = _out_arg(out)
    if dtype is not None:
        dtype = np.dtype(dtype)
    key = (np_func, a.dtype, _pattern(a._shape), type(axis), axis, dtype,  # (True == 1:
           None if out is None else out.dtype)  # the type keeps NumPy's check of a bool axis)
    m = _acc_meta.get(key)
    if m is None:
        host = np.zeros(_pattern(a._shape), a.dtype)
        kw = {"axis": axis}
        if dtype is not None:
            kw["dtype"] = dtype
        if out is not None:
            kw["out"] = np.empty(host.shape, out.dtype)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = np_func(host, **kw)
        loop = _loop(uf._np, a.dtype, dtype if dtype is not None else (
            res.dtype if np_func is not uf._np.accumulate else None),
            None if out is None else out.dtype)
        m = _acc_meta[key] = (normalize(res.dtype), normalize(loop))
    rdt, loop = m
    ax = 0 if a.ndim == 0 else _normalize_axes(axis, a.ndim)[0]
    shape = a._shape
    if out is not None and out._shape != shape:
        raise ValueError(f"output has shape {out._shape}, expected {shape}")
    target = out if out is not None and not may_overlap(out, a) else empty_array(shape, (
        out.dtype if out is not None else rdt))
    if target._size:
        op = _reduce_op(uf.__name__, uf._row.functor, loop)
        if a.ndim == 0:
            assign(target, a)
        else:
            _backends.for_writing(target, a).scan(op, a, target, ax)
    if out is not None:
        if target is not out:
            assign(out, target)
        return out
    return target


def ufunc_accumulate(uf, array, axis=0, dtype=None, out=None):
    a = _asarray(array)
    if a.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")  # NumPy's type too
    return _scan(uf, a, axis, dtype, out, uf._np.accumulate)


def ufunc_reduceat(uf, array, indices, axis=0, dtype=None, out=None):
    """Segment reductions: one device reduction per segment (``indices`` come to the host)."""
    a = _asarray(array)
    idx = np.asarray(indices.get() if isinstance(indices, ndarray) else indices)
    host_probe = np.zeros(_pattern(a._shape) if a.ndim else (), a.dtype)
    with np.errstate(all="ignore"):
        if a.ndim == 0 or idx.ndim != 1 or idx.dtype.kind not in "iu":
            uf._np.reduceat(host_probe, idx, axis=axis, dtype=dtype)  # NumPy's error
    ax = _normalize_axes(axis, a.ndim)[0]
    n = a._shape[ax]
    for i in idx.tolist():
        if not 0 <= i < n:
            raise IndexError(f"index {i} out-of-bounds in {uf.__name__}.reduceat [0, {n})")
    probe = uf._np.reduceat(np.ones((1,) * a.ndim, a.dtype), np.zeros(1, np.intp), axis=ax,
                            dtype=dtype)
    rdt = normalize(probe.dtype if out is None else out.dtype)
    shape = a._shape[:ax] + (len(idx),) + a._shape[ax + 1:]
    res = empty_array(shape, rdt)
    for j, i in enumerate(idx.tolist()):
        stop = idx[j + 1] if j + 1 < len(idx) else n
        dst = _take_axis(res, ax, j)
        if stop <= i + 1:  # NumPy: the element itself, not a reduction of one element
            assign(dst, _take_axis(a, ax, i))
            continue
        seg = _take_axis(a, ax, slice(i, stop))
        ufunc_reduce(uf, seg, axis=ax, dtype=dtype if dtype is not None else rdt, out=dst)
    if out is not None:
        assign(out, res)
        return out
    return res


def _take_axis(a, ax, key):
    return a[(slice(None),) * ax + (key,)]


# --- reductions ------------------------------------------------------------------------------


def _red(name, a, axis, dtype, out, keepdims, initial=_NoValue, where=True):
    return ufunc_reduce(UFUNCS[name], a, axis, dtype, out, keepdims, initial, where)


def _kd(keepdims):
    return False if keepdims is _NoValue else keepdims


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Sum of array elements over the given axes (pairwise-or-better accuracy: a tree)."""
    return _red("add", a, axis, dtype, out, _kd(keepdims), initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _red("multiply", a, axis, dtype, out, _kd(keepdims), initial, where)


product = prod


def amax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """Maximum (NaN propagates; complex: lexicographic)."""
    return _red("maximum", a, axis, None, out, _kd(keepdims), initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return _red("minimum", a, axis, None, out, _kd(keepdims), initial, where)


max = amax
min = amin


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _red("logical_or", a, axis, None, out, _kd(keepdims), _NoValue, where)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _red("logical_and", a, axis, None, out, _kd(keepdims), _NoValue, where)


def ptp(a, axis=None, out=None, keepdims=False):
    hi = amax(a, axis, None, keepdims)
    lo = amin(a, axis, None, keepdims)
    return uf.subtract(hi, lo, out=out) if out is not None else uf.subtract(hi, lo)


def count_nonzero(a, axis=None, *, keepdims=False):
    a = _asarray(a)
    nz = a if a.dtype == np.bool_ else a.astype(np.bool_)
    return sum(nz, axis=axis, dtype=np.intp, keepdims=keepdims)


_arg_meta: dict = {}
_fast: dict = {}  # (ufunc, dtype, shape) -> (result dtype, ReduceOp, axes) for axis=None calls


def _arg(kind, a, axis, out, keepdims):
    a = _asarray(a)
    out = _out_arg(out)
    key = (kind, a.dtype, _pattern(a._shape), _axis_key(axis), bool(keepdims))
    if key not in _arg_meta:
        getattr(np, kind)(np.zeros(_pattern(a._shape), a.dtype), axis=axis,
                          keepdims=bool(keepdims))  # NumPy's errors (empty, bad axis)
        _arg_meta[key] = True
    if axis is None:
        axes = tuple(range(a.ndim))
        shape = (1,) * a.ndim if keepdims else ()
    else:
        axes = (_normalize_axes(axis, a.ndim)[0],) if a.ndim else ()
        shape = tuple(1 if i in axes else n for i, n in enumerate(a._shape)) if keepdims else \
            tuple(n for i, n in enumerate(a._shape) if i not in axes)
    kept = tuple(n for i, n in enumerate(a._shape) if i not in axes)
    intp = np.dtype(np.intp)
    if a.ndim and a._size:  # (allocated where it is computed: for_arrays(a, res)'s choice)
        backend = _backends.for_result(_prod(kept) * intp.itemsize, a)
        res = empty_array(kept, intp, backend=backend)
        backend.arg_reduce(kind, a, res, axes)
    else:
        res = empty_array(kept, intp)
        if res._size:
            _fill_value(res, 0)
    res = res.reshape(shape) if shape != kept else res
    if out is not None:
        if out._shape != shape:
            raise ValueError("output array does not match result of np.argmax.")
        if not np.can_cast(out.dtype, np.intp, "safe"):  # NumPy's check (its direction)
            raise TypeError(f"Cannot cast scalar from {out.dtype!r} to dtype('int64') "
                            f"according to the rule 'safe'")
        assign(out, res)
        return out
    return res


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum (the first NaN, if any)."""
    return _arg("argmax", a, axis, out, _kd(keepdims))


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg("argmin", a, axis, out, _kd(keepdims))


# --- scans -----------------------------------------------------------------------------------


def _flat_axis(a, axis):
    a = _asarray(a)
    if axis is None or zero_d_axis(a.ndim, axis):  # (NumPy: a 0-d array scans as 1-d)
        return a.reshape(-1), 0
    return a, axis


def cumsum(a, axis=None, dtype=None, out=None):
    a, ax = _flat_axis(a, axis)
    return _scan(uf.add, a, ax, dtype, out, np.cumsum)


def cumprod(a, axis=None, dtype=None, out=None):
    a, ax = _flat_axis(a, axis)
    return _scan(uf.multiply, a, ax, dtype, out, np.cumprod)


def _cumulative(name, npf, x, axis, dtype, out, include_initial):
    x = _asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    if isinstance(axis, tuple):  # ufunc.accumulate's rule: one axis, in a tuple or not
        from .._indexing import normalize_axis

        for ax in axis:
            normalize_axis(ax, x.ndim)
        if len(axis) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = axis[0]
    if x.ndim == 0:
        npf(np.zeros((), x.dtype), axis=axis)  # NumPy's error
    res = (cumsum if name == "add" else cumprod)(x, axis=axis, dtype=dtype)
    if include_initial:
        ax = _normalize_axes(axis, x.ndim)[0]
        shape = list(res._shape)
        shape[ax] += 1
        full = empty_array(tuple(shape), res.dtype)
        _fill_value(_take_axis(full, ax, slice(0, 1)), 0 if name == "add" else 1)
        _take_axis(full, ax, slice(1, None))[...] = res
        res = full
    if out is not None:
        out[...] = res
        return out
    return res


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative("add", np.cumulative_sum, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative("multiply", np.cumulative_prod, x, axis, dtype, out, include_initial)


# --- NaN-ignoring variants ------------------------------------------------------------------


def _nan_replaced(a, value):
    a = _asarray(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = uf.isnan(a)
    return _where(mask, value, a), mask


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    b, _ = _nan_replaced(a, 0)
    return sum(b, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    b, _ = _nan_replaced(a, 1)
    return prod(b, axis, dtype, out, keepdims, initial, where)


def _all_nan_warning(res):
    if res.dtype.kind in "fc" and res._size and bool(uf.isnan(res).any()):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """fmin.reduce: NaN only where a slice is all NaN (then a RuntimeWarning)."""
    a = _asarray(a)
    if a.dtype.kind not in "fc":
        return amin(a, axis, out, keepdims, initial, where)
    res = _red("fmin", a, axis, None, out, _kd(keepdims), initial, where)
    _all_nan_warning(res)
    return res


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    a = _asarray(a)
    if a.dtype.kind not in "fc":
        return amax(a, axis, out, keepdims, initial, where)
    res = _red("fmax", a, axis, None, out, _kd(keepdims), initial, where)
    _all_nan_warning(res)
    return res


def _nanarg(kind, a, axis, out, keepdims):
    a = _asarray(a)
    if a.dtype.kind not in "fc":
        return _arg(kind, a, axis, out, _kd(keepdims))
    b, mask = _nan_replaced(a, -np.inf if kind == "argmax" else np.inf)
    if mask._size and bool(all(mask, axis=axis).any()):
        raise ValueError("All-NaN slice encountered")
    return _arg(kind, b, axis, out, _kd(keepdims))


def nanargmax(a, axis=None, out=None, *, keepdims=_NoValue):
    return _nanarg("argmax", a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=_NoValue):
    return _nanarg("argmin", a, axis, out, keepdims)


def nancumsum(a, axis=None, dtype=None, out=None):
    b, _ = _nan_replaced(a, 0)
    return cumsum(b, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    b, _ = _nan_replaced(a, 1)
    return cumprod(b, axis, dtype, out)


# --- differences -------------------------------------------------------------------------------


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    if n == 0:
        return _asarray(a)
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = _asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, a.ndim)
    parts = []
    for v in (prepend, append):
        if v is _NoValue:
            parts.append(None)
            continue
        v = _asarray(v)
        if v.ndim == 0:
            shape = list(a._shape)
            shape[axis] = 1
            v = broadcast_view(v, tuple(shape))
        parts.append(v)
    if parts[0] is not None or parts[1] is not None:
        seq = [p for p in (parts[0], a, parts[1]) if p is not None]
        a = _concat(seq, axis)
    op = uf.not_equal if a.dtype == np.bool_ else uf.subtract
    for _ in range(n):
        a = op(_take_axis(a, axis, slice(1, None)), _take_axis(a, axis, slice(None, -1)))
    return a


def _concat(arrays, axis):
    dt = np.result_type(*[x.dtype for x in arrays])
    shape = list(arrays[0]._shape)
    shape[axis] = _builtin_sum(x._shape[axis] for x in arrays)
    out = empty_array(tuple(shape), normalize(dt))
    pos = 0
    for x in arrays:
        k = x._shape[axis]
        if k:
            _take_axis(out, axis, slice(pos, pos + k))[...] = x
        pos += k
    return out


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """NumPy's algorithm: differences wrapped into [-period/2, period/2) with ``mod``, the
    ambiguous boundary fixed with a select, corrections accumulated with ``cumsum``.  (Here,
    beside ``diff``, which it is built on.)"""
    p = asarray(p)
    nd = p.ndim
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    slice1 = [slice(None, None)] * nd
    slice1[axis] = slice(1, None)
    slice1 = tuple(slice1)
    dtype = np.result_type(dd.dtype, _weak(period))
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = uf.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        # mod sent dd == period/2 to -period/2: give those their sign back
        ddmod = _where((ddmod == interval_low) & (dd > 0), ddmod.dtype.type(interval_high),
                       ddmod)
    ph_correct = ddmod - dd
    ph_correct = _where(abs(dd) < discont, ph_correct.dtype.type(0), ph_correct)
    up = p.astype(dtype)
    up[slice1] = p[slice1] + ph_correct.cumsum(axis)
    return up


def ediff1d(ary, to_end=None, to_begin=None):
    a = _asarray(ary).reshape(-1)
    d = uf.subtract(a[1:], a[:-1])
    seq = []
    if to_begin is not None:
        b = _asarray(to_begin).reshape(-1)
        if not np.can_cast(b.dtype, a.dtype, casting="same_kind"):
            raise TypeError("dtype of `to_begin` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        seq.append(b.astype(a.dtype))
    seq.append(d)
    if to_end is not None:
        e = _asarray(to_end).reshape(-1)
        if not np.can_cast(e.dtype, a.dtype, casting="same_kind"):
            raise TypeError("dtype of `to_end` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        seq.append(e.astype(a.dtype))
    if len(seq) == 1:
        return d
    out = _concat(seq, 0)
    return out.astype(a.dtype, copy=False)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _asarray(y)
    nd = y.ndim
    axis = normalize_axis(_axis_int(axis), nd)
    hi = _take_axis(y, axis, slice(1, None))
    lo = _take_axis(y, axis, slice(None, -1))
    if x is None:
        d = dx
    else:
        x = _asarray(x)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * nd
            shape[axis] = d._shape[0]
            d = d.reshape(shape)
        else:
            d = diff(x, axis=axis)
    mul, add, div = uf.multiply, uf.add, uf.true_divide
    return sum(div(mul(d, add(hi, lo)), 2.0), axis=axis)


# --- comparisons of whole arrays --------------------------------------------------------------


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    return bool(all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    try:
        a1, a2 = _asarray(a1), _asarray(a2)
    except Exception:  # noqa: BLE001 - NumPy returns False for what it cannot compare
        return False
    if a1._shape != a2._shape:
        return False
    if not equal_nan or not (a1.dtype.kind in "fc" or a2.dtype.kind in "fc"):
        return bool(all(uf.equal(a1, a2)))
    isnan = uf.isnan
    n1, n2 = isnan(a1), isnan(a2)
    if not bool(all(uf.equal(n1, n2))):
        return False
    return bool(all(uf.logical_or(uf.equal(a1, a2), n1)))


def array_equiv(a1, a2):
    try:
        a1, a2 = _asarray(a1), _asarray(a2)
    except Exception:  # noqa: BLE001
        return False
    try:
        np.broadcast_shapes(a1._shape, a2._shape)
    except ValueError:
        return False
    return bool(all(uf.equal(a1, a2)))


# --- the ufunc methods built here --------------------------------------------------------------
# ufunc.reduce, accumulate and reduceat are installed on the ufunc class from here, where they
# are implemented (the ufunc class, a layer below, does not import the reductions).
def _reduce_method(self, array, axis=0, dtype=None, out=None, keepdims=False,
                   initial=_NoValue, where=True):
    if self.nin != 2 or self.nout != 1:
        return self._host_method("reduce", array, axis=axis, dtype=dtype, out=out,
                                 keepdims=keepdims, initial=initial, where=where)
    return ufunc_reduce(self, array, axis, dtype, out, keepdims, initial, where)


def _accumulate_method(self, array, axis=0, dtype=None, out=None):
    if type(array) is ndarray and out is None and type(axis) is int and on_host(array) and (
            array._size <= _placement.HOST_UNPRICED_UPTO or _backends.stays_on_host(array)):
        # (NumPy's own accumulate on the kept view; an axis of another type, such as True,
        # takes the general checks: cumsum refuses what accumulate would take)
        return wrap_host(self._np.accumulate(host_view(array), axis=axis, dtype=dtype))
    if self.nin != 2 or self.nout != 1:
        return self._host_method("accumulate", array, axis=axis, dtype=dtype, out=out)
    return ufunc_accumulate(self, array, axis, dtype, out)


def _reduceat_method(self, array, indices, axis=0, dtype=None, out=None):
    if self.nin != 2 or self.nout != 1:
        return self._host_method("reduceat", array, indices, axis=axis, dtype=dtype, out=out)
    return ufunc_reduceat(self, array, indices, axis, dtype, out)


ufunc.reduce, ufunc.accumulate, ufunc.reduceat = (
    _reduce_method, _accumulate_method, _reduceat_method)
