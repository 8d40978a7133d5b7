"""The CUDA backend's substrate, checked without a GPU: the device-view type, the tuning
table, and the import graph inside ``cupynum/_backends/cuda`` (docs/internals.md, "The CUDA
backend's substrate")."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

from cupynum._backends.cuda import tuning
from cupynum._backends.cuda.view import DeviceView, alias, c_strides, dptr, owner_of

CUDA_DIR = Path(__file__).resolve().parent.parent / "cupynum" / "_backends" / "cuda"


class _Alloc:
    """A stand-in device allocation: only its address matters here."""

    def __init__(self, ptr):
        self.ptr = ptr


# --- the device view -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (1, 1, 7), (4, 1, 2), (2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", ["?", "i2", "f4", "c16"])
def test_c_strides_are_numpys(shape, dtype):
    assert c_strides(shape, np.dtype(dtype).itemsize) == np.empty(shape, dtype).strides


@pytest.mark.parametrize("shape", [(0,), (2, 0, 3), (0, 4)])
def test_c_strides_of_zero_size_shapes_are_the_ndarrays(shape):
    """(NumPy 2 gives zero-size arrays zero strides; cupynum keeps a C layout, as its
    ndarray does.)"""
    from cupynum._array import _c_strides

    assert c_strides(shape, 8) == _c_strides(shape, 8)
    assert c_strides(shape, 8)[-1] == 8


def test_view_fields_and_address():
    owner = _Alloc(0x10000)
    v = DeviceView(owner, (3, 4), np.float32, offset=24)
    assert (v.shape, v.strides, v.dtype) == ((3, 4), (16, 4), np.float32)
    assert v.owner.device is owner  # a raw allocation is held as a Buffer's device copy
    assert v._size == 12 and v.nbytes == 48
    assert v._c_contig and not v._f_contig
    assert v.ptr == dptr(v) == 0x10000 + 24
    owner.ptr = 0x20000  # the address is read from the allocation, never copied
    assert dptr(v) == 0x20000 + 24


def test_view_contiguity():
    owner = _Alloc(0)
    f = DeviceView(owner, (3, 4), "f8", strides=(8, 24))  # column-major
    assert not f._c_contig
    assert DeviceView(owner, (3, 4), "f8", strides=(32, 8))._c_contig  # C order, given
    assert DeviceView(owner, (1, 1), "f8", strides=(0, 0))._c_contig  # one element
    assert DeviceView(owner, (2, 0), "f8", strides=(0, 0))._c_contig  # no element
    assert not DeviceView(owner, (4,), "f8", strides=(0,))._c_contig  # broadcast
    assert not DeviceView(owner, (4,), "f8", strides=(-8,))._c_contig  # reversed


def test_aliases_keep_the_owner_and_add_offsets():
    owner = _Alloc(0x1000)
    base = DeviceView(owner, (6, 4), np.int32, offset=16)
    col = base.alias((6,), strides=(16,), offset=8)  # column 2
    assert owner_of(col) is owner_of(base) and owner_of(col).device is owner
    assert col.dtype == np.int32
    assert col.ptr == 0x1000 + 16 + 8 and col.strides == (16,) and not col._c_contig
    units = alias(base, (6, 4, 2), np.uint16, (16, 4, 2))  # int32 as two uint16 units
    assert units.ptr == base.ptr and units._size == 48 and units.dtype == np.uint16
    same = DeviceView.of(base)
    assert (same.ptr, same.shape, same.strides, same.dtype) == (base.ptr, base.shape,
                                                                 base.strides, base.dtype)
    assert owner_of(same) is owner_of(base)


def test_a_view_over_a_placement_buffer_keeps_that_buffer():
    """A new array's Buffer under placement is a Buffer subclass (``Unallocated``): a view
    over it must read that Buffer, not wrap it as if it were a raw device allocation."""
    from cupynum._backends import placement

    buf = placement.Unallocated(64)
    view = DeviceView(buf, (8,), np.float64)
    assert owner_of(view) is buf
    buf.device = _Alloc(0x2000)  # (what allocating it on the device does)
    assert alias(view, (16,), np.uint32, (4,)).ptr == 0x2000


# --- the tuning table ------------------------------------------------------------------------

def test_every_family_is_a_frozen_record_with_defaults():
    fams = tuning.families()
    assert set(fams) == set(tuning.FAMILIES)
    for name, rec in fams.items():
        assert dataclasses.is_dataclass(rec)
        field = dataclasses.fields(rec)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(rec, field, getattr(rec, field))


def test_override_restore_reset():
    seen = []

    def hook():
        seen.append(tuning.GATHER.ilp)

    tuning.on_change(hook)
    default = tuning.GATHER
    try:
        old = tuning.override("GATHER", ilp=1, block=128)
        assert old is default
        assert (tuning.GATHER.ilp, tuning.GATHER.block) == (1, 128)
        assert tuning.GATHER.o32 == default.o32  # the other knobs keep their values
        tuning.restore("GATHER", old)
        assert tuning.GATHER is default
        with tuning.overridden("GATHER", ilp=8) as rec:
            assert rec.ilp == 8 == tuning.GATHER.ilp
        assert tuning.GATHER is default
        tuning.override("SCAN", chain_items=2)
        tuning.override("GATHER", ilp=2)
        tuning.reset()
        assert tuning.SCAN.chain_items == {4: 32, 8: 16, 16: 8}
        assert tuning.GATHER is default
        assert seen[:4] == [1, 4, 8, 4] and seen[-1] == 4  # the hook saw every change
    finally:
        tuning._hooks.remove(hook)
        tuning.reset()


def test_override_refuses_unknown_names():
    with pytest.raises(KeyError, match="no tuning family"):
        tuning.override("GATHERS", ilp=1)
    with pytest.raises(KeyError, match="no knob 'ILP'"):
        tuning.override("GATHER", ILP=1)
    assert tuning.GATHER == tuning.Gather()


def _sources():
    return {p.stem: p.read_text() for p in CUDA_DIR.glob("*.py")}


def test_every_knob_is_read_by_an_engine():
    """Each field of each family is read outside tuning.py (a knob nobody reads is dead)."""
    texts = "\n".join(t for name, t in _sources().items() if name != "tuning")
    for fam, rec in tuning.families().items():
        assert f"tuning.{fam}" in texts, fam
        for f in dataclasses.fields(rec):
            assert f".{f.name}" in texts, f"{fam}.{f.name} is never read"


OLD_KNOBS = {  # the module globals the knobs were; none may come back
    "indexing": ["GATHER_ILP", "GATHER_BLOCK", "GATHER_STREAMING", "GATHER_EARLY_SIGNAL",
                 "GATHER_VARIANTS", "MC_VEC", "MC_ROUNDS", "TRANSPOSE", "TILE"],
    "reduction": ["CHAIN", "CHAIN_ITEMS", "CHAIN_PERSIST", "CHAIN_GROUP", "COLS", "WAVE",
                  "ARG_FAST", "configure"],
    "sorting": ["SORT_ENGINE", "OS_ITEMS", "HIST_IMPL"],
    "cub_sort": ["ONESWEEP", "RANK", "HIST"],
    "solver": ["BATCHED", "SOLVE_AUGMENTED_MAX_K", "EIGH_BATCHED"],
    "rng": ["GRID_PER_SM"],
    "elementwise": ["BLOCKS_PER_SM"],
    "elementwise_source": ["STRIDED_ILP", "VECTOR_UNROLL"],
    "blas": ["GEMM_API", "GEMM_ALGO", "GEMM_WORKSPACE_BYTES", "MATH_MODE"],
    "matmul_kernel": ["SMALL"],
    "fft": ["PLAN_API", "WORK_AREA", "PLAN_CACHE_SIZE"],
    "memory": ["CACHE_MAX", "BIG_STEP", "STAGING_THRESHOLD", "STAGING_CHUNK", "REGISTER_CHUNK"],
}


@pytest.mark.parametrize("module", sorted(OLD_KNOBS))
def test_knobs_live_only_in_tuning(module):
    mod = importlib.import_module(f"cupynum._backends.cuda.{module}")
    assert [k for k in OLD_KNOBS[module] if hasattr(mod, k)] == []


# --- imports and library signatures ------------------------------------------------------------

def _import_graph():
    """module -> the sibling modules it imports, at module level or inside functions."""
    graph = {}
    for name, text in _sources().items():
        deps = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
        graph[name] = deps & set(_sources())
    return graph


def test_no_import_circle_in_the_cuda_backend():
    graph = _import_graph()
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        if state.get(m) == "open":
            raise AssertionError("import circle: " + " -> ".join(path + [m]))
        state[m] = "open"
        for d in sorted(graph[m]):
            visit(d, path + [m])
        state[m] = "done"

    for m in sorted(graph):
        visit(m, [])
    assert "backend" not in set().union(*(d for m, d in graph.items() if m != "backend"))


@pytest.mark.parametrize("func", ["blas.matmul", "blas.colmajor_copy", "matmul_kernel.matmul",
                                  "solver.solve", "solver.lu_diagonal", "solver.cholesky",
                                  "solver.qr", "solver.svd", "solver.eigh", "solver.eig",
                                  "fft.fft"])
def test_libraries_take_views_not_the_backend(func):
    mod, name = func.split(".")
    f = getattr(importlib.import_module(f"cupynum._backends.cuda.{mod}"), name)
    assert "backend" not in inspect.signature(f).parameters
