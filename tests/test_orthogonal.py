"""Values, derivatives, batching and argument errors of the orthogonal
decompositions in ftorch.numpy.linalg (qr, eigh, eigvalsh, svd, pinv,
lstsq, matrix_rank) and the primitives under them. Reference values come
from NumPy; the rule checks on well-conditioned inputs are in
cases_orthogonal.py. Here: degenerate spectra, rank deficiency, the
derivatives that are refused, empty inputs."""

import mlx.core as mx
import numpy as np
import pytest
from cases_orthogonal import conditioned
from child import run_child
from harness import check_jvp_fd, check_vjp_dot, floats, np_fd_grad, shapes
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.primitives as lax

RNG = np.random.default_rng(0)
DTYPES = [(mx.float32, 2e-4), (mx.float64, 1e-10)]


def _mx(x, dtype=mx.float64):
    return mx.array(np.asarray(x, dtype=np.float64), dtype=dtype)


def _np(x):
    return np.array(x.astype(mx.float64) if x.dtype in (mx.float16, mx.bfloat16) else x)


def _matrices(min_dims=2):
    return shapes(min_dims=min_dims, max_dims=4, max_side=4).flatmap(
        lambda s: floats(s, -2.0, 2.0))


def _sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


def _rotated(w, seed=1):
    """``Q diag(w) Q^T`` for a fixed random orthogonal ``Q``."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(len(w), len(w))))
    return (q * np.asarray(w, dtype=float)) @ q.T


# ----------------------------------------------------------------------------
# Values against NumPy
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, tol", DTYPES)
@given(a=_matrices())
def test_qr_matches_numpy(dtype, tol, a):
    a = _np(_mx(a, dtype))  # what float32 rounds it to
    for mode in ("reduced", "complete", "r"):
        got = fnp.linalg.qr(_mx(a, dtype), mode=mode)
        ref = np.linalg.qr(a, mode=mode)
        if mode == "r":
            r = _np(got)
            assert r.shape == ref.shape
        else:
            q, r = _np(got.Q), _np(got.R)
            assert q.shape == ref[0].shape and r.shape == ref[1].shape
            np.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol * 10)
            k = q.shape[-1]
            np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(
                np.eye(k), q.shape[:-2] + (k, k)), atol=tol * 10)
            ref = ref[1]
        np.testing.assert_array_equal(np.tril(r, -1), 0 * r)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_qr_factors_match_numpy(shape):
    # Householder QR in both: on full-rank input the same factors, up to the
    # sign of each column of Q (row of R).
    a = RNG.normal(size=shape)
    for mode in ("reduced", "complete"):
        q, r = (np.array(t) for t in fnp.linalg.qr(_mx(a), mode=mode))
        qn, rn = np.linalg.qr(a, mode=mode)
        k = min(shape[-2:])
        np.testing.assert_allclose(np.abs(r), np.abs(rn), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.abs(q[..., :k]), np.abs(qn[..., :k]), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("dtype, tol", DTYPES)
@given(a=_matrices().map(lambda a: a[..., : a.shape[-2]]
                         if a.shape[-1] >= a.shape[-2] else a[..., : a.shape[-1], :]))
def test_eigh_matches_numpy(dtype, tol, a):
    a = _np(_mx(a, dtype))
    s = _sym(a)
    w, v = fnp.linalg.eigh(_mx(a, dtype))
    w, v = _np(w), _np(v)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), rtol=tol, atol=tol * 10)
    assert np.all(np.diff(w, axis=-1) >= -tol * 10)  # ascending
    np.testing.assert_allclose(s @ v, v * w[..., None, :], atol=tol * 100)
    n = a.shape[-1]
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape),
                               atol=tol * 10)
    np.testing.assert_allclose(_np(fnp.linalg.eigvalsh(_mx(a, dtype))), np.linalg.eigvalsh(s),
                               rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle_without_symmetrize(uplo):
    a = RNG.normal(size=(2, 4, 4))
    w, v = fnp.linalg.eigh(_mx(a), UPLO=uplo, symmetrize_input=False)
    np.testing.assert_allclose(np.array(w), np.linalg.eigvalsh(a, UPLO=uplo), rtol=1e-10)
    np.testing.assert_allclose(np.array(fnp.linalg.eigvalsh(_mx(a), UPLO=uplo,
                                                            symmetrize_input=False)),
                               np.linalg.eigvalsh(a, UPLO=uplo), rtol=1e-10)
    # Symmetrized (the default), both triangles count.
    np.testing.assert_allclose(np.array(fnp.linalg.eigvalsh(_mx(a), UPLO=uplo)),
                               np.linalg.eigvalsh(_sym(a)), rtol=1e-10)


@pytest.mark.parametrize("dtype, tol", DTYPES)
@given(a=_matrices())
def test_svd_matches_numpy(dtype, tol, a):
    x = _mx(a, dtype)
    a = _np(x)
    s_ref = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(_np(fnp.linalg.svd(x, compute_uv=False)), s_ref,
                               rtol=tol, atol=tol * 10)
    for full in (True, False):
        u, s, vh = (_np(t) for t in fnp.linalg.svd(x, full_matrices=full))
        ref = np.linalg.svd(a, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == tuple(r.shape for r in ref)
        np.testing.assert_allclose(s, s_ref, rtol=tol, atol=tol * 10)
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a,
                                   atol=tol * 100)
        for f in (u, np.swapaxes(vh, -1, -2)):
            np.testing.assert_allclose(np.swapaxes(f, -1, -2) @ f, np.broadcast_to(
                np.eye(f.shape[-1]), f.shape[:-2] + (f.shape[-1],) * 2), atol=tol * 10)


def test_svd_hermitian_symmetrizes():
    a = RNG.normal(size=(3, 3))
    s = fnp.linalg.svd(_mx(a), compute_uv=False, hermitian=True)
    np.testing.assert_allclose(np.array(s), np.sort(np.abs(np.linalg.eigvalsh(_sym(a))))[::-1],
                               rtol=1e-10)


@pytest.mark.parametrize("dtype, tol", DTYPES)
@given(a=_matrices())
def test_pinv_matches_numpy(dtype, tol, a):
    a = _np(_mx(a, dtype))
    m, n = a.shape[-2:]
    rtol = 10 * max(m, n) * float(mx.finfo(dtype).eps)  # JAX's default
    got = _np(fnp.linalg.pinv(_mx(a, dtype)))
    ref = np.linalg.pinv(a, rcond=rtol)
    scale = 1 + np.abs(ref).max(initial=0)
    np.testing.assert_allclose(got, ref, atol=tol * 100 * scale)


def test_pinv_rtol_cuts_singular_values():
    a = np.diag([10.0, 1.0, 0.01])
    for rtol in (1e-4, 0.01, 0.5):
        np.testing.assert_allclose(np.array(fnp.linalg.pinv(_mx(a), rtol)),
                                   np.linalg.pinv(a, rcond=rtol), rtol=1e-12)
    np.testing.assert_allclose(np.array(fnp.linalg.pinv(_mx(a), rcond=0.5)),
                               np.diag([0.1, 0.0, 0.0]), rtol=1e-12)
    # A batch of tolerances, one per matrix.
    got = np.array(fnp.linalg.pinv(_mx(np.stack([a, a])), _mx([1e-4, 0.5])))
    np.testing.assert_allclose(got[1], np.diag([0.1, 0.0, 0.0]), rtol=1e-12)
    np.testing.assert_allclose(got[0], np.linalg.inv(a), rtol=1e-12)


@pytest.mark.parametrize("b_shape", [(5,), (5, 2)])
@pytest.mark.parametrize("a_shape, rank", [((5, 3), 3), ((5, 3), 2), ((5, 5), 5), ((5, 7), 5)])
def test_lstsq_matches_numpy(a_shape, rank, b_shape):
    a = RNG.normal(size=(a_shape[0], rank)) @ RNG.normal(size=(rank, a_shape[1]))
    b = RNG.normal(size=b_shape)
    x, res, r, s = fnp.linalg.lstsq(_mx(a), _mx(b), numpy_resid=True)
    xr, resr, rr, sr = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(np.array(x), xr, rtol=1e-8, atol=1e-10)
    assert np.array(res).shape == resr.shape
    np.testing.assert_allclose(np.array(res), resr, rtol=1e-8, atol=1e-10)
    assert r.item() == rr and r.dtype == mx.int32
    np.testing.assert_allclose(np.array(s), sr, rtol=1e-10, atol=1e-12)
    # JAX's default: residuals always computed.
    _, res_all, _, _ = fnp.linalg.lstsq(_mx(a), _mx(b))
    err = (b - a @ xr).reshape(5, -1)
    np.testing.assert_allclose(np.array(res_all), np.sum(err * err, axis=0), atol=1e-8)


def test_lstsq_rcond_and_dtypes():
    a = np.diag([1.0, 1e-3, 0.0])
    b = np.ones(3)
    x, _, r, _ = fnp.linalg.lstsq(_mx(a), _mx(b), rcond=1e-2)
    np.testing.assert_allclose(np.array(x), [1.0, 0.0, 0.0])
    assert r.item() == 1
    assert fnp.linalg.lstsq(_mx(a), _mx(b), rcond=-1)[2].item() == 2  # negative: eps
    x, res, r, s = fnp.linalg.lstsq(mx.array([[1, 0], [0, 2], [0, 0]]), mx.array([1, 2, 3]))
    assert x.dtype == mx.float32 and x.tolist() == [1.0, 1.0] and res.tolist() == [9.0]


@given(a=_matrices(min_dims=2), rank=st.integers(0, 4))
def test_matrix_rank_matches_numpy(a, rank):
    k = min(a.shape[-2:])
    s = np.linalg.svd(a, compute_uv=False)
    # Make some matrices rank-deficient: keep ``rank`` factors of each.
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    s = np.where(np.arange(k) < rank, s + 1.0, 0.0)
    low = (u * s[..., None, :]) @ vh
    got = fnp.linalg.matrix_rank(_mx(low))
    assert got.dtype == mx.int32
    np.testing.assert_array_equal(np.array(got), np.linalg.matrix_rank(low))
    np.testing.assert_array_equal(np.array(got), np.full(a.shape[:-2], min(rank, k)))


def test_matrix_rank_tolerances():
    a = np.diag([10.0, 1.0, 0.05])
    assert fnp.linalg.matrix_rank(_mx(a), rtol=0.1).item() == np.linalg.matrix_rank(a, rtol=0.1)
    assert fnp.linalg.matrix_rank(_mx(a), tol=0.1).item() == np.linalg.matrix_rank(a, tol=0.1)
    assert fnp.linalg.matrix_rank(_mx(a), tol=0.01).item() == 3
    assert fnp.linalg.matrix_rank(_mx(np.stack([a, a])), rtol=_mx([0.01, 0.5])).tolist() == [2, 1]
    s = _rotated([2.0, -1.0, 0.0])
    assert fnp.linalg.matrix_rank(_mx(s), hermitian=True).item() == 2
    assert fnp.linalg.matrix_rank(mx.array([0.0, 1.0])).item() == 1
    assert fnp.linalg.matrix_rank(mx.zeros(3)).item() == 0
    assert fnp.linalg.matrix_rank(mx.array(2.0)).item() == 1


def test_dtypes():
    a = RNG.normal(size=(3, 3))
    for dtype in (mx.float16, mx.bfloat16):
        x = mx.array(a.astype(np.float32)).astype(dtype)
        q, r = fnp.linalg.qr(x)
        w, v = fnp.linalg.eigh(x)
        u, s, vh = fnp.linalg.svd(x)
        assert {t.dtype for t in (q, r, w, v, u, s, vh, fnp.linalg.pinv(x))} == {dtype}
    ints = mx.array([[2, 1], [1, 2]])
    assert fnp.linalg.eigvalsh(ints).tolist() == [1.0, 3.0]
    assert fnp.linalg.qr(ints).R.dtype == mx.float32


# ----------------------------------------------------------------------------
# Derivatives at degenerate spectra
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("a", [np.eye(3), np.diag([1.0, 1.0, 2.0]), _rotated([1.0, 1.0, 2.0]),
                               np.zeros((3, 3))], ids=["eye", "diag", "rotated", "zeros"])
def test_eigenvalue_sum_gradient_is_identity_at_degeneracy(a):
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.eigvalsh(x)))(_mx(a))
    np.testing.assert_allclose(np.array(g), np.eye(3), atol=1e-10)
    # Through eigh too (the vectors unused) and for a symmetric function of the cluster.
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.eigh(x).eigenvalues ** 2))(_mx(a))
    np.testing.assert_allclose(np.array(g), 2 * _sym(a), atol=1e-9)


def test_largest_eigenvalue_gradient_is_a_subgradient():
    a = np.diag([1.0, 1.0, 0.0])
    g = np.array(ft.grad(lambda x: fnp.linalg.eigvalsh(x)[-1])(_mx(a)))
    # v v^T for a unit v in the top eigenspace: symmetric, PSD, trace 1, zero on e3.
    np.testing.assert_allclose(g, g.T, atol=1e-12)
    np.testing.assert_allclose(np.trace(g), 1.0, atol=1e-12)
    np.testing.assert_allclose(g[2], 0.0, atol=1e-12)
    np.testing.assert_allclose(g @ g, g, atol=1e-12)


def _np_projector_loss(b):
    def loss(a):
        _, v = np.linalg.eigh(_sym(a))
        top = v[:, 1:]
        return np.sum(b * (top @ top.T))
    return loss


def test_projector_gradient_is_exact_at_degeneracy():
    # The projector onto the (repeated) top eigenspace is basis-independent.
    a = _rotated([0.0, 1.0, 1.0])
    b = RNG.normal(size=(3, 3))

    def loss(x):
        v = fnp.linalg.eigh(x).eigenvectors[:, 1:]
        return fnp.sum(_mx(b) * (v @ v.T))

    g = np.array(ft.grad(loss)(_mx(a)))
    np.testing.assert_allclose(g, np_fd_grad(_np_projector_loss(b), a), atol=1e-7)


def _cube_loss(b):
    """``<B, V f(w) V^T>`` with ``f(w) = w^3`` (a polynomial: MLX's float64
    ``exp`` is only float32-accurate)."""
    def loss(x):
        w, v = fnp.linalg.eigh(x)
        return fnp.sum(_mx(b) * ((v * (w * w * w)) @ v.T))
    return loss


def _np_cube_grad(a, b):
    """The exact gradient of ``<B, A^3>`` (Daleckii-Krein): ``V (L o V^T B V) V^T``."""
    w, v = np.linalg.eigh(_sym(a))
    lw = w[:, None] ** 2 + w[:, None] * w[None, :] + w[None, :] ** 2
    return v @ (lw * (v.T @ _sym(b) @ v)) @ v.T


def test_matrix_function_at_degeneracy_drops_the_within_eigenspace_term():
    # <B, V w^3 V^T> at A = I: the true gradient is 3 sym(B); the coupling
    # within the repeated eigenspace (it needs f' at the repeated
    # eigenvalue, which eigh's rule never sees) is dropped: 3 diag(B).
    b = _sym(RNG.normal(size=(3, 3)))
    g = np.array(ft.grad(_cube_loss(b))(_mx(np.eye(3))))
    np.testing.assert_allclose(g, 3 * np.diag(np.diag(b)), atol=1e-12)
    # Away from degeneracy it is exact.
    a = _rotated([0.5, 1.0, 2.0])
    np.testing.assert_allclose(np.array(ft.grad(_cube_loss(b))(_mx(a))), _np_cube_grad(a, b),
                               atol=1e-12)


def test_gauge_dependent_loss_at_degeneracy_is_finite():
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.eigh(x).eigenvectors[:, 0] ** 3))(_mx(np.eye(3)))
    assert np.all(np.isfinite(np.array(g)))
    t = ft.jvp(lambda x: fnp.linalg.eigh(x).eigenvectors, (_mx(np.eye(3)),),
               (_mx(_sym(RNG.normal(size=(3, 3)))),))[1]
    np.testing.assert_array_equal(np.array(t), 0.0)  # no coupling within the eigenspace


@pytest.mark.parametrize("gap", [1e-3, 1e-6, 1e-9])
def test_near_degenerate_eigenvalues_are_differentiated_exactly(gap):
    # Gaps far above the degeneracy tolerance (~1e-15 here) keep every
    # coupling; the error grows as eps / gap (the vectors' own accuracy).
    a = _rotated([1.0, 1.0 + gap, 2.0])
    b = _sym(RNG.normal(size=(3, 3)))
    np.testing.assert_allclose(np.array(ft.grad(_cube_loss(b))(_mx(a))), _np_cube_grad(a, b),
                               atol=1e-15 / gap)


def test_singular_values_at_degeneracy():
    for a in (np.eye(3), np.diag([2.0, 1.0, 1.0]), np.zeros((3, 3))):
        g = ft.grad(lambda x: fnp.sum(fnp.linalg.svd(x, compute_uv=False) ** 2))(_mx(a))
        np.testing.assert_allclose(np.array(g), 2 * a, atol=1e-10)
    # The nuclear norm at I: gradient I (the subgradient U V^T).
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.svd(x, compute_uv=False)))(_mx(np.eye(3)))
    np.testing.assert_allclose(np.array(g), np.eye(3), atol=1e-12)


def test_svd_reconstruction_keeps_skew_part_at_degeneracy():
    # <B, U S Vh> = <B, A>: gradient B. At A = I (all singular values 1)
    # the skew part of B (a rotation of U against V) survives; the
    # symmetric off-diagonal part is dropped, as for eigh.
    b = RNG.normal(size=(3, 3))

    def loss(x):
        u, s, vh = fnp.linalg.svd(x)
        return fnp.sum(_mx(b) * ((u * s) @ vh))

    g = np.array(ft.grad(loss)(_mx(np.eye(3))))
    skew = (b - b.T) / 2
    np.testing.assert_allclose(g, skew + np.diag(np.diag(b)), atol=1e-10)
    # With distinct singular values the gradient is B.
    a = np.diag([3.0, 2.0, 1.0]) + 0.1 * RNG.normal(size=(3, 3))
    np.testing.assert_allclose(np.array(ft.grad(loss)(_mx(a))), b, atol=1e-9)


def test_svd_zero_singular_values_drop_the_undetermined_part():
    # A rank-1 tall matrix: U's extra directions are undetermined.
    a = np.outer([1.0, 2.0, 2.0, 0.0], [1.0, -1.0])
    b = RNG.normal(size=(4, 2))

    def loss(x):
        u, s, vh = fnp.linalg.svd(x, full_matrices=False)
        return fnp.sum(_mx(b) * ((u * s) @ vh))

    g = np.array(ft.grad(loss)(_mx(a)))
    # U S Vh is a itself, so the true gradient is b, but its part along
    # (I - U U^T) b v2 v2^T passes through u2 * s2 with s2 = 0, where u2 is
    # undetermined (its derivative ~ 1/s2): that part is dropped.
    u, s, vh = (np.array(t) for t in fnp.linalg.svd(_mx(a), full_matrices=False))
    v2 = vh[1]
    lost = (np.eye(4) - u @ u.T) @ b @ np.outer(v2, v2)
    np.testing.assert_allclose(g, b - lost, atol=1e-10)


# ----------------------------------------------------------------------------
# Derivatives that are refused, and the ones that remain
# ----------------------------------------------------------------------------


def test_qr_complete_tall_q_derivative_is_refused():
    a = _mx(RNG.normal(size=(4, 2)))
    with pytest.raises(NotImplementedError, match="qr: the complete Q of a tall matrix"):
        ft.grad(lambda x: fnp.sum(fnp.linalg.qr(x, mode="complete").Q))(a)
    with pytest.raises(NotImplementedError, match="qr: the complete Q"):
        ft.jvp(lambda x: fnp.linalg.qr(x, mode="complete"), (a,), (a,))
    # R alone (its last rows are zero) is differentiable in reverse mode.
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.qr(x, mode="complete").R ** 2))(a)
    g_red = ft.grad(lambda x: fnp.sum(fnp.linalg.qr(x, mode="r") ** 2))(a)
    np.testing.assert_allclose(np.array(g), np.array(g_red), rtol=1e-12)
    np.testing.assert_allclose(np.array(g), 2 * np.array(a), rtol=1e-10)  # |R|^2 = |A|^2


def test_svd_full_matrices_derivative_is_refused_for_non_square():
    a = _mx(RNG.normal(size=(4, 2)))
    with pytest.raises(NotImplementedError, match="svd: the full U and Vh"):
        ft.grad(lambda x: fnp.sum(fnp.linalg.svd(x).U[:, -1]))(a)
    with pytest.raises(NotImplementedError, match="svd: the full U and Vh"):
        ft.jvp(lambda x: fnp.linalg.svd(x), (a,), (a,))
    # The singular values alone are differentiable (reverse mode) ...
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.svd(x).S))(a)
    g2 = ft.grad(lambda x: fnp.sum(fnp.linalg.svd(x, compute_uv=False)))(a)
    np.testing.assert_allclose(np.array(g), np.array(g2), rtol=1e-12)
    # ... and so is a square matrix's full SVD.
    sq = _mx(RNG.normal(size=(3, 3)))
    check_jvp_fd(lambda x: fnp.linalg.svd(x).S, (sq,))


def test_pinv_derivative_at_constant_rank():
    # A = B C of rank 2 (4 x 3): perturbing B and C keeps the rank, and the
    # derivative (Golub-Pereyra) is exact there, unlike the SVD's.
    b, c = RNG.normal(size=(4, 2)), RNG.normal(size=(2, 3))
    fn = lambda x, y: fnp.linalg.pinv(x @ y)  # noqa: E731
    check_jvp_fd(fn, (_mx(b), _mx(c)))
    check_vjp_dot(fn, (_mx(b), _mx(c)))
    # Rank-deficient least squares: the minimum-norm solution's derivative.
    y = RNG.normal(size=4)
    fn = lambda x, z, v: fnp.linalg.lstsq(x @ z, v, rcond=1e-10)[0]  # noqa: E731
    check_jvp_fd(fn, (_mx(b), _mx(c), _mx(y)))


def test_lstsq_gradient_matches_normal_equations():
    a, b = RNG.normal(size=(6, 3)), RNG.normal(size=6)
    g = ft.grad(lambda v: fnp.sum(fnp.linalg.lstsq(_mx(a), v)[0]))(_mx(b))
    np.testing.assert_allclose(np.array(g), np.linalg.pinv(a).T @ np.ones(3), rtol=1e-10)


def test_matrix_rank_is_not_differentiated():
    g = ft.grad(lambda x: fnp.sum(x) + fnp.linalg.matrix_rank(x).astype(mx.float32))(
        mx.eye(2))
    assert g.tolist() == [[1.0, 1.0], [1.0, 1.0]]


# ----------------------------------------------------------------------------
# Transforms
# ----------------------------------------------------------------------------


@given(a=conditioned(max_batch=0))
def test_vmap_and_jit_of_public_functions(a):
    stack = np.stack([a, 2 * a + 0.1, -a])
    x = _mx(stack)
    fns = [
        lambda m: fnp.linalg.qr(m),
        lambda m: fnp.linalg.svd(m, full_matrices=False),
        lambda m: fnp.linalg.svd(m, compute_uv=False),
        lambda m: fnp.linalg.pinv(m),
        lambda m: fnp.linalg.matrix_rank(m),
        lambda m: fnp.linalg.eigh(m @ m.T),
        lambda m: fnp.linalg.eigvalsh(m.T @ m, UPLO="U"),
    ]
    for fn in fns:
        loop = [fn(x[i]) for i in range(3)]
        for out in (ft.vmap(fn)(x), ft.jit(ft.vmap(fn))(x)):
            for k, leaf in enumerate(ft.tree.leaves(out)):
                ref = np.stack([np.array(ft.tree.leaves(o)[k]) for o in loop])
                np.testing.assert_allclose(np.array(leaf), ref, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np.array(ft.tree.leaves(ft.jit(fn)(x[0]))[0]),
                                   np.array(ft.tree.leaves(loop[0])[0]), rtol=1e-12)


def test_vmap_lstsq_and_jit_grad():
    a, b = RNG.normal(size=(3, 5, 2)), RNG.normal(size=(3, 5))
    x, res, rank, s = ft.vmap(fnp.linalg.lstsq)(_mx(a), _mx(b))
    for i in range(3):
        xr, rr, kr, sr = np.linalg.lstsq(a[i], b[i], rcond=None)
        np.testing.assert_allclose(np.array(x[i]), xr, rtol=1e-10)
        np.testing.assert_allclose(np.array(res[i]), rr, rtol=1e-8)
        assert rank[i].item() == kr
    with pytest.raises(TypeError, match="numpy_resid=True needs the rank"):
        ft.jit(lambda p, q: fnp.linalg.lstsq(p, q, numpy_resid=True))(_mx(a[0]), _mx(b[0]))

    def loss(m):
        w, v = fnp.linalg.eigh(m)
        u, s, vh = fnp.linalg.svd(m, full_matrices=False)
        return fnp.sum(w ** 3) + fnp.sum(s) + fnp.sum(fnp.linalg.qr(m).R ** 2)

    m = _mx(_rotated([0.5, 1.5, 3.0]))
    np.testing.assert_allclose(np.array(ft.jit(ft.grad(loss))(m)), np.array(ft.grad(loss)(m)),
                               rtol=1e-10)


# ----------------------------------------------------------------------------
# Empty inputs (never sent to LAPACK)
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (0, 2, 2)])
def test_empty_inputs(shape):
    a = mx.zeros(shape)
    m, n = shape[-2:]
    batch = shape[:-2]
    k = min(m, n)
    q, r = fnp.linalg.qr(a)
    assert (q.shape, r.shape) == (batch + (m, k), batch + (k, n))
    q, r = fnp.linalg.qr(a, mode="complete")
    assert (q.shape, r.shape) == (batch + (m, m), batch + (m, n))
    u, s, vh = fnp.linalg.svd(a)
    assert (u.shape, s.shape, vh.shape) == (batch + (m, m), batch + (min(m, n),), batch + (n, n))
    if batch == () and m == 3:
        assert u.tolist() == np.eye(3).tolist()  # as JAX
    assert fnp.linalg.svd(a, full_matrices=False).U.shape == batch + (m, min(m, n))
    assert fnp.linalg.pinv(a).shape == batch + (n, m)
    assert fnp.linalg.matrix_rank(a).tolist() == np.zeros(batch, int).tolist()
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.svd(x, full_matrices=False).S)
                + fnp.sum(fnp.linalg.qr(x).R) + fnp.sum(fnp.linalg.pinv(x)))(a)
    assert g.shape == shape
    if m == n:
        w, v = fnp.linalg.eigh(a)
        assert (w.shape, v.shape) == (batch + (n,), shape)
        assert ft.grad(lambda x: fnp.sum(fnp.linalg.eigvalsh(x)))(a).shape == shape


def test_empty_lstsq():
    x, res, rank, s = fnp.linalg.lstsq(mx.zeros((0, 2)), mx.zeros(0))
    assert x.tolist() == [0.0, 0.0] and res.tolist() == [0.0] and rank.item() == 0
    assert s.shape == (0,)


def test_non_finite_input_gives_nan_without_crashing():
    # LAPACK's SVD fails on a NaN (MLX raises at evaluation, which can leave
    # MLX unusable): run it where a crash cannot take the test run down.
    out = run_child("""
        a = mx.array([[[1.0, float('nan')], [0.0, 1.0]], [[3.0, 0.0], [0.0, 2.0]]])
        u, s, vh = fnp.linalg.svd(a)
        print(np.isnan(np.array(s[0])).all(), s[1].tolist())
        print(np.isnan(np.array(fnp.linalg.pinv(a)[0])).all())
        print(fnp.linalg.matrix_rank(a).tolist()[1])
    """)
    assert out.split() == ["True", "[3.0,", "2.0]", "True", "2"]


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("fn, args, kwargs, error, message", [
    (fnp.linalg.eigh, (np.ones((2, 3)),), {}, ValueError, "eigh: argument a must be a square"),
    (fnp.linalg.eigvalsh, (np.ones(3),), {}, ValueError, "eigvalsh: argument a must be a square"),
    (fnp.linalg.eigh, (np.eye(2),), {"UPLO": "X"}, ValueError, "eigh: UPLO must be 'L' or 'U'"),
    (fnp.linalg.eigvalsh, (np.eye(2), "lower"), {}, ValueError, "eigvalsh: UPLO must be"),
    (fnp.linalg.qr, (np.ones(3),), {}, ValueError, "qr: argument a must be a matrix"),
    (fnp.linalg.qr, (np.eye(2),), {"mode": "economic"}, ValueError, "qr: mode must be"),
    (fnp.linalg.qr, (np.eye(2),), {"mode": "raw"}, NotImplementedError, "qr: mode='raw'"),
    (fnp.linalg.svd, (np.ones(3),), {}, ValueError, "svd: argument a must be a matrix"),
    (fnp.linalg.svd, (np.ones((2, 3)),), {"hermitian": True}, ValueError,
     "svd: argument a must be a square"),
    (fnp.linalg.pinv, (np.eye(2), 0.1), {"rcond": 0.1}, ValueError, "pinv: give only one"),
    (fnp.linalg.pinv, (np.ones((2, 2, 2)), np.ones(3)), {}, ValueError,
     "pinv: argument rtol must be a scalar or broadcast"),
    (fnp.linalg.lstsq, (np.ones((2, 3, 3)), np.ones(3)), {}, ValueError,
     "lstsq: argument a must be a matrix"),
    (fnp.linalg.lstsq, (np.ones((3, 2)), np.ones(4)), {}, ValueError,
     "must have the same number of rows"),
    (fnp.linalg.lstsq, (np.ones((3, 2)), np.ones((3, 1, 1))), {}, ValueError,
     "lstsq: argument b must have shape"),
    (fnp.linalg.matrix_rank, (np.eye(2),), {"rtol": 0.1, "tol": 0.1}, ValueError,
     "matrix_rank: give only one"),
])
def test_errors_name_the_function_and_argument(fn, args, kwargs, error, message):
    args = [mx.array(a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(error, match=message):
        fn(*args, **kwargs)


def test_complex_input_is_refused():
    with pytest.raises(TypeError, match="svd: argument a is complex"):
        fnp.linalg.svd(mx.array([[1 + 1j, 0], [0, 1]]))


def test_primitive_batching_rules_move_the_batch_axis():
    a = _mx(RNG.normal(size=(3, 2, 3)))
    out = ft.vmap(lambda x: lax.svd(x, compute_uv=False)[0], in_axes=2)(a)
    np.testing.assert_allclose(np.array(out), np.linalg.svd(np.moveaxis(np.array(a), 2, 0),
                                                            compute_uv=False), rtol=1e-12)
    rt = _mx([1e-3, 0.9])
    p = ft.vmap(lax.pinv, in_axes=(None, 0))(_mx(np.diag([2.0, 1.0])), rt)
    np.testing.assert_allclose(np.array(p), [np.diag([0.5, 1.0]), np.diag([0.5, 0.0])])
