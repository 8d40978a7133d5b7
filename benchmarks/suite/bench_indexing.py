"""Indexing (slices, gathers, masks, assignment), joining, sorting and searching."""
import numpy

from .common import DTYPES, SIZES, device_random, sync, xp


class Indexing:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype)
        self.b = device_random(n, dtype, 1)
        rng = numpy.random.default_rng(0)
        self.idx = xp.asarray(rng.integers(0, n, max(1, n // 4)))
        self.mask = self.a > 0
        sync()

    def time_slice_copy(self, n, dtype):
        self.a[1:-1].copy()
        sync()

    def time_slice_assign(self, n, dtype):
        self.a[1:-1] = self.b[1:-1]
        sync()

    def time_gather(self, n, dtype):
        self.a[self.idx]
        sync()

    def time_take(self, n, dtype):
        xp.take(self.a, self.idx)
        sync()

    def time_boolean_mask(self, n, dtype):
        self.a[self.mask]
        sync()

    def time_where(self, n, dtype):
        xp.where(self.mask, self.a, self.b)
        sync()

    def time_concatenate(self, n, dtype):
        xp.concatenate([self.a, self.b])
        sync()


class Sorting:
    params = (SIZES, DTYPES + ["int32"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype)
        self.sorted = xp.sort(self.a)
        self.keys = device_random(1000, dtype, 1)
        sync()

    def time_sort(self, n, dtype):
        xp.sort(self.a)
        sync()

    def time_argsort(self, n, dtype):
        xp.argsort(self.a)
        sync()

    def time_unique(self, n, dtype):
        xp.unique(self.a)
        sync()

    def time_searchsorted(self, n, dtype):
        xp.searchsorted(self.sorted, self.keys)
        sync()
