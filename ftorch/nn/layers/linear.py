"""Affine layers: ``Identity``, ``Linear``, ``Bilinear`` (``mlx.nn``'s
names, layouts and initialisation).

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> layer = nn.Linear(4, 2)
>>> params, _ = layer.init(random.key(0), mx.zeros((8, 4)))
>>> {k: v.shape for k, v in params.items()}
{'weight': (2, 4), 'bias': (2,)}
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import ftorch.numpy as fnp
import ftorch.random as random
from ftorch.nn import init as initializers
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.init import Initializer
from ftorch.nn.layers._checks import check_features, check_param_fits, check_positive, checked_param

__all__ = ["Identity", "Linear", "Bilinear"]


def init_param(layer: Layer, name: str, initializer: Initializer | None, key: Key,
               shape: tuple[int, ...], scale: float) -> Array:
    r"""``layer``'s parameter ``name``: ``initializer(key, shape)``, or by
    default ``mlx.nn``'s :math:`\mathcal{U}(-scale, scale)` in float32; a
    ``MemoryError`` naming both if it cannot fit in memory.

    >>> import ftorch.nn as nn, ftorch.random as random
    >>> from ftorch.nn.layers.linear import init_param
    >>> w = init_param(nn.Linear(100, 1), "weight", None, random.key(0), (1, 100), 0.5)
    >>> bool((abs(w) <= 0.5).all())
    True
    """
    check_param_fits(layer, name, shape)
    if initializer is None:
        initializer = initializers.uniform(-scale, scale)
    return initializer(key, shape)


def _weight_and_bias(layer: Linear | Bilinear, key: Key, shape: tuple[int, ...]) -> Params:
    r"""``layer``'s ``weight`` of ``shape`` and, with ``layer.bias``, its
    ``bias`` of ``(output_dims,)``, by default both from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{fan\_in}}` (the
    weight's last axis), as ``mlx.nn``'s."""
    scale = math.sqrt(1.0 / shape[-1])
    kw, kb = random.split(key)
    params = {"weight": init_param(layer, "weight", layer.weight_init, kw, shape, scale)}
    if layer.bias:
        params["bias"] = init_param(layer, "bias", layer.bias_init, kb, (layer.output_dims,),
                                    scale)
    return params


def linear(x: Array, weight: Array, bias: Array | None = None) -> Array:
    """``x @ weight.T + bias``, ``mlx.nn.Linear``'s map (``bias`` optional).

    >>> import mlx.core as mx
    >>> from ftorch.nn.layers.linear import linear
    >>> linear(mx.ones((2, 3)), mx.ones((4, 3)), mx.arange(4.0)).tolist()[0]
    [3.0, 4.0, 5.0, 6.0]
    """
    y = fnp.matmul(x, weight.T)
    return y if bias is None else y + bias


@dataclasses.dataclass(frozen=True)
class Identity(Layer):
    """The identity: ``y = x``. It has no parameters.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Identity()({}, mx.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """No parameters, no state."""
        return {}, {}

    def apply(self, params: Params, state: State, x: Any, *, key: Key | None = None,
              train: bool = False) -> tuple[Any, State]:
        """``(x, state)``."""
        return x, state


@dataclasses.dataclass(frozen=True)
class Linear(Layer):
    r"""An affine map of the last axis, as ``mlx.nn.Linear``:

    .. math:: y = x W^\top + b

    with ``W`` of shape ``(output_dims, input_dims)`` and ``b`` of shape
    ``(output_dims,)``, both initialised from :math:`\mathcal{U}(-k, k)`,
    :math:`k = 1/\sqrt{\text{input\_dims}}`.

    Args:
        input_dims (int): The size of the input's last axis.
        output_dims (int): The size of the output's last axis.
        bias (bool, optional): Whether to add ``b``. Default: ``True``.
        weight_init (callable, optional): An initialiser ``init(key, shape)``
            (``ftorch.nn.init``) for ``W``. Default: ``None`` (``mlx.nn``'s).
        bias_init (callable, optional): The same for ``b``. Default: ``None``.

    Params: ``{"weight": (output_dims, input_dims), "bias": (output_dims,)}``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.Linear(3, 2, bias=False, weight_init=nn.init.ones)
    >>> params, _ = layer.init(random.key(0), mx.zeros(3))
    >>> layer(params, mx.ones((5, 3)))[0].tolist()
    [3.0, 3.0]
    """

    input_dims: int
    output_dims: int
    bias: bool = True
    _: dataclasses.KW_ONLY
    weight_init: Initializer | None = None
    bias_init: Initializer | None = None

    def __post_init__(self) -> None:
        check_positive("Linear", input_dims=self.input_dims, output_dims=self.output_dims)

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        r"""``weight`` and ``bias`` (by default from :math:`\mathcal{U}(-k, k)`);
        no state."""
        check_features(self, x, self.input_dims)
        return _weight_and_bias(self, key, (self.output_dims, self.input_dims)), {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(x @ weight.T + bias, state)``."""
        check_features(self, x, self.input_dims)
        weight = checked_param(self, params, "weight", (self.output_dims, self.input_dims))
        return linear(x, weight, params["bias"] if self.bias else None), state


@dataclasses.dataclass(frozen=True)
class Bilinear(Layer):
    r"""A bilinear map of two inputs, as ``mlx.nn.Bilinear``:

    .. math:: y_i = x_2^\top W_i x_1 + b_i

    with ``W`` of shape ``(output_dims, input2_dims, input1_dims)`` and ``b``
    of shape ``(output_dims,)``, initialised from :math:`\mathcal{U}(-k, k)`,
    :math:`k = 1/\sqrt{\text{input1\_dims}}`.

    Args:
        input1_dims (int): The size of ``x1``'s last axis.
        input2_dims (int): The size of ``x2``'s last axis.
        output_dims (int): The size of the output's last axis.
        bias (bool, optional): Whether to add ``b``. Default: ``True``.
        weight_init (callable, optional): An initialiser for ``W``.
            Default: ``None`` (``mlx.nn``'s).
        bias_init (callable, optional): An initialiser for ``b``. Default: ``None``.

    ``init(key, x1, x2)``; ``apply(params, state, x1, x2)``, the leading axes
    of ``x1`` and ``x2`` broadcasting.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.Bilinear(3, 4, 2)
    >>> params, _ = layer.init(random.key(0), mx.zeros(3), mx.zeros(4))
    >>> params["weight"].shape, layer(params, mx.ones((5, 3)), mx.ones((5, 4))).shape
    ((2, 4, 3), (5, 2))
    """

    input1_dims: int
    input2_dims: int
    output_dims: int
    bias: bool = True
    _: dataclasses.KW_ONLY
    weight_init: Initializer | None = None
    bias_init: Initializer | None = None

    def __post_init__(self) -> None:
        check_positive("Bilinear", input1_dims=self.input1_dims, input2_dims=self.input2_dims,
                       output_dims=self.output_dims)

    def init(self, key: Key, x1: InputSpec, x2: InputSpec) -> tuple[Params, State]:
        r"""``weight`` and ``bias`` (by default from :math:`\mathcal{U}(-k, k)`);
        no state."""
        check_features(self, x1, self.input1_dims, "x1")
        check_features(self, x2, self.input2_dims, "x2")
        shape = (self.output_dims, self.input2_dims, self.input1_dims)
        return _weight_and_bias(self, key, shape), {}

    def apply(self, params: Params, state: State, x1: Array, x2: Array, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(einsum("...j,oij,...i->...o", x1, W, x2) + b, state)``."""
        check_features(self, x1, self.input1_dims, "x1")
        check_features(self, x2, self.input2_dims, "x2")
        weight = checked_param(self, params, "weight",
                               (self.output_dims, self.input2_dims, self.input1_dims))
        y = fnp.einsum("...j,oij,...i->...o", x1, weight, x2)
        if self.bias:
            y = y + params["bias"]
        return y, state
