"""A scalar Python function, translated to a C++ functor over the table functors.

``translate(func, arg_types)`` reads the function's source (``ast``) and writes a
``__host__ __device__`` struct with an ``operator()`` (``Translation.source``), following
the calling convention of the table functors (kernels/README.md): arguments and result in
their compute types (float for float16).  Every arithmetic, comparison and math operation
calls the table functor of its NumPy ufunc (``cpn::add``, ``cpn::floor_divide``,
``cpn::power``...) in the loop NumPy's type resolution picks, so integer wrap-around,
division by zero, NaN and signed zeros are NumPy's.

Types are NumPy's scalar rules (NEP 50), decided at translation: a value is *strong* (a
NumPy dtype: arguments, NumPy scalars, results of ufuncs) or *weak* (a Python ``bool``,
``int``, ``float``, ``complex``: literals, closure constants, ``math`` results, loop
counters), and each operation's loop is ``ufunc.resolve_dtypes`` of its operands' types.
A local keeps one type for the whole function; a variable that would change from one strong
type to another (``s = np.float32(0)``, then ``s = s + 1.0e0 * x`` of float64) cannot be
translated.  What cannot be translated raises ``Untranslatable`` naming the construct and
its line; the caller falls back to NumPy.
"""
from __future__ import annotations

import ast
import builtins
import hashlib
import inspect
import math
import textwrap
from typing import NamedTuple

import numpy as np

from .. import _ops

WEAK = {bool: "?", int: "l", float: "d", complex: "D"}  # Python scalar -> its C++ storage
_WEAK_RANK = {bool: 0, int: 1, float: 2, complex: 3}
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_MATH_FLOAT = {  # math.<name> -> ufunc computing it on float64 (result: a Python float)
    "sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin",
    "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
    "fabs": "fabs", "copysign": "copysign", "fmod": "fmod", "pow": "power",
    "degrees": "degrees", "radians": "radians", "exp2": "exp2", "cbrt": "cbrt",
    "hypot": "hypot",
}
_MATH_INT = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}  # result: a Python int
_MATH_BOOL = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
_BINOPS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
           ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.Pow: "power",
           ast.LShift: "left_shift", ast.RShift: "right_shift", ast.BitAnd: "bitwise_and",
           ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor"}
_CMPOPS = {ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater",
           ast.GtE: "greater_equal", ast.Eq: "equal", ast.NotEq: "not_equal"}
_UNOPS = {ast.USub: "negative", ast.UAdd: "positive", ast.Invert: "invert"}
_NUMPY_MODULES = ("numpy", "cupynum")  # np.<ufunc> and cupynum.<ufunc> both translate
# Reductions ``fuse`` runs after its kernel when the function returns one of them.
REDUCTIONS = frozenset({"sum", "prod", "max", "min", "amax", "amin", "mean", "any", "all",
                        "nansum", "nanprod", "nanmax", "nanmin"})


class Untranslatable(Exception):
    """The function uses ``construct`` (at ``line`` of its file), which has no translation."""

    def __init__(self, construct: str, line: int | None = None, filename: str = ""):
        self.construct, self.line, self.filename = construct, line, filename
        where = f" (line {line}{' of ' + filename if filename else ''})" if line else ""
        super().__init__(f"{construct}{where}")


class NeedsOutputType(Exception):
    """The returns differ in type: the output dtype is the first element's result's type."""


class Translation(NamedTuple):
    name: str          # the struct's name, in namespace cpn
    source: str        # the struct (needs cpn/real.cuh, or cpn/complex.cuh when complex)
    in_chars: tuple    # argument dtype chars (canonical)
    out_char: str      # the result's dtype char
    complex: bool      # some type involved is complex
    reduction: object  # fuse: (function name, args node, keywords) of a final reduction


class Val(NamedTuple):
    code: str
    t: object  # np.dtype (strong) or a Python type in WEAK (weak)
    const: object = None  # the Python value of a literal (NumPy checks their range)
    # a Python float's value rounded to float32, computed the short way where one is known
    # (``math.exp`` of a float32: ``cpn::exp_f32``, equal on every float), for the
    # operations that narrow it so (NEP 50: ``x * math.exp(-x)`` with x float32)
    as_float32: str | None = None


def _char(t) -> str:
    return WEAK[t] if t in WEAK else _ops.canonical_char(t.char)


def _ctype(t) -> str:
    return _ops.CPP_TYPES[_char(t)]


def _dtype(t) -> np.dtype:
    return np.dtype(_char(t))


def _is_weak(t) -> bool:
    return t in WEAK


def _conv(code: str, frm: str, to: str) -> str:
    return code if frm == to else f"cpn::cast<{to}>({code})"


def _conv_val(v, to: str) -> str:
    """``v``'s code converted to C++ type ``to`` (its float32 form where it has one)."""
    if to == "float" and v.as_float32 is not None:
        return v.as_float32
    return _conv(v.code, _ctype(v.t), to)


def _float_literal(v: float) -> str:
    if math.isnan(v):
        return "(-cpn::nan_v<double>())" if math.copysign(1, v) < 0 else "cpn::nan_v<double>()"
    if math.isinf(v):
        return "cpn::inf_v<double>()" if v > 0 else "(-cpn::inf_v<double>())"
    return f"{float(v).hex()}"  # exact (a C++17 hex literal)


def _int_literal(v: int, unsigned=False) -> str:
    # typed as the storage type (cpn::int64_t may be long, not long long, on the host)
    if unsigned:
        return f"cpn::uint64_t({v}ULL)"
    if v == -(2**63):
        return "cpn::int64_t(-9223372036854775807LL - 1)"
    return f"cpn::int64_t({v}LL)"


def literal(v) -> Val:
    """A Python or NumPy scalar as a C++ expression of its type."""
    if isinstance(v, np.generic):
        dt = v.dtype
        if dt.char not in _ops.SUPPORTED_CHARS:
            raise Untranslatable(f"a constant of dtype {dt}")
        inner = literal(v.item())
        if dt.kind == "u" and dt.itemsize == 8:
            inner = Val(_int_literal(int(v), unsigned=True), np.dtype("L"))
        return Val(_conv(inner.code, _ctype(inner.t), _ctype(dt)), dt)
    if isinstance(v, bool):
        return Val("true" if v else "false", bool, v)
    if isinstance(v, int):
        if not -(2**63) <= v < 2**63:
            raise Untranslatable(f"the integer constant {v} (beyond int64)")
        return Val(_int_literal(v), int, v)
    if isinstance(v, float):
        return Val(_float_literal(v), float, v)
    if isinstance(v, complex):
        return Val(f"cpn::complex128({_float_literal(v.real)}, {_float_literal(v.imag)})",
                   complex, v)
    raise Untranslatable(f"a constant of type {type(v).__name__}")


def _unify(a, b, what, node=None):
    """The one type a local takes for values of types ``a`` and ``b`` (a weak value widens
    into a strong type of its kind or a higher one; strong types must agree)."""
    if a == b:
        return a
    if _is_weak(a) and _is_weak(b):
        return a if _WEAK_RANK[a] >= _WEAK_RANK[b] else b
    line = getattr(node, "lineno", None)
    if _is_weak(a):
        a, b = b, a
    if not _is_weak(b):
        raise Untranslatable(f"{what} changes type ({a} and {b})", line)
    if _WEAK_RANK[b] > _KIND_RANK[a.kind]:
        raise Untranslatable(f"{what} changes type (Python {b.__name__} and {a})", line)
    return a


class _Func(NamedTuple):  # a callable resolved at translation
    kind: str   # 'ufunc', 'math', 'builtin', 'dtype', 'reduction'
    name: str
    value: object = None


class _Emitter:
    """One walk over the function body, writing C++ and the locals' types."""

    def __init__(self, tree, env, arg_types, local_types, out_type, fuse):
        self.tree, self.env, self.fuse = tree, env, fuse
        self.types = dict(local_types)  # local -> type, from the previous walk
        self.args = dict(arg_types)
        self.changed = False
        self.out_type = out_type
        self.returns = []   # types of the returned values
        self.lines = []
        self.complex = any(_dtype(t).kind == "c" for t in arg_types.values())
        self.used = {}      # free names read -> their values (the translation depends on them)
        self.reduction = None
        self.loop_depth = 0

    # --- helpers ---------------------------------------------------------------------
    def fail(self, construct, node):
        raise Untranslatable(construct, getattr(node, "lineno", None))

    def emit(self, line, depth):
        self.lines.append("  " * depth + line)

    def call_ufunc(self, name, args, node):
        row = _ops.all_public_names().get(name)
        if row is None or row.nin != len(args) or row.nout != 1:
            self.fail(f"the ufunc {name} with {len(args)} arguments", node)
        uf = getattr(np, row.name)
        # Python scalars are weak; all-Python operands (and bools) resolve as their defaults
        weak_all = all(_is_weak(a.t) for a in args)
        spec = tuple(_dtype(a.t) if weak_all or a.t is bool else a.t for a in args) + (None,)
        try:
            loop = uf.resolve_dtypes(spec)
        except Exception:  # noqa: BLE001 - NumPy has no loop: NumPy would raise
            self.fail(f"{name} of {', '.join(str(getattr(a.t, '__name__', a.t)) for a in args)}",
                      node)
        if not all(dt.char in _ops.SUPPORTED_CHARS for dt in loop):
            self.fail(f"{name} of {', '.join(str(dt) for dt in loop[:-1])}", node)
        chars = tuple(_ops.canonical_char(dt.char) for dt in loop)
        if chars not in _ops.type_loops(row.name):
            self.fail(f"{name} loop {''.join(chars)}", node)
        if any(np.dtype(c).kind == "c" for c in chars):
            self.complex = True
        for a, c in zip(args, chars):  # NumPy refuses (or compares by value) a Python int
            if a.t is int and a.const is not None and np.dtype(c).kind in "iu":  # out of range
                info = np.iinfo(np.dtype(c))
                if not info.min <= a.const <= info.max:
                    self.fail(f"the Python int {a.const} in a {np.dtype(c)} operation", node)
        cargs = [_conv(_conv_val(a, _ops.CPP_TYPES[c]), _ops.CPP_TYPES[c],
                       _ops.compute_ctype(row, c)) for a, c in zip(args, chars)]
        out = chars[-1]
        code = _conv(f"cpn::{row.functor}{{}}({', '.join(cargs)})",
                     _ops.compute_ctype(row, out), _ops.CPP_TYPES[out])
        return code, np.dtype(out)

    def op(self, name, args, node):
        """An operator: weak if every operand is weak (Python scalars stay Python's)."""
        code, t = self.call_ufunc(name, args, node)
        if all(_is_weak(a.t) for a in args):
            kind = t.kind
            if name in ("add", "subtract", "multiply") and kind == "b":
                # True + True is 2 for Python bools
                args = [Val(_conv(a.code, "bool", "cpn::int64_t"), int) for a in args]
                code, t = self.call_ufunc(name, args, node)
                kind = "i"
            weak = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]
            return Val(_conv(code, _ctype(t), _ctype(weak)), weak)
        return Val(code, t)

    def truth(self, v):
        return v.code if _char(v.t) == "?" else f"cpn::cast<bool>({v.code})"

    def cast(self, v, t):
        return Val(_conv_val(v, _ctype(t)), t)

    # --- expressions -----------------------------------------------------------------
    def expr(self, node) -> Val:
        m = getattr(self, "x_" + type(node).__name__, None)
        if m is None:
            self.fail(_describe(node), node)
        return m(node)

    def x_Constant(self, node):
        if isinstance(node.value, (bool, int, float, complex)):
            return literal(node.value)
        self.fail(f"the constant {node.value!r}", node)

    def x_Name(self, node):
        name = node.id
        if name in self.args:
            return Val(f"v_{name}", self.args[name])
        if name in self.types:
            return Val(f"v_{name}", self.types[name])
        value = self.lookup(name, node)
        if isinstance(value, (bool, int, float, complex, np.generic)):
            return literal(value)
        self.fail(f"the name {name!r} (a {type(value).__name__})", node)

    def lookup(self, name, node):
        if name in self.env:
            value = self.env[name]
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            self.fail(f"the undefined name {name!r}", node)
        self.used[name] = value
        return value

    def x_Attribute(self, node):
        value = self.static(node)
        if isinstance(value, (bool, int, float, complex, np.generic)):
            return literal(value)
        self.fail(f"the attribute {ast.unparse(node)!r}", node)

    def static(self, node):
        """The value of a module-level name or attribute chain (math.pi, np.float32)."""
        if isinstance(node, ast.Name):
            if node.id in self.args or node.id in self.types:
                self.fail(f"the attribute {node.id}.… of a value", node)
            return self.lookup(node.id, node)
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)
            if not inspect.ismodule(base) and not isinstance(base, type):
                self.fail(f"the attribute {ast.unparse(node)!r}", node)
            try:
                return getattr(base, node.attr)
            except AttributeError:
                self.fail(f"the attribute {ast.unparse(node)!r}", node)
        self.fail(_describe(node), node)

    def x_BinOp(self, node):
        name = _BINOPS.get(type(node.op))
        if name is None:
            self.fail(f"the operator {type(node.op).__name__}", node)
        return self.op(name, [self.expr(node.left), self.expr(node.right)], node)

    def x_UnaryOp(self, node):
        v = self.expr(node.operand)
        if v.const is not None and isinstance(node.op, (ast.USub, ast.UAdd)) and \
                not isinstance(v.const, bool):
            return literal(-v.const if isinstance(node.op, ast.USub) else v.const)
        if isinstance(node.op, ast.Not):
            return Val(f"(!{self.truth(v)})", bool)  # (`not` gives a Python bool)
        return self.op(_UNOPS[type(node.op)], [v], node)

    def x_Compare(self, node):
        parts, left = [], self.expr(node.left)
        weak = _is_weak(left.t)
        for op, right_node in zip(node.ops, node.comparators):
            name = _CMPOPS.get(type(op))
            if name is None:
                self.fail(f"the comparison {type(op).__name__}", node)
            right = self.expr(right_node)
            weak = weak and _is_weak(right.t)
            parts.append(self.call_ufunc(name, [left, right], node)[0])
            left = right
        code = parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
        return Val(code, bool if weak else np.dtype("?"))

    def x_BoolOp(self, node):
        vals = [self.expr(v) for v in node.values]
        t = vals[0].t
        for v in vals[1:]:
            t = _unify(t, v.t, "an 'and'/'or' expression", node)
        vals = [self.cast(v, t) for v in vals]
        if _char(t) == "?":
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return Val("(" + joiner.join(v.code for v in vals) + ")", t)
        # a and b: a if a is falsy else b; a or b: a if a is truthy else b
        code = vals[-1].code
        for v in reversed(vals[:-1]):
            test = self.truth(v)
            code = (f"(!{test} ? {v.code} : {code})" if isinstance(node.op, ast.And)
                    else f"({test} ? {v.code} : {code})")
        return Val(code, t)

    def x_IfExp(self, node):
        test = self.truth(self.expr(node.test))
        a, b = self.expr(node.body), self.expr(node.orelse)
        t = _unify(a.t, b.t, "a conditional expression", node)
        return Val(f"({test} ? {self.cast(a, t).code} : {self.cast(b, t).code})", t)

    def x_Call(self, node):
        if node.keywords:
            self.fail(f"keyword arguments in {ast.unparse(node.func)}()", node)
        f = self.callee(node.func)
        if f.kind == "reduction":
            self.fail(f"{f.name}() inside the expression (only as the returned value)", node)
        args = [self.expr(a) for a in node.args]
        if f.kind == "ufunc":
            code, t = self.call_ufunc(f.name, args, node)
            return Val(code, t)
        if f.kind == "dtype":
            if len(args) != 1:
                self.fail(f"{f.name}() with {len(args)} arguments", node)
            return self.cast(args[0], f.value)
        if f.kind == "math":
            return self.math_call(f.name, args, node)
        return self.builtin_call(f.name, args, node)

    def callee(self, func_node):
        value = self.static(func_node)
        if isinstance(value, np.ufunc):
            return _Func("ufunc", value.__name__)
        if isinstance(value, type) and issubclass(value, np.generic):
            dt = np.dtype(value)
            if dt.char not in _ops.SUPPORTED_CHARS:
                self.fail(f"the type {dt}", func_node)
            return _Func("dtype", dt.name, dt)
        mod = getattr(value, "__module__", None) or ""
        name = getattr(value, "__name__", "")
        if value is getattr(math, name, None):
            return _Func("math", name)
        if value in (abs, min, max, float, int, bool, complex):
            return _Func("builtin", value.__name__)
        if self.fuse or mod.startswith("cupynum"):
            # cupynum's ufuncs are its own objects: find them by name in the op table
            if name in _ops.all_public_names() and mod.split(".")[0] in _NUMPY_MODULES:
                return _Func("ufunc", name)
            if name in REDUCTIONS and mod.split(".")[0] in _NUMPY_MODULES:
                return _Func("reduction", name, value)
        if type(value).__name__ == "ufunc" and name in _ops.all_public_names():
            return _Func("ufunc", name)
        if name in REDUCTIONS and mod.split(".")[0] in _NUMPY_MODULES:
            return _Func("reduction", name, value)
        self.fail(f"a call of {ast.unparse(func_node)} (arbitrary Python)", func_node)

    def math_call(self, name, args, node):
        dbl = [self.cast(a, float) if _char(a.t) != "d" else a for a in args]
        if any(_dtype(a.t).kind == "c" for a in args):
            self.fail(f"math.{name} of a complex value", node)
        if name in _MATH_FLOAT:
            code, _ = self.call_ufunc(_MATH_FLOAT[name], dbl, node)
            short = None
            if name == "exp" and not _is_weak(args[0].t) and _char(args[0].t) == "f":
                short = f"cpn::exp_f32({args[0].code})"
            return Val(code, float, as_float32=short)
        if name == "log" and len(args) in (1, 2):
            code, _ = self.call_ufunc("log", dbl[:1], node)
            if len(args) == 2:
                base, _ = self.call_ufunc("log", dbl[1:], node)
                code, _ = self.call_ufunc("divide", [Val(code, float), Val(base, float)], node)
            return Val(code, float)
        if name in _MATH_INT:
            code, _ = self.call_ufunc(_MATH_INT[name], dbl, node)
            return Val(_conv(code, "double", "cpn::int64_t"), int)
        if name in _MATH_BOOL:
            code, _ = self.call_ufunc(_MATH_BOOL[name], dbl, node)
            return Val(code, bool)
        self.fail(f"math.{name}", node)

    def builtin_call(self, name, args, node):
        if name in ("float", "int", "bool", "complex"):
            if len(args) != 1:
                self.fail(f"{name}() with {len(args)} arguments", node)
            t = {"float": float, "int": int, "bool": bool, "complex": complex}[name]
            if name == "bool":
                return Val(self.truth(args[0]), bool)
            if name == "int" and _dtype(args[0].t).kind == "c":
                self.fail("int() of a complex value", node)
            return self.cast(args[0], t)
        if name == "abs" and len(args) == 1:
            return self.op("absolute", args, node)
        if name in ("min", "max") and len(args) >= 2:
            t = args[0].t
            for a in args[1:]:
                t = _unify(t, a.t, f"{name}()", node)
            acc = args[0]
            for a in args[1:]:  # min(a, b) is a unless b < a (NaN keeps a), as in Python
                test = self.call_ufunc("less" if name == "min" else "greater", [a, acc], node)[0]
                acc = Val(f"({test} ? {self.cast(a, t).code} : {self.cast(acc, t).code})", t)
            return acc
        self.fail(f"{name}() with {len(args)} arguments", node)

    # --- statements ------------------------------------------------------------------
    def block(self, stmts, depth):
        for s in stmts:
            m = getattr(self, "s_" + type(s).__name__, None)
            if m is None:
                self.fail(_describe(s), s)
            m(s, depth)

    def assign(self, name, v, node, depth):
        if name in self.args:
            t = _unify(self.args[name], v.t, f"the argument {name!r}", node)
            if t != self.args[name]:
                self.fail(f"the argument {name!r} assigned a value of another type", node)
        elif name in self.types:
            t = _unify(self.types[name], v.t, f"the variable {name!r}", node)
            if t != self.types[name]:
                self.types[name], self.changed = t, True
        else:
            self.types[name], self.changed, t = v.t, True, v.t
        self.emit(f"v_{name} = {self.cast(v, t).code};", depth)

    def target(self, node):
        if not isinstance(node, ast.Name):
            self.fail(f"assignment to {_describe(node)}", node)
        return node.id

    def s_Assign(self, node, depth):
        if len(node.targets) != 1:
            self.fail("chained assignment", node)
        self.assign(self.target(node.targets[0]), self.expr(node.value), node, depth)

    def s_AnnAssign(self, node, depth):
        if node.value is not None:
            self.assign(self.target(node.target), self.expr(node.value), node, depth)

    def s_AugAssign(self, node, depth):
        name = self.target(node.target)
        name_op = _BINOPS.get(type(node.op))
        if name_op is None:
            self.fail(f"the operator {type(node.op).__name__}=", node)
        v = self.op(name_op, [self.x_Name(node.target), self.expr(node.value)], node)
        self.assign(name, v, node, depth)

    def s_Expr(self, node, depth):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.fail(f"the expression statement {ast.unparse(node)[:40]!r}", node)

    def s_Pass(self, node, depth):
        pass

    def s_If(self, node, depth):
        self.emit(f"if ({self.truth(self.expr(node.test))}) {{", depth)
        self.block(node.body, depth + 1)
        if node.orelse:
            self.emit("} else {", depth)
            self.block(node.orelse, depth + 1)
        self.emit("}", depth)

    def s_While(self, node, depth):
        if node.orelse:
            self.fail("while ... else", node)
        # the test is written inside the loop: it may use locals the body changes
        self.emit("while (true) {", depth)
        self.emit(f"if (!{self.truth(self.expr(node.test))}) break;", depth + 1)
        self.loop_depth += 1
        self.block(node.body, depth + 1)
        self.loop_depth -= 1
        self.emit("}", depth)

    def s_For(self, node, depth):
        if node.orelse:
            self.fail("for ... else", node)
        it = node.iter
        if not (isinstance(it, ast.Call) and not it.keywords
                and self.static(it.func) is range and 1 <= len(it.args) <= 3):
            self.fail(f"a for loop over {_describe(it)} (only range() translates)", node)
        bounds = []
        for a in it.args:
            v = self.expr(a)
            if _dtype(v.t).kind not in "iub":
                self.fail("range() of a non-integer", node)
            bounds.append(_conv(v.code, _ctype(v.t), "cpn::int64_t"))
        start, stop, step = (["0LL"] + bounds + ["1LL"])[:3] if len(bounds) == 1 else \
            (bounds + ["1LL"])[:3]
        name = self.target(node.target)
        n = len(self.lines)
        self.emit("{", depth)
        self.emit(f"const long long f{n}_stop = {stop}, f{n}_step = {step};", depth + 1)
        self.emit(f"for (long long f{n}_k = {start}; f{n}_step > 0 ? f{n}_k < f{n}_stop : "
                  f"f{n}_k > f{n}_stop; f{n}_k += f{n}_step) {{", depth + 1)
        self.assign(name, Val(f"f{n}_k", int), node, depth + 2)
        self.loop_depth += 1
        self.block(node.body, depth + 2)
        self.loop_depth -= 1
        self.emit("}", depth + 1)
        self.emit("}", depth)

    def s_Break(self, node, depth):
        self.emit("break;", depth)

    def s_Continue(self, node, depth):
        self.emit("continue;", depth)

    def s_Return(self, node, depth):
        if node.value is None:
            self.fail("a return without a value (None)", node)
        value = node.value
        if self.fuse and isinstance(value, ast.Call):
            f = self.callee(value.func) if isinstance(value.func, (ast.Name, ast.Attribute)) \
                else None
            if f is not None and f.kind == "reduction":
                if not value.args or self.reduction is not None or depth != 1:
                    self.fail(f"{f.name}() other than once, at the end", node)
                try:
                    extra = [ast.literal_eval(a) for a in value.args[1:]]
                    kw = {k.arg: ast.literal_eval(k.value) for k in value.keywords}
                except ValueError:
                    self.fail(f"{f.name}() with arguments other than constants", node)
                self.reduction = (f.value, tuple(extra), kw)
                value = value.args[0]
        if isinstance(value, ast.Tuple):
            self.fail("a tuple result (several outputs)", node)
        v = self.expr(value)
        self.returns.append(v.t)
        out = self.out_type if self.out_type is not None else v.t
        self.emit(f"return {self.ret(v, out)};", depth)

    def ret(self, v, out):
        c = _char(out)
        row = _ops.BY_NAME["add"]  # (compute type: float for float16, as every table op)
        return _conv(_conv_val(v, _ops.CPP_TYPES[c]), _ops.CPP_TYPES[c],
                     _ops.compute_ctype(row, c))


def _describe(node) -> str:
    names = {"ListComp": "a list comprehension", "List": "a list", "Dict": "a dict",
             "Set": "a set", "Tuple": "a tuple", "Subscript": "indexing", "Lambda": "a lambda",
             "Try": "try/except (exceptions as control flow)", "Raise": "raise",
             "With": "a with statement", "FunctionDef": "a nested function",
             "Import": "import", "ImportFrom": "import", "Global": "global",
             "Nonlocal": "nonlocal", "Assert": "assert", "Delete": "del",
             "GeneratorExp": "a generator", "DictComp": "a dict comprehension",
             "SetComp": "a set comprehension", "JoinedStr": "an f-string", "Yield": "yield",
             "Await": "await", "NamedExpr": "the walrus operator", "Starred": "*args"}
    kind = type(node).__name__
    return names.get(kind, kind)


def function_tree(func):
    """(the FunctionDef of ``func``, its first line in its file, the file name)."""
    try:
        src = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as e:
        raise Untranslatable(f"a function without source ({e})") from None
    if not _source_matches(func):
        raise Untranslatable("a function whose source file changed after it was loaded")
    try:
        mod = ast.parse(src)
    except SyntaxError:  # a lambda inside a larger expression: its line alone
        raise Untranslatable("a lambda whose source line does not parse alone") from None
    params = list(func.__code__.co_varnames[:func.__code__.co_argcount])
    fn = next((n for n in ast.walk(mod) if isinstance(n, (ast.FunctionDef, ast.Lambda))
               and getattr(n, "name", "<lambda>") == func.__name__
               and [x.arg for x in n.args.args] == params), None)  # (lambdas: by parameters)
    if fn is None:
        raise Untranslatable("a function whose source cannot be found")
    if isinstance(fn, ast.Lambda):
        fn = ast.FunctionDef(name="lambda_", args=fn.args, body=[ast.Return(fn.body)],
                             decorator_list=[], lineno=fn.lineno)
        for n in ast.walk(fn):  # (line numbers of the lambda's expression)
            if not hasattr(n, "lineno"):
                n.lineno = fn.lineno
    return fn, func.__code__.co_firstlineno - 1, func.__code__.co_filename


_NAMED_OPS = frozenset({"LOAD_FAST", "STORE_FAST", "LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD",
                        "LOAD_DEREF", "STORE_DEREF", "LOAD_CLOSURE", "LOAD_NAME"})


def _source_matches(func) -> bool:
    """Whether the file still holds the function it was compiled from: inspect reads the
    file as it is now, and a function edited since it was loaded must not translate from
    the new text.  Each instruction's recorded source position must still show its name,
    operator or literal."""
    import dis
    import linecache

    code = func.__code__
    lines = [ln.encode() for ln in linecache.getlines(code.co_filename)]
    for ins in dis.get_instructions(code):
        pos = getattr(ins, "positions", None)
        if pos is None or None in (pos.lineno, pos.end_lineno, pos.col_offset,
                                   pos.end_col_offset):
            continue
        if pos.end_lineno > len(lines):
            return False
        chunk = lines[pos.lineno - 1:pos.end_lineno]
        chunk[-1] = chunk[-1][:pos.end_col_offset]
        chunk[0] = chunk[0][pos.col_offset:]
        text = b"\n".join(chunk).decode(errors="replace")
        if ins.opname in _NAMED_OPS and str(ins.argval) not in text:
            return False
        if ins.opname in ("BINARY_OP", "COMPARE_OP") and ins.argrepr.rstrip("=") not in text:
            return False
        if ins.opname == "LOAD_CONST" and type(ins.argval) in (int, float, complex):
            try:
                shown = ast.literal_eval(text.strip())
            except (ValueError, SyntaxError):
                continue  # (a folded expression)
            if shown != ins.argval and not (shown != shown and ins.argval != ins.argval):
                return False
    return True


def environment(func) -> dict:
    env = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    return env


def translate(func, arg_types, out_type=None, *, fuse=False) -> tuple:
    """``(Translation, used)`` for ``func`` called with arguments of ``arg_types`` (NumPy
    dtypes, or Python types for weak scalars, in order); ``out_type``: the output dtype
    (``otypes``), or None for the returns' common type.  ``used``: the free names the
    translation read, with their values (the caller checks they still hold before reusing
    it).
    Raises Untranslatable or NeedsOutputType."""
    fn, offset, filename = function_tree(func)
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        raise Untranslatable("*args, **kwargs or keyword-only parameters", fn.lineno + offset,
                             filename)
    names = [x.arg for x in a.args]
    if len(names) != len(arg_types):
        raise Untranslatable(f"{len(names)} parameters for {len(arg_types)} arguments",
                             fn.lineno + offset, filename)
    env = environment(func)
    vector_names = names
    args = dict(zip(vector_names, arg_types))
    try:
        local_types, em = {}, None
        for _ in range(8):  # until the locals' types settle
            em = _Emitter(fn, env, args, local_types, out_type, fuse)
            em.block(fn.body, 1)
            if not em.changed or em.types == local_types:
                local_types = em.types
                break
            local_types = em.types
        else:
            raise Untranslatable("locals whose types do not settle", fn.lineno)
        if not em.returns:
            raise Untranslatable("a function without a return", fn.lineno)
        if out_type is None:
            first = em.returns[0]
            if any(_dtype(t) != _dtype(first) for t in em.returns[1:]):
                raise NeedsOutputType()
            out_type = _dtype(first)
            em = _Emitter(fn, env, args, local_types, out_type, fuse)
            em.block(fn.body, 1)
    except Untranslatable as e:
        if e.line is not None and not e.filename:
            e = Untranslatable(e.construct, e.line + offset, filename)
        raise e from None
    out_char = _char(np.dtype(out_type))
    in_chars = tuple(_char(t) for t in arg_types)
    cplx = em.complex or any(np.dtype(c).kind == "c" for c in in_chars + (out_char,))
    return _assemble(fn.name, vector_names, args, local_types, em, in_chars, out_char, cplx), \
        em.used


def _assemble(fname, vector_names, args, local_types, em, in_chars, out_char, cplx):
    row = _ops.BY_NAME["add"]
    params, head = [], []
    for name, c in zip(vector_names, in_chars):
        comp = _ops.compute_ctype(row, c)
        params.append(f"{comp} a_{name}")
        store = _ops.CPP_TYPES[c]
        head.append(f"{store} v_{name} = {_conv(f'a_{name}', comp, store)};")
    for name, t in local_types.items():
        if name not in args:
            head.append(f"{_ctype(t)} v_{name}{{}};")
    out_comp = _ops.compute_ctype(row, out_char)
    body = "\n".join(["    " + h for h in head] + ["  " + ln for ln in em.lines])
    digest = hashlib.sha256((body + repr((in_chars, out_char))).encode()).hexdigest()[:16]
    safe = "".join(ch if ch.isalnum() else "_" for ch in fname)[:40]
    name = f"jit_{safe}_{digest}"
    source = (f"namespace cpn {{\n"
              f"struct {name} {{\n"
              f"  CPN_HD {out_comp} operator()({', '.join(params)}) const {{\n"
              f"{body}\n"
              f"    return {out_comp}();  // (not reached: every path returns)\n"
              f"  }}\n}};\n}}  // namespace cpn\n")
    return Translation(name, source, in_chars, out_char, cplx, em.reduction)
