"""Threads (issue 20, items 8-11): library loading, per-thread handles and plans, library
allocations under memory pressure, and a soak of several threads on their own streams.

The library tests run everywhere, over fake library modules that record what is created and
destroyed (the CUDA libraries need a GPU); the soak test runs on whichever backend is active
(the host backend on CI, the GPU on the device machine, where each thread uses its own
non-blocking stream).
"""
from __future__ import annotations

import contextlib
import gc
import sys
import threading
import time
import types

import numpy as np
import pytest

import cupynum as cp
from cupynum._backends.cuda import blas, fft, memory, nvmath_bindings, runtime, solver, tuning
from cupynum._backends.cuda.view import DeviceView

from helpers import assert_same


def _in_thread(fn, *args):
    """Run ``fn`` in a new thread, wait for it to end; re-raise what it raised."""
    out = {}

    def body():
        try:
            out["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001
            out["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


# --- item 8: library loading ---------------------------------------------------------------


def test_a_binding_is_handed_out_only_once_fully_imported(monkeypatch):
    # Thread A imports slowly; sys.modules holds the half-made module meanwhile.  Thread B
    # must wait for it instead of taking it ("partially initialized module ... has no
    # attribute 'create'").
    name = "nvmath.bindings.cpn_fake_slow"
    started = threading.Event()

    def slow_import(full_name):
        assert full_name == name
        module = types.ModuleType(full_name)
        sys.modules[full_name] = module
        started.set()
        time.sleep(0.3)
        module.create = lambda: 1
        return module

    monkeypatch.setattr(nvmath_bindings, "_import_without_package_init", slow_import)
    monkeypatch.delitem(sys.modules, name, raising=False)
    results = {}

    def load(tag):
        results[tag] = nvmath_bindings.load("cpn_fake_slow")

    a = threading.Thread(target=load, args=("a",))
    a.start()
    assert started.wait(10)
    b = threading.Thread(target=load, args=("b",))
    b.start()
    a.join()
    b.join()
    assert results["a"] is results["b"]
    assert hasattr(results["b"], "create")
    nvmath_bindings._loaded.pop("cpn_fake_slow", None)
    sys.modules.pop(name, None)


_LOAD_IN_THREADS = r"""
import threading
from cupynum._backends.cuda.nvmath_bindings import load
names = ["cublas", "cusolverDn", "cufft", "curand"] * 4
barrier = threading.Barrier(len(names))
got, errors = [], []
def work(n):
    barrier.wait()
    try:
        m = load(n)
        assert hasattr(m, "create") or hasattr(m, "create_generator"), n
        got.append((n, m))
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(n,)) for n in names]
[t.start() for t in ts]
[t.join() for t in ts]
assert not errors, errors
assert len({id(m) for n, m in got if n == "cufft"}) == 1
print("ok")
"""


def test_loading_the_real_bindings_from_many_threads_at_once():
    pytest.importorskip("nvmath.bindings.cublas")
    import subprocess

    done = subprocess.run([sys.executable, "-c", _LOAD_IN_THREADS], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# --- items 9 and 10: per-thread handles and plans, destroyed with the thread ------------------


class FakeLibrary:
    """Records every handle made and destroyed; any other call does nothing."""

    def __init__(self):
        self.made, self.destroyed = [], []
        self._next = 100

    def _make(self, *args):
        self._next += 1
        self.made.append(self._next)
        return self._next

    def _destroy(self, h):
        assert h in self.made and h not in self.destroyed, h
        self.destroyed.append(h)

    create = create_params = create_syevj_info = create_gesvdj_info = _make
    destroy = destroy_params = destroy_syevj_info = destroy_gesvdj_info = _destroy

    def make_plan_many64(self, *args):
        return 0  # work area size: none

    def __getattr__(self, name):
        return lambda *args: None


@pytest.fixture
def fake_libraries(monkeypatch):
    libs = types.SimpleNamespace(cublas=FakeLibrary(), cusolver=FakeLibrary(),
                                 cufft=FakeLibrary())
    monkeypatch.setattr(blas, "_lib", libs.cublas)
    monkeypatch.setattr(solver, "_lib", libs.cusolver)
    monkeypatch.setattr(fft, "_lib", libs.cufft)
    monkeypatch.setattr(runtime, "current_stream", lambda: 0)
    monkeypatch.setattr(blas, "_tls", threading.local())
    monkeypatch.setattr(solver, "_tls", threading.local())
    monkeypatch.setattr(fft, "_tls", threading.local())
    return libs


def _wait_until(cond):
    for _ in range(100):
        gc.collect()
        if cond():
            return True
        time.sleep(0.01)
    return False


def test_library_handles_are_destroyed_when_their_thread_ends(fake_libraries):
    def work():
        h = blas.handle()
        assert blas.handle() == h  # cached for the thread
        solver.handle()
        solver.params()
        solver._jacobi_params("syevj")
        return h

    handles = [_in_thread(work) for _ in range(8)]
    assert len(set(handles)) == 8  # one per thread
    cb, cs = fake_libraries.cublas, fake_libraries.cusolver
    assert _wait_until(lambda: len(cb.destroyed) == 8 and len(cs.destroyed) == 24)
    assert sorted(cb.destroyed) == sorted(cb.made)
    assert sorted(cs.destroyed) == sorted(cs.made)


def test_handles_of_a_live_thread_are_kept(fake_libraries):
    h = blas.handle()
    gc.collect()
    assert fake_libraries.cublas.destroyed == [] and blas.handle() == h


def test_a_thread_never_destroys_a_plan_another_thread_uses(fake_libraries):
    cf = fake_libraries.cufft
    mine = fft._plan("c2c", True, (8,), 1, 0)
    # Another thread fills a whole cache's worth of plans: under a cache shared by threads
    # it evicted (destroyed) ``mine``, which this thread goes on executing.
    _in_thread(lambda: [fft._plan("c2c", True, (16 + i,), 1, 0)
                        for i in range(tuning.FFT.plan_cache_size + 1)])
    assert mine.handle not in cf.destroyed
    assert fft._plan("c2c", True, (8,), 1, 0) is mine
    # The other thread's plans went with it.
    assert _wait_until(lambda: len(cf.destroyed) == tuning.FFT.plan_cache_size + 1)


def test_the_library_knobs_are_read_where_they_decide(fake_libraries, monkeypatch):
    """tuning.FFT: the cache size bounds the cache now, and a plan made under other plan
    knobs is another plan; tuning.BLAS: a changed math mode reconfigures the handle."""
    cf = fake_libraries.cufft
    with tuning.overridden("FFT", plan_cache_size=2):
        first = fft._plan("c2c", False, (4,), 1, 0)
        fft._plan("c2c", False, (5,), 1, 0)
        fft._plan("c2c", False, (6,), 1, 0)
        assert cf.destroyed == [first.handle]
    plan = fft._plan("c2c", False, (6,), 1, 0)
    with tuning.overridden("FFT", work_area="auto"):
        assert fft._plan("c2c", False, (6,), 1, 0) is not plan
    fft.clear_plan_cache()
    modes = []
    monkeypatch.setattr(fake_libraries.cublas, "set_math_mode",
                        lambda h, mode: modes.append(mode), raising=False)
    blas.handle()
    with tuning.overridden("BLAS", math_mode=3):
        blas.handle()
    blas.handle()
    assert modes == [0, 3, 0]


def test_a_thread_evicts_its_own_oldest_plan(fake_libraries):
    cf = fake_libraries.cufft
    first = fft._plan("r2c", False, (4,), 2, 0)
    for i in range(tuning.FFT.plan_cache_size):
        fft._plan("r2c", False, (5 + i,), 2, 0)
    assert cf.destroyed == [first.handle]
    fft.clear_plan_cache()
    assert len(cf.destroyed) == tuning.FFT.plan_cache_size + 1


# --- item 11: library allocations under memory pressure ------------------------------------


class cuBLASError(Exception):  # named as nvmath's: library_alloc matches the class name
    def __init__(self, status):
        self.status = status
        super().__init__(f"status {status}")


class FakePool:
    def __init__(self):
        self.released = 0

    def free_all_blocks(self):
        self.released += 1


def test_library_allocation_failure_releases_cached_blocks_and_retries(monkeypatch):
    pool = FakePool()
    monkeypatch.setattr(memory, "get_pool", lambda: pool)
    calls = []

    def create():
        calls.append(pool.released)
        if pool.released == 0:
            raise cuBLASError(3)  # CUBLAS_STATUS_ALLOC_FAILED
        return 7

    assert memory.library_alloc(create, what="cublasCreate") == 7
    assert calls == [0, 1]


def test_library_allocation_failure_twice_raises_out_of_memory(monkeypatch):
    pool = FakePool()
    monkeypatch.setattr(memory, "get_pool", lambda: pool)

    def create():
        raise cuBLASError(3)

    with pytest.raises(memory.OutOfMemoryError, match="cublasCreate") as info:
        memory.library_alloc(create, what="cublasCreate")
    assert isinstance(info.value, MemoryError) and pool.released == 1


def test_other_library_errors_pass_through_untouched(monkeypatch):
    pool = FakePool()
    monkeypatch.setattr(memory, "get_pool", lambda: pool)

    def create():
        raise cuBLASError(7)  # INVALID_VALUE

    with pytest.raises(cuBLASError):
        memory.library_alloc(create)
    assert pool.released == 0


def test_handle_creation_goes_through_the_retry(fake_libraries, monkeypatch):
    pool = FakePool()
    monkeypatch.setattr(memory, "get_pool", lambda: pool)
    real = fake_libraries.cublas.create
    failures = [cuBLASError(3)]

    def create():
        if failures:
            raise failures.pop()
        return real()

    monkeypatch.setattr(fake_libraries.cublas, "create", create, raising=False)
    assert _in_thread(blas.handle) in fake_libraries.cublas.made
    assert pool.released == 1


class FailingOnce:
    """A library call that reports ALLOC_FAILED the first time, then succeeds."""

    def __init__(self, error):
        self.error, self.calls = error, 0

    def __call__(self, *args):
        self.calls += 1
        if self.calls == 1:
            raise self.error


def test_gemm_retried_after_releasing_cached_blocks(fake_libraries, monkeypatch):
    pool = FakePool()
    monkeypatch.setattr(memory, "get_pool", lambda: pool)
    gemm = FailingOnce(cuBLASError(3))
    monkeypatch.setattr(fake_libraries.cublas, "gemm_ex", gemm, raising=False)
    buf = types.SimpleNamespace(ptr=0x10000)
    a, b, out = (DeviceView(buf, (4, 4), np.float64) for _ in range(3))
    blas.matmul(a, b, out)
    assert gemm.calls == 2 and pool.released == 1


class cuRANDError(Exception):
    def __init__(self, status):
        self.status = status
        super().__init__(f"status {status}")


def test_random_generation_retried_after_releasing_cached_blocks(monkeypatch):
    from cupynum._backends.cuda import rng

    pool = FakePool()
    monkeypatch.setattr(memory, "get_pool", lambda: pool)
    cr = FakeLibrary()
    cr.create_generator = cr._make
    cr.generate_uniform_double = FailingOnce(cuRANDError(102))  # ALLOCATION_FAILED
    monkeypatch.setattr(rng, "_lib", cr)
    monkeypatch.setattr(runtime, "current_stream", lambda: 0)
    state = rng.State(5)
    state.fill(None, "uniform", DeviceView(types.SimpleNamespace(ptr=0x10000), (8,),
                                           np.float64))
    assert cr.generate_uniform_double.calls == 2 and pool.released == 1
    monkeypatch.setattr(memory, "_shutdown", True)  # (no destroy_generator on the fake)
    del state


class RecordingCurand(FakeLibrary):
    """A fake cuRAND that records the seed and offset calls of each handle."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.create_generator = self._make
        self.destroy_generator = self._destroy

    def set_pseudo_random_generator_seed(self, gen, seed):
        self.calls.append(("seed", gen, seed))

    def set_generator_offset(self, gen, offset):
        self.calls.append(("offset", gen, offset))


def test_random_generators_are_made_on_first_use_and_reused_reseeded(monkeypatch, request):
    from cupynum._backends.cuda import rng

    # An earlier test's generator dying in a reference cycle during this one would retire
    # its handle into the list patched below (seen once on the GPU machine, -n 16).
    gc.collect()
    gc.disable()
    request.addfinalizer(gc.enable)
    cr = RecordingCurand()
    monkeypatch.setattr(rng, "_lib", cr)
    monkeypatch.setattr(rng, "_retired", [])
    monkeypatch.setattr(runtime, "current_stream", lambda: 0)
    out = DeviceView(types.SimpleNamespace(ptr=0x10000), (8,), np.float64)
    first = rng.State(5)
    assert cr.made == []  # the kernels' draws need no cuRAND generator
    first.fill(None, "uniform", out)
    assert cr.made == [101] and cr.calls == [("seed", 101, 5)]
    del first
    second = rng.State(6)
    second.fill(None, "normal", out)
    assert cr.made == [101] and cr.destroyed == []  # the dead one's handle, reseeded
    assert cr.calls[1:] == [("seed", 101, 6), ("offset", 101, 0)]
    dead = [rng.State(s) for s in range(rng.KEEP_RETIRED + 2)]
    for st in dead:
        st.fill(None, "uniform", out)
    del dead, st
    assert len(rng._retired) == rng.KEEP_RETIRED + 2
    last = rng.State(9)
    last.fill(None, "uniform", out)  # past the keep: the surplus destroyed, then one taken
    assert len(cr.destroyed) == 2 and len(rng._retired) == rng.KEEP_RETIRED - 1
    assert len(cr.made) == 1 + rng.KEEP_RETIRED + 2  # (none new for the last)
    monkeypatch.setattr(memory, "_shutdown", True)  # (nothing destroyed at the test's end)
    del second, last


# --- the soak: threads x mixed ops x their own streams, compared with NumPy -----------------


def _own_stream():
    """A non-blocking stream of this thread's own on the GPU; nothing on the host backend."""
    from cupynum import _backends

    if _backends.name() != "cuda":
        return contextlib.nullcontext()
    from cupynum import cuda

    return cuda.Stream(non_blocking=True)


def _mixed_ops(seed, rounds):
    rng = np.random.default_rng(seed)
    with _own_stream():
        for _ in range(rounds):
            a = rng.standard_normal((48, 48))
            b = rng.standard_normal(48)
            v = rng.integers(-50, 50, 5000)
            da, db, dv = cp.asarray(a), cp.asarray(b), cp.asarray(v)
            assert_same(da * 2.0 + 1.0, a * 2.0 + 1.0)
            assert_same((dv * 3) % 7, (v * 3) % 7)
            assert_same(dv.sum(), v.sum())
            assert_same(da.max(axis=0), a.max(axis=0))
            assert_same(cp.cumsum(dv), np.cumsum(v))
            assert_same(cp.sort(dv), np.sort(v))
            assert_same(dv[dv > 10], v[v > 10])
            assert_same(da[::3, 1::2].T.copy(), a[::3, 1::2].T.copy())
            assert_same(da @ da, a @ a, rtol=1e-12, atol=1e-12)
            assert_same(cp.linalg.solve(da, db), np.linalg.solve(a, b), rtol=1e-9, atol=1e-9)
            assert_same(cp.fft.fft(da[0]), np.fft.fft(a[0]), rtol=1e-12, atol=1e-12)
            assert_same(cp.fft.rfft(da, axis=1), np.fft.rfft(a, axis=1), rtol=1e-12,
                        atol=1e-12)
            del da, db, dv  # freed while other threads allocate: cross-stream reuse


def test_soak_four_threads_mixed_ops_own_streams():
    errors = []

    def body(seed):
        try:
            _mixed_ops(seed, 6)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


# --- on the GPU --------------------------------------------------------------------------

_FIRST_USE_IN_THREADS = r"""
import threading
import numpy as np
import cupynum as cp
rng = np.random.default_rng(0)
a = rng.standard_normal((96, 96))
b = rng.standard_normal(96)
barrier = threading.Barrier(8)
errors = []
def work():
    barrier.wait()  # every thread's first library call at once: cuBLAS, cuSOLVER, cuFFT
    try:
        da = cp.asarray(a)
        np.testing.assert_allclose(cp.asnumpy(da @ da), a @ a, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cp.asnumpy(cp.linalg.solve(da, cp.asarray(b))),
                                   np.linalg.solve(a, b), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(cp.asnumpy(cp.fft.fft(da[0])), np.fft.fft(a[0]),
                                   rtol=1e-12, atol=1e-12)
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
assert not errors, errors
print("ok")
"""


@pytest.mark.gpu
def test_first_library_use_from_many_threads_at_once_on_the_gpu():
    import os
    import subprocess

    done = subprocess.run([sys.executable, "-c", _FIRST_USE_IN_THREADS], capture_output=True,
                          text=True, timeout=600,
                          env=dict(os.environ, CUPYNUM_BACKEND="cuda"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.gpu
def test_library_handles_made_when_the_pool_holds_the_whole_device(device_placement):
    # The pool caches every byte of the device; a new thread's cuBLAS/cuSOLVER handles and
    # cuFFT plan need memory of their own: the pool gives its cached blocks back and the
    # library call is retried (it used to fail with the library's ALLOC_FAILED).
    from cupynum import cuda

    pool = cuda.get_default_memory_pool()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 64))
    da = cp.asarray(a)
    out = cp.empty((64, 64))
    hold = []
    for chunk in (1 << 30, 64 << 20, 2 << 20):  # fill the device, coarse to fine
        while True:
            try:
                hold.append(cp.empty(chunk, dtype=np.uint8))  # (device_placement: allocated now)
            except memory.OutOfMemoryError:
                break
    del hold  # every byte now cached by the pool, none free on the device
    try:
        def work():
            cp.matmul(da, da, out=out)
            return cp.asnumpy(out), cp.asnumpy(cp.linalg.solve(da, da[0])), \
                cp.asnumpy(cp.fft.fft(da[1]))

        mm, x, f = _in_thread(work)
    finally:
        pool.free_all_blocks()
    np.testing.assert_allclose(mm, a @ a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(a, a[0]), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(f, np.fft.fft(a[1]), rtol=1e-12, atol=1e-12)
