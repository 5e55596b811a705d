"""Matrix decompositions and triangular solves: the ``cholesky`` and
``triangular_solve`` primitives, the primitive layer.

Both run MLX's LAPACK kernels, which exist only on the CPU stream, so the
impls always pass ``stream=mx.cpu`` (the result is an ordinary array, usable
on any device). Both take leading batch dimensions natively: a batching rule
only moves the batch axis to the front.

``cholesky(a)`` reads only the lower triangle of ``a`` (as LAPACK does): it
factors the symmetric matrix ``S`` whose lower triangle is ``a``'s, so its
derivative is taken with respect to that triangle (the upper one gets a zero
cotangent). ``ftorch.numpy.linalg.cholesky`` symmetrises its input first, as
JAX does. Where ``S`` is not positive definite MLX returns a partial factor
with no error; the impl turns that matrix into NaNs (JAX's convention).

``triangular_solve(a, b)`` solves ``op(a) @ x = b`` (``left_side``) or
``x @ op(a) = b``, with ``op(a)`` the ``lower`` or upper triangle of ``a``,
transposed with ``transpose_a``, its diagonal taken as ones with
``unit_diagonal`` (the parameters of ``jax.lax.linalg.triangular_solve``).
Entries outside the triangle are ignored and get a zero cotangent.

Rules (with ``X`` the output): the JVP of ``cholesky`` is
``dL = L Phi(L^-1 dS L^-T)``, ``Phi`` taking the lower triangle with the
diagonal halved; its VJP is the transpose of that. The JVP of
``triangular_solve`` is a triangular solve of ``db - op(dA) X``; its VJP is a
solve with the transpose flipped for ``b``, and ``-(b_bar X^T)`` restricted to
the triangle for ``a``.

>>> import ftorch.primitives as lax, mlx.core as mx
>>> lax.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[0]
[2.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import add_tangents, move_bdim, shape_of

__all__ = ["cholesky", "triangular_solve"]


# ----------------------------------------------------------------------------
# Helpers: triangles and matrix transposes, on traced or concrete values
# ----------------------------------------------------------------------------


def _mask(n: int, dtype: mx.Dtype, *, lower: bool, k: int = 0) -> mx.array:
    """Ones on and below (``lower``) or above diagonal ``k`` of an n x n matrix."""
    ones = mx.ones((n, n), dtype=dtype)
    return mx.tril(ones, k) if lower else mx.triu(ones, -k)


def _tri(x: Any, *, lower: bool, strict: bool = False) -> Any:
    """The lower or upper triangle of ``x``'s matrices (without the diagonal when ``strict``)."""
    aval = aval_of(x)
    return lax.multiply(x, _mask(aval.shape[-1], aval.dtype, lower=lower, k=-1 if strict else 0))


def _mT(x: Any) -> Any:
    """``x`` with its matrices transposed."""
    n = len(shape_of(x))
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


# ----------------------------------------------------------------------------
# cholesky
# ----------------------------------------------------------------------------


def _cholesky_impl(a: mx.array) -> mx.array:
    chol = mx.linalg.cholesky(a, upper=False, stream=mx.cpu)
    # LAPACK stops at the first non-positive pivot and leaves it on the
    # diagonal: NaN out such matrices (lazily: no host read).
    ok = mx.all(mx.diagonal(chol, 0, -2, -1) > 0, axis=-1, keepdims=True)
    return mx.where(ok[..., None], chol, mx.array(float("nan"), dtype=chol.dtype))


cholesky_p = Primitive("cholesky", _cholesky_impl)


def cholesky(a: Any) -> Any:
    """The lower Cholesky factor of the matrices ``a`` (..., n, n), reading
    their lower triangle only; NaN where the matrix is not positive definite.

    >>> import ftorch.primitives as lax, mlx.core as mx
    >>> lax.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[1][0]
    1.0
    """
    return cholesky_p.bind(a)


def _phi(x: Any) -> Any:
    """The lower triangle of ``x``'s matrices with the diagonal halved
    (self-adjoint, so it is its own transpose)."""
    aval = aval_of(x)
    n = aval.shape[-1]
    mask = mx.tril(mx.ones((n, n), dtype=aval.dtype), -1) + 0.5 * mx.eye(n, dtype=aval.dtype)
    return lax.multiply(x, mask)


def _solve_l(chol: Any, b: Any, *, transpose_a: bool = False, left_side: bool = True) -> Any:
    return triangular_solve(chol, b, left_side=left_side, lower=True, transpose_a=transpose_a)


@cholesky_p.def_jvp
def _cholesky_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    chol = cholesky(a)
    if da is None:
        return chol, None
    ds = lax.add(_tri(da, lower=True), _mT(_tri(da, lower=True, strict=True)))
    # L^-1 dS L^-T: solve from the left, then from the right against L^T.
    inner = _solve_l(chol, _solve_l(chol, ds), transpose_a=True, left_side=False)
    return chol, lax.matmul(chol, _phi(inner))


@cholesky_p.def_vjp
def _cholesky_vjp(ct, chol, a, *, needed):
    p = _phi(lax.matmul(_mT(chol), ct))
    # G = L^-T P L^-1, the cotangent of the symmetric matrix S.
    g = _solve_l(chol, _solve_l(chol, p, transpose_a=True), left_side=False)
    return (lax.add(_tri(g, lower=True), _tri(_mT(g), lower=True, strict=True)),)


@cholesky_p.def_batch
def _cholesky_batch(vals, dims, axis_size):
    return cholesky(move_bdim(vals[0], dims[0], 0, axis_size)), 0


# ----------------------------------------------------------------------------
# triangular_solve
# ----------------------------------------------------------------------------


def _triangular_solve_impl(a: mx.array, b: mx.array, *, left_side: bool, lower: bool,
                           transpose_a: bool, unit_diagonal: bool) -> mx.array:
    n = a.shape[-1]
    if unit_diagonal:  # zero the diagonal, then put ones on it
        a = a * _mask(n, a.dtype, lower=lower, k=-1) + mx.eye(n, dtype=a.dtype)
    upper = not lower
    if transpose_a:
        a, upper = mx.swapaxes(a, -1, -2), not upper
    if left_side:
        return mx.linalg.solve_triangular(a, b, upper=upper, stream=mx.cpu)
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    xt = mx.linalg.solve_triangular(mx.swapaxes(a, -1, -2), mx.swapaxes(b, -1, -2),
                                    upper=not upper, stream=mx.cpu)
    return mx.swapaxes(xt, -1, -2)


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_impl)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, unit_diagonal: bool = False) -> Any:
    """``x`` with ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b``, for
    triangular ``a`` (..., m, m) and ``b`` (..., m, n) or (..., n, m) with the
    same batch dimensions; ``op(a)`` is the ``lower`` (else upper) triangle of
    ``a``, transposed if ``transpose_a``, with ones on its diagonal if
    ``unit_diagonal``. Defaults as ``jax.lax.linalg.triangular_solve``.

    >>> import ftorch.primitives as lax, mlx.core as mx
    >>> a = mx.array([[2.0, 0.0], [1.0, 1.0]])
    >>> lax.triangular_solve(a, mx.array([[2.0], [3.0]]), left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    """
    return triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                   transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def _op_tangent(da: Any, *, lower: bool, transpose_a: bool, unit_diagonal: bool) -> Any:
    """op(dA): the tangent of the triangle of ``a`` the solve reads."""
    dt = _tri(da, lower=lower, strict=unit_diagonal)
    return _mT(dt) if transpose_a else dt


@triangular_solve_p.def_jvp
def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (da, db) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    rhs = db
    if da is not None:
        dop = _op_tangent(da, lower=params["lower"], transpose_a=params["transpose_a"],
                          unit_diagonal=params["unit_diagonal"])
        prod = lax.matmul(dop, x) if params["left_side"] else lax.matmul(x, dop)
        rhs = add_tangents(rhs, lax.negative(prod))
    if rhs is None:
        return x, None
    return x, triangular_solve_p.bind(a, rhs, **params)


@triangular_solve_p.def_vjp
def _triangular_solve_vjp(ct, x, a, b, *, needed, left_side, lower, transpose_a,
                          unit_diagonal):
    ct_b = triangular_solve(a, ct, left_side=left_side, lower=lower,
                            transpose_a=not transpose_a, unit_diagonal=unit_diagonal)
    ct_a = None
    if needed[0]:
        # -<b_bar, op(dA) X> (left) or -<b_bar, X op(dA)> (right), as a matrix for op(dA).
        g = lax.matmul(ct_b, _mT(x)) if left_side else lax.matmul(_mT(x), ct_b)
        if transpose_a:
            g = _mT(g)
        ct_a = lax.negative(_tri(g, lower=lower, strict=unit_diagonal))
    return ct_a, (ct_b if needed[1] else None)


@triangular_solve_p.def_batch
def _triangular_solve_batch(vals, dims, axis_size, **params):
    a, b = (move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims))
    return triangular_solve_p.bind(a, b, **params), 0
