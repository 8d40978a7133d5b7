"""Where the last few per cent go: fft/rfft, solve and gather beside CuPy, piece by piece.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/lib_gap_probe.py [--quick]
    (PROBE_SECTIONS=gather,fft,solve,gemm,svd,batch picks the sections; the first three by
    default)

Each library-bound row of side_by_side.py that trails CuPy by 1-5% is timed here several
ways, cupynum and CuPy alternating (cupynum, CuPy, cupynum, CuPy), so that order, clocks
and measuring method can be told apart from a real difference:

* ``wall``: side_by_side.py's method (median of 20 rounds of 5 calls closed by a sync);
* ``event``: CUDA events around the same rounds (device time of the queue);
* ``host``: wall time of 5 calls without the sync, per call (what the host spends).

fft/rfft: also the cuFFT knobs (``tuning.FFT``: plan_api, work_area).  solve: the pieces
(column-major copies, getrf, getrs) and the 64-bit ``cusolverDnXgetrf`` with each of its
algorithms, beside the legacy ``Dgetrf`` that ``solver.solve`` calls.  gather: ``a[idx]``
under each ``CU_LIMIT_MAX_L2_FETCH_GRANULARITY`` (a context-wide limit: both libraries feel
it; PROBE_L2=1), and the cost of setting that limit.  Values are checked against NumPy first.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import device_sync, event_median_ms, import_cupy, log  # noqa: E402

import cupynum as cpn  # noqa: E402

cupy = import_cupy(need_device=True)
QUICK = "--quick" in sys.argv
fails: list[str] = []


def check(name, got, want, rtol):
    got = got.get() if hasattr(got, "get") else cpn.asnumpy(got)
    try:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
        log(f"PASS {name}")
    except AssertionError as e:
        fails.append(name)
        log(f"FAIL {name}: {str(e)[:300]}")


def ways(lib, fn):
    """(wall, event, host) microseconds per call, the bench's shape of 20 rounds x 5 calls."""
    sync = device_sync(lib)
    fn()
    sync()
    walls, hosts = [], []
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(5):
            fn()
        t1 = time.perf_counter()
        sync()
        walls.append((time.perf_counter() - t0) / 5)
        hosts.append((t1 - t0) / 5)
    ev = event_median_ms(lib, fn, 20, warm=1, calls=5)
    return statistics.median(walls) * 1e6, ev * 1e3, statistics.median(hosts) * 1e6


def side_by_side(name, fn_n, fn_c):
    rows = []
    for lib, fn in ((cpn, fn_n), (cupy, fn_c), (cpn, fn_n), (cupy, fn_c)):
        if lib is None:
            continue
        rows.append((lib.__name__, ways(lib, fn)))
    cells = "  ".join(f"{n[:5]} wall {w:8.1f} ev {e:8.1f} host {h:6.1f}" for n, (w, e, h) in rows)
    log(f"{name:26s} {cells}")


def fft_section():
    from cupynum._backends.cuda import fft as cfft, tuning

    rng = np.random.default_rng(0)
    n = 2**20 if QUICK else 2**24
    h = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    r = rng.standard_normal(2 * n).astype(np.float32)
    x, xr = cpn.asarray(h), cpn.asarray(r)
    check("fft c64", cpn.fft.fft(x), np.fft.fft(h), 1e-4)
    check("rfft f32", cpn.fft.rfft(xr), np.fft.rfft(r), 1e-4)
    kx = cupy.asarray(h) if cupy else None
    kr = cupy.asarray(r) if cupy else None
    fc = (lambda: cupy.fft.fft(kx)) if cupy else None
    frc = (lambda: cupy.fft.rfft(kr)) if cupy else None
    base = (tuning.FFT.plan_api, tuning.FFT.work_area)
    for api, work in ((base[0], base[1]), ("many", "pool"), ("many64", "auto"), ("many", "auto")):
        with tuning.overridden("FFT", plan_api=api, work_area=work):
            side_by_side(f"fft {api}/{work}", lambda: cpn.fft.fft(x), fc)
            side_by_side(f"rfft {api}/{work}", lambda: cpn.fft.rfft(xr), frc)
    # the backend call alone (no frontend), into a preallocated result
    out = cpn.empty(n, np.complex64)
    side_by_side("fft backend only", lambda: cfft.fft(x, out, "c2c", 1, True), fc)


def solve_section():
    from cupynum._backends.cuda import memory, solver, tuning

    rng = np.random.default_rng(1)
    n = 1024 if QUICK else 4096
    m = rng.standard_normal((n, n)) + n * np.eye(n)
    b = rng.standard_normal((n, 1))
    a, bb = cpn.asarray(m), cpn.asarray(b)
    check("solve f64", cpn.linalg.solve(a, bb), np.linalg.solve(m, b), 1e-8)
    ka, kb = (cupy.asarray(m), cupy.asarray(b)) if cupy else (None, None)
    side_by_side("solve", lambda: cpn.linalg.solve(a, bb),
                 (lambda: cupy.linalg.solve(ka, kb)) if cupy else None)
    dflt = tuning.SOLVER.solve_augmented_max_k
    for max_k in (0, 1) if dflt else (1, 0):  # the other path, then the default again
        tuning.override("SOLVER", solve_augmented_max_k=max_k)
        check(f"solve f64 (solve_augmented_max_k={max_k})", cpn.linalg.solve(a, bb),
              np.linalg.solve(m, b), 1e-8)
        side_by_side(f"solve, solve_augmented_max_k={max_k}", lambda: cpn.linalg.solve(a, bb),
                     (lambda: cupy.linalg.solve(ka, kb)) if cupy else None)
    tuning.reset("SOLVER")
    b8 = rng.standard_normal((n, 8))
    kb8 = cupy.asarray(b8) if cupy else None
    bb8 = cpn.asarray(b8)
    for max_k in (0, 8):  # 8 right-hand sides: getrs against the augmented LU + trsm
        tuning.override("SOLVER", solve_augmented_max_k=max_k)
        check(f"solve f64 k=8 (solve_augmented_max_k={max_k})", cpn.linalg.solve(a, bb8),
              np.linalg.solve(m, b8), 1e-8)
        side_by_side(f"solve k=8, solve_augmented_max_k={max_k}",
                     lambda: cpn.linalg.solve(a, bb8),
                     (lambda: cupy.linalg.solve(ka, kb8)) if cupy else None)
    tuning.reset("SOLVER")
    # pieces, CUDA events each (cupynum)
    a3 = a.reshape((1, n, n))
    lib, h = solver.lib(), solver.handle()
    af = solver.colmajor_copy(a3)
    ipiv = memory.alloc(n * 8)
    info = memory.alloc(8)
    lwork = lib.dgetrf_buffer_size(h, n, n, af.ptr, n)
    work = memory.alloc(max(lwork, 1) * 8)
    fresh = solver.colmajor_copy(a3)

    def refresh():
        memory.memcpy_dtod(af.ptr, fresh.ptr, n * n * 8)

    def ev(fn, reps=5):
        return event_median_ms(cpn, fn, reps, warm=1) * 1e3

    t_copy = ev(lambda: solver.colmajor_copy(a3))
    t_ref = ev(refresh)
    t_getrf = ev(lambda: (refresh(), lib.dgetrf(h, n, n, af.ptr, n, work.ptr, ipiv.ptr,
                                                info.ptr))) - t_ref
    log(f"solve pieces (events, us): colmajor copy {t_copy:.1f}  Dgetrf {t_getrf:.1f}")
    aug = memory.alloc(n * (n + 1) * 8)  # [A | b], column-major
    memory.memcpy_dtod(aug.ptr + n * n * 8, cpn.asarray(b[:, 0].copy())._buf.device.ptr, n * 8)
    lwork1 = lib.dgetrf_buffer_size(h, n, n + 1, aug.ptr, n)
    work1 = memory.alloc(max(lwork1, 1) * 8)
    t_aug = ev(lambda: (memory.memcpy_dtod(aug.ptr, fresh.ptr, n * n * 8),
                        lib.dgetrf(h, n, n + 1, aug.ptr, n, work1.ptr, ipiv.ptr,
                                   info.ptr))) - t_ref
    log(f"solve pieces (events, us): Dgetrf of [A | b] (n x n+1) {t_aug:.1f}")
    prm = solver.params()
    for algo in (0, 1):
        try:
            lib.set_adv_options(prm, 0, algo)  # CUSOLVERDN_GETRF, CUSOLVER_ALG_<algo>
            dsz, hsz = lib.xgetrf_buffer_size(h, prm, n, n, 1, af.ptr, n, 1)  # CUDA_R_64F
            wd = memory.alloc(max(int(dsz), 1))
            wh = np.empty(max(int(hsz), 1), np.uint8)
            t = ev(lambda: (refresh(), lib.xgetrf(h, prm, n, n, 1, af.ptr, n, ipiv.ptr, 1,
                                                   wd.ptr, int(dsz), wh.ctypes.data, int(hsz),
                                                   info.ptr))) - t_ref
            log(f"solve Xgetrf ALG_{algo}: {t:.1f} us")
        except Exception as e:  # noqa: BLE001
            log(f"solve Xgetrf ALG_{algo}: ERROR {type(e).__name__}: {str(e)[:200]}")
    lib.set_adv_options(prm, 0, 0)
    # the solve after the factorization: getrs (laswp + two trsm) against two trsv alone
    from cupynum._backends.cuda import blas

    refresh()
    lib.dgetrf(h, n, n, af.ptr, n, work.ptr, ipiv.ptr, info.ptr)
    bsrc = cpn.asarray(b[:, 0].copy())
    bw = cpn.empty(n, np.float64)

    def brefresh():
        memory.memcpy_dtod(bw._buf.device.ptr, bsrc._buf.device.ptr, n * 8)

    tb = ev(brefresh)
    t_getrs = ev(lambda: (brefresh(), lib.dgetrs(h, 0, n, 1, af.ptr, n, ipiv.ptr,
                                                  bw._buf.device.ptr, n, info.ptr))) - tb
    cb, hb = blas.lib(), blas.handle()
    t_trsv = ev(lambda: (brefresh(), cb.dtrsv(hb, 0, 0, 1, n, af.ptr, n, bw._buf.device.ptr, 1),
                         cb.dtrsv(hb, 1, 0, 0, n, af.ptr, n, bw._buf.device.ptr, 1))) - tb
    t_up = ev(lambda: (brefresh(), cb.dtrsv(hb, 1, 0, 0, n, af.ptr, n, bw._buf.device.ptr, 1))) - tb
    log(f"solve after getrf (events, us): Dgetrs 1 rhs {t_getrs:.1f}  two Dtrsv {t_trsv:.1f}"
        f"  upper Dtrsv alone {t_up:.1f}")
    if cupy:
        from cupy_backends.cuda.libs import cusolver as kcs
        from cupy.cuda import device as kdev

        kh = kdev.get_cusolver_handle()
        kaf = cupy.asfortranarray(ka)
        kf = kaf.copy(order="F")
        kw = cupy.empty(kcs.dgetrf_bufferSize(kh, n, n, kaf.data.ptr, n), np.float64)
        kp = cupy.empty(n, np.int32)
        ki = cupy.empty(1, np.int32)

        def krefresh():
            kaf[...] = kf

        tk_ref = event_median_ms(cupy, krefresh, 5) * 1e3
        tk = event_median_ms(cupy, lambda: (krefresh(), kcs.dgetrf(
            kh, n, n, kaf.data.ptr, n, kw.data.ptr, kp.data.ptr, ki.data.ptr)), 5) * 1e3 - tk_ref
        log(f"solve CuPy's Dgetrf alone: {tk:.1f} us")


def gather_section():
    from cupynum._backends.cuda import runtime as rt

    rng = np.random.default_rng(2)
    n = 2**24 if QUICK else 2**28
    h = rng.standard_normal(n, dtype=np.float32)
    ix = rng.integers(0, n, n // 4)
    a, i = cpn.asarray(h), cpn.asarray(ix)
    check("gather", a[i], h[ix], 0)
    ka, ki = (cupy.asarray(h), cupy.asarray(ix)) if cupy else (None, None)
    d = rt._d
    limit = d.CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY
    err, dflt = d.cuCtxGetLimit(limit)
    log(f"L2 fetch granularity: default {dflt} (err {err})")
    # H200: 32 and 128 only slowed both libraries' gathers (64 is the default there)
    for g in ((dflt, 32, 64, 128) if os.environ.get("PROBE_L2") else (dflt,)):
        (err,) = d.cuCtxSetLimit(limit, g)
        err2, now = d.cuCtxGetLimit(limit)
        side_by_side(f"gather L2 gran {g} (now {now})", lambda: a[i],
                     (lambda: ka[ki]) if cupy else None)
        b = cpn.asarray(h)
        side_by_side(f"  a+b 2^28 L2 gran {g}", lambda: a + b,
                     (lambda: ka + ka) if cupy else None)
    d.cuCtxSetLimit(limit, dflt)
    from cupynum._backends.cuda import indexing as cix
    from cupynum._backends.cuda import tuning

    # a[idx] under knob settings: the early signal off, and on with the tail's share of
    # the blocks (1/DIV), its ILP and index loads, the block size.  (Measured on the H200
    # and not kept: an L2 evict_last hint on the checkers' reads of the tail's indices; no
    # tail, every block counting itself; a grid of resident blocks each checking its last
    # round first; element loads evicted first from L2, or through ld.global.nc; streaming
    # stores; counting after the element loads.)
    configs = {"off": dict(early_signal=False), "default": {}}
    configs.update({f"div {d}": dict(signal_tail_div=d) for d in (32, 64)})
    configs["idx ldg"] = dict(signal_idx_load="ldg")
    if os.environ.get("PROBE_GATHER_SWEEP"):  # ILP and block shapes under the early signal
        configs.update({f"b{b} i{il} div {d}": dict(block=b, signal_ilp=il,
                                                    signal_tail_div=d)
                        for b, il, d in ((128, 1, 48), (512, 1, 48), (256, 2, 32),
                                         (256, 4, 16), (256, 4, 24))})

    def use(cfg):  # tuning.GATHER: the defaults, then cfg
        tuning.reset("GATHER")
        tuning.override("GATHER", **cfg)

    for name, cfg in configs.items():
        use(cfg)
        bad = ix.copy()
        bad[-7] = n
        try:
            a[cpn.asarray(bad)]
            log(f"FAIL gather early signal {name}: no IndexError for an index near the end")
            fails.append(f"gather {name}")
        except IndexError:
            pass
        check(f"gather ({name})", a[i], h[ix], 0)
        side_by_side(f"gather {name}", lambda: a[i], (lambda: ka[ki]) if cupy else None)
    use({})
    # the kernel alone (no flag read: no sync), checked and not, and the flag read alone
    out = cpn.empty(ix.size, np.float32)
    flag = cix._FLAG.get().ptr
    for checked in (False, True):
        w, e, hst = ways(cpn, lambda: cix._launch_gather1(checked, 4, a, out, i, ix.size, n, 4,
                                                          flag))
        log(f"gather kernel alone, checked={checked}: wall {w:.1f} ev {e:.1f} host {hst:.1f}")
    w, e, hst = ways(cpn, cix._FLAG.read)
    log(f"gather flag read alone (idle stream): wall {w:.1f} ev {e:.1f} host {hst:.1f}")
    # the early-signal kernel: alone (launched, never waited for), and when its signal comes
    fl = cix._FLAG
    if fl.host_copy is not None:
        for name, cfg in configs.items():
            if not cfg.get("early_signal", True):
                continue
            use(cfg)
            w, e, hst = ways(cpn, lambda: cix._launch_gather1(True, 4, a, out, i, ix.size, n, 4,
                                                              flag, True))
            log(f"gather signal kernel alone, {name}: wall {w:.1f} ev {e:.1f} host {hst:.1f}")
            sig, end = [], []
            for _ in range(20):
                cix.DEV.sync()
                t0 = time.perf_counter()
                seq = cix._launch_gather1(True, 4, a, out, i, ix.size, n, 4, flag, True)
                while fl._done.value < seq:
                    pass
                t1 = time.perf_counter()
                cix.DEV.sync()
                t2 = time.perf_counter()
                sig.append((t1 - t0) * 1e6)
                end.append((t2 - t0) * 1e6)
            log(f"gather signal, {name}: launch to signal {statistics.median(sig):.1f} us, "
                f"to stream done {statistics.median(end):.1f} us")
        use({})
    # the bubble a checked gather leaves on the device, piece by piece: kernel + stream
    # sync, kernel + flag read, the frontend call; and a tiny kernel's round trip
    dev = cix.DEV
    for name, fn in (
            ("kernel + DEV.sync", lambda: (cix._launch_gather1(True, 4, a, out, i, ix.size, n,
                                                               4, flag), dev.sync())),
            ("kernel + flag read", lambda: (cix._launch_gather1(True, 4, a, out, i, ix.size,
                                                                n, 4, flag), cix._FLAG.read())),
            ("gather_flat", lambda: cix.gather_flat(a, i, out)),
            ("a[i]", lambda: a[i])):
        w, e, hst = ways(cpn, fn)
        log(f"gather bubble, {name}: wall {w:.1f} ev {e:.1f} host {hst:.1f}")
    small, one = cpn.ones(1000, np.float32), cpn.ones(1000, np.float32)
    w, e, hst = ways(cpn, lambda: (small + one, dev.sync()))
    log(f"tiny add + sync round trip: wall {w:.1f} ev {e:.1f} host {hst:.1f}")
    err, flags = d.cuCtxGetFlags()
    log(f"context flags: {flags!r} (err {err}); CPUs {os.cpu_count()}")
    t0 = time.perf_counter()
    for _ in range(1000):
        d.cuCtxSetLimit(limit, dflt)
    log(f"cuCtxSetLimit: {(time.perf_counter() - t0) * 1e3:.2f} us a call")


def gemm_section():
    """8192^2 GEMMs, the libraries alternating, GemmEx (the default) and the typed call."""
    from cupynum._backends.cuda import tuning

    n = 2048 if QUICK else 8192
    rng = np.random.default_rng(4)
    for dt in (np.float64, np.float32):
        h = rng.standard_normal((n, n)).astype(dt)
        a = cpn.asarray(h)
        ka = cupy.asarray(h) if cupy else None
        for api in ("gemm_ex", "typed"):
            with tuning.overridden("BLAS", gemm_api=api):
                side_by_side(f"A@A {np.dtype(dt).name} {api}", lambda: a @ a,
                             (lambda: ka @ ka) if cupy else None)


def _svd_errors(a64, u, s, v_or_vh, vh_given):
    """(singular values' max error relative to s[0], reconstruction error, max |U^T U - I|)
    in float64 against NumPy's float64 SVD of the same matrix."""
    u, s, v = (np.asarray(x, np.float64) for x in (u, s, v_or_vh))
    vh = v if vh_given else v.T
    ref = np.linalg.svd(a64, compute_uv=False)
    err_s = np.abs(np.sort(s)[::-1] - ref).max() / ref[0]
    k = s.shape[0]
    rec = np.linalg.norm((u[:, :k] * s) @ vh[:k] - a64) / np.linalg.norm(a64)
    orth = np.abs(u.T @ u - np.eye(u.shape[1])).max()
    return err_s, rec, orth


def svd_section():
    """``svd`` of a square float32 matrix: cuSOLVER's gesvd (what cupynum and CuPy call)
    beside gesvdj (one-sided Jacobi) and Xgesvdp (polar decomposition), each timed with
    CUDA events on the column-major copy and checked against NumPy's float64 SVD."""
    from cupynum._backends.cuda import memory, solver

    rng = np.random.default_rng(3)
    n = 512 if QUICK else 2048
    h = rng.standard_normal((n, n)).astype(np.float32)
    a = cpn.asarray(h)
    a64 = h.astype(np.float64)
    ka = cupy.asarray(h) if cupy else None
    from cupynum.linalg import _linalg

    def cpn_svd(mode):
        def call():
            _linalg.GRAM_SVD = mode
            try:
                return cpn.linalg.svd(a)
            finally:
                _linalg.GRAM_SVD = "gpu"
        return call

    for mode in ("gpu", "never"):  # the float64 Gram path (the default), and gesvd
        u, sv, vh = (x.get() for x in cpn_svd(mode)())
        e = _svd_errors(a64, u, sv, vh, True)
        log(f"svd cupynum GRAM_SVD={mode}: s err {e[0]:.2e}  recon {e[1]:.2e}  orth {e[2]:.2e}")
    rounds = [(cpn, "cupynum (Gram)", cpn_svd("gpu")), (cpn, "cupynum (gesvd)", cpn_svd("never")),
              (cupy, "cupy", lambda: cupy.linalg.svd(ka))]
    for lib, name, fn in rounds + rounds:
        if lib is not None:  # (a call takes ~0.3 s: events around 3 calls, not ``ways``)
            log(f"svd (u, s, vh) {name}: {event_median_ms(lib, fn, 3, warm=1):.2f} ms")
    lib, hd = solver.lib(), solver.handle()
    a3 = a.reshape((1, n, n))
    fresh = solver.colmajor_copy(a3)
    af = solver.colmajor_copy(a3)
    sz = n * n * 4
    sb, ub, vb = memory.alloc(n * 4), memory.alloc(sz), memory.alloc(sz)
    info = memory.alloc(8)

    def refresh():
        memory.memcpy_dtod(af.ptr, fresh.ptr, sz)

    def ev(fn, reps=3):
        return event_median_ms(cpn, fn, reps, warm=1) * 1e3

    def host(ptr, shape, dt=np.float32):
        out = np.empty(shape, dt)
        memory.memcpy_dtoh(out, ptr)
        return out

    ref_s = np.linalg.svd(a64, compute_uv=False)

    def report(name, fn, vh_given, extra=None):
        try:
            t = ev(lambda: (refresh(), fn())) - t_ref
            refresh()
            fn()
            device_sync(cpn)()
            u = host(ub.ptr, (n, n)).T  # column-major
            v = host(vb.ptr, (n, n)).T
            sv = host(sb.ptr, (n,))
            e = _svd_errors(a64, u, sv, v, vh_given)
            log(f"svd {name}: {t / 1e3:.2f} ms  s err {e[0]:.2e}  recon {e[1]:.2e}  "
                f"orth {e[2]:.2e}  info {int(host(info.ptr, (1,), np.int32)[0])}  "
                f"s[:2] {sv[:2]} s[-2:] {sv[-2:]} (NumPy {ref_s[:2]} {ref_s[-2:]})"
                + (f"  {extra()}" if extra else ""))
        except Exception as ex:  # noqa: BLE001
            log(f"svd {name}: ERROR {type(ex).__name__}: {str(ex)[:200]}")

    t_ref = ev(refresh)
    lw = lib.sgesvd_buffer_size(hd, n, n)
    w1 = memory.alloc(max(lw, 1) * 4)
    rw = memory.alloc(n * 4)
    report("gesvd A/A", lambda: lib.sgesvd(hd, ord("A"), ord("A"), n, n, af.ptr, n, sb.ptr,
                                           ub.ptr, n, vb.ptr, n, w1.ptr, lw, rw.ptr, info.ptr),
           True)
    for tol, sweeps in ((None, None), (1e-6, None), (None, 200)):  # None: cuSOLVER's default
        prm = lib.create_gesvdj_info()  # (eps and 100 sweeps)
        if tol is not None:
            lib.xgesvdj_set_tolerance(prm, tol)
        if sweeps is not None:
            lib.xgesvdj_set_max_sweeps(prm, sweeps)
        lj = lib.sgesvdj_buffer_size(hd, 1, 0, n, n, af.ptr, n, sb.ptr, ub.ptr, n, vb.ptr, n,
                                     prm)
        w2 = memory.alloc(max(lj, 1) * 4)
        report(f"gesvdj tol {tol} sweeps {sweeps}", lambda: lib.sgesvdj(
            hd, 1, 0, n, n, af.ptr, n, sb.ptr, ub.ptr, n, vb.ptr, n, w2.ptr, lj, info.ptr,
            prm), False, lambda: f"sweeps done {lib.xgesvdj_get_sweeps(hd, prm)} residual "
                                 f"{lib.xgesvdj_get_residual(hd, prm):.2e}")
    xp = solver.params()
    for econ in (1, 0):
        try:
            dsz, hsz = lib.xgesvdp_buffer_size(hd, xp, 1, econ, n, n, 0, af.ptr, n, 0, sb.ptr,
                                               0, ub.ptr, n, 0, vb.ptr, n, 0)
        except Exception as ex:  # noqa: BLE001
            log(f"svd Xgesvdp econ {econ}: ERROR {type(ex).__name__}: {str(ex)[:200]}")
            continue
        wd = memory.alloc(max(int(dsz), 1))
        wh = np.empty(max(int(hsz), 1), np.uint8)
        err_sigma = []
        report(f"Xgesvdp econ {econ}", lambda: err_sigma.append(lib.xgesvdp(
            hd, xp, 1, econ, n, n, 0, af.ptr, n, 0, sb.ptr, 0, ub.ptr, n, 0, vb.ptr, n, 0,
            wd.ptr, int(dsz), wh.ctypes.data, int(hsz), info.ptr)), False,
            lambda: f"h_err_sigma {err_sigma[-1] if err_sigma else None}")
        report(f"Xgesvdp econ {econ} (V as given)", lambda: lib.xgesvdp(
            hd, xp, 1, econ, n, n, 0, af.ptr, n, 0, sb.ptr, 0, ub.ptr, n, 0, vb.ptr, n, 0,
            wd.ptr, int(dsz), wh.ctypes.data, int(hsz), info.ptr), True)
    # the 64-bit API's gesvd, for its speed beside the classic entry
    try:
        dsz, hsz = lib.xgesvd_buffer_size(hd, xp, ord("A"), ord("A"), n, n, 0, af.ptr, n, 0,
                                          sb.ptr, 0, ub.ptr, n, 0, vb.ptr, n, 0)
        wd = memory.alloc(max(int(dsz), 1))
        wh = np.empty(max(int(hsz), 1), np.uint8)
        report("Xgesvd A/A", lambda: lib.xgesvd(
            hd, xp, ord("A"), ord("A"), n, n, 0, af.ptr, n, 0, sb.ptr, 0, ub.ptr, n, 0,
            vb.ptr, n, 0, wd.ptr, int(dsz), wh.ctypes.data, int(hsz), info.ptr), True)
    except Exception as ex:  # noqa: BLE001
        log(f"svd Xgesvd: ERROR {type(ex).__name__}: {str(ex)[:200]}")


def batch_section():
    """``a @ a`` for 10,000 4x4 float32 matrices (side_by_side's row): host and device time."""
    h = np.random.default_rng(4).standard_normal((10000, 4, 4)).astype(np.float32)
    a = cpn.asarray(h)
    check("batch 4x4", a @ a, h @ h, 1e-5)
    ka = cupy.asarray(h) if cupy else None
    side_by_side("batch 4x4 a @ a", lambda: a @ a, (lambda: ka @ ka) if cupy else None)


SECTIONS = {"gather": gather_section, "fft": fft_section, "solve": solve_section,
            "gemm": gemm_section, "svd": svd_section, "batch": batch_section}


def main():
    start = time.perf_counter()
    names = os.environ.get("PROBE_SECTIONS", "gather,fft,solve").split(",")
    for sec in (SECTIONS[n] for n in names):
        try:
            sec()
        except Exception as e:  # noqa: BLE001 - one section failing never ends the probe
            import traceback

            fails.append(sec.__name__)
            log(f"FAIL {sec.__name__}: {type(e).__name__}: {e}")
            traceback.print_exc(limit=4)
    log(f"{len(fails)} failed: {fails}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
