"""``ftorch.scipy.stats.cauchy``, as ``jax.scipy.stats.cauchy``: the Cauchy
distribution with density ``1 / (pi scale (1 + z^2))``, ``z = (x - loc) / scale``.

>>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
>>> [round(v, 6) for v in cauchy.cdf(mx.array([-1.0, 0.0, 1.0])).tolist()]
[0.25, 0.5, 0.75]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import promote, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log(pi scale) - log1p(z^2)``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.logpdf(mx.array([0.0, 2.0])).tolist()]
    [-1.14473, -2.754168]
    """
    z, scale = standardized("cauchy.logpdf", x, loc, scale)
    return fnp.negative(fnp.log(math.pi * scale) + fnp.log1p(z * z))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy density, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.31831, 0.159155]
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1/2 + arctan(z) / pi``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.cdf(mx.array([1.0, 3.0]), 1.0, 2.0).tolist()]
    [0.5, 0.75]
    """
    z, _ = standardized("cauchy.cdf", x, loc, scale)
    return 0.5 + fnp.arctan(z) / math.pi


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.logcdf(mx.array([0.0])).tolist()]
    [-0.693147]
    """
    return fnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``, the distribution function reflected: ``cdf(-x, -loc, scale)``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.sf(mx.array([1.0])).tolist()]
    [0.25]
    """
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(fnp.negative(x), fnp.negative(loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.logsf(mx.array([1.0])).tolist()]
    [-1.386294]
    """
    return fnp.log(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale tan(pi (q - 1/2))``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.ppf(mx.array([0.5, 0.75])).tolist()]
    [0.0, 1.0]
    """
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return fnp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function ``loc + scale tan(pi (1/2 - q))``.

    >>> import ftorch.scipy.stats.cauchy as cauchy, mlx.core as mx
    >>> [round(v, 6) for v in cauchy.isf(mx.array([0.5, 0.25])).tolist()]
    [0.0, 1.0]
    """
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return fnp.tan(math.pi / 2 - math.pi * q) * scale + loc
