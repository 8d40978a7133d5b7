"""Successive over-relaxation (Gauss-Seidel with omega) on a dense system, row by row."""
import functools

import numpy as np

SIZES = {"full": 4000, "small": 40}
SWEEPS = 5
OMEGA = 1.2
RTOL = 1e-9


def describe(n):
    return f"{n}x{n} f64, {SWEEPS} sweeps"


@functools.lru_cache(maxsize=1)
def inputs(n):
    rng = np.random.default_rng(5)
    M = rng.uniform(-1.0, 1.0, (n, n)) / n
    A = M + M.T
    A[np.diag_indices(n)] += 2.0
    b = rng.uniform(-1.0, 1.0, n)
    return A, b


def run(np, n):
    A_host, b_host = inputs(n)
    A = np.asarray(A_host)
    b = np.asarray(b_host)
    x = np.zeros(n)
    for _ in range(SWEEPS):
        for i in range(n):
            x[i] += OMEGA * (b[i] - A[i] @ x) / A[i, i]
    return x


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:5])
