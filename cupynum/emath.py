"""``numpy.emath``: math functions whose real inputs outside the real domain give complex
results (``sqrt(-1)`` is ``1j``), written as NumPy's ``_scimath_impl``: the input is made
complex when any real element is out of the domain, then the ordinary ufunc runs.  Deciding
that reads one flag back from the device (a sync point, see docs/differences.md)."""
from __future__ import annotations

import numpy as np

from ._api import creation, reductions
from ._ufunc import UFUNCS, uf

__all__ = ["sqrt", "log", "log2", "logn", "log10", "power", "arccos", "arcsin", "arctanh"]

# NumPy's _tocomplex: these become complex64, everything else complex128
_SINGLE_KINDS = frozenset(np.dtype(t) for t in (np.single, np.byte, np.short, np.ubyte,
                                                np.ushort, np.csingle))


def _tocomplex(x):
    return x.astype(np.complex64 if x.dtype in _SINGLE_KINDS else np.complex128)


def _any_real_where(x, test) -> bool:
    """Whether some element of a real array passes ``test`` (complex arrays: never)."""
    return x.dtype.kind != "c" and bool(reductions.any(test(x)))


def _fix_real_lt_zero(x):
    x = creation.asarray(x)
    return _tocomplex(x) if _any_real_where(x, lambda v: v < 0) else x


def _fix_int_lt_zero(x):
    x = creation.asarray(x)
    return x * 1.0 if _any_real_where(x, lambda v: v < 0) else x


def _fix_real_abs_gt_1(x):
    x = creation.asarray(x)
    return _tocomplex(x) if _any_real_where(x, lambda v: abs(v) > 1) else x


def _in_domain(name, fix):
    """``numpy.emath.<name>``: the ufunc ``name`` of ``fix(x)``."""
    def f(x):
        return UFUNCS[name](fix(x))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"numpy.emath.{name}: complex results where a real x leaves the domain."
    return f


sqrt = _in_domain("sqrt", _fix_real_lt_zero)
log = _in_domain("log", _fix_real_lt_zero)
log10 = _in_domain("log10", _fix_real_lt_zero)
log2 = _in_domain("log2", _fix_real_lt_zero)
arccos = _in_domain("arccos", _fix_real_abs_gt_1)
arcsin = _in_domain("arcsin", _fix_real_abs_gt_1)
arctanh = _in_domain("arctanh", _fix_real_abs_gt_1)


def logn(n, x):
    return uf.log(_fix_real_lt_zero(x)) / uf.log(_fix_real_lt_zero(n))


def power(x, p):
    return uf.power(_fix_real_lt_zero(x), _fix_int_lt_zero(p))
