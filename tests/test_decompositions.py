"""Values, gradients, batching and argument errors of ftorch.numpy.linalg.cholesky,
ftorch.scipy.linalg.solve_triangular / cho_solve and the primitives under them."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.primitives as lax
import ftorch.scipy.linalg as fsl

RNG = np.random.default_rng(0)


def _spd(*shape):
    m = RNG.normal(size=shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def _f64(x):
    return mx.array(x, dtype=mx.float64)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 2, 3, 3)])
def test_cholesky_matches_numpy(shape):
    a = _spd(*shape)
    np.testing.assert_allclose(np.array(fnp.linalg.cholesky(_f64(a))), np.linalg.cholesky(a),
                               rtol=1e-12, atol=1e-12)


def test_cholesky_float32_and_int_inputs():
    a = _spd(3, 3).astype(np.float32)
    out = fnp.linalg.cholesky(mx.array(a))
    assert out.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), np.linalg.cholesky(a), rtol=1e-5, atol=1e-5)
    assert fnp.linalg.cholesky(mx.array([[4, 0], [0, 9]])).tolist() == [[2.0, 0.0], [0.0, 3.0]]


def test_cholesky_symmetrises_and_primitive_reads_lower_triangle():
    a = _spd(3, 3)
    skew = np.triu(np.ones((3, 3)), 1)
    # The public function symmetrises: a + (skew - skew.T) is the same matrix.
    np.testing.assert_allclose(np.array(fnp.linalg.cholesky(_f64(a + skew - skew.T))),
                               np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    # The primitive ignores the upper triangle.
    np.testing.assert_allclose(np.array(lax.cholesky(_f64(a + 5 * skew))),
                               np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)


def test_cholesky_not_positive_definite_is_nan():
    # MLX returns a partial factor ([[1, 0], [2, -3]]) with no error; we give NaN, as JAX.
    out = fnp.linalg.cholesky(mx.array([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 2.0], [2.0, 3.0]]]))
    assert np.isnan(np.array(out[0])).all()
    np.testing.assert_allclose(np.array(out[1]), np.linalg.cholesky([[4.0, 2.0], [2.0, 3.0]]),
                               rtol=1e-6)


def _reference_solve(a, b, trans, lower, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t - np.diag(np.diag(t)) + np.eye(len(t))
    return np.linalg.solve(t.T if trans else t, b)


@pytest.mark.parametrize("trans", [0, 1, "T"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("b_shape", [(4,), (4, 2)])
def test_solve_triangular_matches_numpy(trans, lower, unit, b_shape):
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    b = RNG.normal(size=b_shape)
    x = fsl.solve_triangular(_f64(a), _f64(b), trans=trans, lower=lower, unit_diagonal=unit)
    np.testing.assert_allclose(np.array(x), _reference_solve(a, b, trans in (1, "T"), lower, unit),
                               rtol=1e-10, atol=1e-12)


def test_solve_triangular_batch_dims_broadcast():
    a = RNG.normal(size=(3, 1, 4, 4)) + 4 * np.eye(4)
    b = RNG.normal(size=(1, 2, 4, 5))  # (as JAX: b.ndim == a.ndim - 1 would be vectors)
    x = np.array(fsl.solve_triangular(_f64(a), _f64(b), lower=True))
    assert x.shape == (3, 2, 4, 5)
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(x[i, j], _reference_solve(a[i, 0], b[0, j], 0, True, False),
                                       rtol=1e-10, atol=1e-12)


def test_right_side_primitive():
    a = RNG.normal(size=(2, 3, 3)) + 4 * np.eye(3)
    b = RNG.normal(size=(2, 5, 3))
    x = np.array(lax.triangular_solve(_f64(a), _f64(b), left_side=False, lower=False,
                                      transpose_a=True))
    np.testing.assert_allclose(x, b @ np.linalg.inv(np.swapaxes(np.triu(a), -1, -2)),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve(lower):
    a = _spd(2, 4, 4)
    b = RNG.normal(size=(2, 4, 3))
    c = fnp.linalg.cholesky(_f64(a))
    if not lower:
        c = mx.swapaxes(c, -1, -2)
    np.testing.assert_allclose(np.array(fsl.cho_solve((c, lower), _f64(b))),
                               np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)


def _neg_log_likelihood(a, y):
    chol = fnp.linalg.cholesky(a)
    alpha = fsl.cho_solve((chol, True), y)
    diag = fnp.einsum("...ii->...i", chol)
    return 0.5 * fnp.sum(y * alpha) + fnp.sum(fnp.log(diag))


def _np_neg_log_likelihood(a, y):
    return 0.5 * y @ np.linalg.solve(a, y) + 0.5 * np.linalg.slogdet(a)[1]


def test_gaussian_log_likelihood_gradient_matches_finite_differences():
    a, y = _spd(4, 4), RNG.normal(size=4)
    value, (ga, gy) = ft.value_and_grad(_neg_log_likelihood, argnums=(0, 1))(_f64(a), _f64(y))
    np.testing.assert_allclose(value.item(), _np_neg_log_likelihood(a, y), rtol=1e-12)
    eps = 1e-6
    for i in range(4):
        for j in range(4):
            # The function symmetrises a, so perturb one entry: the derivative is ga[i, j].
            d = np.zeros((4, 4))
            d[i, j] = eps
            fd = (_np_neg_log_likelihood((a + d + (a + d).T) / 2, y)
                  - _np_neg_log_likelihood((a - d + (a - d).T) / 2, y)) / (2 * eps)
            np.testing.assert_allclose(np.array(ga)[i, j], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.array(gy), np.linalg.solve(a, y), rtol=1e-10)
    # The analytic gradient: 0.5 * (A^-1 - A^-1 y y^T A^-1), symmetric.
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(np.array(ga), 0.5 * (inv - np.outer(inv @ y, inv @ y)),
                               rtol=1e-8, atol=1e-10)


def test_batched_gradient_under_vmap_and_jit():
    a, y = _spd(3, 4, 4), RNG.normal(size=(3, 4))
    grad = ft.grad(_neg_log_likelihood)
    batched = ft.jit(ft.vmap(grad))(_f64(a), _f64(y))
    for i in range(3):
        np.testing.assert_allclose(np.array(batched[i]), np.array(grad(_f64(a[i]), _f64(y[i]))),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, args, message", [
    (fnp.linalg.cholesky, (np.ones((2, 3)),), "cholesky: argument a must be a square"),
    (fnp.linalg.cholesky, (np.ones(3),), "cholesky: argument a must be a square"),
    (fsl.solve_triangular, (np.eye(3), np.ones(2)), "solve_triangular: argument b must"),
    (fsl.solve_triangular, (np.ones((3, 2)), np.ones(3)), "solve_triangular: argument a must"),
    (fsl.solve_triangular, (np.ones((2, 3, 3)), np.ones((4, 3, 1))),
     "solve_triangular: batch dimensions"),
    (fsl.cho_solve, ((np.eye(3), True), np.ones((2, 2))), "cho_solve: argument b must"),
])
def test_errors_name_the_argument(fn, args, message):
    with pytest.raises(ValueError, match=message):
        fn(*[mx.array(a) if isinstance(a, np.ndarray) else a for a in args])


def test_bad_trans():
    with pytest.raises(ValueError, match="trans must be"):
        fsl.solve_triangular(mx.eye(2), mx.ones(2), trans=3)
