"""``ftorch.scipy.stats.gennorm``, as ``jax.scipy.stats.gennorm``: the
generalized normal distribution with shape ``beta``, density ``beta exp(-|x|^beta)
/ (2 Gamma(1/beta))`` (``beta = 2`` is a normal of variance 1/2, ``beta = 1`` the
Laplace distribution).

>>> import ftorch.scipy.stats.gennorm as gennorm, mlx.core as mx
>>> [round(v, 6) for v in gennorm.pdf(mx.array([0.0, 1.0]), 1.0).tolist()]
[0.5, 0.18394]
"""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import promote

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, beta: Any) -> Any:
    """``log(beta / 2) - gammaln(1/beta) - |x|^beta``.

    >>> import ftorch.scipy.stats.gennorm as gennorm, mlx.core as mx
    >>> [round(v, 6) for v in gennorm.logpdf(mx.array([0.0, 2.0]), 2.0).tolist()]
    [-0.572365, -4.572365]
    """
    x, beta = promote("gennorm.logpdf", x, beta)
    return fnp.log(0.5 * beta) - _special.gammaln(1.0 / beta) - fnp.power(fnp.abs(x), beta)


def pdf(x: Any, beta: Any) -> Any:
    """The generalized normal density, ``exp(logpdf(x, beta))``.

    >>> import ftorch.scipy.stats.gennorm as gennorm, mlx.core as mx
    >>> [round(v, 6) for v in gennorm.pdf(mx.array([0.0]), 2.0).tolist()]
    [0.56419]
    """
    return fnp.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Any:
    """``(1 + sign(x) gammainc(1/beta, |x|^beta)) / 2``.

    >>> import ftorch.scipy.stats.gennorm as gennorm, mlx.core as mx
    >>> [round(v, 6) for v in gennorm.cdf(mx.array([-1.0, 0.0, 1.0]), 1.0).tolist()]
    [0.18394, 0.5, 0.81606]
    """
    x, beta = promote("gennorm.cdf", x, beta)
    mass = _special.gammainc(1.0 / beta, fnp.power(fnp.abs(x), beta))
    return 0.5 * (1.0 + fnp.sign(x) * mass)
