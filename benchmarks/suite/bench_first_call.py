"""First-call latency, each in a fresh interpreter: import, backend start, first kernels.

A cold kernel cache (an empty ``CUPYNUM_CACHE_DIR``) measures NVRTC compiles on the CUDA
backend; a warm one measures loading cubins from disk.  The setup code (untimed) runs in the
same fresh process before the timed code.
"""

_COLD = ("import os, tempfile; os.environ['CUPYNUM_CACHE_DIR'] = tempfile.mkdtemp(); "
         "import numpy, cupynum as cp; from cupynum import _backends; b = _backends.get(); "
         "x = cp.ones(1000, numpy.float32); b.synchronize()")
_WARM = ("import numpy, cupynum as cp; from cupynum import _backends; b = _backends.get(); "
         "x = cp.ones(1000, numpy.float32); b.synchronize()")


class FirstCall:
    timeout = 300
    number = 1
    repeat = (1, 5, 30.0)

    def timeraw_import_numpy(self):
        return "import numpy"

    def timeraw_import_cupynum(self):
        return "import cupynum", "import numpy"

    def timeraw_backend_start(self):
        return ("from cupynum import _backends; _backends.get()",
                "import numpy, cupynum")

    def timeraw_first_ones(self):
        return ("x = cp.ones(1000, numpy.float32); b.synchronize()",
                "import numpy, cupynum as cp; from cupynum import _backends; b = _backends.get()")

    def timeraw_first_sin_cold_cache(self):
        return "cp.sin(x); b.synchronize()", _COLD

    def timeraw_first_sin(self):
        # the default cache: cold on the very first run only, warm (disk) on the repeats
        return "cp.sin(x); b.synchronize()", _WARM

    def timeraw_first_add_then_multiply(self):
        return "x + x; x * 3.0; b.synchronize()", _WARM
