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
