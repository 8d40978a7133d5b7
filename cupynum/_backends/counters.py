"""What the device work of this process has cost: kernel launches, bytes copied each way,
and host waits.

The CUDA backend counts its real launches and copies here; the simulated device counts what
a GPU would have paid.  ``cupynum.testing.device_counters()`` reads these counts and
``reset_device_counters()`` zeroes them; tests use them to prove that a loop launches or moves
nothing, never to time anything.

Writers update ``COUNTS`` in place (``COUNTS["syncs"] += 1``: one dict item).  A launch may
instead be counted by ``next(LAUNCH_TICKS)``, a C call that costs about half the dict item's
increment; the CUDA backend's launch paths do.  So the number of launches is the item plus
the ticks: read the counts through ``snapshot()`` (or ``launches()``), never
``COUNTS["launches"]`` alone.
"""
from __future__ import annotations

import itertools

COUNTS = {"launches": 0, "h2d_bytes": 0, "d2h_bytes": 0, "syncs": 0}
LAUNCH_TICKS = itertools.count()  # launches counted by next(LAUNCH_TICKS)
_ticks_at_reset = 0


def _ticks() -> int:
    """How often ``LAUNCH_TICKS`` was advanced, read without advancing it (its repr is
    ``count(N)``)."""
    return int(repr(LAUNCH_TICKS)[6:-1])


def launches() -> int:
    """Launches since the last ``reset``."""
    return COUNTS["launches"] + _ticks() - _ticks_at_reset


def snapshot() -> dict:
    """A copy of the counts."""
    out = dict(COUNTS)
    out["launches"] = launches()
    return out


def reset() -> None:
    """Zero every count."""
    global _ticks_at_reset
    _ticks_at_reset = _ticks()
    for key in COUNTS:
        COUNTS[key] = 0
