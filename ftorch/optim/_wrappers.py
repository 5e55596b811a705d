"""Transformations that wrap others, as optax's: apply one to part of the
parameters (``masked``, ``partition``/``multi_transform``, ``freeze``),
accumulate gradients over several calls (``MultiSteps``), skip non-finite
updates (``apply_if_finite``); and the parameter averages
``incremental_update`` (an EMA) and ``periodic_update``.

Which parameters a wrapper touches is decided in Python, from a mask or
labels fixed when the optimizer is built; whether an update is taken
(``MultiSteps``, ``apply_if_finite``) is decided on the values, with array
selects: a jitted train step that uses them is traced once. As in optax,
the wrapped update is computed at every call and its result kept or
dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, NamedTuple, Protocol

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.api_util import leaf_names
from ftorch.optim._base import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    OptState,
    Params,
    Updates,
    _check_state,
    _shape_mismatch,
    _tree_mismatch,
    safe_increment,
    with_extra_args_support,
)

__all__ = [
    "masked", "MaskedState", "MaskedNode", "set_to_zero", "freeze", "selective_transform",
    "partition", "PartitionState", "multi_transform", "MultiTransformState",
    "MultiSteps", "MultiStepsState", "ShouldSkipUpdateFunction", "skip_not_finite",
    "skip_large_updates", "apply_if_finite", "ApplyIfFiniteState", "incremental_update",
    "periodic_update", "lookahead", "LookaheadParams", "LookaheadState",
    "conditionally_transform", "ConditionallyTransformState", "conditionally_mask",
    "ConditionallyMaskState", "per_example_global_norm_clip",
]


class MaskedNode(NamedTuple):
    """Stands for a parameter that a ``masked`` transformation leaves out
    (an empty pytree node: it holds no state)."""


class MaskedState(NamedTuple):
    """``inner_state``: the wrapped transformation's state, over the chosen
    parameters only."""

    inner_state: OptState


def _broadcast(prefix: Any, params: Any, fname: str, what: str) -> list:
    """``prefix`` (a pytree like ``params``, or a prefix of it: one value
    for a whole subtree) as one value per leaf of ``params``."""
    try:
        full = tree.broadcast(prefix, params)
    except ValueError:
        raise ValueError(f"{fname}: the {what} has structure {tree.structure(prefix)}, which "
                         f"is not the parameters' {tree.structure(params)} nor a prefix of "
                         "it") from None
    # Up to the parameters' leaves: a label may itself be a container (a tuple).
    return tree.structure(params).flatten_up_to(full)


def _resolve_mask(mask: Any, params: Any, fname: str) -> list[bool]:
    """The mask (a pytree of bools like ``params`` or a prefix of it, or a
    function of ``params`` returning one) as one bool per parameter leaf."""
    m = mask(params) if callable(mask) else mask
    m_leaves, m_tree = tree.flatten(m)
    for i, v in enumerate(m_leaves):
        if not isinstance(v, bool):
            raise TypeError(f"{fname}: {leaf_names(m_tree, 'mask')[i]} must be a Python bool, "
                            f"got {v!r}")
    return _broadcast(m, params, fname, "mask")


def masked(inner: GradientTransformation, mask: Any | Callable[[Any], Any]
           ) -> GradientTransformation:
    """Apply ``inner`` to the parameters whose ``mask`` leaf is True; the
    others' updates pass unchanged, and ``inner`` keeps no state for them.
    ``mask`` is a pytree of Python bools like the parameters (or a prefix
    of it: one bool for a whole subtree), or a function of the parameters
    that returns one.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.masked(optim.scale(0.0), {"w": True, "b": False})
    >>> params = {"w": mx.ones(2), "b": mx.ones(1)}
    >>> u, _ = opt.update(params, opt.init(params))
    >>> u["w"].tolist(), u["b"].tolist()
    ([0.0, 0.0], [1.0])
    """
    def select(values, flags, treedef):
        return tree.unflatten(treedef, [v if f else MaskedNode() for v, f in zip(values, flags)])

    def init(params):
        leaves, treedef = tree.flatten(params)
        flags = _resolve_mask(mask, params, "masked")
        return MaskedState(inner.init(select(leaves, flags, treedef)))

    def update(updates, state, params=None):
        _check_state("masked", state, MaskedState)
        leaves, treedef = tree.flatten(updates)
        flags = _resolve_mask(mask, updates if params is None else params, "masked")
        p_sel = None if params is None else select(tree.leaves(params), flags, treedef)
        new, inner_state = inner.update(select(leaves, flags, treedef), state.inner_state, p_sel)
        new_leaves = tree.leaves(new)  # MaskedNodes are empty: only the chosen leaves
        it = iter(new_leaves)
        out = [next(it) if f else u for u, f in zip(leaves, flags)]
        return tree.unflatten(treedef, out), MaskedState(inner_state)

    return GradientTransformation(init, update)


def set_to_zero() -> GradientTransformation:
    """Zero updates, no state: with ``masked`` (``freeze``) or ``partition``,
    the parameters it gets stay as they are.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.set_to_zero().update(mx.array([1.0, 2.0]), optim.EmptyState())[0].tolist()
    [0.0, 0.0]
    """
    def update(updates, state, params=None):
        return tree.map(fnp.zeros_like, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def freeze(mask: bool | Any) -> GradientTransformation:
    """Zero the updates of the parameters whose ``mask`` leaf is True
    (``masked(set_to_zero(), mask)``); the others pass unchanged. ``mask``
    is a pytree of bools like the parameters, a prefix of it, or one bool.
    Placed after the optimizer in a ``chain`` it holds them whatever the
    optimizer does (weight decay included); ``selective_transform`` also
    keeps no optimizer state for them.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.freeze({"w": True, "b": False})
    >>> g = {"w": mx.ones(2), "b": mx.ones(1)}
    >>> u, _ = opt.update(g, opt.init(g))
    >>> u["w"].tolist(), u["b"].tolist()
    ([0.0, 0.0], [1.0])
    """
    return masked(set_to_zero(), mask)


class PartitionState(NamedTuple):
    """``inner_states``: label -> the ``MaskedState`` of that label's
    transformation."""

    inner_states: Mapping[Hashable, OptState]


MultiTransformState = PartitionState


def partition(transforms: Mapping[Hashable, GradientTransformation],
              param_labels: Any | Callable[[Any], Any]) -> GradientTransformation:
    """Apply ``transforms[label]`` to the parameters labelled ``label``.

    ``param_labels`` is a pytree of labels like the parameters (or a
    prefix of it: one label for a subtree), or a function of the
    parameters that returns one. Each transformation keeps state for its
    own parameters only. ``multi_transform`` is the same function (optax's
    older name).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.partition({"fast": optim.sgd(1.0), "slow": optim.sgd(0.1)},
    ...                       {"w": "fast", "b": "slow"})
    >>> params = {"w": mx.ones(1), "b": mx.ones(1)}
    >>> u, _ = opt.update({"w": mx.ones(1), "b": mx.ones(1)}, opt.init(params), params)
    >>> u["w"].item(), round(u["b"].item(), 3)
    (-1.0, -0.1)
    """
    fname = "partition"
    if not isinstance(transforms, Mapping):
        raise TypeError(f"{fname}: transforms must be a dict label -> GradientTransformation, "
                        f"got {type(transforms).__name__}")
    for label, t in transforms.items():
        if not isinstance(t, GradientTransformation):
            raise TypeError(f"{fname}: transforms[{label!r}] must be a GradientTransformation, "
                            f"got {type(t).__name__}")

    def masks(params):
        """One bool pytree (full structure) per label."""
        labels = param_labels(params) if callable(param_labels) else param_labels
        leaf_labels = _broadcast(labels, params, fname, "param_labels")
        unknown = {lb for lb in leaf_labels if lb not in transforms}
        if unknown:
            raise ValueError(f"{fname}: parameters are labelled {sorted(map(repr, unknown))}, "
                             f"which have no transformation (transforms has "
                             f"{sorted(map(repr, transforms))})")
        treedef = tree.structure(params)
        return {label: tree.unflatten(treedef, [lb == label for lb in leaf_labels])
                for label in transforms}

    def init(params):
        ms = masks(params)
        return PartitionState({label: masked(t, ms[label]).init(params)
                               for label, t in transforms.items()})

    def update(updates, state, params=None):
        _check_state(fname, state, PartitionState)
        if state.inner_states.keys() != transforms.keys():
            raise TypeError(f"{fname}: the state has the labels "
                            f"{sorted(map(repr, state.inner_states))}, this partition "
                            f"{sorted(map(repr, transforms))}; pass the state that its "
                            "init(params) returned, or that the last update did")
        ms = masks(updates if params is None else params)
        new_states = {}
        for label, t in transforms.items():
            updates, new_states[label] = masked(t, ms[label]).update(
                updates, state.inner_states[label], params)
        return updates, PartitionState(new_states)

    return GradientTransformation(init, update)


multi_transform = partition


def selective_transform(optimizer: GradientTransformation, *,
                        freeze_mask: bool | Any) -> GradientTransformation:
    """``optimizer`` on the parameters whose ``freeze_mask`` leaf is False;
    zero updates, and no optimizer state, for those where it is True.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.selective_transform(optim.sgd(0.5), freeze_mask={"w": True, "b": False})
    >>> params = {"w": mx.ones(1), "b": mx.ones(1)}
    >>> u, _ = opt.update(params, opt.init(params), params)
    >>> u["w"].item(), u["b"].item()
    (0.0, -0.5)
    """
    labels = tree.map(lambda m: "freeze" if m else "train", freeze_mask)
    return partition({"train": optimizer, "freeze": set_to_zero()}, labels)


def _select(pred: Any, on_true: Any, on_false: Any, fname: str, what: str) -> Any:
    """``on_true`` where ``pred`` else ``on_false``, leaf by leaf, in
    ``on_false``'s dtypes (a state keeps its signature step after step)."""
    t_leaves, t_tree = tree.flatten(on_true)
    f_leaves, f_tree = tree.flatten(on_false)
    if t_tree != f_tree:
        raise ValueError(f"{fname}: {what} has structure {t_tree}, where {f_tree} was "
                         "expected")
    out = []
    for t, f in zip(t_leaves, f_leaves):
        v = fnp.where(pred, t, f)
        out.append(fnp.astype(v, f.dtype) if hasattr(f, "dtype") and v.dtype != f.dtype else v)
    return tree.unflatten(f_tree, out)


def _check_like(fname: str, updates: Any, like: Any, what: str) -> None:
    """``updates`` must have the structure and shapes of ``like`` (a state
    tree made from the parameters); an error names the leaf."""
    u_leaves, u_tree = tree.flatten(updates)
    l_leaves, l_tree = tree.flatten(like)
    if u_tree != l_tree:
        raise ValueError(_tree_mismatch(fname, u_tree, l_tree, "updates", what,
                                        "was the state made for other parameters?"))
    for i, (u, x) in enumerate(zip(u_leaves, l_leaves)):
        if u.shape != x.shape:
            raise ValueError(_shape_mismatch(fname, i, u_tree, u, x, "updates", what))


def _zeros_unless(pred: Any, updates: Any) -> Any:
    return tree.map(lambda u: fnp.where(pred, u, fnp.zeros_like(u)), updates)


class ShouldSkipUpdateFunction(Protocol):
    """``(updates, gradient_step, params) -> (skip, skip_state)``: ``skip``
    a bool scalar array, ``skip_state`` any pytree of arrays (kept in the
    ``MultiStepsState`` for monitoring)."""

    def __call__(self, updates: Updates, gradient_step: Any,
                 params: Params | None) -> tuple[Any, Any]: ...


def skip_not_finite(updates: Updates, gradient_step: Any,
                    params: Params | None) -> tuple[Any, dict[str, Any]]:
    """Skip a mini-step whose updates hold a NaN or an infinity (for
    ``MultiSteps(should_skip_update_fn=...)``); the state records
    ``should_skip`` and ``num_not_finite``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> skip, info = optim.skip_not_finite({"w": mx.array([1.0, float("nan")])}, 0, None)
    >>> skip.item(), info["num_not_finite"].item()
    (True, 1)
    """
    count = mx.array(0, mx.int32)
    for u in tree.leaves(updates):
        count = count + fnp.astype(fnp.sum(fnp.logical_not(fnp.isfinite(u))), mx.int32)
    should_skip = count > 0
    return should_skip, {"should_skip": should_skip, "num_not_finite": count}


def skip_large_updates(updates: Updates, gradient_step: Any, params: Params | None,
                       max_squared_norm: float) -> tuple[Any, dict[str, Any]]:
    """Skip a mini-step whose updates' squared global norm is not below
    ``max_squared_norm`` (a NaN norm is skipped too); bind it with
    ``functools.partial(skip_large_updates, max_squared_norm=...)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> skip, info = optim.skip_large_updates(mx.array([3.0, 4.0]), 0, None, 20.0)
    >>> skip.item(), info["norm_squared"].item()
    (True, 25.0)
    """
    norm_sq = mx.array(0.0, mx.float32)
    for u in tree.leaves(updates):
        norm_sq = norm_sq + fnp.sum(fnp.square(fnp.astype(u, mx.float32)))
    should_skip = fnp.logical_not(norm_sq < max_squared_norm)
    return should_skip, {"should_skip": should_skip, "norm_squared": norm_sq}


class MultiStepsState(NamedTuple):
    """``mini_step``: calls since the last gradient step (int32);
    ``gradient_step``: gradient steps taken (int32); ``inner_opt_state``:
    the wrapped optimizer's state; ``acc_grads``: the mean (or sum) of the
    updates of this round's mini-steps; ``skip_state``: what
    ``should_skip_update_fn`` returned last."""

    mini_step: Any
    gradient_step: Any
    inner_opt_state: OptState
    acc_grads: Any
    skip_state: Any = ()


class MultiSteps:
    """Gradient accumulation, as ``optax.MultiSteps``: ``update`` averages
    (or, without ``use_grad_mean``, sums) the updates of ``k`` consecutive
    calls and returns zeros on the first ``k - 1``; the ``k``-th call passes
    the average to ``opt`` and returns its update. ``k`` is
    ``every_k_schedule``, an int or a function of the gradient step count.

    ``should_skip_update_fn`` (such as ``skip_not_finite``) can drop a
    mini-step entirely: zero updates and the state as before it. All the
    choices are array selects, so a jitted train step is traced once.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.MultiSteps(optim.sgd(1.0), every_k_schedule=2)
    >>> state = opt.init(mx.zeros(1))
    >>> u1, state = opt.update(mx.array([1.0]), state)
    >>> u2, state = opt.update(mx.array([3.0]), state)
    >>> u1.item(), u2.item(), opt.has_updated(state).item()
    (0.0, -2.0, True)
    """

    def __init__(self, opt: GradientTransformation, every_k_schedule: int | Callable[[Any], Any],
                 use_grad_mean: bool = True,
                 should_skip_update_fn: ShouldSkipUpdateFunction | None = None) -> None:
        if not isinstance(opt, GradientTransformation):
            raise TypeError(f"MultiSteps: opt must be a GradientTransformation, got "
                            f"{type(opt).__name__}")
        if isinstance(every_k_schedule, int) and not isinstance(every_k_schedule, bool):
            if every_k_schedule < 1:
                raise ValueError(f"MultiSteps: every_k_schedule must be at least 1, got "
                                 f"{every_k_schedule}")
            k = every_k_schedule
            self._every_k_schedule = lambda step: k
        elif callable(every_k_schedule):
            self._every_k_schedule = every_k_schedule
        else:
            raise TypeError(f"MultiSteps: every_k_schedule must be an int or a function of the "
                            f"gradient step, got {type(every_k_schedule).__name__}")
        self._opt = opt
        self._use_grad_mean = use_grad_mean
        self._should_skip_update_fn = should_skip_update_fn

    @property
    def inner_opt(self) -> GradientTransformation:
        """The wrapped optimizer.

        >>> import ftorch.optim as optim
        >>> sgd = optim.sgd(0.1)
        >>> optim.MultiSteps(sgd, 2).inner_opt is sgd
        True
        """
        return self._opt

    def init(self, params: Params) -> MultiStepsState:
        """Zero accumulators like ``params``, counters at 0, and ``opt``'s
        state.

        >>> import ftorch.optim as optim, mlx.core as mx
        >>> optim.MultiSteps(optim.sgd(0.1), 4).init(mx.ones(2)).acc_grads.tolist()
        [0.0, 0.0]
        """
        acc = tree.map(fnp.zeros_like, params)
        gradient_step = mx.array(0, mx.int32)
        skip_state = ()
        if self._should_skip_update_fn is not None:
            skip_state = self._should_skip_update_fn(acc, gradient_step, params)[1]
        return MultiStepsState(mx.array(0, mx.int32), gradient_step, self._opt.init(params),
                               acc, skip_state)

    def update(self, updates: Updates, state: MultiStepsState,
               params: Params | None = None) -> tuple[Updates, MultiStepsState]:
        """Accumulate ``updates``; on the ``k``-th call, ``opt``'s update of
        their mean, zeros before.

        >>> import ftorch.optim as optim, mlx.core as mx
        >>> opt = optim.MultiSteps(optim.sgd(1.0), 3)
        >>> s, out = opt.init(mx.zeros(1)), []
        >>> for g in (1.0, 2.0, 6.0):
        ...     u, s = opt.update(mx.array([g]), s)
        ...     out.append(u.item())
        >>> out
        [0.0, 0.0, -3.0]
        """
        fname = "MultiSteps"
        _check_state(fname, state, MultiStepsState)
        _check_like(fname, updates, state.acc_grads, "state.acc_grads")
        k = self._every_k_schedule(state.gradient_step)
        skip = None
        skip_state = state.skip_state
        if self._should_skip_update_fn is not None:
            skip, skip_state = self._should_skip_update_fn(updates, state.gradient_step, params)
            if not (hasattr(skip, "dtype") and skip.dtype == mx.bool_ and skip.shape == ()):
                raise ValueError(f"{fname}: should_skip_update_fn must return a bool scalar "
                                 f"array first, got {skip!r}")
        n = state.mini_step
        if self._use_grad_mean:
            # Welford's running mean: no sum that grows with k.
            acc = tree.map(lambda g, a: fnp.astype(a + (g - a) / fnp.astype(n + 1, a.dtype),
                                                   a.dtype), updates, state.acc_grads)
        else:
            acc = tree.map(lambda g, a: fnp.astype(a + g, a.dtype), updates, state.acc_grads)
        final, inner_state = self._opt.update(acc, state.inner_opt_state, params)
        emit = n >= k - 1
        if skip is not None:
            emit = fnp.logical_and(emit, fnp.logical_not(skip))
        new_state = MultiStepsState(
            mini_step=fnp.where(emit, mx.array(0, mx.int32), safe_increment(n)),
            gradient_step=fnp.where(emit, safe_increment(state.gradient_step),
                                    state.gradient_step),
            inner_opt_state=_select(emit, inner_state, state.inner_opt_state, fname,
                                    "the wrapped optimizer's new state"),
            acc_grads=tree.map(lambda a: fnp.where(emit, fnp.zeros_like(a), a), acc),
            skip_state=skip_state)
        if skip is not None:  # a skipped mini-step leaves the counters and accumulators
            new_state = new_state._replace(
                mini_step=fnp.where(skip, n, new_state.mini_step),
                acc_grads=_select(skip, state.acc_grads, new_state.acc_grads, fname,
                                  "the accumulator"))
        return _zeros_unless(emit, final), new_state

    def has_updated(self, state: MultiStepsState) -> Any:
        """Whether the last ``update`` took a gradient step (a bool array).

        >>> import ftorch.optim as optim, mlx.core as mx
        >>> opt = optim.MultiSteps(optim.sgd(0.1), 2)
        >>> opt.has_updated(opt.init(mx.ones(1))).item()
        False
        """
        return fnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self) -> GradientTransformation:
        """This as a ``GradientTransformation`` (to ``chain`` it).

        >>> import ftorch.optim as optim
        >>> isinstance(optim.MultiSteps(optim.sgd(0.1), 2).gradient_transformation(),
        ...            optim.GradientTransformation)
        True
        """
        return GradientTransformation(self.init, self.update)


class ApplyIfFiniteState(NamedTuple):
    """``notfinite_count``: consecutive non-finite updates (int32, 0 after
    a finite one); ``last_finite``: whether the last update was finite;
    ``total_notfinite``: non-finite updates since ``init`` (int32);
    ``inner_state``: the wrapped transformation's state."""

    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: OptState


def apply_if_finite(inner: GradientTransformation,
                    max_consecutive_errors: int) -> GradientTransformation:
    """Skip updates holding a NaN or an infinity: zero updates and
    ``inner``'s state unchanged, until more than ``max_consecutive_errors``
    come in a row (then the update is taken, as optax does: a run that
    only produces NaNs should not look healthy).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.apply_if_finite(optim.sgd(0.1), max_consecutive_errors=3)
    >>> state = opt.init(mx.zeros(1))
    >>> u, state = opt.update(mx.array([float("nan")]), state)
    >>> u.item(), state.notfinite_count.item(), state.last_finite.item()
    (0.0, 1, False)
    """
    if isinstance(max_consecutive_errors, bool) or not isinstance(max_consecutive_errors, int):
        raise TypeError(f"apply_if_finite: max_consecutive_errors must be an int, got "
                        f"{type(max_consecutive_errors).__name__}")
    if max_consecutive_errors < 0:
        raise ValueError(f"apply_if_finite: max_consecutive_errors must be non-negative, got "
                         f"{max_consecutive_errors}")

    def init(params):
        return ApplyIfFiniteState(mx.array(0, mx.int32), mx.array(True),
                                  mx.array(0, mx.int32), inner.init(params))

    def update(updates, state, params=None):
        _check_state("apply_if_finite", state, ApplyIfFiniteState)
        finite = mx.array(True)
        for u in tree.leaves(updates):
            finite = fnp.logical_and(finite, fnp.all(fnp.isfinite(u)))
        notfinite_count = fnp.where(finite, mx.array(0, mx.int32),
                                    safe_increment(state.notfinite_count))
        take = fnp.logical_or(finite, notfinite_count > max_consecutive_errors)
        new, inner_state = inner.update(updates, state.inner_state, params)
        return _zeros_unless(take, new), ApplyIfFiniteState(
            notfinite_count, finite,
            fnp.where(finite, state.total_notfinite, safe_increment(state.total_notfinite)),
            _select(take, inner_state, state.inner_state, "apply_if_finite",
                    "the wrapped transformation's new state"))

    return GradientTransformation(init, update)


def incremental_update(new_tensors: Params, old_tensors: Params, step_size: float | Any
                       ) -> Params:
    """``step_size * new + (1 - step_size) * old``, leaf by leaf, in the old
    tensors' dtypes (Polyak averaging). An exponential moving average of the
    parameters with ``decay`` is ``ema = incremental_update(params, ema,
    1 - decay)`` after each step, starting from ``ema = params``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> ema = {"w": mx.array([0.0])}
    >>> for w in (1.0, 1.0):
    ...     ema = optim.incremental_update({"w": mx.array([w])}, ema, 1 - 0.9)
    >>> round(ema["w"].item(), 4)
    0.19
    """
    def average(new, old):
        v = step_size * new + (1.0 - step_size) * old
        return fnp.astype(v, old.dtype) if hasattr(old, "dtype") and v.dtype != old.dtype else v

    return tree.map(average, new_tensors, old_tensors)


def periodic_update(new_tensors: Params, old_tensors: Params, steps: int | Any,
                    update_period: int) -> Params:
    """``new_tensors`` when ``steps`` is a multiple of ``update_period``,
    else ``old_tensors`` (a target network refreshed every
    ``update_period`` steps); ``steps`` may be a traced array.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> [optim.periodic_update(mx.array(1.0), mx.array(0.0), n, 3).item() for n in range(4)]
    [1.0, 0.0, 0.0, 1.0]
    """
    if isinstance(update_period, bool) or not isinstance(update_period, int):
        raise TypeError(f"periodic_update: update_period must be an int, got "
                        f"{type(update_period).__name__}")
    if update_period < 1:
        raise ValueError(f"periodic_update: update_period must be positive, got "
                         f"{update_period}")
    refresh = fnp.asarray(steps) % update_period == 0
    return _select(refresh, new_tensors, old_tensors, "periodic_update", "new_tensors")


class LookaheadParams(NamedTuple):
    """The two sets of weights of ``lookahead``: ``fast``, those the wrapped
    optimizer steps, and ``slow``, their average pulled toward them at each
    synchronisation (evaluate the model with ``slow``)."""

    fast: Params
    slow: Params

    @classmethod
    def init_synced(cls, params: Params) -> LookaheadParams:
        """Fast and slow weights both ``params``.

        >>> import ftorch.optim as optim, mlx.core as mx
        >>> optim.LookaheadParams.init_synced(mx.zeros(1)).slow.tolist()
        [0.0]
        """
        return cls(fast=params, slow=params)


class LookaheadState(NamedTuple):
    """``fast_state``: the wrapped optimizer's state; ``steps_since_sync``:
    updates since the last synchronisation (int32)."""

    fast_state: OptState
    steps_since_sync: Any


def lookahead(fast_optimizer: GradientTransformation, sync_period: int,
              slow_step_size: float | Any, reset_state: bool = False
              ) -> GradientTransformation:
    """Lookahead (Zhang et al.): ``fast_optimizer`` steps the fast weights;
    every ``sync_period`` steps the slow weights move ``slow_step_size`` of
    the way to them and the fast weights restart from there (and, with
    ``reset_state``, the fast optimizer's state from its ``init``).

    The parameters are ``LookaheadParams(fast, slow)``
    (``LookaheadParams.init_synced(params)`` to start); ``update(grads,
    state, params)`` takes the gradients at the fast weights and returns a
    ``LookaheadParams`` of updates for ``apply_updates``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.lookahead(optim.sgd(1.0), sync_period=2, slow_step_size=0.5)
    >>> params = optim.LookaheadParams.init_synced(mx.array([0.0]))
    >>> state = opt.init(params)
    >>> for _ in range(2):
    ...     updates, state = opt.update(mx.array([1.0]), state, params)
    ...     params = optim.apply_updates(params, updates)
    >>> params.fast.tolist(), params.slow.tolist()
    ([-1.0], [-1.0])
    """
    if isinstance(sync_period, bool) or not isinstance(sync_period, int) or sync_period < 1:
        raise ValueError(f"lookahead: sync_period must be a positive int, got {sync_period!r}")
    if not isinstance(fast_optimizer, GradientTransformation):
        raise TypeError(f"lookahead: fast_optimizer must be a GradientTransformation, got "
                        f"{type(fast_optimizer).__name__}")

    def init(params):
        fast = params.fast if isinstance(params, LookaheadParams) else params
        return LookaheadState(fast_optimizer.init(fast), mx.array(0, mx.int32))

    def update(updates, state, params=None):
        fname = "lookahead"
        _check_state(fname, state, LookaheadState)
        if not isinstance(params, LookaheadParams):
            raise TypeError(f"{fname}: update needs params, a LookaheadParams(fast, slow) (see "
                            f"LookaheadParams.init_synced), got {type(params).__name__}")
        updates, fast_state = fast_optimizer.update(updates, state.fast_state, params.fast)
        sync = state.steps_since_sync == sync_period - 1

        def both(f, u, s):
            gap = f + u - s  # from the slow weights to the new fast ones
            slow_step = fnp.where(sync, slow_step_size * gap, fnp.zeros_like(gap))
            fast_step = fnp.where(sync, u - (1 - slow_step_size) * gap, u)
            return fnp.astype(fast_step, u.dtype), fnp.astype(slow_step, u.dtype)

        pairs = tree.map(lambda f, u, s: both(f, u, s), params.fast, updates, params.slow)
        treedef = tree.structure(params.fast)
        flat = treedef.flatten_up_to(pairs)
        fast_updates = tree.unflatten(treedef, [p[0] for p in flat])
        slow_updates = tree.unflatten(treedef, [p[1] for p in flat])
        if reset_state:
            fast_state = _select(sync, fast_optimizer.init(params.fast), fast_state, fname,
                                 "the fast optimizer's initial state")
        return LookaheadParams(fast_updates, slow_updates), LookaheadState(
            fast_state, safe_increment(state.steps_since_sync) % sync_period)

    return GradientTransformation(init, update)


class ConditionallyTransformState(NamedTuple):
    """``inner_state``: the wrapped transformation's state; ``step``: calls
    so far (int32)."""

    inner_state: OptState
    step: Any


class ConditionallyMaskState(NamedTuple):
    """``step``: calls so far (int32); ``inner_state``: the wrapped
    transformation's state."""

    step: Any
    inner_state: OptState


def _conditional(fname: str, inner: GradientTransformation,
                 should_transform_fn: Callable[..., Any], forward_extra_args: bool,
                 zero_rejected: bool, state_type: type) -> GradientTransformationExtraArgs:
    inner = with_extra_args_support(inner)

    def init(params):
        step, inner_state = mx.array(0, mx.int32), inner.init(params)
        return (state_type(inner_state, step) if state_type is ConditionallyTransformState
                else state_type(step, inner_state))

    def update(updates, state, params=None, **extra_args):
        _check_state(fname, state, state_type)
        condition_kwargs = extra_args if forward_extra_args else {}
        take = fnp.asarray(should_transform_fn(state.step, **condition_kwargs))
        new, inner_state = inner.update(updates, state.inner_state, params, **extra_args)
        rejected = tree.map(fnp.zeros_like, updates) if zero_rejected else updates
        out = _select(take, new, rejected, fname, "the wrapped transformation's updates")
        inner_state = _select(take, inner_state, state.inner_state, fname,
                              "the wrapped transformation's new state")
        step = safe_increment(state.step)
        return out, (state_type(inner_state, step) if state_type is ConditionallyTransformState
                     else state_type(step, inner_state))

    return GradientTransformationExtraArgs(init, update)


def conditionally_transform(inner: GradientTransformation,
                            should_transform_fn: Callable[..., Any],
                            forward_extra_args: bool = False
                            ) -> GradientTransformationExtraArgs:
    """Apply ``inner`` at the steps where ``should_transform_fn(step)`` (a
    bool array; with ``forward_extra_args`` it also gets ``update``'s extra
    keyword arguments) holds; pass the updates unchanged, and keep
    ``inner``'s state, at the others.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.conditionally_transform(optim.scale(10.0), lambda step: step >= 1)
    >>> s = opt.init(mx.zeros(1))
    >>> u1, s = opt.update(mx.ones(1), s); u2, s = opt.update(mx.ones(1), s)
    >>> u1.item(), u2.item()
    (1.0, 10.0)
    """
    return _conditional("conditionally_transform", inner, should_transform_fn,
                        forward_extra_args, False, ConditionallyTransformState)


def conditionally_mask(inner: GradientTransformation, should_transform_fn: Callable[..., Any],
                       forward_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """As ``conditionally_transform``, with zero updates at the steps where
    ``should_transform_fn(step)`` does not hold.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.conditionally_mask(optim.scale(10.0), lambda step: step >= 1)
    >>> s = opt.init(mx.zeros(1))
    >>> u1, s = opt.update(mx.ones(1), s); u2, s = opt.update(mx.ones(1), s)
    >>> u1.item(), u2.item()
    (0.0, 10.0)
    """
    return _conditional("conditionally_mask", inner, should_transform_fn, forward_extra_args,
                        True, ConditionallyMaskState)


def per_example_global_norm_clip(grads: Any, l2_norm_clip: float | Any) -> tuple[Any, Any]:
    """Clip each example's gradient (axis 0 of every leaf indexes the
    examples) to a global norm of at most ``l2_norm_clip`` and sum them
    (differential privacy's clipping); also returns how many were clipped.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> per_example = mx.array([[3.0, 4.0], [0.3, 0.4]])
    >>> total, clipped = optim.per_example_global_norm_clip(per_example, 1.0)
    >>> [round(x, 4) for x in total.tolist()], clipped.item()
    ([0.9, 1.2], 1)
    """
    leaves, treedef = tree.flatten(grads)
    sizes = {leaf.shape[0] if leaf.ndim else None for leaf in leaves}
    if not leaves or None in sizes or len(sizes) != 1:
        raise ValueError("per_example_global_norm_clip: every leaf of grads must have the same "
                         "batch (example) axis first")
    squares = sum(fnp.sum(fnp.reshape(fnp.square(fnp.astype(g, mx.float32)),
                                      (g.shape[0], -1)), axis=1) for g in leaves)
    norms = fnp.sqrt(squares)
    multipliers = fnp.minimum(l2_norm_clip / norms, 1.0)
    multipliers = fnp.where(fnp.isnan(multipliers), 1.0, multipliers)
    clipped = fnp.sum(multipliers < 1.0)
    total = [fnp.tensordot(fnp.astype(multipliers, g.dtype), g, axes=1) for g in leaves]
    return tree.unflatten(treedef, total), clipped
