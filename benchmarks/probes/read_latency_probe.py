"""Latency of one 8-byte device-to-host read of an idle device, by how it is made (driver
calls through cuda.bindings; us per read, 3,000 reads, best of 9 rounds): what
``memory.read_small`` pays and what the driver could offer instead.

    CUPYNUM_PLACEMENT=device python benchmarks/probes/read_latency_probe.py"""
import ctypes, time
import numpy as np
import cupynum as cp
from cupynum._backends.cuda import runtime, memory
A = cp.asarray(np.arange(10000.0))
cp.cuda.synchronize()
ptr = A._buf.device.ptr + 8 * 55
d = runtime._d
err, hp = d.cuMemHostAlloc(256, 0); hp = int(hp)
err, mp = d.cuMemHostAlloc(256, 2); mp = int(mp)  # DEVICEMAP
err, mdev = d.cuMemHostGetDevicePointer(mp, 0); mdev = int(mdev)
page = np.empty(256, np.uint8); pa = page.ctypes.data
hv = ctypes.c_double.from_address(hp); mv = ctypes.c_double.from_address(mp)
def s_read_small(): return memory.read_small(ptr, (), A.dtype)
def s_dtoh_pinned(): d.cuMemcpyDtoH(hp, ptr, 8); return hv.value
def s_dtoh_pageable(): d.cuMemcpyDtoH(pa, ptr, 8); return page[:8].view(np.float64)[0]
def s_async_sync(): d.cuMemcpyDtoHAsync(hp, ptr, 8, 0); d.cuStreamSynchronize(0); return hv.value
def s_dtod_mapped(): d.cuMemcpyDtoDAsync(mdev, ptr, 8, 0); d.cuStreamSynchronize(0); return mv.value
def s_ctx_sync(): d.cuCtxSynchronize()
def s_float(): return float(A[55])
N, R = 3000, 9
for name, fn in [("read_small", s_read_small), ("cuMemcpyDtoH pinned", s_dtoh_pinned),
                 ("cuMemcpyDtoH pageable", s_dtoh_pageable), ("DtoHAsync+StreamSync", s_async_sync),
                 ("DtoD into mapped+StreamSync", s_dtod_mapped), ("cuCtxSynchronize alone", s_ctx_sync),
                 ("float(A[55])", s_float)]:
    if name.startswith("DtoD") and not mdev:
        continue
    v = fn()
    assert name.startswith("cuCtx") or float(v) == 55.0, (name, v)
    best = 1e9
    for r in range(R):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        best = min(best, (time.perf_counter() - t) / N * 1e6)
    print(f"{name:32s} {best:6.2f} us")
