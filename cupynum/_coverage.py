"""Which NumPy names cupynum implements natively: the data behind the docs' API coverage page.

For every public name of ``numpy``, ``numpy.linalg``, ``numpy.fft``, ``numpy.random`` and
every public attribute of ``numpy.ndarray``, one row saying how cupynum provides it:

``native``
    a real attribute of the cupynum module (``name in vars(cupynum)``, or of
    ``cupynum.linalg``...), or defined on ``cupynum.ndarray``.  NumPy's own dtypes and
    constants that cupynum re-exports count here, as the namespace holds them.
``fallback``
    a NumPy function (or submodule, or an object such as ``mgrid`` or ``vectorize`` whose
    results are arrays) reached through the module ``__getattr__``: it runs through NumPy on
    the host, with a ``cupynum.FallbackWarning`` (internals.md principle 3).
``numpy``
    a NumPy class, exception or constant reached through ``__getattr__``: NumPy's own object,
    unwrapped, which works unchanged.
``missing``
    an ``ndarray`` attribute that ``cupynum.ndarray`` does not define.

Needs NumPy and cupynum only (no Sphinx): ``docs/conf.py`` renders the page from it and
``tests/test_docs_coverage.py`` checks its counts.
"""
from __future__ import annotations

import importlib
import types
import warnings
from dataclasses import dataclass, field

import numpy

STATUSES = ("native", "fallback", "numpy", "missing")


@dataclass
class Section:
    title: str  # "numpy.linalg"
    ours: str  # "cupynum.linalg"
    rows: list = field(default_factory=list)  # (name, kind, status)

    @property
    def counts(self) -> dict:
        c = dict.fromkeys(STATUSES, 0)
        for _, _, status in self.rows:
            c[status] += 1
        c["total"] = len(self.rows)
        return c


def public_names(obj) -> list:
    """Sorted public names: a module's ``__all__`` (else ``dir``), a class's ``dir``."""
    names = getattr(obj, "__all__", None) if isinstance(obj, types.ModuleType) else None
    if names is None:
        names = dir(obj)
    return sorted({n for n in names if not n.startswith("_")})


def _get(obj, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return getattr(obj, name)
        except Exception:  # noqa: BLE001 - a name NumPy lists but will not give
            return None


def kind_of(obj) -> str:
    if isinstance(obj, numpy.ufunc):
        return "ufunc"
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "constant"


def module_section(np_module, cpn_module) -> Section:
    ours = vars(cpn_module)
    sec = Section(np_module.__name__, cpn_module.__name__)
    for name in public_names(np_module):
        kind = kind_of(_get(np_module, name))
        if name in ours:
            status = "native"
        elif kind in ("function", "ufunc", "module") or _wrapped(cpn_module, name):
            status = "fallback"
        else:
            status = "numpy"
        sec.rows.append((name, kind, status))
    return sec


def _wrapped(cpn_module, name) -> bool:
    """A NumPy object that ``__getattr__`` hands out wrapped, so that its results come back
    as cupynum arrays (``vectorize``, ``mgrid``...)."""
    return getattr(_get(cpn_module, name), "__cupynum_fallback__", False)


def ndarray_section(cpn_ndarray) -> Section:
    sec = Section("numpy.ndarray", "cupynum.ndarray")
    for name in public_names(numpy.ndarray):
        attr = getattr(numpy.ndarray, name)
        kind = "method" if callable(attr) else "attribute"
        status = "native" if hasattr(cpn_ndarray, name) else "missing"
        sec.rows.append((name, kind, status))
    return sec


def coverage() -> list:
    """The sections, in the page's order."""
    import cupynum

    subs = ("linalg", "fft", "random")
    ours = [importlib.import_module(f"cupynum.{sub}") for sub in subs]  # (imported lazily)
    for lazy in ("emath", "lib"):  # (lazy too, and without sections of their own)
        importlib.import_module(f"cupynum.{lazy}")
    for name in cupynum._LAZY_NAMES:  # (names of ours imported on first use: fuse, ...)
        getattr(cupynum, name)
    sections = [module_section(numpy, cupynum)]
    for sub, mod in zip(subs, ours):
        sections.append(module_section(importlib.import_module(f"numpy.{sub}"), mod))
    sections.append(ndarray_section(cupynum.ndarray))
    return sections


_LABEL = {"native": "native", "fallback": "host fallback", "numpy": "NumPy's object",
          "missing": "missing"}


def render_markdown(sections=None) -> str:
    """The coverage page (MyST Markdown)."""
    sections = coverage() if sections is None else sections
    import cupynum

    out = [
        "# API coverage",
        "",
        f"Generated when these docs were built, from cupynum {cupynum.__version__} and "
        f"NumPy {numpy.__version__}.",
        "",
        "- **native**: cupynum has its own implementation (a real attribute of the cupynum "
        "module, or defined on `cupynum.ndarray`). NumPy's dtypes and constants that "
        "cupynum re-exports count here.",
        "- **host fallback**: the NumPy function runs on the host with copies of the "
        "arguments, with a `cupynum.FallbackWarning` (see [the fallback](../guide/dispatch.md)).",
        "- **NumPy's object**: a NumPy class, exception or constant, given as it is.",
        "- **missing**: an `ndarray` attribute that `cupynum.ndarray` lacks.",
        "",
        "| section | names | native | host fallback | NumPy's object | missing |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in sections:
        c = s.counts
        out.append(f"| [`{s.title}`](#{_anchor(s.title)}) | {c['total']} | {c['native']} | "
                   f"{c['fallback']} | {c['numpy']} | {c['missing']} |")
    for s in sections:
        c = s.counts
        pct = 100.0 * c["native"] / c["total"] if c["total"] else 0.0
        out += ["", f"({_anchor(s.title)})=", f"## `{s.title}`", "",
                f"{c['native']} of {c['total']} names native in `{s.ours}` ({pct:.0f}%).", "",
                "| name | kind | in cupynum |", "| --- | --- | --- |"]
        for name, kind, status in s.rows:
            out.append(f"| `{name}` | {kind} | {_LABEL[status]} |")
    return "\n".join(out) + "\n"


def _anchor(title: str) -> str:
    return "coverage-" + title.replace(".", "-")


def write_page(path) -> None:
    """Write the page, touching the file only when its text changed."""
    import os

    text = render_markdown()
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
