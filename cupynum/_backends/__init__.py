"""Backend selection: one backend per process, chosen on first use.

``CUPYNUM_BACKEND=auto`` (the default) picks CUDA only when a driver and a GPU are
present; the probe runs once and never raises (see ``cuda/driver.py``).  ``host`` is NumPy
over host memory; ``simulated`` is a device backend without a GPU (simulated.py).  What a
backend does is stated in base.py, the contract every backend implements.
"""
from __future__ import annotations

from .. import _config

_backend = None


def get():
    """The process's backend (created on first call)."""
    global _backend
    if _backend is None:
        _backend = _select(_config.BACKEND)
    return _backend


def _select(choice: str):
    if choice == "host":
        from .host import HostBackend

        return HostBackend()
    if choice == "simulated":
        from .simulated import SimulatedBackend

        return SimulatedBackend()
    from .cuda import driver

    if choice == "cuda":
        if not driver.available():
            raise RuntimeError(
                "CUPYNUM_BACKEND=cuda but no usable CUDA driver/GPU was found"
                + (f": {driver.reason()}" if hasattr(driver, "reason") else "")
            )
    elif not driver.available() or _forked_from_cuda():
        from .host import HostBackend  # (a forked child cannot use its parent's GPU)

        return HostBackend()
    from .cuda.backend import CudaBackend

    return CudaBackend()


def _forked_from_cuda() -> bool:
    from .cuda import runtime

    return runtime.forked()


def name() -> str:
    return get().name
