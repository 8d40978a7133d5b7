"""Gather, boolean compress and transpose: correctness against NumPy, then cupynum vs CuPy
timings and every kernel variant of cupynum/_backends/cuda/indexing.py, in one run.

    CUPYNUM_BACKEND=cuda PYTHONPATH=. python benchmarks/probes/index_probe.py [--reps 20]
        [--skip-check] [--shrink S]   (S: sizes / 4**S, for a quick smoke run)

Times are CUDA-event medians (ms) over --reps calls after warm-up, each library timed on
its own current stream with its own events; a call that syncs inside (cupynum's bounds-flag
read, the mask count read) is timed including that sync.  GB/s counts the bytes a perfect
kernel moves (for the gather: index read + result write + one 32-byte sector per random
read).  Variant lines set the module's knobs (or pass a transpose config) and time
cupynum only; 'base' marks the configuration before this change.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))

import cupynum as cpn  # noqa: E402
from cupynum import _backends  # noqa: E402
from cupynum._backends.cuda import indexing as cix  # noqa: E402

try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
except Exception as e:  # noqa: BLE001
    print(f"note: CuPy skipped ({type(e).__name__}: {e})")
    cupy = None

REPS = 20
T0 = time.perf_counter()


def timed(lib, fn, reps=None, warm=2):
    reps = reps or REPS
    for _ in range(warm):
        fn()
    lib.cuda.Stream.null.synchronize() if lib is cupy else _backends.get().synchronize()
    out = []
    for _ in range(reps):
        e0, e1 = lib.cuda.Event(), lib.cuda.Event()
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        out.append(lib.cuda.get_elapsed_time(e0, e1))
    return statistics.median(out)


def line(name, ms, nbytes, ref=None):
    gbs = nbytes / ms / 1e6
    extra = f"  x{ref / ms:5.2f} vs cupy" if ref else ""
    print(f"{name:<44} {ms * 1e3:9.1f} us {gbs:8.0f} GB/s{extra}", flush=True)


def both(name, f_cpn, f_cp, nbytes):
    ref = timed(cupy, f_cp) if cupy is not None else None
    if ref is not None:
        line(name + " [cupy]", ref, nbytes)
    line(name + " [cupynum]", timed(cpn, f_cpn), nbytes, ref)


# --- correctness -----------------------------------------------------------------------------
def check(label, got, want):
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(
        got, want, equal_nan=want.dtype.kind in "fc")
    if not ok:
        print(f"MISMATCH {label}: got {got.dtype}{got.shape} want {want.dtype}{want.shape}")
    return ok


def raises_index_error(fn):
    try:
        fn()
    except IndexError:
        return True
    return False


def correctness():
    rng = np.random.default_rng(1)
    ok = True
    for dt in (np.float32, np.float64, np.int8, np.int16, np.complex128):
        for shape in ((1000, 1), (33, 65), (513, 1031), (3, 97, 45), (4096, 17)):
            h = (rng.standard_normal(shape) * 100).astype(dt)
            d = cpn.asarray(h)
            perm = tuple(range(len(shape)))[::-1] if len(shape) == 2 else (0, 2, 1)
            ok &= check(f"transpose {dt.__name__}{shape}", d.transpose(perm).copy(),
                        h.transpose(perm).copy())
        # every variant on an odd shape
        h = (rng.standard_normal((517, 389)) * 100).astype(dt)
        d = cpn.asarray(h)
        size = np.dtype(dt).itemsize
        if size <= 8:
            for cfg in transpose_configs(size):
                out = cpn.empty((389, 517), dt)
                assert cix.try_transpose_copy(d.T, out, cfg)
                ok &= check(f"transpose {dt.__name__} {cfg}", out, h.T.copy())
            h2 = (rng.standard_normal((512, 384)) * 100).astype(dt)  # vector-aligned shape
            d2 = cpn.asarray(h2)
            for cfg in transpose_configs(size):
                out = cpn.empty((384, 512), dt)
                assert cix.try_transpose_copy(d2.T, out, cfg)
                ok &= check(f"transpose {dt.__name__} {cfg} aligned", out, h2.T.copy())
    for dt in (np.float32, np.float64, np.int8, np.complex128, np.bool_):
        a = (rng.standard_normal(100_003) * 100).astype(dt)
        d = cpn.asarray(a)
        ix = rng.integers(-100_003, 100_003, 300_001)
        ix[:1000] = 7  # repeated
        for ilp, cap in ((1, 0), (4, 0), (8, 4), (2, 1)):
            cix.GATHER_ILP, cix.GATHER_BLOCKS_PER_SM = ilp, cap
            ok &= check(f"gather {dt.__name__} ilp{ilp} cap{cap}", d[cpn.asarray(ix)], a[ix])
        cix.GATHER_ILP, cix.GATHER_BLOCKS_PER_SM = 4, 0
        ok &= check(f"gather host idx {dt.__name__}", d[ix], a[ix])
        ok &= check(f"gather strided {dt.__name__}", d[::-2][cpn.asarray(ix // 2)], a[::-2][ix // 2])
        for bad in (100_003, -100_004, 2**40):
            b = ix.copy()
            b[-5] = bad
            if not raises_index_error(lambda: d[cpn.asarray(b)]):
                print(f"MISMATCH gather {dt.__name__}: index {bad} did not raise IndexError")
                ok = False
        ok &= check(f"gather after error {dt.__name__}", d[cpn.asarray(ix)], a[ix])
        m2 = rng.random((317, 313)) < 0.5
        a2 = (rng.standard_normal((317, 313)) * 100).astype(dt)
        ok &= check(f"mask 2-D {dt.__name__}", cpn.asarray(a2)[cpn.asarray(m2)], a2[m2])
        for p in (0.0, 0.01, 0.5, 1.0):
            m = rng.random(a.size) < p
            for vec in (4, 16):
                for rounds in (1, 8):
                    cix.MC_VEC, cix.MC_ROUNDS = vec, rounds
                    ok &= check(f"mask {dt.__name__} p{p} v{vec} r{rounds}", d[cpn.asarray(m)],
                                a[m])
            ok &= check(f"flatnonzero p{p}", cpn.flatnonzero(cpn.asarray(m)), np.flatnonzero(m))
            cix.MC_VEC, cix.MC_ROUNDS = 16, 4
    raw = rng.integers(0, 256, 100_001, dtype=np.uint8)
    ok &= check("flatnonzero non-0/1 bool bytes",
                cpn.flatnonzero(cpn.asarray(raw).view(np.bool_)), np.flatnonzero(raw))
    print(f"correctness: {'ALL OK' if ok else 'FAILURES ABOVE'}  ({time.perf_counter() - T0:.1f} s)")
    return ok


# --- variants --------------------------------------------------------------------------------
def transpose_configs(size):
    vecs = [v for v in (1, 2, 4, 8, 16) if v * size <= 16]
    cfgs = []
    for tile in (32, 64):
        for rows in (4, 8, 16):
            for vec in vecs:
                if tile % rows or (tile // vec) * rows > 1024 or (tile // vec) * rows < 64:
                    continue
                cfgs.append((tile, rows, vec, False))
    cfgs += [(32, 8, 1, True), (64, 8, 1, True)]
    cfgs += [(t, r, v, True) for (t, r, v, d) in cfgs if v == max(vecs) and not d]
    return sorted(set(cfgs))


def main():
    global REPS
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--shrink", type=int, default=0, help="sizes / 4**shrink (smoke runs)")
    args = ap.parse_args()
    REPS = args.reps
    sh = args.shrink
    b = _backends.get()
    print(f"backend {_backends.name()}; cupy {cupy.__version__ if cupy else '-'}")
    if not hasattr(b, "mask_select"):
        print("note: backend has no mask_select (cuda/backend.py): patched in for this run")
        type(b).mask_select = lambda self, src, mask: cix.mask_select(src, mask)
    if not args.skip_check:
        correctness()
    rng = np.random.default_rng(0)

    # reference: device copy of 2^28 f32
    n = 2**28 >> (2 * sh)
    h = np.arange(n, dtype=np.float32)
    a_n = cpn.asarray(h)
    a_c = cupy.asarray(h) if cupy is not None else None
    both(f"copy 2^{n.bit_length() - 1} f32", lambda: a_n.copy(), lambda: a_c.copy(), 2 * n * 4)

    # transpose
    for dt, side in ((np.float32, 16384), (np.float64, 8192), (np.int8, 16384),
                     (np.int16, 16384)):
        side >>= sh
        hm = np.arange(side * side, dtype=np.uint32).astype(dt).reshape(side, side)
        m_n = cpn.asarray(hm)
        m_c = cupy.asarray(hm) if cupy is not None else None
        nb = 2 * hm.nbytes
        name = f"M.T.copy() {side}^2 {np.dtype(dt).name}"
        both(name, lambda: m_n.T.copy(), lambda: m_c.T.copy(), nb)
        want = hm[:64, :64].T
        assert np.array_equal(m_n.T.copy()[:64, :64].get(), want), name
        out = cpn.empty((side, side), dt)
        size = np.dtype(dt).itemsize
        res = []
        for cfg in transpose_configs(size):
            ms = timed(cpn, lambda: cix.try_transpose_copy(m_n.T, out, cfg))
            res.append((ms, cfg))
        res.sort()
        for ms, cfg in res:
            tag = " base" if cfg == (32, 8, 1, False) else ""
            line(f"  tile,rows,vec,diag={cfg}{tag}", ms, nb)
        print(f"  -> best {np.dtype(dt).name}: TRANSPOSE[{size}] = {res[0][1][:3]}, "
              f"TRANSPOSE_DIAG = {res[0][1][3]}  (current default {cix.TRANSPOSE[size]})")
        del m_n, m_c, out

    # gather 2^26 int64 indices into 2^28 f32
    k = 2**26 >> (2 * sh)
    hi = rng.integers(0, n, k)
    i_n = cpn.asarray(hi)
    i_c = cupy.asarray(hi) if cupy is not None else None
    gb = k * (8 + 4 + 32)
    assert np.array_equal(a_n[i_n][:1000].get(), h[hi[:1000]])
    both(f"a[idx] 2^{k.bit_length() - 1} of 2^{n.bit_length() - 1} f32", lambda: a_n[i_n],
         lambda: a_c[i_c], gb)
    if cupy is not None:
        line("  cupy.take(a, idx) [cupy]", timed(cupy, lambda: cupy.take(a_c, i_c)), gb)
    out = cpn.empty(k, np.float32)
    line("  no check, no sync (indexed_copy gather)",
         timed(cpn, lambda: cix.indexed_copy("gather", a_n, [i_n], 0, out)), gb)
    cix.GATHER_STREAMING = False
    line("  generic ix_kernel, checked (base)", timed(cpn, lambda: a_n[i_n]), gb)
    cix.GATHER_STREAMING = True
    res = []
    for ilp in (1, 2, 4, 8):
        for cap in (0, 4, 8, 16, 32):
            for o32 in (True, False):
                cix.GATHER_ILP, cix.GATHER_BLOCKS_PER_SM, cix.GATHER_O32 = ilp, cap, o32
                res.append((timed(cpn, lambda: a_n[i_n]), (ilp, cap, o32)))
    res.sort()
    for ms, cfg in res[:8] + res[-2:]:
        line(f"  ilp,blocks/SM,o32={cfg}", ms, gb)
    print(f"  -> best: GATHER_ILP, GATHER_BLOCKS_PER_SM, GATHER_O32 = {res[0][1]}")
    cix.GATHER_ILP, cix.GATHER_BLOCKS_PER_SM, cix.GATHER_O32 = 4, 0, True
    del i_n, i_c, out

    # boolean mask 2^26 f32, ~50% true
    hm = rng.random(k) < 0.5
    hv = h[:k]
    m_n, v_n = cpn.asarray(hm), a_n[:k]
    m_c, v_c = (cupy.asarray(hm), a_c[:k]) if cupy is not None else (None, None)
    mb = k * (1 + 4) + int(hm.sum()) * 4
    assert np.array_equal(v_n[m_n].get(), hv[hm])
    both(f"a[mask] 2^{k.bit_length() - 1} f32 50%", lambda: v_n[m_n], lambda: v_c[m_c], mb)
    both(f"flatnonzero 2^{k.bit_length() - 1} 50%", lambda: cpn.flatnonzero(m_n),
         lambda: cupy.flatnonzero(m_c), k + int(hm.sum()) * 8)
    saved = type(b).mask_select
    type(b).mask_select = None
    line("  nonzero + gather (base)", timed(cpn, lambda: v_n[m_n]), mb)
    type(b).mask_select = saved
    res = []
    for vec in (4, 8, 16):
        for rounds in (1, 2, 4, 8):
            cix.MC_VEC, cix.MC_ROUNDS = vec, rounds
            res.append((timed(cpn, lambda: v_n[m_n]), (vec, rounds)))
    res.sort()
    for ms, cfg in res:
        line(f"  mask vec,rounds={cfg}", ms, mb)
    print(f"  -> best: MC_VEC, MC_ROUNDS = {res[0][1]}")
    cix.MC_VEC, cix.MC_ROUNDS = 16, 4
    hm = rng.random(k) < 0.01
    m_n = cpn.asarray(hm)
    m_c = cupy.asarray(hm) if cupy is not None else None
    both(f"a[mask] 2^{k.bit_length() - 1} f32 1%", lambda: v_n[m_n], lambda: v_c[m_c], k * 5)
    print(f"total {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
