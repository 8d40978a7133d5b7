"""``numpy.emath``: math functions whose real inputs outside the real domain give complex
results (``sqrt(-1)`` is ``1j``), written as NumPy's ``_scimath_impl``: the input is made
complex when any real element is out of the domain, then the ordinary ufunc runs.  Deciding
that reads one flag back from the device (a sync point, see docs/differences.md)."""
from __future__ import annotations

import numpy as np

__all__ = ["sqrt", "log", "log2", "logn", "log10", "power", "arccos", "arcsin", "arctanh"]

# NumPy's _tocomplex: these become complex64, everything else complex128
_SINGLE_KINDS = frozenset(np.dtype(t) for t in (np.single, np.byte, np.short, np.ubyte,
                                                np.ushort, np.csingle))


def _cp():
    import cupynum

    return cupynum


def _tocomplex(x):
    return x.astype(np.complex64 if x.dtype in _SINGLE_KINDS else np.complex128)


def _any_real_where(x, test) -> bool:
    """Whether some element of a real array passes ``test`` (complex arrays: never)."""
    return x.dtype.kind != "c" and bool(_cp().any(test(x)))


def _fix_real_lt_zero(x):
    x = _cp().asarray(x)
    return _tocomplex(x) if _any_real_where(x, lambda v: v < 0) else x


def _fix_int_lt_zero(x):
    x = _cp().asarray(x)
    return x * 1.0 if _any_real_where(x, lambda v: v < 0) else x


def _fix_real_abs_gt_1(x):
    x = _cp().asarray(x)
    return _tocomplex(x) if _any_real_where(x, lambda v: abs(v) > 1) else x


def sqrt(x):
    return _cp().sqrt(_fix_real_lt_zero(x))


def log(x):
    return _cp().log(_fix_real_lt_zero(x))


def log10(x):
    return _cp().log10(_fix_real_lt_zero(x))


def logn(n, x):
    cp = _cp()
    return cp.log(_fix_real_lt_zero(x)) / cp.log(_fix_real_lt_zero(n))


def log2(x):
    return _cp().log2(_fix_real_lt_zero(x))


def power(x, p):
    return _cp().power(_fix_real_lt_zero(x), _fix_int_lt_zero(p))


def arccos(x):
    return _cp().arccos(_fix_real_abs_gt_1(x))


def arcsin(x):
    return _cp().arcsin(_fix_real_abs_gt_1(x))


def arctanh(x):
    return _cp().arctanh(_fix_real_abs_gt_1(x))
