"""The one launch mechanism of the CUDA backend: a prepared parameter block and a driver
launch, used by every kernel family (elementwise, reductions and scans, the hand-written
kernels of ``kernels_util``, ``ufunc.at``).

``Prepared(key, func, dtypes, fmts)`` holds a loaded kernel, its ``runtime.ParamBlock`` and
a ``struct`` packer that writes every parameter in one ``pack_into``, and the arguments of
``cuLaunchKernel`` that never change (a ``LaunchKit``).  ``p.launch(values, grid, block)``
packs and launches; the hot paths' generated launchers (``elementwise.contiguous_launcher``)
inline the same steps from ``INLINE_LAUNCH`` with ``inline_names(p)``, so that a call is
one Python frame.

The block is filled, then the launch reads it (the driver copies the parameters during
``cuLaunchKernel``), so one thread at a time may use it: ``token`` is a one-item list, and
whoever pops the item owns the block until it appends it back (``list.pop`` and ``append``
are atomic, and cost half of a lock's acquire + release).  A thread that finds the list
empty packs into a block of its own (``launch_alone``) instead of waiting.

Every launch goes through ``driver()``: the CPU tests set ``_drv`` to run the kernels
there.  Every successful launch ticks ``counters.LAUNCH_TICKS`` once; a launch that the
fast entry refuses is retried through ``runtime.launch`` (a fresh thread binds the context
first), which counts it (or raises).
"""
from __future__ import annotations

import ctypes
import struct
from typing import NamedTuple

import numpy as np

from ..counters import LAUNCH_TICKS
from . import runtime

__all__ = ["INLINE_LAUNCH", "LaunchKit", "Prepared", "driver", "formats", "inline_names",
           "launch_kit", "packer"]

# struct codes of the parameter types, by (dtype kind, itemsize); complex is two components
_CODES = {("b", 1): "?", ("i", 1): "b", ("u", 1): "B", ("i", 2): "h", ("u", 2): "H",
          ("i", 4): "i", ("u", 4): "I", ("i", 8): "q", ("u", 8): "Q", ("f", 2): "e",
          ("f", 4): "f", ("f", 8): "d", ("c", 8): "2f", ("c", 16): "2d"}


def formats(dtypes):
    """The ``struct`` format of each parameter slot of these dtypes (a subarray slot as a
    count, complex as (real, imag)), or None where a slot is a struct of fields, which
    ``struct`` cannot write."""
    out = []
    for dt in dtypes:
        dt = np.dtype(dt)
        base = dt.base if dt.shape else dt
        code = _CODES.get((base.kind, base.itemsize))
        if code is None or dt.fields:
            return None
        count = int(np.prod(dt.shape)) if dt.shape else 1
        out.append(code if count == 1 else f"{count * int(code[:-1] or 1)}{code[-1]}")
    return out


def packer(dtypes, fmts=None):
    """``(ParamBlock, pack)`` for kernel parameters of these dtypes: ``pack(buf, 0,
    *values)`` writes every slot in one ``struct.pack_into``, on the block's slot offsets.
    ``fmts``: the format of each slot (default ``formats(dtypes)``); a family passes its
    own where one slot takes mixed values (the elementwise dims: unsigned shape, signed
    strides).  Needs no GPU."""
    pb = runtime.ParamBlock(dtypes)
    fmts = formats(pb.dtypes) if fmts is None else fmts
    if fmts is None:  # a struct slot: the slow way, through NumPy views
        def pack(buf, offset, *values):
            pb.set_values(values)
        return pb, pack
    parts, pos = ["<"], 0
    for off, fmt, dt in zip(pb.offsets, fmts, pb.dtypes):
        if off > pos:
            parts.append(f"{off - pos}x")
        if struct.calcsize("<" + fmt) != dt.itemsize:  # the format and NumPy's layout agree
            raise AssertionError(f"param format {fmt!r} != {dt}")
        parts.append(fmt)
        pos = off + dt.itemsize
    return pb, struct.Struct("".join(parts)).pack_into


class LaunchKit(NamedTuple):
    """How launches of one kernel call the driver: ``raw(func, gx, gy, gz, bx, by, bz,
    shmem, stream, params, extra)``; ``stream0`` is the default stream in the form ``raw``
    takes, ``convert`` turns a stream handle (or a parameter-block address) into that form;
    ``returns_tuple``: ``raw`` returns ``(err,)`` rather than ``err``."""
    raw: object
    func: object
    params: object
    stream0: object
    extra: object
    returns_tuple: bool
    convert: object


def launch_kit(kernel, addr) -> LaunchKit:
    """How launches of ``kernel`` with the parameter block at ``addr`` call the driver.
    With the real driver: cuda.bindings with a prebuilt ``CUfunction`` and ``CUstream(0)``,
    ctypes with ``c_void_p`` handles, or the second-generation bindings with ints
    (``runtime.LAUNCH``).  A stand-in driver (the CPU tests) gets the kernel, the int
    address and int streams, as ``runtime.launch`` would."""
    raw = driver()[0]
    if raw is not runtime.bindings_launch():
        return LaunchKit(raw, kernel, addr, 0, 0, True, int)
    if runtime.LAUNCH in ("v2", "auto") and runtime.v2_launch() is not None:  # plain ints
        return LaunchKit(runtime.v2_launch(), runtime.kernel_function(kernel), addr, 0, 0,
                         False, int)
    if runtime.LAUNCH == "ctypes":
        vp = ctypes.c_void_p
        return LaunchKit(runtime.ctypes_launch(), vp(runtime.kernel_function(kernel)),
                         vp(addr or None), None, None, False, vp)
    return LaunchKit(raw, runtime.function_object(kernel), addr, runtime.DEFAULT_STREAM, 0,
                     True, int)


_drv = None


def driver():
    """``(cuLaunchKernel, runtime.launch, runtime.current_stream)``: every launch goes
    through these (one place, so that tests can run the kernels on the CPU instead).
    ``cuLaunchKernel`` returns ``(err,)``; on an error ``runtime.launch`` launches again,
    binding the context first in a fresh thread, and raises if that fails too."""
    global _drv
    if _drv is None:
        runtime.init()
        _drv = (runtime.bindings_launch(), runtime.launch, runtime.current_stream)
    return _drv


def _dim3(d):
    """(x, y, z) of a grid or block given as an int (or NumPy integer) or a 1-3 tuple."""
    if not isinstance(d, (tuple, list)):
        return int(d), 1, 1
    d = (*d, 1, 1)
    return int(d[0]), int(d[1]), int(d[2])


class Prepared:
    """A loaded kernel and its parameter block (see the module docstring).  ``key`` is what
    the family built it for (a ``KernelSpec``, a reduction's (unit, kind), a ``Kernel``).
    ``kit_items`` is ``kit`` as a plain tuple, which the per-call path unpacks (unpacking
    a NamedTuple costs about four times as much)."""

    __slots__ = ("key", "func", "fmts", "pb", "pack", "buf", "addr", "token", "kit",
                 "kit_items", "__weakref__")

    def __init__(self, key, func, dtypes, fmts=None):
        self.key = key
        self.func = func
        self.fmts = formats(dtypes) if fmts is None else fmts  # None: a struct slot
        self.pb, self.pack = packer(dtypes, self.fmts)
        # The block's bytes (writable, 8-byte aligned) as a memoryview: pack_into gets the
        # buffer of a memoryview in half the time it takes for a NumPy array.
        self.buf = memoryview(self.pb._data).cast("B")
        self.addr = self.pb.address
        self.token = [True]
        self.kit = launch_kit(func, self.addr)
        self.kit_items = tuple(self.kit)

    def launch(self, values, grid, block, shmem: int = 0) -> None:
        """Pack ``values`` (one per parameter, complex scalars as two, a subarray slot's
        values flattened) and launch on the current stream.  ``grid``, ``block``: an int
        or a 1-3 tuple."""
        try:
            self.token.pop()
        except IndexError:  # another thread is between its pack and its launch
            return self.launch_alone(values, grid, block, shmem)
        try:
            self.pack(self.buf, 0, *values)
            _call(self, self.kit_items[2], self.addr, grid, block, shmem)
        finally:
            self.token.append(True)

    def launch_alone(self, values, grid, block, shmem: int = 0) -> None:
        """Launch through a parameter block of this call's own (for contention: rare)."""
        pb, pack = packer(self.pb.dtypes, self.fmts)
        pack(memoryview(pb._data).cast("B"), 0, *values)
        _call(self, self.kit.convert(pb.address), pb.address, grid, block, shmem)

    def launch_converted(self, slot_values, grid, block, shmem: int = 0) -> None:
        """Launch with one value per slot converted by NumPy (into a block of this call's
        own): for values ``struct`` refuses, such as a 0-d array or a negative int in an
        unsigned slot."""
        pb = runtime.ParamBlock(self.pb.dtypes)
        pb.set_values(slot_values)
        _call(self, self.kit.convert(pb.address), pb.address, grid, block, shmem)


def _call(p: Prepared, params, addr: int, grid, block, shmem: int) -> None:
    raw, func, _, s0, extra, tup, conv = p.kit_items
    _, slow, stream = _drv or driver()
    if grid.__class__ is int:
        gx, gy, gz = grid, 1, 1
    elif grid.__class__ is tuple and len(grid) == 2:  # (the reductions' grids)
        (gx, gy), gz = grid, 1
    else:
        gx, gy, gz = _dim3(grid)
    if block.__class__ is int:
        bx, by, bz = block, 1, 1
    else:
        bx, by, bz = _dim3(block)
    try:
        err = raw(func, gx, gy, gz, bx, by, bz, shmem,
                  conv(stream()) if runtime.nondefault_streams else s0, params, extra)
    except Exception:  # noqa: BLE001 - the 'v2' entry raises instead of returning
        err = (True,) if tup else True
    if tup:
        err = err[0]
    if err:  # retry (a fresh thread) or raise; runtime.launch counts it
        slow(p.func, (gx, gy, gz), (bx, by, bz), shmem, stream(), addr)
    else:
        next(LAUNCH_TICKS)


# The steps of ``Prepared.launch`` as source lines, for generated launchers to inline (one
# Python frame per call).  Format fields: ``values`` (the packed values, comma-separated,
# as expressions of the launcher's arguments), ``grid`` (an expression for the grid's x,
# named ``g``), ``block`` (threads, an int), ``streams`` (an expression that is nonzero
# while some thread uses a non-default stream), ``index`` ("[0]" where the entry returns
# ``(err,)``, else "").  ``direct``: the same values read the quick way, which raises
# AttributeError where some operand's data is not on the device yet (then ``values`` are
# packed: they bring it there).  The names it reads are ``inline_names(p)``.
INLINE_LAUNCH = """\
    try:
        take()  # the parameter block is ours (see launch.Prepared)
    except IndexError:
        return alone(({values},), g, {block})
    try:
        try:
            pack(pbuf, 0, {direct})
        except AttributeError:  # (an operand pending, or on the host: see ``direct``)
            pack(pbuf, 0, {values})
        try:
            err = raw(func, g, 1, 1, {block}, 1, 1, 0, conv(stream()) if {streams} else s0,
                      params, extra){index}
        except Exception:  # noqa: BLE001 - the 'v2' entry raises instead of returning
            err = True
        if err:
            slow(kernel, g, {block}, 0, stream(), addr)  # retry or raise (it counts)
        else:
            tick(ticks)
    finally:
        give(True)
"""


def inline_names(p: Prepared) -> dict:
    """The names ``INLINE_LAUNCH`` reads, bound to ``p``'s block and kit."""
    raw, func, params, s0, extra, _, conv = p.kit_items
    _, slow, stream = driver()
    return {"take": p.token.pop, "give": p.token.append, "alone": p.launch_alone,
            "pack": p.pack, "pbuf": p.buf, "raw": raw, "func": func, "params": params,
            "s0": s0, "extra": extra, "conv": conv, "stream": stream, "kernel": p.func,
            "addr": p.addr, "slow": slow, "tick": next, "ticks": LAUNCH_TICKS,
            "rt": runtime}
