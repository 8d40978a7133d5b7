"""Dask arrays of cupynum chunks: each result equals NumPy's on the same data and comes back
as a cupynum array; sizes, serialisation and the array backend entry point work as Dask
needs them (cupynum/_dask.py)."""
import sys
import types

import numpy
import pytest

import cupynum

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from cupynum import _dask  # noqa: E402

rng = numpy.random.default_rng(7)
VEC = rng.standard_normal(120)
MAT = rng.standard_normal((24, 16))
SQ = rng.standard_normal((16, 16))


CASES = {
    "sum": lambda x, m, s, xp: x.sum(),
    "mean axis 0": lambda x, m, s, xp: m.mean(axis=0),
    "var": lambda x, m, s, xp: x.var(),
    "argmax": lambda x, m, s, xp: x.argmax(),
    "nansum": lambda x, m, s, xp: da.nansum(x),
    "nanmax": lambda x, m, s, xp: da.nanmax(m, axis=1),
    "elementwise": lambda x, m, s, xp: x * 2.0 + 1.0,
    "ufunc through numpy": lambda x, m, s, xp: numpy.sin(x),
    "ufunc through the library": lambda x, m, s, xp: xp.sin(x),
    "matmul": lambda x, m, s, xp: m @ s,
    "tensordot": lambda x, m, s, xp: da.tensordot(m, s, axes=1),
    "map_blocks": lambda x, m, s, xp: x.map_blocks(lambda b: b * b),
    "rechunk": lambda x, m, s, xp: m.rechunk((5, 7)),
    "concatenate": lambda x, m, s, xp: da.concatenate([x, x[::-1]]),
    "stack": lambda x, m, s, xp: da.stack([x, x + 1], axis=1),
    "slicing": lambda x, m, s, xp: m[3:17:2, ::-3],
    "boolean mask": lambda x, m, s, xp: x[x > 0.1],
    "fft along an unchunked axis": lambda x, m, s, xp: da.fft.fft(m.rechunk((6, 16)), axis=1),
    "tsqr": lambda x, m, s, xp: abs(da.linalg.tsqr(m.rechunk((8, 16)))[1]),
}


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_operations_match_numpy(case, scheduler):
    fn = CASES[case]
    chunks = {"x": 25, "m": (8, 6), "s": (8, 8)}
    ref_args = [da.from_array(a, chunks=chunks[k]) for k, a in (("x", VEC), ("m", MAT), ("s", SQ))]
    got_args = [da.from_array(cupynum.asarray(a), chunks=chunks[k])
                for k, a in (("x", VEC), ("m", MAT), ("s", SQ))]
    want = fn(*ref_args, numpy).compute(scheduler=scheduler)
    got_lazy = fn(*got_args, cupynum)
    host_scalar = isinstance(want, numpy.generic) and cupynum.placement(
        cupynum.asarray(VEC)) == "host"  # (a full reduction of host chunks: NumPy's scalar)
    if case not in ("boolean mask", "fft along an unchunked axis") and not host_scalar:
        # (dask builds these two metas with NumPy whatever the chunks are; the chunks, and
        # so the results, are still cupynum's)
        assert isinstance(got_lazy._meta, cupynum.ndarray)
    got = got_lazy.compute(scheduler=scheduler)
    if host_scalar:
        got = cupynum.asarray(got)
    assert isinstance(got, cupynum.ndarray)
    assert got.shape == numpy.shape(want) and got.dtype == numpy.asarray(want).dtype
    numpy.testing.assert_allclose(cupynum.asnumpy(got), want, rtol=1e-12, atol=1e-12)


def test_mixed_operands_stay_lazy():
    x = da.from_array(cupynum.asarray(MAT), chunks=(8, 8))
    v = cupynum.asarray(MAT[0, :])
    for lazy in (x @ cupynum.asarray(SQ), x + v, v + x, v * x, cupynum.add(v, x)):
        assert isinstance(lazy, da.Array)
        assert isinstance(lazy.compute(scheduler="sync"), cupynum.ndarray)
    numpy.testing.assert_allclose(cupynum.asnumpy((v + x).compute(scheduler="sync")),
                                  MAT[0, :] + MAT)


def test_persist_keeps_cupynum_chunks():
    x = da.from_array(cupynum.asarray(VEC), chunks=30).persist(scheduler="sync")
    chunks = x.to_delayed().ravel()
    assert all(isinstance(c.compute(scheduler="sync"), cupynum.ndarray) for c in chunks)


def test_sizeof_counts_the_bytes():
    from dask.sizeof import sizeof

    assert sizeof(cupynum.zeros((100, 10))) == 8000
    assert sizeof(cupynum.zeros(10, numpy.float32)[::2]) == 20


def test_creation_with_meta_and_like():
    meta = cupynum.empty(())
    for made in (da.ones(10, chunks=4, meta=meta), da.arange(10, chunks=4, like=meta),
                 da.asarray(numpy.arange(10), like=meta)):
        assert isinstance(made._meta, cupynum.ndarray)
        assert isinstance(made.compute(scheduler="sync"), cupynum.ndarray)


def test_array_backend_entry_point():
    with dask.config.set({"array.backend": "cupynum"}):
        made = [da.ones((6, 4), chunks=3), da.zeros(5, chunks=2), da.full(5, 2.5, chunks=2),
                da.empty(4, chunks=2), da.arange(7, chunks=3)]
        drawn = [da.random.default_rng(3).random(9, chunks=4),
                 da.random.RandomState(3).normal(size=9, chunks=4)]
    for x, want in zip(made, (numpy.ones((6, 4)), numpy.zeros(5), numpy.full(5, 2.5), None,
                              numpy.arange(7))):
        got = x.compute(scheduler="sync")
        assert isinstance(got, cupynum.ndarray)
        if want is not None:
            numpy.testing.assert_array_equal(cupynum.asnumpy(got), want)
    for x in drawn:
        got = cupynum.asnumpy(x.compute(scheduler="sync"))
        assert got.shape == (9,) and numpy.all(numpy.isfinite(got))
    # the same seed gives the same values (per-chunk generators are spawned from it)
    with dask.config.set({"array.backend": "cupynum"}):
        again = da.random.default_rng(3).random(9, chunks=4).compute(scheduler="sync")
    numpy.testing.assert_array_equal(cupynum.asnumpy(again),
                                     cupynum.asnumpy(drawn[0].compute(scheduler="sync")))


def test_host_frames_round_trip():
    x = cupynum.asarray(MAT)[::2, 1::3]
    header, frames = _dask.serialize_host(x)
    back = _dask.deserialize_host(header, [bytes(f) for f in frames])
    assert isinstance(back, cupynum.ndarray) and back.dtype == x.dtype
    numpy.testing.assert_array_equal(cupynum.asnumpy(back), MAT[::2, 1::3])


def test_distributed_serialisers_are_registered():
    protocol = pytest.importorskip("distributed.protocol")
    x = cupynum.asarray(MAT.astype(numpy.float32))
    header, frames = protocol.serialize(x, serializers=("dask",))
    assert header["serializer"] == "dask"
    back = protocol.deserialize(header, frames)
    assert isinstance(back, cupynum.ndarray)
    numpy.testing.assert_array_equal(cupynum.asnumpy(back), MAT.astype(numpy.float32))


def test_after_import_runs_hooks_once_the_module_is_imported(tmp_path, monkeypatch):
    (tmp_path / "cpn_late_module.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    _dask.after_import("cpn_late_module", lambda m: seen.append(m.VALUE + 1))
    assert seen == []
    import cpn_late_module  # noqa: F401

    assert seen == [42]
    _dask.after_import("cpn_late_module", lambda m: seen.append(m.VALUE))
    assert seen == [42, 41]  # already imported: runs at once
    del sys.modules["cpn_late_module"]


def test_dask_cupy_test_no_longer_matches_cupynum():
    import dask.utils

    assert not dask.utils.is_cupy_type(cupynum.zeros(2))
    fake_cupy = types.new_class("ndarray")
    fake_cupy.__module__ = "cupy._core.core"
    assert dask.utils.is_cupy_type(fake_cupy())


def test_import_cupynum_does_not_import_dask():
    import subprocess

    code = "import sys, cupynum; print('dask' in sys.modules, 'distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_local_cluster_of_processes():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        x = da.from_array(cupynum.asarray(MAT), chunks=(6, 8))
        total = (x * 2).sum(axis=0).compute()
        assert isinstance(total, cupynum.ndarray)
        numpy.testing.assert_allclose(cupynum.asnumpy(total), (MAT * 2).sum(axis=0), rtol=1e-12)
        kept = client.persist(x + 1)
        blocks = client.gather(client.compute(kept.to_delayed().ravel().tolist()))
        assert all(isinstance(b, cupynum.ndarray) for b in blocks)


@pytest.mark.gpu
def test_local_cuda_cluster_one_worker(tmp_path):
    """dask-cuda's LocalCUDACluster with one worker on the one GPU runs the example's workload
    on cupynum chunks and agrees with NumPy."""
    pytest.importorskip("dask_cuda")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "dask_lstsq.py"
    spec = importlib.util.spec_from_file_location("dask_lstsq_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--rows", "400000", "--cols", "16", "--chunk-rows", "50000",
                         "--sample-rows", "100000", "--cluster", "cuda"]) == 0


def test_dask_cuda_sees_device_memory_only_on_a_device():
    pytest.importorskip("dask_cuda")
    from dask_cuda import get_device_memory_objects, is_device_object

    from cupynum import _backends

    base = cupynum.ones((4, 4))
    view = base[1:, ::2]
    on_device = _backends.for_arrays(base).cuda_memory  # (real CUDA memory only)
    assert is_device_object.is_device_object(view) is on_device
    found = get_device_memory_objects.dispatch(view)
    assert found == ([base] if on_device else [])


def test_device_frames_refused_off_cuda_memory():
    from cupynum import _backends

    x = cupynum.arange(6.0)
    if _backends.for_side("device").cuda_memory:
        pytest.skip("on CUDA memory device frames are made (the GPU test below)")
    with pytest.raises(NotImplementedError):
        _dask.serialize_device(x)


@pytest.mark.gpu
def test_device_frames_round_trip():
    x = cupynum.asarray(MAT.astype(numpy.float32))[::2, 1:]
    header, frames = _dask.serialize_device(x)
    assert len(frames) == 1 and hasattr(frames[0], "__cuda_array_interface__")
    back = _dask.deserialize_device(header, frames)
    assert isinstance(back, cupynum.ndarray) and back.dtype == numpy.float32
    numpy.testing.assert_array_equal(cupynum.asnumpy(back), MAT.astype(numpy.float32)[::2, 1:])
