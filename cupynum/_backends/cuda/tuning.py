"""Every tuning knob of the CUDA kernels, in one place: a frozen record per kernel family.

The values are the defaults the GPU measurements chose (docs/internals.md, "Measured",
says what was measured and why).  The engines read them where they decide (a launch
shape, a kernel variant), as ``tuning.GATHER.ilp``: always the record in force, never a copy.

The probes in ``benchmarks/probes/`` try other values through ``override`` (or the
``overridden`` context manager) and put the defaults back with ``reset``; nothing else
changes them.  Engines that compile or plan from a knob register ``on_change`` to drop
what they built from the old values.

Layout constants that the kernels' C++ is written around (threads per block, dims
capacities) are not knobs and stay in their modules.
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field


def _table(d):
    return field(default_factory=lambda: dict(d))


@dataclass(frozen=True)
class Elementwise:
    """elementwise.py / elementwise_source.py."""
    blocks_per_sm: int = 32  # grid cap = SMs * this: 4 waves of full-occupancy blocks
    vector_unroll: int = 1  # contiguous kernels' vector loop unroll (1: less NVRTC time)
    strided_ilp: int = 4  # elements per thread per step, 1-D branch of the strided kernels


@dataclass(frozen=True)
class Reduction:
    """reduction.py: reductions and arg-reductions (rows / cols kernels)."""
    wave: int = 8  # resident 256-thread blocks per SM (2048 threads)
    thread_rows: int = 64  # rows of at most this many elements: a thread a row (cols kernel)
    arg_fast: bool = True  # RED_ARG_FAST: contiguous arg rows track (value, vector index)
    arg_loads: int = 4  # RED_ARG_LOADS: 16-byte loads in flight per thread on that path
    arg_min_blocks: int = 0  # __launch_bounds__ min blocks of the arg rows kernels (0: none)


@dataclass(frozen=True)
class Scan:
    """reduction.py: the single-pass chained scan (scan_chain) and column scans."""
    # elements per thread of a tile, by state bytes (16 where missing; capped at 32 KiB)
    chain_items: dict = _table({4: 32, 8: 16, 16: 8})
    chain_window: int = 2  # RED_LB_P: predecessors polled per lane per look-back window
    chain_keep: int = 4  # RED_LB_NB: look-back windows kept in shared memory for the fold
    chain_sleep: int = 0  # RED_LB_SLEEP: ns between polls of an unpublished predecessor
    chain_delay: int = 0  # RED_LB_DELAY: ns between the aggregate and the first poll
    chain_transpose: bool = True  # RED_CHAIN_WT: warp-striped vector loads, transposed
    # __launch_bounds__ min blocks per SM of scan_chain by state bytes (with chain_transpose)
    chain_min_blocks: dict = _table({1: 5, 2: 5, 4: 4, 8: 4})
    col_unroll: int = 8  # RED_COL_U: loads in flight per thread of scan_blocks
    col_waves: int = 2  # scan_blocks chunks: enough for col_waves * wave blocks per SM ...
    col_min_rows: int = 64  # ... but at least this many positions a chunk
    col_min_lines: int = 32  # fewer lines: the chained scan, not scan_blocks


@dataclass(frozen=True)
class Gather:
    """indexing.py: the streaming gather ``out = data[idx]`` (gather1_kernel)."""
    streaming: bool = True  # False: every gather takes the general ix_kernel
    ilp: int = 4  # indices per thread per round, all loads issued before use
    block: int = 256  # threads per block
    blocks_per_sm: int = 0  # grid cap of the grid-stride loop (0: one round per block)
    o32: bool = True  # 32-bit source offsets when the indexed axis spans < 2 GiB
    idx_load: str = "ldg"  # index stream loads: "ldg" (ld.global.nc) or "nc_ef"
    flag_mapped: bool = True  # bounds flag also in mapped host memory (a sync reads it)
    flag_pinned: bool = True  # (not mapped) read the flag into pinned host memory
    early_signal: bool = True  # a[idx] answers its bounds check before the gather ends
    signal_min_blocks: int = 8192  # ... from this many blocks of the signal's kernel
    signal_tail_div: int = 48  # the last 1/this of the blocks are checked by the others
    signal_ilp: int = 1  # the signal kernel's ILP ...
    signal_idx_load: str = "nc_ef"  # ... and index loads


@dataclass(frozen=True)
class Compaction:
    """indexing.py: flatnonzero and a[mask] (count, scan, write)."""
    vec: int = 8  # mask bytes per thread per round: 4, 8 or 16
    rounds: int = 8  # rounds per block


@dataclass(frozen=True)
class Transpose:
    """indexing.py: the tiled transpose copy, (tile, rows, vec) per element size."""
    tiles: dict = _table({1: (64, 4, 4), 2: (64, 4, 2), 4: (64, 16, 4), 8: (32, 8, 1)})
    diagonal: bool = False  # blocks ordered along diagonals
    min_tile: int = 32  # the smallest array tiled: min_tile ** 2 elements


@dataclass(frozen=True)
class Sort:
    """sorting.py: the radix sort of our own (onesweep passes, histograms)."""
    engine: str = "cub"  # one-row sorts: "cub" (cub_sort.py) or "own" (sorting.py)
    # onesweep tile: elements per thread by the widest of (key, payload) bytes
    onesweep_items: dict = _table({1: 16, 2: 16, 4: 16, 8: 14})
    # __launch_bounds__ min blocks per SM by (widest bytes, has a payload); 0: none
    onesweep_min_blocks: dict = _table({(1, False): 0, (2, False): 0, (4, False): 0,
                                        (8, False): 0, (1, True): 3, (2, True): 3,
                                        (4, True): 3, (8, True): 3})
    onesweep_match: str = "ballot"  # warp match: "ballot" or "any"
    onesweep_lookback: int = 4  # status words read per look-back step
    onesweep_late_payload: bool = True  # payload loaded after the keys went to smem
    hist_impl: str = "vec"  # all-passes histogram: "vec" (16-byte loads) or "scalar"
    hist_vecs: int = 4  # 16-byte loads per thread per round
    hist_copies: int = 32  # private histogram copies per block (power of two, capped)
    hist_spread: str = "lane"  # which copy a thread adds to: "lane" or "warp"
    hist_runs: bool = False  # add runs of equal digits once
    hist_smem: int = 32 * 1024  # shared-memory bytes for the copies
    hist_items: int = 8  # ("scalar") elements per thread per round
    hist_blocks_per_sm: int = 4


@dataclass(frozen=True)
class CubSort:
    """cub_sort.py: CUB's onesweep agents through NVRTC."""
    onesweep: dict = _table({})  # (threads, items) by (key, payload) bytes; else CUB's SM90
    rank: str = "any"  # BlockRadixRankMatchEarlyCounts warp match: "any" or "atomic_or"
    rank_parts: int = 1  # private histograms of the ranker
    hist: tuple = (128, 16)  # histogram kernel (threads, items per thread)
    hist_blocks_per_sm: int = 16
    hist_parts: int = 1  # nominal private histograms (scaled down for 8-byte keys)


@dataclass(frozen=True)
class Solver:
    """solver.py: where stacks go to batched routines, and how systems are solved."""
    solve_augmented_max_k: int = 8  # right-hand sides riding along in the LU as columns
    batched: bool = True  # False: always loop over the stack
    batched_min_batch: int = 2  # a single matrix always takes the unbatched routine
    lu_batched_max_n: int = 64  # cuBLAS getrf/getrsBatched
    qr_batched_max_n: int = 64  # cuBLAS geqrfBatched
    cholesky_batched_max_n: int = 64  # cuSOLVER potrfBatched
    eigh_batched: str = "auto"  # "auto", "syevj", "xsyev", "loop"
    eigh_syevj_max_n: int = 32  # syevjBatched's own limit
    eigh_batched_max_n: int = 128  # XsyevBatched up to here (larger: the loop)
    svd_batched_max_n: int = 32  # gesvdjBatched's own limit


@dataclass(frozen=True)
class Random:
    """rng.py: the sampler kernels' launch shape (grid-strided loops)."""
    block: int = 256  # threads per block
    grid_per_sm: int = 16  # grid cap in blocks per SM


@dataclass(frozen=True)
class Blas:
    """blas.py and matmul_kernel.py: how products run (gemm_fft_probe times the cuBLAS
    knobs; read when a call decides, and by the handle on its next use)."""
    # "gemm_ex": cublasGemmEx / GemmStridedBatchedEx for every dtype; "typed": the typed
    # {s,d,c,z}gemm[StridedBatched] for float32/64 and complex (float16 stays on GemmEx)
    gemm_api: str = "gemm_ex"
    gemm_algo: int = -1  # cublasGemmAlgo_t of the Ex calls: -1 DEFAULT, 99 DEFAULT_TENSOR_OP
    # 0: cuBLAS's own workspace; > 0: a workspace of this many bytes from our pool, given to
    # the handle with cublasSetWorkspace (given again after every stream change)
    workspace_bytes: int = 0
    math_mode: int = 0  # cublasMath_t: 0 DEFAULT_MATH (no TF32: float32 stays float32)
    kernel_max_dim: int = 16  # float products with m, n, k all at most this: our own kernel


@dataclass(frozen=True)
class Fft:
    """fft.py: how cuFFT plans are made and kept (gemm_fft_probe, lib_gap_probe)."""
    # "many64" cufftMakePlanMany64; "many" cufftMakePlanMany (32-bit sizes, CuPy's call;
    # many64 where a size exceeds int32); "xt" cufftXtMakePlanMany (run by cufftXtExec);
    # "1d" cufftMakePlan1d for one transformed axis (else "many")
    plan_api: str = "many64"
    # "auto": cuFFT allocates the work area at plan time (outside our pool); "pool": auto
    # allocation off and a buffer from our pool, held with the plan (as CuPy does)
    work_area: str = "pool"
    plan_cache_size: int = 16  # plans kept per thread (least recently used go first)


@dataclass(frozen=True)
class Memory:
    """memory.py: the pool's size classes and the host transfers' strategy thresholds.
    (Blocks up to 1 MiB are powers of two from 512 bytes: literals of the pool's fast path,
    not knobs.)"""
    # Up to cache_max: eight size classes per doubling (at most 1/8 unused), kept in the
    # Python free lists
    cache_max: int = 64 << 20
    # Larger blocks: classes big_step apart (the driver pool's own granularity), kept too
    big_step: int = 2 << 20
    # Host copies of this many bytes or more follow CUPYNUM_H2D / CUPYNUM_D2H (None: never)
    staging_threshold: int | None = 8 << 20
    staging_chunk: int = 16 << 20  # bytes of each pinned staging buffer
    register_chunk: int = 64 << 20  # bytes page-locked at a time by the 'register' strategy
    # read_small (float(a[i, j]), a full reduction's value) copies into pinned memory
    small_read_pinned: bool = True


@dataclass(frozen=True)
class Fusion:
    """fused.py: when a fused kernel is compiled."""
    # a structure runs op by op from the precompiled table until it is seen this many times
    # (a compile costs ~35 ms: a graph flushed once is cheaper op by op)
    compile_after: int = 2


_DEFAULTS = {
    "ELEMENTWISE": Elementwise(), "REDUCTION": Reduction(), "SCAN": Scan(),
    "GATHER": Gather(), "COMPACTION": Compaction(), "TRANSPOSE": Transpose(), "SORT": Sort(),
    "CUB_SORT": CubSort(), "SOLVER": Solver(), "RANDOM": Random(), "BLAS": Blas(),
    "FFT": Fft(), "MEMORY": Memory(), "FUSION": Fusion(),
}

ELEMENTWISE = _DEFAULTS["ELEMENTWISE"]
REDUCTION = _DEFAULTS["REDUCTION"]
SCAN = _DEFAULTS["SCAN"]
GATHER = _DEFAULTS["GATHER"]
COMPACTION = _DEFAULTS["COMPACTION"]
TRANSPOSE = _DEFAULTS["TRANSPOSE"]
SORT = _DEFAULTS["SORT"]
CUB_SORT = _DEFAULTS["CUB_SORT"]
SOLVER = _DEFAULTS["SOLVER"]
RANDOM = _DEFAULTS["RANDOM"]
BLAS = _DEFAULTS["BLAS"]
FFT = _DEFAULTS["FFT"]
MEMORY = _DEFAULTS["MEMORY"]
FUSION = _DEFAULTS["FUSION"]

FAMILIES = tuple(_DEFAULTS)
_hooks: list = []


def families() -> dict:
    """{family name: the record in force}."""
    g = globals()
    return {name: g[name] for name in FAMILIES}


def override(family: str, **values):
    """Set knobs of one family (``override("GATHER", ilp=1)``); returns the record that was
    in force (pass it to ``restore``).  Unknown families or knobs raise KeyError."""
    g = globals()
    if family not in _DEFAULTS:
        raise KeyError(f"no tuning family {family!r} (one of {', '.join(FAMILIES)})")
    old = g[family]
    names = {f.name for f in dataclasses.fields(old)}
    for k in values:
        if k not in names:
            raise KeyError(f"{family} has no knob {k!r} (one of {', '.join(sorted(names))})")
    g[family] = dataclasses.replace(old, **values)
    _changed()
    return old


def restore(family: str, record) -> None:
    """Put back a record that ``override`` returned."""
    if family not in _DEFAULTS or type(record) is not type(_DEFAULTS[family]):
        raise KeyError(family)
    globals()[family] = record
    _changed()


def reset(family: str | None = None) -> None:
    """The defaults again, for one family or all."""
    for name in (FAMILIES if family is None else (family,)):
        if name not in _DEFAULTS:
            raise KeyError(name)
        globals()[name] = _DEFAULTS[name]
    _changed()


@contextlib.contextmanager
def overridden(family: str, **values):
    """``override`` for the ``with`` block only."""
    old = override(family, **values)
    try:
        yield globals()[family]
    finally:
        restore(family, old)


def on_change(hook) -> None:
    """Call ``hook()`` after every change of a knob (engines drop kernels and plans built
    from the old values)."""
    if hook not in _hooks:
        _hooks.append(hook)


def _changed() -> None:
    for hook in _hooks:
        hook()
