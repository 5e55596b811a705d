"""A Llama-architecture language model from ``ftorch.nn``'s layers, with
mlx-lm's configuration fields and parameter names, so that mlx-lm's weights
load as they are (``nn.utils.unflatten_names(dict(tree_flatten(m.parameters())))``)
and ``nn.quantize`` and ``nn.lora`` apply as to any model.

- ``LlamaArgs``: mlx-lm's ``ModelArgs`` for ``model_type="llama"``.
- ``Llama``: ``model(params, tokens)`` gives the logits; with ``cache=``
  (``Llama.cache``), ``(logits, cache)``.
- ``generate``: sampling with the KV cache, one jitted step per token.

>>> import ftorch.random as random, mlx.core as mx
>>> from ftorch.models.llama import Llama, LlamaArgs, generate
>>> model = Llama(LlamaArgs(hidden_size=32, num_hidden_layers=2, intermediate_size=64,
...                         num_attention_heads=4, num_key_value_heads=2, vocab_size=50))
>>> params, _ = model.init(random.key(0), mx.zeros((1, 4), mx.int32))
>>> model(params, mx.array([[1, 2, 3]])).shape
(1, 3, 50)
>>> generate(model, params, mx.array([1, 2, 3]), max_tokens=5).shape
(5,)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import mlx.core as mx

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.random as random
from ftorch import nn
from ftorch.nn import Key, Layer, Params, State
from ftorch.nn._layer import layer_error, sublayer, sublayers

__all__ = ["LlamaArgs", "Llama", "generate", "rope_options"]


@dataclasses.dataclass(frozen=True)
class LlamaArgs:
    """The configuration, with the fields (and defaults) of mlx-lm's
    ``ModelArgs`` for Llama. ``LlamaArgs.from_dict(config)`` reads a
    ``config.json``-style dict, ignoring fields this model does not use.
    ``rope_scaling`` may be ``None`` or of type ``"default"``, ``"linear"``
    or ``"llama3"`` (Llama 3.1 and later); other scalings and
    sliding-window layers are not supported.

    >>> from ftorch.models.llama import LlamaArgs
    >>> args = LlamaArgs(hidden_size=64, num_hidden_layers=2, intermediate_size=128,
    ...                  num_attention_heads=4, vocab_size=128, num_key_value_heads=2)
    >>> args.rope_theta, args.rms_norm_eps, args.tie_word_embeddings
    (10000.0, 1e-05, True)
    """

    hidden_size: int
    num_hidden_layers: int
    intermediate_size: int
    num_attention_heads: int
    vocab_size: int
    rms_norm_eps: float = 1e-5
    head_dim: int | None = None
    num_key_value_heads: int | None = None
    attention_bias: bool = False
    mlp_bias: bool = False
    rope_theta: float = 10000.0
    rope_traditional: bool = False
    rope_scaling: Mapping[str, Any] | None = dataclasses.field(default=None, hash=False)
    tie_word_embeddings: bool = True

    def __post_init__(self) -> None:
        if self.rope_scaling is not None:
            # A read-only copy: the config is frozen (and hashed without it).
            object.__setattr__(self, "rope_scaling", MappingProxyType(dict(self.rope_scaling)))
            kind = _rope_type(self.rope_scaling)
            if kind not in ("default", "linear", "llama3"):
                raise ValueError(f"LlamaArgs: rope_scaling of type {kind!r} is not supported "
                                 f"(only 'default', 'linear' and 'llama3' are)")
            if kind != "default" and "factor" not in self.rope_scaling:
                raise ValueError(f"LlamaArgs: rope_scaling of type {kind!r} needs a 'factor'")

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> LlamaArgs:
        """The fields of ``config`` this model has (an error for ones it cannot honour).

        >>> from ftorch.models.llama import LlamaArgs
        >>> LlamaArgs.from_dict({"model_type": "llama", "hidden_size": 8,
        ...     "num_hidden_layers": 1, "intermediate_size": 16, "num_attention_heads": 2,
        ...     "vocab_size": 10, "rope_theta": 500000.0}).rope_theta
        500000.0
        """
        if config.get("sliding_window"):
            raise ValueError(f"LlamaArgs: sliding_window={config['sliding_window']!r} is not "
                             f"supported")
        if any(t != "full_attention" for t in config.get("layer_types") or ()):
            raise ValueError("LlamaArgs: only full-attention layers are supported")
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in config.items() if k in names})


def _rope_type(scaling: Mapping[str, Any]) -> str:
    # Older configs name it "type", newer ones "rope_type".
    return scaling.get("type") or scaling.get("rope_type", "default")


def rope_options(args: LlamaArgs) -> dict[str, Any]:
    """The ``nn.GroupedQueryAttention`` RoPE options that ``args`` give, as
    mlx-lm's ``initialize_rope``: ``rope_scale`` (``1 / factor`` for
    ``"linear"`` scaling) and ``rope_freqs`` (for ``"llama3"``: the
    frequencies stretched for long contexts, computed in float32 as mlx-lm
    does).

    >>> from ftorch.models.llama import LlamaArgs, rope_options
    >>> args = LlamaArgs(64, 1, 128, 4, 100, rope_scaling={"type": "linear", "factor": 4.0})
    >>> rope_options(args)
    {'rope_scale': 0.25, 'rope_freqs': None}
    """
    scaling = args.rope_scaling or {}
    kind = _rope_type(scaling) if scaling else "default"
    if kind == "linear":
        return {"rope_scale": 1 / scaling["factor"], "rope_freqs": None}
    if kind != "llama3":
        return {"rope_scale": 1.0, "rope_freqs": None}
    head_dim = args.head_dim or args.hidden_size // args.num_attention_heads
    factor = scaling["factor"]
    low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
    context = scaling.get("original_max_position_embeddings", 8192)
    # Wavelengths longer than context / low are stretched by factor, shorter
    # than context / high kept, and those between interpolated smoothly.
    freqs = args.rope_theta ** (mx.arange(0, head_dim, 2) / head_dim)
    wavelengths = 2 * math.pi * freqs
    freqs = mx.where(wavelengths > context / low, freqs * factor, freqs)
    medium = (wavelengths > context / high) & (wavelengths < context / low)
    smooth = (context / wavelengths - low) / (high - low)
    freqs = mx.where(medium, freqs / ((1 - smooth) / factor + smooth), freqs)
    return {"rope_scale": 1.0, "rope_freqs": tuple(freqs.tolist())}


@dataclasses.dataclass(frozen=True)
class DecoderBlock(Layer):
    """Pre-norm attention and MLP with residuals, as mlx-lm's ``TransformerBlock``."""

    args: LlamaArgs
    self_attn: nn.GroupedQueryAttention = sublayer()
    mlp: nn.SwiGLU = sublayer()
    input_layernorm: nn.RMSNorm = sublayer()
    post_attention_layernorm: nn.RMSNorm = sublayer()

    def __post_init__(self) -> None:
        a = self.args
        sublayers(self, self_attn=nn.GroupedQueryAttention(
                      a.hidden_size, a.num_attention_heads, a.num_key_value_heads, a.head_dim,
                      a.attention_bias, a.rope_theta, a.rope_traditional, **rope_options(a)),
                  mlp=nn.SwiGLU(a.hidden_size, a.intermediate_size, a.mlp_bias),
                  input_layernorm=nn.RMSNorm(a.hidden_size, eps=a.rms_norm_eps),
                  post_attention_layernorm=nn.RMSNorm(a.hidden_size, eps=a.rms_norm_eps))

    def apply(self, params: Params, state: State, x: Any, *, cache: Any = None,
              key: Key | None = None, train: bool = False) -> tuple[Any, State]:
        run = self.bind(params, state)
        if cache is None:
            h = x + run.self_attn(run.input_layernorm(x))
        else:
            r, cache = run.self_attn(run.input_layernorm(x), cache=cache)
            h = x + r
        out = h + run.mlp(run.post_attention_layernorm(h))
        return (out if cache is None else (out, cache)), run.state


@dataclasses.dataclass(frozen=True)
class LlamaModel(Layer):
    """The embedding, the blocks and the final norm (mlx-lm's ``LlamaModel``)."""

    args: LlamaArgs
    embed_tokens: nn.Embedding = sublayer()
    layers: tuple = sublayer()
    norm: nn.RMSNorm = sublayer()

    def __post_init__(self) -> None:
        a = self.args
        sublayers(self, embed_tokens=nn.Embedding(a.vocab_size, a.hidden_size),
                  layers=tuple(DecoderBlock(a) for _ in range(a.num_hidden_layers)),
                  norm=nn.RMSNorm(a.hidden_size, eps=a.rms_norm_eps))

    def apply(self, params: Params, state: State, tokens: Any, *, cache: Any = None,
              key: Key | None = None, train: bool = False) -> tuple[Any, State]:
        run = self.bind(params, state)
        h = run.embed_tokens(tokens)
        new_cache = []
        for i in range(len(self.layers)):
            if cache is None:
                h = run.layers[i](h)
            else:
                h, layer_cache = run.layers[i](h, cache=cache[i])
                new_cache.append(layer_cache)
        h = run.norm(h)
        return (h if cache is None else (h, new_cache)), run.state


@dataclasses.dataclass(frozen=True)
class Llama(Layer):
    """A Llama-architecture causal language model, as mlx-lm's ``Model``:
    ``model(params, tokens)`` (``(batch, length)`` integers) gives the logits
    ``(batch, length, vocab_size)``; ``model(params, tokens, cache=cache)``
    gives ``(logits, cache)`` for decoding.

    Params (mlx-lm's names): ``model.embed_tokens``, ``model.layers.<i>.
    {self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj, input_layernorm,
    post_attention_layernorm}``, ``model.norm`` and, untied, ``lm_head``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> from ftorch.models.llama import Llama, LlamaArgs
    >>> model = Llama(LlamaArgs(32, 1, 64, 4, 50, num_key_value_heads=2,
    ...                         tie_word_embeddings=False))
    >>> params, _ = model.init(random.key(0), mx.zeros((1, 3), mx.int32))
    >>> names = nn.utils.flatten_names(params)
    >>> names["model.layers.0.self_attn.k_proj.weight"].shape, names["lm_head.weight"].shape
    ((16, 32), (50, 32))
    >>> logits, cache = model(params, mx.array([[1, 2, 3]]), cache=model.cache(1, 8))
    >>> logits.shape, cache[0].offset.item()
    ((1, 3, 50), 3)
    """

    args: LlamaArgs
    model: LlamaModel = sublayer()
    lm_head: nn.Linear | None = sublayer()

    def __post_init__(self) -> None:
        a = self.args
        if not isinstance(a, LlamaArgs):
            raise TypeError(f"Llama: args must be LlamaArgs, got {type(a).__name__}")
        sublayers(self, model=LlamaModel(a),
                  lm_head=None if a.tie_word_embeddings else nn.Linear(a.hidden_size,
                                                                       a.vocab_size, False))

    def init(self, key: Key, tokens: Any) -> tuple[Params, State]:
        """The blocks' parameters (``mlx.nn``'s initialisation) and, untied,
        ``lm_head``'s; no state."""
        k_model, k_head = random.split(key)
        params = {"model": self.model.init(k_model, tokens)[0]}
        if self.lm_head is not None:
            hidden = ft.ShapeDtypeStruct((1, self.args.hidden_size), mx.float32)
            params["lm_head"] = self.lm_head.init(k_head, hidden)[0]
        return params, {}

    def apply(self, params: Params, state: State, tokens: Any, *, cache: Any = None,
              key: Key | None = None, train: bool = False) -> tuple[Any, State]:
        """``(logits, state)``, or ``((logits, cache), state)`` given a cache."""
        tokens = fnp.asarray(tokens)
        if len(tokens.shape) != 2:
            raise layer_error(self, f"tokens must be (batch, length) integers, got shape "
                              f"{tokens.shape}")
        if cache is not None and (not isinstance(cache, (list, tuple))
                                  or len(cache) != self.args.num_hidden_layers):
            raise layer_error(self, f"cache must be a list of {self.args.num_hidden_layers} "
                              f"nn.KVCache (Llama.cache), got {type(cache).__name__}", TypeError)
        run = self.bind(params, state)
        out = run.model(tokens, cache=cache)
        h, cache = out if cache is not None else (out, None)
        if self.lm_head is None:  # tied: the embedding's transpose
            logits = self.model.embed_tokens.as_linear(params["model"]["embed_tokens"], h)
        else:
            logits = run.lm_head(h)
        return (logits if cache is None else (logits, cache)), run.state

    def cache(self, batch: int, max_len: int, dtype: Any = mx.float32) -> list[nn.KVCache]:
        """An empty cache per layer, with room for ``max_len`` positions.
        Give it the weights' dtype (``bfloat16`` for most checkpoints, as
        mlx-lm's caches keep it): a float32 cache computes the attention in
        float32, which differs from mlx-lm's bfloat16 results.

        >>> from ftorch.models.llama import Llama, LlamaArgs
        >>> model = Llama(LlamaArgs(32, 2, 64, 4, 50, num_key_value_heads=2))
        >>> [c.keys.shape for c in model.cache(batch=1, max_len=16)]
        [(1, 2, 16, 8), (1, 2, 16, 8)]
        """
        a = self.args
        head_dim = a.head_dim or a.hidden_size // a.num_attention_heads
        return [nn.KVCache.empty(batch, a.num_key_value_heads or a.num_attention_heads, max_len,
                                 head_dim, dtype) for _ in range(a.num_hidden_layers)]


# ----------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------


def _decode_step(model: Llama, temperature: float):
    """One jitted step: the next token's logits from the last, the cache updated."""

    def step(params, tokens, cache, key):
        logits, cache = model(params, tokens, cache=cache)
        last = logits[:, -1, :]
        if temperature == 0:
            token = fnp.argmax(last, axis=-1)
        else:
            token = random.categorical(key, last / temperature, axis=-1)
        return token.astype(mx.int32), cache

    return ft.jit(step)


def _compute_dtype(params: Params) -> Any:
    """The dtype the model computes in: its embedding's (a quantized one's scales')."""
    embedding = params["model"]["embed_tokens"]
    return embedding.get("scales", embedding["weight"]).dtype


def generate(model: Llama, params: Params, prompt: Any, max_tokens: int, *,
             temperature: float = 0.0, key: Key | None = None,
             max_len: int | None = None) -> mx.array:
    """``max_tokens`` tokens following ``prompt`` (a 1-d integer array):
    greedy at ``temperature=0``, else sampled from ``softmax(logits /
    temperature)`` with ``key``. The prompt fills a KV cache of ``max_len``
    positions (default: prompt plus ``max_tokens``; in the weights' dtype, as
    mlx-lm's) in one call, then each token is one call of a step that
    ``ft.jit`` compiled once (per call of ``generate``: the prompt's shape
    and the step's).

    >>> import ftorch.random as random, mlx.core as mx
    >>> from ftorch.models.llama import Llama, LlamaArgs, generate
    >>> model = Llama(LlamaArgs(16, 1, 32, 2, 20))
    >>> params, _ = model.init(random.key(0), mx.zeros((1, 2), mx.int32))
    >>> generate(model, params, mx.array([3, 4]), 3, temperature=1.0,
    ...          key=random.key(1)).shape
    (3,)
    """
    prompt = mx.array(prompt)
    if prompt.ndim != 1 or not mx.issubdtype(prompt.dtype, mx.integer) or prompt.size == 0:
        raise ValueError(f"generate: prompt must be a non-empty 1-d integer array, got shape "
                         f"{prompt.shape} and dtype {prompt.dtype}")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"generate: max_tokens must be a positive int, got {max_tokens!r}")
    if temperature < 0:
        raise ValueError(f"generate: temperature must be >= 0, got {temperature}")
    if temperature > 0 and key is None:
        raise ValueError("generate: sampling at temperature > 0 needs a key")
    max_len = max_len or prompt.size + max_tokens
    if max_len < prompt.size + max_tokens - 1:
        raise ValueError(f"generate: max_len={max_len} has no room for the prompt "
                         f"({prompt.size}) and {max_tokens} tokens")
    step = _decode_step(model, float(temperature))
    keys = random.split(key if key is not None else random.key(0), max_tokens)
    cache = model.cache(1, max_len, _compute_dtype(params))
    token, cache = step(params, prompt[None].astype(mx.int32), cache, keys[0])
    out = [token]
    for i in range(1, max_tokens):
        token, cache = step(params, token[:, None], cache, keys[i])
        out.append(token)
    return mx.concatenate(out)

