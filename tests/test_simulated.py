"""The simulated device (``CUPYNUM_BACKEND=simulated``, cupynum/_backends/simulated.py): what
it counts in ``cupynum.testing.device_counters()`` and that its memory is its own.  These
run when the suite runs on the simulated device (CI runs it there as well as on the host)."""
import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum._backends.simulated import device_view
from cupynum.testing import device_counters, reset_device_counters

# device paths: every array on the device, as under CUPYNUM_PLACEMENT=device
pytestmark = pytest.mark.usefixtures("device_placement")

on_simulated = pytest.mark.skipif(_backends.name() != "simulated",
                                  reason="needs CUPYNUM_BACKEND=simulated")


def _counted(fn):
    """The counts of running ``fn()`` alone."""
    reset_device_counters()
    fn()
    return device_counters()


def _counts(launches=0, h2d_bytes=0, d2h_bytes=0, syncs=0):
    return {"launches": launches, "h2d_bytes": h2d_bytes, "d2h_bytes": d2h_bytes,
            "syncs": syncs}


def test_counters_have_exactly_the_four_keys():
    assert set(device_counters()) == {"launches", "h2d_bytes", "d2h_bytes", "syncs"}
    reset_device_counters()
    assert device_counters() == _counts()


@pytest.mark.skipif(_backends.name() != "host", reason="the host backend's counts")
def test_host_backend_counts_nothing():
    a = cp.arange(10.0)
    assert _counted(lambda: float((a + a).sum())) == _counts()


@on_simulated
def test_binary_op_is_one_launch_and_no_transfer():
    a, b = cp.arange(10.0), cp.ones(10)
    # (with fusion the op waits until its data is read: on_device() is that read)
    assert _counted(lambda: (a + b)._buf.on_device()) == _counts(launches=1)
    assert _counted(lambda: cp.add(a, 1.5)._buf.on_device()) == _counts(launches=1)


@on_simulated
def test_augmented_slice_assignment_is_one_launch():
    """``A[1, 1:-1] += x`` is __getitem__, the in-place add, then __setitem__ of that view
    onto itself, which copies nothing (as NumPy's setitem does)."""
    a = cp.arange(20.0).reshape(4, 5)
    want = np.arange(20.0).reshape(4, 5)
    want[1, 1:-1] += want[0, :-2]

    def statement():
        a[1, 1:-1] += a[0, :-2]

    assert _counted(statement) == _counts(launches=1)
    np.testing.assert_array_equal(a.get(), want)


@on_simulated
def test_reduction_is_one_launch():
    a = cp.arange(12.0).reshape(3, 4)
    assert _counted(lambda: a.sum(axis=0)) == _counts(launches=1)


@pytest.mark.parametrize("host", [np.ones(100), np.arange(12, dtype=np.int16).reshape(3, 4),
                                  np.ones((4, 6), np.float32)[:, ::2]])
@on_simulated
def test_asarray_copies_nbytes_to_the_device(host):
    assert _counted(lambda: cp.asarray(host)) == _counts(h2d_bytes=host.nbytes)


@on_simulated
def test_reads_copy_to_the_host_and_wait():
    x = cp.arange(10.0)
    assert _counted(lambda: float(x[3])) == _counts(d2h_bytes=8, syncs=1)
    assert _counted(x.get) == _counts(d2h_bytes=x.nbytes, syncs=1)
    assert _counted(lambda: np.asarray(x)) == _counts(d2h_bytes=x.nbytes, syncs=1)
    _backends.get().synchronize()  # (runs what earlier tests left pending, if anything)
    assert _counted(_backends.get().synchronize) == _counts(syncs=1)


@on_simulated
def test_writes_from_the_host_count_their_bytes():
    x = cp.zeros((3, 4))
    assert _counted(lambda: x.__setitem__(1, np.arange(4.0)))["h2d_bytes"] == 32


@on_simulated
def test_device_memory_never_aliases_the_users_arrays():
    src = np.arange(5.0)
    x = cp.asarray(src)
    src[0] = 99.0  # the source changes after the copy: the device array does not
    np.testing.assert_array_equal(x.get(), np.arange(5.0))
    for read in (np.asarray, lambda a: a.get(), lambda a: np.array(a, copy=None)):
        h = read(x)
        h[1] = 42.0  # a host view is a copy: the device array does not change
        np.testing.assert_array_equal(x.get(), np.arange(5.0))
    assert not np.shares_memory(np.asarray(x), device_view(x))


@on_simulated
def test_simulated_device_is_a_device():
    b = _backends.get()
    assert not b.host_memory and not b.cuda_memory
    x = cp.arange(4)
    assert repr(x.device) == "cpu"  # (not CUDA memory: no CUDA device to name)
    with pytest.raises(AttributeError):
        x.__cuda_array_interface__
    # DLPack exports a copy of the values, which the user's array does not share
    h = np.from_dlpack(x)
    np.testing.assert_array_equal(h, np.arange(4))
    assert not np.shares_memory(h, device_view(x))
