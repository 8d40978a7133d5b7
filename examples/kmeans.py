"""k-means clustering (Lloyd's algorithm): a NumPy program on the GPU.

The clustering code below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
with the same inputs and prints both times and whether the results agree.

    python examples/kmeans.py            # 500,000 points in 16 dimensions, 32 clusters
    python examples/kmeans.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/kmeans.py   # the program on NumPy itself
"""
import os
import sys

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the inputs, the reference run and the comparison

import _harness  # the command line, timings and comparison shared by examples/


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


def main(argv=None):
    def labels_equal(p, host, got, ref):
        equal = numpy.array_equal(got[1], ref[1])
        return equal, f"labels equal: {equal}"

    return _harness.main(
        argv, __doc__, np, small_help="2,000 points",
        sizes={"n": ("number of points", 500_000, 2_000), "k": ("clusters", 32, 8),
               "dim": ("dimensions", 16, 4), "iterations": ("Lloyd steps", 20, 5)},
        title=lambda p: (f"k-means: {p.n:,} points, {p.dim} dimensions, {p.k} clusters, "
                         f"{p.iterations} iterations ({p.dtype})"),
        inputs=lambda p: inputs(p.n, p.dim, p.k, p.dtype, p.seed),
        compute=lambda p, xp, points, start: kmeans(points, start, p.iterations, np=xp),
        checksum=lambda centroids, labels: centroids.sum(),
        tolerance={"float64": (1e-9, 1e-9), "float32": (1e-4, 1e-3)},
        compare=1, check=labels_equal)


if __name__ == "__main__":
    sys.exit(main())
