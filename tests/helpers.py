"""The one comparison helper: run the same code with NumPy and with cupynum, compare.

``compare(fn, *host_args)`` calls ``fn(numpy, *host_args)`` and ``fn(cupynum, *device_args)``
(host NumPy arrays among the arguments are copied to cupynum first, keeping their values,
dtype and memory layout) and checks that both raise the same exception type, or that the
results agree in type structure, shape, dtype and values:

* exact (bit for bit, NaN positions and signs of zeros included) by default;
* ``ulp=N``: floats within N units in the last place (transcendentals);
* ``rtol``/``atol``: within a relative/absolute bound (sums, linear algebra).

A 0-d cupynum array stands where NumPy returns a scalar (internals.md principle 2).
"""
from __future__ import annotations

import numpy as np
import pytest

import cupynum as cp


def to_device(x):
    """Host NumPy arrays (any layout) -> cupynum arrays with the same strides pattern."""
    if isinstance(x, np.ndarray):
        if x.flags.c_contiguous or x.flags.f_contiguous or x.size == 0:
            return cp.asarray(x)
        # Keep the layout: copy the whole underlying block, then take the same view.
        base = x
        while base.base is not None and isinstance(base.base, np.ndarray):
            base = base.base
        if base.flags.c_contiguous and np.shares_memory(base, x):
            dev = cp.asarray(base)
            offset = x.__array_interface__["data"][0] - base.__array_interface__["data"][0]
            from cupynum._array import _make

            return _make(dev._buf, offset, x.shape, x.strides, dev.dtype, dev)
        return cp.asarray(x)
    if isinstance(x, (list, tuple)) and any(isinstance(v, np.ndarray) for v in x):
        return type(x)(to_device(v) for v in x)
    return x


def compare(fn, *args, ulp=None, rtol=None, atol=0.0, check_dtype=True, **kwargs):
    """Run ``fn`` with both libraries and assert that the outcomes agree; returns cupynum's."""
    dev_args = [to_device(a) for a in args]  # before NumPy runs: fn may modify its inputs
    try:
        with np.errstate(all="ignore"):
            expected = fn(np, *args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception type is the expected outcome
        expected_exc = e
    else:
        expected_exc = None
    if expected_exc is not None:
        try:
            got = fn(cp, *dev_args, **kwargs)
        except Exception as e:  # noqa: BLE001
            assert isinstance(e, type(expected_exc)) or isinstance(expected_exc, type(e)) and \
                type(e) is not Exception, (
                f"NumPy raised {type(expected_exc).__name__}({expected_exc}), "
                f"cupynum raised {type(e).__name__}({e})")
            return None
        raise AssertionError(f"NumPy raised {type(expected_exc).__name__}({expected_exc}); "
                             f"cupynum returned {got!r}")
    got = fn(cp, *dev_args, **kwargs)
    assert_same(got, expected, ulp=ulp, rtol=rtol, atol=atol, check_dtype=check_dtype)
    return got


def assert_same(got, expected, *, ulp=None, rtol=None, atol=0.0, check_dtype=True):
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"expected a sequence, got {type(got)}"
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e, ulp=ulp, rtol=rtol, atol=atol, check_dtype=check_dtype)
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert isinstance(got, (cp.ndarray, np.generic)), (
            f"expected a cupynum array, got {type(got).__name__}")
        host = np.asarray(got)
        exp = np.asarray(expected)
        assert host.shape == exp.shape, f"shape {host.shape} != NumPy's {exp.shape}"
        if check_dtype:
            assert host.dtype == exp.dtype, f"dtype {host.dtype} != NumPy's {exp.dtype}"
        assert_values(host, exp, ulp=ulp, rtol=rtol, atol=atol)
        return
    if isinstance(got, cp.ndarray):
        got = got.item()
    assert type(got) is type(expected) or (
        isinstance(got, (int, float, complex, bool)) and isinstance(expected, (int, float,
                                                                               complex, bool))
    ), f"type {type(got).__name__} != NumPy's {type(expected).__name__}"
    if isinstance(expected, float) and np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == expected, f"{got!r} != NumPy's {expected!r}"


def assert_values(got: np.ndarray, exp: np.ndarray, *, ulp=None, rtol=None, atol=0.0):
    if exp.dtype.kind in "fc" and got.dtype.kind in "fc":
        for part in ((lambda v: v.real, lambda v: v.imag) if exp.dtype.kind == "c"
                     else (lambda v: v,)):
            g, e = part(got), part(exp)
            assert np.array_equal(np.isnan(g), np.isnan(e)), _diff("NaN positions", g, e)
            ok = ~np.isnan(e)
            g, e = g[ok], e[ok]
            if ulp is None and rtol is None and not atol:
                assert np.array_equal(g, e), _diff("values", g, e)
                assert np.array_equal(np.signbit(g), np.signbit(e)), _diff("zero signs", g, e)
            elif ulp is not None:
                inf = np.isinf(e)
                assert np.array_equal(g[inf], e[inf]), _diff("infinities", g, e)
                np.testing.assert_array_max_ulp(g[~inf], e[~inf].astype(g.dtype), maxulp=ulp)
            else:
                np.testing.assert_allclose(g, e, rtol=rtol or 0, atol=atol)
    else:
        assert np.array_equal(got, exp), _diff("values", got, exp)


def _diff(what, g, e):
    return f"{what} differ:\ncupynum: {g!r}\nNumPy:   {e!r}"


def _nvrtc_available() -> bool:
    try:
        from cupynum._backends.cuda import compiler

        compiler.nvrtc_version()
        return True
    except Exception:
        return False


# For tests that compile CUDA source with NVRTC (which needs no GPU).
needs_nvrtc = pytest.mark.skipif(not _nvrtc_available(), reason="NVRTC is not installed")
