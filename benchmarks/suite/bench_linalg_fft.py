"""Matrix products, dense linear algebra and FFTs."""
import numpy

from .common import FFT_SIZES, MATRIX, device_random, sync, xp


class MatMul:
    params = (MATRIX, ["float32", "float64"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n * n, dtype, 0).reshape(n, n)
        self.b = device_random(n * n, dtype, 1).reshape(n, n)
        self.v = device_random(n, dtype, 2)

    def time_matmul(self, n, dtype):
        self.a @ self.b
        sync()

    def time_matvec(self, n, dtype):
        self.a @ self.v
        sync()

    def time_dot_1d(self, n, dtype):
        xp.dot(self.v, self.v)
        sync()


class Solvers:
    params = (MATRIX, ["float64"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        rng = numpy.random.default_rng(0)
        m = rng.standard_normal((n, n))
        self.a = xp.asarray((m @ m.T / n + numpy.eye(n)).astype(dtype))  # SPD
        self.b = xp.asarray(rng.standard_normal(n).astype(dtype))
        sync()

    def time_solve(self, n, dtype):
        xp.linalg.solve(self.a, self.b)
        sync()

    def time_inv(self, n, dtype):
        xp.linalg.inv(self.a)
        sync()

    def time_cholesky(self, n, dtype):
        xp.linalg.cholesky(self.a)
        sync()

    def time_eigh(self, n, dtype):
        xp.linalg.eigh(self.a)
        sync()

    def time_svd(self, n, dtype):
        xp.linalg.svd(self.a)
        sync()

    def time_norm(self, n, dtype):
        xp.linalg.norm(self.a)
        sync()


class FFT:
    params = (FFT_SIZES, ["complex64", "complex128"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        self.a = device_random(n, dtype)
        self.r = self.a.real.copy()
        side = max(2, int(n ** 0.5))
        self.m = device_random(side * side, dtype, 1).reshape(side, side)

    def time_fft(self, n, dtype):
        xp.fft.fft(self.a)
        sync()

    def time_ifft(self, n, dtype):
        xp.fft.ifft(self.a)
        sync()

    def time_rfft(self, n, dtype):
        xp.fft.rfft(self.r)
        sync()

    def time_fft2(self, n, dtype):
        xp.fft.fft2(self.m)
        sync()
