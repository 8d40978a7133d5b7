"""Generated expression DAGs: programs of elementwise steps (table ops, dtypes, broadcasting,
Python scalars, views, in-place steps, ``out=`` aliasing) run through cupynum and NumPy, and
every variable is compared bit for bit at the end.  On the simulated device (and the GPU)
the steps defer and fuse, so this compares fused evaluation with NumPy's eager one; the
eager path (``CUPYNUM_FUSION=0``, the host backend) is checked the same way against NumPy.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cupynum as cp
from cupynum import _backends

pytestmark = pytest.mark.usefixtures("fused_kernels_at_once", "fusion_arrays_on_device")

DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint16, np.bool_]
SHAPES = [(3, 4), (4,), (3, 1), (1, 4), ()]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "less", "logical_and",
          "bitwise_xor", "floor_divide", "power"]
UNARY = ["negative", "absolute", "sqrt", "square", "sin", "logical_not", "floor"]
SCALARS = [2, -3, 0.5, 1.25, True]


def _array(draw, dtype, shape):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 20, shape).astype(dtype)
    return rng.uniform(-4, 4, shape).astype(dtype)


@st.composite
def programs(draw):
    nin = draw(st.integers(1, 3))
    inputs = [_array(draw, draw(st.sampled_from(DTYPES)), draw(st.sampled_from(SHAPES)))
              for _ in range(nin)]
    steps = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["bin", "bin", "bin", "scalar", "un", "view", "inplace",
                                     "setitem", "out", "read"]))
        i = draw(st.integers(0, 40))
        j = draw(st.integers(0, 40))
        k = draw(st.integers(0, 40))
        steps.append((kind, draw(st.sampled_from(BINARY)), draw(st.sampled_from(UNARY)),
                      draw(st.sampled_from(SCALARS)), i, j, k))
    return inputs, steps


def _run(xp, inputs, steps, ok=None):
    """Run the program; ``ok`` (from NumPy's run) says which steps to take."""
    vs = [xp.asarray(h.copy()) for h in inputs]  # (NumPy would write into the inputs)
    taken = []
    for n, (kind, bop, uop, scalar, i, j, k) in enumerate(steps):
        if ok is not None and not ok[n]:
            continue
        x, y, z = vs[i % len(vs)], vs[j % len(vs)], vs[k % len(vs)]
        if ok is None and kind in ("inplace", "setitem", "out"):
            try:  # NumPy may write part of an output before it raises: try on copies
                _step(xp, kind, bop, x.copy(), y.copy(), z.copy())
            except (TypeError, ValueError, OverflowError):
                taken.append(False)
                continue
        try:
            # (xp.asarray: NumPy gives scalars for 0-d operands, cupynum 0-d arrays)
            if kind == "bin":
                vs.append(xp.asarray(getattr(xp, bop)(x, y)))
            elif kind == "scalar":
                vs.append(xp.asarray(getattr(xp, bop)(x, scalar)))
            elif kind == "un":
                vs.append(xp.asarray(getattr(xp, uop)(x)))
            elif kind == "view":
                vs.append(x[..., ::-1] if x.ndim else x[...])
            elif kind == "inplace":
                getattr(xp, bop)(x, y, out=x)
            elif kind == "setitem":
                x[...] = y
            elif kind == "out":
                getattr(xp, bop)(x, y, out=z)
            elif kind == "read":
                vs.append(x.copy())  # a read in the middle of the program (materialises)
            taken.append(True)
        except (TypeError, ValueError, OverflowError) as e:
            if ok is not None:
                raise AssertionError(f"step {n} ({kind}) raised {e!r} where NumPy did not")
            taken.append(False)
    return vs, taken


def _step(xp, kind, bop, x, y, z):
    if kind == "inplace":
        getattr(xp, bop)(x, y, out=x)
    elif kind == "setitem":
        x[...] = y
    else:
        getattr(xp, bop)(x, y, out=z)


def _same(got, want):
    got = np.asarray(got.get())
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":  # NaNs of either sign, but the same bits otherwise
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        got, want = got[~nan], want[~nan]
    assert np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                          np.ascontiguousarray(want).view(np.uint8)), (got, want)


def _eager(inputs, steps, ok):
    """The program run by cupynum with nothing deferred (fusion's size floor above every
    array), on the same backend."""
    from cupynum._backends import fusion

    floor, fusion.MIN_ELEMENTS = fusion.MIN_ELEMENTS, 1 << 62
    try:
        return _run(cp, inputs, steps, ok)[0]
    finally:
        fusion.MIN_ELEMENTS = floor


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_fused_programs_equal_numpy(program):
    """Fused equals NumPy bit for bit where the backend computes as NumPy does (the host,
    the simulated device).  On the GPU, CUDA's sin and pow are within their stated ulp
    bounds of NumPy's, not equal, so there fused is compared bit for bit with the same
    program run eagerly (one table kernel per op) and in dtype and shape with NumPy."""
    inputs, steps = program
    with np.errstate(all="ignore"):
        want, ok = _run(np, inputs, steps)
        got, _ = _run(cp, inputs, steps, ok)
        if _backends.name() == "cuda":
            eager = _eager(inputs, steps, ok)
            for g, w in zip(got, want):
                assert g.dtype == np.asarray(w).dtype and g.shape == np.shape(w)
            want = [e.get() for e in eager]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, np.asarray(w))


def test_a_program_with_views_in_place_steps_and_out_aliasing():
    h = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    for xp in (np, cp):
        a = xp.asarray(h.copy())
        b = a * 2 + 1
        r = b[..., ::-1]
        xp.add(b, a, out=a)  # out= an input of b's expression
        c = r - a
        b *= c
        xp.multiply(c, 0.5, out=c)
        if xp is np:
            want = [a, b, c, r]
        else:
            got = [a, b, c, r]
    for g, w in zip(got, want):
        _same(g, w)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_long_chains_cross_the_caps(dtype):
    h = np.arange(1, 13, dtype=dtype).reshape(3, 4)
    for xp in (np, cp):
        x = xp.asarray(h)
        y = x
        for i in range(120):
            y = y + x if i % 3 else y * 1 - x
        if xp is np:
            want = y
        else:
            got = y
    _same(got, want)


REDUCTIONS = [("sum", {}), ("sum", {"dtype": np.float64}), ("prod", {}), ("max", {}),
              ("min", {}), ("mean", {}), ("any", {}), ("all", {}), ("argmax", {}),
              ("argmin", {}), ("var", {})]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.sampled_from(REDUCTIONS), st.sampled_from([None, 0, -1]),
       st.integers(0, 40))
def test_fused_reductions_equal_the_reduction_of_the_stored_value(program, reduction, axis, i):
    """A reduction of a pending result computes the expression inside the reduction: its
    bits are those of the same reduction over the computed (stored) result, which is then
    read and reduced again; and the value is NumPy's (to summation error)."""
    inputs, steps = program
    name, kw = reduction
    with np.errstate(all="ignore"):
        want, ok = _run(np, inputs, steps)
        got, _ = _run(cp, inputs, steps, ok)
        x, h = got[i % len(got)], np.asarray(want[i % len(want)])
        if axis is not None and h.ndim == 0:
            axis = None
        if name == "prod" and h.dtype == np.float16:  # (NumPy's float16 product rounds
            kw = {"dtype": np.float32}                # each step: see reduce.cuh's plain)
        fused = cp.asarray(getattr(cp, name)(x, axis=axis, **kw))  # (host: NumPy scalars)
        if x._buf.pending is not None:
            x._buf.on_device()  # the stored value, then the unfused reduction of it
        stored = cp.asarray(getattr(cp, name)(x, axis=axis, **kw))
        ref = np.asarray(getattr(np, name)(h, axis=axis, **kw))
    _same(fused, np.asarray(stored.get()))
    if ref.dtype.kind in "fc":
        np.testing.assert_allclose(stored.get(), ref, rtol=1e-2 if h.dtype == np.float16
                                   else 1e-5, atol=1e-5)
    else:
        _same(stored, ref)
