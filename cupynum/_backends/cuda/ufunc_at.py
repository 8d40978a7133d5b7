"""``ufunc.at``: unbuffered in-place application at (possibly repeated) positions.

Each thread applies the ufunc to one (position, value) pair with a compare-and-swap loop
on the word holding the target, so repeated positions accumulate exactly as NumPy's
sequential loop does (up to the order of the updates, which only matters where the op
is not associative in floating point).  1- and 2-byte elements CAS their containing
aligned 32-bit word.  16-byte elements (complex128) have no CAS here: the frontend
computes those on the host.
"""
from __future__ import annotations

import threading

import numpy as np

from . import compiler, launch, runtime
from .elementwise_source import ctype
from .view import dptr

_SOURCE = r"""
#include "{header}"

template <class W> __device__ W cas_word(W* p, W compare, W value);
template <> __device__ unsigned int cas_word(unsigned int* p, unsigned int c, unsigned int v) {{
  return atomicCAS(p, c, v);
}}
template <> __device__ unsigned long long cas_word(unsigned long long* p, unsigned long long c,
                                                    unsigned long long v) {{
  return atomicCAS(p, c, v);
}}

// Apply the op to the element at p: read, compute, and swap in the result if nothing
// changed the word meanwhile; otherwise retry with the newer value.
__device__ void apply(char* p{value_param}) {{
  typedef {word} W;
  const unsigned long long addr = (unsigned long long)p;
  W* w = (W*)(addr & ~(unsigned long long)(sizeof(W) - 1));
  const unsigned shift = (unsigned)(addr - (unsigned long long)w) * 8;
  W old = *w, assumed;
  do {{
    assumed = old;
    {store} cur;
    {{ W bits = assumed >> shift; memcpy(&cur, &bits, sizeof(cur)); }}
    const {store} next = cpn::cast<{store}>({call});
    W nbits = 0;
    memcpy(&nbits, &next, sizeof(next));
    W merged = {merge};
    old = cas_word<W>(w, assumed, merged);
  }} while (old != assumed);
}}

extern "C" __global__ void ufunc_at(char* a, const long long* pos{array_param},
                                    const long long m) {{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m;
       i += (long long)blockDim.x * gridDim.x) {{
    apply(a + pos[i] * {itemsize}{value_arg});
  }}
}}
"""

_lock = threading.Lock()


def _source(functor, nin, store, size, loop_in, loop_v, compute, scalar):
    word = "unsigned long long" if size == 8 else "unsigned int"
    bits = size * 8
    merge = "nbits << shift" if size >= 4 else (
        f"(assumed & ~(((W)0xFFFFFFFFu >> (32 - {bits})) << shift)) | "
        f"((nbits & ((W)0xFFFFFFFFu >> (32 - {bits}))) << shift)")
    cur = f"cpn::cast<{compute[0]}>(cpn::cast<{loop_in}>(cur))"
    if nin == 1:
        call = f"cpn::{functor}{{}}({cur})"
        value_param = array_param = value_arg = ""
    else:
        call = f"cpn::{functor}{{}}({cur}, cpn::cast<{compute[1]}>(value))"
        value_param = f", const {loop_v} value"
        array_param = f", const {loop_v} value" if scalar else f", const {loop_v}* values"
        value_arg = ", value" if scalar else ", values[i]"
    header = "cpn/complex.cuh" if "complex" in " ".join((store, loop_in, loop_v)) \
        else "cpn/real.cuh"
    return _SOURCE.format(header=header, value_param=value_param, word=word, store=store,
                          itemsize=size,
                          call=call, merge=merge, array_param=array_param,
                          value_arg=value_arg)


def supported(dtype) -> bool:
    return np.dtype(dtype).itemsize in (1, 2, 4, 8)


def ufunc_at(op, compute, a, offsets, values) -> None:
    """``a.flat[offsets] = op(a.flat[offsets], values)`` unbuffered, for C-contiguous ``a``.
    ``offsets``: a contiguous int64 device array of flat element indices; ``values``: a
    contiguous device array of the loop dtype ``op.loop[1]`` (same length), a NumPy scalar,
    or None for a unary op; ``compute``: the functor's argument C++ types."""
    scalar = values is not None and not hasattr(values, "_buf")
    store = ctype(a.dtype)
    loop_in = ctype(op.loop[0])
    loop_v = ctype(op.loop[1]) if op.nin == 2 else ""
    key = (op.functor, op.nin, store, loop_in, loop_v, compute, scalar)
    p = _prepared.get(key)
    if p is None:
        src = _source(op.functor, op.nin, store, a.dtype.itemsize, loop_in, loop_v, compute,
                      scalar)
        compiled = compiler.compile_cubin(src, name="cupynum_ufunc_at.cu")
        func = runtime.load_module(compiled.cubin).get_function("ufunc_at")
        slots = [np.uintp, np.uintp]
        if op.nin == 2:
            slots.append(np.dtype(op.loop[1]) if scalar else np.uintp)
        slots.append(np.int64)
        with _lock:
            p = _prepared.setdefault(key, launch.Prepared(key, func, slots))
    m = offsets._size
    vals = [dptr(a), dptr(offsets)]
    if op.nin == 2:
        if not scalar:
            vals.append(dptr(values))
        elif values.dtype.kind == "c":
            vals += (values.real, values.imag)
        else:
            vals.append(values)
    vals.append(m)
    p.launch(vals, max(1, min(-(-m // 256), _sm_count() * 16)), 256)


def _sm_count() -> int:
    global _sms
    if not _sms:
        _sms = runtime.multiprocessor_count()
    return _sms


_prepared: dict = {}
_sms = 0
