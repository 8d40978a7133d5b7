"""The dominant eigenvector of a large symmetric matrix by power iteration: one
matrix-vector product over the whole matrix per step."""
import functools

import numpy as np

SIZES = {"full": 4000, "small": 40}
ITERATIONS = 40
RTOL = 1e-8
ATOL = 1e-12


def describe(n):
    return f"{n}x{n} f64"


@functools.lru_cache(maxsize=1)
def inputs(n):
    """A random symmetric matrix (spectrum within about [-2, 2]) plus a rank-one spike of
    strength 5: one eigenvalue near 5.2, well separated from the rest."""
    rng = np.random.default_rng(10)
    M = rng.standard_normal((n, n)) / np.sqrt(2 * n)
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    return M + M.T + 5.0 * np.outer(u, u)


def run(np, n):
    A = np.asarray(inputs(n))
    x = np.ones(n) / np.sqrt(n)
    for _ in range(ITERATIONS):
        y = A @ x
        x = y / np.linalg.norm(y)
    return x


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:5])
