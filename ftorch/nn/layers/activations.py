"""Activation layers: thin, parameter-free wrappers over
``ftorch.nn.functional`` (``mlx.nn``'s class names and arguments), plus
``PReLU`` (a learned slope) and ``Lambda`` (any function of arrays).

>>> import ftorch.nn as nn, mlx.core as mx
>>> nn.ReLU()({}, mx.array([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch.nn import functional as F
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.layers._checks import check_features, check_param_fits, check_positive

__all__ = [
    "Lambda", "ReLU", "ReLU2", "ReLU6", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU",
    "SiLU", "Mish", "Sigmoid", "LogSigmoid", "Tanh", "HardTanh", "Hardswish", "Softplus",
    "Softsign", "Softmax", "LogSoftmax", "Softmin", "GLU", "Step", "HardShrink", "Softshrink",
]


@dataclasses.dataclass(frozen=True)
class _Activation(Layer):
    """A layer without parameters applying ``self.fn`` to its input."""

    def fn(self, x: Array) -> Array:
        raise NotImplementedError

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """No parameters, no state."""
        return {}, {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(fn(x), state)``."""
        return self.fn(x), state


@dataclasses.dataclass(frozen=True)
class Lambda(_Activation):
    """A function of the input with no parameters, as a layer (``Sequential``
    wraps plain functions in it).

    Args:
        function (callable): Maps the input to the output with ftorch ops.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Lambda(lambda x: 2 * x)({}, mx.array([1.0])).tolist()
    [2.0]
    """

    function: Callable[[Array], Array]

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise TypeError(f"Lambda: function must be callable, got {self.function!r}")

    def fn(self, x: Array) -> Array:
        return self.function(x)


@dataclasses.dataclass(frozen=True)
class ReLU(_Activation):
    """``max(x, 0)``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.ReLU()({}, mx.array([-1.0, 3.0])).tolist()
    [0.0, 3.0]
    """

    def fn(self, x: Array) -> Array:
        return F.relu(x)


@dataclasses.dataclass(frozen=True)
class ReLU2(_Activation):
    """``max(x, 0) ** 2``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.ReLU2()({}, mx.array([-1.0, 3.0])).tolist()
    [0.0, 9.0]
    """

    def fn(self, x: Array) -> Array:
        return F.relu2(x)


@dataclasses.dataclass(frozen=True)
class ReLU6(_Activation):
    """``min(max(x, 0), 6)``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.ReLU6()({}, mx.array([-1.0, 3.0, 9.0])).tolist()
    [0.0, 3.0, 6.0]
    """

    def fn(self, x: Array) -> Array:
        return F.relu6(x)


@dataclasses.dataclass(frozen=True)
class LeakyReLU(_Activation):
    """``max(negative_slope * x, x)``.

    Args:
        negative_slope (float, optional): The slope for ``x < 0``. Default: ``0.01``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.LeakyReLU(0.5)({}, mx.array([-2.0, 3.0])).tolist()
    [-1.0, 3.0]
    """

    negative_slope: float = 0.01

    def fn(self, x: Array) -> Array:
        return F.leaky_relu(x, self.negative_slope)


@dataclasses.dataclass(frozen=True)
class PReLU(Layer):
    """``max(0, x) + a * min(0, x)`` with a learned slope ``a`` (parameter
    ``weight`` of shape ``(num_parameters,)``, broadcast against the last
    axis), as ``mlx.nn.PReLU``.

    Args:
        num_parameters (int, optional): The number of slopes (1, or the size
            of the last axis). Default: ``1``.
        init_value (float, optional): The initial slope (``mlx.nn.PReLU``'s
            ``init``, renamed: ``init`` is the layer's method). Default: ``0.25``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.PReLU()
    >>> params, _ = layer.init(random.key(0), mx.zeros(2))
    >>> layer(params, mx.array([-4.0, 2.0])).tolist()
    [-1.0, 2.0]
    """

    num_parameters: int = 1
    init_value: float = 0.25

    def __post_init__(self) -> None:
        check_positive("PReLU", num_parameters=self.num_parameters)

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """``weight`` filled with ``init_value``; no state."""
        if self.num_parameters > 1:
            check_features(self, x, self.num_parameters)
        check_param_fits(self, "weight", (self.num_parameters,))
        return {"weight": mx.full((self.num_parameters,), self.init_value, mx.float32)}, {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(max(0, x) + weight * min(0, x), state)``."""
        if self.num_parameters > 1:
            check_features(self, x, self.num_parameters)
        return F.prelu(x, params["weight"]), state


@dataclasses.dataclass(frozen=True)
class ELU(_Activation):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``.

    Args:
        alpha (float, optional): The scale for ``x < 0``. Default: ``1.0``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.ELU()({}, mx.array([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """

    alpha: float = 1.0

    def fn(self, x: Array) -> Array:
        return F.elu(x, self.alpha)


@dataclasses.dataclass(frozen=True)
class CELU(_Activation):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha (float, optional): The scale for ``x < 0``. Default: ``1.0``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.CELU()({}, mx.array([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """

    alpha: float = 1.0

    def fn(self, x: Array) -> Array:
        return F.celu(x, self.alpha)


@dataclasses.dataclass(frozen=True)
class SELU(_Activation):
    """``scale * elu(x, alpha)``, the scaled ELU, with the exact constants
    ``alpha = 1.6732632...`` and ``scale = 1.0507009...`` (``mlx.nn.SELU``
    rounds them to 1.67326 and 1.0507: a difference of about 1e-6).

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> [round(v, 4) for v in nn.SELU()({}, mx.array([0.0, 1.0])).tolist()]
    [0.0, 1.0507]
    """

    def fn(self, x: Array) -> Array:
        return F.selu(x)


_GELU_APPROXIMATIONS = ("none", "precise", "tanh", "fast")


@dataclasses.dataclass(frozen=True)
class GELU(_Activation):
    r"""The Gaussian error linear unit ``x * Phi(x)``, as ``mlx.nn.GELU``.

    Args:
        approx (str, optional): ``"none"`` (exact), ``"precise"`` or its
            alias ``"tanh"`` (the tanh approximation), ``"fast"``
            (``x * sigmoid(1.702 * x)``). Default: ``"none"``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> x = mx.array(1.0)
    >>> round(nn.GELU()({}, x).item(), 4), round(nn.GELU("fast")({}, x).item(), 4)
    (0.8413, 0.8458)
    """

    approx: str = "none"

    def __post_init__(self) -> None:
        if self.approx not in _GELU_APPROXIMATIONS:
            raise ValueError(f"GELU: approx must be one of {_GELU_APPROXIMATIONS}, "
                             f"got {self.approx!r}")

    def fn(self, x: Array) -> Array:
        if self.approx == "none":
            return F.gelu(x)
        if self.approx == "fast":
            return F.gelu_fast_approx(x)
        return F.gelu_approx(x)


@dataclasses.dataclass(frozen=True)
class SiLU(_Activation):
    """``x * sigmoid(x)`` (swish).

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.SiLU()({}, mx.array([0.0])).tolist()
    [0.0]
    """

    def fn(self, x: Array) -> Array:
        return F.silu(x)


@dataclasses.dataclass(frozen=True)
class Mish(_Activation):
    """``x * tanh(softplus(x))``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Mish()({}, mx.array([0.0])).tolist()
    [0.0]
    """

    def fn(self, x: Array) -> Array:
        return F.mish(x)


@dataclasses.dataclass(frozen=True)
class Sigmoid(_Activation):
    """``1 / (1 + exp(-x))``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Sigmoid()({}, mx.array([0.0])).tolist()
    [0.5]
    """

    def fn(self, x: Array) -> Array:
        return F.sigmoid(x)


@dataclasses.dataclass(frozen=True)
class LogSigmoid(_Activation):
    """``log(sigmoid(x)) = -softplus(-x)``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> round(nn.LogSigmoid()({}, mx.array(0.0)).item(), 4)
    -0.6931
    """

    def fn(self, x: Array) -> Array:
        return F.log_sigmoid(x)


@dataclasses.dataclass(frozen=True)
class Tanh(_Activation):
    """``tanh(x)``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Tanh()({}, mx.array([0.0])).tolist()
    [0.0]
    """

    def fn(self, x: Array) -> Array:
        return F.tanh(x)


@dataclasses.dataclass(frozen=True)
class HardTanh(_Activation):
    """``min(max(x, min_val), max_val)``.

    Args:
        min_val (float, optional): The lower bound. Default: ``-1.0``.
        max_val (float, optional): The upper bound. Default: ``1.0``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.HardTanh()({}, mx.array([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """

    min_val: float = -1.0
    max_val: float = 1.0

    def fn(self, x: Array) -> Array:
        return F.hard_tanh(x, self.min_val, self.max_val)


@dataclasses.dataclass(frozen=True)
class Hardswish(_Activation):
    """``x * min(max(x + 3, 0), 6) / 6``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Hardswish()({}, mx.array([-4.0, 0.0, 4.0])).tolist()
    [-0.0, 0.0, 4.0]
    """

    def fn(self, x: Array) -> Array:
        return F.hardswish(x)


@dataclasses.dataclass(frozen=True)
class Softplus(_Activation):
    """``log(1 + exp(x))``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> round(nn.Softplus()({}, mx.array(0.0)).item(), 4)
    0.6931
    """

    def fn(self, x: Array) -> Array:
        return F.softplus(x)


@dataclasses.dataclass(frozen=True)
class Softsign(_Activation):
    """``x / (1 + |x|)``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Softsign()({}, mx.array([1.0, -3.0])).tolist()
    [0.5, -0.75]
    """

    def fn(self, x: Array) -> Array:
        return F.softsign(x)


@dataclasses.dataclass(frozen=True)
class Softmax(_Activation):
    """``exp(x) / sum(exp(x))`` over ``axis``.

    Args:
        axis (int, optional): The axis to normalise. Default: ``-1``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Softmax()({}, mx.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """

    axis: int = -1

    def fn(self, x: Array) -> Array:
        return F.softmax(x, self.axis)


@dataclasses.dataclass(frozen=True)
class LogSoftmax(_Activation):
    """``x - logsumexp(x)`` over ``axis``.

    Args:
        axis (int, optional): The axis to normalise. Default: ``-1``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> round(nn.LogSoftmax()({}, mx.array([0.0, 0.0]))[0].item(), 4)
    -0.6931
    """

    axis: int = -1

    def fn(self, x: Array) -> Array:
        return F.log_softmax(x, self.axis)


@dataclasses.dataclass(frozen=True)
class Softmin(_Activation):
    """``softmax(-x)`` over ``axis``.

    Args:
        axis (int, optional): The axis to normalise. Default: ``-1``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Softmin()({}, mx.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """

    axis: int = -1

    def fn(self, x: Array) -> Array:
        return F.softmin(x, self.axis)


@dataclasses.dataclass(frozen=True)
class GLU(_Activation):
    """The gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the two
    halves of ``x`` along ``axis``.

    Args:
        axis (int, optional): The axis to split. Default: ``-1``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.GLU()({}, mx.array([2.0, 0.0])).tolist()
    [1.0]
    """

    axis: int = -1

    def fn(self, x: Array) -> Array:
        return F.glu(x, self.axis)


@dataclasses.dataclass(frozen=True)
class Step(_Activation):
    """``1`` where ``x >= threshold``, else ``0`` (integers, as ``mlx.nn.Step``).

    Args:
        threshold (float, optional): The threshold. Default: ``0.0``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Step()({}, mx.array([-1.0, 0.0, 2.0])).tolist()
    [0, 1, 1]
    """

    threshold: float = 0.0

    def fn(self, x: Array) -> Array:
        return F.step(x, self.threshold)


@dataclasses.dataclass(frozen=True)
class HardShrink(_Activation):
    """``x`` where ``|x| > lambd``, else ``0``.

    Args:
        lambd (float, optional): The threshold. Default: ``0.5``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.HardShrink()({}, mx.array([-1.0, 0.2, 2.0])).tolist()
    [-1.0, 0.0, 2.0]
    """

    lambd: float = 0.5

    def fn(self, x: Array) -> Array:
        return F.hard_shrink(x, self.lambd)


@dataclasses.dataclass(frozen=True)
class Softshrink(_Activation):
    """``x - sign(x) * lambd`` where ``|x| > lambd``, else ``0``.

    Args:
        lambd (float, optional): The threshold. Default: ``0.5``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.Softshrink()({}, mx.array([-1.0, 0.2, 2.0])).tolist()
    [-0.5, 0.0, 1.5]
    """

    lambd: float = 0.5

    def fn(self, x: Array) -> Array:
        return F.softshrink(x, self.lambd)


def as_layer(f: Any) -> Layer:
    """``f`` if it is a ``Layer``, else ``Lambda(f)`` (a plain function)."""
    if isinstance(f, Layer):
        return f
    if callable(f):
        return Lambda(f)
    raise TypeError(f"expected a Layer or a function, got {type(f).__name__}: {f!r}")
