"""``ftorch.scipy.stats.poisson``, as ``jax.scipy.stats.poisson``: the
Poisson distribution with mean ``mu``, ``P(k) = e^-mu mu^k / k!`` for
integers ``k >= 0``.

>>> import ftorch.scipy.stats.poisson as poisson, mlx.core as mx
>>> [round(v, 6) for v in poisson.pmf(mx.array([0.0, 1.0, 2.0]), 2.0).tolist()]
[0.135335, 0.270671, 0.270671]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``xlogy(y, mu) - gammaln(y + 1) - mu`` for ``y = k - loc >= 0`` and
    integer ``k``, ``-inf`` otherwise.

    >>> import ftorch.scipy.stats.poisson as poisson, mlx.core as mx
    >>> [round(v, 6) for v in poisson.logpmf(mx.array([0.5, 3.0]), 2.0).tolist()]
    [-inf, -1.712318]
    """
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    y = k - loc
    value = _special.xlogy(y, mu) - _special.gammaln(y + 1) - mu
    return minus_inf_where((y < 0) | (fnp.round(k) != k), value)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The probability mass, ``exp(logpmf(k, mu, loc))``.

    >>> import ftorch.scipy.stats.poisson as poisson, mlx.core as mx
    >>> [round(v, 6) for v in poisson.pmf(mx.array([3.0]), 2.0).tolist()]
    [0.180447]
    """
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P(X <= k) = gammaincc(floor(y) + 1, mu)`` for ``y = k - loc >= 0``, 0 below.

    >>> import ftorch.scipy.stats.poisson as poisson, mlx.core as mx
    >>> [round(v, 6) for v in poisson.cdf(mx.array([-1.0, 0.0, 2.5]), 2.0).tolist()]
    [0.0, 0.135335, 0.676676]
    """
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    y = k - loc
    return fnp.where(y < 0, 0.0, _special.gammaincc(fnp.floor(y + 1), mu))


# Up to mu = 100 the entropy is the sum of -p log p over the first 250
# counts (the mass beyond is below float precision); above, the
# asymptotic series of the normal approximation is as accurate.
_SUMMED_BELOW = 100.0
_COUNTS = 250


def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy ``-sum_k P(k) log P(k)`` of the distribution (0 at ``mu =
    0``; ``loc`` only shifts it and broadcasts): summed term by term up to
    ``mu = 100``, from ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above.

    >>> import ftorch.scipy.stats.poisson as poisson, mlx.core as mx
    >>> [round(v, 5) for v in poisson.entropy(mx.array([1.0, 200.0])).tolist()]
    [1.30484, 4.06768]
    """
    mu, loc = promote("poisson.entropy", mu, loc)
    shape = tuple(mx.broadcast_shapes(mu.shape, loc.shape))
    small = fnp.where(mu < _SUMMED_BELOW, mu, 1.0)
    counts = fnp.arange(_COUNTS, dtype=mu.dtype).reshape((_COUNTS,) + (1,) * mu.ndim)
    summed = fnp.sum(_special.entr(pmf(counts, small)), axis=0)
    large = fnp.where(mu < _SUMMED_BELOW, _SUMMED_BELOW, mu)
    asymptotic = 0.5 * fnp.log(2.0 * math.pi * math.e * large) - 1.0 / (12.0 * large)
    value = fnp.where(mu == 0, 0.0, fnp.where(mu < _SUMMED_BELOW, summed, asymptotic))
    return fnp.broadcast_to(value, shape)
