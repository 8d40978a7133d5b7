"""Small kernels written by hand (indexing, compaction, sort, transpose): text, compile,
launch, and the few memory calls they make.

A ``Kernel`` is an ``extern "C"`` CUDA function whose parameters are listed once as
``(C++ type, NumPy dtype)``; the same list lays out its ``runtime.ParamBlock`` and, in the
CPU tests, the host wrapper that unpacks the ``void*[]`` the way ``cuLaunchKernel`` does.
Every device touch of these modules goes through the ``DEV`` object below, so the tests
(tests/test_index_kernels_host.py) replace it with a CPU version and run the kernel text
itself, compiled by the host C++ compiler.
"""
from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

from . import compiler, launch, memory, runtime  # (none loads the driver bindings yet)
from .driver import check

PRELUDE = """\
template <int M> struct cpn_arr { long long v[M]; };
struct cpn_u16 { unsigned long long a, b; };
"""


class Kernel:
    """One ``extern "C"`` kernel: ``name``, ``params`` [(ctype, dtype)], ``body`` (the text
    after the signature, braces included), ``prelude`` (text before it)."""

    __slots__ = ("name", "params", "body", "prelude")

    def __init__(self, name, params, body, prelude=""):
        self.name, self.params, self.body, self.prelude = name, tuple(params), body, prelude

    def signature(self) -> str:
        return (f'extern "C" __global__ void {self.name}(' +
                ", ".join(f"{t} p_{i}" for i, (t, _) in enumerate(self.params)) + ")")

    def source(self) -> str:
        return self.prelude + "\n" + self.signature() + "\n" + self.body + "\n"


def program(kernels) -> str:
    """One program holding these kernels (deduplicated by name)."""
    seen, parts, preludes = set(), [], []
    for k in kernels:
        if k.name in seen:
            continue
        seen.add(k.name)
        if k.prelude and k.prelude not in preludes:
            preludes.append(k.prelude)
        parts.append(k.signature() + "\n" + k.body + "\n")
    return PRELUDE + "\n".join(preludes) + "\n" + "\n".join(parts)


class _Device:
    """The device calls of the hand-written kernels (replaced on the CPU in tests)."""

    def __init__(self):
        self._funcs = {}
        self._prepared = {}
        self._lock = threading.Lock()

    def function(self, kernel: Kernel):
        f = self._funcs.get(kernel.name)
        if f is None:
            src = program([kernel])
            cubin = compiler.compile_cubin(src, name="cupynum_index.cu").cubin
            with self._lock:
                f = self._funcs.get(kernel.name)
                if f is None:
                    f = self._funcs[kernel.name] = runtime.load_module(cubin).get_function(
                        kernel.name)
        return f

    def launch(self, kernel: Kernel, grid, block, values, shmem=0):
        """Launch ``kernel`` on the current stream through its ``launch.Prepared`` (a
        ``cpn_arr`` slot takes a sequence of ints)."""
        entry = self._prepared.get(kernel.name)
        if entry is None:
            p = launch.Prepared(kernel, self.function(kernel), [dt for _, dt in kernel.params])
            entry = self._prepared[kernel.name] = (p, _array_slots(p))
        p, arrays = entry
        flat = values
        if arrays and p.fmts is not None:
            flat = []
            for i, v in enumerate(values):
                if i in arrays:
                    flat.extend(v.tolist() if hasattr(v, "tolist") else v)
                else:
                    flat.append(v)
        try:
            p.launch(flat, grid, block, shmem)
        except (struct.error, TypeError, OverflowError):  # e.g. a 0-d array value
            p.launch_converted(values, grid, block, shmem)

    def alloc(self, nbytes):
        return memory.get_pool().malloc(max(int(nbytes), 1))

    def dtoh(self, host, ptr):
        memory.memcpy_dtoh(host, ptr)

    def htod(self, ptr, host):
        memory.memcpy_htod(ptr, host)

    def dtod(self, dst, src, nbytes):
        memory.memcpy_dtod(dst, src, nbytes)

    def memset(self, ptr, value, nbytes):
        memory.memset_d8(ptr, value, nbytes)

    def sync(self):
        """Wait for the work queued on the current stream."""
        runtime.synchronize_stream()

    def idle(self) -> bool:
        """Whether the current stream's work is done (raises if it failed)."""
        return runtime.stream_query(runtime.current_stream())

    def mapped_host(self, count):
        """``count`` int64 of pinned host memory that kernels can write (kept for the
        process's life), as a NumPy array, and their device address."""
        d = runtime._d
        err, p = d.cuMemHostAlloc(8 * count, 2)  # CU_MEMHOSTALLOC_DEVICEMAP
        check(err, "cuMemHostAlloc")
        err, dp = d.cuMemHostGetDevicePointer(p, 0)
        check(err, "cuMemHostGetDevicePointer")
        return (np.ctypeslib.as_array((ctypes.c_int64 * count).from_address(int(p))),
                int(dp))

    def sm_count(self):
        return runtime.multiprocessor_count()


def _array_slots(p) -> frozenset:
    """The slots of ``p``'s kernel that take several values (``cpn_arr`` structs)."""
    return frozenset(i for i, dt in enumerate(p.pb.dtypes) if dt.shape)


DEV = _Device()

PTR = np.dtype(np.uintp)
I64 = np.dtype(np.int64)
I32 = np.dtype(np.int32)

UNIT_CTYPE = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
              8: "unsigned long long", 16: "cpn_u16"}


def arr_dtype(m: int) -> np.dtype:
    """The ParamBlock slot of a ``cpn_arr<m>`` struct parameter."""
    return np.dtype((np.int64, (m,)))
