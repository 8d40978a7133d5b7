"""numpy.linalg semantics over the backend's decompositions (cuSOLVER on CUDA).

Stacked inputs ``(..., m, n)`` are flattened to ``(B, m, n)`` for the backend (a copy only
where the layout needs one) and the results reshaped back.  Every decomposition reads the
library's ``info`` back to the host (a sync point) and raises ``LinAlgError`` exactly where
NumPy does.  Dtypes follow NumPy: integers and bool compute in float64, float16 is refused.
``eig``/``eigvals`` use cuSOLVER's ``Xgeev`` (right eigenvectors only); the real-or-complex
result dtype NumPy picks from the eigenvalues is one more small read back.
"""
from __future__ import annotations

import functools

import operator

import numpy as np
from numpy.linalg import LinAlgError
from numpy.linalg._linalg import EigResult, EighResult, QRResult, SlogdetResult, SVDResult

from .. import _backends
from .._api import creation, manipulation, reductions
from .._api.elementwise import tril, triu, where
from .._api import products as _p
from .._array import broadcast_view, empty_array, ndarray
from .._dtypes import normalize
from .._fallback import call_on_host
from .._indexing import normalize_axis
from .._ufunc import uf

__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eig",
           "eigvals", "eigh", "eigvalsh", "lstsq", "pinv", "matrix_rank", "norm", "matrix_norm", "vector_norm",
           "cond", "tensorinv", "tensorsolve", "diagonal", "trace", "matrix_transpose",
           "multi_dot", "matrix_power", "cross", "outer", "matmul", "tensordot", "vecdot"]

matmul = _p.matmul
tensordot = _p.tensordot
vecdot = _p.vecdot


def _arr(x):
    return x if isinstance(x, ndarray) else creation.asarray(x)


def _work_dtype(*arrays):
    """NumPy's linalg type rule: float32/complex64 stay, other numbers compute in double."""
    dts = [x.dtype for x in arrays]
    for dt in dts:
        if dt.kind not in "biufc" or dt == np.float16:
            raise TypeError(f"array type {dt} is unsupported in linalg")
    single = all(dt in (np.float32, np.complex64) for dt in dts if dt.kind in "fc") and any(
        dt.kind in "fc" for dt in dts)
    cplx = any(dt.kind == "c" for dt in dts)
    if single:
        return normalize(np.complex64 if cplx else np.float32)
    return normalize(np.complex128 if cplx else np.float64)


def _real(dt):
    return normalize(dt.char.lower()) if dt.kind == "c" else dt


def _at_least_2d(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")


def _square(*arrays):
    for a in arrays:
        if a._shape[-1] != a._shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def _stack3(a, dtype, batch=None):
    """a as (B, m, n) in ``dtype`` (broadcast to ``batch`` first if given)."""
    if batch is not None:
        a = broadcast_view(a, batch + a._shape[-2:])
    a = a.astype(dtype, copy=False)
    return a.reshape((-1,) + a._shape[-2:])


def _check(info, msg):
    if (np.asarray(info) > 0).any():
        raise LinAlgError(msg)


def _host(np_func, *args, **kwargs):
    return call_on_host(np_func, args, kwargs)


# --- solve, inv, det ---------------------------------------------------------------------

def solve(a, b):
    a, b = _arr(a), _arr(b)
    _at_least_2d(a)
    _square(a)
    if b.ndim == 0:
        raise ValueError("solve: Input operand 1 does not have enough dimensions (has 0, "
                         "gufunc core with signature (m,m),(m)->(m) requires 1)")
    dt = _work_dtype(a, b)
    vec = b.ndim == 1
    b2 = b[:, None] if vec else b
    n = a._shape[-1]
    if b2._shape[-2] != n:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2._shape[-2]} is different from {n})")
    batch = np.broadcast_shapes(a._shape[:-2], b2._shape[:-2])
    k = b2._shape[-1]
    x = empty_array(batch + (n, k), dt)
    if x._size:
        a3, b3 = _stack3(a, dt, batch), _stack3(b2, dt, batch)
        info = _backends.for_arrays(a3, b3, x).solve(a3, b3, x.reshape((-1, n, k)))
        _check(info, "Singular matrix")
    return x[..., 0] if vec else x


def inv(a):
    a = _arr(a)
    _at_least_2d(a)
    _square(a)
    dt = _work_dtype(a)
    n = a._shape[-1]
    x = empty_array(a._shape, dt)
    if x._size:
        eye = creation.eye(n, dtype=dt)
        a3 = _stack3(a, dt)
        info = _backends.for_arrays(a3, eye, x).solve(a3, broadcast_view(eye, a3._shape),
                                                      x.reshape(a3._shape))
        _check(info, "Singular matrix")
    return x


def slogdet(a):
    a = _arr(a)
    _at_least_2d(a)
    _square(a)
    dt = _work_dtype(a)
    batch = a._shape[:-2]
    sign = empty_array(batch, dt)
    logdet = empty_array(batch, _real(dt))
    if a._shape[-1] == 0:
        sign.fill(1)
        logdet.fill(0)
    elif sign._size:
        backend = _backends.for_arrays(a)
        s, la = _slogdet_from_lu(*backend.lu_diagonal(_stack3(a, dt)))
        backend.write_host(sign.reshape(-1), s.astype(sign.dtype))
        backend.write_host(logdet.reshape(-1), la.astype(logdet.dtype))
    return SlogdetResult(sign, logdet)


def _slogdet_from_lu(d, pivots, info):
    """NumPy's sign and log|det| of each matrix from its LU factors (host arrays: U's
    diagonal (B, n), 1-based pivot rows, getrf's info): the sign is the product of the
    diagonal's phases, negated per row swap."""
    n = d.shape[-1]
    swaps = (pivots != np.arange(1, n + 1, dtype=pivots.dtype)).sum(axis=-1) % 2
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.abs(d)
        phase = np.where(mag == 0, 0, d / np.where(mag == 0, 1, mag))
        sign = np.prod(phase, axis=-1) * np.where(swaps, -1, 1)
        sign = np.where((mag == 0).any(axis=-1), 0, sign)
        logabsdet = np.log(mag).sum(axis=-1)
    # info > 0: an exact zero pivot.  A batched getrf may leave NaN after it on the diagonal
    # where LAPACK leaves numbers, so NumPy's answer for a singular matrix is set directly.
    singular = info > 0
    return np.where(singular, 0, sign), np.where(singular, -np.inf, logabsdet)


def det(a):
    sign, logdet = slogdet(a)
    return uf.multiply(sign, uf.exp(logdet))


# --- factorisations ------------------------------------------------------------------------

def cholesky(a, /, *, upper=False):
    a = _arr(a)
    _at_least_2d(a)
    _square(a)
    dt = _work_dtype(a)
    out = empty_array(a._shape, dt)
    if out._size:
        a3 = _stack3(a, dt)
        info = _backends.for_arrays(a3, out).cholesky(a3, out.reshape(a3._shape), bool(upper))
        _check(info, "Matrix is not positive definite")
    return triu(out) if upper else tril(out)


def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = _arr(a)
    _at_least_2d(a)
    m, n = a._shape[-2:]
    if mode == "raw" or a._size == 0:
        return _host(np.linalg.qr, a, mode=mode)
    dt = _work_dtype(a)
    k = min(m, n)
    batch = a._shape[:-2]
    rr = m if mode == "complete" else k
    r = empty_array(batch + (rr, n), dt)
    q = None if mode == "r" else empty_array(batch + (m, m if mode == "complete" else k), dt)
    a3 = _stack3(a, dt)
    q3 = None if q is None else q.reshape((-1,) + q._shape[-2:])
    _backends.for_arrays(a3, q, r).qr(a3, q3, r.reshape((-1, rr, n)))
    r = triu(r)
    return r if mode == "r" else QRResult(q, r)


# Single-precision SVDs through the double-precision Gram matrix: G = AᴴA (n x n, m >= n),
# G = V Λ Vᴴ by eigh, σ = sqrt(λ) in descending order, U = A V / σ.  In float64 the squared
# condition number costs nothing a float32 result can see: σ's absolute error is at worst
# about sqrt(n eps64) σ_max (singular values near 0), and measured 4e-8 σ_max at n = 2048 on
# the H200 where float32 gesvd's is 2e-5 σ_max; U's columns lose only eps64 σ_max / σ_i.
# Where that is too much (σ_min < GRAM_MIN_RATIO σ_max) or for a full U of a non-square
# matrix, gesvd runs as before; a NaN or inf raises LinAlgError as NumPy's does.
# GRAM_SVD: "gpu" (on backends whose ``gram_svd`` capability is set), "always", "never".
GRAM_SVD = "gpu"
GRAM_MIN_N = 33          # smaller stacks take gesvdjBatched / gesvd (solver.py)
GRAM_MIN_RATIO = 1e-6


def _svd_gram(a, dt, full_matrices, compute_uv):
    """``svd`` of ``a`` (..., m, n), m >= n, float32 or complex64, through the float64 Gram
    matrix; None where the checks above send it to gesvd."""
    m, n = a._shape[-2:]
    if GRAM_SVD == "never" or (GRAM_SVD == "gpu" and not _backends.for_arrays(a).gram_svd):
        return None
    if n < GRAM_MIN_N or (compute_uv and full_matrices and m != n):
        return None
    a64 = a.astype(np.complex128 if dt.kind == "c" else np.float64)
    ah = a64.mT if dt.kind != "c" else uf.conjugate(a64.mT)
    try:
        res = _eigh(ah @ a64, "L", compute_uv)
        w, v = res if compute_uv else (res, None)
        s = uf.sqrt(uf.maximum(w[..., ::-1], 0.0))
        ok = reductions.all(uf.isfinite(w))
        if compute_uv:
            ok = uf.logical_and(ok, reductions.all(s[..., -1] > s[..., 0] * GRAM_MIN_RATIO))
        ok = bool(ok)  # (one sync point for both checks, as gesvd's info read is one)
    except LinAlgError:
        ok = False
    if not ok:
        # (a float32 input cannot overflow its float64 Gram matrix: only NaN or inf make
        # the eigenvalues non-finite; NumPy's LAPACK does not converge on them, and
        # cuSOLVER's gesvd may not say so)
        if not bool(reductions.all(uf.isfinite(a))):
            raise LinAlgError("SVD did not converge")
        return None
    s_out = s.astype(_real(dt))
    if not compute_uv:
        return s_out
    v = v[..., ::-1]
    u = uf.divide(a64 @ v, s[..., None, :])
    vh = v.mT if dt.kind != "c" else uf.conjugate(v.mT)
    return SVDResult(u.astype(dt), s_out, vh.astype(dt, order="C"))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``hermitian=True`` uses the general SVD (same values; vectors up to phase)."""
    a = _arr(a)
    _at_least_2d(a)
    m, n = a._shape[-2:]
    if a._size == 0:
        return _host(np.linalg.svd, a, full_matrices=full_matrices, compute_uv=compute_uv)
    if not bool(uf.isfinite(a).all()):  # (one read back) LAPACK, so NumPy, does not
        raise LinAlgError("SVD did not converge")  # converge on inf or NaN; cuSOLVER returns
    dt = _work_dtype(a)
    if m >= n and dt in (np.float32, np.complex64):
        res = _svd_gram(a, dt, full_matrices, compute_uv)
        if res is not None:
            return res
    if m < n:  # cuSOLVER's gesvd wants tall matrices: factor the conjugate transpose
        at = a.astype(dt, copy=False).mT
        if dt.kind == "c":
            at = uf.conjugate(at)
        if not compute_uv:
            return svd(at, compute_uv=False)
        u2, s, vh2 = svd(at, full_matrices=full_matrices)
        u, vh = vh2.mT, u2.mT
        if dt.kind == "c":
            u, vh = uf.conjugate(u), uf.conjugate(vh)
        return SVDResult(u, s, vh)
    batch = a._shape[:-2]
    s = empty_array(batch + (n,), _real(dt))
    a3 = _stack3(a, dt)
    be = _backends.for_arrays(a3, s)
    if not compute_uv:
        info = be.svd(a3, None, s.reshape((-1, n)), None)
        _check(info, "SVD did not converge")
        return s
    u = empty_array(batch + (m, m if full_matrices else n), dt)
    vh = empty_array(batch + (n, n), dt)
    info = be.svd(a3, u.reshape((-1,) + u._shape[-2:]), s.reshape((-1, n)),
                  vh.reshape((-1, n, n)))
    _check(info, "SVD did not converge")
    return SVDResult(u, s, vh)


def svdvals(x, /):
    return svd(x, compute_uv=False)


def _eigh(a, uplo, vectors):
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    a = _arr(a)
    _at_least_2d(a)
    _square(a)
    dt = _work_dtype(a)
    n = a._shape[-1]
    w = empty_array(a._shape[:-1], _real(dt))
    v = empty_array(a._shape, dt) if vectors else None
    if w._size:
        a3 = _stack3(a, dt)
        v3 = None if v is None else v.reshape(a3._shape)
        info = _backends.for_arrays(a3, w, v).eigh(a3, w.reshape((-1, n)), v3, uplo == "L")
        _check(info, "Eigenvalues did not converge")
    return EighResult(w, v) if vectors else w


def eigh(a, UPLO="L"):
    return _eigh(a, UPLO, True)


def eigvalsh(a, UPLO="L"):
    return _eigh(a, UPLO, False)


def _eig(a, vectors):
    a = _arr(a)
    _at_least_2d(a)
    _square(a)
    dt = _work_dtype(a)
    n = a._shape[-1]
    cdt = normalize(np.complex64 if dt in (np.float32, np.complex64) else np.complex128)
    w = empty_array(a._shape[:-1], cdt)
    vr = empty_array(a._shape, dt) if vectors else None
    if w._size:
        a3 = _stack3(a, dt)
        if not bool(reductions.all(uf.isfinite(a3))):
            raise LinAlgError("Array must not contain infs or NaNs")
        vr3 = None if vr is None else vr.reshape(a3._shape)
        info = _backends.for_arrays(a3, w, vr).eig(a3, w.reshape((-1, n)), vr3)
        _check(info, "Eigenvalues did not converge")
    if dt.kind == "c":
        return EigResult(w, vr) if vectors else w
    w = _real_where_unpaired(w)
    wi = w.imag
    real_spectrum = not bool(reductions.any(uf.not_equal(wi, 0)))
    if real_spectrum and not _numpy_always_complex(vectors):  # all real -> real dtype
        w = w.real.astype(dt)
        return EigResult(w, vr) if vectors else w
    if not vectors:
        return w
    if real_spectrum:
        return EigResult(w, vr.astype(cdt))
    # unpack LAPACK's real storage of complex pairs: imag(w[j]) > 0 marks the first of a
    # pair, v[j] = vr[:, j] + i vr[:, j+1] and v[j+1] = vr[:, j] - i vr[:, j+1]
    pos = uf.greater(wi, 0)[..., None, :]
    neg = uf.less(wi, 0)[..., None, :]
    zero = creation.zeros(a._shape[:-1] + (1,), dt)
    nxt = manipulation.concatenate([vr[..., 1:], zero], axis=-1)
    prv = manipulation.concatenate([zero, vr[..., :-1]], axis=-1)
    re = where(neg, prv, vr)
    im = where(pos, nxt, where(neg, uf.negative(vr), 0))
    v = re.astype(cdt)
    v = uf.add(v, uf.multiply(im.astype(cdt), cdt.type(1j)))
    return EigResult(w, v)


@functools.lru_cache(maxsize=None)
def _numpy_always_complex(vectors: bool) -> bool:
    """Whether this NumPy's ``eig`` (vectors) / ``eigvals`` returns complex results for a
    real matrix with a real spectrum (older NumPy casts them to real; newer NumPy keeps
    ``eig`` complex, as the array API's ``eig``).  Asked of NumPy once, on a 1x1 matrix."""
    one = np.ones((1, 1))
    w = np.linalg.eig(one).eigenvalues if vectors else np.linalg.eigvals(one)
    return w.dtype.kind == "c"


def _real_where_unpaired(w):
    """For a real matrix, complex eigenvalues come in exact conjugate pairs, stored next to
    each other (LAPACK's and cuSOLVER's convention).  An eigenvalue with a nonzero imaginary
    part and no conjugate beside it is a real one with rounding left in its imaginary part
    (cuSOLVER's vector path can leave ~1e-17 where LAPACK's 1x1 Schur blocks give exactly
    0); NumPy's dtype rule tests for exact zeros, so such parts are set to 0."""
    if w._size == 0:
        return w
    conj = uf.conjugate(w)
    pad = creation.zeros(w._shape[:-1] + (1,), w.dtype)
    nxt = uf.equal(manipulation.concatenate([w[..., 1:], pad], axis=-1), conj)
    prv = uf.equal(manipulation.concatenate([pad, w[..., :-1]], axis=-1), conj)
    wi = w.imag
    paired = uf.logical_or(uf.logical_and(uf.greater(wi, 0), nxt),
                           uf.logical_and(uf.less(wi, 0), prv))
    lone = uf.logical_and(uf.not_equal(wi, 0), uf.logical_not(paired))
    if not bool(reductions.any(lone)):
        return w
    return where(lone, w.real.astype(w.dtype), w)


def eig(a):
    """numpy.linalg.eig with cuSOLVER's Xgeev (eigenvector norms and phases as LAPACK's)."""
    return _eig(a, True)


def eigvals(a):
    return _eig(a, False)


# --- least squares, pseudo-inverse, rank -------------------------------------------------

def _conj_t(x):
    xt = x.mT
    return uf.conjugate(xt) if x.dtype.kind == "c" else xt


def lstsq(a, b, rcond=None):
    a, b = _arr(a), _arr(b)
    vec = b.ndim == 1
    b2 = b[:, None] if vec else b
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b2.ndim != 2:
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one or "
                          "two-dimensional")
    m, n = a._shape
    if m != b2._shape[0]:
        raise LinAlgError("Incompatible dimensions")
    if a._size == 0 or b2._size == 0:
        return _host(np.linalg.lstsq, a, b, rcond=rcond)
    dt = _work_dtype(a, b)
    rdt = _real(dt)
    if rcond is None:
        rcond = np.finfo(rdt).eps * max(m, n)
    if not bool(uf.isfinite(a).all()):
        # An inf or NaN entry: what LAPACK's gelsd does with it (NumPy raises "SVD did not
        # converge", or returns NaN, by version) is NumPy's answer, not an SVD's.
        return _host(np.linalg.lstsq, a, b, rcond=rcond)
    u, s, vh = svd(a.astype(dt, copy=False), full_matrices=False)
    s_host = np.asarray(s)  # the rank is a host value: one small sync
    cutoff = rcond * s_host.max() if s_host.size else 0
    keep = s_host > cutoff
    rank = int(keep.sum())
    s_inv = creation.asarray(np.where(keep, 1 / np.where(keep, s_host, 1), 0).astype(rdt))
    uhb = _p._matmul_nd(_conj_t(u), b2.astype(dt, copy=False), dt)
    x = _p._matmul_nd(_conj_t(vh), uf.multiply(s_inv[:, None], uhb).astype(dt, copy=False), dt)
    if rank == n and m > n:
        r = uf.subtract(b2.astype(dt, copy=False), _p._matmul_nd(a.astype(dt, copy=False), x, dt))
        resid = reductions.sum(uf.square(uf.absolute(r)) if dt.kind == "c" else uf.square(r),
                               axis=0)
        resid = resid.astype(rdt, copy=False)
    else:
        resid = empty_array((0,), rdt)
    if vec:
        x = x[:, 0]
    return x, resid, np.int32(rank), s


def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    a = _arr(a)
    if rcond is None and rtol is np._NoValue:
        rcond = 1e-15
    elif rcond is None:
        rcond = rtol if rtol is not None else max(a._shape[-2:]) * np.finfo(
            _work_dtype(a)).eps
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if a._size == 0:
        return _host(np.linalg.pinv, a, rcond=rcond)
    dt = _work_dtype(a)
    u, s, vh = svd(a, full_matrices=False)
    rc = creation.asarray(rcond)
    cutoff = uf.multiply(rc[..., None] if rc.ndim else rc, s[..., :1])
    big = uf.greater(s, cutoff)
    s_inv = where(big, uf.divide(1, where(big, s, 1)), 0).astype(s.dtype, copy=False)
    return _p.matmul(_conj_t(vh), uf.multiply(s_inv[..., :, None], _conj_t(u)), dtype=dt)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    A = _arr(A)
    if A.ndim < 2:
        return creation.asarray(int(not bool(reductions.all(uf.equal(A, 0)))))
    S = svdvals(A)
    if tol is None:
        if rtol is None:
            rtol = max(A._shape[-2:]) * np.finfo(S.dtype).eps
        else:
            rtol = creation.asarray(rtol)[..., None]
        tol = uf.multiply(S[..., :1], rtol)
    else:
        tol = creation.asarray(tol)[..., None] if not np.isscalar(tol) else tol
    return reductions.sum(uf.greater(S, tol), axis=-1)


# --- norms -----------------------------------------------------------------------------------

def _abs(x):
    return uf.absolute(x)


def _as_inexact(x):
    if x.dtype.kind not in "fc":
        return x.astype(np.float64)
    return x


def norm(x, ord=None, axis=None, keepdims=False):
    x = _as_inexact(_arr(x))
    if axis is None:
        nd = x.ndim
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            r = _abs(x.reshape(-1)) if x.dtype.kind == "c" else x.reshape(-1)
            res = uf.sqrt(reductions.sum(uf.multiply(r, r)))
            return res.reshape((1,) * nd) if keepdims else res
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)  # NumPy's own conversion: 1.5 and '0' pass
        except (TypeError, ValueError):
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axis) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        ax = axis[0]
        a = _abs(x)
        if ord == np.inf:
            return reductions.max(a, axis=ax, keepdims=keepdims, initial=0)  # NumPy's: empty -> 0
        if ord == -np.inf:
            return reductions.min(a, axis=ax, keepdims=keepdims)
        if ord == 0:
            return reductions.sum(uf.not_equal(x, 0), axis=ax, keepdims=keepdims).astype(a.dtype)
        if ord == 1:
            return reductions.sum(a, axis=ax, keepdims=keepdims)
        if ord is None or ord == 2:
            return uf.sqrt(reductions.sum(uf.multiply(a, a), axis=ax, keepdims=keepdims))
        try:
            p = float(ord)
        except (TypeError, ValueError):
            raise ValueError("Invalid norm order for vectors.") from None
        res = reductions.sum(uf.power(a, p), axis=ax, keepdims=keepdims)
        return uf.power(res, 1.0 / p).astype(a.dtype, copy=False)
    if len(axis) == 2:
        r_ax, c_ax = (a % x.ndim if a < 0 else a for a in axis)
        if r_ax == c_ax:
            raise ValueError("Duplicate axes given.")
        if ord in (2, -2, "nuc"):
            rest = [i for i in range(x.ndim) if i not in (r_ax, c_ax)]
            s = svdvals(x.transpose(rest + [r_ax, c_ax]))
            if ord == "nuc":
                res = reductions.sum(s, axis=-1)
            elif s.shape[-1] == 0:  # an empty matrix: NumPy's amax(initial=0); amin raises
                res = (reductions.max(s, axis=-1, initial=0) if ord == 2
                       else reductions.min(s, axis=-1))
            else:
                res = s[..., 0] if ord == 2 else s[..., -1]
        elif ord in (None, "fro", "f"):
            a = _abs(x)
            res = uf.sqrt(reductions.sum(uf.multiply(a, a), axis=axis))
        elif ord in (1, -1):
            red = reductions.max if ord == 1 else reductions.min
            if c_ax > r_ax:
                c_ax -= 1
            res = red(reductions.sum(_abs(x), axis=r_ax), axis=c_ax, **_empty_max_zero(red))
        elif ord in (np.inf, -np.inf):
            red = reductions.max if ord == np.inf else reductions.min
            if r_ax > c_ax:
                r_ax -= 1
            res = red(reductions.sum(_abs(x), axis=c_ax), axis=r_ax, **_empty_max_zero(red))
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(x._shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            res = res.reshape(tuple(shape))
        return res
    raise ValueError("Improper number of dimensions to norm.")


def _empty_max_zero(red):
    """NumPy's 1- and inf-norms of matrices take ``max(..., initial=0)``: 0 when empty."""
    return {"initial": 0} if red is reductions.max else {}


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError("The input array must be at least two-dimensional")
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = _arr(x)
    shape = list(x._shape)
    if axis is None:
        x = x.reshape(-1)
        _axis = 0
    elif isinstance(axis, tuple):
        norm_axes = tuple(normalize_axis(a, x.ndim) for a in axis)
        rest = [i for i in range(x.ndim) if i not in norm_axes]
        newshape = tuple(x._shape[i] for i in rest) + (-1,)
        x = x.transpose(rest + list(norm_axes)).reshape(newshape)
        _axis = -1
    else:
        _axis = axis
    res = norm(x, axis=_axis, ord=ord)
    if keepdims:
        axes = range(len(shape)) if axis is None else (
            axis if isinstance(axis, tuple) else (axis,))
        for a in axes:
            shape[normalize_axis(a, len(shape))] = 1
        res = res.reshape(tuple(shape))
    return res


def cond(x, p=None):
    x = _arr(x)
    if x._size == 0 and np.prod(x._shape[-2:]) == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    _at_least_2d(x)
    with np.errstate(all="ignore"):
        if p is None or p == 2 or p == -2:
            s = svdvals(x)
            r = uf.divide(s[..., -1], s[..., 0]) if p == -2 else uf.divide(s[..., 0], s[..., -1])
        else:
            _square(x)
            inv_x, singular = _inv_or_nan(x)
            if singular and p == "nuc":  # NumPy: the SVD of a NaN inverse does not converge
                raise LinAlgError("SVD did not converge")
            r = uf.multiply(norm(x, p, axis=(-2, -1)), norm(inv_x, p, axis=(-2, -1)))
    # NumPy: a singular matrix has condition number inf (its NaN becomes inf), unless the
    # matrix itself holds a NaN.
    nan = uf.isnan(r)
    if nan.any():
        nan &= ~uf.isnan(x).any(axis=(-2, -1))
        r = where(nan, np.inf, r).astype(r.dtype, copy=False)
    return r


def _inv_or_nan(a):
    """``(inv(a), any singular)``: each singular matrix of the stack becomes all NaN
    instead of raising (what NumPy's ``cond`` computes with)."""
    dt = _work_dtype(a)
    n = a._shape[-1]
    x = empty_array(a._shape, dt)
    if x._size:
        a3 = _stack3(a, dt)
        x3 = x.reshape(a3._shape)
        info = _backends.for_arrays(a3).solve(a3, broadcast_view(creation.eye(n, dtype=dt),
                                                             a3._shape), x3)
        singular = np.asarray(info).reshape(-1) > 0
        if singular.any():
            x3[creation.asarray(singular)] = np.nan
            return x, True
    return x, False


# --- tensors, views, products ----------------------------------------------------------------

def tensorinv(a, ind=2):
    a = _arr(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    oldshape = a._shape
    prod = 1
    invshape = oldshape[ind:] + oldshape[:ind]
    for k in oldshape[ind:]:
        prod *= k
    return inv(a.reshape(prod, -1)).reshape(invshape)


def tensorsolve(a, b, axes=None):
    a, b = _arr(a), _arr(b)
    an = a.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = a.transpose(allaxes)
    oldshape = a._shape[-(an - b.ndim):]
    prod = 1
    for k in oldshape:
        prod *= k
    if a._size != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(a.reshape(-1, prod), b.reshape(-1)).reshape(oldshape)


def diagonal(x, /, *, offset=0):
    return _p.diagonal_view(_arr(x), offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    return reductions.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def matrix_transpose(x, /):
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.mT


def outer(x1, x2, /):
    x1, x2 = _arr(x1), _arr(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are {x1.ndim=} "
                         f"and {x2.ndim=}.")
    return _p.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = _arr(x1), _arr(x2)
    if x1._shape[axis] != 3 or x2._shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {x1._shape[axis]} and {x2._shape[axis]} dimensional "
                         "instead.")
    a = _p._moveaxis_last(x1, axis)
    b = _p._moveaxis_last(x2, axis)
    dt = normalize(np.result_type(a.dtype, b.dtype))
    shape = np.broadcast_shapes(a._shape[:-1], b._shape[:-1])
    out = empty_array(shape + (3,), dt)
    for i, (j, k) in enumerate(((1, 2), (2, 0), (0, 1))):
        uf.subtract(uf.multiply(a[..., j], b[..., k]), uf.multiply(a[..., k], b[..., j]),
                    out=out[..., i])
    nd = len(shape) + 1
    ax = axis % nd if axis < 0 else axis
    if ax != nd - 1:
        order = list(range(nd - 1))
        order.insert(ax, nd - 1)
        out = out.transpose(order)
    return out


def matrix_power(a, n):
    a = _arr(a)
    _at_least_2d(a)
    _square(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        eye = creation.eye(a._shape[-1], dtype=a.dtype)
        return uf.multiply(eye, creation.ones(a._shape, dtype=a.dtype))
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a.copy()
    result = None
    z = a
    while n:
        if n & 1:
            result = z if result is None else _p.matmul(result, z)
        n >>= 1
        if n:
            z = _p.matmul(z, z)
    return result


def multi_dot(arrays, *, out=None):
    arrays = [_arr(x) for x in arrays]
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    first_1d = arrays[0].ndim == 1
    last_1d = arrays[-1].ndim == 1
    if first_1d:
        arrays[0] = arrays[0][None, :]
    if last_1d:
        arrays[-1] = arrays[-1][:, None]
    for x in arrays:
        if x.ndim != 2:
            raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    dims = [arrays[0]._shape[0]] + [x._shape[1] for x in arrays]
    # matrix-chain order (dynamic programming), as numpy.linalg.multi_dot
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return arrays[i]
        return _p.dot(chain(i, split[i][j]), chain(split[i][j] + 1, j))

    res = chain(0, n - 1)
    if first_1d and last_1d:
        res = res[0, 0]
    elif first_1d:
        res = res[0]
    elif last_1d:
        res = res[:, 0]
    return _p._to_out(res, out)
