"""Gather, boolean compress and transpose: correctness against NumPy, then cupynum vs CuPy
timings and every kernel variant of cupynum/_backends/cuda/indexing.py, in one run.

    CUPYNUM_BACKEND=cuda PYTHONPATH=. python benchmarks/probes/index_probe.py [--reps 20]
        [--skip-check] [--shrink S] [--only-gather]   (S: sizes / 4**S, for a smoke run)
        [--sweep flag_mapped,ilp] [--cases f4:28:26]   (narrow the gather timings)

The gather section checks every knob variant against NumPy (values, negative indices,
IndexError), then per case (f32/f64; 2^26 of 2^26, 2^26 of 2^28, 2^28 of 2^28) times CuPy's
a[idx] and take, cupynum's a[idx], the kernel without the bounds check and without the flag
read, with the check but no read, the flag read alone, each knob changed alone from the
defaults, the combination of the knobs that won, and the L2 fetch granularity at 32 B.

Times are CUDA-event medians (ms) over --reps calls after warm-up, each library timed on
its own current stream with its own events; a call that syncs inside (cupynum's bounds-flag
read, the mask count read) is timed including that sync.  GB/s counts the bytes a perfect
kernel moves (for the gather: index read + result write + one 32-byte sector per random
read).  Variant lines set tuning's knobs (or pass a transpose config) and time
cupynum only; 'base' marks the configuration before this change.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

# this folder, for _probe_util: importing it puts the repository root on sys.path
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _probe_util import event_median_ms, import_cupy  # noqa: E402

import cupynum as cpn  # noqa: E402
from cupynum import _backends  # noqa: E402
from cupynum._backends.cuda import indexing as cix  # noqa: E402
from cupynum._backends.cuda import tuning  # noqa: E402

cupy = import_cupy(need_device=True)

REPS = 20
T0 = time.perf_counter()


def timed(lib, fn, reps=None, warm=2):
    """CUDA-event median ms of fn on lib's current stream; the warm-up waits for CuPy's null
    stream or cupynum's current stream only (not the whole device)."""
    if lib is cupy:
        sync = lambda: cupy.cuda.Stream.null.synchronize()  # noqa: E731
    else:
        sync = lambda: _backends.get().synchronize()  # noqa: E731
    return event_median_ms(lib, fn, reps or REPS, warm, sync=sync)


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
            tuning.override("GATHER", ilp=ilp, blocks_per_sm=cap)
            ok &= check(f"gather {dt.__name__} ilp{ilp} cap{cap}", d[cpn.asarray(ix)], a[ix])
        tuning.reset("GATHER")
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
                    tuning.override("COMPACTION", vec=vec, rounds=rounds)
                    ok &= check(f"mask {dt.__name__} p{p} v{vec} r{rounds}", d[cpn.asarray(m)],
                                a[m])
            ok &= check(f"flatnonzero p{p}", cpn.flatnonzero(cpn.asarray(m)), np.flatnonzero(m))
            tuning.reset("COMPACTION")
    raw = rng.integers(0, 256, 100_001, dtype=np.uint8)
    ok &= check("flatnonzero non-0/1 bool bytes",
                cpn.flatnonzero(cpn.asarray(raw).view(np.bool_)), np.flatnonzero(raw))
    print(f"correctness: {'ALL OK' if ok else 'FAILURES ABOVE'}  ({time.perf_counter() - T0:.1f} s)")
    return ok


# --- gather ----------------------------------------------------------------------------------
# The defaults of the gather knobs, and the variants timed one at a time from them.
# (tuning.GATHER's fields; the defaults are tuning's)
GATHER_SWEEP = {
    "ilp": (1, 2, 8),
    "block": (128, 512, 1024),
    "blocks_per_sm": (4, 8, 16, 32),
    "o32": (False,),
    "idx_load": ("nc_ef",),
    "flag_mapped": (False,),
    "flag_pinned": (False,),
}
# --sweep knob,knob (tuning.GATHER field names) and --cases f4:28:26,... narrow the timed part
SWEEP_ONLY: list = []
CASES_ONLY: list = []


def set_gather_knobs(knobs=None):
    """The defaults, then ``knobs`` (tuning.GATHER fields)."""
    mapped = tuning.GATHER.flag_mapped
    tuning.reset("GATHER")
    tuning.override("GATHER", **(knobs or {}))
    if tuning.GATHER.flag_mapped != mapped:
        cix._FLAG.buf = None  # a new flag, with (or without) its mapped host copy


def knob_label(knobs):
    return " ".join(f"{kn}={v}" for kn, v in knobs.items()) or "defaults"


def gather_correctness(rng):
    """Every sweep variant (and the best-of combination's ingredients) against NumPy:
    values, negative indices, and IndexError for out-of-range ones (also those whose low
    32 bits alone would be in range)."""
    ok = True
    variants = [{}] + [{kn: v} for kn, vals in GATHER_SWEEP.items() for v in vals
                       if not SWEEP_ONLY or kn in SWEEP_ONLY]
    variants.append({"idx_load": "nc_ef", "blocks_per_sm": 8})
    n = 100_003
    ix = rng.integers(-n, n, 300_001)
    ix[:4] = [0, n - 1, -1, -n]
    i_d = cpn.asarray(ix)
    for dt in (np.float32, np.float64, np.int8, np.complex128):
        a = (rng.standard_normal(n) * 100).astype(dt)
        d = cpn.asarray(a)
        for knobs in variants:
            label = f"gather {np.dtype(dt).name} {knob_label(knobs)}"
            try:
                set_gather_knobs(knobs)
                good = check(label, d[i_d], a[ix])
                good &= check(label + " strided", d[::-2][cpn.asarray(ix // 2)], a[::-2][ix // 2])
                for bad in (n, -n - 1, 2**32, 2**32 + 5, -2**32 + 5, 2**40, -2**63):
                    b = ix.copy()
                    b[-5] = bad
                    if not raises_index_error(lambda: d[cpn.asarray(b)]):
                        print(f"MISMATCH {label}: index {bad} did not raise IndexError")
                        good = False
                good &= check(label + " after error", d[i_d], a[ix])
            except Exception as e:  # noqa: BLE001
                print(f"ERROR {label}: {type(e).__name__}: {e}")
                good = False
            print(f"{'PASS' if good else 'FAIL'} {label}")
            ok &= good
    set_gather_knobs()
    return ok


def l2_fetch_granularity(value=None):
    """The context's L2 fetch granularity limit (bytes); set it when ``value`` is given.
    It applies to every kernel of the context (CuPy's too: same primary context)."""
    from cuda.bindings import driver as drv

    lim = drv.CUlimit.CU_LIMIT_MAX_L2_FETCH_GRANULARITY
    if value is not None:
        (err,) = drv.cuCtxSetLimit(lim, value)
        assert not int(err), err
    err, v = drv.cuCtxGetLimit(lim)
    return int(v)


def gather_case(dt, n, k, rng):
    """``a[idx]``: ``k`` random int64 indices into ``n`` elements of ``dt``."""
    name = f"a[idx] 2^{k.bit_length() - 1} of 2^{n.bit_length() - 1} {np.dtype(dt).name}"
    print(name)
    h = rng.standard_normal(n).astype(dt)
    hi = rng.integers(0, n, k)
    a_n, i_n = cpn.asarray(h), cpn.asarray(hi)
    a_c, i_c = (cupy.asarray(h), cupy.asarray(hi)) if cupy is not None else (None, None)
    gb = k * (8 + np.dtype(dt).itemsize + 32)
    if not np.array_equal(a_n[i_n][-1000:].get(), h[hi[-1000:]]):
        print(f"FAIL {name}: values")
    ref = None
    if cupy is not None:
        ref = timed(cupy, lambda: a_c[i_c])
        line("  cupy a[idx]", ref, gb)
        line("  cupy.take(a, idx)", timed(cupy, lambda: cupy.take(a_c, i_c)), gb)
    out = cpn.empty(k, dt)
    size = np.dtype(dt).itemsize
    flag = cix._FLAG.get().ptr

    def no_check():
        cix._launch_gather1(False, size, a_n, out, i_n, k, n, size, flag)

    def check_no_read():
        cix._launch_gather1(True, size, a_n, out, i_n, k, n, size, flag)

    base = timed(cpn, lambda: a_n[i_n])
    line("  cupynum a[idx] (defaults)", base, gb, ref)
    line("  - no check, no flag read", timed(cpn, no_check), gb, ref)
    line("  - check, no flag read", timed(cpn, check_no_read), gb, ref)
    line("  - flag read alone (idle stream)", timed(cpn, cix._FLAG.read), 0)
    tuning.override("GATHER", streaming=False)
    line("  - generic ix_kernel (checked)", timed(cpn, lambda: a_n[i_n]), gb, ref)
    tuning.override("GATHER", streaming=True)
    best = {}
    for kn, vals in GATHER_SWEEP.items():
        if SWEEP_ONLY and kn not in SWEEP_ONLY:
            continue
        for v in vals:
            set_gather_knobs({kn: v})
            try:
                ms = timed(cpn, lambda: a_n[i_n])
            except Exception as e:  # noqa: BLE001
                print(f"  ERROR {kn}={v}: {type(e).__name__}: {e}")
                continue
            line(f"  {knob_label({kn: v})}", ms, gb, ref)
            if ms < best.get(kn, (base, None))[0] * 0.995:  # a clear gain over the defaults
                best[kn] = (ms, v)
    combo = {kn: v for kn, (ms, v) in best.items()}
    set_gather_knobs(combo)
    try:
        if check(f"gather combined {name}", a_n[i_n], h[hi]):
            line(f"  combined: {knob_label(combo)}", timed(cpn, lambda: a_n[i_n]), gb, ref)
    except Exception as e:  # noqa: BLE001
        print(f"  ERROR combined {knob_label(combo)}: {type(e).__name__}: {e}")
    set_gather_knobs()
    try:
        old = l2_fetch_granularity()
        l2_fetch_granularity(32)
        if cupy is not None:
            line(f"  L2 fetch 32 B (was {old}): cupy a[idx]", timed(cupy, lambda: a_c[i_c]), gb)
        line(f"  L2 fetch 32 B (was {old}): cupynum", timed(cpn, lambda: a_n[i_n]), gb, ref)
        l2_fetch_granularity(old)
    except Exception as e:  # noqa: BLE001
        print(f"  L2 fetch granularity: skipped ({type(e).__name__}: {e})")
    return combo


def gather_section(sh, rng):
    print(f"gather knob defaults: {tuning.GATHER}")
    combos = []
    for dt in (np.float32, np.float64):
        for n, k in ((2**26, 2**26), (2**28, 2**26), (2**28, 2**28)):
            tag = f"f{np.dtype(dt).itemsize}:{n.bit_length() - 1}:{k.bit_length() - 1}"
            if CASES_ONLY and tag not in CASES_ONLY:
                continue
            combos.append(gather_case(dt, n >> (2 * sh), k >> (2 * sh), rng))
    votes = {}
    for c in combos:
        for kn, v in c.items():
            votes[(kn, v)] = votes.get((kn, v), 0) + 1
    print("  -> gains over the defaults (knob=value: cases of %d): " % len(combos)
          + (", ".join(f"{kn}={v!r}: {c}" for (kn, v), c in sorted(votes.items())) or "none"))


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
    ap.add_argument("--only-gather", action="store_true", help="the gather checks and timings")
    ap.add_argument("--sweep", default="", help="gather knobs to sweep, e.g. flag_mapped,ilp")
    ap.add_argument("--cases", default="", help="gather cases, e.g. f4:28:26 (dtype size, "
                    "log2 of the source and index lengths)")
    args = ap.parse_args()
    REPS = args.reps
    SWEEP_ONLY[:] = [k for k in args.sweep.split(",") if k]
    CASES_ONLY[:] = [k for k in args.cases.split(",") if k]
    sh = args.shrink
    b = _backends.get()
    print(f"backend {_backends.name()}; cupy {cupy.__version__ if cupy else '-'}")
    if not hasattr(b, "mask_select"):
        print("note: backend has no mask_select (cuda/backend.py): patched in for this run")
        type(b).mask_select = lambda self, src, mask: cix.mask_select(src, mask)
    if not args.skip_check:
        if not args.only_gather:
            correctness()
        ok = gather_correctness(np.random.default_rng(2))
        print(f"gather correctness: {'ALL OK' if ok else 'FAILURES ABOVE'}"
              f"  ({time.perf_counter() - T0:.1f} s)")
    rng = np.random.default_rng(0)
    if args.only_gather:
        gather_section(sh, rng)
        print(f"total {time.perf_counter() - T0:.1f} s")
        return

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
        print(f"  -> best {np.dtype(dt).name}: tiles[{size}] = {res[0][1][:3]}, "
              f"diagonal = {res[0][1][3]}  (current default {tuning.TRANSPOSE.tiles[size]})")
        del m_n, m_c, out

    # gather: the knob sweep and the cost of the bounds check and of its sync
    k = 2**26 >> (2 * sh)
    gather_section(sh, rng)

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
            tuning.override("COMPACTION", vec=vec, rounds=rounds)
            res.append((timed(cpn, lambda: v_n[m_n]), (vec, rounds)))
    res.sort()
    for ms, cfg in res:
        line(f"  mask vec,rounds={cfg}", ms, mb)
    print(f"  -> best: COMPACTION vec, rounds = {res[0][1]}")
    tuning.reset("COMPACTION")
    hm = rng.random(k) < 0.01
    m_n = cpn.asarray(hm)
    m_c = cupy.asarray(hm) if cupy is not None else None
    both(f"a[mask] 2^{k.bit_length() - 1} f32 1%", lambda: v_n[m_n], lambda: v_c[m_c], k * 5)
    print(f"total {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
