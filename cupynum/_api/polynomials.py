"""``vander``, ``polyval`` and the rest of NumPy's legacy polynomial functions (``poly``,
``roots``, ``polyadd``/``polysub``/``polymul``/``polydiv``, ``polyder``/``polyint``,
``polyfit``): NumPy's own compositions, written with cupynum's ufuncs, convolution and
linalg so they run on the device with NumPy's order of operations."""
from __future__ import annotations

import numpy as np
from .. import linalg
from .._fallback import call_on_host
from .._ufunc import uf
from . import creation, histograms, indexing, manipulation, products, reductions, sorting
from .creation import asarray, empty, zeros_like

__all__ = ["vander", "polyval", "poly", "roots", "polyadd", "polysub", "polymul", "polydiv",
           "polyder", "polyint", "polyfit"]


def _linalg():
    return linalg


def vander(x, N=None, increasing=False):
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = len(x)
    v = empty((len(x), N), dtype=np.promote_types(x.dtype, int))
    powers = v if increasing else v[:, ::-1]
    if N > 0:
        powers[:, 0] = 1
    if N > 1:
        powers[:, 1:] = x[:, None]
        uf.multiply.accumulate(powers[:, 1:], out=powers[:, 1:], axis=1)
    return v


def polyval(p, x):
    """Horner's rule, one multiply and one add a coefficient, as NumPy evaluates it.  (A
    ``numpy.poly1d`` x goes through NumPy on the host.)"""
    if isinstance(x, np.poly1d):
        return call_on_host(np.polyval, (p, x), {})
    p = asarray(p)
    if p.ndim == 0:  # NumPy iterates over p
        raise TypeError("iteration over a 0-d array")
    x = asarray(x)
    y = zeros_like(x)
    multiply, add = uf.multiply, uf.add
    for i in range(p.shape[0]):
        y = add(multiply(y, x), p[i])
    return y


# --- the poly family: NumPy's numpy/lib/_polynomial_impl.py, op by op ----------------------
# A numpy.poly1d argument or an object-dtype array (arbitrary precision coefficients) goes
# through NumPy on the host: both are host objects by nature.


def _host_only(*args):
    return any(isinstance(a, np.poly1d) or (isinstance(a, np.ndarray) and a.dtype == object)
               for a in args)


def _on_host(np_func, *args, **kwargs):
    return call_on_host(np_func, args, kwargs)


def _check_iterable(x):
    """NumPy's ``__array_function__`` dispatchers of poly and roots return their argument
    as the list of relevant arguments, so a scalar there raises this TypeError."""
    if np.ndim(x) == 0:
        raise TypeError("dispatcher for __array_function__ did not return an iterable")


def poly(seq_of_zeros):
    """Coefficients from roots (or from a square matrix's eigenvalues): one length-2
    convolution per root, as NumPy multiplies the factors."""
    if _host_only(seq_of_zeros):
        return _on_host(np.poly, seq_of_zeros)
    _check_iterable(seq_of_zeros)
    zeros = manipulation.atleast_1d(seq_of_zeros)
    sh = zeros.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        zeros = _linalg().eigvals(zeros)
    elif len(sh) == 1:
        zeros = zeros.astype(np.mintypecode(zeros.dtype.char))
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if len(zeros) == 0:
        return 1.0
    dt = zeros.dtype
    a = creation.ones((1,), dtype=dt)
    factor = creation.ones((2,), dtype=dt)
    for i in range(len(zeros)):
        factor[1:] = -zeros[i:i + 1]  # the factor [1, -zero]
        a = histograms.convolve(a, factor, mode="full")
    if a.dtype.kind == "c":
        # if the complex roots are all complex conjugates, the roots are real
        roots_ = creation.asarray(zeros, complex)
        if bool(reductions.all(sorting.sort(roots_) == sorting.sort(roots_.conjugate()))):
            a = a.real.copy()
    return a


def roots(p):
    """Eigenvalues of the companion matrix (one read: where the nonzero coefficients are)."""
    if _host_only(p):
        return _on_host(np.roots, p)
    _check_iterable(p)
    p = manipulation.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    non_zero = indexing.nonzero(manipulation.ravel(p))[0].get()
    if len(non_zero) == 0:
        return creation.array([])
    trailing_zeros = len(p) - int(non_zero[-1]) - 1  # roots at 0
    p = p[int(non_zero[0]):int(non_zero[-1]) + 1]
    if p.dtype.kind not in "fc":
        p = p.astype(float)
    N = len(p)
    if N > 1:
        A = creation.diag(creation.ones((N - 2,), p.dtype), -1)
        A[0, :] = -p[1:] / p[0]
        found = _linalg().eigvals(A)
        # NumPy's roots gives real roots a real dtype (its _to_real_if_imag_zero), whether
        # or not this NumPy's eigvals already does
        if found.dtype.kind == "c" and A.dtype.kind != "c" and not bool(
                reductions.any(found.imag != 0)):
            found = found.real.astype(A.dtype)
    else:
        found = creation.array([])
    return manipulation.hstack((found, creation.zeros(trailing_zeros, found.dtype)))


def polyint(p, m=1, k=None):
    if _host_only(p, k):
        return _on_host(np.polyint, p, m, k)
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = creation.zeros(m, float) if k is None else manipulation.atleast_1d(k)
    if len(k) == 1 and m > 1:
        k = k[0] * creation.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = creation.asarray(p)
    for i in range(m):  # NumPy recurses once per order; k[i] is the i-th constant
        p = manipulation.concatenate((p / creation.arange(len(p), 0, -1), k[i:i + 1]))
    return p


def polyder(p, m=1):
    if _host_only(p):
        return _on_host(np.polyder, p, m)
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = creation.asarray(p)
    for _ in range(m):
        p = p[:-1] * creation.arange(len(p) - 1, 0, -1)
    len(p)  # NumPy takes len(p) at order 0 too: a 0-d p raises TypeError as there
    return p


def _pad_front(a, n):
    return manipulation.concatenate((creation.zeros(n, a.dtype), a))


def _aligned(a1, a2):
    """a1 and a2 as 1-D arrays of one length, the shorter padded with zeros in front."""
    a1, a2 = manipulation.atleast_1d(a1), manipulation.atleast_1d(a2)
    diff = len(a2) - len(a1)
    if diff > 0:
        a1 = _pad_front(a1, diff)
    elif diff < 0:
        a2 = _pad_front(a2, -diff)
    return a1, a2


def polyadd(a1, a2):
    if _host_only(a1, a2):
        return _on_host(np.polyadd, a1, a2)
    a1, a2 = _aligned(a1, a2)
    return a1 + a2


def polysub(a1, a2):
    if _host_only(a1, a2):
        return _on_host(np.polysub, a1, a2)
    a1, a2 = _aligned(a1, a2)
    return a1 - a2


def _poly1d_coeffs(c):
    """What ``numpy.poly1d(c).coeffs`` holds: 1-d, leading zeros trimmed, at least [0]."""
    c = manipulation.atleast_1d(c)
    if c.ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    c = manipulation.trim_zeros(c, trim="f")
    return creation.zeros(1, c.dtype) if len(c) == 0 else c


def polymul(a1, a2):
    if _host_only(a1, a2):
        return _on_host(np.polymul, a1, a2)
    return histograms.convolve(_poly1d_coeffs(a1), _poly1d_coeffs(a2))


def polydiv(u, v):
    """Long division, one scaled row subtraction per quotient coefficient; the remainder's
    leading near-zeros are trimmed with one read each, as NumPy does."""
    if _host_only(u, v):
        return _on_host(np.polydiv, u, v)
    u = manipulation.atleast_1d(u) + 0.0
    v = manipulation.atleast_1d(v) + 0.0
    w = u[0] + v[0]  # the common type
    m, n = len(u) - 1, len(v) - 1
    scale = 1. / v[0]
    q = creation.zeros((max(m - n + 1, 1),), w.dtype)
    r = u.astype(w.dtype)
    for k in range(m - n + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + n + 1] -= d * v
    while reductions.allclose(r[0], 0, rtol=1e-14) and (r.shape[-1] > 1):
        r = r[1:]
    return q, r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least squares on the column-scaled Vandermonde matrix (cupynum.linalg.lstsq)."""
    if _host_only(x, y, w):
        return _on_host(np.polyfit, x, y, deg, rcond=rcond, full=full, w=w, cov=cov)
    import warnings
    order = int(deg) + 1
    x = creation.asarray(x) + 0.0
    y = creation.asarray(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * np.finfo(x.dtype).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = creation.asarray(w) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs *= w[:, None]
        if rhs.ndim == 2:
            rhs *= w[:, None]
        else:
            rhs *= w
    scale = uf.sqrt((lhs * lhs).sum(axis=0))  # scaling improves the condition number
    lhs /= scale
    c, resids, rank, s = _linalg().lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        Vbase = _linalg().inv(products.dot(lhs.T, lhs))
        Vbase /= products.outer(scale, scale)
        if cov == "unscaled":
            fac = 1
        else:
            if len(x) <= order:
                raise ValueError("the number of data points must exceed order "
                                 "to scale the covariance matrix")
            fac = resids / (len(x) - order)
        if y.ndim == 1:
            return c, Vbase * fac
        return c, Vbase[:, :, None] * fac
    return c
