"""Orthogonal decompositions of ``ftorch.numpy.linalg``, as in
``jax.numpy.linalg``: ``qr``, ``eigh``, ``eigvalsh``, ``svd`` and what is
built on the SVD (``pinv``, ``lstsq``, ``matrix_rank``), over the strict
wrappers of ``ftorch.primitives.orthogonal``. Every function takes leading
batch dimensions (but ``lstsq``, 2-d as in NumPy and JAX: ``vmap`` it),
computes in float32 for integer input and in float32 for float16/bfloat16
(cast back), and runs MLX's LAPACK kernels on the CPU stream. See
``ftorch.primitives.orthogonal`` for the derivative rules and their
treatment of repeated eigenvalues and singular values.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.linalg.eigvalsh(mx.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
[1.0, 3.0]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import aval_of, is_floating
from ftorch.numpy._creation import asarray, result_type
from ftorch.numpy._linalg import cast

__all__ = ["qr", "eigh", "eigvalsh", "svd", "pinv", "lstsq", "matrix_rank",
           "QRResult", "EighResult", "SVDResult"]

_HALF = (mx.float16, mx.bfloat16)


class QRResult(NamedTuple):
    """What ``qr`` returns (but for ``mode='r'``)."""

    Q: Any
    R: Any


class EighResult(NamedTuple):
    """What ``eigh`` returns: ascending eigenvalues, eigenvectors in columns."""

    eigenvalues: Any
    eigenvectors: Any


class SVDResult(NamedTuple):
    """What ``svd`` returns with ``compute_uv``: ``a = U @ diag(S) @ Vh``."""

    U: Any
    S: Any
    Vh: Any


# ----------------------------------------------------------------------------
# Argument checks and dtypes
# ----------------------------------------------------------------------------


def _matrices(x: Any, fname: str, argname: str, square: bool = False) -> tuple[Any, mx.Dtype]:
    """``x`` as a stack of matrices (..., m, n) in a dtype LAPACK takes
    (float32 or float64), and the dtype results are returned in."""
    x = asarray(x)
    shape, dtype = aval_of(x)
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        what = "a square matrix or a stack of them, shape (..., n, n)" if square else \
            "a matrix or a stack of them, shape (..., m, n)"
        raise ValueError(f"{fname}: argument {argname} must be {what}; got shape {tuple(shape)}")
    return _lapack_dtype(x, fname, argname)


def _lapack_dtype(x: Any, fname: str, argname: str) -> tuple[Any, mx.Dtype]:
    dtype = aval_of(x).dtype
    if dtype == mx.complex64:
        raise TypeError(f"{fname}: argument {argname} is complex; only real matrices are "
                        "supported")
    if not is_floating(dtype):
        return lax.astype(x, mx.float32), mx.float32
    if dtype in _HALF:
        return lax.astype(x, mx.float32), dtype
    return x, dtype


def _mT(x: Any) -> Any:
    n = len(aval_of(x).shape)
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


def _symmetrized(a: Any) -> Any:
    return lax.multiply(lax.add(a, _mT(a)), 0.5)


def _uplo(UPLO: Any, fname: str) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"{fname}: UPLO must be 'L' or 'U' (or None for 'L'), got {UPLO!r}")


def _eps(dtype: mx.Dtype) -> float:
    return float(mx.finfo(dtype).eps)


# ----------------------------------------------------------------------------
# qr
# ----------------------------------------------------------------------------


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition ``a = Q @ R`` of the matrices ``a`` (..., m, n),
    as ``jax.numpy.linalg.qr``.

    ``mode``: ``'reduced'`` (default): ``Q`` (..., m, k) with orthonormal
    columns and upper-triangular ``R`` (..., k, n), k = min(m, n);
    ``'complete'``: ``Q`` (..., m, m) orthogonal and ``R`` (..., m, n);
    ``'r'``: ``R`` (..., k, n) alone. ``'raw'`` (LAPACK's Householder
    reflectors) is not supported: MLX does not expose them. Returns a
    ``QRResult(Q, R)`` (``R`` alone for ``'r'``). Householder QR:
    ``R``'s diagonal may be negative (no sign normalisation, as NumPy and JAX).

    Derivatives: every mode for m >= n but ``'complete'`` with m > n (its
    extra columns of ``Q`` have no unique derivative: ``NotImplementedError``
    when ``Q`` is differentiated; ``R`` alone still is), and m < n. The
    leading min(m, n) columns of ``a`` must be linearly independent.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> q, r = fnp.linalg.qr(mx.array([[3.0, 1.0], [4.0, 2.0], [0.0, 2.0]]))
    >>> q.shape, r.shape, round(abs(r[0, 0].item()), 4)
    ((3, 2), (2, 2), 5.0)
    >>> fnp.linalg.qr(mx.ones((3, 2)), mode="complete").Q.shape
    (3, 3)
    """
    if mode == "raw":
        raise NotImplementedError(
            "qr: mode='raw' (LAPACK's Householder reflectors and scaling factors) is not "
            "supported: MLX does not expose them; use 'reduced', 'complete' or 'r'")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(
            f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a, dtype = _matrices(a, "qr", "a")
    q, r = lax.qr(a, full_matrices=mode == "complete")
    if mode == "r":
        return cast(r, dtype)
    return QRResult(cast(q, dtype), cast(r, dtype))


# ----------------------------------------------------------------------------
# eigh, eigvalsh
# ----------------------------------------------------------------------------


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues and eigenvectors of the symmetric matrices ``a``
    (..., n, n), as ``jax.numpy.linalg.eigh``: an
    ``EighResult(eigenvalues, eigenvectors)``, the eigenvalues (..., n)
    ascending and the orthonormal eigenvectors in the columns of (..., n, n).

    With ``symmetrize_input`` (default) ``a`` is replaced by
    ``(a + a.T) / 2``, so both triangles count and gradients are symmetric;
    without it only the ``UPLO`` triangle (``'L'`` (default) or ``'U'``) is
    read, and only it gets a gradient.

    Eigenvectors are defined up to sign (and, for a repeated eigenvalue, up
    to a rotation within its eigenspace). Derivatives at repeated
    eigenvalues are finite: the coupling between vectors of one eigenspace
    is dropped (zero), which is exact for eigenvalue functions symmetric
    within each eigenspace and for eigenspace projectors; see
    ``ftorch.primitives.orthogonal``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> w, v = fnp.linalg.eigh(mx.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist(), round(abs(v[0, 0].item()), 4)
    ([1.0, 3.0], 0.7071)
    """
    lower = _uplo(UPLO, "eigh")
    a, dtype = _matrices(a, "eigh", "a", square=True)
    v, w = lax.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(cast(w, dtype), cast(v, dtype))


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """The ascending eigenvalues (..., n) of the symmetric matrices ``a``
    (..., n, n), as ``jax.numpy.linalg.eigvalsh`` (``UPLO`` and
    ``symmetrize_input`` as in ``eigh``). The gradient of a function
    symmetric in each group of repeated eigenvalues is exact (that of
    ``sum(eigvalsh(a))`` is ``I``); the gradient of one eigenvalue within a
    group is ``v v^T`` for the eigenvector LAPACK returned, a subgradient.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.eigvalsh(mx.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    >>> ft.grad(lambda a: fnp.sum(fnp.linalg.eigvalsh(a)))(mx.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    lower = _uplo(UPLO, "eigvalsh")
    a, dtype = _matrices(a, "eigvalsh", "a", square=True)
    return cast(lax.eigvalsh(a, lower=lower, symmetrize_input=symmetrize_input), dtype)


# ----------------------------------------------------------------------------
# svd
# ----------------------------------------------------------------------------


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """The singular value decomposition ``a = U @ diag(S) @ Vh`` of the
    matrices ``a`` (..., m, n), as ``jax.numpy.linalg.svd``.

    Returns ``SVDResult(U, S, Vh)``, ``S`` (..., k) descending, k = min(m, n),
    ``U`` (..., m, m) and ``Vh`` (..., n, n) with ``full_matrices`` (default),
    else (..., m, k) and (..., k, n); ``S`` alone without ``compute_uv``.
    ``hermitian=True`` symmetrizes ``a`` (as JAX) and then runs the general
    SVD. A matrix with a NaN or an infinity gets NaN factors.

    Derivatives: ``S`` always (at repeated singular values too, exact for
    functions symmetric within each group); ``U`` and ``Vh`` with
    ``full_matrices=False`` or a square ``a`` (the full factors of a
    non-square matrix have no unique derivative: ``NotImplementedError``).
    Singular vectors are defined up to sign; at repeated or zero singular
    values the undetermined parts of their derivative are zero; see
    ``ftorch.primitives.orthogonal``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> a = mx.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]])
    >>> fnp.linalg.svd(a, compute_uv=False).tolist()
    [4.0, 3.0]
    >>> u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    >>> u.shape, vh.shape
    ((3, 2), (2, 2))
    """
    a, dtype = _matrices(a, "svd", "a", square=hermitian)
    if hermitian:
        a = _symmetrized(a)
    if not compute_uv:
        return cast(lax.svd(a, compute_uv=False)[0], dtype)
    u, s, vh = lax.svd(a, full_matrices=full_matrices)
    return SVDResult(cast(u, dtype), cast(s, dtype), cast(vh, dtype))


# ----------------------------------------------------------------------------
# pinv, lstsq, matrix_rank
# ----------------------------------------------------------------------------


def _batch_tolerance(tol: Any, batch: tuple[int, ...], dtype: mx.Dtype, fname: str,
                     argname: str) -> Any:
    """A tolerance (a scalar, or an array broadcasting to the batch shape) as
    an array of shape ``batch`` and ``dtype``."""
    tol = asarray(tol)
    shape, tdtype = aval_of(tol)
    if len(shape) > len(batch) or any(d not in (1, b) for d, b in
                                      zip(shape[::-1], batch[::-1])):
        raise ValueError(
            f"{fname}: argument {argname} must be a scalar or broadcast to the batch shape "
            f"{batch} of the matrices; got shape {tuple(shape)}")
    if tdtype != dtype:
        tol = lax.astype(tol, dtype)
    return lax.stop_gradient(lax.broadcast_to(tol, batch))


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverses (..., n, m) of the matrices ``a``
    (..., m, n), as ``jax.numpy.linalg.pinv``: from the SVD, with singular
    values at most ``rtol * max(s)`` treated as zero. ``rtol`` (alias
    ``rcond``) is a scalar or an array of shape ``a.shape[:-2]``; by
    default ``10 * max(m, n) * eps`` (JAX's default; NumPy's is ``1e-15``).
    ``hermitian=True`` symmetrizes ``a`` first.

    The derivative (Golub and Pereyra's formula, as JAX) is exact wherever
    the rank is locally constant, rank-deficient matrices included; it does
    not depend on ``rtol``, which gets no gradient.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.pinv(mx.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.5, 0.0]]
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: give only one of rtol and rcond (its alias)")
        rtol = rcond
    a, dtype = _matrices(a, "pinv", "a", square=hermitian)
    if hermitian:
        a = _symmetrized(a)
    *batch, m, n = aval_of(a).shape
    batch = tuple(batch)
    if m == 0 or n == 0 or 0 in batch:
        return lax.zeros((*batch, n, m), dtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * _eps(aval_of(a).dtype)
    rtol = _batch_tolerance(rtol, batch, aval_of(a).dtype, "pinv", "rtol")
    return cast(lax.pinv(a, rtol), dtype)


def lstsq(a: Any, b: Any, rcond: Any = None, *,
          numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """The least-squares solution of ``a @ x = b``, as
    ``jax.numpy.linalg.lstsq``: ``(x, residuals, rank, s)``.

    ``a`` is (M, N) and ``b`` (M,) or (M, K) (2-d, as NumPy and JAX;
    ``ftorch.vmap`` it over a batch). ``x`` (N,) or (N, K) is the
    minimum-norm solution ``pinv(a) @ b``, with singular values at most
    ``rcond * max(s)`` treated as zero (``rcond`` by default
    ``eps * max(M, N)``, a negative ``rcond`` means ``eps``, as NumPy).
    ``rank`` is the number of singular values kept (int32), ``s`` the
    singular values (descending). ``residuals`` holds the squared norm of
    ``b - a @ x`` per column of ``b``, shape (K,) ((1,) for a 1-d ``b``); as
    in JAX it is always computed (jit- and vmap-compatible). With
    ``numpy_resid=True`` it is empty, as in NumPy, when ``rank < N`` or
    ``M <= N``: that needs the rank's value, so not under jit or vmap.

    ``x`` is differentiated through ``pinv`` (exact at locally constant
    rank, rank-deficient ``a`` included), ``s`` through the SVD.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> a = mx.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> x, res, rank, s = fnp.linalg.lstsq(a, mx.array([1.0, 1.0, 3.0]))
    >>> [round(v, 4) for v in x.tolist()], round(res.item(), 4), rank.item()
    ([1.3333, 1.3333], 0.3333, 2)
    """
    a, b = asarray(a), asarray(b)
    a_shape, b_shape = tuple(aval_of(a).shape), tuple(aval_of(b).shape)
    if len(a_shape) != 2:
        raise ValueError(f"lstsq: argument a must be a matrix (M, N); got shape {a_shape} "
                         "(vmap lstsq over a batch)")
    if len(b_shape) not in (1, 2):
        raise ValueError(f"lstsq: argument b must have shape (M,) or (M, K); got shape "
                         f"{b_shape}")
    if b_shape[0] != a_shape[0]:
        raise ValueError(f"lstsq: a {a_shape} and b {b_shape} must have the same number of "
                         "rows M")
    dtype = result_type(a, b)
    if not is_floating(dtype) and dtype != mx.complex64:
        dtype = mx.float32
    a, out_dtype = _lapack_dtype(lax.astype(a, dtype) if aval_of(a).dtype != dtype else a,
                                 "lstsq", "a")
    dtype = aval_of(a).dtype
    b = lax.astype(b, dtype) if aval_of(b).dtype != dtype else b
    m, n = a_shape
    b2 = lax.reshape(b, (m, 1)) if len(b_shape) == 1 else b
    k = aval_of(b2).shape[1]
    eps = _eps(dtype)
    if m == 0 or n == 0:
        x = lax.zeros((n, k), dtype)
        s = lax.zeros((0,), dtype)
        rank = mx.array(0, dtype=mx.int32)
    else:
        if rcond is None:
            rcond = eps * max(m, n)
        elif isinstance(rcond, (int, float)):
            rcond = eps if rcond < 0 else rcond
        else:
            rcond = asarray(rcond)
            rcond = lax.where(lax.less(rcond, 0), eps, rcond)
        rtol = _batch_tolerance(rcond, (), dtype, "lstsq", "rcond")
        x = lax.matmul(lax.pinv(a, rtol), b2)
        s = lax.svd(a, compute_uv=False)[0]
        cutoff = lax.multiply(rtol, lax.static_slice(s, (slice(0, 1),)))
        rank = lax.sum(lax.astype(lax.greater(s, cutoff), mx.int32), (0,))
    resid = None
    if numpy_resid:
        try:
            r = int(rank)
        except TypeError as e:
            raise TypeError(
                "lstsq: numpy_resid=True needs the rank's value (it decides whether the "
                "residuals are empty), which is not known under jit or vmap; use "
                "numpy_resid=False") from e
        if r < n or m <= n:
            resid = lax.zeros((0,), dtype)
    if resid is None:
        err = lax.subtract(b2, lax.matmul(a, x))
        resid = lax.sum(lax.multiply(err, err), (0,))
    if len(b_shape) == 1:
        x = lax.reshape(x, (n,))
    return cast(x, out_dtype), cast(resid, out_dtype), rank, cast(s, out_dtype)


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """The rank of the matrices ``M`` (..., m, n): the number of singular
    values above a threshold, int32 of shape ``M.shape[:-2]``, not
    differentiable.

    As ``numpy.linalg.matrix_rank``: ``rtol`` is relative (the threshold is
    ``rtol * max(s)``), ``tol`` absolute; only one may be given; by default
    the threshold is ``max(s) * max(m, n) * eps``. Either may be a scalar or
    an array of shape ``M.shape[:-2]``. (``jax.numpy.linalg.matrix_rank``
    documents ``rtol`` as relative but compares it to the singular values
    directly.) ``hermitian=True`` takes ``|eigenvalues|`` of the
    symmetrized ``M`` as its singular values. An ``M`` with fewer than two
    dimensions has rank 1 unless it is all zeros, as NumPy.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.matrix_rank(mx.array([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    >>> fnp.linalg.matrix_rank(mx.eye(3)).item()
    3
    """
    if rtol is not None and tol is not None:
        raise ValueError("matrix_rank: give only one of rtol (relative) and tol (absolute)")
    M = asarray(M)
    if aval_of(M).ndim < 2:
        nonzero = lax.any(lax.not_equal(M, 0), tuple(range(aval_of(M).ndim)))
        return lax.astype(nonzero, mx.int32)
    M, _ = _matrices(M, "matrix_rank", "M", square=hermitian)
    *batch, m, n = aval_of(M).shape
    batch = tuple(batch)
    if m == 0 or n == 0 or 0 in batch:
        return lax.zeros(batch, mx.int32)
    M = lax.stop_gradient(M)
    if hermitian:
        s = lax.abs(lax.eigvalsh(M))
    else:
        s = lax.svd(M, compute_uv=False)[0]
    dtype = aval_of(s).dtype
    smax = lax.max(s, (len(batch),))
    if tol is not None:
        threshold = _batch_tolerance(tol, batch, dtype, "matrix_rank", "tol")
    else:
        rel = max(m, n) * _eps(dtype) if rtol is None else \
            _batch_tolerance(rtol, batch, dtype, "matrix_rank", "rtol")
        threshold = lax.multiply(smax, rel)
    above = lax.greater(s, lax.expand_dims(threshold, (len(batch),)))
    return lax.sum(lax.astype(above, mx.int32), (len(batch),))
