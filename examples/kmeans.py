"""k-means clustering (Lloyd's algorithm): a NumPy program on the GPU.

The clustering code below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
with the same inputs and prints both times and whether the results agree.

    python examples/kmeans.py            # 500,000 points in 16 dimensions, 32 clusters
    python examples/kmeans.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/kmeans.py   # the program on NumPy itself
"""
import argparse
import os
import sys
import time

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the inputs, the reference run and the comparison


def kmeans(points, centroids, iterations, np=np):
    """``iterations`` Lloyd steps from the given centroids; returns (centroids, labels)."""
    k = centroids.shape[0]
    clusters = np.arange(k)
    sq_norms = (points * points).sum(axis=1)
    for _ in range(iterations):
        # Squared distances to every centroid, |x|^2 - 2 x.c + |c|^2, as one matrix product.
        dist = (sq_norms[:, None] - 2.0 * (points @ centroids.T)
                + (centroids * centroids).sum(axis=1)[None, :])
        labels = np.argmin(dist, axis=1)
        onehot = (labels[:, None] == clusters[None, :]).astype(points.dtype)
        counts = onehot.sum(axis=0)
        sums = onehot.T @ points
        # An empty cluster keeps its centroid.
        centroids = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None],
                             centroids)
    return centroids, labels


def inputs(n, dim=16, k=32, dtype="float64", seed=2024):
    """Well-separated Gaussian blobs and the first k points as starting centroids (host)."""
    rng = numpy.random.default_rng(seed)
    centres = rng.uniform(-20.0, 20.0, (k, dim))
    points = centres[rng.integers(0, k, n)] + rng.standard_normal((n, dim))
    points = points.astype(dtype)
    return points, points[:k].copy()


def compute(points, centroids, iterations=10, np=np):
    return kmeans(points, centroids, iterations, np=np)


def timed(fn, repeat):
    """Median wall time of ``fn()``; fn ends by converting a result to float (a sync)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def runs_on():
    if np.__name__ == "numpy":
        return "NumPy (EXAMPLE_BACKEND=numpy)"
    try:
        from cupynum._backends import name

        return f"cupynum, {name()} backend"
    except Exception:  # the backend's name is only informative
        return "cupynum"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a quick run: 2,000 points")
    parser.add_argument("-n", type=int, default=None, help="number of points (default 500,000)")
    parser.add_argument("-k", type=int, default=None, help="clusters (default 32; --small: 8)")
    parser.add_argument("--dim", type=int, default=None, help="dimensions (default 16; --small: 4)")
    parser.add_argument("--iterations", type=int, default=None, help="Lloyd steps (default 20)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    n = args.n or (2_000 if args.small else 500_000)
    k = args.k or (8 if args.small else 32)
    dim = args.dim or (4 if args.small else 16)
    iterations = args.iterations or (5 if args.small else 20)
    dtype = numpy.dtype(args.dtype)

    points_h, start_h = inputs(n, dim, k, dtype, args.seed)
    points, start = np.asarray(points_h), np.asarray(start_h)

    def run():
        centroids, labels = kmeans(points, start, iterations)
        return centroids, labels, float(centroids.sum())  # waits for the device

    def run_numpy():
        centroids, labels = kmeans(points_h, start_h, iterations, np=numpy)
        return centroids, labels, float(centroids.sum())

    print(f"k-means: {n:,} points, {dim} dimensions, {k} clusters, {iterations} iterations "
          f"({dtype}) on {runs_on()}")
    centroids, labels, checksum = run()  # warm-up: compiles and caches the kernels on a GPU
    t = timed(run, args.repeat)
    ref_centroids, ref_labels, ref_checksum = run_numpy()
    t_ref = timed(run_numpy, args.repeat)

    print(f"checksum: {checksum:.12e} (NumPy: {ref_checksum:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms (median of {args.repeat} runs after a warm-up)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same inputs); speed-up {t_ref / t:.1f}x")

    rtol, atol = (1e-9, 1e-9) if dtype == numpy.float64 else (1e-4, 1e-3)
    got, got_labels = numpy.asarray(centroids), numpy.asarray(labels)
    ok = (got.shape == ref_centroids.shape and got.dtype == ref_centroids.dtype
          and numpy.allclose(got, ref_centroids, rtol, atol)
          and numpy.array_equal(got_labels, ref_labels))
    max_diff = (float(numpy.max(numpy.abs(got.astype(numpy.float64) - ref_centroids)))
                if got.shape == ref_centroids.shape else numpy.inf)
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, "
          f"atol {atol:g}, dtype {got.dtype}; labels equal: "
          f"{numpy.array_equal(got_labels, ref_labels)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
