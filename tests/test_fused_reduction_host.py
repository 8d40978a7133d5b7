"""Reductions with an elementwise prologue (cuda/fused_reduction.py) run on the CPU.

Pending graphs over NumPy memory (built as in test_fused_kernels_host.py) are reduced by the
generated fused reduction kernels, compiled with the host C++ compiler under the fiber shim
of test_reduction_kernels_host.py and launched through the engine's own plans, with the
planner forced to several slices (so the two-pass paths, rows + rows_part and cols +
cols_part, run at small sizes).  The result must equal, bit for bit, the unfused path: the
same reduction engine over the expression's value stored in an array (NumPy computes that
value, bit for bit the fused elementwise kernel's: test_fused_kernels_host.py).  Float sums
are where this bites: any change in which elements a thread loads, or in the combination
order, changes the last bits.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cupynum._backends import fusion
from cupynum._backends.base import ReduceOp
from cupynum._backends.cuda import fused_reduction as fr
from cupynum._backends.cuda import launch, tuning
from cupynum._backends.cuda import reduction as red
from cupynum._ops import BY_NAME, neutral_element
from shim import CXX, HostArray
from test_fused_kernels_host import _apply, _op
from test_reduction_kernels_host import _Tmp, build_source

pytestmark = [pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)"),
              pytest.mark.usefixtures("small_arrays_fuse")]
rng = np.random.default_rng(23)


def _aligned(a: np.ndarray) -> np.ndarray:
    """A C-ordered copy of ``a`` at a 256-byte aligned address, as a pool allocation is
    (the head of a row before the 16-byte vector loads depends on it)."""
    raw = np.empty(a.nbytes + 256, np.uint8)
    start = (-raw.ctypes.data) % 256
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class _View:
    """Fields of a view (offset, shape, strides) of the array ``base`` (a HostArray, or a
    pending result's fields)."""

    def __init__(self, base, offset, shape, strides):
        self._buf, self.dtype = base._buf, base.dtype
        self._offset, self._shape, self._strides = offset, tuple(shape), tuple(strides)
        self._size = int(np.prod(shape))
        self._c_contig = self._f_contig = False


def _np_view(a: np.ndarray, offset, shape, strides) -> np.ndarray:
    """The view of C-contiguous ``a``'s bytes that the fields describe."""
    return np.ndarray(shape, a.dtype, buffer=a.reshape(-1).view(np.uint8), offset=offset,
                      strides=strides)


def _reduce_op(name, loop):
    dt = np.dtype(loop)
    return ReduceOp(name, BY_NAME[name].functor, dt.char, neutral_element(BY_NAME[name], dt))


# --- graphs: (pending value, views of it to reduce) --------------------------------------------

def product_f4():
    a, b = (rng.uniform(-2, 2, (40, 300)).astype(np.float32) for _ in range(2))
    return _apply(_op("multiply", "fff"), a, b)


def chain_f8():
    a, b = (rng.standard_normal((37, 211)) for _ in range(2))
    t = _apply(_op("multiply", "ddd"), _apply(_op("add", "ddd"), a, np.float64(0.5)), b)
    return _apply(_op("subtract", "ddd"), t, _apply(_op("sqrt", "dd"), np.abs(a)))


def broadcast_and_reversed():
    """operands that are not dense like the result: the nd layout"""
    x = rng.standard_normal((64, 90)).astype(np.float32)
    col = rng.standard_normal((64, 1)).astype(np.float32)
    t = _apply(_op("multiply", "fff"), x[:, ::-1], col)
    return _apply(_op("add", "fff"), t, x[::-1, :])


def int8_product():
    """int8 * int8 wraps in int8; its sum is int64 (NumPy's promotion)"""
    a, b = (rng.integers(-128, 128, (50, 123)).astype(np.int8) for _ in range(2))
    return _apply(_op("multiply", "bbb"), a, b)


def half_sum():
    x = rng.uniform(-4, 4, 3001).astype(np.float16)
    return _apply(_op("multiply", "eee"), x, np.float16(1.25))


def comparison():
    x = rng.standard_normal(5000).astype(np.float32)
    return _apply(_op("greater", "ff?"), x, np.float32(2.0))


def complex_product():
    z = (rng.standard_normal(777) + 1j * rng.standard_normal(777)).astype(np.complex64)
    return _apply(_op("multiply", "FFF"), z, z)


def _views(val):
    """The pending array itself and a few views of it (slices, a transpose, a reversal)."""
    arr = val.arr
    shape, st = arr._shape, arr._strides
    yield arr, val.want
    if len(shape) == 2:
        yield _View(arr, 0, shape[::-1], st[::-1]), val.want.T
        r0 = 3 * st[0] + st[1]
        yield _View(arr, r0, (shape[0] - 5, shape[1] // 2), (st[0], 2 * st[1])), \
            val.want[3:-2, 1::2][:, :shape[1] // 2]
    else:
        n = shape[0]
        yield _View(arr, st[0], ((n - 2),), st), val.want[1:-1]
        yield _View(arr, (n - 1) * st[0], (n,), (-st[0],)), val.want[::-1]


CASES = [
    (product_f4, "add", "f"), (product_f4, "maximum", "f"), (product_f4, "multiply", "d"),
    (chain_f8, "add", "d"), (chain_f8, "minimum", "d"),
    (broadcast_and_reversed, "add", "f"),
    (int8_product, "add", "l"), (int8_product, "maximum", "b"),
    (half_sum, "add", "e"), (half_sum, "add", "f"),
    (comparison, "logical_or", "?"), (comparison, "add", "l"),
    (complex_product, "add", "F"),
]


@pytest.fixture(scope="module")
def cpu_engine():
    """The reduction engine's launch points patched to run host-built kernels: the table
    reductions' programs and each fused program, built when first asked for."""
    mp = pytest.MonkeyPatch()
    libs, funcs = {}, {}
    launched = []

    def host_func(src, name):
        f = funcs.get(name)
        if f is None:
            lib = libs.get(src)
            if lib is None:
                lib = libs[src] = build_source(src)
            f = funcs[name] = getattr(lib, f"host_{name}")
            f.argtypes, f.restype = (ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint), None
        return (name, f)

    def raw(func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        assert (gz, by, bz, shmem, extra, bx) == (1, 1, 1, 0, 0, red.BLOCK)
        launched.append(func[0])
        func[1](params, gx, gy)
        return (0,)

    def split(space, work, min_chunk, cap=1 << 30):
        return max(1, min(4, work // 500, cap))  # a few short slices: both passes run

    mp.setattr(red, "get_kernel", lambda unit, kind: host_func(
        red.program_source([unit]), red.kernel_names(unit)[kind]))
    mp.setattr(fr, "get_kernel", lambda prog, kind: host_func(prog.source, prog.names[kind]))
    mp.setattr(launch, "_drv", (raw, None, lambda: 0))
    mp.setattr(red, "_sms", 1)
    mp.setattr(red, "_split", split)
    mp.setattr(red, "_alloc", _Tmp)
    for mod, names in ((red, ("_prepared", "_plans")),
                       (fr, ("_plans", "_programs", "_seen"))):
        for name in names:
            mp.setattr(mod, name, {})
    mp.setattr(fr, "_declined", set())
    with tuning.overridden("FUSION", compile_after=1):
        yield launched
    mp.undo()


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(np.ascontiguousarray(got).reshape(-1).view(np.uint8),
                          np.ascontiguousarray(want).reshape(-1).view(np.uint8))


def _fused(node, method, src, args):
    """``fr.run``, checking that a decline is the rule's: a rows pass over an ``nd``
    prologue (each element's operand offsets by division: slower than computing the
    expression first, on the H200)."""
    graph = fusion._collect(node)
    ok = fr.run(graph, method, src, args)
    assert ok or fr.layout(graph, graph[-1])[0] == "nd"
    return ok


@pytest.mark.parametrize("graph, name, loop", CASES,
                         ids=[f"{g.__name__}-{n}-{c}" for g, n, c in CASES])
def test_fused_reduction_equals_the_reduction_of_the_stored_value(cpu_engine, graph, name,
                                                                  loop):
    val = graph()
    node = val.arr._buf.pending
    stored = _aligned(np.asarray(val.want, node.dtype))
    op = _reduce_op(name, loop)
    odt = np.dtype(loop)
    for src, want in _views(val):
        off = src._offset
        svals = _np_view(stored, off, src._shape, src._strides)
        nd = len(src._shape)
        for axes in {tuple(range(nd)), (0,), (nd - 1,)}:
            kept = tuple(n for d, n in enumerate(src._shape) if d not in axes)
            got = np.full(kept, 7, odt)
            o = HostArray(got)
            if not _fused(node, "reduce", src, (op, src, o, axes, None)):
                continue
            eager = np.full(kept, 9, odt)
            red.reduce(op, HostArray(svals), HostArray(eager), axes)
            _same_bits(got, eager)
            with np.errstate(all="ignore"):  # and NumPy agrees (to summation error)
                ref = getattr(np, name).reduce(svals, axis=axes, dtype=odt)
            if name == "add" and odt.kind in "fc":  # within a summation error bound
                mag = np.add.reduce(np.abs(svals), axis=axes, dtype=np.float64)
                eps = np.finfo(odt).eps
                assert np.all(np.abs(got - ref) <= 64 * eps * mag + 1e-30)
            elif name == "multiply":
                np.testing.assert_allclose(got, ref, rtol=1e-9)
            else:
                np.testing.assert_array_equal(got, ref)


def test_initial_and_a_second_call_reuse_the_plan(cpu_engine):
    val = product_f4()
    node = val.arr._buf.pending
    op = _reduce_op("add", "f")
    out = np.zeros((), np.float32)
    init = np.float32(10.0)
    o = HostArray(out)
    for _ in range(2):
        assert fr.run(fusion._collect(node), "reduce", val.arr, (op, val.arr, o, (0, 1), init))
    eager = np.zeros((), np.float32)
    red.reduce(op, HostArray(_aligned(val.want)), HostArray(eager), (0, 1), init)
    _same_bits(out, eager)


@pytest.mark.parametrize("shape, axes, kinds", [
    ((20000,), (0,), ["rows", "rows_part"]),  # one long row: per-slice partials, then one
    ((300, 100), (1,), ["rows32"]),  # many short rows: a warp a row
    ((3000, 5), (1,), ["cols"]),  # rows too short for a warp: a thread a row
    ((3000, 8), (0,), ["cols", "cols_part"]),  # kept positions innermost
])
def test_each_first_pass_takes_the_prologue(cpu_engine, shape, axes, kinds):
    a, b = (rng.standard_normal(shape) for _ in range(2))
    val = _apply(_op("multiply", "ddd"), a, b)
    op = _reduce_op("add", "d")
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    got, eager = np.zeros(kept), np.zeros(kept)
    del cpu_engine[:]
    o = HostArray(got)
    assert fr.run(fusion._collect(val.arr._buf.pending), "reduce", val.arr,
                  (op, val.arr, o, axes, None))
    assert [k.rsplit("__", 1)[1] for k in cpu_engine] == kinds
    assert all(k.startswith("cpn_redfused_") == (k.rsplit("__", 1)[1] in fr.FIRST)
               for k in cpu_engine)
    red.reduce(op, HostArray(_aligned(val.want)), HostArray(eager), axes)
    _same_bits(got, eager)


def test_an_nd_prologue_fuses_into_cols_passes_only(cpu_engine):
    """A broadcast operand makes the prologue ``nd``: reduced along the kept positions'
    columns (axis 0) it runs fused; along rows (axis 1, all axes) the plan declines and
    nothing is compiled or launched (the caller computes the expression, then reduces)."""
    val = broadcast_and_reversed()
    node, src = val.arr._buf.pending, val.arr
    graph = fusion._collect(node)
    assert fr.layout(graph, graph[-1])[0] == "nd"
    op = _reduce_op("add", "f")
    for axes in ((1,), (0, 1)):
        del cpu_engine[:]
        kept = tuple(n for d, n in enumerate(src._shape) if d not in axes)
        args = (op, src, HostArray(np.zeros(kept, "f")), axes, None)
        assert not fr.run(graph, "reduce", src, args)
        assert cpu_engine == []
        with pytest.MonkeyPatch.context() as m:  # again: declined before any layout
            m.setattr(fr, "layout", None)
            assert not fr.run(graph, "reduce", src, args)
    del cpu_engine[:]
    got, eager = np.zeros(90, np.float32), np.zeros(90, np.float32)
    assert fr.run(graph, "reduce", src, (op, src, HostArray(got), (0,), None))
    assert cpu_engine[0].startswith("cpn_redfused_") and cpu_engine[0].endswith("__cols")
    red.reduce(op, HostArray(_aligned(np.asarray(val.want, np.float32))), HostArray(eager),
               (0,))
    _same_bits(got, eager)


@pytest.mark.parametrize("graph", [product_f4, chain_f8, broadcast_and_reversed, int8_product,
                                   half_sum, comparison, complex_product],
                         ids=lambda g: g.__name__)
def test_fused_arg_reductions_equal_the_stored_values(cpu_engine, graph):
    """argmax/argmin: the first maximum (NaN first) of the computed values, through the
    same kernels (the contiguous rows' vector fast path included) as the stored array."""
    val = graph()
    node = val.arr._buf.pending
    stored = _aligned(np.asarray(val.want, node.dtype))
    for src, want in _views(val):
        svals = _np_view(stored, src._offset, src._shape, src._strides)
        nd = len(src._shape)
        for kind in ("argmax", "argmin"):
            for axes in {tuple(range(nd)), (nd - 1,)}:
                kept = tuple(n for d, n in enumerate(src._shape) if d not in axes)
                got, eager = np.full(kept, -7, np.int64), np.full(kept, -9, np.int64)
                o = HostArray(got)
                if not _fused(node, "arg_reduce", src, (kind, src, o, axes)):
                    continue
                red.arg_reduce(kind, HostArray(svals), HostArray(eager), axes)
                _same_bits(got, eager)
                flat = svals.reshape(-1) if len(axes) == nd else svals
                np.testing.assert_array_equal(got, getattr(np, kind)(flat, axis=-1))


@pytest.mark.parametrize("graph", [product_f4, chain_f8, broadcast_and_reversed,
                                   complex_product], ids=lambda g: g.__name__)
def test_fused_squared_deviations_equal_the_stored_values(cpu_engine, graph):
    """var/std's sum of |x - mean|^2 (``sqdev_sum``), the means read per kept position."""
    val = graph()
    node = val.arr._buf.pending
    stored = _aligned(np.asarray(val.want, node.dtype))
    rt = np.dtype(node.dtype.char.lower())
    for src, want in _views(val):
        svals = _np_view(stored, src._offset, src._shape, src._strides)
        nd = len(src._shape)
        for axes in {tuple(range(nd)), (0,), (nd - 1,)}:
            mean = np.ascontiguousarray(svals.mean(axis=axes).astype(node.dtype))
            got, eager = np.full(mean.shape, 7, rt), np.full(mean.shape, 9, rt)
            m, o = HostArray(mean), HostArray(got)
            if not _fused(node, "sqdev_sum", src, (src, m, o, axes)):
                continue
            red.sqdev_sum(HostArray(svals), HostArray(mean), HostArray(eager), axes)
            _same_bits(got, eager)
