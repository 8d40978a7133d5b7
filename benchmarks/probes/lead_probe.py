"""Lead's profiling probe (GPU machine): import time, first-call breakdown, fft and small
batched matmul overheads.  Run from the repo root with CUPYNUM_BACKEND=cuda."""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import wall_median  # noqa: E402


def fresh(code, env=None):
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, env=dict(e, **(env or {})))
    return p.stdout + p.stderr[-3000:]


print("PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"),
      "tree writable", os.access(os.path.join(ROOT, "cupynum"), os.W_OK),
      "pycache", os.path.isdir(os.path.join(ROOT, "cupynum", "__pycache__")))
subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "cupynum")])
imp = r'''
import time;t0=time.perf_counter();import numpy;t1=time.perf_counter();import cupynum
t2=time.perf_counter();print("import numpy %.1f ms, cupynum %.1f ms" % ((t1-t0)*1e3,(t2-t1)*1e3))'''
for _ in range(3):
    print(fresh(imp).strip())
out = fresh("import numpy; import cupynum", {"PYTHONPROFILEIMPORTTIME": "1"})
lines = [ln for ln in out.splitlines() if ln.startswith("import time:")]
lines.sort(key=lambda ln: -int(ln.split("|")[1]))
print("\n".join(lines[:12]))

first = r'''
import cProfile, pstats, io, time, numpy
import cupynum as cp
from cupynum import _backends
b = _backends.get(); x = cp.ones(1000, numpy.float32); b.synchronize()
t = time.perf_counter()
y = cp.sin(x); b.synchronize()
print("first sin %.2f ms" % ((time.perf_counter() - t) * 1e3))
pr = cProfile.Profile(); pr.enable(); y = cp.tan(x); b.synchronize(); pr.disable()
t = time.perf_counter(); y = cp.cos(x); b.synchronize(); print("first cos %.2f ms" % ((time.perf_counter() - t) * 1e3))
t = time.perf_counter(); y = x * 3; b.synchronize(); print("first mul %.2f ms" % ((time.perf_counter() - t) * 1e3))
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(30); print(s.getvalue()[:6000])
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15); print(s.getvalue()[:3000])
'''
fresh(first)  # make sure the disk cache is warm
print(fresh(first))

import cupy
import cupynum as cp
from cupynum import _backends

B = _backends.get()


def tdev(xp, fn, reps=30):
    """Median wall-clock microseconds of one call closed by a sync (two warm-up calls)."""
    sync = B.synchronize if xp is cp else (lambda: cupy.cuda.Device().synchronize())
    return wall_median(fn, sync, reps, warm=2) * 1e6


rng = np.random.default_rng(0)
small = rng.standard_normal((10000, 4, 4)).astype(np.float32)
xa, xb = cp.asarray(small), cupy.asarray(small)
print("batch 4x4 A@A: cupynum %.1f us, cupy %.1f us" % (tdev(cp, lambda: xa @ xa),
                                                        tdev(cupy, lambda: xb @ xb)))
np.testing.assert_allclose((xa @ xa).get(), small @ small, rtol=1e-5, atol=1e-5)
ints = rng.integers(-100, 100, (512, 512)).astype(np.int32)
ia, ib = cp.asarray(ints), cupy.asarray(ints)
assert np.array_equal((ia @ ia).get(), ints @ ints)
print("int32 512^2 matmul: cupynum %.1f us, cupy %.1f us" % (tdev(cp, lambda: ia @ ia),
                                                             tdev(cupy, lambda: ib @ ib)))
