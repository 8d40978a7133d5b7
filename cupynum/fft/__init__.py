"""cupynum.fft: NumPy's numpy.fft on the GPU.

Names defined here are native; any other numpy.fft name runs through the host fallback
(see cupynum._fallback), so nothing in numpy.fft is missing.
"""
from __future__ import annotations

import numpy as _np

from .._fallback import fallback_proxy as _fallback_proxy
from ._fft import *  # noqa: F401,F403  (native: cuFFT on CUDA)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum.fft' has no attribute {name!r}")
    return _fallback_proxy(_np.fft, name, "cupynum.fft")
