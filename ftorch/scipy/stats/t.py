"""``ftorch.scipy.stats.t``, as ``jax.scipy.stats.t``: Student's t
distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

>>> import ftorch.scipy.stats.t as t, mlx.core as mx
>>> [round(v, 6) for v in t.pdf(mx.array([0.0, 1.0]), 3.0).tolist()]
[0.367553, 0.206748]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import standardized

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale^2)/2 - (df+1)/2
    log1p(z^2 / df)``.

    >>> import ftorch.scipy.stats.t as t, mlx.core as mx
    >>> [round(v, 6) for v in t.logpdf(mx.array([0.0, 2.0]), 4.0, 1.0, 2.0).tolist()]
    [-1.825538, -1.825538]
    """
    z, scale, df = standardized("t.logpdf", x, loc, scale, df)
    half_df = df / 2
    normalizer = (_special.gammaln(half_df) - _special.gammaln(half_df + 0.5)
                  + fnp.log(math.pi * scale * scale * df) / 2)
    return fnp.negative(normalizer + (half_df + 0.5) * fnp.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The t density, ``exp(logpdf(x, df, loc, scale))``.

    >>> import ftorch.scipy.stats.t as t, mlx.core as mx
    >>> [round(v, 6) for v in t.pdf(mx.array([0.0]), 1.0).tolist()]
    [0.31831]
    """
    return fnp.exp(logpdf(x, df, loc, scale))
