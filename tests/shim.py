"""Host-side access to kernels/ for the tests that run CUDA kernel text on the CPU.

* ``CXX``: the host C++ compiler (``$CXX``, else g++, c++, clang++), or None;
* ``SHIM`` / ``FIBER_SHIM``: the CUDA shims.  ``SHIM`` makes ``blockIdx`` & co. globals, so a
  launch can run every thread of every block in turn (kernels whose threads never meet);
  ``FIBER_SHIM`` also runs each block's threads as ucontext fibers that pass
  ``__syncthreads`` together (``cpn_run``), with shared memory, ``__match_any_sync``,
  ``__shfl_up_sync``, ``__shfl_sync``, ``__ballot_sync``, ``__all_sync``, ``__syncwarp``
  (all called uniformly: each is a block barrier or two), ``__popc``/``__popcll``, ``__ldg``
  and single-threaded atomics, for kernels that cooperate within a block.  Blocks run one
  after another in blockIdx order, so a look-back over lower tiles never waits;
* ``build(src, tag, flags)``: compile shim + kernel text into a shared library, cached in the
  temp directory by a hash of the text, the compiler, the flags and kernels/*.cuh;
* ``HostArray``: the ndarray fields the CUDA backend reads, over NumPy memory;
* ``ROOT``, ``KERNELS``, and ``_ops`` (the op table, loaded on its own when the package
  cannot be imported: it may be mid-edit, and the table module stands alone).

Nothing here imports cupynum at module level.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from cupynum._backends.buffer import Buffer

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
CXX = next((c for c in (os.environ.get("CXX"), "g++", "c++", "clang++") if c and shutil.which(c)),
           None)

try:
    from cupynum import _ops
except Exception:  # the package may be mid-edit; the table module stands alone
    import importlib.util

    _spec = importlib.util.spec_from_file_location("_cpn_ops", ROOT / "cupynum" / "_ops.py")
    _ops = importlib.util.module_from_spec(_spec)
    sys.modules["_cpn_ops"] = _ops
    _spec.loader.exec_module(_ops)

SHIM = """\
struct cpn_dim3 { unsigned int x, y, z; };
static cpn_dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
"""

FIBER_SHIM = "\n#include <ucontext.h>\n#include <cstdlib>\n#include <cstring>\n" + SHIM + r"""\
#define __shared__ static
static ucontext_t cpn_sched;
static ucontext_t cpn_fib[1024];
static char* cpn_stacks[1024];
static bool cpn_done[1024];
static int cpn_cur, cpn_nthr;
static void (*cpn_fn)(void**);
static void** cpn_args;
static void cpn_barrier() { swapcontext(&cpn_fib[cpn_cur], &cpn_sched); }
// warp-level barrier: while any thread waits at one, only those threads are resumed (the
// others stay parked at their __syncthreads), so one warp may run collectives alone
static bool cpn_wwait[1024];
static void cpn_wbarrier() { cpn_wwait[cpn_cur] = true; swapcontext(&cpn_fib[cpn_cur], &cpn_sched); }
#define __syncthreads() cpn_barrier()
static int cpn_tid() { return threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y; }
static unsigned long long cpn_slot[1024];
static unsigned __match_any_sync(unsigned, unsigned v) {
  int t = cpn_tid(); cpn_slot[t] = v; cpn_barrier();
  unsigned m = 0; int w0 = t & ~31;
  for (int l = 0; l < 32 && w0 + l < cpn_nthr; ++l) if (cpn_slot[w0 + l] == v) m |= 1u << l;
  cpn_barrier(); return m;
}
static int __popc(unsigned x) { return __builtin_popcount(x); }
static void __syncwarp(unsigned = 0xffffffffu) { cpn_barrier(); }
template <class T> static T __shfl_sync(unsigned, T v, int src) {
  unsigned long long b = 0; memcpy(&b, &v, sizeof(T));
  int t = cpn_tid(); cpn_slot[t] = b; cpn_barrier();
  b = cpn_slot[(t & ~31) + (src & 31)]; cpn_barrier(); T o; memcpy(&o, &b, sizeof(T)); return o;
}
static unsigned __ballot_sync(unsigned, int p) {
  int t = cpn_tid(); cpn_slot[t] = p != 0; cpn_barrier();
  unsigned m = 0; int w0 = t & ~31;
  for (int l = 0; l < 32 && w0 + l < cpn_nthr; ++l) if (cpn_slot[w0 + l]) m |= 1u << l;
  cpn_barrier(); return m;
}
static int __all_sync(unsigned mask, int p) {
  int w0 = cpn_tid() & ~31, k = cpn_nthr - w0 < 32 ? cpn_nthr - w0 : 32;
  unsigned full = k == 32 ? 0xffffffffu : (1u << k) - 1u;
  return __ballot_sync(mask, p) == full;
}
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
template <class T> static T __ldg(const T* p) { return *p; }
static int __shfl_up_sync(unsigned, int v, int d) {  // called by every thread, uniformly
  int t = cpn_tid(); cpn_slot[t] = (unsigned long long)(unsigned)v; cpn_barrier();
  int r = (t & 31) >= d ? (int)(unsigned)cpn_slot[t - d] : v;
  cpn_barrier(); return r;
}
template <class T> static T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
static void __threadfence_system() {}
static unsigned long long atomicCAS(unsigned long long* p, unsigned long long c, unsigned long long v) {
  unsigned long long o = *p; if (o == c) *p = v; return o;
}
static void cpn_entry() { cpn_fn(cpn_args); cpn_done[cpn_cur] = true; }
static void cpn_run(void (*fn)(void**), void** args, unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz) {
  gridDim = {gx, gy, gz}; blockDim = {bx, by, bz}; cpn_nthr = bx * by * bz;
  cpn_fn = fn; cpn_args = args;
  for (int t = 0; t < cpn_nthr; ++t) if (!cpn_stacks[t]) cpn_stacks[t] = (char*)malloc(1 << 16);
  for (unsigned z = 0; z < gz; ++z) for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) {
    blockIdx = {x, y, z};
    for (int t = 0; t < cpn_nthr; ++t) {
      getcontext(&cpn_fib[t]);
      cpn_fib[t].uc_stack.ss_sp = cpn_stacks[t]; cpn_fib[t].uc_stack.ss_size = 1 << 16;
      cpn_fib[t].uc_link = &cpn_sched;
      makecontext(&cpn_fib[t], cpn_entry, 0);
      cpn_done[t] = false; cpn_wwait[t] = false;
    }
    for (;;) {
      bool any = false, anyw = false;
      for (int t = 0; t < cpn_nthr; ++t) anyw |= !cpn_done[t] && cpn_wwait[t];
      for (int t = 0; t < cpn_nthr; ++t) {
        if (cpn_done[t] || (anyw && !cpn_wwait[t])) continue;
        any = true; cpn_cur = t; cpn_wwait[t] = false;
        threadIdx = {(unsigned)(t % bx), (unsigned)((t / bx) % by), (unsigned)(t / (bx * by))};
        swapcontext(&cpn_sched, &cpn_fib[t]);
      }
      if (!any) break;
    }
  }
}
"""


def build(src: str, tag: str, flags) -> ctypes.CDLL:
    """Compile ``src`` (shim included) with ``CXX flags -I kernels/`` into a shared library
    named ``cupynum-<tag>-host-<hash>.so`` in the temp directory, unless it is there already,
    and load it.  The source and the unrenamed output are per process: pytest-xdist workers
    may build the same library at once, and the last ``os.replace`` wins."""
    flags = list(flags)
    h = hashlib.sha256((src + " ".join([CXX] + flags)).encode())
    for p in sorted(KERNELS.rglob("*.cuh")):
        h.update(p.read_bytes())
    out = Path(tempfile.gettempdir()) / f"cupynum-{tag}-host-{h.hexdigest()[:20]}.so"
    if not out.exists():
        cpp = out.with_suffix(f".{os.getpid()}.cpp")
        cpp.write_text(src)
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        res = subprocess.run([CXX, *flags, f"-I{KERNELS}", str(cpp), "-o", str(tmp)],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-4000:]  # (the .cpp stays, to look at)
        cpp.unlink()
        os.replace(tmp, out)
    return ctypes.CDLL(str(out))


class HostMemory(np.ndarray):
    """Host bytes standing in for a device allocation: a uint8 array that answers ``.ptr``
    (its address), as the CUDA backend's DeviceBuffer does."""

    @property
    def ptr(self) -> int:
        return self.__array_interface__["data"][0]


def host_memory(nbytes: int) -> HostMemory:
    """``nbytes`` (at least 1) of 64-byte aligned host memory, as a device allocation."""
    raw = np.empty(max(int(nbytes), 1) + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + max(int(nbytes), 1)].view(HostMemory)


def alias_host_allocations(monkeypatch) -> None:
    """Make the host backend's new Buffers hold one host allocation as both copies: the host
    backend reads it through ``host``, CUDA backend code run on the CPU through ``device``."""
    from cupynum import _host_path
    from cupynum._backends import host

    monkeypatch.setattr(host, "_alloc", lambda nbytes: host_memory(nbytes)[:nbytes])
    monkeypatch.setattr(host.HostBackend, "_wrap", staticmethod(lambda raw: Buffer(raw, raw)))
    # the host path's results: NumPy's own allocation, read through ``device`` as well
    monkeypatch.setattr(_host_path, "_buffer_of",
                        lambda raw: Buffer(raw, raw.view(HostMemory) if raw.size else
                                           host_memory(1)[:0]))


class HostArray:
    """The ndarray fields the backend reads, over NumPy memory (the Buffer's device copy
    answers ``.ptr``: the NumPy array's address)."""

    def __init__(self, a: np.ndarray):
        self.np = a
        self._buf = Buffer(None, type("Buf", (), {"ptr": a.__array_interface__["data"][0]})())
        self._offset = 0
        self._shape, self._strides, self.dtype = a.shape, a.strides, a.dtype
        self._size = a.size
        self._c_contig = a.flags.c_contiguous
