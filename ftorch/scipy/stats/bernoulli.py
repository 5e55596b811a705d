"""``ftorch.scipy.stats.bernoulli``, as ``jax.scipy.stats.bernoulli``: the
Bernoulli distribution, 1 with probability ``p`` and 0 otherwise.

>>> import ftorch.scipy.stats.bernoulli as bernoulli, mlx.core as mx
>>> [round(v, 6) for v in bernoulli.pmf(mx.array([0.0, 1.0, 2.0]), 0.25).tolist()]
[0.75, 0.25, 0.0]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``xlogy(y, p) + xlog1py(1 - y, -p)`` for ``y = k - loc`` in [0, 1],
    ``-inf`` outside.

    >>> import ftorch.scipy.stats.bernoulli as bernoulli, mlx.core as mx
    >>> [round(v, 6) for v in bernoulli.logpmf(mx.array([0.0, 1.0]), 0.25).tolist()]
    [-0.287682, -1.386294]
    """
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    y = k - loc
    value = _special.xlogy(y, p) + _special.xlog1py(1.0 - y, fnp.negative(p))
    return minus_inf_where((y < 0) | (y > 1), value)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, ``exp(logpmf(k, p, loc))``.

    >>> import ftorch.scipy.stats.bernoulli as bernoulli, mlx.core as mx
    >>> [round(v, 6) for v in bernoulli.pmf(mx.array([1.0]), 0.25).tolist()]
    [0.25]
    """
    return fnp.exp(logpmf(k, p, loc))


def _bad_p(p: Any) -> Any:
    return fnp.isnan(p) | (p < 0) | (p > 1)


def cdf(k: Any, p: Any) -> Any:
    """``P(X <= k)``: 0 below 0, ``1 - p`` on [0, 1), 1 from 1 on; NaN for
    ``p`` outside [0, 1] or a NaN argument.

    >>> import ftorch.scipy.stats.bernoulli as bernoulli, mlx.core as mx
    >>> bernoulli.cdf(mx.array([-1.0, 0.5, 1.0]), 0.25).tolist()
    [0.0, 0.75, 1.0]
    """
    k, p = promote("bernoulli.cdf", k, p)
    value = fnp.where(k < 0, 0.0, fnp.where(k < 1, 1.0 - p, 1.0))
    return fnp.where(fnp.isnan(k) | _bad_p(p), fnp.nan, value)


def ppf(q: Any, p: Any) -> Any:
    """The quantile function: 0 for ``q <= 1 - p``, 1 above; NaN for ``q`` or
    ``p`` outside [0, 1].

    >>> import ftorch.scipy.stats.bernoulli as bernoulli, mlx.core as mx
    >>> bernoulli.ppf(mx.array([0.5, 0.9, 2.0]), 0.25).tolist()
    [0.0, 1.0, nan]
    """
    q, p = promote("bernoulli.ppf", q, p)
    value = fnp.where(q <= 1.0 - p, 0.0, 1.0)
    return fnp.where(fnp.isnan(q) | _bad_p(p) | (q < 0) | (q > 1), fnp.nan, value)
