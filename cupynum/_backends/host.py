"""The host backend: NumPy over strided views of host byte buffers.

It exists so that every frontend path (views, strides, broadcasting, promotion, indexing,
fallbacks) runs and is tested on machines without a GPU.  A buffer is a 1-D uint8 NumPy
array; an array's data is the NumPy view (buffer, offset, shape, strides, dtype).
"""
from __future__ import annotations

import numpy as np

from .base import ElementwiseOp

_ALIGN = 64


def view(a) -> np.ndarray:
    """The NumPy view of array ``a``'s elements (no copy)."""
    if not a._size:  # an empty view's offset may lie past its buffer's end
        return np.empty(a._shape, a.dtype)
    return np.ndarray(a._shape, a.dtype, buffer=a._buf, offset=a._offset, strides=a._strides)


class _Buffer(np.ndarray):
    """A uint8 ndarray that also answers ``.ptr`` (its address), like a device buffer."""

    @property
    def ptr(self) -> int:
        return self.__array_interface__["data"][0]


def _alloc(nbytes: int) -> np.ndarray:
    # Over-allocate and slice so the data is 64-byte aligned, as device memory is.
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = (-raw.ctypes.data) % _ALIGN
    return raw[start : start + nbytes].view(_Buffer)


class HostBackend:
    name = "host"

    def alloc(self, nbytes: int):
        return _alloc(nbytes)

    def from_host(self, host: np.ndarray):
        buf = _alloc(host.nbytes)
        if host.nbytes:
            buf[:] = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
        return buf

    def to_host(self, a) -> np.ndarray:
        return np.array(view(a), order="C", copy=True)

    def write_host(self, a, host: np.ndarray) -> None:
        view(a)[...] = host

    def copy(self, src, dst) -> None:
        np.copyto(view(dst), view(src), casting="unsafe")

    def fill(self, dst, value) -> None:
        view(dst).fill(value)

    def elementwise(self, op: ElementwiseOp, ins, outs) -> None:
        args = [view(x) if hasattr(x, "_buf") else x for x in ins]
        res = [view(o) for o in outs]
        _run_ufunc(op, args, res)

    def contiguous_launcher(self, op: ElementwiseOp, operand_dtypes):
        def launch(ins, outs, n):
            args = [view(x) if hasattr(x, "_buf") else x for x in ins]
            _run_ufunc(op, args, [view(o) for o in outs])

        return launch

    def synchronize(self) -> None:
        pass


def _run_ufunc(op: ElementwiseOp, args, res) -> None:
    if op.ufunc is None:  # a cast
        np.copyto(res[0], args[0], casting="unsafe")
        return
    if op.ufunc == "where":  # select: out = cond ? a : b (not a NumPy ufunc)
        np.copyto(res[0], np.where(*args), casting="unsafe")
        return
    uf = getattr(np, op.ufunc)
    sig = tuple(np.dtype(c) for c in op.loop)
    # The loop was resolved by the frontend; NumPy casts the operands into it, like a kernel.
    with np.errstate(all="ignore"):
        try:
            uf(*args, out=tuple(res), signature=sig, casting="unsafe")
        except TypeError:  # loops NumPy resolves but will not take as a signature (int64 == uint64)
            uf(*args, out=tuple(res), casting="unsafe")
