"""Everything ftorch adds to ``mlx.core.array``, in one module.

Plain MLX code pays for none of it (on Python 3.13 and later, almost none:
see below): while no transform runs, nothing that MLX defines on
``mx.array`` is replaced.

``install()``, called once when ftorch is imported, only adds names MLX
does not have:

- JAX's array methods that ``mx.array`` lacks (``ADDED_METHODS``: ``ravel``,
  ``clip``, ``take``, ``dot``, ``repeat``, ``conjugate``, ``trace``), each
  the ftorch.numpy function of its name.
- JAX's update methods that MLX's ``x.at[idx]`` (an ``mx.ArrayAt``) lacks
  (``ADDED_AT_METHODS``: ``set``, ``get``, ``min``, ``max``). MLX's
  ``ArrayAt`` keeps its array and index out of Python's reach, so these only
  raise a ``TypeError`` saying to write ``fnp.at(x)[idx].set(v)``. MLX's own
  ``add``, ``subtract``, ``multiply``, ``divide``, ``minimum`` and
  ``maximum`` are untouched.

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
  ``x.at[idx].set(v)``;
- ``x.at``, which is ``fnp.at(x)``: JAX's ``set``, ``get``, ``min`` and
  ``max`` beside MLX's names, on plain and traced values alike.

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
#: The methods ``install`` added to MLX's ``mx.ArrayAt``.
ADDED_AT_METHODS = ("set", "get", "min", "max")


def _use_fnp_at(name: str) -> Callable:
    def method(self, *args: Any, **kwargs: Any):
        raise TypeError(
            f"x.at[idx].{name}(...): outside ftorch's transforms, x.at of an mx.array is MLX's "
            "own, which has add, subtract, multiply, divide, minimum and maximum. For JAX's "
            f"{name}, write fnp.at(x)[idx].{name}(...) (import ftorch.numpy as fnp), which "
            "works on mx.array and traced values alike.")

    method.__name__ = name
    method.__doc__ = f"Not MLX's: write ``fnp.at(x)[idx].{name}(...)`` (added by ftorch)."
    return method


_installed = False


def install() -> None:
    """Add to ``mx.array`` and ``mx.ArrayAt`` the names listed in this
    module's docstring, which MLX does not have; replace nothing. Importing
    ftorch calls it once; later calls do nothing.

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
    for name in ADDED_AT_METHODS:
        if not hasattr(mx.ArrayAt, name):
            setattr(mx.ArrayAt, name, _use_fnp_at(name))


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
    "at": property(lambda self: array_api().at(self), doc=(
        "Functional updates: JAX's x.at[idx].set/get/add/.../min/max(v) and MLX's "
        "add/subtract/multiply/divide/minimum/maximum, as ftorch.numpy.at(x)[idx].")),
}
#: The names of ``mx.array`` that ``hook`` swaps while a transform runs.
HOOKED = tuple(_HOOKS)
_MLX_OWN = {name: mx.array.__dict__[name] for name in HOOKED}


def hook() -> None:
    """Swap in what lets plain arrays meet tracers (the module docstring
    lists it). ``new_main`` calls it when the outermost transform starts."""
    for name, value in _HOOKS.items():
        setattr(mx.array, name, value)


def unhook() -> None:
    """Put MLX's own operators, indexing and ``at`` back. ``new_main`` calls
    it when the outermost transform ends.

    >>> import mlx.core as mx
    >>> hook(); unhook()
    >>> mx.array.__dict__["__add__"] is _MLX_OWN["__add__"]
    True
    """
    for name, value in _MLX_OWN.items():
        setattr(mx.array, name, value)
