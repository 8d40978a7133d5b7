"""NumPy's "Functional programming" routines that take arrays: ``apply_along_axis``,
``apply_over_axes`` and ``piecewise``.  NumPy's own Python algorithms, run with cupynum
arrays, so the user's functions receive device arrays and the results stay on the device."""
from __future__ import annotations

import collections.abc

import numpy as np

from .._array import ndarray
from .._indexing import normalize_axis
from . import creation, manipulation, reductions

__all__ = ["apply_along_axis", "apply_over_axes", "piecewise"]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` once per 1-d slice (a Python loop, as in NumPy), results written into one
    buffer laid out so that each write is contiguous, then transposed into place."""
    arr = creation.asanyarray(arr)
    nd = arr.ndim
    axis = normalize_axis(axis, nd)
    in_dims = list(range(nd))
    inarr_view = manipulation.transpose(arr, in_dims[:axis] + in_dims[axis + 1:] + [axis])
    # a trailing Ellipsis keeps 0-d results arrays (NumPy gh-8642)
    inds = (ind + (Ellipsis,) for ind in np.ndindex(inarr_view.shape[:-1]))
    try:
        ind0 = next(inds)
    except StopIteration:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0") from None
    res = creation.asanyarray(func1d(inarr_view[ind0], *args, **kwargs))
    buff = creation.zeros_like(res, shape=inarr_view.shape[:-1] + res.shape)
    buff_dims = list(range(buff.ndim))
    buff_permute = (buff_dims[0:axis] + buff_dims[buff.ndim - res.ndim:buff.ndim]
                    + buff_dims[axis:buff.ndim - res.ndim])
    buff[ind0] = res
    for ind in inds:
        buff[ind] = creation.asanyarray(func1d(inarr_view[ind], *args, **kwargs))
    return manipulation.transpose(buff, buff_permute)


def apply_over_axes(func, a, axes):
    val = creation.asarray(a)
    N = val.ndim
    if np.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = N + axis
        res = func(val, axis)
        if res.ndim != val.ndim:
            res = manipulation.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


def _first_is_array(condlist):
    """NumPy's test ``isinstance(condlist[0], (list, ndarray))``.  Indexing a cupynum array
    gives a 0-d array where NumPy gives a scalar, so there it is a question of ndim."""
    if isinstance(condlist, ndarray):
        return condlist.ndim > 1
    first = condlist[0]
    if isinstance(first, ndarray):
        return True
    return isinstance(first, (list, np.ndarray))


def piecewise(x, condlist, funclist, *args, **kw):
    """Each function sees the elements its condition selects (a boolean-mask gather, one
    read of the mask's count each) and its values are scattered back, as in NumPy."""
    x = creation.asanyarray(x)
    n2 = len(funclist)
    # undocumented NumPy behaviour: a single condition is promoted to a list of one
    if np.isscalar(condlist) or (not _first_is_array(condlist) and x.ndim != 0):
        condlist = [condlist]
    if isinstance(condlist, (list, tuple)) and condlist and all(
            isinstance(c, ndarray) for c in condlist):
        # device conditions stay on the device (asarray of a list would read each back)
        if len({c.shape for c in condlist}) > 1:
            raise ValueError("setting an array element with a sequence. The requested array "
                             "has an inhomogeneous shape after 1 dimensions.")
        condlist = manipulation.stack([c.astype(bool, copy=False) for c in condlist])
    else:
        condlist = creation.asarray(condlist, dtype=bool)
    n = len(condlist)
    if n == n2 - 1:  # the "otherwise" condition
        condelse = ~reductions.any(condlist, axis=0, keepdims=True)
        condlist = manipulation.concatenate([condlist, condelse], axis=0)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = creation.zeros_like(x)
    for cond, func in zip(condlist, funclist):
        if not isinstance(func, collections.abc.Callable):
            y[cond] = func
        else:
            vals = x[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y
