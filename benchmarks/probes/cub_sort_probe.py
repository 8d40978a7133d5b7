"""Sort engine probe: our own onesweep radix sort vs CUB's onesweep kernels compiled through
NVRTC (``tuning.SORT.engine`` 'own' | 'cub', cupynum/_backends/cuda/cub_sort.py).

1. Compiles every CUB program the checks need, in parallel (~4 s each through NVRTC).
2. For each engine: sort / stable sort / argsort / unique against NumPy for f32, f64, i32,
   i64, u8, f16, i16, u64, bool (NaNs, +-inf, -0.0 mixed in), sizes around tile edges.
3. Times both engines beside CuPy: sort and argsort of 2^26 f32 and of 2^24 f64, sort of
   2^26 i32; then the per-kernel times of the CUB engine, and a few CUB knobs
   (tuning.CUB_SORT: onesweep (threads, items), rank, hist, hist_blocks_per_sm).

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/cub_sort_probe.py [--no-sweep]

Times: CUDA-event medians of 10 calls after 2 warm-ups, in ms.  Prints PASS/FAIL lines.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# this folder, for _probe_util: importing it puts the repository root on sys.path
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import (bits_equal, event_median_ms, import_cupy, log,  # noqa: E402
                         past_budget, record_kernel_times, sort_sample)
import cupynum as cn  # noqa: E402
from cupynum._backends.cuda import cub_sort as cb  # noqa: E402
from cupynum._backends.cuda import tuning  # noqa: E402

cupy = import_cupy()

T0 = time.perf_counter()
rng = np.random.default_rng(0)
REPS, WARM = 10, 2
DTYPES = (np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16, np.int16,
          np.uint64, np.bool_)


def kinds_for(dt):
    """The (key bytes, mode, payload bytes) of the CUB programs a dtype's sorts use."""
    dt = np.dtype(dt)
    w = dt.itemsize
    if dt.kind == "f":
        return [(w, 2, 0), (w, 3, w), (w, 3, 4)]
    mode = 1 if dt.kind == "i" else 0
    return [(w, mode, 0), (w, mode, 4)]


def prepare_all():
    kinds = sorted({k for dt in DTYPES for k in kinds_for(dt)})
    t = time.perf_counter()
    errors = []

    def one(k):
        try:
            cb.prepare(*k)
        except Exception as e:  # report, keep going
            errors.append((k, e))

    with ThreadPoolExecutor(min(16, os.cpu_count() or 4)) as ex:
        list(ex.map(one, kinds))
    for k, e in errors:
        log(f"FAIL compile CUB kind {k}: {str(e)[:800]}")
    log(f"compiled {len(kinds)} CUB programs in {time.perf_counter() - t:.1f} s")
    return not errors


def check_engine(engine):
    tuning.override("SORT", engine=engine)
    ok = True
    for dt in DTYPES:
        for n in (1, 7, 7297, 100_003, 1 << 20):
            x = sort_sample(rng, n, dt)
            d = cn.asarray(x)
            try:
                r = [np.array_equal(cn.sort(d).get(), np.sort(x),
                                    equal_nan=np.dtype(dt).kind == "f"),
                     bits_equal(cn.sort(d, kind="stable").get(), np.sort(x, kind="stable")),
                     np.array_equal(cn.argsort(d).get(), np.argsort(x, kind="stable")),
                     np.array_equal(cn.unique(d).get(), np.unique(x), equal_nan=True)]
            except Exception:
                r = ["error: " + traceback.format_exc(limit=2)[-600:]]
            if not all(v is True for v in r):
                ok = False
                log(f"FAIL {engine} {np.dtype(dt).name} n={n} [sort, stable, argsort, unique]={r}")
    for x in (np.full(300_000, 7, np.int64), np.zeros(70_000, np.float32),
              rng.integers(-3, 3, 500_000).astype(np.int32)):
        d = cn.asarray(x)
        r = [bits_equal(cn.sort(d).get(), np.sort(x)),
             np.array_equal(cn.argsort(d).get(), np.argsort(x, kind="stable"))]
        if not all(r):
            ok = False
            log(f"FAIL {engine} special {x.dtype} n={x.size} {r}")
    log(f"{'PASS' if ok else 'FAIL'} correctness engine={engine} "
        f"({time.perf_counter() - T0:.1f} s)")
    return ok


def t_cn(fn):
    return event_median_ms(cn, fn, REPS, WARM)


def t_cp(fn):
    return event_median_ms(cupy, fn, REPS, WARM)


def kernel_times(name, fn, runs=5):
    fn()
    per = record_kernel_times(cb, fn, launch_label, runs)
    labels = [lb for lb, _ in per[0]]
    med = [statistics.median(r[i][1] for r in per) for i in range(len(labels))]
    log(f"  kernels cub {name}: sum {sum(med):.3f} | " +
        " | ".join(f"{lb} {t:.3f}" for lb, t in zip(labels, med)))


def launch_label(kernel, grid, block):
    """A launch's label in the per-kernel lines: kernel[grid x block], no cpn_cub_ prefix."""
    return f"{kernel.name.replace('cpn_cub_', '')}[{grid}x{block}]"


def cases():
    f32 = rng.standard_normal(1 << 26, dtype=np.float32)
    f64 = rng.standard_normal(1 << 24)
    i32 = rng.integers(-2**31, 2**31 - 1, 1 << 26, dtype=np.int32)
    return [("sort f32 2^26", "sort", f32), ("argsort f32 2^26", "argsort", f32),
            ("sort f64 2^24", "sort", f64), ("argsort f64 2^24", "argsort", f64),
            ("sort i32 2^26", "sort", i32)]


def op_fn(xp, op, d):
    f = xp.sort if op == "sort" else xp.argsort
    return lambda: f(d)


def time_cases(cs_, dev, ref):
    res = {}
    for name, op, _ in cs_:
        fn = op_fn(cn, op, dev[name])
        try:
            t = t_cn(fn)
            good = name not in ref or np.array_equal(fn().get(), ref[name])
            res[name] = f"{t:.3f}{'' if good else ' WRONG'}"
        except Exception as e:
            res[name] = f"error {str(e)[:200]}"
    return res


def main():
    sweep = "--no-sweep" not in sys.argv
    ok = prepare_all()
    for engine in ("own", "cub"):
        ok &= check_engine(engine)
    cs_ = cases()
    dev = {name: cn.asarray(x) for name, _, x in cs_}
    ref, tcp = {}, {}
    if cupy is not None:
        for name, op, x in cs_:
            d = cupy.asarray(x)
            tcp[name] = t_cp(op_fn(cupy, op, d))
            ref[name] = op_fn(cupy, op, d)().get()  # CuPy's argsort is stable
    times = {}
    for engine in ("own", "cub"):
        tuning.override("SORT", engine=engine)
        times[engine] = time_cases(cs_, dev, ref)
    log(f"{'case':20s} {'own':>12s} {'cub':>12s} {'cupy':>9s}   (ms)")
    for name, _, _ in cs_:
        log(f"{name:20s} {times['own'][name]:>12s} {times['cub'][name]:>12s} "
            f"{tcp.get(name, float('nan')):9.3f}")
        ok &= "WRONG" not in times["own"][name] + times["cub"][name]
    tuning.override("SORT", engine="cub")
    for name, op, _ in cs_[:4]:
        try:
            kernel_times(name, op_fn(cn, op, dev[name]))
        except Exception as e:
            log(f"  kernels cub {name}: error {str(e)[:300]}")
    if sweep:
        f32cases = [c for c in cs_ if "f32" in c[0]]
        variants = [
            ("rank atomic_or", {"rank": "atomic_or"}, {}),
            ("hist blocks/SM 4", {"hist_blocks_per_sm": 4}, {}),
            ("hist blocks/SM 32", {"hist_blocks_per_sm": 32}, {}),
            ("hist 256x8 parts 8", {"hist": (256, 8), "hist_parts": 8}, {}),
            ("onesweep 4,0 512x19", {}, {(4, 0): (512, 19)}),
            ("onesweep 4,0 384x19", {}, {(4, 0): (384, 19)}),
            ("onesweep 4,0 256x24", {}, {(4, 0): (256, 24)}),
            ("onesweep 4,4 384x19", {}, {(4, 4): (384, 19)}),
            ("onesweep 4,4 512x16", {}, {(4, 4): (512, 16)}),
        ]
        def apply(knobs, onesweep):  # tuning.CUB_SORT: the defaults, then these
            tuning.reset("CUB_SORT")
            tuning.override("CUB_SORT", onesweep=dict(onesweep), **knobs)

        # compile every variant's programs in parallel first (the disk cache keeps them)
        from cupynum._backends.cuda import compiler
        from cupynum._backends.cuda.kernels_util import program
        sources = set()
        for _, knobs, onesweep in variants:
            apply(knobs, onesweep)
            sources |= {program(cb.kernels_for(*k)) for k in ((4, 2, 0), (4, 3, 4))}
        t = time.perf_counter()
        def compile_one(src):
            try:
                compiler.compile_cubin(src, name="cupynum_cub.cu")
            except Exception as e:  # the variant's timing line will show the error
                log(f"  compile error: {str(e)[:300]}")

        with ThreadPoolExecutor(min(16, os.cpu_count() or 4)) as ex:
            list(ex.map(compile_one, sources))
        log(f"compiled {len(sources)} sweep programs in {time.perf_counter() - t:.1f} s")
        for label, knobs, onesweep in variants:
            if past_budget(T0, 80):
                log("sweep stopped: time budget")
                break
            apply(knobs, onesweep)
            r = time_cases(f32cases, dev, ref)
            log(f"  {label}: " + "  ".join(f"{k}={v}" for k, v in r.items()))
        tuning.reset("CUB_SORT")
    tuning.override("SORT", engine="own")
    log(f"done in {time.perf_counter() - T0:.1f} s: {'PASS' if ok else 'FAILURES'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
