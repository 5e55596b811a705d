"""``ftorch.scipy.stats.expon``, as ``jax.scipy.stats.expon``: the
exponential distribution with density ``exp(-(x - loc) / scale) / scale``
on ``x >= loc`` (``-inf`` log-density below ``loc``).

>>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
>>> [round(v, 6) for v in expon.cdf(mx.array([-1.0, 1.0])).tolist()]
[0.0, 0.632121]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import minus_inf_where, promote, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-(x - loc) / scale - log(scale)`` on ``x >= loc``, ``-inf`` below.

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.logpdf(mx.array([-1.0, 2.0]), 0.0, 2.0).tolist()]
    [-inf, -1.693147]
    """
    z, scale = standardized("expon.logpdf", x, loc, scale)
    return minus_inf_where(z < 0, fnp.negative(z + fnp.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential density, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.pdf(mx.array([0.0, 1.0])).tolist()]
    [1.0, 0.367879]
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = 1 - exp(-(x - loc) / scale)`` (0 below ``loc``).

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.cdf(mx.array([0.0, 1.0])).tolist()]
    [0.0, 0.632121]
    """
    z, _ = standardized("expon.cdf", x, loc, scale)
    return fnp.where(z < 0, fnp.zeros_like(z), fnp.negative(fnp.expm1(fnp.negative(z))))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x) = log1p(-sf(x))``.

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.logcdf(mx.array([1.0, 5.0])).tolist()]
    [-0.458675, -0.006761]
    """
    return fnp.log1p(fnp.negative(sf(x, loc, scale)))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P(X > x) = exp(-(x - loc) / scale)`` (1 below ``loc``).

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.sf(mx.array([-1.0, 1.0])).tolist()]
    [1.0, 0.367879]
    """
    return fnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = -(x - loc) / scale`` (0 below ``loc``).

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.logsf(mx.array([-1.0, 3.0])).tolist()]
    [0.0, -3.0]
    """
    z, _ = standardized("expon.logsf", x, loc, scale)
    return fnp.where(z < 0, fnp.zeros_like(z), fnp.negative(z))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc - scale * log1p(-q)`` (NaN outside [0, 1]).

    >>> import ftorch.scipy.stats.expon as expon, mlx.core as mx
    >>> [round(v, 6) for v in expon.ppf(mx.array([0.5, 2.0])).tolist()]
    [0.693147, nan]
    """
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    value = loc - scale * fnp.log1p(fnp.negative(q))
    return fnp.where((q < 0) | (q > 1), fnp.nan, value)
