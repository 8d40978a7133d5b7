"""The statements loop-heavy programs are made of, on device data: what each asks of the
device (launches, syncs, bytes moved; counted by the simulated device, never timed) and that
the lean paths behind those counts keep NumPy's values and dtypes and the independence of
element reads (cupynum/_backends/elements.py: an element read of device data waits for its
first use; ``a[i, j] op= b`` runs as one in-place launch).

The counts run on the simulated device (``CUPYNUM_BACKEND=simulated``); the semantics on any
device backend.  tests/test_launch_paths.py checks the CUDA backend's driver calls of the same
statements against a fake driver."""
import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum.testing import device_counters, reset_device_counters

# device paths: every array on the device, as under CUPYNUM_PLACEMENT=device (the host
# backend has none: its element reads are NumPy's scalars)
pytestmark = [pytest.mark.usefixtures("device_placement"),
              pytest.mark.skipif(_backends.get().side != "device",
                                 reason="needs a device backend")]

on_simulated = pytest.mark.skipif(_backends.name() != "simulated",
                                  reason="needs CUPYNUM_BACKEND=simulated")

# (statement, launches, syncs, bytes back to the host) on 100 x 100 float64 device data, as
# benchmarks/statements.py runs them; a device copy counts as a launch
STATEMENTS = [
    ("x = A[i, j]", 0, 0, 0),
    ("A[i, j] += A[i, j - 1]", 1, 0, 0),
    ("A[i, j] /= 9.0", 1, 0, 0),
    ("A[i, 1:-1] += A[i - 1, :-2]", 1, 0, 0),
    ("x = A[i, :j] @ A[:j, j]", 1, 0, 0),
    ("A[i, j] -= A[i, :j] @ A[:j, j]", 2, 0, 0),
    ("x = A * 2.0 + 1.0", 2, 0, 0),
    ("x = A.sum()", 1, 0, 0),
    ("x = 1 if A[i, j] > 0 else 0", 0, 1, 8),
    ("x = float(A[i, j])", 0, 1, 8),
    ("C[i, :i + 1] *= beta", 1, 0, 0),
    # element reads used at once: read where they are, no copy of their own
    ("x = A[i, j] * 2.0 + A[i, j - 1]", 2, 0, 0),
    ("A[i, j] = A[i, j - 1]", 1, 0, 0),
    ("A[i, j] = A[i, j]", 0, 0, 0),
    ("A[i, j], A[i, j + 1] = A[i, j + 1], A[i, j]", 3, 0, 0),
    ("A[i, j] = 3.0", 1, 0, 0),  # a fill of one element
    # an element read times a row (cnn_layer's w[co, ci, dy, dx] * x[ci, ...]): broadcast
    ("x = A[i, j] * C[i, 1:-1]", 1, 0, 0),
    ("C[i, :] += A[i, j] * C[i - 1, :]", 2, 0, 0),
    ("A[i, j] = -0.0", 1, 0, 0),
]


def _inputs():
    rng = np.random.default_rng(0)
    return {"A": rng.uniform(0.5, 1.5, (100, 100)), "C": rng.uniform(0.5, 1.5, (100, 100)),
            "i": 50, "j": 50, "beta": 0.999}


def _run(stmt, env, times):
    code = compile(stmt, "<statement>", "exec")
    for _ in range(times):
        exec(code, env)


def _check_values(ref, env, stmt):
    # A product sums in another order on the GPU (cuBLAS) than NumPy's BLAS: its last bits
    # may differ (docs/differences.md); everything else is bit for bit.
    same = (lambda g, w, err_msg: np.testing.assert_allclose(g, w, rtol=1e-14, atol=0,
                                                             err_msg=err_msg)) \
        if "@" in stmt else np.testing.assert_array_equal
    for k, v in ref.items():
        if isinstance(v, np.ndarray):
            same(cp.asnumpy(env[k]), v, err_msg=f"{stmt}: {k}")
    if "x" in ref:
        got = env["x"]
        want = ref["x"]
        if isinstance(got, cp.ndarray):
            got = got.get()
        same(got, want, err_msg=stmt)
        assert np.asarray(got).dtype == np.asarray(want).dtype, stmt


@pytest.mark.parametrize("stmt", [s[0] for s in STATEMENTS])
def test_statement_values(stmt):
    inputs = _inputs()
    ref = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    env = {k: (cp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    _run(stmt, ref, 4)
    _run(stmt, env, 4)
    _check_values(ref, env, stmt)


@on_simulated
@pytest.mark.parametrize("stmt,launches,syncs,d2h", STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_statement_counts(stmt, launches, syncs, d2h):
    env = {k: (cp.asarray(v) if isinstance(v, np.ndarray) else v)
           for k, v in _inputs().items()}
    _run(stmt, env, 2)  # (caches filled)
    reset_device_counters()
    _run(stmt, env, 10)
    assert device_counters() == {"launches": 10 * launches, "syncs": 10 * syncs,
                                 "d2h_bytes": 10 * d2h, "h2d_bytes": 0}


def _device(h):
    return cp.asarray(np.asarray(h))


def _pending(x):
    return type(x._buf.pending).__name__ == "Element"


@on_simulated
def test_element_read_waits_and_a_write_copies_it_first():
    a = _device(np.arange(12.0).reshape(3, 4))
    reset_device_counters()
    x = a[1, 2]
    assert _pending(x) and device_counters()["launches"] == 0
    a[1, 2] = -1.0  # the read's copy runs before the write lands
    assert not _pending(x) and float(x) == 6.0 and float(a[1, 2]) == -1.0
    y = a[0, 0]
    a += 1  # the hot in-place path sees the reader too
    assert float(y) == 0.0 and float(a[0, 0]) == 1.0
    z = a[2, 3]
    a[:] = 0  # a slice assignment
    assert float(z) == 12.0


def test_element_read_broadcast_in_an_op_is_read_where_it_is():
    """An element read used by a broadcasting op is read in its source by the op, and
    stays a pending read: a later write to the source copies it first."""
    a = _device(np.arange(12.0).reshape(3, 4))
    row = _device(np.arange(4.0))
    x = a[1, 2]
    np.testing.assert_array_equal((x * row).get(), 6.0 * np.arange(4.0))
    np.testing.assert_array_equal(cp.subtract(row[::-1], x).get(), np.arange(4.0)[::-1] - 6)
    a[1, 2] = 100.0
    np.testing.assert_array_equal((x * row).get(), 6.0 * np.arange(4.0))
    assert float(x) == 6.0


@on_simulated
def test_host_reads_of_a_waiting_element():
    a = _device(np.arange(12, dtype=np.int32).reshape(3, 4))
    x = a[2, 1]
    reset_device_counters()
    assert int(x) == 9 and float(x) == 9.0 and bool(x) and x.item() == 9
    assert device_counters() == {"launches": 0, "syncs": 4, "d2h_bytes": 16, "h2d_bytes": 0}
    assert _pending(x)  # a host read leaves it waiting (one copy back each)
    assert f"{x:03d}" == "009" and x.tolist() == 9 and np.asarray(x).dtype == np.int32
    assert x.get().shape == () and x.reshape(1).get().tolist() == [9]
    assert list(range(20))[x] == 9  # __index__


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.uint16, np.int64,
                                   np.bool_, np.complex64])
@pytest.mark.parametrize("scalar", [0, 1, -1, 0.5, 2**70, True, 1j])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NaN < 1j warns, as in NumPy)
def test_comparison_of_an_element_with_a_scalar(dtype, scalar):
    h = (np.arange(-6, 6) * 0.75).astype(dtype).reshape(3, 4)
    if dtype == np.float64:
        h[0, 0] = np.nan
    a = _device(h)
    for op in ("__gt__", "__lt__", "__ge__", "__le__", "__eq__", "__ne__"):
        for idx in ((0, 0), (1, 2), (2, 3)):
            try:
                want = getattr(h[idx], op)(scalar)
            except (TypeError, OverflowError) as e:  # (complex ordering, bool vs 2**70)
                with pytest.raises(type(e)):
                    getattr(a[idx], op)(scalar)
                continue
            got = getattr(a[idx], op)(scalar)
            if want is NotImplemented:
                assert got is NotImplemented
                continue
            assert isinstance(got, cp.ndarray) and got.shape == () and got.dtype == want.dtype
            assert bool(got) == bool(want), (op, idx, scalar)


@on_simulated
def test_a_comparison_reads_the_element_once():
    a = _device(np.arange(12.0).reshape(3, 4))
    reset_device_counters()
    r = a[1, 1] > 0
    assert bool(r) and not (a[1, 0] < 4) and (0 < a[2, 2])
    assert device_counters() == {"launches": 0, "syncs": 3, "d2h_bytes": 24, "h2d_bytes": 0}


def test_elements_are_independent_values():
    h = np.arange(12.0).reshape(3, 4)
    a = _device(h)
    x = a[1, 1]
    x += 100  # waits as add(element, 100): a is not written
    assert float(a[1, 1]) == 5.0 and float(x) == 105.0
    y = a[0, 1]
    y *= 2
    a[0, 2] = y  # stored elsewhere: computed, then copied
    a[0, 0], a[0, 3] = a[0, 3], a[0, 0]  # a swap
    h[0, 2] = h[0, 1] * 2
    h[0, 0], h[0, 3] = h[0, 3], h[0, 0]
    np.testing.assert_array_equal(a.get(), h)
    assert float(y) == 2.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.uint32,
                                   np.int64, np.bool_, np.complex64, np.complex128])
@pytest.mark.parametrize("value", [3, -1, 300, 2**70, 0.5, -0.0, float("nan"), True, 1 + 2j,
                                   np.float32(2.5), np.int64(-7), np.complex128(1j)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")
def test_scalar_stored_into_an_element(dtype, value):
    h = np.zeros((2, 3), dtype)
    a = _device(h)
    try:
        h[1, 2] = value
    except Exception as e:  # noqa: BLE001 - NumPy's error is the one to raise
        with pytest.raises(type(e)):
            a[1, 2] = value
        np.testing.assert_array_equal(a.get(), h)
        return
    a[1, 2] = value
    x = a[1, 0]
    a[1, 0] = value  # a pending read of the element is copied first
    assert float(abs(x)) == 0.0
    h[1, 0] = value
    np.testing.assert_array_equal(a.get(), h)
    assert a.get().view(np.uint8).tobytes() == h.view(np.uint8).tobytes()  # (-0.0, NaN)


def test_element_copied_within_its_array_stays_a_read():
    a = _device(np.arange(6.0).reshape(2, 3))
    y = a[0, 1]
    a[0, 2] = y  # copied from a[0, 1] itself: y still waits
    assert _pending(y)
    a[0, 1] = 7.0  # now y is copied first
    assert float(y) == 1.0 and a.get().tolist() == [[0.0, 7.0, 1.0], [3.0, 4.0, 5.0]]
    z = a[1, 0]
    a[1, 0] = z  # the element's own value: nothing written
    assert _pending(z) and float(z) == 3.0


def test_in_place_element_statements():
    rng = np.random.default_rng(3)
    h = rng.uniform(-2, 2, (6, 7))
    a = _device(h)
    s = _device(np.float64(0.25))
    for i in range(1, 6):
        for j in range(1, 7):
            h[i, j] += h[i, j - 1]
            a[i, j] += a[i, j - 1]
            h[i, j] /= 3.0
            a[i, j] /= 3.0
            h[i, j] -= np.float64(0.25) * h[i - 1, j]
            a[i, j] -= s * a[i - 1, j]
            h[i, j] *= h[i - 1, j - 1]
            a[i, j] *= a[i - 1, j - 1]
    np.testing.assert_array_equal(a.get(), h)


def test_in_place_element_with_another_reader_alive():
    a = _device(np.arange(6.0).reshape(2, 3))
    keep = a[1, 1]  # an element read that must keep the old value
    t = a[1, 1]
    t += a[0, 1]
    other = a[1, 1]
    a[1, 1] = t  # the op runs in place: keep and other are copied first
    assert float(keep) == 4.0 and float(other) == 4.0 and float(t) == 5.0
    assert float(a[1, 1]) == 5.0
    t += 1  # t is a read of the new value: a stays
    assert float(t) == 6.0 and float(a[1, 1]) == 5.0


def test_in_place_element_operand_written_before_use():
    a = _device(np.arange(6.0).reshape(2, 3))
    s = _device(np.float64(10.0))
    t = a[0, 2]
    t += s  # waits, reading s
    s += 1  # s is written: t is computed first
    assert float(t) == 12.0 and float(s) == 11.0
    u = a[0, 1]
    v = a[1, 1]
    u -= v  # v's source is read directly
    a[1, 1] = 0.0  # written: u is computed before
    assert float(u) == -3.0


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float32, np.int64, np.complex128])
def test_in_place_element_casts_and_wraps_as_numpy(dtype):
    h = np.array([[120, 5], [250 % 128, 7]]).astype(dtype)
    a = _device(h)
    ref = h.copy()
    for v in (100, 3):
        with np.errstate(all="ignore"):
            ref[0, 0] += np.asarray(v).astype(dtype)
        a[0, 0] += v
    ref[1, 1] *= ref[0, 1]
    a[1, 1] *= a[0, 1]
    np.testing.assert_array_equal(a.get(), ref)


def test_element_views_share_the_value():
    a = _device(np.arange(4.0))
    x = a[2]
    v = x.reshape(1)
    x += 1
    assert v.get().tolist() == [3.0] and float(a[2]) == 2.0
    v += 1
    assert float(x) == 4.0 and float(a[2]) == 2.0
    w = x.view(np.int64)
    assert int(w) == np.float64(4.0).view(np.int64)


def test_element_read_outlives_its_array():
    a = _device(np.arange(4.0) + 7)
    x = a[3]
    del a
    assert float(x) == 10.0 and float(x + 1) == 11.0


def test_element_reads_are_computed_when_memory_runs_out():
    import weakref

    from cupynum._backends import elements

    a = _device(np.arange(4.0) + 7)
    x, y = a[3], a[1]
    y += 1
    source = weakref.ref(a._buf)
    del a
    assert source() is not None  # kept by the pending reads
    assert elements.flush_for_memory()  # (what the pool does before it gives up)
    assert source() is None and not _pending(x) and not _pending(y)
    assert float(x) == 10.0 and float(y) == 9.0
    assert not elements.flush_for_memory()


def test_element_reads_of_exported_data_are_copied():
    a = _device(np.arange(4.0))
    a._address()  # exported: may be written where no write point sees it
    x = a[1]
    assert x._buf.pending is None and float(x) == 1.0


def test_slice_stored_onto_itself_is_not_copied(monkeypatch):
    a = _device(np.arange(20.0).reshape(4, 5))
    h = a.get()
    v = a[1, 1:-1]
    v += a[0, :-2]
    version = a._buf.version
    calls = []
    monkeypatch.setattr(type(_backends.for_arrays(a)), "copy",
                        lambda self, src, dst: calls.append(1), raising=True)
    a[1, 1:-1] = v  # what Python's augmented assignment does after __iadd__
    assert calls == [] and a._buf.version == version
    h[1, 1:-1] += h[0, :-2]
    np.testing.assert_array_equal(a.get(), h)


def test_in_place_with_an_overlapping_operand_reads_a_copy():
    h = np.arange(10.0)
    a = _device(h)
    a[1:] += a[:-1]  # overlapping: NumPy reads a copy of the operand
    h[1:] += h[:-1].copy()
    np.testing.assert_array_equal(a.get(), h)
    a[5:] += a[:5]  # disjoint, one buffer: the hot path
    h[5:] += h[:5]
    np.testing.assert_array_equal(a.get(), h)


def test_small_results_skip_the_deferral(monkeypatch):
    """Results below fusion's size floor run at once without entering the deferral (its
    bookkeeping costs more than they take)."""
    from cupynum._backends import fusion

    def refuse(*args, **kwargs):
        raise AssertionError("a small result entered fusion.defer")

    a = _device(np.arange(64.0))
    o = _device(np.zeros(64))
    a * 2.0, a[::2] + 1.0, cp.add(a, 1.0, out=o)  # (launchers built)
    monkeypatch.setattr(fusion, "defer", refuse)
    r = [a * 2.0, a + a, a[::2] + 1.0, cp.add(a, 1.0, out=o), cp.sqrt(a[::3])]
    assert r[0].get()[5] == 10.0 and o.get()[5] == 6.0


def test_element_reads_under_fusion(small_arrays_fuse):
    h = np.arange(12.0).reshape(3, 4)
    a = _device(h)
    x = a[1, 2]
    y = x * 2 + a[0, 0]  # the read is computed before it is used by a pending expression
    a[1, 2] = 100.0
    assert float(y) == 12.0 and float(x) == 6.0
    b = a * 3  # a pending result: an element read of it computes it first
    z = b[2, 1]
    a[2, 1] = 0
    assert float(z) == 27.0
