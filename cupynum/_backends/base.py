"""The backend contract: every operation a backend implements, in one place.

The frontend (ndarray, ufuncs, the ``_api`` modules, linalg, fft, random) owns every NumPy
semantic: type resolution, broadcasting, output allocation, axis and index normalisation,
error decisions, result dtypes.  A backend receives operations that are already resolved and
only moves and computes bytes.  ``tests/test_backend_contract.py`` checks that every backend
implements exactly the methods of ``Backend`` below, with the same signatures.

Conventions shared by every method:

* An *array* is a cupynum ``ndarray`` (or an object with the same fields) whose fields a
  backend may read: ``_buf`` (a ``buffer.Buffer``: the backend's allocation is its ``host``
  copy on the host backend, its ``device`` copy on a device backend), ``_offset`` (bytes),
  ``_shape``, ``_strides`` (bytes, may be 0 or negative), ``dtype`` (a ``numpy.dtype``),
  ``_size``, ``_c_contig``.  Only the backend interprets the allocation in ``_buf``.
* Dtypes are already resolved: the operands hold (or, for scalars, are) the dtypes the
  docstring names; a backend casts nothing it is not told to.
* Outputs are allocated by the frontend, in the shape and dtype stated, before the call;
  the backend writes every element of them.
* Everything runs on the calling thread's current stream, in order; only ``to_host``,
  ``synchronize`` and the methods documented as returning host values wait for the device.
* *Host* arrays and values are NumPy's.

Elementwise work is described by an ``ElementwiseOp``: which table op (a NumPy ufunc
name plus the C++ functor computing it), the loop dtypes NumPy resolved, and the dtypes
of the operands as they are stored.  Operands are arrays already broadcast to the output
shape (zero strides) or NumPy scalars of the loop dtype (passed by value).

Optional capabilities (fast paths a backend may offer) are methods or flags here too, with
defaults that mean "take the generic path": the frontend calls them unconditionally and
never asks a backend for its name.  To add an operation: see docs/internals.md, "The
backend contract".
"""
from __future__ import annotations

import abc
from typing import Any, NamedTuple, Sequence

import numpy as np


class ElementwiseOp(NamedTuple):
    """One elementwise launch: ``outs = functor(*ins)`` computed in the loop dtypes.

    ``ufunc``   NumPy ufunc name (host backend calls ``numpy.<ufunc>``); ``None`` for a cast.
    ``functor`` C++ functor in namespace ``cpn`` (kernels/), e.g. ``"add"``.
    ``loop``    tuple of loop dtype chars, inputs then outputs, as in ``numpy.add.types``
                (``"ff->f"`` becomes ``('f', 'f', 'f')``).
    ``nin``     number of inputs.
    """

    ufunc: str | None
    functor: str
    loop: tuple[str, ...]
    nin: int


class ReduceOp(NamedTuple):
    """One reduction or scan (``reduce`` / ``scan``): ``functor`` combines values in the loop
    dtype ``loop`` (a NumPy type char, the accumulator NumPy resolved).

    ``ufunc``    NumPy ufunc name (the host backend calls ``numpy.<ufunc>.reduce``).
    ``functor``  C++ functor in namespace ``cpn`` (kernels/), e.g. ``"add"``.
    ``loop``     the loop dtype char (canonical: ``l``/``L`` for 64-bit ints).
    ``neutral``  a NumPy scalar of the loop dtype that every combination may start from
                 (``-0.0`` for float sums, ``+inf`` for minimum, NaN for fmin...), or
                 ``None``: the op is combined strictly left to right (subtract, power...).
    """

    ufunc: str
    functor: str
    loop: str
    neutral: Any


# The contract's operations that compute on the device (each call is one "launch" as
# ``cupynum.testing.device_counters()`` counts it on the simulated device); the others move
# memory (alloc, from_host, to_host, write_host) or wait (synchronize).  ``copy`` and
# ``fill`` are kernels on a device, so they count.
COMPUTE_OPS = (
    "copy", "fill", "elementwise", "run_fused", "run_fused_reduce", "ufunc_at", "reduce",
    "arg_reduce", "sqdev_sum", "scan",
    "gather", "gather_flat", "scatter", "flatnonzero", "mask_select", "sort", "searchsorted",
    "matmul", "solve", "lu_diagonal", "cholesky", "qr", "svd", "eigh", "eig", "fft",
    "rng_fill", "rng_draw",
)


class Backend(abc.ABC):
    """What the frontend may ask of a backend.  Abstract methods are required; the others
    are optional fast paths whose defaults send the frontend down its generic path."""

    name = ""  # "host", "cuda", "simulated": for reports (``python -m cupynum info``) only
    side = "host"  # where its data lives: "host" (NumPy memory) or "device"

    # capabilities: what the frontend may rely on (never test ``name``) ------------------
    host_memory = False
    """Arrays' bytes are host memory NumPy may view in place (zero-copy NumPy/DLPack
    exchange).  False on a device: host views are copies made by ``to_host``."""
    cuda_memory = False
    """Arrays' bytes are CUDA device memory (``__cuda_array_interface__``, DLPack on a CUDA
    device, user kernels)."""
    gram_svd = False
    """``linalg.svd`` of float32/complex64 stacks is better through the float64 Gram
    matrix's ``eigh`` than through ``svd`` (a GPU's gesvd is slow; see linalg/_linalg.py)."""

    # memory and transfer ----------------------------------------------------------------
    @abc.abstractmethod
    def alloc(self, nbytes: int) -> Any:
        """A new ``Buffer`` of ``nbytes`` bytes on this backend's side (contents undefined),
        64-byte aligned."""

    @abc.abstractmethod
    def from_host(self, host: np.ndarray) -> Any:
        """A new ``Buffer`` on this backend's side holding a copy of the bytes of the
        C-contiguous host array ``host`` (never aliasing it)."""

    @abc.abstractmethod
    def to_host(self, a, out: np.ndarray | None = None) -> np.ndarray:
        """A new C-contiguous NumPy array with the values of array ``a`` (a copy: waits for
        the work that writes ``a``); or ``out``, a C-contiguous writeable host array of
        ``a``'s shape and dtype, filled with them and returned."""

    @abc.abstractmethod
    def write_host(self, a, host: np.ndarray) -> None:
        """Copy the host array ``host`` (``a``'s shape and dtype) into array ``a`` (any
        layout)."""

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Wait until all queued work on the current stream is done."""

    @abc.abstractmethod
    def copy_bytes(self, buf, offset: int, nbytes: int):
        """A new ``Buffer`` on this backend's side holding the ``nbytes`` bytes of Buffer
        ``buf`` from byte ``offset`` (one element read out as an independent value:
        ``x = a[i, j]``)."""

    def lazy_reads(self) -> bool:
        """Whether an element read of device data may wait for its first use now
        (``_backends/elements.py``: a 0-d array pending on the element); False (the
        default): it is copied at once (``copy_bytes``)."""
        return False

    @abc.abstractmethod
    def copy(self, src, dst) -> None:
        """``dst[...] = src``: arrays of one shape (src may have zero strides), any dtypes,
        NumPy's unsafe cast; bit-exact when the dtypes are equal."""

    def copy_ready(self, src, dst) -> None:
        """``copy`` where ``src``'s data is computed (no pending expression: a settled
        Buffer), so no fusion sink is tried: the slice assignment's hot path
        (``_backends.copy_into``).  The default is ``copy``."""
        self.copy(src, dst)

    @abc.abstractmethod
    def fill(self, dst, value: np.generic) -> None:
        """Set every element of array ``dst`` to ``value`` (a NumPy scalar of dst's dtype)."""

    # elementwise --------------------------------------------------------------------------
    @abc.abstractmethod
    def elementwise(self, op: ElementwiseOp, ins: Sequence, outs: Sequence) -> None:
        """Run ``op``; ``ins`` are arrays (broadcast to the outputs' shape) or NumPy
        scalars of the loop dtype; ``outs`` are arrays of the output shape."""

    @abc.abstractmethod
    def contiguous_launcher(self, op: ElementwiseOp, operand_dtypes: tuple):
        """A function ``launch(ins, outs, n)`` running ``op`` over ``n`` elements of
        C-contiguous arrays (the ufunc hot path, resolved once per operand kinds).
        ``operand_dtypes[i]`` is input i's stored dtype, or None for a Python scalar passed
        as is (converted to the loop dtype by the launcher).  When ``op`` has one output,
        ``launch.new(*ins, out, n, nbytes)`` may also be offered: it sets
        ``out._buf = alloc(nbytes)`` and launches (one call less on the hot path), or
        defers it (fusion: then ``launch.new.now``, where offered, never defers, the
        frontend's choice for results below ``fusion.MIN_ELEMENTS``);
        ``launch.packs_python_scalars`` (True) says Python scalars may be passed raw."""

    def layout_launcher(self, op: ElementwiseOp, ins: Sequence, outs: Sequence):
        """A function ``launch(ins, outs)`` running ``op`` on operands of exactly these
        layouts (arrays broadcast to the outputs' shape, scalars), reused while the layout
        repeats; None (the default): the frontend calls ``elementwise`` each time.  A
        launcher that may defer (fusion) offers ``launch.now``, which never does."""
        return None

    @abc.abstractmethod
    def run_fused(self, nodes: Sequence, outs: Sequence) -> None:
        """Compute a pending elementwise graph (``fusion.py``) as one launch.  ``nodes``: a
        ``fusion.Graph``, its ``Node`` objects still to compute (``_shape``, ``dtype``,
        ``op``), each after the nodes it reads; ``nodes.code[j]`` is node j's
        ``(op, *tokens)``: a token ``t >= 0`` is node t's value, ``t < 0`` operand ``~t``
        of ``nodes.ins`` (a ``fusion.Leaf``, an array view to read, or a scalar of the
        op's loop dtype).  ``outs``: ``(node, leaf)`` pairs, the views (allocated, the
        node's shape and dtype) that receive those nodes' values; the other nodes are
        never stored.  The values are the eager path's: the same functors, loop dtypes
        and casts."""

    @abc.abstractmethod
    def run_fused_reduce(self, nodes: Sequence, method: str, src, args: tuple) -> bool:
        """The reduction ``method`` (``"reduce"``, ``"arg_reduce"`` or ``"sqdev_sum"``) of
        this contract called with ``args``, where its input ``src`` (one of ``args``) views
        (``_offset``, ``_shape``, ``_strides``; its dtype) the value of the root (the last
        node) of the pending graph ``nodes`` (as ``run_fused``'s; no node of it is stored):
        one reduction whose loads compute the expression, with the values of computing the
        root and then reducing it.  False: declined (nothing ran), the caller computes the
        root and reduces it."""

    @abc.abstractmethod
    def ufunc_at(self, op: ElementwiseOp, a, positions, values) -> None:
        """NumPy's ``ufunc.at``: ``a.flat[p] = op(a.flat[p], v)`` for each flat element
        index ``p`` of ``positions`` (C-contiguous int64, repeats applied in order) in
        C-contiguous array ``a``; ``values`` is None (unary op), a NumPy scalar of the
        loop's second input dtype or an array of it with ``positions``' shape."""

    # reductions and scans (docs/internals.md, "Reductions and scans") -------------------
    @abc.abstractmethod
    def reduce(self, op: ReduceOp, src, out, axes: tuple, initial=None) -> None:
        """``out[...] = op`` reduced over ``axes`` (sorted) of ``src``, in the
        loop dtype, stored with an unsafe cast; ``out`` has src's shape without ``axes``;
        ``initial`` (a NumPy scalar of the loop dtype) or None.  On a device backend
        ``src`` may be pending (as in ``arg_reduce`` and ``sqdev_sum``): ``fusion.reduce``
        then tries ``run_fused_reduce``."""

    @abc.abstractmethod
    def arg_reduce(self, kind: str, src, out, axes: tuple) -> None:
        """``kind`` ("argmin" / "argmax") of ``src`` over one axis (``axes`` of length 1)
        or over every axis (the C-order flat index); ``out`` int64, src's shape without
        ``axes``."""

    @abc.abstractmethod
    def sqdev_sum(self, src, mean, out, axes: tuple) -> None:
        """var/std: ``out[...] = sum over axes of |src - mean|^2`` computed as NumPy does
        (``x = src - mean`` in src's dtype, then ``x*x`` or ``re*re + im*im``), summed in
        out's dtype.  ``src`` float32/64 or complex, non-empty; ``out`` C-contiguous, src's
        shape without ``axes`` (sorted), src's real dtype; ``mean`` C-contiguous, out's
        shape, src's dtype."""

    @abc.abstractmethod
    def scan(self, op: ReduceOp, src, out, axis: int) -> None:
        """``out[...] = op.accumulate(src, axis)`` in the loop dtype, stored with an unsafe
        cast; ``out`` has src's shape."""

    # gather, scatter, compaction, sort (docs/internals.md) ------------------------------
    @abc.abstractmethod
    def gather(self, src, indices: Sequence, axis: int, out, check: bool):
        """``out[...] = src[(:,) * axis + indices]``: ``indices`` are intp arrays of one
        (broadcast) shape indexing consecutive axes from ``axis``, negative values counted
        from the end.  With ``check``, returns ``(j, value)`` for an out-of-bounds value in
        ``indices[j]`` (``out`` then undefined), else None."""

    def gather_flat(self, src, idx, out):
        """``out[...] = src[idx]`` for a 1-D ``src`` and C-contiguous intp ``idx`` and
        ``out`` of one shape (``a[idx]``, the commonest gather), checked.  Returns None, the
        out-of-bounds index value, or False (the default): not handled, call ``gather``."""
        return False

    @abc.abstractmethod
    def scatter(self, dst, indices: Sequence, axis: int, values, check: bool):
        """``dst[(:,) * axis + indices] = values``, ``values`` an array of the indexed
        shape in dst's dtype (broadcast views allowed, never overlapping ``dst``); repeated
        indices: one of the values wins.  ``check`` and the
        result as ``gather``'s (``dst`` unchanged when an index is out of bounds)."""

    @abc.abstractmethod
    def flatnonzero(self, mask):
        """``(Buffer, count)``: the C-order flat indices (intp) of the True elements of the
        C-contiguous bool array ``mask``; ``count`` a host int (it waits)."""

    def mask_select(self, src, mask):
        """``src[mask]`` for a bool array ``mask`` of ``src``'s shape: ``(Buffer, count)``
        of the selected elements, C-contiguous in src's dtype, or None (the
        default): the frontend takes ``flatnonzero`` and ``gather``."""
        return None

    @abc.abstractmethod
    def sort(self, src, values, indices, stable: bool = False) -> None:
        """Sort each row of C-contiguous ``src`` (rows, n) in NumPy's order (NaNs last):
        ``values`` (src's shape and dtype) gets the sorted values (``stable``: equal values
        keep their order), ``indices`` (intp) a stable argsort; either may be None."""

    @abc.abstractmethod
    def searchsorted(self, a, v, side: str, out) -> None:
        """``out[...] = numpy.searchsorted(a, v, side)``: ``a`` 1-D sorted, ``v`` any
        shape, both one dtype; ``out`` intp of v's shape."""

    # linear algebra (docs/internals.md, "Libraries") ------------------------------------
    # Stacked matrices are (B, m, n) arrays of one float or complex dtype; outputs are
    # C-contiguous; ``info`` results are host int32 arrays (one per matrix, > 0 where the
    # factorisation failed), so these methods wait.
    @abc.abstractmethod
    def matmul(self, a, b, out) -> None:
        """``out[...] = a @ b``: stacks (B, m, k) and (B, k, n) (any strides, batch strides
        may be 0), ``out`` (B, m, n); one dtype, any (bool and integers included)."""

    @abc.abstractmethod
    def solve(self, a, b, x):
        """``x[i] = inv(a[i]) @ b[i]``: ``a`` (B, n, n), ``b`` and ``x`` (B, n, k); info."""

    @abc.abstractmethod
    def lu_diagonal(self, a):
        """LU-factor each matrix of ``a`` (B, n, n), n >= 1, with partial pivoting as
        LAPACK's getrf: host arrays ``(diagonal, pivots, info)``: U's diagonal (B, n) in
        a's dtype, the 1-based pivot rows (B, n) int32, info (B,) int32 (> 0: an exact zero
        pivot).  ``linalg.slogdet`` forms NumPy's sign and log|det| from them."""

    @abc.abstractmethod
    def cholesky(self, a, out, upper: bool):
        """Factor Hermitian positive-definite ``a`` (B, n, n) into ``out`` (B, n, n): the
        factor's triangle (upper or lower) is valid, the other holds garbage (the frontend
        masks it); info (> 0: not positive definite)."""

    @abc.abstractmethod
    def qr(self, a, q, r) -> None:
        """QR of ``a`` (B, m, n): ``r`` (B, k, n), its upper part valid, and ``q`` (B, m, k)
        or None, with k = min(m, n) (reduced) or m (complete, told by the shapes)."""

    @abc.abstractmethod
    def svd(self, a, u, s, vh):
        """Singular values ``s`` (B, n) of ``a`` (B, m, n) with m >= n (the frontend factors
        the conjugate transpose of wide ones), real dtype, descending; ``u`` and ``vh`` None
        (values only) or (B, m, m or n) and (B, n, n) (told by the shapes); info."""

    @abc.abstractmethod
    def eigh(self, a, w, v, lower: bool):
        """Eigenvalues ``w`` (B, n), real, ascending, of Hermitian ``a`` (B, n, n) read from
        its lower or upper triangle; eigenvectors in the columns of ``v`` or None; info."""

    @abc.abstractmethod
    def eig(self, a, w, vr):
        """General eigen-decomposition in LAPACK's convention: ``w`` complex (B, n); ``vr``
        None or (B, n, n) in a's dtype, a real matrix's complex pair (imag(w[j]) > 0)
        packed as vr[:, j] = Re v_j, vr[:, j + 1] = Im v_j; info (> 0: no convergence)."""

    # FFT, random ------------------------------------------------------------------------
    @abc.abstractmethod
    def fft(self, x, out, kind: str, rank: int, forward: bool) -> None:
        """Unnormalised transform over the last ``rank`` axes of ``x`` into ``out``:
        ``kind`` "c2c" (either direction), "r2c" (forward) or "c2r" (backward, ``out``'s
        shape gives the real lengths); complex64/128 and float32/64 as the kind says."""

    @abc.abstractmethod
    def rng_state(self, seed: int) -> Any:
        """A new Philox generator state seeded with ``seed``, for ``rng_fill`` and
        ``rng_draw`` only."""

    @abc.abstractmethod
    def rng_fill(self, state, kind: str, out, param=None) -> None:
        """Fill C-contiguous ``out`` from ``state``'s stream: "uniform" (0, 1] float32/64,
        "normal" (standard) float32/64, "bits" uint32, "poisson" (mean ``param``) int64."""

    @abc.abstractmethod
    def rng_draw(self, state, kind: str, out, params: tuple) -> None:
        """The rejection samplers into C-contiguous ``out`` (``random/_generator.py``
        documents each ``kind`` and its ``params``): parameter arrays hold 1 or
        ``out._size`` elements."""
