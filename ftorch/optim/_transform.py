"""The building blocks of the optimizers: gradient transformations that
scale, accumulate or clip updates (optax's ``scale_by_*``, ``trace``,
``clip``, ...).

Hyperparameters may be Python numbers or arrays (``inject_hyperparams``
passes arrays); each is cast to the dtype of the leaf it meets
(``cast_like``), so updates and moments keep their dtypes step after step
(a jitted step sees the same state signature every time).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.optim._base import (
    EmptyState,
    GradientTransformation,
    ScalarOrSchedule,
    cast_like,
    safe_increment,
)

__all__ = [
    "scale", "scale_by_learning_rate", "scale_by_schedule", "ScaleByScheduleState",
    "trace", "TraceState",
]


def scale(step_size: float | Any) -> GradientTransformation:
    """Multiply updates by ``step_size``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.scale(-2.0).update(mx.array([1.0, 3.0]), optim.EmptyState())[0].tolist()
    [-2.0, -6.0]
    """
    def update(updates, state, params=None):
        return tree.map(lambda u: u * cast_like(step_size, u), updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


class ScaleByScheduleState(NamedTuple):
    count: Any  # int32: updates so far


def scale_by_schedule(step_size_fn: Any) -> GradientTransformation:
    """Multiply updates by ``step_size_fn(count)``, the step counting
    updates so far.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_schedule(lambda n: 1.0 / (n + 1))
    >>> s = opt.init(mx.zeros(1))
    >>> u, s = opt.update(mx.ones(1), s); u2, s = opt.update(mx.ones(1), s)
    >>> u.item(), u2.item()
    (1.0, 0.5)
    """
    def init(params):
        return ScaleByScheduleState(mx.array(0, mx.int32))

    def update(updates, state, params=None):
        step_size = step_size_fn(state.count)
        updates = tree.map(lambda u: u * cast_like(step_size, u), updates)
        return updates, ScaleByScheduleState(safe_increment(state.count))

    return GradientTransformation(init, update)


def scale_by_learning_rate(learning_rate: ScalarOrSchedule, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Multiply updates by the learning rate (a number, an array or a
    schedule), negated by default: a descent step.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.scale_by_learning_rate(0.1).update(mx.array(2.0), optim.EmptyState())[0].item()
    -0.20000000298023224
    """
    sign = -1.0 if flip_sign else 1.0
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    return scale(sign * learning_rate)


class TraceState(NamedTuple):
    trace: Any  # the momentum buffer, shaped like the parameters


def trace(decay: float | Any, nesterov: bool = False,
          accumulator_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """Momentum: ``t = decay * t + g``; the update is ``t``, or
    ``decay * t + g`` with ``nesterov``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.trace(0.5)
    >>> s = opt.init(mx.zeros(1))
    >>> u, s = opt.update(mx.ones(1), s); u, s = opt.update(mx.ones(1), s)
    >>> u.item()
    1.5
    """
    def init(params):
        return TraceState(tree.map(
            lambda p: fnp.zeros_like(p, dtype=accumulator_dtype or p.dtype), params))

    def update(updates, state, params=None):
        new = tree.map(lambda g, t: fnp.astype(g + cast_like(decay, t) * t, t.dtype),
                       updates, state.trace)
        if nesterov:
            updates = tree.map(lambda g, t: g + cast_like(decay, t) * t, updates, new)
        else:
            updates = tree.map(lambda g, t: fnp.astype(t, g.dtype), updates, new)
        return updates, TraceState(new)

    return GradientTransformation(init, update)
