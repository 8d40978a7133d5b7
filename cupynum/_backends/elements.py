"""Element reads of device data that wait: ``x = a[i, j]`` on the device.

Selecting one element of device data gives a new 0-d array, an independent value
(internals.md principle 2).  Copying the element at once costs a device copy per read, and
the statements that loops are made of read an element only to convert it (``float(a[i, j])``,
``if a[i, j] > 0``), to store it back changed (``a[i, j] += b``: Python's augmented
assignment is ``t = a[i, j]; t += b; a[i, j] = t``) or not at all.  So the new array's
Buffer is pending on an ``Element``: the value of element ``offset`` of Buffer ``src``, not
read yet.  The Element is one of ``src``'s ``readers`` (fusion.py), so a write to ``src``
computes it first (``compute``: a copy of the element into the 0-d array's own
allocation, before the write, on the same stream); every other read of the pending Buffer
computes it too (``Buffer.on``, through fusion's ``materialize``).  Until then:

* a host read (``to_host``: ``float(x)``, ``bool(x)``, ``x.get()``, printing, and a
  comparison with a Python scalar, which NumPy then computes) copies the element straight
  from ``src`` to the host, one device-to-host copy;
* an in-place op on it (``op_in_place``: ``t += b`` with a scalar or a 0-d device operand)
  waits too: the Element becomes ``op(src element, other)``, ``other`` protected as
  ``src`` is (its Buffer's readers);
* storing such a value back into the element it was read from (``store``: the end of
  ``a[i, j] += b``) runs the op in place there, one launch, and the 0-d array becomes a
  pending read of the new value.

An Element keeps ``src`` (and an operand's Buffer) alive until it is computed, as a CuPy
0-d view keeps its base; when the device pool runs out of memory, every live Element is
computed (``flush_for_memory``) before the allocation is tried again.  Elements are made only where the backend allows
(``Backend.lazy_reads``: on CUDA while the current stream is the legacy default stream)
and never over exported data (``pins``: it may be written where no write point sees it).
"""
from __future__ import annotations

import weakref

import numpy as np

from .fusion import Leaf
from .fusion import _lock  # (one lock with fusion's evaluation: either may run the other)

_PRUNE_AT = 64  # as fusion's: a readers set is pruned at this size and its doublings
# Weak references to the Elements made since the last sweep, for ``flush_for_memory``.
_live: list = []
_SWEEP_AT = 4096
_sweep_at = _SWEEP_AT
_flushing = False


class Element:
    """The pending value of a 0-d Buffer: element ``offset`` (bytes) of Buffer ``src`` as
    ``dtype``, or, with ``launch`` set, ``launch``'s op applied to it and ``other`` (a
    scalar of the loop dtype or a ``Leaf``).  ``out``: a weak reference to the Buffer it
    is the value of; ``result``: None until computed (fusion's write hook computes the
    readers whose ``result`` is None)."""

    __slots__ = ("src", "offset", "dtype", "backend", "launch", "other", "out", "result",
                 "__weakref__")
    # fusion.py's defer and sink compare a pending input's layout with these: never equal,
    # so they compute an Element rather than inline it
    _strides = _shape = None

    def leaf(self) -> Leaf:
        """The element in ``src``, as a 0-d view."""
        return Leaf(self.src, self.offset, (), (), self.dtype, 1, True, True)

    def compute(self) -> None:
        """Give the Buffer its value on the device (a copy of the element, or the op's
        launch into a new allocation); nothing if it is gone or has its value already."""
        with _lock:
            buf = self.out()
            if buf is None or buf.pending is not self:
                self.src = self.other = self.launch = None
                self.result = _DONE
                return
            size = self.dtype.itemsize
            if self.launch is None:
                new = self.backend.copy_bytes(self.src, self.offset, size)
            else:
                new = self.backend.alloc(size)
                self.launch((self.leaf(), self.other),
                            (Leaf(new, 0, (), (), self.dtype, 1, True, True),), 1)
            buf.device = new.device
            self._done(buf)

    def _done(self, buf) -> None:
        buf.pending = None
        self.result = _DONE
        self.src = self.other = self.launch = None


class _Done:
    """The ``result`` of a computed Element (fusion's write hook reads ``result._buf`` of a
    computed reader: the value of an Element lives in a Buffer of its own)."""

    _buf = None


_DONE = _Done()


def _register(buf, e, ref=None) -> None:
    """Make Element ``e`` one of ``buf``'s readers (a write to ``buf`` computes it first)."""
    if ref is None:
        ref = weakref.ref(e)
    readers = buf.readers
    if readers is None:
        buf.readers = {ref}
        return
    readers.add(ref)
    k = len(readers)
    if k >= _PRUNE_AT and not k & (k - 1):  # at powers of two: amortised O(1)
        for r in [r for r in readers if (n := r()) is None or n.result is not None]:
            readers.discard(r)


def read(backend, src, offset: int, dtype, out) -> None:
    """Make Buffer ``out`` (new, empty) the pending value of element ``offset`` of ``src``
    (device data: allocated or pending) as ``dtype``."""
    e = Element()
    e.src, e.offset, e.dtype, e.backend = src, offset, dtype, backend
    e.launch = e.other = e.result = None
    e.out = weakref.ref(out)
    out.pending = e
    ref = weakref.ref(e)
    _register(src, e, ref)
    _live.append(ref)
    if len(_live) >= _sweep_at:
        _sweep()


def _sweep() -> None:
    """Drop the references to Elements that are gone or computed (and sweep again when the
    live ones have doubled)."""
    global _sweep_at
    _live[:] = [r for r in _live if (e := r()) is not None and e.result is None]
    _sweep_at = max(_SWEEP_AT, 2 * len(_live))


def flush_for_memory() -> bool:
    """Compute every live pending Element (the device pool is out of memory: the sources
    and operands they keep alive may then go); False when there was none, or when this is a
    nested call (an allocation of that very flush failed)."""
    global _flushing
    if _flushing:
        return False
    live = [e for r in _live if (e := r()) is not None and e.result is None]
    _live.clear()
    if not live:
        return False
    _flushing = True
    try:
        for e in live:
            e.compute()
    finally:
        _flushing = False
    return True


def plain(a):
    """The Element whose value array ``a`` is, as a whole (a 0-d array or a view of all of
    it in its dtype), when it is a pending read with no op; else None."""
    buf = getattr(a, "_buf", None)
    e = None if buf is None else buf.pending
    if type(e) is Element and e.launch is None and a._offset == 0 and a._size == 1 and (
            a.dtype == e.dtype):
        return e
    return None


def source_view(a):
    """The element that ``a``, the whole of a plain pending read, reads, as a 0-d view of
    its source (its fields read once: another thread may compute it meanwhile); None for
    any other array or operand."""
    e = plain(a)
    src = None if e is None else e.src
    return None if src is None else Leaf(src, e.offset, (), (), e.dtype, 1, True, True)


def sources(a, b) -> tuple:
    """What a two-input op may read instead of ``a`` and ``b``: the element where it is,
    for the whole of a plain pending read (the op is launched or deferred now, before any
    write to the source, which readers would see), else the operand itself."""
    va, vb = source_view(a), source_view(b)
    return a if va is None else va, b if vb is None else vb


def to_host(a):
    """``a``'s values as a new NumPy array, read straight from the element's source (one
    device-to-host copy; ``a`` stays a pending read), or None where ``a`` is not the whole
    of a plain pending read (the caller reads it the usual way)."""
    e = plain(a)
    src = None if e is None else e.src  # (read once: another thread may compute it)
    if src is None:
        return None
    value = e.backend.to_host(Leaf(src, e.offset, (), (), e.dtype, 1, True, True))
    return value if not a._shape else value.reshape(a._shape)


_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
# Python scalar type -> the loop types NumPy converts it to exactly or with OverflowError
# (never rounding to inf with a warning, which must happen at the statement)
_EXACT = {float: (np.float64, np.complex128), complex: (np.complex128,),
          int: _INTS + (np.float64, np.complex128),
          bool: (np.bool_,) + _INTS + (np.float16, np.float32, np.float64, np.complex64,
                                      np.complex128)}


def op_in_place(x, launch, other, conv=None) -> bool:
    """``x op= other`` where ``x``'s data is a plain pending read, kept pending as
    ``op(element, other)`` (``launch``: the op's contiguous launcher, output dtype
    ``x``'s).  ``other``: a scalar (``conv``: the converters of the hot path, for a Python
    scalar) or a 0-d array of device data (a pending read of one is read at its source);
    False where it must run now."""
    e = plain(x)
    buf = x._buf
    if e is None or buf.readers is not None:  # (its own readers would need the old value)
        return False
    ob = getattr(other, "_buf", None)
    if ob is None:
        if not isinstance(other, np.generic):
            to = None if conv is None else conv[1]
            if to not in _EXACT.get(type(other), ()):
                return False  # (a conversion that may round to inf and warn: at once)
            try:  # NumPy's conversion, as the launch would pack it (exact, or it raises)
                other = to(other)
            except OverflowError:
                return False
        operand, obuf = other, None
    else:
        if ob is buf or other._size != 1:
            return False
        operand = source_view(other)
        if operand is not None:
            obuf = operand._buf
        elif (ob.device is not None and ob.pending is None and ob.host is None
              and ob.pins is None):
            operand, obuf = Leaf(ob, other._offset, (), (), other.dtype, 1, True, True), ob
        else:
            return False
    with _lock:
        if buf.pending is not e:
            return False
        e.launch, e.other = launch, operand
        if obuf is not None and obuf is not e.src:
            _register(obuf, e)
        buf.version += 1  # (a write to x: Buffer.will_write's plain case)
    return True


def store(dst, offset: int, value) -> bool:
    """``dst[key] = value`` for the element at byte ``offset`` of ``dst`` where ``value`` is
    the whole of a pending value read from ``dst``: the pending ``op(element, other)`` of
    that very element (``a[i, j] += b``) runs in place there, one launch, and ``value``
    becomes a pending read of the new element; a plain read of another element
    (``a[i, j] = a[i, j-1]``) is copied from there, one copy, and stays a pending read; a
    read of that very element writes nothing.  False otherwise."""
    e = value._buf.pending
    buf = dst._buf
    if type(e) is not Element or e.src is not buf or value._offset or value._size != 1 \
            or value.dtype != e.dtype or dst.dtype != e.dtype \
            or buf.host is not None or buf.device is None:
        return False
    size = e.dtype.itemsize
    if e.launch is None:
        if e.offset == offset:
            return True  # (the value is the element's own)
        if abs(e.offset - offset) < size:
            return False
    elif e.offset != offset:
        return False
    with _lock:
        if value._buf.pending is not e or e.src is not buf:
            return False
        readers = buf.readers
        if readers is not None:
            readers.discard(weakref.ref(e))  # (the write below must not compute it)
            for r in readers:
                if r() is not None:
                    break
            else:  # (only dead ones, as the operand read a[i, j-1] of a[i, j] += a[i, j-1])
                buf.readers = None
        target = Leaf(buf, offset, (), (), e.dtype, 1, True, True)
        buf.will_write("device", size)  # (device data only: no copy to mirror)
        if e.launch is None:
            e.backend.copy(e.leaf(), target)
        else:
            e.launch((target, e.other), (target,), 1)
            e.launch = e.other = None
        _register(buf, e)
    return True
