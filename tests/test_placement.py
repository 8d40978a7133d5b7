"""Placement (issue 18, docs/guide/placement.md): where an array's data starts, where each op
runs, when data moves, and what users see.  Results always equal NumPy's; placement itself
is only visible with a device backend (the simulated device on CI), so those tests skip on
the host backend, and the ones about ``auto`` skip under ``CUPYNUM_PLACEMENT=device``."""
import sys
import weakref

import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum._backends import placement as pl
from cupynum._backends import buffer
from cupynum.testing import device_counters, place, reset_device_counters

DEVICE_BACKEND = _backends.get().side == "device"
needs_device = pytest.mark.skipif(not DEVICE_BACKEND, reason="placement needs a device backend")
# (placement states: under ``device`` nothing moves, under ``random`` everything does)
auto_only = pytest.mark.skipif(not DEVICE_BACKEND or pl.MODE != "auto",
                               reason="CUPYNUM_PLACEMENT=auto with a device backend")
SMALL = 100  # elements: on the host under auto
LARGE = pl.THRESHOLD + 1  # elements of 8 bytes: on the device


def moved():
    c = device_counters()
    return c["h2d_bytes"] + c["d2h_bytes"]


# --- where an array starts ---------------------------------------------------------------
@auto_only
@pytest.mark.parametrize("make", [
    lambda n: cp.zeros(n), lambda n: cp.ones(n, np.float64), lambda n: cp.empty(n),
    lambda n: cp.full(n, 2.0), lambda n: cp.arange(float(n)), lambda n: cp.linspace(0, 1, n),
    lambda n: cp.asarray(np.arange(n, dtype=np.float64)), lambda n: cp.array(list(range(n))),
    lambda n: cp.zeros_like(cp.zeros(n)), lambda n: cp.empty_like(np.zeros(n)),
    lambda n: cp.fromfunction(lambda i: i * 2.0, (n,)),
], ids=["zeros", "ones", "empty", "full", "arange", "linspace", "asarray", "array",
        "zeros_like", "empty_like", "fromfunction"])
def test_small_arrays_start_on_the_host_and_large_ones_on_the_device(make):
    assert cp.placement(make(SMALL)) == "host"
    assert cp.placement(make(LARGE)) == "device"


@auto_only
def test_eye_and_threshold_in_elements_of_eight_bytes():
    side = int(np.sqrt(pl.THRESHOLD))
    assert cp.placement(cp.eye(side)) == "host"
    assert cp.placement(cp.eye(side + 1)) == "device"


@needs_device
@pytest.mark.parametrize("nbytes", [0, 8, 1 << 30])
def test_a_new_arrays_buffer_is_the_unallocated_one_slot_for_slot(nbytes):
    """``_backends.new_buffer`` sets an ``Unallocated``'s slots itself (no ``__init__``
    frames): they must be what the constructor leaves."""
    if _backends._single is not None:
        pytest.skip("a single backend allocates at once")
    made, ref = _backends.new_buffer(nbytes), pl.Unallocated(nbytes)
    slots = [s for c in type(ref).__mro__ for s in getattr(c, "__slots__", ())
             if s != "__weakref__"]
    assert type(made) is pl.Unallocated and "nbytes" in slots and "settled" in slots
    assert {s: getattr(made, s) for s in slots} == {s: getattr(ref, s) for s in slots}
    assert made.nbytes == nbytes and pl.unallocated(made)


@needs_device
def test_device_mode_puts_everything_on_the_device(device_placement):
    for x in (cp.zeros(3), cp.arange(4.0), cp.asarray(np.ones(2))):
        assert cp.placement(x) == "device"


def test_placement_takes_only_cupynum_arrays():
    with pytest.raises(TypeError):
        cp.placement(np.zeros(3))
    assert cp.placement(cp.zeros(3)) in ("host", "device", "both")
    assert cp.zeros(3).device == cp.zeros(LARGE).device  # the device whatever the placement


# --- where an op runs, and coherence --------------------------------------------------------
@auto_only
def test_host_operands_copy_once_to_the_device_and_keep_that_copy():
    small = cp.asarray(np.arange(SMALL, dtype=np.float64))
    big = cp.zeros((LARGE // SMALL + 1, SMALL))
    reset_device_counters()
    r1 = big + small  # broadcast: small is copied over once
    first = device_counters()["h2d_bytes"]
    assert first == small.nbytes and cp.placement(small) == "both"
    r2 = big * small
    assert device_counters()["h2d_bytes"] == first  # the kept copy is reused
    np.testing.assert_array_equal(r1.get(), np.arange(SMALL) + np.zeros_like(r1.get()))
    np.testing.assert_array_equal(r2.get(), np.zeros_like(r2.get()))
    small += 1.0  # a write of more than a few KiB? no: 800 bytes, so both copies stay valid
    assert cp.placement(small) == "both"
    np.testing.assert_array_equal((big + small).get()[0], np.arange(SMALL) + 1.0)


@auto_only
def test_a_large_write_drops_the_other_copy():
    n = pl.SMALL_WRITE // 8 * 4
    x = cp.asarray(np.arange(n, dtype=np.float64))
    place(x, "both")
    x += 1.0  # on the host (its data is valid there), more than SMALL_WRITE bytes
    assert cp.placement(x) == "host"
    place(x, "both")
    x[:] = cp.zeros(n)  # (a host op: both operands valid on the host)
    assert cp.placement(x) == "host" and x.sum() == 0


@auto_only
@pytest.mark.parametrize("where", ["host", "device", "both"])
def test_small_writes_keep_both_copies_right(where):
    ref = np.arange(24, dtype=np.float64).reshape(4, 6)
    x = cp.asarray(ref)
    place(x, where)
    x[1, 2] = 99.0
    ref[1, 2] = 99.0
    x[2] += 5.0
    ref[2] += 5.0
    x[:, 0] *= 2
    ref[:, 0] *= 2
    for side in ("host", "device"):
        place(x, side)  # each copy, read alone, holds the data
        np.testing.assert_array_equal(x.get(), ref)


@auto_only
def test_reads_of_device_data_move_only_the_view():
    x = cp.asarray(np.arange(LARGE, dtype=np.float64))
    place(x, "device")
    reset_device_counters()
    assert float(x[5]) == 5.0
    assert np.array_equal(x[10:20].get(), np.arange(10, 20))
    assert device_counters()["d2h_bytes"] == 8 + 80


@auto_only
@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.complex64])
def test_a_move_to_the_host_fills_one_aligned_allocation(dtype):
    """The device copy is read straight into a host allocation aligned as the host
    backend's are (64 bytes), moving the buffer's bytes once; views see the same values."""
    ref = (np.arange(3 * 4097) % 251).astype(dtype)
    x = cp.asarray(ref)
    place(x, "device")
    view = x[1::3]
    reset_device_counters()
    place(x, "host")
    assert device_counters()["d2h_bytes"] == ref.nbytes
    raw = x._buf.host
    assert raw.ctypes.data % 64 == 0 and raw.flags.writeable and raw.nbytes == ref.nbytes
    np.testing.assert_array_equal(x.get(), ref)
    np.testing.assert_array_equal(view.get(), ref[1::3])


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_])
def test_to_host_fills_the_array_it_is_given(dtype):
    ref = (np.arange(60).reshape(6, 10) % 3).astype(dtype)
    a = cp.asarray(ref)[::2, 1:]  # a strided view
    out = np.empty((3, 9), dtype)
    assert _backends.for_arrays(a).to_host(a, out) is out
    np.testing.assert_array_equal(out, ref[::2, 1:])


@auto_only
def test_a_large_result_of_small_host_operands_is_made_on_the_device():
    u = np.linspace(0, 1, 600)
    v = np.arange(500.0)
    a, b = cp.asarray(u), cp.asarray(v)
    assert cp.placement(a) == cp.placement(b) == "host"
    for got, want in [(a[:, None] * b[None, :], u[:, None] * v[None, :]),
                      (cp.outer(a, b), np.outer(u, v)), (cp.tile(a, 200), np.tile(u, 200))]:
        assert cp.placement(got) == "device"  # 300,000 and 120,000 elements
        np.testing.assert_array_equal(got.get(), want)
    small = a[:10, None] * b[None, :10]  # a small broadcast result stays on the host
    assert cp.placement(small) == "host"


@auto_only
def test_small_device_operands_of_large_broadcast_results_stay_on_the_device():
    """The all-pairs step of an n-body program: each op reads two small arrays and makes a
    large one.  The ledger prices an op by what it makes as well as what it reads, so the
    small operands are not moved to the host (where the large results would then be made
    and copied back every step)."""
    rng = np.random.default_rng(3)
    h = rng.standard_normal((2000, 3))
    pos = cp.asarray(h) + 0.0  # (a small array, on the device once an op puts it there)
    place(pos, "device")
    reset_device_counters()
    for _ in range(40):
        x = pos[:, 0:1]
        d = x.T - x  # 4,000,000 elements
        pos = pos + (d @ pos)[:, :3] * 1e-9
    assert moved() == 0 and cp.placement(pos) == "device"
    ref = h.copy()
    for _ in range(40):
        x = ref[:, 0:1]
        ref = ref + ((x.T - x) @ ref)[:, :3] * 1e-9
    np.testing.assert_allclose(pos.get(), ref, rtol=1e-12)


@auto_only
def test_a_loop_of_small_statements_over_a_small_array_moves_nothing():
    reset_device_counters()
    a = cp.zeros((20, 20))
    ref = np.zeros((20, 20))
    for i in range(1, 20):
        for xp, arr in ((cp, a), (np, ref)):
            arr[i, 1:-1] += arr[i - 1, :-2] + 1.0
            arr[i, 0] = arr[i, 1] * 0.5
            s = arr[i, :i] @ arr[:i, i]
            arr[i, i] -= s
            if arr[i, 2] > 0:
                arr[i] /= 2.0
    assert moved() == 0 and device_counters()["launches"] == 0
    np.testing.assert_array_equal(a.get(), ref)
    assert cp.placement(a) == "host"


@auto_only
def test_triangular_solve_by_rows_moves_the_matrix_to_the_host_once():
    n = int(np.sqrt(pl.THRESHOLD)) + 40  # a matrix just past the threshold: on the device
    rng = np.random.default_rng(0)
    L_ref = np.tril(rng.random((n, n))) + n * np.eye(n)
    b_ref = rng.random(n)
    L = cp.asarray(L_ref)
    b = cp.asarray(b_ref)
    assert cp.placement(L) == "device"
    reset_device_counters()
    x = cp.zeros(n)
    x_ref = np.zeros(n)
    for i in range(n):
        for xp, LL, bb, xx in ((cp, L, b, x), (np, L_ref, b_ref, x_ref)):
            xx[i] = (bb[i] - LL[i, :i] @ xx[:i]) / LL[i, i]
    np.testing.assert_allclose(x.get(), x_ref, rtol=1e-12)
    assert cp.placement(L) == "host"
    assert L._buf.ledger.moves == 1
    # the matrix came back once; everything else that moved is small
    assert L.nbytes <= device_counters()["d2h_bytes"] < L.nbytes + 64 * n
    assert device_counters()["h2d_bytes"] < 64 * n


@auto_only
def test_a_row_product_adds_the_product_premium_to_the_matrix_ledger():
    """A row of a large device matrix times a vector (sor's ``A[i] @ x``) is priced as an
    op on those elements plus what a product costs more on the device (a BLAS call): the
    matrix's regret grows by exactly ``PRODUCT_PREMIUM`` more than for an elementwise op
    on the same operands, so such a loop moves the matrix over sooner."""
    m = int(np.sqrt(pl.THRESHOLD)) + 40  # past the threshold: on the device
    rng = np.random.default_rng(5)
    ref, v_ref = rng.random((m, m)), rng.random(m)
    grown = {}
    for kind in ("elementwise", "product"):
        A, v = cp.asarray(ref), cp.asarray(v_ref)
        place(v, "device")
        assert cp.placement(A) == "device"
        got = A[3] * v if kind == "elementwise" else A[3] @ v
        want = ref[3] * v_ref if kind == "elementwise" else ref[3] @ v_ref
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-12)
        grown[kind] = A._buf.ledger.regret
    assert grown["elementwise"] > 0.0
    assert grown["product"] == pytest.approx(grown["elementwise"] + pl.PRODUCT_PREMIUM)
    assert pl.PRODUCT_HOST_WINS_BELOW > pl.HOST_WINS_BELOW > 0


@auto_only
def test_a_block_of_right_hand_sides_is_not_moved_back_and_forth(monkeypatch):
    """trisolve with a block of right-hand sides past the threshold, over rows too few for
    the matrix to move: the matrix holds each row product on the device, so the block's
    ledger must not send it to the host (its next row product would copy it straight back,
    over and over: it did, every ~60 rows).  (The sweep's prediction, that the loop runs
    on to the last row, would move the matrix early: here it is not trusted.)"""
    monkeypatch.setattr(pl, "SWEEP_TRUST", 1.0)
    n, k, rows = 3000, 32, 120  # L 72 MB, X and B 768 KB: all three on the device
    rng = np.random.default_rng(3)
    L_ref = np.tril(rng.random((n, n))) + n * np.eye(n)
    B_ref = rng.random((n, k))
    L, B, X = cp.asarray(L_ref), cp.asarray(B_ref), cp.zeros((n, k))
    X_ref = np.zeros((n, k))
    assert {cp.placement(L), cp.placement(B), cp.placement(X)} == {"device"}
    reset_device_counters()
    for i in range(rows):
        X[i] = (B[i] - L[i, :i] @ X[:i]) / L[i, i]
        X_ref[i] = (B_ref[i] - L_ref[i, :i] @ X_ref[:i]) / L_ref[i, i]
    np.testing.assert_allclose(X.get(), X_ref, rtol=1e-12)
    assert cp.placement(L) == "device"  # (too few rows to pay for moving 32 MB)
    assert cp.placement(X) == "device" and cp.placement(B) == "device"
    counts = device_counters()
    assert counts["h2d_bytes"] < X.nbytes and counts["d2h_bytes"] < X.nbytes + X.nbytes // 2


@auto_only
def test_a_device_result_read_by_each_op_keeps_a_large_operand_on_the_device():
    """``B[i] - m``, ``m`` a small result made on the device afresh for each op (trisolve's
    row product): on the host each op would also wait for ``m`` and copy it over, so B's
    ledger finds the device cheaper and B stays there (it moved to the host after ~40 ops,
    and then every ``m`` followed it, one wait each)."""
    rng = np.random.default_rng(4)
    B = cp.asarray(rng.random((pl.THRESHOLD // 16, 32)))  # past the threshold: the device
    src = cp.asarray(rng.random(pl.THRESHOLD * 2))
    _backends.pin_device(src, "test")  # (so that every m is made on the device)
    reset_device_counters()
    for i in range(200):
        m = src[32 * i:32 * (i + 1)] * 2.0
        assert cp.placement(m) == "device"
        r = B[i] - m
    assert cp.placement(B) == "device"
    assert device_counters()["syncs"] == 0
    np.testing.assert_array_equal(r.get(), B.get()[199] - src.get()[6368:6400] * 2.0)


@auto_only
@pytest.mark.parametrize("ratio", [16, 1 << 40])
@pytest.mark.parametrize("block_first", [False, True])
def test_a_matrix_row_times_a_far_smaller_device_operand_is_priced_against_the_matrix(
        monkeypatch, ratio, block_first):
    """trisolve's row product with a block of right-hand sides, both device-only: the
    matrix alone holds the op on the device (the block has under 1/HOLD_RATIO of its
    bytes), in either operand order, so the op is priced against the matrix's ledger (and
    the block would move with it); where the block holds the op too, nothing is priced."""
    monkeypatch.setattr(pl, "HOLD_RATIO", ratio)
    n, k = 2000, 32  # L 32 MB, X 512 KB: both past the threshold, X under L / 16
    L = cp.asarray(np.tril(np.ones((n, n))))
    X = cp.asarray(np.ones((n, k)))
    assert {cp.placement(L), cp.placement(X)} == {"device"}
    assert pl.THRESHOLD_BYTES < X.nbytes and X.nbytes * 16 <= L.nbytes
    operands = (X[:300], L[300, :300]) if block_first else (L[300, :300], X[:300])
    _backends.for_arrays(*operands)  # the side of L[i, :i] @ X[:i]
    if ratio == 16:
        assert L._buf.ledger is not None and L._buf.ledger.regret > 0
    else:
        assert L._buf.ledger is None
    assert X._buf.ledger is None  # (the block is never priced for the row product)


def _operand(kind, rng):
    """An operand of ``kind`` for ``test_placing_without_pricing_decides_as_the_pricing``:
    arrays whose data is on one side, both, pending or not allocated yet, small or large,
    whole or a small view, with or without a ledger regret or pins; or a scalar."""
    if kind == "scalar":
        return 2.0
    n = int(rng.choice([100, 3000, 30000, pl.THRESHOLD + 1, 4 * pl.THRESHOLD]))
    if kind == "unallocated":
        a = cp.empty(n)
        a._buf = pl.Unallocated(n * 8)
        return a
    a = cp.asarray(np.ones(n))
    place(a, {"host-only": "host", "pending": "device"}.get(kind, kind))
    if kind == "pending":
        a._buf.device, a._buf.pending = None, object()  # (what the pricing reads of one)
    if rng.random() < 0.3 and kind != "pending":
        a._buf.ledger = pl.Ledger()
        a._buf.ledger.regret = float(rng.choice([0.0, 5.0]))
    if rng.random() < 0.15 and kind in ("both", "host-only"):
        a._buf.pins = {"host": {"export"}}
    return a[: int(rng.choice([1, 50, n]))] if rng.random() < 0.5 else a


@auto_only
def test_placing_without_pricing_decides_as_the_pricing(monkeypatch):
    """``_place`` skips the cost table for ops of device data that the table would leave
    on the device (no regret to lower, nothing moved): wherever it does, ``_priced`` on
    the same operands gives the device backend and leaves every ledger and side as it
    was."""
    rng = np.random.default_rng(7)
    priced = []
    real = _backends._priced
    monkeypatch.setattr(_backends, "_priced", lambda ops, fresh, premium: priced.append(
        1) or real(ops, fresh, premium))
    kinds = ["scalar", "device", "both", "host-only", "pending", "unallocated"]
    skipped = 0
    for _ in range(600):
        ops = [_operand(str(rng.choice(kinds)), rng) for _ in range(int(rng.integers(1, 4)))]
        fresh = int(rng.choice([-1, 800, 8 * pl.THRESHOLD * 4]))
        premium = float(rng.choice([0.0, pl.PRODUCT_PREMIUM]))  # (an op, a product)
        del priced[:]
        backend = _backends._place(ops, fresh, premium)
        if priced:
            continue
        skipped += 1
        bufs = [x._buf for x in ops if hasattr(x, "_buf")]
        state = [(b.host is None, b.device is None, b.ledger and (
            b.ledger.regret, b.ledger.ops, b.ledger.moves)) for b in bufs]
        assert backend is _backends.get()
        assert real(ops, fresh, premium) is _backends.get()
        assert state == [(b.host is None, b.device is None, b.ledger and (
            b.ledger.regret, b.ledger.ops, b.ledger.moves)) for b in bufs]
    assert skipped > 50  # (the case the shortcut is for does occur)


@auto_only
def test_a_row_op_on_a_large_device_array_is_priced_as_by_the_pricing():
    """``stays_on_device``'s own path for one large device-only array and a number (a row
    op in a loop over a large matrix) decides as ``_place`` does on the same operands: the
    same answer, ledger and side, from states with and without regret,
    over enough ops that some move the data to the host (where the hot paths stop asking:
    host data takes the host path)."""
    rng = np.random.default_rng(11)
    m = int(np.sqrt(4 * pl.THRESHOLD))
    ref = rng.random((m, m))
    for trial in range(40):
        states = []
        for how in ("stays_on_device", "_place"):
            A = cp.asarray(ref)
            assert cp.placement(A) == "device"
            if trial % 4:
                A._buf.ledger = pl.Ledger()
                A._buf.ledger.regret = float(trial * 997 % 30000)
                A._buf.settled = 0
            answers = []
            for i in range(int(rng.integers(1, 60)) if how == "stays_on_device" else steps):
                row = A[i % m] if trial % 3 else A[: 1 + (i * 37) % m]  # (small, or not)
                if how == "stays_on_device":
                    answers.append(_backends.stays_on_device(row, 2.0))
                else:
                    answers.append(_backends._place((row, 2.0), -1) is not _backends._host)
                led = A._buf.ledger
                answers.append((cp.placement(A), led and (led.regret, led.ops, led.moves)))
                if A._buf.settled:  # (the level's promise: device-only, no regret)
                    assert cp.placement(A) == "device" and not (led and led.regret)
                if cp.placement(A) == "host":
                    break
            steps = len(answers) // 2
            states.append(answers)
        assert states[0] == states[1]
        np.testing.assert_array_equal(A.get(), ref)


@auto_only
def test_a_row_written_into_a_large_device_array_is_priced_as_by_the_pricing():
    """``copy_into``'s own path for small device data written into a large device-only array
    (a row update in a loop) decides as ``for_writing`` does: the same side, ledger and
    ``settled`` level after every write, from states with and without regret, over enough
    writes that some move the data to the host; the values are NumPy's."""
    rng = np.random.default_rng(12)
    m = int(np.sqrt(4 * pl.THRESHOLD))
    ref, small = rng.random((m, m)), rng.random(60 * m)  # (60 rows: SMALL, > HOST_WINS_BELOW)
    for trial in range(30):
        states, steps = [], int(rng.integers(1, 80))
        for how in ("copy_into", "for_writing"):
            A, s0 = cp.asarray(ref), cp.asarray(small)
            place(s0, "device")
            want = ref.copy()
            if trial % 3:
                A._buf.ledger = pl.Ledger()
                A._buf.ledger.regret = float(trial * 1499 % 30000)
                A._buf.settled = 0
            seen = []
            for i in range(steps):
                rows = 1 if trial % 4 else (1, 20, 60)[i % 3]  # (a row, or a block)
                k = (i * 7) % (m - rows + 1)
                src = (s0[: rows * m] * float(i)).reshape(rows, m)  # (fresh: SMALL)
                if i % 2:  # (written since it was made: no copy charged for it, version 1)
                    src *= 1.0
                    assert src._buf.settled == buffer.SMALL and src._buf.version
                dst = A[k:k + rows]
                if how == "copy_into":
                    _backends.copy_into(dst, src)
                else:
                    _backends.for_writing(dst, src).copy(src, dst)
                want[k:k + rows] = (small[: rows * m] * float(i)).reshape(rows, m)
                led = A._buf.ledger
                seen.append((cp.placement(A), cp.placement(src), A._buf.settled,
                             led and (led.regret, led.ops, led.moves)))
                if cp.placement(A) == "host":
                    break
            states.append(seen)
            np.testing.assert_array_equal(A.get(), want)
        assert states[0] == states[1]


@auto_only
@pytest.mark.parametrize("route", ["copy_into", "for_writing"])
def test_rows_copied_between_large_device_arrays_of_like_size_are_not_priced(route):
    """Two large device-only arrays of like size hold a copy between them on the device
    together (``_holding``), so a row copied from one into the other (a roll's parts) is
    priced on neither ledger, by ``copy_into``'s lane as by the general route; a row from
    an array 16 times smaller is priced on the large one's ledger."""
    rng = np.random.default_rng(13)
    m = int(np.sqrt(64 * pl.THRESHOLD))
    ref_a, ref_b = rng.random((m, m)), rng.random((m // 2, m))
    ref_c = rng.random((pl.THRESHOLD // (m // 8) + 2, m // 8))  # (just past the threshold)
    A, B, C = cp.asarray(ref_a), cp.asarray(ref_b), cp.asarray(ref_c)
    assert {cp.placement(A), cp.placement(B), cp.placement(C)} == {"device"}
    write = _backends.copy_into if route == "copy_into" else (
        lambda dst, src: _backends.for_writing(dst, src).copy(src, dst))
    for i in range(20):
        write(A[i], B[i + 1])
        ref_a[i] = ref_b[i + 1]
    for buf in (A._buf, B._buf):
        assert buf.ledger is None or buf.ledger.ops == 0
    write(A[0, : m // 8], C[1])  # (C has under 1/16 of A's bytes: A's ledger prices it)
    ref_a[0, : m // 8] = ref_c[1]
    assert A._buf.ledger is not None and A._buf.ledger.ops == 1
    np.testing.assert_array_equal(A.get(), ref_a)


@auto_only
@pytest.mark.parametrize("side", ["host", "device"])
def test_data_pinned_to_a_side_is_not_moved_off_it(side):
    """Moving data that an export pins to one side to the other raises, and leaves the
    data where it was (the copy made there is not kept under a pin: before, the move then
    dropped the pinned copy too, and the array had its data nowhere)."""
    ref = np.arange(4.0 * pl.THRESHOLD)
    a = cp.asarray(ref)
    pl.pin(a._buf, side, "export")
    other = "device" if side == "host" else "host"
    with pytest.raises(RuntimeError, match="pinned"):
        place(a, other)
    assert cp.placement(a) == side
    np.testing.assert_array_equal(cp.asnumpy(a), ref)


def _settled_is_true(buf) -> bool:
    """What ``Buffer.settled`` promises: what ``_place`` would find reading the Buffer whole
    (the level: whether the data is larger than the threshold)."""
    large = buf.device is not None and buf.device.nbytes > pl.THRESHOLD_BYTES
    return (buf.host is None and buf.pending is None and buf.device is not None
            and (buf.ledger is None or not buf.ledger.regret)
            and buf.settled == (buffer.LARGE if large else buffer.SMALL))


@auto_only
def test_a_settled_buffer_is_one_the_shortcut_would_find_so():
    """``_place`` marks a device-only Buffer with no regret ``settled`` (``SMALL`` or
    ``LARGE``) and then reads that one attribute: through random ops, moves, reads on the
    other side, writes, pins, exports and ledger entries, every Buffer marked settled is
    still in that state, at its level."""
    rng = np.random.default_rng(11)
    arrays = [cp.asarray(np.ones(n)) for n in (pl.THRESHOLD + 64, 4 * pl.THRESHOLD, 1000,
                                               2 * pl.THRESHOLD)]
    arrays += [arrays[1] * 2.0, -arrays[3]]  # (results: Buffers born settled, or not)
    large = buffer.LARGE
    assert [x._buf.settled for x in arrays] == [large, large, 0, large, large, large]
    small = cp.asarray(np.ones(1000))
    place(small, "device")  # (a move: settled again once an op finds it so)
    assert not small._buf.settled
    _backends.for_arrays(small, 2.0)
    assert small._buf.settled == buffer.SMALL
    arrays += [small, small * 2.0]  # (a small device result: born buffer.SMALL)
    assert arrays[-1]._buf.settled == buffer.SMALL
    marked = {buffer.SMALL: 0, buffer.LARGE: 0}
    for step in range(500):
        a = arrays[int(rng.integers(len(arrays)))]
        buf = a._buf
        action = int(rng.integers(8))
        if action <= 2:  # an op over views of some of them (the shortcut, or the pricing)
            ops = [x if rng.random() < 0.5 else x[: int(rng.choice([10, 30000, x.size]))]
                   for x in (a, arrays[int(rng.integers(len(arrays)))])]
            _backends.for_arrays(*ops, 2.0)
        elif action == 3 and buf.pins is None:
            place(a, str(rng.choice(["host", "device", "both"])))
        elif action == 4:  # a write on one side (a small one may keep both copies)
            side = "host" if buf.host is not None and rng.random() < 0.5 else "device"
            if buf.pins:
                side = next(iter(buf.pins))  # (written where an export pins it)
            buf.will_write(side, int(rng.choice([8, a.nbytes])))
        elif action == 5:  # an op priced on the device side: a regret may start
            pl.record(buf, "device", int(rng.choice([1, 10 ** 6])))
        elif action == 6 and buf.pins is None and rng.random() < 0.2:
            pl.pin(buf, str(rng.choice(["host", "device"])), "test")
            if rng.random() < 0.5:
                pl.unpin(buf, "host" if buf.host is not None else "device", "test")
        elif action == 7 and rng.random() < 0.1:
            buf.address()  # an export: pinned to the device for good
        for x in arrays:
            if x._buf.settled:
                marked[x._buf.settled] += 1
                assert _settled_is_true(x._buf), (step, action)
    assert min(marked.values()) > 50, marked  # (the marks are set and read)


@auto_only
def test_the_hot_paths_settled_lanes_decide_as_placement_does():
    """The ufunc hot paths send an op over settled operands, all buffer.SMALL or of more than
    ``UNPRICED_ABOVE`` elements, to ``_backends.for_settled`` unasked (``_ufunc_hot``'s
    lanes; the layout path's with the result's bytes): what ``_place`` and
    ``stays_on_device`` answer for it, through random views, dtypes and broadcasts."""
    rng = np.random.default_rng(5)
    n = 2 * pl.THRESHOLD
    arrays = [cp.asarray(np.ones(n)), cp.asarray(np.ones((64, n // 64), np.float32)),
              cp.asarray(np.ones(n // 2, np.float32))]
    for size in (1000, 7):  # small device data: buffer.SMALL once an op finds it so
        small = cp.asarray(np.ones(size))
        place(small, "device")
        _backends.for_arrays(small)
        arrays.append(small)
    taken = {buffer.SMALL: 0, buffer.LARGE: 0}
    for _ in range(400):
        a = arrays[int(rng.integers(len(arrays)))]
        stop = int(rng.choice([7, 5000, 20000, a.shape[0]]))
        x = a[: stop : int(rng.choice([1, 2]))]
        y = x if rng.random() < 0.3 else (2.0 if rng.random() < 0.5 else (
            x[:1] if rng.random() < 0.5 else arrays[-1][:1]))
        levels = [v._buf.settled for v in (x, y) if isinstance(v, cp.ndarray)]
        if not all(levels):
            continue
        level = levels[0] | levels[-1]
        for itemsize in (4, 8, 16):
            nbytes = x.size * itemsize
            if level == buffer.SMALL or nbytes >> 3 > pl.UNPRICED_ABOVE:
                assert _backends.for_operands((x, y), nbytes) is _backends.for_settled
                taken[buffer.SMALL if level == buffer.SMALL else buffer.LARGE] += 1
        if level == buffer.SMALL or x.size > pl.UNPRICED_ABOVE:
            assert _backends.stays_on_device(x, y)
    assert min(taken.values()) > 50, taken


@auto_only
def test_copies_between_settled_buffers_write_as_numpy_and_after_their_readers(
        small_arrays_fuse):
    """Slice and tuple-key assignment between settled Buffers (``_array._copy_into``'s
    lane): NumPy's values, one version bump, and an expression still pending over the
    target (a reader) computed from the data before the write."""
    n = 2 * pl.THRESHOLD
    ref_a, ref_b = np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64) * 2
    a, b = cp.asarray(ref_a), cp.asarray(ref_b)
    assert a._buf.settled and b._buf.settled
    version = a._buf.version
    a[1:-1] = b[2:]
    ref_a[1:-1] = ref_b[2:]
    np.testing.assert_array_equal(cp.asnumpy(a), ref_a)
    assert a._buf.version == version + 1
    pending = a + 1.0  # (deferred: a's Buffer has a reader)
    assert a._buf.readers is not None
    a[:-2] = b[2:]
    np.testing.assert_array_equal(cp.asnumpy(pending), ref_a + 1.0)
    ref_a[:-2] = ref_b[2:]
    g_ref = np.arange(300 * 300, dtype=np.float64).reshape(300, 300)
    g, h = cp.asarray(g_ref), cp.asarray(-g_ref)
    g[1:-1, 1:-1] = h[2:, :-2]
    g_ref[1:-1, 1:-1] = -g_ref[2:, :-2]
    np.testing.assert_array_equal(cp.asnumpy(g), g_ref)
    np.testing.assert_array_equal(cp.asnumpy(a), ref_a)


@auto_only
def test_ops_over_small_device_data_run_there_unpriced(monkeypatch):
    """A loop of elementwise ops over small device-only arrays (a conjugate gradient's
    vectors beside its large matrix): the ufuncs' hot and layout paths run them on the
    device without asking placement (their operands are SMALL: ``_place`` would answer the
    device, as no such operand ever moves), with NumPy's values; an op with a host-only
    operand is still priced.  (Products and reductions ask ``for_result``, whose answer
    ``_place``'s shortcut gives.)"""
    asked = []

    def counting(real):
        def ask(*args):
            asked.append(sys._getframe(1).f_code.co_name)
            return real(*args)
        return ask

    ref = {name: np.linspace(0.5, 2.0, 1000) * k for k, name in enumerate("xyz", 1)}
    arrays = {name: cp.asarray(v) for name, v in ref.items()}
    for a in arrays.values():
        place(a, "device")
        _backends.for_arrays(a)  # (the shortcut marks it SMALL)
    monkeypatch.setattr(_backends, "_place", counting(_backends._place))
    monkeypatch.setattr(_backends, "for_operands", counting(_backends.for_operands))

    def step(xp, x, y, z):
        alpha = (x @ y) / (y @ z)  # (a 0-d device result: born SMALL)
        x += alpha * y
        z -= 2.0 * x
        w = xp.sqrt(xp.abs(z)) + x[::2].sum()  # (the layout path: a strided view)
        y[...] = w
        return alpha

    for _ in range(3):
        alpha = step(cp, *arrays.values())
        ref_alpha = step(np, *ref.values())
    assert {"stays_on_device", "_layout_call"}.isdisjoint(asked), asked
    assert "for_product" in asked  # (the products)
    asked.clear()
    for name in ref:
        np.testing.assert_allclose(cp.asnumpy(arrays[name]), ref[name], rtol=1e-12)
        assert cp.placement(arrays[name]) == "device"
    np.testing.assert_allclose(float(alpha), ref_alpha, rtol=1e-12)
    host = cp.asarray(np.ones(1000))  # (small: on the host)
    np.testing.assert_allclose(cp.asnumpy(arrays["x"] + host), ref["x"] + 1.0)
    assert "stays_on_device" in asked  # (priced: the host operand may bring the op over)


@auto_only
def test_a_write_deferred_into_a_settled_buffer_unsettles_it(small_arrays_fuse):
    """``out=`` a settled array, deferred (fusion): its Buffer turns pending, so it is no
    longer settled, and the hot path's next op over it reads the pending result."""
    n = 2 * pl.THRESHOLD
    a = cp.asarray(np.arange(n, dtype=np.float64))
    d = cp.asarray(np.ones(n))
    assert d._buf.settled
    cp.multiply(a, 2.0, out=d)
    assert d._buf.pending is not None and not d._buf.settled
    np.testing.assert_array_equal(cp.asnumpy(d + a), np.arange(n) * 3.0)


@auto_only
@pytest.mark.parametrize("dtypes", [("f8", "f4"), ("i1", "i8"), ("f4", "f8"), ("u2", "?"),
                                    ("f8", "f8"), ("f4", "f4"), ("u8", "u8"), ("c8", "c8"),
                                    ("i2", "i2")])
def test_a_host_number_operand_of_a_device_op_goes_in_as_its_value(dtypes):
    """A 0-d host array with a device array (``sqrt(rr) <= tol * b_norm``, ``b_norm`` on
    the host): its value is a kernel parameter, no copy, with the dtype NumPy gives (NEP
    50: a 0-d array is as strong as a NumPy scalar; of the array's own dtype, it goes in as
    a Python scalar, which gives the same loop), in either operand order."""
    ref = (np.arange(pl.THRESHOLD_BYTES // np.dtype(dtypes[0]).itemsize + 1) % 7).astype(
        dtypes[0])
    x = cp.asarray(ref)
    r = x.sum()  # a 0-d device array
    value = np.asarray(3, dtypes[1])
    s = cp.asarray(value)
    assert cp.placement(x) == "device" and cp.placement(s) == "host"
    reset_device_counters()
    got = [x * s, s + x, r <= s, s - r]
    assert moved() == 0
    want = [ref * value, value + ref, ref.sum() <= value, value - ref.sum()]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(cp.asnumpy(g), w)


@auto_only
@pytest.mark.parametrize("extra", [0, 1500])
def test_a_host_array_swept_whole_by_ops_cheaper_on_the_device_moves_there_once(extra):
    """An array of at most the threshold starts on the host; when its ops touch more
    elements than ``HOST_WINS_BELOW`` (each cheaper on the device by the cost table), the
    host path enters them in the ledger, which moves the data to the device once (a 1-D
    heat equation); an array of at most ``HOST_UNPRICED_UPTO`` elements stays on the host,
    its ops unpriced.  Values: NumPy's."""
    n = pl.HOST_UNPRICED_UPTO + extra
    assert n <= pl.THRESHOLD
    ref = np.linspace(0.0, 1.0, n)
    u = cp.asarray(ref)
    assert cp.placement(u) == "host"
    reset_device_counters()
    for _ in range(300):
        u[1:-1] = u[1:-1] + 0.4 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        ref[1:-1] = ref[1:-1] + 0.4 * (ref[2:] - 2.0 * ref[1:-1] + ref[:-2])
    if extra:
        assert cp.placement(u) == "device" and u._buf.ledger.moves == 1
        assert 0 < device_counters()["h2d_bytes"] <= 3 * u.nbytes
    else:
        assert cp.placement(u) == "host" and moved() == 0
    np.testing.assert_allclose(cp.asnumpy(u), ref, rtol=1e-12, atol=1e-15)


@auto_only
def test_row_operators_on_a_large_device_array_move_it_to_the_host():
    """The operators' device hot path enters its small ops in the ledger too: in-place
    row updates of a large device array (each far cheaper on the host) move it there once,
    and the rest of the loop runs on the host."""
    ref = np.arange(200 * 1000, dtype=np.float64).reshape(200, 1000)
    A = cp.asarray(ref)
    assert cp.placement(A) == "device"
    for i in range(200):
        A[i] *= 0.5
        A[i] += 1.0
        ref[i] *= 0.5
        ref[i] += 1.0
    assert cp.placement(A) == "host" and A._buf.ledger.moves == 1
    np.testing.assert_array_equal(A.get(), ref)


def test_the_ledger_follows_a_sweep_in_either_direction():
    led = pl.Ledger()
    for row in range(1, pl.SWEEP_MIN_STEPS):
        led.follow(row * 800)
        led.follow(row * 800 + 16)  # (two views in one row: both steps on)
        led.regret += 5.0
    assert led.steps == 2 * (pl.SWEEP_MIN_STEPS - 1)
    assert led.regret_ahead(7 * 800 + 16, 80_000) == pytest.approx(35.0 / led.steps * (
        (80_000 - 7 * 800 - 16) / (led.span / led.steps)))
    led.follow(7 * 800)  # turned back: a new sweep, which has taken no step yet
    assert (led.steps, led.span, led.regret0) == (0, 0, 35.0)
    assert led.regret_ahead(7 * 800, 80_000) == 0.0
    for row in range(6, -1, -1):  # down to the first row
        led.follow(row * 800)
        led.regret += 1.0
    led.follow(0)  # (the same view again: no step)
    assert led.steps == 7 and led.span == -7 * 800
    assert led.regret_ahead(0, 80_000) == 0.0  # (too few steps, and none left)


@auto_only
@pytest.mark.parametrize("rows", [30, 1000])
def test_a_sweep_over_rows_moves_early_and_a_short_loop_does_not(rows):
    """Row updates sweeping a large device array move it to the host once their regret
    reaches SWEEP_TRUST of a move while the rows left would add more than a move's cost;
    a loop over the first few rows (too few steps, too little regret) leaves it there."""
    n = 2000
    ref = np.arange(n * 1000, dtype=np.float64).reshape(n, 1000)
    A = cp.asarray(ref)
    assert cp.placement(A) == "device"
    move = pl.migration_cost(A.nbytes, "host")
    per_row = pl.op_cost("device", 1000) - pl.op_cost("host", 1000)
    assert per_row * n > move  # (the whole sweep pays for the move)
    early = int(pl.SWEEP_TRUST * move / per_row) + 2
    assert pl.SWEEP_MIN_STEPS < early < move / per_row / 2
    where = []
    for i in range(rows):
        A[i] *= 0.5
        ref[i] *= 0.5
        where.append(cp.placement(A))
    np.testing.assert_array_equal(A.get(), ref)
    if rows < early - 2:
        assert where[-1] == "device" and A._buf.ledger.moves == 0
    else:
        assert where.index("host") <= early and A._buf.ledger.moves == 1
        assert set(where[where.index("host"):]) == {"host"}


def _row_filter(xp, x, y, rows):
    for i in range(1, rows):
        y[i] = 0.8 * y[i - 1] + 0.2 * x[i]


@auto_only
def test_arrays_swept_side_by_side_move_to_the_host_together():
    """A recursive row filter (iir_rows' ``y[i] = a * y[i - 1] + b * x[i]``) sweeps two
    large device arrays side by side.  Alone, neither pays for its move (x's own ops never
    would); priced together, their regrets against both moves, they move together, once
    each, early in the loop, and the rest of it runs on the host with NumPy's values."""
    n, m = 1500, 8192
    rng = np.random.default_rng(3)
    x_ref = rng.standard_normal((n, m), dtype=np.float32)
    y_ref = np.empty_like(x_ref)
    y_ref[0] = x_ref[0]
    x = cp.asarray(x_ref)
    y = cp.empty_like(x)
    y[0] = x[0]
    assert cp.placement(x) == cp.placement(y) == "device"
    per_row = pl.op_cost("device", m) - pl.op_cost("host", m)
    move = pl.migration_cost(x.nbytes, "host")
    assert per_row * n < move  # (x alone: never)
    where = []
    for i in range(1, n):
        y[i] = 0.8 * y[i - 1] + 0.2 * x[i]
        where.append((cp.placement(x), cp.placement(y)))
    _row_filter(np, x_ref, y_ref, n)
    np.testing.assert_array_equal(y.get(), y_ref)
    first = where.index(("host", "host"))
    assert first < n // 4 and ("host", "device") not in where and ("device", "host") not in where
    assert set(where[first:]) == {("host", "host")}
    assert x._buf.ledger.moves == 1 and y._buf.ledger.moves == 1


@auto_only
def test_an_array_swept_beside_a_pinned_one_stays_on_the_device():
    """The same filter reading the rows of an array pinned to the device (an export): on
    the host, every step would copy the pinned array's row over and wait for it, so y
    stays on the device, with no wait."""
    n, m = 600, 8192
    rng = np.random.default_rng(4)
    x_ref = rng.standard_normal((n, m), dtype=np.float32)
    x = cp.asarray(x_ref)
    _backends.pin_device(x, "test")
    y = cp.empty_like(x)
    y[0] = x[0]
    reset_device_counters()
    _row_filter(cp, x, y, n)
    assert cp.placement(y) == "device" and device_counters()["syncs"] == 0
    y_ref = np.empty_like(x_ref)
    y_ref[0] = x_ref[0]
    _row_filter(np, x_ref, y_ref, n)
    np.testing.assert_array_equal(y.get(), y_ref)


@auto_only
def test_an_array_swept_before_is_no_partner():
    """An array whose sweep ended before another's began does not move with it."""
    x = cp.asarray(np.ones((2000, 1000)))
    for i in range(40):  # x swept over its first rows, then left alone
        x[i] *= 1.0
    assert x._buf.ledger.steps >= pl.SWEEP_MIN_STEPS and cp.placement(x) == "device"
    A = cp.asarray(np.ones((2000, 1000)))
    for i in range(2000):
        A[i] *= 0.5
        if cp.placement(A) == "host":
            break
    assert cp.placement(A) == "host" and cp.placement(x) == "device"


@auto_only
def test_ops_on_one_row_over_and_over_are_no_sweep():
    """The same row updated again and again takes no step: the ledger moves the array only
    when its regret has reached a whole move's cost."""
    A = cp.asarray(np.ones((2000, 1000)))
    move = pl.migration_cost(A.nbytes, "host")
    per_op = pl.op_cost("device", 1000) - pl.op_cost("host", 1000)
    for _ in range(int(move / per_op) - 2):
        A[7] *= 1.0
    assert cp.placement(A) == "device" and A._buf.ledger.steps <= 1  # (row 7 from row 0)
    for _ in range(4):
        A[7] *= 1.0
    assert cp.placement(A) == "host"


@auto_only
def test_small_device_operands_come_along_when_the_matrix_moves():
    """A row product of a large device matrix and a small vector whose data is only on the
    device too: the small vector holds nothing, so the matrix's ledger counts the op, and
    when the matrix moves to the host the vector comes with it (the op then runs on the
    host, and the matrix is not copied back)."""
    n = int(np.sqrt(pl.THRESHOLD)) + 40
    rng = np.random.default_rng(1)
    A_ref, v_ref = rng.random((n, n)), rng.random(n)
    A, v = cp.asarray(A_ref), cp.asarray(v_ref)
    place(v, "device")
    got = [A[i] @ v for i in range(n)]
    assert cp.placement(A) == "host" and cp.placement(v) == "host"
    assert A._buf.ledger.moves == 1
    np.testing.assert_allclose([float(g) for g in got], A_ref @ v_ref, rtol=1e-12)


@auto_only
def test_a_large_host_array_swept_whole_moves_to_the_device():
    x = cp.asarray(np.ones(pl.THRESHOLD * 4))
    place(x, "host")
    for _ in range(40):
        x *= 1.0
        x += 0.0
    assert cp.placement(x) == "device"
    assert x._buf.ledger.moves == 1


@auto_only
def test_never_moves_back_within_the_minimum_ops():
    buf = cp.asarray(np.ones(64))._buf
    place_side = "host"
    for _ in range(pl.MIN_OPS_BETWEEN_MOVES * 3):
        if pl.record(buf, place_side, 10**9 if place_side == "host" else 1):
            pl.move(buf, pl.other(place_side))
            place_side = pl.other(place_side)
            ops_at_move = buf.ledger.ops
            assert ops_at_move == 0
    assert buf.ledger.moves >= 1


def test_cost_table_is_data_and_prices_the_rule():
    assert pl.op_cost("host", 10) < pl.op_cost("device", 10)  # small: the host is cheaper
    assert pl.op_cost("device", 10**8) < pl.op_cost("host", 10**8)  # large: the device
    for side in ("host", "device"):
        assert pl.migration_cost(8 * 10**6, side) > pl.migration_cost(8, side)


# --- what users see -----------------------------------------------------------------------
@auto_only
def test_element_and_full_reduction_of_host_arrays_are_numpy_scalars():
    h = cp.asarray(np.arange(6.0).reshape(2, 3))
    place(h, "host")
    assert type(h[1, 2]) is np.float64 and h[1, 2] == 5.0
    assert type(h[1]) is cp.ndarray and h[1].shape == (3,)  # a row stays a view
    h[1][0] = 7.0
    assert h[1, 0] == 7.0
    place(h, "device")
    x = h[1, 2]
    assert type(x) is cp.ndarray and x.shape == ()  # device: an independent 0-d array
    h[1, 2] = 0.0
    assert float(x) == 5.0


@auto_only
def test_the_product_operator_of_1d_host_arrays_is_numpy_s_scalar():
    ha, hb = np.arange(1.0, 5.0), np.arange(2.0, 6.0)
    a, b = cp.asarray(ha), cp.asarray(hb)
    place(a, "host")
    place(b, "host")
    got = a @ b
    assert type(got) is type(ha @ hb) and got == ha @ hb
    m = cp.asarray(np.eye(4))
    place(m, "host")
    assert type(m @ a) is cp.ndarray and (m @ a).shape == (4,)  # arrays stay arrays
    place(b, "device")
    assert type(a @ b) is cp.ndarray and (a @ b).shape == ()  # device: a 0-d array


@auto_only
@pytest.mark.parametrize("name", ["dot", "vdot", "inner", "matmul"])
def test_the_product_functions_of_1d_host_arrays_are_numpy_s_scalars(name):
    ha, hb = np.arange(1.0, 5.0), np.arange(2.0, 6.0)
    a, b = cp.asarray(ha), cp.asarray(hb)
    place(a, "host")
    place(b, "host")
    want = getattr(np, name)(ha, hb)
    for got in (getattr(cp, name)(a, b), getattr(np, name)(a, b)):  # (and NumPy's dispatch)
        assert type(got) is type(want) and got == want
    m = cp.asarray(np.eye(4))
    place(m, "host")
    if name != "vdot":
        assert type(getattr(cp, name)(m, a)) is cp.ndarray  # arrays stay arrays
    place(a, "device")
    place(b, "device")
    got = getattr(cp, name)(a, b)
    assert type(got) is cp.ndarray and got.shape == () and got.get() == want  # device: 0-d


@auto_only
def test_small_writes_stop_updating_both_copies_once_that_costs_a_whole_copy():
    """Element writes into data valid on both sides update both copies, until those updates
    have cost more than copying the whole buffer over again: then the other copy goes, and
    the writes land on one side only (the ski-rental rule of the ledger)."""
    h = np.arange(2000.0)
    a = cp.asarray(h)
    place(a, "both")
    writes = 0
    while cp.placement(a) == "both":
        a[writes] = -1.0
        writes += 1
        assert writes < 100
    # (the writes land on the host copy and are copied to the device's)
    per_write = pl.COSTS["transfer"] + pl.COSTS["per_byte"]["device"] * 8
    assert writes == int(pl.migration_cost(a.nbytes, "device") // per_write) + 1
    h[:writes] = -1.0
    np.testing.assert_array_equal(a.get(), h)
    big = cp.zeros(LARGE)
    place(big, "both")
    for i in range(writes):  # (the same writes into a large buffer: both copies stay)
        big[i] = 1.0
    assert cp.placement(big) == "both"


@auto_only
def test_device_copies_of_host_data_are_evicted_first_when_memory_runs_out():
    kept = cp.asarray(np.arange(10.0))
    place(kept, "both")
    exported = cp.asarray(np.arange(4.0))
    place(exported, "both")
    exported._address()  # (a device address handed out: pinned to the device for good)
    only = cp.asarray(np.arange(6.0))
    place(only, "device")
    assert pl.evict_device_copies()  # (what the device pool does before it gives up)
    assert cp.placement(kept) == "host" and cp.placement(only) == "device"
    assert exported._buf.device is not None  # (its device copy stays)
    np.testing.assert_array_equal(kept.get(), np.arange(10.0))
    np.testing.assert_array_equal((kept + only[:1]).get(), np.arange(10.0))  # copied again
    assert not pl.evict_device_copies() or cp.placement(kept) == "host"


@auto_only
def test_a_device_pin_keeps_the_data_on_the_device():
    """What ``__cuda_array_interface__`` (for good) and a DLPack export (until its deleter
    runs) do to an array, through their mechanism (the exports themselves need CUDA)."""
    x = cp.asarray(np.arange(8.0))
    assert cp.placement(x) == "host"
    _backends.pin_device(x)  # (the interface's reason)
    assert cp.placement(x) == "device"
    for _ in range(3 * pl.MIN_OPS_BETWEEN_MOVES):  # small ops the ledger would bring home
        y = x[1:3] + 1.0
        x[0] = float(x[0]) + 1.0
    assert cp.placement(x) == "device"  # never copied to the host and kept there
    np.testing.assert_array_equal(y.get(), [2.0, 3.0])
    assert float(x[0]) == 3 * pl.MIN_OPS_BETWEEN_MOVES
    _backends.pin_device(x, reason=1234)  # a DLPack export...
    _backends.unpin_device(x, reason=1234)  # ...whose consumer is done: the first pin stays
    assert x._buf.pins == {"device": {"cuda_array_interface"}}


@auto_only
def test_zero_copy_numpy_export_pins_host_data_while_it_lives():
    x = cp.asarray(np.arange(8.0))
    place(x, "host")
    view = np.asarray(x, copy=False)
    assert x._buf.pins and "host" in x._buf.pins
    view[0] = 42.0  # the user writes through the view: cupynum sees it
    assert x[0] == 42.0
    y = x[2:4]
    y += cp.asarray(np.ones(2) + 0 * np.arange(2))
    assert view[2] == 3.0  # cupynum's writes land in the exported memory
    ref = weakref.ref(view)
    del view
    assert ref() is None and not x._buf.pins  # the pin goes with the last view


@auto_only
def test_device_data_cannot_be_exported_zero_copy():
    x = cp.asarray(np.arange(LARGE, dtype=np.float64))
    place(x, "device")
    with pytest.raises(ValueError):
        np.asarray(x, copy=False)


@needs_device
def test_random_numbers_do_not_depend_on_placement():
    a = cp.random.default_rng(7).random(SMALL)
    b = cp.random.default_rng(7).random(LARGE)
    np.testing.assert_array_equal(a.get(), b.get()[:SMALL])
    n1 = cp.random.default_rng(3).standard_normal(SMALL)
    n2 = cp.random.default_rng(3).standard_normal(SMALL)
    np.testing.assert_array_equal(n1.get(), n2.get())


@needs_device
@pytest.mark.parametrize("where", ["host", "device", "both"])
def test_results_equal_numpy_wherever_the_operands_are(where):
    ref = np.arange(30, dtype=np.float64).reshape(5, 6) - 7
    x = cp.asarray(ref)
    place(x, where)
    for got, want in [(x + 1, ref + 1), (x * x, ref * ref), (-x, -ref), (x.sum(0), ref.sum(0)),
                      (x @ x.T, ref @ ref.T), (x[1:, ::2] - x[0, ::2], ref[1:, ::2] - ref[0, ::2]),
                      (cp.sort(x, axis=1), np.sort(ref, axis=1)), (x[x > 3], ref[ref > 3])]:
        np.testing.assert_array_equal(got.get(), want)
    assert float(x.sum()) == ref.sum()
