"""Issue 20, item 7: arrays of the other byte order (``>f8``, common in data read from files)
are accepted and converted to native order on the way in; the values never change.  A dtype
that would reinterpret existing bytes in the other order (``view``, ``getfield``,
``ndarray(buffer=)``) is refused rather than silently converted (docs/differences.md)."""
import io

import numpy as np
import pytest

import cupynum as cp
from helpers import assert_same

SWAPPED = [">f8", ">f4", ">f2", ">i8", ">i4", ">i2", ">u8", ">u4", ">u2", ">c16", ">c8"]


def _swapped(code, shape=(2, 3)):
    return (np.arange(6).reshape(shape) - 2).astype(code)


@pytest.mark.parametrize("code", SWAPPED)
def test_asarray_converts_the_byte_order(code):
    host = _swapped(code)
    x = cp.asarray(host)
    assert x.dtype == host.dtype.newbyteorder("=") and x.dtype.isnative
    assert_same(x, host.astype(host.dtype.newbyteorder("=")))


@pytest.mark.parametrize("code", [">f8", ">i4", ">c16"])
def test_swapped_arrays_compute_like_numpy(code):
    host = _swapped(code)
    x = cp.asarray(host)
    native = host.astype(host.dtype.newbyteorder("="))
    assert_same(x + 1, native + 1)
    assert_same(x.sum(axis=0), native.sum(axis=0))
    assert_same(cp.asarray(host.T) * 2, native.T * 2)  # an F-ordered swapped array
    assert_same(cp.asarray(host[:, ::2]), native[:, ::2])


@pytest.mark.parametrize("code", [">f8", "<f8", ">i2", "=i2", ">c8"])
def test_swapped_dtype_arguments(code):
    native = np.dtype(code).newbyteorder("=")
    assert cp.zeros(3, dtype=code).dtype == native
    assert cp.array([1, 2], dtype=code).dtype == native
    assert_same(cp.arange(3).astype(code), np.arange(3).astype(native))
    assert_same(cp.asarray([1, 2], dtype=code), np.asarray([1, 2], dtype=native))


def test_swapped_data_from_files_and_buffers():
    host = np.linspace(0, 1, 5).astype(">f8")
    assert_same(cp.frombuffer(host.tobytes(), dtype=">f8"), host.astype("=f8"))
    f = io.BytesIO()
    np.save(f, host)
    f.seek(0)
    assert_same(cp.load(f), host.astype("=f8"))


def test_fallback_results_of_swapped_order_come_back_as_cupynum():
    res = cp.frombuffer(np.arange(3.0).astype(">f8").tobytes(), dtype=">f8")
    assert isinstance(res, cp.ndarray)
    got = cp.require(cp.arange(3.0), dtype=">f8")  # a fallback that returns '>f8'
    assert isinstance(got, cp.ndarray)
    assert_same(got, np.arange(3.0))


@pytest.mark.parametrize("make", [lambda: cp.arange(3.0).view(">f8"),
                                  lambda: cp.arange(3.0).getfield(">f4"),
                                  lambda: cp.ndarray((2,), dtype=">f8", buffer=cp.zeros(2))])
def test_reinterpreting_in_the_other_order_is_refused(make):
    with pytest.raises(TypeError, match="byte order"):
        make()
