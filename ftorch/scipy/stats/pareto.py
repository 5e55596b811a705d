"""``ftorch.scipy.stats.pareto``, as ``jax.scipy.stats.pareto``: the Pareto
distribution with shape ``b``, density ``b / (scale y^(b+1))`` for ``y = (x -
loc) / scale >= 1``.

>>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
>>> [round(v, 6) for v in pareto.cdf(mx.array([0.5, 2.0]), 2.0).tolist()]
[0.0, 0.75]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import minus_inf_where, promote, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(b / scale) - (b + 1) log(y)`` for ``y >= 1``, ``-inf`` below.

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.logpdf(mx.array([0.5, 2.0]), 2.0).tolist()]
    [-inf, -1.386294]
    """
    y, scale, b = standardized("pareto.logpdf", x, loc, scale, b)
    return minus_inf_where(y < 1, fnp.negative(fnp.log(scale / b) + (b + 1) * fnp.log(y)))


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Pareto density, ``exp(logpdf(x, b, loc, scale))``.

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.pdf(mx.array([1.0, 2.0]), 2.0).tolist()]
    [2.0, 0.25]
    """
    return fnp.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``1 - y^-b`` for ``y >= 1``, 0 below.

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.cdf(mx.array([2.0, 4.0]), 1.0).tolist()]
    [0.5, 0.75]
    """
    y, _, b = standardized("pareto.cdf", x, loc, scale, b)
    return fnp.where(y < 1, 0.0, 1.0 - fnp.power(y, fnp.negative(b)))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log1p(-y^-b)`` for ``y >= 1``, ``-inf`` below.

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.logcdf(mx.array([2.0, 4.0]), 1.0).tolist()]
    [-0.693147, -0.287682]
    """
    y, _, b = standardized("pareto.logcdf", x, loc, scale, b)
    return minus_inf_where(y < 1, fnp.log1p(fnp.negative(fnp.power(y, fnp.negative(b)))))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = y^-b`` for ``y >= 1``, 1 below.

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.sf(mx.array([2.0, 4.0]), 1.0).tolist()]
    [0.5, 0.25]
    """
    return fnp.exp(logsf(x, b, loc, scale))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-b log(y)`` for ``y >= 1``, 0 below.

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.logsf(mx.array([2.0, 4.0]), 1.0).tolist()]
    [-0.693147, -1.386294]
    """
    y, _, b = standardized("pareto.logsf", x, loc, scale, b)
    return fnp.where(y < 1, 0.0, fnp.negative(b * fnp.log(y)))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale (1 - q)^(-1/b)`` (NaN outside [0, 1]).

    >>> import ftorch.scipy.stats.pareto as pareto, mlx.core as mx
    >>> [round(v, 6) for v in pareto.ppf(mx.array([0.5, 0.75]), 1.0).tolist()]
    [2.0, 4.0]
    """
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    value = loc + scale * fnp.power(1.0 - q, fnp.negative(1.0 / b))
    return fnp.where((q < 0) | (q > 1), fnp.nan, value)
