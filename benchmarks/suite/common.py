"""Shared helpers for the asv suite: the library, synchronisation, sizes and dtypes.

``CUPYNUM_BENCH_SIZES`` (comma-separated element counts) replaces the default sizes, e.g.
``CUPYNUM_BENCH_SIZES=1000,16777216,268435456`` for a GPU run.
"""
from __future__ import annotations

import os

import numpy

import cupynum as xp
from cupynum import _backends

DTYPES = ["float32", "float64"]


def _sizes(default):
    env = os.environ.get("CUPYNUM_BENCH_SIZES")
    return [int(s) for s in env.split(",")] if env else default


# On a GPU the sizes reach bandwidth-bound arrays.  On the host backend (a CPU: checking
# that the suite runs) there is one size per grid, so that ``asv run --quick``, which starts
# a fresh interpreter for every benchmark and parameter set, takes minutes.
ON_GPU = _backends.name() == "cuda"
SIZES = _sizes([1_000, 1_000_000, 2**24, 2**26] if ON_GPU else [100_000])
SMALL = [1, 1_000] if ON_GPU else [1_000]  # per-call overhead
MATRIX = [64, 512, 4096] if ON_GPU else [128]  # n x n for linalg
FFT_SIZES = [2**10, 2**16, 2**22] if ON_GPU else [2**12]
EXAMPLE_SIZES = ["small", "medium"] if ON_GPU else ["small"]


def sync():
    """Wait for the device: every timed function ends with this."""
    _backends.get().synchronize()


def backend():
    return _backends.name()


def host_random(n, dtype, seed=0):
    rng = numpy.random.default_rng(seed)
    dtype = numpy.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(n).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 1000, n).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.random(n) < 0.5


def device_random(n, dtype, seed=0):
    a = xp.asarray(host_random(n, dtype, seed))
    sync()
    return a


def square(n):
    """The side of a square matrix with about n elements."""
    return max(1, int(round(n ** 0.5)))
