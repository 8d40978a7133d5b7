"""cupynum.linalg: NumPy's numpy.linalg on the GPU.

Names defined here are native; any other numpy.linalg name runs through the host fallback
(see cupynum._fallback), so nothing in numpy.linalg is missing.
"""
from __future__ import annotations

import numpy as _np

from numpy.linalg import LinAlgError  # noqa: F401  (NumPy's class, not a copy)

from .._fallback import fallback_proxy as _fallback_proxy
from ._linalg import *  # noqa: F401,F403  (native: cuSOLVER / cuBLAS on CUDA)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum.linalg' has no attribute {name!r}")
    return _fallback_proxy(_np.linalg, name, "cupynum.linalg")
