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
