"""cupynum.random: NumPy's numpy.random on the GPU.

Names defined here are native; any other numpy.random name runs through the host fallback
(see cupynum._fallback), so nothing in numpy.random is missing.
"""
from __future__ import annotations

import numpy as _np

from .._fallback import fallback_proxy as _fallback_proxy
from ._generator import *  # noqa: F401,F403  (native: cuRAND Philox on CUDA)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum.random' has no attribute {name!r}")
    return _fallback_proxy(_np.random, name, "cupynum.random")
