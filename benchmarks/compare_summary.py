"""The table of a ``compare_trees.sh`` run: per row, each tree's rounds, the ratio of their
bests and of their medians (this tree over the older), and each tree's own spread (its
slowest round over its fastest), which is the noise a ratio has to exceed to mean anything.

    python benchmarks/compare_summary.py DIR      # DIR holds new-<round>.json, old-<round>.json
"""
import glob
import json
import os
import statistics
import sys


def rounds(folder, tree):
    """``{workload: [seconds, ...]}`` over the rounds of ``tree`` ("new" or "old")."""
    times = {}
    for path in sorted(glob.glob(os.path.join(folder, f"{tree}-*.json"))):
        with open(path) as f:
            for row in json.load(f)["results"]:
                if isinstance(row.get("cupynum"), (int, float)):
                    times.setdefault(row["workload"], []).append(row["cupynum"])
    return times


def main(folder):
    new, old = rounds(folder, "new"), rounds(folder, "old")
    print("| row | this tree, rounds (us) | older tree, rounds (us) | best / best | median / median "
          "| spread this / older |")
    print("|---|---|---|---:|---:|---|")
    for name in new:
        if name not in old:
            continue
        a, b = new[name], old[name]
        cells = [", ".join(f"{t * 1e6:.2f}" for t in ts) for ts in (a, b)]
        print(f"| {name} | {cells[0]} | {cells[1]} | {min(a) / min(b):.2f} | "
              f"{statistics.median(a) / statistics.median(b):.2f} | "
              f"{max(a) / min(a):.2f} / {max(b) / min(b):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "compare-run")
