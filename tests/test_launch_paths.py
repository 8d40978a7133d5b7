"""The lean hot path, checked without a GPU.

1. The strided kernels' one-dimensional branch (``strided_ilp`` elements per thread) and their
   general branch, compiled for the CPU with the shim of test_elementwise_host.py, for each
   ``strided_ilp``, against NumPy.
2. Every way of calling cuLaunchKernel (``CUPYNUM_LAUNCH=bindings|ctypes|v2``), the memory
   pool's fast path, the stream bookkeeping and every host transfer strategy, run against a
   fake ``libcuda.so.1`` (built here; "device" memory is host memory, copies are memcpy,
   launches are recorded, kernels do not run) in a subprocess.  What reaches the driver is
   compared with what must: the function handle, grid, stream and every parameter.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum._backends.cuda import elementwise as ew
from cupynum._backends.cuda import launch
from cupynum._backends.cuda import tuning
from data import reseed
from shim import CXX, ROOT, HostArray
from test_elementwise_host import _build, _check, _host_get_kernel, _hot, _op, _ufunc

rng = np.random.default_rng(11)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


ADD_F = _op("add", "fff")
CASES = {  # each reaches the strided kernel with one dimension after collapse
    "1d-step2": lambda: _ufunc(ADD_F, _f32(5001)[::2], _f32(2501)),
    "1d-step3-both": lambda: _ufunc(ADD_F, _f32(3 * 1500)[::3], _f32(2 * 1500)[1::2]),
    "1d-reversed-scalar": lambda: _ufunc(ADD_F, _f32(1031)[::-1], np.float32(0.5)),
    "1d-0-stride": lambda: _ufunc(ADD_F, _f32(4000)[::4], np.array(np.float32(3.0))),
    "1d-short": lambda: _ufunc(ADD_F, _f32(7)[::2], _f32(4)),
    "1d-divmod": lambda: _ufunc(_op("divmod", "dddd"), rng.standard_normal(2600)[::2] * 9,
                                rng.standard_normal(1300) + 3),
    "1d-complex": lambda: _ufunc(_op("multiply", "DDD"),
                                 (rng.standard_normal(1800) + 1j)[::-3], np.complex128(2 - 1j)),
    "1d-cast-column": lambda: _ufunc(_op("add", "ddd"), rng.integers(-9, 9, (700, 3))[:, 1],
                                     _f32(700)),
    "2d-transpose": lambda: _ufunc(ADD_F, _f32(33, 47).T, _f32(47, 33)),
    "hot-path-bare": lambda: _bare_case(),
    "contended": lambda: _contended_case(),
}


def _bare_case():
    """``launch.bare`` repeats the launch it was built for (parameters packed once)."""
    x, y = _f32(3000), _f32(3000)
    out = np.zeros(3000, np.float32)
    launch = ew.contiguous_launcher(ADD_F, (x.dtype, y.dtype))
    bare = launch.bare((HostArray(x), HostArray(y)), (HostArray(out),), 3000)
    out[...] = 0
    bare()
    return [(out, x + y)] + _hot(ADD_F, _f32(100), np.float32(2.0))


def _contended_case():
    """A thread that finds the parameter block taken packs into a block of its own."""
    x, y = _f32(3000), _f32(3000)
    out = np.zeros(3000, np.float32)
    launch = ew.contiguous_launcher(ADD_F, (x.dtype, y.dtype))
    p = ew.prepared(launch.bare.args[0])
    xs = _f32(40, 30)
    sout = np.zeros((30, 40), np.float32)
    _ufunc(ADD_F, xs.T, np.float32(1))  # prepares the strided kernel
    ps = [q for q in ew._prepared.values() if q.key.layout == "strided"]
    taken = [q.token.pop() for q in [p] + ps]
    try:
        launch((HostArray(x), HostArray(y)), (HostArray(out),), 3000)
        ew.launch_elementwise(ADD_F, [HostArray(xs.T), np.float32(1)], [HostArray(sout)])
    finally:
        for q, t in zip([p] + ps, taken):
            q.token.append(t)
    assert all(q.token == [True] for q in [p] + ps)
    return [(out, x + y), (sout, xs.T + np.float32(1))]


@pytest.fixture(scope="module", params=[1, 2, 4], ids=lambda k: f"ilp{k}")
def engine(request):
    """The engine with its launches run by host-compiled kernels (as in
    test_elementwise_host.py), for one ``strided_ilp``; the grid cap of 3 blocks makes the
    grid-stride loops run several rounds."""
    if CXX is None:
        pytest.skip("no C++ compiler (set CXX)")
    mp = pytest.MonkeyPatch()
    specs, lib = [], [None]
    get_kernel = _host_get_kernel(specs, lib)

    def raw(func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        assert (gy, gz, by, bz, shmem, extra, bx, stream) == (1, 1, 1, 1, 0, 0, ew.BLOCK, 0)
        assert 0 < gx <= 3
        func(params, gx, bx)
        return (0,)

    tuning.override("ELEMENTWISE", strided_ilp=request.param)
    mp.setattr(ew, "get_kernel", get_kernel)
    mp.setattr(launch, "_drv", (raw, None, lambda: 0))
    mp.setattr(ew, "_cap", 3)
    for name in ("_prepared", "_plans"):
        mp.setattr(ew, name, {})
    for case in CASES.values():  # dry run: collect the kernels the cases need
        case()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ew, "_I32", 64)
        m.setattr(ew, "_plans", {})
        for name in ("1d-step2", "1d-divmod", "2d-transpose"):
            CASES[name]()
    lib[0] = _build(specs)
    for name in ("_prepared", "_plans"):
        mp.setattr(ew, name, {})
    yield request.param
    mp.undo()
    tuning.reset("ELEMENTWISE")


@pytest.mark.parametrize("name", list(CASES))
def test_strided_one_dimension_on_cpu(engine, name):
    reseed(rng, name)
    _check(CASES[name]())


@pytest.mark.parametrize("name", ["1d-step2", "1d-divmod", "2d-transpose"])
def test_strided_64bit_indexing_on_cpu(engine, name, monkeypatch):
    monkeypatch.setattr(ew, "_I32", 64)
    monkeypatch.setattr(ew, "_plans", {})
    _check(CASES[name]())


def test_strided_kernel_text():
    """One multiply per operand in the 1-D branch, 32-bit when it fits; the body once."""
    spec = ew.KernelSpec(ew.op_exprs(ADD_F), (("a", "f"), ("s", "f"), ("a", "f")), 2,
                         "strided", 4, False)
    src = ew.kernel_source(spec)
    assert "o[k][0] = (int)jk * st0;" in src and src.count("cpn::add{}(") == 1
    assert f"{ew.BLOCK * tuning.ELEMENTWISE.strided_ilp}u" in src
    spec64 = spec._replace(idx64=True)
    assert "(long long)jk * st0" in ew.kernel_source(spec64)


# --- the fake driver ------------------------------------------------------------------------

FAKE_LIBCUDA = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef int CUresult;
typedef unsigned long long u64;
static int generic(void) { return 0; }
static u64 counter = 0x10000;
static u64 next_handle(void) { counter += 0x100; return counter; }
u64 fake_launches = 0, fake_last[11], fake_registered = 0;
/* the driver calls that queue or wait for device work (memory, copies, launches, syncs) */
u64 fake_calls = 0;
CUresult cuInit(unsigned f) { return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int o) { *d = 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = (void*)0x1000; return 0; }
CUresult cuCtxSetCurrent(void* c) { return 0; }
CUresult cuCtxGetCurrent(void** c) { *c = (void*)0x1000; return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  *v = attr == 16 ? 4 : attr == 75 ? 9 : attr == 76 ? 0 : 1; return 0; }
CUresult cuDeviceTotalMem_v2(size_t* v, int d) { *v = (size_t)80 << 30; return 0; }
CUresult cuDeviceGetName(char* s, int n, int d) { strncpy(s, "fake", n); return 0; }
CUresult cuDeviceGetDefaultMemPool(void** p, int d) { *p = (void*)0x2000; return 0; }
CUresult cuMemPoolGetAttribute(void* p, int a, void* v) { *(u64*)v = 0; return 0; }
CUresult cuMemAllocFromPoolAsync(u64* p, size_t n, void* pool, void* s) {
  void* q = NULL; ++fake_calls;
  if (posix_memalign(&q, 256, n ? n : 1)) return 2; *p = (u64)q; return 0; }
CUresult cuMemFreeAsync(u64 p, void* s) { ++fake_calls; free((void*)p); return 0; }
CUresult cuMemcpyHtoDAsync_v2(u64 d, const void* s, size_t n, void* st) {
  ++fake_calls; memcpy((void*)d, s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, u64 s, size_t n, void* st) {
  ++fake_calls; memcpy(d, (void*)s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void* d, u64 s, size_t n) {
  ++fake_calls; memcpy(d, (void*)s, n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(u64 d, u64 s, size_t n, void* st) {
  ++fake_calls; memmove((void*)d, (void*)s, n); return 0; }
CUresult cuMemsetD8Async(u64 d, unsigned char c, size_t n, void* s) {
  ++fake_calls; memset((void*)d, c, n); return 0; }
CUresult cuStreamSynchronize(void* s) { ++fake_calls; return 0; }
CUresult cuCtxSynchronize(void) { ++fake_calls; return 0; }
CUresult cuMemHostAlloc(void** p, size_t n, unsigned f) { *p = malloc(n); return 0; }
CUresult cuMemFreeHost(void* p) { free(p); return 0; }
CUresult cuMemHostRegister_v2(void* p, size_t n, unsigned f) { fake_registered += n; return 0; }
CUresult cuEventCreate(u64* e, unsigned f) { *e = next_handle(); return 0; }
CUresult cuStreamCreate(u64* s, unsigned f) { *s = next_handle(); return 0; }
CUresult cuLibraryLoadData(u64* l, const void* c, void* a, void* b, unsigned n, void* d,
                           void* e, unsigned m) { *l = next_handle(); return 0; }
CUresult cuLibraryGetKernel(u64* k, u64 l, const char* name) { *k = next_handle(); return 0; }
CUresult cuKernelGetFunction(u64* f, u64 k) { *f = k | 1; return 0; }
CUresult cuKernelGetAttribute(int* v, int a, u64 k, int d) { *v = 1024; return 0; }
CUresult cuGetExportTable(const void** t, const void* id) { *t = 0; return 801; }
CUresult cuLaunchKernel(u64 f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned sh, u64 s, u64 p, u64 e) {
  u64 a[11] = {f, gx, gy, gz, bx, by, bz, sh, s, p, e};
  memcpy(fake_last, a, sizeof a); ++fake_launches; ++fake_calls; return 0; }
struct entry { const char* name; void* fn; };
static struct entry table[] = {
  {"cuInit", cuInit}, {"cuDriverGetVersion", cuDriverGetVersion},
  {"cuDeviceGetCount", cuDeviceGetCount}, {"cuDeviceGet", cuDeviceGet},
  {"cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain}, {"cuCtxSetCurrent", cuCtxSetCurrent},
  {"cuCtxGetCurrent", cuCtxGetCurrent}, {"cuDeviceGetAttribute", cuDeviceGetAttribute},
  {"cuDeviceTotalMem", cuDeviceTotalMem_v2}, {"cuDeviceGetName", cuDeviceGetName},
  {"cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool},
  {"cuMemPoolGetAttribute", cuMemPoolGetAttribute},
  {"cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync}, {"cuMemFreeAsync", cuMemFreeAsync},
  {"cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2}, {"cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2},
  {"cuMemcpyDtoH", cuMemcpyDtoH_v2},
  {"cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2}, {"cuMemsetD8Async", cuMemsetD8Async},
  {"cuStreamSynchronize", cuStreamSynchronize}, {"cuCtxSynchronize", cuCtxSynchronize},
  {"cuMemHostAlloc", cuMemHostAlloc}, {"cuMemFreeHost", cuMemFreeHost},
  {"cuMemHostRegister", cuMemHostRegister_v2},
  {"cuEventCreate", cuEventCreate}, {"cuStreamCreate", cuStreamCreate},
  {"cuLibraryLoadData", cuLibraryLoadData}, {"cuLibraryGetKernel", cuLibraryGetKernel},
  {"cuKernelGetFunction", cuKernelGetFunction}, {"cuKernelGetAttribute", cuKernelGetAttribute},
  {"cuGetExportTable", cuGetExportTable}, {"cuLaunchKernel", cuLaunchKernel}, {0, 0}};
CUresult cuGetProcAddress_v2(const char* sym, void** pfn, int ver, u64 flags, int* status) {
  if (status) *status = 0;
  *pfn = (void*)generic;  /* anything else: succeeds and writes nothing */
  for (struct entry* e = table; e->name; ++e)
    if (!strcmp(sym, e->name)) { *pfn = e->fn; break; }
  return 0;
}
CUresult cuGetProcAddress(const char* sym, void** pfn, int ver, u64 flags) {
  return cuGetProcAddress_v2(sym, pfn, ver, flags, 0); }
"""

SCRIPT = r"""
import ctypes, numpy as np
import cupynum as cp
from cupynum._backends.cuda import runtime, memory, tuning
fake = ctypes.CDLL("libcuda.so.1")
last = (ctypes.c_uint64 * 11).in_dll(fake, "fake_last")
count = ctypes.c_uint64.in_dll(fake, "fake_launches")
assert runtime.device_name() == "fake"
runtime.init(0)  # the device the context is on may be named again, not another one
assert runtime.device_ordinal() == 0
try:
    runtime.init(1)
except RuntimeError as e:
    assert "device 0" in str(e), e
else:
    raise AssertionError("runtime.init(1) after init(0) did not raise")

def params(k):
    ptrs = (ctypes.c_uint64 * k).from_address(last[9])
    return [ctypes.c_uint64.from_address(p).value for p in ptrs]

h = np.arange(1000, dtype=np.float32)
a, b = cp.asarray(h), cp.asarray(np.ones(1000, np.float32))
assert np.array_equal(a.get(), h)
for _ in range(3):
    n0 = count.value
    c = a + b
    assert count.value == n0 + 1
    f, gx, gy, gz, bx, by, bz, sh, s, pp, ex = list(last)
    assert (gx, gy, gz, bx, by, bz, sh, s, ex) == (1, 1, 1, 256, 1, 1, 0, 0, 0), list(last)
    assert f & 1, hex(f)  # the CUfunction of cuKernelGetFunction (the fake sets bit 0)
    assert params(4) == [a._buf.device.ptr, b._buf.device.ptr, c._buf.device.ptr, 1000], params(4)
d = a * 2.0
assert params(4)[::2] == [a._buf.device.ptr, d._buf.device.ptr]
assert ctypes.c_float.from_address((ctypes.c_uint64 * 4).from_address(last[9])[1]).value == 2
from cupynum._backends import counters  # every launch, copy and wait counted once
c0, n0 = counters.snapshot(), count.value
c = a + b
d = a[::2] + b[1::2]  # the hot path and the strided path
hc = c.get()
COUNTS = counters.snapshot()
assert COUNTS["launches"] - c0["launches"] == count.value - n0 == 2, (COUNTS, c0)
assert COUNTS["d2h_bytes"] - c0["d2h_bytes"] == 4000, (COUNTS, c0)
assert COUNTS["syncs"] - c0["syncs"] == 1, (COUNTS, c0)
assert COUNTS["h2d_bytes"] == c0["h2d_bytes"], (COUNTS, c0)
cp.asarray(hc)
assert counters.snapshot()["h2d_bytes"] - c0["h2d_bytes"] == 4000, (COUNTS, c0)
# every kernel family launches through launch.Prepared: a reduction, a hand-written kernel
# (the tiled transpose of kernels_util), ufunc.at's kernel; each reaches the driver with the
# CUfunction, counted once
m = cp.asarray(np.arange(64 * 64, dtype=np.float32).reshape(64, 64))
for run in (lambda: a.sum(), lambda: cp.ascontiguousarray(m.T),
            lambda: cp.add.at(m.ravel(), cp.asarray(np.arange(5)), np.float32(1))):
    c0, n0 = counters.snapshot(), count.value
    run()
    assert count.value > n0 and counters.launches() - c0["launches"] == count.value - n0, (
        counters.snapshot(), c0, count.value, n0)
    assert last[0] & 1, hex(last[0])
    assert last[8] == 0, list(last)

def scalar_slot(fmt):  # the by-value scalar of the last launch (slot 1 of a, s, out, n)
    ptrs = (ctypes.c_uint64 * 4).from_address(last[9])
    return getattr(ctypes, fmt).from_address(ptrs[1]).value

# Python scalars are packed as they are where that gives NumPy's conversion, else NumPy
# converts them (and raises where NumPy raises)
import warnings
for x, scalar, fmt in [(a, 0.1, "c_float"), (a, 3, "c_float"), (a, 2**70, "c_float"),
                       (cp.asarray(np.arange(9.0)), 2**70 + 1, "c_double"),
                       (cp.asarray(np.arange(9.0)), 0.1, "c_double"),
                       (cp.asarray(np.arange(9, dtype=np.int8)), -128, "c_int8"),
                       (cp.asarray(np.arange(9, dtype=np.uint16)), 65535, "c_uint16"),
                       (cp.asarray(np.arange(9, dtype=np.int64)), True, "c_int64"),
                       (cp.asarray(np.ones(9, np.bool_)), True, "c_bool"),
                       (a, 1e300, "c_float")]:
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        want = (x.get() * scalar).dtype.type(scalar)
        r = x * scalar
    assert r.dtype == (x.get() * scalar).dtype, (r.dtype, scalar)
    got = scalar_slot(fmt)
    assert got == want or (np.isinf(want) and got == want), (scalar, fmt, got, want)
c = cp.asarray(np.arange(4, dtype=np.complex64)) * 0.1  # complex slots: (real, imag)
parts = (ctypes.c_float * 2).from_address((ctypes.c_uint64 * 4).from_address(last[9])[1])
assert c.dtype == np.complex64 and list(parts) == [np.float32(0.1), 0.0], list(parts)
for x, scalar in [(cp.asarray(np.arange(9, dtype=np.int8)), 300),
                  (cp.asarray(np.arange(9, dtype=np.uint8)), -1),
                  (cp.asarray(np.arange(9, dtype=np.int64)), 2**63)]:
    try:
        x + scalar
    except OverflowError:
        pass
    else:
        raise AssertionError(f"{x.dtype} + {scalar} did not raise OverflowError")
buf = (a + b)._buf.device  # the launcher's inline allocation gives what the pool's malloc gives
ref = memory.get_pool().malloc(a.nbytes)
assert (type(buf), buf.nbytes, buf.stream, buf.stream_owner, buf._pool, buf._size, buf._home) == (
    type(ref), ref.nbytes, ref.stream, ref.stream_owner, ref._pool, ref._size, ref._home)
big = cp.empty(1 << 20, np.float32)
e = big + big
from cupynum._backends.cuda import elementwise as ew

assert last[1] == min(256, ew._grid_cap()) and params(4)[3] == 1 << 20  # 2^20 / (256 * 4)
s1 = cp.cuda.Stream()
with s1:
    assert runtime.nondefault_streams == 1
    e = a + b
    assert last[8] == s1.ptr and e._buf.device.stream == s1.ptr and e._buf.device.stream_owner is s1
    b4 = memory.get_pool().malloc(2500)
    assert b4.stream == s1.ptr and b4.stream_owner is s1
assert runtime.nondefault_streams == 0
e = a + b
assert last[8] == 0
launch = cp.add._fast[(a.dtype, b.dtype, 0)][1]
if runtime.LAUNCH in ("v2", "auto") and runtime.v2_launch() is not None:
    assert launch.__globals__["raw"] is runtime.v2_launch()  # (else 'bindings' stands in)
elif runtime.LAUNCH == "bindings":
    assert launch.__globals__["raw"] is runtime.bindings_launch()
out = cp.empty(1000, np.float32)
bare = launch.bare((a, b), (out,), 1000)
n0 = count.value
bare()
assert count.value == n0 + 1 and params(4) == [a._buf.device.ptr, b._buf.device.ptr,
                                              out._buf.device.ptr, 1000]
x = cp.asarray(np.arange(4000, dtype=np.float32))
y = x[::2] + x[1::2]  # the general path (a strided kernel)
assert params(3) == [x._buf.device.ptr, x._buf.device.ptr + 4, y._buf.device.ptr]
v = cp.asarray(np.arange(10, dtype=np.float32))
v[1:-1] = cp.asarray(np.full(10, 7, np.float32))[1:-1]  # a cuMemcpyDtoDAsync (memmove here)
assert v.get().tolist() == [0] + [7] * 8 + [9]
z = cp.zeros(10, np.int32)
assert np.array_equal(z.get(), np.zeros(10, np.int32))
raw = np.random.default_rng(0).integers(0, 255, (20 << 20) + 12345, dtype=np.uint8)
for h2d in memory._MODES:
    for d2h in memory._MODES:
        memory.H2D, memory.D2H = h2d, d2h
        g = cp.asarray(raw)
        assert np.array_equal(g.get(), raw), (h2d, d2h)
        sub = raw[: 2 * (10 << 20)].reshape(2, -1)[:, ::2]  # a non-contiguous host array
        assert np.array_equal(cp.asarray(sub).get(), sub), (h2d, d2h)
assert ctypes.c_uint64.in_dll(fake, "fake_registered").value > 0
for threads in (1, 3):
    st = memory._Staging(chunk=1 << 20, threads=threads, nbuf=3)
    buf = memory.alloc(raw.nbytes)
    st.htod(buf.ptr, raw, raw.nbytes, runtime.DEFAULT_STREAM)
    back = np.empty_like(raw)
    st.dtoh(back, buf.ptr, raw.nbytes, runtime.DEFAULT_STREAM)
    assert np.array_equal(back, raw)
    st.close()
pool = memory.get_pool()
b1 = pool.malloc(3000)
ptr = b1.ptr
del b1
b2 = pool.malloc(2500)  # same 4 KiB class on the same (default) stream: reused
assert b2.ptr == ptr and b2.nbytes == 2500 and b2._size == 4096 and b2.stream == 0
b3 = pool.malloc(np.int64(2500))
assert b3.nbytes == 2500 and type(b3.nbytes) is int
assert pool.malloc(0).ptr == 0
m1 = pool.malloc((3 << 20) + 5)  # a medium block: eight size classes per doubling
mptr, msize = m1.ptr, m1._size
assert msize == (3 << 20) + (1 << 18) and m1._home is not None
del m1
m2 = pool.malloc((3 << 20) + 100)  # the same class: the cached block, no driver call
assert m2.ptr == mptr and m2._size == msize
cache_max, big_step = tuning.MEMORY.cache_max, tuning.MEMORY.big_step
big = pool.malloc(cache_max + 1)  # a big block: classes big_step apart
bptr = big.ptr
assert big._home is not None and big._size == cache_max + big_step
del big
big2 = pool.malloc(cache_max + big_step)  # the same class: cached, reused
assert big2.ptr == bptr and big2.nbytes == cache_max + big_step
with tuning.overridden("MEMORY", big_step=4 << 20):  # the knob is read per allocation
    big3 = pool.malloc(cache_max + 1)
    assert big3._size == cache_max + (4 << 20), big3._size
# the statements of device element reads and writes: what reaches the driver per statement
calls = ctypes.c_uint64.in_dll(fake, "fake_calls")
A = cp.asarray(np.arange(100.0).reshape(10, 10))
pa = A._buf.device.ptr

def driver_calls(stmt):  # (driver calls, launches) of one run, after two
    env = {"A": A}
    for _ in range(2):
        exec(stmt, env)
    n0, c0 = calls.value, counters.launches()
    exec(stmt, env)
    return calls.value - n0, counters.launches() - c0

assert driver_calls("x = A[5, 5]") == (0, 0)  # a pending read: nothing yet
assert driver_calls("x = float(A[5, 5])") == (1, 0)  # one synchronous cuMemcpyDtoH
assert driver_calls("x = 1 if A[5, 5] > 0 else 0") == (1, 0)
assert driver_calls("A[5, 5] += A[5, 4]") == (1, 1)  # one launch, in place in A
assert params(4) == [pa + 55 * 8, pa + 54 * 8, pa + 55 * 8, 1], params(4)
assert driver_calls("A[5, 5] /= 9.0") == (1, 1)
assert driver_calls("x = A[5, 5] * 2.0") == (1, 1)  # the element read where it is
assert params(4)[0] == pa + 55 * 8, params(4)
assert driver_calls("A[5, 5] = A[5, 4]") == (1, 0)  # one element copy (cuMemcpyDtoDAsync)
assert driver_calls("A[5, 5] = 2.5") == (1, 1)  # one fill of one element
assert params(3)[1:] == [pa + 55 * 8, 1] and ctypes.c_double.from_address(
    (ctypes.c_uint64 * 3).from_address(last[9])[0]).value == 2.5, params(3)
assert driver_calls("A[5, 1:-1] += A[4, :-2]") == (1, 1)
assert params(4) == [pa + 51 * 8, pa + 40 * 8, pa + 51 * 8, 8], params(4)
x = A[2, 3]
A[2, 3] = 0.0  # a write to A copies the pending read first (a device copy), then writes
assert x._buf.pending is None and float(x) == 23.0
s2 = cp.cuda.Stream()
with s2:
    y = A[3, 3]  # made on another stream: copied at once, in that stream's order
    assert y._buf.pending is None
    n0 = calls.value
    assert float(y) == 33.0 and calls.value - n0 == 2  # an async copy and a stream sync
import threading
got = []
th = threading.Thread(target=lambda: got.append(float(A[4, 4])))  # a thread's first read
th.start()
th.join()
assert got == [44.0], got
# a thread's scratch block for small reads is pinned memory (cuMemHostAlloc: the fake's
# malloc, not a NumPy allocation); with the knob off, a NumPy array
block, addr = memory._scratch.block
assert block.base is not None and block.ctypes.data == addr and block.nbytes == memory.SMALL_READ
with tuning.overridden("MEMORY", small_read_pinned=False):
    got = []
    th = threading.Thread(target=lambda: got.append((float(A[4, 5]), memory._scratch.block)))
    th.start()
    th.join()
assert got[0][0] == 45.0 and got[0][1][0].base is None, got
print("ok", runtime.LAUNCH)
"""


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    cc = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and
               __import__("shutil").which(c)), None)
    if cc is None:
        pytest.skip("no C compiler")
    if _backends.name() == "cuda":
        pytest.skip("a real GPU is in use: the GPU suite covers the real driver")
    try:
        from cupynum._backends.cuda import compiler

        compiler.nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no NVRTC ({e})")
    d = tmp_path_factory.mktemp("fakecuda")
    (d / "fake.c").write_text(FAKE_LIBCUDA)
    res = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-w", str(d / "fake.c"), "-o",
                          str(d / "libcuda.so.1")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return d


@pytest.mark.parametrize("mode", ["bindings", "ctypes", "v2", "auto"])
def test_launch_paths_against_a_fake_driver(fake_driver, mode, tmp_path_factory):
    env = dict(os.environ, LD_LIBRARY_PATH=f"{fake_driver}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               CUPYNUM_BACKEND="cuda", CUPYNUM_LAUNCH=mode, CUPYNUM_PLACEMENT="device",
               PYTHONPATH=str(ROOT),
               CUPYNUM_FUSION="0",  # (each op's own launch is what this checks)
               CUPYNUM_CACHE_DIR=os.environ.get("CUPYNUM_CACHE_DIR") or
               str(tmp_path_factory.getbasetemp() / "kernel-cache"))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert p.stdout.split()[-2:] == ["ok", mode]


PLACEMENT_SCRIPT = r"""
import ctypes, numpy as np
import cupynum as cp
from cupynum.testing import place
fake = ctypes.CDLL("libcuda.so.1")
last = (ctypes.c_uint64 * 11).in_dll(fake, "fake_last")

def params(k):
    ptrs = (ctypes.c_uint64 * k).from_address(last[9])
    return [ctypes.c_uint64.from_address(p).value for p in ptrs]

n = 40000  # (an op this large costs less on the device: the ledger keeps it there)
h = np.arange(n, dtype=np.float32)
a = cp.asarray(h)
place(a, "host")
assert cp.placement(a) == "host" and a._buf.device is None
place(a, "device")  # one host-to-device copy (the fake's memcpy), the host copy dropped
assert cp.placement(a) == "device"
b = cp.asarray(np.ones(n, np.float32))
place(b, "host")
c = a + b  # the device hot path: b's device copy made by PTR_EXPR's on_device, and kept
assert cp.placement(b) == "both" and cp.placement(c) == "device"
assert params(4) == [a._buf.device.ptr, b._buf.device.ptr, c._buf.device.ptr, n], params(4)
d = a[::2] + b[1::2]  # the strided path reads b's kept copy through dptr
assert cp.placement(b) == "both"
place(a, "host")  # the whole buffer read back (the fake's memcpy)
assert cp.placement(a) == "host" and np.array_equal(a.get(), h)
place(a, "device")
x = a[7]  # an element of device data: copy_bytes reads the device copy
assert type(x) is cp.ndarray and float(x) == 7.0
print("ok placement")
"""


def test_placement_paths_against_a_fake_driver(fake_driver, tmp_path_factory):
    """The CUDA backend reads a host-only Buffer through ``on_device`` (dptr, PTR_EXPR,
    copy_bytes) and moves whole buffers both ways, under CUPYNUM_PLACEMENT=auto."""
    env = dict(os.environ, LD_LIBRARY_PATH=f"{fake_driver}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               CUPYNUM_BACKEND="cuda", CUPYNUM_PLACEMENT="auto", PYTHONPATH=str(ROOT),
               CUPYNUM_CACHE_DIR=os.environ.get("CUPYNUM_CACHE_DIR") or
               str(tmp_path_factory.getbasetemp() / "kernel-cache"))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(PLACEMENT_SCRIPT)], env=env,
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert p.stdout.split()[-2:] == ["ok", "placement"]
