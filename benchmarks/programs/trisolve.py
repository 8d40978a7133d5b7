"""Forward substitution by rows: solve L X = B for a lower-triangular L and a block of
right-hand sides, one row of L per step.

The matrix is large (25 million elements at full size) but each step reads one row of it:
the kind of program that is cheap on one CPU core and costly as a chain of GPU launches.
"""
import functools

import numpy as np

# (rows of L, right-hand sides)
SIZES = {"full": (5000, 32), "small": (60, 3)}
RTOL = 1e-10


def describe(size):
    n, k = size
    return f"{n}x{n} f64, {k} rhs"


@functools.lru_cache(maxsize=1)
def inputs(size):
    """L (well conditioned: dominant diagonal) and B, generated once per process."""
    n, k = size
    rng = np.random.default_rng(1)
    L = np.tril(rng.uniform(-1.0, 1.0, (n, n))) / n
    L[np.diag_indices(n)] = rng.uniform(1.0, 2.0, n)
    B = rng.uniform(-1.0, 1.0, (n, k))
    return L, B


def run(np, size):
    n, k = size
    L_host, B_host = inputs(size)
    L = np.asarray(L_host)
    B = np.asarray(B_host)
    X = np.zeros((n, k))
    for i in range(n):
        X[i] = (B[i] - L[i, :i] @ X[:i]) / L[i, i]
    return X


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:3])
