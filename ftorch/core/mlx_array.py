"""Everything ftorch adds to ``mlx.core.array``, in one module.

Plain MLX code pays for almost none of it: while no transform runs, the one
thing MLX defines on ``mx.array`` that ftorch replaces is ``x.at``.

``install()``, called once when ftorch is imported:

- adds JAX's array methods that ``mx.array`` lacks (``ADDED_METHODS``:
  ``ravel``, ``clip``, ``take``, ``dot``, ``repeat``, ``conjugate``,
  ``trace``), each the ftorch.numpy function of its name;
- replaces ``x.at`` (``REPLACED``) with ftorch's ``ArrayAt``, so that JAX's
  ``x.at[idx].set(v)``, ``.get()``, ``.min(v)`` and ``.max(v)`` work on
  plain arrays as on traced ones. MLX's own update methods (``add``,
  ``subtract``, ``multiply``, ``divide``, ``minimum``, ``maximum``), called
  outside transforms without keywords, run MLX's own ``x.at[idx]`` (its
  results, its cost: out-of-range index entries are not checked), plus
  about 0.6 us for ftorch's property and index objects (building
  ``x.at[idx].add(v)`` for a small array: 1.45 us with MLX's own ``at``,
  2.1 us with ftorch's); what MLX refuses (boolean masks, NumPy index
  arrays, lists as values), JAX's keywords (``mode=``, ...), JAX's names and
  every call inside a transform go to ``fnp.at(x)[idx]``.

While a transform runs (``new_main`` calls ``hook()`` when the outermost
transform starts and ``unhook()`` when it ends), plain arrays and tracers
mix: ``hook()`` swaps in

- the binary operators, their in-place forms and the comparisons, which
  return ``NotImplemented`` for a traced operand so that the tracer's
  reflected operator runs (``W @ x`` with ``W`` an mx.array and ``x``
  traced); MLX's raise instead;
- ``x[idx]``, which checks a Python int index (MLX reads past the end), runs
  MLX's indexing and falls back to ``fnp.getitem`` for what MLX refuses:
  traced indices (``table[ids]`` under vmap) and boolean masks;
- ``x[idx] = v``, which refuses a traced value, saying to write
  ``x.at[idx].set(v)``.

``unhook()`` puts MLX's own objects back. Swapping costs about 25 us, and
about 30 us more in the calls that follow (CPython's attribute cache and
specialized bytecode for ``mx.array`` start over): 50-65 us per outermost
transform call (eager ``per_example`` +5%), where leaving the hooks in place
would cost plain MLX code about 0.3 us per operator. On Python 3.13 and
later, CPython stops caching the attributes of a class modified 1000 times;
a swap modifies ``mx.array`` about 60 times (nanobind looks each attribute up
before setting it), so after about 15 outermost transform calls its
attribute lookups go uncached for the rest of the process: plain ``a + b``
then costs about 4% more, ``a.shape`` 20 ns more.

The primitives' MLX implementations call MLX's own indexing
(``mlx_getitem``, ``mlx_setitem``, ``mlx_at``) whether or not a transform
runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch.core.tracer import (
    ARRAY_METHODS,
    BINARY_OPS,
    COMPARISONS,
    Tracer,
    array_api,
    array_method,
)

# MLX's own objects, taken before anything is hooked.
_MLX_OWN_AT = mx.array.__dict__["at"]
mlx_getitem = mx.array.__dict__["__getitem__"]
mlx_setitem = mx.array.__dict__["__setitem__"]


def mlx_at(x: mx.array) -> Any:
    """MLX's own ``x.at`` (its ``ArrayAt``), for the primitives' MLX impls.

    >>> import mlx.core as mx
    >>> mlx_at(mx.zeros(3))[mx.array([0, 0])].add(1.0).tolist()
    [2.0, 0.0, 0.0]
    """
    return _MLX_OWN_AT.__get__(x)


# ----------------------------------------------------------------------------
# Added at import: names MLX does not have
# ----------------------------------------------------------------------------

#: The methods ``install`` added to ``mx.array`` (JAX's, which MLX lacks).
ADDED_METHODS: tuple[str, ...] = ()
#: The names of ``mx.array`` that ``install`` replaces (MLX's own ``at`` is
#: kept for ``mlx_at``).
REPLACED = ("at",)

# Whether a transform runs (hook() to unhook()): then ftorch's x.at is fnp.at.
_hooked = False


def _mlx_update(name: str) -> Callable:
    """``x.at[idx].<name>(v)``, one of MLX's own update methods: MLX's for plain
    values outside transforms, ``fnp.at``'s otherwise."""
    mlx_at_of, mlx_method = _MLX_OWN_AT.fget, getattr(mx.ArrayAt, name)

    def update(self: IndexedAt, values: Any, *args: Any, **kwargs: Any) -> Any:
        if not (_hooked or args or kwargs):
            try:
                return mlx_method(mlx_at_of(self.x)[self.idx], values)
            except (TypeError, ValueError, SystemError):
                pass  # what MLX refuses (SystemError: a boolean mask) ftorch may take
        return getattr(array_api().at(self.x)[self.idx], name)(values, *args, **kwargs)

    update.__name__ = update.__qualname__ = name
    update.__doc__ = (f"``x`` with ``{name}`` applied at ``idx``: MLX's own ``x.at[idx].{name}`` "
                      f"outside transforms, else ``fnp.at(x)[idx].{name}`` (see ``fnp.at``).")
    return update


def _fnp_update(name: str) -> Callable:
    """``x.at[idx].<name>(...)``, one of JAX's update methods: ``fnp.at``'s."""

    def update(self: IndexedAt, *args: Any, **kwargs: Any) -> Any:
        return getattr(array_api().at(self.x)[self.idx], name)(*args, **kwargs)

    update.__name__ = update.__qualname__ = name
    update.__doc__ = f"``fnp.at(x)[idx].{name}`` (see ``fnp.at``)."
    return update


class IndexedAt:
    """``x.at[idx]`` of an mx.array: call an update method on it."""

    __slots__ = ("x", "idx")

    def __init__(self, x: mx.array, idx: Any):
        self.x = x
        self.idx = idx

    def __repr__(self) -> str:
        return f"x.at[{self.idx!r}]"

    # MLX's names, run on MLX's own x.at[idx] where it can.
    add = _mlx_update("add")
    subtract = _mlx_update("subtract")
    multiply = _mlx_update("multiply")
    divide = _mlx_update("divide")
    minimum = _mlx_update("minimum")
    maximum = _mlx_update("maximum")
    # JAX's, which MLX lacks.
    set = _fnp_update("set")
    get = _fnp_update("get")
    min = _fnp_update("min")
    max = _fnp_update("max")


class ArrayAt:
    """``x.at`` of an mx.array (ftorch's): index it, then call one of JAX's
    update methods (``set``, ``get``, ``add``, ``subtract``, ``multiply``,
    ``divide``, ``min``, ``max``) or MLX's names ``minimum`` and ``maximum``.
    Each returns a new array, as ``fnp.at(x)[idx]`` does.

    >>> import ftorch, mlx.core as mx
    >>> x = mx.zeros(3)
    >>> x.at[1].set(5.0).tolist()
    [0.0, 5.0, 0.0]
    >>> x.at[mx.array([0, 0])].add(1.0).tolist()
    [2.0, 0.0, 0.0]
    """

    __slots__ = ("x",)

    def __init__(self, x: mx.array):
        self.x = x

    def __getitem__(self, idx: Any) -> IndexedAt:
        return IndexedAt(self.x, idx)

    def __repr__(self) -> str:
        return "x.at"


_installed = False


def install() -> None:
    """Add to ``mx.array`` the methods listed in this module's docstring,
    which MLX does not have, and make ``x.at`` ftorch's ``ArrayAt``.
    Importing ftorch calls it once; later calls do nothing.

    >>> import ftorch, mlx.core as mx
    >>> mx.array([[1, 2], [3, 4]]).ravel().tolist()
    [1, 2, 3, 4]
    """
    global _installed, ADDED_METHODS
    if _installed:
        return
    _installed = True
    ADDED_METHODS = tuple(n for n in ARRAY_METHODS if not hasattr(mx.array, n))
    for name in ADDED_METHODS:
        setattr(mx.array, name, array_method(name))
    mx.array.at = property(ArrayAt, doc=ArrayAt.__doc__)


# ----------------------------------------------------------------------------
# Swapped in while a transform runs: plain arrays meet tracers
# ----------------------------------------------------------------------------


def _deferring(original: Callable) -> Callable:
    def dunder(self, other):
        if isinstance(other, Tracer):
            return NotImplemented
        return original(self, other)

    dunder.__name__ = getattr(original, "__name__", "dunder")
    dunder.__doc__ = getattr(original, "__doc__", None)
    return dunder


def _check_int_index(x: mx.array, idx: int) -> None:
    """MLX reads past the end for an out-of-range ``x[i]`` (and crashes for
    some negative ``i``); tuples of ints it checks itself."""
    if x.ndim and not -x.shape[0] <= idx < x.shape[0]:
        raise IndexError(f"index {idx} is out of bounds for axis 0 with size {x.shape[0]}")


def _getitem(self: mx.array, idx: Any) -> Any:
    if type(idx) is int:
        _check_int_index(self, idx)
    try:
        return mlx_getitem(self, idx)
    except (TypeError, ValueError):  # traced indices, boolean masks, lists of arrays
        return array_api().getitem(self, idx)


def _setitem(self: mx.array, idx: Any, value: Any) -> None:
    parts = idx if type(idx) is tuple else (idx,)
    if isinstance(value, Tracer) or any(isinstance(e, Tracer) for e in parts):
        raise TypeError(
            "x[idx] = value updates an mx.array in place, which cannot take traced values: "
            "write x = x.at[idx].set(value) (a new array, differentiable in x and value)")
    if type(idx) is int:
        _check_int_index(self, idx)
    mlx_setitem(self, idx, value)


_getitem.__doc__ = mlx_getitem.__doc__

# The operators a tracer can be the right operand of (reflected operators
# only run with a plain left operand, which is never a tracer).
_OPERATORS = [
    *(f"__{d}__" for d in BINARY_OPS),
    *(f"__i{d}__" for d in BINARY_OPS),  # a += t falls back to a = a + t
    *(f"__{d}__" for d in COMPARISONS),
]
_HOOKS: dict[str, Any] = {
    **{name: _deferring(mx.array.__dict__[name]) for name in _OPERATORS
       if name in mx.array.__dict__},
    "__getitem__": _getitem,
    "__setitem__": _setitem,
}
#: The names of ``mx.array`` that ``hook`` swaps while a transform runs.
HOOKED = tuple(_HOOKS)
_MLX_OWN = {name: mx.array.__dict__[name] for name in HOOKED}


def hook() -> None:
    """Swap in what lets plain arrays meet tracers (the module docstring
    lists it). ``new_main`` calls it when the outermost transform starts."""
    global _hooked
    _hooked = True
    for name, value in _HOOKS.items():
        setattr(mx.array, name, value)


def unhook() -> None:
    """Put MLX's own operators and indexing back. ``new_main`` calls
    it when the outermost transform ends.

    >>> import mlx.core as mx
    >>> hook(); unhook()
    >>> mx.array.__dict__["__add__"] is _MLX_OWN["__add__"]
    True
    """
    global _hooked
    _hooked = False
    for name, value in _MLX_OWN.items():
        setattr(mx.array, name, value)
