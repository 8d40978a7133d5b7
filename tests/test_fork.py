"""Processes (issue 20, item 12): a forked child never reuses its parent's CUDA state, host
work keeps working there; free-threaded Python without the GIL is refused at import.

Each test runs a script in a fresh interpreter that forks (never the test process itself).
Off the GPU the parent plays "CUDA was initialised" with a fake driver, as
tests/test_pool_streams.py does; the GPU-marked test forks from a parent that really used
the device.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script: str, **env) -> str:
    path = [_ROOT, os.path.join(_ROOT, "tests"), os.environ.get("PYTHONPATH")]
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)), **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=300, env=e, cwd=_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


# The child's verdict travels back through its exit status: 0 is a pass.
_FORK = """
import os, sys, traceback
def in_child(check):
    pid = os.fork()
    if pid == 0:
        try:
            check()
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child's check failed"
"""

_FAKE_CUDA = """
from cupynum._backends.cuda import driver, memory, runtime
import test_pool_streams as t
dev, tls = t.FakeDevice(), t.FakeThreadState()
driver._available = True  # as after a successful probe (cuInit)
runtime._d, runtime._dev, runtime._tls, runtime._ready = dev, 0, tls, True
pool = memory._pool = memory.MemoryPool()
"""


def test_child_of_an_initialised_parent_gets_a_clear_error_and_reuses_nothing():
    out = _run(_FORK + _FAKE_CUDA + """
import numpy as np
import pytest
cached = pool.malloc(4000)
ptr = cached.ptr
del cached  # now in the parent's free list
assert pool.malloc(4000).ptr == ptr  # (the parent reuses it)
keep = pool.malloc(4000)

def check():
    assert runtime.forked() and memory._shutdown
    for use in (lambda: pool.malloc(4000),  # the parent's cached block must not come back
                lambda: pool.malloc(1 << 30),
                runtime.init, runtime.current_stream, lambda: runtime.set_current_stream(0),
                lambda: runtime.create_stream(), lambda: runtime.device_attribute("WARP_SIZE")):
        with pytest.raises(RuntimeError, match="forked"):
            use()
    from cupynum import cuda
    with pytest.raises(RuntimeError, match="spawn"):
        cuda.Stream()
    assert runtime.device_count() == 0
    global keep
    keep = None  # an inherited buffer is dropped without touching the driver
    # host work keeps working
    import cupynum as cp
    assert cp.asarray(np.arange(10.0)).sum() == 45.0
    assert np.linalg.solve(np.eye(3), np.ones(3)).tolist() == [1.0, 1.0, 1.0]

in_child(check)
assert not runtime.forked() and runtime.current_stream() == 0  # the parent is untouched
print("ok")
""", CUPYNUM_BACKEND="host")
    assert out.strip().endswith("ok")


def test_child_of_a_parent_that_never_initialised_cuda_may_initialise_it():
    out = _run(_FORK + """
from cupynum._backends.cuda import driver, runtime
assert driver._available is None  # never probed

def check():
    assert not runtime.forked()

in_child(check)
print("ok")
""", CUPYNUM_BACKEND="host")
    assert out.strip().endswith("ok")


def test_auto_backend_in_a_forked_child_is_the_host():
    out = _run(_FORK + _FAKE_CUDA + """
from cupynum import _backends

def check():
    assert _backends._select("auto").name == "host"

in_child(check)
print("ok")
""", CUPYNUM_BACKEND="host")
    assert out.strip().endswith("ok")


def test_locks_held_by_another_thread_at_fork_do_not_hang_the_child():
    out = _run(_FORK + """
import threading
from cupynum._backends.cuda import memory, nvmath_bindings, runtime
held = threading.Event()
release = threading.Event()
def holder():
    with runtime.streams_lock, nvmath_bindings._lock, memory._pool_lock:
        held.set()
        release.wait()
threading.Thread(target=holder, daemon=True).start()
held.wait()

def check():
    for lock in (runtime.streams_lock, nvmath_bindings._lock, memory._pool_lock):
        assert lock.acquire(timeout=5)
        lock.release()

in_child(check)
release.set()
print("ok")
""", CUPYNUM_BACKEND="host")
    assert out.strip().endswith("ok")


def test_free_threaded_python_without_the_gil_is_refused_at_import():
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys._is_gil_enabled = lambda: False\n"
                               "import cupynum"],
        capture_output=True, text=True, timeout=120, cwd=_ROOT,
        env=dict(os.environ, PYTHONPATH=_ROOT))
    assert done.returncode != 0
    assert "ImportError" in done.stderr and "PYTHON_GIL=1" in done.stderr


@pytest.mark.gpu
def test_forked_child_of_a_gpu_parent():
    out = _run(_FORK + """
import numpy as np
import pytest
import cupynum as cp
from cupynum import cuda
a = cp.arange(1 << 22, dtype=cp.float64)  # on the device: CUDA, the pool and kernels live
m = cp.asarray(np.eye(64)) @ cp.asarray(np.eye(64))  # and a cuBLAS handle
parent_sum = float(a.sum())

def check():
    with pytest.raises(RuntimeError, match="forked"):
        cp.arange(1 << 22, dtype=cp.float64) + 1.0
    with pytest.raises(RuntimeError, match="forked"):
        cuda.Stream()
    assert np.arange(5).sum() == 10  # host work

for _ in range(3):
    in_child(check)
# the children destroyed nothing of the parent's
assert float((a + 1.0).sum()) == parent_sum + (1 << 22)
assert np.array_equal(cp.asnumpy(m @ m), np.eye(64))
print("ok")
""", CUPYNUM_BACKEND="cuda")
    assert out.strip().endswith("ok")
