"""NumPy protocols and interop: __array_function__, __array_ufunc__, DLPack, CUDA array
interface, the array API namespace."""
import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from helpers import assert_same

ON_CUDA = _backends.name() == "cuda"


def test_array_namespace():
    a = cp.ones(3)
    assert a.__array_namespace__() is cp
    assert cp.__array_api_version__
    info = cp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64
    assert "float32" in info.dtypes() and "int8" in info.dtypes(kind="signed integer")
    assert info.capabilities()["boolean indexing"]


def test_numpy_functions_dispatch_to_cupynum():
    a = cp.arange(6.0).reshape(2, 3)
    for r in (np.zeros_like(a), np.ones_like(a), np.full_like(a, 2), np.copy(a), np.shape(a),
              np.where(a > 2, a, 0), np.clip(a, 1, 3), np.isclose(a, a)):
        if isinstance(r, tuple):
            assert r == (2, 3)
        else:
            assert isinstance(r, cp.ndarray)
    assert np.ndim(a) == 2 and np.size(a) == 6
    r = np.add(a, 1)
    assert isinstance(r, cp.ndarray)
    assert isinstance(np.sin(a), cp.ndarray)
    out = cp.empty((2, 3))
    assert np.multiply(a, 2, out=out) is out
    assert_same(out, np.arange(6.0).reshape(2, 3) * 2)


def test_numpy_ufunc_with_host_out_runs_on_host():
    a = cp.arange(3.0)
    out = np.empty(3)
    np.add(a, 1, out=out)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


def test_cuda_array_interface_only_on_cuda():
    a = cp.ones(3)
    assert hasattr(a, "__cuda_array_interface__") == ON_CUDA
    if ON_CUDA:
        cai = a.__cuda_array_interface__
        assert cai["shape"] == (3,) and cai["typestr"] == "<f8" and cai["version"] == 3


@pytest.mark.skipif(ON_CUDA, reason="host DLPack exchange")
def test_dlpack_host_round_trip():
    a = cp.arange(6, dtype=np.int16).reshape(2, 3)
    h = np.from_dlpack(a)
    np.testing.assert_array_equal(h, np.arange(6, dtype=np.int16).reshape(2, 3))
    assert a.__dlpack_device__() == (1, 0)
    back = cp.from_dlpack(np.arange(4.0))
    assert_same(back, np.arange(4.0))


@pytest.mark.gpu
def test_dlpack_with_torch_zero_copy():
    torch = pytest.importorskip("torch")
    a = cp.arange(8, dtype=np.float32).reshape(2, 4)
    t = torch.from_dlpack(a)
    assert t.device.type == "cuda" and t.data_ptr() == a.data.ptr
    t[0, 0] = 42.0
    torch.cuda.synchronize()
    assert float(a[0, 0]) == 42.0
    src = torch.arange(6, device="cuda", dtype=torch.float64).reshape(3, 2)[:, 1]
    b = cp.from_dlpack(src)
    assert b.data.ptr == src.data_ptr() and b.strides == (16,)
    assert_same(b, np.array([1.0, 3.0, 5.0]))
    c = cp.asarray(src)
    assert c.data.ptr == src.data_ptr()
    for dt in (np.bool_, np.int8, np.uint8, np.int64, np.float16, np.complex64):
        x = cp.asarray(np.arange(5).astype(dt))
        np.testing.assert_array_equal(torch.from_dlpack(x).cpu().numpy(), np.arange(5).astype(dt))


@pytest.mark.gpu
def test_dlpack_and_cai_with_cupy_zero_copy():
    cupy = pytest.importorskip("cupy")
    a = cp.arange(6, dtype=np.int32)
    c = cupy.from_dlpack(a)
    assert c.data.ptr == a.data.ptr
    c2 = cupy.asarray(a)  # through __cuda_array_interface__
    assert c2.data.ptr == a.data.ptr
    src = cupy.arange(10, dtype=cupy.float32)[::2]
    b = cp.from_dlpack(src)
    assert b.data.ptr == src.data.ptr
    assert_same(b, np.arange(10, dtype=np.float32)[::2])
    d = cp.asarray(src)
    src[0] = 7
    cupy.cuda.runtime.deviceSynchronize()
    assert float(d[0]) == 7.0
