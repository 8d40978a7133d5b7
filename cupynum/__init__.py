"""cupynum: NumPy on NVIDIA GPUs.  ``import cupynum as np``.

Names defined here are native.  Any other NumPy name resolves through the module
``__getattr__`` below: classes, exceptions and constants as NumPy's own objects, functions
as host fallbacks (internals.md principle 3), submodules as fallback proxies.
"""
from __future__ import annotations

import importlib as _importlib
import types as _types

import numpy as _np

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
from ._api.sorting import *  # noqa: E402,F401,F403
from ._api.windows import *  # noqa: E402,F401,F403
from ._api.interpolate import *  # noqa: E402,F401,F403
from ._api.polynomials import *  # noqa: E402,F401,F403
from ._api.sets import *  # noqa: E402,F401,F403
from ._api.functional import *  # noqa: E402,F401,F403
from ._api.binary import *  # noqa: E402,F401,F403
from ._api.printing import *  # noqa: E402,F401,F403

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
                                                    "random", "emath")}
_proxies: dict[str, _types.ModuleType] = {}


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _importlib.import_module(_SUBMODULES[name])
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum' has no attribute {name!r}")
    from ._fallback import fallback_proxy

    return fallback_proxy(_np, name, "cupynum")
