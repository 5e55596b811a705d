"""The special matrices of ``jax.scipy.linalg``: matrices built from vectors
(``toeplitz``, ``hankel``, ``circulant``, ``companion``, ``fiedler``,
``fiedler_companion``, ``leslie``, ``convolution_matrix``, ``block_diag``),
differentiable in those vectors and batched over their leading axes where
JAX's are, and constant matrices of a size (``dft``, ``hadamard``,
``helmert``, ``hilbert``, ``invhilbert``, ``pascal``, ``invpascal``), whose
entries are computed exactly (integer arithmetic, float64) and rounded once.

Each matrix built from a vector is one gather, ``take(values, index)``: the
vector's entries (and a zero) laid out by a static index matrix.

>>> import ftorch.scipy.linalg as fsl, mlx.core as mx
>>> fsl.toeplitz(mx.array([1.0, 2.0, 3.0])).tolist()
[[1.0, 2.0, 3.0], [2.0, 1.0, 2.0], [3.0, 2.0, 1.0]]
"""

from __future__ import annotations

import math
import operator
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch.core import aval_of
from ftorch.dtypes import to_mlx_dtype

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def _vectors(x: Any, fname: str, argname: str, min_size: int = 0) -> Any:
    """``x`` as an array of at least one dimension (vectors along the last)."""
    x = fnp.asarray(x)
    shape = tuple(aval_of(x).shape)
    if len(shape) == 0:
        x = fnp.reshape(x, (1,))
    if aval_of(x).shape[-1] < min_size:
        raise ValueError(f"{fname}: argument {argname} needs at least {min_size} entries along "
                         f"its last axis; got shape {shape}")
    return x


def _vector(x: Any, fname: str, argname: str, min_size: int = 0) -> Any:
    """``x`` as one vector (1-d; a scalar is a vector of one)."""
    x = _vectors(x, fname, argname, min_size)
    if aval_of(x).ndim != 1:
        raise ValueError(f"{fname}: argument {argname} must be 1-d; got shape "
                         f"{tuple(aval_of(x).shape)}")
    return x


def _laid_out(values: Any, index: np.ndarray) -> Any:
    """``values[..., index]``: the vectors' entries laid out by a static
    integer ``index`` (of any shape)."""
    return fnp.take(values, mx.array(index.astype(np.int32)), axis=-1)


def _with_zero(*parts: Any) -> Any:
    """The vectors ``parts`` (broadcast over their batch axes, promoted to one
    dtype) joined along the last axis, then a zero: index -1 reads it."""
    dtype = fnp.result_type(*parts)
    batch = np.broadcast_shapes(*(tuple(aval_of(p).shape[:-1]) for p in parts))
    parts = [fnp.broadcast_to(fnp.asarray(p, dtype), (*batch, aval_of(p).shape[-1]))
             for p in parts]
    return fnp.concatenate([*parts, fnp.zeros((*batch, 1), dtype)], axis=-1)


def _size(n: Any, fname: str) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fname}: n must be an integer, got {n!r}") from None
    if n < 0:
        raise ValueError(f"{fname}: n must be non-negative, got {n}")
    return n


def _float_matrix(m: np.ndarray) -> mx.array:
    return mx.array(m.astype(np.float32))


# ----------------------------------------------------------------------------
# Matrices built from vectors
# ----------------------------------------------------------------------------


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r``, as
    ``jax.scipy.linalg.toeplitz``: ``T[i, j] = c[i - j]`` for ``i >= j``,
    ``r[j - i]`` above the diagonal (``r[0]`` is ignored). Without ``r`` it
    is ``conj(c)`` (a Hermitian matrix). Batched: ``c`` (..., m) and ``r``
    (..., n) give (..., m, n).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.toeplitz(mx.array([1.0, 2.0, 3.0]), mx.array([5.0, 6.0])).tolist()
    [[1.0, 6.0], [2.0, 1.0], [3.0, 2.0]]
    """
    c = _vectors(c, "toeplitz", "c")
    r = fnp.conj(c) if r is None else _vectors(r, "toeplitz", "r")
    m, n = aval_of(c).shape[-1], aval_of(r).shape[-1]
    # values = [c..., r[1:]...]: c[k] at k, r[k] at m - 1 + k.
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    index = np.where(i >= j, i - j, m - 1 + j - i)
    return _laid_out(_with_zero(c, r[..., 1:]), index)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r``, as
    ``jax.scipy.linalg.hankel``: ``H[i, j] = c[i + j]`` while ``i + j < m``,
    then ``r[i + j - m + 1]`` (``r[0]`` is ignored); without ``r``, zeros
    below the anti-diagonal. Batched: ``c`` (..., m), ``r`` (..., n) give
    (..., m, n).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.hankel(mx.array([1.0, 2.0, 3.0])).tolist()
    [[1.0, 2.0, 3.0], [2.0, 3.0, 0.0], [3.0, 0.0, 0.0]]
    """
    c = _vectors(c, "hankel", "c")
    m = aval_of(c).shape[-1]
    r = fnp.zeros_like(c) if r is None else _vectors(r, "hankel", "r")
    n = aval_of(r).shape[-1]
    index = np.arange(m)[:, None] + np.arange(n)[None, :]
    return _laid_out(_with_zero(c, r[..., 1:]), index)


def circulant(c: Any) -> Any:
    """The circulant matrix with first column ``c``, as
    ``jax.scipy.linalg.circulant``: ``C[i, j] = c[(i - j) mod n]``; ``c``
    (..., n) gives (..., n, n).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.circulant(mx.array([1, 2, 3])).tolist()
    [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    """
    c = _vectors(c, "circulant", "c")
    n = aval_of(c).shape[-1]
    return _laid_out(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a``
    (highest degree first), as ``jax.scipy.linalg.companion``: first row
    ``-a[1:] / a[0]``, ones on the subdiagonal; ``a`` (..., n), n >= 2,
    gives (..., n - 1, n - 1), floating. ``a[0]`` must not be zero (else
    infinities, not an error: it is data).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.companion(mx.array([1.0, 2.0, 3.0])).tolist()
    [[-2.0, -3.0], [1.0, 0.0]]
    """
    a = _vectors(a, "companion", "a", min_size=2)
    if not mx.issubdtype(aval_of(a).dtype, mx.inexact):
        a = fnp.astype(a, mx.float32)
    n = aval_of(a).shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    ones = fnp.ones_like(a[..., :1])
    index = np.full((n, n), -1)
    index[0, :] = np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = n  # the one
    return _laid_out(_with_zero(first, ones), index)


def fiedler(a: Any) -> Any:
    """The Fiedler matrix ``F[i, j] = |a[i] - a[j]|`` of ``a`` (..., n), as
    ``jax.scipy.linalg.fiedler``.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.fiedler(mx.array([1.0, 2.0, 4.0])).tolist()
    [[0.0, 1.0, 3.0], [1.0, 0.0, 2.0], [3.0, 2.0, 0.0]]
    """
    a = _vectors(a, "fiedler", "a")
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial with
    coefficients ``a`` (1-d, highest degree first, n >= 2 entries), as
    ``jax.scipy.linalg.fiedler_companion``: (n - 1, n - 1), with the same
    eigenvalues (the polynomial's roots) as ``companion(a)``.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.fiedler_companion(mx.array([1.0, 2.0, 3.0])).tolist()
    [[-2.0, -3.0], [1.0, 0.0]]
    """
    a = _vector(a, "fiedler_companion", "a", min_size=2)
    if not mx.issubdtype(aval_of(a).dtype, mx.inexact):
        a = fnp.astype(a, mx.float32)
    n = aval_of(a).shape[0] - 1
    negated = -a[1:] / a[:1]  # -a[k] / a[0] at k - 1
    ones = fnp.ones_like(a[:1])
    index = np.full((n, n), -1)
    one = n  # index of the one in the values
    # Odd coefficients on the diagonal-adjacent pattern of the product of
    # Fiedler's factors: -a[1] at (0, 0), then -a[k] alternately above and
    # below the diagonal, with ones beside them.
    index[0, 0] = 0
    if n > 1:
        index[1, 0] = one
    for k in range(2, n + 1):
        if k % 2 == 0:  # -a[k] at (k - 2, k - 1), a one at (k - 2, k)
            index[k - 2, k - 1] = k - 1
            if k < n:
                index[k - 2, k] = one
        else:  # -a[k] at (k - 1, k - 2), a one at (k, k - 2)
            index[k - 1, k - 2] = k - 1
            if k < n:
                index[k, k - 2] = one
    return _laid_out(_with_zero(negated, ones), index)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix of fecundities ``f`` (..., n) and survival
    rates ``s`` (..., n - 1), as ``jax.scipy.linalg.leslie``: ``f`` on the
    first row, ``s`` on the subdiagonal, (..., n, n).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.leslie(mx.array([0.1, 2.0]), mx.array([0.5])).tolist()
    [[0.10000000149011612, 2.0], [0.5, 0.0]]
    """
    f, s = _vectors(f, "leslie", "f", min_size=1), _vectors(s, "leslie", "s")
    n = aval_of(f).shape[-1]
    if aval_of(s).shape[-1] != n - 1:
        raise ValueError(f"leslie: s must have one entry fewer than f ({n - 1}) along the last "
                         f"axis; got shapes {tuple(aval_of(f).shape)} and "
                         f"{tuple(aval_of(s).shape)}")
    index = np.full((n, n), -1)
    index[0, :] = np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _laid_out(_with_zero(f, s), index)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for every
    ``v`` of length ``n``, as ``jax.scipy.linalg.convolution_matrix``:
    ``mode`` ``'full'`` gives (m + n - 1, n) rows, ``'same'`` the middle
    max(m, n) of them, ``'valid'`` the max(m, n) - min(m, n) + 1 rows where
    ``a`` and ``v`` overlap fully.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.convolution_matrix(mx.array([1.0, 2.0]), 2).tolist()
    [[1.0, 0.0], [2.0, 1.0], [0.0, 2.0]]
    """
    a = _vector(a, "convolution_matrix", "a", min_size=1)
    n = _size(n, "convolution_matrix")
    if n == 0:
        raise ValueError("convolution_matrix: n must be positive, got 0")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', got "
                         f"{mode!r}")
    m = aval_of(a).shape[0]
    i, j = np.arange(m + n - 1)[:, None], np.arange(n)[None, :]
    index = np.where((i - j >= 0) & (i - j < m), i - j, -1)
    short = min(m, n)
    if mode == "same":
        index = index[(short - 1) // 2:(short - 1) // 2 + max(m, n)]
    elif mode == "valid":
        index = index[short - 1:max(m, n)]
    return _laid_out(_with_zero(a), index)


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of ``arrs`` (each at most 2-d: a scalar is
    1 x 1, a vector one row), as ``jax.scipy.linalg.block_diag``; no
    arguments give a (1, 0) float32 matrix.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.block_diag(mx.array([[1.0, 2.0]]), mx.array(3.0)).tolist()
    [[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]
    """
    if not arrs:
        return fnp.zeros((1, 0), mx.float32)
    blocks = []
    for k, x in enumerate(arrs):
        x = fnp.asarray(x)
        if aval_of(x).ndim > 2:
            raise ValueError(f"block_diag: argument {k} must have at most 2 dimensions; got "
                             f"shape {tuple(aval_of(x).shape)}")
        blocks.append(fnp.reshape(x, (1, -1)) if aval_of(x).ndim < 2 else x)
    dtype = fnp.result_type(*blocks)
    width = sum(aval_of(b).shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = aval_of(b).shape
        rows.append(fnp.concatenate([fnp.zeros((r, left), dtype), fnp.asarray(b, dtype),
                                     fnp.zeros((r, width - left - c), dtype)], axis=1))
        left += c
    return fnp.concatenate(rows, axis=0)


# ----------------------------------------------------------------------------
# Constant matrices of a size
# ----------------------------------------------------------------------------


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n x n discrete Fourier transform matrix ``W[j, k] = w^(jk)``,
    ``w = exp(-2 pi i / n)``, as ``jax.scipy.linalg.dft``: ``dft(n) @ x`` is
    ``fft(x)``. ``scale``: None, ``'sqrtn'`` (divided by sqrt(n), unitary)
    or ``'n'`` (divided by n). complex64 (the only complex dtype MLX has).

    >>> import ftorch.scipy.linalg as fsl
    >>> fsl.dft(2).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (-1+0j)]]
    """
    n = _size(n, "dft")
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    if dtype is not None and to_mlx_dtype(dtype, "dft: dtype") != mx.complex64:
        raise TypeError(f"dft: dtype must be complex64 (MLX's complex dtype), got {dtype!r}")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)  # exact phases
    w = np.exp(-2j * np.pi * jk / max(n, 1))
    w = np.where(np.abs(w.imag) < 1e-15, w.real, w)  # exact 1 and -1
    if scale == "sqrtn":
        w = w / math.sqrt(n)
    elif scale == "n":
        w = w / n
    return mx.array(w.astype(np.complex64))


def hadamard(n: int, dtype: Any = int) -> Any:
    """The n x n Hadamard matrix (Sylvester's construction; ``n`` a power
    of 2), as ``jax.scipy.linalg.hadamard``: entries ±1, in ``dtype``
    (Python's ``int``: int32).

    >>> import ftorch.scipy.linalg as fsl
    >>> fsl.hadamard(2).tolist()
    [[1, 1], [1, -1]]
    """
    n = _size(n, "hadamard")
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n}")
    h = np.ones((1, 1), np.int32)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    dtype = mx.int32 if dtype is int else to_mlx_dtype(dtype, "hadamard: dtype")
    return fnp.asarray(mx.array(h), dtype)


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of order ``n``, as ``jax.scipy.linalg.helmert``:
    orthonormal rows, the first (kept with ``full``) constant
    ``1 / sqrt(n)``, row ``k`` ``[1, ..., 1, -k, 0, ...] / sqrt(k (k + 1))``.
    float32, (n - 1, n) or with ``full`` (n, n).

    >>> import ftorch.scipy.linalg as fsl
    >>> [round(v, 4) for v in fsl.helmert(2).tolist()[0]]
    [0.7071, -0.7071]
    """
    n = _size(n, "helmert")
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return _float_matrix(h if full else h[1:])


def hilbert(n: int) -> Any:
    """The n x n Hilbert matrix ``H[i, j] = 1 / (i + j + 1)``, float32, as
    ``jax.scipy.linalg.hilbert``.

    >>> import ftorch.scipy.linalg as fsl
    >>> fsl.hilbert(2).tolist()
    [[1.0, 0.5], [0.5, 0.3333333432674408]]
    """
    n = _size(n, "hilbert")
    i = np.arange(n)
    return _float_matrix(1.0 / (i[:, None] + i[None, :] + 1))


def invhilbert(n: int) -> Any:
    """The inverse of the n x n Hilbert matrix, float32, as
    ``jax.scipy.linalg.invhilbert``: its integer entries are computed exactly
    and rounded once (those of n >= 14 do not fit float32's range well).

    >>> import ftorch.scipy.linalg as fsl
    >>> fsl.invhilbert(2).tolist()
    [[4.0, -6.0], [-6.0, 12.0]]
    """
    n = _size(n, "invhilbert")
    c = math.comb
    out = np.array([[(-1) ** (i + j) * (i + j + 1) * c(n + i, n - j - 1) * c(n + j, n - i - 1)
                     * c(i + j, i) ** 2 for j in range(n)] for i in range(n)], dtype=float)
    return _float_matrix(out.reshape(n, n))


def _pascal_kind(kind: str | None, fname: str) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{fname}: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return kind


def pascal(n: int, kind: str | None = None) -> Any:
    """The n x n Pascal matrix, float32, as ``jax.scipy.linalg.pascal``:
    ``kind`` ``'symmetric'`` (default, ``C(i + j, i)``), ``'lower'``
    (``C(i, j)``) or ``'upper'`` (its transpose); exact binomials.

    >>> import ftorch.scipy.linalg as fsl
    >>> fsl.pascal(3).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [1.0, 3.0, 6.0]]
    """
    n, kind = _size(n, "pascal"), _pascal_kind(kind, "pascal")
    if kind == "symmetric":
        out = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        out = [[math.comb(i, j) for j in range(n)] for i in range(n)]
    out = np.array(out, dtype=float).reshape(n, n)
    return _float_matrix(out.T if kind == "upper" else out)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of ``pascal(n, kind)``, float32, as
    ``jax.scipy.linalg.invpascal``: the inverse of the lower one is
    ``(-1)^(i + j) C(i, j)``, the symmetric one's is ``L^-T L^-1``; exact
    integers rounded once.

    >>> import ftorch.scipy.linalg as fsl
    >>> fsl.invpascal(3).tolist()
    [[3.0, -3.0, 1.0], [-3.0, 5.0, -2.0], [1.0, -2.0, 1.0]]
    """
    n, kind = _size(n, "invpascal"), _pascal_kind(kind, "invpascal")
    lower_inv = [[(-1) ** (i + j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":  # P = L L^T, P^-1 = L^-T L^-1, in exact integers
        out = [[sum(lower_inv[k][i] * lower_inv[k][j] for k in range(n)) for j in range(n)]
               for i in range(n)]
    else:
        out = lower_inv
    out = np.array(out, dtype=float).reshape(n, n)
    return _float_matrix(out.T if kind == "upper" else out)
