"""``ftorch.scipy.stats.uniform``, as ``jax.scipy.stats.uniform``: the
uniform distribution on ``[loc, loc + scale]``.

>>> import ftorch.scipy.stats.uniform as uniform, mlx.core as mx
>>> uniform.cdf(mx.array([-1.0, 0.25, 2.0])).tolist()
[0.0, 0.25, 1.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log(scale)`` on ``[loc, loc + scale]``, ``-inf`` outside.

    >>> import ftorch.scipy.stats.uniform as uniform, mlx.core as mx
    >>> [round(v, 6) for v in uniform.logpdf(mx.array([1.0, 5.0]), 0.0, 2.0).tolist()]
    [-0.693147, -inf]
    """
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    shape = tuple(mx.broadcast_shapes(x.shape, loc.shape, scale.shape))
    value = fnp.broadcast_to(fnp.negative(fnp.log(scale)), shape)
    return minus_inf_where((x < loc) | (x > loc + scale), value)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform density, ``1 / scale`` on ``[loc, loc + scale]``, 0 outside.

    >>> import ftorch.scipy.stats.uniform as uniform, mlx.core as mx
    >>> uniform.pdf(mx.array([0.5, 1.5])).tolist()
    [1.0, 0.0]
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(x - loc) / scale`` on the support, 0 below it, 1 above it (and,
    as in JAX, 0 where ``x`` is NaN).

    >>> import ftorch.scipy.stats.uniform as uniform, mlx.core as mx
    >>> uniform.cdf(mx.array([0.5, 3.0]), 0.0, 2.0).tolist()
    [0.25, 1.0]
    """
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    high = loc + scale
    inside = fnp.where((x >= loc) & (x <= high), (x - loc) / scale, 0.0)
    return fnp.where(x > high, 1.0, inside)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + q * scale`` (NaN outside [0, 1]).

    >>> import ftorch.scipy.stats.uniform as uniform, mlx.core as mx
    >>> uniform.ppf(mx.array([0.5, 2.0]), 1.0, 2.0).tolist()
    [2.0, nan]
    """
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return fnp.where((q < 0) | (q > 1), fnp.nan, loc + q * scale)
