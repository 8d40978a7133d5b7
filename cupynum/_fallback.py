"""Nothing is ever simply missing (internals.md principle 3).

A NumPy function cupynum does not implement natively runs on the host: cupynum arrays in
the arguments (also inside lists, tuples and dicts) become NumPy copies, NumPy runs, array
results come back to the device, and any argument NumPy modified in place (``out=``,
``fill_diagonal``, ``put``, ``shuffle``...) is written back to its cupynum array.
"""
from __future__ import annotations

import functools
import types
import warnings

import numpy as np

from . import _backends, _config
from ._array import from_host, ndarray
from ._ops import SUPPORTED_DTYPES


class FallbackWarning(UserWarning):
    """A NumPy function ran on the host because cupynum has no native version of it."""


_warned: set[str] = set()


def _notify(qualname: str) -> None:
    mode = _config.FALLBACK
    if mode == "error":
        raise NotImplementedError(
            f"{qualname} has no native cupynum implementation (CUPYNUM_FALLBACK=error)")
    if mode == "warn" and qualname not in _warned:
        _warned.add(qualname)
        warnings.warn(f"{qualname} is not implemented natively by cupynum; it runs through "
                      "NumPy on the host", FallbackWarning, stacklevel=4)


class _Transfer:
    """Host copies of the cupynum arrays found in one call's arguments."""

    def __init__(self):
        self.pairs = []  # (cupynum array, host copy, snapshot of its bytes)

    def to_host(self, obj):
        if isinstance(obj, ndarray):
            host = obj._host()
            self.pairs.append((obj, host, host.tobytes()))
            return host
        if type(obj) in (list, tuple):
            return type(obj)(self.to_host(x) for x in obj)
        if type(obj) is dict:
            return {k: self.to_host(v) for k, v in obj.items()}
        return obj

    def write_back(self):
        for dev, host, before in self.pairs:
            if host.tobytes() != before:
                _write(dev, host)

    def from_host(self, result):
        for dev, host, _ in self.pairs:
            if result is host:
                return dev
        if type(result) is np.ndarray:  # subclasses (masked arrays, matrix) keep their class
            if result.dtype.newbyteorder("=") in SUPPORTED_DTYPES:
                return from_host(result)  # a foreign byte order is converted on the way in
            return result
        if isinstance(result, np.generic) and result.dtype in SUPPORTED_DTYPES:
            return from_host(np.asarray(result))
        if isinstance(result, tuple):
            items = [self.from_host(r) for r in result]
            return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
        if isinstance(result, list):
            return [self.from_host(r) for r in result]
        if isinstance(result, (types.FunctionType, functools.partial)):
            return _host_callable(result)  # what it returns later comes back too
        return result


def _host_callable(func):
    """A callable NumPy handed back (a closure, a partial) whose results come back as cupynum
    arrays, as the fallback's own results do."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return call_on_host(func, args, kwargs)

    return wrapper


def _write(dev: ndarray, host: np.ndarray) -> None:
    _backends.for_writing(dev).write_host(dev, np.ascontiguousarray(host))


def call_on_host(func, args, kwargs):
    """Run ``func`` (a NumPy callable) on host copies; results back to the device."""
    t = _Transfer()
    hargs = t.to_host(tuple(args))
    hkwargs = t.to_host(dict(kwargs))
    result = func(*hargs, **hkwargs)
    t.write_back()
    return t.from_host(result)


@functools.lru_cache(maxsize=None)
def fallback_for(func, qualname: str | None = None):
    """A wrapper running NumPy's ``func`` through the host (cached per function)."""
    name = qualname or f"numpy.{getattr(func, '__name__', repr(func))}"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _notify(name)
        return call_on_host(func, args, kwargs)

    wrapper.__cupynum_fallback__ = True
    return wrapper


_proxies: dict = {}


def fallback_proxy(np_module, name: str, owner: str):
    """What ``owner.name`` means when cupynum has no native ``name``: NumPy's classes,
    exceptions and constants as they are; functions as host fallbacks; submodules as
    proxies that do the same one level down."""
    try:
        obj = getattr(np_module, name)
    except AttributeError:
        raise AttributeError(f"module {owner!r} has no attribute {name!r}") from None
    if isinstance(obj, types.ModuleType):
        return module_proxy(obj, f"{owner}.{name}")
    qualname = f"{np_module.__name__}.{name}"
    if obj is np.vectorize:
        return _vectorize_class()
    if type(obj).__module__ == _INDEX_TRICKS and not callable(obj):
        return _IndexTrick(obj, qualname)
    if isinstance(obj, type) or not callable(obj):
        return obj
    return fallback_for(obj, qualname)


_INDEX_TRICKS = np.mgrid.__class__.__module__  # mgrid, ogrid, r_, c_, s_, index_exp


class _IndexTrick:
    """NumPy's index-trick object (``mgrid[0:3]``, ``r_[a, b]``...) run on the host, its
    arrays back as cupynum arrays."""

    __cupynum_fallback__ = True

    def __init__(self, obj, qualname):
        self._obj, self._qualname = obj, qualname

    def __getitem__(self, key):
        _notify(self._qualname)
        return call_on_host(type(self._obj).__getitem__, (self._obj, key), {})

    def __len__(self):
        return len(self._obj)

    def __getattr__(self, name):
        return getattr(self._obj, name)


@functools.lru_cache(maxsize=None)
def _vectorize_class():
    class vectorize(np.vectorize):
        """``numpy.vectorize`` (a Python loop on the host); its results come back as cupynum
        arrays.  Instances are ``numpy.vectorize`` instances too."""

        __cupynum_fallback__ = True

        def __call__(self, *args, **kwargs):
            _notify("numpy.vectorize")
            return call_on_host(super().__call__, args, kwargs)

    vectorize.__module__ = "cupynum"
    return vectorize


def module_proxy(np_module, qualname: str):
    proxy = _proxies.get(qualname)
    if proxy is None:
        proxy = types.ModuleType(qualname, np_module.__doc__)

        def __getattr__(name, _m=np_module, _q=qualname):
            if name.startswith("__"):
                raise AttributeError(name)
            return fallback_proxy(_m, name, _q)

        proxy.__getattr__ = __getattr__
        _proxies[qualname] = proxy
    return proxy
