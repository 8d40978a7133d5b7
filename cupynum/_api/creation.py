"""Array creation and transfer (NumPy reference: "Array creation routines").

Arrays whose values follow from a formula NumPy defines step by step (arange, linspace,
eye, ...) are computed by NumPy on the host and copied over once, so their values are
NumPy's bit for bit; constant fills run on the device.
"""
from __future__ import annotations

import numpy as np

from .. import _backends
from .._array import (_fill, _make, _shape_tuple, broadcast_view, empty_array, from_host,
                      ndarray, order_code)
from .._shapes import MAXDIMS
from .._dtypes import normalize
from .._dtypes import _cache as _dtype_cache  # normalize()'s answers, for empty's fast path
from .._host_path import fresh, host_copy, wrap_host
from .._interop import from_dlpack as _from_dlpack

__all__ = ["array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "copy",
           "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
           "full_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity",
           "tri", "diag", "diagflat", "meshgrid", "indices", "frombuffer",
           "fromfile", "load", "save", "asnumpy", "from_dlpack", "fromiter", "fromstring",
           "fromfunction", "isfortran", "require", "loadtxt",
           "genfromtxt", "fromregex", "savetxt", "savez", "savez_compressed"]


def _order(order):
    order = order_code(order)
    if order in (None, "C", "K", "A"):
        return "C"
    if order == "F":
        return "F"
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _check_shape(shape):
    shape = _shape_tuple(shape)
    if any(n < 0 for n in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _default_dtype(dtype, fallback=np.float64):
    return normalize(fallback if dtype is None else dtype)


# from existing data -----------------------------------------------------------------------
def _foreign_device_array(obj):
    return (not isinstance(obj, (np.ndarray, ndarray)) and
            (hasattr(obj, "__cuda_array_interface__") or
             (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")
              and _dlpack_on_gpu(obj))))


def _dlpack_on_gpu(obj):
    try:
        return obj.__dlpack_device__()[0] in (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
    except Exception:
        return False


def array(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """``copy``: True always copies, None copies only when needed, False never copies."""
    order = order_code(order)
    if isinstance(obj, ndarray) or _foreign_device_array(obj):
        out = obj if isinstance(obj, ndarray) else from_dlpack(obj)
        dt = out.dtype if dtype is None else normalize(dtype)
        layout_ok = (order in ("K", "A", None) or (order == "C" and out._c_contig)
                     or (order == "F" and out._f_contig))
        if copy is True or dt != out.dtype or not layout_ok:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            out = out.astype(dt, order=order or "K")
    else:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating a cupynum array from host data.")
        # No host copy of a NumPy array: the transfer itself is the copy.
        host = np.asarray(obj, dtype=dtype, order=order if order in ("C", "F") else None)
        out = host_copy(host)  # raises TypeError naming an unsupported dtype
    if ndmin > out.ndim:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return array(a, dtype, copy=copy, order=order)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return asarray(a, dtype, order, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None):
    out = asarray(a, dtype, order="C")
    return out.reshape(1) if out.ndim == 0 else out


def asfortranarray(a, dtype=None, *, like=None):
    out = asarray(a, dtype, order="F")
    return out.reshape(1) if out.ndim == 0 else out


def copy(a, order="K", subok=False):
    return asarray(a).copy(order=order)


def asnumpy(a, stream=None, order="C", out=None):
    """A NumPy array holding a's values (a copy to the host)."""
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def from_dlpack(x, /, *, device=None, copy=None):
    return _from_dlpack(x, device=device, copy=copy)


# from shape or value ----------------------------------------------------------------------
def empty(shape, dtype=float, order="C", *, device=None, like=None):
    # Fast path (per-call cost, as in CuPy's hot loops): an int or a tuple of ints and a
    # dtype spelling normalize() has seen already; anything else is checked in full below.
    try:
        dt = _F8 if dtype is None else _dtype_cache.get(dtype)
    except TypeError:  # an unhashable spelling
        dt = None
    if dt is not None and order == "C":
        if shape.__class__ is int:
            if shape >= 0:
                return empty_array((shape,), dt)
        elif shape.__class__ is tuple and _plain_size(shape) >= 0:
            return empty_array(shape, dt)
    return empty_array(_check_shape(shape), _default_dtype(dtype), _order(order))


def _plain_size(shape: tuple) -> int:
    """The element count of ``shape``, a tuple of at most MAXDIMS Python ints none below 0
    (the creation functions' fast paths), else -1 (they take the full check)."""
    if len(shape) > MAXDIMS:
        return -1
    size = 1
    for n in shape:
        if n.__class__ is not int or n < 0:
            return -1
        size *= n
    return size


_F8 = normalize(np.float64)  # what dtype=None means


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    if dtype is None:
        if isinstance(fill_value, ndarray):
            dtype = fill_value.dtype
        else:
            dtype = np.asarray(fill_value).dtype
    if (order == "C" or order == "F") and not isinstance(fill_value, ndarray):
        dt = normalize(dtype)
        if _starts_on_host(shape, dt):  # NumPy's own, wrapped (its conversions and errors)
            return wrap_host(np.full(shape, fill_value, dt, order))
    out = empty(shape, dtype, order)
    if isinstance(fill_value, ndarray) and fill_value.ndim:
        out[...] = fill_value
    else:
        _fill(out, fill_value.item() if isinstance(fill_value, ndarray) else fill_value,
              casting="unsafe")
    return out


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    return _filled(shape, dtype, order, 0, np.zeros)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    return _filled(shape, dtype, order, 1, np.ones)


def _filled(shape, dtype, order, value, numpy_maker):
    """A new array (``empty``'s arguments) filled with ``value``, 0 or 1: they convert
    exactly to every dtype, so no NumPy casting rules are needed.  Where a new array of its
    size starts on the host, NumPy's own ``zeros`` or ``ones``, wrapped (one call: a small
    array's creation is most of a loop-heavy program's statement; for a shape of ints and a
    dtype spelling seen before, without making the empty array first); else one fill where it
    starts."""
    try:  # (empty's fast path: anything else is checked there in full)
        dt = _F8 if dtype is None else _dtype_cache.get(dtype)
    except TypeError:
        dt = None
    if dt is not None and order == "C" and _starts_on_host(shape, dt):
        return wrap_host(numpy_maker(shape, dt))
    out = empty(shape, dtype, order)
    n = out._size
    if not n:
        return out
    backend = _backends.for_new(n * out.dtype.itemsize)
    if backend.side == "host":
        return wrap_host(numpy_maker(out._shape, out.dtype, order))
    backend.fill(out, _constant(out.dtype, value))
    return out


def _starts_on_host(shape, dt) -> bool:
    """Whether a new array of ``shape`` (an int or a tuple of ints: anything else says
    False) and dtype ``dt`` starts on the host."""
    n = shape if shape.__class__ is int else (
        _plain_size(shape) if shape.__class__ is tuple else -1)
    return n >= 0 and _backends.for_new(n * dt.itemsize).side == "host"


def _constant(dt, v):
    """``dt.type(v)``, cached (a NumPy scalar costs ~0.1 us to build)."""
    c = _constants.get((dt, v))
    if c is None:
        c = _constants[(dt, v)] = dt.type(v)
    return c


_constants: dict = {}


def _like_args(a, dtype, order, shape):
    a = asarray(a)
    dt = a.dtype if dtype is None else normalize(dtype)
    order = order_code(order)
    if order == "K" or order == "A":
        order = "F" if a._f_contig and not a._c_contig else "C"
    return (a.shape if shape is None else _check_shape(shape)), dt, order


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, dt, order = _like_args(prototype, dtype, order, shape)
    return empty_array(shape, dt, _order(order))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, dt, order = _like_args(a, dtype, order, shape)
    return full(shape, 0, dt, order)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, dt, order = _like_args(a, dtype, order, shape)
    return full(shape, 1, dt, order)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, dt, order = _like_args(a, dtype, order, shape)
    return full(shape, fill_value, dt, order)


# numerical ranges and matrices: NumPy's own values, copied over once -------------------
def _host_scalar(x):
    return x.item() if isinstance(x, ndarray) and x.ndim == 0 else x


def _via_host(np_func, *args, **kwargs):
    args = [_host_scalar(a) if not isinstance(a, ndarray) or a.ndim == 0 else a.get()
            for a in args]
    kwargs = {k: (_host_scalar(v) if not isinstance(v, ndarray) or v.ndim == 0 else v.get())
              for k, v in kwargs.items()}
    result = np_func(*args, **kwargs)
    if isinstance(result, tuple):
        return tuple(fresh(np.asarray(r)) for r in result)
    return fresh(np.asarray(result))


def arange(start, stop=None, step=None, dtype=None, *, device=None, like=None):
    return _via_host(np.arange, start, stop, step, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    result = np.linspace(_host_arg(start), _host_arg(stop), num, endpoint, retstep, dtype, axis)
    if retstep:
        return fresh(np.asarray(result[0])), result[1]
    return fresh(result)


def _host_arg(x):
    return x.get() if isinstance(x, ndarray) else x


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return fresh(np.logspace(_host_arg(start), _host_arg(stop), num, endpoint,
                             _host_arg(base), dtype, axis))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return fresh(np.geomspace(_host_arg(start), _host_arg(stop), num, endpoint, dtype, axis))


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    return fresh(np.eye(N, M, k, dtype=dtype, order=order))


def identity(n, dtype=None, *, like=None):
    return fresh(np.identity(n, dtype=dtype))


def tri(N, M=None, k=0, dtype=float, *, like=None):
    return fresh(np.tri(N, M, k, dtype=dtype))


def diag(v, k=0):
    v = asarray(v)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        out = zeros((n, n), v.dtype)
        if v.size:
            diagonal_view(out, k)[...] = v
        return out
    if v.ndim == 2:
        return diagonal_view(v, k).copy()
    raise ValueError("Input must be 1- or 2-d.")


def diagonal_view(a, k=0):
    """The k-th diagonal of the last two axes as a strided view."""
    rows, cols = a.shape[-2:]
    s0, s1 = a.strides[-2:]
    if k >= 0:
        n, offset = max(0, min(rows, cols - k)), k * s1
    else:
        n, offset = max(0, min(rows + k, cols)), -k * s0
    return _make(a._buf, a._offset + (offset if n else 0), a.shape[:-2] + (n,),
                 a.strides[:-2] + (s0 + s1,), a.dtype, a._root())


def diagflat(v, k=0):
    return diag(asarray(v).ravel(), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrays = [asarray(x).ravel() for x in xi]
    ndim = len(arrays)
    shapes = []
    for i, x in enumerate(arrays):
        shape = [1] * ndim
        shape[i] = x.size
        shapes.append(shape)
    if indexing == "xy" and ndim > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    outs = [x.reshape(s) for x, s in zip(arrays, shapes)]
    if not sparse:
        full_shape = np.broadcast_shapes(*map(tuple, shapes))  # a size-0 input gives 0
        outs = [broadcast_view(o, full_shape) for o in outs]
    if copy:
        outs = [o.copy() for o in outs]
    return tuple(outs)


def indices(dimensions, dtype=int, sparse=False):
    result = np.indices(dimensions, dtype=dtype, sparse=sparse)
    if sparse:
        return tuple(fresh(r) for r in result)
    return fresh(result)


# files and buffers (through the host) -----------------------------------------------------
def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    return from_host(np.frombuffer(buffer, dtype, count, offset))


def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None):
    return fresh(np.fromfile(file, dtype, count, sep, offset))


def fromiter(iter, dtype, count=-1, *, like=None):
    return fresh(np.fromiter(iter, dtype, count))


def fromstring(string, dtype=float, count=-1, *, sep, like=None):
    return fresh(np.fromstring(string, dtype, count, sep=sep))


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", **kw):
    result = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle,
                     fix_imports=fix_imports, encoding=encoding, **kw)
    if isinstance(result, np.ndarray):
        return from_host(np.asarray(result))
    return result  # an NpzFile: its members are NumPy arrays, as with numpy.load


def save(file, arr, allow_pickle=True, fix_imports=True):
    np.save(file, arr.get() if isinstance(arr, ndarray) else arr, allow_pickle=allow_pickle)


def _to_device(result):
    """A text reader's result on the device: numeric arrays moved (``unpack`` tuples
    too); structured and masked arrays stay NumPy's, which cupynum does not hold."""
    if isinstance(result, tuple):
        return tuple(_to_device(r) for r in result)
    if type(result) is np.ndarray and result.dtype.kind in "biufc":
        return from_host(result)
    return result


def _host_arrays(values):
    return [v.get() if isinstance(v, ndarray) else v for v in values]


def loadtxt(fname, *args, like=None, **kwargs):
    """NumPy's parser on the host, the array on the device."""
    return _to_device(np.loadtxt(fname, *args, **kwargs))


def genfromtxt(fname, *args, like=None, **kwargs):
    return _to_device(np.genfromtxt(fname, *args, **kwargs))


def fromregex(file, regexp, dtype, encoding=None):
    return _to_device(np.fromregex(file, regexp, dtype, encoding=encoding))


def savetxt(fname, X, *args, **kwargs):
    np.savetxt(fname, X.get() if isinstance(X, ndarray) else X, *args, **kwargs)


def savez(file, *args, allow_pickle=True, **kwds):
    np.savez(file, *_host_arrays(args), allow_pickle=allow_pickle,
             **dict(zip(kwds, _host_arrays(kwds.values()))))


def savez_compressed(file, *args, allow_pickle=True, **kwds):
    np.savez_compressed(file, *_host_arrays(args), allow_pickle=allow_pickle,
                        **dict(zip(kwds, _host_arrays(kwds.values()))))


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*indices(shape, dtype), **kwargs)``, the index grids on the device."""
    return function(*indices(shape, dtype=dtype), **kwargs)


def isfortran(a):
    """True when a is Fortran-contiguous and not C-contiguous (NumPy's ``flags.fnc``)."""
    if not isinstance(a, ndarray):
        return np.isfortran(a)
    return a._f_contig and not a._c_contig


# numpy._core._asarray.POSSIBLE_FLAGS: requirement spellings -> one-letter flags
_REQUIREMENT_FLAGS = {
    "C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C",
    "F": "F", "F_CONTIGUOUS": "F", "FORTRAN": "F",
    "A": "A", "ALIGNED": "A",
    "W": "W", "WRITEABLE": "W",
    "O": "O", "OWNDATA": "O",
    "E": "E", "ENSUREARRAY": "E",
}


def require(a, dtype=None, requirements=None, *, like=None):
    """NumPy's algorithm: convert with the wanted order (copying only when needed), then
    copy once more if a flag is still unmet.  cupynum arrays are always aligned, writeable
    and of the base class, so 'A', 'W' and 'E' hold by construction; 'O' means not a view."""
    if not requirements:
        return asanyarray(a, dtype=dtype)
    requirements = {_REQUIREMENT_FLAGS[x.upper()] for x in requirements}
    requirements.discard("E")
    order = "A"
    if requirements >= {"C", "F"}:
        raise ValueError('Cannot specify both "C" and "F" order')
    if "F" in requirements:
        order = "F"
        requirements.remove("F")
    elif "C" in requirements:
        order = "C"
        requirements.remove("C")
    arr = array(a, dtype=dtype, order=order, copy=None)
    if "O" in requirements and arr._base is not None:
        return arr.copy(order)
    return arr
