"""Copies and fills of device arrays and views: host <-> device, device <-> device in any
layouts (with NumPy's unsafe cast), and fills with one value.

Every module of the backend that copies data comes here (the backend's ``copy`` / ``fill`` /
``to_host`` / ``write_host`` are these functions; cuBLAS, cuSOLVER and cuFFT wrappers
re-lay their operands out through ``copy``), so this module imports no library wrapper and
no backend object.
"""
from __future__ import annotations

import numpy as np

from . import elementwise as ew
from . import memory
from .transfers import bit_copy, from_host, to_host, write_host
from .view import alias, dptr

__all__ = ["from_host", "to_host", "write_host", "copy", "fill", "bit_copy"]


def copy(src, dst) -> None:
    """``dst[...] = src`` with NumPy's unsafe cast; src may have zero strides."""
    if dst._size == 0:
        return
    if src.dtype == dst.dtype:
        if src._c_contig and dst._c_contig:  # (slice assignment's hot path: flat)
            d, s = dst._buf.device, src._buf.device  # (dptr, inline where both are set)
            memory.memcpy_dtod(dptr(dst) if d is None else d.ptr + dst._offset,
                               dptr(src) if s is None else s.ptr + src._offset,
                               dst._size * dst.dtype.itemsize)
            return
        from .indexing import try_transpose_copy

        if try_transpose_copy(src, dst):  # innermost axes differ: 32x32 smem tiles
            return
        bit_copy(src, dst)
        return
    ew.run(ew.COPY, (src,), (dst,))


def fill(dst, value) -> None:
    """``dst[...] = value`` (a scalar, cast to ``dst``'s dtype)."""
    if dst._size == 0:
        return
    t = dst.dtype.type
    value = value if type(value) is t else t(value)
    raw = value.tobytes()
    if dst._c_contig and raw.count(raw[:1]) == len(raw):  # zeros, -1, True, ...
        memory.memset_d8(dptr(dst), raw[0], dst._size * dst.dtype.itemsize)
        return
    # Write the value's bits as an unsigned int of its size (NaN payloads and -0.0
    # kept, 5 kernels for all dtypes), when every address is aligned for that unit.
    size = dst.dtype.itemsize
    bits = dptr(dst)
    for st in dst._strides:
        bits |= st
    if size <= 8 and not bits & (size - 1):
        u = np.dtype(ew._UNIT_CHARS[size])
        if not dst._shape:  # one element (a[i, j] = v): a launcher kept per unit
            launch = _element_fills.get(size)
            if launch is None:
                launch = _element_fills[size] = ew.exprs_launcher(
                    ew.COPY, (value.view(u.type),), (alias(dst, (), u, ()),))
            launch((value.view(u.type),), (dst,))  # (dst's pointer is its alias's)
            return
        dst = alias(dst, dst._shape, u, dst._strides)
        value = value.view(u.type)
    ew.run(ew.COPY, (value,), (dst,))


_element_fills: dict = {}  # itemsize -> the launcher filling one element with a unit value
