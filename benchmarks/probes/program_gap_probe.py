"""The statements of the programs where CuPy has been faster than cupynum (floyd_warshall,
nbody, lu_doolittle, kmeans, cnn_layer; benchmarks/programs) and of the row-by-row programs
(trisolve, sor, spmv_rows, iir_rows), each timed in cupynum
(``CUPYNUM_PLACEMENT=device`` unless set) and CuPy on the same inputs, wall time per
statement over a loop closed by a sync (median of rounds, the libraries alternating), and
each statement's cupynum profile (host and GPU time per op, launches).

    python benchmarks/probes/program_gap_probe.py [--only NAME,...] [--profile]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CUPYNUM_PLACEMENT", "device")
from _probe_util import import_cupy, log, wall_median  # noqa: E402

import numpy  # noqa: E402


def statements(rng):
    """(name, setup(xp) -> namespace, statement source, loop count)."""
    D = rng.uniform(0, 10, (700, 700))
    pos = rng.standard_normal((1000, 3))
    mass = rng.uniform(0.5, 1.5, 1000)
    A = rng.standard_normal((1500, 1500)) + 1500 * numpy.eye(1500)
    X = rng.standard_normal((100000, 4))
    C = X[:8].copy()
    labels = rng.integers(0, 8, 100000)
    x = rng.standard_normal((16, 194, 194)).astype(numpy.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(numpy.float32)
    acc = numpy.zeros((192, 192), numpy.float32)
    dx = pos[None, :, :] - pos[:, None, :]
    L = numpy.tril(rng.uniform(-1.0, 1.0, (5000, 5000))) / 5000 + 2 * numpy.eye(5000)
    rhs = rng.uniform(-1.0, 1.0, (5000, 32))
    S = rng.uniform(-1.0, 1.0, (4000, 4000)) / 4000 + 2 * numpy.eye(4000)
    image = rng.standard_normal((4096, 8192)).astype(numpy.float32)
    indptr = numpy.arange(0, 5001 * 800, 800)
    indices = rng.integers(0, 4000, 5000 * 800)
    values = rng.standard_normal(5000 * 800)
    inv = ((dx ** 2).sum(axis=2) + 0.0025) ** -1.5

    def ns(xp, **arrays):
        return dict(xp=xp, **{k: xp.asarray(v) for k, v in arrays.items()})

    return [
        ("floyd: minimum(D, D[:, k, None] + D[k, :], out=D)", lambda xp: ns(xp, D=D),
         "xp.minimum(D, D[:, 350, None] + D[350, :], out=D)", 200),
        ("floyd: t = D[:, k, None] + D[k, :]", lambda xp: ns(xp, D=D),
         "t = D[:, 350, None] + D[350, :]", 200),
        ("nbody: dx = pos[None] - pos[:, None]", lambda xp: ns(xp, pos=pos),
         "dx = pos[None, :, :] - pos[:, None, :]", 100),
        ("nbody: (dx ** 2).sum(axis=2)", lambda xp: ns(xp, dx=dx),
         "s = (dx ** 2).sum(axis=2)", 100),
        ("nbody: (s + eps) ** -1.5", lambda xp: ns(xp, s=(dx ** 2).sum(axis=2)),
         "t = (s + 0.0025) ** -1.5", 100),
        ("nbody: (dx * (mass[None] * inv)[:, :, None]).sum(axis=1)",
         lambda xp: ns(xp, dx=dx, mass=mass, inv=inv),
         "a = (dx * (mass[None, :] * inv)[:, :, None]).sum(axis=1)", 100),
        ("lu: A[i, i:] -= A[i, :i] @ A[:i, i:] (i=750)", lambda xp: ns(xp, A=A),
         "A[750, 750:] -= A[750, :750] @ A[:750, 750:]", 100),
    ] + [
        (f"lu: both statements (i={i})", lambda xp: ns(xp, A=A),
         f"A[{i}, {i}:] -= A[{i}, :{i}] @ A[:{i}, {i}:]\n"
         f"A[{i + 1}:, {i}] = (A[{i + 1}:, {i}] - A[{i + 1}:, :{i}] @ A[:{i}, {i}]) / A[{i}, {i}]",
         50) for i in (0, 10, 100, 400, 1100, 1400, 1490)
    ] + [
        ("lu: A[i, :i] @ A[:i, i:] (i=750)", lambda xp: ns(xp, A=A),
         "v = A[750, :750] @ A[:750, 750:]", 100),
        ("lu: A[i+1:, :i] @ A[:i, i] (i=750)", lambda xp: ns(xp, A=A),
         "v = A[751:, :750] @ A[:750, 750]", 100),
        ("lu: A[i+1:, i] = (A[i+1:, i] - A[i+1:, :i] @ A[:i, i]) / A[i, i]",
         lambda xp: ns(xp, A=A),
         "A[751:, 750] = (A[751:, 750] - A[751:, :750] @ A[:750, 750]) / A[750, 750]", 100),
        ("kmeans: ((X[:, None] - C[None]) ** 2).sum(axis=2).argmin(axis=1)",
         lambda xp: ns(xp, X=X, C=C),
         "l = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)", 50),
        ("kmeans: C[j] = X[labels == j].mean(axis=0)",
         lambda xp: ns(xp, X=X, C=C, labels=labels),
         "m = X[labels == 3]\nif len(m) > 0:\n    C[3] = m.mean(axis=0)", 50),
        ("trisolve: X[i] = (B[i] - L[i, :i] @ X[:i]) / L[i, i] (i=2500)",
         lambda xp: ns(xp, L=L, B=rhs, X=rhs),
         "X[2500] = (B[2500] - L[2500, :2500] @ X[:2500]) / L[2500, 2500]", 100),
        ("trisolve: v = L[i, :i] @ X[:i]", lambda xp: ns(xp, L=L, X=rhs),
         "v = L[2500, :2500] @ X[:2500]", 100),
        ("trisolve: X[i] = (B[i] - v) / L[i, i]", lambda xp: ns(xp, L=L, B=rhs, X=rhs,
                                                                  v=rhs[0]),
         "X[2500] = (B[2500] - v) / L[2500, 2500]", 100),
        ("sor: v = A[i] @ x", lambda xp: ns(xp, A=S, x=S[1]), "v = A[2000] @ x", 100),
        ("sor: x[i] += 1.2 * (b[i] - A[i] @ x) / A[i, i] (i=2000)",
         lambda xp: ns(xp, A=S, b=S[0], x=S[1]),
         "x[2000] += 1.2 * (b[2000] - A[2000] @ x) / A[2000, 2000]", 100),
        ("spmv: y[i] = data[s:e] @ x[indices[s:e]] (int bounds)",
         lambda xp: ns(xp, indptr=indptr, indices=indices, data=values, x=S[2],
                       y=S[3]),
         "s, e = int(indptr[700]), int(indptr[701])\ny[700] = data[s:e] @ x[indices[s:e]]", 100),
        ("iir: y[i] = a * y[i - 1] + b * image[i]", lambda xp: ns(xp, y=image, image=image),
         "y[700] = 0.8 * y[699] + 0.2 * image[700]", 200),
        ("cnn: acc += w[co, ci, dy, dx] * x[ci, dy:dy+c, dx:dx+c]",
         lambda xp: ns(xp, x=x, w=w, acc=acc),
         "acc += w[3, 5, 1, 2] * x[5, 1:193, 2:194]", 200),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import cupynum
    cupy = import_cupy(need_device=True)
    # (the simulated device, on a CPU machine, runs each op at once: nothing to wait for)
    sync = cupynum.cuda.synchronize if cupynum.cuda.is_available() else lambda: None
    libs = [("cupynum", cupynum, sync)]
    if cupy is not None:
        libs.append(("cupy", cupy, cupy.cuda.Device().synchronize))
    rng = numpy.random.default_rng(0)
    log(f"placement {os.environ['CUPYNUM_PLACEMENT']}; us per statement, median of "
        f"{args.rounds} rounds")
    for name, setup, src, loops in statements(rng):
        if args.only and not any(o in name for o in args.only.split(",")):
            continue
        code = compile(f"for _ in range({loops}):\n" + "".join(
            "    " + line + "\n" for line in src.splitlines()), name, "exec")
        row = []
        for label, xp, sync in libs:
            env = setup(xp)
            exec(code, env)  # warm-up (compiles, caches)
            sync()

            seconds = wall_median(lambda env=env: exec(code, env), sync, args.rounds)
            row.append(f"{label} {seconds * 1e6 / loops:8.2f}")
        log(f"{name:70s} " + "  ".join(row))
        if args.profile:
            env = setup(cupynum)
            exec(code, env)
            sync()
            with cupynum.profile() as p:
                exec(code, env)
                sync()
            log(str(p))


if __name__ == "__main__":
    main()
