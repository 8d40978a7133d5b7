"""Least squares over a tall matrix in Dask chunks of cupynum arrays: a scale-out program.

X (rows x cols) and y are generated on the workers, chunk by chunk, as cupynum arrays
(``array.backend = "cupynum"``), so the data never passes through the client.  The fit is
the normal equations: each chunk contributes its X_k^T X_k and X_k^T y_k (one matrix product
each on its GPU), Dask adds them up, and the client solves the small cols x cols system.  The
result is checked against NumPy's ``lstsq`` on a sample of the rows (all of them with
``--small``).

    python examples/dask_lstsq.py                 # 100 million rows x 32 (25.6 GB of X)
    python examples/dask_lstsq.py --small         # a quick run (used by the tests)
    python examples/dask_lstsq.py --cluster cuda  # one dask-cuda worker per visible GPU
    EXAMPLE_BACKEND=numpy python examples/dask_lstsq.py --small   # NumPy chunks instead
"""
import argparse
import contextlib
import os
import time

import numpy

import dask
import dask.array as da

BACKEND = os.environ.get("EXAMPLE_BACKEND", "cupynum")
if BACKEND == "numpy":
    import numpy as np
else:
    import cupynum as np


def true_coefficients(cols):
    return numpy.linspace(-2.0, 2.0, cols)


def make_data(rows, cols, chunk_rows, seed, noise):
    """X and y = X @ beta + noise, generated chunk by chunk where the chunks live."""
    with dask.config.set({"array.backend": BACKEND}):
        rng = da.random.default_rng(seed)
        x = rng.standard_normal((rows, cols), chunks=(chunk_rows, cols))
        e = rng.standard_normal(rows, chunks=chunk_rows)
    beta = np.asarray(true_coefficients(cols))
    y = x @ beta + noise * e
    return x, y


def fit(x, y):
    """The normal equations, summed over chunks, solved on the client."""
    gram, rhs = dask.compute(x.T @ x, x.T @ y)
    return np.linalg.solve(gram, rhs)


@contextlib.contextmanager
def cluster(kind):
    """A client on a local cluster for the computation (or none: dask's threads)."""
    if kind == "none":
        yield None
        return
    from distributed import Client

    if kind == "cuda":
        from dask_cuda import LocalCUDACluster  # one worker per visible GPU

        made = LocalCUDACluster()
    else:
        from distributed import LocalCluster

        made = LocalCluster(dashboard_address=None)
    with made, Client(made) as client:
        yield client


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="20,000 rows x 8, chunks of 4,000")
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--cols", type=int, default=32)
    ap.add_argument("--chunk-rows", type=int, default=5_000_000)
    ap.add_argument("--sample-rows", type=int, default=200_000,
                    help="rows NumPy fits for the check")
    ap.add_argument("--cluster", choices=("none", "local", "cuda"), default="none",
                    help="none: dask's threaded scheduler in this process")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    if args.small:
        args.rows, args.cols, args.chunk_rows, args.sample_rows = 20_000, 8, 4_000, 20_000
    noise = 0.01
    where = "NumPy chunks" if BACKEND == "numpy" else "cupynum chunks"
    print(f"least squares, {args.rows:,} x {args.cols} float64 in chunks of "
          f"{args.chunk_rows:,} rows, on {where}, cluster: {args.cluster}")
    with cluster(args.cluster):
        x, y = make_data(args.rows, args.cols, args.chunk_rows, args.seed, noise)
        t0 = time.perf_counter()
        beta = fit(x, y)
        beta_host = numpy.asarray(np.asnumpy(beta) if hasattr(np, "asnumpy") else beta)
        elapsed = time.perf_counter() - t0
        sample = min(args.sample_rows, args.rows)
        xs, ys = dask.compute(x[:sample], y[:sample])
    xs = numpy.asarray(np.asnumpy(xs) if hasattr(np, "asnumpy") else xs)
    ys = numpy.asarray(np.asnumpy(ys) if hasattr(np, "asnumpy") else ys)
    reference = numpy.linalg.lstsq(xs, ys, rcond=None)[0]
    # With every row in the sample the two fits solve the same problem; with a sample, both
    # estimate beta to within a few noise / sqrt(sample) of it.
    tol = 1e-8 if sample == args.rows else 20 * noise / numpy.sqrt(sample)
    gap = float(numpy.max(numpy.abs(beta_host - reference)))
    ok = gap <= tol * (1 + numpy.max(numpy.abs(reference)))
    gb = args.rows * (args.cols + 1) * 8 / 1e9
    print(f"time: {elapsed * 1e3:.1f} ms for {gb:.2f} GB of X and y")
    print(f"checksum: {float(beta_host.sum()):.9f}")
    print(f"agree: {'yes' if ok else 'no'} (largest gap to NumPy's fit of {sample:,} rows: "
          f"{gap:.2e}, tolerance {tol:.1e})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
