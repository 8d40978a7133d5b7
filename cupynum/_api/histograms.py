"""Histograms, binning, correlation and gradients (NumPy: "Statistics" -> "Histograms",
``digitize``, ``bincount``; "Mathematical functions" -> ``convolve``, ``gradient``).

Everything is composed from native device operations: ``sort``/``argsort``, ``searchsorted``,
``cumsum``, gathers, slicing and ufuncs.  Counting is sort based and deterministic (no float
atomics): the values are sorted, bin boundaries are found with ``searchsorted``, and counts
are differences of positions (exact); weighted bin sums are a segmented scan by doubling
over the sorted weights (each bin's sum involves only its own values, so infinities and
NaNs stay in their bin as in NumPy's sequential ``bincount``; float sums agree within the
summation bound).  Gathers with indices computed here use ``take(mode="clip")`` (in range
by construction, so no bounds-check sync).  Bin edges are computed on the host with NumPy's
own code from a few scalars read back (min and max, or the estimator's statistics): these
reads are sync points, listed in docs/differences.md.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .._array import _make, empty_array, ndarray
from .._dtypes import normalize
from .._fallback import call_on_host
from .._ufunc import uf
from . import reductions as _r
from . import sorting
from . import statistics as _s
from .creation import asarray
from .elementwise import where
from .indexing import take
from .manipulation import stack
from .sorting import searchsorted

__all__ = ["bincount", "digitize", "histogram_bin_edges", "histogram", "histogram2d",
           "histogramdd", "correlate", "convolve", "gradient"]

_asarray = _r._asarray
_INTP = np.dtype(np.intp)
_F8 = np.dtype(np.float64)


def _host(fname, *args, **kwargs):
    return call_on_host(getattr(np, fname), args, kwargs)


def _arange(n):
    return asarray(np.arange(n, dtype=np.intp))


def _where(c, x, y):
    return where(c, x, y)


def _cat(parts):
    return _r._concat([p for p in parts], 0)


def _read(*scalars):
    """One host read of several 0-d device values (a sync point)."""
    parts = [_asarray(s).reshape(1) for s in scalars]
    dt = np.result_type(*[p.dtype for p in parts])
    return _cat([p.astype(dt) for p in parts]).get()


def _sort(a):
    return sorting.sort(a)


def _argsort(a):
    return sorting.argsort(a, kind="stable")


def _searchsorted(a, v, side):
    return searchsorted(a, v, side)


# --- segment sums over sorted data --------------------------------------------------------


def _take(a, idx):
    """Gather of in-range device indices without the bounds check (no sync)."""
    return take(a, idx, mode="clip")


def _segment_sums(sw, pos):
    """Sums of the float64 values ``sw`` over the segments ``pos[i]:pos[i+1]`` (int64 device
    positions, nondecreasing; values before pos[0] or after pos[-1] belong to no segment).

    A segmented inclusive scan by doubling (log2(n) elementwise passes, no atomics): each
    sum involves only its own segment's values, so its rounding error is bounded by the
    segment's own sum of magnitudes, and infinities and NaNs stay in their segment, as in
    NumPy's sequential ``bincount``."""
    n = sw._size
    nseg = pos._size - 1
    res = empty_array((nseg,), _F8)
    if n == 0 or nseg <= 0:
        res[...] = 0.0
        return res
    keys = _searchsorted(pos, _arange(n), "right")  # segment id of every element
    s = sw.astype(_F8, copy=True)
    eq, add = uf.equal, uf.add
    d = 1
    while d < n:
        upd = _where(eq(keys[d:], keys[:-d]), add(s[d:], s[:-d]), s[d:])
        s = _cat([s[:d], upd])
        d *= 2
    hi, lo = pos[1:], pos[:-1]
    last = uf.subtract(hi, np.intp(1))
    tot = _take(s, last)
    # + 0.0 as NumPy's sum starts from 0.0 (a lone -0.0 gives 0.0)
    return add(_where(uf.greater(hi, lo), tot, 0.0), 0.0)


def _bincount_sorted(sx, nbins, sw=None):
    """bincount of sorted int64 keys ``sx`` (all in [0, nbins)) with sorted float64 weights."""
    pos = _searchsorted(sx, _arange(nbins + 1), "left")
    if sw is None:
        return uf.subtract(pos[1:], pos[:-1])
    return _segment_sums(sw, pos)


def _bincount_known(x, nbins, weights=None):
    """bincount of int64 ``x`` whose values are known to lie in [0, nbins): no sync."""
    if weights is None:
        return _bincount_sorted(_sort(x), nbins)
    order = _argsort(x)
    return _bincount_sorted(_take(x, order), nbins, _take(weights.astype(_F8), order))


# --- bincount -----------------------------------------------------------------------------


def bincount(x, /, weights=None, minlength=0):
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if not isinstance(x, ndarray):
        xh = np.asarray(x)
        if xh.dtype.kind not in "biu":  # lists of floats etc.: NumPy's own rules
            return _host("bincount", x, weights=weights, minlength=minlength)
        x = _asarray(xh)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    if x.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to dtype('int64') "
                        "according to the rule 'safe'")
    n = x._size
    if n == 0:
        out = empty_array((minlength,), _INTP)
        out[...] = 0
        return out
    xi = x.astype(_INTP)
    mn, mx = (int(v) for v in _read(_r.amin(xi), _r.amax(xi)))  # sync: the output length
    if mn < 0:
        raise ValueError("'list' argument must have no negative elements")
    nbins = max(mx + 1, minlength)
    if weights is None:
        return _bincount_sorted(_sort(xi), nbins)
    w = _asarray(weights)
    if not np.can_cast(w.dtype, _F8, "safe"):
        raise TypeError(f"Cannot cast array data from {w.dtype!r} to dtype('float64') "
                        "according to the rule 'safe'")
    if w.ndim != 1:
        raise ValueError("object too deep for desired array" if w.ndim > 1 else
                         "object of too small depth for desired array")
    if w._size != n:
        raise ValueError("The weights and list don't have the same length.")
    return _bincount_known(xi, nbins, w)


# --- digitize -----------------------------------------------------------------------------


def digitize(x, bins, right=False):
    x = _asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if isinstance(bins, ndarray):
        if bins.ndim != 1:
            raise ValueError("object too deep for desired array" if bins.ndim > 1 else
                             "object of too small depth for desired array")
        b = bins
        bh = bins.get()  # sync: the monotonicity check (bins are few)
    else:
        bh = np.asarray(bins)
        b = None
    # NumPy's own checks (dimensions, monotonicity) on the host copy of the bins
    np.digitize(np.zeros(0), bh, right)
    if b is None:
        b = _asarray(bh)
    side = "left" if right else "right"
    if _direction(bh) == -1:
        return uf.subtract(np.intp(b._size), _searchsorted(b[::-1], x, side))
    return _searchsorted(b, x, side)


def _direction(bh):
    """NumPy's ``_monotonicity`` for bins it accepted: the first value unequal to the first
    one decides (NaN is unequal to everything)."""
    if bh.size < 2:
        return 1
    neq = bh[1:] != bh[0]
    if not neq.any():
        return 1
    i = int(np.argmax(neq)) + 1
    return 1 if bh[0] < bh[i] else -1


# --- histogram bin edges ------------------------------------------------------------------


def _ravel_and_check_weights(a, weights):
    a = _asarray(a)
    if a.dtype == np.bool_:
        warnings.warn(f"Converting input from {a.dtype} to {np.uint8} for compatibility.",
                      RuntimeWarning, stacklevel=4)
        a = a.astype(np.uint8)
    if weights is not None:
        weights = _asarray(weights)
        if weights._shape != a._shape:
            raise ValueError("weights should have the same shape as a.")
        weights = weights.reshape(-1)
    return a.reshape(-1), weights


def _standin(a, need_minmax):
    """A tiny host array with a's dtype, size class and (if needed) min and max, so that
    NumPy's own ``_get_bin_edges`` computes the edges (and raises its errors)."""
    if a._size == 0:
        return np.empty(0, a.dtype)
    if not need_minmax:
        return np.zeros(1, a.dtype)
    return _read(_r.amin(a), _r.amax(a)).astype(a.dtype)  # sync: the range


def _width(name, a, rng):
    """NumPy's bin-width estimators over device data (a few scalars read back)."""
    n = a._size
    mn, mx = _read(_r.amin(a), _r.amax(a)).astype(a.dtype)
    ptp = _hist._unsigned_subtract(mx, mn)

    def sqrt_():
        return ptp / np.sqrt(n)

    def sturges():
        return ptp / (np.log2(n) + 1.0)

    def fd():
        p = _s.percentile(a, [75, 25]).get()
        return 2.0 * np.subtract(*p) * n ** (-1.0 / 3.0)

    if name == "sqrt":
        return sqrt_()
    if name == "sturges":
        return sturges()
    if name == "rice":
        return ptp / (2.0 * n ** (1.0 / 3))
    if name == "scott":
        return (24.0 * np.pi**0.5 / n)**(1.0 / 3.0) * _s.std(a).get()[()]
    if name == "fd":
        return fd()
    if name == "auto":
        return min(max(fd(), sqrt_() / 2), sturges())
    if name == "doane":
        if n > 2:
            sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
            sigma = _s.std(a).get()[()]
            if sigma > 0.0:
                temp = uf.subtract(a, _s.mean(a))
                temp = uf.true_divide(temp, sigma)
                temp = uf.power(temp, 3)
                g1 = _s.mean(temp).get()[()]
                return ptp / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(g1) / sg1))
        return 0.0
    if name == "stone":
        return _stone(a, n, ptp, rng)
    raise AssertionError(name)


def _stone(a, n, ptp_x, rng):
    if n <= 1 or ptp_x == 0:
        return 0
    upper = max(100, int(np.sqrt(n)))
    sa = _sort(a)
    # every candidate histogram's edges in one searchsorted, positions read back once
    stand = np.zeros(1, a.dtype)
    edges = [_hist._get_bin_edges(stand, k, rng, None)[0] for k in range(1, upper + 1)]
    allv = np.concatenate(edges)
    last = np.zeros(allv.size, bool)
    last[np.cumsum([e.size for e in edges]) - 1] = True
    v = asarray(allv)
    pos = _where(asarray(last), _searchsorted(sa, v, "right"), _searchsorted(sa, v, "left"))
    pos = pos.get()
    best, best_j = None, None
    start = 0
    for k, e in zip(range(1, upper + 1), edges):
        p = pos[start:start + e.size]
        start += e.size
        p_k = np.diff(p) / n
        j = (2 - (n + 1) * p_k.dot(p_k)) / (ptp_x / k)
        if best is None or j < best_j:
            best, best_j = k, j
    if best == upper:
        warnings.warn("The number of bins estimated may be suboptimal.", RuntimeWarning,
                      stacklevel=5)
    return ptp_x / best


import numpy.lib._histograms_impl as _hist  # noqa: E402


def _get_bin_edges(a, bins, range, weights):
    """(edges: host NumPy array or device array, uniform (first, last, n) or None)."""
    if isinstance(bins, str):
        if bins not in _hist._hist_bin_selectors:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported "
                            "for weighted data")
        stand = _standin(a, range is None)
        first, last = _hist._get_outer_edges(stand, range)
        if range is not None and a._size:
            keep = uf.logical_and(uf.greater_equal(a, first),
                                      uf.less_equal(a, last))
            a = a[keep]  # sync (the kept size)
        if a._size == 0:
            n_equal = 1
        else:
            width = _width(bins, a, (first, last))
            if width:
                if a.dtype.kind in "iu" and width < 1:
                    width = 1
                delta = _hist._unsigned_subtract(last, first)
                n_equal = int(np.ceil(delta / width))
            else:
                n_equal = 1
        return _hist._get_bin_edges(stand, n_equal, range, None)
    if np.ndim(bins) == 1 and isinstance(bins, ndarray):
        if bins._size > 1 and bool(_r.any(uf.greater(bins[:-1], bins[1:]))):  # sync
            raise ValueError("`bins` must increase monotonically, when an array")
        return bins, None
    need = np.ndim(bins) == 0 and range is None
    return _hist._get_bin_edges(_standin(a, need), bins, range, None)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    a, weights = _ravel_and_check_weights(a, weights)
    edges, _ = _get_bin_edges(a, bins, range, weights)
    return _asarray(edges)


# --- histogram ----------------------------------------------------------------------------


def _inclusive_positions(sa, edges):
    """NumPy's ``_search_sorted_inclusive``: left positions, the last edge's right one."""
    return _cat([_searchsorted(sa, edges[:-1], "left"), _searchsorted(sa, edges[-1:], "right")])


def histogram(a, bins=10, range=None, density=None, weights=None):
    if weights is not None and _asarray(weights).dtype.kind not in "iufc":
        return _host("histogram", a, bins=bins, range=range, density=density,
                     weights=weights)
    a0 = _asarray(a)
    if a0.dtype.kind not in "biuf":
        return _host("histogram", a, bins=bins, range=range, density=density,
                     weights=weights)
    a, weights = _ravel_and_check_weights(a0, weights)
    edges, uniform = _get_bin_edges(a, bins, range, weights)
    edges = _asarray(edges)
    ntype = _INTP if weights is None else weights.dtype
    if uniform is not None:
        a = a.astype(edges.dtype, copy=False)  # NumPy compares in the edges' dtype
    if weights is None:
        n = uf.subtract(*_pair(_inclusive_positions(_sort(a), edges)))
    else:
        order = _argsort(a)
        sa = _take(a, order)
        sw = _take(weights, order)
        pos = _inclusive_positions(sa, edges)
        if uniform is not None:  # NumPy: bincount (float64 sums) per part, cast to ntype
            if ntype.kind == "c":
                re = _segment_sums(sw.real.astype(_F8), pos)
                im = _segment_sums(sw.imag.astype(_F8), pos)
                n = empty_array(re._shape, ntype)
                n.real[...] = re
                n.imag[...] = im
            else:
                n = _segment_sums(sw.astype(_F8), pos).astype(ntype)
        else:  # NumPy: differences of the cumulative sum in the weights' dtype
            cs = _r.cumsum(sw)
            z = empty_array((1,), cs.dtype)
            z[...] = 0
            cw = _take(_cat([z, cs]), pos).astype(ntype)
            n = uf.subtract(cw[1:], cw[:-1])
    if density:
        db = _r.diff(edges).astype(_F8)
        div = uf.true_divide
        return div(div(n, db), _r.sum(n)), edges
    return n, edges


def _pair(pos):
    return pos[1:], pos[:-1]


# --- histogramdd / histogram2d ------------------------------------------------------------


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    def host():
        return _host("histogramdd", sample, bins=bins, range=range, density=density,
                     weights=weights)
    if hasattr(sample, "shape"):
        s = _asarray(sample)
        if s.ndim < 2:
            s = s.reshape(1, -1).T
    else:
        try:
            s = stack([_asarray(v) for v in sample])
        except Exception:  # noqa: BLE001 - ragged or odd input: NumPy's answer
            return host()
        if s.ndim < 2:
            s = s.reshape(1, -1)
        s = s.T
    if s.ndim != 2 or s.dtype.kind not in "biuf":
        return host()
    if weights is not None:
        weights = _asarray(weights)
        if weights.dtype.kind not in "biuf" or weights.ndim != 1:
            return host()
    N, D = s._shape
    try:
        M = len(bins)
        if M != D:
            raise ValueError("The dimension of bins must be equal to the dimension of the "
                             "sample x.")
    except TypeError:
        bins = D * [bins]
    if range is None:
        range = (None,) * D
    elif len(range) != D:
        raise ValueError("range argument must have one entry per dimension")
    edges, nbin = [], []
    for i in np.arange(D).tolist():
        col = s[:, i]
        b = bins[i]
        if np.ndim(b) == 0:
            if b < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            stand = _standin(col, range[i] is None)
            smin, smax = _hist._get_outer_edges(stand, range[i])
            try:
                k = operator.index(b)
            except TypeError as e:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
            e_i = _asarray(np.linspace(smin, smax, k + 1))
        elif np.ndim(b) == 1:
            e_i = _asarray(b)
            if e_i._size > 1 and bool(_r.any(uf.greater(e_i[:-1], e_i[1:]))):  # sync
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an "
                                 "array")
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
        edges.append(e_i)
        nbin.append(e_i._size + 1)
    total = int(np.prod(nbin, dtype=np.intp))
    xy = None
    for i in np.arange(D).tolist():
        col = s[:, i]
        c = _searchsorted(edges[i], col, "right")
        c = uf.subtract(c, uf.equal(col, edges[i][-1]).astype(_INTP))
        stride = int(np.prod(nbin[i + 1:], dtype=np.intp))
        c = uf.multiply(c, np.intp(stride)) if stride != 1 else c
        xy = c if xy is None else uf.add(xy, c)
    if weights is not None and weights._size != N:
        raise ValueError("The weights and list don't have the same length.")
    if N == 0:
        hist = empty_array((total,), _F8)
        hist[...] = 0
    else:
        hist = _bincount_known(xy, total, weights).astype(_F8)
    hist = hist.reshape(tuple(nbin))
    hist = hist[(slice(1, -1),) * D]
    if density:
        tot = _r.sum(hist)
        div = uf.true_divide
        for i in np.arange(D).tolist():
            shape = [1] * D
            shape[i] = nbin[i] - 2
            hist = div(hist, _r.diff(edges[i]).reshape(shape))
        hist = div(hist, tot)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    x, y = _asarray(x), _asarray(y)
    if len(x) != len(y):
        raise ValueError("x and y must have the same length.")
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N not in {1, 2}:
        xedges = yedges = _asarray(bins)
        bins = [xedges, yedges]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


# --- correlate / convolve -----------------------------------------------------------------

_MODES = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2}


def _mode(mode):
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})") \
            from None


def _check1d(x, which):
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    if x._size == 0:
        raise ValueError(f"{which} array argument cannot be empty")


def _full_corr(a, v, dt):
    """full correlation sum_j a_pad[k + j] * v[j] (no conjugation; len(a) >= len(v)) in
    dtype ``dt``: a window view of the zero-padded ``a`` times ``v``, summed along rows."""
    n, m = a._size, v._size
    z = empty_array((m - 1,), dt)
    z[...] = 0
    ap = _cat([z, a.astype(dt), z]) if m > 1 else a.astype(dt).copy()
    vd = v.astype(dt)
    L = n + m - 1
    isz = dt.itemsize
    out = empty_array((L,), dt)
    chunk = max(1, (1 << 22) // m)
    mul = uf.logical_and if dt == np.bool_ else uf.multiply
    for s0 in range(0, L, chunk):
        rows = min(chunk, L - s0)
        win = _make(ap._buf, ap._offset + s0 * isz, (rows, m), (isz, isz), dt, ap)
        prod = mul(win, vd.reshape(1, m))
        if dt == np.bool_:
            out[s0:s0 + rows] = _r.any(prod, axis=1)
        else:
            _r.sum(prod, axis=1, dtype=dt, out=out[s0:s0 + rows])
    return out


def _correlate(a, v, mode, conj, rdt):
    """NumPy's _pyarray_correlate: the longer operand slides, the result of a swapped pair
    is reversed (and conjugated where ``conj``)."""
    n1, n2 = a._size, v._size
    inverted = n1 < n2
    if inverted:
        a, v = v, a
        n1, n2 = n2, n1
    # compute in the result dtype (float16 in float32, as NumPy's HALF_dot accumulates)
    cdt = np.dtype(np.float32) if rdt == np.float16 else (
        _INTP if rdt.kind == "i" else np.dtype(np.uint64) if rdt.kind == "u" else rdt)
    if conj and rdt.kind == "c" and not inverted:
        v = uf.conjugate(v)
    if conj and rdt.kind == "c" and inverted:
        a = uf.conjugate(a)
    full = _full_corr(a, v, cdt)
    if mode == 2:
        res = full
    elif mode == 1:
        start = (n2 - 1) - n2 // 2
        res = full[start:start + n1]
    else:
        res = full[n2 - 1:n1]
    if inverted:
        res = res[::-1]
    return res.astype(rdt)


def correlate(a, v, mode="valid"):
    a, v = _asarray(a), _asarray(v)
    mode = _mode(mode)
    rdt = normalize(np.result_type(a.dtype, v.dtype))
    if rdt.kind not in "biufc":
        return _host("correlate", a, v, mode)
    _check1d(a, "first")
    _check1d(v, "second")
    if rdt == np.bool_:
        return _correlate(a, v, mode, False, rdt)
    return _correlate(a, v, mode, True, rdt)


def convolve(a, v, mode="full"):
    a, v = _asarray(a), _asarray(v)
    if a.ndim == 0:
        a = a.reshape(1)
    if v.ndim == 0:
        v = v.reshape(1)
    if v._size > a._size:
        a, v = v, a
    if a._size == 0:
        raise ValueError("a cannot be empty")
    if v._size == 0:
        raise ValueError("v cannot be empty")
    mode = _mode(mode)
    rdt = normalize(np.result_type(a.dtype, v.dtype))
    if rdt.kind not in "biufc" or a.ndim != 1 or v.ndim != 1:
        return _host("convolve", a, v, mode)
    return _correlate(a, v[::-1], mode, False, rdt)


# --- gradient -----------------------------------------------------------------------------


def gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's algorithm, written with the same operators so that scalar spacings keep
    NumPy's (NEP 50) dtype rules; host spacings are checked on the host, device ones with
    one read (the uniformity test)."""
    f = _asarray(f)
    if f.dtype.kind not in "biufc":
        return _host("gradient", f, *varargs, axis=axis, edge_order=edge_order)
    N = f.ndim
    if axis is None:
        axes = tuple(range(N))
    else:
        axes = np.lib.array_utils.normalize_axis_tuple(axis, N)
    len_axes = len(axes)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len_axes
    elif n == 1 and np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len_axes
    elif n == len_axes:
        dx = list(varargs)
        for i, distances in enumerate(dx):
            if np.ndim(distances) == 0:
                continue
            dev = isinstance(distances, ndarray)
            distances = distances if dev else np.asanyarray(distances)
            if distances.ndim != 1:
                raise ValueError("distances must be either scalars or 1d")
            if len(distances) != f._shape[axes[i]]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            if distances.dtype.kind in "iu":
                distances = distances.astype(np.float64)
            if dev:
                diffx = _r.diff(distances)
                if diffx._size and bool(_r.all(uf.equal(diffx, diffx[0]))):  # sync
                    diffx = diffx[0]
            else:
                diffx = np.diff(distances)
                diffx = diffx[0] if (diffx == diffx[0]).all() else _asarray(diffx)
            dx[i] = diffx
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = f.astype(_F8)
        otype = _F8
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if f._shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        out = empty_array(f._shape, otype)

        def S(k, ax=ax):
            return (slice(None),) * ax + (k,)
        uniform = np.ndim(ax_dx) == 0
        if uniform:
            out[S(slice(1, -1))] = (f[S(slice(2, None))] - f[S(slice(None, -2))]) / (2. * ax_dx)
        else:
            dx1 = ax_dx[0:-1]
            dx2 = ax_dx[1:]
            a = -(dx2) / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            shape = [1] * N
            shape[ax] = -1
            a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
            out[S(slice(1, -1))] = a * f[S(slice(None, -2))] + b * f[S(slice(1, -1))] \
                + c * f[S(slice(2, None))]
        if edge_order == 1:
            dx_0 = ax_dx if uniform else ax_dx[0]
            out[S(0)] = (f[S(1)] - f[S(0)]) / dx_0
            dx_n = ax_dx if uniform else ax_dx[-1]
            out[S(-1)] = (f[S(-1)] - f[S(-2)]) / dx_n
        else:
            if uniform:
                a, b, c = -1.5 / ax_dx, 2. / ax_dx, -0.5 / ax_dx
            else:
                dx1, dx2 = ax_dx[0], ax_dx[1]
                a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b = (dx1 + dx2) / (dx1 * dx2)
                c = - dx1 / (dx2 * (dx1 + dx2))
            out[S(0)] = a * f[S(0)] + b * f[S(1)] + c * f[S(2)]
            if uniform:
                a, b, c = 0.5 / ax_dx, -2. / ax_dx, 1.5 / ax_dx
            else:
                dx1, dx2 = ax_dx[-2], ax_dx[-1]
                a = (dx2) / (dx1 * (dx1 + dx2))
                b = - (dx2 + dx1) / (dx1 * dx2)
                c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
            out[S(-1)] = a * f[S(-3)] + b * f[S(-2)] + c * f[S(-1)]
        outvals.append(out)
    if len_axes == 1:
        return outvals[0]
    return tuple(outvals)
