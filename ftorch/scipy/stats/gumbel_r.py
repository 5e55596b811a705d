"""``ftorch.scipy.stats.gumbel_r``, as ``jax.scipy.stats.gumbel_r``: the
right-skewed Gumbel (maximum extreme value) distribution, distribution function
``exp(-exp(-z))`` with ``z = (x - loc) / scale``. A non-positive ``scale``
gives NaN.

>>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
>>> [round(v, 6) for v in gumbel_r.cdf(mx.array([-1.0, 0.0, 1.0])).tolist()]
[0.065988, 0.367879, 0.692201]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import nan_unless, promote, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-z - exp(-z) - log(scale)``.

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.logpdf(mx.array([0.0, 1.0])).tolist()]
    [-1.0, -1.367879]
    """
    z, scale = standardized("gumbel_r.logpdf", x, loc, scale)
    return nan_unless(scale > 0, fnp.negative(z + fnp.exp(fnp.negative(z))) - fnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Gumbel density, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.367879, 0.254646]
    """
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x) = -exp(-z)``.

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.logcdf(mx.array([0.0, 1.0])).tolist()]
    [-1.0, -0.367879]
    """
    z, scale = standardized("gumbel_r.logcdf", x, loc, scale)
    return nan_unless(scale > 0, fnp.negative(fnp.exp(fnp.negative(z))))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = exp(-exp(-z))``.

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.cdf(mx.array([0.0, 1.0]), 1.0, 2.0).tolist()]
    [0.192296, 0.367879]
    """
    return fnp.exp(logcdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = log(1 - exp(-exp(-z)))``, through ``expm1``.

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.logsf(mx.array([0.0, 1.0])).tolist()]
    [-0.458675, -1.178307]
    """
    z, scale = standardized("gumbel_r.logsf", x, loc, scale)
    return nan_unless(scale > 0, fnp.log(fnp.negative(fnp.expm1(
        fnp.negative(fnp.exp(fnp.negative(z)))))))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = 1 - exp(-exp(-z))``.

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.sf(mx.array([0.0, 1.0])).tolist()]
    [0.632121, 0.307799]
    """
    z, scale = standardized("gumbel_r.sf", x, loc, scale)
    return nan_unless(scale > 0, 1.0 - fnp.exp(fnp.negative(fnp.exp(fnp.negative(z)))))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc - scale log(-log(p))`` (NaN outside (0, 1)).

    >>> import ftorch.scipy.stats.gumbel_r as gumbel_r, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_r.ppf(mx.array([0.5, 0.9])).tolist()]
    [0.366513, 2.250367]
    """
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    return nan_unless((p > 0) & (p < 1), loc - scale * fnp.log(fnp.negative(fnp.log(p))))
