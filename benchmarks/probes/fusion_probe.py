"""Implicit fusion (issue 19) on the GPU: the 9-op chain, a stencil statement, ``(a*b).sum()``
and a single ``a + b``, with ``CUPYNUM_FUSION=1`` and ``0``, beside CuPy (eager, and the
chain through ``cupy.fuse``).

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/fusion_probe.py
    (--quick: 2^20 instead of 2^28, a dry run of the script)

The setting is read at import, so each runs in a child process of its own (``--child 1``,
``--child 0``, ``--cupy``).  Each child first checks its results against NumPy (PASS/FAIL:
bit for bit for the chain and the stencil), then prints, per case, the device time of a
call at 2^28 (CUDA events; median) or the wall time per evaluation at small sizes (rounds
closed by a sync; median), and the launches one evaluation makes.  A cupynum evaluation
forces its result (``Buffer.on_device()``: what any read does), so a dropped pending
result is not timed as free.  The first run of a fused structure compiles it (the
warm-up calls cover that).
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import (REPO_ROOT, bits_equal, event_median_ms, finish, import_cupy,  # noqa: E402
                         log, run_check, wall_median)

BIG = 1 << 20 if "--quick" in sys.argv else 1 << 28  # --quick: a dry run of the script
SMALL = 1000
GRID = 1000
FAILS: list = []
check = functools.partial(run_check, fails=FAILS)


def chain(xp, a, b, c):
    return ((a * b + c) * a - b) / (c + 1.5) + xp.sqrt(a) * 0.5 - b * c


def stencil(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2]
                           + A[1:-1, 2:])


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 2.0, n).astype(np.float32) for _ in range(3)]


def child(lib, label, fuse=None):
    """Checks and times for ``lib`` (cupynum or cupy); ``fuse``: CuPy's fused chain."""
    is_cupy = lib.__name__ == "cupy"
    sync = lib.cuda.runtime.deviceSynchronize if is_cupy else lib.cuda.synchronize

    def force(r):
        if not is_cupy:
            r._buf.on_device()  # what any read of r does
        return r

    counters = None
    if not is_cupy:
        from cupynum.testing import device_counters, reset_device_counters

        def counters(fn):
            fn()
            sync()
            reset_device_counters()
            fn()
            sync()
            return device_counters()["launches"]

    def same(got, want):
        got = lib.asnumpy(got) if is_cupy else got.get()
        assert bits_equal(got, want), "bits differ from NumPy's"

    hs = inputs(SMALL)
    small = [lib.asarray(h) for h in hs]
    check(f"{label} chain n={SMALL} bits", lambda: same(chain(lib, *small), chain(np, *hs)))
    ha = np.random.default_rng(1).standard_normal((GRID, GRID))
    A, B = lib.asarray(ha), lib.zeros((GRID, GRID))
    hb = np.zeros((GRID, GRID))
    stencil(ha, hb)
    stencil(A, B)
    check(f"{label} stencil bits", lambda: same(B, hb))

    rows = []
    per_eval = wall_median(lambda: force(chain(lib, *small)), sync, reps=20, warm=300,
                           calls=500)
    rows.append((f"chain n={SMALL} per evaluation", per_eval * 1e6, "us",
                 counters and counters(lambda: force(chain(lib, *small)))))
    if fuse is not None:
        per_fused = wall_median(lambda: fuse(*small), sync, reps=20, warm=300, calls=500)
        rows.append((f"cupy.fuse chain n={SMALL} per evaluation", per_fused * 1e6, "us", None))
    a, b = small[0], small[1]
    per_add = wall_median(lambda: force(a + b), sync, reps=20, warm=300, calls=1000)
    rows.append((f"a + b n={SMALL} per call", per_add * 1e6, "us",
                 counters and counters(lambda: force(a + b))))
    per_stencil = wall_median(lambda: stencil(A, B), sync, reps=20, warm=50, calls=200)
    rows.append((f"stencil {GRID}x{GRID} per statement", per_stencil * 1e6, "us",
                 counters and counters(lambda: stencil(A, B))))

    big = [lib.asarray(h) for h in inputs(BIG, seed=2)]
    ms = event_median_ms(lib, lambda: force(chain(lib, *big)), reps=10, warm=3)
    big_label = f"2^{BIG.bit_length() - 1}"
    rows.append((f"chain {big_label} float32", ms, "ms", counters and counters(
        lambda: force(chain(lib, *big)))))
    if fuse is not None:
        rows.append((f"cupy.fuse chain {big_label} float32",
                     event_median_ms(lib, lambda: fuse(*big), reps=10, warm=3), "ms", None))
    x, y = big[0], big[1]
    ms = event_median_ms(lib, lambda: force((x * y).sum()), reps=10, warm=3)
    rows.append((f"(a*b).sum() {big_label} float32", ms, "ms",
                 counters and counters(lambda: force((x * y).sum()))))
    ms = event_median_ms(lib, lambda: force(x + y), reps=10, warm=3)
    rows.append((f"a + b {big_label} float32", ms, "ms", None))
    for name, value, unit, launches in rows:
        extra = "" if launches is None else f"  ({launches} launches)"
        log(f"  {label:<12} {name:<38} {value:10.3f} {unit}{extra}")
    del big, x, y


def main():
    start = time.perf_counter()
    if "--child" in sys.argv:
        import cupynum

        child(cupynum, f"fusion={sys.argv[sys.argv.index('--child') + 1]}")
        return finish(FAILS, start)
    if "--cupy" in sys.argv:
        cupy = import_cupy(need_device=True)
        if cupy is not None:
            def cupy_chain(a, b, c):  # (cupy.fuse names its kernel after the function:
                return chain(cupy, a, b, c)  # a lambda's "<lambda>" does not compile)

            child(cupy, "cupy", fuse=cupy.fuse(cupy_chain))
        return finish(FAILS, start)
    status = 0
    for args, env in [(["--child", "1"], {"CUPYNUM_FUSION": "1"}),
                      (["--child", "0"], {"CUPYNUM_FUSION": "0"}), (["--cupy"], {})]:
        log(f"== {' '.join(args)}")
        quick = ["--quick"] if "--quick" in sys.argv else []
        p = subprocess.run([sys.executable, os.path.abspath(__file__), *args, *quick],
                           cwd=REPO_ROOT,
                           env=dict(os.environ, **env, PYTHONPATH=REPO_ROOT))
        status |= p.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
