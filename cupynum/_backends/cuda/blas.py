"""cuBLAS through nvmath-python's low-level bindings (``nvmath.bindings.cublas``).

Imported lazily: the first matmul pays the binding import (~35 ms, see ``nvmath_bindings``) and the
handle creation.  Handles are cached per thread (``threading.local``) and bound to the
current stream before each call (``set_stream`` only when the stream changed); a thread's
handle is destroyed when the thread ends (``_ThreadHandle.__del__``: the thread-local drops
it), so short-lived threads do not leak the handle's device memory.

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

from . import memory, nvmath_bindings, runtime, tuning, view
from .copy_fill import copy, fill
from .view import DeviceView, alias, dptr

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

# The GEMM knobs are tuning.BLAS (gemm_api, gemm_algo, workspace_bytes, math_mode).
_TYPED_GEMM = {"f": "sgemm", "d": "dgemm", "F": "cgemm", "D": "zgemm"}


def lib():
    """``nvmath.bindings.cublas`` (imported on first use)."""
    global _lib
    if _lib is None:
        _lib = nvmath_bindings.load("cublas")
    return _lib


class _ThreadHandle:
    """One thread's cuBLAS handle and what it is configured with; destroyed with the
    thread's ``threading.local`` (at thread exit), or at garbage collection."""

    __slots__ = ("handle", "stream", "math_mode", "ws_bytes", "workspace")

    def __init__(self, handle):
        self.handle, self.stream, self.math_mode, self.ws_bytes = handle, None, None, 0
        self.workspace = None

    def __del__(self):
        destroy_quietly(lib().destroy, self.handle)


def destroy_quietly(destroy, handle) -> None:
    """``destroy(handle)`` from a finaliser: skipped at interpreter exit and in a forked
    child (the handle belongs to the parent), errors ignored (nothing to report them to)."""
    if memory._shutdown:
        return
    try:
        destroy(handle)
    except Exception:  # noqa: BLE001
        pass


def handle() -> int:
    """This thread's cuBLAS handle, bound to the current stream."""
    stream = runtime.current_stream()
    t = getattr(_tls, "state", None)
    cb = lib()
    if t is None:
        t = _tls.state = _ThreadHandle(memory.library_alloc(cb.create, what="cublasCreate"))
    knobs = tuning.BLAS
    if (t.stream != stream or t.math_mode != knobs.math_mode
            or t.ws_bytes != knobs.workspace_bytes):
        _configure(cb, t, stream, knobs)
    return t.handle


def _configure(cb, t, stream, knobs) -> None:
    """Bind the handle to ``stream`` and apply the knobs (``tuning.BLAS``; only when one of
    them changed)."""
    h = t.handle
    cb.set_stream(h, stream)  # also resets a user workspace to cuBLAS's default
    t.stream = stream
    cb.set_math_mode(h, knobs.math_mode)
    t.math_mode = knobs.math_mode
    nbytes = knobs.workspace_bytes
    if nbytes:
        ws = t.workspace
        # One per stream: a workspace may still be in use by work queued on the old stream.
        if ws is None or ws.nbytes < nbytes or ws.stream != stream:
            t.workspace = None
            ws = t.workspace = memory.alloc(nbytes, stream)
        cb.set_workspace(h, ws.ptr, ws.nbytes)
    t.ws_bytes = nbytes


# --- helpers shared with solver.py / fft.py ------------------------------------------------

def empty(shape, dtype) -> DeviceView:
    """A new C-contiguous device temporary."""
    return view.empty(shape, dtype, memory.alloc)


def colmajor_copy(a) -> DeviceView:
    """A copy of stacked matrices ``a`` (B, m, n) in which each matrix is column-major
    (Fortran order), matrices one after another: what LAPACK-style routines want."""
    b, m, n = a._shape
    s = a.dtype.itemsize
    t = DeviceView(memory.alloc(max(b * m * n, 1) * s), (b, m, n), a.dtype,
             strides=(m * n * s, s, m * s))
    if t._size:
        copy(a, t)
    return t


def colmajor_view(t: DeviceView, b, m, n, ld=None) -> DeviceView:
    """The (b, m, n) column-major stacked view over ``t``'s buffer (leading dimension ld)."""
    s = t.dtype.itemsize
    ld = m if ld is None else ld
    return alias(t, (b, m, n), t.dtype, (ld * n * s, s, ld * s))


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


def matmul(a, b, out) -> None:
    """``out = a @ b``: a (..., m, k), b (..., k, n) broadcast to out's batch (..., m, n);
    out C-contiguous; all one floating/complex dtype (float16/32/64, complex64/128)."""
    m, n = out._shape[-2], out._shape[-1]
    k = a._shape[-1]
    if out._size == 0:
        return
    char = out.dtype.char
    if k == 0:
        fill(out, out.dtype.type(0))
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
            copy(x, t)
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
    knobs = tuning.BLAS
    typed = knobs.gemm_api == "typed" and char in _TYPED_GEMM
    suffix = "_64" if big else ""
    if nbatch == 1:  # the plain GEMM: its heuristics may pick another kernel than batch 1
        if typed:
            fn = getattr(cb, _TYPED_GEMM[char] + suffix)
            args = (h, opb, opa, n, m, k, alpha, dptr(b), ldb, dptr(a), lda, beta, dptr(out), n)
        else:
            fn = getattr(cb, "gemm_ex" + suffix)
            args = (h, opb, opa, n, m, k, alpha, dptr(b), dt, ldb, dptr(a), dt, lda, beta,
                    dptr(out), dt, n, COMPUTE[char], knobs.gemm_algo)
    elif typed:
        fn = getattr(cb, _TYPED_GEMM[char] + "_strided_batched" + suffix)
        args = (h, opb, opa, n, m, k, alpha, dptr(b), ldb, sb, dptr(a), lda, sa, beta, dptr(out),
                n, m * n, nbatch)
    else:
        fn = getattr(cb, "gemm_strided_batched_ex" + suffix)
        args = (h, opb, opa, n, m, k, alpha, dptr(b), dt, ldb, sb, dptr(a), dt, lda, sa, beta,
                dptr(out), dt, n, m * n, nbatch, COMPUTE[char], knobs.gemm_algo)
    # cuBLAS's own workspace (workspace_bytes = 0) is allocated by cuBLAS: under memory
    # pressure the pool gives its cached blocks back and the GEMM is retried once.
    memory.library_alloc(fn, *args, what="cuBLAS GEMM")
    del keep
