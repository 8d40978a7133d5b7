"""Per-call overhead of small elementwise calls (1,000 float32 elements): where the time goes.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/percall_probe.py   # on a GPU
    PYTHONPATH=. python benchmarks/probes/percall_probe.py --fake   # no GPU: a fake driver
    (add --cases-only to print the per-call times alone)

On a GPU: checks ``a + b``, ``a * 2.0``, ``x[1:-1]``, ``x[1:-1] = y``, ``a.sum()`` against
NumPy (PASS/FAIL), then times them per call beside CuPy and beside the bare launch of the
add kernel (parameters packed once), and the ways of calling ``cuLaunchKernel`` that the
Python side offers.  Per call = wall time of a round of calls closed by a device sync,
divided by the calls, median over ROUNDS (the overhead is host time, so CUDA events would
only time the queue).

``--fake``: builds the fake ``libcuda.so.1`` of tests/test_launch_paths.py (launches are
recorded, kernels never run; "device" memory is host memory) and reruns itself against it
with ``CUPYNUM_BACKEND=cuda``, so the whole CUDA backend's Python path runs here, the
cuda.bindings calls included, and only the driver's own work is missing.  It prints the
per-call times, the pieces of ``a + b`` one by one (bare launch, launcher, allocation,
result object) and a cProfile table per case.  Values are not checked there.
"""
from __future__ import annotations

import ast
import cProfile
import ctypes
import os
import pstats
import subprocess
import sys
import tempfile
import timeit

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import import_cupy, wall_median  # noqa: E402

N = 1000  # elements per array
CALLS = 20_000  # calls per timed case
ROUNDS = 20  # rounds of CALLS // ROUNDS calls each; the median round counts
PROFILE_CALLS = 5_000  # calls under cProfile per case (--fake)
FAKE_ENV = "CUPYNUM_PERCALL_FAKE"


def per_call(fn, sync, calls=CALLS, rounds=ROUNDS):
    """Median over rounds of the wall time per call (a warm-up first; sync closes a round)."""
    return wall_median(fn, sync, rounds, warm=min(2000, calls // 4),
                       calls=max(1, calls // rounds))


def line(name, seconds, note=""):
    if seconds is None:
        print(f"  {name:<46} {'n/a':>9}     {note}", flush=True)
    else:
        print(f"  {name:<46} {seconds * 1e6:9.2f} us  {note}", flush=True)


def attempt(name, thunk, note=""):
    try:
        line(name, thunk(), note)
    except Exception as e:  # noqa: BLE001 - one failing variant never ends the probe
        line(name, None, f"{type(e).__name__}: {e}"[:120])


def operands(xp):
    h = np.arange(N, dtype=np.float32)
    return {"a": xp.asarray(h), "b": xp.asarray(np.ones(N, np.float32)),
            "x": xp.asarray(h * 3), "y": xp.asarray(np.full(N - 2, 7, np.float32))}


def cases(xp):
    """name -> (call, NumPy expectation or None, how to read the result back)."""
    v = operands(xp)
    a, b, x, y = v["a"], v["b"], v["x"], v["y"]
    ha, hb, hx, hy = (np.asarray(t.get()) if hasattr(t, "get") else t for t in (a, b, x, y))

    def setslice():
        x[1:-1] = y

    def after_setslice():
        h = hx.copy()
        h[1:-1] = hy
        return h

    return {
        "a + b": (lambda: a + b, lambda: ha + hb),
        "a * 2.0": (lambda: a * 2.0, lambda: ha * 2.0),
        "x[1:-1]": (lambda: x[1:-1], lambda: hx[1:-1]),
        "x[1:-1] = y": (setslice, after_setslice, lambda: x),
        "a.sum()": (lambda: a.sum(), lambda: ha.sum()),
    }


def host(r):
    return r.get() if hasattr(r, "get") else np.asarray(r)


def check(cp):
    print("checks against NumPy")
    for name, item in cases(cp).items():
        fn, expect = item[0], item[1]
        try:
            r = fn()
            r = item[2]() if len(item) > 2 else r
            got, want = host(r), expect()
            ok = got.dtype == want.dtype and got.shape == want.shape and np.allclose(
                got, want, rtol=1e-6)
            print(f"  {'PASS' if ok else 'FAIL'} {name}"
                  + ("" if ok else f": {got.dtype}{got.shape} vs {want.dtype}{want.shape}"))
        except Exception as e:  # noqa: BLE001
            print(f"  FAIL {name}: {type(e).__name__}: {e}"[:160])


def launch_variants(cp, sync):
    """The add kernel's launch, parameters packed once, through each Python-side entry."""
    from cupynum._backends.cuda import runtime

    a, b = operands(cp)["a"], operands(cp)["b"]
    a + b
    launch = cp.add._fast[(a.dtype, b.dtype, 0)][1]
    out = cp.empty(N, np.float32)
    bare = launch.bare((a, b), (out,), N)
    g = launch.__globals__  # the generated launcher's constants (elementwise.py)
    d = runtime._d
    L, func, addr, s0 = d.cuLaunchKernel, g["func"], bare.param_block.address, runtime.DEFAULT_STREAM
    grid = bare.args[1]
    print("cuLaunchKernel of the prepacked add kernel (n=1000), per call")
    attempt("launcher.bare (CUfunction, CUstream(0))", lambda: per_call(bare, sync),
            "what cupynum's launchers call")
    variants = {
        "bindings, stream None": lambda: L(func, grid, 1, 1, 256, 1, 1, 0, None, addr, 0),
        "bindings, int stream 0": lambda: L(func, grid, 1, 1, 256, 1, 1, 0, 0, addr, 0),
        "bindings, int CUfunction": lambda: L(int(func), grid, 1, 1, 256, 1, 1, 0, s0, addr, 0),
        "bindings, CUkernel": lambda: L(g["kernel"], grid, 1, 1, 256, 1, 1, 0, s0, addr, 0),
    }
    fint = int(func)
    variants["bindings, int CUfunction (cached int)"] = (
        lambda: L(fint, grid, 1, 1, 256, 1, 1, 0, s0, addr, 0))
    vp = ctypes.c_void_p
    fv, av = vp(fint), vp(addr)
    cd = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    pd = ctypes.PyDLL("libcuda.so.1").cuLaunchKernel  # keeps the GIL: no release/acquire
    variants["ctypes CDLL, c_void_p handles"] = lambda: cd(fv, grid, 1, 1, 256, 1, 1, 0, None,
                                                           av, None)
    variants["ctypes PyDLL, c_void_p handles"] = lambda: pd(fv, grid, 1, 1, 256, 1, 1, 0, None,
                                                            av, None)
    v2 = runtime.v2_launch()
    if v2 is not None:
        variants["v2 launch_kernel, all ints (CUPYNUM_LAUNCH=v2)"] = (
            lambda: v2(fint, grid, 1, 1, 256, 1, 1, 0, 0, addr, 0))
    # the stream launched on: the legacy default stream (0) is ordered with every blocking
    # stream of the context, the per-thread default stream (2) and a non-blocking stream
    # are not, which may change the driver's own work per launch.  (Rows timed one after
    # the other drift with the host: on the H200 the v2 launch took 4.55 us on stream 0 and
    # 3.40-3.49 on the others in one such run, but interleaved in 30 rounds the four kinds
    # of stream measured 4.18-4.37 us, medians within 0.2 us, min 3.49-3.53 each.)
    sp = d.CUstream(2)
    err, snb = d.cuStreamCreate(1)  # CU_STREAM_NON_BLOCKING
    variants["bindings, per-thread default stream (2)"] = (
        lambda: L(func, grid, 1, 1, 256, 1, 1, 0, sp, addr, 0))
    variants["bindings, a non-blocking stream"] = (
        lambda: L(func, grid, 1, 1, 256, 1, 1, 0, snb, addr, 0))
    if v2 is not None:
        variants["v2, per-thread default stream (2)"] = (
            lambda: v2(fint, grid, 1, 1, 256, 1, 1, 0, 2, addr, 0))
        variants["v2, a non-blocking stream"] = (
            lambda: v2(fint, grid, 1, 1, 256, 1, 1, 0, int(snb), addr, 0))
    for name, fn in variants.items():
        attempt(name, lambda fn=fn: per_call(fn, sync))
    return bare


def launch_modes(cp, sync, timer=per_call):
    """``a + b`` with its launcher built for each ``CUPYNUM_LAUNCH`` mode in turn."""
    from cupynum._backends.cuda import elementwise as ew
    from cupynum._backends.cuda import runtime

    v = operands(cp)
    a, b = v["a"], v["b"]
    a + b
    key = (a.dtype, b.dtype, 0)
    entry = cp.add._fast[key]
    op = ew.ElementwiseOp("add", "add", ("f",) * 3, 2)
    print("a + b with the launcher of each CUPYNUM_LAUNCH mode "
          f"(this process: {runtime.LAUNCH})")
    try:
        for mode in ("bindings", "ctypes", "v2"):
            old_mode, old_prep = runtime.LAUNCH, ew._prepared
            try:
                runtime.LAUNCH, ew._prepared = mode, {}
                launcher = ew.contiguous_launcher(op, (np.dtype(np.float32),) * 2)
            finally:
                runtime.LAUNCH, ew._prepared = old_mode, old_prep
            cp.add._fast[key] = (entry[0], launcher, *entry[2:])
            cp.add._forget_hot()
            r = a + b
            ok = np.array_equal(host(r), host(a) + host(b)) if timer is per_call else True
            attempt(f"a + b, CUPYNUM_LAUNCH={mode}", lambda: timer(lambda: a + b, sync)
                    if ok else None, "" if ok else "FAIL: wrong values")
    finally:
        cp.add._fast[key] = entry
        cp.add._forget_hot()


def real_gpu():
    import cupynum as cp
    from cupynum._backends.cuda import runtime

    check(cp)
    sync = runtime.synchronize
    cupy = import_cupy()
    print(f"per call, {N} float32 elements, {CALLS} calls (median of {ROUNDS} rounds)")
    ours = cases(cp)
    theirs = cases(cupy) if cupy is not None else {}
    csync = cupy.cuda.runtime.deviceSynchronize if cupy is not None else None
    for name, item in ours.items():
        attempt(f"cupynum {name}", lambda fn=item[0]: per_call(fn, sync))
        if cupy is not None:
            attempt(f"cupy    {name}", lambda fn=theirs[name][0]: per_call(fn, csync))
    launch_variants(cp, sync)
    launch_modes(cp, sync)


# --- without a GPU: the fake driver -----------------------------------------------------


def fake_driver_dir() -> str:
    """Build tests/test_launch_paths.py's fake libcuda.so.1 in a temporary folder."""
    src = open(os.path.join(ROOT, "tests", "test_launch_paths.py")).read()
    text = next(ast.literal_eval(n.value) for n in ast.parse(src).body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "FAKE_LIBCUDA")
    d = tempfile.mkdtemp(prefix="cupynum-fakecuda-")
    with open(os.path.join(d, "fake.c"), "w") as f:
        f.write(text)
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-w", os.path.join(d, "fake.c"), "-o",
                    os.path.join(d, "libcuda.so.1")], check=True)
    return d


def rerun_against_fake_driver():
    d = fake_driver_dir()
    env = dict(os.environ, LD_LIBRARY_PATH=f"{d}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               CUPYNUM_BACKEND="cuda", PYTHONPATH=ROOT, **{FAKE_ENV: "1"})
    env.setdefault("CUPYNUM_CACHE_DIR", os.path.join(d, "kernel-cache"))
    sys.exit(subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env).returncode)


def best_per_call(fn, number=CALLS // 10, repeat=9):
    """Minimum over repeats (a busy CI host adds noise, never speed)."""
    for _ in range(1000):
        fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def pieces(cp):
    """``a + b`` taken apart: what each layer adds above the bare launch."""
    from cupynum._array import ndarray
    from cupynum._backends.cuda import memory

    v = operands(cp)
    a, b = v["a"], v["b"]
    a + b
    launch = cp.add._fast[(a.dtype, b.dtype, 0)][1]
    out = cp.empty(N, np.float32)
    bare = launch.bare((a, b), (out,), N)
    pool = memory.get_pool()
    g = launch.__globals__  # the generated launcher's constants (elementwise.py)
    pack, buf = g["pack"], g.get("pbuf", g.get("buf"))
    ptr = a._buf.device.ptr

    def result_object():
        o = object.__new__(ndarray)
        o._buf, o._offset, o._shape, o._strides, o.dtype = None, 0, a._shape, a._strides, a.dtype
        o._size, o._c_contig, o._f_contig, o._base = N, True, True, None
        return o

    print("a + b, piece by piece (min of repeats)")
    for name, fn in [("bare cuLaunchKernel (bindings)", bare),
                     ("struct.pack_into of the 4 parameters", lambda: pack(buf, 0, ptr, ptr,
                                                                            ptr, N)),
                     ("launcher(ins, outs, n)", lambda: launch((a, b), (out,), N)),
                     ("launcher.new(a, b, out, n, nbytes) (allocates)",
                      lambda: launch.new(a, b, result_object(), N, 4 * N)),
                     ("pool.malloc(4000) + free", lambda: pool.malloc(4000)),
                     ("result ndarray object + free", result_object),
                     ("cp.add(a, b)", lambda: cp.add(a, b)),
                     ("a + b", lambda: a + b),
                     ("a * 2.0", lambda: a * 2.0)]:
        attempt(name, lambda fn=fn: best_per_call(fn))


def profile_cases(cp):
    for name, item in cases(cp).items():
        fn = item[0]
        for _ in range(200):
            fn()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(PROFILE_CALLS):
            fn()
        prof.disable()
        st = pstats.Stats(prof)
        rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:8]
        print(f"cProfile {name}: tottime per call by function (top 8)")
        for (fname, lineno, func), (cc, nc, tt, ct, _) in rows:
            where = f"{os.path.basename(fname)}:{lineno}" if lineno else ""
            print(f"    {tt / PROFILE_CALLS * 1e6:7.3f} us  {nc / PROFILE_CALLS:4.1f}x  "
                  f"{func} {where}")


def fake():
    import cupynum as cp

    print(f"fake driver: Python path only, {N} float32 elements")
    print(f"per call (min of repeats of {CALLS // 10} calls)")
    for name, item in cases(cp).items():
        attempt(name, lambda fn=item[0]: best_per_call(fn))
    if "--cases-only" in sys.argv:  # for A/B runs of two trees on a busy host
        return
    pieces(cp)
    launch_variants(cp, lambda: None)
    launch_modes(cp, None, timer=lambda fn, sync: best_per_call(fn))
    profile_cases(cp)


if __name__ == "__main__":
    if os.environ.get(FAKE_ENV):
        fake()
    elif "--fake" in sys.argv:
        rerun_against_fake_driver()
    else:
        real_gpu()
