"""Elementwise functions that are not ufuncs (NumPy: "Mathematical functions", where)."""
from __future__ import annotations

import operator

import numpy as np

from .. import _backends
from .._array import assign, broadcast_view, empty_array, from_host, ndarray
from .._backends.base import ElementwiseOp
from .._shapes import _prod
from .._fallback import call_on_host
from .._host_path import host_operands, wrap_host
from .._ufunc import _as_operand, uf
from .creation import asarray, zeros

__all__ = ["where", "tril", "triu", "clip", "nan_to_num", "real", "imag", "angle", "around",
           "round", "fix", "sinc", "i0", "isclose", "isreal", "iscomplex", "real_if_close",
           "astype", "isposinf", "isneginf"]


def _weak(x):
    """What ``numpy.result_type`` should see: an array's dtype, a Python scalar's value
    (weak, NEP 50) or a NumPy scalar (strong)."""
    return x.dtype if isinstance(x, ndarray) else x


def _arr(x):
    return asarray(x)


def where(condition, x=None, y=None, /):
    """``where(c, x, y)`` selects elementwise; ``where(c)`` is ``nonzero(c)``."""
    if x is None and y is None:
        return asarray(condition).nonzero()  # the method: nonzero is built above, on indexing
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    hosted = host_operands((condition, x, y))
    if hosted is not None:  # the host path: NumPy's where on the kept views
        return wrap_host(np.where(*hosted))
    cond = asarray(condition)
    if cond.dtype != np.bool_:
        cond = cond.astype(np.bool_)
    x, y = _as_operand(x), _as_operand(y)
    dt = np.result_type(_weak(x), _weak(y))
    shapes = [a.shape for a in (cond, x, y) if isinstance(a, ndarray)]
    shape = np.broadcast_shapes(*shapes)
    ops = []
    for v in (x, y):
        if isinstance(v, ndarray):
            ops.append(broadcast_view(v if v.dtype == dt else v.astype(dt), shape))
        else:
            ops.append(dt.type(v))
    size = _prod(shape)
    if not size:
        return empty_array(shape, dt)
    op = ElementwiseOp("where", "where_", ("?", dt.char, dt.char, dt.char), 3)
    ins = (broadcast_view(cond, shape), *ops)
    backend = _backends.for_result(size * dt.itemsize, *ins)  # (for_arrays(*ins, out)'s)
    out = empty_array(shape, dt, backend=backend)
    backend.elementwise(op, ins, (out,))
    return out


# tril and triu (NumPy: "Building matrices") select with a triangular mask: they are where.
def _tri_mask(m, k, upper):
    m = asarray(m)
    if m.ndim == 0:  # NumPy calls tri(*m.shape[-2:])
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    keep = np.tri(*m.shape[-2:], k=k - 1 if upper else k, dtype=bool)  # 1-d m: n x n
    if upper:
        keep = ~keep
    return where(from_host(keep), m, m.dtype.type(0))


def tril(m, k=0):
    return _tri_mask(m, operator.index(k), upper=False)


def triu(m, k=0):
    return _tri_mask(m, operator.index(k), upper=True)


_CLIP_UFUNC_KWARGS = frozenset({"where", "casting", "order", "dtype", "subok", "signature"})


def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
         max=np._NoValue, **kwargs):
    """NumPy's clip: a value equal to a bound is kept as it is (so -0.0 stays), and NaN in
    the value or in a bound gives NaN; lo > hi gives hi."""
    lo = a_min if a_min is not np._NoValue else (None if min is np._NoValue else min)
    hi = a_max if a_max is not np._NoValue else (None if max is np._NoValue else max)
    unknown = set(kwargs) - _CLIP_UFUNC_KWARGS
    if unknown:
        raise TypeError(f"clip() got an unexpected keyword argument '{unknown.pop()}'")
    if kwargs:  # clip's ufunc keywords (where=, dtype=, casting=...): NumPy computes
        from .._fallback import call_on_host

        return call_on_host(np.clip, (a, lo, hi, out), kwargs)
    a = _as_operand(a)
    dt = np.result_type(*[_weak(x) for x in (a, lo, hi) if x is not None])
    res = _arr(a).astype(dt, copy=False)
    if lo is not None:
        res = where(uf.less(res, lo), lo, res)
        if dt.kind in "fc":
            res = where(uf.isnan(lo), lo, res)
    if hi is not None:
        res = where(uf.greater(res, hi), hi, res)
        if dt.kind in "fc":
            res = where(uf.isnan(hi), hi, res)
    if lo is None and hi is None:
        res = res.copy()
    res = res.astype(dt, copy=False)
    if out is not None:
        assign(out, res)
        return out
    return res


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = _arr(x)
    if x.dtype.kind not in "fc":
        return x.copy() if copy else x
    if x.dtype.kind == "c":
        out = x.copy() if copy else x
        out.real[...] = nan_to_num(out.real, False, nan, posinf, neginf)
        out.imag[...] = nan_to_num(out.imag, False, nan, posinf, neginf)
        return out
    fi = np.finfo(x.dtype)
    pos = fi.max if posinf is None else posinf
    neg = fi.min if neginf is None else neginf
    res = where(uf.isnan(x), x.dtype.type(nan), x)
    res = where(uf.equal(res, np.inf), x.dtype.type(pos), res)
    res = where(uf.equal(res, -np.inf), x.dtype.type(neg), res)
    if copy:
        return res
    x[...] = res
    return x


def real(val):
    val = _arr(val)
    return val.real


def imag(val):
    val = _arr(val)
    return val.imag


def angle(z, deg=False):
    z = _arr(z)
    if z.dtype.kind == "c":
        zimag, zreal = z.imag, z.real
    else:
        zimag, zreal = 0, z
    a = uf.arctan2(zimag, zreal)
    if deg:
        a = a * (180 / np.pi)
    return a


def around(a, decimals=0, out=None):
    if not isinstance(decimals, (bool, np.bool_)):
        decimals = operator.index(decimals)  # NumPy's check: 1.5, '1' and None raise
    decimals = int(decimals)
    a = _arr(a)
    if a.dtype.kind == "c":
        res = a.copy()
        res.real[...] = around(a.real, decimals)
        res.imag[...] = around(a.imag, decimals)
    elif a.dtype.kind == "b":  # NumPy: rint's float16 loop; other decimals cannot cast back
        if decimals:
            raise TypeError(f"Cannot cast ufunc '{'multiply' if decimals > 0 else 'divide'}' "
                            f"output from dtype('float64') to dtype('bool') with casting rule "
                            f"'same_kind'")
        res = uf.rint(a)
    elif a.dtype.kind in "iu":
        if decimals >= 0:
            res = a.copy()
        else:
            f = 10 ** (-decimals)
            res = uf.multiply(uf.rint(uf.true_divide(a, f)), f).astype(a.dtype)
    elif decimals == 0:
        res = uf.rint(a)
    elif decimals > 0:
        f = a.dtype.type(10.0 ** decimals)
        res = uf.true_divide(uf.rint(uf.multiply(a, f)), f)
    else:
        f = a.dtype.type(10.0 ** -decimals)
        res = uf.multiply(uf.rint(uf.true_divide(a, f)), f)
    if out is not None:
        assign(out, res)
        return out
    return res


round = around


def fix(x, out=None):
    x = _arr(x)
    res = uf.ceil(x, out=out)
    return uf.floor(x, out=res, where=uf.greater_equal(x, 0))


def sinc(x):
    x = _arr(x)
    y = uf.multiply(np.pi, where(uf.equal(x, 0), 1.0e-20, x))
    return uf.true_divide(uf.sin(y), y)


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """NumPy's formula, step by step: |a - b| <= atol + rtol*|b|, inf and nan as NumPy."""
    x, y = (v if isinstance(v, (int, float, complex)) else _arr(v) for v in (a, b))
    if isinstance(y, ndarray):
        dt = np.result_type(y.dtype, 1.0)
        y = y.astype(dt, copy=False)
    elif isinstance(y, int):
        y = float(y)
    close = uf.less_equal(uf.absolute(uf.subtract(x, y)),
                            uf.add(atol, uf.multiply(rtol, uf.absolute(y))))
    result = uf.logical_or(uf.logical_and(close, uf.isfinite(y)), uf.equal(x, y))
    if equal_nan:
        result = uf.logical_or(result, uf.logical_and(uf.isnan(x), uf.isnan(y)))
    return result


def isreal(x):
    return uf.equal(imag(x), 0)


def iscomplex(x):
    x = _arr(x)
    if x.dtype.kind != "c":
        return zeros(x.shape, bool)
    return uf.not_equal(x.imag, 0)


def real_if_close(a, tol=100):
    a = _arr(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    small = uf.less(uf.absolute(a.imag), tol)
    return a.real.copy() if bool(small._host().all()) else a  # a sync point


# i0 evaluates NumPy's own Chebyshev tables (Cephes) with the same recurrence, elementwise,
# on both branches.  The tables are read from NumPy so they cannot drift.
def _i0_tables():
    try:
        from numpy.lib import _function_base_impl as impl

        return impl._i0A, impl._i0B
    except (ImportError, AttributeError):  # a NumPy without them: compute on the host
        return None


def _chbevl(x, vals):
    b0, b1 = vals[0], 0.0
    b2 = 0.0
    for v in list(vals)[1:]:
        b2 = b1
        b1 = b0
        b0 = uf.add(uf.subtract(uf.multiply(x, b1), b2), v)
    return uf.multiply(0.5, uf.subtract(b0, b2))


def i0(x):
    x = _arr(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    tables = _i0_tables()
    if tables is None:
        return call_on_host(np.i0, (x,), {})
    x = uf.absolute(x)
    small = uf.multiply(uf.exp(x), _chbevl(uf.subtract(uf.divide(x, 2.0), 2.0),
                                                tables[0]))
    big = uf.true_divide(uf.multiply(uf.exp(x),
                                         _chbevl(uf.subtract(uf.divide(32.0, x), 2.0),
                                                 tables[1])),
                           uf.sqrt(x))
    return where(uf.less_equal(x, 8.0), small, big)


def astype(x, dtype, /, *, copy=True, device=None):
    """``numpy.astype`` (the array API function): ``x.astype(dtype, copy=copy)``."""
    if not isinstance(x, ndarray):
        if np.isscalar(x):  # NumPy's own answer for a scalar (a NumPy scalar, or its error)
            return np.astype(x, dtype, copy=copy)
        raise TypeError(f"Input should be a cupynum array or scalar. It is a {type(x)} instead.")
    if device is not None and device != x.device and str(device) != str(x.device):
        raise ValueError(f"Device not understood: cupynum arrays live on {x.device!r}, "
                         f"not {device!r}")
    return x.astype(dtype, copy=copy)


def _signed_inf(x, out, positive):
    x = x if isinstance(x, ndarray) else _arr(x)
    try:
        sign_ok = uf.signbit(x)
    except TypeError as e:
        raise TypeError(f"This operation is not supported for {x.dtype} values because it "
                        "would be ambiguous.") from e
    if positive:
        sign_ok = uf.logical_not(sign_ok)
    return uf.logical_and(uf.isinf(x), sign_ok, out)


def isposinf(x, out=None):
    """True where x is +inf (NumPy's isinf and not signbit)."""
    return _signed_inf(x, out, True)


def isneginf(x, out=None):
    """True where x is -inf (NumPy's isinf and signbit)."""
    return _signed_inf(x, out, False)


def _install_fast_scalar_power():
    """NumPy's ``fast_scalar_power``: ``x ** 2``, ``x ** -1`` (Python ints) and ``x ** 0.5``
    (a Python float) of a float or complex array are ``square``, ``reciprocal`` and
    ``sqrt`` (so ``(-0.0) ** 0.5`` is -0.0, as ``sqrt`` gives); in place for ``**=``.
    Installed over the operators that ``_ufunc`` installs."""
    power, ipower = ndarray.__pow__, ndarray.__ipow__
    # (exponent type, value): the type is part of the key, so 2.0 and True stay on power
    by_exponent = {(int, 2): uf.square, (int, -1): uf.reciprocal,
                   (float, 0.5): uf.sqrt}

    def pow_(self, other):
        t = type(other)
        if (t is int or t is float) and self.dtype.kind in "fc":
            uf = by_exponent.get((t, other))
            if uf is not None:
                return uf(self)
        return power(self, other)

    def ipow(self, other):
        t = type(other)
        if (t is int or t is float) and self.dtype.kind in "fc":
            uf = by_exponent.get((t, other))
            if uf is not None:
                return uf(self, out=self)
        return ipower(self, other)

    ndarray.__pow__, ndarray.__ipow__ = pow_, ipow


_install_fast_scalar_power()
