"""CUDA gather/scatter (advanced indexing), compaction (nonzero, ``a[mask]``) and the tiled
transpose.

Gather and scatter are one kernel family, ``cpn_ix_<mode>_u<unit>_k<K>``: the iteration
space is the result's shape (collapsed like an elementwise op), and per dimension three
byte strides move three cursors: the data (0 on the broadcast index dims), the other
operand (result of a gather, values of a scatter) and each of the K int64 index arrays
(0 outside the index dims).  An index is wrapped if negative and multiplied by its axis's
byte stride.  Elements move as raw units (like the bit copy), so one kernel serves every
dtype of that size.  The common ``a[idx]`` (one contiguous index array, a 1-D contiguous
result) takes ``cpn_gather1_*`` instead: several indices per thread, all loaded before any
element is.  Out-of-bounds indices set a flag (and record which index array and value) that
the caller reads once after the launch: that read is the sync point NumPy's IndexError
needs; the bounds check is part of the gather kernel (no separate pass), and the flag stays
zero between uses (no memset per call).  Scatters check first (a ``check`` pass over the
index arrays) so that an error leaves the target untouched, as in NumPy.

Repeated scatter targets: every thread writes a whole unit (<= 8 bytes, or 16 for aligned
16-byte elements), so each target ends with one of the values written to it.

Compaction (count, scan, write; one 8-byte read) and the transpose tiles are described
above their code.  Their knobs (``tuning.GATHER``, ``tuning.COMPACTION``,
``tuning.TRANSPOSE``) choose among kernel variants; benchmarks/probes/index_probe.py times
them all.
"""
from __future__ import annotations

import ctypes
import functools
import itertools

import numpy as np

from ..counters import COUNTS
from . import kernels_util as ku
from . import runtime
from .kernels_util import DEV, I32, I64, PTR, Kernel, arr_dtype
from . import tuning
from . import transfers
from .driver import check
from .elementwise import collapse
from .view import dptr

MAXD = 8  # dims of the iteration space after collapse (more: the host does it)
MAXK = 4  # index arrays per gather/scatter (more: the host does it)
BLOCK = 256


# --- gather / scatter ------------------------------------------------------------------------
# The bounds flag: 5 int64 on the device (set?, index array, value, host copy's address,
# head blocks checked), and where mapped host memory exists a host copy (set?, index array,
# value, the seq of the last early signal).
# The first thread to find a bad index claims the flag and records the index; where the
# host copy exists (pinned memory mapped into the device's address space) it writes the
# record there too, so the host learns the answer from a stream sync alone, no copy back.
FLAG_PRELUDE = """\
#ifndef CPN_FLAG_RAISE
#define CPN_FLAG_RAISE
__device__ __forceinline__ void cpn_flag_raise(long long* flag, long long j, long long v) {
  if (atomicCAS((unsigned long long*)flag, 0ull, 1ull) != 0ull) return;
  flag[1] = j; flag[2] = v;
  volatile long long* h = (volatile long long*)flag[3];
  if (h) { h[1] = j; h[2] = v; __threadfence_system(); h[0] = 1; __threadfence_system(); }
}
// Early signal (gather1_kernel's ``signal``): thread 0 of each head block, after a barrier
// behind its block's checks, counts the block in flag[4]; the last one writes seq to the
// host copy's word 3.  A bad index's record reached the host before its block counted
// (the fences above), so once word 3 reads seq the host knows the answer.
__device__ __forceinline__ void cpn_head_checked(long long* flag, unsigned head,
                                                 long long seq) {
  if (atomicAdd((unsigned long long*)(flag + 4), 1ull) != head - 1ull) return;
  flag[4] = 0;  // (for the next launch: stream order puts it after this one)
  volatile long long* h = (volatile long long*)flag[3];
  if (h) { __threadfence_system(); h[3] = seq; __threadfence_system(); }
}
#endif
"""


def ix_kernel(mode: str, unit: int, k: int) -> Kernel:
    """mode: 'gather' (other = data[...]), 'gatherc' (same, bounds checked), 'scatter'
    (data[...] = other), 'check' (only bounds, over the index dims)."""
    u = ku.UNIT_CTYPE[unit]
    # g.v layout: shape[MAXD], sd[MAXD], so[MAXD], si[k][MAXD], n[k], s[k], p[k]
    m = MAXD * (3 + k) + 3 * k
    checked = mode in ("gatherc", "check")
    lines = [
        "{",
        "  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
        "  const long long step = (long long)gridDim.x * blockDim.x;",
        "  char* data = p_0; char* other = p_1; const cpn_arr<%d>& g = p_2;" % m,
        "  const long long total = p_3; const int ndim = p_4; long long* flag = p_5;",
        "#pragma unroll 1",
        "  for (long long i = tid; i < total; i += step) {",
        f"    long long rem = i, od = 0, oo = 0, oi[{k}];",
        f"#pragma unroll\n    for (int j = 0; j < {k}; ++j) oi[j] = 0;",
        "#pragma unroll",
        f"    for (int d = 0; d < {MAXD}; ++d) {{",
        "      long long c = rem;",
        "      if (d + 1 < ndim) { const long long q = rem / g.v[d]; c = rem - q * g.v[d]; rem = q; }",
        f"      od += c * g.v[{MAXD} + d]; oo += c * g.v[{2 * MAXD} + d];",
        f"#pragma unroll\n      for (int j = 0; j < {k}; ++j) oi[j] += c * g.v[{3 * MAXD} + j * {MAXD} + d];",
        "      if (d + 1 >= ndim) break;",
        "    }",
        "    bool ok = true;",
        "#pragma unroll",
        f"    for (int j = 0; j < {k}; ++j) {{",
        f"      const long long n = g.v[{(3 + k) * MAXD} + j];",
        f"      const long long s = g.v[{(3 + k) * MAXD + k} + j];",
        f"      const char* ip = (const char*)(g.v[{(3 + k) * MAXD + 2 * k} + j]);",
        "      const long long raw = *(const long long*)(ip + oi[j]);",
        "      const long long v = raw < 0 ? raw + n : raw;",
    ]
    if checked:
        lines += [
            "      if (v < 0 || v >= n) {",
            "        ok = false;",
            "        cpn_flag_raise(flag, j, raw);",
            "      }",
        ]
    lines += ["      od += v * s;", "    }"]
    if mode == "check":
        lines += ["    (void)od; (void)oo; (void)ok;"]
    elif mode in ("gather", "gatherc"):
        lines += [f"    if (ok) *({u}*)(other + oo) = *(const {u}*)(data + od);"]
    else:
        lines += [f"    *({u}*)(data + od) = *(const {u}*)(other + oo);"]
    lines += ["  }", "}"]
    params = [("char*", PTR), ("char*", PTR), (f"const cpn_arr<{m}>", arr_dtype(m)),
              ("const long long", I64), ("const int", I32), ("long long*", PTR)]
    return Kernel(f"cpn_ix_{mode}_u{unit}_k{k}", params, "\n".join(lines),
                  FLAG_PRELUDE if checked else "")


# The streaming gather's knobs are ``tuning.GATHER``.  a[idx] of a large array returns
# before its gather ends (gather1_kernel's ``signal``): the last 1/signal_tail_div of the
# blocks (the tail) are checked by the blocks before them, which signal the host once done,
# so the host answers the bounds check while the tail still runs (docs/internals.md,
# "Measured", has the figures behind the defaults).

# index loads: "ldg" (ld.global.nc), "nc_ef" (nc, L1 no_allocate, L2 evict_first policy)
_LOAD_PTX = {"ldg": "ld.global.nc", "nc_ef": "ld.global.nc.L1::no_allocate.L2::cache_hint"}
# unit -> (C type, PTX type, register constraint)
_ASM_UNIT = {4: ("unsigned int", "b32", "r"), 8: ("unsigned long long", "b64", "l")}


_POL_OPERAND = ', "l"(pol)'  # the cache-policy operand of an L2::cache_hint access


def _gather_prelude() -> str:
    """Load helpers, one per (hint, unit): inline PTX on the device, plain accesses in the
    host C++ of the CPU tests (no ``__CUDA_ARCH__`` there)."""
    dev, host = [
        "__device__ __forceinline__ unsigned long long cpn_pol_ef() {\n"
        "  unsigned long long p;\n"
        '  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));\n'
        "  return p;\n}"], ["inline unsigned long long cpn_pol_ef() { return 0; }"]
    for unit, (ct, pt, rc) in list(_ASM_UNIT.items()) + [(16, ("cpn_u16", "b64", "l"))]:
        # 16-byte units move as two 64-bit registers (v2)
        vec, regs = (".v2", "{%0, %1}") if unit == 16 else ("", "%0")
        outs = '"=l"(v.a), "=l"(v.b)' if unit == 16 else f'"={rc}"(v)'
        nreg = 2 if unit == 16 else 1
        for mode, ptx in _LOAD_PTX.items():
            hint = ptx.endswith("cache_hint")  # the L2 policy is the last operand
            pol = f", %{nreg + 1}" if hint else ""
            asm = (f'asm("{ptx}{vec}.{pt} {regs}, [%{nreg}]{pol};" : {outs} : "l"(p)'
                   f'{_POL_OPERAND if hint else ""});')
            head = f"cpn_ld_{mode}_u{unit}(const {ct}* p, unsigned long long pol)"
            dev.append(f"__device__ __forceinline__ {ct} {head} {{\n  {ct} v; (void)pol;\n"
                       f"  {asm}\n  return v;\n}}")
            host.append(f"inline {ct} {head} {{ (void)pol; return *p; }}")
    return ("#if defined(__CUDA_ARCH__)\n" + "\n".join(dev) + "\n#else\n" + "\n".join(host)
            + "\n#endif")


_GATHER_PRELUDE = _gather_prelude() + "\n" + FLAG_PRELUDE


def _ld(mode: str, unit: int, ctype: str, ptr: str) -> str:
    """Text loading one ``ctype`` at ``ptr`` with the hint ``mode``."""
    if mode == "plain" or unit < 4:
        return f"*(const {ctype}*)({ptr})"
    return f"cpn_ld_{mode}_u{unit}((const {ctype}*)({ptr}), pol)"


@functools.lru_cache(maxsize=None)  # a call builds the kernel's text: once per variant
def gather1_kernel(unit: int, checked: bool, ilp: int, o32: bool, block: int = 256,
                   idx_load: str = "ldg", signal: bool = False) -> Kernel:
    """``out[i] = data[wrap(idx[i]) * s]`` for contiguous int64 ``idx`` and ``out``: each
    thread takes ``ilp`` indices a block-width apart (coalesced), loads them all, then all
    their elements, then stores (memory-level parallelism for the random reads).  Checked:
    an out-of-range index sets the flag (as ``ix_kernel``) and its element is skipped.
    ``idx_load``: the index loads' cache hint (``_LOAD_PTX``).

    ``signal`` (checked; one round per block: the grid covers ``total``): the first ``head``
    blocks (``p_8``) check their indices and the tail's (head block b also checks block
    b + tail's, for the last ``tail`` head blocks), count themselves once checked, before
    their element loads (``cpn_head_checked``), and the last one writes ``seq`` (``p_7``)
    to the flag's host copy: the host knows the answer while the element loads are still
    in flight, and while the tail blocks still gather (they skip a bad index without
    raising the flag, which their checkers raised already).  Without a tail every block
    is a head block and every index is read once."""
    u = ku.UNIT_CTYPE[unit]
    ix = "long long"
    wrap = "      const long long t = v[j] < 0 ? v[j] + n : v[j];\n"
    bad = "(unsigned long long)t >= (unsigned long long)n"
    off = "(long long)((unsigned)t * (unsigned)s)" if o32 else "t * s"
    raise_ = "is_head && i < total" if signal else "i < total"
    chk = (f"      if ({bad}) {{\n"
           "        ok[j] = false;\n"
           f"        if ({raise_}) cpn_flag_raise(flag, 0, v[j]);\n"
           "      }\n") if checked else ""
    chunk = block * ilp
    head = f"""{{
  const char* __restrict__ data = p_0; {u}* __restrict__ out = ({u}*)p_1;
  const long long* __restrict__ idx = p_2;
  const {ix} total = ({ix})p_3; const long long n = p_4, s = p_5; long long* flag = p_6;
  const unsigned long long pol = cpn_pol_ef(); (void)pol;
"""
    count = ""
    if signal:  # one round per block; the head blocks check, count and signal
        head += f"""  const unsigned head = (unsigned)p_8, tail = gridDim.x - head;
  const bool is_head = blockIdx.x < head;
  {{
    const {ix} base = ({ix})blockIdx.x * {chunk} + ({ix})threadIdx.x;
"""
        tail_wrap = wrap.replace("v[j]", "w")
        count = f"""    if (is_head && blockIdx.x + tail >= head) {{  // the tail block it checks
      const {ix} tbase = ({ix})(blockIdx.x + tail) * {chunk} + ({ix})threadIdx.x;
#pragma unroll
      for (int j = 0; j < {ilp}; ++j) {{
        const {ix} i = tbase + j * {block};
        if (i < total) {{
          const long long w = (long long){_ld(idx_load, 8, "unsigned long long", "idx + i")};
{tail_wrap}          if ({bad}) cpn_flag_raise(flag, 0, w);
        }}
      }}
    }}
    if (is_head) {{  // (uniform in the block)
      __syncthreads();
      if (threadIdx.x == 0) cpn_head_checked(flag, head, p_7);
    }}
"""
    else:
        head += f"""  const {ix} step = ({ix})gridDim.x * {chunk};
  for ({ix} base = ({ix})blockIdx.x * {chunk} + ({ix})threadIdx.x; base < total;
       base += step) {{
"""
    loads = f"""    long long v[{ilp}]; bool ok[{ilp}]; {u} x[{ilp}];
#pragma unroll
    for (int j = 0; j < {ilp}; ++j) {{
      const {ix} i = base + j * {block};
      v[j] = i < total ? (long long){_ld(idx_load, 8, "unsigned long long", "idx + i")} : 0;
    }}
"""
    gathers = f"""#pragma unroll
    for (int j = 0; j < {ilp}; ++j) {{
      const {ix} i = base + j * {block};
{wrap}      ok[j] = i < total;
{chk}      if (ok[j]) x[j] = {_ld("plain", unit, u, "data + " + off)};
    }}
"""
    if signal:  # the block counts itself before its element loads (the barrier's wait
        #         would include them): its indices are checked first, offsets kept
        gathers = f"""    long long o[{ilp}];
#pragma unroll
    for (int j = 0; j < {ilp}; ++j) {{
      const {ix} i = base + j * {block};
{wrap}      ok[j] = i < total;
{chk}      o[j] = {off};
    }}
{count}#pragma unroll
    for (int j = 0; j < {ilp}; ++j)
      if (ok[j]) x[j] = {_ld("plain", unit, u, "data + o[j]")};
"""
    stores = f"""#pragma unroll
    for (int j = 0; j < {ilp}; ++j)
      if (ok[j]) *(out + base + j * {block}) = x[j];
"""
    body = head + loads + gathers + stores + """  }
}"""
    tag = "".join([f"_i{ilp}", "_o32" if o32 else "", f"_b{block}" if block != 256 else "",
                   f"_L{idx_load}" if idx_load != "ldg" else "", "_e" if signal else ""])
    name = f"cpn_gather1_u{unit}_{'c' if checked else 'n'}{tag}"
    return Kernel(name, [("const char*", PTR), ("char*", PTR), ("const long long*", PTR),
                         ("const long long", I64), ("const long long", I64),
                         ("const long long", I64), ("long long*", PTR),
                         ("const long long", I64), ("const long long", I64)], body,
                  _GATHER_PRELUDE)


def _unit(size, addrs, strides):
    bits = size
    for a in addrs:
        bits |= a
    for s in strides:
        bits |= s
    for u in (16, 8, 4, 2, 1):
        if u <= size and not bits & (u - 1) and not size % u:
            return u
    return 1


def _collapse(shape, strides_lists):
    return collapse(shape, strides_lists)


def _launch_gather1(checked, unit, data, out, idx, total, n, s, flag_ptr, signal=False):
    """``out[:] = data[idx]`` through ``gather1_kernel`` at ``tuning.GATHER``.  ``signal``
    (checked): the early-signal variant (its own ILP and index loads) where its grid is
    large enough; it writes a new seq to the flag's host copy.  Returns that seq, or 0 (no
    signal)."""
    t = tuning.GATHER
    o32 = t.o32 and 0 < s and n * s < 2**31
    signal = signal and -(-total // (t.block * t.signal_ilp)) >= max(2, t.signal_min_blocks)
    ilp, idx_load = (t.signal_ilp, t.signal_idx_load) if signal else (t.ilp, t.idx_load)
    grid = -(-total // (t.block * ilp))
    seq = head = 0
    if signal:
        seq = _FLAG.next_seq()
        head = grid - (grid // max(2, t.signal_tail_div) if t.signal_tail_div else 0)
    elif t.blocks_per_sm:
        grid = min(grid, DEV.sm_count() * t.blocks_per_sm)
    # (arguments by position: the lru_cache's quick key)
    kern = gather1_kernel(unit, checked, ilp, o32, t.block, idx_load, signal)
    DEV.launch(kern, max(1, grid), t.block,
               [dptr(data), dptr(out), dptr(idx), total, n, s, flag_ptr, seq, head])
    return seq


def indexed_copy(mode, data, indices, axis, other):
    """gather: ``other[...] = data[pre, idx..., post]``; scatter: the reverse.  ``data``
    has the indexed axes consecutive from ``axis``; ``other`` has shape pre + B + post;
    ``indices`` are int64 arrays broadcast to B.  Returns False when the layout is beyond
    the kernels (the caller uses the host)."""
    k = len(indices)
    bshape = indices[0]._shape
    nb = len(bshape)
    shape = other._shape
    pre = axis
    size = data.dtype.itemsize
    sd, so, si = [], list(other._strides), [[] for _ in range(k)]
    for d in range(len(shape)):
        if d < pre:
            sd.append(data._strides[d])
            for j in range(k):
                si[j].append(0)
        elif d < pre + nb:
            sd.append(0)
            for j in range(k):
                si[j].append(indices[j]._strides[d - pre])
        else:
            sd.append(data._strides[d - nb + k])
            for j in range(k):
                si[j].append(0)
    axn = [data._shape[axis + j] for j in range(k)]
    axs = [data._strides[axis + j] for j in range(k)]
    unit = _unit(size, (dptr(data), dptr(other)), sd + so + axs)
    if unit < size:  # a trailing dim of size // unit units
        shape = tuple(shape) + (size // unit,)
        sd, so = sd + [unit], so + [unit]
        si = [s + [0] for s in si]
    cshape, cst = _collapse(shape, [sd, so] + si)
    if len(cshape) > MAXD or k > MAXK:
        return False
    ndim = len(cshape)
    total = 1
    for n in cshape:
        total *= n
    if total == 0:
        return True

    def rev(v):  # innermost first, padded
        return list(v[::-1]) + [0] * (MAXD - ndim)

    g = rev(cshape) + rev(cst[0]) + rev(cst[1])
    for j in range(k):
        g += rev(cst[2 + j])
    flag = _FLAG.get()
    if (tuning.GATHER.streaming and k == 1 and mode != "scatter" and ndim == 1
            and cst[0][0] == 0
            and cst[1][0] == unit and cst[2][0] == 8 and dptr(indices[0]) % 8 == 0):
        # out[i] = data[idx[i]]: the streaming form (1-D, contiguous index and result)
        _launch_gather1(mode == "gatherc", unit, data, other, indices[0], total, axn[0],
                        axs[0], flag.ptr)
        return True
    g += axn + axs + [dptr(ix) for ix in indices]
    kern = ix_kernel(mode, unit, k)
    grid = max(1, min((total + BLOCK - 1) // BLOCK, DEV.sm_count() * 32))
    DEV.launch(kern, grid, BLOCK, [dptr(data), dptr(other), g, total, ndim, flag.ptr])
    return True


class _Flag:
    """The bounds flag (``FLAG_PRELUDE``).  It is zero between uses: zeroed when allocated
    and again after a read that found it set, so a checked launch needs no memset before
    it.  With ``tuning.GATHER.flag_mapped``, where the device lends mapped host memory
    (``DEV.mapped_host``), its host copy is read after a stream sync (``read``) or after
    the early signal (``wait``); otherwise the first three words are copied back."""

    def __init__(self):
        self.buf = None
        self.dev = None
        self.host_copy = None  # the mapped host copy in use (4 int64), or None
        self._done = None      # its word 3, as a ctypes integer (a cheap read in a spin)
        self.pinned = None
        self._seqs = itertools.count(1)  # (next() is atomic: threads get distinct seqs)
        self.seq = 0  # the last one handed out

    def _host(self):
        """Where the flag is copied to when not mapped: pinned memory on the GPU (the copy
        is one DMA, not a staged pageable copy), else a new host array."""
        if not (tuning.GATHER.flag_pinned and type(DEV) is ku._Device):
            return np.zeros(3, np.int64)
        if self.pinned is None:
            err, p = runtime._d.cuMemHostAlloc(64, 0)  # kept for the process's life
            check(err, "cuMemHostAlloc")
            self.pinned = np.ctypeslib.as_array((ctypes.c_int64 * 3).from_address(int(p)))
        return self.pinned

    def get(self):
        if self.buf is None or self.dev is not DEV:  # (tests swap DEV)
            self.buf, self.dev = DEV.alloc(64), DEV
            self.host_copy, self._done, addr = None, None, 0
            mapped = getattr(DEV, "mapped_host", None)
            if tuning.GATHER.flag_mapped and mapped is not None:
                self.host_copy, addr = mapped(4)
                self.host_copy[:] = 0
                self._done = ctypes.c_int64.from_address(self.host_copy.ctypes.data + 24)
            DEV.htod(self.buf.ptr, np.array([0, 0, 0, addr, 0], np.int64))
        return self.buf

    def reset(self):
        DEV.memset(self.get().ptr, 0, 24)

    def next_seq(self) -> int:
        self.seq = next(self._seqs)
        return self.seq

    def read(self):
        """(index array, value) of an out-of-bounds index, or None: the sync point."""
        h = self.host_copy
        if h is not None:
            DEV.sync()  # the kernels are done, and so are their writes to the host copy
            return self._take(h) if h[0] else None
        h = self._host()
        DEV.dtoh(h, self.get().ptr)
        return self._take(h) if h[0] else None

    def wait(self, seq):
        """``read`` for an early-signal launch: spins until the host copy's word 3 reaches
        ``seq`` (every index checked), asking the stream now and then in case the signal
        cannot come (the stream finished, or failed: the query raises)."""
        COUNTS["syncs"] += 1  # a host wait, though not a driver call
        done, spins = self._done, 0
        while done.value < seq:
            spins += 1
            if not spins & 1023 and DEV.idle():
                break
        h = self.host_copy
        if not h[0]:
            return None
        DEV.sync()  # (the other threads' stores to the host copy are done)
        return self._take(h)

    def _take(self, h):
        bad = int(h[1]), int(h[2])
        h[:3] = 0
        self.reset()
        return bad


_FLAG = _Flag()


def check_indices(indices, sizes):
    """(j, value) of an out-of-bounds index, or None (one launch + one read)."""
    for j, (ix, n) in enumerate(zip(indices, sizes)):
        shape = ix._shape
        cshape, cst = _collapse(shape, [ix._strides])
        if len(cshape) > MAXD:
            host = _host_view(ix)
            bad = (host < -n) | (host >= n)
            if bad.any():
                return j, int(host[bad].flat[0])
            continue
        ndim = len(cshape)
        total = int(np.prod(cshape))
        if not total:
            continue
        kern = ix_kernel("check", 1, 1)
        pad = [0] * (MAXD - ndim)
        g = (list(cshape[::-1]) + pad) + [0] * MAXD + [0] * MAXD + (list(cst[0][::-1]) + pad)
        g += [n, 0, dptr(ix)]
        grid = max(1, min((total + BLOCK - 1) // BLOCK, DEV.sm_count() * 32))
        DEV.launch(kern, grid, BLOCK, [0, 0, g, total, ndim, _FLAG.get().ptr])
        bad = _FLAG.read()
        if bad is not None:
            return j, bad[1]
    return None


def _host_view(ix):
    return transfers.to_host(ix)




def gather_flat(src, idx, out):
    """``out[...] = src[idx]`` for a 1-D ``src`` (any stride) and C-contiguous int64 ``idx``
    and ``out`` of one shape: ``a[idx]``, the commonest gather, without ``indexed_copy``'s
    layout analysis (its streaming kernel, checked, then the flag read: the sync point).
    Returns None, the out-of-bounds value, or False when the layout is not of that kind."""
    size = src.dtype.itemsize
    s = src._strides[0]
    pi = dptr(idx)
    if pi % 8 or not tuning.GATHER.streaming:
        return False
    if _unit(size, (dptr(src), dptr(out)), (s,)) != size:
        return False
    flag = _FLAG.get().ptr
    seq = _launch_gather1(True, size, src, out, idx, out._size, src._shape[0], s, flag,
                          tuning.GATHER.early_signal and _FLAG.host_copy is not None
                          and not runtime.nondefault_streams)  # (one counter: one stream)
    bad = _FLAG.wait(seq) if seq else _FLAG.read()
    return None if bad is None else bad[1]


def gather(src, indices, axis, out, check):
    if not indexed_copy("gatherc" if check else "gather", src, indices, axis, out):
        return _host_fallback("gather", src, indices, axis, out, check)
    if check:
        bad = _FLAG.read()
        if bad is not None:
            return bad
    return None


def scatter(dst, indices, axis, values, check):
    if check:
        bad = check_indices(indices, dst._shape[axis:axis + len(indices)])
        if bad is not None:
            return bad
    if not indexed_copy("scatter", dst, indices, axis, values):
        return _host_fallback("scatter", dst, indices, axis, values, False)
    return None


def _host_fallback(mode, data, indices, axis, other, check):
    """Layouts beyond the kernels (more than MAXD dims or MAXK index arrays): NumPy."""
    b = transfers
    h = b.to_host(data)
    idx = [b.to_host(i) for i in indices]
    key = (slice(None),) * axis + tuple(idx)
    if check:
        for j, (i, n) in enumerate(zip(idx, h.shape[axis:])):
            bad = (i < -n) | (i >= n)
            if bad.any():
                return j, int(i[bad].flat[0])
    if mode == "gather":
        b.write_host(other, np.ascontiguousarray(h[key]))
    else:
        h[key] = b.to_host(other)
        b.write_host(data, h)
    return None


# --- compaction: the True elements of a C-contiguous bool array -----------------------------
# Three launches and one 8-byte read.  The mask is cut into chunks of VEC * BLOCK * ROUNDS
# bytes, one per block (``tuning.COMPACTION``).  ``count`` reads a chunk with VEC-byte loads
# and writes its number of nonzero bytes; ``scan`` (one block) turns the counts into
# exclusive offsets in place and appends the total, which the host reads (the sync point: it
# is the result's length); ``write`` reads the chunk again round by round: each thread
# counts its VEC bytes,
# a warp-shuffle block scan places them, the local positions of the True bytes are staged in
# shared memory (16-bit), then the block writes them out coalesced, either as flat int64
# indices (``flatnonzero``) or as the selected elements of a source array (``a[mask]``, the
# values copied directly: no index array is materialised).
SCAN_BLOCK = 1024

_VEC_T = {4: "unsigned int", 8: "unsigned long long", 16: "cpn_v16"}
_MC_PRELUDE = """\
struct alignas(16) cpn_v16 { unsigned long long a, b; };
__device__ __forceinline__ int cpn_nzb4(unsigned w) {  // nonzero bytes of a 32-bit word
  return __popc((((w & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | w) & 0x80808080u);
}
__device__ __forceinline__ int cpn_nzb8(unsigned long long w) {
  return __popcll((((w & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | w)
                  & 0x8080808080808080ull);
}"""


def _mc_load(vec: int) -> str:
    """Text reading thread ``t``'s ``vec`` mask bytes at ``e0`` into ``mb[]`` (0 past n)."""
    return f"""    unsigned char mb[{vec}];
    if (aligned && e0 + {vec} <= n) {{
      union {{ {_VEC_T[vec]} v; unsigned char b[{vec}]; }} w;
      w.v = *(const {_VEC_T[vec]}*)(m + e0);
#pragma unroll
      for (int j = 0; j < {vec}; ++j) mb[j] = w.b[j];
    }} else {{
#pragma unroll
      for (int j = 0; j < {vec}; ++j) mb[j] = e0 + j < n ? m[e0 + j] : 0;
    }}"""


def mc_count_kernel(vec: int, rounds: int) -> Kernel:
    cnt = {4: "cpn_nzb4(w.v)", 8: "cpn_nzb8(w.v)", 16: "cpn_nzb8(w.v.a) + cpn_nzb8(w.v.b)"}[vec]
    body = f"""{{
  const unsigned char* m = p_0; const long long n = p_1; long long* counts = p_2;
  const int aligned = p_3;
  __shared__ int s_cnt;
  if (threadIdx.x == 0) s_cnt = 0;
  __syncthreads();
  const long long base = (long long)blockIdx.x * {BLOCK * vec * rounds};
  int c = 0;
  for (int r = 0; r < {rounds}; ++r) {{
    const long long e0 = base + (long long)(r * {BLOCK} + threadIdx.x) * {vec};
    if (aligned && e0 + {vec} <= n) {{
      union {{ {_VEC_T[vec]} v; unsigned char b[{vec}]; }} w;
      w.v = *(const {_VEC_T[vec]}*)(m + e0);
      c += {cnt};
    }} else {{
      for (int j = 0; j < {vec}; ++j) c += (e0 + j < n && m[e0 + j]) ? 1 : 0;
    }}
  }}
  if (c) atomicAdd(&s_cnt, c);
  __syncthreads();
  if (threadIdx.x == 0) counts[blockIdx.x] = s_cnt;
}}"""
    return Kernel(f"cpn_mc_count_v{vec}_r{rounds}",
                  [("const unsigned char*", PTR), ("const long long", I64),
                   ("long long*", PTR), ("const int", I32)], body, _MC_PRELUDE)


def mc_scan_kernel() -> Kernel:
    """One block: counts[0..nb) -> exclusive offsets in place, counts[nb] = total."""
    body = f"""{{
  long long* c = p_0; const long long nb = p_1;
  __shared__ long long s[{SCAN_BLOCK}];
  const long long per = (nb + {SCAN_BLOCK - 1}) / {SCAN_BLOCK};
  const long long lo = threadIdx.x * per, hi = lo + per < nb ? lo + per : nb;
  long long sum = 0;
  for (long long i = lo; i < hi; ++i) sum += c[i];
  s[threadIdx.x] = sum;
  __syncthreads();
  for (int off = 1; off < {SCAN_BLOCK}; off <<= 1) {{  // inclusive Hillis-Steele scan
    const long long add = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
    __syncthreads();
    s[threadIdx.x] += add;
    __syncthreads();
  }}
  long long run = s[threadIdx.x] - sum;
  for (long long i = lo; i < hi; ++i) {{ const long long v = c[i]; c[i] = run; run += v; }}
  if (threadIdx.x == {SCAN_BLOCK - 1}) c[nb] = s[{SCAN_BLOCK - 1}];
}}"""
    return Kernel("cpn_mc_scan", [("long long*", PTR), ("const long long", I64)], body)


def mc_write_kernel(unit: int, vec: int, rounds: int) -> Kernel:
    """unit 0: out[k] = flat index of the k-th True byte (int64); else out[k] = the source
    element (``unit`` bytes, source element stride ``p_5`` bytes) at that position."""
    nw = BLOCK // 32
    u = "long long" if unit == 0 else ku.UNIT_CTYPE[unit]
    val = "(long long)(rb + s_pos[q])" if unit == 0 else \
        f"*(const {u}*)(src + (rb + s_pos[q]) * ss)"
    body = f"""{{
  const unsigned char* __restrict__ m = p_0; const long long n = p_1;
  const long long* __restrict__ offsets = p_2; {u}* __restrict__ out = ({u}*)p_3;
  const char* __restrict__ src = p_4; const long long ss = p_5; const int aligned = p_6;
  __shared__ unsigned short s_pos[{BLOCK * vec}];
  __shared__ int s_warp[{nw}];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  long long run = offsets[blockIdx.x];
  (void)src; (void)ss;
  for (int r = 0; r < {rounds}; ++r) {{
    const long long rb = (long long)blockIdx.x * {BLOCK * vec * rounds} + (long long)r * {BLOCK * vec};
    if (rb >= n) break;
    const long long e0 = rb + (long long)threadIdx.x * {vec};
{_mc_load(vec)}
    int c = 0;
#pragma unroll
    for (int j = 0; j < {vec}; ++j) c += mb[j] ? 1 : 0;
    int x = c;  // inclusive warp scan
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {{
      const int y = __shfl_up_sync(0xffffffffu, x, off);
      if (lane >= off) x += y;
    }}
    if (lane == 31) s_warp[wid] = x;
    __syncthreads();
    int before = 0, total = 0;
#pragma unroll
    for (int w = 0; w < {nw}; ++w) {{
      const int t = s_warp[w];
      before += w < wid ? t : 0;
      total += t;
    }}
    int p = before + x - c;
#pragma unroll
    for (int j = 0; j < {vec}; ++j)
      if (mb[j]) s_pos[p++] = (unsigned short)(threadIdx.x * {vec} + j);
    __syncthreads();
    for (int q = threadIdx.x; q < total; q += {BLOCK}) out[run + q] = {val};
    run += total;
    __syncthreads();
  }}
}}"""
    return Kernel(f"cpn_mc_write_u{unit}_v{vec}_r{rounds}",
                  [("const unsigned char*", PTR), ("const long long", I64),
                   ("const long long*", PTR), ("char*", PTR), ("const char*", PTR),
                   ("const long long", I64), ("const int", I32)], body, _MC_PRELUDE)


def _compact(mask, unit, src_ptr, src_stride):
    """(buffer, count): the compaction of C-contiguous bool ``mask`` (see above)."""
    n = mask._size
    vec, rounds = tuning.COMPACTION.vec, tuning.COMPACTION.rounds
    chunk = BLOCK * vec * rounds
    nb = (n + chunk - 1) // chunk
    counts = DEV.alloc((nb + 1) * 8)
    mp = dptr(mask)
    aligned = int(mp % vec == 0)
    DEV.launch(mc_count_kernel(vec, rounds), nb, BLOCK, [mp, n, counts.ptr, aligned])
    DEV.launch(mc_scan_kernel(), 1, SCAN_BLOCK, [counts.ptr, nb])
    host = np.zeros(1, np.int64)
    DEV.dtoh(host, counts.ptr + nb * 8)  # the sync point: the count decides the result's shape
    total = int(host[0])
    out = DEV.alloc(total * (unit or 8))
    if total:
        DEV.launch(mc_write_kernel(unit, vec, rounds), nb, BLOCK,
                   [mp, n, counts.ptr, out.ptr, src_ptr, src_stride, aligned])
    return out, total


def flatnonzero(mask):
    """(buffer of int64 flat indices, count) for a C-contiguous bool array (one sync)."""
    if mask._size == 0:
        return DEV.alloc(8), 0
    return _compact(mask, 0, 0, 0)


def mask_select(src, mask):
    """``src[mask]`` for a bool ``mask`` of ``src``'s shape: (buffer, count) of the selected
    elements in C order (one sync), or None when the layout is not handled here (the caller
    takes nonzero + gather): a non-contiguous mask or source, or elements whose address or
    size is not a multiple of a unit (1, 2, 4, 8, 16 bytes)."""
    size = src.dtype.itemsize
    if not (mask._c_contig and src._c_contig) or mask._size == 0:
        return None
    unit = _unit(size, (dptr(src),), ())
    if unit != size:
        return None
    return _compact(mask, unit, dptr(src), size)


# --- tiled transpose copy ---------------------------------------------------------------------
# Per element size: (tile, rows, vec).  A block of (tile / vec) x rows threads moves a tile x
# tile tile through shared memory (padded by one element against bank conflicts); each
# thread reads ``vec`` consecutive elements along the source's contiguous axis with one
# load and writes ``vec`` consecutive elements along the destination's with one store (vec > 1
# only when both extents are multiples of vec and every address is aligned to vec elements;
# else the same tile with vec 1).  ``tuning.TRANSPOSE``: (tile, rows, vec) per element size,
# ``diagonal`` reorders the blocks along diagonals (spreads the first wave over memory
# partitions), ``min_tile`` the smallest array tiled (min_tile ** 2 elements).


def _transpose_kernel(unit: int, tile: int = 32, rows: int = 8, vec: int = 1,
                      diag: bool = False) -> Kernel:
    assert tile % vec == 0 and tile % rows == 0 and vec * unit <= 16
    u = ku.UNIT_CTYPE[unit]
    vt = "cpn_v16" if vec * unit == 16 else ku.UNIT_CTYPE[vec * unit]
    if vec == 1:
        ld = f"tile[ty + k][tx] = *(const {u}*)p;"
        st = f"*({u}*)q = tile[tx][ty + k];"
    else:
        ld = (f"union {{ {vt} v; {u} e[{vec}]; }} w; w.v = *(const {vt}*)p;\n"
              f"#pragma unroll\n        for (int j = 0; j < {vec}; ++j) tile[ty + k][tx * {vec} + j] = w.e[j];")
        st = (f"union {{ {vt} v; {u} e[{vec}]; }} w;\n"
              f"#pragma unroll\n        for (int j = 0; j < {vec}; ++j) w.e[j] = tile[tx * {vec} + j][ty + k];\n"
              f"        *({vt}*)q = w.v;")
    order = ("  const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;\n"
             "  const unsigned by = bid % gridDim.y, bx = (bid / gridDim.y + by) % gridDim.x;"
             if diag else "  const unsigned bx = blockIdx.x, by = blockIdx.y;")
    body = f"""{{
  const char* __restrict__ src = p_0; char* __restrict__ dst = p_1; const cpn_arr<9>& g = p_2;
  // g: R, C, B, src stride of c, src stride of b, dst stride of r, dst stride of b,
  //    src stride of r (= unit), dst stride of c (= unit)
  const long long R = g.v[0], C = g.v[1], B = g.v[2], ssc = g.v[3], dsr = g.v[5];
  __shared__ {u} tile[{tile}][{tile + 1}];
{order}
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long r0 = (long long)by * {tile}, c0 = (long long)bx * {tile};
  const long long lr = r0 + tx * {vec}, lc = c0 + ty;  // load: r along x, c along y
  const long long sr = r0 + ty, sc = c0 + tx * {vec};  // store: c along x, r along y
  for (long long b = blockIdx.z; b < B; b += gridDim.z) {{
    const char* p = src + b * g.v[4] + lr * {unit} + lc * ssc;
    if (lr < R) {{
#pragma unroll
      for (int k = 0; k < {tile}; k += {rows}, p += {rows} * ssc) {{
        if (lc + k < C) {{ {ld} }}
      }}
    }}
    __syncthreads();
    char* q = dst + b * g.v[6] + sr * dsr + sc * {unit};
    if (sc < C) {{
#pragma unroll
      for (int k = 0; k < {tile}; k += {rows}, q += {rows} * dsr) {{
        if (sr + k < R) {{ {st} }}
      }}
    }}
    __syncthreads();
  }}
}}"""
    name = f"cpn_transpose_u{unit}_t{tile}_r{rows}_v{vec}{'_d' if diag else ''}"
    return Kernel(name, [("const char*", PTR), ("char*", PTR),
                         ("const cpn_arr<9>", arr_dtype(9))], body, _MC_PRELUDE)


def try_transpose_copy(src, dst, config=None) -> bool:
    """Same-dtype copy whose innermost source and destination axes differ, through shared-
    memory tiles (both sides coalesced).  False when the layout is not of that kind (the
    caller takes the elementwise copy).  ``config``: (tile, rows, vec, diag), else the
    knobs above."""
    size = dst.dtype.itemsize
    if size not in (1, 2, 4, 8) or dst._size < tuning.TRANSPOSE.min_tile ** 2:
        return False
    if dst._shape[-1] > 1 and src._strides[-1] == size == dst._strides[-1]:
        return False  # the same unit-stride innermost axis (a slice assignment): no transpose
    shape, (ss, ds) = _collapse(dst._shape, [src._strides, dst._strides])
    nd = len(shape)
    if nd < 2 or nd > 3:
        return False
    if ds[-1] != size:  # e.g. a column-major destination: its unit-stride axis goes last
        k = next((i for i in range(nd - 1) if ds[i] == size), None)
        if k is None:
            return False
        perm = [i for i in range(nd) if i != k] + [k]
        shape, ss, ds = ([v[i] for i in perm] for v in (shape, ss, ds))
    if ss[-1] == size:
        return False
    try:
        r = next(i for i in range(nd - 1) if ss[i] == size)
    except StopIteration:
        return False
    c = nd - 1
    rest = [i for i in range(nd) if i not in (r, c)]
    bi = rest[0] if rest else None
    R, C = shape[r], shape[c]
    B = shape[bi] if bi is not None else 1
    t = tuning.TRANSPOSE
    tile, rows, vec, diag = config or (t.tiles[size] + (t.diagonal,))
    g = [R, C, B, ss[c], ss[bi] if bi is not None else 0, ds[r],
         ds[bi] if bi is not None else 0, ss[r], ds[c]]
    if vec > 1 and (R % vec or C % vec or any(
            x % (vec * size) for x in (dptr(src), dptr(dst), g[3], g[4], g[5], g[6]))):
        vec = 1
    while (tile // vec) * rows > 1024:
        rows //= 2
    gy = (R + tile - 1) // tile
    if gy > 65535:
        return False
    grid = ((C + tile - 1) // tile, gy, min(B, 65535))
    DEV.launch(_transpose_kernel(size, tile, rows, vec, diag), grid, (tile // vec, rows),
               [dptr(src), dptr(dst), g])
    return True


def all_kernels():
    """Every kernel of this module at its default knobs and the variants the probe times
    (for a compile check: ``ku.program(all_kernels())``)."""
    ks = [ix_kernel(m, u, k) for m in ("gather", "gatherc", "scatter", "check")
          for u in (1, 2, 4, 8, 16) for k in range(1, MAXK + 1)]
    ks += [gather1_kernel(u, c, i, o) for u in (1, 2, 4, 8, 16) for c in (False, True)
           for i in (1, 2, 4, 8) for o in (False, True)]
    ks += [gather1_kernel(u, True, i, o, signal=True) for u in (1, 2, 4, 8, 16)
           for i in (1, 2, 4, 8) for o in (False, True)]  # (a[idx] of large arrays)
    g = tuning.GATHER
    ks += [gather1_kernel(u, True, g.signal_ilp, o, idx_load=g.signal_idx_load, signal=True)
           for u in (1, 2, 4, 8, 16) for o in (False, True)]
    ks += [gather1_kernel(u, c, 4, o, block=b) for u in (1, 4, 8, 16) for c in (False, True)
           for o in (False, True) for b in (128, 512, 1024)]  # (the probe's block sizes)
    ks += [gather1_kernel(u, True, g.signal_ilp, o, block=b, idx_load=g.signal_idx_load,
                          signal=True) for u in (4, 8) for o in (False, True)
           for b in (128, 512, 1024)]
    ks += [mc_count_kernel(v, r) for v in (4, 8, 16) for r in (1, 2, 4, 8)]
    ks += [mc_scan_kernel()]
    ks += [mc_write_kernel(u, v, r) for u in (0, 1, 2, 4, 8, 16) for v in (4, 8, 16)
           for r in (1, 2, 4, 8)]
    ks += [_transpose_kernel(u, t, rw, v, d) for u in (1, 2, 4, 8) for t in (32, 64)
           for rw in (4, 8, 16) for v in (1, 2, 4, 8, 16) if v * u <= 16 and t % rw == 0
           and (t // v) * rw <= 1024 for d in (False, True)]
    return ks
