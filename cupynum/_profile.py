"""``with cupynum.profile() as p: ...; print(p)``: where a program's time goes, per NumPy call.

While a profile is open, the public functions (``cupynum.*``, ``cupynum.linalg.*``,
``cupynum.fft.*``), the ufuncs, the ndarray's operators and methods and the host fallback are
wrapped; leaving it puts the originals back, so outside a profile nothing is paid, not even a
branch.  Only the outermost call is recorded (``mean`` calling ``sum`` is one ``mean``), with
its host time, its GPU time (CUDA events around it, read when the profile closes), the device
counts it caused (launches, bytes each way, syncs, from ``_backends.counters``), the kernels it
compiled or found in the cache, and, for a fallback, NumPy's function.  Each recorded call is
also an NVTX range named after the call when the ``nvtx`` package is installed, so Nsight
Systems timelines read as NumPy code.  ``CUPYNUM_PROFILE=1`` profiles the whole program and
prints the table at exit.
"""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field

from ._backends import counters

_clock = time.perf_counter

_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
              "or", "xor", "lshift", "rshift")
_ARRAY_METHODS = tuple(f"__{p}{op}__" for op in _OPERATORS for p in ("", "r", "i")) + (
    "__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__",
    "__eq__", "__ne__", "__getitem__", "__setitem__", "__bool__", "__float__", "__int__",
    "__index__", "__complex__", "__array__", "get", "copy", "astype", "fill", "reshape",
    "all", "any", "argmax", "argmin", "argsort", "clip", "cumprod", "cumsum", "dot", "max",
    "mean", "min", "nonzero", "prod", "round", "sort", "std", "sum", "take", "var", "item",
    "tolist")


@dataclass
class OpStats:
    """What the calls of one operation cost, added up."""

    calls: int = 0
    host_s: float = 0.0
    gpu_s: float = 0.0
    launches: int = 0
    h2d_bytes: int = 0
    d2h_bytes: int = 0
    syncs: int = 0
    compiled: int = 0
    cached: int = 0
    where: set = field(default_factory=set)
    fallback_to: set = field(default_factory=set)


class Profile:
    """The table of one ``cupynum.profile()`` block, filled while it is open."""

    def __init__(self, gpu_times=True, nvtx=True):
        self.ops: dict[str, OpStats] = {}
        self._gpu_times = gpu_times
        self._nvtx = _nvtx_module() if nvtx else None
        self._pending_events = []  # (name, start event, end event)
        self._local = threading.local()
        self._restore = []
        self.wall_s = 0.0

    # opening and closing ------------------------------------------------------------------
    def __enter__(self):
        global _active
        if _active is not None:
            raise RuntimeError("a cupynum.profile() is already open")
        _active = self
        from cupynum import _backends

        self._where = _where()
        # CUDA events time real GPU work only (the simulated device has none to time)
        self._events = self._gpu_times and _backends.for_side("device").cuda_memory
        self._install()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        global _active
        self.wall_s += time.perf_counter() - self._t0
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()
        _active = None
        self._read_gpu_times()
        return False

    def _install(self):
        import cupynum
        from cupynum import _fallback, fft, linalg
        from cupynum._array import ndarray
        from cupynum._ufunc import ufunc

        for module, prefix in ((cupynum, ""), (linalg, "linalg."), (fft, "fft.")):
            for name, value in list(vars(module).items()):
                if name.startswith("_") or not callable(value) or isinstance(value, type):
                    continue
                if isinstance(value, ufunc) or getattr(value, "__module__", "") is None:
                    continue
                if not getattr(value, "__module__", "").startswith("cupynum"):
                    continue  # NumPy's own objects, re-exported
                self._wrap(module, name, prefix + name)
        self._wrap(ufunc, "__call__", None)
        for name in _ARRAY_METHODS:
            if name in vars(ndarray):
                self._wrap(ndarray, name, f"ndarray.{name}")
        self._wrap(_fallback, "call_on_host", None)

    def _wrap(self, owner, name, label):
        original = getattr(owner, name)
        if name == "call_on_host":
            wrapper = self._fallback_wrapper(original)
        elif label is None:  # ufunc.__call__: the label is the ufunc's name
            wrapper = self._ufunc_wrapper(original)
        else:
            wrapper = self._call_wrapper(original, label)
        self._restore.append((owner, name, original))
        setattr(owner, name, wrapper)

    # the wrappers -------------------------------------------------------------------------
    def _call_wrapper(self, fn, label):
        record = self._record

        def profiled(*args, **kwargs):
            return record(label, fn, args, kwargs)

        profiled.__wrapped__ = fn
        profiled.__name__ = getattr(fn, "__name__", label)
        profiled.__doc__ = getattr(fn, "__doc__", None)
        return profiled

    def _ufunc_wrapper(self, call):
        record = self._record

        def profiled(uf, *args, **kwargs):
            return record(uf.__name__, call, (uf, *args), kwargs)

        return profiled

    def _fallback_wrapper(self, call_on_host):
        def profiled(func, args, kwargs):
            label = f"{getattr(func, '__module__', 'numpy')}.{getattr(func, '__name__', func)}"
            if getattr(self._local, "depth", 0):  # inside a recorded call: note the function
                if self._local.fallbacks is None:
                    self._local.fallbacks = set()
                self._local.fallbacks.add(label)
                return call_on_host(func, args, kwargs)
            return self._record(f"fallback {label}", call_on_host, (func, args, kwargs), {})

        return profiled

    def _record(self, label, fn, args, kwargs):
        local = self._local
        depth = getattr(local, "depth", 0)
        if depth:
            local.depth = depth + 1
            try:
                return fn(*args, **kwargs)
            finally:
                local.depth = depth
        local.depth = 1
        local.fallbacks = None
        counts = counters.snapshot()
        before = (counts["launches"], counts["h2d_bytes"], counts["d2h_bytes"], counts["syncs"])
        kernels_before = _kernel_stats()
        events = self._start_events(label) if self._events or self._nvtx else None
        t0 = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            host_s = _clock() - t0
            if events is not None or self._nvtx is not None:
                self._end_events(label, events)
            local.depth = 0
            self._add(label, host_s, before, kernels_before, local.fallbacks)

    def _add(self, label, host_s, before, kernels_before, fallbacks):
        s = self.ops.get(label)
        if s is None:
            s = self.ops[label] = OpStats()
            s.where.add(self._where)
        s.calls += 1
        s.host_s += host_s
        now = counters.snapshot()
        s.launches += now["launches"] - before[0]
        s.h2d_bytes += now["h2d_bytes"] - before[1]
        s.d2h_bytes += now["d2h_bytes"] - before[2]
        s.syncs += now["syncs"] - before[3]
        if kernels_before is not None:
            compiled, cached = _kernel_stats()
            s.compiled += compiled - kernels_before[0]
            s.cached += cached - kernels_before[1]
        if fallbacks:
            s.fallback_to |= fallbacks

    # GPU times and NVTX ---------------------------------------------------------------------
    def _start_events(self, label):
        if self._nvtx is not None:
            self._nvtx.push_range(label)
        if not self._events:
            return None
        from cupynum import cuda

        start = cuda.Event()
        start.record()
        return start

    def _end_events(self, label, start):
        if start is not None:
            from cupynum import cuda

            end = cuda.Event()
            end.record()
            self._pending_events.append((label, start, end))
        if self._nvtx is not None:
            self._nvtx.pop_range()

    def _read_gpu_times(self):
        if not self._pending_events:
            return
        from cupynum import cuda

        for label, start, end in self._pending_events:
            end.synchronize()
            self.ops[label].gpu_s += cuda.get_elapsed_time(start, end) / 1e3
        self._pending_events.clear()

    # the table ------------------------------------------------------------------------------
    def table(self, limit=None) -> str:
        rows = sorted(self.ops.items(), key=lambda kv: kv[1].host_s + kv[1].gpu_s,
                      reverse=True)[:limit]
        head = ("op", "calls", "where", "host ms", "gpu ms", "launches", "h2d KiB", "d2h KiB",
                "syncs", "compiled", "cached", "fallback to")
        body = [(name, f"{s.calls}", "/".join(sorted(s.where)), f"{s.host_s * 1e3:.3f}",
                 f"{s.gpu_s * 1e3:.3f}", f"{s.launches}", f"{s.h2d_bytes / 1024:.1f}",
                 f"{s.d2h_bytes / 1024:.1f}", f"{s.syncs}", f"{s.compiled}", f"{s.cached}",
                 ", ".join(sorted(s.fallback_to)) or "-") for name, s in rows]
        widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i in (0, 2, 11) else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                 for r in [head, *body]]
        total_host = sum(s.host_s for s in self.ops.values())
        lines.append(f"{len(self.ops)} ops, {sum(s.calls for s in self.ops.values())} calls, "
                     f"{total_host * 1e3:.3f} ms in cupynum calls of {self.wall_s * 1e3:.3f} ms")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


_active: Profile | None = None


def profile(gpu_times=True, nvtx=True) -> Profile:
    """A context manager that records every cupynum call made inside it; ``print(p)`` shows
    the table, sorted by total time."""
    return Profile(gpu_times=gpu_times, nvtx=nvtx)


def _where() -> str:
    from cupynum import _backends

    return "host" if _backends.for_side("device").host_memory else "gpu"


def _kernel_stats():
    """(compiles, cache hits) of the kernel cache so far; None before it exists."""
    compiler = sys.modules.get("cupynum._backends.cuda.compiler")
    cache = getattr(compiler, "_default_cache", None)
    if cache is None:
        return None
    stats = cache.stats
    return stats.get("compiles", 0), stats.get("memory_hits", 0) + stats.get("disk_hits", 0)


def _nvtx_module():
    try:
        import nvtx
    except ImportError:
        return None
    return nvtx


def profile_whole_program() -> None:
    """``CUPYNUM_PROFILE=1``: profile from now on and print the table at exit."""
    import atexit

    p = profile()
    p.__enter__()

    def report():
        if _active is p:
            p.__exit__(None, None, None)
        print(p.table(), file=sys.stderr)

    atexit.register(report)
