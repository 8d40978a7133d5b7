"""CUDA sort: an LSD radix sort on order-preserving key bits, and searchsorted.

Keys: each value becomes an unsigned integer of its size whose unsigned order is NumPy's
sort order: signed integers flip the sign bit; floats flip all bits when negative and the
sign bit otherwise, with NaN mapped above +inf (so NaN sorts last).  When ties must be
kept in input order (argsort, stable sort) -0.0 and +0.0 get one key and every NaN the
same key, as NumPy compares them equal; the plain value sort keeps the bits (a
-0.0/+0.0 tie may come out either way, which NumPy's unstable sort allows too), so the
values come back by inverting the keys, with no payload.  Complex values sort in NumPy's
order through three stable key rounds (class of NaNs, primary, secondary).

The sort is an LSD radix sort in the Onesweep style (``radix``): one kernel reads the keys
once (16-byte loads; per-lane private shared-memory histograms, runs of equal digits added
once) and counts the digits of every 8-bit pass; a one-block plan kernel turns the counts
into each pass's digit offsets and marks the passes whose digit is the same for every key
(the identity: skipped on the device, so no host sync; e.g. int64 values < 2**20 take 3 of
8 passes); then one kernel per pass: a block takes the next tile id from an atomic counter,
ranks its tile stably (warp-striped loads, a warp match made of 8 ballots -- ``match.any``
is slow when the lanes hold many distinct digits -- and per-warp digit counters in shared
memory), publishes its digit counts, places the tile in shared memory in digit order, then
looks back over lower tiles for each digit's global prefix (decoupled look-back, one
flag|value status word per (tile, digit), a window of predecessors read per step), and
writes the tile out from shared memory so global writes are coalesced.
The key transform is applied as the first running pass reads the input and undone as the
last one writes the output (``cpn_rx_in`` / ``cpn_rx_out``), so no separate key pass.
Payloads: none (value sort), the raw value (stable float sort), or a 32-bit index (64-bit
beyond 2**32 elements) written out as int64 (argsort).  Rows of an axis sort are segments:
after the key passes, more passes order by row (``payload // n``), stable, which keeps each
row sorted; the last writes ``payload % n``.  Tuning knobs: ``tuning.SORT`` (the onesweep
tile, ``__launch_bounds__`` by width and payload, warp match, look-back window and late
payload loads; the histogram kernel's form, loads, copies and blocks;
benchmarks/probes/sort_probe.py sweeps them).  ``tuning.SORT.engine == 'cub'`` sends the
one-row sorts to CUB's own onesweep kernels instead (cub_sort.py).
"""
from __future__ import annotations

import numpy as np

from .indexing import BLOCK, indexed_copy
from .kernels_util import DEV, I32, I64, PTR, Kernel
from . import tuning
from . import transfers
from .view import DeviceView, alias, dptr

_KT = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_EXP = {2: "0x7C00ull", 4: "0x7F800000ull", 8: "0x7FF0000000000000ull"}
_CANON_NAN = {2: "0x7E00ull", 4: "0x7FC00000ull", 8: "0x7FF8000000000000ull"}


def _key_expr(kind: str, w: int, eqz: bool, src: str) -> list:
    """C statements computing ``key`` (type K) from the raw bits ``src`` (type K)."""
    if kind in "bu":
        return [f"K key = {src};"]
    sign = f"((K)1 << {8 * w - 1})"
    if kind == "i":
        return [f"K key = {src} ^ {sign};"]
    lines = [f"K b = {src};", f"const K mag = b & (K)~{sign};"]
    if eqz:
        lines += [f"if (mag > (K){_EXP[w]}) b = (K){_CANON_NAN[w]};",
                  "else if (mag == 0) b = 0;"]
    else:
        lines += [f"if (mag > (K){_EXP[w]}) b = mag;"]
    lines += [f"K key = (b & {sign}) ? (K)~b : (K)(b | {sign});"]
    return lines


def _kind(dt):
    return "b" if dt.kind == "b" else dt.kind


def keys_kernel(kind: str, w: int, eqz: bool) -> Kernel:
    body = "\n".join([
        "{", f"  typedef {_KT[w]} K;",
        "  const K* src = (const K*)p_0; K* keys = (K*)p_1; const long long n = p_2;",
        "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
        " i += (long long)gridDim.x * blockDim.x) {",
        *["    " + ln for ln in _key_expr(kind, w, eqz, "src[i]")],
        "    keys[i] = key;", "  }", "}"])
    return Kernel(f"cpn_sortkeys_{kind}{w}_{int(eqz)}", [("const char*", PTR), ("char*", PTR),
                                                         ("const long long", I64)], body)


def complex_keys_kernel(w: int) -> Kernel:
    """From complex (two floats of w bytes): class (u8), primary and secondary keys (K)."""
    sec = _key_expr("f", w, True, "im_bits")
    pri_re = _key_expr("f", w, True, "re_bits")
    lines = ["{", f"  typedef {_KT[w]} K;",
             "  const K* src = (const K*)p_0; unsigned char* cls = p_1; K* pk = (K*)p_2;"
             " K* sk = (K*)p_3; const long long n = p_4;",
             "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
             " i += (long long)gridDim.x * blockDim.x) {",
             f"    const K sgn = (K)1 << {8 * w - 1};",
             "    const K re_bits = src[2 * i], im_bits = src[2 * i + 1];",
             f"    const bool rn = (re_bits & (K)~sgn) > (K){_EXP[w]};",
             f"    const bool in_ = (im_bits & (K)~sgn) > (K){_EXP[w]};",
             "    const int c = (rn ? 2 : 0) | (in_ ? 1 : 0);",
             "    K kre, kim;",
             "    { " + " ".join(pri_re) + " kre = key; }",
             "    { " + " ".join(sec) + " kim = key; }",
             "    cls[i] = (unsigned char)c;",
             "    pk[i] = c <= 1 ? kre : (c == 2 ? kim : (K)0);",
             "    sk[i] = c == 0 ? kim : (K)0;",
             "  }", "}"]
    return Kernel(f"cpn_sortkeys_c{w}", [("const char*", PTR), ("unsigned char*", PTR),
                                         ("char*", PTR), ("char*", PTR),
                                         ("const long long", I64)], "\n".join(lines))


# Runtime key transforms (``kmode``): 0 the bits (bool, unsigned), 1 flip the sign bit
# (signed), 2 float (NaN above +inf, payload kept), 3 float with -0.0 == +0.0 and one NaN;
# ``cpn_rx_out`` inverts 0..2.
_RX_PRELUDE = r"""
#ifndef CPN_RX_PRELUDE
#define CPN_RX_PRELUDE
struct alignas(16) cpn_rx_v16 { unsigned long long a, b; };  // one 16-byte load
template <class K> __device__ __forceinline__ K cpn_rx_in(K b, int m) {
  const K sign = (K)((K)1 << (8 * sizeof(K) - 1));
  if (m == 0) return b;
  if (m == 1) return (K)(b ^ sign);
  const K ex = (K)(sizeof(K) == 2 ? 0x7C00ull : sizeof(K) == 4 ? 0x7F800000ull
                                              : 0x7FF0000000000000ull);
  const K qn = (K)(sizeof(K) == 2 ? 0x7E00ull : sizeof(K) == 4 ? 0x7FC00000ull
                                              : 0x7FF8000000000000ull);
  const K mag = (K)(b & (K)~sign);
  if (mag > ex) b = m == 3 ? qn : mag;
  else if (m == 3 && mag == 0) b = 0;
  return (b & sign) ? (K)~b : (K)(b | sign);
}
template <class K> __device__ __forceinline__ K cpn_rx_out(K k, int m) {
  const K sign = (K)((K)1 << (8 * sizeof(K) - 1));
  if (m == 0) return k;
  if (m == 1) return (K)(k ^ sign);
  return (k & sign) ? (K)(k ^ sign) : (K)~k;
}
#endif
"""
RB = 256           # threads per block of the radix kernels (the 256 digits: one each)
# The knobs (``tuning.SORT``): the onesweep tile and pass kernel, the all-passes histogram
# kernel ('vec': 16-byte loads, private shared-memory copies; 'scalar': the former kernel,
# kept for comparison), and which radix sort runs the one-row sorts ('cub': CUB's onesweep
# agents, cub_sort.py; rows, complex values and n >= 2**28 stay with 'own').  The probe
# (benchmarks/probes/sort_probe.py) sets them before the first sort.
_PS = 260          # plan row per pass: active, parity, first, last, 256 digit offsets
_SHMEM = 48 * 1024
_PT = {"n": None, "i4": "unsigned int", "i8": "unsigned long long"}


def _pw(w, pk):
    return {"n": 0, "i4": 4, "i8": 8, "v": w}[pk]


def os_items(w, pk):
    """Items per thread of the pass kernel: ``tuning.SORT.onesweep_items``, capped by static
    shared memory."""
    mw = max(w, _pw(w, pk))
    cap = (_SHMEM - 9 * 1024) // (RB * (mw + 1))
    return max(1, min(int(tuning.SORT.onesweep_items[mw]), cap))


def rx_hist_kernel(w: int) -> Kernel:
    """Digit counts of every pass in one read: ``ghist[p][d]`` (+=), p < np.  w > 0: the
    bytes of the keys ``cpn_rx_in(kin[e], kmode)``; w == 0: the bytes of the row e / nrow.
    ``tuning.SORT.hist_impl`` picks this kernel ('vec') or the former one ('scalar')."""
    if tuning.SORT.hist_impl == "scalar":
        return rx_hist_kernel_scalar(w)
    return _rx_hist_vec_kernel(w, *hist_knobs(w))


def hist_knobs(w):
    """(16-byte loads a thread per round, histogram copies per block, spread, runs) of the
    'vec' histogram kernel: copies a power of two, at most 32 ('lane') or the block's warps
    ('warp'), capped so that they fit in ``tuning.SORT.hist_smem`` bytes."""
    npass = w if w else 8
    spread = "warp" if tuning.SORT.hist_spread == "warp" else "lane"
    c = 1
    top = 32 if spread == "lane" else RB // 32
    t = tuning.SORT
    while c * 2 <= min(int(t.hist_copies), top) and c * 2 * npass * 1024 <= t.hist_smem:
        c *= 2
    return max(1, int(tuning.SORT.hist_vecs)), c, spread, bool(tuning.SORT.hist_runs)


def hist_per_block_round(w):
    """Elements a block reads per round of the histogram kernel (the grid's unit)."""
    if tuning.SORT.hist_impl == "scalar":
        return RB * tuning.SORT.hist_items
    return RB * (hist_knobs(w)[0] * 16 // w if w else 16)


def _rx_hist_vec_kernel(w: int, hv: int, copies: int, spread: str, runs: bool) -> Kernel:
    """The histogram kernel for throughput: each thread loads ``hv`` 16-byte vectors a round
    (consecutive threads, consecutive vectors: all loads in flight before any counting),
    applies the key transform inline (``kmode`` dispatched once to a template, so the
    transform is compiled per mode), and counts into ``copies`` private 256-bin histograms
    per pass in shared memory (32-bit): 'lane' spread: lane l adds to copy l % copies,
    copies innermost (``h[(p*256 + d)*C + c]``: lanes of one digit hit distinct words);
    'warp' spread: warp w to copy w % copies (``h[(c*NP + p)*256 + d]``).  ``runs``: a
    thread adds a run of equal digits among its keys of the round once (constant high
    bytes: one atomic per pass per round, not per key).  No warp votes.  The copies are
    summed and added to ``ghist`` once per block.  The elements before the first 16-byte
    boundary of ``kin`` and the partial last vector are counted one a thread by block 0.
    w == 0: the digits of the row e / nrow, 16 consecutive elements a thread per round (one
    64-bit division per 16)."""
    npass = w if w else 8
    kt = _KT[w] if w else "unsigned long long"
    V = 16 // w if w else 16
    kpt = hv * V if w else 16  # keys a thread per round
    if spread == "lane":
        hoff, stride = "(tid & 31) % C", "C"
    else:
        hoff, stride = "((tid >> 5) % C) * (NP * 256)", "1"
    modes = (0, 1) if w == 1 else (0, 1, 2, 3)
    nm = f"cpn_rxh{w}_{hv}_{copies}{spread[0]}_{int(runs)}"
    # one pass's counting of the keys kk[0..kpt) (valid: vok[i / V]) into hp
    if runs:
        count = f"""
#pragma unroll
    for (int p = 0; p < NP; ++p) {{
      if (p < np) {{
        unsigned rd = (unsigned)(kk[0] >> (8 * p)) & 255u, rc = 0;
#pragma unroll
        for (int j = 0; j < {kpt}; ++j) {{
          const unsigned d = vok[j / {V}] ? (unsigned)(kk[j] >> (8 * p)) & 255u : rd;
          if (d != rd) {{ atomicAdd(hp + (p * 256 + rd) * S, rc); rd = d; rc = 0; }}
          rc += vok[j / {V}] ? 1u : 0u;
        }}
        if (rc) atomicAdd(hp + (p * 256 + rd) * S, rc);
      }}
    }}"""
    else:
        count = f"""
#pragma unroll
    for (int p = 0; p < NP; ++p) {{
      if (p < np) {{
#pragma unroll
        for (int j = 0; j < {kpt}; ++j)
          if (vok[j / {V}]) atomicAdd(hp + (p * 256 + ((unsigned)(kk[j] >> (8 * p)) & 255u)) * S, 1u);
      }}
    }}"""
    if w:
        half = V // 2
        unpack = (f"kk[i * {V} + j] = cpn_rx_in((K)((j < {half} ? x[i].a : x[i].b) >> "
                  f"({8 * w} * (j % {half}))), M);") if V > 1 else ""
        if w == 8:
            unpack = f"kk[i * {V} + j] = cpn_rx_in((K)(j == 0 ? x[i].a : x[i].b), M);"
        main = f"""
  const K* kin = (const K*)kin_;
  // scalar ends: the elements before the first 16-byte boundary, and after the last vector
  const long long h0 = (long long)(((16u - ((unsigned)(unsigned long long)kin & 15u)) & 15u) / sizeof(K)) < n
                       ? (long long)(((16u - ((unsigned)(unsigned long long)kin & 15u)) & 15u) / sizeof(K)) : n;
  const long long nv = (n - h0) / {V};
  const long long t0 = h0 + nv * {V};
  if (blockIdx.x == 0) {{
    const long long e = tid < h0 ? (long long)tid : t0 + (tid - h0);
    if (tid < h0 || e < n) {{
      const K k = cpn_rx_in(kin[e], M);
      for (int p = 0; p < np; ++p) atomicAdd(hp + (p * 256 + ((unsigned)(k >> (8 * p)) & 255u)) * S, 1u);
    }}
  }}
  const cpn_rx_v16* vp = (const cpn_rx_v16*)(kin + h0);
  for (long long vb = (long long)blockIdx.x * {RB * hv}; vb < nv;
       vb += (long long)gridDim.x * {RB * hv}) {{
    cpn_rx_v16 x[{hv}]; bool vok[{hv}];
#pragma unroll
    for (int i = 0; i < {hv}; ++i) {{
      const long long v = vb + i * {RB} + tid;
      vok[i] = v < nv;
      if (vok[i]) x[i] = vp[v]; else {{ x[i].a = 0; x[i].b = 0; }}
    }}
    K kk[{kpt}];
#pragma unroll
    for (int i = 0; i < {hv}; ++i) {{
#pragma unroll
      for (int j = 0; j < {V}; ++j) {unpack}
    }}{count}
  }}"""
    else:
        main = f"""
  (void)kin_;
  for (long long eb = (long long)blockIdx.x * {RB * 16}; eb < n;
       eb += (long long)gridDim.x * {RB * 16}) {{
    const long long e0 = eb + (long long)tid * 16;
    if (e0 >= n) continue;
    unsigned long long r = (unsigned long long)e0 / (unsigned long long)nrow;
    long long rr = e0 - (long long)(r * (unsigned long long)nrow);
    K kk[16]; bool vok[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) {{
      vok[j] = e0 + j < n; kk[j] = r;
      if (++rr == nrow) {{ rr = 0; ++r; }}
    }}{count.replace("j / 16", "j")}
  }}"""
    body_t = f"""
template <int M> __device__ __forceinline__ void {nm}_run(const char* kin_, const long long n,
    const long long nrow, const int np, unsigned* h) {{
  typedef {kt} K;
  enum {{ NP = {npass}, C = {copies} }};
  const int tid = threadIdx.x;
  const int S = {stride};
  unsigned* hp = h + {hoff};
  (void)nrow; (void)S;{main}
}}
"""
    merge = (f"for (int c = 0; c < {copies}; ++c) s += h[i * {copies} + c];" if spread == "lane"
             else f"for (int c = 0; c < {copies}; ++c) s += h[c * {npass * 256} + i];")
    dispatch = " ".join(f"case {m}: {nm}_run<{m}>(p_0, n, nrow, np, h); break;" for m in modes)
    body = f"""{{
  const long long n = p_1; const int kmode = p_2; const long long nrow = p_3; const int np = p_4;
  unsigned long long* ghist = p_5;
  __shared__ unsigned h[{copies * npass * 256}];
  const int tid = threadIdx.x;
  for (int i = tid; i < {copies * npass * 256}; i += {RB}) h[i] = 0;
  __syncthreads();
  switch ({"kmode" if w else 0}) {{ {dispatch} default: {nm}_run<{modes[-1]}>(p_0, n, nrow, np, h); }}
  __syncthreads();
  for (int i = tid; i < np * 256; i += {RB}) {{
    unsigned s = 0;
    {merge}
    if (s) atomicAdd(&ghist[i], (unsigned long long)s);
  }}
}}"""
    prelude = _RX_PRELUDE + body_t
    return Kernel(f"cpn_rx_hist_{w}_v{hv}_c{copies}{spread[0]}{'_r' if runs else ''}",
                  [("const char*", PTR), ("const long long", I64), ("const int", I32),
                   ("const long long", I64), ("const int", I32),
                   ("unsigned long long*", PTR)], body, prelude)


def rx_hist_kernel_scalar(w: int) -> Kernel:
    """The former histogram kernel (``tuning.SORT.hist_impl == 'scalar'``, for comparison):
    one key a thread per load, a warp whose lanes share a digit adds once, else one shared atomic a
    key and pass into one block-wide histogram.  Same counts as ``rx_hist_kernel``."""
    npass = w if w else 8
    kt = _KT[w] if w else "unsigned long long"
    load = ("kv[i] = e < n ? cpn_rx_in(kin[e], kmode) : (K)0;" if w else
            "kv[i] = e < n ? (K)((unsigned long long)e / (unsigned long long)nrow) : (K)0;")
    body = f"""{{
  typedef {kt} K;
  const K* kin = (const K*)p_0; const long long n = p_1; const int kmode = p_2;
  const long long nrow = p_3; const int np = p_4; unsigned long long* ghist = p_5;
  __shared__ unsigned int h[{npass} * 256];
  const int tid = threadIdx.x, lane = tid & 31;
  (void)kin; (void)kmode; (void)nrow;
  for (int i = tid; i < {npass} * 256; i += {RB}) h[i] = 0;
  __syncthreads();
  for (long long base = (long long)blockIdx.x * {RB * tuning.SORT.hist_items}; base < n;
       base += (long long)gridDim.x * {RB * tuning.SORT.hist_items}) {{
    K kv[{tuning.SORT.hist_items}];
#pragma unroll
    for (int i = 0; i < {tuning.SORT.hist_items}; ++i) {{
      const long long e = base + i * {RB} + tid;
      {load}
    }}
#pragma unroll
    for (int i = 0; i < {tuning.SORT.hist_items}; ++i) {{
      const bool valid = base + i * {RB} + tid < n;
      const unsigned vm = __ballot_sync(0xffffffffu, valid);
#pragma unroll
      for (int p = 0; p < {npass}; ++p) {{
        if (p < np) {{
          const unsigned d = (unsigned)(kv[i] >> (8 * p)) & 255u;
          const unsigned d0 = __shfl_sync(0xffffffffu, d, 0);
          if (__all_sync(0xffffffffu, !valid || d == d0)) {{
            if (lane == 0 && vm) atomicAdd(&h[p * 256 + d0], (unsigned)__popc(vm));
          }} else if (valid) {{
            atomicAdd(&h[p * 256 + d], 1u);
          }}
        }}
      }}
    }}
  }}
  __syncthreads();
  for (int i = tid; i < np * 256; i += {RB})
    if (h[i]) atomicAdd(&ghist[i], (unsigned long long)h[i]);
}}"""
    return Kernel(f"cpn_rx_hist_{w}_{tuning.SORT.hist_items}",
                  [("const char*", PTR), ("const long long", I64), ("const int", I32),
                   ("const long long", I64), ("const int", I32),
                   ("unsigned long long*", PTR)], body, _RX_PRELUDE)


def rx_plan_kernel() -> Kernel:
    """One block: for each pass the exclusive digit offsets, and which passes run (a pass
    whose digit is the same for all n keys is the identity and is skipped; if all are,
    the last one runs, so that the output gets written), the buffer parity of each, and
    which runs first (reads the input) and last (writes the output)."""
    body = f"""{{
  const unsigned long long* ghist = p_0; const int np = p_1; const long long n = p_2;
  long long* plan = p_3;
  __shared__ long long s[2][256];
  __shared__ int triv[8];
  const int tid = threadIdx.x;
  if (tid < 8) triv[tid] = 0;
  __syncthreads();
  for (int p = 0; p < np; ++p) {{
    const long long c = (long long)ghist[p * 256 + tid];
    if (c == n) triv[p] = 1;
    int cur = 0;
    s[0][tid] = c;
    __syncthreads();
    for (int off = 1; off < 256; off <<= 1) {{
      s[cur ^ 1][tid] = s[cur][tid] + (tid >= off ? s[cur][tid - off] : 0);
      cur ^= 1;
      __syncthreads();
    }}
    plan[p * {_PS} + 4 + tid] = s[cur][tid] - c;
    __syncthreads();
  }}
  if (tid == 0) {{
    int any = 0;
    for (int p = 0; p < np; ++p) any |= !triv[p];
    if (!any) triv[np - 1] = 0;
    int cnt = 0, last = 0;
    for (int p = 0; p < np; ++p) {{
      const int act = !triv[p];
      plan[p * {_PS}] = act; plan[p * {_PS} + 1] = cnt & 1; plan[p * {_PS} + 2] = act && cnt == 0;
      if (act) {{ ++cnt; last = p; }}
    }}
    for (int p = 0; p < np; ++p) plan[p * {_PS} + 3] = p == last;
  }}
}}"""
    return Kernel("cpn_rx_plan", [("const unsigned long long*", PTR), ("const int", I32),
                                  ("const long long", I64), ("long long*", PTR)], body)


class _BKernel(Kernel):
    """A Kernel whose signature carries ``__launch_bounds__(threads, min_blocks)``."""

    __slots__ = ("bounds",)

    def __init__(self, name, params, body, prelude="", bounds=None):
        super().__init__(name, params, body, prelude)
        self.bounds = bounds

    def signature(self) -> str:
        s = super().signature()
        if self.bounds:
            s = s.replace("__global__ void ", "__global__ void __launch_bounds__(%d, %d) "
                          % self.bounds, 1)
        return s


_PASS_CACHE: dict = {}


def _pass_knobs(w, pk):
    mw = max(w, _pw(w, pk))
    t = tuning.SORT
    late = bool(t.onesweep_late_payload) and w > 0 and pk != "n"
    return (os_items(w, pk), int(t.onesweep_min_blocks.get((mw, pk != "n"), 0)),
            t.onesweep_match, max(1, int(t.onesweep_lookback)), late)


def rx_pass_kernel(w: int, pk: str, sb: int) -> Kernel:
    key = (w, pk, sb, _pass_knobs(w, pk))
    k = _PASS_CACHE.get(key)
    if k is None:
        k = _PASS_CACHE[key] = _rx_pass_kernel(w, pk, sb, *key[3])
    return k


def _rx_pass_kernel(w: int, pk: str, sb: int, items: int, minb: int, match: str, lbw: int,
                    late: bool) -> Kernel:
    """One LSD pass of 8 bits, Onesweep style (decoupled look-back, no per-pass histogram).

    w: key bytes (0: no keys, the digit is that of the row ``payload / nrow``); pk: payload
    'n' none, 'i4'/'i8' an index stored as u32/u64 (int64 outside: read from ``pin``, or
    the identity when pin is null, and written as int64, ``% pmod`` when pmod > 0), 'v' the
    raw value (K; the first pass takes it from the key input); sb: bytes of a look-back
    status word (4 when n < 2**30).  Knobs (see ``_pass_knobs``): items per thread,
    ``__launch_bounds__`` min blocks (0: none), the warp match ('ballot': 8 ballots, as CUB
    does, since ``match.any`` is slow when 32 lanes hold many distinct values; 'any':
    ``__match_any_sync``), the look-back window (status words read at once per step) and
    whether the payload is loaded late (after the keys went to shared memory: fewer live
    registers, and its load latency overlaps the look-back).

    A block takes the next tile id from ``counter`` (so lower tiles are running or done),
    loads ITEMS elements a thread (warp-striped: a warp owns 32 * ITEMS consecutive
    elements), ranks them stably per warp (peers of a digit by warp match, per-warp digit
    counters in shared memory), publishes its digit counts at once (status: flag | value,
    one word per digit), scans them, places the keys in shared memory in digit order, and
    only then looks back over lower tiles for each digit's global prefix (thread = digit;
    the window reads ``lbw`` predecessors per step), so the predecessors had the ranking and
    the scatter's time to publish.  Then it writes the tile out: consecutive threads write
    consecutive addresses within each digit's run.  Pass p's row of ``plan`` says whether it
    runs, which of the two buffers it reads (parity), and whether it reads the input (first:
    keys go through ``cpn_rx_in(., kmode)``) or writes the output (last:
    ``cpn_rx_out(., komode)``)."""
    tile = RB * items
    nw = RB // 32
    mw = max(w, _pw(w, pk))
    kt = _KT[w] if w else "unsigned char"
    pt = {"n": "unsigned char", "v": kt}.get(pk) or _PT[pk]
    st = "unsigned int" if sb == 4 else "unsigned long long"
    idx = pk in ("i4", "i8")
    has_p = pk != "n"
    if w:
        digit = "(unsigned)(kv[i] >> shift) & 255u"
    else:
        digit = "(unsigned)((pv[i] / (P)nrow) >> shift) & 255u"
    if not has_p:
        pload = ""
    elif pk == "v":
        pload = "pv[i] = first ? raw : pp[i * 32];"
    else:
        pload = ("pv[i] = first ? (pin ? (P)((const long long*)pin)[e0 + i * 32] : "
                 "(P)(e0 + i * 32)) : pp[i * 32];")
    late_load = ""
    if late:  # the first pass of 'v' reads pin == the key input: pp serves both
        late_load = pload.replace("first ? raw : ", "")
        pload = ""
    kload = ("const K raw = kp[i * 32]; kv[i] = first ? cpn_rx_in(raw, kmode) : raw; (void)raw;"
             if w else "")
    if idx:
        pstore = ("if (last) ((long long*)pdst)[g] = pmod > 0 ? (long long)v % pmod : "
                  "(long long)v; else pdst[g] = v;")
    else:
        pstore = "pdst[g] = v;"
    if match == "any":
        peers = ["    const unsigned peers = __match_any_sync(0xffffffffu, d);"]
    else:  # the lanes whose 8 digit bits all agree with ours (valid lanes only)
        peers = ["    unsigned peers = vm;",
                 "#pragma unroll",
                 "    for (int b = 0; b < 8; ++b) {",
                 "      const unsigned bit = (d >> b) & 1u;",
                 "      const unsigned bb = __ballot_sync(0xffffffffu, bit);",
                 "      peers &= bit ? bb : ~bb;",
                 "    }"]
    lines = [
        "{",
        f"  typedef {kt} K; typedef {pt} P; typedef {st} S;",
        "  const long long* pl = p_14;",
        "  if (!pl[0]) return;",
        "  const int par = (int)pl[1], first = (int)pl[2], last = (int)pl[3];",
        "  const char* pin = p_6; const long long pmod = p_10; const long long n = p_11;",
        "  const int shift = p_12; const long long nrow = p_13; const int kmode = p_4;",
        "  const int komode = p_5;",
        "  const K* ksrc = first ? (const K*)p_0 : (const K*)(par ? p_2 : p_1);",
        "  K* kdst = last ? (K*)p_3 : (K*)(par ? p_1 : p_2);",
        "  const P* psrc = first ? (const P*)pin : (const P*)(par ? p_8 : p_7);",
        "  P* pdst = last ? (P*)p_9 : (P*)(par ? p_7 : p_8);",
        "  (void)ksrc; (void)kdst; (void)psrc; (void)pdst; (void)pmod; (void)nrow; (void)kmode;",
        "  (void)komode; (void)pin;",
        "  __shared__ unsigned s_tile;",
        f"  __shared__ unsigned short s_wh[{nw} * 256];",
        f"  __shared__ unsigned s_wt[{nw}];",
        "  __shared__ long long s_base[256];",
        f"  __shared__ unsigned char s_dg[{tile}];",
        f"  __shared__ unsigned long long s_buf[{(tile * mw + 7) // 8}];",
        "  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;",
        "  if (tid == 0) s_tile = atomicAdd(p_16, 1u);",
        f"  for (int i = tid; i < {nw} * 256; i += {RB}) s_wh[i] = 0;",
        "  __syncthreads();",
        "  const long long tileid = s_tile;",
        f"  const long long wbase = tileid * {tile} + warp * {32 * items};",
        f"  K kv[{items}]; P pv[{items}]; unsigned dr[{items}];",
        "  const long long left = n - wbase;  // this warp's valid elements: wrem",
        f"  const int wrem = left > {32 * items} ? {32 * items} : (left < 0 ? 0 : (int)left);",
        "  const int rem = wrem - lane;  // item i is valid when i * 32 < rem",
        "  const long long e0 = wbase + lane; (void)e0;",
        "  const K* kp = ksrc + e0; const P* pp = psrc + e0; (void)kp; (void)pp;",
        "#pragma unroll",
        f"  for (int i = 0; i < {items}; ++i) {{",
        "    kv[i] = 0; pv[i] = 0;",
        f"    if (i * 32 < rem) {{ {kload} {pload} }}",
        "  }",
        "  const unsigned lt = (1u << lane) - 1u;",
        "#pragma unroll",
        f"  for (int i = 0; i < {items}; ++i) {{",
        "    const int k = wrem - i * 32;",
        "    const unsigned vm = k >= 32 ? 0xffffffffu : (k <= 0 ? 0u : (1u << k) - 1u);",
        "    const bool valid = (vm >> lane) & 1u;",
        f"    const unsigned d = valid ? {digit} : 256u;",
        *peers,
        "    const unsigned before = s_wh[warp * 256 + (d & 255u)];",
        "    __syncwarp();",
        "    if (valid && (peers & lt) == 0) s_wh[warp * 256 + d] = (unsigned short)(before + __popc(peers));",
        "    __syncwarp();",
        "    dr[i] = (d << 16) | (before + __popc(peers & lt));",
        "  }",
        "  __syncthreads();",
        "  // thread tid is digit tid: warp-exclusive counts, the tile's count, publish it",
        "  unsigned cnt = 0;",
        f"  for (int w = 0; w < {nw}; ++w) {{ const unsigned c = s_wh[w * 256 + tid]; s_wh[w * 256 + tid] = (unsigned short)cnt; cnt += c; }}",
        "  volatile S* vst = (volatile S*)p_15;",
        f"  const S FA = (S)1 << {8 * sb - 2}, FI = (S)2 << {8 * sb - 2}, VM = FA - 1;",
        "  vst[tileid * 256 + tid] = (tileid == 0 ? FI : FA) | (S)cnt;",
        "  unsigned x = cnt;",
        "  for (int o = 1; o < 32; o <<= 1) { const unsigned y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }",
        "  if (lane == 31) s_wt[warp] = x;",
        "  __syncthreads();",
        "  for (int w = 0; w < warp; ++w) x += s_wt[w];",
        "  const unsigned excl = x - cnt;",
        f"  for (int w = 0; w < {nw}; ++w) s_wh[w * 256 + tid] = (unsigned short)(s_wh[w * 256 + tid] + excl);",
        "  __syncthreads();",
        f"  const int tn = (int)(n - tileid * {tile} < {tile} ? n - tileid * {tile} : {tile});",
    ]
    first_el, first_arr = ("kv", "K") if w else ("pv", "P")
    lines += [
        f"  {first_arr}* s_e = ({first_arr}*)s_buf;",
        "#pragma unroll",
        f"  for (int i = 0; i < {items}; ++i) {{",
        "    const unsigned d = dr[i] >> 16;",
        "    if (d < 256u) { const int pos = s_wh[warp * 256 + d] + (dr[i] & 0xffffu);"
        f" s_e[pos] = {first_el}[i]; s_dg[pos] = (unsigned char)d; }}",
        "  }",
    ]
    if late:
        lines += [
            "#pragma unroll",
            f"  for (int i = 0; i < {items}; ++i) if (i * 32 < rem) {{ {late_load} }}",
        ]
    lines += [
        "  // look back for this digit's count in all lower tiles",
        "  long long before_tiles = 0;",
        "  if (tileid > 0) {",
        "    long long j = tileid - 1;",
        "    bool done = false;",
        "    while (!done) {",
        f"      S sv[{lbw}];",
        "#pragma unroll",
        f"      for (int q = 0; q < {lbw}; ++q) sv[q] = j - q >= 0 ? vst[(j - q) * 256 + tid] : FI;",
        "      int used = 0; bool stop = false;",
        "#pragma unroll",
        f"      for (int q = 0; q < {lbw}; ++q) {{",
        "        if (!stop) {",
        "          if ((sv[q] & (FA | FI)) == 0) stop = true;  // not published yet: poll again",
        "          else { before_tiles += (long long)(sv[q] & VM); ++used;"
        " if (sv[q] & FI) { stop = true; done = true; } }",
        "        }",
        "      }",
        "      j -= used;",
        "    }",
        "    vst[tileid * 256 + tid] = FI | (S)(before_tiles + cnt);",
        "  }",
        "  s_base[tid] = pl[4 + tid] + before_tiles - (long long)excl;",
        "  __syncthreads();",
    ]
    if w:
        lines += [
            "  if (kdst) {",
            "#pragma unroll",
            f"    for (int i = 0; i < {items}; ++i) {{",
            f"      const int j = tid + i * {RB};",
            "      if (j < tn) {",
            "        const long long g = s_base[s_dg[j]] + j;",
            "        const K v = s_e[j]; kdst[g] = last ? cpn_rx_out(v, komode) : v;",
            "      }",
            "    }",
            "  }",
        ]
        if has_p:
            lines += [
                "  __syncthreads();",
                "  P* s_p = (P*)s_buf;",
                "#pragma unroll",
                f"  for (int i = 0; i < {items}; ++i) {{",
                "    const unsigned d = dr[i] >> 16;",
                "    if (d < 256u) s_p[s_wh[warp * 256 + d] + (dr[i] & 0xffffu)] = pv[i];",
                "  }",
                "  __syncthreads();",
            ]
    if has_p:
        lines += [
            "  {",
            "    const P* s_q = (const P*)s_buf;",
            "#pragma unroll",
            f"    for (int i = 0; i < {items}; ++i) {{",
            f"      const int j = tid + i * {RB};",
            "      if (j < tn) {",
            "        const long long g = s_base[s_dg[j]] + j;",
            f"        const P v = s_q[j]; {pstore}",
            "      }",
            "    }",
            "  }",
        ]
    lines += ["}"]
    name = f"cpn_rx_pass_{w}_{pk}_{sb}_{items}_b{minb}_{match}_l{lbw}{'_late' if late else ''}"
    return _BKernel(name,
                    [("const char*", PTR), ("char*", PTR), ("char*", PTR), ("char*", PTR),
                     ("const int", I32), ("const int", I32),
                     ("const char*", PTR), ("char*", PTR), ("char*", PTR), ("char*", PTR),
                     ("const long long", I64), ("const long long", I64), ("const int", I32),
                     ("const long long", I64), ("const long long*", PTR), ("char*", PTR),
                     ("unsigned int*", PTR)], "\n".join(lines), _RX_PRELUDE,
                    (RB, minb) if minb else None)


def mod_kernel() -> Kernel:
    body = """{
  const long long* p = p_0; long long* out = p_1; const long long n = p_2; const long long m = p_3;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) out[i] = p[i] % m;
}"""
    return Kernel("cpn_sort_mod", [("const long long*", PTR), ("long long*", PTR),
                                   ("const long long", I64), ("const long long", I64)], body)


def searchsorted_kernel(w: int) -> Kernel:
    body = f"""{{
  typedef {_KT[w]} K;
  const K* a = (const K*)p_0; const long long n = p_1; const K* v = (const K*)p_2;
  long long* out = p_3; const long long m = p_4; const int right = p_5;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
       i += (long long)gridDim.x * blockDim.x) {{
    const K x = v[i];
    long long lo = 0, hi = n;
    while (lo < hi) {{
      const long long mid = lo + ((hi - lo) >> 1);
      const bool go = right ? !(x < a[mid]) : (a[mid] < x);
      if (go) lo = mid + 1; else hi = mid;
    }}
    out[i] = lo;
  }}
}}"""
    return Kernel(f"cpn_searchsorted_{w}", [("const char*", PTR), ("const long long", I64),
                                            ("const char*", PTR), ("long long*", PTR),
                                            ("const long long", I64), ("const int", I32)], body)


# --- drivers ---------------------------------------------------------------------------------
def _grid(n):
    return max(1, min((n + BLOCK - 1) // BLOCK, DEV.sm_count() * 32))


def _rx_row_passes(rows):
    return max(1, (int(rows - 1).bit_length() + 7) // 8)


def radix(n, w, *, kin=0, kmode=0, kout=0, komode=0, pk="n", pin=0, pout=0, pmod=0,
          nrow=0, npass=None):
    """Stable LSD radix sort of n elements, one read for the histograms of all passes, then
    one onesweep kernel per 8-bit pass (skipped on the device when its digit is constant).

    w > 0: keys of w bytes at ``kin`` (``cpn_rx_in(., kmode)`` applied on reading), the
    sorted keys written to ``kout`` (``cpn_rx_out(., komode)``) unless it is 0; w == 0: no
    keys, the order is that of the row ``payload // nrow`` (``npass`` passes).  Payload
    ``pk`` (see ``rx_pass_kernel``) from ``pin`` to ``pout``.  Pointers are ints."""
    if npass is None:
        npass = w
    pw = _pw(w, pk)
    tile = RB * os_items(w, pk)
    nt = (n + tile - 1) // tile
    sb = 4 if n < 2**30 else 8
    hist = DEV.alloc(npass * 256 * 8)
    DEV.memset(hist.ptr, 0, npass * 256 * 8)
    per = hist_per_block_round(w)
    hg = max(1, min((n + per - 1) // per, DEV.sm_count() * tuning.SORT.hist_blocks_per_sm))
    DEV.launch(rx_hist_kernel(w), hg, RB, [kin if w else 0, n, kmode, nrow, npass, hist.ptr])
    plan = DEV.alloc(npass * _PS * 8)
    DEV.launch(rx_plan_kernel(), 1, 256, [hist.ptr, npass, n, plan.ptr])
    sbytes = nt * 256 * sb
    stat = DEV.alloc(npass * (sbytes + 4))
    DEV.memset(stat.ptr, 0, npass * (sbytes + 4))
    cnt0 = stat.ptr + npass * sbytes
    kb = [DEV.alloc(n * w) if w and npass > i else None for i in (2, 1)]
    pb = [DEV.alloc(n * pw) if pw and npass > i else None for i in (2, 1)]
    kb0, kb1 = (b.ptr if b is not None else 0 for b in kb)
    pb0, pb1 = (b.ptr if b is not None else 0 for b in pb)
    k = rx_pass_kernel(w, pk, sb)
    for p in range(npass):
        DEV.launch(k, nt, RB, [kin, kb0, kb1, kout, kmode, komode, pin, pb0, pb1, pout, pmod,
                               n, 8 * p, nrow, plan.ptr + p * _PS * 8, stat.ptr + p * sbytes,
                               cnt0 + 4 * p])


def _modes(dt, eqz):
    """(kmode, komode) of a real dtype (see ``cpn_rx_in``)."""
    if dt.kind in "bu":
        return 0, 0
    if dt.kind == "i":
        return 1, 1
    return (3 if eqz else 2), 2


def _make_keys(src_ptr, n, dt, eqz):
    w = dt.itemsize
    keys = DEV.alloc(n * w)
    DEV.launch(keys_kernel(_kind(dt), w, eqz), _grid(n), BLOCK, [src_ptr, keys.ptr, n])
    return keys


def _permute(buf, w, p, n):
    """buf[p] (n elements of w bytes) as a new buffer (one gather)."""
    dt = np.dtype(f"u{w}")
    out = DEV.alloc(n * w)
    indexed_copy("gather", DeviceView(buf, (n,), dt), [DeviceView(p, (n,), np.int64)], 0,
                 DeviceView(out, (n,), dt))
    return out


def sort(src, values, indices, stable):
    """Sort each row of the C-contiguous (rows, n) array ``src``: values into ``values``
    and/or the stable argsort into ``indices`` (int64), both (rows, n) C-contiguous."""
    rows, n = src._shape
    total = rows * n
    dt = src.dtype
    sp = dptr(src)
    ipk = "i4" if total < 2**32 else "i8"
    if dt.kind == "c":
        w = dt.itemsize // 2
        cls, pk, sk = DEV.alloc(total), DEV.alloc(total * w), DEV.alloc(total * w)
        DEV.launch(complex_keys_kernel(w), _grid(total), BLOCK,
                   [sp, cls.ptr, pk.ptr, sk.ptr, total])
        p = DEV.alloc(total * 8)
        radix(total, w, kin=sk.ptr, pk=ipk, pout=p.ptr)
        p2 = DEV.alloc(total * 8)
        radix(total, w, kin=_permute(pk, w, p, total).ptr, pk=ipk, pin=p.ptr, pout=p2.ptr)
        radix(total, 1, kin=_permute(cls, 1, p2, total).ptr, pk=ipk, pin=p2.ptr, pout=p.ptr)
    else:
        w = dt.itemsize
        kmode, komode = _modes(dt, indices is not None or stable)
        if rows == 1 and _cub_sort_row(sp, total, dt, kmode, values, indices, stable):
            return
        if rows == 1 and indices is None:
            if stable and dt.kind == "f":  # -0.0/+0.0 and NaNs in input order: sort the bits
                radix(total, w, kin=sp, kmode=kmode, pk="v", pin=sp, pout=dptr(values))
            else:
                radix(total, w, kin=sp, kmode=kmode, kout=dptr(values), komode=komode)
            return
        if rows == 1 and values is None:
            radix(total, w, kin=sp, kmode=kmode, pk=ipk, pout=dptr(indices))
            return
        p = DEV.alloc(total * 8)
        radix(total, w, kin=sp, kmode=kmode, pk=ipk, pout=p.ptr)
    if rows > 1:  # order by row, stable: each row stays sorted
        rp = _rx_row_passes(rows)
        if values is None:
            radix(total, 0, pk=ipk, pin=p.ptr, pout=dptr(indices), pmod=n, nrow=n, npass=rp)
            return
        p2 = DEV.alloc(total * 8)
        radix(total, 0, pk=ipk, pin=p.ptr, pout=p2.ptr, nrow=n, npass=rp)
        p = p2
    if indices is not None:
        DEV.launch(mod_kernel(), _grid(total), BLOCK, [p.ptr, dptr(indices), total, n])
    if values is not None:
        flat = alias(src, (total,), dt, None)
        out = alias(values, (total,), dt, None)
        indexed_copy("gather", flat, [DeviceView(p, (total,), np.dtype(np.int64))], 0, out)


def _cub_sort_row(sp, n, dt, kmode, values, indices, stable):
    """The one-row sorts through CUB's onesweep kernels (``tuning.SORT.engine == 'cub'``, see
    cub_sort.py): value sort (keys only), stable float value sort (key and raw value),
    argsort (key and u32 index).  False when this case stays with our own engine."""
    if tuning.SORT.engine != "cub" or (values is None) == (indices is None):
        return False
    from . import cub_sort

    w = dt.itemsize
    if not cub_sort.supported(n, w):
        return False
    if indices is not None:
        cub_sort.radix(n, w, kmode, sp, vw=4, vout=dptr(indices))
    elif stable and dt.kind == "f":  # -0.0/+0.0 and NaNs in input order: sort the bits
        cub_sort.radix(n, w, kmode, sp, vw=w, vin=sp, vout=dptr(values))
    else:
        cub_sort.radix(n, w, kmode, sp, kout=dptr(values))
    return True


def searchsorted(a, v, side, out):
    """``out[...] = searchsorted(a, v, side)``: a 1-D sorted, v any shape, same dtype;
    out int64 C-contiguous of v's shape.  Complex values: NumPy on the host."""
    b = transfers
    dt = a.dtype
    if dt.kind == "c":
        res = np.searchsorted(b.to_host(a), b.to_host(v), side=side)
        b.write_host(out, res.astype(np.int64))
        return
    w = dt.itemsize
    ac = _contig(a)
    vc = _contig(v)
    n, m = a._size, v._size
    ak = _make_keys(dptr(ac), n, dt, True) if n else DEV.alloc(8)
    vk = _make_keys(dptr(vc), m, dt, True)
    DEV.launch(searchsorted_kernel(w), _grid(m), BLOCK,
               [ak.ptr, n, vk.ptr, dptr(out), m, int(side == "right")])


def _contig(a):
    if a._c_contig:
        return a
    t = DeviceView(DEV.alloc(a._size * a.dtype.itemsize), a._shape, a.dtype)
    transfers.bit_copy(a, t)
    return t


