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
        [--rounds 15] [--only "n=1000,example"] [--procs 3]

OLD holds the older tree's cupynum/ and kernels/ (this tree's side_by_side.py,
example_workloads.py, report.py and examples/ are copied in, as compare_trees.sh does);
OLD_CACHE is its kernel cache.  CUPYNUM_PLACEMENT and the rest of the environment apply to
both, but for OLD_ENV ("NAME=VALUE ..."), which the older tree's workers get besides: with
``OLD=. OLD_ENV=CUPYNUM_PLACEMENT=device`` under ``CUPYNUM_PLACEMENT=auto`` it compares two
placements of this tree.  A worker's sample is side_by_side's: the wall time per call of
20,000 calls closed by a sync for a per-call row, one run closed by a sync for an example.

A process's speed also differs from another's for its whole life (up to 1.5x on the GPU
machine, every row alike), which would bias every row of one tree.  ``--procs K`` starts K
workers per tree and takes round r from the r-th pair (mod K), so each tree's samples come
from K processes.  A worker builds only the rows it serves (the per-call rows at their
1,000 elements, the examples at their benchmark size).
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
    # (the per-call rows from the quick list: they are the same there, without its 2^28-element
    # arrays; the examples at their benchmark size)
    chosen = [w for w in sbs.workloads(True) if w["kind"] == "call"]
    chosen += sbs.example_workloads(False)
    for w in chosen:
        if not any(o in w["name"] for o in only):
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


def start(root, cache, only, extra_env=()):
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.abspath(p) != ROOT]  # (each worker imports its own tree)
    env = dict(os.environ, CUPYNUM_CACHE_DIR=cache, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(path))
    env.update(extra_env)
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
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    only = args.only.split(",")
    if args.worker:
        return worker(only)
    old = os.path.abspath(os.environ["OLD"])
    old_env = dict(item.split("=", 1) for item in os.environ.get("OLD_ENV", "").split())
    if old != ROOT:
        copy_benchmarks(old)
    new_cache = os.environ.get("CUPYNUM_CACHE_DIR", "/tmp/cupynum-cache")
    # (all start at once: each builds its rows' inputs before it lists them)
    roots = {"new": (ROOT, new_cache, {}),
             "old": (old, os.environ.get("OLD_CACHE", new_cache if old == ROOT else
                                         os.path.join(old, ".kcache")), old_env)}
    started = {tree: [start(root, cache, only, extra) for _ in range(args.procs)]
               for tree, (root, cache, extra) in roots.items()}
    listed = {json.dumps(json.loads(p.stdout.readline())) for ps in started.values() for p in ps}
    if len(listed) != 1:
        raise SystemExit(f"the workers list different rows: {sorted(listed)}")
    rows = json.loads(listed.pop())
    times = {tree: [[] for _ in rows] for tree in started}
    try:
        for r in range(args.rounds):
            k = r % args.procs
            for i in range(len(rows)):
                order = ("new", "old") if (r + i) % 2 == 0 else ("old", "new")
                pair = [ask(started[tree][k], i) for tree in order]  # (both, or neither)
                for tree, t in zip(order, pair):
                    times[tree][i].append(t)
    except KeyboardInterrupt:  # (``timeout -s INT``: report the pairs taken so far)
        print(f"interrupted in round {r}", flush=True)
    for proc in (p for ps in started.values() for p in ps):
        proc.kill()
    print(f"up to {args.rounds} samples per tree and row, taken in turns from {args.procs} "
          "process(es) per tree; times in us")
    print("| row | this tree: median (min-max) | older tree: median (min-max) | "
          "median / median | min / min | samples where this tree was faster | sign test p |")
    print("|---|---|---|---:|---:|---:|---:|")
    for i, name in enumerate(rows):
        a, b = times["new"][i], times["old"][i]
        if not a:
            continue
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


def copy_benchmarks(old):
    """This tree's benchmark scripts and examples, copied into the older tree."""
    os.makedirs(os.path.join(old, "benchmarks"), exist_ok=True)
    os.makedirs(os.path.join(old, "examples"), exist_ok=True)
    for name in ("side_by_side.py", "report.py", "example_workloads.py", "pingpong_trees.py"):
        shutil.copy(os.path.join(HERE, name), os.path.join(old, "benchmarks", name))
    for name in os.listdir(os.path.join(ROOT, "examples")):
        if name.endswith(".py"):
            shutil.copy(os.path.join(ROOT, "examples", name), os.path.join(old, "examples", name))


def sign_test(k: int, n: int) -> float:
    """Two-sided sign test: the chance of a split at least as uneven as ``k`` of ``n`` pairs
    if neither tree were faster (a row is slower or faster "beyond noise" below 0.05)."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


if __name__ == "__main__":
    main()
