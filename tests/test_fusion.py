"""Implicit fusion (cupynum/_backends/fusion.py, docs/guide/fusion.md): elementwise ops on
device data wait as expressions and run as one launch when their data is read.

The values are compared with NumPy bit for bit (fusion runs the eager path's code).  The
launch counts need the simulated device (``CUPYNUM_BACKEND=simulated``); on the host
backend nothing defers and the value tests still compare with NumPy.
"""
import gc
import weakref

import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum._backends import fusion
from cupynum.testing import device_counters, reset_device_counters

pytestmark = pytest.mark.usefixtures("fused_kernels_at_once", "fusion_arrays_on_device")

device = _backends.name() in ("simulated", "cuda")
on_device = pytest.mark.skipif(not device or not fusion.ENABLED,
                               reason="fusion defers device work only")
on_simulated = pytest.mark.skipif(_backends.name() != "simulated" or not fusion.ENABLED,
                                  reason="counts launches on the simulated device")


def launches(fn):
    """Kernel launches of ``fn()`` alone."""
    reset_device_counters()
    fn()
    return device_counters()["launches"]


def pending(x) -> bool:
    return x._buf.pending is not None


def chain(xp, a, b, c):
    return ((a * b + c) * a - b) / (c + 1.5) + xp.sqrt(a) * 0.5 - b * c


def operands(dtype=np.float32, n=1000, seed=0):
    rng = np.random.default_rng(seed)
    hosts = [rng.uniform(0.5, 2, n).astype(dtype) for _ in range(3)]
    return hosts, [cp.asarray(h) for h in hosts]


def same_bits(got, want):
    got = got.get() if isinstance(got, cp.ndarray) else got
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.reshape(-1).view(np.uint8),
                          np.ascontiguousarray(want).reshape(-1).view(np.uint8))


# --- the 9-op chain ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_chain_is_bit_identical_to_numpy(dtype):
    (ha, hb, hc), (a, b, c) = operands(dtype)
    same_bits(chain(cp, a, b, c), chain(np, ha, hb, hc))


@on_simulated
def test_chain_is_one_launch():
    _, (a, b, c) = operands()
    keep = []
    assert launches(lambda: keep.append(chain(cp, a, b, c))) == 0  # deferred
    r = keep[0]
    assert pending(r) and r.dtype == np.float32 and r.shape == (1000,)
    assert launches(lambda: r._buf.on_device()) == 1
    assert not pending(r)


@on_simulated
def test_chain_over_strided_and_broadcast_views_is_one_launch():
    h = np.arange(1, 61, dtype=np.float64).reshape(6, 10)
    x = cp.asarray(h)
    row = cp.asarray(h[0])
    keep = []

    def build():
        keep.append(((x[:, ::2] * 2.0 + row[::2]) * x[::-1, 1::2] - 1.0) / row[1::2] + 3)
    assert launches(build) == 0
    want = ((h[:, ::2] * 2.0 + h[0, ::2]) * h[::-1, 1::2] - 1.0) / h[0, 1::2] + 3
    assert launches(lambda: same_bits(keep[0], want)) == 1


@on_simulated
def test_numpy_scalars_and_general_path_calls_fuse():
    """Calls the hot path passes on (a NumPy scalar operand, a keyword) still defer: their
    new result is not allocated until it is computed."""
    (ha, hb, _), (a, b, _) = operands()
    keep = []
    assert launches(lambda: keep.append(cp.multiply(a * b, np.float32(2), dtype=np.float32)
                                         + np.float32(0.5) * b)) == 0
    assert launches(lambda: same_bits(keep[0], (ha * hb) * np.float32(2)
                                      + np.float32(0.5) * hb)) == 1


@on_simulated
def test_a_pending_result_broadcast_to_a_larger_shape_is_computed_first():
    h = np.arange(1, 61, dtype=np.float64).reshape(6, 10)
    x, row = cp.asarray(h), cp.asarray(h[0])
    r = row + 3
    keep = []
    assert launches(lambda: keep.append(x * r)) == 1  # r, then x * r waits
    assert not pending(r) and pending(keep[0])
    same_bits(keep[0], h * (h[0] + 3))


@on_device
def test_dropping_a_pending_array_launches_nothing():
    _, (a, b, c) = operands()
    r = chain(cp, a, b, c)
    node = weakref.ref(r._buf.pending)
    reset_device_counters()
    del r
    gc.collect()
    assert node() is None
    assert device_counters()["launches"] == 0


@on_device
def test_intermediates_nobody_keeps_are_never_stored():
    _, (a, b, _) = operands()
    t = a * b
    u = t + 1.0
    r = u * 2.0
    del u  # an intermediate nobody keeps
    r._buf.on_device()
    assert t._buf.device is not None and not pending(t)  # kept: stored with the root
    assert not pending(r)


@on_device
def test_a_kept_intermediate_is_stored_once_and_read_again():
    (ha, hb, _), (a, b, _) = operands()
    t = a * b
    r = t + 1.0
    same_bits(r, ha * hb + np.float32(1.0))
    assert not pending(t)
    same_bits(t, ha * hb)


@on_simulated
def test_printing_and_conversions_materialise():
    a = cp.arange(6.0)
    assert repr(a * 2) == repr(np.arange(6.0) * 2).replace("array", "array")
    assert str(a * 2) == str(np.arange(6.0) * 2)
    one = cp.asarray(3.0)
    for conv, want in [(float, 7.0), (int, 7), (bool, True)]:
        x = one * 2 + 1
        assert pending(x)
        assert conv(x) == want
        assert not pending(x)


@on_simulated
def test_library_calls_and_reductions_read_the_result():
    h = np.arange(1.0, 10.0).reshape(3, 3)
    x = cp.asarray(h)
    y = x * 2 + 1
    assert pending(y)
    np.testing.assert_array_equal((y @ y).get(), (h * 2 + 1) @ (h * 2 + 1))
    assert not pending(y)
    z = x - 4
    assert float(z.sum()) == float((h - 4).sum())
    s = x * -1
    np.testing.assert_array_equal(cp.sort(s, axis=None).get(), np.sort(h * -1, axis=None))


@on_device
def test_indexing_a_pending_array():
    h = np.arange(20.0)
    x = cp.asarray(h)
    y = x * 3
    assert float(y[4]) == 12.0  # an element of a pending array
    z = x + 1
    v = z[2:8:2]  # a view of a pending array: the view reads the computed Buffer
    assert pending(z)
    same_bits(v, (h + 1)[2:8:2])
    w = x * 5
    same_bits(w[w > 40], (h * 5)[h * 5 > 40])  # data-dependent indexing


@on_simulated
def test_synchronize_flushes_pending_work():
    x = cp.arange(10.0)
    y = x * 2
    _backends.for_arrays(y).synchronize()
    assert not pending(y)


@on_device
def test_a_slice_of_a_pending_result_as_an_operand():
    h = np.arange(10.0)
    x = cp.asarray(h)
    y = x * 2
    z = y[1:] + y[:-1]  # views that are not the whole pending result: y is computed first
    same_bits(z, (h * 2)[1:] + (h * 2)[:-1])


@on_simulated
def test_caps_bound_an_expression():
    x = cp.ones(10)
    y = x
    counts = []
    for _ in range(fusion.MAX_NODES + 5):
        reset_device_counters()
        y = y + 1.0
        counts.append(device_counters()["launches"])
    assert sum(counts) == 1  # the cap's flush, then a new expression
    assert y._buf.pending.count <= fusion.MAX_NODES
    same_bits(y, np.ones(10) + (fusion.MAX_NODES + 5))


@on_simulated
def test_a_python_loop_defers_each_iteration():
    h = np.linspace(0, 1, 100)
    x = cp.asarray(h)
    v = cp.zeros(100)
    for _ in range(5):
        v = v - 0.1 * x
        x = x + 0.1 * v
    hv, hx = np.zeros(100), h.copy()
    for _ in range(5):
        hv = hv - 0.1 * hx
        hx = hx + 0.1 * hv
    assert launches(lambda: same_bits(x, hx)) == 1
    same_bits(v, hv)


# --- writes: versions and readers ------------------------------------------------------


@on_device
def test_write_into_an_input_runs_its_readers_first():
    h = np.arange(8.0)
    a = cp.asarray(h)
    r = a * 2 + 1
    a[...] = 100.0  # setitem: r must see the old a
    same_bits(r, h * 2 + 1)
    r2 = a + 1
    a += 5  # an in-place operator
    same_bits(r2, np.full(8, 101.0))
    r3 = a * 3
    cp.multiply(a, 0, out=a)  # ufunc out=
    same_bits(r3, np.full(8, 315.0))
    r4 = a - 1
    a.fill(7)
    same_bits(r4, np.full(8, -1.0))


@on_device
def test_write_into_a_view_of_an_input():
    h = np.arange(8.0)
    a = cp.asarray(h)
    r = a[::2] * 10  # reads a view
    a[1:5] = -1  # another view of the same Buffer
    same_bits(r, h[::2] * 10)
    s = a + 0
    b = a[2:]
    b *= 3  # in place through a view
    hh = h.copy()
    hh[1:5] = -1
    same_bits(s, hh)
    hh[2:] *= 3
    same_bits(a, hh)


@on_device
def test_write_into_a_read_intermediate_keeps_the_readers_value():
    h = np.arange(6.0)
    a = cp.asarray(h)
    t = a * 2
    r = t + 1  # reads t's whole pending result
    t.get()  # t computed; r still pending, reading t's value
    assert pending(r)
    t += 100  # a write into t: r keeps the value it read
    same_bits(r, h * 2 + 1)
    same_bits(t, h * 2 + 100)


@on_simulated
def test_a_write_into_an_input_runs_its_readers_in_one_launch():
    """The heat equation's update reads ``u`` through five pending nodes: the write into
    ``u`` computes them as one kernel into one temporary (then copied into ``u``), not a
    kernel per reader."""
    h = np.linspace(0.0, 1.0, 50) ** 2

    def step(xp, u):
        u[1:-1] = u[1:-1] + 0.4 * (u[2:] - 2.0 * u[1:-1] + u[:-2])

    u, want = cp.asarray(h), h.copy()
    step(cp, u)  # (the structure seen once: compiled, as the fixture asks)
    step(np, want)
    assert launches(lambda: step(cp, u)) == 2  # the fused kernel and the copy into u
    step(np, want)
    same_bits(u, want)


@on_device
def test_a_reader_also_read_outside_the_graph_keeps_its_value():
    """Of the readers that a write runs, a node that a pending node outside their graph
    reads too is stored: that node reads its value after the write."""
    h = np.arange(8.0)
    u = cp.asarray(h)
    x = u * 2  # reads u
    p = x + u  # reads u and x: the larger graph, computed first
    q = x * 3  # reads x only: not a reader of u
    del x  # (x's array is gone: only p and q keep its node)
    u[...] = -1.0
    same_bits(p, h * 2 + h)
    same_bits(q, h * 2 * 3)
    same_bits(u, np.full(8, -1.0))


@on_device
def test_a_write_keeps_what_a_node_outside_the_graph_reads_through_another():
    """A pending node outside the graph that a write runs may read a reader of the written
    array through an intermediate that does not read it: that intermediate keeps its value,
    so the outside node never recomputes from the overwritten data."""
    h = np.arange(8.0)
    u = cp.asarray(h)
    n = u * 2  # reads u
    q = n + 1  # reads n only
    p = q * u  # reads u and q: the graph the write runs
    r = q * 3  # outside that graph, reads q
    del n, q
    u[...] = -1.0
    same_bits(p, (h * 2 + 1) * h)
    same_bits(r, (h * 2 + 1) * 3)


@on_device
def test_out_aliasing_an_input():
    h = np.arange(6.0)
    a, b = cp.asarray(h), cp.asarray(h + 1)
    r = a * b
    cp.add(a, b, out=a)  # out= is an input: runs at once, r reads the old a
    same_bits(a, h + h + 1)
    same_bits(r, h * (h + 1))
    c = cp.asarray(h)
    cp.add(c, 1, out=c[::-1])  # out= overlapping an input in reverse
    same_bits(c, (h + 1)[::-1])


@on_device
def test_overlapping_in_place_writes_keep_numpys_semantics():
    h = np.arange(10.0)
    a = cp.asarray(h)
    a2 = a * 1  # pending
    a2[1:] += a2[:-1]
    hh = h * 1
    hh[1:] += hh[:-1]
    same_bits(a2, hh)


@on_device
def test_out_into_a_fresh_array_defers_and_keeps_other_views():
    h = np.arange(6.0)
    a = cp.asarray(h)
    out = cp.empty(6)
    view = out[::2]
    cp.multiply(a, 3, out=out)
    same_bits(view, (h * 3)[::2])
    same_bits(out, h * 3)


@on_device
def test_a_pending_results_buffer_is_the_constructed_one_slot_for_slot():
    """``defer`` sets a pending result's Buffer slots itself: but for ``pending``, they must
    be what ``Buffer()`` leaves."""
    from cupynum._backends.buffer import Buffer

    r = cp.asarray(np.arange(6.0)) * 2
    assert pending(r) and type(r._buf) is Buffer
    ref = Buffer()
    slots = [s for s in Buffer.__slots__ if s not in ("__weakref__", "pending")]
    assert {s: getattr(r._buf, s) for s in slots} == {s: getattr(ref, s) for s in slots}


@on_device
def test_versions_are_checked_at_evaluation():
    a = cp.arange(4.0)
    r = a + 1
    a._buf.version += 1  # a write no write point saw
    with pytest.raises(AssertionError):
        r._buf.on_device()


@on_device
def test_exported_buffers_are_never_read_lazily():
    a = cp.arange(4.0)
    a._buf.address()  # what DLPack, the CUDA array interface and raw kernels do
    r = a + 1
    assert not pending(r)
    b = cp.arange(4.0)
    s = b * 2
    b._buf.address()  # exported after a pending expression read it: it runs now
    assert s._buf.pending is None
    same_bits(s, np.arange(4.0) * 2)


@on_device
def test_multiple_outputs_and_where_run_at_once_and_agree():
    h = np.linspace(-3, 3, 13)
    a = cp.asarray(h)
    x = a * 1.5
    q, r = cp.divmod(x, 0.7)
    hq, hr = np.divmod(h * 1.5, 0.7)
    same_bits(q, hq)
    same_bits(r, hr)
    out = cp.zeros(13)
    cp.add(x, 1.0, out=out, where=a > 0)
    same_bits(out, np.add(h * 1.5, 1.0, out=np.zeros(13), where=h > 0))


@on_device
def test_python_scalars_and_mixed_dtypes():
    h8 = np.arange(-5, 5, dtype=np.int8)
    hf = np.linspace(0, 1, 10, dtype=np.float32)
    a, f = cp.asarray(h8), cp.asarray(hf)
    same_bits((a * 3 + 1) * f - 2.5, (h8 * 3 + 1) * hf - 2.5)
    same_bits((a + 100) // 7 % 3, (h8 + 100) // 7 % 3)
    same_bits((f < 0.5) & (a > 0), (hf < 0.5) & (h8 > 0))
    with pytest.raises(OverflowError):
        a + 1000  # still decided at the call
    with pytest.raises(TypeError):
        cp.bitwise_and(f * 2, 1)


def test_fusion_setting_is_read_from_the_environment():
    import os
    import subprocess
    import sys

    code = ("import cupynum, cupynum._backends.fusion as f; print(f.ENABLED)")
    for value, want in [("0", "False"), ("1", "True"), ("", "True")]:
        env = dict(os.environ, CUPYNUM_FUSION=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out == [want]


# --- reductions of pending expressions: the expression as the reduction's prologue ---------


def fused_and_stored(x, reduce):
    """``reduce(x)`` of pending ``x`` (the expression inside the reduction), then the same
    reduction of x's computed value (stored first): the two must agree bit for bit."""
    fused = reduce(x)
    x._buf.on_device()
    return fused, reduce(x)


@on_simulated
def test_a_reduction_of_an_expression_is_one_launch():
    (ha, hb, hc), (a, b, c) = operands()
    stored = a + 0.0
    stored._buf.on_device()
    for _ in range(2):  # (on the GPU its structure compiles the second time it is seen)
        assert launches(lambda: (a * b).sum()) == 1 == launches(lambda: stored.sum())
        assert launches(lambda: chain(cp, a, b, c).max()) == 1
    s = (a * b).sum()
    assert s.dtype == np.float32 and float(s) == float((ha * hb).sum())
    x = cp.asarray(np.arange(24.0).reshape(4, 6))
    for axis in (0, 1, None, (0, 1)):
        assert launches(lambda: (x * 2 - 1).sum(axis=axis)) == 1
    assert launches(lambda: (x * 2 - 1).mean()) == launches(lambda: x.mean())  # sum, divide
    assert launches(lambda: (x * 2 - 1).argmax(axis=1)) == 1
    assert launches(lambda: (x * 2 - 1).var()) == launches(lambda: x.var())  # no temporary


@on_device
@pytest.mark.parametrize("name, kw", [("sum", {}), ("prod", {}), ("max", {}), ("min", {}),
                                      ("mean", {}), ("any", {}), ("sum", {"axis": 0}),
                                      ("max", {"axis": 1}), ("mean", {"axis": 1}),
                                      ("sum", {"axis": 0, "dtype": np.float64}),
                                      ("argmax", {}), ("argmin", {"axis": 0}), ("var", {}),
                                      ("std", {"axis": 1})])
def test_reductions_of_expressions_equal_the_unfused_reduction(name, kw):
    rng = np.random.default_rng(4)
    h = rng.uniform(0.5, 1.5, (30, 70)).astype(np.float32)
    x = cp.asarray(h)
    want = getattr(np, name)(np.sqrt(h) * h - 0.5, **kw)
    fused, stored = fused_and_stored(cp.sqrt(x) * x - 0.5, lambda y: getattr(cp, name)(y, **kw))
    same_bits(fused, stored.get())
    np.testing.assert_allclose(fused.get(), want, rtol=1e-5)


@on_device
def test_reductions_of_views_of_an_expression():
    h = np.arange(60.0).reshape(6, 10) - 20.5
    x = cp.asarray(h)
    for view, axis in [(lambda y: y.T, 1), (lambda y: y[1:-1, ::3], 0), (lambda y: y[::-1], None),
                       (lambda y: cp.broadcast_to(y[2], (4, 10)), 0)]:
        fused, stored = fused_and_stored(x * x - x, lambda y: view(y).sum(axis=axis))
        same_bits(fused, stored.get())
        same_bits(stored, np.asarray(view(h * h - h).sum(axis=axis)))


@on_device
def test_reductions_keep_numpys_dtypes():
    h = np.arange(-60, 60, dtype=np.int8)
    i8 = cp.asarray(h)
    s = (i8 * i8).sum()  # the product wraps in int8, the sum is int64
    assert s.dtype == np.int64 and int(s) == int((h * h).sum())
    m = (i8 * 3).max()
    assert m.dtype == np.int8 and int(m) == int((h * 3).max())
    f = cp.asarray(np.linspace(-1, 1, 50, dtype=np.float16))
    assert (f * f).sum().dtype == np.float16
    assert bool((i8 > 50).any()) and not bool((i8 > 100).any())
    w = cp.sum(i8 * 2, where=cp.asarray(h > 0))
    assert int(w) == int(np.sum(h * 2, where=h > 0))


@on_device
def test_the_reduced_expression_stays_pending_and_is_right_when_read():
    (ha, hb, _), (a, b, _) = operands()
    t = a * b
    t.sum()
    assert pending(t)  # computed inside the reduction, never stored
    a[...] = 0  # an input of t is written: t is computed first
    same_bits(t, ha * hb)


@on_simulated
def test_a_kept_intermediate_is_stored_before_the_fused_reduction():
    (ha, hb, _), (a, b, _) = operands()
    u = a * b
    assert launches(lambda: (u + 1.0).sum()) == 2  # u into its array, then the reduction
    assert not pending(u)
    same_bits(u, ha * hb)
    assert launches(lambda: (u + 1.0).sum()) == 1  # u is now an input


# --- setitem as the sink -----------------------------------------------------------------


@on_simulated
def test_stencil_statement_is_one_launch_into_the_target():
    rng = np.random.default_rng(1)
    ha, hb = rng.standard_normal((50, 60)), np.zeros((50, 60))
    A, B = cp.asarray(ha), cp.asarray(hb)

    def step():
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2]
                               + A[1:-1, 2:])
    assert launches(step) == 1
    hb[1:-1, 1:-1] = 0.2 * (ha[1:-1, 1:-1] + ha[:-2, 1:-1] + ha[2:, 1:-1] + ha[1:-1, :-2]
                            + ha[1:-1, 2:])
    same_bits(B, hb)


@on_device
def test_stencil_in_place_keeps_numpys_semantics():
    h = np.arange(30.0).reshape(5, 6) ** 1.5
    A = cp.asarray(h)
    A[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    h[1:-1, 1:-1] = 0.25 * (h[:-2, 1:-1] + h[2:, 1:-1] + h[1:-1, :-2] + h[1:-1, 2:])
    same_bits(A, h)


@on_device
def test_a_kept_expression_assigned_is_still_right():
    h = np.arange(12.0)
    a, b = cp.asarray(h), cp.zeros(12)
    t = a * 3 + 1
    b[::2] = t[::2]  # a view of t: t is computed, then copied
    c = cp.zeros(12)
    c[...] = t  # t whole: computed into c, and t stays pending
    a[...] = 0  # t's input written: t runs first
    same_bits(t, h * 3 + 1)
    same_bits(c, h * 3 + 1)
    same_bits(b, np.where(np.arange(12) % 2 == 0, h * 3 + 1, 0))
    d = cp.zeros(12, np.float32)
    d[...] = a + 2.5  # another dtype: a cast copy after the expression
    same_bits(d, np.full(12, 2.5, np.float32))


@on_simulated
def test_flush_for_memory_runs_live_expressions_and_frees_their_inputs():
    a = cp.arange(100.0)
    r = a * 2
    ref = weakref.ref(a._buf)
    del a  # the pending expression keeps a's Buffer alive
    gc.collect()
    assert ref() is not None and fusion.pending_count() >= 1
    assert fusion.flush_for_memory()
    gc.collect()
    assert ref() is None and not pending(r)
    same_bits(r, np.arange(100.0) * 2)
    assert fusion.pending_count() == 0 and not fusion.flush_for_memory()


@pytest.mark.gpu
@pytest.mark.parametrize("compile_after", [1, 1000])
def test_cuda_fused_kernel_and_op_by_op_agree_with_numpy(compile_after):
    """The generated kernel (compile_after=1) and the table kernels run node by node (before
    a structure is compiled) give NumPy's bits."""
    from cupynum._backends.cuda import fused, tuning

    (ha, hb, hc), (a, b, c) = operands(np.float32, n=100_003)
    with tuning.overridden("FUSION", compile_after=compile_after):
        fused._seen.clear()
        fused._canonical.clear()
        fused._contig_kernels.clear()
        reset_device_counters()
        r = chain(cp, a, b, c)
        r._buf.on_device()
        want_launches = 1 if compile_after == 1 else 11
        assert device_counters()["launches"] == want_launches
        same_bits(r, chain(np, ha, hb, hc))
        x = cp.asarray(np.arange(60.0).reshape(6, 10))
        s = (x[:, ::2] * 2.0 + x[0, 1::2]) * x[::-1, ::2] - 1.0  # strided, broadcast, reversed
        h = np.arange(60.0).reshape(6, 10)
        same_bits(s, (h[:, ::2] * 2.0 + h[0, 1::2]) * h[::-1, ::2] - 1.0)


@on_device
def test_writes_into_a_pending_array():
    h = np.arange(8.0)
    a = cp.asarray(h)
    x = a * 2
    x[1:3] = -1  # a partial write: x is computed first
    y = a + 1
    y.fill(5)
    z = a - 1
    z += 10  # in place on a pending array
    w = a * 1
    w[w > 8] = 0  # a masked write
    hx = h * 2
    hx[1:3] = -1
    same_bits(x, hx)
    same_bits(y, np.full(8, 5.0))
    same_bits(z, h + 9)
    same_bits(w, np.where(h > 8, 0, h))


@on_device
def test_empty_and_zero_d_operands():
    e = cp.zeros((0, 3))
    same_bits(e * 2 + 1, np.zeros((0, 3)) * 2 + 1)
    s = cp.asarray(2.5)
    same_bits((s * s + 1) / 3, np.asarray((np.float64(2.5) * 2.5 + 1) / 3))


@pytest.mark.gpu
def test_streams_flush_their_pending_work():
    if not fusion.ENABLED:
        pytest.skip("fusion is off")
    h = np.arange(1000, dtype=np.float32)
    a = cp.asarray(h)
    s = cp.cuda.Stream()
    with s:
        x = a * 2 + 1
        assert pending(x) and x._buf.pending.stream[0] == s.ptr
    assert not pending(x)  # leaving the block ran it, on s
    s.synchronize()
    same_bits(x, h * 2 + 1)
    with s:
        y = a - 3
        e = s.record()  # recording an event runs the stream's pending work first
        assert not pending(y)
    e.synchronize()
    same_bits(y, h - 3)
    z = a * 4
    cp.cuda.synchronize()
    assert not pending(z)
    with s:
        w = a + 0.5
    u = w * 2  # on the legacy stream, over a result made on s (computed there first)
    same_bits(u, (h + 0.5) * 2)
