"""Per-call time of small statements (n=1000 float32) in fresh processes, for two source
trees side by side (A/B), and whether the pool fences frees after a large transfer.

    python benchmarks/probes/chain_ab_probe.py TREE_A TREE_B [rounds]

Each round runs every tree once in a new interpreter (alternating), so host drift falls on
both; the figures are the medians of the rounds.
"""
import json
import os
import statistics
import subprocess
import sys

CODE = r'''
import json, sys, timeit
import numpy as np
import cupynum as cp
from cupynum._backends.cuda import runtime
a = cp.asarray(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
b = a + 1
def chain9(a):
    return ((((a * 1.5 + 2.0) * a - 0.5) * 0.25 + a) * a - 1.0) * 2.0
cases = {"a + b": lambda: a + b, "a * 2.0": lambda: a * 2.0, "9-op chain": lambda: chain9(a)}
def per_call(fn, n=2000):
    for _ in range(500): fn()
    runtime.synchronize()
    best = min(timeit.repeat(fn, number=n, repeat=5)) / n
    runtime.synchronize()
    return best * 1e6
out = {k: per_call(f) for k, f in cases.items()}
big = cp.asarray(np.ones(2**27, np.float32))  # 512 MiB through the transfer path
out["streams known after a 512 MiB transfer"] = len(getattr(runtime, "known_streams", {}))
out.update({k + " (after)": per_call(f) for k, f in cases.items()})
print(json.dumps(out))
'''


def run(tree):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [tree] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    p = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env,
                       cwd="/tmp")
    if p.returncode:
        return {"error": p.stderr[-1500:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    trees = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    results = {t: [] for t in trees}
    for _ in range(rounds):
        for t in trees:
            results[t].append(run(t))
    for t, rs in results.items():
        ok = [r for r in rs if "error" not in r]
        print(f"== {t} ({len(ok)} of {len(rs)} runs)")
        if len(ok) < len(rs):
            print(next(r["error"] for r in rs if "error" in r))
        for k in (ok[0] if ok else {}):
            print(f"  {k:45s} {statistics.median(r[k] for r in ok):9.2f}")


if __name__ == "__main__":
    main()
