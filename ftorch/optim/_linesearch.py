"""Line searches, as optax's: transformations that scale the update
direction by a step size found along it, evaluating the objective with the
``value_fn`` (and ``value``, ``grad`` at the current parameters) given to
``update`` as extra arguments (``GradientTransformationExtraArgs``).

The searches are ``ftorch.lax.while_loop``s, so a step that uses them is
jittable; each iteration is one evaluation of ``value_fn`` (backtracking)
or of its value and gradient (zoom).

>>> import ftorch as ft, ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
>>> f = lambda p: fnp.sum((p - 3.0) ** 2)
>>> opt = optim.chain(optim.sgd(1.0), optim.scale_by_backtracking_linesearch(15))
>>> p = mx.zeros(2)
>>> state = opt.init(p)
>>> value, grad = ft.value_and_grad(f)(p)
>>> u, state = opt.update(grad, state, p, value=value, grad=grad, value_fn=f)
>>> optim.apply_updates(p, u).tolist(), state[1].learning_rate.item()
([4.800000190734863, 4.800000190734863], 0.800000011920929)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch import api, tree
from ftorch.optim._base import (
    GradientTransformationExtraArgs,
    OptState,
    Params,
    Updates,
    _check_state,
    safe_increment,
)

__all__ = [
    "scale_by_backtracking_linesearch", "ScaleByBacktrackingLinesearchState",
    "BacktrackingLinesearchInfo", "scale_by_zoom_linesearch", "ScaleByZoomLinesearchState",
    "ZoomLinesearchInfo", "value_and_grad_from_state",
]


# ---------------------------------------------------------------------------
# Helpers on pytrees of arrays
# ---------------------------------------------------------------------------

def _vdot(a: Any, b: Any) -> Any:
    """``<a, b>`` summed over all the leaves (a float32 scalar)."""
    total = mx.array(0.0, mx.float32)
    for x, y in zip(tree.leaves(a), tree.leaves(b)):
        total = total + fnp.sum(fnp.astype(x, mx.float32) * fnp.astype(y, mx.float32))
    return total


def _add_scaled(params: Any, step: Any, direction: Any) -> Any:
    """``params + step * direction``, leaf by leaf, in the parameters' dtypes."""
    return tree.map(lambda p, d: fnp.astype(p + fnp.astype(step, d.dtype) * d, p.dtype), params,
                    direction)


def _scale(step: Any, updates: Any) -> Any:
    return tree.map(lambda u: u * fnp.astype(step, u.dtype), updates)


def _pick(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` else ``on_false``, leaf by leaf (pytrees of
    the same structure), in ``on_false``'s dtypes."""
    return tree.map(lambda t, f: fnp.astype(fnp.where(pred, t, f), f.dtype), on_true, on_false)


def _f32(x: Any) -> Any:
    return fnp.asarray(x, mx.float32)


def _split_kwargs(fname: str, value_fn: Callable, extra_args: dict[str, Any]) -> dict[str, Any]:
    """The extra arguments ``value_fn`` takes by name; any other is an error."""
    try:
        accepted = inspect.signature(value_fn).parameters
    except (TypeError, ValueError):
        return dict(extra_args)
    if any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        return dict(extra_args)
    unknown = sorted(k for k in extra_args if k not in accepted)
    if unknown:
        raise TypeError(f"{fname}.update: the extra arguments {unknown} are not arguments of "
                        "value_fn; pass only what value_fn takes")
    return dict(extra_args)


def _need(fname: str, **extra: Any) -> None:
    missing = [k for k, v in extra.items() if v is None]
    if missing:
        raise TypeError(f"{fname}.update needs {', '.join(missing)} (keyword arguments: the "
                        "objective's value and gradient at params, and value_fn, the objective)")


# ---------------------------------------------------------------------------
# Backtracking
# ---------------------------------------------------------------------------

class BacktrackingLinesearchInfo(NamedTuple):
    """``num_linesearch_steps``: evaluations of the last search (int32);
    ``decrease_error``: how far its step was from sufficient decrease (0
    when accepted)."""

    num_linesearch_steps: Any
    decrease_error: Any


class ScaleByBacktrackingLinesearchState(NamedTuple):
    """``learning_rate``: the last step size; ``value``: the objective at
    the new parameters; ``grad``: its gradient there (with ``store_grad``,
    else ``None``); ``info``: a ``BacktrackingLinesearchInfo``."""

    learning_rate: Any
    value: Any
    grad: Any
    info: BacktrackingLinesearchInfo


def scale_by_backtracking_linesearch(
        max_backtracking_steps: int, slope_rtol: float | Any = 1e-4,
        decrease_factor: float | Any = 0.8, increase_factor: float | Any = 1.5,
        max_learning_rate: float | Any = 1.0, atol: float | Any = 0.0, rtol: float | Any = 0.0,
        store_grad: bool = False, verbose: bool = False) -> GradientTransformationExtraArgs:
    """Scale the update ``u`` by a step size ``s`` of sufficient decrease
    (Armijo): ``f(p + s u) <= (1 + rtol) f(p) + s * slope_rtol * <u, g> +
    atol``. The search starts from ``min(increase_factor * s_prev,
    max_learning_rate)`` and multiplies by ``decrease_factor`` until the
    condition holds, at most ``max_backtracking_steps`` times; if even then
    the value is not finite the step is 0.

    ``update(updates, state, params, *, value, grad, value_fn,
    **extra_args)``: ``value`` and ``grad`` are the objective and its
    gradient at ``params``, ``value_fn(params, **extra_args)`` the
    objective. With ``store_grad`` the state keeps the gradient at the new
    parameters too (see ``value_and_grad_from_state``). ``verbose`` is
    accepted for optax's signature and prints nothing.

    >>> import ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
    >>> f = lambda p: fnp.sum(p ** 2)
    >>> opt = optim.scale_by_backtracking_linesearch(max_backtracking_steps=10)
    >>> p, g = mx.array([1.0]), mx.array([2.0])
    >>> u, s = opt.update(-g, opt.init(p), p, value=f(p), grad=g, value_fn=f)
    >>> u.item(), s.info.num_linesearch_steps.item()
    (-1.600000023841858, 2)
    """
    fname = "scale_by_backtracking_linesearch"

    def init(params):
        return ScaleByBacktrackingLinesearchState(
            learning_rate=_f32(1.0), value=_f32(fnp.inf),
            grad=tree.map(fnp.zeros_like, params) if store_grad else None,
            info=BacktrackingLinesearchInfo(mx.array(0, mx.int32), _f32(fnp.inf)))

    def decrease_error(step, slope, value, new_value):
        error = new_value - (1.0 + rtol) * value - step * slope_rtol * slope
        return fnp.maximum(fnp.where(fnp.isnan(error), fnp.inf, error), 0.0)

    def update(updates, state, params=None, *, value=None, grad=None, value_fn=None,
               **extra_args):
        _check_state(fname, state, ScaleByBacktrackingLinesearchState)
        _need(fname, params=params, value=value, grad=grad, value_fn=value_fn)
        fn_kwargs = _split_kwargs(fname, value_fn, extra_args)
        slope = _vdot(updates, grad)
        value = _f32(value)

        def objective(p):
            if store_grad:
                return api.value_and_grad(lambda q: value_fn(q, **fn_kwargs))(p)
            return value_fn(p, **fn_kwargs), None

        def searching(carry):
            _, _, _, error, steps = carry
            return fnp.logical_and(fnp.logical_not(error <= atol),
                                   steps <= max_backtracking_steps)

        def body(carry):
            step, _, new_grad, _, steps = carry
            step = fnp.where(steps > 0, decrease_factor * step, step)
            new_value, g = objective(_add_scaled(params, step, updates))
            new_value = _f32(new_value)
            return (step, new_value, new_grad if g is None else g,
                    decrease_error(step, slope, value, new_value), steps + 1)

        start = fnp.minimum(increase_factor * state.learning_rate, max_learning_rate)
        carry = (_f32(start), value, tree.map(fnp.zeros_like, params) if store_grad else (),
                 _f32(fnp.inf), mx.array(0, mx.int32))
        step, new_value, new_grad, error, steps = lax.while_loop(searching, body, carry)
        step = fnp.where(fnp.isinf(error), 0.0, step)
        return _scale(step, updates), ScaleByBacktrackingLinesearchState(
            learning_rate=step, value=new_value, grad=new_grad if store_grad else None,
            info=BacktrackingLinesearchInfo(steps, error))

    return GradientTransformationExtraArgs(init, update)


# ---------------------------------------------------------------------------
# Zoom (More-Thuente-style bracketing with cubic/quadratic interpolation)
# ---------------------------------------------------------------------------

class ZoomLinesearchInfo(NamedTuple):
    """``num_linesearch_steps`` (int32), and the ``decrease_error`` and
    ``curvature_error`` of the step taken (0 for a step meeting the strong
    Wolfe conditions)."""

    num_linesearch_steps: Any
    decrease_error: Any
    curvature_error: Any


class ScaleByZoomLinesearchState(NamedTuple):
    """``learning_rate``: the step size taken; ``value``, ``grad``: the
    objective and its gradient at the new parameters (reused by
    ``value_and_grad_from_state``); ``info``: a ``ZoomLinesearchInfo``."""

    learning_rate: Any
    value: Any
    grad: Any
    info: ZoomLinesearchInfo


class _Point(NamedTuple):
    """A step size on the line, the value there and the slope along it."""

    step: Any
    value: Any
    slope: Any


class _Zoom(NamedTuple):
    count: Any
    current: _Point       # the last step evaluated
    grad: Any             # the gradient at it
    decrease_error: Any
    curvature_error: Any
    interval_found: Any
    done: Any
    failed: Any
    low: _Point
    high: _Point
    cubic_ref: Any        # (step, value) of the third point of the cubic fit
    value_cubic_ref: Any
    safe: _Point          # the best step of sufficient decrease so far (step 0: none)
    safe_grad: Any


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through ``(a, fa)`` with slope ``fpa``,
    ``(b, fb)`` and ``(c, fc)``."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    denominator = (db * dc) ** 2 * (db - dc)
    cubic = (dc ** 2 * rb - db ** 2 * rc) / denominator
    square = (-(dc ** 3) * rb + db ** 3 * rc) / denominator
    return a + (-square + fnp.sqrt(square * square - 3.0 * cubic * fpa)) / (3.0 * cubic)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """The minimizer of the parabola through ``(a, fa)`` with slope ``fpa``
    and ``(b, fb)``."""
    db = b - a
    curvature = (fb - fa - fpa * db) / db ** 2
    return a - fpa / (2.0 * curvature)


def scale_by_zoom_linesearch(
        max_linesearch_steps: int, max_learning_rate: float | Any | None = None,
        tol: float | Any = 0.0, increase_factor: float | Any = 2.0,
        slope_rtol: float | Any = 1e-4, curv_rtol: float | Any = 0.9,
        approx_dec_rtol: float | Any | None = 1e-6, stepsize_precision: float | Any = 1e-5,
        initial_guess_strategy: str = "keep",
        verbose: bool = False) -> GradientTransformationExtraArgs:
    """Scale the update ``u`` by a step size ``s`` meeting the strong Wolfe
    conditions: sufficient decrease ``f(p + s u) <= f(p) + slope_rtol s
    <u, g>`` and curvature ``|<u, g(p + s u)>| <= curv_rtol |<u, g>|``
    (Nocedal and Wright's algorithms 3.5 and 3.6). The search grows the
    step by ``increase_factor`` (up to ``max_learning_rate``) until an
    interval holds an acceptable step, then narrows it by cubic, quadratic
    or bisection steps; ``approx_dec_rtol`` (``None``: off) also accepts
    the approximate decrease of Hager and Zhang, robust to round-off near
    a minimum. Each error at most ``tol`` is success; after
    ``max_linesearch_steps`` evaluations (or an interval shorter than
    ``stepsize_precision``) it takes the best step of sufficient decrease
    seen, if any. The first guess is 1 (``initial_guess_strategy="one"``)
    or the last step size (``"keep"``).

    ``update(updates, state, params, *, value, grad, value_fn,
    **extra_args)`` as ``scale_by_backtracking_linesearch``; the state
    keeps the value and gradient at the new parameters. ``verbose`` is
    accepted for optax's signature and prints nothing.

    >>> import ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
    >>> f = lambda p: fnp.sum(p ** 2)
    >>> opt = optim.scale_by_zoom_linesearch(max_linesearch_steps=10)
    >>> p, g = mx.array([1.0]), mx.array([2.0])
    >>> u, s = opt.update(-g, opt.init(p), p, value=f(p), grad=g, value_fn=f)
    >>> round(u.item(), 4), round(s.value.item(), 4)
    (-1.0, 0.0)
    """
    fname = "scale_by_zoom_linesearch"
    if initial_guess_strategy not in ("one", "keep"):
        raise ValueError(f"{fname}: initial_guess_strategy must be 'one' or 'keep', got "
                         f"{initial_guess_strategy!r}")

    def init(params):
        return ScaleByZoomLinesearchState(
            learning_rate=_f32(1.0), value=_f32(fnp.inf), grad=tree.map(fnp.zeros_like, params),
            info=ZoomLinesearchInfo(mx.array(0, mx.int32), _f32(fnp.inf), _f32(fnp.inf)))

    def errors(point: _Point, start: _Point) -> tuple[Any, Any]:
        """(decrease error, curvature error) of ``point``, 0 when met, inf
        for a NaN."""
        decrease = point.value - start.value - slope_rtol * point.step * start.slope
        if approx_dec_rtol is not None:
            approximate = fnp.maximum(
                point.slope - (2 * slope_rtol - 1.0) * start.slope,
                point.value - start.value - approx_dec_rtol * fnp.abs(start.value))
            decrease = fnp.minimum(approximate, decrease)
        curvature = fnp.abs(point.slope) - curv_rtol * fnp.abs(start.slope)
        return tuple(fnp.where(fnp.isnan(e), fnp.inf, fnp.maximum(e, 0.0))
                     for e in (decrease, curvature))

    def update(updates, state, params=None, *, value=None, grad=None, value_fn=None,
               **extra_args):
        _check_state(fname, state, ScaleByZoomLinesearchState)
        _need(fname, params=params, value=value, grad=grad, value_fn=value_fn)
        fn_kwargs = _split_kwargs(fname, value_fn, extra_args)
        value_and_grad = api.value_and_grad(lambda p: value_fn(p, **fn_kwargs))
        start = _Point(_f32(0.0), _f32(value), _vdot(updates, grad))
        guess = _f32(1.0) if initial_guess_strategy == "one" else state.learning_rate

        def evaluate(step):
            v, g = value_and_grad(_add_scaled(params, step, updates))
            point = _Point(step, _f32(v), _vdot(g, updates))
            return point, g

        def search_interval(z: _Zoom) -> _Zoom:
            """Grow the step until [low, high] brackets an acceptable one."""
            step = fnp.where(z.count == 0, guess, increase_factor * z.current.step)
            at_max = fnp.asarray(False)
            if max_learning_rate is not None:
                at_max = step >= max_learning_rate
                step = fnp.minimum(step, max_learning_rate)
            new, g = evaluate(step)
            decrease, curvature = errors(new, start)
            error = fnp.maximum(decrease, curvature)
            safe, safe_grad = _pick(decrease <= tol, (new, g), (z.safe, z.safe_grad))
            new_is_high = fnp.logical_or(decrease > 0.0, fnp.logical_and(
                new.value >= z.current.value, z.count > 0))
            new_is_low = fnp.logical_and(new.slope >= 0.0, fnp.logical_not(new_is_high))
            low, high = _pick(new_is_low, (new, z.current), (z.current, new))
            found = fnp.logical_or(fnp.logical_or(new_is_high, new_is_low), error <= tol)
            done = fnp.logical_or(error <= tol, fnp.logical_and(at_max, fnp.logical_not(found)))
            failed = fnp.logical_and(z.count + 1 >= max_linesearch_steps, fnp.logical_not(done))
            return _Zoom(safe_increment(z.count), new, g, decrease, curvature, found, done,
                         failed, low, high, low.step, low.value, safe, safe_grad)

        def zoom(z: _Zoom) -> _Zoom:
            """Narrow [low, high] around an acceptable step."""
            low, high = z.low, z.high
            width = fnp.abs(high.step - low.step)
            left, right = fnp.minimum(high.step, low.step), fnp.maximum(high.step, low.step)
            cubic = _cubic_minimizer(low.step, low.value, low.slope, high.step, high.value,
                                     z.cubic_ref, z.value_cubic_ref)
            use_cubic = fnp.logical_and(cubic > left + 0.2 * width, cubic < right - 0.2 * width)
            quadratic = _quadratic_minimizer(low.step, low.value, low.slope, high.step,
                                             high.value)
            use_quadratic = fnp.logical_and(fnp.logical_not(use_cubic), fnp.logical_and(
                quadratic > left + 0.1 * width, quadratic < right - 0.1 * width))
            middle = fnp.where(use_cubic, cubic, fnp.where(use_quadratic, quadratic,
                                                           (low.step + high.step) / 2.0))
            new, g = evaluate(middle)
            decrease, curvature = errors(new, start)
            error = fnp.maximum(decrease, curvature)
            better = fnp.logical_and(decrease <= tol, new.value < z.safe.value)
            safe, safe_grad = _pick(better, (new, g), (z.safe, z.safe_grad))
            done = error <= tol
            middle_is_high = fnp.logical_or(decrease > 0.0, new.value >= low.value)
            low_is_high = fnp.logical_and(new.slope * (high.step - low.step) >= 0.0,
                                          fnp.logical_not(middle_is_high))
            new_high = _pick(low_is_high, low, _pick(middle_is_high, new, high))
            new_low = _pick(middle_is_high, low, new)
            cubic_ref, value_cubic_ref = _pick(
                fnp.logical_or(middle_is_high, low_is_high), (high.step, high.value),
                (low.step, low.value))
            stuck = fnp.logical_or(z.count + 1 >= max_linesearch_steps, fnp.logical_and(
                width <= stepsize_precision, safe.step > 0.0))
            failed = fnp.logical_and(stuck, fnp.logical_not(done))
            return _Zoom(safe_increment(z.count), new, g, decrease, curvature, z.interval_found,
                         done, failed, new_low, new_high, cubic_ref, value_cubic_ref, safe,
                         safe_grad)

        def fall_back(z: _Zoom) -> _Zoom:
            """On failure: the best step of sufficient decrease, if any (or the
            safe step 0 where the last one was outside the domain)."""
            use_safe = fnp.logical_or(z.safe.step > 0.0, fnp.isinf(z.decrease_error))
            current, g = _pick(use_safe, (z.safe, z.safe_grad), (z.current, z.grad))
            return z._replace(current=current, grad=g)

        def step(z: _Zoom) -> _Zoom:
            z = lax.cond(z.interval_found, zoom, search_interval, z)
            return lax.cond(z.failed, fall_back, lambda x: x, z)

        def searching(z: _Zoom) -> Any:
            return fnp.logical_not(fnp.logical_or(z.done, z.failed))

        false, inf = mx.array(False), _f32(fnp.inf)
        z = _Zoom(mx.array(0, mx.int32), start, grad, inf, inf, false, false, false, start,
                  start, start.step, start.value, start, grad)
        z = lax.while_loop(searching, step, z)
        learning_rate = z.current.step
        info = ZoomLinesearchInfo(z.count, z.decrease_error, z.curvature_error)
        grad_out = tree.map(lambda g, p: fnp.astype(g, p.dtype), z.grad, params)
        return _scale(learning_rate, updates), ScaleByZoomLinesearchState(
            learning_rate, z.current.value, grad_out, info)

    return GradientTransformationExtraArgs(init, update)


# ---------------------------------------------------------------------------
# Reusing the line search's value and gradient
# ---------------------------------------------------------------------------

def _find_fields(state: Any, name: str) -> list[Any]:
    """The values of every NamedTuple field called ``name`` in ``state``."""
    found = []
    if isinstance(state, tuple) and hasattr(state, "_fields"):
        if name in state._fields:
            found.append(getattr(state, name))
        children = [getattr(state, f) for f in state._fields if f != name]
    elif isinstance(state, (tuple, list)):
        children = list(state)
    elif isinstance(state, dict):
        children = list(state.values())
    else:
        children = []
    for child in children:
        found += _find_fields(child, name)
    return found


def value_and_grad_from_state(value_fn: Callable[..., Any]
                              ) -> Callable[..., tuple[Any, Updates]]:
    """``value_and_grad(value_fn)`` that reuses the value and gradient a line
    search stored in the optimizer state (the fields ``value`` and
    ``grad``, computed at the parameters it returned): call the result as
    ``f(params, *args, state=opt_state, **kwargs)``. Where the stored value
    is not finite (the first step) it computes them.

    >>> import ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
    >>> f = lambda p: fnp.sum(p ** 2)
    >>> opt = optim.lbfgs()
    >>> p = mx.array([1.0, 2.0])
    >>> state = opt.init(p)
    >>> value, grad = optim.value_and_grad_from_state(f)(p, state=state)
    >>> value.item(), grad.tolist()
    (5.0, [2.0, 4.0])
    """
    def value_and_grad(params: Params, *fn_args: Any, state: OptState,
                       **fn_kwargs: Any) -> tuple[Any, Updates]:
        values, grads = _find_fields(state, "value"), _find_fields(state, "grad")
        if not values or not grads or grads[0] is None:
            raise ValueError("value_and_grad_from_state: the state holds no value and gradient;"
                             " use an optimizer that stores them (a zoom line search, or a "
                             "backtracking one with store_grad=True)")
        value, grad = values[0], grads[0]

        def compute(p):
            return api.value_and_grad(lambda q: value_fn(q, *fn_args, **fn_kwargs))(p)

        def stored(p):
            return fnp.astype(value, mx.float32), grad

        def recompute(p):
            v, g = compute(p)
            return fnp.astype(v, mx.float32), g

        finite = fnp.logical_not(fnp.logical_or(fnp.isinf(value), fnp.isnan(value)))
        return lax.cond(finite, stored, recompute, params)

    return value_and_grad
