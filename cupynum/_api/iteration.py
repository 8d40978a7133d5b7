"""Iteration helpers as NumPy has them: ``ndindex``, ``ndenumerate``, ``broadcast``,
``nditer`` and ``flatiter`` (the type of ``a.flat``), over cupynum arrays.

Values come out as cupynum values: an element of an array (``a[i, j]``), or, for ``nditer``,
a 0-d view of the element, through which ``op_flags=['readwrite']`` writes land in the
operand.  Each element is one read of the array; for whole-array work, use array operations.
"""
from __future__ import annotations

import numpy as np

from .._array import from_host, ndarray
from .._shapes import _prod
from .creation import asarray
from .manipulation import broadcast_to

__all__ = ["ndindex", "ndenumerate", "broadcast", "nditer", "flatiter"]

# The indices of a shape, in C order: NumPy's own object (it yields tuples of Python ints).
ndindex = np.ndindex

class _FlatIter:
    """``a.flat``: a flat, C-order view for iteration, indexing and assignment."""

    __slots__ = ("base",)

    def __init__(self, a):
        self.base = a

    def _flat(self):
        return self.base.reshape(-1)  # a view when a is C-contiguous, else a copy

    def __len__(self):
        return self.base._size

    def __iter__(self):
        return iter(self._flat())

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value):
        a = self.base
        flat = a.reshape(-1) if a._c_contig else a.copy().reshape(-1)
        flat[key] = self._repeated(flat, key, value)
        if not a._c_contig:  # not viewable flat: written into a C-order copy, now back
            a[...] = flat.reshape(a._shape)

    @staticmethod
    def _repeated(flat, key, value):
        """NumPy's flat assignment does not broadcast: the value's elements, flattened,
        repeat in order over the selected elements (so ``[]`` writes nothing)."""
        if isinstance(key, tuple) and not key:
            raise IndexError("Assigning to a flat iterator with a 0-D index is not supported")
        if isinstance(value, ndarray):
            v = value.astype(flat.dtype, copy=False)
        elif np.ndim(value) == 0:
            return value  # a scalar fills the selection as it is (no transfer)
        else:
            v = from_host(np.asarray(value, dtype=flat.dtype))
        if v.ndim == 0:
            return v
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            raise ValueError("Error setting single item of array.")
        shape = flat[key].shape
        n = _prod(shape)
        v = v.reshape(-1)
        if v._size == 0:
            return flat[key]  # writes the selected elements back unchanged
        if v._size != n:  # NumPy repeats the values over the selection
            v = v[from_host(np.arange(n, dtype=np.intp) % v._size)]
        return v.reshape(shape)

    def copy(self):
        return self.base.flatten()

    def __array__(self, dtype=None, copy=None):
        return self._flat().__array__(dtype)


flatiter = _FlatIter
ndarray.flat = property(_FlatIter, doc="A flat, C-order iterator over the array (``flatiter``).")


class ndenumerate:
    """``(index, a[index])`` for every element of ``a``, in C order."""

    def __init__(self, arr):
        self._array = asarray(arr)
        self._indices = np.ndindex(self._array.shape)

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._indices)
        return index, self._array[index]


class broadcast:
    """The broadcast of its operands: ``shape``, ``ndim``, ``size``, ``numiter``, ``iters``
    (one flat iterator per operand), and iteration over tuples of their elements."""

    def __init__(self, *args):
        if len(args) > 64:
            raise ValueError(f"Need at most 64 array objects, got {len(args)}")
        operands = [a.arrays if isinstance(a, broadcast) else (a,) for a in args]
        self._operands = [asarray(x) for group in operands for x in group]
        self.shape = np.broadcast_shapes(*(x.shape for x in self._operands))
        self._views = [broadcast_to(x, self.shape) for x in self._operands]
        self._indices = np.ndindex(self.shape)
        self.index = 0

    @property
    def arrays(self):
        return tuple(self._operands)

    @property
    def ndim(self):
        return len(self.shape)

    nd = ndim

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def numiter(self):
        return len(self._views)

    @property
    def iters(self):
        return tuple(v.flat for v in self._views)

    def reset(self):
        self._indices = np.ndindex(self.shape)
        self.index = 0

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._indices)
        self.index += 1
        return tuple(v[index] for v in self._views)


_READ_FLAGS = {"readonly"}
_WRITE_FLAGS = {"readwrite", "writeonly"}
_KNOWN_FLAGS = {"multi_index", "c_index", "f_index", "refs_ok", "zerosize_ok", "buffered",
                "grow_inner", "delay_bufalloc", "reduce_ok"}
_KNOWN_OP_FLAGS = _READ_FLAGS | _WRITE_FLAGS | {"allocate", "no_broadcast", "contig",
                                                "aligned", "nbo", "copy", "updateifcopy",
                                                "no_subtype", "arraymask", "writemasked",
                                                "overlap_assume_elementwise", "virtual"}


class nditer:
    """Element by element over broadcast operands, in C order: each step gives a 0-d view of
    the element of each operand (one operand: the view itself), which ``[...] = v`` writes
    through where the operand's ``op_flags`` say ``readwrite`` or ``writeonly``.

    Supported: ``flags`` ``multi_index``, ``c_index``, ``f_index`` (and the buffering and
    reference flags, which change nothing here), ``op_flags`` per operand, ``op_dtypes``
    for read-only operands (a cast copy), and ``itviews``/``operands``/``value``, ``reset``,
    ``iternext``, ``finished`` and use as a context manager.  ``external_loop`` and
    ``op_axes`` are not supported (they raise)."""

    def __init__(self, op, flags=None, op_flags=None, op_dtypes=None, order="K",
                 casting="safe", op_axes=None, itershape=None, buffersize=0):
        single = not isinstance(op, (tuple, list))
        ops = [op] if single else list(op)
        flags = list(flags or ())
        unknown = set(flags) - _KNOWN_FLAGS
        if unknown:
            raise ValueError(f"nditer: flags {sorted(unknown)} are not supported by cupynum")
        if op_axes is not None:
            raise ValueError("nditer: op_axes is not supported by cupynum")
        if op_flags is None:
            op_flags = [["readonly"]] * len(ops)
        elif op_flags and isinstance(op_flags[0], str):
            op_flags = [op_flags] * len(ops)
        if len(op_flags) != len(ops):
            raise ValueError("op_flags must be a tuple/list matching the number of ops")
        dtypes = op_dtypes if isinstance(op_dtypes, (tuple, list)) else [op_dtypes] * len(ops)
        self._writable = []
        arrays = []
        for x, fl, dt in zip(ops, op_flags, dtypes):
            fl = set(fl)
            if fl - _KNOWN_OP_FLAGS:
                raise ValueError(f"nditer: op_flags {sorted(fl - _KNOWN_OP_FLAGS)} unknown")
            writes = bool(fl & _WRITE_FLAGS)
            if x is None:
                raise ValueError("nditer: 'allocate' operands are not supported by cupynum")
            if writes and not isinstance(x, ndarray):
                raise ValueError("operand was flagged as writeable, but is not a cupynum "
                                 "array")
            a = asarray(x)
            if dt is not None and np.dtype(dt) != a.dtype:
                if writes:
                    raise TypeError("nditer: op_dtypes for a writeable operand needs "
                                    "buffering with write-back, which cupynum does not do")
                if not np.can_cast(a.dtype, dt, casting=casting):
                    raise TypeError(f"Iterator operand required copying or buffering, but "
                                    f"cannot cast {a.dtype} to {np.dtype(dt)} under "
                                    f"casting={casting!r}")
                a = a.astype(dt)
            arrays.append(a)
            self._writable.append(writes)
        self._single = single
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        if itershape is not None:
            shape = np.broadcast_shapes(shape, tuple(itershape))
        for a, writes in zip(arrays, self._writable):
            if writes and a.shape != shape:
                raise ValueError(f"non-broadcastable output operand with shape {a.shape} "
                                 f"doesn't match the broadcast shape {shape}")
        self.operands = tuple(arrays)
        self.itviews = tuple(broadcast_to(a, shape) if a.shape != shape else a for a in arrays)
        self.shape = shape
        self._flags = set(flags)
        self.reset()

    # position -------------------------------------------------------------------------
    def reset(self):
        self._indices = np.ndindex(self.shape)
        self._index = None
        self.iterindex = -1
        self.finished = self._advance() is None

    def _advance(self):
        try:
            self._index = next(self._indices)
        except StopIteration:
            self._index = None
            return None
        self.iterindex += 1
        return self._index

    def iternext(self):
        self.finished = self._advance() is None
        return not self.finished

    @property
    def multi_index(self):
        if "multi_index" not in self._flags:
            raise ValueError("Iterator is not tracking a multi-index")
        return self._index

    @property
    def index(self):
        if "c_index" in self._flags:
            return self.iterindex
        if "f_index" in self._flags:
            return int(np.ravel_multi_index(self._index, self.shape, order="F"))
        raise ValueError("Iterator does not have an index")

    @property
    def itersize(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def nop(self):
        return len(self.operands)

    @property
    def value(self):
        views = tuple(v[self._index + (Ellipsis,)] for v in self.itviews)
        return views[0] if self._single else views

    # iteration ------------------------------------------------------------------------
    def __iter__(self):
        return self

    def __next__(self):
        if self.finished:
            raise StopIteration
        value = self.value
        self.finished = self._advance() is None
        return value

    def __len__(self):
        return self.itersize

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Writes went straight into the operands: nothing to write back."""
