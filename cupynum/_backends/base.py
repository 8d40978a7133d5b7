"""The backend boundary.

The frontend (ndarray, ufuncs, the ``_api`` modules) owns every NumPy semantic: type
resolution, broadcasting, output allocation, axis and index normalisation.  A backend
receives operations that are already resolved and only moves and computes bytes.

An array, as a backend sees it, is a cupynum ``ndarray`` whose fields it may read:
``_buf`` (the backend's own buffer object), ``_offset`` (bytes), ``_shape``, ``_strides``
(bytes, may be 0 or negative), ``dtype`` (a ``numpy.dtype``), ``_size``, ``_c_contig``.

Elementwise work is described by an ``ElementwiseOp``: which table op (a NumPy ufunc
name plus the C++ functor computing it), the loop dtypes NumPy resolved, and the dtypes
of the operands as they are stored.  Operands are arrays already broadcast to the output
shape (zero strides) or NumPy scalars of the loop dtype (passed by value).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Protocol, Sequence

import numpy as np


class ElementwiseOp(NamedTuple):
    """One elementwise launch: ``outs = functor(*ins)`` computed in the loop dtypes.

    ``ufunc``   NumPy ufunc name (host backend calls ``numpy.<ufunc>``); ``None`` for a cast.
    ``functor`` C++ functor in namespace ``cpn`` (kernels/), e.g. ``"add"``.
    ``loop``    tuple of loop dtype chars, inputs then outputs, as in ``numpy.add.types``
                (``"ff->f"`` becomes ``('f', 'f', 'f')``).
    ``nin``     number of inputs.
    """

    ufunc: str | None
    functor: str
    loop: tuple[str, ...]
    nin: int


class ReduceOp(NamedTuple):
    """One reduction or scan (``reduce`` / ``scan``): ``functor`` combines values in the loop
    dtype ``loop`` (a NumPy type char, the accumulator NumPy resolved).

    ``ufunc``    NumPy ufunc name (the host backend calls ``numpy.<ufunc>.reduce``).
    ``functor``  C++ functor in namespace ``cpn`` (kernels/), e.g. ``"add"``.
    ``loop``     the loop dtype char (canonical: ``l``/``L`` for 64-bit ints).
    ``neutral``  a NumPy scalar of the loop dtype that every combination may start from
                 (``-0.0`` for float sums, ``+inf`` for minimum, NaN for fmin...), or
                 ``None``: the op is combined strictly left to right (subtract, power...).
    """

    ufunc: str
    functor: str
    loop: str
    neutral: Any


class Backend(Protocol):
    name: str  # "host" or "cuda"

    # memory and transfer ----------------------------------------------------------
    def alloc(self, nbytes: int) -> Any:
        """A new buffer of ``nbytes`` bytes (contents undefined)."""

    def from_host(self, host: np.ndarray) -> Any:
        """A new buffer holding the bytes of the C-contiguous host array ``host``."""

    def to_host(self, a) -> np.ndarray:
        """A new C-contiguous NumPy array with the values of array ``a``."""

    def write_host(self, a, host: np.ndarray) -> None:
        """Copy the C-contiguous host array (same shape and dtype) into array ``a``."""

    def copy_bytes(self, buf, offset: int, nbytes: int) -> Any:
        """A new buffer holding the ``nbytes`` bytes of buffer ``buf`` from byte ``offset``
        (one element read out as an independent value: ``x = a[i, j]``)."""

    def copy(self, src, dst) -> None:
        """``dst[...] = src``: same shape (src may have zero strides), any dtypes, unsafe cast."""

    def fill(self, dst, value: np.generic) -> None:
        """Set every element of ``dst`` to ``value`` (a NumPy scalar of dst's dtype)."""

    # compute ----------------------------------------------------------------------
    def elementwise(self, op: ElementwiseOp, ins: Sequence, outs: Sequence) -> None:
        """Run ``op``; ``ins`` are arrays (broadcast to the outputs' shape) or NumPy
        scalars of the loop dtype; ``outs`` are arrays of the output shape."""

    def sqdev_sum(self, src, mean, out, axes) -> None:
        """var/std: ``out[...] = sum over axes of |src - mean|^2`` computed as NumPy does
        (``x = src - mean`` in src's dtype, then ``x*x`` or ``re*re + im*im``), summed in
        out's dtype.  ``src`` float32/64 or complex, non-empty; ``out`` C-contiguous, src's
        shape without ``axes`` (sorted), src's real dtype; ``mean`` C-contiguous, out's
        shape, src's dtype."""

    def synchronize(self) -> None:
        """Wait until all queued work on the current stream is done."""
