"""A direct-summation gravitational n-body simulation: all pairwise forces by broadcasting,
leapfrog steps in a Python loop."""
import functools

import numpy as np

SIZES = {"full": (1000, 10), "small": (20, 3)}
RTOL = 1e-9
ATOL = 1e-12


def describe(size):
    return f"{size[0]} bodies f64, {size[1]} steps"


@functools.lru_cache(maxsize=1)
def inputs(size):
    n, _ = size
    rng = np.random.default_rng(13)
    positions = rng.standard_normal((n, 3))
    velocities = 0.1 * rng.standard_normal((n, 3))
    masses = rng.uniform(0.5, 1.5, n) / n
    return positions, velocities, masses


def run(np, size):
    _, steps = size
    pos_host, vel_host, mass_host = inputs(size)
    pos = np.array(pos_host)
    vel = np.array(vel_host)
    mass = np.asarray(mass_host)
    G, dt, softening = 1.0, 1e-3, 0.05

    def acceleration(pos):
        dx = pos[None, :, :] - pos[:, None, :]
        inv_r3 = ((dx ** 2).sum(axis=2) + softening ** 2) ** -1.5
        return G * (dx * (mass[None, :] * inv_r3)[:, :, None]).sum(axis=1)

    acc = acceleration(pos)
    for _ in range(steps):
        vel += 0.5 * dt * acc
        pos += dt * vel
        acc = acceleration(pos)
        vel += 0.5 * dt * acc
    return pos


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:3])
