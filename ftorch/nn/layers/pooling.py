"""Pooling layers, channels-last as ``mlx.nn``: ``MaxPool1d``,
``MaxPool2d``, ``AvgPool1d``, ``AvgPool2d``. They have no parameters.

>>> import ftorch.nn as nn, mlx.core as mx
>>> nn.MaxPool2d(2)({}, mx.arange(16.0).reshape(1, 4, 4, 1)).squeeze().tolist()
[[5.0, 7.0], [13.0, 15.0]]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar

from ftorch.nn import _conv
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.layers._checks import check_spatial, ntuple
from ftorch.nn.layers.conv import batched

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d"]


@dataclasses.dataclass(frozen=True)
class _Pool(Layer):
    """The pooling layers' fields and code; each subclass sets ``nd``, the
    number of spatial axes, and ``op``, its ``ftorch.nn._conv`` function."""

    kernel_size: int | tuple[int, ...]
    stride: int | tuple[int, ...] | None = None
    padding: int | tuple[int, ...] = 0

    nd: ClassVar[int]
    op: ClassVar[Callable[..., Array]]

    def __post_init__(self) -> None:
        name = type(self).__name__
        kernel = ntuple(self.kernel_size, self.nd, "kernel_size", name)
        stride = kernel if self.stride is None else ntuple(self.stride, self.nd, "stride", name)
        padding = ntuple(self.padding, self.nd, "padding", name)
        if min(kernel) < 1 or min(stride) < 1:
            raise ValueError(f"{name}: kernel_size and stride must be positive, got "
                             f"{self.kernel_size!r}, {self.stride!r}")
        if min(padding) < 0:
            raise ValueError(f"{name}: padding must not be negative, got {self.padding!r}")
        for f, value in (("kernel_size", kernel), ("stride", stride), ("padding", padding)):
            object.__setattr__(self, f, value[0] if self.nd == 1 else value)

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """No parameters, no state."""
        check_spatial(self, x, self.nd, None)
        return {}, {}

    def _pool(self, x: Array) -> Array:
        return self.op(x, self.kernel_size, self.stride, self.padding)

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(pooled x, state)``."""
        check_spatial(self, x, self.nd, None)
        return batched(self._pool, x, self.nd), state


_POOL_ARGS = """
    Args:
        kernel_size (int or tuple): The window's size.
        stride (int or tuple, optional): The step between windows.
            Default: ``kernel_size``.
        padding (int or tuple, optional): Padding on both sides of each
            spatial axis ({pad}). Default: ``0``.
"""


class MaxPool1d(_Pool):
    __doc__ = """The maximum over windows along ``L`` of ``(N, L, C)``, as
    ``mlx.nn.MaxPool1d``.
""" + _POOL_ARGS.format(pad="``-inf``") + """
    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.MaxPool1d(2)({}, mx.array([[[1.0], [3.0], [2.0], [0.0]]])).ravel().tolist()
    [3.0, 2.0]
    """

    nd = 1
    op = staticmethod(_conv.max_pool1d)


class MaxPool2d(_Pool):
    __doc__ = """The maximum over windows of ``(N, H, W, C)``, as
    ``mlx.nn.MaxPool2d``.
""" + _POOL_ARGS.format(pad="``-inf``") + """
    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.MaxPool2d(2, stride=1)({}, mx.ones((1, 3, 3, 2))).shape
    (1, 2, 2, 2)
    """

    nd = 2
    op = staticmethod(_conv.max_pool2d)


class AvgPool1d(_Pool):
    __doc__ = """The mean over windows along ``L`` of ``(N, L, C)``, as
    ``mlx.nn.AvgPool1d`` (padded zeros count in the mean).
""" + _POOL_ARGS.format(pad="zeros") + """
    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.AvgPool1d(2)({}, mx.array([[[1.0], [3.0], [2.0], [0.0]]])).ravel().tolist()
    [2.0, 1.0]
    """

    nd = 1
    op = staticmethod(_conv.avg_pool1d)


class AvgPool2d(_Pool):
    __doc__ = """The mean over windows of ``(N, H, W, C)``, as ``mlx.nn.AvgPool2d``
    (padded zeros count in the mean).
""" + _POOL_ARGS.format(pad="zeros") + """
    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.AvgPool2d(2)({}, mx.arange(16.0).reshape(4, 4, 1)).squeeze().tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """

    nd = 2
    op = staticmethod(_conv.avg_pool2d)
