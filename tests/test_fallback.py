"""Fallback and dispatch: nothing NumPy has is missing, NumPy's functions take our arrays."""
import warnings

import numpy as np
import pytest

import cupynum as cp
from cupynum import _fallback
from helpers import assert_same


def test_native_names_are_module_attributes_fallbacks_are_not():
    assert "zeros" in vars(cp) and "add" in vars(cp) and "ndarray" in vars(cp)
    name = "nested_iters"  # (any NumPy function cupynum has no native version of)
    assert name not in vars(cp)
    f = getattr(cp, name)
    assert getattr(f, "__cupynum_fallback__", False)
    assert name not in vars(cp)  # resolving a fallback does not make it a module attribute


def test_classes_exceptions_constants_are_numpys():
    assert cp.float32 is np.float32 and cp.dtype is np.dtype and cp.pi == np.pi
    assert cp.linalg.LinAlgError is np.linalg.LinAlgError
    assert cp.exceptions.AxisError is np.exceptions.AxisError
    assert cp.exceptions.ComplexWarning is np.exceptions.ComplexWarning
    assert cp.errstate is np.errstate and cp.newaxis is None
    assert cp.finfo(cp.float32).eps == np.finfo(np.float32).eps
    assert cp.iinfo("int8").max == 127
    assert cp.result_type(cp.zeros(2, np.float32), 1.0) == np.float32
    assert cp.promote_types("i1", "u1") == np.int16
    with pytest.raises(AttributeError):
        cp.this_is_not_numpy


def test_fallback_function_runs_and_returns_device_arrays():
    h = np.arange(10.0)
    got = cp.convolve(cp.asarray(h), cp.asarray([1.0, 2.0]))
    assert isinstance(got, cp.ndarray)
    assert_same(got, np.convolve(h, [1.0, 2.0]))
    q = cp.polyfit(cp.arange(5.0), cp.arange(5.0) * 2 + 1, 1)
    assert isinstance(q, cp.ndarray)
    np.testing.assert_allclose(np.asarray(q), [2.0, 1.0])


def test_numpy_function_on_cupynum_array_returns_cupynum():
    d = cp.asarray([3.0, 1.0, 2.0])
    m = np.median(d)
    assert isinstance(m, cp.ndarray) and float(m) == 2.0
    z = np.zeros_like(d)  # native through __array_function__
    assert isinstance(z, cp.ndarray)


def test_fallback_writes_back_in_place_changes():
    d = cp.ones((3, 3))
    np.fill_diagonal(d, 0)
    assert_same(d, np.ones((3, 3)) - np.eye(3))
    d2 = cp.arange(5)
    cp.put(d2, [0, 2], [-1, -2])
    assert_same(d2, np.array([-1, 1, -2, 3, 4]))
    v = cp.zeros((4, 4))[1:3, 1:3]
    np.fill_diagonal(v, 5)
    assert_same(v, np.diag([5.0, 5.0]))


def test_fallback_out_argument_written_back():
    # Call the fallback wrapper directly, so the test holds whether cumsum is native or not.
    cumsum = _fallback.fallback_for(np.cumsum)
    a = cp.asarray([1.0, 4.0, 9.0])
    out = cp.zeros(3)
    res = cumsum(a, out=out)
    assert res is out
    assert_same(out, np.array([1.0, 5.0, 14.0]))
    strided = cp.zeros(6)[::2]
    cumsum(a, out=strided)
    assert_same(strided, np.array([1.0, 5.0, 14.0]))


def test_fallback_containers_and_namedtuples():
    parts = cp.split(cp.arange(6), 3)
    assert all(isinstance(p, cp.ndarray) for p in parts)
    s = cp.linalg.svd(cp.eye(3))
    assert all(isinstance(x, cp.ndarray) for x in s)
    assert hasattr(s, "U") or hasattr(s, "_fields") or len(s) == 3
    stacked = cp.stack([cp.arange(2), cp.arange(2)])
    assert_same(stacked, np.stack([np.arange(2)] * 2))
    st = cp.stack((cp.arange(2), np.arange(2)))  # a host array mixed in
    assert isinstance(st, cp.ndarray)


def test_fallback_warns_once(monkeypatch):
    monkeypatch.setattr(_fallback._config, "FALLBACK", "warn")
    _fallback._warned.discard("numpy.nested_iters")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert len(cp.nested_iters([cp.arange(6).reshape(2, 3)], [[0], [1]])) == 2
        cp.nested_iters([cp.arange(6).reshape(2, 3)], [[0], [1]])
    hits = [w for w in rec if issubclass(w.category, cp.FallbackWarning)]
    assert len(hits) == 1


def test_fallback_error_mode(monkeypatch):
    monkeypatch.setattr(_fallback._config, "FALLBACK", "error")
    with pytest.raises(NotImplementedError):
        cp.nested_iters([cp.arange(6).reshape(2, 3)], [[0], [1]])


def test_submodules():
    import types

    assert isinstance(cp.linalg, types.ModuleType) and isinstance(cp.fft, types.ModuleType)
    assert isinstance(cp.random, types.ModuleType)
    r = cp.fft.fft(cp.asarray([1.0, 0.0, 0.0, 0.0]))
    assert isinstance(r, cp.ndarray)
    p = cp.polynomial.polynomial.polyval(2.0, cp.asarray([1.0, 2.0]))
    assert float(p) == 5.0
    assert cp.polynomial.Polynomial is np.polynomial.Polynomial
    x = cp.random.rand(3)
    assert isinstance(x, cp.ndarray) and x.shape == (3,)


def test_import_is_light():
    """``import cupynum`` pays for none of the heavy modules (they load on first use)."""
    import subprocess
    import sys

    code = ("import sys, cupynum; heavy = ['cuda.core', 'cuda.bindings', 'nvmath', "
            "'numpy.testing', 'cupynum.testing', 'cupynum.cuda']; "
            "print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
    import cupynum

    assert cupynum.testing.assert_array_equal is np.testing.assert_array_equal
