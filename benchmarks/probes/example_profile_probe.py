"""Where an example's time goes, for any tree on PYTHONPATH (an older cupynum included:
public API only): issue 17's before/after check found heat_equation and kmeans slower on the
H200 by more than the fake driver's per-op Python explains.

    PYTHONPATH=<tree> CUPYNUM_BACKEND=cuda python benchmarks/probes/example_profile_probe.py \
        heat_equation [kmeans ...]

Per example: the wall time of one run closed by a sync (best of 5); the device time of one
run (CUDA events around it: close to the wall time means the GPU is the bottleneck, far
below it means the Python that issues the launches is); then one profiled run, its
functions by own time, so that a call that costs more on the real driver than on the fake
one shows up by name.
"""
import cProfile
import pathlib
import pstats
import sys
import time

import cupynum as cp  # (first: example_workloads puts this repository's root on the path)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import example_workloads as ew  # noqa: E402


def main(names):
    for name in names:
        inputs, fn, *_ = ew.prepare(name, "medium")
        args = [cp.asarray(x) for x in inputs]
        fn(cp, *args)
        cp.cuda.synchronize()
        walls, devs = [], []
        for _ in range(5):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            t0 = time.perf_counter()
            s.record()
            fn(cp, *args)
            e.record()
            e.synchronize()
            walls.append(time.perf_counter() - t0)
            devs.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
        print(f"== {name}: wall {min(walls) * 1e3:.3f} ms, device {min(devs) * 1e3:.3f} ms",
              flush=True)
        prof = cProfile.Profile()
        prof.enable()
        fn(cp, *args)
        cp.cuda.synchronize()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main(sys.argv[1:] or ["heat_equation", "kmeans"])
