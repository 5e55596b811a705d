"""``one_hot`` encoding and ``dropout`` (with an explicit key, as in JAX).

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> F.one_hot(mx.array([1]), 3).tolist()
[[0.0, 1.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from ftorch import numpy as fnp
from ftorch.core import is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives.creation import static_number, static_size
from ftorch.primitives.reduction import normalize_axis
from ftorch.random import _check_key, bernoulli

__all__ = ["one_hot", "dropout"]

# ----------------------------------------------------------------------------
# one_hot, dropout
# ----------------------------------------------------------------------------


def one_hot(x: Any, num_classes: int, dtype: DTypeLike = mx.float32, axis: int = -1) -> Any:
    """Integer labels ``x`` of shape ``S`` as one-hot vectors: an array of
    shape ``S`` with an axis of size ``num_classes`` inserted at ``axis``
    (the end by default), holding ``x == c`` at class ``c``. As
    ``jax.nn.one_hot``, a label outside ``[0, num_classes)`` (negative ones
    included) gives a row of zeros. Not differentiable (labels are integers).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.one_hot(mx.array([0, 2, 3]), 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    x = fnp.asarray(x)
    if x.dtype == mx.bool_ or is_floating(x.dtype) or x.dtype == mx.complex64:
        raise TypeError(f"one_hot: x must hold integer class labels, got dtype {x.dtype}")
    n = static_size(num_classes, "one_hot", "num_classes")
    dtype = to_mlx_dtype(dtype, "one_hot: dtype")
    ax = normalize_axis(axis, x.ndim + 1, "one_hot")
    classes = mx.arange(n).reshape([n if i == ax else 1 for i in range(x.ndim + 1)])
    return fnp.astype(fnp.equal(fnp.expand_dims(x, ax), classes), dtype)


def dropout(x: Any, rate: float, *, key: Any) -> Any:
    """Each entry of ``x`` zeroed with probability ``rate``, the others
    scaled by ``1 / (1 - rate)`` so the expectation is ``x``:
    ``x * mask / (1 - rate)`` with ``mask ~ Bernoulli(1 - rate)`` drawn from
    ``key`` (``ftorch.random``: the same key gives the same mask; split keys
    for different masks). ``rate`` is a static number in ``[0, 1]``: 0
    returns ``x``, 1 returns zeros. Differentiable in ``x``.

    Args:
        x: the array, of any shape.
        rate: the probability of dropping an entry.
        key: a ``ftorch.random`` key (keyword-only).

    >>> import ftorch.nn.functional as F, ftorch.random as random, mlx.core as mx
    >>> y = F.dropout(mx.ones(1000), 0.5, key=random.key(0))
    >>> sorted(set(y.tolist())), 400 < int((y == 0).sum()) < 600
    ([0.0, 2.0], True)
    """
    _check_key(key, "dropout")
    rate = static_number(rate, "dropout", "rate")
    if not 0 <= rate <= 1:
        raise ValueError(f"dropout: rate must be in [0, 1], got {rate}")
    x = fnp.asarray(x)
    if rate == 0:
        return x
    if rate == 1:
        return fnp.zeros_like(x)
    keep = 1.0 - rate
    mask = bernoulli(key, keep, x.shape)
    return fnp.where(mask, fnp.divide(x, keep), 0)
