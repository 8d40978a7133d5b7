"""Device views: what the CUDA backend knows about an array on the device.

A kernel, a copy or a library call needs five facts about an operand: its device address,
shape, byte strides (zero and negative allowed), dtype, and the allocation that keeps the
bytes alive (the *owner*).  Frontend arrays carry them as ``_buf`` / ``_offset`` /
``_shape`` / ``_strides`` / ``dtype``; ``DeviceView`` carries the same fields for the
backend's own temporaries and re-laid-out views (a column-major copy for cuSOLVER, a
transposed or unit-reinterpreted alias for a copy kernel), so every function of the backend
takes either.

``dptr`` is the one place that turns an array or a view into a device address,
``PTR_EXPR`` its text for the launchers that ``elementwise.contiguous_launcher`` generates
(``DIRECT_PTR_EXPR`` their first try, for data already on the device),
and ``owner_of`` the one place that takes an array's allocation to build a view over it.
An array holds its bytes in a ``Buffer`` (``_backends/buffer.py``), the device allocation in
its ``device`` slot; a view of a fresh temporary wraps the pool's ``DeviceBuffer`` in a
Buffer too, so every operand reads the same way.
"""
from __future__ import annotations

import numpy as np

from ..buffer import Buffer


def dptr(a) -> int:
    """The device address of the first element of array or view ``a``: its Buffer's device
    allocation (valid whenever it is set; else made valid by ``on_device``: a host-only
    buffer copied over, a pending one computed) plus the byte offset."""
    raw = a._buf.device
    return (a._buf.on_device() if raw is None else raw).ptr + a._offset


def owner_of(a):
    """The Buffer that array or view ``a`` reads (what a view over it keeps)."""
    return a._buf


# ``dptr(x)`` as source text, for generated launchers ('{0}' is the operand's name).
# (The walrus reads the Buffer's slot once: the launcher's local ``_d`` is scratch.)
PTR_EXPR = ("(_d if (_d := {0}._buf.device) is not None else {0}._buf.on_device()).ptr"
            " + {0}._offset")
# The same where the data is on the device; AttributeError where it is not (no device copy).
DIRECT_PTR_EXPR = "{0}._buf.device.ptr + {0}._offset"


def c_strides(shape, itemsize: int) -> tuple:
    """C-order byte strides for ``shape``, as NumPy's for arrays with elements; a
    zero-length axis counts as 1 (as in the frontend's ndarray), so that a zero-size
    array's strides still describe a C layout."""
    out, acc = [], itemsize
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def size_of(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


class DeviceView:
    """``shape`` elements of ``dtype`` at byte ``offset`` into ``owner`` (a Buffer, or a
    device allocation with a ``ptr``, which the view wraps in one), laid out by byte ``strides`` (C order when omitted).

    The fields are named as an ndarray's, so the backend reads a view and an array alike;
    ``ptr``, ``shape``, ``strides`` and ``owner`` are the readable names."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "dtype", "_size", "_c_contig",
                 "_f_contig")

    def __init__(self, owner, shape, dtype, strides=None, offset: int = 0):
        if not isinstance(owner, Buffer):  # a raw device allocation: held as a Buffer's
            owner = Buffer(None, owner)  # device copy (placement's Buffers are subclasses)
        dtype = np.dtype(dtype)
        shape = tuple(shape)
        c = c_strides(shape, dtype.itemsize)
        self._buf, self._offset, self._shape, self.dtype = owner, offset, shape, dtype
        self._strides = c if strides is None else tuple(strides)
        self._size = size = size_of(shape)
        self._c_contig = self._strides == c or size <= 1
        self._f_contig = False

    @classmethod
    def of(cls, a) -> "DeviceView":
        """A view of array (or view) ``a``: same owner, address, layout and dtype."""
        return cls(owner_of(a), a._shape, a.dtype, a._strides, a._offset)

    def alias(self, shape, dtype=None, strides=None, offset: int = 0) -> "DeviceView":
        """Another view over the same allocation: ``offset`` bytes further on, ``dtype``
        (default this view's), ``strides`` in bytes (default C order)."""
        return alias(self, shape, self.dtype if dtype is None else dtype, strides, offset)

    @property
    def ptr(self) -> int:
        return dptr(self)

    @property
    def owner(self):
        return self._buf

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def strides(self) -> tuple:
        return self._strides

    @property
    def nbytes(self) -> int:
        return self._size * self.dtype.itemsize

    def __repr__(self) -> str:
        return (f"DeviceView(ptr={self.ptr:#x}, shape={self._shape}, strides={self._strides}, "
                f"dtype={self.dtype})")


def alias(a, shape, dtype, strides, offset: int = 0) -> DeviceView:
    """A view over array (or view) ``a``'s allocation, ``offset`` bytes past ``a``'s start."""
    return DeviceView(owner_of(a), shape, dtype, strides, a._offset + offset)


def empty(shape, dtype, alloc) -> DeviceView:
    """A new C-contiguous view of ``shape`` over ``alloc(nbytes)`` (at least one byte)."""
    dtype = np.dtype(dtype)
    return DeviceView(alloc(max(size_of(shape) * dtype.itemsize, 1)), shape, dtype)
