"""CUDA runtime layer: context, thread-local current stream, modules, launches, events.

Built directly on ``cuda.bindings.driver`` (no cuda.core objects on hot paths): every
binding call returns a tuple whose first item is a ``CUresult`` (an int subclass, so a plain
truth test detects failure).

Context.  cupynum uses the *primary context of one device* (``init(device)``, ordinal 0
unless the first ``init`` names another; ``CUDA_VISIBLE_DEVICES`` chooses which GPUs the
ordinals count), the same one the CUDA runtime (and so cuBLAS, cuFFT, CuPy, PyTorch) uses, so handles and pointers interoperate.  A CUDA context is
current per *thread*: ``_ThreadState`` is a ``threading.local`` whose ``__init__`` runs on the
first access from each thread and binds the context there (``cuCtxSetCurrent``).  Every entry
point that talks to the driver reads ``_tls`` first, which makes that binding automatic.

Streams.  Handles are plain ints (``CUstream`` addresses).  The default current stream is the
legacy default stream ``0``, as in CuPy: it orders against every blocking stream, which keeps
``with Stream():`` semantics simple and correct.  The current stream is thread-local;
``current_stream()`` is one attribute read.  ``stream_owner`` rides along: the Python object
(if any) that owns the stream, which buffers keep alive so a stream is never destroyed while
memory is still queued for release on it (see memory.py).

``nondefault_streams`` counts the threads whose current stream is not the legacy default
stream: while it is 0 (the common case) a hot path knows the stream is 0 without reading
the thread-local (one module attribute read instead of a function call).

Launch.  ``launch`` takes the address of a prepacked ``void*[]`` (``ParamBlock.address``):
cuda.bindings passes an int ``kernelParams`` straight through as ``void**`` (see
``_HelperKernelParams`` in cuda/bindings/_lib/utils.pxi), the cheapest form per launch.
The bindings convert every other handle argument per call: an int stream becomes a new
``CUstream`` object and a ``CUkernel`` a new ``CUfunction``, so the hot launchers pass
objects built once (``function_object``, ``DEFAULT_STREAM``).  ``CUPYNUM_LAUNCH=ctypes``
calls libcuda's ``cuLaunchKernel`` through ctypes instead (no argtypes: ctypes converts
ints and prebuilt ``c_void_p`` objects in C, while argtypes cost a Python-level
``from_param`` per argument); which is faster depends on the host and the bindings
version, so benchmarks/launch_micro.py measures both.  ``CUPYNUM_LAUNCH=v2`` calls the
second-generation bindings' ``launch_kernel`` with plain ints (``v2_launch``): no handle
objects and no ``CUresult`` enum per call; the default, ``auto``, takes it where the
installed cuda-bindings has it (13.5 does, 13.3 not).  benchmarks/probes/percall_probe.py
times all three.
"""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from ..counters import COUNTS, LAUNCH_TICKS
from . import driver as _drv
from .driver import CUDAError, check

_d = None  # cuda.bindings.driver once init() ran
_ordinal = 0  # the device ordinal of the context (init's argument)
_dev = None  # its CUdevice
_ctx = None  # its primary CUcontext
_ready = False
_init_lock = threading.Lock()
_cuLaunchKernel = None
_NOT_READY = 600  # CUDA_ERROR_NOT_READY
# How the elementwise launchers call cuLaunchKernel: 'bindings', 'ctypes', 'v2', or 'auto'
# (the default: 'v2' where this cuda-bindings has it, else 'bindings'; see above and
# ``v2_launch``).
LAUNCH = os.environ.get("CUPYNUM_LAUNCH", "auto").strip().lower()
nondefault_streams = 0  # threads whose current stream is not 0 (see the module docstring)
_stream_count_lock = threading.Lock()
DEFAULT_STREAM = None  # CUstream(0), built once by init()


def _bindings():
    """cuda.bindings.driver, after checking the probe (never touch it without a driver)."""
    if _forked:
        raise RuntimeError(FORK_MESSAGE)
    if _d is not None:
        return _d
    if not _drv.available():
        raise RuntimeError(f"CUDA is not available: {_drv.reason() or 'no driver'}")
    from cuda.bindings import driver

    return driver


class _ThreadState(threading.local):
    """Per-thread state; ``__init__`` runs once in each thread, on its first access."""

    def __init__(self):
        (err,) = _d.cuCtxSetCurrent(_ctx)
        check(err, "cuCtxSetCurrent")
        self.stream = 0  # legacy default stream
        self.stream_owner = None
        self.cur = (0, None)  # (stream, owner) in one read, for the allocator's hot path


class _NotInitialised:
    """Stands in for ``_tls`` until ``init()``: the first read initialises the runtime."""

    @property
    def stream(self):
        init()
        return _tls.stream

    @property
    def stream_owner(self):
        init()
        return _tls.stream_owner

    @property
    def cur(self):
        init()
        return _tls.cur


_tls = _NotInitialised()


def init(device: int | None = None) -> None:
    """Retain the primary context of device ``device`` (an ordinal; 0 when the first call
    names none) and make it current in this thread.  Later calls return at once; naming
    another device than the one initialised raises RuntimeError, as does the lack of a
    usable driver/GPU (see ``driver.reason()``).
    """
    global _d, _dev, _ctx, _tls, _ready, _cuLaunchKernel, DEFAULT_STREAM, _ordinal
    if _ready:
        if device is not None and int(device) != _ordinal:
            raise RuntimeError(f"the CUDA runtime is initialised on device {_ordinal}, "
                               f"not {int(device)}")
        return
    if _forked:
        raise RuntimeError(FORK_MESSAGE)
    with _init_lock:
        if _ready:
            return init(device)
        d = _bindings()
        ordinal = _ordinal if device is None else int(device)
        err, dev = d.cuDeviceGet(ordinal)
        check(err, "cuDeviceGet")
        err, ctx = d.cuDevicePrimaryCtxRetain(dev)
        check(err, "cuDevicePrimaryCtxRetain")
        _d, _dev, _ctx, _ordinal = d, dev, ctx, ordinal
        _cuLaunchKernel = d.cuLaunchKernel
        DEFAULT_STREAM = d.CUstream(0)
        _tls = _ThreadState()  # binds the context in this thread
        _ready = True
    if LAUNCH in ("v2", "auto"):
        v2_launch()  # its import (~10 ms) belongs to start-up, not to a first call


def is_initialized() -> bool:
    return _ready


def device_ordinal() -> int:
    """The ordinal of the device whose context cupynum uses (``init``'s argument)."""
    return _ordinal


def ensure_thread() -> None:
    """Bind the context in the calling thread (no-op after the first call per thread)."""
    _tls.stream


def rebind() -> bool:
    """Error-path helper: make our context current in this thread if it is not (a thread
    whose first driver call skipped ``_tls``, or code that switched contexts).  Returns
    True when it changed something, i.e. when retrying the failed call makes sense."""
    init()
    err, cur = _d.cuCtxGetCurrent()
    if not err and int(cur) == int(_ctx):
        return False
    _tls.stream  # this thread's first touch binds the context
    err, cur = _d.cuCtxGetCurrent()
    if err or int(cur) != int(_ctx):
        (err,) = _d.cuCtxSetCurrent(_ctx)
        if err:
            return False
    return True


# --- streams -----------------------------------------------------------------------


def current_stream() -> int:
    """This thread's current stream handle (0 = legacy default stream)."""
    return _tls.stream


def current_stream_owner():
    """The object that owns the current stream (a cupynum.cuda.Stream), or None."""
    return _tls.stream_owner


def set_current_stream(handle: int, owner=None) -> None:
    """Make ``handle`` this thread's current stream; ``owner`` keeps its object alive."""
    global nondefault_streams
    if not _ready:
        init()
    t = _tls
    old = t.stream
    t.stream = handle = int(handle)
    t.stream_owner = owner
    t.cur = (handle, owner)
    if handle and handle not in known_streams:
        note_stream(handle)
    if bool(old) != bool(handle):  # this thread leaves or joins the legacy default stream
        with _stream_count_lock:
            nondefault_streams += 1 if handle else -1


def create_stream(non_blocking: bool = False) -> int:
    """A new stream handle; non-blocking streams do not sync with the legacy stream."""
    ensure_thread()
    flags = 1 if non_blocking else 0  # CU_STREAM_NON_BLOCKING / CU_STREAM_DEFAULT
    err, s = _d.cuStreamCreate(flags)
    check(err, "cuStreamCreate")
    note_stream(int(s), blocking=not non_blocking)
    return int(s)


def destroy_stream(handle: int) -> None:
    ensure_thread()
    retire_stream(handle)
    (err,) = _d.cuStreamDestroy(handle)
    check(err, "cuStreamDestroy")


# --- streams the memory pool fences freed blocks against (see memory.py) -------------


class KnownStream:
    """A stream cupynum has seen: whether it orders with the legacy default stream (a
    blocking stream does, both ways), and the event the pool records on it to fence freed
    blocks (0 until first needed)."""

    __slots__ = ("blocking", "event")

    def __init__(self, blocking: bool):
        self.blocking = blocking
        self.event = 0


# handle -> KnownStream.  Empty while only the legacy default stream has ever been used (the
# pool then frees with no bookkeeping at all); once another stream is seen it also holds 0,
# the legacy stream itself, until every seen stream is destroyed and its last work is done.
# Never replaced: memory.py tests it on every free.
known_streams: dict = {}
# Events recorded last on destroyed streams: their queued work still runs after
# cuStreamDestroy returns, so the pool fences against these until they complete.
retired_stream_events: list = []
streams_lock = threading.RLock()  # guards both, and the pool's fences that read them


def note_stream(handle: int, blocking: bool | None = None) -> None:
    """Register a non-default stream that cupynum work may run on (made current, created,
    or passed to a launch).  ``blocking`` None: ask the driver (unknown: non-blocking,
    which fences the most)."""
    handle = int(handle)
    if not handle or handle in known_streams:
        return
    if blocking is None:
        ensure_thread()
        err, flags = _d.cuStreamGetFlags(handle)
        blocking = not err and not int(flags) & 1  # CU_STREAM_NON_BLOCKING
    with streams_lock:
        if handle not in known_streams:
            known_streams.setdefault(0, KnownStream(True))
            known_streams[handle] = KnownStream(bool(blocking))


def retire_stream(handle: int) -> None:
    """Before ``handle`` is destroyed: record an event after its queued work, which the pool
    keeps fencing against until it completes."""
    with streams_lock:
        info = known_streams.pop(int(handle), None)
        if info is None:
            return
        ev = info.event or create_event(timing=False)
        record_event(ev, handle)
        retired_stream_events.append(ev)


def synchronize_stream(handle: int | None = None) -> None:
    """Wait for all work queued on ``handle`` (default: the current stream)."""
    h = _tls.stream if handle is None else handle
    COUNTS["syncs"] += 1
    (err,) = _d.cuStreamSynchronize(h)
    check(err, "cuStreamSynchronize")


def stream_query(handle: int) -> bool:
    """True when all work queued on the stream has completed."""
    ensure_thread()
    (err,) = _d.cuStreamQuery(handle)
    if err == _NOT_READY:
        return False
    check(err, "cuStreamQuery")
    return True


def synchronize() -> None:
    """Wait for all work on the device (every stream of the context)."""
    ensure_thread()
    COUNTS["syncs"] += 1
    (err,) = _d.cuCtxSynchronize()
    check(err, "cuCtxSynchronize")


# --- events ------------------------------------------------------------------------


def create_event(timing: bool = True, blocking: bool = False, interprocess: bool = False) -> int:
    ensure_thread()
    flags = 0
    if blocking:
        flags |= 1  # CU_EVENT_BLOCKING_SYNC
    if not timing:
        flags |= 2  # CU_EVENT_DISABLE_TIMING (cheaper record/wait)
    if interprocess:
        flags |= 4 | 2  # CU_EVENT_INTERPROCESS requires DISABLE_TIMING
    err, ev = _d.cuEventCreate(flags)
    check(err, "cuEventCreate")
    return int(ev)


def destroy_event(ev: int) -> None:
    ensure_thread()
    (err,) = _d.cuEventDestroy(ev)
    check(err, "cuEventDestroy")


def record_event(ev: int, stream: int | None = None) -> None:
    s = _tls.stream if stream is None else stream
    (err,) = _d.cuEventRecord(ev, s)
    check(err, "cuEventRecord")


def synchronize_event(ev: int) -> None:
    ensure_thread()
    COUNTS["syncs"] += 1
    (err,) = _d.cuEventSynchronize(ev)
    check(err, "cuEventSynchronize")


def event_query(ev: int) -> bool:
    """True when the work captured by the event has completed (or it was never recorded)."""
    ensure_thread()
    (err,) = _d.cuEventQuery(ev)
    if err == _NOT_READY:
        return False
    check(err, "cuEventQuery")
    return True


def elapsed_time(start: int, end: int) -> float:
    """Milliseconds between two recorded, completed timing events."""
    ensure_thread()
    err, ms = _d.cuEventElapsedTime(start, end)
    check(err, "cuEventElapsedTime")
    return float(ms)


def stream_wait_event(stream: int, ev: int) -> None:
    """Make future work on ``stream`` wait for ``ev`` (device-side, the host does not block)."""
    ensure_thread()
    (err,) = _d.cuStreamWaitEvent(stream, ev, 0)
    check(err, "cuStreamWaitEvent")


# --- modules and launch ------------------------------------------------------------


class Module:
    """A loaded cubin (a context-independent ``CUlibrary``) and its kernels by name.

    Libraries are never unloaded: launchers cache raw kernel handles, which an unload would
    leave dangling.  Kernels are cached compiled code, so the cost is small.
    """

    __slots__ = ("_lib", "_cubin", "_funcs", "_lock")

    def __init__(self, lib, cubin: bytes):
        self._lib = lib
        self._cubin = cubin  # keep the image alive for the library's lifetime
        self._funcs = {}
        self._lock = threading.Lock()

    def get_function(self, name: str):
        """The kernel ``name`` (mangled/lowered name, or an ``extern "C"`` name) as a
        ``CUkernel``, which ``launch`` accepts as its ``func``."""
        f = self._funcs.get(name)
        if f is None:
            ensure_thread()
            err, f = _d.cuLibraryGetKernel(self._lib, name.encode())
            check(err, f"cuLibraryGetKernel({name!r})")
            with self._lock:
                f = self._funcs.setdefault(name, f)
        return f

    __getitem__ = get_function


def load_module(cubin: bytes) -> Module:
    """Load a cubin with ``cuLibraryLoadData``; get kernels with ``Module.get_function``."""
    init()
    ensure_thread()
    cubin = bytes(cubin)
    err, lib = _d.cuLibraryLoadData(cubin, None, None, 0, None, None, 0)
    check(err, "cuLibraryLoadData")
    return Module(lib, cubin)


def get_function(cubin: bytes, name: str):
    """Load ``cubin`` and return its kernel ``name`` (convenience for one-kernel cubins)."""
    return load_module(cubin).get_function(name)


def _dim3(t):
    n = len(t)
    return (t[0], t[1] if n > 1 else 1, t[2] if n > 2 else 1)


def launch(func, grid, block, shmem: int, stream: int, params: int) -> None:
    """``cuLaunchKernel``.  ``grid``/``block``: an int or a 1-3 tuple; ``params``: the int
    address of a ``void*[]`` (``ParamBlock.address``), or 0 for a kernel without arguments."""
    if grid.__class__ is int:
        gx = grid
        gy = gz = 1
    else:
        gx, gy, gz = _dim3(grid)
    if block.__class__ is int:
        bx = block
        by = bz = 1
    else:
        bx, by, bz = _dim3(block)
    next(LAUNCH_TICKS)
    (err,) = _cuLaunchKernel(func, gx, gy, gz, bx, by, bz, shmem, stream, params, 0)
    if err:
        if rebind():  # first driver call from a fresh thread (or another context current)
            (err,) = _cuLaunchKernel(func, gx, gy, gz, bx, by, bz, shmem, stream, params, 0)
        check(err, f"cuLaunchKernel(grid=({gx}, {gy}, {gz}), block=({bx}, {by}, {bz}))")


def bindings_launch():
    """cuda.bindings' ``cuLaunchKernel`` (None before ``init``)."""
    return _cuLaunchKernel


def kernel_function(kernel) -> int:
    """The ``CUfunction`` of a ``CUkernel`` in our context, as an int.  Launching it skips
    the driver's per-launch lookup of the kernel's function for the current context; our
    libraries are never unloaded and the primary context lives as long as the process, so
    the handle stays valid.  Falls back to the kernel handle itself (which cuLaunchKernel
    also accepts) if the driver refuses."""
    ensure_thread()
    err, f = _d.cuKernelGetFunction(kernel)
    return int(kernel) if err else int(f)


def function_object(kernel):
    """``kernel_function(kernel)`` as a ``CUfunction`` object, for cuda.bindings' launch
    (which would otherwise build a ``CUfunction`` from a ``CUkernel`` on every call)."""
    return _d.CUfunction(kernel_function(kernel))


_v2_launch = False  # not looked up yet


def v2_launch():
    """``cuda.bindings._v2.driver.launch_kernel`` (``CUPYNUM_LAUNCH=v2``), or None where this
    cuda-bindings lacks it.  The second-generation bindings (private in 13.x) take plain
    ints for the function, the stream and the ``void**`` address, return None, and raise
    ``DriverError`` on failure: no handle objects to build or check per call and no
    ``CUresult`` enum to look up (a Python-level ``FastEnum.__new__`` per call in the
    first-generation ``cuLaunchKernel``)."""
    global _v2_launch
    if _v2_launch is False:
        init()
        try:
            from cuda.bindings._v2.driver import launch_kernel
        except Exception:  # noqa: BLE001 - older or newer bindings: the 'bindings' mode
            launch_kernel = None
        _v2_launch = launch_kernel
    return _v2_launch


_ctypes_launch = None


def ctypes_launch():
    """libcuda's ``cuLaunchKernel`` as a ctypes function: returns an int CUresult; pass
    grid/block/shmem as ints, handles and the params address as ``c_void_p`` (or None for
    NULL).  ctypes releases the GIL during the call, as cuda.bindings does."""
    global _ctypes_launch
    if _ctypes_launch is None:
        init()
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel  # the library cuda.bindings loaded
        f.restype = ctypes.c_int
        _ctypes_launch = f
    return _ctypes_launch


def kernel_attribute(func, name: str, dev: int | None = None) -> int:
    """A ``CU_FUNC_ATTRIBUTE_<name>`` of a kernel, e.g. ``'MAX_THREADS_PER_BLOCK'``."""
    ensure_thread()
    attr = getattr(_d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
    err, v = _d.cuKernelGetAttribute(attr, func, _device(dev))
    check(err, "cuKernelGetAttribute")
    return int(v)


def set_kernel_attribute(func, name: str, value: int, dev: int | None = None) -> None:
    """Set a ``CU_FUNC_ATTRIBUTE_<name>``, e.g. ``MAX_DYNAMIC_SHARED_SIZE_BYTES`` (> 48 KiB)."""
    ensure_thread()
    attr = getattr(_d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
    (err,) = _d.cuKernelSetAttribute(attr, int(value), func, _device(dev))
    check(err, "cuKernelSetAttribute")


class ParamBlock:
    """Kernel arguments laid out once in a byte buffer, plus a ``void*[]`` pointing at each
    slot, so a launch only rewrites slot values and passes ``address`` to ``launch``.

    ``ParamBlock(dtypes)``: one NumPy dtype per kernel parameter, in order (``np.uintp``
    for pointers, ``np.int64`` for sizes, the loop dtype for by-value scalars, a subarray
    or structured dtype for a by-value struct such as ``np.dtype((np.int64, 4))``).
    The driver copies the values at launch, so a block can be refilled right after
    ``launch`` returns; it must not be filled from two threads at once.
    """

    __slots__ = ("dtypes", "offsets", "views", "address", "_data", "_ptrs", "_u64", "_word")

    def __init__(self, dtypes):
        self.dtypes = tuple(np.dtype(t) for t in dtypes)
        offsets, off = [], 0
        for dt in self.dtypes:
            align = 16 if dt.alignment >= 16 else 8  # every slot 8-aligned: set_ptr/set_i64
            off = -(-off // align) * align
            offsets.append(off)
            off += dt.itemsize
        self.offsets = tuple(offsets)
        size = -(-max(off, 8) // 16) * 16
        self._data = np.zeros(size // 8, np.uint64)  # 8-byte aligned storage
        raw = self._data.view(np.uint8)
        self._u64 = self._data
        self._word = tuple(o // 8 for o in offsets)
        self.views = tuple(
            np.ndarray((1,), dt, buffer=raw, offset=o) for dt, o in zip(self.dtypes, offsets)
        )
        base = self._data.ctypes.data
        self._ptrs = np.array([base + o for o in offsets] or [0], np.uint64)
        self.address = int(self._ptrs.ctypes.data) if offsets else 0

    def __len__(self):
        return len(self.dtypes)

    def set(self, i: int, value) -> None:
        """Store ``value`` in slot ``i``, converted to the slot's dtype."""
        self.views[i][0] = value

    def set_ptr(self, i: int, ptr: int) -> None:
        """Store a device pointer (any 8-byte slot)."""
        self._u64[self._word[i]] = ptr

    def set_i64(self, i: int, v: int) -> None:
        """Store a signed 64-bit value (a slot declared int64)."""
        self.views[i][0] = v

    def set_values(self, values) -> None:
        """Store every slot from a sequence (convenience, not the fastest)."""
        for view, v in zip(self.views, values):
            view[0] = v

    def tobytes(self) -> bytes:
        return self._data.tobytes()


# --- fork ---------------------------------------------------------------------------
# A forked child inherits the parent's memory but not its CUDA state: once the driver was
# initialised (the probe calls cuInit), CUDA cannot be used in a forked child at all, and the
# parent's context, device pointers, pool and library handles mean nothing there.  The
# child therefore gets a clear error on its first GPU use (everything that reaches the driver
# through this module, the pool or a launch fails with FORK_MESSAGE), nothing inherited is
# freed or destroyed from it (memory.py's hook), and host-only work keeps working.  A parent
# that never probed the driver leaves the child free to initialise CUDA itself.

FORK_MESSAGE = (
    "this process was forked from one that had initialised CUDA, and a forked child cannot "
    "use the GPU (the parent's CUDA context, memory and library handles do not carry over). "
    "Start worker processes with the 'spawn' or 'forkserver' method, e.g. "
    "multiprocessing.get_context('spawn'); host-only work keeps working in this process."
)
_forked = False  # set in a child forked after the driver was initialised


class _ForkedChild:
    """Stands in for ``_tls`` and ``_d`` in such a child: any use raises FORK_MESSAGE."""

    def __getattr__(self, name):
        raise RuntimeError(FORK_MESSAGE)


def _forked_call(*args, **kwargs):
    raise RuntimeError(FORK_MESSAGE)


def _after_fork_in_child() -> None:
    global _forked, _ready, _tls, _d, _cuLaunchKernel, _v2_launch, _ctypes_launch
    global _init_lock, _stream_count_lock, streams_lock, nondefault_streams
    # Locks another thread may have held at fork() would never be released here.
    _init_lock, _stream_count_lock = threading.Lock(), threading.Lock()
    streams_lock = threading.RLock()
    if not _drv._available:  # never probed (the child may initialise CUDA), or no GPU
        return
    _forked = True
    _ready = False
    _tls = _d = _ForkedChild()
    _cuLaunchKernel = _v2_launch = _ctypes_launch = _forked_call
    nondefault_streams = 0
    known_streams.clear()
    retired_stream_events.clear()


def forked() -> bool:
    """True in a child forked after CUDA was initialised (no GPU use possible)."""
    return _forked


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# --- device properties (cached; need cuInit only, not a context) -------------------

_props: dict = {}


def _device(dev: int | None = None):
    """The CUdevice of ordinal ``dev`` (default: the context's device)."""
    if dev is None:
        dev = _ordinal
    if dev == _ordinal and _dev is not None:
        return _dev
    d = _bindings()
    err, h = d.cuDeviceGet(dev)
    check(err, "cuDeviceGet")
    return h


def device_count() -> int:
    if not _drv.available() or _forked:
        return 0
    err, n = _bindings().cuDeviceGetCount()
    check(err, "cuDeviceGetCount")
    return int(n)


def device_attribute(name: str, dev: int | None = None) -> int:
    """``CU_DEVICE_ATTRIBUTE_<name>`` of device ``dev``, cached."""
    key = (name, _ordinal if dev is None else dev)
    v = _props.get(key)
    if v is None:
        d = _bindings()
        attr = getattr(d.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name)
        err, v = d.cuDeviceGetAttribute(attr, _device(dev))
        check(err, f"cuDeviceGetAttribute({name})")
        v = _props[key] = int(v)
    return v


def compute_capability(dev: int | None = None) -> tuple[int, int]:
    return (
        device_attribute("COMPUTE_CAPABILITY_MAJOR", dev),
        device_attribute("COMPUTE_CAPABILITY_MINOR", dev),
    )


def multiprocessor_count(dev: int | None = None) -> int:
    return device_attribute("MULTIPROCESSOR_COUNT", dev)


def device_name(dev: int | None = None) -> str:
    key = ("name", _ordinal if dev is None else dev)
    v = _props.get(key)
    if v is None:
        err, raw = _bindings().cuDeviceGetName(256, _device(dev))
        check(err, "cuDeviceGetName")
        v = _props[key] = bytes(raw).split(b"\0", 1)[0].decode(errors="replace")
    return v


def total_memory(dev: int | None = None) -> int:
    key = ("total_mem", _ordinal if dev is None else dev)
    v = _props.get(key)
    if v is None:
        err, v = _bindings().cuDeviceTotalMem(_device(dev))
        check(err, "cuDeviceTotalMem")
        v = _props[key] = int(v)
    return v


def mem_info() -> tuple[int, int]:
    """(free, total) bytes on the device now (not cached)."""
    init()
    ensure_thread()
    err, free, total = _d.cuMemGetInfo()
    check(err, "cuMemGetInfo")
    return int(free), int(total)


__all__ = [
    "CUDAError", "Module", "ParamBlock", "compute_capability", "create_event",
    "create_stream", "current_stream", "current_stream_owner", "destroy_event",
    "destroy_stream", "device_attribute", "device_count", "device_name", "device_ordinal",
    "elapsed_time",
    "ensure_thread", "event_query", "rebind", "get_function", "init", "kernel_attribute", "launch",
    "bindings_launch", "ctypes_launch", "function_object", "kernel_function",
    "load_module", "mem_info", "multiprocessor_count", "record_event", "set_current_stream",
    "set_kernel_attribute", "stream_query", "stream_wait_event", "synchronize",
    "synchronize_event", "synchronize_stream", "total_memory",
]
