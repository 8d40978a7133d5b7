"""Bad input is refused exactly where NumPy refuses it, with NumPy's exception type, and
valid input NumPy accepts is accepted (issue 20, items 5 and 6).

A generated grid: functions (reductions, ufuncs, creation, manipulation, indexing, sorting,
statistics, linalg, fft, random) crossed with unusual arguments (axes, shapes, dtypes,
indices, sizes, parameters).  Each case is a function of the array module; it runs with
NumPy and with cupynum.  Where NumPy raises, cupynum must raise an instance of NumPy's
exception type (its nearest public class: ``AxisError``, ``LinAlgError``, ``TypeError``...);
where NumPy returns, cupynum must return the same result.  Random draws are compared by shape
and dtype only (the bit streams differ).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import cupynum as cp
from helpers import assert_same


def _a2(xp):
    return xp.arange(6.0).reshape(2, 3)


def _i2(xp):
    return xp.arange(6).reshape(2, 3)


# --- axes ------------------------------------------------------------------------------------
AXIS_FUNCS = {
    "sum": lambda xp, ax: xp.sum(_a2(xp), axis=ax),
    "method_sum": lambda xp, ax: _a2(xp).sum(axis=ax),
    "prod": lambda xp, ax: xp.prod(_a2(xp), axis=ax),
    "mean": lambda xp, ax: xp.mean(_a2(xp), axis=ax),
    "var": lambda xp, ax: xp.var(_a2(xp), axis=ax),
    "std": lambda xp, ax: xp.std(_a2(xp), axis=ax),
    "min": lambda xp, ax: xp.min(_a2(xp), axis=ax),
    "max": lambda xp, ax: xp.max(_a2(xp), axis=ax),
    "all": lambda xp, ax: xp.all(_a2(xp), axis=ax),
    "any": lambda xp, ax: xp.any(_a2(xp), axis=ax),
    "ptp": lambda xp, ax: xp.ptp(_a2(xp), axis=ax),
    "argmax": lambda xp, ax: xp.argmax(_a2(xp), axis=ax),
    "argmin": lambda xp, ax: xp.argmin(_a2(xp), axis=ax),
    "cumsum": lambda xp, ax: xp.cumsum(_a2(xp), axis=ax),
    "cumprod": lambda xp, ax: xp.cumprod(_a2(xp), axis=ax),
    "count_nonzero": lambda xp, ax: xp.count_nonzero(_a2(xp), axis=ax),
    "nansum": lambda xp, ax: xp.nansum(_a2(xp), axis=ax),
    "nanmean": lambda xp, ax: xp.nanmean(_a2(xp), axis=ax),
    "nanmax": lambda xp, ax: xp.nanmax(_a2(xp), axis=ax),
    "median": lambda xp, ax: xp.median(_a2(xp), axis=ax),
    "nanmedian": lambda xp, ax: xp.nanmedian(_a2(xp), axis=ax),
    "average": lambda xp, ax: xp.average(_a2(xp), axis=ax),
    "quantile": lambda xp, ax: xp.quantile(_a2(xp), 0.5, axis=ax),
    "add_reduce": lambda xp, ax: xp.add.reduce(_a2(xp), axis=ax),
    "sort": lambda xp, ax: xp.sort(_a2(xp), axis=ax),
    "argsort": lambda xp, ax: xp.argsort(_a2(xp), axis=ax),
    "flip": lambda xp, ax: xp.flip(_a2(xp), axis=ax),
    "expand_dims": lambda xp, ax: xp.expand_dims(_a2(xp), ax),
    "squeeze": lambda xp, ax: xp.squeeze(_a2(xp)[:1, :1], axis=ax),
    "concatenate": lambda xp, ax: xp.concatenate([_a2(xp), _a2(xp)], axis=ax),
    "stack": lambda xp, ax: xp.stack([_a2(xp), _a2(xp)], axis=ax),
    "take": lambda xp, ax: xp.take(_a2(xp), [0], axis=ax),
    "roll": lambda xp, ax: xp.roll(_a2(xp), 1, axis=ax),
    "diff": lambda xp, ax: xp.diff(_a2(xp), axis=ax),
    "repeat": lambda xp, ax: xp.repeat(_a2(xp), 2, axis=ax),
    "unique": lambda xp, ax: xp.unique(_a2(xp), axis=ax),
    "norm": lambda xp, ax: xp.linalg.norm(_a2(xp), axis=ax),
    "fft": lambda xp, ax: xp.fft.fft(_a2(xp), axis=ax),
    "fftn": lambda xp, ax: xp.fft.fftn(_a2(xp), axes=ax),
    "nanmin": lambda xp, ax: xp.nanmin(_a2(xp), axis=ax),
    "nanargmax": lambda xp, ax: xp.nanargmax(_a2(xp), axis=ax),
    "nanstd": lambda xp, ax: xp.nanstd(_a2(xp), axis=ax),
    "nanprod": lambda xp, ax: xp.nanprod(_a2(xp), axis=ax),
    "nancumsum": lambda xp, ax: xp.nancumsum(_a2(xp), axis=ax),
    "percentile": lambda xp, ax: xp.percentile(_a2(xp), 50, axis=ax),
    "partition": lambda xp, ax: xp.partition(_a2(xp), 1, axis=ax),
    "argpartition": lambda xp, ax: xp.argpartition(_a2(xp), 1, axis=ax),
    "trapezoid": lambda xp, ax: xp.trapezoid(_a2(xp), axis=ax),
    "gradient": lambda xp, ax: xp.gradient(_a2(xp), axis=ax),
    "moveaxis": lambda xp, ax: xp.moveaxis(_a2(xp), ax, 0),
    "swapaxes": lambda xp, ax: xp.swapaxes(_a2(xp), ax, 0),
    "rollaxis": lambda xp, ax: xp.rollaxis(_a2(xp), ax),
    "compress": lambda xp, ax: xp.compress([True, False], _a2(xp), axis=ax),
    "delete": lambda xp, ax: xp.delete(_a2(xp), 0, axis=ax),
    "insert": lambda xp, ax: xp.insert(_a2(xp), 0, 9.0, axis=ax),
    "append": lambda xp, ax: xp.append(_a2(xp), _a2(xp), axis=ax),
    "split": lambda xp, ax: xp.split(_a2(xp), 1, axis=ax),
    "take_along_axis": lambda xp, ax: xp.take_along_axis(_a2(xp), xp.zeros((1, 1), int), ax),
    "cross": lambda xp, ax: xp.cross(xp.ones((3, 3)), xp.ones((3, 3)), axis=ax),
    "vector_norm": lambda xp, ax: xp.linalg.vector_norm(_a2(xp), axis=ax),
    "ifft": lambda xp, ax: xp.fft.ifft(_a2(xp), axis=ax),
    "rfft": lambda xp, ax: xp.fft.rfft(_a2(xp), axis=ax),
    "fftshift": lambda xp, ax: xp.fft.fftshift(_a2(xp), axes=ax),
    "cumulative_sum": lambda xp, ax: xp.cumulative_sum(_a2(xp), axis=ax),
    "flip_1d": lambda xp, ax: xp.flip(xp.arange(3), axis=ax),
    "sum_1d": lambda xp, ax: xp.sum(xp.arange(3), axis=ax),
    "sort_0d": lambda xp, ax: xp.sort(xp.asarray(1.0), axis=ax),
}
BAD_AXES = [True, False, 1.0, 1.5, 2, -3, (0, 0), (0, 2), [0], (1,), "0", np.int64(-1),
            np.bool_(True), None]


# NumPy lets ufunc reductions and its C-level axis functions take axis 0 or -1 on a 0-d
# array (cumsum, argsort and take then see it as 1-d); mean, median and sort refuse.
ZERO_D_AXIS_FUNCS = ("sum", "max", "argmax", "mean", "std", "cumsum", "any", "median",
                     "squeeze", "sort", "argsort", "nansum", "ptp", "count_nonzero", "flip",
                     "nanmax", "prod", "all", "argmin", "cumprod", "var", "nanmean")
ZERO_D_AXES = [0, -1, (0,), 1, (-1,)]


def _zero_d_axis(xp, name, ax):
    return getattr(xp, name)(xp.asarray(2.0), axis=ax)


def _axis_cases():
    for (name, fn), ax in itertools.product(AXIS_FUNCS.items(), BAD_AXES):
        yield f"{name}(axis={ax!r})", (lambda f, a: lambda xp: f(xp, a))(fn, ax)
    for name, ax in itertools.product(ZERO_D_AXIS_FUNCS, ZERO_D_AXES):
        yield f"{name}(0-d, axis={ax!r})", (lambda n, a: lambda xp: _zero_d_axis(xp, n, a))(
            name, ax)
    for ax in ZERO_D_AXES:
        yield f"take(0-d, axis={ax!r})", (lambda a: lambda xp: xp.take(xp.asarray(2.0), [0],
                                                                       axis=a))(ax)


# --- shapes ----------------------------------------------------------------------------------
SHAPE_FUNCS = {
    "zeros": lambda xp, s: xp.zeros(s),
    "ones": lambda xp, s: xp.ones(s, dtype=int),
    "empty_shape": lambda xp, s: xp.empty(s).shape,
    "full": lambda xp, s: xp.full(s, 2.0),
    "reshape": lambda xp, s: xp.arange(6).reshape(s),
    "reshape_fn": lambda xp, s: xp.reshape(xp.arange(6), s),
    "broadcast_to": lambda xp, s: xp.broadcast_to(xp.arange(3), s),
    "resize": lambda xp, s: xp.resize(xp.arange(3), s),
    "tile": lambda xp, s: xp.tile(xp.arange(2), s),
    "zeros_like": lambda xp, s: xp.zeros_like(xp.arange(6), shape=s),
    "full_like": lambda xp, s: xp.full_like(xp.arange(6), 1, shape=s),
    "indices": lambda xp, s: xp.indices(s),
    "unravel_index": lambda xp, s: xp.unravel_index(3, s),
    "ravel_multi_index": lambda xp, s: xp.ravel_multi_index((0,), s),
    "ndarray": lambda xp, s: xp.ndarray(s).shape,
    "shape_setter": lambda xp, s: _set_shape(xp, s),
}


def _set_shape(xp, s):
    a = xp.arange(6)
    a.shape = s
    return a


BAD_SHAPES = [-1, (2, -1), (-2, 3), 2.5, (2.0, 3), True, None, (1,) * 65, "3", [2, 3],
              np.int64(6), (), (6, 1)]


def _shape_cases():
    for (name, fn), s in itertools.product(SHAPE_FUNCS.items(), BAD_SHAPES):
        yield f"{name}(shape={s!r})"[:80], (lambda f, a: lambda xp: f(xp, a))(fn, s)


# --- dtypes ----------------------------------------------------------------------------------
DTYPE_FUNCS = {
    "zeros": lambda xp, d: xp.zeros(3, dtype=d),
    "asarray": lambda xp, d: xp.asarray([1, 2], dtype=d),
    "astype": lambda xp, d: xp.arange(3).astype(d),
    "sum": lambda xp, d: xp.sum(xp.arange(3), dtype=d),
    "cumsum": lambda xp, d: xp.cumsum(xp.arange(3), dtype=d),
    "add": lambda xp, d: xp.add(xp.arange(3), 1, dtype=d),
    "arange": lambda xp, d: xp.arange(3, dtype=d),
    "linspace": lambda xp, d: xp.linspace(0, 2, 3, dtype=d),
    "eye": lambda xp, d: xp.eye(2, dtype=d),
    "full": lambda xp, d: xp.full(2, 1, dtype=d),
    "mean": lambda xp, d: xp.mean(xp.arange(3), dtype=d),
    "prod": lambda xp, d: xp.prod(xp.arange(3), dtype=d),
    "var": lambda xp, d: xp.var(xp.arange(3), dtype=d),
    "concatenate": lambda xp, d: xp.concatenate([xp.arange(2)], dtype=d),
    "random": lambda xp, d: _meta(xp.random.default_rng(0).random(2, dtype=d)),
    "integers": lambda xp, d: _meta(xp.random.default_rng(0).integers(2, size=2, dtype=d)),
    "view": lambda xp, d: xp.zeros(2).view(d),
    "empty_like": lambda xp, d: xp.empty_like(xp.arange(2), dtype=d).dtype,
    "result_type": lambda xp, d: xp.result_type(xp.arange(2), d),
}
BAD_DTYPES = ["foo", "i3", 1.5, np.float32, "b", "?", "c8", "float", None, "i8", "u1", "f2",
              int, complex]


# Operands of each dtype family where the function takes only some of them.
OPERAND_DTYPE_FUNCS = {
    "inv": lambda xp, a: xp.linalg.inv(a),
    "det": lambda xp, a: xp.linalg.det(a),
    "solve": lambda xp, a: xp.linalg.solve(a, a),
    "eigvalsh": lambda xp, a: xp.linalg.eigvalsh(a),
    "svdvals": lambda xp, a: xp.linalg.svd(a, compute_uv=False),
    "norm": lambda xp, a: xp.linalg.norm(a),
    "fft": lambda xp, a: xp.fft.fft(a),
    "rfft": lambda xp, a: xp.fft.rfft(a),
    "sort": lambda xp, a: xp.sort(a),
    "median": lambda xp, a: xp.median(a),
    "bitwise_and": lambda xp, a: xp.bitwise_and(a, a),
    "invert": lambda xp, a: xp.invert(a),
    "left_shift": lambda xp, a: xp.left_shift(a, 1),
    "floor": lambda xp, a: xp.floor(a),
    "isnan": lambda xp, a: xp.isnan(a),
    "remainder": lambda xp, a: xp.remainder(a, a),
    "negative": lambda xp, a: xp.negative(a),
    "subtract": lambda xp, a: xp.subtract(a, a),
    "bincount": lambda xp, a: xp.bincount(a.reshape(-1)),
    "histogram": lambda xp, a: xp.histogram(a, bins=2)[0],
    "cumsum": lambda xp, a: xp.cumsum(a),
    "mean": lambda xp, a: xp.mean(a),
    "var": lambda xp, a: xp.var(a),
    "argmax": lambda xp, a: xp.argmax(a),
    "nanmax": lambda xp, a: xp.nanmax(a),
    "clip": lambda xp, a: xp.clip(a, 0, 1),
    "around": lambda xp, a: xp.around(a, 1),
    "arctan2": lambda xp, a: xp.arctan2(a, a),
}
OPERAND_DTYPES = ["bool", "int8", "uint64", "float16", "float32", "complex64"]


def _dtype_cases():
    for (name, fn), d in itertools.product(DTYPE_FUNCS.items(), BAD_DTYPES):
        yield f"{name}(dtype={d!r})", (lambda f, a: lambda xp: f(xp, a))(fn, d)
    for (name, fn), d in itertools.product(OPERAND_DTYPE_FUNCS.items(), OPERAND_DTYPES):
        yield f"{name}({d} operand)", (lambda f, t: lambda xp: f(xp, (xp.eye(2) + 1).astype(t)))(
            fn, d)


# --- indices ---------------------------------------------------------------------------------
def _put(xp, i):
    a = xp.arange(6)
    xp.put(a, i, -1)
    return a


def _setitem(xp, i):
    a = xp.arange(6)
    a[i] = -1
    return a


INDEX_FUNCS = {
    "getitem": lambda xp, i: xp.arange(6)[i],
    "setitem": _setitem,
    "take": lambda xp, i: xp.take(xp.arange(6), i),
    "take_clip": lambda xp, i: xp.take(xp.arange(6), i, mode="clip"),
    "put": _put,
    "delete": lambda xp, i: xp.delete(xp.arange(6), i),
    "insert": lambda xp, i: xp.insert(xp.arange(6), i, 9),
}
BAD_INDICES = [6, -7, [0, 6], 1.0, [1.0], np.float64(1), "1", (0, 0), [True] * 5,
               np.array([], dtype=float), np.array([], dtype=int), slice(None, None, 0)]


def _index_cases():
    for (name, fn), i in itertools.product(INDEX_FUNCS.items(), BAD_INDICES):
        yield f"{name}(index={i!r})", (lambda f, a: lambda xp: f(xp, a))(fn, i)


# --- sizes of random draws ------------------------------------------------------------------
def _meta(r):
    """Random draws compare by shape and dtype (the bit streams differ from NumPy's)."""
    if r is None:
        return None
    r = np.asarray(r)
    return r.shape, r.dtype.str


SIZE_FUNCS = {
    "random": lambda xp, s: _meta(xp.random.default_rng(0).random(s)),
    "normal": lambda xp, s: _meta(xp.random.default_rng(0).normal(size=s)),
    "integers": lambda xp, s: _meta(xp.random.default_rng(0).integers(5, size=s)),
    "choice": lambda xp, s: _meta(xp.random.default_rng(0).choice(5, size=s)),
    "legacy_rand": lambda xp, s: _meta(xp.random.random_sample(s)),
    "legacy_randint": lambda xp, s: _meta(xp.random.randint(5, size=s)),
    "uniform": lambda xp, s: _meta(xp.random.default_rng(0).uniform(size=s)),
    "exponential": lambda xp, s: _meta(xp.random.default_rng(0).exponential(size=s)),
    "binomial": lambda xp, s: _meta(xp.random.default_rng(0).binomial(3, 0.5, size=s)),
    "poisson": lambda xp, s: _meta(xp.random.default_rng(0).poisson(size=s)),
    "gamma": lambda xp, s: _meta(xp.random.default_rng(0).gamma(2.0, size=s)),
    "standard_normal": lambda xp, s: _meta(xp.random.default_rng(0).standard_normal(s)),
    "multinomial": lambda xp, s: _meta(xp.random.default_rng(0).multinomial(3, [0.5, 0.5],
                                                                             size=s)),
    "legacy_normal": lambda xp, s: _meta(xp.random.normal(size=s)),
    "legacy_choice": lambda xp, s: _meta(xp.random.choice(5, size=s)),
}
BAD_SIZES = [-1, 2.5, (2, -1), (2.0,), "3", True, np.int64(2), ()]


def _size_cases():
    for (name, fn), s in itertools.product(SIZE_FUNCS.items(), BAD_SIZES):
        yield f"{name}(size={s!r})", (lambda f, a: lambda xp: f(xp, a))(fn, s)


# --- parameters ------------------------------------------------------------------------------
def _rng(xp):
    return xp.random.default_rng(1)


def _shuffled(xp, x, **kw):
    _rng(xp).shuffle(x, **kw)
    return _meta(x)


def _at(xp, idx):
    a = xp.arange(4.0)
    xp.add.at(a, idx, 1)
    return a


def _assign(xp, key, value):
    a = xp.arange(3.0)
    a[key] = value
    return a


def _legacy_shuffle_list(xp):
    x = [1, 2, 3]
    xp.random.shuffle(x)
    return sorted(x)


PARAM_CASES = {
    # random parameters
    "uniform(2, 1)": lambda xp: _meta(_rng(xp).uniform(2, 1, size=3)),
    "uniform(0, inf)": lambda xp: _meta(_rng(xp).uniform(0, np.inf, size=3)),
    "normal(scale=-1)": lambda xp: _meta(_rng(xp).normal(0, -1, size=3)),
    "integers(5, 5)": lambda xp: _meta(_rng(xp).integers(5, 5, size=3)),
    "integers(5, 1)": lambda xp: _meta(_rng(xp).integers(5, 1, size=3)),
    "integers(300, dtype=int8)": lambda xp: _meta(_rng(xp).integers(300, size=3, dtype="i1")),
    "integers(2.5)": lambda xp: _meta(_rng(xp).integers(2.5, size=3)),
    "binomial(5, 1.5)": lambda xp: _meta(_rng(xp).binomial(5, 1.5, size=3)),
    "binomial(-1, .5)": lambda xp: _meta(_rng(xp).binomial(-1, 0.5, size=3)),
    "poisson(-1)": lambda xp: _meta(_rng(xp).poisson(-1, size=3)),
    "exponential(-1)": lambda xp: _meta(_rng(xp).exponential(-1, size=3)),
    "gamma(-1)": lambda xp: _meta(_rng(xp).gamma(-1, size=3)),
    "beta(0, 1)": lambda xp: _meta(_rng(xp).beta(0, 1, size=3)),
    "geometric(0)": lambda xp: _meta(_rng(xp).geometric(0, size=3)),
    "choice(0)": lambda xp: _meta(_rng(xp).choice(0, size=3)),
    "choice(-1)": lambda xp: _meta(_rng(xp).choice(-1)),
    "choice(p sums to 1.5)": lambda xp: _meta(_rng(xp).choice(3, p=[0.5, 0.5, 0.5])),
    "choice(p wrong length)": lambda xp: _meta(_rng(xp).choice(3, p=[0.5, 0.5])),
    "choice(no replace, too many)": lambda xp: _meta(_rng(xp).choice(3, 4, replace=False)),
    "choice(2-d p)": lambda xp: _meta(_rng(xp).choice(3, p=[[1.0, 0, 0]])),
    "seed(2**33)": lambda xp: xp.random.seed(2**33),
    "seed(-1)": lambda xp: xp.random.seed(-1),
    "seed(1.5)": lambda xp: xp.random.seed(1.5),
    "default_rng(-1)": lambda xp: _meta(xp.random.default_rng(-1).random(2)),
    "shuffle(1-d, axis=1)": lambda xp: _shuffled(xp, xp.arange(3), axis=1),
    "shuffle(2-d, axis=-3)": lambda xp: _shuffled(xp, _a2(xp), axis=-3),
    "shuffle(0-d)": lambda xp: _shuffled(xp, xp.asarray(1.0)),
    "permutation(-1)": lambda xp: _meta(_rng(xp).permutation(-1)),
    "permutation(2-d, axis=2)": lambda xp: _meta(_rng(xp).permutation(_a2(xp), axis=2)),
    "legacy shuffle(list)": _legacy_shuffle_list,
    "Generator shuffle(list)": lambda xp: _shuffled(xp, [1, 2, 3]),
    "Generator shuffle(list, axis=1)": lambda xp: _shuffled(xp, [1, 2, 3], axis=1),
    "Generator shuffle(tuple)": lambda xp: _shuffled(xp, (1, 2, 3)),
    "dirichlet(alpha <= 0)": lambda xp: _meta(_rng(xp).dirichlet([1.0, 0.0])),
    "hypergeometric(nsample > total)": lambda xp: _meta(_rng(xp).hypergeometric(2, 2, 5)),
    "triangular(left > right)": lambda xp: _meta(_rng(xp).triangular(2, 1, 0)),
    "triangular(left == right)": lambda xp: _meta(_rng(xp).triangular(1, 1, 1)),
    "vonmises(kappa < 0)": lambda xp: _meta(_rng(xp).vonmises(0, -1)),
    "zipf(a <= 1)": lambda xp: _meta(_rng(xp).zipf(1.0)),
    "logseries(p >= 1)": lambda xp: _meta(_rng(xp).logseries(1.0)),
    "wald(mean <= 0)": lambda xp: _meta(_rng(xp).wald(0, 1)),
    "pareto(a <= 0)": lambda xp: _meta(_rng(xp).pareto(0)),
    "weibull(a < 0)": lambda xp: _meta(_rng(xp).weibull(-1)),
    "standard_t(df <= 0)": lambda xp: _meta(_rng(xp).standard_t(0)),
    "f(dfnum <= 0)": lambda xp: _meta(_rng(xp).f(0, 1)),
    "negative_binomial(p > 1)": lambda xp: _meta(_rng(xp).negative_binomial(1, 1.5)),
    "laplace(scale < 0)": lambda xp: _meta(_rng(xp).laplace(0, -1)),
    "multivariate_normal(mismatch)": lambda xp: _meta(_rng(xp).multivariate_normal(
        [0.0, 0.0], xp.eye(3))),
    "multinomial(pvals > 1)": lambda xp: _meta(_rng(xp).multinomial(3, [0.5, 0.7])),
    "integers(array low > high)": lambda xp: _meta(_rng(xp).integers([0, 5], [3, 4])),
    "random(dtype=int)": lambda xp: _meta(_rng(xp).random(3, dtype=int)),
    "standard_normal(dtype=float16)": lambda xp: _meta(_rng(xp).standard_normal(
        3, dtype="f2")),
    "legacy randint(5, 5)": lambda xp: _meta(xp.random.randint(5, 5, size=3)),
    "legacy uniform(2, 1)": lambda xp: _meta(xp.random.uniform(2, 1, size=3)),
    "legacy normal(scale=-1)": lambda xp: _meta(xp.random.normal(0, -1, size=3)),
    "legacy choice(p nan)": lambda xp: _meta(xp.random.choice(2, p=[np.nan, 1.0])),
    "RandomState(2**33)": lambda xp: xp.random.RandomState(2**33).random_sample(2).shape,
    # ufunc arguments
    "add(where=float)": lambda xp: xp.add(xp.arange(3.0), 1, where=xp.ones(3)),
    "add(where=int)": lambda xp: xp.add(xp.arange(3.0), 1, where=xp.ones(3, dtype=int)),
    "add(where=list of bools)": lambda xp: xp.add(xp.arange(3.0), 1, out=xp.zeros(3),
                                                   where=[True, False, True]),
    "logical_and(int, 2**70)": lambda xp: xp.logical_and(xp.arange(3), 2**70),
    "add(int8, 300)": lambda xp: xp.add(xp.arange(3, dtype="i1"), 300),
    "add(uint8, -1)": lambda xp: xp.add(xp.arange(3, dtype="u1"), -1),
    "add(int64, 2**64)": lambda xp: xp.add(xp.arange(3), 2**64),
    "multiply(float, 2**1100)": lambda xp: xp.multiply(xp.arange(3.0), 2**1100),
    "add(casting=bogus)": lambda xp: xp.add(xp.arange(3), 1, casting="bogus"),
    "add(casting=no)": lambda xp: xp.add(xp.arange(3), 1.5, casting="no"),
    "add(out wrong shape)": lambda xp: xp.add(xp.arange(3), 1, out=xp.zeros(4)),
    "add(out int from float)": lambda xp: xp.add(xp.arange(3.0), 1, out=xp.zeros(3, int)),
    "add(3 args)": lambda xp: xp.add(xp.arange(3), 1, 2, 3),
    "add(order=X)": lambda xp: xp.add(xp.arange(3), 1, order="X"),
    "sqrt(string)": lambda xp: xp.sqrt("a"),
    "clip(keepdims)": lambda xp: xp.clip(xp.arange(3), 0, 1, keepdims=True),
    "clip(no bounds)": lambda xp: xp.clip(xp.arange(3)),
    "clip(min > max)": lambda xp: xp.clip(xp.arange(3), 2, 1),
    "around(decimals=1.5)": lambda xp: xp.around(xp.arange(3.0), 1.5),
    "around(bool, 0)": lambda xp: xp.around(xp.ones(2, bool), 0),
    "around(bool, -1)": lambda xp: xp.around(xp.ones(2, bool), -1),
    "left_shift(-1)": lambda xp: xp.left_shift(xp.arange(3), -1),
    "power(int, -1)": lambda xp: xp.power(xp.arange(1, 3), -1),
    "divide(int, 0) floor": lambda xp: xp.floor_divide(xp.arange(3), 0),
    "reduce(non-reorderable multi-axis)": lambda xp: xp.subtract.reduce(_a2(xp), axis=(0, 1)),
    "reduce(empty, no identity)": lambda xp: xp.maximum.reduce(xp.zeros((0, 3)), axis=0),
    "max(empty)": lambda xp: xp.max(xp.zeros(0)),
    "argmax(empty)": lambda xp: xp.argmax(xp.zeros(0)),
    "sum(out wrong shape)": lambda xp: xp.sum(_a2(xp), axis=0, out=xp.zeros(2)),
    "sum(where=float)": lambda xp: xp.sum(_a2(xp), where=xp.ones((2, 3))),
    "sum(initial=list)": lambda xp: xp.sum(_a2(xp), initial=[1, 2]),
    "sum(keepdims=string)": lambda xp: xp.sum(_a2(xp), keepdims="yes"),
    "matmul(out wrong shape)": lambda xp: xp.matmul(xp.ones((2, 2)), xp.ones((2, 2)),
                                                    out=xp.zeros((3, 3))),
    "einsum(bad subscripts)": lambda xp: xp.einsum("ij,jk->il", xp.ones((2, 2)),
                                                   xp.ones((2, 2))),
    "digitize(non-monotonic)": lambda xp: xp.digitize(xp.arange(3), [1, 0, 2]),
    "searchsorted(sorter length)": lambda xp: xp.searchsorted(xp.arange(3), 1, sorter=[0]),
    "histogram(weights shape)": lambda xp: xp.histogram(xp.arange(3.0), weights=xp.ones(2)),
    "histogram(range nan)": lambda xp: xp.histogram(xp.arange(3.0), range=(0, np.nan)),
    "histogram2d(length mismatch)": lambda xp: xp.histogram2d(xp.ones(2), xp.ones(3)),
    "squeeze(non-1 axis)": lambda xp: xp.squeeze(_a2(xp), axis=0),
    "array_split(negative)": lambda xp: xp.array_split(xp.arange(6), -1),
    "hsplit(0-d)": lambda xp: xp.hsplit(xp.asarray(1.0), 1),
    "vsplit(1-d)": lambda xp: xp.vsplit(xp.arange(4), 2),
    "geomspace(0, 1)": lambda xp: xp.geomspace(0, 1, 3),
    "asarray(copy=False, list)": lambda xp: xp.asarray([1, 2], copy=False),
    "full(fill string)": lambda xp: xp.full(3, "a", dtype=float),
    "eig(non-square)": lambda xp: xp.linalg.eig(xp.ones((2, 3))),
    "eigvals(1-d)": lambda xp: xp.linalg.eigvals(xp.ones(3)),
    "svd(0x0)": lambda xp: xp.linalg.svd(xp.zeros((0, 0)))[1],
    "inv(0x0)": lambda xp: xp.linalg.inv(xp.zeros((0, 0))),
    "det(int)": lambda xp: xp.linalg.det(xp.eye(2, dtype=int)),
    "matrix_rank(tol < 0)": lambda xp: xp.linalg.matrix_rank(xp.eye(2), tol=-1),
    "pinv(3-d)": lambda xp: xp.linalg.pinv(xp.ones((2, 2, 2))).shape,
    "tensorsolve(mismatch)": lambda xp: xp.linalg.tensorsolve(xp.ones((2, 3)), xp.ones(2)),
    "hfft(n=0)": lambda xp: xp.fft.hfft(xp.ones(3), n=0),
    "ihfft(complex)": lambda xp: xp.fft.ihfft(xp.ones(3, dtype=complex)),
    "rfftn(s mismatch)": lambda xp: xp.fft.rfftn(_a2(xp), s=(2, 2, 2)),
    "fft2(1-d)": lambda xp: xp.fft.fft2(xp.ones(3)),
    "irfft(0-length)": lambda xp: xp.fft.irfft(xp.ones(0)),
    "rfftfreq(n=0)": lambda xp: xp.fft.rfftfreq(0),
    "ufunc.at(out of range)": lambda xp: _at(xp, [5]),
    "ufunc.at(float index)": lambda xp: _at(xp, [1.0]),
    "ufunc.outer(where)": lambda xp: xp.add.outer(xp.ones(2), xp.ones(2), where=True),
    "ufunc.accumulate(axis=None)": lambda xp: xp.add.accumulate(_a2(xp), axis=None),
    "ufunc.reduceat(bad index)": lambda xp: xp.add.reduceat(xp.arange(4), [0, 5]),
    "setitem(value shape)": lambda xp: _assign(xp, slice(0, 2), xp.ones(3)),
    "setitem(value string)": lambda xp: _assign(xp, 0, "a"),
    "setitem(value complex)": lambda xp: _assign(xp, 0, 1j),
    "setitem(value list ragged)": lambda xp: _assign(xp, slice(0, 2), [[1], [2, 3]]),
    "setitem(mask wrong length)": lambda xp: _assign(xp, xp.ones(4, bool), 0),
    "setitem(bool scalar key)": lambda xp: _assign(xp, True, 7),
    "setitem(None key)": lambda xp: _assign(xp, None, 7),
    "getitem(None)": lambda xp: xp.arange(3)[None],
    "getitem(bool scalar)": lambda xp: xp.arange(3)[False],
    "getitem(tuple of lists)": lambda xp: _a2(xp)[[0, 1], [0]],
    "getitem(nested list)": lambda xp: _a2(xp)[[[0, 1]]],
    "getitem(array of 0-d float)": lambda xp: _a2(xp)[0, xp.asarray(1.0)],
    "getitem(empty tuple on 2-d)": lambda xp: _a2(xp)[()],
    "getitem(None to 65 axes)": lambda xp: xp.zeros((1,) * 64)[None],
    "getitem(64 Nones)": lambda xp: xp.zeros(1)[(None,) * 64],
    "expand_dims(to 65 axes)": lambda xp: xp.expand_dims(xp.zeros((1,) * 64), 0),
    "array(ndmin=65)": lambda xp: xp.array([1], ndmin=65),
    "astype(bogus casting)": lambda xp: xp.arange(3).astype(float, casting="bogus"),
    "astype(safe downcast)": lambda xp: xp.arange(3.0).astype(int, casting="safe"),
    "view(odd itemsize)": lambda xp: xp.arange(3, dtype="i1").view("i2"),
    "copyto(shape)": lambda xp: xp.copyto(xp.zeros(3), xp.ones(2)),
    "copyto(casting)": lambda xp: xp.copyto(xp.zeros(3, int), xp.ones(3)),
    "fill(string)": lambda xp: xp.zeros(3).fill("a"),
    "item(out of range)": lambda xp: xp.arange(3).item(5),
    "item(too many)": lambda xp: xp.arange(3).item(0, 0),
    "tolist(0-d)": lambda xp: xp.asarray(2.0).tolist(),
    "len(0-d)": lambda xp: len(xp.asarray(2.0)),
    "int(2 elements)": lambda xp: int(xp.arange(2)),
    "index(float)": lambda xp: [1, 2][xp.asarray(1.0)],
    "bool(empty)": lambda xp: bool(xp.zeros(0)),
    "sum(dtype=complex to int out)": lambda xp: xp.sum(xp.ones(2), out=xp.zeros((), int)),
    "mean(dtype=int)": lambda xp: xp.mean(xp.arange(4.0), dtype=int),
    "cumsum(out shape)": lambda xp: xp.cumsum(xp.arange(3), out=xp.zeros(2, int)),
    "argmax(out dtype)": lambda xp: xp.argmax(xp.arange(3), out=xp.zeros((), float)),
    "dot(out wrong)": lambda xp: xp.dot(xp.ones((2, 2)), xp.ones((2, 2)), out=xp.zeros(2)),
    "concatenate(out and dtype)": lambda xp: xp.concatenate([xp.ones(2)], out=xp.zeros(2),
                                                            dtype=float),
    "concatenate(casting)": lambda xp: xp.concatenate([xp.ones(2)], dtype=int,
                                                      casting="safe"),
    "where(one argument missing)": lambda xp: xp.where(xp.ones(2, bool), 1),
    "nonzero(empty 0-d)": lambda xp: xp.flatnonzero(xp.asarray(0.0)),
    "isclose(bogus)": lambda xp: xp.isclose(xp.ones(2), "a"),
    "allclose(shape)": lambda xp: xp.allclose(xp.ones(2), xp.ones(3)),
    "array_equal(shape)": lambda xp: xp.array_equal(xp.ones(2), xp.ones(3)),
    "convolve(empty)": lambda xp: xp.convolve(xp.ones(0), xp.ones(2)),
    "convolve(mode bogus)": lambda xp: xp.convolve(xp.ones(3), xp.ones(2), mode="bogus"),
    "polyval(2-d p)": lambda xp: xp.polyval(xp.ones((2, 2)), 1.0).shape,
    "polyfit(deg < 0)": lambda xp: xp.polyfit(xp.arange(3.0), xp.arange(3.0), -1),
    "meshgrid(copy string)": lambda xp: len(xp.meshgrid(xp.arange(2), copy="x")),
    "atleast_2d(list)": lambda xp: xp.atleast_2d([1, 2]),
    "block(depth mismatch)": lambda xp: xp.block([[xp.ones(2)], xp.ones(2)]),
    "column_stack(shape)": lambda xp: xp.column_stack([xp.ones(2), xp.ones(3)]),
    "dstack(empty)": lambda xp: xp.dstack([]),
    "flip(axis=2)": lambda xp: xp.flip(_a2(xp), axis=2),
    # (rot90 with a float k is left out: NumPy 2.4 and 2.5 turn it by different amounts)
    "rot90(same axes)": lambda xp: xp.rot90(_a2(xp), axes=(0, 0)),
    "rot90(1-d)": lambda xp: xp.rot90(xp.ones(3)),
    "triu_indices(-1)": lambda xp: xp.triu_indices(-1),
    "diag_indices(0)": lambda xp: xp.diag_indices(0),
    "fill_diagonal(1-d)": lambda xp: xp.fill_diagonal(xp.zeros(3), 1),
    "put_along_axis(ndim)": lambda xp: xp.put_along_axis(_a2(xp), xp.zeros(2, int), 1, 1),
    "ediff1d(to_begin cast)": lambda xp: xp.ediff1d(xp.arange(3), to_begin=1.5),
    "isin(kind bogus)": lambda xp: xp.isin(xp.arange(3), [1], kind="bogus"),
    "intersect1d(2-d)": lambda xp: xp.intersect1d(_a2(xp), _a2(xp)),
    "setdiff1d(assume_unique)": lambda xp: xp.setdiff1d([1, 1, 2], [2], assume_unique=True),
    # creation
    "arange(step=0)": lambda xp: xp.arange(0, 10, 0),
    "arange(inf)": lambda xp: xp.arange(np.inf),
    "arange(nan)": lambda xp: xp.arange(np.nan),
    "arange(no args)": lambda xp: xp.arange(),
    "linspace(num=-1)": lambda xp: xp.linspace(0, 1, -1),
    "linspace(num=2.5)": lambda xp: xp.linspace(0, 1, 2.5),
    "eye(-1)": lambda xp: xp.eye(-1),
    "eye(2.5)": lambda xp: xp.eye(2.5),
    "eye(k=1.5)": lambda xp: xp.eye(3, k=1.5),
    "identity(2.5)": lambda xp: xp.identity(2.5),
    "tri(-1)": lambda xp: xp.tri(-1),
    "full(shape, wrong-shaped fill)": lambda xp: xp.full((2,), [1, 2, 3]),
    "array(ragged)": lambda xp: xp.array([[1, 2], [3]]),
    "zeros(order=X)": lambda xp: xp.zeros(3, order="X"),
    "empty_like(shape=-1)": lambda xp: xp.empty_like(xp.zeros(3), shape=-1),
    "diag(3-d)": lambda xp: xp.diag(xp.zeros((2, 2, 2))),
    "diag(k=1.5)": lambda xp: xp.diag(xp.zeros((2, 2)), k=1.5),
    "tril(1-d)": lambda xp: xp.tril(xp.arange(3)),
    "triu(1-d, k=1)": lambda xp: xp.triu(xp.arange(3), 1),
    "tril(0-d)": lambda xp: xp.tril(xp.asarray(1.0)),
    "meshgrid(indexing=x)": lambda xp: xp.meshgrid(xp.arange(2), indexing="x"),
    # manipulation
    "reshape(size mismatch)": lambda xp: xp.arange(6).reshape(5),
    "reshape(-1, -1)": lambda xp: xp.arange(6).reshape(-1, -1),
    "reshape(None)": lambda xp: xp.arange(6).reshape(None),
    "reshape(order=X)": lambda xp: xp.arange(6).reshape(2, 3, order="X"),
    "transpose(duplicate axes)": lambda xp: _a2(xp).transpose(0, 0),
    "transpose(too few axes)": lambda xp: _a2(xp).transpose(0),
    "transpose(axis 2)": lambda xp: _a2(xp).transpose(0, 2),
    "swapaxes(0, 5)": lambda xp: xp.swapaxes(_a2(xp), 0, 5),
    "moveaxis(duplicates)": lambda xp: xp.moveaxis(_a2(xp), [0, 0], [0, 1]),
    "moveaxis(length mismatch)": lambda xp: xp.moveaxis(_a2(xp), [0, 1], [0]),
    "concatenate(shape mismatch)": lambda xp: xp.concatenate([_a2(xp), xp.zeros((2, 2))]),
    "concatenate(ndim mismatch)": lambda xp: xp.concatenate([_a2(xp), xp.zeros(3)]),
    "concatenate(empty)": lambda xp: xp.concatenate([]),
    "concatenate(0-d)": lambda xp: xp.concatenate([xp.asarray(1.0), xp.asarray(2.0)]),
    "stack(empty)": lambda xp: xp.stack([]),
    "stack(shape mismatch)": lambda xp: xp.stack([xp.zeros(2), xp.zeros(3)]),
    "split(unequal)": lambda xp: xp.split(xp.arange(6), 4),
    "split(0 sections)": lambda xp: xp.array_split(xp.arange(6), 0),
    "repeat(negative)": lambda xp: xp.repeat(xp.arange(3), -1),
    "repeat(count mismatch)": lambda xp: xp.repeat(xp.arange(3), [1, 2]),
    "repeat(float)": lambda xp: xp.repeat(xp.arange(3), 1.5),
    "tile(negative)": lambda xp: xp.tile(xp.arange(3), -1),
    "broadcast_to(smaller)": lambda xp: xp.broadcast_to(xp.arange(3), (2,)),
    "broadcast_arrays(mismatch)": lambda xp: xp.broadcast_arrays(xp.zeros(2), xp.zeros(3)),
    "expand_dims(duplicate)": lambda xp: xp.expand_dims(xp.zeros(3), (0, 0)),
    "roll(shift/axis lengths)": lambda xp: xp.roll(_a2(xp), (1, 2, 3), axis=(0, 1)),
    "roll(float shift)": lambda xp: xp.roll(xp.arange(6), 1.0),
    "roll(float shift 2.5)": lambda xp: xp.roll(xp.arange(6), 2.5),
    "roll(float shift, axis)": lambda xp: xp.roll(_a2(xp), 1.0, axis=1),
    "pad(negative)": lambda xp: xp.pad(xp.arange(3), -1),
    "pad(bad mode)": lambda xp: xp.pad(xp.arange(3), 1, mode="bogus"),
    "pad(float width)": lambda xp: xp.pad(xp.arange(3), 1.5),
    "resize(negative)": lambda xp: xp.resize(xp.arange(3), -1),
    "tensordot(axes=-1)": lambda xp: xp.tensordot(xp.ones((2, 3)), xp.ones((3, 2)), axes=-1),
    "tensordot(axes=3)": lambda xp: xp.tensordot(xp.ones((2, 3)), xp.ones((3, 2)), axes=3),
    "tensordot(axes mismatch)": lambda xp: xp.tensordot(xp.ones((2, 3)), xp.ones((3, 2)),
                                                        axes=([0], [0])),
    "matmul(0-d)": lambda xp: xp.matmul(xp.asarray(1.0), xp.ones(2)),
    "matmul(mismatch)": lambda xp: xp.matmul(xp.ones((2, 3)), xp.ones((2, 3))),
    "dot(mismatch)": lambda xp: xp.dot(xp.ones(2), xp.ones(3)),
    "outer(ragged)": lambda xp: xp.outer(xp.ones(2), [[1], [2, 3]]),
    "where(shape mismatch)": lambda xp: xp.where(xp.ones(2, bool), xp.ones(3), 0),
    # indexing
    "take_along_axis(float)": lambda xp: xp.take_along_axis(_a2(xp), xp.zeros((2, 1)), 1),
    "take_along_axis(ndim)": lambda xp: xp.take_along_axis(_a2(xp), xp.zeros(2, int), 1),
    "choose(out of range)": lambda xp: xp.choose(xp.asarray([0, 3]), [xp.ones(2), xp.ones(2)]),
    "compress(too long)": lambda xp: xp.compress([True] * 7, xp.arange(6)),
    "getitem(two ellipses)": lambda xp: _a2(xp)[..., ...],
    "getitem(too many)": lambda xp: _a2(xp)[0, 0, 0],
    "getitem(mask shape)": lambda xp: _a2(xp)[xp.ones(3, bool)],
    "getitem(float array)": lambda xp: xp.arange(3)[xp.ones(1)],
    "getitem(list of floats)": lambda xp: xp.arange(3)[[1.0]],
    "getitem(0-d float)": lambda xp: xp.arange(3)[xp.asarray(1.0)],
    "getitem(string)": lambda xp: xp.arange(3)["a"],
    "getitem(0-d, [0])": lambda xp: xp.asarray(1.0)[0],
    "put(float indices)": lambda xp: _put(xp, xp.asarray([1.0])),
    "take(float scalar)": lambda xp: xp.take(xp.arange(6), 1.0),
    "take(float list)": lambda xp: xp.take(xp.arange(6), [1.0]),
    "take(mode=bogus)": lambda xp: xp.take(xp.arange(6), [1], mode="bogus"),
    "diagonal(same axes)": lambda xp: xp.diagonal(_a2(xp), axis1=0, axis2=0),
    "trace(1-d)": lambda xp: xp.trace(xp.ones(3)),
    "nonzero(0-d)": lambda xp: xp.nonzero(xp.asarray(1.0)),
    "unravel_index(out of range)": lambda xp: xp.unravel_index(6, (2, 3)),
    "ravel_multi_index(out of range)": lambda xp: xp.ravel_multi_index((2, 0), (2, 3)),
    # sorting and searching
    "sort(kind=bogus)": lambda xp: xp.sort(xp.arange(3), kind="bogus"),
    "sort(0-d)": lambda xp: xp.sort(xp.asarray(1.0)),
    "partition(kth out of range)": lambda xp: xp.partition(xp.arange(3), 3),
    "partition(float kth)": lambda xp: xp.partition(xp.arange(3), 1.0),
    "searchsorted(side=x)": lambda xp: xp.searchsorted(xp.arange(3), 1, side="x"),
    "searchsorted(2-d)": lambda xp: xp.searchsorted(_a2(xp), 1),
    "argwhere(0-d)": lambda xp: xp.argwhere(xp.asarray(1.0)),
    # statistics
    "median(axis=[0])": lambda xp: xp.median(_a2(xp), axis=[0]),
    "average(axis=[0])": lambda xp: xp.average(_a2(xp), axis=[0]),
    "nanmedian(axis=[0])": lambda xp: xp.nanmedian(_a2(xp), axis=[0]),
    "average(weights shape)": lambda xp: xp.average(_a2(xp), weights=xp.ones(2)),
    "average(weights sum 0)": lambda xp: xp.average(xp.arange(3.0), weights=xp.zeros(3)),
    "percentile(q > 100)": lambda xp: xp.percentile(xp.arange(3.0), 101),
    "quantile(q < 0)": lambda xp: xp.quantile(xp.arange(3.0), -0.1),
    "quantile(method=bogus)": lambda xp: xp.quantile(xp.arange(3.0), 0.5, method="bogus"),
    "var(ddof string)": lambda xp: xp.var(xp.arange(3.0), ddof="1"),
    "histogram(bins=-1)": lambda xp: xp.histogram(xp.arange(3.0), bins=-1),
    "histogram(bins=bogus)": lambda xp: xp.histogram(xp.arange(3.0), bins="bogus"),
    "histogram(range reversed)": lambda xp: xp.histogram(xp.arange(3.0), range=(2, 1)),
    "histogram(bins not increasing)": lambda xp: xp.histogram(xp.arange(3.0), bins=[2, 1]),
    "bincount(negative)": lambda xp: xp.bincount(xp.asarray([-1, 2])),
    "bincount(float)": lambda xp: xp.bincount(xp.asarray([1.0, 2.0])),
    "bincount(minlength=-1)": lambda xp: xp.bincount(xp.asarray([1, 2]), minlength=-1),
    "cov(3-d)": lambda xp: xp.cov(xp.zeros((2, 2, 2))),
    "interp(xp/fp lengths)": lambda xp: xp.interp(1.0, xp.arange(3.0), xp.arange(2.0)),
    # linear algebra
    "lstsq(inf)": lambda xp: xp.linalg.lstsq(xp.asarray([[1.0, np.inf], [0, 1]]), xp.ones(2)),
    "lstsq(nan)": lambda xp: xp.linalg.lstsq(xp.asarray([[1.0, np.nan], [0, 1]]), xp.ones(2)),
    "lstsq(1-d)": lambda xp: xp.linalg.lstsq(xp.ones(2), xp.ones(2)),
    "solve(b scalar)": lambda xp: xp.linalg.solve(xp.eye(2), 1.0),
    "solve(b wrong length)": lambda xp: xp.linalg.solve(xp.eye(2), xp.ones(3)),
    "solve(singular)": lambda xp: xp.linalg.solve(xp.zeros((2, 2)), xp.ones(2)),
    "solve(non-square)": lambda xp: xp.linalg.solve(xp.ones((2, 3)), xp.ones(2)),
    "inv(non-square)": lambda xp: xp.linalg.inv(xp.ones((2, 3))),
    "inv(1-d)": lambda xp: xp.linalg.inv(xp.ones(3)),
    "inv(singular)": lambda xp: xp.linalg.inv(xp.zeros((2, 2))),
    "inv(int)": lambda xp: xp.linalg.inv(xp.eye(2, dtype=int)),
    "det(1-d)": lambda xp: xp.linalg.det(xp.ones(3)),
    "det(0x0)": lambda xp: xp.linalg.det(xp.zeros((0, 0))),
    "cholesky(not positive)": lambda xp: xp.linalg.cholesky(-xp.eye(2)),
    "eigh(non-square)": lambda xp: xp.linalg.eigh(xp.ones((2, 3))),
    "eigh(UPLO=X)": lambda xp: xp.linalg.eigh(xp.eye(2), UPLO="X"),
    "svd(1-d)": lambda xp: xp.linalg.svd(xp.ones(3)),
    "qr(1-d)": lambda xp: xp.linalg.qr(xp.ones(3)),
    "qr(mode=bogus)": lambda xp: xp.linalg.qr(xp.eye(2), mode="bogus"),
    "matrix_power(1.5)": lambda xp: xp.linalg.matrix_power(xp.eye(2), 1.5),
    "matrix_power(singular, -1)": lambda xp: xp.linalg.matrix_power(xp.zeros((2, 2)), -1),
    "norm(0x0, 2)": lambda xp: xp.linalg.norm(xp.zeros((0, 0)), 2),
    "norm(0x0, -2)": lambda xp: xp.linalg.norm(xp.zeros((0, 0)), -2),
    "norm(0x0, nuc)": lambda xp: xp.linalg.norm(xp.zeros((0, 0)), "nuc"),
    "norm(0x0, 1)": lambda xp: xp.linalg.norm(xp.zeros((0, 0)), 1),
    "norm(0x0, inf)": lambda xp: xp.linalg.norm(xp.zeros((0, 0)), np.inf),
    "norm(0x0, fro)": lambda xp: xp.linalg.norm(xp.zeros((0, 0)), "fro"),
    "norm(0x3, 2)": lambda xp: xp.linalg.norm(xp.zeros((0, 3)), 2),
    "norm(empty vector, inf)": lambda xp: xp.linalg.norm(xp.zeros(0), np.inf),
    "norm(empty vector, -inf)": lambda xp: xp.linalg.norm(xp.zeros(0), -np.inf),
    "norm(1-d, fro)": lambda xp: xp.linalg.norm(xp.ones(3), "fro"),
    "norm(2-d, 3)": lambda xp: xp.linalg.norm(xp.ones((2, 2)), 3),
    "norm(3 axes)": lambda xp: xp.linalg.norm(xp.ones((2, 2, 2)), axis=(0, 1, 2)),
    "norm(3-d, ord)": lambda xp: xp.linalg.norm(xp.ones((2, 2, 2)), 2),
    "cond(0x0)": lambda xp: xp.linalg.cond(xp.zeros((0, 0))),
    "cond(1-d)": lambda xp: xp.linalg.cond(xp.ones(3)),
    "cond(non-square, 1)": lambda xp: xp.linalg.cond(xp.ones((2, 3)), 1),
    "matrix_rank(0x0)": lambda xp: xp.linalg.matrix_rank(xp.zeros((0, 0))),
    "pinv(0x0)": lambda xp: xp.linalg.pinv(xp.zeros((0, 0))),
    "slogdet(non-square)": lambda xp: xp.linalg.slogdet(xp.ones((2, 3))),
    "eigvalsh(0x0)": lambda xp: xp.linalg.eigvalsh(xp.zeros((0, 0))),
    "multi_dot(one)": lambda xp: xp.linalg.multi_dot([xp.eye(2)]),
    "cross(length 4)": lambda xp: xp.cross(xp.ones(4), xp.ones(4)),
    # fft
    "fft(n=0)": lambda xp: xp.fft.fft(xp.ones(4), n=0),
    "fft(n=-1)": lambda xp: xp.fft.fft(xp.ones(4), n=-1),
    "fft(n=2.5)": lambda xp: xp.fft.fft(xp.ones(4), n=2.5),
    "fft(norm=bogus)": lambda xp: xp.fft.fft(xp.ones(4), norm="bogus"),
    "fft(empty)": lambda xp: xp.fft.fft(xp.ones(0)),
    "fft(0-d)": lambda xp: xp.fft.fft(xp.asarray(1.0)),
    "fftn(s and axes lengths)": lambda xp: xp.fft.fftn(_a2(xp), s=(2,), axes=(0, 1)),
    "fftn(duplicate axes)": lambda xp: xp.fft.fftn(_a2(xp), axes=(0, 0)),
    "rfft(complex)": lambda xp: xp.fft.rfft(xp.ones(4, dtype=complex)),
    "irfft(n=0)": lambda xp: xp.fft.irfft(xp.ones(4), n=0),
    "fftfreq(0)": lambda xp: xp.fft.fftfreq(0),
    "fftfreq(2.5)": lambda xp: xp.fft.fftfreq(2.5),
    "fftshift(axes=2)": lambda xp: xp.fft.fftshift(_a2(xp), axes=2),
}


# --- empty and 0-d operands --------------------------------------------------------------
EDGE_FUNCS = {
    "argmax(axis=0)": lambda xp, a: xp.argmax(a, axis=0),
    "median": lambda xp, a: xp.median(a),
    "percentile": lambda xp, a: xp.percentile(a, 50),
    "mean": lambda xp, a: xp.mean(a),
    "std(axis=0)": lambda xp, a: xp.std(a, axis=0),
    "min(axis=-1)": lambda xp, a: xp.min(a, axis=-1),
    "histogram": lambda xp, a: xp.histogram(a, bins=2)[0],
    "unique": lambda xp, a: xp.unique(a),
    "sort": lambda xp, a: xp.sort(a),
    "argsort(axis=None)": lambda xp, a: xp.argsort(a, axis=None),
    "diff": lambda xp, a: xp.diff(a),
    "diff(n=-1)": lambda xp, a: xp.diff(a, n=-1),
    "gradient": lambda xp, a: xp.gradient(a),
    "flip": lambda xp, a: xp.flip(a),
    "roll": lambda xp, a: xp.roll(a, 1),
    "tile": lambda xp, a: xp.tile(a, 2),
    "repeat": lambda xp, a: xp.repeat(a, 2),
    "transpose": lambda xp, a: xp.transpose(a),
    "expand_dims(1)": lambda xp, a: xp.expand_dims(a, 1),
    "squeeze(axis=0)": lambda xp, a: xp.squeeze(a, axis=0),
    "diagonal": lambda xp, a: xp.diagonal(a),
    "cumsum(axis=0)": lambda xp, a: xp.cumsum(a, axis=0),
    "nonzero": lambda xp, a: xp.nonzero(a),
    "take([0])": lambda xp, a: xp.take(a, [0]),
    "det": lambda xp, a: xp.linalg.det(a),
    "inv": lambda xp, a: xp.linalg.inv(a),
    "norm": lambda xp, a: xp.linalg.norm(a),
    "norm(ord=1)": lambda xp, a: xp.linalg.norm(a, 1),
    "dot(self)": lambda xp, a: xp.dot(a, a),
    "outer(self)": lambda xp, a: xp.outer(a, a),
    "kron(self)": lambda xp, a: xp.kron(a, a),
    "ptp": lambda xp, a: xp.ptp(a),
    "nanargmin": lambda xp, a: xp.nanargmin(a),
    "average": lambda xp, a: xp.average(a),
    "bincount": lambda xp, a: xp.bincount(a.astype(int)),
    "searchsorted": lambda xp, a: xp.searchsorted(a, 1.0),
    "interp": lambda xp, a: xp.interp(1.0, a, a),
    "cov": lambda xp, a: xp.cov(a),
    "trace": lambda xp, a: xp.trace(a),
    "fft": lambda xp, a: xp.fft.fft(a),
    "item": lambda xp, a: a.item(),
    "len": lambda xp, a: len(a),
    "float": lambda xp, a: float(a),
    "getitem[0]": lambda xp, a: a[0],
    "getitem[-1]": lambda xp, a: a[-1],
    "getitem[..., 0]": lambda xp, a: a[..., 0],
}
EDGE_OPERANDS = {
    "0-d": lambda xp: xp.asarray(2.0),
    "empty": lambda xp: xp.zeros(0),
    "0x3": lambda xp: xp.zeros((0, 3)),
    "3x0": lambda xp: xp.zeros((3, 0)),
}


def _edge_cases():
    for (name, fn), (op, make) in itertools.product(EDGE_FUNCS.items(), EDGE_OPERANDS.items()):
        yield f"{name}[{op}]", (lambda f, m: lambda xp: f(xp, m(xp)))(fn, make)


def _cases():
    yield from _axis_cases()
    yield from _shape_cases()
    yield from _dtype_cases()
    yield from _index_cases()
    yield from _size_cases()
    yield from _edge_cases()
    yield from PARAM_CASES.items()


CASES = dict(_cases())

# Differences from NumPy not fixed yet: each stays listed until fixed (strict xfail, so a
# fix that lands elsewhere shows up as XPASS and the entry goes).
KNOWN = {
    "isclose(bogus)": "cupynum refuses a string operand when converting it (TypeError), "
                      "before NumPy's DTypePromotionError (a TypeError) could be raised",
    "multinomial(size=True)": "NumPy's multinomial reads size=True as 1 (its other "
                              "distributions refuse it); cupynum refuses it everywhere",
}


def _public(exc_type):
    """NumPy's exception type as users catch it: a private class (``_UFuncNoLoopError``,
    ``numpy._core._exceptions.UFuncTypeError``...) stands for its nearest public ancestor."""
    for t in exc_type.__mro__:
        if t.__module__ == "builtins" or any(
                getattr(ns, t.__name__, None) is t for ns in (np, np.exceptions, np.linalg)):
            return t
    return Exception


def _outcome(fn, xp):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return None, fn(xp)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return e, None


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason=KNOWN[n])) if n in KNOWN else n for n in CASES])
def test_same_outcome_as_numpy(name):
    fn = CASES[name]
    expected_exc, expected = _outcome(fn, np)
    got_exc, got = _outcome(fn, cp)
    if expected_exc is not None:
        want = _public(type(expected_exc))
        assert got_exc is not None, (
            f"NumPy raised {type(expected_exc).__name__}({expected_exc}); cupynum returned "
            f"{got!r}")
        assert isinstance(got_exc, want), (
            f"NumPy raised {type(expected_exc).__name__}({expected_exc}); cupynum raised "
            f"{type(got_exc).__name__}({got_exc})")
        return
    assert got_exc is None, (f"NumPy returned {expected!r}; cupynum raised "
                             f"{type(got_exc).__name__}({got_exc})")
    assert_same(got, expected, rtol=_tolerance(expected), atol=_tolerance(expected))


def _tolerance(expected):
    """The grid is about outcomes, not rounding: values within a few units of the result's
    precision (a GPU's transcendentals and SVDs round differently from NumPy's in float32)."""
    kinds = [np.asarray(x).dtype for x in (expected if isinstance(expected, tuple)
                                            else (expected,))]
    eps = max((np.finfo(d).eps for d in kinds if d.kind in "fc"), default=0.0)
    return max(1e-12, 8 * eps)
