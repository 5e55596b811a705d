"""Utilities on parameter trees: counting, summarising, casting,
partitioning into trainable and frozen parts, and exchanging weights with
``mlx.nn`` by its dotted names (``"layers.0.weight"``).

Weights go to ``mlx.nn`` with ``model.load_weights(list(flatten_names(params,
state).items()))`` (or ``save_weights`` to a file MLX reads), and come back
with ``load_weights(dict(tree_flatten(model.parameters())), params, state)``.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
>>> params, state = model.init(random.key(0), mx.zeros((2, 3)))
>>> nn.utils.count_params(params), list(nn.utils.flatten_names(params))
(21, ['layers.0.bias', 'layers.0.weight', 'layers.2.bias', 'layers.2.weight'])
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.core import ShapeDtypeStruct, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.nn._layer import Layer, Params, PyTree, State, named_leaves, recording, spec_of

__all__ = [
    "count_params", "summary", "cast", "partition", "combine", "flatten_names",
    "unflatten_names", "load_weights", "save_weights", "replace_layers",
]


def _is_leaf(x: Any) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def _name(path: tree.KeyPath) -> str:
    """mlx.nn's dotted name of a key path (``"layers.0.weight"``)."""
    return tree.keystr(path, simple=True, separator=".")


def _nest(flat: Mapping[str, Any]) -> dict:
    """Nested dicts from dotted names, as ``mlx.utils.tree_unflatten``: a
    level whose keys are all integers ``0..n-1`` becomes a list (missing
    indices are ``{}``, as in MLX)."""
    children: dict[str, dict[str, Any]] = {}
    for name, value in flat.items():
        head, _, rest = name.partition(".")
        children.setdefault(head, {})[rest] = value
    out: dict = {}
    for head, sub in children.items():
        if "" in sub:
            if len(sub) > 1:
                raise ValueError(f"the name {head!r} is both a leaf and a subtree")
            out[head] = sub[""]
        else:
            out[head] = _nest(sub)
    if out and all(k.isdigit() for k in out) and len({int(k) for k in out}) == len(out):
        items: list = []
        for i, k in sorted((int(k), k) for k in out):
            items.extend({} for _ in range(i - len(items)))
            items.append(out[k])
        return items  # type: ignore[return-value]
    return out


def count_params(params: PyTree) -> int:
    """The number of scalars in ``params`` (arrays, traced values or
    ``ft.ShapeDtypeStruct``s).

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.utils.count_params({"weight": mx.zeros((3, 4)), "bias": mx.zeros(3)})
    15
    """
    return sum(math.prod(spec_of(x).shape) for x in tree.leaves(params, is_leaf=_is_leaf))


def _nbytes(t: PyTree) -> int:
    return sum(math.prod(s.shape) * s.dtype.size for s in
               (spec_of(x) for x in tree.leaves(t, is_leaf=_is_leaf)))


def _format_out(out: Any) -> tuple[str, str]:
    leaves = tree.leaves(out, is_leaf=_is_leaf)
    if len(leaves) == 1 and (out is leaves[0]):
        return str(tuple(leaves[0].shape)), str(leaves[0].dtype).removeprefix("mlx.core.")
    shapes = ", ".join(str(tuple(x.shape)) for x in leaves)
    dtypes = sorted({str(x.dtype).removeprefix("mlx.core.") for x in leaves})
    return f"[{shapes}]", "/".join(dtypes)


def summary(layer: Layer, params: Params, state: State, *inputs: Any, **options: Any) -> str:
    """A table of ``layer`` and each sub-layer it calls on ``inputs``
    (arrays or ``ft.ShapeDtypeStruct``s): dotted path, class, output shape
    and dtype, number of parameters (its sub-layers' included), computed
    with ``ft.eval_shape`` (nothing runs). ``options`` go to ``apply``
    (``train=True``, ``mask=...``). Print it.

    >>> import ftorch as ft, ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> x = ft.ShapeDtypeStruct((2, 3), mx.float32)
    >>> print(nn.utils.summary(model, *model.init(random.key(0), x), x))
    path      layer       output  dtype    params
    ---------------------------------------------
              Sequential  (2, 1)  float32      21
    layers.0  Linear      (2, 4)  float32      16
    layers.1  ReLU        (2, 4)  float32       0
    layers.2  Linear      (2, 1)  float32       5
    ---------------------------------------------
    21 parameters (84 bytes); state: 0 values (0 bytes)
    """
    with recording() as records:
        out = layer.eval_shape(params, state, *inputs, **options)
    rows = [("", type(layer).__name__, *_format_out(out), count_params(params))]
    for path, child, child_params, child_out in records:
        rows.append((path, type(child).__name__, *_format_out(child_out),
                     count_params(child_params)))
    header = ("path", "layer", "output", "dtype", "params")
    table = [header] + [tuple(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]

    def line(r: tuple) -> str:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths)] + [r[-1].rjust(widths[-1])]
        return "  ".join(cells).rstrip()

    rule = "-" * len(line(header))
    lines = [line(header).rstrip(), rule, *(line(r) for r in table[1:]), rule,
             f"{count_params(params)} parameters ({_nbytes(params)} bytes); state: "
             f"{count_params(state)} values ({_nbytes(state)} bytes)"]
    return "\n".join(lines)


def cast(t: PyTree, dtype: DTypeLike) -> PyTree:
    """``t`` with its floating leaves cast to ``dtype`` (integer and boolean
    leaves kept): ``cast(params, mx.bfloat16)``.

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> out = nn.utils.cast({"w": mx.ones(2), "step": mx.array(3)}, mx.float16)
    >>> out["w"].dtype, out["step"].dtype
    (mlx.core.float16, mlx.core.int32)
    """
    dtype = to_mlx_dtype(dtype, "cast: dtype")

    def leaf(x: Any) -> Any:
        if isinstance(x, ShapeDtypeStruct):
            return ShapeDtypeStruct(x.shape, dtype) if is_floating(x.dtype) else x
        return fnp.astype(x, dtype) if is_floating(spec_of(x).dtype) else x

    return tree.map(leaf, t, is_leaf=_is_leaf)


def partition(params: PyTree, predicate: Callable[[str, Any], bool]) -> tuple[PyTree, PyTree]:
    """Split ``params`` into two trees of its structure: the leaves for which
    ``predicate(dotted_name, leaf)`` holds (the others ``None``), and the
    rest; ``combine`` merges them back (as Equinox's ``partition``). Take
    ``ft.grad`` with respect to the first alone to freeze the second.

    >>> import ftorch as ft, ftorch.nn as nn, ftorch.numpy as fnp, mlx.core as mx
    >>> params = {"layers": [{"weight": mx.ones(2), "bias": mx.zeros(2)}]}
    >>> train, frozen = nn.utils.partition(params, lambda name, x: name.endswith("bias"))
    >>> train
    {'layers': [{'weight': None, 'bias': array([0, 0], dtype=float32)}]}
    >>> loss = lambda t: fnp.sum(nn.utils.combine(t, frozen)["layers"][0]["bias"] + 1)
    >>> ft.grad(loss)(train)["layers"][0]["bias"].tolist()
    [1.0, 1.0]
    """
    def select(keep: bool) -> Callable:
        return lambda path, x: x if bool(predicate(_name(path), x)) == keep else None

    def split(keep: bool) -> PyTree:
        return tree.map_with_path(select(keep), params, is_leaf=_is_leaf)

    return split(True), split(False)


def combine(*trees: PyTree) -> PyTree:
    """Merge trees of one structure whose leaves are ``None`` where another
    has them (``partition``'s inverse): each leaf is the first non-``None``.

    >>> import ftorch.nn as nn
    >>> nn.utils.combine({"a": 1, "b": None}, {"a": None, "b": 2})
    {'a': 1, 'b': 2}
    """
    if not trees:
        raise TypeError("combine: needs at least one tree")

    def first(*leaves: Any) -> Any:
        return next((x for x in leaves if x is not None), None)

    return tree.map(first, *trees, is_leaf=lambda x: x is None)


def flatten_names(params: PyTree, state: PyTree | None = None) -> dict[str, Any]:
    """``{dotted name: array}`` of ``params`` (and ``state``, merged in, as
    ``mlx.nn`` keeps BatchNorm's running statistics among its parameters):
    ``mlx.utils.tree_flatten``'s names (``"layers.0.weight"``).

    >>> import ftorch.nn as nn, mlx.core as mx
    >>> nn.utils.flatten_names({"layers": [{"weight": mx.ones(1)}, {}]}, {"step": mx.array(0)})
    {'layers.0.weight': array([1], dtype=float32), 'step': array(0, dtype=int32)}
    """
    flat = dict(named_leaves(params))
    if state is not None:
        for name, x in named_leaves(state):
            if name in flat:
                raise ValueError(f"flatten_names: {name!r} is in both params and state")
            flat[name] = x
    return flat


def unflatten_names(flat: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> PyTree:
    """Nested dicts (lists where the names are ``0, 1, ...``) from dotted
    names, as ``mlx.utils.tree_unflatten``. To load into a layer's exact
    structure (its parameter-free sub-layers' ``{}`` included, and state
    split off), use ``load_weights``.

    >>> import ftorch.nn as nn
    >>> nn.utils.unflatten_names({"layers.0.weight": 1, "layers.1.bias": 2})
    {'layers': [{'weight': 1}, {'bias': 2}]}
    """
    items = dict(flat.items() if isinstance(flat, Mapping) else flat)
    if not items:
        return {}
    return _nest(items)


def load_weights(weights: str | os.PathLike | Mapping[str, Any] | Iterable[tuple[str, Any]],
                 params: Params, state: State | None = None, *,
                 strict: bool = True) -> tuple[Params, State]:
    """``(params, state)`` with their leaves replaced by ``weights`` of the
    same dotted names: a dict or ``(name, array)`` pairs (``mlx.utils.
    tree_flatten(model.parameters())``), or a ``.safetensors`` / ``.npz``
    file (``mlx.nn.Module.save_weights``). ``params`` and ``state`` give the
    structure, shapes and dtypes (arrays, or ``ft.ShapeDtypeStruct``s from
    ``ft.eval_shape(layer.init, key, x)``). Weights keep their own dtype.

    Args:
        weights: the weights by name.
        params: the parameter tree to fill.
        state: the state tree to fill (BatchNorm's running statistics are in
            ``mlx.nn``'s parameters). Default: ``None`` (``{}``).
        strict: refuse a missing or unexpected name (else keep the leaf, or
            ignore the weight). Shapes must match either way. Default: ``True``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.Linear(2, 1)
    >>> params, state = layer.init(random.key(0), mx.zeros(2))
    >>> params, state = nn.utils.load_weights(
    ...     [("weight", mx.ones((1, 2))), ("bias", mx.zeros(1))], params, state)
    >>> layer(params, mx.array([1.0, 2.0])).tolist()
    [3.0]
    """
    if isinstance(weights, (str, os.PathLike)):
        weights = mx.load(str(weights))
    weights = dict(weights.items() if isinstance(weights, Mapping) else weights)
    state = {} if state is None else state
    expected = flatten_names(params, state)
    missing = sorted(set(expected) - set(weights))
    unexpected = sorted(set(weights) - set(expected))
    if strict and (missing or unexpected):
        raise ValueError(f"load_weights: the names do not match: missing {missing}, "
                         f"unexpected {unexpected}")
    for name in sorted(set(expected) & set(weights)):
        want, got = tuple(spec_of(expected[name]).shape), tuple(spec_of(weights[name]).shape)
        if want != got:
            raise ValueError(f"load_weights: {name!r} has shape {got}, expected {want}")

    def fill(t: PyTree) -> PyTree:
        def leaf(path: tuple, x: Any) -> Any:
            return weights.get(_name(path), x)
        return tree.map_with_path(leaf, t, is_leaf=_is_leaf)

    return fill(params), fill(state)


def save_weights(path: str | os.PathLike, params: Params, state: State | None = None) -> None:
    """Save ``params`` (and ``state``) by their dotted names to ``path``:
    ``.safetensors`` or ``.npz``, as ``mlx.nn.Module.save_weights`` (so
    ``model.load_weights(path)`` reads it).

    >>> import os, tempfile, ftorch.nn as nn, mlx.core as mx
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> nn.utils.save_weights(path, {"weight": mx.ones(2)})
    >>> sorted(mx.load(path))
    ['weight']
    """
    path = str(path)
    flat = flatten_names(params, state)
    if path.endswith(".safetensors"):
        mx.save_safetensors(path, flat)
    elif path.endswith(".npz"):
        mx.savez(path, **flat)
    else:
        raise ValueError(f"save_weights: the file must end in .safetensors or .npz, got {path!r}")



#: What ``replace_layers`` calls on each layer: ``(path, layer, params)`` to
#: the replacement ``(layer, params)``, or ``None`` to keep it (and look inside).
Replacement = Callable[[str, Layer, Params], "tuple[Layer, Params] | None"]


def replace_layers(model: Layer, params: Params, replace: Replacement) -> tuple[Layer, Params]:
    """``model`` and its ``params`` with layers swapped: ``replace(path,
    layer, params)`` is called on every layer, outermost first (``path`` is
    ``mlx.nn``'s dotted name, ``""`` for ``model`` itself), and returns the
    new ``(layer, params)`` or ``None`` to keep the layer and look inside
    it. Neither ``model`` nor ``params`` is changed (``mlx.nn`` swaps modules
    in place). ``nn.quantize`` and ``nn.lora`` are built on it.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    >>> params, _ = model.init(random.key(0), mx.zeros((1, 2)))
    >>> swap = lambda path, layer, p: (nn.GELU(), {}) if isinstance(layer, nn.ReLU) else None
    >>> nn.utils.replace_layers(model, params, swap)[0].layers[1]
    GELU(approx='none')
    """
    return _replace(model, params, "", replace)


def _replace(layer: Layer, params: Params, path: str, replace: Replacement) -> tuple:
    replaced = replace(path, layer, params)
    if replaced is not None:
        return replaced
    children = layer.children()
    if not children:
        return layer, params
    new_layer, new_params = copy.copy(layer), dict(params)

    def walk(sub: Any, sub_params: Any, sub_path: str) -> tuple[Any, Any]:
        if isinstance(sub, Layer):
            return _replace(sub, sub_params, sub_path, replace)
        if isinstance(sub, dict):
            pairs = {k: walk(v, sub_params.get(k, {}), f"{sub_path}.{k}") for k, v in sub.items()}
            return ({k: pair[0] for k, pair in pairs.items()},
                    {k: pair[1] for k, pair in pairs.items() if k in sub_params})
        pairs = [walk(v, sub_params[i] if i < len(sub_params) else {}, f"{sub_path}.{i}")
                 for i, v in enumerate(sub)]
        return type(sub)(pair[0] for pair in pairs), [pair[1] for pair in pairs]

    for name, sub in children.items():
        converted, converted_params = walk(sub, params.get(name, {}),
                                           f"{path}.{name}" if path else name)
        # Children made in __post_init__ are not constructor arguments: set the field.
        object.__setattr__(new_layer, name, converted)
        if name in params:
            new_params[name] = converted_params
    return new_layer, new_params
