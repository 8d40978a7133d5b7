"""cuBLAS through nvmath-python's low-level bindings (``nvmath.bindings.cublas``).

Imported lazily: the first matmul pays the binding import (~35 ms, see ``nvmath_bindings``) and the
handle creation.  Handles are cached per thread (``threading.local``) and bound to the
current stream before each call (``set_stream`` only when the stream changed).

Row-major trick: cuBLAS is column-major.  A C-ordered ``r x c`` matrix with row stride ``ld``
is, to cuBLAS, the column-major ``c x r`` matrix (its transpose) with leading dimension
``ld``.  So ``C = A @ B`` (row-major) is computed as ``Cᵀ = Bᵀ Aᵀ`` (column-major): the
operands are passed swapped, no data moves.  A column-major view (``rs == 1``) is passed with
``op = T`` instead; any other layout is copied first.

float32 is true float32 (``COMPUTE_32F``, default math mode: no TF32).
"""
from __future__ import annotations

import threading

import numpy as np

from ..buffer import Buffer
from . import memory, runtime
from .views import dptr

_lib = None
_tls = threading.local()

# cudaDataType_t and cublasComputeType_t values (stable ABI numbers).
CUDA_R_16F, CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F = 2, 0, 1, 4, 5
DATA_TYPE = {"e": CUDA_R_16F, "f": CUDA_R_32F, "d": CUDA_R_64F, "F": CUDA_C_32F, "D": CUDA_C_64F}
_COMPUTE_32F, _COMPUTE_64F = 68, 70
COMPUTE = {"e": _COMPUTE_32F, "f": _COMPUTE_32F, "d": _COMPUTE_64F, "F": _COMPUTE_32F,
           "D": _COMPUTE_64F}
_SCALAR = {"e": np.float32, "f": np.float32, "d": np.float64, "F": np.complex64,
           "D": np.complex128}
OP_N, OP_T, OP_C = 0, 1, 2
_INT_MAX = 2**31 - 1

# --- GEMM knobs (benchmarks/probes/gemm_fft_probe.py times each; defaults = today's path) ---
# "gemm_ex": cublasGemmEx / GemmStridedBatchedEx for every dtype;  "typed": the typed
# {s,d,c,z}gemm[StridedBatched] for float32/64 and complex (float16 stays on GemmEx).
GEMM_API = "gemm_ex"
# cublasGemmAlgo_t passed to the Ex calls: -1 CUBLAS_GEMM_DEFAULT, 99 DEFAULT_TENSOR_OP.
GEMM_ALGO = -1
# 0: cuBLAS's own workspace; > 0: a workspace of this many bytes from our pool, given to the
# handle with cublasSetWorkspace (re-given after every set_stream, which resets it).
GEMM_WORKSPACE_BYTES = 0
# cublasMath_t for the handle: 0 DEFAULT_MATH (no TF32: float32 stays true float32).
MATH_MODE = 0
_TYPED_GEMM = {"f": "sgemm", "d": "dgemm", "F": "cgemm", "D": "zgemm"}


def lib():
    """``nvmath.bindings.cublas`` (imported on first use)."""
    global _lib
    if _lib is None:
        from .nvmath_bindings import load

        _lib = load("cublas")
    return _lib


def handle() -> int:
    """This thread's cuBLAS handle, bound to the current stream."""
    stream = runtime.current_stream()
    h = getattr(_tls, "handle", None)
    cb = lib()
    if h is None:
        h = cb.create()
        _tls.handle, _tls.stream, _tls.math_mode, _tls.ws_bytes = h, None, None, 0
        _tls.workspace = None
    if (_tls.stream != stream or _tls.math_mode != MATH_MODE
            or _tls.ws_bytes != GEMM_WORKSPACE_BYTES):
        _configure(cb, h, stream)
    return h


def _configure(cb, h, stream) -> None:
    """Bind the handle to ``stream`` and apply the knobs (only when one of them changed)."""
    cb.set_stream(h, stream)  # also resets a user workspace to cuBLAS's default
    _tls.stream = stream
    cb.set_math_mode(h, MATH_MODE)
    _tls.math_mode = MATH_MODE
    if GEMM_WORKSPACE_BYTES:
        ws = _tls.workspace
        if ws is None or ws.nbytes < GEMM_WORKSPACE_BYTES:
            ws = _tls.workspace = memory.alloc(GEMM_WORKSPACE_BYTES, stream)
        cb.set_workspace(h, ws.ptr, ws.nbytes)
    _tls.ws_bytes = GEMM_WORKSPACE_BYTES


# --- helpers shared with solver.py / fft.py ------------------------------------------------

class Temp:
    """A device array in the shape the backend's ``copy`` reads and writes: the ndarray
    fields it needs, over a buffer we own (strides in bytes, any layout)."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "dtype", "_size", "_c_contig",
                 "_f_contig")

    def __init__(self, buf, shape, dtype, strides=None, offset=0):
        dtype = np.dtype(dtype)
        # buf: a Buffer, or a raw device allocation (held as a Buffer's device copy)
        buf = buf if type(buf) is Buffer else Buffer(None, buf)
        self._buf, self._offset, self._shape, self.dtype = buf, offset, tuple(shape), dtype
        c = _c_strides(self._shape, dtype.itemsize)
        self._strides = tuple(strides) if strides is not None else c
        size = 1
        for d in self._shape:
            size *= d
        self._size = size
        self._c_contig = self._strides == c or size <= 1
        self._f_contig = False

    @property
    def ptr(self) -> int:
        return dptr(self)


def _c_strides(shape, itemsize):
    out, acc = [], itemsize
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


ptr = dptr


def empty(shape, dtype) -> Temp:
    """A new C-contiguous device temporary."""
    dtype = np.dtype(dtype)
    n = 1
    for d in shape:
        n *= d
    return Temp(memory.alloc(max(n, 1) * dtype.itemsize), shape, dtype)


def colmajor_copy(backend, a) -> Temp:
    """A copy of stacked matrices ``a`` (B, m, n) in which each matrix is column-major
    (Fortran order), matrices one after another: what LAPACK-style routines want."""
    b, m, n = a._shape
    s = a.dtype.itemsize
    t = Temp(memory.alloc(max(b * m * n, 1) * s), (b, m, n), a.dtype,
             strides=(m * n * s, s, m * s))
    if t._size:
        backend.copy(a, t)
    return t


def colmajor_view(t: Temp, b, m, n, ld=None) -> Temp:
    """The (b, m, n) column-major stacked view over ``t``'s buffer (leading dimension ld)."""
    s = t.dtype.itemsize
    ld = m if ld is None else ld
    return Temp(t._buf, (b, m, n), t.dtype, strides=(ld * n * s, s, ld * s), offset=t._offset)


def scalar_ptrs(char, alpha, beta):
    """Host arrays for alpha/beta (cuBLAS reads host pointers by default); keep them alive.
    Built once per (dtype, alpha, beta) and never written: cuBLAS reads them during the
    call, so every thread and call may share one."""
    key = (char, alpha, beta)
    hit = _scalars.get(key)
    if hit is None:
        arr = np.array([alpha, beta], dtype=_SCALAR[char])
        arr.flags.writeable = False
        hit = _scalars[key] = (arr, arr.ctypes.data, arr.ctypes.data + arr.itemsize)
    return hit


_scalars: dict = {}


# --- matmul ------------------------------------------------------------------------------

def _layout(rows, cols, rs, cs, itemsize):
    """How cuBLAS can read an ``rows x cols`` matrix with byte strides (rs, cs):
    ('N', ld) row-major (cuBLAS sees the transpose), ('T', ld) column-major, or None."""
    if rs % itemsize or cs % itemsize:
        return None
    rs //= itemsize
    cs //= itemsize
    if cols == 1:
        cs = 1
    if rows == 1:
        rs = max(cols, 1) if cs == 1 else rs
    if cs == 1 and rs >= max(cols, 1):
        return OP_N, rs
    if rows == 1:
        rs = 1
    if rs == 1 and cs >= max(rows, 1):
        return OP_T, cs
    return None


def _batch_stride(shape, strides):
    """One byte stride that walks the batch dims (shape, strides) in C order, or None."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if not dims:
        return 0
    if all(s == 0 for _, s in dims):
        return 0
    for (n0, s0), (n1, s1) in zip(dims, dims[1:]):
        if s0 != s1 * n1:
            return None
    return dims[-1][1]


def matmul(backend, a, b, out) -> None:
    """``out = a @ b``: a (..., m, k), b (..., k, n) broadcast to out's batch (..., m, n);
    out C-contiguous; all one floating/complex dtype (float16/32/64, complex64/128)."""
    m, n = out._shape[-2], out._shape[-1]
    k = a._shape[-1]
    if out._size == 0:
        return
    char = out.dtype.char
    if k == 0:
        backend.fill(out, out.dtype.type(0))
        return
    batch_shape = out._shape[:-2]
    nbatch = 1
    for d in batch_shape:
        nbatch *= d
    isz = out.dtype.itemsize

    def prepare(x, rows, cols):
        lay = _layout(rows, cols, x._strides[-2], x._strides[-1], isz)
        bs = _batch_stride(x._shape[:-2], x._strides[:-2])
        if lay is None or bs is None or bs % isz or bs < 0 or min(x._strides) < 0:
            t = empty(batch_shape + (rows, cols), x.dtype)
            backend.copy(x, t)
            x = t
            lay = (OP_N, cols)
            bs = rows * cols * isz if nbatch > 1 else 0
        return x, lay, bs // isz

    a, (opa, lda), sa = prepare(a, m, k)
    b, (opb, ldb), sb = prepare(b, k, n)
    keep, alpha, beta = scalar_ptrs(char, 1, 0)
    h = handle()
    cb = lib()
    dt = DATA_TYPE[char]
    big = max(m, n, k, lda, ldb) > _INT_MAX or nbatch > _INT_MAX
    # column-major: C^T (n x m, ldc = n) = op(B^T) (n x k) @ op(A^T) (k x m)
    typed = GEMM_API == "typed" and char in _TYPED_GEMM
    suffix = "_64" if big else ""
    if nbatch == 1:  # the plain GEMM: its heuristics may pick another kernel than batch 1
        if typed:
            getattr(cb, _TYPED_GEMM[char] + suffix)(h, opb, opa, n, m, k, alpha, ptr(b), ldb,
                                                    ptr(a), lda, beta, ptr(out), n)
        else:
            getattr(cb, "gemm_ex" + suffix)(h, opb, opa, n, m, k, alpha, ptr(b), dt, ldb,
                                            ptr(a), dt, lda, beta, ptr(out), dt, n,
                                            COMPUTE[char], GEMM_ALGO)
    elif typed:
        getattr(cb, _TYPED_GEMM[char] + "_strided_batched" + suffix)(
            h, opb, opa, n, m, k, alpha, ptr(b), ldb, sb, ptr(a), lda, sa, beta, ptr(out), n,
            m * n, nbatch)
    else:
        getattr(cb, "gemm_strided_batched_ex" + suffix)(
            h, opb, opa, n, m, k, alpha, ptr(b), dt, ldb, sb, ptr(a), dt, lda, sa, beta,
            ptr(out), dt, n, m * n, nbatch, COMPUTE[char], GEMM_ALGO)
    del keep
