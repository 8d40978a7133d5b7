"""The hot path is a contract (internals.md principle 6): count what it calls, never time it.

For ``a + b``, ``a * 2.0``, ``x[1:-1]`` and ``x[1:-1] = y`` on C-contiguous arrays, after a
warm-up call, the frontend may call only a handful of its own small functions, one
allocation and one backend launch (or copy), and never into NumPy (no type resolution, no
broadcast_shapes).  What the backend does inside its launch is its own business and is
measured by the benchmarks, so calls made inside ``cupynum/_backends/`` are not counted.
"""
import os
import sys

import numpy as np
import pytest

import cupynum as cp

BACKENDS = os.sep + "_backends" + os.sep


def profile(fn):
    """Python and C calls made by ``fn()`` outside the backend."""
    calls = []
    inside = [0]

    def hook(frame, event, arg):
        name = frame.f_code.co_filename  # generated launchers are the backend's too
        in_backend = BACKENDS in name or name.startswith("<cupynum launcher")
        if event == "call":
            if in_backend:
                if inside[0] == 0:
                    calls.append(("backend", frame.f_code.co_name))
                inside[0] += 1
            elif inside[0] == 0:
                calls.append((frame.f_code.co_filename, frame.f_code.co_name))
        elif event == "return" and in_backend:
            inside[0] -= 1
        elif event == "c_call" and inside[0] == 0:
            calls.append(("C", getattr(arg, "__qualname__", repr(arg))))

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return [c for c in calls if c[1] not in ("setprofile",)]


def check(calls, max_python, launches=1):
    python = [c for c in calls if c[0] not in ("C", "backend") and not c[0].endswith(
        "test_hot_path.py")]
    numpy_calls = [c for c in calls if "numpy" in c[0] or c[1] in (
        "resolve_dtypes", "broadcast_shapes", "result_type", "asarray", "array")]
    backend = [c for c in calls if c[0] == "backend"]
    assert not numpy_calls, f"the hot path called NumPy: {numpy_calls}"
    assert len(python) <= max_python, f"too many Python calls: {python}"
    assert len(backend) <= launches + 1, f"backend calls: {backend}"  # alloc + launch
    return python


@pytest.fixture
def arrays():
    a = cp.asarray(np.arange(1000, dtype=np.float32))
    b = cp.asarray(np.ones(1000, dtype=np.float32))
    return a, b


def test_add(arrays):
    a, b = arrays
    a + b  # warm-up: resolves the loop and prepares the launcher once
    keep = []  # results stay alive, so freeing them is not counted in the call
    calls = profile(lambda: keep.append(a + b))
    check(calls, max_python=1)  # the operator is the hot path itself
    assert len([c for c in calls if c[0] == "backend"]) == 1  # launch.new allocates too


def test_multiply_by_python_scalar(arrays):
    a, _ = arrays
    a * 2.0
    2.0 * a
    keep = []
    check(profile(lambda: keep.append(a * 2.0)), max_python=1)  # 2.0 packed as it is
    check(profile(lambda: keep.append(2.0 * a)), max_python=2)  # + the reflected operator


def test_unary(arrays):
    a, _ = arrays
    -a
    cp.sqrt(a)
    keep = []
    check(profile(lambda: keep.append(-a)), max_python=1)
    check(profile(lambda: keep.append(cp.sqrt(a))), max_python=2)  # + ufunc.__call__


def test_slice(arrays):
    a, _ = arrays
    a[1:-1]
    calls = profile(lambda: a[1:-1])
    check(calls, max_python=2, launches=0)
    assert not [c for c in calls if c[0] == "backend"]


def test_slice_assignment(arrays):
    a, b = arrays
    x = a.copy()
    y = b[1:-1]
    x[1:-1] = y
    calls = profile(lambda: x.__setitem__(slice(1, -1), y))
    check(calls, max_python=2)
    # the backend of the operands' Buffers (which tells the target's Buffer of the write),
    # then one copy
    assert [c[1] for c in calls if c[0] == "backend"] == ["for_writing", _counted("copy")]


def test_inplace_operator(arrays):
    a, b = arrays
    x = a.copy()
    x += b
    version = x._buf.version
    calls = profile(lambda: x.__iadd__(b))
    check(calls, max_python=2)  # the operator and its cache key
    assert [c[1] for c in calls if c[0] == "backend"] == [_counted("launch")]  # no allocation
    assert x._buf.version == version + 1  # the write is counted inline


def _counted(name):
    """The frame a backend call shows: on the simulated device every compute call runs
    through its launch-counting wrapper, ``run`` (``copy`` counts in its own method, which
    with fusion on also takes a pending source as the sink of its expression)."""
    from cupynum import _backends

    return "run" if _backends.name() == "simulated" and name != "copy" else name


def test_hot_path_results_are_right(arrays):
    a, b = arrays
    np.testing.assert_array_equal(np.asarray(a + b), np.arange(1000, dtype=np.float32) + 1)
    np.testing.assert_array_equal(np.asarray(a * 2.0), np.arange(1000, dtype=np.float32) * 2)
    assert (a * 2.0).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(2.0 * a), np.arange(1000, dtype=np.float32) * 2)
    np.testing.assert_array_equal(np.asarray(-a), -np.arange(1000, dtype=np.float32))
    x = a.copy()
    x[1:-1] = b[1:-1]
    assert float(x[0]) == 0.0 and float(x[5]) == 1.0 and float(x[-1]) == 999.0


def _all_calls(fn):
    """Every Python and C call made by ``fn()``, the backend's included."""
    calls = []

    def hook(frame, event, arg):
        if event == "call":
            calls.append((frame.f_code.co_filename, frame.f_code.co_name))
        elif event == "c_call":
            calls.append(("C", getattr(arg, "__qualname__", repr(arg))))

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return [c for c in calls if c[1] not in ("setprofile",)]


def test_deferred_call(arrays):
    """With fusion (docs/guide/fusion.md) an op on device data only records itself: the
    frontend's hot path is unchanged, one backend call, which launches nothing, calls no
    NumPy and makes a handful of small objects (the node, two input views, the Buffer)."""
    from cupynum._backends import fusion
    from cupynum.testing import device_counters, reset_device_counters

    a, b = arrays
    if a._buf.device is None or not fusion.ENABLED:
        pytest.skip("fusion defers device work only")
    keep = [a + b]
    fusion._sweep()  # (the periodic sweep of dead nodes is not the call's own work)
    reset_device_counters()
    calls = profile(lambda: keep.append(a + b))
    check(calls, max_python=1)
    assert [c[1] for c in calls if c[0] == "backend"] == ["new"]
    assert device_counters()["launches"] == 0 and keep[-1]._buf.pending is not None
    keep.append(a * keep[-1])  # (warm-up of multiply)
    inner = _all_calls(lambda: keep.append(a * keep[-2]))  # over a pending operand too
    python = [(os.path.basename(c[0]), c[1]) for c in inner
              if c[0] != "C" and not c[0].endswith("test_hot_path.py")]
    # the operator; the deferring launcher (a's view is a tuple, keep[-2]'s node is
    # inlined); the output's Buffer; on CUDA the check of the current stream
    want = [("_ufunc.py", "binary"), ("buffer.py", "__init__"), ("fusion.py", "defer"),
            ("fusion.py", "new")]
    from cupynum import _backends

    if _backends.name() == "cuda":
        want.insert(2, ("fused.py", "current_stream"))
    assert sorted(python) == want
    assert not [c for c in inner if "numpy" in c[0] or c[1].startswith("numpy")]
    assert len([c for c in inner if c[0] == "C"]) <= 14, inner  # lookups, getattr, appends
    assert device_counters()["launches"] == 0
