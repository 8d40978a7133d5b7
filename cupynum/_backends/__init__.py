"""Backend selection: the backend of each op, chosen from where its operands' data lives.

The frontend asks ``for_arrays(*operands)`` (an op on existing arrays) or
``for_new(nbytes)`` (a new array); ``get()`` is only their implementation detail: the
process's device backend, created on first use.  ``CUPYNUM_BACKEND=auto`` (the default)
picks CUDA only when a driver and a GPU are present; the probe runs once and never raises
(see ``cuda/driver.py``).  ``host`` is NumPy over host memory; ``simulated`` is a device
backend without a GPU (simulated.py).  What a backend does is stated in base.py, the
contract every backend implements.  With a device backend, placement (placement.py and
docs/guide/placement.md) decides per op which of it and the host backend runs it.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import _config
from . import buffer, elements, fusion, placement
from .buffer import DEVICE, HOST, LARGE, SMALL

_new_object = object.__new__

_chaos = None  # CUPYNUM_PLACEMENT=random: moves operands at random before each op
_placing = False  # whether placement's Buffer hooks run (a device backend exists)

_backend = None
_host = None  # the host backend, once asked for (the process's backend when it is host)
# The backend of every op when placement does not apply (the host backend as the process's
# backend, or CUPYNUM_PLACEMENT=device): set by ``get()``; None while placement decides.
_single = None
# The backend of an op over settled operands (``Buffer.settled``) of more than
# ``placement.UNPRICED_ABOVE`` elements, what ``_place`` decides for it (the device backend;
# set by ``get()``): the frontend's hot paths read it instead of asking.
for_settled = None


class _One:
    """An operand of one element of a Buffer, at byte ``_offset`` (what an element read
    touches)."""

    __slots__ = ("_buf", "_offset")
    _size = 1

    def __init__(self, buf, offset):
        self._buf, self._offset = buf, offset


def for_result(nbytes: int, *operands):
    """``for_arrays(*operands)`` for an op that makes a new result of ``nbytes`` bytes."""
    if _single is not None:
        return _single
    return _place(operands, nbytes)


def for_product(nbytes: int, *operands):
    """``for_result(nbytes, *operands)`` for a matrix product, priced with what a product
    costs more on the device than on the host (``placement.PRODUCT_PREMIUM``: a BLAS call
    there, where a row of a large matrix times a vector is far cheaper on the host)."""
    if _single is not None:
        return _single
    return _place(operands, nbytes, placement.PRODUCT_PREMIUM)


def host_for_new(buf, a):
    """The host allocation of ``buf`` when it is placement's placeholder for a new array
    (not allocated yet) of a size that starts on the host: allocated now, so that its first
    write through array ``a`` (``cur = empty(n); cur[0] = i``) takes the host path; else
    None.  Where ``a`` is the whole array, C-contiguous, the allocation is NumPy's own of
    its shape and dtype, kept as its NumPy view too (as the host path keeps NumPy's
    results: ``wrap_host``), so that the write builds nothing more."""
    if type(buf) is not placement.Unallocated or buf.nbytes > placement.THRESHOLD_BYTES:
        return None
    if a._c_contig and not a._offset and a._size and a._size * a.dtype.itemsize == buf.nbytes:
        raw = buf.host = a._hv = a._hraw = np.empty(a._shape, a.dtype)
        return raw
    raw = buf.host = _host.alloc(buf.nbytes).host  # (what resolve does, without its hops)
    return raw


def for_element(a, offset: int):
    """``for_arrays(a)`` for an op that touches the element of ``a`` at byte ``offset``
    (its ledger records one element, not the array's size)."""
    return for_arrays(_One(a._buf, offset))


def element(a, offset: int):
    """The Buffer of a new 0-d array holding the element of ``a`` at byte ``offset`` (an
    element read, ``x = a[i, j]``): of device data, a pending read (elements.py) where the
    backend allows, else a copy."""
    backend = _single if _single is not None else for_element(a, offset)
    buf = a._buf
    if backend.side == DEVICE and buf.host is None and buf.pins is None and (
            buf.device is not None or buf.pending is not None) and backend.lazy_reads():
        out = _new_object(buffer.Buffer)  # (Buffer(), its slots set here: a frame less)
        out.host = out.device = out.pending = out.readers = out.ledger = out.pins = None
        out.version = out.settled = 0
        elements.read(backend, buf, offset, a.dtype, out)
        return out
    return backend.copy_bytes(buf, offset, a.dtype.itemsize)


def store_element(a, offset: int, value) -> bool:
    """``a[key] = value`` for the element at byte ``offset`` of array ``a`` (device data)
    and a number or a 0-d array of ``a``'s dtype and device data: a number is converted as
    NumPy's setitem converts it and written by one fill; for ``a[i, j] op= b`` (``value``
    the pending op on that very element) the op runs in place there; else one element-sized
    copy (from the source of a pending read).  False where the general path decides (other
    dtypes, data on the host, ``value`` sharing ``a``'s data)."""
    buf = a._buf
    if buf.host is not None:
        return False
    if not hasattr(value, "_buf"):
        host = np.empty((), a.dtype)
        host[()] = value  # (NumPy's conversion, warnings and errors)
        target = elements.Leaf(buf, offset, (), (), a.dtype, 1, True, True)
        for_writing(target).fill(target, host[()])
        return True
    if value.dtype != a.dtype or value._buf is buf:
        return False
    if elements.store(a, offset, value):
        return True
    target = elements.Leaf(buf, offset, (), (), a.dtype, 1, True, True)
    v = elements.source_view(value)  # a[k, l] = b[i, j]: copied from b, once
    src = value if v is None or v._buf is buf else v  # (taken before the write hook runs)
    for_writing(target, value).copy(src, target)
    return True


def to_host(a):
    """A new C-contiguous NumPy array with the values of array ``a`` (a read: waits for
    the device where the data is there)."""
    buf = a._buf
    if buf.pending is not None:
        if type(buf.pending) is elements.Element:
            host = elements.to_host(a)  # one copy from the element's source
            if host is not None:
                return host
    elif buf.host is not None and _single is not None:
        return _host.to_host(a)  # (one backend for every op: data valid on the host is read there)
    return for_arrays(a).to_host(a)


def for_arrays(*operands):
    """The backend where the operands' data lives (docs/guide/placement.md): the host
    backend when every array operand's data is valid on the host, the device backend when
    some operand's is only on the device (or pending).  Non-array operands (scalars) and
    arrays not allocated yet (a new result: it is allocated where the op runs) are
    skipped; with no other array operand, the backend of new arrays of the largest size.
    Each base Buffer's cost ledger records the op and may move the data first."""
    if _single is not None:
        return _single
    return _place(operands, -1)


def _place(operands, fresh: int, premium: float = 0.0):
    """``for_arrays(*operands)``, with ``fresh``: the bytes of a new result (or -1), and
    ``premium``: what the op costs more on the device besides (``for_product``)."""
    if _backend is None:
        get()
        if _single is not None:
            return _single
    if _chaos is None and placement.DEVICE_ONLY_STAYS:
        # Device data (operands valid on both sides aside: they are read where the op runs,
        # and never priced), no ledger holding a regret, in an op too large to be cheaper on
        # the host or with no operand large (or pending) enough to hold it there: what
        # _priced decides, without its pricing (a device program's op).  A Buffer found
        # device-only with no regret is marked ``settled``, SMALL or LARGE (placement.py
        # clears the mark when any of that changes), so its next ops read one attribute.
        # Two large device-only operands of like size hold the op there together (_holding:
        # _priced prices neither), whatever its size (a roll's row copy, a slice of a grid).
        most, device, held, twice = fresh >> 3, False, None, False
        for x in operands:
            buf = getattr(x, "_buf", None)
            if buf is None:
                continue
            if level := buf.settled:
                device = True
                if level == LARGE:
                    if held is None:
                        held = buf
                    elif held is not buf and not twice:
                        held, twice = _holding(held, buf, twice)
                    if x._size > most:
                        most = x._size
                continue
            if buf.host is not None:
                if buf.device is None or buf.pins is not None:
                    break
                continue
            if buf.ledger is not None and buf.ledger.regret:
                break
            if buf.pending is not None or buf.device is not None and \
                    buf.device.nbytes > placement.THRESHOLD_BYTES:
                device = True  # (_priced prices it by these elements, or the result's)
                if held is None:
                    held = buf
                elif held is not buf and not twice:
                    held, twice = _holding(held, buf, twice)
                if buf.pending is None:
                    buf.settled = LARGE
                if x._size > most:
                    most = x._size
            elif buf.device is not None:
                device = True
                buf.settled = buffer.BORN_SMALL
            elif buf.nbytes >> 3 > most:  # (not allocated yet: a new result of this size)
                most = buf.nbytes >> 3
        else:
            if device and (held is None or twice or most > (
                    placement.PRODUCT_HOST_WINS_BELOW if premium else placement.HOST_WINS_BELOW)):
                return _backend
    return _priced(operands, fresh, premium)


# ``for_result(nbytes, *operands)`` with the operands as one tuple, for a hot caller that
# has found ``_single`` None itself (``_ufunc``'s layout path): no packing, one frame less.
for_operands = _place


def _priced(operands, fresh: int, premium: float = 0.0):
    """``_place`` by the cost table: the operands' ledgers record the op, and may move
    their data first."""
    device = pinned = host_only = held_twice = False
    held = None  # the Buffer only on the device that holds the op there (see _holding)
    bufs, offsets = [], []  # (the views' byte offsets: the ledger follows sweeps)
    for x in operands:
        try:
            buf = x._buf
        except AttributeError:  # a scalar
            continue
        if buf.host is None:
            if buf.device is None and buf.pending is None:  # not allocated yet
                fresh = max(fresh, buf.nbytes)
                continue
            device = True
            # (a small device-only operand holds nothing: it comes along for a transfer)
            if buf.pending is not None or placement.nbytes_of(buf) > placement.THRESHOLD_BYTES:
                if held is None:
                    held = buf
                elif held is not buf:
                    held, held_twice = _holding(held, buf, held_twice)
        else:
            if buf.pins is not None and HOST in buf.pins:  # a live NumPy export: on the host
                pinned = True
            if buf.device is None:
                host_only = True
        bufs.append((buf, x._size))
        offsets.append(x._offset)
    if not bufs:
        return _host if max(fresh, 0) <= placement.THRESHOLD_BYTES else _backend
    if not device and fresh > placement.THRESHOLD_BYTES and placement.result_on_device(
            fresh, bufs, premium):
        return _backend  # a large result of small host operands (an outer product, tile)
    if pinned:
        return _host  # (device-only operands are copied to the host and kept there too)
    if _chaos is not None:
        _chaos(bufs)
        return _backend if any(b.host is None for b, _ in bufs) else _host
    side = DEVICE if device else HOST
    made = fresh // 8  # an op is priced by the larger of what it reads and what it makes
    # on the device, the op also pays for copying its host-only operands over (and a
    # product its premium; on the host it saves that)
    extra = placement.copies_to_device(bufs) if device and host_only else 0.0
    wins_below = placement.HOST_WINS_BELOW
    if premium:
        extra += premium if device else -premium
        wins_below = placement.PRODUCT_HOST_WINS_BELOW
    last = None  # (a broadcast's small operands, whose result is large, stay put)
    for (buf, n), offset in zip(bufs, offsets):
        if buf is last:
            continue  # (views of one array side by side: one op on its data)
        last = buf
        if device and (held_twice or held is not buf):
            # Another operand holds the op on the device: moving this one alone would only
            # make the op copy it back, so its past ops no longer argue for a move.
            if buf.host is None and buf.ledger is not None:
                buf.ledger.regret = 0.0
            continue
        if device and (not extra or extra == premium) and (n if n >= made else made) > \
                wins_below and (buf.ledger is None or not buf.ledger.regret):
            continue  # (cheaper on the device, and no regret to lower: as stays_on_device)
        # (on the host the op would also bring its other device-only operands over: a
        # device result read by the next op stays cheaper on the device than on the host)
        along = placement.copies_to_host(bufs, buf) if device and len(bufs) > 1 else 0.0
        if placement.record(buf, side, n if n >= made else made, extra - along, offset):
            placement.move_with_partners(buf, HOST if side == DEVICE else DEVICE)
            if device:  # (the small device-only operands come along: they held nothing)
                for b, _ in bufs:
                    if b.host is None and b.pins is None:
                        placement.move(b, HOST)
            device = any(b.host is None for b, _ in bufs)
            break
    # (with no operand only on the host, the host is never cheaper while moving an operand
    # costs more than the sides' difference per op: placement.DEVICE_ONLY_STAYS)
    if device and (host_only or not placement.DEVICE_ONLY_STAYS) and \
            placement.host_is_cheaper(bufs, made, premium):
        for buf, _ in bufs:
            if buf.host is None:
                placement.move(buf, HOST)
        return _host
    return _backend if device else _host


def _holding(held, buf, twice: bool) -> tuple:
    """``(held, twice)`` once ``buf``, another large device-only operand of the op, is seen
    after ``held``: the larger holds the op, and both do (``twice``: nothing is priced) when
    the smaller has at least ``1/placement.HOLD_RATIO`` of its bytes or either is pending.
    So a row of a large matrix times a far smaller block (trisolve's ``L[i, :i] @ X[:i]``)
    is priced against the matrix alone, and the block comes along when the matrix moves."""
    if buf.pending is not None or held.pending is not None:
        return held, True
    nh, nb = placement.nbytes_of(held), placement.nbytes_of(buf)
    if nb > nh:
        held, buf, nh, nb = buf, held, nb, nh
    return held, twice or nb * placement.HOLD_RATIO >= nh


def stays_on_device(x, y=None) -> bool:
    """The cost ledger's entry for an op that the device hot path is about to run over
    array ``x`` (and ``y``: an array or a scalar): False where the ledger moved the data to
    the host (the caller then takes the general path, which runs the op there).  Only ops
    small enough to be cheaper on the host are priced, and larger ones while ``x``'s
    ledger holds a regret (they lower it): a large op on device data costs no Python."""
    if _single is not None:
        return True
    buf = x._buf
    if x._size > placement.HOST_WINS_BELOW:
        led = buf.ledger
        if led is None or not led.regret:
            return True
    raw = buf.device
    if raw is not None and buf.host is None and buf.pins is None and _chaos is None and \
            raw.nbytes > placement.THRESHOLD_BYTES and getattr(y, "_buf", None) is None \
            and placement.DEVICE_ONLY_STAYS:
        # one large device-only array and a number (a row op on a large matrix): what
        # _place and _priced decide, without their loops
        if buf.ledger is None or not buf.ledger.regret:
            buf.settled = LARGE  # (as _place marks it; record unmarks it on a regret)
        if placement.record(buf, DEVICE, x._size, 0.0, x._offset):
            placement.move_with_partners(buf, HOST)
            return False
        return True
    return _place((x, y), -1) is not _host


def stays_on_host(a) -> bool:
    """The host path's ledger entry for a large array ``a`` valid on the host: records the
    op, and False where the ledger moved the data to the device (the op then runs there)."""
    buf = a._buf
    if _single is not None or buf.device is not None or buf.pins is not None:
        return True
    if placement.record(buf, HOST, a._size, 0.0, a._offset):
        placement.move(buf, DEVICE)
        return False
    return True


def for_writing(dst, *operands):
    """``for_arrays(dst, *operands)`` for an op that writes into ``dst``, with ``dst``'s
    Buffer told before the write lands (``Buffer.will_write``: pending readers evaluated,
    the other side's copy dropped, the version bumped).  A write of at most
    ``placement.SMALL_WRITE`` bytes into a Buffer valid on both sides keeps both: the
    backend returned then copies the written elements to the other side after the op."""
    backend = for_arrays(dst, *operands)
    if dst._buf.will_write(backend.side, dst._size * dst.dtype.itemsize):
        return _Mirrored(backend, dst)
    return backend


def copy_into(dst, src) -> None:
    """``for_writing(dst, src).copy(src, dst)``: ``dst[...] = src``, arrays of one shape
    sharing no bytes.  Settled Buffers (device data, placed), both SMALL, both LARGE and of
    like size (``_holding``), or in a copy of more than ``placement.UNPRICED_ABOVE``
    elements, go to ``for_settled`` unpriced (what ``_place`` decides),
    ``Buffer.will_write``'s plain case inline."""
    buf = dst._buf
    mine, theirs = buf.settled, src._buf.settled
    if mine and theirs and buf.readers is None and (
            dst._size > placement.UNPRICED_ABOVE or (mine | theirs) == SMALL or (
                mine == theirs == LARGE and src._buf is not buf and
                placement.DEVICE_ONLY_STAYS and _holding(buf, src._buf, False)[1])):
        # (the last: two large arrays of like size hold the copy on the device, as in _place)
        buf.version += 1
        for_settled.copy_ready(src, dst)
    elif theirs == SMALL and _chaos is None and (raw := buf.device) is not None and \
            buf.host is None and buf.pins is None and buf.readers is None and \
            buf.pending is None and raw.nbytes > placement.THRESHOLD_BYTES and \
            placement.DEVICE_ONLY_STAYS:
        _row_write(dst, src, buf)
    else:
        for_writing(dst, src).copy(src, dst)


def _row_write(dst, src, buf) -> None:
    """``copy_into`` of small device data (settled SMALL) into a large device-only array
    (``buf``, dst's Buffer; a row update: iir_rows' ``y[i] = a * y[i - 1] + b * x[i]``):
    what ``for_writing``'s pricing (``_place``, ``_priced``) decides, without its loops."""
    n = dst._size
    led = buf.ledger
    if led is None or not led.regret:
        buf.settled = LARGE  # (as _place marks it; record unmarks it on a regret)
    if n <= placement.HOST_WINS_BELOW or led is not None and led.regret:  # (else: unpriced)
        along = placement.copies_to_host(((buf, n), (src._buf, n)), buf)
        made, along = placement.write_source_made_here(buf, n, along)
        if placement.record(buf, DEVICE, n, made - along, dst._offset):
            placement.move_with_partners(buf, HOST)
            placement.move(src._buf, HOST)  # (a small device-only operand comes along)
            buf.version += 1
            _host.copy(src, dst)
            return
    buf.version += 1
    for_settled.copy_ready(src, dst)


def _resolve(buf, side):
    """``Buffer.on``'s hook (``buffer.RESOLVE``): the data made valid on ``side``.  Fusion's
    part first (a pending Buffer is computed, on the device), then placement's (a copy from
    the other side, kept)."""
    if buf.pending is not None:
        fusion.materialize(buf)
        raw = buf.host if side == HOST else buf.device
        if raw is not None:
            return raw
    if _placing:
        return placement.resolve(buf, side)
    raw = buf.host if side == HOST else buf.device
    if raw is None:
        raise LookupError(f"this buffer's data is not on the {side}")
    return raw


def _before_write(buf, side, nbytes=None) -> bool:
    """``Buffer.will_write``'s hook (``buffer.BEFORE_WRITE``), before a write on ``side``.
    Fusion's part first (a pending ``buf`` is computed and the pending expressions that read
    it run: they must see the old data), then placement's (the other side's copy dropped, or
    both kept for a small write: True)."""
    fusion.before_write(buf)
    if _placing:
        return placement.before_write(buf, side, nbytes)
    return False


buffer.install(_resolve, _before_write)


class _Mirrored:
    """A backend whose every call is followed by a copy of ``dst``'s elements to the
    other side of its Buffer (a small write into data valid on both sides)."""

    def __init__(self, backend, dst):
        self._backend, self._dst, self.side = backend, dst, backend.side

    def __getattr__(self, name):
        method = getattr(self._backend, name)
        if not callable(method):
            return method

        def call(*args, **kwargs):
            result = method(*args, **kwargs)
            mirror(self._dst, self.side)
            return result

        return call


def mirror(dst, side) -> None:
    """Copy the elements of ``dst`` (just written on ``side``) to its Buffer's other copy."""
    if not dst._size:
        return
    from .host import view

    if side == DEVICE:
        view(dst)[...] = _backend.to_host(dst)
    else:
        _backend.write_host(dst, np.ascontiguousarray(view(dst)))


def pin_device(a, reason="cuda_array_interface") -> None:
    """Keep ``a``'s data on the device (moved there now) for ``reason``: an export through
    which the consumer may read or write it there at any time.  A ``__cuda_array_interface__``
    export pins it for good; a DLPack export until its deleter runs (``unpin_device``)."""
    if _single is None and get().side == DEVICE:
        placement.pin(a._buf, DEVICE, reason)


def unpin_device(a, reason) -> None:
    if _single is None and get().side == DEVICE:
        placement.unpin(a._buf, DEVICE, reason)


class _HostExport:
    """The owner of a zero-copy NumPy export of host data: NumPy keeps it as the base of
    the exported array and of every view of it (it stops its base chain at an object that
    is not an array), so its finalizer runs when the last of them goes."""

    __slots__ = ("__array_interface__", "raw", "__weakref__")

    def __init__(self, a, raw):
        self.raw = raw  # (keeps the allocation alive while exported)
        self.__array_interface__ = {
            "data": (raw.ctypes.data + a._offset, False), "shape": a._shape,
            "typestr": a.dtype.str, "strides": a._strides, "version": 3}


def export_host(a):
    """A NumPy array sharing the host data of ``a`` (valid on the host), with the data
    pinned to the host while that array or any view of it lives."""
    import weakref

    buf = a._buf
    if not a._size:
        return np.empty(a._shape, a.dtype)
    holder = _HostExport(a, buf.host)
    out = np.asarray(holder)
    if _single is None and get().side == DEVICE:
        reason = object()
        placement.pin(buf, HOST, reason)
        weakref.finalize(holder, placement.unpin, buf, HOST, reason)
    return out


def for_device_writing(dst):
    """The device backend (the host's without one), for a write into ``dst`` that must run
    there whatever ``dst``'s placement (random numbers: one stream of values wherever they
    land); ``dst``'s Buffer is told first, as ``for_writing`` does.  ``settle(dst)`` after
    the write puts the data back where its size says."""
    backend = for_side(DEVICE)
    if dst._buf.will_write(backend.side):  # (no nbytes: never a mirrored small write)
        raise AssertionError("unreachable: a write of unknown size drops the other copy")
    return backend


def settle(a) -> None:
    """Place the data of ``a``, just written on the device, where a new array of its size
    starts (the host for at most the threshold under ``auto``)."""
    buf = a._buf
    if _single is None and buf.host is None and buf.device is not None and not buf.pins and (
            placement.nbytes_of(buf) <= placement.THRESHOLD_BYTES):
        placement.move(buf, HOST)


def placement_of(buf) -> str:
    """``cupynum.placement``: "host", "device" or "both" for a Buffer."""
    if _backend is None:
        get()
    if _backend is _host:
        return HOST
    return placement.where(buf)


def place(a, where: str) -> None:
    """Move the data of array ``a`` to ``where`` ("host", "device" or "both"):
    ``cupynum.testing.place``, and vectorize's small results of host arguments; nothing to
    do without placement (the host backend, or CUPYNUM_PLACEMENT=device)."""
    if where not in (HOST, DEVICE, "both"):
        raise ValueError(f"place: where must be 'host', 'device' or 'both', not {where!r}")
    if _backend is None:
        get()
    if _single is not None:  # (no placement: one backend)
        return
    buf = a._buf
    if where == "both":
        for side in (HOST, DEVICE):
            buf.on(side)
    else:
        placement.move(buf, where)


def for_new(nbytes: int):
    """The backend that allocates a new array of ``nbytes`` bytes: under placement
    ``auto``, the host backend for at most ``placement.THRESHOLD`` elements' bytes, else
    the device backend."""
    if _single is not None:
        return _single
    if _backend is None:
        get()
        if _single is not None:
            return _single
    return _host if nbytes <= placement.THRESHOLD_BYTES else _backend


def for_side(side: str):
    """The backend of ``side`` ("host" or "device")."""
    if _backend is None:
        get()
    return _host if side == HOST or _backend is _host else _backend


def new_buffer(nbytes: int):
    """The Buffer of a new array of ``nbytes`` bytes whose first op decides its side:
    under placement, not allocated until a backend reads or writes it (then on that
    backend's side, with no copy); else allocated now by the process's backend."""
    if _single is not None:
        return _single.alloc(nbytes)
    if _backend is None:
        get()
        if _single is not None:
            return _single.alloc(nbytes)
    # placement.Unallocated(nbytes), its slots set here: two ``__init__`` frames less per new
    # array (``empty`` in a loop); tests/test_placement.py checks the two agree slot for slot
    buf = _new_object(placement.Unallocated)
    buf.host = buf.device = buf.pending = buf.readers = buf.ledger = buf.pins = None
    buf.version = buf.settled = 0
    buf.nbytes = nbytes
    return buf


def host_backend():
    """The host backend (the process's backend itself when that is the host one)."""
    if _backend is None:
        get()
    return _host


def get():
    """The process's backend (created on first call); the frontend asks ``for_arrays`` or
    ``for_new`` instead.  Under placement ``auto`` or ``random`` the CUDA backend is made
    when something first uses it (``_DeviceToCome``): a program whose arrays all stay on
    the host creates no CUDA context."""
    global _backend, _single, _host, _chaos, _placing, for_settled
    if _backend is None:
        backend = _select(_config.BACKEND)
        if isinstance(backend, type):  # (the CUDA backend's traits: made now, or when used)
            backend = _make_cuda() if placement.MODE == "device" else _DeviceToCome(backend)
        for_settled = backend
        if backend.side == HOST:
            _host = _single = backend
        else:
            from .host import HostBackend

            _host = HostBackend()
            if placement.MODE == "device":
                _single = backend
            elif placement.MODE == "random":
                _chaos = placement.Chaos(_config.PLACEMENT_SEED)
            placement._backends_of = for_side
            _placing = True
        _backend = backend
    return _backend


def _select(choice: str):
    if choice == "host":
        from .host import HostBackend

        return HostBackend()
    if choice == "simulated":
        from .simulated import SimulatedBackend

        return SimulatedBackend()
    from .cuda import driver

    if choice == "cuda":
        if not driver.available():
            raise RuntimeError(
                "CUPYNUM_BACKEND=cuda but no usable CUDA driver/GPU was found"
                + (f": {driver.reason()}" if hasattr(driver, "reason") else "")
            )
    elif not driver.available() or _forked_from_cuda():
        from .host import HostBackend  # (a forked child cannot use its parent's GPU)

        return HostBackend()
    from .cuda import CudaTraits

    return CudaTraits  # (the CUDA backend: ``get`` makes it at once, or at its first use)


def _make_cuda():
    from .cuda.backend import CudaBackend

    return CudaBackend()


class _DeviceToCome:
    """The CUDA backend until something uses it (``get``): its traits (``side``, ``name``,
    ``cuda_memory``: what callers test without computing; ``cuda.CudaTraits``) answer at
    once; any other attribute makes the backend (importing its modules and creating the
    CUDA context), which then replaces this stand-in as ``_backend`` and ``for_settled``,
    so that later calls reach it directly."""

    def __init__(self, traits):
        self._traits = traits

    def __getattr__(self, name):
        if name in vars(self._traits):
            return getattr(self._traits, name)
        return getattr(self.made(), name)

    def made(self):
        """The backend, made on the first call."""
        global _backend, for_settled, _single
        with _making:
            if _backend is self:
                _backend = _make_cuda()
                if for_settled is self:
                    for_settled = _backend
                if _single is self:  # (a test's device_placement fixture)
                    _single = _backend
        return _backend


_making = threading.Lock()


def make_device():
    """The process's backend, the device backend made now if it was still to come (tests
    that work with the backend object itself)."""
    backend = get()
    return backend.made() if type(backend) is _DeviceToCome else backend


def _forked_from_cuda() -> bool:
    from .cuda import runtime

    return runtime.forked()


def name() -> str:
    return get().name
