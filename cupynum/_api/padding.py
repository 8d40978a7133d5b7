"""Padding arrays (NumPy reference: "Padding arrays"): ``pad``.

A section of its own, above statistics: the "mean" and "median" modes pad with statistics
of the edges, so ``pad`` builds on ``statistics`` (and the array manipulations below it).
"""
from __future__ import annotations

import numpy as np

from .._array import assign, empty_array, from_host, ndarray
from .._fallback import call_on_host
from .._ufunc import uf
from . import elementwise, reductions, statistics
from .creation import arange, asarray
from .indexing import take

__all__ = ["pad"]


def pad(array, pad_width, mode="constant", **kwargs):
    a = asarray(array)
    if callable(mode) or isinstance(pad_width, dict):
        return call_on_host(np.pad, (a, pad_width, mode), kwargs)
    if mode not in _PAD_KWARGS:
        raise ValueError(f"mode '{mode}' is not supported")
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    pw = np.broadcast_to(pw, (a.ndim, 2)).astype(np.intp)
    if (pw < 0).any():
        raise ValueError("index can't contain negative values")
    bad = set(kwargs) - set(_PAD_KWARGS[mode])
    if bad:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {bad}")
    if mode in _PORTED_PAD_MODES or (mode in ("reflect", "symmetric") and
                                     kwargs.get("reflect_type", "even") == "odd"):
        return _pad_ported(a, [(int(lo), int(hi)) for lo, hi in pw], mode, kwargs)
    shape = tuple(int(n + lo + hi) for n, (lo, hi) in zip(a.shape, pw))
    if mode in ("constant", "empty"):
        out = empty_array(shape, a.dtype)
        inner = tuple(slice(int(lo), int(lo) + n) for n, (lo, _) in zip(a.shape, pw))
        if mode == "constant":
            cv = np.broadcast_to(np.asarray(kwargs.get("constant_values", 0)), (a.ndim, 2))
            for d in range(a.ndim):  # NumPy's order: axis by axis, edges include corners
                lo, hi = int(pw[d][0]), int(pw[d][1])
                pre = tuple(slice(int(pw[e][0]), int(pw[e][0]) + a.shape[e]) if e > d
                            else slice(None) for e in range(d))
                if lo:
                    _fill_const(out[pre + (slice(0, lo),)], cv[d][0])
                if hi:
                    _fill_const(out[pre + (slice(shape[d] - hi, None),)], cv[d][1])
        if a.size:
            out[inner] = a  # (not assign(out[inner], a): out[()] of a 0-d out is a copy)
        return out
    res = a
    for d in range(a.ndim):
        lo, hi = int(pw[d][0]), int(pw[d][1])
        if not lo and not hi:
            continue
        if a.shape[d] == 0:
            raise ValueError(f"can't extend empty axis {d} using modes other than 'constant' "
                             f"or 'empty'")
        idx = np.pad(np.arange(a.shape[d], dtype=np.intp), (lo, hi), mode=mode)
        res = take(res, from_host(idx), axis=d)
    return res if res is not a else a.copy()


_PAD_KWARGS = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
               "linear_ramp": ("end_values",), "maximum": ("stat_length",),
               "mean": ("stat_length",), "median": ("stat_length",),
               "minimum": ("stat_length",), "reflect": ("reflect_type",),
               "symmetric": ("reflect_type",)}
_PORTED_PAD_MODES = ("linear_ramp", "maximum", "mean", "median", "minimum")


def _at(sl, axis):
    return (slice(None),) * axis + (sl,)


def _pad_pairs(x, ndim, as_index=False):
    """NumPy's ``_as_pairs``: (ndim, 2) pairs; NumPy scalars where NumPy keeps them."""
    if x is None:
        return ((None, None),) * ndim
    x = np.array(x._host() if isinstance(x, ndarray) else x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x < 0:
                raise ValueError("index can't contain negative values")
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ValueError("index can't contain negative values")
            return ((x[0], x[1]),) * ndim
    if as_index and x.min() < 0:
        raise ValueError("index can't contain negative values")
    return np.broadcast_to(x, (ndim, 2)).tolist()


def _pad_ported(a, pw, mode, kwargs):
    """NumPy's own pad algorithm (axis by axis, in place on the padded array) for the
    linear_ramp and statistic modes and for odd reflections, over device operations."""
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(a.shape, pw))
    padded = empty_array(shape, a.dtype)
    inner = tuple(slice(lo, lo + n) for n, (lo, _) in zip(a.shape, pw))
    if a.size:
        padded[inner] = a
    else:
        for d, (lo, hi) in enumerate(pw):
            if a.shape[d] == 0 and (lo or hi):
                raise ValueError(f"can't extend empty axis {d} using modes other than "
                                 f"'constant' or 'empty'")
        return padded
    if mode == "linear_ramp":
        ends = _pad_pairs(kwargs.get("end_values", 0), a.ndim)
        for d, (width, vals) in enumerate(zip(pw, ends)):
            roi = padded[(slice(None),) * (d + 1) + inner[d + 1:]]
            el, er = _pad_edges(roi, d, width)
            if width[0]:
                roi[_at(slice(None, width[0]), d)] = _ramp(vals[0], el, width[0], d, a.dtype)
            if width[1]:
                r = _ramp(vals[1], er, width[1], d, a.dtype)[_at(slice(None, None, -1), d)]
                roi[_at(slice(roi.shape[d] - width[1], None), d)] = r
    elif mode in _PORTED_PAD_MODES:
        func = {"maximum": reductions.amax, "minimum": reductions.amin,
                "mean": statistics.mean, "median": statistics.median}[mode]
        lengths = _pad_pairs(kwargs.get("stat_length"), a.ndim, as_index=True)
        for d, (width, length) in enumerate(zip(pw, lengths)):
            roi = padded[(slice(None),) * (d + 1) + inner[d + 1:]]
            left, right = _pad_stats(roi, d, width, length, func, mode in ("maximum",
                                                                          "minimum"))
            roi[_at(slice(None, width[0]), d)] = left
            roi[_at(slice(roi.shape[d] - width[1], None), d)] = right
    else:  # reflect / symmetric with reflect_type='odd'
        include_edge = mode == "symmetric"
        for d, (lo, hi) in enumerate(pw):
            if a.shape[d] == 1 and (lo or hi):  # NumPy's legacy singleton rule
                el, er = _pad_edges(padded, d, (lo, hi))
                padded[_at(slice(None, lo), d)] = el
                padded[_at(slice(padded.shape[d] - hi, None), d)] = er
                continue
            roi = padded[(slice(None),) * (d + 1) + inner[d + 1:]]
            while lo > 0 or hi > 0:
                lo, hi = _reflect_odd_step(roi, d, lo, hi, a.shape[d], include_edge)
    return padded


def _pad_edges(padded, axis, width):
    lo = width[0]
    hi = padded.shape[axis] - width[1]
    return padded[_at(slice(lo, lo + 1), axis)], padded[_at(slice(hi - 1, hi), axis)]


def _ramp(start, edge, num, axis, dtype):
    """``numpy.linspace(start, edge.squeeze(axis), num, endpoint=False, dtype=dtype,
    axis=axis)`` for num > 0, with linspace's own operations."""
    dt = np.result_type(start, edge.dtype)
    if dt.kind not in "fc":
        dt = np.result_type(dt, np.float64)
    delta = uf.subtract(edge, start, dtype=dt)
    y = arange(0, num, dtype=dt).reshape((1,) * axis + (num,) + (1,) * (edge.ndim - axis - 1))
    step = uf.true_divide(delta, num)
    zero = reductions.any(uf.equal(step, 0))
    y = elementwise.where(zero, uf.multiply(uf.true_divide(y, num), delta),
                      uf.multiply(y, step))
    y = uf.add(y, start, dtype=dt)
    if np.issubdtype(dtype, np.integer):
        y = uf.floor(y)
    return y.astype(dtype)


def _pad_stats(padded, axis, width, length, func, needs_values):
    left_index = width[0]
    right_index = padded.shape[axis] - width[1]
    max_length = right_index - left_index
    ll, rl = length
    if ll is None or max_length < ll:
        ll = max_length
    if rl is None or max_length < rl:
        rl = max_length
    if (ll == 0 or rl == 0) and needs_values:
        raise ValueError("stat_length of 0 yields no value for padding")
    integer = np.issubdtype(padded.dtype, np.integer)

    def stat(chunk):
        r = func(chunk, axis=axis, keepdims=True)
        if integer and r.dtype.kind in "fc":
            r = uf.rint(r)
        return r

    left = stat(padded[_at(slice(left_index, left_index + ll), axis)])
    if ll == rl == max_length:
        return left, left
    return left, stat(padded[_at(slice(right_index - rl, right_index), axis)])


def _reflect_odd_step(padded, axis, left_pad, right_pad, period, include_edge):
    """One step of NumPy's ``_set_reflect_both`` with method 'odd'."""
    old_length = padded.shape[axis] - right_pad - left_pad
    if include_edge:
        old_length = old_length // period * period
        edge_offset = 1
    else:
        old_length = (old_length - 1) // (period - 1) * (period - 1) + 1
        edge_offset = 0
        old_length -= 1
    if left_pad > 0:
        chunk_length = min(old_length, left_pad)
        stop = left_pad - edge_offset
        chunk = padded[_at(slice(stop + chunk_length, stop, -1), axis)]
        edge = padded[_at(slice(left_pad, left_pad + 1), axis)]
        chunk = uf.subtract(uf.multiply(2, edge), chunk)
        padded[_at(slice(left_pad - chunk_length, left_pad), axis)] = chunk
        left_pad -= chunk_length
    if right_pad > 0:
        chunk_length = min(old_length, right_pad)
        start = -right_pad + edge_offset - 2
        chunk = padded[_at(slice(start, start - chunk_length, -1), axis)]
        edge = padded[_at(slice(-right_pad - 1, -right_pad), axis)]
        chunk = uf.subtract(uf.multiply(2, edge), chunk)
        start = padded.shape[axis] - right_pad
        padded[_at(slice(start, start + chunk_length), axis)] = chunk
        right_pad -= chunk_length
    return left_pad, right_pad


def _fill_const(target, value):
    host = np.empty((), target.dtype)
    host[()] = np.asarray(value).astype(target.dtype) if np.ndim(value) == 0 else value
    assign(target, host[()])
