"""cuSOLVER (dense) through ``nvmath.bindings.cusolverDn``, imported lazily.

Each routine takes stacked matrices ``(B, m, n)`` (any strides), copies them once into a
column-major work buffer (what LAPACK-style routines want; see ``blas.colmajor_copy``),
loops over the batch with the legacy ``{s,d,c,z}`` API on the current stream, and copies
the results into the caller's C-contiguous outputs through strided views (no transposes
needed: the backend's copy reads any layout).  ``info`` from every matrix is read back to
the host at the end (one sync point): that is how the frontend raises ``LinAlgError``
exactly where NumPy does.  Handles are per thread and bound to the current stream.

Stacks of small matrices go to the batched library routines instead of the Python loop
(one call for the whole stack): cuBLAS ``getrfBatched``/``getrsBatched`` (solve, inv,
slogdet, det) and ``geqrfBatched`` (qr), cuSOLVER ``potrfBatched`` (cholesky),
``syevjBatched`` (eigh, n <= 32) and ``gesvdjBatched`` (svd, m, n <= 32).  The knobs below
choose where; the probe ``benchmarks/probes/linalg_batched_probe.py`` times both sides.
"""
from __future__ import annotations

import threading

import numpy as np

from . import blas, memory, nvmath_bindings, runtime
from . import tuning
from .blas import colmajor_copy, empty
from .copy_fill import copy, to_host
from .view import DeviceView, alias, dptr

_lib = None
_tls = threading.local()
_PREFIX = {"f": "s", "d": "d", "F": "c", "D": "z"}
LOWER, UPPER = 0, 1  # cublasFillMode_t
OP_N = 0
DIAG_NON_UNIT = 0  # cublasDiagType_t
SIDE_LEFT = 0  # cublasSideMode_t
# The knobs are ``tuning.SOLVER``: how many right-hand sides ride along in the LU as extra
# columns (_solve_augmented; more take getrf + getrs), and where a stack goes to a batched
# routine (linalg_batched_probe times both sides; docs/internals.md, "Measured", has the
# figures behind the defaults).


def lib():
    global _lib
    if _lib is None:
        _lib = nvmath_bindings.load("cusolverDn")
    return _lib


class _ThreadHandle:
    """One thread's cuSOLVER handle, its parameter objects (``params``, ``syevj_info``,
    ``gesvdj_info``) and the host workspace its last call may still read; all destroyed with
    the thread's ``threading.local`` (at thread exit), so short-lived threads leak nothing."""

    __slots__ = ("handle", "stream", "params", "syevj_info", "gesvdj_info", "host_work")

    def __init__(self, handle):
        self.handle, self.stream = handle, None
        self.params = self.syevj_info = self.gesvdj_info = self.host_work = None

    def __del__(self):
        cs = lib()
        if self.params is not None:
            blas.destroy_quietly(cs.destroy_params, self.params)
        if self.syevj_info is not None:
            blas.destroy_quietly(cs.destroy_syevj_info, self.syevj_info)
        if self.gesvdj_info is not None:
            blas.destroy_quietly(cs.destroy_gesvdj_info, self.gesvdj_info)
        blas.destroy_quietly(cs.destroy, self.handle)


def _state() -> _ThreadHandle:
    t = getattr(_tls, "state", None)
    if t is None:
        t = _tls.state = _ThreadHandle(memory.library_alloc(lib().create,
                                                            what="cusolverDnCreate"))
    return t


def handle() -> int:
    stream = runtime.current_stream()
    t = _state()
    if t.stream != stream:
        lib().set_stream(t.handle, stream)
        t.stream = stream
    return t.handle


def _fn(char, name):
    return getattr(lib(), _PREFIX[char] + name)


def _work(lwork_elems, dtype):
    return memory.alloc(max(int(lwork_elems), 1) * np.dtype(dtype).itemsize)


def _infos(info_buf, count) -> np.ndarray:
    host = np.empty(count, np.int32)
    memory.memcpy_dtoh(host, info_buf.ptr)  # waits: the sync point of every decomposition
    return host


def _strided(t: DeviceView, shape, strides_elems, offset_elems=0) -> DeviceView:
    s = t.dtype.itemsize
    return alias(t, shape, t.dtype, tuple(x * s for x in strides_elems), offset_elems * s)


# --- batched routines: one library call for a stack of matrices ----------------------------

def _use_batched(nb: int, n: int, max_n: int) -> bool:
    return tuning.SOLVER.batched and nb >= tuning.SOLVER.batched_min_batch and n <= max_n


def _pointer_array(base: int, stride_bytes: int, count: int):
    """A device array of the ``count`` pointers base, base + stride, ...: the batched
    routines take a stack as one pointer per matrix.  (The host array may go when the
    copy call returns: memory.memcpy_htod stages pageable memory.)"""
    host = np.uint64(base) + np.uint64(stride_bytes) * np.arange(count, dtype=np.uint64)
    buf = memory.alloc(max(count, 1) * 8)
    memory.memcpy_htod(buf.ptr, host)
    return buf


def _lu_batched(af: DeviceView, nb: int, n: int):
    """cuBLAS getrfBatched on the column-major stack ``af`` (in place).  Returns the
    pointer array, the pivots (nb, n; 1-based as LAPACK's) and the device infos."""
    aptrs = _pointer_array(af.ptr, n * n * af.dtype.itemsize, nb)
    ipiv = memory.alloc(nb * n * 4)
    info = memory.alloc(nb * 4)
    getrf = getattr(blas.lib(), _PREFIX[af.dtype.char] + "getrf_batched")
    getrf(blas.handle(), n, aptrs.ptr, n, ipiv.ptr, info.ptr, nb)
    return aptrs, ipiv, info


def _solve_batched(af: DeviceView, bf: DeviceView, nb, n, k):
    """LU-factor and solve in two calls; returns the getrf infos (device)."""
    aptrs, ipiv, info = _lu_batched(af, nb, n)
    bptrs = _pointer_array(bf.ptr, n * k * af.dtype.itemsize, nb)
    arg_info = np.zeros(1, np.int32)  # getrsBatched reports bad arguments on the host
    getrs = getattr(blas.lib(), _PREFIX[af.dtype.char] + "getrs_batched")
    getrs(blas.handle(), OP_N, n, k, aptrs.ptr, n, ipiv.ptr, bptrs.ptr, n,
          arg_info.ctypes.data, nb)
    if arg_info[0] < 0:
        raise ValueError(f"getrsBatched: invalid argument {-int(arg_info[0])}")
    del aptrs, bptrs  # the pool reuses them only after the queued calls
    return info


def _jacobi_params(kind: str) -> int:
    """This thread's syevj / gesvdj parameter object (default tolerance and sweeps; sorted
    results: ascending eigenvalues, descending singular values, as NumPy's)."""
    t = _state()
    attr = kind + "_info"
    p = getattr(t, attr)
    if p is None:
        p = getattr(lib(), "create_" + kind + "_info")()
        setattr(t, attr, p)
    return p


def solve(a, b, x) -> np.ndarray:
    """x = solve(a, b): a (B, n, n), b (B, n, k), x (B, n, k) C-contiguous. Returns the
    getrf infos (> 0: singular)."""
    nb, n, _ = a._shape
    k = b._shape[-1]
    if _use_batched(nb, n, tuning.SOLVER.lu_batched_max_n):
        af, bf = colmajor_copy(a), colmajor_copy(b)
        info = _solve_batched(af, bf, nb, n, k)
        copy(_strided(bf, (nb, n, k), (n * k, 1, n)), x)
        return _infos(info, nb)
    if k <= tuning.SOLVER.solve_augmented_max_k:
        return _solve_augmented(a, b, x)
    char = a.dtype.char
    h = handle()
    af, bf = colmajor_copy(a), colmajor_copy(b)
    ipiv = memory.alloc(max(nb * n, 1) * 4)
    info = memory.alloc(max(nb, 1) * 4)
    info2 = memory.alloc(4)
    lwork = _fn(char, "getrf_buffer_size")(h, n, n, af.ptr, n)
    work = _work(lwork, a.dtype)
    getrf, getrs = _fn(char, "getrf"), _fn(char, "getrs")
    s = a.dtype.itemsize
    for i in range(nb):
        ai = af.ptr + i * n * n * s
        pi = ipiv.ptr + i * n * 4
        getrf(h, n, n, ai, n, work.ptr, pi, info.ptr + 4 * i)
        getrs(h, OP_N, n, k, ai, n, pi, bf.ptr + i * n * k * s, n, info2.ptr)
    copy(_strided(bf, (nb, n, k), (n * k, 1, n)), x)
    return _infos(info, nb)


def _solve_augmented(a, b, x) -> np.ndarray:
    """``solve`` for few right-hand sides: getrf of the column-major [A | B] (n x (n + k)).
    The LU's row swaps and its L-solve reach B's columns inside the factorisation, as
    trailing columns, which leaves U x = L⁻¹PB: one upper-triangular solve (trsv, or trsm
    for k > 1) finishes.  getrs instead swaps B's rows in a sequential pass and solves with
    L and U apart, which costs more (docs/internals.md, "Measured")."""
    nb, n, _ = a._shape
    k = b._shape[-1]
    char = a.dtype.char
    s = a.dtype.itemsize
    w = n + k  # columns of [A | B]
    ab = DeviceView(memory.alloc(nb * n * w * s), (nb, n * w), a.dtype)
    copy(a, _strided(ab, (nb, n, n), (n * w, 1, n)))
    copy(b, _strided(ab, (nb, n, k), (n * w, 1, n), n * n))
    h, hb = handle(), blas.handle()
    ipiv = memory.alloc(nb * n * 4)
    info = memory.alloc(nb * 4)
    lwork = _fn(char, "getrf_buffer_size")(h, n, w, ab.ptr, n)
    work = _work(lwork, a.dtype)
    getrf = _fn(char, "getrf")
    if k == 1:
        trsv = getattr(blas.lib(), _PREFIX[char] + "trsv")
    else:
        trsm = getattr(blas.lib(), _PREFIX[char] + "trsm")
        keep, alpha, _ = blas.scalar_ptrs(char, 1, 0)
    for i in range(nb):
        ai = ab.ptr + i * n * w * s
        getrf(h, n, w, ai, n, work.ptr, ipiv.ptr + i * n * 4, info.ptr + 4 * i)
        ci = ai + n * n * s
        if k == 1:
            trsv(hb, UPPER, OP_N, DIAG_NON_UNIT, n, ai, n, ci, 1)
        else:
            trsm(hb, SIDE_LEFT, UPPER, OP_N, DIAG_NON_UNIT, n, k, alpha, ai, n, ci, n)
    copy(_strided(ab, (nb, n, k), (n * w, 1, n), n * n), x)
    return _infos(info, nb)


def lu_diagonal(a):
    """LU-factor a (B, n, n); returns host arrays (diagonal of U (B, n), pivots (B, n),
    infos (B,)): the frontend forms sign and log|det| from them (n values per matrix)."""
    nb, n, _ = a._shape
    char = a.dtype.char
    h = handle()
    af = colmajor_copy(a)
    if _use_batched(nb, n, tuning.SOLVER.lu_batched_max_n):
        _, ipiv, info = _lu_batched(af, nb, n)
    else:
        ipiv = memory.alloc(max(nb * n, 1) * 4)
        info = memory.alloc(max(nb, 1) * 4)
        lwork = _fn(char, "getrf_buffer_size")(h, n, n, af.ptr, n)
        work = _work(lwork, a.dtype)
        getrf = _fn(char, "getrf")
        s = a.dtype.itemsize
        for i in range(nb):
            getrf(h, n, n, af.ptr + i * n * n * s, n, work.ptr, ipiv.ptr + i * n * 4,
                  info.ptr + 4 * i)
    diag = empty((nb, n), a.dtype)
    copy(_strided(af, (nb, n), (n * n, n + 1)), diag)
    d = to_host(diag)
    piv = np.empty((nb, n), np.int32)
    memory.memcpy_dtoh(piv, ipiv.ptr)
    return d, piv, _infos(info, nb)


def cholesky(a, out, upper: bool) -> np.ndarray:
    """Factor Hermitian positive-definite a (B, n, n) into out (B, n, n), C-contiguous:
    the factor's triangle is valid, the other holds garbage (the frontend masks it)."""
    nb, n, _ = a._shape
    char = a.dtype.char
    h = handle()
    af = colmajor_copy(a)
    info = memory.alloc(max(nb, 1) * 4)
    uplo = UPPER if upper else LOWER
    s = a.dtype.itemsize
    if _use_batched(nb, n, tuning.SOLVER.cholesky_batched_max_n):
        aptrs = _pointer_array(af.ptr, n * n * s, nb)
        _fn(char, "potrf_batched")(h, uplo, n, aptrs.ptr, n, info.ptr, nb)
    else:
        lwork = _fn(char, "potrf_buffer_size")(h, uplo, n, af.ptr, n)
        work = _work(lwork, a.dtype)
        potrf = _fn(char, "potrf")
        for i in range(nb):
            potrf(h, uplo, n, af.ptr + i * n * n * s, n, work.ptr, int(lwork),
                  info.ptr + 4 * i)
    copy(_strided(af, (nb, n, n), (n * n, 1, n)), out)
    return _infos(info, nb)


def _qr_factor_batched(af: DeviceView, tau, nb, m, n) -> None:
    """cuBLAS geqrfBatched (tall or square stacks): reflectors in af, scalars in tau, in
    LAPACK's layout, so the looped orgqr/ungqr reads them as geqrf's."""
    s = af.dtype.itemsize
    aptrs = _pointer_array(af.ptr, m * n * s, nb)
    tptrs = _pointer_array(tau.ptr, min(m, n) * s, nb)
    arg_info = np.zeros(1, np.int32)
    geqrf = getattr(blas.lib(), _PREFIX[af.dtype.char] + "geqrf_batched")
    geqrf(blas.handle(), m, n, aptrs.ptr, m, tptrs.ptr, arg_info.ctypes.data, nb)
    if arg_info[0] < 0:
        raise ValueError(f"geqrfBatched: invalid argument {-int(arg_info[0])}")


def qr(a, q, r) -> None:
    """Householder QR of a (B, m, n).  r: (B, rr, n) C-contiguous, rr = min(m, n) or m; its
    upper triangle is valid (the frontend masks the rest).  q: None or (B, m, mc), mc =
    min(m, n) or m."""
    nb, m, n = a._shape
    kk = min(m, n)
    char = a.dtype.char
    h = handle()
    af = colmajor_copy(a)
    s = a.dtype.itemsize
    tau = memory.alloc(max(nb * kk, 1) * s)
    info = memory.alloc(max(nb, 1) * 4)
    if _use_batched(nb, max(m, n), tuning.SOLVER.qr_batched_max_n) and m >= n:
        _qr_factor_batched(af, tau, nb, m, n)
    else:
        geqrf = _fn(char, "geqrf")
        lwork = _fn(char, "geqrf_buffer_size")(h, m, n, af.ptr, m)
        work = _work(lwork, a.dtype)
        for i in range(nb):
            geqrf(h, m, n, af.ptr + i * m * n * s, m, tau.ptr + i * kk * s, work.ptr,
                  int(lwork), info.ptr + 4 * i)
    rr = r._shape[1]
    if rr <= m:
        copy(_strided(af, (nb, rr, n), (m * n, 1, m)), r)
    if q is None:
        return
    mc = q._shape[-1]
    name = "orgqr" if char in "fd" else "ungqr"
    if mc <= n:  # Q is the first mc columns of the factored buffer: generate in place
        qf, qstride = af, m * n
    else:  # complete Q of a tall matrix: an m x m buffer seeded with the reflectors
        qf = empty((nb, m, m), a.dtype)
        qstride = m * m
        copy(_strided(af, (nb, m, n), (m * n, 1, m)),
                      _strided(qf, (nb, m, n), (m * m, 1, m)))
    lwork = _fn(char, name + "_buffer_size")(h, m, mc, kk, qf.ptr, m, tau.ptr)
    work = _work(lwork, a.dtype)
    orgqr = _fn(char, name)
    for i in range(nb):
        orgqr(h, m, mc, kk, qf.ptr + i * qstride * s, m, tau.ptr + i * kk * s, work.ptr,
              int(lwork), info.ptr + 4 * i)
    copy(_strided(qf, (nb, m, mc), (qstride, 1, m)), q)


def _svd_batched(a, u, s_out, vh) -> np.ndarray:
    """gesvdjBatched (m >= n, m <= 32): full U (m x m) and V (n x n) per matrix, singular
    values sorted descending.  u takes U's first ucols columns; vh[r, c] = V[c, r] is V's
    column-major buffer read in C order (real dtypes only: no conjugation here)."""
    nb, m, n = a._shape
    char = a.dtype.char
    h = handle()
    af = colmajor_copy(a)
    isz = a.dtype.itemsize
    jobz = EIG_VECTOR if u is not None else EIG_NOVECTOR
    sb = s_out if s_out._c_contig else empty(s_out._shape, s_out.dtype)
    ub = memory.alloc(nb * m * m * isz)  # referenced by the buffer-size query either way
    vb = memory.alloc(nb * n * n * isz)
    info = memory.alloc(nb * 4)
    prm = _jacobi_params("gesvdj")
    lwork = _fn(char, "gesvdj_batched_buffer_size")(h, jobz, m, n, af.ptr, m, dptr(sb),
                                                     ub.ptr, m, vb.ptr, n, prm, nb)
    work = _work(lwork, a.dtype)
    _fn(char, "gesvdj_batched")(h, jobz, m, n, af.ptr, m, dptr(sb), ub.ptr, m, vb.ptr, n,
                                work.ptr, int(lwork), info.ptr, prm, nb)
    if sb is not s_out:
        copy(sb, s_out)
    if u is not None:
        ucols = u._shape[-1]
        copy(DeviceView(ub, (nb, m, ucols), a.dtype, strides=(m * m * isz, isz, m * isz)),
                     u)
        copy(DeviceView(vb, (nb, n, n), a.dtype), vh)
    return _infos(info, nb)


# An unbatched SVD takes gesvd, as CuPy does (float32/complex64 ones mostly go through the
# float64 Gram matrix in linalg/_linalg.py instead): gesvdj and Xgesvdp are faster but lose
# accuracy (docs/internals.md, "Measured").
def svd(a, u, s_out, vh) -> np.ndarray:
    """SVD of a (B, m, n) with m >= n (the frontend transposes wide matrices).  s_out
    (B, n) real, C-contiguous; u None or (B, m, m) / (B, m, n); vh None or (B, n, n)."""
    nb, m, n = a._shape
    char = a.dtype.char
    # gesvdj returns V, not Vᴴ: complex vectors would need a conjugating copy, so they loop
    batched = _use_batched(nb, m, tuning.SOLVER.svd_batched_max_n)
    if batched and (char in "fd" or u is None):
        return _svd_batched(a, u, s_out, vh)
    h = handle()
    af = colmajor_copy(a)
    isz = a.dtype.itemsize
    rsz = s_out.dtype.itemsize
    info = memory.alloc(max(nb, 1) * 4)
    if u is None:
        jobu, jobvt, ucols = ord("N"), ord("N"), 0
    else:
        ucols = u._shape[-1]
        jobu, jobvt = (ord("A") if ucols == m else ord("S")), ord("A")
    ub = memory.alloc(max(nb * m * ucols, 1) * isz)
    vb = memory.alloc(max(nb * n * n, 1) * isz) if u is not None else memory.alloc(isz)
    sb = s_out if s_out._c_contig else empty(s_out._shape, s_out.dtype)
    lwork = _fn(char, "gesvd_buffer_size")(h, m, n)
    work = _work(lwork, a.dtype)
    rwork = memory.alloc(max(n - 1, 1) * rsz)
    gesvd = _fn(char, "gesvd")
    for i in range(nb):
        gesvd(h, jobu, jobvt, m, n, af.ptr + i * m * n * isz, m, dptr(sb) + i * n * rsz,
              ub.ptr + i * m * ucols * isz, m, vb.ptr + (i * n * n * isz if u is not None
                                                         else 0), n,
              work.ptr, int(lwork), rwork.ptr, info.ptr + 4 * i)
    if sb is not s_out:
        copy(sb, s_out)
    if u is not None:
        ut = DeviceView(ub, (nb, m, ucols), a.dtype)
        copy(_strided(ut, (nb, m, ucols), (m * ucols, 1, m)), u)
        vt = DeviceView(vb, (nb, n, n), a.dtype)
        copy(_strided(vt, (nb, n, n), (n * n, 1, n)), vh)
    return _infos(info, nb)


def _eigh_syevj_batched(h, af: DeviceView, wb, info, jobz, uplo, nb, n) -> None:
    """syevjBatched / heevjBatched (n <= 32): Jacobi, eigenvalues ascending; vectors
    overwrite af (column-major), as syevd's do."""
    char = af.dtype.char
    name = "syevj_batched" if char in "fd" else "heevj_batched"
    prm = _jacobi_params("syevj")
    lwork = _fn(char, name + "_buffer_size")(h, jobz, uplo, n, af.ptr, n, dptr(wb), prm, nb)
    work = _work(lwork, af.dtype)
    _fn(char, name)(h, jobz, uplo, n, af.ptr, n, dptr(wb), work.ptr, int(lwork), info.ptr,
                    prm, nb)


def _eigh_xsyev_batched(h, af: DeviceView, wb, info, jobz, uplo, nb, n) -> None:
    """cusolverDnXsyevBatched (64-bit API, CUDA >= 12.6): same outputs as syevd's loop."""
    cs = lib()
    char = af.dtype.char
    ta, tw = _CUDA_TYPE[char], _CUDA_TYPE[char.lower()]
    prm = params()
    dsize, hsize = cs.xsyev_batched_buffer_size(h, prm, jobz, uplo, n, ta, af.ptr, n, tw,
                                                dptr(wb), ta, nb)
    dwork = memory.alloc(max(int(dsize), 1))
    hwork = np.empty(max(int(hsize), 1), np.uint8)
    cs.xsyev_batched(h, prm, jobz, uplo, n, ta, af.ptr, n, tw, dptr(wb), ta, dwork.ptr,
                     int(dsize), hwork.ctypes.data, int(hsize), info.ptr, nb)
    _state().host_work = hwork  # kept alive until the next call (read by queued work)


def eigh(a, w, v, lower: bool) -> np.ndarray:
    """Eigen-decomposition of Hermitian a (B, n, n), reading one triangle (NumPy's UPLO).
    w (B, n) real C-contiguous (ascending); v None or (B, n, n)."""
    nb, n, _ = a._shape
    char = a.dtype.char
    h = handle()
    af = colmajor_copy(a)
    isz, rsz = a.dtype.itemsize, w.dtype.itemsize
    info = memory.alloc(max(nb, 1) * 4)
    jobz = 1 if v is not None else 0
    uplo = LOWER if lower else UPPER
    wb = w if w._c_contig else empty(w._shape, w.dtype)
    t = tuning.SOLVER
    mode = t.eigh_batched if _use_batched(nb, n, t.eigh_batched_max_n) else "loop"
    if mode == "auto":
        mode = "syevj" if n <= t.eigh_syevj_max_n else "xsyev"
    if mode == "syevj":
        _eigh_syevj_batched(h, af, wb, info, jobz, uplo, nb, n)
    elif mode == "xsyev":
        _eigh_xsyev_batched(h, af, wb, info, jobz, uplo, nb, n)
    else:
        name = "syevd" if char in "fd" else "heevd"
        lwork = _fn(char, name + "_buffer_size")(h, jobz, uplo, n, af.ptr, n, dptr(wb))
        work = _work(lwork, a.dtype)
        fn = _fn(char, name)
        for i in range(nb):
            fn(h, jobz, uplo, n, af.ptr + i * n * n * isz, n, dptr(wb) + i * n * rsz,
               work.ptr, int(lwork), info.ptr + 4 * i)
    if wb is not w:
        copy(wb, w)
    if v is not None:
        copy(_strided(af, (nb, n, n), (n * n, 1, n)), v)
    return _infos(info, nb)


# cudaDataType_t: real and complex of each precision (blas.DATA_TYPE has the same numbers)
_CUDA_TYPE = {"f": 0, "d": 1, "F": 4, "D": 5}
_COMPLEX_OF = {"f": "F", "d": "D", "F": "F", "D": "D"}
EIG_NOVECTOR, EIG_VECTOR = 0, 1  # cusolverEigMode_t


def params() -> int:
    """This thread's ``cusolverDnParams_t`` (default algorithms) for the 64-bit X API."""
    t = _state()
    if t.params is None:
        t.params = lib().create_params()
    return t.params


def eig(a, w, vr) -> np.ndarray:
    """General eigen-decomposition of a (B, n, n) with ``cusolverDnXgeev`` (CUDA >= 12.6),
    one matrix at a time.  w (B, n) complex of a's precision; vr None or (B, n, n) in a's
    dtype, in LAPACK's convention: for real a, a complex pair w[j], w[j+1] = conj(w[j])
    (imag(w[j]) > 0) has vectors vr[:, j] +- i vr[:, j+1] (the frontend unpacks them).
    Left eigenvectors are not computed (Xgeev has none).  Returns the infos."""
    nb, n, _ = a._shape
    char = a.dtype.char
    cs = lib()
    h, prm = handle(), params()
    af = colmajor_copy(a)
    isz = a.dtype.itemsize
    wdt = np.dtype(_COMPLEX_OF[char])
    wb = w if (w._c_contig and w.dtype == wdt) else empty(w._shape, wdt)
    vb = memory.alloc(max(nb * n * n, 1) * isz) if vr is not None else memory.alloc(isz)
    info = memory.alloc(max(nb, 1) * 4)
    ta, tw = _CUDA_TYPE[char], _CUDA_TYPE[wdt.char]
    jobvr = EIG_VECTOR if vr is not None else EIG_NOVECTOR
    dsize, hsize = cs.xgeev_buffer_size(h, prm, EIG_NOVECTOR, jobvr, n, ta, af.ptr, n, tw,
                                        dptr(wb), ta, 0, n, ta, vb.ptr, n, ta)
    dwork = memory.alloc(max(int(dsize), 1))
    hwork = np.empty(max(int(hsize), 1), np.uint8)
    hw_ptr = hwork.ctypes.data
    for i in range(nb):
        cs.xgeev(h, prm, EIG_NOVECTOR, jobvr, n, ta, af.ptr + i * n * n * isz, n, tw,
                 dptr(wb) + i * n * wdt.itemsize, ta, 0, n, ta,
                 vb.ptr + (i * n * n * isz if vr is not None else 0), n, ta, dwork.ptr,
                 int(dsize), hw_ptr, int(hsize), info.ptr + 4 * i)
    infos = _infos(info, nb)  # also keeps hwork alive until the calls are done
    if wb is not w:
        copy(wb, w)
    if vr is not None:
        vt = DeviceView(vb, (nb, n, n), a.dtype)
        copy(_strided(vt, (nb, n, n), (n * n, 1, n)), vr)
    return infos
