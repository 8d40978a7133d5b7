"""A recursive (IIR) smoothing filter run down the rows of an image, forward then backward.

Each step updates one row from the row before it: a 33-million-element float32 image
touched 8 thousand elements at a time.
"""
import functools

import numpy as np

SIZES = {"full": (4096, 8192), "small": (40, 24)}
RTOL = 1e-5


def describe(shape):
    return f"{shape[0]}x{shape[1]} f32"


@functools.lru_cache(maxsize=1)
def inputs(shape):
    rng = np.random.default_rng(2)
    return rng.standard_normal(shape, dtype=np.float32)


def run(np, shape):
    image = np.asarray(inputs(shape))
    rows = shape[0]
    a = 0.8
    b = 1.0 - a
    y = np.empty_like(image)
    y[0] = image[0]
    for i in range(1, rows):  # causal pass
        y[i] = a * y[i - 1] + b * image[i]
    for i in range(rows - 2, -1, -1):  # anti-causal pass
        y[i] = a * y[i + 1] + b * y[i]
    return y


if __name__ == "__main__":
    print(run(np, SIZES["small"])[:2, :5])
