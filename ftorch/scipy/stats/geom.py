"""``ftorch.scipy.stats.geom``, as ``jax.scipy.stats.geom``: the geometric
distribution, the number of trials up to and including the first success,
``P(k) = (1 - p)^(k - 1) p`` for ``k >= 1``.

>>> import ftorch.scipy.stats.geom as geom, mlx.core as mx
>>> [round(v, 6) for v in geom.pmf(mx.array([0.0, 1.0, 2.0]), 0.5).tolist()]
[0.0, 0.5, 0.25]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``xlog1py(y - 1, -p) + log(p)`` for ``y = k - loc > 0``, ``-inf`` otherwise.

    >>> import ftorch.scipy.stats.geom as geom, mlx.core as mx
    >>> [round(v, 6) for v in geom.logpmf(mx.array([1.0, 3.0]), 0.25).tolist()]
    [-1.386294, -1.961658]
    """
    k, p, loc = promote("geom.logpmf", k, p, loc)
    y = k - loc
    return minus_inf_where(y <= 0, _special.xlog1py(y - 1, fnp.negative(p)) + fnp.log(p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass, ``exp(logpmf(k, p, loc))``.

    >>> import ftorch.scipy.stats.geom as geom, mlx.core as mx
    >>> [round(v, 6) for v in geom.pmf(mx.array([3.0]), 0.25).tolist()]
    [0.140625]
    """
    return fnp.exp(logpmf(k, p, loc))
