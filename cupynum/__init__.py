"""cupynum: NumPy on NVIDIA GPUs.  ``import cupynum as np``.

Names defined here are native.  Any other NumPy name resolves through the module
``__getattr__`` below: classes, exceptions and constants as NumPy's own objects, functions
as host fallbacks (internals.md principle 3), submodules as fallback proxies.
"""
from __future__ import annotations

import importlib as _importlib
import sys as _sys
import types as _types

if not getattr(_sys, "_is_gil_enabled", lambda: True)():
    # The memory pool's free lists, the kernel and plan caches and the launchers' parameter
    # blocks count on the GIL; none of it has been checked without one (docs/guide/streams.md).
    raise ImportError(
        "cupynum does not support free-threaded Python with the GIL disabled. "
        "Run with the GIL enabled (PYTHON_GIL=1 or python -X gil=1).")

import numpy as _np  # noqa: E402

from ._array import ndarray
from ._fallback import FallbackWarning
from ._ufunc import UFUNCS as _UFUNCS
from ._ufunc import ufunc
from ._user_kernels import ElementwiseKernel, RawKernel

globals().update(_UFUNCS)

from ._api.creation import *  # noqa: E402,F401,F403
from ._api.elementwise import *  # noqa: E402,F401,F403
from ._api.metadata import *  # noqa: E402,F401,F403
from ._api.reductions import *  # noqa: E402,F401,F403
from ._api.statistics import *  # noqa: E402,F401,F403
from ._api.histograms import *  # noqa: E402,F401,F403
from ._api.products import *  # noqa: E402,F401,F403
from ._api.indexing import *  # noqa: E402,F401,F403
from ._api.manipulation import *  # noqa: E402,F401,F403
from ._api.padding import *  # noqa: E402,F401,F403
from ._api.sorting import *  # noqa: E402,F401,F403
from ._api.windows import *  # noqa: E402,F401,F403
from ._api.interpolate import *  # noqa: E402,F401,F403
from ._api.polynomials import *  # noqa: E402,F401,F403
from ._api.sets import *  # noqa: E402,F401,F403
from ._api.functional import *  # noqa: E402,F401,F403
from ._api.binary import *  # noqa: E402,F401,F403
from ._api.printing import *  # noqa: E402,F401,F403
from ._api.iteration import *  # noqa: E402,F401,F403
from ._api.poly1d import *  # noqa: E402,F401,F403
from ._api.host_objects import *  # noqa: E402,F401,F403
from . import _dispatch  # noqa: E402,F401  (installs the ndarray's NumPy protocols)

__version__ = "0.1.0"
__array_api_version__ = "2024.12"

# NumPy's dtype objects, scalar types, constants and dtype helpers are ours, unwrapped.
from numpy import (  # noqa: E402,F401
    bool, bool_, byte, cdouble, clongdouble, complex64, complex128, complexfloating, csingle,
    double, dtype, e, errstate, euler_gamma, finfo, float16, float32, float64, floating,
    generic, get_printoptions, half, iinfo, inexact, inf, int8, int16, int32, int64, int_,
    intc, integer, intp, isdtype, issubdtype, long, longlong, nan, newaxis, number, pi,
    printoptions, promote_types, set_printoptions, short, signedinteger, single, ubyte, uint,
    uint8, uint16, uint32, uint64, uintc, uintp, ulong, ulonglong, unsignedinteger, ushort,
    typename, mintypecode, common_type, format_float_positional, format_float_scientific,
)
from numpy import exceptions  # noqa: E402,F401

from ._profile import profile  # noqa: E402,F401


def get_array_module(*args):
    """cupynum (as CuPy's ``get_array_module``): the namespace for these arrays."""
    import cupynum

    return cupynum


def __array_namespace_info__():
    from ._namespace_info import Info

    return Info()


# Imported on first use: numpy.testing alone costs ~30 ms of import time, numpy.random
# (under cupynum.random) ~10 ms and numpy.linalg ~5 ms.
_SUBMODULES = {name: f"cupynum.{name}" for name in ("cuda", "testing", "fft", "linalg",
                                                    "random", "emath", "lib")}
_proxies: dict[str, _types.ModuleType] = {}
# Names of ours imported on first use too: the kernel compilers (``fuse``, ``vectorize``)
# bring Python's ast and inspect machinery (~8 ms of import time).
_LAZY_NAMES = {name: "cupynum._jit" for name in ("fuse", "vectorize",
                                                 "VectorizeFallbackWarning")}


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES) | set(_LAZY_NAMES))


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _importlib.import_module(_SUBMODULES[name])
    if name in _LAZY_NAMES:
        value = globals()[name] = getattr(_importlib.import_module(_LAZY_NAMES[name]), name)
        return value
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum' has no attribute {name!r}")
    from ._fallback import fallback_proxy

    return fallback_proxy(_np, name, "cupynum")


# Methods that are NumPy functions with the array first: ``a.sum(...)`` is
# ``cupynum.sum(a, ...)``, native or through the fallback, whichever the namespace holds.
# Installed here, once every function exists, so that the ndarray imports nothing above it;
# a plain function as a class attribute costs nothing per call.
_FUNCTION_METHODS = (
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "choose", "clip", "conj",
    "conjugate", "cumprod", "cumsum", "diagonal", "dot", "max", "mean", "min", "nonzero",
    "prod", "ptp", "put", "repeat", "round", "searchsorted", "std", "sum", "take", "trace",
    "var",
)


def _scalar_reductions():
    """Full reductions and products of 1-d host arrays return NumPy scalars
    (``_host_path.scalar_results``, ``scalar_products``): the public functions, and so the
    methods, are wrapped; ``out``'s position per reduction."""
    from ._host_path import scalar_products, scalar_results

    namespace = globals()
    for name, out_position in {"sum": 3, "prod": 3, "mean": 3, "std": 3, "var": 3, "max": 2,
                               "min": 2, "amax": 2, "amin": 2, "any": 2, "all": 2,
                               "argmax": 2, "argmin": 2}.items():
        namespace[name] = scalar_results(namespace[name], out_position)
    for name in ("dot", "vdot", "inner", "matmul"):
        namespace[name] = scalar_products(namespace[name], getattr(_np, name))


_scalar_reductions()


def _install_methods():
    namespace = globals()

    def method(func):  # a Python function binds as a method; others (ufuncs) get a wrapper
        if isinstance(func, _types.FunctionType):
            return func
        return lambda self, *args, **kwargs: func(self, *args, **kwargs)

    for name in _FUNCTION_METHODS:
        setattr(ndarray, name, method(namespace.get(name) or __getattr__(name)))
    sort_, partition_, compress_ = (namespace[n] for n in ("sort", "partition", "compress"))

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place, as ``ndarray.sort`` does."""
        self[...] = sort_(self, axis, kind, order, stable=stable)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partition in place, as ``ndarray.partition`` does."""
        self[...] = partition_(self, kth, axis, kind, order)

    def compress(self, condition, axis=None, out=None):
        """``cupynum.compress(condition, a, ...)``: the condition comes first there."""
        return compress_(condition, self, axis, out)

    ndarray.sort, ndarray.partition, ndarray.compress = sort, partition, compress


_install_methods()
del _install_methods


import sys as _sys  # noqa: E402

from . import _config as _settings  # noqa: E402

if "dask.sizeof" in _sys.modules:
    # Dask was imported first, perhaps from a source tree without our entry points: register
    # now what the dask.sizeof entry point would have (it is harmless to do both).
    from ._dask import register_sizeof as _register_with_dask

    _register_with_dask(_sys.modules["dask.sizeof"].sizeof)

if _settings.PROFILE:
    from ._profile import profile_whole_program as _profile_whole_program

    _profile_whole_program()
