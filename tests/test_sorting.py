"""Sorting, searching and set routines, compared with NumPy.

``argsort`` is stable in cupynum, so it equals NumPy's ``kind='stable'``; for the default
kinds the tests use data without ties or check invariants (NumPy leaves ties unspecified).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cupynum as cp
from helpers import compare

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


def sample(shape, dtype, seed=0, special=True):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    x = rng.standard_normal(shape) * 100
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape) * 100
    x = np.asarray(x).astype(dt)
    if special and x.size:
        flat = x.reshape(-1)
        k = max(1, flat.size // 10)
        flat[:k] = np.nan
        flat[k:2 * k] = np.inf
        flat[2 * k:3 * k] = -np.inf
        flat[3 * k:4 * k] = 0.0
        flat[4 * k:5 * k] = -0.0
        rng.shuffle(flat)
    return x


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_dtypes(dtype):
    x = sample((4, 50), dtype)
    for axis in (-1, 0, None):
        compare(lambda xp, x: xp.argsort(x, axis=axis, kind="stable"), x)
        compare(lambda xp, x: xp.argsort(x, axis=axis, stable=True), x)
        compare(lambda xp, x: xp.sort(x, axis=axis, kind="stable"), x)
    compare(lambda xp, x: xp.sort(x.T[::-1], axis=1, kind="stable"), x)
    got = cp.sort(cp.asarray(x), axis=0).get()  # unstable: equal values, NaN last
    exp = np.sort(x, axis=0)
    assert got.dtype == exp.dtype and np.array_equal(got, exp, equal_nan=x.dtype.kind in "fc")


def test_sort_method_in_place_and_partition():
    x = sample(40, np.float64, special=False)

    def f(xp, x):
        x.sort()
        return x

    compare(f, x)
    p = cp.partition(cp.asarray(x), 7).get()
    assert (p[:7] <= p[7]).all() and (p[8:] >= p[7]).all() and p[7] == np.sort(x)[7]
    ap = cp.argpartition(cp.asarray(x), (3, 9)).get()
    assert x[ap[3]] == np.sort(x)[3] and x[ap[9]] == np.sort(x)[9]
    compare(lambda xp, x: xp.partition(x, 40), x)
    compare(lambda xp, x: xp.argpartition(x, -41), x)


def test_sort_edge_cases():
    compare(lambda xp: xp.sort(xp.zeros(0)))
    compare(lambda xp: xp.sort(xp.zeros((3, 0)), axis=0))
    compare(lambda xp: xp.argsort(xp.zeros((0, 4)), axis=1))
    compare(lambda xp: xp.sort(xp.asarray(3.0)))
    compare(lambda xp: xp.sort(xp.asarray(3.0), axis=None))
    compare(lambda xp: xp.sort(xp.ones(3), kind="bogus"))
    compare(lambda xp: xp.sort(xp.ones((3, 3)), axis=2))
    compare(lambda xp: xp.sort_complex(xp.asarray([3, 1, 2], dtype=xp.int8)))
    compare(lambda xp: xp.sort_complex(xp.asarray([3.0, 1, 2], dtype=xp.float32)))
    compare(lambda xp: xp.sort_complex(xp.asarray([1 + 2j, 1 - 1j, 0j])))


def test_complex_order():
    v = np.array([1 + 2j, np.nan + 1j, 1 + np.nan * 1j, complex(np.nan, np.nan), 0 + 5j,
                  -1 - 1j, 1 + 1j, np.nan - 3j, -2 + np.nan * 1j], np.complex128)
    compare(lambda xp, v: xp.argsort(v, kind="stable"), v)
    compare(lambda xp, v: xp.sort(v), v)


def test_lexsort():
    rng = np.random.default_rng(1)
    k1, k2 = rng.integers(0, 3, 30), rng.standard_normal(30).round(0)
    compare(lambda xp, a, b: xp.lexsort((a, b)), k1, k2)
    compare(lambda xp, a, b: xp.lexsort(xp.stack([a, b.astype(int)])), k1, k2)
    compare(lambda xp, a: xp.lexsort([a.reshape(5, 6)], axis=0), k1)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float16, np.float32,
                                   np.float64, np.complex64])
def test_searchsorted(dtype):
    a = np.sort(sample(60, dtype, special=dtype != np.complex64))
    v = sample((3, 7), dtype, seed=2)
    for side in ("left", "right"):
        compare(lambda xp, a, v: xp.searchsorted(a, v, side=side), a, v)
        compare(lambda xp, a, v: a.searchsorted(v[0, 0], side=side), a, v)
    perm = np.random.default_rng(0).permutation(60)
    shuffled = a[np.argsort(perm)]
    compare(lambda xp, s, p, v: xp.searchsorted(s, v, sorter=p), shuffled, np.argsort(shuffled,
                                                                                       kind="stable"), v)
    compare(lambda xp, a: xp.searchsorted(a.reshape(6, 10), 1), a)
    compare(lambda xp, a: xp.searchsorted(a, 1, side="middle"), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(dtype):
    rng = np.random.default_rng(3)
    pick = rng.integers(0, 40, 100)
    x = sample(40, dtype)[pick].reshape(4, 25)  # NaN, inf, -0.0 and 0.0 among them
    compare(lambda xp, x: xp.unique(x, return_index=True, return_inverse=True,
                                    return_counts=True), x)  # stable in NumPy too
    # Without return_index NumPy sorts unstably: which of -0.0/0.0 represents the zeros
    # and the order of unequal NaNs are unspecified, so compare on plain values there.
    p = sample(40, dtype, special=False)[pick].reshape(4, 25)
    compare(lambda xp, x: xp.unique(x), p)
    compare(lambda xp, x: xp.unique(x, equal_nan=False), p)
    compare(lambda xp, x: xp.sort(xp.unique_values(x)), p)  # NumPy: any order
    compare(lambda xp, x: tuple(xp.unique_counts(x)), p)
    compare(lambda xp, x: tuple(xp.unique_inverse(x)), p)
    compare(lambda xp, x: tuple(xp.unique_all(x)), p)
    got = cp.unique(cp.asarray(x), equal_nan=False).get()
    exp = np.unique(x, equal_nan=False)
    assert np.array_equal(got, exp, equal_nan=x.dtype.kind in "fc")


def test_unique_axis_and_empty():
    m = np.array([[1, 2], [3, 4], [1, 2]])
    compare(lambda xp, m: xp.unique(m, axis=0, return_counts=True), m)
    compare(lambda xp: xp.unique(xp.zeros(0)))
    compare(lambda xp: xp.unique(xp.zeros(0), return_index=True, return_inverse=True,
                                 return_counts=True))
    compare(lambda xp: xp.unique(xp.asarray(5)))


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_sets(dtype):
    rng = np.random.default_rng(4)
    a = rng.integers(0, 20, 30).astype(dtype)
    b = rng.integers(10, 30, 25).astype(dtype)
    compare(lambda xp, a, b: xp.isin(a, b), a, b)
    compare(lambda xp, a, b: xp.isin(a.reshape(5, 6), b, invert=True), a, b)
    compare(lambda xp, a, b: xp.isin(a, b[:0]), a, b)
    compare(lambda xp, a, b: xp.intersect1d(a, b), a, b)
    compare(lambda xp, a, b: xp.intersect1d(a, b, return_indices=True), a, b)
    compare(lambda xp, a, b: xp.union1d(a, b), a, b)
    compare(lambda xp, a, b: xp.setdiff1d(a, b), a, b)
    compare(lambda xp, a, b: xp.setxor1d(a, b), a, b)
    compare(lambda xp, a, b: xp.setxor1d(a[:0], b[:0]), a, b)


def test_isin_nan():
    a = np.array([1.0, np.nan, 2.0])
    compare(lambda xp, a: xp.isin(a, [np.nan, 2.0]), a)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int16, np.float32, np.float64]),
                  hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)),
       st.integers(-3, 2))
def test_hypothesis_argsort(x, axis):
    if axis >= x.ndim or axis < -x.ndim:
        axis = -1
    compare(lambda xp, x: xp.argsort(x, axis=axis, kind="stable"), x)
    compare(lambda xp, x: xp.sort(x, axis=axis, kind="stable"), x)
    compare(lambda xp, x: xp.unique(x, return_index=True, return_inverse=True,
                                    return_counts=True), x)  # stable in NumPy too


# --- issue 5: unique(axis=k) and complex searchsorted, native compositions now -----------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_axis(dtype):
    rng = np.random.default_rng(5)
    base = rng.integers(0, 3, (6, 4, 3)).astype(dtype)
    if np.dtype(dtype).kind in "fc":  # rows holding NaN never compare equal
        base[1, 0, 0] = base[3, 0, 0] = base[2, 1, 2] = np.nan
    flags = [(False, False, False), (True, True, True), (True, False, False),
             (False, True, False), (False, False, True)]
    for a in (base, base[::-1, ::2], base[0], base[:, 0, 0], base[:0], base[:, :0],
              base[..., 1].T):
        for axis in range(-a.ndim, a.ndim):
            for f in flags:
                for en in (True, False):
                    compare(lambda xp, a: xp.unique(a, *f, axis=axis, equal_nan=en), a)
    compare(lambda xp, a: xp.unique(a, axis=3), base)  # AxisError
    compare(lambda xp, a: xp.unique(a, axis=-4), base)
    compare(lambda xp: xp.unique(xp.asarray(3, dtype), axis=0))  # AxisError


def test_unique_axis_float_specials():
    a = np.array([[1, np.nan], [np.nan, 0], [0, 5], [np.nan, np.nan], [1, 2], [1, np.nan],
                  [np.inf, -np.inf], [-np.inf, 1], [0, 5]])
    for dt in (np.float16, np.float32, np.float64, np.complex64):
        compare(lambda xp, a: xp.unique(a, True, True, True, axis=0), a.astype(dt))
        compare(lambda xp, a: xp.unique(a, axis=1), a.astype(dt).T)
    c = np.array([[1 + 1j, np.nan], [complex(np.nan, 0), 1], [complex(0, np.nan), 1],
                  [1 + 1j, np.nan]])
    compare(lambda xp, c: xp.unique(c, True, True, True, axis=0), c)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_searchsorted_complex(dtype):
    nan = np.nan
    vals = np.array([0, 1, 1 + 1j, 1 - 1j, 2, complex(nan, 0), complex(0, nan),
                     complex(1, nan), complex(nan, nan), complex(nan, 1), -1j, 1, 1 + 1j,
                     -0.0], np.complex128)
    a = np.sort(vals.astype(dtype))
    big = np.sort(sample(200, dtype))
    for aa in (a, a[:0], a[:1], np.sort(a[::2]), big):
        for v in (vals.astype(dtype), vals.reshape(2, 7)[:, ::2], vals[3], vals[:0],
                  np.array([1, 2, 3]), 2.5, np.array([1, 0], np.float32), big[::-3]):
            for side in ("left", "right"):
                compare(lambda xp, a, v: xp.searchsorted(a, v, side), aa, v)
    s = np.argsort(vals, kind="stable")
    compare(lambda xp, a, v, s: xp.searchsorted(a, v, "right", sorter=s), vals, vals, s)
    compare(lambda xp, a, v: xp.searchsorted(a, v), np.array([1, 2, 3]), a)  # promoted
    compare(lambda xp, a: xp.searchsorted(a, 1j, side="middle"), a)  # ValueError
