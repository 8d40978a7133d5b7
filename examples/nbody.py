"""Gravitational n-body steps (all pairs, leapfrog): a NumPy program on the GPU.

The simulation below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
from the same initial state and prints both times and whether the results agree.

    python examples/nbody.py            # 4096 bodies, 10 steps
    python examples/nbody.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/nbody.py   # the program on NumPy itself
"""
import os
import sys

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the initial state, the reference run and the comparison

import _harness  # the command line, timings and comparison shared by examples/

G = 1.0


def accelerations(pos, mass, softening, np=np):
    """Acceleration of every body from all the others (an n x n pairwise computation)."""
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z  # dx[i, j] = x[j] - x[i]
    inv_r3 = (dx * dx + dy * dy + dz * dz + softening * softening) ** -1.5
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return np.hstack((ax, ay, az))


def simulate(pos, vel, mass, steps, dt=0.01, softening=0.1, np=np):
    """``steps`` kick-drift-kick leapfrog steps; returns new (pos, vel)."""
    acc = accelerations(pos, mass, softening, np=np)
    for _ in range(steps):
        vel = vel + acc * (dt / 2)
        pos = pos + vel * dt
        acc = accelerations(pos, mass, softening, np=np)
        vel = vel + acc * (dt / 2)
    return pos, vel


def inputs(n, dtype="float64", seed=2024):
    """Random positions and velocities (centre-of-mass frame) and masses, on the host."""
    rng = numpy.random.default_rng(seed)
    mass = numpy.full((n, 1), 20.0 / n)
    pos = rng.standard_normal((n, 3))
    vel = rng.standard_normal((n, 3))
    vel -= (mass * vel).sum(axis=0) / mass.sum()
    return pos.astype(dtype), vel.astype(dtype), mass.astype(dtype)


def compute(pos, vel, mass, steps=5, np=np):
    return simulate(pos, vel, mass, steps, np=np)


def main(argv=None):
    return _harness.main(
        argv, __doc__, np, small_help="64 bodies, 5 steps",
        sizes={"n": ("number of bodies", 4096, 64), "steps": ("time steps", 10, 5)},
        title=lambda p: f"n-body: {p.n} bodies, {p.steps} leapfrog steps ({p.dtype})",
        inputs=lambda p: inputs(p.n, p.dtype, p.seed),
        compute=lambda p, xp, pos, vel, mass: simulate(pos, vel, mass, p.steps, np=xp),
        checksum=lambda pos, vel: pos.sum() + vel.sum(),
        tolerance={"float64": (1e-9, 1e-9), "float32": (1e-3, 1e-3)})


if __name__ == "__main__":
    sys.exit(main())
