"""Fused kernels run on the CPU: pending graphs (fusion.py) over NumPy memory become the
generated kernel of cuda/fused.py, which is compiled with the host C++ compiler under the
CUDA shim of test_elementwise_host.py and launched through the engine's own parameter
blocks (``elementwise.run``, and the contiguous fast path of ``fused._contiguous``).  The
values are compared with NumPy's op-by-op evaluation, bit for bit: the same functors, loop
dtypes and casts, no contraction (``-ffp-contract=off``)."""
from __future__ import annotations

import numpy as np
import pytest

from cupynum._backends import fusion
from cupynum._backends.base import ElementwiseOp
from cupynum._backends.buffer import Buffer
from cupynum._backends.cuda import elementwise as ew
from cupynum._backends.cuda import fused, launch
from cupynum._ufunc import uf
from shim import CXX, HostArray
from test_elementwise_host import _build, _host_get_kernel

pytestmark = [pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)"),
              pytest.mark.usefixtures("small_arrays_fuse")]
rng = np.random.default_rng(5)


class _Val:
    """A pending result over NumPy memory, and NumPy's value of it."""

    def __init__(self, arr, want):
        self.arr, self.want = arr, want


_alive = []  # the NumPy memory of the graphs' inputs (a Leaf keeps only its address)


def _leaf(a: np.ndarray) -> HostArray:
    h = HostArray(a)
    h._f_contig = a.flags.f_contiguous
    _alive.append(a)
    return h


def _apply(op, *ins):
    """Defer ``op`` over ``ins`` (``_Val``, NumPy arrays or scalars); NumPy computes it too,
    as the eager path does (``_run_ufunc``)."""
    args, vals = [], []
    for x in ins:
        if isinstance(x, _Val):
            args.append(x.arr)
            vals.append(x.want)
        elif isinstance(x, np.ndarray):
            args.append(_leaf(x))
            vals.append(x)
        else:
            args.append(x)
            vals.append(x)
    shape = np.broadcast_shapes(*[np.shape(v) for v in vals if isinstance(v, np.ndarray)])
    with np.errstate(all="ignore"):
        if op.ufunc == "where":
            want = np.where(*vals).astype(op.loop[-1])
        else:
            want = getattr(np, op.ufunc)(*vals, signature=tuple(np.dtype(c) for c in op.loop),
                                         casting="unsafe")
    out = _leaf(np.empty(shape, op.loop[-1]))
    views = [_leaf(np.broadcast_to(x.np, shape)) if isinstance(x, HostArray) else x
             for x in args]
    strides = [getattr(v, "_strides", None) for v in views]
    assert fusion.defer("cpu", op, args, out, strides=strides)
    return _Val(out, want)


def _op(name, loop):
    if name == "where":
        return ElementwiseOp("where", "where_", tuple(loop), 3)
    return getattr(uf, name)._op(tuple(loop))


def chain():
    a, b, c = (rng.uniform(0.5, 2, 1001).astype(np.float32) for _ in range(3))
    mul, add, sub, div = (_op(n, "fff") for n in ("multiply", "add", "subtract",
                                                  "true_divide"))
    f = np.float32
    t = _apply(add, _apply(mul, a, b), c)
    t = _apply(sub, _apply(mul, t, a), b)
    t = _apply(div, t, _apply(add, c, f(1.5)))
    t = _apply(add, t, _apply(mul, _apply(_op("sqrt", "ff"), a), f(0.5)))
    return _apply(sub, t, _apply(mul, b, c))


def stencil():
    g = rng.standard_normal((30, 41))
    add = _op("add", "ddd")
    t = _apply(add, g[1:-1, 1:-1], g[:-2, 1:-1])
    for v in (g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]):
        t = _apply(add, t, v)
    return _apply(_op("multiply", "ddd"), t, np.float64(0.2))


def half_chain():
    x = rng.uniform(-3, 3, (7, 9)).astype(np.float16)
    col = rng.uniform(-1, 1, (7, 1)).astype(np.float16)
    t = _apply(_op("multiply", "eee"), x, col)  # a broadcast column
    t = _apply(_op("add", "eee"), t, np.float16(0.1))  # rounds to half after every op
    return _apply(_op("exp", "ee"), _apply(_op("negative", "ee"), t))


def mixed():
    i8 = rng.integers(-100, 100, (12, 5)).astype(np.int8)
    f4 = rng.standard_normal((12, 5)).astype(np.float32)
    w = _apply(_op("multiply", "fff"), i8, f4)  # int8 cast to the float loop
    cond = _apply(_op("less", "ff?"), w, np.float32(0.0))
    return _apply(_op("where", "?fff"), cond, w, np.float32(-1.0))


def complex_chain():
    z = (rng.standard_normal(17) + 1j * rng.standard_normal(17)).astype(np.complex64)
    w = _apply(_op("multiply", "FFF"), z, z)
    w = _apply(_op("add", "FFF"), w, np.complex64(1 + 2j))
    return _apply(_op("subtract", "FFF"), w, z)  # (absolute: within an ULP, not exact)


def reversed_and_shared():
    a = rng.standard_normal(50)
    t = _apply(_op("subtract", "ddd"), a, a[::-1])
    u = _apply(_op("multiply", "ddd"), t, t)  # t twice: one tree, computed once
    return _apply(_op("floor_divide", "ddd"), u, np.float64(0.3))


def integer_bits():
    a = rng.integers(-1000, 1000, 33).astype(np.int32)
    s = rng.integers(0, 8, 33).astype(np.int32)
    t = _apply(_op("left_shift", "iii"), a, s)
    t = _apply(_op("bitwise_xor", "iii"), t, np.int32(0x5A5A))
    return _apply(_op("remainder", "iii"), t, np.int32(7))


GRAPHS = [chain, stencil, half_chain, mixed, complex_chain, reversed_and_shared, integer_bits]


def _launch(val):
    """Run the fused kernel of ``val``'s graph into a fresh array (as fused.run does once the
    structure is compiled); the array."""
    node = val.arr._buf.pending
    graph = fusion._collect(node)
    out = np.zeros(node._shape, node.dtype)
    target = _leaf(out)
    key, positions = fused.structure(graph, [(node, target)])
    exprs = fused.exprs_of(graph, positions)
    if not fused._contiguous(key, exprs, graph.ins, [(node, target)]):
        ew.run(exprs, graph.ins, [target])
    return out


@pytest.fixture(scope="module")
def cpu_engine():
    """The engine's launch points patched to run host-compiled kernels, built once for the
    kernels the graphs need (a dry run collects them)."""
    mp = pytest.MonkeyPatch()
    specs, lib = [], [None]

    def raw(func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        func(params, gx, bx)
        return (0,)

    mp.setattr(ew, "get_kernel", _host_get_kernel(specs, lib))
    mp.setattr(launch, "_drv", (raw, None, lambda: 0))
    mp.setattr(ew, "_cap", 3)
    mp.setattr(fusion, "MIN_ELEMENTS", 0)  # (the graphs are small)
    for name in ("_prepared", "_plans"):
        mp.setattr(ew, name, {})
    mp.setattr(fused, "_contig_kernels", {})
    for graph in GRAPHS:
        _launch(graph())
    lib[0] = _build(specs)
    for name in ("_prepared", "_plans"):
        mp.setattr(ew, name, {})
    mp.setattr(fused, "_contig_kernels", {})
    yield
    mp.undo()


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
def test_fused_kernel_equals_numpy_bit_for_bit(cpu_engine, graph):
    val = graph()
    got = _launch(val)
    want = np.asarray(val.want)
    assert got.dtype == want.dtype and got.shape == want.shape
    u = np.dtype(f"u{got.dtype.itemsize // (2 if got.dtype.kind == 'c' else 1)}")
    assert np.array_equal(np.ascontiguousarray(got).view(u), np.ascontiguousarray(want).view(u))
