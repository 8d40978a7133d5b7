"""numpy.fft semantics over the backend's ``fft`` (cuFFT on CUDA).

The transform axes are moved last and the data made C-contiguous (after padding or
cropping to the requested sizes); the backend transforms the last 1-3 axes, batched over
the rest, unnormalised; the norm scale is one multiply.  NumPy 2 dtype rules: float32 and
float16 compute in single precision (complex64), everything else in double.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import _backends
from .._api import creation
from .._array import empty_array, ndarray
from .._dtypes import normalize
from .._indexing import normalize_axis
from .._ufunc import uf

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _arr(x):
    return x if isinstance(x, ndarray) else creation.asarray(x)


def _single(dt):
    return dt in (np.float16, np.float32, np.complex64)


def _cdtype(dt):
    return normalize(np.complex64 if _single(dt) else np.complex128)


def _rdtype(dt):
    return normalize(np.float32 if _single(dt) else np.float64)


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')


def _scale(norm, n, forward):
    if norm == "ortho":
        return 1 / float(np.sqrt(n))
    if (norm == "forward") == forward:
        return 1.0 / n
    return None


def _swap(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho",
            "forward": "backward"}[norm]


def _resize(x, axis, n):
    """x cropped or zero-padded to length n along axis."""
    cur = x._shape[axis]
    if n == cur:
        return x
    if n < cur:
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(0, n)
        return x[tuple(idx)]
    shape = list(x._shape)
    shape[axis] = n
    out = creation.zeros(tuple(shape), dtype=x.dtype)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(0, cur)
    out[tuple(idx)] = x
    return out


def _run(x, axes, kind, forward, out_dtype, last_n=None):
    """Transform ``axes`` (distinct, at most 3) of x with the backend; returns a new array
    (a view with the original axis order over a C-contiguous result)."""
    nd = x.ndim
    rest = [i for i in range(nd) if i not in axes]
    perm = rest + list(axes)
    identity = perm == list(range(nd))  # the common case: the last axes, in order
    xt = x if identity else x.transpose(perm)
    if not xt._c_contig:
        xt = xt.copy()
    shape = list(xt._shape)
    if kind == "r2c":
        shape[-1] = shape[-1] // 2 + 1
    elif kind == "c2r":
        shape[-1] = last_n
    res = empty_array(tuple(shape), out_dtype)
    if res._size:
        _backends.for_arrays(xt, res).fft(xt, res, kind, len(axes), forward)
    if identity:
        return res
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    return res.transpose(inv)


def _c2c(x, axes, sizes, forward, norm):
    _check_norm(norm)
    dt = _cdtype(x.dtype)
    x = x.astype(dt, copy=False)
    for ax, n in zip(axes, sizes):
        if n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
        x = _resize(x, ax, n)
    total = 1
    for ax in axes:
        total *= x._shape[ax]
    uniq = list(dict.fromkeys(axes))
    if len(uniq) != len(axes):  # repeated axes: transform once per mention
        groups = [[a] for a in reversed(axes)]
    else:
        groups = [uniq[max(0, i - 3):i] for i in range(len(uniq), 0, -3)]
    for g in groups:
        x = _run(x, g, "c2c", forward, dt)
    s = _scale(norm, total, forward)
    if s is not None and x._size:  # in place when x is our fresh result: no new block
        x = uf.multiply(x, s, out=x) if groups else uf.multiply(x, s)
    return x


def _finish(res, out):
    if out is None:
        return res
    if not isinstance(out, ndarray):
        raise TypeError("out must be a cupynum array")
    if out._shape != res._shape:
        raise ValueError(f"out has shape {out._shape}, but the result has shape {res._shape}")
    if not np.can_cast(res.dtype, out.dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast output from {res.dtype} to {out.dtype}")
    if out._size:
        _backends.for_writing(out, res).copy(res, out)
    return out


def _axis_n(a, n, axis):
    ax = normalize_axis(axis, a.ndim)
    return ax, (a._shape[ax] if n is None else operator.index(n))


# The commonest calls, fft(x) and rfft(x) of a C-contiguous array along its last axis at
# the default norm, go straight to the backend (no axis moves, resizing or scaling to do).
_C2C = {np.dtype(np.complex64), np.dtype(np.complex128)}
_R2C = {np.dtype(np.float32): np.dtype(np.complex64),
        np.dtype(np.float64): np.dtype(np.complex128)}


def _whole_last_axis(a, n, axis, norm, out) -> bool:
    """``a`` is a C-contiguous cupynum array transformed whole along its last axis, at the
    default norm and without ``out``."""
    if type(a) is not ndarray or n is not None or out is not None or not a._c_contig:
        return False
    shape = a._shape
    return (bool(shape) and shape[-1] > 0 and norm in (None, "backward")
            and type(axis) is int and (axis == -1 or axis == len(shape) - 1))


def _forward_last(a, shape, dtype, kind):
    res = empty_array(shape, dtype)
    if res._size:
        _backends.for_arrays(a, res).fft(a, res, kind, 1, True)
    return res


def fft(a, n=None, axis=-1, norm=None, out=None):
    if _whole_last_axis(a, n, axis, norm, out) and a.dtype in _C2C:
        return _forward_last(a, a._shape, a.dtype, "c2c")
    a = _arr(a)
    ax, n = _axis_n(a, n, axis)
    return _finish(_c2c(a, [ax], [n], True, norm), out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    a = _arr(a)
    ax, n = _axis_n(a, n, axis)
    return _finish(_c2c(a, [ax], [n], False, norm), out)


def _axes_sizes(a, s, axes):
    if axes is None:
        # NumPy's: the last len(s) axes, counted from the end (too many: AxisError)
        axes = list(range(a.ndim)) if s is None else [normalize_axis(x, a.ndim)
                                                      for x in range(-len(s), 0)]
    else:
        if not np.iterable(axes):  # NumPy takes no single int here (after its take)
            np.take(a._shape, axes)
            raise TypeError(f"'{type(axes).__name__}' object is not iterable")
        axes = [normalize_axis(x, a.ndim) for x in axes]
    if s is None:
        s = [a._shape[x] for x in axes]
    else:
        s = list(s)
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        s = [a._shape[x] if n in (None, -1) else operator.index(n) for x, n in zip(axes, s)]
    return axes, s


def fftn(a, s=None, axes=None, norm=None, out=None):
    a = _arr(a)
    axes, s = _axes_sizes(a, s, axes)
    if not axes:  # NumPy transforms nothing and returns its input itself
        return a
    return _finish(_c2c(a, axes, s, True, norm), out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    a = _arr(a)
    axes, s = _axes_sizes(a, s, axes)
    if not axes:  # as fftn
        return a
    return _finish(_c2c(a, axes, s, False, norm), out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return fftn(a, s, axes, norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return ifftn(a, s, axes, norm, out)


def _rfftn(a, axes, s, norm):
    _check_norm(norm)
    if a.dtype.kind == "c":
        raise TypeError("ufunc 'rfft' not supported for complex input")
    for n in s:
        if n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    rdt = _rdtype(a.dtype)
    x = a.astype(rdt, copy=False)
    last = axes[-1]
    x = _resize(x, last, s[-1])
    x = _run(x, [last], "r2c", True, _cdtype(rdt))
    total = s[-1]
    if len(axes) > 1:
        rest_s = s[:-1]
        for ax, n in zip(axes[:-1], rest_s):
            total *= n
        x = _c2c(x, axes[:-1], rest_s, True, "backward")
    sc = _scale(norm, total, True)
    if sc is not None and x._size:  # x is our fresh result: scale it in place
        x = uf.multiply(x, sc, out=x)
    return x


def _real_like(res, a):
    """NumPy's real output dtype for a 1-d inverse real transform of ``a``:
    ``result_type(a.real.dtype, 1.0)``, float16 for float16 input (computed in single)."""
    return res.astype(a.dtype) if a.dtype == np.float16 else res


def _irfftn(a, axes, s, norm, last_n):
    _check_norm(norm)
    cdt = _cdtype(a.dtype)
    x = a.astype(cdt, copy=False)
    total = last_n
    if len(axes) > 1:
        for n in s:
            total *= n
        x = _c2c(x, axes[:-1], s, False, "forward")  # unscaled inverse
    if last_n < 1:
        raise ValueError(f"Invalid number of FFT data points ({last_n}) specified.")
    last = axes[-1]
    x = _resize(x, last, last_n // 2 + 1)
    x = _run(x, [last], "c2r", False, _rdtype(cdt), last_n)
    sc = _scale(norm, total, False)
    if sc is not None and x._size:  # x is our fresh result: scale it in place
        x = uf.multiply(x, sc, out=x)
    return _real_like(x, a) if len(axes) == 1 else x


def rfft(a, n=None, axis=-1, norm=None, out=None):
    if _whole_last_axis(a, n, axis, norm, out) and a.dtype in _R2C:
        shape = a._shape
        return _forward_last(a, shape[:-1] + (shape[-1] // 2 + 1,), _R2C[a.dtype], "r2c")
    a = _arr(a)
    ax, n = _axis_n(a, n, axis)
    return _finish(_rfftn(a, [ax], [n], norm), out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    a = _arr(a)
    ax = normalize_axis(axis, a.ndim)
    n = 2 * (a._shape[ax] - 1) if n is None else operator.index(n)
    return _finish(_irfftn(a, [ax], [], norm, n), out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    a = _arr(a)
    axes, s = _axes_sizes(a, s, axes)
    return _finish(_rfftn(a, axes, s, norm), out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    a = _arr(a)
    given = s is not None
    axes, s = _axes_sizes(a, s, axes)
    last_n = s[-1] if given else 2 * (a._shape[axes[-1]] - 1)
    return _finish(_irfftn(a, axes, s[:-1], norm, last_n), out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return irfftn(a, s, axes, norm, out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    a = _arr(a)
    _check_norm(norm)
    ax = normalize_axis(axis, a.ndim)
    n = 2 * (a._shape[ax] - 1) if n is None else operator.index(n)
    conj = uf.conjugate(a.astype(_cdtype(a.dtype), copy=False))
    return _finish(_real_like(_irfftn(conj, [ax], [], _swap(norm), n), a), out)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    a = _arr(a)
    _check_norm(norm)
    ax, n = _axis_n(a, n, axis)
    return _finish(uf.conjugate(_rfftn(a, [ax], [n], _swap(norm))), out)


# --- helpers -------------------------------------------------------------------------------

def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """NumPy's ``fftfreq``; ``dtype`` (the array API's) casts the float64 frequencies."""
    return creation.asarray(np.fft.fftfreq(n, d), dtype=dtype)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """NumPy's ``rfftfreq``; ``dtype`` as in ``fftfreq``."""
    return creation.asarray(np.fft.rfftfreq(n, d), dtype=dtype)


def _roll_axis(x, shift, axis):
    n = x._shape[axis]
    if n == 0:
        return x
    shift %= n
    if shift == 0:
        return x
    out = empty_array(x._shape, x.dtype)
    pre = (slice(None),) * axis
    out[pre + (slice(shift, None),)] = x[pre + (slice(0, n - shift),)]
    out[pre + (slice(0, shift),)] = x[pre + (slice(n - shift, None),)]
    return out


def _shift(x, axes, inverse):
    x = _arr(x)
    if axes is None:
        axes = range(x.ndim)
    elif not np.iterable(axes):
        axes = (axes,)
    res = x
    for ax in axes:
        ax = normalize_axis(ax, x.ndim)
        n = x._shape[ax]
        res = _roll_axis(res, -(n // 2) if inverse else n // 2, ax)
    return res.copy() if res is x else res


def fftshift(x, axes=None):
    return _shift(x, axes, False)


def ifftshift(x, axes=None):
    return _shift(x, axes, True)
