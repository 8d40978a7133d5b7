"""Creating arrays on the device, and moving them between host and device."""
import numpy

from .common import DTYPES, SIZES, device_random, sync, xp


class Creation:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def time_empty(self, n, dtype):
        xp.empty(n, dtype)
        sync()

    def time_zeros(self, n, dtype):
        xp.zeros(n, dtype)
        sync()

    def time_full(self, n, dtype):
        xp.full(n, 1.5, dtype)
        sync()

    def time_arange(self, n, dtype):
        xp.arange(n, dtype=dtype)
        sync()

    def time_linspace(self, n, dtype):
        xp.linspace(0.0, 1.0, n, dtype=dtype)
        sync()


class Transfer:
    params = (SIZES, DTYPES)
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.host = numpy.ones(n, dtype)
        self.dev = device_random(n, dtype)

    def time_host_to_device(self, n, dtype):
        xp.asarray(self.host)
        sync()

    def time_device_to_host(self, n, dtype):
        self.dev.get()

    def time_numpy_asarray(self, n, dtype):
        numpy.asarray(self.dev)

    def time_copy_on_device(self, n, dtype):
        self.dev.copy()
        sync()

    def time_astype(self, n, dtype):
        self.dev.astype("float64" if dtype == "float32" else "float32")
        sync()
