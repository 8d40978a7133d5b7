"""Products and numpy.linalg, compared with NumPy (tolerances per dtype, well-conditioned
random inputs; decompositions also checked by reconstruction)."""
import numpy as np
import pytest

import cupynum as cp
from cupynum import _backends
from helpers import compare

RTOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}
FLOATS = [np.float32, np.float64, np.complex64, np.complex128]


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def well(n, dtype, batch=(), seed=0):
    """Well-conditioned: random plus n * identity."""
    return (rand(batch + (n, n), dtype, seed) + n * np.eye(n)).astype(dtype)


def hpd(n, dtype, batch=(), seed=0):
    a = rand(batch + (n, n), dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def h(x):
    return np.asarray(x)


# --- products ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa,sb", [((4, 5), (5, 3)), ((2, 4, 5), (5, 3)), ((5,), (5, 3)),
                                   ((4, 5), (5,)), ((5,), (5,)), ((3, 1, 4, 5), (2, 5, 6)),
                                   ((1, 1), (1, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))])
def test_matmul(dtype, sa, sb):
    compare(lambda xp, a, b: xp.matmul(a, b), rand(sa, dtype), rand(sb, dtype, 1),
            rtol=RTOL[dtype], atol=RTOL[dtype])
    compare(lambda xp, a, b: a @ b, rand(sa, dtype), rand(sb, dtype, 1), rtol=RTOL[dtype],
            atol=RTOL[dtype])


def test_matmul_views_and_batches():
    a = rand((6, 8), np.float64)
    compare(lambda xp, a: a.T @ a, a, rtol=1e-12)
    compare(lambda xp, a: a[::2, 1::2] @ a[1:5, ::-1].T, a, rtol=1e-12)
    compare(lambda xp, a: a.reshape(2, 3, 8) @ a[:, :2], a, rtol=1e-12)
    compare(lambda xp, a: xp.matmul(a[:, None, :4], a[None, :4, :4]).sum(), a, rtol=1e-12)
    small = rand((10000, 4, 4), np.float32)
    compare(lambda xp, a: a @ a, small, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.bool_])
def test_matmul_int(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    compare(lambda xp, a: a @ a.T, a)
    compare(lambda xp, a: xp.matmul(a, a.T.astype(np.float32)), a, rtol=1e-6)


def test_matmul_errors_and_out():
    a, b = rand((3, 4), np.float64), rand((5, 2), np.float64)
    compare(lambda xp, a, b: xp.matmul(a, b), a, b)  # ValueError
    compare(lambda xp, a: xp.matmul(a, 2.0), a)  # ValueError (0-d)
    compare(lambda xp, a, b: xp.matmul(a, b[..., None]), rand((2, 3, 4), np.float64),
            rand((3, 4), np.float64))

    def with_out(xp, a, b):
        out = xp.zeros((3, 3), np.float64)
        r = xp.matmul(a, b, out=out)
        assert r is out
        return out

    compare(with_out, a, a.T.copy(), rtol=1e-12)

    def out32(xp, a):
        out = xp.zeros((3, 3), np.float32)
        xp.matmul(a, a.T, out=out, casting="unsafe")
        return out

    compare(out32, a, rtol=1e-6)

    def aliased(xp, a):
        a = a[:, :3].copy()
        xp.matmul(a, a, out=a)
        return a

    compare(aliased, a, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_products(dtype):
    r = RTOL[dtype]
    a, b, v = rand((3, 4), dtype), rand((4, 5), dtype, 1), rand((4,), dtype, 2)
    t = rand((2, 3, 4), dtype, 3)
    compare(lambda xp, a, b: xp.dot(a, b), a, b, rtol=r, atol=r)
    compare(lambda xp, a, v: xp.dot(a, v), a, v, rtol=r, atol=r)
    compare(lambda xp, v: xp.dot(v, v), v, rtol=r)
    compare(lambda xp, t, b: xp.dot(t, t.transpose(0, 2, 1)), t, b, rtol=r, atol=r)
    compare(lambda xp, a: xp.dot(a, 3), a, rtol=r)
    compare(lambda xp, v: xp.vdot(v, v), v, rtol=r, atol=r)
    compare(lambda xp, a, t: xp.inner(a, t), a, t, rtol=r, atol=r)
    compare(lambda xp, a, v: xp.outer(a, v), a, v, rtol=r)
    compare(lambda xp, t, b: xp.tensordot(t, b, axes=1), t, b, rtol=r, atol=r)
    compare(lambda xp, t: xp.tensordot(t, t, axes=([1, 2], [1, 2])), t, rtol=r, atol=r)
    compare(lambda xp, t: xp.tensordot(t, t, axes=0), t, rtol=r, atol=r)
    compare(lambda xp, a, b: xp.kron(a, b), a, b, rtol=r)
    compare(lambda xp, a, v: xp.kron(a, v), a, v, rtol=r)
    compare(lambda xp, t, v: xp.matvec(t, v), t, v, rtol=r, atol=r)
    compare(lambda xp, v, t: xp.vecmat(v, t.transpose(0, 2, 1)), v, t, rtol=r, atol=r)
    compare(lambda xp, t, v: xp.vecdot(t, v), t, v, rtol=r, atol=r)
    compare(lambda xp, a: xp.trace(a), a, rtol=r)
    compare(lambda xp, t: xp.trace(t, 1, 1, 2), t, rtol=r)
    compare(lambda xp, a, b: xp.dot(a, b.T), a, b)  # ValueError: not aligned
    compare(lambda xp, t: xp.tensordot(t, t, axes=([0], [1])), t)  # shape mismatch


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("i,i->", [(4,), (4,)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]), ("i,j->ij", [(3,), (4,)]), ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]), ("ii->i", [(3, 3)]), ("ij->", [(3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]), ("ijk,jl->kil", [(2, 3, 4), (3, 5)])])
def test_einsum(spec, shapes):
    ops = [rand(s, np.float64, i) for i, s in enumerate(shapes)]
    compare(lambda xp, *o: xp.einsum(spec, *o), *ops, rtol=1e-12, atol=1e-12)


def test_linalg_products():
    a, b, c = rand((3, 4), np.float64), rand((4, 6), np.float64, 1), rand((6, 2), np.float64, 2)
    v = rand((3,), np.float64, 3)
    compare(lambda xp, a, b, c: xp.linalg.multi_dot([a, b, c]), a, b, c, rtol=1e-12)
    compare(lambda xp, v, a, b: xp.linalg.multi_dot([v, a, b, b.T]), v, a, b, rtol=1e-12)
    m = well(4, np.float64)
    for n in (0, 1, 2, 5, -1, -3):
        compare(lambda xp, m: xp.linalg.matrix_power(m, n), m, rtol=1e-10)
    compare(lambda xp, m: xp.linalg.matrix_power(m.astype(np.int64), 3), m)
    x, y = rand((5, 3), np.float64), rand((5, 3), np.float64, 1)
    compare(lambda xp, x, y: xp.linalg.cross(x, y), x, y, rtol=1e-12)
    compare(lambda xp, x, y: xp.linalg.cross(x.T, y.T, axis=0), x, y, rtol=1e-12)
    compare(lambda xp, x: xp.linalg.cross(x[:, :2], x[:, :2]), x)  # ValueError
    compare(lambda xp, v: xp.linalg.outer(v, v), v, rtol=1e-12)
    compare(lambda xp, x: xp.linalg.outer(x, x), x)  # ValueError
    compare(lambda xp, x: xp.linalg.matrix_transpose(x), x)
    compare(lambda xp, m: xp.linalg.diagonal(m, offset=1), m)
    compare(lambda xp, m: xp.linalg.trace(m), m, rtol=1e-12)
    compare(lambda xp, x, y: xp.linalg.vecdot(x, y), x, y, rtol=1e-12)
    compare(lambda xp, a, b: xp.linalg.tensordot(a, b, axes=1), a, b, rtol=1e-12)
    compare(lambda xp, a, b: xp.linalg.matmul(a, b), a, b, rtol=1e-12)


# --- decompositions and solvers ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_solve_inv_det(dtype, batch):
    r = RTOL[dtype] * 10
    a = well(5, dtype, batch)
    b = rand(batch + (5, 2), dtype, 1)
    compare(lambda xp, a, b: xp.linalg.solve(a, b), a, b, rtol=r, atol=r)
    compare(lambda xp, a, b: xp.linalg.solve(a, b[..., 0]), a, b[(0,) * len(batch)], rtol=r,
            atol=r)
    compare(lambda xp, a: xp.linalg.inv(a), a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.det(a), a, rtol=r)
    compare(lambda xp, a: xp.linalg.slogdet(a), a, rtol=r, atol=r)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("n", [40, 130])
def test_solve_one_right_hand_side(dtype, batch, n):
    """One right-hand side (a vector, or one column): the CUDA backend factors [A | b] and
    finishes with one triangular solve (solver._solve_augmented) instead of getrs."""
    r = RTOL[dtype] * 10
    a = well(n, dtype, batch)
    b = rand(batch + (n, 1), dtype, 1)
    compare(lambda xp, a, b: xp.linalg.solve(a, b), a, b, rtol=r, atol=r)
    compare(lambda xp, a, b: xp.linalg.solve(a, b[..., 0]), a, b[(0,) * len(batch)], rtol=r,
            atol=r)
    sing = a.copy()
    sing[(0,) * len(batch)][1] = 0  # a zero row: exactly singular (see _singular_member)
    compare(lambda xp, a, b: xp.linalg.solve(a, b), sing, b)  # LinAlgError


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("max_k", [0, 4])
def test_solve_few_right_hand_sides(dtype, max_k, request):
    """k = 3 columns through both CUDA paths: getrf + getrs (max_k 0) and the augmented LU
    finished by trsm (max_k 4); stacked above the batched routines' size too."""
    if _backends.name() == "cuda":
        from cupynum._backends.cuda import tuning

        old = tuning.override("SOLVER", solve_augmented_max_k=max_k)
        request.addfinalizer(lambda: tuning.restore("SOLVER", old))
    r = RTOL[dtype] * 10
    for batch in [(), (2,)]:
        a = well(70, dtype, batch)
        b = rand(batch + (70, 3), dtype, 1)
        compare(lambda xp, a, b: xp.linalg.solve(a, b), a, b, rtol=r, atol=r)
    sing = a.copy()
    sing[1][5] = 0  # the second matrix singular: LinAlgError
    compare(lambda xp, a, b: xp.linalg.solve(a, b), sing, b)


def test_solve_errors():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    compare(lambda xp, a: xp.linalg.solve(a, a), sing)  # LinAlgError
    compare(lambda xp, a: xp.linalg.inv(a), sing)
    compare(lambda xp, a: xp.linalg.inv(a), np.ones((2, 3)))  # non-square
    compare(lambda xp, a: xp.linalg.inv(a), np.ones(3))  # 1-D
    compare(lambda xp, a: xp.linalg.solve(a, xp.ones(3)), np.eye(2))  # ValueError
    compare(lambda xp, a: xp.linalg.det(a), sing, atol=1e-12)
    compare(lambda xp, a: xp.linalg.slogdet(a), sing, atol=1e-12)
    compare(lambda xp, a: xp.linalg.det(a), np.zeros((0, 0)))
    compare(lambda xp, a: xp.linalg.inv(a), np.eye(3, dtype=np.int64), rtol=1e-12)
    compare(lambda xp, a: xp.linalg.inv(a), np.eye(3, dtype=np.float16))  # TypeError


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_cholesky(dtype, batch):
    r = RTOL[dtype] * 10
    a = hpd(4, dtype, batch)
    compare(lambda xp, a: xp.linalg.cholesky(a), a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.cholesky(a, upper=True), a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.cholesky(-a), a)  # not positive definite


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(dtype, shape, mode):
    a = rand(shape, dtype)
    r = RTOL[dtype] * 10
    res = cp.linalg.qr(cp.asarray(a), mode=mode)
    exp = np.linalg.qr(a, mode=mode)
    if mode == "r":
        assert res.shape == exp.shape and res.dtype == exp.dtype
        np.testing.assert_allclose(np.abs(h(res)), np.abs(exp), rtol=r, atol=r)
        return
    q, rr = h(res.Q), h(res.R)
    assert q.shape == exp.Q.shape and rr.shape == exp.R.shape and q.dtype == exp.Q.dtype
    np.testing.assert_allclose(q @ rr, a, rtol=r, atol=r)
    np.testing.assert_allclose(np.triu(rr), rr)
    eye = np.conj(np.swapaxes(q, -1, -2)) @ q
    np.testing.assert_allclose(eye, np.broadcast_to(np.eye(q.shape[-1]), eye.shape), atol=r)


def _check_svd(a, full, r):
    """cupynum's svd of ``a`` against NumPy's: shapes, dtypes, the singular values, U S Vh
    reconstructing ``a``, and ``compute_uv=False``; returns cupynum's (u, s) on the host."""
    u, s, vh = (h(x) for x in cp.linalg.svd(cp.asarray(a), full_matrices=full))
    eu, es, evh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    assert (u.dtype, s.dtype, vh.dtype) == (eu.dtype, es.dtype, evh.dtype)
    np.testing.assert_allclose(s, es, rtol=r, atol=r)
    k = min(a.shape[-2:])
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.svd(a, compute_uv=False), a, rtol=r, atol=r)
    return u, s


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 3), (2, 3, 6)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(dtype, shape, full):
    a = rand(shape, dtype)
    r = RTOL[dtype] * 10
    _check_svd(a, full, r)
    compare(lambda xp, a: xp.linalg.svdvals(a), a, rtol=r, atol=r)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_eigh(dtype, uplo, batch):
    a = hpd(5, dtype, batch)
    a = a + np.triu(rand(batch + (5, 5), dtype, 7), 1)  # one triangle only is read
    r = RTOL[dtype] * 100
    compare(lambda xp, a: xp.linalg.eigvalsh(a, UPLO=uplo), a, rtol=r, atol=r)
    w, v = (h(x) for x in cp.linalg.eigh(cp.asarray(a), UPLO=uplo))
    ew, ev = np.linalg.eigh(a, UPLO=uplo)
    assert w.dtype == ew.dtype and v.dtype == ev.dtype and v.shape == ev.shape
    np.testing.assert_allclose(w, ew, rtol=r, atol=r)
    full = np.linalg.eigh(a, UPLO=uplo)  # the matrix NumPy factored, as Hermitian
    herm = (full.eigenvectors * full.eigenvalues[..., None, :]) @ np.conj(
        np.swapaxes(full.eigenvectors, -1, -2))
    np.testing.assert_allclose(herm @ v, v * w[..., None, :], rtol=r, atol=r * 10)
    compare(lambda xp, a: xp.linalg.eigh(a, UPLO="X"), a)  # ValueError


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_eig(dtype, batch):
    """Eigenvalues as NumPy's (sorted: the order is unspecified), dtypes by NumPy's rule,
    and A V = V diag(w) (vectors are unique only up to scale)."""
    a = rand(batch + (6, 6), dtype, seed=4)  # real ones have complex pairs
    ew = np.linalg.eigvals(a)
    r = RTOL.get(dtype, 1e-10) * 100
    w = h(cp.linalg.eigvals(cp.asarray(a)))
    assert w.dtype == ew.dtype and w.shape == ew.shape
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(ew), rtol=r, atol=r)
    res = cp.linalg.eig(cp.asarray(a))
    w, v = h(res.eigenvalues), h(res.eigenvectors)
    assert v.dtype == np.linalg.eig(a).eigenvectors.dtype and v.shape == a.shape
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=r, atol=r * 10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=r)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eig_real_spectrum_and_edges(dtype):
    # triangular with well-separated diagonal: real eigenvalues for LAPACK and cuSOLVER alike
    # (close ones can come out as a complex pair with a tiny imaginary part)
    a = np.triu(rand((5, 5), dtype, 1)) + np.diag(3.0 * np.arange(5)).astype(dtype)
    compare(lambda xp, a: xp.linalg.eigvals(a).dtype, a)
    w, v = (h(x) for x in cp.linalg.eig(cp.asarray(a)))
    want = np.linalg.eig(a)  # real dtypes, or complex ones in NumPy versions that keep them
    assert w.dtype == want.eigenvalues.dtype and v.dtype == want.eigenvectors.dtype
    np.testing.assert_allclose(np.sort(w), np.sort(np.linalg.eigvals(a)), rtol=1e-4, atol=1e-4)
    r = cp.linalg.eig(cp.zeros((0, 0), dtype))
    assert r.eigenvalues.shape == (0,) and r.eigenvectors.shape == (0, 0)
    compare(lambda xp, a: xp.linalg.eig(a), np.ones((2, 3), dtype))  # LinAlgError
    compare(lambda xp, a: xp.linalg.eigvals(a), np.ones(3, dtype))
    compare(lambda xp, a: xp.linalg.eig(a), np.array([[1, np.nan], [0, 1]], dtype))
    with pytest.raises(TypeError):
        cp.linalg.eig(cp.ones((2, 2), np.float16))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_lstsq_pinv_rank(dtype):
    r = RTOL[dtype] * 100
    a, b = rand((6, 3), dtype), rand((6, 2), dtype, 1)
    compare(lambda xp, a, b: xp.linalg.lstsq(a, b), a, b, rtol=r, atol=r)
    compare(lambda xp, a, b: xp.linalg.lstsq(a, b[:, 0]), a, b, rtol=r, atol=r)
    compare(lambda xp, a, b: xp.linalg.lstsq(a.T, b[:3]), a, b, rtol=r, atol=r)
    compare(lambda xp, a, b: xp.linalg.lstsq(a, b[:4]), a, b)  # LinAlgError
    compare(lambda xp, a: xp.linalg.pinv(a), a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.pinv(a.reshape(2, 3, 3)), a, rtol=r, atol=r)
    low = (a[:, :1] @ a[:1, :]).astype(dtype)  # rank 1
    compare(lambda xp, x: xp.linalg.matrix_rank(x), low)
    compare(lambda xp, x: xp.linalg.matrix_rank(x), a)
    compare(lambda xp, x: xp.linalg.matrix_rank(x[:, 0]), a)


@pytest.mark.parametrize("ord", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"])
def test_matrix_norms(ord):
    a = rand((2, 4, 3), np.float64)
    compare(lambda xp, a: xp.linalg.norm(a, ord=ord, axis=(1, 2)), a, rtol=1e-10)
    compare(lambda xp, a: xp.linalg.norm(a[0], ord=ord), a, rtol=1e-10)
    compare(lambda xp, a: xp.linalg.norm(a, ord=ord, axis=(2, 1), keepdims=True), a,
            rtol=1e-10)
    compare(lambda xp, a: xp.linalg.matrix_norm(a, ord=ord), a, rtol=1e-10)
    if ord not in ("fro", "nuc"):
        compare(lambda xp, a: xp.linalg.cond(a[:, :3, :3], ord), a, rtol=1e-8)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3.5, np.inf, -np.inf])
def test_vector_norms(ord):
    a = rand((3, 5), np.complex64)
    compare(lambda xp, a: xp.linalg.norm(a[0], ord=ord), a, rtol=1e-5)
    compare(lambda xp, a: xp.linalg.norm(a, ord=ord, axis=1), a, rtol=1e-5)
    compare(lambda xp, a: xp.linalg.vector_norm(a, ord=2 if ord is None else ord), a,
            rtol=1e-5)
    compare(lambda xp, a: xp.linalg.vector_norm(a, axis=(0, 1), keepdims=True), a, rtol=1e-5)
    compare(lambda xp, a: xp.linalg.norm(a.real.astype(np.int32)), a, rtol=1e-12)


def test_norm_errors():
    a = rand((3, 4), np.float64)
    compare(lambda xp, a: xp.linalg.norm(a, ord="fro", axis=0), a)
    compare(lambda xp, a: xp.linalg.norm(a, ord=3), a)
    compare(lambda xp, a: xp.linalg.norm(a, ord="bad"), a)


def test_tensor_solvers():
    a = well(6, np.float64).reshape(6, 2, 3)
    compare(lambda xp, a: xp.linalg.tensorinv(a, ind=1), a, rtol=1e-10)
    b = rand((6,), np.float64)
    compare(lambda xp, a, b: xp.linalg.tensorsolve(a, b), a, b, rtol=1e-10)


def test_cublas_call_layout_emulated(monkeypatch):
    """The CUDA backend's GEMM argument mapping (row-major trick, op N/T, leading dims,
    batch strides, copies of other layouts), checked against a column-major emulation of
    cublasGemmStridedBatchedEx over host memory: no GPU needed."""
    import ctypes

    from cupynum import _backends
    from cupynum._array import broadcast_view, empty_array
    from cupynum._backends.cuda import blas
    from cupynum._backends.cuda import view as cuda_view
    from shim import alias_host_allocations, host_memory

    if _backends.name() != "host":
        pytest.skip("emulation runs over host buffers")

    def colmajor(ptr, dt, rows, cols, ld):
        n = ld * (cols - 1) + rows
        raw = np.frombuffer((ctypes.c_char * (n * dt.itemsize)).from_address(ptr), dt, n)
        return np.lib.stride_tricks.as_strided(raw, (rows, cols), (dt.itemsize, ld * dt.itemsize))

    class FakeCublas:
        def gemm_strided_batched_ex(self, h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb,
                                    sb, beta, C, ct, ldc, sc, batch, comp, algo):
            dt = np.dtype({0: np.float32, 1: np.float64, 4: np.complex64, 5: np.complex128}[at])
            for i in range(batch):
                am = colmajor(A + i * sa * dt.itemsize, dt, *((m, k) if ta == 0 else (k, m)), lda)
                bm = colmajor(B + i * sb * dt.itemsize, dt, *((k, n) if tb == 0 else (n, k)), ldb)
                cm = colmajor(C + i * sc * dt.itemsize, dt, m, n, ldc)
                cm[...] = (am if ta == 0 else am.T) @ (bm if tb == 0 else bm.T)

        gemm_strided_batched_ex_64 = gemm_strided_batched_ex

        def gemm_ex(self, h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc,
                    comp, algo):  # the unbatched call: one matrix of the batched emulation
            self.gemm_strided_batched_ex(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb,
                                         0, beta, C, ct, ldc, 0, 1, comp, algo)

        gemm_ex_64 = gemm_ex

    monkeypatch.setattr(blas, "_lib", FakeCublas())
    monkeypatch.setattr(blas, "handle", lambda: 0)
    monkeypatch.setattr(blas.memory, "alloc", lambda n, stream=None: host_memory(n))
    # arrays' memory is both sides' at once: host NumPy code and the emulation read it
    alias_host_allocations(monkeypatch)
    view_init = cuda_view.DeviceView.__init__

    def aliased_view(self, *args, **kwargs):  # the temporaries' memory too
        view_init(self, *args, **kwargs)
        if self._buf.host is None:
            self._buf.host = self._buf.device

    monkeypatch.setattr(cuda_view.DeviceView, "__init__", aliased_view)
    be = _backends.get()
    monkeypatch.setattr(blas, "copy", be.copy)  # the library's re-layouts, on host memory
    monkeypatch.setattr(blas, "fill", be.fill)
    rng = np.random.default_rng(0)

    def check(a, b):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out = empty_array(batch + (a.shape[-2], b.shape[-1]), a.dtype)
        blas.matmul(broadcast_view(a, batch + a.shape[-2:]),
                    broadcast_view(b, batch + b.shape[-2:]), out)
        np.testing.assert_allclose(h(out), np.matmul(h(a), h(b)), rtol=1e-5, atol=1e-5)

    x = cp.asarray(rng.standard_normal((6, 8)))
    check(x, x.T)
    check(x.T, x)
    check(x[::2, 1::2], x[1:5, ::-1])
    check(x[::2, 1::2], x[::2, :4].T)
    check(x[:, :1], x[:1, :])
    check(x[:1, :], x.T[:, :1])
    check(x[2:3, :], x[3:4, :].T)
    t = cp.asarray(rng.standard_normal((4, 5, 6)))
    check(t.transpose(0, 2, 1), t)
    check(t.transpose(1, 0, 2)[:, :, :5], t[0])
    check(cp.asarray(rng.standard_normal((3, 1, 3, 4))), cp.asarray(rng.standard_normal((2, 4, 2))))
    c = cp.asarray(rand((3, 4), np.complex64))
    check(c, c.T)


def test_eig_unpaired_imaginary_rounding_is_real():
    """An eigenvalue of a real matrix with a tiny imaginary part and no conjugate beside it
    is real (NumPy's exact-zero dtype rule then gives a real result, as LAPACK would)."""
    from cupynum.linalg._linalg import _real_where_unpaired

    w = np.array([[1 + 1e-17j, 2 + 3j, 2 - 3j, 5 - 1e-18j], [1, 2, 3 + 1j, 3 - 1j]])
    got = h(_real_where_unpaired(cp.asarray(w)))
    want = w.copy()
    want[0, [0, 3]] = want[0, [0, 3]].real
    assert np.array_equal(got, want) and got.dtype == w.dtype


# --- stacks: the CUDA backend sends these to the batched library routines -------------------
# (getrf/getrsBatched, potrfBatched, syevjBatched, gesvdjBatched, geqrfBatched for small n;
# the sizes straddle the knobs' limits in cuda/solver.py so both paths run on a GPU)

def _singular_member(a, index):
    """a copy of the stack a whose matrix ``index`` has a zero row: exactly singular in
    floating point too (elimination keeps the row zero, so U gets an exact zero pivot)."""
    a = a.copy()
    a[index, 1] = 0
    return a


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [3, 33, 70])
@pytest.mark.parametrize("batch", [(6,), (2, 3)])
def test_stacked_solve_inv_det(dtype, n, batch):
    r = RTOL[dtype] * 10
    a = well(n, dtype, batch)
    b = rand(batch + (n, 3), dtype, 1)
    compare(lambda xp, a, b: xp.linalg.solve(a, b), a, b, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.inv(a), a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.slogdet(a), a, rtol=r, atol=r)
    if n < 30:  # det of n * I + noise overflows nothing here, but its rtol grows with n
        compare(lambda xp, a: xp.linalg.det(a), a, rtol=r)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("n", [4, 70])
def test_stacked_singular_member(dtype, n):
    """One singular matrix in a stack: solve/inv raise LinAlgError as NumPy does, det and
    slogdet give 0 and (0, -inf) for that member only."""
    a = _singular_member(well(n, dtype, (5,)), 3)
    b = rand((5, n, 2), dtype, 1)
    compare(lambda xp, a, b: xp.linalg.solve(a, b), a, b)
    compare(lambda xp, a: xp.linalg.inv(a), a)
    sign, logdet = (h(x) for x in cp.linalg.slogdet(cp.asarray(a)))
    es, el = np.linalg.slogdet(a)
    assert sign.dtype == es.dtype and logdet.dtype == el.dtype
    assert sign[3] == 0 and logdet[3] == -np.inf
    ok = [0, 1, 2, 4]
    r = RTOL[dtype] * 10
    np.testing.assert_allclose(sign[ok], es[ok], rtol=r, atol=r)
    np.testing.assert_allclose(logdet[ok], el[ok], rtol=r, atol=r)
    assert h(cp.linalg.det(cp.asarray(a)))[3] == 0


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [4, 70])
def test_stacked_cholesky(dtype, n):
    r = RTOL[dtype] * 10 * n
    a = hpd(n, dtype, (2, 3))
    compare(lambda xp, a: xp.linalg.cholesky(a), a, rtol=r, atol=r)
    compare(lambda xp, a: xp.linalg.cholesky(a, upper=True), a, rtol=r, atol=r)
    bad = a.copy()
    bad[1, 2] = -bad[1, 2]  # one member not positive definite
    compare(lambda xp, a: xp.linalg.cholesky(a), bad)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [4, 32, 33])
def test_stacked_eigh(dtype, n):
    """Eigenvalues ascending, as NumPy's; vectors checked by A V = V diag(w)."""
    a = hpd(n, dtype, (6,))
    r = RTOL[dtype] * 100 * n
    compare(lambda xp, a: xp.linalg.eigvalsh(a), a, rtol=r, atol=r)
    w, v = (h(x) for x in cp.linalg.eigh(cp.asarray(a)))
    ew, ev = np.linalg.eigh(a)
    assert w.dtype == ew.dtype and v.dtype == ev.dtype and v.shape == ev.shape
    assert (np.diff(w, axis=-1) >= 0).all()
    np.testing.assert_allclose(w, ew, rtol=r, atol=r)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=r, atol=r * 10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(6, 5, 3), (6, 3, 5), (4, 32, 32), (3, 33, 20)])
@pytest.mark.parametrize("full", [True, False])
def test_stacked_svd(dtype, shape, full):
    """Singular values descending, as NumPy's; U, Vh orthonormal and reconstructing A."""
    a = rand(shape, dtype)
    r = RTOL[dtype] * 100
    u, s = _check_svd(a, full, r)
    assert (np.diff(s, axis=-1) <= 0).all()
    uh_u = np.conj(np.swapaxes(u, -1, -2)) @ u
    np.testing.assert_allclose(uh_u, np.broadcast_to(np.eye(u.shape[-1]), uh_u.shape), atol=r)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(6, 5, 3), (6, 4, 4), (2, 3, 70, 40)])
def test_stacked_qr(dtype, shape):
    a = rand(shape, dtype)
    r = RTOL[dtype] * 100
    q, rr = (h(x) for x in cp.linalg.qr(cp.asarray(a)))
    eq, er = np.linalg.qr(a)
    assert q.shape == eq.shape and rr.shape == er.shape and q.dtype == eq.dtype
    np.testing.assert_allclose(q @ rr, a, rtol=r, atol=r)
    np.testing.assert_allclose(np.triu(rr), rr)
    np.testing.assert_allclose(np.abs(h(cp.linalg.qr(cp.asarray(a), mode="r"))), np.abs(er),
                               rtol=r, atol=r)


@pytest.mark.parametrize("fn", [
    lambda xp, a: xp.linalg.solve(a, a), lambda xp, a: xp.linalg.inv(a),
    lambda xp, a: xp.linalg.det(a), lambda xp, a: xp.linalg.slogdet(a),
    lambda xp, a: xp.linalg.cholesky(a), lambda xp, a: xp.linalg.eigvalsh(a),
    lambda xp, a: xp.linalg.eigh(a), lambda xp, a: xp.linalg.svd(a, compute_uv=False),
    lambda xp, a: xp.linalg.svd(a), lambda xp, a: xp.linalg.qr(a)])
@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 3, 3)])
def test_stacked_empty_batch(fn, shape):
    compare(fn, np.zeros(shape))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_batched_and_looped_paths_agree(dtype, request):
    """On CUDA: the batched routines and the per-matrix loop give the same answers."""
    from cupynum._backends.cuda import tuning

    a = well(8, dtype, (5,))
    p = hpd(8, dtype, (5,))
    r = RTOL[dtype] * 100
    results = []
    for batched in (False, True):
        old = tuning.override("SOLVER", batched=batched)
        request.addfinalizer(lambda old=old: tuning.restore("SOLVER", old))
        x = cp.asarray(a)
        results.append([h(cp.linalg.solve(x, x[..., :2])), h(cp.linalg.slogdet(x)[1]),
                        h(cp.linalg.cholesky(cp.asarray(p))), h(cp.linalg.eigvalsh(x)),
                        h(cp.linalg.svd(x, compute_uv=False)),
                        np.abs(h(cp.linalg.qr(x, mode="r")))])
    for loop, batch in zip(*results):
        np.testing.assert_allclose(batch, loop, rtol=r, atol=r)


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_vectors_and_matrices(dtype):
    """1-D and 2-D operands of one float dtype (the direct path): NumPy's shapes, dtypes and
    values, views and transposes included, and NumPy's errors for mismatched sizes."""
    r = RTOL[dtype] * 10
    m = rand((6, 5), dtype)
    v = rand((5,), dtype, 1)
    w = rand((6,), dtype, 2)
    compare(lambda xp, m, v: m @ v, m, v, rtol=r, atol=r)
    compare(lambda xp, m, w: w @ m, m, w, rtol=r, atol=r)
    compare(lambda xp, v: v @ v, v, rtol=r, atol=r)
    compare(lambda xp, m: m.T @ m, m, rtol=r, atol=r)
    compare(lambda xp, m, v: m[::2, ::-1] @ v[::-1], m, v, rtol=r, atol=r)
    compare(lambda xp, m: m[:, :0] @ m[:0, :], m)  # k = 0: zeros
    compare(lambda xp, m, v: m @ m, m, v)  # ValueError: 5 != 6
    compare(lambda xp, v, w: v @ w, v, w)


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_same_batch_stacks(dtype):
    """Stacks of one batch shape and one float dtype (the direct path): contiguous, small
    (our kernel) and large (cuBLAS) matrices, views, k = 0, an empty batch, and NumPy's
    errors for mismatched inner sizes."""
    r = RTOL[dtype] * 10
    small = rand((7, 4, 4), dtype)
    big = rand((3, 20, 20), dtype, 1)
    compare(lambda xp, a: a @ a, small, rtol=r, atol=r)
    compare(lambda xp, a: a @ a.transpose(0, 2, 1), big, rtol=r, atol=r)
    compare(lambda xp, a: a[:, ::2, 1:3] @ a[:, :2, ::-3], big, rtol=r, atol=r)
    compare(lambda xp, a: a.reshape(7, 2, 2, 4) @ a.reshape(7, 2, 4, 2), small, rtol=r, atol=r)
    compare(lambda xp, a: a[:, :, :0] @ a[:, :0, :], small)  # k = 0: zeros
    compare(lambda xp, a: a[:0] @ a[:0], small)  # an empty batch
    compare(lambda xp, a: a @ a[:, :3], small)  # ValueError: 3 != 4
    compare(lambda xp, a, b: a @ b, small, big)  # ValueError: batches do not broadcast
