"""A translated functor as an op of the elementwise engine.

The functor is an op like a table functor, ``ElementwiseOp(None, <struct name>, loop,
nin)``, whose struct the engine's programs include (``elementwise_source.add_functor``):
the device backend runs it as it runs a ufunc (any layout, deferral and fusion with the ops
around it, the reductions that consume it) and compiles it through the same kernel cache
(memory and disk: a second process loads the cubin without compiling).

Nothing here needs a GPU (tests compile the programs with NVRTC, and with the host
compiler under a CUDA shim).
"""
from __future__ import annotations

from .._backends.base import ElementwiseOp
from .translate import Translation


def op(tr: Translation) -> ElementwiseOp:
    """The translation as an elementwise op (its struct made known to the engine)."""
    from .._backends.cuda import elementwise_source as es

    es.add_functor(tr.name, tr.source, tr.complex)
    return ElementwiseOp(None, tr.name, tr.in_chars + (tr.out_char,), len(tr.in_chars))


def spec(tr: Translation, scalars):
    """The engine's contiguous KernelSpec of the op alone: ``scalars[i]`` True where input
    i is passed by value."""
    from .._backends.cuda import elementwise_source as es

    operands = tuple(("s" if s else "a", c) for s, c in zip(scalars, tr.in_chars))
    return es.KernelSpec(es.op_exprs(op(tr)), operands + (("a", tr.out_char),),
                         len(tr.in_chars), "contig")


def program(kspecs) -> str:
    """One NVRTC program of the engine's kernels for ``kspecs``, with the functors' structs."""
    from .._backends.cuda import elementwise_source as es

    return es.program_source(list(kspecs))
