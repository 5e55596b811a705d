"""Matrix decompositions and the solves built on them: the ``cholesky``,
``triangular_solve``, ``triangular_inverse``, ``lu``,
``lu_pivots_to_permutation``, ``solve`` and ``det`` primitives, the
primitive layer.

All run MLX's LAPACK kernels, which exist only on the CPU stream, so the
impls always pass ``stream=mx.cpu`` (the result is an ordinary array, usable
on any device). All take leading batch dimensions natively: a batching rule
only moves the batch axis to the front. No impl lets LAPACK see an empty
matrix or raise at evaluation time: empty shapes are handled statically, and
a singular triangular system gives NaNs.

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

``lu(a)`` is ``jax.lax.linalg.lu``: ``a[..., permutation, :] = L @ U``, with
``L`` (unit diagonal) and ``U`` packed in one matrix, LAPACK's row swaps as
int32 ``pivots`` and the ``permutation`` they make. ``solve(a, b)`` and
``det(a)`` factor with it.

Rules (with ``X`` the output): the JVP of ``cholesky`` is
``dL = L Phi(L^-1 dS L^-T)``, ``Phi`` taking the lower triangle with the
diagonal halved; its VJP is the transpose of that. The JVP of
``triangular_solve`` is a triangular solve of ``db - op(dA) X``; its VJP is a
solve with the transpose flipped for ``b``, and ``-(b_bar X^T)`` restricted to
the triangle for ``a``. The JVP of ``lu`` is ``dL = L tril(Y, -1)``,
``dU = triu(Y) U`` with ``Y = L^-1 P dA U^-1``; its VJP is the transpose.
``solve``'s rules reuse one factorization: ``dX = A^-1 (dB - dA X)``,
``B_bar = A^-T X_bar``, ``A_bar = -B_bar X^T``. ``det``'s rules use the
adjugate, computed from the LU factors so that it is right at singular
matrices too (rank ``n - 1``: a rank-one adjugate; lower rank: zero).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[0]
[2.0, 0.0]
>>> round(lax.det(mx.array([[1.0, 2.0], [3.0, 4.0]])).item(), 4)
-2.0
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import (
    add_tangents,
    diag_part,
    move_bdim,
    mT,
    nondifferentiable,
    shape_of,
    tri,
)
from ftorch.primitives.indexing import ARRAY, along_axis_grid

__all__ = ["cholesky", "triangular_solve", "triangular_inverse", "lu", "lu_pivots_to_permutation",
           "solve", "det"]


# ----------------------------------------------------------------------------
# Helpers: triangles and matrix transposes, on traced or concrete values
# ----------------------------------------------------------------------------


def _mask(n: int, dtype: mx.Dtype, *, lower: bool, k: int = 0, m: int | None = None) -> mx.array:
    """Ones on and below (``lower``) or above diagonal ``k`` of an m x n
    matrix (``m`` defaults to ``n``)."""
    ones = mx.ones((n if m is None else m, n), dtype=dtype)
    return mx.tril(ones, k) if lower else mx.triu(ones, -k)


# ----------------------------------------------------------------------------
# cholesky
# ----------------------------------------------------------------------------


def _cholesky_impl(a: mx.array) -> mx.array:
    chol = mx.linalg.cholesky(a, upper=False, stream=mx.cpu)
    # LAPACK stops at the first non-positive pivot and leaves it on the
    # diagonal: NaN out such matrices (lazily: no host read).
    ok = mx.all(mx.diagonal(chol, 0, -2, -1) > 0, axis=-1, keepdims=True)
    return mx.where(ok[..., None], chol, mx.array(float("nan"), dtype=chol.dtype))


cholesky_p = Primitive("cholesky", _cholesky_impl, autocast="float32")


def cholesky(a: Any) -> Any:
    """The lower Cholesky factor of the matrices ``a`` (..., n, n), reading
    their lower triangle only; NaN where the matrix is not positive definite.

    >>> import ftorch.lax as lax, mlx.core as mx
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
    ds = lax.add(tri(da, lower=True), mT(tri(da, lower=True, strict=True)))
    # L^-1 dS L^-T: solve from the left, then from the right against L^T.
    inner = _solve_l(chol, _solve_l(chol, ds), transpose_a=True, left_side=False)
    return chol, lax.matmul(chol, _phi(inner))


@cholesky_p.def_vjp
def _cholesky_vjp(ct, chol, a, *, needed):
    p = _phi(lax.matmul(mT(chol), ct))
    # G = L^-T P L^-1, the cotangent of the symmetric matrix S.
    g = _solve_l(chol, _solve_l(chol, p, transpose_a=True), left_side=False)
    return (lax.add(tri(g, lower=True), tri(mT(g), lower=True, strict=True)),)


@cholesky_p.def_batch
def _cholesky_batch(vals, dims, axis_size):
    return cholesky(move_bdim(vals[0], dims[0], 0, axis_size)), 0


# ----------------------------------------------------------------------------
# triangular_solve
# ----------------------------------------------------------------------------


def _triangular_solve_impl(a: mx.array, b: mx.array, *, left_side: bool, lower: bool,
                           transpose_a: bool, unit_diagonal: bool) -> mx.array:
    n = a.shape[-1]
    if a.size == 0 or b.size == 0:  # LAPACK never sees an empty matrix
        return mx.zeros(b.shape, b.dtype)
    if n == 1:  # nor a 1 x 1 one (MLX's LAPACK path corrupts the heap there)
        return b if unit_diagonal else b / a
    singular = None
    if unit_diagonal:  # zero the diagonal, then put ones on it
        a = a * _mask(n, a.dtype, lower=lower, k=-1) + mx.eye(n, dtype=a.dtype)
    else:
        # MLX raises (at evaluation) on a zero on the diagonal: solve with
        # ones there instead and give such systems NaNs, as JAX's are non-finite.
        zero = mx.diagonal(a, 0, -2, -1) == 0
        singular = mx.any(zero, axis=-1)[..., None, None]
        a = mx.where(mx.logical_and(zero[..., None, :], mx.eye(n, dtype=mx.bool_)), 1, a)
    x = _triangular_solve_unchecked(a, b, left_side=left_side, lower=lower,
                                    transpose_a=transpose_a)
    if singular is None:
        return x
    return mx.where(singular, mx.array(float("nan"), x.dtype), x)


def _triangular_solve_unchecked(a: mx.array, b: mx.array, *, left_side: bool, lower: bool,
                                transpose_a: bool) -> mx.array:
    upper = not lower
    if transpose_a:
        a, upper = mx.swapaxes(a, -1, -2), not upper
    if left_side:
        return mx.linalg.solve_triangular(a, b, upper=upper, stream=mx.cpu)
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    xt = mx.linalg.solve_triangular(mx.swapaxes(a, -1, -2), mx.swapaxes(b, -1, -2),
                                    upper=not upper, stream=mx.cpu)
    return mx.swapaxes(xt, -1, -2)


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_impl, autocast="float32")


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, unit_diagonal: bool = False) -> Any:
    """``x`` with ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b``, for
    triangular ``a`` (..., m, m) and ``b`` (..., m, n) or (..., n, m) with the
    same batch dimensions; ``op(a)`` is the ``lower`` (else upper) triangle of
    ``a``, transposed if ``transpose_a``, with ones on its diagonal if
    ``unit_diagonal``. Defaults as ``jax.lax.linalg.triangular_solve``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> a = mx.array([[2.0, 0.0], [1.0, 1.0]])
    >>> lax.triangular_solve(a, mx.array([[2.0], [3.0]]), left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    """
    return triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                   transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def _op_tangent(da: Any, *, lower: bool, transpose_a: bool, unit_diagonal: bool) -> Any:
    """op(dA): the tangent of the triangle of ``a`` the solve reads."""
    dt = tri(da, lower=lower, strict=unit_diagonal)
    return mT(dt) if transpose_a else dt


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
        g = lax.matmul(ct_b, mT(x)) if left_side else lax.matmul(mT(x), ct_b)
        if transpose_a:
            g = mT(g)
        ct_a = lax.negative(tri(g, lower=lower, strict=unit_diagonal))
    return ct_a, (ct_b if needed[1] else None)


@triangular_solve_p.def_batch
def _triangular_solve_batch(vals, dims, axis_size, **params):
    a, b = (move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims))
    return triangular_solve_p.bind(a, b, **params), 0


# ----------------------------------------------------------------------------
# triangular_inverse
# ----------------------------------------------------------------------------


def _triangular_inverse_impl(a: mx.array, *, lower: bool, unit_diagonal: bool) -> mx.array:
    n = a.shape[-1]
    if a.size == 0:  # LAPACK never sees an empty matrix
        return mx.zeros(a.shape, a.dtype)
    if n == 1:  # nor a 1 x 1 one (see triangular_solve)
        return mx.ones_like(a) if unit_diagonal else 1 / a
    singular = None
    if unit_diagonal:
        a = a * _mask(n, a.dtype, lower=lower, k=-1) + mx.eye(n, dtype=a.dtype)
    else:  # as triangular_solve: NaNs, not an error at evaluation, for a zero pivot
        zero = mx.diagonal(a, 0, -2, -1) == 0
        singular = mx.any(zero, axis=-1)[..., None, None]
        a = mx.where(mx.logical_and(zero[..., None, :], mx.eye(n, dtype=mx.bool_)), 1, a)
    inv = mx.linalg.tri_inv(a, upper=not lower, stream=mx.cpu)
    if singular is None:
        return inv
    return mx.where(singular, mx.array(float("nan"), inv.dtype), inv)


triangular_inverse_p = Primitive("triangular_inverse", _triangular_inverse_impl, autocast="float32")


def triangular_inverse(a: Any, *, lower: bool = False, unit_diagonal: bool = False) -> Any:
    """The inverse of the ``lower`` (else upper) triangle of the matrices
    ``a`` (..., m, m), with ones on the diagonal if ``unit_diagonal``: a
    triangular matrix of the same kind. (MLX's ``solve_triangular`` is this
    inverse times ``b``; ``jit`` turns solves against one matrix into
    products with its one inverse.)

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.triangular_inverse(mx.array([[2.0, 0.0], [1.0, 4.0]]), lower=True).tolist()
    [[0.5, 0.0], [-0.125, 0.25]]
    """
    return triangular_inverse_p.bind(a, lower=lower, unit_diagonal=unit_diagonal)


@triangular_inverse_p.def_jvp
def _triangular_inverse_jvp(primals, tangents, *, lower, unit_diagonal):
    (a,), (da,) = primals, tangents
    inv = triangular_inverse(a, lower=lower, unit_diagonal=unit_diagonal)
    if da is None:
        return inv, None
    da = tri(da, lower=lower, strict=unit_diagonal)
    return inv, lax.negative(lax.matmul(inv, lax.matmul(da, inv)))


@triangular_inverse_p.def_vjp
def _triangular_inverse_vjp(ct, inv, a, *, needed, lower, unit_diagonal):
    g = lax.matmul(mT(inv), lax.matmul(ct, mT(inv)))
    return (lax.negative(tri(g, lower=lower, strict=unit_diagonal)),)


@triangular_inverse_p.def_batch
def _triangular_inverse_batch(vals, dims, axis_size, **params):
    return triangular_inverse_p.bind(move_bdim(vals[0], dims[0], 0, axis_size), **params), 0


# ----------------------------------------------------------------------------
# lu_pivots_to_permutation
# ----------------------------------------------------------------------------


def _pivots_to_permutation_impl(pivots: mx.array, *, permutation_size: int) -> mx.array:
    # The permutation is the composition of the row swaps (i, pivots[i]),
    # applied in order. Composition is associative, so the swaps (each as an
    # index array) are composed pairwise in log2(k) rounds of gathers rather
    # than k sequential ones.
    m, k = permutation_size, pivots.shape[-1]
    batch = pivots.shape[:-1]
    col = mx.arange(m, dtype=mx.int32)
    if k == 0 or m == 0 or pivots.size == 0:
        return mx.broadcast_to(col, (*batch, m))
    rows = mx.arange(k, dtype=mx.int32)[:, None]
    p = pivots.astype(mx.int32)[..., :, None]
    perms = mx.where(col == rows, p, mx.where(col == p, rows, col))  # (..., k, m)
    while perms.shape[-2] > 1:
        if perms.shape[-2] % 2:
            perms = mx.concatenate([perms, mx.broadcast_to(col, (*batch, 1, m))], axis=-2)
        perms = mx.take_along_axis(perms[..., 0::2, :], perms[..., 1::2, :], axis=-1)
    return perms[..., 0, :]


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation", _pivots_to_permutation_impl)
nondifferentiable(lu_pivots_to_permutation_p)


@lu_pivots_to_permutation_p.def_batch
def _pivots_to_permutation_batch(vals, dims, axis_size, **params):
    return lu_pivots_to_permutation_p.bind(move_bdim(vals[0], dims[0], 0, axis_size),
                                           **params), 0


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The int32 permutation (..., permutation_size) made by swapping rows
    ``i`` and ``pivots[..., i]`` in turn (LAPACK's ``ipiv``, 0-based), as
    ``jax.lax.linalg.lu_pivots_to_permutation``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.lu_pivots_to_permutation(mx.array([2, 2, 2], dtype=mx.int32), 3).tolist()
    [2, 0, 1]
    """
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=permutation_size)


# ----------------------------------------------------------------------------
# lu
# ----------------------------------------------------------------------------


def _lu_impl(a: mx.array) -> list[mx.array]:
    m, n = a.shape[-2:]
    if a.size == 0 or m == 1 or n == 1:  # no pivoting needed, or (m > 1) one argmax
        return _lu_vector(a)
    lu_, pivots = mx.linalg.lu_factor(a, stream=mx.cpu)
    pivots = pivots.astype(mx.int32)
    # Lazy: the permutation is only computed when it is used.
    return [lu_, pivots, _pivots_to_permutation_impl(pivots, permutation_size=m)]


def _lu_vector(a: mx.array) -> list[mx.array]:
    """LU of empty matrices, rows (1 x n) and columns (m x 1) without LAPACK
    (MLX's LAPACK path corrupts the heap on 1 x 1 matrices)."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    eye_perm = mx.broadcast_to(mx.arange(m, dtype=mx.int32), (*batch, m))
    if a.size == 0 or m == 1:
        return [mx.array(a), mx.zeros((*batch, min(m, n)), mx.int32), eye_perm]
    # One column: swap the entry of largest magnitude to the top (the first
    # such, as LAPACK's idamax), and divide the rest by it.
    col = a[..., 0]
    p = mx.argmax(mx.abs(col), axis=-1).astype(mx.int32)[..., None]  # (..., 1)
    rows = mx.arange(m, dtype=mx.int32)
    perm = mx.where(rows == 0, p, mx.where(rows == p, 0, rows))
    pivot = mx.take_along_axis(col, p, axis=-1)
    permuted = mx.take_along_axis(col, perm, axis=-1)
    # A zero column stays as it is (LAPACK skips the division by a zero pivot).
    scaled = mx.where(mx.logical_or(rows == 0, pivot == 0), permuted, permuted / pivot)
    return [scaled[..., None], p, perm]


lu_p = Primitive("lu", _lu_impl, multiple_results=True, autocast="float32")


def lu(a: Any) -> list[Any]:
    """The LU decomposition with partial pivoting of the matrices ``a``
    (..., m, n), as ``jax.lax.linalg.lu``: ``[lu, pivots, permutation]``,
    with ``L`` (unit diagonal, below it) and ``U`` (on and above it) packed
    in ``lu`` (..., m, n), LAPACK's 0-based row swaps ``pivots``
    (..., min(m, n)) and the ``permutation`` (..., m) they make, both int32,
    such that ``a[..., permutation, :] = L @ U``. A singular matrix is
    factored with zeros on ``U``'s diagonal, without error.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lu, pivots, permutation = lax.lu(mx.array([[1.0, 2.0], [4.0, 4.0]]))
    >>> lu.tolist(), pivots.tolist(), permutation.tolist()
    ([[4.0, 4.0], [0.25, 1.0]], [1, 1], [1, 0])
    """
    return lu_p.bind(a)


def _lu_factors(lu_: Any) -> tuple[Any, Any]:
    """``L`` (m x m, read through its strict lower triangle) and ``U`` (n x n,
    read through its upper triangle) of a packed (..., m, n) factorization,
    padded when it is not square so that both are invertible."""
    shape, dtype = aval_of(lu_)
    nd, (m, n) = len(shape), shape[-2:]
    k = min(m, n)
    lower, upper = lu_, lu_
    if m < n:  # L is m x m already; U's missing rows get an identity block
        pad = tuple((0, 0) for _ in range(nd - 2)) + ((0, n - m), (0, 0))
        ones = mx.diag(mx.array([0.0] * k + [1.0] * (n - k), dtype=dtype))
        upper = lax.add(lax.pad(lu_, 0.0, pad), ones)
        lower = lax.static_slice(lu_, (*[slice(None)] * (nd - 1), slice(0, m)))
    elif m > n:  # L's missing columns are zero below the (unit) diagonal
        pad = tuple((0, 0) for _ in range(nd - 2)) + ((0, 0), (0, m - n))
        lower = lax.pad(lu_, 0.0, pad)
        upper = lax.static_slice(lu_, (*[slice(None)] * (nd - 2), slice(0, n), slice(None)))
    return lower, upper


def _unit_lower(lower: Any) -> Any:
    """``L`` as a matrix: the strict lower triangle plus the identity."""
    aval = aval_of(lower)
    return lax.add(tri(lower, lower=True, strict=True), mx.eye(aval.shape[-1], dtype=aval.dtype))


def _permute_rows(x: Any, perm: Any) -> Any:
    """``x[..., perm, :]``: row ``i`` of the result is row ``perm[i]`` of ``x``."""
    return lax.take_along_axis(x, lax.expand_dims(perm, (len(shape_of(perm)),)),
                               len(shape_of(x)) - 2)


def _unpermute_rows(x: Any, perm: Any) -> Any:
    """The inverse of ``_permute_rows``: row ``i`` of ``x`` goes to row ``perm[i]``."""
    nd = len(shape_of(x))
    _, arrays = along_axis_grid(shape_of(x), lax.expand_dims(perm, (nd - 1,)), nd - 2)
    return lax.scatter_add(lax.zeros_like(x), x, *arrays, spec=(ARRAY,) * nd)


@lu_p.def_jvp
def _lu_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    outs = lu_p.bind(a)
    if da is None or 0 in shape_of(a):
        return outs, [None if da is None else lax.zeros_like(outs[0]), None, None]
    lu_, _, perm = outs
    lower, upper = _lu_factors(lu_)
    # Y = L^-1 P dA U^-1, then dL = L tril(Y, -1), dU = triu(Y) U.
    y = triangular_solve(lower, _permute_rows(da, perm), left_side=True, lower=True,
                         unit_diagonal=True)
    y = triangular_solve(upper, y, left_side=False, lower=False)
    dlu = lax.add(lax.matmul(_unit_lower(lower), tri(y, lower=True, strict=True)),
                  lax.matmul(tri(y, lower=False), tri(upper, lower=False)))
    return outs, [dlu, None, None]


@lu_p.def_vjp
def _lu_vjp(cts, outs, a, *, needed):
    ct = cts[0]
    if ct is None or not needed[0]:
        return (None,)
    if 0 in shape_of(a):
        return (lax.zeros_like(a),)
    lu_, _, perm = outs
    lower, upper = _lu_factors(lu_)
    # The transpose of the JVP: Y_bar = tril(L^T C, -1) + triu(C U^T), then
    # A_bar = P^T L^-T Y_bar U^-T.
    y = lax.add(tri(lax.matmul(mT(_unit_lower(lower)), ct), lower=True, strict=True),
                tri(lax.matmul(ct, mT(tri(upper, lower=False))), lower=False))
    y = triangular_solve(upper, y, left_side=False, lower=False, transpose_a=True)
    y = triangular_solve(lower, y, left_side=True, lower=True, transpose_a=True,
                         unit_diagonal=True)
    return (_unpermute_rows(y, perm),)


@lu_p.def_batch
def _lu_batch(vals, dims, axis_size):
    return lu_p.bind(move_bdim(vals[0], dims[0], 0, axis_size)), [0, 0, 0]


# ----------------------------------------------------------------------------
# solve
# ----------------------------------------------------------------------------


def _solve_impl(a: mx.array, b: mx.array) -> mx.array:
    if a.size == 0 or b.size == 0:
        return mx.zeros(b.shape, b.dtype)
    if a.shape[-1] == 1:
        return b / a
    lu_, pivots = mx.linalg.lu_factor(a, stream=mx.cpu)
    perm = _pivots_to_permutation_impl(pivots, permutation_size=a.shape[-1])
    y = mx.take_along_axis(b, perm[..., None], axis=-2)
    y = _triangular_solve_impl(lu_, y, left_side=True, lower=True, transpose_a=False,
                               unit_diagonal=True)
    return _triangular_solve_impl(lu_, y, left_side=True, lower=False, transpose_a=False,
                                  unit_diagonal=False)


solve_p = Primitive("solve", _solve_impl, autocast="float32")


def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x = b``, for square ``a`` (..., n, n) and ``b``
    (..., n, k) with the same batch dimensions, by LU decomposition with
    partial pivoting; NaN where ``a`` is singular (MLX's own
    ``mx.linalg.solve`` raises there).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.solve(mx.array([[2.0, 0.0], [1.0, 1.0]]), mx.array([[2.0], [3.0]])).tolist()
    [[1.0], [2.0]]
    """
    return solve_p.bind(a, b)


def lu_solve(lu_: Any, permutation: Any, b: Any, *, transpose: bool = False) -> Any:
    """``x`` with ``a @ x = b`` (``a.T @ x = b`` with ``transpose``), given
    ``lu, _, permutation = lu(a)`` for square ``a`` and ``b`` (..., n, k) of
    the same batch dimensions: two triangular solves and a row permutation,
    each a differentiable primitive.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lu, _, perm = lax.lu(mx.array([[0.0, 1.0], [2.0, 0.0]]))
    >>> lax.decompositions.lu_solve(lu, perm, mx.array([[1.0], [4.0]])).tolist()
    [[2.0], [1.0]]
    """
    if not transpose:
        y = triangular_solve(lu_, _permute_rows(b, permutation), left_side=True, lower=True,
                             unit_diagonal=True)
        return triangular_solve(lu_, y, left_side=True, lower=False)
    # a = P^T L U, so a^T x = b gives x = P^T L^-T U^-T b.
    y = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
    y = triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                         unit_diagonal=True)
    return _unpermute_rows(y, permutation)


@solve_p.def_jvp
def _solve_jvp(primals, tangents):
    (a, b), (da, db) = primals, tangents
    if 0 in shape_of(a) or 0 in shape_of(b):
        x = solve_p.bind(a, b)
        return x, (None if da is None and db is None else lax.zeros_like(x))
    lu_, _, perm = lu(a)
    x = lu_solve(lu_, perm, b)
    rhs = db
    if da is not None:
        rhs = add_tangents(rhs, lax.negative(lax.matmul(da, x)))
    return x, (None if rhs is None else lu_solve(lu_, perm, rhs))


@solve_p.def_vjp_fwd
def _solve_vjp_fwd(primals):
    # The factorization is kept for the backward pass, which then costs two
    # triangular solves rather than a new factorization.
    a, b = primals
    if 0 in shape_of(a) or 0 in shape_of(b):
        return solve_p.bind(a, b), (a, None, None), {}
    lu_, _, perm = lu(a)
    return lu_solve(lu_, perm, b), (a, lu_, perm), {}


@solve_p.def_vjp
def _solve_vjp(ct, x, a, lu_, perm, *, needed):
    if lu_ is None:
        return (lax.zeros_like(a) if needed[0] else None,
                lax.zeros_like(ct) if needed[1] else None)
    ct_b = lu_solve(lu_, perm, ct, transpose=True)
    ct_a = lax.negative(lax.matmul(ct_b, mT(x))) if needed[0] else None
    return ct_a, (ct_b if needed[1] else None)


@solve_p.def_batch
def _solve_batch(vals, dims, axis_size):
    a, b = (move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims))
    return solve_p.bind(a, b), 0


# ----------------------------------------------------------------------------
# det
# ----------------------------------------------------------------------------


def _det_impl(a: mx.array) -> mx.array:
    n = a.shape[-1]
    if a.size == 0:
        return mx.ones(a.shape[:-2], a.dtype)
    if n == 1:
        return a[..., 0, 0]
    lu_, pivots = mx.linalg.lu_factor(a, stream=mx.cpu)
    swaps = mx.sum(pivots.astype(mx.int32) != mx.arange(n, dtype=mx.int32), axis=-1)
    sign = (1 - 2 * (swaps % 2)).astype(a.dtype)
    # + 0: a singular matrix's determinant is 0, not -0.
    return sign * mx.prod(mx.diagonal(lu_, 0, -2, -1), axis=-1) + 0


det_p = Primitive("det", _det_impl, autocast="float32")


def det(a: Any) -> Any:
    """The determinants (...) of the square matrices ``a`` (..., n, n), by LU
    decomposition (1 for 0 x 0 matrices). Its derivative is the transposed
    adjugate, right at singular matrices too (as JAX's).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.det(mx.array([[2.0, 1.0], [1.0, 3.0]])).item()
    5.0
    """
    return det_p.bind(a)


def adjugate(a: Any) -> Any:
    """The adjugates ``det(a) inv(a)`` of the square matrices ``a``
    (..., n, n), from one LU decomposition, right at singular matrices too.

    With ``a = P^T L U``: ``adj(a) = adj(U) L^-1 P det(P)``. ``adj(U)`` is
    ``det(U) U^-1`` while ``U`` has no zero on its diagonal; with one zero, at
    ``k``, it is the rank-one ``d U~^-1 e_k e_k^T U~^-1``, with ``U~`` the
    matrix with a one at ``(k, k)`` and ``d`` the product of its diagonal;
    with more, it is zero. Written with primitives, so it is differentiable.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.decompositions.adjugate(mx.array([[1.0, 2.0], [2.0, 4.0]])).tolist()
    [[4.0, -2.0], [-2.0, 1.0]]
    """
    shape, dtype = aval_of(a)
    nd, n = len(shape), shape[-1]
    if 0 in shape_of(a):
        return lax.zeros_like(a)
    if n == 1:  # the adjugate of any 1 x 1 matrix is [[1]]
        return lax.broadcast_to(mx.ones((1, 1), dtype), shape)
    lu_, pivots, perm = lu(a)
    eye = mx.eye(n, dtype=dtype)
    diag = diag_part(lu_)
    zero = lax.equal(diag, 0.0)
    zeros = lax.sum(lax.astype(zero, mx.int32), (nd - 2,))
    u = lax.where(lax.logical_and(lax.expand_dims(zero, (nd - 2,)), mx.eye(n, dtype=mx.bool_)),
                  1.0, lu_)
    swaps = lax.sum(lax.astype(lax.not_equal(pivots, mx.arange(n, dtype=mx.int32)), mx.int32),
                    (nd - 2,))
    sign = lax.astype(lax.subtract(1, lax.multiply(2, lax.remainder(swaps, 2))), dtype)
    d = lax.multiply(sign, lax.prod(lax.where(zero, 1.0, diag), (nd - 2,)))
    y = triangular_solve(lu_, _permute_rows(lax.broadcast_to(eye, shape), perm), left_side=True,
                         lower=True, unit_diagonal=True)
    z = triangular_solve(u, y, left_side=True, lower=False)
    z1 = triangular_solve(u, lax.multiply(z, lax.astype(lax.expand_dims(zero, (nd - 1,)), dtype)),
                          left_side=True, lower=False)
    zeros = lax.expand_dims(zeros, (nd - 2, nd - 1))
    z = lax.where(lax.equal(zeros, 0), z, lax.where(lax.equal(zeros, 1), z1, 0.0))
    return lax.multiply(lax.expand_dims(d, (nd - 2, nd - 1)), z)


@det_p.def_jvp
def _det_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    out = det(a)
    if da is None:
        return out, None
    nd = len(shape_of(a))
    return out, lax.sum(lax.multiply(mT(adjugate(a)), da), (nd - 2, nd - 1))


@det_p.def_vjp
def _det_vjp(ct, out, a, *, needed):
    nd = len(shape_of(a))
    return (lax.multiply(lax.expand_dims(ct, (nd - 2, nd - 1)), mT(adjugate(a))),)


@det_p.def_batch
def _det_batch(vals, dims, axis_size):
    return det(move_bdim(vals[0], dims[0], 0, axis_size)), 0
