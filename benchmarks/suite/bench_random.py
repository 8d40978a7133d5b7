"""Random numbers: the Generator API and the legacy functions."""
from .common import SIZES, sync, xp


class RandomGenerator:
    params = (SIZES, ["float32", "float64"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.rng = xp.random.default_rng(0)

    def time_random(self, n, dtype):
        xp.asarray(self.rng.random(n, dtype=dtype))
        sync()

    def time_standard_normal(self, n, dtype):
        xp.asarray(self.rng.standard_normal(n, dtype=dtype))
        sync()

    def time_integers(self, n, dtype):
        xp.asarray(self.rng.integers(0, 1000, n))
        sync()


class RandomLegacy:
    params = [SIZES]
    param_names = ["n"]

    def setup(self, n):
        xp.random.seed(0)

    def time_rand(self, n):
        xp.random.rand(n)
        sync()

    def time_randn(self, n):
        xp.random.randn(n)
        sync()

    def time_uniform(self, n):
        xp.random.uniform(-1.0, 1.0, n)
        sync()
