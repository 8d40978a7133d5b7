"""The elementwise engine without a GPU: every default-set kernel compiles with NVRTC (each
table op's type loops, contiguous + strided; casts, copies, fills), each kernel's parameters
have the sizes the launchers pack (read back from the cubin), ``collapse`` keeps the
iteration space, and generated sources look right.  Only a missing NVRTC skips anything.

Compiles go through the kernel cache, in the same batch programs as ``python -m cupynum
precompile``, so after CI's precompile step this file only reads the cache.
"""
from __future__ import annotations

import itertools
import random
import struct

import numpy as np
import pytest

from cupynum import _ops
from cupynum._backends.base import ElementwiseOp
from cupynum._backends.cuda import elementwise as ew
from helpers import needs_nvrtc


GROUPS = list(ew.default_groups())


def _gid(group):
    return "-".join(str(g) for g in group).replace("True", "complex").replace("False", "real")


def _compile(src):
    from cupynum._backends.cuda import compiler

    return compiler.compile_cubin(src, options=ew.compile_options(), name=ew.PROGRAM_NAME).cubin


# --- kernel parameters as the cubin declares them ------------------------------------------


def _sections(blob: bytes) -> dict:
    """name -> bytes of every section of a 64-bit little-endian ELF (a cubin)."""
    assert blob[:4] == b"\x7fELF" and blob[4] == 2
    (shoff,) = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    return {blob[names + h[0]: blob.index(b"\0", names + h[0])].decode(): blob[h[4]: h[4] + h[5]]
            for h in heads}


def param_sizes(cubin: bytes, kernel: str) -> list[int]:
    """Byte size of each parameter of ``kernel``, from its ``.nv.info.<kernel>`` section
    (EIATTR_KPARAM_INFO records: ordinal, offset, size in bits 18..31 of the flags word).
    The driver copies exactly this many bytes from each ``kernelParams[i]``."""
    info = _sections(cubin)[".nv.info." + kernel]
    pos, params = 0, {}
    while pos < len(info):
        fmt, attr = info[pos], info[pos + 1]
        if fmt == 4:  # EIFMT_SVAL: u16 length, payload
            (size,) = struct.unpack_from("<H", info, pos + 2)
            payload, pos = info[pos + 4: pos + 4 + size], pos + 4 + size
        else:  # EIFMT_NVAL (2 bytes), EIFMT_BVAL, EIFMT_HVAL (4 bytes)
            payload, pos = b"", pos + (2 if fmt == 1 else 4)
        if attr == 0x17:  # EIATTR_KPARAM_INFO
            _, ordinal, _, flags = struct.unpack_from("<IHHI", payload)
            params[ordinal] = (flags >> 18) & 0x3FFF
    return [params[i] for i in sorted(params)]


def _expected_sizes(spec) -> list[int]:
    return [dt.itemsize for dt in ew._param_layout(spec)[0]]


# --- the whole default set ----------------------------------------------------------------


@needs_nvrtc
@pytest.mark.parametrize("group", GROUPS, ids=_gid)
def test_default_program_compiles(group):
    specs = ew.group_specs(group)
    assert specs
    cubin = _compile(ew._group_source(group))
    for spec in specs:
        name = ew.kernel_name(spec)
        assert param_sizes(cubin, name) == _expected_sizes(spec), name


def test_default_set_covers_every_table_loop():
    for row in _ops.UFUNCS:
        names = {ew.kernel_name(s) for g in GROUPS if g[:2] == ("ufunc", row.functor)
                 for s in ew.group_specs(g)}
        for lp in _ops.type_loops(row.name):
            op = ElementwiseOp(row.name, row.functor, tuple(ew.canonical_char(c) for c in lp),
                               getattr(np, row.name).nin)
            for spec in ew._pair(ew.op_exprs(op), tuple(("a", c) for c in op.loop), op.nin):
                assert ew.kernel_name(spec) in names, (row.name, lp)
                assert ew.default_group(spec) == ("ufunc", row.functor, spec.operands[0][1] in "FD"
                                                  or any(c in "FD" for c in op.loop))
    chars = ew._all_chars()
    for s, d in itertools.product(chars, chars):
        spec = ew.KernelSpec(ew.COPY, (("a", s), ("a", d)), 1, "contig")
        if s != d:
            assert ew.default_group(spec) == ("cast", s, s in "FD" or d in "FD")
    for c in "BHILD":  # fills write bit patterns: unsigned units, and complex128
        fill = ew.KernelSpec(ew.COPY, (("s", c), ("a", c)), 1, "strided", ew.DEFAULT_MAXD)
        assert ew.default_group(fill) == ("fill", c == "D")


def test_default_groups_are_consistent():
    seen = set()
    for g in GROUPS:
        for spec in ew.group_specs(g):
            assert ew.default_group(spec) == g
            name = ew.kernel_name(spec)
            assert name not in seen, name
            seen.add(name)
    # variants outside the default set compile on demand, alone
    op = ElementwiseOp("add", "add", ("f", "f", "f"), 2)
    for spec in (ew.KernelSpec(ew.op_exprs(op), (("a", "f"), ("s", "f"), ("a", "f")), 2),
                 ew.KernelSpec(ew.op_exprs(op), (("a", "f"),) * 3, 2, "strided", 8),
                 ew.KernelSpec(ew.op_exprs(op), (("a", "f"),) * 3, 2, "strided", 4, True)):
        assert ew.default_group(spec) is None


# --- collapse ----------------------------------------------------------------------------


def _offsets(shape, strides_per_operand):
    """Sorted rows of (offset in operand 0, offset in operand 1, ...) over all elements."""
    idx = np.indices(shape).reshape(len(shape), -1).T if shape else np.zeros((1, 0), np.int64)
    rows = np.stack([idx @ np.asarray(st, np.int64).reshape(-1) if shape else np.zeros(1, np.int64)
                     for st in strides_per_operand], axis=1)
    return rows[np.lexsort(rows.T[::-1])]


@pytest.mark.parametrize("shape, strides, want", [
    ((2, 3, 4), [(48, 16, 4), (48, 16, 4)], ((24,), ((4,), (4,)))),  # C-contiguous
    ((2, 3, 4), [(4, 8, 24), (4, 8, 24)], ((24,), ((4,), (4,)))),  # F-contiguous: reordered
    ((3, 4), [(16, 4), (4, 12)], ((3, 4), ((16, 4), (4, 12)))),  # a + b.T: stays 2-D
    ((3, 1, 4), [(16, 99, 4), (0, 0, 4)], ((3, 4), ((16, 4), (0, 4)))),  # row broadcast
    ((3, 4), [(16, 4), (0, 0)], ((12,), ((4,), (0,)))),  # 0-d operand broadcast
    ((5,), [(-4,), (4,)], ((5,), ((-4,), (4,)))),  # reversed view
    ((1, 1), [(8, 8), (4, 4)], ((), ((), ()))),  # one element
    ((), [(), ()], ((), ((), ()))),
    ((3, 0, 2), [(0, 8, 4), (8, 8, 4)], ((0,), ((0,), (0,)))),
    ((4, 6), [(48, 8), (24, 4)], ((24,), ((8,), (4,)))),  # float64 and float32, both C
    ((4, 6), [(96, 8), (24, 4)], ((4, 6), ((96, 8), (24, 4)))),  # a[:, ::2]-like rows
])
def test_collapse_cases(shape, strides, want):
    assert ew.collapse(shape, strides) == want


def test_collapse_keeps_every_element():
    rng = random.Random(1234)
    for _ in range(300):
        ndim = rng.randint(1, 4)
        shape = tuple(rng.choice([1, 2, 3, 4]) for _ in range(ndim))
        ops = []
        for _ in range(rng.randint(1, 3)):
            base = np.empty(tuple(2 * s for s in shape), np.float32)
            sl = tuple(slice(None, None, rng.choice([1, 2, -1])) for _ in shape)
            v = base[sl]
            v = v[tuple(slice(0, s) for s in shape)]
            if rng.random() < 0.4:
                v = np.ascontiguousarray(v.T).T  # an F-ordered operand
            st = list(v.strides)
            if rng.random() < 0.3:
                st[rng.randrange(ndim)] = 0  # broadcast along one axis
            ops.append(tuple(st))
        cshape, cstrides = ew.collapse(shape, ops)
        assert np.prod(cshape, dtype=np.int64) == np.prod(shape, dtype=np.int64)
        assert len(cshape) <= len([d for d in shape if d != 1])
        np.testing.assert_array_equal(_offsets(cshape, cstrides), _offsets(shape, ops))


def test_collapse_f_order_and_transposes_become_contiguous():
    a = np.empty((5, 6, 7), np.float64, order="F")
    t = np.empty((7, 6, 5)).transpose(2, 1, 0)  # same layout as a
    assert ew.collapse(a.shape, [a.strides, t.strides]) == ((210,), ((8,), (8,)))


def test_index_width_choice():
    assert ew._fits32(2**31 - 1, (2**31 - 1,), [(1,)])
    assert not ew._fits32(2**31, (2**31,), [(1,)])
    assert not ew._fits32(1000, (10, 100), [(2**28, 4)])  # byte extent > 2**31
    assert ew._fits32(1000, (10, 100), [(-400, -4)])
    assert [ew._maxd(n) for n in (1, 4, 5, 8, 9, 33)] == [4, 4, 8, 8, 16, 64]


# --- generated source --------------------------------------------------------------------

ADD_F = ElementwiseOp("add", "add", ("f", "f", "f"), 2)


def test_source_of_a_contiguous_add():
    spec = ew.KernelSpec(ew.op_exprs(ADD_F), (("a", "f"),) * 3, 2)
    src = ew.program_source([spec])
    assert "cpn::add{}(x0, x1)" in src
    assert "cpn_ew::vec<float, 4>" in src  # 16-byte vectors
    assert '#include "cpn/real.cuh"' in src and "complex.cuh" not in src
    assert ew.kernel_name(spec) == "cpn_add_f4f4f4__af4af4af4__c"
    assert ew.vector_width(spec) == 4


def test_source_types_and_casts():
    # an int32 array into a float16 loop: int -> half (NumPy casts the operand first) ->
    # float (compute), result rounded to half, stored as float32 (the output's dtype)
    op = ElementwiseOp("add", "add", ("e", "e", "e"), 2)
    spec = ew.KernelSpec(ew.op_exprs(op), (("a", "i"), ("s", "e"), ("a", "f")), 2)
    src = ew.kernel_source(spec)
    assert "cpn::cast<float>(cpn::cast<cpn::half>(x0))" in src
    assert "const cpn::half p1" in src  # float16 scalar by value
    assert "cpn::cast<float>(t0)" in src and "cpn::cast<cpn::half>(cpn::add{}" in src
    assert ew.vector_width(spec) == 4  # the widest operand (4 bytes) moves 16 bytes


@needs_nvrtc
def test_generated_kernels_compile_and_match_their_launchers():
    divmod_d = ElementwiseOp("divmod", "divmod", ("d", "d", "d", "d"), 2)
    fma = ew.Node(ADD_F, (ew.Node(ElementwiseOp("multiply", "multiply", ("f",) * 3, 2),
                                  (ew.Input(0), ew.Input(1))), ew.Input(2)))
    specs = [
        ew.KernelSpec(ew.op_exprs(ADD_F), (("a", "f"), ("s", "f"), ("a", "f")), 2),
        ew.KernelSpec(ew.op_exprs(ADD_F), (("b", "f"), ("a", "e"), ("a", "d")), 2),
        ew.KernelSpec(ew.op_exprs(ADD_F), (("a", "f"), ("s", "f"), ("a", "f")), 2, "strided", 8,
                      True),
        ew.KernelSpec(ew.op_exprs(divmod_d), (("a", "d"), ("a", "l"), ("a", "d"), ("a", "d")), 2),
        ew.KernelSpec(ew.op_exprs(divmod_d), (("a", "d"),) * 4, 2, "strided", 4),
        ew.KernelSpec((fma,), (("a", "f"), ("a", "f"), ("s", "f"), ("a", "f")), 3),
        ew.KernelSpec(ew.COPY, (("s", "?"), ("a", "?")), 1),
        ew.KernelSpec(ew.COPY, (("a", "b"), ("a", "e")), 1, "strided", 16),
    ]
    src = ew.program_source(specs)
    assert src.count("cpn::divmod{}(") == 3  # contiguous: vector + scalar loop; strided
    assert "cpn::multiply{}(x0, x1)" in src and "cpn_fused_" in ew.kernel_name(specs[5])
    cubin = _compile(src)
    for spec in specs:
        assert param_sizes(cubin, ew.kernel_name(spec)) == _expected_sizes(spec)


def test_param_block_packing():
    """Pack a strided launch's parameters and read each slot back through NumPy."""
    op = ElementwiseOp("add", "add", ("F", "F", "F"), 2)
    spec = ew.KernelSpec(ew.op_exprs(op), (("a", "F"), ("s", "F"), ("a", "F")), 2, "strided", 4)
    pb, pack = ew.param_block(spec)
    z = np.complex64(1.5 - 2.25j)
    dims = [7, 3, 0, 0] + [8, 56, 0, 0] + [-8, 168, 0, 0]
    pack(pb._data, 0, 0x1000, z.real, z.imag, 0x2000, *dims, 21, 2)
    got = [v[0] for v in pb.views]
    assert got[0] == 0x1000 and got[1] == z and got[2] == 0x2000
    assert list(got[3].view(np.uint32)[:4]) == [7, 3, 0, 0]
    assert list(got[3].view(np.int32)[4:]) == dims[4:]
    assert got[4] == 21 and got[5] == 2
    spec16 = ew.KernelSpec(ew.COPY, (("s", "e"), ("a", "e")), 1)
    pb, pack = ew.param_block(spec16)
    pack(pb._data, 0, np.float16(-0.1), 0xABC, 5)
    assert pb.views[0][0] == np.float16(-0.1) and pb.views[1][0] == 0xABC
    assert pb.views[2][0] == 5
