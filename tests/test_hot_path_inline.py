"""The CUDA backend's generated hot launchers, checked without a GPU: the result Buffer they
make inline is the Buffer ``Buffer(None, raw)`` makes, slot for slot, and every launch they
make is counted once (docs/internals.md, "Hot-path launcher" and "The CUDA backend's
substrate").  Run with a stand-in driver that records the launches."""
from __future__ import annotations

import numpy as np
import pytest

from cupynum._backends import buffer as buffers
from cupynum._backends import counters
from cupynum._backends.base import ElementwiseOp
from cupynum._backends.buffer import Buffer
from cupynum._backends.cuda import elementwise as ew
from cupynum._backends.cuda import launch
from shim import HostArray

SLOTS = [s for s in Buffer.__slots__ if s != "__weakref__"]


def _made_inline(raw, nbytes):
    code = ("def make(raw, nbytes):\n" + ew._inline_buffer("made", "raw", "nbytes")
            + "    return made\n")
    ns = {"Buffer": Buffer, "new_object": object.__new__, "buffers": buffers}
    exec(code, ns)
    return ns["make"](raw, nbytes), code


@pytest.mark.parametrize("nbytes", [0, 8, 1 << 20, 1 << 30])
@pytest.mark.parametrize("settled_above,born_small", [(-1, 0), (4096, buffers.SMALL),
                                                      (4096, 0), (1 << 62, 0)])
def test_inline_buffer_equals_the_constructed_one(monkeypatch, nbytes, settled_above,
                                                  born_small):
    """Slot for slot the Buffer of a new device allocation, ``settled`` included, under each
    placement's birth rule (``buffer.SETTLED_ABOVE`` and ``BORN_SMALL``)."""
    monkeypatch.setattr(buffers, "SETTLED_ABOVE", settled_above)
    monkeypatch.setattr(buffers, "BORN_SMALL", born_small)
    raw = object()
    made, code = _made_inline(raw, nbytes)
    assert "Buffer(None" not in code  # the inline form, not the call
    ref = Buffer(None, raw, buffers.born_settled(nbytes))
    assert type(made) is Buffer
    assert {s: getattr(made, s) for s in SLOTS} == {s: getattr(ref, s) for s in SLOTS}
    assert made.device is raw and made.host is None and made.version == 0
    assert made.settled == (buffers.LARGE if nbytes > settled_above else born_small)


def test_inline_buffer_falls_back_where_init_leaves_objects(monkeypatch):
    class Counted(Buffer):
        __slots__ = ("log",)

        def __init__(self, host=None, device=None, settled=0):
            super().__init__(host, device, settled)
            self.log = []  # a fresh object per Buffer: cannot be written as a constant

    monkeypatch.setattr(ew, "Buffer", Counted)
    monkeypatch.setattr(buffers, "SETTLED_ABOVE", 4096)
    monkeypatch.setattr(buffers, "BORN_SMALL", buffers.SMALL)
    code = ew._inline_buffer("out._buf", "buf", "nbytes")
    assert code.startswith("    out._buf = Buffer(None, buf, ") and code.count("\n") == 1
    for nbytes in (8, 4096, 4097):
        ns = {"Buffer": Counted, "buf": object(), "nbytes": nbytes,
              "out": type("Out", (), {})()}
        exec(code.strip(), ns)
        made = ns["out"]._buf
        assert type(made) is Counted and made.device is ns["buf"] and made.log == []
        assert made.settled == buffers.born_settled(nbytes)


@pytest.fixture
def recorded(monkeypatch):
    calls = []

    def raw(func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        calls.append((func, gx, bx, params))
        return (0,)

    monkeypatch.setattr(launch, "_drv", (raw, None, lambda: 0))
    monkeypatch.setattr(ew, "get_kernel", lambda spec: ("kernel", ew.kernel_name(spec)))
    monkeypatch.setattr(ew, "_prepared", {})
    monkeypatch.setattr(ew, "_cap", 4)
    return calls


@pytest.mark.parametrize("n", [1, 1000, 100_000])
def test_hot_launches_are_counted_once(recorded, n):
    op = ElementwiseOp("add", "add", ("f", "f", "f"), 2)
    f32 = np.dtype(np.float32)
    launcher = ew.contiguous_launcher(op, (f32, f32))
    x, y, out = (HostArray(np.zeros(n, np.float32)) for _ in range(3))
    before = counters.snapshot()["launches"]
    for _ in range(3):
        launcher((x, y), (out,), n)
    assert counters.snapshot()["launches"] - before == len(recorded) == 3
    func, gx, bx, params = recorded[-1]
    assert func[1] == ew.kernel_name(launcher.bare.args[0]) and bx == ew.BLOCK
    assert gx == min(-(-n // (ew.BLOCK * 4)), 4)  # float32: 4 a thread (16-byte vectors)
    p = ew.prepared(launcher.bare.args[0])
    assert params == p.addr and p.token == [True]


def test_a_contended_hot_launch_is_counted_once(recorded):
    op = ElementwiseOp("multiply", "multiply", ("d", "d", "d"), 2)
    f64 = np.dtype(np.float64)
    launcher = ew.contiguous_launcher(op, (f64, None))
    x, out = HostArray(np.zeros(10)), HostArray(np.zeros(10))
    p = ew.prepared(launcher.bare.args[0])
    before = counters.snapshot()["launches"]
    taken = p.token.pop()
    try:
        launcher((x, np.float64(2.0)), (out,), 10)
    finally:
        p.token.append(taken)
    assert counters.snapshot()["launches"] - before == len(recorded) == 1
    assert recorded[-1][3] != p.addr  # a block of its own


class _NotOnDevice(Buffer):
    """A Buffer whose device copy is made by its first ``on_device()`` (as a pending or a
    host-only Buffer's is)."""

    __slots__ = ("made",)

    def on_device(self):
        self.device = self.made
        return self.device


def test_an_operand_not_on_the_device_is_brought_there_before_the_pack(recorded):
    """The launcher packs ``DIRECT_PTR_EXPR`` first; an operand with no device copy makes
    it raise, and the ``PTR_EXPR`` values, which ask the Buffer for its copy, are packed."""
    op = ElementwiseOp("add", "add", ("d", "d", "d"), 2)
    f64 = np.dtype(np.float64)
    launcher = ew.contiguous_launcher(op, (f64, f64))
    x, y, out = (HostArray(np.zeros(10)) for _ in range(3))
    late = _NotOnDevice(None, None)
    late.made = y._buf.device
    y._buf = late
    launcher((x, y), (out,), 10)
    assert late.device is late.made and len(recorded) == 1
    p = ew.prepared(launcher.bare.args[0])
    assert p.buf[8:16].cast("Q")[0] == y.np.ctypes.data  # (the second pointer: y's)


def test_launches_are_the_dict_item_plus_the_ticks():
    counters.reset()
    assert counters.snapshot() == {"launches": 0, "h2d_bytes": 0, "d2h_bytes": 0, "syncs": 0}
    next(counters.LAUNCH_TICKS)  # a CUDA launch path's count
    counters.COUNTS["launches"] += 2  # the simulated device's
    counters.COUNTS["syncs"] += 1
    assert counters.launches() == 3
    assert counters.snapshot() == {"launches": 3, "h2d_bytes": 0, "d2h_bytes": 0, "syncs": 1}
    counters.reset()
    assert counters.snapshot()["launches"] == 0 == counters.launches()
    next(counters.LAUNCH_TICKS)
    assert counters.snapshot()["launches"] == 1
    counters.reset()


def test_nothing_reads_the_launch_item_alone():
    """``COUNTS["launches"]`` misses the ticks: the package reads launches through
    ``counters.snapshot()`` / ``launches()`` (writing ``+= 1`` to the item is fine)."""
    import pathlib
    import re

    root = pathlib.Path(counters.__file__).resolve().parents[1]
    read = re.compile(r"""COUNTS\[["']launches["']\](?!\s*\+=)""")
    offenders = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
                 if p.name != "counters.py"
                 for i, line in enumerate(p.read_text().splitlines(), 1) if read.search(line)]
    assert offenders == []
