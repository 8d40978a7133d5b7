"""European option prices by the Black-Scholes formula: a NumPy program on the GPU.

The pricing code below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
with the same inputs and prints both times and whether the results agree.

    python examples/black_scholes.py            # 4 million options
    python examples/black_scholes.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/black_scholes.py   # the program on NumPy itself
"""
import os
import sys

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the inputs, the reference run and the comparison

import _harness  # the command line, timings and comparison shared by examples/

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


def inputs(n, dtype="float64", seed=2024):
    """Spot prices, strikes and years to expiry, on the host."""
    rng = numpy.random.default_rng(seed)
    return (rng.uniform(5.0, 30.0, n).astype(dtype), rng.uniform(1.0, 100.0, n).astype(dtype),
            rng.uniform(0.25, 10.0, n).astype(dtype))


def main(argv=None):
    r, v = 0.02, 0.30  # risk-free rate, volatility
    return _harness.main(
        argv, __doc__, np, sizes={"n": ("number of options", 4_000_000, 10_000)},
        small_help="10,000 options",
        title=lambda p: f"Black-Scholes: {p.n:,} options ({p.dtype})",
        inputs=lambda p: inputs(p.n, p.dtype, p.seed),
        compute=lambda p, xp, S, X, T: black_scholes(S, X, T, r, v, np=xp),
        checksum=lambda call, put: call.sum() + put.sum(),
        tolerance={"float64": (1e-9, 1e-9), "float32": (1e-4, 1e-3)})


if __name__ == "__main__":
    sys.exit(main())
