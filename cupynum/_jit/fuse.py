"""``cupynum.fuse``: CuPy's decorator, for code ported from CuPy.

The decorated function is written over cupynum ops (``cupynum.sqrt(x)``, operators, Python
scalars).  On a CUDA-memory backend it is translated once per signature (the arguments'
dtypes and ndims, and for Python scalars their kind: they are weak, NEP 50) into one
elementwise kernel, as ``vectorize`` translates; a reduction returned at the end
(``return cupynum.sum(y, axis=0)``) runs as the kernel followed by that reduction.  On
other backends, and when the function does not translate, the function runs as written,
op by op (its results are the same: the ops are cupynum's).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _backends, _ops
from .._array import ndarray
from . import translate as tr
from .vectorize import Cached, _run_kernel


def _arg_type(a):
    """A fuse argument's type: its dtype (arrays, NumPy scalars) or its Python type."""
    if isinstance(a, (ndarray, np.generic)):
        return a.dtype if a.dtype in _ops.SUPPORTED_DTYPES else None
    if type(a) in tr.WEAK:
        return type(a)
    return None


class Fusion:
    """The fused function: ``f(*args)`` (``kernel_name`` is accepted, as CuPy's is)."""

    def __init__(self, func, kernel_name=None):
        self.func, self.name = func, kernel_name or getattr(func, "__name__", "fused")
        self._translations = Cached(func, fuse=True)
        functools.update_wrapper(self, func)

    def __call__(self, *args):
        if not args or any(isinstance(a, np.ndarray) for a in args):
            return self.func(*args)
        arrays = [a for a in args if isinstance(a, ndarray)]
        backend = _backends.for_arrays(*arrays) if arrays else _backends.for_new(0)
        types = [_arg_type(a) for a in args]
        if not backend.cuda_memory or not arrays or any(t is None for t in types):
            return self.func(*args)
        try:
            t = self._translations.get(types)
        except (tr.Untranslatable, tr.NeedsOutputType):
            return self.func(*args)
        out = _run_kernel(t, args)
        if t.reduction is not None:
            reduce, extra, kw = t.reduction
            return reduce(out, *extra, **kw)
        return out

    def __repr__(self):
        return f"<cupynum.fuse {self.name}>"


def fuse(*args, **kwargs):
    """``@cupynum.fuse`` or ``@cupynum.fuse(kernel_name=...)``."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return Fusion(args[0])
    return lambda f: Fusion(f, *args, **kwargs)
