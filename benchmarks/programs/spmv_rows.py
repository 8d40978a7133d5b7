"""Sparse matrix-vector products by a Python loop over the rows of a CSR matrix.

A few normalised products (power-iteration style); every row reads its bounds from the
row pointers (two scalar reads), its slice of the index and value arrays, and gathers from x.
"""
import functools

import numpy as np

SIZES = {"full": 5000, "small": 50}
ITERATIONS = 3
RTOL = 1e-10


def describe(n):
    return f"{n} rows, ~{_row_length(n)} nnz/row f64"


def _row_length(n):
    return min(800, n // 2)


@functools.lru_cache(maxsize=1)
def inputs(n):
    """CSR arrays (indptr, indices, data) of an n x n matrix and a start vector."""
    rng = np.random.default_rng(3)
    mean = _row_length(n)
    counts = rng.integers(mean // 2, mean * 3 // 2 + 1, n)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts])
    data = rng.standard_normal(indptr[-1])
    x = rng.uniform(0.5, 1.5, n)
    return indptr, indices, data, x


def run(np, n):
    indptr, indices, data, x0 = (np.asarray(a) for a in inputs(n))
    x = x0 / np.linalg.norm(x0)
    for _ in range(ITERATIONS):
        y = np.zeros(n)
        for i in range(n):
            start, end = int(indptr[i]), int(indptr[i + 1])
            y[i] = data[start:end] @ x[indices[start:end]]
        x = y / np.linalg.norm(y)
    return x


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:5])
