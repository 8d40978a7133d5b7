"""``empty``/``zeros``/``ones`` fast paths agree with NumPy on shapes, dtypes, flags, errors.

(Kept apart from test_launch_paths.py: that module's engine fixture patches the elementwise
engine for its whole module scope, and these tests must run on the real backend.)
"""
from __future__ import annotations

import numpy as np
import pytest

import cupynum as cp
from helpers import compare


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


@pytest.mark.parametrize("fill", [2.5, 7, -1, True, np.float32(1.5), 300])
@pytest.mark.parametrize("dtype", [None, "f4", np.int8, np.uint16, "c8", bool])
@pytest.mark.parametrize("order", ["C", "F"])
def test_full_of_a_number_matches_numpy(fill, dtype, order):
    """``full`` of a number where the array starts on the host is NumPy's ``full``: its
    dtype from the value, its conversions and its errors (300 into int8)."""
    compare(lambda xp: xp.full((2, 3), fill, dtype, order=order))


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[1],
                                  lambda a: a[:, ::2], lambda a: a[::-1]])
def test_copies_of_host_data_match_numpy(view, order):
    """``copy``, ``array`` and ``asarray`` of host data, and NumPy's fresh results
    (``arange``, ``linspace``, ``eye``), match NumPy's values, dtypes and layouts."""
    h = np.arange(12.0).reshape(3, 4)
    compare(lambda xp, a: (lambda r: (r, r.strides))(view(a).copy(order=order)), h)
    compare(lambda xp: (lambda r: (r, r.strides))(xp.array(view(h), order=order)))
    compare(lambda xp: xp.asarray(view(h)))
    compare(lambda xp: (xp.arange(7), xp.arange(1.0, 2.0, 0.25), xp.linspace(0, 1, 5),
                        xp.eye(3, k=1), xp.tri(3, dtype=np.int32)))


def test_a_new_arrays_first_write_allocates_numpys_array():
    """Under placement ``auto``, a new host-sized array is allocated at its first write
    through the whole array, as NumPy's own array of its shape and dtype, kept as its view
    (``_backends.host_for_new``); through a view of it, as the host backend's bytes."""
    from cupynum import _backends
    from cupynum._backends import placement

    if _backends._single is not None or placement.MODE != "auto":
        pytest.skip("placement auto allocates a new array at its first op")
    cur = cp.empty((3, 4), np.int32)
    cur[0, 1] = 5
    host = cur._buf.host
    assert type(host) is np.ndarray and host.dtype == cur.dtype and host.shape == (3, 4)
    assert cur._hv is host and int(cur[0, 1]) == 5
    part = cp.empty(6)[2:]
    part[0] = 1.0
    assert part._buf.host.dtype == np.uint8 and part._buf.host.nbytes == 48
    assert float(part[0]) == 1.0
