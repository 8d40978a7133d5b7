"""Zero-copy exchange with other array libraries: DLPack both ways, CUDA array interface in.

On the CUDA backend an exported array is described by a DLPack ``DLManagedTensor`` built
with ctypes (the array stays alive until the consumer calls the deleter); imports read
``__cuda_array_interface__`` (CuPy, PyTorch, Numba) or, for DLPack-only producers,
cuda.core's ``StridedMemoryView``.  On the host backend NumPy's DLPack support is used.
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import _backends
from ._array import _c_strides, _make, from_host, ndarray
from ._backends.buffer import Buffer
from ._backends.host import view
from ._dtypes import normalize

_KDL_CPU, _KDL_CUDA = 1, 2
_DL_CODES = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}


def dlpack_device(a):
    # CUDA whenever the device backend is CUDA, whatever the array's placement: exporting
    # moves host data there (docs/guide/placement.md)
    if _backends.for_side("device").cuda_memory:
        return (_KDL_CUDA, 0)  # cupynum runs on device 0's primary context
    return (_KDL_CPU, 0)


def to_dlpack(a, *, stream=None, max_version=None, dl_device=None, copy=None):
    backend = _backends.for_side("device")
    if not backend.cuda_memory:
        backend = _backends.for_arrays(a)
        # (a device backend's bytes are not NumPy's: it exports a host copy)
        host = view(a) if backend.host_memory and not copy else a._host()
        return host.__dlpack__(stream=stream) if max_version is None else host.__dlpack__(
            stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
    if dl_device is not None and tuple(dl_device) != dlpack_device(a):
        raise BufferError("cupynum can export its CUDA arrays only to their own device")
    if copy:
        a = a.copy()
    capsule = _capsule(a)  # (reads the address: a pending array is computed first)
    if stream is not None and stream != -1:
        backend.synchronize()  # the consumer's stream then sees finished data
    return capsule


# DLPack structures (dlpack.h, unversioned ABI, which every consumer accepts) ---------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _Deleter)]
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_alive: dict[int, tuple] = {}  # manager_ctx -> what the exported tensor keeps alive


def _release(key) -> None:
    """The exported tensor ``key`` is done with: drop what it kept alive and its pin."""
    held = _alive.pop(key, None)
    if held is not None:
        _backends.unpin_device(held[3], reason=key)


@_Deleter
def _delete(managed):
    _release(managed.contents.manager_ctx or 0)


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CapsuleDestructor]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@_CapsuleDestructor
def _capsule_destructor(capsule_ptr):
    # Called when the capsule dies; if no consumer took it (name still "dltensor"), free it.
    capsule = ctypes.cast(capsule_ptr, ctypes.py_object)
    if _api.PyCapsule_IsValid(capsule, b"dltensor"):
        ptr = _api.PyCapsule_GetPointer(capsule, b"dltensor")
        managed = ctypes.cast(ptr, ctypes.POINTER(_DLManagedTensor))
        _release(managed.contents.manager_ctx or 0)


def _capsule(a):
    nd = a.ndim
    itemsize = a.dtype.itemsize
    shape = (ctypes.c_int64 * max(nd, 1))(*a.shape)
    strides = (ctypes.c_int64 * max(nd, 1))(*(s // itemsize for s in a.strides))
    managed = _DLManagedTensor()
    key = ctypes.addressof(managed)
    _backends.pin_device(a, reason=key)  # moved there until the consumer's deleter runs
    t = managed.dl_tensor
    t.data = a._address() if a.size else a._buf.address()
    t.device = _DLDevice(*dlpack_device(a))
    t.ndim = nd
    t.dtype = _DLDataType(_DL_CODES[a.dtype.kind], itemsize * 8, 1)
    t.shape = shape
    t.strides = strides
    t.byte_offset = 0
    managed.manager_ctx = key
    managed.deleter = _delete
    _alive[key] = (managed, shape, strides, a)
    return _api.PyCapsule_New(key, b"dltensor", _capsule_destructor)


# import ------------------------------------------------------------------------------------
class _ForeignBuffer:
    """Device memory owned by another library; holding ``owner`` keeps it alive."""

    __slots__ = ("ptr", "nbytes", "owner")

    def __init__(self, ptr, nbytes, owner):
        self.ptr, self.nbytes, self.owner = ptr, nbytes, owner


def from_dlpack(x, *, device=None, copy=None):
    if isinstance(x, ndarray):
        return x.copy() if copy else x
    backend = _backends.for_side("device")
    if not backend.cuda_memory:
        host = np.from_dlpack(x) if hasattr(x, "__dlpack__") else np.asarray(x)
        return from_host(np.array(host, copy=True))
    if hasattr(x, "__cuda_array_interface__") and not _dlpack_orders_streams_better(x):
        out = _from_cai(x)
    else:
        out = _from_strided_memory_view(x)
    return out.copy() if copy else out


def _dlpack_orders_streams_better(x) -> bool:
    """A producer whose CUDA array interface names no stream (PyTorch's is version 2) but
    that speaks DLPack: importing through DLPack passes it our stream, so its queued work is
    ordered before our reads (the interface alone would read whatever is there now)."""
    return hasattr(x, "__dlpack__") and "stream" not in x.__cuda_array_interface__


def _from_cai(x):
    cai = x.__cuda_array_interface__
    dt = normalize(np.dtype(cai["typestr"]))
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides = _c_strides(shape, dt.itemsize)
    ptr = cai["data"][0]
    stream = cai.get("stream")
    if stream not in (None, 0):
        from ._backends.cuda import runtime

        runtime.synchronize_stream(stream)  # the producer's work on it must be done
    return _wrap(ptr, shape, tuple(strides), dt, x)


def _from_strided_memory_view(x):
    from cuda.core.utils import StridedMemoryView

    from ._backends.cuda import runtime

    # The producer orders its queued work before ours on this stream (DLPack names the
    # legacy default stream 1, not 0).
    view = StridedMemoryView(x, stream_ptr=runtime.current_stream() or 1)
    if not view.is_device_accessible:
        raise BufferError("from_dlpack: the producer's memory is not on the GPU")
    dt = normalize(view.dtype)
    shape = tuple(view.shape)
    strides = view.strides
    if strides is None:
        strides = _c_strides(shape, dt.itemsize)
    else:
        strides = tuple(s * dt.itemsize for s in strides)
    return _wrap(view.ptr, shape, strides, dt, (view, x))


def _wrap(ptr, shape, strides, dt, owner):
    size = 1
    for n in shape:
        size *= n
    buf = Buffer(device=_ForeignBuffer(ptr, size * dt.itemsize, owner))
    return _make(buf, 0, shape, strides, dt, None)


# The ndarray's DLPack export, installed here (above the ndarray, which imports nothing
# above it).
def _ndarray_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device,
                     copy=copy)


ndarray.__dlpack__ = _ndarray_dlpack
ndarray.__dlpack_device__ = dlpack_device
