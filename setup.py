"""Package list for setuptools; everything else is in pyproject.toml.

Every ``cupynum*`` package found under cupynum/ is shipped, plus ``cupynum.kernels``,
which pyproject.toml maps to the top-level kernels/ folder (CUDA C++ headers, installed
as cupynum/kernels/).  pyproject.toml alone cannot add a mapped package to a discovered
list, hence this file.
"""
from setuptools import find_namespace_packages, setup

packages = find_namespace_packages(include=["cupynum*"], exclude=["*__pycache__*"])
setup(packages=sorted({*packages, "cupynum.kernels"}))
