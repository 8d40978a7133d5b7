"""Device memory: buffers, the caching pool, out-of-memory handling, host<->device copies.

Two layers:
1. The driver's stream-ordered pool (``cuMemAllocFromPoolAsync`` on device 0's default pool)
   with ``CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`` at its maximum, so freed memory stays reserved
   and later allocations are served without going back to the OS.
2. In front of it, Python free lists, one per (stream, size class: a power of two up to
   ``SMALL_MAX``, eight classes per doubling up to ``tuning.MEMORY.cache_max``, then
   multiples of ``tuning.MEMORY.big_step``): allocating an output is a dict lookup and a
   ``list.pop``, freeing it a ``list.append`` (atomic under the GIL, so no lock on these
   paths; the statistics are derived from the lists).  A block freed on stream S is handed
   out again directly only for an allocation on the same stream S: work queued later on S is
   ordered after every use that preceded the free, so no synchronisation is needed.  An
   allocation on another stream goes to the driver, whose pool tracks cross-stream reuse.
   Like CuPy's pool, the lists keep what they hold until ``free_all_blocks`` or an
   out-of-memory retry (the driver pool would keep it reserved anyway).

A ``DeviceBuffer`` frees itself in ``__del__``, in stream order on ``buf.stream``: the stream
it was allocated on, or the one given to ``buf.set_stream`` by code that moved its last use
to another stream.  The buffer keeps the stream's owner object alive, so a user stream is never
destroyed while a free may still be queued on it; before such a stream is destroyed it calls
``MemoryPool.release_stream`` for its free-list entries.

Cross-stream use.  A block may be read or written on streams other than its own (an array
made on the default stream and used inside ``with Stream():``); reusing it on its own stream
must wait for that work.  Tracking every launch's operands would cost each launch; instead
the runtime registers every stream cupynum work can run on (``runtime.known_streams``) and,
once any stream other than the legacy default one exists, a free goes onto ``_pending``
instead of its free list.  When an allocation misses, ``_settle`` moves the pending blocks
to their lists after fencing them: an event recorded on each registered stream that is not
already ordered with the block's stream (the legacy stream and a blocking stream order each
other; any two others do not), and a ``cuStreamWaitEvent`` of the block's stream on it.
One fence covers every block freed before it, so the cost is a few driver calls per batch of
frees, not per free, and none at all while only the legacy default stream is used (the free
path then tests one dict).  Destroyed streams leave an event behind
(``runtime.retired_stream_events``) that later fences wait on until it completes.

The hot path (``malloc`` on the default stream) is one dict lookup keyed by the byte count
(each key maps to its size class's list), a ``list.pop`` and a ``DeviceBuffer`` whose slots
are set directly (no ``__init__`` frame); everything else takes ``_malloc``.

Out of memory: return every cached block to the driver, synchronise, trim the pool, retry
once, then raise ``OutOfMemoryError`` (a ``MemoryError``); nothing is left in a bad state.

Host transfers of ``tuning.MEMORY.staging_threshold`` bytes or more follow ``CUPYNUM_H2D`` and
``CUPYNUM_D2H`` (see ``_Staging`` and ``_registered_copy``):
``staging``   through pinned buffers, the CPU copies split over ``CUPYNUM_COPY_THREADS``
              threads (ctypes.memmove releases the GIL) and overlapped with the DMA;
``pageable``  one driver copy from/to the pageable array (as CuPy does: the driver stages
              it itself, with one CPU thread, and D2H waits chunk by chunk);
``register``  page-lock the array (``cuMemHostRegister``, page-aligned chunks so the DMA of
              one chunk overlaps the locking of the next), copy, unregister.
Smaller copies always go straight to the driver.
"""
from __future__ import annotations

import atexit
import ctypes
import operator
import os
import threading

import numpy as np

from .. import elements, fusion, placement
from ..counters import COUNTS
from . import runtime, tuning
from .driver import check

SMALL_MAX = 1 << 20  # up to 1 MiB: power-of-two blocks (literal in _malloc)
MIN_BLOCK = 512  # smallest block; sizes round up to a power of two >= this (literal in _malloc)
# Larger sizes: the classes of tuning.MEMORY (cache_max, big_step); host transfers: its
# staging_threshold, staging_chunk, register_chunk.
_MODES = ("staging", "pageable", "register")


def _mode(var: str, default: str) -> str:
    m = os.environ.get(var, default).strip().lower()
    if m not in _MODES:
        raise ValueError(f"{var}={m!r}: expected one of {', '.join(_MODES)}")
    return m


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (containers: less)
    except (AttributeError, OSError):
        return os.cpu_count() or 2


H2D = _mode("CUPYNUM_H2D", "staging")
D2H = _mode("CUPYNUM_D2H", "staging")
# Threads that copy between pageable and pinned memory: half the CPUs, at most 8 (more
# rarely adds bandwidth and takes cores from the user's own threads).
COPY_THREADS = max(1, int(os.environ.get("CUPYNUM_COPY_THREADS", "0")) or min(8, _cpus() // 2))

_OOM = 2  # CUDA_ERROR_OUT_OF_MEMORY
_NOT_READY = 600  # CUDA_ERROR_NOT_READY
_INVALID_VALUE = 1  # CUDA_ERROR_INVALID_VALUE
_shutdown = False
# Streams cupynum has seen (runtime.py's dict, the same object): empty, blocks go straight
# back to their free lists; otherwise onto _pending, as (free list, stream, size, ptr), until
# MemoryPool._settle fences them (module docstring).
_streams = runtime.known_streams
_pending: list = []


class OutOfMemoryError(MemoryError):
    """The device has no room for an allocation, even after releasing cached blocks."""

    def __init__(self, size: int | None, detail: str = ""):
        self.size = size  # None: a library's own allocation, of a size it does not say
        what = "Out of memory on the GPU" if size is None else \
            f"Out of memory allocating {size} bytes on the GPU"
        super().__init__(what + (f" ({detail})" if detail else ""))


@atexit.register
def _at_exit():
    # At exit the driver may be torn down before our objects: stop freeing (the OS reclaims).
    global _shutdown
    _shutdown = True


class DeviceBuffer:
    """A device allocation.  ``ptr`` (int, 0 for an empty buffer), ``nbytes`` (as requested),
    ``stream`` (handle it is freed on), ``stream_owner`` (keeps that stream alive)."""

    __slots__ = ("ptr", "nbytes", "stream", "stream_owner", "_pool", "_size", "_home",
                 "__weakref__")

    def __init__(self, ptr, nbytes, stream, stream_owner, pool, size, home):
        self.ptr = ptr
        self.nbytes = nbytes
        self.stream = stream
        self.stream_owner = stream_owner
        self._pool = pool  # None: nothing to free (empty buffer, or already freed)
        self._size = size  # accounted size: the block's size class
        self._home = home  # the free list this block returns to (None for an empty buffer)

    def set_stream(self, stream: int, stream_owner=None) -> None:
        """Free on ``stream`` from now on (its last use moved there).  Change the stream only
        through this method: it also moves the block to that stream's free list."""
        self.stream = stream
        self.stream_owner = stream_owner
        if self._pool is not None:
            self._home = self._pool._free.setdefault((stream, self._size), [])

    def free(self) -> None:
        """Release now instead of at garbage collection (idempotent)."""
        if self._pool is not None:
            self._pool = None
            if _streams:
                _pending.append((self._home, self.stream, self._size, self.ptr))
            else:
                self._home.append(self.ptr)

    def __del__(self):  # (runs once: no need to mark the buffer freed, as free() does)
        if self._pool is not None:
            if _streams:  # other streams may still use it: fenced first (module docstring)
                _pending.append((self._home, self.stream, self._size, self.ptr))
            else:  # back onto its stream's free list
                self._home.append(self.ptr)

    def __int__(self):
        return self.ptr

    def __repr__(self):
        return f"<DeviceBuffer ptr=0x{self.ptr:x} nbytes={self.nbytes} stream=0x{self.stream:x}>"


_new = object.__new__


class MemoryPool:
    """Device 0's allocator (use ``get_pool()``).  See the module docstring."""

    def __init__(self):
        runtime.init()
        d = runtime._d
        self._d = d
        self._tls = runtime._tls
        self._alloc_async = d.cuMemAllocFromPoolAsync
        self._free_async = d.cuMemFreeAsync
        err, self._handle = d.cuDeviceGetDefaultMemPool(runtime._dev)
        check(err, "cuDeviceGetDefaultMemPool")
        (err,) = d.cuMemPoolSetAttribute(
            self._handle,
            d.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            d.cuuint64_t(0xFFFFFFFFFFFFFFFF),
        )
        check(err, "cuMemPoolSetAttribute(RELEASE_THRESHOLD)")
        # (stream, size) -> [ptr, ...].  Lists are never removed or replaced (only emptied),
        # because live buffers hold a reference to theirs.
        self._free = {}
        # nbytes -> (nbytes, block size, list in _free) of the default stream: malloc's
        # fast path (bounded: cleared when full; the lists themselves stay in _free).
        self._fast = {}
        self._lock = threading.RLock()  # slow paths only; reentrant: GC may run __del__ inside
        self._outstanding = 0  # bytes taken from the driver pool and not given back

    # -- allocation -------------------------------------------------------------------

    def malloc(self, nbytes: int, stream: int | None = None, stream_owner=None) -> DeviceBuffer:
        """A buffer of at least ``nbytes`` on ``stream`` (default: the current stream and
        its owner).  With an explicit raw ``stream``, pass its ``stream_owner`` too, or keep
        the stream alive until the buffer is gone."""
        if stream is None and not runtime.nondefault_streams:  # the legacy default stream
            hit = self._fast.get(nbytes)  # (int nbytes, block size, free list); see _malloc
            if hit is not None:
                home = hit[2]
                if home:
                    try:
                        ptr = home.pop()
                    except IndexError:  # another thread took the last one
                        pass
                    else:
                        b = _new(DeviceBuffer)
                        b.ptr = ptr
                        b.nbytes = hit[0]
                        b.stream = 0
                        b.stream_owner = None
                        b._pool = self
                        b._size = hit[1]
                        b._home = home
                        return b
        return self._malloc(nbytes, stream, stream_owner)

    def inline_malloc(self):
        """``(code, namespace)``: ``malloc``'s fast path as source lines that leave a
        ``DeviceBuffer`` for ``nbytes`` bytes on the current stream in ``buf``, for
        generated hot launchers to inline (one Python frame less per allocation).  The
        lines mirror ``malloc`` above: change both together."""
        return _INLINE_MALLOC, {"pool_fast": self._fast.get, "malloc": self.malloc,
                                "new_buffer": _new, "DeviceBuffer": DeviceBuffer,
                                "pool": self, "rt": runtime}

    def _malloc(self, nbytes, stream, stream_owner) -> DeviceBuffer:
        if nbytes.__class__ is not int:  # NumPy integers lack bit_length
            nbytes = operator.index(nbytes)
        if stream is None:
            stream, stream_owner = self._tls.cur
        else:
            self._tls.stream  # binds the context in this thread
            if stream and stream not in _streams:
                runtime.note_stream(stream)  # blocks homed on it are fenced too
        if 0 < nbytes:
            if nbytes <= 1048576:  # SMALL_MAX
                size = 512 if nbytes <= 512 else 1 << (nbytes - 1).bit_length()  # MIN_BLOCK
            elif nbytes <= tuning.MEMORY.cache_max:
                step = 1 << ((nbytes - 1).bit_length() - 4)
                size = -(-nbytes // step) * step
            else:
                step = tuning.MEMORY.big_step
                size = -(-nbytes // step) * step
            home = self._free.get((stream, size))
            if home is None:
                home = self._free.setdefault((stream, size), [])
            if stream == 0:  # remember the answer for malloc's fast path
                if len(self._fast) >= 8192:
                    self._fast.clear()
                self._fast[nbytes] = (nbytes, size, home)
            if home:
                try:
                    return DeviceBuffer(home.pop(), nbytes, stream, stream_owner, self, size, home)
                except IndexError:  # another thread took the last one
                    pass
            if _pending:  # blocks freed while other streams exist: fence them, then look again
                self._settle()
                if home:
                    try:
                        return DeviceBuffer(home.pop(), nbytes, stream, stream_owner, self, size,
                                            home)
                    except IndexError:
                        pass
            ptr = self._driver_alloc(size, stream, nbytes)
            return DeviceBuffer(ptr, nbytes, stream, stream_owner, self, size, home)
        if nbytes == 0:
            return DeviceBuffer(0, 0, stream, None, None, 0, None)
        raise ValueError(f"negative allocation size {nbytes}")

    def _driver_alloc(self, size: int, stream: int, requested: int) -> int:
        """A block of ``size`` bytes from the driver pool (``requested``: the caller's byte
        count, for the out-of-memory message)."""
        err, ptr = self._alloc_async(size, self._handle, stream)
        if err and not self._is_oom(err, size) and runtime.rebind():
            err, ptr = self._alloc_async(size, self._handle, stream)
        if err:
            if not self._is_oom(err, size):
                check(err, f"cuMemAllocFromPoolAsync({size})")
            self.free_all_blocks()
            err, ptr = self._alloc_async(size, self._handle, stream)
            if err and self._is_oom(err, size) and (
                    fusion.flush_for_memory() | elements.flush_for_memory()):
                # pending expressions and element reads kept their inputs alive: once
                # run, those may go
                self.free_all_blocks()
                err, ptr = self._alloc_async(size, self._handle, stream)
            if err and self._is_oom(err, size) and placement.evict_device_copies():
                # device copies of data valid on the host too are caches: dropped last
                self.free_all_blocks()
                err, ptr = self._alloc_async(size, self._handle, stream)
            if err:
                if not self._is_oom(err, size):
                    check(err, f"cuMemAllocFromPoolAsync({size})")
                raise OutOfMemoryError(
                    requested, f"{self.used_bytes()} bytes in use by cupynum's pool, "
                    f"device total {runtime.total_memory()} bytes"
                )
        with self._lock:
            self._outstanding += size
        return int(ptr)

    @staticmethod
    def _is_oom(err, size: int) -> bool:
        # A request larger than the whole device may be reported as INVALID_VALUE.
        return err == _OOM or (err == _INVALID_VALUE and size > runtime.total_memory())

    # -- cross-stream fences (module docstring) ----------------------------------------

    def _settle(self) -> None:
        """Move the pending frees onto their free lists, each block's stream first made to
        wait for the work queued so far on every stream not ordered with it."""
        with self._lock:
            items = []
            while True:  # pop one by one: frees from other threads may append meanwhile
                try:
                    items.append(_pending.pop())
                except IndexError:
                    break
            if not items:
                return
            with runtime.streams_lock:
                self._fence({stream for _, stream, _, _ in items})
                self._forget_finished_streams()
            for home, _, _, ptr in items:
                home.append(ptr)

    def _fence(self, homes) -> None:
        """Make each stream in ``homes`` wait for the work queued so far on every known
        stream (and every retired stream's last event) it is not ordered with.  The events
        are recorded after the frees being settled, so they cover every use of those blocks
        (a launch that used a block was queued while the block was still referenced)."""
        d = self._d
        self._tls.stream  # binds the context in this thread
        # A block's stream that is no longer known was destroyed: nothing is queued on it
        # any more (its blocks only await the drain).
        homes = [h for h in homes if h == 0 or h in _streams]
        for handle, info in list(_streams.items()):
            waiting = [h for h in homes if not _ordered(h, handle, info)]
            if not waiting or handle not in _streams:  # (destroyed meanwhile: retired)
                continue
            if not info.event:
                err, ev = d.cuEventCreate(2)  # CU_EVENT_DISABLE_TIMING
                check(err, "cuEventCreate")
                info.event = int(ev)
            (err,) = d.cuEventRecord(info.event, handle)
            check(err, "cuEventRecord")
            for h in waiting:
                (err,) = d.cuStreamWaitEvent(h, info.event, 0)
                check(err, "cuStreamWaitEvent")
        for ev in runtime.retired_stream_events:
            for h in homes:
                (err,) = d.cuStreamWaitEvent(h, ev, 0)
                check(err, "cuStreamWaitEvent")

    def _forget_finished_streams(self) -> None:
        """Drop retired streams' events once their work is done; with no stream left but
        the legacy one, frees go straight to the free lists again."""
        d = self._d
        retired = runtime.retired_stream_events
        for ev in list(retired):
            (err,) = d.cuEventQuery(ev)
            if err == _NOT_READY:
                continue
            retired.remove(ev)
            d.cuEventDestroy(ev)
        if not retired and list(_streams) == [0]:
            info = _streams.pop(0)
            if info.event:
                d.cuEventDestroy(info.event)

    # -- maintenance ------------------------------------------------------------------

    def _drain(self, only_stream=None) -> None:
        """Return free-list blocks (of one stream, or all) to the driver pool."""
        self._tls.stream
        if _pending:
            self._settle()
        for (stream, size), lst in list(self._free.items()):
            if only_stream is not None and stream != only_stream:
                continue
            while True:
                try:
                    ptr = lst.pop()
                except IndexError:
                    break
                (err,) = self._free_async(ptr, stream)
                with self._lock:
                    self._outstanding -= size
                check(err, "cuMemFreeAsync")

    def release_stream(self, stream: int) -> None:
        """Free the cached blocks of ``stream``; call before destroying that stream."""
        self._drain(stream)

    def free_all_blocks(self) -> None:
        """Release every cached block: empty the free list, wait for the device so the
        stream-ordered frees complete, and trim the driver pool to what is in use."""
        self._drain()
        runtime.synchronize()
        (err,) = self._d.cuMemPoolTrimTo(self._handle, 0)
        check(err, "cuMemPoolTrimTo")

    # -- statistics -------------------------------------------------------------------

    def _cached(self) -> int:
        return (sum(size * len(lst) for (_, size), lst in list(self._free.items()))
                + sum(item[2] for item in list(_pending)))

    def used_bytes(self) -> int:
        """Bytes in live buffers (block sizes, as allocated)."""
        return self._outstanding - self._cached()

    def cached_bytes(self) -> int:
        """Bytes held for reuse: the free list plus the driver pool's idle reserve."""
        d = self._d
        attrs = d.CUmemPool_attribute
        err, reserved = d.cuMemPoolGetAttribute(self._handle, attrs.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
        check(err, "cuMemPoolGetAttribute")
        err, in_use = d.cuMemPoolGetAttribute(self._handle, attrs.CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
        check(err, "cuMemPoolGetAttribute")
        return self._cached() + max(int(reserved) - int(in_use), 0)

    def total_bytes(self) -> int:
        """Bytes the pool holds: used + cached."""
        return self.used_bytes() + self.cached_bytes()

    def free_bytes(self) -> int:
        """Bytes held but not in use (CuPy's name for ``cached_bytes``)."""
        return self.cached_bytes()

    def n_free_blocks(self) -> int:
        """Blocks in the Python free lists (and freed blocks waiting for their fence)."""
        return sum(len(v) for v in list(self._free.values())) + len(_pending)


def _ordered(a: int, b: int, b_info) -> bool:
    """Whether work on streams ``a`` and ``b`` is ordered without an event: the same stream,
    or the legacy default stream and a blocking stream (``b_info``: b's KnownStream)."""
    if a == b:
        return True
    if a == 0:
        return b_info.blocking
    if b == 0:
        a_info = _streams.get(a)
        return a_info is not None and a_info.blocking
    return False


_INLINE_MALLOC = """\
    nds = rt.nondefault_streams  # (the launch below reads it too)
    hit = None if nds else pool_fast(nbytes)
    home = None if hit is None else hit[2]
    if home:
        try:
            ptr = home.pop()
        except IndexError:  # another thread took the last block
            buf = malloc(nbytes)
        else:
            buf = new_buffer(DeviceBuffer)
            buf.ptr = ptr
            buf.nbytes = nbytes  # (an int: the launcher computes it)
            buf.stream = 0
            buf.stream_owner = None
            buf._pool = pool
            buf._size = hit[1]
            buf._home = home
    else:
        buf = malloc(nbytes)
"""

_pool: MemoryPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> MemoryPool:
    """The process's pool for device 0 (created on first use; initialises the runtime)."""
    global _pool
    p = _pool
    if p is None:
        with _pool_lock:
            if _pool is None:
                _pool = MemoryPool()
            p = _pool
    return p


def alloc(nbytes: int, stream: int | None = None) -> DeviceBuffer:
    """``get_pool().malloc(nbytes, stream)``: a buffer on the current (or given) stream."""
    return (_pool or get_pool()).malloc(nbytes, stream)


# Library statuses that mean "the library could not allocate device memory", by the
# nvmath-python exception's class name: cuBLAS/cuSOLVER/cuFFT ALLOC_FAILED, cuRAND
# ALLOCATION_FAILED.
_LIBRARY_ALLOC_FAILED = {"cuBLASError": 3, "cuSOLVERError": 2, "cuFFTError": 2,
                         "cuRANDError": 102}


def _is_library_oom(e: BaseException) -> bool:
    code = _LIBRARY_ALLOC_FAILED.get(type(e).__name__)
    if code is None:
        return False
    status = getattr(e, "status", None)
    if status is not None:
        return int(status) == code
    return "ALLOC" in str(e).upper()


def library_alloc(fn, *args, what: str = ""):
    """``fn(*args)``, a library call that allocates device memory of its own (a handle, a
    plan, a generator).  Where the library reports an allocation failure, the pool's
    cached blocks go back to the device and the call is retried once; a second failure
    raises ``OutOfMemoryError`` instead of the library's error."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - only allocation failures are handled
        if not _is_library_oom(e):
            raise
    get_pool().free_all_blocks()
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        if not _is_library_oom(e):
            raise
        raise OutOfMemoryError(None, f"{what or getattr(fn, '__name__', 'library call')}: "
                                     f"{e}") from e


# --- copies --------------------------------------------------------------------------
# All take int device pointers and an optional stream (default: the current stream).
# Host->device: the host array may be modified or freed as soon as the call returns (for
# pageable memory the driver stages the data before returning; our staging copies it into
# pinned buffers; 'register' waits for the DMA).  Device->host: the host array holds the
# data when the call returns.


def _stream(stream):
    """The stream to queue on: a prebuilt ``CUstream(0)`` while no thread uses another
    stream (the bindings would build one from an int on every call).  Unlike a read of
    ``runtime._tls`` this does not bind the context in a fresh thread: the hot calls
    below retry through ``_failed``, which does."""
    if stream is None:
        return runtime._tls.stream if runtime.nondefault_streams else runtime.DEFAULT_STREAM
    return stream


def _failed(err, fn, what, *args) -> None:
    """Error path of a driver call: a thread's first driver call finds no context (bind
    it and call again), anything else raises."""
    if runtime.rebind():
        (err,) = fn(*args)
    check(err, what)


def memcpy_htod(dst_ptr: int, host: np.ndarray, stream: int | None = None) -> None:
    """Copy the bytes of ``host`` (made C-contiguous if needed) to ``dst_ptr``."""
    host = np.ascontiguousarray(host)
    n = host.nbytes
    if n == 0:
        return
    COUNTS["h2d_bytes"] += n
    runtime.ensure_thread()
    s = _stream(stream)
    threshold = tuning.MEMORY.staging_threshold
    if threshold is not None and n >= threshold and H2D != "pageable":
        if H2D == "staging":
            _staging().htod(dst_ptr, host, n, s)
        else:
            _registered_copy(True, dst_ptr, host, n, s)
        return
    (err,) = runtime._d.cuMemcpyHtoDAsync(dst_ptr, host.ctypes.data, n, s)
    check(err, "cuMemcpyHtoDAsync")


def memcpy_dtoh(host: np.ndarray, src_ptr: int, stream: int | None = None) -> None:
    """Fill the C-contiguous, writeable ``host`` from ``src_ptr``; waits for the copy."""
    if not (host.flags.c_contiguous and host.flags.writeable):
        raise ValueError("memcpy_dtoh needs a C-contiguous, writeable host array")
    n = host.nbytes
    if n == 0:
        return
    COUNTS["d2h_bytes"] += n
    COUNTS["syncs"] += 1  # (the copy waits for the stream)
    runtime.ensure_thread()
    s = _stream(stream)
    threshold = tuning.MEMORY.staging_threshold
    if threshold is not None and n >= threshold and D2H != "pageable":
        if D2H == "staging":
            _staging().dtoh(host, src_ptr, n, s)
        else:
            _registered_copy(False, src_ptr, host, n, s)
        return
    d = runtime._d
    if s is runtime.DEFAULT_STREAM or s.__class__ is int and s == 0:
        # the legacy default stream: the synchronous copy waits for its work and returns
        # with the data, one driver call (float(a[i, j]) is this copy alone)
        (err,) = d.cuMemcpyDtoH(host.ctypes.data, src_ptr, n)
        check(err, "cuMemcpyDtoH")
        return
    (err,) = d.cuMemcpyDtoHAsync(host.ctypes.data, src_ptr, n, s)
    check(err, "cuMemcpyDtoHAsync")
    (err,) = d.cuStreamSynchronize(s)
    check(err, "cuStreamSynchronize")


SMALL_READ = 256  # reads of at most this many bytes go through a thread's scratch block
_scratch = threading.local()


def _scratch_block() -> tuple:
    """A new scratch block for ``read_small`` and its address: pinned host memory where
    ``tuning.MEMORY.small_read_pinned`` says so (the copy is then one DMA into it, not a
    copy staged through the driver's own pinned buffer), kept for the thread's life."""
    if tuning.MEMORY.small_read_pinned:
        err, p = runtime._d.cuMemHostAlloc(SMALL_READ, 0)
        check(err, "cuMemHostAlloc")
        addr = int(p)
        return np.ctypeslib.as_array((ctypes.c_uint8 * SMALL_READ).from_address(addr)), addr
    block = np.empty(SMALL_READ, np.uint8)
    return block, block.ctypes.data


def read_small(src_ptr: int, shape: tuple, dtype) -> np.ndarray:
    """A new NumPy array of ``shape`` and ``dtype`` (at most ``SMALL_READ`` bytes) holding
    the bytes at ``src_ptr``; waits for the copy.  ``float(a[i, j])`` and a full
    reduction's value come here: the copy lands in the thread's scratch block, whose
    address is known (a new array's ``ctypes.data`` costs more than the driver call)."""
    n = dtype.itemsize
    for d in shape:
        n *= d
    COUNTS["d2h_bytes"] += n
    COUNTS["syncs"] += 1  # (the copy waits for the stream)
    try:
        block, addr = _scratch.block
    except AttributeError:
        block, addr = _scratch.block = _scratch_block()
    s = runtime._tls.stream if runtime.nondefault_streams else runtime.DEFAULT_STREAM
    d = runtime._d
    if s is runtime.DEFAULT_STREAM or s.__class__ is int and s == 0:
        (err,) = d.cuMemcpyDtoH(addr, src_ptr, n)  # (waits for the legacy stream's work)
        if err:
            _failed(err, d.cuMemcpyDtoH, "cuMemcpyDtoH", addr, src_ptr, n)
    else:
        (err,) = d.cuMemcpyDtoHAsync(addr, src_ptr, n, s)
        check(err, "cuMemcpyDtoHAsync")
        (err,) = d.cuStreamSynchronize(s)
        check(err, "cuStreamSynchronize")
    return np.ndarray(shape, dtype, block).copy()


def memcpy_dtod(dst_ptr: int, src_ptr: int, nbytes: int, stream: int | None = None) -> None:
    """Device-to-device copy, queued on the stream."""
    if nbytes <= 0:
        return
    f = runtime._d.cuMemcpyDtoDAsync
    if stream is None:  # _stream(None), inline: slice assignment's hot path comes here
        s = runtime._tls.stream if runtime.nondefault_streams else runtime.DEFAULT_STREAM
    else:
        s = stream
    (err,) = f(dst_ptr, src_ptr, nbytes, s)
    if err:
        _failed(err, f, "cuMemcpyDtoDAsync", dst_ptr, src_ptr, nbytes, s)


def memset_d8(ptr: int, value: int, n: int, stream: int | None = None) -> None:
    """Set ``n`` bytes at ``ptr`` to ``value & 0xFF``, queued on the stream."""
    if n <= 0:
        return
    f = runtime._d.cuMemsetD8Async
    s = _stream(stream)
    (err,) = f(ptr, value & 0xFF, n, s)
    if err:
        _failed(err, f, "cuMemsetD8Async", ptr, value & 0xFF, n, s)


def _registered_copy(h2d: bool, dev: int, host: np.ndarray, n: int, stream) -> None:
    """Page-lock ``host`` chunk by chunk and DMA each chunk as soon as it is locked (the
    locking of the next chunk overlaps that copy), wait, unlock.  Chunk boundaries are
    multiples of ``tuning.MEMORY.register_chunk`` in the address space, so no page belongs to two chunks.
    Memory that is already page-locked is copied as it is; a chunk the driver refuses to
    lock goes through the driver's pageable path."""
    d = runtime._d
    runtime.ensure_thread()
    base = host.ctypes.data
    end = base + n
    step = tuning.MEMORY.register_chunk
    locked = []
    try:
        a = base
        while a < end:
            b = min(end, (a // step + 1) * step)
            (err,) = d.cuMemHostRegister(a, b - a, 0)
            if not err:
                locked.append(a)
            # else: already page-locked (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), or not
            # lockable (read-only or a file mapping): the copy below works either way.
            if h2d:
                (err,) = d.cuMemcpyHtoDAsync(dev + (a - base), a, b - a, stream)
            else:
                (err,) = d.cuMemcpyDtoHAsync(a, dev + (a - base), b - a, stream)
            check(err, "cuMemcpyHtoDAsync" if h2d else "cuMemcpyDtoHAsync")
            a = b
        (err,) = d.cuStreamSynchronize(stream)
        check(err, "cuStreamSynchronize")
    finally:
        for a in locked:
            d.cuMemHostUnregister(a)


class _Staging:
    """``nbuf`` pinned host buffers used in turn, so the CPU copy of one chunk overlaps the
    DMA of another.  Each CPU copy is split over ``threads`` threads (``ctypes.memmove``
    releases the GIL): one thread rarely reaches the host's memory bandwidth, and the
    driver's own pageable path uses one.  An event per buffer says when its last DMA
    finished; a lock serialises callers (one big copy at a time through staging).
    Allocated on first use, kept for the process."""

    def __init__(self, chunk=None, threads=None, nbuf=2):
        runtime.init()
        d = runtime._d
        runtime.ensure_thread()
        self.chunk = chunk or tuning.MEMORY.staging_chunk
        self.threads = threads or COPY_THREADS
        self.lock = threading.Lock()
        self.ptrs, self.events = [], []
        for _ in range(nbuf):
            err, p = d.cuMemHostAlloc(self.chunk, 0)
            check(err, "cuMemHostAlloc")
            self.ptrs.append(int(p))
            self.events.append(runtime.create_event(timing=False))
        self._pool = None

    def close(self) -> None:
        """Free the pinned buffers (benchmarks build several stagings; the module's own
        object lives as long as the process)."""
        with self.lock:
            runtime.synchronize()
            for p in self.ptrs:
                runtime._d.cuMemFreeHost(p)
            for ev in self.events:
                runtime.destroy_event(ev)
            self.ptrs = []
            if self._pool is not None:
                self._pool.shutdown()

    def _wait(self, k):
        (err,) = runtime._d.cuEventSynchronize(self.events[k])
        check(err, "cuEventSynchronize")

    def _record(self, k, stream):
        (err,) = runtime._d.cuEventRecord(self.events[k], stream)
        check(err, "cuEventRecord")

    def _memmove(self, dst: int, src: int, m: int) -> None:
        """``memmove(dst, src, m)`` split over the copy threads (at least 1 MiB each)."""
        t = min(self.threads, max(1, m >> 20))
        if t == 1:
            ctypes.memmove(dst, src, m)
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.threads - 1, "cupynum-copy")
        cut = [(m * i // t) & ~63 for i in range(t)] + [m]  # 64-byte aligned pieces
        futs = [self._pool.submit(ctypes.memmove, dst + cut[i], src + cut[i], cut[i + 1] - cut[i])
                for i in range(1, t)]
        ctypes.memmove(dst, src, cut[1])
        for f in futs:
            f.result()

    def htod(self, dst: int, host: np.ndarray, n: int, stream) -> None:
        d, ch, nb = runtime._d, self.chunk, len(self.ptrs)
        src = host.ctypes.data
        with self.lock:
            runtime.ensure_thread()
            for i, off in enumerate(range(0, n, ch)):
                k, m = i % nb, min(ch, n - off)
                self._wait(k)  # the previous DMA out of this buffer is done
                self._memmove(self.ptrs[k], src + off, m)
                (err,) = d.cuMemcpyHtoDAsync(dst + off, self.ptrs[k], m, stream)
                check(err, "cuMemcpyHtoDAsync")
                self._record(k, stream)

    def dtoh(self, host: np.ndarray, src: int, n: int, stream) -> None:
        d, ch, nb = runtime._d, self.chunk, len(self.ptrs)
        dst = host.ctypes.data  # host is C-contiguous
        chunks = [(off, min(ch, n - off)) for off in range(0, n, ch)]

        def issue(i):
            k = i % nb
            off, m = chunks[i]
            (err,) = d.cuMemcpyDtoHAsync(self.ptrs[k], src + off, m, stream)
            check(err, "cuMemcpyDtoHAsync")
            self._record(k, stream)

        with self.lock:
            runtime.ensure_thread()
            for i in range(min(nb, len(chunks))):
                self._wait(i)  # nobody still reads this buffer (an earlier htod's DMA)
                issue(i)
            for i, (off, m) in enumerate(chunks):
                k = i % nb
                self._wait(k)
                self._memmove(dst + off, self.ptrs[k], m)
                if i + nb < len(chunks):
                    issue(i + nb)


_staging_obj: _Staging | None = None


def _after_fork_in_child() -> None:
    """In a child forked after CUDA was initialised (runtime.py, "fork"): nothing the parent
    allocated or created may be freed or destroyed from here (``_shutdown`` stops every
    finaliser that calls a library or the driver), and the pool forgets the parent's cached
    blocks, so its next allocation reaches the runtime and raises FORK_MESSAGE."""
    global _shutdown, _pool_lock, _staging_obj
    _pool_lock = threading.Lock()
    if not runtime.forked():
        return
    _shutdown = True
    _pending.clear()
    _staging_obj = None
    p = _pool
    if p is not None:
        p._lock = threading.RLock()
        p._fast.clear()  # (the same dict the generated launchers look blocks up in)
        p._free = {}  # live buffers still append to their old lists: never handed out
        p._tls = runtime._tls
        p._alloc_async = p._free_async = runtime._forked_call
        p._d = runtime._d


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _staging() -> _Staging:
    global _staging_obj
    if _staging_obj is None:
        with _pool_lock:
            if _staging_obj is None:
                _staging_obj = _Staging()
    return _staging_obj


__all__ = [
    "DeviceBuffer", "MemoryPool", "OutOfMemoryError", "alloc", "get_pool", "library_alloc",
    "memcpy_dtod",
    "memcpy_dtoh", "memcpy_htod", "memset_d8",
]
