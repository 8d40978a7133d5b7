"""The 1-d heat equation with explicit (forward Euler) time steps on a small rod."""
import functools

import numpy as np

SIZES = {"full": (20000, 5000), "small": (50, 40)}
RTOL = 1e-12


def describe(size):
    return f"{size[0]} f64, {size[1]} steps"


@functools.lru_cache(maxsize=1)
def inputs(size):
    n, _ = size
    rng = np.random.default_rng(7)
    x = np.linspace(0.0, 1.0, n)
    return np.sin(np.pi * x) + 0.1 * rng.standard_normal(n)


def run(np, size):
    _, steps = size
    u = np.array(inputs(size))
    u[0] = u[-1] = 0.0
    r = 0.4  # alpha * dt / dx**2, below the stability limit 0.5
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:5])
