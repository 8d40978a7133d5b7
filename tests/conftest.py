"""Test setup: the same suite runs on the host backend (CI) and on CUDA (GPU machine)."""
import os
import warnings

import pytest

os.environ.setdefault("CUPYNUM_FALLBACK", "silent")

import cupynum  # noqa: E402
from cupynum import _backends  # noqa: E402


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
