"""The CUDA elementwise engine, run on the CPU.

CI has no GPU, yet the engine's layout logic (collapse, kernel choice, 32/64-bit indexing,
parameter packing, grid-stride loops, vector path and tail, 0-stride inputs, casts) is
where an array library breaks.  Here the generated kernel text itself is compiled with the
host C++ compiler under a tiny CUDA shim (``blockIdx`` & co. are globals, a launch runs
every thread of every block in turn), and "launched" through the engine's own parameter
blocks: the shim reads the ``void*[]`` exactly as ``cuLaunchKernel`` does.  Arrays are
NumPy memory described by the fields the backend reads.  What this cannot see: the driver
call itself, real concurrency and device memory; the GPU suite covers those.

The grid cap is set to 3 blocks so that grid-stride loops run several rounds.
"""
from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest

from cupynum._backends.base import ElementwiseOp
from cupynum._backends.cuda import backend as cb
from cupynum._backends.cuda import copy_fill
from cupynum._backends.cuda import elementwise as ew
from cupynum._backends.cuda import launch
from cupynum._backends.cuda import elementwise_source as es
from data import reseed
from shim import CXX, SHIM, HostArray, build

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)")

def host_wrappers(specs) -> list:
    """One ``host_<kernel>(void** params, grid, block)`` per kernel of ``specs``: unpacks
    the parameter block as the driver would and runs the grid's threads in turn."""
    parts = []
    for spec in dict.fromkeys(specs):
        name, params = ew.kernel_name(spec), es.kernel_params(spec)
        types = "".join(f"  typedef {t} T{i};\n" for i, (t, _) in enumerate(params))
        args = ", ".join(f"*(T{i}*)p[{i}]" for i in range(len(params)))
        parts.append(
            f'extern "C" void host_{name}(void** p, unsigned gx, unsigned bx) {{\n{types}'
            "  gridDim.x = gx; blockDim.x = bx;\n"
            "  for (unsigned b = 0; b < gx; ++b)\n"
            "    for (unsigned t = 0; t < bx; ++t) {\n"
            f"      blockIdx.x = b; threadIdx.x = t; {name}({args});\n    }}\n}}\n")
    return parts


def _host_program(specs) -> str:
    """The engine's program text plus the host wrappers of its kernels."""
    return "\n".join([SHIM, ew.program_source(specs), *host_wrappers(specs)])


def _build(specs) -> ctypes.CDLL:
    return build(_host_program(specs), "ew",
                 ["-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-shared",
                  "-fPIC"])


# --- cases: (name, function(run) -> [(got, want), ...]) -------------------------------------

def _op(name, loop):
    return ElementwiseOp(name, name, tuple(loop), getattr(np, name).nin)


ADD_F = _op("add", "fff")
rng = np.random.default_rng(7)


def _ufunc(op, *ins, out_dtypes=None, out_order="C"):
    """Run ``op`` through launch_elementwise; NumPy's answer computed the same way."""
    nout = len(op.loop) - op.nin
    shape = np.broadcast_shapes(*[x.shape for x in ins if isinstance(x, np.ndarray)])
    outs = [np.zeros(shape, np.dtype(c), order=out_order) for c in op.loop[op.nin:]]
    args = [HostArray(np.broadcast_to(x, shape)) if isinstance(x, np.ndarray) else x for x in ins]
    ew.launch_elementwise(op, args, [HostArray(o) for o in outs])
    sig = tuple(np.dtype(c) for c in op.loop)
    with np.errstate(all="ignore"):
        want = getattr(np, op.ufunc)(*ins, signature=sig, casting="unsafe")
    want = want if isinstance(want, tuple) else (want,)
    return list(zip(outs, want))


def _cast(src: np.ndarray, dst: np.ndarray):
    want = dst.copy()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.copyto(want, src, casting="unsafe")
    ew.run(ew.COPY, (HostArray(src),), (HostArray(dst),))
    return [(dst, want)]


def _copy(src: np.ndarray, dst: np.ndarray):
    copy_fill.bit_copy(HostArray(src), HostArray(dst))
    return [(dst, np.broadcast_to(src, dst.shape), "bits")]


def _fill(dst: np.ndarray, value):
    want = dst.copy()
    want[...] = value
    cb.CudaBackend.fill(None, HostArray(dst), value)  # (no memset: values of mixed bytes)
    return [(dst, want, "bits")]


def _layout(op, make, lengths=(None, None)):
    """``layout_launcher(op, views, outs)`` (the frontend's launcher per operand layout),
    built on broadcast views of ``make()``'s operands, then called with the unbroadcast
    operands (a broadcast view's pointer is its operand's) of two ``make()`` calls: the
    same layout in other memory takes the same launcher.  With ``lengths``, ``make(n)``'s
    one-dimensional operands for each length: one launcher serves them all (``any_length``)."""
    pairs, launch = [], None
    for n in lengths:
        ins = make() if n is None else make(n)
        shape = np.broadcast_shapes(*[x.shape for x in ins if isinstance(x, np.ndarray)])
        outs = [np.zeros(shape, np.dtype(c)) for c in op.loop[op.nin:]]
        if launch is None:
            views = [HostArray(np.broadcast_to(x, shape)) if isinstance(x, np.ndarray) else x
                     for x in ins]
            launch = ew.layout_launcher(op, views, [HostArray(o) for o in outs])
            assert n is None or launch.any_length
        launch([HostArray(x) if isinstance(x, np.ndarray) else x for x in ins],
               [HostArray(o) for o in outs])
        with np.errstate(all="ignore"):
            want = getattr(np, op.ufunc)(*ins, signature=tuple(np.dtype(c) for c in op.loop))
        pairs += list(zip(outs, want if isinstance(want, tuple) else (want,)))
    return pairs


def _line(op, make):
    """A loop over shrinking columns (lu_doolittle's ``A[i + 1:, i]``): one launcher."""
    return _layout(op, make, (700, 3, 2, 1000, 699))


_COLUMNS = rng.standard_normal((1001, 1001))


def _hot(op, *ins):
    """The hot path: contiguous_launcher(op, dtypes)(ins, outs, n)."""
    dts = tuple(x.dtype if isinstance(x, np.ndarray) else None for x in ins)
    n = next(x.size for x in ins if isinstance(x, np.ndarray))
    shape = next(x.shape for x in ins if isinstance(x, np.ndarray))
    outs = [np.zeros(shape, np.dtype(c)) for c in op.loop[op.nin:]]
    launch = ew.contiguous_launcher(op, dts)
    launch(tuple(HostArray(x) if isinstance(x, np.ndarray) else x for x in ins),
           tuple(HostArray(o) for o in outs), n)
    want = getattr(np, op.ufunc)(*ins, signature=tuple(np.dtype(c) for c in op.loop))
    return list(zip(outs, want if isinstance(want, tuple) else (want,)))


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _c16_misaligned(n):
    raw = rng.standard_normal(2 * n + 1)
    return raw[1:].view(np.complex128)  # 8-byte aligned only, as NumPy allows


CASES = {
    "contig-vector-and-tail": lambda: _ufunc(ADD_F, _f32(3001), _f32(3001)),
    "contig-misaligned": lambda: _ufunc(ADD_F, _f32(1001)[1:], _f32(1001)[1:]),
    "contig-scalar": lambda: _ufunc(ADD_F, _f32(777), np.float32(2.5)),
    "contig-0-stride-input": lambda: _ufunc(ADD_F, _f32(999), np.array(np.float32(-1.25))),
    "strided-transpose": lambda: _ufunc(ADD_F, _f32(37, 41).T, _f32(41, 37)),
    "strided-scalar": lambda: _ufunc(ADD_F, _f32(37, 41).T, np.float32(3.0)),
    "strided-reversed-and-step": lambda: _ufunc(ADD_F, _f32(40, 60)[::2, ::-3], _f32(20, 20)),
    "strided-broadcast-row-col": lambda: _ufunc(ADD_F, _f32(33, 1), _f32(1, 47)),
    "strided-f-order-out": lambda: _ufunc(ADD_F, np.asfortranarray(_f32(9, 11)), _f32(9, 11).T.T,
                                          out_order="F"),
    "strided-6d": lambda: _ufunc(ADD_F, _f32(2, 3, 1, 4, 5, 6)[:, ::-1, :, :, ::2, :],
                                 _f32(6, 3, 4, 1, 3, 2).T),
    "mixed-int32-into-float64": lambda: _ufunc(_op("add", "ddd"),
                                               rng.integers(-9, 9, 500, np.int32), _f32(500)),
    "half-loop": lambda: _ufunc(_op("multiply", "eee"),
                                rng.integers(-100, 100, (17, 19)).astype(np.int8),
                                _f32(17, 19).astype(np.float16)),
    "bool-and-compare": lambda: _ufunc(_op("less", "ff?"), _f32(5, 300), _f32(300)),
    "complex-misaligned": lambda: _ufunc(_op("add", "DDD"), _c16_misaligned(301),
                                         _c16_misaligned(301)),
    "complex64-strided": lambda: _ufunc(_op("add", "FFF"),
                                        (_f32(20, 30) + 1j * _f32(20, 30)).astype(np.complex64).T,
                                        np.complex64(1 - 2j)),
    "divmod-two-outputs": lambda: _ufunc(_op("divmod", "dddd"), _f32(600).astype(np.float64) * 7,
                                         _f32(600).astype(np.float64)),
    "divmod-strided": lambda: _ufunc(_op("divmod", "llll"), rng.integers(-50, 50, (30, 20)).T,
                                     rng.integers(1, 9, (20, 1))),
    "cast-f8-i4-strided": lambda: _cast(rng.standard_normal((40, 30))[::-1] * 1e3,
                                        np.zeros((40, 30), np.int32)),
    "cast-f4-f2": lambda: _cast(_f32(1000) * 1e3, np.zeros(1000, np.float16)),
    "cast-c8-f8": lambda: _cast((_f32(64) + 1j).astype(np.complex64), np.zeros(64, np.float64)),
    "cast-bool-f4-broadcast": lambda: _cast(np.broadcast_to(rng.random(50) < 0.5, (20, 50)),
                                            np.zeros((20, 50), np.float32)),
    "copy-c16-transpose": lambda: _copy(_c16_misaligned(600).reshape(20, 30).T,
                                        np.zeros((30, 20), np.complex128)),
    "copy-f2-reversed": lambda: _copy(_f32(999).astype(np.float16)[::-1],
                                      np.zeros(999, np.float16)),
    "copy-c8-odd-offset": lambda: _copy(_f32(2 * 77 + 1)[1:].view(np.complex64),
                                        np.zeros(77, np.complex64)),
    "fill-half-strided": lambda: _fill(np.zeros((30, 40), np.float16)[::3, 1::2], np.float16(1.5)),
    "fill-complex": lambda: _fill(np.zeros(333, np.complex128), np.complex128(2 - 3j)),
    "fill-c8-odd-offset": lambda: _fill(np.zeros(2 * 40 + 1, np.float32)[1:].view(np.complex64),
                                        np.complex64(-0.0 + 1j)),
    "fill-f8-nan-payload": lambda: _fill(np.zeros((7, 9))[:, ::2],
                                         np.uint64(0x7FF8DEADBEEF0001).view(np.float64)),
    "layout-strided": lambda: _layout(ADD_F, lambda: (_f32(37, 41).T, _f32(41, 37))),
    "layout-broadcast-0d": lambda: _layout(_op("multiply", "ddd"), lambda: (
        np.array(2.5), rng.standard_normal((30, 7))[:, ::2])),
    "layout-scalar-complex": lambda: _layout(_op("subtract", "FFF"), lambda: (
        np.complex64(1.5 - 2j), (_f32(20, 30) + 1j * _f32(20, 30)).astype(np.complex64)[::-1])),
    "layout-row-col": lambda: _layout(ADD_F, lambda: (_f32(33, 1), _f32(1, 47))),
    "line-columns": lambda: _line(_op("subtract", "ddd"), lambda n: (
        _COLUMNS[-n:, 3], _COLUMNS[-n:, 4])),
    "line-column-over-element": lambda: _line(_op("divide", "ddd"), lambda n: (
        _COLUMNS[-n:, 5], np.array(_COLUMNS[2, 2]))),
    "line-contig-scalar": lambda: _line(ADD_F, lambda n: (_f32(n), np.float32(0.5))),
    "line-reversed-int": lambda: _line(_op("multiply", "lll"), lambda n: (
        np.arange(2 * n)[::-2], np.arange(n))),
    "hot-path": lambda: _hot(ADD_F, _f32(2049), np.float32(0.5)),
    "hot-path-divmod": lambda: _hot(_op("divmod", "ffff"), _f32(100), _f32(100)),
    "hot-path-complex-scalar": lambda: _hot(_op("subtract", "FFF"), np.complex64(1.5 - 2j),
                                            (_f32(301) + 1j * _f32(301)).astype(np.complex64)),
    "hot-path-bool": lambda: _hot(_op("logical_xor", "???"), rng.random(1000) < 0.5,
                                  np.bool_(True)),
    "fill-bool-strided": lambda: _fill(np.zeros((9, 40), np.bool_)[:, ::3], np.bool_(True)),
}
CASES_64BIT = ("strided-transpose", "strided-6d", "divmod-strided", "cast-f8-i4-strided",
               "line-columns")


def _host_get_kernel(specs, lib):
    """An ``ew.get_kernel`` for host-built kernels: while ``lib[0]`` is None (the dry run) it
    only collects the specs into ``specs``; then it hands out ``lib[0]``'s wrappers."""
    funcs = {}

    def get_kernel(spec):
        if lib[0] is None:
            specs.append(spec)
            return lambda params, gx, bx: None  # the dry run only collects specs
        f = funcs.get(spec)
        if f is None:
            f = funcs[spec] = getattr(lib[0], f"host_{ew.kernel_name(spec)}")
            f.argtypes, f.restype = (ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint), None
        return f

    return get_kernel


@pytest.fixture(scope="module")
def engine():
    """Patch the engine's launch points to run host-compiled kernels; build them once."""
    mp = pytest.MonkeyPatch()
    specs, lib = [], [None]
    get_kernel = _host_get_kernel(specs, lib)

    def raw(func, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        assert (gy, gz, by, bz, shmem, extra, bx) == (1, 1, 1, 1, 0, 0, ew.BLOCK)
        assert 0 < gx <= 3
        func(params, gx, bx)
        return (0,)

    mp.setattr(ew, "get_kernel", get_kernel)
    mp.setattr(launch, "_drv", (raw, None, lambda: 0))
    mp.setattr(ew, "_cap", 3)
    mp.setattr(ew, "_prepared", {})
    mp.setattr(ew, "_plans", {})
    for name, case in CASES.items():  # dry run: which kernels do the cases need?
        case()
        if name in CASES_64BIT:
            with pytest.MonkeyPatch.context() as m:
                m.setattr(ew, "_I32", 64)
                m.setattr(ew, "_plans", {})
                case()
    lib[0] = _build(specs)
    mp.setattr(ew, "_prepared", {})
    mp.setattr(ew, "_plans", {})
    yield
    mp.undo()


def _check(pairs):
    """Values equal (NaN == NaN: the cases use bit-exact ops); copies and fills: bits."""
    for got, want, *bits in pairs:
        want = np.asarray(want)
        assert got.dtype == want.dtype
        if bits:
            u = np.dtype(f"u{min(got.dtype.itemsize, 8)}")
            got, want = np.ascontiguousarray(got).view(u), np.ascontiguousarray(want).view(u)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_engine_on_cpu(engine, name):
    reseed(rng, name)
    _check(CASES[name]())


@pytest.mark.parametrize("name", CASES_64BIT)
def test_engine_on_cpu_64bit_indexing(engine, name, monkeypatch):
    monkeypatch.setattr(ew, "_I32", 64)  # anything over 64 elements/bytes takes 64-bit math
    monkeypatch.setattr(ew, "_plans", {})
    _check(CASES[name]())


def test_layout_plans_are_reused(engine):
    """A repeated strided op takes its cached plan and only new pointers and scalars."""
    _check(CASES["strided-transpose"]())
    before = dict(ew._plans)
    _check(CASES["strided-transpose"]())  # new arrays, same layout
    _check(CASES["strided-scalar"]())  # a scalar instead of an array: another plan
    assert set(before) <= set(ew._plans) and len(ew._plans) <= len(before) + 1
