"""Users' own kernels: RawKernel and ElementwiseKernel."""
import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from helpers import assert_same

on_host = _backends.name() != "cuda"

SAXPY = r'''
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
'''


@pytest.mark.skipif(not on_host, reason="host-backend behaviour")
def test_clear_error_on_host_backend():
    k = cp.RawKernel(SAXPY, "saxpy")
    with pytest.raises(RuntimeError, match="CUDA backend"):
        k((1,), (32,), (np.float32(2), cp.ones(3, np.float32), cp.ones(3, np.float32),
                        cp.empty(3, np.float32), np.int64(3)))
    ek = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y", "mul")
    with pytest.raises(RuntimeError, match="CUDA backend"):
        ek(cp.ones(3, np.float32), cp.ones(3, np.float32))


def test_elementwise_kernel_source_compiles_with_nvrtc():
    pytest.importorskip("cuda.bindings")
    from cupynum._backends.cuda import compiler

    ek = cp.ElementwiseKernel("T x, float64 y", "T z", "z = x * (T)y + (T)i", "axpi")
    f4, f8 = np.dtype(np.float32), np.dtype(np.float64)
    src = ek.source([f4, f8], [f4], [False, True], {"T": f4})
    assert "axpi" in src and "typedef float T;" in src
    compiled = compiler.compile_cubin(src, arch="sm_90")
    assert len(compiled.cubin) > 0


def test_element_kernel_placeholder_conflict():
    ek = cp.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add2")
    with pytest.raises(TypeError):
        ek._types([cp.ones(2, np.float32), cp.ones(2, np.float64)])


@pytest.mark.gpu
def test_raw_kernel_on_gpu():
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    out = cp.empty(n, np.float32)
    k = cp.RawKernel(SAXPY, "saxpy")
    k(((n + 255) // 256,), (256,), (np.float32(2.0), cp.asarray(x), cp.asarray(y), out,
                                    np.int64(n)))
    assert_same(out, 2 * x + y)


@pytest.mark.gpu
def test_elementwise_kernel_on_gpu():
    ek = cp.ElementwiseKernel("T x, T y", "T z", "z = x > y ? x - y : y - x", "absdiff")
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    b = np.array([5.0, 1.0, 7.0, 2.0])
    assert_same(ek(cp.asarray(a), cp.asarray(b)), np.abs(a - b))
    ek2 = cp.ElementwiseKernel("int32 x, int64 s", "int64 z", "z = x * s + i", "affine")
    xi = np.arange(6, dtype=np.int32)
    assert_same(ek2(cp.asarray(xi), 3), xi.astype(np.int64) * 3 + np.arange(6))
    out = cp.zeros((3, 4), np.float64)
    ek(cp.asarray(a), cp.asarray(b), out)
    assert_same(out, np.abs(a - b))
