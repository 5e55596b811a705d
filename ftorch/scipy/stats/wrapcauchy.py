"""``ftorch.scipy.stats.wrapcauchy``, as ``jax.scipy.stats.wrapcauchy``: the
wrapped Cauchy distribution on ``[0, 2 pi]``, density ``(1 - c^2) / (2 pi (1 +
c^2 - 2 c cos x))`` for ``0 < c < 1`` (NaN for other ``c``).

>>> import ftorch.scipy.stats.wrapcauchy as wrapcauchy, mlx.core as mx
>>> [round(v, 6) for v in wrapcauchy.pdf(mx.array([0.0, 3.0]), 0.5).tolist()]
[0.477465, 0.053289]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import minus_inf_where, nan_unless, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Any:
    """``log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x)`` on ``[0, 2 pi]``,
    ``-inf`` outside.

    >>> import ftorch.scipy.stats.wrapcauchy as wrapcauchy, mlx.core as mx
    >>> [round(v, 6) for v in wrapcauchy.logpdf(mx.array([-1.0, 1.0]), 0.5).tolist()]
    [-inf, -1.782643]
    """
    x, c = promote("wrapcauchy.logpdf", x, c)
    value = (fnp.log(1.0 - c * c) - math.log(2.0 * math.pi)
             - fnp.log(1.0 + c * c - 2.0 * c * fnp.cos(x)))
    value = minus_inf_where((x < 0) | (x > 2.0 * math.pi), value)
    return nan_unless((c > 0) & (c < 1), value)


def pdf(x: Any, c: Any) -> Any:
    """The wrapped Cauchy density, ``exp(logpdf(x, c))``.

    >>> import ftorch.scipy.stats.wrapcauchy as wrapcauchy, mlx.core as mx
    >>> [round(v, 6) for v in wrapcauchy.pdf(mx.array([1.0]), 0.5).tolist()]
    [0.168193]
    """
    return fnp.exp(logpdf(x, c))
