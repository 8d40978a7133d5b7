"""Elementwise ufuncs and operators: bandwidth-bound kernels, contiguous and strided."""
from .common import DTYPES, SIZES, device_random, sync, xp


class Binary:
    params = (SIZES, DTYPES + ["int32"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype, 0)
        self.b = device_random(n, dtype, 1)
        self.out = xp.empty_like(self.a)

    def time_add(self, n, dtype):
        self.a + self.b
        sync()

    def time_multiply_scalar(self, n, dtype):
        self.a * 2
        sync()

    def time_add_out(self, n, dtype):
        xp.add(self.a, self.b, out=self.out)
        sync()

    def time_less(self, n, dtype):
        self.a < self.b
        sync()

    def time_maximum(self, n, dtype):
        xp.maximum(self.a, self.b)
        sync()

    def time_strided_add(self, n, dtype):
        self.a[::2] + self.b[::2]
        sync()


class Unary:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype)

    def time_sin(self, n, dtype):
        xp.sin(self.a)
        sync()

    def time_exp(self, n, dtype):
        xp.exp(self.a)
        sync()

    def time_sqrt_abs(self, n, dtype):
        xp.sqrt(xp.abs(self.a))
        sync()

    def time_chain_3_ops(self, n, dtype):
        (self.a * 2.0 + 1.0) * self.a
        sync()


class Broadcast:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        side = max(1, int(n ** 0.5))
        self.m = device_random(side * side, dtype).reshape(side, side)
        self.row = device_random(side, dtype, 1)

    def time_matrix_plus_row(self, n, dtype):
        self.m + self.row
        sync()

    def time_matrix_plus_column(self, n, dtype):
        self.m + self.row[:, None]
        sync()

    def time_transpose_copy(self, n, dtype):
        self.m.T.copy()
        sync()
