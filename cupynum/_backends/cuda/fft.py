"""cuFFT through ``nvmath.bindings.cufft``, imported lazily.

The backend contract (see docs/internals.md): ``fft(x, out, kind, rank, forward)``
transforms the last ``rank`` (1..3) axes of the C-contiguous ``x`` into the C-contiguous
``out``, batched over the leading axes, **unnormalised** in both directions (the frontend
scales).  Plans are cached per thread, in a bounded LRU keyed by (stream, kind, dtype,
transform shape, batch): a plan is bound to one stream and must not run concurrently in two
threads, and a thread evicts (destroys) only its own plans, never one that another thread is
about to execute.  A thread's plans are destroyed when the thread ends.
"""
from __future__ import annotations

import collections
import threading


from . import memory, nvmath_bindings, runtime, tuning
from .blas import destroy_quietly, empty
from .copy_fill import copy
from .view import dptr

_lib = None
_tls = threading.local()
FORWARD, INVERSE = -1, 1
# cufftType per (kind, real/complex double?)
_TYPES = {("c2c", False): 0x29, ("r2c", False): 0x2A, ("c2r", False): 0x2C,
          ("c2c", True): 0x69, ("r2c", True): 0x6A, ("c2r", True): 0x6C}

# The plan knobs are tuning.FFT (plan_api, work_area, plan_cache_size).
_INT32_MAX = 2**31 - 1
# cudaDataType_t (input, output, execution) per (kind, double) for the Xt API
_XT_TYPES = {("c2c", False): (4, 4, 4), ("r2c", False): (0, 4, 4), ("c2r", False): (4, 0, 4),
             ("c2c", True): (5, 5, 5), ("r2c", True): (1, 5, 5), ("c2r", True): (5, 1, 5)}


class _Plan:
    """A cuFFT plan handle with what executing it needs: how it was made (Xt plans run
    through cufftXtExec) and the work area it owns when ``tuning.FFT.work_area`` is "pool"."""

    __slots__ = ("handle", "xt", "work")

    def __init__(self, handle, xt, work):
        self.handle, self.xt, self.work = handle, xt, work


class _ThreadPlans:
    """One thread's plan cache (an LRU); its plans are destroyed with the thread's
    ``threading.local`` (at thread exit)."""

    __slots__ = ("plans",)

    def __init__(self):
        self.plans = collections.OrderedDict()

    def __del__(self):
        cufft = _lib
        if cufft is None:  # interpreter shutdown cleared the module: the driver frees all
            return
        for p in self.plans.values():
            destroy_quietly(cufft.destroy, p.handle)


def _thread_plans() -> "collections.OrderedDict":
    t = getattr(_tls, "cache", None)
    if t is None:
        t = _tls.cache = _ThreadPlans()
    return t.plans


def _make_plan(cf, kind, double, shape, batch, stream) -> _Plan:
    plan = cf.create()
    try:
        return _configure_plan(cf, plan, kind, double, shape, batch, stream)
    except BaseException:
        cf.destroy(plan)  # (a failed plan, e.g. out of memory, is not leaked)
        raise


def _configure_plan(cf, plan, kind, double, shape, batch, stream) -> _Plan:
    knobs = tuning.FFT
    pool_work = knobs.work_area == "pool"
    if pool_work:
        cf.set_auto_allocation(plan, 0)
    api = knobs.plan_api
    if api in ("many", "1d") and max(max(shape), batch, _prod(shape) * batch) > _INT32_MAX:
        api = "many64"
    n = list(shape)
    if api == "xt":
        itype, otype, etype = _XT_TYPES[(kind, double)]
        size = cf.xt_make_plan_many(plan, len(n), n, 0, 1, 0, itype, 0, 1, 0, otype, batch,
                                    etype)
    elif api == "1d" and len(n) == 1:
        size = cf.make_plan1d(plan, n[0], _TYPES[(kind, double)], batch)
    elif api in ("many", "1d"):
        size = cf.make_plan_many(plan, len(n), n, 0, 1, 0, 0, 1, 0, _TYPES[(kind, double)],
                                 batch)
    else:
        size = cf.make_plan_many64(plan, len(n), n, 0, 1, 0, 0, 1, 0, _TYPES[(kind, double)],
                                   batch)
    cf.set_stream(plan, stream)
    work = None
    if pool_work and size:
        work = memory.alloc(int(size), stream)
        cf.set_work_area(plan, work.ptr)
    return _Plan(plan, api == "xt", work)


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def lib():
    global _lib
    if _lib is None:
        _lib = nvmath_bindings.load("cufft")
    return _lib


def _plan(kind, double, shape, batch, stream):
    plans = _thread_plans()
    knobs = tuning.FFT
    key = (stream, kind, double, shape, batch, knobs.plan_api, knobs.work_area)
    plan = plans.get(key)
    if plan is not None:
        plans.move_to_end(key)
        return plan
    cf = lib()
    plan = memory.library_alloc(_make_plan, cf, kind, double, shape, batch, stream,
                                what="cufftMakePlan")
    plans[key] = plan
    while len(plans) > knobs.plan_cache_size:
        _, old = plans.popitem(last=False)
        cf.destroy(old.handle)  # its work area returns to the pool after queued work
    return plan


def clear_plan_cache() -> None:
    """Destroy the calling thread's cached plans."""
    plans = _thread_plans()
    old = list(plans.values())
    plans.clear()
    for p in old:
        lib().destroy(p.handle)


def fft(x, out, kind: str, rank: int, forward: bool) -> None:
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
    xp = dptr(x)
    op = dptr(out)
    if kind == "c2r":  # c2r overwrites its input: work on a copy
        tmp = empty(x._shape, x.dtype)
        copy(x, tmp)
        xp = dptr(tmp)
    h = plan.handle
    if plan.xt:
        cf.xt_exec(h, xp, op, FORWARD if forward else INVERSE)
    elif kind == "c2c":
        (cf.exec_z2z if double else cf.exec_c2c)(h, xp, op, FORWARD if forward else INVERSE)
    elif kind == "r2c":
        (cf.exec_d2z if double else cf.exec_r2c)(h, xp, op)
    else:
        (cf.exec_z2d if double else cf.exec_c2r)(h, xp, op)
