"""Transformations that wrap others: apply one to part of the parameters
(``masked``), ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ftorch import tree
from ftorch.optim._base import GradientTransformation, OptState

__all__ = ["masked", "MaskedState", "MaskedNode"]


class MaskedNode(NamedTuple):
    """Stands for a parameter that a ``masked`` transformation leaves out
    (an empty pytree node: it holds no state)."""


class MaskedState(NamedTuple):
    inner_state: OptState


def _resolve_mask(mask: Any, params: Any, fname: str) -> list[bool]:
    """The mask (a pytree of bools like ``params``, or a function of
    ``params`` returning one) as one bool per parameter leaf."""
    m = mask(params) if callable(mask) else mask
    p_leaves, p_tree = tree.flatten(params)
    m_leaves, m_tree = tree.flatten(m)
    if m_tree != p_tree:
        raise ValueError(f"{fname}: the mask has structure {m_tree}, the parameters {p_tree}")
    for path, v in zip(m_tree.paths(), m_leaves):
        if not isinstance(v, bool):
            where = "mask" + "".join(f"[{p!r}]" for p in path)
            raise TypeError(f"{fname}: {where} must be a Python bool, got {v!r}")
    return m_leaves


def masked(inner: GradientTransformation, mask: Any | Callable[[Any], Any]
           ) -> GradientTransformation:
    """Apply ``inner`` to the parameters whose ``mask`` leaf is True; the
    others' updates pass unchanged, and ``inner`` keeps no state for them.

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
        leaves, treedef = tree.flatten(updates)
        flags = _resolve_mask(mask, updates if params is None else params, "masked")
        p_sel = None if params is None else select(tree.leaves(params), flags, treedef)
        new, inner_state = inner.update(select(leaves, flags, treedef), state.inner_state, p_sel)
        new_leaves = tree.leaves(new)  # MaskedNodes are empty: only the chosen leaves
        it = iter(new_leaves)
        out = [next(it) if f else u for u, f in zip(leaves, flags)]
        return tree.unflatten(treedef, out), MaskedState(inner_state)

    return GradientTransformation(init, update)
