"""Every backend implements exactly the contract of ``cupynum/_backends/base.py`` (names and
signatures), so an operation cannot be added to one backend only; backend modules import
nothing above ``_backends``.  No GPU needed: the classes are inspected, not instantiated."""
import ast
import inspect
from pathlib import Path

import pytest

from cupynum._backends import base
from cupynum._backends.base import Backend
from cupynum._backends.cuda.backend import CudaBackend
from cupynum._backends.host import HostBackend
from cupynum._backends.simulated import SimulatedBackend

BACKENDS = [HostBackend, CudaBackend, SimulatedBackend]
PACKAGE = Path(base.__file__).resolve().parents[1]  # cupynum/


def _public(cls):
    return {n for n in dir(cls) if not n.startswith("_")}


def _methods(cls):
    return {n for n in _public(cls) if callable(getattr(cls, n))}


def _parameters(fn):
    """A signature without annotations: names, kinds and defaults."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


CONTRACT = _methods(Backend)


def test_contract_is_complete_and_documented():
    assert len(CONTRACT) >= 30
    for name in CONTRACT:
        assert inspect.getdoc(getattr(Backend, name)), f"Backend.{name} has no docstring"
    assert set(base.COMPUTE_OPS) <= CONTRACT
    for flag in ("host_memory", "cuda_memory", "gram_svd"):
        assert getattr(Backend, flag) is False  # the default: the generic path


@pytest.mark.parametrize("cls", BACKENDS, ids=lambda c: c.__name__)
def test_backend_implements_exactly_the_contract(cls):
    assert issubclass(cls, Backend)
    assert not cls.__abstractmethods__, f"{cls.__name__} lacks {sorted(cls.__abstractmethods__)}"
    assert _public(cls) == _public(Backend), (
        f"{cls.__name__} beyond the contract: {sorted(_public(cls) - _public(Backend))}")
    for name in CONTRACT:
        assert _parameters(getattr(cls, name)) == _parameters(getattr(Backend, name)), (
            f"{cls.__name__}.{name}{inspect.signature(getattr(cls, name))} differs from "
            f"Backend.{name}{inspect.signature(getattr(Backend, name))}")
    for flag in ("host_memory", "cuda_memory", "gram_svd"):
        assert type(getattr(cls, flag)) is bool
    assert isinstance(cls.name, str) and cls.name


def test_optional_capabilities_default_to_the_generic_path():
    stubs = {n: (lambda self, *a, **k: None) for n in Backend.__abstractmethods__}
    minimal = type("Minimal", (Backend,), stubs)()  # only what is required
    assert minimal.gather_flat(None, None, None) is False
    assert minimal.mask_select(None, None) is None
    assert minimal.layout_launcher(None, (), ()) is None
    with pytest.raises(TypeError):  # one required operation missing: no backend
        type("Incomplete", (Backend,), {n: f for n, f in stubs.items() if n != "reduce"})()


# The bottom layer (docs/internals.md, the layer table): data and settings that import only
# each other, which a backend may read (the op table lists the kernels to build).
BELOW_BACKENDS = {"cupynum._ops", "cupynum._dtypes", "cupynum._config"}


def _imports(path: Path):
    """Absolute names of the modules ``path`` imports (module level and in functions)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            root = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(root + ([node.module] if node.module else []))
            for alias in node.names:  # ``from .. import counters`` imports a module
                sub = PACKAGE.parent / Path(*(mod + "." + alias.name).split("."))
                yield mod + "." + alias.name if (
                    sub.with_suffix(".py").exists() or sub.is_dir()) else mod


def test_backend_modules_import_nothing_above_backends():
    """Not even the package's own ``_backends.get()``: a backend never asks which backend
    runs (only the selector, ``_backends/__init__.py``, is exempt: it reads the setting)."""
    backends = PACKAGE / "_backends"
    for path in sorted(backends.rglob("*.py")):
        rel = path.relative_to(backends).as_posix()
        if rel == "__init__.py":
            continue
        for mod in _imports(path):
            if mod.startswith("cupynum") and mod not in BELOW_BACKENDS:
                assert mod.startswith("cupynum._backends."), f"_backends/{rel} imports {mod}"


def test_the_bottom_layer_imports_only_itself():
    for mod in BELOW_BACKENDS:
        path = PACKAGE / (mod.split(".")[1] + ".py")
        assert {m for m in _imports(path) if m.startswith("cupynum")} <= BELOW_BACKENDS, mod


def test_import_walker_sees_upward_imports():
    assert "cupynum._ops" in set(_imports(PACKAGE / "_backends/cuda/reduction.py"))
    assert "cupynum._config" in set(_imports(PACKAGE / "_backends/__init__.py"))
    assert "cupynum._backends" in set(_imports(PACKAGE / "_array.py"))  # (get() lives there)
    assert "cupynum._backends.base" in set(_imports(PACKAGE / "_backends/host.py"))
