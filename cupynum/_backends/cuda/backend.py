"""The CUDA backend: the backend contract (``_backends/base.py``) over the CUDA runtime.

Memory comes from the stream-ordered pool (``memory.py``), kernels from the elementwise
engine (``elementwise.py``), copies and fills from ``copy_fill.py``.  An array's device
address is ``view.dptr(a)``; its layout is ``a._shape`` / ``a._strides`` (bytes, zero and
negative allowed).  Libraries (cuBLAS, cuSOLVER, cuFFT, cuRAND, the matmul kernel) receive
arrays and views, never this object.  Everything runs on the thread's current stream; only
``to_host`` and ``synchronize`` wait for the device.
"""
from __future__ import annotations

import numpy as np

from ..base import Backend, ElementwiseOp
from .. import fusion
from .. import buffer as buffers
from ..buffer import Buffer
from . import copy_fill, fused
from . import elementwise as ew
from . import elementwise_source as es
from . import CudaTraits, memory, runtime


class _OnFirstUse:
    """A kernel family's or library's module until its first use: the first attribute read
    imports it (``_load``), which also rebinds this module's global of that name to the
    module itself.  So a process imports only the families it uses (all of them take about
    50 ms), and every later call reads a plain global (a ``from . import`` in the method
    would cost about 0.25 us a call)."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        return getattr(_load(self._name), attr)


def _load(name: str):
    if name == "reduction":
        from . import reduction as module
    elif name == "indexing":
        from . import indexing as module
    elif name == "sorting":
        from . import sorting as module
    elif name == "matmul_kernel":
        from . import matmul_kernel as module
    elif name == "blas":
        from . import blas as module
    elif name == "solver":
        from . import solver as module
    elif name == "fft":
        from . import fft as module
    elif name == "rng":
        from . import rng as module
    elif name == "fused_reduction":
        from . import fused_reduction as module
    else:
        from . import ufunc_at as module
    globals()[name] = module
    return module


reduction = _OnFirstUse("reduction")
fused_reduction = _OnFirstUse("fused_reduction")
indexing = _OnFirstUse("indexing")
sorting = _OnFirstUse("sorting")
matmul_kernel = _OnFirstUse("matmul_kernel")
blas = _OnFirstUse("blas")
solver = _OnFirstUse("solver")
fft = _OnFirstUse("fft")
rng = _OnFirstUse("rng")
ufunc_at = _OnFirstUse("ufunc_at")


class CudaBackend(CudaTraits, Backend):

    def __init__(self, device: int | None = None):
        runtime.init(device)  # the context's device: ordinal 0 unless named (runtime.init)
        self._pool = memory.get_pool()
        # The hot paths copy through these attributes: bind the functions directly (one
        # Python frame less per call than the methods below).
        self.copy = fused.copy if fusion.ENABLED else copy_fill.copy
        self.copy_ready = copy_fill.copy
        self.fill = copy_fill.fill
        self.to_host = copy_fill.to_host  # (float(a[i, j]) reads through it)
        self.alloc = ew.new_allocator()  # (``alloc`` below, inline: the layout path's)

    # memory and transfer (copy_fill.py) -------------------------------------------------

    def alloc(self, nbytes: int) -> Buffer:
        return Buffer(None, self._pool.malloc(nbytes), buffers.born_settled(nbytes))

    def from_host(self, host: np.ndarray) -> Buffer:
        return Buffer(None, copy_fill.from_host(host), buffers.born_settled(host.nbytes))

    def to_host(self, a, out=None) -> np.ndarray:  # replaced per instance in __init__
        return copy_fill.to_host(a, out)

    def write_host(self, a, host: np.ndarray) -> None:
        copy_fill.write_host(a, host)

    def copy_bytes(self, buf, offset: int, nbytes: int) -> Buffer:
        out = self._pool.malloc(nbytes)
        memory.memcpy_dtod(out.ptr, buf.on_device().ptr + offset, nbytes)
        return Buffer(None, out)

    def lazy_reads(self) -> bool:
        # Only reads made on the legacy default stream wait: their copy may run later on
        # whichever stream is current then, and the blocking streams order against that
        # one (on another stream an element is copied at once, in that stream's order).
        return not runtime.nondefault_streams or runtime.current_stream() == 0

    def copy(self, src, dst) -> None:  # replaced per instance in __init__
        """``dst[...] = src`` with NumPy's unsafe cast; src may have zero strides."""
        copy_fill.copy(src, dst)

    def copy_ready(self, src, dst) -> None:  # replaced per instance in __init__
        copy_fill.copy(src, dst)

    def fill(self, dst, value) -> None:  # replaced per instance in __init__
        copy_fill.fill(dst, value)

    # compute ----------------------------------------------------------------------------

    # Elementwise work is deferred when fusion is on (``_backends/fusion.py``): these entry
    # points make the output pending, and ``run_fused`` runs a flushed graph (fused.py).
    def elementwise(self, op: ElementwiseOp, ins, outs) -> None:
        if fusion.ENABLED and outs[0]._size >= fusion.MIN_ELEMENTS and len(outs) == 1 and \
                len(op.loop) == op.nin + 1 and fusion.deferrable_into(outs[0]):
            ins = fused.loop_scalars(op, ins)
            if fusion.defer(self, op, ins, outs[0], fused.current_stream(), into=outs[0]._buf):
                return
        ew.launch_elementwise(op, ins, outs)

    def contiguous_launcher(self, op: ElementwiseOp, operand_dtypes):
        launch = ew.contiguous_launcher(op, operand_dtypes)
        if fusion.ENABLED and launch.new is not None:
            launch.new = fused.deferring_new(self, op, operand_dtypes, launch.new)
        return launch

    def layout_launcher(self, op: ElementwiseOp, ins, outs):
        launch = ew.layout_launcher(op, ins, outs)
        if fusion.ENABLED:
            return fusion.deferring_layout(self, op, ins, outs, launch, fused.current_stream)
        return launch

    def run_fused(self, nodes, outs) -> None:
        fused.run(nodes, outs)

    def ufunc_at(self, op, a, positions, values) -> None:
        """``ufunc.at`` on C-contiguous ``a`` at flat element ``positions`` (see ufunc_at.py);
        16-byte elements have no device CAS: NumPy runs those on a host copy."""
        if not ufunc_at.supported(a.dtype):
            host = self.to_host(a)
            pos = self.to_host(positions)
            vals = values if values is None or not hasattr(values, "_buf") else \
                self.to_host(values)
            with np.errstate(all="ignore"):
                getattr(np, op.ufunc).at(host.reshape(-1), pos, *(() if vals is None else (vals,)))
            self.write_host(a, host)
            return
        compute = tuple(es.compute_ctype(op, c) for c in op.loop[: op.nin])
        ufunc_at.ufunc_at(op, compute, a, positions, values)

    def run_fused_reduce(self, nodes, method, src, args) -> bool:
        return fused_reduction.run(nodes, method, src, args)

    # A pending input (fusion) is computed in the reduction's loads where it can be
    # (fusion.reduce); otherwise the reduction's read of it computes it first.
    def reduce(self, op, src, out, axes, initial=None) -> None:
        if src._buf.pending is None or not fusion.reduce("reduce", src,
                                                         (op, src, out, axes, initial)):
            reduction.reduce(op, src, out, axes, initial)

    def arg_reduce(self, kind, src, out, axes) -> None:
        if src._buf.pending is None or not fusion.reduce("arg_reduce", src,
                                                         (kind, src, out, axes)):
            reduction.arg_reduce(kind, src, out, axes)

    def sqdev_sum(self, src, mean, out, axes) -> None:
        if src._buf.pending is None or not fusion.reduce("sqdev_sum", src,
                                                         (src, mean, out, axes)):
            reduction.sqdev_sum(src, mean, out, axes)

    def scan(self, op, src, out, axis) -> None:
        reduction.scan(op, src, out, axis)

    def synchronize(self) -> None:
        fusion.flush(runtime.current_stream())
        runtime.synchronize_stream()

    # gather, scatter, compaction, sort (docs/internals.md; cuda/indexing.py, sorting.py) ----
    def gather(self, src, indices, axis, out, check):
        return indexing.gather(src, indices, axis, out, check)

    def gather_flat(self, src, idx, out):
        self.gather_flat = indexing.gather_flat  # later calls go straight there (hot: a[idx])
        return indexing.gather_flat(src, idx, out)

    def scatter(self, dst, indices, axis, values, check):
        return indexing.scatter(dst, indices, axis, values, check)

    def flatnonzero(self, mask):
        raw, count = indexing.flatnonzero(mask)
        return Buffer(None, raw), count

    def mask_select(self, src, mask):
        res = indexing.mask_select(src, mask)
        return None if res is None else (Buffer(None, res[0]), res[1])

    def sort(self, src, values, indices, stable=False):
        sorting.sort(src, values, indices, stable)

    def searchsorted(self, a, v, side, out):
        sorting.searchsorted(a, v, side, out)

    # linear algebra, FFT, random (docs/internals.md, "Libraries"): cuBLAS, cuSOLVER, cuFFT,
    # cuRAND through nvmath-python's bindings, imported on first use.
    def matmul(self, a, b, out) -> None:
        if matmul_kernel.supports(out.dtype.char, out._shape[-2], out._shape[-1],
                                  a._shape[-1]):  # integer, bool, small float batches
            return matmul_kernel.matmul(a, b, out)
        return blas.matmul(a, b, out)

    def solve(self, a, b, x):
        return solver.solve(a, b, x)

    def lu_diagonal(self, a):
        return solver.lu_diagonal(a)  # n values per matrix come to the host

    def cholesky(self, a, out, upper: bool):
        return solver.cholesky(a, out, upper)

    def qr(self, a, q, r) -> None:
        solver.qr(a, q, r)

    def svd(self, a, u, s, vh):
        return solver.svd(a, u, s, vh)

    def eigh(self, a, w, v, lower: bool):
        return solver.eigh(a, w, v, lower)

    def eig(self, a, w, vr):
        return solver.eig(a, w, vr)

    def fft(self, x, out, kind: str, rank: int, forward: bool) -> None:
        fft.fft(x, out, kind, rank, forward)

    def rng_state(self, seed: int):
        return rng.State(seed)

    def rng_fill(self, state, kind: str, out, param=None) -> None:
        state.fill(self, kind, out, param)

    def rng_draw(self, state, kind: str, out, params: tuple) -> None:
        state.draw(self, kind, out, params)
