"""``ftorch.numpy.linalg``, as ``jax.numpy.linalg``: matrix decompositions,
differentiable under every transform, over the strict wrappers of
``ftorch.primitives.decompositions``. The contractions (``matmul``,
``einsum``, ...) live in ``ftorch.numpy`` itself.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.linalg.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[0]
[2.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import ftorch.primitives as lax
from ftorch.core import aval_of
from ftorch.numpy._linalg import square_matrices
from ftorch.numpy._linalg_orthogonal import *  # noqa: F403
from ftorch.numpy._linalg_orthogonal import __all__ as _orthogonal_names

__all__ = ["cholesky", *_orthogonal_names]


def cholesky(a: Any) -> Any:
    """The lower Cholesky factor ``L`` of the symmetric positive-definite
    matrices ``a`` (..., n, n): ``a = L @ L.T``.

    As in JAX, ``a`` is symmetrised first (``(a + a.T) / 2``), so gradients
    are symmetric; a matrix that is not positive definite gives a factor of
    NaNs (MLX itself returns a partial factor with no error). Runs on MLX's
    CPU stream (LAPACK).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[1][0]
    1.0
    """
    a = square_matrices(a, "cholesky", "a")
    n = len(aval_of(a).shape)
    at = lax.transpose(a, (*range(n - 2), n - 1, n - 2))
    return lax.cholesky(lax.multiply(lax.add(a, at), 0.5))
