"""The statements that loop-heavy NumPy programs are made of, timed side by side.

    python benchmarks/statements.py [--n 100] [--calls 2000] [--json out.json]
    python benchmarks/statements.py --placements auto,device   # cupynum under each setting
    python benchmarks/statements.py --profile-cost   # what cupynum.profile() adds per op

Each statement runs on a 100x100 float64 array ``A`` (and ``C``), as the placement issue's
table has them, under NumPy, cupynum and CuPy (where installed), as wall time per statement:
the statement compiled into a loop of its own (``side_by_side.statement_loop``), the loop
closed by a sync, the libraries' rounds interleaved.  Before timing, every library runs each
statement a few times from the same inputs and the arrays it changed (and the value it bound)
are compared with NumPy's.

``--placements auto,device`` times cupynum once per ``CUPYNUM_PLACEMENT`` setting (read at
import): the process's own setting here, its rounds interleaved with NumPy's and CuPy's,
each other setting in a subprocess of its own; it reports the columns side by side, with
each setting's time over NumPy's and over CuPy's: the placement issue asks for ``auto`` at
most 3x NumPy and a quarter of CuPy.  ``--libs`` picks the libraries to time.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import side_by_side as sbs  # noqa: E402

# (label, statement): ``A``, ``C`` are n x n float64, ``i``, ``j`` indices inside, ``beta`` a
# Python float; the statement may bind ``x``.
STATEMENTS = [
    ("x = A[i, j]", "x = A[i, j]"),
    ("A[i, j] += A[i, j-1]", "A[i, j] += A[i, j - 1]"),
    ("A[i, j] /= 9.0", "A[i, j] /= 9.0"),
    ("A[i, 1:-1] += A[i-1, :-2]", "A[i, 1:-1] += A[i - 1, :-2]"),
    ("s = A[i, :j] @ A[:j, j]", "x = A[i, :j] @ A[:j, j]"),
    ("A[i, j] -= A[i, :j] @ A[:j, j]", "A[i, j] -= A[i, :j] @ A[:j, j]"),
    ("B = A * 2.0 + 1.0", "x = A * 2.0 + 1.0"),
    ("s = A.sum()", "x = A.sum()"),
    ("if A[i, j] > 0: pass", "x = 1 if A[i, j] > 0 else 0"),
    ("f = float(A[i, j])", "x = float(A[i, j])"),
    ("C[i, :i+1] *= beta", "C[i, :i + 1] *= beta"),
]


def _inputs(n):
    rng = np.random.default_rng(0)
    # Values near 1 keep repeated in-place statements finite and comparable.
    return {"A": rng.uniform(0.5, 1.5, (n, n)), "C": rng.uniform(0.5, 1.5, (n, n)),
            "i": n // 2, "j": n // 2, "beta": 0.999}


def _loop(stmt, xp, env):
    """``loop(count)`` running ``stmt`` with the names of ``env`` bound, and the namespace
    the statement writes ``x`` into."""
    names = sorted(env)
    ns = {"computed": sbs.computed}  # a pending x (implicit fusion) is computed each time
    body = f"def loop(count, xp, np, {', '.join(names)}):\n" \
           f"    x = None\n    for _ in range(count):\n        {stmt}\n        computed(x)\n" \
           f"    return x\n"
    exec(body, ns)
    fn = ns["loop"]
    return lambda count: fn(count, xp, np, *(env[k] for k in names))


def _on(xp, inputs):
    return {k: (xp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}


def check(xp, stmt, inputs, repeats=3):
    """None if ``stmt`` run ``repeats`` times under ``xp`` leaves the arrays and ``x`` as
    NumPy's run does, else a message."""
    ref_env, env = _on(np, inputs), _on(xp, inputs)
    ref_env = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ref_env.items()}
    want = _loop(stmt, np, ref_env)(repeats)
    got = _loop(stmt, xp, env)(repeats)
    for k, v in ref_env.items():
        if isinstance(v, np.ndarray) and not np.allclose(sbs.to_host(env[k]), v, rtol=1e-12):
            return f"{k} differs from NumPy's"
    if want is not None and not np.allclose(np.asarray(sbs.to_host(got), float), want,
                                            rtol=1e-12):
        return f"x = {got!r}, NumPy {want!r}"
    return None


def profile_cost(n, calls, rounds):
    """Each statement on cupynum with and without ``cupynum.profile()`` open: the time the
    profiler adds, per statement and per recorded call (best of ``rounds``)."""
    import statistics
    import timeit

    import cupynum

    inputs = _inputs(n)
    per_call = []
    print(f"{'statement':34} {'plain us':>9} {'profiled us':>12} {'+us/op':>7}")
    for label, stmt in STATEMENTS:
        loop = _loop(stmt, cupynum, _on(cupynum, inputs))
        loop(calls // 4)
        plain = min(timeit.repeat(lambda: loop(calls), number=1, repeat=rounds)) / calls
        with cupynum.profile(nvtx=False) as p:
            loop(calls // 4)
            profiled = min(timeit.repeat(lambda: loop(calls), number=1, repeat=rounds)) / calls
        ops = sum(s.calls for s in p.ops.values()) / (calls // 4 + rounds * calls)
        per_call.append((profiled - plain) / ops)
        print(f"{label:34} {plain * 1e6:9.2f} {profiled * 1e6:12.2f} {per_call[-1] * 1e6:7.2f}")
    print(f"median cost per recorded op: {statistics.median(per_call) * 1e6:.2f} us")


def libraries(names):
    """``{name: module}`` of the libraries named that can run here (CuPy needs a GPU); only
    these are imported."""
    libs = {}
    for name in names:
        if name == "numpy":
            libs[name] = np
        elif name == "cupynum":
            import cupynum

            libs[name] = cupynum
        elif name == "cupy":
            try:
                import cupy

                cupy.cuda.runtime.getDeviceCount()
                libs[name] = cupy
            except Exception as e:  # noqa: BLE001 - any failure means: no CuPy here
                print(f"note: CuPy skipped ({type(e).__name__}: {e})")
    return libs


def _cell(value, width=12):
    return f"{value:{width}.2f}" if isinstance(value, float) else f"{'-':>{width}}"


def measure(libs, args):
    """One row per statement: ``{"statement": label, lib: us per statement or a message}``,
    printed as they come."""
    inputs = _inputs(args.n)
    rows = []
    print(f"{'statement':34} " + " ".join(f"{lib + ' us':>12}" for lib in libs))
    for label, stmt in STATEMENTS:
        row = {"statement": label}
        samplers = {}
        for lib, xp in libs.items():
            problem = check(xp, stmt, inputs)
            if problem:
                row[lib] = f"wrong: {problem}"
                continue
            samplers[lib] = (*sbs.call_sampler(xp, None, args.calls,
                                               loop=_loop(stmt, xp, _on(xp, inputs))),
                             args.rounds)
        for lib, t in sbs.time_interleaved(samplers).items():
            row[lib] = t * 1e6 if isinstance(t, float) else f"error: {t!r}"
        rows.append(row)
        print(f"{label:34} " + " ".join(_cell(row.get(lib)) for lib in libs))
        for lib in libs:
            if isinstance(row.get(lib), str):
                print(f"    {lib}: {row[lib]}")
    return rows


def measure_placements(placements, args):
    """``{placement: rows}``: cupynum's rows under each ``CUPYNUM_PLACEMENT``, each from a
    run of this script in a subprocess of its own."""
    out = {}
    for placement in placements:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--libs", "cupynum",
                   "--n", str(args.n), "--calls", str(args.calls),
                   "--rounds", str(args.rounds), "--json", path]
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  env={**os.environ, "CUPYNUM_PLACEMENT": placement})
            if proc.returncode != 0 or not os.path.exists(path):
                raise RuntimeError(f"cupynum under CUPYNUM_PLACEMENT={placement} failed:\n"
                                   f"{proc.stdout}{proc.stderr}")
            with open(path) as f:
                out[placement] = json.load(f)["rows"]
    return out


def merge_placements(rows, by_placement):
    """``rows`` with a ``cupynum <placement>`` column per placement, and that column's time
    over NumPy's and over CuPy's where both are times."""
    for placement, cupynum_rows in by_placement.items():
        for row, theirs in zip(rows, cupynum_rows):
            assert row["statement"] == theirs["statement"]
            t = theirs.get("cupynum")
            row[f"cupynum {placement}"] = t
            for lib in ("numpy", "cupy"):
                if isinstance(t, float) and isinstance(row.get(lib), float):
                    row[f"{placement} / {lib}"] = t / row[lib]
    return rows


def print_merged(rows, libs, placements):
    columns = [f"{lib} us" for lib in libs] + [f"cupynum {p} us" for p in placements]
    ratios = [f"{p} / {lib}" for p in placements for lib in ("numpy", "cupy") if lib in libs]
    print()
    print("| statement | " + " | ".join(columns + ratios) + " |")
    print("|---|" + "---:|" * (len(columns) + len(ratios)))
    for row in rows:
        cells = [row.get(c[:-3]) for c in columns] + [row.get(r) for r in ratios]
        print(f"| `{row['statement']}` | "
              + " | ".join(_cell(v, 0) if not isinstance(v, str) else "wrong/error"
                           for v in cells) + " |")
    for key, limit, text in (("auto / numpy", 3.0, "at most 3x NumPy's time"),
                             ("auto / cupy", 0.25, "at most a quarter of CuPy's time")):
        have = [row for row in rows if isinstance(row.get(key), float)]
        if have:
            missed = [row["statement"] for row in have if row[key] > limit]
            print(f"- auto {text} (placement issue): {len(have) - len(missed)} of {len(have)}"
                  + (f"; not met: {', '.join(f'`{m}`' for m in missed)}" if missed else ""))
    for row in rows:
        for key, v in row.items():
            if key != "statement" and isinstance(v, str):
                print(f"- `{row['statement']}`, {key}: {v}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--libs", default="numpy,cupynum,cupy",
                    help="libraries to time, comma-separated")
    ap.add_argument("--placements",
                    help="comma-separated CUPYNUM_PLACEMENT settings (auto, device): cupynum "
                         "timed under each, in a subprocess of its own")
    ap.add_argument("--profile-cost", action="store_true")
    args = ap.parse_args(argv)
    if args.profile_cost:
        return profile_cost(args.n, args.calls, args.rounds)
    names = args.libs.split(",")
    placements = args.placements.split(",") if args.placements else []
    # cupynum under this process's own setting is timed here, its rounds interleaved with
    # NumPy's and CuPy's (a process's speed differs from another's on a shared machine, so
    # the ratios the issue asks for come from one process); the others in subprocesses
    own = os.environ.get("CUPYNUM_PLACEMENT", "auto")
    here = own in placements and "cupynum" in names
    libs = libraries([n for n in names if not (placements and n == "cupynum" and not here)])
    rows = measure(libs, args)
    if placements:
        elsewhere = [p for p in placements if not (here and p == own)]
        by_placement = measure_placements(elsewhere, args)
        if here:
            by_placement[own] = [{"statement": r["statement"], "cupynum": r.pop("cupynum", None)}
                                 for r in rows]
            del libs["cupynum"]
        rows = merge_placements(rows, {p: by_placement[p] for p in placements})
        print_merged(rows, libs, placements)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "calls": args.calls, "placements": placements,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
