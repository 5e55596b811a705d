"""``ftorch.scipy.stats.dirichlet``, as ``jax.scipy.stats.dirichlet``: the
Dirichlet distribution on the simplex, with concentrations ``alpha`` (one
dimension, ``K`` entries). ``x`` has the ``K`` coordinates along its first
axis, or ``K - 1`` of them (the last is then ``1`` minus their sum).

>>> import ftorch.scipy.stats.dirichlet as dirichlet, mlx.core as mx
>>> round(dirichlet.pdf(mx.array([0.25, 0.75]), mx.array([2.0, 2.0])).item(), 6)
1.125
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpdf", "pdf"]

# How far from 1 the coordinates' sum may be for x to count as on the simplex.
_SIMPLEX_TOLERANCE = 1e-6


def logpdf(x: Any, alpha: Any) -> Any:
    """``sum((alpha - 1) log x) - (sum(gammaln(alpha)) - gammaln(sum(alpha)))``
    over the first axis, on the simplex (positive coordinates adding up to 1);
    ``-inf`` off it.

    >>> import ftorch.scipy.stats.dirichlet as dirichlet, mlx.core as mx
    >>> x = mx.array([[0.2, 0.5], [0.8, 0.6]])
    >>> [round(v, 6) for v in dirichlet.logpdf(x, mx.array([2.0, 3.0])).tolist()]
    [0.429182, -inf]
    """
    x, alpha = promote("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional, got shape "
                         f"{tuple(alpha.shape)}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"dirichlet.logpdf: x must have {k} (or {k - 1}) entries along its "
                         f"first axis, as alpha has {k}; got shape {tuple(x.shape)}")
    if x.shape[0] == k - 1:
        x = fnp.concatenate([x, 1.0 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    log_beta = fnp.sum(_special.gammaln(alpha)) - _special.gammaln(fnp.sum(alpha))
    alpha = alpha.reshape((k,) + (1,) * (x.ndim - 1))
    value = fnp.sum(_special.xlogy(alpha - 1.0, x), axis=0) - log_beta
    on_simplex = (fnp.all(x > 0, axis=0)
                  & (fnp.abs(fnp.sum(x, axis=0) - 1.0) < _SIMPLEX_TOLERANCE))
    return minus_inf_where(~on_simplex, value)


def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density, ``exp(logpdf(x, alpha))``.

    >>> import ftorch.scipy.stats.dirichlet as dirichlet, mlx.core as mx
    >>> round(dirichlet.pdf(mx.array([0.5]), mx.array([1.0, 1.0])).item(), 6)
    1.0
    """
    return fnp.exp(logpdf(x, alpha))
