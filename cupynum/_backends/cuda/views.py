"""Where the CUDA backend reads an array's device address (its Buffer's device copy)."""
from __future__ import annotations


def dptr(a) -> int:
    """The device address of array ``a``'s first element: its Buffer's device allocation
    (valid whenever it is set, see ``_backends/buffer.py``) plus the array's byte offset."""
    return a._buf.device.ptr + a._offset
