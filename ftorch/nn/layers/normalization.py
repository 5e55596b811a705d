"""Normalisation layers: ``LayerNorm``, ``RMSNorm``, ``GroupNorm``,
``InstanceNorm`` and ``BatchNorm`` (whose running statistics are its state),
with ``mlx.nn``'s arguments, parameter names and channels-last layouts.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> bn = nn.BatchNorm(3)
>>> params, state = bn.init(random.key(0), mx.zeros((8, 3)))
>>> sorted(params), sorted(state)
(['bias', 'weight'], ['running_mean', 'running_var'])
"""

from __future__ import annotations

import dataclasses

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.nn import functional as F
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State, layer_error
from ftorch.nn.layers._checks import check_features, check_param_fits, check_positive, shape_of

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm", "BatchNorm"]


def _check_eps(owner: str, eps: float) -> None:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps <= 0:
        raise ValueError(f"{owner}: eps must be positive, got {eps!r}")


def _affine_params(layer: Layer, dims: int, bias: bool = True) -> Params:
    check_param_fits(layer, "weight", (dims,))
    params = {"weight": mx.ones((dims,))}
    if bias:
        params["bias"] = mx.zeros((dims,))
    return params


class _OverChannels(Layer):
    """The checks of the normalisations of ``dims`` channels (the last axis)
    with an ``eps``."""

    dims: int
    eps: float

    def __post_init__(self) -> None:
        check_positive(type(self).__name__, dims=self.dims)
        _check_eps(type(self).__name__, self.eps)


def _check_batched(layer: Layer, x: InputSpec) -> None:
    if len(shape_of(x)) < 2:
        raise layer_error(layer, f"the input must be (N, ..., C), got shape "
                          f"{tuple(shape_of(x))}")


@dataclasses.dataclass(frozen=True)
class LayerNorm(_OverChannels):
    r"""Layer normalisation over the last axis, as ``mlx.nn.LayerNorm``:

    .. math:: y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \gamma + \beta

    with ``weight`` :math:`\gamma` (ones) and ``bias`` :math:`\beta` (zeros)
    of shape ``(dims,)``.

    Args:
        dims (int): The size of the last axis.
        eps (float, optional): Added to the variance. Default: ``1e-5``.
        affine (bool, optional): Whether to learn :math:`\gamma` and
            :math:`\beta`. Default: ``True``.
        bias (bool, optional): Whether to learn :math:`\beta` (with
            ``affine``). Default: ``True``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> ln = nn.LayerNorm(3)
    >>> params, _ = ln.init(random.key(0), mx.zeros(3))
    >>> [round(v, 3) for v in ln(params, mx.array([1.0, 2.0, 3.0])).tolist()]
    [-1.225, 0.0, 1.225]
    """

    dims: int
    eps: float = 1e-5
    affine: bool = True
    bias: bool = True

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """``weight`` (ones) and ``bias`` (zeros) if ``affine``; no state."""
        check_features(self, x, self.dims)
        return (_affine_params(self, self.dims, self.bias) if self.affine else {}), {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(layer_norm(x, weight, bias, eps), state)``."""
        check_features(self, x, self.dims)
        weight = params["weight"] if self.affine else None
        bias = params["bias"] if self.affine and self.bias else None
        return F.layer_norm(x, weight, bias, self.eps), state


@dataclasses.dataclass(frozen=True)
class RMSNorm(_OverChannels):
    r"""Root-mean-square normalisation over the last axis, as ``mlx.nn.RMSNorm``:

    .. math:: y = \frac{x}{\sqrt{E[x^2] + \epsilon}} \gamma

    with ``weight`` :math:`\gamma` (ones) of shape ``(dims,)``; the mean of
    squares is accumulated in float32.

    Args:
        dims (int): The size of the last axis.
        eps (float, optional): Added to the mean of squares. Default: ``1e-5``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> rms = nn.RMSNorm(2, eps=1e-12)
    >>> params, _ = rms.init(random.key(0), mx.zeros(2))
    >>> [round(v, 3) for v in rms(params, mx.array([3.0, -4.0])).tolist()]
    [0.849, -1.131]
    """

    dims: int
    eps: float = 1e-5

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """``weight`` (ones); no state."""
        check_features(self, x, self.dims)
        check_param_fits(self, "weight", (self.dims,))
        return {"weight": mx.ones((self.dims,))}, {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(rms_norm(x, weight, eps), state)``."""
        check_features(self, x, self.dims)
        return F.rms_norm(x, params["weight"], self.eps), state


@dataclasses.dataclass(frozen=True)
class GroupNorm(_OverChannels):
    r"""Group normalisation, as ``mlx.nn.GroupNorm``: the ``dims`` channels
    (last axis) of each example are split into ``num_groups`` groups, each
    standardised over its channels and every spatial position:

    .. math:: y = \frac{x - E_g[x]}{\sqrt{Var_g[x] + \epsilon}} \gamma + \beta

    By default the groups are MLX's (channel ``c`` in group ``c % num_groups``);
    ``pytorch_compatible=True`` takes PyTorch's consecutive groups.

    Args:
        num_groups (int): The number of groups; it divides ``dims``.
        dims (int): The number of channels (the last axis).
        eps (float, optional): Added to the variance. Default: ``1e-5``.
        affine (bool, optional): Whether to learn per-channel ``weight`` and
            ``bias``. Default: ``True``.
        pytorch_compatible (bool, optional): PyTorch's grouping. Default: ``False``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> gn = nn.GroupNorm(2, 4, eps=1e-12, pytorch_compatible=True)
    >>> params, _ = gn.init(random.key(0), mx.zeros((1, 4)))
    >>> gn(params, mx.array([[1.0, 3.0, 10.0, 30.0]])).tolist()
    [[-1.0, 1.0, -1.0, 1.0]]
    """

    num_groups: int
    dims: int
    eps: float = 1e-5
    affine: bool = True
    pytorch_compatible: bool = False

    def __post_init__(self) -> None:
        check_positive("GroupNorm", num_groups=self.num_groups)
        super().__post_init__()
        if self.dims % self.num_groups:
            raise ValueError(f"GroupNorm: dims={self.dims} must be divisible by "
                             f"num_groups={self.num_groups}")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """``weight`` (ones) and ``bias`` (zeros) if ``affine``; no state."""
        check_features(self, x, self.dims)
        _check_batched(self, x)
        return (_affine_params(self, self.dims) if self.affine else {}), {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(group_norm(x) * weight + bias, state)``."""
        check_features(self, x, self.dims)
        _check_batched(self, x)
        weight, bias = (params["weight"], params["bias"]) if self.affine else (None, None)
        if self.pytorch_compatible:
            return F.group_norm(x, self.num_groups, weight, bias, self.eps), state
        # MLX's grouping: channel c in group c % g, so the group is the last
        # axis of (N, rest, C // g, g).
        g, shape = self.num_groups, tuple(x.shape)
        grouped = fnp.reshape(x, (shape[0], -1, shape[-1] // g, g))
        mean = fnp.mean(grouped, (1, 2), keepdims=True)
        var = fnp.var(grouped, (1, 2), keepdims=True)
        y = fnp.reshape((grouped - mean) * fnp.rsqrt(var + self.eps), shape)
        return (y if weight is None else y * weight + bias), state


@dataclasses.dataclass(frozen=True)
class InstanceNorm(_OverChannels):
    r"""Instance normalisation, as ``mlx.nn.InstanceNorm``: each example's
    channel (last axis) standardised over the spatial axes of ``(N, ..., C)``:

    .. math:: y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \gamma + \beta

    Args:
        dims (int): The number of channels.
        eps (float, optional): Added to the variance. Default: ``1e-5``.
        affine (bool, optional): Whether to learn ``weight`` and ``bias``.
            Default: ``False``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> inorm = nn.InstanceNorm(1, eps=1e-12)
    >>> params, _ = inorm.init(random.key(0), mx.zeros((1, 2, 1)))
    >>> inorm(params, mx.array([[[1.0], [3.0]]])).tolist()
    [[[-1.0], [1.0]]]
    """

    dims: int
    eps: float = 1e-5
    affine: bool = False

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """``weight`` (ones) and ``bias`` (zeros) if ``affine``; no state."""
        check_features(self, x, self.dims)
        return (_affine_params(self, self.dims) if self.affine else {}), {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(instance_norm(x, weight, bias, eps), state)``."""
        check_features(self, x, self.dims)
        weight, bias = (params["weight"], params["bias"]) if self.affine else (None, None)
        return F.instance_norm(x, weight, bias, self.eps), state


@dataclasses.dataclass(frozen=True)
class BatchNorm(Layer):
    r"""Batch normalisation, as ``mlx.nn.BatchNorm``, over channels-last
    inputs ``NC``, ``NLC`` or ``NHWC`` (statistics over every axis but the
    last):

    .. math:: y = \frac{x - E[x]}{\sqrt{Var[x] + \epsilon}} \gamma + \beta

    In training (``train=True``) the batch's own mean and (biased) variance
    are used, and the running statistics in the state are updated:
    ``running = (1 - momentum) * running + momentum * batch`` (the unbiased
    variance, as MLX), with no gradient through them. In evaluation the
    running statistics are used (the batch's if ``track_running_stats`` is
    False). Under ``ft.vmap`` the statistics are each example's own.

    Args:
        num_features (int): The number of channels ``C``.
        eps (float, optional): Added to the variance. Default: ``1e-5``.
        momentum (float, optional): The running statistics' update rate.
            Default: ``0.1``.
        affine (bool, optional): Whether to learn ``weight`` (ones) and
            ``bias`` (zeros). Default: ``True``.
        track_running_stats (bool, optional): Whether to keep the running
            statistics (state ``running_mean`` (zeros) and ``running_var``
            (ones), shape ``(C,)``). Default: ``True``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> bn = nn.BatchNorm(2, momentum=0.5)
    >>> params, state = bn.init(random.key(0), mx.zeros((4, 2)))
    >>> y, state = bn.apply(params, state, mx.array([[1.0, 2.0], [3.0, 6.0]]), train=True)
    >>> y.round(3).tolist(), state["running_mean"].tolist()
    ([[-1.0, -1.0], [1.0, 1.0]], [1.0, 2.0])
    """

    num_features: int
    eps: float = 1e-5
    momentum: float = 0.1
    affine: bool = True
    track_running_stats: bool = True

    def __post_init__(self) -> None:
        check_positive("BatchNorm", num_features=self.num_features)
        _check_eps("BatchNorm", self.eps)

    @property
    def has_state(self) -> bool:
        """Whether the running statistics are kept (``track_running_stats``)."""
        return self.track_running_stats

    def _state_names(self) -> str:
        return "running_mean, running_var"

    def _check_state(self, state: State) -> None:
        """A clear error unless ``state`` holds running statistics of
        ``num_features`` values (a size-1 one would broadcast silently)."""
        if not state:
            raise layer_error(self, "the state has no running statistics: pass the state init "
                              "returned")
        for name in ("running_mean", "running_var"):
            if name not in state:
                raise layer_error(self, f"the state has no {name}: pass the state init returned")
            if tuple(shape_of(state[name])) != (self.num_features,):
                raise layer_error(self, f"the state's {name} has shape "
                                  f"{tuple(shape_of(state[name]))}, not ({self.num_features},): "
                                  f"pass the state init returned for this layer")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """``weight`` and ``bias`` if ``affine``; state ``running_mean`` and
        ``running_var`` if ``track_running_stats``."""
        check_features(self, x, self.num_features)
        _check_batched(self, x)
        state = {}
        if self.track_running_stats:
            check_param_fits(self, "running_mean", (self.num_features,))
            state = {"running_mean": mx.zeros((self.num_features,)),
                     "running_var": mx.ones((self.num_features,))}
        return (_affine_params(self, self.num_features) if self.affine else {}), state

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(normalised x, state)``; in training the state's running
        statistics are updated."""
        check_features(self, x, self.num_features)
        _check_batched(self, x)
        weight, bias = (params["weight"], params["bias"]) if self.affine else (None, None)
        tracked = self.track_running_stats
        if tracked:
            self._check_state(state)
        if tracked and not train:
            mean, var = state["running_mean"], state["running_var"]
            return F.batch_norm(x, mean, var, weight, bias, self.eps), state
        if train and x.size // x.shape[-1] == 1:
            raise layer_error(self, f"training needs more than one value per channel, got "
                              f"shape {tuple(x.shape)}")
        mean, var = F.batch_stats(x)
        y = F.batch_norm(x, mean, var, weight, bias, self.eps)
        if tracked:  # and training
            m = self.momentum
            _, unbiased = F.batch_stats(fnp.stop_gradient(x), ddof=1)
            state = {
                "running_mean": (1 - m) * state["running_mean"] + m * fnp.stop_gradient(mean),
                "running_var": (1 - m) * state["running_var"] + m * unbiased,
            }
        return y, state
