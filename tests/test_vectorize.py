"""cupynum.vectorize and cupynum.fuse: the translator, its kernels, the fallback.

CI has no GPU, so the translated functors are checked where they can run: every function of
the table below is translated for its argument dtypes and its *whole CUDA kernel* (the
elementwise engine's contiguous kernel around the functor, as the CUDA backend compiles
it) is compiled with the host C++ compiler under the CUDA shim and launched through the
engine's parameter blocks, then compared with the function called on NumPy scalars of the
same dtypes, element by element (what ``numpy.vectorize`` computes for its first element:
NEP 50 types; NumPy's loop then computes in Python objects, see docs/guide/vectorize.md).
The same programs compile with NVRTC (no GPU needed).  On the GPU
(``CUPYNUM_BACKEND=cuda``), the ``gpu`` tests run the public objects.

Tolerances: exact (NaN matches NaN, signs of zeros compared) except the cases marked with
an ULP bound (transcendentals: glibc on the host, libdevice on the GPU, against NumPy's
SIMD loops; the bounds are those of tests/test_functors_host.py).
"""
from __future__ import annotations

import ctypes
import math
import warnings

import numpy as np
import pytest

import cupynum as cp
from cupynum._jit import kernel
from cupynum._jit import translate as tr
from shim import CXX, SHIM, build

# --- the table of functions ---------------------------------------------------------------

K = 3       # a closure constant
SCALE = np.float32(0.5)  # a NumPy scalar constant (strong)


def f_arith(x, y):
    return x * y + x - y / 3


def f_int_ops(x, y):
    return x // y + x % y - (x ** 2) * 3


def f_true_divide(x, y):
    return x / y


def f_bitwise(x, y):
    return (x & y) | (x ^ 7) ^ ~y + (x << 2) + (y >> 1)


def f_compare(x, y):
    return (x < y) and not (x == 0) or (x >= y * 2)


def f_branch(x):
    if x > 0.5:
        return math.sqrt(x) * 2.0
    elif x < -1:
        return -x
    else:
        return x * x


def f_ternary(x, y):
    return x if x > y else y - K


def f_early_return(x):
    if x != x:  # NaN
        return 0.0
    if x > 100:
        return 100.0
    return x + 1.0


def f_locals(x, y):
    a = x + y
    b = a * a
    c = b - x
    return c / 2


def f_for_range(x):
    s = 0
    for i in range(1, 6):
        s += x * i
    return s


def f_for_step(x):
    s = x
    for i in range(10, 0, -3):
        s = s - i
    return s


def f_while(x):
    n = 0
    while x > 1 and n < 60:
        x = x / 2
        n += 1
    return n


def f_math(x):
    return (math.exp(-x * x) + math.log1p(abs(x)) + math.atan2(x, 2.0)
            + math.floor(math.tanh(x) * 10))


def f_soft_exp(x):  # (benchmarks/probes/vectorize_probe.py's function: cpn::exp_f32)
    if x > 0.0:
        return x * math.exp(-x)
    return x * 0.5


def f_exp(x):
    return math.exp(x)


def f_numpy_funcs(x):
    return np.sqrt(np.abs(x)) + np.exp(x / 8) - np.float32(1.5) * np.sin(x)


def f_constants(x):
    return x * math.pi + np.e - K * SCALE


def f_inf_nan(x):
    if x == math.inf:
        return -np.inf
    return x if x == x else np.nan


def f_minmax(x, y):
    return max(x, y) - min(x, 0.0 * y)


def f_complex(z):
    return z * z + 1j


def f_cast(x):
    return int(math.tanh(x) * 100) + float(x > 0)  # (Python ints are unbounded: stay small)


def f_bool(x, y):
    return x and not y or (x ^ y)


def f_break(x):
    r = 0
    for i in range(100):
        if i * i > x:
            break
        if i % 2:
            continue
        r += i
    return r


def f_mixed(x, y):
    return x * y  # int8 * float32 -> float32 loop (NumPy's promotion)


def f_half(x):
    return x * x + np.float16(0.1)


def f_uint_wrap(x):
    return x - 1  # 0 - 1 wraps


def f_int_limits(x):
    return x * 2 + 1


def f_zero_div(x, y):
    return x // y + x % y


def f_float_zero_div(x, y):
    return x / y + x // y + x % y


def f_complex_inside(x):
    z = x + 2j
    return abs(z * z)  # complex in between, real arguments and result


def f_truth(x):
    if x:  # bool(x): NaN is true, complex: either part
        return x * 2
    return x + 1


def f_power(x, y):
    return x ** y


# (id, function, argument dtypes, otypes or None, ULP bound or 0)
CASES = [
    ("arith-f8", f_arith, "dd", None, 0),
    ("arith-f4", f_arith, "ff", None, 0),
    ("arith-i4", f_arith, "ii", None, 0),
    ("arith-f4-i4", f_arith, "fi", None, 0),
    ("int-ops-i8", f_int_ops, "ll", None, 0),
    ("int-ops-i2", f_int_ops, "hh", None, 0),
    ("int-ops-u1", f_int_ops, "BB", None, 0),
    ("true-divide-i4", f_true_divide, "ii", None, 0),
    ("bitwise-i4", f_bitwise, "ii", None, 0),
    ("bitwise-u8", f_bitwise, "LL", None, 0),
    ("compare-f8", f_compare, "dd", None, 0),
    ("compare-i2", f_compare, "hh", None, 0),
    ("branch-f8", f_branch, "d", None, 0),
    ("branch-f4", f_branch, "f", "f", 0),
    ("ternary-f4", f_ternary, "ff", None, 0),
    ("ternary-i8", f_ternary, "ll", None, 0),
    ("early-return-f4", f_early_return, "f", "f", 0),
    ("early-return-f8", f_early_return, "d", None, 0),
    ("locals-f4", f_locals, "ff", None, 0),
    ("locals-i8", f_locals, "ll", None, 0),
    ("for-range-f4", f_for_range, "f", None, 0),
    ("for-range-i1", f_for_range, "b", None, 0),
    ("for-step-i4", f_for_step, "i", None, 0),
    ("while-f8", f_while, "d", None, 0),
    ("math-f8", f_math, "d", None, 4),
    ("math-f4", f_math, "f", None, 4),
    # math.exp of a float32 narrowed to float32 (NEP 50): cpn::exp_f32, NumPy's bits
    ("soft-exp-f4", f_soft_exp, "f", "f", 0),
    ("exp-f4", f_exp, "f", "f", 0),
    ("exp-f4-f8", f_exp, "f", None, 4),  # (the double result kept: the double exp)
    ("numpy-funcs-f4", f_numpy_funcs, "f", None, 4),
    ("numpy-funcs-f8", f_numpy_funcs, "d", None, 4),
    ("constants-f4", f_constants, "f", None, 0),
    ("constants-i4", f_constants, "i", None, 0),
    ("inf-nan-f8", f_inf_nan, "d", None, 0),
    ("minmax-f8", f_minmax, "dd", None, 0),
    ("complex-c16", f_complex, "D", None, 2),  # (a complex product: NumPy's SIMD loop
    ("complex-c8", f_complex, "F", None, 2),   # fuses it, as cpn::multiply does)
    ("cast-f8", f_cast, "d", None, 0),
    ("bool", f_bool, "??", None, 0),
    ("break-continue-i8", f_break, "l", None, 0),
    ("mixed-i1-f4", f_mixed, "bf", None, 0),
    ("half", f_half, "e", None, 0),
    ("uint-wrap-u4", f_uint_wrap, "I", None, 0),
    ("int-limits-i8", f_int_limits, "l", None, 0),
    ("int-limits-u2", f_int_limits, "H", None, 0),
    ("zero-div-i4", f_zero_div, "ii", None, 0),
    ("zero-div-u8", f_zero_div, "LL", None, 0),
    ("float-zero-div-f8", f_float_zero_div, "dd", None, 0),
    ("float-zero-div-f4", f_float_zero_div, "ff", None, 0),
    ("power-i8", f_power, "ll", None, 0),
    ("power-f8", f_power, "dd", None, 0),
    ("otypes-i4", f_branch, "d", "i", 0),
    ("complex-inside-f8", f_complex_inside, "d", None, 4),
    ("truth-f2", f_truth, "e", None, 0),
    ("truth-c16", f_truth, "D", None, 0),
    ("truth-u2", f_truth, "H", None, 0),
]


def edge_values(c, n=64):
    """Edge values of dtype ``c`` (limits, zeros, NaN, inf) and seeded random ones."""
    dt = np.dtype(c)
    rng = np.random.default_rng(23 + ord(c))
    if dt.kind == "b":
        return np.array([False, True] * (n // 2))
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        v = [3, 1, 2, 0, 7, ii.max, ii.max - 1, ii.min, ii.min + 1, 100 % ii.max]
        if dt.kind == "i":
            v += [-1, -2, -3, -7]
        small = rng.integers(max(ii.min, -20), min(ii.max, 20), n // 2, endpoint=True)
        big = rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)
        return np.concatenate([np.array(v, dt), small.astype(dt), big])[:max(n, len(v))]
    if dt.kind == "f":
        fi = np.finfo(dt)
        v = [1.5, -0.0, 1.0, -1.0, 0.0, 2.0, -2.5, 3.0, 7.0, 100.5, -150.0, np.inf, -np.inf,
             np.nan, float(fi.tiny), float(fi.max), -float(fi.max), 1e-3]
        with np.errstate(all="ignore"):
            return np.concatenate([np.array(v).astype(dt),
                                   rng.uniform(-10, 10, n).astype(dt)])
    re = edge_values(dt.char.lower(), n)
    im = edge_values(dt.char.lower(), n)[::-1]
    out = np.empty(len(re), dt)
    out.real, out.imag = re, im
    return out


def case_inputs(chars):
    """Inputs of equal length: every pair of edge values for two arguments."""
    vals = [edge_values(c) for c in chars]
    if len(vals) == 1:
        return vals
    a, b = np.meshgrid(vals[0][:40], vals[1][:40], indexing="ij")
    return [a.ravel(), b.ravel()]


def reference(func, ins, out_dtype):
    """The function on NumPy scalars, element by element; None where it raises."""
    out = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(len(ins[0])):
            try:
                r = func(*[a[i] for a in ins])
                out.append(np.asarray(r).astype(out_dtype))
            except (ArithmeticError, ValueError):  # a Python-level error: not comparable
                out.append(None)
    return out


def out_type_for(func, chars, otypes, ins):
    if otypes:
        return np.dtype(otypes)
    with np.errstate(all="ignore"):
        return np.asarray(func(*[a[0] for a in ins])).dtype


def _translations():
    got = {}
    for cid, func, chars, otypes, _ in CASES:
        ins = case_inputs(chars)
        types = [np.dtype(c) for c in chars]
        try:
            t, _ = tr.translate(func, types, np.dtype(otypes) if otypes else None)
        except tr.NeedsOutputType:
            t, _ = tr.translate(func, types, out_type_for(func, chars, otypes, ins))
        got[cid] = (t, ins)
    return got


TRANSLATED = _translations()


def _specs(t):
    """The kernels a translation gets here: each operand an array or by value (not all)."""
    import itertools

    n = len(t.in_chars)
    return [kernel.spec(t, list(m)) for m in itertools.product([False, True], repeat=n)
            if not all(m)]


def _extra_translations():
    """Translations with weak arguments: fuse's Python scalars, vectorize's excluded ones."""
    return [tr.translate(fused_expr.func, [np.dtype("f"), float], fuse=True)[0],
            tr.translate(fused_sum.func, [np.dtype("d")], fuse=True)[0],
            tr.translate(f_excluded, [np.dtype("d"), np.dtype("d"), int])[0],
            tr.translate(f_excluded, [np.dtype("d"), np.dtype("d"), np.dtype("l")])[0]]


def _host_program():
    from test_elementwise_host import host_wrappers

    trs = [t for t, _ in TRANSLATED.values()] + _extra_translations()
    specs = list(dict.fromkeys(s for t in trs for s in _specs(t)))
    return "\n".join([SHIM, kernel.program(specs), *host_wrappers(specs)]), specs


@pytest.fixture(scope="module")
def host_lib():
    if CXX is None:
        pytest.skip("no C++ compiler (set CXX): the host build of the kernels is not tested")
    src, _ = _host_program()
    return build(src, "vectorize", ["-std=c++17", "-O1", "-ffp-contract=off",
                                    "-fno-fast-math", "-w", "-shared", "-fPIC"])


def cpu_launch(lib):
    """A contiguous kernel of a translation run on the CPU: its operands (NumPy arrays'
    data, or by-value scalars) packed in the engine's parameter block."""
    from cupynum._backends.cuda import elementwise as ew
    from cupynum._backends.cuda import elementwise_source as es

    def launch(t, ins, out):
        n = out.size
        spec = kernel.spec(t, [not isinstance(x, np.ndarray) for x in ins])
        values = []
        for x in (*ins, out):
            if isinstance(x, np.ndarray):
                values.append(x.ctypes.data)
            elif np.iscomplexobj(x):
                values += (x.real, x.imag)
            else:
                values.append(x)
        pb, pack = ew.param_block(spec)
        pack(memoryview(pb._data).cast("B"), 0, *values, n)
        getattr(lib, f"host_{es.kernel_name(spec)}")(ctypes.c_void_p(pb.address), 3, es.BLOCK)
    return launch


def run_on_host(lib, t, ins):
    ins = [np.ascontiguousarray(a.astype(np.dtype(c))) for a, c in zip(ins, t.in_chars)]
    out = np.zeros(len(ins[0]), np.dtype(t.out_char))
    cpu_launch(lib)(t, ins, out)
    return out


def _ulps(a, b, dt):
    ai = a.astype(dt).view(f"i{dt.itemsize}").astype(np.int64)
    bi = b.astype(dt).view(f"i{dt.itemsize}").astype(np.int64)
    ai = np.where(ai < 0, np.iinfo(np.int64).min - ai, ai)
    bi = np.where(bi < 0, np.iinfo(np.int64).min - bi, bi)
    return np.abs(ai - bi)


def assert_matches(got, want, ulp, what):
    dt = got.dtype
    keep = np.array([w is not None for w in want])
    assert keep.sum() >= len(want) // 2, f"{what}: too few comparable elements"
    w = np.array([x if x is not None else np.zeros((), dt) for x in want], dt)[keep]
    g = got[keep]
    if dt.kind in "biu":
        bad = np.nonzero(g != w)[0]
    else:
        parts = [(g.real, w.real), (g.imag, w.imag)] if dt.kind == "c" else [(g, w)]
        bad = np.zeros(len(g), bool)
        if dt.kind == "c" and ulp:  # normwise: |got - want| <= ulp * eps * |want|
            eps = np.finfo(g.real.dtype).eps
            with np.errstate(all="ignore"):
                err = np.abs(g.astype(complex) - w.astype(complex))
                ok = err <= ulp * eps * np.abs(w.astype(complex))
            fin = np.isfinite(g) & np.isfinite(w)
            parts, bad = [(gp[~(fin & ok)], wp[~(fin & ok)]) for gp, wp in parts], None
            g, w = g[~(fin & ok)], w[~(fin & ok)]
            bad = np.zeros(len(g), bool)
        for gp, wp in parts:
            both_nan = np.isnan(gp) & np.isnan(wp)
            if ulp:
                fin = np.isfinite(gp) & np.isfinite(wp)
                rdt = gp.dtype
                close = fin & (_ulps(gp, wp, rdt) <= ulp)
                exact = (gp == wp) & (np.signbit(gp) == np.signbit(wp))
                bad |= ~(both_nan | close | exact)
            else:
                same = (gp.view(f"u{gp.dtype.itemsize}") == wp.view(f"u{wp.dtype.itemsize}"))
                bad |= ~(both_nan | same)
        bad = np.nonzero(bad)[0]
    assert len(bad) == 0, f"{what}: {len(bad)} differ, e.g. got {g[bad[:5]]} want {w[bad[:5]]}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_kernel_on_cpu_matches_numpy_scalars(host_lib, case):
    cid, func, chars, otypes, ulp = case
    t, ins = TRANSLATED[cid]
    got = run_on_host(host_lib, t, ins)
    want = reference(func, ins, got.dtype)
    assert got.dtype == out_type_for(func, chars, otypes, ins)
    assert_matches(got, want, ulp, cid)


# --- output types: NumPy's vectorize decides them the same way -------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_output_dtype_is_numpy_vectorize_s(case):
    cid, func, chars, otypes, _ = case
    t, ins = TRANSLATED[cid]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = np.vectorize(func, otypes=otypes)(*[a[:1] for a in ins]).dtype
        except (ArithmeticError, ValueError):
            pytest.skip("the first element raises in Python")
    assert np.dtype(t.out_char) == want


def test_float64_kernels_equal_numpy_vectorize(host_lib):
    """With float64 arguments the function computes in doubles either way, so the kernel
    matches numpy.vectorize itself (inputs where Python raises left out)."""
    compared = 0
    for cid, func, chars, otypes, ulp in CASES:
        if set(chars) != {"d"} or ulp:
            continue
        t, ins = TRANSLATED[cid]
        got = run_on_host(host_lib, t, ins)
        ok = np.array([r is not None for r in reference(func, ins, got.dtype)])
        safe = [a[ok] for a in ins]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = np.vectorize(func, otypes=[got.dtype])(*safe)
            except (ArithmeticError, ValueError):
                continue
        assert_matches(got[ok], list(want), 0, cid)
        compared += 1
    assert compared >= 5


# --- NVRTC ----------------------------------------------------------------------------------

def test_kernels_compile_with_nvrtc():
    """Every kernel of the table, with array and by-value operands, in one NVRTC program
    (the program the CUDA backend compiles holds one of them)."""
    from cupynum._backends.cuda import compiler, elementwise
    from cupynum._backends.cuda import elementwise_source as es

    try:
        compiler.nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"NVRTC is not installed: {e}")
    trs = [t for t, _ in TRANSLATED.values()]
    specs = [s for t in trs for s in _specs(t)]
    c = compiler.compile_cubin(kernel.program(specs), options=elementwise.compile_options(),
                               name="cupynum_vectorize.cu")
    for spec in specs:
        assert es.kernel_name(spec).encode() in c.cubin
    t = TRANSLATED["complex-inside-f8"][0]  # complex only inside: its program alone
    alone = compiler.compile_cubin(kernel.program(_specs(t)[:1]),
                                   options=elementwise.compile_options(),
                                   name="cupynum_vectorize.cu")
    assert es.kernel_name(_specs(t)[0]).encode() in alone.cubin


def test_fused_programs_holding_a_translated_functor_compile_with_nvrtc():
    """Fusion places the functor in deeper trees (``f(a) * b`` over strided views): the
    engine's programs carry its struct, and NVRTC compiles them."""
    from cupynum._backends.cuda import compiler, elementwise
    from cupynum._backends.cuda import elementwise_source as es

    try:
        compiler.nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"NVRTC is not installed: {e}")
    user = kernel.op(TRANSLATED["branch-f4"][0])
    mul = cp.multiply._op(("f", "f", "f"))
    tree = es.Node(mul, (es.Node(user, (es.Input(0),)), es.Input(1)))
    operands = (("a", "f"), ("s", "f"), ("a", "f"))
    specs = [es.KernelSpec((tree,), operands, 2, "contig"),
             es.KernelSpec((tree,), operands, 2, "strided", 3)]
    src = es.program_source(specs)
    assert TRANSLATED["branch-f4"][0].source in src
    c = compiler.compile_cubin(src, options=elementwise.compile_options(), name="fused.cu")
    for spec in specs:
        assert es.kernel_name(spec).encode() in c.cubin


# --- what does not translate ------------------------------------------------------------------

def g_list(x):
    y = [x, x]
    return x


def helper(x):
    return x + 1


def g_call(x):
    return helper(x) * 2


def g_try(x):
    try:
        return 1 / x
    except ZeroDivisionError:
        return 0.0


def g_type_change(x):
    y = np.float32(1)
    y = x * 2.0  # float64: the variable changes type
    return y


@pytest.mark.parametrize("func, construct", [
    (g_list, "a list"), (g_call, "a call of helper"), (g_try, "try/except"),
    (g_type_change, "changes type")])
def test_untranslatable_names_the_construct_and_line(func, construct):
    with pytest.raises(tr.Untranslatable) as info:
        tr.translate(func, [np.dtype("d")])
    assert construct in str(info.value)
    lines, first = __import__("inspect").getsourcelines(func)
    assert first <= info.value.line < first + len(lines)


def test_fallback_runs_numpy_vectorize_with_a_warning():
    x = np.array([1.0, 2.0, 0.5])
    f = cp.vectorize(g_call)
    with pytest.warns(cp.VectorizeFallbackWarning, match=r"g_call.*a call of helper.*line \d+"):
        got = f(cp.asarray(x))
    assert isinstance(got, cp.ndarray)
    assert got.tolist() == np.vectorize(g_call)(x).tolist()


def test_a_source_file_edited_after_import_is_not_translated(tmp_path):
    """inspect reads the file as it is now: a function edited since it was loaded must not
    translate to the new text (the kernel would compute something else)."""
    import importlib.util
    import os

    path = tmp_path / "cpn_vectorize_edited.py"
    path.write_text("def f(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("cpn_vectorize_edited", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert tr.translate(mod.f, [np.dtype("d")])[0].out_char == "d"
    path.write_text("def f(x):\n    return x * 2\n")
    os.utime(path, (os.path.getatime(path), os.path.getmtime(path) + 10))
    with pytest.raises(tr.Untranslatable, match="changed after it was loaded"):
        tr.translate(mod.f, [np.dtype("d")])


FACTOR = 2


def f_global(x):
    return x * FACTOR


def test_changed_globals_and_closures_translate_again(monkeypatch):
    import importlib

    vz = importlib.import_module("cupynum._jit.vectorize")
    cached = vz.Cached(f_global)
    first = cached.get([np.dtype("d")])
    assert cached.get([np.dtype("d")]) is first
    monkeypatch.setattr(__import__(__name__), "FACTOR", 3)
    again = cached.get([np.dtype("d")])
    assert again is not first and "3LL" in again.source and "2LL" in first.source

    def make(k):
        return lambda x: x * k
    g = make(5)
    cached = vz.Cached(g)
    assert "5LL" in cached.get([np.dtype("d")]).source
    g.__closure__[0].cell_contents = 7
    assert "7LL" in cached.get([np.dtype("d")]).source


# --- the public objects on every backend -------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_vectorize_matches_numpy(case):
    cid, func, chars, otypes, ulp = case
    _, ins = TRANSLATED[cid]
    # (numpy.vectorize computes in Python ints, unbounded: 3 ** (2**63 - 1) would not end)
    ins = [a[:60] % 13 if a.dtype.kind in "iu" else a[:60] for a in ins]
    # where Python raises (1.0 / 0.0, a result out of the output's range), so would NumPy's loop
    ok = _python_ok(func, ins, out_type_for(func, chars, otypes, ins))
    if ok.sum() < 10:  # (uint8 x - x**2: negative Python ints; the kernel test has it)
        pytest.skip("numpy.vectorize's Python-object results do not fit the output dtype")
    ins = [a[ok] for a in ins]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.vectorize(func, otypes=otypes)(*ins)
        got = cp.vectorize(func, otypes=otypes)(*[cp.asarray(a) for a in ins])
    assert isinstance(got, cp.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    ref = reference(func, ins, want.dtype)
    if _on_device():
        ulp = max(ulp, GPU_ULP.get(cid, 0))
    assert_matches(cp.asnumpy(got), ref if _on_device() else list(want), ulp, cid)


# The GPU's math library against NumPy's where it is not correctly rounded: CUDA's double
# pow is within 2 ulp (the CUDA C++ Programming Guide's table of maximum errors).
GPU_ULP = {"power-f8": 2}


def _python_ok(func, ins, out_dtype):
    """Where the function runs on Python objects (and on NumPy scalars) without raising."""
    ok = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(len(ins[0])):
            try:
                np.array(func(*[a[i].item() for a in ins]), dtype=out_dtype)
                func(*[a[i] for a in ins])
                ok.append(True)
            except (ArithmeticError, ValueError):
                ok.append(False)
    return np.array(ok)


def _on_device():
    """Whether a CUDA device runs the translated kernels (whatever the arrays' placement)."""
    from cupynum import _backends
    return bool(_backends.for_side("device").cuda_memory)


def f_excluded(x, y, k):
    return x * y + k


def test_vectorize_broadcasts_scalars_and_excluded():
    f = f_excluded
    x = np.arange(6.0).reshape(2, 3)
    v = cp.vectorize(f, excluded={2})
    got = v(cp.asarray(x), 2.5, 4)
    np.testing.assert_array_equal(cp.asnumpy(got), np.vectorize(f, excluded={2})(x, 2.5, 4))
    got0 = cp.vectorize(lambda x: x + 1)(3)
    assert got0.shape == () and int(got0) == 4


def test_vectorize_signature_and_decorator_forms():
    @cp.vectorize(otypes=[np.float32])
    def half(x):
        return x / 2

    got = half(cp.arange(4))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(cp.asnumpy(got), np.arange(4) / 2)
    v = cp.vectorize(lambda a: a.sum(), signature="(n)->()")
    np.testing.assert_array_equal(cp.asnumpy(v(cp.arange(6.0).reshape(2, 3))), [3.0, 12.0])
    assert isinstance(v, np.vectorize)


def test_empty_inputs_follow_numpy():
    with pytest.raises(ValueError):
        cp.vectorize(f_arith)(cp.zeros(0), cp.zeros(0))
    got = cp.vectorize(f_arith, otypes="d")(cp.zeros(0), cp.zeros(0))
    assert got.shape == (0,) and got.dtype == np.float64


# --- fuse --------------------------------------------------------------------------------------

@cp.fuse
def fused_expr(x, y):
    return cp.sqrt(x * x + y * y) + 1.5


@cp.fuse(kernel_name="sq_sum")
def fused_sum(x):
    return cp.sum(x * x, axis=0)


def test_fuse_translates_cupynum_ops():
    t, _ = tr.translate(fused_expr.func, [np.dtype("f"), float], fuse=True)
    assert "cpn::sqrt" in t.source and t.out_char == "f"  # the Python float stays weak
    t, _ = tr.translate(fused_sum.func, [np.dtype("d")], fuse=True)
    assert t.reduction is not None and t.reduction[2] == {"axis": 0}


def test_fuse_matches_the_ops():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    got = fused_expr(cp.asarray(x), 2.0)
    want = np.sqrt(x * x + np.float32(2.0) * 2.0) + 1.5
    assert got.dtype == want.dtype
    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-6)
    s = fused_sum(cp.asarray(x))
    np.testing.assert_allclose(cp.asnumpy(s), (x * x).sum(axis=0), rtol=1e-6)
    assert fused_sum.__name__ == "fused_sum"


# --- the GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_one_kernel_per_call(device_placement):
    if not _on_device():
        pytest.skip("needs CUPYNUM_BACKEND=cuda")
    from cupynum.testing import device_counters

    x = cp.asarray(np.linspace(-5, 5, 1000, dtype=np.float32))
    f = cp.vectorize(f_branch, otypes="f")
    f(x)
    before = device_counters()["launches"]
    f(x)
    assert device_counters()["launches"] - before == 1
    fused_expr(x, 2.0)
    before = device_counters()["launches"]
    fused_expr(x, 2.0)
    assert device_counters()["launches"] - before == 1


@pytest.mark.gpu
def test_gpu_host_arrays_run_the_kernel_and_come_back():
    """Under placement ``auto`` a small array lives on the host: the translated kernel runs
    on the device all the same (one launch instead of a Python call per element), and the
    small result is back on the host."""
    if not _on_device():
        pytest.skip("needs CUPYNUM_BACKEND=cuda")
    from cupynum.testing import device_counters

    x = np.linspace(-5, 5, 1000, dtype=np.float32)
    f = cp.vectorize(f_branch, otypes="f")
    a = cp.asarray(x)
    f(a)
    before = device_counters()["launches"]
    got = f(a)
    assert device_counters()["launches"] - before == 1
    if cp.placement(a) == "host":  # (CUPYNUM_PLACEMENT=device keeps everything there)
        assert cp.placement(got) == "host"
    assert_matches(cp.asnumpy(got), reference(f_branch, [x], np.float32), 1, "host inputs")


@pytest.mark.gpu
def test_gpu_vectorize_fuses_with_the_ops_around_it(fusion_arrays_on_device,
                                                    fused_kernels_at_once):
    """A vectorized function is an op of the fusion graph: ``f(a * b) * 2 + b`` is one
    kernel, bit for bit what the ops give one by one, over strided views too; a sum of it
    reads the inputs once (the functor in the reduction's prologue)."""
    if not _on_device():
        pytest.skip("needs CUPYNUM_BACKEND=cuda")
    from cupynum.testing import device_counters

    f = cp.vectorize(f_branch, otypes="f")
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, (64, 130)).astype(np.float32)
    y = rng.uniform(-3, 3, (64, 130)).astype(np.float32)
    a, b = cp.asarray(x), cp.asarray(y)

    def expr(a, b):
        return f(a * b) * np.float32(2) + b

    with cp.errstate(all="ignore"):
        eager = cp.asnumpy(f(cp.asarray(cp.asnumpy(a * b))))  # the functor alone, stored
        want = eager * np.float32(2) + y
        expr(a, b).get()
        before = device_counters()["launches"]
        got = expr(a, b).get()
        assert device_counters()["launches"] - before == 1
        np.testing.assert_array_equal(got, want)
        view = expr(a[:, ::2], b[::-1, 1::2]).get()  # strided and negative-stride views
        with np.errstate(all="ignore"):
            ref = (cp.asnumpy(f(cp.asarray(x[:, ::2] * y[::-1, 1::2]))) * np.float32(2)
                   + y[::-1, 1::2])
        np.testing.assert_array_equal(view, ref)
        total = f(a * b).sum(axis=1)
        before = device_counters()["launches"]
        total = f(a * b).sum(axis=1).get()
        assert device_counters()["launches"] - before <= 2  # (the fused reduction's passes)
        np.testing.assert_allclose(total, eager.sum(axis=1), rtol=1e-5)


# --- the kernel cache: a second process compiles nothing -------------------------------------

def test_second_process_finds_the_cubin(tmp_path):
    """The program text is the same in a fresh process (names are content hashes), so its
    cache key is too: a fresh cache over the same folder loads the cubin from disk."""
    import subprocess
    import sys

    from cupynum._backends.cuda import compiler, elementwise

    try:
        compiler.nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"NVRTC is not installed: {e}")
    t, _ = TRANSLATED["branch-f4"]
    src = kernel.program([kernel.spec(t, [False])])
    code = ("import sys; sys.path[:0] = ['tests', '.']; import test_vectorize as T; "
            "from cupynum._jit import kernel; t = T.TRANSLATED['branch-f4'][0]; "
            "sys.stdout.write(kernel.program([kernel.spec(t, [False])]))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=str(__import__("shim").ROOT), check=True).stdout
    assert other == src
    opts = elementwise.compile_options()
    first = compiler.KernelCache(tmp_path)
    first.compile(src, options=opts, name="cupynum_vectorize.cu")
    assert first.stats["compiles"] == 1
    second = compiler.KernelCache(tmp_path)  # (what a new process opens)
    second.compile(other, options=opts, name="cupynum_vectorize.cu")
    assert second.stats["compiles"] == 0 and second.stats["disk_hits"] == 1


# --- the CUDA path of the public objects, its kernels run on the CPU ----------------------------

class _DeviceStandIn:
    """The device backend as vectorize and fuse see it, on the host: arrays are allocated by
    the host backend, and ``elementwise`` runs the op's kernel compiled for the CPU over
    C-contiguous copies of its operands (a launch of size 0 launches nothing, as the
    engine's).  ``launched``: the names of the kernels run."""

    cuda_memory = True

    def __init__(self, lib, translations):
        from cupynum import _backends

        self.lib, self.translations, self.launched = lib, translations, []
        self.alloc = _backends.host_backend().alloc

    def elementwise(self, op, ins, outs):
        from cupynum._backends.cuda import elementwise_source as es

        out = outs[0]
        if out.size == 0:
            return
        t = self.translations[op.functor]
        args = [np.ascontiguousarray(cp.asnumpy(x)).reshape(-1) if hasattr(x, "_buf") else x
                for x in ins]
        res = np.empty(out.size, out.dtype)
        self.launched.append(es.kernel_name(kernel.spec(t, [not hasattr(x, "_buf")
                                                            for x in ins])))
        cpu_launch(self.lib)(t, args, res)
        out[...] = cp.asarray(res.reshape(out.shape))


@pytest.fixture
def kernel_path(monkeypatch, host_lib):
    """vectorize and fuse believe there is a CUDA device: their ops go to a stand-in device
    backend whose kernels (the ones NVRTC compiles for the GPU) are compiled for the CPU
    and launched through the engine's parameter blocks.  Returns the names of the kernels
    launched."""
    if _on_device():  # (the CPU kernels would read device addresses)
        pytest.skip("the CPU stand-in runs on the host and simulated backends only")
    import importlib
    import types

    fz = importlib.import_module("cupynum._jit.fuse")  # (the package's names are the objects)
    vz = importlib.import_module("cupynum._jit.vectorize")
    translations = {}
    real_op = kernel.op

    def op(t):
        translations[t.name] = t
        return real_op(t)

    monkeypatch.setattr(kernel, "op", op)
    device = _DeviceStandIn(host_lib, translations)
    stand_in = types.SimpleNamespace(for_arrays=lambda *a: device, for_new=lambda n: device,
                                     for_side=lambda side: device, place=lambda a, where: None,
                                     DEVICE="device", HOST="host")
    monkeypatch.setattr(vz, "_backends", stand_in)
    monkeypatch.setattr(fz, "_backends", stand_in)
    return device.launched


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_vectorize_kernel_path(kernel_path, case):
    cid, func, chars, otypes, ulp = case
    t, ins = TRANSLATED[cid]
    got = cp.vectorize(func, otypes=otypes)(*[cp.asarray(a) for a in ins])
    assert len(kernel_path) == 1 and t.name in kernel_path[0]
    assert got.dtype == np.dtype(t.out_char) and got.shape == ins[0].shape
    assert_matches(cp.asnumpy(got), reference(func, ins, got.dtype), ulp, cid)


def test_kernel_path_output_type_from_the_first_element(kernel_path):
    x = edge_values("f")  # f_early_return returns a Python float or a float32
    got = cp.vectorize(f_early_return)(cp.asarray(x))
    assert got.dtype == np.float32 and len(kernel_path) == 1
    assert TRANSLATED["early-return-f4"][0].name in kernel_path[0]
    assert_matches(cp.asnumpy(got), reference(f_early_return, [x], np.float32), 0, "first")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the reference's inf * 0)
def test_kernel_path_scalars_broadcasting_and_views(kernel_path):
    x = edge_values("d")[:24].reshape(4, 6)
    v = cp.vectorize(f_minmax)
    got = v(2.5, cp.asarray(x)[:, ::2])  # a Python float by value, a strided view
    want = np.array([f_minmax(np.float64(2.5), e) for e in x[:, ::2].ravel()]).reshape(4, 3)
    assert_matches(cp.asnumpy(got).ravel(), list(want.ravel()), 0, "scalars")
    row = cp.asarray(x[0])
    got = v(cp.asarray(x[:, :1]), row)  # (4, 1) with (6,): broadcast to (4, 6)
    want = np.array([[f_minmax(a, b) for b in x[0]] for a in x[:, 0]])
    assert got.shape == (4, 6)
    assert_matches(cp.asnumpy(got).ravel(), list(want.ravel()), 0, "broadcast")
    assert len(kernel_path) == 2


def test_kernel_path_excluded_python_scalar_is_weak(kernel_path):
    x = np.arange(6.0, dtype=np.float64).reshape(2, 3)
    got = cp.vectorize(f_excluded, excluded={2})(cp.asarray(x), 2.5, 4)
    assert len(kernel_path) == 1 and got.dtype == np.float64
    np.testing.assert_array_equal(cp.asnumpy(got), x * 2.5 + 4)
    # NumPy excludes by name only keyword arguments: a positional 4 is vectorized (int64)
    got = cp.vectorize(f_excluded, excluded={"k"})(cp.asarray(x), 2.5, 4)
    assert len(kernel_path) == 2  # (the same functor: x * y + k is float64 either way)
    np.testing.assert_array_equal(cp.asnumpy(got),
                                  np.vectorize(f_excluded, excluded={"k"})(x, 2.5, 4))


def test_kernel_path_empty_inputs(kernel_path):
    with pytest.raises(ValueError, match="size 0"):
        cp.vectorize(f_arith)(cp.zeros(0), cp.zeros(0))
    got = cp.vectorize(f_arith, otypes="d")(cp.zeros((0, 3)), cp.zeros(3))
    assert got.shape == (0, 3) and got.dtype == np.float64 and kernel_path == []


def test_kernel_path_untranslatable_warns_and_runs_numpy(kernel_path):
    x = np.array([1.0, 2.5])
    with pytest.warns(cp.VectorizeFallbackWarning, match="a list"):
        got = cp.vectorize(g_list)(cp.asarray(x))
    assert kernel_path == []
    np.testing.assert_array_equal(cp.asnumpy(got), x)


def test_fuse_kernel_path(kernel_path):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    got = fused_expr(cp.asarray(x), 2.0)
    want = np.array([fused_expr.func(e, 2.0) for e in x.ravel()], np.float32).reshape(3, 4)
    assert got.dtype == np.float32 and len(kernel_path) == 1
    assert_matches(cp.asnumpy(got).ravel(), list(want.ravel()), 0, "fuse")
    xd = x.astype(np.float64)
    s = fused_sum(cp.asarray(xd))
    assert len(kernel_path) == 2 and s.shape == (4,)
    np.testing.assert_allclose(cp.asnumpy(s), (xd * xd).sum(axis=0), rtol=1e-15)
