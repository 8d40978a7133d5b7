"""``poly1d``: NumPy's one-variable polynomial class over a cupynum coefficient array, so that
evaluating it (``p(x)``), its arithmetic, derivatives and integrals run where the array is."""
from __future__ import annotations

import numpy as np

from .._array import ndarray
from .creation import asarray, asnumpy
from .polynomials import (_poly1d_coeffs, polyadd, polyder, polydiv, polyint, polymul,
                          polysub, polyval, roots)

__all__ = ["poly1d"]


class poly1d:
    """``poly1d(c_or_r, r=False, variable=None)`` as NumPy's: coefficients from the highest
    power down (leading zeros trimmed), or the roots with ``r=True``."""

    __hash__ = None

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, (poly1d, np.poly1d)):
            self._variable = c_or_r.variable
            self._coeffs = asarray(c_or_r.coeffs).copy()
            if variable is not None:
                self._variable = variable
            return
        if r:
            from .polynomials import poly

            c_or_r = poly(c_or_r)
        self._coeffs = _poly1d_coeffs(asarray(c_or_r))
        self._variable = "x" if variable is None else variable

    # the coefficients ---------------------------------------------------------------------
    @property
    def coeffs(self):
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value):
        if value is not self._coeffs:
            raise AttributeError("Cannot set attribute")

    c = coef = coefficients = coeffs

    @property
    def variable(self):
        return self._variable

    @property
    def order(self):
        return len(self._coeffs) - 1

    o = order

    @property
    def roots(self):
        return roots(self._coeffs)

    r = roots

    def __len__(self):
        return self.order

    def __getitem__(self, power):
        if power > self.order or power < 0:
            return self._coeffs.dtype.type(0)
        return self._coeffs[self.order - power]

    def __setitem__(self, power, value):
        if power < 0:
            raise ValueError("Does not support negative powers.")
        if power > self.order:
            grown = asarray(np.zeros(power - self.order, self._coeffs.dtype))
            from .manipulation import concatenate

            self._coeffs = concatenate((grown, self._coeffs))
        self._coeffs[self.order - power] = value

    def __iter__(self):
        return iter(self._coeffs)

    # evaluation and calculus --------------------------------------------------------------
    def __call__(self, val):
        if isinstance(val, poly1d):
            return poly1d(polyval(self._coeffs, val))
        return polyval(self._coeffs, val)

    def deriv(self, m=1):
        return poly1d(polyder(self._coeffs, m=m))

    def integ(self, m=1, k=0):
        return poly1d(polyint(self._coeffs, m=m, k=k))

    def __array__(self, t=None, copy=None):
        host = asnumpy(self._coeffs)
        return host if t is None else host.astype(t)

    # arithmetic ---------------------------------------------------------------------------
    @staticmethod
    def _coeffs_of(other):
        return other.coeffs if isinstance(other, (poly1d, np.poly1d)) else other

    def _is_scalar(self, other):
        return np.isscalar(other) or (isinstance(other, ndarray) and other.ndim == 0)

    def __neg__(self):
        return poly1d(-self._coeffs)

    def __pos__(self):
        return self

    def __add__(self, other):
        return poly1d(polyadd(self._coeffs, self._coeffs_of(other)))

    __radd__ = __add__

    def __sub__(self, other):
        return poly1d(polysub(self._coeffs, self._coeffs_of(other)))

    def __rsub__(self, other):
        return poly1d(polysub(self._coeffs_of(other), self._coeffs))

    def __mul__(self, other):
        if self._is_scalar(other):
            return poly1d(self._coeffs * other)
        return poly1d(polymul(self._coeffs, self._coeffs_of(other)))

    __rmul__ = __mul__

    def __pow__(self, n):
        if not np.isscalar(n) or int(n) != n or n < 0:
            raise ValueError("Power to non-negative integers only.")
        result = poly1d([1])
        for _ in range(int(n)):
            result = result * self
        return result

    def __truediv__(self, other):
        if self._is_scalar(other):
            return poly1d(self._coeffs / other)
        q, r = polydiv(self._coeffs, self._coeffs_of(other))
        return poly1d(q), poly1d(r)

    __div__ = __truediv__

    def __rtruediv__(self, other):
        q, r = polydiv(self._coeffs_of(other), self._coeffs)
        return poly1d(q), poly1d(r)

    def __eq__(self, other):
        if not isinstance(other, (poly1d, np.poly1d)):
            return NotImplemented
        a, b = asnumpy(self._coeffs), np.asarray(asnumpy(asarray(other.coeffs)))
        return a.shape == b.shape and bool((a == b).all())

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    # printing: NumPy's, from a host copy of the coefficients -------------------------------
    def _host(self):
        return np.poly1d(asnumpy(self._coeffs), variable=self._variable)

    def __repr__(self):
        return repr(self._host())

    def __str__(self):
        return str(self._host())
