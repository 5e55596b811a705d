"""The optimizer interface, as optax's: a ``GradientTransformation`` is a
pair of pure functions, ``init(params) -> state`` and
``update(updates, state, params=None) -> (updates, state)``; ``chain``
composes them and ``apply_updates`` adds the result to the parameters.

States are pytrees (NamedTuples of arrays), so a train step that takes and
returns them is jittable and vmappable as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.api_util import leaf_names
from ftorch.typing import Params

__all__ = [
    "Params", "Updates", "OptState", "Schedule", "ScalarOrSchedule", "MaskOrFn", "TransformInitFn",
    "TransformUpdateFn", "TransformUpdateExtraArgsFn", "GradientTransformation",
    "GradientTransformationExtraArgs", "with_extra_args_support", "EmptyState",
    "init_empty_state", "identity", "stateless", "stateless_with_tree_map", "chain",
    "named_chain", "apply_updates", "safe_increment", "safe_int32_increment", "cast_like",
]

Updates = Params  # a pytree of arrays shaped like the parameters
OptState = Any  # a pytree of arrays (NamedTuples, dicts, tuples)
Schedule = Callable[[Any], Any]  # step count (an int32 array) -> value
ScalarOrSchedule = float | mx.array | Schedule
# A mask: a pytree of bools (a prefix of the parameters') or a function of the parameters
# returning one.
MaskOrFn = Any | Callable[[Any], Any] | None


class TransformInitFn(Protocol):
    """``init(params) -> state``."""

    def __call__(self, params: Params) -> OptState: ...


class TransformUpdateFn(Protocol):
    """``update(updates, state, params=None) -> (updates, state)``."""

    def __call__(self, updates: Updates, state: OptState,
                 params: Params | None = None) -> tuple[Updates, OptState]: ...


class TransformUpdateExtraArgsFn(Protocol):
    """``update(updates, state, params=None, **extra_args) -> (updates,
    state)``: the extra arguments are keywords (``value``, ``grad``,
    ``value_fn`` for a line search)."""

    def __call__(self, updates: Updates, state: OptState, params: Params | None = None,
                 **extra_args: Any) -> tuple[Updates, OptState]: ...


class GradientTransformation(NamedTuple):
    """``init(params) -> state`` and
    ``update(updates, state, params=None) -> (updates, state)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.sgd(0.1)
    >>> params = {"w": mx.array([1.0, 2.0])}
    >>> state = opt.init(params)
    >>> updates, state = opt.update({"w": mx.array([1.0, 1.0])}, state)
    >>> optim.apply_updates(params, updates)["w"].tolist()
    [0.8999999761581421, 1.899999976158142]
    """

    init: TransformInitFn
    update: TransformUpdateFn


class GradientTransformationExtraArgs(GradientTransformation):
    """A ``GradientTransformation`` whose ``update`` also takes keyword
    arguments (``update(updates, state, params=None, **extra_args)``), such
    as a line search's ``value``, ``grad`` and ``value_fn``. ``chain``
    passes them to those of its transformations that take them.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.with_extra_args_support(optim.scale(2.0))
    >>> opt.update(mx.array(1.0), opt.init(None), value=mx.array(0.0))[0].item()
    2.0
    """

    update: TransformUpdateExtraArgsFn


def with_extra_args_support(tx: GradientTransformation) -> GradientTransformationExtraArgs:
    """``tx`` with an ``update`` that accepts (and ignores) extra keyword
    arguments; a ``GradientTransformationExtraArgs`` is returned as it is.

    >>> import ftorch.optim as optim
    >>> isinstance(optim.with_extra_args_support(optim.sgd(0.1)),
    ...            optim.GradientTransformationExtraArgs)
    True
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update(updates, state, params=None, **extra_args):
        return tx.update(updates, state, params)

    return GradientTransformationExtraArgs(tx.init, update)


class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


def init_empty_state(params: Params) -> EmptyState:
    """``EmptyState()``, whatever the parameters: the ``init`` of a
    stateless transformation.

    >>> import ftorch.optim as optim
    >>> optim.init_empty_state({"w": 1.0})
    EmptyState()
    """
    return EmptyState()


def identity() -> GradientTransformation:
    """Updates unchanged, no state.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.identity().update(mx.array(2.0), optim.EmptyState())[0].item()
    2.0
    """
    return GradientTransformation(lambda params: EmptyState(),
                                  lambda updates, state, params=None: (updates, state))


def stateless(f: Callable[[Updates, Params | None], Updates]) -> GradientTransformation:
    """A transformation without state: ``update`` returns
    ``f(updates, params)``.

    >>> import ftorch.optim as optim, ftorch.tree as tree, mlx.core as mx
    >>> opt = optim.stateless(lambda u, p: tree.map(lambda x: -x, u))
    >>> opt.update(mx.array([1.0]), opt.init(None))[0].tolist()
    [-1.0]
    """
    def update(updates, state, params=None):
        return f(updates, params), EmptyState()

    return GradientTransformation(init_empty_state, update)


def stateless_with_tree_map(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """A transformation without state that maps ``f(update, param)`` over the
    leaves (``f(update, None)`` when ``update`` is called without params).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.stateless_with_tree_map(lambda u, p: u * 2.0)
    >>> opt.update({"w": mx.array([1.0])}, opt.init(None))[0]["w"].tolist()
    [2.0]
    """
    def update(updates, state, params=None):
        if params is None:
            return tree.map(lambda u: f(u, None), updates), EmptyState()
        return tree.map(f, updates, params), EmptyState()

    return GradientTransformation(init_empty_state, update)


def _chained(names: list[str] | None, transforms: tuple[GradientTransformation, ...],
             fname: str) -> GradientTransformation:
    """``transforms`` one after another, their states a tuple (``names``:
    a dict by name); an ``ExtraArgs`` transformation among them gets the
    extra keyword arguments, and makes the chain one."""
    for i, t in enumerate(transforms):
        if not isinstance(t, GradientTransformation):
            raise TypeError(f"{fname}: argument {i} must be a GradientTransformation, got "
                            f"{type(t).__name__}: {t!r}")
    extra = any(isinstance(t, GradientTransformationExtraArgs) for t in transforms)

    def init(params):
        states = [t.init(params) for t in transforms]
        return tuple(states) if names is None else dict(zip(names, states))

    def update(updates, state, params=None, **extra_args):
        if names is None:
            _check_chain_state(fname, state, len(transforms))
            states = state
        else:
            if not (isinstance(state, dict) and list(state) == names):
                raise TypeError(f"{fname}: the state must be a dict of the states of "
                                f"{names} (what init returns), got {_describe_state(state)}")
            states = list(state.values())
        new_state = []
        for t, s in zip(transforms, states):
            if isinstance(t, GradientTransformationExtraArgs):
                updates, s = t.update(updates, s, params, **extra_args)
            else:
                updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, (tuple(new_state) if names is None else dict(zip(names, new_state)))

    if extra:
        return GradientTransformationExtraArgs(init, update)
    return GradientTransformation(init, lambda updates, state, params=None: update(
        updates, state, params))


def named_chain(*transforms: tuple[str, GradientTransformation]) -> GradientTransformation:
    """``chain`` of ``(name, transformation)`` pairs, whose state is a dict
    name -> that transformation's state.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.named_chain(("momentum", optim.trace(0.9)), ("lr", optim.scale(-0.1)))
    >>> list(opt.init(mx.zeros(1)))
    ['momentum', 'lr']
    """
    names = [name for name, _ in transforms]
    if len(set(names)) != len(names):
        raise ValueError(f"named_chain: the names must differ, got {names}")
    return _chained(names, tuple(t for _, t in transforms), "named_chain")


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """Apply ``transforms`` one after another; the state is the tuple of
    their states. If one is a ``GradientTransformationExtraArgs``, so is the
    chain, and ``update``'s extra keyword arguments go to those that take
    them.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.chain(optim.trace(0.5), optim.scale(-2.0))
    >>> opt.update(mx.array([3.0, -0.5]), opt.init(mx.zeros(2)))[0].tolist()
    [-6.0, 1.0]
    """
    return _chained(None, transforms, "chain")


def apply_updates(params: Params, updates: Updates) -> Params:
    """``params + updates``, leaf by leaf, each result in its parameter's
    dtype (a float32 update does not turn a bfloat16 parameter into
    float32). ``None`` leaves stay ``None``. Updates of another structure,
    or a leaf of another shape, are an error naming the leaf.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> p = optim.apply_updates({"w": mx.ones(2, mx.bfloat16)}, {"w": mx.array([0.5, 1.0])})
    >>> p["w"].dtype, p["w"].tolist()
    (mlx.core.bfloat16, [1.5, 2.0])
    """
    p_leaves, p_tree = tree.flatten(params)
    u_leaves, u_tree = tree.flatten(updates)
    if p_tree != u_tree:
        raise ValueError(_tree_mismatch("apply_updates", u_tree, p_tree, "updates", "params",
                                       "pass the updates computed for these parameters"))
    out = []
    for i, (p, u) in enumerate(zip(p_leaves, u_leaves)):
        if p.shape != u.shape:  # MLX would broadcast, or fail without naming the leaf
            raise ValueError(_shape_mismatch("apply_updates", i, u_tree, u, p, "updates",
                                            "params"))
        out.append(fnp.astype(p + u, p.dtype))
    return tree.unflatten(p_tree, out)


def _listed(names: list[str], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _tree_mismatch(fname: str, got: Any, want: Any, got_what: str, want_what: str,
                  hint: str) -> str:
    """The message for two pytree structures (treedefs) that differ: the
    leaves one has and the other lacks, by path."""
    got_names = dict(zip(tree.key_paths(got), leaf_names(got, got_what)))
    want_names = dict(zip(tree.key_paths(want), leaf_names(want, want_what)))
    missing = [n for p, n in want_names.items() if p not in got_names]
    extra = [n for p, n in got_names.items() if p not in want_names]
    parts = []
    if missing:
        parts.append(f"{got_what} has no leaf for {_listed(missing)}")
    if extra:
        parts.append(f"{_listed(extra)} {'is' if len(extra) == 1 else 'are'} not in "
                     f"{want_what}")
    if not parts:  # the same leaves in other containers (a list for a tuple, ...)
        parts.append(f"{got_what} is {got}, {want_what} is {want}")
    return f"{fname}: {got_what} and {want_what} differ: {'; '.join(parts)}; {hint}"


def _shape_mismatch(fname: str, i: int, treedef: Any, got: Any, want: Any, got_what: str,
                   want_what: str) -> str:
    """The message for leaf ``i`` of two same-structured trees whose shapes differ."""
    got_name = leaf_names(treedef, got_what)[i]
    want_name = leaf_names(treedef, want_what)[i]
    return (f"{fname}: {got_name} has shape {tuple(got.shape)}, but {want_name} has "
            f"{tuple(want.shape)}; were they made for other parameters?")


def _describe_state(state: Any) -> str:
    """What a state is, in words, for an error saying it is not the right one."""
    if state is None:
        return "None"
    owner = getattr(type(state), "optimizer", None)  # a named optimizer's state type
    if owner is not None:
        return f"the state of {owner}"
    if type(state) is tuple:
        return f"a tuple of {len(state)} states (a chain's)"
    name = type(state).__name__
    return ("an " if name[0] in "AEIOUaeiou" else "a ") + name


def _check_chain_state(fname: str, state: Any, n: int) -> None:
    if not (type(state) is tuple and len(state) == n):
        raise TypeError(f"{fname}: the state must be a tuple of {n} states (what init "
                        f"returns), got {_describe_state(state)}; pass the state that "
                        "init(params) returned, or that the last update did")


def _check_state(fname: str, state: Any, cls: type) -> None:
    """``state`` must be a ``cls`` (one isinstance: the structure within is
    checked where it is used)."""
    if not isinstance(state, cls):
        raise TypeError(f"{fname}: the state must be a {cls.__name__} (what this "
                        f"transformation's init returns), got {_describe_state(state)}; pass "
                        "the state that init(params) returned, or that the last update did")


def safe_increment(count: Any) -> Any:
    """``count + 1``, saturating at the dtype's largest value instead of
    wrapping around (a step counter of a run that never ends).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.safe_increment(mx.array(2147483647, mx.int32)).item()
    2147483647
    """
    count = fnp.asarray(count)
    top = mx.iinfo(count.dtype).max
    return fnp.where(count < top, count + 1, count)


def safe_int32_increment(count: Any) -> Any:
    """``count + 1`` for an int32 counter, saturating at its largest value
    (``safe_increment``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.safe_int32_increment(mx.array(2**31 - 1, mx.int32)).item()
    2147483647
    """
    return safe_increment(count)


def cast_like(value: Any, like: Any) -> Any:
    """A hyperparameter (Python number or array) in the dtype of the array
    it scales, so that a float32 learning rate keeps bfloat16 updates
    bfloat16."""
    return fnp.astype(value, like.dtype) if hasattr(value, "dtype") else value
