"""interp against NumPy: values bit for bit, dtype, shape and errors."""
import numpy as np
import pytest

from helpers import compare

rng = np.random.default_rng(11)


def _points(n):
    xp = np.sort(rng.standard_normal(n))
    return xp, rng.standard_normal(n)


@pytest.mark.parametrize("kw", [{}, dict(left=-7, right=9.5), dict(left=np.nan),
                                dict(period=2.5), dict(period=-1.0)])
@pytest.mark.parametrize("n", [2, 3, 50])
def test_interp_values(kw, n):
    xp, fp = _points(n)
    x = np.concatenate([rng.standard_normal(100 - n) * 2, xp, [np.nan, np.inf, -np.inf, 0.5]])
    with np.errstate(invalid="ignore"):
        compare(lambda m, a, b, c: m.interp(a, b, c, **kw), x, xp, fp)
        compare(lambda m, a, b, c: m.interp(a, b, c, **kw), x.reshape(2, -1)[:, ::3], xp, fp)


def test_interp_edges():
    xp = np.array([0.0, 1.0, 1.0, 2.0, 3.0])  # a repeated point
    fp = np.array([1.0, np.inf, -np.inf, np.inf, 3.0])  # infinite values: NaN retried
    x = np.linspace(-1, 4, 41)
    with np.errstate(invalid="ignore"):
        compare(lambda m, a, b, c: m.interp(a, b, c), x, xp, fp)
    one = np.array([1.0]), np.array([2.0])
    compare(lambda m, a, b, c: m.interp(a, b, c), np.array([0.5, 1.0, 1.5, np.nan]), *one)
    compare(lambda m, a, b, c: m.interp(a, b, c), np.array(0.25), xp, np.arange(5.0))
    compare(lambda m, a, b, c: m.interp(a, b, c), np.arange(4, dtype=np.int32), xp,
            np.arange(5, dtype=np.int16))


@pytest.mark.parametrize("case", ["length", "empty", "2d", "period0"])
def test_interp_errors(case):
    x = np.linspace(0, 1, 5)
    xp, fp, kw = np.arange(4.0), np.arange(4.0), {}
    if case == "length":
        fp = np.arange(3.0)
    elif case == "empty":
        xp = fp = np.zeros(0)
    elif case == "2d":
        xp = fp = np.arange(4.0).reshape(2, 2)
    else:
        kw = dict(period=0)
    compare(lambda m, a, b, c: m.interp(a, b, c, **kw), x, xp, fp)


def test_interp_complex_fp():
    xp = np.arange(5.0)
    fp = xp * (1 + 2j)
    compare(lambda m, a, b, c: m.interp(a, b, c), np.linspace(-1, 6, 9), xp, fp)
