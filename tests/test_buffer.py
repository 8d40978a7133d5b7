"""The Buffer that owns an array's data (``_backends/buffer.py``) and the per-op choice of
backend (``_backends.for_arrays`` / ``for_new``): views share one Buffer, every write
path bumps its version and reads leave it, the Buffer's attributes are what the design
says, and an op runs on the backend where its operands' data lives."""
import warnings

import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum._backends.buffer import Buffer
from helpers import compare

host_only = pytest.mark.skipif(_backends.name() != "host", reason="host backend's Buffers")


def _arange(n=12, dtype=np.float64):
    return cp.asarray(np.arange(n, dtype=dtype))


# --- the Buffer's own contract ------------------------------------------------------------
def test_on_returns_the_valid_copy_and_raises_for_the_other_side(monkeypatch):
    from cupynum._backends import buffer as buffer_module

    monkeypatch.setattr(buffer_module, "RESOLVE", None)  # (placement's hook copies across)
    raw = np.zeros(8, np.uint8)
    buf = Buffer(raw)
    assert buf.on("host") is raw and buf.on_host() is raw
    with pytest.raises(LookupError):
        buf.on_device()
    dev = object()
    buf = Buffer(device=dev)
    assert buf.on("device") is dev and buf.on_device() is dev
    with pytest.raises(LookupError):
        buf.on_host()


def test_will_write_bumps_the_version():
    buf = Buffer(np.zeros(1, np.uint8))
    assert buf.version == 0
    buf.will_write("host")
    buf.will_write()
    assert buf.version == 2


def test_will_write_runs_the_hook_before_the_write_when_there_is_state():
    from cupynum._backends import buffer as buffer_module

    seen = []
    saved = buffer_module.BEFORE_WRITE
    buffer_module.install(before_write=lambda b, side, nbytes: seen.append((b.version, side)))
    try:
        plain = Buffer(np.zeros(1, np.uint8))
        plain.will_write("host")  # nothing pending, one copy: the hook is not needed
        assert seen == []
        both = Buffer(np.zeros(1, np.uint8), np.zeros(1, np.uint8))
        both.will_write("device")  # two copies: the hook drops one, before the bump
        assert seen == [(0, "device")] and both.version == 1
    finally:
        buffer_module.BEFORE_WRITE = saved


def test_buffer_slots():
    buf = Buffer()
    with pytest.raises(AttributeError):
        buf.other = 1  # (no __dict__: the attributes are the design's)
    assert buf.host is None and buf.device is None


def test_a_host_results_buffer_is_the_constructed_one_slot_for_slot():
    """``wrap_host`` sets its Buffer's slots itself (no ``__init__`` frame per host op): they
    must be what ``Buffer(raw)`` leaves."""
    from cupynum import _host_path

    assert _host_path._buffer_of is None  # (the inline maker, unless a test aliases one)
    r = np.arange(6.0).reshape(2, 3)
    made, ref = _host_path.wrap_host(r)._buf, Buffer(r)
    slots = [s for s in Buffer.__slots__ if s != "__weakref__"]
    assert type(made) is Buffer and made.host is r
    assert {s: getattr(made, s) for s in slots} == {s: getattr(ref, s) for s in slots}



def test_an_element_reads_buffer_is_the_constructed_one_slot_for_slot():
    """``_backends.element`` sets the pending read's Buffer slots itself: but for
    ``pending`` (the read), they must be what ``Buffer()`` leaves."""
    from cupynum._backends import placement
    from cupynum.testing import place

    a = cp.asarray(np.arange(12.0).reshape(3, 4))
    if _backends.for_side("device").side != "device" or placement.MODE == "random":
        pytest.skip("element reads wait only on a device backend (and the random placement "
                    "may move the data before the read)")
    place(a, "device")
    x = a[1, 2]
    made, ref = x._buf, Buffer()
    slots = [s for s in Buffer.__slots__ if s not in ("__weakref__", "pending")]
    assert type(made) is Buffer
    assert {s: getattr(made, s) for s in slots} == {s: getattr(ref, s) for s in slots}
    assert float(x) == 6.0 and bool(x) is True and bool(a[0, 0]) is False

@host_only
def test_host_backend_buffers_hold_host_copies():
    a = cp.asarray(np.arange(10, dtype=np.float32))
    b = a + a  # the hot path's allocation (launch.new)
    c = cp.empty((3, 4), np.int16)
    s = cp.sum(a, axis=0, keepdims=True)
    picked = a[a > 3]
    z = cp.zeros(5)
    for x in (a, b, c, z, s, picked):
        buf = x._buf
        assert type(buf) is Buffer
        assert buf.device is None
        # a host copy is a C-contiguous NumPy array over the bytes: the host backend's
        # allocations are flat uint8, the host path's results NumPy's own arrays
        assert isinstance(buf.host, np.ndarray) and buf.host.flags.c_contiguous
        assert buf.host.nbytes == x.nbytes
        if x is b:  # (the host path's result: NumPy's array itself, no byte view of it)
            assert buf.host.dtype == x.dtype and buf.host.shape == x.shape
        else:
            assert buf.host.dtype in (np.uint8, x.dtype)
        assert buf.on_host() is buf.host
        if x is c:  # (the backend's own allocation; a copy of host data, as the host
            assert buf.host.ctypes.data % 64 == 0  # path's results, is NumPy's own)
    assert b._address() == b._buf.host.ctypes.data


# --- views share one Buffer ------------------------------------------------------------------
@pytest.mark.parametrize("make_view", [
    lambda a: a[1:7:2],
    lambda a: a.reshape(3, 4),
    lambda a: a.reshape(3, 4).T,
    lambda a: a.view(np.int64),
    lambda a: a.reshape(3, 4)[:, 1],
    lambda a: cp.broadcast_to(a[:1], (5, 1)),
    lambda a: a.real,
])
def test_views_share_the_buffer(make_view):
    a = _arange()
    v = make_view(a)
    assert v._buf is a._buf
    assert v[...]._buf is a._buf
    c = a.astype(np.complex128)
    assert c.imag._buf is c._buf and c.real[1:]._buf is c._buf


def test_a_copy_has_its_own_buffer():
    a = _arange()
    assert a.copy()._buf is not a._buf
    assert a.astype(np.float32)._buf is not a._buf


# --- every write bumps the version; reads do not ------------------------------------------
def _writes():
    """(name, setup() -> (array, write(array)), numpy twin) for each write path."""
    yield "inplace_fast", lambda x: x.__iadd__(1.0)
    yield "inplace_array", lambda x: x.__imul__(x)
    yield "inplace_strided", lambda x: x.reshape(3, 4).T.__isub__(2.0)
    yield "ufunc_out", lambda x: np.add(x, 2, out=x) if isinstance(x, np.ndarray) else \
        cp.add(x, 2, out=x)
    yield "setitem_slice", lambda x: x.__setitem__(slice(1, 4), x[5:8].copy())
    yield "setitem_scalar", lambda x: x.__setitem__(3, 7.5)
    yield "setitem_basic", lambda x: x.reshape(3, 4).__setitem__((1, slice(None)), -1.0)
    yield "setitem_fancy", lambda x: x.__setitem__([0, 5, 9], 4.0)
    yield "setitem_mask", lambda x: x.__setitem__(x > 6, 0.0)
    yield "write_through_view", lambda x: x[2:6].__setitem__(Ellipsis, 1.25)
    yield "fill", lambda x: x.fill(3.0)
    yield "view_fill", lambda x: x[::3].fill(-2.0)


def _lib(x):
    return np if isinstance(x, np.ndarray) else cp


def _writes_via_functions():
    yield "copyto", lambda x: _lib(x).copyto(x, 9.0)
    yield "putmask", lambda x: _lib(x).putmask(x, x > 4, -x)
    yield "put", lambda x: _lib(x).put(x, [1, 2], [10.0, 20.0])
    yield "place", lambda x: _lib(x).place(x, x < 3, [7.0])
    yield "sum_out", lambda x: _lib(x).sum(x.reshape(3, 4), axis=0, out=x[:4])
    yield "cumsum_out", lambda x: _lib(x).cumsum(x[:6], out=x[6:])
    yield "fill_diagonal", lambda x: _lib(x).fill_diagonal(x.reshape(3, 4), 5.0)
    yield "sort_method", lambda x: x[::-1].sort()


@pytest.mark.parametrize("name,write", list(_writes()) + list(_writes_via_functions()))
def test_every_write_bumps_the_version(name, write):
    a = _arange()
    before = a._buf.version
    write(a)
    assert a._buf.version > before, name
    # and the write did what NumPy's does
    compare(lambda xp, x: (write(x), x)[1], np.arange(12, dtype=np.float64))


@pytest.mark.parametrize("write", [
    lambda x: cp.random.default_rng(0).random(out=x),
    lambda x: cp.random.shuffle(x),
    lambda x: x.flat.__setitem__(2, 9.0),
])
def test_random_and_flat_writes_bump_the_version(write):
    a = _arange()
    before = a._buf.version
    write(a)
    assert a._buf.version > before


def test_fallback_write_back_bumps_the_version():
    """An ``out=`` argument NumPy writes on the host (an out-of-range Python int makes the
    comparison run there) comes back to its array: a write."""
    out = cp.zeros(3, np.bool_)
    before = out._buf.version
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cp.not_equal(cp.arange(3), 2**70, out=out)
    assert out._buf.version > before
    np.testing.assert_array_equal(np.asarray(out), np.ones(3, np.bool_))


def test_a_write_through_a_view_is_seen_through_the_base():
    a = _arange()
    v = a.reshape(3, 4)[1]
    before = a._buf.version
    v += 1.0
    assert a._buf.version == v._buf.version > before


@pytest.mark.parametrize("read", [
    lambda a, b: a + b,
    lambda a, b: a * 2.0,
    lambda a, b: -a,
    lambda a, b: a[1:5],
    lambda a, b: a[[1, 2]],
    lambda a, b: a[a > 3],
    lambda a, b: a.sum(),
    lambda a, b: a.reshape(3, 4).sum(axis=0),
    lambda a, b: cp.cumsum(a),
    lambda a, b: a.copy(),
    lambda a, b: a.astype(np.float32),
    lambda a, b: np.asarray(a),
    lambda a, b: a.get(),
    lambda a, b: cp.sort(a),
    lambda a, b: a @ b,
    lambda a, b: cp.where(a > 2, a, b),
    lambda a, b: cp.add(a, b),
])
def test_reads_leave_the_version(read):
    a, b = _arange(), _arange() + 1
    va, vb = a._buf.version, b._buf.version
    read(a, b)
    assert (a._buf.version, b._buf.version) == (va, vb)


# --- the backend of an op --------------------------------------------------------------------
class _Device:
    """Stands in for a device backend: only its identity matters here."""

    name = "stand-in"
    side = "device"

    def to_host(self, a, out=None):  # (its "device" allocations are NumPy uint8 arrays)
        data = a._buf.device[a._offset:a._offset + a._size]
        if out is None:
            return data.copy()
        out[...] = data
        return out


def test_for_arrays_picks_where_the_data_lives(monkeypatch):
    from cupynum._backends import placement

    h = _arange(4)
    h._buf = Buffer(np.zeros(32, np.uint8))  # (its data on the host only)
    d = _arange(4)
    d._buf = Buffer(device=np.zeros(32, np.uint8))  # (a stand-in device allocation)
    host = _backends.host_backend()
    device = _Device()
    monkeypatch.setattr(_backends, "_backend", device)
    monkeypatch.setattr(_backends, "_host", host)
    monkeypatch.setattr(_backends, "_single", None)  # placement decides (auto)
    monkeypatch.setattr(_backends, "_chaos", None)
    monkeypatch.setattr(placement, "record",  # (no moves here)
                        lambda buf, side, n, extra=0.0, offset=-1: False)
    monkeypatch.setattr(_backends, "_placing", True)  # (the moves the cost table asks for)
    monkeypatch.setattr(placement, "_backends_of", {"host": host, "device": device}.get)
    assert _backends.for_arrays(h) is host
    assert _backends.for_arrays(d) is device
    # a device-only operand: the device (the host data copied over: no wait), unless the
    # cost table prices the host lower with the device data brought over and the wait for
    # the device that bringing it costs (here a MiB of host data against 32 bytes)
    assert _backends.for_arrays(h, d) is device and d._buf.host is None
    wide = _arange(4)
    wide._buf = Buffer(np.zeros(1 << 20, np.uint8))  # (a MiB only on the host)
    assert _backends.for_arrays(wide, d) is host and d._buf.host is not None
    big = _arange(4)
    big._buf = Buffer(device=np.zeros(1 << 24, np.uint8))  # 16 MiB only on the device
    assert _backends.for_arrays(h, big) is device
    assert _backends.for_arrays(h, 2.0, np.float32(1)) is host  # scalars do not count
    assert _backends.for_arrays(2.0) is host  # no array operand: where new arrays go
    assert _backends.for_new(64) is host  # small new arrays start on the host...
    assert _backends.for_new(placement.THRESHOLD_BYTES + 8) is device  # ...large ones not
    fresh = _arange(4)
    fresh._buf = placement.Unallocated(64)  # a new result: where the op runs
    assert _backends.for_arrays(h, fresh) is host and _backends.for_arrays(big, fresh) is device
    large = _arange(4)
    large._buf = placement.Unallocated(10**9)
    assert _backends.for_arrays(large) is device  # alone: where a new array of its size goes
    # a large new result of small host operands: the device (the cost table says cheaper)
    assert _backends.for_arrays(h, large) is device


def test_for_arrays_on_this_process():
    """Without placement (the host backend, or CUPYNUM_PLACEMENT=device) every op's backend
    is the process's; under ``auto`` a small array's ops run on the host backend."""
    from cupynum._backends import placement

    if placement.MODE == "random":
        pytest.skip("operands move at random between ops")
    a = _arange()
    expected = _backends.get()
    if expected.side == "device" and placement.MODE != "device":
        expected = _backends.host_backend() if cp.placement(a) == "host" else expected
    assert _backends.for_arrays(a) is expected
    assert _backends.for_arrays(a, 1.0, a[::2]) is expected
    assert _backends.for_new(a.nbytes) is expected


def test_frontend_does_not_ask_for_the_process_backend():
    """``_backends.get()`` is the selection functions' implementation detail: no module
    above the backends calls it, nor reads an array's raw allocation."""
    import pathlib
    import re

    root = pathlib.Path(cp.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("_backends/"):
            continue
        text = path.read_text()
        patterns = [r"_backends\.get\(\)", r"_backends\._backend\b"]
        if rel not in ("_array.py", "_host_path.py", "_ufunc_hot.py"):  # (the host path and
            patterns.append(r"_buf\.(host|device|ptr)\b")  # the hot path test the side)
        offenders += [(rel, p) for p in patterns if re.search(p, text)]
    assert not offenders
