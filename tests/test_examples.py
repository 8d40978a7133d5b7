"""The programs in examples/ run and agree with NumPy (``--small`` inputs).

Each example runs in a subprocess on the source tree, with ``CUPYNUM_BACKEND`` taken from
the environment (host when unset), and once with ``EXAMPLE_BACKEND=numpy``, which runs the
very same program on NumPy itself: if that run passes and the cupynum run does not, the
example is fine and cupynum is not.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# (dask_lstsq needs the `dask` extra, as tests/test_dask.py does: skipped without it)
EXAMPLES = ["black_scholes.py", "heat_equation.py", "kmeans.py", "conjugate_gradient.py",
            "nbody.py", "mlp.py",
            pytest.param("dask_lstsq.py", marks=pytest.mark.skipif(
                importlib.util.find_spec("dask") is None, reason="needs dask (the dask extra)"))]


def _run_example(name, tmp_path, example_backend):
    env = dict(os.environ)
    env.setdefault("CUPYNUM_BACKEND", "host")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["EXAMPLE_BACKEND"] = example_backend
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), "--small"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    return proc, output


@pytest.mark.parametrize("example_backend", ["cupynum", "numpy"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_agrees_with_numpy(name, example_backend, tmp_path):
    proc, output = _run_example(name, tmp_path, example_backend)
    assert proc.returncode == 0, output
    lines = proc.stdout.splitlines()
    assert any(line.startswith("agree: yes") for line in lines), output
    assert any(line.startswith("checksum: ") for line in lines), output
    runs_on = "on NumPy" if example_backend == "numpy" else "on cupynum"
    assert runs_on in lines[0], output
