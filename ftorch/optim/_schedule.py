"""Schedules: functions from the step count to a hyperparameter's value,
with optax's names, arguments and formulas.

A schedule takes the count as a Python number or an integer array (a traced
one inside ``ft.jit``) and returns an array; every choice it makes on the
count is an array operation, so a jitted step that evaluates it is traced
once. Schedules are elementwise: an array of counts gives the schedule at
each (``schedule(mx.arange(1000))`` to plot one). Pass one wherever a
learning rate is taken (``sgd(warmup_cosine_decay_schedule(...))``): it is
evaluated at the optimizer's update count.

From ``mlx.optimizers`` (whose optimizers, like these, evaluate a schedule
at the 0-based update count): ``step_decay(init, decay_rate, step_size)`` is
here under its name; the others are optax's, whose arguments differ:

- ``cosine_decay(init, decay_steps, end)`` is
  ``cosine_decay_schedule(init, decay_steps, alpha=end / init)``;
- ``linear_schedule(init, end, steps)`` takes the same arguments in the same
  order (optax calls ``steps`` ``transition_steps``);
- ``exponential_decay(init, decay_rate)`` is
  ``exponential_decay(init, transition_steps=1, decay_rate=decay_rate)``;
- ``join_schedules(schedules, boundaries)`` is the same.

Arguments are checked when the schedule is made, with a ``ValueError`` that
names the argument. Where optax documents a behaviour it is kept (a linear
or polynomial ``transition_steps`` of 0 holds ``init_value``: no warmup);
where optax's documentation calls a value invalid but its code quietly
falls back (``exponential_decay`` with ``transition_steps <= 0`` or
``decay_rate == 0``, a negative ``transition_begin``), or the value can only
be a mistake (a negative step count), this raises; so does a
``join_schedules`` whose boundaries do not fit its schedules (optax drops
the extra ones), and a ``warmup_cosine_decay_schedule`` whose
``decay_steps`` (the whole length) does not exceed ``warmup_steps``.

>>> import ftorch.optim as optim
>>> lr = optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=10, decay_steps=110)
>>> [round(lr(n).item(), 3) for n in (0, 5, 10, 60, 110, 200)]
[0.0, 0.5, 1.0, 0.5, 0.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.optim._base import Schedule

__all__ = [
    "constant_schedule", "polynomial_schedule", "linear_schedule",
    "piecewise_constant_schedule", "exponential_decay", "cosine_decay_schedule",
    "piecewise_interpolate_schedule", "linear_onecycle_schedule", "cosine_onecycle_schedule",
    "warmup_constant_schedule", "warmup_cosine_decay_schedule",
    "warmup_exponential_decay_schedule", "sgdr_schedule", "join_schedules", "step_decay",
]


def _steps(fname: str, name: str, value: Any, *, positive: bool) -> None:
    """A step-count argument: a real number, positive or non-negative."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{fname}: {name} must be an int, got {type(value).__name__}: "
                        f"{value!r}")
    if positive and not value > 0:
        raise ValueError(f"{fname}: {name} must be positive, got {value}")
    if not positive and value < 0:
        raise ValueError(f"{fname}: {name} must be non-negative, got {value}")


def _float_count(count: Any) -> Any:
    # float32 holds every count below 2**24 exactly; the formulas divide it.
    return fnp.asarray(count, mx.float32)


def _int_count(count: Any) -> Any:
    return fnp.asarray(count)


def constant_schedule(value: float | int | Any) -> Schedule:
    """``value`` at every step.

    >>> import ftorch.optim as optim
    >>> optim.constant_schedule(0.5)(100).item()
    0.5
    """
    return lambda count: fnp.full(getattr(count, "shape", ()), value)


def polynomial_schedule(init_value: float, end_value: float, power: float,
                        transition_steps: int, transition_begin: int = 0) -> Schedule:
    """``init_value`` for ``transition_begin`` steps, then
    ``(init_value - end_value) * (1 - t / transition_steps) ** power +
    end_value`` over the next ``transition_steps`` (``t`` counted from
    ``transition_begin``), then ``end_value``. A ``transition_steps`` of 0
    holds ``init_value`` throughout (as optax).

    >>> import ftorch.optim as optim
    >>> s = optim.polynomial_schedule(1.0, 0.0, power=2, transition_steps=10)
    >>> [round(s(n).item(), 4) for n in (0, 5, 10, 20)]
    [1.0, 0.25, 0.0, 0.0]
    """
    fname = "polynomial_schedule"
    _steps(fname, "transition_steps", transition_steps, positive=False)
    _steps(fname, "transition_begin", transition_begin, positive=False)
    if transition_steps == 0:
        return constant_schedule(float(init_value) if isinstance(init_value, int) else init_value)

    def schedule(count):
        t = fnp.clip(_float_count(count) - transition_begin, 0, transition_steps)
        frac = 1 - t / transition_steps
        return (init_value - end_value) * (frac if power == 1 else frac ** power) + end_value

    return schedule


def linear_schedule(init_value: float, end_value: float, transition_steps: int,
                    transition_begin: int = 0) -> Schedule:
    """From ``init_value`` to ``end_value`` linearly over
    ``transition_steps``, starting at ``transition_begin``; constant before
    and after (``polynomial_schedule`` of power 1).

    >>> import ftorch.optim as optim
    >>> s = optim.linear_schedule(1.0, 0.0, transition_steps=4, transition_begin=2)
    >>> [s(n).item() for n in range(8)]
    [1.0, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def piecewise_constant_schedule(init_value: float,
                                boundaries_and_scales: Mapping[int, float] | None = None
                                ) -> Schedule:
    """``init_value`` times the product of the scales of every boundary the
    count has reached (``count >= boundary``). Scales must be non-negative.

    >>> import ftorch.optim as optim
    >>> s = optim.piecewise_constant_schedule(1.0, {3: 0.5, 6: 0.1})
    >>> [round(s(n).item(), 3) for n in (0, 2, 3, 5, 6, 9)]
    [1.0, 1.0, 0.5, 0.5, 0.05, 0.05]
    """
    items = sorted((boundaries_and_scales or {}).items())
    for boundary, scale in items:
        _steps("piecewise_constant_schedule", "a boundary", boundary, positive=False)
        if not scale >= 0:
            raise ValueError(f"piecewise_constant_schedule: the scale at boundary {boundary} "
                             f"must be non-negative, got {scale}")

    def schedule(count):
        c = _float_count(count)
        value = fnp.full(c.shape, init_value, mx.float32)
        for boundary, scale in items:
            value = fnp.where(c < boundary, value, value * scale)
        return value

    return schedule


def exponential_decay(init_value: float, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value: float | None = None) -> Schedule:
    """``init_value * decay_rate ** ((count - transition_begin) /
    transition_steps)`` from ``transition_begin`` on (``init_value``
    before); with ``staircase`` the exponent is floored, a step every
    ``transition_steps``. ``end_value`` bounds the value (below when
    ``decay_rate < 1``, above when it grows).

    ``transition_steps`` must be positive and ``decay_rate`` non-zero: a
    ``ValueError``, where optax quietly returns a constant schedule.

    >>> import ftorch.optim as optim
    >>> s = optim.exponential_decay(1.0, transition_steps=2, decay_rate=0.5, staircase=True)
    >>> [s(n).item() for n in range(6)]
    [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """
    fname = "exponential_decay"
    _steps(fname, "transition_steps", transition_steps, positive=True)
    _steps(fname, "transition_begin", transition_begin, positive=False)
    if decay_rate == 0:
        raise ValueError(f"{fname}: decay_rate must not be zero")
    clip = None if end_value is None else (fnp.maximum if decay_rate < 1 else fnp.minimum)

    def schedule(count):
        elapsed = _float_count(count) - transition_begin
        p = elapsed / transition_steps
        if staircase:
            p = fnp.floor(p)
        value = fnp.where(elapsed <= 0, init_value, init_value * fnp.power(decay_rate, p))
        return value if clip is None else clip(value, end_value)

    return schedule


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0,
                          exponent: float = 1.0) -> Schedule:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over
    ``decay_steps`` (positive), constant after:
    ``init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t / decay_steps))) **
    exponent + alpha)`` with ``t = min(count, decay_steps)``.

    >>> import ftorch.optim as optim
    >>> s = optim.cosine_decay_schedule(1.0, decay_steps=10, alpha=0.1)
    >>> [round(s(n).item(), 4) for n in (0, 5, 10, 15)]
    [1.0, 0.55, 0.1, 0.1]
    """
    _steps("cosine_decay_schedule", "decay_steps", decay_steps, positive=True)

    def schedule(count):
        t = fnp.minimum(_float_count(count), decay_steps)
        cosine = 0.5 * (1 + fnp.cos((math.pi / decay_steps) * t))
        if not (isinstance(exponent, Real) and exponent == 1):
            cosine = cosine ** exponent
        return init_value * ((1 - alpha) * cosine + alpha)

    return schedule


def _linear_interpolate(start: Any, end: Any, pct: Any) -> Any:
    return (end - start) * pct + start


def _cosine_interpolate(start: Any, end: Any, pct: Any) -> Any:
    return end + (start - end) / 2.0 * (fnp.cos(math.pi * pct) + 1)


def piecewise_interpolate_schedule(interpolate_type: str, init_value: float,
                                   boundaries_and_scales: Mapping[int, float] | None = None
                                   ) -> Schedule:
    """At boundary ``b_i`` the value is ``init_value`` times the scales of
    the boundaries up to ``b_i``; between boundaries it is interpolated
    (``interpolate_type`` ``"linear"`` or ``"cosine"``) from one boundary's
    value to the next, from ``init_value`` at step 0; constant after the last.

    >>> import ftorch.optim as optim
    >>> s = optim.piecewise_interpolate_schedule("linear", 1.0, {4: 3.0, 8: 0.5})
    >>> [s(n).item() for n in (0, 2, 4, 6, 8, 10)]
    [1.0, 2.0, 3.0, 2.25, 1.5, 1.5]
    """
    fname = "piecewise_interpolate_schedule"
    interpolate = {"linear": _linear_interpolate, "cosine": _cosine_interpolate}.get(
        interpolate_type)
    if interpolate is None:
        raise ValueError(f"{fname}: interpolate_type must be 'linear' or 'cosine', got "
                         f"{interpolate_type!r}")
    items = sorted((boundaries_and_scales or {}).items())
    for boundary, scale in items:
        _steps(fname, "a boundary", boundary, positive=False)
        if not scale >= 0:
            raise ValueError(f"{fname}: the scale at boundary {boundary} must be "
                             f"non-negative, got {scale}")
    bounds = [0] + [b for b, _ in items]
    values = [init_value]
    for _, scale in items:
        values.append(values[-1] * scale)

    def schedule(count):
        c = _float_count(count)
        value = fnp.full(c.shape, values[-1], mx.float32)
        # Later intervals first, so each count ends with the one it lies in.
        for i in reversed(range(len(bounds) - 1)):
            size = max(bounds[i + 1] - bounds[i], 1)
            pct = fnp.clip((c - bounds[i]) / size, 0.0, 1.0)
            value = fnp.where(c < bounds[i + 1], interpolate(values[i], values[i + 1], pct),
                              value)
        return value

    return schedule


def linear_onecycle_schedule(transition_steps: int, peak_value: float, pct_start: float = 0.3,
                             pct_final: float = 0.85, div_factor: float = 25.0,
                             final_div_factor: float = 1e4) -> Schedule:
    """The one-cycle policy with linear phases: from ``peak_value /
    div_factor`` up to ``peak_value`` by ``pct_start * transition_steps``,
    back down by ``pct_final * transition_steps``, then down to
    ``peak_value / div_factor / final_div_factor`` at ``transition_steps``.

    >>> import ftorch.optim as optim
    >>> s = optim.linear_onecycle_schedule(100, peak_value=1.0)
    >>> [round(s(n).item(), 4) for n in (0, 30, 85, 100)]
    [0.04, 1.0, 0.04, 0.0]
    """
    _steps("linear_onecycle_schedule", "transition_steps", transition_steps, positive=True)
    return piecewise_interpolate_schedule("linear", peak_value / div_factor, {
        int(pct_start * transition_steps): div_factor,
        int(pct_final * transition_steps): 1.0 / div_factor,
        transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(transition_steps: int, peak_value: float, pct_start: float = 0.3,
                             div_factor: float = 25.0, final_div_factor: float = 1e4
                             ) -> Schedule:
    """The one-cycle policy with cosine phases: from ``peak_value /
    div_factor`` up to ``peak_value`` by ``pct_start * transition_steps``,
    then down to ``peak_value / div_factor / final_div_factor`` at
    ``transition_steps``.

    >>> import ftorch.optim as optim
    >>> s = optim.cosine_onecycle_schedule(100, peak_value=1.0)
    >>> [round(s(n).item(), 4) for n in (0, 15, 30, 100)]
    [0.04, 0.52, 1.0, 0.0]
    """
    _steps("cosine_onecycle_schedule", "transition_steps", transition_steps, positive=True)
    return piecewise_interpolate_schedule("cosine", peak_value / div_factor, {
        int(pct_start * transition_steps): div_factor,
        int(transition_steps): 1.0 / (div_factor * final_div_factor)})


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """``schedules[0]`` until ``boundaries[0]``, then ``schedules[1]``
    counted from that boundary (it sees ``count - boundaries[0]``), and so
    on. There is one boundary fewer than schedules, in non-decreasing order.

    >>> import ftorch.optim as optim
    >>> s = optim.join_schedules([optim.constant_schedule(1.0),
    ...                           optim.linear_schedule(1.0, 0.0, 4)], [2])
    >>> [s(n).item() for n in range(7)]
    [1.0, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0]
    """
    fname = "join_schedules"
    schedules, boundaries = list(schedules), list(boundaries)
    if not schedules:
        raise ValueError(f"{fname}: give at least one schedule")
    if len(boundaries) != len(schedules) - 1:
        raise ValueError(f"{fname}: {len(schedules)} schedules need {len(schedules) - 1} "
                         f"boundaries, got {len(boundaries)}")
    for i, s in enumerate(schedules):
        if not callable(s):
            raise TypeError(f"{fname}: schedules[{i}] must be callable, got "
                            f"{type(s).__name__}")
    for b in boundaries:
        _steps(fname, "a boundary", b, positive=False)
    if any(b > c for b, c in zip(boundaries, boundaries[1:])):
        raise ValueError(f"{fname}: boundaries must be non-decreasing, got {boundaries}")

    def schedule(count):
        value = schedules[0](count)
        for boundary, s in zip(boundaries, schedules[1:]):
            value = fnp.where(fnp.asarray(count) < boundary, value, s(count - boundary))
        return value

    return schedule


def warmup_constant_schedule(init_value: float, peak_value: float,
                             warmup_steps: int) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value`` over
    ``warmup_steps``, then ``peak_value``.

    >>> import ftorch.optim as optim
    >>> s = optim.warmup_constant_schedule(0.0, 1.0, warmup_steps=4)
    >>> [s(n).item() for n in (0, 2, 4, 100)]
    [0.0, 0.5, 1.0, 1.0]
    """
    return linear_schedule(init_value, peak_value, warmup_steps)


def warmup_cosine_decay_schedule(init_value: float, peak_value: float, warmup_steps: int,
                                 decay_steps: int, end_value: float = 0.0,
                                 exponent: float = 1.0) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value`` over
    ``warmup_steps``, then cosine decay to ``end_value`` at ``decay_steps``
    (which counts the warmup: it must exceed ``warmup_steps``), constant
    after.

    >>> import ftorch.optim as optim
    >>> s = optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=2, decay_steps=6,
    ...                                        end_value=0.1)
    >>> [round(s(n).item(), 3) for n in range(8)]
    [0.0, 0.5, 1.0, 0.868, 0.55, 0.232, 0.1, 0.1]
    """
    fname = "warmup_cosine_decay_schedule"
    _steps(fname, "warmup_steps", warmup_steps, positive=False)
    _steps(fname, "decay_steps", decay_steps, positive=True)
    if not decay_steps > warmup_steps:
        raise ValueError(f"{fname}: decay_steps (the whole schedule, warmup included) must "
                         f"exceed warmup_steps, got decay_steps={decay_steps}, "
                         f"warmup_steps={warmup_steps}")
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    return join_schedules([
        linear_schedule(init_value, peak_value, warmup_steps),
        cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent),
    ], [warmup_steps])


def warmup_exponential_decay_schedule(init_value: float, peak_value: float, warmup_steps: int,
                                      transition_steps: int, decay_rate: float,
                                      transition_begin: int = 0, staircase: bool = False,
                                      end_value: float | None = None) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value`` over
    ``warmup_steps``, then ``exponential_decay`` from ``peak_value``
    (counted from the end of the warmup).

    >>> import ftorch.optim as optim
    >>> s = optim.warmup_exponential_decay_schedule(0.0, 1.0, 2, transition_steps=1,
    ...                                             decay_rate=0.5)
    >>> [s(n).item() for n in range(5)]
    [0.0, 0.5, 1.0, 0.5, 0.25]
    """
    _steps("warmup_exponential_decay_schedule", "warmup_steps", warmup_steps, positive=False)
    return join_schedules([
        linear_schedule(init_value, peak_value, warmup_steps),
        exponential_decay(peak_value, transition_steps, decay_rate, transition_begin,
                          staircase, end_value),
    ], [warmup_steps])


def sgdr_schedule(cosine_kwargs: Iterable[Mapping[str, Any]]) -> Schedule:
    """Warm restarts (SGDR): ``warmup_cosine_decay_schedule`` cycles one
    after another, one per dict of its arguments, each lasting its
    ``decay_steps``.

    >>> import ftorch.optim as optim
    >>> cycle = dict(init_value=0.0, peak_value=1.0, warmup_steps=1, decay_steps=3)
    >>> s = optim.sgdr_schedule([cycle, cycle])
    >>> [round(s(n).item(), 2) for n in range(6)]
    [0.0, 1.0, 0.5, 0.0, 1.0, 0.5]
    """
    schedules, boundaries, step = [], [], 0
    for kwargs in cosine_kwargs:
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        step += kwargs["decay_steps"]
        boundaries.append(step)
    return join_schedules(schedules, boundaries[:-1])


def step_decay(init: float, decay_rate: float, step_size: int) -> Schedule:
    """``init * decay_rate ** (count // step_size)``: ``mlx.optimizers``'
    ``step_decay`` (``exponential_decay(init, step_size, decay_rate,
    staircase=True)`` in optax's terms).

    >>> import ftorch.optim as optim
    >>> s = optim.step_decay(1.0, 0.5, step_size=3)
    >>> [s(n).item() for n in range(7)]
    [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]
    """
    _steps("step_decay", "step_size", step_size, positive=True)

    def schedule(count):
        return init * fnp.power(float(decay_rate), fnp.floor_divide(_int_count(count),
                                                                    step_size))

    return schedule
