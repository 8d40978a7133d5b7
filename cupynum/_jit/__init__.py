"""Python functions as kernels: ``vectorize`` and ``fuse`` (docs/guide/vectorize.md).

``translate``: a scalar function's AST to a C++ functor; ``kernel``: that functor as a CUDA
elementwise kernel; ``vectorize`` and ``fuse``: the public objects.
"""
from .fuse import fuse
from .vectorize import VectorizeFallbackWarning, vectorize

__all__ = ["vectorize", "fuse", "VectorizeFallbackWarning"]
