"""What ``auto`` placement's per-op decision costs on device data, in one process.

heat_equation's ops on views of a 514x514 float64 array on the device, timed in three modes
that alternate round by round (so that the machine's slow phases fall on all of them):

* ``auto``: placement decides each op (``_backends.for_result`` on the general path);
* ``device``: ``_backends._single`` is the device backend, as CUPYNUM_PLACEMENT=device;
* ``auto-free``: ``auto`` with ``_backends.for_result`` and ``for_operands`` (the layout
  path's) replaced by functions that return the device backend at once (what a free
  decision would cost: the call alone; ops over settled Buffers skip both anyway).

Each mode has its own arrays.  Prints the best per-statement time of each mode, us.

    CUPYNUM_BACKEND=cuda python benchmarks/probes/placement_cost_probe.py [ROUNDS]
"""
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _probe_util  # noqa: E402,F401  (the repository root on sys.path)

import numpy as np  # noqa: E402

import cupynum as cp  # noqa: E402
from cupynum import _backends  # noqa: E402

MODES = ("auto", "device", "auto-free")
STATEMENTS = ("a + b", "a * 0.2", "4 * a", "c - t", "u[1:-1, 1:-1] = t", "u[1:-1, 1:-1]")


def main(rounds):
    device = _backends.get()
    decide, decide_layout = _backends.for_result, _backends.for_operands

    def switch(mode):
        free = mode == "auto-free"
        _backends._single = device if mode == "device" else None
        _backends.for_result = (lambda nbytes, *ops: device) if free else decide
        _backends.for_operands = (lambda ops, nbytes: device) if free else decide_layout

    spaces = {}
    for mode in MODES:
        switch(mode)
        u = cp.asarray(np.random.default_rng(0).random((514, 514)))
        spaces[mode] = dict(u=u, a=u[2:, 1:-1], b=u[:-2, 1:-1], c=u[1:-1, 1:-1],
                            t=u[2:, 1:-1] + u[:-2, 1:-1])
    best = {(m, s): float("inf") for m in MODES for s in STATEMENTS}
    for r in range(rounds):
        for mode in (MODES if r % 2 else MODES[::-1]):
            switch(mode)
            for stmt in STATEMENTS:
                t = min(timeit.repeat(stmt, globals=spaces[mode], number=3000, repeat=3)) / 3000
                best[(mode, stmt)] = min(best[(mode, stmt)], t)
            device.synchronize()
    switch("auto")
    print("| statement | " + " | ".join(MODES) + " |")
    print("|---|" + "---:|" * len(MODES))
    for stmt in STATEMENTS:
        print(f"| `{stmt}` | " + " | ".join(f"{best[(m, stmt)] * 1e6:.2f}" for m in MODES) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
