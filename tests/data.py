"""Sample data for the tests: reproducible per test, however tests are spread over workers.

A module keeps one ``rng`` that its data helpers draw from; ``reseed(rng, key)`` sets it to
a state derived from ``key`` (a test's node id or case name), and ``seed_each_test(rng)``
makes the autouse fixture that does so before every test of the module.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest


def reseed(rng: np.random.Generator, key: str) -> None:
    """Set ``rng`` to the state of ``default_rng(crc32(key))``."""
    rng.bit_generator.state = np.random.default_rng(zlib.crc32(key.encode())).bit_generator.state


def seed_each_test(rng: np.random.Generator):
    """An autouse fixture that reseeds ``rng`` from the node id of each test (assign it to a
    module-level name so that pytest finds it)."""

    @pytest.fixture(autouse=True)
    def _seed(request):
        """Each test draws the same data however tests are distributed over workers."""
        reseed(rng, request.node.nodeid)

    return _seed


def sample(rng: np.random.Generator, dtype, shape, ints=(-50, 50)):
    """Values of ``dtype``: bools half true, integers in ``[ints[0], ints[1])`` (from 0 for
    unsigned types), standard normal floats (real and imaginary parts for complex)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else ints[0]
        return rng.integers(lo, ints[1], shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)
