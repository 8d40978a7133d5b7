"""Sphinx extension for cupynum's docs: pages generated at build time, docstring defaults.

- ``_generated/coverage.md``: the API coverage table, from ``cupynum._coverage``.
- ``_generated/benchmark-results.inc`` (included by ``benchmarks.md``): the latest
  side-by-side results, from ``benchmarks/results/latest.json`` and ``latest.png`` when
  they exist, else a note that none are committed yet.
- A cupynum function without a docstring gets one line pointing at NumPy's.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.dirname(HERE)
ROOT = os.path.dirname(DOCS)
RESULTS = os.path.join(ROOT, "benchmarks", "results")


def _write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _report_module():
    spec = importlib.util.spec_from_file_location(
        "cupynum_bench_report", os.path.join(ROOT, "benchmarks", "report.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def benchmark_fragment(out_dir) -> str:
    path = os.path.join(RESULTS, "latest.json")
    if not os.path.exists(path):
        return ("```{note}\nNo results are committed yet: `benchmarks/results/latest.json` "
                "does not exist. The commands below produce it.\n```\n")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    report = _report_module()
    text = report.markdown_report(data, heading_level=2)
    png = os.path.join(RESULTS, "latest.png")
    if os.path.exists(png):
        shutil.copyfile(png, os.path.join(out_dir, "benchmark-latest.png"))
        text = ("![time per workload and library; cupynum/CuPy ratio]"
                "(/_generated/benchmark-latest.png)\n\n" + text)
    return text


def generate(app):
    from cupynum import _coverage

    out = os.path.join(app.srcdir, "_generated")
    os.makedirs(out, exist_ok=True)
    _write_if_changed(os.path.join(out, "coverage.md"), _coverage.render_markdown())
    _write_if_changed(os.path.join(out, "benchmark-results.inc"), benchmark_fragment(out))


def default_docstring(app, what, name, obj, options, lines):
    """An undocumented cupynum function, class or method that NumPy also has points there."""
    parts = name.split(".")
    if lines or parts[0] != "cupynum" or what not in ("function", "method", "class"):
        return
    target = numpy
    for part in parts[1:]:
        target = getattr(target, part, None)
        if target is None:
            return
    lines.append(f"As ``{'.'.join(['numpy'] + parts[1:])}``: NumPy's documentation applies.")


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", default_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
