"""CUDA gather/scatter (advanced indexing), compaction (nonzero) and the tiled transpose.

Gather and scatter are one kernel family, ``cpn_ix_<mode>_u<unit>_k<K>``: the iteration
space is the result's shape (collapsed like an elementwise op), and per dimension three
byte strides move three cursors: the data (0 on the broadcast index dims), the other
operand (result of a gather, values of a scatter) and each of the K int64 index arrays
(0 outside the index dims).  An index is wrapped if negative and multiplied by its axis's
byte stride.  Elements move as raw units (like the bit copy), so one kernel serves every
dtype of that size.  Out-of-bounds indices set a flag (and record which index array and
value) that the caller reads once after the launch: that read is the sync point NumPy's
IndexError needs.  Scatters check first (a ``check`` pass over the index arrays) so that an
error leaves the target untouched, as in NumPy.

Repeated scatter targets: every thread writes a whole unit (<= 8 bytes, or 16 for aligned
16-byte elements), so each target ends with one of the values written to it.
"""
from __future__ import annotations

import numpy as np

from . import kernels_util as ku
from .kernels_util import DEV, I32, I64, PTR, Kernel, arr_dtype

MAXD = 8  # dims of the iteration space after collapse (more: the host does it)
MAXK = 4  # index arrays per gather/scatter (more: the host does it)
BLOCK = 256


# --- gather / scatter ------------------------------------------------------------------------
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
        f"      if (d + 1 < ndim) {{ const long long q = rem / g.v[d]; c = rem - q * g.v[d]; rem = q; }}",
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
            "        if (atomicCAS((unsigned long long*)flag, 0ull, 1ull) == 0ull) {"
            " flag[1] = j; flag[2] = raw; }",
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
    return Kernel(f"cpn_ix_{mode}_u{unit}_k{k}", params, "\n".join(lines))


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
    from .elementwise import collapse

    return collapse(shape, strides_lists)


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
    unit = _unit(size, (ku.ptr(data), ku.ptr(other)), sd + so + axs)
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
    g += axn + axs + [ku.ptr(ix) for ix in indices]
    kern = ix_kernel(mode, unit, k)
    flag = _FLAG.get()
    grid = max(1, min((total + BLOCK - 1) // BLOCK, DEV.sm_count() * 32))
    DEV.launch(kern, grid, BLOCK, [ku.ptr(data), ku.ptr(other), g, total, ndim, flag.ptr])
    return True


class _Flag:
    """A small device buffer of 3 int64 (set?, index array, value), zeroed before use."""

    def __init__(self):
        self.buf = None

    def get(self):
        if self.buf is None:
            self.buf = DEV.alloc(64)
        return self.buf

    def reset(self):
        DEV.memset(self.get().ptr, 0, 24)

    def read(self):
        host = np.zeros(3, np.int64)
        DEV.dtoh(host, self.get().ptr)  # the sync point
        return None if not host[0] else (int(host[1]), int(host[2]))


_FLAG = _Flag()


def check_indices(indices, sizes):
    """(j, value) of an out-of-bounds index, or None (one launch + one read)."""
    _FLAG.reset()
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
        g += [n, 0, ku.ptr(ix)]
        grid = max(1, min((total + BLOCK - 1) // BLOCK, DEV.sm_count() * 32))
        DEV.launch(kern, grid, BLOCK, [0, 0, g, total, ndim, _FLAG.get().ptr])
        bad = _FLAG.read()
        if bad is not None:
            return j, bad[1]
    return None


def _host_view(ix):
    return _backend().to_host(ix)


def _backend():
    from .. import get

    return get()


def gather(src, indices, axis, out, check):
    if check:
        _FLAG.reset()
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
    b = _backend()
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


# --- compaction: flat indices of the True elements of a C-contiguous bool array -----------------
TILE_ITEMS = 16  # elements per thread per block: a block handles BLOCK * TILE_ITEMS


def _count_kernel() -> Kernel:
    body = f"""{{
  const unsigned char* m = p_0; const long long n = p_1; long long* counts = p_2;
  __shared__ int s_cnt;
  if (threadIdx.x == 0) s_cnt = 0;
  __syncthreads();
  const long long base = (long long)blockIdx.x * {BLOCK * TILE_ITEMS};
  int c = 0;
  for (int r = 0; r < {TILE_ITEMS}; ++r) {{
    const long long e = base + r * {BLOCK} + threadIdx.x;
    if (e < n && m[e]) ++c;
  }}
  if (c) atomicAdd(&s_cnt, c);
  __syncthreads();
  if (threadIdx.x == 0) counts[blockIdx.x] = s_cnt;
}}"""
    return Kernel("cpn_nz_count", [("const unsigned char*", PTR), ("const long long", I64),
                                   ("long long*", PTR)], body)


def _write_kernel() -> Kernel:
    body = f"""{{
  const unsigned char* m = p_0; const long long n = p_1; const long long* offsets = p_2;
  long long* out = p_3;
  __shared__ int s_scan[{BLOCK}];
  const long long base = (long long)blockIdx.x * {BLOCK * TILE_ITEMS};
  long long run = offsets[blockIdx.x];
  for (int r = 0; r < {TILE_ITEMS}; ++r) {{
    const long long e = base + r * {BLOCK} + threadIdx.x;
    const int f = (e < n && m[e]) ? 1 : 0;
    s_scan[threadIdx.x] = f;
    __syncthreads();
    for (int off = 1; off < {BLOCK}; off <<= 1) {{  // inclusive Hillis-Steele scan
      const int add = threadIdx.x >= off ? s_scan[threadIdx.x - off] : 0;
      __syncthreads();
      s_scan[threadIdx.x] += add;
      __syncthreads();
    }}
    if (f) out[run + s_scan[threadIdx.x] - 1] = e;
    run += s_scan[{BLOCK - 1}];
    __syncthreads();
  }}
}}"""
    return Kernel("cpn_nz_write", [("const unsigned char*", PTR), ("const long long", I64),
                                   ("const long long*", PTR), ("long long*", PTR)], body)


def flatnonzero(mask):
    """(buffer of int64 flat indices, count) for a C-contiguous bool array (one sync)."""
    n = mask._size
    nb = (n + BLOCK * TILE_ITEMS - 1) // (BLOCK * TILE_ITEMS)
    if n == 0:
        return DEV.alloc(8), 0
    counts = DEV.alloc(nb * 8)
    DEV.launch(_count_kernel(), nb, BLOCK, [ku.ptr(mask), n, counts.ptr])
    host = np.empty(nb, np.int64)
    DEV.dtoh(host, counts.ptr)  # the sync point: the count decides the result's shape
    offsets = np.zeros(nb, np.int64)
    np.cumsum(host[:-1], out=offsets[1:])
    total = int(host.sum())
    out = DEV.alloc(total * 8)
    if total:
        DEV.htod(counts.ptr, offsets)
        DEV.launch(_write_kernel(), nb, BLOCK, [ku.ptr(mask), n, counts.ptr, out.ptr])
    return out, total


# --- tiled transpose copy ---------------------------------------------------------------------
TILE = 32
ROWS = 8


def _transpose_kernel(unit: int) -> Kernel:
    u = ku.UNIT_CTYPE[unit]
    body = f"""{{
  const char* src = p_0; char* dst = p_1; const cpn_arr<9>& g = p_2;
  // g: R, C, B, src stride of c, src stride of b, dst stride of r, dst stride of b,
  //    src stride of r (= unit), dst stride of c (= unit)
  const long long R = g.v[0], C = g.v[1], B = g.v[2];
  __shared__ {u} tile[{TILE}][{TILE + 1}];
  const long long r0 = (long long)blockIdx.y * {TILE}, c0 = (long long)blockIdx.x * {TILE};
  for (long long b = blockIdx.z; b < B; b += gridDim.z) {{
    const char* s = src + b * g.v[4];
    char* d = dst + b * g.v[6];
    for (int k = 0; k < {TILE}; k += {ROWS}) {{
      const long long r = r0 + threadIdx.x, c = c0 + threadIdx.y + k;
      if (r < R && c < C) tile[threadIdx.y + k][threadIdx.x] = *(const {u}*)(s + r * g.v[7] + c * g.v[3]);
    }}
    __syncthreads();
    for (int k = 0; k < {TILE}; k += {ROWS}) {{
      const long long c = c0 + threadIdx.x, r = r0 + threadIdx.y + k;
      if (r < R && c < C) *({u}*)(d + r * g.v[5] + c * g.v[8]) = tile[threadIdx.x][threadIdx.y + k];
    }}
    __syncthreads();
  }}
}}"""
    return Kernel(f"cpn_transpose_u{unit}", [("const char*", PTR), ("char*", PTR),
                                             ("const cpn_arr<9>", arr_dtype(9))], body)


def try_transpose_copy(src, dst) -> bool:
    """Same-dtype copy whose innermost source and destination axes differ, through 32x32
    shared-memory tiles (both sides coalesced).  False when the layout is not of that kind
    (the caller takes the elementwise copy)."""
    size = dst.dtype.itemsize
    if size not in (1, 2, 4, 8) or dst._size < TILE * TILE:
        return False
    shape, (ss, ds) = _collapse(dst._shape, [src._strides, dst._strides])
    nd = len(shape)
    if nd < 2 or nd > 3:
        return False
    if ds[-1] != size or ss[-1] == size:
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
    gy = (R + TILE - 1) // TILE
    if gy > 65535:
        return False
    g = [R, C, B, ss[c], ss[bi] if bi is not None else 0, ds[r],
         ds[bi] if bi is not None else 0, ss[r], ds[c]]
    grid = ((C + TILE - 1) // TILE, gy, min(B, 65535))
    DEV.launch(_transpose_kernel(size), grid, (TILE, ROWS), [ku.ptr(src), ku.ptr(dst), g])
    return True
