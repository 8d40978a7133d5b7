"""Matrix and vector products (NumPy's "Linear algebra: matrix and vector products").

Everything reduces to one primitive, ``_matmul_nd``: stacked ``(..., m, k) @ (..., k, n)``
with broadcast batches, handed to the backend's ``matmul`` (on CUDA: cuBLAS strided-batched
GEMM, or our kernel for integer and bool types and batches of small float matrices).  NumPy resolves dtypes
(``numpy.matmul.resolve_dtypes``); shapes are checked here with NumPy's exception types.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from .. import _backends
from .._array import _make, broadcast_view, empty_array, may_overlap, ndarray
from .._dtypes import normalize
from .._fallback import fallback_for
from .._host_path import host_view, on_host, product_operator, wrap_host
from .._indexing import normalize_axis
from .._shapes import _prod
from .._ufunc import uf
from . import creation, manipulation, reductions

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "trace",
           "matvec", "vecmat", "vecdot", "cross"]


def _arr(x):
    return x if isinstance(x, ndarray) else creation.asarray(x)


def _matmul_nd(a, b, dtype):
    """a (..., m, k) @ b (..., k, n), both ndim >= 2, computed in ``dtype``: a new
    C-contiguous array of the broadcast batch shape."""
    batch = np.broadcast_shapes(a._shape[:-2], b._shape[:-2])
    m, k, n = a._shape[-2], a._shape[-1], b._shape[-1]
    out = empty_array(batch + (m, n), dtype)
    _matmul_into(a, b, out)
    return out


def _matmul_into(a, b, out):
    dtype = out.dtype
    batch = out._shape[:-2]
    m, k, n = a._shape[-2], a._shape[-1], b._shape[-1]
    a = a.astype(dtype, copy=False)
    b = b.astype(dtype, copy=False)
    a = broadcast_view(a, batch + (m, k))
    b = broadcast_view(b, batch + (k, n))
    if out._size:
        _backends.for_writing(out, a, b).matmul(a, b, out)


_BLAS_CHARS = frozenset("fdFD")


def _plain_matmul(a, b):
    """``a @ b`` for arrays of one float or complex dtype whose inner sizes match, 1-D or
    2-D (matrix-vector products and dots in a loop) or stacks of one batch shape: NumPy's
    resolution is then the operands' dtype and nothing broadcasts, so the views go straight
    to the backend; None otherwise."""
    na, nb = len(a._shape), len(b._shape)
    if not (na and nb) or a.dtype != b.dtype or a.dtype.char not in _BLAS_CHARS:
        return None
    if na > 2 or nb > 2:
        return _same_batch_matmul(a, b)
    k = a._shape[-1]
    if k != b._shape[0]:
        return None  # the general path raises NumPy's error
    dt = a.dtype
    va = a if na == 2 else _make(a._buf, a._offset, (1, k), (a._strides[0] * k,
                                                          a._strides[0]), dt, a._root())
    vb = b if nb == 2 else _make(b._buf, b._offset, (k, 1), (b._strides[0],
                                                          b._strides[0]), dt, b._root())
    m, n = va._shape[0], vb._shape[1]
    if m and n:  # (allocated where the product runs, as for_arrays(va, vb, res) chooses)
        backend = _backends.for_product(m * n * dt.itemsize, va, vb)
        res = empty_array((m, n), dt, backend=backend)
        backend.matmul(va, vb, res)
    else:
        res = empty_array((m, n), dt)
    if na == 2 and nb == 2:
        return res
    shape = (m,) if na == 2 else ((n,) if nb == 2 else ())
    return _make(res._buf, 0, shape, (dt.itemsize,) if shape else (), dt, None)


def _same_batch_matmul(a, b):
    """``a @ b`` for stacks of matrices with the same batch shape (a batch of small
    products in a loop is all host time), or None."""
    sa, sb = a._shape, b._shape
    if len(sa) != len(sb) or sa[:-2] != sb[:-2] or sa[-1] != sb[-2]:
        return None
    shape = sa[:-1] + sb[-1:]
    dt = a.dtype
    nbytes = _prod(shape) * dt.itemsize
    if not nbytes:
        return empty_array(shape, dt)
    backend = _backends.for_product(nbytes, a, b)
    # (allocated where the product runs: no placeholder to resolve at its first read)
    res = empty_array(shape, dt, backend=backend)
    backend.matmul(a, b, res)
    return res


def _matrix_axes(x1, x2, axes):
    """Whether ``axes`` (the gufunc argument) names two core axes of each of two arrays of
    ndim >= 2 and of the output: the case done natively, by moving them last."""
    return (isinstance(x1, ndarray) and isinstance(x2, ndarray) and x1.ndim >= 2
            and x2.ndim >= 2 and isinstance(axes, (list, tuple)) and len(axes) == 3
            and all(isinstance(ax, (list, tuple)) and len(ax) == 2 for ax in axes))


def _core_last(x, pair):
    """x with the two axes of ``pair`` moved last, in that order (a view), and the axes'
    permutation."""
    core = [normalize_axis(ax, x.ndim) for ax in pair]
    if core[0] == core[1]:
        raise ValueError("repeated axis in matmul axes")
    perm = [ax for ax in range(x.ndim) if ax not in core] + core
    return x.transpose(perm), perm


def _matmul_moved(x1, x2, axes, out, **kw):
    a, _ = _core_last(x1, axes[0])
    b, _ = _core_last(x2, axes[1])
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        out_view, _ = _core_last(out, axes[2])
        matmul(a, b, out=out_view, **kw)
        return out
    res = matmul(a, b, **kw)
    _, perm = _core_last(res, axes[2])
    inverse = [0] * res.ndim
    for pos, ax in enumerate(perm):
        inverse[ax] = pos
    return res.transpose(inverse)


def matmul(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    if (type(x1) is ndarray and type(x2) is ndarray and on_host(x1) and on_host(x2)
            and out is None and dtype is None
            and casting == "same_kind" and axes is None and axis is None and signature is None):
        return wrap_host(np.matmul(host_view(x1), host_view(x2)))  # the host path
    if (type(x1) is ndarray and type(x2) is ndarray and out is None and dtype is None
            and casting == "same_kind" and axes is None and axis is None
            and signature is None):
        res = _plain_matmul(x1, x2)
        if res is not None:
            return res
    if axes is not None and axis is None and signature is None and _matrix_axes(x1, x2, axes):
        return _matmul_moved(x1, x2, axes, out, casting=casting, dtype=dtype)
    if axes is not None or axis is not None or signature is not None:
        # Only what the caller gave: NumPy refuses axes= next to an explicit axis=None.
        given = {k: v for k, v in (("axes", axes), ("axis", axis), ("signature", signature))
                 if v is not None}
        return fallback_for(np.matmul, "numpy.matmul")(
            x1, x2, out=out, casting=casting, order=order, dtype=dtype, **given)
    a, b = _arr(x1), _arr(x2)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions "
                             "(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
                             "requires 1)")
    loop = np.matmul.resolve_dtypes((a.dtype, b.dtype, None if dtype is None else
                                     np.dtype(dtype)), casting=casting)
    res_dt = normalize(loop[2])
    va = a[None, :] if a.ndim == 1 else a
    vb = b[:, None] if b.ndim == 1 else b
    if va._shape[-1] != vb._shape[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {vb._shape[-2]} is different from "
            f"{va._shape[-1]})")
    try:
        batch = np.broadcast_shapes(va._shape[:-2], vb._shape[:-2])
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and {b.shape}") from None
    full = batch + (va._shape[-2], vb._shape[-1])
    shape = batch + ((va._shape[-2],) if a.ndim > 1 else ()) + (
        (vb._shape[-1],) if b.ndim > 1 else ())
    if isinstance(out, tuple):
        out = out[0] if len(out) == 1 else out
    if out is None:
        res = empty_array(full, res_dt)
        _matmul_into(va, vb, res)
        return res.reshape(shape) if full != shape else res
    if not isinstance(out, ndarray):
        raise TypeError("return arrays must be of ArrayType")
    if out._shape != shape:
        raise ValueError(f"matmul: Output operand 0 has a mismatch in its core dimension, "
                         f"expected shape {shape}, got {out._shape}")
    if not np.can_cast(res_dt, out.dtype, casting=casting):
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {res_dt!r} to {out.dtype!r} "
                        f"with casting rule {casting!r}")
    if out.dtype == res_dt and out._c_contig and not may_overlap(out, a) and not \
            may_overlap(out, b):
        _matmul_into(va, vb, out.reshape(full))
        return out
    res = empty_array(full, res_dt)
    _matmul_into(va, vb, res)
    if out._size:
        _backends.for_writing(out, res).copy(res.reshape(shape), out)
    return out


def _result_dtype(*arrays):
    return normalize(np.result_type(*[x.dtype for x in arrays]))


def dot(a, b, out=None):
    if (type(a) is ndarray and type(b) is ndarray and out is None and on_host(a)
            and on_host(b)):
        return wrap_host(np.dot(host_view(a), host_view(b)))  # the host path
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return uf.multiply(a, b, out=out)
    if b.ndim <= 2:
        if a._shape[-1] != b._shape[0]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: "
                             f"{a._shape[-1]} (dim {a.ndim - 1}) != {b._shape[0]} (dim 0)")
        res = matmul(a, b, dtype=_result_dtype(a, b))
    else:
        if a._shape[-1] != b._shape[-2]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: "
                             f"{a._shape[-1]} (dim {a.ndim - 1}) != {b._shape[-2]} "
                             f"(dim {b.ndim - 2})")
        res = tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    return _to_out(res, out, strict=True)


def _to_out(res, out, strict=False):
    if out is None:
        return res
    if not isinstance(out, ndarray):
        raise TypeError("out must be a cupynum array")
    if out._shape != res._shape or (strict and (out.dtype != res.dtype or not out._c_contig)):
        raise ValueError("output array is not acceptable (must have the right datatype, "
                         "number of dimensions, and be a C-Array)")
    if out._size:
        _backends.for_writing(out, res).copy(res, out)
    return out


def vdot(a, b, /):
    a, b = _arr(a), _arr(b)
    if a._size != b._size:
        raise ValueError("cannot reshape array: vdot needs arrays of the same size")
    a, b = a.reshape(-1), b.reshape(-1)
    if a.dtype.kind == "c":
        a = uf.conjugate(a)
    return dot(a, b)


def inner(a, b, /):
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return uf.multiply(a, b)
    if a._shape[-1] != b._shape[-1]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a._shape[-1]} "
                         f"(dim {a.ndim - 1}) != {b._shape[-1]} (dim {b.ndim - 1})")
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a, b, out=None):
    a, b = _arr(a).reshape(-1), _arr(b).reshape(-1)
    return uf.multiply(a[:, None], b[None, :], out=out)


def tensordot(a, b, axes=2):
    a, b = _arr(a), _arr(b)
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        axes_a = list(range(-n, 0))  # NumPy's: a negative n contracts nothing
        axes_b = list(range(0, n))
    else:
        axes_a, axes_b = axes
    axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    axes_a = [normalize_axis(x, a.ndim) for x in axes_a]
    axes_b = [normalize_axis(x, b.ndim) for x in axes_b]
    for x, y in zip(axes_a, axes_b):
        if a._shape[x] != b._shape[y]:
            raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = 1
    for x in axes_a:
        k *= a._shape[x]
    m = 1
    for x in free_a:
        m *= a._shape[x]
    n = 1
    for x in free_b:
        n *= b._shape[x]
    a2 = a.transpose(free_a + axes_a).reshape(m, k)
    b2 = b.transpose(axes_b + free_b).reshape(k, n)
    res = _matmul_nd(a2, b2, _result_dtype(a, b))
    return res.reshape(tuple(a._shape[i] for i in free_a) + tuple(b._shape[i] for i in free_b))


def kron(a, b):
    a, b = _arr(a), _arr(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a._shape
    sb = (1,) * (nd - b.ndim) + b._shape
    ia, ib = [], []
    for x, y in zip(sa, sb):
        ia += [x, 1]
        ib += [1, y]
    res = uf.multiply(a.reshape(ia), b.reshape(ib))
    return res.reshape(tuple(x * y for x, y in zip(sa, sb)))


def diagonal_view(a, offset=0, axis1=0, axis2=1):
    """``numpy.diagonal`` as a view (no copy): the diagonal runs along the last axis."""
    a = _arr(a)
    ax1, ax2 = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = a._shape[ax1], a._shape[ax2]
    s1, s2 = a._strides[ax1], a._strides[ax2]
    off = a._offset
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        if length:
            off += offset * s2
    else:
        length = max(0, min(n1 + offset, n2))
        if length:
            off -= offset * s1
    keep = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    return _make(a._buf, off, tuple(a._shape[i] for i in keep) + (length,),
                 tuple(a._strides[i] for i in keep) + (s1 + s2,), a.dtype, a._root())


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = diagonal_view(a, offset, axis1, axis2)
    return reductions.sum(d, axis=-1, dtype=dtype, out=out)


def matvec(x1, x2, /, *, out=None, dtype=None, **kwargs):
    a, b = _arr(x1), _arr(x2)
    if a.ndim < 2 or b.ndim < 1:
        raise ValueError("matvec: operands do not have enough dimensions")
    res = matmul(a, b[..., None], dtype=dtype)[..., 0]
    return _to_out(res, out) if out is not None else res


def vecmat(x1, x2, /, *, out=None, dtype=None, **kwargs):
    a, b = _arr(x1), _arr(x2)
    if a.ndim < 1 or b.ndim < 2:
        raise ValueError("vecmat: operands do not have enough dimensions")
    if a.dtype.kind == "c":
        a = uf.conjugate(a)
    res = matmul(a[..., None, :], b, dtype=dtype)[..., 0, :]
    return _to_out(res, out) if out is not None else res


def vecdot(x1, x2, /, *, axis=-1, out=None, dtype=None, **kwargs):
    a, b = _arr(x1), _arr(x2)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("vecdot: operands do not have enough dimensions")
    a = _moveaxis_last(a, axis)
    b = _moveaxis_last(b, axis)
    if a._shape[-1] != b._shape[-1]:
        raise ValueError(f"vecdot: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b._shape[-1]} is different from {a._shape[-1]})")
    if a.dtype.kind == "c":
        a = uf.conjugate(a)
    res = matmul(a[..., None, :], b[..., :, None], dtype=dtype)[..., 0, 0]
    return _to_out(res, out) if out is not None else res


def _moveaxis_last(a, axis):
    ax = normalize_axis(axis, a.ndim)
    return a.transpose([i for i in range(a.ndim) if i != ax] + [ax])


# --- einsum ----------------------------------------------------------------------------------

def einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """Contractions of two or more operands run as batched matmuls in the order NumPy's
    ``einsum_path`` (greedy) picks; other forms (one operand, repeated indices within an
    operand, size-1 broadcasting of contracted indices) run through NumPy on the host."""
    try:
        res = _einsum_native(operands, dtype)
    except _Unsupported:
        res = None
    if res is None:
        return fallback_for(np.einsum, "numpy.einsum")(
            *operands, out=out, optimize=optimize, dtype=dtype, order=order, casting=casting)
    return _to_out(res, out)


class _Unsupported(Exception):
    pass


def _einsum_native(operands, dtype):
    if not operands or not isinstance(operands[0], str):
        raise _Unsupported
    arrays = [_arr(x) for x in operands[1:]]
    if len(arrays) < 2:
        raise _Unsupported
    try:
        from numpy._core.einsumfunc import _parse_einsum_input
    except ImportError:  # pragma: no cover
        raise _Unsupported from None
    dummies = [np.broadcast_to(np.empty((), x.dtype), x._shape) for x in arrays]
    in_subs, out_sub, _ = _parse_einsum_input((operands[0], *dummies))
    subs = in_subs.split(",")
    sizes = {}
    for s, x in zip(subs, arrays):
        if len(set(s)) != len(s) or len(s) != x.ndim:
            raise _Unsupported
        for c, n in zip(s, x._shape):
            if sizes.setdefault(c, n) != n:
                raise _Unsupported  # broadcasting of size-1 axes: let NumPy decide
    res_dt = normalize(np.result_type(*[x.dtype for x in arrays]) if dtype is None
                       else np.dtype(dtype))
    path, _ = np.einsum_path(in_subs + "->" + out_sub, *dummies, optimize="greedy")
    ops = list(zip(arrays, subs))
    for pair in path[1:]:
        pair = sorted(pair, reverse=True)
        taken = [ops.pop(i) for i in pair]
        rest = "".join(s for _, s in ops) + out_sub
        if len(taken) == 1:
            raise _Unsupported
        (x, sx), (y, sy) = taken[1], taken[0]
        while len(taken) > 2:  # pad: contract the extra ones pairwise
            raise _Unsupported
        ops.append(_contract(x, sx, y, sy, rest, res_dt))
    (x, sx), = ops
    extra = [c for c in sx if c not in out_sub]
    if extra:
        x = reductions.sum(x, axis=tuple(sx.index(c) for c in extra))
        sx = "".join(c for c in sx if c in out_sub)
    return x.transpose([sx.index(c) for c in out_sub]).astype(res_dt, copy=False)


def _contract(x, sx, y, sy, keep, dtype):
    # indices only in one operand and needed nowhere else: sum them out first
    for which in (0, 1):
        a, sa, other = (x, sx, sy) if which == 0 else (y, sy, sx)
        drop = [c for c in sa if c not in other and c not in keep]
        if drop:
            a = reductions.sum(a, axis=tuple(sa.index(c) for c in drop))
            sa = "".join(c for c in sa if c not in drop)
        if which == 0:
            x, sx = a, sa
        else:
            y, sy = a, sa
    batch = [c for c in sx if c in sy and c in keep]
    contr = [c for c in sx if c in sy and c not in keep]
    fx = [c for c in sx if c not in sy]
    fy = [c for c in sy if c not in sx]
    size = dict(zip(sx, x._shape))
    size.update(zip(sy, y._shape))
    prod = lambda cs: int(np.prod([size[c] for c in cs], dtype=np.int64))  # noqa: E731
    bshape = tuple(size[c] for c in batch)
    a = x.transpose([sx.index(c) for c in batch + fx + contr]).reshape(
        bshape + (prod(fx), prod(contr)))
    b = y.transpose([sy.index(c) for c in batch + contr + fy]).reshape(
        bshape + (prod(contr), prod(fy)))
    r = _matmul_nd(a, b, dtype)
    return r.reshape(bshape + tuple(size[c] for c in fx) + tuple(size[c] for c in fy)), \
        "".join(batch + fx + fy)


# --- cross -----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _numpy_cross_takes_2d() -> bool:
    """Whether this NumPy's cross still takes 2-vectors (deprecated in 2.0, refused later)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross([1.0, 0.0], [0.0, 1.0])
        except ValueError:
            return False
    return True


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's algorithm: the vector axes moved last, then one multiply into each component
    of the output and one subtraction of a second product, in NumPy's order (2-vectors
    count as 3-vectors with a zero third component, with NumPy's DeprecationWarning)."""
    import warnings

    from numpy.lib.array_utils import normalize_axis_index
    a, b = _arr(a), _arr(b)

    def numpy_error():  # NumPy's own error for these shapes and axes (this NumPy's wording)
        np.cross(np.broadcast_to(0.0, a.shape), np.broadcast_to(0.0, b.shape), axisa, axisb,
                 axisc, axis)
        raise AssertionError("numpy.cross accepted shapes cupynum refused")  # not reached

    if a.ndim < 1 or b.ndim < 1:
        numpy_error()
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a = manipulation.moveaxis(a, axisa, -1)
    b = manipulation.moveaxis(b, axisb, -1)
    na, nb = a.shape[-1], b.shape[-1]
    if (na != 3 or nb != 3) and (na not in (2, 3) or nb not in (2, 3)
                                 or not _numpy_cross_takes_2d()):
        a, b = manipulation.moveaxis(a, -1, axisa), manipulation.moveaxis(b, -1, axisb)
        numpy_error()
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    if na == 3 or nb == 3:
        shape += (3,)
        axisc = normalize_axis_index(axisc, len(shape), msg_prefix="axisc")
    dtype = np.promote_types(a.dtype, b.dtype)
    out = creation.empty(shape, dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    multiply, negative = uf.multiply, uf.negative
    if na == 2 and nb == 2:
        multiply(a0, b1, out=out)
        out -= a1 * b0
        return out
    c0, c1, c2 = out[..., 0], out[..., 1], out[..., 2]
    if na == 2:  # a2 = 0
        b2 = b[..., 2]
        multiply(a1, b2, out=c0)
        multiply(a0, b2, out=c1)
        negative(c1, out=c1)
        multiply(a0, b1, out=c2)
        c2 -= a1 * b0
    elif nb == 3:
        a2, b2 = a[..., 2], b[..., 2]
        multiply(a1, b2, out=c0)
        tmp = multiply(a2, b1)
        c0 -= tmp
        multiply(a2, b0, out=c1)
        multiply(a0, b2, out=tmp)
        c1 -= tmp
        multiply(a0, b1, out=c2)
        multiply(a1, b0, out=tmp)
        c2 -= tmp
    else:  # b2 = 0
        a2 = a[..., 2]
        multiply(a2, b1, out=c0)
        negative(c0, out=c0)
        multiply(a2, b0, out=c1)
        multiply(a0, b1, out=c2)
        c2 -= a1 * b0
    return manipulation.moveaxis(out, -1, axisc)


# ``a @ b``, ``b @ a`` and ``a @= b``: installed on the ndarray from here, where matmul is;
# ``a @ b`` of host arrays is NumPy's (``_host_path.product_operator``).
_matmul_operator = product_operator(np.matmul, matmul)


def _rmatmul_operator(self, other):
    return matmul(other, self)


def _imatmul_operator(self, other):
    return matmul(self, other, out=self)


ndarray.__matmul__, ndarray.__rmatmul__, ndarray.__imatmul__ = (
    _matmul_operator, _rmatmul_operator, _imatmul_operator)
