"""k-means clustering (Lloyd's algorithm) with a Python loop over the iterations and over
the clusters."""
import functools

import numpy as np

# (points, dimensions, clusters)
SIZES = {"full": (100000, 4, 8), "small": (300, 3, 4)}
ITERATIONS = 15
RTOL = 1e-9


def describe(size):
    n, d, k = size
    return f"{n}x{d} f64, k={k}"


@functools.lru_cache(maxsize=1)
def inputs(size):
    """Points drawn around k well separated centres, and the indices of k of them as the
    initial centroids."""
    n, d, k = size
    rng = np.random.default_rng(12)
    centres = rng.uniform(-20.0, 20.0, (k, d))
    points = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))
    return points, rng.choice(n, k, replace=False)


def run(np, size):
    n, d, k = size
    X_host, start = inputs(size)
    X = np.asarray(X_host)
    C = X[np.asarray(start)]
    for _ in range(ITERATIONS):
        distances = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        labels = distances.argmin(axis=1)
        for j in range(k):
            members = X[labels == j]
            if len(members) > 0:
                C[j] = members.mean(axis=0)
    return C


if __name__ == "__main__":
    print(run(np, SIZES["small"]))
