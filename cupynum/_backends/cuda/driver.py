"""Probe for a usable CUDA driver and GPU, once per process, and the error helper.

Why so careful: without a driver, ``cuda.bindings.driver.cuInit`` raises
``DynamicLibNotFoundError``, and a *second* failing driver call in the same process has been
seen to hang on a lock inside cuda.bindings.  So we first ask the system loader for
``libcuda.so.1`` with ctypes (cheap, never hangs); only if that works do we touch
cuda.bindings, and then only ``cuInit(0)`` and ``cuDeviceGetCount`` exactly once.  The answer
is cached for the life of the process; nothing here raises or prints.

cuda.bindings is imported inside functions: ``import cupynum`` must not pay for it.
"""
from __future__ import annotations

import ctypes
import threading

__all__ = ["CUDAError", "available", "reason", "check", "error_name"]


class CUDAError(RuntimeError):
    """A CUDA driver call failed.  ``.code`` is the CUresult as an int, ``.name`` its name."""

    def __init__(self, code: int, name: str, what: str = ""):
        self.code = int(code)
        self.name = name
        msg = f"{name} ({self.code})"
        super().__init__(f"{what}: {msg}" if what else msg)


_lock = threading.Lock()
_available: bool | None = None  # None: not probed yet
_reason = ""


def available() -> bool:
    """True when a CUDA driver loads, initialises, and reports at least one GPU."""
    a = _available
    if a is None:
        a = _probe()
    return a


def reason() -> str:
    """Why ``available()`` is False ('' when it is True or was not asked yet)."""
    available()
    return _reason


def _probe() -> bool:
    global _available, _reason
    with _lock:
        if _available is not None:
            return _available
        ok = False
        why = ""
        try:
            ctypes.CDLL("libcuda.so.1")
        except OSError as e:  # no driver installed: never call into cuda.bindings
            why = f"libcuda.so.1 not loadable ({e})"
        else:
            try:
                from cuda.bindings import driver

                (err,) = driver.cuInit(0)
                if err:
                    why = f"cuInit failed: {error_name(err)}"
                else:
                    err, count = driver.cuDeviceGetCount()
                    if err:
                        why = f"cuDeviceGetCount failed: {error_name(err)}"
                    elif count < 1:
                        why = "the CUDA driver reports no GPU"
                    else:
                        ok = True
            except BaseException as e:  # ImportError, DynamicLibNotFoundError, ...
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                why = f"{type(e).__name__}: {e}"
        _reason = why
        _available = ok
        return ok


def error_name(err) -> str:
    """'CUDA_ERROR_OUT_OF_MEMORY' for a CUresult (without calling the driver)."""
    name = getattr(err, "name", None)
    if name:
        return name
    try:
        from cuda.bindings import driver

        return driver.CUresult(int(err)).name
    except Exception:
        return f"CUresult {int(err)}"


def check(err, what: str = "") -> None:
    """Raise ``CUDAError`` for a non-success CUresult (CUresult is an int subclass)."""
    if err:
        raise CUDAError(int(err), error_name(err), what)
