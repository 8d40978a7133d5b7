"""The host path: NumPy called on a NumPy view of an array whose data is on the host.

An op whose array operands are all valid on the host (docs/guide/placement.md) is NumPy's
own call on their NumPy views: ``host_view`` builds an array's view once and keeps it on
the array (``_hv``, with the host allocation it was built over in ``_hraw``; an ndarray's
layout never changes after creation, so the view stays right while that allocation is the
Buffer's host copy), and ``wrap_host`` makes the one result object over NumPy's result,
with no copy.  So a host op costs the NumPy call plus two attribute checks and one object
(the budget is issue 18's: about 1 us over NumPy; ``tests/test_hot_path.py`` counts it).
"""
from __future__ import annotations

import functools

import numpy as np

from ._array import from_host, host_view, ndarray  # noqa: F401 (host_view: the host path's too)
from . import _backends
from ._backends import placement as _placement
from ._backends.buffer import Buffer
from ._dtypes import normalize
from ._shapes import _broadcast_shapes, _prod

_new = object.__new__
_NP_ARRAY = np.ndarray
# The scalars the host path hands to NumPy as they are: Python's and NumPy's numeric ones
# (an element read of a host array is a NumPy scalar, so loops meet them constantly).
# (NumPy's of the dtypes cupynum holds: not long double, not timedelta64, an integer subclass)
HOST_SCALARS = frozenset((bool, int, float, complex)) | frozenset(
    np.dtype(c).type for c in "?bhilqBHILQefdFD")
# A maker of a result's Buffer over its host bytes, where one is set (tests/shim.py's aliases
# a device copy); None: ``wrap_host`` makes ``Buffer(raw)`` itself, its slots set directly
# (no ``__init__`` frame per host op; tests/test_buffer.py checks the two agree).
_buffer_of = None


def wrap_host(r, like=None):
    """A new array over the host data of ``r`` (a NumPy array or scalar fresh from a NumPy
    call on host views: the host path's result, nobody else's memory), with no copy where
    ``r`` is contiguous; ``r`` is kept as its NumPy view.

    ``like``: for ``r`` fresh from an elementwise call whose array operands all have that
    array's shape and, like it, are C-contiguous (or are scalars), or from ``like.astype``
    in an order other than F (the caller's test): NumPy made ``r`` C-contiguous of that
    shape, so its layout is read from ``like`` instead of asked of NumPy (flags, shape and
    size: three objects made and dropped per host op).  Ignored unless ``like`` is
    C-contiguous."""
    if type(r) is not _NP_ARRAY:
        r = np.asarray(r)
        like = None
    dt = r.dtype
    if dt.char in "qQ" or not dt.isnative:
        dt = normalize(dt)
        r = r.astype(dt, copy=False) if r.dtype != dt else r.view(dt)
    if like is not None and like._c_contig:
        raw = r
        shape = like._shape
        size = like._size
        c = True
        f = like._f_contig
    else:
        fl = r.flags
        c = fl.c_contiguous
        f = fl.f_contiguous
        # the Buffer's host copy is r itself, or its C-contiguous transpose (buffer.py: a
        # host copy is any C-contiguous NumPy array over the bytes)
        if c:
            raw = r
        elif f:
            raw = r.T
        else:
            r = raw = np.ascontiguousarray(r)
            c, f = True, r.flags.f_contiguous
        shape = r.shape
        size = r.size
    if _buffer_of is None:
        b = _new(Buffer)
        b.host = raw
        b.device = b.pending = b.readers = b.ledger = b.pins = None
        b.version = b.settled = 0
    else:
        b = _buffer_of(raw)
    a = _new(ndarray)
    a._buf = b
    a._offset = 0
    a._shape = shape
    a._strides = r.strides
    a.dtype = dt
    a._size = size
    a._c_contig = c
    a._f_contig = f  # (like's: of a contiguous array, a function of the shape alone)
    a._base = None
    a._hv = r
    a._hraw = raw
    return a


def wrap_all(results):
    """The host path's results of a ufunc with several outputs, as arrays."""
    return tuple(wrap_host(r) for r in results)


def wrap_result(r):
    """``wrap_host`` for an array result; NumPy's scalar as it is (a full reduction, a 1-d
    product of host arrays: NumPy's scalars, as NumPy gives)."""
    return wrap_host(r) if type(r) is np.ndarray else r


def _kept_as_is(a: np.ndarray) -> bool:
    """Whether NumPy array ``a`` (or its copy) can be a new array's host data as it is: of
    a dtype cupynum holds unchanged (TypeError for one it does not hold) and of a size that
    starts on the host."""
    return a.dtype == normalize(a.dtype) and _backends.for_new(a.nbytes).side == "host"


def host_copy(host: np.ndarray):
    """``from_host(host)``: a new array holding a copy of the NumPy array ``host``; where a
    new array of its size starts on the host, NumPy's own copy, kept as the host path keeps
    NumPy's results (no allocation of the host backend's, no second view built)."""
    if not _kept_as_is(host):
        return from_host(host)
    fl = host.flags
    return wrap_host(np.array(host, order="F" if fl.f_contiguous and not fl.c_contiguous
                              else "C"))


def fresh(result: np.ndarray):
    """A new array holding the values of ``result``, a NumPy array fresh from a NumPy call
    that nobody else holds (``arange``'s, ``linspace``'s): ``result`` itself where a new
    array of its size starts on the host, else a copy where it starts (``from_host``)."""
    return wrap_host(result) if _kept_as_is(result) else from_host(result)


def product_operator(product, general):
    """``a @ b`` for ``product`` (``numpy.matmul``): where both operands' data is on the host,
    NumPy's call on their kept views and its result as NumPy gives it (a product of two 1-d
    arrays is NumPy's scalar; the public function keeps returning arrays to the package's
    own code), else ``general(a, b)``."""

    def matmul_operator(a, b):
        if type(b) is ndarray:
            raw, braw = a._buf.host, b._buf.host
            if raw is not None and braw is not None:
                try:  # (host_view's kept views, read inline)
                    ha = a._hv if a._hraw is raw else host_view(a)
                except AttributeError:
                    ha = host_view(a)
                try:
                    hb = b._hv if b._hraw is braw else host_view(b)
                except AttributeError:
                    hb = host_view(b)
                r = product(ha, hb)
                return wrap_host(r) if type(r) is _NP_ARRAY else r
        return general(a, b)

    return matmul_operator


def scalar_products(func, numpy_func):
    """The public product ``func`` (``dot``, ``vdot``, ``inner``, ``matmul``): for two
    arrays whose data is on the host and no other argument, ``numpy_func`` on their kept
    views and its result as NumPy gives it (a product of 1-d arrays is NumPy's scalar, as
    for ``a @ b``); otherwise ``func``, with a new 0-d host result as NumPy's scalar."""

    @functools.wraps(func)
    def public(*args, **kwargs):
        if len(args) == 2 and not kwargs:
            a, b = args
            if type(a) is ndarray and type(b) is ndarray and a._buf.host is not None \
                    and b._buf.host is not None:
                return wrap_result(numpy_func(host_view(a), host_view(b)))
        r = func(*args, **kwargs)
        if type(r) is ndarray and not r._shape and r._buf.host is not None and \
                kwargs.get("out", args[2] if len(args) > 2 else None) is not r:
            return host_view(r)[()]
        return r

    return public


def host_only_number(x) -> bool:
    """Whether 0-d array ``x`` holds a number whose data is on the host only: as an operand
    of an op on device data it goes in as its value, a NumPy scalar of its dtype (one
    kernel parameter, the same result dtype under NEP 50), not as an array copied to the
    device for one element (``if sqrt(rr) <= tol * b_norm`` with a host ``b_norm``: a copy
    per iteration)."""
    buf = x._buf  # (data valid on the host is never pending)
    return buf.host is not None and buf.device is None and x.dtype.kind in "biufc"


def host_sized(a, b, big) -> bool:
    """Whether host arrays ``a`` and ``b`` of different shapes broadcast to a result of at
    most ``big`` elements (or not at all: NumPy then raises): a larger result (an outer
    product by broadcasting) is the placement rules' to place (``_backends.for_arrays``)."""
    try:
        shape = _broadcast_shapes((a._shape, b._shape))
    except ValueError:
        return True
    return _prod(shape) <= big


def host_operands(args):
    """NumPy's operands for ``args`` (a function's), or None: each a cupynum array whose data
    is on the host and of at most ``placement.HOST_UNPRICED_UPTO`` elements (its kept
    view), or a numeric scalar; anything else (device data, a larger array the ledger
    watches, a list) leaves the call to the general path."""
    out = []
    for x in args:
        t = type(x)
        if t is ndarray:
            raw = x._buf.host
            if raw is None or x._size > _placement.HOST_UNPRICED_UPTO:
                return None
            try:  # (host_view's kept view, read inline)
                out.append(x._hv if x._hraw is raw else host_view(x))
            except AttributeError:
                out.append(host_view(x))
        elif t in HOST_SCALARS:
            out.append(x)
        else:
            return None
    return out


def on_host(a) -> bool:
    """Whether cupynum array ``a``'s data is valid on the host (the host path may run)."""
    return a._buf.host is not None


def scalar_results(func, out_position: int):
    """The public ``func`` (a reduction: ``sum``, ``max``, ``mean``...) returning NumPy's
    scalar where its result is a new 0-d array whose data is on the host: a full reduction
    of host arrays gives a scalar, as NumPy's does (docs/guide/placement.md).  The package's
    own code calls the functions unwrapped, so it always gets arrays.  ``out_position``:
    where ``out`` comes among the positional arguments (an ``out=`` array is returned as is)."""

    method = getattr(np.ndarray, {"amax": "max", "amin": "min"}.get(func.__name__,
                                                                      func.__name__))

    @functools.wraps(func)
    def public(*args, **kwargs):
        if len(args) == 1 and not kwargs:  # ``a.sum()``: NumPy's own method on the view
            a = args[0]
            if type(a) is ndarray and a._buf.host is not None:
                return wrap_result(method(host_view(a)))
        r = func(*args, **kwargs)
        if type(r) is ndarray and not r._shape and r._buf.host is not None:
            out = kwargs.get("out", args[out_position] if len(args) > out_position else None)
            if r is not out:
                return host_view(r)[()]
        return r

    return public


def _install_astype():
    """``ndarray.astype`` of a C- or F-contiguous array whose data is on the host: NumPy's
    ``astype`` of the kept view (a new array, wrapped with no copy), its errors NumPy's;
    other arrays, and ``copy=False`` of an unchanged dtype (the array itself), take the
    general method."""
    general = ndarray.astype

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if type(self) is ndarray and (raw := self._buf.host) is not None and (
                self._c_contig or self._f_contig) and (  # (NumPy's result then is too)
                self._size <= _placement.HOST_UNPRICED_UPTO or _backends.stays_on_host(self)):
            dt = normalize(dtype)
            if copy or dt != self.dtype:
                try:  # (host_view's kept view, read inline)
                    hv = self._hv if self._hraw is raw else host_view(self)
                except AttributeError:
                    hv = host_view(self)
                # (a C-contiguous array's copy is C-contiguous of its shape but in F order:
                # wrap_host reads the layout from self, in F order from NumPy)
                return wrap_host(hv.astype(dt, order=order, casting=casting),
                                 None if order == "F" else self)
        return general(self, dtype, order, casting, subok, copy)

    ndarray.astype = astype


_install_astype()


def _install_copy():
    """``ndarray.copy`` of a C- or F-contiguous array whose data is on the host and that
    the ledger does not price: NumPy's ``copy`` of the kept view (its layout, in any order
    NumPy's), wrapped with no copy; other arrays take the general method."""
    general = ndarray.copy

    def copy(self, order="C"):
        if type(self) is ndarray and (raw := self._buf.host) is not None and (
                self._c_contig or self._f_contig) and self._size <= _placement.HOST_UNPRICED_UPTO:
            try:  # (host_view's kept view, read inline)
                hv = self._hv if self._hraw is raw else host_view(self)
            except AttributeError:
                hv = host_view(self)
            return wrap_host(hv.copy(order))
        return general(self, order)

    ndarray.copy = copy


_install_copy()


def host_getitem(a, key):
    """``a[key]`` for an array ``key`` of integers or booleans (one or more dims) where both
    arrays' data is on the host: NumPy's indexing of the kept views (its result and its
    errors), else None."""
    if type(key) is ndarray and key._buf.host is not None and a._buf.host is not None and \
            key._shape and key.dtype.kind in "biu" and (
                a._size <= _placement.HOST_UNPRICED_UPTO or _backends.stays_on_host(a)):
        return wrap_host(host_view(a)[host_view(key)])
    return None
