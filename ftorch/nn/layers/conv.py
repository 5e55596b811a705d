"""Convolution layers, channels-last as ``mlx.nn``: ``Conv1d``, ``Conv2d``,
``Conv3d``, ``ConvTranspose1d``, ``ConvTranspose2d``, ``ConvTranspose3d``.

Inputs are ``(N, *spatial, C_in)``, or one example ``(*spatial, C_in)``
(so a layer applies unchanged under ``ft.vmap`` over examples); weights are
``(C_out, *kernel, C_in // groups)``, as ``mlx.nn``'s.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
>>> params, _ = conv.init(random.key(0), mx.zeros((1, 16, 16, 3)))
>>> params["weight"].shape, conv(params, mx.ones((2, 16, 16, 3))).shape
((8, 3, 3, 3), (2, 16, 16, 8))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import ClassVar

import ftorch.numpy as fnp
import ftorch.random as random
from ftorch.nn import _conv
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.init import Initializer
from ftorch.nn.layers._checks import (
    check_param_fits,
    check_positive,
    check_spatial,
    checked_param,
    ntuple,
)
from ftorch.nn.layers.linear import init_param

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
]


def batched(fn: Callable[[Array], Array], x: Array, nd: int) -> Array:
    """``fn`` (which needs ``(N, *spatial, C)``, ``nd`` spatial axes) on ``x``
    with or without its batch axis, so a layer applies to one example (as
    under ``ft.vmap``) as to a batch."""
    if x.ndim == nd + 1:
        return fnp.squeeze(fn(fnp.expand_dims(x, 0)), 0)
    return fn(x)


@dataclasses.dataclass(frozen=True)
class _ConvNd(Layer):
    """The shared code and leading fields of the convolutions; each subclass
    adds the rest in ``mlx.nn``'s positional order (the extras keyword-only)
    and sets ``nd``, the number of spatial axes, and ``op``, its
    ``ftorch.nn._conv`` function."""

    in_channels: int
    out_channels: int
    kernel_size: int | tuple[int, ...]
    stride: int | tuple[int, ...] = 1
    padding: int | tuple[int, ...] = 0
    dilation: int | tuple[int, ...] = 1

    # The subclasses add the fields groups, bias, weight_init and bias_init,
    # and set the number of spatial axes and the convolution.
    nd: ClassVar[int]
    op: ClassVar[Callable[..., Array]]

    def __post_init__(self) -> None:
        name, nd = type(self).__name__, self.nd
        check_positive(name, in_channels=self.in_channels, out_channels=self.out_channels,
                       groups=self.groups)
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"{name}: in_channels={self.in_channels} and out_channels="
                             f"{self.out_channels} must be divisible by groups={self.groups}")
        norm = {f: ntuple(getattr(self, f), nd, f, name) for f in self._tuple_fields()}
        for f, value in norm.items():
            object.__setattr__(self, f, value[0] if nd == 1 else value)
        for f in ("kernel_size", "stride", "dilation"):
            if min(norm[f]) < 1:
                raise ValueError(f"{name}: {f} must be positive, got {getattr(self, f)!r}")
        # Not a field: apply compares the weight with it.
        object.__setattr__(self, "_weight_shape", (self.out_channels, *norm["kernel_size"],
                                                   self.in_channels // self.groups))

    def _tuple_fields(self) -> tuple[str, ...]:
        return ("kernel_size", "stride", "padding", "dilation")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        r"""``weight`` ``(out_channels, *kernel_size, in_channels // groups)``
        from :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{\text{fan\_in}}`
        (``fan_in = in_channels // groups * prod(kernel_size)``), and ``bias``
        (zeros), as ``mlx.nn``; no state."""
        check_spatial(self, x, self.nd, self.in_channels)
        shape = self._weight_shape
        fan_in = math.prod(shape[1:])
        kw, kb = random.split(key)
        params = {"weight": init_param(self, "weight", self.weight_init, kw, shape,
                                       math.sqrt(1 / fan_in))}
        if self.bias:
            check_param_fits(self, "bias", (self.out_channels,))
            bias_init = self.bias_init or (lambda k, s: fnp.zeros(s))
            params["bias"] = bias_init(kb, (self.out_channels,))
        return params, {}

    def _conv(self, x: Array, weight: Array) -> Array:
        return self.op(x, weight, self.stride, self.padding, self.dilation, self.groups)

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(conv(x, weight) + bias, state)``."""
        check_spatial(self, x, self.nd, self.in_channels)
        weight = checked_param(self, params, "weight", self._weight_shape)
        y = batched(lambda v: self._conv(v, weight), x, self.nd)
        if self.bias:
            y = y + params["bias"]
        return y, state


_CONV_ARGS = """
    Args:
        in_channels (int): The input's channels ``C_in`` (its last axis).
        out_channels (int): The output's channels ``C_out``.
        kernel_size (int or tuple): The size of the filters.
        stride (int or tuple, optional): The step between windows. Default: ``1``.
        padding (int or tuple, optional): Zeros added on both sides of each
            spatial axis. Default: ``0``.
        dilation (int or tuple, optional): The spacing of the kernel's taps.
            Default: ``1``.
        groups (int, optional): Channel groups: each output channel sees
            ``C_in // groups`` input channels. Default: ``1``.
        bias (bool, optional): Whether to add a learned ``bias``. Default: ``True``.
        weight_init (callable, optional): An initialiser ``init(key, shape)``
            for ``weight``. Default: ``None`` (``mlx.nn``'s uniform).
        bias_init (callable, optional): The same for ``bias``. Default:
            ``None`` (zeros).
"""


@dataclasses.dataclass(frozen=True)
class _GroupedConv(_ConvNd):
    """``Conv1d`` and ``Conv2d``'s fields after ``dilation``: ``groups`` then
    ``bias``, positional, as ``mlx.nn``'s."""

    groups: int = 1
    bias: bool = True
    _: dataclasses.KW_ONLY
    weight_init: Initializer | None = None
    bias_init: Initializer | None = None


class Conv1d(_GroupedConv):
    __doc__ = r"""A 1-d convolution (cross-correlation) over ``(N, L, C_in)``,
    as ``mlx.nn.Conv1d``: :math:`y = \mathrm{conv1d}(x, W) + b`, ``W`` of
    shape ``(C_out, K, C_in // groups)``.
""" + _CONV_ARGS + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> conv = nn.Conv1d(2, 4, 3, stride=2)
    >>> params, _ = conv.init(random.key(0), mx.zeros((1, 9, 2)))
    >>> conv(params, mx.ones((1, 9, 2))).shape
    (1, 4, 4)
    """

    nd = 1
    op = staticmethod(_conv.conv1d)


class Conv2d(_GroupedConv):
    __doc__ = r"""A 2-d convolution over ``(N, H, W, C_in)``, as
    ``mlx.nn.Conv2d``: ``W`` of shape ``(C_out, KH, KW, C_in // groups)``.
""" + _CONV_ARGS + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> conv = nn.Conv2d(4, 8, (3, 1), groups=2)
    >>> params, _ = conv.init(random.key(0), mx.zeros((5, 5, 4)))
    >>> params["weight"].shape, conv(params, mx.ones((5, 5, 4))).shape
    ((8, 3, 1, 2), (3, 5, 8))
    """

    nd = 2
    op = staticmethod(_conv.conv2d)


@dataclasses.dataclass(frozen=True)
class Conv3d(_ConvNd):
    __doc__ = r"""A 3-d convolution over ``(N, D, H, W, C_in)``, as
    ``mlx.nn.Conv3d``: ``W`` of shape ``(C_out, KD, KH, KW, C_in)`` (MLX
    has no grouped 3-d convolution: ``groups`` must be 1).
""" + _CONV_ARGS + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> conv = nn.Conv3d(2, 3, 2)
    >>> params, _ = conv.init(random.key(0), mx.zeros((1, 4, 4, 4, 2)))
    >>> conv(params, mx.ones((1, 4, 4, 4, 2))).shape
    (1, 3, 3, 3, 3)
    """

    bias: bool = True
    _: dataclasses.KW_ONLY
    groups: int = 1
    weight_init: Initializer | None = None
    bias_init: Initializer | None = None

    nd = 3
    op = staticmethod(_conv.conv3d)


_TRANSPOSE_ARGS = _CONV_ARGS + """\
        output_padding (int or tuple, optional): Extra positions added to
            one side of the output. Default: ``0``.
"""


@dataclasses.dataclass(frozen=True)
class _ConvTransposeNd(_ConvNd):
    """The transposed convolutions' fields after ``dilation``:
    ``output_padding`` and ``bias``, then ``groups`` keyword-only."""

    output_padding: int | tuple[int, ...] = 0
    bias: bool = True
    _: dataclasses.KW_ONLY
    groups: int = 1
    weight_init: Initializer | None = None
    bias_init: Initializer | None = None

    def _tuple_fields(self) -> tuple[str, ...]:
        return ("kernel_size", "stride", "padding", "dilation", "output_padding")

    def _conv(self, x: Array, weight: Array) -> Array:
        return self.op(x, weight, self.stride, self.padding, self.dilation, self.output_padding,
                       self.groups)


class ConvTranspose1d(_ConvTransposeNd):
    __doc__ = r"""A 1-d transposed convolution over ``(N, L, C_in)``, as
    ``mlx.nn.ConvTranspose1d`` (plus ``groups``): ``W`` of shape
    ``(C_out, K, C_in // groups)``; the output has
    ``(L - 1) * stride - 2 * padding + dilation * (K - 1) + 1 + output_padding``
    positions.
""" + _TRANSPOSE_ARGS + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> up = nn.ConvTranspose1d(2, 4, 3, stride=2)
    >>> params, _ = up.init(random.key(0), mx.zeros((1, 5, 2)))
    >>> up(params, mx.ones((1, 5, 2))).shape
    (1, 11, 4)
    """

    nd = 1
    op = staticmethod(_conv.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    __doc__ = r"""A 2-d transposed convolution over ``(N, H, W, C_in)``, as
    ``mlx.nn.ConvTranspose2d`` (plus ``groups``): ``W`` of shape
    ``(C_out, KH, KW, C_in // groups)``.
""" + _TRANSPOSE_ARGS + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> up = nn.ConvTranspose2d(3, 2, 2, stride=2)
    >>> params, _ = up.init(random.key(0), mx.zeros((1, 4, 4, 3)))
    >>> up(params, mx.ones((1, 4, 4, 3))).shape
    (1, 8, 8, 2)
    """

    nd = 2
    op = staticmethod(_conv.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    __doc__ = r"""A 3-d transposed convolution over ``(N, D, H, W, C_in)``, as
    ``mlx.nn.ConvTranspose3d``: ``W`` of shape ``(C_out, KD, KH, KW, C_in)``
    (``groups`` must be 1).
""" + _TRANSPOSE_ARGS + """
    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> up = nn.ConvTranspose3d(2, 2, 2, stride=2)
    >>> params, _ = up.init(random.key(0), mx.zeros((1, 2, 2, 2, 2)))
    >>> up(params, mx.ones((1, 2, 2, 2, 2))).shape
    (1, 4, 4, 4, 2)
    """

    nd = 3
    op = staticmethod(_conv.conv_transpose3d)
