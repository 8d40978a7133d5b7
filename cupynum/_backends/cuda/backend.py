"""The CUDA backend: the Backend protocol (``_backends/base.py``) over the CUDA runtime.

Memory comes from the stream-ordered pool (``memory.py``), kernels from the elementwise
engine (``elementwise.py``).  An array's device address is ``a._buf.ptr + a._offset``; its
layout is ``a._shape`` / ``a._strides`` (bytes, zero and negative allowed).  Everything runs
on the thread's current stream; only ``to_host`` and ``synchronize`` wait for the device.
"""
from __future__ import annotations

import numpy as np

from ..base import ElementwiseOp
from . import elementwise as ew
from . import memory, runtime

_UNITS = (8, 4, 2, 1)  # bit-for-bit copies move the widest unit every operand allows


class _Temp:
    """A C-contiguous device array in the shape the elementwise engine reads (the ndarray
    fields it needs, nothing else)."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "dtype", "_size", "_c_contig")

    def __init__(self, buf, shape, dtype, strides=None, offset=0):
        self._buf, self._offset, self._shape, self.dtype = buf, offset, tuple(shape), dtype
        self._strides = tuple(strides) if strides is not None else _c_strides(shape, dtype.itemsize)
        size = 1
        for d in self._shape:
            size *= d
        self._size = size
        self._c_contig = strides is None


def _c_strides(shape, itemsize):
    out, acc = [], itemsize
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def _ptr(a) -> int:
    return a._buf.ptr + a._offset


class CudaBackend:
    name = "cuda"

    def __init__(self):
        runtime.init()
        self._pool = memory.get_pool()
        # The hot path allocates through this attribute: bind the pool's method directly
        # (one Python frame less per allocation).
        self.alloc = self._pool.malloc

    # memory and transfer ----------------------------------------------------------------

    def alloc(self, nbytes: int):  # replaced per instance in __init__
        return self._pool.malloc(nbytes)

    def from_host(self, host: np.ndarray):
        host = np.ascontiguousarray(host)
        buf = self._pool.malloc(host.nbytes)
        if host.nbytes:
            memory.memcpy_htod(buf.ptr, host)
        return buf

    def to_host(self, a) -> np.ndarray:
        out = np.empty(a._shape, a.dtype)
        if a._size == 0:
            return out
        if a._c_contig:
            memory.memcpy_dtoh(out, _ptr(a))
            return out
        # A strided view: gather it into a contiguous device temporary first (one kernel,
        # at device bandwidth), then one D2H copy.
        tmp = _Temp(self._pool.malloc(a._size * a.dtype.itemsize), a._shape, a.dtype)
        self.copy(a, tmp)
        memory.memcpy_dtoh(out, tmp._buf.ptr)
        return out

    def write_host(self, a, host: np.ndarray) -> None:
        if a._size == 0:
            return
        host = np.ascontiguousarray(host, dtype=a.dtype)
        if a._c_contig:
            memory.memcpy_htod(_ptr(a), host)
            return
        tmp = _Temp(self.from_host(host), a._shape, a.dtype)
        self.copy(tmp, a)

    def copy_bytes(self, buf, offset: int, nbytes: int):
        out = self._pool.malloc(nbytes)
        memory.memcpy_dtod(out.ptr, buf.ptr + offset, nbytes)
        return out

    def copy(self, src, dst) -> None:
        """``dst[...] = src`` with NumPy's unsafe cast; src may have zero strides."""
        if dst._size == 0:
            return
        if src.dtype == dst.dtype:
            if src._c_contig and dst._c_contig:  # (slice assignment's hot path: flat)
                memory.memcpy_dtod(dst._buf.ptr + dst._offset, src._buf.ptr + src._offset,
                                   dst._size * dst.dtype.itemsize)
                return
            from .indexing import try_transpose_copy

            if try_transpose_copy(src, dst):  # innermost axes differ: 32x32 smem tiles
                return
            _bit_copy(src, dst)
            return
        ew.run(ew.COPY, (src,), (dst,))

    def fill(self, dst, value) -> None:
        if dst._size == 0:
            return
        t = dst.dtype.type
        value = value if type(value) is t else t(value)
        raw = value.tobytes()
        if dst._c_contig and raw.count(raw[:1]) == len(raw):  # zeros, -1, True, ...
            memory.memset_d8(_ptr(dst), raw[0], dst._size * dst.dtype.itemsize)
            return
        # Write the value's bits as an unsigned int of its size (NaN payloads and -0.0
        # kept, 5 kernels for all dtypes), when every address is aligned for that unit.
        size = dst.dtype.itemsize
        bits = _ptr(dst)
        for st in dst._strides:
            bits |= st
        if size <= 8 and not bits & (size - 1):
            u = np.dtype(ew._UNIT_CHARS[size])
            dst = _Temp(dst._buf, dst._shape, u, dst._strides, dst._offset)
            value = value.view(u.type)
        ew.run(ew.COPY, (value,), (dst,))

    # compute ----------------------------------------------------------------------------

    def elementwise(self, op: ElementwiseOp, ins, outs) -> None:
        ew.launch_elementwise(op, ins, outs)

    def contiguous_launcher(self, op: ElementwiseOp, operand_dtypes):
        return ew.contiguous_launcher(op, operand_dtypes)

    def layout_launcher(self, op: ElementwiseOp, ins, outs):
        return ew.layout_launcher(op, ins, outs)

    def ufunc_at(self, op, row, a, positions, values) -> None:
        """``ufunc.at`` on C-contiguous ``a`` at flat element ``positions`` (see ufunc_at.py);
        16-byte elements have no device CAS: NumPy runs those on a host copy."""
        from . import ufunc_at
        from ... import _ops

        if not ufunc_at.supported(a.dtype):
            host = self.to_host(a)
            pos = self.to_host(positions)
            vals = values if values is None or not hasattr(values, "_buf") else \
                self.to_host(values)
            with np.errstate(all="ignore"):
                getattr(np, op.ufunc).at(host.reshape(-1), pos, *(() if vals is None else (vals,)))
            self.write_host(a, host)
            return
        compute = tuple(_ops.compute_ctype(row, c) for c in op.loop[: op.nin])
        ufunc_at.ufunc_at(op, compute, a, positions, values)

    def reduce(self, op, src, out, axes, initial=None) -> None:
        from . import reduction

        reduction.reduce(op, src, out, axes, initial)

    def arg_reduce(self, kind, src, out, axes) -> None:
        from . import reduction

        reduction.arg_reduce(kind, src, out, axes)

    def sqdev_sum(self, src, mean, out, axes) -> None:
        from . import reduction

        reduction.sqdev_sum(src, mean, out, axes)

    def scan(self, op, src, out, axis) -> None:
        from . import reduction

        reduction.scan(op, src, out, axis)

    def synchronize(self) -> None:
        runtime.synchronize_stream()

    # gather, scatter, compaction, sort (docs/internals.md; cuda/indexing.py, sorting.py) ----
    def gather(self, src, indices, axis, out, check):
        from . import indexing

        return indexing.gather(src, indices, axis, out, check)

    def gather_flat(self, src, idx, out):
        from . import indexing

        self.gather_flat = indexing.gather_flat  # later calls go straight there (hot: a[idx])
        return indexing.gather_flat(src, idx, out)

    def scatter(self, dst, indices, axis, values, check):
        from . import indexing

        return indexing.scatter(dst, indices, axis, values, check)

    def flatnonzero(self, mask):
        from . import indexing

        return indexing.flatnonzero(mask)

    def mask_select(self, src, mask):
        from . import indexing

        return indexing.mask_select(src, mask)

    def sort(self, src, values, indices, stable=False):
        from . import sorting

        sorting.sort(src, values, indices, stable)

    def searchsorted(self, a, v, side, out):
        from . import sorting

        sorting.searchsorted(a, v, side, out)

    # linear algebra, FFT, random (docs/internals.md, "Libraries"): cuBLAS, cuSOLVER, cuFFT,
    # cuRAND through nvmath-python's bindings, imported on first use.
    def matmul(self, a, b, out) -> None:
        from . import matmul_kernel

        if matmul_kernel.supports(out.dtype.char, out._shape[-2], out._shape[-1],
                                  a._shape[-1]):  # integer, bool, small float batches
            return matmul_kernel.matmul(self, a, b, out)
        from . import blas

        return blas.matmul(self, a, b, out)

    def solve(self, a, b, x):
        from . import solver

        return solver.solve(self, a, b, x)

    def slogdet(self, a, sign, logabsdet) -> None:
        from . import solver

        d, piv, infos = solver.slogdet(self, a)  # n values per matrix come to the host
        n = a._shape[-1]
        swaps = (piv != np.arange(1, n + 1, dtype=np.int32)).sum(axis=-1) % 2
        with np.errstate(divide="ignore"):
            mag = np.abs(d)
            ph = np.where(mag == 0, 0, d / np.where(mag == 0, 1, mag))
            s = np.prod(ph, axis=-1) * np.where(swaps, -1, 1)
            s = np.where((mag == 0).any(axis=-1), 0, s)
            la = np.log(mag).sum(axis=-1)
        # info > 0: an exact zero pivot.  Batched getrf may leave NaN after it on the diagonal
        # where LAPACK leaves numbers, so set NumPy's answer for a singular matrix directly.
        singular = infos > 0
        s = np.where(singular, 0, s)
        la = np.where(singular, -np.inf, la)
        self.write_host(sign, s.astype(sign.dtype))
        self.write_host(logabsdet, la.astype(logabsdet.dtype))

    def cholesky(self, a, out, upper: bool):
        from . import solver

        return solver.cholesky(self, a, out, upper)

    def qr(self, a, q, r) -> None:
        from . import solver

        solver.qr(self, a, q, r)

    def svd(self, a, u, s, vh):
        from . import solver

        return solver.svd(self, a, u, s, vh)

    def eigh(self, a, w, v, lower: bool):
        from . import solver

        return solver.eigh(self, a, w, v, lower)

    def eig(self, a, w, vr):
        from . import solver

        return solver.eig(self, a, w, vr)

    def fft(self, x, out, kind: str, rank: int, forward: bool) -> None:
        from . import fft

        fft.fft(self, x, out, kind, rank, forward)

    def rng_state(self, seed: int):
        from . import rng

        return rng.State(seed)


def _bit_copy(src, dst) -> None:
    """Same-dtype copy between any layouts, moving raw units of the widest size (<= 8
    bytes) that divides the itemsize, both addresses and every stride: a float32 copy is a
    uint32 copy, a complex128 one moves two uint64 per element (a trailing dimension of 2,
    which collapse merges away when the element's units are contiguous).  No value is
    interpreted, so bool, NaN payloads and -0.0 survive, and 5 kernels serve all dtypes."""
    size = dst.dtype.itemsize
    ptr_bits = (_ptr(src) | _ptr(dst)) & 7
    key = (size, dst._shape, src._strides, dst._strides, ptr_bits)
    launch = _bit_copies.get(key)
    if launch is None:
        bits = size | ptr_bits
        for st in src._strides + dst._strides:
            bits |= st
        unit = next(u for u in _UNITS if not bits & (u - 1) and u <= size)
        dt = np.dtype(ew._UNIT_CHARS[unit])
        k = size // unit
        tail, tail_st = ((), ()) if k == 1 else ((k,), (unit,))
        s2 = _Temp(src._buf, src._shape + tail, dt, src._strides + tail_st, src._offset)
        d2 = _Temp(dst._buf, dst._shape + tail, dt, dst._strides + tail_st, dst._offset)
        launch = ew.exprs_launcher(ew.COPY, (s2,), (d2,))
        if len(_bit_copies) >= 1024:
            _bit_copies.clear()
        _bit_copies[key] = launch
    launch((src,), (dst,))  # (the unit views' pointers are the arrays' own)


# _bit_copy's launchers per (itemsize, shape, strides, pointer alignment)
_bit_copies: dict = {}
