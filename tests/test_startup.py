"""A fresh process's first arrays (docs/guide/placement.md): under ``auto`` a program whose
arrays all stay on the host creates no CUDA context; the first array that needs the device
makes the CUDA backend then.  Each case runs in a fresh interpreter (this process's backend
is made by conftest)."""
import os
import subprocess
import sys

import pytest

from cupynum import _backends

ON_CUDA = _backends.name() == "cuda"


def _fresh(code: str, **env) -> str:
    environ = {**os.environ, "CUPYNUM_PLACEMENT": "auto", **env}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=environ, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.strip().splitlines()[-1]


@pytest.mark.gpu
@pytest.mark.skipif(not ON_CUDA, reason="needs the CUDA backend")
def test_a_program_on_small_arrays_creates_no_cuda_context():
    out = _fresh("""
import numpy as np, cupynum as cp
from cupynum._backends.cuda import runtime
a = cp.arange(100.0)
b = (a * 2.0 + 1.0).sum()
c = cp.asarray(np.ones((10, 10))) @ cp.ones(10)
assert a.device.id == 0 and cp.placement(a) == "host"
cp.cuda.synchronize()
before = runtime.is_initialized()
big = cp.ones(1 << 20) * 2.0
print(before, runtime.is_initialized(), cp.placement(big), float(big.sum()), float(b))
""")
    assert out == "False True device 2097152.0 10000.0"


@pytest.mark.gpu
@pytest.mark.skipif(not ON_CUDA, reason="needs the CUDA backend")
def test_synchronize_waits_whenever_there_is_a_context():
    """Without a context no device work can be queued: ``synchronize`` returns at once and
    makes none.  A context made without the backend (a user's stream) is waited for."""
    out = _fresh("""
import cupynum as cp
from cupynum._backends.cuda import runtime
waits = []
real = runtime.synchronize
runtime.synchronize = lambda: (waits.append(1), real())[1]
a = cp.ones(100) + 1.0
cp.cuda.synchronize()
before = (len(waits), runtime.is_initialized())
stream = cp.cuda.Stream()
cp.cuda.synchronize()
from cupynum import _backends
print(before, len(waits), runtime.is_initialized(), type(_backends._backend).__name__)
""")
    assert out == "(0, False) 1 True _DeviceToCome"


def test_the_device_backend_s_traits_are_its_class_attributes():
    """The stand-in answers the CUDA backend's traits without making it: they must be the
    backend class's own."""
    from cupynum._backends.cuda import CudaTraits
    from cupynum._backends.cuda.backend import CudaBackend

    from cupynum._backends.base import Backend

    traits = {k: v for k, v in vars(CudaTraits).items() if not k.startswith("_")}
    assert traits and all(getattr(CudaBackend, k) == v for k, v in traits.items())
    # (every plain attribute of the backend contract is a trait: asking it makes nothing)
    plain = {k for k, v in vars(Backend).items() if not k.startswith("_")
             and isinstance(v, (bool, int, float, str))}
    assert plain <= set(traits)
    stand_in = _backends._DeviceToCome(CudaTraits)
    assert all(getattr(stand_in, k) == v for k, v in traits.items())
    assert stand_in.side == "device" and stand_in.cuda_memory is True
