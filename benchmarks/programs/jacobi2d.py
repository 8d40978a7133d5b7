"""Jacobi iteration for Laplace's equation on a square grid: the five-point stencil swept
over the whole grid each step, with a convergence check every few steps."""
import functools

import numpy as np

SIZES = {"full": 1000, "small": 24}
ITERATIONS = 100
CHECK_EVERY = 20
TOLERANCE = 1e-12
RTOL = 1e-12


def describe(n):
    return f"{n}x{n} f64, {ITERATIONS} steps"


@functools.lru_cache(maxsize=1)
def inputs(n):
    """A random interior between a hot top edge and cold other edges."""
    rng = np.random.default_rng(6)
    grid = rng.uniform(0.0, 1.0, (n, n))
    grid[0, :] = 1.0
    grid[-1, :] = 0.0
    grid[:, 0] = 0.0
    grid[:, -1] = 0.0
    return grid


def run(np, n):
    A = np.array(inputs(n))
    B = A.copy()
    for step in range(1, ITERATIONS + 1):
        B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
        A, B = B, A
        if step % CHECK_EVERY == 0 and np.abs(A - B).max() < TOLERANCE:
            break
    return A


if __name__ == "__main__":
    print(run(np, SIZES["small"])[1, :5])
