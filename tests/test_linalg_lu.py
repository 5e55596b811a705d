"""Values, gradients, batching and argument errors of the LU-based parts of
ftorch.numpy.linalg (solve, inv, det, slogdet, matrix_power, multi_dot,
cross, norms, tensorsolve/tensorinv) and ftorch.scipy.linalg (lu_factor,
lu_solve, lu, det, inv, solve), and of the lu / solve / det primitives."""

import mlx.core as mx
import numpy as np
import pytest
import scipy.linalg as sl
from child import run_child
from harness import np_fd_grad

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.primitives as lax
import ftorch.scipy.linalg as fsl
from ftorch.numpy import _linalg_orthogonal

RNG = np.random.default_rng(0)
DTYPES = [(mx.float32, np.float32, 1e-4), (mx.float64, np.float64, 1e-10)]


def _mx(x, dtype=mx.float64):
    return mx.array(np.asarray(x), dtype=dtype)


def _general(*shape):
    return RNG.normal(size=shape) + 0.5 * shape[-1] * np.eye(shape[-1])


# ----------------------------------------------------------------------------
# Values against NumPy / SciPy
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, np_dtype, tol", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 4, 4), (2, 1, 3, 3)])
def test_solve_inv_det_slogdet_match_numpy(dtype, np_dtype, tol, shape):
    a = RNG.normal(size=shape).astype(np_dtype)
    b = RNG.normal(size=(*shape[:-1], 2)).astype(np_dtype)
    x = fnp.linalg.solve(_mx(a, dtype), _mx(b, dtype))
    assert x.dtype == dtype
    np.testing.assert_allclose(np.array(x), np.linalg.solve(a, b), rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(np.array(fnp.linalg.inv(_mx(a, dtype))), np.linalg.inv(a),
                               rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(np.array(fnp.linalg.det(_mx(a, dtype))), np.linalg.det(a),
                               rtol=tol * 10, atol=tol)
    sign, logabsdet = fnp.linalg.slogdet(_mx(a, dtype))
    ref = np.linalg.slogdet(a)
    np.testing.assert_array_equal(np.array(sign), ref.sign)
    np.testing.assert_allclose(np.array(logabsdet), ref.logabsdet, rtol=tol * 10, atol=tol)


def test_solve_b_shapes_follow_jax():
    a = _general(3, 4, 4)
    # b 1-d: one vector for every matrix.
    b = RNG.normal(size=4)
    np.testing.assert_allclose(np.array(fnp.linalg.solve(_mx(a), _mx(b))),
                               np.linalg.solve(a, b[None, :, None])[..., 0], rtol=1e-10)
    # b (..., n, k) with broadcasting batch dimensions.
    b = RNG.normal(size=(2, 1, 4, 3))
    x = np.array(fnp.linalg.solve(_mx(a), _mx(b)))
    assert x.shape == (2, 3, 4, 3)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)
    # b of ndim a.ndim - 1 is a matrix (JAX >= 0.5), here (4, 4) against (3, 4, 4).
    b = RNG.normal(size=(4, 4))
    np.testing.assert_allclose(np.array(fnp.linalg.solve(_mx(a), _mx(b))), np.linalg.solve(a, b),
                               rtol=1e-10)


def test_integer_inputs_promote_to_float32():
    a = mx.array([[2, 1], [1, 3]])
    assert fnp.linalg.solve(a, mx.array([3, 5])).dtype == mx.float32
    assert fnp.linalg.det(a).item() == pytest.approx(5.0)
    assert fnp.linalg.inv(a).dtype == mx.float32


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 4, 4), (1, 1), (4, 1), (1, 4)])
def test_lu_primitive_and_scipy_lu(shape):
    a = RNG.normal(size=shape)
    lu, piv, perm = lax.lu(_mx(a))
    assert lu.shape == shape and piv.dtype == mx.int32 and perm.dtype == mx.int32
    m, n = shape[-2:]
    k = min(m, n)
    low = np.tril(np.array(lu), -1)[..., :k] + np.eye(m, k)
    up = np.triu(np.array(lu))[..., :k, :]
    np.testing.assert_allclose(np.take_along_axis(a, np.array(perm)[..., None], -2), low @ up,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.array(lax.lu_pivots_to_permutation(piv, m)),
                                  np.array(perm))
    if len(shape) == 2:
        p, l_, u = fsl.lu(_mx(a))
        for got, ref in zip((p, l_, u), sl.lu(a)):
            np.testing.assert_allclose(np.array(got), ref, rtol=1e-12, atol=1e-12)
        pl, u = fsl.lu(_mx(a), permute_l=True)
        np.testing.assert_allclose(np.array(pl), sl.lu(a, permute_l=True)[0], rtol=1e-12,
                                   atol=1e-12)
        if m == n:
            lu_s, piv_s = sl.lu_factor(a)
            lu_f, piv_f = fsl.lu_factor(_mx(a))
            np.testing.assert_allclose(np.array(lu_f), lu_s, rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(np.array(piv_f), piv_s)


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("b_shape", [(4,), (4, 3), (2, 4, 3)])
def test_lu_solve(trans, b_shape):
    a = RNG.normal(size=(4, 4))
    b = RNG.normal(size=b_shape)
    x = fsl.lu_solve(fsl.lu_factor(_mx(a)), _mx(b), trans=trans)
    ref = np.linalg.solve(a.T if trans else a, b if len(b_shape) > 1 else b)
    np.testing.assert_allclose(np.array(x), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("lower", [False, True])
def test_scipy_solve(assume_a, lower):
    m = RNG.normal(size=(4, 4))
    a = m @ m.T + 4 * np.eye(4)
    b = RNG.normal(size=(4, 2))
    np.testing.assert_allclose(np.array(fsl.solve(_mx(a), _mx(b), lower=lower,
                                                  assume_a=assume_a)),
                               sl.solve(a, b, lower=lower, assume_a=assume_a), rtol=1e-10)
    np.testing.assert_allclose(np.array(fsl.det(_mx(a))), np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(np.array(fsl.inv(_mx(a))), np.linalg.inv(a), rtol=1e-10)


def test_scipy_solve_pos_reads_one_triangle():
    m = RNG.normal(size=(3, 3))
    a = m @ m.T + 3 * np.eye(3)
    junk = a + np.triu(np.full((3, 3), 7.0), 1)  # upper triangle garbage
    b = RNG.normal(size=3)
    np.testing.assert_allclose(np.array(fsl.solve(_mx(junk), _mx(b), lower=True, assume_a="pos")),
                               np.linalg.solve(a, b), rtol=1e-10)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, -1, -3])
def test_matrix_power(n):
    a = _general(2, 3, 3)
    np.testing.assert_allclose(np.array(fnp.linalg.matrix_power(_mx(a), n)),
                               np.linalg.matrix_power(a, n), rtol=1e-9, atol=1e-12)


def test_matrix_power_integers_stay_integers():
    out = fnp.linalg.matrix_power(mx.array([[1, 1], [1, 0]]), 5)
    assert out.dtype == mx.int32 and out.tolist() == [[8, 5], [5, 3]]
    assert fnp.linalg.matrix_power(mx.array([[1, 2], [3, 4]]), 0).tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize("shapes", [
    [(3, 4), (4, 5)], [(10,), (10, 100), (100, 5), (5,)], [(2, 30), (30, 3), (3, 40), (40, 1)],
    [(6,), (6, 2)], [(2, 6), (6,)], [(20, 2), (2, 20), (20, 2), (2, 20), (20, 3)],
])
def test_multi_dot(shapes):
    xs = [RNG.normal(size=s) for s in shapes]
    np.testing.assert_allclose(np.array(fnp.linalg.multi_dot([_mx(x) for x in xs])),
                               np.linalg.multi_dot(xs), rtol=1e-10, atol=1e-10)


def test_multi_dot_chooses_the_cheap_order():
    from ftorch.numpy.linalg import _chain_order
    # (10 x 100)(100 x 5)(5 x 50): (AB)C costs 7500, A(BC) 75000.
    assert _chain_order([10, 100, 5, 50])[0][2] == 1


def test_cross():
    a, b = RNG.normal(size=(4, 3)), RNG.normal(size=(2, 1, 3))
    np.testing.assert_allclose(np.array(fnp.linalg.cross(_mx(a), _mx(b))), np.cross(a, b),
                               rtol=1e-12)
    a, b = RNG.normal(size=(3, 5)), RNG.normal(size=(3, 5))
    np.testing.assert_allclose(np.array(fnp.linalg.cross(_mx(a), _mx(b), axis=0)),
                               np.cross(a, b, axis=0), rtol=1e-12)


VECTOR_ORDS = [None, 2, 1, -1, np.inf, -np.inf, 0, 3, 0.5, -2.5]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf]
SVD_ORDS = ["nuc", 2, -2]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's 0 ** negative
@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, True), (-1, False)])
def test_vector_norms(ord, axis, keepdims):
    x = RNG.normal(size=(5,) if axis is None else (3, 5))
    x[..., 0] = 0.0
    got = fnp.linalg.norm(_mx(x), ord=ord, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(np.array(got),
                               np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims),
                               rtol=1e-12)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), ((0, 2), True), ((2, 0), False)])
def test_matrix_norms(ord, axis, keepdims):
    x = RNG.normal(size=(4, 5) if axis is None else (4, 3, 5))
    np.testing.assert_allclose(
        np.array(fnp.linalg.norm(_mx(x), ord=ord, axis=axis, keepdims=keepdims)),
        np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims), rtol=1e-12)


@pytest.mark.skipif(not hasattr(_linalg_orthogonal, "svd"), reason="svd not available yet")
@pytest.mark.parametrize("ord", SVD_ORDS)
def test_matrix_norms_through_svd(ord):
    x = RNG.normal(size=(2, 4, 3))
    np.testing.assert_allclose(np.array(fnp.linalg.norm(_mx(x), ord=ord, axis=(1, 2))),
                               np.linalg.norm(x, ord=ord, axis=(1, 2)), rtol=1e-10)
    np.testing.assert_allclose(np.array(fnp.linalg.matrix_norm(_mx(x), ord=ord)),
                               np.linalg.norm(x, ord=ord, axis=(-2, -1)), rtol=1e-10)


def test_norm_defaults_and_array_api_names():
    x = RNG.normal(size=(2, 3, 4))
    assert fnp.linalg.norm(_mx(x)).item() == pytest.approx(np.sqrt((x ** 2).sum()))
    assert fnp.linalg.norm(_mx(x), keepdims=True).shape == (1, 1, 1)
    np.testing.assert_allclose(np.array(fnp.linalg.vector_norm(_mx(x), axis=(0, 2), ord=1)),
                               np.abs(x).sum(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(np.array(fnp.linalg.matrix_norm(_mx(x), ord=1)),
                               np.linalg.norm(x, ord=1, axis=(-2, -1)), rtol=1e-12)
    assert fnp.linalg.norm(mx.array([3, 4])).item() == 5.0


def test_tensorinv_and_tensorsolve():
    a = _general(6, 6).reshape(6, 2, 3)
    np.testing.assert_allclose(np.array(fnp.linalg.tensorinv(_mx(a), ind=1)),
                               np.linalg.tensorinv(a, ind=1), rtol=1e-10)
    a = _general(6, 6).reshape(2, 3, 6)
    b = RNG.normal(size=(2, 3))
    np.testing.assert_allclose(np.array(fnp.linalg.tensorsolve(_mx(a), _mx(b))),
                               np.linalg.tensorsolve(a, b), rtol=1e-10)


# ----------------------------------------------------------------------------
# Empty matrices (never handed to LAPACK)
# ----------------------------------------------------------------------------


def test_empty_matrices():
    z = mx.zeros((2, 0, 0))
    assert fnp.linalg.det(z).tolist() == [1.0, 1.0]
    sign, logabsdet = fnp.linalg.slogdet(z)
    assert sign.tolist() == [1.0, 1.0] and logabsdet.tolist() == [0.0, 0.0]
    assert fnp.linalg.inv(z).shape == (2, 0, 0)
    assert fnp.linalg.solve(mx.zeros((0, 0)), mx.zeros(0)).shape == (0,)
    assert fnp.linalg.solve(mx.zeros((3, 3)), mx.zeros((3, 0))).shape == (3, 0)
    lu, piv, perm = lax.lu(mx.zeros((0, 4, 4)))
    assert lu.shape == (0, 4, 4) and piv.shape == (0, 4) and perm.shape == (0, 4)
    assert ft.grad(lambda a: fnp.linalg.det(a).sum())(z).shape == (2, 0, 0)
    assert fnp.linalg.matrix_power(z, 3).shape == (2, 0, 0)


# ----------------------------------------------------------------------------
# Singular matrices: NaN / inf, never an error (checked in a child process,
# as any error raised while MLX evaluates could leave it in a bad state)
# ----------------------------------------------------------------------------


def test_singular_matrices_give_nan_not_errors():
    out = run_child("""
        s = mx.array([[1.0, 2.0], [2.0, 4.0]])
        x = fnp.linalg.solve(s, mx.array([1.0, 1.0]))
        i = fnp.linalg.inv(mx.stack([s, mx.eye(2)]))
        sign, logabsdet = fnp.linalg.slogdet(s)
        import ftorch.scipy.linalg as fsl
        y = fsl.lu_solve(fsl.lu_factor(s), mx.array([1.0, 1.0]))
        print(bool(mx.isnan(x).all()), bool(mx.isnan(i[0]).all()), i[1].tolist(),
              fnp.linalg.det(s).item(), sign.item(), logabsdet.item(),
              bool(mx.isnan(y).all()))
    """)
    assert out.split() == ["True", "True", "[[1.0,", "0.0],", "[0.0,", "1.0]]", "0.0", "0.0",
                           "-inf", "True"]


# ----------------------------------------------------------------------------
# Gradients
# ----------------------------------------------------------------------------


def test_slogdet_gradient_matches_finite_differences():
    a = _general(4, 4)
    g = ft.grad(lambda x: fnp.linalg.slogdet(x).logabsdet)(_mx(a))
    np.testing.assert_allclose(np.array(g), np_fd_grad(lambda x: np.linalg.slogdet(x)[1], a),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.array(g), np.linalg.inv(a).T, rtol=1e-10)


def test_solve_gradients_match_finite_differences():
    a, b, w = _general(3, 3), RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))

    def loss(a_, b_):
        return fnp.sum(fnp.linalg.solve(a_, b_) * _mx(w))

    ga, gb = ft.grad(loss, argnums=(0, 1))(_mx(a), _mx(b))
    np.testing.assert_allclose(np.array(ga), np_fd_grad(lambda x: (np.linalg.solve(x, b) * w).sum(),
                                                      a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.array(gb), np_fd_grad(lambda x: (np.linalg.solve(a, x) * w).sum(),
                                                      b), rtol=1e-6, atol=1e-8)


def test_solve_gradient_with_broadcast_batch_and_vector_b():
    a, b = _general(2, 3, 3), RNG.normal(size=3)
    gb = ft.grad(lambda b_: fnp.sum(fnp.linalg.solve(_mx(a), b_)))(_mx(b))
    ref = np_fd_grad(lambda x: np.linalg.solve(a, x[None, :, None]).sum(), b)
    np.testing.assert_allclose(np.array(gb), ref, rtol=1e-6, atol=1e-8)


def _adjugate(a):
    n = len(a)
    cof = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            cof[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return cof.T


@pytest.mark.parametrize("a", [
    [[1.0, 2.0], [2.0, 4.0]],                              # rank 1 = n - 1
    [[0.0, 1.0], [0.0, 2.0]],                              # zero first column
    [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]],  # rank 2 = n - 1
    [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],  # rank 2
    [[1.0, 2.0, 4.0], [2.0, 4.0, 8.0], [4.0, 8.0, 16.0]],  # rank 1 = n - 2: adjugate 0
    [[0.0, 0.0], [0.0, 0.0]],                              # rank 0
    [[2.0, 1.0], [1.0, 3.0]],                              # regular
])
def test_det_gradient_is_the_adjugate_at_singular_matrices(a):
    a = np.array(a)
    g = np.array(ft.grad(fnp.linalg.det)(_mx(a)))
    np.testing.assert_allclose(g, _adjugate(a).T, rtol=1e-9, atol=1e-9)
    # Forward mode agrees: d det = <adj(a)^T, da>.
    da = RNG.normal(size=a.shape)
    _, t = ft.jvp(fnp.linalg.det, (_mx(a),), (_mx(da),))
    assert t.item() == pytest.approx(float((_adjugate(a).T * da).sum()), abs=1e-9)


def test_det_gradient_batched_singular():
    a = np.stack([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]])
    g = np.array(ft.grad(lambda x: fnp.linalg.det(x).sum())(_mx(a)))
    np.testing.assert_allclose(g, np.stack([_adjugate(m).T for m in a]), atol=1e-12)


def test_norm_gradient_at_zero_is_zero():
    for f in (fnp.linalg.norm, lambda x: fnp.linalg.norm(x, ord="fro"),
              lambda x: fnp.linalg.vector_norm(x, axis=0).sum()):
        g = ft.grad(f)(mx.zeros((2, 2)))
        assert g.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    g = ft.grad(fnp.linalg.norm)(_mx([3.0, 4.0]))
    np.testing.assert_allclose(np.array(g), [0.6, 0.8], rtol=1e-12)


def test_matrix_power_and_multi_dot_gradients():
    a = _general(3, 3)
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.matrix_power(x, -2)))(_mx(a))
    np.testing.assert_allclose(
        np.array(g), np_fd_grad(lambda x: np.linalg.matrix_power(x, -2).sum(), a), rtol=1e-6,
        atol=1e-8)
    b = RNG.normal(size=(3, 4))
    g = ft.grad(lambda x: fnp.linalg.multi_dot([x, _mx(b), _mx(b.T)]).sum())(_mx(a))
    np.testing.assert_allclose(np.array(g), np_fd_grad(lambda x: (x @ b @ b.T).sum(), a),
                               rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------
# vmap and jit
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda a, b: fnp.linalg.solve(a, b),
    lambda a, b: fnp.linalg.inv(a) @ b,
    lambda a, b: fnp.linalg.det(a) * b,
    lambda a, b: fnp.linalg.slogdet(a).logabsdet * b,
    lambda a, b: fnp.linalg.matrix_power(a, -2) @ b,
    lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=1),
    lambda a, b: fsl.lu(a)[1] @ b,
    lambda a, b: fnp.linalg.norm(a, ord=1) * b,
    lambda a, b: fnp.linalg.cross(a, b.T),
])
def test_vmap_and_jit_match_a_loop(fn):
    a, b = _general(4, 3, 3), RNG.normal(size=(4, 3, 3))
    loop = np.stack([np.array(fn(_mx(a[i]), _mx(b[i]))) for i in range(4)])
    np.testing.assert_allclose(np.array(ft.vmap(fn)(_mx(a), _mx(b))), loop, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(np.array(ft.jit(ft.vmap(fn))(_mx(a), _mx(b))), loop, rtol=1e-10,
                               atol=1e-12)
    # vmap over one argument only (the other is shared).
    loop = np.stack([np.array(fn(_mx(a[i]), _mx(b[0]))) for i in range(4)])
    np.testing.assert_allclose(np.array(ft.vmap(fn, in_axes=(0, None))(_mx(a), _mx(b[0]))), loop,
                               rtol=1e-10, atol=1e-12)


def test_jit_of_grad_of_solve_and_det():
    a, b = _general(3, 3), RNG.normal(size=3)

    def f(a_, b_):
        return fnp.sum(fnp.linalg.solve(a_, b_)) + fnp.linalg.det(a_)

    eager = ft.grad(f)(_mx(a), _mx(b))
    np.testing.assert_allclose(np.array(ft.jit(ft.grad(f))(_mx(a), _mx(b))), np.array(eager),
                               rtol=1e-10)


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("fn, args, err, message", [
    (fnp.linalg.solve, (np.ones((2, 3)), np.ones(2)), ValueError, "solve: argument a must be"),
    (fnp.linalg.solve, (np.eye(3), np.ones(2)), ValueError, "solve: argument b must have"),
    (fnp.linalg.solve, (np.ones((2, 3, 3)), np.ones((2, 3))), ValueError,
     r"solve: argument b of shape \(2, 3\)"),
    (fnp.linalg.solve, (np.ones((2, 3, 3)), np.ones((4, 3, 1))), ValueError,
     "solve: batch dimensions"),
    (fnp.linalg.inv, (np.ones(3),), ValueError, "inv: argument a must be a square"),
    (fnp.linalg.det, (np.ones((2, 3)),), ValueError, "det: argument a must be a square"),
    (fnp.linalg.slogdet, (np.ones((3, 2)),), ValueError, "slogdet: argument a must be"),
    (fnp.linalg.matrix_power, (np.ones((2, 3)), 2), ValueError, "matrix_power: argument a"),
    (fnp.linalg.matrix_power, (np.eye(2), 1.5), TypeError, "matrix_power: exponent n"),
    (lambda *a: fnp.linalg.multi_dot(a), (np.ones((2, 3)),), ValueError,
     "multi_dot: give at least two"),
    (lambda *a: fnp.linalg.multi_dot(a), (np.ones((2, 3)), np.ones((2, 3))), ValueError,
     "multi_dot: arrays 0 and 1 do not chain"),
    (lambda *a: fnp.linalg.multi_dot(a), (np.ones((2, 3)), np.ones(3), np.ones(3)), ValueError,
     "multi_dot: array 1 must be 2-d"),
    (fnp.linalg.cross, (np.ones(2), np.ones(2)), ValueError, "cross: x1 must have size 3"),
    (lambda x: fnp.linalg.norm(x, ord="fro"), (np.ones(3),), ValueError,
     "norm: invalid ord 'fro' for a vector norm"),
    (lambda x: fnp.linalg.norm(x, ord=3), (np.ones((2, 2)),), ValueError,
     "norm: invalid ord 3 for a matrix norm"),
    (lambda x: fnp.linalg.norm(x, axis=3), (np.ones((2, 2)),), ValueError,
     "norm: axis 3 is out of range"),
    (lambda x: fnp.linalg.norm(x, axis=(0, 1, 2)), (np.ones((2, 2, 2)),), ValueError,
     "norm: axis must name one axis"),
    (lambda x: fnp.linalg.norm(x, ord=1), (np.ones((2, 2, 2)),), ValueError,
     "norm: with ord=1 and axis=None"),
    (lambda x: fnp.linalg.norm(x, axis="a"), (np.ones(2),), TypeError, "norm: axis must be"),
    (lambda x: fnp.linalg.slogdet(x, method="qr"), (np.eye(2),), ValueError,
     "slogdet: method must be"),
    (lambda x: fsl.lu_solve(fsl.lu_factor(x), mx.ones(3)), (np.eye(2),), ValueError,
     "lu_solve: argument b must"),
    (lambda x: fsl.lu_solve(fsl.lu_factor(x), mx.ones(2), trans=3), (np.eye(2),), ValueError,
     "lu_solve: trans must be"),
    (lambda x: fsl.solve(x, mx.ones(2), assume_a="tri"), (np.eye(2),), ValueError,
     "solve: assume_a must be"),
    (fnp.linalg.tensorinv, (np.ones((2, 3)),), ValueError, "tensorinv: a of shape"),
])
def test_errors_name_the_function_and_argument(fn, args, err, message):
    with pytest.raises(err, match=message):
        fn(*[mx.array(a) if isinstance(a, np.ndarray) else a for a in args])
