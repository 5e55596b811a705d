"""Hyperparameters as arrays in the optimizer state (optax's
``inject_hyperparams``).

The wrapped transformation is rebuilt at each update from the state's
hyperparameters, the one place its update reads them: changing one
(``state.hyperparams["learning_rate"] = mx.array(1e-4)``, or a new state
with another ``hyperparams`` dict) changes no Python value a jitted step was
traced with, so there is no retrace. A schedule given for a hyperparameter
is evaluated at the step count and its current value stored in the state,
where it can be logged (a value set there by hand is replaced at the next
update, as in optax). Every named optimizer of ``ftorch.optim`` is built
this way, and ``inject_hyperparams(optim.adam)`` is ``adam`` whose every
number is in the state: an injected optimizer built inside another's factory
keeps no hyperparameters of its own, so there is never a second, stale copy.
"""

from __future__ import annotations

import contextvars
import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch.core import Tracer
from ftorch.optim._base import (
    GradientTransformation,
    OptState,
    _describe_state,
    safe_increment,
)

__all__ = ["InjectHyperparamsState", "inject_hyperparams"]


class InjectHyperparamsState(NamedTuple):
    """``count``: updates so far (int32); ``hyperparams``: name -> array (the
    value the next update uses; for a schedule, the value the last one
    used); ``inner_state``: the wrapped transformation's state. The named
    optimizers' states are subclasses named after them (``AdamState``, ...),
    so that an update given another optimizer's state can say whose it is."""

    count: Any
    hyperparams: dict[str, Any]
    inner_state: OptState


_STATE_TYPES: dict[str, type] = {}


def _optimizer_state(name: str, type_name: str, module: str) -> type:
    """An ``InjectHyperparamsState`` subclass for ``name``'s states, importable
    as ``module.type_name`` (a checkpoint names it): whose state it is is in
    its type, so an update given another optimizer's state can say whose."""
    cls = type(type_name, (InjectHyperparamsState,), {
        "__slots__": (), "__module__": module, "optimizer": name,
        "__doc__": f"The state of ``{name}``: an ``InjectHyperparamsState``."})
    _STATE_TYPES[name] = cls
    return cls


# Set while an injected factory builds its transformation: an injected
# factory called then (``inject_hyperparams(optim.adam)``, or an alias inside
# a user's factory) returns its plain transformation, whose values come from
# the enclosing state.
_BUILDING = contextvars.ContextVar("ftorch.optim.inject_hyperparams.building", default=False)


_INIT = ("pass the state that this optimizer's init(params) returned, or that its last update "
         "did")


def _build(inner_factory: Callable[..., GradientTransformation],
           kwargs: dict[str, Any]) -> GradientTransformation:
    token = _BUILDING.set(True)
    try:
        return inner_factory(**kwargs)
    finally:
        _BUILDING.reset(token)


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float, np.number, np.ndarray, mx.array, Tracer))


def _may_be_none(param: inspect.Parameter) -> bool:
    """Whether the factory declares that ``param`` may be None (a default of
    None, or an annotation that allows it)."""
    if param.default is None:
        return True
    annotation = param.annotation
    if isinstance(annotation, str):  # postponed annotations
        return "None" in annotation or "Optional" in annotation
    return type(None) in typing.get_args(annotation)


def _check_value(where: str, value: Any, schedule_ok: bool = True) -> None:
    """A hyperparameter's value must be a real scalar (a number or a 0-d
    array)."""
    if not _is_number(value):
        kinds = ("a number, a scalar array or a schedule (a function of the step count)"
                 if schedule_ok else "a number or a scalar array")
        got = "None" if value is None else f"{type(value).__name__}: {value!r}"
        raise TypeError(f"{where} must be {kinds}, got {got}")
    if getattr(value, "ndim", 0) != 0:
        raise ValueError(f"{where} must be a scalar, got an array of shape "
                         f"{tuple(value.shape)}")


def inject_hyperparams(inner_factory: Callable[..., GradientTransformation],
                       static_args: str | Iterable[str] = (),
                       hyperparam_dtype: mx.Dtype | None = None,
                       hyperparams: Iterable[str] | None = None, *,
                       name: str | None = None,
                       ) -> Callable[..., GradientTransformation]:
    """Wrap ``inner_factory`` so that its numeric arguments (and schedules)
    live in the state as arrays, as ``optax.inject_hyperparams``.

    Without ``hyperparams``, every argument that is a number or an array
    becomes one, and every callable a schedule, except ``static_args``
    (name them for callables that are not schedules, such as masks, and for
    numbers the factory uses as Python values). With ``hyperparams``, only
    those names do, and each must be given a number, a scalar array or a
    schedule (or None where ``inner_factory``'s signature allows it: a
    default of None or an optional annotation); anything else is a
    ``TypeError`` when the optimizer is built. Floating values are stored in
    ``hyperparam_dtype`` (default float32), integers as int32. ``name``
    (default: the factory's ``__name__``) is the optimizer's name in errors.

    The state's ``hyperparams`` are the values the update uses: set one to
    a number or a scalar array between steps. A name the optimizer does not
    inject (a misspelling, or an argument it keeps fixed), a missing one, or
    a value that is not a number is an error at the next update, as are
    ``static_args`` or ``hyperparams`` that name no argument of
    ``inner_factory`` (when it is wrapped).

    The named optimizers (``sgd``, ``adam``, ...) are built this way
    already; wrapping one again (``inject_hyperparams(optim.adam)``, as
    optax is used) injects its other numbers too (``eps_root``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> descent = lambda learning_rate: optim.scale(-learning_rate)
    >>> opt = optim.inject_hyperparams(descent)(learning_rate=0.1)
    >>> state = opt.init(mx.zeros(2))
    >>> state.hyperparams["learning_rate"] = mx.array(1.0)
    >>> opt.update(mx.ones(2), state)[0].tolist()
    [-1.0, -1.0]
    """
    fname = name or getattr(inner_factory, "__name__", "inject_hyperparams")
    static = {static_args} if isinstance(static_args, str) else set(static_args)
    names = None if hyperparams is None else set(hyperparams)
    signature = inspect.signature(inner_factory)
    arguments = signature.parameters
    if not any(p.kind is p.VAR_KEYWORD for p in arguments.values()):
        for arg, given in (("static_args", static), ("hyperparams", names or set())):
            unknown = sorted(given - set(arguments))
            if unknown:
                raise ValueError(f"inject_hyperparams: {arg} names {unknown}, which "
                                 f"{fname} does not take (its arguments: {list(arguments)})")

    def as_array(value: Any) -> Any:
        if isinstance(value, (mx.array, Tracer)):
            return value
        dtype = mx.int32 if isinstance(value, (int, np.integer)) or (
            isinstance(value, np.ndarray) and value.dtype.kind in "iu") else (
            hyperparam_dtype or mx.float32)
        return mx.array(value, dtype)

    def split(bound: inspect.BoundArguments) -> tuple[dict, dict, dict]:
        """The arguments as (fixed, numeric, schedules), the chosen ones checked."""
        fixed, numeric, schedules = {}, {}, {}
        for arg, value in bound.arguments.items():
            chosen = arg not in static and (names is None or arg in names)
            if chosen and _is_number(value):
                _check_value(f"{fname}: {arg}", value)
                numeric[arg] = as_array(value)
            elif chosen and callable(value) and not isinstance(value, type):
                schedules[arg] = value
            elif names is not None and chosen and not (value is None and _may_be_none(
                    arguments[arg])):
                _check_value(f"{fname}: {arg}", value)  # raises: not a number
            else:
                fixed[arg] = value
        return fixed, numeric, schedules

    def factory(*args: Any, **kwargs: Any) -> GradientTransformation:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{fname}: {e}") from None
        bound.apply_defaults()
        fixed, numeric, schedules = split(bound)
        if _BUILDING.get():  # inside an injected factory: its state holds the values
            return inner_factory(*bound.args, **bound.kwargs)
        expected = numeric.keys() | schedules.keys()
        state_type = _STATE_TYPES.get(fname, InjectHyperparamsState)

        def scheduled(count: Any, check: bool = False) -> dict[str, Any]:
            values = {}
            for arg, schedule in schedules.items():
                v = schedule(count)
                if check:
                    _check_value(f"{fname}: the value of the schedule given for {arg}", v,
                                 schedule_ok=False)
                values[arg] = (mx.array(v, mx.int32) if isinstance(v, int) and not isinstance(
                    v, bool) else fnp.astype(v, hyperparam_dtype or mx.float32))
            return values

        def init(params):
            count = mx.array(0, mx.int32)
            values = {**numeric, **scheduled(count, check=True)}
            inner = _build(inner_factory, {**fixed, **values})
            return state_type(count, values, inner.init(params))

        # Built once now, so that a bad argument of a factory it calls (an
        # optimizer inside) is an error here rather than at init.
        _build(inner_factory, {**fixed, **numeric, **scheduled(mx.array(0, mx.int32), True)})

        def read(state: Any) -> dict[str, Any]:
            """The state's hyperparameters as arrays, with the schedules' values
            at its count; an error naming the mistake if it is not this
            optimizer's state."""
            if not isinstance(state, InjectHyperparamsState):
                raise TypeError(f"{fname}.update: the state is {_describe_state(state)}, not "
                                f"the state of {fname}; {_INIT}")
            hp = state.hyperparams
            if not isinstance(hp, dict) or hp.keys() != expected:
                raise TypeError(mismatch(state))
            values = {}
            for arg, value in hp.items():
                if arg not in schedules:
                    _check_value(f"{fname}.update: state.hyperparams[{arg!r}]", value,
                                 schedule_ok=False)
                    values[arg] = as_array(value)
            return {**values, **scheduled(state.count)}

        def mismatch(state: InjectHyperparamsState) -> str:
            hp, owner = state.hyperparams, getattr(type(state), "optimizer", fname)
            if not isinstance(hp, dict):
                return (f"{fname}.update: state.hyperparams must be a dict name -> value, got "
                        f"{type(hp).__name__}; {_INIT}")
            if owner != fname:
                return (f"{fname}.update: the state is the state of {owner} (hyperparameters "
                        f"{sorted(hp)}), not of {fname} ({sorted(expected)}); {_INIT}")
            parts = []
            for arg in sorted(hp.keys() - expected):
                if arg in fixed:
                    parts.append(f"{arg!r} is fixed in this {fname} (built with {arg}="
                                 f"{fixed[arg]!r}): build it with a number for {arg} to set "
                                 "it in the state")
                else:
                    parts.append(f"{arg!r} is not a hyperparameter of {fname}")
            missing = sorted(expected - hp.keys())
            if missing:
                parts.append(f"{missing} {'is' if len(missing) == 1 else 'are'} missing")
            return (f"{fname}.update: state.hyperparams does not fit {fname}: "
                    f"{'; '.join(parts)} (its hyperparameters: {sorted(expected)})")

        def update(updates, state, params=None):
            values = read(state)
            inner = _build(inner_factory, {**fixed, **values})
            try:
                updates, inner_state = inner.update(updates, state.inner_state, params)
            except (TypeError, ValueError) as e:
                if type(e) not in (TypeError, ValueError):  # ftorch's own, with their fields
                    raise
                owner = getattr(type(state), "optimizer", fname)
                message = (f"{fname}.update: {e}" if owner == fname else
                           f"{fname}.update: the state is the state of {owner}, not of {fname} "
                           f"({e})")
                raise type(e)(message).with_traceback(e.__traceback__) from None
            # In the state's own type: a jitted step sees the same structure again.
            return updates, type(state)(safe_increment(state.count), values, inner_state)

        return GradientTransformation(init, update)

    factory.__name__ = getattr(inner_factory, "__name__", "factory")
    factory.__doc__ = inner_factory.__doc__
    return factory

