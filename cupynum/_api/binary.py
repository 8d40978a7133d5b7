"""NumPy's "Bit-wise operations" beyond the ufuncs: ``packbits`` and ``unpackbits`` as
device compositions (compare, shift, sum along a bit axis of 8), and ``binary_repr`` /
``base_repr``, which take Python integers only and are NumPy's own functions."""
from __future__ import annotations

import operator

import numpy as np
from numpy import base_repr, binary_repr

from .._indexing import normalize_axis
from . import creation, manipulation

__all__ = ["packbits", "unpackbits", "binary_repr", "base_repr"]

_UINT8 = np.dtype(np.uint8)


def _little(bitorder):
    """NumPy's bitorder parsing: a str starting with 'big' or 'little'."""
    if not isinstance(bitorder, str):
        raise TypeError(f"pack() argument 3 must be str, not {type(bitorder).__name__}")
    if bitorder.startswith("little"):
        return True
    if bitorder.startswith("big"):
        return False
    raise ValueError("'order' must be either 'little' or 'big'")


def _bit_axis(a, axis):
    """(array, axis) to work on: ``axis=None`` packs the flattened array; a 0-d array
    counts as 1-d."""
    if axis is None:
        return a.ravel(), 0
    axis = operator.index(axis)
    if a.ndim == 0:
        a = a.reshape(1)
    return a, normalize_axis(axis, a.ndim)


def _bit_weights(little, ndim_after):
    """The 8 place values of one byte, shaped to broadcast along a bit axis followed by
    ``ndim_after`` dimensions."""
    weights = 1 << np.arange(8, dtype=np.uint8)
    if not little:
        weights = weights[::-1]
    return creation.asarray(weights.reshape((8,) + (1,) * ndim_after))


def packbits(a, /, axis=None, bitorder="big"):
    """Bits (nonzero = 1) along ``axis`` packed into uint8, the last byte padded with zeros:
    the axis is split into (bytes, 8) and the weighted bits are summed."""
    a = creation.asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    little = _little(bitorder)
    a, axis = _bit_axis(a, axis)
    n = a.shape[axis]
    nbytes = -(-n // 8)
    before, after = a.shape[:axis], a.shape[axis + 1:]
    bits = a != 0
    if n % 8:  # the last byte's missing bits are zeros
        padded = creation.zeros(before + (nbytes * 8,) + after, bool)
        padded[(slice(None),) * axis + (slice(0, n),)] = bits
        bits = padded
    bits = bits.reshape(before + (nbytes, 8) + after)
    weighted = bits * _bit_weights(little, len(after))  # bool * uint8 -> uint8
    return weighted.sum(axis=axis + 1, dtype=_UINT8)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """Each uint8 along ``axis`` becomes 8 bits (shift right, and 1); ``count`` keeps the
    first bits (negative: drops from the end) or pads with zeros, as in NumPy."""
    a = creation.asarray(a)
    if a.dtype != _UINT8:
        raise TypeError("Expected an input array of unsigned byte data type")
    little = _little(bitorder)
    a, axis = _bit_axis(a, axis)
    nbits = a.shape[axis] * 8
    if count is not None:
        count = operator.index(count)
        if count < 0:
            if -count > nbits:
                raise ValueError("-count larger than number of elements")
            count += nbits
    before, after = a.shape[:axis], a.shape[axis + 1:]
    shifts = _bit_shifts(little, len(after))
    bits = (manipulation.expand_dims(a, axis + 1) >> shifts) & 1
    bits = bits.reshape(before + (nbits,) + after)
    if count is None or count == nbits:
        return bits
    out = creation.zeros(before + (count,) + after, _UINT8)
    keep = (slice(None),) * axis + (slice(0, min(count, nbits)),)
    out[keep] = bits[keep]
    return out


def _bit_shifts(little, ndim_after):
    shifts = np.arange(8, dtype=np.uint8)
    if not little:
        shifts = shifts[::-1]
    return creation.asarray(shifts.reshape((8,) + (1,) * ndim_after))
