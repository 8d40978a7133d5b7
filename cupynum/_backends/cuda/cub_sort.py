"""CUB's Onesweep radix sort, compiled through NVRTC: the alternative sort engine.

CUB's *host* dispatch (``cub/device/*``) refuses NVRTC, but its agents compile: this module
wraps ``AgentRadixSortHistogram`` and ``AgentRadixSortOnesweep`` (CCCL 3.0 to 3.5: the
policy structs and key traits below use only what both releases share) in ``extern "C"``
kernels of our own, with a policy chosen here (``policy``: CUB's SM90 tuning by default,
the probe overrides it), and replays the launch sequence of CUB's
``DispatchRadixSort::invoke_onesweep``: zero the bins, tile counters and look-back words;
one histogram kernel for all passes; the exclusive sum of each pass's 256 bins (one block,
which also plans the passes: as in our own engine, a pass whose digit is the same for every
key is skipped on the device); one onesweep kernel per 8-bit pass, ping-ponging between two
scratch buffers, the last pass that runs writing the output.

Keys: CUB twiddles each key on every load and back on every store (``Traits<K>::TwiddleIn``
/ ``TwiddleOut``).  We give it our own key type ``cpn_ck<U, M>`` whose traits apply our
order-preserving map (``M`` as ``sorting.cpn_rx_in``: 0 unsigned, 1 signed, 2 float with
NaN above +inf, 3 float with -0.0 == +0.0 and every NaN one key), so NumPy's order costs no
extra pass.  The maps are idempotent (raw -> key -> raw -> key gives the same key), so
re-twiddling on every pass is harmless; mode 3 maps NaN to the largest magnitude NaN so
that CUB's out-of-range filler (``MAX_KEY``) is the all-ones key.

Only single-portion sorts (n < ``MAX_ITEMS``, 32-bit offsets) go here; ``sorting.sort``
uses its own engine for the rest.  Payloads: none, a u32 index (argsort: an iota input,
widened to int64 after the last pass), or the raw value (stable float value sort).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from . import compiler, runtime, tuning
from .kernels_util import DEV, I32, PTR, Kernel, program

MAX_ITEMS = (1 << 28) - (1 << 16)   # one CUB "portion": 32-bit look-back words suffice
_PLAN = 4  # ints a pass in the plan (plan_kernel)
_UT = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}

# Knobs: ``tuning.CUB_SORT`` (benchmarks/probes/cub_sort_probe.py sweeps them); missing
# onesweep entries follow CUB's SM90 rule (``_cub_sm90``).  Read at every sort (kernels are
# generated and compiled once per knob value).


def _cub_sm90(kw: int, vw: int) -> tuple[int, int]:
    """CUB 3.5's SM90 onesweep (threads, items) for 32-bit offsets (tuning_radix_sort.cuh,
    ``policy_selector::make_onesweep_small_key_policy``), scaled as ``scale_reg_bound``."""
    small = {(1, 0): (512, 19), (2, 0): (512, 19), (1, 1): (512, 15), (1, 2): (512, 17),
             (1, 4): (512, 17), (1, 8): (384, 23), (2, 1): (384, 14), (2, 2): (384, 15),
             (2, 4): (512, 17), (2, 8): (384, 23)}
    if kw < 4:
        threads, items = small[(kw, vw)]
    elif kw == 4:
        threads, items = 384, (20 if vw == 0 else (23 if vw < 8 else 30))
    else:
        threads, items = 384, (30 if vw < 8 else 24)
    size = max(kw, vw)
    items = max(1, items * 4 // max(4, size))
    cap = -(-(48 * 1024 // (size * items)) // 32) * 32
    return min(threads, cap), items


def policy(kw: int, vw: int) -> tuple[int, int]:
    """(threads per block, items per thread) of the onesweep kernel."""
    p = tuning.CUB_SORT.onesweep.get((kw, vw))
    return tuple(p) if p else _cub_sm90(kw, vw)


# The order-preserving key map (no CUB in it: tests/test_cub_sort_compile.py runs it on the
# host against NumPy's order).
KEY_MAP = r"""
template <class U, int M> __host__ __device__ __forceinline__ U cpn_ck_in(U b) {
  const U sign = (U)((U)1 << (8 * sizeof(U) - 1));
  if (M == 0) return b;
  if (M == 1) return (U)(b ^ sign);
  const U ex = (U)(sizeof(U) == 2 ? 0x7C00ull : sizeof(U) == 4 ? 0x7F800000ull
                                              : 0x7FF0000000000000ull);
  const U mag = (U)(b & (U)~sign);
  if (mag > ex) b = M == 3 ? (U)~sign : mag;   // NaN: above +inf (one key in mode 3)
  else if (M == 3 && mag == 0) b = 0;         // -0.0 == +0.0
  return (b & sign) ? (U)~b : (U)(b | sign);
}
template <class U, int M> __host__ __device__ __forceinline__ U cpn_ck_out(U k) {
  const U sign = (U)((U)1 << (8 * sizeof(U) - 1));
  if (M == 0) return k;
  if (M == 1) return (U)(k ^ sign);
  return (k & sign) ? (U)(k ^ sign) : (U)~k;
}
"""

_PRELUDE = r"""
#define CCCL_DISABLE_PDL 1  // PDL calls cudaGridDependencySynchronize: not under NVRTC
#include <cub/agent/agent_radix_sort_histogram.cuh>
#include <cub/agent/agent_radix_sort_onesweep.cuh>
#include <cub/block/block_scan.cuh>
""" + KEY_MAP + r"""
// A key whose CUB traits are our order-preserving map (see cub_sort.py).
template <class U, int M> struct cpn_ck { U bits; };
CUB_NAMESPACE_BEGIN
// One argument: CUB 3.0 declares NumericTraits<T>, CUB 3.5 NumericTraits<T, = T>; both
// reach it through cub::Traits<T> (radix::traits_t, bit_ordered_conversion_policy_t).
template <class U, int M> struct NumericTraits<cpn_ck<U, M>> {
  using UnsignedBits = U;
  static constexpr U SIGN = (U)((U)1 << (8 * sizeof(U) - 1));
  // MAX_KEY: the raw value whose key is all ones (CUB's filler of partial tiles: last in
  // every digit); LOWEST_KEY serves descending sorts only (unused here)
  static constexpr U LOWEST_KEY = M == 0 ? (U)0 : SIGN;
  static constexpr U MAX_KEY = M == 0 ? (U)~(U)0 : (U)~SIGN;
  static __host__ __device__ __forceinline__ U TwiddleIn(U b) { return cpn_ck_in<U, M>(b); }
  static __host__ __device__ __forceinline__ U TwiddleOut(U k) { return cpn_ck_out<U, M>(k); }
};
CUB_NAMESPACE_END
// Agent policies of our own: CUB 3.5 renamed its policy templates (cub::detail::
// agent_radix_sort_*_policy, the cub::AgentRadixSort*Policy of 3.0 deprecated) and changed
// their parameters, but both versions' agents read only these members.
template <int Threads, int Items, int Parts> struct cpn_hist_policy {
  static constexpr int BLOCK_THREADS = Threads, ITEMS_PER_THREAD = Items, NUM_PARTS = Parts;
  static constexpr int RADIX_BITS = 8;
};
template <int Threads, int Items, int Parts, cub::RadixRankAlgorithm Rank>
struct cpn_onesweep_policy {
  static constexpr int BLOCK_THREADS = Threads, ITEMS_PER_THREAD = Items;
  static constexpr int RANK_NUM_PARTS = Parts, RADIX_BITS = 8;
  static constexpr cub::RadixRankAlgorithm RANK_ALGORITHM = Rank;
  static constexpr cub::BlockScanAlgorithm SCAN_ALGORITHM = cub::BLOCK_SCAN_RAKING_MEMOIZE;
  static constexpr cub::RadixSortStoreAlgorithm STORE_ALGORITHM = cub::RADIX_SORT_STORE_DIRECT;
};
"""

_RANK = {"any": "cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY",
         "atomic_or": "cub::RADIX_RANK_MATCH_EARLY_COUNTS_ATOMIC_OR"}


class _CubKernel(Kernel):
    """A Kernel whose signature carries ``__launch_bounds__(threads)``."""

    __slots__ = ("threads",)

    def __init__(self, name, params, body, threads):
        super().__init__(name, params, body, _PRELUDE)
        self.threads = threads

    def signature(self) -> str:
        return super().signature().replace(
            "__global__ void ", f"__global__ void __launch_bounds__({self.threads}) ", 1)


def _key_type(w: int, mode: int) -> str:
    return f"cpn_ck<{_UT[w]}, {mode}>"


_CACHE: dict = {}


def _cached(key, make):
    k = _CACHE.get(key)
    if k is None:
        k = _CACHE[key] = make()
    return k


def hist_kernel(w: int, mode: int) -> Kernel:
    """Digit counts of all passes: ``bins[pass * 256 + digit]`` (u32, +=)."""
    threads, items = tuning.CUB_SORT.hist
    parts = max(1, tuning.CUB_SORT.hist_parts * 4 // max(w, 4))

    def make():
        body = f"""{{
  typedef {_key_type(w, mode)} K;
  using Policy = cpn_hist_policy<{threads}, {items}, {parts}>;
  using Agent = cub::detail::radix_sort::AgentRadixSortHistogram<Policy, false, K, unsigned int>;
  __shared__ typename Agent::TempStorage ts;
  Agent agent(ts, p_0, (const K*)p_1, (unsigned int)p_2, 0, p_3);
  agent.Process();
}}"""
        return _CubKernel(f"cpn_cub_hist_{w}_{mode}_{threads}_{items}_{parts}",
                          [("unsigned int*", PTR), ("const char*", PTR), ("const int", I32),
                           ("const int", I32)], body, threads)
    return _cached(("h", w, mode, threads, items, parts), make)


def plan_kernel() -> Kernel:
    """One block: each pass's 256 bins become exclusive offsets, and the plan of the passes
    (``_PLAN`` ints a pass: runs, first, last, its rank among the passes that run; then
    the buffer the last one wrote).  A pass whose digit is the same for all n keys is the
    identity and is skipped on the device (no host sync), as our own engine does; if all
    are, the last one runs, so that the output gets written."""
    def make():
        body = """{
  typedef cub::BlockScan<unsigned int, 256> Scan;
  __shared__ typename Scan::TempStorage ts;
  __shared__ int trivial[8];
  unsigned int* bins = p_0; int* plan = p_1; const int np = p_2; const unsigned int n = p_3;
  const int tid = threadIdx.x;
  for (int p = 0; p < np; ++p) {
    unsigned int v = bins[p * 256 + tid];
    if (tid == 0) trivial[p] = 0;
    __syncthreads();
    if (v == n) trivial[p] = 1;
    Scan(ts).ExclusiveSum(v, v);
    bins[p * 256 + tid] = v;
    __syncthreads();
  }
  if (tid == 0) {
    int any = 0;
    for (int p = 0; p < np; ++p) any |= !trivial[p];
    if (!any) trivial[np - 1] = 0;
    int c = 0, last = 0;
    for (int p = 0; p < np; ++p) {
      plan[4 * p] = !trivial[p]; plan[4 * p + 1] = !trivial[p] && c == 0; plan[4 * p + 3] = c;
      if (!trivial[p]) { last = p; ++c; }
    }
    for (int p = 0; p < np; ++p) plan[4 * p + 2] = p == last;
    plan[4 * np] = (c - 1) & 1;  // the scratch buffer the last pass wrote
  }
}"""
        return _CubKernel("cpn_cub_plan", [("unsigned int*", PTR), ("int*", PTR),
                                           ("const int", I32), ("const int", I32)], body, 256)
    return _cached(("plan",), make)


def onesweep_kernel(w: int, mode: int, vw: int) -> Kernel:
    """One 8-bit pass (``shift``), as the plan says: skipped, or from the input (first) or
    scratch buffer ``(rank - 1) & 1`` to the output (last, when given) or scratch buffer
    ``rank & 1``; keys and values of vw bytes (0: none)."""
    threads, items = policy(w, vw)
    rank, parts = _RANK[tuning.CUB_SORT.rank], int(tuning.CUB_SORT.rank_parts)
    vt = _UT[vw] if vw else "cub::NullType"

    def make():
        body = f"""{{
  typedef {_key_type(w, mode)} K; typedef {vt} V;
  const int* pl = p_13 + 4 * (p_12 >> 3);
  if (!pl[0]) return;  // the identity pass
  const int first = pl[1], last = pl[2], c = pl[3];
  const K* kin = (const K*)(first ? p_3 : ((c - 1) & 1 ? p_6 : p_5));
  K* kout = (K*)(last && p_4 ? p_4 : (c & 1 ? p_6 : p_5));
  const V* vin = (const V*)(first ? p_7 : ((c - 1) & 1 ? p_10 : p_9));
  V* vout = (V*)(last && p_8 ? p_8 : (c & 1 ? p_10 : p_9));
  using Policy = cpn_onesweep_policy<{threads}, {items}, {parts}, {rank}>;
  using Agent =
      cub::detail::radix_sort::AgentRadixSortOnesweep<Policy, false, K, V, unsigned int, int>;
  __shared__ typename Agent::TempStorage ts;
  Agent agent(ts, p_0, p_1, (unsigned int*)0, p_2, kout, kin, vout, vin, p_11, p_12, 8);
  agent.Process();
}}"""
        return _CubKernel(f"cpn_cub_onesweep_{w}_{mode}_{vw}_{threads}_{items}_"
                          f"{tuning.CUB_SORT.rank}{parts}",
                          [("int*", PTR), ("int*", PTR), ("const unsigned int*", PTR),
                           ("const char*", PTR), ("char*", PTR), ("char*", PTR), ("char*", PTR),
                           ("const char*", PTR), ("char*", PTR), ("char*", PTR), ("char*", PTR),
                           ("const int", I32), ("const int", I32), ("const int*", PTR)],
                          body, threads)
    return _cached(("o", w, mode, vw, threads, items, rank, parts), make)


def iota_kernel() -> Kernel:
    body = """{
  unsigned int* out = p_0; const int n = p_1;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = (unsigned int)i;
}"""
    return _cached(("iota",), lambda: Kernel(
        "cpn_cub_iota", [("unsigned int*", PTR), ("const int", I32)], body))


def widen_kernel() -> Kernel:
    """int64 indices from the u32 ones in the scratch buffer the last pass wrote."""
    body = """{
  const unsigned int* src = *p_3 ? p_1 : p_0; long long* out = p_2; const int n = p_4;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = (long long)src[i];
}"""
    return _cached(("widen",), lambda: Kernel(
        "cpn_cub_widen", [("const unsigned int*", PTR), ("const unsigned int*", PTR),
                          ("long long*", PTR), ("const int*", PTR), ("const int", I32)], body))


def kernels_for(w: int, mode: int, vw: int) -> list:
    """Every kernel one sort of this kind launches (the NVRTC compile test uses it)."""
    ks = [hist_kernel(w, mode), plan_kernel(), onesweep_kernel(w, mode, vw)]
    if vw == 4:
        ks += [iota_kernel(), widen_kernel()]
    return ks


_LOADED: set = set()


def prepare(w: int, mode: int, vw: int) -> None:
    """Compile the kernels of one sort kind as one program (the CUB headers are parsed
    once: ~4 s for all instead of ~4 s each) and hand its functions to ``DEV``, whose
    ``function`` would otherwise compile each kernel alone.  Thread-safe; the probe
    prepares several kinds in parallel (NVRTC runs outside the GIL)."""
    ks = kernels_for(w, mode, vw)
    key = tuple(k.name for k in ks)
    if key in _LOADED:
        return
    cubin = compiler.compile_cubin(program(ks), name="cupynum_cub.cu").cubin
    module = runtime.load_module(cubin)
    with DEV._lock:  # the same cache DEV.function fills (kernels_util._Device)
        for k in ks:
            DEV._funcs.setdefault(k.name, module.get_function(k.name))
    _LOADED.add(key)


def kinds() -> list:
    """The (key bytes, mode, payload bytes) of every sort ``sorting.sort`` sends here."""
    out = []
    for w in (1, 2, 4, 8):
        out += [(w, 0, 0), (w, 0, 4), (w, 1, 0), (w, 1, 4)]
        if w > 1:  # floats: value sort, stable value sort, argsort
            out += [(w, 2, 0), (w, 3, w), (w, 3, 4)]
    return sorted(set(out))


def precompile(arch=None, jobs=None) -> int:
    """Fill the kernel cache with every kind's program (``python -m cupynum precompile``
    when ``tuning.SORT.engine == 'cub'``); returns the number of programs."""
    sources = [program(kernels_for(*k)) for k in kinds()]
    with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as ex:
        list(ex.map(lambda src: compiler.compile_cubin(src, name="cupynum_cub.cu", arch=arch),
                    sources))
    return len(sources)


def supported(n: int, w: int) -> bool:
    return 0 < n < MAX_ITEMS and w in _UT


def _grid(n):
    return max(1, min((n + 255) // 256, DEV.sm_count() * 32))


def radix(n: int, w: int, mode: int, kin: int, kout: int = 0, vw: int = 0, vin: int = 0,
          vout: int = 0) -> None:
    """Sort n keys of w bytes at ``kin`` (mode ``mode``) with CUB's onesweep passes.

    ``kout``: the sorted keys (raw values, NaN as the map leaves it), or 0.  Payload of
    ``vw`` bytes from ``vin`` to ``vout``; with vw == 4 and no ``vin``, the payload is the
    indices 0..n-1 and ``vout`` receives them as int64 (argsort)."""
    prepare(w, mode, vw)
    npass = w
    threads, items = policy(w, vw)
    nblocks = -(-n // (threads * items))
    # one zeroed block: bins (u32, npass * 256), tile counters (npass), look-back words
    # (npass regions of nblocks * 256: zeroed once, not before every pass as CUB does)
    nbins, nlook = npass * 256, nblocks * 256
    zeroed = DEV.alloc(4 * (nbins + npass + npass * nlook))
    DEV.memset(zeroed.ptr, 0, 4 * (nbins + npass + npass * nlook))
    bins, ctrs = zeroed.ptr, zeroed.ptr + 4 * nbins
    look = ctrs + 4 * npass
    plan = DEV.alloc(4 * (_PLAN * npass + 1))
    hthreads, hitems = tuning.CUB_SORT.hist
    hblocks = max(1, min(-(-n // (hthreads * hitems)),
                         DEV.sm_count() * tuning.CUB_SORT.hist_blocks_per_sm))
    DEV.launch(hist_kernel(w, mode), hblocks, hthreads, [bins, kin, n, 8 * w])
    DEV.launch(plan_kernel(), 1, 256, [bins, plan.ptr, npass, n])
    kb = [DEV.alloc(n * w), DEV.alloc(n * w) if npass > 1 else None]
    vb = [DEV.alloc(n * vw), DEV.alloc(n * vw)] if vw else [None, None]
    kb0, kb1, vb0, vb1 = (b.ptr if b is not None else 0 for b in (*kb, *vb))
    widen = vw == 4 and not vin
    if widen:  # the indices 0..n-1 in vb[1]: only the first pass that runs reads them,
        DEV.launch(iota_kernel(), _grid(n), 256, [vb1, n])  # and it writes vb[0]
        vin, vout_pass = vb1, 0
    else:
        vout_pass = vout
    k = onesweep_kernel(w, mode, vw)
    for p in range(npass):
        DEV.launch(k, nblocks, threads, [look + 4 * p * nlook, ctrs + 4 * p, bins + 4 * 256 * p,
                                         kin, kout, kb0, kb1, vin, vout_pass, vb0, vb1, n, 8 * p,
                                         plan.ptr])
    if widen:
        DEV.launch(widen_kernel(), _grid(n), 256, [vb0, vb1, vout, plan.ptr + 4 * _PLAN * npass, n])
