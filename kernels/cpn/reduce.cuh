// cupynum kernels: reductions, arg-reductions and scans (cupynum/_backends/cuda/reduction.py
// writes the extern "C" instantiations).
//
// Include after cpn/real.cuh or cpn/complex.cuh.  Everything is deterministic: a fixed
// launch shape gives a fixed combination order (no atomics at all).
//
// The iteration space is (M kept positions) x (R reduced positions).  Kept and reduced
// positions are decomposed over at most RED_MAXD dims each (innermost first), with byte
// strides of the input (and of the output for kept dims), passed by value in `rdims`.
//
// A Reducer policy says what is accumulated (`state`), how an element is loaded, how two
// states combine (associative; commutative up to the deterministic order used here) and
// how the final state is stored:
//   plain<Op, In, Acc, Out>   state = Acc (compute type), combine = Op{} (a table functor)
//   arg<Cmp, In, Acc>         state = (value, index); ties and NaN keep the lower index
// step(a, b) is combine for a thread's own running state a and a new non-empty element b
// of a higher index than any in a (the per-thread loops): for arg, a plain compare.
//   *_part<...>               the same, loading states written by a previous pass
//
// Kernels (one thread block = RED_BLOCK threads):
//   rows  a group (the block, or one warp) reduces a slice of one row: contiguous or
//         strided reduced dims, 16-byte vector loads when the row is contiguous
//   cols  each thread walks the reduced positions of one kept position (coalesced across
//         threads when the kept dims are innermost); also the sequential kernel for
//         non-reorderable ops (subtract.reduce ...)
//   scan_cols  sequential scan, one thread per line
//   scan_rows  block scan of a slice of one line with a carry from a previous pass, staged
//              through shared memory (coalesced loads and stores)
#pragma once

#ifndef RED_BLOCK
#define RED_BLOCK 256
#endif
#define RED_MAXD 4
#define RED_ITEMS 8

namespace cpn_red {

struct rdims {
  long long kshape[RED_MAXD];
  long long kin[RED_MAXD];
  long long kout[RED_MAXD];
  long long rshape[RED_MAXD];
  long long rin[RED_MAXD];
};

template <class T, int V> struct alignas(sizeof(T) * V) vec { T v[V]; };

// Element loads and stores; complex moves as two components (NumPy aligns complex arrays
// only to the component size).
template <class T> __device__ __forceinline__ T ld(const char* p) {
  return *reinterpret_cast<const T*>(p);
}
template <class T> __device__ __forceinline__ void st(char* p, const T& v) {
  *reinterpret_cast<T*>(p) = v;
}
#ifdef CPN_RED_COMPLEX
template <> __device__ __forceinline__ cpn::complex<float> ld(const char* p) {
  const float* q = reinterpret_cast<const float*>(p);
  return cpn::complex<float>(q[0], q[1]);
}
template <> __device__ __forceinline__ cpn::complex<double> ld(const char* p) {
  const double* q = reinterpret_cast<const double*>(p);
  return cpn::complex<double>(q[0], q[1]);
}
template <> __device__ __forceinline__ void st(char* p, const cpn::complex<float>& v) {
  float* q = reinterpret_cast<float*>(p);
  q[0] = v.re;
  q[1] = v.im;
}
template <> __device__ __forceinline__ void st(char* p, const cpn::complex<double>& v) {
  double* q = reinterpret_cast<double*>(p);
  q[0] = v.re;
  q[1] = v.im;
}
#endif

// Offsets of kept position m (input and output) and of reduced position r (input).
__device__ __forceinline__ void kept_offsets(const rdims& g, int kd, long long m, long long& oi,
                                             long long& oo) {
  oi = 0;
  oo = 0;
#pragma unroll
  for (int d = 0; d < RED_MAXD; ++d) {
    if (d >= kd) break;
    long long c = m;
    if (d + 1 < kd) {
      const long long q = m / g.kshape[d];
      c = m - q * g.kshape[d];
      m = q;
    }
    oi += c * g.kin[d];
    oo += c * g.kout[d];
  }
}
__device__ __forceinline__ long long red_offset(const rdims& g, int rd, long long r) {
  if (rd == 1) return r * g.rin[0];
  long long o = 0;
#pragma unroll
  for (int d = 0; d < RED_MAXD; ++d) {
    if (d >= rd) break;
    long long c = r;
    if (d + 1 < rd) {
      const long long q = r / g.rshape[d];
      c = r - q * g.rshape[d];
      r = q;
    }
    o += c * g.rin[d];
  }
  return o;
}

// --- reducers ------------------------------------------------------------------------------

template <class T> struct compute { typedef T type; };
template <> struct compute<cpn::half> { typedef float type; };

template <class Op, class In, class Acc, class Out> struct plain {
  typedef typename compute<Acc>::type C;
  typedef C state;
  typedef In in_t;
  C ident;
  __device__ __forceinline__ state empty() const { return ident; }
  __device__ __forceinline__ state from(const In& x, long long) const {
    // input -> loop dtype (NumPy casts the operand to the loop) -> compute type
    return cpn::cast<C>(cpn::cast<Acc>(x));
  }
  __device__ __forceinline__ state load(const char* p, long long r) const {
    return from(ld<In>(p), r);
  }
  __device__ __forceinline__ state combine(const state& a, const state& b) const {
    // float16 sums and products accumulate in float (NumPy's pairwise sum does too; its
    // products round every step, less accurately); other float16 ops round after every
    // step, as NumPy's loops do, so that sequential results agree bit for bit
    if constexpr (cpn::tt::is_same_v<Acc, cpn::half> && !cpn::tt::is_same_v<Op, cpn::add> &&
                  !cpn::tt::is_same_v<Op, cpn::multiply>)
      return cpn::cast<C>(cpn::cast<Acc>(Op{}(a, b)));
    else
      return (C)Op{}(a, b);
  }
  __device__ __forceinline__ void step(state& a, const state& b) const { a = combine(a, b); }
  __device__ __forceinline__ void store(char* p, const state& s) const {
    st<Out>(p, cpn::cast<Out>(cpn::cast<Acc>(s)));
  }
};

// A previous pass's partial states as the input (same combine; loads a C directly).
template <class Op, class In, class Acc, class Out> struct plain_part : plain<Op, In, Acc, Out> {
  typedef plain<Op, In, Acc, Out> base;
  typedef typename base::state state;
  typedef state in_t;
  __device__ __forceinline__ state from(const state& x, long long) const { return x; }
  __device__ __forceinline__ state load(const char* p, long long) const {
    return ld<state>(p);
  }
};

// arg-reductions: Cmp::better(b, a) is true when value b beats value a strictly.
struct argmax_cmp {
  template <class T> __device__ __forceinline__ static bool nan(const T& a) {
    return cpn::isnan{}(a);
  }
  template <class T> __device__ __forceinline__ static bool better(const T& b, const T& a) {
    if (nan(a)) return false;
    if (nan(b)) return true;
    return cpn::greater{}(b, a);
  }
};
struct argmin_cmp {
  template <class T> __device__ __forceinline__ static bool nan(const T& a) {
    return cpn::isnan{}(a);
  }
  template <class T> __device__ __forceinline__ static bool better(const T& b, const T& a) {
    if (nan(a)) return false;
    if (nan(b)) return true;
    return cpn::less{}(b, a);
  }
};

template <class C> struct argstate {
  C v;
  long long i;  // -1: empty
};

template <class Cmp, class In, class Acc, class Out> struct arg {
  typedef typename compute<Acc>::type C;
  typedef argstate<C> state;
  typedef In in_t;
  C ident;  // unused
  __device__ __forceinline__ state from(const In& x, long long r) const {
    state s;
    s.v = cpn::cast<C>(cpn::cast<Acc>(x));
    s.i = r;
    return s;
  }
  __device__ __forceinline__ state empty() const {
    state s;
    s.v = ident;
    s.i = -1;
    return s;
  }
  __device__ __forceinline__ state load(const char* p, long long r) const {
    state s;
    s.v = cpn::cast<C>(cpn::cast<Acc>(ld<In>(p)));
    s.i = r;
    return s;
  }
  __device__ __forceinline__ state combine(const state& a, const state& b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    if (Cmp::better(b.v, a.v)) return b;
    if (Cmp::better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;  // equal (or both NaN): the first occurrence
  }
  __device__ __forceinline__ void step(state& a, const state& b) const {
    // b non-empty, b.i > a.i: b wins only when strictly better (first max, first NaN)
    if (a.i < 0 || Cmp::better(b.v, a.v)) a = b;
  }
  __device__ __forceinline__ void store(char* p, const state& s) const {
    st<Out>(p, (Out)s.i);
  }
};
template <class Cmp, class In, class Acc, class Out> struct arg_part : arg<Cmp, In, Acc, Out> {
  typedef arg<Cmp, In, Acc, Out> base;
  typedef typename base::state state;
  typedef state in_t;
  __device__ __forceinline__ state from(const state& x, long long) const { return x; }
  __device__ __forceinline__ state load(const char* p, long long) const {
    return ld<state>(p);
  }
  __device__ __forceinline__ void step(state& a, const state& b) const {
    a = base::combine(a, b);  // partial states: the full combine
  }
};

// --- group reduction in shared memory (fixed tree: deterministic) -------------------------

template <class R, int G>
__device__ __forceinline__ typename R::state group_reduce(const R& red, typename R::state v,
                                                          typename R::state* sm, int lane) {
  sm[lane] = v;
  if (G > 32) __syncthreads(); else __syncwarp();
#pragma unroll
  for (int s = G / 2; s > 0; s >>= 1) {
    if (lane < s) sm[lane] = red.combine(sm[lane], sm[lane + s]);
    if (G > 32) __syncthreads(); else __syncwarp();
  }
  typename R::state out = sm[0];
  if (G > 32) __syncthreads(); else __syncwarp();  // sm may be reused right after
  return out;
}

// flags
#define RED_FINAL 1     // write the result through R::store (else: a partial state)
#define RED_CONTIG 2    // one reduced dim of stride sizeof(In) (vector loads allowed)
#define RED_INIT 4      // combine `init` first (user `initial`; sequential ops: start value)
#define RED_SEQ 8       // sequential in r order, no identity (non-reorderable ops): cols only

// rows: group g (block, or warp of the block when G == 32) handles (m, s) = one slice of
// `chunk` reduced positions of kept position m; S slices per row.
template <class R, int G>
__device__ void rows(const R& red, const char* in, char* out, typename R::state init,
                     const rdims& g, long long M, long long R_, int kd, int rd, long long chunk,
                     int S, int flags) {
  typedef typename R::state state;
  __shared__ alignas(16) unsigned char smraw[RED_BLOCK * sizeof(state)];
  state* small = reinterpret_cast<state*>(smraw);
  const int per = RED_BLOCK / G;  // groups per block
  const int lane = threadIdx.x % G;
  const int grp = threadIdx.x / G;
  state* sm = small + grp * G;
  const long long gid = (long long)blockIdx.x * per + grp;
  const long long m = gid / S;
  const int s = (int)(gid - m * S);
  if (m >= M) return;  // whole group leaves together (G == 32), or the whole block
  long long oi, oo;
  kept_offsets(g, kd, m, oi, oo);
  long long r0 = (long long)s * chunk;
  long long r1 = r0 + chunk < R_ ? r0 + chunk : R_;
  state acc = red.empty();
  const char* base = in + oi;
  if (flags & RED_CONTIG) {
    const long long n = r1 > r0 ? r1 - r0 : 0;
    const char* p = base + r0 * g.rin[0];
    const long long isz = g.rin[0];
    // vector path: 16-byte loads of in_t elements (power-of-two sizes below 16 bytes)
    typedef typename R::in_t T;
    constexpr int V = (sizeof(T) < 16 && 16 % sizeof(T) == 0) ? (int)(16 / sizeof(T)) : 1;
    long long head = n;
    if (V > 1 && isz == (long long)sizeof(T) && (((unsigned long long)p) % sizeof(T)) == 0) {
      head = (long long)(((16 - ((unsigned long long)p % 16)) % 16) / sizeof(T));
      if (head > n) head = n;
    }
    for (long long i = lane; i < head; i += G) red.step(acc, red.load(p + i * isz, r0 + i));
    long long done = head;
    if (V > 1 && head < n) {
      typedef vec<T, (V > 1 ? V : 1)> VT;
      const long long nv = (n - head) / V;
      const VT* pv = reinterpret_cast<const VT*>(p + head * isz);
      state a2 = red.empty();
      // four 16-byte loads in flight per thread, then their elements into two chains
      long long j = lane;
#pragma unroll 1
      for (; j + 3 * G < nv; j += 4 * G) {
        VT v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = pv[j + u * G];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const long long rb = r0 + head + (j + u * G) * V;
#pragma unroll
          for (int k = 0; k < V; ++k) {
            if (u & 1) red.step(a2, red.from(v[u].v[k], rb + k));
            else red.step(acc, red.from(v[u].v[k], rb + k));
          }
        }
      }
#pragma unroll 1
      for (; j < nv; j += G) {
        const VT v1 = pv[j];
        const long long rb = r0 + head + j * V;
#pragma unroll
        for (int k = 0; k < V; ++k) red.step(acc, red.from(v1.v[k], rb + k));
      }
      acc = red.combine(acc, a2);
      done = head + nv * V;
    }
    for (long long i = done + lane; i < n; i += G) red.step(acc, red.load(p + i * isz, r0 + i));
  } else {
    state a2 = red.empty();
    long long r = r0 + lane;
#pragma unroll 1
    for (; r + G < r1; r += 2 * G) {
      const state x1 = red.load(base + red_offset(g, rd, r), r);
      const state x2 = red.load(base + red_offset(g, rd, r + G), r + G);
      red.step(acc, x1);
      red.step(a2, x2);
    }
    if (r < r1) red.step(acc, red.load(base + red_offset(g, rd, r), r));
    acc = red.combine(acc, a2);
  }
  acc = group_reduce<R, G>(red, acc, sm, lane);
  if (lane == 0) {
    if (flags & RED_FINAL) {
      if (flags & RED_INIT) acc = red.combine(init, acc);
      red.store(out + oo, acc);
    } else {
      st<state>(out + (m * S + s) * (long long)sizeof(state), acc);
    }
  }
}

// cols: thread i (over blockIdx.x * RED_BLOCK + threadIdx.x) is kept position m, grid y is
// the slice s of `chunk` reduced positions; partials are laid out [S][M].
template <class R>
__device__ void cols(const R& red, const char* in, char* out, typename R::state init,
                     const rdims& g, long long M, long long R_, int kd, int rd, long long chunk,
                     int S, int flags) {
  typedef typename R::state state;
  const long long m = (long long)blockIdx.x * RED_BLOCK + threadIdx.x;
  if (m >= M) return;
  const int s = blockIdx.y;
  long long oi, oo;
  kept_offsets(g, kd, m, oi, oo);
  const char* base = in + oi;
  const long long r0 = (long long)s * chunk;
  const long long r1 = r0 + chunk < R_ ? r0 + chunk : R_;
  state acc;
  if (flags & RED_SEQ) {
    long long r = r0;
    if (flags & RED_INIT) {
      acc = init;
    } else {
      acc = red.load(base + red_offset(g, rd, r), r);
      ++r;
    }
#pragma unroll 1
    for (; r < r1; ++r) acc = red.combine(acc, red.load(base + red_offset(g, rd, r), r));
    red.store(out + oo, acc);
    return;
  }
  state a0 = red.empty(), a1 = red.empty(), a2 = red.empty(), a3 = red.empty();
  long long r = r0;
  if (rd == 1) {
    const long long st1 = g.rin[0];
    const char* p = base + r0 * st1;
#pragma unroll 1
    for (; r + 7 < r1; r += 8, p += 8 * st1) {  // eight loads in flight per thread
      state x[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) x[u] = red.load(p + u * st1, r + u);
      red.step(a0, x[0]);
      red.step(a0, x[4]);
      red.step(a1, x[1]);
      red.step(a1, x[5]);
      red.step(a2, x[2]);
      red.step(a2, x[6]);
      red.step(a3, x[3]);
      red.step(a3, x[7]);
    }
  }
  for (; r < r1; ++r) red.step(a0, red.load(base + red_offset(g, rd, r), r));
  acc = red.combine(red.combine(a0, a1), red.combine(a2, a3));
  if (flags & RED_FINAL) {
    if (flags & RED_INIT) acc = red.combine(init, acc);
    red.store(out + oo, acc);
  } else {
    st<state>(out + ((long long)s * M + m) * (long long)sizeof(state), acc);
  }
}

// --- scans -----------------------------------------------------------------------------------
// scan_cols: one thread per line m, sequential inclusive scan over r (any op).  Output
// offsets: the kept dims' kout strides, and ostride per step.  With RED_INIT the line
// starts from carries[m] (a state array, C order over m), used by the 3-phase scan for
// its partial sums; with RED_FINAL clear, states are stored (a partial-sum pass).
template <class R>
__device__ void scan_cols(const R& red, const char* in, char* out, const rdims& g,
                          long long M, long long R_, int kd, int rd, long long ostride,
                          int flags) {
  typedef typename R::state state;
  const long long m = (long long)blockIdx.x * RED_BLOCK + threadIdx.x;
  if (m >= M) return;
  long long oi, oo;
  kept_offsets(g, kd, m, oi, oo);
  const char* base = in + oi;
  char* ob = out + oo;
  state acc = red.load(base, 0);
  long long r = 0;
#pragma unroll 1
  for (;;) {
    if (flags & RED_FINAL) red.store(ob + r * ostride, acc);
    else st<state>(ob + r * ostride, acc);
    if (++r >= R_) break;
    acc = red.combine(acc, red.load(base + red_offset(g, rd, r), r));
  }
}

// Warp shuffle of a state: integers narrower than 32 bits through int, others as 32-bit
// words (as CUB's ShuffleUp; states are 4-byte aligned multiples of 4 bytes).
template <class T> __device__ __forceinline__ T shfl_up(const T& v, unsigned d) {
  if constexpr (sizeof(T) < 4) {
    return (T)__shfl_up_sync(0xffffffffu, (int)v, d);
  } else {
    static_assert(sizeof(T) % 4 == 0, "state size");
    T r = v;
    unsigned* w = reinterpret_cast<unsigned*>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 4); ++i) w[i] = __shfl_up_sync(0xffffffffu, w[i], d);
    return r;
  }
}

// Shared-memory tile index with one pad slot per 32 (conflict-free strided reads).
#define RED_SPAD(i) ((i) + ((i) >> 5))

// scan_rows: block (m, s) scans positions [s*chunk, (s+1)*chunk) of line m, starting from
// carries[m*S + s - 1] (inclusive partial sums of the previous slices) when s > 0.  Tiles
// of RED_BLOCK * RED_ITEMS elements staged through shared memory: coalesced loads
// (element k*RED_BLOCK + t by thread t), each thread scans RED_ITEMS consecutive elements,
// warps scan the thread totals with shuffles, the block combines the warp totals in order,
// and the results go back through shared memory for coalesced stores.  Positions past the
// slice hold empty(); they only ever feed results that are not stored.
template <class R>
__device__ void scan_rows(const R& red, const char* in, char* out, const char* carries,
                          const rdims& g, long long M, long long R_, int kd, int rd,
                          long long ostride, long long chunk, int S) {
  typedef typename R::state state;
  constexpr int N = RED_BLOCK * RED_ITEMS;
  constexpr int NW = RED_BLOCK / 32;
  __shared__ alignas(16) unsigned char smraw[RED_SPAD(N) * sizeof(state)];
  __shared__ alignas(16) unsigned char wraw[NW * sizeof(state)];
  state* tile = reinterpret_cast<state*>(smraw);
  state* wsum = reinterpret_cast<state*>(wraw);
  const long long m = blockIdx.x / S;
  const int s = (int)(blockIdx.x - m * S);
  const int t = threadIdx.x;
  const int lane = t & 31, w = t >> 5;
  long long oi, oo;
  kept_offsets(g, kd, m, oi, oo);
  const char* base = in + oi;
  char* ob = out + oo;
  const long long r0 = (long long)s * chunk;
  const long long r1 = r0 + chunk < R_ ? r0 + chunk : R_;
  bool have = s > 0;
  state carry = red.empty();
  if (have) carry = ld<state>(carries + (m * S + s - 1) * (long long)sizeof(state));
#pragma unroll 1
  for (long long t0 = r0; t0 < r1; t0 += N) {
    const int n = r1 - t0 < (long long)N ? (int)(r1 - t0) : N;  // valid positions in the tile
#pragma unroll
    for (int k = 0; k < RED_ITEMS; ++k) {
      const int i = k * RED_BLOCK + t;
      tile[RED_SPAD(i)] = i < n ? red.load(base + red_offset(g, rd, t0 + i), t0 + i)
                                : red.empty();
    }
    __syncthreads();
    state v[RED_ITEMS];
    v[0] = tile[RED_SPAD(t * RED_ITEMS)];
#pragma unroll
    for (int k = 1; k < RED_ITEMS; ++k)
      v[k] = red.combine(v[k - 1], tile[RED_SPAD(t * RED_ITEMS + k)]);
    // inclusive scan of the thread totals within the warp (fixed tree)
    state inc = v[RED_ITEMS - 1];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const state y = shfl_up(inc, d);
      if (lane >= d) inc = red.combine(y, inc);
    }
    const state ex = shfl_up(inc, 1);  // this thread's exclusive prefix in its warp (lane > 0)
    if (lane == 31) wsum[w] = inc;
    __syncthreads();  // wsum written; every thread is done reading tile
    // the warps before this one, and the whole tile, combined left to right
    state tot = wsum[0];
    state wp = tot;
#pragma unroll
    for (int j = 1; j < NW; ++j) {
      if (j == w) wp = tot;
      tot = red.combine(tot, wsum[j]);
    }
    bool hp = have;
    state pre = carry;
    if (w > 0) {
      pre = hp ? red.combine(pre, wp) : wp;
      hp = true;
    }
    if (lane > 0) {
      pre = hp ? red.combine(pre, ex) : ex;
      hp = true;
    }
#pragma unroll
    for (int k = 0; k < RED_ITEMS; ++k)
      tile[RED_SPAD(t * RED_ITEMS + k)] = hp ? red.combine(pre, v[k]) : v[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < RED_ITEMS; ++k) {
      const int i = k * RED_BLOCK + t;
      if (i < n) red.store(ob + (t0 + i) * ostride, tile[RED_SPAD(i)]);
    }
    carry = have ? red.combine(carry, tot) : tot;
    have = true;
    __syncthreads();  // tile and wsum are rewritten by the next tile
  }
}

}  // namespace cpn_red
