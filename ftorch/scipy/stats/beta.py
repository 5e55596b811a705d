"""``ftorch.scipy.stats.beta``, as ``jax.scipy.stats.beta``: the beta
distribution with shapes ``a`` and ``b`` on ``[loc, loc + scale]``. Non-positive
``a``, ``b`` or ``scale`` give a NaN log-density.

>>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
>>> [round(v, 6) for v in beta.pdf(mx.array([0.25, 0.5]), 2.0, 2.0).tolist()]
[1.125, 1.5]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import clamp, minus_inf_where, nan_unless, standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``xlogy(a-1, y) + xlog1py(b-1, -y) - betaln(a, b) - log(scale)`` for
    ``y = (x - loc) / scale`` in [0, 1], ``-inf`` outside.

    >>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
    >>> [round(v, 6) for v in beta.logpdf(mx.array([0.5, 2.0]), 2.0, 3.0).tolist()]
    [0.405465, -inf]
    """
    y, scale, a, b = standardized("beta.logpdf", x, loc, scale, a, b)
    value = (_special.xlogy(a - 1, y) + _special.xlog1py(b - 1, fnp.negative(y))
             - _special.betaln(a, b) - fnp.log(scale))
    value = minus_inf_where((y < 0) | (y > 1), value)
    return nan_unless((a > 0) & (b > 0) & (scale > 0), value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density, ``exp(logpdf(x, a, b, loc, scale))``.

    >>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
    >>> [round(v, 6) for v in beta.pdf(mx.array([0.5]), 1.0, 1.0).tolist()]
    [1.0]
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def _unit(fname: str, x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any]:
    y, _, a, b = standardized(fname, x, loc, scale, a, b)
    return clamp(0.0, y, 1.0), a, b


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``betainc(a, b, y)`` with ``y`` clipped to [0, 1].

    >>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
    >>> [round(v, 6) for v in beta.cdf(mx.array([-1.0, 0.5, 2.0]), 2.0, 3.0).tolist()]
    [0.0, 0.6875, 1.0]
    """
    y, a, b = _unit("beta.cdf", x, a, b, loc, scale)
    return _special.betainc(a, b, y)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(cdf(x, a, b, loc, scale))``.

    >>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
    >>> [round(v, 6) for v in beta.logcdf(mx.array([0.5]), 2.0, 3.0).tolist()]
    [-0.374693]
    """
    return fnp.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = betainc(b, a, 1 - y)`` with ``y`` clipped to [0, 1].

    >>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
    >>> [round(v, 6) for v in beta.sf(mx.array([0.5]), 2.0, 3.0).tolist()]
    [0.3125]
    """
    y, a, b = _unit("beta.sf", x, a, b, loc, scale)
    return _special.betainc(b, a, 1.0 - y)


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(sf(x, a, b, loc, scale))``.

    >>> import ftorch.scipy.stats.beta as beta, mlx.core as mx
    >>> [round(v, 6) for v in beta.logsf(mx.array([0.5]), 2.0, 3.0).tolist()]
    [-1.163151]
    """
    return fnp.log(sf(x, a, b, loc, scale))
