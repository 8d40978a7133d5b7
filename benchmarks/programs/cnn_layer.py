"""One convolutional layer (3x3 kernels, valid padding), ReLU and 2x2 max pooling, with
explicit Python loops over the output and input channels and the kernel taps."""
import functools

import numpy as np

# (input channels, output channels, image side)
SIZES = {"full": (16, 32, 194), "small": (2, 3, 10)}
RTOL = 1e-5
ATOL = 1e-6


def describe(size):
    c_in, c_out, side = size
    return f"{c_in}->{c_out} ch, {side}x{side} f32"


@functools.lru_cache(maxsize=1)
def inputs(size):
    c_in, c_out, side = size
    rng = np.random.default_rng(11)
    images = rng.standard_normal((c_in, side, side), dtype=np.float32)
    weights = rng.standard_normal((c_out, c_in, 3, 3), dtype=np.float32) / np.float32(3 * c_in)
    bias = rng.standard_normal(c_out, dtype=np.float32) * np.float32(0.1)
    return images, weights, bias


def run(np, size):
    c_in, c_out, side = size
    x_host, w_host, bias_host = inputs(size)
    x = np.asarray(x_host)
    w = np.asarray(w_host)
    bias = np.asarray(bias_host)
    conv = side - 2
    pooled = conv // 2
    out = np.empty((c_out, pooled, pooled), dtype=np.float32)
    for co in range(c_out):
        acc = np.zeros((conv, conv), dtype=np.float32)
        for ci in range(c_in):
            for dy in range(3):
                for dx in range(3):
                    acc += w[co, ci, dy, dx] * x[ci, dy:dy + conv, dx:dx + conv]
        acc = np.maximum(acc + bias[co], 0.0)
        out[co] = acc.reshape(pooled, 2, pooled, 2).max(axis=(1, 3))
    return out


if __name__ == "__main__":
    print(run(np, SIZES["small"])[0])
