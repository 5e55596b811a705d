"""``ftorch.scipy.stats.logistic``, as ``jax.scipy.stats.logistic``: the
logistic distribution, whose distribution function is ``expit((x - loc) / scale)``.

>>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
>>> [round(v, 6) for v in logistic.cdf(mx.array([-1.0, 0.0, 1.0])).tolist()]
[0.268941, 0.5, 0.731059]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import promote, standardized

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-2 logaddexp(z/2, -z/2) - log(scale)``: the density ``e^-z / (scale
    (1 + e^-z)^2)`` written to stay finite for large ``|z|``.

    >>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
    >>> [round(v, 6) for v in logistic.logpdf(mx.array([0.0, 100.0])).tolist()]
    [-1.386294, -100.0]
    """
    z, scale = standardized("logistic.logpdf", x, loc, scale)
    half = z / 2
    return -2.0 * fnp.logaddexp(half, fnp.negative(half)) - fnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic density, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
    >>> [round(v, 6) for v in logistic.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.25, 0.196612]
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``expit((x - loc) / scale)``.

    >>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
    >>> [round(v, 6) for v in logistic.cdf(mx.array([2.0]), 1.0, 2.0).tolist()]
    [0.622459]
    """
    z, _ = standardized("logistic.cdf", x, loc, scale)
    return _special.expit(z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = expit(-(x - loc) / scale)``.

    >>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
    >>> [round(v, 6) for v in logistic.sf(mx.array([2.0]), 1.0, 2.0).tolist()]
    [0.377541]
    """
    z, _ = standardized("logistic.sf", x, loc, scale)
    return _special.expit(fnp.negative(z))


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale logit(x)`` (NaN outside [0, 1]).

    >>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
    >>> [round(v, 6) for v in logistic.ppf(mx.array([0.5, 0.75])).tolist()]
    [0.0, 1.098612]
    """
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return _special.logit(x) * scale + loc


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function ``loc - scale logit(x)``.

    >>> import ftorch.scipy.stats.logistic as logistic, mlx.core as mx
    >>> [round(v, 6) for v in logistic.isf(mx.array([0.5, 0.75])).tolist()]
    [0.0, -1.098612]
    """
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return fnp.negative(_special.logit(x)) * scale + loc
