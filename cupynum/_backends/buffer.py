"""The Buffer: the one object that owns an array's bytes.

It sits at the bottom of the package (it imports nothing from cupynum), so every backend
can make one on its hot path.  See docs/internals.md, "The Buffer".
"""
from __future__ import annotations

HOST = "host"
DEVICE = "device"

# Hooks installed by the layers above (the Buffer imports nothing):
#   RESOLVE(buf, side) -> raw   the data made valid on ``side``: a pending buffer evaluated
#                               (fusion), a copy from the other side (placement); raises
#                               LookupError where it cannot be.
#   BEFORE_WRITE(buf, side, nbytes) -> bool   run by ``will_write`` ahead of a write:
#                               pending readers evaluated, the other side's copy dropped
#                               (True: both kept, for a small write the caller mirrors).
RESOLVE = None
BEFORE_WRITE = None

# ``pins`` of a Buffer whose address was handed out (DLPack, the CUDA array interface, raw
# kernels, ``.data``): writes may come from outside cupynum, so fusion never reads it lazily.
EXPORTED = "exported"


# The levels of ``Buffer.settled`` (placement.py says when each holds; 0: not settled).
# SMALL: data of at most SETTLED_ABOVE bytes on the device only, no regret in its ledger: an
# op whose array operands are all SMALL runs on the device unpriced, whatever its size.
# LARGE: such data of more bytes: an op over settled operands runs on the device unpriced
# when it touches more than ``placement.UNPRICED_ABOVE`` elements (a smaller one is priced:
# the ledger of a large array watches the small ops on it).  ``a | b`` of two levels is SMALL
# only when both are.
SMALL = 1
LARGE = 2
# A new device allocation is born settled (the slot's promise holds for it at birth): LARGE
# above SETTLED_ABOVE bytes, else BORN_SMALL; both set by placement for its mode, never
# until then.
SETTLED_ABOVE = 1 << 62
BORN_SMALL = 0


def born_settled(nbytes: int) -> int:
    """The ``settled`` level of a new device allocation of ``nbytes`` bytes."""
    return LARGE if nbytes > SETTLED_ABOVE else BORN_SMALL


def install(resolve=None, before_write=None) -> None:
    """Install the read and write hooks (``_backends`` does, once)."""
    global RESOLVE, BEFORE_WRITE
    if resolve is not None:
        RESOLVE = resolve
    if before_write is not None:
        BEFORE_WRITE = before_write


class Buffer:
    """An array's data: a host copy, a device copy, or both, and a write counter.

    ``host``    a C-contiguous NumPy array over the data's bytes, or None: the host
                backend's allocation (flat uint8), or a result NumPy made on the host
                path, kept as NumPy gave it (its own dtype and shape: no byte view of it
                is made per op).  Read it as bytes through its buffer (``np.ndarray(...,
                buffer=raw, offset=...)``), never by indexing it.
    ``device``  a device allocation (the device backend's own object: the CUDA backend's
                pooled ``DeviceBuffer``, a simulated device's byte array), or None.
    ``version`` an int that every write to the data bumps (``will_write()``, called before the write lands); reads leave it.

    The valid-attribute rule: a copy that is not None is valid and current.  A stale copy
    is never left in ``host`` or ``device``; whatever may later hang off a Buffer (a
    second copy waiting to be refreshed, a pending expression not yet computed) lives
    elsewhere and is resolved by ``on(side)``.  So the hot paths may test and read the
    attribute directly (``buf.device is not None``); every other read of the data asks
    ``on(side)`` (or ``on_host()`` / ``on_device()``), the single read point that the
    placement and fusion work extends.  All views of an array share one Buffer, so a
    write through any of them is seen (and counted) by all.
    """

    __slots__ = ("host", "device", "version", "pending", "readers", "ledger", "pins",
                 "settled", "__weakref__")

    def __init__(self, host=None, device=None, settled=0):
        self.host = host
        self.device = device
        self.version = 0
        self.pending = None  # fusion: the expression that computes the data (docs/internals.md)
        self.readers = None  # fusion: weak references to pending expressions reading the data
        self.ledger = None  # placement: the cost ledger of the ops that touched the data
        self.pins = None  # placement: why the data must stay on a side (exports)
        # placement: SMALL or LARGE (above) once an op found the data on the device only,
        # not pending and with no regret in its ledger, or born so (a new device
        # allocation: ``born_settled``): ops over it run there unpriced (under
        # CUPYNUM_PLACEMENT=device every device Buffer is LARGE and no op is priced).
        # Every change of those facts sets it back to 0 (placement.py, fusion.py,
        # ``address``).
        self.settled = settled

    def on(self, side: str):
        """The allocation holding the current data on ``side`` ("host" or "device"): the
        attribute where it is set, else whatever the ``RESOLVE`` hook makes valid there
        (LookupError where nothing can)."""
        raw = self.host if side == HOST else self.device
        if raw is None:
            if RESOLVE is None:
                raise LookupError(f"this buffer's data is not on the {side}")
            raw = RESOLVE(self, side)
        return raw

    def on_host(self):
        """``on("host")``: the C-contiguous NumPy array holding the current data."""
        return self.on(HOST)

    def on_device(self):
        """``on("device")``: the device allocation holding the current data."""
        return self.on(DEVICE)

    def will_write(self, side: str | None = None, nbytes: int | None = None) -> bool:
        """Called before a write to the data lands (on ``side``; None: the side where the
        data is; ``nbytes``: how many bytes it writes, where known): readers still pending
        are evaluated first, the data is made valid on ``side`` and the other side's copy
        is dropped (the ``BEFORE_WRITE`` hook), and the version is bumped.  True where the hook kept both copies of a
        small write: the caller then writes both.  Hot paths inline the plain case:
        ``readers``, ``pending`` and a second copy all absent."""
        both = False
        if BEFORE_WRITE is not None and (self.readers is not None or self.pending is not None
                                         or (self.host if side == DEVICE
                                             else self.device) is not None):
            both = BEFORE_WRITE(self, side, nbytes)
        self.version += 1
        return both

    def address(self) -> int:
        """The address of the data's first byte, on the device where the data lives
        there, else on the host (for the interchange protocols and raw kernels).  The
        device address pins the data there for good (``pins[DEVICE]`` holds ``EXPORTED``):
        it may be written where no write point sees it, so no pending expression reads it
        lazily and placement never moves it from now on."""
        if self.readers is not None and BEFORE_WRITE is not None:
            BEFORE_WRITE(self, None)  # the expressions reading it run now, as before a write
        if self.device is not None or self.pending is not None:
            raw = self.on_device()
            if self.pins is None:
                self.pins = {}
            self.pins.setdefault(DEVICE, set()).add(EXPORTED)
            self.settled = 0
            ptr = getattr(raw, "ptr", None)  # (a simulated device's bytes are a NumPy array)
            return raw.ctypes.data if ptr is None else ptr
        return self.on_host().ctypes.data

    def __repr__(self) -> str:
        sides = [s for s in (HOST, DEVICE) if getattr(self, s) is not None]
        return f"<Buffer on {'+'.join(sides) or 'nothing'}, version {self.version}>"
