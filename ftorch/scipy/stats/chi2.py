"""``ftorch.scipy.stats.chi2``, as ``jax.scipy.stats.chi2``: the chi-square
distribution with ``df`` degrees of freedom (a gamma distribution of shape
``df / 2`` and scale ``2 scale``), supported on ``x >= loc``.

>>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
>>> [round(v, 6) for v in chi2.cdf(mx.array([1.0, 3.0]), 2.0).tolist()]
[0.393469, 0.77687]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import clamp, minus_inf_where, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(df/2 - 1) log(y) - y/2 - lgamma(df/2) - (df/2) log 2 - log(scale)``
    with ``y = (x - loc) / scale``; ``-inf`` below ``loc``.

    >>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
    >>> [round(v, 6) for v in chi2.logpdf(mx.array([-1.0, 2.0]), 3.0).tolist()]
    [-inf, -1.572365]
    """
    y, scale, df = standardized("chi2.logpdf", x, loc, scale, df)
    half_df = df / 2
    value = ((half_df - 1) * fnp.log(y) - y / 2 - _special.gammaln(half_df)
             - half_df * math.log(2.0) - fnp.log(scale))
    return minus_inf_where(y < 0, value)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-square density, ``exp(logpdf(x, df, loc, scale))``.

    >>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
    >>> [round(v, 6) for v in chi2.pdf(mx.array([1.0, 2.0]), 2.0).tolist()]
    [0.303265, 0.18394]
    """
    return fnp.exp(logpdf(x, df, loc, scale))


def _half_y(fname: str, x: Any, df: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    # The gamma variable y / 2, clipped to its support.
    y, _, df = standardized(fname, x, loc, scale, df)
    return df / 2, clamp(0.0, y / 2, fnp.inf)


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``gammainc(df/2, y/2)`` (0 below ``loc``).

    >>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
    >>> [round(v, 6) for v in chi2.cdf(mx.array([-1.0, 2.0]), 2.0).tolist()]
    [0.0, 0.632121]
    """
    return _special.gammainc(*_half_y("chi2.cdf", x, df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf(x, df, loc, scale))``.

    >>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
    >>> [round(v, 6) for v in chi2.logcdf(mx.array([2.0]), 2.0).tolist()]
    [-0.458675]
    """
    return fnp.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = gammaincc(df/2, y/2)`` (1 below ``loc``).

    >>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
    >>> [round(v, 6) for v in chi2.sf(mx.array([2.0]), 2.0).tolist()]
    [0.367879]
    """
    return _special.gammaincc(*_half_y("chi2.sf", x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf(x, df, loc, scale))``.

    >>> import ftorch.scipy.stats.chi2 as chi2, mlx.core as mx
    >>> [round(v, 6) for v in chi2.logsf(mx.array([2.0]), 2.0).tolist()]
    [-1.0]
    """
    return fnp.log(sf(x, df, loc, scale))
