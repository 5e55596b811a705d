"""``MultiHeadAttention`` (``mlx.nn.MultiHeadAttention``'s parameters and
semantics) and ``create_additive_causal_mask``.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> mha = nn.MultiHeadAttention(8, 2)
>>> params, _ = mha.init(random.key(0), mx.zeros((1, 5, 8)))
>>> sorted(params), mha(params, mx.ones((1, 5, 8))).shape
(['key_proj', 'out_proj', 'query_proj', 'value_proj'], (1, 5, 8))
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.memory import check_fits
from ftorch.nn import functional as F
from ftorch.nn._layer import Array, Key, Layer, Params, State, layer_error, sublayer, sublayers
from ftorch.nn.layers._checks import check_positive, shape_of
from ftorch.nn.layers.linear import Linear

__all__ = ["MultiHeadAttention", "create_additive_causal_mask"]


def create_additive_causal_mask(n: int, dtype: DTypeLike = mx.float32) -> mx.array:
    """An ``(n, n)`` additive mask letting query ``i`` attend keys ``j <= i``:
    0 there, the dtype's most negative finite value above the diagonal, as
    ``mlx.nn.MultiHeadAttention.create_additive_causal_mask``.

    Args:
        n (int): The sequence length.
        dtype (optional): The mask's floating dtype. Default: ``float32``.

    >>> import ftorch.nn as nn
    >>> (nn.create_additive_causal_mask(3) < 0).tolist()
    [[False, True, True], [False, False, True], [False, False, False]]
    """
    check_positive("create_additive_causal_mask", n=n)
    dtype = to_mlx_dtype(dtype, "create_additive_causal_mask: dtype")
    check_fits((n, n), dtype, "create_additive_causal_mask")
    indices = mx.arange(n)
    return (indices[:, None] < indices[None]).astype(dtype) * mx.finfo(dtype).min


def _heads(x: Array, num_heads: int) -> Array:
    """``(..., L, H * d)`` -> ``(..., H, L, d)``."""
    shape = tuple(x.shape)
    x = fnp.reshape(x, shape[:-1] + (num_heads, shape[-1] // num_heads))
    return fnp.swapaxes(x, -2, -3)


def _merge_heads(x: Array) -> Array:
    """``(..., H, L, d)`` -> ``(..., L, H * d)``."""
    x = fnp.swapaxes(x, -2, -3)
    shape = tuple(x.shape)
    return fnp.reshape(x, shape[:-2] + (shape[-2] * shape[-1],))


@dataclasses.dataclass(frozen=True)
class MultiHeadAttention(Layer):
    r"""Multi-head scaled dot-product attention, as ``mlx.nn.MultiHeadAttention``:
    queries, keys and values are projected, split into ``num_heads`` heads,
    attended per head,

    .. math:: \mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d}} + M\right) V,

    merged and projected out (``F.scaled_dot_product_attention``).

    Args:
        dims (int): The model dimensions: the projected queries' and keys'
            size, and the default of every other size.
        num_heads (int): The number of heads; it divides ``dims``.
        query_input_dims (int, optional): The queries' size. Default: ``dims``.
        key_input_dims (int, optional): The keys' size. Default: ``dims``.
        value_input_dims (int, optional): The values' size. Default: ``key_input_dims``.
        value_dims (int, optional): The projected values' size. Default: ``dims``.
        value_output_dims (int, optional): The output's size. Default: ``dims``.
        bias (bool, optional): Whether the projections have biases.
            Default: ``False``.

    Params: the ``Linear`` layers ``query_proj``, ``key_proj``,
    ``value_proj``, ``out_proj`` (its children, made from the arguments).
    ``init(key, queries, keys=None, values=None)``; ``apply(params, state, queries, keys=None,
    values=None, mask=None)``: ``queries`` ``(..., L_q, query_input_dims)``,
    ``keys`` ``(..., L_k, key_input_dims)`` (default: the queries: self
    attention), ``values`` ``(..., L_k, value_input_dims)`` (default: the
    keys); ``mask`` broadcasting against ``(..., num_heads, L_q, L_k)``,
    additive (``create_additive_causal_mask``) or boolean (True: attend), or
    ``"causal"``. The defaults left as ``None`` are filled in, so equal
    configurations compare equal.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> mha = nn.MultiHeadAttention(4, 2)
    >>> params, _ = mha.init(random.key(0), mx.zeros((3, 4)))
    >>> x = mx.ones((2, 3, 4))
    >>> a = mha(params, x, mask=nn.create_additive_causal_mask(3))
    >>> bool(mx.allclose(a, mha(params, x, x, x, mask="causal")))
    True
    """

    dims: int
    num_heads: int
    query_input_dims: int | None = None
    key_input_dims: int | None = None
    value_input_dims: int | None = None
    value_dims: int | None = None
    value_output_dims: int | None = None
    bias: bool = False
    query_proj: Linear = sublayer()
    key_proj: Linear = sublayer()
    value_proj: Linear = sublayer()
    out_proj: Linear = sublayer()

    def __post_init__(self) -> None:
        check_positive("MultiHeadAttention", dims=self.dims, num_heads=self.num_heads)
        if self.dims % self.num_heads:
            raise ValueError(f"MultiHeadAttention: dims={self.dims} must be divisible by "
                             f"num_heads={self.num_heads}")
        key_input_dims = self.key_input_dims or self.dims
        filled = dict(
            query_input_dims=self.query_input_dims or self.dims,
            key_input_dims=key_input_dims,
            value_input_dims=self.value_input_dims or key_input_dims,
            value_dims=self.value_dims or self.dims,
            value_output_dims=self.value_output_dims or self.dims)
        check_positive("MultiHeadAttention", **filled)
        for name, value in filled.items():
            object.__setattr__(self, name, value)
        if filled["value_dims"] % self.num_heads:
            raise ValueError(f"MultiHeadAttention: value_dims={filled['value_dims']} must be "
                             f"divisible by num_heads={self.num_heads}")
        sublayers(self, query_proj=Linear(self.query_input_dims, self.dims, self.bias),
                  key_proj=Linear(self.key_input_dims, self.dims, self.bias),
                  value_proj=Linear(self.value_input_dims, self.value_dims, self.bias),
                  out_proj=Linear(self.value_dims, self.value_output_dims, self.bias))

    def apply(self, params: Params, state: State, queries: Array, keys: Array | None = None,
              values: Array | None = None, mask: Any = None, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(attention output (..., L_q, value_output_dims), state)``."""
        keys = queries if keys is None else keys
        values = keys if values is None else values
        self._check_inputs(queries, keys, values)
        run = self.bind(params, state, key=key, train=train)
        q = _heads(run.query_proj(queries), self.num_heads)
        k = _heads(run.key_proj(keys), self.num_heads)
        v = _heads(run.value_proj(values), self.num_heads)
        out = F.scaled_dot_product_attention(q, k, v, scale=1.0 / math.sqrt(q.shape[-1]),
                                             mask=mask)
        return run.out_proj(_merge_heads(out)), run.state

    def _check_inputs(self, queries: Array, keys: Array, values: Array) -> None:
        """A clear error unless the inputs are ``(..., L, features)`` with
        the features the projections take, and keys and values of one length."""
        for name, x, field in (("queries", queries, "query_input_dims"),
                               ("keys", keys, "key_input_dims"),
                               ("values", values, "value_input_dims")):
            shape, dims = shape_of(x), getattr(self, field)
            if len(shape) < 2 or shape[-1] != dims:
                raise layer_error(self, f"the {name} must be (..., L, {dims}) ({field}={dims}), "
                                  f"got shape {tuple(shape)}")
        if shape_of(keys)[-2] != shape_of(values)[-2]:
            raise layer_error(self, f"the keys and values must have the same length (axis -2), "
                              f"got shapes {tuple(shape_of(keys))} and {tuple(shape_of(values))}")

    create_additive_causal_mask = staticmethod(create_additive_causal_mask)
