"""Where examples/mlp.py's forward pass spends its device time, beside CuPy.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/mlp_probe.py

The side-by-side benchmark's mlp row (batch 4096, 784-1024-1024-10, float32) trails CuPy;
this times each operation of the forward pass alone (CUDA events around 5 calls, median of
20 rounds) for cupynum and CuPy on the same inputs, then the whole forward pass under each
``tuning.BLAS.gemm_api`` (cuBLAS GemmEx or the typed sgemm), after checking the result against
NumPy's.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                os.pardir, "examples"))
from _probe_util import event_median_ms, import_cupy, log, wall_median  # noqa: E402

import cupynum as cpn  # noqa: E402
import mlp  # noqa: E402

cupy = import_cupy(need_device=True)


def ops(xp, x, w0, b0, w1, b1, w2, b2):
    """(name, thunk) of each step of the forward pass, on inputs of the right shapes."""
    h0 = xp.maximum(x @ w0 + b0, 0)
    h1 = xp.maximum(h0 @ w1 + b1, 0)
    z = h1 @ w2 + b2
    m = z.max(axis=1, keepdims=True)
    e = xp.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    p0 = x @ w0
    return [("x @ W0 (4096x784 @ 784x1024)", lambda: x @ w0),
            ("+ b0 (broadcast row)", lambda: p0 + b0),
            ("maximum(., 0)", lambda: xp.maximum(p0, 0)),
            ("h0 @ W1 (1024x1024)", lambda: h0 @ w1),
            ("h1 @ W2 (1024x10)", lambda: h1 @ w2),
            ("z.max(axis=1, keepdims)", lambda: z.max(axis=1, keepdims=True)),
            ("z - m (broadcast column)", lambda: z - m),
            ("exp", lambda: xp.exp(z)),
            ("e.sum(axis=1, keepdims)", lambda: e.sum(axis=1, keepdims=True)),
            ("e / s", lambda: e / s)]


def main():
    from cupynum._backends.cuda import tuning

    host = mlp.inputs(4096)
    ref = mlp.compute(*host, np=np)
    ours = [cpn.asarray(a) for a in host]
    got = cpn.asnumpy(mlp.compute(*ours, np=cpn))
    ok = np.allclose(got, ref, rtol=1e-3, atol=1e-5)
    log(f"{'PASS' if ok else 'FAIL'} forward pass against NumPy")
    theirs = [cupy.asarray(a) for a in host] if cupy else None
    rows = zip(ops(cpn, *ours), ops(cupy, *theirs) if cupy else [(None, None)] * 10)
    for (name, fn), (_, kfn) in rows:
        t = event_median_ms(cpn, fn, 20, warm=2, calls=5) * 1e3
        k = event_median_ms(cupy, kfn, 20, warm=2, calls=5) * 1e3 if kfn else float("nan")
        log(f"{name:32s} cupynum {t:9.1f} us   cupy {k:9.1f} us   ratio {t / k:5.2f}")
    # the last layer's product (n = 10): device time (events around 5 calls) and host time
    # per call (5 calls without a sync), under each cuBLAS entry and algorithm
    h1 = cpn.maximum(cpn.maximum(ours[0] @ ours[1] + ours[2], 0) @ ours[3] + ours[4], 0)
    w2 = ours[5]
    for api, algo in (("gemm_ex", -1), ("typed", -1), ("gemm_ex", 99), ("gemm_ex", -1)):
        with tuning.overridden("BLAS", gemm_api=api, gemm_algo=algo):
            t = event_median_ms(cpn, lambda: h1 @ w2, 20, warm=2, calls=5) * 1e3
            hs = wall_median(lambda: h1 @ w2, lambda: None, 20, warm=2, calls=5) * 1e6
        log(f"h1 @ W2, gemm_api={api:8s} algo {algo:3d}: events {t:7.1f} us  host {hs:6.1f} us")
    if cupy:
        kh1, kw2 = cupy.asarray(cpn.asnumpy(h1)), theirs[5]
        t = event_median_ms(cupy, lambda: kh1 @ kw2, 20, warm=2, calls=5) * 1e3
        hs = wall_median(lambda: kh1 @ kw2, lambda: None, 20, warm=2, calls=5) * 1e6
        log(f"h1 @ W2, CuPy:                      events {t:7.1f} us  host {hs:6.1f} us")
    # where the host time of the small product and of a row reduction goes (cProfile, 200
    # calls), and the row reduction's device time alone (events around its launches)
    import cProfile
    import pstats

    z = h1 @ w2
    for name, fn in (("h1 @ W2", lambda: h1 @ w2),
                     ("z.sum(axis=1, keepdims=True)", lambda: z.sum(axis=1, keepdims=True))):
        prof = cProfile.Profile()
        prof.runcall(lambda: [fn() for _ in range(200)])
        log(f"cProfile of 200 x {name} (top 8 by own time):")
        st = pstats.Stats(prof)
        for (file, line, func), (_, nc, tt, ct, _) in sorted(
                st.stats.items(), key=lambda kv: -kv[1][2])[:8]:
            log(f"  {tt / 200 * 1e6:7.2f} us own {ct / 200 * 1e6:7.2f} us cum  {nc / 200:5.1f}x  "
                f"{os.path.basename(file)}:{line} {func}")
    from cupynum._backends.cuda import reduction as red

    be = cpn._backends.get()
    out = cpn.empty((4096,), np.float32)
    from cupynum._api.reductions import _reduce_op

    op = _reduce_op("add", "add", np.dtype(np.float32))
    t = event_median_ms(cpn, lambda: red.reduce(op, z, out, (1,)), 20, warm=2, calls=5) * 1e3
    log(f"z.sum(axis=1) backend call alone: events {t:.1f} us")
    del be
    for api in ("gemm_ex", "typed", "gemm_ex", "typed"):
        with tuning.overridden("BLAS", gemm_api=api):
            t = event_median_ms(cpn, lambda: mlp.compute(*ours, np=cpn), 20, warm=2) * 1e3
        log(f"forward, gemm_api={api:8s} cupynum {t:9.1f} us")
    if cupy:
        t = event_median_ms(cupy, lambda: mlp.compute(*theirs, np=cupy), 20, warm=2) * 1e3
        log(f"forward, CuPy                  {t:9.1f} us")
    log("done: " + ("OK" if ok else "FAIL"))


if __name__ == "__main__":
    main()
