"""GPU probe for the GEMM and FFT knobs (issue 6): checks every variant against NumPy, then
times it beside CuPy, one line per variant, so one run picks the defaults.

    PYTHONPATH=. CUPYNUM_BACKEND=cuda python benchmarks/probes/gemm_fft_probe.py [gemm|fft]

GEMM (8192 x 8192 float64 and float32, ``A @ B``), knobs ``tuning.BLAS``:
  api=gemm_ex|typed    cublasGemmEx (COMPUTE_64F / 32F) or cublas{D,S}gemm   (gemm_api)
  ws=0|32M|128M        cublasSetWorkspace with a buffer from our pool        (workspace_bytes)
  algo=-1|99           CUBLAS_GEMM_DEFAULT or DEFAULT_TENSOR_OP (Ex only)    (gemm_algo)
  math=...             cublasMath_t (TF32 / emulated FP64: info only, not NumPy-exact)
  out=                 ``matmul(a, b, out=c)``: no 512 MiB output allocation per call
  raw ...              the binding called directly on prepared pointers (no cupynum frontend),
                       pointer mode host or device (alpha/beta in device memory)
  cublasLt #i          cublasLtMatmul with the heuristic's i-th algorithm, 32 MiB workspace
                       (probe only: no knob in blas.py yet)
FFT (c2c 2^24 complex64, r2c 2^25 float32, plus c2c/r2c/c2r double and 2-D checks), knobs
``tuning.FFT``:
  plan=many64|many|xt  cufftMakePlanMany64 (today) / MakePlanMany (32-bit, as CuPy) /
                       XtMakePlanMany + XtExec                               (plan_api)
  work=auto|pool       cuFFT's own work area, or one from our pool held by the plan (work_area)
  exec-only            the backend transform into a preallocated output (no frontend, no alloc)
Times: median over rounds of CUDA-event time per call (several calls per round, after warm-up).
The header prints the cuBLAS/cuFFT versions each library loaded: if CuPy's differ from ours,
the kernels differ and no knob closes the gap.
"""
import functools
import os
import sys
import time
import traceback

import numpy as np

import cupynum as cpn
from cupynum._backends import get as get_backend
from cupynum._backends.cuda import blas, fft as cfft, tuning

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import event_median_ms, finish, import_cupy, run_check  # noqa: E402

cupy = import_cupy()

FAILS = []
T0 = time.perf_counter()
check = functools.partial(run_check, fails=FAILS)


def t_cpn(fn, calls=3, rounds=5):
    """Median CUDA-event milliseconds per call of fn (cupynum's events, current stream)."""
    return event_median_ms(cpn, fn, rounds, calls=calls)


def t_cupy(fn, calls=3, rounds=5):
    return event_median_ms(cupy, fn, rounds, calls=calls)


def line(label, ms, ref_ms, unit="ms"):
    scale = 1000.0 if unit == "us" else 1.0
    rel = f"  {ref_ms / ms * 100:6.1f}% of CuPy speed" if ref_ms and ms else ""
    print(f"  {label:<46s} {ms * scale:10.3f} {unit}{rel}", flush=True)


def timed(label, fn, ref_ms, unit="ms", calls=3, rounds=5):
    try:
        line(label, t_cpn(fn, calls, rounds), ref_ms, unit)
    except Exception as e:  # noqa: BLE001
        print(f"  {label:<46s} ERROR {type(e).__name__}: {e}", flush=True)


def versions():
    be = get_backend()
    print(f"cupynum backend: {type(be).__module__}; CuPy: "
          f"{getattr(cupy, '__version__', 'not importable')}")
    try:
        print(f"  cuBLAS ours {blas.lib().get_version(blas.handle())}", end="")
        if cupy is not None:
            h = cupy.cuda.device.get_cublas_handle()
            print(f", CuPy's {cupy.cuda.cublas.getVersion(h)}", end="")
        print(f"; cuFFT ours {cfft.lib().get_version()}", end="")
        if cupy is not None:
            print(f", CuPy's {cupy.cuda.cufft.getVersion()}", end="")
        print()
    except Exception as e:  # noqa: BLE001
        print(f"  (versions: {type(e).__name__}: {e})")


# --- GEMM --------------------------------------------------------------------------------------

MIB = 1 << 20
GEMM_N = 8192
GEMM_VARIANTS = [  # (label, knobs)
    ("api=gemm_ex ws=0 algo=-1 (today)", {}),
    ("api=typed   ws=0", {"gemm_api": "typed"}),
    ("api=gemm_ex ws=32M", {"workspace_bytes": 32 * MIB}),
    ("api=typed   ws=32M", {"gemm_api": "typed", "workspace_bytes": 32 * MIB}),
    ("api=gemm_ex ws=128M", {"workspace_bytes": 128 * MIB}),
    ("api=typed   ws=128M", {"gemm_api": "typed", "workspace_bytes": 128 * MIB}),
    ("api=gemm_ex algo=99 (DEFAULT_TENSOR_OP)", {"gemm_algo": 99}),
    ("api=gemm_ex math=PEDANTIC", {"math_mode": "PEDANTIC_MATH"}),
    ("api=gemm_ex math=DISALLOW_REDUCED_PREC_RED",
     {"math_mode": "DISALLOW_REDUCED_PRECISION_REDUCTION"}),
]
INFO_ONLY = {"f": ("api=gemm_ex math=TF32 [info: not float32-exact]", "TF32_TENSOR_OP_MATH"),
             "d": ("api=gemm_ex math=FP64_EMULATED [info only]", "FP64_EMULATED_FIXEDPOINT_MATH")}


def _math(name_or_value):
    if isinstance(name_or_value, str):
        return int(getattr(blas.lib().Math, name_or_value))
    return name_or_value


def _knobs(values):
    vals = dict(values)
    if "math_mode" in vals:
        vals["math_mode"] = _math(vals["math_mode"])
    return tuning.overridden("BLAS", **vals)


def gemm_check(label, knobs, dt, a_h, b_h, a, b, rows):
    """C = a @ b under the knobs, compared with NumPy on a few rows (full NumPy product of an
    8192 matrix would take the host too long)."""
    def run():
        with _knobs(knobs):
            c = a @ b
            got = np.asarray(c[rows])
        exp = a_h[rows].astype(np.float64) @ b_h.astype(np.float64)
        err = np.abs(got - exp).max() / np.abs(exp).max()
        tol = 1e-12 if dt == np.float64 else 2e-5
        assert got.dtype == dt and c.shape == (a_h.shape[0], b_h.shape[1])
        assert err < tol, f"relative error {err:.2e} > {tol}"
        return f"rel err {err:.1e}"
    return check(f"gemm {np.dtype(dt).name} {label}", run)


def raw_gemm(dt, a, b, c, pointer_mode):
    """The cuBLAS call alone (no frontend, no allocation): typed gemm and GemmEx, host or
    device alpha/beta.  Returns [(label, fn)]."""
    cb = blas.lib()
    h = blas.handle()
    char = np.dtype(dt).char
    n = a.shape[0]
    pa, pb, pc = (x._buf.device.ptr + x._offset for x in (a, b, c))
    if pointer_mode == "device":
        scal = cpn.asarray(np.array([1, 0], dt))
        alpha = scal._buf.device.ptr + scal._offset
        beta = alpha + np.dtype(dt).itemsize
        keep = scal
    else:
        keep, alpha, beta = blas.scalar_ptrs(char, 1, 0)
    mode = int(cb.PointerMode.DEVICE if pointer_mode == "device" else cb.PointerMode.HOST)
    typed = getattr(cb, blas._TYPED_GEMM[char])
    dtc = blas.DATA_TYPE[char]

    def wrap(call):
        def fn():
            cb.set_pointer_mode(h, mode)
            try:
                call()
            finally:
                cb.set_pointer_mode(h, int(cb.PointerMode.HOST))
            return keep
        return fn

    return [
        (f"raw {blas._TYPED_GEMM[char]} ptr={pointer_mode}", wrap(
            lambda: typed(h, 0, 0, n, n, n, alpha, pb, n, pa, n, beta, pc, n))),
        (f"raw gemm_ex ptr={pointer_mode}", wrap(
            lambda: cb.gemm_ex(h, 0, 0, n, n, n, alpha, pb, dtc, n, pa, dtc, n, beta, pc, dtc,
                               n, blas.COMPUTE[char], -1))),
    ]


def gemm_section():
    print(f"\n== GEMM {GEMM_N}x{GEMM_N} (a @ b), per call ==", flush=True)
    rng = np.random.default_rng(0)
    rows = np.array([0, 1, 2, 777, 4095, GEMM_N - 1])
    for dt in (np.float64, np.float32):
        char = np.dtype(dt).char
        a_h = rng.standard_normal((GEMM_N, GEMM_N)).astype(dt)
        b_h = rng.standard_normal((GEMM_N, GEMM_N)).astype(dt)
        a, b = cpn.asarray(a_h), cpn.asarray(b_h)
        c = cpn.empty((GEMM_N, GEMM_N), dt)
        ref = None
        if cupy is not None:
            ca, cb_ = cupy.asarray(a_h), cupy.asarray(b_h)
            ref = t_cupy(lambda: ca @ cb_)
            co = cupy.empty((GEMM_N, GEMM_N), dt)
            ref_out = t_cupy(lambda: cupy.matmul(ca, cb_, out=co))
        print(f"{np.dtype(dt).name}:", flush=True)
        if ref is not None:
            line("CuPy a @ b", ref, None)
            line("CuPy matmul(a, b, out=c)", ref_out, None)
        for label, knobs in GEMM_VARIANTS:
            if gemm_check(label, knobs, dt, a_h, b_h, a, b, rows):
                with _knobs(knobs):
                    timed(label, lambda: a @ b, ref)
        info_label, info_mode = INFO_ONLY[char]  # not NumPy-exact: timed, not checked
        with _knobs({"math_mode": info_mode}):
            timed(info_label, lambda: a @ b, ref)
        with _knobs({}):
            timed("a @ b, out=c (no output allocation)", lambda: cpn.matmul(a, b, out=c), ref)
        for pm in ("host", "device"):
            for label, fn in raw_gemm(dt, a, b, c, pm):
                ok = check(f"gemm {np.dtype(dt).name} {label}", _raw_check(fn, c, a_h, b_h, rows,
                                                                            dt))
                if ok:
                    timed(label, fn, ref)
        try:
            lt_variants = lt_gemm(dt, a, b, c)
        except Exception as e:  # noqa: BLE001
            lt_variants = []
            print(f"  cublasLt setup: {type(e).__name__}: {e}", flush=True)
        for label, fn in lt_variants:
            if check(f"gemm {np.dtype(dt).name} {label}", _raw_check(fn, c, a_h, b_h, rows, dt)):
                timed(label, fn, ref)
        del a, b, c
        if cupy is not None:
            del ca, cb_, co
            cupy.get_default_memory_pool().free_all_blocks()


def lt_gemm(dt, a, b, c, ws_bytes=32 * MIB, top=3):
    """cublasLt matmul with its heuristic's first ``top`` algorithms (workspace ws_bytes):
    [(label, fn)].  Column-major as blas.matmul: C^T = B^T A^T, so B is passed first."""
    from cupynum._backends.cuda import runtime
    from cupynum._backends.cuda.nvmath_bindings import load

    lt = load("cublasLt")
    char = np.dtype(dt).char
    dtc, ctype = blas.DATA_TYPE[char], blas.COMPUTE[char]
    n = a.shape[0]
    h = lt.create()
    desc = lt.matmul_desc_create(ctype, dtc)  # no transposes; scale type = data type
    lay = lt.matrix_layout_create(dtc, n, n, n)
    pref = lt.matmul_preference_create()
    wsz = np.array([ws_bytes], np.uint64)
    lt.matmul_preference_set_attribute(
        pref, int(lt.MatmulPreferenceAttribute.MAX_WORKSPACE_BYTES), wsz.ctypes.data, 8)
    results = np.zeros(top, lt.matmul_heuristic_result_dtype)
    count = np.zeros(1, np.int32)
    lt.matmul_algo_get_heuristic(h, desc, lay, lay, lay, lay, pref, top, results.ctypes.data,
                                 count.ctypes.data)
    ws = cpn.empty(ws_bytes, np.uint8)
    keep, alpha, beta = blas.scalar_ptrs(char, 1, 0)
    pa, pb, pc = (x._buf.device.ptr + x._offset for x in (a, b, c))
    pw = ws._buf.device.ptr + ws._offset
    out = []
    for i in range(int(count[0])):
        algo = results.ctypes.data + i * results.itemsize  # 'algo' is the struct's first field
        wbytes = int(results[i]["workspace_size"])

        def fn(algo=algo, wbytes=wbytes):
            lt.matmul(h, desc, alpha, pb, lay, pa, lay, beta, pc, lay, pc, lay, algo, pw,
                      wbytes, runtime.current_stream())
            return keep, results, ws
        out.append((f"cublasLt heuristic #{i} (ws {wbytes >> 10} KiB, "
                    f"waves {float(results[i]['waves_count']):.2f})", fn))
    return out


def _raw_check(fn, c, a_h, b_h, rows, dt):
    def run():
        cpn.multiply(c, 0, out=c)
        fn()
        got = np.asarray(c[rows])
        exp = a_h[rows].astype(np.float64) @ b_h.astype(np.float64)
        err = np.abs(got - exp).max() / np.abs(exp).max()
        assert err < (1e-12 if dt == np.float64 else 2e-5), f"relative error {err:.2e}"
        return f"rel err {err:.1e}"
    return run


# --- FFT ---------------------------------------------------------------------------------------

FFT_VARIANTS = [(f"plan={p:<6s} work={w}", {"plan_api": p, "work_area": w})
                for w in ("auto", "pool") for p in ("many64", "many", "xt", "1d")]


def _rel_err(got, exp):
    return float(np.linalg.norm((got - exp).ravel()) / max(np.linalg.norm(exp.ravel()), 1e-300))


def fft_checks(label, knobs):
    """Small transforms of every kind and precision under the knobs, against NumPy."""
    rng = np.random.default_rng(1)
    cases = []
    for dt, tol in ((np.complex64, 1e-5), (np.complex128, 1e-12)):
        x = (rng.standard_normal((3, 1000)) + 1j * rng.standard_normal((3, 1000))).astype(dt)
        cases += [("fft", lambda m, x=x: m.fft.fft(x), x, tol),
                  ("ifft", lambda m, x=x: m.fft.ifft(x), x, tol),
                  ("fft2", lambda m, x=x: m.fft.fft2(x.reshape(3, 40, 25)), x, tol),
                  ("irfft", lambda m, x=x: m.fft.irfft(x, n=1998), x, tol)]
    for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        r = rng.standard_normal((4, 1024)).astype(dt)
        cases += [("rfft", lambda m, r=r: m.fft.rfft(r), r, tol),
                  ("rfft2", lambda m, r=r: m.fft.rfft2(r.reshape(4, 32, 32)), r, tol)]

    def run():
        worst = 0.0
        with tuning.overridden("FFT", **knobs):
            cfft.clear_plan_cache()
            for name, f, x, tol in cases:
                got = f(cpn)
                exp = f(np)
                g = np.asarray(got)
                assert g.dtype == exp.dtype and g.shape == exp.shape, (name, g.dtype, exp.dtype)
                err = _rel_err(g, exp)
                assert err < tol, f"{name} {x.dtype}: rel err {err:.1e}"
                worst = max(worst, err / tol)
            cfft.clear_plan_cache()
        return f"{len(cases)} transforms, worst err/tol {worst:.2f}"
    return check(f"fft small {label}", run)


def fft_big(name, make, np_fn, kind, tol):
    """One large transform: checked once per variant against a single NumPy reference,
    then timed (full call and exec-only) beside CuPy."""
    print(f"{name}:", flush=True)
    x_h = make()
    exp = np_fn(x_h)
    x = cpn.asarray(x_h)
    ref = None
    if cupy is not None:
        cx = cupy.asarray(x_h)
        cfn = cupy.fft.fft if kind == "c2c" else cupy.fft.rfft
        ref = t_cupy(lambda: cfn(cx), calls=10)
        line("CuPy", ref, None, "us")
    fn = cpn.fft.fft if kind == "c2c" else cpn.fft.rfft
    out = cpn.empty(exp.shape, exp.dtype)
    for label, knobs in FFT_VARIANTS:
        with tuning.overridden("FFT", **knobs):
            cfft.clear_plan_cache()

            def run():
                err = _rel_err(np.asarray(fn(x)), exp)
                assert err < tol, f"rel err {err:.1e}"
                return f"rel err {err:.1e}"
            if check(f"{name} {label}", run):
                timed(label, lambda: fn(x), ref, "us", calls=10)
                timed(label + " exec-only", lambda: cfft.fft(x, out, kind, 1, True), ref,
                      "us", calls=10)
            cfft.clear_plan_cache()
    del x, out
    if cupy is not None:
        del cx
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.fft.config.get_plan_cache().clear()


def fft_section():
    print("\n== FFT, per call ==", flush=True)
    for label, knobs in FFT_VARIANTS:
        fft_checks(label, knobs)
    rng = np.random.default_rng(2)
    fft_big("fft c2c 2^24 complex64",
            lambda: (rng.standard_normal(1 << 24) + 1j * rng.standard_normal(1 << 24)).astype(
                np.complex64),
            lambda x: np.fft.fft(x).astype(np.complex64), "c2c", 2e-5)
    fft_big("rfft r2c 2^25 float32", lambda: rng.standard_normal(1 << 25).astype(np.float32),
            lambda x: np.fft.rfft(x).astype(np.complex64), "r2c", 2e-5)


def main():
    which = sys.argv[1:] or ["gemm", "fft"]
    versions()
    for name, section in (("gemm", gemm_section), ("fft", fft_section)):
        if name not in which:
            continue
        try:
            section()
        except Exception as e:  # noqa: BLE001
            FAILS.append(f"{name} section")
            print(f"FAIL {name} section: {type(e).__name__}: {e}")
            traceback.print_exc()
    return finish(FAILS, T0)


if __name__ == "__main__":
    sys.exit(main())
