"""Optax's smaller utilities: adaptive gradient clipping, flattening,
monitoring, per-layer clipping, power iteration and a diagonal Gaussian.

>>> import ftorch.optim as optim, mlx.core as mx
>>> opt = optim.adaptive_grad_clip(0.1)
>>> opt.update(mx.array([3.0, 4.0]), opt.init(None), mx.array([0.0, 10.0]))[0].tolist()
[0.6000000238418579, 0.800000011920929]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch import random, tree
from ftorch.optim._base import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    chain,
    stateless,
    with_extra_args_support,
)
from ftorch.optim._transform import ema
from ftorch.optim._wrappers import per_example_global_norm_clip

__all__ = [
    "adaptive_grad_clip", "AdaptiveGradClipState", "ScaleState", "WrappedSchedule", "flatten",
    "tree_map_params", "snapshot", "SnapshotState", "monitor", "MonitorState",
    "measure_with_ema", "per_example_layer_norm_clip", "power_iteration", "multi_normal",
    "MultiNormalDiagFromLogScale",
]

# Stateless transformations' states, under optax's names.
AdaptiveGradClipState = EmptyState
ScaleState = EmptyState


def _unitwise_norm(x: Any, axis: int | tuple[int, ...] | None) -> Any:
    """The norm of each unit of ``x`` (a vector whole; a matrix's or 3-d
    array's columns over axis 0; a convolution kernel's output channels over
    all but the last axis), broadcast to ``x``'s shape."""
    if axis is None:
        squeezed = sum(s != 1 for s in x.shape)
        if squeezed <= 1:
            axis = None
        elif x.ndim in (2, 3):
            axis = 0
        else:
            axis = tuple(range(x.ndim - 1))
    norm = fnp.sqrt(fnp.sum(fnp.square(fnp.abs(x)), axis=axis, keepdims=True))
    return fnp.broadcast_to(norm, x.shape)


def adaptive_grad_clip(clipping: float | Any, eps: float | Any = 1e-3,
                       axis: int | tuple[int, ...] | None = None) -> GradientTransformation:
    """Clip each unit's gradient to ``clipping`` times the norm of its
    parameters (at least ``eps``): a gradient unit ``g`` with parameters
    ``p`` becomes ``g * min(1, clipping * max(|p|, eps) / |g|)``. Units are
    vectors whole, the columns (axis 0) of 2-d and 3-d leaves and all but
    the last axis of higher ones, or the norms over ``axis`` when given.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adaptive_grad_clip(0.5)
    >>> opt.update(mx.array([[3.0], [4.0]]), opt.init(None), mx.ones((2, 1)))[0].tolist()
    [[0.4242640435695648], [0.5656853914260864]]
    """
    def update(updates, state, params=None):
        if params is None:
            raise ValueError("adaptive_grad_clip: update needs the parameters: call "
                             "update(updates, state, params)")

        def leaf(g, p):
            g_norm = _unitwise_norm(g, axis)
            max_norm = clipping * fnp.maximum(_unitwise_norm(p, axis), eps)
            clipped = g * (max_norm / fnp.maximum(g_norm, 1e-6))
            return fnp.where(g_norm < max_norm, g, fnp.astype(clipped, g.dtype))

        return tree.map(leaf, updates, params), state

    return GradientTransformation(lambda params: EmptyState(), update)


class WrappedSchedule:
    """A schedule as ``inject_hyperparams`` reads it from a state:
    ``WrappedSchedule(fn)(state)`` is ``fn(state.count)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> s = optim.WrappedSchedule(lambda count: count * 2)
    >>> s(optim.ScaleByScheduleState(mx.array(3))).item()
    6
    """

    def __init__(self, schedule_fn: Callable[[Any], Any]) -> None:
        self.schedule_fn = schedule_fn

    def __call__(self, state: Any, **extra_args: Any) -> Any:
        return self.schedule_fn(state.count)


def flatten(inner: GradientTransformation) -> GradientTransformationExtraArgs:
    """Run ``inner`` on the updates (and parameters) raveled into one
    vector, its state kept on that vector (fewer, larger arrays).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.flatten(optim.scale(-2.0))
    >>> u, s = opt.update({"a": mx.ones(2), "b": mx.ones(1)}, opt.init({"a": mx.ones(2),
    ...                                                             "b": mx.ones(1)}))
    >>> u["a"].tolist(), u["b"].tolist()
    ([-2.0, -2.0], [-2.0])
    """
    inner = with_extra_args_support(inner)

    def ravel(t: Any) -> Any:
        return None if t is None else tree.ravel(t)[0]

    def init(params):
        return inner.init(ravel(params))

    def update(updates, state, params=None, **extra_args):
        flat, unravel = tree.ravel(updates)
        flat, state = inner.update(flat, state, ravel(params), **extra_args)
        return unravel(flat), state

    return GradientTransformationExtraArgs(init, update)


class _ParamsPlaceholder:
    """Stands for the parameters while ``tree_map_params`` runs ``init``: a
    pytree node with no leaves, so a map over the parameters gives another."""


tree.register_pytree_node(_ParamsPlaceholder, lambda p: ((), None),
                          lambda aux, children: _ParamsPlaceholder())


def tree_map_params(initable: Any, f: Callable[..., Any], state: Any, /, *rest: Any,
                    transform_non_params: Callable[..., Any] | None = None,
                    is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Map ``f`` over the leaves of the parts of an optimizer ``state``
    shaped like the parameters (the moments, ...), and
    ``transform_non_params`` (if given) over its other leaves (the counts).
    ``initable`` is the transformation (or its ``init``) that made the state;
    ``rest`` are trees shaped like the parameters passed to ``f`` alongside.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_adam()
    >>> state = opt.init({"w": mx.ones(2)})
    >>> state = optim.tree_map_params(opt, lambda v: v + 1, state)
    >>> state.mu["w"].tolist(), state.count.item()
    ([1.0, 1.0], 0)
    """
    init = getattr(initable, "init", initable)
    shaped = init(_ParamsPlaceholder())

    def is_placeholder(x: Any) -> bool:
        return isinstance(x, _ParamsPlaceholder)

    def each(marker: Any, value: Any, *others: Any) -> Any:
        if is_placeholder(marker):
            return tree.map(f, value, *others, is_leaf=is_leaf)
        return value if transform_non_params is None else transform_non_params(value)

    if rest:
        return tree.map(lambda m, v: each(m, v, *rest), shaped, state, is_leaf=is_placeholder)
    return tree.map(each, shaped, state, is_leaf=is_placeholder)


class SnapshotState(NamedTuple):
    """``measurement``: the measure's name -> its value on the last updates."""

    measurement: dict[str, Any]


def snapshot(measure_name: str, measure: Callable[[Any], Any]) -> GradientTransformation:
    """Keep ``measure(updates)`` in the state under ``measure_name`` (its
    value on the parameters after ``init``); the updates pass unchanged.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.snapshot("norm", optim.global_norm)
    >>> u, s = opt.update(mx.array([3.0, 4.0]), opt.init(mx.zeros(2)))
    >>> s.measurement["norm"].item()
    5.0
    """
    def init(params):
        return SnapshotState({measure_name: measure(params)})

    def update(updates, state, params=None):
        return updates, SnapshotState({measure_name: measure(updates)})

    return GradientTransformation(init, update)


class MonitorState(NamedTuple):
    """``measurements``: each measure's name -> its value on the last
    updates; ``measure_states``: the states of the measures that have one."""

    measurements: dict[str, Any]
    measure_states: tuple


def _as_measure(measure: Any) -> GradientTransformationExtraArgs:
    if isinstance(measure, GradientTransformation):
        return with_extra_args_support(measure)
    if not callable(measure):
        raise TypeError(f"monitor: each measure must be a function of the updates or a "
                        f"GradientTransformation, got {type(measure).__name__}")
    return with_extra_args_support(stateless(lambda updates, params: measure(updates)))


def monitor(measures: dict[str, Any]) -> GradientTransformationExtraArgs:
    """Record ``measures`` (name -> a function of the updates, or a
    transformation whose ``update`` returns the measurement, such as
    ``measure_with_ema``) in the state at each update; the updates pass
    unchanged.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.monitor({"norm": optim.global_norm})
    >>> u, s = opt.update(mx.array([3.0, 4.0]), opt.init(mx.zeros(2)))
    >>> s.measurements["norm"].item()
    5.0
    """
    names = list(measures)
    transforms = [_as_measure(measures[n]) for n in names]

    def init(params):
        return MonitorState({}, tuple(t.init(params) for t in transforms))

    def update(updates, state, params=None, **extra_args):
        values, states = {}, []
        for name, t, s in zip(names, transforms, state.measure_states):
            values[name], s = t.update(updates, s, params, **extra_args)
            states.append(s)
        return updates, MonitorState(values, tuple(states))

    return GradientTransformationExtraArgs(init, update)


def measure_with_ema(measure: Callable[[Any], Any], decay: float | Any, debias: bool = True,
                     accumulator_dtype: Any | None = None) -> GradientTransformationExtraArgs:
    """A measure for ``monitor``: ``update`` returns the exponential moving
    average (``ema``) of ``measure(updates)`` in place of the updates.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> m = optim.measure_with_ema(optim.global_norm, 0.5)
    >>> value, s = m.update(mx.array([3.0, 4.0]), m.init(mx.zeros(2)))
    >>> round(value.item(), 4)
    5.0
    """
    average = ema(decay, debias=debias, accumulator_dtype=accumulator_dtype)
    measured = chain(stateless(lambda updates, params: measure(updates)), average)

    def init(params):
        # The average is of the measurements, shaped like measure's result.
        return EmptyState(), average.init(measure(params))

    return with_extra_args_support(GradientTransformation(init, measured.update))


def per_example_layer_norm_clip(grads: Any, global_l2_norm_clip: float | Any,
                                uniform: bool = True) -> tuple[Any, Any]:
    """``per_example_global_norm_clip`` on each leaf (layer) alone: with
    ``uniform`` every layer's bound is ``global_l2_norm_clip / sqrt(layers)``,
    otherwise ``global_l2_norm_clip * sqrt(size / total size)`` of an
    example's gradient, so the bounds' global norm is ``global_l2_norm_clip``.
    Returns the summed clipped gradients and, per leaf, how many examples
    were clipped.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> total, clipped = optim.per_example_layer_norm_clip({"w": mx.array([[3.0, 4.0]])}, 1.0)
    >>> [round(x, 4) for x in total["w"].tolist()], clipped["w"].item()
    ([0.6, 0.8], 1)
    """
    leaves, treedef = tree.flatten(grads)
    if not leaves:
        raise ValueError("per_example_layer_norm_clip: grads has no leaves")
    sizes = [math.prod(g.shape[1:]) for g in leaves]
    if uniform:
        bounds = [global_l2_norm_clip / math.sqrt(len(leaves))] * len(leaves)
    else:
        bounds = [global_l2_norm_clip * math.sqrt(s / sum(sizes)) for s in sizes]
    pairs = [per_example_global_norm_clip(g, b) for g, b in zip(leaves, bounds)]
    return (tree.unflatten(treedef, [p[0] for p in pairs]),
            tree.unflatten(treedef, [p[1] for p in pairs]))


def power_iteration(matrix: Any | Callable[[Any], Any], *, v0: Any | None = None,
                    num_iters: int | Any = 100, error_tolerance: float | Any = 1e-6,
                    precision: Any = None, key: Any | None = None) -> tuple[Any, Any]:
    """The dominant eigenvalue of ``matrix`` (a square array or a function
    ``v -> matrix @ v`` on vectors or pytrees) and its unit eigenvector, by
    power iteration: ``v <- matrix @ v / |matrix @ v|``, the eigenvalue read
    as ``v . (matrix @ v)``, until ``num_iters`` steps or a relative change
    in it at most ``error_tolerance``. ``v0`` (normal noise from ``key``, by
    default ``random.key(0)``, for an array ``matrix``) is the start;
    ``precision`` is accepted for optax's signature (MLX's matmul has one).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> value, vector = optim.power_iteration(mx.array([[2.0, 0.0], [0.0, 1.0]]),
    ...                                       v0=mx.array([1.0, 1.0]))
    >>> round(value.item(), 4), [round(x, 3) for x in vector.tolist()]
    (2.0, [1.0, 0.0])
    """
    if callable(matrix):
        matvec = matrix
        if v0 is None:
            raise ValueError("power_iteration: v0 is required when matrix is a function")
    else:
        matrix = fnp.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"power_iteration: matrix must be a square 2-d array, got shape "
                             f"{matrix.shape}")

        def matvec(v: Any) -> Any:
            return fnp.matmul(matrix, v)

        if v0 is None:
            v0 = random.normal(random.key(0) if key is None else key, (matrix.shape[-1],),
                               matrix.dtype)

    def normalized(t: Any) -> Any:
        norm = fnp.sqrt(sum(fnp.sum(fnp.square(x)) for x in tree.leaves(t)))
        return tree.map(lambda x: x / norm, t)

    def vdot(a: Any, b: Any) -> Any:
        return sum(fnp.sum(x * y) for x, y in zip(tree.leaves(a), tree.leaves(b)))

    v = normalized(matvec(v0))
    first = tree.leaves(v)[0]
    zero = fnp.zeros((), first.dtype)

    def keep_going(carry):
        i, _, _, error = carry
        return (i < num_iters) & (error > error_tolerance)

    def step(carry):
        i, v, value, _ = carry
        product = matvec(v)
        new_value = vdot(v, product)
        error = fnp.abs(new_value - value) / fnp.abs(new_value)
        return i + 1, normalized(product), new_value, error

    start = (fnp.asarray(0, mx.int32), v, zero, fnp.asarray(fnp.inf, first.dtype))
    _, v, value, _ = lax.while_loop(keep_going, step, start)
    return value, v


class MultiNormalDiagFromLogScale:
    """A Gaussian with mean ``loc`` and independent coordinates of standard
    deviation ``exp(log_scale)`` (``multi_normal``)."""

    def __init__(self, loc: Any, log_scale: Any) -> None:
        self._mean = fnp.asarray(loc)
        self._log_scale = fnp.asarray(log_scale)
        self._scale = fnp.exp(self._log_scale)

    def sample(self, shape: tuple[int, ...], key: Any) -> Any:
        """``shape + loc.shape`` draws."""
        noise = random.normal(key, (*shape, *self._mean.shape), self._mean.dtype)
        return self._mean + self._scale * noise

    def log_prob(self, x: Any) -> Any:
        """The log density at ``x``, summed over the last axis."""
        z = (x - self._mean) / self._scale
        per_coordinate = -0.5 * fnp.square(z) - self._log_scale - 0.5 * math.log(2 * math.pi)
        return fnp.sum(per_coordinate, axis=-1)

    @property
    def log_scale(self) -> Any:
        return self._log_scale

    @property
    def params(self) -> list:
        return [self._mean, self._log_scale]


def multi_normal(loc: Any, log_scale: Any) -> MultiNormalDiagFromLogScale:
    """A diagonal Gaussian with mean ``loc`` and log standard deviations
    ``log_scale``: ``sample(shape, key)``, ``log_prob(x)``, ``params``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> d = optim.multi_normal(mx.zeros(2), mx.zeros(2))
    >>> round(d.log_prob(mx.zeros(2)).item(), 4)
    -1.8379
    """
    return MultiNormalDiagFromLogScale(loc, log_scale)
