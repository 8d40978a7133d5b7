"""Kernel text for the elementwise engine (``elementwise.py`` runs what this writes).

A kernel computes output values from operands, element by element.  What it computes is an
expression tree (``Node(op, children)`` over ``Input(i)``): a ufunc is a one-node tree, a
cast or copy is the bare ``Input(0)``, and lazy fusion can later grow deeper trees without
touching anything here.  How it walks the elements is its layout:

* ``contig``: all array operands C-contiguous (or 0-stride "broadcast pointers" read once),
  a flat grid-stride loop.  When every array operand is 16-byte-vector aligned (checked
  *in the kernel*, so the Python hot path never looks at pointers), each thread moves
  ``16 / max itemsize`` elements per operand with one vector load/store; one scalar loop
  does the tail (and everything, when some operand is misaligned).
* ``strided``: any strides (zero and negative too) over at most ``maxd`` dimensions left
  after ``collapse``; shapes and byte strides travel by value in a struct parameter,
  innermost dimension first, and the dimension loop is unrolled so that they stay in
  registers (a runtime-bounded loop would copy the struct to local memory).  32-bit index
  math when the element count and every operand's byte extent fit, 64-bit otherwise.

Types: operand i is loaded in its stored dtype, cast to the loop dtype of the op input it
feeds (``cpn::cast``), widened to the compute type (float for float16 loops, except
``half_native`` rows), passed to ``cpn::<functor>{}``; results are rounded to the loop
dtype, then cast to the output's stored dtype.  Intermediate tree values are kept in their
loop dtype, so a fused float16 chain rounds after every op, as NumPy does.  Grid-stride
loops carry ``#pragma unroll 1``: NVVM would otherwise unroll them 4x, which triples the
compile time of every kernel for no bandwidth gain.
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np

from ... import _ops
from ..base import ElementwiseOp
from . import tuning

BLOCK = 256  # threads per block (the kernels declare __launch_bounds__(BLOCK))
# The kernels' knobs (vector loop unroll, strided ILP) are ``tuning.ELEMENTWISE``.

# --- C++ types ---------------------------------------------------------------------------

_CTYPES = {
    ("b", 1): "bool", ("i", 1): "signed char", ("u", 1): "unsigned char",
    ("i", 2): "short", ("u", 2): "unsigned short", ("i", 4): "int", ("u", 4): "unsigned int",
    ("i", 8): "long long", ("u", 8): "unsigned long long", ("f", 2): "cpn::half",
    ("f", 4): "float", ("f", 8): "double", ("c", 8): "cpn::complex<float>",
    ("c", 16): "cpn::complex<double>",
}
_DT = {}  # char -> canonical numpy dtype (the 'q'/'l' spellings map to one entry)


def _dtype(c) -> np.dtype:
    dt = _DT.get(c)
    if dt is None:
        dt = _DT[c] = np.dtype(c)
    return dt


def ctype(c) -> str:
    """The C++ storage type of dtype (or dtype char) ``c``."""
    dt = _dtype(c)
    return _CTYPES[dt.kind, dt.itemsize]


def _code(c) -> str:
    """'f4', 'c16', 'b1': a dtype as a C identifier fragment (kernel names)."""
    dt = _dtype(c)
    return f"{dt.kind}{dt.itemsize}"


def canonical_char(c) -> str:
    """One char per dtype ('q' -> 'l'), so cache keys agree."""
    dt = _dtype(c)
    return {"i8": "l", "u8": "L"}.get(_code(dt), dt.char)


def _is_complex(c) -> bool:
    return _dtype(c).kind == "c"


_half_native_cache: dict = {}


def _half_native(op: ElementwiseOp) -> bool:
    """True for table ops whose float16 loop takes cpn::half itself (spacing, nextafter)."""
    v = _half_native_cache.get(op.ufunc)
    if v is None:
        row = next((r for r in _ops.UFUNCS if r.name == op.ufunc), None)
        v = _half_native_cache[op.ufunc] = bool(getattr(row, "half_native", False))
    return v


def compute_ctype(op: ElementwiseOp, c) -> str:
    t = ctype(c)
    return "float" if t == "cpn::half" and not _half_native(op) else t


def _conv(expr: str, frm: str, to: str) -> str:
    return expr if frm == to else f"cpn::cast<{to}>({expr})"


# --- expression trees and kernel specs ---------------------------------------------------


class Input(NamedTuple):
    """Operand ``index`` (an input) as a tree leaf."""
    index: int


class Node(NamedTuple):
    """Output ``k`` of ``op`` applied to ``children`` (one tree per op input)."""
    op: ElementwiseOp
    children: tuple
    k: int = 0


class KernelSpec(NamedTuple):
    """Everything that determines one kernel's text (hashable: the kernel cache key).

    ``exprs``     one tree per output.
    ``operands``  ``(kind, dtype char)`` per operand, inputs then outputs; kind ``'a'``
                  array (char = stored dtype), ``'s'`` scalar by value (char = its dtype),
                  ``'b'`` broadcast pointer (a 0-stride array: contig layout only).
    ``layout``    ``'contig'`` or ``'strided'`` (then ``maxd`` dims and ``idx64``).
    """
    exprs: tuple
    operands: tuple
    nin: int
    layout: str = "contig"
    maxd: int = 0
    idx64: bool = False


def op_exprs(op: ElementwiseOp) -> tuple:
    """The one-node trees of a single ufunc launch: one per output."""
    kids = tuple(Input(i) for i in range(op.nin))
    return tuple(Node(op, kids, k) for k in range(len(op.loop) - op.nin))


def _ops_in(exprs) -> list:
    seen, todo = [], list(exprs)
    while todo:
        e = todo.pop()
        if isinstance(e, Node):
            if e.op not in seen:
                seen.append(e.op)
            todo.extend(e.children)
    return seen


# Functors that are not in kernels/: structs translated from users' Python functions
# (``cupynum.vectorize``, ``cupynum.fuse``), by name.  A name is a hash of its struct's text,
# so a name is one text and the programs (and their cache keys) that use it are too.
_USER_FUNCTORS: dict = {}  # functor name -> (struct source, whether it needs complex.cuh)


def add_functor(name: str, source: str, cplx: bool) -> None:
    """Make ``cpn::<name>`` (defined by ``source``) usable as an op's functor in any
    program this module or the fused reductions write."""
    _USER_FUNCTORS[name] = (source, cplx)


def user_functors(exprs) -> tuple[str, bool]:
    """The struct text of the user functors that ``exprs`` use (to place after the
    includes) and whether any of them needs the complex header."""
    found = [_USER_FUNCTORS[op.functor] for op in _ops_in(exprs) if op.functor in _USER_FUNCTORS]
    return "".join(dict.fromkeys(src for src, _ in found)), any(c for _, c in found)


def needs_complex(spec: KernelSpec) -> bool:
    return any(_is_complex(c) for _, c in spec.operands) or any(
        _is_complex(c) for op in _ops_in(spec.exprs) for c in op.loop) or \
        user_functors(spec.exprs)[1]


def kernel_name(spec: KernelSpec) -> str:
    """A readable, deterministic C identifier for a spec (a hash for deep trees)."""
    e0 = spec.exprs[0]
    if isinstance(e0, Input) and len(spec.exprs) == 1:
        what = "copy"
    elif (isinstance(e0, Node) and spec.exprs == op_exprs(e0.op)
          and spec.nin == e0.op.nin):
        what = e0.op.functor + "_" + "".join(_code(c) for c in e0.op.loop)
    else:
        what = "fused_" + hashlib.sha1(repr(spec.exprs).encode()).hexdigest()[:16]
    ops = "".join(k + _code(c) for k, c in spec.operands)
    lay = "c" if spec.layout == "contig" else f"s{spec.maxd}_{64 if spec.idx64 else 32}"
    return f"cpn_{what}__{ops}__{lay}"


# --- code generation ---------------------------------------------------------------------


def _body(spec: KernelSpec, load) -> tuple[list, list]:
    """(statements, output value expressions) for one element.  ``load(i)`` is the C++
    expression reading operand i; each used input is read once into ``x<i>``."""
    lines, memo, count = [], {}, [0]
    used = sorted({e.index for e in _leaves(spec.exprs)})
    for i in used:
        lines.append(f"const {ctype(spec.operands[i][1])} x{i} = {load(i)};")

    def value(e):
        if isinstance(e, Input):
            return f"x{e.index}", ctype(spec.operands[e.index][1])
        key = (e.op, e.children)
        temps = memo.get(key)
        if temps is None:
            op, args = e.op, []
            for j, child in enumerate(e.children):
                ex, t = value(child)
                lt = ctype(op.loop[j])
                args.append(_conv(_conv(ex, t, lt), lt, compute_ctype(op, op.loop[j])))
            n = count[0]
            count[0] += 1
            outs = op.loop[op.nin:]
            call = f"cpn::{op.functor}{{}}"
            if len(outs) == 1:
                lt, ct = ctype(outs[0]), compute_ctype(op, outs[0])
                rhs = _conv(f"{call}({', '.join(args)})", ct, lt)
                lines.append(f"const {lt} t{n} = {rhs};")
                temps = [(f"t{n}", lt)]
            else:  # nout == 2: the functor writes through references
                rs = [f"r{n}_{k}" for k in range(len(outs))]
                for r, c in zip(rs, outs):
                    lines.append(f"{compute_ctype(op, c)} {r};")
                lines.append(f"{call}({', '.join(args + rs)});")
                temps = []
                for k, (r, c) in enumerate(zip(rs, outs)):
                    lt = ctype(c)
                    lines.append(f"const {lt} t{n}_{k} = {_conv(r, compute_ctype(op, c), lt)};")
                    temps.append((f"t{n}_{k}", lt))
            memo[key] = temps
        return temps[e.k]

    results = []
    for j, e in enumerate(spec.exprs):
        ex, t = value(e)
        results.append(_conv(ex, t, ctype(spec.operands[spec.nin + j][1])))
    return lines, results


def _leaves(exprs):
    todo = list(exprs)
    while todo:
        e = todo.pop()
        if isinstance(e, Input):
            yield e
        else:
            todo.extend(e.children)


def _indent(lines, n):
    return "".join(" " * n + ln + "\n" for ln in lines)


def vector_width(spec: KernelSpec) -> int:
    """Elements per thread per vector step: the widest array operand moves 16 bytes."""
    sizes = [_dtype(c).itemsize for k, c in spec.operands if k == "a"]
    return max(1, 16 // max(sizes)) if sizes else 1


def kernel_params(spec: KernelSpec) -> list:
    """``[(C++ type, name), ...]``: the kernel's parameters, in order (the launchers' param
    blocks mirror this list: see ``elementwise._param_layout``)."""
    nin, out = spec.nin, []
    strided = spec.layout != "contig"
    for i, (kind, c) in enumerate(spec.operands):
        if kind == "s":
            out.append((f"const {ctype(c)}", f"p{i}"))
        else:
            out.append((f"{'const ' if i < nin else ''}{'char' if strided else ctype(c)}*",
                        f"p{i}"))
    if not strided:
        return out + [("const long long", "n")]
    u, s = ("unsigned long long", "long long") if spec.idx64 else ("unsigned int", "int")
    na = sum(k != "s" for k, _ in spec.operands)
    return out + [(f"const cpn_ew::dims<{na}, {spec.maxd}, {u}, {s}>", "g"), (f"const {u}", "n"),
                  ("const int", "ndim")]


def _contig_kernel(spec: KernelSpec, name: str) -> str:
    ops, nin, v = spec.operands, spec.nin, vector_width(spec)
    params = [f"{t} {n}" for t, n in kernel_params(spec)]
    head = [f"const {ctype(c)} b{i} = cpn_ew::ld(p{i});"
            for i, (k, c) in enumerate(ops) if k == "b"]

    def scalar_loop_body(idx):
        def load(i):
            k = ops[i][0]
            return f"cpn_ew::ld(p{i} + {idx})" if k == "a" else (f"b{i}" if k == "b" else f"p{i}")
        lines, res = _body(spec, load)
        return lines + [f"cpn_ew::st(p{nin + j} + {idx}, {r});" for j, r in enumerate(res)]

    src = [f'extern "C" __global__ void __launch_bounds__({BLOCK})',
           f"{name}({', '.join(params)}) {{",
           "  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
           "  const long long step = (long long)gridDim.x * blockDim.x;"]
    if head:  # 0-stride inputs: one load per thread, before the loop
        src.append(_indent(head, 2).rstrip("\n"))
    # The vector path: also for complex with v == 1, to get one 16-byte access when aligned
    # (the scalar loop moves complex values as two components: see cpn_ew::ld).
    if v > 1 or any(k == "a" and _is_complex(c) for k, c in ops):
        arrays = [i for i, (k, _) in enumerate(ops) if k == "a"]
        mis = " | ".join(f"((unsigned long long)p{i} & {v * _dtype(ops[i][1]).itemsize - 1}u)"
                         for i in arrays)

        def vload(i):
            k = ops[i][0]
            return f"a{i}.v[k]" if k == "a" else (f"b{i}" if k == "b" else f"p{i}")
        lines, res = _body(spec, vload)
        vec = [f"const cpn_ew::vec<{ctype(ops[i][1])}, {v}> a{i} = "
               f"reinterpret_cast<const cpn_ew::vec<{ctype(ops[i][1])}, {v}>*>(p{i})[j];"
               for i in arrays if i < nin]
        vec += [f"cpn_ew::vec<{ctype(ops[i][1])}, {v}> a{i};" for i in arrays if i >= nin]
        body = lines + [f"a{nin + j}.v[k] = {r};" for j, r in enumerate(res)]
        stores = [f"reinterpret_cast<cpn_ew::vec<{ctype(ops[i][1])}, {v}>*>(p{i})[j] = a{i};"
                  for i in arrays if i >= nin]
        src += ["  long long start = 0;  // where the scalar loop begins",
                f"  if (({mis}) == 0) {{  // every array operand aligned for its vector",
                f"    const long long nv = n / {v};",
                f"#pragma unroll {tuning.ELEMENTWISE.vector_unroll}",
                "    for (long long j = tid; j < nv; j += step) {",
                _indent(vec, 6).rstrip("\n"),
                "#pragma unroll",
                f"      for (int k = 0; k < {v}; ++k) {{",
                _indent(body, 8).rstrip("\n"),
                "      }",
                _indent(stores, 6).rstrip("\n"),
                "    }",
                f"    start = nv * {v};  // the scalar loop does the n % {v} tail",
                "  }"]
    else:
        src.append("  const long long start = 0;")
    # One scalar loop serves both the tail and misaligned operands (one copy of the body
    # fewer: NVRTC time grows with code size, ~20 ms per kernel here).
    src += ["#pragma unroll 1",
            "  for (long long i = start + tid; i < n; i += step) {",
            _indent(scalar_loop_body("i"), 4).rstrip("\n"),
            "  }",
            "}"]
    return "\n".join(src) + "\n"


def _strided_kernel(spec: KernelSpec, name: str) -> str:
    """One dimension left after ``collapse`` (a strided slice, a reversed array, a column):
    one multiply per operand for an offset, and ``strided_ilp`` elements per thread per step
    (``BLOCK`` apart, so a warp's accesses stay together), all loaded before any is
    computed: a strided load uses only part of each sector it fetches, so latency, not
    bandwidth, limits a loop that keeps one load in flight per thread.  More dimensions:
    one element per thread per step, a div/mod per dimension.  The body is written once
    (a lambda both paths call) to keep the source, and NVRTC's parse, small."""
    ops, nin, maxd, k_ = spec.operands, spec.nin, spec.maxd, tuning.ELEMENTWISE.strided_ilp
    u, s = ("unsigned long long", "long long") if spec.idx64 else ("unsigned int", "int")
    arrays = [i for i, (k, _) in enumerate(ops) if k != "s"]
    slot = {i: a for a, i in enumerate(arrays)}  # operand -> row in g.strides
    params = [f"{t} {n}" for t, n in kernel_params(spec)]
    used = sorted({e.index for e in _leaves(spec.exprs)} & set(arrays))
    na = len(arrays)
    lines, res = _body(spec, lambda i: f"p{i}" if ops[i][0] == "s" else f"v{i}[k]")
    stores = [f"cpn_ew::st(reinterpret_cast<{ctype(ops[nin + j][1])}*>"
              f"(p{nin + j} + o[k][{slot[nin + j]}]), {r});" for j, r in enumerate(res)]
    loads = [f"v{i}[k] = cpn_ew::ld(reinterpret_cast<const {ctype(ops[i][1])}*>"
             f"(p{i} + o[k][{slot[i]}]));" for i in used]
    acc = [f"o[0][{a}] += ({s})c * g.strides[{a}][d];" for a in range(na)]
    src = [f'extern "C" __global__ void __launch_bounds__({BLOCK})',
           f"{name}({', '.join(params)}) {{",
           f"  {s} o[{k_}][{na}];  // byte offsets of the thread's elements, per array operand",
           *[f"  {ctype(ops[i][1])} v{i}[{k_}];" for i in used],
           "  const auto compute = [&](const int k) {",
           _indent(lines + stores, 4).rstrip("\n"),
           "  };",
           "  if (ndim == 1) {",
           *[f"    const {s} st{a} = g.strides[{a}][0];" for a in range(na)],
           f"    const {u} step = ({u})gridDim.x * {BLOCK * k_}u;",
           "#pragma unroll 1",
           f"    for ({u} j = ({u})blockIdx.x * {BLOCK * k_}u + threadIdx.x; j < n; "
           "j += step) {",
           "#pragma unroll",
           f"      for (int k = 0; k < {k_}; ++k) {{  // every load first",
           f"        const {u} jk = j + k * {BLOCK}u;",
           "        if (jk >= n) break;",
           *[f"        o[k][{a}] = ({s})jk * st{a};" for a in range(na)],
           _indent(loads, 8).rstrip("\n"),
           "      }",
           "#pragma unroll",
           f"      for (int k = 0; k < {k_}; ++k) {{",
           f"        if (j + k * {BLOCK}u >= n) break;",
           "        compute(k);",
           "      }",
           "    }",
           "    return;",
           "  }",
           f"  const {u} step = ({u})gridDim.x * {BLOCK}u;",
           "#pragma unroll 1",
           f"  for ({u} i = ({u})blockIdx.x * {BLOCK}u + threadIdx.x; i < n; i += step) {{",
           *[f"    o[0][{a}] = 0;" for a in range(na)],
           f"    {u} rem = i;",
           "#pragma unroll",
           f"    for (int d = 0; d < {maxd}; ++d) {{  // innermost first; the last takes the rest",
           f"      {u} c = rem;",
           f"      if (d + 1 < ndim) {{ const {u} q = rem / g.shape[d]; "
           "c = rem - q * g.shape[d]; rem = q; }",
           _indent(acc, 6).rstrip("\n"),
           "      if (d + 1 >= ndim) break;",
           "    }",
           "    const int k = 0;",
           _indent(loads, 4).rstrip("\n"),
           "    compute(0);",
           "  }",
           "}"]
    return "\n".join(x for x in src if x) + "\n"


_PRELUDE = """\
namespace cpn_ew {
// One vector of V elements: a single 16-byte (or narrower) load/store per operand.
template <class T, int V> struct alignas(sizeof(T) * V) vec { T v[V]; };
// Strided layout: shapes and byte strides, innermost dimension first (passed by value).
template <int NA, int MAXD, class U, class S> struct dims { U shape[MAXD]; S strides[NA][MAXD]; };
// Element loads and stores.  cpn::complex<T> is aligned to 2 * sizeof(T), but NumPy only
// aligns complex arrays to sizeof(T) (a complex128 view may sit at an 8-byte offset), so a
// complex value outside the vector path moves as its two components: never a misaligned
// access, which would be a sticky error that ends the CUDA context.
template <class T> __device__ __forceinline__ T ld(const T* p) { return *p; }
template <class T> __device__ __forceinline__ void st(T* p, const T& v) { *p = v; }
template <class T> __device__ __forceinline__ cpn::complex<T> ld(const cpn::complex<T>* p) {
  const T* q = reinterpret_cast<const T*>(p);
  return cpn::complex<T>(q[0], q[1]);
}
template <class T>
__device__ __forceinline__ void st(cpn::complex<T>* p, const cpn::complex<T>& v) {
  T* q = reinterpret_cast<T*>(p);
  q[0] = v.re;
  q[1] = v.im;
}
}  // namespace cpn_ew
"""


def kernel_source(spec: KernelSpec) -> str:
    """The ``extern "C"`` kernel for ``spec`` (no includes: see ``program_source``)."""
    name = kernel_name(spec)
    if spec.layout == "contig":
        return _contig_kernel(spec, name)
    return _strided_kernel(spec, name)


def program_source(specs) -> str:
    """One NVRTC program holding the kernels of ``specs`` (duplicates dropped), with only
    the headers they need (the complex header only when a complex type is involved)."""
    specs = list(dict.fromkeys(specs))
    cplx = any(needs_complex(s) for s in specs)
    types = sorted({_code(c) for s in specs for _, c in s.operands} |
                   {_code(c) for s in specs for op in _ops_in(s.exprs) for c in op.loop})
    # complex.cuh brings real.cuh with it and defines the complex overloads it declares.
    head = ['#include "cpn/complex.cuh"' if cplx else '#include "cpn/real.cuh"']
    # The launchers pack by-value scalars in NumPy's layout: check that the C++ types agree.
    checks = [f'static_assert(sizeof({ctype(t)}) == {_dtype(t).itemsize}, "{t} size");'
              for t in types]
    users = "".join(dict.fromkeys(user_functors(s.exprs)[0] for s in specs))
    body = "\n".join(kernel_source(s) for s in specs)
    return "\n".join(head) + "\n" + users + _PRELUDE + "\n".join(checks) + "\n\n" + body
