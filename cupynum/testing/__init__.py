"""cupynum.testing: NumPy's assertions, which read cupynum arrays through ``__array__``."""
from numpy.testing import (  # noqa: F401
    assert_, assert_allclose, assert_almost_equal, assert_approx_equal, assert_array_almost_equal,
    assert_array_almost_equal_nulp, assert_array_compare, assert_array_equal, assert_array_less,
    assert_array_max_ulp, assert_equal, assert_no_warnings, assert_raises, assert_raises_regex,
    assert_string_equal, assert_warns, suppress_warnings,
)


def device_counters() -> dict:
    """What the device work of this process has cost so far, as a dict with the keys
    ``launches`` (kernel launches), ``h2d_bytes`` and ``d2h_bytes`` (bytes copied host to
    device and back) and ``syncs`` (host waits for the device).  Counted by the CUDA backend
    and the simulated device (``CUPYNUM_BACKEND=simulated``); zeros on the host backend.
    For tests that check that code launches or moves nothing, never for timing."""
    from .._backends import counters

    return counters.snapshot()


def reset_device_counters() -> None:
    """Zero the counts ``device_counters()`` reports."""
    from .._backends import counters

    counters.reset()


def place(x, where: str) -> None:
    """Move the data of cupynum array ``x`` (its whole base buffer, so every view of it) to
    ``where``: ``"host"``, ``"device"`` or ``"both"`` (docs/guide/placement.md).  For tests
    and experiments; the placement rules move data by themselves.  Does nothing without
    placement (``CUPYNUM_BACKEND=host``, ``CUPYNUM_PLACEMENT=device``)."""
    from .._backends import place as _place

    _place(x, where)
