"""``ftorch.scipy.linalg``, as ``jax.scipy.linalg``: triangular, Cholesky and
LU solves, the LU decomposition, ``det``, ``inv`` and ``solve``, over the
primitives of ``ftorch.primitives.decompositions`` (MLX's LAPACK, on the CPU
stream). Batch dimensions of ``a`` and ``b`` broadcast.

>>> import ftorch.numpy as fnp, ftorch.scipy.linalg as fsl, mlx.core as mx
>>> a = mx.array([[4.0, 2.0], [2.0, 3.0]])
>>> x = fsl.cho_solve((fnp.linalg.cholesky(a), True), a @ mx.array([1.0, 2.0]))
>>> [round(v, 4) for v in x.tolist()]
[1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import aval_of
from ftorch.numpy import linalg as _np_linalg
from ftorch.numpy._creation import asarray
from ftorch.numpy._linalg import broadcast_batch, cast, inexact_dtype, square_matrices
from ftorch.primitives.decompositions import _unpermute_rows
from ftorch.primitives.decompositions import lu_solve as _lu_solve

__all__ = ["solve_triangular", "cho_solve", "lu_factor", "lu_solve", "lu", "det", "inv",
           "solve"]

_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def _solve(fname: str, a: Any, b: Any, *, lower: bool, transpose_a: bool,
           unit_diagonal: bool) -> Any:
    """``op(a) x = b`` with ``b`` a vector (..., m) or matrices (..., m, k),
    batch dimensions broadcast; errors name ``fname`` and the argument."""
    a = square_matrices(a, fname, "a")
    b = asarray(b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    m = sa[-1]
    vector = len(sb) == len(sa) - 1
    if len(sb) == 0 or (sb[-1] if vector else sb[-2] if len(sb) >= 2 else None) != m:
        raise ValueError(
            f"{fname}: argument b must have shape (..., {m}) or (..., {m}, k) to match a of "
            f"shape {tuple(sa)}; got shape {tuple(sb)}")
    if vector:
        b = lax.expand_dims(b, (len(sb),))
        sb = (*sb, 1)
    dtype = inexact_dtype(a, b)
    a, b = broadcast_batch(fname, cast(a, dtype), cast(b, dtype))
    x = lax.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                             unit_diagonal=unit_diagonal)
    return lax.squeeze(x, (len(aval_of(x).shape) - 1,)) if vector else x


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """``x`` with ``op(a) @ x = b``, for ``a`` (..., m, m) triangular (its
    ``lower`` or upper triangle is read, the rest ignored) and ``b`` (..., m)
    or (..., m, k): as in JAX, ``b`` is a stack of vectors exactly when it
    has one dimension fewer than ``a``. ``trans``: 0 / ``"N"`` solves ``a x = b``, 1 / ``"T"``
    (and 2 / ``"C"``, the same for real arrays) ``a.T x = b``. With
    ``unit_diagonal`` the diagonal of ``a`` is taken as ones.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> a = mx.array([[2.0, 0.0], [1.0, 1.0]])
    >>> fsl.solve_triangular(a, mx.array([2.0, 3.0]), lower=True).tolist()
    [1.0, 2.0]
    """
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C'; got {trans!r}")
    return _solve("solve_triangular", a, b, lower=lower, transpose_a=_TRANS[trans],
                  unit_diagonal=unit_diagonal)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Any:
    """``x`` with ``A @ x = b``, given ``(c, lower)``: the Cholesky factor of
    ``A`` (``A = c @ c.T`` with ``lower``, else ``A = c.T @ c``), as from
    ``ftorch.numpy.linalg.cholesky``; ``b`` is (..., m) or (..., m, k).

    >>> import ftorch.numpy as fnp, ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> c = fnp.linalg.cholesky(mx.array([[4.0, 0.0], [0.0, 9.0]]))
    >>> fsl.cho_solve((c, True), mx.array([8.0, 9.0])).tolist()
    [2.0, 1.0]
    """
    c, lower = c_and_lower
    y = _solve("cho_solve", c, b, lower=lower, transpose_a=not lower, unit_diagonal=False)
    return _solve("cho_solve", c, y, lower=lower, transpose_a=lower, unit_diagonal=False)


def _floating(a: Any) -> Any:
    a = asarray(a)
    dtype = aval_of(a).dtype
    return a if mx.issubdtype(dtype, mx.inexact) else lax.astype(a, mx.float32)


def _matrices(a: Any, fname: str) -> Any:
    a = _floating(a)
    if len(aval_of(a).shape) < 2:
        raise ValueError(
            f"{fname}: argument a must be a matrix or a stack of them, shape (..., m, n); got "
            f"shape {tuple(aval_of(a).shape)}")
    return a


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """The LU decomposition of the matrices ``a`` (..., m, n) with partial
    pivoting, packed as ``(lu, piv)``: ``L`` (unit diagonal) below the
    diagonal of ``lu``, ``U`` on and above it, and the int32 row swaps
    ``piv`` (..., min(m, n)) (row ``i`` was swapped with row ``piv[i]``).
    Differentiable in ``lu``. ``overwrite_a`` and ``check_finite`` are
    accepted for SciPy compatibility and ignored.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> lu, piv = fsl.lu_factor(mx.array([[1.0, 2.0], [4.0, 4.0]]))
    >>> lu.tolist(), piv.tolist()
    ([[4.0, 4.0], [0.25, 1.0]], [1, 1])
    """
    lu_, pivots, _ = lax.lu(_matrices(a, "lu_factor"))
    return lu_, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """``x`` with ``a @ x = b`` (``trans`` 0) or ``a.T @ x = b`` (``trans`` 1,
    or 2: the same for real arrays), given ``(lu, piv) = lu_factor(a)`` for
    square ``a``. As in JAX, ``b`` is a stack of vectors (..., n) when it has
    one dimension fewer than ``lu``, else matrices (..., n, k); batch
    dimensions broadcast.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> a = mx.array([[0.0, 1.0], [2.0, 0.0]])
    >>> fsl.lu_solve(fsl.lu_factor(a), mx.array([1.0, 4.0])).tolist()
    [2.0, 1.0]
    >>> fsl.lu_solve(fsl.lu_factor(a), mx.array([1.0, 4.0]), trans=1).tolist()
    [4.0, 0.5]
    """
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2; got {trans!r}")
    lu_, pivots = lu_and_piv
    lu_ = square_matrices(lu_, "lu_solve", "lu")
    pivots = asarray(pivots)
    sl, sp = aval_of(lu_).shape, aval_of(pivots).shape
    n = sl[-1]
    if len(sp) < 1 or sp[-1] != n or not mx.issubdtype(aval_of(pivots).dtype, mx.integer):
        raise ValueError(
            f"lu_solve: piv must be integers of shape (..., {n}) to match lu of shape "
            f"{tuple(sl)}; got {aval_of(pivots).dtype} of shape {tuple(sp)}")
    b = asarray(b)
    sb = aval_of(b).shape
    vector = len(sb) == len(sl) - 1
    if len(sb) == 0 or (sb[-1] if vector else sb[-2] if len(sb) >= 2 else None) != n:
        raise ValueError(
            f"lu_solve: argument b must have shape (..., {n}) or (..., {n}, k) to match lu of "
            f"shape {tuple(sl)}; got shape {tuple(sb)}")
    dtype = inexact_dtype(lu_, b)
    lu_, b = cast(lu_, dtype), cast(b, dtype)
    if vector:
        b = lax.expand_dims(b, (len(sb),))
        sb = (*sb, 1)
    try:
        batch = tuple(mx.broadcast_shapes(tuple(sl[:-2]), tuple(sp[:-1]), tuple(sb[:-2])))
    except ValueError:
        raise ValueError(
            f"lu_solve: batch dimensions of lu {tuple(sl)}, piv {tuple(sp)} and b "
            f"{tuple(sb)} do not broadcast") from None
    lu_ = lax.broadcast_to(lu_, (*batch, n, n))
    b = lax.broadcast_to(b, (*batch, *sb[-2:]))
    perm = lax.lu_pivots_to_permutation(lax.broadcast_to(pivots, (*batch, n)), n)
    if 0 in aval_of(b).shape:
        x = lax.zeros_like(b)
    else:
        x = _lu_solve(lu_, perm, b, transpose=trans != 0)
    return lax.squeeze(x, (len(batch) + 1,)) if vector else x


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Any, ...]:
    """The LU decomposition ``a = P @ L @ U`` of the matrices ``a``
    (..., m, n), as ``jax.scipy.linalg.lu``: ``(P, L, U)`` with ``P`` (..., m,
    m) a permutation matrix, ``L`` (..., m, k) unit lower triangular and ``U``
    (..., k, n) upper triangular, ``k = min(m, n)``; with ``permute_l``,
    ``(P @ L, U)``. Differentiable in ``L`` and ``U``.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> p, l, u = fsl.lu(mx.array([[1.0, 2.0], [4.0, 4.0]]))
    >>> p.tolist(), l.tolist(), u.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.25, 1.0]], [[4.0, 4.0], [0.0, 1.0]])
    """
    a = _matrices(a, "lu")
    shape, dtype = aval_of(a)
    nd, (m, n) = len(shape), shape[-2:]
    k = min(m, n)
    lu_, _, perm = lax.lu(a)
    ones = mx.ones((m, k), dtype=dtype)
    lower = lax.add(lax.multiply(lax.static_slice(lu_, (*[slice(None)] * (nd - 1), slice(0, k))),
                                 mx.tril(ones, -1)), mx.eye(m, k, dtype=dtype))
    upper = lax.multiply(lax.static_slice(lu_, (*[slice(None)] * (nd - 2), slice(0, k),
                                                slice(None))),
                         mx.triu(mx.ones((k, n), dtype=dtype)))
    if permute_l:
        return _unpermute_rows(lower, perm), upper
    # P[i, j] = 1 where perm[j] == i, so that P @ (L @ U) puts row j back at perm[j].
    p = lax.astype(lax.equal(lax.expand_dims(perm, (nd - 2,)),
                             mx.arange(m, dtype=mx.int32)[:, None]), dtype)
    return p, lower, upper


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinants of the square matrices ``a`` (..., n, n), as
    ``jax.scipy.linalg.det`` (``ftorch.numpy.linalg.det``: its gradient is
    the transposed adjugate, also at singular matrices).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.det(mx.array([[2.0, 1.0], [1.0, 3.0]])).item()
    5.0
    """
    return _np_linalg.det(a)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverses of the square matrices ``a`` (..., n, n), as
    ``jax.scipy.linalg.inv``; NaN where ``a`` is singular.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.inv(mx.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _np_linalg.inv(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """``x`` with ``a @ x = b``, as ``jax.scipy.linalg.solve``.

    ``assume_a``: ``"gen"``, ``"sym"`` or ``"her"`` solve by LU
    decomposition exactly as ``ftorch.numpy.linalg.solve`` (``b`` (n,) is a
    vector, else (..., n, k)); ``"pos"`` (symmetric positive definite) by
    Cholesky decomposition of the matrix read from ``a``'s ``lower`` (else
    upper) triangle, with ``b`` (..., n) a stack of vectors when it has one
    dimension fewer than ``a`` (JAX's rule for this case). With ``"pos"`` the
    gradient is taken with respect to that triangle (the other gets zero).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> a = mx.array([[4.0, 2.0], [2.0, 3.0]])
    >>> [round(v, 4) for v in fsl.solve(a, mx.array([8.0, 7.0]), assume_a="pos").tolist()]
    [1.25, 1.5]
    """
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(
            f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos'; got {assume_a!r}")
    if assume_a != "pos":
        return _np_linalg.solve(a, b)
    a = square_matrices(a, "solve", "a")
    nd = len(aval_of(a).shape)
    n = aval_of(a).shape[-1]
    ones = mx.ones((n, n), dtype=aval_of(a).dtype)
    # The symmetric matrix whose lower (upper) triangle is a's.
    tri = lax.multiply(a, mx.tril(ones) if lower else mx.triu(ones))
    strict = lax.multiply(a, mx.tril(ones, -1) if lower else mx.triu(ones, 1))
    sym = lax.add(tri, lax.transpose(strict, (*range(nd - 2), nd - 1, nd - 2)))
    return cho_solve((lax.cholesky(sym), True), b)
