"""The CUDA functors in kernels/, compiled for the CPU, against NumPy on edge values.

CI has no GPU, so on the host backend NumPy computes every value and a wrong CUDA functor
would go unnoticed.  This test compiles the ``__host__ __device__`` functors with the
machine's C++ compiler (the headers build as plain C++17: CPN_HD expands to nothing) into
one driver that, for every table ufunc and each of its type loops, loads operands the way
the code generator does (storage type -> ``cpn::cast`` -> compute type, float for
float16), calls ``cpn::<functor>{}`` and casts the results back; plus every ``cpn::cast``
between two dtypes.  The driver is built once per session (cached by content hash in the
temp directory) and run once; pytest then compares each case with NumPy.

Tolerances (internals.md principle 1):
  * bool, integer, comparison, bitwise results and casts: exact.
  * float results of correctly rounded or exact operations (EXACT_FLOAT: + - * / sqrt,
    rounding, fmod/remainder/floor_divide/divmod, frexp/ldexp/modf, nextafter, spacing,
    copysign, min/max, ...): bit-exact, signs of zeros included (any NaN matches any NaN).
  * float transcendentals: float64 and float32 <= 4 ULP, float16 <= 1 ULP.  The host
    functors call glibc; NumPy calls its SIMD/SVML kernels, documented at <= 4 ULP (its
    float16 loops compute in float32 and round, so they agree to the half ULP).
  * complex results: NumPy's own formulas of correctly rounded operations (EXACT_COMPLEX:
    + - / reciprocal, min/max, ...) exact; those with one fused product or one hypot
    (CLOSE_COMPLEX: multiply, square, sign) <= 2 ULP normwise; everything else <= 8 ULP
    (COMPLEX_ULP), per component or normwise (against the larger component), with
    infinities, NaNs and exact zeros (and their signs) placed exactly.  NumPy uses glibc's
    C99 complex functions; ours are independent implementations (Hull et al. for
    arcsin/arccos, compensated |z|^2-1 for log and arctanh), hence a tolerance (3 ULP seen
    on glibc 2.36).  Power is exp(b*log(a)) in both: its tolerance grows with |b*log(a)|
    (see _power_tolerance).
The same cases, run as CUDA kernels on an H200 (libdevice instead of glibc), pass with the
same tolerances (checked by hand: a GPU needs the CUDA backend, not this test).
Skipped (not failed) when no C++ compiler is found.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

from shim import KERNELS, _ops  # _ops: loaded on its own if cupynum is mid-edit

CHARS = "?bBhHiIlLefdFD"  # one char per supported dtype
CXXFLAGS = ["-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math", "-w"]

EXACT_FLOAT = {
    "add", "subtract", "multiply", "divide", "sqrt", "rint", "floor", "ceil", "trunc",
    "fmod", "remainder", "floor_divide", "divmod", "fabs", "absolute", "negative",
    "positive", "sign", "square", "reciprocal", "maximum", "minimum", "fmax", "fmin",
    "copysign", "nextafter", "spacing", "frexp", "ldexp", "modf", "heaviside", "isnan",
    "isinf", "isfinite", "signbit", "conjugate", "deg2rad", "rad2deg", "radians", "degrees",
}
# complex ops whose NumPy result is a fixed formula of correctly rounded operations.
EXACT_COMPLEX = {"add", "subtract", "negative", "positive", "conjugate", "rint", "divide",
                 "reciprocal", "maximum", "minimum", "fmax", "fmin"}
# Fixed formulas with one libm call or one fused multiply-add whose NumPy evaluation
# depends on the code path: sign (z / hypot(z): the libm's hypot rounding), multiply and
# square (NumPy's SIMD loops fuse a product, its scalar loops do not; we fuse, like the
# SIMD loops): normwise 2 ULP.
CLOSE_COMPLEX = {"multiply", "square", "sign"}
# NumPy's complex log1p is log(hypot(1 + x, y)) + i atan2(y, 1 + x): its real part carries
# an absolute error of a few ulp of 1 (not of the result), so it is compared normwise
# against max(|result|, 1).
COMPLEX_SCALE_FLOOR = {"log1p": 1.0}
FLOAT_ULP = {"e": 1, "f": 4, "d": 4}
COMPLEX_ULP = 8
# NumPy leaves the sign of a zero result of max/min on ties (+0 vs -0) to the code path
# (SIMD vs scalar loops differ), so there the sign is not compared.
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin"}


# --------------------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------------------
def _cases():
    cases = []
    for row in _ops.UFUNCS:
        for loop in _ops.type_loops(row.name):
            cases.append(("ufunc", row, loop))
    for s in CHARS:
        for d in CHARS:
            cases.append(("cast", None, (s, d)))
    return cases


CASES = _cases()


def _case_id(case):
    kind, row, loop = case
    return f"{row.name}-{''.join(loop)}" if kind == "ufunc" else f"cast-{loop[0]}{loop[1]}"


# --------------------------------------------------------------------------------------
# the C++ driver
# --------------------------------------------------------------------------------------
_DRIVER_HEAD = r"""
#include "cpn/complex.cuh"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

template <class T> static T ld(const char* p, long i) {
  T v;
  std::memcpy(&v, p + i * (long)sizeof(T), sizeof(T));
  return v;
}
template <class T> static void st(char* p, long i, T v) {
  std::memcpy(p + i * (long)sizeof(T), &v, sizeof(T));
}

// Each runner reads n elements per input (inputs one after the other) and writes n per
// output, converting like the code generator: storage S -> compute C -> functor -> C -> S.
template <class F, class S0, class C0, class SR, class CR>
void u11(const char* in, char* out, long n) {
  for (long i = 0; i < n; ++i) {
    CR r = F{}(cpn::cast<C0>(ld<S0>(in, i)));
    st<SR>(out, i, cpn::cast<SR>(r));
  }
}
template <class F, class S0, class C0, class S1, class C1, class SR, class CR>
void b11(const char* in, char* out, long n) {
  const char* in1 = in + n * (long)sizeof(S0);
  for (long i = 0; i < n; ++i) {
    CR r = F{}(cpn::cast<C0>(ld<S0>(in, i)), cpn::cast<C1>(ld<S1>(in1, i)));
    st<SR>(out, i, cpn::cast<SR>(r));
  }
}
template <class F, class S0, class C0, class SR0, class CR0, class SR1, class CR1>
void u12(const char* in, char* out, long n) {
  char* out1 = out + n * (long)sizeof(SR0);
  for (long i = 0; i < n; ++i) {
    CR0 r0;
    CR1 r1;
    F{}(cpn::cast<C0>(ld<S0>(in, i)), r0, r1);
    st<SR0>(out, i, cpn::cast<SR0>(r0));
    st<SR1>(out1, i, cpn::cast<SR1>(r1));
  }
}
template <class F, class S0, class C0, class S1, class C1, class SR0, class CR0, class SR1,
          class CR1>
void b12(const char* in, char* out, long n) {
  const char* in1 = in + n * (long)sizeof(S0);
  char* out1 = out + n * (long)sizeof(SR0);
  for (long i = 0; i < n; ++i) {
    CR0 r0;
    CR1 r1;
    F{}(cpn::cast<C0>(ld<S0>(in, i)), cpn::cast<C1>(ld<S1>(in1, i)), r0, r1);
    st<SR0>(out, i, cpn::cast<SR0>(r0));
    st<SR1>(out1, i, cpn::cast<SR1>(r1));
  }
}
template <class S, class D> void cst(const char* in, char* out, long n) {
  for (long i = 0; i < n; ++i) st<D>(out, i, cpn::cast<D>(ld<S>(in, i)));
}

typedef void (*runner)(const char*, char*, long);
"""

_DRIVER_MAIN = r"""
int main(int argc, char** argv) {
  if (argc != 3) return 2;
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) return 3;
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  std::vector<char> buf(size);
  if (std::fread(buf.data(), 1, size, f) != (size_t)size) return 4;
  std::fclose(f);
  long long ncases;
  std::memcpy(&ncases, buf.data(), 8);
  if (ncases != NCASES) return 5;
  const long long* ns = (const long long*)(buf.data() + 8);
  const char* in = buf.data() + 8 + 8 * ncases;
  long long outsize = 0;
  for (long long k = 0; k < ncases; ++k) outsize += ns[k] * OUT_BYTES[k];
  std::vector<char> obuf(outsize > 0 ? outsize : 1);
  char* out = obuf.data();
  for (long long k = 0; k < ncases; ++k) {
    RUNNERS[k](in, out, (long)ns[k]);
    in += ns[k] * IN_BYTES[k];
    out += ns[k] * OUT_BYTES[k];
  }
  FILE* g = std::fopen(argv[2], "wb");
  if (!g) return 6;
  std::fwrite(obuf.data(), 1, outsize, g);
  std::fclose(g);
  return 0;
}
"""


def _ct(c):
    return _ops.CPP_TYPES[c]


def _runner(case):
    kind, row, loop = case
    if kind == "cast":
        return f"cst<{_ct(loop[0])}, {_ct(loop[1])}>"
    nin = row.nin
    f = f"cpn::{row.functor}"
    types = []
    for c in loop:
        types += [_ct(c), _ops.compute_ctype(row, c)]
    nout = len(loop) - nin
    return f"{'ub'[nin - 1]}1{nout}<{f}, {', '.join(types)}>"


def _bytes(chars):
    return sum(np.dtype(c).itemsize for c in chars)


def driver_source():
    runners, inb, outb = [], [], []
    for case in CASES:
        kind, row, loop = case
        nin = 1 if kind == "cast" else row.nin
        runners.append(_runner(case))
        inb.append(_bytes(loop[:nin]))
        outb.append(_bytes(loop[nin:]))
    return (_DRIVER_HEAD
            + f"static const long long NCASES = {len(CASES)};\n"
            + "static const runner RUNNERS[] = {\n" + ",\n".join(runners) + "};\n"
            + "static const long long IN_BYTES[] = {" + ", ".join(map(str, inb)) + "};\n"
            + "static const long long OUT_BYTES[] = {" + ", ".join(map(str, outb)) + "};\n"
            + _DRIVER_MAIN)


def _compiler():
    for cand in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        if cand and shutil.which(cand):
            return shutil.which(cand)
    return None


def build_driver():
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (set CXX): the host build of kernels/ is not tested")
    src = driver_source()
    h = hashlib.sha256(src.encode())
    for p in sorted(KERNELS.rglob("*.cuh")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(" ".join([cxx] + CXXFLAGS).encode())
    cache = Path(tempfile.gettempdir()) / f"cupynum-functors-{h.hexdigest()[:16]}"
    exe = cache / "driver"
    if exe.exists():
        return exe
    cache.mkdir(parents=True, exist_ok=True)
    cpp = cache / f"driver.{os.getpid()}.cpp"  # per process: xdist workers build in parallel
    cpp.write_text(src)
    tmp = cache / f"driver.{os.getpid()}.tmp"
    cmd = [cxx, *CXXFLAGS, f"-I{KERNELS}", str(cpp), "-o", str(tmp)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail("host build of kernels/ failed:\n" + " ".join(cmd) + "\n"
                    + res.stderr[-20000:], pytrace=False)
    os.replace(tmp, exe)
    return exe


# --------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------
_RNG_SEED = 20240601


def _float_values(dt, small=False):
    dt = np.dtype(dt)
    fi = np.finfo(dt)
    pi = np.pi
    if small:
        v = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -7.25, 2.0, 10.0, 1e-3, 0.999, 1e10,
             -1e10, np.inf, -np.inf, np.nan, fi.tiny, fi.smallest_subnormal, fi.max]
        with np.errstate(all="ignore"):
            return np.array(v, dtype=np.float64).astype(dt)
    v = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.25, 2.0, -2.0,
         3.0, 10.0, -7.25, 100.5, 0.1, 0.999, 1.0001, 1e-3, 1e-8, -1e-8, np.inf, -np.inf,
         np.nan, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, fi.max,
         -fi.max, fi.eps, pi, -pi / 2, pi / 4, 3 * pi / 2, 1e22, 88.72, 89.5, 709.78, 710.0,
         -745.2, -103.0, 1e10, -1e10, 1e19, -1e19, 2.0**31, -(2.0**31), 2.0**63, 2.0**64,
         3e9, -3e9, 65504.0, 65520.0, 6e4, 70000.5, 255.5, -129.0, 1e300, 1e-300, 20.0,
         -30.0, 0.7, 0.6, 1.3]
    with np.errstate(all="ignore"):
        a = np.array(v, dtype=np.float64).astype(dt)
        near = np.array([0.5, 1.5, 2.5, -0.5, 1.0, -1.0], dtype=dt)
        a = np.concatenate([a, np.nextafter(near, dt.type(-np.inf)),
                            np.nextafter(near, dt.type(np.inf))])
    rng = np.random.default_rng(_RNG_SEED)
    mag = 10.0 ** rng.uniform(-8, 8, 40) * rng.choice([-1.0, 1.0], 40)
    uni = rng.uniform(-10, 10, 40)
    with np.errstate(all="ignore"):
        return np.concatenate([a, mag.astype(dt), uni.astype(dt)])


def _int_values(dt, small=False):
    dt = np.dtype(dt)
    ii = np.iinfo(dt)
    bits = dt.itemsize * 8
    v = {0, 1, 2, 3, 7, 8, 100, ii.max, ii.max - 1, bits - 1, bits, bits + 1}
    if not small:
        v |= {5, 12, 63, 64, 65, 255, 256, 1000, 12345, 2**31 - 1, 2**31, 2**32, 2**62}
    if ii.min < 0:
        v |= {-1, -2, -3, -7, -8, -100, ii.min, ii.min + 1}
        if not small:
            v |= {-5, -12, -64, -1000, -12345}
    v = sorted(x for x in v if ii.min <= x <= ii.max)
    rng = np.random.default_rng(_RNG_SEED + bits)
    r = rng.integers(ii.min, ii.max, 8 if small else 24, dtype=dt, endpoint=True)
    return np.concatenate([np.array(v, dtype=dt), r])


def _complex_values(dt, small=False):
    dt = np.dtype(dt)
    real = np.dtype(dt.char.lower())
    fi = np.finfo(real)
    if small:
        comps = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, np.nan]
    else:
        comps = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.999, 1e-20, -1e-20, 1e20, -1e20,
                 fi.tiny, np.inf, -np.inf, np.nan, 1e-5, 30.0, -800.0]
    c = np.array(comps, dtype=real)
    re, im = np.meshgrid(c, c)
    grid = np.empty(re.size, dtype=np.complex128)
    grid.real, grid.imag = re.ravel(), im.ravel()  # (re + 1j*im would turn 0*inf into nan)
    vals = [grid]
    if not small:
        special = [0.6 + 0.8j, 0.8 - 0.6j, 1 + 1e-9j, 1 - 1e-9j, -1 + 1e-7j, 1e-9 + 1j,
                   -1e-9 - 1j, 1.0000001 + 0j, 0.9999999 + 1e-300j, 1e30 + 1e30j,
                   1e-30 + 1e-30j, 3e-9 - 2e-9j, 1e8 + 1j, 1 + 1e8j, 0.5 + 0.5j, -0.3 + 2j,
                   2 - 0.3j, 710 + 1j, -710 + 1j, 400 + 2j, 1e-310 + 1e-310j, 0.7 + 0.7j,
                   1e15 + 1e-15j, 5e-324 + 1j, 1 + 5e-324j]
        vals.append(np.array(special))
        rng = np.random.default_rng(_RNG_SEED + 7)
        mag = 10.0 ** rng.uniform(-6, 6, 80)
        ang = rng.uniform(-np.pi, np.pi, 80)
        vals.append(mag * np.exp(1j * ang))
        vals.append(rng.uniform(-3, 3, 60) + 1j * rng.uniform(-3, 3, 60))
    with np.errstate(all="ignore"):
        return np.concatenate(vals).astype(dt)


def values(c, small=False):
    dt = np.dtype(c)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        return _int_values(dt, small)
    if dt.kind == "f":
        return _float_values(dt, small)
    return _complex_values(dt, small)


def _half_rounding_probes(c):
    """Midpoints between adjacent float16 values (ties to even) and one float32/float64
    step either side, over the whole float16 range including subnormals and overflow."""
    h = np.arange(0, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)
    mid = (h[:-1] + h[1:]) / 2
    mid = np.concatenate([mid, [65520.0, 2.0**-25, 2.0**-26]])
    real = np.dtype(np.dtype(c).char.lower())
    m = mid.astype(real)
    with np.errstate(all="ignore"):
        p = np.concatenate([m, np.nextafter(m, real.type(0)), np.nextafter(m, real.type(np.inf))])
    p = np.concatenate([p, -p])
    return p.astype(c)


def case_inputs(case):
    kind, row, loop = case
    if kind == "cast":
        if loop[0] == "e":  # every float16 bit pattern
            return [np.arange(65536, dtype=np.uint16).view(np.float16)]
        if loop[1] == "e" and loop[0] in "fdFD":  # rounding: ties and their neighbours
            return [np.concatenate([values(loop[0]), _half_rounding_probes(loop[0])])]
        return [values(loop[0])]
    nin = row.nin
    if nin == 1:
        return [values(loop[0])]
    name = row.name
    a, b = values(loop[0], small=True), values(loop[1], small=True)
    if name == "ldexp":
        b = np.array([-1100, -1075, -1074, -150, -149, -126, -25, -24, -14, -1, 0, 1, 2, 10,
                      15, 16, 127, 128, 1023, 1024, 1100], dtype=loop[1])
        if np.dtype(loop[1]).itemsize == 8:
            b = np.concatenate([b, np.array([2**40, -(2**40), 2**31, -(2**31) - 1], b.dtype)])
    A, B = np.meshgrid(a, b, indexing="ij")
    A, B = A.ravel(), B.ravel()
    rng = np.random.default_rng(_RNG_SEED + len(name))
    full_a, full_b = values(loop[0]), values(loop[1])
    if name != "ldexp":
        ia = rng.integers(0, len(full_a), 300)
        ib = rng.integers(0, len(full_b), 300)
        A = np.concatenate([A, full_a[ia]])
        B = np.concatenate([B, full_b[ib]])
    if name == "power" and np.dtype(loop[1]).kind == "i":
        B = np.where(B < 0, ~B, B)  # NumPy raises for negative integer exponents
    return [A, B]


# --------------------------------------------------------------------------------------
# run once, compare per case
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def driver_results():
    exe = build_driver()
    inputs = [case_inputs(c) for c in CASES]
    ns = [len(x[0]) for x in inputs]
    with tempfile.TemporaryDirectory() as d:
        fin, fout = Path(d) / "in.bin", Path(d) / "out.bin"
        with open(fin, "wb") as f:
            f.write(np.array([len(CASES)] + ns, dtype=np.int64).tobytes())
            for (kind, row, loop), args in zip(CASES, inputs):
                nin = 1 if kind == "cast" else row.nin
                for c, arr in zip(loop[:nin], args):
                    f.write(np.ascontiguousarray(arr, dtype=c).tobytes())
        res = subprocess.run([str(exe), str(fin), str(fout)], capture_output=True)
        assert res.returncode == 0, f"driver failed ({res.returncode}): {res.stderr[-2000:]}"
        raw = fout.read_bytes()
    out, pos = {}, 0
    for case, args, n in zip(CASES, inputs, ns):
        kind, row, loop = case
        nin = 1 if kind == "cast" else row.nin
        outs = []
        for c in loop[nin:]:
            dt = np.dtype(c)
            outs.append(np.frombuffer(raw, dtype=dt, count=n, offset=pos).copy())
            pos += n * dt.itemsize
        out[_case_id(case)] = (args, outs)
    assert pos == len(raw)
    return out


def numpy_results(case, args):
    kind, row, loop = case
    with np.errstate(all="ignore"):
        if kind == "cast":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                return [args[0].astype(loop[1])]
        uf = row.ufunc
        try:
            r = uf(*args, signature=tuple(np.dtype(c) for c in loop))
        except TypeError:  # NumPy spells the mixed int64/uint64 loops 'qQ->?'
            r = uf(*args)
        return list(r) if isinstance(r, tuple) else [r]


def _ordered(x):
    """Float bits mapped to integers that are monotonic in value (+0 and -0 both 0)."""
    dt = x.dtype
    it = {2: np.int16, 4: np.int32, 8: np.int64}[dt.itemsize]
    i = x.view(it).astype(np.int64)
    mask = np.int64((1 << (8 * dt.itemsize - 1)) - 1)
    return np.where(i < 0, -(i & mask), i)


def _ulp_dist(got, exp):
    return np.abs(_ordered(got) - _ordered(exp))


def _float_mismatch(got, exp, ulps, zero_sign=True):
    """Boolean mask of elements where got and exp disagree beyond ``ulps``."""
    gn, en = np.isnan(got), np.isnan(exp)
    bad = gn != en
    both = ~gn & ~en
    ginf, einf = np.isinf(got), np.isinf(exp)
    bad |= both & (ginf | einf) & (got != exp)
    fin = both & ~ginf & ~einf
    with np.errstate(all="ignore"):
        bad |= fin & (_ulp_dist(got, exp) > ulps)
    if zero_sign:
        z = fin & (got == 0) & (exp == 0)
        bad |= z & (np.signbit(got) != np.signbit(exp))
    if ulps > 0:  # a tolerance never excuses a wrong zero (flushed subnormals aside)
        bad |= fin & _zero_mismatch(got, exp)
    return bad


def _zero_mismatch(g, e):
    """One of g, e is an exact zero and the other is not, beyond a subnormal of the same
    sign (libms differ in how they round or flush results below the normal range)."""
    tiny = np.finfo(g.dtype).tiny
    sub = (np.abs(g) < tiny) & (np.abs(e) < tiny) & (np.signbit(g) == np.signbit(e))
    return ((g == 0) != (e == 0)) & ~sub


def _power_tolerance(case, args, real):
    """complex power is exp(b * log(a)) in glibc and here: an error of a few ulp in
    w = b*log(a) is amplified |w| times in the result, so the tolerance grows with |w|;
    once |w| * eps > 1e-3 the result's phase (and the signs of an overflow) is noise and
    the element is not compared.  With an infinite or NaN operand, signs of zero results
    come from the sign of a NaN the computation made (x86 and GPUs make different ones),
    so they are not compared."""
    with np.errstate(all="ignore"):
        w = np.abs(args[1].astype(np.complex128) * np.log(args[0].astype(np.complex128)))
    w = np.where(np.isfinite(w), w, 0.0)
    tol = COMPLEX_ULP * (1.0 + w)
    skip = w * np.finfo(real).eps > 1e-3
    finite = np.isfinite(args[0]) & np.isfinite(args[1])
    return tol, skip, finite


def _complex_mismatch(got, exp, ulps, zero_sign=True, floor=0.0):
    real = np.dtype(got.dtype.char.lower())
    gr, gi, er, ei = got.real, got.imag, exp.real, exp.imag
    if np.isscalar(ulps) and ulps == 0:
        return _float_mismatch(gr, er, 0) | _float_mismatch(gi, ei, 0)
    bad = np.zeros(got.shape, bool)
    with np.errstate(all="ignore"):
        scale = np.maximum(np.where(np.isfinite(er), np.abs(er), 0),
                           np.where(np.isfinite(ei), np.abs(ei), 0))
        scale = np.maximum(scale, floor).astype(real)
        tol = ulps * np.spacing(scale)
        for g, e in ((gr, er), (gi, ei)):
            gn, en = np.isnan(g), np.isnan(e)
            b = gn != en
            both = ~gn & ~en
            b |= both & (np.isinf(g) | np.isinf(e)) & (g != e)
            fin = both & np.isfinite(g) & np.isfinite(e)
            close = (_ulp_dist(g, e) <= ulps) | (np.abs(g.astype(np.float64) - e) <= tol)
            b |= fin & ~close
            # an exact zero must stay an exact zero (signs of zeros are compared too)
            b |= fin & _zero_mismatch(g, e)
            b |= fin & (g == 0) & (e == 0) & (np.signbit(g) != np.signbit(e)) & zero_sign
            bad |= b
    return bad


def tolerance(case, out_char):
    kind, row, loop = case
    if kind == "cast" or np.dtype(out_char).kind in "biu":
        return 0
    name = row.name
    if np.dtype(out_char).kind == "c" or any(np.dtype(c).kind == "c" for c in loop):
        if name in EXACT_COMPLEX:
            return 0
        if name in CLOSE_COMPLEX:
            return 2
        return COMPLEX_ULP
    if name in EXACT_FLOAT:
        return 0
    return FLOAT_ULP[np.dtype(out_char).char]


def _fmt(arrs, i):
    return ", ".join(repr(a[i]) for a in arrs)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_functor_matches_numpy(case, driver_results):
    args, got = driver_results[_case_id(case)]
    exp = numpy_results(case, args)
    kind, row, loop = case
    nin = 1 if kind == "cast" else row.nin
    for k, (g, e, c) in enumerate(zip(got, exp, loop[nin:])):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        dt = np.dtype(c)
        if dt.kind in "biu":
            bad = g != e
        elif dt.kind == "f":
            zs = not (kind == "ufunc" and row.name in ZERO_SIGN_FREE)
            bad = _float_mismatch(g, e, tolerance(case, c), zero_sign=zs)
        elif kind == "ufunc" and row.name in ("power", "float_power"):
            tol, skip, finite = _power_tolerance(case, args, np.dtype(c.lower()))
            bad = _complex_mismatch(g, e, tol, zero_sign=finite) & ~skip
        else:
            floor = COMPLEX_SCALE_FLOOR.get(row.name, 0.0) if kind == "ufunc" else 0.0
            bad = _complex_mismatch(g, e, tolerance(case, c), floor=floor)
        if kind == "ufunc" and row.name == "nextafter" and loop[0] == "e" and tuple(
                int(v) for v in np.__version__.split(".")[:2]) >= (2, 5):
            # NumPy 2.5 made float16 nextafter(+-0, -+0) return y (C99); we follow NumPy < 2.5.
            bad &= ~((args[0] == 0) & (args[1] == 0))
        if bad.any():
            idx = np.flatnonzero(bad)[:12]
            lines = [f"  in=({_fmt(args, i)}) ours={g[i]!r} numpy={e[i]!r}" for i in idx]
            pytest.fail(f"{_case_id(case)} output {k}: {bad.sum()} of {bad.size} differ "
                        f"(tolerance {tolerance(case, c)} ulp)\n" + "\n".join(lines),
                        pytrace=False)


def _nvrtc_probe_source():
    """One device function calling every functor on one real and one complex loop of
    its row (and the float16-native overloads), plus a few casts."""
    lines = ['#include "cpn/complex.cuh"',
             'extern "C" __global__ void probe(const char* in, char* out) {']
    k = 0
    for row in _ops.UFUNCS:
        loops = _ops.type_loops(row.name)
        picks = [lp for lp in loops if not any(c in "FD" for c in lp)][:1]
        picks += [lp for lp in loops if any(c in "FD" for c in lp)][:1]
        if row.half_native:
            picks += [lp for lp in loops if lp[0] == "e"][:1]
        for lp in picks:
            args = [f"*reinterpret_cast<const {_ops.compute_ctype(row, c)}*>(in + {8 * i})"
                    for i, c in enumerate(lp[: row.nin])]
            outs = [_ops.compute_ctype(row, c) for c in lp[row.nin:]]
            if len(outs) == 1:
                lines.append(f"  *reinterpret_cast<{outs[0]}*>(out + {16 * k}) = "
                             f"cpn::{row.functor}{{}}({', '.join(args)});")
            else:
                lines.append(f"  {{ {outs[0]} r0; {outs[1]} r1; cpn::{row.functor}{{}}("
                             f"{', '.join(args)}, r0, r1); "
                             f"*reinterpret_cast<{outs[0]}*>(out + {16 * k}) = r0; }}")
            k += 1
    for s, d in [("e", "d"), ("d", "e"), ("D", "I"), ("f", "L"), ("e", "F"), ("?", "D")]:
        lines.append(f"  *reinterpret_cast<{_ct(d)}*>(out + {16 * k}) = cpn::cast<{_ct(d)}>("
                     f"*reinterpret_cast<const {_ct(s)}*>(in));")
        k += 1
    return "\n".join(lines) + "\n}\n"


def test_headers_compile_with_nvrtc():
    """The same headers under NVRTC (sm_90, no include path but kernels/): a quick guard
    that the host build above tests the code the GPU runs."""
    try:
        from cuda.bindings import nvrtc
    except Exception:
        pytest.skip("cuda.bindings (NVRTC) is not installed")
    src = _nvrtc_probe_source()
    err, prog = nvrtc.nvrtcCreateProgram(src.encode(), b"probe.cu", 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        opts = [b"-std=c++17", b"-arch=sm_90", b"--fmad=false", f"-I{KERNELS}".encode()]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, n = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * n
        nvrtc.nvrtcGetProgramLog(prog, log)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, log.decode(errors="replace")
        text = log.decode(errors="replace").strip("\x00 \n")
        assert "warning" not in text, text
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


EXP_F32_DRIVER = r"""
#include "cpn/real.cuh"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  const long long step = atoll(argv[1]);
  long long bad = 0;
  for (long long u = 0; u < (1LL << 32); u += step) {
    const unsigned bits = (unsigned)u;
    float x;
    memcpy(&x, &bits, 4);
    const float got = cpn::exp_f32(x), want = (float)exp((double)x);
    if (memcmp(&got, &want, 4) != 0 && !(got != got && want != want)) {
      if (bad++ < 10) printf("x=%a exp_f32=%a (float)exp=%a\n", x, got, want);
    }
  }
  printf("%lld\n", bad);
  return 0;
}
"""


def test_exp_f32_is_the_float_of_glibcs_double_exp(tmp_path):
    """``cpn::exp_f32(x)`` is ``(float)exp((double)x)`` bit for bit: what NumPy computes for
    ``x * math.exp(-x)`` on float32 (math.exp is glibc's exp; NEP 50 rounds its Python
    float to float32), which vectorize's translation calls.  Every 4,093rd float bit
    pattern (all signs and exponents, NaNs and infinities); every float with
    ``CUPYNUM_TEST_EXHAUSTIVE=1`` (about a minute: none differed, glibc 2.36)."""
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (set CXX): the host build of kernels/ is not tested")
    cpp, exe = tmp_path / "exp_f32.cpp", tmp_path / "exp_f32"
    cpp.write_text(EXP_F32_DRIVER)
    res = subprocess.run([cxx, *CXXFLAGS, f"-I{KERNELS}", str(cpp), "-o", str(exe), "-lm"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-5000:]
    step = 1 if os.environ.get("CUPYNUM_TEST_EXHAUSTIVE") == "1" else 4093
    out = subprocess.run([str(exe), str(step)], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "0", "\n".join(lines)
