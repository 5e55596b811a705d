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
from ftorch.nn._layer import Array, Bound, Key, Layer, Params, State, sublayer, sublayers
from ftorch.nn.layers._checks import check_features, check_positive
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


@dataclasses.dataclass(frozen=True)
class _Block(Layer):
    """What the encoder and decoder blocks share: their hyperparameters, and
    sub-blocks (attentions, then the MLP) each with a residual connection, a
    layer norm ``ln{i}`` and a dropout ``dropout{i}``. A subclass names its
    attentions in ``attentions`` and declares its children as fields in
    ``mlx.nn``'s order, the order of their keys."""

    dims: int
    num_heads: int
    mlp_dims: int | None = None
    dropout: float = 0.0
    activation: Callable[[Array], Array] = F.relu
    norm_first: bool = True

    attentions = ()  # the attentions' names: a class constant, not a field

    def __post_init__(self) -> None:
        _check_block(type(self).__name__, self.dims, self.num_heads, self.mlp_dims,
                     self.dropout, self.activation)
        object.__setattr__(self, "mlp_dims", self.mlp_dims or 4 * self.dims)
        sub_blocks = range(1, len(self.attentions) + 2)
        sublayers(self, **{name: MultiHeadAttention(self.dims, self.num_heads)
                           for name in self.attentions},
                  **{f"ln{i}": LayerNorm(self.dims) for i in sub_blocks},
                  linear1=Linear(self.dims, self.mlp_dims),
                  linear2=Linear(self.mlp_dims, self.dims),
                  **{f"dropout{i}": Dropout(self.dropout) for i in sub_blocks})

    def _residual(self, norm: Callable, body: Callable, x: Array) -> Array:
        """``x + body(norm(x))`` with ``norm_first``, else ``norm(x + body(x))``."""
        if self.norm_first:
            return x + body(norm(x))
        return norm(x + body(x))

    def _mlp(self, run: Bound, dropout: Callable, x: Array) -> Array:
        """``linear2(dropout(activation(linear1(x))))``."""
        return run.linear2(dropout(self.activation(run.linear1(x))))


@dataclasses.dataclass(frozen=True)
class TransformerEncoderLayer(_Block):
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

    attention: MultiHeadAttention = sublayer()
    ln1: LayerNorm = sublayer()
    ln2: LayerNorm = sublayer()
    linear1: Linear = sublayer()
    linear2: Linear = sublayer()
    dropout1: Dropout = sublayer()
    dropout2: Dropout = sublayer()

    attentions = ("attention",)

    def apply(self, params: Params, state: State, x: Array, mask: Any = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(block(x), state)``."""
        check_features(self, x, self.dims)
        run = self.bind(params, state, key=key, train=train)
        x = self._residual(run.ln1, lambda y: run.dropout1(run.attention(y, y, y, mask)), x)
        y = self._residual(run.ln2, lambda y: self._mlp(run, run.dropout2, y), x)
        return y, run.state


@dataclasses.dataclass(frozen=True)
class TransformerDecoderLayer(_Block):
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

    self_attention: MultiHeadAttention = sublayer()
    cross_attention: MultiHeadAttention = sublayer()
    ln1: LayerNorm = sublayer()
    ln2: LayerNorm = sublayer()
    ln3: LayerNorm = sublayer()
    linear1: Linear = sublayer()
    linear2: Linear = sublayer()
    dropout1: Dropout = sublayer()
    dropout2: Dropout = sublayer()
    dropout3: Dropout = sublayer()

    attentions = ("self_attention", "cross_attention")

    def apply(self, params: Params, state: State, x: Array, memory: Array, x_mask: Any = None,
              memory_mask: Any = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[Array, State]:
        """``(block(x, memory), state)``."""
        check_features(self, x, self.dims)
        check_features(self, memory, self.dims, "memory")
        run = self.bind(params, state, key=key, train=train)
        x = self._residual(run.ln1, lambda y: run.dropout1(run.self_attention(y, y, y, x_mask)),
                           x)
        x = self._residual(run.ln2, lambda y: run.dropout2(
            run.cross_attention(y, memory, memory, memory_mask)), x)
        y = self._residual(run.ln3, lambda y: self._mlp(run, run.dropout3, y), x)
        return y, run.state


@dataclasses.dataclass(frozen=True)
class _Stack(Layer):
    """``num_layers`` copies of a block (the class constant ``block``), then
    a ``LayerNorm``: what the encoder and the decoder share."""

    num_layers: int
    dims: int
    num_heads: int
    mlp_dims: int | None = None
    dropout: float = 0.0
    activation: Callable[[Array], Array] = F.relu
    norm_first: bool = True
    checkpoint: bool = False
    layers: tuple[_Block, ...] = sublayer()
    ln: LayerNorm = sublayer()

    block = _Block  # the blocks' class: a class constant (a subclass's), not a field

    def __post_init__(self) -> None:
        owner = type(self).__name__
        check_positive(owner, num_layers=self.num_layers)
        _check_block(owner, self.dims, self.num_heads, self.mlp_dims, self.dropout,
                     self.activation)
        object.__setattr__(self, "mlp_dims", self.mlp_dims or 4 * self.dims)
        block = self.block(self.dims, self.num_heads, self.mlp_dims, self.dropout,
                           self.activation, self.norm_first)
        sublayers(self, layers=(block,) * self.num_layers, ln=LayerNorm(self.dims))

    def _blocks_then_norm(self, params: Params, state: State, key: Key | None, train: bool,
                          x: Array, *rest: Any) -> tuple[Array, State]:
        """``(ln(block_n(...block_0(x, *rest)..., *rest)), state)``."""
        run = self.bind(params, state, key=key, train=train)
        for block in run.layers:
            x = block.checkpointed(x, *rest) if self.checkpoint else block(x, *rest)
        return run.ln(x), run.state


_STACK_ARGS = """
    Args:
        num_layers (int): The number of blocks.
        dims, num_heads, mlp_dims, dropout, activation, norm_first: as
            ``{block}``.
        checkpoint (bool, optional): Recompute each block in the backward
            pass (``ft.checkpoint``) instead of storing its intermediates.
            Default: ``False``.

    Params: ``{{"layers": [block0, ...], "ln": ...}}``.
"""


@dataclasses.dataclass(frozen=True)
class TransformerEncoder(_Stack):
    __doc__ = """``num_layers`` ``TransformerEncoderLayer``s then a ``LayerNorm``, as
    ``mlx.nn.TransformerEncoder``.
""" + _STACK_ARGS.format(block="TransformerEncoderLayer") + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> enc = nn.TransformerEncoder(2, 8, 2, mlp_dims=16)
    >>> params, _ = enc.init(random.key(0), mx.zeros((4, 8)))
    >>> enc(params, mx.ones((4, 8)), "causal").shape, len(params["layers"])
    ((4, 8), 2)
    """

    block = TransformerEncoderLayer

    def apply(self, params: Params, state: State, x: Array, mask: Any = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(ln(block_n(...block_0(x))), state)``."""
        check_features(self, x, self.dims)
        return self._blocks_then_norm(params, state, key, train, x, mask)


@dataclasses.dataclass(frozen=True)
class TransformerDecoder(_Stack):
    __doc__ = """``num_layers`` ``TransformerDecoderLayer``s then a ``LayerNorm``, as
    ``mlx.nn.TransformerDecoder``.
""" + _STACK_ARGS.format(block="TransformerDecoderLayer") + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> dec = nn.TransformerDecoder(2, 8, 2, mlp_dims=16)
    >>> params, _ = dec.init(random.key(0), mx.zeros((3, 8)), mx.zeros((5, 8)))
    >>> dec(params, mx.ones((3, 8)), mx.ones((5, 8))).shape
    (3, 8)
    """

    block = TransformerDecoderLayer

    def apply(self, params: Params, state: State, x: Array, memory: Array, x_mask: Any = None,
              memory_mask: Any = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[Array, State]:
        """``(ln(block_n(...block_0(x, memory), memory)), state)``."""
        check_features(self, x, self.dims)
        check_features(self, memory, self.dims, "memory")
        return self._blocks_then_norm(params, state, key, train, x, memory, x_mask,
                                      memory_mask)
