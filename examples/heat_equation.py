"""Heat diffusion on a square plate (explicit finite differences): a NumPy program on the GPU.

The simulation below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
from the same initial state and prints both times and whether the results agree.

    python examples/heat_equation.py            # 1024 x 1024 grid, 500 steps
    python examples/heat_equation.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/heat_equation.py   # the program on NumPy itself
"""
import os
import sys

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the initial state, the reference run and the comparison

import _harness  # the command line, timings and comparison shared by examples/


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


def main(argv=None):
    return _harness.main(
        argv, __doc__, np, repeat=1, small_help="66 x 66 grid, 20 steps",
        sizes={"n": ("interior grid points per side", 1024, 64), "steps": ("time steps", 500, 20)},
        title=lambda p: f"Heat equation: {p.n + 2} x {p.n + 2} grid, {p.steps} steps ({p.dtype})",
        inputs=lambda p: ((numpy.random.default_rng(p.seed).random((p.n, p.n)) * 10.0)
                          .astype(p.dtype),),
        # diffuse() uses only slicing and arithmetic, so it runs on whichever arrays it is given.
        compute=lambda p, xp, interior: diffuse(initial_state(interior, np=xp), p.steps),
        checksum=lambda u: u.sum(),
        tolerance={"float64": (1e-12, 1e-12), "float32": (1e-5, 1e-4)})


if __name__ == "__main__":
    sys.exit(main())
