"""``ftorch.scipy.stats.binom``, as ``jax.scipy.stats.binom``: the binomial
distribution of ``n`` trials with success probability ``p``.

>>> import ftorch.scipy.stats.binom as binom, mlx.core as mx
>>> [round(v, 6) for v in binom.pmf(mx.array([0.0, 1.0, 2.0]), 2.0, 0.5).tolist()]
[0.25, 0.5, 0.25]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log C(n, y) + xlogy(y, p) + xlog1py(n - y, -p)`` for ``y = k - loc``
    in ``[0, n + 1)`` (``-inf`` outside); 0 where the probability is certain
    (``n = y = 0``, or ``p`` 0 or 1 at the matching end).

    >>> import ftorch.scipy.stats.binom as binom, mlx.core as mx
    >>> [round(v, 6) for v in binom.logpmf(mx.array([1.0, 5.0]), 4.0, 0.5).tolist()]
    [-1.386294, -inf]
    """
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    gammaln = _special.gammaln
    log_choose = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    log_powers = _special.xlogy(y, p) + _special.xlog1py(n - y, fnp.negative(p))
    certain = ((y == 0) & (n == 0)) | (log_powers == 0)
    value = fnp.where(certain, 0.0, log_choose + log_powers)
    return minus_inf_where((y < 0) | (y >= n + 1), value)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, ``exp(logpmf(k, n, p, loc))``.

    >>> import ftorch.scipy.stats.binom as binom, mlx.core as mx
    >>> [round(v, 6) for v in binom.pmf(mx.array([2.0]), 4.0, 0.5).tolist()]
    [0.375]
    """
    return fnp.exp(logpmf(k, n, p, loc))
