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
import argparse
import os
import sys
import time

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the inputs, the reference run and the comparison


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


def compute(A, b, np=np):
    tol = 1e-10 if A.dtype == numpy.float64 else 1e-5
    return conjugate_gradient(A, b, tol, np=np)[0]


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
    parser.add_argument("--small", action="store_true", help="a quick run: 64 x 64 system")
    parser.add_argument("-n", type=int, default=None, help="matrix size (default 4096)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    n = args.n or (64 if args.small else 4096)
    dtype = numpy.dtype(args.dtype)
    tol = 1e-10 if dtype == numpy.float64 else 1e-5

    A_h, b_h = inputs(n, dtype, args.seed)
    A, b = np.asarray(A_h), np.asarray(b_h)

    def run():
        x, iterations = conjugate_gradient(A, b, tol)
        return x, iterations, float(x.sum())  # waits for the device

    def run_numpy():
        x, iterations = conjugate_gradient(A_h, b_h, tol, np=numpy)
        return x, iterations, float(x.sum())

    print(f"Conjugate gradient: {n} x {n} dense SPD system, tol {tol:g} ({dtype}) on {runs_on()}")
    x, iterations, checksum = run()  # warm-up: compiles and caches the kernels on a GPU
    t = timed(run, args.repeat)
    ref_x, ref_iterations, ref_checksum = run_numpy()
    t_ref = timed(run_numpy, args.repeat)
    residual = float(numpy.linalg.norm(b_h - A_h @ numpy.asarray(x)) / numpy.linalg.norm(b_h))

    print(f"iterations: {iterations} (NumPy: {ref_iterations}); relative residual {residual:.3g}")
    print(f"checksum: {checksum:.12e} (NumPy: {ref_checksum:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms (median of {args.repeat} runs after a warm-up)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same inputs); speed-up {t_ref / t:.1f}x")

    # Both runs stop at a relative residual below tol; with a condition number near 100 the
    # two solutions then differ by about 100 * tol relative to |x|.
    rtol, atol = (1e-7, 1e-7) if dtype == numpy.float64 else (1e-2, 1e-2)
    got = numpy.asarray(x)
    ok = (got.shape == ref_x.shape and got.dtype == ref_x.dtype
          and numpy.allclose(got, ref_x, rtol, atol) and residual <= 10 * tol)
    max_diff = (float(numpy.max(numpy.abs(got.astype(numpy.float64) - ref_x)))
                if got.shape == ref_x.shape else numpy.inf)
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, "
          f"atol {atol:g}, dtype {got.dtype})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
