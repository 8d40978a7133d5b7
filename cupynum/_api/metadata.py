"""Functions that read only shapes and dtypes: native, no copy, no device work."""
from __future__ import annotations

import numpy as np

from numpy import iterable  # noqa: F401 - asks only iter(y): a 0-d cupynum array says no
# NumPy's floating-point error settings: they govern the host backend and every computation
# NumPy does for cupynum; GPU kernels do not raise on them (docs/differences.md)
from numpy import (geterr, geterrcall, getbufsize, seterr, seterrcall,  # noqa: F401
                   setbufsize)

from .. import _backends
from .._array import may_overlap, ndarray
from .._indexing import normalize_axis

__all__ = ["shape", "ndim", "size", "result_type", "may_share_memory", "shares_memory",
           "can_cast", "min_scalar_type", "isscalar", "iscomplexobj", "isrealobj", "iterable",
           "geterr", "seterr", "geterrcall", "seterrcall", "getbufsize", "setbufsize",
           "einsum_path", "placement"]


def placement(x) -> str:
    """Where the data of cupynum array ``x`` is now: ``"host"``, ``"device"`` or ``"both"``
    (a cache state; ``x.device`` is the array's CUDA device whatever it is; see
    docs/guide/placement.md)."""
    if not isinstance(x, ndarray):
        raise TypeError(f"placement() takes a cupynum array, not {type(x).__name__}")
    return _backends.placement_of(x._buf)


def _stand_in(x):
    """A zero-stride host array of ``x``'s shape and dtype (no data): what NumPy needs from
    an operand whose values it does not read."""
    if isinstance(x, ndarray):
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return x


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction planner: it reads shapes only, so it runs on stand-ins."""
    return np.einsum_path(subscripts, *[_stand_in(x) for x in operands], optimize=optimize,
                          einsum_call=einsum_call)


def _meta(x):
    """What NumPy's dtype machinery should see: an array's dtype, or the object itself."""
    return x.dtype if isinstance(x, ndarray) else x


def shape(a):
    return a.shape if isinstance(a, ndarray) else np.shape(a)


def ndim(a):
    return a.ndim if isinstance(a, ndarray) else np.ndim(a)


def size(a, axis=None):
    if isinstance(a, ndarray):
        if axis is None:
            return a.size
        return a.shape[normalize_axis(axis, a.ndim)]
    return np.size(a, axis)


def result_type(*arrays_and_dtypes):
    return np.result_type(*[_meta(x) for x in arrays_and_dtypes])


def can_cast(from_, to, casting="safe"):
    return np.can_cast(_meta(from_), to, casting=casting)


def min_scalar_type(a):
    if isinstance(a, ndarray):
        return np.min_scalar_type(a.get()) if a.ndim == 0 else a.dtype
    return np.min_scalar_type(a)


def may_share_memory(a, b, max_work=None):
    if isinstance(a, ndarray) and isinstance(b, ndarray):
        return may_overlap(a, b)
    return False


def shares_memory(a, b, max_work=None):
    """Exact answer from NumPy's solver, run on stand-in host views that have the same
    offsets and strides over an anonymous mapping of the buffer's size (no data copied)."""
    if not may_share_memory(a, b):
        return False
    import mmap

    nbytes = max(_extent(a), _extent(b))
    with mmap.mmap(-1, nbytes) as mm:
        va = np.ndarray(a.shape, a.dtype, buffer=mm, offset=a._offset, strides=a.strides)
        vb = np.ndarray(b.shape, b.dtype, buffer=mm, offset=b._offset, strides=b.strides)
        result = np.shares_memory(va, vb, max_work=max_work)
        del va, vb
    return result


def _extent(a):
    hi = a._offset + a.dtype.itemsize
    for n, s in zip(a.shape, a.strides):
        if s > 0:
            hi += (n - 1) * s
    return hi


def isscalar(element):
    return np.isscalar(element)


def iscomplexobj(x):
    return _meta(x).kind == "c" if isinstance(x, ndarray) else np.iscomplexobj(x)


def isrealobj(x):
    return not iscomplexobj(x)
