"""``ftorch.scipy.stats.truncnorm``, as ``jax.scipy.stats.truncnorm``: the
normal distribution ``N(loc, scale^2)`` conditioned on ``a <= (x - loc) / scale
<= b`` (the bounds are in standard units). ``a >= b`` gives NaN. The normal
mass between the bounds is computed from the tail nearer to them, so bounds far
in a tail stay accurate.

>>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
>>> [round(v, 6) for v in truncnorm.cdf(mx.array([-1.0, 0.0, 1.0]), -1.0, 1.0).tolist()]
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats import norm
from ftorch.scipy.stats._common import minus_inf_where, nan_unless, promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _log_sub_exp(x: Any, y: Any) -> Any:
    """``log(exp(x) - exp(y))`` for ``x >= y``."""
    return x + fnp.log(fnp.negative(fnp.expm1(y - x)))


def _log_normal_mass(a: Any, b: Any) -> Any:
    """``log(ndtr(b) - ndtr(a))`` for ``a <= b``: from the lower tail when
    both bounds are below 0, the upper tail (by symmetry) when both are
    above, and from the two tails' complement when they straddle 0."""
    a, b = fnp.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0
    low = fnp.where(right, fnp.negative(b), a)
    high = fnp.where(right, fnp.negative(a), b)
    tails = _log_sub_exp(_special.log_ndtr(high), _special.log_ndtr(low))
    central = fnp.log1p(fnp.negative(_special.ndtr(a) + _special.ndtr(fnp.negative(b))))
    return fnp.where(left | right, tails, central)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``norm.logpdf(x, loc, scale) - log(ndtr(b) - ndtr(a))`` between the
    bounds, ``-inf`` outside.

    >>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
    >>> [round(v, 6) for v in truncnorm.logpdf(mx.array([0.0, 2.0]), -1.0, 1.0).tolist()]
    [-0.537223, -inf]
    """
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    value = norm.logpdf(x, loc, scale) - _log_normal_mass(a, b)
    z = (x - loc) / scale
    return nan_unless(a < b, minus_inf_where((z < a) | (z > b), value))


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density, ``exp(logpdf(x, a, b, loc, scale))``.

    >>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
    >>> [round(v, 6) for v in truncnorm.pdf(mx.array([0.0]), 0.0, 1.0).tolist()]
    [1.168737]
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``: the log mass from ``a`` to ``x`` over the whole, or,
    where that is near 0 (above -0.1), ``log1p(-sf)`` from the upper mass; 0
    from ``b`` on, ``-inf`` up to ``a``.

    >>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
    >>> [round(v, 6) for v in truncnorm.logcdf(mx.array([0.0, 0.9]), -1.0, 1.0).tolist()]
    [-0.693147, -0.037923]
    """
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    z, a, b = fnp.broadcast_arrays(z, a, b)
    inside = (z > a) & (z < b)
    # Off the open interval the masses below are not used: a point inside keeps
    # their values and gradients finite, so the masked branches add no NaN.
    z_inside = fnp.where(inside, z, (a + b) / 2)
    total = _log_normal_mass(a, b)
    lower = _log_normal_mass(a, z_inside) - total
    upper = _log_normal_mass(z_inside, b) - total
    value = fnp.where(inside, lower, -fnp.inf)
    value = fnp.where((lower > -0.1) & inside, fnp.log1p(fnp.negative(fnp.exp(upper))), value)
    value = fnp.where(z >= b, 0.0, value)
    return nan_unless(a < b, value)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = exp(logcdf(x, a, b, loc, scale))``.

    >>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
    >>> [round(v, 6) for v in truncnorm.cdf(mx.array([0.5]), 0.0, 1.0).tolist()]
    [0.560907]
    """
    return fnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``, the log distribution function of the reflected
    distribution: ``logcdf(-x, -b, -a, -loc, scale)``.

    >>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
    >>> [round(v, 6) for v in truncnorm.logsf(mx.array([0.0, 0.9]), -1.0, 1.0).tolist()]
    [-0.693147, -3.291098]
    """
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    neg = fnp.negative
    return logcdf(neg(x), neg(b), neg(a), neg(loc), scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = exp(logsf(x, a, b, loc, scale))``.

    >>> import ftorch.scipy.stats.truncnorm as truncnorm, mlx.core as mx
    >>> [round(v, 6) for v in truncnorm.sf(mx.array([0.5]), 0.0, 1.0).tolist()]
    [0.439094]
    """
    return fnp.exp(logsf(x, a, b, loc, scale))
