"""Levenshtein distance between two sequences by dynamic programming, one row at a time.

The within-row recurrence ``cur[j] = min(cur[j], cur[j-1] + 1)`` is a running minimum of
``cur[j] - j``, plus ``j`` (``np.minimum.accumulate``, which CuPy does not implement: CuPy's
column reports the error).
"""
import functools

import numpy as np

SIZES = {"full": 5000, "small": 40}
RTOL = 0


def describe(n):
    return f"{n} x {n} symbols"


@functools.lru_cache(maxsize=1)
def inputs(n):
    """Two sequences over a 4-letter alphabet, the second a mutated copy of the first."""
    rng = np.random.default_rng(8)
    a = rng.integers(0, 4, n)
    b = a.copy()
    changed = rng.random(n) < 0.3
    b[changed] = rng.integers(0, 4, changed.sum())
    return a, b


def run(np, n):
    a_host, b_host = inputs(n)
    a = np.asarray(a_host)
    b = np.asarray(b_host)
    m = len(b)
    j = np.arange(m + 1)
    prev = j.copy()
    for i in range(1, len(a) + 1):
        cost = (b != a[i - 1]).astype(np.int64)
        cur = np.empty(m + 1, dtype=np.int64)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(cur - j) + j
    return prev


if __name__ == "__main__":
    print(run(np, SIZES["small"])[-1])
