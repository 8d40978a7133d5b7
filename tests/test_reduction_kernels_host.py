"""The CUDA reduction engine's scans and arg-reductions, run on the CPU.

As in test_index_kernels_host.py, the generated kernel text (reduction.program_source) is
compiled by the host C++ compiler under the fiber shim (shim.FIBER_SHIM: each block's threads
are ucontext fibers that pass ``__syncthreads`` together; warp shuffles are two block
barriers), and launched through the engine's own plans and parameter blocks.  The slice
planner is forced to several small slices so that the carries between blocks, several tiles
per block and partial tiles all run at small sizes.  What this cannot see: real concurrency,
warp-synchronous timing and device memory; the GPU suite covers those.
"""
from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

from cupynum._backends.base import ReduceOp
from cupynum._backends.cuda import reduction as red
from shim import CXX, FIBER_SHIM, HostArray, build

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)")

WARP_SHIM = r"""
// `__shared__ alignas(16) T x[]` with __shared__ = static: GNU attributes may sit there
#define alignas(n) __attribute__((aligned(n)))
template <class T> static T __shfl_up_sync(unsigned, T v, unsigned d) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle width");
  const int t = cpn_tid();
  memcpy(&cpn_slot[t], &v, sizeof(T));
  cpn_barrier();
  T r = v;
  if ((unsigned)(t & 31) >= d) memcpy(&r, &cpn_slot[t - d], sizeof(T));
  cpn_barrier();
  return r;
}
#define __syncwarp() cpn_barrier()
"""

UNITS = [
    red.Unit("scan", "add", "f", "f", "f"),
    red.Unit("scan", "add", "d", "d", "d"),
    red.Unit("scan", "add", "l", "l", "l"),
    red.Unit("scan", "add", "b", "b", "b"),  # int8 loop: sub-word shuffles, wrap-around
    red.Unit("scan", "add", "D", "D", "D"),  # 16-byte states
    red.Unit("scan", "maximum", "e", "e", "e"),  # float16 loop, float compute
    red.Unit("scan", "logical_or", "?", "?", "?"),
] + [red.Unit("arg", k, c, c, "l") for k in ("argmax", "argmin") for c in "fdl"]

_SIG = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\(([^)]*)\)')


def _build():
    src = red.program_source(UNITS)
    parts = [FIBER_SHIM, WARP_SHIM, src]
    for name, params in _SIG.findall(src):
        types = [p.strip().rsplit(" ", 1)[0] for p in params.split(",")]
        tdefs = "".join(f"  typedef {t} T{i};\n" for i, t in enumerate(types))
        args = ", ".join(f"*(T{i}*)p[{i}]" for i in range(len(types)))
        parts.append(
            f'extern "C" void host_{name}(void** p, unsigned gx, unsigned gy) {{\n'
            f"  cpn_run([](void** p) {{\n{tdefs}    {name}({args}); }}, p, gx, gy, 1, "
            f"{red.BLOCK}, 1, 1);\n}}\n")
    return build("\n".join(parts), "red",
                 ["-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-shared",
                  "-fPIC"])


class _Tmp:
    def __init__(self, nbytes):
        self.np = np.full(-(-nbytes // 16) * 2, 0x5A5A5A5A5A5A5A5A, np.uint64)  # garbage
        self.ptr = self.np.ctypes.data


@pytest.fixture(scope="module")
def engine():
    lib = _build()
    mp = pytest.MonkeyPatch()
    launches = []
    funcs = {}

    def get_kernel(unit, kind):
        name = red.kernel_names(unit)[kind]
        f = funcs.get(name)
        if f is None:
            f = funcs[name] = getattr(lib, f"host_{name}")
            f.argtypes, f.restype = (ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint), None
        return (name, f)

    def raw(func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        assert (gz, by, bz, shmem, extra, bx) == (1, 1, 1, 0, 0, red.BLOCK)
        launches.append(func[0])
        func[1](params, gx, gy)
        return (0,)

    real_split = red._split

    def split(space, work, min_chunk, cap=1 << 30):
        # a few short slices (the real planner needs ~10^5 elements per block before it splits)
        return max(1, min(4, work // 1000, cap)) if space < 4 else real_split(space, work,
                                                                              min_chunk, cap)

    mp.setattr(red, "get_kernel", get_kernel)
    mp.setattr(red, "_drv", (raw, None, lambda: 0))
    mp.setattr(red, "_sms", 1)
    mp.setattr(red, "_split", split)
    mp.setattr(red, "_alloc", _Tmp)
    mp.setattr(red, "_prepared", {})
    mp.setattr(red, "_plans", {})
    yield launches
    mp.undo()


rng = np.random.default_rng(11)


def _scan(op, a, axis=-1):
    out = np.full(a.shape, 77, np.dtype(op.loop))
    red.scan(op, HostArray(a), HostArray(out), axis % a.ndim)
    return out


def _float_bound(x, axis):
    """Summation error bound: a few dozen roundings on each result's path (thread, warp,
    block, tiles, slices), against an extended-precision reference."""
    x = x.astype(np.longdouble)
    return np.cumsum(x, axis=axis), np.cumsum(np.abs(x), axis=axis)


SCAN_SIZES = [1, 7, 255, 2048, 2049, 5000, 20001, 100003]


@pytest.mark.parametrize("n", SCAN_SIZES)
@pytest.mark.parametrize("dt", ["f", "d", "l"])
def test_cumsum_1d(engine, n, dt):
    op = ReduceOp("add", "add", dt, np.dtype(dt).type(-0.0 if dt != "l" else 0))
    if dt == "l":
        a = rng.integers(-(1 << 40), 1 << 40, n)
    else:
        a = rng.standard_normal(n).astype(dt) + np.dtype(dt).type(0.25)
    got = _scan(op, a)
    again = _scan(op, a)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), again.view(f"u{got.itemsize}"))
    if dt == "l":
        np.testing.assert_array_equal(got, np.cumsum(a))
    else:
        ref, mag = _float_bound(a, 0)
        eps = np.finfo(dt).eps
        err = np.abs(got.astype(np.longdouble) - ref)
        assert np.all(err <= 64 * eps * mag + np.finfo(dt).tiny), float(np.max(err / mag))
    if n >= 5000:
        assert any(k.endswith("__scan_cols_part") for k in engine)  # several slices ran


@pytest.mark.parametrize("n", [1, 300, 2049, 7000])
def test_cumsum_float64_nan_inf(engine, n):
    op = ReduceOp("add", "add", "d", np.float64(-0.0))
    a = rng.standard_normal(n)
    first = n * 2 // 3
    a[first] = np.nan
    if n > 2:
        a[n // 3] = np.inf
    got = _scan(op, a)
    want = np.cumsum(a)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=0, atol=1e-9 * n)


def test_scan_signed_zero_and_int8_wrap(engine):
    z = np.array([-0.0] * 3000, np.float64)
    got = _scan(ReduceOp("add", "add", "d", np.float64(-0.0)), z)
    assert np.all(np.signbit(got))  # -0.0 + -0.0 stays -0.0 (identity padding included)
    a = rng.integers(-128, 128, 9000).astype(np.int8)
    got = _scan(ReduceOp("add", "add", "b", np.int8(0)), a)
    np.testing.assert_array_equal(got, np.add.accumulate(a, dtype=np.int8))


def test_scan_complex_half_bool(engine):
    a = (rng.standard_normal(4100) + 1j * rng.standard_normal(4100))
    got = _scan(ReduceOp("add", "add", "D", np.complex128(-0.0)), a)
    np.testing.assert_allclose(got, np.cumsum(a), rtol=0, atol=1e-10 * 4100)
    h = (rng.standard_normal(6000) * 100).astype(np.float16)
    got = _scan(ReduceOp("maximum", "maximum", "e", np.float16(-np.inf)), h)
    np.testing.assert_array_equal(got, np.maximum.accumulate(h))
    b = np.zeros(5000, np.bool_)
    b[3333] = True
    got = _scan(ReduceOp("logical_or", "logical_or", "?", np.bool_(False)), b)
    np.testing.assert_array_equal(got, np.logical_or.accumulate(b))


def test_cumsum_2d_strided(engine):
    op = ReduceOp("add", "add", "l", np.int64(0))
    a = rng.integers(-1000, 1000, (3, 2 * 4500))[:, ::2]  # lines of 4500, stride 16 bytes
    np.testing.assert_array_equal(_scan(op, a, 1), np.cumsum(a, axis=1))
    b = rng.integers(-1000, 1000, (300, 5))  # many short lines down axis 0: scan_cols
    np.testing.assert_array_equal(_scan(op, b, 0), np.cumsum(b, axis=0))
    np.testing.assert_array_equal(_scan(op, b.T, 1), np.cumsum(b.T, axis=1))


# --- argmax / argmin -----------------------------------------------------------------------

def _arg(kind, a, axes):
    kept = tuple(n for d, n in enumerate(a.shape) if d not in axes)
    out = np.full(kept, -7, np.int64)
    red.arg_reduce(kind, HostArray(a), HostArray(out), tuple(axes))
    return out


def _check_arg(a, axis=None):
    for kind in ("argmax", "argmin"):
        axes = tuple(range(a.ndim)) if axis is None else (axis,)
        got = _arg(kind, a, axes)
        want = getattr(np, kind)(a, axis=axis)
        np.testing.assert_array_equal(got, want, err_msg=kind)


@pytest.mark.parametrize("n", [1, 2, 255, 257, 4099, 20001])
def test_arg_ties_and_nan(engine, n):
    a = rng.integers(-3, 4, n).astype(np.float32)  # many ties of the max and the min
    _check_arg(a)
    if n > 2:
        a[n - 1] = np.nan
        a[n // 2] = np.nan
        _check_arg(a)  # the first NaN wins both
        _check_arg(a[1:])  # misaligned: a scalar head before the vector loads
    _check_arg(np.full(n, -np.inf, np.float32))  # all equal: index 0
    _check_arg(np.full(n, np.nan, np.float32))
    _check_arg(a.astype(np.float64)[::-1])  # strided (negative) rows
    _check_arg(rng.integers(-5, 5, n))


def test_arg_axes(engine):
    a = rng.integers(-4, 4, (37, 300)).astype(np.float32)
    a[5, 17] = np.nan
    for axis in (0, 1, None):
        _check_arg(a, axis)
    _check_arg(a.T, 1)
    b = rng.integers(-4, 4, (6, 5000)).astype(np.float64)
    _check_arg(b, 1)
    _check_arg(b, 0)
