"""The CUDA elementwise engine: layouts, the default kernel set, and launchers.

``run(exprs, ins, outs)`` evaluates expression trees (``elementwise_source``) over arrays of
any strides and by-value scalars: ``collapse`` simplifies the iteration space, then a
contiguous kernel (vectorised, 0-stride inputs read once) or a strided one is chosen and
launched with its prepared parameter block.  ``contiguous_launcher`` is the hot path's
specialised form (internals.md principle 6).

Programs: NVRTC costs ~40 ms per program plus ~20 ms per kernel on a slow CPU, so the
default set (every table op's loops, contiguous + strided; every cast; bit copies; fills) is
compiled in batches, one program per (op, real|complex), by ``precompile``.  A kernel
needed at run time is taken from its batch program when that is already compiled (memory
or disk cache); otherwise it is compiled alone (one small program: 50-140 ms cold here,
heavier functors cost more), never by compiling a whole batch on the critical path.
"""
from __future__ import annotations

import functools
import hashlib
import operator
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ... import _ops
from ..base import ElementwiseOp
from . import elementwise_source as es
from . import compiler, launch, memory, runtime, tuning
from .. import buffer as buffers
from ..buffer import Buffer
from .view import DIRECT_PTR_EXPR, PTR_EXPR, dptr
from .elementwise_source import (BLOCK, Input, KernelSpec, Node, _code, _dtype, _is_complex,
                                 canonical_char, ctype, kernel_name, kernel_source,
                                 needs_complex, op_exprs, program_source, vector_width)

__all__ = [
    "BLOCK", "COPY", "PROGRAM_NAME", "Input", "KernelSpec", "Node", "collapse",
    "compile_options", "contiguous_launcher", "ctype", "default_group", "default_groups",
    "default_kernel_sources", "get_kernel", "group_specs", "kernel_name", "kernel_source",
    "launch_elementwise", "op_exprs", "param_block", "precompile", "program_source", "run",
]

DEFAULT_MAXD = 4  # strided kernels of the default set handle up to this many dims
_I32 = 2**31 - 1


# --- layouts -----------------------------------------------------------------------------


def collapse(shape, strides_per_operand):
    """Simplify an iteration space for elementwise work: drop size-1 dims, order the axes
    so that the innermost has the smallest strides (an F-ordered or transposed set of
    operands becomes C-ordered), then merge neighbouring dims that are contiguous with each
    other in *every* operand.  Returns ``(shape, strides_per_operand)`` as tuples, C order
    (last = innermost), byte strides.  A zero-size shape is returned as ``(0,)``."""
    shape = tuple(shape)
    nop = len(strides_per_operand)
    if 0 in shape:
        return (0,), tuple((0,) for _ in range(nop))
    axes = [d for d, n in enumerate(shape) if n != 1]
    # Insertion sort, as NumPy's iterator does: each axis, taken from outer to inner, moves
    # outwards past the axes that some operand strides less than it (in absolute value)
    # when no operand says the opposite; ties and zero strides express no preference.
    order = []
    for d in axes:
        pos = len(order)
        while pos > 0 and _goes_inside(strides_per_operand, order[pos - 1], d):
            pos -= 1
        order.insert(pos, d)
    out_shape, out_strides = [], [[] for _ in range(nop)]
    for d in order:
        n = shape[d]
        if out_shape and all(out_strides[k][-1] == st[d] * n
                             for k, st in enumerate(strides_per_operand)):
            out_shape[-1] *= n  # the previous (outer) dim continues this one: merge
            for k, st in enumerate(strides_per_operand):
                out_strides[k][-1] = st[d]
        else:
            out_shape.append(n)
            for k, st in enumerate(strides_per_operand):
                out_strides[k].append(st[d])
    return tuple(out_shape), tuple(tuple(s) for s in out_strides)


def _goes_inside(strides_per_operand, outer, d) -> bool:
    """Should axis ``d`` (now inner to ``outer``) move outside it?  (the insertion sort
    walks d outwards while this holds)"""
    want = False
    for st in strides_per_operand:
        a, b = abs(st[outer]), abs(st[d])
        if a and b:
            if b < a:  # d already strides less: it belongs inside
                return False
            if b > a:
                want = True
    return want


def _fits32(n, shape, strides) -> bool:
    if n > _I32:
        return False
    return all(sum(abs(s) * (m - 1) for s, m in zip(st, shape)) <= _I32 for st in strides)


def _maxd(ndim: int) -> int:
    """Dims capacity of a strided kernel: DEFAULT_MAXD, else the next power of two (so at
    most four more variants exist per expression, compiled on demand)."""
    return DEFAULT_MAXD if ndim <= DEFAULT_MAXD else 1 << (ndim - 1).bit_length()


# --- the default kernel set and its batch programs -----------------------------------------

PROGRAM_NAME = "cupynum_elementwise.cu"
_options = None


def compile_options() -> tuple:
    """NVRTC options of every elementwise program (besides the compiler's defaults,
    ``-std=c++17 --fmad=false``).  ``--Ofast-compile=min`` (NVRTC >= 12.8) cuts compile CPU
    time by ~35% (measured on the default set): it trims optimisation effort, not
    floating-point semantics, and these kernels are bound by memory bandwidth."""
    global _options
    if _options is None:
        _options = ("--Ofast-compile=min",) if compiler.nvrtc_version() >= (12, 8) else ()
    return _options


_UNIT_CHARS = {1: "B", 2: "H", 4: "I", 8: "L"}  # bit-for-bit copies move these units
COPY = (Input(0),)  # the tree of a cast, copy or fill: the output is operand 0 (cast)


def _all_chars():
    return list(dict.fromkeys(canonical_char(c) for c in _ops.SUPPORTED_CHARS))


def _pair(exprs, operands, nin):
    """The contiguous and the default strided kernel of one expression."""
    return [KernelSpec(exprs, operands, nin, "contig"),
            KernelSpec(exprs, operands, nin, "strided", DEFAULT_MAXD, False)]


def default_groups() -> list:
    """Names of the default set's batch programs: ``('ufunc', functor, complex?)`` per table
    functor and family (rows sharing a functor, e.g. degrees/rad2deg, share its kernels),
    ``('cast', src char, complex?)``, ``('copy',)`` and ``('fill', complex?)``."""
    groups = []
    for functor in _functor_rows():
        fams = {any(_is_complex(c) for c in lp) for _, lp in _functor_loops(functor)}
        groups += [("ufunc", functor, f) for f in (False, True) if f in fams]
    for s in _all_chars():
        groups += [("cast", s, False)] if not _is_complex(s) else []
        groups.append(("cast", s, True))
    return groups + [("copy",), ("fill", False), ("fill", True)]


def _functor_rows() -> dict:
    """functor -> names of the table rows that use it, in table order."""
    global _functor_rows_cache
    if _functor_rows_cache is None:
        out: dict = {}
        for row in _ops.UFUNCS:
            out.setdefault(row.functor, []).append(row.name)
        _functor_rows_cache = out
    return _functor_rows_cache


def _functor_loops(functor) -> list:
    """[(row name, canonical loop), ...] of one functor's rows, loops deduplicated.  Built
    per functor on first use: a process's first kernel needs one functor, not the table."""
    out = _functor_loops_cache.get(functor)
    if out is None:
        out = []
        for name in _functor_rows().get(functor, ()):
            for lp in _ops.type_loops(name):
                lp = tuple(canonical_char(c) for c in lp)
                if all(lp != have for _, have in out):
                    out.append((name, lp))
        _functor_loops_cache[functor] = out
    return out


_functor_rows_cache = None
_functor_loops_cache: dict = {}
_group_cache: dict = {}


def group_specs(group) -> tuple:
    """The kernel specs of one batch program (see ``default_groups``)."""
    specs = _group_cache.get(group)
    if specs is not None:
        return specs
    specs, kind = [], group[0]
    if kind == "ufunc":
        functor, cplx = group[1], group[2]
        for name, lp in _functor_loops(functor):
            if any(_is_complex(c) for c in lp) == cplx:
                nin = getattr(np, name).nin
                op = ElementwiseOp(name, functor, lp, nin)
                specs += _pair(op_exprs(op), tuple(("a", c) for c in lp), nin)
    elif kind == "cast":
        s, cplx = group[1], group[2]
        for d in _all_chars():
            if d != s and (_is_complex(s) or _is_complex(d)) == cplx:
                specs += _pair(COPY, (("a", s), ("a", d)), 1)
    elif kind == "copy":
        for c in _UNIT_CHARS.values():
            specs += _pair(COPY, (("a", c), ("a", c)), 1)
    elif kind == "fill":  # fills write bit patterns (see backend.fill): units and complex128
        for c in ("D",) if group[1] else _UNIT_CHARS.values():
            specs += _pair(COPY, (("s", c), ("a", c)), 1)
    specs = _group_cache[group] = tuple(specs)
    _group_names[group] = frozenset(kernel_name(sp) for sp in specs)
    return specs


_group_names: dict = {}


def default_group(spec: KernelSpec):
    """The batch program that holds ``spec``'s kernel, or None when it is compiled alone.
    (Membership is by kernel name: the text depends only on what the name encodes.)"""
    if spec.layout == "strided" and (spec.maxd != DEFAULT_MAXD or spec.idx64):
        return None
    if any(k == "b" for k, _ in spec.operands):
        return None
    e0 = spec.exprs[0]
    if spec.exprs == COPY:
        (k0, s), (_, d) = spec.operands
        cplx = _is_complex(s) or _is_complex(d)
        group = ("fill", cplx) if k0 == "s" else ("copy",) if s == d else ("cast", s, cplx)
    elif isinstance(e0, Node) and spec.exprs == op_exprs(e0.op):
        group = ("ufunc", e0.op.functor, needs_complex(spec))
    else:
        return None
    group_specs(group)
    return group if kernel_name(spec) in _group_names[group] else None


def default_kernel_sources():
    """Yield ``(group, source, kernel names)`` for every batch program of the default set:
    each table op's type loops (contiguous + strided), casts, copies and fills.  This is
    what ``precompile`` and CI compile."""
    for g in default_groups():
        specs = group_specs(g)
        if specs:
            yield g, _group_source(g), [kernel_name(s) for s in specs]


def _group_source(group) -> str:
    src = _group_src_cache.get(group)
    if src is None:
        src = _group_src_cache[group] = program_source(group_specs(group))
    return src


_group_src_cache: dict = {}


def precompile(arch=None, jobs=None, groups=None) -> dict:
    """Compile the default set into the kernel cache (NVRTC only, no GPU needed), one
    program per batch, ``jobs`` programs at a time (NVRTC releases the GIL).  Raises
    ``compiler.CompileError`` naming every program that failed."""
    groups = list(default_groups() if groups is None else groups)
    todo = [(g, _group_source(g)) for g in groups if group_specs(g)]
    t0 = time.perf_counter()
    before = dict(compiler.default_cache().stats)

    def one(item):
        g, src = item
        try:
            c = compiler.compile_cubin(src, options=compile_options(), arch=arch,
                                       name=PROGRAM_NAME)
            compiler.default_cache().remember_alias(
                compiler.default_cache().alias(repr(("group", g)), _generator_fingerprint(),
                                               options=compile_options(), arch=arch,
                                               name=PROGRAM_NAME), c.key)
            return None
        except compiler.CompileError as e:
            return g, e

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as ex:
        failed = [r for r in ex.map(one, todo) if r is not None]
    after = compiler.default_cache().stats
    stats = {"programs": len(todo), "kernels": sum(len(group_specs(g)) for g, _ in todo),
             "compiled": after["compiles"] - before["compiles"],
             "seconds": time.perf_counter() - t0}
    if failed:
        detail = "\n\n".join(f"{g}: {e.log or e}" for g, e in failed[:5])
        raise compiler.CompileError(f"{len(failed)} of {len(todo)} elementwise programs failed "
                                    f"to compile:\n{detail}", failed[0][1].log,
                                    failed[0][1].source)
    return stats


# --- kernels at run time -----------------------------------------------------------------

_funcs: dict = {}  # KernelSpec -> CUkernel
_modules: dict = {}  # program source, or recipe alias -> runtime.Module
_load_lock = threading.Lock()


def get_kernel(spec: KernelSpec):
    """The loaded kernel for ``spec``: from its batch program when that is compiled already
    (memory or disk cache), otherwise from a program of its own (compiled if need be).

    A warm disk cache is found without generating any source: the cache remembers which
    cubin a *recipe* (the group or spec, the generator's fingerprint and every compile
    input but the text) compiled to (``_recipe_alias``), so a process's first call of a
    kernel costs a file read and a module load."""
    f = _funcs.get(spec)
    if f is not None:
        return f
    cache = compiler.default_cache()
    group = default_group(spec)
    name = kernel_name(spec)
    recipes = ([("group", group)] if group is not None else []) + [("spec", spec)]
    for recipe in recipes:  # the batch program first, then one of the spec's own
        alias = _recipe_alias(recipe)
        mod = _modules.get(alias)
        if mod is None:
            key = cache.alias_key(alias)
            c = cache.load(key) if key is not None else None
            if c is None:
                continue
            with _load_lock:
                mod = _modules.get(alias)
                if mod is None:
                    mod = _modules[alias] = runtime.load_module(c.cubin)
        try:
            f = _funcs[spec] = mod.get_function(name)
            return f
        except Exception:  # noqa: BLE001 - a stale alias: take the path below
            pass
    src, recipe = None, ("spec", spec)
    if group is not None:
        gsrc = _group_source(group)
        key = cache.key(gsrc, options=compile_options(), name=PROGRAM_NAME)
        if gsrc in _modules or cache.path_for(key).exists():
            src, recipe = gsrc, ("group", group)
    if src is None:
        src = program_source([spec])
    mod = _modules.get(src)
    if mod is None:
        c = compiler.compile_cubin(src, options=compile_options(), name=PROGRAM_NAME)
        cache.remember_alias(_recipe_alias(recipe), c.key)
        with _load_lock:
            mod = _modules.get(src)
            if mod is None:
                mod = _modules[src] = _modules[_recipe_alias(recipe)] = runtime.load_module(
                    c.cubin)
    f = _funcs[spec] = mod.get_function(name)
    return f


def _generator_fingerprint() -> str:
    """What the generated text depends on besides the kernels folder: this module, the
    source generator and the op table (their bytes), NumPy's version (its type loops) and
    the generator's knobs as they are now."""
    global _fingerprint
    knobs = tuple((k, v) for mod in (es, sys.modules[__name__]) for k, v in sorted(vars(mod).items())
                  if k.isupper() and isinstance(v, (int, str)))
    knobs += tuple(sorted(vars(tuning.ELEMENTWISE).items()))  # (the kernel text's knobs)
    if _fingerprint is None or _fingerprint[0] != knobs:
        h = hashlib.sha256(repr((np.__version__, knobs)).encode())
        for mod in (es, sys.modules[__name__], _ops):
            with open(mod.__file__, "rb") as fh:
                h.update(fh.read())
        _fingerprint = (knobs, h.hexdigest())
    return _fingerprint[1]


def _recipe_alias(recipe) -> str:
    return compiler.default_cache().alias(
        repr(recipe), _generator_fingerprint(), options=compile_options(), name=PROGRAM_NAME)


_fingerprint = None


_SCALAR_FMT = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I",
               "i8": "q", "u8": "Q", "f2": "e", "f4": "f", "f8": "d", "c8": "ff", "c16": "dd"}


def _param_layout(spec: KernelSpec):
    """(ParamBlock slot dtypes, struct format per slot) of the kernel's parameters."""
    dts, fmts = [], []
    for kind, c in spec.operands:
        if kind == "s":
            dts.append(_dtype(c))
            fmts.append(_SCALAR_FMT[_code(c)])
        else:
            dts.append(np.dtype(np.uintp))
            fmts.append("Q")
    if spec.layout == "contig":
        dts.append(np.dtype(np.int64))
        fmts.append("q")
    else:
        na = sum(k != "s" for k, _ in spec.operands)
        u, s, ut = ("Q", "q", np.uint64) if spec.idx64 else ("I", "i", np.uint32)
        dts += [np.dtype((ut, spec.maxd * (1 + na))), np.dtype(ut), np.dtype(np.int32)]
        fmts += [f"{spec.maxd}{u}{na * spec.maxd}{s}", u, "i"]
    return dts, fmts


def param_block(spec: KernelSpec):
    """``(ParamBlock, pack)`` for the kernel of ``spec`` (``launch.packer``): pointers and
    sizes as 8-byte ints, scalars in NumPy's layout of their dtype, complex as (real,
    imag), the strided ``dims`` struct as ints.  Needs no GPU."""
    return launch.packer(*_param_layout(spec))


def _chunk(spec: KernelSpec) -> int:
    """Elements per block per grid-stride step."""
    return BLOCK * (vector_width(spec) if spec.layout == "contig" else 1)


def _grid(spec: KernelSpec, n: int) -> int:
    g = (n + _chunk(spec) - 1) // _chunk(spec)
    cap = _grid_cap()
    return g if g < cap else cap


_prepared: dict = {}
_cap = 0


def _grid_cap() -> int:
    """Most blocks per launch: grid-stride loops cover the rest (SM count read once)."""
    global _cap
    if not _cap:
        _cap = runtime.multiprocessor_count() * tuning.ELEMENTWISE.blocks_per_sm
    return _cap


def prepared(spec: KernelSpec) -> launch.Prepared:
    """The kernel of ``spec``, loaded, with its parameter block (``launch.Prepared``)."""
    p = _prepared.get(spec)
    if p is None:
        p = _prepared.setdefault(spec, launch.Prepared(spec, get_kernel(spec),
                                                       *_param_layout(spec)))
    return p


def _char(dt: np.dtype) -> str:
    c = _canon.get(dt)
    if c is None:
        c = _canon[dt] = canonical_char(dt.char)
    return c


_canon: dict = {}


def run(exprs, ins, outs) -> None:
    """Evaluate ``exprs`` (one tree per output) over ``ins`` (arrays broadcast to the
    outputs' shape, or NumPy scalars already of the right dtype) into ``outs``.

    The layout work (collapse, kernel choice, the dims values) is cached per (expression,
    shape, dtypes, strides): a repeated slice assignment or strided op only rewrites its
    pointers and scalars."""
    xs = (*ins, *outs)
    out0 = outs[0]
    n = out0._size
    if n == 0:
        return
    key = [id(exprs), len(ins), out0._shape]
    for x in xs:
        key.append(x.dtype)
        if hasattr(x, "_buf"):
            key.append(x._strides)
    key = tuple(key)
    plan = _plans.get(key)
    if plan is None or plan[0] is not exprs:  # (an id can be reused once exprs is freed)
        plan = _plan(exprs, xs, len(ins), n)
        if len(_plans) >= 4096:
            _plans.clear()
        _plans[key] = plan
    values = []
    for x in xs:
        if hasattr(x, "_buf"):
            values.append(dptr(x))
        elif x.dtype.kind == "c":
            values += (x.real, x.imag)
        else:
            values.append(x)
    plan[1].launch(values + plan[2], plan[3], BLOCK)


_plans: dict = {}


def layout_launcher(op: ElementwiseOp, ins, outs):
    """``launch(ins, outs)`` for operands like these: arrays of the same dtypes, shapes and
    strides, and NumPy scalars of the loop's dtypes in the same places.  The layout work of
    ``run`` is done once here, so that a call packs pointers and scalars and launches (the
    frontend caches it per operand layout, see ``ufunc._plain_call``)."""
    exprs = _op_exprs.get(op)
    if exprs is None:
        exprs = _op_exprs[op] = op_exprs(op)
    return exprs_launcher(exprs, ins, outs)


def exprs_launcher(exprs, ins, outs):
    """``layout_launcher`` for expression trees (``run``'s first argument, e.g. COPY).
    For one-dimensional outputs (of two elements or more) the launcher serves any length
    with the same strides (``launch.any_length``): a loop over shrinking rows or columns
    (lu_doolittle's ``A[i + 1:, i]``) plans its kernel once, not once per length."""
    n = outs[0]._size
    _, prep, layout, grid = _plan(exprs, (*ins, *outs), len(ins), n)
    arrays = tuple(hasattr(x, "_buf") for x in ins)
    # [the _prepared dict, its Prepared]: tests and probes swap the engine's dicts, and a
    # launcher kept by a caller must then take the kernel of the engine in place
    now = [_prepared, prep]
    line = len(outs[0]._shape) == 1 and n > 1
    if line:
        spec = prep.key
        strided = spec.layout != "contig"
        # the longest line the kernel's 32-bit offsets reach (longer ones: ``run`` plans them)
        reach = max((abs(x._strides[0]) for x in (*ins, *outs) if hasattr(x, "_buf")),
                    default=1)
        longest = _I32 if spec.idx64 else min(_I32, _I32 // max(reach, 1) + 1)
        chunk, cap = _chunk(spec), _grid_cap()  # (_grid's, once)

    def launch(values, n):  # (values: the operands'; the layout's follow them)
        if now[0] is not _prepared:
            now[0], now[1] = _prepared, prepared(prep.key)
        if line:  # (the layout values and the grid of this length)
            lay = layout.copy()
            lay[0] = n
            if strided:
                lay[-2] = n
            g = (n + chunk - 1) // chunk
            now[1].launch(values + lay, g if g < cap else cap, BLOCK)
            return
        now[1].launch(values + layout, grid, BLOCK)

    def launch_arrays(ins, outs):  # (dptr inline: a frame less per operand)
        if line and not 1 < outs[0]._size <= longest:
            return run(exprs, ins, outs)
        values = []
        for x in (*ins, *outs):
            d = x._buf.device
            values.append((x._buf.on_device() if d is None else d).ptr + x._offset)
        launch(values, outs[0]._size)

    def launch_with_scalars(ins, outs):
        if line and not 1 < outs[0]._size <= longest:
            return run(exprs, ins, outs)
        values = []
        for x, is_array in zip(ins, arrays):
            if is_array:
                values.append(dptr(x))
            elif x.dtype.kind == "c":
                values += (x.real, x.imag)
            else:
                values.append(x)
        for o in outs:
            values.append(dptr(o))
        launch(values, outs[0]._size)

    launcher = launch_arrays if all(arrays) else launch_with_scalars
    launcher.any_length = line
    return launcher


def _plan(exprs, xs, nin, n):
    """``(exprs, Prepared, layout values, grid)`` for operands ``xs`` (see ``run``)."""
    spec, layout = layout_spec(exprs, xs, nin, n)
    return exprs, prepared(spec), layout, _grid(spec, n)


def layout_spec(exprs, xs, nin, n):
    """``(KernelSpec, layout values)`` of ``exprs`` over operands ``xs`` (inputs, then
    outputs: arrays of the outputs' shape, NumPy scalars) of ``n`` elements: the
    contiguous kernel when every array collapses to one dense dimension, else the strided
    one; the layout values are the parameters after the operands' (see ``run``)."""
    arr = [i for i, x in enumerate(xs) if hasattr(x, "_buf")]
    shape, strides = collapse(xs[-1]._shape, [xs[i]._strides for i in arr])
    ndim = len(shape)
    kinds = ["s"] * len(xs)
    contig = ndim <= 1
    for i, st in zip(arr, strides):
        kinds[i] = "a"
        if ndim == 1 and st[0] != xs[i].dtype.itemsize:
            if st[0] == 0 and i < nin:
                kinds[i] = "b"  # a 0-stride input: read once per thread
            else:
                contig = False
    if not contig:
        kinds = ["s" if k == "s" else "a" for k in kinds]
    operands = tuple((k, _char(x.dtype)) for k, x in zip(kinds, xs))
    if contig:
        return KernelSpec(tuple(exprs), operands, nin, "contig"), [n]
    maxd = _maxd(ndim)
    spec = KernelSpec(tuple(exprs), operands, nin, "strided", maxd, not _fits32(n, shape, strides))
    pad = [0] * (maxd - ndim)
    layout = list(shape[::-1]) + pad  # innermost first
    for st in strides:
        layout += list(st[::-1]) + pad
    return spec, layout + [n, ndim]


_op_exprs: dict = {}


def launch_elementwise(op: ElementwiseOp, ins, outs) -> None:
    """Run one table op over arrays of any strides (broadcast inputs have 0 strides) and
    by-value scalars (converted to the loop dtype here if they are not already)."""
    exprs = _op_exprs.get(op)
    if exprs is None:
        exprs = _op_exprs[op] = op_exprs(op)
    args = []
    for i, x in enumerate(ins):
        if not hasattr(x, "_buf"):
            t = _dtype(op.loop[i]).type
            x = x if type(x) is t else t(x)
        args.append(x)
    run(exprs, args, outs)


# --- the hot path --------------------------------------------------------------------------

# The grid of n elements, then the launch (``launch.INLINE_LAUNCH``: Prepared.launch inline)
_GRID = """\
    g = (n + {chunk_m1}) // {chunk}
    if g > cap:
        g = cap
"""

_FAST_TEMPLATE = """\
def launch(ins, outs, n):
{unpack}
{body}

def values(ins, outs, n):
{unpack}
    return ({values}, n)
"""

# One output, allocated here: the pool's fast path inline (memory.MemoryPool.inline_malloc)
# and its Buffer made inline (``_inline_buffer``)
_NEW_TEMPLATE = """\


def launch_new({xs_in}out, n, nbytes):
{alloc}{buffer}    if not n:
        return
{body}
"""


def _inline_buffer(target: str, device: str, nbytes: str) -> str:
    """Source lines that set ``target`` to ``Buffer(None, <device>, <settled>)``, the Buffer
    of a new device allocation of ``<nbytes>`` bytes (``<settled>``: its level at birth,
    ``buffers.born_settled``'s, inline, its constants written in), without running
    ``Buffer.__init__`` (a Python frame less per result): the object made by
    ``object.__new__`` and every slot set to what ``__init__`` leaves there.  Only where
    ``__init__`` leaves constants (None, ints, bools) in the other slots; else the plain
    call.  (tests/test_hot_path_inline.py checks the two agree slot
    for slot.)"""
    if buffers.SETTLED_ABOVE < 0:
        settled = repr(buffers.LARGE)  # (under CUPYNUM_PLACEMENT=device: every Buffer)
    else:  # (the levels are fixed with the placement mode, before any launcher is made)
        settled = (f"({buffers.LARGE} if {nbytes} > {buffers.SETTLED_ABOVE} "
                   f"else {buffers.BORN_SMALL})")
    fresh = Buffer(None, None)
    lines = ["    _b = new_object(Buffer)"]
    for name in Buffer.__slots__:
        if name == "__weakref__":
            continue
        if name == "device":
            lines.append(f"    _b.device = {device}")
            continue
        if name == "settled":
            lines.append(f"    _b.settled = {settled}")
            continue
        value = getattr(fresh, name, fresh)
        if not (value is None or type(value) in (int, bool)):
            return f"    {target} = Buffer(None, {device}, {settled})\n"
        lines.append(f"    _b.{name} = {value!r}")
    lines.append(f"    {target} = _b")
    return "\n".join(lines) + "\n"


def new_allocator():
    """``alloc(nbytes)``: the backend's ``alloc`` as one Python frame, the pool's fast path
    and the Buffer made inline as the hot launchers make theirs (the layout path allocates
    each result through it)."""
    alloc, ns = memory.get_pool().inline_malloc()
    code = ("def alloc(nbytes):\n"
            "    if nbytes.__class__ is not int:  # (a NumPy integer: the pool keys on ints)\n"
            "        nbytes = index(nbytes)\n"
            + alloc + _inline_buffer("out", "buf", "nbytes") + "    return out\n")
    ns.update({"Buffer": Buffer, "buffers": buffers, "new_object": object.__new__,
               "index": operator.index})
    fname = __file__.rsplit(".", 1)[0] + "<alloc>"
    exec(compiler.default_cache().python_code(code, fname), ns)
    return ns["alloc"]


def contiguous_launcher(op: ElementwiseOp, operand_dtypes):
    """``launch(ins, outs, n)`` for C-contiguous arrays of ``n`` elements and by-value
    scalars (``None`` in ``operand_dtypes``; the caller passes NumPy scalars of the loop
    dtype, or Python scalars where ``launch.packs_python_scalars`` says so).  Outputs are
    arrays of the loop's output dtypes.  Per call: one ``struct.pack_into`` into the
    prepared parameter block and one ``cuLaunchKernel`` with arguments built once
    (``launch.launch_kit``); the stream is read only while some thread uses a non-default one.

    For one output, ``launch.new(x0, .., out, n, nbytes)`` also allocates: it sets
    ``out._buf`` to a new Buffer of ``nbytes`` (the pool's fast path inline) and launches
    into it (the frontend's hot path: one Python frame for allocation and launch).
    ``launch.bare(ins, outs, n)`` returns a no-argument callable that only repeats the
    launch, parameters packed once (the benchmarks' floor)."""
    nin = op.nin
    operands = tuple(("s", canonical_char(op.loop[i])) if dt is None else ("a", _char(dt))
                     for i, dt in enumerate(operand_dtypes))
    operands += tuple(("a", canonical_char(c)) for c in op.loop[nin:])
    exprs = _op_exprs.get(op)
    if exprs is None:
        exprs = _op_exprs[op] = op_exprs(op)
    spec = KernelSpec(exprs, operands, nin, "contig")
    p = prepared(spec)
    grid = _GRID.format(chunk_m1=_chunk(spec) - 1, chunk=_chunk(spec))
    index = "[0]" if p.kit.returns_tuple else ""
    xs_in = "".join(f"x{i}, " for i in range(nin))
    xs_out = "".join(f"x{i}, " for i in range(nin, len(operands)))
    values = ", ".join(_operand_values(operands))
    direct = ", ".join(_operand_values(operands, direct=True))
    body = grid + launch.INLINE_LAUNCH.format(values=values + ", n", direct=direct + ", n",
                                              block=BLOCK, streams="rt.nondefault_streams",
                                              index=index)
    code = _FAST_TEMPLATE.format(unpack=f"    {xs_in}= ins\n    {xs_out}= outs", values=values,
                                 body=body)
    ns = {**launch.inline_names(p), "cap": _grid_cap(), "Buffer": Buffer, "buffers": buffers,
          "new_object": object.__new__}
    if len(operands) == nin + 1 and runtime.is_initialized():  # (not with CPU stand-ins)
        # (``nds``, the launch's stream test, is read by the inline allocation first)
        alloc, alloc_ns = memory.get_pool().inline_malloc()
        values_new = ", ".join(_operand_values(operands, out="buf.ptr"))
        direct = ", ".join(_operand_values(operands, out="buf.ptr", direct=True))
        body = grid + launch.INLINE_LAUNCH.format(values=values_new + ", n",
                                                  direct=direct + ", n", block=BLOCK,
                                                  streams="nds", index=index)
        code += _NEW_TEMPLATE.format(xs_in=xs_in, alloc=alloc, body=body,
                                     buffer=_inline_buffer("out._buf", "buf", "nbytes"))
        ns.update(alloc_ns)
    # The file name sits inside this package, so profilers and tracebacks place the
    # launcher in the backend (tests/test_hot_path.py counts frontend calls by file).
    fname = __file__.rsplit(".", 1)[0] + f"<launcher {kernel_name(spec)}>"
    exec(compiler.default_cache().python_code(code, fname), ns)
    launcher = ns["launch"]
    launcher.bare = functools.partial(_bare, spec, ns["values"])
    launcher.new = ns.get("launch_new")
    # Scalar slots are packed by struct.pack_into, which also takes Python scalars (the
    # frontend passes those where the bits equal NumPy's conversion, see _ufunc.py, and
    # converts through NumPy when packing raises struct.error / OverflowError).
    launcher.packs_python_scalars = True
    return launcher


def _operand_values(operands, out=None, direct=False):
    """The expressions a launcher packs per operand ``x<i>``: a pointer per array (``out``
    for the single output when given; ``direct``: read as ``DIRECT_PTR_EXPR``), and
    ``.real``/``.imag`` for complex scalars."""
    ptr = DIRECT_PTR_EXPR if direct else PTR_EXPR
    values = []
    for i, (kind, c) in enumerate(operands):
        if kind == "s":
            values += [f"x{i}.real", f"x{i}.imag"] if _is_complex(c) else [f"x{i}"]
        elif out is not None and i == len(operands) - 1:
            values.append(out)
        else:
            values.append(ptr.format(f"x{i}"))
    return values


def _bare(spec, values, ins, outs, n):
    """A no-argument callable repeating one launch of ``spec`` over these operands, with
    its own parameter block packed once (so other launches cannot disturb it)."""
    pb, pack = param_block(spec)
    pack(pb._data, 0, *values(ins, outs, n))
    k = launch.launch_kit(prepared(spec).func, pb.address)
    g = min(-(-n // (BLOCK * vector_width(spec))), _grid_cap())
    call = functools.partial(k.raw, k.func, g, 1, 1, BLOCK, 1, 1, 0, k.stream0, k.params,
                             k.extra)
    call.param_block = pb  # keeps the block alive as long as the callable
    return call
