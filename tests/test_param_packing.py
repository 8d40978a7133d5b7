"""The hand-written kernels' launch path packs every parameter with one ``struct`` call
(kernels_util._Packed); the bytes must be exactly what ``ParamBlock.set_values`` writes,
for every kernel's parameter list, including by-value arrays, and for values that only
the slow path accepts (0-d arrays)."""
from __future__ import annotations

import numpy as np

from cupynum._backends.cuda import indexing, kernels_util as ku, matmul_kernel, rng, runtime
from cupynum._backends.cuda import sorting


def _kernels():
    ks = indexing.all_kernels() + matmul_kernel.all_kernels() + rng.all_kernels()
    ks += [sorting.searchsorted_kernel(w) for w in (1, 2, 4, 8)]
    return ks


def _values(kernel, gen):
    out = []
    for _, dt in kernel.params:
        if dt.shape:
            out.append(gen.integers(-2**40, 2**40, int(np.prod(dt.shape))).astype(dt.base))
        elif dt.kind == "f":
            out.append(float(gen.standard_normal()))
        elif dt.kind == "b":
            out.append(bool(gen.integers(2)))
        elif dt.kind == "u":
            out.append(int(gen.integers(0, 2**(8 * dt.itemsize - 1))) * 2 + 1)
        else:
            out.append(-int(gen.integers(0, 2**(8 * dt.itemsize - 1))))
    return out


def test_packed_bytes_equal_paramblock():
    gen = np.random.default_rng(0)
    for k in _kernels():
        vals = _values(k, gen)
        packed = ku._Packed(k)
        packed.fill(vals)
        ref = runtime.ParamBlock([dt for _, dt in k.params])
        ref.set_values(vals)
        assert packed.pb.tobytes() == ref.tobytes(), k.name


def test_values_only_the_slow_path_takes():
    k = matmul_kernel.matmul_kernel(np.dtype("f"))
    vals = [1, 2, 3, np.array(4), 5, 6, np.arange(6), np.int64(7)]
    packed = ku._Packed(k)
    packed.fill(vals)
    ref = runtime.ParamBlock([dt for _, dt in k.params])
    ref.set_values(vals)
    assert packed.pb.tobytes() == ref.tobytes()
