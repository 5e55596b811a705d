"""Low-rank adapters (LoRA, Hu et al. 2021) and, on a quantized base, QLoRA
(Dettmers et al. 2023): ``LoRALinear`` and ``lora``, with mlx-lm's
parameter names (``linear.*``, ``lora_a``, ``lora_b``), initialisation and
``scale`` convention, so adapters move both ways with mlx-lm's trainer.

The adapters are ordinary leaves of the params: ``nn.utils.partition``
splits them from the frozen base, ``ft.grad`` takes them alone, and
``ft.vmap`` over a stack of them trains several variants of one base at
once (the base's quantized matmuls batch over their activations).

>>> import ftorch as ft, ftorch.nn as nn, ftorch.numpy as fnp, ftorch.random as random
>>> import mlx.core as mx
>>> model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
>>> params, _ = model.init(random.key(0), mx.zeros((1, 64)))
>>> qmodel, qparams = nn.quantize(model, params, group_size=32)
>>> lmodel, lparams = nn.lora(qmodel, qparams, random.key(1), rank=4)
>>> adapters, base = nn.utils.partition(lparams, nn.is_lora_param)
>>> loss = lambda a, x: fnp.mean(lmodel(nn.utils.combine(a, base), x) ** 2)
>>> grads = ft.jit(ft.grad(loss))(adapters, mx.ones((8, 64)))
>>> grads["layers"][0]["lora_b"].shape, grads["layers"][0]["linear"]["weight"]
((4, 64), None)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import ftorch.numpy as fnp
import ftorch.random as random
from ftorch.nn import functional as F
from ftorch.nn import init as initializers
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.layers._checks import check_features, check_key, check_positive, checked_param
from ftorch.nn.layers.linear import Linear
from ftorch.nn.layers.quantized import QuantizedLinear
from ftorch.nn.utils import replace_layers

__all__ = ["LoRALinear", "lora", "is_lora_param"]


@dataclasses.dataclass(frozen=True)
class LoRALinear(Layer):
    r"""A linear layer plus a trainable low-rank update, as mlx-lm's ``LoRALinear``:

    .. math:: y = \text{linear}(x) + s\,(\text{dropout}(x)\,A)\,B

    with ``A`` (``lora_a``) of shape ``(input_dims, rank)`` from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{input\_dims}}`, and
    ``B`` (``lora_b``) of shape ``(rank, output_dims)`` starting at zero, so
    that the adapted layer starts as the base.

    Args:
        linear (Layer): The base: a ``Linear`` or ``QuantizedLinear`` (QLoRA).
        rank (int, optional): The rank of the update. Default: ``8``.
        scale (float, optional): :math:`s`. Default: ``20.0`` (mlx-lm's).
        dropout (float, optional): Dropout on the update's input, in
            training (pass ``key``). Default: ``0.0``.

    Params: ``{"linear": the base's, "lora_a": (input_dims, rank), "lora_b":
    (rank, output_dims)}``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.LoRALinear(nn.Linear(16, 8), rank=2)
    >>> params, _ = layer.init(random.key(0), mx.zeros(16))
    >>> params["lora_a"].shape, params["lora_b"].shape, layer(params, mx.ones((3, 16))).shape
    ((16, 2), (2, 8), (3, 8))
    """

    linear: Layer
    rank: int = 8
    scale: float = 20.0
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.linear, (Linear, QuantizedLinear)):
            raise TypeError(f"LoRALinear: linear must be a Linear or QuantizedLinear layer, got "
                            f"{type(self.linear).__name__}")
        check_positive("LoRALinear", rank=self.rank)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"LoRALinear: dropout must be in [0, 1), got {self.dropout}")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """The base's params, ``lora_a`` from :math:`\\mathcal{U}(-k, k)` and a zero ``lora_b``."""
        k_base, k_a = random.split(key)
        base, _ = self.linear.init(k_base, x)
        return {"linear": base, **self.adapters(k_a)}, {}

    def adapters(self, key: Key) -> Params:
        """Fresh ``{"lora_a", "lora_b"}`` (``lora_b`` zero)."""
        n_in, n_out = self.linear.input_dims, self.linear.output_dims
        bound = 1.0 / math.sqrt(n_in)
        return {"lora_a": initializers.uniform(-bound, bound)(key, (n_in, self.rank)),
                "lora_b": fnp.zeros((self.rank, n_out))}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(linear(x) + scale * (dropout(x) @ lora_a) @ lora_b, state)``."""
        check_features(self, x, self.linear.input_dims)
        y, _ = self.linear.apply(params["linear"], {}, x)
        a = checked_param(self, params, "lora_a", (self.linear.input_dims, self.rank))
        b = checked_param(self, params, "lora_b", (self.rank, self.linear.output_dims))
        if train and self.dropout > 0:
            check_key(key, "LoRALinear with dropout in training")
            x = F.dropout(x, self.dropout, key=key)
        update = (x @ a) @ b
        return y + (self.scale * update).astype(y.dtype), state


def is_lora_param(name: str, leaf: object = None) -> bool:
    """Whether the dotted parameter ``name`` is a LoRA adapter (``lora_a`` or
    ``lora_b``): the predicate ``nn.utils.partition`` takes to split the
    adapters from the frozen base.

    >>> import ftorch.nn as nn
    >>> nn.is_lora_param("layers.0.lora_b"), nn.is_lora_param("layers.0.linear.weight")
    (True, False)
    """
    return name.rsplit(".", 1)[-1] in ("lora_a", "lora_b")


def lora(model: Layer, params: Params, key: Key, *, rank: int = 8, scale: float = 20.0,
         dropout: float = 0.0,
         predicate: Callable[[str, Layer], bool] | None = None) -> tuple[Layer, Params]:
    """``model`` with LoRA adapters on its linear layers (``Linear`` and
    ``QuantizedLinear``; ``predicate(path, layer)`` chooses, e.g. ``lambda
    path, layer: path.endswith(("q_proj", "v_proj"))``), and its params with
    fresh adapters (keys split from ``key``, one per adapted layer in path
    order). Neither argument is changed.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> params, _ = model.init(random.key(0), mx.zeros((1, 8)))
    >>> lmodel, lparams = nn.lora(model, params, random.key(1), rank=2,
    ...                           predicate=lambda path, layer: path == "layers.2")
    >>> [type(layer).__name__ for layer in lmodel.layers]
    ['Linear', 'ReLU', 'LoRALinear']
    >>> bool((lmodel(lparams, mx.ones(8)) == model(params, mx.ones(8))).all())
    True
    """
    check_key(key, "lora")
    chosen: list[str] = []

    def choose(path: str, layer: Layer, layer_params: Params) -> tuple | None:
        if not isinstance(layer, (Linear, QuantizedLinear)):
            return None
        if predicate is not None and not predicate(path, layer):
            return layer, layer_params
        chosen.append(path)
        return LoRALinear(layer, rank, scale, dropout), {"linear": layer_params}

    lmodel, lparams = replace_layers(model, params, choose)
    if not chosen:
        raise ValueError("lora: no Linear or QuantizedLinear layer was chosen"
                         + ("" if predicate is None else " by predicate"))
    keys = dict(zip(chosen, random.split(key, len(chosen))))

    def add_adapters(path: str, layer: Layer, layer_params: Params) -> tuple | None:
        if isinstance(layer, LoRALinear) and path in keys:
            return layer, {**layer_params, **layer.adapters(keys[path])}
        return None

    return replace_layers(lmodel, lparams, add_adapters)
