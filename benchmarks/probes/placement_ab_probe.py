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

    CUPYNUM_BACKEND=cuda python benchmarks/probes/placement_ab_probe.py [ROUNDS] [NAME ...] \
        [--modes auto,device] [--profile]

Per example and mode: the best and the median wall time of one run closed by a sync, after
two warm-up runs, and each best over the best of ``device``.  ``--profile`` then profiles
``ROUNDS`` runs of each mode, in turns, each mode with a cProfile of its own, and prints the
functions whose own time differs most between the first two modes (the same calls taking
longer in one mode are the code; every function slower alike would be the machine).
"""
import cProfile
import pstats
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


def main(rounds, names, modes=MODES, profile=False):
    backend = _backends.get()
    print(f"fusion floor {FLOOR} elements; {rounds} rounds", flush=True)
    for name in names:
        inputs, fn, *_ = ew.prepare(name, "medium")
        args = {}
        for mode in modes:
            switch(mode)
            args[mode] = [cp.asarray(x) for x in inputs]
            for _ in range(2):
                fn(cp, *args[mode])
            backend.synchronize()
        times = {mode: [] for mode in modes}
        for r in range(rounds):
            for mode in (modes if r % 2 == 0 else modes[::-1]):
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
        if profile:
            compare_profiles(name, fn, args, modes[:2], rounds, backend)
        switch("auto")


def compare_profiles(name, fn, args, modes, rounds, backend):
    profiles = {mode: cProfile.Profile() for mode in modes}
    for r in range(rounds):
        for mode in (modes if r % 2 == 0 else modes[::-1]):
            switch(mode)
            profiles[mode].enable()
            fn(cp, *args[mode])
            backend.synchronize()
            profiles[mode].disable()
    stats = {mode: pstats.Stats(p).stats for mode, p in profiles.items()}
    a, b = (stats[m] for m in modes)
    own = {}  # function -> (calls and own seconds in each mode)
    for key in set(a) | set(b):
        ca, ta = (a[key][1], a[key][2]) if key in a else (0, 0.0)
        cb, tb = (b[key][1], b[key][2]) if key in b else (0, 0.0)
        own[key] = (ca, ta, cb, tb)
    total = [sum(v[i] for v in own.values()) for i in (1, 3)]
    print(f"  {name}: own time per run, {modes[0]} {total[0] / rounds * 1e3:.3f} ms, "
          f"{modes[1]} {total[1] / rounds * 1e3:.3f} ms; the largest differences "
          f"(us per run; calls per run):")
    largest = sorted(own.items(), key=lambda kv: -abs(kv[1][1] - kv[1][3]))[:25]
    for key, (ca, ta, cb, tb) in largest:
        where = f"{os.path.basename(key[0])}:{key[1]}:{key[2]}"
        us = [t / rounds * 1e6 for t in (ta - tb, ta, tb)]
        print(f"    {us[0]:+9.1f}  {us[1]:9.1f} {us[2]:9.1f}  {ca // rounds:6d} {cb // rounds:6d}"
              f"  {where}", flush=True)


if __name__ == "__main__":
    argv = sys.argv[1:]
    flags = [a for a in argv if a.startswith("--")]
    modes = next((tuple(f.split("=", 1)[1].split(",")) for f in flags
                  if f.startswith("--modes=")), MODES)
    words = [a for a in argv if not a.startswith("--")]
    n = int(words[0]) if words and words[0].isdigit() else 10
    main(n, [a for a in words if not a.isdigit()] or ew.NAMES, modes, "--profile" in flags)
