"""cupynum vs CuPy vs NumPy on identical inputs, in one process.

    python benchmarks/side_by_side.py [--quick] [--json out.json] [--out DIR] [--only NAME,...]

Each workload first checks each library's result against NumPy's (or, where values cannot
match element by element: another random stream, ties in argsort, float32 sums added in
another order, with a check of its own against exact values or the distribution), then times
it: device workloads with CUDA events around a batch of calls after a warm-up call (median
over batches; NumPy by the wall clock between syncs), per-call workloads as wall time per
call over many calls (their cost is host time, which events would not see). The libraries'
batches alternate (A, B, A, B, ...), so that drifts of clocks and temperature during a
workload fall on all of them alike. Bandwidth counts bytes read plus bytes written, and is
also given as a fraction of the device-copy bandwidth measured in the same run. Libraries
that are not installed (or no GPU) are skipped with a note.

The programs in examples/ run as workloads too (benchmarks/example_workloads.py): each
example's own code, called with ``np=`` cupynum, CuPy and NumPy on the same inputs; a
library the example's code does not run under is reported with its error and skipped.
``--out DIR`` writes DIR/latest.json (results plus the run's date, GPU and library
versions), DIR/latest.md (a table) and DIR/latest.png (a chart, if matplotlib is installed);
see benchmarks/report.py and the docs' benchmark page.
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


def load_libraries(with_cupy=True):
    libs = {"numpy": np}
    import cupynum

    libs["cupynum"] = cupynum
    if not with_cupy:
        return libs
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


def computed(r):
    """``r`` with its work done: a pending cupynum result (implicit fusion: an elementwise
    result waits until it is read) is computed, as any read would; anything else is
    returned as it is.  Timing loops pass every result through it, so that a result the
    loop drops is timed as computed, not skipped."""
    if isinstance(r, (tuple, list)):
        for v in r:
            computed(v)
        return r
    buf = getattr(r, "_buf", None)
    if getattr(buf, "pending", None) is not None:  # (an older cupynum's data never waits)
        buf.on_device()
    return r


def to_host(x):
    if isinstance(x, (tuple, list)):
        return tuple(to_host(v) for v in x)
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def _events(xp):
    """(start, end, elapsed ms) CUDA-event makers of a GPU library, or None (NumPy, or
    cupynum on its host backend)."""
    if xp.__name__ == "cupy":
        return xp.cuda.Event, xp.cuda.get_elapsed_time
    if xp.__name__ == "cupynum":
        from cupynum import _backends

        if _backends.name() == "cuda":
            return xp.cuda.Event, xp.cuda.get_elapsed_time
    return None


def device_sampler(xp, fn, inner):
    """``(warm_up, sample)`` of a device workload: ``sample()`` is the seconds per call of
    a batch of ``inner`` calls, timed with CUDA events around the batch on a GPU library's
    current stream (a call that waits for the device inside, as a bounds check does, is
    timed with its wait), by the wall clock between syncs for NumPy and the host backend."""
    ev = _events(xp)

    def warm_up():
        fn()
        sync(xp)

    def sample():
        if ev is not None:
            start, end = ev[0](), ev[0]()
            start.record()
            for _ in range(inner):
                fn()
            end.record()
            end.synchronize()
            return ev[1](start, end) / 1e3 / inner
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync(xp)
        return (time.perf_counter() - t0) / inner

    return warm_up, sample


def call_sampler(xp, fn, calls, loop=None):
    """``(warm_up, sample)`` of a per-call workload: ``sample()`` is the wall time per call
    of ``calls`` calls closed by a sync (the cost is host time, which events would miss).
    ``loop(count)``, where given, runs the statement itself ``count`` times in its own
    loop body (``statement_loop``), as a user's loop would: no harness frames per call."""
    if loop is None:
        def loop(count):
            for _ in range(count):
                fn()

    def warm_up():
        loop(1000)
        sync(xp)

    def sample():
        t0 = time.perf_counter()
        loop(calls)
        sync(xp)
        return (time.perf_counter() - t0) / calls

    return warm_up, sample


def statement_loop(stmt, xp, args):
    """``loop(count)`` running ``stmt`` (Python source over ``xp``, ``np`` and the inputs
    ``a``, ``b``, ...) ``count`` times, compiled as one function, the way ``timeit`` does."""
    names = "".join(f", {chr(97 + i)}" for i in range(len(args)))
    ns = {"computed": computed}
    try:  # an expression's result is computed (see ``computed``); a statement runs as is
        compile(stmt, "<statement>", "eval")
        stmt = f"computed({stmt})"
    except SyntaxError:
        pass
    exec(f"def loop(count, xp, np{names}):\n    for _ in range(count):\n        {stmt}\n", ns)
    inner = ns["loop"]
    return lambda count: inner(count, xp, np, *args)


def time_interleaved(samplers):
    """``{lib: (warm_up, sample, count)}`` -> ``{lib: median seconds or the exception}``:
    every library is warmed up, then their samples are taken in turn (A, B, A, B, ...), so
    that drifts of the clocks and the temperature over a workload fall on all libraries
    alike (timing one library after the other favoured whichever ran first or last)."""
    samples, failed = {}, {}
    for lib, (warm_up, _, _) in samplers.items():
        try:
            warm_up()
            samples[lib] = []
        except Exception as e:  # noqa: BLE001 - report and go on
            failed[lib] = e
    for r in range(max((c for _, _, c in samplers.values()), default=0)):
        for lib, (_, sample, count) in samplers.items():
            if lib in samples and r < count:
                try:
                    samples[lib].append(sample())
                except Exception as e:  # noqa: BLE001
                    failed[lib] = e
                    del samples[lib]
    return {**{lib: statistics.median(v) for lib, v in samples.items()}, **failed}


def time_sequential(samplers):
    """``{lib: (warm_up, sample, count)}`` -> ``{lib: median seconds or the exception}``,
    each library warmed up and sampled ``count`` times before the next one starts."""
    out = {}
    for lib, sampler in samplers.items():
        out.update(time_interleaved({lib: sampler}))
    return out


def time_device(xp, fn, repeats, inner):
    """Median seconds a call over ``repeats`` batches of ``inner`` (one library alone)."""
    warm_up, sample = device_sampler(xp, fn, inner)
    warm_up()
    return statistics.median(sample() for _ in range(repeats))


def time_per_call(xp, fn, calls, rounds=5):
    warm_up, sample = call_sampler(xp, fn, calls)
    warm_up()
    return statistics.median(sample() for _ in range(rounds))


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

    def add(name, kind, inputs, fn, nbytes=0, per_call=False, check=True, tol=0, stmt=None,
            verify=None):
        W.append(dict(name=name, kind=kind, inputs=inputs, fn=fn, nbytes=nbytes,
                      per_call=per_call, check=check, tol=tol, stmt=stmt, verify=verify))

    nb = n_big * 4
    add("copy 2^28 f32", "device", (a32,), lambda xp, a: a.copy(), 2 * nb)
    add("a + b 2^28 f32", "device", (a32, b32), lambda xp, a, b: a + b, 3 * nb)
    add("sin 2^28 f32", "device", (a32,), lambda xp, a: xp.sin(a), 2 * nb, tol=4)
    add("exp 2^28 f32", "device", (a32,), lambda xp, a: xp.exp(a), 2 * nb, tol=4)
    add("sin 2^27 f64", "device", (a64,), lambda xp, a: xp.sin(a), 2 * a64.nbytes, tol=4)
    add("exp 2^27 f64", "device", (a64,), lambda xp, a: xp.exp(a), 2 * a64.nbytes, tol=4)
    add("a*2.0+1 (2 ops) 2^28 f32", "device", (a32,), lambda xp, a: a * 2.0 + 1.0, 4 * nb)
    def chain9(xp, a):  # nine eager elementwise ops (BASELINES.md's 9-op chain; no fusion)
        return ((((a * 1.5 + 2.0) * a - 0.5) * 0.25 + a) * a - 1.0) * 2.0

    add("9-op chain 2^28 f32", "device", (a32,), chain9, 18 * nb, tol=64)
    add("strided a[::2]+b[::2] f32", "device", (a32, b32),
        lambda xp, a, b: a[::2] + b[::2], 3 * nb // 2)
    # per-call rows: ``stmt`` is what the timed loop runs (the check calls ``fn``)
    add("a + b  n=1000 (per call)", "call", (small, small2), lambda xp, a, b: a + b,
        per_call=True, stmt="a + b")
    add("a * 2.0  n=1000 (per call)", "call", (small,), lambda xp, a: a * 2.0, per_call=True,
        stmt="a * 2.0")
    add("9-op chain  n=1000 (per call)", "call", (small,), chain9, per_call=True, tol=64)
    add("x[1:-1]  n=1000 (per call)", "call", (small,), lambda xp, a: a[1:-1], per_call=True,
        stmt="a[1:-1]")

    def setslice(xp, x, y):
        x[1:-1] = y[1:-1]
        return x

    add("x[1:-1] = y[1:-1]  n=1000 (per call)", "call", (small, small2), setslice,
        per_call=True, stmt="a[1:-1] = b[1:-1]")
    add("empty(1000) f32 (per call)", "call", (), lambda xp: xp.empty(1000, np.float32),
        per_call=True, verify=check_empty, stmt="xp.empty(1000, np.float32)")
    W.extend(library_workloads(quick))  # issue 6: cuBLAS / cuSOLVER / cuFFT / cuRAND rows
    # reductions and scans (issue 4)
    nm = 4096 if quick else 16384
    mat = rng.standard_normal((nm, nm), dtype=np.float32)
    add("a.sum() 2^28 f32", "device", (a32,), lambda xp, a: a.sum(), nb, tol=1000)
    add("M.sum(axis=0) 16384^2 f32", "device", (mat,), lambda xp, m: m.sum(axis=0),
        mat.nbytes + nm * 4, verify=check_column_sums)  # (sums near 0: no rtol check)
    add("M.sum(axis=1) 16384^2 f32", "device", (mat,), lambda xp, m: m.sum(axis=1),
        mat.nbytes + nm * 4, tol=1000)
    add("cumsum 2^28 f32", "device", (a32,), lambda xp, a: xp.cumsum(a), 2 * nb,
        verify=check_cumsum)
    add("argmax 2^28 f32", "device", (a32,), lambda xp, a: a.argmax(), nb)
    add("mean 2^28 f32", "device", (a32,), lambda xp, a: a.mean(), nb, tol=1000)
    add("var 2^28 f32", "device", (a32,), lambda xp, a: a.var(), 3 * nb, tol=1000)
    add("a.sum()  n=1000 (per call)", "call", (small,), lambda xp, a: a.sum(), per_call=True,
        tol=10, stmt="a.sum()")
    # indexing, layout, sorting, sets (issue 5)
    add("M.T.copy() 16384^2 f32", "device", (mat,), lambda xp, m: m.T.copy(), 2 * mat.nbytes)
    idx = rng.integers(0, n_big, n_big // 4)
    add("a[idx] gather 2^26 of 2^28 f32", "device", (a32, idx), lambda xp, a, i: a[i],
        (n_big // 4) * (8 + 4 + 4))
    a26 = a32[: n_big // 4]
    mask26 = a26 > 0
    add("a[mask] 2^26 f32", "device", (a26, mask26), lambda xp, a, m: a[m],
        a26.size * 5 + int(mask26.sum()) * 4)
    add("sort 2^26 f32", "device", (a26,), lambda xp, a: xp.sort(a), 2 * a26.nbytes)
    add("argsort 2^26 f32", "device", (a26,), lambda xp, a: xp.argsort(a), 3 * a26.nbytes,
        verify=check_argsort)
    ints = rng.integers(0, 1 << 20, n_big // 16)
    add("unique 2^24 int64", "device", (ints,), lambda xp, a: xp.unique(a), 2 * ints.nbytes)
    half1, half2 = a32[: n_big // 2], b32[: n_big // 2]
    add("concatenate 2x2^27 f32", "device", (half1, half2),
        lambda xp, a, b: xp.concatenate([a, b]), 2 * nb)
    add("stack 2x2^27 f32", "device", (half1, half2), lambda xp, a, b: xp.stack([a, b]),
        2 * nb)
    add("H2D 1 GiB f32", "transfer", (gib,), None, gib.nbytes)
    add("D2H 1 GiB f32", "transfer", (gib,), None, gib.nbytes)
    W.extend(example_workloads(quick))
    return W


def library_workloads(quick):
    """Linear algebra, FFT and random rows (smaller sizes with --quick)."""
    rng = np.random.default_rng(1)
    n_mm = 2048 if quick else 8192
    n_solve = 1024 if quick else 4096
    n_svd = 512 if quick else 2048
    W = []

    def add(name, inputs, fn, nbytes=0, check=True, rtol=1e-5, atol=1e-5, flops=0, reps=None,
            verify=None):
        W.append(dict(name=name, kind="library", inputs=inputs, fn=fn, nbytes=nbytes,
                      per_call=False, check=check, tol=0, rtol=rtol, atol=atol, flops=flops,
                      reps=reps, inner=1, verify=verify))

    for dt in (np.float32, np.float64):
        a = rng.standard_normal((n_mm, n_mm)).astype(dt)
        b = rng.standard_normal((n_mm, n_mm)).astype(dt)
        add(f"A@B {n_mm}^2 {np.dtype(dt).name}", (a, b), lambda xp, a, b: a @ b,
            rtol=2e-3 if dt == np.float32 else 1e-9, atol=2e-2 if dt == np.float32 else 1e-9,
            flops=2 * n_mm**3, reps=3)
    small = rng.standard_normal((10000, 4, 4)).astype(np.float32)
    add("batch 10000 4x4 f32 A@A", (small,), lambda xp, a: a @ a, 3 * small.nbytes)
    n_fft = 2**20 if quick else 2**24
    c = (rng.standard_normal(n_fft) + 1j * rng.standard_normal(n_fft)).astype(np.complex64)
    add(f"fft 2^{n_fft.bit_length() - 1} c64", (c,), lambda xp, x: xp.fft.fft(x),
        2 * c.nbytes, rtol=1e-3, atol=2e-1)
    n_rfft = 2**21 if quick else 2**25
    r = rng.standard_normal(n_rfft).astype(np.float32)
    add(f"rfft 2^{n_rfft.bit_length() - 1} f32", (r,), lambda xp, x: xp.fft.rfft(x),
        r.nbytes * 2, rtol=1e-3, atol=2e-1)
    m = rng.standard_normal((n_solve, n_solve)) + n_solve * np.eye(n_solve)
    rhs = rng.standard_normal((n_solve, 1))
    add(f"linalg.solve {n_solve} f64", (m, rhs), lambda xp, m, b: xp.linalg.solve(m, b),
        rtol=1e-8, atol=1e-10, reps=5)
    sv = rng.standard_normal((n_svd, n_svd)).astype(np.float32)
    add(f"svd {n_svd} f32 (s checked)", (sv,), lambda xp, a: xp.linalg.svd(a)[1],
        rtol=1e-3, atol=1e-3, reps=3)
    n_rng = 2**24 if quick else 2**28
    add(f"standard_normal 2^{n_rng.bit_length() - 1} f32", (),
        lambda xp: xp.random.default_rng(0).standard_normal(n_rng, dtype=np.float32),
        n_rng * 4, verify=sample_check("normal"))
    add(f"random 2^{n_rng.bit_length() - 1} f32", (),
        lambda xp: xp.random.default_rng(0).random(n_rng, dtype=np.float32), n_rng * 4,
        verify=sample_check("uniform"))
    return W


def fresh_library_timings():
    """First matmul and first FFT in a fresh process: import, handle, plan, call, apart."""
    code = r'''
import time, json
import numpy
t0 = time.perf_counter(); import cupynum as cp; from cupynum import _backends
b = _backends.get(); x = cp.ones((512, 512), numpy.float32); b.synchronize()
out = {"backend": b.name}
t1 = time.perf_counter()
if b.name == "cuda":
    from cupynum._backends.cuda.nvmath_bindings import load
    cublas, cufft = load("cublas"), load("cufft")  # as the first call imports them
    t2 = time.perf_counter(); out["import_nvmath_bindings_s"] = t2 - t1
    cublas.get_property(0); cufft.get_property(0)  # dlopen of libcublas(Lt) and libcufft
    t2b = time.perf_counter(); out["load_cublas_cufft_libraries_s"] = t2b - t2; t2 = t2b
    from cupynum._backends.cuda import blas, fft
    blas.handle(); t3 = time.perf_counter(); out["cublas_handle_s"] = t3 - t2
else:
    t3 = time.perf_counter()
y = x @ x; b.synchronize(); t4 = time.perf_counter(); out["first_matmul_512_s"] = t4 - t3
y = x @ x; b.synchronize(); t5 = time.perf_counter(); out["second_matmul_512_s"] = t5 - t4
z = cp.fft.fft(x); b.synchronize(); t6 = time.perf_counter()
out["first_fft_512x512_s (plan included)"] = t6 - t5
z = cp.fft.fft(x); b.synchronize(); t7 = time.perf_counter()
out["second_fft_512x512_s (cached plan)"] = t7 - t6
print(json.dumps(out))
'''
    cupy_code = r'''
import time, json
import numpy
import cupy as cp
x = cp.ones((512, 512), numpy.float32); cp.cuda.Device().synchronize()
out = {}
t3 = time.perf_counter()
y = x @ x; cp.cuda.Device().synchronize(); t4 = time.perf_counter()
out["first_matmul_512_s (handle included)"] = t4 - t3
y = x @ x; cp.cuda.Device().synchronize(); t5 = time.perf_counter()
out["second_matmul_512_s"] = t5 - t4
z = cp.fft.fft(x); cp.cuda.Device().synchronize(); t6 = time.perf_counter()
out["first_fft_512x512_s (plan included)"] = t6 - t5
z = cp.fft.fft(x); cp.cuda.Device().synchronize(); t7 = time.perf_counter()
out["second_fft_512x512_s (cached plan)"] = t7 - t6
print(json.dumps(out))
'''
    results = {}
    for label, src in (("cupynum", code), ("cupy", cupy_code)):
        p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                           cwd=os.path.join(os.path.dirname(__file__), os.pardir),
                           env=_fresh_env())
        results[label] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 \
            else {"error": p.stderr[-2000:]}
    return results


def example_workloads(quick):
    """examples/*.py at a benchmark size (their --small size with --quick)."""
    from example_workloads import NAMES, describe, prepare

    size = "small" if quick else "medium"
    W = []
    for name in NAMES:
        inputs, fn, rtol, atol = prepare(name, size)
        W.append(dict(name=f"example {name} ({describe(name, size)})", kind="example",
                      inputs=inputs, fn=fn, nbytes=0, per_call=False, check=True, tol=0,
                      rtol=rtol, atol=atol, reps=3, inner=1))
    return W


# Checks for results NumPy's cannot be compared with element by element: each takes the
# result (on the host) and the workload's inputs, and raises AssertionError.
def check_empty(got, inputs):
    assert got.shape == (1000,) and got.dtype == np.float32, (got.shape, got.dtype)


def check_column_sums(got, inputs):
    """Float32 sums of 16384 normal values, some near 0: against float64 sums, to within
    64 * eps * sum |x| (a sequential sum's rounding stays well inside it)."""
    (m,) = inputs
    bound = np.finfo(np.float32).eps * 64 * np.abs(m).sum(axis=0, dtype=np.float64)
    err = np.abs(got.astype(np.float64) - m.sum(axis=0, dtype=np.float64))
    assert got.dtype == np.float32 and np.all(err <= bound), f"error/bound {np.max(err / bound)}"


def check_cumsum(got, inputs):
    """A float32 running sum of 2^28 values (NumPy's own is sequential, far from exact):
    against the float64 running sum, to within 1e-4 of the running sum of |x|."""
    (a,) = inputs
    exact = np.cumsum(a, dtype=np.float64)
    bound = 1e-4 * np.cumsum(np.abs(a), dtype=np.float64) + 1e-6
    err = np.abs(got.astype(np.float64) - exact)
    assert got.dtype == np.float32 and np.all(err <= bound), f"error/bound {np.max(err / bound)}"


def check_argsort(got, inputs):
    """A permutation that sorts the input (ties may come in any order)."""
    (a,) = inputs
    assert got.shape == a.shape and got.dtype == np.int64, (got.shape, got.dtype)
    assert np.all(np.bincount(got, minlength=a.size) == 1), "not a permutation"
    s = a[got]
    assert np.all(s[1:] >= s[:-1]), "does not sort the input"


def sample_check(dist):
    """Another generator's stream (see docs/differences.md): the sample's dtype and size,
    its range, and its mean and variance within 6 standard errors of the distribution's."""
    mean, var = {"normal": (0.0, 1.0), "uniform": (0.5, 1 / 12)}[dist]

    def check(got, inputs):
        assert got.dtype == np.float32 and got.ndim == 1, (got.dtype, got.shape)
        n = got.size
        x = got.astype(np.float64)
        if dist == "uniform":
            assert x.min() >= 0 and x.max() < 1, (x.min(), x.max())
        m, v = x.mean(), x.var()
        fourth = {"normal": 3.0, "uniform": 1 / 80}[dist]  # E(x - mean)^4
        assert abs(m - mean) < 6 * np.sqrt(var / n), f"mean {m}"
        assert abs(v - var) < 6 * np.sqrt((fourth - var**2) / n), f"variance {v}"

    return check


def compare(got, ref, w):
    """Raise AssertionError unless ``got`` matches NumPy's ``ref`` within w's tolerance."""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), "different number of results"
        for g, r in zip(got, ref):
            compare(g, r, w)
    elif "rtol" in w:
        np.testing.assert_allclose(got, ref, rtol=w["rtol"], atol=w["atol"])
    elif w["tol"]:
        np.testing.assert_allclose(got, ref, rtol=1e-6 * w["tol"], atol=0)
    else:
        np.testing.assert_array_equal(got, ref)


def run(libs, quick, only, numpy_time="all"):
    """``numpy_time``: time NumPy on every workload ("all"), only on the example programs
    ("examples"), or never ("none"); NumPy's result is the reference either way."""
    results = []
    for w in workloads(quick):
        if only and not any(o in w["name"] for o in only):
            continue
        row = {"workload": w["name"], "kind": w["kind"], "bytes": w["nbytes"]}
        ref = None
        samplers = {}
        for lib, xp in libs.items():
            if xp is np and w["kind"] in ("transfer",):
                continue
            if xp is np and (numpy_time == "none" or (numpy_time == "examples"
                                                      and w["kind"] != "example")):
                continue
            try:
                if w["kind"] == "transfer":
                    row[lib] = time_transfer(xp, w, quick)
                    continue
                args = [xp.asarray(x) for x in w["inputs"]]
                fn = (lambda xp=xp, args=args, f=w["fn"]: computed(f(xp, *args)))
                if w.get("verify"):
                    w["verify"](to_host(fn()), w["inputs"])
                elif w["check"]:
                    got = to_host(fn())
                    if ref is None:
                        ref = to_host(w["fn"](np, *w["inputs"]))
                    compare(got, ref, w)
                if w["per_call"]:
                    loop = statement_loop(w["stmt"], xp, args) if w.get("stmt") else None
                    samplers[lib] = (*call_sampler(xp, fn, 2000 if quick else 20000, loop), 5)
                else:
                    reps = w.get("reps") or (3 if xp is np else 20)
                    inner = w.get("inner") or (1 if xp is np else 5)
                    samplers[lib] = (*device_sampler(xp, fn, inner), reps)
            except Exception as e:  # noqa: BLE001 - report and go on
                row[lib] = e
        # per-call rows: one library's rounds after the other's (in one run, rounds of 20,000
        # calls that alternated between the libraries came out ~60% slower for both)
        row.update(time_sequential(samplers) if w["per_call"] else time_interleaved(samplers))
        for lib in list(row):
            if isinstance(row[lib], Exception):
                e = row[lib]
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

    # (views of device arrays: 1,000 elements of their own would live on the host under
    # the default placement, and a + b would never make the device launcher)
    a = cp.ones(1 << 20, np.float32)[:1000]
    b = cp.ones(1 << 20, np.float32)[:1000]
    a + b
    launcher = cp.add._fast[(a.dtype, b.dtype, 0)][1]
    bare = getattr(launcher, "bare", None)
    if bare is None:
        return None
    out = cp.empty(1000, np.float32)
    call = bare((a, b), (out,), 1000)
    return time_per_call(cp, call, 2000 if quick else 20000)


def _fresh_env(**extra):
    """The environment of a fresh-process measurement: bytecode on, as after ``pip install``
    (which compiles it), whatever PYTHONDONTWRITEBYTECODE this shell has."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def compile_bytecode() -> bool:
    """Write the package's bytecode (``pip install`` does this; a source checkout may not
    have it, and then every import compiles every module).  False if it cannot."""
    root = os.path.join(os.path.dirname(__file__), os.pardir)
    p = subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(root, "cupynum")],
                       capture_output=True, env=_fresh_env())
    return p.returncode == 0


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
from cupynum._backends.cuda import compiler, runtime
spent = {"compile_or_cache_s": 0.0, "load_module_s": 0.0}
def timed(fn, key):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key] += time.perf_counter() - t
    return wrapper
compiler.compile_cubin = timed(compiler.compile_cubin, "compile_or_cache_s")
runtime.load_module = timed(runtime.load_module, "load_module_s")
t4 = time.perf_counter()
y = cp.sin(x); b.synchronize(); t5 = time.perf_counter(); out["first_sin_s"] = t5 - t4
out["first_sin_breakdown"] = dict(spent)
z = cp.cos(x); b.synchronize(); t6 = time.perf_counter(); out["first_cos_s"] = t6 - t5
print(json.dumps(out))
'''
    results = {}
    import tempfile

    with tempfile.TemporaryDirectory() as cold:
        for label, cache in (("cold", cold), ("warm", cold)):
            env = _fresh_env(CUPYNUM_CACHE_DIR=cache)
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=env, cwd=os.path.join(os.path.dirname(__file__), os.pardir))
            results[label] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 \
                else {"error": p.stderr[-2000:]}
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--out", help="write latest.json, latest.md and latest.png here")
    ap.add_argument("--only", default="")
    ap.add_argument("--numpy-time", choices=("all", "examples", "none"), default="all",
                    help="which workloads NumPy is timed on (it is always the reference)")
    ap.add_argument("--no-cupy", action="store_true",
                    help="leave CuPy out (a second cupynum tree timed in the same session)")
    args = ap.parse_args()
    libs = load_libraries(not args.no_cupy)
    from cupynum import _backends

    print(f"cupynum backend: {_backends.name()}")
    only = [o for o in args.only.split(",") if o]
    results = run(libs, args.quick, only, args.numpy_time)
    extra = {"bare_launch_s": bare_launch_overhead(args.quick)}
    if extra["bare_launch_s"]:
        print(f"bare pre-packed launch of the add kernel: {extra['bare_launch_s'] * 1e6:.2f} us")
    extra["bytecode_compiled"] = compile_bytecode()
    extra["fresh_process"] = fresh_process_timings()
    print(json.dumps(extra["fresh_process"], indent=1))
    extra["fresh_process_libraries"] = fresh_library_timings()
    print(json.dumps(extra["fresh_process_libraries"], indent=1))
    copy = next((r for r in results if r["workload"].startswith("copy")), None)
    if copy and copy.get("cupynum"):
        ceiling = copy["bytes"] / copy["cupynum"]
        for r in results:
            for lib in libs:
                if r.get(lib) and r["bytes"]:
                    r[f"{lib}_frac_copy"] = r["bytes"] / r[lib] / ceiling
    import report

    data = {"meta": report.collect_meta(libs, args.quick), "results": results, "extra": extra}
    print()
    print(report.markdown_report(data))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1, default=str)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "latest.json"), "w") as f:
            json.dump(data, f, indent=1, default=str)
        with open(os.path.join(args.out, "latest.md"), "w") as f:
            f.write(report.markdown_report(data, heading_level=1))
        note = report.draw_chart(data, os.path.join(args.out, "latest.png"))
        print(f"note: {note}" if note else f"wrote {args.out}/latest.json, latest.md, latest.png")


if __name__ == "__main__":
    main()
