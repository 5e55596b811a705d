"""``ftorch.scipy.stats.betabinom``, as ``jax.scipy.stats.betabinom``: the
beta-binomial distribution, ``n`` trials whose success probability is drawn from
``Beta(a, b)``. Negative ``n`` or non-positive ``a``, ``b`` give NaN.

>>> import ftorch.scipy.stats.betabinom as betabinom, mlx.core as mx
>>> [round(v, 6) for v in betabinom.pmf(mx.array([0.0, 1.0, 2.0]), 2.0, 1.0, 1.0).tolist()]
[0.333333, 0.333333, 0.333333]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, nan_unless, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``log C(n, y) + betaln(y + a, n - y + b) - betaln(a, b)`` for ``y =
    floor(k) - loc`` in ``[0, n]`` (``-inf`` outside).

    >>> import ftorch.scipy.stats.betabinom as betabinom, mlx.core as mx
    >>> [round(v, 6) for v in betabinom.logpmf(mx.array([1.0, 5.0]), 4.0, 2.0, 3.0).tolist()]
    [-1.252763, -inf]
    """
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = fnp.floor(k) - loc
    betaln = _special.betaln
    # log C(n, y) = -log(n + 1) - betaln(n - y + 1, y + 1)
    log_choose = fnp.negative(fnp.log1p(n) + betaln(n - y + 1, y + 1))
    value = log_choose + betaln(y + a, n - y + b) - betaln(a, b)
    value = fnp.where((y == 0) & (n == 0), 0.0, value)
    value = minus_inf_where((y < fnp.negative(loc)) | (y > n) | (y + a <= 0), value)
    return nan_unless((n >= 0) & (a > 0) & (b > 0), value)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """The probability mass, ``exp(logpmf(k, n, a, b, loc))``.

    >>> import ftorch.scipy.stats.betabinom as betabinom, mlx.core as mx
    >>> [round(v, 6) for v in betabinom.pmf(mx.array([2.0]), 4.0, 2.0, 3.0).tolist()]
    [0.257143]
    """
    return fnp.exp(logpmf(k, n, a, b, loc))
