"""The CUDA reduction engine: reductions, arg-reductions and scans (kernels/cpn/reduce.cuh).

Layout.  A reduction over ``axes`` of an array is an (M kept) x (R reduced) iteration
space.  Size-1 dims go, kept dims are ordered and merged as the elementwise ``collapse``
does (over the input and output strides), reduced dims too (over the input strides; in C
order, merged only when contiguous, for arg-reductions and sequential ops, whose index or
order matters).  More than ``RED_MAXD`` (4) dims on either side: the input is first copied
into (kept..., reduced...) C order.  Then, by which side has the smaller input stride:

* ``rows`` (reduced dims innermost, or M == 1): a group (the block, or a warp for short
  rows) reduces one slice of a row; a row long enough for the GPU to need more blocks is
  split into ``S`` slices whose partial states a second ``rows`` pass combines (two-pass
  whole-array reduction: per-block partials, then a final block).  Contiguous rows use
  16-byte vector loads.
* ``cols`` (kept dims innermost): each thread walks the reduced positions of one kept
  position, coalesced across threads; grid.y splits R into slices when M alone does not
  fill the GPU, then a second ``cols`` pass combines them.  Non-reorderable ops (no
  ``neutral``) always take ``cols`` with one slice: strictly left to right.

Scans: one thread per line (``scan_cols``) for non-reorderable ops and when lines are many
and strided; otherwise a single-pass chained scan (``scan_chain``, decoupled look-back: a
block per tile of ``BLOCK * chain_items`` positions taken from an atomic tile counter,
warp-striped vector loads/stores, the tile's aggregate and inclusive prefix published in a
status array zeroed by a memset step before the launch; the look-back polls
``32 * chain_window`` predecessors in one round trip and keeps ``chain_keep`` windows in
shared memory for its left fold).  Many lines whose kept positions are innermost (column
scans) take ``scan_blocks`` instead (a thread a line, coalesced rows; the lines cut into
chunks: chunk totals, their scan in place, then the chunks from their prefixes).  The
knobs are ``tuning.SCAN`` and ``tuning.REDUCTION``.

var/std: ``sqdev_sum`` is a reduction (family 'sqdev') of |x - mean|^2, the mean of each
kept position read once per group from an array laid out as the output.

Everything is deterministic: the launch shape depends only on shapes and the SM count,
and the combination order only on the launch shape.  The chained scan's only atomic is
its tile counter, and its look-back always left-folds the aggregates from the nearest
inclusive prefix, so its bits do not depend on timing either (see ``scan_chain``).

Programs: one per (family, functor, input, loop, output dtype) holding its few kernels,
compiled on first use (or by ``precompile`` for the default set) and cached like the
elementwise programs.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ... import _ops
from .copy_fill import bit_copy
from .elementwise import collapse
from .elementwise_source import _code, _dtype, canonical_char, ctype
from . import compiler, elementwise, launch, memory, runtime, tuning
from .view import DeviceView, alias, c_strides, dptr

BLOCK = 256  # RED_BLOCK: threads per block (the kernels' __launch_bounds__)
MAXD = 4  # RED_MAXD: kept / reduced dims a kernel walks (more: a compact copy first)
PROGRAM_NAME = "cupynum_reduction.cu"


class Unit(NamedTuple):
    """One program: ``family`` 'reduce' | 'arg' | 'scan' | 'sqdev'; ``functor`` a cpn
    functor (or 'argmax' / 'argmin'); dtype chars of the input, the loop and the output.
    'sqdev' sums |x - mean|^2 (var/std): functor 'add', input float or complex, loop and
    output its real type, the means (input dtype) laid out as the output."""
    family: str
    functor: str
    inp: str
    loop: str
    out: str


def _cchar(c):
    return canonical_char(c)


def compute_char(loop: str) -> str:
    """The type the kernels accumulate in: float for float16 loops."""
    return "f" if _dtype(loop).kind == "f" and _dtype(loop).itemsize == 2 else loop


def _state_size(unit: Unit) -> int:
    c = _dtype(compute_char(unit.loop))
    if unit.family != "arg":
        return c.itemsize
    align = max(8, 2 * (c.itemsize // 2) if c.kind == "c" else c.itemsize)
    return -(-(c.itemsize + 8) // align) * align


def kernel_names(unit: Unit, base=None) -> dict:
    """kind -> kernel name; ``base``: the names' stem (default: the unit's)."""
    base = base or (f"cpn_{unit.family}_{unit.functor}_"
                    f"{_code(unit.inp)}{_code(unit.loop)}{_code(unit.out)}")
    if unit.family == "scan":
        kinds = ("scan_cols", "scan_cols_part", "scan_chain", "scan_blocks")
    else:
        kinds = ("rows", "rows32", "cols", "rows_part", "cols_part")
    return {k: f"{base}__{k}" for k in kinds}


def chain_items(unit: Unit) -> int:
    """Elements per thread of a scan_chain tile: ``tuning.SCAN.chain_items``, at most
    32 KiB of states."""
    want = tuning.SCAN.chain_items
    if isinstance(want, dict):
        want = want.get(_state_size(unit), 16)
    it = max(1, min(int(want), (32768 // BLOCK) // _state_size(unit)))
    return 1 << (it.bit_length() - 1)


def _chain_minb(unit: Unit) -> int:
    t = tuning.SCAN
    m = t.chain_min_blocks if t.chain_transpose else 0
    return int(m.get(_state_size(unit), 0) if isinstance(m, dict) else m)


def _reducer(unit: Unit, part: bool) -> str:
    i, a, o = ctype(unit.inp), ctype(unit.loop), ctype(unit.out)
    if unit.family == "sqdev":
        if part:
            return f"cpn_red::plain_part<cpn::add, {a}, {a}, {o}>"
        return f"cpn_red::sqdev<{i}, {a}, {o}>"
    if unit.family == "arg":
        cmp = f"cpn_red::{unit.functor}_cmp"
        return f"cpn_red::arg{'_part' if part else ''}<{cmp}, {i}, {a}, {o}>"
    return f"cpn_red::plain{'_part' if part else ''}<cpn::{unit.functor}, {i}, {a}, {o}>"


class Prologue(NamedTuple):
    """An elementwise expression computed where a unit's first passes load (fused reductions,
    ``fused_reduction.py``): ``struct``, the name of its C++ struct (``cpn_red::prologue``'s
    P); ``params``, ``(C++ type, name)`` of its members, passed after the unit's parameters;
    ``base``, the stem of the kernels' names."""
    struct: str
    params: tuple
    base: str


def unit_source(unit: Unit, prologue: Prologue | None = None) -> str:
    """The ``extern "C"`` kernels of one unit (no includes: see ``program_source``); with a
    ``prologue`` (reductions, arg-reductions and sqdev), its first-pass kernels over it."""
    names = kernel_names(unit, prologue and prologue.base)
    c = ctype(compute_char(unit.loop))
    out = []
    red_args = ("const char* in, char* out, const {c} ident, const {c} init, "
                "const cpn_red::rdims g, const long long M, const long long R, const int kd, "
                "const int rd, const long long chunk, const int S, const int flags").format(c=c)

    def init_state(red):
        if unit.family == "arg":
            return f"typename {red}::state s0; s0.v = init; s0.i = -1;"
        return f"typename {red}::state s0 = init;"

    def head(name, minb=0):
        lb = f"{BLOCK}, {int(minb)}" if minb else f"{BLOCK}"
        return f'extern "C" __global__ void __launch_bounds__({lb}) {name}('

    if unit.family in ("reduce", "arg", "sqdev"):
        aux, bind = "", ""
        if unit.family == "sqdev":  # the means
            aux, bind = ", const char* aux", " red.mean = aux;"
        if prologue is not None:
            aux += "".join(f", {t} {n}" for t, n in prologue.params)
            bind += "".join(f" red.pro.{n} = {n};" for _, n in prologue.params)
        for kind, part, call in (("rows", False, "rows<Rd, RED_BLOCK>"),
                                 ("rows32", False, "rows<Rd, 32>"),
                                 ("cols", False, "cols<Rd>"),
                                 ("rows_part", True, "rows<Rd, RED_BLOCK>"),
                                 ("cols_part", True, "cols<Rd>")):
            if prologue is not None and part:
                continue  # (a second pass reads partial states: the unit's own kernel)
            red = _reducer(unit, part)
            if prologue is not None:
                red = f"cpn_red::prologue<{red}, {prologue.struct}>"
            minb = (tuning.REDUCTION.arg_min_blocks
                    if unit.family == "arg" and kind in ("rows", "rows32") else 0)
            out.append(f"{head(names[kind], minb)}{red_args}{aux}) {{\n"
                       f"  typedef {red} Rd;\n  Rd red; red.ident = ident;"
                       f"{bind if not part else ''}\n  {init_state('Rd')}\n"
                       f"  cpn_red::{call}(red, in, out, s0, g, M, R, kd, rd, chunk, S, flags);\n}}\n")
    else:
        red, redp = _reducer(unit, False), _reducer(unit, True)
        scan_args = (f"const char* in, char* out, const {c} ident, const cpn_red::rdims g, "
                     "const long long M, const long long R, const int kd, const int rd, "
                     "const long long ostride, const int flags")
        for kind, r in (("scan_cols", red), ("scan_cols_part", redp)):
            out.append(f"{head(names[kind])}{scan_args}) {{\n"
                       f"  typedef {r} Rd;\n  Rd red; red.ident = ident;\n"
                       "  cpn_red::scan_cols<Rd>(red, in, out, g, M, R, kd, rd, ostride, flags);\n}\n")
        out.append(f"{head(names['scan_chain'], _chain_minb(unit))}const char* in, char* out, "
                   "char* tmp, "
                   f"const {c} ident, const cpn_red::rdims g, const long long M, "
                   "const long long R, const int kd, const long long ostride, "
                   "const long long T, const int flags) {\n"
                   f"  typedef {red} Rd;\n  Rd red; red.ident = ident;\n"
                   f"  cpn_red::scan_chain<Rd, {chain_items(unit)}>(red, in, out, tmp, g, M, R, kd, "
                   "ostride, T, flags);\n}\n")
        out.append(f"{head(names['scan_blocks'])}const char* in, char* out, char* carries, "
                   f"const {c} ident, const cpn_red::rdims g, const long long M, "
                   "const long long R, const int kd, const long long ostride, "
                   "const long long chunk, const int flags) {\n"
                   f"  typedef {red} Rd;\n  Rd red; red.ident = ident;\n"
                   "  cpn_red::scan_blocks<Rd>(red, in, out, carries, g, M, R, kd, ostride, "
                   "chunk, flags);\n}\n")
    return "\n".join(out)


def _is_complex_unit(u: Unit) -> bool:
    return any(_dtype(c).kind == "c" for c in (u.inp, u.loop, u.out))


def program_source(units) -> str:
    units = list(dict.fromkeys(units))
    return program_head(units) + "\n\n" + "\n".join(unit_source(u) for u in units)


def program_head(units, cplx=False) -> str:
    """The defines and includes of a program of ``units`` (complex support where a unit or
    ``cplx`` needs it)."""
    cplx = cplx or any(_is_complex_unit(u) for u in units)
    lb = ""
    if any(u.family == "scan" for u in units):  # the look-back knobs (scan_chain)
        t = tuning.SCAN
        lb = (f"#define RED_LB_P {int(t.chain_window)}\n#define RED_LB_NB {int(t.chain_keep)}\n"
              f"#define RED_LB_SLEEP {int(t.chain_sleep)}\n"
              f"#define RED_LB_DELAY {int(t.chain_delay)}\n"
              f"#define RED_CHAIN_WT {int(bool(t.chain_transpose))}\n"
              f"#define RED_COL_U {int(t.col_unroll)}\n")
    if any(u.family == "arg" for u in units):  # the arg fast path's knobs (rows)
        t = tuning.REDUCTION
        lb += (f"#define RED_ARG_FAST {int(bool(t.arg_fast))}\n"
               f"#define RED_ARG_LOADS {int(t.arg_loads)}\n")
    head = [lb + "#define CPN_RED_COMPLEX" if cplx else lb,
            '#include "cpn/complex.cuh"' if cplx else '#include "cpn/real.cuh"',
            '#include "cpn/reduce.cuh"']
    return "\n".join(head)


# --- parameter blocks ----------------------------------------------------------------------

NDIMS = 5 * MAXD  # int64 values of cpn_red::rdims


def _layout(unit: Unit, kind: str):
    """(slot dtypes, struct formats) of a kernel's parameters (``launch.packer``)."""
    c = _dtype(compute_char(unit.loop))
    p, q, i = np.dtype(np.uintp), np.dtype(np.int64), np.dtype(np.int32)
    dims = np.dtype((np.int64, NDIMS))
    if kind in ("rows", "rows32", "cols", "rows_part", "cols_part"):
        dts = [p, p, c, c, dims, q, q, i, i, q, i, i]
        if unit.family == "sqdev":
            dts.append(p)
    elif kind in ("scan_chain", "scan_blocks"):
        dts = [p, p, p, c, dims, q, q, i, q, q, i]
    else:  # scan_cols, scan_cols_part
        dts = [p, p, c, dims, q, q, i, i, q, i]
    return dts, launch.formats(dts)


def param_block(unit: Unit, kind: str):
    """``(ParamBlock, pack)`` of a kernel (``launch.packer``: one ``struct.pack_into``)."""
    return launch.packer(*_layout(unit, kind))


# --- kernels at run time ------------------------------------------------------------------

_modules: dict = {}
_funcs: dict = {}
_load_lock = threading.Lock()


def compile_options() -> tuple:
    return elementwise.compile_options()


def get_kernel(unit: Unit, kind: str):
    key = (unit, kind)
    f = _funcs.get(key)
    if f is not None:
        return f
    src = program_source([unit])
    mod = _modules.get(src)
    if mod is None:
        cubin = compiler.compile_cubin(src, options=compile_options(), name=PROGRAM_NAME).cubin
        with _load_lock:
            mod = _modules.get(src)
            if mod is None:
                mod = _modules[src] = runtime.load_module(cubin)
    f = _funcs[key] = mod.get_function(kernel_names(unit)[kind])
    return f


def prepared(unit: Unit, kind: str) -> launch.Prepared:
    """A unit's kernel of ``kind``, loaded, with its parameter block (``launch.Prepared``)."""
    p = _prepared.get((unit, kind))
    if p is None:
        p = _prepared.setdefault((unit, kind), launch.Prepared(
            (unit, kind), get_kernel(unit, kind), *_layout(unit, kind)))
    return p


_prepared: dict = {}
_sms = 0


def sm_count() -> int:
    global _sms
    if not _sms:
        _sms = runtime.multiprocessor_count()
    return _sms


def _alloc(nbytes: int):
    return memory.get_pool().malloc(max(nbytes, 1))


def _memset0(ptr: int, nbytes: int) -> None:
    """Zero ``nbytes`` at ``ptr`` on the current stream (patched by the CPU tests)."""
    memory.memset_d8(ptr, 0, nbytes)


def _drop_compiled() -> None:
    """A knob changed (``tuning.override``): the kernels and plans built from the old
    values go."""
    _funcs.clear()
    _prepared.clear()
    _plans.clear()


tuning.on_change(_drop_compiled)


# --- layouts ----------------------------------------------------------------------------------


def _collapse_kept(shape, sin, sout):
    if not shape:
        return (), (), ()
    sh, (si, so) = collapse(shape, [sin, sout])
    if sh == (1,) or (len(sh) == 1 and not any(n != 1 for n in shape)):
        return (), (), ()
    return sh, si, so


def _collapse_red(shape, strides, ordered: bool):
    """Reduced dims (C order, last innermost): ``ordered`` keeps the logical C order (the
    flat index matters), merging only neighbours that are contiguous with each other."""
    if not ordered:
        sh, (st,) = collapse(shape, [strides])
        return sh, st
    out_sh, out_st = [], []
    for n, s in zip(shape, strides):
        if out_sh and out_st[-1] == s * n:
            out_sh[-1] *= n
            out_st[-1] = s
        else:
            out_sh.append(n)
            out_st.append(s)
    return tuple(out_sh), tuple(out_st)


def _dims(kshape, kin, kout, rshape, rin):
    """The rdims values, innermost first, padded to MAXD."""
    def pad(v, fill):
        v = list(v[::-1])
        return v + [fill] * (MAXD - len(v))
    return (pad(kshape, 1) + pad(kin, 0) + pad(kout, 0) + pad(rshape, 1) + pad(rin, 0))


def _compact(src, axes):
    """A C-ordered copy of ``src`` laid out (kept..., reduced...): shape and the new axes."""
    kept = [d for d in range(len(src._shape)) if d not in axes]
    order = kept + list(axes)
    shape = tuple(src._shape[d] for d in order)
    perm = alias(src, shape, src.dtype, tuple(src._strides[d] for d in order))
    dst = DeviceView(_alloc(perm._size * src.dtype.itemsize), shape, src.dtype)
    bit_copy(perm, dst)
    return dst, tuple(range(len(kept), len(order)))


def _split(space: int, work: int, min_chunk: int, cap: int = 1 << 30):
    """Slices per line: enough blocks to fill the GPU (``space`` groups available already),
    none shorter than ``min_chunk`` elements."""
    target = sm_count() * tuning.REDUCTION.wave
    if space >= target or work <= min_chunk:
        return 1
    s = min(target // max(space, 1), work // min_chunk, cap)  # one wave: no partial tail
    return max(1, s)


# --- plans -----------------------------------------------------------------------------------
# A plan is a list of steps (Prepared, grid, values with None where a pointer goes, pointer
# sources) plus the temporaries' sizes; executing one only fills pointers and scalars.

_plans: dict = {}


def _ident_values(unit, neutral, initial):
    c = _dtype(compute_char(unit.loop))

    def parts(v):
        if v is None:
            v = c.type(0)
        v = c.type(v)
        return [float(v.real), float(v.imag)] if c.kind == "c" else [v.item()]
    return parts(neutral), parts(initial)


def reduce(op, src, out, axes, initial=None) -> None:
    """``out[...] = initial (op) reduce(src over axes)`` (see ``Backend.reduce``)."""
    key = (op, src.dtype, out.dtype, src._shape, src._strides, out._strides, axes,
           initial is not None)
    plan = _plans.get(key)
    if plan is None:
        unit = Unit("reduce", op.functor, _cchar(src.dtype.char), _cchar(op.loop),
                    _cchar(out.dtype.char))
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = _finish(_plan_reduce(unit, src, out, tuple(axes),
                                                  op.neutral is None, initial is not None),
                                     _ident_values(unit, op.neutral, None)[0])
    _execute(plan, src, out, initial)


def _finish(plan, ident):
    """Expand the scalar markers of a plan's steps: ident values now (fixed per op), init
    positions recorded for each call."""
    steps, temps, compact = plan
    out = []
    for p, grid, values, ptrs in steps:
        if p is _MEMSET:
            out.append((p, grid, (), tuple(ptrs), (), 0))
            continue
        vals, init_pos = [], []
        for v in values:
            if v is _IDENT:
                vals += ident
            elif v is _INIT:
                init_pos.append(len(vals))
                vals += [0] * len(ident)
            else:
                vals.append(v)
        out.append((p, grid, vals, tuple(ptrs), tuple(init_pos), len(ident)))
    return tuple(out), tuple(temps), compact


def _execute(plan, src, out, initial, aux=None):
    steps, temps, compact = plan
    if compact is not None:
        src, _ = _compact(src, compact)
    bufs = [_alloc(n) for n in temps] if temps else ()
    inp, outp = dptr(src), dptr(out)
    for p, grid, vals, ptrs, init_pos, nsc in steps:
        if p is _MEMSET:  # grid: the byte count; ptrs: ((0, temp),)
            _memset0(bufs[ptrs[0][1]].ptr, grid)
            continue
        vals = vals.copy()
        for slot, name in ptrs:
            vals[slot] = (inp if name == "in" else outp if name == "out" else
                          dptr(aux) if name == "aux" else bufs[name].ptr)
        if init_pos and initial is not None:
            parts = ([float(initial.real), float(initial.imag)] if nsc == 2 else
                     [initial.item()])
            for pos in init_pos:
                vals[pos:pos + nsc] = parts
        p.launch(vals, grid, BLOCK)
    # temporaries go back to the pool in stream order when ``bufs`` is dropped


_IDENT, _INIT, _MEMSET = object(), object(), object()


def _plan_reduce(unit, src, out, axes, seq, has_init, kernel=None):
    """The steps of a reduction (see ``_plans``); ``kernel(kind)``: the Prepared kernel of
    each kind (default: the unit's own; a fused reduction gives its first passes)."""
    get = kernel or (lambda kind: prepared(unit, kind))
    ordered = unit.family == "arg" or seq
    nd = len(src._shape)
    compact = None
    kept = [d for d in range(nd) if d not in axes]
    kshape = tuple(src._shape[d] for d in kept)
    kin = tuple(src._strides[d] for d in kept)
    kout = tuple(out._strides)
    kshape, kin, kout = _collapse_kept(kshape, kin, kout)
    rshape, rin = _collapse_red(tuple(src._shape[d] for d in axes),
                                tuple(src._strides[d] for d in axes), ordered)
    if len(kshape) > MAXD or len(rshape) > MAXD:
        compact = axes
        shape = tuple(src._shape[d] for d in kept) + tuple(src._shape[d] for d in axes)
        st = c_strides(shape, src.dtype.itemsize)
        nk = len(kept)
        kshape, kin, kout = _collapse_kept(shape[:nk], st[:nk], tuple(out._strides))
        rshape, rin = _collapse_red(shape[nk:], st[nk:], ordered)
    M = 1
    for n in kshape:
        M *= n
    R = 1
    for n in rshape:
        R *= n
    kd, rd = len(kshape), max(len(rshape), 1)
    if not rshape:
        rshape, rin = (1,), (0,)
    isz = src.dtype.itemsize
    ssize = _state_size(unit)
    rmin = min(abs(s) for s in rin) if R > 1 else 0
    kmin = min((abs(s) for s, n in zip(kin, kshape) if n > 1), default=1 << 62)
    use_rows = not seq and (M == 1 or (R > 1 and rmin < kmin)) and not (
        # rows too short to give a warp work (nbody's (n, n, 3).sum(axis=2)): a thread a
        # row, ``cols`` over the same dims (docs/internals.md, "Reductions")
        M > 1 and R <= tuning.REDUCTION.thread_rows)
    contig = rd == 1 and rin[0] == isz
    steps, temps = [], []
    fin = 1 | (4 if has_init else 0)

    def dims(ks, ki, ko, rs, ri):
        return _dims(ks, ki, ko, rs, ri)

    if use_rows:
        # a warp a row: many rows (a block each would be fewer than four waves of warps'
        # worth of work per SM otherwise), or rows too short to occupy a block's threads
        # (256 threads and a shared-memory tree for a few elements: docs/internals.md)
        small = R <= 2048 and (M >= 4 * sm_count() * tuning.REDUCTION.wave or R <= BLOCK // 2)
        if small:
            per = BLOCK // 32
            grid = (-(-M // per), 1)
            steps.append((get("rows32"), grid,
                          [None, None, _IDENT, _INIT, *dims(kshape, kin, kout, rshape, rin), M, R,
                           kd, rd, R, 1, fin | (2 if contig else 0)], [(0, "in"), (1, "out")]))
            return steps, temps, compact
        S = _split(M, R, BLOCK * 16)
        chunk = -(-R // S)
        chunk = -(-chunk // BLOCK) * BLOCK
        S = -(-R // chunk)
        if S == 1:
            steps.append((get("rows"), (M, 1),
                          [None, None, _IDENT, _INIT, *dims(kshape, kin, kout, rshape, rin), M, R,
                           kd, rd, R, 1, fin | (2 if contig else 0)], [(0, "in"), (1, "out")]))
            return steps, temps, compact
        temps.append(M * S * ssize)
        steps.append((get("rows"), (M * S, 1),
                      [None, None, _IDENT, _INIT, *dims(kshape, kin, kout, rshape, rin), M, R,
                       kd, rd, chunk, S, 2 if contig else 0], [(0, "in"), (1, 0)]))
        pkin = c_strides(kshape, S * ssize)
        steps.append((get("rows_part"), (M, 1),
                      [None, None, _IDENT, _INIT, *dims(kshape, pkin, kout, (S,), (ssize,)), M, S,
                       kd, 1, S, 1, fin | 2], [(0, 0), (1, "out")]))
        return steps, temps, compact
    # cols
    gx = -(-M // BLOCK)
    S = 1 if seq else _split(gx, R, 64, 65535)
    chunk = -(-R // S)
    S = -(-R // chunk)
    flags = fin | (8 if seq else 0)
    if S == 1:
        steps.append((get("cols"), (gx, 1),
                      [None, None, _IDENT, _INIT, *dims(kshape, kin, kout, rshape, rin), M, R,
                       kd, rd, R, 1, flags], [(0, "in"), (1, "out")]))
        return steps, temps, compact
    temps.append(M * S * ssize)
    steps.append((get("cols"), (gx, S),
                  [None, None, _IDENT, _INIT, *dims(kshape, kin, kout, rshape, rin), M, R,
                   kd, rd, chunk, S, 0], [(0, "in"), (1, 0)]))
    pkin = c_strides(kshape, ssize)
    steps.append((get("cols_part"), (gx, 1),
                  [None, None, _IDENT, _INIT, *dims(kshape, pkin, kout, (S,), (M * ssize,)), M, S,
                   kd, 1, S, 1, fin], [(0, 0), (1, "out")]))
    return steps, temps, compact


def sqdev_sum(src, mean, out, axes) -> None:
    """``out[...] = sum over axes of |src - mean|^2`` (var/std; see ``Backend.sqdev_sum``):
    ``src`` float or complex; ``out`` C-contiguous of src's shape without ``axes``, dtype
    src's real type; ``mean`` C-contiguous of out's shape, src's dtype."""
    key = ("sqdev", src.dtype, out.dtype, src._shape, src._strides, out._strides, axes)
    plan = _plans.get(key)
    if plan is None:
        rc = _cchar(out.dtype.char)
        unit = Unit("sqdev", "add", _cchar(src.dtype.char), rc, rc)
        steps, temps, compact = _plan_reduce(unit, src, out, tuple(axes), False, False)
        steps = [(p, grid, values + [None], ptrs + [(len(values), "aux")])
                 for p, grid, values, ptrs in steps]
        plan = _plans[key] = _finish((steps, temps, compact),
                                     _ident_values(unit, np.dtype(rc).type(-0.0), None)[0])
    _execute(plan, src, out, None, mean)


def arg_reduce(kind, src, out, axes) -> None:
    """``out[...] = index of the first max (min) over axes`` (C-order flat index)."""
    key = (kind, src.dtype, out.dtype, src._shape, src._strides, out._strides, axes)
    plan = _plans.get(key)
    if plan is None:
        c = _cchar(src.dtype.char)
        unit = Unit("arg", kind, c, c, _cchar(out.dtype.char))
        plan = _plans[key] = _finish(_plan_reduce(unit, src, out, tuple(axes), False, False),
                                     _ident_values(unit, None, None)[0])
    _execute(plan, src, out, None)


def scan(op, src, out, axis) -> None:
    """``out = inclusive scan of src along axis`` (see ``Backend.scan``)."""
    key = ("scan", op, src.dtype, out.dtype, src._shape, src._strides, out._strides, axis)
    plan = _plans.get(key)
    if plan is None:
        unit = Unit("scan", op.functor, _cchar(src.dtype.char), _cchar(op.loop),
                    _cchar(out.dtype.char))
        plan = _plans[key] = _finish(_plan_scan(unit, src, out, axis, op.neutral is None),
                                     _ident_values(unit, op.neutral, None)[0])
    _execute(plan, src, out, None)


def _plan_scan(unit, src, out, axis, seq):
    nd = len(src._shape)
    kept = [d for d in range(nd) if d != axis]
    kshape, kin, kout = _collapse_kept(tuple(src._shape[d] for d in kept),
                                       tuple(src._strides[d] for d in kept),
                                       tuple(out._strides[d] for d in kept))
    compact = None
    R = src._shape[axis]
    rin, ostride = src._strides[axis], out._strides[axis]
    if len(kshape) > MAXD:  # (rare) too many dims: scan a compact copy
        compact = (axis,)
        shape = tuple(src._shape[d] for d in kept) + (R,)
        st = c_strides(shape, src.dtype.itemsize)
        kshape, kin, kout = _collapse_kept(shape[:-1], st[:-1],
                                           tuple(out._strides[d] for d in kept))
        rin = st[-1]
    M = 1
    for n in kshape:
        M *= n
    kd = len(kshape)
    ssize = _state_size(unit)
    kmin = min((abs(s) for s, n in zip(kin, kshape) if n > 1), default=1 << 62)
    steps, temps = [], []
    d0 = _dims(kshape, kin, kout, (R,), (rin,))
    if not seq and abs(rin) > kmin and M >= tuning.SCAN.col_min_lines:
        steps, temps = _plan_scan_blocks(unit, M, R, kd, d0, ostride, ssize)
        return steps, temps, compact
    if seq or (abs(rin) > kmin and M >= sm_count() * BLOCK):
        steps.append((prepared(unit, "scan_cols"), (-(-M // BLOCK), 1),
                      [None, None, _IDENT, *d0, M, R, kd, 1, ostride, 1],
                      [(0, "in"), (1, "out")]))
        return steps, temps, compact
    T = -(-R // (BLOCK * chain_items(unit)))
    ntiles = M * T
    if ssize <= 8:  # packed status words (lb_status): 16 or 32 bytes a tile
        zero = total = 16 + (16 if ssize <= 4 else 32) * ntiles
    else:
        zero = 16 + -(-4 * ntiles // 16) * 16
        total = zero + 2 * ntiles * ssize
    temps.append(total)
    steps.append((_MEMSET, zero, [], [(0, 0)]))
    flags = ((2 if rin == src.dtype.itemsize else 0) |
             (16 if ostride == out.dtype.itemsize else 0))
    steps.append((prepared(unit, "scan_chain"), (ntiles, 1),
                  [None, None, None, _IDENT, *d0, M, R, kd, ostride, T, flags],
                  [(0, "in"), (1, "out"), (2, 0)]))
    return steps, temps, compact


def _plan_scan_blocks(unit, M, R, kd, d0, ostride, ssize):
    """Column scan (``scan_blocks``): the lines cut into S chunks; with S > 1, chunk totals
    (S - 1 of them a line, laid out [chunk][line]), their scan along the chunks in place
    (``scan_cols_part``: fixed order), then each chunk scanned from its prefix."""
    bx = -(-M // BLOCK)
    t = tuning.SCAN
    S = max(1, min(-(-t.col_waves * tuning.REDUCTION.wave * sm_count() // bx),
                   R // max(t.col_min_rows, 1)))
    chunk = -(-R // S)
    S = -(-R // chunk)
    scan = prepared(unit, "scan_blocks")
    if S == 1:
        return [(scan, (bx, 1), [None, None, None, _IDENT, *d0, M, R, kd, ostride, chunk, 1],
                 [(0, "in"), (1, "out"), (2, "in")])], []
    totals = _dims((M,), (ssize,), (ssize,), (S - 1,), (M * ssize,))
    return [(scan, (bx, S - 1), [None, None, None, _IDENT, *d0, M, R, kd, ostride, chunk, 0],
             [(0, "in"), (1, "out"), (2, 0)]),
            (prepared(unit, "scan_cols_part"), (bx, 1),
             [None, None, _IDENT, *totals, M, S - 1, 1, 1, M * ssize, 0], [(0, 0), (1, 0)]),
            (scan, (bx, S), [None, None, None, _IDENT, *d0, M, R, kd, ostride, chunk, 1],
             [(0, "in"), (1, "out"), (2, 0)])], [(S - 1) * M * ssize]


# --- the default set ------------------------------------------------------------------------


def default_units() -> list:
    """What ``python -m cupynum precompile`` builds: sum/prod/min/max/any/all for every
    input dtype (with NumPy's default loop), argmin/argmax, cumsum/cumprod, and the
    squared-deviation sums of var/std."""
    units = []
    chars = list(dict.fromkeys(_cchar(c) for c in _ops.SUPPORTED_CHARS))
    for name in ("add", "multiply", "minimum", "maximum", "logical_and", "logical_or"):
        uf = getattr(np, name)
        for c in chars:
            try:
                loop = uf.resolve_dtypes((None, np.dtype(c), None), reduction=True)[0]
            except Exception:
                continue
            lc = _cchar(loop.char)
            units.append(Unit("reduce", name, c, lc, lc))
            if name in ("add", "multiply"):
                units.append(Unit("scan", name, c, lc, lc))
    for c in chars:
        for k in ("argmax", "argmin"):
            units.append(Unit("arg", k, c, c, "l"))
    for c, r in (("f", "f"), ("d", "d"), ("F", "f"), ("D", "d")):  # var / std
        units.append(Unit("sqdev", "add", c, r, r))
    return list(dict.fromkeys(units))


def precompile(arch=None, jobs=None) -> dict:
    units = default_units()
    t0 = time.perf_counter()

    def one(u):
        try:
            compiler.compile_cubin(program_source([u]), options=compile_options(), arch=arch,
                                   name=PROGRAM_NAME)
            return None
        except compiler.CompileError as e:
            return u, e

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as ex:
        failed = [r for r in ex.map(one, units) if r is not None]
    if failed:
        u, e = failed[0]
        raise compiler.CompileError(f"{len(failed)} reduction programs failed, first {u}: "
                                    f"{e.log or e}", e.log, e.source)
    return {"programs": len(units), "seconds": time.perf_counter() - t0}
