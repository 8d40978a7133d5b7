"""A reduction whose input is a pending elementwise expression, as one reduction kernel with
the expression as its prologue (``(a * b).sum()``: the product is never stored).

The reduction is planned exactly as the reduction of the stored result would be
(``reduction._plan_reduce`` over the pending array's shape and strides), and its kernels
walk that array at a fake address (``VBASE`` plus the view's offset, so the kernels see the
alignment a pool allocation has): only the element loads change, into the evaluation of the
expression at that element (``cpn_red::prologue`` over a generated struct, see
kernels/cpn/reduce.cuh).  So the elements, their order and the combination tree are the
unfused path's, and the values its bits.  First passes (``rows``, ``rows32``, ``cols``) take
the prologue; a second pass over partial states is the unit's own kernel.

The expression's operands are laid over the pending array's memory order: when every array
operand is dense in that order (``contig``) element i of an operand is at ``i * itemsize``
and the vector path loads 16 bytes at a time; otherwise (``nd``: broadcast, strided,
reversed, transposed operands, at most ``reduction.MAXD`` dims after merging) offsets come
from the shape and strides, passed by value.  More dims, or a reduction whose input would be
compacted first, run the unfused way.

As for fused elementwise kernels (``fused.py``), a structure (the graph's code and operand
kinds, the reduction unit and the layout class) is compiled the
``tuning.FUSION.compile_after``-th time it is seen; until then, and for good if NVRTC
rejects it (logged once), ``run`` declines and the caller computes the expression and then
reduces it.
"""
from __future__ import annotations

import hashlib
import logging

import numpy as np

from .elementwise import collapse
from .elementwise_source import (KernelSpec, _body, _dtype, _ops_in, canonical_char, ctype,
                                 user_functors)
from . import compiler, fused, launch, reduction, runtime, tuning
from .reduction import BLOCK, MAXD, Unit
from .view import dptr

_log = logging.getLogger("cupynum.fusion")

VBASE = 256  # RED_VBASE: where the kernels believe the never-stored array starts
FIRST = ("rows", "rows32", "cols")  # the kinds that read the input (the prologue's)
_CACHE_SIZE = 4096

_seen: dict = {}  # structure key -> times seen, until compiled
_failed: set = set()  # structure keys NVRTC rejected
_programs: dict = {}  # structure key -> its Program
_plans: dict = {}  # (structure key, layout, axes, op, initial?) -> plan, or None (declined)
_declined: set = set()  # ``run``'s facts of calls that a layout or a plan declined


def _decline(facts) -> None:
    if len(_declined) >= _CACHE_SIZE:
        _declined.clear()
    _declined.add(facts)


class Program:
    """One structure's kernels: ``source`` (the NVRTC program), ``names`` (kind -> kernel
    name), ``dtypes`` (the kernels' parameter slot dtypes: the reduction's, then the
    prologue's), and ``prepared`` (kind -> Prepared kernel, filled by ``prepared``)."""

    def __init__(self, key, source, names, dtypes):
        self.key, self.source, self.names, self.dtypes = key, source, names, dtypes
        self.prepared = {}


def get_kernel(prog, kind):
    """The loaded kernel ``kind`` of ``prog`` (NVRTC through the disk cache; patched by the
    CPU tests)."""
    mod = _modules.get(prog.source)
    if mod is None:
        cubin = compiler.compile_cubin(prog.source, options=reduction.compile_options(),
                                       name=reduction.PROGRAM_NAME).cubin
        if len(_modules) >= _CACHE_SIZE:
            _modules.clear()
        mod = _modules[prog.source] = runtime.load_module(cubin)
    return mod.get_function(prog.names[kind])


_modules: dict = {}


def prepared(prog, kind) -> launch.Prepared:
    p = prog.prepared.get(kind)
    if p is None:
        p = prog.prepared[kind] = launch.Prepared((prog.key, kind), get_kernel(prog, kind),
                                                  prog.dtypes)
    return p


# --- the operands' layout --------------------------------------------------------------------


def layout(graph, root):
    """``(class, values)`` of the operands over the pending array ``root``'s memory order:
    ``("contig", [])`` when each array operand is dense in that order, else ``("nd",
    dims + [ndim])`` (shape, then each array operand's byte strides, innermost first,
    padded to ``MAXD``); None past ``MAXD`` dims."""
    shape, vst = root._shape, root._strides
    order = sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: -abs(vst[d]))
    arrays = [x for x in graph.ins if hasattr(x, "_buf")]
    if not order:
        return "contig", []
    # the array's own strides first: it is dense and ordered, so collapse keeps its order
    sh, strides = collapse([shape[d] for d in order],
                           [[vst[d] for d in order]] + [[x._strides[d] for d in order]
                                                        for x in arrays])
    ops = strides[1:]
    if len(sh) == 1 and all(st[0] == x.dtype.itemsize for st, x in zip(ops, arrays)):
        return "contig", []
    if len(sh) > MAXD:
        return None
    pad = [0] * (MAXD - len(sh))
    values = list(sh[::-1]) + [1] * (MAXD - len(sh))
    for st in ops:
        values += list(st[::-1]) + pad
    return "nd", values + [len(sh)]


# --- kernel text -----------------------------------------------------------------------------


def _struct(name, spec, kinds, cls):
    """The prologue struct ``name`` (see reduce.cuh's ``prologue``): members ``q<i>`` per
    operand i (``const char*`` for arrays, the value for scalars), ``pd``/``pnd`` for the
    nd class; ``at`` and ``atv``."""
    T = ctype(spec.operands[-1][1])
    arrays = [i for i, (k, _) in enumerate(kinds) if k == "a"]
    slot = {i: a for a, i in enumerate(arrays)}
    members = [f"  const char* q{i};" if k == "a" else f"  {ctype(c)} q{i};"
               for i, (k, c) in enumerate(kinds)]
    if cls == "nd":
        members.append(f"  cpn_red::pdims<{len(arrays)}> pd;\n  int pnd;")

    def size(i):
        return f"{_dtype(kinds[i][1]).itemsize}ll"

    def scalar_or(load):
        return lambda i: f"q{i}" if kinds[i][0] == "s" else load(i)

    if cls == "nd":
        lines, (res,) = _body(spec, scalar_or(
            lambda i: f"cpn_red::ld<{ctype(kinds[i][1])}>(q{i} + o[{slot[i]}])"))
        at = [f"    long long o[{len(arrays)}];",
              "    cpn_red::poffsets(pd, pnd, i, o);"] if arrays else []
        atv = ["#pragma unroll", "    for (int k = 0; k < V; ++k) v[k] = at(i + k);"]
    else:
        lines, (res,) = _body(spec, scalar_or(
            lambda i: f"cpn_red::ld<{ctype(kinds[i][1])}>(q{i} + i * {size(i)})"))
        at = []
        vlines, (vres,) = _body(spec, scalar_or(lambda i: f"a{i}[k]"))
        atv = [f"    {ctype(kinds[i][1])} a{i}[V];\n"
               f"    cpn_red::ldn<{ctype(kinds[i][1])}, V>(q{i} + i * {size(i)}, a{i});"
               for i in arrays]
        atv += ["#pragma unroll", "    for (int k = 0; k < V; ++k) {",
                *("      " + ln for ln in vlines), f"      v[k] = {vres};", "    }"]
    return "\n".join([
        f"struct {name} {{",
        f"  typedef {T} value_t;",
        *members,
        "  __device__ __forceinline__ value_t at(long long i) const {",
        *at, *("    " + ln for ln in lines), f"    return {res};", "  }",
        "  template <int V> __device__ __forceinline__ void atv(long long i, "
        "value_t (&v)[V]) const {",
        *atv, "  }", "};"])


def _params(kinds, cls):
    """The prologue's kernel parameters after the unit's: ``[(C++ type, name, slot
    dtype)]``."""
    out = []
    for i, (k, c) in enumerate(kinds):
        if k == "a":
            out.append(("const char*", f"q{i}", np.dtype(np.uintp)))
        else:
            out.append((f"const {ctype(c)}", f"q{i}", _dtype(c)))
    if cls == "nd":
        na = sum(k == "a" for k, _ in kinds)
        out.append((f"const cpn_red::pdims<{na}>", "pd", np.dtype((np.int64, MAXD * (1 + na)))))
        out.append(("const int", "pnd", np.dtype(np.int32)))
    return out


def program(key, exprs, kinds, unit, cls) -> Program:
    """The NVRTC program of structure ``key``: the prologue struct and the unit's first-pass
    kernels over it (``reduction.unit_source``; the unit's input is the expression's
    dtype)."""
    h = hashlib.sha1(repr(key).encode()).hexdigest()[:16]
    spec = KernelSpec(exprs, (*kinds, ("a", unit.inp)), len(kinds))
    params = _params(kinds, cls)
    pro = reduction.Prologue(f"cpn_pro_{h}", tuple((t, n) for t, n, _ in params),
                             f"cpn_redfused_{h}")
    users, users_cplx = user_functors(exprs)
    cplx = users_cplx or any(_dtype(c).kind == "c" for _, c in kinds) or any(
        _dtype(c).kind == "c" for op in _ops_in(exprs) for c in op.loop)
    source = "\n\n".join([reduction.program_head([unit], cplx) + "\n" + users,
                           _struct(pro.struct, spec, kinds, cls), reduction.unit_source(unit, pro)])
    names = {k: n for k, n in reduction.kernel_names(unit, pro.base).items() if k in FIRST}
    dtypes = [*reduction._layout(unit, "rows")[0], *(dt for _, _, dt in params)]
    return Program(key, source, names, dtypes)


# --- running -----------------------------------------------------------------------------------


def _unit(method, src, args):
    """``(unit, ReduceOp or None, out, axes, initial, mean)`` of a reduction call (as the
    unfused ``reduction.reduce``, ``arg_reduce`` and ``sqdev_sum`` build their units)."""
    t = canonical_char(src.dtype.char)
    if method == "reduce":
        op, _, out, axes, initial = args
        return (Unit("reduce", op.functor, t, canonical_char(op.loop),
                     canonical_char(out.dtype.char)), op, out, axes, initial, None)
    if method == "arg_reduce":
        kind, _, out, axes = args
        return Unit("arg", kind, t, t, canonical_char(out.dtype.char)), None, out, axes, None, None
    _, mean, out, axes = args  # sqdev_sum
    rc = canonical_char(out.dtype.char)
    return Unit("sqdev", "add", t, rc, rc), None, out, axes, None, mean


def run(graph, method, src, args) -> bool:
    """``Backend.run_fused_reduce`` on the CUDA backend: the reduction ``method`` (``reduce``,
    ``arg_reduce``, ``sqdev_sum``) called with ``args``, where ``src`` (one of them) views
    the value of ``graph``'s root, in one reduction with the graph as its prologue.  False
    where it declines (the caller computes the root, then reduces): a structure not
    compiled yet or rejected by NVRTC, a layout it does not handle, a root made on another
    stream."""
    root = graph[-1]
    if root.stream != fused.current_stream():
        return False
    # What the layout and the plan decide, from the call's facts alone: a statement
    # declined for its layout is declined again without building them (kmeans' argmin
    # every iteration; 20-30 us of Python each time under the fake driver)
    code, kinds = tuple(graph.code), tuple(graph.kinds)
    facts = (code, kinds, method, args[0] if method != "sqdev_sum"
             else None, root._shape, root._strides, src._shape, src._strides, args[2]._strides,
             tuple(args[3]), method == "reduce" and args[4] is not None,
             tuple([getattr(x, "_strides", None) for x in graph.ins]))
    if facts in _declined:
        return False
    lay = layout(graph, root)
    if lay is None:
        _decline(facts)
        return False
    cls, lay_values = lay
    unit, op, out, axes, initial, mean = _unit(method, src, args)
    key = (code, kinds, unit, cls)
    prog = _programs.get(key)
    if prog is None:
        if key in _failed:
            return False
        seen = _seen.get(key, 0) + 1
        if len(_seen) >= _CACHE_SIZE:
            _seen.clear()
        _seen[key] = seen
        if seen < tuning.FUSION.compile_after:
            return False
        prog = program(key, fused.exprs_of(graph, (len(graph) - 1,)), kinds, unit, cls)
        if len(_programs) >= _CACHE_SIZE:
            _programs.clear()
            _plans.clear()
        _programs[key] = prog
    pkey = (key, src._shape, src._strides, out._strides, axes, op, initial is not None)
    plan = _plans.get(pkey, False)
    if plan is False:
        try:
            plan = _plan(prog, unit, op, src, out, axes, initial is not None)
        except Exception as e:  # noqa: BLE001 - NVRTC's error, or no NVRTC at all
            if not isinstance(e, (compiler.CompileError, OSError, ImportError)):
                raise
            if not _failed:
                _log.warning("cupynum: a fused reduction did not compile; such reductions "
                             "compute their input first (%s)",
                             str(e).splitlines()[0] if str(e) else type(e))
            _failed.add(key)
            _programs.pop(key, None)
            return False
        if len(_plans) >= _CACHE_SIZE:
            _plans.clear()
        _plans[pkey] = plan
    if plan is None:
        _decline(facts)
        return False
    _execute(plan, src, out, initial, mean, _prologue_values(graph.ins) + lay_values)
    return True


def _plan(prog, unit, op, src, out, axes, has_init):
    """The reduction's plan (``reduction._plan_reduce``, the unfused path's own) with the
    prologue kernels for the first passes, each step marked with whether it takes the
    prologue's parameters; None where the input would be compacted first, or where a rows
    pass would evaluate an ``nd`` prologue (each element's operand offsets by 64-bit
    division, per element: 1.6-1.9x the time of computing the expression and reducing it
    on the H200, docs/internals.md, "Fused reductions"; the cols pass amortises it)."""
    rows_nd = []

    def kernel(kind):
        if kind not in FIRST:
            return reduction.prepared(unit, kind)
        if prog.key[3] == "nd" and kind != "cols":
            rows_nd.append(kind)
            return None  # (declined below, before anything is compiled)
        return prepared(prog, kind)

    seq = op is not None and op.neutral is None
    steps, temps, compact = reduction._plan_reduce(unit, src, out, tuple(axes), seq, has_init,
                                                   kernel)
    if compact is not None or rows_nd:
        return None
    if unit.family == "sqdev":  # every kernel of the unit reads the means (as sqdev_sum)
        steps = [(p, grid, values + [None], ptrs + [(len(values), "aux")])
                 for p, grid, values, ptrs in steps]
    neutral = (op.neutral if unit.family == "reduce" else
               np.dtype(unit.loop).type(-0.0) if unit.family == "sqdev" else None)
    steps, temps, _ = reduction._finish((steps, temps, None),
                                        reduction._ident_values(unit, neutral, None)[0])
    firsts = set(map(id, prog.prepared.values()))
    return tuple((*s, id(s[0]) in firsts) for s in steps), temps


def _prologue_values(ins):
    values = []
    for x in ins:
        if hasattr(x, "_buf"):
            values.append(dptr(x))
        elif x.dtype.kind == "c":
            values += (x.real, x.imag)
        else:
            values.append(x)
    return values


def _execute(plan, src, out, initial, mean, extra):
    steps, temps = plan
    bufs = [reduction._alloc(n) for n in temps] if temps else ()
    inp, outp = VBASE + src._offset, dptr(out)
    for p, grid, vals, ptrs, init_pos, nsc, first in steps:
        vals = vals.copy()
        for slot, name in ptrs:
            vals[slot] = (inp if name == "in" else outp if name == "out" else
                          dptr(mean) if name == "aux" else bufs[name].ptr)
        if init_pos and initial is not None:
            parts = ([float(initial.real), float(initial.imag)] if nsc == 2 else
                     [initial.item()])
            for pos in init_pos:
                vals[pos:pos + nsc] = parts
        if first:
            vals += extra
        p.launch(vals, grid, BLOCK)
    # temporaries go back to the pool in stream order when ``bufs`` is dropped
