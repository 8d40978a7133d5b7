"""``a[idx]`` (2^26 of 2^28 float32) under knob settings of the checked gather, each timed
beside CuPy's ``a[idx]`` the way ``side_by_side.py`` times that row, in rounds:

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/gather_ab_probe.py [ROUNDS]

Every round times each setting once, cupynum and CuPy interleaved (``time_interleaved``:
20 samples of 5 calls between CUDA events), so a drift of the clocks falls on both; the
ratio of a setting is the median of its per-round ratios.  The differences chased here are
a few tenths of a per cent, under the run-to-run noise of one bench row.
"""
from __future__ import annotations

import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
import side_by_side as sbs  # noqa: E402
from _probe_util import import_cupy  # noqa: E402

import cupynum as cpn  # noqa: E402
from cupynum._backends.cuda import tuning  # noqa: E402

SIGNAL = dict(early_signal=True)
SETTINGS = {  # name -> tuning.GATHER knobs (the rest at their defaults)
    "default": {},
    "ILP 4, DIV 16, index ldg": dict(SIGNAL, signal_ilp=4, signal_tail_div=16,
                                     signal_idx_load="ldg"),
    "ILP 1, DIV 32, index ldg": dict(SIGNAL, signal_tail_div=32,
                                     signal_idx_load="ldg"),
    "ILP 1, DIV 32": dict(SIGNAL, signal_tail_div=32),
    "ILP 1, DIV 40": dict(SIGNAL, signal_tail_div=40),
    "ILP 1, DIV 64": dict(SIGNAL, signal_tail_div=64),
    "signal off": dict(early_signal=False),
}


def main():
    cupy = import_cupy(need_device=True)
    if cupy is None:
        print("CuPy is missing: nothing to compare with")
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    rng = np.random.default_rng(0)
    n = 2**28
    h = rng.standard_normal(n, dtype=np.float32)
    ix = rng.integers(0, n, n // 4)
    a, i = cpn.asarray(h), cpn.asarray(ix)
    ka, ki = cupy.asarray(h), cupy.asarray(ix)
    times = {s: [] for s in SETTINGS}
    ratios = {s: [] for s in SETTINGS}
    for r in range(rounds):
        for s, knobs in SETTINGS.items():
            tuning.reset("GATHER")
            tuning.override("GATHER", **knobs)
            ok = np.array_equal(cpn.asnumpy(a[i]), h[ix])
            t = sbs.time_interleaved({
                "cupynum": (*sbs.device_sampler(cpn, lambda: a[i], 5), 20),
                "cupy": (*sbs.device_sampler(cupy, lambda: ka[ki], 5), 20)})
            times[s].append(t["cupynum"] * 1e6)
            ratios[s].append(t["cupynum"] / t["cupy"])
            print(f"round {r} {s:28s} {'PASS' if ok else 'FAIL'} cupynum "
                  f"{t['cupynum'] * 1e6:8.1f} us  CuPy {t['cupy'] * 1e6:8.1f} us  "
                  f"ratio {ratios[s][-1]:.4f}", flush=True)
    tuning.reset("GATHER")
    print("setting                      median us  ratio to CuPy (median; per round)")
    for s in SETTINGS:
        print(f"{s:28s} {statistics.median(times[s]):9.1f}  {statistics.median(ratios[s]):.4f}"
              "  (" + " ".join(f"{x:.4f}" for x in ratios[s]) + ")")


if __name__ == "__main__":
    main()
