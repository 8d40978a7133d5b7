"""The forward pass of a small multilayer perceptron (ReLU layers, softmax output): a NumPy
program on the GPU.

The network code below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
with the same inputs and prints both times and whether the results agree.

    python examples/mlp.py            # a batch of 8192 inputs, 784-1024-1024-10, float32
    python examples/mlp.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/mlp.py   # the program on NumPy itself
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


def relu(x, np=np):
    return np.maximum(x, 0)


def softmax(logits, np=np):
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def forward(x, weights, biases, np=np):
    """Class probabilities for a batch ``x``: dense + ReLU layers, then dense + softmax."""
    h = x
    for W, b in zip(weights[:-1], biases[:-1]):
        h = relu(h @ W + b, np=np)
    return softmax(h @ weights[-1] + biases[-1], np=np)


def inputs(batch, sizes=(784, 1024, 1024, 10), dtype="float32", seed=2024):
    """A random batch and He-initialised weights, on the host: (x, W0, b0, W1, b1, ...)."""
    rng = numpy.random.default_rng(seed)
    arrays = [rng.standard_normal((batch, sizes[0]))]
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        arrays.append(rng.standard_normal((fan_in, fan_out)) * numpy.sqrt(2.0 / fan_in))
        arrays.append(rng.uniform(-0.1, 0.1, fan_out))
    return tuple(a.astype(dtype) for a in arrays)


def compute(x, *params, np=np):
    return forward(x, params[0::2], params[1::2], np=np)


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
    parser.add_argument("--small", action="store_true",
                        help="a quick run: a batch of 64, layers 32-64-64-10")
    parser.add_argument("-n", type=int, default=None, help="batch size (default 8192)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    batch = args.n or (64 if args.small else 8192)
    sizes = (32, 64, 64, 10) if args.small else (784, 1024, 1024, 10)
    dtype = numpy.dtype(args.dtype)

    host = inputs(batch, sizes, dtype, args.seed)
    x, *params = [np.asarray(a) for a in host]

    def run():
        probs = forward(x, params[0::2], params[1::2])
        return probs, float((probs * probs).sum())  # waits for the device

    def run_numpy():
        probs = forward(host[0], host[1::2], host[2::2], np=numpy)
        return probs, float((probs * probs).sum())

    shape = "-".join(map(str, sizes))
    print(f"MLP forward pass: batch {batch}, layers {shape} ({dtype}) on {runs_on()}")
    probs, checksum = run()  # warm-up: compiles and caches the kernels on a GPU
    t = timed(run, args.repeat)
    ref, ref_checksum = run_numpy()
    t_ref = timed(run_numpy, args.repeat)

    print(f"checksum: {checksum:.12e} (NumPy: {ref_checksum:.12e})")
    print(f"time: {np.__name__} {t * 1e3:.3f} ms (median of {args.repeat} runs after a warm-up)")
    print(f"time: numpy {t_ref * 1e3:.3f} ms (same inputs); speed-up {t_ref / t:.1f}x")

    # Probabilities lie in [0, 1]; float32 matrix products summed in another order differ
    # by a few units in the last place of each logit.
    rtol, atol = (1e-9, 1e-12) if dtype == numpy.float64 else (1e-3, 1e-5)
    got = numpy.asarray(probs)
    ok = got.shape == ref.shape and got.dtype == ref.dtype and numpy.allclose(got, ref, rtol, atol)
    max_diff = (float(numpy.max(numpy.abs(got.astype(numpy.float64) - ref)))
                if got.shape == ref.shape else numpy.inf)
    print(f"agree: {'yes' if ok else 'NO'} (max |diff| {max_diff:.3g}, rtol {rtol:g}, "
          f"atol {atol:g}, dtype {got.dtype})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
