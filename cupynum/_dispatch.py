"""NumPy's protocols: ``numpy.f(cupynum_array)`` runs cupynum's ``f`` (or the fallback)."""
from __future__ import annotations

import importlib

import numpy as np

from ._array import ndarray
from ._fallback import call_on_host, fallback_for
from ._ufunc import _foreign_override

# NumPy module of a function -> cupynum module holding the native version.
_MODULES = {"numpy": "cupynum", "numpy.linalg": "cupynum.linalg", "numpy.fft": "cupynum.fft",
            "numpy.random": "cupynum.random"}


def native(func):
    """cupynum's native implementation of the NumPy callable ``func``, or None."""
    target = _MODULES.get(getattr(func, "__module__", None) or "numpy")
    if target is None:
        return None
    impl = vars(importlib.import_module(target)).get(getattr(func, "__name__", ""))
    if impl is None or impl is func or getattr(impl, "__cupynum_fallback__", False):
        return None
    return impl


def array_function(func, types, args, kwargs):
    if not all(issubclass(t, (ndarray, np.ndarray)) for t in types):
        return NotImplemented
    impl = native(func)
    if impl is None:
        impl = fallback_for(func, f"{func.__module__}.{func.__name__}")
    return impl(*args, **kwargs)


def array_ufunc(ufunc, method, inputs, kwargs):
    import cupynum

    out = kwargs.get("out")
    outs = out if isinstance(out, tuple) else (out,)
    if _foreign_override(inputs, out):
        return NotImplemented  # NEP 13: the other array type (a Dask array, say) takes it
    ours = vars(cupynum).get(ufunc.__name__)
    host_out = any(isinstance(o, np.ndarray) for o in outs)
    if ours is None or host_out or not hasattr(ours, method):
        return call_on_host(getattr(ufunc, method), inputs, kwargs)
    if isinstance(out, tuple) and len(out) == 1:  # NumPy always hands ``out`` as a tuple
        kwargs = dict(kwargs, out=out[0])
    return getattr(ours, method)(*inputs, **kwargs)


# The ndarray's protocol methods: installed here, above the ndarray, because they answer
# with the namespace (the ndarray itself imports nothing above it).
def _array_namespace(self, api_version=None):
    import cupynum

    return cupynum


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    return array_ufunc(ufunc, method, inputs, kwargs)


def _array_function(self, func, types, args, kwargs):
    return array_function(func, types, args, kwargs)


ndarray.__array_namespace__ = _array_namespace
ndarray.__array_ufunc__ = _array_ufunc
ndarray.__array_function__ = _array_function
