"""cupynum.vectorize on the GPU against copy bandwidth and against numpy.vectorize (issue 23).

    CUPYNUM_BACKEND=cuda python benchmarks/probes/vectorize_probe.py [--log2n 28]

Prints, for a vectorized function with a branch and a ``math`` call over 2^28 float32
(``--log2n``):
  * the kernel's device time (CUDA events, median), its bandwidth (read + write bytes over
    time) and that bandwidth as a share of a device-to-device copy of the same bytes
    (``a.copy()`` of the input, which moves as many bytes: the target is >= 90%), in rounds
    of four calls, and in a stream of calls (a call queued before each round's start
    event, so no round counts its first call's host time before the launch);
  * CuPy's ``cupy.vectorize`` of the same function, timed the same way, where CuPy runs;
  * the first call's wall time (translation + NVRTC compile or cache load);
  * ``f(x) * 2 + x``: the function fused with the ops around it, one kernel;
  * numpy.vectorize on the host over 2^20 elements against cupynum.vectorize over the same
    2^20 (wall time closed by a sync: the target is >= 100x);
  * a check of the values against NumPy's float32 scalar evaluation on a sample.
Times nothing in CI (tests/ never import it).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import event_median_ms, finish, log, run_check, wall_median  # noqa: E402


def soft_exp(x):
    """A branch and a math call: the issue's benchmark function."""
    if x > 0.0:
        return x * math.exp(-x)
    return x * 0.5


def soft_exp_np(x):
    """The same with NumPy's ``exp``: on a float32 scalar it stays float32 (``math.exp``
    returns a Python float, so NumPy, and the kernel, compute that one in double)."""
    if x > 0.0:
        return x * np.exp(-x)
    return x * 0.5


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, default=28)
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    os.environ.setdefault("CUPYNUM_BACKEND", "cuda")
    import cupynum as cp

    start, fails = time.perf_counter(), []
    n = 1 << args.log2n
    host = np.random.default_rng(0).uniform(-4, 4, n).astype(np.float32)
    x = cp.asarray(host)
    f = cp.vectorize(soft_exp, otypes=[np.float32])

    def forced(r):  # (implicit fusion: a result waits until it is read; time the work)
        r._buf.on_device()
        return r

    t0 = time.perf_counter()
    y = forced(f(x))
    cp.cuda.Device().synchronize()
    log(f"first call (translate + compile or cache load + run): "
        f"{(time.perf_counter() - t0) * 1e3:.1f} ms")

    # Four calls per timed round: the Python before each launch (the deferral, the graph's
    # structure key) overlaps the previous call's kernel instead of idling the device, as
    # in a program; three warm-up calls get past the fused structure's compile.
    ms = event_median_ms(cp, lambda: forced(f(x)), args.reps, warm=3, calls=4)
    copy_ms = event_median_ms(cp, lambda: x.copy(), args.reps, warm=3, calls=4)
    nbytes = 2 * n * 4
    log(f"vectorize 2^{args.log2n} float32: {ms * 1e3:.1f} us, "
        f"{nbytes / ms / 1e9:.3f} TB/s; copy {copy_ms * 1e3:.1f} us, "
        f"{nbytes / copy_ms / 1e9:.3f} TB/s; vectorize/copy bandwidth {copy_ms / ms:.3f}, "
        "the first call's host time before its launch in each round of four")
    # The same with a call in flight before each round's start event: the kernels' time
    # per call in a stream of calls (the target), for both.
    ms_p = event_median_ms(cp, lambda: forced(f(x)), args.reps, warm=3, calls=4, primed=True)
    copy_p = event_median_ms(cp, lambda: x.copy(), args.reps, warm=3, calls=4, primed=True)
    log(f"in a stream of calls: vectorize {ms_p * 1e3:.1f} us, {nbytes / ms_p / 1e9:.3f} TB/s; "
        f"copy {copy_p * 1e3:.1f} us, {nbytes / copy_p / 1e9:.3f} TB/s; vectorize/copy "
        f"bandwidth {copy_p / ms_p:.3f} (target >= 0.90)")

    idx = np.random.default_rng(1).integers(0, n, 4096)
    with np.errstate(all="ignore"):
        want = np.array([soft_exp(v) for v in host[idx]], np.float32)

    def ulps(got):
        return int(np.abs(got.view(np.int32).astype(np.int64)
                          - want.view(np.int32).astype(np.int64)).max())

    try:  # CuPy's vectorize of the same function on the same values, timed the same way
        import cupy

        cx = cupy.asarray(host)
        cf = cupy.vectorize(soft_exp, otypes=[np.float32])
        c_ulps = ulps(cupy.asnumpy(cf(cx))[idx])
        c_ms = event_median_ms(cupy, lambda: cf(cx), args.reps, warm=3, calls=4, primed=True)
        c_copy = event_median_ms(cupy, lambda: cx.copy(), args.reps, warm=3, calls=4,
                                 primed=True)
        log(f"CuPy {cupy.__version__} in a stream of calls: cupy.vectorize {c_ms * 1e3:.1f} us, "
            f"{nbytes / c_ms / 1e9:.3f} TB/s; its copy {c_copy * 1e3:.1f} us; vectorize/copy "
            f"bandwidth {c_copy / c_ms:.3f}; values: at most {c_ulps} ulp from NumPy's")
        cx = None  # (its GiB back before the next measurements)
    except Exception as e:  # noqa: BLE001 - no CuPy (or no GPU for it): no column
        log(f"CuPy: skipped ({type(e).__name__}: {e})")

    f32 = cp.vectorize(soft_exp_np, otypes=[np.float32])
    ms32 = event_median_ms(cp, lambda: forced(f32(x)), args.reps, warm=3, calls=4)
    log(f"the same with np.exp (float32 math): {ms32 * 1e3:.1f} us, "
        f"{nbytes / ms32 / 1e9:.3f} TB/s; vectorize/copy bandwidth {copy_ms / ms32:.3f}")
    sin_ms = event_median_ms(cp, lambda: forced(cp.sin(x)), args.reps, warm=3, calls=4)
    log(f"the table's sin of the same array: {sin_ms * 1e3:.1f} us, "
        f"{nbytes / sin_ms / 1e9:.3f} TB/s; sin/copy bandwidth {copy_ms / sin_ms:.3f}")

    fused_ms = event_median_ms(cp, lambda: forced(f(x) * np.float32(2) + x), args.reps,
                               warm=3, calls=4)
    log(f"f(x) * 2 + x, one fused kernel: {fused_ms * 1e3:.1f} us, "
        f"{nbytes / fused_ms / 1e9:.3f} TB/s")

    def check_values():
        worst = ulps(cp.asnumpy(y)[idx])
        assert worst == 0, f"max {worst} ulp"
    run_check("values against NumPy float32 scalars (bit for bit: cpn::exp_f32)",
              check_values, fails)

    m = 1 << 20
    small_host = host[:m]
    small = cp.asarray(small_host)
    t0 = time.perf_counter()
    np.vectorize(soft_exp, otypes=[np.float32])(small_host)
    np_s = time.perf_counter() - t0
    sync = cp.cuda.Device().synchronize
    ours_s = wall_median(lambda: forced(f(small)), sync, args.reps)
    log(f"2^20 elements: numpy.vectorize {np_s * 1e3:.1f} ms, cupynum.vectorize "
        f"{ours_s * 1e3:.3f} ms (wall, with the launch): {np_s / ours_s:.0f}x (target >= 100x)")
    return finish(fails, start)


if __name__ == "__main__":
    sys.exit(main())
