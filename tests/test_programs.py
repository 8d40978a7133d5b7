"""The loop-heavy program suite (benchmarks/programs/) at its CI size: every program gives
NumPy's result under cupynum (the current backend), and the runner's check can fail.

Times nothing (the runner measures; tests never assert on speed).
"""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

import cupynum

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "benchmarks" / "programs" / "run.py"


def _load_runner():
    spec = importlib.util.spec_from_file_location("_program_suite_runner", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = _load_runner()
NAMES = runner.program_names()


def test_the_suite_has_its_programs():
    assert len(NAMES) >= 16
    for name in NAMES:
        program = runner.load(name)
        assert set(program.SIZES) == {"full", "small"}, name
        assert program.describe(program.SIZES["full"]), name


@pytest.mark.parametrize("name", NAMES)
def test_program_gives_numpys_result(name):
    program = runner.load(name)
    size = program.SIZES["small"]
    want = numpy.asarray(program.run(numpy, size))
    # A second NumPy run gives the same result: no program writes into its cached inputs
    # (under NumPy, np.asarray of them is no copy).
    again = numpy.asarray(program.run(numpy, size))
    assert runner.compare(again, want, program) is None
    got = program.run(cupynum, size)
    assert isinstance(got, cupynum.ndarray)
    got = cupynum.asnumpy(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert runner.compare(got, want, program) is None


class _Tolerance:
    RTOL = 1e-6
    ATOL = 0


def test_compare_finds_each_kind_of_difference():
    want = numpy.linspace(1.0, 2.0, 1000)
    assert runner.compare(want * (1 + 1e-8), want, _Tolerance) is None
    assert "values differ" in runner.compare(want * (1 + 1e-5), want, _Tolerance)
    assert "shape" in runner.compare(want[:-1], want, _Tolerance)
    assert "dtype" in runner.compare(want.astype(numpy.float32), want, _Tolerance)
    counts = numpy.arange(1000)
    off_by_one = counts.copy()
    off_by_one[:2] += 1
    assert "2 of 1000" in runner.compare(off_by_one, counts, object())

    class Lenient:
        DIFFERING_FRACTION = 2e-3

    assert runner.compare(off_by_one, counts, Lenient) is None
    off_by_one[:3] += 1
    assert runner.compare(off_by_one, counts, Lenient) is not None


def test_runner_reports_checked_results(tmp_path):
    out = tmp_path / "programs.json"
    proc = subprocess.run(
        [sys.executable, str(RUNNER), "--small", "--only", "heat1d,prefix_sum",
         "--libs", "numpy,auto", "--reps", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "| heat1d |" in proc.stdout and "geometric mean" in proc.stdout
    data = json.loads(out.read_text())
    assert [p["program"] for p in data["programs"]] == ["heat1d", "prefix_sum"]
    for p in data["programs"]:
        assert p["results"]["numpy"]["status"] == "ok"
        auto = p["results"]["auto"]
        assert auto["status"] == "ok" and auto["checked"] is True
        assert len(auto["times"]) == 1 and auto["best"] > 0
    assert data["meta"]["libraries"]["auto"]["env"] == {"CUPYNUM_PLACEMENT": "auto"}


def test_runner_in_turns(tmp_path):
    """``--turns``: each program's libraries timed in turns, a run each per round, results
    checked against NumPy's as in the default mode."""
    out = tmp_path / "programs.json"
    proc = subprocess.run(
        [sys.executable, str(RUNNER), "--small", "--only", "heat1d,trisolve", "--turns",
         "--libs", "numpy,auto,device", "--reps", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "libraries in turns" in proc.stdout and "| trisolve |" in proc.stdout
    data = json.loads(out.read_text())
    assert data["meta"]["turns"] is True
    assert [p["program"] for p in data["programs"]] == ["heat1d", "trisolve"]
    for p in data["programs"]:
        for key in ("numpy", "auto", "device"):
            r = p["results"][key]
            assert r["status"] == "ok", (p["program"], key, r.get("error"))
            assert len(r["times"]) == 2 and r["best"] == min(r["times"])
            assert r["first"] > 0
        assert p["results"]["auto"]["checked"] is True
        assert p["results"]["device"]["checked"] is True
    assert data["meta"]["libraries"]["device"]["env"] == {"CUPYNUM_PLACEMENT": "device"}
