"""Sphinx configuration for cupynum's documentation.

    pip install ".[docs]"
    sphinx-build -W -b html docs docs/_build

The pages are MyST Markdown.  Two pages are generated at build time into docs/_generated/
(git-ignored): the API coverage table (from cupynum/_coverage.py) and the latest benchmark
results (from benchmarks/results/latest.json and latest.png, when those are committed).
The build needs no GPU: cupynum is imported on its host backend.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # document the source tree
sys.path.insert(0, os.path.join(HERE, "_ext"))
os.environ.setdefault("CUPYNUM_BACKEND", "host")  # no GPU needed to build the docs
os.environ.setdefault("CUPYNUM_FALLBACK", "silent")

import cupynum  # noqa: E402

project = "cupynum"
author = "the cupynum developers"
copyright = "the cupynum developers"
version = release = cupynum.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "cupynum_docs",  # docs/_ext/cupynum_docs.py: generated pages, docstring defaults
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # links such as differences.md#sync-points

autodoc_default_options = {"undoc-members": False}
autodoc_typehints = "none"  # signatures as written; NumPy-style types stay in the text
add_module_names = False

html_theme = "alabaster"
html_title = f"cupynum {release}"
html_static_path: list = []
html_theme_options = {
    "description": "NumPy for NVIDIA GPUs",
    "fixed_sidebar": True,
}
