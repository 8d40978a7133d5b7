"""Statistics (NumPy: "Statistics"): averages and variances composed from device reductions
and elementwise ufuncs, following NumPy's own algorithms (``numpy/_core/_methods.py``,
``numpy/lib/_nanfunctions_impl.py``) so that dtypes, warnings and rounding steps agree.

Order statistics (median, quantile, percentile and their NaN variants) sort along the axis
with ``cupynum.sort`` (a host fallback until the sorting issue lands) and then gather and
interpolate on the device for the interpolating methods (the discontinuous ones pick one
order statistic); the virtual indices come from
NumPy's own method table (``_QuantileMethods``).  Weighted quantiles run through NumPy.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _backends
from .._array import broadcast_view, empty_array, ndarray
from .._dtypes import normalize
from .._fallback import call_on_host
from .._ufunc import UFUNCS, uf
from . import creation, indexing, manipulation, products, sorting
from . import reductions as _r
from .creation import arange, asarray, full
from .elementwise import clip
from .elementwise import where as _where
from .indexing import take

__all__ = ["mean", "var", "std", "nanmean", "nanvar", "nanstd", "average", "median",
           "nanmedian", "quantile", "percentile", "nanquantile", "nanpercentile", "cov",
           "corrcoef"]

_NoValue = np._NoValue
_asarray = _r._asarray


def _ureduce_axis(axis):
    """An axis as NumPy's median, quantile and average take it: through
    ``normalize_axis_tuple``, where a bool is an int and a list a tuple (unlike sum's)."""
    if type(axis) is bool:
        return int(axis)
    return tuple(axis) if isinstance(axis, list) else axis


def _count(a, axis, keepdims, where):
    if where is True:
        # (mean/var of a 0-d array refuse axis 0, unlike sum: NumPy's normalize_axis_tuple)
        axes = _r._normalize_axes(_r._axis_key(axis), a.ndim) if a.ndim or axis is not None \
            else ()
        n = 1
        for ax in axes:
            n *= a._shape[ax]
        return n
    w = _asarray(where)
    return _r.sum(broadcast_view(w.astype(np.bool_, copy=False), a._shape), axis, np.intp,
                  None, keepdims)


def _is_zero_count(rcount):
    if isinstance(rcount, ndarray):
        return bool(_r.any(uf.equal(rcount, 0)))
    return rcount == 0


def _divide(ret, rcount, out):
    div = uf.true_divide
    if isinstance(rcount, ndarray):
        rcount = rcount.reshape(ret._shape) if rcount._shape != ret._shape and \
            rcount._size == ret._size else rcount
    elif isinstance(rcount, (int, np.integer)):
        rcount = np.intp(rcount)
    else:  # n - ddof with a fractional ddof: NumPy divides by that float, not its floor
        rcount = np.float64(rcount)
    res = div(ret, rcount, out=ret, casting="unsafe")
    return res


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _asarray(a)
    keepdims = _r._kd(keepdims)
    rcount = _count(a, axis, keepdims, where)
    if _is_zero_count(rcount):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    f16 = False
    if dtype is None:
        if a.dtype.kind in "biu":
            dtype = np.dtype("f8")
        elif a.dtype == np.float16:
            dtype = np.dtype("f4")
            f16 = True
    ret = _r.sum(a, axis, dtype, out, keepdims, where=where)
    with np.errstate(all="ignore"):
        ret = _divide(ret, rcount, None)
    if f16 and out is None:
        ret = ret.astype(a.dtype)
    return ret


def _var(a, axis, dtype, out, ddof, keepdims, where, mean_, correction):
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = _asarray(a)
    keepdims = _r._kd(keepdims)
    rcount = _count(a, axis, keepdims, where)
    if isinstance(rcount, ndarray):
        bad = bool(_r.any(uf.less_equal(rcount, ddof)))
    else:
        bad = ddof >= rcount
    if bad:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    if dtype is None and a.dtype.kind in "biu":
        dtype = np.dtype("f8")
    if (mean_ is None and out is None and where is True and not isinstance(rcount, ndarray)
            and rcount > 0 and a.ndim and a.dtype.char in "fdFD"
            and (dtype is None or (a.dtype.kind == "f" and normalize(dtype) == a.dtype))):
        ret = _var_fused(a, axis, keepdims, rcount, ddof)
        if ret is not None:
            return ret
    with np.errstate(all="ignore"):
        if mean_ is not None:
            arrmean = _asarray(mean_)
        else:
            arrmean = _r.sum(a, axis, dtype, None, True, where=where)
            rc = _count(a, axis, True, where)
            arrmean = _divide(arrmean, rc, None)
        x = uf.subtract(a, arrmean)
        if a.dtype.kind in "fiub":
            x = uf.square(x)
        else:
            x = uf.add(uf.square(x.real), uf.square(x.imag))
        ret = _r.sum(x, axis, dtype, out, keepdims, where=where)
        if isinstance(rcount, ndarray):
            rc = uf.maximum(uf.subtract(rcount, ddof), 0)
        else:
            rc = max(rcount - ddof, 0)
            rc = float(rc) if not isinstance(rc, int) else rc
        ret = _divide(ret, rc, None)
    return ret


def _var_fused(a, axis, keepdims, rcount, ddof):
    """The common var: the mean (NumPy's sum / count, in a's dtype), then one fused
    reduction of |a - mean|^2 (``Backend.sqdev_sum``: no temporary of a's size), then
    the division by max(n - ddof, 0).  None where the mean is not of that kind."""
    axes = _r._normalize_axes(_r._axis_key(axis), a.ndim)
    with np.errstate(all="ignore"):
        m = _divide(_r.sum(a, axis, None, None, False), rcount, None)
        if not isinstance(m, ndarray) or not m._c_contig or m.dtype != a.dtype:
            return None
        rdt = np.dtype(a.dtype.char.lower())
        ret = empty_array(m._shape, rdt)
        if ret._size:
            _backends.for_arrays(a).sqdev_sum(a, m, ret, axes)
        if keepdims:
            ret = ret.reshape(tuple(1 if d in axes else n for d, n in enumerate(a._shape)))
        rc = max(rcount - ddof, 0)
        return _divide(ret, float(rc) if not isinstance(rc, int) else rc, None)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=_NoValue):
    return _var(a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=_NoValue):
    ret = _var(a, axis, dtype, out, ddof, keepdims, where, mean, correction)
    return uf.sqrt(ret, out=ret)


# --- NaN-ignoring -------------------------------------------------------------------------------


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _asarray(a)
    if a.dtype.kind not in "fc":
        return mean(a, axis, dtype, out, keepdims, where=where)
    b, mask = _r._nan_replaced(a, 0)
    keepdims = _r._kd(keepdims)
    notnan = uf.logical_not(mask)
    cnt = _r.sum(notnan, axis, np.intp, None, keepdims, where=where)
    tot = _r.sum(b, axis, dtype, out, keepdims, where=where)
    if bool(_r.any(uf.equal(cnt, 0))):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    with np.errstate(all="ignore"):
        avg = uf.true_divide(tot, cnt, out=tot, casting="unsafe")
    return avg


def _nanvar(a, axis, dtype, out, ddof, keepdims, where, mean_, correction, sqrt):
    a = _asarray(a)
    if a.dtype.kind not in "fc":
        f = std if sqrt else var
        return f(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean_,
                 correction=correction)
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    keepdims = _r._kd(keepdims)
    b, mask = _r._nan_replaced(a, 0)
    notnan = uf.logical_not(mask)
    with np.errstate(all="ignore"):
        cnt = _r.sum(notnan, axis, np.intp, None, True, where=where)
        if mean_ is not None:
            avg = _asarray(mean_)
        else:
            avg = _r.sum(b, axis, dtype, None, True, where=where)
            avg = uf.true_divide(avg, cnt, out=avg, casting="unsafe")
        x = _where(mask, 0, uf.subtract(b, avg))
        if x.dtype.kind == "c":
            sq = uf.add(uf.square(x.real), uf.square(x.imag))
        else:
            sq = uf.square(x)
        v = _r.sum(sq, axis, dtype, out, keepdims, where=where)
        if not keepdims:
            cnt = cnt.reshape(v._shape)
        dof = uf.subtract(cnt, ddof)
        isbad = uf.less_equal(dof, 0)
        v = uf.true_divide(v, dof, out=v, casting="unsafe")
        if bool(_r.any(isbad)):
            warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=3)
            # As NumPy: whatever dividing by dof <= 0 gave (inf, negative), the answer is NaN.
            manipulation.copyto(v, np.nan, where=isbad)
        if sqrt:
            v = uf.sqrt(v, out=v)
    return v


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=_NoValue):
    return _nanvar(a, axis, dtype, out, ddof, keepdims, where, mean, correction, False)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=_NoValue):
    return _nanvar(a, axis, dtype, out, ddof, keepdims, where, mean, correction, True)


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    a = _asarray(a)
    axis = _ureduce_axis(axis)
    kd = _r._kd(keepdims)
    if weights is None:
        avg = mean(a, axis, keepdims=kd)
        scl = avg.dtype.type(a._size / avg._size) if avg._size else avg.dtype.type(0)
        if returned:
            return avg, full(avg._shape, scl, dtype=avg.dtype)
        return avg
    wgt = _asarray(weights)
    if a.dtype.kind in "biu":
        rdt = np.result_type(a.dtype, wgt.dtype, "f8")
    else:
        rdt = np.result_type(a.dtype, wgt.dtype)
    if a._shape != wgt._shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = _r._normalize_axes(_r._axis_key(axis), a.ndim)
        if wgt.ndim != len(axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        if tuple(a._shape[i] for i in axes) != wgt._shape:
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        # broadcast weights along the specified axes
        shape = [1] * a.ndim
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        wgt = wgt.transpose(order) if len(axes) > 1 else wgt
        for i, ax in enumerate(sorted(axes)):
            shape[ax] = a._shape[ax]
        wgt = wgt.reshape(shape)
    scl = _r.sum(wgt, axis, rdt, None, kd)
    if bool(_r.any(uf.equal(scl, 0.0))):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = uf.true_divide(_r.sum(uf.multiply(a, wgt), axis, rdt, None, kd), scl)
    if returned:
        if scl._shape != avg._shape:
            scl = broadcast_view(scl, avg._shape).copy()
        return avg, scl
    return avg


# --- order statistics ------------------------------------------------------------------------


def _along_front(a, axis):
    """(a with the reduced axes moved to the front and merged in C order, n)."""
    if axis is None:
        flat = a.reshape(-1)
        return flat, flat._shape[0]
    axes = _r._normalize_axes(_r._axis_key(axis), a.ndim)
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = a.transpose(list(axes) + rest)
    n = 1
    for i in axes:
        n *= a._shape[i]
    return moved.reshape((n,) + tuple(a._shape[i] for i in rest)), n


def _sorted_along(a, axis):
    """(values sorted along the reduced axes moved to the front, n)."""
    moved, n = _along_front(a, axis)
    return sorting.sort(moved, axis=0), n


def _quantile(a, q, axis, method, keepdims, res_dt):
    """Quantiles q (host NumPy array in [0, 1]) of a: NumPy's ``_quantile`` over a sorted
    copy, with NaN slices (NaN sorts last) giving NaN, or for the nan-variants ignored."""
    from numpy.lib import _function_base_impl as fb

    a = _asarray(a)
    if method not in fb._QuantileMethods:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{fb._QuantileMethods.keys()}")
    props = fb._QuantileMethods[method]
    if a._size == 0:
        return None  # the caller runs NumPy on the host
    srt, n = _sorted_along(a, axis)
    vi = np.atleast_1d(np.asanyarray(props["get_virtual_index"](n, q)))
    if props["fix_gamma"] is None:  # the discontinuous methods pick one order statistic
        return _pick(a, srt, n, vi, q, axis, keepdims, res_dt)
    prev = np.floor(vi).astype(np.intp)
    nxt = prev + 1
    above = vi >= n - 1
    prev[above] = n - 1
    nxt[above] = n - 1
    below = vi < 0
    prev[below] = 0
    nxt[below] = 0
    gamma = np.asanyarray(props["fix_gamma"](vi - np.floor(vi), vi), dtype=vi.dtype)
    gamma = np.where(above | below, 0, gamma)
    rest = srt._shape[1:]
    out_rows = []
    last = srt[n - 1, ...]
    for i in range(vi.size):
        p, nx, g = int(prev.flat[i]), int(nxt.flat[i]), gamma.flat[i]
        lo = srt[p, ...].astype(res_dt)
        hi = srt[nx, ...].astype(res_dt)
        # NumPy's _lerp takes b - a in the data's dtype, then works in the result's
        d = uf.subtract(srt[nx, ...], srt[p, ...]).astype(res_dt)
        gv = res_dt.type(g)
        r = uf.add(lo, uf.multiply(d, gv))
        if g >= 0.5:
            r = uf.subtract(hi, uf.multiply(d, res_dt.type(1 - g)))
        if a.dtype.kind in "fc":
            r = _where(uf.isnan(last), last.astype(res_dt), r)
        out_rows.append(r.reshape((1,) + rest))
    res = _r._concat(out_rows, 0) if out_rows else empty_array((0,) + rest, res_dt)
    return _keepdims_shape(res.reshape(np.shape(q) + rest), a, q, axis, keepdims)


def _pick(a, srt, n, vi, q, axis, keepdims, res_dt):
    """NumPy's ``take`` branch of ``_quantile``: the order statistics ``vi`` (integer
    virtual indices) of the sorted ``srt``; a slice holding a NaN (sorted last) gives NaN."""
    rest = srt._shape[1:]
    last = srt[n - 1, ...]
    rows = []
    for i in range(vi.size):
        r = srt[int(vi.flat[i]), ...].astype(res_dt)
        if a.dtype.kind in "fc":
            r = _where(uf.isnan(last), last.astype(res_dt), r)
        rows.append(r.reshape((1,) + rest))
    res = _r._concat(rows, 0) if rows else empty_array((0,) + rest, res_dt)
    return _keepdims_shape(res.reshape(np.shape(q) + rest), a, q, axis, keepdims)


def _keepdims_shape(res, a, q, axis, keepdims):
    if not keepdims:
        return res
    if axis is None:
        kshape = (1,) * a.ndim
    else:
        axes = _r._normalize_axes(_r._axis_key(axis), a.ndim)
        kshape = tuple(1 if i in axes else m for i, m in enumerate(a._shape))
    return res.reshape(np.shape(q) + kshape)


def _host(fname, *args, **kwargs):
    return call_on_host(getattr(np, fname), args, kwargs)


def _q_array(q, scale):
    qh = np.asanyarray(q.get() if isinstance(q, ndarray) else q)
    if scale != 1:
        qh = np.true_divide(qh, scale)
    return qh


def _qfunc(name, a, q, axis, out, overwrite_input, method, keepdims, weights, nan, scale,
           interpolation=None):
    axis = _ureduce_axis(axis)
    qp = q.get() if isinstance(q, ndarray) else q  # a device q is read once (a sync point)
    qh = _q_array(qp, scale)
    kw = dict(axis=axis, out=out, overwrite_input=overwrite_input, method=method,
              keepdims=keepdims)
    if weights is not None:
        kw["weights"] = weights
    if interpolation is not None:
        kw["interpolation"] = interpolation
    a = _asarray(a)
    if weights is not None and interpolation is None:
        res = _weighted_qfunc(name, a, qp, qh, axis, out, method, keepdims, weights, False)
        if res is not None:
            return res
    if (weights is None and interpolation is None and a.dtype.kind in "fiu"
            and qh.dtype.kind in "fiu" and np.all((qh >= 0) & (qh <= 1))
            and (out is None or isinstance(out, ndarray))
            and not (type(axis) is tuple and not axis)):  # (axis may be a NumPy integer)
        # validate with NumPy on a tiny array first (errors, result dtype)
        probe = getattr(np, name)(np.zeros(_r._pattern(a._shape), a.dtype), qp,
                                  axis=axis, method=method, keepdims=keepdims)
        pd = normalize(np.asarray(probe).dtype)
        if qh.dtype.kind != "f":  # integer q (0 or 1): NumPy's integer gammas are 0, and
            qh = qh.astype(np.float64)  # its result dtype (pd) is what the probe gave
        with np.errstate(all="ignore"):
            if isinstance(axis, tuple):
                res = _quantile_over_axes(a, qh, axis, method, keepdims, pd)
            else:
                res = _quantile(a, qh, axis, method, keepdims, pd)
        if res is not None:
            return _to_out(res, out)
    return _host(name, a, qp, **kw)


def _quantile_over_axes(a, qh, axis, method, keepdims, res_dt):
    """``_quantile`` over a tuple of axes: those axes moved last and merged into one."""
    axes = _r._normalize_axes(axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in axes]
    merged = a.transpose(kept + sorted(axes)).reshape(
        tuple(a._shape[i] for i in kept) + (-1,))
    res = _quantile(merged, qh, -1, method, False, res_dt)
    if res is None or not keepdims:
        return res
    return res.reshape(qh.shape + tuple(1 if i in axes else m for i, m in enumerate(a._shape)))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    return _qfunc("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                  False, 1, interpolation)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    return _qfunc("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                  False, 100, interpolation)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=_NoValue, *, weights=None, interpolation=None):
    return _nanqfunc("nanquantile", a, q, axis, out, overwrite_input, method, keepdims,
                     weights, 1, interpolation)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=_NoValue, *, weights=None, interpolation=None):
    return _nanqfunc("nanpercentile", a, q, axis, out, overwrite_input, method, keepdims,
                     weights, 100, interpolation)


# The methods whose gamma is the fractional part of the virtual index (fix_gamma identity).
_CONTINUOUS = ("linear", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
               "normal_unbiased")
# nanquantile on the device: every method of NumPy's table (_DISCRETE below: a take; the
# rest interpolate, averaged_inverted_cdf and midpoint with NumPy's fixed gammas)
_NATIVE_NAN = _CONTINUOUS + ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                             "lower", "higher", "nearest", "midpoint")


def _nanqfunc(name, a, q, axis, out, overwrite_input, method, keepdims, weights, scale,
              interpolation):
    axis = _ureduce_axis(axis)
    kw = dict(axis=axis, out=out, overwrite_input=overwrite_input, method=method,
              weights=weights)
    if interpolation is not None:
        kw["interpolation"] = interpolation
    if keepdims is not _NoValue:
        kw["keepdims"] = keepdims
    a = _asarray(a)
    qp = q.get() if isinstance(q, ndarray) else q  # a device q is read once (a sync point)
    if weights is not None and interpolation is None:
        res = _weighted_qfunc(name, a, qp, _q_array(qp, scale), axis, out, method,
                              _r._kd(keepdims), weights, True)
        if res is not None:
            return res
    if (weights is None and interpolation is None and a._size
            and (out is None or isinstance(out, ndarray))):
        if a.dtype.kind in "iu":  # no NaN possible: NumPy's nanquantile is quantile here
            return _qfunc(name[3:], a, qp, axis, out, overwrite_input, method, _r._kd(keepdims),
                          None, False, scale)
        qh = _q_array(qp, scale)
        if qh.dtype.kind in "iu":  # integer q (0 or 1): gammas of 0, NumPy's dtype (pd)
            qh = qh.astype(np.float64)
        if (a.dtype.kind == "f" and method in _NATIVE_NAN and qh.dtype in (np.float32,
                                                                         np.float64)
                and np.all((qh >= 0) & (qh <= 1))):
            # validate with NumPy on a tiny array first (errors, result dtype)
            probe = getattr(np, name)(np.zeros(_r._pattern(a._shape), a.dtype), qp,
                                      axis=axis, method=method, keepdims=_r._kd(keepdims))
            pd = normalize(np.asarray(probe).dtype)
            weak = type(q) in (int, float)
            with np.errstate(all="ignore"):
                res = _nanquantile(a, qh, weak, axis, method, _r._kd(keepdims), pd)
            return _to_out(res, out)
    return _host(name, a, qp, **kw)


def _weighted_qfunc(name, a, q, qh, axis, out, method, keepdims, weights, nan):
    """``weights=`` (NumPy: method 'inverted_cdf' only) on the device, or None when the
    host should run it (empty input, unusual dtypes or ``out``).  NumPy validates the
    arguments on stand-ins of the right shapes (zero-stride host arrays), so its errors
    come out unchanged."""
    from numpy.lib import _function_base_impl as fb

    w = _asarray(weights)
    if (not a._size or a.dtype.kind not in "fiu" or w.dtype.kind not in "fiub"
            or qh.dtype.kind not in "fiu" or (out is not None and not isinstance(out, ndarray))):
        return None
    ax = None if axis is None else np.lib.array_utils.normalize_axis_tuple(
        _r._axis_key(axis) if not isinstance(axis, list) else tuple(axis), a.ndim, "axis")
    probe = getattr(np, name)(np.zeros((1,) * a.ndim, a.dtype), q, axis=axis, method=method,
                              keepdims=keepdims, weights=np.ones((1,) * a.ndim))
    if method != "inverted_cdf":  # (NumPy's probe raised already)
        return None
    if nan and w._shape != a._shape and axis is not None and a.ndim > 1:
        return None  # NumPy 2.4's nan-variants index such weights per row: IndexError
    stand_in = np.broadcast_to(np.zeros((), a.dtype), a._shape)
    wshape = fb._weights_are_valid(np.broadcast_to(np.zeros((), w.dtype), w._shape),
                                   stand_in, ax).shape
    if w._shape != a._shape:  # weights along the axes, in ``axis``'s order
        w = w.transpose([int(i) for i in np.argsort(ax)]).reshape(wshape)
    with np.errstate(all="ignore"):
        res = _weighted_inverted_cdf(a, qh, axis, w, nan)
    res = _keepdims_shape(res, a, qh, axis, keepdims)
    if (out is not None and out._shape != res._shape) or res.dtype != np.asarray(probe).dtype:
        return None  # NumPy's error, or a case this path does not foresee
    return _to_out(res, out)


def _sequential_zeros(csum, ws):
    """``csum`` (a cumsum of ``ws`` along axis 0) with each zero weight's entry copied from
    the entry before it.  NumPy's sequential cumsum leaves the sum unchanged across zero
    weights, so a row's trailing zero weights share its total and q = 1 picks the last
    positively weighted value; a parallel scan adds the same numbers in another grouping
    and can end a last bit away, which moves the pick onto a zero weight."""
    n = ws._shape[0]
    positions = creation.arange(n, dtype=np.intp).reshape((n,) + (1,) * (ws.ndim - 1))
    last_nonzero = _where(uf.not_equal(ws, 0), positions, 0)
    last_nonzero = uf.maximum.accumulate(last_nonzero, axis=0)  # forward fill
    return indexing.take_along_axis(csum, last_nonzero, 0)


def _weighted_inverted_cdf(a, qh, axis, w, nan):
    """NumPy's weighted inverted_cdf for every row at once: the rows sorted with their
    weights (NaN last; for the nan-variants NaN values get weight 0, which is NumPy's
    removing them), the cdf as a float64 cumsum over its last value (cast to q's float
    dtype, zeros set to -1 so q = 0 skips leading zero weights), and the index of each q
    as the number of cdf values below it (searchsorted 'left' on a sorted row), capped
    at the row's last valid element.  One read back (sync point) for NumPy's errors and
    the All-NaN warning."""
    vals, n = _along_front(a, axis)
    wts, _ = _along_front(manipulation.broadcast_to(w, a._shape), axis)
    rest = vals._shape[1:]
    R = 1
    for m in rest:
        R *= m
    vals, wts = vals.reshape((n, R)), wts.reshape((n, R))
    order = sorting.argsort(vals, axis=0)
    srt = indexing.take_along_axis(vals, order, 0)
    ws = indexing.take_along_axis(wts, order, 0).astype(np.float64)
    floats = a.dtype.kind == "f"
    if nan and floats:
        valid = uf.logical_not(uf.isnan(srt))
        ws = _where(valid, ws, 0.0)
        cnt = _r.sum(valid, 0, np.intp)
    else:
        cnt = creation.full((R,), n, np.intp)
    allnan = uf.equal(cnt, 0)
    cdf = _sequential_zeros(_r.cumsum(ws, axis=0), ws)
    cdf = uf.true_divide(cdf, cdf[n - 1])
    bad_row = uf.logical_and(uf.isnan(cdf[n - 1]), uf.logical_not(allnan))
    flags = _r._concat([_r.any(uf.less(w, 0)).reshape(1), _r.any(bad_row).reshape(1),
                        _r.any(allnan).reshape(1)], 0).get()
    if flags[0]:
        raise ValueError("Weights must be non-negative.")
    if flags[1]:
        raise ValueError("Weights included NaN, inf or were all zero.")
    if flags[2]:
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
    if qh.dtype.kind == "f":
        cdf = cdf.astype(qh.dtype)
    cdf = _where(uf.equal(cdf, 0), cdf.dtype.type(-1), cdf)
    last = uf.maximum(uf.subtract(cnt, 1), 0)
    rows = []
    for qv in qh.reshape(-1):
        idx = _r.sum(uf.less(cdf, qv), 0, np.intp)
        rows.append(uf.minimum(idx, last).reshape(1, R))
    idx = _r._concat(rows, 0) if rows else creation.zeros((0, R), np.intp)
    r = _gather_rows(srt, idx)
    if floats:  # NaN rows: NaN (the last sorted value; all-NaN rows of the nan-variants)
        tail = srt[n - 1, ...].reshape(1, R)
        r = _where(uf.isnan(tail) if not nan else allnan.reshape(1, R), tail, r)
    return r.reshape(qh.shape + rest)


def _to_out(res, out):
    if out is None:
        return res
    out[...] = res
    return out


def _nan_rows(a, axis):
    """(sorted values as (n, R) with NaN last, n, shape of the kept axes, non-NaN count per
    row (R,), all-NaN mask (R,), whether the first row is all NaN).  Warns like NumPy when
    some row is all NaN: the one read back (sync point) of the NaN-ignoring order
    statistics."""
    srt, n = _sorted_along(a, axis)
    rest = srt._shape[1:]
    R = 1
    for m in rest:
        R *= m
    srt = srt.reshape((n, R))
    cnt = _r.sum(uf.logical_not(uf.isnan(srt)), 0, np.intp)
    allnan = uf.equal(cnt, 0)
    flags = _r._concat([_r.any(allnan).reshape(1), allnan[0:1]], 0).get()
    if flags[0]:
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
    return srt, n, rest, cnt, allnan, bool(flags[1])


def _gather_rows(srt, idx):
    """srt[idx[..., r], r] for (n, R) srt and (..., R) row indices, without a bounds sync."""
    n, R = srt._shape
    idx = uf.maximum(idx, 0)  # all-NaN rows (count 0): any element, replaced later
    flat = uf.add(uf.multiply(idx, R), arange(R, dtype=np.intp))
    return take(srt.reshape(-1), flat, mode="clip")


def _reduced_shape(a, axis, keepdims, rest):
    if not keepdims:
        return rest
    if axis is None:
        return (1,) * a.ndim
    axes = _r._normalize_axes(_r._axis_key(axis), a.ndim)
    return tuple(1 if i in axes else m for i, m in enumerate(a._shape))


def _nanquantile(a, qh, weak, axis, method, keepdims, res_dt):
    """NumPy's ``_nanquantile_1d`` for every row at once: the virtual index from each row's
    non-NaN count (NumPy's method table, evaluated on device arrays with the count in q's
    dtype, as NumPy's Python-int count promotes), NumPy's neighbour indices and gamma, and
    ``_lerp`` with its dtypes (the difference in a's dtype; for a Python-number q the weight
    rounded to a's dtype).  All-NaN rows give NaN."""
    from numpy.lib import _function_base_impl as fb

    srt, n, rest, cnt, allnan, first_nan = _nan_rows(a, axis)
    R = srt._shape[1]
    qdt = qh.dtype
    m = cnt.astype(qdt).reshape(1, R)
    qd = asarray(np.ascontiguousarray(qh.reshape(-1, 1)))
    if method in _DISCRETE:  # one order statistic per row: no interpolation
        r = _gather_rows(srt, _discrete_index(method, m, qd))
        r = _where(allnan.reshape(1, R), np.nan, r)
        return _nan_result(r, a, qh, axis, keepdims, rest, a.dtype)
    if method == "midpoint":  # NumPy's lambda calls np.floor/np.ceil: the same on device
        x = uf.multiply(uf.subtract(m, 1), qd)
        vi = uf.multiply(0.5, uf.add(uf.floor(x), uf.ceil(x)))
    else:
        vi = fb._QuantileMethods[method]["get_virtual_index"](m, qd)  # (Q, R), q's dtype
    fl = uf.floor(vi)
    above = uf.greater_equal(vi, uf.subtract(m, 1))
    below = uf.less(vi, 0)
    prev_np = _where(above, qdt.type(-1), _where(below, qdt.type(0), fl))
    gamma = uf.subtract(vi, prev_np)
    if method == "averaged_inverted_cdf":  # NumPy's fix_gamma masks
        gamma = _where(uf.equal(gamma, 0), 0.5, 1.0).astype(qdt)
    elif method == "midpoint":
        gamma = _where(uf.equal(uf.remainder(vi, 1), 0), 0.0, 0.5).astype(qdt)
    last = uf.subtract(cnt, 1).reshape(1, R)
    fl_i = fl.astype(np.intp)
    prev_i = _where(above, last, _where(below, 0, fl_i))
    next_i = _where(above, last, _where(below, 0, uf.add(fl_i, 1)))
    lo = _gather_rows(srt, prev_i)
    hi = _gather_rows(srt, next_i)
    d = uf.subtract(hi, lo)
    if weak:
        t = gamma.astype(a.dtype)
        omt = uf.subtract(1.0, gamma.astype(np.float64)).astype(a.dtype)
    else:
        t = gamma
        omt = uf.subtract(1, gamma)
    r = _where(uf.greater_equal(gamma, 0.5),
               uf.subtract(hi, uf.multiply(d, omt)),
               uf.add(lo, uf.multiply(d, t)))
    r = _where(allnan.reshape(1, R), np.nan, r)
    # NumPy's per-row loop takes its dtype from the first row, which is a's dtype when that
    # row is all NaN (np.full(q.shape, nan, dtype=a.dtype))
    return _nan_result(r, a, qh, axis, keepdims, rest, a.dtype if first_nan else res_dt)


# NumPy's methods whose virtual index is an integer (fix_gamma None): a take, no lerp
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")


def _discrete_index(method, m, qd):
    """NumPy's integer virtual index of ``method`` for row counts ``m`` (1, R) and
    quantiles ``qd`` (Q, 1), both in q's dtype, on the device: (Q, R) intp."""
    if method in ("lower", "higher", "nearest"):
        x = uf.multiply(uf.subtract(m, 1), qd)
        rnd = {"lower": "floor", "higher": "ceil", "nearest": "rint"}[method]
        return UFUNCS[rnd](x).astype(np.intp)
    # _discrete_interpolation_to_boundaries: the previous index where gamma_fun holds, else
    # the next, and never below 0
    x = uf.subtract(uf.multiply(m, qd), 1)
    if method == "closest_observation":
        x = uf.subtract(x, 0.5)
    prev = uf.floor(x)
    cond = uf.equal(uf.subtract(x, prev), 0)
    if method == "closest_observation":
        cond = uf.logical_and(cond, uf.equal(uf.remainder(prev, 2), 1))
    res = _where(cond, prev, uf.add(prev, 1)).astype(np.intp)
    return uf.maximum(res, 0)


def _nan_result(r, a, qh, axis, keepdims, rest, dt):
    """The (Q, R) quantiles in NumPy's nanquantile layout: dtype, q axes, keepdims."""
    r = r.astype(dt, copy=False).reshape(qh.shape + rest)
    qn, k = len(qh.shape), len(rest)
    if qn >= 2 and k and isinstance(axis, (tuple, list)) and len(set(axis)) > 1:
        # NumPy (_nanquantile_ureduce_func) moves the q axes back from "axis + i" with the
        # merged axis -1, which for a multi-dimensional q scrambles the axes; do the same
        nd = qn + k
        r0 = r.transpose(list(range(qn, nd)) + list(range(qn)))
        src = [nd - 1] + list(range(qn - 1))
        order = [i for i in range(nd) if i not in src]
        for dst, sa in sorted(zip(range(qn), src)):
            order.insert(dst, sa)
        r = r0.transpose(order)
    if keepdims:
        # _ureduce: the last len(rest) axes of the result stand for the kept axes
        kept = iter(r._shape[r.ndim - k:])
        axes = () if axis is None else _r._normalize_axes(_r._axis_key(axis), a.ndim)
        full = tuple(1 if axis is None or i in axes else next(kept) for i in range(a.ndim))
        r = r.reshape(r._shape[:r.ndim - k] + full)
    return r


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a = _asarray(a)
    axis = _ureduce_axis(axis)
    if a._size and out is None and a.dtype.kind in "fiub" and not isinstance(axis, tuple):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = np.median(np.zeros(_r._pattern(a._shape), a.dtype), axis=axis,
                              keepdims=keepdims)
            pd = normalize(np.asarray(probe).dtype)
            res = _median(a, axis, keepdims, pd)
        return res
    return _host("median", a, axis=axis, out=out, overwrite_input=overwrite_input,
                 keepdims=keepdims)


def _median(a, axis, keepdims, res_dt):
    """NumPy's median: the middle element, or the mean of the two middle ones
    ((lo + hi) / 2, as ``numpy.mean`` computes it); NaN where a slice holds a NaN."""
    srt, n = _sorted_along(a, axis)
    if n % 2:
        res = srt[n // 2, ...].astype(res_dt)
    else:
        res = uf.true_divide(uf.add(srt[n // 2 - 1, ...].astype(res_dt),
                                            srt[n // 2, ...].astype(res_dt)), res_dt.type(2))
    if a.dtype.kind in "fc":
        last = srt[n - 1, ...]
        res = _where(uf.isnan(last), last.astype(res_dt), res)
    if keepdims:
        if axis is None:
            kshape = (1,) * a.ndim
        else:
            axes = _r._normalize_axes(_r._axis_key(axis), a.ndim)
            kshape = tuple(1 if i in axes else m for i, m in enumerate(a._shape))
        res = res.reshape(kshape)
    return res


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue):
    a = _asarray(a)
    axis = _ureduce_axis(axis)
    if a._size and (out is None or isinstance(out, ndarray)):
        if a.dtype.kind in "iu":  # no NaN possible: NumPy's nanmedian is median here
            return median(a, axis, out, overwrite_input, _r._kd(keepdims))
        if a.dtype.kind == "f":
            # validate with NumPy on a tiny array first (axis errors)
            np.nanmedian(np.zeros(_r._pattern(a._shape), a.dtype), axis=axis,
                         keepdims=_r._kd(keepdims))
            with np.errstate(all="ignore"):
                res = _nanmedian(a, axis, _r._kd(keepdims))
            return _to_out(res, out)
    kw = {} if keepdims is _NoValue else {"keepdims": keepdims}
    return _host("nanmedian", a, axis=axis, out=out, overwrite_input=overwrite_input, **kw)


def _nanmedian(a, axis, keepdims):
    """NumPy's nanmedian on every row at once.  NumPy takes two paths: along an axis of
    fewer than 600 elements (with other axes kept) a masked median, ``(lo + hi) / 2`` in a's
    dtype (with lo = hi for odd counts); otherwise ``median`` of the non-NaN values, whose
    ``mean`` of the two middle values runs in float32 for float16.  All-NaN rows give NaN."""
    srt, n, rest, cnt, allnan, _ = _nan_rows(a, axis)
    R = srt._shape[1]
    h = uf.floor_divide(cnt, 2).reshape(1, R)
    odd = uf.equal(uf.remainder(cnt, 2), 1).reshape(1, R)
    lo = _gather_rows(srt, _where(odd, h, uf.subtract(h, 1)))
    hi = _gather_rows(srt, h)
    two = a.dtype.type(2)
    if axis is not None and len(rest) and n < 600:
        r = uf.true_divide(uf.add(lo, hi), two)
    else:
        if a.dtype == np.float16:
            f4 = np.dtype(np.float32)
            mid = uf.true_divide(uf.add(lo.astype(f4), hi.astype(f4)),
                                     np.float32(2)).astype(a.dtype)
        else:
            mid = uf.true_divide(uf.add(lo, hi), two)
        r = _where(odd, hi, mid)
    r = _where(allnan.reshape(1, R), a.dtype.type(np.nan), r).astype(a.dtype, copy=False)
    return r.reshape(_reduced_shape(a, axis, keepdims, rest))


# --- covariance ---------------------------------------------------------------------------------


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    if fweights is not None or aweights is not None:
        return _host("cov", m, y, rowvar=rowvar, bias=bias, ddof=ddof, fweights=fweights,
                     aweights=aweights, dtype=dtype)
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = _asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = _asarray(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else np.result_type(
            m.dtype, y.dtype, np.float64)
    dtype = normalize(dtype)
    X = m.reshape(1, -1) if m.ndim < 2 else m
    X = X.astype(dtype)
    if not rowvar and X._shape[0] != 1:
        X = X.T
    if X._shape[0] == 0:
        return empty_array((0, 0), dtype)
    if y is not None:
        Y = y.reshape(1, -1) if y.ndim < 2 else y
        Y = Y.astype(dtype)
        if not rowvar and Y._shape[0] != 1:
            Y = Y.T
        X = _r._concat([X, Y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    avg = mean(X, axis=1)
    fact = X._shape[1] - ddof
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = uf.subtract(X, avg.reshape(-1, 1))
    Xc = uf.conjugate(X)
    if X._shape[0] <= 64:  # few variables: a broadcast product and one device reduction
        c = _r.sum(uf.multiply(X.reshape(X._shape[0], 1, -1),
                                   Xc.reshape(1, X._shape[0], -1)), axis=-1)
    else:
        c = products.dot(X, Xc.T)
    with np.errstate(all="ignore"):
        c = uf.true_divide(c, fact)
    return c.squeeze()


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return uf.true_divide(c, c)
    d = indexing.diagonal(c)
    sd = uf.sqrt(d.real if d.dtype.kind == "c" else d)
    with np.errstate(all="ignore"):
        c = uf.true_divide(c, sd.reshape(-1, 1))
        c = uf.true_divide(c, sd.reshape(1, -1))
    if c.dtype.kind != "c":
        c = clip(c, -1, 1)
    else:
        c.real[...] = clip(c.real, -1, 1)
        c.imag[...] = clip(c.imag, -1, 1)
    return c
