"""The CUDA gather/scatter, compaction, radix-sort, searchsorted and transpose kernels, run
on the CPU.

As in test_elementwise_host.py, the generated kernel text itself is compiled by the host
C++ compiler under a CUDA shim, but these kernels cooperate within a block
(``__syncthreads``, ``__match_any_sync``, shared memory), so the shim runs each block's
threads as fibers (ucontext): a barrier switches to the next thread, and a block's threads
pass each barrier together, as on the GPU.  Warp intrinsics are emulated with two block
barriers (the kernels call them uniformly).  The CUDA modules' device calls go through
``kernels_util.DEV``, replaced here by host memory; the frontend runs on the host backend
with its gather/scatter/flatnonzero/sort/searchsorted routed to the CUDA modules, so the
same NumPy comparisons check the kernels' logic.  Grids are capped small (one "SM") so
grid-stride loops and multi-block scans run several rounds.
"""
from __future__ import annotations

import ctypes
import importlib

import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum._backends.cuda import indexing as cix
from cupynum._backends.cuda import kernels_util as ku
from cupynum._backends.cuda import sorting as csort
from cupynum._backends.buffer import Buffer
from cupynum._backends.cuda import tuning
from cupynum._backends.host import HostBackend
from helpers import compare
from shim import CXX, FIBER_SHIM, alias_host_allocations, build, host_memory
pytestmark = [
    pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)"),
    pytest.mark.skipif(_backends.name() != "host", reason="runs the kernels on the CPU"),
]

# (items per thread, warp match, look-back window, late payload) of the tiny-tile tests
TINY_PASS_KNOBS = [(1, "ballot", 3, True), (2, "any", 1, False), (1, "ballot", 8, False)]


def _pass_knobs(knobs):
    items, match, lbw, late = knobs
    return tuning.overridden("SORT", onesweep_items={1: items, 2: items, 4: items, 8: items},
                             onesweep_match=match, onesweep_lookback=lbw,
                             onesweep_late_payload=late)


# knobs of the 'vec' histogram kernel checked against the former (scalar) one
HIST_VARIANTS = [dict(hist_spread="warp", hist_copies=8), dict(hist_runs=False, hist_vecs=1),
                 dict(hist_copies=1, hist_vecs=2), dict(hist_impl="scalar")]


def _hist_knobs(knobs):
    return tuning.overridden("SORT", **knobs)


def _all_kernels():
    ks = list(cix.all_kernels())
    for kind, sizes in (("b", (1,)), ("u", (1, 2, 4, 8)), ("i", (1, 2, 4, 8)), ("f", (2, 4, 8))):
        for w in sizes:
            ks += [csort.keys_kernel(kind, w, e) for e in (False, True)]
    ks += [csort.complex_keys_kernel(w) for w in (4, 8)]
    ks += [csort.rx_hist_kernel(w) for w in (0, 1, 2, 4, 8)] + [csort.rx_plan_kernel()]
    ks += [csort.rx_hist_kernel_scalar(w) for w in (0, 1, 2, 4, 8)]
    for knobs in HIST_VARIANTS:
        with _hist_knobs(knobs):
            ks += [csort.rx_hist_kernel(w) for w in (0, 1, 2, 4, 8)]
    ks += [csort.rx_pass_kernel(w, pk, sb) for w in (1, 2, 4, 8) for pk in ("n", "i4", "i8", "v")
           for sb in (4, 8)]
    ks += [csort.rx_pass_kernel(0, pk, sb) for pk in ("i4", "i8") for sb in (4, 8)]
    for knobs in TINY_PASS_KNOBS:  # tiny tiles: look-back windows span many tiles
        with _pass_knobs(knobs):
            ks += [csort.rx_pass_kernel(w, pk, 4) for w in (4, 8) for pk in ("n", "i4", "v")]
            ks += [csort.rx_pass_kernel(0, "i4", 4)]
    ks += [csort.mod_kernel()]
    ks += [csort.searchsorted_kernel(w) for w in (1, 2, 4, 8)]
    return ks


def _build():
    ks = list({k.name: k for k in _all_kernels()}.values())
    parts = [FIBER_SHIM, ku.program(ks)]
    for k in ks:
        types = "".join(f"  typedef {t} T{i};\n" for i, (t, _) in enumerate(k.params))
        args = ", ".join(f"*(T{i}*)p[{i}]" for i in range(len(k.params)))
        parts.append(
            f'extern "C" void host_{k.name}(void** p, unsigned gx, unsigned gy, unsigned gz, '
            f"unsigned bx, unsigned by, unsigned bz) {{\n{types}"
            f"  cpn_run([](void** p) {{\n{types}    {k.name}({args}); }}, p, gx, gy, gz, bx, by, bz);\n}}\n")
    return build("\n".join(parts), "ix", ["-std=c++17", "-O1", "-w", "-shared", "-fPIC"])


def _dim3(t):
    if isinstance(t, int):
        return (t, 1, 1)
    t = tuple(t) + (1, 1)
    return t[:3]


class CpuDevice:
    """kernels_util.DEV on the CPU: host memory, kernels from the shim library."""

    def __init__(self, lib):
        self.lib = lib
        self.keep = []
        self.launches = []

    def launch(self, kernel, grid, block, values, shmem=0):
        from cupynum._backends.cuda.runtime import ParamBlock

        pb = ParamBlock([dt for _, dt in kernel.params])
        pb.set_values(values)
        f = getattr(self.lib, f"host_{kernel.name}")
        f.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6
        f.restype = None
        gx, gy, gz = _dim3(grid)
        bx, by, bz = _dim3(block)
        self.launches.append(kernel.name)
        f(pb.address, gx, gy, gz, bx, by, bz)

    def alloc(self, nbytes):
        buf = host_memory(nbytes)
        self.keep.append(buf)
        return buf

    def dtoh(self, host, ptr):
        ctypes.memmove(host.ctypes.data, ptr, host.nbytes)

    def htod(self, ptr, host):
        host = np.ascontiguousarray(host)
        ctypes.memmove(ptr, host.ctypes.data, host.nbytes)

    def dtod(self, dst, src, nbytes):
        ctypes.memmove(dst, src, nbytes)

    def memset(self, ptr, value, nbytes):
        ctypes.memset(ptr, value, nbytes)

    def sm_count(self):
        return 1

    def sync(self):  # (the kernels ran to completion inside launch)
        pass

    def idle(self):
        return True

    def mapped_host(self, count):
        """Host memory the kernels write directly, as the GPU's mapped pinned memory."""
        buf = np.zeros(count, np.int64)
        self.keep.append(buf)
        return buf, buf.ctypes.data


@pytest.fixture
def tune():
    """``tuning.override`` for one test: the defaults come back after it."""
    yield tuning.override
    tuning.reset()


@pytest.fixture(scope="module")
def lib():
    return _build()


def _in_buffer(res):
    """(raw, count) from the kernels as the CUDA backend returns it: (Buffer, count)."""
    return None if res is None else (Buffer(res[0], res[0]), res[1])


@pytest.fixture
def kernels(lib, monkeypatch, request):
    """The host backend with its indexing/sort primitives running the CUDA kernel text."""
    dev = CpuDevice(lib)
    for mod in (ku, cix, csort):
        monkeypatch.setattr(mod, "DEV", dev)
    # our radix sort's kernels (CUB's, the GPU default, have no CPU build here)
    old = tuning.override("SORT", engine="own")
    request.addfinalizer(lambda: tuning.restore("SORT", old))
    b = _backends.get()
    monkeypatch.setattr(b, "gather", cix.gather, raising=False)
    monkeypatch.setattr(b, "gather_flat", cix.gather_flat, raising=False)
    monkeypatch.setattr(b, "scatter", cix.scatter, raising=False)
    # (host data is indexed by NumPy before any backend is asked: not here)
    monkeypatch.setattr(importlib.import_module("cupynum._api.indexing"), "host_getitem",
                        lambda a, key: None)
    # arrays' memory is both sides' at once: host NumPy code and the kernels read it
    alias_host_allocations(monkeypatch)
    monkeypatch.setattr(b, "flatnonzero", lambda m: _in_buffer(cix.flatnonzero(m)),
                        raising=False)
    monkeypatch.setattr(b, "mask_select", lambda a, m: _in_buffer(cix.mask_select(a, m)),
                        raising=False)
    monkeypatch.setattr(b, "sort", csort.sort, raising=False)
    monkeypatch.setattr(b, "searchsorted", csort.searchsorted, raising=False)
    return dev


rng = np.random.default_rng(5)


# --- gather / scatter ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.float32, np.int64,
                                   np.complex64, np.complex128])
def test_gather_dtypes(kernels, dtype):
    a = (rng.standard_normal((7, 9, 5)) * 10).astype(dtype)
    compare(lambda xp, a: a[[0, -1, 3, 3]], a)
    compare(lambda xp, a: a[:, xp.asarray([[1, 2], [8, -9]]), 1:4], a)
    compare(lambda xp, a: a[[1, 2], :, [0, 4]], a)
    compare(lambda xp, a: a[..., [4, 0]][::-1], a)
    compare(lambda xp, a: a[a.real > 0] if a.dtype.kind != "b" else a[a], a)
    assert any(n.startswith("cpn_ix_gather") for n in kernels.launches)


def test_gather_strided_and_broadcast(kernels):
    a = rng.standard_normal((40, 30))[::-2, 1::3]
    compare(lambda xp, a: a[xp.asarray([[3], [1]]), xp.asarray([0, 2, -1])], a)
    compare(lambda xp, a: a.T[[5, 1, 2]], a)
    compare(lambda xp, a: xp.take(a, xp.asarray([2, 0, 1]), axis=1), a)
    c = (rng.standard_normal(301) + 1j).astype(np.complex128)[1:]  # misaligned: 8-byte units
    compare(lambda xp, c: c[xp.asarray([5, 0, 299])], c)


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.complex128])
def test_gather_flat(kernels, dtype):
    """``a[idx]`` of a 1-D array by a C-contiguous int64 device array: the streaming kernel
    without the layout analysis (``gather_flat``), negative indices wrapped, any idx shape,
    strided sources, and NumPy's IndexError for an index out of bounds."""
    h = (rng.standard_normal(301) * 50).astype(dtype)
    ix = np.array([[5, -1, 0], [299, -301, 7]])
    kernels.launches.clear()
    compare(lambda xp, h, ix: h[ix], h, ix)
    compare(lambda xp, h, ix: h[::-3][ix % 100], h, ix)
    compare(lambda xp, h, ix: h[ix[:, :0]], h, ix)
    assert any(n.startswith("cpn_gather1") for n in kernels.launches)
    assert not any(n.startswith("cpn_ix_gather") for n in kernels.launches)
    d = cp.asarray(h)
    for bad, value in (([0, 301, 3], 301), ([-302], -302)):
        compare(lambda xp, h, i: h[i], h, np.array(bad))
        with pytest.raises(IndexError, match=f"index {value} is out of bounds for axis 0 "
                                             "with size 301"):
            d[cp.asarray(bad)]
    compare(lambda xp, h, ix: h[ix], h, ix)  # the flag was reset by the failed call


def test_gather_out_of_bounds(kernels):
    a = np.arange(20.0).reshape(4, 5)
    compare(lambda xp, a: a[xp.asarray([0, 4])], a)
    compare(lambda xp, a: a[:, xp.asarray([-6])], a)
    compare(lambda xp, a: a[xp.asarray([1]), xp.asarray([7])], a)
    compare(lambda xp, a: xp.take(a, xp.asarray([20])), a)


def test_scatter(kernels):
    a = np.zeros((6, 7), np.float32)

    def f(xp, a):
        a[xp.asarray([1, -1]), 2:5] = xp.asarray([1.5, 2.5, 3.5], dtype=xp.float32)
        a[:, xp.asarray([0])] = 7
        return a

    compare(f, a)

    def oob(xp, a):
        a[xp.asarray([0, 9])] = 1
        return a

    compare(oob, a)
    d = cp.zeros(6)
    with pytest.raises(IndexError):
        d[cp.asarray([0, 6])] = 1.0
    assert not d.get().any()  # checked before writing


def test_scatter_repeated_indices(kernels):
    d = cp.zeros(5, np.complex128)
    vals = cp.asarray(np.arange(1, 13) * (1 + 1j))
    d[cp.asarray([2] * 12)] = vals
    assert d.get()[2] in vals.get()
    assert (d.get()[[0, 1, 3, 4]] == 0).all()


# --- compaction ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 255, 4096, 4097, 20000])
def test_nonzero(kernels, n):
    m = rng.random(n) < 0.3
    compare(lambda xp, m: xp.flatnonzero(m), m)
    compare(lambda xp, m: xp.nonzero(m.reshape(-1, 1) if m.size else m), m)


def test_nonzero_nd(kernels):
    a = (rng.random((13, 17, 3)) < 0.5) * rng.integers(1, 5, (13, 17, 3))
    compare(lambda xp, a: xp.nonzero(a), a)
    compare(lambda xp, a: xp.argwhere(a), a)
    compare(lambda xp, a: a[a > 2], a)


# --- sort ------------------------------------------------------------------------------------
SORT_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64, np.float16, np.float32, np.float64]


def _sample(n, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x = (rng.standard_normal(n) * 100).astype(dt)
    x[rng.random(n) < 0.05] = np.nan
    x[rng.random(n) < 0.05] = np.inf
    x[rng.random(n) < 0.05] = -np.inf
    x[rng.random(n) < 0.05] = 0.0
    x[rng.random(n) < 0.05] = -0.0
    return x


@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_sort_argsort(kernels, dtype):
    x = _sample(5000, dtype)
    compare(lambda xp, x: xp.argsort(x, kind="stable"), x)
    compare(lambda xp, x: xp.sort(x, kind="stable"), x)
    got = cp.sort(cp.asarray(x)).get()  # the unstable sort: values equal (-0.0 == 0.0)
    exp = np.sort(x)
    assert np.array_equal(got, exp, equal_nan=x.dtype.kind == "f")
    assert any(n.startswith("cpn_rx_pass_%d_n_" % x.dtype.itemsize) for n in kernels.launches)
    assert any(n.startswith("cpn_rx_pass_%d_i4_" % x.dtype.itemsize) for n in kernels.launches)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64])
def test_sort_rows(kernels, dtype):
    x = _sample(3 * 700, np.float32).reshape(3, 700)
    with np.errstate(all="ignore"):
        x = (x + 1j * _sample(x.size, np.float32).reshape(x.shape)).astype(dtype) \
            if np.dtype(dtype).kind == "c" else np.nan_to_num(x).astype(dtype)
    compare(lambda xp, x: xp.argsort(x, axis=1, kind="stable"), x)
    compare(lambda xp, x: xp.argsort(x, axis=0, kind="stable"), x)
    compare(lambda xp, x: xp.sort(x, axis=0, kind="stable"), x)
    assert any(n.startswith("cpn_rx_pass_0_") for n in kernels.launches)  # the row passes


@pytest.mark.parametrize("knobs", TINY_PASS_KNOBS)
def test_sort_tiny_tiles(kernels, knobs):
    """Tiles of 256-512 elements: many tiles a pass, a partial last one, and the look-back
    window reading past tile 0 (variants: ballot/any match, window, late payload)."""
    r3 = np.random.default_rng(23)  # its own stream: the other tests' draws stay as they were
    f = (r3.standard_normal(3001) * 100).astype(np.float32)
    for v in (np.nan, np.inf, -np.inf, 0.0, -0.0):
        f[r3.random(f.size) < 0.05] = v
    with _pass_knobs(knobs):
        for x in (f, r3.integers(-2**63, 2**63 - 1, 2333, dtype=np.int64)):
            compare(lambda xp, x: xp.argsort(x, kind="stable"), x)
            compare(lambda xp, x: xp.sort(x, kind="stable"), x)
            got = cp.sort(cp.asarray(x)).get()
            assert np.array_equal(got, np.sort(x), equal_nan=x.dtype.kind == "f")
        x = r3.integers(-5, 5, (3, 900)).astype(np.int32)
        compare(lambda xp, x: xp.argsort(x, axis=0, kind="stable"), x)
        items, match, lbw, late = knobs
        tag = "_%d_b" % items
        assert any(k.startswith("cpn_rx_pass_4_") and tag in k and ("_%s_l%d" % (match, lbw)) in k
                   and k.endswith("_late") == late for k in kernels.launches if "_i4_" in k)


def _hist(kernels, k, x, off, kmode, npass, nrow=0, blocks=None):
    """ghist of kernel k over x[off:] (w > 0) or n = x.size - off row keys (w == 0)."""
    n = x.size - off
    buf = kernels.alloc(max(x.nbytes, 8))
    kernels.htod(buf.ptr, x)
    hist = kernels.alloc(npass * 256 * 8)
    kernels.memset(hist.ptr, 0, npass * 256 * 8)
    if blocks is None:
        blocks = max(1, min(-(-n // csort.hist_per_block_round(x.itemsize if nrow == 0 else 0)), 3))
    kernels.launch(k, blocks, csort.RB, [buf.ptr + off * x.itemsize, n, kmode, nrow, npass,
                                         hist.ptr])
    out = np.empty(npass * 256, np.uint64)
    kernels.dtoh(out, hist.ptr)
    return out.reshape(npass, 256)


@pytest.mark.parametrize("knobs", [{}] + HIST_VARIANTS[:-1])
def test_hist_kernel_matches_scalar(kernels, knobs):
    """The 'vec' histogram kernel counts what the former one does: every width and key
    mode, starts off the 16-byte boundary, partial last vectors, grid-stride rounds, runs
    of equal digits (constant bytes), and the row digits of w == 0."""
    r4 = np.random.default_rng(41)
    f = (r4.standard_normal(9001) * 100).astype(np.float64)
    for v in (np.nan, np.inf, -np.inf, 0.0, -0.0):
        f[r4.random(f.size) < 0.05] = v
    f[r4.random(f.size) < 0.03] = -np.nan
    cases = [(f.astype(np.float16), (2, 3)), (f.astype(np.float32), (2, 3)), (f, (2, 3)),
             (r4.integers(-2**63, 2**63 - 1, 7001, dtype=np.int64), (0, 1)),
             (r4.integers(0, 1000, 12345).astype(np.int32), (0, 1)),
             (r4.integers(-5, 5, 8888).astype(np.int16), (1,)),
             (r4.integers(0, 256, 20011).astype(np.uint8), (0, 1))]
    with _hist_knobs(knobs):
        for x, modes in cases:
            w = x.itemsize
            k = csort.rx_hist_kernel(w)
            for kmode in modes:
                for off, blocks in ((0, None), (1, 2), (3, 1), (x.size - 5, None), (7, 5)):
                    got = _hist(kernels, k, x, off, kmode, w, blocks=blocks)
                    exp = _hist(kernels, csort.rx_hist_kernel_scalar(w), x, off, kmode, w)
                    assert np.array_equal(got, exp), (x.dtype, kmode, off, blocks)
                    assert int(got[0].sum()) == x.size - off
        for n, nrow, npass in ((10000, 37, 2), (5003, 1, 2), (777, 700, 1)):
            x = np.zeros(n, np.uint8)
            got = _hist(kernels, csort.rx_hist_kernel(0), x, 0, 0, npass, nrow, blocks=2)
            rows = np.arange(n) // nrow
            for p in range(npass):
                assert np.array_equal(got[p], np.bincount((rows >> (8 * p)) & 255,
                                                          minlength=256)), (n, nrow, p)
        # a sort through it: skipped constant passes, ties kept stable
        x = r4.integers(0, 1 << 12, 5000).astype(np.int64)
        compare(lambda xp, x: xp.argsort(x, kind="stable"), x)
        compare(lambda xp, x: xp.sort(x[3:]), x)
        assert any(n.startswith("cpn_rx_hist_8_v") or "scalar" in str(knobs)
                   for n in kernels.launches)


def test_sort_complex_nan_order(kernels):
    v = np.array([1 + 2j, np.nan + 1j, 1 + np.nan * 1j, complex(np.nan, np.nan), 0 + 5j,
                  -1 - 1j, 1 + 1j, np.nan - 3j, -2 + np.nan * 1j] * 3, np.complex128)
    compare(lambda xp, v: xp.argsort(v, kind="stable"), v)
    compare(lambda xp, v: xp.sort(v, kind="stable"), v)


def test_searchsorted(kernels):
    a = np.sort(_sample(3000, np.float32))
    v = _sample(777, np.float32)
    for side in ("left", "right"):
        compare(lambda xp, a, v: xp.searchsorted(a, v, side=side), a, v)
    ai = np.sort(rng.integers(-50, 50, 200))
    compare(lambda xp, a: xp.searchsorted(a, xp.asarray([-100, 0, 7, 49, 100])), ai)


def test_unique(kernels):
    x = rng.integers(0, 50, 3000).astype(np.int16)
    compare(lambda xp, x: xp.unique(x, return_index=True, return_inverse=True,
                                    return_counts=True), x)
    f = _sample(2000, np.float64)
    # which of -0.0 / 0.0 represents the zeros is up to NumPy's unstable sort: + 0.0 makes
    # both +0.0, so only the values are compared
    compare(lambda xp, f: xp.unique(f) + 0.0, f)


# --- transpose copy --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,shape", [(np.float32, (100, 70)), (np.int8, (33, 65)),
                                         (np.float64, (64, 64)), (np.int16, (3, 40, 50))])
def test_transpose_copy(kernels, dtype, shape):
    h = (rng.standard_normal(shape) * 50).astype(dtype)
    src = cp.asarray(h)
    t = src.T if len(shape) == 2 else src.transpose(0, 2, 1)
    out = cp.empty(t.shape, dtype)
    assert cix.try_transpose_copy(t, out)
    want = h.T if len(shape) == 2 else h.transpose(0, 2, 1)
    assert np.array_equal(out.get(), want)


@pytest.mark.parametrize("dtype,shape", [(np.float64, (70, 50)), (np.float32, (3, 40, 33))])
def test_transpose_copy_into_column_major(kernels, dtype, shape):
    """A C-ordered source into column-major matrices (what LAPACK-style routines want:
    ``blas.colmajor_copy``): the destination's unit-stride axis is not the last one."""
    from cupynum._backends.cuda.view import DeviceView

    h = (rng.standard_normal(shape) * 50).astype(dtype)
    b, m, n = (1,) + shape if len(shape) == 2 else shape
    s = np.dtype(dtype).itemsize
    flat = cp.empty(b * m * n, dtype)
    out = DeviceView(flat._buf, (b, m, n), dtype, strides=(m * n * s, s, m * s))
    assert cix.try_transpose_copy(cp.asarray(h.reshape(b, m, n)), out)
    got = flat.get().reshape(b, n, m).transpose(0, 2, 1)  # each matrix column by column
    assert np.array_equal(got, h.reshape(b, m, n))


def test_transpose_copy_declines_plain_layouts(kernels):
    a = cp.asarray(np.zeros((40, 40), np.float32))
    assert not cix.try_transpose_copy(a, cp.empty((40, 40), np.float32))
    assert not cix.try_transpose_copy(a[:, ::2], cp.empty((40, 20), np.float32))


# --- streaming gather, mask compaction, transpose variants (the knobs the probe times) --------
rng2 = np.random.default_rng(11)  # its own stream: the draws of the tests above stay as they were


@pytest.mark.parametrize("ilp,cap,o32", [(1, 0, False), (4, 0, True), (2, 1, True), (8, 2, False)])
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float32, np.float64, np.complex128])
def test_gather1_variants(kernels, tune, ilp, cap, o32, dtype):
    tune("GATHER", ilp=ilp, blocks_per_sm=cap, o32=o32)
    a = (rng2.standard_normal(3001) * 100).astype(dtype)
    ix = rng2.integers(-3001, 3001, 2 * 1024 + 37)
    compare(lambda xp, a: a[xp.asarray(ix)], a)        # device indices: checked
    compare(lambda xp, a: a[ix], a)                     # host indices: wrapped on the host
    compare(lambda xp, a: a[::-3][xp.asarray(ix // 3)], a)  # negative data stride
    bad = ix.copy()
    bad[1500] = 3001
    compare(lambda xp, a: a[xp.asarray(bad)], a)        # IndexError
    bad[1500] = -3002
    compare(lambda xp, a: a[xp.asarray(bad)], a)
    compare(lambda xp, a: a[xp.asarray(ix)], a)         # the flag was cleared
    assert any(n.startswith(f"cpn_gather1_u{np.dtype(dtype).itemsize}_c_i{ilp}")
               for n in kernels.launches)


@pytest.mark.parametrize("block", [128, 512, 1024])
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64, np.complex128])
def test_gather1_block_sizes(kernels, tune, block, dtype):
    tune("GATHER", block=block)
    a = (rng2.standard_normal(1001) * 100).astype(dtype)
    ix = rng2.integers(-1001, 1001, 3 * 1024 + 5)
    ix[:4] = [0, 1000, -1, -1001]  # the edges of the valid range
    compare(lambda xp, a: a[xp.asarray(ix)], a)
    compare(lambda xp, a: a[::-2][xp.asarray(ix // 2)], a)
    # out of range, including values whose low 32 bits alone would be valid
    for bad in (1001, -1002, 2**32, 2**32 + 5, -2**32 + 5, -2**32, 2**31, -2**31, 2**62):
        b = ix.copy()
        b[2000] = bad
        compare(lambda xp, a: a[xp.asarray(b)], a)
    compare(lambda xp, a: a[xp.asarray(ix)], a)  # the flag was cleared
    name = cix.gather1_kernel(np.dtype(dtype).itemsize, True, tuning.GATHER.ilp, False,
                              block=block).name.replace("_o32", "")
    assert any(n.replace("_o32", "") == name for n in kernels.launches)


@pytest.mark.parametrize("vec,rounds", [(4, 1), (8, 2), (16, 4), (16, 1)])
@pytest.mark.parametrize("n", [1, 31, 1000, 4096, 9001])
def test_mask_compaction_variants(kernels, tune, vec, rounds, n):
    tune("COMPACTION", vec=vec, rounds=rounds)
    for p in (0.0, 0.03, 0.5, 1.0):
        m = rng2.random(n) < p
        compare(lambda xp, m: xp.flatnonzero(m), m)
    m = rng2.random(n) < 0.4
    for dtype in (np.bool_, np.int8, np.float16, np.float32, np.int64, np.complex128):
        a = (rng2.standard_normal(n) * 100).astype(dtype)
        compare(lambda xp, a, m: a[m], a, m)
    a = rng2.standard_normal((n, 3))
    compare(lambda xp, a: a[a > 0.3], a)                      # 2-D, full mask
    compare(lambda xp, a: a[::2][a[::2] > 0], a)              # strided source: nonzero + gather
    mm = rng2.random(n + 5) < 0.5
    compare(lambda xp, a, mm: a[mm[5:]], a[:, 0].copy(), mm)  # unaligned mask
    raw = rng2.integers(0, 256, n, dtype=np.uint8)             # bool bytes other than 0/1
    dm = cp.asarray(raw).view(np.bool_)
    assert np.array_equal(cp.flatnonzero(dm).get(), np.flatnonzero(raw))
    assert n < 1000 or "cpn_mc_write_u4_v%d_r%d" % (vec, rounds) in kernels.launches


TRANSPOSE_CONFIGS = [(32, 8, 1, False), (32, 8, 2, True), (32, 8, 4, False), (64, 8, 1, True),
                     (64, 16, 4, False), (32, 4, 8, False), (64, 4, 16, True), (32, 16, 2, False)]


@pytest.mark.parametrize("config", TRANSPOSE_CONFIGS)
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
def test_transpose_variants(kernels, config, dtype):
    tile, rows, vec, diag = config
    if vec * np.dtype(dtype).itemsize > 16:
        pytest.skip("vector wider than 16 bytes")
    for shape in [(67, 45), (128, 96), (96, 64), (2, 36, 100), (3, 64, 32)]:
        h = (rng2.standard_normal(shape) * 50).astype(dtype)
        src = cp.asarray(h)
        t = src.T if len(shape) == 2 else src.transpose(0, 2, 1)
        out = cp.empty(t.shape, dtype)
        assert cix.try_transpose_copy(t, out, config)
        want = h.T if len(shape) == 2 else h.transpose(0, 2, 1)
        assert np.array_equal(out.get(), want), (shape, config)
    # a strided, misaligned source: vec falls back to 1
    h = (rng2.standard_normal((70, 130)) * 50).astype(dtype)
    src = cp.asarray(h)[1:, 1:]
    out = cp.empty((129, 69), dtype)
    assert cix.try_transpose_copy(src.T, out, config)
    assert np.array_equal(out.get(), h[1:, 1:].T)


@pytest.mark.parametrize("tail_div", [0, 2, 3, 64])  # (0: no tail)
@pytest.mark.parametrize("variant", [{}, dict(block=128)], ids=["default", "block128"])
def test_gather_early_signal(kernels, tune, tail_div, variant):
    """a[idx] of a large array launches the early-signal kernel (here from 2 blocks): the
    head blocks (all of them without a tail) check their indices and the tail's, the last
    one writes the call's seq to the flag's host copy (what ``_Flag.wait`` spins on), and a
    bad index anywhere, the tail included, is there before it; the tail blocks skip it
    without raising the flag."""
    tune("GATHER", signal_min_blocks=2, signal_tail_div=tail_div, **variant)
    chunk = tuning.GATHER.block * tuning.GATHER.signal_ilp  # (a block's indices)
    flag = cix._FLAG
    for total in (chunk + 1, 3 * chunk + 5, 7 * chunk):
        a = np.arange(500, dtype=np.float32)
        ix = rng2.integers(-500, 500, total)
        d, i = cp.asarray(a), cp.asarray(ix)
        assert np.array_equal(d[i].get(), a[ix])
        assert kernels.launches[-1].endswith("_e")
        assert flag.host_copy[3] == flag.seq and not flag.host_copy[0]
        for pos in (0, chunk - 1, total // 2, total - chunk, total - 1):  # head and tail
            bad = ix.copy()
            bad[pos] = 500 if pos % 2 else -501
            with pytest.raises(IndexError, match=f"index {bad[pos]} is out of bounds"):
                d[cp.asarray(bad)]
            assert flag.host_copy[3] == flag.seq and not flag.host_copy[:3].any()  # cleared
        assert np.array_equal(d[i].get(), a[ix])  # and the next call is right again
    tune("GATHER", signal_min_blocks=8)  # below it: the plain kernel
    d[cp.asarray(rng2.integers(0, 500, 3 * chunk))]
    assert not kernels.launches[-1].endswith("_e")
