"""Fused kernels without a GPU: pending graphs built by fusion.py over buffers of NumPy bytes
become expression trees (cuda/fused.py), their kernel specs and sources; NVRTC compiles
them with the table kernels' options (no FMA contraction).  The values of fused graphs are
checked against NumPy by test_fusion.py on the simulated device and on the GPU."""
from __future__ import annotations

import numpy as np
import pytest

from cupynum._backends import fusion
from cupynum._ufunc import uf
from cupynum._backends.base import ElementwiseOp
from cupynum._backends.buffer import Buffer
from cupynum._backends.cuda import elementwise as ew
from cupynum._backends.cuda import elementwise_source as es
from cupynum._backends.cuda import fused
from helpers import needs_nvrtc

pytestmark = pytest.mark.usefixtures("small_arrays_fuse")


class _Arr:
    """An array's fields over a Buffer of NumPy bytes standing for device memory."""

    def __init__(self, shape, dtype, strides=None, buf=None, offset=0):
        dtype = np.dtype(dtype)
        c = [dtype.itemsize]
        for d in reversed(shape[1:]):
            c.insert(0, c[0] * d)
        self._shape, self.dtype = tuple(shape), dtype
        self._strides = tuple(c) if strides is None else tuple(strides)
        self._size = int(np.prod(shape))
        self._offset = offset
        self._c_contig = strides is None
        self._f_contig = False
        self._buf = buf if buf is not None else Buffer(None, np.empty(max(self._size * dtype.itemsize, 1), np.uint8))


def _op(name, functor, loop):
    """The ufunc's own op for this loop (its functor from the op table)."""
    if name == "where":
        return ElementwiseOp("where", functor, tuple(loop), 3)
    return getattr(uf, name)._op(tuple(loop))


ADD_F, MUL_F, SUB_F, DIV_F = (_op(n, None, "fff") for n in [
    "add", "multiply", "subtract", "true_divide"])
SQRT_F = _op("sqrt", None, "ff")


def _apply(op, ins, shape=None, strides=None):
    arrays = [x for x in ins if hasattr(x, "_buf")]
    shape = shape or arrays[0]._shape
    out = _Arr(shape, np.dtype(op.loop[-1]))
    out._buf = None
    assert fusion.defer("backend", op, ins, out, strides=strides)
    return out


def _spec(root):
    node = root._buf.pending
    graph = fusion._collect(node)
    target = _Arr(node._shape, node.dtype, None if node._c_contig else node._strides)
    key, positions = fused.structure(graph, [(node, target)])
    exprs = fused.exprs_of(graph, positions)
    spec, _ = ew.layout_spec(exprs, (*graph.ins, target), len(graph.ins), node._size)
    return key, spec, graph.ins


def chain9(n=1000):
    a, b, c = (_Arr((n,), np.float32) for _ in range(3))
    f = np.float32
    t = _apply(ADD_F, [_apply(MUL_F, [a, b]), c])
    t = _apply(SUB_F, [_apply(MUL_F, [t, a]), b])
    t = _apply(DIV_F, [t, _apply(ADD_F, [c, f(1.5)])])
    t = _apply(ADD_F, [t, _apply(MUL_F, [_apply(SQRT_F, [a]), f(0.5)])])
    return _apply(SUB_F, [t, _apply(MUL_F, [b, c])])


def stencil(n=64):
    grid = _Arr((n, n), np.float64)
    item, row = 8, 8 * n

    def view(di, dj):
        return _Arr((n - 2, n - 2), np.float64, (row, item), grid._buf,
                    (1 + di) * row + (1 + dj) * item)
    add = _op("add", "add", "ddd")
    t = _apply(add, [view(0, 0), view(-1, 0)])
    for d in [(1, 0), (0, -1), (0, 1)]:
        t = _apply(add, [t, view(*d)])
    return _apply(_op("multiply", "multiply", "ddd"), [t, np.float64(0.2)])


def mixed():
    i8 = _Arr((10, 4), np.int8)
    f2 = _Arr((10, 4), np.float16)
    col = _Arr((10, 4), np.float32, (4, 0))  # a column broadcast along the rows
    wide = _apply(_op("multiply", "multiply", "eee"), [i8, f2])  # int8 cast to the half loop
    cmp = _apply(_op("less", "less", "ff?"), [col, np.float32(0.5)])
    return _apply(_op("where", "where_", "?eee"), [cmp, wide, np.float16(0)])


def complex_chain():
    z = _Arr((7,), np.complex64)
    w = _apply(_op("multiply", "multiply", "FFF"), [z, z])
    w = _apply(_op("add", "add", "FFF"), [w, np.complex64(1 + 2j)])
    return _apply(_op("absolute", "absolute", "Ff"), [w])


def reversed_and_shared():
    a = _Arr((50,), np.float64)
    rev = _Arr((50,), np.float64, (-8,), a._buf, 49 * 8)
    t = _apply(_op("subtract", "subtract", "ddd"), [a, rev])
    u = _apply(_op("multiply", "multiply", "ddd"), [t, t])  # t used twice: computed once
    return _apply(_op("floor_divide", "floor_divide", "ddd"), [u, np.float64(3)])


def integer_bits():
    a, b = _Arr((33,), np.int32), _Arr((33,), np.uint8)
    t = _apply(_op("left_shift", "left_shift", "iii"), [a, b])
    t = _apply(_op("bitwise_xor", "bitwise_xor", "iii"), [t, np.int32(0x5A5A)])
    return _apply(_op("remainder", "remainder", "iii"), [t, a])


GRAPHS = [chain9, stencil, mixed, complex_chain, reversed_and_shared, integer_bits]


def test_chain_structure_reads_each_input_once():
    key, spec, ins = _spec(chain9())
    arrays = [k for k, _ in spec.operands[: spec.nin] if k != "s"]
    assert len(arrays) == 3 and spec.layout == "contig"
    assert sum(k == "s" for k, _ in spec.operands) == 2  # 1.5 and 0.5: parameters
    assert key == _spec(chain9(5000))[0]  # one structure for any size


def test_structure_key_ignores_scalar_values_and_offsets():
    k1 = _spec(stencil(64))[0]
    k2 = _spec(stencil(100))[0]
    assert k1 == k2
    spec = _spec(stencil())[1]
    assert spec.layout == "strided" and spec.nin == 6


def test_shared_subexpressions_are_computed_once():
    _, spec, _ = _spec(reversed_and_shared())
    src = es.kernel_source(spec)
    assert src.count("cpn::subtract{}") == 1


@needs_nvrtc
@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
def test_fused_kernels_compile(graph):
    from cupynum._backends.cuda import compiler

    _, spec, _ = _spec(graph())
    src = es.program_source([spec])
    assert es.kernel_name(spec).startswith("cpn_fused_")
    res = compiler.compile_cubin(src, options=ew.compile_options(), name=ew.PROGRAM_NAME)
    assert res.cubin[:4] == b"\x7fELF"


def test_no_fma_contraction_in_fused_kernels():
    from cupynum._backends.cuda import compiler

    # every program, the table's and the fused ones, goes through compile_cubin's defaults
    assert "--fmad=false" in compiler._DEFAULT_OPTIONS


# --- reductions with the expression as their prologue (cuda/fused_reduction.py) ---------------

def _reduction_program(root, functor, loop, out=None, family="reduce"):
    from cupynum._backends.cuda import fused_reduction as fr
    from cupynum._backends.cuda.reduction import Unit

    node = root._buf.pending
    graph = fusion._collect(node)
    cls, _ = fr.layout(graph, node)
    unit = Unit(family, functor, node.dtype.char, loop, out or loop)
    key = (tuple(graph.code), tuple(graph.kinds), unit, cls)
    return fr.program(key, fused.exprs_of(graph, (len(graph) - 1,)), tuple(graph.kinds), unit,
                      cls), cls


REDUCTIONS = [(chain9, "add", "f", "contig"), (chain9, "maximum", "f", "contig"),
              (stencil, "add", "d", "nd"), (mixed, "logical_or", "?", "nd"),
              (mixed, "add", "l", "nd"), (complex_chain, "add", "f", "contig"),
              (reversed_and_shared, "multiply", "d", "nd"), (integer_bits, "add", "l", "contig"),
              (chain9, "argmax", "f", "contig", "l", "arg"),
              (stencil, "argmin", "d", "nd", "l", "arg"),
              (mixed, "argmax", "e", "nd", "l", "arg"),
              (chain9, "add", "f", "contig", "f", "sqdev"),
              (stencil, "add", "d", "nd", "d", "sqdev")]


@needs_nvrtc
@pytest.mark.parametrize("case", REDUCTIONS,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}-{c[3]}" for c in REDUCTIONS])
def test_fused_reduction_kernels_compile_with_param_sizes(case):
    from cupynum._backends.cuda import compiler, reduction
    from test_kernels_compile import param_sizes

    graph, functor, loop, cls, *rest = case
    prog, got_cls = _reduction_program(graph(), functor, loop, *rest)
    assert got_cls == cls
    res = compiler.compile_cubin(prog.source, options=reduction.compile_options(),
                                 name=reduction.PROGRAM_NAME)
    for name in prog.names.values():
        assert param_sizes(res.cubin, name) == [dt.itemsize for dt in prog.dtypes], name


def test_fused_reduction_structure_ignores_sizes_and_scalar_values():
    p1, _ = _reduction_program(chain9(1000), "add", "f")
    p2, _ = _reduction_program(chain9(5000), "add", "f")
    assert p1.source == p2.source
