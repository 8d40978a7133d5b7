"""side_by_side's rows for this tree and an older one, in two live processes that take turns
sample by sample (issue 17's before/after check).

On the GPU machine the speed of a process's CPU changes by up to 1.7x from one run to the
next, and over seconds within a run, so a tree timed in its own process (compare_trees.sh)
can come out faster or slower than the other by more than anything sought.  Here both trees
are loaded once, each in a worker process of its own, and the coordinator asks them in turn
for one sample of one row at a time (new, old, old, new, ...): a slow phase of the machine
lasts many samples, so it falls on both trees alike, and the ratio of their medians is
what the code does.

    OLD=.before OLD_CACHE=/tmp/kc-before python3 benchmarks/pingpong_trees.py \\
        [--rounds 15] [--only "n=1000,example"]

OLD holds the older tree's cupynum/ and kernels/ (this tree's side_by_side.py,
example_workloads.py, report.py and examples/ are copied in, as compare_trees.sh does);
OLD_CACHE is its kernel cache.  CUPYNUM_PLACEMENT and the rest of the environment apply to
both.  A worker's sample is side_by_side's: the wall time per call of 20,000 calls closed by
a sync for a per-call row, one run closed by a sync for an example.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def worker(only):
    """Serve samples on stdin/stdout: the line ``i`` answers one sample of row ``i`` (its
    seconds, as JSON); the first line out lists the rows."""
    sys.path.insert(0, HERE)
    import side_by_side as sbs

    libs = sbs.load_libraries(with_cupy=False)
    xp = libs["cupynum"]
    rows, samplers = [], []
    for w in sbs.workloads(False):  # (the examples among them)
        if not any(o in w["name"] for o in only) or w["kind"] not in ("call", "example"):
            continue
        args = [xp.asarray(x) for x in w["inputs"]]
        fn = (lambda args=args, f=w["fn"]: sbs.computed(f(xp, *args)))
        if w["per_call"]:
            loop = sbs.statement_loop(w["stmt"], xp, args) if w.get("stmt") else None
            warm_up, sample = sbs.call_sampler(xp, fn, 20000, loop)
        else:
            warm_up, sample = sbs.device_sampler(xp, fn, 1)
        warm_up()
        rows.append(w["name"])
        samplers.append(sample)
    print(json.dumps(rows), flush=True)
    for line in sys.stdin:
        print(json.dumps(samplers[int(line)]()), flush=True)


def start(root, cache, only):
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.abspath(p) != ROOT]  # (each worker imports its own tree)
    env = dict(os.environ, CUPYNUM_CACHE_DIR=cache, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(path))
    proc = subprocess.Popen([sys.executable, os.path.join(root, "benchmarks", "pingpong_trees.py"),
                             "--worker", "--only", ",".join(only)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    return proc


def ask(proc, i):
    proc.stdin.write(f"{i}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default="n=1000,example")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    only = args.only.split(",")
    if args.worker:
        return worker(only)
    old = os.environ["OLD"]
    os.makedirs(os.path.join(old, "benchmarks"), exist_ok=True)
    os.makedirs(os.path.join(old, "examples"), exist_ok=True)
    for name in ("side_by_side.py", "report.py", "example_workloads.py", "pingpong_trees.py"):
        shutil.copy(os.path.join(HERE, name), os.path.join(old, "benchmarks", name))
    for name in os.listdir(os.path.join(ROOT, "examples")):
        if name.endswith(".py"):
            shutil.copy(os.path.join(ROOT, "examples", name), os.path.join(old, "examples", name))
    new_cache = os.environ.get("CUPYNUM_CACHE_DIR", "/tmp/cupynum-cache")
    # (both start at once: each builds every side_by_side workload's inputs, 2^28-element
    # arrays included, before it lists its rows; about a minute on the GPU machine)
    started = {"new": start(ROOT, new_cache, only),
               "old": start(old, os.environ.get("OLD_CACHE", os.path.join(old, ".kcache")), only)}
    procs = {tree: (proc, json.loads(proc.stdout.readline())) for tree, proc in started.items()}
    rows = procs["new"][1]
    if procs["old"][1] != rows:
        raise SystemExit(f"the trees list different rows: {rows} / {procs['old'][1]}")
    times = {tree: [[] for _ in rows] for tree in procs}
    for r in range(args.rounds):
        for i in range(len(rows)):
            for tree in (("new", "old") if (r + i) % 2 == 0 else ("old", "new")):
                times[tree][i].append(ask(procs[tree][0], i))
    for proc, _ in procs.values():
        proc.stdin.close()
        proc.wait()
    print(f"{args.rounds} samples per tree and row, taken in turns; times in us")
    print("| row | this tree: median (min-max) | older tree: median (min-max) | "
          "median / median | min / min | samples where this tree was faster | sign test p |")
    print("|---|---|---|---:|---:|---:|---:|")
    for i, name in enumerate(rows):
        a, b = times["new"][i], times["old"][i]
        faster = sum(x < y for x, y in zip(a, b))
        cells = [f"{statistics.median(t) * 1e6:.2f} ({min(t) * 1e6:.2f}-{max(t) * 1e6:.2f})"
                 for t in (a, b)]
        ratios = [f"{x / y:.3f}" if y else "-" for x, y in ((statistics.median(a),
                                                             statistics.median(b)),
                                                            (min(a), min(b)))]
        print(f"| {name} | {cells[0]} | {cells[1]} | {ratios[0]} | {ratios[1]} | "
              f"{faster}/{len(a)} | {sign_test(faster, len(a)):.3f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "times": times}, f)


def sign_test(k: int, n: int) -> float:
    """Two-sided sign test: the chance of a split at least as uneven as ``k`` of ``n`` pairs
    if neither tree were faster (a row is slower or faster "beyond noise" below 0.05)."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


if __name__ == "__main__":
    main()
