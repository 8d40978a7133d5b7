"""A conjugate-gradient solve of a dense symmetric positive definite system: a NumPy
program on the GPU.

The solver below is plain NumPy; only the import differs.  It runs on the GPU when there is
one and on cupynum's host backend otherwise, then runs the same function on NumPy with the
same inputs and prints both times and whether the results agree.  The convergence test,
``if sqrt(r.r) <= tol * |b|``, reads one number back from the device per iteration, as any
NumPy program written this way does.

    python examples/conjugate_gradient.py            # 4096 x 4096 system
    python examples/conjugate_gradient.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/conjugate_gradient.py   # the program on NumPy itself
"""
import os
import sys

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the inputs, the reference run and the comparison

import _harness  # the command line, timings and comparison shared by examples/


def conjugate_gradient(A, b, tol=1e-10, max_iter=None, np=np):
    """Solve ``A x = b`` for symmetric positive definite A; returns (x, iterations)."""
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rr = r @ r
    b_norm = np.sqrt(b @ b)
    max_iter = max_iter or 10 * b.shape[0]
    for it in range(1, max_iter + 1):
        Ap = A @ p
        alpha = rr / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rr_new = r @ r
        if np.sqrt(rr_new) <= tol * b_norm:  # one number back to the host
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x, it


def inputs(n, dtype="float64", seed=2024):
    """A = B^T B / n + 0.05 I (condition number about 100) and a random b, on the host."""
    rng = numpy.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    A = B.T @ B / n + 0.05 * numpy.eye(n)
    b = rng.standard_normal(n)
    return A.astype(dtype), b.astype(dtype)


def solve_tol(dtype):
    """The relative residual the solve stops at."""
    return 1e-10 if numpy.dtype(dtype) == numpy.float64 else 1e-5


def compute(A, b, np=np):
    return conjugate_gradient(A, b, solve_tol(A.dtype), np=np)[0]


def main(argv=None):
    def converged(p, host, got, ref):
        (A, b), (x, iterations) = host, got
        residual = float(numpy.linalg.norm(b - A @ x) / numpy.linalg.norm(b))
        print(f"iterations: {iterations} (NumPy: {ref[1]}); relative residual {residual:.3g}")
        return residual <= 10 * solve_tol(p.dtype), ""

    # Both runs stop at a relative residual below tol; with a condition number near 100 the
    # two solutions then differ by about 100 * tol relative to |x|.
    return _harness.main(
        argv, __doc__, np, small_help="64 x 64 system",
        sizes={"n": ("matrix size", 4096, 64)},
        title=lambda p: (f"Conjugate gradient: {p.n} x {p.n} dense SPD system, "
                         f"tol {solve_tol(p.dtype):g} ({p.dtype})"),
        inputs=lambda p: inputs(p.n, p.dtype, p.seed),
        compute=lambda p, xp, A, b: conjugate_gradient(A, b, solve_tol(p.dtype), np=xp),
        checksum=lambda x, iterations: x.sum(),
        tolerance={"float64": (1e-7, 1e-7), "float32": (1e-2, 1e-2)},
        compare=1, check=converged)


if __name__ == "__main__":
    sys.exit(main())
