"""numpy.random's Generator and legacy API over the backend's Philox streams (cuRAND).

Base streams come from the backend (``rng_state(seed).fill(kind, out)``: uniform (0, 1],
standard normal, raw uint32 bits, Poisson); the distributions below are composed from them
with cupynum ufuncs.  Distributions without a native recipe (gamma, beta, binomial, ...;
``_HOST_DISTRIBUTIONS``) are drawn by NumPy on the host from a second Philox stream of the
same seed and copied to the device: reproducible with a seed, but not fast.  Streams differ
from NumPy's for the same seed (docs/differences.md).
"""
from __future__ import annotations

import operator
import threading

import numpy as np

from .. import _backends
from .._array import empty_array, ndarray
from .._dtypes import normalize


def _cp():
    import cupynum

    return cupynum


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        size = (size,)
    size = tuple(operator.index(n) for n in size)
    if any(n < 0 for n in size):
        raise ValueError("negative dimensions are not allowed")
    return size


def _host_value(x):
    if isinstance(x, ndarray):
        return x._host()
    return x


class Philox:
    """cupynum's bit generator: a seed for the backend's Philox4x32-10 stream (cuRAND on
    CUDA) plus a NumPy Philox for the distributions drawn on the host."""

    def __init__(self, seed=None):
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self.seed_seq = ss
        words = ss.generate_state(2, np.uint64)
        self._seed = int(words[0])
        self._host = np.random.Generator(np.random.Philox(int(words[1])))
        self._state = None
        self.lock = threading.Lock()

    def _backend_state(self):
        if self._state is None:
            self._state = _backends.get().rng_state(self._seed)
        return self._state

    def fill(self, kind, out, param=None):
        if out._size:
            self._backend_state().fill(_backends.get(), kind, out, param)
        return out


BitGenerator = Philox


class Generator:
    """numpy.random.Generator over a cupynum Philox stream."""

    def __init__(self, bit_generator=None):
        if isinstance(bit_generator, np.random.BitGenerator):
            # a NumPy bit generator seeds ours (its stream itself stays on the host)
            bit_generator = Philox(np.random.SeedSequence(
                bit_generator.random_raw(4).tolist()))
        elif bit_generator is None or not isinstance(bit_generator, Philox):
            bit_generator = Philox(bit_generator)
        self._bit_generator = bit_generator

    @property
    def bit_generator(self):
        return self._bit_generator

    def __repr__(self):
        return "Generator(Philox) at 0x%X" % id(self)

    def spawn(self, n_children):
        return [Generator(Philox(s)) for s in self._bit_generator.seed_seq.spawn(n_children)]

    # --- base streams -------------------------------------------------------------------
    def _base(self, kind, shape, dtype, param=None):
        out = empty_array(shape, normalize(dtype))
        return self._bit_generator.fill(kind, out, param)

    def _out(self, res, out):
        if out is None:
            return res
        if out._shape != res._shape and res._shape != ():
            raise ValueError("size must match out.shape when used together")
        out[...] = res
        return out

    def _float_dtype(self, dtype):
        dt = np.dtype(dtype)
        if dt not in (np.float32, np.float64):
            raise TypeError(f"Unsupported dtype {dt!r} for this distribution")
        return normalize(dt)

    def _size(self, size, out, *params):
        if out is not None:
            return out._shape
        if size is not None:
            return _shape(size)
        shapes = [np.shape(p) if not isinstance(p, ndarray) else p._shape for p in params]
        return np.broadcast_shapes(*shapes) if shapes else ()

    def random(self, size=None, dtype=np.float64, out=None):
        dt = self._float_dtype(dtype)
        u = self._base("uniform", self._size(size, out), dt)
        return self._out(_cp().subtract(1, u, out=u), out)  # (0, 1] -> [0, 1)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        dt = self._float_dtype(dtype)
        return self._out(self._base("normal", self._size(size, out), dt), out)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        dt = self._float_dtype(dtype)
        u = self._base("uniform", self._size(size, out), dt)
        cp = _cp()
        return self._out(cp.negative(cp.log(u, out=u), out=u), out)

    # --- composed distributions ---------------------------------------------------------
    def _nonneg(self, name, x):
        if np.any(np.asarray(_host_value(x)) < 0):
            raise ValueError(f"{name} < 0")

    def uniform(self, low=0.0, high=1.0, size=None):
        cp = _cp()
        shape = self._size(size, None, low, high)
        r = self.random(shape)
        return cp.add(low, cp.multiply(cp.subtract(high, low), r))

    def normal(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        cp = _cp()
        z = self.standard_normal(self._size(size, None, loc, scale))
        return cp.add(loc, cp.multiply(scale, z))

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        return _cp().exp(self.normal(mean, sigma, size))

    def exponential(self, scale=1.0, size=None):
        self._nonneg("scale", scale)
        return _cp().multiply(scale, self.standard_exponential(
            self._size(size, None, scale)))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        cp = _cp()
        shape = self._size(size, None, loc, scale)
        e = self.standard_exponential(shape)
        sign = cp.subtract(cp.multiply(cp.less(self.random(shape), 0.5), 2.0), 1.0)
        return cp.add(loc, cp.multiply(scale, cp.multiply(sign, e)))

    def logistic(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        cp = _cp()
        shape = self._size(size, None, loc, scale)
        u = self._base("uniform", shape, np.float64)  # (0, 1]
        v = cp.subtract(1, u)  # [0, 1)
        return cp.add(loc, cp.multiply(scale, cp.log(cp.divide(u, v))))

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        cp = _cp()
        e = self.standard_exponential(self._size(size, None, loc, scale))
        return cp.subtract(loc, cp.multiply(scale, cp.log(e)))

    def rayleigh(self, scale=1.0, size=None):
        self._nonneg("scale", scale)
        cp = _cp()
        e = self.standard_exponential(self._size(size, None, scale))
        return cp.multiply(scale, cp.sqrt(cp.multiply(2.0, e)))

    def weibull(self, a, size=None):
        self._nonneg("a", a)
        cp = _cp()
        e = self.standard_exponential(self._size(size, None, a))
        return cp.power(e, cp.divide(1.0, a))

    def pareto(self, a, size=None):
        self._nonneg("a", a)
        cp = _cp()
        e = self.standard_exponential(self._size(size, None, a))
        return cp.expm1(cp.divide(e, a))

    def standard_cauchy(self, size=None):
        shape = self._size(size, None)
        return _cp().divide(self.standard_normal(shape), self.standard_normal(shape))

    def geometric(self, p, size=None):
        cp = _cp()
        ph = np.asarray(_host_value(p))
        if np.any(ph <= 0) or np.any(ph > 1) or np.any(np.isnan(ph)):
            raise ValueError("p <= 0, p > 1 or p contains NaNs")
        u = self._base("uniform", self._size(size, None, p), np.float64)  # (0, 1]
        k = cp.ceil(cp.divide(cp.log(u), cp.log1p(cp.negative(p))))
        return cp.maximum(k, 1).astype(np.int64)

    def poisson(self, lam=1.0, size=None):
        if isinstance(lam, (int, float, np.integer, np.floating)) and 0 < lam < 1e7:
            shape = self._size(size, None)
            return self._base("poisson", shape, np.uint32, float(lam)).astype(np.int64)
        return self._host_dist("poisson", lam, size=size)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        if isinstance(low, ndarray) or isinstance(high, ndarray) or np.ndim(low) or \
                np.ndim(high):
            return self._host_dist("integers", low, high, size=size, dtype=dtype,
                                   endpoint=endpoint)
        dt = normalize(dtype)
        if dt.kind not in "iub":
            raise TypeError(f"Unsupported dtype {dt!r} for integers")
        low, high = int(low), int(high)
        lo_lim, hi_lim = (0, 1) if dt.kind == "b" else (np.iinfo(dt).min, np.iinfo(dt).max)
        if low < lo_lim:
            raise ValueError("low is out of bounds for " + dt.name)
        top = high if endpoint else high - 1
        if top > hi_lim:
            raise ValueError("high is out of bounds for " + dt.name)
        if top < low:
            raise ValueError("low > high" if endpoint else "low >= high")
        span = top - low + 1
        cp = _cp()
        shape = _shape(size)
        bits = self._base("bits", shape, np.uint32).astype(np.uint64)
        if span <= 2**32:  # multiply-shift: (bits * span) >> 32, in [0, span)
            off = cp.right_shift(cp.multiply(bits, np.uint64(span)), np.uint64(32))
        else:
            hi = self._base("bits", shape, np.uint32).astype(np.uint64)
            wide = cp.bitwise_or(cp.left_shift(hi, np.uint64(32)), bits)
            off = wide if span == 2**64 else cp.remainder(wide, np.uint64(span))
        res = cp.add(off, np.uint64(low % 2**64))  # wraps modulo 2**64, as intended
        if dt.kind == "i":
            res = res.view(np.int64)
        return res.astype(dt)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if isinstance(a, (int, np.integer)):
            n, arr = int(a), None
        else:
            arr = a if isinstance(a, ndarray) else _cp().asarray(a)
            if arr.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not a 0-d array")
            n = arr._shape[axis]
        if replace and p is None and n > 0:
            idx = self.integers(0, n, size=size)
        else:
            with self._bit_generator.lock:
                host = self._bit_generator._host.choice(n, size=size, replace=replace,
                                                        p=_host_value(p), shuffle=shuffle)
            idx = _cp().asarray(host)
        if arr is None:
            return idx
        ax = axis % arr.ndim
        return arr[(slice(None),) * ax + (idx,)]

    def permutation(self, x, axis=0):
        if isinstance(x, (int, np.integer)):
            return self._host_dist("permutation", int(x))
        arr = x if isinstance(x, ndarray) else _cp().asarray(x)
        if arr.ndim == 0:
            raise np.exceptions.AxisError("x must be an integer or at least 1-dimensional")
        ax = axis % arr.ndim
        perm = self._host_dist("permutation", arr._shape[ax])
        return arr[(slice(None),) * ax + (perm,)]

    def shuffle(self, x, axis=0):
        if not isinstance(x, ndarray):
            raise TypeError("shuffle needs a cupynum array")
        x[...] = self.permutation(x, axis)

    def permuted(self, x, axis=None, out=None):
        return self._host_dist("permuted", x, axis=axis, out=out)

    # --- drawn on the host ---------------------------------------------------------------
    def _host_dist(self, name, *args, **kwargs):
        """Draw with NumPy on the host (reproducible from the seed), result to the device."""
        out = kwargs.pop("out", None)
        args = [_host_value(a) for a in args]
        kwargs = {k: _host_value(v) for k, v in kwargs.items()}
        with self._bit_generator.lock:
            res = getattr(self._bit_generator._host, name)(*args, **kwargs)
        res = _cp().asarray(res)
        return self._out(res, out) if out is not None else res


_HOST_DISTRIBUTIONS = (
    "beta", "binomial", "chisquare", "dirichlet", "f", "gamma", "hypergeometric",
    "logseries", "multinomial", "multivariate_hypergeometric", "multivariate_normal",
    "negative_binomial", "noncentral_chisquare", "noncentral_f", "power", "standard_gamma",
    "standard_t", "triangular", "vonmises", "wald", "zipf", "bytes")


def _host_method(name):
    def method(self, *args, **kwargs):
        return self._host_dist(name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"numpy.random.Generator.{name}, drawn on the host (see module doc)."
    return method


for _n in _HOST_DISTRIBUTIONS:
    setattr(Generator, _n, _host_method(_n))
del _n


def default_rng(seed=None):
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, Philox):
        return Generator(seed)
    return Generator(Philox(seed))


# --- legacy API ------------------------------------------------------------------------------

class RandomState:
    """numpy.random.RandomState's interface over a cupynum Generator (cuRAND streams)."""

    def __init__(self, seed=None):
        self._gen = Generator(Philox(seed))

    def seed(self, seed=None):
        self._gen = Generator(Philox(seed))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._gen, name)

    def rand(self, *shape):
        return self._gen.random(shape)

    def randn(self, *shape):
        return self._gen.standard_normal(shape)

    def random_sample(self, size=None):
        return self._gen.random(size)

    random = ranf = sample = random_sample

    def randint(self, low, high=None, size=None, dtype=int):
        return self._gen.integers(low, high, size=size, dtype=dtype)

    def random_integers(self, low, high=None, size=None):
        if high is None:
            low, high = 1, low
        return self._gen.integers(low, high, size=size, endpoint=True)

    def standard_normal(self, size=None):
        return self._gen.standard_normal(size)

    def standard_exponential(self, size=None):
        return self._gen.standard_exponential(size)

    def tomaxint(self, size=None):
        return self._gen.integers(0, np.iinfo(np.int64).max, size=size)


_global = RandomState()
_global_lock = threading.Lock()


def seed(seed=None):
    _global.seed(seed)


def get_state():
    raise NotImplementedError("cupynum.random: get_state is not supported (cuRAND Philox "
                              "state); reseed with cupynum.random.seed")


def _legacy(name):
    def fn(*args, **kwargs):
        return getattr(_global, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"numpy.random.{name} over cupynum's global RandomState (cuRAND streams)."
    return fn


_LEGACY = ("rand", "randn", "randint", "random_sample", "random", "ranf", "sample",
           "random_integers", "uniform", "normal", "standard_normal", "exponential",
           "standard_exponential", "lognormal", "laplace", "logistic", "gumbel", "rayleigh",
           "weibull", "pareto", "standard_cauchy", "geometric", "poisson", "choice",
           "permutation", "shuffle") + _HOST_DISTRIBUTIONS
for _n in _LEGACY:
    globals()[_n] = _legacy(_n)
del _n

__all__ = ["Generator", "Philox", "BitGenerator", "default_rng", "RandomState", "seed",
           "get_state", *_LEGACY]
