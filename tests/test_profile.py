"""cupynum.profile(): one row per outermost call, with its counts; nothing left behind."""
import os
import subprocess
import sys
import warnings

import numpy
import pytest

import cupynum
from cupynum import _profile


def test_records_outermost_calls_once_each():
    a = cupynum.arange(10.0)
    with cupynum.profile() as p:
        for _ in range(3):
            b = a + 1
            b[2] += 5
        m = cupynum.mean(b)  # mean's own sum is not a row of its own
        s = cupynum.asarray(b.sum())  # (a 0-d array: of a host array, sum is NumPy's scalar)
        f = float(s)
    assert p.ops["ndarray.__add__"].calls == 3
    assert p.ops["ndarray.__setitem__"].calls == 3
    assert p.ops["mean"].calls == 1 and p.ops["ndarray.sum"].calls == 1
    assert "sum" not in p.ops
    assert p.ops["ndarray.__float__"].calls == 1
    assert f == pytest.approx(float(numpy.arange(10.0).sum() + 10 + 5))
    assert float(m) == pytest.approx(f / 10)
    for stats in p.ops.values():
        assert stats.host_s >= 0 and stats.where <= {"host", "gpu"}


def test_ufunc_calls_and_submodules_are_rows():
    x = cupynum.linspace(0, 1, 8)
    with cupynum.profile() as p:
        cupynum.sin(x)
        cupynum.linalg.norm(x)
        cupynum.fft.fft(x)
    assert {"sin", "linalg.norm", "fft.fft"} <= set(p.ops)


def test_fallbacks_name_numpys_function():
    x = cupynum.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cupynum.FallbackWarning)
        with cupynum.profile() as p:
            cupynum.polynomial.polynomial.polyval(x, [1.0, 2.0])
    rows = [name for name in p.ops if name.startswith("fallback ")]
    assert rows and "polyval" in rows[0]


def test_device_counts_are_the_counters_deltas():
    from cupynum._backends import counters

    x = cupynum.ones(16)
    counters.reset()
    with cupynum.profile() as p:
        y = x * 2
        float(y.sum())
        inside = counters.snapshot()  # (closing the profile then waits for its GPU timings)
    total = {k: sum(getattr(s, k) for s in p.ops.values())
             for k in ("launches", "h2d_bytes", "d2h_bytes", "syncs")}
    assert total == inside


def test_wrappers_are_removed_on_exit():
    originals = (cupynum.ndarray.__add__, cupynum.sum, cupynum.ufunc.__call__,
                 cupynum.linalg.norm)
    with cupynum.profile():
        assert cupynum.sum is not originals[1]
    assert (cupynum.ndarray.__add__, cupynum.sum, cupynum.ufunc.__call__,
            cupynum.linalg.norm) == originals
    assert _profile._active is None


def test_one_profile_at_a_time_and_exceptions_still_close_it():
    with pytest.raises(RuntimeError):
        with cupynum.profile():
            with cupynum.profile():
                pass
    assert _profile._active is None
    with pytest.raises(ValueError):
        with cupynum.profile() as p:
            cupynum.ones(3).reshape(4)
    assert _profile._active is None and p.ops["ndarray.reshape"].calls == 1


def test_table_is_sorted_by_time_and_names_every_op():
    with cupynum.profile() as p:
        cupynum.zeros(5)
        cupynum.ones(5)
    text = str(p)
    header, *rows, footer = text.splitlines()
    assert header.split()[:3] == ["op", "calls", "where"]
    assert {r.split()[0] for r in rows} == {"zeros", "ones"}
    assert footer.startswith("2 ops, 2 calls")
    times = [p.ops[r.split()[0]].host_s + p.ops[r.split()[0]].gpu_s for r in rows]
    assert times == sorted(times, reverse=True)


def test_environment_variable_prints_the_table_at_exit(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, CUPYNUM_PROFILE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    env.setdefault("CUPYNUM_BACKEND", "host")
    code = "import cupynum as np\nx = np.ones(4) * 3\nprint(float(x.sum()))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300, check=True)
    assert proc.stdout.strip() == "12.0"
    assert "ndarray.__mul__" in proc.stderr and "ones" in proc.stderr
