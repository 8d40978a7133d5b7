"""Probe for a usable CUDA driver and GPU, once per process, and the error helper.

Why so careful: without a driver, ``cuda.bindings.driver.cuInit`` raises
``DynamicLibNotFoundError``, and a *second* failing driver call in the same process has been
seen to hang on a lock inside cuda.bindings.  So the probe asks the system loader for
``libcuda.so.1`` with ctypes (cheap, never hangs) and calls its ``cuInit(0)`` and
``cuDeviceGetCount`` through that handle, exactly once, after checking that cuda.bindings is
installed (without importing it).  cuda.bindings itself is imported when the CUDA backend
is made: a program whose arrays all stay on the host (placement ``auto``) never pays for its
import (tens of milliseconds), nor creates a context.  The answer is cached for the life of
the process; nothing here raises or prints.

cuda.bindings is imported inside functions: ``import cupynum`` must not pay for it.
"""
from __future__ import annotations

import ctypes
import importlib.util
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
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:  # no driver installed: never call into cuda.bindings
            why = f"libcuda.so.1 not loadable ({e})"
        else:
            try:
                if importlib.util.find_spec("cuda.bindings") is None:
                    raise ImportError("cuda-bindings is not installed")
                # (the two calls through the loader's handle: cuda.bindings is imported when
                # the backend is made, not to answer whether there is a GPU)
                err = lib.cuInit(0)
                if err:
                    why = f"cuInit failed: {error_name(err)}"
                else:
                    count = ctypes.c_int(0)
                    err = lib.cuDeviceGetCount(ctypes.byref(count))
                    if err:
                        why = f"cuDeviceGetCount failed: {error_name(err)}"
                    elif count.value < 1:
                        why = "the CUDA driver reports no GPU"
                    else:
                        ok = True
            except BaseException as e:  # ImportError, ...
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
