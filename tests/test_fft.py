"""numpy.fft compared with NumPy (relative error bounds per precision)."""
import numpy as np
import pytest

import cupynum as cp
from helpers import compare

TOL = {np.float32: 1e-4, np.complex64: 1e-4, np.float64: 1e-10, np.complex128: 1e-10,
       np.int64: 1e-10, np.float16: 1e-3}


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind == "i":
        x = x * 10
    return x.astype(dtype)


def scaled(tol):
    return dict(rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128,
                                   np.int64, np.float16])
@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_c2c_1d(dtype, name, norm):
    x = rand((3, 16), dtype)
    t = scaled(TOL[dtype] * 4)
    compare(lambda xp, x: getattr(xp.fft, name)(x, norm=norm), x, **t)
    compare(lambda xp, x: getattr(xp.fft, name)(x, n=11, axis=0, norm=norm), x, **t)
    compare(lambda xp, x: getattr(xp.fft, name)(x, n=5, norm=norm), x, **t)
    compare(lambda xp, x: getattr(xp.fft, name)(x[:, ::-2], norm=norm), x, **t)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("kw", [{}, {"axes": (0, 2)}, {"s": (4, 6)}, {"axes": (1,)},
                                {"s": (3, 5, 7), "axes": (2, 0, 1)}, {"axes": (0, 1, 2, 3)}])
def test_nd(dtype, name, kw):
    if name == "rfftn" and np.dtype(dtype).kind == "c":
        dtype = np.float64
    x = rand((4, 5, 6, 3), dtype)
    compare(lambda xp, x: getattr(xp.fft, name)(x, **kw), x, **scaled(TOL[dtype] * 10))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_2d(name, norm):
    x = rand((2, 8, 6), np.float64)
    compare(lambda xp, x: getattr(xp.fft, name)(x, norm=norm), x, **scaled(1e-10))
    compare(lambda xp, x: getattr(xp.fft, name)(x, s=(5, 4), norm=norm), x, **scaled(1e-10))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [None, 7, 8, 20])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_real(dtype, n, norm):
    x = rand((3, 10), dtype)
    c = np.fft.rfft(x).astype(np.complex64 if dtype == np.float32 else np.complex128)
    t = scaled(TOL[dtype] * 10)
    compare(lambda xp, x: xp.fft.rfft(x, n=n, norm=norm), x, **t)
    compare(lambda xp, c: xp.fft.irfft(c, n=n, norm=norm), c, **t)
    compare(lambda xp, c: xp.fft.hfft(c, n=n, norm=norm), c, **t)
    compare(lambda xp, x: xp.fft.ihfft(x, n=n, norm=norm), x, **t)
    compare(lambda xp, x: xp.fft.rfft(x, n=n, axis=0, norm=norm), x, **t)


def test_roundtrip_and_out():
    x = rand((64,), np.complex64)
    y = cp.fft.ifft(cp.fft.fft(cp.asarray(x)))
    np.testing.assert_allclose(np.asarray(y), x, rtol=1e-5, atol=1e-5)

    def with_out(xp, x):
        out = xp.empty(x.shape, np.complex128)
        r = xp.fft.fft(x, out=out)
        assert r is out
        return out

    compare(with_out, rand((8,), np.complex128), **scaled(1e-12))


def test_errors():
    x = rand((8,), np.float64)
    compare(lambda xp, x: xp.fft.fft(x, n=0), x)
    compare(lambda xp, x: xp.fft.fft(x, norm="bad"), x)
    compare(lambda xp, x: xp.fft.fft(x, axis=2), x)
    compare(lambda xp, x: xp.fft.rfft(x.astype(np.complex64)), x)
    compare(lambda xp, x: xp.fft.irfft(x[:1]), x)  # n = 0


def test_helpers():
    for n in (1, 8, 9):
        compare(lambda xp: xp.fft.fftfreq(n, 0.5))
        compare(lambda xp: xp.fft.rfftfreq(n))
    x = rand((4, 5, 3), np.float32)
    for axes in (None, 0, (1, 2), -1):
        compare(lambda xp, x: xp.fft.fftshift(x, axes=axes), x)
        compare(lambda xp, x: xp.fft.ifftshift(x, axes=axes), x)
    compare(lambda xp, x: xp.fft.fftshift(x[0, 0]), x)


def test_empty_batch():
    compare(lambda xp, x: xp.fft.fft(x), np.zeros((0, 4), np.complex64))


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("norm", [None, "backward"])
def test_whole_last_axis_calls(dtype, axis, norm):
    """fft(x) / rfft(x) of C-contiguous arrays along the last axis (the direct path):
    NumPy's dtypes, shapes and values; a non-contiguous view takes the general path."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 10)).astype(dtype)
    if x.dtype.kind == "c":
        x = x + 1j * rng.standard_normal((3, 10)).astype(dtype)
    tol = 2e-5 if dtype in ("complex64", "float32") else 1e-12
    names = ["fft"] + (["rfft"] if x.dtype.kind == "f" else [])
    for name in names:
        compare(lambda xp, x: getattr(xp.fft, name)(x, axis=axis, norm=norm), x, rtol=tol,
                atol=tol)
        compare(lambda xp, x: getattr(xp.fft, name)(x[:, ::2], axis=axis, norm=norm), x,
                rtol=tol, atol=tol)
    compare(lambda xp, x: xp.fft.fft(x[:, :0]), x)  # an empty last axis raises as NumPy
