"""The ufunc class, built from the op table.

Type resolution is NumPy's own (``numpy.ufunc.resolve_dtypes``, NEP 50 weak Python
scalars), cached per (dtypes, scalar kinds), so its answers and errors are NumPy's.

The hot paths (``_ufunc_hot.py``): operands that are C-contiguous arrays of one shape and
Python scalars, no keywords, read the caches this class fills (``_hot_record``: the
prepared launchers per dtypes and scalar types); Python scalars are packed as they are
where that gives NumPy's conversion (``_RAW_SCALAR_LOOPS``).  The ndarray operators are
those hot functions themselves.

The general path without keywords (``ufunc._plain_call``: strided or broadcast arrays, the
operators' fallback) caches NumPy's resolution per operand kinds too and skips
broadcasting for operands of one shape; calls with keywords take ``_call``'s full path.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from . import _backends
from ._api.creation import arange, asarray
from ._array import (assign, broadcast_view, empty_array, fresh_array, may_overlap, ndarray,
                     order_code)
from ._backends import fusion as _fusion, placement as _placement
from ._backends.base import ElementwiseOp
from ._backends.buffer import SMALL
from ._dtypes import BOOL as _BOOL, normalize, resolution_type
from ._fallback import call_on_host
from ._ops import type_loops
from ._ops import UFUNCS as TABLE
from ._shapes import _broadcast_shapes, _prod
from ._ufunc_hot import SCALAR_TYPES as _SCALAR_TYPES, hot_binary, hot_inplace, hot_unary, \
    key_of, runners

_PY_SCALARS = (int, float, complex, bool)
_INT_CHARS = "bhilqBHILQ"
# Loop chars whose parameter slot a Python scalar may be packed into as it is (the CUDA
# launcher's struct.pack_into), giving the bits NumPy's conversion to the loop dtype gives:
# float -> float32/64 is one C cast, ints into integer slots are exact or refused
# (struct.error, then NumPy's own conversion raises NumPy's error), int -> float64 is
# PyLong_AsDouble in both.  Anything else (int -> float32 or float16) is converted by NumPy.
_RAW_SCALAR_LOOPS = {float: "fdFD", int: _INT_CHARS + "d", bool: "?" + _INT_CHARS,
                     complex: "FD"}
# Loop chars a Python scalar converts to with ``dtype.type(x)`` alone on the general path:
# exact, or OverflowError (never a float overflow to inf that errstate would silence).
_PLAIN_CONVERSIONS = {float: "dD", complex: "D", int: _INT_CHARS + "d",
                      bool: "?" + _INT_CHARS + "efdFD"}
# NumPy scalars as _plain_call's operand kinds: strong (a dtype in NEP 50's resolution) but
# passed by value, so not the bare dtype an array of that dtype has.
_NUMPY_SCALAR_KINDS = {np.dtype(c).type: ("numpy scalar", normalize(np.dtype(c)))
                       for c in "?bhilqBHILQefdFD"}


class ufunc:
    """A NumPy-compatible universal function running on the current backend."""

    def __init__(self, row):
        npu = getattr(np, row.name)
        self._np = npu
        self._row = row
        self.__name__ = row.name
        self.__doc__ = npu.__doc__
        self.nin, self.nout, self.nargs = npu.nin, npu.nout, npu.nargs
        self.identity = npu.identity
        self.signature = None
        loops = type_loops(row.name)
        self.types = [("".join(lp[: self.nin]) + "->" + "".join(lp[self.nin:])) for lp in loops]
        self.ntypes = len(self.types)
        # hot-path cache: key -> (out dtypes, launcher, scalar converters, raw scalars ok)
        self._fast = {}
        self._ops = {}  # loop chars -> ElementwiseOp
        # The two-input hot path's index of _fast: [array dtype][array dtype],
        # [array dtype][scalar type], [second operand's dtype][first (scalar) operand's
        # type] -> record (see _hot_record), and the closure that reads it.
        self._hot = ({}, {}, {})
        self._hot_unary = {}  # the one-input hot path's index: dtype -> record
        # The keyword-free general path's plans (see _plain_call): operand kinds (array
        # dtypes, Python scalar types) -> (loop dtypes, op, scalar converters, check
        # exponents), or False where NumPy's resolution raised (_call raises it again).
        self._plans = {}
        # Its launchers for arrays of one shape: (plan key, shape, operand strides) ->
        # (backend launcher, result dtype, strides, C and F flags, size) or False
        self._layouts = {}
        self._unary = hot_unary(self)
        self._binary = hot_binary(self, self._binary_fallback)
        # ``ufunc(a, b, out=a)``: the in-place operator's hot path (``a op= b``)
        self._into_first = hot_inplace(self, self._into_first_general) \
            if self.nin == 2 and self.nout == 1 else None

    def _binary_fallback(self, a, b):
        out = self._plain_call((a, b))
        return self._call((a, b), {}) if out is None else out

    def _into_first_general(self, a, b):
        return self._call((a, b), {"out": a})

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    # the hot path ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self.nin:
            if len(kwargs) == 1 and len(args) == 2 and self._into_first is not None and \
                    kwargs.get("out") is args[0] and type(args[0]) is ndarray:
                return self._into_first(args[0], args[1])  # (floyd_warshall's minimum)
            return self._call(args, kwargs)
        if self.nin == 2:
            return self._binary(args[0], args[1])
        if self.nin == 1:
            return self._unary(args[0])
        return self._call(args, kwargs)

    def _hot_unary_record(self, dtype):
        """``_hot_unary[dtype]`` filled from ``_fast``: False for the general path, else
        ``(run, out itemsize, out strides equal the operand's, out dtype, now)`` (see
        ``_hot_record``)."""
        key = (dtype, 0)
        entry = self._fast.get(key)
        if entry is None:
            entry = self._fast_entry(key)
        if entry is False:
            rec = False
        else:
            out_dtypes, launch, _, _ = entry
            dt = out_dtypes[0]
            run, now = runners(out_dtypes, launch)
            rec = (run, dt.itemsize, dt.itemsize == dtype.itemsize, dt, now)
        self._hot_unary[dtype] = rec
        return rec

    def _fast_entry(self, key):
        """Resolve a hot-path key once: ``(out dtypes, launch, conv, raw_ok)`` (read by
        unpacking into those names), or False for keys that must take the general path."""
        arg_types = key[:-1]
        try:
            loop = self._np.resolve_dtypes(tuple(_BOOL if t is bool else t for t in arg_types)
                                           + (None,) * self.nout)
        except Exception:
            self._fast[key] = False
            return False
        chars = tuple(normalize(d).char for d in loop)
        op = self._op(chars)
        operand_dtypes = tuple(t if isinstance(t, np.dtype) else None for t in arg_types)
        # The hot path's launchers are the device side's (host arrays take the host path,
        # NumPy on their kept views, before any launcher): they allocate their outputs there.
        launch = _backends.for_side("device").contiguous_launcher(op, operand_dtypes)
        conv = None
        raw_ok = False
        if any(d is None for d in operand_dtypes):
            conv = tuple(normalize(loop[i]).type if d is None else None
                         for i, d in enumerate(operand_dtypes))
            raw_ok = getattr(launch, "packs_python_scalars", False) and all(
                d is not None or chars[i] in _RAW_SCALAR_LOOPS[t]
                for i, (t, d) in enumerate(zip(arg_types, operand_dtypes)))
        if self._row.comparison and int in arg_types:
            entry = False  # out-of-range Python ints compare by value: general path
        elif self.__name__ == "power" and chars[1] in "bhil":
            entry = False  # negative integer exponents must raise: general path checks
        elif int in arg_types and "?" in chars[:self.nin]:
            entry = False  # a Python int beyond a C long must raise: _scalar_operand checks
        else:
            entry = (tuple(normalize(d) for d in loop[self.nin:]), launch, conv, raw_ok)
        self._fast[key] = entry
        return entry

    def _hot_record(self, index, k0, k1):
        """``index[k0][k1]`` filled from ``_fast``: False for the general path, else
        ``(run, out itemsize, out strides equal the operand's, conv, raw_ok, out dtype,
        now)`` with ``run(a, b, out, n, nbytes)`` allocating ``out._buf`` and launching
        (``runners``; None for several outputs).  A plain tuple, read by unpacking it into
        those names: unpacking a NamedTuple costs 43 ns against a tuple's 12 (CPython 3.11
        specializes the unpack for exact tuples only), on a path of about 1 us."""
        key = key_of(index, self._hot, k0, k1)
        entry = self._fast.get(key)
        if entry is None:
            entry = self._fast_entry(key)
        if entry is False:
            rec = False
        else:
            out_dtypes, launch, conv, raw_ok = entry
            dt = out_dtypes[0]
            run, now = runners(out_dtypes, launch)
            rec = (run, dt.itemsize, dt.itemsize == k0.itemsize, conv, raw_ok, dt, now)
        index.setdefault(k0, {})[k1] = rec
        return rec

    def _forget_hot(self):
        """Drop the hot path's index (after ``_fast`` entries were replaced by hand)."""
        for index in self._hot:
            index.clear()
        self._hot_unary.clear()

    def _op(self, chars):
        op = self._ops.get(chars)
        if op is None:
            op = self._ops[chars] = ElementwiseOp(self.__name__, self._row.functor, chars,
                                                  self.nin)
        return op

    # the general path --------------------------------------------------------------------
    def _plain_call(self, ins):
        """A keyword-free call whose operands are ndarrays of any layout (at least one) and
        Python scalars, as ``_call`` computes it with the per-call work that depends only
        on operand kinds cached (``_plan``) and broadcasting skipped for equal shapes;
        None for everything else, which ``_call`` handles."""
        if len(ins) != self.nin:
            return None
        kinds = []
        shape = None
        same_shapes = arrays_only = True
        for x in ins:
            t = type(x)
            if t is ndarray:
                kinds.append(x.dtype)
                if shape is None:
                    shape = x._shape
                elif x._shape != shape:
                    same_shapes = False
            elif t in _SCALAR_TYPES:
                kinds.append(t)
                arrays_only = False
            elif t in _NUMPY_SCALAR_KINDS:
                kinds.append(_NUMPY_SCALAR_KINDS[t])
                arrays_only = False
            else:
                return None
        if shape is None:
            return None  # scalars only: _call
        key = tuple(kinds)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(key)
        if plan is False:
            return None  # NumPy's resolution raises: _call raises the same error
        loop, op, scalar_convs, check_exponent = plan
        if check_exponent:
            _check_integer_exponent(ins[1])
        if not same_shapes:
            try:
                shape = _broadcast_shapes(tuple(x._shape for x in ins if type(x) is ndarray))
            except ValueError:
                raise ValueError(_broadcast_error(ins)) from None
        if self.nout == 1:
            out = self._layout_call(ins, key, shape, same_shapes, arrays_only, loop[-1], op,
                                    scalar_convs)
            if out is not None:
                return out
        operands = []
        f_order = True
        for x, dt, conv in zip(ins, loop, scalar_convs):
            if type(x) is ndarray:
                operands.append(x if x._shape == shape else broadcast_view(x, shape))
                f_order = f_order and x._f_contig and not x._c_contig
                continue
            value = _HOST
            if conv is not None:
                try:
                    value = conv(x)
                except OverflowError:
                    pass  # _scalar_operand raises NumPy's error, or sends comparisons to NumPy
            if value is _HOST:
                value = _scalar_operand(self, x, dt, ins)
                if value is _HOST:
                    return self._host_call(ins, None, True, "same_kind", None)
            operands.append(value)
        order = "F" if f_order else "C"
        if self.nout == 1:
            results = [empty_array(shape, loop[-1], order)]
        else:
            results = [empty_array(shape, dt, order) for dt in loop[self.nin:]]
        if _prod(shape):
            _backends.for_arrays(*operands, *results).elementwise(op, operands, results)
        return results[0] if len(results) == 1 else tuple(results)

    def _layout_call(self, ins, key, shape, same_shapes, arrays_only, dt, op, convs):
        """``_plain_call``'s one-output result through a launcher cached per operand layout
        (``_layouts``: plan key, result shape, each array's strides, and shape when they
        broadcast): one pack and launch, the result's slots set directly.  None where a
        Python scalar needs NumPy's conversion checks or the backend has no launcher."""
        args = ins
        if not arrays_only:  # Python scalars as NumPy scalars of the loop dtypes
            args = []
            for x, conv in zip(ins, convs):
                if type(x) is not ndarray:
                    if conv is None:
                        return None
                    try:
                        x = conv(x)
                    except OverflowError:
                        return None
                args.append(x)
        # the op's backend (placement: where the operands are, and the result's size; settled
        # operands, all SMALL or in an op that large: the device, as ``_backends._place``
        # decides it).  ``levels``: the operands' settled levels or'ed, 4 for one that is
        # not settled; ``n``: an operand's size, the result's where none broadcasts.
        backend = _backends._single
        elements = False
        if backend is None:
            levels = 0
            for x in ins:
                if type(x) is ndarray:
                    levels |= x._buf.settled or 4
                    n = x._size
                    if x._buf.pending is not None and not x._shape:
                        elements = True  # (a pending element read: see below)
            if levels == SMALL or levels < 4 and ((n if same_shapes else _prod(shape))
                                                   * dt.itemsize) >> 3 > _placement.UNPRICED_ABOVE:
                backend = _backends.for_settled
            else:
                backend = _backends.for_operands(ins, _prod(shape) * dt.itemsize)
        else:
            for x in ins:
                if type(x) is ndarray and x._buf.pending is not None and not x._shape:
                    elements = True
        # A line (one dimension, two elements or more) is first looked up for any length
        # (LINE for its length): a launcher with ``any_length`` serves them all.
        line = len(shape) == 1 and shape[0] > 1
        if same_shapes:
            lkey = (key, LINE if line else shape, backend,
                    *[x._strides for x in ins if type(x) is ndarray])
        else:
            lkey = (key, LINE if line else shape, backend,
                    *[(LINE if line and x._shape == shape else x._shape, x._strides)
                      for x in ins if type(x) is ndarray])
        entry = self._layouts.get(lkey)
        if entry is None and line:  # (a launcher of this length alone)
            lkey = (key, shape, *lkey[2:])
            entry = self._layouts.get(lkey)
        if entry is None:
            entry = self._layout_entry(lkey, args, shape, dt, op, backend)
        if entry is False:
            return None
        launch, dt, strides, c_contig, f_contig, n, now = entry
        if line:
            n = shape[0]
        if n >= _fusion.MIN_ELEMENTS:  # fusion may defer it: memory is taken when computed
            backend, now = None, launch
        out = fresh_array(shape, strides, dt, n, c_contig, f_contig, backend)
        if elements:
            args = _element_sources(args)
        now(args, (out,))  # (a broadcast operand's pointer is its own: no view needed)
        return out

    def _layout_entry(self, lkey, args, shape, dt, op, backend):
        """``_layouts[lkey]``: the backend's launcher for this layout of operands (arrays
        broadcast to ``shape``) and the result's strides and flags (C order, or F when
        every array operand is F-contiguous and not C, as the general code decides), or
        False where the backend has no such launcher or the result is empty."""
        arrays = [x for x in args if type(x) is ndarray]
        f_order = all(x._f_contig and not x._c_contig for x in arrays)
        res = empty_array(shape, dt, "F" if f_order else "C")
        entry = False
        if res._size:
            views = [broadcast_view(x, shape) if type(x) is ndarray else x for x in args]
            launch = backend.layout_launcher(op, views, (res,))
            if launch is not None:
                entry = (launch, dt, res._strides, res._c_contig, res._f_contig, res._size,
                         getattr(launch, "now", launch))
                if getattr(launch, "any_length", False):
                    lkey = (lkey[0], LINE, *lkey[2:])
        if len(self._layouts) >= 1024:
            self._layouts.clear()
        self._layouts[lkey] = entry
        return entry

    def _plan(self, key):
        """``_plans[key]``: what ``_call`` derives from the operand kinds alone."""
        in_types = tuple(_BOOL if t is bool else t[1] if type(t) is tuple else t for t in key)
        try:
            loop = self._np.resolve_dtypes(in_types + (None,) * self.nout, casting="same_kind")
        except Exception:
            self._plans[key] = False
            return False
        loop = tuple(normalize(d) for d in loop)
        # Python scalars whose conversion to the loop dtype cannot overflow to inf (so
        # needs no errstate); OverflowError still goes through _scalar_operand.  A NumPy
        # scalar is strong: its loop dtype holds it (NumPy's own cast of the value).
        scalar_convs = tuple(
            None if isinstance(t, np.dtype) else loop[i].type if type(t) is tuple
            or loop[i].char in _PLAIN_CONVERSIONS[t] else None for i, t in enumerate(key))
        plan = (loop, self._op(tuple(d.char for d in loop)), scalar_convs,
                self.__name__ == "power" and loop[1].kind == "i")
        self._plans[key] = plan
        return plan

    def _call(self, args, kwargs):
        if not kwargs:
            result = self._plain_call(args)
            if result is not None:
                return result
        if _foreign_override(args, kwargs.get("out")):
            # NEP 13: an operand of another array type (a Dask array, say) that overrides
            # ufuncs gets the call, through NumPy's ufunc, as np.sin(x) would give it.
            return self._np(*args, **kwargs)
        out = kwargs.pop("out", None)
        where = kwargs.pop("where", True)
        casting = kwargs.pop("casting", "same_kind")
        dtype = kwargs.pop("dtype", None)
        signature = kwargs.pop("signature", None)
        order = kwargs.pop("order", "K")
        kwargs.pop("subok", None)
        if kwargs:
            raise TypeError(f"{self.__name__}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if len(args) > self.nargs:
            raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nargs} positional "
                            f"arguments but {len(args)} were given")
        order = _ufunc_order(order)
        if len(args) > self.nin:
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            out, args = args[self.nin:], args[: self.nin]
            if len(out) == 1:
                out = out[0]  # numpy.add(a, b, c) returns c itself
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nargs} positional "
                            f"arguments but {len(args)} were given")
        outs = _normalize_out(out, self.nout)
        ins = [_as_operand(x) for x in args]

        in_types = tuple(x.dtype if isinstance(x, ndarray) else resolution_type(x) for x in ins)
        out_types = tuple(o.dtype if o is not None else None for o in outs)
        resolve_kw = {"casting": casting}
        if dtype is not None:
            resolve_kw["signature"] = (None,) * self.nin + (np.dtype(dtype),) * self.nout
        elif signature is not None:
            resolve_kw["signature"] = signature
        loop = self._np.resolve_dtypes(in_types + out_types, **resolve_kw)
        loop = tuple(normalize(d) for d in loop)

        if self.__name__ == "power" and loop[1].kind == "i":
            _check_integer_exponent(ins[1])
        arrays = [x for x in ins if isinstance(x, ndarray)]
        shapes = [x._shape for x in arrays]
        out_shape = np.broadcast_shapes(*shapes) if shapes else ()
        for o in outs:
            if o is not None:
                try:
                    full = np.broadcast_shapes(out_shape, o._shape)
                except ValueError:
                    full = None
                if full != o._shape:
                    raise ValueError(f"non-broadcastable output operand with shape {o._shape} "
                                     f"doesn't match the broadcast shape {out_shape}")
                out_shape = o._shape

        operands = []
        for x, dt in zip(ins, loop):
            if isinstance(x, ndarray):
                operands.append(broadcast_view(x, out_shape))
            else:
                operands.append(_scalar_operand(self, x, dt, ins))
        if any(v is _HOST for v in operands):
            return self._host_call(args, out, where, casting, dtype)

        mask = None
        if where is not True:
            if isinstance(where, (ndarray, np.ndarray)) and where.dtype != np.bool_:
                raise TypeError(f"Cannot cast array data from {where.dtype!r} to "
                                f"dtype('bool') according to the rule 'safe'")
            mask = broadcast_view(_as_array(where, np.bool_), out_shape)
        order_c = "F" if order == "F" or (order in "KA" and arrays and all(
            a._f_contig and not a._c_contig for a in arrays)) else "C"
        results = []
        for i, o in enumerate(outs):
            dt = loop[self.nin + i]
            results.append(empty_array(out_shape, dt, order_c) if o is None or mask is not None
                           or o.dtype != dt or any(may_overlap(o, a) and not _same_view(o, a)
                                                   for a in arrays) else o)
        if _prod(out_shape):
            backend = _backends.for_arrays(*operands, *results)
            mirrored = [o for r, o in zip(results, outs)  # computed into the caller's out=
                        if r is o and o._buf.will_write(backend.side, o._size * o.dtype.itemsize)]
            backend.elementwise(self._op(tuple(d.char for d in loop)), operands, results)
            for o in mirrored:  # small writes into data on both sides update both
                _backends.mirror(o, backend.side)
        final = []
        for r, o in zip(results, outs):
            if o is None:
                final.append(r)
            elif r is not o:
                if mask is None:
                    assign(o, r)
                else:
                    masked_assign(o, r, mask)
                final.append(o)
            else:  # computed into the caller's out= array (its Buffer was told above)
                final.append(o)
        if out is not None and isinstance(out, tuple):
            return tuple(final)
        return final[0] if self.nout == 1 else tuple(final)

    def _host_call(self, args, out, where, casting, dtype):
        """NumPy computes it on the host (value-dependent cases such as out-of-range Python
        ints in comparisons); results come back to the device."""
        kw = {"casting": casting}
        if out is not None:
            kw["out"] = out
        if where is not True:
            kw["where"] = where
        if dtype is not None:
            kw["dtype"] = dtype
        return call_on_host(self._np, args, kw)

    # methods -----------------------------------------------------------------------------
    def outer(self, a, b, **kwargs):
        a, b = _as_operand(a), _as_operand(b)
        a = a if isinstance(a, ndarray) else _as_array(a)
        b = b if isinstance(b, ndarray) else _as_array(b)
        a2 = a.reshape(a._shape + (1,) * b.ndim)
        return self(a2, b, **kwargs)

    def resolve_dtypes(self, *args, **kwargs):
        return self._np.resolve_dtypes(*args, **kwargs)

    def _host_method(self, method, *args, **kwargs):
        return call_on_host(getattr(self._np, method), args, kwargs)

    # reduce, accumulate and reduceat are installed by _api/reductions.py, which implements
    # them on top of the ufuncs.

    def at(self, a, indices, b=None, /):
        """Unbuffered ``a[indices] = self(a[indices], b)``: repeated indices accumulate."""
        if not isinstance(a, ndarray):
            return self._host_method("at", a, indices, *(() if b is None else (b,)))
        if self.nout != 1 or self.nin not in (1, 2):
            raise ValueError("Only unary and binary ufuncs supported at this time")
        if (b is None) != (self.nin == 1):
            raise ValueError("second operand needed for ufunc" if b is None else
                             "second operand provided when ufunc is unary")
        if not a._c_contig:  # work on a contiguous copy, then write it back
            tmp = a.copy()
            self.at(tmp, indices, b)
            a[...] = tmp
            return None
        target = _as_array(arange(a._size, dtype=np.int64).reshape(a._shape)[indices])
        positions = target.copy().reshape(-1)  # flat element indices, NumPy's index rules
        types = (a.dtype,) if self.nin == 1 else (a.dtype, (
            b.dtype if isinstance(b, (ndarray, np.generic)) else resolution_type(b)))
        loop = tuple(normalize(d) for d in self._np.resolve_dtypes(
            types + (a.dtype,), casting="unsafe"))
        values = None
        if self.nin == 2:
            if isinstance(b, ndarray) or not isinstance(b, (*_PY_SCALARS, np.generic)):
                bv = _as_array(b)
                values = broadcast_view(bv, target._shape).astype(loop[1]).reshape(-1)
                if values._size != positions._size:
                    raise ValueError("array is not broadcastable to correct shape")
            else:
                values = loop[1].type(b)
        op = self._op(tuple(d.char for d in loop))
        if positions._size:
            _backends.for_writing(a, positions, values).ufunc_at(op, a, positions, values)
        return None


_HOST = object()  # marks an operand only NumPy can handle (value-dependent promotion)


def _check_integer_exponent(b):
    """NumPy refuses negative integer exponents (a sync point when b is an array)."""
    if isinstance(b, ndarray):
        negative = b._size and bool(uf.less(b, 0)._host().any())
    else:
        negative = b < 0
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


def _broadcast_error(operands):
    """NumPy's message for operands (arrays and scalars) that do not broadcast."""
    shapes = [x._shape if type(x) is ndarray else () for x in operands]
    text = " ".join(f"({s[0]},)" if len(s) == 1 else "(" + ",".join(map(str, s)) + ")"
                    for s in shapes)
    return f"operands could not be broadcast together with shapes {text} "


def _same_view(a, b):
    return (a._buf is b._buf and a._offset == b._offset and a._shape == b._shape
            and a._strides == b._strides and a.dtype == b.dtype)


def _ufunc_order(order):
    """The ``order=`` of a ufunc call, checked as NumPy checks it (any case; None is K)."""
    if order is None:
        return "K"
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    return order_code(order)


def _scalar_operand(uf, x, dt, ins):
    if dt.kind == "b" and type(x) is int and not -2**63 <= x < 2**63:
        # NumPy reads a Python int into a C long before a boolean loop (logical_and...)
        raise OverflowError("Python int too large to convert to C long")
    try:
        with np.errstate(over="ignore"):
            return dt.type(x)
    except OverflowError:
        if uf._row.comparison:
            return _HOST
        raise


def _as_operand(x):
    """An ndarray, or a scalar passed by value (Python or NumPy scalar)."""
    if isinstance(x, ndarray):
        return x
    if isinstance(x, np.generic):
        if x.dtype.kind not in "biufc":
            raise TypeError(f"cupynum does not support dtype {x.dtype!r}")
        return x
    if type(x) in _PY_SCALARS or isinstance(x, _PY_SCALARS):
        return x
    return _as_array(x)


def _as_array(x, dtype=None):
    if isinstance(x, ndarray):
        return x if dtype is None else x.astype(dtype, copy=False)
    return asarray(x, dtype=dtype)


def _foreign_override(args, out) -> bool:
    """Whether an operand (or an ``out``) is of an array type other than ours and NumPy's
    that overrides ufuncs (``__array_ufunc__`` not None)."""
    outs = out if isinstance(out, tuple) else (out,)
    for x in (*args, *outs):
        if (x is not None and not isinstance(x, (ndarray, np.ndarray, np.generic))
                and getattr(type(x), "__array_ufunc__", None) is not None):
            return True
    return False


def _normalize_out(out, nout):
    if out is None:
        return (None,) * nout
    if not isinstance(out, tuple):
        out = (out,)
    if len(out) != nout:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    for o in out:
        if o is not None and not isinstance(o, ndarray):
            raise TypeError("return arrays must be of ArrayType (a cupynum ndarray)")
    return out


def masked_assign(dst, src, mask):
    """dst[mask] = src elementwise (all three of dst's shape): a select kernel."""
    op = ElementwiseOp("where", "where_", (np.bool_().dtype.char, dst.dtype.char,
                                           dst.dtype.char, dst.dtype.char), 3)
    src = src if src.dtype == dst.dtype else src.astype(dst.dtype)
    old = dst.copy() if may_overlap(dst, src) or may_overlap(dst, mask) else dst
    _backends.for_writing(dst, mask, src, old).elementwise(op, (mask, src, old), (dst,))


def _build():
    """ufunc objects for every table row, under their NumPy names and aliases."""
    out = {}
    for row in TABLE:
        uf = ufunc(row)
        for name in (row.name,) + tuple(row.aliases):
            out[name] = uf
    return out


UFUNCS = _build()
# The one way the frontend reaches a ufunc: ``uf.add(a, b)``, ``uf.isnan(x)`` (UFUNCS is the
# same mapping as a dict, for lookups by a name held in a variable).
uf = SimpleNamespace(**UFUNCS)


LINE = "line"  # ``_layouts``' shape for one-dimensional results of any length (see _layout_call)


def _element_sources(args) -> list:
    """``args`` with each pending element read (``x = w[i, j]`` on device data) replaced by
    the element in its source, as the hot path reads one (``elements.sources``): the op is
    launched or deferred now, before any write to the source, which computes the read."""
    return [v if (v := _backends.elements.source_view(x)) is not None else x for x in args]


# ndarray operators --------------------------------------------------------------------------
_OPERAND_TYPES = frozenset({ndarray, int, float, complex, bool})


def _defers(other) -> bool:
    """Whether ``other`` asks Python to try its reflected operator instead (NumPy's rule)."""
    return getattr(type(other), "__array_ufunc__", False) is None or (
        not isinstance(other, (ndarray, np.ndarray, np.generic, list, tuple, int, float, complex))
        and hasattr(other, "__array_ufunc__") is False and hasattr(other, "__array_priority__")
        and getattr(other, "__array_priority__", 0) > ndarray.__array_priority__)


def _binary(uf):
    binary = uf._binary
    general = uf._binary_fallback  # the keyword-free general path, then _call

    def forward_fallback(self, other):
        if type(other) in _OPERAND_TYPES or not _defers(other):
            return general(self, other)
        return NotImplemented

    forward = hot_binary(uf, forward_fallback)  # the hot path is the operator itself

    def reflected(self, other):
        if type(other) in _OPERAND_TYPES or not _defers(other):
            return binary(other, self)
        return NotImplemented

    def inplace_general(self, other):
        if type(other) in _OPERAND_TYPES or not _defers(other):
            return uf(self, other, out=self)
        return NotImplemented

    return forward, reflected, hot_inplace(uf, inplace_general)


def _unary(uf):
    return uf._unary  # a plain function: the operator's frame is the hot path's


def _install_operators():
    ops = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
           "lshift": "left_shift", "rshift": "right_shift", "and": "bitwise_and",
           "or": "bitwise_or", "xor": "bitwise_xor"}
    for short, name in ops.items():
        forward, reflected, inplace = _binary(UFUNCS[name])
        setattr(ndarray, f"__{short}__", forward)
        setattr(ndarray, f"__r{short}__", reflected)
        setattr(ndarray, f"__i{short}__", inplace)
    dm_forward, dm_reflected, _ = _binary(uf.divmod)
    ndarray.__divmod__, ndarray.__rdivmod__ = dm_forward, dm_reflected
    for short, name in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                        "gt": "greater", "ge": "greater_equal"}.items():
        setattr(ndarray, f"__{short}__", _binary(UFUNCS[name])[0])
    for short, name in {"neg": "negative", "pos": "positive", "abs": "absolute",
                        "invert": "invert"}.items():
        setattr(ndarray, f"__{short}__", _unary(UFUNCS[name]))
    ndarray.__hash__ = None


_install_operators()
