"""``ftorch.scipy.linalg``, as ``jax.scipy.linalg``: triangular, Cholesky and
LU solves, the Cholesky, LU, QR, SVD and symmetric eigen decompositions
with SciPy's conventions, ``det``, ``inv`` and ``solve``, over the primitives
of ``ftorch.primitives.decompositions`` and ``orthogonal`` (MLX's LAPACK, on
the CPU stream); the matrix functions (``expm``, ``sqrtm``, ``polar``, ...)
and the special matrices (``toeplitz``, ``block_diag``, ...). Batch
dimensions of ``a`` and ``b`` broadcast.

>>> import ftorch.numpy as fnp, ftorch.scipy.linalg as fsl, mlx.core as mx
>>> a = mx.array([[4.0, 2.0], [2.0, 3.0]])
>>> x = fsl.cho_solve((fnp.linalg.cholesky(a), True), a @ mx.array([1.0, 2.0]))
>>> [round(v, 4) for v in x.tolist()]
[1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
import ftorch.primitives as lax
from ftorch.core import aval_of
from ftorch.numpy import linalg as _np_linalg
from ftorch.numpy._creation import asarray
from ftorch.numpy._linalg import broadcast_batch, cast, inexact_dtype, square_matrices
from ftorch.numpy._linalg_orthogonal import _matrices as _lapack_matrices
from ftorch.primitives.decompositions import _unpermute_rows
from ftorch.primitives.decompositions import lu_solve as _lu_solve
from ftorch.scipy._matrix_functions import *  # noqa: F403
from ftorch.scipy._matrix_functions import __all__ as _function_names
from ftorch.scipy._special_matrices import *  # noqa: F403
from ftorch.scipy._special_matrices import __all__ as _special_names

__all__ = ["solve_triangular", "cho_solve", "cho_factor", "cholesky", "lu_factor", "lu_solve",
           "lu", "det", "inv", "solve", "qr", "qr_multiply", "svd", "eigh", "eigh_tridiagonal",
           "hessenberg",
           *_function_names, *_special_names]

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


# ----------------------------------------------------------------------------
# Decompositions with SciPy's conventions
# ----------------------------------------------------------------------------


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor of the symmetric positive-definite matrices ``a``
    (..., n, n), as ``jax.scipy.linalg.cholesky``: upper triangular ``U``
    with ``a = U.T @ U`` by default (SciPy's convention), lower ``L`` with
    ``a = L @ L.T`` with ``lower``. Only that triangle of ``a`` is read (as
    SciPy and JAX) and gets a gradient; NaN where the matrix is not positive
    definite. ``overwrite_a`` and ``check_finite`` are accepted and ignored.
    (``ftorch.numpy.linalg.cholesky`` is lower and symmetrizes ``a``.)

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[0]
    [2.0, 1.0]
    """
    a, dtype = _lapack_matrices(a, "cholesky", "a", square=True)
    if lower:
        return cast(lax.cholesky(a), dtype)
    return cast(_np_linalg._mT(lax.cholesky(_np_linalg._mT(a))), dtype)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """``(c, lower)``: the Cholesky factor ``cholesky(a, lower)`` and which
    triangle it is, for ``cho_solve``, as ``jax.scipy.linalg.cho_factor``
    (the other triangle of ``c`` is zero, where SciPy leaves ``a``'s
    entries).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> a = mx.array([[4.0, 2.0], [2.0, 3.0]])
    >>> [round(v, 4) for v in fsl.cho_solve(fsl.cho_factor(a), mx.array([6.0, 5.0])).tolist()]
    [1.0, 1.0]
    """
    return cholesky(a, lower=lower), lower


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Any, ...]:
    """The QR decomposition of the matrices ``a`` (..., m, n) with SciPy's
    modes, as ``jax.scipy.linalg.qr``: ``'full'`` (default) ``(Q, R)`` with
    ``Q`` (..., m, m), ``R`` (..., m, n); ``'economic'`` ``Q`` (..., m, k),
    ``R`` (..., k, n), k = min(m, n); ``'r'`` the one-tuple ``(R,)`` of the
    full ``R``. ``'raw'`` and ``pivoting=True`` are not supported (MLX exposes
    neither Householder reflectors nor column-pivoted QR). Derivatives as
    ``ftorch.numpy.linalg.qr``.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> q, r = fsl.qr(mx.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    """
    if pivoting:
        raise NotImplementedError("qr: pivoting=True (column-pivoted QR) is not supported: MLX "
                                  "has no such kernel")
    if mode == "raw":
        raise NotImplementedError("qr: mode='raw' is not supported: MLX does not expose the "
                                  "Householder reflectors")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    x, dtype = _lapack_matrices(a, "qr", "a")
    q, r = lax.qr(x, full_matrices=mode != "economic")
    if mode == "r":
        return (cast(r, dtype),)
    return cast(q, dtype), cast(r, dtype)


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, Any]:
    """``(Q @ c, R)`` (``mode='left'``) or ``(c @ Q, R)`` (``'right'``,
    the default) for the economic QR decomposition ``a = Q R`` (``Q``
    (m, k), ``R`` (k, n)), as ``jax.scipy.linalg.qr_multiply``. ``conjugate``
    conjugates ``Q`` (nothing for real matrices); ``pivoting=True`` is not
    supported. Differentiable as ``qr``.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> qc, r = fsl.qr_multiply(mx.eye(2), mx.array([[1.0, 2.0]]))
    >>> [abs(v) for v in qc.tolist()[0]], r.shape
    ([1.0, 2.0], (2, 2))
    """
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True (column-pivoted QR) is not "
                                  "supported: MLX has no such kernel")
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    x, dtype = _lapack_matrices(a, "qr_multiply", "a")
    q, r = lax.qr(x, full_matrices=False)
    c = asarray(c)
    k = aval_of(q).shape[-1]
    sc = tuple(aval_of(c).shape)
    if mode == "left":
        fits = len(sc) >= 1 and sc[0] == k
    else:
        fits = len(sc) >= 1 and sc[-1] == aval_of(q).shape[-2]
    if not fits:
        raise ValueError(f"qr_multiply: c of shape {sc} does not fit Q of shape "
                         f"{tuple(aval_of(q).shape)} for mode={mode!r}")
    q = cast(q, dtype)
    qc = fnp.matmul(q, c) if mode == "left" else fnp.matmul(c, q)
    return qc, cast(r, dtype)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """The singular value decomposition of the matrices ``a`` (..., m, n),
    as ``jax.scipy.linalg.svd``: the tuple ``(U, s, Vh)`` (``s`` alone
    without ``compute_uv``), as ``ftorch.numpy.linalg.svd`` (also its
    derivatives). ``lapack_driver`` (``'gesdd'`` or ``'gesvd'``) is
    accepted; MLX has one SVD.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.svd(mx.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False).tolist()
    [4.0, 3.0]
    """
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got "
                         f"{lapack_driver!r}")
    out = _np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrices
    ``a`` (..., n, n), as ``jax.scipy.linalg.eigh``: ``(w, v)``, or ``w``
    with ``eigvals_only``. Only the ``lower`` (else upper) triangle of ``a``
    is read and gets a gradient (``ftorch.numpy.linalg.eigh`` symmetrizes);
    derivatives as there. The generalized problem (``b``), ``eigvals``
    subsets and ``type`` other than 1 are not supported, as in JAX.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.eigh(mx.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True).tolist()
    [1.0, 3.0]
    """
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b) is not supported")
    if eigvals is not None:
        raise NotImplementedError("eigh: eigvals (a subset of eigenvalues) is not supported")
    if type != 1:
        raise NotImplementedError(f"eigh: only type=1 is supported, got {type!r}")
    x, dtype = _lapack_matrices(a, "eigh", "a", square=True)
    if eigvals_only:
        return cast(lax.eigvalsh(x, lower=lower, symmetrize_input=False), dtype)
    v, w = lax.eigh(x, lower=lower, symmetrize_input=False)
    return cast(w, dtype), cast(v, dtype)


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """Eigenvalues (ascending) of the symmetric tridiagonal matrix with
    diagonal ``d`` (n,) and off-diagonal ``e`` (n - 1,), as
    ``jax.scipy.linalg.eigh_tridiagonal``; with the eigenvectors ``(w, v)``
    unless ``eigvals_only``. ``select``: ``'a'`` (all) or ``'i'`` (indices
    ``select_range = (lo, hi)``, inclusive); ``'v'`` (a value range, whose
    count depends on the data) is not supported. The matrix is assembled
    and solved by the dense symmetric eigensolver (LAPACK, CPU stream), so it
    is differentiable as ``eigh``; ``tol`` and ``key`` (of JAX's bisection)
    are accepted for compatibility.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> w = fsl.eigh_tridiagonal(mx.array([2.0, 2.0]), mx.array([1.0]), eigvals_only=True)
    >>> w.tolist()
    [1.0, 3.0]
    """
    d, e = asarray(d), asarray(e)
    sd, se = tuple(aval_of(d).shape), tuple(aval_of(e).shape)
    if len(sd) != 1 or se != (max(sd[0] - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: d must be (n,) and e (n - 1,); got shapes {sd} "
                         f"and {se}")
    if select not in ("a", "i", "v"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' (eigenvalues in a value range: "
                                  "a count that depends on the data) is not supported")
    n = sd[0]
    lo, hi = 0, n - 1
    if select == "i":
        if select_range is None or not (0 <= select_range[0] <= select_range[1] < n):
            raise ValueError(f"eigh_tridiagonal: select='i' needs select_range = (lo, hi) with "
                             f"0 <= lo <= hi < {n}; got {select_range!r}")
        lo, hi = (int(i) for i in select_range)
    dtype = inexact_dtype(d, e)
    d, e = cast(d, dtype), cast(e, dtype)
    matrix = fnp.diag(d) + fnp.diag(e, 1) + fnp.diag(e, -1) if n > 1 else fnp.diag(d)
    if eigvals_only:
        return eigh(matrix, eigvals_only=True)[lo:hi + 1]
    w, v = eigh(matrix)
    return w[lo:hi + 1], v[:, lo:hi + 1]


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """The Hessenberg form ``H`` of the square matrices ``a`` (..., n, n)
    (zero below the first subdiagonal), with ``a = Q @ H @ Q.T``, as
    ``jax.scipy.linalg.hessenberg``: ``H``, or ``(H, Q)`` with ``calc_q``.

    By n - 2 Householder reflections with LAPACK's sign convention (each
    subdiagonal entry is ``-sign(x0) ||x||``; a column already reduced is
    left alone), written with ftorch ops on the default device, so it is
    differentiable (JAX's is not) where no reduced column vanishes. Costs
    ``O(n^4)`` (each reflection is applied as a matrix product): for small
    and medium matrices.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> h, q = fsl.hessenberg(mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 8.0, 9.0]]),
    ...                       calc_q=True)
    >>> round(abs(h[2, 0].item()), 6), [round(abs(v), 4) for v in q[0].tolist()]
    (0.0, [1.0, 0.0, 0.0])
    """
    h, dtype = _lapack_matrices(a, "hessenberg", "a", square=True)
    shape = tuple(aval_of(h).shape)
    n, batch = shape[-1], shape[:-2]
    fdtype = aval_of(h).dtype
    eye = fnp.eye(n, dtype=fdtype)
    q = fnp.broadcast_to(eye, shape)
    for k in range(n - 2):
        x = h[..., k + 1:, k]  # the column below the subdiagonal entry, (..., n - k - 1)
        alpha = x[..., :1]
        norm = fnp.sqrt(fnp.sum(x * x, axis=-1, keepdims=True))
        rest = fnp.sum(x[..., 1:] * x[..., 1:], axis=-1, keepdims=True)
        sign = fnp.where(alpha < 0, -1.0, 1.0)
        v = fnp.concatenate([alpha + sign * norm, x[..., 1:]], axis=-1)
        v = fnp.concatenate([fnp.zeros((*batch, k + 1), fdtype), v], axis=-1)
        vv = fnp.sum(v * v, axis=-1, keepdims=True)
        reflect = rest > 0  # else the column is already reduced: no reflection
        scale = fnp.where(reflect, 2.0 / fnp.where(reflect, vv, 1.0), 0.0)
        p = eye - scale[..., None] * v[..., :, None] * v[..., None, :]
        h = fnp.matmul(fnp.matmul(p, h), p)
        q = fnp.matmul(q, p)
    # Exact zeros below the subdiagonal, as LAPACK returns them.
    h = h * fnp.asarray(mx.tril(mx.ones((n, n)), -2) == 0, fdtype)
    return (cast(h, dtype), cast(q, dtype)) if calc_q else cast(h, dtype)
