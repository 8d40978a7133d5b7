"""European option prices by the Black-Scholes formula: a NumPy program on the GPU.

The pricing code below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
with the same inputs and prints both times and whether the results agree.

    python examples/black_scholes.py            # 4 million options
    python examples/black_scholes.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/black_scholes.py   # the program on NumPy itself
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

RSQRT2PI = 0.39894228040143267794  # 1 / sqrt(2 pi)
# Abramowitz & Stegun 26.2.17: |error| < 7.5e-8 for the cumulative normal distribution.
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429


def cnd(d, np=np):
    """Cumulative standard normal distribution (polynomial approximation)."""
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))))
    w = 1.0 - RSQRT2PI * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, w, 1.0 - w)


def black_scholes(S, X, T, r, v, np=np):
    """Call and put prices for spot S, strike X, years to expiry T, rate r, volatility v."""
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / X) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cnd_d1 = cnd(d1, np)
    cnd_d2 = cnd(d2, np)
    discount = np.exp(-r * T)
    call = S * cnd_d1 - X * discount * cnd_d2
    put = X * discount * (1.0 - cnd_d2) - S * (1.0 - cnd_d1)
    return call, put


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
    parser.add_argument("--small", action="store_true", help="a quick run: 10,000 options")
    parser.add_argument("-n", type=int, default=None, help="number of options (default 4,000,000)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    n = args.n or (10_000 if args.small else 4_000_000)
    dtype = numpy.dtype(args.dtype)
    r, v = 0.02, 0.30  # risk-free rate, volatility

    # Inputs are made on the host by NumPy's seeded generator, then moved to the device.
    rng = numpy.random.default_rng(args.seed)
    S_h = rng.uniform(5.0, 30.0, n).astype(dtype)
    X_h = rng.uniform(1.0, 100.0, n).astype(dtype)
    T_h = rng.uniform(0.25, 10.0, n).astype(dtype)
    S, X, T = np.asarray(S_h), np.asarray(X_h), np.asarray(T_h)

    def run():
        call, put = black_scholes(S, X, T, r, v)
        checksum = float(call.sum() + put.sum())  # waits for the device
        return call, put, checksum

    def run_numpy():
        call, put = black_scholes(S_h, X_h, T_h, r, v, np=numpy)
        return call, put, float(call.sum() + put.sum())

    print(f"Black-Scholes: {n:,} options ({dtype}) on {runs_on()}")
    call, put, checksum = run()  # warm-up: compiles and caches the kernels on a GPU
    t = timed(run, args.repeat)
    ref_call, ref_put, ref_checksum = run_numpy()
    t_ref = timed(run_numpy, args.repeat)

    print(f"checksum: {checksum:.12e} (NumPy: {ref_checksum:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms (median of {args.repeat} runs after a warm-up)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same inputs); speed-up {t_ref / t:.1f}x")

    rtol, atol = (1e-9, 1e-9) if dtype == numpy.float64 else (1e-4, 1e-3)
    got = numpy.concatenate([numpy.asarray(call), numpy.asarray(put)])
    ref = numpy.concatenate([ref_call, ref_put])
    ok = got.shape == ref.shape and got.dtype == ref.dtype and numpy.allclose(got, ref, rtol, atol)
    max_diff = float(numpy.max(numpy.abs(got.astype(numpy.float64) - ref))) if got.shape == ref.shape else numpy.inf
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, atol {atol:g}, dtype {got.dtype})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
