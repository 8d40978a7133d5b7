"""Settings read from the environment once, at import."""
from __future__ import annotations

import os

_BACKENDS = ("auto", "cuda", "host", "simulated")
_FALLBACK_MODES = ("warn", "silent", "error")


def _choice(var: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(var, choices[0]).strip().lower() or choices[0]
    if value not in choices:
        raise ValueError(f"{var}={value!r}: expected one of {', '.join(choices)}")
    return value


BACKEND = _choice("CUPYNUM_BACKEND", _BACKENDS)
FALLBACK = _choice("CUPYNUM_FALLBACK", _FALLBACK_MODES)

# CUPYNUM_PROFILE=1: profile the whole program and print the table at exit (docs/guide/profiler.md).
PROFILE = os.environ.get("CUPYNUM_PROFILE", "").strip().lower() not in ("", "0", "false", "no")

# CUPYNUM_FUSION=0: run every elementwise op on device data at once, one kernel per op, instead
# of deferring chains of them into one generated kernel (docs/guide/fusion.md).  On by default.
FUSION = os.environ.get("CUPYNUM_FUSION", "1").strip().lower() not in ("0", "false", "no", "off")
# CUPYNUM_FUSION_MIN_ELEMENTS: results smaller than this run eagerly even with fusion on.  On
# the H200 a fused statement costs more Python time than its ops' launches, which a loop
# pays whenever the device keeps up: fusion loses below a few million elements and wins far
# above (docs/guide/fusion.md, "Which sizes fuse": the measured crossovers).
FUSION_MIN_ELEMENTS = int(os.environ.get("CUPYNUM_FUSION_MIN_ELEMENTS", "") or 1 << 23)

# Where new arrays start and ops run (docs/guide/placement.md).  ``auto``: arrays of at most
# PLACEMENT_THRESHOLD elements start on the host (NumPy), larger ones on the device, and the
# cost ledger moves them; ``device``: every array on the device backend (no host placement);
# ``random``: a test mode (simulated device only) that is ``auto`` plus seeded random
# migrations of operands between ops, so every coherence path runs.
_PLACEMENTS = ("auto", "device", "random")
PLACEMENT = _choice("CUPYNUM_PLACEMENT", _PLACEMENTS)
# The element count up to which a new array starts on the host: on the H200 machine (with
# fusion on) the GPU overtakes one CPU core between 2^14 and 2^16 elements (docs/internals.md).
DEFAULT_PLACEMENT_THRESHOLD = 32768


def _int_setting(var: str, default: int) -> int:
    value = os.environ.get(var, "").strip()
    if not value:
        return default
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{var}={value!r}: expected a number of elements") from None
    if n < 0:
        raise ValueError(f"{var}={value!r}: expected a number of elements >= 0")
    return n


PLACEMENT_THRESHOLD = _int_setting("CUPYNUM_PLACEMENT_THRESHOLD", DEFAULT_PLACEMENT_THRESHOLD)
# CUPYNUM_PLACEMENT=random: the seed of its migrations (a failing run repeats with it).
PLACEMENT_SEED = _int_setting("CUPYNUM_PLACEMENT_SEED", 0)
