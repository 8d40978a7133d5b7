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
from pathlib import Path

import numpy as np
import pytest

from cupynum._backends.base import ReduceOp
from cupynum._backends.cuda import reduction as red
from cupynum._backends.cuda import launch
from cupynum._backends.cuda import tuning
from shim import CXX, FIBER_SHIM, HostArray, build

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)")

WARP_SHIM = r"""
// `__shared__ alignas(16) T x[]` with __shared__ = static: GNU attributes may sit there
#define alignas(n) __attribute__((aligned(n)))
template <class T> static T __shfl_up_sync(unsigned, T v, unsigned d) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle width");
  const int t = cpn_tid();
  memcpy(&cpn_slot[t], &v, sizeof(T));
  cpn_wbarrier();
  T r = v;
  if ((unsigned)(t & 31) >= d) memcpy(&r, &cpn_slot[t - d], sizeof(T));
  cpn_wbarrier();
  return r;
}
static unsigned __ballot_sync(unsigned, bool p) {
  const int t = cpn_tid();
  cpn_slot[t] = p;
  cpn_wbarrier();
  unsigned m = 0;
  for (int l = 0; l < 32; ++l) if (cpn_slot[(t & ~31) + l]) m |= 1u << l;
  cpn_wbarrier();
  return m;
}
static int __ffs(unsigned x) { return __builtin_ffs(x); }
#define __syncwarp() cpn_wbarrier()
#define __threadfence()
"""

UNITS = [
    red.Unit("scan", "add", "f", "f", "f"),
    red.Unit("scan", "add", "i", "l", "l"),  # int32 input, int64 loop (cumsum's default)
    red.Unit("scan", "add", "?", "l", "l"),
    red.Unit("scan", "multiply", "d", "d", "d"),
    red.Unit("scan", "multiply", "l", "l", "l"),
    red.Unit("scan", "minimum", "f", "f", "f"),
    red.Unit("scan", "maximum", "i", "i", "i"),
    red.Unit("scan", "logical_and", "?", "?", "?"),
    red.Unit("scan", "add", "F", "F", "F"),  # 8-byte complex states
    red.Unit("scan", "add", "e", "e", "e"),  # float compute, 2-byte stores
    red.Unit("scan", "add", "d", "d", "d"),
    red.Unit("scan", "add", "l", "l", "l"),
    red.Unit("scan", "add", "b", "b", "b"),  # int8 loop: sub-word shuffles, wrap-around
    red.Unit("scan", "add", "D", "D", "D"),  # 16-byte states
    red.Unit("scan", "maximum", "e", "e", "e"),  # float16 loop, float compute
    red.Unit("scan", "logical_or", "?", "?", "?"),
] + [red.Unit("arg", k, c, c, "l") for k in ("argmax", "argmin") for c in "fdl"] + [
    red.Unit("sqdev", "add", c, r, r) for c, r in ("ff", "dd", "Ff", "Dd")]
# the look-back tests: short tiles (2 items a thread), with and without withheld prefixes
LB_UNITS = [red.Unit("scan", "add", c, c, c) for c in "fdlFD"]

_SIG = re.compile(r'extern "C" __global__ void __launch_bounds__\([\d, ]+\) (\w+)\(([^)]*)\)')


def _build(units=UNITS, defines=()):
    return build_source(red.program_source(units), defines)


def build_source(src, defines=()):
    """A host library of the kernels of program text ``src``: ``host_<name>(params, gx,
    gy)`` per kernel runs the grid under the fiber shim."""
    parts = [FIBER_SHIM, WARP_SHIM, src]
    for name, params in _SIG.findall(src):
        types = [p.strip().rsplit(" ", 1)[0] for p in params.split(",")]
        tdefs = "".join(f"  typedef {t} T{i};\n" for i, t in enumerate(types))
        args = ", ".join(f"*(T{i}*)p[{i}]" for i in range(len(types)))
        parts.append(
            f'extern "C" void host_{name}(void** p, unsigned gx, unsigned gy) {{\n'
            f"  cpn_run([](void** p) {{\n{tdefs}    {name}({args}); }}, p, gx, gy, 1, "
            f"{red.BLOCK}, 1, 1);\n}}\n")
    # -fno-gnu-unique: the __shared__ arrays are static locals of templates, which GCC makes
    # process-wide unique symbols; libraries built with other look-back sizes (same names,
    # other array sizes) must not share them
    uniq = [] if "clang" in Path(CXX).name else ["-fno-gnu-unique"]
    return build("\n".join(parts), "red",
                 ["-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-shared",
                  "-fPIC", *uniq, *defines])


class _Tmp:
    def __init__(self, nbytes):
        self.np = np.full(-(-nbytes // 16) * 2, 0x5A5A5A5A5A5A5A5A, np.uint64)  # garbage
        self.ptr = self.np.ctypes.data


class _Engine(list):
    """The kernel names launched (a list), and ``use(lib)`` to switch libraries."""

    def use(self, lib, items):
        self.lib = lib
        self.funcs = {}
        tuning.override("SCAN", chain_items=items)


@pytest.fixture(scope="module")
def engine():
    mp = pytest.MonkeyPatch()
    launches = _Engine()
    launches.lib, launches.funcs = _build(), {}

    def get_kernel(unit, kind):
        name = red.kernel_names(unit)[kind]
        f = launches.funcs.get(name)
        if f is None:
            f = launches.funcs[name] = getattr(launches.lib, f"host_{name}")
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
    mp.setattr(launch, "_drv", (raw, None, lambda: 0))
    mp.setattr(red, "_sms", 1)
    mp.setattr(red, "_split", split)
    mp.setattr(red, "_alloc", _Tmp)
    mp.setattr(red, "_memset0", lambda ptr, n: ctypes.memset(ptr, 0, n))
    mp.setattr(red, "_prepared", {})
    mp.setattr(red, "_plans", {})
    yield launches
    mp.undo()
    tuning.reset("SCAN")


rng = np.random.default_rng(11)
DEFAULT_ITEMS = tuning.SCAN.chain_items


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
    if n >= 5000:  # several slices (tiles) ran
        assert any(k.endswith("__scan_chain") for k in engine)


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


def _ops_cases():
    f = rng.standard_normal
    return [
        (ReduceOp("add", "add", "l", np.int64(0)), lambda n: rng.integers(-2**31, 2**31, n)
         .astype(np.int32)),
        (ReduceOp("add", "add", "l", np.int64(0)), lambda n: rng.random(n) < 0.5),
        (ReduceOp("multiply", "multiply", "d", np.float64(1)),
         lambda n: 1 + f(n) * 1e-3),
        (ReduceOp("multiply", "multiply", "l", np.int64(1)),
         lambda n: rng.integers(-3, 4, n)),  # wraps around
        (ReduceOp("minimum", "minimum", "f", np.float32(np.inf)),
         lambda n: np.where(rng.random(n) < 1e-3, np.nan, f(n)).astype(np.float32)),
        (ReduceOp("maximum", "maximum", "i", np.int32(-2**31)),
         lambda n: rng.integers(-2**31, 2**31, n).astype(np.int32)),
        (ReduceOp("logical_and", "logical_and", "?", np.bool_(True)),
         lambda n: rng.random(n) < 0.9999),
        (ReduceOp("add", "add", "F", np.complex64(-0.0)),
         lambda n: (f(n) + 1j * f(n)).astype(np.complex64)),
        (ReduceOp("add", "add", "e", np.float16(-0.0)),
         lambda n: (f(n) * 0.01).astype(np.float16)),
    ]


@pytest.mark.parametrize("n", [1, 4095, 4096, 4097, 3 * 4096, 70001])
def test_chain_op_families(engine, n):
    for op, make in _ops_cases():
        a = make(n)
        got = _scan(op, a)
        want = getattr(np, op.ufunc).accumulate(a, dtype=np.dtype(op.loop))
        if want.dtype.kind in "fc":
            tol = 1e-2 if want.dtype == np.float16 else 1e-4
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(n),
                                       err_msg=op.functor)
        else:
            np.testing.assert_array_equal(got, want, err_msg=op.functor)
        for view in (a[1:], a[::-1]):  # misaligned (no vector path) and strided lines
            if view.size:
                got = _scan(op, view)
                want = getattr(np, op.ufunc).accumulate(view, dtype=np.dtype(op.loop))
                if want.dtype.kind in "fc":
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(n))
                else:
                    np.testing.assert_array_equal(got, want)
    assert any(k.endswith("__scan_chain") for k in engine)


def test_chain_2d_lines(engine):
    a = rng.standard_normal((5, 9000)).astype(np.float32)
    op = ReduceOp("add", "add", "f", np.float32(-0.0))
    for x, axis in ((a, 1), (a[:, 3:], 1), (a.T, 0), (a[:, ::-2], 1)):
        np.testing.assert_allclose(_scan(op, x, axis), np.cumsum(x, axis=axis), rtol=1e-4,
                                   atol=1e-3)
    b = rng.integers(-9, 9, (3, 4, 5000))
    opl = ReduceOp("add", "add", "l", np.int64(0))
    np.testing.assert_array_equal(_scan(opl, b, 2), np.cumsum(b, axis=2))
    out = np.full((3, 4, 5000 * 2), 5, np.int64)[:, :, ::2]  # strided output lines
    red.scan(opl, HostArray(b), HostArray(out), 2)
    np.testing.assert_array_equal(out, np.cumsum(b, axis=2))


def _restore_default_library(engine):
    """Back to the default kernels: built with the default tile size (the tests above
    leave chain_items at 2, and the compiled tile size must match the plans')."""
    tuning.override("SCAN", chain_items=DEFAULT_ITEMS)
    engine.use(_build(), DEFAULT_ITEMS)


@pytest.mark.parametrize("window,keep,period,wt", [(2, 4, 37, True), (1, 1, 37, False),
                                                   (1, 1, 101, True), (2, 1, 230, False)])
def test_chain_lookback_deterministic(engine, window, keep, period, wt):
    """Short tiles; a second build withholds most inclusive prefixes (all but every
    ``period``-th tile's), so that tiles fold aggregates over several look-back windows of
    32 * ``window`` tiles, ``keep`` of them kept in shared memory (the others read again):
    the bits must not change.  (The float32 case has 293 tiles: with period 101 or 230 its
    walks pass the kept windows.)  ``wt``: vector loads and stores warp-striped through
    shared memory, or a thread's own elements."""
    # the kernels are built for 2 items a thread (the tile size is compiled in: the plans
    # must use the same chain_items, as engine.use sets it)
    with tuning.overridden("SCAN", chain_window=window, chain_keep=keep, chain_items=2,
                           chain_transpose=wt):
        plain = _build(LB_UNITS)
        skip = _build(LB_UNITS, [f"-DCPN_RED_LB_SKIP(t)=((t)%{period}!=0)"])
    cases = [("f", rng.standard_normal(150001).astype(np.float32)),
             ("d", rng.standard_normal(90001)),
             ("l", rng.integers(-2**40, 2**40, 70001)),
             ("F", (rng.standard_normal(40001) + 1j * rng.standard_normal(40001))
              .astype(np.complex64)),
             ("D", rng.standard_normal(30001) + 1j * rng.standard_normal(30001))]
    try:
        for dt, a in cases:
            op = ReduceOp("add", "add", dt, np.dtype(dt).type(-0.0 if dt != "l" else 0))
            res = []
            for lib in (plain, skip):
                engine.use(lib, 2)
                res.append(_scan(op, a))
            assert res[0].tobytes() == res[1].tobytes(), dt
            if dt == "l":
                np.testing.assert_array_equal(res[0], np.cumsum(a))
            else:
                np.testing.assert_allclose(res[0], np.cumsum(a.astype(np.complex128)), rtol=1e-4,
                                           atol=1e-3 * np.sqrt(a.size))
    finally:
        _restore_default_library(engine)


# --- column scans (scan_blocks: a thread a line, the lines cut into chunks) ------------------

def _col_cases():
    f = rng.standard_normal
    return [
        ("f", (f((1000, 40)) + 0.25).astype(np.float32)),  # 15 chunks of 67 rows (1 SM)
        ("d", f((129, 300))),  # two blocks of lines, 2 chunks of 64 (+1 row)
        ("l", rng.integers(-2**40, 2**40, (700, 33))),
        ("F", (f((500, 50)) + 1j * f((500, 50))).astype(np.complex64)),
        ("D", f((90, 64)) + 1j * f((90, 64))),  # one chunk (R < 2 * col_min_rows)
    ]


def test_scan_blocks_columns(engine):
    for dt, a in _col_cases():
        op = ReduceOp("add", "add", dt, np.dtype(dt).type(-0.0 if dt != "l" else 0))
        launches = len(engine)
        got = _scan(op, a, 0)
        assert any(k.endswith("__scan_blocks") for k in engine[launches:]), dt
        again = _scan(op, a, 0)
        assert got.tobytes() == again.tobytes(), dt
        assert got.dtype == a.dtype
        if dt == "l":
            np.testing.assert_array_equal(got, np.cumsum(a, axis=0))
        else:
            ref, mag = _float_bound(a.real, 0) if dt in "fd" else (None, None)
            if ref is not None:
                eps = np.finfo(dt).eps
                err = np.abs(got.astype(np.longdouble) - ref)
                assert np.all(err <= 2 * a.shape[0] * eps * mag + np.finfo(dt).tiny)
            np.testing.assert_allclose(got, np.cumsum(a.astype(np.complex128), axis=0).astype(
                a.dtype) if dt in "FD" else np.cumsum(a, axis=0), rtol=1e-4, atol=1e-3)


def test_scan_blocks_layouts_and_ops(engine):
    x = rng.integers(-9, 9, (300, 7, 64))
    opl = ReduceOp("add", "add", "l", np.int64(0))
    for view, axis in ((x, 0), (x[:, :, :50], 0), (x[::-2], 0), (x.transpose(1, 0, 2), 1),
                       (x[:, 3, :], 0)):
        np.testing.assert_array_equal(_scan(opl, view, axis), np.cumsum(view, axis=axis))
    out = np.full((300, 7, 128), 5, np.int64)[:, :, ::2]  # strided output
    red.scan(opl, HostArray(x), HostArray(out), 0)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=0))
    for op, make in _ops_cases():
        a = make(200 * 48).reshape(200, 48)
        got = _scan(op, a, 0)
        want = getattr(np, op.ufunc).accumulate(a, axis=0, dtype=np.dtype(op.loop))
        if want.dtype.kind in "fc":
            tol = 1e-2 if want.dtype == np.float16 else 1e-4
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 15, err_msg=op.functor)
        else:
            np.testing.assert_array_equal(got, want, err_msg=op.functor)


def test_scan_blocks_needs_enough_lines(engine):
    a = rng.integers(-9, 9, (1000, 31))  # fewer lines than col_min_lines: not scan_blocks
    op = ReduceOp("add", "add", "l", np.int64(0))
    assert a.shape[1] < tuning.SCAN.col_min_lines
    launches = len(engine)
    np.testing.assert_array_equal(_scan(op, a, 0), np.cumsum(a, axis=0))
    assert not any(k.endswith("__scan_blocks") for k in engine[launches:])


# --- var/std: the sum of squared deviations --------------------------------------------------

@pytest.mark.parametrize("dt", ["f", "d", "F", "D"])
def test_sqdev(engine, dt):
    a = rng.standard_normal((7, 3000))
    if dt in "FD":
        a = a + 1j * rng.standard_normal(a.shape)
    a = (a * 3 + 5).astype(dt)
    rt = np.dtype(dt.lower())
    for axes in ((0, 1), (1,), (0,)):
        mean = (a.sum(axis=axes) / np.prod([a.shape[d] for d in axes])).astype(dt)
        mean = np.array(mean, order="C")
        out = np.full(mean.shape, 7, rt)
        red.sqdev_sum(HostArray(a), HostArray(mean), HostArray(out), axes)
        d = a - np.expand_dims(mean, axes)
        want = (d.real * d.real + d.imag * d.imag if dt in "FD" else d * d).sum(axis=axes)
        np.testing.assert_allclose(out, want, rtol=1e-5 if rt == np.float32 else 1e-12,
                                   err_msg=str(axes))


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


def test_short_rows_take_a_thread_a_row(engine):
    """Rows of at most ``tuning.REDUCTION.thread_rows`` elements are reduced a thread a row
    (the ``cols`` kernel over the rows' dims), longer ones a warp a row (``rows32``): both
    give NumPy's answer (arg-reductions, with ties and a NaN; var's squared deviations)."""
    limit = tuning.REDUCTION.thread_rows
    for r in (2, 3, 5, limit, limit + 1, 40):
        a = rng.integers(-3, 4, (60, 30, r)).astype(np.float64)
        a[7, 3, r - 1] = np.nan
        start = len(engine)
        _check_arg(a, 2)
        _check_arg(a[:, ::2], 2)  # strided rows: the kept dims do not merge
        want = {"cols"} if r <= limit else {"rows32"}
        assert {k.rsplit("__", 1)[1] for k in engine[start:]} == want, r
        b = rng.standard_normal((1000, r))
        mean = np.ascontiguousarray(b.mean(axis=1))
        out = np.full(1000, 7.0)
        red.sqdev_sum(HostArray(b), HostArray(mean), HostArray(out), (1,))
        np.testing.assert_allclose(out, ((b - mean[:, None]) ** 2).sum(axis=1), rtol=1e-12)


ARG_UNITS = [red.Unit("arg", k, c, c, "l") for k in ("argmax", "argmin") for c in "fe?bF"]


def test_arg_vector_path(engine):
    """The contiguous rows' fast path (value and vector index per thread, the element found
    again at the end): ties within and across vectors, NaN anywhere, -0.0 against 0.0, the
    best in the scalar head or tail, for 1-, 2-, 4- and 8-byte elements."""
    engine.use(_build(ARG_UNITS), tuning.SCAN.chain_items)
    try:
        for c in "fe?bF":
            for n in (9, 64, 1000, 4099, 20001):
                for trial in range(4):
                    if c == "?":
                        a = rng.random(n) < (0.5 if trial else 0.001)
                    elif c == "F":
                        a = (rng.integers(-2, 3, n) + 1j * rng.integers(-2, 3, n)).astype(c)
                    else:
                        a = rng.integers(-3, 4, n).astype(c)
                    if c in "feF" and trial >= 2:
                        for i in rng.integers(0, n, 2):
                            a[i] = np.nan
                    if c in "fe" and trial == 1:
                        a = np.where(a == 0, -0.0, a).astype(c)
                        a[rng.integers(0, n)] = 0.0
                    if c != "?" and trial == 3 and n > 8:
                        a[n - 1] = 100  # in the tail
                        a[1] = 100  # in the head of a[1:]
                    _check_arg(a)
                    _check_arg(a[1:])
                    _check_arg(a[3:-2])
    finally:
        _restore_default_library(engine)
