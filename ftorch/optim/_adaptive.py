"""More of optax's scaling transformations: AdaBelief's, Yogi's, RAdam's,
Adan's, NovoGrad's, SM3's, Rprop's, the optimistic gradient, DoG's distance
over gradients, the Polyak step size and the normalisation by the update's
norm; and the accumulation of ``apply_every`` and ``centralize``. Each
follows ``_transform``'s conventions: hyperparameters cast to the dtype of
the leaf they meet, states that keep their dtypes.

>>> import ftorch.optim as optim, mlx.core as mx
>>> opt = optim.chain(optim.scale_by_yogi(), optim.scale(-0.1))
>>> u, state = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
>>> [round(x, 3) for x in u.tolist()]
[-0.1, 0.1]
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.optim._base import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    _check_state,
    cast_like,
    init_empty_state,
    safe_increment,
)
from ftorch.optim._transform import (
    _MU_NU,
    ScaleByAdamState,
    _as,
    _bias_correction,
    _count0,
    _f32,
    _leafwise,
    _moment,
    _need_params,
    _plus,
    _zeros,
    global_norm,
)

__all__ = [
    "scale_by_belief", "ScaleByBeliefState", "scale_by_yogi", "scale_by_radam",
    "scale_by_adan", "ScaleByAdanState", "scale_by_novograd", "ScaleByNovogradState",
    "scale_by_sm3", "ScaleBySM3State", "scale_by_rprop", "ScaleByRpropState",
    "scale_by_optimistic_gradient", "ScaleByOptimisticGradientState",
    "scale_by_distance_over_gradients", "ScaleByDistanceOverGradientsState", "scale_by_polyak",
    "normalize_by_update_norm", "apply_every", "ApplyEvery", "centralize",
]


def _corrected_mu(m: Any, g: Any, b1: Any, count: Any, nesterov: bool) -> Any:
    """The bias-corrected first moment, NAdam's look-ahead one with
    ``nesterov``: ``b1 m / (1 - b1**(t+1)) + (1 - b1) g / (1 - b1**t)``."""
    c1 = _bias_correction(b1, count)
    if not nesterov:
        return m / cast_like(c1, m)
    c1_next = _bias_correction(b1, safe_increment(count))
    return (cast_like(b1, m) * (m / cast_like(c1_next, m))
            + cast_like(1 - b1, m) * (g / cast_like(c1, g)))


class ScaleByBeliefState(NamedTuple):
    """``count`` (int32); ``mu``: the moving average of the updates;
    ``nu``: of the squared deviations from it (the "belief")."""

    count: Any
    mu: Any
    nu: Any


def scale_by_belief(b1: float | Any = 0.9, b2: float | Any = 0.999, eps: float | Any = 1e-16,
                    eps_root: float | Any = 1e-16, *,
                    nesterov: bool = False) -> GradientTransformation:
    """AdaBelief's scaling: ``m = b1 m + (1 - b1) g``,
    ``s = b2 s + (1 - b2) (g - m)**2 + eps_root``, update
    ``m_hat / (sqrt(s_hat) + eps)`` with Adam's bias corrections (NAdam's
    ``m_hat`` with ``nesterov``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_belief()
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 3) for x in u.tolist()]
    [1.111, -1.111]
    """
    def init(params):
        return ScaleByBeliefState(_count0(), _zeros(params), _zeros(params))

    def update(updates, state, params=None):
        fname = "scale_by_belief"
        _check_state(fname, state, ScaleByBeliefState)
        count = safe_increment(state.count)
        c2 = _bias_correction(b2, count)

        def leaf(g, m, s):
            m_new = _moment(g, m, b1)
            s_new = _plus(_moment(fnp.square(g - m_new), s, b2), eps_root)
            m_hat = _corrected_mu(m_new, g, b1, count, nesterov)
            u = m_hat / (fnp.sqrt(s_new / cast_like(c2, s_new)) + cast_like(eps, s_new))
            return _as(u, g), _as(m_new, m), _as(s_new, s)

        updates, mu, nu = _leafwise(fname, leaf, 3, updates, state.mu, state.nu, what=_MU_NU)
        return updates, ScaleByBeliefState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_yogi(b1: float | Any = 0.9, b2: float | Any = 0.999, eps: float | Any = 1e-3,
                  eps_root: float | Any = 0.0,
                  initial_accumulator_value: float | Any = 1e-6) -> GradientTransformation:
    """Yogi's scaling: Adam's, with the additive second moment
    ``v = v - (1 - b2) sign(v - g**2) g**2``; both moments start at
    ``initial_accumulator_value``. The state is a ``ScaleByAdamState``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_yogi()
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 3) for x in u.tolist()]
    [0.996, -0.999]
    """
    def init(params):
        def full(p):
            return fnp.full_like(p, initial_accumulator_value)
        return ScaleByAdamState(_count0(), tree.map(full, params), tree.map(full, params))

    def update(updates, state, params=None):
        fname = "scale_by_yogi"
        _check_state(fname, state, ScaleByAdamState)
        count = safe_increment(state.count)
        c1, c2 = _bias_correction(b1, count), _bias_correction(b2, count)

        def leaf(g, m, v):
            m_new = _moment(g, m, b1)
            g2 = fnp.square(g)
            v_new = v - cast_like(1 - b2, v) * fnp.sign(v - g2) * g2
            u = (m_new / cast_like(c1, m_new)
                 / (fnp.sqrt(_plus(v_new / cast_like(c2, v_new), eps_root)) + cast_like(eps, v)))
            return _as(u, g), _as(m_new, m), _as(v_new, v)

        updates, mu, nu = _leafwise(fname, leaf, 3, updates, state.mu, state.nu, what=_MU_NU)
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_radam(b1: float | Any = 0.9, b2: float | Any = 0.999, eps: float | Any = 1e-8,
                   eps_root: float | Any = 0.0, threshold: float | Any = 5.0, *,
                   nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam's scaling: Adam's update times the rectification
    ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2)
    rho_t))`` once the length of the approximated moving average ``rho_t =
    rho_inf - 2 t b2**t / (1 - b2**t)`` reaches ``threshold``
    (``rho_inf = 2 / (1 - b2) - 1``); before, the bias-corrected momentum
    alone. The state is a ``ScaleByAdamState``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_radam()
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 3) for x in u.tolist()]
    [0.5, -2.0]
    """
    def init(params):
        return ScaleByAdamState(_count0(), _zeros(params), _zeros(params))

    def update(updates, state, params=None):
        fname = "scale_by_radam"
        _check_state(fname, state, ScaleByAdamState)
        count = safe_increment(state.count)
        rho_inf = 2.0 / (1.0 - _f32(b2)) - 1.0
        b2t = fnp.power(_f32(b2), _f32(count))
        rho = rho_inf - 2.0 * _f32(count) * b2t / (1.0 - b2t)
        rectified = rho >= threshold
        # Where not rectified the square root's argument may be negative: unused.
        r = fnp.sqrt(fnp.where(rectified, (rho - 4.0) * (rho - 2.0) * rho_inf
                               / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho), 1.0))
        c2 = _bias_correction(b2, count)

        def leaf(g, m, v):
            m_new, v_new = _moment(g, m, b1), _moment(fnp.square(g), v, b2)
            m_hat = _corrected_mu(m_new, g, b1, count, nesterov)
            adam = (cast_like(r, m_hat) * m_hat
                    / (fnp.sqrt(_plus(v_new / cast_like(c2, v_new), eps_root))
                       + cast_like(eps, v_new)))
            return _as(fnp.where(rectified, adam, m_hat), g), _as(m_new, m), _as(v_new, v)

        updates, mu, nu = _leafwise(fname, leaf, 3, updates, state.mu, state.nu, what=_MU_NU)
        return updates, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


class ScaleByAdanState(NamedTuple):
    """``m``, ``v``, ``n``: the moving averages of the gradients, of their
    differences and of the squared corrected gradients; ``g``: the last
    gradient; ``t``: updates so far (int32)."""

    m: Any
    v: Any
    n: Any
    g: Any
    t: Any


def scale_by_adan(b1: float | Any = 0.98, b2: float | Any = 0.92, b3: float | Any = 0.99,
                  eps: float | Any = 1e-8, eps_root: float | Any = 0.0) -> GradientTransformation:
    """Adan's scaling (Nesterov momentum estimated from gradient
    differences ``d = g - g_prev``, 0 at the first step):
    ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) d``,
    ``n = b3 n + (1 - b3) (g + (1 - b2) d)**2``, update
    ``(m_hat + (1 - b2) v_hat) / (sqrt(n_hat + eps_root) + eps)``, each
    bias-corrected.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_adan()
    >>> u, s = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 3) for x in u.tolist()]
    [1.0, -1.0]
    """
    def init(params):
        return ScaleByAdanState(_zeros(params), _zeros(params), _zeros(params), _zeros(params),
                                _count0())

    def update(updates, state, params=None):
        fname = "scale_by_adan"
        _check_state(fname, state, ScaleByAdanState)
        t = safe_increment(state.t)
        c1, c2, c3 = (_bias_correction(b, t) for b in (b1, b2, b3))
        first = state.t == 0

        def leaf(g, m, v, n, g_prev):
            d = fnp.where(first, fnp.zeros_like(g), g - g_prev)
            m_new, v_new = _moment(g, m, b1), _moment(d, v, b2)
            n_new = _moment(fnp.square(g + cast_like(1 - b2, d) * d), n, b3)
            direction = (m_new / cast_like(c1, m_new)
                         + cast_like(1 - b2, v_new) * (v_new / cast_like(c2, v_new)))
            u = direction / (fnp.sqrt(_plus(n_new / cast_like(c3, n_new), eps_root))
                             + cast_like(eps, n_new))
            return _as(u, g), _as(m_new, m), _as(v_new, v), _as(n_new, n), _as(g, g_prev)

        updates, m, v, n, g = _leafwise(fname, leaf, 5, updates, state.m, state.v, state.n,
                                        state.g, what=("state.m", "state.v", "state.n",
                                                       "state.g"))
        return updates, ScaleByAdanState(m, v, n, g, t)

    return GradientTransformation(init, update)


class ScaleByNovogradState(NamedTuple):
    """``count`` (int32); ``mu``: the momentum; ``nu``: per parameter, the
    moving average of its gradient's squared norm (a scalar)."""

    count: Any
    mu: Any
    nu: Any


def scale_by_novograd(b1: float | Any = 0.9, b2: float | Any = 0.25, eps: float | Any = 1e-8,
                      eps_root: float | Any = 0.0, weight_decay: float | Any = 0.0,
                      mu_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """NovoGrad's scaling, layer-wise: ``nu = b2 nu + (1 - b2) |g|**2``
    (``|g|**2`` at the first step), ``m = b1 m + g / (sqrt(nu + eps_root) +
    eps) + weight_decay p`` (without ``b1 m`` at the first step); the update
    is ``m``. ``update`` needs ``params`` when ``weight_decay`` is not 0.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_novograd()
    >>> p = mx.zeros(2)
    >>> [round(x, 3) for x in opt.update(mx.array([3.0, -4.0]), opt.init(p), p)[0].tolist()]
    [0.6, -0.8]
    """
    def init(params):
        return ScaleByNovogradState(
            _count0(), _zeros(params, mu_dtype),
            tree.map(lambda p: fnp.zeros((), dtype=p.dtype), params))

    def update(updates, state, params=None):
        fname = "scale_by_novograd"
        _check_state(fname, state, ScaleByNovogradState)
        decays = not (isinstance(weight_decay, (int, float)) and weight_decay == 0)
        if decays:
            _need_params(fname, params)
        count = safe_increment(state.count)
        first = count == 1
        p_tree = params if decays else updates

        def leaf(g, m, nu, p):
            norm2 = fnp.astype(fnp.sum(fnp.square(_f32(g))), nu.dtype)
            nu_new = fnp.where(first, norm2, _moment(norm2, nu, b2))
            step = g / (fnp.sqrt(_plus(nu_new, eps_root)) + cast_like(eps, nu_new))
            if decays:
                step = step + cast_like(weight_decay, p) * p
            m_new = fnp.where(first, step, cast_like(b1, m) * m + step)
            return _as(m_new, g), _as(m_new, m), _as(nu_new, nu)

        updates, mu, nu = _leafwise(fname, leaf, 3, updates, state.mu, state.nu, p_tree,
                                    what=("state.mu", "state.nu", "params"), same_shape=False)
        return updates, ScaleByNovogradState(count, mu, nu)

    return GradientTransformation(init, update)


class ScaleBySM3State(NamedTuple):
    """``mu``: per parameter, a list of one accumulator per axis (the
    maxima over the other axes); ``nu``: the momentum."""

    mu: Any
    nu: Any


def scale_by_sm3(b1: float | Any = 0.9, b2: float | Any = 1.0,
                 eps: float | Any = 1e-8) -> GradientTransformation:
    """SM3's scaling (Anil et al.), memory-efficient Adagrad: each element's
    accumulator is the smallest of its axes' accumulators plus ``g**2``
    (``b2 acc + (1 - b2) g**2`` for ``b2 < 1``); each axis keeps the maxima
    of the result over the other axes; the update is a ``b1`` moving
    average of ``g / sqrt(acc + eps)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_sm3()
    >>> u, s = opt.update(mx.array([[3.0, 4.0]]), opt.init(mx.zeros((1, 2))))
    >>> [round(x, 3) for x in u[0].tolist()], [m.shape for m in s.mu]
    ([0.1, 0.1], [(1,), (2,)])
    """
    squared_weight = 1.0 if isinstance(b2, (int, float)) and b2 == 1.0 else 1.0 - b2

    def init(params):
        def per_axis(p):
            return [fnp.zeros((n,), dtype=p.dtype) for n in p.shape]
        leaves, treedef = tree.flatten(params)
        return ScaleBySM3State(tree.unflatten(treedef, [per_axis(p) for p in leaves]),
                               _zeros(params))

    def update(updates, state, params=None):
        fname = "scale_by_sm3"
        _check_state(fname, state, ScaleBySM3State)
        leaves, treedef = tree.flatten(updates)
        accumulators = treedef.flatten_up_to(state.mu)
        nus = tree.leaves(state.nu)
        if len(nus) != len(leaves):
            raise ValueError(f"{fname}: the state was made for other parameters (it has "
                             f"{len(nus)} leaves, the updates {len(leaves)})")
        out, new_mu, new_nu = [], [], []
        for g, axes, nu in zip(leaves, accumulators, nus):
            if g.ndim == 0:
                raise ValueError(f"{fname}: scalar parameters have no axes to accumulate over")
            expanded = [fnp.reshape(a, tuple(n if j == i else 1 for j, n in enumerate(g.shape)))
                        for i, a in enumerate(axes)]
            smallest = expanded[0]
            for a in expanded[1:]:
                smallest = fnp.minimum(smallest, a)
            acc = cast_like(squared_weight, g) * fnp.square(g) + cast_like(b2, g) * smallest
            scaled = g * fnp.where(acc > 0, fnp.rsqrt(acc + cast_like(eps, acc)), 0.0)
            nu_new = _as(_moment(scaled, nu, b1), nu)
            out.append(_as(nu_new, g))
            new_nu.append(nu_new)
            new_mu.append([_as(fnp.max(acc, axis=tuple(j for j in range(g.ndim) if j != i)), a)
                           if g.ndim > 1 else _as(acc, a) for i, a in enumerate(axes)])
        return tree.unflatten(treedef, out), ScaleBySM3State(
            tree.unflatten(treedef, new_mu), tree.unflatten(treedef, new_nu))

    return GradientTransformation(init, update)


class ScaleByRpropState(NamedTuple):
    """``step_sizes``: each element's step size; ``prev_updates``: the last
    step (0 after a sign change)."""

    step_sizes: Any
    prev_updates: Any


def scale_by_rprop(learning_rate: float | Any, eta_minus: float | Any = 0.5,
                   eta_plus: float | Any = 1.2, min_step_size: float | Any = 1e-6,
                   max_step_size: float | Any = 50.0) -> GradientTransformation:
    """Rprop's scaling: each element's step size (from ``learning_rate``)
    grows by ``eta_plus`` while its gradient keeps its sign and shrinks by
    ``eta_minus`` when it flips (within ``[min_step_size,
    max_step_size]``); the step is ``step_size * sign(g)``, 0 right after
    a flip. As in optax, the update returned is the step computed at the
    previous call (0 at the first, and 0 after a flip), one call behind.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_rprop(0.1)
    >>> s = opt.init(mx.zeros(2))
    >>> u, s = opt.update(mx.array([1.0, -1.0]), s); u, s = opt.update(mx.array([1.0, 1.0]), s)
    >>> [round(x, 3) for x in u.tolist()]
    [0.1, 0.0]
    """
    def init(params):
        return ScaleByRpropState(tree.map(lambda p: fnp.full_like(p, learning_rate), params),
                                 _zeros(params))

    def leaf(g, step, prev):
        agreement = g * prev
        grown = fnp.clip(step * fnp.where(agreement > 0, cast_like(eta_plus, step),
                                          cast_like(eta_minus, step)),
                         cast_like(min_step_size, step), cast_like(max_step_size, step))
        step_new = fnp.where(agreement == 0, step, grown)
        flipped = agreement < 0
        step_taken = fnp.where(flipped, fnp.zeros_like(g), step_new * fnp.sign(g))
        # As optax: the update is the step stored at the previous call (so the
        # first is 0), dropped after a sign flip.
        u = fnp.where(flipped, fnp.zeros_like(prev), prev)
        return _as(u, g), _as(step_new, step), _as(step_taken, prev)

    def update(updates, state, params=None):
        fname = "scale_by_rprop"
        _check_state(fname, state, ScaleByRpropState)
        updates, steps, prev = _leafwise(fname, leaf, 3, updates, state.step_sizes,
                                         state.prev_updates,
                                         what=("state.step_sizes", "state.prev_updates"))
        return updates, ScaleByRpropState(steps, prev)

    return GradientTransformation(init, update)


class ScaleByOptimisticGradientState(NamedTuple):
    """``is_initial_step`` (a bool array) and ``previous_gradient``."""

    is_initial_step: Any
    previous_gradient: Any


def scale_by_optimistic_gradient(alpha: float | Any = 1.0,
                                 beta: float | Any = 1.0) -> GradientTransformation:
    """The optimistic gradient: ``(alpha + beta) g - beta g_prev`` (``g_prev
    = g`` at the first step), for min-max games.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_optimistic_gradient()
    >>> s = opt.init(mx.zeros(1))
    >>> u, s = opt.update(mx.array([1.0]), s); u, s = opt.update(mx.array([3.0]), s)
    >>> u.item()
    5.0
    """
    def init(params):
        return ScaleByOptimisticGradientState(mx.array(True), _zeros(params))

    def update(updates, state, params=None):
        fname = "scale_by_optimistic_gradient"
        _check_state(fname, state, ScaleByOptimisticGradientState)

        def leaf(g, prev):
            prev = fnp.where(state.is_initial_step, g, prev)
            u = cast_like(alpha + beta, g) * g - cast_like(beta, g) * prev
            return _as(u, g), _as(g, prev)

        updates, prev = _leafwise(fname, leaf, 2, updates, state.previous_gradient,
                                  what=("state.previous_gradient",))
        return updates, ScaleByOptimisticGradientState(mx.array(False), prev)

    return GradientTransformation(init, update)


class ScaleByDistanceOverGradientsState(NamedTuple):
    """Per parameter: ``max_dist``, the largest distance from the initial
    parameters so far; ``grad_sum_of_squares`` (shape ``(1,)``); and
    ``init_params``."""

    max_dist: Any
    grad_sum_of_squares: Any
    init_params: Any


def scale_by_distance_over_gradients(reps_rel: float = 1e-6, eps: float = 1e-8,
                                     param_dtype: mx.Dtype = mx.float32,
                                     global_scale: float = 1.0) -> GradientTransformation:
    """DoG's layer-wise step size (Ivgi et al.): each gradient times
    ``global_scale * d / sqrt(G + eps)``, ``d`` the largest distance of its
    parameter from where it started (at least ``reps_rel (1 + |p_0|)``) and
    ``G`` the sum of its squared gradient norms so far. ``update`` needs
    ``params``; use it with a learning rate of 1.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_distance_over_gradients(reps_rel=0.1)
    >>> p = mx.array([3.0, 4.0])
    >>> [round(x, 3) for x in opt.update(mx.array([1.0, 0.0]), opt.init(p), p)[0].tolist()]
    [0.6, 0.0]
    """
    def distance(x, y=None):
        d = _f32(x) if y is None else _f32(x) - _f32(y)
        return fnp.sqrt(fnp.sum(fnp.square(d)))

    def init(params):
        return ScaleByDistanceOverGradientsState(
            tree.map(lambda p: reps_rel * (1.0 + distance(p)), params),
            tree.map(lambda p: fnp.zeros((1,), dtype=mx.float32), params),
            tree.map(lambda p: fnp.astype(p, param_dtype), params))

    def update(updates, state, params=None):
        fname = "scale_by_distance_over_gradients"
        _need_params(fname, params)
        _check_state(fname, state, ScaleByDistanceOverGradientsState)

        def leaf(g, d, sos, p, p0):
            d_new = fnp.maximum(d, distance(p, p0))
            sos_new = sos + fnp.sum(fnp.square(_f32(g)))
            eta = global_scale * d_new / fnp.sqrt(sos_new + eps)
            return fnp.astype(cast_like(eta, g) * g, g.dtype), d_new, sos_new

        updates, d, sos = _leafwise(fname, leaf, 3, updates, state.max_dist,
                                    state.grad_sum_of_squares, params, state.init_params,
                                    what=("state.max_dist", "state.grad_sum_of_squares",
                                          "params", "state.init_params"), same_shape=False)
        return updates, ScaleByDistanceOverGradientsState(d, sos, state.init_params)

    return GradientTransformation(init, update)


def scale_by_polyak(f_min: float | Any = 0.0, max_learning_rate: float | Any = 1.0,
                    eps: float | Any = 0.0,
                    variant: str = "sps") -> GradientTransformationExtraArgs:
    """The Polyak step size: the updates times ``min((f(x) - f_min) /
    (|g|**2 + eps), max_learning_rate)`` (the gap floored at 0 with
    ``variant="sps+"``; 0 where ``|g|**2 + eps`` is below float64's
    epsilon). ``update`` takes the objective's ``value`` as a keyword.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.scale_by_polyak()
    >>> opt.update(mx.array([2.0]), opt.init(None), value=mx.array(1.0))[0].item()
    0.5
    """
    if variant not in ("sps", "sps+"):
        raise ValueError(f"scale_by_polyak: variant must be 'sps' or 'sps+', got {variant!r}")

    def update(updates, state, params=None, *, value=None, **extra_args):
        if value is None:
            raise TypeError("scale_by_polyak.update needs value= (the objective's value)")
        norm2 = fnp.square(global_norm(updates))
        gap = _f32(value) - f_min
        if variant == "sps+":
            gap = fnp.maximum(gap, 0.0)
        step = fnp.where(norm2 + eps <= float(_FLOAT64_EPS), 0.0,
                         fnp.minimum(gap / (norm2 + eps), max_learning_rate))
        return tree.map(lambda u: u * cast_like(step, u), updates), state

    return GradientTransformationExtraArgs(init_empty_state, update)


_FLOAT64_EPS = math.ulp(1.0)


def normalize_by_update_norm(scale_factor: float | Any = 1.0,
                             eps: float | Any = 1e-6) -> GradientTransformation:
    """The updates divided by ``(global_norm(updates) + eps) /
    scale_factor``: a step of norm ``scale_factor``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.normalize_by_update_norm(eps=0.0)
    >>> opt.update(mx.array([3.0, 4.0]), opt.init(None))[0].tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    def update(updates, state, params=None):
        norm = (global_norm(updates) + eps) / scale_factor
        return tree.map(lambda u: u / cast_like(norm, u), updates), state

    return GradientTransformation(init_empty_state, update)


class ApplyEvery(NamedTuple):
    """``count``: calls in this round (int32, modulo ``k``); ``grad_acc``:
    the sum of this round's updates."""

    count: Any
    grad_acc: Any


def apply_every(k: int = 1) -> GradientTransformation:
    """Sum the updates of ``k`` calls and return the sum on the ``k``-th,
    zeros on the others (``MultiSteps`` also skips the inner optimizer's
    steps).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.apply_every(2)
    >>> s = opt.init(mx.zeros(1))
    >>> u1, s = opt.update(mx.array([1.0]), s); u2, s = opt.update(mx.array([2.0]), s)
    >>> u1.item(), u2.item()
    (0.0, 3.0)
    """
    def init(params):
        return ApplyEvery(_count0(), _zeros(params))

    def update(updates, state, params=None):
        fname = "apply_every"
        _check_state(fname, state, ApplyEvery)
        phase = state.count % k
        keep = phase != 0
        emit = phase == k - 1

        def leaf(g, acc):
            acc_new = fnp.where(keep, acc, fnp.zeros_like(acc)) + g
            return _as(fnp.where(emit, acc_new, fnp.zeros_like(acc_new)), g), _as(acc_new, acc)

        updates, acc = _leafwise(fname, leaf, 2, updates, state.grad_acc,
                                 what=("state.grad_acc",))
        return updates, ApplyEvery(safe_increment(state.count) % k, acc)

    return GradientTransformation(init, update)


def centralize() -> GradientTransformation:
    """Gradient centralization (Yong et al.): subtract from each update of
    two or more axes its mean over all axes but the first.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.centralize().update(mx.array([[1.0, 3.0]]), optim.EmptyState())[0].tolist()
    [[-1.0, 1.0]]
    """
    def one(u):
        if u.ndim < 2:
            return u
        return u - fnp.mean(u, axis=tuple(range(1, u.ndim)), keepdims=True)

    def update(updates, state, params=None):
        return tree.map(one, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)

