"""Elementwise functions that are not ufuncs: where, clip, nan_to_num, round, ..."""
import numpy as np
import pytest

from helpers import compare

F = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.14159, np.nan, np.inf, -np.inf])
C = (F[:8] + 1j * F[::-1][:8]).astype(np.complex64)
I = np.array([-15, -5, 0, 5, 15, 25, 127], np.int8)


@pytest.mark.parametrize("x", [F, F.astype(np.float32), I, C, np.array([True, False])])
def test_where_three_args(x):
    cond = np.arange(x.size) % 3 == 0
    compare(lambda xp, c, a: xp.where(c, a, 0), cond, x)
    compare(lambda xp, c, a: xp.where(c, 1.5, a), cond, x)
    compare(lambda xp, c, a: xp.where(c, a, a[::-1]), cond, x)
    compare(lambda xp, c, a: xp.where(c[:, None], a, a[None, :]), cond, x)
    compare(lambda xp, a: xp.where(a, 1, 2), x)


def test_where_errors():
    compare(lambda xp, a: xp.where(a > 0, a), F)
    compare(lambda xp, a: xp.where(a > 0, a, np.zeros(3)), F)


@pytest.mark.parametrize("x", [F, F.astype(np.float16), I, np.arange(10, dtype=np.uint16)])
def test_clip(x):
    compare(lambda xp, a: xp.clip(a, 0, 5), x)
    compare(lambda xp, a: xp.clip(a, None, 2), x)
    compare(lambda xp, a: xp.clip(a, 3, 1), x)
    compare(lambda xp, a: xp.clip(a, a[::-1], 4), x)
    compare(lambda xp, a: a.clip(1, 2) if hasattr(a, "clip") else xp.clip(a, 1, 2), x)


@pytest.mark.parametrize("x", [F, F.astype(np.float32), C, I])
def test_nan_to_num(x):
    compare(lambda xp, a: xp.nan_to_num(a), x)
    compare(lambda xp, a: xp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), x)


@pytest.mark.parametrize("x", [F, F.astype(np.float32), C, I, np.array([1.25, 2.675, -3.5])])
@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_around(x, decimals):
    compare(lambda xp, a: xp.around(a, decimals), x)
    compare(lambda xp, a: xp.round(a, decimals), x)


@pytest.mark.parametrize("x", [F, F.astype(np.float32), C, I])
def test_parts_and_predicates(x):
    compare(lambda xp, a: xp.real(a), x)
    compare(lambda xp, a: xp.imag(a), x)
    compare(lambda xp, a: xp.conj(a), x)
    compare(lambda xp, a: xp.angle(a), x, ulp=4)
    compare(lambda xp, a: xp.angle(a, deg=True), x, ulp=4)
    compare(lambda xp, a: xp.isreal(a), x)
    compare(lambda xp, a: xp.iscomplex(a), x)
    compare(lambda xp, a: xp.real_if_close(a), x)
    compare(lambda xp, a: xp.real_if_close(a.real + 1e-20j if a.dtype.kind == "f" else a), x)


@pytest.mark.parametrize("x", [F, F.astype(np.float32), I])
def test_fix_sinc_i0(x):
    compare(lambda xp, a: xp.fix(a), x)
    compare(lambda xp, a: xp.sinc(a), x, ulp=4)
    compare(lambda xp, a: xp.i0(a), x, rtol=1e-6 if x.dtype == np.float32 else 1e-13)


def test_isclose():
    a = np.array([1.0, 1.0 + 1e-9, np.nan, np.inf, -np.inf, 0.0, 1e-10])
    b = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 1e-9, 0.0])
    compare(lambda xp, x, y: xp.isclose(x, y), a, b)
    compare(lambda xp, x, y: xp.isclose(x, y, equal_nan=True), a, b)
    compare(lambda xp, x, y: xp.isclose(x, y, rtol=0, atol=1e-9), a, b)
    compare(lambda xp, x: xp.isclose(x, 1), a)
    compare(lambda xp, x, y: xp.isclose(x, y), np.arange(5), np.arange(5) + 1)
    compare(lambda xp, x, y: xp.isclose(x, y), a.astype(np.float32), b.astype(np.float32))
