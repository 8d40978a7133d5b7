"""The ndarray: a backend buffer, a byte offset, shape, byte strides and a numpy.dtype.

Views (basic indexing, reshape when strides allow, transpose, ``view``, real/imag) share
the buffer and launch nothing.  Every read of the data goes through ``_host()`` (host copy)
or the backend, so a later lazy array has one place to materialise itself.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import _backends
from ._device import current_device
from ._dtypes import normalize, normalize_for_view
from ._indexing import (AdvancedIndex, basic_view, int_axis, normalize_axis, slice_axis,
                        zero_d_axis)
from ._shapes import (_c_strides, _contiguity, _f_strides, _fill_reshape, _reshape_strides,
                      _shape_str, _shape_tuple)


class _Flags:
    """The subset of numpy.ndarray.flags that applies (read-only snapshot)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata", "writeable")

    def __init__(self, a):
        self.c_contiguous = a._c_contig
        self.f_contiguous = a._f_contig
        self.owndata = a._base is None
        self.writeable = True

    def __getitem__(self, name):
        key = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
               "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous",
               "OWNDATA": "owndata", "O": "owndata", "WRITEABLE": "writeable", "W": "writeable"}
        return getattr(self, key[name.upper()])

    @property
    def contiguous(self):
        return self.c_contiguous

    def __repr__(self):
        return "\n".join(f"  {k.upper()} : {getattr(self, k)}" for k in self.__slots__)


class _Data:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class ndarray:
    """An N-dimensional array in device memory (host memory on the host backend)."""

    # _hv, _hraw: the NumPy view of the elements on the host and the host allocation it was
    # built over (``host_view``), kept for the host path; unset until first asked for.
    # _hkey, _hsrc: of a view made by __getitem__'s host path, its key and the NumPy view it
    # was taken from (its parent's ``_hv``), so that __setitem__ knows ``A[k] op= x``'s
    # closing ``A[k] = view`` for the no-op it is; unset on other arrays.
    __slots__ = ("_buf", "_offset", "_shape", "_strides", "dtype", "_size", "_c_contig",
                 "_f_contig", "_base", "_hv", "_hraw", "_hkey", "_hsrc", "__weakref__")
    __array_priority__ = 100

    # construction ---------------------------------------------------------------------
    def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order="C"):
        shape = _shape_tuple(shape)
        if any(n < 0 for n in shape):
            raise ValueError("negative dimensions are not allowed")
        dt = normalize(dtype) if buffer is None else normalize_for_view(dtype)
        if buffer is not None:
            if not isinstance(buffer, ndarray):
                raise TypeError("buffer must be a cupynum ndarray")
            order = order_code(order)
            if strides is None:
                strides = _c_strides(shape, dt.itemsize) if order != "F" else _f_strides(shape, dt.itemsize)
            return _make(buffer._buf, buffer._offset + offset, shape, tuple(strides), dt, buffer)
        return empty_array(shape, dt, order_code(order))

    # attributes -----------------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, value):
        if value is None:
            raise TypeError("Use () not None as shape arguments")
        new = self.reshape(value)
        if not _shares_layout_view(self, new):
            raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` "
                                 "to make a copy with the desired shape.")
        self._shape, self._strides = new._shape, new._strides
        self._c_contig, self._f_contig = new._c_contig, new._f_contig
        self._hraw = None  # the layout changed: the kept NumPy view is no longer it

    @property
    def strides(self):
        return self._strides

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        return self._size

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self._size * self.dtype.itemsize

    @property
    def base(self):
        return self._base

    @property
    def flags(self):
        return _Flags(self)

    @property
    def data(self):
        return _Data(self._address())

    @property
    def device(self):
        return current_device()

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    @property
    def real(self):
        if self.dtype.kind != "c":
            return self
        return self._component(0)

    @real.setter
    def real(self, value):
        self.real[...] = value

    @property
    def imag(self):
        if self.dtype.kind != "c":
            out = _zeros_like_nocheck(self)
            return out
        return self._component(1)

    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def _component(self, which):
        part = np.dtype(self.dtype.char.lower())
        return _make(self._buf, self._offset + which * part.itemsize, self._shape, self._strides,
                     part, self._root())

    def _root(self):
        return self if self._base is None else self._base

    # host conversion --------------------------------------------------------------------
    def _host(self) -> np.ndarray:
        """A C-contiguous NumPy copy of the values (waits for the device)."""
        return _backends.to_host(self)

    def _address(self) -> int:
        """The address of the first element where the data lives (the device's where it
        is there): for the interchange protocols and raw kernels."""
        return self._buf.address() + self._offset

    def get(self, stream=None, order="C", out=None):
        host = self._host()
        if order == "F" or (order == "A" and self._f_contig and not self._c_contig):
            host = np.asfortranarray(host)
        if out is not None:
            out[...] = host
            return out
        return host

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            if self._buf.host is None or (dtype is not None and np.dtype(dtype) != self.dtype):
                raise ValueError("a cupynum array whose data is on the device cannot be "
                                 "converted to a NumPy array without a copy")
            return _backends.export_host(self)
        host = self._host()
        return host if dtype is None else host.astype(dtype, copy=False)

    def tolist(self):
        return self._host().tolist()

    def item(self, *args):
        return self._host().item(*args)

    def tobytes(self, order="C"):
        return self._host().tobytes(order)

    def __bool__(self):
        if self._size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()" if self._size else
                             "The truth value of an empty array is ambiguous. Use `array.size > 0` "
                             "to check that an array is not empty.")
        if self._buf.host is not None:  # (the host path: NumPy's kept view, no copy)
            return bool(host_view(self).reshape(()))
        return bool(self._host().reshape(()))

    def __int__(self):
        return int(self._scalar_host("int"))

    def __float__(self):
        return float(self._scalar_host("float"))

    def __complex__(self):
        return complex(self._scalar_host("complex"))

    def __index__(self):
        if self.ndim != 0 or self.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        if self.dtype.kind == "b":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._host())

    def _scalar_host(self, kind):
        if self._shape:
            raise TypeError("only length-1 arrays can be converted to Python scalars"
                            if self._size != 1 else
                            "only 0-dimensional arrays can be converted to Python scalars")
        return _backends.to_host(self)[()]

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    def __repr__(self):
        return repr(self._host())

    def __str__(self):
        return str(self._host())

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self._host()[()], spec)
        return format(self._host(), spec)

    def __reduce__(self):
        return (_rebuild, (self._host(),))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # views ------------------------------------------------------------------------------
    def view(self, dtype=None, type=None):
        if dtype is None:
            return _make(self._buf, self._offset, self._shape, self._strides, self.dtype,
                         self._root())
        if isinstance(dtype, builtins.type) and issubclass(dtype, ndarray):
            return self.view()
        dt = normalize_for_view(dtype)
        old = self.dtype.itemsize
        if dt.itemsize == old or self.ndim == 0 and dt.itemsize == old:
            return _make(self._buf, self._offset, self._shape, self._strides, dt, self._root())
        if self.ndim == 0:
            raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize "
                             "is unchanged")
        if self._strides[-1] != old and self._shape[-1] != 1:
            raise ValueError("To change to a dtype of a different size, the last axis must be "
                             "contiguous")
        last = self._shape[-1] * old
        if last % dt.itemsize:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                             "total size in bytes of the last axis of the array.")
        shape = self._shape[:-1] + (last // dt.itemsize,)
        strides = self._strides[:-1] + (dt.itemsize,)
        return _make(self._buf, self._offset, shape, strides, dt, self._root())

    def transpose(self, *axes):
        if not axes or (len(axes) == 1 and axes[0] is None):
            axes = tuple(range(self.ndim))[::-1]
        elif len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        axes = tuple(normalize_axis(a, self.ndim) for a in axes)
        if len(axes) != self.ndim or len(set(axes)) != self.ndim:
            raise ValueError("axes don't match array")
        return _make(self._buf, self._offset, tuple(self._shape[a] for a in axes),
                     tuple(self._strides[a] for a in axes), self.dtype, self._root())

    def swapaxes(self, axis1, axis2):
        a1, a2 = normalize_axis(axis1, self.ndim), normalize_axis(axis2, self.ndim)
        order = list(range(self.ndim))
        order[a1], order[a2] = order[a2], order[a1]
        return self.transpose(order)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
            if shape is None:  # NumPy: the shape as it is
                shape = self._shape
        order = order_code(order)
        if order not in ("C", "F", "A", None):
            raise ValueError(f"order must be one of 'C', 'F', 'A' (got {order!r})")
        if order == "A":
            order = "F" if self._f_contig and not self._c_contig else "C"
        shape = _fill_reshape(_shape_tuple(shape), self._size)
        if shape == self._shape and copy is not True:
            return self.view()
        strides = None if copy is True else _reshape_strides(self, shape, order or "C")
        if strides is not None:
            return _make(self._buf, self._offset, shape, strides, self.dtype, self._root())
        if copy is False:
            raise ValueError("Unable to avoid creating a copy while reshaping.")
        src = self.copy(order=order or "C")
        return _make(src._buf, src._offset, shape, _reshape_strides(src, shape, order or "C"),
                     self.dtype, src)

    def ravel(self, order="C"):
        if order_code(order) == "K":
            return _memory_order_view(self).reshape(-1)
        return self.reshape(-1, order=order)

    def flatten(self, order="C"):
        if order_code(order) == "K":
            return self.ravel("K").copy()
        return self.copy(order=order).reshape(-1, order=order)

    def squeeze(self, axis=None):
        if axis is None or zero_d_axis(self.ndim, axis):
            axes = [i for i, n in enumerate(self._shape) if n == 1]
        else:
            axes = [normalize_axis(int_axis(a), self.ndim)
                    for a in (axis if isinstance(axis, tuple) else (axis,))]
            if len(set(axes)) != len(axes):
                raise ValueError("duplicate value in 'axis'")
            for a in axes:
                if self._shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not "
                                     "equal to one")
        keep = [i for i in range(self.ndim) if i not in axes]
        return _make(self._buf, self._offset, tuple(self._shape[i] for i in keep),
                     tuple(self._strides[i] for i in keep), self.dtype, self._root())

    # copies -----------------------------------------------------------------------------
    def copy(self, order="C"):
        out = _empty_in_order(self, self.dtype, order)
        if self._size:
            _backends.for_arrays(self, out).copy(self, out)
        return out

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dt = normalize(dtype)
        if not np.can_cast(self.dtype, dt, casting=casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dt!r} according to "
                            f"the rule {casting!r}")
        if dt == self.dtype and not copy:
            return self
        out = _empty_in_order(self, dt, order)
        if self._size:
            _backends.for_arrays(self, out).copy(self, out)
        return out

    def fill(self, value):
        _fill(self, value)

    def byteswap(self, inplace=False):
        """Swap the bytes of each element (of each component, for complex)."""
        unit = self.dtype.itemsize // (2 if self.dtype.kind == "c" else 1)
        if unit == 1 or not self._size:
            return self if inplace else self.copy()
        src = self if self._c_contig else self.copy()
        raw = src.view(np.uint8).reshape(src._shape + (-1, unit))
        swapped = raw[..., ::-1].copy().reshape(src._shape + (-1,)).view(self.dtype)
        swapped = swapped.reshape(self._shape)
        if inplace:
            self[...] = swapped
            return self
        return swapped

    def getfield(self, dtype, offset=0):
        """A view of the bytes ``offset .. offset + dtype.itemsize`` of each element."""
        dt = normalize_for_view(dtype)
        if offset < 0 or offset + dt.itemsize > self.dtype.itemsize:
            raise ValueError(f"Need 0 <= offset <= {self.dtype.itemsize - dt.itemsize} for "
                             f"requested type but received offset = {offset}")
        return _make(self._buf, self._offset + offset, self._shape, self._strides, dt,
                     self._root())

    def setfield(self, val, dtype, offset=0):
        self.getfield(dtype, offset)[...] = val

    def resize(self, *new_shape, refcheck=True):
        """Change shape and size in place, as NumPy does: new elements are zero."""
        if len(new_shape) == 1 and not isinstance(new_shape[0], (int, np.integer)):
            new_shape = new_shape[0]
        shape = _shape_tuple(new_shape)
        if any(n < 0 for n in shape):
            raise ValueError("negative dimensions not allowed")
        if self._base is not None or not self._c_contig:
            raise ValueError("cannot resize this array: it does not own its data")
        out = empty_array(shape, self.dtype)
        n = min(out._size, self._size)
        if out._size:
            flat = out.reshape(-1)
            _fill(flat, 0)
            if n:
                flat[:n] = self.reshape(-1)[:n]
        self._buf, self._offset, self._shape, self._strides = (
            out._buf, 0, out._shape, out._strides)
        self._size, self._c_contig, self._f_contig = out._size, out._c_contig, out._f_contig
        self._hraw = None

    def to_device(self, device, /, *, stream=None):
        """The array on ``device`` (the array API): cupynum arrays live on one device."""
        if device != self.device and str(device) != str(self.device):
            raise ValueError(f"cupynum cannot move arrays to device {device!r}")
        return self

    def tofile(self, fid, sep="", format="%s"):
        self._host().tofile(fid, sep, format)

    def dump(self, file):
        import pickle

        if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
            with open(file, "wb") as f:
                pickle.dump(self, f, protocol=2)
        else:
            pickle.dump(self, file, protocol=2)

    def dumps(self):
        import pickle

        return pickle.dumps(self, protocol=2)

    # indexing ---------------------------------------------------------------------------
    def __getitem__(self, key):
        raw = self._buf.host
        if raw is not None and self._shape:  # the host path: NumPy indexes the kept view
            tk = type(key)
            if tk is tuple or tk is slice or tk is int:
                try:
                    hv = self._hv if self._hraw is raw else host_view(self)
                except AttributeError:
                    hv = host_view(self)
                try:  # NumPy first: only an integer per axis gives a scalar, which is the
                    r = hv[key]  # answer whatever the key's types (A[i, j]: no key test)
                except Exception:  # noqa: BLE001
                    if tk is not tuple or _ints_and_slices(key):
                        raise  # (NumPy's error for a key of ints and slices)
                    r = tk = None  # the general path decides, and raises
                if type(r) is not _NP_ARRAY and tk is not None:
                    return r  # an element: NumPy's scalar
            else:
                tk = None
            if tk is not None and (n := r.size):  # a view sharing the Buffer (an empty
                # one: the general path); NumPy gave the layout and the flags, the byte
                # offset is the key's, worked out as its types are tested
                offset = self._offset
                if tk is tuple:
                    strides, i = self._strides, 0
                    for k in key:
                        if (t := type(k)) is int:
                            if k:
                                offset += (k if k > 0 else k + self._shape[i]) * strides[i]
                        elif t is not slice:
                            tk = None  # (NumPy's copy or view is the general path's)
                            break
                        elif k.step is not None or (start := k.start) and not (
                                type(start) is int and start > 0):
                            offset += k.indices(self._shape[i])[0] * strides[i]
                        elif start:  # (a positive int below the length; None, 0: no move)
                            offset += start * strides[i]
                        i += 1
                elif tk is slice:  # (the tuple loop's rule for one slice)
                    if key.step is not None or (start := key.start) and not (
                            type(start) is int and start > 0):
                        offset += key.indices(self._shape[0])[0] * self._strides[0]
                    elif start:
                        offset += start * self._strides[0]
                else:  # (A[i]: a row)
                    offset += (key if key >= 0 else key + self._shape[0]) * self._strides[0]
                if tk is not None:
                    v = _new(ndarray)
                    v._buf = self._buf
                    v._offset = offset
                    v.dtype = self.dtype
                    v._size = n
                    if r.ndim == 1:  # (a row, a column, a run: NumPy's 1-D flags rule)
                        v._shape = (n,)
                        v._strides = st = r.strides
                        v._c_contig = v._f_contig = st[0] == r.itemsize or n == 1
                    else:
                        v._shape = r.shape
                        v._strides = r.strides
                        fl = r.flags
                        v._c_contig = fl.c_contiguous
                        v._f_contig = fl.f_contiguous
                    v._base = self if self._base is None else self._base
                    v._hv = r  # (so a host op on the view builds nothing)
                    v._hraw = raw
                    v._hkey = key
                    v._hsrc = hv
                    return v
        if type(key) is slice and self._shape:  # the common case, written out flat
            return self._slice0(key, self if self._base is None else self._base)
        if type(key) is tuple and len(key) == len(self._shape) and key:  # a slice per axis
            view = self._slices(key, self if self._base is None else self._base)
            if view is not None:  # (x = A[i, j], an int per axis: the element's offset)
                return _element(self, view) if type(view) is int else view
        elif type(key) is int and self._shape:  # a[i], and iteration; A[i]: a row view
            n = self._shape[0]
            if -n <= key < n:
                if len(self._shape) > 1:
                    return self._slices((key,) + (_ALL,) * (len(self._shape) - 1),
                                        self if self._base is None else self._base)
                return _element(self, self._offset + (key + n if key < 0 else key)
                                * self._strides[0])
        if type(key) is ndarray:  # a[idx], a[mask]: no basic view to try first
            return _getitem_advanced(self, key)
        try:
            offset, shape, strides = basic_view(self._offset, self._shape, self._strides, key)
        except AdvancedIndex:
            return _getitem_advanced(self, key)
        if not shape and not _has_ellipsis(key):  # an integer for every axis: a value
            return _element(self, offset)
        return _make(self._buf, offset, shape, strides, self.dtype, self._root())

    def _slice0(self, key, base):
        """``self[key]`` for a slice along the first axis (the hot path of slicing)."""
        n, s = self._shape[0], self._strides[0]
        start, stop, step = key.indices(n)
        length = len(range(start, stop, step))
        a = object.__new__(ndarray)
        a._buf = self._buf
        a._offset = self._offset + start * s if length else self._offset
        a.dtype = self.dtype
        a._base = base
        if len(self._shape) == 1:
            a._shape = (length,)
            a._strides = (s * step,)
            a._size = length
            a._c_contig = a._f_contig = step == 1 and self._c_contig or length < 2 or (
                s * step == self.dtype.itemsize)
            return a
        a._shape = (length,) + self._shape[1:]
        a._strides = (s * step,) + self._strides[1:]
        a._size = length * (self._size // n) if n else 0
        a._c_contig, a._f_contig = _contiguity(a._shape, a._strides, self.dtype.itemsize)
        return a

    def _slices(self, key, base):
        """``self[key]`` for a tuple of one slice or in-bounds Python int per axis, at least
        one a slice (stencils: ``u[1:-1, 2:]``, rows and columns: ``A[i, 1:-1]``); for an
        in-bounds Python int per axis, the element's byte offset (an int: ``A[i, j]``);
        None for any other key (the general path then decides)."""
        offset = self._offset
        shape, strides = [], []
        for k, n, s in zip(key, self._shape, self._strides):
            if type(k) is slice:  # (slice_axis, inline)
                start, stop, step = k.indices(n)
                if step == 1:
                    length = stop - start if stop > start else 0
                else:
                    length = len(range(start, stop, step))
                if length:
                    offset += start * s
                shape.append(length)
                strides.append(s if step == 1 else s * step)
            elif type(k) is int and -n <= k < n:
                offset += (k + n if k < 0 else k) * s
            else:
                return None
        if not shape:
            return offset  # an int for every axis: an element, not a view
        return _make(self._buf, offset, tuple(shape), tuple(strides), self.dtype, base)

    def __setitem__(self, key, value):
        buf = self._buf
        raw = buf.host
        if raw is None and buf.device is None and buf.pending is None and (
                type(value) is not ndarray or value._buf.host is not None):
            raw = _backends.host_for_new(buf, self)  # a new array's first write of host data
        if raw is not None and buf.device is None and buf.readers is None:
            # the host path: NumPy's setitem on the kept view (data on the host only), for
            # tuple, int and slice keys, values that are numbers or host arrays
            tv = type(value)
            if tv is ndarray:
                if value._buf is buf:
                    # ``A[k] op= x`` ends in ``A[k] = v``, v the view A[k] made (the same key
                    # object) and wrote in place: nothing to copy while neither array's
                    # layout or host allocation changed since (their kept views are those
                    # v was made from and over; NumPy's setitem skips this copy too)
                    try:
                        if value._hkey is key and value._hsrc is self._hv and (
                                self._hraw is raw and value._hraw is raw
                                and value.dtype is self.dtype):
                            return
                    except AttributeError:  # (v not made by the host path, or self never
                        pass  # built its NumPy view)
                vraw = value._buf.host
                try:
                    v = None if vraw is None else (
                        value._hv if value._hraw is vraw else host_view(value))
                except AttributeError:
                    v = host_view(value)
            else:
                v = value if tv in _HOST_VALUES else None
            tk = type(key)
            if v is not None and (tk is tuple or tk is slice or tk is int):
                buf.version += 1  # Buffer.will_write(), its plain case inline
                try:
                    hv = self._hv if self._hraw is raw else host_view(self)
                except AttributeError:
                    hv = host_view(self)
                try:  # NumPy's setitem, no test of the key (A[i, j] = x in a loop)
                    hv[key] = v
                    return
                except Exception:  # noqa: BLE001
                    if tk is not tuple or _ints_and_slices(key):
                        raise  # (NumPy's error for a key of ints and slices)
                    # what NumPy refuses goes to the general path, which decides
        if type(key) is slice and self._shape:
            target = self._slice0(key, self)
            if type(value) is ndarray and value._shape == target._shape and (
                    value._buf is not self._buf):
                if target._size:  # no broadcasting, no overlap: one copy
                    _backends.copy_into(target, value)
                return
        else:
            target = None
            if type(key) is tuple and len(key) == len(self._shape):
                target = self._slices(key, self)
                if type(target) is int:  # a[i, j] = x: an element, at that offset
                    if buf.host is None and (type(value) in _HOST_VALUES or type(
                            value) is ndarray and not value._shape) and \
                            _backends.store_element(self, target, value):
                        return
                    target = None
            if target is None:
                try:
                    offset, shape, strides = basic_view(self._offset, self._shape,
                                                        self._strides, key)
                except AdvancedIndex:
                    return _setitem_advanced(self, key, value)
                target = _make(self._buf, offset, shape, strides, self.dtype, self)
        if type(value) is ndarray and value._buf is buf and value._offset == target._offset \
                and value._strides == target._strides and value._shape == target._shape \
                and value.dtype == target.dtype:
            return  # a view stored onto itself (a[i, 1:-1] += b stores what it changed)
        assign(target, value)

    # protocols --------------------------------------------------------------------------
    # __array_namespace__, __array_ufunc__ and __array_function__ are installed by
    # _dispatch.py, __dlpack__ and __dlpack_device__ by _interop.py (they build on the
    # namespace and on the array): the ndarray imports nothing above it.

    @property
    def __cuda_array_interface__(self):
        if not _backends.for_side("device").cuda_memory:
            raise AttributeError("__cuda_array_interface__ exists only on the CUDA backend")
        _backends.pin_device(self)  # the consumer may read or write it there at any time
        ptr = self._address() if self._size else 0
        return {"shape": self._shape, "typestr": self.dtype.str, "data": (ptr, False),
                "version": 3, "strides": None if self._c_contig else self._strides,
                "stream": _cai_stream()}


def _cai_stream():
    """The CUDA array interface's ``stream``: where this thread queues work (1 for the
    legacy default stream), so the consumer waits for what cupynum has queued there."""
    from ._backends.cuda import runtime

    handle = runtime.current_stream()
    return 1 if handle == 0 else handle


# ------------------------------------------------------------------------------------------
_ALL = slice(None)
_NP_ARRAY = np.ndarray
# The host path's setitem: values that are numbers (or host arrays).
_HOST_VALUES = frozenset({int, float, complex, bool, np.float64, np.float32, np.int64,
                          np.int32, np.bool_, np.complex128})


def _ints_and_slices(key) -> bool:
    """Whether tuple ``key`` holds only Python ints and slices (the host path's keys whose
    errors are NumPy's)."""
    return all(type(k) is int or type(k) is slice for k in key)


def _advanced_indexing_missing(*args):
    raise RuntimeError("advanced indexing is installed by cupynum._api.indexing")


# a[idx] and a[idx] = v for keys that are not basic views: installed by _api/indexing.py,
# which builds advanced indexing on the ndarray (install_advanced_indexing).
_getitem_advanced = _setitem_advanced = _advanced_indexing_missing


def install_advanced_indexing(getitem, setitem):
    global _getitem_advanced, _setitem_advanced
    _getitem_advanced, _setitem_advanced = getitem, setitem


def _has_ellipsis(key):
    return type(key) is tuple and any(k is Ellipsis for k in key) or key is Ellipsis


def _element(a, offset):
    """``a``'s element at byte ``offset`` as an independent value: a NumPy scalar where the
    data is on the host (as NumPy gives), else a new 0-d array holding a copy of it.

    Selecting one element (an integer for every axis) gives an independent value, as
    NumPy's scalars are: ``a[0], a[1] = a[1], a[0]`` swaps, and ``x = a[0]; x += 1``
    leaves ``a`` alone.  No view kept: of device data, a read on first use (or before
    ``a`` is written: ``_backends/elements.py``) or an element-sized copy."""
    raw = a._buf.host
    if raw is not None and a._shape:  # an element of a host array: NumPy's scalar
        return np.ndarray((), a.dtype, raw, offset)[()]
    out = _new(ndarray)
    out._buf = _backends.element(a, offset)
    out._offset = 0
    out._shape = out._strides = ()
    out.dtype = a.dtype
    out._size = 1
    out._c_contig = out._f_contig = True
    out._base = None
    return out


def host_view(a) -> np.ndarray:
    """The NumPy view of the elements of ``a``, whose data is valid on the host (the host
    path's operand): built once per array and kept, rebuilt only if the host allocation
    changed (the data moved away and back)."""
    raw = a._buf.host
    try:
        if a._hraw is raw:
            return a._hv
    except AttributeError:  # (not built yet)
        pass
    hv = np.ndarray(a._shape, a.dtype, raw, a._offset, a._strides) if a._size else np.empty(
        a._shape, a.dtype)
    a._hv, a._hraw = hv, raw
    return hv


def _make(buf, offset, shape, strides, dtype, base):
    """A new array object over ``buf`` (no allocation, no copy)."""
    a = object.__new__(ndarray)
    a._buf = buf
    a._offset = offset
    a._shape = shape
    a._strides = strides
    a.dtype = dtype
    size = 1
    for n in shape:
        size *= n
    a._size = size
    a._c_contig, a._f_contig = _contiguity(shape, strides, dtype.itemsize)
    a._base = base
    return a


def empty_array(shape, dtype, order="C", backend=None):
    """A new uninitialised array (shape a tuple of ints, dtype a canonical numpy.dtype),
    allocated on ``backend`` now where given (the op's, known), else where its first op runs.

    Written flat for ``empty``'s per-call cost: the flags of a fresh array follow from its
    shape alone (C order: C-contiguous, and F-contiguous too when at most one axis is
    longer than 1 or the array is empty; F order mirrors that), as ``_contiguity`` would
    compute them."""
    itemsize = dtype.itemsize
    if len(shape) == 1:
        size = shape[0]
        strides = (itemsize,)
        c = f = True
    else:
        size = 1
        long_axes = 0
        for n in shape:
            size *= n
            if n != 1:
                long_axes += 1
        c = f = long_axes <= 1 or size == 0
        if order == "F":
            strides = _f_strides(shape, itemsize)
            f = True
        else:
            strides = _c_strides(shape, itemsize)
            c = True
    return fresh_array(shape, strides, dtype, size, c, f, backend)


def fresh_array(shape, strides, dtype, size, c_contig, f_contig, backend=None):
    """A new array over a new buffer of ``size`` elements, its slots set directly (no
    ``__init__`` frame): the layout and flags come from the caller.  ``backend``: allocated
    there now (the op's backend, known), else where its first op runs."""
    a = _new(ndarray)
    a._buf = _backends.new_buffer(size * dtype.itemsize) if backend is None else \
        backend.alloc(size * dtype.itemsize)
    a._offset = 0
    a._shape = shape
    a._strides = strides
    a.dtype = dtype
    a._size = size
    a._c_contig = c_contig
    a._f_contig = f_contig
    a._base = None
    return a


_new = object.__new__


def from_host(host: np.ndarray):
    """A new device array holding a copy of the NumPy array ``host``."""
    dt = normalize(host.dtype)
    if host.dtype != dt:
        host = host.astype(dt)
    f_only = host.flags.f_contiguous and not host.flags.c_contiguous
    if f_only:
        src = host.T  # F-order data is the C-order data of the transpose
        buf = _backends.for_new(src.nbytes).from_host(np.ascontiguousarray(src))
        return _make(buf, 0, host.shape, _f_strides(host.shape, dt.itemsize), dt, None)
    buf = _backends.for_new(host.nbytes).from_host(np.ascontiguousarray(host))
    return _make(buf, 0, host.shape, _c_strides(host.shape, dt.itemsize), dt, None)


def _rebuild(host):
    return from_host(host)


def _zeros_like_nocheck(a):
    out = empty_array(a._shape, a.dtype)
    if out._size:
        _backends.for_arrays(out).fill(out, a.dtype.type(0))
    return out


def order_code(order):
    """A memory order as NumPy spells it ('C', 'F', 'A' or 'K', either case) -> upper case;
    None stays None; anything else raises NumPy's ValueError."""
    if order is None or order in ("C", "F", "A", "K"):
        return order
    if isinstance(order, str) and len(order) == 1 and order.upper() in "CFAK":
        return order.upper()
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _empty_in_order(a, dtype, order):
    """A new array of a's shape for a copy or cast of ``a`` in ``order``.  Order 'K' of an
    array that is neither C- nor F-contiguous keeps its axes' memory order (NumPy's rule:
    axes sorted by decreasing absolute stride), so a transposed view copies as one."""
    order = order_code(order)
    if order == "K" and not (a._c_contig or a._f_contig):
        perm = sorted(range(a.ndim), key=lambda ax: -abs(a._strides[ax]))  # stable on ties
        packed = empty_array(tuple(a._shape[ax] for ax in perm), dtype)
        strides = [0] * a.ndim
        for pos, ax in enumerate(perm):
            strides[ax] = packed._strides[pos]
        return _make(packed._buf, 0, a._shape, tuple(strides), dtype, None)
    return empty_array(a._shape, dtype, _resolve_order(order, a))


def _memory_order_view(a):
    """a with its axes in memory order (decreasing absolute stride, each axis still read
    in index order): what NumPy's ravel(order='K') reads."""
    return a.transpose(sorted(range(a.ndim), key=lambda ax: -abs(a._strides[ax])))


def _resolve_order(order, a):
    order = order_code(order)
    if order in ("C", None):
        return "C"
    if order == "F":
        return "F"
    if order in ("A", "K"):
        return "F" if a._f_contig and not a._c_contig else "C"
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _shares_layout_view(a, b):
    return b._buf is a._buf


def _byte_extent(a):
    lo = hi = a._offset
    for n, s in zip(a._shape, a._strides):
        if n == 0:
            return a._offset, a._offset
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + a.dtype.itemsize


def may_overlap(a, b) -> bool:
    """Whether arrays a and b may share memory (same buffer and overlapping byte range)."""
    if a._buf is not b._buf or not a._size or not b._size:
        return False
    lo1, hi1 = _byte_extent(a)
    lo2, hi2 = _byte_extent(b)
    return lo1 < hi2 and lo2 < hi1


def broadcast_view(a, shape):
    """A view of ``a`` broadcast to ``shape`` (zero strides); ValueError if impossible."""
    if a._shape == shape:
        return a
    nd = len(shape)
    src_shape, src_strides = a._shape, a._strides
    if len(src_shape) > nd:  # NumPy lets extra leading 1-dims go
        extra = len(src_shape) - nd
        if any(n != 1 for n in src_shape[:extra]):
            raise ValueError(f"could not broadcast input array from shape {_shape_str(a._shape)} "
                             f"into shape {_shape_str(shape)}")
        src_shape, src_strides = src_shape[extra:], src_strides[extra:]
    pad = nd - len(src_shape)
    strides = []
    for i, n in enumerate(shape):
        j = i - pad
        if j < 0:
            strides.append(0)
        elif src_shape[j] == n:
            strides.append(src_strides[j] if n != 1 else 0)
        elif src_shape[j] == 1:
            strides.append(0)
        else:
            raise ValueError(f"could not broadcast input array from shape "
                             f"{_shape_str(a._shape)} into shape {_shape_str(shape)}")
    return _make(a._buf, a._offset, tuple(shape), tuple(strides), a.dtype, a._root())


def _fill(dst, value, casting=None):
    """Fill dst with a scalar: setitem's conversion rules, or ``numpy.copyto``'s with
    ``casting`` (as numpy.full uses); NumPy itself converts, so its errors are ours."""
    host = np.empty((), dst.dtype)
    if casting is None:
        host[()] = value
    else:
        np.copyto(host, value, casting=casting)
    if dst._size:
        _backends.for_writing(dst).fill(dst, host[()])


def assign(dst, value):
    """``dst[...] = value`` with NumPy's broadcasting and casting of the value."""
    if isinstance(value, ndarray):
        src = value
    elif isinstance(value, (int, float, complex, bool, np.generic)) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biufc"
    ):
        return _fill(dst, value)
    else:
        host = np.asarray(value)
        if host.dtype.kind not in "biufc":
            host = np.asarray(value, dtype=dst.dtype)  # NumPy's error for bad values
        src = from_host(host)
    if not dst._size:
        broadcast_view(src, dst._shape)  # still raises on bad shapes
        return
    src = broadcast_view(src, dst._shape)
    if src._buf is dst._buf and src._offset == dst._offset and (
            src._strides == dst._strides and src.dtype == dst.dtype):
        return  # the view written onto itself (``A[k] += x`` ends so): nothing changes
    if may_overlap(src, dst):
        src = src.copy()
    _backends.copy_into(dst, src)

