"""LU factorisation by rows (Doolittle, no pivoting), packed in place: U on and above the
diagonal, L (unit diagonal, not stored) below it."""
import functools

import numpy as np

SIZES = {"full": 1500, "small": 40}
RTOL = 1e-9
ATOL = 1e-12


def describe(n):
    return f"{n}x{n} f64"


@functools.lru_cache(maxsize=1)
def inputs(n):
    """A diagonally dominant matrix, so that no pivoting is needed."""
    rng = np.random.default_rng(4)
    A = rng.uniform(-1.0, 1.0, (n, n))
    A[np.diag_indices(n)] += n
    return A


def run(np, n):
    A = np.array(inputs(n))
    for i in range(n):
        A[i, i:] -= A[i, :i] @ A[:i, i:]
        A[i + 1:, i] = (A[i + 1:, i] - A[i + 1:, :i] @ A[:i, i]) / A[i, i]
    return A


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:3, :3])
