"""Test setup: the same suite runs on the host backend (CI) and on CUDA (GPU machine)."""
import os
import warnings

import pytest

os.environ.setdefault("CUPYNUM_FALLBACK", "silent")

import cupynum  # noqa: E402
from cupynum import _backends  # noqa: E402

# The tests work with the backend objects themselves: the device backend, which under
# ``auto`` is made at its first use, is made now (tests/test_startup.py checks the deferral
# in fresh processes).
_backends.make_device()


def pytest_report_header(config):
    return f"cupynum backend: {_backends.name()}"


def pytest_collection_modifyitems(config, items):
    if _backends.name() == "cuda":
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (CUPYNUM_BACKEND=cuda on a GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_fallback_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cupynum.FallbackWarning)
        yield


@pytest.fixture
def device_placement():
    """New arrays and ops on the device backend, as under ``CUPYNUM_PLACEMENT=device``: for
    tests of device paths whose arrays are small enough to start on the host under ``auto``
    (docs/guide/placement.md).  Nothing changes on the host backend."""
    saved = _backends._single
    _backends._single = _backends.get()
    try:
        yield
    finally:
        _backends._single = saved


@pytest.fixture
def small_arrays_fuse(monkeypatch):
    """Fusion defers results of any size (its size floor, ``fusion.MIN_ELEMENTS``, is a few
    million elements by default): for tests of the deferral itself on small arrays."""
    from cupynum._backends import fusion

    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 0)


@pytest.fixture
def fusion_arrays_on_device(monkeypatch, small_arrays_fuse):
    """For the fusion tests: new arrays start on the device whatever their size (under
    placement), and neither the cost ledger nor CUPYNUM_PLACEMENT=random's migrations move
    them (tiny arrays swept by a few ops would move to the host, where nothing defers); small
    results fuse (``small_arrays_fuse``)."""
    from cupynum._backends import placement

    _backends.get()
    monkeypatch.setattr(placement, "THRESHOLD_BYTES", -1)
    monkeypatch.setattr(_backends, "_chaos", None)
    monkeypatch.setattr(placement, "record",
                        lambda buf, side, elements, extra=0.0, offset=-1: False)


@pytest.fixture(scope="module")
def fused_kernels_at_once():
    """On the GPU, compile each fused structure the first time it is seen (the default
    waits for the second), so the fusion tests run the generated kernels, not the table's."""
    if _backends.name() != "cuda":
        yield
        return
    from cupynum._backends.cuda import tuning

    with tuning.overridden("FUSION", compile_after=1):
        yield
