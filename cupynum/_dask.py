"""What Dask needs to size, move, spill and create cupynum chunks.

Nothing here runs at ``import cupynum``.  Dask reaches it through the entry points declared in
pyproject.toml: ``dask.sizeof`` (loaded whenever dask starts, so a chunk's size is its bytes,
not a Python object's ~100) and ``dask.array.backends`` (``dask.config.set({"array.backend":
"cupynum"})`` makes ``da.ones``, ``da.random`` and friends produce cupynum chunks).  The
``dask.sizeof`` hook also arranges, without importing them, that distributed's serialisers
and dask-cuda's spilling dispatch learn about cupynum arrays when those packages are imported.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys

import numpy as np

from . import random as _random
from ._api.creation import asarray, ascontiguousarray, asnumpy, empty
from ._array import ndarray


# sizeof -------------------------------------------------------------------------------------
def register_sizeof(sizeof) -> None:
    """The ``dask.sizeof`` entry point: register cupynum arrays, and the later hooks."""
    sizeof.register(ndarray)(lambda x: int(x.nbytes))
    after_import("dask.array.chunk_types", _register_chunk_type)
    after_import("distributed.protocol", _register_serializers)
    after_import("dask_cuda.get_device_memory_objects", _register_device_memory_objects)
    after_import("dask_cuda.is_device_object", _register_is_device_object)
    _fix_cupy_name_test()


def _register_chunk_type(chunk_types) -> None:
    """A Dask array then treats cupynum arrays beside it as chunks (``x @ cupynum_array``
    stays a Dask array), rather than handing the operation to them."""
    chunk_types.register_chunk_type(ndarray)


# distributed: the "cuda" and "dask" serialiser families -----------------------------------
def _header(x) -> dict:
    return {"shape": tuple(x.shape), "dtype": x.dtype.str}


def _cuda_memory() -> bool:
    """Whether this process's device backend keeps arrays in CUDA device memory."""
    from . import _backends

    return _backends.for_side("device").cuda_memory


def _on_device(x) -> bool:
    """Whether ``x``'s data is in CUDA device memory now (what dask-cuda's device
    accounting and spilling are about): a host-placed array (docs/guide/placement.md) is
    host memory to them."""
    from . import _backends

    return _cuda_memory() and _backends.placement.where(x._buf) != "host"


def serialize_device(x):
    """The "cuda" family: the array's bytes as one device frame (exported through
    ``__cuda_array_interface__``, so UCX moves them GPU to GPU; a host-placed array's
    bytes are copied to the device first)."""
    if not _cuda_memory():
        raise NotImplementedError("cupynum runs on its host backend: no device frames")
    flat = ascontiguousarray(x).reshape(-1).view(np.uint8)
    return _header(x), [flat]


def deserialize_device(header, frames):
    (frame,) = frames
    data = asarray(frame).reshape(-1).view(np.uint8)
    return data.view(np.dtype(header["dtype"])).reshape(header["shape"])


def serialize_host(x):
    """The "dask" family: the bytes as one host frame (TCP, spilling to host memory)."""
    host = np.ascontiguousarray(asnumpy(x))
    return _header(x), [memoryview(host.reshape(-1).view(np.uint8))]


def deserialize_host(header, frames):
    (frame,) = frames
    host = np.frombuffer(frame, dtype=np.uint8).view(np.dtype(header["dtype"]))
    return asarray(host.reshape(header["shape"]))


def _register_serializers(protocol) -> None:
    from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
    from distributed.protocol.serialize import dask_deserialize, dask_serialize

    cuda_serialize.register(ndarray)(serialize_device)
    cuda_deserialize.register(ndarray)(deserialize_device)
    dask_serialize.register(ndarray)(serialize_host)
    dask_deserialize.register(ndarray)(deserialize_host)


# dask-cuda: which objects hold device memory (its spilling counts and moves them) ---------
def _owner(x):
    return x if x.base is None else x.base


def _register_device_memory_objects(module) -> None:
    module.dispatch.register(ndarray)(lambda x: [_owner(x)] if _on_device(x) else [])


def _register_is_device_object(module) -> None:
    module.is_device_object.register(ndarray)(lambda x: _on_device(x))


# dask.array: its CuPy test is a substring test of the type's name ------------------------
def _fix_cupy_name_test() -> None:
    """``dask.utils.is_cupy_type`` asks whether "cupy" is in ``str(type(x))``, which
    "cupynum" is; ``da.matmul`` then imports CuPy to multiply cupynum chunks.  dask.utils,
    and the dask.array modules that imported the test by name, get one that asks for CuPy's
    own types instead (dask.utils is imported before this entry point runs; the dask.array
    modules that import it later take the new one)."""
    import dask.utils

    original = dask.utils.is_cupy_type
    if getattr(original, "_cupynum_fixed", False):
        return

    def is_cupy_type(x) -> bool:
        return original(x) and type(x).__module__.split(".")[0] == "cupy"

    is_cupy_type._cupynum_fixed = True
    for name in ("dask.utils", "dask.array.routines", "dask.array.utils", "dask.array.creation"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "is_cupy_type", None) is original:
            module.is_cupy_type = is_cupy_type


# the array backend entry point -------------------------------------------------------------
def _backend_entrypoint_class():
    from dask import config
    from dask.array.backends import ArrayBackendEntrypoint
    from dask.array.dispatch import to_numpy_dispatch

    import dask.array as da

    to_numpy_dispatch.register(ndarray)(lambda x, **kwargs: asnumpy(x))

    def with_meta(name, *args, meta=None, **kwargs):
        meta = empty(()) if meta is None else meta
        with config.set({"array.backend": "numpy"}):
            return getattr(da, name)(*args, meta=meta, **kwargs)

    class CupynumBackendEntrypoint(ArrayBackendEntrypoint):
        """``array.backend = "cupynum"``: creation functions make cupynum chunks."""

        @classmethod
        def to_backend_dispatch(cls):
            return _to_cupynum

        @classmethod
        def to_backend(cls, data, **kwargs):
            if isinstance(data._meta, ndarray):
                return data
            return data.map_blocks(_to_cupynum, **kwargs)

        @property
        def RandomState(self):
            return _random.RandomState

        @property
        def default_bit_generator(self):
            return _random.Philox

        @staticmethod
        def ones(*args, **kwargs):
            return with_meta("ones", *args, **kwargs)

        @staticmethod
        def zeros(*args, **kwargs):
            return with_meta("zeros", *args, **kwargs)

        @staticmethod
        def empty(*args, **kwargs):
            return with_meta("empty", *args, **kwargs)

        @staticmethod
        def full(*args, **kwargs):
            return with_meta("full", *args, **kwargs)

        @staticmethod
        def arange(*args, like=None, **kwargs):
            like = empty(()) if like is None else like
            with config.set({"array.backend": "numpy"}):
                return da.arange(*args, like=like, **kwargs)

    return CupynumBackendEntrypoint


def _to_cupynum(data, **kwargs):
    return asarray(data)


def __getattr__(name):
    # The entry point names the class; building it imports dask.array, so it is built on
    # first access rather than at import.
    if name == "CupynumBackendEntrypoint":
        cls = _backend_entrypoint_class()
        globals()[name] = cls
        return cls
    raise AttributeError(name)


# run a function once a module has been imported --------------------------------------------
_pending: dict[str, list] = {}


def after_import(name: str, fn) -> None:
    """Call ``fn(module)`` once module ``name`` is imported: now if it already is, otherwise
    right after its import finishes (without importing it ourselves)."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        fn(module)
        return
    _pending.setdefault(name, []).append(fn)
    if not any(isinstance(f, _AfterImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImportFinder())


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a module with pending hooks it asks the other finders and
    wraps the loader, so that the hooks run once the module's code has run."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _pending:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _HookedLoader(spec.loader, fullname)
                return spec
        return None


class _HookedLoader(importlib.abc.Loader):
    def __init__(self, loader, name):
        self._loader, self._name = loader, name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        for fn in _pending.pop(self._name, ()):
            fn(module)
