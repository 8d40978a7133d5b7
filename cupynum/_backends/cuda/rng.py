"""cuRAND (Philox4x32-10) through ``nvmath.bindings.curand``, imported lazily.

One cuRAND generator per cupynum ``Generator`` (its state advances inside cuRAND, so
successive calls continue the stream and a seed reproduces it).  Each call binds it to the
current stream.  Streams differ from NumPy's (docs/differences.md).

The rejection samplers (``draw``: standard gamma, binomial, Poisson, hypergeometric,
logseries, zipf, von Mises with per-element parameters, and the multivariate hypergeometric)
are kernels of our own with a counter-based Philox4x32-10 written in the kernel
text: element ``i`` of the ``c``-th draw of a generator reads the blocks
``philox(key, (j, lo32(i), hi32(i), c))``, j = 0, 1, ..., with the key derived from the seed,
so each element's stream depends on neither the launch shape nor the other elements, and a
seed reproduces every draw.  The text is plain per-thread code (no intrinsics, no headers):
tests/test_random_kernels_host.py compiles it for the CPU and checks it.
"""
from __future__ import annotations

import functools
import threading


import numpy as np

from . import memory, nvmath_bindings, runtime
from .blas import empty
from . import tuning
from .kernels_util import DEV, I32, I64, PTR, Kernel
from .view import dptr

_lib = None
PHILOX = 161  # CURAND_RNG_PSEUDO_PHILOX4_32_10


def lib():
    global _lib
    if _lib is None:
        _lib = nvmath_bindings.load("curand")
    return _lib


# Generators whose State was collected, kept for the next States (a generator's creation
# allocates on the device, and its destruction frees, which waits for the whole device):
# (the library that made it, handle, the stream it last ran on).  Past KEEP_RETIRED they
# are destroyed, at the next generator's birth (no CUDA call from the garbage collector).
_retired: list = []
KEEP_RETIRED = 4


def _take_retired():
    """(handle, stream) of a retired generator of this library, or None."""
    while True:
        try:
            cr, gen, stream = _retired.pop()
        except IndexError:  # none left (another thread may have taken the last one)
            return None
        if cr is lib():
            return gen, stream
        _destroy(cr, gen, stream)


def _destroy(cr, gen, stream) -> None:
    try:
        if stream:  # the stream it last ran on may be destroyed by now: detach it first
            cr.set_stream(gen, 0)
        cr.destroy_generator(gen)
    except Exception:  # noqa: BLE001 - nothing to report a failed release to
        pass


def _generator(seed: int):
    """(handle, stream it is bound to) of a cuRAND Philox generator at the start of the
    stream of ``seed``: a retired one reseeded (seed and offset 0 make its next draw a new
    generator's), else a new one."""
    while len(_retired) > KEEP_RETIRED and not memory._shutdown:
        try:
            _destroy(*_retired.pop(0))
        except IndexError:
            break
    cr = lib()
    seed = int(seed) & (2**64 - 1)
    reused = _take_retired()
    if reused is not None:
        cr.set_pseudo_random_generator_seed(reused[0], seed)
        cr.set_generator_offset(reused[0], 0)
        return reused
    gen = memory.library_alloc(cr.create_generator, PHILOX, what="curandCreateGenerator")
    cr.set_pseudo_random_generator_seed(gen, seed)
    return gen, None


class State:
    """A generator's device streams for ``seed`` (a 64-bit int): the Philox key of our own
    kernels, and a cuRAND Philox generator for the base streams, made at its first use."""

    def __init__(self, seed: int):
        self._seed = seed
        self._lock = threading.Lock()
        self._gen = self._stream = None
        self.key = philox_key(seed)
        self._calls = 0

    def draw(self, backend, kind: str, out, params) -> None:
        """Rejection samplers on the device (module doc): see ``draw``."""
        with self._lock:
            call = self._calls
            self._calls = (self._calls + 1) & 0xFFFFFFFF
        draw(kind, out, params, self.key, call)

    def __del__(self):
        # No CUDA call from the garbage collector (it runs on whatever thread allocates,
        # in the middle of anything): the generator waits for a later State.
        gen = getattr(self, "_gen", None)
        if gen is not None:
            _retired.append((_lib, gen, self._stream))

    def fill(self, backend, kind: str, out, param=None) -> None:
        """kind: 'uniform' (float32/64 in (0, 1]), 'normal' (float32/64, N(0, 1)),
        'bits' (uint32), 'poisson' (uint32, mean ``param``).  out C-contiguous."""
        n = out._size
        if n == 0:
            return
        # cuRAND allocates its generator state on the device itself (on first use): under
        # memory pressure the pool gives its cached blocks back and the call is retried.
        memory.library_alloc(self._fill, kind, out, param, n, what="curandGenerate")

    def _fill(self, kind, out, param, n) -> None:
        cr = lib()
        stream = runtime.current_stream()
        with self._lock:
            if self._gen is None:
                self._gen, self._stream = _generator(self._seed)
            if self._stream != stream:
                cr.set_stream(self._gen, stream)
                self._stream = stream
            p = dptr(out)
            dbl = out.dtype.char == "d"
            if kind == "uniform":
                (cr.generate_uniform_double if dbl else cr.generate_uniform)(self._gen, p, n)
            elif kind == "bits":
                cr.generate(self._gen, p, n)
            elif kind == "poisson":
                cr.generate_poisson(self._gen, p, n, float(param))
            elif kind == "normal":
                if n % 2:  # Box-Muller makes pairs: cuRAND wants an even count
                    tmp = empty((n + 1,), out.dtype)
                    (cr.generate_normal_double if dbl else cr.generate_normal)(
                        self._gen, dptr(tmp), n + 1, 0.0, 1.0)
                    memory.memcpy_dtod(p, dptr(tmp), n * out.dtype.itemsize)
                else:
                    (cr.generate_normal_double if dbl else cr.generate_normal)(
                        self._gen, p, n, 0.0, 1.0)
            else:
                raise ValueError(kind)


# --- rejection samplers: Philox4x32-10 in the kernel text ------------------------------------
_U32 = np.dtype(np.uint32)
# Launch knobs: ``tuning.RANDOM`` (threads per block and the grid cap in blocks per SM;
# benchmarks/probes/random_probe.py sweeps them).  The loops are grid-strided: each
# element's stream depends on neither.


def philox_key(seed: int) -> tuple[int, int]:
    """Two 32-bit Philox key words from the 64-bit seed (splitmix64, so the kernels' stream
    is not cuRAND's, which is keyed by the seed itself)."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    z ^= z >> 31
    return z & 0xFFFFFFFF, z >> 32


PRELUDE = r"""
struct cpn_rng {
  unsigned k0, k1, c1, c2, c3, ctr, pos, buf[4];
  double spare; int has_spare;
  __device__ void init(unsigned key0, unsigned key1, long long i, unsigned call) {
    k0 = key0; k1 = key1; c1 = (unsigned)i; c2 = (unsigned)((unsigned long long)i >> 32);
    c3 = call; ctr = 0; pos = 4; has_spare = 0;
  }
  __device__ void block() {
    unsigned x0 = ctr++, x1 = c1, x2 = c2, x3 = c3, a = k0, b = k1;
    for (int r = 0; r < 10; ++r) {
      unsigned long long p0 = (unsigned long long)0xD2511F53u * x0;
      unsigned long long p1 = (unsigned long long)0xCD9E8D57u * x2;
      unsigned y0 = (unsigned)(p1 >> 32) ^ x1 ^ a, y1 = (unsigned)p1;
      unsigned y2 = (unsigned)(p0 >> 32) ^ x3 ^ b, y3 = (unsigned)p0;
      x0 = y0; x1 = y1; x2 = y2; x3 = y3;
      a += 0x9E3779B9u; b += 0xBB67AE85u;
    }
    buf[0] = x0; buf[1] = x1; buf[2] = x2; buf[3] = x3; pos = 0;
  }
  __device__ unsigned next() { if (pos >= 4) block(); return buf[pos++]; }
  /* uniform in (0, 1), 53 random bits */
  __device__ double uniform() {
    unsigned long long hi = next();
    unsigned long long lo = next();
    unsigned long long x = (hi << 32) | lo;
    return ((double)(x >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  __device__ double normal() {
    if (has_spare) { has_spare = 0; return spare; }
    double u = uniform(), v = uniform();
    double r = sqrt(-2.0 * log(u)), t = 6.283185307179586 * v;
    spare = r * sin(t); has_spare = 1;
    return r * cos(t);
  }
};

/* Marsaglia & Tsang (2000); shape < 1 through G(a) = G(a + 1) U^(1/a).  lg: log of it
   (finite where the value underflows: beta and dirichlet normalise in log space). */
__device__ double cpn_gamma(cpn_rng& g, double a, int lg) {
  if (!(a > 0.0)) return a == 0.0 ? (lg ? -1.0 / 0.0 : 0.0) : a;  /* 0, or NaN */
  double boost = 0.0;
  if (a < 1.0) { boost = log(g.uniform()) / a; a += 1.0; }
  const double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do { x = g.normal(); v = 1.0 + c * x; } while (v <= 0.0);
    v = v * v * v;
    const double u = g.uniform(), x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 || log(u) < 0.5 * x2 + d * (1.0 - v + log(v))) {
      if (lg) return log(d) + log(v) + boost;
      return d * v * exp(boost);
    }
  }
}

/* Poisson: multiplication for lam < 10, else PTRS (Hormann 1993, as NumPy). */
__device__ long long cpn_poisson(cpn_rng& g, double lam) {
  if (!(lam > 0.0)) return 0;
  if (lam < 10.0) {
    const double enlam = exp(-lam);
    double prod = 1.0;
    long long x = 0;
    for (;;) { prod *= g.uniform(); if (prod > enlam) ++x; else return x; }
  }
  const double slam = sqrt(lam), loglam = log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double U = g.uniform() - 0.5, V = g.uniform(), us = 0.5 - fabs(U);
    const double k = floor((2.0 * a / us + b) * U + lam + 0.43);
    if (us >= 0.07 && V <= vr) return (long long)k;
    if (k < 0.0 || (us < 0.013 && V > us)) continue;
    if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0))
      return (long long)k;
  }
}

/* Binomial: inversion (BINV) for n min(p, 1-p) < 10, else BTRS (Hormann 1993). */
__device__ long long cpn_binomial(cpn_rng& g, long long n, double p) {
  if (n <= 0 || !(p > 0.0)) return 0;
  if (p >= 1.0) return n;
  const int flip = p > 0.5;
  const double q = flip ? 1.0 - p : p, r = 1.0 - q, dn = (double)n, nq = dn * q;
  long long k;
  if (nq < 10.0) {
    const double s = q / r, a = (dn + 1.0) * s, r0 = exp(dn * log1p(-q));
    const double bound = fmin(dn, nq + 10.0 * sqrt(nq * r + 1.0));
    for (;;) {
      double u = g.uniform(), pr = r0;
      long long x = 0;
      while (u > pr) {
        u -= pr; ++x;
        if ((double)x > bound) break;
        pr *= a / (double)x - s;
      }
      if ((double)x <= bound) { k = x; break; }
    }
  } else {
    const double spq = sqrt(nq * r), b = 1.15 + 2.53 * spq;
    const double a = -0.0873 + 0.0248 * b + 0.01 * q, c = nq + 0.5, vr = 0.92 - 4.2 / b;
    const double alpha = (2.83 + 5.1 / b) * spq, lpq = log(q / r);
    const double m = floor((dn + 1.0) * q), h = lgamma(m + 1.0) + lgamma(dn - m + 1.0);
    for (;;) {
      const double u = g.uniform() - 0.5, us = 0.5 - fabs(u);
      double v = g.uniform();
      const double kk = floor((2.0 * a / us + b) * u + c);
      if (kk < 0.0 || kk > dn) continue;
      if (us >= 0.07 && v <= vr) { k = (long long)kk; break; }
      v = log(v * alpha / (a / (us * us) + b));
      if (v <= h - lgamma(kk + 1.0) - lgamma(dn - kk + 1.0) + (kk - m) * lpq) {
        k = (long long)kk; break;
      }
    }
  }
  return flip ? n - k : k;
}

/* uniform integer in [0, m] (m < 2^53: the 53-bit uniform's bias is below 2^-20 there) */
__device__ long long cpn_interval(cpn_rng& g, long long m) {
  const long long k = (long long)(g.uniform() * ((double)m + 1.0));
  return k > m ? m : k;  /* u * (m + 1) can round up to m + 1 */
}

__device__ double cpn_logfact(long long k) { return lgamma((double)k + 1.0); }

/* Hypergeometric as NumPy's random_hypergeometric: below 10 draws from either end, draw
   the items one by one (exact, at most 10 uniforms); else Stadlober's ratio of uniforms
   (HRUA, exact: the table-mountain hat dominates the scaled pmf). */
__device__ long long cpn_hypergeometric(cpn_rng& g, long long good, long long bad,
                                        long long sample) {
  const long long total = good + bad;
  if (sample < 10 || sample > total - 10) {
    const int upper = sample > total / 2;
    long long todo = upper ? total - sample : sample, left = total, left_good = good;
    while (todo > 0 && left_good > 0 && left > left_good) {
      --left;
      if (cpn_interval(g, left) < left_good) --left_good;
      --todo;
    }
    if (left == left_good) left_good -= todo;  /* only good ones are left */
    return upper ? left_good : good - left_good;
  }
  const double D1 = 1.7155277699214135, D2 = 0.8989161620588988;
  const long long n = sample < total - sample ? sample : total - sample;
  const long long lo = good < bad ? good : bad, hi = good < bad ? bad : good;
  const double p = (double)lo / (double)total, q = (double)hi / (double)total;
  const double a = (double)n * p + 0.5;
  const double var = (double)(total - n) * (double)n * p * q / (double)(total - 1);
  const double c = sqrt(var + 0.5), h = D1 * c + D2;
  const long long m = (long long)floor((double)(n + 1) * (double)(lo + 1) /
                                       (double)(total + 2));
  const double gm = cpn_logfact(m) + cpn_logfact(lo - m) + cpn_logfact(n - m) +
                    cpn_logfact(hi - n + m);
  const double b = fmin((double)((n < lo ? n : lo) + 1), floor(a + 16.0 * c));
  long long k;
  for (;;) {
    const double u = g.uniform(), v = g.uniform(), x = a + h * (v - 0.5) / u;
    if (x < 0.0 || x >= b) continue;
    k = (long long)floor(x);
    const double t = gm - (cpn_logfact(k) + cpn_logfact(lo - k) + cpn_logfact(n - k) +
                           cpn_logfact(hi - n + k));
    if (u * (4.0 - u) - 3.0 <= t) break;  /* squeeze: accept */
    if (u * (u - t) >= 1.0) continue;      /* squeeze: reject */
    if (2.0 * log(u) <= t) break;
  }
  if (good > bad) k = n - k;
  if (n < sample) k = good - k;
  return k;
}

/* Logarithmic series: Kemp's (1981) LK algorithm, as NumPy. */
__device__ long long cpn_logseries(cpn_rng& g, double p) {
  const double r = log1p(-p);
  for (;;) {
    const double v = g.uniform();
    if (v >= p) return 1;
    const double u = g.uniform(), q = -expm1(r * u);
    if (v <= q * q) {
      const double k = floor(1.0 + log(v) / log(q));
      if (k < 1.0) continue;
      return k > 9.2e18 ? 9223372036854775807LL : (long long)k;
    }
    return v >= q ? 1 : 2;
  }
}

/* Zipf: Devroye's rejection from the Pareto hat, as NumPy's random_zipf (truncated to
   int64; a >= 1025 gives 1 with probability 1 - 3e-309). */
__device__ long long cpn_zipf(cpn_rng& g, double a) {
  if (a >= 1025.0) return 1;
  const double am1 = a - 1.0, b = pow(2.0, am1);
  const double umin = pow(9.223372036854775807e18, -am1);
  for (;;) {
    const double u01 = g.uniform(), u = u01 * umin + (1.0 - u01), v = g.uniform();
    const double x = floor(pow(u, -1.0 / am1));
    if (x > 9.223372036854775807e18 || x < 1.0) continue;
    const double t = pow(1.0 + 1.0 / x, am1);
    if (v * x * (t - 1.0) / (b - 1.0) <= t / b) return (long long)x;
  }
}

/* von Mises: Best & Fisher (1979) as NumPy (uniform below kappa 1e-8, wrapped normal
   above 1e6). */
__device__ double cpn_vonmises(cpn_rng& g, double mu, double kappa) {
  const double PI = 3.141592653589793;
  if (kappa != kappa) return kappa;
  if (kappa < 1e-8) return PI * (2.0 * g.uniform() - 1.0);
  double s;
  if (kappa < 1e-5) {
    s = 1.0 / kappa + kappa;
  } else if (kappa <= 1e6) {
    const double r = 1.0 + sqrt(1.0 + 4.0 * kappa * kappa);
    const double rho = (r - sqrt(2.0 * r)) / (2.0 * kappa);
    s = (1.0 + rho * rho) / (2.0 * rho);
  } else {
    double x = mu + sqrt(1.0 / kappa) * g.normal();
    if (x < -PI) x += 2.0 * PI;
    if (x > PI) x -= 2.0 * PI;
    return x;
  }
  double w;
  for (;;) {
    const double z = cos(PI * g.uniform());
    w = (1.0 + s * z) / (s + z);
    const double y = kappa * (s - w), v = g.uniform();
    if (y * (2.0 - y) - v >= 0.0 || log(y / v) + 1.0 - y >= 0.0) break;
  }
  double x = acos(w);
  if (g.uniform() < 0.5) x = -x;
  x += mu;
  const double m = fmod(fabs(x) + PI, 2.0 * PI) - PI;
  return x < 0.0 ? -m : m;
}
"""

_LOOP = ("for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
         " i += (long long)gridDim.x * blockDim.x) {\n    cpn_rng g; g.init(k0, k1, i, call);")
_TAIL = [("const unsigned", _U32), ("const unsigned", _U32), ("const unsigned", _U32)]


def gamma_kernel(char: str) -> Kernel:
    """out[i] = standard_gamma(alpha[i * astep]) (its log when ``lg``); float or double."""
    t = {"f": "float", "d": "double"}[char]
    body = f"""{{
  {t}* out = ({t}*)p_0; const double* alpha = (const double*)p_1; const long long astep = p_2;
  const long long n = p_3; const unsigned k0 = p_4, k1 = p_5, call = p_6; const int lg = p_7;
  {_LOOP}
    out[i] = ({t})cpn_gamma(g, alpha[i * astep], lg);
  }}
}}"""
    return Kernel(f"cpn_rng_gamma_{char}", [("char*", PTR), ("const char*", PTR),
                                            ("const long long", I64), ("const long long", I64),
                                            *_TAIL, ("const int", I32)], body, PRELUDE)


def poisson_kernel() -> Kernel:
    body = f"""{{
  long long* out = (long long*)p_0; const double* lam = (const double*)p_1;
  const long long lstep = p_2, n = p_3; const unsigned k0 = p_4, k1 = p_5, call = p_6;
  {_LOOP}
    out[i] = cpn_poisson(g, lam[i * lstep]);
  }}
}}"""
    return Kernel("cpn_rng_poisson", [("char*", PTR), ("const char*", PTR),
                                      ("const long long", I64), ("const long long", I64),
                                      *_TAIL], body, PRELUDE)


def binomial_kernel() -> Kernel:
    body = f"""{{
  long long* out = (long long*)p_0; const long long* nn = (const long long*)p_1;
  const long long nstep = p_2; const double* pp = (const double*)p_3;
  const long long pstep = p_4, n = p_5; const unsigned k0 = p_6, k1 = p_7, call = p_8;
  {_LOOP}
    out[i] = cpn_binomial(g, nn[i * nstep], pp[i * pstep]);
  }}
}}"""
    return Kernel("cpn_rng_binomial", [("char*", PTR), ("const char*", PTR),
                                       ("const long long", I64), ("const char*", PTR),
                                       ("const long long", I64), ("const long long", I64),
                                       *_TAIL], body, PRELUDE)


def random01_kernel(char: str) -> Kernel:
    """out[i] uniform in [0, 1) as NumPy's ``random`` maps bits: float32 from the top 24
    bits of a 32-bit word, float64 from the top 53 of a 64-bit pair.  One Philox block
    per thread per round gives 4 floats or 2 doubles, stored as one 16-byte vector."""
    if char == "f":
        per, conv = 4, ["(float)(r.buf[%d] >> 8) * 5.9604644775390625e-08f" % j
                        for j in range(4)]
        vec = "float4"
    else:
        per, conv = 2, ["(double)((((unsigned long long)r.buf[%d] << 32) | r.buf[%d]) >> 11)"
                        " * 1.1102230246251565e-16" % (2 * j, 2 * j + 1) for j in range(2)]
        vec = "double2"
    t = {"f": "float", "d": "double"}[char]
    comps = "xyzw"[:per]
    body = f"""{{
  {t}* out = ({t}*)p_0; const long long n = p_1;
  const unsigned k0 = p_2, k1 = p_3, call = p_4;
  for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q * {per} < n;
       q += (long long)gridDim.x * blockDim.x) {{
    cpn_rng r; r.init(k0, k1, q, call); r.block();
    const {t} v[{per}] = {{{", ".join(conv)}}};
    const long long i = q * {per};
    if (i + {per} <= n) {{
      {vec} w; {" ".join(f"w.{c} = v[{j}];" for j, c in enumerate(comps))}
      *({vec}*)(out + i) = w;
    }} else {{
      for (int j = 0; j < {per} && i + j < n; ++j) out[i + j] = v[j];
    }}
  }}
}}"""
    return Kernel(f"cpn_rng_random01_{char}", [("char*", PTR), ("const long long", I64),
                                               *_TAIL], body, PRELUDE)


# The per-element samplers of NumPy's other distributions: kind -> (output type, parameter
# types, the device call over the parameter values p0, p1, ...).  Parameters are validated
# by the frontend, as NumPy validates them, before the launch.
SAMPLERS = {
    "hypergeometric": ("long long", ("long long",) * 3, "cpn_hypergeometric(g, p0, p1, p2)"),
    "logseries": ("long long", ("double",), "cpn_logseries(g, p0)"),
    "zipf": ("long long", ("double",), "cpn_zipf(g, p0)"),
    "vonmises": ("double", ("double", "double"), "cpn_vonmises(g, p0, p1)"),
}


@functools.lru_cache(maxsize=None)
def sampler_kernel(kind: str) -> Kernel:
    """out[i] = SAMPLERS[kind](params[j][i * step_j]); steps are 0 (a scalar) or 1."""
    out_t, param_ts, call_expr = SAMPLERS[kind]
    k = len(param_ts)
    loads = "".join(f"  const {t}* a{j} = (const {t}*)p_{1 + 2 * j}; "
                    f"const long long s{j} = p_{2 + 2 * j};\n" for j, t in enumerate(param_ts))
    values = " ".join(f"const {t} p{j} = a{j}[i * s{j}];" for j, t in enumerate(param_ts))
    body = f"""{{
  {out_t}* out = ({out_t}*)p_0;
{loads}  const long long n = p_{2 * k + 1};
  const unsigned k0 = p_{2 * k + 2}, k1 = p_{2 * k + 3}, call = p_{2 * k + 4};
  {_LOOP}
    {values}
    out[i] = {call_expr};
  }}
}}"""
    params = [("char*", PTR)]
    for _ in param_ts:
        params += [("const char*", PTR), ("const long long", I64)]
    return Kernel(f"cpn_rng_{kind}", params + [("const long long", I64), *_TAIL], body,
                  PRELUDE)


@functools.lru_cache(maxsize=None)
def mvhypergeometric_kernel() -> Kernel:
    """Row i of out (rows x ncolors) = one multivariate hypergeometric variate of
    ``nsample`` draws from ``colors``, by NumPy's 'marginals' method: a hypergeometric
    draw per color from the items left; more than half the total is drawn as its
    complement.  One thread per row: the colors are sequential by nature."""
    body = f"""{{
  long long* out = (long long*)p_0; const long long* colors = (const long long*)p_1;
  const long long ncolors = p_2, total = p_3, nsample = p_4, n = p_5;
  const unsigned k0 = p_6, k1 = p_7, call = p_8;
  const int upper = nsample > total / 2;
  const long long todo = upper ? total - nsample : nsample;
  {_LOOP}
    long long* row = out + i * ncolors;
    long long left = todo, rest = total;
    for (long long j = 0; j < ncolors; ++j) row[j] = 0;
    for (long long j = 0; left > 0 && j + 1 < ncolors; ++j) {{
      rest -= colors[j];
      const long long r = cpn_hypergeometric(g, colors[j], rest, left);
      row[j] = r; left -= r;
    }}
    if (left > 0) row[ncolors - 1] = left;
    if (upper) for (long long j = 0; j < ncolors; ++j) row[j] = colors[j] - row[j];
  }}
}}"""
    return Kernel("cpn_rng_mvhypergeometric",
                  [("char*", PTR), ("const char*", PTR)] + [("const long long", I64)] * 4 +
                  _TAIL, body, PRELUDE)


def all_kernels():
    return [gamma_kernel("f"), gamma_kernel("d"), poisson_kernel(), binomial_kernel(),
            random01_kernel("f"), random01_kernel("d"),
            *(sampler_kernel(kind) for kind in SAMPLERS), mvhypergeometric_kernel()]


def _step(a, n):
    return 0 if a._size == 1 and n != 1 else 1


def draw(kind: str, out, params, key, call) -> None:
    """``out`` (C-contiguous, n elements): kind 'random01' (out float32/64 in [0, 1), no
    params; 16-byte aligned), 'gamma' (out float32/64; params (alpha
    float64, log flag)), 'poisson' (out int64; params (lam float64,)), 'binomial' (out
    int64; params (n int64, p float64)), a kind of ``SAMPLERS`` (out its type; params
    its parameter types), 'mvhypergeometric' (out int64 (rows, ncolors); params (colors
    int64 device array, nsample, sum of colors)).  Parameter arrays are C-contiguous with 1
    or n elements (1: the same value for all)."""
    n = out._size
    if n == 0:
        return
    t = tuning.RANDOM
    block = t.block
    grid = max(1, min((n + block - 1) // block, DEV.sm_count() * t.grid_per_sm))
    k0, k1 = key
    if kind == "random01":  # out 16-byte aligned (a fresh allocation), float32/64
        per = 4 if out.dtype.char == "f" else 2
        grid = max(1, min((n + block * per - 1) // (block * per),
                          DEV.sm_count() * t.grid_per_sm))
        DEV.launch(random01_kernel(out.dtype.char), grid, block, [dptr(out), n, k0, k1, call])
    elif kind == "gamma":
        alpha, lg = params
        DEV.launch(gamma_kernel(out.dtype.char), grid, block,
                   [dptr(out), dptr(alpha), _step(alpha, n), n, k0, k1, call, int(lg)])
    elif kind == "poisson":
        (lam,) = params
        DEV.launch(poisson_kernel(), grid, block,
                   [dptr(out), dptr(lam), _step(lam, n), n, k0, k1, call])
    elif kind == "binomial":
        nn, pp = params
        DEV.launch(binomial_kernel(), grid, block,
                   [dptr(out), dptr(nn), _step(nn, n), dptr(pp), _step(pp, n), n, k0, k1, call])
    elif kind in SAMPLERS:
        args = [dptr(out)]
        for a in params:
            args += [dptr(a), _step(a, n)]
        DEV.launch(sampler_kernel(kind), grid, block, args + [n, k0, k1, call])
    elif kind == "mvhypergeometric":
        colors, nsample, total = params
        rows = n // colors._size
        grid = max(1, min((rows + block - 1) // block, DEV.sm_count() * t.grid_per_sm))
        DEV.launch(mvhypergeometric_kernel(), grid, block,
                   [dptr(out), dptr(colors), colors._size, int(total), int(nsample), rows,
                    k0, k1, call])
    else:
        raise ValueError(kind)
