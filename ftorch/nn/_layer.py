"""``Layer``: an immutable description of a computation whose parameters and
state live outside it, as plain pytrees (nested dicts and lists of arrays).

A layer holds hyperparameters only. ``params, state = layer.init(key, x)``
makes its parameters (nested dicts with ``mlx.nn``'s names and layouts) and
its state (``{}`` unless it has some, as BatchNorm's running statistics);
``y, state = layer.apply(params, state, x, *, key=None, train=False)`` is a
pure function of them, so ``ft.grad``, ``ft.jit`` and ``ft.vmap`` apply to it
as they are. ``layer(params, x)`` is the short form for layers without state.

A layer made of other layers lists them in ``children()`` (by default: the
fields holding a ``Layer`` or a tuple of them) and reaches them through
``init_child`` and ``bind``, which derive each child's key from the one key
the caller passes (``ftorch.random.split(key, n)[index of the child]``), look
its parameters and state up by name, and gather the children's new states.

>>> import dataclasses, ftorch as ft, ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> @dataclasses.dataclass(frozen=True)
... class Residual(nn.Layer):
...     body: nn.Layer
...     def init(self, key, x):
...         return self.join({"body": self.init_child("body", key, x)})
...     def apply(self, params, state, x, *, key=None, train=False):
...         run = self.bind(params, state, key=key, train=train)
...         return x + run("body", x), run.state
>>> block = Residual(nn.Linear(2, 2))
>>> params, state = block.init(random.key(0), mx.ones((3, 2)))
>>> sorted(nn.utils.flatten_names(params)), block(params, mx.ones((3, 2))).shape
(['body.bias', 'body.weight'], (3, 2))
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import mlx.core as mx
import optree

import ftorch.numpy as fnp
from ftorch import random, tree
from ftorch.core import ShapeDtypeStruct, aval_of
from ftorch.memory import check_fits
from ftorch.transforms import eval_shape
from ftorch.transforms.remat import checkpoint

__all__ = ["Layer", "Array", "PyTree", "Params", "State", "Key", "InputSpec", "spec_of"]

#: An ``mx.array``, or a traced value standing for one under a transform.
Array = Any
#: Nested dicts, lists and tuples of arrays.
PyTree = Any
#: A layer's parameters: nested dicts (and lists, for ``Sequential``) of arrays.
Params = PyTree
#: A layer's state: ``{}``, or nested dicts of arrays (BatchNorm's running statistics).
State = PyTree
#: A key of ``ftorch.random`` (``ftorch.random.key(seed)``).
Key = Array
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


def named_leaves(t: PyTree) -> list[tuple[str, Any]]:
    """``(dotted name, leaf)`` pairs of ``t``, ``mlx.utils.tree_flatten``'s
    names (``"layers.0.weight"``)."""
    paths, leaves, _ = optree.tree_flatten_with_path(t, _is_spec, none_is_leaf=False,
                                                    namespace=tree.NAMESPACE)
    return [(".".join(map(str, p)), x) for p, x in zip(paths, leaves)]


# ----------------------------------------------------------------------------
# Dotted names: one home for reading and building trees by mlx.nn's names
# ----------------------------------------------------------------------------


def _parts(name: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in name.split(".")]


def get_path(t: PyTree, name: str) -> Any:
    """The subtree of ``t`` at the dotted ``name`` (``"layers.0"``: integer
    parts index lists)."""
    for part in _parts(name):
        t = t[part]
    return t


def _lookup(t: PyTree, name: str) -> PyTree:
    """``get_path(t, name)``, or ``{}`` where ``t`` has no such entry."""
    try:
        return get_path(t, name)
    except (KeyError, IndexError, TypeError):
        return {}


def nest(flat: Mapping[str, Any]) -> dict:
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
            out[head] = nest(sub)
    if out and all(k.isdigit() for k in out) and len({int(k) for k in out}) == len(out):
        items: list = []
        for i, k in sorted((int(k), k) for k in out):
            items.extend({} for _ in range(i - len(items)))
            items.append(out[k])
        return items  # type: ignore[return-value]
    return out


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
    it). A container calling ``layer`` through ``bind`` or ``init_child``
    puts its path in front as the error passes (``Sequential.layers[2]
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


def check_param_fits(layer: Layer, name: str, shape: Sequence[int]) -> None:
    """A ``MemoryError`` naming ``layer`` and its parameter ``name`` if a
    float32 array of ``shape`` would not fit in the device's memory (MLX
    would crash allocating it); ``init`` calls it before making each one."""
    try:
        check_fits(shape, mx.float32, f"the parameter {name!r}")
    except MemoryError as error:
        raise layer_error(layer, str(error), MemoryError) from None


# ----------------------------------------------------------------------------
# Layer
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Layer:
    """Base class of ftorch.nn's layers: a frozen dataclass of hyperparameters.

    Subclasses (themselves ``@dataclasses.dataclass(frozen=True)``) define

    - ``init(key, *inputs) -> (params, state)``: the parameters (nested dicts
      of arrays, ``mlx.nn``'s names and layouts) and state (``{}`` when there
      is none) for inputs like ``inputs``, which may be arrays or
      ``ft.ShapeDtypeStruct``s: only their shapes and dtypes are read;
    - ``apply(params, state, *inputs, key=None, train=False, **options) ->
      (output, state)``: a pure function. ``key`` (an ``ftorch.random`` key)
      is needed only by random layers (Dropout) when ``train`` is True.

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

    def init(self, key: Key, *inputs: InputSpec) -> tuple[Params, State]:
        """Parameters and state for inputs like ``inputs`` (arrays or
        ``ft.ShapeDtypeStruct``s); ``key`` an ``ftorch.random`` key."""
        raise NotImplementedError(f"{type(self).__name__} does not define init")

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
        if self._cached("has_state", lambda: self.has_state):
            raise TypeError(
                f"{type(self).__name__} has state ({self._state_names()}): call "
                f"layer.apply(params, state, x, ...) -> (y, state); the short form "
                f"layer(params, x) is for layers without state")
        out, _ = self.apply(params, {}, *inputs, key=key, train=train, **options)
        return out

    @property
    def has_state(self) -> bool:
        """Whether ``init`` returns a non-empty state (by default: whether a
        child has)."""
        return any(child.has_state for child in self._children().values())

    def _state_names(self) -> str:
        names = [name for name, child in self._children().items() if child.has_state]
        return ", ".join(names) if names else "e.g. running statistics"

    # -- children ----------------------------------------------------------------

    def children(self) -> dict[str, Layer]:
        """Sub-layers by their dotted name in ``params`` (``"layers.0"``), in
        the order that numbers their keys. By default the fields holding a
        ``Layer``, or a tuple of them (named ``field.i``)."""
        out: dict[str, Layer] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Layer):
                out[f.name] = value
            elif isinstance(value, tuple) and any(isinstance(v, Layer) for v in value):
                out.update((f"{f.name}.{i}", v) for i, v in enumerate(value))
        return out

    def _cached(self, name: str, compute: Any) -> Any:
        """``compute()``, computed once per layer (layers are immutable; the
        cache is outside the fields, so equality and hashing ignore it)."""
        cache = vars(self).setdefault("_ftorch_cache", {}) if hasattr(self, "__dict__") else {}
        if name not in cache:
            cache[name] = compute()
        return cache[name]

    def _children(self) -> dict[str, Layer]:
        return self._cached("children", self.children)

    def _child(self, name: str) -> tuple[int, Layer]:
        """The index and layer of the child ``name``."""
        index = self._cached("index", lambda: {n: i for i, n in enumerate(self._children())})
        if name not in index:
            raise KeyError(f"{type(self).__name__} has no child {name!r}; its children are "
                           f"{list(index)}")
        return index[name], self._children()[name]

    def init_child(self, name: str, key: Key, *inputs: InputSpec) -> tuple[Params, State]:
        """``init`` of the child ``name`` with the key
        ``ftorch.random.split(key, n)[i]``, ``i`` its index among the ``n``
        ``children()``."""
        index, child = self._child(name)
        try:
            return child.init(child_key(key, index, len(self._children())), *inputs)
        except Exception as error:
            _locate(error, self, name)
            raise

    def join(self, by_name: Mapping[str, tuple[Params, State]]) -> tuple[Params, State]:
        """The ``(params, state)`` of a layer made of the children's
        ``(params, state)`` by dotted name: nested as the names say (a list
        for ``layers.0``, ``layers.1``, ...). The state is ``{}`` when no
        child has state, else an entry for every child (``{}`` for those
        without), as ``bind``'s ``state`` gives it back."""
        params = nest({name: p for name, (p, _) in by_name.items()})
        if not any(_has_leaves(s) for _, s in by_name.values()):
            return params, {}
        return params, nest({name: by_name[name][1] if name in by_name else {}
                             for name in self._children()})

    def bind(self, params: Params, state: State, *, key: Key | None = None,
             train: bool = False) -> Bound:
        """A caller of this layer's children: ``run = self.bind(params, state,
        key=key, train=train)``, then ``y = run("name", x, **options)`` applies
        the child with its parameters and state and the key
        ``split(key, n)[i]`` (as ``init_child``); ``run.state`` is the
        layer's new state."""
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
    mode (made by ``Layer.bind``): call it with a child's name and inputs.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm(3))
    >>> params, state = model.init(random.key(0), mx.zeros((4, 2)))
    >>> run = model.bind(params, state, train=True)
    >>> run("layers.1", run("layers.0", mx.ones((4, 2)))).shape
    (4, 3)
    >>> [sorted(s) for s in run.state["layers"]]
    [[], ['running_mean', 'running_var']]
    """

    __slots__ = ("layer", "params", "old_state", "key", "train", "_states", "_keys",
                 "_children", "_stateful")

    def __init__(self, layer: Layer, params: Params, state: State, key: Key | None,
                 train: bool):
        self.layer, self.params, self.old_state = layer, params, state
        self.key, self.train = key, train
        self._states: dict[str, State] = {}
        self._keys: Any = None
        self._children = layer._children()
        self._stateful = _has_leaves(state)

    def _key(self, index: int) -> Key | None:
        if self.key is None:
            return None
        if self._keys is None:  # one split serves every child
            self._keys = random.split(self.key, len(self._children))
        return self._keys[index]

    def __call__(self, name: str, *inputs: Any, **options: Any) -> Any:
        """The child ``name``'s output for ``inputs`` (its new state is kept
        for ``state``)."""
        return self._call(name, inputs, options, False)

    def checkpointed(self, name: str, *inputs: Any, **options: Any) -> Any:
        """As calling, with the child under ``ft.checkpoint``: reverse mode
        recomputes its intermediates instead of storing them."""
        return self._call(name, inputs, options, True)

    def _call(self, name: str, inputs: tuple, options: dict, remat: bool) -> Any:
        index, child = self.layer._child(name)
        # A child without parameters may have no entry (mlx.nn's trees have
        # none for a Dropout), so a missing name reads as {}.
        params = _lookup(self.params, name)
        state = _lookup(self.old_state, name) if self._stateful else {}
        key, train = self._key(index), self.train

        def run(params, state, inputs, key):
            # Unchecked: the outermost layer's apply explains a failure,
            # against the whole model's params.
            return child._unchecked_apply(params, state, *inputs, key=key, train=train,
                                          **options)

        if remat:
            run = _checkpointed(run)
        rec = _recorder.get()
        try:
            if rec is None:
                out, new = run(params, state, inputs, key)
            else:  # nn.utils.summary: a row per call, in call order
                records, prefix = rec
                row = [f"{prefix}{name}", child, _abstract(params), None]
                records.append(row)
                token = _recorder.set((records, f"{prefix}{name}."))
                try:
                    out, new = run(params, state, inputs, key)
                finally:
                    _recorder.reset(token)
                row[3] = _abstract(out)
        except Exception as error:
            _locate(error, self.layer, name)
            raise
        self._states[name] = new
        return out

    @property
    def state(self) -> State:
        """The layer's new state: the children's new states (a child not
        called keeps its state), or ``{}`` when there is none."""
        if not self._stateful and not any(_has_leaves(s) for s in self._states.values()):
            return {}
        return nest({name: self._states[name] if name in self._states else _lookup(
            self.old_state, name) for name in self._children})


def _checkpointed(run: Any) -> Any:
    """``run(params, state, inputs, key)`` under ``ft.checkpoint``, the
    inputs' leaves that are not arrays (a ``"causal"`` mask) held static."""
    def wrapped(params: Params, state: State, inputs: tuple, key: Key | None) -> Any:
        leaves, treedef = tree.flatten(inputs)
        dynamic = [i for i, x in enumerate(leaves) if hasattr(x, "shape")]

        def inner(params, state, arrays, key):
            merged = list(leaves)
            for i, x in zip(dynamic, arrays):
                merged[i] = x
            return run(params, state, tree.unflatten(treedef, merged), key)

        return checkpoint(inner)(params, state, [leaves[i] for i in dynamic], key)

    return wrapped


# ----------------------------------------------------------------------------
# Explaining a failed apply: params, state and inputs against init's
# ----------------------------------------------------------------------------

_KEY_SPEC = ShapeDtypeStruct((2,), mx.uint32)


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
            clearer = _explanation(self, error, params, state, inputs)
            if clearer is None:
                raise
            raise clearer from error

    return explained


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
        for child_name, child in layer._children().items():
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


# ----------------------------------------------------------------------------
# Helpers shared by the layers
# ----------------------------------------------------------------------------


def child_key(key: Key, index: int, n: int) -> Key:
    """The key of child ``index`` of ``n``: ``ftorch.random.split(key, n)[index]``
    (MLX splits in one call, about twenty times faster than a ``fold_in``
    per child outside ``jit``)."""
    return random.split(key, n)[index]


def check_key(key: Any, where: str) -> None:
    """A clear error when ``key`` is not an ``ftorch.random`` key."""
    if isinstance(key, int) and not isinstance(key, bool):
        raise TypeError(f"{where}: key must be a key array, ftorch.random.key({key}), "
                        f"not the int {key}")
    spec = spec_of(key) if hasattr(key, "shape") else None
    if spec is None or tuple(spec.shape) != (2,) or spec.dtype != mx.uint32:
        got = f"{type(key).__name__}" if spec is None else f"shape {tuple(spec.shape)} " \
            f"{spec.dtype}"
        raise TypeError(f"{where}: key must be an ftorch.random key (ftorch.random.key(seed): "
                        f"uint32, shape (2,)), got {got}")


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of ``x`` (an array, a traced value or an
    ``ft.ShapeDtypeStruct``), read directly: layers check their inputs with
    it on every ``apply``."""
    shape = getattr(x, "shape", None)
    return tuple(spec_of(x).shape) if shape is None else shape


def check_features(layer: Layer, x: Any, expected: int, what: str = "the input",
                   axis: int = -1) -> None:
    """A clear error when ``x``'s ``axis`` is not ``expected`` long."""
    try:
        if x.shape[axis] == expected:  # the common case, first: apply calls this each time
            return
    except (AttributeError, IndexError):
        pass
    shape = shape_of(x)
    if len(shape) <= (axis if axis >= 0 else -axis - 1) or shape[axis] != expected:
        raise layer_error(layer, f"{what} must have {expected} features on axis {axis}, got "
                          f"shape {tuple(shape)}")


def checked_param(layer: Layer, params: Params, name: str, shape: tuple[int, ...]) -> Array:
    """``params[name]``, after a clear error unless its shape is ``shape``:
    for a weight that sets the output's size, where another layer's would
    pass silently (one tuple comparison)."""
    value = params[name]
    if shape_of(value) != shape:
        raise layer_error(layer, f"the params' {name!r} has shape {tuple(shape_of(value))}, not "
                          f"{shape}: pass the params that its init returns")
    return value


def check_ndim(layer: Layer, x: Any, allowed: tuple[int, ...], layout: str) -> None:
    """A clear error when ``x`` has a number of axes outside ``allowed``."""
    shape = shape_of(x)
    if len(shape) not in allowed:
        raise layer_error(layer, f"the input must be {layout} ({' or '.join(map(str, allowed))} "
                          f"axes), got shape {tuple(shape)}")


def ntuple(value: Any, n: int, name: str, owner: str) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ``n`` ints) as a tuple of ``n`` ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise TypeError(f"{owner}: {name} must be an int or a tuple of {n} ints, got {value!r}")


def check_positive(owner: str, **values: Any) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")


def with_features(x: InputSpec, n: int) -> ShapeDtypeStruct:
    """The spec of ``x`` with its last axis ``n`` long (a child's input in
    ``init``)."""
    spec = spec_of(x)
    return ShapeDtypeStruct(tuple(spec.shape[:-1]) + (n,), spec.dtype)


_SPATIAL = {1: "L", 2: "HW", 3: "DHW"}


def check_spatial(layer: Layer, x: InputSpec, nd: int, channels: int | None) -> None:
    """A clear error unless ``x`` is ``(N, *spatial, C)`` or ``(*spatial, C)``
    with ``nd`` spatial axes (and ``channels`` channels); an input that looks
    channels-first (PyTorch's ``NCHW``) is called so."""
    shape = shape_of(x)
    layout = f"N{_SPATIAL[nd]}C"
    if len(shape) - nd not in (1, 2):
        raise layer_error(layer, f"the input must be {layout} (or one example without N, "
                          f"{layout[1:]}), got shape {tuple(shape)}")
    if channels is None or shape[-1] == channels:
        return
    message = (f"the input's last axis must be its {channels} channels ({layout}), got shape "
               f"{tuple(shape)}")
    first = len(shape) - nd - 1  # where channels-first inputs have them
    if shape[first] == channels:
        channels_first = ("N" if first else "") + "C" + _SPATIAL[nd]
        message += (f": it looks channels-first ({channels_first}), but ftorch's convolutions "
                    f"and pooling are channels-last, as MLX's; move the channels last with "
                    f"fnp.moveaxis(x, {first}, -1)")
    raise layer_error(layer, message)


def batched(fn: Callable[[Array], Array], x: Array, nd: int) -> Array:
    """``fn`` (which needs ``(N, *spatial, C)``, ``nd`` spatial axes) on ``x``
    with or without its batch axis, so a layer applies to one example (as
    under ``ft.vmap``) as to a batch."""
    if x.ndim == nd + 1:
        return fnp.squeeze(fn(fnp.expand_dims(x, 0)), 0)
    return fn(x)
