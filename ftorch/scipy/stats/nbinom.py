"""``ftorch.scipy.stats.nbinom``, as ``jax.scipy.stats.nbinom``: the negative
binomial distribution, the number of failures before the ``n``-th success of
trials with success probability ``p``.

>>> import ftorch.scipy.stats.nbinom as nbinom, mlx.core as mx
>>> [round(v, 6) for v in nbinom.pmf(mx.array([0.0, 1.0, 2.0]), 2.0, 0.5).tolist()]
[0.25, 0.25, 0.1875]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``gammaln(y + n) - gammaln(n) - gammaln(y + 1) + xlogy(n, p) + xlogy(y,
    1 - p)`` for ``y = k - loc >= 0`` (``-inf`` below).

    >>> import ftorch.scipy.stats.nbinom as nbinom, mlx.core as mx
    >>> [round(v, 6) for v in nbinom.logpmf(mx.array([-1.0, 3.0]), 2.0, 0.5).tolist()]
    [-inf, -2.079442]
    """
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    gammaln = _special.gammaln
    value = (gammaln(y + n) - gammaln(n) - gammaln(y + 1)
             + _special.xlogy(n, p) + _special.xlogy(y, 1.0 - p))
    return minus_inf_where(y < 0, value)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, ``exp(logpmf(k, n, p, loc))``.

    >>> import ftorch.scipy.stats.nbinom as nbinom, mlx.core as mx
    >>> [round(v, 6) for v in nbinom.pmf(mx.array([3.0]), 2.0, 0.5).tolist()]
    [0.125]
    """
    return fnp.exp(logpmf(k, n, p, loc))
