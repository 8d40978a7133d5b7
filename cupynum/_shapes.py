"""Shape arguments as NumPy reads them: lengths that are integers (never bools), at most
``MAXDIMS`` axes, and ``reshape``'s one unknown (negative) length."""
from __future__ import annotations

import operator
from math import prod as _prod  # (of a shape's Python ints: C's loop, no Python frame)

import numpy as np


MAXDIMS = 64  # NumPy's limit on the number of axes


def dim(n) -> int:
    """One length of a shape argument: an integer, and not a bool (NumPy refuses True)."""
    if type(n) is bool:
        raise TypeError("an integer is required")
    return operator.index(n)


def _shape_tuple(shape):
    if isinstance(shape, (int, np.integer)):
        if type(shape) is bool:
            raise TypeError(f"expected a sequence of integers or a single integer, got "
                            f"'{shape}'")
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"'{type(shape).__name__}' object cannot be interpreted as an integer")
    if any(type(n) is bool for n in dims):
        raise TypeError("an integer is required")
    try:
        shape = tuple(operator.index(n) for n in dims)
    except TypeError:
        raise TypeError(f"'{type(shape).__name__}' object cannot be interpreted as an integer")
    if len(shape) > MAXDIMS:
        raise ValueError(f"maximum supported dimension for an ndarray is currently {MAXDIMS}, "
                         f"found {len(shape)}")
    return shape


def _fill_reshape(shape, size):
    unknown = [i for i, n in enumerate(shape) if n < 0]  # NumPy takes any negative
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = _prod(n for n in shape if n >= 0)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape "
                             f"{_shape_str(shape)}")
        shape = shape[: unknown[0]] + (size // known,) + shape[unknown[0] + 1 :]
    if _prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {_shape_str(shape)}")
    return shape


def _shape_str(shape):
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _contiguity(shape, strides, itemsize):
    """(C-contiguous, F-contiguous) as NumPy defines them (size-1 axes are ignored)."""
    if len(shape) == 2:  # (the loops below, unrolled: stencils and rows are 2-D views)
        n0, n1 = shape
        if not (n0 and n1):
            return True, True
        s0, s1 = strides
        return ((n1 == 1 or s1 == itemsize) and (n0 == 1 or s0 == itemsize * n1),
                (n0 == 1 or s0 == itemsize) and (n1 == 1 or s1 == itemsize * n0))
    c = f = True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True, True
        if n != 1:
            if s != expected:
                c = False
            expected *= n
    expected = itemsize
    for n, s in zip(shape, strides):
        if n != 1:
            if s != expected:
                f = False
            expected *= n
    return c, f


def _c_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _f_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in shape:
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(strides)


_BROADCAST_CACHE_SIZE = 256
_broadcast_cache = {}


def _broadcast_shapes(shapes):
    """``numpy.broadcast_shapes(*shapes)``, remembered for the last few distinct shapes."""
    shape = _broadcast_cache.get(shapes)
    if shape is None:
        shape = np.broadcast_shapes(*shapes)  # raises NumPy's error (not cached)
        if len(_broadcast_cache) >= _BROADCAST_CACHE_SIZE:
            _broadcast_cache.clear()
        _broadcast_cache[shapes] = shape
    return shape


def _reshape_strides(a, new_shape, order):
    """Strides giving ``new_shape`` over a's memory without a copy, or None (NumPy's rule)."""
    itemsize = a.dtype.itemsize
    if a._size == 0 or a._size == 1:
        return _f_strides(new_shape, itemsize) if order == "F" else _c_strides(new_shape, itemsize)
    if order == "C" and a._c_contig:
        return _c_strides(new_shape, itemsize)
    if order == "F" and a._f_contig:
        return _f_strides(new_shape, itemsize)
    old = [(n, s) for n, s in zip(a._shape, a._strides) if n != 1]
    old_shape = [n for n, _ in old]
    old_strides = [s for _, s in old]
    new = list(new_shape)
    if order == "F":
        old_shape, old_strides, new = old_shape[::-1], old_strides[::-1], new[::-1]
    new_strides = [0] * len(new)
    oi = ni = 0
    while oi < len(old_shape) and ni < len(new):
        np_, op_ = new[ni], old_shape[oi]
        nj, oj = ni + 1, oi + 1
        while np_ != op_:
            if np_ < op_:
                np_ *= new[nj]
                nj += 1
            else:
                op_ *= old_shape[oj]
                oj += 1
        for k in range(oi, oj - 1):
            if old_strides[k] != old_shape[k + 1] * old_strides[k + 1]:
                return None
        new_strides[nj - 1] = old_strides[oj - 1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * new[k]
        ni, oi = nj, oj
    last = new_strides[ni - 1] if ni > 0 else itemsize
    for k in range(ni, len(new)):  # trailing size-1 axes
        new_strides[k] = last
    if order == "F":
        new_strides = new_strides[::-1]
    return tuple(new_strides)
