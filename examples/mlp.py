"""The forward pass of a small multilayer perceptron (ReLU layers, softmax output): a NumPy
program on the GPU.

The network code below is plain NumPy; only the import differs.  It runs on the GPU when
there is one and on cupynum's host backend otherwise, then runs the same function on NumPy
with the same inputs and prints both times and whether the results agree.

    python examples/mlp.py            # a batch of 8192 inputs, 784-1024-1024-10, float32
    python examples/mlp.py --small    # a quick run (used by the tests)
    EXAMPLE_BACKEND=numpy python examples/mlp.py   # the program on NumPy itself
"""
import os
import sys

if os.environ.get("EXAMPLE_BACKEND", "cupynum") == "numpy":
    import numpy as np
else:
    import cupynum as np

import numpy  # only for the inputs, the reference run and the comparison

import _harness  # the command line, timings and comparison shared by examples/


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


def main(argv=None):
    def layers(p):
        return (32, 64, 64, 10) if p.small else (784, 1024, 1024, 10)

    # Probabilities lie in [0, 1]; float32 matrix products summed in another order differ
    # by a few units in the last place of each logit.
    return _harness.main(
        argv, __doc__, np, dtype="float32", small_help="a batch of 64, layers 32-64-64-10",
        sizes={"n": ("batch size", 8192, 64)},
        title=lambda p: (f"MLP forward pass: batch {p.n}, layers "
                         f"{'-'.join(map(str, layers(p)))} ({p.dtype})"),
        inputs=lambda p: inputs(p.n, layers(p), p.dtype, p.seed),
        compute=lambda p, xp, x, *params: compute(x, *params, np=xp),
        checksum=lambda probs: (probs * probs).sum(),
        tolerance={"float64": (1e-9, 1e-12), "float32": (1e-3, 1e-5)})


if __name__ == "__main__":
    sys.exit(main())
