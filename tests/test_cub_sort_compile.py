"""CUB's onesweep radix sort kernels (cupynum/_backends/cuda/cub_sort.py) compile through
NVRTC without a GPU, and the launch policy mirrors CUB 3.5's SM90 tuning.  Skipped when
NVRTC or the CCCL headers (with CUB's radix sort agents) are missing.  Values are checked
against NumPy on a GPU by benchmarks/probes/cub_sort_probe.py.

``CUPYNUM_TEST_CCCL_INCLUDE``: the CCCL include folder (holding ``cub/``) of another release,
e.g. ``<unzipped nvidia_cuda_cccl-13.0.* wheel>/nvidia/cu13/include/cccl`` (CUB 3.0.1, the
oldest our pyproject allows): the kernels are compiled against it too."""
from __future__ import annotations

import os

import pytest

from cupynum._backends.cuda import cub_sort
from cupynum._backends.cuda.kernels_util import program


def _cub_headers() -> bool:
    try:
        from cupynum._backends.cuda import compiler

        compiler.nvrtc_version()
        return any(os.path.exists(os.path.join(p, "cub", "agent", "agent_radix_sort_onesweep.cuh"))
                   for p, fp in compiler.include_dirs() if fp.startswith("cccl="))
    except Exception:
        return False


needs_cub = pytest.mark.skipif(not _cub_headers(), reason="NVRTC or CCCL headers missing")


_KINDS = pytest.mark.parametrize(
    "w,mode,vw", [(4, 2, 0), (4, 3, 4), (8, 3, 8), (2, 1, 4), (1, 0, 0)],
    ids=["f32-values", "f32-argsort", "f64-stable", "i16-argsort", "u8-values"])
_OTHER_CCCL = os.environ.get("CUPYNUM_TEST_CCCL_INCLUDE", "").strip()


def _check_cubin(cubin, ks):
    assert cubin[:4] == b"\x7fELF"
    for k in ks:  # extern "C": the names are not mangled
        assert k.name.encode() + b"\0" in cubin, k.name


@needs_cub
@_KINDS
def test_cub_program_compiles(w, mode, vw):
    from cupynum._backends.cuda import compiler

    ks = cub_sort.kernels_for(w, mode, vw)
    _check_cubin(compiler.compile_cubin(program(ks), name="cupynum_cub.cu").cubin, ks)


@pytest.fixture
def other_cccl(monkeypatch):
    """The compiler module, its CCCL headers replaced by ``CUPYNUM_TEST_CCCL_INCLUDE``'s."""
    from cupynum._backends.cuda import compiler

    monkeypatch.setenv("CUPYNUM_CCCL_INCLUDE", _OTHER_CCCL)
    monkeypatch.setattr(compiler, "_include_info", None)  # look the include dirs up again
    return compiler


@needs_cub
@pytest.mark.skipif(not _OTHER_CCCL, reason="CUPYNUM_TEST_CCCL_INCLUDE not set")
@_KINDS
def test_cub_program_compiles_with_other_cccl(other_cccl, tmp_path, w, mode, vw):
    # CUB 3.0 and 3.5 differ in the agents' policy templates and NumericTraits' arity
    cccl = [fp for p, fp in other_cccl.include_dirs() if p == _OTHER_CCCL]
    assert cccl and cccl[0] != "cccl=?", "CUPYNUM_TEST_CCCL_INCLUDE has no CCCL version.h"
    ks = cub_sort.kernels_for(w, mode, vw)
    cache = other_cccl.KernelCache(cache_dir=tmp_path)
    _check_cubin(cache.compile(program(ks), name="cupynum_cub.cu").cubin, ks)


def test_cccl_include_override(monkeypatch, tmp_path):
    from cupynum._backends.cuda import compiler

    version_h = tmp_path / "cuda" / "std" / "__cccl" / "version.h"
    version_h.parent.mkdir(parents=True)
    version_h.write_text("#define CCCL_VERSION 3000001\n")
    monkeypatch.setenv("CUPYNUM_CCCL_INCLUDE", str(tmp_path))
    monkeypatch.setattr(compiler, "_include_info", None)
    cccl = [(p, fp) for p, fp in compiler.include_dirs() if fp.startswith("cccl=")]
    assert cccl == [(str(tmp_path), "cccl=3000001")]  # the version goes into cache keys


def test_sm90_policy_matches_cub():
    # tuning_radix_sort.cuh (CCCL 3.5), policy_selector for sm_90, 32-bit offsets,
    # after scale_reg_bound (items * 4 / max(4, dominant size), threads capped by 48 KB)
    want = {(4, 0): (384, 20), (4, 4): (384, 23), (4, 8): (384, 15), (8, 0): (384, 15),
            (8, 4): (384, 15), (8, 8): (384, 12), (2, 0): (512, 19), (1, 0): (512, 19),
            (2, 4): (512, 17), (1, 4): (512, 17), (2, 2): (384, 15)}
    for (kw, vw), tv in want.items():
        assert cub_sort.policy(kw, vw) == tv, (kw, vw)


def test_policy_knob_overrides():
    from cupynum._backends.cuda import tuning

    with tuning.overridden("CUB_SORT", onesweep={(4, 0): (256, 24)}):
        assert cub_sort.policy(4, 0) == (256, 24)
        assert cub_sort.onesweep_kernel(4, 2, 0).threads == 256
        assert "_256_24_" in cub_sort.onesweep_kernel(4, 2, 0).name
    assert cub_sort.policy(4, 0) == (384, 20)


def test_supported_sizes():
    assert cub_sort.supported(1, 4) and cub_sort.supported(1 << 26, 8)
    assert not cub_sort.supported(0, 4)
    assert not cub_sort.supported(1 << 28, 4)  # several CUB portions: our own engine
    assert not cub_sort.supported(10, 16)


def test_kernel_signatures_carry_launch_bounds():
    k = cub_sort.onesweep_kernel(4, 3, 4)
    assert "__launch_bounds__(384)" in k.signature()
    assert k.signature().startswith('extern "C" __global__')
    assert len(k.params) == 14


# --- the key map, run on the host against NumPy's order -------------------------------------

_DRIVER = r"""
#define CPN_MAP(U, W) \
extern "C" void cpn_map_in##W(const U* x, U* k, long n, int m) { \
  for (long i = 0; i < n; ++i) k[i] = m == 0 ? cpn_ck_in<U, 0>(x[i]) : m == 1 ? cpn_ck_in<U, 1>(x[i]) \
      : m == 2 ? cpn_ck_in<U, 2>(x[i]) : cpn_ck_in<U, 3>(x[i]); } \
extern "C" void cpn_map_out##W(const U* k, U* x, long n, int m) { \
  for (long i = 0; i < n; ++i) x[i] = m == 0 ? cpn_ck_out<U, 0>(k[i]) : m == 1 ? cpn_ck_out<U, 1>(k[i]) \
      : m == 2 ? cpn_ck_out<U, 2>(k[i]) : cpn_ck_out<U, 3>(k[i]); }
CPN_MAP(unsigned char, 1) CPN_MAP(unsigned short, 2) CPN_MAP(unsigned int, 4)
CPN_MAP(unsigned long long, 8)
"""


@pytest.fixture(scope="module")
def keymap():
    import ctypes

    import numpy as np
    from shim import CXX, SHIM, build  # tests/shim.py

    if CXX is None:
        pytest.skip("no C++ compiler")
    lib = build(SHIM + cub_sort.KEY_MAP + _DRIVER, "cubkey", ["-std=c++17", "-O1", "-shared",
                                                            "-fPIC"])

    def run(direction, x, mode):
        w = x.dtype.itemsize
        src = np.ascontiguousarray(x).view(f"u{w}")
        out = np.empty_like(src)
        f = getattr(lib, f"cpn_map_{direction}{w}")
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
        f(src.ctypes.data, out.ctypes.data, src.size, mode)
        return out
    return run


def _sample(dt, n=4000):
    import numpy as np

    rng = np.random.default_rng(1)
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x = (rng.standard_normal(n) * 100).astype(dt)
    for v in (np.nan, np.inf, -np.inf, 0.0, -0.0, -np.nan):
        x[rng.random(n) < 0.03] = v
    return x


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int8", "int16", "int32",
                                "int64", "uint8", "uint16", "uint32", "uint64"])
def test_key_map_orders_like_numpy(keymap, dt):
    import numpy as np

    x = _sample(dt)
    modes = (2, 3) if np.dtype(dt).kind == "f" else ((1,) if np.dtype(dt).kind == "i" else (0,))
    for mode in modes:
        k = keymap("in", x, mode)
        # keys order stably as NumPy's stable argsort (mode 3: -0.0 == +0.0, NaNs tie)
        if mode != 2:
            assert np.array_equal(np.argsort(k, kind="stable"), np.argsort(x, kind="stable"))
        # sorting the keys and mapping back gives NumPy's sorted values
        back = keymap("out", np.sort(k), mode).view(x.dtype)
        assert np.array_equal(back, np.sort(x), equal_nan=True)
        # CUB maps keys out and in again on every pass: the map must be idempotent
        assert np.array_equal(keymap("in", keymap("out", k, mode).view(x.dtype), mode), k)
        # CUB's filler MAX_KEY maps to the all-ones key (last in every digit)
        w = x.dtype.itemsize
        top = (1 << (8 * w)) - 1
        max_key = top if mode == 0 else top >> 1
        filler = np.array([max_key], dtype=f"u{w}")
        assert int(keymap("in", filler, mode)[0]) == top
