"""Heat diffusion on a square plate (explicit finite differences): a NumPy program on the GPU.

The simulation below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
from the same initial state and prints both times and whether the results agree.

    python examples/heat_equation.py            # 1024 x 1024 grid, 500 steps
    python examples/heat_equation.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/heat_equation.py   # the program on NumPy itself
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


def initial_state(interior, hot=100.0, np=np):
    """The plate: a hot top edge, cold other edges, a random interior (given on the host)."""
    n = interior.shape[0] + 2
    u = np.zeros((n, n), dtype=interior.dtype)
    u[0, :] = hot
    u[1:-1, 1:-1] = np.asarray(interior)
    return u


def diffuse(u, steps, alpha=0.2):
    """``steps`` explicit time steps of the heat equation, in place; edges stay fixed.
    Stable for alpha <= 0.25."""
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        )
    return u


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
    parser.add_argument("--small", action="store_true", help="a quick run: 66 x 66 grid, 20 steps")
    parser.add_argument("-n", type=int, default=None, help="interior grid points per side (default 1024)")
    parser.add_argument("--steps", type=int, default=None, help="time steps (default 500)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    n = args.n or (64 if args.small else 1024)
    steps = args.steps or (20 if args.small else 500)
    dtype = numpy.dtype(args.dtype)

    rng = numpy.random.default_rng(args.seed)
    interior = (rng.random((n, n)) * 10.0).astype(dtype)

    print(f"Heat equation: {n + 2} x {n + 2} grid, {steps} steps ({dtype}) on {runs_on()}")
    diffuse(initial_state(interior), 2)  # warm-up: compiles and caches the kernels on a GPU
    t0 = time.perf_counter()
    u = diffuse(initial_state(interior), steps)
    checksum = float(u.sum())  # waits for the device
    t = time.perf_counter() - t0

    # The same functions on NumPy, from the same initial state (diffuse() uses only
    # slicing and arithmetic, so it runs on whichever arrays it is given).
    t0 = time.perf_counter()
    ref = diffuse(initial_state(interior, np=numpy), steps)
    ref_checksum = float(ref.sum())
    t_ref = time.perf_counter() - t0

    print(f"checksum: {checksum:.12e} (NumPy: {ref_checksum:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms ({steps} steps)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same initial state); speed-up {t_ref / t:.1f}x")

    rtol, atol = (1e-12, 1e-12) if dtype == numpy.float64 else (1e-5, 1e-4)
    got = numpy.asarray(u)
    ok = got.shape == ref.shape and got.dtype == ref.dtype and numpy.allclose(got, ref, rtol, atol)
    max_diff = float(numpy.max(numpy.abs(got.astype(numpy.float64) - ref))) if got.shape == ref.shape else numpy.inf
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, atol {atol:g}, dtype {got.dtype})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
