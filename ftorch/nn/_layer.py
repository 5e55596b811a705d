"""``Layer``: an immutable description of a computation whose parameters and
state live outside it, as plain pytrees (nested dicts and lists of arrays).

A layer holds hyperparameters only. ``params, state = layer.init(key, x)``
makes its parameters (nested dicts with ``mlx.nn``'s names and layouts) and
its state (``{}`` unless it has some, as BatchNorm's running statistics);
``y, state = layer.apply(params, state, x, *, key=None, train=False)`` is a
pure function of them, so ``ft.grad``, ``ft.jit`` and ``ft.vmap`` apply to it
as they are. ``layer(params, x)`` is the short form for layers without state.

A layer made of other layers holds them in its fields, as Equinox's modules
do: a field holding a ``Layer``, or a tuple, list or dict of them, is a child,
and the child's parameters and state sit under the field's name (a tuple's as
a list: ``{"layers": [p0, p1, ...]}``, ``mlx.nn``'s ``layers.0.weight``).
``apply`` reaches its children through ``run = self.bind(params, state,
key=key, train=train)``: ``run.body(x)`` applies the child ``body`` with its
parameters, state and key (one ``ftorch.random.split(key, n)`` serves the
``n`` children, in field order), and ``run.state`` is the layer's new state.
Such a layer needs no ``init`` of its own: the default runs ``apply`` once on
the inputs' shapes (computing nothing) and initialises each child for the
inputs it was called with.

>>> import dataclasses, ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> @dataclasses.dataclass(frozen=True)
... class Residual(nn.Layer):
...     body: nn.Layer
...     def apply(self, params, state, x, *, key=None, train=False):
...         run = self.bind(params, state, key=key, train=train)
...         return x + run.body(x), run.state
>>> block = Residual(nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
>>> params, state = block.init(random.key(0), mx.ones((3, 2)))
>>> sorted(nn.utils.flatten_names(params)), block(params, mx.ones((3, 2))).shape
(['body.layers.0.bias', 'body.layers.0.weight'], (3, 2))
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import random, tree
from ftorch.core import ShapeDtypeStruct, aval_of
from ftorch.transforms import eval_shape
from ftorch.transforms.remat import checkpoint
from ftorch.typing import Array, Key, Params, PyTree, State

__all__ = ["Layer", "Array", "PyTree", "Params", "State", "Key", "InputSpec", "spec_of"]

#: What ``init`` takes for an input: an array, or only its ``ft.ShapeDtypeStruct``.
InputSpec = Any


def spec_of(x: Any) -> ShapeDtypeStruct:
    """The shape and dtype of ``x`` (an array, a traced value or an
    ``ft.ShapeDtypeStruct``) as an ``ft.ShapeDtypeStruct``.

    >>> import ftorch as ft, ftorch.nn as nn, mlx.core as mx
    >>> nn.spec_of(mx.zeros((2, 3))) == ft.ShapeDtypeStruct((2, 3), mx.float32)
    True
    """
    if isinstance(x, ShapeDtypeStruct):
        return x
    return aval_of(x)


def _is_spec(x: Any) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def _abstract(t: PyTree) -> PyTree:
    """``t`` with every array leaf replaced by its ``ShapeDtypeStruct``."""
    return tree.map(spec_of, t, is_leaf=_is_spec)


def _has_leaves(t: PyTree) -> bool:
    return bool(tree.leaves(t, is_leaf=_is_spec))


def _is_empty(t: Any) -> bool:
    """Whether ``t`` is ``{}``: the params or state of a layer without any."""
    return type(t) is dict and not t


def _array_leaves(inputs: tuple) -> tuple[list, Callable[[list], tuple]]:
    """The leaves of ``inputs`` that are arrays (traced values, specs), and a
    function putting others in their places: for a transform of a layer's
    inputs that holds the rest (a ``"causal"`` mask, ``None``) static."""
    leaves, treedef = tree.flatten(inputs, is_leaf=_is_spec)
    dynamic = [i for i, x in enumerate(leaves) if hasattr(x, "shape")]

    def rebuild(arrays: list) -> tuple:
        merged = list(leaves)
        for i, x in zip(dynamic, arrays):
            merged[i] = x
        return tree.unflatten(treedef, merged)

    return [leaves[i] for i in dynamic], rebuild


def named_leaves(t: PyTree) -> list[tuple[str, Any]]:
    """``(dotted name, leaf)`` pairs of ``t``, ``mlx.utils.tree_flatten``'s
    names (``"layers.0.weight"``)."""
    return [(tree.keystr(path, simple=True, separator="."), x)
            for path, x in tree.leaves_with_path(t, is_leaf=_is_spec)]


# ----------------------------------------------------------------------------
# Recording what each sub-layer returns (for nn.utils.summary)
# ----------------------------------------------------------------------------

_recorder: contextvars.ContextVar[tuple[list, str] | None] = contextvars.ContextVar(
    "ftorch_nn_recorder", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list]:
    """Within the block, every child call made through ``Layer.bind`` appends
    ``[dotted path, layer, params, output]`` (shapes and dtypes only) to the
    yielded list, in the order the calls start."""
    records: list = []
    token = _recorder.set((records, ""))
    try:
        yield records
    finally:
        _recorder.reset(token)


# ----------------------------------------------------------------------------
# Errors that say where in a model they arose
# ----------------------------------------------------------------------------

# The attribute of an exception raised by a layer's checks holding its _Where.
_WHERE = "_ftorch_nn_where"


class _Where:
    """The layer an error is about, its message, and the child names leading
    to it from the outermost layer that called it."""

    __slots__ = ("layer", "message", "names")

    def __init__(self, layer: Layer, message: str, names: list[str]):
        self.layer, self.message, self.names = layer, message, names


def layer_path(root: Layer, names: Sequence[str], layer: Layer) -> str:
    """``layer`` as reached from ``root`` through the child ``names``:
    ``Sequential.layers[2] (Linear)``, or ``repr(layer)`` when ``names`` is
    empty.

    >>> import ftorch.nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    >>> nn._layer.layer_path(model, ["layers.0"], model.layers[0])
    'Sequential.layers[0] (Linear)'
    """
    if not names:
        return repr(layer)
    parts = (part for name in names for part in name.split("."))
    path = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in parts)
    return f"{type(root).__name__}{path} ({type(layer).__name__})"


def layer_error(layer: Layer, message: str, kind: type[Exception] = ValueError, *,
                root: Layer | None = None, names: Sequence[str] = ()) -> Exception:
    """An exception ``kind("{layer!r}: {message}")`` about ``layer`` (raise
    it). A container calling ``layer`` (through ``bind``, or in its default
    ``init``) puts its path in front as the error passes (``Sequential.layers[2]
    (Linear): ...``), so the message says where in the model it arose."""
    names = list(names)
    error = kind(f"{layer_path(root or layer, names, layer)}: {message}")
    setattr(error, _WHERE, _Where(layer, message, names))
    return error


def _locate(error: BaseException, parent: Layer, name: str) -> None:
    """Put ``parent``'s child ``name`` in front of the path of ``error``, if
    it is a layer's error (``layer_error``)."""
    where = getattr(error, _WHERE, None)
    if where is not None:
        where.names.insert(0, name)
        error.args = (f"{layer_path(parent, where.names, where.layer)}: {where.message}",)



# ----------------------------------------------------------------------------
# Children: the fields holding layers, a pytree of them
# ----------------------------------------------------------------------------

#: A child's place in its parent: the field's name, then the indices (or dict
#: keys) into the tuple, list or dict the field holds: ``("layers", 0)``.
Path = tuple


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _is_layer_tree(value: Any) -> bool:
    """Whether ``value`` is a ``Layer``, or a non-empty tuple, list or dict
    of them (nested or not)."""
    if isinstance(value, Layer):
        return True
    if isinstance(value, (tuple, list)):
        items: Any = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return False
    return bool(value) and all(_is_layer_tree(v) for v in items)


def _walk(sub: Any, path: Path) -> Iterator[tuple[Path, Layer]]:
    """The layers of the pytree ``sub`` at ``path`` and below, in key order
    (dicts by sorted key, as ``ftorch.tree`` flattens them)."""
    if isinstance(sub, Layer):
        yield path, sub
    elif isinstance(sub, dict):
        for k in sorted(sub):
            yield from _walk(sub[k], (*path, k))
    else:
        for i, v in enumerate(sub):
            yield from _walk(v, (*path, i))


def _layout(layer: Layer) -> list[tuple[Path, Layer]]:
    """``layer``'s children with their paths, in the order that numbers their keys."""
    return [item for name, sub in layer.children().items() for item in _walk(sub, (name,))]


def _dotted(path: Path) -> str:
    """``mlx.nn``'s name of the child at ``path``: ``"layers.0"``."""
    return ".".join(map(str, path))


def _at(t: PyTree, path: Path) -> PyTree:
    """The entry of ``t`` (params or state) at ``path``, or ``{}`` where it has
    none: a child without parameters has no entry (as ``mlx.nn``'s Dropout)."""
    try:
        for part in path:
            t = t[part]
    except (KeyError, IndexError, TypeError):
        return {}
    return t


_MISSING = object()


def _gather(layer: Layer, value_at: Callable[[Path], PyTree], *, drop_empty: bool) -> dict:
    """The tree of ``layer``'s children (a dict by field, tuples as lists)
    with each child replaced by ``value_at(its path)``; with ``drop_empty``,
    a field holding one child whose value is ``{}`` has no entry."""
    def build(sub: Any, path: Path) -> PyTree:
        if isinstance(sub, Layer):
            return value_at(path)
        if isinstance(sub, dict):
            return {k: build(sub[k], (*path, k)) for k in sorted(sub)}
        return [build(v, (*path, i)) for i, v in enumerate(sub)]

    out = {}
    for name, sub in layer.children().items():
        value = build(sub, (name,))
        if not (drop_empty and isinstance(sub, Layer) and _is_empty(value)):
            out[name] = value
    return out


def _join(layer: Layer, made: dict[Path, tuple[Params, State]]) -> tuple[Params, State]:
    """``layer``'s ``(params, state)`` from its children's, by path: params
    under the children's places (none for a child field without any); the
    state ``{}`` when no child has state, else an entry for every child."""
    params = _gather(layer, lambda path: made[path][0] if path in made else {},
                     drop_empty=True)
    if not any(_has_leaves(state) for _, state in made.values()):
        return params, {}
    return params, _gather(layer, lambda path: made[path][1] if path in made else {},
                           drop_empty=False)


def sublayers(layer: Layer, **children: Layer) -> None:
    """Set fields of ``layer`` (declared ``sublayer()``) to the children it
    makes from its hyperparameters, in its ``__post_init__``."""
    for name, child in children.items():
        object.__setattr__(layer, name, child)


def sublayer() -> Any:
    """A field for a child that a layer makes from its hyperparameters (see
    ``sublayers``): not an argument of the constructor, and left out of
    ``repr`` and comparisons, which the hyperparameters decide."""
    return dataclasses.field(init=False, repr=False, compare=False)


# ----------------------------------------------------------------------------
# Layer
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Layer:
    """Base class of ftorch.nn's layers: a frozen dataclass of hyperparameters.

    Subclasses (themselves ``@dataclasses.dataclass(frozen=True)``) define

    - ``apply(params, state, *inputs, key=None, train=False, **options) ->
      (output, state)``: a pure function. ``key`` (an ``ftorch.random`` key)
      is needed only by random layers (Dropout) when ``train`` is True;
    - ``init(key, *inputs) -> (params, state)``: the parameters (nested dicts
      of arrays, ``mlx.nn``'s names and layouts) and state (``{}`` when there
      is none) for inputs like ``inputs``, which may be arrays or
      ``ft.ShapeDtypeStruct``s: only their shapes and dtypes are read. A
      layer made of children (see ``children``) whose ``apply`` reaches them
      through ``bind`` may leave ``init`` out.

    Layers are hashable and compare by their hyperparameters; they are
    pytrees without leaves, so they can pass through ``ft.jit``,
    ``ft.vmap`` and ``ft.grad`` as ordinary (static) arguments.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> layer = nn.Linear(3, 2)
    >>> params, state = layer.init(random.key(0), mx.zeros((4, 3)))
    >>> y, state = layer.apply(params, state, mx.ones((4, 3)))
    >>> y.shape, state, layer(params, mx.ones(3)).shape
    ((4, 2), {}, (2,))
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A pytree node without children: the layer itself is the node's
        # static data (compared and hashed by its fields).
        tree.register_node(cls, lambda layer: ((), layer), lambda layer, _: layer)
        apply = vars(cls).get("apply")
        if inspect.isfunction(apply):
            cls._unchecked_apply = apply
            cls.apply = _explaining_failures(apply)

    # -- the interface --------------------------------------------------------

    def init(self, key: Key, *inputs: InputSpec, **options: Any) -> tuple[Params, State]:
        """Parameters and state for inputs like ``inputs`` (arrays or
        ``ft.ShapeDtypeStruct``s); ``key`` an ``ftorch.random`` key.

        By default, for a layer made of children: ``apply(..., *inputs,
        **options)`` runs once in evaluation mode on the inputs' shapes
        (``ft.eval_shape``: nothing is computed), then each child it called
        is initialised for the inputs of its first call, with the key
        ``ftorch.random.split(key, n)[i]``, ``i`` its index among the ``n``
        children. A child that is not called has no parameters; one called
        twice shares them.
        """
        if not self.children():
            raise NotImplementedError(f"{type(self).__name__} does not define init")
        return _init_from_apply(self, key, inputs, options)

    def apply(self, params: Params, state: State, *inputs: Any, key: Key | None = None,
              train: bool = False, **options: Any) -> tuple[Any, State]:
        """The output for ``inputs`` and the new state."""
        raise NotImplementedError(f"{type(self).__name__} does not define apply")

    # Each subclass's apply is wrapped to explain its failures (see
    # _explaining_failures); a container calls its children's unwrapped one.
    _unchecked_apply = apply

    def __call__(self, params: Params, *inputs: Any, key: Key | None = None,
                 train: bool = False, **options: Any) -> Any:
        """``apply`` with empty state, returning the output alone: the short
        form for layers without state (an error for those with state)."""
        try:
            out, state = self._unchecked_apply(params, {}, *inputs, key=key, train=train,
                                               **options)
        except Exception as error:  # only now: is it a layer with state, or whose mistake?
            if self.has_state:
                raise self._needs_state() from error
            _raise_clearer(self, error, params, {}, inputs)
            raise
        if not _is_empty(state) and _has_leaves(state):
            raise self._needs_state()
        return out

    def _needs_state(self) -> TypeError:
        return TypeError(
            f"{type(self).__name__} has state ({self._state_names()}): call "
            f"layer.apply(params, state, x, ...) -> (y, state); the short form "
            f"layer(params, x) is for layers without state")

    @property
    def has_state(self) -> bool:
        """Whether ``init`` returns a non-empty state (by default: whether a
        child has)."""
        return any(child.has_state for _, child in _layout(self))

    def _state_names(self) -> str:
        names = [_dotted(path) for path, child in _layout(self) if child.has_state]
        return ", ".join(names) if names else "e.g. running statistics"

    # -- children ----------------------------------------------------------------

    def children(self) -> dict[str, Any]:
        """The sub-layers, a pytree of layers by field: ``{name: value}`` for
        each field whose value is a ``Layer``, or a tuple, list or dict of
        them. Their order (the fields', then the tuples' and the dicts' sorted
        keys') numbers their keys. A subclass may override it (``Sequential``
        counts its ``layers`` even when there are none)."""
        out = {}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if _is_layer_tree(value):
                out[name] = value
        return out

    def bind(self, params: Params, state: State, *, key: Key | None = None,
             train: bool = False) -> Bound:
        """This layer's children with its ``params``, ``state``, ``key`` and
        mode, for ``apply``: ``run = self.bind(params, state, key=key,
        train=train)``, then ``run.body(x, **options)`` applies the child
        ``body`` (``run.layers[2](x)`` one in a tuple) with its parameters,
        its state and the key ``ftorch.random.split(key, n)[i]`` (as
        ``init``); ``run.state`` is the layer's new state."""
        if type(params) is _InitRecord:
            return _Recording(self, params, state, key, train)
        return Bound(self, params, state, key, train)

    def eval_shape(self, params: Params, state: State, *inputs: Any, **options: Any) -> Any:
        """The output's ``ft.ShapeDtypeStruct`` (a pytree of them) for
        ``inputs`` (arrays or ``ft.ShapeDtypeStruct``s), computing nothing.

        >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
        >>> layer = nn.Linear(3, 2)
        >>> params, state = layer.init(random.key(0), mx.zeros(3))
        >>> layer.eval_shape(params, state, mx.zeros((5, 3))).shape
        (5, 2)
        """
        def run(p, s, xs):
            return self.apply(p, s, *xs, **options)[0]

        return eval_shape(run, _abstract(params), _abstract(state), _abstract(inputs))


class Bound:
    """The children of one layer with that layer's params, state, key and
    mode (made by ``Layer.bind``): ``run.name`` is the child in the field
    ``name`` (``run.name[i]`` in a tuple or list, ``run.name[k]`` in a dict),
    which ``apply``s when called; ``run.state`` is the layer's new state.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm(3))
    >>> params, state = model.init(random.key(0), mx.zeros((4, 2)))
    >>> run = model.bind(params, state, train=True)
    >>> run.layers[1](run.layers[0](mx.ones((4, 2)))).shape
    (4, 3)
    >>> [sorted(s) for s in run.state["layers"]]
    [[], ['running_mean', 'running_var']]
    """

    __slots__ = ("_layer", "_params", "_state", "_stateful", "_key", "_train", "_keys",
                 "_states")

    def __init__(self, layer: Layer, params: Params, state: State, key: Key | None,
                 train: bool):
        self._layer, self._params, self._state = layer, params, state
        self._stateful = not _is_empty(state)
        self._key, self._train = key, train
        self._keys: tuple[dict[Path, int], Any] | None = None  # split once, on first use
        self._states: dict[Path, State] | None = None  # the children's new states

    def __getattr__(self, name: str) -> Any:
        """The child (or tuple, list or dict of children) in the field ``name``."""
        value = getattr(self._layer, name, _MISSING)
        if isinstance(value, Layer):
            return _Child(self, (name,), value)
        if isinstance(value, (tuple, list, dict)) and name in self._layer.children():
            return _Children(self, (name,), value)
        raise AttributeError(f"{type(self._layer).__name__} has no child {name!r}; its "
                             f"children are {list(self._layer.children())}")

    def _run(self, path: Path, child: Layer, inputs: tuple, options: dict,
             remat: bool = False) -> Any:
        """The output of the child at ``path`` for ``inputs``; its new state is
        kept for ``state``. (Inlined lookups: this runs for every child call.)"""
        params = self._params
        try:
            for part in path:
                params = params[part]
        except (KeyError, IndexError, TypeError):  # a child without parameters may have none
            params = {}
        state = _at(self._state, path) if self._stateful else {}
        key = None if self._key is None else self._child_key(path)
        try:
            if remat or _recorder.get() is not None:
                out, new = self._run_noted(path, child, params, state, inputs, key, options,
                                           remat)
            else:
                # Unchecked: the outermost layer's apply explains a failure,
                # against the whole model's params.
                out, new = child._unchecked_apply(params, state, *inputs, key=key,
                                                  train=self._train, **options)
        except Exception as error:
            _locate(error, self._layer, _dotted(path))
            raise
        if self._stateful or type(new) is not dict or new:  # not {}: the child has state
            if self._states is None:
                self._states = {}
            self._states[path] = new
        return out

    def _run_noted(self, path: Path, child: Layer, params: Params, state: State,
                   inputs: tuple, key: Key | None, options: dict, remat: bool) -> Any:
        """``_run``'s call of the child under ``ft.checkpoint`` (``remat``) or
        within ``nn.utils.summary``'s recording."""
        apply = _checkpointed(child._unchecked_apply) if remat else child._unchecked_apply
        rec = _recorder.get()
        if rec is None:
            return apply(params, state, *inputs, key=key, train=self._train, **options)
        return _recorded(rec, _dotted(path), child, apply, params, state, inputs, key=key,
                         train=self._train, **options)

    def _child_key(self, path: Path) -> Key:
        if self._keys is None:  # one split serves every child
            index = {p: i for i, (p, _) in enumerate(_layout(self._layer))}
            self._keys = index, random.split(self._key, len(index))
        index, keys = self._keys
        return keys[index[path]]

    @property
    def state(self) -> State:
        """The layer's new state: the children's new states (a child not
        called keeps its state), or ``{}`` when there is none."""
        if self._states is None and not self._stateful:
            return {}
        new = self._states or {}
        old = self._state if self._stateful else {}
        return _gather(self._layer, lambda path: new[path] if path in new else _at(old, path),
                       drop_empty=False)


def _bound(bound: Bound, path: Path, value: Any) -> Any:
    if isinstance(value, Layer):
        return _Child(bound, path, value)
    return _Children(bound, path, value)


class _Child:
    """A child of a ``Bound``: calling it applies the child."""

    __slots__ = ("_bound", "_path", "layer")

    def __init__(self, bound: Bound, path: Path, layer: Layer):
        self._bound, self._path, self.layer = bound, path, layer

    def __call__(self, *inputs: Any, **options: Any) -> Any:
        """The child's output for ``inputs`` (``options`` go to its ``apply``)."""
        return self._bound._run(self._path, self.layer, inputs, options, False)

    def checkpointed(self, *inputs: Any, **options: Any) -> Any:
        """As calling, with the child under ``ft.checkpoint``: reverse mode
        recomputes its intermediates instead of storing them."""
        return self._bound._run(self._path, self.layer, inputs, options, True)


class _Children:
    """A tuple, list or dict of children of a ``Bound``, indexed as it is."""

    __slots__ = ("_bound", "_path", "_value")

    def __init__(self, bound: Bound, path: Path, value: Any):
        self._bound, self._path, self._value = bound, path, value

    def __getitem__(self, index: Any) -> Any:
        value = self._value
        if not isinstance(value, dict):
            if not isinstance(index, int):
                raise TypeError(f"index the children one at a time with an int, not "
                                f"{type(index).__name__}")
            index = range(len(value))[index]  # -1: the last, as the key's path names it
        return _bound(self._bound, (*self._path, index), value[index])

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Iterator[Any]:
        """The children (of a tuple or list), or the keys (of a dict)."""
        if isinstance(self._value, dict):
            return iter(self._value)
        bound, path = self._bound, self._path
        return iter([_bound(bound, (*path, i), v) for i, v in enumerate(self._value)])


def _recorded(rec: tuple[list, str], name: str, child: Layer, apply: Callable,
              params: Params, state: State, inputs: tuple, **options: Any) -> Any:
    """``apply(params, state, *inputs, **options)``, appending a row for
    ``nn.utils.summary`` (rows in call order, a child's below it)."""
    records, prefix = rec
    row = [f"{prefix}{name}", child, _abstract(params), None]
    records.append(row)
    token = _recorder.set((records, f"{prefix}{name}."))
    try:
        out, new = apply(params, state, *inputs, **options)
    finally:
        _recorder.reset(token)
    row[3] = _abstract(out)
    return out, new


def _checkpointed(apply: Callable) -> Callable:
    """A layer's ``apply`` under ``ft.checkpoint``, the inputs' leaves that
    are not arrays (a ``"causal"`` mask) held static."""
    def wrapped(params: Params, state: State, *inputs: Any, key: Key | None = None,
                **options: Any) -> Any:
        arrays, rebuild = _array_leaves(inputs)

        def inner(params, state, arrays, key):
            return apply(params, state, *rebuild(arrays), key=key, **options)

        return checkpoint(inner)(params, state, arrays, key)

    return wrapped


# ----------------------------------------------------------------------------
# The default init: apply once on shapes, then each child's init
# ----------------------------------------------------------------------------

_KEY_SPEC = ShapeDtypeStruct((2,), mx.uint32)


class _InitRecord:
    """What the default ``init``'s pass over ``apply`` noted, by child path:
    the inputs (shapes) of each child's first call, or, for a child that is
    initialised the same way, its own record. It stands in for the params
    of the layer whose ``apply`` the pass runs."""

    __slots__ = ("layer", "children", "seen")

    def __init__(self, layer: Layer, seen: dict):
        self.layer, self.children = layer, {}
        # (child, input shapes, options) -> (note, output shapes), for the
        # whole pass: a stack of equal blocks is traced once, not per block.
        self.seen = seen

    def _refuse(self, *_: Any) -> Any:
        raise TypeError(
            f"{type(self.layer).__name__}.apply reads its params itself, so it cannot be "
            f"initialised from its children: reach them through self.bind(...), or define "
            f"{type(self.layer).__name__}.init")

    __getitem__ = get = keys = items = values = _refuse


def _initialises_from_apply(layer: Layer) -> bool:
    return type(layer).init is Layer.init


def _specs(t: PyTree) -> PyTree:
    """``t`` with its arrays (and traced values) replaced by their
    ``ShapeDtypeStruct``s, its other leaves (``"causal"``, ``None``) kept."""
    return tree.map(lambda x: spec_of(x) if hasattr(x, "shape") else x, t, is_leaf=_is_spec)


def _stand_in(t: PyTree) -> PyTree:
    """Zeros in place of the ``ShapeDtypeStruct``s of ``t``."""
    return tree.map(lambda s: fnp.zeros(s.shape, s.dtype) if _is_spec(s) else s, t,
                    is_leaf=_is_spec)


class _Recording(Bound):
    """The ``Bound`` of the default ``init``'s pass: a child called is noted
    with its inputs, and gives zeros shaped as its output."""

    __slots__ = ()

    def _run(self, path: Path, child: Layer, inputs: tuple, options: dict,
             remat: bool = False) -> Any:
        record = self._params
        try:
            specs = _specs(inputs)
            kind: Any = (child, specs, _specs(tuple(sorted(options.items()))))
            try:
                noted = record.seen.get(kind)
            except TypeError:  # a layer or inputs that cannot be hashed: traced each time
                kind, noted = None, None
            if noted is None:
                noted = self._note(child, specs, inputs, options)
                if kind is not None:
                    record.seen[kind] = noted
            note, out = noted
            record.children.setdefault(path, note)  # a child called twice: its first call
            return _stand_in(out)
        except Exception as error:
            _locate(error, self._layer, _dotted(path))
            raise

    def _note(self, child: Layer, specs: tuple, inputs: tuple, options: dict
              ) -> tuple[Any, PyTree]:
        """What to note of ``child`` called on ``inputs`` (``specs`` their
        shapes), and its output's shapes, found with stand-ins of its params."""
        if _initialises_from_apply(child):
            note: Any = _InitRecord(child, self._params.seen)
            out, _ = child._unchecked_apply(note, {}, *inputs, train=False, **options)
        else:
            note = specs[:_init_arity(type(child))]
            params, state = _stand_in(_init_spec(child, note))
            out, _ = child._unchecked_apply(params, state, *inputs, train=False, **options)
        return note, _specs(out)

    @property
    def state(self) -> State:
        return {}


def _init_from_apply(layer: Layer, key: Key, inputs: tuple, options: dict
                     ) -> tuple[Params, State]:
    """``layer.init`` by default: one abstract pass over ``apply`` notes each
    child's inputs, then each child is initialised with its key."""
    arrays, rebuild = _array_leaves(inputs)
    record = _InitRecord(layer, {})

    def trace(arrays: list) -> None:
        layer._unchecked_apply(record, {}, *rebuild(arrays), train=False, **options)

    eval_shape(trace, [spec_of(x) for x in arrays])
    return _init_children(layer, key, record)


def _init_children(layer: Layer, key: Key, record: _InitRecord) -> tuple[Params, State]:
    """The ``(params, state)`` of ``layer`` from its children's ``init`` on
    the inputs ``record`` noted, child ``i`` of ``n`` with the key
    ``ftorch.random.split(key, n)[i]``."""
    layout = _layout(layer)
    keys = random.split(key, len(layout)) if layout else None
    made = {}
    for i, (path, child) in enumerate(layout):
        found = record.children.get(path)
        if found is None:
            continue
        try:
            made[path] = (_init_children(child, keys[i], found)
                          if isinstance(found, _InitRecord) else child.init(keys[i], *found))
        except Exception as error:
            _locate(error, layer, _dotted(path))
            raise
    return _join(layer, made)


# ----------------------------------------------------------------------------
# Explaining a failed apply: params, state and inputs against init's
# ----------------------------------------------------------------------------


def _explaining_failures(apply: Callable) -> Callable:
    """``apply``, which, when it raises, looks for the user's mistake: params
    or state not those ``init`` gives (another layer's, missing or extra
    names, other shapes), or inputs ``init`` refuses, and raises that
    instead. Nothing is checked unless ``apply`` fails: the ``try`` costs
    nothing on the way through, eager or traced."""

    @functools.wraps(apply)
    def explained(self: Layer, params: Params, state: State, *inputs: Any,
                  **options: Any) -> Any:
        try:
            return apply(self, params, state, *inputs, **options)
        except Exception as error:
            _raise_clearer(self, error, params, state, inputs)
            raise

    return explained


def _raise_clearer(layer: Layer, error: Exception, params: Params, state: State,
                   inputs: tuple) -> None:
    """Raise a clearer error than ``error`` (raised by ``layer.apply``) if
    there is one; else return, for the caller to raise ``error``."""
    clearer = _explanation(layer, error, params, state, inputs)
    if clearer is not None:
        raise clearer from error


def _explanation(layer: Layer, error: Exception, params: Params, state: State,
                 inputs: tuple) -> Exception | None:
    """A clearer error than ``error`` (raised by ``layer.apply``), or None."""
    try:
        expected_params, expected_state = _init_spec(layer, inputs)
    except Exception as refused:  # init refuses the inputs, or cannot be traced
        if (getattr(refused, _WHERE, None) is not None and getattr(error, _WHERE, None) is None
                and not isinstance(refused, MemoryError)):
            return refused
        return None
    try:
        return (_mismatch(layer, "params", params, expected_params)
                or (_mismatch(layer, "state", state, expected_state)
                    if _has_leaves(state) else None))
    except Exception:  # a tree that cannot be read: MLX's error is all there is
        return None


def _init_spec(layer: Layer, inputs: tuple) -> tuple[PyTree, PyTree]:
    """The ``ft.ShapeDtypeStruct``s of ``layer.init(key, *inputs)`` (the
    inputs ``init`` takes), computing nothing."""
    inputs = tree.map(lambda x: spec_of(x) if hasattr(x, "shape") else x,
                      inputs[:_init_arity(type(layer))], is_leaf=_is_spec)
    return eval_shape(lambda key: layer.init(key, *inputs), _KEY_SPEC)


@functools.cache
def _init_arity(cls: type) -> int:
    """How many inputs ``cls.init`` takes after the key."""
    after_key = list(inspect.signature(cls.init).parameters.values())[2:]
    if any(p.kind is p.VAR_POSITIONAL for p in after_key):
        return sys.maxsize
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in after_key)


def _owner(layer: Layer, name: str) -> tuple[list[str], Layer, str]:
    """The child names leading from ``layer`` to the sub-layer whose entry
    the dotted ``name`` is, that sub-layer, and ``name`` within it."""
    names: list[str] = []
    while True:
        for path, child in _layout(layer):
            child_name = _dotted(path)
            if name.startswith(child_name + "."):
                names.append(child_name)
                layer, name = child, name[len(child_name) + 1:]
                break
        else:
            return names, layer, name


def _mismatch(layer: Layer, what: str, given: PyTree, expected: PyTree) -> Exception | None:
    """An error naming the first sub-layer whose entries of ``given`` (the
    ``what``, params or state) lack, add to or change the shapes of
    ``expected``'s, or None if they agree."""
    if (what == "params" and isinstance(given, tuple) and len(given) == 2
            and _mismatch(layer, what, given[0], expected) is None):
        return layer_error(layer, "params is init's (params, state) pair: unpack it, params, "
                           "state = layer.init(key, x)")
    have, want = dict(named_leaves(given)), dict(named_leaves(expected))
    issues: dict[tuple[str, ...], list[str]] = {}
    owners: dict[tuple[str, ...], Layer] = {}

    def note(name: str, issue: Callable[[str, Layer], str]) -> None:
        names, owner, rest = _owner(layer, name)
        owners[tuple(names)] = owner
        issues.setdefault(tuple(names), []).append(issue(rest, owner))

    for name, spec in want.items():
        if name not in have:
            note(name, lambda n, _: f"{n!r} is missing")
            continue
        shape = getattr(have[name], "shape", None)
        if shape is None:
            kind = type(have[name]).__name__
            note(name, lambda n, _, kind=kind: f"{n!r} is a {kind}, not an array")
        elif tuple(shape) != tuple(spec.shape):
            note(name, lambda n, _, s=tuple(shape), e=tuple(spec.shape):
                 f"{n!r} has shape {s}, not {e}")
    for name in have.keys() - want.keys():
        note(name, lambda n, _: f"{n!r} is not one of its {what}")
    if not issues:
        return None
    names, listed = next(iter(issues.items()))
    message = (f"the {what} {'do' if what == 'params' else 'does'} not fit this layer: "
               f"{'; '.join(listed)}. Pass the {what} that its init returns (another layer's "
               f"or model's do not fit)")
    return layer_error(owners[names], message, root=layer, names=names)
