"""The ufuncs' hot paths: closures over one ufunc's caches for the calls that need no
general machinery (internals.md principle 6).

``hot_binary``, ``hot_unary`` and ``hot_inplace`` make the ndarray operators and a ufunc's
two- and one-input calls: C-contiguous arrays of one shape and Python scalars, no keywords
-> a lookup by dtypes and scalar types (two small dicts), then one call into a launcher the
backend prepared for that key, which allocates the output and launches (or defers it:
fusion).  Host data takes the host path (NumPy on the kept NumPy views); device data whose
Buffers are settled goes straight to the launch.  Everything else goes to the general path
the caller passes (``_ufunc``).  ``benchmarks/probes/percall_probe.py --fake`` times them
without a GPU.
"""
from __future__ import annotations

import struct

from . import _backends
from ._array import _c_strides, may_overlap, ndarray
from ._backends import fusion as _fusion, placement as _placement
from ._backends.buffer import SMALL
from ._backends.elements import Element
from ._host_path import (HOST_SCALARS, host_only_number, host_sized as _host_sized, host_view,
                         wrap_all, wrap_host)

SCALAR_TYPES = frozenset((int, float, complex, bool))  # the Python scalars of the hot paths
# A 0-d host operand of an op on a device array of its dtype goes in as its value, a Python
# scalar: NEP 50 gives the weak scalar the array's dtype, the loop the 0-d array's own
# would be, and the value converts back exactly, but from these (long double) dtypes.
_INEXACT_ITEMS = frozenset("gG")
PACK_ERRORS = (struct.error, OverflowError)  # the packer refused a Python scalar
LAUNCH = 1  # the launcher's place in a ``ufunc._fast`` entry (see ``ufunc._fast_entry``)
_new = object.__new__


def launch_new(entry, args, x):
    """Allocate the outputs (C-contiguous, x's shape) and launch the prepared kernel."""
    out_dtypes, launch, _, _ = entry
    outs = []
    for dt in out_dtypes:
        out = object.__new__(ndarray)
        nbytes = x._size * dt.itemsize
        out._buf = _backends.for_side("device").alloc(nbytes)  # (the launchers' side)
        out._offset = 0
        out._shape = x._shape
        out._strides = x._strides if dt.itemsize == x.dtype.itemsize else _c_strides(
            x._shape, dt.itemsize)
        out.dtype = dt
        out._size = x._size
        out._c_contig = True
        out._f_contig = x._f_contig
        out._base = None
        outs.append(out)
    if x._size:
        launch(args, outs, x._size)
    return outs[0] if len(outs) == 1 else tuple(outs)


def hot_binary(uf, fallback):
    """``binary(a, b)``: the hot path of a two-input call of ``uf`` (internals.md principle 6),
    as a closure so that a call reads its caches and helpers from cells, not attributes.
    C-contiguous arrays of one shape and Python scalars: two dict lookups keyed by dtypes
    and scalar types (no key tuple: a NumPy dtype hashes in ~50 ns, a tuple of them costs
    more than the two lookups), one call that allocates the output and launches
    (``launch.new``), one result object; everything else goes to ``fallback(a, b)``.
    The ndarray operators are such closures themselves (one Python frame less)."""
    by_arrays, by_array_scalar, by_scalar_array = uf._hot
    record = uf._hot_record
    scalar_types = SCALAR_TYPES
    host_scalars = HOST_SCALARS
    npf = uf._np
    wrap = wrap_host if uf.nout == 1 else wrap_all
    like = wrap_host if uf.nout == 1 else (lambda r, _: wrap_all(r))
    big, stays = _placement.HOST_UNPRICED_UPTO, _backends.stays_on_host  # (the ledger)
    threshold = _placement.THRESHOLD
    priced = _backends.stays_on_device  # (the ledger of device data)
    unpriced = _placement.UNPRICED_ABOVE  # (fixed at import, with the placement mode)

    def binary(a, b):
        if type(a) is ndarray:
            tb = type(b)
            buf = a._buf
            if settled := buf.settled:  # (device data: no host path, nothing pending)
                pass
            elif (raw := buf.host) is not None and (a._size <= big or stays(a)):  # host path
                try:  # (host_view's kept view, read inline)
                    ha = a._hv if a._hraw is raw else host_view(a)
                except AttributeError:
                    ha = host_view(a)
                if tb is ndarray:
                    raw = b._buf.host
                    if raw is not None and (b._shape == a._shape or _host_sized(a, b, threshold)):
                        try:
                            hb = b._hv if b._hraw is raw else host_view(b)
                        except AttributeError:
                            hb = host_view(b)
                        if b._c_contig and b._shape == a._shape:
                            return like(npf(ha, hb), a)  # (a's layout: wrap_host's like)
                        return wrap(npf(ha, hb))
                elif tb in host_scalars:
                    return like(npf(ha, b), a)
            elif buf.pending is not None and uf._row.comparison and tb in scalar_types and (
                    value := _backends.elements.to_host(a)) is not None:
                return wrap(npf(value, b))  # if a[i, j] > 0: one read, compared on the host
            if tb is ndarray:
                if settled and (other := b._buf.settled):
                    settled |= other  # (SMALL only when both are: buffer.py)
                else:
                    settled = 0
                    if not b._shape and buf.host is None and host_only_number(b):
                        value = host_view(b)[()]  # (see host_only_number)
                        if b.dtype == a.dtype and b.dtype.char not in _INEXACT_ITEMS:
                            return binary(a, value.item())  # (the same loop: see below)
                        return fallback(a, value)
                    if not a._shape and b._buf.host is None and host_only_number(a):
                        value = host_view(a)[()]
                        if a.dtype == b.dtype and a.dtype.char not in _INEXACT_ITEMS:
                            return binary(value.item(), b)
                        return fallback(value, b)
                if not (a._c_contig and b._c_contig) or b._shape != a._shape:
                    return fallback(a, b)
                k0, k1, index = a.dtype, b.dtype, by_arrays
            elif tb in scalar_types and a._c_contig:
                k0, k1, index = a.dtype, tb, by_array_scalar
            else:
                return fallback(a, b)
            x = a
        elif type(b) is ndarray and type(a) in host_scalars and b._buf.host is not None:
            return wrap(npf(a, host_view(b)))
        elif type(b) is ndarray and type(a) in scalar_types and b._c_contig:
            k0, k1, index = b.dtype, type(a), by_scalar_array
            x = b
            settled = b._buf.settled
        else:
            return fallback(a, b)
        inner = index.get(k0)
        rec = None if inner is None else inner.get(k1)
        if rec is None:
            rec = record(index, k0, k1)
        if rec is False:
            return fallback(a, b)
        run, itemsize, same_strides, conv, raw_ok, dt, now = rec
        if conv is not None and not raw_ok:  # scalars become NumPy scalars of the loop dtype
            c0, c1 = conv
            if c0 is not None:
                a = c0(a)
            if c1 is not None:
                b = c1(b)
        if run is None:  # several outputs
            return launch_new(uf._fast[key_of(index, uf._hot, k0, k1)], (a, b), x)
        n = x._size
        if settled and (n > unpriced or settled == SMALL):
            pass  # settled operands (small, or in an op large enough): the device, unpriced
        elif _backends._single is None and not priced(x, b if x is a else a):
            return fallback(a, b)  # (placement's ledger moved the data to the host)
        elif type(x._buf.pending) is Element or type(b) is ndarray and type(
                b._buf.pending) is Element:
            a, b = _backends.elements.sources(a, b)  # a[i, j] * 2 reads a[i, j] where it is
        if n < _fusion.MIN_ELEMENTS:
            run = now  # (fusion's size floor: the launcher that runs at once, no deferral)
        out = _new(ndarray)  # the result object, its slots set directly (no __init__ frame)
        out._offset = 0
        out._shape = x._shape
        out._strides = x._strides if same_strides else _c_strides(x._shape, itemsize)
        out.dtype = dt
        out._size = n
        out._c_contig = True
        out._f_contig = x._f_contig
        out._base = None
        if raw_ok:
            try:
                run(a, b, out, n, n * itemsize)  # the Python scalar is packed as it is
            except PACK_ERRORS:  # out of the slot's range: NumPy converts (or raises)
                a, b = _converted(conv, a, b)
                run(a, b, out, n, n * itemsize)
        else:
            run(a, b, out, n, n * itemsize)  # sets out._buf, then launches
        return out

    return binary


def key_of(index, hot, k0, k1):
    """The ``ufunc._fast`` key of ``index[k0][k1]`` (see ``hot_binary``)."""
    return (k1, k0, 1) if index is hot[2] else (k0, k1, 0)


def hot_unary(uf):
    """``unary(x)``: the hot path of a one-input call of ``uf`` (a C-contiguous array, no
    keywords), a closure like ``hot_binary``'s; the unary operators are this function."""
    index = uf._hot_unary
    record = uf._hot_unary_record
    fast = uf._fast
    call = uf._call

    npf = uf._np
    like = wrap_host if uf.nout == 1 else (lambda r, _: wrap_all(r))
    priced = _backends.stays_on_device  # (the ledger of device data)
    unpriced = _placement.UNPRICED_ABOVE

    def unary(x):
        if type(x) is ndarray:
            buf = x._buf
            raw = buf.host
            if raw is not None:  # the host path
                try:  # (host_view's kept view, read inline)
                    hx = x._hv if x._hraw is raw else host_view(x)
                except AttributeError:
                    hx = host_view(x)
                return like(npf(hx), x)
        if type(x) is ndarray and x._c_contig:
            rec = index.get(x.dtype)
            if rec is None:
                rec = record(x.dtype)
            if rec is not False and ((settled := buf.settled) and (
                    x._size > unpriced or settled == SMALL)
                    or _backends._single is not None or priced(x)):
                run, itemsize, same_strides, dt, now = rec
                if run is None:  # several outputs
                    return launch_new(fast[(x.dtype, 0)], (x,), x)
                n = x._size
                if n < _fusion.MIN_ELEMENTS:
                    run = now  # (as in binary)
                out = _new(ndarray)  # the result object, its slots set directly
                out._offset = 0
                out._shape = x._shape
                out._strides = x._strides if same_strides else _c_strides(x._shape, itemsize)
                out.dtype = dt
                out._size = n
                out._c_contig = True
                out._f_contig = x._f_contig
                out._base = None
                run(x, out, n, n * itemsize)  # sets out._buf, then launches
                return out
        return call((x,), {})

    return unary


def runners(out_dtypes, launch):
    """``(run, now)`` of a hot-path record: ``run(*ins, out, n, nbytes)`` sets ``out._buf`` and
    launches or defers (fusion); ``now`` never defers (results below fusion's size floor)."""
    if len(out_dtypes) != 1:
        return None, None
    run = getattr(launch, "new", None)
    if run is None:  # (a backend launcher without ``new``)
        backend = _backends.for_side("device")  # (the launchers' side)

        def run(*args):  # (x0, .., out, n, nbytes)
            out = args[-3]
            out._buf = backend.alloc(args[-1])
            if args[-2]:
                launch(args[:-3], (out,), args[-2])
    return run, getattr(run, "now", run)


def _converted(conv, a, b):
    c0, c1 = conv
    return (a if c0 is None else c0(a)), (b if c1 is None else c1(b))



def hot_inplace(uf, general):
    """``self op= other`` for a C-contiguous ``self`` and an operand of its shape (a
    C-contiguous array, exactly ``self`` or not sharing its buffer) or a Python scalar,
    when the loop's output dtype is ``self``'s: the contiguous launcher writes into
    ``self`` directly (``hot_binary``'s records), skipping the keyword call; everything
    else (casts, overlaps, broadcasting, out-of-range scalars) takes ``general``."""
    by_arrays, by_array_scalar, _ = hot = uf._hot
    record = uf._hot_record
    fast = uf._fast
    scalar_types = SCALAR_TYPES
    host_scalars = HOST_SCALARS
    npf = uf._np
    big, stays = _placement.HOST_UNPRICED_UPTO, _backends.stays_on_host
    priced = _backends.stays_on_device  # (the ledger of device data)
    unpriced = _placement.UNPRICED_ABOVE

    def inplace(self, other):
        if type(self) is not ndarray:
            return general(self, other)
        t = type(other)
        buf = self._buf
        raw = buf.host
        if raw is not None and (self._size <= big or stays(self)):
            # the host path: NumPy in place on the kept NumPy views
            if t is ndarray:
                oraw = other._buf.host
                try:
                    o = None if oraw is None else (
                        other._hv if other._hraw is oraw else host_view(other))
                except AttributeError:
                    o = host_view(other)
            else:
                o = other if t in host_scalars else None
            if o is not None:
                mirrored = False
                if buf.device is not None or buf.readers is not None:
                    mirrored = buf.will_write("host", self._size * self.dtype.itemsize)
                    raw = buf.host  # (the hook may have moved the data)
                else:
                    buf.version += 1  # Buffer.will_write(), its plain case inline
                try:
                    hv = self._hv if self._hraw is raw else host_view(self)
                except AttributeError:
                    hv = host_view(self)
                npf(hv, o, hv)  # (out positional: NumPy parses no keyword)
                if mirrored:  # (a small write into data on both sides updates both)
                    _backends.mirror(self, "host")
                return self
        # (settled data, in an op large enough or SMALL with a scalar or SMALL operand:
        # the device, unpriced; an operand not settled beside a large op would be priced to
        # the device all the same, stays_on_device's first test)
        if not self._c_contig or buf.pins is not None or (
                _backends._single is None and not (
                    (level := buf.settled) and (self._size > unpriced or level == SMALL and (
                        t is not ndarray or other._buf.settled == SMALL)))
                and not priced(self, other)):
            return general(self, other)
        if t is ndarray:
            if not other._c_contig or other._shape != self._shape or (  # (an overlap:
                    other._offset != self._offset and may_overlap(self, other)):  # a copy)
                return general(self, other)
            index, k1 = by_arrays, other.dtype
        elif t in scalar_types:
            index, k1 = by_array_scalar, t
        else:
            return general(self, other)
        k0 = self.dtype
        inner = index.get(k0)
        rec = None if inner is None else inner.get(k1)
        if rec is None:
            rec = record(index, k0, k1)
        if rec is False:
            return general(self, other)
        run, _, _, conv, raw_ok, dt, _ = rec  # (_hot_record's fields)
        if run is None or dt != k0:  # (several outputs; a result dtype other than self's)
            return general(self, other)
        b = other
        if conv is not None and not raw_ok and conv[1] is not None:
            b = conv[1](b)
        n = self._size
        if n:
            mirrored = False
            if buf.readers is None and buf.pending is None and buf.host is None:
                buf.version += 1  # Buffer.will_write(), its plain case inline
            elif buf.pending is not None and _backends.elements.op_in_place(
                    self, fast[key_of(index, hot, k0, k1)][LAUNCH], b, conv):
                return self  # an element read waits on: op(element, b) (a[i, j] += b)
            else:  # (the host copy goes, or a small write updates both)
                mirrored = buf.will_write("device", n * self.dtype.itemsize)
            try:
                fast[key_of(index, hot, k0, k1)][LAUNCH]((self, b), (self,), n)
            except PACK_ERRORS:  # a Python scalar out of the slot's range: NumPy's rules
                return general(self, other)
            if mirrored:
                _backends.mirror(self, "device")
        return self

    return inplace
