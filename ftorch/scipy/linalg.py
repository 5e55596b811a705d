"""``ftorch.scipy.linalg``, as ``jax.scipy.linalg``: triangular solves and
Cholesky solves over the ``triangular_solve`` primitive (MLX's LAPACK, on the
CPU stream). Batch dimensions of ``a`` and ``b`` broadcast.

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
from ftorch.numpy._creation import asarray, result_type
from ftorch.numpy._linalg import square_matrices

__all__ = ["solve_triangular", "cho_solve"]

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
    try:
        batch = tuple(mx.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    except ValueError:
        raise ValueError(
            f"{fname}: batch dimensions of a {tuple(sa)} and b {tuple(sb)} do not "
            "broadcast") from None
    dtype = result_type(a, b)
    if not mx.issubdtype(dtype, mx.inexact):
        dtype = mx.float32
    a, b = (x if aval_of(x).dtype == dtype else lax.astype(x, dtype) for x in (a, b))
    if tuple(sa[:-2]) != batch:
        a = lax.broadcast_to(a, (*batch, *sa[-2:]))
    if tuple(sb[:-2]) != batch:
        b = lax.broadcast_to(b, (*batch, *sb[-2:]))
    x = lax.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                             unit_diagonal=unit_diagonal)
    return lax.squeeze(x, (len(batch) + 1,)) if vector else x


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
