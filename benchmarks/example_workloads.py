"""The programs in examples/ as benchmark workloads, for side_by_side.py and the asv suite.

Each example's computation is called with ``np=xp`` for xp in (cupynum, cupy, numpy), on
the same host inputs (made by NumPy's seeded generator and moved with ``xp.asarray``), so
the code that runs is the example's own, unchanged but for the namespace.

    prepare(name, size) -> (host_inputs, fn, rtol, atol)

``fn(xp, *device_inputs)`` returns an array or a tuple of arrays; ``size`` is ``"small"``
(the examples' ``--small``), ``"medium"`` (the benchmark size) or ``"large"`` (the
examples' defaults).
"""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
EXAMPLES = os.path.join(ROOT, "examples")
for _path in (ROOT, EXAMPLES):  # the examples import examples/_harness.py as a top-level module
    if _path not in sys.path:
        sys.path.insert(0, _path)

NAMES = ["black_scholes", "heat_equation", "kmeans", "conjugate_gradient", "nbody", "mlp"]
_modules: dict = {}


def load(name):
    """The example module (imported from examples/<name>.py once per process)."""
    mod = _modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(
            f"cupynum_example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _modules[name] = mod
    return mod


def _pick(size, small, medium, large):
    return {"small": small, "medium": medium, "large": large}[size]


def prepare(name, size="medium", seed=2024):
    mod = load(name)
    if name == "black_scholes":
        n = _pick(size, 10_000, 1_000_000, 4_000_000)
        rng = numpy.random.default_rng(seed)
        inputs = (rng.uniform(5.0, 30.0, n), rng.uniform(1.0, 100.0, n),
                  rng.uniform(0.25, 10.0, n))
        return (inputs, lambda xp, S, X, T: mod.black_scholes(S, X, T, 0.02, 0.30, np=xp),
                1e-9, 1e-9)
    if name == "heat_equation":
        n, steps = _pick(size, (64, 20), (512, 100), (1024, 500))
        rng = numpy.random.default_rng(seed)
        inputs = ((rng.random((n, n)) * 10.0),)
        return (inputs,
                lambda xp, interior: mod.diffuse(mod.initial_state(interior, np=xp), steps),
                1e-12, 1e-12)
    if name == "kmeans":
        n, dim, k, iters = _pick(size, (2_000, 4, 8, 5), (200_000, 16, 32, 10),
                                 (500_000, 16, 32, 20))
        return (mod.inputs(n, dim, k, "float64", seed),
                lambda xp, points, start: mod.kmeans(points, start, iters, np=xp), 1e-9, 1e-9)
    if name == "conjugate_gradient":
        n = _pick(size, 64, 2048, 4096)
        return mod.inputs(n, "float64", seed), lambda xp, A, b: mod.compute(A, b, np=xp), 1e-7, 1e-7
    if name == "nbody":
        n, steps = _pick(size, (64, 5), (2048, 5), (4096, 10))
        return (mod.inputs(n, "float64", seed),
                lambda xp, pos, vel, mass: mod.simulate(pos, vel, mass, steps, np=xp), 1e-9, 1e-9)
    if name == "mlp":
        batch, sizes = _pick(size, (64, (32, 64, 64, 10)), (4096, (784, 1024, 1024, 10)),
                             (8192, (784, 1024, 1024, 10)))
        return (mod.inputs(batch, sizes, "float32", seed),
                lambda xp, x, *params: mod.compute(x, *params, np=xp), 1e-3, 1e-5)
    raise KeyError(name)


def describe(name, size):
    return {
        "black_scholes": {"small": "10k options", "medium": "1M options", "large": "4M options"},
        "heat_equation": {"small": "66^2 x 20 steps", "medium": "514^2 x 100 steps",
                          "large": "1026^2 x 500 steps"},
        "kmeans": {"small": "2k pts k=8", "medium": "200k pts d=16 k=32 x10",
                   "large": "500k pts d=16 k=32 x20"},
        "conjugate_gradient": {"small": "n=64", "medium": "n=2048 f64", "large": "n=4096 f64"},
        "nbody": {"small": "64 bodies x5", "medium": "2048 bodies x5", "large": "4096 bodies x10"},
        "mlp": {"small": "batch 64", "medium": "batch 4096 784-1024-1024-10 f32",
                "large": "batch 8192 f32"},
    }[name][size]
