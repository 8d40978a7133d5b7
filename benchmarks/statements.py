"""The statements that loop-heavy NumPy programs are made of, timed side by side.

    python benchmarks/statements.py [--n 100] [--calls 2000] [--json out.json]
    python benchmarks/statements.py --profile-cost   # what cupynum.profile() adds per op

Each statement runs on a 100x100 float64 array ``A`` (and ``C``), as the placement issue's
table has them, under NumPy, cupynum and CuPy (where installed), as wall time per statement:
the statement compiled into a loop of its own (``side_by_side.statement_loop``), the loop
closed by a sync, the libraries' rounds interleaved.  Before timing, every library runs each
statement a few times from the same inputs and the arrays it changed (and the value it bound)
are compared with NumPy's.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--profile-cost", action="store_true")
    args = ap.parse_args()
    if args.profile_cost:
        return profile_cost(args.n, args.calls, args.rounds)
    libs = sbs.load_libraries()
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
        cells = [f"{row[lib]:12.2f}" if isinstance(row.get(lib), float) else f"{'-':>12}"
                 for lib in libs]
        print(f"{label:34} " + " ".join(cells))
        for lib in libs:
            if isinstance(row.get(lib), str):
                print(f"    {lib}: {row[lib]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "calls": args.calls, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
