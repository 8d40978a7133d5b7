"""Device element-read statements, us per statement: a loop of 2,000 on a 100x100 float64
array closed by one sync, best of 9 rounds; where the tree has the knob, the pinned scratch
block of small reads (``tuning.MEMORY.small_read_pinned``) on and off in alternating rounds.

    CUPYNUM_PLACEMENT=device PYTHONPATH=<tree> python benchmarks/probes/element_read_probe.py LABEL

(Run it with another tree first on PYTHONPATH to compare two commits in turns.)"""
import sys, time
import numpy as np
import cupynum as cp
STMTS = ["f = float(A[i, j])", "if A[i, j] > 0: pass", "A[i, j] += A[i, j-1]",
         "A[i, j] /= 9.0", "x = A[i, j]"]
try:
    from cupynum._backends.cuda import memory, tuning
    knob = hasattr(tuning.MEMORY, "small_read_pinned")
except ImportError:
    knob = False
A = cp.asarray(np.random.default_rng(0).uniform(0.5, 1.5, (100, 100)))
i = j = 50
N, R = 2000, 9
def loop_of(stmt):
    ns = {}
    exec(f"def loop(A, i, j):\n    for _ in range({N}):\n        {stmt}\n", ns)
    return ns["loop"]
modes = [True, False] if knob else [None]
res = {}
for stmt in STMTS:
    fn = loop_of(stmt)
    fn(A, i, j); cp.cuda.synchronize()
    best = {m: 1e9 for m in modes}
    for r in range(R):
        for m in modes:
            if m is not None:
                tuning.override("MEMORY", small_read_pinned=m)
                if hasattr(memory._scratch, "block"):
                    del memory._scratch.block
            t = time.perf_counter(); fn(A, i, j); cp.cuda.synchronize()
            best[m] = min(best[m], (time.perf_counter() - t) / N * 1e6)
    for m in modes:
        print(f"{sys.argv[1]:6s} pinned={m!s:5s} {stmt:28s} {best[m]:7.2f} us")
if knob:
    tuning.reset()
