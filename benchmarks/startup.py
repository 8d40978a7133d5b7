"""A fresh process's first arrays, side by side with NumPy and CuPy (the placement issue's
item 8: the first device array no slower than CuPy's; a first small host array creates no
CUDA context).

    python benchmarks/startup.py [--runs 7] [--n 1048576] [--json out.json]

Each case runs in fresh interpreters, ``--runs`` times, the cases in turns (bytecode written
first, as ``pip install`` does; one unmeasured run of each fills the kernel cache, so the
figures are those of a warm cache), and reports the median and range of:

* ``import``: ``import numpy`` or the library;
* ``first``: from after the import to the first array's first op done (``x = ones(n);
  y = x * 2.0 + 1.0``, then ``float(y[0])``, which waits for it);
* ``total``: both.

Cases: ``numpy``; ``cupynum small`` (``n = 100``: on the host under ``auto``; it also
reports whether a CUDA context was made); ``cupynum`` (``n`` elements: on the device);
``cupy`` (``n`` elements), where CuPy is installed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import side_by_side as sbs  # noqa: E402

CODE = r'''
import json, sys, time
t0 = time.perf_counter()
import {module} as xp
t1 = time.perf_counter()
x = xp.ones({n})
y = x * 2.0 + 1.0
v = float(y[0])
t2 = time.perf_counter()
context = None
if "{module}" == "cupynum":
    from cupynum._backends.cuda import runtime
    context = runtime.is_initialized()
print(json.dumps({{"import": t1 - t0, "first": t2 - t1, "value": v, "context": context}}))
'''

CASES = [("numpy", "numpy", None), ("cupynum small", "cupynum", 100),
         ("cupynum", "cupynum", None), ("cupy", "cupy", None)]


def run_once(module: str, n: int) -> dict:
    env = sbs._fresh_env(CUPYNUM_PLACEMENT=os.environ.get("CUPYNUM_PLACEMENT", "auto"))
    p = subprocess.run([sys.executable, "-c", CODE.format(module=module, n=n)],
                       capture_output=True, text=True, env=env, timeout=300,
                       cwd=os.path.join(os.path.dirname(__file__), os.pardir))
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--json")
    args = ap.parse_args()
    sbs.compile_bytecode()
    cases = [(label, module, n or args.n) for label, module, n in CASES]
    samples = {label: [] for label, _, _ in cases}
    errors = {}
    for label, module, n in cases:  # (warm-up: kernel caches filled)
        first = run_once(module, n)
        if "error" in first:
            errors[label] = first["error"]
    for _ in range(args.runs):
        for label, module, n in cases:
            if label not in errors:
                samples[label].append(run_once(module, n))
    rows = {}
    print("| case | import ms | first array ms | total ms | CUDA context |")
    print("|---|---:|---:|---:|---|")
    for label, _, n in cases:
        if label in errors:
            print(f"| {label} | {errors[label]} | | | |")
            continue
        got = [s for s in samples[label] if "error" not in s]
        row = {}
        for key in ("import", "first"):
            values = [s[key] * 1e3 for s in got]
            row[key] = (statistics.median(values), min(values), max(values))
        totals = [(s["import"] + s["first"]) * 1e3 for s in got]
        row["total"] = (statistics.median(totals), min(totals), max(totals))
        row["context"] = sorted({str(s["context"]) for s in got})
        rows[label] = row
        cells = " | ".join(f"{m:.1f} ({lo:.1f}-{hi:.1f})" for m, lo, hi in
                           (row["import"], row["first"], row["total"]))
        print(f"| {label} (n={n}) | {cells} | {', '.join(row['context'])} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "errors": errors, "runs": args.runs, "n": args.n}, f,
                      indent=1)


if __name__ == "__main__":
    main()
