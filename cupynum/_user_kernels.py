"""Users' own CUDA kernels: ``RawKernel`` and ``ElementwiseKernel`` (as in CuPy).

Both compile with the CUDA backend's NVRTC compiler and its kernel cache.  On the host
backend there is no device to run them on: calling one raises a RuntimeError that says so
(building the source, ``ElementwiseKernel.source``, works anywhere).
"""
from __future__ import annotations

import re

import numpy as np

from . import _backends
from ._api.creation import asarray
from ._array import broadcast_view, empty_array, ndarray
from ._dtypes import normalize

_C_TYPES = {"?": "bool", "b": "signed char", "B": "unsigned char", "h": "short",
            "H": "unsigned short", "i": "int", "I": "unsigned int", "l": "long long",
            "L": "unsigned long long", "e": "__half", "f": "float", "d": "double",
            "F": "cpn::complex64", "D": "cpn::complex128"}
_PY_DEFAULT = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}


def _require_cuda(what):
    if not _backends.for_side("device").cuda_memory:
        raise RuntimeError(f"{what} runs CUDA code and needs the CUDA backend "
                           "(CUPYNUM_BACKEND=cuda on a machine with an NVIDIA GPU)")


def _arg_slot(a):
    """(numpy dtype of the kernel parameter, value) for one launch argument."""
    if isinstance(a, ndarray):
        return np.dtype(np.uintp), a._address()
    if isinstance(a, np.generic):
        return a.dtype, a
    for py, dt in _PY_DEFAULT.items():
        if type(a) is py:
            return np.dtype(dt), a
    raise TypeError(f"unsupported kernel argument of type {type(a).__name__}")


class RawKernel:
    """A kernel from CUDA C++ source: ``k(grid, block, args, shared_mem=0)``."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False):
        self.code, self.name, self.options = code, name, tuple(options)
        self._func = None

    def compile(self):
        from ._backends.cuda import compiler, runtime

        templated = "<" in self.name or "::" in self.name
        compiled = compiler.compile_cubin(self.code, options=self.options,
                                          name_expressions=(self.name,) if templated else ())
        lowered = compiled.lowered_names.get(self.name, self.name) if templated else self.name
        self._func = runtime.load_module(compiled.cubin).get_function(lowered)
        return self._func

    @property
    def kernel(self):
        return self._func or self.compile()

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None):
        _require_cuda("RawKernel")
        from ._backends.cuda import runtime

        func = self.kernel
        for a in args:  # a raw kernel may write any array it is given: its data is made
            if isinstance(a, ndarray):  # valid on the device only, before the addresses
                a._buf.on_device()  # (a host-placed or not yet allocated array included)
                a._buf.will_write("device")
        slots = [_arg_slot(a) for a in args]
        params = runtime.ParamBlock([dt for dt, _ in slots])
        params.set_values([v for _, v in slots])
        if stream is None:
            handle = runtime.current_stream()
        else:  # the pool fences blocks freed while work on this stream may still use them
            handle = int(getattr(stream, "ptr", stream))
            runtime.note_stream(handle)
        runtime.launch(func, grid, block, shared_mem, handle, params.address)


_PARAM = re.compile(r"^\s*(?:(raw)\s+)?([A-Za-z_][\w]*)\s+([A-Za-z_]\w*)\s*$")


def _parse_params(spec):
    params = []
    for item in filter(None, (p.strip() for p in spec.split(","))):
        m = _PARAM.match(item)
        if not m:
            raise ValueError(f"cannot parse kernel parameter {item!r} (expected 'TYPE name')")
        raw, typ, name = m.groups()
        if raw:
            raise NotImplementedError("raw parameters are not supported by ElementwiseKernel yet")
        params.append((typ, name))
    return params


def _is_placeholder(typ):
    """A type name cupynum cannot store (``T``, ``U``...) stands for an argument's dtype.
    (NumPy itself parses some letters, e.g. ``T`` as its string dtype.)"""
    try:
        normalize(typ)
        return False
    except TypeError:
        return True


class ElementwiseKernel:
    """An elementwise kernel from parameter lists and a C++ body, broadcasting like a ufunc.

    ``ElementwiseKernel("float32 x, T y", "T z", "z = x * y", "scale")``: typed parameters
    use NumPy dtype names, single identifiers such as ``T`` are placeholders resolved from
    the arguments' dtypes; the body sees each input by value, each output by reference,
    and ``i`` (the flat index) and ``n`` (the size).
    """

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, options=(), **kwargs):
        self.in_params = _parse_params(in_params)
        self.out_params = _parse_params(out_params)
        self.operation, self.name, self.preamble = operation, name, preamble
        self.options, self.return_tuple = tuple(options), return_tuple
        self._kernels = {}

    def _types(self, args):
        """Resolve every parameter's dtype from the input arguments."""
        bound = {}
        for (typ, name), a in zip(self.in_params, args):
            dt = a.dtype if isinstance(a, (ndarray, np.generic)) else np.dtype(
                _PY_DEFAULT.get(type(a), np.float64))
            if _is_placeholder(typ):
                if typ in bound and bound[typ] != dt and isinstance(a, ndarray):
                    raise TypeError(f"type placeholder {typ} bound to both {bound[typ]} and {dt}")
                bound.setdefault(typ, normalize(dt))
        def resolve(typ):
            if not _is_placeholder(typ):
                return normalize(typ)
            if typ not in bound:
                raise TypeError(f"cannot resolve type placeholder {typ}")
            return bound[typ]
        return ([resolve(t) for t, _ in self.in_params], [resolve(t) for t, _ in self.out_params],
                bound)

    def source(self, in_types, out_types, scalar_inputs, bound):
        """The kernel's CUDA C++ text for these dtypes (scalar inputs passed by value)."""
        chars = {t.char for t in in_types + out_types}
        lines = ['#include "cpn/complex.cuh"' if chars & {"F", "D"} else '#include "cpn/common.cuh"']
        if "e" in chars:
            lines.append("#include <cuda_fp16.h>")
        lines += [f"typedef {_C_TYPES[dt.char]} {name};" for name, dt in bound.items()]
        lines.append(self.preamble)
        params = []
        for (typ, name), dt, scalar in zip(self.in_params, in_types, scalar_inputs):
            ctype = _C_TYPES[dt.char]
            params.append(f"const {ctype} {name}" if scalar
                          else f"const {ctype}* __restrict__ _in_{name}")
        for (typ, name), dt in zip(self.out_params, out_types):
            params.append(f"{_C_TYPES[dt.char]}* __restrict__ _out_{name}")
        params.append("const long long n")
        body = []
        for (typ, name), dt, scalar in zip(self.in_params, in_types, scalar_inputs):
            if not scalar:
                body.append(f"    const {_C_TYPES[dt.char]} {name} = _in_{name}[i];")
        for (typ, name), dt in zip(self.out_params, out_types):
            body.append(f"    {_C_TYPES[dt.char]}& {name} = _out_{name}[i];")
        lines.append(f'extern "C" __global__ void {self.name}({", ".join(params)}) {{')
        lines.append("  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;"
                     " i < n; i += (long long)blockDim.x * gridDim.x) {")
        lines += body
        lines.append(f"    {self.operation};")
        lines.append("  }\n}")
        return "\n".join(lines)

    def __call__(self, *args, size=None, stream=None):
        nin, nout = len(self.in_params), len(self.out_params)
        if len(args) not in (nin, nin + nout):
            raise TypeError(f"{self.name} takes {nin} inputs (and optionally {nout} outputs), "
                            f"got {len(args)} arguments")
        _require_cuda("ElementwiseKernel")
        ins = [a if isinstance(a, (ndarray, np.generic, int, float, complex, bool))
               else asarray(a) for a in args[:nin]]
        in_types, out_types, bound = self._types(ins)
        arrays = [a for a in ins if isinstance(a, ndarray)] + list(args[nin:])
        shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else (size,)
        outs = list(args[nin:]) or [empty_array(shape, dt) for dt in out_types]
        scalar = [not isinstance(a, ndarray) for a in ins]
        key = (tuple(in_types), tuple(out_types), tuple(scalar))
        func = self._kernels.get(key)
        if func is None:
            raw = RawKernel(self.source(in_types, out_types, scalar, bound), self.name,
                            self.options)
            func = self._kernels[key] = raw
        launch_args = []
        for a, dt, s in zip(ins, in_types, scalar):
            if s:
                launch_args.append(dt.type(a))
            else:
                v = broadcast_view(a, shape)
                launch_args.append(v if v._c_contig and v.dtype == dt else
                                   v.astype(dt, order="C"))
        staged = [o if o._c_contig and o.dtype == dt else empty_array(shape, dt)
                  for o, dt in zip(outs, out_types)]
        n = int(np.prod(shape))
        if n:
            block = 256
            grid = min(-(-n // block), 65535 * 16)
            func((grid,), (block,), launch_args + staged + [np.int64(n)], stream=stream)
        for o, s in zip(outs, staged):
            if o is not s:
                o[...] = s
        if nout == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)
