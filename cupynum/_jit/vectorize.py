"""``cupynum.vectorize``: NumPy's ``vectorize``, run as one CUDA kernel when it translates.

A call translates the function for its arguments' dtypes (``translate.py``, cached per
signature), on every backend, so that what cannot be translated warns the same way
everywhere.  On a CUDA-memory backend the translated functor runs as one elementwise kernel
(``kernel.py``).  Otherwise, or when the function does not translate, or for what the
kernel path does not cover (``signature``, keyword arguments, several outputs, empty
inputs), NumPy's ``vectorize`` runs on host copies and its results come back as cupynum
arrays.

Types: the kernel computes as the function does on NumPy scalars of the arguments' dtypes
(NEP 50), which is what ``numpy.vectorize`` does for its first element; NumPy's loop then
calls the function on Python objects (floats as float64).  docs/guide/vectorize.md says
where the two differ.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _backends, _ops
from .._api.creation import asarray
from .._array import broadcast_view, fresh_array, ndarray
from .._shapes import _c_strides
from .._fallback import FallbackWarning, call_on_host
from . import translate as tr


class VectorizeFallbackWarning(FallbackWarning):
    """A vectorized function ran as ``numpy.vectorize`` on the host: it does not translate."""


def _arg_type(a):
    """The dtype a vectorized argument has for NumPy (``asanyarray``), or None."""
    if isinstance(a, (ndarray, np.ndarray, np.generic)):
        dt = a.dtype
    elif type(a) in (bool, int, float, complex):
        dt = np.asarray(a).dtype
    else:
        return None
    return dt if dt in _ops.SUPPORTED_DTYPES else None


class Cached:
    """Translations of one function, per (argument types, output type)."""

    def __init__(self, func, fuse=False):
        self.func, self.fuse = func, fuse
        self.entries = {}  # key -> (Translation, used names and values) or Untranslatable

    def get(self, arg_types, out_type=None):
        """The Translation, or raises Untranslatable / NeedsOutputType."""
        key = (tuple(arg_types), out_type)
        got = self.entries.get(key)
        if got is not None and not isinstance(got, Exception) and not _still(got[1], self.func):
            got = None  # a closure or global value it read has changed
        if got is None:
            try:
                got = tr.translate(self.func, list(arg_types), out_type, fuse=self.fuse)
            except tr.Untranslatable as e:
                got = e
            self.entries[key] = got
        if isinstance(got, Exception):
            raise got
        return got[0]


def _still(used, func) -> bool:
    """Whether the free names the translation read still hold the same values."""
    code, cells = func.__code__, func.__closure__ or ()
    free = dict(zip(code.co_freevars, cells))
    for name, value in used.items():
        try:
            now = free[name].cell_contents if name in free else func.__globals__.get(name, value)
        except ValueError:  # an empty cell
            return False
        if now is not value and not (type(now) is type(value) and now == value):
            return False
    return True


class vectorize(np.vectorize):
    """``numpy.vectorize`` whose function runs as a CUDA kernel (see the module doc)."""

    def __init__(self, pyfunc=np._NoValue, otypes=None, doc=None, excluded=None,
                 cache=False, signature=None):
        super().__init__(pyfunc, otypes=otypes, doc=doc, excluded=excluded, cache=cache,
                         signature=signature)
        self._translations = None
        self._warned = set()

    def __call__(self, *args, **kwargs):
        if self.pyfunc is np._NoValue:  # @vectorize(otypes=...) applied to the function
            return super().__call__(*args, **kwargs)
        out = self._native(args, kwargs)
        if out is not None:
            return out
        return call_on_host(super().__call__, args, kwargs)

    # the kernel path ---------------------------------------------------------------------
    def _native(self, args, kwargs):
        """The result computed by the translated function, or None (the host's turn)."""
        if self.signature is not None or kwargs or len(self.otypes or "x") != 1:
            return None
        types = []
        for i, a in enumerate(args):
            if i in self.excluded:  # (NumPy excludes by name only keyword arguments)
                # passed as it is: a Python scalar stays weak (a kernel argument by value)
                types.append(type(a) if type(a) in tr.WEAK else None)
            else:
                types.append(_arg_type(a))
        if not args or any(t is None for t in types):
            return None
        out_type = np.dtype(self.otypes[0]) if self.otypes else None
        if out_type is not None and out_type not in _ops.SUPPORTED_DTYPES:
            return None
        if out_type is None and any(np.size(a) == 0 for a in args):
            return None  # (NumPy refuses empty inputs without otypes: its error)
        if self._translations is None:
            self._translations = Cached(self.pyfunc)
        try:
            try:
                t = self._translations.get(types, out_type)
            except tr.NeedsOutputType:
                if not _backends.for_side(_backends.DEVICE).cuda_memory:
                    return None
                first = self._first_type(args, types)
                if first is None:
                    return None
                t = self._translations.get(types, first)
        except tr.Untranslatable as e:
            self._warn(e)
            return None
        if not _backends.for_side(_backends.DEVICE).cuda_memory:
            return None
        return _run_kernel(t, args)

    def _first_type(self, args, types):
        """The dtype of the function's result for the first element (NumPy's rule for the
        output type), or None where NumPy's vectorize should decide (empty inputs)."""
        shape = np.broadcast_shapes(*[np.shape(a) for a, t in zip(args, types)
                                      if isinstance(t, np.dtype)])
        if 0 in shape:
            return None
        firsts = []
        for a, t in zip(args, types):
            if not isinstance(t, np.dtype):
                firsts.append(a)  # (excluded: as it is)
            elif isinstance(a, ndarray):  # (one element read back, as NumPy's rule needs)
                firsts.append(t.type(a[(0,) * a.ndim].item() if a.ndim else a.item()))
            else:
                firsts.append(t.type(np.asarray(a).reshape(-1)[0]))
        with np.errstate(all="ignore"):
            try:
                dt = np.asarray(self.pyfunc(*firsts)).dtype
            except Exception:  # noqa: BLE001 - NumPy's vectorize raises it again
                return None
        return dt if dt in _ops.SUPPORTED_DTYPES else None

    def _warn(self, e):
        key = (e.construct, e.line)
        if key in self._warned:
            return
        self._warned.add(key)
        name = getattr(self.pyfunc, "__qualname__", repr(self.pyfunc))
        where = f"line {e.line} of {e.filename}" if e.line else "its definition"
        warnings.warn(f"cupynum.vectorize: {name} runs as numpy.vectorize on the host: "
                      f"{e.construct} ({where}) does not translate to a kernel",
                      VectorizeFallbackWarning, stacklevel=4)


def _run_kernel(t, vector):
    """Run translation ``t`` over the vectorized arguments: a new array of its output.

    The functor is an op like a table op (``kernel.op``), run by the device backend's
    elementwise engine: any strides and broadcasting, and fusion with the ops around it.
    Arguments whose data is on the host (small arrays, under placement ``auto``) are copied
    over and a small result comes back: one kernel and two copies cost less than Python
    calling the function once per element."""
    from . import kernel

    op = kernel.op(t)
    arrays, ins = [], []
    for a, c in zip(vector, t.in_chars):
        if isinstance(a, np.ndarray) and a.ndim:
            a = asarray(a)
        if isinstance(a, ndarray):
            arrays.append(a)
            ins.append(a)
        else:
            ins.append(np.dtype(c).type(np.asarray(a).reshape(()).item()))
    shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
    backend = _backends.for_arrays(*arrays) if arrays else _backends.for_new(0)
    from_host = not backend.cuda_memory
    if from_host:
        backend = _backends.for_side(_backends.DEVICE)
    ins = [broadcast_view(x, shape) if isinstance(x, ndarray) and x.shape != shape else x
           for x in ins]
    dt = np.dtype(t.out_char)
    size = math.prod(shape)
    out = fresh_array(shape, _c_strides(shape, dt.itemsize), dt, size, True,
                      sum(n != 1 for n in shape) <= 1 or size == 0, backend)
    backend.elementwise(op, ins, [out])
    if from_host and _backends.for_new(size * dt.itemsize) is not backend:
        _backends.place(out, _backends.HOST)
    return out
