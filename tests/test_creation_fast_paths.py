"""``empty``/``zeros``/``ones`` fast paths agree with NumPy on shapes, dtypes, flags, errors.

(Kept apart from test_launch_paths.py: that module's engine fixture patches the elementwise
engine for its whole module scope, and these tests must run on the real backend.)
"""
from __future__ import annotations

import numpy as np
import pytest

import cupynum as cp


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
@pytest.mark.parametrize("shape", [0, 5, (), (3,), (2, 3), (1, 4), (2, 0, 3), (1, 1, 5),
                                   np.int64(4), (np.int32(2), 3), [2, 3]])
@pytest.mark.parametrize("dtype", [None, "f4", np.int8, np.dtype("c8"), bool])
@pytest.mark.parametrize("order", ["C", "F"])
def test_creation_fast_paths_match_numpy(fn, shape, dtype, order):
    got = getattr(cp, fn)(shape, dtype, order=order)
    want = getattr(np, fn)(shape, dtype, order=order)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.size:  # (NumPy gives an empty array zero strides; cupynum keeps C strides)
        assert got.strides == want.strides
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (
        want.flags.c_contiguous, want.flags.f_contiguous)
    if fn != "empty":
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
def test_creation_fast_paths_raise_as_numpy(fn):
    for shape, exc in [(-1, ValueError), ((2, -1), ValueError), (2.5, TypeError),
                       ((2, 1.5), TypeError), ("3", TypeError)]:
        with pytest.raises(exc):
            getattr(np, fn)(shape)
        with pytest.raises(exc):
            getattr(cp, fn)(shape)
    with pytest.raises(TypeError):
        getattr(cp, fn)(3, [("a", "f4")])  # an unhashable dtype spelling
    with pytest.raises(TypeError):
        getattr(cp, fn)(3, "U4")  # a dtype cupynum cannot store
    with pytest.raises(ValueError):
        getattr(cp, fn)(3, order="Z")
