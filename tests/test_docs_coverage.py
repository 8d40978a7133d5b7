"""The docs' API coverage page (cupynum/_coverage.py) counts what the namespaces hold.

Fast and without Sphinx: the generator's rows and counts are checked against NumPy's
namespaces and ``vars()`` of cupynum's, and a sample of rows against what attribute access
on cupynum actually gives.
"""
import importlib
import types

import numpy
import pytest

import cupynum
from cupynum import _coverage

SUBMODULES = ["linalg", "fft", "random"]


@pytest.fixture(scope="module")
def sections():
    return {s.title: s for s in _coverage.coverage()}


def _public(names):
    return {n for n in names if not n.startswith("_")}


def test_sections(sections):
    assert list(sections) == ["numpy", "numpy.linalg", "numpy.fft", "numpy.random",
                              "numpy.ndarray"]


@pytest.mark.parametrize("sub", [None] + SUBMODULES)
def test_module_counts_match_the_namespaces(sections, sub):
    np_mod = numpy if sub is None else importlib.import_module(f"numpy.{sub}")
    cpn_mod = cupynum if sub is None else importlib.import_module(f"cupynum.{sub}")
    sec = sections[np_mod.__name__]
    expected = _public(getattr(np_mod, "__all__", dir(np_mod)))
    assert [r[0] for r in sec.rows] == sorted(expected)  # every public NumPy name, once
    native = expected & set(vars(cpn_mod))
    c = sec.counts
    assert c["total"] == len(expected)
    assert c["native"] == len(native)
    assert {r[0] for r in sec.rows if r[2] == "native"} == native
    assert c["native"] + c["fallback"] + c["numpy"] == c["total"]
    assert c["missing"] == 0


@pytest.mark.parametrize("sub", [None] + SUBMODULES)
def test_non_native_rows_resolve_as_labelled(sections, sub):
    np_mod = numpy if sub is None else importlib.import_module(f"numpy.{sub}")
    cpn_mod = cupynum if sub is None else importlib.import_module(f"cupynum.{sub}")
    for name, kind, status in sections[np_mod.__name__].rows:
        if status == "fallback" and kind in ("function", "ufunc"):
            assert getattr(getattr(cpn_mod, name), "__cupynum_fallback__", False), name
        elif status == "fallback":  # a submodule, or an object wrapped (vectorize, mgrid)
            obj = getattr(cpn_mod, name)
            assert isinstance(obj, types.ModuleType) or obj.__cupynum_fallback__, name
        elif status == "numpy":
            assert getattr(cpn_mod, name) is getattr(np_mod, name), name


def test_ndarray_counts(sections):
    sec = sections["numpy.ndarray"]
    expected = _public(dir(numpy.ndarray))
    assert [r[0] for r in sec.rows] == sorted(expected)
    native = {n for n in expected if hasattr(cupynum.ndarray, n)}
    assert sec.counts["native"] == len(native)
    assert sec.counts["missing"] == len(expected) - len(native)


def test_page_renders(sections):
    text = _coverage.render_markdown(list(sections.values()))
    assert text.startswith("# API coverage")
    for title, sec in sections.items():
        c = sec.counts
        assert f"| [`{title}`]" in text
        assert f"{c['native']} of {c['total']} names native" in text
    assert text.count("\n| `") == sum(len(s.rows) for s in sections.values())
