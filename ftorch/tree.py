"""Pytree helpers over optree.

Containers are the ones optree knows (tuples, lists, dicts, namedtuples,
``None`` as an empty node, ...) plus anything registered in the ``"ftorch"``
namespace or optree's global one. Register your own types with
``ftorch.tree.dataclass`` or ``ftorch.tree.register_node``.

It holds both ``jax.tree``'s short names (``map``, ``leaves``, ``reduce``...)
and ``jax.tree_util``'s (``tree_map``, ``register_pytree_node``,
``Partial``...), so code written against either reads the same here.

Each leaf has a key path, as in ``jax.tree_util``: a tuple of key entries
(``SequenceKey``, ``DictKey``, ``GetAttrKey``, ``FlattenedIndexKey``), which
``keystr`` writes as ``"['a'][0].w"``; ``flatten_with_path``,
``leaves_with_path`` and ``map_with_path`` give or use them.

>>> import ftorch as ft, mlx.core as mx
>>> ft.tree.leaves({"b": mx.ones(2), "a": (1.0, None)})
[1.0, array([1, 1], dtype=float32)]
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import mlx.core as mx
import optree

import ftorch.primitives as lax
from ftorch.core import Tracer
from ftorch.typing import PyTree

__all__ = [
    "NAMESPACE", "flatten", "unflatten", "leaves", "structure", "map", "broadcast", "ravel",
    "all", "reduce", "reduce_associative", "transpose", "static",
    "dataclass", "register_dataclass", "register_node",
    "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
    "PyTreeDef", "flatten_with_path", "leaves_with_path", "map_with_path", "keystr",
    "key_paths", "flatten_one_level", "flatten_one_level_with_keys",
    # jax.tree_util's names
    "tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure",
    "tree_reduce", "tree_reduce_associative", "tree_all", "tree_transpose", "tree_broadcast",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "all_leaves", "is_tree_node",
    "treedef_children", "treedef_is_leaf", "treedef_tuple", "Partial",
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


def broadcast(prefix_tree: PyTree, full_tree: PyTree,
              is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """``prefix_tree``'s leaves repeated over the subtrees of ``full_tree``
    they stand for (``prefix_tree`` is a prefix of ``full_tree``'s
    structure), as ``jax.tree.broadcast``; a ``ValueError`` when it is not
    a prefix.

    >>> import ftorch as ft
    >>> ft.tree.broadcast((1, 2, 3), (0, {'a': 0, 'b': 0}, (0, 0)))
    (1, {'a': 2, 'b': 2}, (3, 3))
    """
    return optree.tree_broadcast_prefix(prefix_tree, full_tree, is_leaf, none_is_leaf=False,
                                        namespace=NAMESPACE)


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

    # Fields are attributes: their key entries are GetAttrKeys (".w"), as in JAX.
    optree.register_pytree_node(nodetype, flatten, unflatten, path_entry_type=optree.GetAttrEntry,
                                namespace=NAMESPACE)
    return nodetype


def register_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable) -> type:
    """Register ``cls`` as a pytree node: ``flatten_fn(obj) -> (children, aux)``
    and ``unflatten_fn(aux, children) -> obj``."""
    optree.register_pytree_node(cls, flatten_fn, unflatten_fn, namespace=NAMESPACE)
    return cls


# ----------------------------------------------------------------------------
# Key paths (jax.tree_util's names and semantics)
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The key of a tuple's or list's item: ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """The key of a dict's value: ``[key]``."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The key of an attribute (a namedtuple's or dataclass's field): ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """The key of a child of a node registered without keys
    (``register_node``): its position among the node's children."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


#: One step of a key path.
KeyEntry = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey
#: Where a leaf is in a tree: the key entries from the root down.
KeyPath = tuple[KeyEntry, ...]

_KEY_TYPES = (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)

_SEQUENCES = {optree.PyTreeKind.TUPLE, optree.PyTreeKind.LIST, optree.PyTreeKind.DEQUE}
_MAPPINGS = {optree.PyTreeKind.DICT, optree.PyTreeKind.ORDEREDDICT,
             optree.PyTreeKind.DEFAULTDICT, optree.PyTreeKind.FROZENDICT}
_NAMED = {optree.PyTreeKind.NAMEDTUPLE, optree.PyTreeKind.STRUCTSEQUENCE}


def _node_keys(spec: PyTreeDef) -> list[KeyEntry]:
    """The key entries of the children of ``spec``'s root node."""
    entries = spec.entries()
    node_type = spec.type  # tested first: reading ``kind`` costs more
    if node_type is list or node_type is tuple:
        return [SequenceKey(i) for i in entries]
    if node_type is dict:
        return [DictKey(k) for k in entries]
    kind = spec.kind
    if kind in _SEQUENCES:
        return [SequenceKey(i) for i in entries]
    if kind in _MAPPINGS:
        return [DictKey(k) for k in entries]
    if kind in _NAMED:
        fields = getattr(spec.type, "_fields", None) or spec.type.__match_args__
        return [GetAttrKey(fields[i]) for i in entries]
    registered = optree.register_pytree_node.get(spec.type, namespace=spec.namespace)
    entry_type = registered.path_entry_type if registered is not None else None
    if entry_type is not None and issubclass(entry_type, optree.GetAttrEntry):
        return [GetAttrKey(e) for e in entries]
    if entry_type is not None and issubclass(entry_type, optree.MappingEntry):
        return [DictKey(e) for e in entries]
    return [e if isinstance(e, _KEY_TYPES) else FlattenedIndexKey(e) if isinstance(e, int)
            else DictKey(e) for e in entries]


_KEY_PATHS: dict[PyTreeDef, list[KeyPath]] = {}  # treedef -> its key paths, most recent
_KEY_PATHS_KEPT = 256


def key_paths(treedef: PyTreeDef) -> list[KeyPath]:
    """The key path of each leaf of ``treedef``, in leaf order.

    >>> import ftorch as ft
    >>> ft.tree.key_paths(ft.tree.structure({"b": [1], "a": 3}))
    [(DictKey(key='a'),), (DictKey(key='b'), SequenceKey(idx=0))]
    """
    # Remembered per structure: error messages and checks name the leaves of
    # the same trees call after call, and walking a treedef costs ~5 us a node.
    try:
        found = _KEY_PATHS.get(treedef)
    except TypeError:  # a node's auxiliary data is unhashable
        return _walk_key_paths(treedef)
    if found is None:
        if len(_KEY_PATHS) >= _KEY_PATHS_KEPT:
            _KEY_PATHS.clear()
        found = _KEY_PATHS[treedef] = _walk_key_paths(treedef)
    return list(found)


def _walk_key_paths(treedef: PyTreeDef) -> list[KeyPath]:
    out: list[KeyPath] = []

    def walk(spec: PyTreeDef, prefix: KeyPath) -> None:
        if spec.is_leaf():
            out.append(prefix)
            return
        for key, child in zip(_node_keys(spec), spec.children()):
            walk(child, (*prefix, key))

    walk(treedef, ())
    return out


def flatten_with_path(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
                      ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``(key path, leaf)`` pairs of ``tree`` and its structure, as
    ``jax.tree.flatten_with_path``.

    >>> import ftorch as ft
    >>> path_vals, treedef = ft.tree.flatten_with_path([1, {'x': 3}])
    >>> path_vals
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='x')), 3)]
    >>> treedef
    PyTreeSpec([*, {'x': *}])
    """
    leaves_, treedef = flatten(tree, is_leaf)
    return list(zip(key_paths(treedef), leaves_)), treedef


def leaves_with_path(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
                     ) -> list[tuple[KeyPath, Any]]:
    """``(key path, leaf)`` pairs of ``tree``, as ``jax.tree.leaves_with_path``.

    >>> import ftorch as ft
    >>> ft.tree.leaves_with_path([1, {'x': 3}])
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='x')), 3)]
    """
    return flatten_with_path(tree, is_leaf)[0]


def map_with_path(f: Callable, tree: PyTree, *rest: PyTree,
                  is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """Apply ``f(key_path, leaf, *rest_leaves)`` leafwise over ``tree`` (and
    the ``rest``, which have its structure or it as a prefix), as
    ``jax.tree.map_with_path``.

    >>> import ftorch as ft
    >>> ft.tree.map_with_path(lambda path, x: x + path[0].idx, [1, 2, 3])
    [1, 3, 5]
    """
    leaves_, treedef = flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(path, *xs) for path, *xs in
                              zip(key_paths(treedef), leaves_, *others)])


def flatten_one_level_with_keys(tree: PyTree) -> tuple[list[tuple[KeyEntry, PyTree]], Any]:
    """The ``(key entry, child)`` pairs of a pytree node and its auxiliary
    data (what rebuilding it needs besides its children), as
    ``jax.tree_util.flatten_one_level_with_keys``; a ``ValueError`` for a leaf.

    >>> import ftorch as ft
    >>> ft.tree.flatten_one_level_with_keys({"b": 1, "a": [2]})[0]
    [(DictKey(key='a'), [2]), (DictKey(key='b'), 1)]
    """
    if optree.tree_is_leaf(tree, none_is_leaf=False, namespace=NAMESPACE):
        raise ValueError(f"flatten_one_level_with_keys: a {type(tree).__name__} is a leaf, "
                         "not a pytree node")
    children, aux, _, _ = optree.tree_flatten_one_level(tree, none_is_leaf=False,
                                                        namespace=NAMESPACE)
    node = structure(tree, is_leaf=lambda x: x is not tree)  # the node, its children leaves
    return list(zip(_node_keys(node), children)), aux


def _simple(key: Any) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, DictKey):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return key.name
    if isinstance(key, FlattenedIndexKey):
        return str(key.key)
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text, as ``jax.tree_util.keystr``: each entry's
    ``str`` (``['a']``, ``[0]``, ``.w``) joined by ``separator``; with
    ``simple``, the bare keys (``a``, ``0``, ``w``), which ``separator="."``
    joins into mlx.nn's dotted names.

    >>> import ftorch as ft
    >>> params = {'foo': {'bar': {'baz': 1, 'bat': [2, 3]}}}
    >>> for path, _ in ft.tree.leaves_with_path(params):
    ...     print(ft.tree.keystr(path))
    ['foo']['bar']['bat'][0]
    ['foo']['bar']['bat'][1]
    ['foo']['bar']['baz']
    >>> for path, _ in ft.tree.leaves_with_path(params):
    ...     print(ft.tree.keystr(path, simple=True, separator='/'))
    foo/bar/bat/0
    foo/bar/bat/1
    foo/bar/baz
    """
    return separator.join(map(_simple if simple else str, keys))


# ----------------------------------------------------------------------------
# Reductions, transposition, static fields (jax.tree's names)
# ----------------------------------------------------------------------------


class _Unspecified:
    def __repr__(self) -> str:
        return "<unspecified>"


_UNSPECIFIED: Any = _Unspecified()


def all(tree: PyTree, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of ``tree`` is truthy (``True`` for no leaves), as
    ``jax.tree.all``.

    >>> import ftorch as ft
    >>> ft.tree.all([1, {"a": True}]), ft.tree.all([1, 0])
    (True, False)
    """
    return builtins.all(leaves(tree, is_leaf))


def reduce(function: Callable[[Any, Any], Any], tree: PyTree, initializer: Any = _UNSPECIFIED,
           is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce(function, leaves(tree), initializer)``, as
    ``jax.tree.reduce``.

    >>> import ftorch as ft
    >>> ft.tree.reduce(lambda a, b: a + b, {"x": 1, "y": (2, 3)})
    6
    """
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves(tree, is_leaf))
    return functools.reduce(function, leaves(tree, is_leaf), initializer)


def reduce_associative(operation: Callable[[Any, Any], Any], tree: PyTree, *,
                       identity: Any = _UNSPECIFIED,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The leaves of ``tree`` combined by the associative ``operation`` in a
    balanced tree of calls (depth ``log2`` of the number of leaves), as
    ``jax.tree.reduce_associative``; ``identity`` is the result for no
    leaves.

    >>> import ftorch as ft
    >>> ft.tree.reduce_associative(lambda a, b: a + b, [1, 2, (3, 4)])
    10
    """
    items = leaves(tree, is_leaf)
    if not items:
        if identity is _UNSPECIFIED:
            raise TypeError("reduce_associative: a tree with no leaves needs an identity")
        return identity
    while len(items) > 1:
        paired = [operation(a, b) for a, b in zip(items[::2], items[1::2])]
        items = paired + items[len(paired) * 2:]
    return items[0]


def transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
              pytree_to_transpose: PyTree) -> PyTree:
    """A tree of ``outer_treedef``'s structure whose leaves are trees of
    ``inner_treedef``'s, turned into one of the inner structure whose leaves
    are trees of the outer's, as ``jax.tree.transpose``; ``inner_treedef``
    None takes the structure of the first outer leaf.

    >>> import ftorch as ft
    >>> ft.tree.transpose(ft.tree.structure([0, 0]), None, [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)
        inner_treedef = structure(first[0]) if first else structure(None)
    return optree.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def static(**kwargs: Any) -> Any:
    """``dataclasses.field(**kwargs)`` marked static (``metadata`` gets
    ``static=True``), so ``register_dataclass`` makes it auxiliary data,
    not a child, as ``jax.tree.static``.

    >>> import dataclasses, ftorch as ft, mlx.core as mx
    >>> @ft.tree.register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: mx.array
    ...     kind: str = ft.tree.static(default="add")
    >>> len(ft.tree.leaves(Op(mx.ones(2))))
    1
    """
    metadata = dict(kwargs.pop("metadata", None) or {}, static=True)
    return dataclasses.field(metadata=metadata, **kwargs)


# ----------------------------------------------------------------------------
# Nodes: registering types, looking at structures (jax.tree_util's names)
# ----------------------------------------------------------------------------


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Register ``nodetype`` as a pytree node, as
    ``jax.tree_util.register_pytree_node``: ``flatten_func(obj) -> (children,
    aux_data)``, ``unflatten_func(aux_data, children) -> obj``; with
    ``flatten_with_keys_func(obj) -> ((key, child) pairs, aux_data)``, its
    children's key entries are those keys.

    >>> import ftorch as ft
    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> ft.tree.register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                              lambda aux, children: Pair(*children))
    >>> ft.tree.leaves(Pair(1, [2, 3]))
    [1, 2, 3]
    """
    if flatten_with_keys_func is not None:
        register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func,
                                  flatten_func)
        return
    register_node(nodetype, flatten_func, unflatten_func)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Register ``nodetype`` as a pytree node whose children have keys, as
    ``jax.tree_util.register_pytree_with_keys``:
    ``flatten_with_keys(obj) -> ((key entry, child) pairs, aux_data)`` and
    ``unflatten_func(aux_data, children) -> obj`` (``flatten_func``, the
    faster flattening without keys, is accepted and not needed).

    >>> import ftorch as ft
    >>> class Point:
    ...     def __init__(self, x, y):
    ...         self.x, self.y = x, y
    >>> def flatten_with_keys(p):
    ...     return ((ft.tree.GetAttrKey("x"), p.x), (ft.tree.GetAttrKey("y"), p.y)), None
    >>> ft.tree.register_pytree_with_keys(Point, flatten_with_keys,
    ...                                   lambda aux, children: Point(*children))
    >>> [ft.tree.keystr(k) for k, _ in ft.tree.leaves_with_path(Point(1, 2))]
    ['.x', '.y']
    """
    def flatten_fn(obj):
        pairs, aux = flatten_with_keys(obj)
        pairs = list(pairs)
        return [c for _, c in pairs], aux, [k for k, _ in pairs]

    optree.register_pytree_node(nodetype, flatten_fn, unflatten_func, namespace=NAMESPACE)


def register_pytree_node_class(cls: type) -> type:
    """Register a class with methods ``tree_flatten(self) -> (children,
    aux_data)`` and the classmethod ``tree_unflatten(aux_data, children)``
    as a pytree node (a class decorator), as
    ``jax.tree_util.register_pytree_node_class``.

    >>> import ftorch as ft
    >>> @ft.tree.register_pytree_node_class
    ... class Box:
    ...     def __init__(self, v):
    ...         self.v = v
    ...     def tree_flatten(self):
    ...         return (self.v,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> ft.tree.map(lambda x: x + 1, Box(1)).v
    2
    """
    register_node(cls, lambda obj: obj.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Register a class with methods ``tree_flatten_with_keys(self) ->
    ((key entry, child) pairs, aux_data)`` and the classmethod
    ``tree_unflatten(aux_data, children)`` as a pytree node with keys (a
    class decorator), as ``jax.tree_util.register_pytree_with_keys_class``.

    >>> import ftorch as ft
    >>> @ft.tree.register_pytree_with_keys_class
    ... class Named:
    ...     def __init__(self, w):
    ...         self.w = w
    ...     def tree_flatten_with_keys(self):
    ...         return ((ft.tree.GetAttrKey("w"), self.w),), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> ft.tree.keystr(ft.tree.leaves_with_path(Named(3))[0][0])
    '.w'
    """
    register_pytree_with_keys(cls, lambda obj: obj.tree_flatten_with_keys(), cls.tree_unflatten)
    return cls


def register_static(cls: type) -> type:
    """Register ``cls`` as a node with no children: its instances are kept
    whole as auxiliary data (so they must be hashable), never leaves, as
    ``jax.tree_util.register_static``.

    >>> import ftorch as ft
    >>> @ft.tree.register_static
    ... class Config:
    ...     def __hash__(self):
    ...         return 0
    ...     def __eq__(self, other):
    ...         return isinstance(other, Config)
    >>> ft.tree.leaves([Config(), 1])
    [1]
    """
    register_node(cls, lambda obj: ((), obj), lambda aux, children: aux)
    return cls


def all_leaves(iterable: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item of ``iterable`` is a leaf (``None`` is not: it is
    an empty node), as ``jax.tree_util.all_leaves``.

    >>> import ftorch as ft
    >>> ft.tree.all_leaves([1, 2.0]), ft.tree.all_leaves([1, [2]])
    (True, False)
    """
    return builtins.all(structure(x, is_leaf).is_leaf() and x is not None for x in iterable)


def is_tree_node(typ: type) -> bool:
    """Whether instances of the type ``typ`` are pytree nodes (containers),
    not leaves, as ``jax.tree_util.is_tree_node``.

    >>> import ftorch as ft
    >>> ft.tree.is_tree_node(dict), ft.tree.is_tree_node(int)
    (True, False)
    """
    if not isinstance(typ, type):
        return False
    return optree.register_pytree_node.get(typ, namespace=NAMESPACE) is not None


def flatten_one_level(tree: PyTree) -> tuple[list, Any]:
    """The children of a pytree node and its auxiliary data, as
    ``jax.tree_util.flatten_one_level``; a ``ValueError`` for a leaf.

    >>> import ftorch as ft
    >>> ft.tree.flatten_one_level({"b": 1, "a": [2]})[0]
    [[2], 1]
    """
    pairs, aux = flatten_one_level_with_keys(tree)
    return [child for _, child in pairs], aux


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of ``treedef``'s root, as
    ``jax.tree_util.treedef_children``.

    >>> import ftorch as ft
    >>> ft.tree.treedef_children(ft.tree.structure((1, [2, 3])))
    [PyTreeSpec(*), PyTreeSpec([*, *])]
    """
    return list(treedef.children())


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is one node (a leaf, ``None`` or an empty
    container), as ``jax.tree_util.treedef_is_leaf``.

    >>> import ftorch as ft
    >>> ft.tree.treedef_is_leaf(ft.tree.structure(1))
    True
    >>> ft.tree.treedef_is_leaf(ft.tree.structure([1]))
    False
    """
    return treedef.num_nodes == 1


def treedef_tuple(treedefs: Sequence[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple of trees of ``treedefs``' structures, as
    ``jax.tree_util.treedef_tuple``.

    >>> import ftorch as ft
    >>> ft.tree.treedef_tuple([ft.tree.structure(1), ft.tree.structure([1, 2])])
    PyTreeSpec((*, [*, *]))
    """
    return optree.treespec_tuple(list(treedefs), none_is_leaf=False, namespace=NAMESPACE)


class Partial(functools.partial):
    """``functools.partial`` that is a pytree, as ``jax.tree_util.Partial``:
    its bound arguments are children (so it can be passed through ``jit``,
    ``vmap`` and ``grad``), the function auxiliary data.

    >>> import ftorch as ft, mlx.core as mx
    >>> add = ft.tree.Partial(lambda a, b: a + b, mx.array(1.0))
    >>> ft.tree.map(lambda x: x * 10, add)(2.0).item()
    12.0
    """

    def __new__(cls, func: Callable, *args: Any, **kw: Any) -> Partial:
        # A Partial of a Partial's function is flattened into one, as functools does.
        if isinstance(func, functools.partial):
            original, func = func, func.func
            args = original.args + args
            kw = {**original.keywords, **kw}
        return super().__new__(cls, func, *args, **kw)


register_node(Partial, lambda p: ((p.args, p.keywords), p.func),
              lambda func, children: Partial(func, *children[0], **children[1]))


# jax.tree_util's names for the functions above.
tree_map, tree_leaves, tree_flatten, tree_unflatten = map, leaves, flatten, unflatten
tree_structure, tree_reduce, tree_reduce_associative = structure, reduce, reduce_associative
tree_all, tree_transpose, tree_broadcast = all, transpose, broadcast
tree_flatten_with_path, tree_leaves_with_path = flatten_with_path, leaves_with_path
tree_map_with_path = map_with_path
