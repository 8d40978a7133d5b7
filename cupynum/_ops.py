"""The op table: one row per NumPy ufunc.

A row names the NumPy ufunc and the C++ functor (namespace ``cpn`` in ``kernels/``) that
computes it.  Everything else comes from NumPy itself, so it cannot drift: ``nin``,
``nout``, ``identity`` and the type loops are read off ``numpy.<name>``, keeping the loops
over the dtypes cupynum stores (``SUPPORTED_CHARS``).  Aliases are extra public names
(``numpy.abs is numpy.absolute``); ufuncs that NumPy exposes as distinct objects
(``radians`` and ``deg2rad``) are distinct rows, possibly sharing a functor.

Functor convention (see kernels/README.md): for ``nout == 1`` the functor returns the
output value, ``out0 = cpn::<functor>{}(in0, ...)`` computed in the loop dtypes; for
``nout == 2`` it is called as ``cpn::<functor>{}(in0, ..., out0, out1)`` with references.
One functor serves every loop of its row: C++ overloads pick the bool, integer, float and
complex bodies, so the table needs no per-loop functor.  float16 loops compute in float
and round once on store, as NumPy does, except rows with ``half_native=True`` (spacing,
nextafter), whose float16 loops pass ``cpn::half`` (the raw bits) to the functor.
Kernels with a complex operand include ``cpn/complex.cuh``, all others ``cpn/real.cuh``
(``header_for``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

# bool, signed and unsigned ints, float16/32/64, complex64/128 (as NumPy type chars).
SUPPORTED_CHARS = "?bBhHiIlLqQefdFD"
SUPPORTED_DTYPES = frozenset(np.dtype(c) for c in SUPPORTED_CHARS)

# C++ storage type of each dtype in kernels (cpn/common.cuh, half.cuh, complex.cuh).
CPP_TYPES = {
    "?": "bool", "b": "cpn::int8_t", "B": "cpn::uint8_t", "h": "cpn::int16_t",
    "H": "cpn::uint16_t", "i": "cpn::int32_t", "I": "cpn::uint32_t", "l": "cpn::int64_t",
    "L": "cpn::uint64_t", "q": "cpn::int64_t", "Q": "cpn::uint64_t", "e": "cpn::half",
    "f": "float", "d": "double", "F": "cpn::complex64", "D": "cpn::complex128",
}

# One char per dtype: the first of SUPPORTED_CHARS with that dtype ('q' -> 'l' on LP64).
_CANONICAL = {}
for _c in SUPPORTED_CHARS:
    _CANONICAL.setdefault(np.dtype(_c).str, _c)
del _c


def canonical_char(c: str) -> str:
    return _CANONICAL[np.dtype(c).str]


class UfuncDef(NamedTuple):
    name: str  # NumPy's name: numpy.<name> is the reference ufunc
    functor: str  # cpn::<functor> in kernels/
    aliases: tuple[str, ...] = ()
    half_native: bool = False  # float16 loops pass cpn::half, not float, to the functor
    # A reduction's neutral element, by rule (see neutral_element); None: the op has none,
    # so its reductions are not reorderable (they combine strictly left to right).
    neutral: str | None = None
    # Comparisons take Python ints by value: one out of the loop dtype's range still compares
    # (NumPy's result, computed on the host) instead of raising.
    comparison: bool = False

    @property
    def ufunc(self) -> np.ufunc:
        return getattr(np, self.name)

    @property
    def nin(self) -> int:
        return self.ufunc.nin

    @property
    def nout(self) -> int:
        return self.ufunc.nout

    @property
    def identity(self):
        return self.ufunc.identity

    @property
    def loops(self) -> tuple[tuple[str, ...], ...]:
        return type_loops(self.name)

    @property
    def public_names(self) -> tuple[str, ...]:
        return (self.name,) + self.aliases

    @property
    def reorderable(self) -> bool:
        """Whether a reduction may combine elements in any grouping (it has a neutral
        element to start every partial combination from)."""
        return self.neutral is not None


def neutral_element(row: UfuncDef, dt: np.dtype):
    """The NumPy scalar of dtype ``dt`` that every partial combination of ``row``'s
    reduction may start from (``op(neutral, x) == x`` bit for bit), or None.  The rules:
    ``-zero`` (add: -0.0 keeps a sum of -0.0 negative), ``zero``, ``one``, ``true``,
    ``false``, ``all_bits`` (every bit set), ``highest``/``lowest`` (the type's largest or
    smallest value, inf for floats) and ``nan_or_highest``/``nan_or_lowest`` (the same, but
    NaN for floats: fmin and fmax skip NaN)."""
    rule = row.neutral
    if rule is None:
        return None
    k, t = dt.kind, dt.type
    if rule == "-zero":
        return t(complex(-0.0, -0.0)) if k == "c" else t(-0.0) if k == "f" else t(0)
    if rule == "zero":
        return t(0)
    if rule == "one":
        return t(1)
    if rule in ("true", "false"):
        return t(rule == "true")
    if rule == "all_bits":
        return t(True) if k == "b" else t(-1) if k == "i" else t(np.iinfo(dt).max)
    high = rule.endswith("highest")
    if k == "b":
        return t(high)
    if k in "iu":
        return t(np.iinfo(dt).max if high else np.iinfo(dt).min)
    v = np.nan if rule.startswith("nan_or_") else np.inf if high else -np.inf
    return t(complex(v, v)) if k == "c" else t(v)


def _row(name, *aliases, functor=None, half_native=False, neutral=None, comparison=False):
    return UfuncDef(name, functor or name, tuple(aliases), half_native, neutral, comparison)


# Every ufunc in NumPy's top-level namespace except the gufuncs (matmul, vecdot, matvec,
# vecmat), which are not elementwise.
# fmt: off
UFUNCS: tuple[UfuncDef, ...] = (
    _row("absolute", "abs"),
    _row("add", neutral="-zero"),
    _row("arccos", "acos"),
    _row("arccosh", "acosh"),
    _row("arcsin", "asin"),
    _row("arcsinh", "asinh"),
    _row("arctan", "atan"),
    _row("arctan2", "atan2"),
    _row("arctanh", "atanh"),
    _row("bitwise_and", neutral="all_bits"),
    _row("bitwise_count"),
    _row("bitwise_or", neutral="zero"),
    _row("bitwise_xor", neutral="zero"),
    _row("cbrt"),
    _row("ceil"),
    _row("conjugate", "conj"),
    _row("copysign"),
    _row("cos"),
    _row("cosh"),
    _row("deg2rad"),
    _row("degrees", functor="rad2deg"),
    _row("divide", "true_divide"),
    _row("divmod"),
    _row("equal", comparison=True),
    _row("exp"),
    _row("exp2"),
    _row("expm1"),
    _row("fabs"),
    _row("float_power"),
    _row("floor"),
    _row("floor_divide"),
    _row("fmax", half_native=True, neutral="nan_or_lowest"),
    _row("fmin", half_native=True, neutral="nan_or_highest"),
    _row("fmod"),
    _row("frexp"),
    _row("gcd"),
    _row("greater", comparison=True),
    _row("greater_equal", comparison=True),
    _row("heaviside"),
    _row("hypot"),
    _row("invert", "bitwise_invert", "bitwise_not"),
    _row("isfinite"),
    _row("isinf"),
    _row("isnan"),
    _row("isnat"),  # datetime/timedelta only: no loops over cupynum dtypes
    _row("lcm"),
    _row("ldexp"),
    _row("left_shift", "bitwise_left_shift"),
    _row("less", comparison=True),
    _row("less_equal", comparison=True),
    _row("log"),
    _row("log10"),
    _row("log1p"),
    _row("log2"),
    _row("logaddexp"),
    _row("logaddexp2"),
    _row("logical_and", neutral="true"),
    _row("logical_not"),
    _row("logical_or", neutral="false"),
    _row("logical_xor", neutral="false"),
    _row("maximum", half_native=True, neutral="lowest"),
    _row("minimum", half_native=True, neutral="highest"),
    _row("modf"),
    _row("multiply", neutral="one"),
    _row("negative"),
    _row("nextafter", half_native=True),
    _row("not_equal", comparison=True),
    _row("positive"),
    _row("power", "pow"),
    _row("rad2deg"),
    _row("radians", functor="deg2rad"),
    _row("reciprocal"),
    _row("remainder", "mod"),
    _row("right_shift", "bitwise_right_shift"),
    _row("rint"),
    _row("sign"),
    _row("signbit"),
    _row("sin"),
    _row("sinh"),
    _row("spacing", half_native=True),
    _row("sqrt"),
    _row("square"),
    _row("subtract"),
    _row("tan"),
    _row("tanh"),
    _row("trunc"),
)
# fmt: on

EXCLUDED = frozenset({"matmul", "vecdot", "matvec", "vecmat"})  # gufuncs, not elementwise

BY_NAME: dict[str, UfuncDef] = {row.name: row for row in UFUNCS}


def all_public_names() -> dict[str, UfuncDef]:
    """Every public name (NumPy name and aliases) -> its row."""
    return {name: row for row in UFUNCS for name in row.public_names}


@lru_cache(maxsize=None)
def type_loops(name: str) -> tuple[tuple[str, ...], ...]:
    """NumPy's type loops for ``name`` over supported dtypes, as tuples of dtype chars
    (inputs then outputs) in NumPy's order, with duplicate loops removed and one char per
    dtype (``l``/``L`` for 64-bit ints, never ``q``/``Q``, so ``'qQ->?'`` is ``lL?``)."""
    uf = getattr(np, name)
    seen, loops = set(), []
    for sig in uf.types:
        ins, outs = sig.split("->")
        chars = tuple(ins + outs)
        if not all(c in SUPPORTED_CHARS for c in chars):
            continue
        loop = tuple(canonical_char(c) for c in chars)
        if loop in seen:
            continue
        seen.add(loop)
        loops.append(loop)
    return tuple(loops)


def header_for(loop) -> str:
    """The kernels/ header a kernel over ``loop`` (dtype chars) includes."""
    return "cpn/complex.cuh" if any(np.dtype(c).kind == "c" for c in loop) else "cpn/real.cuh"


def compute_ctype(row: UfuncDef, char: str) -> str:
    """The C++ type the functor of ``row`` receives/returns for loop dtype ``char``:
    the storage type, except float16, which is computed as float unless half_native."""
    if np.dtype(char) == np.float16 and not row.half_native:
        return "float"
    return CPP_TYPES[char]
