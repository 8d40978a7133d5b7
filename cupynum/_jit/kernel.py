"""A translated functor as a CUDA elementwise kernel.

The functor is an op like a table functor: ``ElementwiseOp(None, <struct name>, loop,
nin)`` in a one-node expression tree, so the elementwise engine's kernel text
(``elementwise_source``: the flat grid-stride loop with 16-byte vector loads) computes it.
The program is that kernel's text with the functor's struct placed before it; it compiles
through the CUDA backend's compiler and its kernel cache (memory and disk: a second process
loads the cubin without compiling).  Operands are C-contiguous arrays of the loop dtypes
(the caller makes them so) or NumPy scalars passed by value.

Everything but ``launch`` runs without a GPU (tests compile the program with NVRTC, and with
the host compiler under a CUDA shim).
"""
from __future__ import annotations

import numpy as np

from .._backends.base import ElementwiseOp
from .translate import Translation


def op(tr: Translation) -> ElementwiseOp:
    return ElementwiseOp(None, tr.name, tr.in_chars + (tr.out_char,), len(tr.in_chars))


def spec(tr: Translation, scalars):
    """The engine's KernelSpec: ``scalars[i]`` True where input i is passed by value."""
    from .._backends.cuda import elementwise_source as es

    operands = tuple(("s" if s else "a", c) for s, c in zip(scalars, tr.in_chars))
    return es.KernelSpec(es.op_exprs(op(tr)), operands + (("a", tr.out_char),),
                         len(tr.in_chars), "contig")


def program(translations, kspecs) -> str:
    """One NVRTC program: the engine's includes, the functors, the engine's kernels."""
    from .._backends.cuda import elementwise_source as es

    text = es.program_source(list(kspecs))
    include, rest = text.split("\n", 1)
    if any(t.complex for t in translations):  # (complex values inside a real function)
        include = '#include "cpn/complex.cuh"'
    functors = "".join(dict.fromkeys(t.source for t in translations))
    return f"{include}\n{functors}{rest}"


# KernelSpec -> (kernel, elements per block and grid step, its module: the module keeps the
# cubin image alive for as long as the library may read it)
_loaded: dict = {}


def _prepared(tr, kspec):
    got = _loaded.get(kspec)
    if got is None:
        from .._backends.cuda import compiler, elementwise, runtime
        from .._backends.cuda import elementwise_source as es

        compiled = compiler.compile_cubin(program([tr], [kspec]),
                                          options=elementwise.compile_options(),
                                          name="cupynum_vectorize.cu")
        module = runtime.load_module(compiled.cubin)
        func = module.get_function(es.kernel_name(kspec))
        got = _loaded[kspec] = (func, es.BLOCK * es.vector_width(kspec), module)
    return got


def launch(tr: Translation, ins, out) -> None:
    """Run the kernel: ``ins`` C-contiguous ndarrays of the input chars or NumPy scalars of
    them, ``out`` a C-contiguous ndarray of ``tr.out_char`` (of the broadcast shape)."""
    from .._backends.cuda import elementwise, runtime, tuning
    from .._backends.cuda.elementwise_source import BLOCK

    n = out._size
    if n == 0:
        return
    kspec = spec(tr, [not hasattr(x, "_buf") for x in ins])
    func, chunk, _ = _prepared(tr, kspec)
    pb, pack = elementwise.param_block(kspec)  # (one per call: calls may come from threads)
    values = []
    for x in (*ins, out):
        if hasattr(x, "_buf"):
            values.append(x._address())
        elif np.iscomplexobj(x):
            values += (x.real, x.imag)
        else:
            values.append(x)
    values.append(n)
    pack(memoryview(pb._data).cast("B"), 0, *values)
    grid = min(-(-n // chunk), runtime.multiprocessor_count() * tuning.ELEMENTWISE.blocks_per_sm)
    runtime.launch(func, grid, BLOCK, 0, runtime.current_stream(), pb.address)
