"""Zero-copy exchange with PyTorch, CuPy, JAX and Numba on the GPU: both sides see one
memory (a write on one side is read on the other), and the producer's queued work is finished
before the consumer reads (stream order).  Each library's tests skip where it is absent."""
import numpy as np
import pytest

import cupynum

pytestmark = pytest.mark.gpu

N = 1 << 22  # big enough that work queued on a stream is still running when read


def _slow_chain(xp, x, rounds=20):
    for _ in range(rounds):
        x = x * 1.0000001 + 0.5
    return x


def _expected(rounds=20):
    x = np.arange(N, dtype=np.float32)
    for _ in range(rounds):
        x = x * np.float32(1.0000001) + np.float32(0.5)
    return x


# PyTorch ------------------------------------------------------------------------------------
def test_torch_asarray_shares_memory_both_ways():
    torch = pytest.importorskip("torch")
    t = torch.zeros(8, device="cuda", dtype=torch.float64)
    a = cupynum.asarray(t)
    assert a.__cuda_array_interface__["data"][0] == t.data_ptr()
    a[2] = 7.0
    cupynum.cuda.synchronize()
    assert t[2].item() == 7.0
    t[3] = 9.0
    torch.cuda.synchronize()
    assert float(a[3]) == 9.0
    back = torch.from_dlpack(a)
    assert back.data_ptr() == t.data_ptr()


def test_torch_stream_order_into_cupynum():
    torch = pytest.importorskip("torch")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = _slow_chain(torch, torch.arange(N, device="cuda", dtype=torch.float32))
        got = cupynum.asarray(t)  # torch's CAI names stream s: cupynum waits for it
        host = cupynum.asnumpy(got)
    np.testing.assert_allclose(host, _expected(), rtol=1e-6)


def test_cupynum_stream_order_into_torch():
    torch = pytest.importorskip("torch")
    s = cupynum.cuda.Stream(non_blocking=True)
    with s:
        a = _slow_chain(cupynum, cupynum.arange(N, dtype=np.float32))
        t = torch.from_dlpack(a)  # torch passes its stream; cupynum finishes its work first
    np.testing.assert_allclose(t.cpu().numpy(), _expected(), rtol=1e-6)


# CuPy ---------------------------------------------------------------------------------------
def test_cupy_shares_memory_both_ways():
    cupy = pytest.importorskip("cupy")
    c = cupy.zeros(8, dtype=cupy.float32)
    a = cupynum.asarray(c)
    assert a.__cuda_array_interface__["data"][0] == c.data.ptr
    a[1] = 4.0
    cupynum.cuda.synchronize()
    assert float(c[1]) == 4.0
    c[5] = 6.0
    cupy.cuda.runtime.deviceSynchronize()
    assert float(a[5]) == 6.0
    back = cupy.from_dlpack(a)
    assert back.data.ptr == c.data.ptr


def test_cupy_stream_order_both_ways():
    cupy = pytest.importorskip("cupy")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        c = _slow_chain(cupy, cupy.arange(N, dtype=cupy.float32))
        got = cupynum.from_dlpack(c)
        host = cupynum.asnumpy(got)
    np.testing.assert_allclose(host, _expected(), rtol=1e-6)
    ours = cupynum.cuda.Stream(non_blocking=True)
    with ours:
        a = _slow_chain(cupynum, cupynum.arange(N, dtype=np.float32))
        c2 = cupy.asarray(a)  # through __cuda_array_interface__ and its stream field
    np.testing.assert_allclose(cupy.asnumpy(c2), _expected(), rtol=1e-6)


# JAX ----------------------------------------------------------------------------------------
def _jax_gpu():
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("JAX has no GPU backend here")
    return jax


def test_jax_dlpack_zero_copy_both_ways():
    jax = _jax_gpu()
    a = cupynum.arange(16, dtype=np.float32)
    j = jax.dlpack.from_dlpack(a)
    assert j.unsafe_buffer_pointer() == a.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(np.asarray(j), np.arange(16, dtype=np.float32))
    src = jax.numpy.arange(10, dtype=jax.numpy.float32) * 3
    b = cupynum.from_dlpack(src)
    assert b.__cuda_array_interface__["data"][0] == src.unsafe_buffer_pointer()
    np.testing.assert_array_equal(cupynum.asnumpy(b), np.arange(10, dtype=np.float32) * 3)


def test_jax_reads_finished_cupynum_work():
    jax = _jax_gpu()
    s = cupynum.cuda.Stream(non_blocking=True)
    with s:
        a = _slow_chain(cupynum, cupynum.arange(N, dtype=np.float32))
        j = jax.dlpack.from_dlpack(a)
    np.testing.assert_allclose(np.asarray(j), _expected(), rtol=1e-6)


# Numba --------------------------------------------------------------------------------------
def _numba_cuda():
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("numba sees no GPU")
    return numba_cuda


def test_numba_shares_memory_both_ways():
    nc = _numba_cuda()
    a = cupynum.zeros(8, dtype=np.float64)
    d = nc.as_cuda_array(a)
    assert d.__cuda_array_interface__["data"][0] == a.__cuda_array_interface__["data"][0]
    d[4:5].copy_to_device(np.array([3.5]))  # a write by Numba (a copy: no kernel to build)
    nc.synchronize()
    assert float(a[4]) == 3.5
    src = nc.to_device(np.arange(6.0))
    b = cupynum.asarray(src)
    assert b.__cuda_array_interface__["data"][0] == src.__cuda_array_interface__["data"][0]
    b[0] = 42.0
    cupynum.cuda.synchronize()
    assert src.copy_to_host()[0] == 42.0


def test_cuda_array_interface_names_the_current_stream():
    s = cupynum.cuda.Stream(non_blocking=True)
    a = cupynum.ones(4)
    assert a.__cuda_array_interface__["stream"] == 1  # the legacy default stream
    with s:
        assert a.__cuda_array_interface__["stream"] == s.ptr
