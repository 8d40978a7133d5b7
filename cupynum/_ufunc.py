"""The ufunc class, built from the op table.

Type resolution is NumPy's own (``numpy.ufunc.resolve_dtypes``, NEP 50 weak Python
scalars), cached per (dtypes, scalar kinds), so its answers and errors are NumPy's.

The hot path (DESIGN.md principle 6): operands that are C-contiguous arrays of one shape
and Python scalars, no keywords -> one dict lookup, one allocation, one launch through a
launcher the backend prepared for that key.
"""
from __future__ import annotations

import numpy as np

from . import _backends
from ._array import (_c_strides, _contiguity, _make, assign, broadcast_view, empty_array,
                     from_host, may_overlap, ndarray)
from ._backends.base import ElementwiseOp
from ._dtypes import normalize
from ._ops import type_loops

_PY_SCALARS = (int, float, complex, bool)
_SCALAR_TYPES = frozenset(_PY_SCALARS)
_BOOL = np.dtype(np.bool_)  # a Python bool is not weak in NEP 50: it resolves as numpy.bool
_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"})


def _launch_new(entry, args, x):
    """Allocate the outputs (C-contiguous, x's shape) and launch the prepared kernel."""
    out_dtypes, launch, _ = entry
    backend = _backends._backend
    outs = []
    for dt in out_dtypes:
        out = object.__new__(ndarray)
        out._buf = backend.alloc(x._size * dt.itemsize)
        out._offset = 0
        out._shape = x._shape
        out._strides = x._strides if dt.itemsize == x.dtype.itemsize else _c_strides(
            x._shape, dt.itemsize)
        out.dtype = dt
        out._size = x._size
        out._c_contig = True
        out._f_contig = x._f_contig
        out._base = None
        outs.append(out)
    if x._size:
        launch(args, outs, x._size)
    return outs[0] if len(outs) == 1 else tuple(outs)


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
        self._fast = {}  # hot-path cache: key -> (out dtypes, launcher, scalar converters)
        self._ops = {}  # loop chars -> ElementwiseOp

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    # the hot path ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self.nin:
            return self._call(args, kwargs)
        if self.nin == 2:
            return self._binary(args[0], args[1])
        if self.nin == 1:
            x = args[0]
            if type(x) is ndarray and x._c_contig:
                entry = self._fast.get((x.dtype, 0))
                if entry is None:
                    entry = self._fast_entry((x.dtype, 0))
                if entry is not False:
                    return _launch_new(entry, args, x)
        return self._call(args, kwargs)

    def _binary(self, a, b):
        """The hot path of a two-input call (operators come here directly): one key, one
        dict lookup, one allocation, one prepared launch.  Written out flat on purpose."""
        if type(a) is ndarray:
            if not a._c_contig:
                return self._call((a, b), {})
            tb = type(b)
            if tb is ndarray:
                if not b._c_contig or b._shape != a._shape:
                    return self._call((a, b), {})
                key = (a.dtype, b.dtype, 0)
            elif tb in _SCALAR_TYPES:
                key = (a.dtype, tb, 0)
            else:
                return self._call((a, b), {})
            x = a
        elif type(b) is ndarray and type(a) in _SCALAR_TYPES and b._c_contig:
            key = (type(a), b.dtype, 1)
            x = b
        else:
            return self._call((a, b), {})
        entry = self._fast.get(key)
        if entry is None:
            entry = self._fast_entry(key)
        if entry is False:
            return self._call((a, b), {})
        conv = entry[2]
        if conv is not None:  # a Python scalar operand becomes a scalar of the loop dtype
            c0, c1 = conv
            if c0 is not None:
                a = c0(a)
            if c1 is not None:
                b = c1(b)
        out_dtypes = entry[0]
        if len(out_dtypes) != 1:
            return _launch_new(entry, (a, b), x)
        dt = out_dtypes[0]  # one output: allocated inline (a call here costs ~0.1 us)
        out = object.__new__(ndarray)
        out._buf = _backends._backend.alloc(x._size * dt.itemsize)
        out._offset = 0
        out._shape = x._shape
        out._strides = x._strides if dt.itemsize == x.dtype.itemsize else _c_strides(
            x._shape, dt.itemsize)
        out.dtype = dt
        out._size = x._size
        out._c_contig = True
        out._f_contig = x._f_contig
        out._base = None
        if x._size:
            entry[1]((a, b), (out,), x._size)
        return out

    def _fast_entry(self, key):
        """Resolve a hot-path key once; False marks keys that must take the general path."""
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
        launch = _backends.get().contiguous_launcher(op, operand_dtypes)
        conv = None
        if any(d is None for d in operand_dtypes):
            conv = tuple(normalize(loop[i]).type if d is None else None
                         for i, d in enumerate(operand_dtypes))
        if self.__name__ in _COMPARISONS and conv is not None:
            entry = False  # out-of-range Python ints compare by value: general path
        elif self.__name__ == "power" and chars[1] in "bhil":
            entry = False  # negative integer exponents must raise: general path checks
        else:
            entry = (tuple(normalize(d) for d in loop[self.nin:]), launch, conv)
        self._fast[key] = entry
        return entry

    def _op(self, chars):
        op = self._ops.get(chars)
        if op is None:
            op = self._ops[chars] = ElementwiseOp(self.__name__, self._row.functor, chars,
                                                  self.nin)
        return op

    # the general path --------------------------------------------------------------------
    def _call(self, args, kwargs):
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

        in_types = tuple(x.dtype if isinstance(x, ndarray) else _scalar_type(x) for x in ins)
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
            _backends.get().elementwise(self._op(tuple(d.char for d in loop)), operands, results)
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
            else:
                final.append(o)
        if out is not None and isinstance(out, tuple):
            return tuple(final)
        return final[0] if self.nout == 1 else tuple(final)

    def _host_call(self, args, out, where, casting, dtype):
        """NumPy computes it on the host (value-dependent cases such as out-of-range Python
        ints in comparisons); results come back to the device."""
        from ._fallback import call_on_host

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
        from ._fallback import call_on_host

        return call_on_host(getattr(self._np, method), args, kwargs)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False,
               initial=np._NoValue, where=True):
        if self.nin != 2 or self.nout != 1:
            return self._host_method("reduce", array, axis=axis, dtype=dtype, out=out,
                                     keepdims=keepdims, initial=initial, where=where)
        from ._api.reductions import ufunc_reduce

        return ufunc_reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        if self.nin != 2 or self.nout != 1:
            return self._host_method("accumulate", array, axis=axis, dtype=dtype, out=out)
        from ._api.reductions import ufunc_accumulate

        return ufunc_accumulate(self, array, axis, dtype, out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        if self.nin != 2 or self.nout != 1:
            return self._host_method("reduceat", array, indices, axis=axis, dtype=dtype,
                                     out=out)
        from ._api.reductions import ufunc_reduceat

        return ufunc_reduceat(self, array, indices, axis, dtype, out)

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
        from ._api.creation import arange

        target = _as_array(arange(a._size, dtype=np.int64).reshape(a._shape)[indices])
        positions = target.copy().reshape(-1)  # flat element indices, NumPy's index rules
        types = (a.dtype,) if self.nin == 1 else (a.dtype, (
            b.dtype if isinstance(b, (ndarray, np.generic)) else _scalar_type(b)))
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
            _backends.get().ufunc_at(op, self._row, a, positions, values)
        return None


_HOST = object()  # marks an operand only NumPy can handle (value-dependent promotion)


def _check_integer_exponent(b):
    """NumPy refuses negative integer exponents (a sync point when b is an array)."""
    if isinstance(b, ndarray):
        negative = b._size and bool(UFUNCS["less"](b, 0)._host().any())
    else:
        negative = b < 0
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _same_view(a, b):
    return (a._buf is b._buf and a._offset == b._offset and a._shape == b._shape
            and a._strides == b._strides and a.dtype == b.dtype)


def _scalar_type(x):
    """What NumPy's resolution sees for a non-array operand: Python int, float and complex
    are weak (their type stands for them); bools and NumPy scalars have a dtype."""
    if isinstance(x, np.generic):
        return normalize(x.dtype)
    if isinstance(x, bool):
        return _BOOL
    for t in (int, float, complex):
        if isinstance(x, t):
            return t
    raise TypeError(f"unsupported operand type {type(x).__name__}")


def _scalar_operand(uf, x, dt, ins):
    try:
        with np.errstate(over="ignore"):
            return dt.type(x)
    except OverflowError:
        if uf.__name__ in _COMPARISONS:
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
    from ._api.creation import asarray

    return asarray(x, dtype=dtype)


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
    _backends.get().elementwise(op, (mask, src, old), (dst,))


def _build():
    """ufunc objects for every table row, under their NumPy names and aliases."""
    from ._ops import UFUNCS

    out = {}
    for row in UFUNCS:
        uf = ufunc(row)
        for name in (row.name,) + tuple(row.aliases):
            out[name] = uf
    return out


UFUNCS = _build()


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

    def forward(self, other):
        if type(other) in _OPERAND_TYPES or not _defers(other):
            return binary(self, other)
        return NotImplemented

    def reflected(self, other):
        if type(other) in _OPERAND_TYPES or not _defers(other):
            return binary(other, self)
        return NotImplemented

    def inplace(self, other):
        if type(other) in _OPERAND_TYPES or not _defers(other):
            return uf(self, other, out=self)
        return NotImplemented

    return forward, reflected, inplace


def _unary(uf):
    def op(self):
        return uf(self)

    return op


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
    dm_forward, dm_reflected, _ = _binary(UFUNCS["divmod"])
    ndarray.__divmod__, ndarray.__rdivmod__ = dm_forward, dm_reflected
    for short, name in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                        "gt": "greater", "ge": "greater_equal"}.items():
        setattr(ndarray, f"__{short}__", _binary(UFUNCS[name])[0])
    for short, name in {"neg": "negative", "pos": "positive", "abs": "absolute",
                        "invert": "invert"}.items():
        setattr(ndarray, f"__{short}__", _unary(UFUNCS[name]))
    ndarray.__hash__ = None


def _matmul_ops():
    def matmul(self, other):
        import cupynum

        return cupynum.matmul(self, other)

    def rmatmul(self, other):
        import cupynum

        return cupynum.matmul(other, self)

    def imatmul(self, other):
        import cupynum

        return cupynum.matmul(self, other, out=self)

    ndarray.__matmul__, ndarray.__rmatmul__, ndarray.__imatmul__ = matmul, rmatmul, imatmul


_install_operators()
_matmul_ops()
