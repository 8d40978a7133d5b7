"""The host path's per-call cost beside NumPy's (issue 18 item 7: at most about 1 us more).

Each statement of the host path (operators, in-place operators, ufuncs, element and slice
indexing, setitem, ``sum``, ``dot``/``@``) on small float64 arrays, timed with ``timeit``
(best of 7 repeats) for NumPy and for cupynum with the arrays on the host.  No GPU needed:

    CUPYNUM_BACKEND=simulated python benchmarks/probes/host_path_probe.py

(``host`` works too: every array is then on the host.)  Prints one row per statement: NumPy
us, cupynum us, and the difference.
"""
from __future__ import annotations

import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import log  # noqa: E402

import numpy as np  # noqa: E402

import cupynum as cp  # noqa: E402

STATEMENTS = [
    "a + b", "a * 2.0", "-a", "xp.sqrt(a)", "c.__iadd__(b)", "c.__imul__(2.0)",
    "A[i, j]", "A[i]", "a[1:-1]", "A[i, 1:-1]", "A[i, j] = 3.0", "a[1:-1] = b[1:-1]",
    "A[i, j] += A[i, j - 1]", "A[i, 1:-1] += A[i - 1, :-2]", "a.sum()", "xp.sum(A)",
    "a @ b", "xp.dot(a, b)", "A @ A", "A[i, :j] @ A[:j, j]", "B = A * 2.0 + 1.0",
    "if A[i, j] > 0: pass", "float(A[i, j])",
]


def env(xp):
    rng = np.random.default_rng(0)
    a, b = rng.random(100), rng.random(100)
    A = rng.random((100, 100))
    if xp is cp:
        a, b, A = cp.asarray(a), cp.asarray(b), cp.asarray(A)
        for x in (a, b, A):
            assert cp.placement(x) in ("host", "both"), cp.placement(x)
    return {"xp": xp, "a": a, "b": b, "c": a.copy(), "A": A, "i": 7, "j": 11}


def best_us(stmt, namespace, number=20000):
    t = timeit.Timer(stmt, globals=namespace)
    return min(t.repeat(7, number)) / number * 1e6


def main():
    log(f"{'statement':32s} {'NumPy us':>9s} {'cupynum us':>11s} {'extra us':>9s}")
    for stmt in STATEMENTS:
        base = best_us(stmt, env(np))
        ours = best_us(stmt, env(cp))
        log(f"{stmt:32s} {base:9.3f} {ours:11.3f} {ours - base:9.3f}")


if __name__ == "__main__":
    main()
