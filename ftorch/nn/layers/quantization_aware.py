"""Quantization-aware training and post-training calibration: observers of
value ranges (``MinMaxObserver``, ``MovingAverageMinMaxObserver``,
``PercentileObserver``, after ``torch.ao.quantization``'s), the
``FakeQuantize`` layer (observe, then fake-quantize, an activation), the
``QATLinear`` layer (fake-quantized weights and, with ``input_bits``,
inputs), ``qat`` to convert a model's ``Linear`` layers, ``calibrate`` to
fill the observers' state from data, and ``observed_ranges`` to read it.

An observer (``Observer``) is a frozen dataclass of settings with pure
functions over its state, a pytree: ``init()``, ``update(state, x)``,
``range(state)`` (the ``(low, high)`` it estimates) and
``calculate_qparams(state, bits=, symmetric=)`` (the ``(scale,
zero_point)`` of that range). Inside a layer
the observer's state is the layer's *state*: it changes when the model runs
with ``train=True`` or inside ``calibrate``, and is only read otherwise, so
a calibrated model is ``(model, params, state)`` like one with BatchNorm.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
>>> params, _ = model.init(random.key(0), mx.zeros((1, 8)))
>>> qmodel, qparams, qstate = nn.qat(model, params, weight_bits=4, input_bits=8)
>>> batches = [mx.random.normal((32, 8), key=mx.random.key(i)) for i in range(4)]
>>> qstate = nn.calibrate(qmodel, qparams, qstate, batches)
>>> y, _ = qmodel.apply(qparams, qstate, batches[0])
>>> y.shape, sorted(nn.observed_ranges(qmodel, qstate))
((32, 2), ['layers.0', 'layers.2'])
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.nn import functional as F
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State, _at, _layout
from ftorch.nn.layers._checks import check_features, check_positive, shape_of
from ftorch.nn.layers.linear import Linear, linear
from ftorch.nn.utils import replace_layers
from ftorch.primitives.reduction import normalize_axis

__all__ = ["Observer", "MinMaxObserver", "MovingAverageMinMaxObserver", "PercentileObserver",
           "FakeQuantize", "QATLinear", "qat", "calibrate", "calibrating", "observed_ranges"]

_calibrating: contextvars.ContextVar[bool] = contextvars.ContextVar("ftorch_nn_calibrating",
                                                                   default=False)


@contextlib.contextmanager
def calibrating() -> Iterator[None]:
    """Within the block, observers update their state as in training (without
    turning on dropout or other training behaviour); ``calibrate`` uses it.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.FakeQuantize()
    >>> _, state = layer.init(random.key(0), mx.zeros(2))
    >>> with nn.calibrating():
    ...     _, state = layer.apply({}, state, mx.array([-1.0, 2.0]))
    >>> state["high"].item()
    2.0
    """
    token = _calibrating.set(True)
    try:
        yield
    finally:
        _calibrating.reset(token)


# ----------------------------------------------------------------------------
# Observers
# ----------------------------------------------------------------------------


class Observer:
    """The interface of observers (PyTorch's ``ObserverBase``), a frozen
    dataclass of settings with pure functions over its state (a pytree):
    ``init(x=None)``, ``update(state, x)`` and ``range(state)`` (``(low,
    high)``, ``(inf, -inf)`` before anything is seen), which a subclass
    defines, and ``calculate_qparams``. ``FakeQuantize``, ``QATLinear`` and
    ``qat`` take any of them.

    >>> import dataclasses, ftorch.nn as nn, ftorch.numpy as fnp, mlx.core as mx
    >>> @dataclasses.dataclass(frozen=True)
    ... class AbsMaxObserver(nn.Observer):
    ...     def init(self, x=None):
    ...         return {"high": mx.array(float("-inf"))}
    ...     def update(self, state, x):
    ...         return {"high": fnp.maximum(state["high"], fnp.max(fnp.abs(x)))}
    ...     def range(self, state):
    ...         return -state["high"], state["high"]
    >>> obs = AbsMaxObserver()
    >>> state = obs.update(obs.init(), mx.array([-2.0, 1.0]))
    >>> scale, zero_point = obs.calculate_qparams(state, bits=8, symmetric=True)
    >>> round(scale.item() * 127.5, 6), zero_point.item()
    (2.0, 0.0)
    """

    def init(self, x: InputSpec | None = None) -> State:
        """The state before anything is seen; ``x`` (an array or its
        ``ShapeDtypeStruct``) sizes per-channel statistics."""
        raise NotImplementedError(f"{type(self).__name__} does not define init")

    def update(self, state: State, x: Array) -> State:
        """The state after seeing ``x`` as well."""
        raise NotImplementedError(f"{type(self).__name__} does not define update")

    def range(self, state: State) -> tuple[Array, Array]:
        """``(low, high)``, the range seen (``(inf, -inf)`` before anything
        is); by default the state's ``low`` and ``high``."""
        return state["low"], state["high"]

    def calculate_qparams(self, state: State, *, bits: int = 8,
                          symmetric: bool = False) -> tuple[Array, Array]:
        """``(scale, zero_point)`` mapping ``range(state)`` onto ``bits``-bit
        integers (``F.quantization_params``; scale 1 and zero point 0 before
        anything is seen, as PyTorch). Activations default to asymmetric
        (unsigned, PyTorch's ``quint8``)."""
        low, high = self.range(state)
        return F.quantization_params(low, high, bits=bits, symmetric=symmetric)


def _channel_shape(observer: Any, x: InputSpec | None, name: str) -> tuple[int, ...]:
    """The shape of a per-tensor (``()``) or per-channel observer's statistics."""
    if observer.axis is None:
        return ()
    if x is None:
        raise ValueError(f"{name}: init needs x (an array or ShapeDtypeStruct) to size the "
                         f"statistics of each channel along axis={observer.axis}")
    shape = shape_of(x)
    return (shape[normalize_axis(observer.axis, len(shape), name)],)


def _empty_range(shape: tuple[int, ...]) -> State:
    return {"low": mx.full(shape, float("inf")), "high": mx.full(shape, float("-inf"))}


def _batch_range(x: Array, axis: int | None, name: str) -> tuple[Array, Array]:
    """Per-tensor (``axis=None``) or per-channel min and max of ``x``."""
    x = fnp.stop_gradient(x)
    if axis is None:
        return fnp.min(x), fnp.max(x)
    channel = normalize_axis(axis, x.ndim, name)
    reduced = tuple(a for a in range(x.ndim) if a != channel)
    return fnp.min(x, axis=reduced), fnp.max(x, axis=reduced)


@dataclasses.dataclass(frozen=True)
class MinMaxObserver(Observer):
    """The running minimum and maximum of everything seen, per tensor or per
    channel along ``axis``, as ``torch.ao.quantization.MinMaxObserver`` (and
    ``PerChannelMinMaxObserver``). One outlier widens the range for good.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> obs = nn.MinMaxObserver()
    >>> state = obs.update(obs.update(obs.init(), mx.array([0.5, 2.0])), mx.array([-1.0]))
    >>> [v.item() for v in obs.range(state)]
    [-1.0, 2.0]
    >>> scale, zero_point = obs.calculate_qparams(state, bits=8)
    >>> round(scale.item() * 255, 4), zero_point.item()
    (3.0, 85.0)
    """

    axis: int | None = None

    def init(self, x: InputSpec | None = None) -> State:
        """Nothing seen yet: ``low = +inf``, ``high = -inf``; ``x`` (an array
        or its ``ShapeDtypeStruct``) sizes per-channel statistics."""
        return _empty_range(_channel_shape(self, x, "MinMaxObserver"))

    def update(self, state: State, x: Array) -> State:
        """The state after seeing ``x``."""
        low, high = _batch_range(x, self.axis, "MinMaxObserver")
        return {"low": fnp.minimum(state["low"], low), "high": fnp.maximum(state["high"], high)}


@dataclasses.dataclass(frozen=True)
class MovingAverageMinMaxObserver(Observer):
    """An exponential moving average of each batch's minimum and maximum
    (the first batch's taken as it is): ``low += momentum * (batch_min -
    low)``, as PyTorch's observer of that name (its ``averaging_constant``),
    per tensor or per channel along ``axis``. It follows ranges that drift in
    training; PyTorch's default for activations in QAT.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> obs = nn.MovingAverageMinMaxObserver(momentum=0.5)
    >>> state = obs.update(obs.update(obs.init(), mx.array([0.0, 2.0])), mx.array([0.0, 4.0]))
    >>> state["high"].item()
    3.0
    """

    momentum: float = 0.01
    axis: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.momentum <= 1.0:
            raise ValueError(f"MovingAverageMinMaxObserver: momentum must be in (0, 1], got "
                             f"{self.momentum!r}")

    def init(self, x: InputSpec | None = None) -> State:
        """Nothing seen yet (as ``MinMaxObserver.init``)."""
        return _empty_range(_channel_shape(self, x, "MovingAverageMinMaxObserver"))

    def update(self, state: State, x: Array) -> State:
        """The state after seeing ``x``."""
        low, high = _batch_range(x, self.axis, "MovingAverageMinMaxObserver")
        first = fnp.isinf(state["low"])
        m = self.momentum
        return {"low": fnp.where(first, low, state["low"] + m * (low - state["low"])),
                "high": fnp.where(first, high, state["high"] + m * (high - state["high"]))}


def _span(low: Array, high: Array) -> Array:
    """The width a histogram gives ``[low, high]``: the range's own, or a
    sliver (relative to the values) when every value seen is the same. It
    only grows as the range does."""
    magnitude = fnp.maximum(fnp.abs(low), fnp.abs(high))
    return fnp.maximum(high - low, magnitude * 1e-6 + 1e-30)


@dataclasses.dataclass(frozen=True)
class PercentileObserver(Observer):
    """The range from the lower and upper ``percentile`` of everything seen
    (per tensor): ``[P(100 - p), P(p)]``, which ignores rare outliers, as
    percentile calibration does (TensorRT, NVIDIA's pytorch-quantization).

    How it estimates: the state is a histogram of all values seen with
    ``bins`` equal bins over ``[min, max]`` so far (and that min and max).
    When a batch widens the range the histogram is re-binned onto the new,
    wider bins, each old bin's count spread uniformly over its width (as
    PyTorch's ``HistogramObserver``). The percentiles are read off the
    cumulative histogram, interpolating linearly within a bin, and clipped
    to ``[min, max]``: they are those of all the data seen (not an average
    of per-batch percentiles), accurate to about a bin width, ``(max -
    min) / bins``. The state has fixed shapes, so ``update`` runs under
    ``jit``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> obs = nn.PercentileObserver(percentile=99.0)
    >>> state = obs.update(obs.init(), mx.linspace(0.0, 1.0, 10001))
    >>> state = obs.update(state, mx.array([-5.0, 5.0]))  # outliers: the range is wider
    >>> [round(v.item(), 3) for v in obs.range(state)]
    [0.01, 0.99]
    """

    percentile: float = 99.99
    bins: int = 2048

    def __post_init__(self) -> None:
        if not 50.0 < self.percentile <= 100.0:
            raise ValueError(f"PercentileObserver: percentile must be in (50, 100], got "
                             f"{self.percentile!r}")
        check_positive("PercentileObserver", bins=self.bins)

    def init(self, x: InputSpec | None = None) -> State:
        """Nothing seen yet: an empty histogram; ``x`` is not needed (the
        observer is per tensor)."""
        return {"histogram": mx.zeros(self.bins), **_empty_range(())}

    def update(self, state: State, x: Array) -> State:
        """The state after seeing ``x``."""
        x = fnp.reshape(fnp.stop_gradient(x), (-1,)).astype(mx.float32)
        bins = self.bins
        low = fnp.minimum(state["low"], fnp.min(x))
        high = fnp.maximum(state["high"], fnp.max(x))
        width = _span(low, high) / bins
        # The old counts onto the new bins. The old range lies inside the new one and the
        # new bins are at least as wide, so each old bin meets at most two new ones.
        seen = fnp.isfinite(state["low"])  # before the first batch: any finite range will do
        old_low = fnp.where(seen, state["low"], low)
        old_width = _span(old_low, fnp.where(seen, state["high"], high)) / bins
        position = (old_low + fnp.arange(bins) * old_width - low) / width  # in new bins
        first = fnp.floor(position)
        share = fnp.clip((first + 1 - position) * width / old_width, 0.0, 1.0)
        counts = state["histogram"]

        def to_bin(i: Array) -> Array:
            return fnp.clip(i, 0, bins - 1).astype(mx.int32)

        histogram = (fnp.bincount(to_bin(first), counts * share, length=bins)
                     + fnp.bincount(to_bin(first + 1), counts * (1 - share), length=bins)
                     + fnp.bincount(to_bin(fnp.floor((x - low) / width)), fnp.ones_like(x),
                                    length=bins))
        return {"histogram": histogram, "low": low, "high": high}

    def range(self, state: State) -> tuple[Array, Array]:
        """``(P(100 - percentile), P(percentile))`` of the values seen, from
        the histogram (``(inf, -inf)`` before anything is seen)."""
        counts, low, high = state["histogram"], state["low"], state["high"]
        total = fnp.sum(counts)
        edges = low + fnp.arange(self.bins + 1) * (_span(low, high) / self.bins)
        cumulative = fnp.concatenate([fnp.zeros(1), fnp.cumsum(counts)])
        fraction = self.percentile / 100.0
        estimate = [fnp.clip(fnp.interp(q * total, cumulative, edges), low, high)
                    for q in (1.0 - fraction, fraction)]
        seen = total > 0
        return fnp.where(seen, estimate[0], low), fnp.where(seen, estimate[1], high)


def _observed_fake_quantize(observer: Observer, state: State, x: Array, bits: int,
                            symmetric: bool, train: bool) -> tuple[Array, State]:
    """``x`` fake-quantized with the range ``observer`` has seen, and the
    observer's state, updated first in training or calibration. Before the
    observer has seen anything (evaluation of an uncalibrated model), ``x``
    passes through unchanged rather than collapse onto a meaningless grid."""
    if train or _calibrating.get():
        state = observer.update(state, x)
    low, high = observer.range(state)
    scale, zero_point = F.quantization_params(low, high, bits=bits, symmetric=symmetric)
    quantized = F.fake_quantize(x, bits=bits, symmetric=symmetric,
                                axis=getattr(observer, "axis", None), scale=scale,
                                zero_point=zero_point)
    return fnp.where(fnp.all(low <= high), quantized, x), state


@dataclasses.dataclass(frozen=True)
class FakeQuantize(Layer):
    """Observe, then fake-quantize, what passes through: ``x`` quantized to
    ``bits``-bit integers and back with the range ``observer`` has seen
    (``F.fake_quantize``, straight-through gradient), as
    ``torch.ao.quantization.FakeQuantize``. Insert it where an activation is
    to be quantized; ``symmetric=False`` (default) is unsigned with a zero
    point, PyTorch's ``quint8``.

    No params. State: the observer's. It updates with ``train=True`` and in
    ``calibrate``; before the observer has seen anything ``x`` passes
    through unchanged.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.FakeQuantize(bits=4, observer=nn.MinMaxObserver())
    >>> params, state = layer.init(random.key(0), mx.zeros(3))
    >>> y, state = layer.apply(params, state, mx.array([0.0, 0.5, 1.5]), train=True)
    >>> y.tolist(), state["high"].item()
    ([0.0, 0.5, 1.5], 1.5)
    >>> layer.apply(params, state, mx.array([0.33, 3.0]))[0].tolist()  # 15 steps of 0.1
    [0.3..., 1.5]
    """

    bits: int = 8
    symmetric: bool = False
    observer: Observer = MovingAverageMinMaxObserver()

    def __post_init__(self) -> None:
        F.quantization_range(self.bits, self.symmetric, "FakeQuantize")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """No params; the observer's empty state."""
        return {}, self.observer.init(x)

    @property
    def has_state(self) -> bool:
        return True

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(fake_quantize(x), state)``, the state updated in training and
        calibration."""
        return _observed_fake_quantize(self.observer, state, x, self.bits, self.symmetric,
                                       train)


def _initial_step(weight: Array, bits: int, symmetric: bool) -> Array:
    """LSQ's initial step per output channel: ``2 mean(|w|) / sqrt(Q_p)``."""
    _, qmax = F.quantization_range(bits, symmetric, "QATLinear")
    return 2 * fnp.mean(fnp.abs(weight), axis=1) / math.sqrt(qmax)


@dataclasses.dataclass(frozen=True)
class QATLinear(Layer):
    """A ``Linear`` trained quantization-aware: its weight fake-quantized to
    ``weight_bits`` per output channel (or per group of ``group_size`` input
    features) at every call, and, with ``input_bits``, its input
    fake-quantized with the range its ``observer`` has seen (as
    ``FakeQuantize``). Gradients pass straight through both
    (``F.fake_quantize``). With ``learn_step``, the weight's step per output
    channel is a parameter trained by LSQ (``F.fake_quantize_lsq``, the
    paper's initialisation ``2 mean|w| / sqrt(Q_p)``) instead of read from
    the weight's range.

    Params: the wrapped ``Linear``'s, under ``linear`` (and ``weight_step``
    with ``learn_step``). State: the observer's, under ``input`` (with
    ``input_bits``).

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.QATLinear(nn.Linear(4, 2), weight_bits=4, input_bits=8)
    >>> params, state = layer.init(random.key(0), mx.zeros((1, 4)))
    >>> y, state = layer.apply(params, state, mx.ones((3, 4)), train=True)
    >>> y.shape, state["input"]["high"].item()
    ((3, 2), 1.0)
    """

    linear: Linear
    weight_bits: int = 8
    group_size: int | None = None
    symmetric: bool = True
    input_bits: int | None = None
    input_symmetric: bool = False
    observer: Observer = MinMaxObserver()
    learn_step: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.linear, Linear):
            raise TypeError(f"QATLinear: linear must be a Linear layer, got "
                            f"{type(self.linear).__name__}")
        F.quantization_range(self.weight_bits, self.symmetric, "QATLinear")
        if self.input_bits is not None:
            F.quantization_range(self.input_bits, self.input_symmetric, "QATLinear")
        if self.group_size is not None:
            if self.learn_step:
                raise ValueError("QATLinear: learn_step has one step per output channel; "
                                 "group_size is not supported with it")
            check_positive("QATLinear", group_size=self.group_size)
            if self.linear.input_dims % self.group_size:
                raise ValueError(f"QATLinear: group_size={self.group_size} must divide "
                                 f"input_dims={self.linear.input_dims}")

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        """The ``Linear``'s params (and the initial step); the observer's
        empty state."""
        params, _ = self.linear.init(key, x)
        return self.wrap(params), ({} if self.input_bits is None
                                   else {"input": self.observer.init(x)})

    def wrap(self, linear_params: Params) -> Params:
        """This layer's params around a ``Linear``'s (as ``qat`` converts)."""
        params = {"linear": linear_params}
        if self.learn_step:
            params["weight_step"] = _initial_step(linear_params["weight"], self.weight_bits,
                                                  self.symmetric)
        return params

    @property
    def has_state(self) -> bool:
        return self.input_bits is not None

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(linear(fake_quantize(x)) with a fake-quantized weight, state)``;
        the observer updates in training and calibration."""
        check_features(self, x, self.linear.input_dims)
        p = params["linear"]
        if self.learn_step:
            weight = F.fake_quantize_lsq(p["weight"], params["weight_step"], axis=0,
                                         bits=self.weight_bits, symmetric=self.symmetric)
        else:
            weight = F.fake_quantize(p["weight"], bits=self.weight_bits,
                                     axis=None if self.group_size else 0,
                                     group_size=self.group_size, symmetric=self.symmetric)
        if self.input_bits is not None:
            x, observed = _observed_fake_quantize(self.observer, state["input"], x,
                                                  self.input_bits, self.input_symmetric, train)
            state = {"input": observed}
        return linear(x, weight, p.get("bias")), state


def qat(model: Layer, params: Params, state: State | None = None, *, weight_bits: int = 8,
        group_size: int | None = None, symmetric: bool = True, input_bits: int | None = None,
        input_symmetric: bool = False, observer: Observer | None = None,
        learn_step: bool = False, predicate: Callable[[str, Layer], bool] | None = None
        ) -> tuple[Layer, Params, State]:
    """``model`` with its ``Linear`` layers (those ``predicate(path, layer)``
    chooses) made ``QATLinear`` with these settings, as
    ``torch.ao.quantization.prepare_qat``: ``(model, params, state)``, the
    params wrapped to match and ``state`` (the model's, e.g. BatchNorm's)
    with each new layer's observer state added (initial state; ``observer``
    defaults to ``MinMaxObserver()``, per tensor).

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    >>> params, _ = model.init(random.key(0), mx.zeros((1, 4)))
    >>> qmodel, qparams, qstate = nn.qat(model, params, weight_bits=4)
    >>> type(qmodel.layers[0]).__name__, qstate
    ('QATLinear', {})
    """
    observer = MinMaxObserver() if observer is None else observer
    if getattr(observer, "axis", None) is not None:
        raise ValueError("qat: observer must be per tensor (axis=None): its state is made "
                         "without an input to size per-channel statistics")
    added: dict[str, State] = {}

    def convert(path: str, layer: Layer, layer_params: Params) -> tuple | None:
        if not isinstance(layer, Linear):
            return None
        if predicate is not None and not predicate(path, layer):
            return layer, layer_params
        wrapped = QATLinear(layer, weight_bits, group_size, symmetric, input_bits,
                            input_symmetric, observer, learn_step)
        if input_bits is not None:
            added[path] = {"input": observer.init()}
        return wrapped, wrapped.wrap(layer_params)

    qmodel, qparams = replace_layers(model, params, convert)
    new: State = {}
    for path, value in added.items():  # nested by the dotted paths, as params are
        if not path:
            new = value
            continue
        node, *parts = new, *path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return qmodel, qparams, _merge(state or {}, _as_lists(qparams, new))


def _as_lists(params: Any, state: Any) -> Any:
    """``state`` (nested dicts by path) with the list nodes that ``params`` has
    as lists, every entry present (``{}`` where a child has no state), the
    layout ``Layer.init`` gives."""
    if isinstance(params, list):
        return [_as_lists(p, state.get(str(i), {}) if isinstance(state, dict) else {})
                for i, p in enumerate(params)]
    if isinstance(params, dict) and isinstance(state, dict):
        return {k: _as_lists(params.get(k, {}), v) for k, v in state.items()}
    return state


def _merge(old: Any, new: Any) -> Any:
    """Two states of one model laid out alike, each entry from whichever has it."""
    if isinstance(new, dict) and not new:
        return old
    if isinstance(old, dict) and not old:
        return new
    if isinstance(old, list) and isinstance(new, list):
        return [_merge(o, n) for o, n in zip(old, new)]
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **{k: _merge(old.get(k, {}), v) for k, v in new.items()}}
    return new


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


def observed_ranges(model: Layer, state: State) -> dict[str, tuple[Array, Array]]:
    """The ``(low, high)`` each observer in ``model`` estimates from
    ``state``, by the dotted path of its ``FakeQuantize`` or ``QATLinear``
    (``""`` for ``model`` itself): the per-layer activation ranges of a
    calibration.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(2, 2), nn.FakeQuantize(observer=nn.MinMaxObserver()))
    >>> params, state = model.init(random.key(0), mx.zeros((1, 2)))
    >>> state = nn.calibrate(model, params, state, [mx.ones((4, 2))])
    >>> list(nn.observed_ranges(model, state))
    ['layers.1']
    """
    ranges: dict[str, tuple[Array, Array]] = {}

    def visit(layer: Layer, layer_state: State, path: str) -> None:
        if isinstance(layer, FakeQuantize):
            ranges[path] = layer.observer.range(layer_state)
        elif isinstance(layer, QATLinear):
            if layer.input_bits is not None:
                ranges[path] = layer.observer.range(layer_state["input"])
        else:
            for sub_path, child in _layout(layer):
                name = ".".join(map(str, sub_path))
                visit(child, _at(layer_state, sub_path), f"{path}.{name}" if path else name)

    visit(model, state, "")
    return ranges
