"""The integer/bool/small-float matmul kernel (cupynum/_backends/cuda/matmul_kernel.py),
its text compiled by the host C++ compiler under tests/shim.py's CUDA shim and run on the
CPU against NumPy: every integer width (wraparound), bool, small float32/float64 batches,
broadcast and transposed operands, and a batch layout that needs a copy first."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cupynum._backends.cuda import matmul_kernel as mk
from shim import CXX, FIBER_SHIM, HostArray, build
from cupynum._backends.cuda import kernels_util as ku

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)")


@pytest.fixture(scope="module")
def lib():
    ks = mk.all_kernels()
    parts = ["#include <cmath>\nusing std::fma;", FIBER_SHIM, ku.program(ks)]  # (device fma)
    seen = set()
    for k in ks:
        if k.name in seen:
            continue
        seen.add(k.name)
        types = "".join(f"  typedef {t} T{i};\n" for i, (t, _) in enumerate(k.params))
        args = ", ".join(f"*(T{i}*)p[{i}]" for i in range(len(k.params)))
        parts.append(
            f'extern "C" void host_{k.name}(void** p, unsigned gx, unsigned bx) {{\n{types}'
            f"  cpn_run([](void** p) {{\n{types}    {k.name}({args}); }}, p, gx, 1, 1, bx, 1, 1);\n}}\n")
    return build("\n".join(parts), "mm", ["-std=c++17", "-O1", "-w", "-shared", "-fPIC"])


class _Dev:
    """kernels_util.DEV on the CPU; grids capped at 2 blocks so the grid-stride loop turns."""

    def __init__(self, lib):
        self.lib, self.keep = lib, []

    def launch(self, kernel, grid, block, values, shmem=0):
        from cupynum._backends.cuda.runtime import ParamBlock

        pb = ParamBlock([dt for _, dt in kernel.params])
        pb.set_values(values)
        f = getattr(self.lib, f"host_{kernel.name}")
        f.argtypes, f.restype = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint], None
        f(pb.address, min(grid, 2), block)

    def alloc(self, nbytes):
        a = np.empty(max(int(nbytes), 1), np.uint8)
        self.keep.append(a)
        return type("Buf", (), {"ptr": a.ctypes.data})()


def _view(x):
    """A NumPy view of a HostArray / DeviceView over host memory."""
    n = max(x._size, 1) * x.dtype.itemsize + 64
    raw = (ctypes.c_char * n).from_address(x._buf.device.ptr + x._offset)
    flat = np.frombuffer(raw, np.uint8)
    return np.lib.stride_tricks.as_strided(flat.view(x.dtype)[:1], x._shape, x._strides)


def _copy(src, dst):
    _view(dst)[...] = _view(src)


@pytest.fixture
def run(lib, monkeypatch):
    monkeypatch.setattr(mk, "DEV", _Dev(lib))
    monkeypatch.setattr(mk, "copy", _copy)  # (the device copy, on host memory)

    def go(a, b):
        out_dt = np.result_type(a, b)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        m, n = a.shape[-2], b.shape[-1]
        out = np.zeros(batch + (m, n), out_dt)
        av = np.broadcast_to(a, batch + a.shape[-2:])
        bv = np.broadcast_to(b, batch + b.shape[-2:])
        assert mk.supports(out_dt.char, m, n, a.shape[-1])
        mk.matmul(HostArray(av), HostArray(bv), HostArray(out))
        return out

    return go


rng = np.random.default_rng(3)


@pytest.mark.parametrize("dt", ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"])
def test_integer_and_bool_wrap_as_numpy(run, dt):
    info = np.iinfo(dt) if dt != "?" else None
    if info is None:
        a, b = rng.random((3, 7, 5)) < 0.3, rng.random((3, 5, 6)) < 0.3
    else:
        a = rng.integers(info.min, info.max, (3, 7, 5), dtype=dt, endpoint=True)
        b = rng.integers(info.min, info.max, (3, 5, 6), dtype=dt, endpoint=True)
    with np.errstate(over="ignore"):
        want = a @ b
    np.testing.assert_array_equal(run(a, b), want)


@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_small_float_batches(run, dt):
    a = rng.standard_normal((50, 4, 4)).astype(dt)
    b = rng.standard_normal((50, 4, 3)).astype(dt)
    tol = 1e-5 if dt == "f4" else 1e-13
    np.testing.assert_allclose(run(a, b), a @ b, rtol=tol, atol=tol)


def test_broadcast_and_transposed_operands(run):
    a = rng.integers(-9, 9, (4, 1, 6, 5)).astype(np.int32)
    b = rng.integers(-9, 9, (3, 6, 5)).astype(np.int32).transpose(0, 2, 1)  # (3, 5, 6) view
    np.testing.assert_array_equal(run(a, b), a @ b)
    c = rng.standard_normal((2, 3, 16, 16))[:, :, ::-1, :].astype(np.float64)  # negative rows
    np.testing.assert_allclose(run(c, c), c @ c, rtol=1e-12, atol=1e-12)


def test_batch_that_needs_a_copy(run):
    base = rng.integers(-5, 5, (3, 4, 2, 2)).astype(np.int16)
    a = base.transpose(1, 0, 2, 3)  # batch dims (4, 3) do not walk with one stride
    np.testing.assert_array_equal(run(a, base[0, 0]), a @ base[0, 0])


def test_supports():
    assert mk.supports("f", 16, 16, 16) and not mk.supports("f", 17, 4, 4)
    assert not mk.supports("F", 4, 4, 4) and not mk.supports("e", 4, 4, 4)
    assert mk.supports("q", 1000, 1000, 1000) and mk.supports("?", 3, 3, 3)


def test_matmul_kernels_compile_with_nvrtc():
    try:
        from cupynum._backends.cuda import compiler

        compiler.nvrtc_version()
    except Exception:
        pytest.skip("NVRTC is not installed")
    cubin = compiler.compile_cubin(ku.program(mk.all_kernels()), name="cupynum_index.cu",
                                   arch="sm_90").cubin
    for k in mk.all_kernels():
        assert k.name.encode() in cubin
