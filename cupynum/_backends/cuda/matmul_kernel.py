"""Matrix products computed by a kernel of ours instead of cuBLAS.

* Integer and bool types, every size: cuBLAS has no GEMM with NumPy's integer semantics
  (products and sums wrap in the output type; bool is an OR of ANDs).
* Batches of small float32/float64 matrices: for a batch of 4x4 products one cuBLAS
  batched call costs more than the arithmetic, which a thread per output element does in
  a few fused multiply-adds.

One thread per output element of the flattened (batch, row, column) space, ``out``
C-contiguous; each operand is read through element strides (batch, row, column), so
broadcast batches (stride 0) and transposed views need no copy.  The batch dims must walk
with one stride per operand (``blas._batch_stride``); otherwise the operand is copied
first.  Integers accumulate in the unsigned type of their width (the low bits of sums and
products are the same signed or not, and unsigned overflow is defined), floats with
``fma`` in k order.
"""
from __future__ import annotations

import functools

import numpy as np

from . import kernels_util as ku, tuning
from .blas import _batch_stride
from .copy_fill import copy
from .kernels_util import DEV, I64, PTR, Kernel
from .view import DeviceView, dptr

BLOCK = 256
_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
             8: "unsigned long long"}
_FLOAT = {"f": "float", "d": "double"}


def supports(char: str, m: int, n: int, k: int) -> bool:
    """Whether ``matmul`` below serves this product (dtype char of the output)."""
    if char in _FLOAT:
        return max(m, n, k) <= tuning.BLAS.kernel_max_dim
    return np.dtype(char).kind in "biu"


def _types(dt: np.dtype):
    """(storage type, accumulator type, multiply-accumulate expression)."""
    if dt.kind == "b":
        return "unsigned char", "unsigned char", "acc | (unsigned char)((x != 0) & (y != 0))"
    if dt.kind == "f":
        t = _FLOAT[dt.char]
        return t, t, "fma(x, y, acc)"
    u = _UNSIGNED[dt.itemsize]
    return u, u, f"({u})(acc + ({u})(x * y))"


@functools.lru_cache(maxsize=None)
def matmul_kernel(dt: np.dtype) -> Kernel:
    t, acc_t, mac = _types(np.dtype(dt))
    body = "\n".join([
        "{", f"  typedef {t} T; typedef {acc_t} A;",
        "  const T* a = (const T*)p_0; const T* b = (const T*)p_1; T* c = (T*)p_2;",
        "  const long long m = p_3, n = p_4, k = p_5, total = p_7; const cpn_arr<6> s = p_6;",
        "  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;"
        " t += (long long)gridDim.x * blockDim.x) {",
        "    long long j, i, bi;",
        "    if (total <= 0xFFFFFFFFll) {  // 32-bit divisions: several times cheaper",
        "      const unsigned r = (unsigned)t / (unsigned)n;",
        "      j = (unsigned)t - r * (unsigned)n; i = r % (unsigned)m; bi = r / (unsigned)m;",
        "    } else {",
        "      const long long r = t / n; j = t - r * n; i = r % m; bi = r / m;",
        "    }",
        "    const T* pa = a + bi * s.v[0] + i * s.v[1];",
        "    const T* pb = b + bi * s.v[3] + j * s.v[5];",
        "    A acc = 0;",
        "    for (long long q = 0; q < k; ++q) {",
        "      const A x = (A)pa[q * s.v[2]], y = (A)pb[q * s.v[4]];",
        f"      acc = {mac};",
        "    }",
        "    c[t] = (T)acc;", "  }", "}"])
    name = f"cpn_matmul_{np.dtype(dt).kind}{np.dtype(dt).itemsize}"
    return Kernel(name, [("const char*", PTR), ("const char*", PTR), ("char*", PTR),
                         ("const long long", I64), ("const long long", I64),
                         ("const long long", I64), ("const cpn_arr<6>", ku.arr_dtype(6)),
                         ("const long long", I64)], body)


def all_kernels() -> list:
    return [matmul_kernel(np.dtype(c)) for c in "?bBhHiIlLqQfd"]


def _element_strides(x, batch_shape, rows, cols):
    """(x or a C-contiguous copy, [batch, row, col] strides in elements)."""
    if x._c_contig:  # the usual case, without the general walk below
        return x, [rows * cols if len(x._shape) > 2 else 0, cols, 1]
    isz = x.dtype.itemsize
    bs = _batch_stride(x._shape[:-2], x._strides[:-2])
    rs, cs = x._strides[-2], x._strides[-1]
    if bs is None or any(v % isz for v in (bs, rs, cs)):
        shape = tuple(batch_shape) + (rows, cols)
        t = DeviceView(DEV.alloc(int(np.prod(shape)) * isz), shape, x.dtype)
        copy(x, t)
        return t, [rows * cols, cols, 1]
    return x, [bs // isz, rs // isz, cs // isz]


def matmul(a, b, out) -> None:
    """``out = a @ b`` as ``blas.matmul`` (a, b broadcast to out's batch, one dtype; out
    C-contiguous), for the products ``supports`` accepts."""
    m, n = out._shape[-2], out._shape[-1]
    k = a._shape[-1]
    total = out._size
    if total == 0:
        return
    batch_shape = out._shape[:-2]
    a, sa = _element_strides(a, batch_shape, m, k)
    b, sb = _element_strides(b, batch_shape, k, n)
    grid = max(1, min(-(-total // BLOCK), 65535 * 8))
    DEV.launch(matmul_kernel(np.dtype(out.dtype)), grid, BLOCK,
               [dptr(a), dptr(b), dptr(out), m, n, k, sa + sb, total])
