"""Hyperparameters as arrays in the optimizer state (optax's
``inject_hyperparams``).

The wrapped transformation is rebuilt at each update from the state's
hyperparameter arrays, so changing one (``state.hyperparams["learning_rate"]
= mx.array(1e-4)``) changes no Python value a jitted step was traced with:
no retrace. A schedule given for a hyperparameter is evaluated at the step
count and its current value stored in the state, where it can be logged.
Every named optimizer of ``ftorch.optim`` is built this way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch.core import Tracer
from ftorch.optim._base import GradientTransformation, OptState, safe_increment

__all__ = ["InjectHyperparamsState", "inject_hyperparams"]


class InjectHyperparamsState(NamedTuple):
    """``count``: updates so far (int32); ``hyperparams``: name -> array (the
    value in use at the last update); ``inner_state``: the wrapped
    transformation's state."""

    count: Any
    hyperparams: dict[str, Any]
    inner_state: OptState


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float, np.number, np.ndarray, mx.array, Tracer))


def inject_hyperparams(inner_factory: Callable[..., GradientTransformation],
                       static_args: str | Iterable[str] = (),
                       hyperparam_dtype: mx.Dtype | None = None,
                       hyperparams: Iterable[str] | None = None,
                       ) -> Callable[..., GradientTransformation]:
    """Wrap ``inner_factory`` so that its numeric arguments (and schedules)
    live in the state as arrays, as ``optax.inject_hyperparams``.

    Without ``hyperparams``, every argument that is a number or an array
    becomes one, and every callable a schedule, except ``static_args``
    (name them for callables that are not schedules, such as masks, and for
    numbers the factory uses as Python values). With ``hyperparams``, only
    those names do. Floating values are stored in ``hyperparam_dtype``
    (default float32), integers as int32.

    The named optimizers (``sgd``, ``adam``, ...) are built this way
    already; wrap your own factories.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> descent = lambda learning_rate: optim.scale(-learning_rate)
    >>> opt = optim.inject_hyperparams(descent)(learning_rate=0.1)
    >>> state = opt.init(mx.zeros(2))
    >>> state.hyperparams["learning_rate"] = mx.array(1.0)
    >>> opt.update(mx.ones(2), state)[0].tolist()
    [-1.0, -1.0]
    """
    static = {static_args} if isinstance(static_args, str) else set(static_args)
    names = None if hyperparams is None else set(hyperparams)
    signature = inspect.signature(inner_factory)

    def as_array(value: Any) -> Any:
        if isinstance(value, (mx.array, Tracer)):
            return value
        dtype = mx.int32 if isinstance(value, int) else (hyperparam_dtype or mx.float32)
        return mx.array(value, dtype)

    def factory(*args: Any, **kwargs: Any) -> GradientTransformation:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{getattr(inner_factory, '__name__', 'optimizer')}: {e}") from None
        bound.apply_defaults()
        fixed, numeric, schedules = {}, {}, {}
        for name, value in bound.arguments.items():
            chosen = name not in static and (names is None or name in names)
            if chosen and _is_number(value):
                numeric[name] = as_array(value)
            elif chosen and callable(value) and not isinstance(value, type):
                schedules[name] = value
            else:
                fixed[name] = value

        def current(count: Any) -> dict[str, Any]:
            values = dict(numeric)
            for name, schedule in schedules.items():
                v = schedule(count)
                values[name] = fnp.astype(v, hyperparam_dtype or mx.float32) if not isinstance(
                    v, int) else mx.array(v, mx.int32)
            return values

        def init(params):
            count = mx.array(0, mx.int32)
            values = current(count)
            inner = inner_factory(**fixed, **values)
            return InjectHyperparamsState(count, values, inner.init(params))

        def update(updates, state, params=None):
            values = {**state.hyperparams, **{k: v for k, v in current(state.count).items()
                                             if k in schedules}}
            inner = inner_factory(**fixed, **values)
            updates, inner_state = inner.update(updates, state.inner_state, params)
            return updates, InjectHyperparamsState(safe_increment(state.count), values,
                                                   inner_state)

        return GradientTransformation(init, update)

    factory.__name__ = getattr(inner_factory, "__name__", "factory")
    factory.__doc__ = inner_factory.__doc__
    return factory
