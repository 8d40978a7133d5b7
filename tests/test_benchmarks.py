"""The benchmark helpers keep working: example workloads agree with NumPy, reports render.

Times nothing (performance is measured in benchmarks/, never asserted in tests).
"""
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy
import pytest

import cupynum

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


workloads = _load("example_workloads")
report = _load("report")


@pytest.mark.filterwarnings("ignore::cupynum.FallbackWarning")
@pytest.mark.parametrize("name", workloads.NAMES)
def test_example_workload_agrees_with_numpy(name):
    inputs, fn, rtol, atol = workloads.prepare(name, "small")
    ref = fn(numpy, *inputs)
    got = fn(cupynum, *[cupynum.asarray(a) for a in inputs])
    ref = ref if isinstance(ref, tuple) else (ref,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        g = numpy.asarray(g)
        assert g.shape == r.shape and g.dtype == r.dtype
        numpy.testing.assert_allclose(g, r, rtol=rtol, atol=atol)
    assert workloads.describe(name, "small")


def _data(with_cupy):
    rows = [
        {"workload": "a + b", "kind": "device", "bytes": 12, "numpy": 2e-3, "cupynum": 1e-4,
         "cupy": 2e-4 if with_cupy else None},
        {"workload": "example x", "kind": "example", "bytes": 0, "numpy": 1.5, "cupynum": None,
         "cupynum_error": "RuntimeError: boom", "cupy": 0.5 if with_cupy else None},
    ]
    meta = {"date": "2026-01-01T00:00:00+00:00", "quick": False, "backend": "cuda",
            "gpu": "NVIDIA H200 (143771 MiB)", "driver": "580.00", "python": "3.12",
            "platform": "Linux", "cpu": "x86_64",
            "versions": {"cupynum": "0.1.0", "numpy": "2.4", "cupy": "14.2" if with_cupy else None}}
    return {"meta": meta, "results": rows, "extra": {}}


@pytest.mark.parametrize("with_cupy", [True, False])
def test_markdown_report(with_cupy):
    text = report.markdown_report(_data(with_cupy))
    assert "NVIDIA H200" in text and "2026-01-01" in text
    assert ("cupynum / CuPy time" in text) == with_cupy
    assert "| a + b |" in text
    assert "RuntimeError: boom" in text  # errors are listed, not hidden
    if with_cupy:
        assert "| 0.50 |" in text  # 1e-4 / 2e-4


def test_markdown_report_copy_bandwidth():
    """Rows with a share of the device copy's bandwidth get it per library; the others '-'."""
    data = _data(True)
    data["results"][0].update(cupynum_frac_copy=0.976, cupy_frac_copy=0.6)
    lines = report.markdown_report(data).splitlines()
    head = next(line for line in lines if line.startswith("| workload"))
    assert head.endswith("| cupynum % of copy bandwidth | CuPy % of copy bandwidth |")
    row = next(line for line in lines if line.startswith("| a + b |"))
    assert row.endswith("| 98% | 60% |")
    assert next(line for line in lines if line.startswith("| example x |")).endswith("| - | - |")
    assert "copy bandwidth" not in report.markdown_report(_data(True))  # none measured


def test_chart(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "chart.png"
    assert report.draw_chart(_data(True), str(path)) is None
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


statements = _load("statements")


@pytest.mark.parametrize("label,stmt", statements.STATEMENTS)
def test_statement_agrees_with_numpy(label, stmt):
    assert statements.check(cupynum, stmt, statements._inputs(12)) is None


def test_statement_check_catches_a_wrong_result():
    class Off:  # NumPy, except that an array's in-place division divides by 10
        def __getattr__(self, name):
            return getattr(numpy, name)

        @staticmethod
        def asarray(v):
            return _Skewed(numpy.array(v))

    class _Skewed(numpy.ndarray):
        def __new__(cls, a):
            return a.view(cls)

        def __itruediv__(self, other):
            return numpy.ndarray.__itruediv__(self, other * 10 / 9)

    assert "differs" in statements.check(Off(), "A /= 9.0", statements._inputs(12))


def test_statement_profile_cost_runs(capsys):
    statements.profile_cost(8, 20, 1)
    out = capsys.readouterr().out
    assert out.count("\n") == len(statements.STATEMENTS) + 2
    assert "median cost per recorded op" in out


def test_statement_placements_run_side_by_side(tmp_path, capsys, monkeypatch):
    """--placements times cupynum once per CUPYNUM_PLACEMENT setting (this process's own
    here, beside NumPy; the others in subprocesses) and puts each setting's column beside
    NumPy's, with its ratio to NumPy."""
    asked = []
    real = statements.measure_placements
    monkeypatch.setattr(statements, "measure_placements",
                        lambda placements, args: asked.extend(placements) or real(placements, args))
    out = tmp_path / "statements.json"
    statements.main(["--n", "8", "--calls", "20", "--rounds", "1", "--libs", "numpy,cupynum",
                     "--placements", "auto,device", "--json", str(out)])
    data = json.loads(out.read_text())
    assert data["placements"] == ["auto", "device"]
    assert [r["statement"] for r in data["rows"]] == [s for s, _ in statements.STATEMENTS]
    for row in data["rows"]:
        for key in ("numpy", "cupynum auto", "cupynum device", "auto / numpy"):
            assert isinstance(row[key], float) and row[key] > 0, (row, key)
        assert "cupynum" not in row  # (renamed after its setting)
    own = os.environ.get("CUPYNUM_PLACEMENT", "auto")
    assert asked == [p for p in ("auto", "device") if p != own]
    out = capsys.readouterr().out
    assert "| cupynum auto us | cupynum device us |" in out
    assert "at most 3x NumPy's time (placement issue): " in out
