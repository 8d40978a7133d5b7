"""Moves of bytes: host <-> device transfers, and same-dtype copies between any layouts
that move raw units (``bit_copy``).

The kernel families (indexing, sorting) read and write host data through here; the dtype-
casting and transposing copies and the fills are ``copy_fill``'s, which builds on this module
(a module of its own, so that ``copy_fill`` may use the indexing module's transpose copy while
indexing uses these transfers, with no import circle).
"""
from __future__ import annotations

import numpy as np

from . import elementwise as ew
from . import memory
from .view import DeviceView, alias, dptr

_UNITS = (8, 4, 2, 1)  # bit-for-bit copies move the widest unit every operand allows


def _alloc(nbytes: int):
    return memory.get_pool().malloc(nbytes)


def from_host(host: np.ndarray):
    """A new device allocation holding ``host``'s bytes (C order)."""
    host = np.ascontiguousarray(host)
    buf = _alloc(host.nbytes)
    if host.nbytes:
        memory.memcpy_htod(buf.ptr, host)
    return buf


def to_host(a, out: np.ndarray | None = None) -> np.ndarray:
    """A new C-ordered NumPy array with ``a``'s values (waits for the device), or ``out``
    (C-contiguous, writeable, of ``a``'s shape and dtype) filled with them."""
    if out is None:
        if a._c_contig and 0 < a._size * a.dtype.itemsize <= memory.SMALL_READ:
            return memory.read_small(dptr(a), a._shape, a.dtype)  # (an element, a sum)
        out = np.empty(a._shape, a.dtype)
    if a._size == 0:
        return out
    if a._c_contig:
        memory.memcpy_dtoh(out, dptr(a))
        return out
    # A strided view: gather it into a contiguous device temporary first (one kernel,
    # at device bandwidth), then one D2H copy.
    tmp = DeviceView(_alloc(a._size * a.dtype.itemsize), a._shape, a.dtype)
    bit_copy(a, tmp)
    memory.memcpy_dtoh(out, dptr(tmp))
    return out


def write_host(a, host: np.ndarray) -> None:
    """``a[...] = host`` (``host`` already of ``a``'s shape; cast to its dtype)."""
    if a._size == 0:
        return
    host = np.ascontiguousarray(host, dtype=a.dtype)
    if a._c_contig:
        memory.memcpy_htod(dptr(a), host)
        return
    bit_copy(DeviceView(from_host(host), a._shape, a.dtype), a)


def bit_copy(src, dst) -> None:
    """Same-dtype copy between any layouts, moving raw units of the widest size (<= 8
    bytes) that divides the itemsize, both addresses and every stride: a float32 copy is a
    uint32 copy, a complex128 one moves two uint64 per element (a trailing dimension of 2,
    which collapse merges away when the element's units are contiguous).  No value is
    interpreted, so bool, NaN payloads and -0.0 survive, and 5 kernels serve all dtypes."""
    size = dst.dtype.itemsize
    ptr_bits = (dptr(src) | dptr(dst)) & 7
    # (a line's launcher serves every length: ew.exprs_launcher's any_length)
    line = len(dst._shape) == 1 and dst._size > 1
    key = (size, -1 if line else dst._shape, src._strides, dst._strides, ptr_bits)
    launch = _bit_copies.get(key)
    if launch is None and line:  # (a line of wide elements: a launcher per length)
        key = (size, dst._shape, src._strides, dst._strides, ptr_bits)
        launch = _bit_copies.get(key)
    if launch is None:
        bits = size | ptr_bits
        for st in src._strides + dst._strides:
            bits |= st
        unit = next(u for u in _UNITS if not bits & (u - 1) and u <= size)
        dt = np.dtype(ew._UNIT_CHARS[unit])
        k = size // unit
        tail, tail_st = ((), ()) if k == 1 else ((k,), (unit,))
        s2 = alias(src, src._shape + tail, dt, src._strides + tail_st)
        d2 = alias(dst, dst._shape + tail, dt, dst._strides + tail_st)
        launch = ew.exprs_launcher(ew.COPY, (s2,), (d2,))
        if len(_bit_copies) >= 1024:
            _bit_copies.clear()
        if getattr(launch, "any_length", False):
            key = (size, -1, src._strides, dst._strides, ptr_bits)
        _bit_copies[key] = launch
    launch((src,), (dst,))  # (the unit views' pointers are the arrays' own)


# bit_copy's launchers per (itemsize, shape (-1: a line of any length), strides, pointer
# alignment)
_bit_copies: dict = {}
