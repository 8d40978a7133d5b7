"""cuRAND (Philox4x32-10) through ``nvmath.bindings.curand``, imported lazily.

One cuRAND generator per cupynum ``Generator`` (its state advances inside cuRAND, so
successive calls continue the stream and a seed reproduces it).  Each call binds it to the
current stream.  Streams differ from NumPy's (docs/differences.md).
"""
from __future__ import annotations

import threading


from . import memory, runtime
from .blas import empty

_lib = None
PHILOX = 161  # CURAND_RNG_PSEUDO_PHILOX4_32_10


def lib():
    global _lib
    if _lib is None:
        import nvmath.bindings.curand as curand

        _lib = curand
    return _lib


class State:
    """A cuRAND Philox generator seeded with ``seed`` (a 64-bit int)."""

    def __init__(self, seed: int):
        cr = lib()
        self._lock = threading.Lock()
        self._gen = cr.create_generator(PHILOX)
        cr.set_pseudo_random_generator_seed(self._gen, int(seed) & (2**64 - 1))
        self._stream = None

    def __del__(self):
        gen = getattr(self, "_gen", None)
        if gen is not None and not memory._shutdown:
            try:
                lib().destroy_generator(gen)
            except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
                pass

    def fill(self, backend, kind: str, out, param=None) -> None:
        """kind: 'uniform' (float32/64 in (0, 1]), 'normal' (float32/64, N(0, 1)),
        'bits' (uint32), 'poisson' (uint32, mean ``param``).  out C-contiguous."""
        n = out._size
        if n == 0:
            return
        cr = lib()
        stream = runtime.current_stream()
        with self._lock:
            if self._stream != stream:
                cr.set_stream(self._gen, stream)
                self._stream = stream
            p = out._buf.ptr + out._offset
            dbl = out.dtype.char == "d"
            if kind == "uniform":
                (cr.generate_uniform_double if dbl else cr.generate_uniform)(self._gen, p, n)
            elif kind == "bits":
                cr.generate(self._gen, p, n)
            elif kind == "poisson":
                cr.generate_poisson(self._gen, p, n, float(param))
            elif kind == "normal":
                if n % 2:  # Box-Muller makes pairs: cuRAND wants an even count
                    tmp = empty((n + 1,), out.dtype)
                    (cr.generate_normal_double if dbl else cr.generate_normal)(
                        self._gen, tmp._buf.ptr, n + 1, 0.0, 1.0)
                    memory.memcpy_dtod(p, tmp._buf.ptr, n * out.dtype.itemsize)
                else:
                    (cr.generate_normal_double if dbl else cr.generate_normal)(
                        self._gen, p, n, 0.0, 1.0)
            else:
                raise ValueError(kind)
