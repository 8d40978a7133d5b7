"""nvmath-python's low-level library bindings, without nvmath's package import.

``import nvmath.bindings.cublas`` first runs ``nvmath/__init__.py``, which imports every binding
(cuBLASLt, cuSPARSE, cuDSS, cuTENSOR, ...), nvmath's FFT and matmul front ends and cuda.core:
about 0.4-0.5 s, paid by the first matmul, FFT or random call.  Each binding module
(``nvmath/bindings/<lib>.so``) needs only its own ``_internal`` loader and cuda.pathfinder, so we
import it with the two parent packages standing in as bare namespace modules (~35 ms).  The
stand-ins are removed again at once, so a later ``import nvmath`` by the user runs nvmath's own
``__init__`` and finds the binding already loaded.  If anything about that layout changes, we
fall back to the plain import.

Thread safety: while one thread imports a binding, ``sys.modules`` already holds it, partially
initialised (and the stand-ins come and go); a second thread must not take either.  Loads
are serialised by a lock and a module is handed out only from ``_loaded``, once its import
has finished.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
import types

_PARENTS = ("nvmath", "nvmath.bindings")
_loaded: dict = {}  # library -> module, fully imported
_lock = threading.RLock()


def load(library: str) -> types.ModuleType:
    """The module ``nvmath.bindings.<library>`` (e.g. ``"cublas"``, ``"cufft"``)."""
    module = _loaded.get(library)
    if module is not None:
        return module
    with _lock:
        module = _loaded.get(library)
        if module is None:
            module = _loaded[library] = _import(f"nvmath.bindings.{library}")
    return module


def _import(name: str) -> types.ModuleType:
    if name in sys.modules:  # imported, or being imported by the user: importlib waits
        return importlib.import_module(name)
    try:
        return _import_without_package_init(name)
    except ImportError:
        return importlib.import_module(name)


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.RLock()  # another thread may have held it at fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _import_without_package_init(name: str) -> types.ModuleType:
    if "nvmath" in sys.modules:  # nvmath is imported already: nothing left to save
        return importlib.import_module(name)
    spec = importlib.util.find_spec("nvmath")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("nvmath-python is not installed")
    root = spec.submodule_search_locations[0]
    stand_ins = {"nvmath": root, "nvmath.bindings": os.path.join(root, "bindings")}
    for package, path in stand_ins.items():
        module = types.ModuleType(package)
        module.__path__ = [path]
        module.__package__ = package
        sys.modules[package] = module
    try:
        return importlib.import_module(name)
    finally:
        for package in _PARENTS:
            sys.modules.pop(package, None)
