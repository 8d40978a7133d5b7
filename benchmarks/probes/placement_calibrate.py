"""Calibrate placement (issue 18): where the GPU overtakes one CPU core, and the cost table.

    python benchmarks/probes/placement_calibrate.py [--quick] [--json OUT]

For sizes n = 2^8 .. 2^24 float64 elements, each statement family runs in a loop (per-call
wall time, the loop closed by one sync, median of repeats) three ways: NumPy, cupynum with
its arrays held on the host (the host path: NumPy on the Buffer's view), and cupynum with
them on the device (fusion as configured, on by default).  The cost ledger is switched off
while timing, so nothing migrates under the probe.  Families:

  chain     x = x * 1.0000001 + 0.5   (new results, each reading the last)
  inplace   x += y
  reduce    s = x.sum()
  slice     x[1:-1] = y[:-2]
  row       M[i] *= 1.0001            (one row of a sqrt(n) x sqrt(n) matrix: the ledger's case
                                       of a large array touched a little per op)
  matvec    v = M @ w                 (sqrt(n) x sqrt(n))
  rowstmt   w[i] += 1.2 * (0.5 - M[i] @ w) / M[i, i]
                                      (an SOR step: a row product, an element read and
                                       four scalar ops; on the device, against the table's
                                       price of those six ops)

and whole-buffer moves host -> device -> host for the transfer row.  Printed: the per-call
table, each family's crossover (the smallest n from which the device is faster), and the
fitted cost table (``placement.COSTS``: per-op and per-element microseconds on each side,
from a least-squares fit over the families; transfer and per-byte cost) with the suggested
``CUPYNUM_PLACEMENT_THRESHOLD`` (the median crossover).  Nothing is changed by the probe:
the figures go into placement.py and _config.py by hand, with the run in docs/internals.md.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import log, wall_median  # noqa: E402

import numpy as np  # noqa: E402


def _timer(sync):
    """Seconds per call of a statement: ``wall_median`` over rounds of about ``budget``
    seconds (a round of one call for the slowest)."""
    def per_call(fn, budget=0.02, repeats=5):
        once = wall_median(fn, sync, reps=1)
        calls = max(1, min(20000, int(budget / max(once, 1e-7))))
        return wall_median(fn, sync, reps=repeats, warm=0, calls=calls)
    return per_call


def families(xp, n, host_arrays):
    """{family: (statement, elements it touches)} over fresh arrays of ``xp`` (NumPy, or
    cupynum with ``host_arrays(x)`` putting its arrays on one side)."""
    rng = np.random.default_rng(0)
    m = max(2, math.isqrt(n))
    st = {}
    state = {"x": host_arrays(xp.asarray(rng.standard_normal(n))),
             "y": host_arrays(xp.asarray(rng.standard_normal(n))),
             "M": host_arrays(xp.asarray(rng.standard_normal((m, m)))),
             "w": host_arrays(xp.asarray(rng.standard_normal(m))), "i": 0}

    def chain():
        state["x"] = state["x"] * 1.0000001 + 0.5

    def inplace():
        x = state["x"]
        x += state["y"]

    def reduce():
        state["s"] = state["x"].sum()

    def slice_():
        state["x"][1:-1] = state["y"][:-2]

    def row():
        state["i"] = (state["i"] + 1) % m
        r = state["M"][state["i"]]
        r *= 1.0001

    def matvec():
        state["v"] = state["M"] @ state["w"]

    st["chain"] = (chain, 2 * n)
    st["inplace"] = (inplace, n)
    st["reduce"] = (reduce, n)
    st["slice"] = (slice_, n)
    st["row"] = (row, m)
    def rowstmt():
        i = state["i"] = (state["i"] + 1) % m
        w, M = state["w"], state["M"]
        w[i] += 1.2 * (0.5 - M[i] @ w) / M[i, i]

    st["matvec"] = (matvec, m * m)
    st["rowstmt"] = (rowstmt, m)
    return st


def fit(points):
    """Least squares of t = op + per_element * n over (n, t) points (microseconds), each
    weighted by 1/t (relative errors: the small sizes, where the sides cross, count as much
    as the large ones)."""
    ns = np.array([p[0] for p in points], float)
    ts = np.array([p[1] for p in points], float)
    w = 1.0 / ts
    a = np.vstack([np.ones_like(ns), ns]).T * w[:, None]
    (op, per), *_ = np.linalg.lstsq(a, ts * w, rcond=None)
    return {"op": round(max(op, 0.0), 3), "per_element": float(f"{max(per, 0.0):.3g}")}


def main():
    quick = "--quick" in sys.argv
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    import cupynum as cp
    from cupynum import _backends
    from cupynum._backends import placement
    from cupynum.testing import place

    backend = _backends.get()
    if not getattr(backend, "cuda_memory", False):
        log("note: no CUDA backend here; the device column times the", _backends.name(),
            "backend")
    placement.record = lambda *args, **kwargs: False  # nothing migrates while timing

    def on(side):
        def put(x):
            place(x, side)
            return x
        return put

    sync_np = lambda: None  # noqa: E731
    per_np = _timer(sync_np)
    per_cp = _timer(backend.synchronize)
    exps = range(8, 19, 2) if quick else range(8, 25, 2)
    rows = []
    for e in exps:
        n = 1 << e
        row = {"n": n}
        for label, xp, put, timer in (("numpy", np, lambda x: x, per_np),
                                      ("host", cp, on("host"), per_cp),
                                      ("device", cp, on("device"), per_cp)):
            for fam, (fn, touched) in families(xp, n, put).items():
                row[f"{fam}:{label}"] = timer(fn) * 1e6
                row[f"{fam}:touched"] = touched
        rows.append(row)
        log(f"n=2^{e:<2} " + "  ".join(
            f"{f} {row[f + ':numpy']:.2f}/{row[f + ':host']:.2f}/{row[f + ':device']:.2f}"
            for f in ("chain", "inplace", "reduce", "slice", "row", "matvec", "rowstmt")))
    fams = ("chain", "inplace", "reduce", "slice", "row", "matvec")
    crossover = {}
    for f in fams:
        crossover[f] = next((r["n"] for r in rows if r[f + ":device"] < r[f + ":host"]), None)
    moves = {"host": [], "device": []}  # one-way moves of whole Buffers, each direction
    for e in range(8, 26, 2):
        x = cp.asarray(np.ones(1 << e))
        times = {"host": [], "device": []}
        for _ in range(5):
            for to in ("host", "device"):
                backend.synchronize()
                t = time.perf_counter()
                place(x, to)
                backend.synchronize()
                times[to].append(time.perf_counter() - t)
        for to in moves:
            moves[to].append((x.nbytes, sorted(times[to])[2] * 1e6))
    costs = {
        "host": fit([(r[f + ":touched"], r[f + ":host"]) for r in rows for f in fams
                     if f != "matvec"]),
        "device": fit([(r[f + ":touched"], r[f + ":device"]) for r in rows for f in fams
                       if f != "matvec"]),
    }
    fitted = {to: fit(m) for to, m in moves.items()}
    costs["transfer"] = min(f["op"] for f in fitted.values())
    costs["per_byte"] = {to: f["per_element"] for to, f in fitted.items()}
    found = sorted(v for v in crossover.values() if v)
    threshold = found[len(found) // 2] if found else None
    log("\ncrossover (smallest n with the device faster than the host path):")
    for f, v in crossover.items():
        log(f"  {f:<8} {('2^%d' % int(math.log2(v))) if v else 'never in range'}")
    for to, m in moves.items():
        log(f"moves to the {to} (us per move of b bytes): "
            + ", ".join(f"{b}: {t:.1f}" for b, t in m))
    # (on the host side its element reads are NumPy scalars, and the scalar ops NumPy's:
    # two of the six reach cupynum, so only the device side is set against the table)
    log("rowstmt on the device against the table's price of its six ops (a product among "
        "them), us:")
    dev = placement.COSTS["device"]
    for r in rows:
        priced = 6 * dev["op"] + dev["product"] + dev["per_element"] * r["rowstmt:touched"]
        log(f"  n=2^{int(math.log2(r['n'])):<2} {r['rowstmt:device']:8.2f} (table "
            f"{priced:6.2f}; the host path {r['rowstmt:host']:.2f})")
    log(f"suggested COSTS = {json.dumps(costs)}")
    log(f"suggested CUPYNUM_PLACEMENT_THRESHOLD = {threshold}")
    if out:
        with open(out, "w") as fh:
            json.dump({"rows": rows, "crossover": crossover, "moves": moves, "costs": costs,
                       "threshold": threshold, "backend": _backends.name()}, fh, indent=1)


if __name__ == "__main__":
    main()
