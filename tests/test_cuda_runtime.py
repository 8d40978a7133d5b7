"""The CUDA runtime layer: driver probe, context/streams/events, memory pool, copies, launch.

Tests marked ``gpu`` need a CUDA driver and GPU and are skipped elsewhere; the rest (probe,
error helper, parameter blocks, the public API without a GPU) run everywhere.
"""
from __future__ import annotations

import ctypes
import gc
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from cupynum._backends.cuda import driver, runtime, tuning

HAVE_GPU = driver.available()


def gpu_test(f):
    return pytest.mark.gpu(pytest.mark.skipif(not HAVE_GPU, reason="needs a CUDA GPU")(f))


# --- everywhere ----------------------------------------------------------------------


def test_probe_in_fresh_process_is_quick_and_never_hangs():
    # Load driver.py on its own (no cupynum import), probe twice, in a fresh interpreter.
    code = textwrap.dedent(f"""
        import importlib.util, time
        spec = importlib.util.spec_from_file_location("cpn_probe", {driver.__file__!r})
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        t = time.perf_counter()
        a = m.available()
        b = m.available()
        print(a, b, time.perf_counter() - t)
        print(repr(m.reason()))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip() == ""
    first, reason = r.stdout.splitlines()
    a, b, seconds = first.split()
    assert a == b == str(HAVE_GPU)
    if not HAVE_GPU:
        assert float(seconds) < 5.0
        assert reason not in ("''", '""')


def test_probe_is_cached():
    t = time.perf_counter()
    for _ in range(1000):
        assert driver.available() is HAVE_GPU
    assert time.perf_counter() - t < 0.5
    assert (driver.reason() == "") == HAVE_GPU


def test_check_raises_cuda_error_with_name():
    driver.check(0)
    with pytest.raises(driver.CUDAError, match="CUDA_ERROR_OUT_OF_MEMORY") as info:
        driver.check(2, "cuMemAlloc")
    assert info.value.code == 2 and isinstance(info.value, RuntimeError)
    assert "cuMemAlloc" in str(info.value)


def test_param_block_layout():
    dtypes = [np.uintp, np.int64, np.float32, np.float64, np.int8, np.dtype((np.int64, 3)),
              np.int32]
    pb = runtime.ParamBlock(dtypes)
    assert len(pb) == len(dtypes) and pb.address != 0
    ptrs = list(np.ctypeslib.as_array((ctypes.c_uint64 * len(pb)).from_address(pb.address)))
    base = pb._data.ctypes.data
    assert ptrs == [base + o for o in pb.offsets]
    assert all(o % 8 == 0 for o in pb.offsets)
    assert all(b - a >= np.dtype(t).itemsize for a, b, t in zip(pb.offsets, pb.offsets[1:], dtypes))
    pb.set_ptr(0, 0xDEADBEEF00)
    pb.set_i64(1, -5)
    pb.set(2, 1.5)
    pb.set(3, 2.25)
    pb.set(4, -3)
    pb.set(5, [7, 8, 9])
    pb.set(6, 2**31 - 1)
    assert ctypes.c_uint64.from_address(int(ptrs[0])).value == 0xDEADBEEF00
    assert ctypes.c_int64.from_address(int(ptrs[1])).value == -5
    assert ctypes.c_float.from_address(int(ptrs[2])).value == 1.5
    assert ctypes.c_double.from_address(int(ptrs[3])).value == 2.25
    assert ctypes.c_int8.from_address(int(ptrs[4])).value == -3
    assert list((ctypes.c_int64 * 3).from_address(int(ptrs[5]))) == [7, 8, 9]
    assert ctypes.c_int32.from_address(int(ptrs[6])).value == 2**31 - 1
    pb.set_values([1, 2, 3.0, 4.0, 5, [0, 0, 1], 6])
    assert ctypes.c_int64.from_address(int(ptrs[1])).value == 2
    assert runtime.ParamBlock([]).address == 0


def test_public_module_imports_without_loading_cuda_bindings():
    code = "import sys, cupynum.cuda; print('cuda.bindings' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


@pytest.mark.skipif(HAVE_GPU, reason="checks the behaviour without a GPU")
def test_public_api_without_gpu():
    from cupynum import cuda

    assert cuda.is_available() is False
    assert issubclass(cuda.OutOfMemoryError, MemoryError)
    assert cuda.Stream.null.ptr == 0
    for make in (cuda.Device, cuda.Stream, cuda.Event, cuda.synchronize,
                 cuda.get_default_memory_pool, cuda.get_current_stream):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            make()


# --- on a GPU ------------------------------------------------------------------------

KERNELS = r"""
extern "C" __global__ void cpn_test_fill(float* p, long long n, float v) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}
extern "C" __global__ void cpn_test_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
template <class T> __global__ void cpn_test_scale(T* p, long long n, T a) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * a;
}
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    from cupynum._backends.cuda import compiler

    cache = compiler.KernelCache(tmp_path_factory.mktemp("kernel-cache"))
    c = cache.compile(KERNELS, name_expressions=("cpn_test_scale<float>",))
    mod = runtime.load_module(c.cubin)
    return {
        "fill": mod.get_function("cpn_test_fill"),
        "spin": mod.get_function("cpn_test_spin"),
        "scale": mod.get_function(c.lowered("cpn_test_scale<float>")),
    }


def _fill(kernels, ptr, n, value, stream=None):
    pb = runtime.ParamBlock([np.uintp, np.int64, np.float32])
    pb.set_ptr(0, ptr)
    pb.set_i64(1, n)
    pb.set(2, value)
    s = runtime.current_stream() if stream is None else stream
    runtime.launch(kernels["fill"], (n + 255) // 256, 256, 0, s, pb.address)


@pytest.fixture
def pool():
    from cupynum import cuda

    return cuda.get_default_memory_pool()


@gpu_test
def test_device_properties():
    from cupynum import cuda

    dev = cuda.Device()
    assert dev.id == 0 and dev == cuda.Device(0)
    assert dev.compute_capability.isdigit() and int(dev.compute_capability) >= 50
    assert dev.name and dev.multiprocessor_count > 0 and dev.total_memory > 0
    free, total = dev.mem_info
    assert 0 < free <= total
    with cuda.Device(0) as d:
        d.synchronize()
    major, minor = runtime.compute_capability()
    assert dev.compute_capability == f"{major}{minor}"
    with pytest.raises(ValueError):
        cuda.Device(runtime.device_count())


@pytest.mark.parametrize("nbytes", [1, 7, 4000, 1 << 20, (1 << 20) + 1, 3 << 20,
                                    8 << 20, (24 << 20) + 12345])
@gpu_test
def test_memcpy_round_trip(nbytes):
    from cupynum._backends.cuda import memory

    host = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    buf = memory.alloc(nbytes)
    assert buf.nbytes == nbytes and buf.ptr != 0
    memory.memcpy_htod(buf.ptr, host)
    host2 = np.zeros_like(host)
    memory.memcpy_dtoh(host2, buf.ptr)
    np.testing.assert_array_equal(host2, host)
    other = memory.alloc(nbytes)
    memory.memcpy_dtod(other.ptr, buf.ptr, nbytes)
    memory.memset_d8(buf.ptr, 0xAB, nbytes)
    memory.memcpy_dtoh(host2, buf.ptr)
    assert (host2 == 0xAB).all()
    memory.memcpy_dtoh(host2, other.ptr)
    np.testing.assert_array_equal(host2, host)


@gpu_test
def test_copies_of_shaped_and_non_contiguous_arrays():
    from cupynum._backends.cuda import memory

    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    buf = memory.alloc(a.nbytes)
    memory.memcpy_htod(buf.ptr, a[:, ::-1])  # made contiguous on the way
    out = np.empty((3, 4, 5))
    memory.memcpy_dtoh(out, buf.ptr)
    np.testing.assert_array_equal(out, np.ascontiguousarray(a[:, ::-1]))
    with pytest.raises(ValueError):
        memory.memcpy_dtoh(out[:, ::2], buf.ptr)


@gpu_test
def test_zero_byte_allocation_and_copies():
    from cupynum._backends.cuda import memory

    buf = memory.alloc(0)
    assert buf.nbytes == 0
    memory.memcpy_htod(buf.ptr, np.empty(0))
    memory.memcpy_dtoh(np.empty(0), buf.ptr)
    memory.memset_d8(buf.ptr, 0, 0)
    del buf


@gpu_test
def test_kernel_launch_and_name_expressions(kernels):
    from cupynum._backends.cuda import memory

    n = 1000
    buf = memory.alloc(n * 4)
    _fill(kernels, buf.ptr, n, 2.5)
    pb = runtime.ParamBlock([np.uintp, np.int64, np.float32])
    pb.set_ptr(0, buf.ptr)
    pb.set_i64(1, n)
    pb.set(2, 3.0)
    runtime.launch(kernels["scale"], ((n + 127) // 128, 1, 1), (128,), 0,
                   runtime.current_stream(), pb.address)
    out = np.empty(n, np.float32)
    memory.memcpy_dtoh(out, buf.ptr)
    assert (out == 7.5).all()
    assert runtime.kernel_attribute(kernels["fill"], "MAX_THREADS_PER_BLOCK") >= 256


@gpu_test
def test_stream_context_manager_restores_previous(kernels):
    from cupynum import cuda
    from cupynum._backends.cuda import memory

    assert cuda.get_current_stream() is cuda.Stream.null
    assert runtime.current_stream() == 0
    s1 = cuda.Stream()
    s2 = cuda.Stream(non_blocking=True)
    assert s1.ptr and s2.ptr and s1.ptr != s2.ptr
    with s1 as entered:
        assert entered is s1
        assert cuda.get_current_stream() is s1 and runtime.current_stream() == s1.ptr
        with s2:
            assert cuda.get_current_stream() is s2
            buf = memory.alloc(4096)
            assert buf.stream == s2.ptr and buf.stream_owner is s2
            _fill(kernels, buf.ptr, 1024, 4.0)
            out = np.empty(1024, np.float32)
            memory.memcpy_dtoh(out, buf.ptr)  # on s2, the current stream
            assert (out == 4.0).all()
        assert cuda.get_current_stream() is s1
    assert cuda.get_current_stream() is cuda.Stream.null and runtime.current_stream() == 0
    s1.synchronize()
    assert s1.done
    with pytest.raises(NotImplementedError):
        cuda.Stream(ptds=True)


@gpu_test
def test_events_timing_and_cross_stream_wait(kernels):
    from cupynum import cuda
    from cupynum._backends.cuda import memory

    s1, s2 = cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)
    start, end = cuda.Event(), cuda.Event()
    pb = runtime.ParamBlock([np.int64])
    pb.set_i64(0, 2_000_000)  # ~1 ms of clock64 spinning
    start.record(s1)
    runtime.launch(kernels["spin"], 1, 1, 0, s1.ptr, pb.address)
    end.record(s1)
    end.synchronize()
    assert end.query() and end.done
    ms = cuda.get_elapsed_time(start, end)
    assert ms > 0

    with s1:
        buf = memory.alloc(4096)
    _fill(kernels, buf.ptr, 1024, 9.0, stream=s1.ptr)
    ready = s1.record()
    s2.wait_event(ready)
    out = np.empty(1024, np.float32)
    memory.memcpy_dtoh(out, buf.ptr, stream=s2.ptr)
    assert (out == 9.0).all()

    untimed = cuda.Event(timing=False)
    untimed.record()
    cuda.synchronize()
    with pytest.raises(driver.CUDAError):
        cuda.get_elapsed_time(untimed, end)


@gpu_test
def test_out_of_memory_then_recovery(pool):
    from cupynum import cuda
    from cupynum._backends.cuda import memory

    with pytest.raises(cuda.OutOfMemoryError) as info:
        memory.alloc(10**15)
    assert isinstance(info.value, MemoryError)
    assert str(10**15) in str(info.value)
    buf = memory.alloc(1 << 20)  # the process keeps working
    host = np.arange(1 << 18, dtype=np.float32)
    memory.memcpy_htod(buf.ptr, host)
    out = np.empty_like(host)
    memory.memcpy_dtoh(out, buf.ptr)
    np.testing.assert_array_equal(out, host)


@gpu_test
def test_free_list_reuse_is_per_stream(pool):
    from cupynum import cuda
    from cupynum._backends.cuda import memory

    gc.collect()  # (earlier tests' frees, parked while their user streams lived, settled
    pool._settle()  # first, so that the block freed below is the list's last)
    b = memory.alloc(4000)
    ptr = b.ptr
    del b
    pool._settle()
    b2 = memory.alloc(3000)  # same 4 KiB block, same stream: reused
    assert b2.ptr == ptr
    del b2
    s = cuda.Stream()
    with s:
        b3 = memory.alloc(4000)  # freed on the null stream: not reused on another stream
        assert b3.ptr != ptr and b3.stream == s.ptr
    moved = memory.alloc(4000)  # last used on s: freed onto s's list
    moved_ptr = moved.ptr
    moved.set_stream(s.ptr, s)
    moved.free()
    moved.free()  # idempotent
    pool._settle()  # (with a user stream alive, frees wait in _pending for their fence)
    assert moved_ptr in pool._free[(s.ptr, 4096)]
    assert moved_ptr not in pool._free[(0, 4096)]


@gpu_test
def test_pool_statistics(pool):
    from cupynum._backends.cuda import memory

    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0
    used0 = pool.used_bytes()
    b = memory.alloc(4000)
    big = memory.alloc(5 << 20)
    assert pool.used_bytes() == used0 + 4096 + (5 << 20)
    assert pool.total_bytes() >= pool.used_bytes()
    del b, big
    assert pool.used_bytes() == used0
    assert pool.n_free_blocks() >= 1
    assert pool.total_bytes() >= 4096  # cached, not returned
    huge = memory.alloc(tuning.MEMORY.cache_max + 1)  # a big class (big_step apart): cached too
    assert pool.used_bytes() == used0 + tuning.MEMORY.cache_max + tuning.MEMORY.big_step
    hptr = huge.ptr
    del huge
    assert pool.used_bytes() == used0
    again = memory.alloc(tuning.MEMORY.cache_max + 5)
    assert again.ptr == hptr
    del again
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0
    assert pool.used_bytes() == used0


@gpu_test
def test_destroying_a_stream_releases_its_cached_blocks(pool):
    from cupynum import cuda
    from cupynum._backends.cuda import memory

    s = cuda.Stream()
    handle = s.ptr
    with s:
        b = memory.alloc(4096)
    assert b.stream_owner is s
    before = len(pool._free[(handle, 4096)])
    del b
    pool._settle()
    assert len(pool._free[(handle, 4096)]) == before + 1
    del s
    gc.collect()
    assert len(pool._free[(handle, 4096)]) == 0


@gpu_test
def test_threads_each_use_their_current_stream(kernels):
    from cupynum import cuda
    from cupynum._backends.cuda import memory

    results, errors = {}, []

    def work(i):
        try:
            with cuda.Stream() as s:
                assert runtime.current_stream() == s.ptr
                n = 1000 + i
                buf = memory.alloc(n * 4)
                assert buf.stream == s.ptr
                _fill(kernels, buf.ptr, n, float(i))
                out = np.empty(n, np.float32)
                memory.memcpy_dtoh(out, buf.ptr)
                results[i] = out
            assert runtime.current_stream() == 0
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(8):
        assert results[i].shape == (1000 + i,) and (results[i] == i).all()
    assert runtime.current_stream() == 0


@gpu_test
def test_launch_from_a_fresh_thread_binds_the_context(kernels):
    from cupynum._backends.cuda import memory

    buf = memory.alloc(4096)
    errors = []

    def work():
        try:
            _fill(kernels, buf.ptr, 1024, 5.0, stream=0)  # no runtime call before the launch
            runtime.synchronize()
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    out = np.empty(1024, np.float32)
    memory.memcpy_dtoh(out, buf.ptr)
    assert (out == 5.0).all()
