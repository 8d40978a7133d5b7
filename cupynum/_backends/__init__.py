"""Backend selection: the backend of each op, chosen from where its operands' data lives.

The frontend asks ``for_arrays(*operands)`` (an op on existing arrays) or
``for_new(nbytes)`` (a new array); ``get()`` is only their implementation detail: the
process's device backend, created on first use.  ``CUPYNUM_BACKEND=auto`` (the default)
picks CUDA only when a driver and a GPU are present; the probe runs once and never raises
(see ``cuda/driver.py``).  ``host`` is NumPy over host memory; ``simulated`` is a device
backend without a GPU (simulated.py).  What a backend does is stated in base.py, the
contract every backend implements.  Today a process has one backend, so both choices
return it.
"""
from __future__ import annotations

from .. import _config
from . import buffer, fusion

_backend = None
_host = None  # the host backend, once asked for (the process's backend when it is host)


def for_arrays(*operands):
    """The backend where the operands' data lives: the device backend when some array
    operand's Buffer holds a device copy, else the host backend.  Non-array operands
    (scalars) are skipped; with no array operand, the backend of new arrays."""
    if _backend is _host and _host is not None:  # no device backend: all data is on the host
        return _host
    arrays = False
    for x in operands:
        try:
            buf = x._buf
        except AttributeError:  # a scalar
            continue
        if buf.device is not None or buf.pending is not None:  # (pending: computed there)
            return _backend or get()
        arrays = True
    if not arrays:
        return _backend or get()
    return _host or host_backend()


def for_writing(dst, *operands):
    """``for_arrays(dst, *operands)`` for an op that writes into ``dst``, with ``dst``'s
    Buffer told before the write lands (``Buffer.will_write``: pending readers evaluated,
    the other side's copy dropped, the version bumped)."""
    backend = for_arrays(dst, *operands)
    dst._buf.will_write(backend.side)
    return backend


def _resolve(buf, side):
    """``Buffer.on``'s hook (``buffer.RESOLVE``): the data made valid on ``side``.  Fusion's
    part first: a pending Buffer is computed (on the device)."""
    if buf.pending is not None:
        fusion.materialize(buf)
    raw = buf.host if side == buffer.HOST else buf.device
    if raw is None:
        raise LookupError(f"this buffer's data is not on the {side}")
    return raw


def _before_write(buf, side):
    """``Buffer.will_write``'s hook (``buffer.BEFORE_WRITE``), before a write on ``side``.
    Fusion's part first: a pending ``buf`` is computed and the pending expressions that
    read it run (they must see the old data)."""
    fusion.before_write(buf)


buffer.install(_resolve, _before_write)


def for_new(nbytes: int):
    """The backend that allocates a new array of ``nbytes`` bytes: the process's backend
    (the placement rules will decide by size here)."""
    return _backend or get()


def host_backend():
    """The host backend (the process's backend itself when that is the host one)."""
    global _host
    if _host is None:
        from .host import HostBackend

        backend = get()
        _host = backend if isinstance(backend, HostBackend) else HostBackend()
    return _host


def get():
    """The process's backend (created on first call); the frontend asks ``for_arrays`` or
    ``for_new`` instead."""
    global _backend
    if _backend is None:
        _backend = _select(_config.BACKEND)
    return _backend


def _select(choice: str):
    if choice == "host":
        from .host import HostBackend

        return HostBackend()
    if choice == "simulated":
        from .simulated import SimulatedBackend

        return SimulatedBackend()
    from .cuda import driver

    if choice == "cuda":
        if not driver.available():
            raise RuntimeError(
                "CUPYNUM_BACKEND=cuda but no usable CUDA driver/GPU was found"
                + (f": {driver.reason()}" if hasattr(driver, "reason") else "")
            )
    elif not driver.available() or _forked_from_cuda():
        from .host import HostBackend  # (a forked child cannot use its parent's GPU)

        return HostBackend()
    from .cuda.backend import CudaBackend

    return CudaBackend()


def _forked_from_cuda() -> bool:
    from .cuda import runtime

    return runtime.forked()


def name() -> str:
    return get().name
