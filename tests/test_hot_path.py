"""The hot path is a contract (internals.md principle 6): count what it calls, never time it.

For ``a + b``, ``a * 2.0``, ``x[1:-1]`` and ``x[1:-1] = y`` on C-contiguous arrays, after a
warm-up call, the frontend may call only a handful of its own small functions, one
allocation and one backend launch (or copy), and never into NumPy (no type resolution, no
broadcast_shapes).  What the backend does inside its launch is its own business and is
measured by the benchmarks, so calls made inside ``cupynum/_backends/`` are not counted.

On host arrays (docs/guide/placement.md) the contract is NumPy's own call on the kept NumPy
views plus about a microsecond: the tests ``test_host_path_*`` list every call an operator,
an in-place operator, a ufunc, getitem and setitem, ``sum`` and ``@`` make, and those of
each of issue 18's statements (``benchmarks/statements.py``).
"""
import gc
import os
import sys

import numpy as np
import pytest

import cupynum as cp

BACKENDS = os.sep + "_backends" + os.sep
NUMPY = os.path.dirname(np.__file__) + os.sep


def profile(fn):
    """Python and C calls made by ``fn()`` outside the backend and NumPy: a call into
    either is listed once, as ``("backend", name)`` or ``("numpy", name)``, and what it
    calls in turn is its own business."""
    calls = []
    inside = [0]

    def hook(frame, event, arg):
        name = frame.f_code.co_filename  # generated launchers are the backend's too
        owner = ("backend" if BACKENDS in name or name.startswith("<cupynum launcher") else
                 "numpy" if name.startswith(NUMPY) else None)
        if event == "call":
            if owner is not None:
                if inside[0] == 0:
                    calls.append((owner, frame.f_code.co_name))
                inside[0] += 1
            elif inside[0] == 0:
                calls.append((frame.f_code.co_filename, frame.f_code.co_name))
        elif event == "return" and owner is not None:
            inside[0] -= 1
        elif event == "c_call" and inside[0] == 0:
            calls.append(("C", getattr(arg, "__qualname__", repr(arg))))

    _profiled(fn, hook)
    return [c for c in calls if c[1] not in ("setprofile",)]


def _profiled(fn, hook):
    """``fn()`` under the profile ``hook``, with no garbage collection inside: a collection
    would run ``gc.callbacks`` (Hypothesis registers one) as calls of ``fn``."""
    enabled = gc.isenabled()
    gc.disable()
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
        if enabled:
            gc.enable()


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


DEVICE_BACKEND = __import__("cupynum._backends", fromlist=["get"]).get().side == "device"


@pytest.fixture
def arrays(request):
    """Two device arrays (the device path: every array on the device, as under
    CUPYNUM_PLACEMENT=device); skipped without a device backend, where every array is on
    the host and takes the host path (the tests below ``host_arrays``)."""
    if not DEVICE_BACKEND:
        pytest.skip("the device path needs a device backend")
    request.getfixturevalue("device_placement")
    a = cp.asarray(np.arange(1000, dtype=np.float32))
    b = cp.asarray(np.ones(1000, dtype=np.float32))
    return a, b


@pytest.fixture
def host_arrays():
    """Two arrays whose data is on the host (skipped under CUPYNUM_PLACEMENT=device)."""
    a = cp.asarray(np.arange(1000, dtype=np.float32))
    b = cp.asarray(np.ones(1000, dtype=np.float32))
    from cupynum._backends import placement

    if cp.placement(a) != "host" or placement.MODE == "random":
        pytest.skip("no host placement (CUPYNUM_PLACEMENT=device), or operands moved at random")
    return a, b


def host_path(calls):
    """The Python frames of a host-path call (the caller's lambda left out), checking that
    it made no backend call but the result's Buffer: NumPy on the kept views, one result
    object."""
    assert not [c for c in calls if c[0] == "backend" and c[1] != "__init__"], calls
    return [c[1] for c in calls if c[0] not in ("C", "backend") and not c[0].endswith(
        "test_hot_path.py")]


def numpy_calls(calls):
    return [c[1] for c in calls if c[0] == "C" and c[1] not in (
        "list.append", "object.__new__", "len")]


def host_calls(fn):
    """What ``fn()`` calls outside this file, by name: cupynum's Python frames, the
    backend's (only a result's ``Buffer.__init__`` may appear) and C functions.  NumPy's
    own Python frames are left out (they vary with its version); NumPy's ufunc calls and
    ``hv[key]`` are no calls to the profiler: they run inside the frames listed."""
    calls = profile(fn)
    assert not [c for c in calls if c[0] == "backend" and c[1] != "__init__"], calls
    return [c[1] for c in calls if not c[0].endswith("test_hot_path.py")
            and c[0] != "numpy" and c[1] != "list.append"]


def test_host_path_binary_operator(host_arrays):
    a, b = host_arrays
    a + b
    keep = []
    calls = profile(lambda: keep.append(a + b))
    # the operator (reading both kept NumPy views inline), the result object; NumPy's own
    # ufunc call is a C call of the ufunc, not listed; NumPy's result is the Buffer's host
    # copy as it is (no byte view of it made), its layout a's (C-contiguous operands)
    assert host_path(calls) == ["binary", "wrap_host"]
    assert numpy_calls(calls) == []
    calls = profile(lambda: keep.append(a * 2.0))
    assert host_path(calls) == ["binary", "wrap_host"]
    np.testing.assert_array_equal(keep[0].get(), np.arange(1000, dtype=np.float32) + 1)



@pytest.mark.parametrize("case", ["c", "f", "strided", "column", "row", "empty", "0-d",
                                  "int64", "compare", "mixed-order", "unary-f", "astype-c",
                                  "astype-f", "astype-c-order-f", "astype-0-d"])
def test_host_results_have_numpys_layout(case):
    """The host path reads an elementwise result's (or ``astype``'s) layout from its operand
    where both are C-contiguous (``wrap_host``'s ``like``) and asks NumPy otherwise: either
    way the result's shape, strides, flags, dtype and values are NumPy's own."""
    base = np.arange(24.0).reshape(4, 6)
    ops = {"c": (base, lambda x: x * 2.0 + x), "f": (np.asfortranarray(base), lambda x: x + x),
           "strided": (base[:, ::2], lambda x: x - 1.0), "column": (base[:, :1].copy(),
                                                                   lambda x: x / 3.0),
           "row": (base[:1].copy(), lambda x: x * x), "empty": (base[:0], lambda x: x + 1.0),
           "0-d": (np.array(2.5), lambda x: x * 2.0),
           "int64": (np.arange(6, dtype=np.int64).reshape(2, 3), lambda x: x + 1),
           "compare": (base, lambda x: x > 3.0),
           "mixed-order": (base, lambda x: x + x.T.copy().T),
           "unary-f": (np.asfortranarray(base), lambda x: -x),
           "astype-c": (base, lambda x: x.astype(np.float32)),
           "astype-f": (np.asfortranarray(base), lambda x: x.astype(np.int64)),
           "astype-c-order-f": (base, lambda x: x.astype(np.float32, order="F")),
           "astype-0-d": (np.array(2.5), lambda x: x.astype(np.int32))}
    h, fn = ops[case]
    got, want = fn(cp.asarray(h)), fn(h)
    if not want.ndim:
        assert float(got) == float(want)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.size or cp.placement(got) == "host":  # (a device result of no elements has
        assert got.strides == want.strides, (got.strides, want.strides)  # C strides)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (
        want.flags.c_contiguous, want.flags.f_contiguous)
    np.testing.assert_array_equal(got.get(), want)

def test_host_path_unary_and_inplace(host_arrays):
    a, b = host_arrays
    x = a.copy()
    -a
    x += b
    keep = []
    assert host_path(profile(lambda: keep.append(-a))) == ["unary", "wrap_host"]
    version = x._buf.version
    calls = profile(lambda: x.__iadd__(b))
    assert host_path(calls) == ["inplace"] and not numpy_calls(calls)
    assert x._buf.version == version + 1
    np.testing.assert_array_equal(x.get(), np.arange(1000, dtype=np.float32) + 2)
    # the public ufuncs: their __call__, then the operators' own paths
    cp.sqrt(a)
    cp.add(a, b)
    assert host_calls(lambda: keep.append(cp.sqrt(a))) == ["__call__", "len", "unary", *RESULT]
    assert host_calls(lambda: keep.append(cp.add(a, b))) == ["__call__", "len", "binary",
                                                              *RESULT]
    version = x._buf.version
    assert host_calls(lambda: x.__imul__(0.5)) == ["inplace"]
    assert x._buf.version == version + 1
    np.testing.assert_array_equal(keep[-1].get(), np.arange(1000, dtype=np.float32) + 1)
    np.testing.assert_array_equal(x.get(), (np.arange(1000, dtype=np.float32) + 2) / 2)


def test_host_path_sum_and_matmul(host_arrays):
    a, b = host_arrays
    keep = []
    a.sum()
    a @ b
    frames = host_path(profile(lambda: keep.append(a.sum())))
    # the public function: NumPy's own method on the kept view, its scalar as it is
    # (NumPy's ``ndarray.sum`` runs a Python function of NumPy's own, ``_sum``)
    assert frames[:2] == ["public", "host_view"] and frames[-1] == "wrap_result"
    assert len(frames) <= 4, frames
    assert type(keep[0]) is np.float32 and keep[0] == np.arange(1000.0).sum()
    frames = host_path(profile(lambda: keep.append(a.sum(axis=0))))  # keywords: the function
    assert frames == ["public", "sum", "_kd", "_red", "ufunc_reduce", "on_host", "host_view",
                      "wrap_host", "host_view"], frames  # (then NumPy's scalar from the 0-d)
    frames = host_path(profile(lambda: keep.append(a @ b)))  # (1-d @ 1-d: NumPy's scalar)
    assert frames == ["matmul_operator"]  # (reading both kept views inline)
    assert type(keep[1]) is np.float32
    assert keep[1] == np.arange(1000, dtype=np.float32) @ np.ones(1000, np.float32)


def test_host_path_numpy_scalars_astype_accumulate_and_products(host_arrays):
    """An element of a host array is NumPy's scalar; ops with it stay on the host path, as
    do ``astype``, ``ufunc.accumulate``, ``where`` and the product functions of host
    arrays."""
    a, b = host_arrays
    s = np.float32(3.0)
    keep = []
    for fn in (lambda: a != s, lambda: s * a, lambda: a.astype(np.int64),
               lambda: cp.minimum.accumulate(a), lambda: cp.dot(a, b),
               lambda: cp.where(b, a, s)):
        fn()
        calls = profile(lambda: keep.append(fn()))
        assert not [c for c in calls if c[0] == "backend" and c[1] != "__init__"], calls
        assert "_place" not in host_path(calls) and "for_arrays" not in host_path(calls)
    x = a.copy()
    x -= s
    assert host_path(profile(lambda: x.__isub__(s))) == ["inplace"]
    ha, hb = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    for got, want in zip(keep, [ha != s, s * ha, ha.astype(np.int64),
                                np.minimum.accumulate(ha), np.dot(ha, hb),
                                np.where(hb, ha, s)]):
        want = np.asarray(want)
        got = got.get() if isinstance(got, cp.ndarray) else np.asarray(got)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    np.testing.assert_array_equal(x.get(), ha - 2 * s)


def test_host_path_leaves_scalars_of_other_dtypes_to_the_general_path(host_arrays):
    a, _ = host_arrays  # (NumPy would make float128 and timedelta64 arrays cupynum cannot hold)
    for s in (np.timedelta64(1), np.longdouble(2.0)):
        with pytest.raises(TypeError, match="does not support dtype"):
            a + s


def test_host_path_first_write_of_a_new_array(host_arrays):
    """``cur = empty(n); cur[0] = i``: the first write of a new array that starts on the host
    allocates it there (one backend call) and is NumPy's setitem on the kept view, with no
    placement decision (no ``for_writing``, no ``_place``)."""
    cur = cp.empty(1001, dtype=np.int64)
    if cur._buf.host is not None:
        pytest.skip("no placement (the host backend): empty allocates at once")
    assert cur._buf.device is None  # (not allocated yet)
    calls = profile(lambda: cur.__setitem__(0, 5))
    assert [c[1] for c in calls if c[0] == "backend"] == ["host_for_new"], calls
    assert cp.placement(cur) == "host" and int(cur[0]) == 5


def test_host_path_element_and_slice(host_arrays):
    a, _ = host_arrays
    m = a.reshape(20, 50)
    m[3, 4]
    keep = []
    calls = profile(lambda: keep.append(m[3, 4]))  # NumPy's element read on the kept view
    assert host_path(calls) == ["__getitem__"] and not numpy_calls(calls)
    assert type(keep[0]) is np.float32 and keep[0] == 154
    m[3, 4] = 1.0
    version = m._buf.version
    calls = profile(lambda: m.__setitem__((3, 4), 2.0))
    assert host_path(calls) == ["__setitem__"] and m._buf.version == version + 1
    assert m[3, 4] == 2.0 and a[154] == 2.0
    # slice assignment of another host array's view: NumPy's setitem between kept views
    b = cp.asarray(np.ones(1000, np.float32))
    a[1:-1] = b[1:-1]
    version = a._buf.version
    assert host_calls(lambda: a.__setitem__(slice(1, -1), b[1:-1])) == [
        "__getitem__", "object.__new__", "__setitem__"]
    assert a._buf.version == version + 1 and a[1] == 1.0
    a[1:-1] = np.arange(1.0, 999.0, dtype=np.float32)  # (back as it was)
    m[3, 4] = 2.0
    # a view: NumPy makes it on the kept view, the frame adds the result object and works
    # out its offset (``slice.indices`` only for a slice with a step or a negative start)
    for key, indices in ((slice(1, -1), 0), ((3, slice(1, -1)), 0), ((slice(None, 7), 4), 0),
                         (3, 0), ((-2, slice(-5, None)), 1),
                         ((slice(None, None, -2), slice(3, 40, 3)), 2)):
        calls = profile(lambda: keep.append(m[key]))
        assert host_path(calls) == ["__getitem__"], key
        assert numpy_calls(calls) == ["slice.indices"] * indices, (key, calls)
        v = keep[-1]
        want = np.arange(1000, dtype=np.float32).reshape(20, 50)
        want[3, 4] = 2.0
        want = want[key]
        assert v._buf is m._buf and v._base is a and v.shape == want.shape
        assert v.strides == want.strides and (v.flags.c_contiguous, v.flags.f_contiguous) == (
            want.flags.c_contiguous, want.flags.f_contiguous)
        np.testing.assert_array_equal(v.get(), want)


def test_host_path_tuple_keys_of_every_kind(host_arrays):
    """A tuple key goes to NumPy's indexing on the kept view before its types are looked at
    (an element read or a number stored needs no test of the key): every other kind of
    tuple key, and every key NumPy refuses, still gets NumPy's answer, or its error type."""
    ref = np.arange(1000, dtype=np.float32).reshape(20, 50)
    m = cp.asarray(np.arange(1000, dtype=np.float32)).reshape(20, 50)
    assert cp.placement(m) == "host"
    idx = cp.asarray(np.array([1, 3, 3]))
    keys = [(3, 4), (np.int64(3), -1), (3, slice(1, -1)), ([1, 2], [3, 4]),
            (idx, 2), (idx, idx), (Ellipsis, 4), (None, 3, 4), (3, Ellipsis),
            (np.array([True] * 20), 4), (m[0, 0:1].astype(np.int64), 7)]
    for key in keys:
        npkey = tuple(k.get() if isinstance(k, cp.ndarray) else k for k in key)
        got, want = m[key], ref[npkey]
        if np.ndim(want) == 0:
            assert type(got) is type(want) and got == want, key
        else:
            assert isinstance(got, cp.ndarray) and got.shape == want.shape, key
            np.testing.assert_array_equal(got.get(), want)
        before = m._buf.version
        m[key] = -7.0
        ref[npkey] = -7.0
        np.testing.assert_array_equal(m.get(), ref)
        assert m._buf.version > before, key
    for key in ((20, 0), (0, -51), (1.5, 2), (0, 0, 0), ("a", 1), ([20], 0)):
        npkey = key
        with pytest.raises(Exception) as want:
            ref[npkey]
        with pytest.raises(want.type):
            m[key]
        with pytest.raises(want.type):
            m[key] = 1.0
    np.testing.assert_array_equal(m.get(), ref)


VIEW = ["__getitem__", "object.__new__"]  # a view of a host array: one frame, one object
PRODUCT = VIEW + VIEW + ["matmul_operator"]  # A[i, :j] @ A[:j, j]: NumPy's scalar
RESULT = ["wrap_host", "object.__new__", "object.__new__"]  # its Buffer, its array
# the in-place op on a view, then setitem of that view onto itself: known for what it is
INPLACE_VIEW = ["inplace", "__setitem__"]

# Issue 18's statements (benchmarks/statements.py) on host arrays, and all that each calls
# outside NumPy: a frame per ndarray method the statement reaches, the result objects.
# ``A[k] op= x`` is __getitem__, the in-place op, then __setitem__ of the view onto itself,
# which copies nothing (as NumPy's does not).
HOST_STATEMENTS = [
    ("x = A[i, j]", ["__getitem__"]),  # NumPy's scalar, from the kept view
    ("A[i, j] += A[i, j - 1]", ["__getitem__", "__getitem__", "__setitem__"]),
    ("A[i, j] /= 9.0", ["__getitem__", "__setitem__"]),
    ("A[i, 1:-1] += A[i - 1, :-2]", VIEW + VIEW + INPLACE_VIEW),
    ("x = A[i, :j] @ A[:j, j]", PRODUCT),
    ("A[i, j] -= A[i, :j] @ A[:j, j]", ["__getitem__"] + PRODUCT + ["__setitem__"]),
    ("x = A * 2.0 + 1.0", ["binary"] + RESULT + ["binary"] + RESULT),
    ("x = A.sum()", ["public", "len", "host_view", "ndarray.sum", "wrap_result"]),
    ("x = 1 if A[i, j] > 0 else 0", ["__getitem__"]),
    ("x = float(A[i, j])", ["__getitem__"]),
    ("C[i, :i + 1] *= beta", VIEW + INPLACE_VIEW),
]


@pytest.mark.parametrize("statement, expected", HOST_STATEMENTS,
                         ids=[s for s, _ in HOST_STATEMENTS])
def test_host_path_statements(statement, expected):
    """Each statement, after a first run, makes exactly the calls listed, bumps the
    version of the data it writes once, and leaves the arrays and ``x`` as NumPy's run
    does."""
    from cupynum._backends import placement

    rng = np.random.default_rng(0)
    ref = {"A": rng.uniform(0.5, 1.5, (100, 100)), "C": rng.uniform(0.5, 1.5, (100, 100))}
    arrays = {k: cp.asarray(v) for k, v in ref.items()}
    if cp.placement(arrays["A"]) != "host" or placement.MODE == "random":
        pytest.skip("no host placement (CUPYNUM_PLACEMENT=device), or operands moved at random")
    ns = {}
    exec(compile(f"def run(A, C, i=50, j=50, beta=0.999):\n    x = None\n    {statement}\n"
                 f"    return x\n", __file__, "exec"), ns)
    run = ns["run"]
    run(**ref)
    run(**arrays)
    versions = {k: a._buf.version for k, a in arrays.items()}
    kept = []
    assert host_calls(lambda: kept.append(run(**arrays))) == expected
    want = run(**ref)
    for k, a in arrays.items():
        np.testing.assert_array_equal(a.get(), ref[k])
        # one write each: the in-place op's, or setitem's of an element (writing A[k]'s
        # view back onto itself writes nothing)
        assert a._buf.version - versions[k] == statement.startswith(k + "[")
    if want is not None:
        got = kept[0]
        if isinstance(want, np.ndarray):
            assert cp.placement(got) == "host"
            got = got.get()
        else:
            assert type(got) is type(want)  # NumPy's scalars, as NumPy gives
        np.testing.assert_array_equal(got, want)


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
    # one call into the backends: the backend of the operands' Buffers (which tells the
    # target's Buffer of the write), then one copy (``_backends.copy_into``)
    assert [c[1] for c in calls if c[0] == "backend"] == ["copy_into"]
    if DEVICE_BACKEND:
        from cupynum.testing import device_counters, reset_device_counters

        reset_device_counters()
        x[1:-1] = y  # (one copy: a launch on the simulated device, a memcpy on CUDA)
        counts = device_counters()
        assert counts["launches"] <= 1 and counts["h2d_bytes"] == counts["d2h_bytes"] == 0


def test_inplace_operator(arrays):
    a, b = arrays
    x = a.copy()
    x += b
    version = x._buf.version
    calls = profile(lambda: x.__iadd__(b))
    check(calls, max_python=2)  # the operator and its cache key
    assert [c[1] for c in calls if c[0] == "backend"] == [_counted("launch")]  # no allocation
    assert x._buf.version == version + 1  # the write is counted inline


def test_ufunc_out_is_its_first_input(arrays):
    """``ufunc(x, b, out=x)`` is ``x op= b``: the in-place operator's path, not ``_call``."""
    a, b = arrays
    x = a.copy()
    cp.minimum(x, b, out=x)
    calls = profile(lambda: cp.minimum(x, b, out=x))
    check(calls, max_python=3)  # ufunc.__call__, the in-place path and its cache key
    assert [c[1] for c in calls if c[0] == "backend"] == [_counted("launch")]
    np.testing.assert_array_equal(x.get(), np.minimum(a.get(), b.get()))


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

    _profiled(fn, hook)
    return [c for c in calls if c[1] not in ("setprofile",)]


def test_deferred_call(arrays, small_arrays_fuse):
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
    # inlined; the output's Buffer made there, no __init__ frame); on CUDA the check of
    # the current stream
    want = [("_ufunc_hot.py", "binary"), ("fusion.py", "defer"), ("fusion.py", "new")]
    from cupynum import _backends

    if _backends.name() == "cuda":
        want.insert(1, ("fused.py", "current_stream"))
    assert sorted(python) == want
    assert not [c for c in inner if "numpy" in c[0] or c[1].startswith("numpy")]
    assert len([c for c in inner if c[0] == "C"]) <= 15, inner  # lookups, getattr, appends, new
    assert device_counters()["launches"] == 0
