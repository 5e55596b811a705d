"""``ftorch.scipy.stats.gumbel_l``, as ``jax.scipy.stats.gumbel_l``: the
left-skewed Gumbel (minimum extreme value) distribution, survival function
``exp(-exp(z))`` with ``z = (x - loc) / scale``. A non-positive ``scale``
gives NaN.

>>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
>>> [round(v, 6) for v in gumbel_l.cdf(mx.array([-1.0, 0.0, 1.0])).tolist()]
[0.307799, 0.632121, 0.934012]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import nan_unless, promote, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``z - exp(z) - log(scale)``.

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.logpdf(mx.array([0.0, 1.0])).tolist()]
    [-1.0, -1.718282]
    """
    z, scale = standardized("gumbel_l.logpdf", x, loc, scale)
    return nan_unless(scale > 0, z - fnp.exp(z) - fnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Gumbel density, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.367879, 0.179374]
    """
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x) = log(1 - exp(-exp(z)))``, through ``expm1``.

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.logcdf(mx.array([0.0, 1.0])).tolist()]
    [-0.458675, -0.068266]
    """
    z, scale = standardized("gumbel_l.logcdf", x, loc, scale)
    return nan_unless(scale > 0, fnp.log(fnp.negative(fnp.expm1(fnp.negative(fnp.exp(z))))))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = 1 - exp(-exp(z))``.

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.cdf(mx.array([0.0, 1.0]), 1.0, 2.0).tolist()]
    [0.454761, 0.632121]
    """
    return fnp.exp(logcdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = -exp(z)``.

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.logsf(mx.array([0.0, 1.0])).tolist()]
    [-1.0, -2.718282]
    """
    z, scale = standardized("gumbel_l.logsf", x, loc, scale)
    return nan_unless(scale > 0, fnp.negative(fnp.exp(z)))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = exp(-exp(z))``.

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.sf(mx.array([0.0, 1.0])).tolist()]
    [0.367879, 0.065988]
    """
    return fnp.exp(logsf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale log(-log1p(-p))`` (NaN outside (0, 1)).

    >>> import ftorch.scipy.stats.gumbel_l as gumbel_l, mlx.core as mx
    >>> [round(v, 6) for v in gumbel_l.ppf(mx.array([0.5, 0.9])).tolist()]
    [-0.366513, 0.834032]
    """
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    return nan_unless((p > 0) & (p < 1),
                      loc + scale * fnp.log(fnp.negative(fnp.log1p(fnp.negative(p)))))
