"""The CUDA rejection-sampler kernels (cuda/rng.py: Philox4x32-10, standard gamma, Poisson,
binomial) run on the CPU: their text is compiled by the host C++ compiler under the CUDA
shim (tests/shim.py; the kernels are plain per-thread loops), launched through a CPU
stand-in for ``kernels_util.DEV``, and checked against Philox's published test vectors and
NumPy's samplers of the same distributions (moments and a two-sample Kolmogorov-Smirnov
statistic, fixed seeds: deterministic).  Runs on any backend; needs only a C++ compiler."""
from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest

from cupynum._backends.cuda import kernels_util as ku
from cupynum._backends.cuda import rng as crng
from distributions import at_least_1, chi2_ok, hypergeom_pmf, logseries_pmf, zipf_pmf
from shim import CXX, SHIM, HostArray, alias_host_allocations, build

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (set CXX)")

N = 100_000
KS2 = 1.95 * math.sqrt(2 / N)  # two-sample KS, ~0.1% false alarm (seeds fixed)


def _build():
    ks = crng.all_kernels()
    parts = ["#include <cmath>\nusing namespace std;", SHIM,
             "struct float4 { float x, y, z, w; }; struct double2 { double x, y; };",
             ku.program(ks)]
    for k in ks:
        types = "".join(f"  typedef {t} T{i};\n" for i, (t, _) in enumerate(k.params))
        args = ", ".join(f"*(T{i}*)p[{i}]" for i in range(len(k.params)))
        parts.append(
            f'extern "C" void host_{k.name}(void** p, unsigned gx, unsigned bx) {{\n{types}'
            "  gridDim = {gx, 1, 1}; blockDim = {bx, 1, 1};\n"
            "  for (unsigned b = 0; b < gx; ++b) for (unsigned t = 0; t < bx; ++t) {\n"
            "    blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0};\n"
            f"    {k.name}({args});\n  }}\n}}\n")
    parts.append("""
extern "C" void philox_block(const unsigned* ctr, const unsigned* key, unsigned* out) {
  cpn_rng g; g.init(key[0], key[1], 0, 0);
  g.ctr = ctr[0]; g.c1 = ctr[1]; g.c2 = ctr[2]; g.c3 = ctr[3];
  g.block();
  for (int i = 0; i < 4; ++i) out[i] = g.buf[i];
}
""")
    return build("\n".join(parts), "rng", ["-std=c++17", "-O2", "-w", "-shared", "-fPIC"])


class CpuDevice:
    def __init__(self, lib, sms=2):
        self.lib, self.sms = lib, sms

    def launch(self, kernel, grid, block, values, shmem=0):
        from cupynum._backends.cuda.runtime import ParamBlock

        pb = ParamBlock([dt for _, dt in kernel.params])
        pb.set_values(values)
        f = getattr(self.lib, f"host_{kernel.name}")
        f.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
        f.restype = None
        f(pb.address, int(grid), int(block))

    def sm_count(self):
        return self.sms


@pytest.fixture(scope="module")
def lib():
    return _build()


@pytest.fixture
def dev(lib, monkeypatch):
    d = CpuDevice(lib)
    monkeypatch.setattr(crng, "DEV", d)
    return d


def _draw(kind, dtype, n, *params, key=(12345, 678), call=0, lg=None):
    out = np.empty(n, dtype)
    hp = [HostArray(np.ascontiguousarray(np.atleast_1d(p))) for p in params]
    crng.draw(kind, HostArray(out), tuple(hp) + ((lg,) if kind == "gamma" else ()), key, call)
    return out


def ks2(x, y):
    x, y = np.sort(np.asarray(x, np.float64)), np.sort(np.asarray(y, np.float64))
    grid = np.concatenate([x, y])
    return np.abs(np.searchsorted(x, grid, "right") / x.size -
                  np.searchsorted(y, grid, "right") / y.size).max()


# Random123's known-answer vectors for philox4x32-10 (counter, key -> output)
KAT = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
       ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
       ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]


@pytest.mark.parametrize("ctr,key,want", KAT)
def test_philox_known_answers(lib, ctr, key, want):
    c, k = np.array(ctr, np.uint32), np.array(key, np.uint32)
    out = np.zeros(4, np.uint32)
    lib.philox_block(c.ctypes.data_as(ctypes.c_void_p), k.ctypes.data_as(ctypes.c_void_p),
                     out.ctypes.data_as(ctypes.c_void_p))
    assert [hex(v) for v in out] == [hex(v) for v in want]


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 40.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gamma(dev, alpha, dtype):
    x = _draw("gamma", dtype, N, np.float64(alpha), lg=False)
    ref = np.random.default_rng(1).standard_gamma(alpha, N)
    assert x.dtype == dtype and (x >= 0).all()
    assert abs(x.mean() - alpha) < 5 * math.sqrt(alpha / N)
    assert ks2(x, ref) < KS2
    lx = _draw("gamma", np.float64, N, np.float64(alpha), lg=True, call=1)
    assert np.isfinite(lx).all() and ks2(np.exp(lx), ref) < KS2


def test_gamma_edges_and_per_element(dev):
    a = np.array([0.0, np.nan, 1e-300, 2.0, 1e6])
    x = _draw("gamma", np.float64, 5, a, lg=False)
    assert x[0] == 0 and np.isnan(x[1]) and x[2] >= 0 and x[3] > 0
    assert abs(x[4] / 1e6 - 1) < 0.01
    lx = _draw("gamma", np.float64, 5, a, lg=True)
    assert lx[0] == -np.inf and np.isfinite(lx[2]) and lx[2] < -1e290


@pytest.mark.parametrize("lam", [0.5, 3.0, 9.99, 10.0, 55.5, 1e6])
def test_poisson(dev, lam):
    x = _draw("poisson", np.int64, N, np.float64(lam))
    ref = np.random.default_rng(2).poisson(lam, N)
    assert (x >= 0).all()
    assert abs(x.mean() - lam) < 5 * math.sqrt(lam / N)
    assert abs(x.var() / lam - 1) < 0.03
    assert ks2(x, ref) < KS2


@pytest.mark.parametrize("n,p", [(1, 0.5), (5, 0.3), (30, 0.2), (60, 0.5), (1000, 0.4),
                                 (100, 0.93), (2**40, 1e-12), (10**9, 0.25), (7, 1.0),
                                 (0, 0.5), (9, 0.0)])
def test_binomial(dev, n, p):
    x = _draw("binomial", np.int64, N, np.int64(n), np.float64(p))
    ref = np.random.default_rng(3).binomial(n, p, N)
    assert (x >= 0).all() and (x <= n).all()
    mean, var = n * p, n * p * (1 - p)
    assert abs(x.mean() - mean) <= 5 * math.sqrt(var / N) + 1e-12
    if var > 0:
        assert abs(x.var() / var - 1) < 0.03
    assert ks2(x, ref) < KS2


def test_per_element_parameters(dev):
    nn = np.array([10, 1000, 0, 50], np.int64)
    pp = np.array([0.5, 0.1, 0.3, 0.9])
    x = _draw("binomial", np.int64, 4 * 20000, np.tile(nn, 20000), np.tile(pp, 20000))
    m = x.reshape(-1, 4).mean(axis=0)
    np.testing.assert_allclose(m, nn * pp, atol=0.2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random01(dev, lib, dtype):
    """[0, 1) from the top 24 / 53 bits of element q's Philox block, tails included."""
    n = N + 3  # a partial last group
    x = _draw("random01", dtype, n, key=(9, 10), call=2)
    assert x.dtype == dtype and (x >= 0).all() and (x < 1).all()
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert ks2(x, np.random.default_rng(4).random(n)) < KS2
    per = 4 if dtype == np.float32 else 2
    out = (ctypes.c_uint * 4)()
    lib.philox_block.argtypes = [ctypes.c_void_p] * 3
    for q in (0, 1, n // per):  # element q's words, as the kernel maps them
        lib.philox_block((ctypes.c_uint * 4)(0, q, 0, 2), (ctypes.c_uint * 2)(9, 10), out)
        w = list(out)
        if dtype == np.float32:
            want = [(v >> 8) * 2.0**-24 for v in w]
        else:
            want = [(((w[2 * j] << 32) | w[2 * j + 1]) >> 11) * 2.0**-53 for j in range(2)]
        got = x[q * per:(q + 1) * per]
        assert list(got) == [np.dtype(dtype).type(v) for v in want[:got.size]]


def test_reproducible_and_launch_independent(dev):
    a = _draw("gamma", np.float64, 5000, np.float64(0.7), lg=False, call=3)
    dev.sms = 7  # another grid: each element's stream depends only on (key, i, call)
    b = _draw("gamma", np.float64, 5000, np.float64(0.7), lg=False, call=3)
    np.testing.assert_array_equal(a, b)
    c = _draw("gamma", np.float64, 5000, np.float64(0.7), lg=False, call=4)
    d = _draw("gamma", np.float64, 5000, np.float64(0.7), lg=False, call=3, key=(1, 2))
    assert not np.array_equal(a, c) and not np.array_equal(a, d)


def test_rng_kernels_compile_with_nvrtc():
    try:
        from cupynum._backends.cuda import compiler

        compiler.nvrtc_version()
    except Exception:
        pytest.skip("NVRTC is not installed")
    src = ku.program(crng.all_kernels())
    cubin = compiler.compile_cubin(src, name="cupynum_index.cu", arch="sm_90").cubin
    for k in crng.all_kernels():
        assert k.name.encode() in cubin


# --- hypergeometric, logseries, zipf, von Mises, multivariate hypergeometric ----------------
# Discrete samplers: a chi-square test against the exact pmf (tests/distributions.py),
# bins with expected count < 5 merged into their neighbour.


@pytest.mark.parametrize("good,bad,sample", [
    (5, 3, 2), (50, 30, 9), (50, 30, 40), (1000, 10, 1005), (1000, 10, 995), (0, 20, 15),
    (20, 0, 15), (7, 5, 12), (7, 5, 0), (10**6, 10**6, 5000), (999_999_999, 3, 10**6),
    (30, 10**8, 200), (3 * 10**9, 2 * 10**9, 10**5)])
def test_hypergeometric(dev, good, bad, sample):
    x = _draw("hypergeometric", np.int64, N, np.int64(good), np.int64(bad), np.int64(sample))
    assert x.min() >= max(0, sample - bad) and x.max() <= min(good, sample)
    total = good + bad
    mean = sample * good / total
    var = mean * bad / total * (total - sample) / max(total - 1, 1)
    assert abs(x.mean() - mean) <= 6 * math.sqrt(var / N) + 1e-12
    if var > 0:
        assert abs(x.var() / var - 1) < 0.04 + 4 / math.sqrt(N * var)  # (rare events)
        lo = int(max(0, mean - 12 * math.sqrt(var) - 1))
        ok, msg = chi2_ok(x - lo, lambda k: hypergeom_pmf(k + lo, good, bad, sample),
                          int(min(good, sample)) - lo)
        assert ok, msg


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_logseries(dev, p):
    x = _draw("logseries", np.int64, N, np.float64(p))
    assert x.min() >= 1
    if p == 0:
        assert (x == 1).all()
        return
    mean = -p / ((1 - p) * math.log1p(-p))
    var = -p * (p + math.log1p(-p)) / ((1 - p) ** 2 * math.log1p(-p) ** 2)
    assert abs(x.mean() - mean) < 6 * math.sqrt(var / N)
    ok, msg = chi2_ok(x, at_least_1(lambda k: logseries_pmf(k, p)), 200)
    assert ok, msg


@pytest.mark.parametrize("a", [1.3, 2.0, 3.5, 20.0, 2000.0])
def test_zipf(dev, a):
    x = _draw("zipf", np.int64, N, np.float64(a))
    assert x.min() >= 1
    if a >= 1025:
        assert (x == 1).all()
        return
    ok, msg = chi2_ok(x, at_least_1(lambda k: zipf_pmf(k, a)), 300)
    assert ok, msg
    ref = np.random.default_rng(5).zipf(a, N)
    assert ks2(np.minimum(x, 10**6), np.minimum(ref, 10**6)) < KS2


@pytest.mark.parametrize("mu,kappa", [(0.5, 4.0), (-2.0, 1e-6), (1.0, 1e7), (0.0, 1e-9),
                                      (3.0, 0.5), (-3.1, 50.0)])
def test_vonmises(dev, mu, kappa):
    x = _draw("vonmises", np.float64, N, np.float64(mu), np.float64(kappa))
    ref = np.random.default_rng(6).vonmises(mu, kappa, N)
    assert (np.abs(x) <= np.pi).all()
    assert ks2(x, ref) < KS2
    # E cos(X - mu) = I1(kappa) / I0(kappa), checked against NumPy's own sample
    c, cr = np.cos(x - mu).mean(), np.cos(ref - mu).mean()
    assert abs(c - cr) < 8 / math.sqrt(N)


def test_vonmises_per_element_and_nan(dev):
    mu = np.tile(np.array([0.0, 2.0, np.nan, 1.0]), 20000)
    kappa = np.tile(np.array([10.0, 1.0, 1.0, np.nan]), 20000)
    x = _draw("vonmises", np.float64, mu.size, mu, kappa).reshape(-1, 4)
    assert np.isnan(x[:, 2:]).all()
    np.testing.assert_allclose(np.angle(np.exp(1j * x[:, :2]).mean(axis=0)), [0.0, 2.0],
                               atol=0.02)


def test_hypergeometric_per_element(dev):
    good = np.tile(np.array([5, 500, 0, 40], np.int64), 20000)
    bad = np.tile(np.array([5, 300, 9, 0], np.int64), 20000)
    sample = np.tile(np.array([3, 400, 4, 17], np.int64), 20000)
    x = _draw("hypergeometric", np.int64, good.size, good, bad, sample).reshape(-1, 4)
    np.testing.assert_allclose(x.mean(axis=0), [1.5, 250, 0, 17], atol=0.1)


@pytest.mark.parametrize("colors,nsample", [([3, 10, 0, 7], 4), ([3, 10, 0, 7], 12),
                                            ([50, 200, 30], 150), ([5], 5), ([4, 6], 10)])
def test_mvhypergeometric(dev, colors, nsample):
    rows = N // 4
    out = np.empty((rows, len(colors)), np.int64)
    col = np.array(colors, np.int64)
    crng.draw("mvhypergeometric", HostArray(out), (HostArray(col), nsample, int(col.sum())),
              (11, 12), 0)
    assert (out.sum(axis=1) == nsample).all() and (out >= 0).all() and (out <= col).all()
    total = int(col.sum())
    for j, cj in enumerate(colors):  # each marginal is hypergeometric(cj, total - cj)
        var = nsample * cj / total * (total - cj) / total * (total - nsample) / max(
            total - 1, 1)
        if var == 0:
            continue
        ok, msg = chi2_ok(out[:, j], lambda k: hypergeom_pmf(k, cj, total - cj, nsample),
                          min(cj, nsample))
        assert ok, f"color {j}: {msg}"
    if len(colors) >= 2:  # the joint law: the first two colours' covariance
        c0, c1 = colors[0], colors[1]
        cov = -nsample * c0 * c1 / total**2 * (total - nsample) / (total - 1)
        got = np.cov(out[:, 0], out[:, 1])[0, 1]
        assert abs(got - cov) < 0.05 * abs(cov) + 0.01


def test_new_sampler_kernels_reproducible(dev):
    a = _draw("zipf", np.int64, 3000, np.float64(1.7), call=5)
    dev.sms = 5
    np.testing.assert_array_equal(a, _draw("zipf", np.int64, 3000, np.float64(1.7), call=5))
    assert not np.array_equal(a, _draw("zipf", np.int64, 3000, np.float64(1.7), call=6))


@pytest.fixture
def kernel_generator(dev, monkeypatch):
    """cupynum's Generator (host backend) with its ``draw`` calls run by the kernels on the
    CPU: the frontend's parameter arrays, broadcasting and steps meet the kernel text."""
    import itertools

    import cupynum as cp
    from cupynum import _backends
    from cupynum._backends import host

    if _backends.get().name != "host":
        pytest.skip("needs the host backend (its buffers have CPU addresses)")
    calls = itertools.count()
    # arrays' memory is both sides' at once: host NumPy code and the kernels read it
    alias_host_allocations(monkeypatch)
    monkeypatch.setattr(host._HostRng, "draw", lambda self, backend, kind, out, params:
                        crng.draw(kind, out, params, (21, 22), next(calls)))
    return cp.random.default_rng(0)


def test_generator_through_kernels(kernel_generator):
    import cupynum as cp

    g = kernel_generator
    x = np.asarray(g.hypergeometric([5, 500, 0, 40], [5, 300, 9, 0],
                                    cp.asarray(np.array([3, 400, 4, 17])), size=(20000, 4)))
    assert x.dtype == np.int64 and x.shape == (20000, 4)
    np.testing.assert_allclose(x.mean(axis=0), [1.5, 250, 0, 17], atol=0.1)
    assert np.asarray(g.hypergeometric(10, 10, 5)).shape == ()
    lp = np.asarray(g.logseries(cp.asarray(np.array([0.0, 0.5])), size=(N // 2, 2)))
    assert (lp[:, 0] == 1).all() and abs(lp[:, 1].mean() - 1 / math.log(2)) < 0.01
    z = np.asarray(g.zipf([2.0, 3000.0], size=(N // 2, 2)))
    assert (z[:, 1] == 1).all()
    ok, msg = chi2_ok(z[:, 0], at_least_1(lambda k: zipf_pmf(k, 2.0)), 300)
    assert ok, msg
    v = np.asarray(g.vonmises([0.0, 2.0], cp.asarray(np.array([10.0, 1.0])), size=(N // 2, 2)))
    ref = np.random.default_rng(0).vonmises([0.0, 2.0], [10.0, 1.0], size=(N // 2, 2))
    assert ks2(v[:, 0], ref[:, 0]) < KS2 * 1.5 and ks2(v[:, 1], ref[:, 1]) < KS2 * 1.5
    m = np.asarray(g.multivariate_hypergeometric([16, 8, 0, 4], 20, size=(N // 10, 2)))
    assert m.shape == (N // 10, 2, 4) and (m.sum(axis=-1) == 20).all()
    np.testing.assert_allclose(m.mean(axis=(0, 1)), 20 * np.array([16, 8, 0, 4]) / 28,
                               atol=0.03)
    assert np.asarray(g.multivariate_hypergeometric([], 0, size=3)).shape == (3, 0)
