"""The host backend: NumPy over strided views of host byte buffers.

It exists so that every frontend path (views, strides, broadcasting, promotion, indexing,
fallbacks) runs and is tested on machines without a GPU.  An array's data lives in its
Buffer's ``host`` copy, a 1-D uint8 NumPy array; the array's elements are the NumPy view
(that array, offset, shape, strides, dtype) that ``view`` makes.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .base import Backend, ElementwiseOp
from .buffer import Buffer
from .fusion import Leaf

_ALIGN = 64  # host allocations are aligned as device memory is


def view(a) -> np.ndarray:
    """The NumPy view of array ``a``'s elements (no copy): the host backend's one read of an
    array's allocation (its Buffer's host copy, valid whenever it is set)."""
    raw = a._buf.host
    if raw is None and a._size:  # (NumPy would allocate a new array for buffer=None)
        raw = a._buf.on_host()
    return elements(a, raw)


def elements(a, raw) -> np.ndarray:
    """The NumPy view of array ``a``'s elements in the uint8 allocation ``raw``."""
    if not a._size:  # an empty view's offset may lie past its buffer's end
        return np.empty(a._shape, a.dtype)
    return np.ndarray(a._shape, a.dtype, buffer=raw, offset=a._offset, strides=a._strides)


def byte_view(raw: np.ndarray) -> np.ndarray:
    """The flat uint8 view of a host copy: the backend's allocations are one already, the
    host path keeps NumPy's results as they are (C-contiguous, of any dtype: buffer.py)."""
    if raw.dtype == _U8 and raw.ndim == 1:
        return raw
    return raw.reshape(-1).view(_U8)


_U8 = np.dtype(np.uint8)


def _alloc(nbytes: int) -> np.ndarray:
    # Over-allocate and slice so the data is 64-byte aligned, as device memory is.  (The
    # address through a ctypes view of the buffer: ``raw.ctypes.data`` costs ~0.9 us, a
    # third of a small array's creation.)
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = (-_addressof(_c_char.from_buffer(raw))) % _ALIGN
    return raw[start : start + nbytes]


_addressof, _c_char = ctypes.addressof, ctypes.c_char


def _copy_of(host: np.ndarray) -> np.ndarray:
    """A new allocation holding the bytes of ``host``."""
    buf = _alloc(host.nbytes)
    if host.nbytes:
        buf[:] = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
    return buf


class HostBackend(Backend):
    """The contract (base.py) by NumPy.  Every method reads arrays through ``_view`` and
    makes Buffers through ``_wrap``, so the simulated device (simulated.py) runs these same
    methods over its own allocations, held as Buffers' device copies."""

    name = "host"
    host_memory = True
    _view = staticmethod(view)

    @staticmethod
    def _wrap(raw) -> Buffer:
        """A Buffer whose host copy is the new allocation ``raw``."""
        return Buffer(raw)

    @staticmethod
    def _raw(buf: Buffer):
        """The allocation of Buffer ``buf`` that this backend reads (its host copy)."""
        return buf.on_host()

    def alloc(self, nbytes: int) -> Buffer:
        return self._wrap(_alloc(nbytes))

    def from_host(self, host: np.ndarray):
        return self._wrap(_copy_of(host))

    def to_host(self, a, out=None) -> np.ndarray:
        if out is None:
            return np.array(self._view(a), order="C", copy=True)
        out[...] = self._view(a)
        return out

    def write_host(self, a, host: np.ndarray) -> None:
        self._view(a)[...] = host

    def copy_bytes(self, buf, offset: int, nbytes: int) -> Buffer:
        # NumPy's own allocation of a few bytes is aligned for any element type.
        return self._wrap(byte_view(self._raw(buf))[offset : offset + nbytes].copy())

    def copy(self, src, dst) -> None:
        np.copyto(self._view(dst), self._view(src), casting="unsafe")

    def fill(self, dst, value) -> None:
        self._view(dst).fill(value)

    def elementwise(self, op: ElementwiseOp, ins, outs) -> None:
        args = [self._view(x) if hasattr(x, "_buf") else x for x in ins]
        res = [self._view(o) for o in outs]
        _run_ufunc(op, args, res)

    def contiguous_launcher(self, op: ElementwiseOp, operand_dtypes):
        v = self._view

        def launch(ins, outs, n):
            args = [v(x) if hasattr(x, "_buf") else x for x in ins]
            _run_ufunc(op, args, [v(o) for o in outs])

        def new(*args):  # (x0, .., out, n, nbytes): allocate out._buf, then launch
            out, n, nbytes = args[-3:]
            out._buf = self._wrap(_alloc(nbytes))
            if n:
                launch(args[:-3], (out,), n)

        if len(op.loop) == op.nin + 1:  # one output (see the CUDA backend's launch.new)
            launch.new = new
        return launch

    def layout_launcher(self, op: ElementwiseOp, ins, outs):
        """``launch(ins, outs)`` for operands of these layouts (see the CUDA backend's):
        NumPy broadcasts the unbroadcast operands the frontend passes, to the outputs'
        shape of the call (so a one-dimensional layout serves any length, as the CUDA
        backend's: ``any_length``)."""
        v = self._view

        def launch(ins, outs):
            shape = outs[0]._shape
            args = [np.broadcast_to(v(x), shape) if hasattr(x, "_buf") else x for x in ins]
            _run_ufunc(op, args, [v(o) for o in outs])

        launch.any_length = len(outs[0]._shape) == 1 and outs[0]._size > 1
        return launch

    def run_fused(self, nodes, outs) -> None:
        """Each node by NumPy, as ``elementwise`` runs it (so the values are the eager
        path's, bit for bit); intermediates nobody stores are temporaries."""
        v = self._view
        targets = {id(node): leaf for node, leaf in outs}
        ins = [v(x) if hasattr(x, "_buf") else x for x in nodes.ins]
        values = []
        for node, code in zip(nodes, nodes.code):
            target = targets.get(id(node))
            res = np.empty(node._shape, node.dtype) if target is None else v(target)
            _run_ufunc(node.op, [values[t] if t >= 0 else ins[~t] for t in code[1:]], [res])
            values.append(res)

    def run_fused_reduce(self, nodes, method, src, args) -> bool:
        """The root into a temporary (``run_fused``), then the reduction over src's view of
        it: the unfused path's values (the simulated device counts the one launch)."""
        root = nodes[-1]
        tmp = self.alloc(max(root._size * root.dtype.itemsize, 1))
        HostBackend.run_fused(self, nodes, [(root, root.leaf(tmp))])
        view = Leaf(tmp, src._offset, src._shape, src._strides, src.dtype, src._size,
                    src._c_contig, src._f_contig)
        getattr(HostBackend, method)(self, *[view if a is src else a for a in args])
        return True

    def ufunc_at(self, op: ElementwiseOp, a, positions, values) -> None:
        """NumPy's own ``ufunc.at`` on the flat view of C-contiguous ``a``; ``positions``
        are flat element indices (int64)."""
        v = self._view
        args = () if values is None else (v(values) if hasattr(values, "_buf") else values,)
        with np.errstate(all="ignore"):
            getattr(np, op.ufunc).at(v(a).reshape(-1), v(positions), *args)

    # reductions and scans (see docs/internals.md, "Reductions and scans") -------------
    def reduce(self, op, src, out, axes, initial=None) -> None:
        uf = getattr(np, op.ufunc)
        kw = {} if initial is None else {"initial": initial}
        with np.errstate(all="ignore"):
            res = uf.reduce(self._view(src), axis=tuple(axes), dtype=np.dtype(op.loop), **kw)
        np.copyto(self._view(out), res, casting="unsafe")

    def arg_reduce(self, kind, src, out, axes) -> None:
        x = self._view(src)
        if len(axes) == 1:
            res = getattr(np, kind)(x, axis=axes[0])
        else:  # every axis: the C-order flat index
            res = getattr(np, kind)(x.reshape(-1))
        np.copyto(self._view(out), res, casting="unsafe")

    def sqdev_sum(self, src, mean, out, axes) -> None:
        """``out[...] = sum over axes of |src - mean|^2`` as NumPy's var computes it
        (``x = a - mean; x*x``, or re*re + im*im), summed in out's dtype.  ``src`` float or
        complex, ``mean`` (src's dtype) and ``out`` (its real type): src's shape without
        ``axes``, C-contiguous."""
        with np.errstate(all="ignore"):
            x = self._view(src) - np.expand_dims(self._view(mean), tuple(axes))
            if x.dtype.kind == "c":
                x = np.add(x.real * x.real, x.imag * x.imag)
            else:
                x = np.multiply(x, x, out=x)
            res = np.add.reduce(x, axis=tuple(axes), dtype=out.dtype)
        np.copyto(self._view(out), res, casting="unsafe")

    def scan(self, op, src, out, axis) -> None:
        uf = getattr(np, op.ufunc)
        with np.errstate(all="ignore"):
            res = uf.accumulate(self._view(src), axis=axis, dtype=np.dtype(op.loop))
        np.copyto(self._view(out), res, casting="unsafe")

    def synchronize(self) -> None:
        pass

    # linear algebra, FFT, random (docs/internals.md, "Libraries") ------------------------
    # Stacked matrices are (B, m, n) views; outputs are C-contiguous; ``info`` results are
    # host int arrays (one per matrix, > 0 where the factorisation failed).
    def matmul(self, a, b, out) -> None:
        np.matmul(self._view(a), self._view(b), out=self._view(out))

    def solve(self, a, b, x):
        v = self._view
        return _per_matrix(lambda i: np.linalg.solve(v(a)[i], v(b)[i]), v(x), a._shape[0])

    def lu_diagonal(self, a):
        return _lu_diagonal(self._view(a))

    def cholesky(self, a, out, upper: bool):
        v = self._view
        return _per_matrix(lambda i: np.linalg.cholesky(v(a)[i], upper=upper), v(out),
                           a._shape[0])

    def qr(self, a, q, r) -> None:
        mode = "complete" if r._shape[-2] > min(a._shape[-2:]) or (
            q is not None and q._shape[-1] > min(a._shape[-2:])) else "reduced"
        res = np.linalg.qr(self._view(a), mode=mode)
        self._view(r)[...] = res.R
        if q is not None:
            self._view(q)[...] = res.Q

    def svd(self, a, u, s, vh):
        if u is None:
            self._view(s)[...] = np.linalg.svd(self._view(a), compute_uv=False)
        else:
            full = u._shape[-1] == a._shape[-2] and a._shape[-2] != a._shape[-1]
            res = np.linalg.svd(self._view(a), full_matrices=full)
            self._view(u)[...], self._view(s)[...], self._view(vh)[...] = res
        return np.zeros(a._shape[0], np.int32)

    def eigh(self, a, w, v, lower: bool):
        uplo = "L" if lower else "U"
        if v is None:
            self._view(w)[...] = np.linalg.eigvalsh(self._view(a), UPLO=uplo)
        else:
            self._view(w)[...], self._view(v)[...] = np.linalg.eigh(self._view(a), UPLO=uplo)
        return np.zeros(a._shape[0], np.int32)

    def eig(self, a, w, vr):
        """General eigen-decomposition in LAPACK's convention (see cuda/solver.eig): w
        complex (B, n); vr None or (B, n, n) in a's dtype, a real matrix's complex pair
        (imag(w[j]) > 0) packed as vr[:, j] = Re v_j, vr[:, j + 1] = Im v_j."""
        info = np.zeros(a._shape[0], np.int32)
        for i in range(a._shape[0]):
            try:
                if vr is None:
                    self._view(w)[i] = np.linalg.eigvals(self._view(a)[i])
                    continue
                wi, vi = np.linalg.eig(self._view(a)[i])
            except np.linalg.LinAlgError:
                info[i] = 1
                continue
            self._view(w)[i] = wi
            if vr.dtype.kind == "c":
                self._view(vr)[i] = vi
                continue
            wi = np.asarray(wi, np.complex128)
            out = self._view(vr)[i]
            out[...] = vi.real
            pair = np.flatnonzero(wi.imag > 0)
            out[:, pair + 1] = vi.imag[:, pair]
        return info

    def fft(self, x, out, kind: str, rank: int, forward: bool) -> None:
        axes = tuple(range(-rank, 0))
        xv = self._view(x)
        if kind == "c2c":
            res = (np.fft.fftn(xv, axes=axes) if forward
                   else np.fft.ifftn(xv, axes=axes, norm="forward"))
        elif kind == "r2c":
            res = np.fft.rfftn(xv, axes=axes)
        else:
            res = np.fft.irfftn(xv, s=out._shape[-rank:], axes=axes, norm="forward")
        np.copyto(self._view(out), res, casting="unsafe")

    def rng_state(self, seed: int):
        return _HostRng(seed)

    def rng_fill(self, state, kind: str, out, param=None) -> None:
        state.fill(self._view(out), kind, param)

    def rng_draw(self, state, kind: str, out, params: tuple) -> None:
        state.draw(self._view, kind, out, params)

    # gather, scatter, compaction, sort (docs/internals.md) ------------------------------
    def gather(self, src, indices, axis, out, check):
        s, idx = self._view(src), [self._view(i) for i in indices]
        if check:
            bad = _first_bad(idx, s.shape[axis:axis + len(idx)])
            if bad is not None:
                return bad
        self._view(out)[...] = s[(slice(None),) * axis + tuple(idx)]
        return None

    def scatter(self, dst, indices, axis, values, check):
        d, idx = self._view(dst), [self._view(i) for i in indices]
        if check:
            bad = _first_bad(idx, d.shape[axis:axis + len(idx)])
            if bad is not None:
                return bad
        d[(slice(None),) * axis + tuple(idx)] = self._view(values)
        return None

    def flatnonzero(self, mask):
        res = np.flatnonzero(self._view(mask)).astype(np.intp)
        return self._wrap(_copy_of(res)), res.size

    def sort(self, src, values, indices, stable=False):
        s = self._view(src)
        if indices is not None:
            self._view(indices)[...] = np.argsort(s, axis=-1, kind="stable")
        if values is not None:
            self._view(values)[...] = np.sort(s, axis=-1, kind="stable" if stable else None)

    def searchsorted(self, a, v, side, out):
        self._view(out)[...] = np.searchsorted(self._view(a), self._view(v), side=side)


def _first_bad(idx, sizes):
    """(j, value) of an out-of-bounds index in index array j, or None."""
    for j, (i, n) in enumerate(zip(idx, sizes)):
        bad = (i < -n) | (i >= n)
        if bad.any():
            return j, int(i[bad].flat[0])
    return None


def _lu_diagonal(a: np.ndarray):
    """getrf's partial-pivoting LU of each matrix of ``a`` (B, n, n), eliminated for the
    whole stack at once: (U's diagonal, 1-based pivot rows, info) as ``Backend.lu_diagonal``."""
    m = np.array(a, copy=True)
    count, n = m.shape[0], m.shape[-1]
    stack = np.arange(count)
    pivots = np.empty((count, n), np.int32)
    info = np.zeros(count, np.int32)
    with np.errstate(all="ignore"):
        for k in range(n):
            col = m[:, k:, k]
            size = np.abs(col.real) + np.abs(col.imag) if m.dtype.kind == "c" else np.abs(col)
            p = k + np.argmax(size, axis=1)  # (LAPACK's i?amax: the first largest)
            pivots[:, k] = p + 1
            m[stack, k], m[stack, p] = m[stack, p], m[stack, k].copy()
            pivot = m[:, k, k]
            zero = pivot == 0
            info[(info == 0) & zero] = k + 1
            factors = m[:, k + 1:, k] / np.where(zero, 1, pivot)[:, None]
            factors[zero] = 0  # (getrf skips the elimination of a zero pivot's column)
            m[:, k + 1:, k] = factors
            m[:, k + 1:, k + 1:] -= factors[:, :, None] * m[:, None, k, k + 1:]
    return np.ascontiguousarray(m.diagonal(axis1=1, axis2=2)), pivots, info


def _per_matrix(fn, out, count):
    """Run ``fn(i)`` for each matrix i into ``out[i]``; infos (1 where NumPy raised)."""
    info = np.zeros(count, np.int32)
    for i in range(count):
        try:
            out[i] = fn(i)
        except np.linalg.LinAlgError:
            info[i] = 1
    return info


class _HostRng:
    """The host stand-in for a cuRAND Philox generator (NumPy's Philox, same contract)."""

    def __init__(self, seed: int):
        self._g = np.random.Generator(np.random.Philox(int(seed) & (2**64 - 1)))

    def fill(self, o: np.ndarray, kind: str, param=None) -> None:
        """Fill the NumPy view ``o`` (see ``Backend.rng_fill``)."""
        if kind == "uniform":  # (0, 1], as cuRAND
            o[...] = 1 - self._g.random(o.shape, dtype=o.dtype)
        elif kind == "normal":
            o[...] = self._g.standard_normal(o.shape, dtype=o.dtype)
        elif kind == "bits":
            o[...] = self._g.integers(0, 2**32, o.shape, dtype=np.uint32)
        elif kind == "poisson":
            o[...] = self._g.poisson(param, o.shape)
        else:
            raise ValueError(kind)

    def draw(self, view, kind: str, out, params) -> None:
        """The rejection samplers (cuda/rng.draw), by NumPy: 'gamma' (params (alpha, log
        flag)), 'poisson' ((lam,)), 'binomial' ((n, p)), 'hypergeometric' ((good, bad,
        sample)), 'logseries' ((p,)), 'zipf' ((a,)), 'vonmises' ((mu, kappa)),
        'mvhypergeometric' ((colors, nsample, total)); parameter arrays hold 1 or
        out._size elements; ``view`` is the backend's array accessor."""
        if kind == "mvhypergeometric":  # out (rows, ncolors); params (colors, nsample, sum)
            colors, nsample, total = view(params[0]), params[1], params[2]
            o = view(out).reshape(-1, colors.size)
            method = "marginals" if total < 10**9 else "count"
            o[...] = self._g.multivariate_hypergeometric(colors, nsample, o.shape[0], method)
            return
        o = view(out).reshape(-1)
        if o.size == 0:
            return
        ps = [view(p).reshape(-1) for p in params if not isinstance(p, (bool, int))]
        ps = [p if p.size == o.size else np.broadcast_to(p, o.shape) for p in ps]
        if kind == "random01":
            o[...] = self._g.random(o.shape, dtype=o.dtype)
        elif kind == "gamma":
            alpha = ps[0]
            if not params[1]:
                o[...] = self._g.standard_gamma(alpha, o.shape)
                return
            # log of G(a) without underflow: G(a) = G(a + 1) U^(1/a) for a < 1
            small = alpha < 1
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.log(self._g.standard_gamma(np.where(small, alpha + 1, alpha), o.shape))
                boost = np.log(self._g.random(o.shape)) / np.where(small, alpha, 1)
                o[...] = np.where(alpha == 0, -np.inf, np.where(small, g + boost, g))
        elif kind == "poisson":
            o[...] = self._g.poisson(ps[0], o.shape)
        elif kind == "binomial":
            o[...] = self._g.binomial(ps[0], ps[1], o.shape)
        elif kind == "hypergeometric" and max(ps[0].max(), ps[1].max()) >= 10**9:
            # (RandomState's: the Generator's stops at 10**9; seeded from this stream)
            legacy = np.random.RandomState(self._g.integers(2**32))
            o[...] = legacy.hypergeometric(*ps, o.shape)
        elif kind in ("hypergeometric", "logseries", "zipf", "vonmises"):
            o[...] = getattr(self._g, kind)(*ps, o.shape)
        else:
            raise ValueError(kind)


def _run_ufunc(op: ElementwiseOp, args, res) -> None:
    if op.ufunc is None:  # a cast
        np.copyto(res[0], args[0], casting="unsafe")
        return
    if op.ufunc == "where":  # select: out = cond ? a : b (not a NumPy ufunc)
        np.copyto(res[0], np.where(*args), casting="unsafe")
        return
    uf = getattr(np, op.ufunc)
    sig = tuple(np.dtype(c) for c in op.loop)
    # The loop was resolved by the frontend; NumPy casts the operands into it, like a kernel.
    with np.errstate(all="ignore"):
        try:
            uf(*args, out=tuple(res), signature=sig, casting="unsafe")
        except TypeError:  # loops NumPy resolves but will not take as a signature (int64 == uint64)
            uf(*args, out=tuple(res), casting="unsafe")
