"""The programs in examples/, run through cupynum (benchmarks/example_workloads.py)."""
from example_workloads import NAMES, prepare

from .common import EXAMPLE_SIZES, sync, xp


class Examples:
    params = (NAMES, EXAMPLE_SIZES)
    param_names = ["example", "size"]
    timeout = 600
    number = 1

    def setup(self, example, size):
        inputs, self.fn, _, _ = prepare(example, size)
        self.args = [xp.asarray(a) for a in inputs]
        self.fn(xp, *self.args)  # warm-up: compiles the kernels on a GPU
        sync()

    def time_example(self, example, size):
        self.fn(xp, *self.args)
        sync()
