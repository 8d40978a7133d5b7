"""cupynum's asv benchmark suite (asv.conf.json at the repository root).

Runs against whichever backend cupynum selects (``CUPYNUM_BACKEND``: the CUDA backend on a
GPU machine, the host backend elsewhere).  With ``"environment_type": "existing"`` asv
does not install cupynum, so the repository root goes first on ``sys.path`` here: the
benchmarks measure the working tree.
"""
import os
import sys

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
for _p in (_ROOT, os.path.join(_ROOT, "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)
# timeraw_ benchmarks run in fresh interpreters: they find the working tree the same way.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [_ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
os.environ.setdefault("CUPYNUM_FALLBACK", "silent")  # fallbacks are timed, not announced
