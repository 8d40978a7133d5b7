"""Device memory: buffers, the caching pool, out-of-memory handling, host<->device copies.

Two layers:
1. The driver's stream-ordered pool (``cuMemAllocFromPoolAsync`` on device 0's default pool)
   with ``CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`` at its maximum, so freed memory stays reserved
   and later allocations are served without going back to the OS.
2. In front of it, a Python free list for small blocks (<= ``SMALL_MAX``), one list per
   (stream, power-of-two size): allocating a small output is a dict lookup and a
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

Out of memory: return every cached block to the driver, synchronise, trim the pool, retry
once, then raise ``OutOfMemoryError`` (a ``MemoryError``); nothing is left in a bad state.
"""
from __future__ import annotations

import atexit
import ctypes
import operator
import threading

import numpy as np

from . import runtime
from .driver import check

SMALL_MAX = 1 << 20  # blocks up to 1 MiB go through the Python free list (literal in malloc)
MIN_BLOCK = 512  # smallest block; sizes round up to a power of two >= this (literal in malloc)
STAGING_THRESHOLD = 8 << 20  # host copies >= this go through pinned staging (None: never)
STAGING_CHUNK = 4 << 20  # size of each of the two pinned staging buffers

_OOM = 2  # CUDA_ERROR_OUT_OF_MEMORY
_INVALID_VALUE = 1  # CUDA_ERROR_INVALID_VALUE
_shutdown = False


class OutOfMemoryError(MemoryError):
    """The device has no room for an allocation, even after releasing cached blocks."""

    def __init__(self, size: int, detail: str = ""):
        self.size = size
        super().__init__(
            f"Out of memory allocating {size} bytes on the GPU" + (f" ({detail})" if detail else "")
        )


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
        self._size = size  # accounted size: power-of-two block, or nbytes for big ones
        self._home = home  # the free list this block returns to (small blocks), else None

    def set_stream(self, stream: int, stream_owner=None) -> None:
        """Free on ``stream`` from now on (its last use moved there).  Change the stream only
        through this method: it also moves the block to that stream's free list."""
        self.stream = stream
        self.stream_owner = stream_owner
        if self._home is not None and self._pool is not None:
            self._home = self._pool._free.setdefault((stream, self._size), [])

    def free(self) -> None:
        """Release now instead of at garbage collection (idempotent)."""
        pool = self._pool
        if pool is not None:
            self._pool = None
            home = self._home
            if home is not None:
                home.append(self.ptr)
            else:
                pool._release_big(self.ptr, self._size, self.stream)

    def __del__(self):
        pool = self._pool
        if pool is None:
            return
        self._pool = None
        home = self._home
        if home is not None:  # hot path: back onto its stream's free list
            home.append(self.ptr)
        elif not _shutdown:
            try:
                pool._release_big(self.ptr, self._size, self.stream)
            except Exception:  # never raise from __del__ (e.g. a sticky context error)
                pass

    def __int__(self):
        return self.ptr

    def __repr__(self):
        return f"<DeviceBuffer ptr=0x{self.ptr:x} nbytes={self.nbytes} stream=0x{self.stream:x}>"


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
        self._lock = threading.RLock()  # slow paths only; reentrant: GC may run __del__ inside
        self._outstanding = 0  # bytes taken from the driver pool and not given back

    # -- allocation -------------------------------------------------------------------

    def malloc(self, nbytes: int, stream: int | None = None, stream_owner=None) -> DeviceBuffer:
        """A buffer of at least ``nbytes`` on ``stream`` (default: the current stream and
        its owner).  With an explicit raw ``stream``, pass its ``stream_owner`` too, or keep
        the stream alive until the buffer is gone."""
        if nbytes.__class__ is not int:  # NumPy integers lack bit_length
            nbytes = operator.index(nbytes)
        if stream is None:
            stream, stream_owner = self._tls.cur
        else:
            self._tls.stream  # binds the context in this thread
        if 0 < nbytes <= 1048576:  # SMALL_MAX
            size = 512 if nbytes <= 512 else 1 << (nbytes - 1).bit_length()  # MIN_BLOCK
            home = self._free.get((stream, size))
            if home:
                try:
                    return DeviceBuffer(home.pop(), nbytes, stream, stream_owner, self, size, home)
                except IndexError:  # another thread took the last one
                    pass
            elif home is None:
                home = self._free.setdefault((stream, size), [])
            ptr = self._driver_alloc(size, stream)
            return DeviceBuffer(ptr, nbytes, stream, stream_owner, self, size, home)
        if nbytes == 0:
            return DeviceBuffer(0, 0, stream, None, None, 0, None)
        if nbytes < 0:
            raise ValueError(f"negative allocation size {nbytes}")
        ptr = self._driver_alloc(nbytes, stream)
        return DeviceBuffer(ptr, nbytes, stream, stream_owner, self, nbytes, None)

    def _driver_alloc(self, size: int, stream: int) -> int:
        err, ptr = self._alloc_async(size, self._handle, stream)
        if err and not self._is_oom(err, size) and runtime.rebind():
            err, ptr = self._alloc_async(size, self._handle, stream)
        if err:
            if not self._is_oom(err, size):
                check(err, f"cuMemAllocFromPoolAsync({size})")
            self.free_all_blocks()
            err, ptr = self._alloc_async(size, self._handle, stream)
            if err:
                if not self._is_oom(err, size):
                    check(err, f"cuMemAllocFromPoolAsync({size})")
                raise OutOfMemoryError(
                    size, f"{self.used_bytes()} bytes in use by cupynum's pool, "
                    f"device total {runtime.total_memory()} bytes"
                )
        with self._lock:
            self._outstanding += size
        return int(ptr)

    @staticmethod
    def _is_oom(err, size: int) -> bool:
        # A request larger than the whole device may be reported as INVALID_VALUE.
        return err == _OOM or (err == _INVALID_VALUE and size > runtime.total_memory())

    def _release_big(self, ptr: int, size: int, stream: int) -> None:
        self._tls.stream  # GC may run this in any thread: bind the context there
        (err,) = self._free_async(ptr, stream)
        with self._lock:
            self._outstanding -= size
        check(err, "cuMemFreeAsync")

    # -- maintenance ------------------------------------------------------------------

    def _drain(self, only_stream=None) -> None:
        """Return free-list blocks (of one stream, or all) to the driver pool."""
        self._tls.stream
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
        return sum(size * len(lst) for (_, size), lst in list(self._free.items()))

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
        """Blocks in the Python free list."""
        return sum(len(v) for v in list(self._free.values()))


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


# --- copies --------------------------------------------------------------------------
# All take int device pointers and an optional stream (default: the current stream).
# Host->device: the host array may be modified or freed as soon as the call returns (for
# pageable memory the driver stages the data before returning; big copies go through our
# own staging).  Device->host: the host array holds the data when the call returns.


def _stream(stream):
    return runtime._tls.stream if stream is None else stream


def memcpy_htod(dst_ptr: int, host: np.ndarray, stream: int | None = None) -> None:
    """Copy the bytes of ``host`` (made C-contiguous if needed) to ``dst_ptr``."""
    host = np.ascontiguousarray(host)
    n = host.nbytes
    if n == 0:
        return
    s = _stream(stream)
    if STAGING_THRESHOLD is not None and n >= STAGING_THRESHOLD:
        _staging().htod(dst_ptr, host, n, s)
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
    s = _stream(stream)
    if STAGING_THRESHOLD is not None and n >= STAGING_THRESHOLD:
        _staging().dtoh(host, src_ptr, n, s)
        return
    d = runtime._d
    (err,) = d.cuMemcpyDtoHAsync(host.ctypes.data, src_ptr, n, s)
    check(err, "cuMemcpyDtoHAsync")
    (err,) = d.cuStreamSynchronize(s)
    check(err, "cuStreamSynchronize")


def memcpy_dtod(dst_ptr: int, src_ptr: int, nbytes: int, stream: int | None = None) -> None:
    """Device-to-device copy, queued on the stream."""
    if nbytes <= 0:
        return
    (err,) = runtime._d.cuMemcpyDtoDAsync(dst_ptr, src_ptr, nbytes, _stream(stream))
    check(err, "cuMemcpyDtoDAsync")


def memset_d8(ptr: int, value: int, n: int, stream: int | None = None) -> None:
    """Set ``n`` bytes at ``ptr`` to ``value & 0xFF``, queued on the stream."""
    if n <= 0:
        return
    (err,) = runtime._d.cuMemsetD8Async(ptr, value & 0xFF, n, _stream(stream))
    check(err, "cuMemsetD8Async")


class _Staging:
    """Two pinned host buffers used in turn, so the CPU copy of one chunk overlaps the DMA
    of the other.  An event per buffer says when its last DMA finished; a lock serialises
    threads (one big copy at a time through staging).  Allocated once, kept for the process.
    """

    def __init__(self):
        runtime.init()
        d = runtime._d
        runtime.ensure_thread()
        self.lock = threading.Lock()
        self.ptrs, self.views, self.events = [], [], []
        for _ in range(2):
            err, p = d.cuMemHostAlloc(STAGING_CHUNK, 0)
            check(err, "cuMemHostAlloc")
            p = int(p)
            self.ptrs.append(p)
            self.views.append(np.ctypeslib.as_array((ctypes.c_uint8 * STAGING_CHUNK).from_address(p)))
            self.events.append(runtime.create_event(timing=False))
        self.chunk = STAGING_CHUNK

    def _wait(self, k):
        (err,) = runtime._d.cuEventSynchronize(self.events[k])
        check(err, "cuEventSynchronize")

    def htod(self, dst: int, host: np.ndarray, n: int, stream: int) -> None:
        d, ch = runtime._d, self.chunk
        src = host.reshape(-1).view(np.uint8)
        with self.lock:
            runtime.ensure_thread()
            for i, off in enumerate(range(0, n, ch)):
                k, m = i & 1, min(ch, n - off)
                self._wait(k)  # the previous DMA out of this buffer is done
                self.views[k][:m] = src[off:off + m]
                (err,) = d.cuMemcpyHtoDAsync(dst + off, self.ptrs[k], m, stream)
                check(err, "cuMemcpyHtoDAsync")
                (err,) = d.cuEventRecord(self.events[k], stream)
                check(err, "cuEventRecord")

    def dtoh(self, host: np.ndarray, src: int, n: int, stream: int) -> None:
        d, ch = runtime._d, self.chunk
        dst = host.reshape(-1).view(np.uint8)  # a view: host is C-contiguous
        chunks = [(off, min(ch, n - off)) for off in range(0, n, ch)]

        def issue(i):
            k = i & 1
            off, m = chunks[i]
            self._wait(k)  # nobody still reads this buffer
            (err,) = d.cuMemcpyDtoHAsync(self.ptrs[k], src + off, m, stream)
            check(err, "cuMemcpyDtoHAsync")
            (err,) = d.cuEventRecord(self.events[k], stream)
            check(err, "cuEventRecord")

        with self.lock:
            runtime.ensure_thread()
            issue(0)
            for i, (off, m) in enumerate(chunks):
                if i + 1 < len(chunks):
                    issue(i + 1)
                k = i & 1
                self._wait(k)
                dst[off:off + m] = self.views[k][:m]


_staging_obj: _Staging | None = None


def _staging() -> _Staging:
    global _staging_obj
    if _staging_obj is None:
        with _pool_lock:
            if _staging_obj is None:
                _staging_obj = _Staging()
    return _staging_obj


__all__ = [
    "DeviceBuffer", "MemoryPool", "OutOfMemoryError", "alloc", "get_pool", "memcpy_dtod",
    "memcpy_dtoh", "memcpy_htod", "memset_d8",
]
