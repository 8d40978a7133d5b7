"""Per-call overhead on small arrays: where Python, not the GPU, sets the time."""
import numpy

from .common import SMALL, device_random, sync, xp


class SmallArrays:
    params = (SMALL, ["float32", "float64"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype, 0)
        self.b = device_random(n, dtype, 1)
        self.host = numpy.ones(n, dtype)

    def time_add(self, n, dtype):
        self.a + self.b
        sync()

    def time_multiply_scalar(self, n, dtype):
        self.a * 2.0
        sync()

    def time_sin(self, n, dtype):
        xp.sin(self.a)
        sync()

    def time_chain_9_ops(self, n, dtype):
        a, b = self.a, self.b
        ((((a * b + a) * 2.0 - b) * a + 1.0) * b - a) * 0.5
        sync()

    def time_slice(self, n, dtype):
        self.a[1:]

    def time_slice_assign(self, n, dtype):
        self.a[1:] = self.b[1:]
        sync()

    def time_sum(self, n, dtype):
        self.a.sum()
        sync()

    def time_float_of_sum(self, n, dtype):
        float(self.a.sum())

    def time_empty(self, n, dtype):
        xp.empty(n, dtype)

    def time_asarray_from_host(self, n, dtype):
        xp.asarray(self.host)
        sync()

    def time_reshape(self, n, dtype):
        self.a.reshape(1, n)


class ScalarResults:
    def setup(self):
        self.a = device_random(1000, "float64")

    def time_index_item(self):
        self.a[3].item()

    def time_compare_0d_with_python(self):
        bool(self.a[3] < 0.5)
