"""cupynum.random: NumPy's numpy.random on the GPU.

Names defined here are native; any other numpy.random name runs through the host fallback
(see cupynum._fallback), so nothing in numpy.random is missing.
"""
from __future__ import annotations

import numpy as _np

from .._fallback import fallback_proxy as _fallback_proxy
from ._generator import *  # noqa: F401,F403  (native: cuRAND Philox on CUDA)

# NumPy's seed sequence and bit generators, as they are: Generator accepts them and seeds its
# own Philox streams from them (the values differ from NumPy's streams; docs/differences.md).
from numpy.random import MT19937, PCG64, PCG64DXSM, SFC64, SeedSequence  # noqa: E402,F401


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'cupynum.random' has no attribute {name!r}")
    return _fallback_proxy(_np.random, name, "cupynum.random")
