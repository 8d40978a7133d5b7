"""cupynum vs CuPy vs NumPy on identical inputs, in one process.

    python benchmarks/side_by_side.py [--quick] [--json out.json] [--only NAME,...]

Each workload first checks that each library's result matches NumPy's, then times it:
device workloads by syncing before and after a batch of calls (median over batches),
per-call workloads as wall time per call over many calls.  Bandwidth counts bytes read
plus bytes written, and is also given as a fraction of the device-copy bandwidth measured
in the same run.  Libraries that are not installed (or no GPU) are skipped with a note.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))


def load_libraries():
    libs = {"numpy": np}
    import cupynum

    libs["cupynum"] = cupynum
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        libs["cupy"] = cupy
    except Exception as e:  # noqa: BLE001 - any failure means: no CuPy here
        print(f"note: CuPy skipped ({type(e).__name__}: {e})")
    return libs


def sync(xp):
    if xp.__name__ == "cupy":
        xp.cuda.runtime.deviceSynchronize()
    elif xp.__name__ == "cupynum":
        from cupynum import _backends

        _backends.get().synchronize()


def to_host(x):
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def time_device(xp, fn, repeats, inner):
    fn()
    sync(xp)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync(xp)
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def time_per_call(xp, fn, calls, rounds=5):
    for _ in range(1000):
        fn()
    sync(xp)
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync(xp)
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


# workloads -----------------------------------------------------------------------------
def workloads(quick):
    n_big = 2**24 if quick else 2**28
    rng = np.random.default_rng(0)
    a32 = rng.standard_normal(n_big, dtype=np.float32)
    b32 = rng.standard_normal(n_big, dtype=np.float32)
    a64 = rng.standard_normal(n_big // 2)
    small = rng.standard_normal(1000, dtype=np.float32)
    small2 = rng.standard_normal(1000, dtype=np.float32)
    gib = np.ones(2**28 if not quick else 2**24, np.float32)  # 1 GiB of float32 (64 MiB quick)

    W = []

    def add(name, kind, inputs, fn, nbytes=0, per_call=False, check=True, tol=0):
        W.append(dict(name=name, kind=kind, inputs=inputs, fn=fn, nbytes=nbytes,
                      per_call=per_call, check=check, tol=tol))

    nb = n_big * 4
    add("copy 2^28 f32", "device", (a32,), lambda xp, a: a.copy(), 2 * nb)
    add("a + b 2^28 f32", "device", (a32, b32), lambda xp, a, b: a + b, 3 * nb)
    add("sin 2^28 f32", "device", (a32,), lambda xp, a: xp.sin(a), 2 * nb, tol=4)
    add("exp 2^28 f32", "device", (a32,), lambda xp, a: xp.exp(a), 2 * nb, tol=4)
    add("sin 2^27 f64", "device", (a64,), lambda xp, a: xp.sin(a), 2 * a64.nbytes, tol=4)
    add("exp 2^27 f64", "device", (a64,), lambda xp, a: xp.exp(a), 2 * a64.nbytes, tol=4)
    add("a*2.0+1 (2 ops) 2^28 f32", "device", (a32,), lambda xp, a: a * 2.0 + 1.0, 4 * nb)
    add("strided a[::2]+b[::2] f32", "device", (a32, b32),
        lambda xp, a, b: a[::2] + b[::2], 3 * nb // 2)
    add("a + b  n=1000 (per call)", "call", (small, small2), lambda xp, a, b: a + b,
        per_call=True)
    add("a * 2.0  n=1000 (per call)", "call", (small,), lambda xp, a: a * 2.0, per_call=True)
    add("x[1:-1]  n=1000 (per call)", "call", (small,), lambda xp, a: a[1:-1], per_call=True)

    def setslice(xp, x, y):
        x[1:-1] = y[1:-1]
        return x

    add("x[1:-1] = y[1:-1]  n=1000 (per call)", "call", (small, small2), setslice,
        per_call=True)
    add("empty(1000) f32 (per call)", "call", (), lambda xp: xp.empty(1000, np.float32),
        per_call=True, check=False)
    add("H2D 1 GiB f32", "transfer", (gib,), None, gib.nbytes)
    add("D2H 1 GiB f32", "transfer", (gib,), None, gib.nbytes)
    return W


def run(libs, quick, only):
    results = []
    for w in workloads(quick):
        if only and not any(o in w["name"] for o in only):
            continue
        row = {"workload": w["name"], "bytes": w["nbytes"]}
        ref = None
        for lib, xp in libs.items():
            if xp is np and w["kind"] in ("transfer",):
                continue
            try:
                if w["kind"] == "transfer":
                    t = time_transfer(xp, w, quick)
                else:
                    args = [xp.asarray(x) for x in w["inputs"]]
                    fn = (lambda xp=xp, args=args, f=w["fn"]: f(xp, *args))
                    if w["check"]:
                        got = to_host(fn())
                        if ref is None:
                            ref = w["fn"](np, *w["inputs"])
                        if w["tol"]:
                            np.testing.assert_allclose(got, ref, rtol=1e-6 * w["tol"], atol=0)
                        else:
                            np.testing.assert_array_equal(got, ref)
                    if w["per_call"]:
                        t = time_per_call(xp, fn, 2000 if quick else 20000)
                    else:
                        reps = 3 if xp is np else 20
                        t = time_device(xp, fn, reps, 1 if xp is np else 5)
                row[lib] = t
            except Exception as e:  # noqa: BLE001 - report and go on
                row[lib] = None
                row[f"{lib}_error"] = f"{type(e).__name__}: {e}"[:200]
        results.append(row)
        print(format_row(row, libs), flush=True)
    return results


def time_transfer(xp, w, quick):
    host = w["inputs"][0]
    if w["name"].startswith("H2D"):
        return time_device(xp, lambda: xp.asarray(host), 5, 1)
    dev = xp.asarray(host)
    return time_device(xp, lambda: to_host(dev), 5, 1)


def format_row(row, libs):
    cells = [f"{row['workload']:<38}"]
    for lib in libs:
        t = row.get(lib)
        if t is None:
            cells.append(f"{lib}: {'-' if f'{lib}_error' not in row else 'ERR':>10}")
            continue
        s = f"{t * 1e6:9.2f} us" if t < 1e-3 else f"{t * 1e3:9.3f} ms"
        if row["bytes"]:
            s += f" {row['bytes'] / t / 1e12:5.2f} TB/s"
        cells.append(f"{lib}: {s}")
    if row.get("cupynum") and row.get("cupy"):
        cells.append(f"cupynum/cupy time = {row['cupynum'] / row['cupy']:.2f}")
    return " | ".join(cells)


def bare_launch_overhead(quick):
    """A pre-packed launch of the same add kernel through our runtime: the floor."""
    import cupynum as cp
    from cupynum import _backends

    if _backends.name() != "cuda":
        return None
    from cupynum._backends.cuda import runtime

    a = cp.ones(1000, np.float32)
    b = cp.ones(1000, np.float32)
    a + b
    launcher = cp.add._fast[(a.dtype, b.dtype, 0)][1]
    bare = getattr(launcher, "bare", None)
    if bare is None:
        return None
    out = cp.empty(1000, np.float32)
    call = bare((a, b), (out,), 1000)
    return time_per_call(cp, call, 2000 if quick else 20000)


def fresh_process_timings():
    """Import time and first-call latency, each in a fresh interpreter."""
    code = r'''
import time, json, os
t0 = time.perf_counter(); import numpy; t1 = time.perf_counter()
import cupynum as cp; t2 = time.perf_counter()
import sys
out = {"import_numpy_s": t1 - t0, "import_cupynum_s": t2 - t1,
       "cuda_core_imported": "cuda.core" in sys.modules}
from cupynum import _backends
b = _backends.get(); t3 = time.perf_counter(); out["backend_init_s"] = t3 - t2
x = cp.ones(1000, numpy.float32); b.synchronize(); t4 = time.perf_counter()
out["first_alloc_fill_s"] = t4 - t3
y = cp.sin(x); b.synchronize(); t5 = time.perf_counter(); out["first_sin_s"] = t5 - t4
z = cp.cos(x); b.synchronize(); t6 = time.perf_counter(); out["first_cos_s"] = t6 - t5
print(json.dumps(out))
'''
    results = {}
    import tempfile

    with tempfile.TemporaryDirectory() as cold:
        for label, cache in (("cold", cold), ("warm", cold)):
            env = dict(os.environ, CUPYNUM_CACHE_DIR=cache)
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=env, cwd=os.path.join(os.path.dirname(__file__), os.pardir))
            results[label] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 \
                else {"error": p.stderr[-2000:]}
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    libs = load_libraries()
    from cupynum import _backends

    print(f"cupynum backend: {_backends.name()}")
    only = [o for o in args.only.split(",") if o]
    results = run(libs, args.quick, only)
    extra = {"bare_launch_s": bare_launch_overhead(args.quick)}
    if extra["bare_launch_s"]:
        print(f"bare pre-packed launch of the add kernel: {extra['bare_launch_s'] * 1e6:.2f} us")
    extra["fresh_process"] = fresh_process_timings()
    print(json.dumps(extra["fresh_process"], indent=1))
    copy = next((r for r in results if r["workload"].startswith("copy")), None)
    if copy and copy.get("cupynum"):
        ceiling = copy["bytes"] / copy["cupynum"]
        for r in results:
            for lib in libs:
                if r.get(lib) and r["bytes"]:
                    r[f"{lib}_frac_copy"] = r["bytes"] / r[lib] / ceiling
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "extra": extra}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
