"""CUDA sort: an LSD radix sort on order-preserving key bits, and searchsorted.

Keys: each value becomes an unsigned integer of its size whose unsigned order is NumPy's
sort order: signed integers flip the sign bit; floats flip all bits when negative and the
sign bit otherwise, with NaN mapped above +inf (so NaN sorts last).  When ties must be
kept in input order (argsort, stable sort) -0.0 and +0.0 get one key and every NaN the
same key, as NumPy compares them equal; the plain value sort keeps the bits (a
-0.0/+0.0 tie may come out either way, which NumPy's unstable sort allows too), so the
values come back by inverting the keys, with no payload.  Complex values sort in NumPy's
order through three stable key rounds (class of NaNs, primary, secondary).

A pass sorts by 8 bits: a per-block digit histogram (digit-major, so one exclusive scan of
the whole table gives every (digit, block) its output offset), the scan, and a stable
scatter: each block ranks its tile in rounds of 256 elements (warp ``__match_any_sync`` +
per-warp digit counts in shared memory).  Rows of an axis sort are segments: after the key
passes, more passes order by row (``payload // n``), stable, which keeps each row sorted.
"""
from __future__ import annotations

import numpy as np

from . import kernels_util as ku
from .indexing import BLOCK, indexed_copy
from .kernels_util import DEV, I32, I64, PTR, Kernel

ITEMS = 16  # elements per thread in the radix kernels: a tile is BLOCK * ITEMS
TILE = BLOCK * ITEMS
SCAN_ITEMS = 8
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


def unkeys_kernel(kind: str, w: int) -> Kernel:
    sign = f"((K)1 << {8 * w - 1})"
    if kind in "bu":
        expr = "key"
    elif kind == "i":
        expr = f"key ^ {sign}"
    else:
        expr = f"(key & {sign}) ? (K)(key ^ {sign}) : (K)~key"
    body = "\n".join([
        "{", f"  typedef {_KT[w]} K;",
        "  K* data = (K*)p_0; const long long n = p_1;",
        "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
        " i += (long long)gridDim.x * blockDim.x) {",
        f"    const K key = data[i]; data[i] = {expr};", "  }", "}"])
    return Kernel(f"cpn_sortunkeys_{kind}{w}", [("char*", PTR), ("const long long", I64)], body)


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


def _digit(w, from_payload):
    if from_payload:
        return "(unsigned)((((unsigned long long)pv / (unsigned long long)nrow) >> shift) & 255u)"
    return "(unsigned)((key >> shift) & 255u)"


def hist_kernel(w: int, from_payload: bool) -> Kernel:
    body = f"""{{
  typedef {_KT[w]} K;
  const K* keys = (const K*)p_0; const long long* pay = p_1; const long long n = p_2;
  const int shift = p_3; const long long nrow = p_4; long long* hist = p_5; const long long nb = p_6;
  __shared__ int h[256];
  h[threadIdx.x] = 0;
  __syncthreads();
  const long long base = (long long)blockIdx.x * {TILE};
  for (int r = 0; r < {ITEMS}; ++r) {{
    const long long e = base + r * {BLOCK} + threadIdx.x;
    if (e < n) {{
      const K key = keys ? keys[e] : (K)0;
      const long long pv = pay ? pay[e] : e;
      (void)key; (void)pv;
      atomicAdd(&h[{_digit(w, from_payload)}], 1);
    }}
  }}
  __syncthreads();
  hist[(long long)threadIdx.x * nb + blockIdx.x] = h[threadIdx.x];
}}"""
    return Kernel(f"cpn_radix_hist_{w}_{int(from_payload)}",
                  [("const char*", PTR), ("const long long*", PTR), ("const long long", I64),
                   ("const int", I32), ("const long long", I64), ("long long*", PTR),
                   ("const long long", I64)], body)


def scatter_kernel(w: int, from_payload: bool) -> Kernel:
    body = f"""{{
  typedef {_KT[w]} K;
  const K* kin = (const K*)p_0; K* kout = (K*)p_1; const long long* pin = p_2;
  long long* pout = p_3; const long long n = p_4; const int shift = p_5;
  const long long nrow = p_6; const long long* hist = p_7; const long long nb = p_8;
  __shared__ long long s_off[256];
  __shared__ int s_run[256];
  __shared__ int s_w[{BLOCK // 32}][256];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  s_off[tid] = hist[(long long)tid * nb + blockIdx.x];
  s_run[tid] = 0;
  for (int w = 0; w < {BLOCK // 32}; ++w) s_w[w][tid] = 0;
  __syncthreads();
  const long long base = (long long)blockIdx.x * {TILE};
  for (int r = 0; r < {ITEMS}; ++r) {{
    const long long e = base + r * {BLOCK} + tid;
    const bool valid = e < n;
    const K key = (valid && kin) ? kin[e] : (K)0;
    const long long pv = valid ? (pin ? pin[e] : e) : 0;
    const unsigned digit = valid ? {_digit(w, from_payload)} : 256u;
    const unsigned peers = __match_any_sync(0xffffffffu, digit);
    const int rank = __popc(peers & ((1u << lane) - 1u));
    if (valid && rank == 0) s_w[warp][digit] = __popc(peers);
    __syncthreads();
    if (valid) {{
      long long pos = s_off[digit] + s_run[digit] + rank;
      for (int w = 0; w < warp; ++w) pos += s_w[w][digit];
      if (kout) kout[pos] = key;
      if (pout) pout[pos] = pv;
    }}
    __syncthreads();
    int sum = 0;
    for (int w = 0; w < {BLOCK // 32}; ++w) {{ sum += s_w[w][tid]; s_w[w][tid] = 0; }}
    s_run[tid] += sum;
    __syncthreads();
  }}
}}"""
    return Kernel(f"cpn_radix_scatter_{w}_{int(from_payload)}",
                  [("const char*", PTR), ("char*", PTR), ("const long long*", PTR),
                   ("long long*", PTR), ("const long long", I64), ("const int", I32),
                   ("const long long", I64), ("const long long*", PTR),
                   ("const long long", I64)], body)


def scan_block_kernel() -> Kernel:
    """Exclusive scan of each block's SCAN_ITEMS * BLOCK int64 values; block totals out."""
    body = f"""{{
  long long* a = p_0; const long long m = p_1; long long* sums = p_2;
  __shared__ long long s[{BLOCK}];
  const long long base = (long long)blockIdx.x * {BLOCK * SCAN_ITEMS} + threadIdx.x * {SCAN_ITEMS};
  long long v[{SCAN_ITEMS}], t = 0;
  for (int j = 0; j < {SCAN_ITEMS}; ++j) {{ v[j] = base + j < m ? a[base + j] : 0; t += v[j]; }}
  s[threadIdx.x] = t;
  __syncthreads();
  for (int off = 1; off < {BLOCK}; off <<= 1) {{
    const long long add = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
    __syncthreads();
    s[threadIdx.x] += add;
    __syncthreads();
  }}
  long long run = s[threadIdx.x] - t;
  for (int j = 0; j < {SCAN_ITEMS}; ++j) {{ if (base + j < m) a[base + j] = run; run += v[j]; }}
  if (threadIdx.x == {BLOCK - 1}) sums[blockIdx.x] = s[{BLOCK - 1}];
}}"""
    return Kernel("cpn_scan_block", [("long long*", PTR), ("const long long", I64),
                                     ("long long*", PTR)], body)


def scan_add_kernel() -> Kernel:
    body = f"""{{
  long long* a = p_0; const long long m = p_1; const long long* sums = p_2;
  const long long base = (long long)blockIdx.x * {BLOCK * SCAN_ITEMS};
  const long long add = sums[blockIdx.x];
  for (int j = threadIdx.x; j < {BLOCK * SCAN_ITEMS}; j += {BLOCK})
    if (base + j < m) a[base + j] += add;
}}"""
    return Kernel("cpn_scan_add", [("long long*", PTR), ("const long long", I64),
                                   ("const long long*", PTR)], body)


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


def scan(buf_ptr: int, m: int) -> None:
    """In-place exclusive scan of m int64 at buf_ptr."""
    per = BLOCK * SCAN_ITEMS
    nb = (m + per - 1) // per
    sums = DEV.alloc(nb * 8)
    DEV.launch(scan_block_kernel(), nb, BLOCK, [buf_ptr, m, sums.ptr])
    if nb > 1:
        scan(sums.ptr, nb)
        DEV.launch(scan_add_kernel(), nb, BLOCK, [buf_ptr, m, sums.ptr])


def radix(keys, pay, n, w, passes, want_pay=True):
    """Stable LSD passes over (keys buffer of n w-byte keys or None, payload buffer of n
    int64 or None = the identity).  ``passes``: [(shift, nrow or 0)], nrow > 0 takes the
    digit from payload // nrow.  Returns the final (keys, payload) buffers."""
    nb = (n + TILE - 1) // TILE
    hist = DEV.alloc(256 * nb * 8)
    kbuf = DEV.alloc(n * w) if keys is not None else None
    pbuf = DEV.alloc(n * 8) if pay is not None or want_pay else None
    pbuf2 = DEV.alloc(n * 8) if pbuf is not None else None
    for shift, nrow in passes:
        fp = nrow > 0
        DEV.launch(hist_kernel(w, fp), nb, BLOCK,
                   [keys.ptr if keys is not None else 0, pay.ptr if pay is not None else 0, n,
                    shift, nrow, hist.ptr, nb])
        scan(hist.ptr, 256 * nb)
        pout = pbuf
        DEV.launch(scatter_kernel(w, fp), nb, BLOCK,
                   [keys.ptr if keys is not None else 0, kbuf.ptr if kbuf is not None else 0,
                    pay.ptr if pay is not None else 0, pout.ptr if pout is not None else 0,
                    n, shift, nrow, hist.ptr, nb])
        if keys is not None:
            keys, kbuf = kbuf, keys
        if pout is not None:
            pay = pout
            pbuf, pbuf2 = pbuf2, pout
    return keys, pay


def _key_passes(w):
    return [(8 * b, 0) for b in range(w)]


def _row_passes(rows):
    bits = max(1, int(rows - 1).bit_length())
    return [(s, 0) for s in range(0, bits, 8)]


def _make_keys(src_ptr, n, dt, eqz):
    w = dt.itemsize
    keys = DEV.alloc(n * w)
    DEV.launch(keys_kernel(_kind(dt), w, eqz), _grid(n), BLOCK, [src_ptr, keys.ptr, n])
    return keys


def _permute(buf, w, p, n):
    """buf[p] (n elements of w bytes) as a new buffer (one gather)."""
    from .backend import _Temp

    dt = np.dtype(f"u{w}")
    out = DEV.alloc(n * w)
    indexed_copy("gather", _Temp(buf, (n,), dt), [_Temp(p, (n,), np.dtype(np.int64))], 0,
                 _Temp(out, (n,), dt))
    return out


def sort(src, values, indices, stable):
    """Sort each row of the C-contiguous (rows, n) array ``src``: values into ``values``
    and/or the stable argsort into ``indices`` (int64), both (rows, n) C-contiguous."""
    from .backend import _Temp

    rows, n = src._shape
    total = rows * n
    dt = src.dtype
    sp = ku.ptr(src)
    if dt.kind == "c":
        w = dt.itemsize // 2
        cls, pk, sk = DEV.alloc(total), DEV.alloc(total * w), DEV.alloc(total * w)
        DEV.launch(complex_keys_kernel(w), _grid(total), BLOCK,
                   [sp, cls.ptr, pk.ptr, sk.ptr, total])
        _, p = radix(sk, None, total, w, _key_passes(w))
        _, p = radix(_permute(pk, w, p, total), p, total, w, _key_passes(w))
        _, p = radix(_permute(cls, 1, p, total), p, total, 1, [(0, 0)])
        keys = None
    else:
        w = dt.itemsize
        eqz = indices is not None or stable
        keys = _make_keys(sp, total, dt, eqz)
        if indices is None and rows == 1 and not (stable and dt.kind == "f"):
            keys, _ = radix(keys, None, total, w, _key_passes(w), want_pay=False)
            DEV.launch(unkeys_kernel(_kind(dt), w), _grid(total), BLOCK, [keys.ptr, total])
            DEV.dtod(ku.ptr(values), keys.ptr, total * w)
            return
        keys, p = radix(keys, None, total, w, _key_passes(w))
    if rows > 1:
        _, p = radix(None, p, total, 8, [(s, n) for s, _ in _row_passes(rows)])
    if indices is not None:
        DEV.launch(mod_kernel(), _grid(total), BLOCK, [p.ptr, ku.ptr(indices), total, n])
    if values is not None:
        flat = _Temp(src._buf, (total,), dt, None, src._offset)
        out = _Temp(values._buf, (total,), dt, None, values._offset)
        indexed_copy("gather", flat, [_Temp(p, (total,), np.dtype(np.int64))], 0, out)


def searchsorted(a, v, side, out):
    """``out[...] = searchsorted(a, v, side)``: a 1-D sorted, v any shape, same dtype;
    out int64 C-contiguous of v's shape.  Complex values: NumPy on the host."""
    b = _backend()
    dt = a.dtype
    if dt.kind == "c":
        res = np.searchsorted(b.to_host(a), b.to_host(v), side=side)
        b.write_host(out, res.astype(np.int64))
        return
    w = dt.itemsize
    ac = _contig(a)
    vc = _contig(v)
    n, m = a._size, v._size
    ak = _make_keys(ku.ptr(ac), n, dt, True) if n else DEV.alloc(8)
    vk = _make_keys(ku.ptr(vc), m, dt, True)
    DEV.launch(searchsorted_kernel(w), _grid(m), BLOCK,
               [ak.ptr, n, vk.ptr, ku.ptr(out), m, int(side == "right")])


def _contig(a):
    from .backend import _Temp

    if a._c_contig:
        return a
    t = _Temp(DEV.alloc(a._size * a.dtype.itemsize), a._shape, a.dtype)
    _backend().copy(a, t)
    return t


def _backend():
    from .. import get

    return get()
