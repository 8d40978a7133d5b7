"""cuFFT through ``nvmath.bindings.cufft``, imported lazily.

The backend contract (see docs/internals.md): ``fft(x, out, kind, rank, forward)``
transforms the last ``rank`` (1..3) axes of the C-contiguous ``x`` into the C-contiguous
``out``, batched over the leading axes, **unnormalised** in both directions (the frontend
scales).  Plans are cached in a bounded LRU keyed by (thread, stream, kind, dtype, transform
shape, batch): a plan is bound to one stream and must not run concurrently in two threads.
"""
from __future__ import annotations

import collections
import threading


from . import runtime
from .blas import empty

_lib = None
_lock = threading.Lock()
_plans: "collections.OrderedDict" = collections.OrderedDict()
PLAN_CACHE_SIZE = 16
FORWARD, INVERSE = -1, 1
# cufftType per (kind, real/complex double?)
_TYPES = {("c2c", False): 0x29, ("r2c", False): 0x2A, ("c2r", False): 0x2C,
          ("c2c", True): 0x69, ("r2c", True): 0x6A, ("c2r", True): 0x6C}


def lib():
    global _lib
    if _lib is None:
        from .nvmath_bindings import load

        _lib = load("cufft")
    return _lib


def _plan(kind, double, shape, batch, stream):
    key = (threading.get_ident(), stream, kind, double, shape, batch)
    with _lock:
        plan = _plans.get(key)
        if plan is not None:
            _plans.move_to_end(key)
            return plan
    cf = lib()
    plan = cf.create()
    cf.make_plan_many64(plan, len(shape), list(shape), 0, 1, 0, 0, 1, 0,
                        _TYPES[(kind, double)], batch)
    cf.set_stream(plan, stream)
    with _lock:
        _plans[key] = plan
        while len(_plans) > PLAN_CACHE_SIZE:
            _, old = _plans.popitem(last=False)
            cf.destroy(old)
    return plan


def clear_plan_cache() -> None:
    with _lock:
        plans = list(_plans.values())
        _plans.clear()
    for p in plans:
        lib().destroy(p)


def fft(backend, x, out, kind: str, rank: int, forward: bool) -> None:
    """See the module docstring.  For ``c2r`` the transform sizes are ``out``'s last axes."""
    if out._size == 0:
        return
    shape = tuple(out._shape[-rank:]) if kind == "c2r" else tuple(x._shape[-rank:])
    n = 1
    for d in shape:
        n *= d
    batch = (out._size if kind != "r2c" else x._size) // n
    double = out.dtype.char in "dD"
    stream = runtime.current_stream()
    plan = _plan(kind, double, shape, batch, stream)
    cf = lib()
    xp = x._buf.ptr + x._offset
    op = out._buf.ptr + out._offset
    if kind == "c2c":
        (cf.exec_z2z if double else cf.exec_c2c)(plan, xp, op, FORWARD if forward else INVERSE)
    elif kind == "r2c":
        (cf.exec_d2z if double else cf.exec_r2c)(plan, xp, op)
    else:  # c2r overwrites its input: work on a copy
        tmp = empty(x._shape, x.dtype)
        backend.copy(x, tmp)
        (cf.exec_z2d if double else cf.exec_c2r)(plan, tmp._buf.ptr, op)
