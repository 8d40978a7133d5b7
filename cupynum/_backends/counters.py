"""What the device work of this process has cost: kernel launches, bytes copied each way,
and host waits.

The CUDA backend counts its real launches and copies here; the simulated device counts what
a GPU would have paid.  ``cupynum.testing.device_counters()`` reads these counts and
``reset_device_counters()`` zeroes them; tests use them to prove that a loop launches or moves
nothing, never to time anything.  One dict, updated in place, so a count costs one item
increment on the hot path.
"""
from __future__ import annotations

COUNTS = {"launches": 0, "h2d_bytes": 0, "d2h_bytes": 0, "syncs": 0}


def snapshot() -> dict:
    """A copy of the counts."""
    return dict(COUNTS)


def reset() -> None:
    """Zero every count."""
    for key in COUNTS:
        COUNTS[key] = 0
