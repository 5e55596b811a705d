"""``ftorch.scipy.stats.gamma``, as ``jax.scipy.stats.gamma``: the gamma
distribution with shape ``a``, density ``y^(a-1) e^-y / (Gamma(a) scale)`` for
``y = (x - loc) / scale >= 0``.

>>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
>>> [round(v, 6) for v in gamma.cdf(mx.array([1.0, 2.0]), 2.0).tolist()]
[0.264241, 0.593994]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import clamp, minus_inf_where, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``xlogy(a - 1, y) - y - gammaln(a) - log(scale)``; ``-inf`` below ``loc``.

    >>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
    >>> [round(v, 6) for v in gamma.logpdf(mx.array([-1.0, 2.0]), 3.0).tolist()]
    [-inf, -1.306853]
    """
    y, scale, a = standardized("gamma.logpdf", x, loc, scale, a)
    below = y < 0
    y = fnp.where(below, 1.0, y)  # keeps the masked branch (and its gradient) finite
    value = _special.xlogy(a - 1, y) - y - _special.gammaln(a) - fnp.log(scale)
    return minus_inf_where(below, value)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma density, ``exp(logpdf(x, a, loc, scale))``.

    >>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
    >>> [round(v, 6) for v in gamma.pdf(mx.array([1.0, 2.0]), 2.0).tolist()]
    [0.367879, 0.270671]
    """
    return fnp.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``gammainc(a, y)`` (0 below ``loc``).

    >>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
    >>> [round(v, 6) for v in gamma.cdf(mx.array([-1.0, 1.0]), 1.0).tolist()]
    [0.0, 0.632121]
    """
    y, _, a = standardized("gamma.cdf", x, loc, scale, a)
    return _special.gammainc(a, clamp(0.0, y, fnp.inf))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf(x, a, loc, scale))``.

    >>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
    >>> [round(v, 6) for v in gamma.logcdf(mx.array([1.0]), 1.0).tolist()]
    [-0.458675]
    """
    return fnp.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = gammaincc(a, y)`` (1 below ``loc``).

    >>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
    >>> [round(v, 6) for v in gamma.sf(mx.array([-1.0, 1.0]), 1.0).tolist()]
    [1.0, 0.367879]
    """
    y, _, a = standardized("gamma.sf", x, loc, scale, a)
    return fnp.where(y < 0, 1.0, _special.gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf(x, a, loc, scale))``.

    >>> import ftorch.scipy.stats.gamma as gamma, mlx.core as mx
    >>> [round(v, 6) for v in gamma.logsf(mx.array([1.0]), 1.0).tolist()]
    [-1.0]
    """
    return fnp.log(sf(x, a, loc, scale))
