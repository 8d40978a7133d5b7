"""The device path of benchmarks/statements.py's statements without a GPU: per statement,
the CUDA backend's Python time per call against the fake ``libcuda.so.1`` of
tests/test_launch_paths.py (launches and copies are recorded or done in host memory,
kernels never run), and what it asks of the device (launches, syncs, bytes each way, from
``cupynum.testing.device_counters``), for one or more source trees side by side (A/B).

    python benchmarks/probes/statements_fake_probe.py TREE_A [TREE_B ...] [rounds]
    python benchmarks/probes/statements_fake_probe.py --profile 'float(A[i, j])' [TREE]

The statements are statements.py's and a few more element statements (a scalar stored, an
element used in arithmetic, an element copied); the arrays are those of statements.py
(100 x 100 float64), forced to the device
(``CUPYNUM_PLACEMENT=device``) as the issue's device column measures them.  Each round runs
every tree once in a fresh interpreter, in turn; a statement's figure is the minimum over
repeats of about a millisecond, and the table gives per tree the median over the rounds.
``--profile LABEL`` prints cProfile's table of that statement (one tree).  Driver calls
are those that allocate, copy, launch or wait (the fake driver counts them): on a GPU each
costs microseconds of host time, a wait the device's round trip too.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

CODE = r'''
import ctypes, json, sys, timeit
import numpy as np
import cupynum as cp
from cupynum.testing import device_counters, reset_device_counters
sys.path.insert(0, BENCH)
from statements import STATEMENTS, _inputs

calls = ctypes.c_uint64.in_dll(ctypes.CDLL("libcuda.so.1"), "fake_calls")
inputs = _inputs(100)
out = {}
EXTRA = [("A[i, j] = 3.0", "A[i, j] = 3.0"), ("x = A[i, j] * 2.0", "x = A[i, j] * 2.0"),
         ("A[i, j] = A[i, j-1]", "A[i, j] = A[i, j - 1]")]
for label, stmt in STATEMENTS + EXTRA:
    if PROFILE and label != PROFILE:
        continue
    env = {k: (cp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    names = sorted(env)
    ns = {}
    exec(f"def loop(count, {', '.join(names)}):\n    x = None\n"
         f"    for _ in range(count):\n        {stmt}\n    return x\n", ns)
    loop, args = ns["loop"], [env[k] for k in names]
    try:
        loop(300, *args)
    except Exception as e:  # (cuBLAS is not there: the fake driver has no libraries)
        out[label] = {"error": f"{type(e).__name__}"}
        continue
    reset_device_counters()
    c0 = calls.value
    loop(100, *args)
    counts = {k: v / 100 for k, v in device_counters().items()}
    counts["driver"] = (calls.value - c0) / 100
    if PROFILE:
        import cProfile, pstats
        pr = cProfile.Profile()
        pr.runcall(loop, 20000, *args)
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
        break
    one = min(timeit.repeat(lambda: loop(50, *args), number=1, repeat=3)) / 50
    n = max(20, int(1e-3 / max(one, 1e-7)))
    t = min(timeit.repeat(lambda: loop(n, *args), number=1, repeat=21)) / n * 1e6
    out[label] = {"us": t, **counts}
print(json.dumps(out))
'''


def run(tree, fake_dir, cache_dir, profile=None):
    env = dict(os.environ, PYTHONPATH=tree, CUPYNUM_BACKEND="cuda",
               CUPYNUM_PLACEMENT="device",
               LD_LIBRARY_PATH=f"{fake_dir}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               CUPYNUM_CACHE_DIR=os.environ.get("CUPYNUM_CACHE_DIR", cache_dir))
    code = f"BENCH = {os.path.join(tree, 'benchmarks')!r}\nPROFILE = {profile!r}\n" + CODE
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd="/tmp")
    if p.returncode:
        return {"error": p.stderr[-2500:]}
    if profile:
        print(p.stdout)
        return {}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    from percall_probe import fake_driver_dir

    args = sys.argv[1:]
    profile = None
    if args and args[0] == "--profile":
        profile = args[1]
        args = args[2:]
    rounds = int(args.pop()) if args and args[-1].isdigit() else 5
    trees = [os.path.abspath(t) for t in args] or [os.path.dirname(os.path.dirname(HERE))]
    fake_dir = fake_driver_dir()
    cache_dir = os.path.join(fake_dir, "kernel-cache")
    if profile:
        r = run(trees[0], fake_dir, cache_dir, profile)
        if "error" in r:
            print(r["error"])
        return
    results = {t: [] for t in trees}
    for _ in range(rounds):
        for t in trees:
            results[t].append(run(t, fake_dir, cache_dir))
    for t, rs in results.items():
        bad = [r for r in rs if "error" in r]
        if bad:
            print(f"== {t}: {len(bad)} of {len(rs)} runs failed")
            print(bad[0]["error"])
            return
    print(f"per statement: us (median over {rounds} rounds of the min of 21 repeats); "
          "driver calls (allocations, copies, launches, syncs), launches, syncs, d2h bytes")
    labels = list(results[trees[0]][0])
    print(f"  {'':32s}" + "".join(f"{os.path.basename(t) or t:>26s}" for t in trees))
    for k in labels:
        cells = []
        if any("error" in r[k] for t in trees for r in results[t]):
            print(f"  {k:32s}  (no library here: {results[trees[0]][0][k].get('error')})")
            continue
        for t in trees:
            us = statistics.median(r[k]["us"] for r in results[t])
            c = results[t][0][k]
            cells.append(f"{us:7.2f} {c.get('driver', -1):4.1f} {c['launches']:4.1f} "
                         f"{c['syncs']:4.1f} {c['d2h_bytes']:3.0f}")
        print(f"  {k:32s}" + "".join(f"{c:>26s}" for c in cells))


if __name__ == "__main__":
    main()
