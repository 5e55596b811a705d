"""Everything ftorch adds to ``mlx.core.array``, in one module.

``install()``, called once when ftorch is imported, replaces indexing,
functional updates and casts of ``mx.array``: JAX's spellings work on plain
arrays as on tracers (``x.at[i].set(v)``, ``x[mask]``, ``x.astype(float)``),
and an mx.array indexed by a tracer (an embedding table in a vmapped
function) defers to ftorch. MLX's own methods run first; ftorch's only where
MLX refuses. It also adds JAX's array methods that ``mx.array`` lacks.

From the first transform on (``new_main`` calls ``install_operators``),
``mx.array``'s binary operators return ``NotImplemented`` for tracers, so
that ``W @ x`` with a tracer ``x`` runs the tracer's operator. They stay
installed: swapping type slots at every transform call costs tens of
microseconds, the deferring check a fraction of one per operator.

The primitives' MLX implementations call MLX's own methods directly
(``mlx_getitem``, ``mlx_setitem``, ``mlx_at``).
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
from ftorch.dtypes import to_mlx_dtype

mlx_getitem = mx.array.__getitem__
mlx_setitem = mx.array.__setitem__
_mlx_astype = mx.array.astype
_mlx_at = mx.array.__dict__["at"]


def mlx_at(x: mx.array) -> Any:
    """MLX's own ``x.at`` (its ``ArrayAt``), for the primitives' MLX impls.

    >>> import mlx.core as mx
    >>> mlx_at(mx.zeros(3))[mx.array([0, 0])].add(1.0).tolist()
    [2.0, 0.0, 0.0]
    """
    return _mlx_at.__get__(x)


def _check_int_index(x: mx.array, idx: int) -> None:
    """MLX reads past the end for an out-of-range ``x[i]`` (and crashes for
    some negative ``i``); tuples of ints it checks itself."""
    if x.ndim and not -x.shape[0] <= idx < x.shape[0]:
        raise IndexError(f"index {idx} is out of bounds for axis 0 with size {x.shape[0]}")


def _array_getitem(self: mx.array, idx: Any) -> Any:
    if type(idx) is int:
        _check_int_index(self, idx)
    try:
        return mlx_getitem(self, idx)
    except (TypeError, ValueError):  # boolean masks, tracers, lists of arrays
        return array_api().getitem(self, idx)


def _array_setitem(self: mx.array, idx: Any, value: Any) -> None:
    parts = idx if type(idx) is tuple else (idx,)
    if isinstance(value, Tracer) or any(isinstance(e, Tracer) for e in parts):
        raise TypeError(
            "x[idx] = value updates an mx.array in place, which cannot take traced values: "
            "write x = x.at[idx].set(value) (a new array, differentiable in x and value)")
    if type(idx) is int:
        _check_int_index(self, idx)
    mlx_setitem(self, idx, value)


def _array_astype(self: mx.array, dtype: Any, stream: Any = None) -> mx.array:
    if not isinstance(dtype, mx.Dtype):
        dtype = to_mlx_dtype(dtype, "astype: dtype")
    return _mlx_astype(self, dtype) if stream is None else _mlx_astype(self, dtype, stream)


_array_getitem.__doc__ = mlx_getitem.__doc__
_array_astype.__doc__ = _mlx_astype.__doc__
_installed = False


def install() -> None:
    """Replace and add the methods of ``mx.array`` this module's docstring
    lists. Importing ftorch calls it once; later calls do nothing.

    >>> import ftorch, mlx.core as mx
    >>> mx.array([[1, 2], [3, 4]]).ravel().tolist()
    [1, 2, 3, 4]
    """
    global _installed
    if _installed:
        return
    _installed = True
    mx.array.__getitem__ = _array_getitem
    mx.array.__setitem__ = _array_setitem
    mx.array.astype = _array_astype
    mx.array.at = property(
        lambda self: array_api().at(self),
        doc="Functional updates: JAX's x.at[idx].set/get/add/.../min/max(v) and MLX's "
            "add/subtract/multiply/divide/minimum/maximum, as ftorch.numpy.at(x)[idx].")
    # JAX's array methods that mx.array lacks, so JAX code runs on plain arrays.
    for name in ARRAY_METHODS:
        if not hasattr(mx.array, name):
            setattr(mx.array, name, array_method(name))


_ARRAY_DUNDERS = [
    *(f"__{d}__" for d in BINARY_OPS), *(f"__r{d}__" for d in BINARY_OPS),
    *(f"__i{d}__" for d in BINARY_OPS),  # a += t falls back to a = a + t
    *(f"__{d}__" for d in COMPARISONS),
]
_saved_dunders: dict[str, Any] = {}


def _deferring(original: Callable) -> Callable:
    def dunder(self, other):
        if isinstance(other, Tracer):
            return NotImplemented
        return original(self, other)

    return dunder


def install_operators() -> None:
    """Make ``mx.array``'s binary operators defer to tracers (once)."""
    if _saved_dunders:
        return
    for name in _ARRAY_DUNDERS:
        original = mx.array.__dict__.get(name)
        if original is not None:
            _saved_dunders[name] = original
            setattr(mx.array, name, _deferring(original))
