"""The pieces of cupynum's hot path and its transfer strategies, one by one, in one process.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python3 benchmarks/launch_micro.py [--quick] [--only A,B]

Sections (``--only`` takes their letters): a-d the ways to call cuLaunchKernel on one
pre-packed add kernel (n=1000 float32); e allocation; f whole operations, cupynum and CuPy;
s strided ``a[::2] + b[::2]`` (2^24 float32) per strided ILP (tuning.ELEMENTWISE); g
host<->device copies of 1 GiB (256 MiB with --quick) per strategy.  Per-call figures: wall
time per call, median over rounds of calls (20,000 calls in all unless --quick), after a warm-up, with a device
sync closing each round.  CuPy rows are skipped when CuPy is missing.  Environment
variables select what the library itself uses (CUPYNUM_LAUNCH, CUPYNUM_H2D/D2H,
CUPYNUM_COPY_THREADS); this script times the alternatives side by side regardless.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

ROWS = []


def row(section, name, seconds, note=""):
    ROWS.append((section, name, seconds, note))
    if seconds is None:
        print(f"  {section} {name:<52} {'n/a':>12}  {note}", flush=True)
    elif seconds < 1e-3:
        print(f"  {section} {name:<52} {seconds * 1e6:9.2f} us  {note}", flush=True)
    else:
        print(f"  {section} {name:<52} {seconds * 1e3:9.2f} ms  {note}", flush=True)


def per_call(fn, sync, calls, rounds=20):
    """Median over ``rounds`` of the wall time per call of ``calls // rounds`` calls."""
    for _ in range(min(2000, calls // 4)):
        fn()
    sync()
    per = max(1, calls // rounds)
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / per)
    return statistics.median(samples)


def timed(fn, sync, reps=3):
    fn()
    sync()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def attempt(section, name, thunk, note=""):
    try:
        row(section, name, thunk(), note)
    except Exception as e:  # noqa: BLE001 - report and go on
        row(section, name, None, f"{type(e).__name__}: {e}"[:150])


# ------------------------------------------------------------------------------------------
def launch_sections(cp, ctx, calls, sections):
    from cuda.bindings import driver as d

    from cupynum._backends.cuda import elementwise as ew
    from cupynum._backends.cuda import runtime

    sync = ctx["sync"]
    a, b = ctx["a"], ctx["b"]
    out = cp.empty(1000, np.float32)
    launcher = cp.add._fast[(a.dtype, b.dtype, 0)][1]
    p = ew.prepared(ew.KernelSpec(ew.op_exprs(ew.ElementwiseOp("add", "add", ("f",) * 3, 2)),
                                  (("a", "f"),) * 3, 2, "contig"))
    pack = p.pack
    pb, _ = ew.param_block(p.key)  # a block of our own, packed once
    pack(pb._data, 0, a._buf.device.ptr, b._buf.device.ptr, out._buf.device.ptr, 1000)
    addr = pb.address
    kernel = p.func  # CUkernel from cuLibraryGetKernel
    fn_int = runtime.kernel_function(kernel)
    fobj = d.CUfunction(fn_int)
    s0 = d.CUstream(0)
    L = d.cuLaunchKernel
    g = 1  # 1000 elements, 1024 per block (vector width 4)

    def check_tuple(r):
        if r[0]:
            raise RuntimeError(f"launch failed: {r[0]!r}")

    if "a" in sections:
        print("a/b: cuLaunchKernel through cuda.bindings, params pre-packed (an int address)")
        check_tuple(L(kernel, g, 1, 1, 256, 1, 1, 0, 0, addr, 0))
        row("a", "bindings: CUkernel, int stream (before this change)",
            per_call(lambda: L(kernel, g, 1, 1, 256, 1, 1, 0, 0, addr, 0), sync, calls))
    if "b" in sections:
        row("b", "bindings: CUkernel, prebuilt CUstream",
            per_call(lambda: L(kernel, g, 1, 1, 256, 1, 1, 0, s0, addr, 0), sync, calls))
        row("b", "bindings: CUfunction (cuKernelGetFunction), int stream",
            per_call(lambda: L(fobj, g, 1, 1, 256, 1, 1, 0, 0, addr, 0), sync, calls))
        row("b", "bindings: CUfunction, prebuilt CUstream (library default)",
            per_call(lambda: L(fobj, g, 1, 1, 256, 1, 1, 0, s0, addr, 0), sync, calls))
        kobj2 = d.CUfunction(int(kernel))  # the CUkernel handle cast to CUfunction
        attempt("b", "bindings: CUkernel cast to CUfunction, CUstream",
                lambda: (check_tuple(L(kobj2, g, 1, 1, 256, 1, 1, 0, s0, addr, 0)),
                         per_call(lambda: L(kobj2, g, 1, 1, 256, 1, 1, 0, s0, addr, 0), sync,
                                  calls))[1])
    if "c" in sections:
        print("c: cuLaunchKernel through ctypes on libcuda.so.1")
        vp = ctypes.c_void_p
        cdll = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
        cdll.restype = ctypes.c_int
        pydll = ctypes.PyDLL("libcuda.so.1").cuLaunchKernel
        pydll.restype = ctypes.c_int
        typed = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
        typed.restype = ctypes.c_int
        typed.argtypes = [vp] + [ctypes.c_uint] * 7 + [vp, vp, vp]
        cf, ck, ca = vp(fn_int), vp(int(kernel)), vp(addr)
        for name, call in (
                ("ctypes CDLL, no argtypes, CUfunction (library 'ctypes')",
                 lambda: cdll(cf, g, 1, 1, 256, 1, 1, 0, None, ca, None)),
                ("ctypes CDLL, no argtypes, CUkernel as CUfunction",
                 lambda: cdll(ck, g, 1, 1, 256, 1, 1, 0, None, ca, None)),
                ("ctypes PyDLL (GIL held), no argtypes, CUfunction",
                 lambda: pydll(cf, g, 1, 1, 256, 1, 1, 0, None, ca, None)),
                ("ctypes CDLL with argtypes, int arguments",
                 lambda: typed(fn_int, g, 1, 1, 256, 1, 1, 0, None, addr, None))):
            def run(call=call):
                err = call()
                if err:
                    raise RuntimeError(f"cuLaunchKernel returned {err}")
                return per_call(call, sync, calls)
            attempt("c", name, run)
        vals = (a._buf.device.ptr, b._buf.device.ptr, out._buf.device.ptr, 1000)
        buf, take, give = p.buf, p.token.pop, p.token.append

        def pack_only():
            pack(buf, 0, *vals)
        row("c", "(piece) struct.pack_into of 4 parameters", per_call(pack_only, sync, calls))

        def token_only():
            take()
            give(True)
        row("c", "(piece) parameter block token: list.pop + append",
            per_call(token_only, sync, calls))
        import threading

        lk = threading.Lock()

        def lock_only():
            lk.acquire()
            lk.release()
        row("c", "(piece) a threading.Lock acquire + release, for comparison",
            per_call(lock_only, sync, calls))
    if "d" in sections:
        print("d: cuda.core launch (reference)")
        attempt("d", "cuda.core launch(stream, config, kernel, *args)",
                lambda: _cuda_core_launch(p, a, b, out, sync, calls))
    if "b" in sections or "c" in sections:
        print("launchers generated by cupynum, per CUPYNUM_LAUNCH (launch(ins, outs, n))")
        for mode in ("bindings", "ctypes"):
            lf = _launcher(cp, ew, runtime, mode)
            row("b", f"generated launcher, {mode}",
                per_call(lambda lf=lf: lf((a, b), (out,), 1000), sync, calls))
            bare = lf.bare((a, b), (out,), 1000)
            row("b", f"launch.bare, {mode} (the floor of that mode)",
                per_call(bare, sync, calls))
        row("b", "launcher the library uses now", per_call(
            lambda: launcher((a, b), (out,), 1000), sync, calls), f"LAUNCH={runtime.LAUNCH}")


def _launcher(cp, ew, runtime, mode):
    """A launcher for float32 a + b built with runtime.LAUNCH = mode (fresh Prepared)."""
    old_mode, old_prep = runtime.LAUNCH, ew._prepared
    try:
        runtime.LAUNCH, ew._prepared = mode, {}
        op = ew.ElementwiseOp("add", "add", ("f",) * 3, 2)
        return ew.contiguous_launcher(op, (np.dtype(np.float32),) * 2)
    finally:
        runtime.LAUNCH, ew._prepared = old_mode, old_prep


def _cuda_core_launch(p, a, b, out, sync, calls):
    try:
        from cuda.core import Device, LaunchConfig, ObjectCode, launch
    except ImportError:
        from cuda.core.experimental import Device, LaunchConfig, ObjectCode, launch
    from cupynum._backends.cuda import compiler
    from cupynum._backends.cuda import elementwise as ew

    dev = Device(0)
    dev.set_current()
    cubin = compiler.compile_cubin(ew.program_source([p.key]), options=ew.compile_options(),
                                   name=ew.PROGRAM_NAME).cubin
    kern = ObjectCode.from_cubin(cubin).get_kernel(ew.kernel_name(p.key))
    stream = dev.default_stream
    cfg = LaunchConfig(grid=1, block=256)
    args = (a._buf.device.ptr, b._buf.device.ptr, out._buf.device.ptr, np.int64(1000))
    return per_call(lambda: launch(stream, cfg, kern, *args), sync, calls)


# ------------------------------------------------------------------------------------------
def alloc_section(cp, ctx, calls):
    from cupynum._backends.cuda import memory, runtime

    sync = ctx["sync"]
    pool = memory.get_pool()
    print("e: allocation")
    row("e", "pool.malloc(4096) + free (free-list hit: fast path)",
        per_call(lambda: pool.malloc(4096), sync, calls))
    row("e", "pool._malloc(4096) + free (the general path)",
        per_call(lambda: pool._malloc(4096, None, None), sync, calls))
    d = runtime._d
    h = pool._handle

    def driver_pool():
        err, ptr = d.cuMemAllocFromPoolAsync(4096, h, 0)
        d.cuMemFreeAsync(ptr, 0)
    row("e", "cuMemAllocFromPoolAsync + cuMemFreeAsync (driver pool)",
        per_call(driver_pool, sync, calls))
    cupy = ctx["cupy"]
    if cupy is not None:
        row("e", "CuPy: cupy.cuda.alloc(4096) + free",
            per_call(lambda: cupy.cuda.alloc(4096), ctx["cupy_sync"], calls))


def ops_section(cp, ctx, calls):
    from cupynum._backends.cuda import memory, runtime

    print("f: whole operations (n=1000 float32), cupynum then CuPy")
    a, b, sync = ctx["a"], ctx["b"], ctx["sync"]
    x = a.copy()
    y = b

    def setslice():
        x[1:-1] = y[1:-1]
    cases = [("empty(1000, float32)", lambda: cp.empty(1000, np.float32)),
             ("zeros(1000, float32)", lambda: cp.zeros(1000, np.float32)),
             ("a + b", lambda: a + b), ("a * 2.0", lambda: a * 2.0),
             ("x[1:-1]", lambda: x[1:-1]), ("x[1:-1] = y[1:-1]", setslice)]
    for name, fn in cases:
        row("f", "cupynum " + name, per_call(fn, sync, calls))
    from cupynum._backends.cuda import elementwise as ew

    key = (a.dtype, b.dtype, 0)
    entry = cp.add._fast[key]
    try:
        for mode in ("bindings", "ctypes"):
            cp.add._fast[key] = (entry[0], _launcher(cp, ew, runtime, mode), *entry[2:])
            cp.add._forget_hot()
            row("f", f"cupynum a + b, launcher built with CUPYNUM_LAUNCH={mode}",
                per_call(lambda: a + b, sync, calls))
    finally:
        cp.add._fast[key] = entry
        cp.add._forget_hot()
    # the memcpy under slice assignment, alone
    dst, src, nb = x._buf.device.ptr + 4, y._buf.device.ptr + 4, 998 * 4
    row("f", "(piece) memory.memcpy_dtod of 3992 bytes",
        per_call(lambda: memory.memcpy_dtod(dst, src, nb), sync, calls))
    f = ctypes.CDLL("libcuda.so.1").cuMemcpyDtoDAsync_v2
    f.restype = ctypes.c_int
    vp = ctypes.c_void_p
    row("f", "(piece) cuMemcpyDtoDAsync through ctypes (c_void_p args)",
        per_call(lambda: f(vp(dst), vp(src), nb, None), sync, calls))
    d = runtime._d
    row("f", "(piece) cuMemcpyDtoDAsync through bindings, int stream",
        per_call(lambda: d.cuMemcpyDtoDAsync(dst, src, nb, 0), sync, calls))
    cupy = ctx["cupy"]
    if cupy is None:
        return
    ca = cupy.asarray(np.arange(1000, dtype=np.float32))
    cb = cupy.ones(1000, np.float32)
    cx = ca.copy()

    def csetslice():
        cx[1:-1] = cb[1:-1]
    ccases = [("empty(1000, float32)", lambda: cupy.empty(1000, np.float32)),
              ("zeros(1000, float32)", lambda: cupy.zeros(1000, np.float32)),
              ("a + b", lambda: ca + cb), ("a * 2.0", lambda: ca * 2.0),
              ("x[1:-1]", lambda: cx[1:-1]), ("x[1:-1] = y[1:-1]", csetslice)]
    for name, fn in ccases:
        row("f", "CuPy    " + name, per_call(fn, ctx["cupy_sync"], calls))


def strided_section(cp, ctx, quick):
    from cupynum._backends.cuda import elementwise as ew
    from cupynum._backends.cuda import tuning

    print("s: strided a[::2] + b[::2], 2^24 float32 (device time per op)")
    n = 1 << 24
    rng = np.random.default_rng(0)
    ha = rng.standard_normal(n, dtype=np.float32)
    hb = rng.standard_normal(n, dtype=np.float32)
    a, b, sync = cp.asarray(ha), cp.asarray(hb), ctx["sync"]
    want = ha[::2] + hb[::2]

    def forget():  # every cache that holds kernel text or kernels built with the old ILP
        ew._prepared, ew._plans = {}, {}
        ew._funcs.clear()
        ew._group_src_cache.clear()

    try:
        for ilp in (1, 2, 4):
            tuning.override("ELEMENTWISE", strided_ilp=ilp)
            forget()
            got = (a[::2] + b[::2]).get()
            ok = np.array_equal(got, want)
            t = timed(lambda: [a[::2] + b[::2] for _ in range(10)], sync, 5) / 10
            row("s", f"cupynum strided_ilp={ilp}", t,
                f"{3 * n // 2 * 4 / t / 1e12:.2f} TB/s" + ("" if ok else "  WRONG RESULT"))
    finally:
        tuning.reset("ELEMENTWISE")
        forget()
    cupy = ctx["cupy"]
    if cupy is not None:
        ca, cb = cupy.asarray(ha), cupy.asarray(hb)
        t = timed(lambda: [ca[::2] + cb[::2] for _ in range(10)], ctx["cupy_sync"], 5) / 10
        row("s", "CuPy", t, f"{3 * n // 2 * 4 / t / 1e12:.2f} TB/s")


def transfer_section(cp, ctx, quick):
    from cupynum._array import from_host
    from cupynum._backends.cuda import memory, runtime

    nbytes = (256 << 20) if quick else (1 << 30)
    print(f"g: host <-> device, {nbytes >> 20} MiB (wall time incl. the final sync)")
    d = runtime._d
    host = np.arange(nbytes // 4, dtype=np.int32)
    back = np.empty_like(host)
    back[...] = 0  # touched: D2H rows below time the transfer, not first-touch page faults
    buf = memory.alloc(nbytes)
    ptr, s = buf.ptr, runtime.DEFAULT_STREAM
    sync = ctx["sync"]
    m = (1 << 20) // 4  # elements checked at each end after every variant

    def check_h2d():  # read both ends back through the driver and compare
        for off in (0, host.size - m):
            tmp = np.empty(m, np.int32)
            d.cuMemcpyDtoHAsync(tmp.ctypes.data, ptr + 4 * off, 4 * m, s)
            d.cuStreamSynchronize(s)
            if not np.array_equal(tmp, host[off:off + m]):
                return "  WRONG DATA"
        return ""

    def check_d2h():
        ok = np.array_equal(back[:m], host[:m]) and np.array_equal(back[-m:], host[-m:])
        back[:m] = 0
        back[-m:] = 0
        return "" if ok else "  WRONG DATA"

    def measure(name, fn, check=None, sync=sync):
        try:
            t = timed(fn, sync)
            row("g", name, t, f"{nbytes / t / 1e9:.1f} GB/s" + (check() if check else ""))
        except Exception as e:  # noqa: BLE001 - report and go on
            row("g", name, None, f"{type(e).__name__}: {e}"[:150])

    def h2d_pageable():
        (err,) = d.cuMemcpyHtoDAsync(ptr, host.ctypes.data, nbytes, s)
        assert not err, err

    def d2h_pageable():
        (err,) = d.cuMemcpyDtoHAsync(back.ctypes.data, ptr, nbytes, s)
        assert not err, err
        d.cuStreamSynchronize(s)
    measure("H2D pageable cuMemcpyHtoDAsync (as CuPy)", h2d_pageable, check_h2d)
    measure("D2H pageable cuMemcpyDtoHAsync + sync", d2h_pageable, check_d2h)
    # (4 MiB, 1 thread) is what cupynum did before; 16 MiB chunks are the default now.
    configs = dict.fromkeys([(4 << 20, 1), (16 << 20, 1), (16 << 20, 4),
                             (16 << 20, memory.COPY_THREADS)])
    for chunk, th in configs:
        st = memory._Staging(chunk=chunk, threads=th)
        try:
            measure(f"H2D staging, {chunk >> 20} MiB x2 pinned, {th} thread(s)",
                    lambda: st.htod(ptr, host, nbytes, s), check_h2d)
            measure(f"D2H staging, {chunk >> 20} MiB x2 pinned, {th} thread(s)",
                    lambda: st.dtoh(back, ptr, nbytes, s), check_d2h)
        finally:
            st.close()
    measure("H2D register 64 MiB chunks + async copies + unregister",
            lambda: memory._registered_copy(True, ptr, host, nbytes, s), check_h2d)
    measure("D2H register 64 MiB chunks + async copies + unregister",
            lambda: memory._registered_copy(False, ptr, back, nbytes, s), check_d2h)

    def register_whole(h2d):
        hp = (host if h2d else back).ctypes.data
        (err,) = d.cuMemHostRegister(hp, nbytes, 0)
        assert not err, err
        try:
            if h2d:
                d.cuMemcpyHtoDAsync(ptr, hp, nbytes, s)
            else:
                d.cuMemcpyDtoHAsync(hp, ptr, nbytes, s)
            d.cuStreamSynchronize(s)
        finally:
            d.cuMemHostUnregister(hp)
    measure("H2D register whole array once + copy + unregister",
            lambda: register_whole(True), check_h2d)
    measure("D2H register whole array once + copy + unregister",
            lambda: register_whole(False), check_d2h)
    del buf
    print(f"   end to end (the library's modes now: H2D={memory.H2D}, D2H={memory.D2H}, "
          f"{memory.COPY_THREADS} copy threads)")
    dev = cp.asarray(host)
    measure("cupynum.asarray(host)  (np.array copies the host data first)",
            lambda: cp.asarray(host))
    measure("cupynum _array.from_host(host)  (asarray without that host copy)",
            lambda: from_host(host))
    measure("cupynum .get()  (into a fresh host array, as CuPy's)", dev.get)
    del dev
    cupy = ctx["cupy"]
    if cupy is not None:
        cd = cupy.asarray(host)
        measure("CuPy cupy.asarray(host)", lambda: cupy.asarray(host), sync=ctx["cupy_sync"])
        measure("CuPy .get()", cd.get, sync=ctx["cupy_sync"])
        del cd
        cupy.get_default_memory_pool().free_all_blocks()


# ------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer calls, 256 MiB transfers")
    ap.add_argument("--only", default="abcdefsg", help="sections to run, e.g. 'abcf'")
    args = ap.parse_args()
    t_start = time.perf_counter()
    import cupynum as cp
    from cupynum import _backends

    if _backends.name() != "cuda":
        sys.exit("needs the CUDA backend (CUPYNUM_BACKEND=cuda on a GPU machine)")
    from cupynum._backends.cuda import memory, runtime

    calls = 4000 if args.quick else 20000
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        cupy_sync = cupy.cuda.runtime.deviceSynchronize
    except Exception as e:  # noqa: BLE001 - any failure means: no CuPy here
        print(f"note: CuPy skipped ({type(e).__name__}: {e})")
        cupy = cupy_sync = None
    import cuda.bindings

    print(f"device: {runtime.device_name()}, cuda-bindings {cuda.bindings.__version__}, "
          f"CPUs {os.cpu_count()}; library settings: CUPYNUM_LAUNCH={runtime.LAUNCH} "
          f"H2D={memory.H2D} D2H={memory.D2H} COPY_THREADS={memory.COPY_THREADS}")
    be = _backends.get()
    a = cp.asarray(np.arange(1000, dtype=np.float32))
    b = cp.ones(1000, np.float32)
    a + b, a * 2.0  # prepare the launchers
    ctx = {"a": a, "b": b, "sync": be.synchronize, "cupy": cupy, "cupy_sync": cupy_sync}
    sections = set(args.only)
    if sections & set("abcd"):
        launch_sections(cp, ctx, calls, sections)
    if "e" in sections:
        alloc_section(cp, ctx, calls)
    if "f" in sections:
        ops_section(cp, ctx, calls)
    if "s" in sections:
        strided_section(cp, ctx, args.quick)
    if "g" in sections:
        transfer_section(cp, ctx, args.quick)
    print(f"done in {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
