"""Reductions and scans, whole-array and along an axis."""
from .common import DTYPES, SIZES, device_random, square, sync, xp


class Reduce:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype)
        side = square(n)
        self.m = device_random(side * side, dtype).reshape(side, side)

    def time_sum(self, n, dtype):
        self.a.sum()
        sync()

    def time_max(self, n, dtype):
        self.a.max()
        sync()

    def time_mean(self, n, dtype):
        xp.mean(self.a)
        sync()

    def time_std(self, n, dtype):
        xp.std(self.a)
        sync()

    def time_argmax(self, n, dtype):
        xp.argmax(self.a)
        sync()

    def time_sum_axis0(self, n, dtype):
        self.m.sum(axis=0)
        sync()

    def time_sum_axis1(self, n, dtype):
        self.m.sum(axis=1)
        sync()


class Scan:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype)

    def time_cumsum(self, n, dtype):
        xp.cumsum(self.a)
        sync()

    def time_cumprod(self, n, dtype):
        xp.cumprod(self.a)
        sync()
