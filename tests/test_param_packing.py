"""Every kernel family launches through ``launch.Prepared``, which packs every parameter
with one ``struct`` call; the bytes that reach the driver must be exactly what
``ParamBlock.set_values`` writes, for every hand-written kernel's parameter list (by-value
arrays included), for values only NumPy's conversion takes (0-d arrays), and for the
reduction kernels' and ``ufunc.at``'s slot lists.  Run with a stand-in driver: no GPU."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cupynum._backends.cuda import indexing, kernels_util as ku, launch, matmul_kernel
from cupynum._backends.cuda import reduction as red, rng, runtime, sorting


def _kernels():
    ks = indexing.all_kernels() + matmul_kernel.all_kernels() + rng.all_kernels()
    ks += [sorting.searchsorted_kernel(w) for w in (1, 2, 4, 8)]
    return ks


def _values(dtypes, gen):
    out = []
    for dt in dtypes:
        if dt.shape:
            out.append(gen.integers(-2**40, 2**40, int(np.prod(dt.shape))).astype(dt.base))
        elif dt.kind == "f":
            out.append(float(gen.standard_normal()))
        elif dt.kind == "c":
            out.append(dt.type(complex(gen.standard_normal(), gen.standard_normal())))
        elif dt.kind == "b":
            out.append(bool(gen.integers(2)))
        elif dt.kind == "u":
            out.append(int(gen.integers(0, 2**(8 * dt.itemsize - 1))) * 2 + 1)
        else:
            out.append(-int(gen.integers(0, 2**(8 * dt.itemsize - 1))))
    return out


class _Driver:
    """A stand-in cuLaunchKernel: records the bytes of every slot it is handed."""

    def __init__(self):
        self.calls = []

    def raw(self, func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        self.calls.append((func, (gx, gy, gz), (bx, by, bz), shmem, params))
        return (0,)

    def slots(self, dtypes):
        params = self.calls[-1][-1]
        ptrs = (ctypes.c_uint64 * len(dtypes)).from_address(params)
        return [ctypes.string_at(ptrs[i], dt.itemsize) for i, dt in enumerate(dtypes)]


@pytest.fixture
def driver(monkeypatch):
    d = _Driver()
    monkeypatch.setattr(launch, "_drv", (d.raw, None, lambda: 0))
    return d


def _reference(dtypes, values):
    ref = runtime.ParamBlock(dtypes)
    ref.set_values(values)
    return [ref._data.tobytes()[o:o + dt.itemsize] for o, dt in zip(ref.offsets, ref.dtypes)]


def _device(monkeypatch):
    dev = ku._Device()
    monkeypatch.setattr(dev, "function", lambda k: f"func:{k.name}")
    return dev


def test_hand_written_kernels_pack_what_paramblock_writes(driver, monkeypatch):
    gen = np.random.default_rng(0)
    dev = _device(monkeypatch)
    for k in _kernels():
        dts = [dt for _, dt in k.params]
        vals = _values(dts, gen)
        dev.launch(k, (3, 2), 128, vals, shmem=64)
        func, grid, block, shmem, _ = driver.calls[-1]
        assert (func, grid, block, shmem) == (f"func:{k.name}", (3, 2, 1), (128, 1, 1), 64)
        assert driver.slots(dts) == _reference(dts, vals), k.name


def test_values_only_numpy_converts(driver, monkeypatch):
    k = matmul_kernel.matmul_kernel(np.dtype("f"))
    dts = [dt for _, dt in k.params]
    vals = [1, 2, 3, np.array(4), 5, 6, np.arange(6), np.int64(7)]
    dev = _device(monkeypatch)
    dev.launch(k, 1, 32, vals)
    assert driver.slots(dts) == _reference(dts, vals)
    p, _ = dev._prepared[k.name]
    assert p.token == [True]  # the block was handed back before the converted launch


def test_reduction_kernels_pack_what_paramblock_writes(driver):
    gen = np.random.default_rng(1)
    units = [red.Unit("reduce", "add", "f", "f", "f"), red.Unit("arg", "argmax", "d", "d", "l"),
             red.Unit("scan", "multiply", "F", "F", "F"), red.Unit("sqdev", "add", "D", "d", "d")]
    for unit in units:
        for kind in red.kernel_names(unit):
            dts, _ = red._layout(unit, kind)
            dts = [np.dtype(d) for d in dts]
            vals = _values(dts, gen)
            p = launch.Prepared((unit, kind), "func", dts, red._layout(unit, kind)[1])
            flat = []
            for v in vals:
                if isinstance(v, np.ndarray):
                    flat += v.tolist()
                elif isinstance(v, np.complexfloating):
                    flat += (v.real, v.imag)
                else:
                    flat.append(v)
            p.launch(flat, (5, 7), red.BLOCK)
            assert driver.calls[-1][1:3] == ((5, 7, 1), (red.BLOCK, 1, 1))
            assert driver.slots(dts) == _reference(dts, vals), (unit, kind)


def test_contended_block_packs_a_block_of_its_own(driver):
    dts = [np.dtype(np.uintp), np.dtype(np.float32), np.dtype(np.int64)]
    p = launch.Prepared("k", "func", dts)
    taken = p.token.pop()  # another thread holds the block
    try:
        p.launch([0x1000, 2.5, 7], 4, 256)
    finally:
        p.token.append(taken)
    assert driver.calls[-1][-1] != p.addr  # not the shared block
    assert driver.slots(dts) == _reference(dts, [0x1000, 2.5, 7])


def test_grid_and_block_shapes(driver):
    p = launch.Prepared("k", "func", [np.dtype(np.int64)])
    for grid, block, want in [(7, 32, ((7, 1, 1), (32, 1, 1))),
                              ((3, 4), (8, 8), ((3, 4, 1), (8, 8, 1))),
                              ((2, 3, 5), (4,), ((2, 3, 5), (4, 1, 1))),
                              (np.int64(9), np.int32(64), ((9, 1, 1), (64, 1, 1)))]:
        p.launch([1], grid, block)
        assert driver.calls[-1][1:3] == want
        assert all(type(v) is int for v in driver.calls[-1][1] + driver.calls[-1][2])


def test_every_launch_is_counted_once(driver):
    from cupynum._backends import counters

    p = launch.Prepared("k", "func", [np.dtype(np.int64)])
    before = counters.snapshot()["launches"]
    for i in range(5):
        p.launch([i], 1, 32)
    assert counters.snapshot()["launches"] - before == 5
