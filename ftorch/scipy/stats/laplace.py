"""``ftorch.scipy.stats.laplace``, as ``jax.scipy.stats.laplace``: the
Laplace distribution with density ``exp(-|x - loc| / scale) / (2 scale)``.

>>> import ftorch.scipy.stats.laplace as laplace, mlx.core as mx
>>> [round(v, 6) for v in laplace.cdf(mx.array([-1.0, 0.0, 1.0])).tolist()]
[0.18394, 0.5, 0.81606]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.stats._common import standardized

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-|x - loc| / scale - log(2 scale)``.

    >>> import ftorch.scipy.stats.laplace as laplace, mlx.core as mx
    >>> [round(v, 6) for v in laplace.logpdf(mx.array([0.0, 1.0])).tolist()]
    [-0.693147, -1.693147]
    """
    z, scale = standardized("laplace.logpdf", x, loc, scale)
    return fnp.negative(fnp.abs(z) + fnp.log(2.0 * scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Laplace density, ``exp(logpdf(x, loc, scale))``.

    >>> import ftorch.scipy.stats.laplace as laplace, mlx.core as mx
    >>> [round(v, 6) for v in laplace.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.5, 0.18394]
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(z) / 2`` for ``z = (x - loc) / scale <= 0``, ``1 - exp(-z) / 2`` above.

    >>> import ftorch.scipy.stats.laplace as laplace, mlx.core as mx
    >>> [round(v, 6) for v in laplace.cdf(mx.array([-2.0, 2.0]), 0.0, 2.0).tolist()]
    [0.18394, 0.81606]
    """
    z, _ = standardized("laplace.cdf", x, loc, scale)
    return fnp.where(z <= 0, 0.5 * fnp.exp(z), 1.0 - 0.5 * fnp.exp(fnp.negative(z)))
