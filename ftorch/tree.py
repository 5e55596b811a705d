"""Pytree helpers over optree.

Containers are the ones optree knows (tuples, lists, dicts, namedtuples,
``None`` as an empty node, ...) plus anything registered in the ``"ftorch"``
namespace or optree's global one. Register your own types with
``ftorch.tree.dataclass`` or ``ftorch.tree.register_node``.

>>> import ftorch as ft, mlx.core as mx
>>> ft.tree.leaves({"b": mx.ones(2), "a": (1.0, None)})
[1.0, array([1, 1], dtype=float32)]
"""

from __future__ import annotations

import builtins
import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import optree

import ftorch.primitives as lax
from ftorch.core import Tracer

__all__ = [
    "NAMESPACE", "flatten", "unflatten", "leaves", "structure", "map", "ravel",
    "dataclass", "register_dataclass", "register_node",
]

#: The optree namespace ftorch looks in (besides optree's global one).
NAMESPACE = "ftorch"

PyTreeDef = optree.PyTreeSpec


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """Leaves (in a fixed order) and the structure to rebuild ``tree``."""
    return optree.tree_flatten(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """Rebuild a tree of ``treedef``'s structure from ``leaves``."""
    return optree.tree_unflatten(treedef, leaves)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return optree.tree_structure(tree, is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise over ``tree`` (and the same-shaped ``rest``)."""
    return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, none_is_leaf=False, namespace=NAMESPACE)


def ravel(tree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Flatten a tree of arrays into one 1-d array, and the inverse.

    Leaves are promoted to their common dtype; ``unravel`` casts each piece
    back. Both directions are ftorch ops, so they are differentiable.

    >>> import ftorch as ft, mlx.core as mx
    >>> flat, unravel = ft.tree.ravel({"w": mx.ones((2, 2)), "b": mx.zeros(3)})
    >>> flat.shape, unravel(flat)["w"].shape
    ((7,), (2, 2))
    """
    leaves_, treedef = flatten(tree)
    leaves_ = [x if isinstance(x, (mx.array, Tracer)) else mx.array(x) for x in leaves_]
    shapes = [tuple(x.shape) for x in leaves_]
    dtypes = [x.dtype for x in leaves_]
    sizes = [math.prod(shape) for shape in shapes]
    if not leaves_:
        return mx.zeros((0,)), lambda flat: unflatten(treedef, [])
    dtype = mx.result_type(*dtypes)
    flat = lax.concatenate([lax.reshape(x if x.dtype == dtype else lax.astype(x, dtype), (n,))
                            for x, n in zip(leaves_, sizes)], 0)
    total = builtins.sum(sizes)

    def unravel(flat: Any) -> Any:
        if tuple(flat.shape) != (total,):
            raise ValueError(
                f"unravel expects a 1-d array of size {total}, got shape {tuple(flat.shape)}")
        pieces, start = [], 0
        for shape, dt, n in zip(shapes, dtypes, sizes):
            piece = lax.reshape(lax.static_slice(flat, (slice(start, start + n),)), shape)
            pieces.append(piece if piece.dtype == dt else lax.astype(piece, dt))
            start += n
        return unflatten(treedef, pieces)

    return flat, unravel


def dataclass(cls: type | None = None, **kwargs: Any) -> Any:
    """``dataclasses.dataclass`` that is also a pytree node (fields are children).

    >>> import ftorch as ft, mlx.core as mx
    >>> @ft.tree.dataclass
    ... class Params:
    ...     w: mx.array
    ...     b: mx.array
    >>> len(ft.tree.leaves(Params(mx.ones(2), mx.zeros(1))))
    2
    """
    kwargs.setdefault("namespace", NAMESPACE)
    if cls is None:
        return lambda c: optree.dataclasses.dataclass(c, **kwargs)
    return optree.dataclasses.dataclass(cls, **kwargs)


def register_dataclass(
    nodetype: type,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type:
    """Register a dataclass as a pytree node, as ``jax.tree_util.register_dataclass``:
    ``data_fields`` are children (arrays), ``meta_fields`` static auxiliary data
    (hashable). Without them, fields whose ``metadata`` has ``static=True`` are
    meta and the others data. Usable as a class decorator.

    >>> import dataclasses, ftorch as ft, mlx.core as mx
    >>> @ft.tree.register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: mx.array
    ...     act: str = dataclasses.field(default="relu", metadata=dict(static=True))
    >>> ft.tree.map(lambda x: x * 2, Layer(mx.ones(2))).w.tolist()
    [2.0, 2.0]
    """
    if not dataclasses.is_dataclass(nodetype):
        raise TypeError(f"register_dataclass: {nodetype!r} is not a dataclass")
    fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
    if data_fields is None and meta_fields is None:
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if f.name not in meta_fields]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    declared = {f.name for f in fields if f.init}
    given = set(data_fields) | set(meta_fields)
    if given != declared:
        raise ValueError(
            f"register_dataclass: data_fields and meta_fields must name the init fields of "
            f"{nodetype.__name__} exactly once: missing {sorted(declared - given)}, "
            f"unknown {sorted(given - declared)}")

    def flatten(obj):
        return ([getattr(obj, n) for n in data_fields],
                tuple(getattr(obj, n) for n in meta_fields), data_fields)

    def unflatten(meta, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, meta)))

    optree.register_pytree_node(nodetype, flatten, unflatten, namespace=NAMESPACE)
    return nodetype


def register_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable) -> type:
    """Register ``cls`` as a pytree node: ``flatten_fn(obj) -> (children, aux)``
    and ``unflatten_fn(aux, children) -> obj``."""
    optree.register_pytree_node(cls, flatten_fn, unflatten_fn, namespace=NAMESPACE)
    return cls
