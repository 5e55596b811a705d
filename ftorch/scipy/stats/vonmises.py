"""``ftorch.scipy.stats.vonmises``, as ``jax.scipy.stats.vonmises``: the von
Mises distribution on the circle, density ``exp(kappa cos x) / (2 pi I0(kappa))``
(NaN for ``kappa <= 0``).

>>> import ftorch.scipy.stats.vonmises as vonmises, mlx.core as mx
>>> [round(v, 6) for v in vonmises.pdf(mx.array([0.0, 3.0]), 1.0).tolist()]
[0.34171, 0.046711]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import nan_unless, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Any:
    """``kappa (cos x - 1) - log(2 pi i0e(kappa))``: the exponentially scaled
    Bessel function keeps large ``kappa`` finite.

    >>> import ftorch.scipy.stats.vonmises as vonmises, mlx.core as mx
    >>> [round(v, 6) for v in vonmises.logpdf(mx.array([0.0, 1.0]), 500.0).tolist()]
    [2.188115, -227.660751]
    """
    x, kappa = promote("vonmises.logpdf", x, kappa)
    value = kappa * (fnp.cos(x) - 1.0) - fnp.log(2.0 * math.pi * _special.i0e(kappa))
    return nan_unless(kappa > 0, value)


def pdf(x: Any, kappa: Any) -> Any:
    """The von Mises density, ``exp(logpdf(x, kappa))``.

    >>> import ftorch.scipy.stats.vonmises as vonmises, mlx.core as mx
    >>> [round(v, 6) for v in vonmises.pdf(mx.array([0.0]), 2.0).tolist()]
    [0.515885]
    """
    return fnp.exp(logpdf(x, kappa))
