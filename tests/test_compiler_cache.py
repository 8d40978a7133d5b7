"""The NVRTC compiler and its kernel cache.  NVRTC only: these run without a GPU."""
from __future__ import annotations

import os
import stat
import threading
import warnings

import pytest

from cupynum._backends.cuda import compiler

HEADER = """#pragma once
namespace cpn_test { struct twice { __device__ float operator()(float x) const { return x * 2.0f; } }; }
"""

SOURCE = """#include "cpn_test_twice.cuh"
extern "C" __global__ void cpn_test_apply(float* p, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) p[i] = cpn_test::twice{}(p[i]);
}
template <class T> __global__ void cpn_test_scale(T* p, long long n, T a) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * a;
}
"""
NAMES = ("cpn_test_scale<float>", "cpn_test_scale<double>")


@pytest.fixture
def dirs(tmp_path):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "cpn_test_twice.cuh").write_text(HEADER)
    return tmp_path / "cache" / "nested", kernels


def _cache(dirs):
    cache_dir, kernels = dirs
    return compiler.KernelCache(cache_dir, kernels=kernels)


def _entries(cache_dir):
    return sorted(p for p in cache_dir.iterdir() if p.suffix == ".cubin")


def test_compile_then_memory_hit(dirs):
    kc = _cache(dirs)
    c = kc.compile(SOURCE, name_expressions=NAMES)
    assert c.cubin[:4] == b"\x7fELF"
    assert set(c.lowered_names) == set(NAMES)
    assert all(v.startswith("_Z") and "cpn_test_scale" in v for v in c.lowered_names.values())
    assert c.lowered("cpn_test_scale<float>") != c.lowered("cpn_test_scale<double>")
    assert kc.stats == {"memory_hits": 0, "disk_hits": 0, "compiles": 1, "corrupt": 0}
    c2 = kc.compile(SOURCE, name_expressions=NAMES)
    assert c2 is c
    assert kc.stats["memory_hits"] == 1 and kc.stats["compiles"] == 1


def test_disk_hit_from_fresh_cache_and_after_clearing_memory(dirs):
    kc = _cache(dirs)
    c = kc.compile(SOURCE, name_expressions=NAMES)
    assert len(_entries(dirs[0])) == 1
    fresh = _cache(dirs)
    c2 = fresh.compile(SOURCE, name_expressions=NAMES)
    assert fresh.stats["disk_hits"] == 1 and fresh.stats["compiles"] == 0
    assert c2.cubin == c.cubin and c2.lowered_names == c.lowered_names and c2.key == c.key
    kc.clear_memory()
    kc.compile(SOURCE, name_expressions=NAMES)
    assert kc.stats["disk_hits"] == 1 and kc.stats["compiles"] == 1


def test_different_inputs_different_entries(dirs):
    kc = _cache(dirs)
    keys = {
        kc.compile(SOURCE).key,
        kc.compile(SOURCE, name_expressions=NAMES).key,
        kc.compile(SOURCE, options=("-DCPN_TEST=1",)).key,
        kc.compile(SOURCE, arch="sm_80").key,
        kc.compile(SOURCE + "\n// comment").key,
    }
    assert len(keys) == 5 and kc.stats["compiles"] == 5
    assert len(_entries(dirs[0])) == 5


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty"])
def test_corrupt_entry_is_recompiled_and_rewritten(dirs, damage):
    c = _cache(dirs).compile(SOURCE)
    (path,) = _entries(dirs[0])
    blob = bytearray(path.read_bytes())
    if damage == "flip":
        blob[len(blob) // 2] ^= 0xFF
    elif damage == "truncate":
        blob = blob[: len(blob) // 3]
    elif damage == "garbage":
        blob = bytearray(b"not a cache entry" * 10)
    else:
        blob = bytearray()
    path.write_bytes(bytes(blob))

    kc = _cache(dirs)
    c2 = kc.compile(SOURCE)
    assert kc.stats["corrupt"] == 1 and kc.stats["compiles"] == 1
    assert c2.cubin == c.cubin
    again = _cache(dirs)  # the entry was rewritten and now verifies
    again.compile(SOURCE)
    assert again.stats["disk_hits"] == 1 and again.stats["corrupt"] == 0


def test_cache_dir_created_0700_and_no_temp_files(dirs):
    cache_dir = dirs[0]
    assert not cache_dir.exists()
    old = os.umask(0o022)
    try:
        _cache(dirs).compile(SOURCE)
    finally:
        os.umask(old)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert [p.name for p in cache_dir.iterdir() if p.name.startswith(".tmp-")] == []
    (entry,) = _entries(cache_dir)
    assert stat.S_IMODE(entry.stat().st_mode) & 0o077 == 0  # private, like the directory
    assert stat.S_IMODE((cache_dir / "hmac.key").stat().st_mode) == 0o600


def test_unwritable_cache_dir_warns_once_and_still_compiles(tmp_path, dirs):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")  # makedirs below it fails, even for root
    kc = compiler.KernelCache(blocker / "cache", kernels=dirs[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c1 = kc.compile(SOURCE)
        c2 = kc.compile(SOURCE, name_expressions=NAMES)
        kc.compile(SOURCE)  # memory hit
    runtime_warnings = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(runtime_warnings) == 1, [str(w.message) for w in caught]
    assert "memory only" in str(runtime_warnings[0].message)
    assert c1.cubin[:4] == b"\x7fELF" and c2.cubin[:4] == b"\x7fELF"
    assert kc.stats["compiles"] == 2 and kc.stats["memory_hits"] == 1


def test_read_only_prefilled_cache_still_serves_hits(dirs):
    _cache(dirs).compile(SOURCE)
    cache_dir = dirs[0]
    os.chmod(cache_dir, 0o500)
    try:
        kc = _cache(dirs)
        kc.compile(SOURCE)
        assert kc.stats["disk_hits"] == 1
    finally:
        os.chmod(cache_dir, 0o700)


def test_editing_a_header_changes_the_key(dirs):
    cache_dir, kernels = dirs
    kc = _cache(dirs)
    k1 = kc.key(SOURCE)
    c1 = kc.compile(SOURCE)
    assert c1.key == k1
    (kernels / "cpn_test_twice.cuh").write_text(HEADER.replace("2.0f", "3.0f"))
    k2 = kc.key(SOURCE)
    assert k2 != k1
    fresh = _cache(dirs)
    c2 = fresh.compile(SOURCE)
    assert fresh.stats["compiles"] == 1 and fresh.stats["disk_hits"] == 0
    assert c2.key == k2 and c2.cubin != c1.cubin
    (kernels / "new_unrelated.cuh").write_text("// new file\n")  # any file counts
    assert kc.key(SOURCE) not in (k1, k2)


def test_key_does_not_depend_on_where_the_folders_are(tmp_path, dirs):
    other = tmp_path / "elsewhere" / "kernels"
    other.mkdir(parents=True)
    (other / "cpn_test_twice.cuh").write_text(HEADER)
    a = compiler.KernelCache(tmp_path / "c1", kernels=dirs[1])
    b = compiler.KernelCache(tmp_path / "c2", kernels=other)
    assert a.key(SOURCE) == b.key(SOURCE)  # a cache filled on one machine serves another


def test_compile_error_carries_the_log(dirs):
    kc = _cache(dirs)
    bad = 'extern "C" __global__ void cpn_test_bad(float* p) { p[0] = cpn_test_undefined_name; }'
    with pytest.raises(compiler.CompileError) as info:
        kc.compile(bad)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert "cpn_test_undefined_name" in e.log and "error" in e.log
    assert "cpn_test_undefined_name" in str(e)
    assert kc.stats["compiles"] == 0
    assert not dirs[0].exists() or _entries(dirs[0]) == []  # nothing cached for a failure


def test_default_options(dirs):
    kc = _cache(dirs)
    opts = kc._full_options((), "sm_90")
    assert "-std=c++17" in opts and "--fmad=false" in opts and "-arch=sm_90" in opts
    assert f"-I{dirs[1]}" in opts
    over = kc._full_options(("--fmad=true", "-std=c++20", "-arch=sm_80"), "sm_90")
    assert "--fmad=false" not in over and "-std=c++17" not in over and "-arch=sm_90" not in over
    assert over[-3:] == ["--fmad=true", "-std=c++20", "-arch=sm_80"]


def test_arch_selection(monkeypatch):
    assert compiler._normalise_arch("90") == "sm_90"
    assert compiler._normalise_arch("sm_90a") == "sm_90a"
    assert compiler._normalise_arch("compute_80") == "sm_80"
    with pytest.raises(ValueError):
        compiler._normalise_arch("sm_x")
    monkeypatch.setattr(compiler, "_default_arch", None)
    monkeypatch.setenv("CUPYNUM_ARCH", "sm_86")
    assert compiler.default_arch() == "sm_86"
    monkeypatch.setattr(compiler, "_default_arch", None)
    monkeypatch.delenv("CUPYNUM_ARCH")
    arch = compiler.default_arch()
    from cupynum._backends.cuda import driver

    if not driver.available():
        assert arch == "sm_90"
    assert arch.startswith("sm_")


def test_concurrent_compiles_of_one_program_compile_once(dirs):
    kc = _cache(dirs)
    results, errors = [], []

    def work():
        try:
            results.append(kc.compile(SOURCE, name_expressions=NAMES))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert kc.stats["compiles"] == 1 and len({id(r) for r in results}) == 1


def test_default_cache_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CUPYNUM_CACHE_DIR", str(tmp_path / "envcache"))
    monkeypatch.setattr(compiler, "_default_cache", None)
    try:
        c = compiler.compile_cubin('extern "C" __global__ void cpn_test_env(int* p) { p[0] = 1; }')
        assert c.cubin[:4] == b"\x7fELF"
        assert compiler.default_cache().cache_dir == tmp_path / "envcache"
        assert _entries(tmp_path / "envcache")
    finally:
        compiler._default_cache = None


def test_kernel_dir_and_versions():
    d = compiler.kernel_dir()
    assert d.name == "kernels"
    major, minor = compiler.nvrtc_version()
    assert major >= 12 and minor >= 0
    for path, fingerprint in compiler.include_dirs():
        assert os.path.isdir(path) and "=" in fingerprint


def test_alias_names_a_compiled_key(dirs):
    """A recipe alias remembers which key its program compiled to; the alias changes with
    the recipe, the fingerprint, the options and the kernels folder."""
    c = _cache(dirs)
    got = c.compile(SOURCE, options=("-DX=1",))
    a = c.alias("recipe-1", "fp", options=("-DX=1",))
    assert c.alias_key(a) is None
    c.remember_alias(a, got.key)
    assert c.alias_key(a) == got.key
    fresh = _cache(dirs)  # another process: memory empty, the disk remembers
    assert fresh.alias_key(a) == got.key
    assert fresh.load(got.key).cubin == got.cubin
    assert fresh.stats["disk_hits"] == 1
    others = {c.alias("recipe-2", "fp", options=("-DX=1",)),
              c.alias("recipe-1", "fp2", options=("-DX=1",)),
              c.alias("recipe-1", "fp", options=("-DX=2",))}
    assert a not in others and len(others) == 3
    (dirs[1] / "cpn_test_twice.cuh").write_text(HEADER + "// edited\n")
    assert c.alias("recipe-1", "fp", options=("-DX=1",)) != a
    assert fresh.load("0" * 64) is None


def test_warm_first_kernel_generates_no_source(tmp_path, monkeypatch):
    """With the disk cache warm, a process's first use of a table kernel reads the cubin
    through its recipe alias: no source text is generated."""
    from cupynum import _ops
    from cupynum._backends.cuda import elementwise as ew
    from cupynum._backends.cuda import runtime

    monkeypatch.setattr(compiler, "_default_cache", compiler.KernelCache(tmp_path))
    loaded = []

    class Module:
        def get_function(self, name):
            return name

    monkeypatch.setattr(runtime, "load_module", lambda cubin: loaded.append(cubin) or Module())
    row = next(r for r in _ops.UFUNCS if r.name == "sin")
    op = ew.ElementwiseOp("sin", row.functor, "ff", 1)
    spec = ew.KernelSpec(ew.op_exprs(op), (("a", "f"), ("a", "f")), 1, "contig")
    for name in ("_funcs", "_modules"):
        monkeypatch.setattr(ew, name, {})
    assert ew.get_kernel(spec) == ew.kernel_name(spec)  # cold: generates and compiles
    for name in ("_funcs", "_modules"):
        monkeypatch.setattr(ew, name, {})
    monkeypatch.setattr(ew, "program_source", None)  # calling either would raise
    monkeypatch.setattr(ew, "_group_source", None)
    assert ew.get_kernel(spec) == ew.kernel_name(spec)
    assert len(loaded) == 2 and loaded[0] == loaded[1]
