"""The blocks of a decoder-only language model (Llama-class): ``RoPE``, the
``SwiGLU`` MLP, ``GroupedQueryAttention`` and its ``KVCache``, with mlx-lm's
parameter names (``q_proj`` ... ``o_proj``, ``gate_proj``/``up_proj``/
``down_proj``).

The cache is a plain pytree of fixed shape (keys and values for
``max_len`` positions, and the offset as an int32 array), which attention
returns updated: a decoding step has the same shapes at every position, so
``ft.jit`` compiles it once.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> attn = nn.GroupedQueryAttention(32, num_heads=4, num_kv_heads=2)
>>> params, _ = attn.init(random.key(0), mx.zeros((1, 3, 32)))
>>> cache = nn.KVCache.empty(batch=1, num_kv_heads=2, max_len=16, head_dim=8)
>>> y, cache = attn(params, mx.ones((1, 3, 32)), cache=cache)
>>> y.shape, cache.keys.shape, cache.offset.item()
((1, 3, 32), (1, 2, 16, 8), 3)
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch.nn import functional as F
from ftorch.nn._layer import (
    Array,
    InputSpec,
    Key,
    Layer,
    Params,
    State,
    layer_error,
    sublayer,
    sublayers,
)
from ftorch.nn.layers._checks import check_features, check_positive
from ftorch.nn.layers.linear import Linear

__all__ = ["RoPE", "SwiGLU", "KVCache", "GroupedQueryAttention"]


@dataclasses.dataclass(frozen=True)
class RoPE(Layer):
    """Rotary position embeddings, as ``mlx.nn.RoPE``: ``layer(params, x,
    offset=0)`` is ``nn.functional.rope(x, dims, ...)``. No parameters.

    ``freqs`` (``dims // 2`` numbers, kept as a tuple so that the layer stays
    hashable) replace the frequencies ``base`` gives, as mlx-lm's scaled
    RoPEs (Llama 3's) pass them to ``mx.fast.rope``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.RoPE(4)({}, mx.ones((1, 2, 4)), offset=1).shape
    (1, 2, 4)
    >>> nn.RoPE(4, freqs=[1.0, 100.0]).freqs
    (1.0, 100.0)
    """

    dims: int
    traditional: bool = False
    base: float = 10000.0
    scale: float = 1.0
    freqs: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.freqs is not None:
            freqs = tuple(float(f) for f in fnp.asarray(self.freqs).tolist())
            if len(freqs) != self.dims // 2:
                raise ValueError(f"RoPE: freqs must have dims // 2 = {self.dims // 2} entries, "
                                 f"got {len(freqs)}")
            object.__setattr__(self, "freqs", freqs)

    def init(self, key: Key, x: InputSpec, **options: Any) -> tuple[Params, State]:
        """No parameters, no state."""
        return {}, {}

    def apply(self, params: Params, state: State, x: Array, *, offset: Any = 0,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(rope(x, offset=offset), state)``."""
        if self.freqs is None:
            return F.rope(x, self.dims, traditional=self.traditional, base=self.base,
                          scale=self.scale, offset=offset), state
        return F.rope(x, self.dims, traditional=self.traditional, base=None, scale=self.scale,
                      offset=offset, freqs=mx.array(self.freqs, mx.float32)), state


@dataclasses.dataclass(frozen=True)
class SwiGLU(Layer):
    """The gated MLP of Llama-class models, as mlx-lm's ``MLP``:
    ``down_proj(silu(gate_proj(x)) * up_proj(x))``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> mlp = nn.SwiGLU(8, 16)
    >>> params, _ = mlp.init(random.key(0), mx.zeros((1, 8)))
    >>> sorted(params), mlp(params, mx.ones((2, 8))).shape
    (['down_proj', 'gate_proj', 'up_proj'], (2, 8))
    """

    dims: int
    hidden_dims: int
    bias: bool = False
    gate_proj: Linear = sublayer()
    up_proj: Linear = sublayer()
    down_proj: Linear = sublayer()

    def __post_init__(self) -> None:
        check_positive("SwiGLU", dims=self.dims, hidden_dims=self.hidden_dims)
        sublayers(self, gate_proj=Linear(self.dims, self.hidden_dims, self.bias),
                  up_proj=Linear(self.dims, self.hidden_dims, self.bias),
                  down_proj=Linear(self.hidden_dims, self.dims, self.bias))

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(down_proj(swiglu(gate_proj(x), up_proj(x))), state)``."""
        run = self.bind(params, state)
        return run.down_proj(F.swiglu(run.gate_proj(x), run.up_proj(x))), run.state


class KVCache(NamedTuple):
    """Keys and values of the positions seen so far, for decoding: ``keys``
    and ``values`` of shape ``(batch, num_kv_heads, max_len, head_dim)``
    (filled up to ``offset``) and ``offset``, the number of positions
    written, as an int32 array. A pytree: it passes through ``jit``.

    >>> import ftorch as ft, ftorch.nn as nn
    >>> cache = nn.KVCache.empty(batch=1, num_kv_heads=2, max_len=8, head_dim=4)
    >>> [leaf.shape for leaf in ft.tree.leaves(cache)]
    [(1, 2, 8, 4), (1, 2, 8, 4), ()]
    """

    keys: Array
    values: Array
    offset: Array

    @classmethod
    def empty(cls, batch: int, num_kv_heads: int, max_len: int, head_dim: int,
              dtype: Any = mx.float32) -> KVCache:
        """A cache with room for ``max_len`` positions, none written.

        >>> import ftorch.nn as nn
        >>> nn.KVCache.empty(2, 1, 8, 4).keys.shape
        (2, 1, 8, 4)
        """
        check_positive("KVCache.empty", batch=batch, num_kv_heads=num_kv_heads,
                       max_len=max_len, head_dim=head_dim)
        shape = (batch, num_kv_heads, max_len, head_dim)
        return cls(fnp.zeros(shape, dtype), fnp.zeros(shape, dtype), mx.array(0, dtype=mx.int32))

    def update(self, keys: Array, values: Array) -> KVCache:
        """The cache with ``keys`` and ``values`` (``(batch, num_kv_heads, T,
        head_dim)``) written at ``offset``, and ``offset`` moved by ``T``.
        Writing past ``max_len`` is an error when the offset is known (eager);
        under ``jit`` it cannot be checked, and MLX clamps the write.

        >>> import ftorch.nn as nn, mlx.core as mx
        >>> cache = nn.KVCache.empty(1, 1, 4, 2).update(mx.ones((1, 1, 3, 2)),
        ...                                            mx.ones((1, 1, 3, 2)))
        >>> cache.offset.item(), cache.keys[0, 0, :, 0].tolist()
        (3, [1.0, 1.0, 1.0, 0.0])
        """
        length, max_len, offset = keys.shape[-2], self.keys.shape[-2], self.offset
        # Shapes are static, so more new positions than the cache holds is an
        # error even under jit (where it would otherwise be dynamic_update_slice's).
        if length > max_len:
            raise ValueError(f"KVCache: {length} new positions do not fit in max_len="
                             f"{max_len}; make the cache longer")
        # A concrete offset (eager) is checked; a traced one (under jit) cannot be.
        if isinstance(offset, mx.array) and int(offset.item()) + length > max_len:
            raise ValueError(f"KVCache: {length} new positions at offset {offset.item()} do "
                             f"not fit in max_len={max_len}; make the cache longer")
        start = (0, 0, self.offset, 0)
        return KVCache(lax.dynamic_update_slice(self.keys, keys.astype(self.keys.dtype), start),
                       lax.dynamic_update_slice(self.values, values.astype(self.values.dtype),
                                                start),
                       self.offset + length)


@dataclasses.dataclass(frozen=True)
class GroupedQueryAttention(Layer):
    r"""Causal self-attention with ``num_kv_heads`` key/value heads shared by
    groups of the ``num_heads`` query heads (GQA; MQA with one) and rotary
    position embeddings, as mlx-lm's Llama ``Attention``.

    ``layer(params, x)`` attends causally over ``x`` (``(B, T, dims)``);
    ``layer(params, x, cache=cache)`` also attends over the cached positions,
    and returns ``(y, cache)`` with ``x``'s keys and values written.

    Args:
        dims (int): The model's width.
        num_heads (int): Query heads.
        num_kv_heads (int, optional): Key/value heads, dividing ``num_heads``.
            Default: ``num_heads``.
        head_dim (int, optional): Default: ``dims // num_heads``.
        bias (bool, optional): Biases on the projections. Default: ``False``.
        rope_base, rope_traditional, rope_scale, rope_freqs: the ``RoPE``'s
            ``base``, ``traditional``, ``scale`` and ``freqs``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> attn = nn.GroupedQueryAttention(16, num_heads=4, num_kv_heads=1)
    >>> params, _ = attn.init(random.key(0), mx.zeros((1, 5, 16)))
    >>> params["k_proj"]["weight"].shape, attn(params, mx.ones((2, 5, 16))).shape
    ((4, 16), (2, 5, 16))
    """

    dims: int
    num_heads: int
    num_kv_heads: int | None = None
    head_dim: int | None = None
    bias: bool = False
    rope_base: float = 10000.0
    rope_traditional: bool = False
    rope_scale: float = 1.0
    rope_freqs: tuple[float, ...] | None = None
    q_proj: Linear = sublayer()
    k_proj: Linear = sublayer()
    v_proj: Linear = sublayer()
    o_proj: Linear = sublayer()
    rope: RoPE = sublayer()

    def __post_init__(self) -> None:
        owner = "GroupedQueryAttention"
        kv = self.num_heads if self.num_kv_heads is None else self.num_kv_heads
        check_positive(owner, dims=self.dims, num_heads=self.num_heads, num_kv_heads=kv)
        if self.num_heads % kv:
            raise ValueError(f"{owner}: num_kv_heads={kv} must divide num_heads="
                             f"{self.num_heads}")
        head_dim = self.head_dim or self.dims // self.num_heads
        check_positive(owner, head_dim=head_dim)
        object.__setattr__(self, "num_kv_heads", kv)
        object.__setattr__(self, "head_dim", head_dim)
        sublayers(self, q_proj=Linear(self.dims, self.num_heads * head_dim, self.bias),
                  k_proj=Linear(self.dims, kv * head_dim, self.bias),
                  v_proj=Linear(self.dims, kv * head_dim, self.bias),
                  o_proj=Linear(self.num_heads * head_dim, self.dims, self.bias),
                  rope=RoPE(head_dim, self.rope_traditional, self.rope_base, self.rope_scale,
                            self.rope_freqs))

    def apply(self, params: Params, state: State, x: Array, *, cache: KVCache | None = None,
              key: Key | None = None, train: bool = False) -> tuple[Any, State]:
        """``(y, state)``, or ``((y, cache), state)`` given a ``cache``."""
        check_features(self, x, self.dims)
        if len(x.shape) != 3:
            raise layer_error(self, f"x must be (batch, length, dims), got shape {x.shape}")
        run = self.bind(params, state)
        b, t, _ = x.shape

        def heads(y: Array, n: int) -> Array:
            return fnp.transpose(fnp.reshape(y, (b, t, n, self.head_dim)), (0, 2, 1, 3))

        q = heads(run.q_proj(x), self.num_heads)
        k = heads(run.k_proj(x), self.num_kv_heads)
        v = heads(run.v_proj(x), self.num_kv_heads)
        scale = self.head_dim ** -0.5
        if cache is None:
            q, k = run.rope(q), run.rope(k)
            out = F.scaled_dot_product_attention(q, k, v, scale=scale, is_causal=t > 1)
        else:
            _check_cache(self, cache, b)
            q, k = run.rope(q, offset=cache.offset), run.rope(k, offset=cache.offset)
            cache = cache.update(k, v)
            # Query i (at offset + i) sees the cached positions up to its own.
            seen = fnp.arange(cache.keys.shape[-2])[None, :] <= (
                cache.offset - t + fnp.arange(t))[:, None]
            out = F.scaled_dot_product_attention(q, cache.keys, cache.values, scale=scale,
                                                 mask=seen)
        y = run.o_proj(fnp.reshape(fnp.transpose(out, (0, 2, 1, 3)), (b, t, -1)))
        return (y if cache is None else (y, cache)), run.state


def _check_cache(layer: GroupedQueryAttention, cache: Any, batch: int) -> None:
    if not isinstance(cache, KVCache):
        raise layer_error(layer, f"cache must be an nn.KVCache, got {type(cache).__name__}",
                          TypeError)
    expected = (batch, layer.num_kv_heads, layer.head_dim)
    got = cache.keys.shape
    if (got[0], got[1], got[3]) != expected:
        raise layer_error(layer, f"the cache's keys have shape {tuple(got)}; this layer needs "
                          f"(batch={batch}, num_kv_heads={layer.num_kv_heads}, max_len, "
                          f"head_dim={layer.head_dim})")
