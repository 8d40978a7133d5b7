"""Placement: which side holds an array's bytes, and when they move (docs/guide/placement.md).

A Buffer is a cache over two sides (docs/internals.md, "Placement and fusion"): its ``host``
copy, its ``device`` copy, or both, each valid whenever it is set.  This module holds the
placement rules and the two Buffer hooks they need:

* ``resolve(buf, side)`` (``buffer.RESOLVE``): the data made valid on ``side``.  A Buffer
  not allocated yet (``Unallocated``: a new array that no backend has touched) is allocated
  there, with nothing to copy; data on the other side is copied over and both copies kept.
* ``before_write(buf, side, nbytes)`` (``buffer.BEFORE_WRITE``): the copy on the other
  side is dropped (a write makes it stale), unless the write is small and both copies are
  valid, in which case the caller updates both (``for_writing``'s mirror).

and the cost ledger: each base Buffer on a placement-managed side keeps the regret of its
ops (what they cost on its side minus what they would have cost on the other, priced from
``COSTS``), and moves when that regret reaches one migration's cost (the ski-rental rule).
Every number here is data to calibrate on the H200 machine, never a timer.
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import _config
from . import buffer
from .buffer import DEVICE, HOST, Buffer

MODE = _config.PLACEMENT  # "auto", "device" or "random"
# New arrays of at most THRESHOLD elements (of 8 bytes: the test is on bytes) start on the
# host under ``auto``.
THRESHOLD = _config.PLACEMENT_THRESHOLD
THRESHOLD_BYTES = THRESHOLD * 8
# A write of at most SMALL_WRITE bytes into a Buffer valid on both sides updates both
# copies instead of dropping one (one scalar store must not throw away a large copy).
SMALL_WRITE = 4096
# The ledger never moves a Buffer larger than HOST_CAP bytes to the host, and never moves
# a Buffer back within MIN_OPS_BETWEEN_MOVES ops of its last move.
HOST_CAP = 1 << 30
MIN_OPS_BETWEEN_MOVES = 16
# A sweep: ops on a Buffer whose views advance through it in one direction (a loop over
# rows).  Once a sweep has taken SWEEP_MIN_STEPS steps and the regret its steps add, kept
# up to the Buffer's end, would reach a migration's cost, the ledger moves at SWEEP_TRUST
# of that cost instead of all of it (ski rental with a prediction: a wrong one costs at
# most 1 + 1/SWEEP_TRUST times the best choice's price).
SWEEP_MIN_STEPS = 8
SWEEP_TRUST = 0.125
# Sweeps side by side: large device-only Buffers in sweeps whose ops come within
# PARTNER_WINDOW priced ops of each other (a recursive row filter, ``y[i] = a * y[i - 1] +
# b * x[i]``, sweeps y and x) are priced and moved together: their regrets against their
# moves' costs summed (``_swept_with``).  Alone, each would move to the host only to make
# every step copy the other's row over and wait for it.
PARTNER_WINDOW = 8
# Of two large device-only operands of an op, the larger alone holds it on the device when
# the smaller has under 1/HOLD_RATIO of its bytes (``_backends._holding``).
HOLD_RATIO = 16

# The cost table (microseconds, measured on the H200 machine with fusion on by
# benchmarks/probes/placement_calibrate.py; the run is in docs/internals.md): an op touching
# n elements costs ``op + per_element * n`` on a side; a move of b bytes to a side costs
# ``transfer + per_byte[side] * b``.  (Both sides keep the round trip's 0.2 ns a byte,
# above the one-way fits of 0.11 to the host and 0.07 to the device: at those, ops whose
# two sides cost nearly the same flip to the host with a small device operand, which the
# next op copies back, and one array of a pair that is cheaper on the host only together
# moves alone; docs/internals.md.)  An op that brings device-only data over to the host
# pays ``sync`` besides, once: the host waits there for the device's queued work, which
# otherwise runs while the host goes on (a copy the other way does not wait).
# A matrix product (``matmul``, ``dot``: a BLAS call) pays ``product`` on top of ``op``.
COSTS = {
    HOST: {"op": 1.2, "per_element": 0.0004, "product": 1.9},
    DEVICE: {"op": 8.3, "per_element": 0.000006, "product": 25.0},
    "transfer": 12.0,
    "per_byte": {HOST: 0.0002, DEVICE: 0.0002},
    "sync": 10.0,
}

# What a matrix product costs more on the device than on the host, besides an op's costs.
PRODUCT_PREMIUM = COSTS[DEVICE]["product"] - COSTS[HOST]["product"]


def host_wins_below(premium: float = 0.0) -> int:
    """The size (elements) below which an op costs less on the host than on the device,
    for an op that pays ``premium`` more on the device besides (a product's)."""
    return int((COSTS[DEVICE]["op"] + premium - COSTS[HOST]["op"])
               / (COSTS[HOST]["per_element"] - COSTS[DEVICE]["per_element"]))


# Ops on fewer elements than this cost less on the host than on the device.
HOST_WINS_BELOW = host_wins_below()
PRODUCT_HOST_WINS_BELOW = host_wins_below(PRODUCT_PREMIUM)
# The host path enters an op on host data in its ledger (``_backends.stays_on_host``) when
# the array has more elements than this: an op on fewer costs less on the host whatever it
# does, so it adds no regret.  (Between this and THRESHOLD, an array starts on the host and
# the ledger moves it once its ops have cost a migration more than on the device.)
HOST_UNPRICED_UPTO = min(THRESHOLD, HOST_WINS_BELOW)

# Whether an op whose operands are all on the device (none only on the host) always costs
# less there than on the host with one or more of them moved over: true when one move costs
# more than the host's saving per op, at every size (for_arrays then skips the pricing).
DEVICE_ONLY_STAYS = (COSTS[HOST]["op"] + COSTS["transfer"] >= COSTS[DEVICE]["op"]
                     and COSTS[HOST]["per_element"] >= COSTS[DEVICE]["per_element"])

# What ``Buffer.settled`` holds for (the hot paths' unpriced device ops; its levels are in
# buffer.py): new device allocations are born LARGE above ``buffer.SETTLED_ABOVE`` bytes and
# ``buffer.BORN_SMALL`` below, and an op over settled Buffers runs on the device with no
# further test when all are SMALL or it touches more than UNPRICED_ABOVE elements: what
# _backends._place's shortcut decides, under ``auto``; under ``device`` every device Buffer
# is LARGE and every op unpriced; under ``random``, whose migrations come before every op,
# nothing is settled.  SMALL needs DEVICE_ONLY_STAYS (device-only operands never move).
_NEVER = 1 << 62
buffer.SETTLED_ABOVE = {"device": -1, "random": _NEVER}.get(MODE, THRESHOLD_BYTES)
buffer.BORN_SMALL = buffer.SMALL if MODE == "auto" and DEVICE_ONLY_STAYS else 0
UNPRICED_ABOVE = {"device": -1, "random": _NEVER}.get(MODE, HOST_WINS_BELOW)


def op_cost(side: str, elements: int) -> float:
    row = COSTS[side]
    return row["op"] + row["per_element"] * elements


def migration_cost(nbytes: int, to: str) -> float:
    """What moving ``nbytes`` bytes to side ``to`` costs."""
    return COSTS["transfer"] + COSTS["per_byte"][to] * nbytes


def other(side: str) -> str:
    return DEVICE if side == HOST else HOST


class Unallocated(Buffer):
    """A new array's Buffer before any backend has touched it: ``host`` and ``device``
    both None, ``pending`` None.  The first side that reads or writes it allocates it
    there (``resolve``), so a result lands where its op runs, with no transfer."""

    __slots__ = ("nbytes",)

    def __init__(self, nbytes: int):
        Buffer.__init__(self)
        self.nbytes = nbytes


def unallocated(buf) -> bool:
    return buf.host is None and buf.device is None and buf.pending is None


def nbytes_of(buf) -> int:
    raw = buf.host if buf.host is not None else buf.device
    return getattr(buf, "nbytes", 0) if raw is None else raw.nbytes


def side_of_new(nbytes: int) -> str:
    """Where a new array of ``nbytes`` bytes starts under ``auto``."""
    return HOST if nbytes <= THRESHOLD_BYTES else DEVICE


def where(buf) -> str:
    """``cupynum.placement``'s answer for a Buffer: "host", "device" or "both"."""
    if buf.pending is not None:
        return DEVICE
    if buf.host is not None:
        return "both" if buf.device is not None else HOST
    if buf.device is not None:
        return DEVICE
    return side_of_new(buf.nbytes) if isinstance(buf, Unallocated) else DEVICE


# the Buffer hooks ---------------------------------------------------------------------------
_backends_of = None  # side -> backend: set by _backends.get() (it imports this module)


def resolve(buf, side: str):
    """``buffer.RESOLVE``: the data of ``buf`` made valid on ``side`` (see module doc)."""
    backend = _backends_of(side)
    new = buf.host is None and buf.device is None
    if new:
        if buf.pending is not None:  # fusion's case: evaluated where it is computed
            raise LookupError("a pending buffer is evaluated by the fusion hook")
        raw = _raw(backend.alloc(buf.nbytes), side)
    elif side == DEVICE:
        raw = _raw(backend.from_host(buf.host), DEVICE)
    else:
        raw = read_back(buf)
    if buf.pins is not None and other(side) in buf.pins:
        return raw  # pinned to the other side by an export that may write it: a read copy
    setattr(buf, side, raw)
    # (a new array allocated on the device is settled at birth, as a backend's own result)
    buf.settled = buffer.born_settled(raw.nbytes) if new and side == DEVICE else 0
    if buf.host is not None and buf.device is not None:
        _both.add(buf)
    return raw


# Buffers that were given a second copy (``resolve``): their device copies are what the
# out-of-memory path may drop (``evict_device_copies``).
_both = weakref.WeakSet()


def evict_device_copies() -> bool:
    """Drop the device copy of every Buffer whose data is valid on the host as well (the
    device pool is out of memory: such a copy is a cache, made again by the next device op
    that reads the data), except copies pinned to the device by an export or read by a
    pending expression; False when none was dropped.  Frees are stream-ordered, so kernels
    already queued on a dropped copy still read it."""
    dropped = False
    for buf in list(_both):
        if buf.host is not None and buf.device is not None and buf.readers is None \
                and not (buf.pins and DEVICE in buf.pins):
            buf.device = None
            dropped = True
    _both.clear()
    return dropped


def read_back(buf):
    """A new host allocation (the host backend's, aligned as its own are) holding the
    device copy's bytes, filled by the one device-to-host copy.  (Copying a NumPy array
    filled first into an aligned one, as this did before, took four times as long on the
    H200 machine: malloc never returns a large block 64-byte aligned, so the second copy
    always ran, faulting in fresh pages on one thread.)"""
    raw = buf.device
    out = _raw(_backends_of(HOST).alloc(raw.nbytes), HOST)
    if raw.nbytes:
        _backends_of(DEVICE).to_host(_Bytes(buf, raw.nbytes), out)
    return out


def _raw(new: Buffer, side: str):
    return new.host if side == HOST else new.device


class _Bytes:
    """A Buffer's whole allocation seen as a C-contiguous uint8 array (the fields a backend
    reads), for moving all of it."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "dtype", "_size", "_c_contig",
                 "_f_contig")

    def __init__(self, buf, nbytes):
        self._buf, self._offset, self._shape, self._strides = buf, 0, (nbytes,), (1,)
        self.dtype, self._size = np.dtype(np.uint8), nbytes
        self._c_contig = self._f_contig = True


def before_write(buf, side, nbytes=None) -> bool:
    """``buffer.BEFORE_WRITE``: the data made valid on ``side`` (None: where it is, the
    host where both) and the other side's copy dropped.  Returns True, dropping nothing,
    where both copies are valid and the write is of at most SMALL_WRITE bytes: the caller
    then writes both (``_backends.mirror``)."""
    if buf.pending is not None:
        return False  # (fusion's hook evaluates pending data)
    if side is None:
        side = HOST if buf.host is not None else DEVICE
    if buf.host is None and buf.device is None:
        return False  # not allocated yet: allocated where the write lands
    if (buf.host if side == HOST else buf.device) is None:
        if buf.pins and other(side) in buf.pins:
            raise RuntimeError(f"this array's data is pinned to the {other(side)} by an "
                               "export; it cannot be written from the other side")
        move(buf, side)
        return False
    drop = other(side)
    if (buf.host if drop == HOST else buf.device) is None:
        return False
    if nbytes is not None and nbytes <= SMALL_WRITE and not _mirrored_enough(
            buf, nbytes, drop):
        return True
    setattr(buf, drop, None)
    return False


def _mirrored_enough(buf, nbytes: int, other_side: str) -> bool:
    """Charge a small write's update of the copy on ``other_side`` to ``buf``'s ledger;
    True when such updates have cost more than copying the whole buffer over again (the
    ski-rental rule once more): the other copy is then dropped, and the writes that follow
    go to one side only (a small array written element by element stops paying for two
    copies)."""
    led = buf.ledger
    if led is None:
        led = buf.ledger = Ledger()
    led.mirrored += migration_cost(nbytes, other_side)
    if led.mirrored <= migration_cost(nbytes_of(buf), other_side):
        return False
    led.mirrored = 0.0
    return True


def result_on_device(result_nbytes: int, bufs, premium: float = 0.0) -> bool:
    """Whether an op of host operands (``bufs``: (Buffer, elements touched)) making a new
    result of ``result_nbytes`` bytes is cheaper on the device, its operands copied there
    (and kept), than on the host (the cost table; elements of 8 bytes; ``premium``: what
    the op pays more on the device besides)."""
    if any(buf.pins is not None for buf, _ in bufs):
        return False
    n = result_nbytes // 8
    moved = sum(nbytes_of(buf) for buf, _ in bufs if buf.device is None)
    return op_cost(DEVICE, n) + premium + migration_cost(moved, DEVICE) < op_cost(HOST, n)


def host_is_cheaper(bufs, made: int = 0, premium: float = 0.0) -> bool:
    """Whether an op with some operand only on the device (``bufs``: (Buffer, elements
    touched); ``made``: elements of a new result; ``premium``: what it pays more on the
    device besides, a product's) costs less run on the host, its device-only operands
    copied there (and kept), than on the device, its host-only operands copied there (and
    kept): the cost table's prices of both sides, with each operand moved whole.  Pending
    and pinned device data is never brought over."""
    n = made
    to_host = to_device = 0.0
    for buf, elements in bufs:
        if elements > n:
            n = elements
        if buf.host is None:
            if buf.pending is not None or buf.pins is not None:
                return False
            to_host += migration_cost(nbytes_of(buf), HOST)
        elif buf.device is None:
            to_device += migration_cost(nbytes_of(buf), DEVICE)
    if to_host:
        to_host += COSTS["sync"]
    return op_cost(HOST, n) + to_host < op_cost(DEVICE, n) + premium + to_device


# the ledger ---------------------------------------------------------------------------------
class Ledger:
    """A base Buffer's record of its ops since its last move: ``regret`` (microseconds the
    ops would have saved on the other side, never below 0), ``ops`` (counted since the last
    move), ``moves``, and ``mirrored`` (microseconds spent keeping both copies); and the
    sweep its ops are in: ``mark`` (the byte offset of the last op's view), ``steps`` and
    ``span`` (how many times and how many bytes, signed, the offset has moved on in one
    direction) and ``regret0`` (the regret when the sweep began)."""

    __slots__ = ("regret", "ops", "moves", "mirrored", "mark", "steps", "span", "regret0",
                 "seen")

    def __init__(self):
        self.regret = 0.0
        self.ops = 0
        self.moves = 0
        self.mirrored = 0.0  # what updating both copies on small writes has cost
        self.mark = self.steps = self.span = 0
        self.regret0 = 0.0
        self.seen = 0  # the priced-op clock (``_clock``) at its last op

    def follow(self, offset: int) -> None:
        """Note an op on the view at byte ``offset``: a step of the sweep where the offset
        moves on in the sweep's direction, the start of a new sweep where it turns back."""
        step = offset - self.mark
        if step:
            self.mark = offset
            if self.steps and (step > 0) != (self.span > 0):
                self.steps = self.span = 0  # (turned back: a sweep starts here)
                self.regret0 = self.regret
            else:
                self.steps += 1
                self.span += step
        if self.regret < self.regret0:  # (the regret was cleared meanwhile)
            self.regret0 = self.regret

    def regret_ahead(self, offset: int, nbytes: int) -> float:
        """The regret that the sweep's remaining steps, to the end of the Buffer's
        ``nbytes`` in its direction, would add at the rate its past steps added it (0.0
        before SWEEP_MIN_STEPS steps)."""
        if self.steps < SWEEP_MIN_STEPS:
            return 0.0
        per_step = self.span / self.steps
        left = (nbytes - offset) / per_step if per_step > 0 else offset / -per_step
        return (self.regret - self.regret0) / self.steps * left


def copies_to_device(bufs) -> float:
    """What an op on the device pays to copy its host-only operands over (``bufs``:
    (Buffer, elements touched))."""
    return sum(migration_cost(nbytes_of(buf), DEVICE) for buf, _ in bufs
               if buf.device is None)


def copies_to_host(bufs, moving) -> float:
    """What an op on the host would pay, op after op, to copy over its small device-only
    operands that nothing has written or priced since they were made, besides ``moving``
    (``bufs``: (Buffer, elements touched)): the copies and one wait.  Such operands are
    device results made for this op (a row product's result), made again for the next;
    an array that ops write or price, or a large one, would move once, with ``moving``,
    and stay."""
    cost = sum(migration_cost(nbytes_of(buf), HOST) for buf, _ in bufs
               if buf.host is None and buf.version == 0 and buf.ledger is None
               and buf is not moving and nbytes_of(buf) <= THRESHOLD_BYTES)
    return cost + COSTS["sync"] if cost else 0.0


def record(buf, side: str, elements: int, extra: float = 0.0, offset: int = -1) -> bool:
    """Record an op on ``side`` touching ``elements`` of ``buf``'s elements (``extra``: what
    the op pays there besides, in microseconds: operands copied over; ``offset``: the byte
    offset of its view, -1 where unknown); True when the ledger says ``buf`` should now
    move to the other side (the caller moves it, through ``move_with_partners``: in a sweep
    beside others, they are priced and moved together)."""
    global _clock
    if buf.host is not None and buf.device is not None or buf.pending is not None:
        return False  # valid on both sides (ops read either copy at no extra cost); pending
    led = buf.ledger
    if led is None:
        led = buf.ledger = Ledger()
    led.ops += 1
    _clock += 1
    led.seen = _clock
    if offset >= 0:
        led.follow(offset)
        if led.steps == SWEEP_MIN_STEPS and side == DEVICE:
            _sweepers.add(buf)
    there_side = HOST if side == DEVICE else DEVICE
    here, there = COSTS[side], COSTS[there_side]  # (op_cost, inline)
    regret = led.regret + extra + here["op"] - there["op"] + (
        here["per_element"] - there["per_element"]) * elements
    if regret <= 0.0:
        led.regret = 0.0
        return False
    led.regret = regret
    buf.settled = 0  # (ops on it are priced again: _backends._place)
    raw = buf.host if buf.host is not None else buf.device
    nbytes = nbytes_of(buf) if raw is None else raw.nbytes  # (nbytes_of, inline)
    cost = COSTS["transfer"] + COSTS["per_byte"][there_side] * nbytes  # (migration_cost)
    if side == DEVICE and offset >= 0 and led.steps >= SWEEP_MIN_STEPS:
        partners = _swept_with(buf)
        if partners is None or partners and buf.pins is not None:
            return False  # (swept beside a pinned Buffer: its rows would follow each step)
        if partners:
            return _moves_together(buf, led, regret, cost, offset, nbytes, partners)
    if regret < cost and (regret < SWEEP_TRUST * cost or offset < 0 or
                          led.regret_ahead(offset, nbytes) < cost) or (
            led.moves and led.ops < MIN_OPS_BETWEEN_MOVES):
        return False
    if side == DEVICE and nbytes > HOST_CAP:
        return False
    return not (buf.pins and other(side) not in buf.pins)


_clock = 0  # priced ops so far (``Ledger.seen``)
_sweepers = weakref.WeakSet()  # device Buffers whose ledgers reached a sweep
_moving_with = (None, ())  # (a Buffer, the partners ``record`` found to move with it)


def _swept_with(buf):
    """The other large device-only Buffers swept beside ``buf`` (in a sweep, with an op
    within the last ``PARTNER_WINDOW`` priced ops); None where one of them is pinned."""
    partners = []
    for other_buf in list(_sweepers):
        if other_buf is buf:
            continue
        if other_buf.host is not None or other_buf.device is None:
            _sweepers.discard(other_buf)  # (moved, or gone pending: a sweeper no more)
            continue
        led = other_buf.ledger
        if led is None or led.steps < SWEEP_MIN_STEPS or _clock - led.seen > PARTNER_WINDOW:
            continue
        if other_buf.pins is not None:
            return None
        partners.append(other_buf)
    return partners


def _moves_together(buf, led, regret, cost, offset, nbytes, partners) -> bool:
    """``record``'s rule for ``buf`` (regret ``regret``, move cost ``cost``, at ``offset``)
    swept beside ``partners``: the summed regrets against the summed costs, the sweeps'
    predictions summed too.  True where all move (``move_with_partners`` takes them)."""
    global _moving_with
    if led.moves and led.ops < MIN_OPS_BETWEEN_MOVES or nbytes > HOST_CAP:
        return False
    total, ahead = regret, led.regret_ahead(offset, nbytes)
    for other_buf in partners:
        other_led, size = other_buf.ledger, other_buf.device.nbytes
        if size > HOST_CAP or other_led.moves and other_led.ops < MIN_OPS_BETWEEN_MOVES:
            return False
        total += other_led.regret
        ahead += other_led.regret_ahead(other_led.mark, size)
        cost += migration_cost(size, HOST)
    if total < cost and (total < SWEEP_TRUST * cost or ahead < cost):
        return False
    _moving_with = (buf, partners)
    return True


def move_with_partners(buf, to: str) -> None:
    """``move(buf, to)`` where ``record`` said so: with it, the Buffers it is swept beside
    when the move is theirs together (``_moves_together``)."""
    global _moving_with
    moving, partners = _moving_with
    _moving_with = (None, ())
    move(buf, to)
    if moving is buf:
        for other_buf in partners:
            if other_buf.host is None and other_buf.device is not None:
                move(other_buf, to)


def write_source_made_here(buf, n: int, along: float):
    """``(extra, along)`` for a row write of ``n`` elements into ``buf`` (on the device)
    from a small fresh device result that would cost ``along`` to copy to the host: where
    ``buf`` is swept beside movable partners, the result is made each step from their
    rows, and would be made on the host with them; so the write is charged the op that
    made it instead of its copy."""
    led = buf.ledger
    if along and led is not None and led.steps >= SWEEP_MIN_STEPS and _swept_with(buf):
        return op_cost(DEVICE, n) - op_cost(HOST, n), 0.0
    return 0.0, along


def move(buf, to: str) -> None:
    """Move ``buf``'s data to side ``to`` (one copy), dropping the other side's copy.
    RuntimeError where an export pins the data to the other side (the copy made there
    would not be kept, and the data would be left nowhere)."""
    if buf.pins and other(to) in buf.pins:
        raise RuntimeError(f"this array's data is pinned to the {other(to)} by an export; "
                           f"it cannot be moved to the {to}")
    if (buf.host if to == HOST else buf.device) is None:
        buf.on(to)  # (through the Buffer's hook: a pending buffer is computed first)
    setattr(buf, other(to), None)
    buf.settled = 0
    led = buf.ledger
    if led is None:  # (a moved Buffer has a ledger: copies_to_host tells it from a result)
        buf.ledger = Ledger()
    else:
        led.regret, led.ops = 0.0, 0
        led.steps = led.span = 0
        led.regret0 = 0.0
        led.moves += 1


def pin(buf, side: str, reason) -> None:
    """Keep ``buf``'s data on ``side`` only, for ``reason`` (an export through which it may
    be written at any time, so no copy on the other side could be trusted): moved there
    now; until unpinned, reads from the other side get copies that are not kept."""
    move(buf, side)
    if buf.pins is None:
        buf.pins = {}
    buf.pins.setdefault(side, set()).add(reason)
    buf.settled = 0


def unpin(buf, side: str, reason) -> None:
    reasons = (buf.pins or {}).get(side)
    if reasons:
        reasons.discard(reason)
        if not reasons:
            del buf.pins[side]
        if not buf.pins:
            buf.pins = None



class Chaos:
    """``CUPYNUM_PLACEMENT=random`` (a test mode): before each op, each operand's data is
    moved at random (seeded, so a failing run repeats): to the host, to the device, or
    copied so that it is valid on both; pinned data stays where its pins hold it."""

    def __init__(self, seed: int):
        import random

        self._random = random.Random(seed)

    def __call__(self, bufs) -> None:
        for buf, _ in bufs:
            choice = self._random.randrange(4)
            if choice == 0 or buf.pending is not None:
                continue
            if choice == 3:
                for side in (HOST, DEVICE):
                    if (buf.host if side == HOST else buf.device) is None:
                        resolve(buf, side)
                continue
            to = HOST if choice == 1 else DEVICE
            if buf.pins and other(to) in buf.pins:
                continue
            move(buf, to)
