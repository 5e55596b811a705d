"""``ftorch.scipy.stats.multinomial``, as ``jax.scipy.stats.multinomial``:
the counts ``x`` (integers, along the last axis) of ``n`` draws from the
categories' probabilities ``p``.

>>> import ftorch.scipy.stats.multinomial as multinomial, mlx.core as mx
>>> round(multinomial.pmf(mx.array([1, 1]), 2, mx.array([0.5, 0.5])).item(), 6)
0.5
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.core import aval_of
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import minus_inf_where, promote

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """``gammaln(n + 1) + sum(xlogy(x, p) - gammaln(x + 1))`` over the last
    axis where the counts add up to ``n``, ``-inf`` elsewhere. ``x`` and ``n``
    must be integers.

    >>> import ftorch.scipy.stats.multinomial as multinomial, mlx.core as mx
    >>> p = mx.array([0.2, 0.3, 0.5])
    >>> [round(v, 6) for v in multinomial.logpmf(mx.array([[1, 1, 2], [1, 1, 1]]), 4, p).tolist()]
    [-1.714798, -inf]
    """
    (p,) = promote("multinomial.logpmf", p)
    x, n = fnp.asarray(x), fnp.asarray(n)
    for name, value in (("x", x), ("n", n)):
        if not mx.issubdtype(aval_of(value).dtype, mx.integer):
            raise ValueError(f"multinomial.logpmf: {name} must be an integer array (counts), "
                             f"got dtype {aval_of(value).dtype}")
    x, n = fnp.astype(x, p.dtype), fnp.astype(n, p.dtype)
    gammaln = _special.gammaln
    value = gammaln(n + 1) + fnp.sum(_special.xlogy(x, p) - gammaln(x + 1), axis=-1)
    return minus_inf_where(fnp.sum(x, axis=-1) != n, value)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """The probability mass, ``exp(logpmf(x, n, p))``.

    >>> import ftorch.scipy.stats.multinomial as multinomial, mlx.core as mx
    >>> round(multinomial.pmf(mx.array([2, 0]), 2, mx.array([0.5, 0.5])).item(), 6)
    0.25
    """
    return fnp.exp(logpmf(x, n, p))
