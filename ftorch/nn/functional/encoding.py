"""``one_hot`` encoding, ``dropout`` (with an explicit key, as in JAX) and
rotary position embeddings (``rope``).

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> F.one_hot(mx.array([1]), 3).tolist()
[[0.0, 1.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as prims
from ftorch import numpy as fnp
from ftorch.core import aval_of, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives.creation import static_number, static_size
from ftorch.primitives.reduction import normalize_axis
from ftorch.random import _check_key, bernoulli

__all__ = ["one_hot", "dropout", "rope"]

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


# ----------------------------------------------------------------------------
# rope
# ----------------------------------------------------------------------------


def rope(x: Any, dims: int, *, traditional: bool = False, base: float | None = 10000.0,
         scale: float = 1.0, offset: Any = 0, freqs: Any = None) -> Any:
    """Rotary position embeddings, as ``mlx.core.fast.rope`` (and
    ``mlx.nn.RoPE``): the first ``dims`` features of each position ``t`` of
    ``x`` (``(B, *, T, D)``) turned in pairs by ``scale * (offset + t) *
    freq_i``, ``freq_i = base ** (-2i / dims)``; ``traditional`` pairs
    consecutive features, else ``i`` with ``i + dims/2``.

    ``offset`` is an int or an integer array (a scalar, or one per batch
    entry ``B``): under ``jit`` an array offset does not recompile. ``freqs``
    (``(dims // 2,)``) replaces ``base``. Differentiable in ``x`` (a rotation:
    its transpose turns back) and batchable over ``x`` and ``offset``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> x = mx.random.normal((1, 4, 8), key=mx.random.key(0))
    >>> y = F.rope(x, 8)
    >>> bool(mx.allclose(mx.linalg.norm(y, axis=-1), mx.linalg.norm(x, axis=-1)))
    True
    """
    fname = "rope"
    x = fnp.asarray(x)
    shape, dtype = aval_of(x)
    if len(shape) < 3:
        raise ValueError(f"{fname}: x must have at least 3 dimensions (B, *, T, D), got shape "
                         f"{shape}")
    if not is_floating(dtype):
        raise TypeError(f"{fname}: x must be floating, got {dtype}")
    dims = static_size(dims, fname, "dims")
    if dims % 2 or not 0 < dims <= shape[-1]:
        raise ValueError(f"{fname}: dims must be even and in (0, {shape[-1]}] (x's last axis), "
                         f"got {dims}")
    if isinstance(offset, bool) or not isinstance(offset, int):
        offset = fnp.asarray(offset)
        o_shape, o_dtype = aval_of(offset)
        if o_dtype not in (mx.int32, mx.int64, mx.uint32, mx.int16, mx.int8, mx.uint8):
            raise TypeError(f"{fname}: offset must be an int or an integer array, got {o_dtype}")
        if len(o_shape) > 1 or (o_shape and o_shape[0] not in (1, shape[0])):
            raise ValueError(f"{fname}: offset must be a scalar or one per batch entry "
                             f"({shape[0]},), got shape {o_shape}")
    if freqs is not None:
        if base is not None and base != 10000.0:
            raise ValueError(f"{fname}: give base or freqs, not both")
        freqs = fnp.asarray(freqs)
        if aval_of(freqs).shape != (dims // 2,):
            raise ValueError(f"{fname}: freqs must have shape ({dims // 2},) (dims // 2), got "
                             f"{aval_of(freqs).shape}")
        base = None
    elif base is None:
        raise ValueError(f"{fname}: give base or freqs")
    return prims.rope(x, offset, freqs, dims=dims, traditional=bool(traditional),
                      base=None if base is None else float(base), scale=float(scale))
