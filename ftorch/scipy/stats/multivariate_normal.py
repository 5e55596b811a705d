"""``ftorch.scipy.stats.multivariate_normal``, as
``jax.scipy.stats.multivariate_normal``: the normal distribution of vectors
(the last axis of ``x`` and ``mean``) with covariance ``cov`` (``(..., n,
n)``, a scalar variance, or with a scalar ``mean`` the univariate case).

>>> import ftorch.scipy.stats.multivariate_normal as mvn, mlx.core as mx
>>> round(mvn.pdf(mx.array([0.0, 0.0]), mx.zeros(2), mx.eye(2)).item(), 6)
0.159155
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.scipy import linalg as _linalg
from ftorch.scipy.stats._common import promote

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """``-|L^-1 (x - mean)|^2 / 2 - n log(2 pi) / 2 - sum(log diag L)`` with
    ``L`` the Cholesky factor of ``cov``; batch axes broadcast.
    ``allow_singular`` is not supported (as in JAX).

    >>> import ftorch.scipy.stats.multivariate_normal as mvn, mlx.core as mx
    >>> cov = mx.array([[2.0, 0.5], [0.5, 1.0]])
    >>> round(mvn.logpdf(mx.array([1.0, -1.0]), mx.zeros(2), cov).item(), 6)
    -3.260542
    """
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not supported")
    x, mean, cov = promote("multivariate_normal.logpdf", x, mean, cov)
    if mean.ndim == 0:
        return -0.5 * fnp.square(x - mean) / cov - 0.5 * (_LOG_2PI + fnp.log(cov))
    n = mean.shape[-1]
    diff = x - mean
    if cov.ndim == 0:
        return (-0.5 * fnp.sum(diff * diff, axis=-1) / cov
                - n / 2 * (_LOG_2PI + fnp.log(cov)))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal.logpdf: cov must have shape (..., {n}, {n}) "
                         f"for a mean of {n} entries, got {tuple(cov.shape)}")
    factor = fnp.linalg.cholesky(cov)
    batch = tuple(mx.broadcast_shapes(tuple(diff.shape[:-1]), tuple(factor.shape[:-2])))
    whitened = _linalg.solve_triangular(fnp.broadcast_to(factor, batch + (n, n)),
                                        fnp.broadcast_to(diff, batch + (n,)), lower=True)
    log_det_half = fnp.sum(fnp.log(fnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * fnp.sum(whitened * whitened, axis=-1) - n / 2 * _LOG_2PI - log_det_half


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The density, ``exp(logpdf(x, mean, cov))``.

    >>> import ftorch.scipy.stats.multivariate_normal as mvn, mlx.core as mx
    >>> round(mvn.pdf(mx.array(0.0), mx.array(0.0), mx.array(1.0)).item(), 6)
    0.398942
    """
    return fnp.exp(logpdf(x, mean, cov))
