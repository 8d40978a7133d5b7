"""Radix sort probe: correctness against NumPy, then cupynum vs CuPy timings, the time of
each kernel of one sort (CUDA events around every launch and memset of the sort module),
and a sweep of the sort's tuning knobs (``tuning.SORT``: onesweep_items, onesweep_min_blocks
keyed by (width, has payload), onesweep_match, onesweep_lookback, onesweep_late_payload, the
histogram's hist_impl, hist_vecs, hist_copies, hist_spread, hist_runs, hist_items,
hist_blocks_per_sm), so the defaults can be chosen from one run.  The histogram lines time the kernel alone
(``hist ...``: the median of its CUDA-event time) besides the whole sorts.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/sort_probe.py \
        [--no-sweep] [--budget SECONDS]

Times are CUDA-event medians of 20 calls after 3 warm-up calls (10 in the sweep), in ms.
The sweep stops once the probe has run ``--budget`` seconds (default 60).
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

# this folder, for _probe_util: importing it puts the repository root on sys.path
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import (bits_equal, event_median_ms, import_cupy, log,  # noqa: E402
                         past_budget, record_kernel_times, sort_sample)
import cupynum as cn  # noqa: E402
from cupynum._backends.cuda import sorting as cs  # noqa: E402
from cupynum._backends.cuda import tuning  # noqa: E402

cupy = import_cupy()

T0 = time.perf_counter()
rng = np.random.default_rng(0)
REPS, WARM = 20, 3


# --- correctness -----------------------------------------------------------------------------
def sorted_equal(got, exp):  # values: -0.0/+0.0 may tie either way in the unstable sort
    return got.shape == exp.shape and np.array_equal(got, exp, equal_nan=exp.dtype.kind in "fc")


def valid_stable_perm(x, p):
    """p is a permutation ordering x (NaN last), stable among equal values."""
    n = x.shape[-1]
    if p.shape != x.shape or p.dtype != np.int64:
        return False
    x2, p2 = x.reshape(-1, n), p.reshape(-1, n)
    for xr, pr in zip(x2, p2):
        if pr.min(initial=0) < 0 or pr.max(initial=0) >= n:
            return False
        seen = np.zeros(n, bool)
        seen[pr] = True
        if not seen.all():
            return False
        v = xr[pr]
        if v.dtype.kind == "f":
            nan = np.isnan(v)
            k = int(nan.sum())
            if nan[n - k:].sum() != k:
                return False
            v, pr = v[:n - k], pr
            tail = pr[n - k:]
            if k > 1 and not (tail[1:] > tail[:-1]).all():
                return False
            pr = pr[:n - k]
        if not (v[1:] >= v[:-1]).all():
            return False
        eq = v[1:] == v[:-1]
        if not (pr[1:][eq] > pr[:-1][eq]).all():
            return False
    return True


def check_all():
    ok = True
    sizes = [1, 7, 4096, 100_003, 1 << 21]
    for dt in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16, np.int16,
               np.uint64, np.bool_):
        for n in sizes:
            x = sort_sample(rng, n, dt)
            d = cn.asarray(x)
            r = []
            r.append(sorted_equal(cn.sort(d).get(), np.sort(x)))
            r.append(bits_equal(cn.sort(d, kind="stable").get(), np.sort(x, kind="stable")))
            p = cn.argsort(d).get()
            r.append(valid_stable_perm(x, p) and np.array_equal(p, np.argsort(x, kind="stable")))
            if n <= 100_003 or dt in (np.int64, np.float32):
                r.append(sorted_equal(cn.unique(d).get(), np.unique(x)))
            if not all(r):
                ok = False
                log(f"FAIL {np.dtype(dt).name} n={n} [sort, stable sort, argsort, unique]={r}")
    # small ranges (skipped passes), all equal (every pass trivial), 2-D axis sorts, complex
    for x in (rng.integers(0, 1 << 20, 1 << 20), np.full(300_000, 7, np.int64),
              rng.integers(-3, 3, 500_000).astype(np.int32), np.zeros(70_000, np.float32),
              rng.integers(0, 1 << 20, 1 << 20).astype(np.float64)):
        d = cn.asarray(x)
        r = [bits_equal(cn.sort(d).get(), np.sort(x)),
             np.array_equal(cn.argsort(d).get(), np.argsort(x, kind="stable")),
             bits_equal(cn.unique(d).get(), np.unique(x))]
        if not all(r):
            ok = False
            log(f"FAIL special {x.dtype} n={x.size} {r}")
    for dt, shape in ((np.float32, (300, 1001)), (np.int64, (1000, 37)), (np.uint8, (5, 70_000)),
                      (np.complex64, (40, 333)), (np.float16, (7, 5000))):
        x = sort_sample(rng, int(np.prod(shape)), np.float32).reshape(shape)
        with np.errstate(all="ignore"):
            x = (x + 1j * sort_sample(rng, x.size, np.float32).reshape(shape)).astype(dt) \
                if np.dtype(dt).kind == "c" else \
                (np.nan_to_num(x).astype(dt) if np.dtype(dt).kind in "iu" else x.astype(dt))
        d = cn.asarray(x)
        for ax in (-1, 0):
            r = [sorted_equal(cn.sort(d, axis=ax).get(), np.sort(x, axis=ax)),
                 np.array_equal(cn.argsort(d, axis=ax).get(),
                                np.argsort(x, axis=ax, kind="stable"))]
            if not all(r):
                ok = False
                log(f"FAIL axis={ax} {np.dtype(dt).name} {shape} [sort, argsort]={r}")
    x = sort_sample(rng, 1 << 18, np.float64)
    u = cn.unique(cn.asarray(x), return_index=True, return_inverse=True, return_counts=True)
    e = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    if not all(np.array_equal(a.get(), b, equal_nan=True) for a, b in zip(u, e)):
        ok = False
        log("FAIL unique(return_index, return_inverse, return_counts)")
    log(f"correctness: {'OK' if ok else 'FAILURES'}  ({time.perf_counter() - T0:.1f} s)")
    return ok


# --- timing ----------------------------------------------------------------------------------
def t_cn(fn):
    return event_median_ms(cn, fn, REPS, WARM)


def t_cp(fn):
    return event_median_ms(cupy, fn, REPS, WARM)


# --- per-kernel times ------------------------------------------------------------------------
def launch_label(kernel, grid, block):
    """A launch's label in the per-kernel lines: kernel[blocks]."""
    return f"{kernel.name}[{grid if isinstance(grid, int) else grid[0]}]"


def short(label):
    for a, b in (("cpn_rx_pass_", "pass_"), ("cpn_rx_hist_", "hist_"), ("cpn_rx_plan", "plan"),
                 ("cpn_", "")):
        label = label.replace(a, b)
    return label


def kernel_times(name, fn, runs=5):
    """Median time of each kernel (by position) of ``fn`` over ``runs`` calls: one line."""
    fn()
    cn.cuda.synchronize()
    per = record_kernel_times(cs, fn, launch_label, runs)
    labels = [lb for lb, _ in per[0]]
    med = [statistics.median(r[i][1] for r in per if len(r) == len(labels))
           for i in range(len(labels))]
    parts = [f"{short(lb) if i == 0 or lb != labels[i - 1] else '  same'} {t:.3f}"
             for i, (lb, t) in enumerate(zip(labels, med))]
    log(f"  kernels {name}: sum {sum(med):.3f} ms | " + " | ".join(parts))


def hist_time(fn, runs=5):
    """Median CUDA-event time of the histogram kernel within ``fn`` (a sort)."""
    ts = []
    for times in record_kernel_times(cs, fn, launch_label, runs):
        ts += [t for lb, t in times if lb.startswith("cpn_rx_hist_")][:1]
    return statistics.median(ts) if ts else float("nan")


def cases():
    n26, n24 = 1 << 26, 1 << 24
    f32 = rng.standard_normal(n26, dtype=np.float32)
    i32 = rng.integers(-2**31, 2**31 - 1, n26, dtype=np.int32)
    i64 = rng.integers(-2**63, 2**63 - 1, n24, dtype=np.int64)
    u64 = rng.integers(0, 1 << 20, n24, dtype=np.int64)
    return [("sort f32 2^26", "sort", f32, 4), ("argsort f32 2^26", "argsort", f32, 4),
            ("sort i32 2^26", "sort", i32, 4), ("argsort i64 2^24", "argsort", i64, 8),
            ("unique i64<2^20 2^24", "unique", u64, 8)]


def run_case(xp, op, d):
    f = {"sort": xp.sort, "argsort": xp.argsort, "unique": xp.unique}[op]
    return lambda: f(d)


def main():
    sweep = "--no-sweep" not in sys.argv
    ok = check_all()
    cs_ = cases()
    dev = {name: cn.asarray(x) for name, _, x, _ in cs_}
    cpd = {name: cupy.asarray(x) for name, _, x, _ in cs_} if cupy is not None else {}
    ref = {}
    log(f"{'case':24s} {'cupynum':>9s} {'cupy':>9s}  ratio(cupy/cupynum)")
    for name, op, x, _ in cs_:
        tn = t_cn(run_case(cn, op, dev[name]))
        tc = t_cp(run_case(cupy, op, cpd[name])) if cupy is not None else float("nan")
        log(f"{name:24s} {tn:9.3f} {tc:9.3f}  {tc / tn:5.2f}x")
        if cupy is not None:
            ref[name] = run_case(cupy, op, cpd[name])().get()
    # checks of the big cases (CuPy's answers: its argsort is stable)
    for name, op, x, _ in cs_:
        got = run_case(cn, op, dev[name])().get()
        good = (np.array_equal(got, ref[name]) if name in ref else
                valid_stable_perm(x, got) if op == "argsort" else None)
        if good is False:
            ok = False
            log(f"FAIL big case {name}")
    log(f"per-kernel times (ms, median of 5; [grid]; pass_<w>_<payload>_<sb>_<items>_b<minb>"
        f"_<match>_l<window>[_late])  ({time.perf_counter() - T0:.1f} s)")
    for name, op, x, _ in cs_[:4]:
        kernel_times(name, run_case(cn, op, dev[name]))
    if not sweep:
        log(f"done in {time.perf_counter() - T0:.1f} s: {'OK' if ok else 'FAILURES'}")
        return 0 if ok else 1
    budget = float(sys.argv[sys.argv.index("--budget") + 1]) if "--budget" in sys.argv else 60.0
    global REPS
    REPS = 10
    log(f"sweep (defaults {tuning.SORT}); ms per case")

    def apply(knobs):  # tuning.SORT: the defaults, then these ("name[key]": one entry)
        tuning.reset("SORT")
        t = tuning.SORT
        tables = {"onesweep_items": dict(t.onesweep_items),
                  "onesweep_min_blocks": dict(t.onesweep_min_blocks)}
        values = {}
        for k, v in knobs.items():
            if "[" in k:
                ix = [int(x) for x in k[k.index("[") + 1:-1].split(",")]
                tables[k[:k.index("[")]][ix[0] if len(ix) == 1 else (ix[0], bool(ix[1]))] = v
            else:
                values[k] = v
        tuning.override("SORT", **tables, **values)

    # (label, {knob: value; "onesweep_items[w]" sets one width, "onesweep_min_blocks[w,p]"
    # one (width, has payload)}, widths timed), most telling first: the sweep stops at the budget.
    # Histogram lines (first: the kernel is new) also log the histogram kernel's own time.
    variants = [
        ("hist scalar (former kernel)", {"hist_impl": "scalar"}, (4, 8)),
        ("hist copies 1", {"hist_copies": 1}, (4,)),
        ("hist copies 4", {"hist_copies": 4}, (4,)),
        ("hist copies 8 warp", {"hist_copies": 8, "hist_spread": "warp"}, (4, 8)),
        ("hist copies 2 warp", {"hist_copies": 2, "hist_spread": "warp"}, (4,)),
        ("hist no runs", {"hist_runs": False}, (4, 8)),
        ("hist vecs 2", {"hist_vecs": 2}, (4,)),
        ("hist vecs 8", {"hist_vecs": 8}, (4,)),
        ("hist copies 2", {"hist_copies": 2}, (4, 8)),
        ("hist blocks/SM 2", {"hist_blocks_per_sm": 2}, (4,)),
        ("hist blocks/SM 8", {"hist_blocks_per_sm": 8}, (4,)),
        ("minb value 3", {"onesweep_min_blocks[4,0]": 3, "onesweep_min_blocks[8,0]": 3}, (4, 8)),
        ("minb payload 0", {"onesweep_min_blocks[4,1]": 0, "onesweep_min_blocks[8,1]": 0}, (4, 8)),
        ("match any", {"onesweep_match": "any"}, (4, 8)),
        ("lookback 1", {"onesweep_lookback": 1}, (4,)),
        ("lookback 8", {"onesweep_lookback": 8}, (4,)),
        ("early payload", {"onesweep_late_payload": False}, (4, 8)),
        ("items4 12 minb4p 4", {"onesweep_items[4]": 12, "onesweep_min_blocks[4,1]": 4}, (4,)),
        ("items4 12", {"onesweep_items[4]": 12}, (4,)),
        ("items4 20 minb4p 2", {"onesweep_items[4]": 20, "onesweep_min_blocks[4,1]": 2}, (4,)),
        ("items8 16", {"onesweep_items[8]": 16}, (8,)),
        ("items8 10 minb8p 4", {"onesweep_items[8]": 10, "onesweep_min_blocks[8,1]": 4}, (8,)),
        ("minb8p 2", {"onesweep_min_blocks[8,1]": 2}, (8,)),
        ("hist items 4 (scalar)", {"hist_impl": "scalar", "hist_items": 4}, (4,)),
    ]
    for label, knobs, widths in variants:
        if past_budget(T0, budget):
            log("sweep stopped: time budget")
            break
        apply(knobs)
        res = []
        for name, op, x, width in cs_:
            if width not in widths:
                continue
            fn = run_case(cn, op, dev[name])
            t = t_cn(fn)
            good = name not in ref or np.array_equal(fn().get(), ref[name])
            ok &= good
            res.append(f"{name}={t:.3f}{'' if good else ' WRONG'}")
            if label.startswith("hist") and op == "sort":
                res.append(f"(hist {hist_time(fn):.3f})")
        log(f"  {label}: " + "  ".join(res))
    tuning.reset("SORT")
    log(f"done in {time.perf_counter() - T0:.1f} s: {'OK' if ok else 'FAILURES'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
