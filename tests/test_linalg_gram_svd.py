"""The single-precision SVD through the float64 Gram matrix (linalg/_linalg.py, GRAM_SVD):
forced on here so that the host backend runs it too; results against NumPy's float64 SVD,
and the cases that must fall back to gesvd (which the backend's ``svd`` marks)."""
import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from cupynum.linalg import _linalg
from test_linalg import rand

# device paths: every array on the device, as under CUPYNUM_PLACEMENT=device
pytestmark = pytest.mark.usefixtures("device_placement")

SINGLE = [np.float32, np.complex64]


@pytest.fixture
def gram(monkeypatch):
    """GRAM_SVD forced on; returns a list that records each fall back to the backend's svd."""
    monkeypatch.setattr(_linalg, "GRAM_SVD", "always")
    be = _backends.get()
    calls = []
    inner = type(be).svd

    def spy(self, *args):
        calls.append(args[0]._shape)
        return inner(self, *args)

    monkeypatch.setattr(type(be), "svd", spy)
    return calls


def double(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


@pytest.mark.parametrize("dtype", SINGLE)
@pytest.mark.parametrize("shape", [(40, 40), (70, 40), (40, 70), (3, 50, 50), (2, 90, 33)])
@pytest.mark.parametrize("full", [True, False])
def test_gram_svd_matches_numpy(gram, dtype, shape, full):
    a = rand(shape, dtype)
    u, s, vh = (x.get() for x in cp.linalg.svd(cp.asarray(a), full_matrices=full))
    eu, es, evh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    assert (u.dtype, s.dtype, vh.dtype) == (eu.dtype, es.dtype, evh.dtype)
    assert u.flags.c_contiguous and vh.flags.c_contiguous
    ref = np.linalg.svd(double(a), compute_uv=False)
    # float32's own rounding of the values (NumPy's float32 gesdd is ~10x further off)
    np.testing.assert_allclose(s, ref, rtol=0, atol=2e-6 * ref.max())
    assert (np.diff(s, axis=-1) <= 0).all()
    k = min(shape[-2:])
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=0, atol=2e-5 * np.abs(a).max())
    for q in (u, np.conj(np.swapaxes(vh, -1, -2))):
        eye = np.conj(np.swapaxes(q, -1, -2)) @ q
        np.testing.assert_allclose(eye, np.broadcast_to(np.eye(q.shape[-1]), eye.shape),
                                   atol=2e-5)
    square_or_reduced = shape[-1] == shape[-2] or not full
    assert (len(gram) == 0) == square_or_reduced  # a full U of a non-square matrix: gesvd


@pytest.mark.parametrize("dtype", SINGLE)
@pytest.mark.parametrize("shape", [(60, 40), (40, 60), (4, 48, 48)])
def test_gram_svdvals(gram, dtype, shape):
    a = rand(shape, dtype, seed=1)
    s = cp.linalg.svd(cp.asarray(a), compute_uv=False).get()
    ref = np.linalg.svd(double(a), compute_uv=False)
    assert s.dtype == np.linalg.svd(a, compute_uv=False).dtype and s.shape == ref.shape
    np.testing.assert_allclose(s, ref, rtol=0, atol=2e-6 * ref.max())
    assert gram == []


def test_rank_deficient_vectors_fall_back_to_gesvd(gram):
    """σ_min < GRAM_MIN_RATIO σ_max: U = A V / σ would lose accuracy, so gesvd runs."""
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((60, 5)) @ rng.standard_normal((5, 60))).astype(np.float32)
    u, s, vh = (x.get() for x in cp.linalg.svd(cp.asarray(a)))
    assert gram == [(1, 60, 60)]
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-4 * np.abs(a).max())
    # the values alone stay on the Gram path, and the rank comes out as NumPy's
    gram.clear()
    assert int(cp.linalg.matrix_rank(cp.asarray(a))) == np.linalg.matrix_rank(a) == 5
    s2 = cp.linalg.svd(cp.asarray(a), compute_uv=False).get()
    assert gram == []
    np.testing.assert_allclose(s2, np.linalg.svd(a.astype(np.float64), compute_uv=False),
                               rtol=0, atol=2e-6 * s2[0])


def test_zero_matrix(gram):
    z = np.zeros((40, 40), np.float32)
    u, s, vh = (x.get() for x in cp.linalg.svd(cp.asarray(z)))
    assert (s == 0).all() and gram == [(1, 40, 40)]
    assert (cp.linalg.svd(cp.asarray(z), compute_uv=False).get() == 0).all()


@pytest.mark.parametrize("uv", [True, False])
def test_non_finite_input_raises_as_numpy(gram, uv):
    a = rand((40, 40), np.float32)
    a[3, 5] = np.nan
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.svd(a, compute_uv=uv)
    with pytest.raises(np.linalg.LinAlgError):
        cp.linalg.svd(cp.asarray(a), compute_uv=uv)


def test_small_and_double_inputs_keep_gesvd(gram):
    cp.linalg.svd(cp.asarray(rand((32, 32), np.float32)))
    cp.linalg.svd(cp.asarray(rand((40, 40), np.float64)))
    assert gram == [(1, 32, 32), (1, 40, 40)]


def test_gram_path_is_the_backends_choice_by_default(monkeypatch, gram):
    """GRAM_SVD="gpu": the Gram path where the backend's ``gram_svd`` capability is set
    (the CUDA backend and the simulated device), gesvd elsewhere (the host backend)."""
    monkeypatch.setattr(_linalg, "GRAM_SVD", "gpu")
    cp.linalg.svd(cp.asarray(rand((40, 40), np.float32)))
    assert (gram == []) == _backends.get().gram_svd
    assert _backends.get().gram_svd == (_backends.name() != "host")
