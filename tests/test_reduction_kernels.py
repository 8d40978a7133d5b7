"""The reduction engine without a GPU: its programs compile with NVRTC (the default set that
``python -m cupynum precompile`` builds, plus complex, float16 and sequential units), each
kernel's parameters have the sizes the launchers pack (read back from the cubin)."""
from __future__ import annotations

import pytest

from cupynum._backends.cuda import reduction as red
from test_kernels_compile import _compile, needs_nvrtc, param_sizes

UNITS = [red.Unit("reduce", "add", "f", "f", "f"), red.Unit("reduce", "add", "e", "e", "e"),
         red.Unit("reduce", "maximum", "D", "D", "D"), red.Unit("reduce", "subtract", "b", "b", "b"),
         red.Unit("reduce", "logical_or", "F", "?", "?"), red.Unit("arg", "argmax", "d", "d", "l"),
         red.Unit("arg", "argmin", "F", "F", "l"), red.Unit("scan", "add", "i", "l", "l"),
         red.Unit("scan", "multiply", "e", "e", "e")]


def _expected(unit, kind):
    return [dt.itemsize for dt in red._layout(unit, kind)[0]]


@needs_nvrtc
@pytest.mark.parametrize("unit", UNITS, ids=lambda u: "-".join(u))
def test_unit_compiles_with_param_sizes(unit):
    from cupynum._backends.cuda import compiler

    cubin = compiler.compile_cubin(red.program_source([unit]), options=red.compile_options(),
                                   name=red.PROGRAM_NAME).cubin
    for kind, name in red.kernel_names(unit).items():
        assert param_sizes(cubin, name) == _expected(unit, kind), name


def test_default_units_cover_common_reductions():
    units = set(red.default_units())
    for c in "?bBhHiIlLefdFD":
        assert any(u.family == "arg" and u.inp == red._cchar(c) for u in units)
    assert red.Unit("reduce", "add", "f", "f", "f") in units
    assert red.Unit("reduce", "add", "b", "l", "l") in units  # NumPy's int8 sum is int64
    assert red.Unit("scan", "add", "f", "f", "f") in units


@pytest.mark.slow
@needs_nvrtc
def test_default_set_compiles():
    red.precompile()
