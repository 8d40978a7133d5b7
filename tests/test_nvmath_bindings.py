"""The nvmath binding loader: one binding module, without importing the rest of nvmath."""

import subprocess
import sys

import pytest

pytest.importorskip("nvmath.bindings.cublas")

_SCRIPT = r"""
import sys
from cupynum._backends.cuda.nvmath_bindings import load
cufft = load("cufft")
assert cufft.__name__ == "nvmath.bindings.cufft", cufft.__name__
assert hasattr(cufft, "xt_make_plan_many")
assert "nvmath" not in sys.modules and "nvmath.bindings" not in sys.modules
assert not any(m.startswith(("nvmath.fft", "nvmath.linalg", "cuda.core")) for m in sys.modules)
assert load("cufft") is cufft
import nvmath, nvmath.bindings
assert nvmath.bindings.cufft is cufft
assert load("cublas") is nvmath.bindings.cublas
print("ok")
"""


def test_loads_one_binding_then_lets_nvmath_import_normally():
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
