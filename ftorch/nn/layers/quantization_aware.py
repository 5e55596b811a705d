"""Quantization-aware training and post-training calibration: observers of
activation ranges (``MinMaxObserver``, ``MovingAverageMinMaxObserver``,
``PercentileObserver``, after ``torch.ao.quantization``'s), the
``QATLinear`` layer (fake-quantized weights and, with ``input_bits``,
inputs), ``qat`` to convert a model's ``Linear`` layers, and ``calibrate``
to fill the observers' state from data.

An observer's statistics are the layer's *state*: they change when the
model runs with ``train=True`` or inside ``calibrate``, and are read
otherwise, so a calibrated model is ``(model, params, state)`` like one with
BatchNorm.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
>>> params, _ = model.init(random.key(0), mx.zeros((1, 8)))
>>> qmodel, qparams, qstate = nn.qat(model, params, weight_bits=4, input_bits=8)
>>> batches = [mx.random.normal((32, 8), key=mx.random.key(i)) for i in range(4)]
>>> qstate = nn.calibrate(qmodel, qparams, qstate, batches)
>>> y, _ = qmodel.apply(qparams, qstate, batches[0])
>>> y.shape
(32, 2)
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.nn import functional as F
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State
from ftorch.nn.layers._checks import check_features
from ftorch.nn.layers.linear import Linear
from ftorch.nn.utils import replace_layers

__all__ = ["MinMaxObserver", "MovingAverageMinMaxObserver", "PercentileObserver", "QATLinear",
           "qat", "calibrate", "calibrating"]

_calibrating: contextvars.ContextVar[bool] = contextvars.ContextVar("ftorch_nn_calibrating",
                                                                   default=False)


@contextlib.contextmanager
def calibrating() -> Iterator[None]:
    """Within the block, observers update their state as in training (without
    turning on dropout or other training behaviour)."""
    token = _calibrating.set(True)
    try:
        yield
    finally:
        _calibrating.reset(token)


def _ranges(x: Array, axis: int | None) -> tuple[Array, Array]:
    """Per-tensor (``axis=None``) or per-channel min and max of ``x``."""
    x = fnp.stop_gradient(x)
    if axis is None:
        return fnp.min(x), fnp.max(x)
    axes = tuple(a for a in range(x.ndim) if a != axis % x.ndim)
    return fnp.min(x, axis=axes), fnp.max(x, axis=axes)


@dataclasses.dataclass(frozen=True)
class MinMaxObserver:
    """The running minimum and maximum (per tensor, or per channel along
    ``axis``), as ``torch.ao.quantization.MinMaxObserver``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> obs = nn.MinMaxObserver()
    >>> state = obs.update(obs.update(obs.init(), mx.array([0.5, 2.0])), mx.array([-1.0]))
    >>> state["low"].item(), state["high"].item()
    (-1.0, 2.0)
    """

    axis: int | None = None

    def init(self) -> State:
        """No observation yet: ``low = +inf``, ``high = -inf``."""
        return {"low": mx.array(float("inf")), "high": mx.array(float("-inf"))}

    def update(self, state: State, x: Array) -> State:
        """The state after observing ``x``."""
        low, high = _ranges(x, self.axis)
        return {"low": fnp.minimum(state["low"], low), "high": fnp.maximum(state["high"], high)}


@dataclasses.dataclass(frozen=True)
class MovingAverageMinMaxObserver:
    """An exponential moving average of each batch's minimum and maximum
    (the first batch's taken as it is), as PyTorch's observer of that name.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> obs = nn.MovingAverageMinMaxObserver(momentum=0.5)
    >>> state = obs.update(obs.update(obs.init(), mx.array([0.0, 2.0])), mx.array([0.0, 4.0]))
    >>> state["high"].item()
    3.0
    """

    momentum: float = 0.01
    axis: int | None = None

    def init(self) -> State:
        """No observation yet."""
        return {"low": mx.array(float("inf")), "high": mx.array(float("-inf"))}

    def update(self, state: State, x: Array) -> State:
        """The state after observing ``x``."""
        low, high = _ranges(x, self.axis)
        first = fnp.isinf(state["low"])
        m = self.momentum
        return {"low": fnp.where(first, low, state["low"] + m * (low - state["low"])),
                "high": fnp.where(first, high, state["high"] + m * (high - state["high"]))}


@dataclasses.dataclass(frozen=True)
class PercentileObserver:
    """The mean over batches of each batch's lower and upper ``percentile``
    (per tensor): a range that ignores rare outliers, as percentile
    calibration does (TensorRT, NVIDIA's pytorch-quantization). Each batch's
    percentiles are exact (``ftorch.numpy.percentile``, linear
    interpolation); the running mean weighs batches equally.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> obs = nn.PercentileObserver(percentile=90.0)
    >>> state = obs.update(obs.init(), mx.arange(11.0))
    >>> state["low"].item(), state["high"].item()
    (1.0, 9.0)
    """

    percentile: float = 99.99

    def __post_init__(self) -> None:
        if not 50.0 < self.percentile <= 100.0:
            raise ValueError(f"PercentileObserver: percentile must be in (50, 100], got "
                             f"{self.percentile}")

    def init(self) -> State:
        """No observation yet."""
        return {"low": mx.array(0.0), "high": mx.array(0.0), "count": mx.array(0.0)}

    def update(self, state: State, x: Array) -> State:
        """The state after observing ``x``."""
        flat = fnp.reshape(fnp.stop_gradient(x), (-1,)).astype(mx.float32)
        low = fnp.percentile(flat, 100.0 - self.percentile)
        high = fnp.percentile(flat, self.percentile)
        n = state["count"] + 1
        return {"low": state["low"] + (low - state["low"]) / n,
                "high": state["high"] + (high - state["high"]) / n, "count": n}


Observer = MinMaxObserver | MovingAverageMinMaxObserver | PercentileObserver


@dataclasses.dataclass(frozen=True)
class QATLinear(Layer):
    """A ``Linear`` trained quantization-aware: its weight fake-quantized to
    ``weight_bits`` per output channel (or per group of ``group_size`` input
    features) at every call, and, with ``input_bits``, its input
    fake-quantized with the range its ``observer`` has seen (the state).
    Gradients pass straight through both (``F.fake_quantize``).

    Params: the wrapped ``Linear``'s, under ``linear``. State: the
    observer's, under ``input`` (with ``input_bits``).

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.QATLinear(nn.Linear(4, 2), weight_bits=4)
    >>> params, state = layer.init(random.key(0), mx.zeros((1, 4)))
    >>> layer.apply(params, state, mx.ones((3, 4)))[0].shape
    (3, 2)
    """

    linear: Linear
    weight_bits: int = 8
    group_size: int | None = None
    symmetric: bool = True
    input_bits: int | None = None
    input_symmetric: bool = False
    observer: Any = MinMaxObserver()

    def __post_init__(self) -> None:
        if not isinstance(self.linear, Linear):
            raise TypeError(f"QATLinear: linear must be a Linear layer, got "
                            f"{type(self.linear).__name__}")
        F.quantization_range(self.weight_bits, self.symmetric, "QATLinear")
        if self.input_bits is not None:
            F.quantization_range(self.input_bits, self.input_symmetric, "QATLinear")
        if self.group_size is not None and self.linear.input_dims % self.group_size:
            raise ValueError(f"QATLinear: group_size={self.group_size} must divide "
                             f"input_dims={self.linear.input_dims}")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """The ``Linear``'s params; the observer's empty state."""
        params, _ = self.linear.init(key, x)
        state = {} if self.input_bits is None else {"input": self.observer.init()}
        return {"linear": params}, state

    @property
    def has_state(self) -> bool:
        return self.input_bits is not None

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(linear(fake_quantize(x)) with a fake-quantized weight, state)``;
        the observer updates in training and in ``calibrate``."""
        check_features(self, x, self.linear.input_dims)
        p = params["linear"]
        weight = F.fake_quantize(p["weight"], bits=self.weight_bits,
                                 axis=None if self.group_size else 0,
                                 group_size=self.group_size, symmetric=self.symmetric)
        if self.input_bits is not None:
            if train or _calibrating.get():
                state = {"input": self.observer.update(state["input"], x)}
            scale, zero_point = F.quantization_params(
                state["input"]["low"], state["input"]["high"], bits=self.input_bits,
                symmetric=self.input_symmetric)
            x = F.fake_quantize(x, bits=self.input_bits, symmetric=self.input_symmetric,
                                scale=scale, zero_point=zero_point)
        y = fnp.matmul(x, weight.T)
        return (y + p["bias"] if self.linear.bias else y), state


def qat(model: Layer, params: Params, *, weight_bits: int = 8, group_size: int | None = None,
        symmetric: bool = True, input_bits: int | None = None, input_symmetric: bool = False,
        observer: Any = None,
        predicate: Callable[[str, Layer], bool] | None = None) -> tuple[Layer, Params, State]:
    """``model`` with its ``Linear`` layers (those ``predicate(path, layer)``
    chooses) made ``QATLinear``, its params to match, and the observers'
    initial state: ``(model, params, state)``. The model's other state (if
    any) is not carried: initialise it again or merge it.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    >>> params, _ = model.init(random.key(0), mx.zeros((1, 4)))
    >>> qmodel, qparams, qstate = nn.qat(model, params, weight_bits=4)
    >>> type(qmodel.layers[0]).__name__, qstate
    ('QATLinear', {})
    """
    observer = MinMaxObserver() if observer is None else observer
    states: dict[str, State] = {}

    def convert(path: str, layer: Layer, layer_params: Params) -> tuple | None:
        if not isinstance(layer, Linear):
            return None
        if predicate is not None and not predicate(path, layer):
            return layer, layer_params
        wrapped = QATLinear(layer, weight_bits, group_size, symmetric, input_bits,
                            input_symmetric, observer)
        if input_bits is not None:
            states[path] = {"input": observer.init()}
        return wrapped, {"linear": layer_params}

    qmodel, qparams = replace_layers(model, params, convert)
    state: State = {}
    for path, value in states.items():  # nest by the dotted paths, as params are
        node = state
        parts = path.split(".") if path else []
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        if parts:
            node[parts[-1]] = value
        else:
            state = value
    return qmodel, qparams, _as_lists(qparams, state)


def _as_lists(params: Any, state: Any) -> Any:
    """``state`` (nested dicts by path) with the list nodes that ``params`` has
    as lists, every entry present (``{}`` where a child has no state)."""
    if isinstance(params, list):
        return [_as_lists(p, state.get(str(i), {}) if isinstance(state, dict) else {})
                for i, p in enumerate(params)]
    if isinstance(params, dict) and isinstance(state, dict):
        return {k: _as_lists(params.get(k, {}), v) for k, v in state.items()}
    return state


def calibrate(model: Layer, params: Params, state: State, batches: Iterable[Any]) -> State:
    """The state after running ``model`` (in evaluation mode) over ``batches``
    with its observers updating: post-training calibration. A batch is the
    model's input, or a tuple of its inputs.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.QATLinear(nn.Linear(2, 1), input_bits=8)
    >>> params, state = layer.init(random.key(0), mx.zeros((1, 2)))
    >>> state = nn.calibrate(layer, params, state, [mx.array([[0.0, 3.0]])])
    >>> state["input"]["high"].item()
    3.0
    """
    with calibrating():
        for batch in batches:
            inputs = batch if isinstance(batch, tuple) else (batch,)
            _, state = model.apply(params, state, *inputs)
    return state
