"""``ftorch.scipy.stats.norm``, as ``jax.scipy.stats.norm``: the normal
distribution with mean ``loc`` and standard deviation ``scale`` (arguments
broadcast, integers promote to float32). The distribution functions go
through ``log_ndtr``, ``ndtr`` and ``ndtri``, so they stay accurate far in
the tails (``logcdf(-40)`` is -804.6, not ``-inf``). As in JAX (and SciPy,
which gives NaN), a non-positive ``scale`` is not an error: the results are
whatever the formulas give.

>>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
>>> [round(v, 6) for v in norm.cdf(mx.array([0.0, 1.0])).tolist()]
[0.5, 0.841345]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.primitives as lax
from ftorch.scipy import special as _special

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _standardize(fname: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    x, loc, scale = _special._inexact(fname, x, loc, scale)
    return lax.divide(lax.subtract(x, loc), scale), scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the normal density at ``x``: ``-z^2/2 - log(scale) -
    log(2 pi)/2`` with ``z = (x - loc) / scale``.

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [round(v, 6) for v in norm.logpdf(mx.array([0.0, 2.0]), 1.0, 2.0).tolist()]
    [-1.737086, -1.737086]
    """
    z, scale = _standardize("norm.logpdf", x, loc, scale)
    return lax.subtract(lax.multiply(-0.5, lax.square(z)),
                        lax.add(lax.log(scale), _HALF_LOG_2PI))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density at ``x``, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [round(v, 6) for v in norm.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.398942, 0.241971]
    """
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The distribution function ``P(X <= x)``, ``ndtr((x - loc) / scale)``.

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [f"{v:.6e}" for v in norm.cdf(mx.array([-10.0, 0.0], dtype=mx.float64)).tolist()]
    ['7.619853e-24', '5.000000e-01']
    """
    z, _ = _standardize("norm.cdf", x, loc, scale)
    return _special.ndtr(z)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``, ``log_ndtr((x - loc) / scale)``: accurate in both
    tails.

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [round(v, 4) for v in norm.logcdf(mx.array([-40.0, 0.0], dtype=mx.float64)).tolist()]
    [-804.6084, -0.6931]
    """
    z, _ = _standardize("norm.logcdf", x, loc, scale)
    return lax.log_ndtr(z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function ``P(X > x) = ndtr(-(x - loc) / scale)``,
    accurate in the upper tail.

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [f"{v:.6e}" for v in norm.sf(mx.array([10.0, 0.0], dtype=mx.float64)).tolist()]
    ['7.619853e-24', '5.000000e-01']
    """
    z, _ = _standardize("norm.sf", x, loc, scale)
    return _special.ndtr(lax.negative(z))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = log_ndtr(-(x - loc) / scale)``.

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [round(v, 4) for v in norm.logsf(mx.array([40.0, 0.0], dtype=mx.float64)).tolist()]
    [-804.6084, -0.6931]
    """
    z, _ = _standardize("norm.logsf", x, loc, scale)
    return lax.log_ndtr(lax.negative(z))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, ``loc + scale * ndtri(q)`` (``-inf``/``inf``
    at 0/1, NaN outside [0, 1]).

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [round(v, 6) for v in norm.ppf(mx.array([0.5, 0.975], dtype=mx.float64), 1.0, 2.0).tolist()]
    [1.0, 4.919928]
    """
    q, loc, scale = _special._inexact("norm.ppf", q, loc, scale)
    return lax.add(lax.multiply(lax.ndtri(q), scale), loc)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function, ``loc - scale * ndtri(q)`` (exact for
    tiny ``q``: ``ndtri`` is accurate in its lower tail).

    >>> import ftorch.scipy.stats.norm as norm, mlx.core as mx
    >>> [round(v, 6) for v in norm.isf(mx.array([0.5, 0.025])).tolist()]
    [0.0, 1.959964]
    """
    q, loc, scale = _special._inexact("norm.isf", q, loc, scale)
    return lax.subtract(loc, lax.multiply(lax.ndtri(q), scale))
