"""Gravitational n-body steps (all pairs, leapfrog): a NumPy program on the GPU.

The simulation below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
from the same initial state and prints both times and whether the results agree.

    python examples/nbody.py            # 4096 bodies, 10 steps
    python examples/nbody.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/nbody.py   # the program on NumPy itself
"""
import argparse
import os
import sys
import time

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the initial state, the reference run and the comparison

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


def timed(fn, repeat):
    """Median wall time of ``fn()``; fn ends by converting a result to float (a sync)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def runs_on():
    if np.__name__ == "numpy":
        return "NumPy (EXAMPLE_BACKEND=numpy)"
    try:
        from cupynum._backends import name

        return f"cupynum, {name()} backend"
    except Exception:  # the backend's name is only informative
        return "cupynum"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="a quick run: 64 bodies, 5 steps")
    parser.add_argument("-n", type=int, default=None, help="number of bodies (default 4096)")
    parser.add_argument("--steps", type=int, default=None, help="time steps (default 10)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    n = args.n or (64 if args.small else 4096)
    steps = args.steps or (5 if args.small else 10)
    dtype = numpy.dtype(args.dtype)

    pos_h, vel_h, mass_h = inputs(n, dtype, args.seed)
    pos, vel, mass = np.asarray(pos_h), np.asarray(vel_h), np.asarray(mass_h)

    def run():
        p, v = simulate(pos, vel, mass, steps)
        return p, v, float(p.sum() + v.sum())  # waits for the device

    def run_numpy():
        p, v = simulate(pos_h, vel_h, mass_h, steps, np=numpy)
        return p, v, float(p.sum() + v.sum())

    print(f"n-body: {n} bodies, {steps} leapfrog steps ({dtype}) on {runs_on()}")
    p, v, checksum = run()  # warm-up: compiles and caches the kernels on a GPU
    t = timed(run, args.repeat)
    ref_p, ref_v, ref_checksum = run_numpy()
    t_ref = timed(run_numpy, args.repeat)

    print(f"checksum: {checksum:.12e} (NumPy: {ref_checksum:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms (median of {args.repeat} runs after a warm-up)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same inputs); speed-up {t_ref / t:.1f}x")

    rtol, atol = (1e-9, 1e-9) if dtype == numpy.float64 else (1e-3, 1e-3)
    got = numpy.concatenate([numpy.asarray(p), numpy.asarray(v)])
    ref = numpy.concatenate([ref_p, ref_v])
    ok = got.shape == ref.shape and got.dtype == ref.dtype and numpy.allclose(got, ref, rtol, atol)
    max_diff = (float(numpy.max(numpy.abs(got.astype(numpy.float64) - ref)))
                if got.shape == ref.shape else numpy.inf)
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, "
          f"atol {atol:g}, dtype {got.dtype})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
