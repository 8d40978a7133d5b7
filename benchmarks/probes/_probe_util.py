"""Helpers shared by the tuning probes of this folder (not a probe itself).

The probes import it as a plain module, which works when they run as scripts
(``python benchmarks/probes/<name>.py`` puts this folder first on ``sys.path``); each probe
also inserts its own folder, so ``runpy`` or ``-m`` runs find it too:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _probe_util import ...  # noqa: E402

Importing it puts the repository root first on ``sys.path`` (``REPO_ROOT``), so the probe's
``import cupynum`` that follows finds this tree's package even without ``PYTHONPATH=.``.
Everything here imports cupynum and CuPy lazily, so a probe can set its environment (the
backend, a fake driver) before the first import.

- ``import_cupy``: CuPy, or None where ``import cupy`` fails.
- ``event_median_ms``: CUDA-event timing (device time), median over repeats.
- ``wall_median``: wall-clock timing closed by a sync (host time included), median.
- ``run_check``: one PASS/FAIL check that never raises; ``finish``: the closing line.
- ``past_budget``: the probes' time-budget test.
- ``Knobs``: module constants set for a block, restored after.
- ``EventTimedDev``, ``record_kernel_times``: per-kernel CUDA-event times of one call.
- ``log``, ``ks_two_sample``, ``random_array``, ``sort_sample``, ``bits_equal``: small
  pieces that two or more probes use alike.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
import traceback

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, REPO_ROOT)


def log(*args):
    """print, flushed at once (the lead watches the probes' output live)."""
    print(*args, flush=True)


# --- CuPy ------------------------------------------------------------------------------------
def import_cupy(need_device=False):
    """CuPy where ``import cupy`` works, else None (the probes then time cupynum alone).

    need_device: also ask CuPy for a device, and print a note saying why CuPy is skipped
    when either step fails."""
    try:
        import cupy
        if need_device:
            cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001  (any failure just means: no CuPy columns)
        if need_device:
            print(f"note: CuPy skipped ({type(e).__name__}: {e})")
        return None
    return cupy


def _is_cupy(lib):
    return lib.__name__.split(".")[0] == "cupy"


def device_sync(lib):
    """The device-wide synchronize of ``lib`` (the cupynum or the cupy module)."""
    if _is_cupy(lib):
        return lib.cuda.runtime.deviceSynchronize
    return lib.cuda.synchronize


# --- timers ----------------------------------------------------------------------------------
def event_median_ms(lib, fn, reps, warm=1, calls=1, sync=None, primed=False):
    """Median over ``reps`` rounds of the CUDA-event milliseconds per call of ``fn``.

    lib: the cupynum or the cupy module; its own events time its own current stream.
    warm: calls before timing (kernel compilation, plan creation, pool growth).
    calls: calls per round between the two events (the round's time is divided by it);
    several calls amortise the event overhead of very short calls.
    sync: waits for the warm-up calls; default ``device_sync(lib)``.
    Each round waits for its end event before reading it (cupynum's ``get_elapsed_time``
    waits anyway; the probes' CuPy timers always did), so rounds do not overlap.
    primed: one more call is queued before the start event, so that the host's work for
    the first timed call overlaps a kernel as every later one does (the device's time per
    call in a stream of calls, without the first call's host time before its launch)."""
    for _ in range(warm):
        fn()
    (sync or device_sync(lib))()
    samples = []
    for _ in range(reps):
        start, end = lib.cuda.Event(), lib.cuda.Event()
        if primed:
            fn()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(lib.cuda.get_elapsed_time(start, end) / calls)
    return statistics.median(samples)


def wall_median(fn, sync, reps, warm=1, calls=1):
    """Median over ``reps`` rounds of the wall-clock seconds per call of ``fn``.

    A round is ``calls`` calls closed by ``sync()``, so the time includes the host side of
    each call (what per-call overhead probes want, and what CUDA events would miss) and the
    device time of the last one.  warm: calls before timing, followed by a sync."""
    for _ in range(warm):
        fn()
    sync()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


def past_budget(start, seconds):
    """True once more than ``seconds`` have passed since ``start`` (a perf_counter value):
    the probes then skip their remaining variants so a run stays within its time."""
    return time.perf_counter() - start > seconds


# --- checks ----------------------------------------------------------------------------------
def run_check(name, fn, fails):
    """Run one check; print ``PASS name  (msg)`` or ``FAIL name: error`` and the last frames
    of the traceback; never raise.  ``fn()`` raises (an AssertionError, or any error) to
    fail and may return a short message to print; a failing name is appended to ``fails``.
    Returns True when the check passed.  Probes bind it to their list:
    ``check = functools.partial(run_check, fails=FAILS)``."""
    try:
        msg = fn()
        print(f"PASS {name}" + (f"  ({msg})" if msg else ""), flush=True)
        return True
    except Exception as e:  # noqa: BLE001  (one failing case never ends the probe)
        fails.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {e}")
        tb = traceback.format_exc().strip().splitlines()
        print("     " + " | ".join(tb[-4:-1])[:600], flush=True)
        return False


def finish(fails, start):
    """Print the closing line, ``N failed checks: names; S s`` (S: seconds since ``start``,
    a perf_counter value), and return the exit status: 1 when a check failed."""
    print(f"\n{len(fails)} failed checks{': ' + ', '.join(fails) if fails else ''}; "
          f"{time.perf_counter() - start:.1f} s")
    return 1 if fails else 0


def ks_two_sample(x, y):
    """The two-sample Kolmogorov-Smirnov statistic of x and y (flattened, as float64)."""
    x, y = np.sort(np.asarray(x, np.float64).ravel()), np.sort(np.asarray(y, np.float64).ravel())
    g = np.concatenate([x, y])
    return np.abs(np.searchsorted(x, g, "right") / x.size -
                  np.searchsorted(y, g, "right") / y.size).max()


# --- inputs ----------------------------------------------------------------------------------
def random_array(shape, dt, seed=0):
    """Standard normal values of dtype ``dt`` (complex: independent real and imaginary
    parts) from ``np.random.default_rng(seed)``."""
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * r.standard_normal(shape)
    return x.astype(dt)


def sort_sample(rng, n, dt):
    """n sort keys of dtype dt drawn from ``rng``: bools, integers over the whole range, or
    floats with NaN, -NaN, +-inf, 0.0 and -0.0 mixed in (the edge cases of a radix sort)."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    x = (rng.standard_normal(n) * 100).astype(dt)
    for v in (np.nan, np.inf, -np.inf, 0.0, -0.0):
        x[rng.random(n) < 0.02] = v
    x[rng.random(n) < 0.01] = -np.nan
    return x


def bits_equal(a, b):
    """Same shape, dtype and values; floats compared bit for bit (NaN payloads, -0.0)."""
    return a.shape == b.shape and a.dtype == b.dtype and (
        np.array_equal(a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}"))
        if a.dtype.kind == "f" else np.array_equal(a, b))


# --- per-kernel times ------------------------------------------------------------------------
class EventTimedDev:
    """Stands in for a backend module's ``DEV`` object: records a pair of cupynum CUDA events
    around each launch and memset, as ``(label, start, end)`` in ``rec``, and forwards
    everything else.  launch_label(kernel, grid, block) names a launch."""

    def __init__(self, dev, launch_label):
        self.dev, self.rec, self._launch_label = dev, [], launch_label

    def __getattr__(self, name):
        return getattr(self.dev, name)

    def _timed(self, label, f, *args):
        import cupynum as cn

        e0, e1 = cn.cuda.Event(), cn.cuda.Event()
        e0.record()
        f(*args)
        e1.record()
        self.rec.append((label, e0, e1))

    def launch(self, kernel, grid, block, values, shmem=0):
        self._timed(self._launch_label(kernel, grid, block), self.dev.launch, kernel, grid,
                    block, values, shmem)

    def memset(self, ptr, value, nbytes):
        self._timed(f"memset({nbytes / 2**20:.1f}MB)", self.dev.memset, ptr, value, nbytes)


def record_kernel_times(module, fn, launch_label, runs=5):
    """Call ``fn`` ``runs`` times with ``module.DEV`` replaced by an EventTimedDev (restored
    after, errors included); returns one list per call of ``(label, ms)``, each launch and
    memset in order."""
    import cupynum as cn

    real, per = module.DEV, []
    try:
        for _ in range(runs):
            module.DEV = timed_dev = EventTimedDev(real, launch_label)
            fn()
            cn.cuda.synchronize()
            per.append([(label, cn.cuda.get_elapsed_time(e0, e1))
                        for label, e0, e1 in timed_dev.rec])
    finally:
        module.DEV = real
    return per


# --- knobs -----------------------------------------------------------------------------------
class Knobs:
    """Context manager: set module constants (the backend's tuning knobs) for a block and
    restore the previous values after it, errors included."""

    def __init__(self, module, **values):
        self.module, self.values, self.saved = module, values, {}

    def __enter__(self):
        for k, v in self.values.items():
            self.saved[k] = getattr(self.module, k)
            setattr(self.module, k, v)
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            setattr(self.module, k, v)
