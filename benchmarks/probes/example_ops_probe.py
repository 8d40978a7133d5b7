"""An example's statements under ``cupynum.profile()``: host and GPU time per NumPy call,
so that a fused kernel slower than the eager ops it replaces shows up by name (run once
with ``CUPYNUM_FUSION=0`` and once without, and compare).

    CUPYNUM_BACKEND=cuda python benchmarks/probes/example_ops_probe.py kmeans [nbody ...]

The example runs once to warm up (kernels, pool), then once under the profile.  With
fusion, a deferred op's GPU time lands on the call that computes it.
"""
import pathlib
import sys

import cupynum as cp  # (first: example_workloads puts this repository's root on the path)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import example_workloads as ew  # noqa: E402


def main(names):
    for name in names:
        inputs, fn, *_ = ew.prepare(name, "medium")
        args = [cp.asarray(x) for x in inputs]
        sync = cp.cuda.synchronize if cp.cuda.is_available() else (lambda: None)
        fn(cp, *args)
        sync()
        with cp.profile() as prof:
            fn(cp, *args)
            sync()
        print(f"== {name}", flush=True)
        print(prof, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["kmeans", "nbody"])
