"""Dropout layers: ``Dropout`` (entries), ``Dropout2d`` and ``Dropout3d``
(whole channels), with an explicit key in training.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> drop = nn.Dropout(0.5)
>>> drop({}, mx.ones(4)).tolist()  # evaluation: the identity
[1.0, 1.0, 1.0, 1.0]
>>> sorted(set(drop({}, mx.ones(100), key=random.key(0), train=True).tolist()))
[0.0, 2.0]
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import ftorch.numpy as fnp
import ftorch.random as random
from ftorch.nn import functional as F
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.layers._checks import check_key, check_ndim

__all__ = ["Dropout", "Dropout2d", "Dropout3d"]


@dataclasses.dataclass(frozen=True)
class _DropoutBase(Layer):
    p: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.p, bool) or not isinstance(self.p, (int, float)) or not (
                0 <= self.p < 1):
            raise ValueError(f"{type(self).__name__}: the dropout probability p must be in "
                             f"[0, 1), got {self.p!r}")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """No parameters, no state."""
        return {}, {}

    def _checked_key(self, key: Key | None) -> Key:
        if key is None:
            raise ValueError(
                f"{self!r} needs a key in training: apply(..., train=True, "
                f"key=ftorch.random.key(seed)) (a container passes its children keys derived "
                f"from its own; pass train=False for evaluation)")
        check_key(key, f"{type(self).__name__}.apply")
        return key


@dataclasses.dataclass(frozen=True)
class Dropout(_DropoutBase):
    r"""Zeroes each entry with probability ``p`` in training, scaling the
    others by :math:`1/(1-p)` (the expectation is unchanged), as
    ``mlx.nn.Dropout``; the identity in evaluation (``train=False``).

    The mask comes from ``key``, required when ``train=True``: the same key
    gives the same mask (``ftorch.nn.functional.dropout``).

    Args:
        p (float, optional): The probability of zeroing an entry, in
            ``[0, 1)``. Default: ``0.5``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> drop, x = nn.Dropout(0.25), mx.ones(8)
    >>> a = drop({}, x, key=random.key(1), train=True)
    >>> bool(mx.all(a == drop({}, x, key=random.key(1), train=True)))
    True
    """

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(x * mask / (1 - p), state)`` in training, else ``(x, state)``."""
        if not train or self.p == 0:
            return x, state
        return F.dropout(x, self.p, key=self._checked_key(key)), state


@dataclasses.dataclass(frozen=True)
class _ChannelDropout(_DropoutBase):
    """Zeroes whole channels (the last axis) in training: one draw per
    example and channel, shared over the ``nd`` spatial axes before it."""

    nd: ClassVar[int]
    layout: ClassVar[str]  # the input's layouts, for errors

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(x with channels dropped, state)`` in training, else ``(x, state)``."""
        check_ndim(self, x, (self.nd + 1, self.nd + 2), self.layout)
        if not train or self.p == 0:
            return x, state
        shape = list(x.shape)
        for i in range(2, self.nd + 2):
            shape[-i] = 1
        keep = 1.0 - self.p
        mask = random.bernoulli(self._checked_key(key), keep, tuple(shape))
        return fnp.where(mask, x / keep, 0), state


class Dropout2d(_ChannelDropout):
    r"""Zeroes whole channels with probability ``p`` in training, as
    ``mlx.nn.Dropout2d``: the input is channels-last, ``NHWC`` or ``HWC``;
    the kept channels are scaled by :math:`1/(1-p)`.

    Args:
        p (float, optional): The probability of zeroing a channel. Default: ``0.5``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> y = nn.Dropout2d()({}, mx.ones((2, 4, 4, 3)), key=random.key(0), train=True)
    >>> bool(mx.all(y.min(axis=(1, 2)) == y.max(axis=(1, 2))))  # constant per channel
    True
    """

    nd, layout = 2, "NHWC or HWC"


class Dropout3d(_ChannelDropout):
    r"""Zeroes whole channels with probability ``p`` in training, as
    ``mlx.nn.Dropout3d``: the input is channels-last, ``NDHWC`` or ``DHWC``.

    Args:
        p (float, optional): The probability of zeroing a channel. Default: ``0.5``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> nn.Dropout3d()({}, mx.ones((2, 2, 2, 2, 3)), key=random.key(0), train=True).shape
    (2, 2, 2, 2, 3)
    """

    nd, layout = 3, "NDHWC or DHWC"
