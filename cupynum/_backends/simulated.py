"""The simulated device (``CUPYNUM_BACKEND=simulated``): a device backend without a GPU.

Its "device memory" is host byte buffers of its own: ``from_host`` and ``to_host`` copy, so
no NumPy array a user holds ever shares bytes with a cupynum array, as on a GPU.  Every
operation runs the host backend's NumPy code (this class inherits it, reading arrays through
its own accessor, ``device_view``), and counts in ``counters.py`` what a GPU would have
paid: one launch per compute operation of the contract (``base.COMPUTE_OPS``), the bytes of
every host-to-device (``from_host``, ``write_host``) and device-to-host (``to_host``) copy,
and a sync for ``synchronize`` and for every ``to_host`` (a read waits for the device).
The small host reads some operations make (a count, an info flag, an out-of-bounds index)
are not counted.

CI runs the whole suite on it: it proves the contract complete (the frontend never reaches
past it to NumPy-visible memory) and lets data placement be tested without a GPU.
"""
from __future__ import annotations

import functools

import numpy as np

from . import counters, fusion
from .base import COMPUTE_OPS, Backend
from . import buffer as buffers
from .buffer import Buffer
from .host import HostBackend, elements


def device_view(a) -> np.ndarray:
    """The NumPy view of array ``a``'s elements in simulated device memory (no copy): the
    simulated backend's one read of an array's allocation (its Buffer's device copy)."""
    raw = a._buf.device
    if raw is None and a._size:  # host-only (copied over and kept), pending, or new
        raw = a._buf.on_device()
    return elements(a, raw)


_COUNTS = counters.COUNTS


class SimulatedBackend(HostBackend):
    name = "simulated"
    side = "device"
    host_memory = False  # its bytes stand for device memory: host views are copies
    gram_svd = True  # the linalg paths a GPU takes
    _view = staticmethod(device_view)

    @staticmethod
    def _wrap(raw) -> Buffer:
        """A Buffer whose (simulated) device copy is the new allocation ``raw``."""
        return Buffer(None, raw, buffers.born_settled(raw.nbytes))

    @staticmethod
    def _raw(buf: Buffer):
        """The allocation of Buffer ``buf`` that this backend reads (its device copy)."""
        return buf.on_device()

    def from_host(self, host: np.ndarray):
        _COUNTS["h2d_bytes"] += host.nbytes
        return super().from_host(host)

    def to_host(self, a, out=None) -> np.ndarray:
        _COUNTS["syncs"] += 1
        _COUNTS["d2h_bytes"] += a._size * a.dtype.itemsize
        return super().to_host(a, out)

    def write_host(self, a, host: np.ndarray) -> None:
        _COUNTS["h2d_bytes"] += a._size * a.dtype.itemsize
        super().write_host(a, host)

    def lazy_reads(self) -> bool:
        return True

    def copy_bytes(self, buf, offset: int, nbytes: int):
        _COUNTS["launches"] += 1  # (a device copy: on a GPU it costs what a launch does)
        return super().copy_bytes(buf, offset, nbytes)

    def synchronize(self) -> None:
        fusion.flush()
        _COUNTS["syncs"] += 1

    # Elementwise work on device data is deferred when fusion is on (fusion.py): the entry
    # points below make the output pending, and ``run_fused`` computes a flushed graph by
    # the host code, node by node, counted as the one launch a fused kernel is.
    def contiguous_launcher(self, op, operand_dtypes):
        inner = super().contiguous_launcher(op, operand_dtypes)
        launch = _counted(inner)
        if hasattr(inner, "new"):
            new = inner.new

            def counted_new(*args):  # (x0, .., out, n, nbytes): a launch when n > 0
                _COUNTS["launches"] += bool(args[-2])
                new(*args)

            launch.new = fusion.deferring_new(self, op, counted_new) if fusion.ENABLED \
                else counted_new
        return launch

    def layout_launcher(self, op, ins, outs):
        inner = super().layout_launcher(op, ins, outs)
        if inner is None:
            return None
        if fusion.ENABLED:
            return fusion.deferring_layout(self, op, ins, outs, _counted(inner))
        return _counted(inner)

    def copy(self, src, dst) -> None:
        if not (src._buf.pending is not None and fusion.sink(src, dst)):  # (setitem as sink)
            _COUNTS["launches"] += 1
            super().copy(src, dst)

    # A reduction of a pending expression computes it in its loads (fusion.reduce: one
    # launch, counted by run_fused_reduce); else its input is computed first (counted).
    def reduce(self, op, src, out, axes, initial=None) -> None:
        args = (op, src, out, axes, initial)
        if src._buf.pending is None or not fusion.reduce("reduce", src, args):
            _COUNTS["launches"] += 1
            super().reduce(*args)

    def arg_reduce(self, kind, src, out, axes) -> None:
        args = (kind, src, out, axes)
        if src._buf.pending is None or not fusion.reduce("arg_reduce", src, args):
            _COUNTS["launches"] += 1
            super().arg_reduce(*args)

    def sqdev_sum(self, src, mean, out, axes) -> None:
        args = (src, mean, out, axes)
        if src._buf.pending is None or not fusion.reduce("sqdev_sum", src, args):
            _COUNTS["launches"] += 1
            super().sqdev_sum(*args)

    def elementwise(self, op, ins, outs) -> None:
        if not (fusion.ENABLED and outs[0]._size >= fusion.MIN_ELEMENTS and len(outs) == 1
                and len(op.loop) == op.nin + 1 and fusion.deferrable_into(outs[0])
                and fusion.defer(self, op, ins, outs[0], into=outs[0]._buf)):
            _COUNTS["launches"] += 1
            super().elementwise(op, ins, outs)


def _counted(method):
    """``method``, counting one launch per call."""

    @functools.wraps(method)
    def run(*args, **kwargs):
        _COUNTS["launches"] += 1
        return method(*args, **kwargs)

    return run


# Every compute operation the host code implements counts one launch (the contract's
# defaults, e.g. ``gather_flat`` declining, compute nothing and count nothing).
for _name in COMPUTE_OPS:
    _impl = getattr(HostBackend, _name)
    if _impl is not getattr(Backend, _name) and _name not in vars(SimulatedBackend):
        setattr(SimulatedBackend, _name, _counted(_impl))
del _name, _impl
