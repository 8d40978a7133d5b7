"""The examples under ``auto`` and ``device`` placement, fused and eager, alternating in one
process.

Issue 17's before/after under the default placement found the examples slower at the
head, but on the H200 machine the same tree's examples vary by up to 1.7x from one process
to the next (a profile showed every function slower alike: the CPU's speed, not the code).
Here the modes run in one process, one call each in turn, so that a slow phase of the
machine falls on all of them:

* ``auto`` / ``device``: ``_backends._single`` is None / the device backend (what ``get()``
  sets from CUPYNUM_PLACEMENT; nothing else differs);
* ``-eager``: ``fusion.MIN_ELEMENTS`` past every size, so nothing defers (the floor is read
  at each call; CUPYNUM_FUSION_MIN_ELEMENTS sets it at import).

Each mode has its own inputs, made under it, so that one's migrations do not move
another's data.

    CUPYNUM_BACKEND=cuda python benchmarks/probes/placement_ab_probe.py [ROUNDS] [NAME ...]

Per example and mode: the best and the median wall time of one run closed by a sync, after
two warm-up runs, and each best over the best of ``device``.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _probe_util  # noqa: E402,F401  (the repository root on sys.path)

import cupynum as cp  # noqa: E402
from cupynum import _backends  # noqa: E402
from cupynum._backends import fusion  # noqa: E402

sys.path.insert(0, os.path.join(_probe_util.REPO_ROOT, "benchmarks"))
import example_workloads as ew  # noqa: E402

MODES = ("auto", "device", "auto-eager", "device-eager")
FLOOR = fusion.MIN_ELEMENTS


def switch(mode):
    """Put the process in ``mode``."""
    _backends._single = _backends.get() if mode.startswith("device") else None
    fusion.MIN_ELEMENTS = 1 << 62 if mode.endswith("eager") else FLOOR


def main(rounds, names):
    backend = _backends.get()
    print(f"fusion floor {FLOOR} elements; {rounds} rounds", flush=True)
    for name in names:
        inputs, fn, *_ = ew.prepare(name, "medium")
        args = {}
        for mode in MODES:
            switch(mode)
            args[mode] = [cp.asarray(x) for x in inputs]
            for _ in range(2):
                fn(cp, *args[mode])
            backend.synchronize()
        times = {mode: [] for mode in MODES}
        for r in range(rounds):
            for mode in (MODES if r % 2 == 0 else MODES[::-1]):
                switch(mode)
                t0 = time.perf_counter()
                fn(cp, *args[mode])
                backend.synchronize()
                times[mode].append(time.perf_counter() - t0)
        switch("auto")
        ref = min(times["device"])
        cells = [f"{mode} {min(t) * 1e3:.3f}/{statistics.median(t) * 1e3:.3f} "
                 f"({min(t) / ref:.2f})" for mode, t in times.items()]
        print(f"{name:18s} ms best/median (best/device's): " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 10
    main(n, [a for a in sys.argv[1:] if not a.isdigit()] or ew.NAMES)
