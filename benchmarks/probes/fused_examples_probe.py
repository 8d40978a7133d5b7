"""The statements of kmeans and nbody that fusion changes, timed alone (device time per
statement, CUDA events around a batch), for comparing ``CUPYNUM_FUSION=1`` with ``=0`` (one
process each: the setting is read at import).

    CUPYNUM_BACKEND=cuda CUPYNUM_PLACEMENT=device python benchmarks/probes/fused_examples_probe.py
"""
import os
import sys

import numpy

import cupynum as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import nbody  # noqa: E402
from _probe_util import event_median_ms  # noqa: E402


def device_time(fn):
    """Microseconds per call: CUDA events around 20 calls, median of 5 rounds, after 3
    warm-up calls (a fused structure compiles the second time it is seen)."""
    return event_median_ms(np, fn, reps=5, warm=3, calls=20) * 1e3


def main():
    rng = numpy.random.default_rng(0)
    n, k, d = 200_000, 32, 16
    P = np.asarray(rng.standard_normal((n, d)))
    C = np.asarray(rng.standard_normal((k, d)))
    M = P @ C.T
    sq = (P * P).sum(axis=1)
    c2 = (C * C).sum(axis=1)
    labels = np.argmin(sq[:, None] - 2.0 * M + c2[None, :], axis=1)
    clusters = np.arange(k)
    onehot = (labels[:, None] == clusters[None, :]).astype(P.dtype)
    pos = np.asarray(rng.standard_normal((2048, 3)))
    mass = np.asarray(rng.uniform(0.5, 1.5, (2048, 1)))
    x = pos[:, 0:1]
    t = (x.T - x) ** 2
    cases = {
        "argmin(sq[:,None] - 2*M + c2[None,:], axis=1)":
            lambda: np.argmin(sq[:, None] - 2.0 * M + c2[None, :], axis=1),
        "(l[:,None] == k[None,:]).astype(f8).sum(axis=0)":
            lambda: (labels[:, None] == clusters[None, :]).astype(P.dtype).sum(axis=0),
        "onehot.sum(axis=0) (stored)": lambda: onehot.sum(axis=0),
        "onehot = ...; sum(axis=0); onehot.T @ P": lambda: (
            lambda o: (o.sum(axis=0), o.T @ P))(
                (labels[:, None] == clusters[None, :]).astype(P.dtype)),
        "nbody accelerations (2048)": lambda: nbody.accelerations(pos, mass, 0.1, np=np),
        "((x.T - x) ** 2).sum(axis=1) (2048^2)": lambda: ((x.T - x) ** 2).sum(axis=1),
        "(x.T - x) ** -1.5 stored (2048^2)": lambda: (x.T - x) ** -1.5,
        "(x.T - x) ** 2 stored (2048^2)": lambda: (x.T - x) ** 2,
        "t.sum(axis=1), t stored (2048^2)": lambda: t.sum(axis=1),
    }
    tag = f"fusion={os.environ.get('CUPYNUM_FUSION', '1')}"
    for name, fn in cases.items():
        print(f"{tag}  {name:<48} {device_time(fn):9.1f} us", flush=True)


if __name__ == "__main__":
    main()
