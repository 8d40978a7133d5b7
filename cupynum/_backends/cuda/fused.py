"""A flushed fusion graph (``_backends/fusion.py``) as one generated elementwise kernel.

The graph becomes the expression trees of ``elementwise_source`` (``Node(op, children)``
over ``Input(i)``, written for this): one tree per stored node, each distinct array view
one input (read once per element), each scalar one by-value parameter.  The trees and the
operands' kinds and dtypes are the structure key; pointers, scalar values, offsets and
strides are parameters, so a loop that builds the same expression each time compiles once
(``elementwise.get_kernel``: NVRTC with the table kernels' options, ``--fmad=false``, and
the disk cache, which serves the next process).  The values are the eager path's bit for
bit: the same functors, loop dtypes and casts (``elementwise_source._body`` rounds every
intermediate to its loop dtype), no FMA contraction.

A structure is compiled when it is seen ``tuning.FUSION.compile_after`` times; until then,
and for good if NVRTC rejects it (logged once), the graph runs op by op with the table
kernels, intermediates in temporaries.  ``elementwise.run`` chooses the layout: the
contiguous kernel when every operand is C-contiguous of one shape, else the strided one
(broadcast and negative strides included).
"""
from __future__ import annotations

import logging

from .. import fusion
from . import copy_fill, memory, runtime, tuning, view
from . import elementwise as ew
from .elementwise_source import Input, _dtype
from .elementwise_source import Node as Expr

_log = logging.getLogger("cupynum.fusion")

_seen: dict = {}  # structure key -> times seen, until compiled
_canonical: dict = {}  # structure key -> its trees (one object: elementwise.run's plans key)
_failed: set = set()  # structure keys NVRTC rejected
_CACHE_SIZE = 4096


def structure(graph, outs):
    """``(key, outputs)`` of a flushed graph (a ``fusion.Graph``): the key is its code, its
    operands' kinds and dtypes and which nodes it stores; ``outputs`` are those nodes'
    positions in the graph."""
    positions = tuple(graph.index(node) for node, _ in outs)
    return (tuple(graph.code), tuple(graph.kinds), positions), positions


def exprs_of(graph, positions) -> tuple:
    """The ``elementwise_source`` trees of the stored nodes: ``Node(op, children)`` over
    ``Input(i)`` (operand i of ``graph.ins``); a node read twice is one tree object."""
    trees = []
    for code in graph.code:
        op, tokens = code[0], code[1:]
        trees.append(Expr(op, tuple(trees[t] if t >= 0 else Input(~t) for t in tokens)))
    return tuple(trees[p] for p in positions)


def run(nodes, outs) -> None:
    """``Backend.run_fused`` on the CUDA backend: one kernel (or, until the structure is
    compiled, the table kernels op by op), on the stream current when the root was made."""
    stream = nodes[-1].stream
    if stream is not None and stream[0] != runtime.current_stream():
        cur = runtime.current_stream(), runtime.current_stream_owner()
        runtime.set_current_stream(*stream)
        try:
            _run(nodes, outs)
        finally:
            runtime.set_current_stream(*cur)
        return
    _run(nodes, outs)


def _run(graph, outs) -> None:
    key, positions = structure(graph, outs)
    kernel = _contig_kernels.get(key)  # (a loop's statement: compiled and contiguous)
    if kernel is not None and _launch_contiguous(kernel, graph.ins, outs):
        return
    exprs = _canonical.get(key)
    if exprs is None:
        seen = _seen.get(key, 0) + 1
        if len(_seen) >= _CACHE_SIZE:
            _seen.clear()
        _seen[key] = seen
        if seen >= tuning.FUSION.compile_after and key not in _failed:
            if len(_canonical) >= _CACHE_SIZE:
                _canonical.clear()
            exprs = _canonical[key] = exprs_of(graph, positions)
    if exprs is not None:
        try:
            if not _contiguous(key, exprs, graph.ins, outs):
                ew.run(exprs, graph.ins, [target for _, target in outs])
            return
        except Exception as e:  # noqa: BLE001 - NVRTC's error, or no NVRTC at all
            from .compiler import CompileError

            if not isinstance(e, (CompileError, OSError, ImportError)):
                raise
            if not _failed:
                _log.warning("cupynum: a fused kernel did not compile; such expressions run "
                             "op by op (%s)", str(e).splitlines()[0] if str(e) else type(e))
            _failed.add(key)
            _canonical.pop(key, None)
    op_by_op(graph, outs)


def _contiguous(key, exprs, ins, outs) -> bool:
    """Launch the compiled structure ``key`` when every array operand is C-contiguous of
    the output's shape (the common case: its contiguous kernel, no layout work, as the hot
    path's launchers); False otherwise (``elementwise.run`` lays it out)."""
    kernel = _contig_kernels.get(key)
    if kernel is None:
        if not all(x._c_contig for x in ins if hasattr(x, "_buf")) or not all(
                t._c_contig for _, t in outs):
            return False
        n = outs[0][1]._size
        spec, _ = ew.layout_spec(exprs, (*ins, *(t for _, t in outs)), len(ins), n)
        if spec.layout != "contig":
            return False
        if len(_contig_kernels) >= _CACHE_SIZE:
            _contig_kernels.clear()
        kernel = _contig_kernels[key] = (ew.prepared(spec), ew._chunk(spec), ew._grid_cap())
    return _launch_contiguous(kernel, ins, outs)


def _launch_contiguous(kernel, ins, outs) -> bool:
    """Launch ``kernel`` (a ``_contig_kernels`` entry) over ``ins`` into ``outs``; False,
    launching nothing, where an array among them is not C-contiguous."""
    values = []
    for x in ins:
        if hasattr(x, "_buf"):
            if not x._c_contig:
                return False
            values.append(view.dptr(x))
        elif x.dtype.kind == "c":
            values += (x.real, x.imag)
        else:
            values.append(x)
    for _, target in outs:
        if not target._c_contig:
            return False
        values.append(view.dptr(target))
    n = outs[0][1]._size
    p, chunk, cap = kernel
    values.append(n)
    grid = (n + chunk - 1) // chunk  # (ew._grid, its chunk and cap kept with the kernel)
    p.launch(values, grid if grid < cap else cap, ew.BLOCK)
    return True


# structure key -> (Prepared contiguous kernel, elements per block step, most blocks)
_contig_kernels: dict = {}


def op_by_op(graph, outs) -> None:
    """The graph as the eager path runs it: one table kernel per node, intermediates in
    temporaries of the pool."""
    targets = {id(node): target for node, target in outs}
    values = []
    pool = memory.get_pool()
    ins = graph.ins
    for node, code in zip(graph, graph.code):
        target = targets.get(id(node))
        if target is None:
            target = view.empty(node._shape, node.dtype, pool.malloc)
        ew.launch_elementwise(node.op, [values[t] if t >= 0 else ins[~t] for t in code[1:]],
                              [target])
        values.append(target)


def loop_scalars(op, ins):
    """``ins`` with Python scalars as NumPy scalars of the op's loop dtypes (the values the
    launchers would pack: NumPy's conversion, raising where it raises)."""
    out = []
    for i, x in enumerate(ins):
        if not hasattr(x, "_buf"):
            t = _dtype(op.loop[i]).type
            if type(x) is not t:
                x = t(x)
        out.append(x)
    return out


def current_stream():
    """``(handle, owner)`` of this thread's stream when it is not the legacy default one
    (a pending node runs there), else None."""
    if runtime.nondefault_streams:
        cur = runtime.current_stream(), runtime.current_stream_owner()
        return cur if cur[0] else None
    return None


def deferring_new(backend, op, operand_dtypes, eager):
    """The contiguous launcher's ``new`` (see ``fusion.deferring_new``) with Python scalars
    converted to the loop dtypes first (the hot path passes them raw to the packer)."""
    if all(dt is not None for dt in operand_dtypes):
        return fusion.deferring_new(backend, op, eager, current_stream)
    types = [None if dt is not None else _dtype(op.loop[i]).type
             for i, dt in enumerate(operand_dtypes)]
    defer = fusion.defer

    def new(*args):
        if args[-2] >= fusion.MIN_ELEMENTS and args[-2]:  # (small results run at once)
            ins = [x if t is None or type(x) is t else t(x) for t, x in zip(types, args)]
            if defer(backend, op, ins, args[-3], current_stream()):
                return
        eager(*args)

    new.now = eager
    return new


def copy(src, dst) -> None:
    """The backend's ``copy`` with fusion on: a pending ``src`` (``B[1:-1] = expr``)
    computes straight into ``dst`` when it can (``fusion.sink``), else the copy kernel."""
    if src._buf.pending is None or not fusion.sink(src, dst):
        copy_fill.copy(src, dst)
