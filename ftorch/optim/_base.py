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

__all__ = [
    "Params", "Updates", "OptState", "Schedule", "ScalarOrSchedule", "GradientTransformation",
    "EmptyState", "identity", "chain", "apply_updates", "safe_increment", "cast_like",
]

Params = Any  # a pytree of arrays
Updates = Any  # a pytree of arrays shaped like the parameters
OptState = Any  # a pytree of arrays (NamedTuples, dicts, tuples)
Schedule = Callable[[Any], Any]  # step count (an int32 array) -> value
ScalarOrSchedule = float | mx.array | Schedule


class TransformInitFn(Protocol):
    def __call__(self, params: Params) -> OptState: ...


class TransformUpdateFn(Protocol):
    def __call__(self, updates: Updates, state: OptState,
                 params: Params | None = None) -> tuple[Updates, OptState]: ...


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


class EmptyState(NamedTuple):
    """The state of a stateless transformation."""


def identity() -> GradientTransformation:
    """Updates unchanged, no state.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.identity().update(mx.array(2.0), optim.EmptyState())[0].item()
    2.0
    """
    return GradientTransformation(lambda params: EmptyState(),
                                  lambda updates, state, params=None: (updates, state))


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """Apply ``transforms`` one after another; the state is the tuple of
    their states.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.chain(optim.trace(0.5), optim.scale(-2.0))
    >>> opt.update(mx.array([3.0, -0.5]), opt.init(mx.zeros(2)))[0].tolist()
    [-6.0, 1.0]
    """
    for i, t in enumerate(transforms):
        if not isinstance(t, GradientTransformation):
            raise TypeError(f"chain: argument {i} must be a GradientTransformation, got "
                            f"{type(t).__name__}: {t!r}")

    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None):
        if not (isinstance(state, tuple) and len(state) == len(transforms)):
            raise ValueError(f"chain: the state must be a tuple of {len(transforms)} states "
                             "(what init returned)")
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init, update)


def apply_updates(params: Params, updates: Updates) -> Params:
    """``params + updates``, leaf by leaf, each result in its parameter's
    dtype (a float32 update does not turn a bfloat16 parameter into
    float32). ``None`` leaves stay ``None``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> p = optim.apply_updates({"w": mx.ones(2, mx.bfloat16)}, {"w": mx.array([0.5, 1.0])})
    >>> p["w"].dtype, p["w"].tolist()
    (mlx.core.bfloat16, [1.5, 2.0])
    """
    p_leaves, p_tree = tree.flatten(params)
    u_leaves, u_tree = tree.flatten(updates)
    if p_tree != u_tree:
        raise ValueError(f"apply_updates: updates have structure {u_tree}, parameters "
                         f"{p_tree}")
    return tree.unflatten(p_tree, [fnp.astype(p + u, p.dtype) for p, u in zip(p_leaves,
                                                                            u_leaves)])


def safe_increment(count: Any) -> Any:
    """``count + 1``, saturating at the dtype's largest value instead of
    wrapping around (a step counter of a run that never ends)."""
    top = mx.iinfo(count.dtype).max
    return fnp.where(count < top, count + 1, count)


def cast_like(value: Any, like: Any) -> Any:
    """A hyperparameter (Python number or array) in the dtype of the array
    it scales, so that a float32 learning rate keeps bfloat16 updates
    bfloat16."""
    return fnp.astype(value, like.dtype) if hasattr(value, "dtype") else value
