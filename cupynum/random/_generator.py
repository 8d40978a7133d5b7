"""numpy.random's Generator and legacy API over the backend's Philox streams (cuRAND).

Base streams come from the backend (``Backend.rng_fill(state, kind, out)``: uniform (0, 1],
standard normal, raw uint32 bits, Poisson); the distributions below are composed from them
with cupynum ufuncs.  Distributions that need rejection or inversion loops per element
(gamma, binomial, Poisson, hypergeometric, logseries, zipf, von Mises, ...) are Philox
kernels of the backend (``Backend.rng_draw(state, kind, out, params)``, cuda/rng.py), with
NumPy's algorithms and NumPy's parameter checks here.  Nothing is drawn by NumPy on the
host (except on the host backend, which stands in for the kernels with NumPy).  Streams
differ from NumPy's for the same seed (docs/differences.md).
"""
from __future__ import annotations

import operator
import warnings
import threading
from types import SimpleNamespace

import numpy as np

from .. import _backends
from .._api import creation, indexing, manipulation, products, reductions, sorting
from .._api.elementwise import where
from .._array import empty_array, ndarray
from .._dtypes import normalize
from .._indexing import normalize_axis
from .._ufunc import UFUNCS, uf


def _check_out(out, dtype, size):
    """NumPy's checks of a draw's ``out=``, in its order: C or F layout, exactly the draw's
    dtype (never a silent cast), and the shape ``size`` names when both are given."""
    if out is None:
        return
    if not isinstance(out, ndarray) or not (out.flags.c_contiguous or out.flags.f_contiguous):
        raise ValueError("Supplied output array must be contiguous, writable, aligned, and in "
                         "machine byte-order.")
    if out.dtype != dtype:
        raise TypeError(f"Supplied output array has the wrong type. Expected {dtype}, got "
                        f"{out.dtype}")
    if size is not None:
        wanted = tuple(size) if np.iterable(size) else (size,)
        if wanted != out.shape:
            raise ValueError("size must match out.shape when used together")


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        if type(size) is bool:
            raise TypeError(f"expected a sequence of integers or a single integer, got "
                            f"'{size}'")
        size = (size,)
    size = tuple(operator.index(n) for n in size)
    if any(n < 0 for n in size):
        raise ValueError("negative dimensions are not allowed")
    return size


def _host_value(x):
    if isinstance(x, ndarray):
        return x._host()
    return x


_POISSON_LAM_MAX = float(np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10)
_HYPERGEOM_MAX = 10**9
_INT64_MAX = int(np.iinfo(np.int64).max)


def _nan_words(x):
    """The tail of NumPy's bounds message: scalars 'is NaN', arrays 'contains NaNs'."""
    return "is NaN" if np.ndim(x) == 0 else "contains NaNs"


def _as_int64(x):
    """An integer parameter as NumPy takes it (a cast to int64: floats truncate)."""
    if isinstance(x, ndarray):
        return x.astype(np.int64, copy=False)
    return np.asarray(x).astype(np.int64)


def _host_colors(colors):
    """multivariate_hypergeometric's colors on the host (a short 1-d list), checked as
    NumPy checks them."""
    try:
        c = np.asarray(_host_value(colors))
        ok = c.ndim == 1 and (c.size == 0 or np.issubdtype(c.dtype, np.integer)) and \
            not np.any((c < 0) | (c > _INT64_MAX))
    except (ValueError, TypeError, OverflowError):
        ok = False
    if not ok:
        raise ValueError("colors must be a one-dimensional sequence of nonnegative integers "
                         f"not exceeding {_INT64_MAX}.")
    return np.ascontiguousarray(c, dtype=np.int64)


# The ``xp`` of the parameter checks for device values: NumPy's names, over cupynum arrays.
_DEVICE_XP = SimpleNamespace(**UFUNCS, asarray=creation.asarray, any=reductions.any)


def _bad(x, test) -> bool:
    """Whether ``test(xp, x)`` holds anywhere: on the host for host values, else one
    device reduction read back (the sync point of a parameter check)."""
    if isinstance(x, ndarray):
        return bool(reductions.any(test(_DEVICE_XP, x)))
    with np.errstate(invalid="ignore"):
        return bool(np.any(test(np, np.asarray(x))))


def _neg(xp, v):
    return xp.less(v, 0)


def _nonpos(xp, v):
    return xp.less_equal(v, 0)


def _require(x, msg, test):
    if _bad(x, test):
        raise ValueError(msg)


def _dev(x):
    """A host parameter as a float64 device array (ufuncs of two Python scalars are not
    all supported); device arrays as they are."""
    return x if isinstance(x, ndarray) else creation.asarray(np.asarray(x, np.float64))


def _param(x, dtype, shape):
    """A distribution parameter as a C-contiguous device array of ``dtype`` holding 1
    element (a scalar) or one per output element (broadcast to ``shape``)."""
    if not isinstance(x, ndarray) and np.ndim(x) == 0:
        return creation.asarray(np.asarray([x]).astype(dtype))
    a = x if isinstance(x, ndarray) else creation.asarray(np.asarray(x))
    if a._size == 1:
        return creation.ascontiguousarray(a.reshape(1).astype(dtype))
    a = manipulation.broadcast_to(a, shape)
    return creation.ascontiguousarray(a.astype(dtype, copy=False))


class Philox:
    """cupynum's bit generator: a seed for the backend's Philox4x32-10 streams (cuRAND
    and the sampler kernels on CUDA)."""

    def __init__(self, seed=None):
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        self.seed_seq = ss
        words = ss.generate_state(2, np.uint64)
        self._seed = int(words[0])
        self._state = None

    @property
    def _seed_seq(self):
        # NumPy's bit generators carry their SeedSequence under this name too, and Dask
        # spawns per-chunk generators from it (da.random with cupynum chunks).
        return self.seed_seq

    def _backend_state(self):
        if self._state is None:
            # Random numbers are drawn on the device backend whatever their placement, so a
            # seed gives the same values wherever they land (docs/guide/placement.md).
            self._state = _backends.for_side("device").rng_state(self._seed)
        return self._state

    def fill(self, kind, out, param=None):
        if out._size:
            _backends.for_device_writing(out).rng_fill(self._backend_state(), kind, out, param)
            _backends.settle(out)
        return out

    def draw(self, kind, out, params):
        if out._size:
            _backends.for_device_writing(out).rng_draw(self._backend_state(), kind, out, params)
            _backends.settle(out)
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
        _check_out(out, dt, size)
        return self._out(self._draw("random01", self._size(size, out), dt), out)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        dt = self._float_dtype(dtype)
        _check_out(out, dt, size)
        return self._out(self._base("normal", self._size(size, out), dt), out)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        dt = self._float_dtype(dtype)
        _check_out(out, dt, size)
        u = self._base("uniform", self._size(size, out), dt)
        return self._out(uf.negative(uf.log(u, out=u), out=u), out)

    # --- composed distributions ---------------------------------------------------------
    def _nonneg(self, name, x):
        if np.any(np.asarray(_host_value(x)) < 0):
            raise ValueError(f"{name} < 0")

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._uniform(low, high, size, legacy=False)

    def _uniform(self, low, high, size, legacy):
        """NumPy's checks: the range must be finite, and (Generator only) not negative."""
        span = np.subtract(_host_value(high), _host_value(low), dtype=np.float64)
        if not legacy and np.any(span < 0):
            raise ValueError("high - low < 0")
        if not np.all(np.isfinite(span)):
            raise OverflowError("high - low range exceeds valid bounds")
        shape = self._size(size, None, low, high)
        r = self.random(shape)
        return uf.add(low, uf.multiply(uf.subtract(high, low), r))

    def normal(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        z = self.standard_normal(self._size(size, None, loc, scale))
        return uf.add(loc, uf.multiply(scale, z))

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        return uf.exp(self.normal(mean, sigma, size))

    def exponential(self, scale=1.0, size=None):
        self._nonneg("scale", scale)
        return uf.multiply(scale, self.standard_exponential(
            self._size(size, None, scale)))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        shape = self._size(size, None, loc, scale)
        e = self.standard_exponential(shape)
        sign = uf.subtract(uf.multiply(uf.less(self.random(shape), 0.5), 2.0), 1.0)
        return uf.add(loc, uf.multiply(scale, uf.multiply(sign, e)))

    def logistic(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        shape = self._size(size, None, loc, scale)
        u = self._base("uniform", shape, np.float64)  # (0, 1]
        v = uf.subtract(1, u)  # [0, 1)
        return uf.add(loc, uf.multiply(scale, uf.log(uf.divide(u, v))))

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        self._nonneg("scale", scale)
        e = self.standard_exponential(self._size(size, None, loc, scale))
        return uf.subtract(loc, uf.multiply(scale, uf.log(e)))

    def rayleigh(self, scale=1.0, size=None):
        self._nonneg("scale", scale)
        e = self.standard_exponential(self._size(size, None, scale))
        return uf.multiply(scale, uf.sqrt(uf.multiply(2.0, e)))

    def weibull(self, a, size=None):
        self._nonneg("a", a)
        e = self.standard_exponential(self._size(size, None, a))
        return uf.power(e, uf.divide(1.0, a))

    def pareto(self, a, size=None):
        _require(a, "a <= 0", _nonpos)
        e = self.standard_exponential(self._size(size, None, a))
        return uf.expm1(uf.divide(e, a))

    def standard_cauchy(self, size=None):
        shape = self._size(size, None)
        return uf.divide(self.standard_normal(shape), self.standard_normal(shape))

    def geometric(self, p, size=None):
        ph = np.asarray(_host_value(p))
        if np.any(ph <= 0) or np.any(ph > 1) or np.any(np.isnan(ph)):
            raise ValueError("p <= 0, p > 1 or p contains NaNs")
        u = self._base("uniform", self._size(size, None, p), np.float64)  # (0, 1]
        k = uf.ceil(uf.divide(uf.log(u), uf.log1p(uf.negative(p))))
        return uf.maximum(k, 1).astype(np.int64)

    def poisson(self, lam=1.0, size=None):
        if _bad(lam, lambda xp, v: xp.logical_or(xp.less(v, 0), xp.isnan(v))):
            raise ValueError("lam < 0 or lam is NaN")
        if _bad(lam, lambda xp, v: xp.greater(v, _POISSON_LAM_MAX)):
            raise ValueError("lam value too large")
        if isinstance(lam, (int, float, np.integer, np.floating)) and 0 < lam < 1e7:
            shape = self._size(size, None)
            return self._base("poisson", shape, np.uint32, float(lam)).astype(np.int64)
        return self._draw("poisson", self._size(size, None, lam), np.int64, lam)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        dt = normalize(dtype)
        if dt.kind not in "iub":
            raise TypeError(f"Unsupported dtype {dt!r} for integers")
        if isinstance(low, ndarray) or isinstance(high, ndarray) or np.ndim(low) or \
                np.ndim(high):
            return self._integers_array(low, high, size, dt, endpoint)
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
        shape = _shape(size)
        bits = self._base("bits", shape, np.uint32).astype(np.uint64)
        if span <= 2**32:  # multiply-shift: (bits * span) >> 32, in [0, span)
            off = uf.right_shift(uf.multiply(bits, np.uint64(span)), np.uint64(32))
        else:
            hi = self._base("bits", shape, np.uint32).astype(np.uint64)
            wide = uf.bitwise_or(uf.left_shift(hi, np.uint64(32)), bits)
            off = wide if span == 2**64 else uf.remainder(wide, np.uint64(span))
        res = uf.add(off, np.uint64(low % 2**64))  # wraps modulo 2**64, as intended
        if dt.kind == "i":
            res = res.view(np.int64)
        return res.astype(dt)

    def _integers_array(self, low, high, size, dt, endpoint):
        """``integers`` with array bounds: the scalar path's mappings per element (multiply-
        shift of 32 random bits below spans of 2^32, a 64-bit draw modulo the span above),
        in uint64 arithmetic that wraps as the scalar path's Python ints do."""
        wdt = np.dtype(np.uint64 if dt == np.uint64 else np.int64)
        lo = creation.asarray(low).astype(wdt, copy=False) if isinstance(low, ndarray) else \
            creation.asarray(np.asarray(low).astype(wdt))
        hi = creation.asarray(high).astype(wdt, copy=False) if isinstance(high, ndarray) else \
            creation.asarray(np.asarray(high).astype(wdt))
        lo_lim, hi_lim = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min),
                                                         int(np.iinfo(dt).max))
        info = np.iinfo(wdt)
        if lo_lim > info.min and _bad(lo, lambda xp, v: xp.less(v, wdt.type(lo_lim))):
            raise ValueError("low is out of bounds for " + dt.name)
        top_lim = hi_lim if endpoint else hi_lim + 1
        if top_lim < info.max and _bad(hi, lambda xp, v: xp.greater(v, wdt.type(top_lim))):
            raise ValueError("high is out of bounds for " + dt.name)
        order = (lambda xp, v: xp.greater(v[0], v[1])) if endpoint else \
            (lambda xp, v: xp.greater_equal(v[0], v[1]))
        if bool(reductions.any(order(_DEVICE_XP, manipulation.broadcast_arrays(lo, hi)))):
            raise ValueError("low > high" if endpoint else "low >= high")
        shape = _shape(size) if size is not None else np.broadcast_shapes(lo.shape, hi.shape)
        u64 = np.uint64
        lo_u = manipulation.broadcast_to(lo.astype(u64), shape)
        top_u = manipulation.broadcast_to(hi.astype(u64), shape)
        if not endpoint:
            top_u = uf.subtract(top_u, u64(1))
        span = uf.add(uf.subtract(top_u, lo_u), u64(1))  # 0 stands for 2^64
        bits = self._base("bits", shape, np.uint32).astype(u64)
        small = uf.logical_and(uf.less_equal(span, u64(2**32)), uf.not_equal(span, u64(0)))
        off = uf.right_shift(uf.multiply(bits, where(small, span, u64(0))), u64(32))
        if not bool(reductions.all(small)):
            wide = uf.bitwise_or(uf.left_shift(
                self._base("bits", shape, np.uint32).astype(u64), u64(32)), bits)
            full = uf.equal(span, u64(0))
            big = where(full, wide, uf.remainder(wide, where(full, u64(1), span)))
            off = where(small, off, big)
        res = uf.add(off, lo_u)
        if dt.kind == "i":
            res = res.view(np.int64)
        return res.astype(dt)

    # --- rejection samplers (Backend.rng_draw) ----------------------------------------------
    def _draw(self, kind, shape, dtype, *params, lg=None):
        out = empty_array(shape, normalize(dtype))
        if out._size:
            dts = {"gamma": (np.float64,), "poisson": (np.float64,),
                   "binomial": (np.int64, np.float64), "random01": (),
                   "hypergeometric": (np.int64,) * 3, "logseries": (np.float64,),
                   "zipf": (np.float64,), "vonmises": (np.float64,) * 2}[kind]
            ps = tuple(_param(p, dt, shape) for p, dt in zip(params, dts))
            self._bit_generator.draw(kind, out, ps + ((bool(lg),) if kind == "gamma" else ()))
        return out

    def _log_gamma(self, a, shape):
        """log of standard gamma draws (finite where the draw underflows)."""
        return self._draw("gamma", shape, np.float64, a, lg=True)

    def standard_gamma(self, shape, size=None, dtype=np.float64, out=None):
        dt = self._float_dtype(dtype)
        _check_out(out, dt, size)
        _require(shape, "shape < 0", _neg)
        res = self._draw("gamma", self._size(size, out, shape), dt, shape, lg=False)
        return self._out(res, out)

    def gamma(self, shape, scale=1.0, size=None):
        _require(shape, "shape < 0", _neg)
        _require(scale, "scale < 0", _neg)
        g = self.standard_gamma(shape, self._size(size, None, shape, scale))
        return uf.multiply(g, scale)

    def beta(self, a, b, size=None):
        _require(a, "a <= 0", _nonpos)
        _require(b, "b <= 0", _nonpos)
        shape = self._size(size, None, a, b)
        lx, ly = self._log_gamma(a, shape), self._log_gamma(b, shape)
        return uf.divide(1.0, uf.add(1.0, uf.exp(uf.subtract(ly, lx))))  # X / (X + Y)

    def chisquare(self, df, size=None):
        _require(df, "df <= 0", _nonpos)
        return uf.multiply(2.0, self.standard_gamma(
            uf.multiply(_dev(df), 0.5), self._size(size, None, df)))

    def standard_t(self, df, size=None):
        _require(df, "df <= 0", _nonpos)
        shape = self._size(size, None, df)
        half = uf.multiply(_dev(df), 0.5)
        z, g = self.standard_normal(shape), self.standard_gamma(half, shape)
        return uf.multiply(uf.sqrt(half), uf.divide(z, uf.sqrt(g)))

    def f(self, dfnum, dfden, size=None):
        _require(dfnum, "dfnum <= 0", _nonpos)
        _require(dfden, "dfden <= 0", _nonpos)
        shape = self._size(size, None, dfnum, dfden)
        num = uf.multiply(self.chisquare(dfnum, shape), dfden)
        return uf.divide(num, uf.multiply(self.chisquare(dfden, shape), dfnum))

    def noncentral_chisquare(self, df, nonc, size=None):
        _require(df, "df <= 0", _nonpos)
        _require(nonc, "nonc < 0", _neg)
        shape = self._size(size, None, df, nonc)
        df, nonc = _dev(df), _dev(nonc)
        # df > 1: chi2(df - 1) + (Z + sqrt(nonc))^2; else chi2(df + 2 Poisson(nonc / 2))
        zs = uf.add(self.standard_normal(shape), uf.sqrt(nonc))
        big = uf.add(self.chisquare(uf.maximum(uf.subtract(df, 1), 1e-300), shape),
                     uf.multiply(zs, zs))
        i = self._draw("poisson", shape, np.int64, uf.multiply(nonc, 0.5))
        small = self.chisquare(uf.add(df, uf.multiply(2.0, i)), shape)
        return where(uf.greater(df, 1), big, small)

    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        _require(dfnum, "dfnum <= 0", _nonpos)
        _require(dfden, "dfden <= 0", _nonpos)
        _require(nonc, "nonc < 0", _neg)
        shape = self._size(size, None, dfnum, dfden, nonc)
        t = uf.multiply(self.noncentral_chisquare(dfnum, nonc, shape), dfden)
        return uf.divide(t, uf.multiply(self.chisquare(dfden, shape), dfnum))

    def dirichlet(self, alpha, size=None):
        al = alpha if isinstance(alpha, ndarray) else np.asarray(alpha, np.float64)
        if al.ndim != 1:
            raise ValueError("alpha must be a one-dimensional sequence of floats")
        _require(al, "alpha < 0", _neg)
        if _bad(al, lambda xp, v: xp.isnan(v)):
            raise ValueError("alpha contains NaN")
        shape = _shape(size) + (al.shape[0] if isinstance(al, np.ndarray) else al._shape[0],)
        lg = self._log_gamma(al, shape)
        m = reductions.max(lg, axis=-1, keepdims=True)
        e = uf.exp(uf.subtract(lg, where(uf.isfinite(m), m, 0)))
        tot = reductions.sum(e, axis=-1, keepdims=True)
        return where(uf.greater(tot, 0), uf.divide(e, where(uf.greater(tot, 0), tot, 1)),
                        0.0)

    def binomial(self, n, p, size=None):
        _require(n, "n < 0", _neg)
        if _bad(p, lambda xp, v: xp.logical_or(xp.logical_or(xp.less(v, 0), xp.greater(v, 1)),
                                                 xp.isnan(v))):
            raise ValueError("p < 0, p > 1 or p is NaN")
        return self._draw("binomial", self._size(size, None, n, p), np.int64, n, p)

    def negative_binomial(self, n, p, size=None):
        _require(n, "n <= 0", _nonpos)
        if _bad(p, lambda xp, v: xp.logical_or(xp.logical_or(xp.less_equal(v, 0),
                                                              xp.greater(v, 1)), xp.isnan(v))):
            raise ValueError("p <= 0, p > 1 or p contains NaNs")
        shape = self._size(size, None, n, p)
        p = _dev(p)
        y = uf.multiply(self.standard_gamma(n, shape), uf.divide(uf.subtract(1.0, p), p))
        return self._draw("poisson", shape, np.int64, y)

    def power(self, a, size=None):
        _require(a, "a <= 0", _nonpos)
        e = self.standard_exponential(self._size(size, None, a))
        return uf.power(uf.negative(uf.expm1(uf.negative(e))), uf.divide(1.0, _dev(a)))

    def triangular(self, left, mode, right, size=None):
        if _bad(np.subtract(_host_value(left), _host_value(mode)), lambda xp, v: xp.greater(v, 0)):
            raise ValueError("left > mode")
        if _bad(np.subtract(_host_value(mode), _host_value(right)), lambda xp, v: xp.greater(v, 0)):
            raise ValueError("mode > right")
        if _bad(np.subtract(_host_value(left), _host_value(right)), lambda xp, v: xp.equal(v, 0)):
            raise ValueError("left == right")
        shape = self._size(size, None, left, mode, right)
        lo, md, hi = _dev(left), _dev(mode), _dev(right)
        base, lbase = uf.subtract(hi, lo), uf.subtract(md, lo)
        u = self.random(shape)
        below = uf.add(lo, uf.sqrt(uf.multiply(uf.multiply(u, lbase), base)))
        above = uf.subtract(hi, uf.sqrt(uf.multiply(uf.multiply(uf.subtract(1.0, u),
                                                                uf.subtract(hi, md)), base)))
        return where(uf.less_equal(u, uf.divide(lbase, base)), below, above)

    def wald(self, mean, scale, size=None):
        _require(mean, "mean <= 0", _nonpos)
        _require(scale, "scale <= 0", _nonpos)
        shape = self._size(size, None, mean, scale)
        mu, sc = _dev(mean), _dev(scale)
        y = uf.multiply(uf.square(self.standard_normal(shape)), mu)
        x = uf.add(mu, uf.multiply(uf.divide(mu, uf.multiply(2.0, sc)), uf.subtract(
            y, uf.sqrt(uf.add(uf.multiply(uf.multiply(4.0, sc), y), uf.square(y))))))
        u = self.random(shape)
        return where(uf.less_equal(u, uf.divide(mu, uf.add(mu, x))), x,
                        uf.divide(uf.square(mu), x))

    def vonmises(self, mu, kappa, size=None):
        _require(kappa, "kappa < 0", _neg)  # (a NaN kappa draws NaN, as NumPy)
        shape = self._size(size, None, mu, kappa)
        return self._draw("vonmises", shape, np.float64, mu, kappa)

    # --- discrete samplers of cuda/rng.SAMPLERS (NumPy's algorithms and checks) ------------
    def hypergeometric(self, ngood, nbad, nsample, size=None):
        return self._hypergeometric(ngood, nbad, nsample, size, legacy=False)

    def _hypergeometric(self, ngood, nbad, nsample, size, legacy):
        """NumPy's checks (the Generator's, or RandomState's: nsample >= 1 and no 10**9
        limit), then the kernel."""
        good, bad, sample = (_as_int64(x) for x in (ngood, nbad, nsample))
        xp = np
        if any(isinstance(x, ndarray) for x in (good, bad, sample)):  # checked on the device
            xp = _DEVICE_XP
            good, bad, sample = (xp.asarray(x) for x in (good, bad, sample))
        if legacy:
            for name, x in (("ngood", good), ("nbad", bad)):
                _require(x, f"{name} < 0", _neg)
            _require(sample, "nsample < 1 or nsample is NaN", lambda xp, v: xp.less(v, 1))
        elif bool(xp.any(xp.greater_equal(good, _HYPERGEOM_MAX))) or \
                bool(xp.any(xp.greater_equal(bad, _HYPERGEOM_MAX))):
            raise ValueError(f"both ngood and nbad must be less than {_HYPERGEOM_MAX}")
        if bool(xp.any(xp.less(xp.add(good, bad), sample))):
            raise ValueError("ngood + nbad < nsample")
        for name, x in (("ngood", good), ("nbad", bad), ("nsample", sample)):
            _require(x, f"{name} < 0", _neg)
        shape = self._size(size, None, ngood, nbad, nsample)
        return self._draw("hypergeometric", shape, np.int64, good, bad, sample)

    def logseries(self, p, size=None):
        if _bad(p, lambda xp, v: xp.logical_not(xp.logical_and(xp.greater_equal(v, 0),
                                                                xp.less(v, 1)))):
            raise ValueError("p < 0, p >= 1 or p " + _nan_words(p))
        return self._draw("logseries", self._size(size, None, p), np.int64, p)

    def zipf(self, a, size=None):
        if _bad(a, lambda xp, v: xp.logical_not(xp.greater(v, 1))):
            raise ValueError("a <= 1 or a " + _nan_words(a))
        return self._draw("zipf", self._size(size, None, a), np.int64, a)

    def multivariate_hypergeometric(self, colors, nsample, size=None, method="marginals"):
        """Both methods draw by 'marginals' on the device (the same distribution); each
        keeps its own limits on sum(colors), as NumPy's."""
        if method not in ("count", "marginals"):
            raise ValueError('method must be "count" or "marginals".')
        try:
            nsample = operator.index(nsample)
        except TypeError:
            raise ValueError("nsample must be an integer") from None
        if nsample < 0:
            raise ValueError("nsample must be nonnegative.")
        col = _host_colors(colors)
        total = sum(int(c) for c in col)  # Python ints: the overflow check is exact
        if total > _INT64_MAX:
            raise ValueError("sum(colors) must not exceed the maximum value of a 64 bit "
                             f"signed integer ({_INT64_MAX})")
        if method == "marginals" and total >= _HYPERGEOM_MAX:
            raise ValueError('When method is "marginals", sum(colors) must be less than '
                             f"{_HYPERGEOM_MAX}.")
        if method == "count" and total > _INT64_MAX // 8:
            raise ValueError(f"When method is 'count', sum(colors) must not exceed "
                             f"{_INT64_MAX // 8}")
        if nsample > total:
            raise ValueError("nsample > sum(colors)")
        out = creation.zeros(_shape(size) + (col.size,), np.int64)
        if out._size and nsample:
            self._bit_generator.draw("mvhypergeometric", out,
                                     (creation.asarray(col), nsample, total))
        return out

    def bytes(self, length):
        words = self._base("bits", ((operator.index(length) + 3) // 4,), np.uint32)
        return words._host().tobytes()[:length]

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *,
                            method="svd"):
        """The samples and their product with the covariance factor on the device; the
        (d x d) factorisation on the host with NumPy's own checks and warnings."""
        mean_h = np.asarray(_host_value(mean), np.float64)
        cov_h = np.asarray(_host_value(cov), np.float64)
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        if mean_h.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        if cov_h.ndim != 2 or cov_h.shape[0] != cov_h.shape[1]:
            raise ValueError("cov must be 2 dimensional and square")
        d = mean_h.shape[0]
        if d != cov_h.shape[0]:
            raise ValueError("mean and cov must have same length")
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
        shape = _shape(size) + (d,)
        if method == "cholesky":
            factor = np.linalg.cholesky(cov_h).T
        elif method == "eigh":
            s, u = np.linalg.eigh(cov_h)
            self._check_psd(check_valid, tol, np.all(s >= -tol))
            factor = (u * np.sqrt(np.abs(s))).T
        else:
            u, s, vh = np.linalg.svd(cov_h)
            psd = np.allclose(np.dot(vh.T * s, vh), cov_h, rtol=tol, atol=tol)
            self._check_psd(check_valid, tol, psd)
            factor = np.sqrt(s)[:, None] * vh
        x = self.standard_normal(shape).reshape(-1, d)
        x = uf.add(products.matmul(x, creation.asarray(factor)), creation.asarray(mean_h))
        return x.reshape(shape)

    @staticmethod
    def _check_psd(check_valid, tol, psd):
        if check_valid != "ignore" and not psd:
            if check_valid == "warn":
                warnings.warn("covariance is not symmetric positive-semidefinite.",
                              RuntimeWarning, stacklevel=3)
            else:
                raise ValueError("covariance is not symmetric positive-semidefinite.")

    def multinomial(self, n, pvals, size=None):
        """Sequential conditional binomials (NumPy's method), vectorised over the draws;
        ``n`` and the leading dims of ``pvals`` broadcast as NumPy's do."""
        pv = np.asarray(_host_value(pvals), np.float64)
        if pv.ndim == 0:
            raise ValueError("pvals must have at least 1 dimension")
        if _bad(n, _neg):
            raise ValueError("n < 0")
        if np.any(pv < 0) or np.any(pv > 1) or np.any(np.isnan(pv)):
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if np.any(pv[..., :-1].sum(axis=-1) > 1.0 + 1e-12):
            raise ValueError("sum(pvals[:-1]) > 1.0")
        d = pv.shape[-1]
        n_shape = n._shape if isinstance(n, ndarray) else np.shape(n)
        shape = _shape(size) if size is not None else np.broadcast_shapes(n_shape,
                                                                          pv.shape[:-1])
        out = creation.zeros(shape + (d,), np.int64)
        n_dev = n if isinstance(n, ndarray) else creation.asarray(np.asarray(n, np.int64))
        left = creation.ascontiguousarray(manipulation.broadcast_to(n_dev.astype(np.int64), shape))
        rem_p = np.ones(pv.shape[:-1])
        for j in range(d - 1):
            with np.errstate(divide="ignore", invalid="ignore"):
                p = np.where(rem_p > 0, np.clip(pv[..., j] / rem_p, 0.0, 1.0), 0.0)
            x = self.binomial(left, p if p.ndim else float(p), shape)
            out[..., j] = x
            left = uf.subtract(left, x)
            rem_p = rem_p - pv[..., j]
        if d:
            out[..., d - 1] = left
        return out

    # --- permutations: argsort of random 64-bit keys -----------------------------------------
    def _keys(self, shape):
        bits = self._base("bits", tuple(shape) + (2,), np.uint32)
        return bits.view(np.uint64).reshape(shape)

    def _perm(self, n):
        return sorting.argsort(self._keys((n,)))

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if isinstance(a, (int, np.integer)):
            n, arr = int(a), None
            if n < 0 or (n == 0 and (size is None or np.prod(_shape(size)) > 0)):
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            arr = a if isinstance(a, ndarray) else creation.asarray(a)
            if arr.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not a 0-d array")
            n = arr._shape[axis]
            if n == 0 and (size is None or np.prod(_shape(size)) > 0):
                raise ValueError("a cannot be empty unless no samples are taken")
        shape = _shape(size)
        k = int(np.prod(shape))
        ph = None
        if p is not None:
            ph = np.asarray(_host_value(p), np.float64)  # validated on the host, as NumPy
            if ph.ndim != 1:
                raise ValueError("p must be 1-dimensional")
            if ph.size != n:
                raise ValueError("a and p must have same size")
            if np.isnan(ph).any():
                raise ValueError("Probabilities contain NaN")
            if (ph < 0).any():
                raise ValueError("Probabilities are not non-negative")
            if abs(ph.sum() - 1) > np.sqrt(np.finfo(np.float64).eps):
                raise ValueError("Probabilities do not sum to 1")
        if not replace:
            if k > n:
                raise ValueError("Cannot take a larger sample than population when "
                                 "replace is False")
            if ph is not None and np.count_nonzero(ph) < k:
                raise ValueError("Fewer non-zero entries in p than size")
        if k == 0:
            idx = creation.zeros(shape, np.int64)
        elif replace and ph is None:
            idx = self.integers(0, n, size=size)
        elif replace:
            cdf = reductions.cumsum(creation.asarray(ph))
            cdf = uf.divide(cdf, cdf[-1])
            u = self.random(shape)
            idx = uf.minimum(sorting.searchsorted(cdf, u, side="right"), n - 1)
        else:
            if ph is None:
                order = self._perm(n)
            else:  # successive weighted draws = order of Exp(1) / p (Efraimidis-Spirakis)
                keys = uf.divide(self.standard_exponential(n), creation.asarray(ph))
                order = sorting.argsort(keys)
            idx = order[:k].reshape(shape)
        if arr is None:
            return idx
        ax = axis % arr.ndim
        return arr[(slice(None),) * ax + (idx,)]

    def permutation(self, x, axis=0):
        if isinstance(x, (int, np.integer)):
            return self._perm(max(int(x), 0))
        arr = x if isinstance(x, ndarray) else creation.asarray(x)
        if arr.ndim == 0:
            raise np.exceptions.AxisError("x must be an integer or at least 1-dimensional")
        ax = normalize_axis(axis, arr.ndim)
        perm = self._perm(arr._shape[ax])
        return arr[(slice(None),) * ax + (perm,)]

    def shuffle(self, x, axis=0):
        if not isinstance(x, ndarray):  # a Python list, shuffled in place as NumPy does
            if axis != 0:
                raise NotImplementedError("Axis argument is only supported on ndarray objects")
            order = self._perm(len(x)).tolist()
            x[:] = [x[i] for i in order]
            return
        if x.ndim == 0:
            raise TypeError("len() of unsized object")
        x[...] = self.permutation(x, axis)

    def permuted(self, x, axis=None, out=None):
        arr = x if isinstance(x, ndarray) else creation.asarray(x)
        if out is not None and out._shape != arr._shape:
            raise ValueError("out must have the same shape as x")
        if axis is None:
            flat = arr.reshape(-1)
            res = flat[self._perm(flat._size)].reshape(arr._shape)
        else:
            ax = normalize_axis(axis, arr.ndim)
            order = sorting.argsort(self._keys(arr._shape), axis=ax)
            res = indexing.take_along_axis(arr, order, axis=ax)
        if out is None:
            return res
        out[...] = res
        return out


_DISCRETE_DISTRIBUTIONS = (
    "hypergeometric", "logseries", "multivariate_hypergeometric", "zipf", "bytes")
_KERNEL_DISTRIBUTIONS = (
    "beta", "binomial", "chisquare", "dirichlet", "f", "gamma", "negative_binomial",
    "noncentral_chisquare", "noncentral_f", "power", "standard_gamma", "standard_t")


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
        self.seed(seed)

    def seed(self, seed=None):
        if seed is not None:
            np.random.RandomState(seed)  # NumPy's checks of a legacy seed (0 <= seed < 2**32)
        self._gen = Generator(Philox(seed))

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._gen._uniform(low, high, size, legacy=True)

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

    def hypergeometric(self, ngood, nbad, nsample, size=None):
        return self._gen._hypergeometric(ngood, nbad, nsample, size, legacy=True)

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
           "permutation", "shuffle", "multinomial", "multivariate_normal", "triangular",
           "vonmises", "wald") + _KERNEL_DISTRIBUTIONS + _DISCRETE_DISTRIBUTIONS
for _n in _LEGACY:
    globals()[_n] = _legacy(_n)
del _n

__all__ = ["Generator", "Philox", "BitGenerator", "default_rng", "RandomState", "seed",
           "get_state", *_LEGACY]
