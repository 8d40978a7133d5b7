"""cupynum.lib: NumPy's numpy.lib.

Names defined here (and in its submodules) are native; any other numpy.lib name runs through
the host fallback (see cupynum._fallback).
"""
from __future__ import annotations

import importlib as _importlib

import numpy as _np

from .._fallback import fallback_proxy as _fallback_proxy

_SUBMODULES = ("stride_tricks",)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _importlib.import_module(f"cupynum.lib.{name}")
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum.lib' has no attribute {name!r}")
    return _fallback_proxy(_np.lib, name, "cupynum.lib")
