"""Transformer blocks with ``mlx.nn``'s semantics and parameter names:
``TransformerEncoderLayer``, ``TransformerEncoder``,
``TransformerDecoderLayer``, ``TransformerDecoder``.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> block = nn.TransformerEncoderLayer(8, 2, mlp_dims=16)
>>> params, _ = block.init(random.key(0), mx.zeros((1, 4, 8)))
>>> sorted(params)
['attention', 'linear1', 'linear2', 'ln1', 'ln2']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ftorch.nn import functional as F
from ftorch.nn._layer import (
    Array,
    Bound,
    InputSpec,
    Key,
    Layer,
    Params,
    State,
    check_features,
    check_positive,
    with_features,
)
from ftorch.nn.layers.attention import MultiHeadAttention
from ftorch.nn.layers.dropout import Dropout
from ftorch.nn.layers.linear import Linear
from ftorch.nn.layers.normalization import LayerNorm

__all__ = [
    "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
    "TransformerDecoder",
]


def _check_block(owner: str, dims: int, num_heads: int, mlp_dims: int | None, dropout: float,
                 activation: Callable) -> None:
    check_positive(owner, dims=dims, num_heads=num_heads)
    if mlp_dims is not None:
        check_positive(owner, mlp_dims=mlp_dims)
    if not 0 <= dropout < 1:
        raise ValueError(f"{owner}: dropout must be in [0, 1), got {dropout!r}")
    if not callable(activation):
        raise TypeError(f"{owner}: activation must be callable, got {activation!r}")


def _mlp(run: Bound, activation: Callable, x: Array, dropout: str) -> Array:
    """``linear2(dropout(activation(linear1(x))))``."""
    return run("linear2", run(dropout, activation(run("linear1", x))))


@dataclasses.dataclass(frozen=True)
class TransformerEncoderLayer(Layer):
    r"""A transformer encoder block, as ``mlx.nn.TransformerEncoderLayer``:
    self attention then an MLP, each with a residual connection; layer norm
    before each (``norm_first=True``) or after each residual sum.

    With ``norm_first``:

    .. math::
        x &= x + \mathrm{drop}(\mathrm{attn}(\mathrm{ln}_1(x))) \\
        y &= x + W_2\,\mathrm{drop}(\mathrm{act}(W_1\,\mathrm{ln}_2(x) + b_1)) + b_2

    Args:
        dims (int): The model dimensions.
        num_heads (int): The number of attention heads.
        mlp_dims (int, optional): The MLP's hidden size. Default: ``4 * dims``.
        dropout (float, optional): The dropout rate after the attention and
            after the activation. Default: ``0.0``.
        activation (callable, optional): The MLP's activation, an ftorch
            function. Default: ``ftorch.nn.functional.relu``.
        norm_first (bool, optional): Normalise before (True) or after each
            sub-block. Default: ``True``.

    Params: ``attention`` (``MultiHeadAttention``), ``ln1``, ``ln2``,
    ``linear1``, ``linear2``. ``apply(params, state, x, mask=None, *, key,
    train)``: ``x`` ``(..., L, dims)``; ``mask`` as ``MultiHeadAttention``'s;
    ``key`` needed in training when ``dropout > 0``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> block = nn.TransformerEncoderLayer(8, 2, dropout=0.1)
    >>> params, _ = block.init(random.key(0), mx.zeros((3, 8)))
    >>> x = mx.ones((2, 3, 8))
    >>> block(params, x, "causal", key=random.key(1), train=True).shape
    (2, 3, 8)
    """

    dims: int
    num_heads: int
    mlp_dims: int | None = None
    dropout: float = 0.0
    activation: Callable[[Array], Array] = F.relu
    norm_first: bool = True

    def __post_init__(self) -> None:
        _check_block("TransformerEncoderLayer", self.dims, self.num_heads, self.mlp_dims,
                     self.dropout, self.activation)
        object.__setattr__(self, "mlp_dims", self.mlp_dims or 4 * self.dims)

    def children(self) -> dict[str, Layer]:
        """``attention``, ``ln1``, ``ln2``, ``linear1``, ``linear2``, ``dropout1``,
        ``dropout2`` (the dropouts have no parameters)."""
        return {
            "attention": MultiHeadAttention(self.dims, self.num_heads),
            "ln1": LayerNorm(self.dims),
            "ln2": LayerNorm(self.dims),
            "linear1": Linear(self.dims, self.mlp_dims),
            "linear2": Linear(self.mlp_dims, self.dims),
            "dropout1": Dropout(self.dropout),
            "dropout2": Dropout(self.dropout),
        }

    def init(self, key: Key, x: InputSpec, mask: Any = None) -> tuple[Params, State]:
        """The sub-layers' parameters; no state."""
        return self.join({
            "attention": self.init_child("attention", key, x),
            "ln1": self.init_child("ln1", key, x),
            "ln2": self.init_child("ln2", key, x),
            "linear1": self.init_child("linear1", key, x),
            "linear2": self.init_child("linear2", key, with_features(x, self.mlp_dims)),
        })

    def apply(self, params: Params, state: State, x: Array, mask: Any = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(block(x), state)``."""
        check_features(self, x, self.dims)
        run = self.bind(params, state, key=key, train=train)
        if self.norm_first:
            y = run("ln1", x)
            x = x + run("dropout1", run("attention", y, y, y, mask))
            y = x + _mlp(run, self.activation, run("ln2", x), "dropout2")
        else:
            x = run("ln1", x + run("dropout1", run("attention", x, x, x, mask)))
            y = run("ln2", x + _mlp(run, self.activation, x, "dropout2"))
        return y, run.state


@dataclasses.dataclass(frozen=True)
class TransformerEncoder(Layer):
    r"""``num_layers`` ``TransformerEncoderLayer``s then a ``LayerNorm``, as
    ``mlx.nn.TransformerEncoder``.

    Args:
        num_layers (int): The number of blocks.
        dims, num_heads, mlp_dims, dropout, activation, norm_first: as
            ``TransformerEncoderLayer``.
        checkpoint (bool, optional): Recompute each block in the backward
            pass (``ft.checkpoint``) instead of storing its intermediates.
            Default: ``False``.

    Params: ``{"layers": [block0, ...], "ln": ...}``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> enc = nn.TransformerEncoder(2, 8, 2, mlp_dims=16)
    >>> params, _ = enc.init(random.key(0), mx.zeros((4, 8)))
    >>> enc(params, mx.ones((4, 8)), "causal").shape, len(params["layers"])
    ((4, 8), 2)
    """

    num_layers: int
    dims: int
    num_heads: int
    mlp_dims: int | None = None
    dropout: float = 0.0
    activation: Callable[[Array], Array] = F.relu
    norm_first: bool = True
    checkpoint: bool = False

    def __post_init__(self) -> None:
        check_positive("TransformerEncoder", num_layers=self.num_layers)
        _check_block("TransformerEncoder", self.dims, self.num_heads, self.mlp_dims,
                     self.dropout, self.activation)
        object.__setattr__(self, "mlp_dims", self.mlp_dims or 4 * self.dims)

    def children(self) -> dict[str, Layer]:
        """``layers.0`` ... ``layers.{num_layers - 1}``, ``ln``."""
        block = TransformerEncoderLayer(self.dims, self.num_heads, self.mlp_dims, self.dropout,
                                        self.activation, self.norm_first)
        out: dict[str, Layer] = {f"layers.{i}": block for i in range(self.num_layers)}
        out["ln"] = LayerNorm(self.dims)
        return out

    def init(self, key: Key, x: InputSpec, mask: Any = None) -> tuple[Params, State]:
        """Every block's parameters and the final norm's; no state."""
        return self.join({name: self.init_child(name, key, x) for name in self.children()})

    def apply(self, params: Params, state: State, x: Array, mask: Any = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(ln(block_n(...block_0(x))), state)``."""
        check_features(self, x, self.dims)
        run = self.bind(params, state, key=key, train=train)
        call = run.checkpointed if self.checkpoint else run
        for i in range(self.num_layers):
            x = call(f"layers.{i}", x, mask)
        return run("ln", x), run.state


@dataclasses.dataclass(frozen=True)
class TransformerDecoderLayer(Layer):
    r"""A transformer decoder block, as ``mlx.nn.TransformerDecoderLayer``:
    self attention, cross attention to ``memory``, then an MLP, each with a
    residual connection and a layer norm (before with ``norm_first``).

    Args:
        dims (int): The model dimensions.
        num_heads (int): The number of attention heads.
        mlp_dims (int, optional): The MLP's hidden size. Default: ``4 * dims``.
        dropout (float, optional): The dropout rate. Default: ``0.0``.
        activation (callable, optional): The MLP's activation. Default: ``relu``.
        norm_first (bool, optional): Normalise before each sub-block.
            Default: ``True``.

    Params: ``self_attention``, ``cross_attention``, ``ln1``, ``ln2``,
    ``ln3``, ``linear1``, ``linear2``. ``apply(params, state, x, memory,
    x_mask=None, memory_mask=None, *, key, train)``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> block = nn.TransformerDecoderLayer(8, 2, mlp_dims=16)
    >>> params, _ = block.init(random.key(0), mx.zeros((3, 8)), mx.zeros((5, 8)))
    >>> block(params, mx.ones((3, 8)), mx.ones((5, 8)), "causal").shape
    (3, 8)
    """

    dims: int
    num_heads: int
    mlp_dims: int | None = None
    dropout: float = 0.0
    activation: Callable[[Array], Array] = F.relu
    norm_first: bool = True

    def __post_init__(self) -> None:
        _check_block("TransformerDecoderLayer", self.dims, self.num_heads, self.mlp_dims,
                     self.dropout, self.activation)
        object.__setattr__(self, "mlp_dims", self.mlp_dims or 4 * self.dims)

    def children(self) -> dict[str, Layer]:
        """The attentions, norms, linears and dropouts, by ``mlx.nn``'s names."""
        return {
            "self_attention": MultiHeadAttention(self.dims, self.num_heads),
            "cross_attention": MultiHeadAttention(self.dims, self.num_heads),
            "ln1": LayerNorm(self.dims),
            "ln2": LayerNorm(self.dims),
            "ln3": LayerNorm(self.dims),
            "linear1": Linear(self.dims, self.mlp_dims),
            "linear2": Linear(self.mlp_dims, self.dims),
            "dropout1": Dropout(self.dropout),
            "dropout2": Dropout(self.dropout),
            "dropout3": Dropout(self.dropout),
        }

    def init(self, key: Key, x: InputSpec, memory: InputSpec, x_mask: Any = None,
             memory_mask: Any = None) -> tuple[Params, State]:
        """The sub-layers' parameters; no state."""
        return self.join({
            "self_attention": self.init_child("self_attention", key, x),
            "cross_attention": self.init_child("cross_attention", key, x, memory),
            **{name: self.init_child(name, key, x) for name in ("ln1", "ln2", "ln3", "linear1")},
            "linear2": self.init_child("linear2", key, with_features(x, self.mlp_dims)),
        })

    def apply(self, params: Params, state: State, x: Array, memory: Array, x_mask: Any = None,
              memory_mask: Any = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[Array, State]:
        """``(block(x, memory), state)``."""
        check_features(self, x, self.dims)
        check_features(self, memory, self.dims, "memory")
        run = self.bind(params, state, key=key, train=train)
        if self.norm_first:
            y = run("ln1", x)
            x = x + run("dropout1", run("self_attention", y, y, y, x_mask))
            y = run("ln2", x)
            x = x + run("dropout2", run("cross_attention", y, memory, memory, memory_mask))
            y = x + _mlp(run, self.activation, run("ln3", x), "dropout3")
        else:
            x = run("ln1", x + run("dropout1", run("self_attention", x, x, x, x_mask)))
            x = run("ln2", x + run("dropout2",
                                   run("cross_attention", x, memory, memory, memory_mask)))
            y = run("ln3", x + _mlp(run, self.activation, x, "dropout3"))
        return y, run.state


@dataclasses.dataclass(frozen=True)
class TransformerDecoder(Layer):
    r"""``num_layers`` ``TransformerDecoderLayer``s then a ``LayerNorm``, as
    ``mlx.nn.TransformerDecoder``.

    Args:
        num_layers (int): The number of blocks.
        dims, num_heads, mlp_dims, dropout, activation, norm_first: as
            ``TransformerDecoderLayer``.
        checkpoint (bool, optional): Recompute each block in the backward
            pass. Default: ``False``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> dec = nn.TransformerDecoder(2, 8, 2, mlp_dims=16)
    >>> params, _ = dec.init(random.key(0), mx.zeros((3, 8)), mx.zeros((5, 8)))
    >>> dec(params, mx.ones((3, 8)), mx.ones((5, 8))).shape
    (3, 8)
    """

    num_layers: int
    dims: int
    num_heads: int
    mlp_dims: int | None = None
    dropout: float = 0.0
    activation: Callable[[Array], Array] = F.relu
    norm_first: bool = True
    checkpoint: bool = False

    def __post_init__(self) -> None:
        check_positive("TransformerDecoder", num_layers=self.num_layers)
        _check_block("TransformerDecoder", self.dims, self.num_heads, self.mlp_dims,
                     self.dropout, self.activation)
        object.__setattr__(self, "mlp_dims", self.mlp_dims or 4 * self.dims)

    def children(self) -> dict[str, Layer]:
        """``layers.0`` ... ``layers.{num_layers - 1}``, ``ln``."""
        block = TransformerDecoderLayer(self.dims, self.num_heads, self.mlp_dims, self.dropout,
                                        self.activation, self.norm_first)
        out: dict[str, Layer] = {f"layers.{i}": block for i in range(self.num_layers)}
        out["ln"] = LayerNorm(self.dims)
        return out

    def init(self, key: Key, x: InputSpec, memory: InputSpec, x_mask: Any = None,
             memory_mask: Any = None) -> tuple[Params, State]:
        """Every block's parameters and the final norm's; no state."""
        by_name = {f"layers.{i}": self.init_child(f"layers.{i}", key, x, memory)
                   for i in range(self.num_layers)}
        by_name["ln"] = self.init_child("ln", key, x)
        return self.join(by_name)

    def apply(self, params: Params, state: State, x: Array, memory: Array, x_mask: Any = None,
              memory_mask: Any = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[Array, State]:
        """``(ln(block_n(...block_0(x, memory), memory)), state)``."""
        check_features(self, x, self.dims)
        check_features(self, memory, self.dims, "memory")
        run = self.bind(params, state, key=key, train=train)
        call = run.checkpointed if self.checkpoint else run
        for i in range(self.num_layers):
            x = call(f"layers.{i}", x, memory, x_mask, memory_mask)
        return run("ln", x), run.state
