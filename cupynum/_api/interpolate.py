"""``interp``: NumPy's piecewise-linear interpolation (``compiled_interp``) on the device.

Each x finds its interval with a binary search (``searchsorted``, side 'right': the last
xp[j] <= x, as NumPy's ``binary_search_with_guess``), then takes NumPy's branches elementwise:
NaN x stays NaN; below xp[0] gives ``left``, above xp[-1] gives ``right``; x equal to xp[-1]
or to xp[j] gives fp[j]; otherwise ``slope * (x - xp[j]) + fp[j]``, retried from the right
end of the interval when that is NaN.  Each step is a separate kernel, so no multiply-add is
fused and the arithmetic is NumPy's, bit for bit.  Complex fp goes through NumPy on the host.
"""
from __future__ import annotations

import numpy as np

from .._array import ndarray
from .._fallback import call_on_host
from .._ufunc import uf
from .creation import asarray
from .elementwise import where
from .indexing import take
from .manipulation import concatenate
from .sorting import argsort, searchsorted

__all__ = ["interp"]


def _is_complex(v):
    return v is not None and (v.dtype.kind == "c" if isinstance(v, ndarray)
                              else np.iscomplexobj(v))


def interp(x, xp, fp, left=None, right=None, period=None):
    if any(_is_complex(v) for v in (fp, left, right)):
        return call_on_host(np.interp, (x, xp, fp), dict(left=left, right=right, period=period))
    x, xp, fp = (asarray(v, dtype=np.float64) for v in (x, xp, fp))
    # NumPy's own errors (shapes, lengths, period 0) from stand-ins of the same shapes
    np.interp(np.zeros(x.shape), np.zeros(xp.shape), np.zeros(fp.shape), left, right, period)
    if period is not None:
        xp, fp, x = _periodic(x, xp, fp, abs(period))
        left = right = None
    return _interp(x, xp, fp, left, right)


def _periodic(x, xp, fp, period):
    """NumPy's normalisation: everything modulo the period, xp sorted and padded by one
    point on each side."""
    x = uf.remainder(x, period)
    xp = uf.remainder(xp, period)
    order = argsort(xp)
    xp, fp = take(xp, order), take(fp, order)
    xp = concatenate((uf.subtract(xp[-1:], period), xp, uf.add(xp[0:1], period)))
    fp = concatenate((fp[-1:], fp, fp[0:1]))
    return xp, fp, x


def _interp(x, xp, fp, left, right):
    n = xp.shape[0]
    first, last = fp[0], fp[n - 1]
    lval = first if left is None else np.float64(left)
    rval = last if right is None else np.float64(right)
    if n == 1:  # NumPy's own branch: comparisons only (a NaN x gives fp[0])
        x0 = xp[0]
        return where(uf.less(x, x0), lval, where(uf.greater(x, x0), rval, first))
    j = uf.subtract(searchsorted(xp, x, side="right"), 1)
    jc = uf.minimum(uf.maximum(j, 0), n - 2)
    x0, x1 = take(xp, jc), take(xp, uf.add(jc, 1))
    y0, y1 = take(fp, jc), take(fp, uf.add(jc, 1))
    slope = uf.true_divide(uf.subtract(y1, y0), uf.subtract(x1, x0))
    res = uf.add(uf.multiply(slope, uf.subtract(x, x0)), y0)
    from_right = uf.add(uf.multiply(slope, uf.subtract(x, x1)), y1)
    from_right = where(uf.logical_and(uf.isnan(from_right), uf.equal(y0, y1)), y0,
                       from_right)
    res = where(uf.isnan(res), from_right, res)
    res = where(uf.equal(x0, x), y0, res)
    res = where(uf.equal(j, n - 1), last, res)
    res = where(uf.greater(x, xp[n - 1]), rval, res)
    res = where(uf.less(j, 0), lval, res)
    return where(uf.isnan(x), x, res)
