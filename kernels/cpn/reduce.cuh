// cupynum kernels: reductions, arg-reductions and scans (cupynum/_backends/cuda/reduction.py
// writes the extern "C" instantiations).
//
// Include after cpn/real.cuh or cpn/complex.cuh.  Everything is deterministic: a fixed
// launch shape gives a fixed combination order (the only atomic is scan_chain's tile
// counter, and its look-back order does not change the bits: see scan_chain).
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
//   scan_blocks  scan of lines whose kept positions are innermost (columns): a thread a
//              line, the lines split into chunks, coalesced rows
//   scan_chain single-pass scan of tiles with decoupled look-back (Merrill & Garland)
// Reducers also include sqdev<In, Acc, Out> (|x - mean|^2 summed, for var/std; bind()
// gives it the kept position's mean), and prologue<B, P>: reducer B over elements that a
// fused elementwise expression P computes instead of loading (fusion: (a * b).sum()).
// Reducers load elements through load(p, r) and, in rows' vector path, vld(p).
#pragma once

#ifndef RED_BLOCK
#define RED_BLOCK 256
#endif
#define RED_MAXD 4
// arg-reductions over contiguous rows: the vector fast path (rows; reduction.py ARG_FAST)
// and its 16-byte loads in flight per thread (ARG_LOADS)
#ifndef RED_ARG_FAST
#define RED_ARG_FAST 1
#endif
#ifndef RED_ARG_LOADS
#define RED_ARG_LOADS 4
#endif

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
  typedef Out out_t;
  C ident;
  __device__ __forceinline__ state empty() const { return ident; }
  __device__ __forceinline__ state from(const In& x, long long) const {
    // input -> loop dtype (NumPy casts the operand to the loop) -> compute type
    return cpn::cast<C>(cpn::cast<Acc>(x));
  }
  __device__ __forceinline__ state load(const char* p, long long r) const {
    return from(ld<In>(p), r);
  }
  // rows' vector of elements at p (a 16-byte load); a prologue computes them instead
  template <class VT> __device__ __forceinline__ VT vld(const VT* p) const { return *p; }
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
  typedef Cmp cmp;
  typedef argstate<C> state;
  typedef In in_t;
  typedef Out out_t;
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
  template <class VT> __device__ __forceinline__ VT vld(const VT* p) const { return *p; }
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
// is_arg<R>: R is an arg reducer over elements (not partial states): rows' vector fast path
template <class R> struct is_arg { static constexpr bool value = false; };
template <class Cmp, class In, class Acc, class Out> struct is_arg<arg<Cmp, In, Acc, Out>> {
  static constexpr bool value = true;
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

// sum of squared deviations (var/std): element x -> |x - mu|^2 in the input's arithmetic
// (NumPy: x = a - mean; x*x, or re*re + im*im for complex), summed in Acc.  `mu` is the
// mean of the kept position, bound by bind() from `mean` (laid out as the output, with
// elements of type In: offset oo / sizeof(Out) * sizeof(In)).
template <class In, class Acc, class Out> struct sqdev : plain<cpn::add, Acc, Acc, Out> {
  typedef plain<cpn::add, Acc, Acc, Out> base;
  typedef typename base::state state;
  typedef In in_t;
  const char* mean;
  In mu;
  __device__ __forceinline__ state from(const In& x, long long) const {
    const In d = x - mu;
    if constexpr (cpn::tt::is_complex_v<In>) {
      const auto r2 = d.re * d.re;
      const auto i2 = d.im * d.im;
      return cpn::cast<state>(cpn::cast<Acc>(r2 + i2));
    } else {
      return cpn::cast<state>(cpn::cast<Acc>(d * d));
    }
  }
  __device__ __forceinline__ state load(const char* p, long long r) const {
    return from(ld<In>(p), r);
  }
};

// bind(red, oo): per-kept-position set-up of a reducer (the output offset oo is known);
// only sqdev has any.
template <class R> __device__ __forceinline__ void bind(R&, long long) {}
template <class In, class Acc, class Out>
__device__ __forceinline__ void bind(sqdev<In, Acc, Out>& r, long long oo) {
  r.mu = ld<In>(r.mean + oo / (long long)sizeof(Out) * (long long)sizeof(In));
}

// --- reductions with an elementwise prologue (fusion: (a * b).sum() as one kernel) ----------
// The reduced array is a pending elementwise expression, never stored.  The kernels walk the
// array it would be (its shape, strides and alignment) at a fake address, RED_VBASE plus the
// view's byte offset, and `prologue<B, P>` computes each element where B, the reducer of the
// stored array (plain, arg or sqdev over P::value_t), loads it: the elements, their order and
// the combinations are those of the reduction of the stored array, bit for bit.  P (written
// per expression by cuda/fused_reduction.py) gives value_t (the expression's dtype), at(i)
// (element i of that array, in its memory order) and atv(i, v) (elements i .. i + V - 1).
#define RED_VBASE 256ull

// The prologue's operand layout when its operands are not all dense like the array: shapes
// (innermost first) and byte strides per array operand, over the array's memory order.
template <int NA> struct pdims {
  long long shape[RED_MAXD];
  long long st[NA][RED_MAXD];
};

// byte offsets o[a] of element i (memory order, nd >= 1 dims) in each array operand
template <int NA>
__device__ __forceinline__ void poffsets(const pdims<NA>& d, int nd, long long i,
                                         long long (&o)[NA]) {
#pragma unroll
  for (int a = 0; a < NA; ++a) o[a] = 0;
#pragma unroll
  for (int k = 0; k < RED_MAXD; ++k) {
    long long c = i;
    if (k + 1 < nd) {
      const long long q = i / d.shape[k];
      c = i - q * d.shape[k];
      i = q;
    }
#pragma unroll
    for (int a = 0; a < NA; ++a) o[a] += c * d.st[a][k];
    if (k + 1 >= nd) break;
  }
}

// V consecutive elements of T at p: vector loads of up to 16 bytes when p is aligned for
// them, else one by one
template <class T, int V> __device__ __forceinline__ void ldn(const char* p, T (&out)[V]) {
  constexpr int W = sizeof(T) * V <= 16 ? V : (16 % sizeof(T) == 0 ? (int)(16 / sizeof(T)) : 1);
  if constexpr (W > 1) {
    if ((unsigned long long)p % (sizeof(T) * W) == 0) {
#pragma unroll
      for (int q = 0; q < V / W; ++q) {
        const vec<T, W> x = reinterpret_cast<const vec<T, W>*>(p)[q];
#pragma unroll
        for (int k = 0; k < W; ++k) out[q * W + k] = x.v[k];
      }
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < V; ++k) out[k] = ld<T>(p + k * (long long)sizeof(T));
}

template <class B, class P> struct prologue : B {
  typedef typename B::state state;
  typedef typename P::value_t In;
  P pro;
  __device__ __forceinline__ long long index(const char* p) const {
    return (long long)(((unsigned long long)p - RED_VBASE) / sizeof(In));
  }
  __device__ __forceinline__ state load(const char* p, long long r) const {
    return this->from(pro.at(index(p)), r);
  }
  template <class VT> __device__ __forceinline__ VT vld(const VT* p) const {
    VT v;
    pro.atv(index(reinterpret_cast<const char*>(p)), v.v);
    return v;
  }
};
template <class B, class P> struct is_arg<prologue<B, P>> : is_arg<B> {};
template <class B, class P>
__device__ __forceinline__ void bind(prologue<B, P>& r, long long oo) {
  bind(static_cast<B&>(r), oo);  // (sqdev: the kept position's mean)
}

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
__device__ void rows(const R& red0, const char* in, char* out, typename R::state init,
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
  R red = red0;
  bind(red, oo);
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
    if constexpr (V > 1 && is_arg<R>::value && RED_ARG_FAST) {
      // arg-reductions: per thread the best value and the (32-bit) index of its vector; each
      // vector's best first (strictly better only: the first max, the first NaN), then the
      // running best.  The element index is recovered at the end from one reload of the
      // winning vector: the first element equivalent to the best value.
      typedef vec<T, V> VT;
      const long long nv = head < n ? (n - head) / V : 0;
      if (nv > 0 && nv < 0x7fffffffLL) {
        const VT* pv = reinterpret_cast<const VT*>(p + head * isz);
        typedef typename R::C C;
        typedef typename R::cmp Cmp;
        C bv = red.ident;
        int bj = -1;
        const int nvi = (int)nv;
        int j = lane;
        constexpr int L = RED_ARG_LOADS;
#pragma unroll 1
        for (; j + (L - 1) * G < nvi; j += L * G) {
          VT v[L];
#pragma unroll
          for (int u = 0; u < L; ++u) v[u] = red.vld(pv + (j + u * G));
#pragma unroll
          for (int u = 0; u < L; ++u) {
            C b = red.from(v[u].v[0], 0).v;
#pragma unroll
            for (int k = 1; k < V; ++k) {
              const C x = red.from(v[u].v[k], 0).v;
              if (Cmp::better(x, b)) b = x;
            }
            if (bj < 0 || Cmp::better(b, bv)) {
              bv = b;
              bj = j + u * G;
            }
          }
        }
#pragma unroll 1
        for (; j < nvi; j += G) {
          const VT v1 = red.vld(pv + j);
          C b = red.from(v1.v[0], 0).v;
#pragma unroll
          for (int k = 1; k < V; ++k) {
            const C x = red.from(v1.v[k], 0).v;
            if (Cmp::better(x, b)) b = x;
          }
          if (bj < 0 || Cmp::better(b, bv)) {
            bv = b;
            bj = j;
          }
        }
        if (bj >= 0) {
          const VT v1 = red.vld(pv + bj);
          int kb = V - 1;
#pragma unroll
          for (int k = V - 2; k >= 0; --k) {
            const C x = red.from(v1.v[k], 0).v;
            if (!Cmp::better(x, bv) && !Cmp::better(bv, x)) kb = k;
          }
          state sb;
          sb.v = bv;
          sb.i = r0 + head + (long long)bj * V + kb;
          acc = red.combine(acc, sb);  // after the head elements (lower indices)
        }
        done = head + nv * V;
      }
    } else if (V > 1 && head < n) {
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
        for (int u = 0; u < 4; ++u) v[u] = red.vld(pv + (j + u * G));
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
        const VT v1 = red.vld(pv + j);
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
__device__ void cols(const R& red0, const char* in, char* out, typename R::state init,
                     const rdims& g, long long M, long long R_, int kd, int rd, long long chunk,
                     int S, int flags) {
  typedef typename R::state state;
  const long long m = (long long)blockIdx.x * RED_BLOCK + threadIdx.x;
  if (m >= M) return;
  const int s = blockIdx.y;
  long long oi, oo;
  kept_offsets(g, kd, m, oi, oo);
  R red = red0;
  bind(red, oo);
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

// scan_blocks: the scan of many lines whose kept positions are the innermost (a column
// scan, e.g. axis 0 of a C-contiguous matrix).  Thread m owns line m, so that a warp's
// loads of one row are coalesced; grid.y splits the lines into S chunks of `chunk`
// positions (block (x, s): lines x*RED_BLOCK.., positions [s*chunk, (s+1)*chunk)).  Two
// uses of the same kernel:
//   RED_FINAL clear: store the chunk's total (left to right) of line m at carries[s*M + m];
//   RED_FINAL set:   the inclusive scan, left to right from carries[(s-1)*M + m] (s > 0),
//                    which holds the chunk prefix (the totals of chunks 0..s-1 scanned in
//                    order, by scan_cols over the totals in place).
// Left to right within a chunk, as NumPy's accumulate; the bits depend only on `chunk`.
// RED_COL_U loads are issued before their combines and stores (in flight together; the
// stores cannot be hoisted past loads that may alias the output).
#ifndef RED_COL_U
#define RED_COL_U 8
#endif
template <class R>
__device__ void scan_blocks(const R& red, const char* in, char* out, char* carries,
                            const rdims& g, long long M, long long R_, int kd,
                            long long ostride, long long chunk, int flags) {
  typedef typename R::state state;
  const long long m = (long long)blockIdx.x * RED_BLOCK + threadIdx.x;
  if (m >= M) return;
  const long long s = blockIdx.y;
  long long oi, oo;
  kept_offsets(g, kd, m, oi, oo);
  const long long rin = g.rin[0];
  const char* base = in + oi;
  char* ob = out + oo;
  const long long r0 = s * chunk;
  const long long r1 = r0 + chunk < R_ ? r0 + chunk : R_;
  const bool final_ = flags & RED_FINAL;
  bool have = final_ && s > 0;
  state acc = red.empty();
  if (have) acc = ld<state>(carries + ((s - 1) * M + m) * (long long)sizeof(state));
#pragma unroll 1
  for (long long r = r0; r < r1; r += RED_COL_U) {
    state x[RED_COL_U];
#pragma unroll
    for (int u = 0; u < RED_COL_U; ++u)
      if (r + u < r1) x[u] = red.load(base + (r + u) * rin, r + u);
#pragma unroll
    for (int u = 0; u < RED_COL_U; ++u) {
      if (r + u < r1) {
        acc = have ? red.combine(acc, x[u]) : x[u];
        have = true;
        if (final_) red.store(ob + (r + u) * ostride, acc);
      }
    }
  }
  if (!final_) st<state>(carries + (s * M + m) * (long long)sizeof(state), acc);
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

// --- the block scan of scan_chain ---------------------------------------------------
// A tile of RED_BLOCK * IT positions, IT consecutive ones a thread, is scanned in three fixed
// trees: each thread left to right over its IT elements (thread_scan), the thread totals in
// each warp by a shuffle tree, the warp totals left to right (block_totals).  The thread's
// exclusive prefix within the tile is then (warps before) (+) (lanes before) (tile_prefix).
// The bits depend only on IT and RED_BLOCK.

// v[k] = v[0] (+) ... (+) v[k], left to right
template <class R, int IT>
__device__ __forceinline__ void thread_scan(const R& red, typename R::state (&v)[IT]) {
#pragma unroll
  for (int k = 1; k < IT; ++k) v[k] = red.combine(v[k - 1], v[k]);
}

// The warp and block parts of the scan of the thread totals `own`: `ex` the inclusive total
// of the lanes before this one in its warp (meaningful for lane > 0), `wp` the total of the
// warps before this one (w > 0), `tot` the tile's total.  One __syncthreads (wsum written):
// the caller may overwrite the tile's shared memory after it.
template <class R> struct block_totals {
  typedef typename R::state state;
  state ex, wp, tot;
  __device__ __forceinline__ block_totals(const R& red, state own, state* wsum, int lane, int w) {
    constexpr int NW = RED_BLOCK / 32;
    state inc = own;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {  // inclusive scan within the warp (fixed tree)
      const state y = shfl_up(inc, d);
      if (lane >= d) inc = red.combine(y, inc);
    }
    ex = shfl_up(inc, 1);
    if (lane == 31) wsum[w] = inc;
    __syncthreads();
    tot = wsum[0];
    wp = tot;
#pragma unroll
    for (int i = 1; i < NW; ++i) {  // the warps' totals left to right
      if (i == w) wp = tot;
      tot = red.combine(tot, wsum[i]);
    }
  }
  // carry (+) warps before (+) lanes before: the thread's exclusive prefix when `have` says
  // a carry is there; returns false (pre untouched) for the tile's first thread without one
  __device__ __forceinline__ bool prefix(const R& red, bool have, const state& carry, int lane,
                                         int w, state& pre) const {
    pre = carry;
    if (w > 0) {
      pre = have ? red.combine(pre, wp) : wp;
      have = true;
    }
    if (lane > 0) {
      pre = have ? red.combine(pre, ex) : ex;
      have = true;
    }
    return have;
  }
};

// --- single-pass chained scan (decoupled look-back, Merrill & Garland) ----------------------
#define RED_OCONTIG 16  // output stride == sizeof(Out) (vector stores allowed)

// Look-back tuning (reduction.py writes them: CHAIN_WINDOW, CHAIN_KEEP, CHAIN_SLEEP,
// CHAIN_DELAY).  RED_LB_P: predecessors polled per lane per window (a window is 32 * P
// tiles, all polled with their loads in flight at once: one L2 round trip); RED_LB_NB: the
// windows whose values stay in shared memory while the look-back walks further back (the
// fold then needs no second read; windows past them are re-read, correct but slower);
// RED_LB_SLEEP: ns between polls of a predecessor that has not published yet; RED_LB_DELAY:
// ns between publishing the aggregate and the first poll.
#ifndef RED_LB_P
#define RED_LB_P 2
#endif
#ifndef RED_LB_NB
#define RED_LB_NB 4
#endif
#ifndef RED_LB_SLEEP
#define RED_LB_SLEEP 0
#endif
#ifndef RED_LB_DELAY
#define RED_LB_DELAY 0
#endif
// scan_chain's vector loads and stores: 1: warp-striped (coalesced, 512 bytes a warp
// instruction) and transposed through the warp's part of the tile in shared memory (as CUB's
// WARP_TRANSPOSE); 0: each thread moves its own IT consecutive elements (reduction.py
// CHAIN_TRANSPOSE)
#ifndef RED_CHAIN_WT
#define RED_CHAIN_WT 1
#endif

__device__ __forceinline__ void lb_sleep(unsigned ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if (ns) __nanosleep(ns);
#else
  (void)ns;
#endif
}

template <bool Wide> struct word_of { typedef unsigned type; };
template <> struct word_of<true> { typedef unsigned long long type; };

struct u64x2 {
  unsigned long long a, b;
};
// 16-byte status words, loaded and stored in one access (as CUB's ScanTileState does for
// 8-byte values: the flag and the value can never be seen apart)
__device__ __forceinline__ u64x2 lb_ld16(const void* p) {
  u64x2 r;
#ifdef __CUDA_ARCH__
  asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];" : "=l"(r.a), "=l"(r.b) : "l"(p) : "memory");
#else
  const volatile unsigned long long* q = reinterpret_cast<const volatile unsigned long long*>(p);
  r.a = q[0];
  r.b = q[1];
#endif
  return r;
}
__device__ __forceinline__ void lb_st16(void* p, unsigned long long a, unsigned long long b) {
#ifdef __CUDA_ARCH__
  asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
#else
  volatile unsigned long long* q = reinterpret_cast<volatile unsigned long long*>(p);
  q[0] = a;
  q[1] = b;
#endif
}

// Tile status for the look-back.  Per tile: its aggregate (written once, kept) and its
// inclusive prefix.  A poll is fetch(t) (the loads, issued for a whole window before any is
// looked at) then decode(): 0 (nothing yet), 1 (aggregate in v) or 2 (inclusive prefix in v).
// agg(t) reads the aggregate of a tile seen non-empty before.  The host zeroes the 16-byte
// tile counter and the status words (lb_status_bytes) before each launch.
//   states of 4 bytes or less: 16 bytes a tile, {aggregate word, inclusive word}, each word
//     (flag << 32 | value bits); one 16-byte load polls both, no fences;
//   8-byte states: 32 bytes a tile, {aggregate: value, flag}{inclusive: value, flag}, 16-byte
//     words (two loads in flight a poll), no fences;
//   wider states: one flag word per tile (1, then 2; padded to 16 bytes) and two value arrays
//     av[T] iv[T]; each value is published before its flag, with __threadfence between.
template <class S, int K = (sizeof(S) <= 4 ? 0 : sizeof(S) == 8 ? 1 : 2)> struct lb_status;
template <class S> struct lb_status<S, 0> {
  static constexpr int BYTES = 16;  // a tile's status words
  char* base;
  typedef u64x2 raw;
  union pun {
    unsigned u;
    S s;
  };
  __device__ __forceinline__ void init(char* p, long long) { base = p; }
  static __device__ __forceinline__ unsigned long long pack(unsigned long long f, const S& v) {
    pun x;
    x.u = 0;
    x.s = v;
    return (f << 32) | x.u;
  }
  static __device__ __forceinline__ S unpack(unsigned long long w) {
    pun x;
    x.u = (unsigned)w;
    return x.s;
  }
  __device__ __forceinline__ void put_agg(long long t, const S& v) const {
    *reinterpret_cast<volatile unsigned long long*>(base + 16 * t) = pack(1, v);
  }
  __device__ __forceinline__ void put_inc(long long t, const S& v) const {
    *reinterpret_cast<volatile unsigned long long*>(base + 16 * t + 8) = pack(2, v);
  }
  __device__ __forceinline__ raw fetch(long long t) const { return lb_ld16(base + 16 * t); }
  static __device__ __forceinline__ int decode(const raw& r, long long, S& v) {
    const unsigned long long w = (r.b >> 32) ? r.b : r.a;
    v = unpack(w);
    return (int)(w >> 32);
  }
  __device__ __forceinline__ S agg(long long t) const {
    unsigned long long w;
    do {
      w = *reinterpret_cast<const volatile unsigned long long*>(base + 16 * t);
    } while ((w >> 32) == 0);
    return unpack(w);
  }
};
template <class S> struct lb_status<S, 1> {
  static constexpr int BYTES = 32;
  char* base;
  struct raw {
    u64x2 a, i;
  };
  __device__ __forceinline__ void init(char* p, long long) { base = p; }
  static __device__ __forceinline__ unsigned long long bits(const S& v) {
    unsigned long long u;
    memcpy(&u, &v, 8);
    return u;
  }
  static __device__ __forceinline__ S unbits(unsigned long long u) {
    S v;
    memcpy(&v, &u, 8);
    return v;
  }
  __device__ __forceinline__ void put_agg(long long t, const S& v) const {
    lb_st16(base + 32 * t, bits(v), 1);
  }
  __device__ __forceinline__ void put_inc(long long t, const S& v) const {
    lb_st16(base + 32 * t + 16, bits(v), 2);
  }
  __device__ __forceinline__ raw fetch(long long t) const {
    raw r;
    r.a = lb_ld16(base + 32 * t);
    r.i = lb_ld16(base + 32 * t + 16);
    return r;
  }
  static __device__ __forceinline__ int decode(const raw& r, long long, S& v) {
    if (r.i.b) {
      v = unbits(r.i.a);
      return 2;
    }
    v = unbits(r.a.a);
    return (int)r.a.b;
  }
  __device__ __forceinline__ S agg(long long t) const {
    u64x2 w;
    do {
      w = lb_ld16(base + 32 * t);
    } while (w.b == 0);
    return unbits(w.a);
  }
};
template <class S> struct lb_status<S, 2> {
  typedef typename word_of<sizeof(S) % 8 == 0>::type W;
  static constexpr int NWD = (int)(sizeof(S) / sizeof(W));
  static_assert(sizeof(S) % 4 == 0, "state size");
  typedef int raw;
  int* flag;
  S* av;
  S* iv;
  __device__ __forceinline__ void init(char* p, long long T) {
    flag = reinterpret_cast<int*>(p);
    av = reinterpret_cast<S*>(p + ((4 * T + 15) / 16) * 16);
    iv = av + T;
  }
  static __device__ __forceinline__ void vst(S* p, const S& v) {
    const W* w = reinterpret_cast<const W*>(&v);
    volatile W* q = reinterpret_cast<volatile W*>(p);
#pragma unroll
    for (int i = 0; i < NWD; ++i) q[i] = w[i];
  }
  static __device__ __forceinline__ S vld(const S* p) {
    S v;
    W* w = reinterpret_cast<W*>(&v);
    const volatile W* q = reinterpret_cast<const volatile W*>(p);
#pragma unroll
    for (int i = 0; i < NWD; ++i) w[i] = q[i];
    return v;
  }
  __device__ __forceinline__ void put_agg(long long t, const S& v) const {
    vst(av + t, v);
    __threadfence();
    *reinterpret_cast<volatile int*>(flag + t) = 1;
  }
  __device__ __forceinline__ void put_inc(long long t, const S& v) const {
    vst(iv + t, v);
    __threadfence();
    *reinterpret_cast<volatile int*>(flag + t) = 2;
  }
  __device__ __forceinline__ raw fetch(long long t) const {
    return *reinterpret_cast<volatile int*>(flag + t);
  }
  __device__ __forceinline__ int decode(const raw& f, long long t, S& v) const {
    if (f) {
      __threadfence();
      v = vld(f == 2 ? iv + t : av + t);
    }
    return f;
  }
  __device__ __forceinline__ S agg(long long t) const {
    while (*reinterpret_cast<volatile int*>(flag + t) == 0) {
    }
    __threadfence();
    return vld(av + t);
  }
};

// acc (+) b[top] (+) b[top - 1] ... (+) b[0], left to right (the loads do not depend on acc:
// they pipeline, and the chain costs one combine latency per element)
template <class R>
__device__ __forceinline__ typename R::state lb_fold(const R& red, typename R::state acc,
                                                     const typename R::state* b, int top) {
#pragma unroll 8
  for (int i = top; i >= 0; --i) acc = red.combine(acc, b[i]);
  return acc;
}

// The exclusive prefix of tile gt (line's first tile lo < gt), by warp 0 (every lane returns
// it).  Window w holds the tiles at distances w*W + 1 .. w*W + W (lane l, slot p: distance
// w*W + p*32 + l + 1); its values go to buf[w*W ..] (windows past RED_LB_NB: buf[NB*W ..],
// reused).  A window is complete when every tile of the line in it is non-empty; the nearest
// inclusive prefix k in it (if any) ends the walk: the result is
// inc_k (+) agg_k+1 (+) ... (+) agg_gt-1, left to right.  Tiles before lo are not polled;
// tile lo always ends up inclusive, so the walk never passes it.
template <class R, class ST>
__device__ __forceinline__ typename R::state lookback(const R& red, const ST& stt, long long gt,
                                                      long long lo, typename R::state* buf,
                                                      int lane) {
  typedef typename R::state state;
  constexpr int P = RED_LB_P;
  constexpr int W = 32 * P;
  constexpr int NB = RED_LB_NB;
  lb_sleep(RED_LB_DELAY);
#pragma unroll 1
  for (int w = 0;; ++w) {
    const long long hi = gt - 1 - (long long)w * W;
    long long q[P];
    typename ST::raw r[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      q[p] = hi - (p * 32 + lane);
      if (q[p] >= lo) r[p] = stt.fetch(q[p]);  // all loads in flight before any is used
    }
    int f[P];
    state x[P];
    bool pend = false;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      f[p] = -1;
      x[p] = red.empty();
      if (q[p] >= lo) {
        f[p] = stt.decode(r[p], q[p], x[p]);
        pend |= f[p] == 0;
      }
    }
#pragma unroll 1
    while (pend) {
      lb_sleep(RED_LB_SLEEP);
      pend = false;
#pragma unroll
      for (int p = 0; p < P; ++p) {
        if (f[p] == 0) {
          f[p] = stt.decode(stt.fetch(q[p]), q[p], x[p]);
          pend |= f[p] == 0;
        }
      }
    }
    state* dst = buf + (w < NB ? w : NB) * W;
#pragma unroll
    for (int p = 0; p < P; ++p) dst[p * 32 + lane] = x[p];
    int k = -1;
#pragma unroll
    for (int p = P - 1; p >= 0; --p) {
      const unsigned m = __ballot_sync(0xffffffffu, f[p] == 2);
      if (m) k = p * 32 + __ffs(m) - 1;
    }
    __syncwarp();
    if (k >= 0) {
      state acc = lb_fold(red, dst[k], dst, k - 1);
#pragma unroll 1
      for (int v = w - 1; v >= NB; --v) {  // windows past the kept ones: read them again
        __syncwarp();
#pragma unroll
        for (int p = 0; p < P; ++p)
          dst[p * 32 + lane] = stt.agg(gt - 1 - (long long)v * W - (p * 32 + lane));
        __syncwarp();
        acc = lb_fold(red, acc, dst, W - 1);
      }
      return lb_fold(red, acc, buf, (w < NB ? w : NB) * W - 1);
    }
  }
}

// Vector width (elements) for IT consecutive elements of T moved as 16-, 8- or 4-byte
// vectors; 0: no vector path.
template <class T, int IT> struct vwidth {
  static constexpr int B = IT * (int)sizeof(T);
  static constexpr int VB = B % 16 == 0 ? 16 : B % 8 == 0 ? 8 : B % 4 == 0 ? 4 : 0;
  static constexpr int W = (VB >= (int)sizeof(T) && VB % (int)sizeof(T) == 0) ? VB / (int)sizeof(T)
                                                                            : 0;
};

// Tile geometry of scan_chain's tile gt: where its input and output start, its valid
// positions n, and whether its input takes the vector loads (full, contiguous, aligned).
template <int IT> struct chain_tile {
  const char* in;
  char* out;
  long long j, t0;
  int n;
  bool vin;
  __device__ __forceinline__ void locate(long long gt, const char* in0, char* out0,
                                         const rdims& g, int kd, long long R_, long long T,
                                         long long isz, long long ostride, int flags,
                                         unsigned long long valign) {
    constexpr int N = RED_BLOCK * IT;
    const long long m = gt / T;
    j = gt - m * T;
    long long oi, oo;
    kept_offsets(g, kd, m, oi, oo);
    t0 = j * N;
    n = R_ - t0 < (long long)N ? (int)(R_ - t0) : N;
    in = in0 + oi + t0 * isz;
    out = out0 + oo + t0 * ostride;
    vin = valign > 0 && (flags & RED_CONTIG) && n == N &&
          ((unsigned long long)in) % valign == 0;
  }
};

// scan_chain's stores of a tile's results v (IT consecutive positions a thread) at tout:
// vector stores (warp-striped through the warp's part of the tile, or each thread its own)
// when the output is contiguous, aligned and the tile full, else through the tile.
template <class R, int IT>
__device__ __forceinline__ void chain_store(const R& red, typename R::state (&v)[IT],
                                            typename R::state* tile, char* tout,
                                            long long ostride, int n, int flags, int t,
                                            int lane, int w) {
  typedef typename R::out_t Out;
  constexpr int N = RED_BLOCK * IT;
  constexpr int VO = vwidth<Out, IT>::W;
  if (VO > 0 && (flags & RED_OCONTIG) && n == N &&
      ((unsigned long long)tout) % (unsigned long long)(VO * sizeof(Out)) == 0) {
    constexpr int VV = VO > 0 ? VO : 1;
    constexpr int Q = IT / VV;
    typedef vec<Out, VV> VT;
    if constexpr (RED_CHAIN_WT) {
      // through the warp's part of the tile, then warp-striped (coalesced) stores (the
      // tile's reads before this are over: __syncthreads since, or only this warp's part)
      const int wb = w * 32 * IT;
#pragma unroll
      for (int k = 0; k < IT; ++k) tile[RED_SPAD(t * IT + k)] = v[k];
      __syncwarp();
      VT* pv = reinterpret_cast<VT*>(tout + (long long)wb * (long long)sizeof(Out));
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        VT y;
#pragma unroll
        for (int k = 0; k < VV; ++k)
          red.store(reinterpret_cast<char*>(&y.v[k]),
                    tile[RED_SPAD(wb + (q * 32 + lane) * VV + k)]);
        pv[q * 32 + lane] = y;
      }
    } else {
      VT* pv = reinterpret_cast<VT*>(tout) + (long long)t * Q;
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        VT y;
#pragma unroll
        for (int k = 0; k < VV; ++k) red.store(reinterpret_cast<char*>(&y.v[k]), v[q * VV + k]);
        pv[q] = y;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < IT; ++k) tile[RED_SPAD(t * IT + k)] = v[k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      const int i = k * RED_BLOCK + t;
      if (i < n) red.store(tout + i * ostride, tile[RED_SPAD(i)]);
    }
  }
}

// scan_chain: inclusive scan of M lines of R_ positions, T tiles of RED_BLOCK * IT positions
// per line, one tile per block, in the order of a global tile counter (so a tile's
// predecessors have all started).  Each thread owns IT consecutive positions: 16-byte vector
// loads and stores when the line is contiguous and aligned and the tile is full, else the
// tile is staged through shared memory (coalesced).  Block scan: thread, warp shuffles, warp
// totals in order.  Then the tile publishes its aggregate and warp 0 looks back over
// windows of 32 * RED_LB_P predecessors of its line until one shows an inclusive prefix
// (lookback).
//
// Speed: the inclusive prefixes only move forward as fast as look-backs complete.  A
// look-back that must walk w windows costs w poll round trips plus the left fold; if a
// window's cost (poll, fold, a second read) exceeds the time the GPU takes to start a
// window's worth of tiles, the walks grow until residency stalls the grid and the scan
// runs at one window per look-back step whatever the tile size (the first version: two
// dependent loads a poll, a 32-step fold from shared memory one load at a time, and every
// window read twice: ~55 ns a tile).  Here a poll is one round trip for 32 * RED_LB_P
// tiles, the walked windows stay in shared memory, and the fold pipelines its loads.
//
// Deterministic: the exclusive prefix of tile j is always the left fold
// (((inc_k (+) agg_k+1) (+) agg_k+2) ... (+) agg_j-1) from the nearest inclusive prefix k,
// and inc_j = excl_j (+) agg_j; by induction every inc_j is the left fold of agg_0..agg_j
// whichever k the timing gave, and agg_j is a fixed tree, so the bits never depend on timing.
template <class R, int IT>
__device__ void scan_chain(const R& red, const char* in, char* out, char* tmp, const rdims& g,
                           long long M, long long R_, int kd, long long ostride, long long T,
                           int flags) {
  typedef typename R::state state;
  typedef typename R::in_t In;
  constexpr int N = RED_BLOCK * IT;
  constexpr int NW = RED_BLOCK / 32;
  constexpr int VI = vwidth<In, IT>::W;
  constexpr int VV = VI > 0 ? VI : 1;
  constexpr int Q = IT / VV;
  typedef vec<In, VV> VT;
  __shared__ alignas(16) unsigned char smraw[RED_SPAD(N) * sizeof(state)];
  __shared__ alignas(16) unsigned char wraw[NW * sizeof(state)];
  constexpr int NLB = (RED_LB_NB + 1) * 32 * RED_LB_P;  // look-back windows
  __shared__ alignas(16) unsigned char lbraw[(NLB + 1) * sizeof(state)];
  __shared__ unsigned first_id;
  state* tile = reinterpret_cast<state*>(smraw);
  state* wsum = reinterpret_cast<state*>(wraw);
  state* lb = reinterpret_cast<state*>(lbraw);  // [NLB]: look-back windows; [NLB]: excl
  const int t = threadIdx.x;
  const int lane = t & 31, w = t >> 5;
  const long long NT = M * T;
  const long long isz = g.rin[0];
  unsigned* counter = reinterpret_cast<unsigned*>(tmp);
  lb_status<state> stt;  // the tiles' status words
  stt.init(tmp + 16, NT);
  if (t == 0) first_id = atomicAdd(counter, 1u);
  __syncthreads();
  const long long gt = (long long)first_id;
  if (gt >= NT) return;  // (uniform in the block)
  chain_tile<IT> cur;
  cur.locate(gt, in, out, g, kd, R_, T, isz, ostride, flags, VI * sizeof(In));
  const long long j = cur.j, t0 = cur.t0;
  const int n = cur.n;
  state v[IT];
  if (VI > 0 && cur.vin) {
    VT x[Q];
    if constexpr (RED_CHAIN_WT) {
      // warp-striped (coalesced) vector loads of the warp's 32 * IT elements, then through
      // shared memory to IT consecutive elements a thread
      const int wb = w * 32 * IT;  // the warp's first position in the tile
      const VT* pv = reinterpret_cast<const VT*>(cur.in + (long long)wb * isz);
#pragma unroll
      for (int q = 0; q < Q; ++q) x[q] = pv[q * 32 + lane];
#pragma unroll
      for (int q = 0; q < Q; ++q)
#pragma unroll
        for (int k = 0; k < VV; ++k) {
          const int e = wb + (q * 32 + lane) * VV + k;
          tile[RED_SPAD(e)] = red.from(x[q].v[k], t0 + e);
        }
      __syncwarp();
#pragma unroll
      for (int k = 0; k < IT; ++k) v[k] = tile[RED_SPAD(t * IT + k)];
    } else {
      const VT* pv = reinterpret_cast<const VT*>(cur.in) + (long long)t * Q;
      const long long rb = t0 + (long long)t * IT;
#pragma unroll
      for (int q = 0; q < Q; ++q) x[q] = pv[q];
#pragma unroll
      for (int q = 0; q < Q; ++q)
#pragma unroll
        for (int k = 0; k < VV; ++k) v[q * VV + k] = red.from(x[q].v[k], rb + q * VV + k);
    }
  } else {
#pragma unroll
    for (int k = 0; k < IT; ++k) {
      const int i = k * RED_BLOCK + t;
      tile[RED_SPAD(i)] = i < n ? red.load(cur.in + i * isz, t0 + i) : red.empty();
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < IT; ++k) v[k] = tile[RED_SPAD(t * IT + k)];
  }
  thread_scan(red, v);
  const block_totals<R> bt(red, v[IT - 1], wsum, lane, w);  // every thread is done reading
  const state tot = bt.tot;                                 // the tile
  // look-back: the aggregate is published first (thread 0, before its own look-back), so
  // that successors never wait for this tile's look-back, only for its aggregate
  if (j == 0) {
    if (t == 0) stt.put_inc(gt, tot);
  } else {
    if (t == 0) stt.put_agg(gt, tot);
    if (w == 0) {
      const state ex0 = lookback(red, stt, gt, gt - j, lb, lane);
      if (lane == 0) {
#ifdef CPN_RED_LB_SKIP  // CPU tests: withhold some inclusive prefixes (longer look-backs)
        if (!(CPN_RED_LB_SKIP(gt)))
#endif
          stt.put_inc(gt, red.combine(ex0, tot));
        lb[NLB] = ex0;
      }
    }
  }
  __syncthreads();  // lb[NLB]: the tile's exclusive prefix
  state pre;
  const bool hp = bt.prefix(red, j > 0, j > 0 ? lb[NLB] : red.empty(), lane, w, pre);
  if constexpr (RED_CHAIN_WT) {
    // the thread's scan again from its elements, still in the tile (both load paths leave
    // them there): the same combines, the same bits, and v[] is not live (registers)
    // across the look-back
#pragma unroll
    for (int k = 0; k < IT; ++k) v[k] = tile[RED_SPAD(t * IT + k)];
    thread_scan(red, v);
  }
  if (hp) {
#pragma unroll
    for (int k = 0; k < IT; ++k) v[k] = red.combine(pre, v[k]);
  }
  chain_store<R, IT>(red, v, tile, cur.out, ostride, n, flags, t, lane, w);
}

}  // namespace cpn_red
