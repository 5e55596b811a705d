"""The building blocks of the optimizers: gradient transformations that
scale, accumulate or clip updates (optax's ``scale_by_*``, ``trace``,
``clip``, ...).

Hyperparameters may be Python numbers or arrays (``inject_hyperparams``
passes float32 arrays); each is cast to the dtype of the leaf it meets
(``cast_like``), so updates keep the dtype of the gradients they transform
and every state leaf keeps the dtype ``init`` gave it, step after step (a
jitted step sees the same state signature every time). Coefficients such as
``1 - decay`` are formed before that cast (``1 - bfloat16(0.999)`` is 0),
and bias corrections ``1 - decay ** count`` in float32.

>>> import ftorch.optim as optim, mlx.core as mx
>>> opt = optim.chain(optim.clip_by_global_norm(1.0), optim.scale_by_adam(),
...                   optim.scale(-0.1))
>>> u, state = opt.update(mx.array([3.0, -4.0]), opt.init(mx.zeros(2)))
>>> [round(x, 4) for x in u.tolist()]
[-0.1, 0.1]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.optim._base import (
    EmptyState,
    GradientTransformation,
    ScalarOrSchedule,
    _check_chain_state,
    _check_state,
    _shape_mismatch,
    _tree_mismatch,
    cast_like,
    chain,
    identity,
    safe_increment,
)
from ftorch.optim._wrappers import _resolve_mask, masked

__all__ = [
    "scale", "scale_by_learning_rate", "scale_by_schedule", "ScaleByScheduleState",
    "trace", "TraceState", "ema", "EmaState",
    "scale_by_adam", "ScaleByAdamState", "scale_by_amsgrad", "ScaleByAmsgradState",
    "scale_by_adamax", "scale_by_rms", "ScaleByRmsState", "ScaleByRmsWithCountState",
    "scale_by_stddev", "ScaleByRStdDevState", "ScaleByRStdDevWithCountState",
    "scale_by_rss", "ScaleByRssState", "scale_by_lion", "ScaleByLionState",
    "scale_by_muon", "ScaleByMuonState",
    "scale_by_adadelta", "ScaleByAdaDeltaState", "scale_by_factored_rms", "FactoredState",
    "scale_by_param_block_rms", "scale_by_param_block_norm", "scale_by_trust_ratio",
    "ScaleByTrustRatioState", "scale_by_sign", "add_decayed_weights", "AddDecayedWeightsState",
    "clip", "ClipState", "clip_by_global_norm", "ClipByGlobalNormState", "clip_by_block_rms",
    "global_norm", "scale_by_lbfgs", "ScaleByLBFGSState",
]

# Stateless transformations' states, under optax's names.
ScaleByTrustRatioState = EmptyState
AddDecayedWeightsState = EmptyState
ClipState = EmptyState
ClipByGlobalNormState = EmptyState

_NO_PARAMS = ("{}: update needs the parameters: call update(updates, state, params)")
_MU_NU = ("state.mu", "state.nu")
_OTHER_PARAMS = ("was the state made for other parameters? init it with the parameters these "
                 "updates are for")


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def _need_params(fname: str, params: Any) -> None:
    if params is None:
        raise ValueError(_NO_PARAMS.format(fname))


def _leafwise(fname: str, fn: Callable[..., tuple], n_out: int, updates: Any, *trees: Any,
              what: tuple[str, ...] = (), same_shape: bool = True) -> tuple:
    """``fn`` over the leaves of ``updates`` and ``trees`` together, its
    ``n_out`` results unzipped into as many trees shaped like ``updates``.
    A tree of another structure (or, with ``same_shape``, a leaf of another
    shape) is an error naming the leaf and ``what`` the tree is."""
    u_leaves, treedef = tree.flatten(updates)
    columns = []
    for i, t in enumerate(trees):
        name = what[i] if i < len(what) else "state"
        leaves, td = tree.flatten(t)
        if td != treedef:
            raise ValueError(_tree_mismatch(fname, treedef, td, "updates", name,
                                            _OTHER_PARAMS))
        if same_shape:
            for k, (u, x) in enumerate(zip(u_leaves, leaves)):
                if u.shape != x.shape:
                    raise ValueError(_shape_mismatch(fname, k, treedef, u, x, "updates", name))
        columns.append(leaves)
    outs = [fn(*args) for args in zip(u_leaves, *columns)]
    return tuple(tree.unflatten(treedef, [o[k] for o in outs]) for k in range(n_out))


def _f32(x: Any) -> Any:
    return fnp.asarray(x, mx.float32)


def _bias_correction(decay: Any, count: Any) -> Any:
    """``1 - decay ** count`` in float32: in a low precision ``decay ** count``
    rounds to 1 within a few steps, a division by zero."""
    return 1.0 - fnp.power(_f32(decay), _f32(count))


def _as(x: Any, like: Any) -> Any:
    """``x`` in ``like``'s dtype (a state leaf back to its stored dtype)."""
    return x if x.dtype == like.dtype else fnp.astype(x, like.dtype)


def _moment(x: Any, moment: Any, decay: Any) -> Any:
    """``(1 - decay) * x + decay * moment``, computed as
    ``moment + (1 - decay) * (x - moment)``: one scalar per element instead
    of two (each scalar operand costs MLX's fused CPU kernels a load per
    element). The coefficient is in ``moment``'s dtype, the result in the
    wider of the two."""
    return moment + cast_like(1 - decay, moment) * (x - moment)


def _plus(x: Any, c: float | Any) -> Any:
    """``x + c`` in ``x``'s dtype; no operation when ``c`` is the number 0
    (a per-element add saved, e.g. Adam's default ``eps_root``)."""
    if isinstance(c, (int, float)) and c == 0:
        return x
    return x + cast_like(c, x)


def _zeros(params: Any, dtype: mx.Dtype | None = None) -> Any:
    return tree.map(lambda p: fnp.zeros_like(p, dtype=dtype or p.dtype), params)


def _count0() -> Any:
    return mx.array(0, mx.int32)


def _rms32(x: Any) -> Any:
    """Root mean square of ``x``, computed in float32 (a scalar)."""
    return fnp.sqrt(fnp.mean(fnp.square(_f32(x))))


def _safe(value: Any, floor: Any, x: Any) -> tuple[Any, Any]:
    """``(value <= floor, x)`` with ``x`` replaced by ones where the floor
    applies, so a norm recomputed from it has a finite gradient at 0."""
    low = value <= floor
    return low, fnp.where(low, fnp.ones_like(x), x)


def _safe_norm32(x: Any, min_norm: Any) -> Any:
    """``max(||x||, min_norm)`` in float32, with a finite gradient at 0 (as
    optax's ``safe_norm``)."""
    x = _f32(x)
    low, x = _safe(fnp.sqrt(fnp.sum(fnp.square(x))), min_norm, x)
    return fnp.where(low, _f32(min_norm), fnp.sqrt(fnp.sum(fnp.square(x))))


def _safe_rms32(x: Any, min_rms: Any) -> Any:
    x = _f32(x)
    low, x = _safe(_rms32(x), min_rms, x)
    return fnp.where(low, _f32(min_rms), _rms32(x))


# ---------------------------------------------------------------------------
# Scaling
# ---------------------------------------------------------------------------

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
    """``count``: updates so far (int32)."""

    count: Any


def scale_by_schedule(step_size_fn: Callable[[Any], Any]) -> GradientTransformation:
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
        return ScaleByScheduleState(_count0())

    def update(updates, state, params=None):
        _check_state("scale_by_schedule", state, ScaleByScheduleState)
        step_size = step_size_fn(state.count)
        updates = tree.map(lambda u: u * cast_like(step_size, u), updates)
        return updates, ScaleByScheduleState(safe_increment(state.count))

    return GradientTransformation(init, update)


def scale_by_learning_rate(learning_rate: ScalarOrSchedule | None = None, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Multiply updates by the learning rate (a number, an array or a
    schedule), negated by default: a descent step. ``None``: updates
    unchanged.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.scale_by_learning_rate(0.1).update(mx.array(2.0), optim.EmptyState())[0].item()
    -0.20000000298023224
    """
    if learning_rate is None:
        return identity()
    sign = -1.0 if flip_sign else 1.0
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    return scale(sign * learning_rate)


def scale_by_sign() -> GradientTransformation:
    """The sign of each update (``-1``, ``0`` or ``1``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.scale_by_sign().update(mx.array([-3.0, 0.0, 0.5]), optim.EmptyState())[0].tolist()
    [-1.0, 0.0, 1.0]
    """
    def update(updates, state, params=None):
        return tree.map(fnp.sign, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def scale_by_param_block_rms(min_scale: float | Any = 1e-3) -> GradientTransformation:
    """Multiply each update by its parameter's root mean square, at least
    ``min_scale`` (Adafactor's ``multiply_by_parameter_scale``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_param_block_rms()
    >>> opt.update(mx.ones(2), optim.EmptyState(), mx.array([3.0, 4.0]))[0].tolist()
    [3.535533905029297, 3.535533905029297]
    """
    return _scale_by_param_measure("scale_by_param_block_rms", _safe_rms32, min_scale)


def _scale_by_param_measure(fname: str, measure: Callable[[Any, Any], Any],
                            floor: Any) -> GradientTransformation:
    """Each update times ``measure(its parameter, floor)`` (a float32 scalar)."""
    def update(updates, state, params=None):
        _need_params(fname, params)
        (updates,) = _leafwise(fname, lambda u, p: (u * cast_like(measure(p, floor), u),),
                               1, updates, params, what=("params",))
        return updates, state

    return GradientTransformation(lambda params: EmptyState(), update)


def scale_by_param_block_norm(min_scale: float | Any = 1e-3) -> GradientTransformation:
    """Multiply each update by its parameter's L2 norm, at least
    ``min_scale``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_param_block_norm()
    >>> opt.update(mx.ones(2), optim.EmptyState(), mx.array([3.0, 4.0]))[0].tolist()
    [5.0, 5.0]
    """
    return _scale_by_param_measure("scale_by_param_block_norm", _safe_norm32, min_scale)


def scale_by_trust_ratio(min_norm: float | Any = 0.0, trust_coefficient: float | Any = 1.0,
                         eps: float | Any = 0.0) -> GradientTransformation:
    """Multiply each update by its trust ratio
    ``trust_coefficient * ||p|| / (||u|| + eps)`` (both norms at least
    ``min_norm``; a ratio of 1 where either norm is 0), as in LARS and LAMB.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_trust_ratio()
    >>> opt.update(mx.array([0.0, 2.0]), optim.EmptyState(), mx.array([3.0, 4.0]))[0].tolist()
    [0.0, 5.0]
    """
    def leaf(u, p):
        p_norm = _safe_norm32(p, min_norm)
        u_norm = _safe_norm32(u, min_norm)
        ratio = _f32(trust_coefficient) * p_norm / (u_norm + _f32(eps))
        ratio = fnp.where(fnp.logical_or(p_norm == 0.0, u_norm == 0.0), 1.0, ratio)
        return (u * cast_like(ratio, u),)

    def update(updates, state, params=None):
        fname = "scale_by_trust_ratio"
        _need_params(fname, params)
        (updates,) = _leafwise(fname, leaf, 1, updates, params, what=("params",))
        return updates, state

    return GradientTransformation(lambda params: EmptyState(), update)


# ---------------------------------------------------------------------------
# Accumulation
# ---------------------------------------------------------------------------

class TraceState(NamedTuple):
    """``trace``: the momentum buffer, shaped like the parameters."""

    trace: Any


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
        return TraceState(_zeros(params, accumulator_dtype))

    def leaf(g, t):
        new = g + cast_like(decay, t) * t
        out = g + cast_like(decay, new) * new if nesterov else new
        return _as(out, g), _as(new, t)

    def update(updates, state, params=None):
        fname = "trace"
        _check_state(fname, state, TraceState)
        updates, new = _leafwise(fname, leaf, 2, updates, state.trace, what=("state.trace",))
        return updates, TraceState(new)

    return GradientTransformation(init, update)


class EmaState(NamedTuple):
    """``count``: updates so far (int32); ``ema``: the moving average."""

    count: Any
    ema: Any


def ema(decay: float | Any, debias: bool = True,
        accumulator_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """An exponential moving average of the updates,
    ``e = decay * e + (1 - decay) * u``; the update is ``e``, divided by
    ``1 - decay ** count`` with ``debias`` (``trace`` sums instead).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.ema(0.5, debias=False)
    >>> s = opt.init(mx.zeros(1))
    >>> u, s = opt.update(mx.ones(1), s); u, s = opt.update(mx.ones(1), s)
    >>> u.item()
    0.75
    """
    def init(params):
        return EmaState(_count0(), _zeros(params, accumulator_dtype))

    def update(updates, state, params=None):
        fname = "ema"
        _check_state(fname, state, EmaState)
        count = safe_increment(state.count)
        correction = _bias_correction(decay, count) if debias else None

        def leaf(u, e):
            new = _moment(u, e, decay)
            out = new / cast_like(correction, new) if debias else new
            return _as(out, u), _as(new, e)

        updates, new = _leafwise(fname, leaf, 2, updates, state.ema, what=("state.ema",))
        return updates, EmaState(count, new)

    return GradientTransformation(init, update)


class ScaleByAdamState(NamedTuple):
    """``count``: updates so far (int32); ``mu``, ``nu``: the first and
    second moments (for Adamax, ``nu`` is the infinity norm)."""

    count: Any
    mu: Any
    nu: Any


def scale_by_adam(b1: float | Any = 0.9, b2: float | Any = 0.999, eps: float | Any = 1e-8,
                  eps_root: float | Any = 0.0, mu_dtype: mx.Dtype | None = None, *,
                  nesterov: bool = False) -> GradientTransformation:
    """Adam's scaling: ``m = b1 m + (1 - b1) g``,
    ``v = b2 v + (1 - b2) g**2``, update
    ``m_hat / (sqrt(v_hat + eps_root) + eps)`` with the bias-corrected
    ``m_hat = m / (1 - b1**t)``, ``v_hat = v / (1 - b2**t)``; with
    ``nesterov``, ``m_hat = b1 m / (1 - b1**(t+1)) + (1 - b1) g / (1 - b1**t)``
    (NAdam). ``mu_dtype``: the dtype of ``m`` (default: the parameter's).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_adam()
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()], s.count.item()
    ([1.0, -1.0], 1)
    """
    def init(params):
        return ScaleByAdamState(_count0(), _zeros(params, mu_dtype), _zeros(params))

    def update(updates, state, params=None):
        return _adam_update(updates, state, b1, b2, eps, eps_root, nesterov)

    return GradientTransformation(init, update)


def _adam_update(updates: Any, state: Any, b1: Any, b2: Any, eps: Any, eps_root: Any,
                 nesterov: bool, step_size: Any = None, weight_decay: Any = None,
                 params: Any = None, decayed: list[bool] | None = None) -> tuple[Any, Any]:
    """``scale_by_adam``'s update; with ``step_size`` (and ``weight_decay``
    with ``params``, where ``decayed`` says so per leaf) it is also
    ``add_decayed_weights`` and ``scale(step_size)`` after it, in the same
    expression per element (see ``_adam_chain``)."""
    fname = "scale_by_adam"
    _check_state(fname, state, ScaleByAdamState)
    count = safe_increment(state.count)
    # Scalar reciprocals of the bias corrections (and the step size folded into
    # them): one multiply per element instead of a division and a multiply.
    step = 1.0 if step_size is None else step_size
    r1, r2 = step / _bias_correction(b1, count), 1.0 / _bias_correction(b2, count)
    r1_next = step / _bias_correction(b1, safe_increment(count)) if nesterov else None
    decay = None if weight_decay is None else step * weight_decay

    flags = iter(decayed or ())  # _leafwise calls leaf on the leaves in order

    def leaf(g, m, v, *p):
        m_new, v_new = _moment(g, m, b1), _moment(fnp.square(g), v, b2)
        if nesterov:
            m_hat = m_new * cast_like(b1 * r1_next, m_new) + g * cast_like((1 - b1) * r1, m_new)
        else:
            m_hat = m_new * cast_like(r1, m_new)
        v_hat = v_new * cast_like(r2, v_new)
        u = m_hat / (fnp.sqrt(_plus(v_hat, eps_root)) + cast_like(eps, v_hat))
        if p and next(flags):
            u = u + cast_like(decay, p[0]) * p[0]
        return _as(u, g), _as(m_new, m), _as(v_new, v)

    trees, what = (state.mu, state.nu), _MU_NU
    if decay is not None:
        trees, what = (*trees, params), (*what, "params")
    updates, mu, nu = _leafwise(fname, leaf, 3, updates, *trees, what=what)
    return updates, ScaleByAdamState(count, mu, nu)


def _adam_chain(b1: Any, b2: Any, eps: Any, eps_root: Any, mu_dtype: mx.Dtype | None,
                nesterov: bool, learning_rate: Any, weight_decay: Any = None,
                mask: Any = None) -> GradientTransformation:
    """``chain(scale_by_adam(...), add_decayed_weights(weight_decay, mask),
    scale_by_learning_rate(learning_rate))`` (no decay when ``weight_decay``
    is None): that chain's state, with an update that forms each leaf's
    step in one expression. The named Adam optimizers use it: on MLX's CPU
    every elementwise operation of a fused kernel costs about a cycle per
    element, and folding the learning rate and the decay into scalars saves
    two of them."""
    parts = [scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov)]
    if weight_decay is not None:
        parts.append(add_decayed_weights(weight_decay, mask))
    parts.append(scale_by_learning_rate(learning_rate))
    reference = chain(*parts)
    if any(callable(h) for h in (learning_rate, weight_decay)) or learning_rate is None:
        return reference  # schedules count in their own states: keep the chain

    def update(updates, state, params=None):
        _check_chain_state("chain", state, len(parts))
        decayed = None
        if weight_decay is not None:
            _need_params("add_decayed_weights", params)
            decayed = ([True] * len(tree.leaves(params)) if mask is None
                       else _resolve_mask(mask, params, "masked"))
        updates, adam_state = _adam_update(updates, state[0], b1, b2, eps, eps_root, nesterov,
                                           -learning_rate, weight_decay, params, decayed)
        return updates, (adam_state, *state[1:])

    return GradientTransformation(reference.init, update)


class ScaleByAmsgradState(NamedTuple):
    """``count`` (int32), the moments ``mu`` and ``nu``, and ``nu_max``, the
    largest (bias-corrected) ``nu`` so far."""

    count: Any
    mu: Any
    nu: Any
    nu_max: Any


def scale_by_amsgrad(b1: float | Any = 0.9, b2: float | Any = 0.999, eps: float | Any = 1e-8,
                     eps_root: float | Any = 0.0, mu_dtype: mx.Dtype | None = None,
                     bias_correction_mu: bool = True,
                     bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad's scaling: Adam's, with the denominator built from the running
    maximum ``nu_max = max(nu_max, v_hat)``:
    ``m_hat / (sqrt(nu_max + eps_root) + eps)``. The bias corrections can be
    turned off (the paper has none).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_amsgrad()
    >>> s = opt.init(mx.zeros(1))
    >>> u, s = opt.update(mx.array([2.0]), s); u, s = opt.update(mx.array([0.0]), s)
    >>> round(s.nu_max.item(), 3)
    4.0
    """
    def init(params):
        return ScaleByAmsgradState(_count0(), _zeros(params, mu_dtype), _zeros(params),
                                   _zeros(params))

    def update(updates, state, params=None):
        fname = "scale_by_amsgrad"
        _check_state(fname, state, ScaleByAmsgradState)
        count = safe_increment(state.count)
        c1, c2 = _bias_correction(b1, count), _bias_correction(b2, count)

        def leaf(g, m, v, v_max):
            m_new, v_new = _moment(g, m, b1), _moment(fnp.square(g), v, b2)
            m_hat = m_new / cast_like(c1, m_new) if bias_correction_mu else m_new
            v_eff = v_new / cast_like(c2, v_new) if bias_correction_nu else v_new
            v_max = fnp.maximum(v_max, _as(v_eff, v_max))
            u = m_hat / (fnp.sqrt(_plus(v_max, eps_root)) + cast_like(eps, v_max))
            return _as(u, g), _as(m_new, m), _as(v_new, v), v_max

        updates, mu, nu, nu_max = _leafwise(fname, leaf, 4, updates, state.mu, state.nu,
                                            state.nu_max, what=_MU_NU + ("state.nu_max",))
        return updates, ScaleByAmsgradState(count, mu, nu, nu_max)

    return GradientTransformation(init, update)


def scale_by_adamax(b1: float | Any = 0.9, b2: float | Any = 0.999,
                    eps: float | Any = 1e-8) -> GradientTransformation:
    """Adamax's scaling: ``m = b1 m + (1 - b1) g``,
    ``v = max(|g| + eps, b2 v)``, update ``m / (1 - b1**t) / v``. The state
    is a ``ScaleByAdamState``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_adamax(eps=0.0)
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 5) for x in u.tolist()]
    [1.0, -1.0]
    """
    def init(params):
        return ScaleByAdamState(_count0(), _zeros(params), _zeros(params))

    def update(updates, state, params=None):
        fname = "scale_by_adamax"
        _check_state(fname, state, ScaleByAdamState)
        count = safe_increment(state.count)
        c1 = _bias_correction(b1, count)

        def leaf(g, m, v):
            m_new = _moment(g, m, b1)
            v_new = fnp.maximum(fnp.abs(g) + cast_like(eps, v), cast_like(b2, v) * v)
            u = m_new / cast_like(c1, m_new) / v_new
            return _as(u, g), _as(m_new, m), _as(v_new, v)

        updates, mu, nu = _leafwise(fname, leaf, 3, updates, state.mu, state.nu, what=_MU_NU)
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


class ScaleByRmsState(NamedTuple):
    """``nu``: the moving average of squared updates."""

    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    """``count`` (int32) and ``nu``, for ``bias_correction=True``."""

    count: Any
    nu: Any


def _rms_scaling(denominator: Any, eps: Any, eps_in_sqrt: bool) -> Any:
    e = cast_like(eps, denominator)
    return fnp.rsqrt(denominator + e) if eps_in_sqrt else 1 / (fnp.sqrt(denominator) + e)


def scale_by_rms(decay: float | Any = 0.9, eps: float | Any = 1e-8,
                 initial_scale: float | Any = 0.0, eps_in_sqrt: bool = True,
                 bias_correction: bool = False) -> GradientTransformation:
    """RMSProp's scaling: ``v = decay v + (1 - decay) g**2`` (from
    ``initial_scale``), update ``g / sqrt(v + eps)``, or
    ``g / (sqrt(v) + eps)`` without ``eps_in_sqrt`` (PyTorch's and MLX's
    form); with ``bias_correction``, ``v / (1 - decay**t)`` in place of ``v``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_rms(decay=0.75, eps=0.0)
    >>> opt.update(mx.array([2.0]), opt.init(mx.zeros(1)))[0].item()
    2.0
    """
    cls = ScaleByRmsWithCountState if bias_correction else ScaleByRmsState

    def init(params):
        nu = tree.map(lambda p: fnp.full_like(p, initial_scale), params)
        return ScaleByRmsWithCountState(_count0(), nu) if bias_correction else ScaleByRmsState(nu)

    def update(updates, state, params=None):
        fname = "scale_by_rms"
        _check_state(fname, state, cls)
        count = safe_increment(state.count) if bias_correction else None
        correction = _bias_correction(decay, count) if bias_correction else None

        def leaf(g, v):
            v_new = _moment(fnp.square(g), v, decay)
            v_hat = v_new / cast_like(correction, v_new) if bias_correction else v_new
            return _as(g * _rms_scaling(v_hat, eps, eps_in_sqrt), g), _as(v_new, v)

        updates, nu = _leafwise(fname, leaf, 2, updates, state.nu, what=_MU_NU[1:])
        return updates, (ScaleByRmsWithCountState(count, nu) if bias_correction
                         else ScaleByRmsState(nu))

    return GradientTransformation(init, update)


class ScaleByRStdDevState(NamedTuple):
    """``mu``, ``nu``: the moving averages of the updates and their
    squares."""

    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    """``count`` (int32), ``mu`` and ``nu``, for ``bias_correction=True``."""

    count: Any
    mu: Any
    nu: Any


def scale_by_stddev(decay: float | Any = 0.9, eps: float | Any = 1e-8,
                    initial_scale: float | Any = 0.0, eps_in_sqrt: bool = True,
                    bias_correction: bool = False) -> GradientTransformation:
    """Centered RMSProp's scaling: as ``scale_by_rms`` with the variance
    ``v - m**2`` in place of ``v``, ``m = decay m + (1 - decay) g``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_stddev(decay=0.75, eps=0.0)
    >>> round(opt.update(mx.array([2.0]), opt.init(mx.zeros(1)))[0].item(), 4)
    2.3094
    """
    cls = ScaleByRStdDevWithCountState if bias_correction else ScaleByRStdDevState

    def init(params):
        mu = _zeros(params)
        nu = tree.map(lambda p: fnp.full_like(p, initial_scale), params)
        return (ScaleByRStdDevWithCountState(_count0(), mu, nu) if bias_correction
                else ScaleByRStdDevState(mu, nu))

    def update(updates, state, params=None):
        fname = "scale_by_stddev"
        _check_state(fname, state, cls)
        count = safe_increment(state.count) if bias_correction else None
        correction = _bias_correction(decay, count) if bias_correction else None

        def leaf(g, m, v):
            m_new, v_new = _moment(g, m, decay), _moment(fnp.square(g), v, decay)
            m_hat, v_hat = m_new, v_new
            if bias_correction:
                m_hat = m_new / cast_like(correction, m_new)
                v_hat = v_new / cast_like(correction, v_new)
            scaling = _rms_scaling(v_hat - fnp.square(m_hat), eps, eps_in_sqrt)
            return _as(g * scaling, g), _as(m_new, m), _as(v_new, v)

        updates, mu, nu = _leafwise(fname, leaf, 3, updates, state.mu, state.nu, what=_MU_NU)
        return updates, (ScaleByRStdDevWithCountState(count, mu, nu) if bias_correction
                         else ScaleByRStdDevState(mu, nu))

    return GradientTransformation(init, update)


class ScaleByRssState(NamedTuple):
    """``sum_of_squares``: the sum of the squared updates so far (plus the
    initial value)."""

    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value: float | Any = 0.1,
                 eps: float | Any = 1e-7) -> GradientTransformation:
    """Adagrad's scaling: ``s = s + g**2`` (from
    ``initial_accumulator_value``), update ``g / sqrt(s + eps)`` (0 where
    ``s`` is 0).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_rss(initial_accumulator_value=0.0, eps=0.0)
    >>> opt.update(mx.array([2.0, 0.0]), opt.init(mx.zeros(2)))[0].tolist()
    [1.0, 0.0]
    """
    def init(params):
        return ScaleByRssState(tree.map(lambda p: fnp.full_like(p, initial_accumulator_value),
                                        params))

    def leaf(g, s):
        s_new = fnp.square(g) + s
        scaling = fnp.where(s_new > 0, fnp.rsqrt(s_new + cast_like(eps, s_new)), 0.0)
        return _as(g * scaling, g), _as(s_new, s)

    def update(updates, state, params=None):
        fname = "scale_by_rss"
        _check_state(fname, state, ScaleByRssState)
        updates, s = _leafwise(fname, leaf, 2, updates, state.sum_of_squares,
                                what=("state.sum_of_squares",))
        return updates, ScaleByRssState(s)

    return GradientTransformation(init, update)


class ScaleByLionState(NamedTuple):
    """``count`` (int32) and ``mu``, the momentum."""

    count: Any
    mu: Any


def scale_by_lion(b1: float | Any = 0.9, b2: float | Any = 0.99,
                  mu_dtype: mx.Dtype | None = None, *,
                  mode: Literal["hard", "smooth", "refined"] = "hard",
                  smooth_beta: float = 1.0) -> GradientTransformation:
    """Lion's scaling: update ``sign(b1 m + (1 - b1) g)``, then
    ``m = b2 m + (1 - b2) g``. ``mode="smooth"`` takes
    ``tanh(smooth_beta * c)`` in place of ``sign(c)``, ``"refined"`` ``c``
    where ``|c| < 1``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_lion()
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> u.tolist(), [round(x, 4) for x in s.mu.tolist()]
    ([1.0, -1.0], [0.005, -0.02])
    """
    if mode not in ("hard", "smooth", "refined"):
        raise ValueError(f"scale_by_lion: mode must be 'hard', 'smooth' or 'refined', got "
                         f"{mode!r}")

    def init(params):
        return ScaleByLionState(_count0(), _zeros(params, mu_dtype))

    def leaf(g, m):
        c = _moment(g, m, b1)
        if mode == "hard":
            u = fnp.sign(c)
        elif mode == "smooth":
            u = fnp.tanh(smooth_beta * c)
        else:
            u = fnp.where(fnp.abs(c) < 1.0, c, fnp.sign(c))
        return _as(u, g), _as(_moment(g, m, b2), m)

    def update(updates, state, params=None):
        fname = "scale_by_lion"
        _check_state(fname, state, ScaleByLionState)
        updates, mu = _leafwise(fname, leaf, 2, updates, state.mu, what=_MU_NU[:1])
        return updates, ScaleByLionState(safe_increment(state.count), mu)

    return GradientTransformation(init, update)


class ScaleByMuonState(NamedTuple):
    """``count`` (int32) and ``mu``, the momentum."""

    count: Any
    mu: Any


def _orthogonalize(x: Any, steps: int, coeffs: tuple[float, float, float], eps: Any) -> Any:
    """Approximately the orthogonal factor ``U V^T`` of a matrix ``x`` (SVD
    ``U S V^T``): Muon's quintic Newton-Schulz iteration on ``x / ||x||_F``,
    over the shorter side."""
    a, b, c = coeffs
    tall = x.shape[0] > x.shape[1]
    x = fnp.swapaxes(x, 0, 1) if tall else x
    x = x / (fnp.sqrt(fnp.sum(fnp.square(x))) + cast_like(eps, x))
    for _ in range(steps):
        gram = x @ fnp.swapaxes(x, 0, 1)
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return fnp.swapaxes(x, 0, 1) if tall else x


def scale_by_muon(momentum: float | Any = 0.95, nesterov: bool = True, ns_steps: int = 5,
                  ns_coeffs: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
                  eps: float | Any = 1e-7,
                  mu_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """Muon's scaling (momentum orthogonalized by Newton-Schulz):
    ``m = momentum m + (1 - momentum) g``, ``u = (1 - momentum) g +
    momentum m`` with ``nesterov`` (else ``u = m``); an update of two or
    more axes, seen as the matrix ``(shape[0], -1)``, is replaced by its
    approximate orthogonal factor times ``sqrt(max(1, rows / cols))`` (the
    iteration's coefficients trade accuracy for speed: singular values land
    between about 0.7 and 1.2, not at 1).
    Updates of fewer axes keep ``u``: give biases, norms (and usually
    embeddings and the output layer) another optimizer (``partition``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_muon()
    >>> u, _ = opt.update(mx.array([[3.0, 0.0], [0.0, 0.5]]), opt.init(mx.zeros((2, 2))))
    >>> [round(x, 1) for x in mx.linalg.svd(u, compute_uv=False, stream=mx.cpu).tolist()]
    [1.0, 0.7]
    """
    if not (isinstance(ns_steps, int) and ns_steps >= 0):
        raise ValueError(f"scale_by_muon: ns_steps must be a non-negative int, got {ns_steps!r}")

    def init(params):
        return ScaleByMuonState(_count0(), _zeros(params, mu_dtype))

    def leaf(g, m):
        m_new = _moment(g, m, momentum)
        u = (cast_like(1 - momentum, m_new) * g + cast_like(momentum, m_new) * m_new
             if nesterov else m_new)
        if u.ndim >= 2:
            matrix = fnp.reshape(u, (u.shape[0], -1))
            rows, cols = matrix.shape
            u = fnp.reshape(_orthogonalize(matrix, ns_steps, ns_coeffs, eps), u.shape)
            u = u * max(1.0, rows / cols) ** 0.5
        return _as(u, g), _as(m_new, m)

    def update(updates, state, params=None):
        fname = "scale_by_muon"
        _check_state(fname, state, ScaleByMuonState)
        updates, mu = _leafwise(fname, leaf, 2, updates, state.mu, what=_MU_NU[:1])
        return updates, ScaleByMuonState(safe_increment(state.count), mu)

    return GradientTransformation(init, update)


class ScaleByAdaDeltaState(NamedTuple):
    """``e_g``, ``e_x``: the moving averages of the squared gradients and of
    the squared updates."""

    e_g: Any
    e_x: Any


def scale_by_adadelta(rho: float | Any = 0.9, eps: float | Any = 1e-6) -> GradientTransformation:
    """Adadelta's scaling: ``e_g = rho e_g + (1 - rho) g**2``, update
    ``d = sqrt(e_x + eps) / sqrt(e_g + eps) * g``, then
    ``e_x = rho e_x + (1 - rho) d**2``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_adadelta(rho=0.0, eps=1.0)
    >>> opt.update(mx.array([0.0, 3.0]), opt.init(mx.zeros(2)))[0].tolist()
    [0.0, 0.9486832618713379]
    """
    def init(params):
        return ScaleByAdaDeltaState(_zeros(params), _zeros(params))

    def leaf(g, e_g, e_x):
        e_g_new = _moment(fnp.square(g), e_g, rho)
        d = (fnp.sqrt(e_x + cast_like(eps, e_x)) / fnp.sqrt(e_g_new + cast_like(eps, e_g_new))
             * g)
        e_x_new = _moment(fnp.square(d), e_x, rho)
        return _as(d, g), _as(e_g_new, e_g), _as(e_x_new, e_x)

    def update(updates, state, params=None):
        fname = "scale_by_adadelta"
        _check_state(fname, state, ScaleByAdaDeltaState)
        updates, e_g, e_x = _leafwise(fname, leaf, 3, updates, state.e_g, state.e_x,
                                      what=("state.e_g", "state.e_x"))
        return updates, ScaleByAdaDeltaState(e_g, e_x)

    return GradientTransformation(init, update)


# ---------------------------------------------------------------------------
# Adafactor's factored second moments
# ---------------------------------------------------------------------------

def _decay_rate_pow(i: Any, exponent: float | Any = 0.8) -> Any:
    """Adafactor's second-moment decay at step ``i``: ``1 - (i + 1) ** -exponent``
    (0 at the first step)."""
    t = _f32(i + 1)
    return 1.0 - fnp.power(t, -_f32(exponent))


def _factored_dims(shape: tuple[int, ...], factored: bool,
                   min_dim_size_to_factor: int) -> tuple[int, int] | None:
    """The axes (second largest, largest) to keep factored statistics
    over, or ``None`` when the leaf keeps a full second moment."""
    if not factored or len(shape) < 2:
        return None
    order = np.argsort(shape, kind="stable")
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return int(order[-2]), int(order[-1])


class FactoredState(NamedTuple):
    """``count`` (int32); ``v_row``, ``v_col``: the factored second moments
    of the factored leaves (the means over the largest and the second
    largest axis; a 1-element placeholder for the others); ``v``: the full
    second moment of the others (a placeholder for the factored ones)."""

    count: Any
    v_row: Any
    v_col: Any
    v: Any


def scale_by_factored_rms(factored: bool = True, decay_rate: float | Any = 0.8,
                          step_offset: int | Any = 0, min_dim_size_to_factor: int = 128,
                          epsilon: float | Any = 1e-30,
                          decay_rate_fn: Callable[[Any, Any], Any] = _decay_rate_pow,
                          ) -> GradientTransformation:
    """Adafactor's scaling: ``g`` divided by the square root of a moving
    average of ``g**2 + epsilon``, with decay
    ``decay_rate_fn(count - step_offset, decay_rate)`` (by default
    ``1 - (count - step_offset + 1) ** -decay_rate``). A leaf whose two
    largest axes are at least ``min_dim_size_to_factor`` long keeps only
    its means over each of them (``v_row``, ``v_col``) and uses their
    outer product over their mean as the estimate.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_factored_rms(min_dim_size_to_factor=2)
    >>> s = opt.init(mx.zeros((2, 3)))
    >>> s.v_row.shape, s.v_col.shape, s.v.shape
    ((2,), (3,), (1,))
    >>> u, s = opt.update(mx.full((2, 3), 4.0), s)
    >>> u.tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    def init(params):
        def one(p):
            dims = _factored_dims(tuple(p.shape), factored, min_dim_size_to_factor)
            placeholder = fnp.zeros((1,), dtype=p.dtype)
            if dims is None:
                return placeholder, placeholder, fnp.zeros_like(p)
            d1, d0 = dims
            shape = tuple(p.shape)
            row = tuple(n for i, n in enumerate(shape) if i != d0)
            col = tuple(n for i, n in enumerate(shape) if i != d1)
            return fnp.zeros(row, dtype=p.dtype), fnp.zeros(col, dtype=p.dtype), placeholder

        leaves, treedef = tree.flatten(params)
        parts = [one(p) for p in leaves]
        return FactoredState(_count0(), *(tree.unflatten(treedef, [x[k] for x in parts])
                                          for k in range(3)))

    def update(updates, state, params=None):
        fname = "scale_by_factored_rms"
        _check_state(fname, state, FactoredState)
        decay = decay_rate_fn(state.count - step_offset, decay_rate)

        def leaf(g, v_row, v_col, v):
            dims = _factored_dims(tuple(g.shape), factored, min_dim_size_to_factor)
            g_sq = fnp.square(g) + cast_like(epsilon, g)
            if dims is None:
                if tuple(v.shape) != tuple(g.shape):
                    raise ValueError(f"{fname}: an update of shape {tuple(g.shape)} meets a "
                                     f"second moment of shape {tuple(v.shape)}; was the state "
                                     "made for other parameters?")
                v_new = _moment(g_sq, v, decay)
                return _as(g * fnp.rsqrt(v_new), g), v_row, v_col, _as(v_new, v)
            d1, d0 = dims
            row_new = _as(_moment(fnp.mean(g_sq, axis=d0), v_row, decay), v_row)
            col_new = _as(_moment(fnp.mean(g_sq, axis=d1), v_col, decay), v_col)
            reduced_d1 = d1 - 1 if d1 > d0 else d1
            row_factor = fnp.rsqrt(row_new / fnp.mean(row_new, axis=reduced_d1, keepdims=True))
            col_factor = fnp.rsqrt(col_new)
            u = g * fnp.expand_dims(row_factor, d0) * fnp.expand_dims(col_factor, d1)
            return _as(u, g), row_new, col_new, v

        updates, v_row, v_col, v = _leafwise(
            fname, leaf, 4, updates, state.v_row, state.v_col, state.v,
            what=("state.v_row", "state.v_col", "state.v"), same_shape=False)
        return updates, FactoredState(safe_increment(state.count), v_row, v_col, v)

    return GradientTransformation(init, update)


# ---------------------------------------------------------------------------
# Weight decay and clipping
# ---------------------------------------------------------------------------

class WeightDecaySchedule(NamedTuple):
    """``count``: updates so far (int32), for a scheduled weight decay."""

    count: Any


def add_decayed_weights(weight_decay: ScalarOrSchedule = 0.0,
                        mask: Any | Callable[[Any], Any] | None = None) -> GradientTransformation:
    """Add ``weight_decay * p`` to each update (decoupled weight decay when
    placed before the learning rate). ``weight_decay`` may be a schedule;
    ``mask`` (a pytree of bools like the parameters, a prefix of it, or a
    function of the parameters returning one) limits it to some parameters,
    as ``masked``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.add_decayed_weights(0.1)
    >>> opt.update(mx.array([1.0]), opt.init(None), mx.array([5.0]))[0].item()
    1.5
    """
    scheduled = callable(weight_decay)

    def init(params):
        return WeightDecaySchedule(_count0()) if scheduled else EmptyState()

    def update(updates, state, params=None):
        fname = "add_decayed_weights"
        _need_params(fname, params)
        _check_state(fname, state, WeightDecaySchedule if scheduled else EmptyState)
        new_state = WeightDecaySchedule(safe_increment(state.count)) if scheduled else state
        if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
            return updates, new_state  # nothing to add: no work in the graph
        wd = weight_decay(state.count) if scheduled else weight_decay
        (updates,) = _leafwise(fname, lambda u, p: (_as(u + cast_like(wd, p) * p, u),), 1,
                               updates, params, what=("params",))
        return updates, new_state

    transform = GradientTransformation(init, update)
    if mask is not None:
        return masked(transform, mask)
    return transform


def clip(max_delta: float | Any) -> GradientTransformation:
    """Clip each update element to ``[-max_delta, max_delta]``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.clip(1.0).update(mx.array([-3.0, 0.5, 2.0]), optim.EmptyState())[0].tolist()
    [-1.0, 0.5, 1.0]
    """
    def update(updates, state, params=None):
        def one(u):
            m = cast_like(max_delta, u)
            return fnp.clip(u, -m, m)

        return tree.map(one, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def global_norm(updates: Any) -> Any:
    """The L2 norm of all the leaves of ``updates`` together, a float32
    scalar (as ``optax.global_norm``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.global_norm({"a": mx.array([3.0]), "b": mx.array([[4.0]], mx.bfloat16)}).item()
    5.0
    """
    total = mx.array(0.0, mx.float32)
    for u in tree.leaves(updates):
        total = total + fnp.sum(fnp.square(_f32(u)))
    return fnp.sqrt(total)


def clip_by_global_norm(max_norm: float | Any) -> GradientTransformation:
    """Scale all the updates by ``max_norm / global_norm(updates)`` when that
    norm exceeds ``max_norm``; otherwise leave them unchanged.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.clip_by_global_norm(1.0)
    >>> opt.update({"a": mx.array([3.0]), "b": mx.array([4.0])}, optim.EmptyState())[0]["b"].item()
    0.800000011920929
    """
    def update(updates, state, params=None):
        norm = global_norm(updates)
        factor = fnp.where(norm < _f32(max_norm), 1.0, _f32(max_norm) / norm)
        return tree.map(lambda u: u * cast_like(factor, u), updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def clip_by_block_rms(threshold: float | Any) -> GradientTransformation:
    """Divide each update by ``max(1, rms(u) / threshold)``: a root mean
    square of at most ``threshold`` per parameter (Adafactor's clipping).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.clip_by_block_rms(1.0).update(mx.array([3.0, -4.0]), optim.EmptyState())[0].tolist()
    [0.8485281467437744, -1.1313709020614624]
    """
    def update(updates, state, params=None):
        def one(u):
            denominator = fnp.maximum(1.0, _rms32(u) / _f32(threshold))
            return u / cast_like(denominator, u)

        return tree.map(one, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


# ---------------------------------------------------------------------------
# L-BFGS
# ---------------------------------------------------------------------------

class ScaleByLBFGSState(NamedTuple):
    """``count`` (int32); ``params``, ``updates``: the last call's parameters
    and updates (gradients); ``diff_params_memory``, ``diff_updates_memory``:
    the last ``memory_size`` differences of each (a leading axis of
    ``memory_size`` per leaf, a ring buffer); ``weights_memory``: their
    ``1 / <dg, dp>``."""

    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Any


def _tree_vdot(a: Any, b: Any) -> Any:
    """``<a, b>`` over all the leaves, a float32 scalar."""
    total = mx.array(0.0, mx.float32)
    for x, y in zip(tree.leaves(a), tree.leaves(b)):
        total = total + fnp.sum(_f32(x) * _f32(y))
    return total


def scale_by_lbfgs(memory_size: int = 10,
                   scale_init_precond: bool = True) -> GradientTransformation:
    """L-BFGS's preconditioning: the update is ``H g``, ``H`` the inverse
    Hessian estimate built from the last ``memory_size`` differences of
    parameters ``s`` and of updates (gradients) ``y`` by the two-loop
    recursion (Nocedal and Wright, algorithm 7.4). The initial estimate is
    ``<s, y> / <y, y>`` times the identity with ``scale_init_precond`` (at
    the first step ``min(1, 1 / |g|)``), else the identity. ``update``
    needs ``params``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_lbfgs(scale_init_precond=False)
    >>> s = opt.init(mx.zeros(2))
    >>> u, s = opt.update(mx.array([2.0, 0.0]), s, mx.zeros(2))
    >>> u, s = opt.update(mx.array([1.0, 0.0]), s, mx.array([-1.0, 0.0]))
    >>> u.tolist()
    [1.0, 0.0]
    """
    if isinstance(memory_size, bool) or not isinstance(memory_size, int) or memory_size < 1:
        raise ValueError(f"scale_by_lbfgs: memory_size must be a positive int, got "
                         f"{memory_size!r}")
    m = memory_size

    def init(params):
        stacked = tree.map(lambda p: fnp.zeros((m, *p.shape), dtype=p.dtype), params)
        return ScaleByLBFGSState(_count0(), _zeros(params), _zeros(params), stacked, stacked,
                                 fnp.zeros((m,), dtype=mx.float32))

    def write(memory, slot, value):
        """``memory`` with row ``slot`` replaced by ``value``."""
        rows = fnp.reshape(fnp.arange(m) == slot, (m,) + (1,) * (memory.ndim - 1))
        return fnp.where(rows, fnp.expand_dims(fnp.astype(value, memory.dtype), 0), memory)

    def row(memory, slot):
        return tree.map(lambda x: fnp.take(x, slot, axis=0), memory)

    def update(updates, state, params=None):
        fname = "scale_by_lbfgs"
        _need_params(fname, params)
        _check_state(fname, state, ScaleByLBFGSState)
        started = state.count > 0
        slot = state.count % m
        last_slot = (state.count - 1) % m
        (ds,) = _leafwise(fname, lambda p, q: (p - q,), 1, params, state.params,
                          what=("state.params",))
        (dy,) = _leafwise(fname, lambda u, v: (u - v,), 1, updates, state.updates,
                          what=("state.updates",))
        curvature = _tree_vdot(dy, ds)
        weight = fnp.where(curvature == 0.0, 0.0, 1.0 / curvature)
        ds, dy = (tree.map(lambda x: fnp.where(started, x, fnp.zeros_like(x)), t)
                  for t in (ds, dy))
        weight = fnp.where(started, weight, 0.0)
        s_memory = tree.map(lambda mem, x: write(mem, last_slot, x),
                            state.diff_params_memory, ds)
        y_memory = tree.map(lambda mem, x: write(mem, last_slot, x),
                            state.diff_updates_memory, dy)
        weights = write(state.weights_memory, last_slot, weight)
        if scale_init_precond:
            y_norm2 = _tree_vdot(dy, dy)
            gamma = fnp.where(y_norm2 > 0.0, _tree_vdot(dy, ds) / y_norm2, 1.0)
            first = fnp.minimum(1.0, 1.0 / fnp.sqrt(_tree_vdot(updates, updates)))
            gamma = fnp.where(started, gamma, first)
        else:
            gamma = 1.0
        # The two-loop recursion, newest pair first, then back from the oldest.
        order = [(slot + k) % m for k in range(m)]
        q, alphas = updates, {}
        for k in reversed(range(m)):
            idx = order[k]
            alphas[k] = weights[idx] * _tree_vdot(row(s_memory, idx), q)
            q = tree.map(lambda v, y: _as(v - cast_like(alphas[k], y) * y, v), q,
                         row(y_memory, idx))
        r = tree.map(lambda v: _as(v * cast_like(gamma, v), v), q)
        for k in range(m):
            idx = order[k]
            beta = weights[idx] * _tree_vdot(row(y_memory, idx), r)
            r = tree.map(lambda v, s: _as(v + cast_like(alphas[k] - beta, s) * s, v), r,
                         row(s_memory, idx))
        return r, ScaleByLBFGSState(safe_increment(state.count), params, updates, s_memory,
                                    y_memory, weights)

    return GradientTransformation(init, update)
