"""Public CUDA API, shaped like ``cupy.cuda``: devices, streams, events, the memory pool.

Importable everywhere: on a machine without a driver ``is_available()`` is False and
constructing a ``Device``, ``Stream`` or ``Event`` raises a RuntimeError that says why.
cuda.bindings is imported only when a GPU is actually used.

cupynum drives device 0 through its primary context (the one the CUDA runtime, CuPy and
PyTorch share).  The current stream is per thread; by default it is the legacy default
stream (``Stream.null``), whose work orders against every blocking stream, as in CuPy.
"""
from __future__ import annotations

import threading

from .._backends import fusion as _fusion
from .._backends.cuda import driver as _driver
from .._backends.cuda.driver import CUDAError
from .._backends.cuda.memory import OutOfMemoryError

__all__ = [
    "CUDAError", "Device", "Event", "ExternalStream", "OutOfMemoryError", "Stream",
    "get_current_stream", "get_default_memory_pool", "get_elapsed_time", "is_available",
    "synchronize",
]


def is_available() -> bool:
    """True when a CUDA driver and at least one GPU are usable (probed once per process)."""
    return _driver.available()


def _rt():
    runtime = _rt_without_context()
    runtime.init()
    return runtime


def _rt_without_context():
    """The runtime module, the driver checked but no context made (what asks the driver
    only: a device count, a Device object, ``x.device``)."""
    if not _driver.available():
        raise RuntimeError(f"CUDA is not available: {_driver.reason() or 'no driver'}")
    from .._backends.cuda import runtime

    return runtime


class Device:
    """A CUDA device.  cupynum computes on device 0; other ids can be queried only."""

    def __init__(self, device=None):
        rt = _rt_without_context()
        self.id = 0 if device is None else int(device)
        n = rt.device_count()
        if not 0 <= self.id < n:
            raise ValueError(f"invalid device id {self.id} ({n} device(s) present)")

    @property
    def compute_capability(self) -> str:
        """As in CuPy: ``'90'`` for sm_90."""
        major, minor = _rt().compute_capability(self.id)
        return f"{major}{minor}"

    @property
    def name(self) -> str:
        return _rt().device_name(self.id)

    @property
    def total_memory(self) -> int:
        return _rt().total_memory(self.id)

    @property
    def multiprocessor_count(self) -> int:
        return _rt().multiprocessor_count(self.id)

    @property
    def mem_info(self) -> tuple[int, int]:
        """(free, total) bytes now."""
        self._check_current()
        return _rt().mem_info()

    def attribute(self, name: str) -> int:
        """A ``CU_DEVICE_ATTRIBUTE_<name>`` value, e.g. ``'MAX_THREADS_PER_BLOCK'``."""
        return _rt().device_attribute(name, self.id)

    def _check_current(self):
        if self.id != 0:
            raise NotImplementedError("cupynum runs on device 0 only")

    def use(self) -> None:
        self._check_current()

    def synchronize(self) -> None:
        """Wait for all work on this device."""
        self._check_current()
        synchronize()

    def __enter__(self):
        self.use()
        return self

    def __exit__(self, *exc):
        return False

    def __int__(self):
        return self.id

    def __index__(self):
        return self.id

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("cupynum.cuda.Device", self.id))

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


_stack = threading.local()  # per-thread stack of (handle, owner) saved by ``with stream``


class Stream:
    """A CUDA stream.  ``with stream:`` makes it the thread's current stream until exit.

    ``Stream()`` creates a blocking stream (it orders against ``Stream.null``);
    ``Stream(non_blocking=True)`` one that does not; ``Stream(null=True)`` is the legacy
    default stream.  The per-thread default stream (``ptds=True``) is not supported: its one
    handle names a different stream in each thread, which the pool's per-stream reuse of
    freed blocks cannot tell apart.
    """

    null: "Stream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False):
        self._owned = False
        self.ptr = 0
        rt = _rt()
        if null:
            return
        if ptds:
            raise NotImplementedError("cupynum does not support the per-thread default stream")
        self.ptr = rt.create_stream(non_blocking)
        self._owned = True

    @classmethod
    def _wrap(cls, handle: int) -> "Stream":
        s = cls.__new__(cls)
        s.ptr, s._owned = int(handle), False
        return s

    def __del__(self):
        if getattr(self, "_owned", False) and self.ptr:
            try:
                from .._backends.cuda import memory, runtime

                if memory._shutdown:
                    return
                if memory._pool is not None:
                    memory._pool.release_stream(self.ptr)  # queued frees, before the stream goes
                runtime.destroy_stream(self.ptr)
            except Exception:
                pass
            self._owned = False

    def use(self) -> "Stream":
        """Make this the thread's current stream (no restore; see ``with``)."""
        _rt().set_current_stream(self.ptr, self)
        return self

    def __enter__(self):
        rt = _rt()
        st = getattr(_stack, "s", None)
        if st is None:
            st = _stack.s = []
        st.append((rt.current_stream(), rt.current_stream_owner()))
        rt.set_current_stream(self.ptr, self)
        return self

    def __exit__(self, *exc):
        from .._backends.cuda import runtime

        _fusion.flush(self.ptr)  # the block's pending work runs on its stream
        handle, owner = _stack.s.pop()
        runtime.set_current_stream(handle, owner)
        return False

    def synchronize(self) -> None:
        """Wait for all work queued on this stream (pending expressions made on it run)."""
        rt = _rt()
        _fusion.flush(self.ptr)
        rt.synchronize_stream(self.ptr)

    @property
    def done(self) -> bool:
        """True when all work queued on this stream has completed."""
        return _rt().stream_query(self.ptr)

    def record(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one if None) on this stream and return it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait for ``event`` (the host does not block)."""
        _rt().stream_wait_event(self.ptr, event.ptr)

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return hash(("cupynum.cuda.Stream", self.ptr))

    def __repr__(self):
        return f"<Stream 0x{self.ptr:x}>"


Stream.null = Stream._wrap(0)  # no driver call: importable without a GPU


class ExternalStream(Stream):
    """Wrap a stream handle created elsewhere (CuPy, PyTorch, cuda.core); never destroyed."""

    def __init__(self, ptr: int):
        _rt()
        self.ptr, self._owned = int(ptr), False


def get_current_stream() -> Stream:
    """The thread's current stream (``Stream.null`` unless a stream is in use)."""
    rt = _rt()
    owner = rt.current_stream_owner()
    if isinstance(owner, Stream):
        return owner
    h = rt.current_stream()
    return Stream.null if h == 0 else Stream._wrap(h)


class Event:
    """A CUDA event.  Signature as CuPy's ``Event(block, disable_timing, interprocess)``;
    ``timing=False`` is accepted for ``disable_timing=True``."""

    def __init__(self, block: bool = False, disable_timing: bool = False,
                 interprocess: bool = False, *, timing: bool | None = None):
        self._owned = False
        if timing is not None:
            disable_timing = not timing
        self.ptr = _rt().create_event(timing=not disable_timing, blocking=block,
                                      interprocess=interprocess)
        self._owned = True

    def __del__(self):
        if getattr(self, "_owned", False):
            try:
                from .._backends.cuda import memory, runtime

                if not memory._shutdown:
                    runtime.destroy_event(self.ptr)
            except Exception:
                pass
            self._owned = False

    def record(self, stream: Stream | None = None) -> None:
        """Capture the work queued so far on ``stream`` (default: the current stream);
        pending expressions made on it run first."""
        rt = _rt()
        _fusion.flush(rt.current_stream() if stream is None else stream.ptr)
        rt.record_event(self.ptr, None if stream is None else stream.ptr)

    def synchronize(self) -> None:
        """Wait until the captured work has completed."""
        _rt().synchronize_event(self.ptr)

    def query(self) -> bool:
        """True when the captured work has completed (or nothing was recorded)."""
        return _rt().event_query(self.ptr)

    @property
    def done(self) -> bool:
        return self.query()

    def __repr__(self):
        return f"<Event 0x{self.ptr:x}>"


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds between two recorded timing events (waits for ``end_event``)."""
    rt = _rt()
    rt.synchronize_event(end_event.ptr)
    return rt.elapsed_time(start_event.ptr, end_event.ptr)


def synchronize() -> None:
    """Wait for all work on the device (pending expressions run first).  Without a context
    (nothing has used the device: every array on the host) there is none, and none is made."""
    if _driver.available() and not _rt_without_context().is_initialized():
        return
    rt = _rt()
    _fusion.flush()
    rt.synchronize()


def get_default_memory_pool():
    """The device memory pool: ``used_bytes()``, ``total_bytes()``, ``free_all_blocks()``."""
    _rt()
    from .._backends.cuda import memory

    return memory.get_pool()
