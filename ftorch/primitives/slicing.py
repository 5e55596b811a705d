"""Structured slicing with traced start indices, as ``jax.lax``.

Two primitives, each one MLX call eagerly:

- ``dynamic_slice_p(x, *starts, sizes)``: ``mx.slice``, the window of shape
  ``sizes`` at ``starts``.
- ``dynamic_update_slice_p(x, update, *starts)``: ``mx.slice_update``, ``x``
  with that window replaced by ``update``.

Each start is its own 0-d int32 operand, so it may be traced (a loop
counter under ``jit``, a per-example offset under ``vmap``) while the shapes
stay static. MLX reads and writes out of bounds on an out-of-range start, so
the primitives take in-bounds starts only: the public functions first apply
JAX's rule with ftorch ops (a negative start counts once from the end, then
every start is clamped so that the window fits), which also keeps every
derivative and batched form of the primitives in bounds.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Primitive, Tracer, as_array, aval_of
from ftorch.primitives._rules import move_bdim, shape_of
from ftorch.primitives.creation import static_int
from ftorch.primitives.indexing import ARRAY

__all__ = [
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "select",
    "dynamic_slice_p", "dynamic_update_slice_p",
]

_ARRAYS = (mx.array, Tracer, np.ndarray)
# Start dtypes wider than int32 are clamped before the cast, the others after
# it (clamping an int8 start to a bound of 300 would overflow int8).
_WIDE = (mx.int64, mx.uint32, mx.uint64)


# ----------------------------------------------------------------------------
# The primitives
# ----------------------------------------------------------------------------


def _stacked(starts: Sequence[mx.array]) -> mx.array:
    return mx.stack(starts) if starts else mx.zeros((0,), mx.int32)


def _slice_impl(x, *starts, sizes):
    return mx.slice(x, _stacked(starts), tuple(range(len(starts))), sizes)


def _update_impl(x, update, *starts):
    return mx.slice_update(x, update, _stacked(starts), tuple(range(len(starts))))


dynamic_slice_p = Primitive("dynamic_slice", _slice_impl)
dynamic_update_slice_p = Primitive("dynamic_update_slice", _update_impl)


@dynamic_slice_p.def_jvp
def _slice_jvp(primals, tangents, sizes):
    x, *starts = primals
    out = dynamic_slice_p.bind(x, *starts, sizes=sizes)
    t = tangents[0]
    return out, None if t is None else dynamic_slice_p.bind(t, *starts, sizes=sizes)


@dynamic_slice_p.def_vjp
def _slice_vjp(ct, out, x, *starts, sizes, needed):
    # The cotangent lands in the window, zeros elsewhere; starts get none.
    ct_x = dynamic_update_slice_p.bind(lax.zeros_like(x), ct, *starts) if needed[0] else None
    return (ct_x, *(None,) * len(starts))


@dynamic_update_slice_p.def_jvp
def _update_jvp(primals, tangents):
    x, update, *starts = primals
    out = dynamic_update_slice_p.bind(x, update, *starts)
    tx, tu = tangents[:2]
    if tx is None and tu is None:
        return out, None
    tx = lax.zeros_like(out) if tx is None else tx
    tu = lax.zeros(shape_of(update), aval_of(out).dtype) if tu is None else tu
    return out, dynamic_update_slice_p.bind(tx, tu, *starts)


@dynamic_update_slice_p.def_vjp
def _update_vjp(ct, out, x, update, *starts, needed):
    # What the window overwrote gets no cotangent; the update gets the window's.
    ct_x = ct_u = None
    if needed[0]:
        zeros = lax.zeros(shape_of(update), aval_of(ct).dtype)
        ct_x = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if needed[1]:
        ct_u = dynamic_slice_p.bind(ct, *starts, sizes=tuple(shape_of(update)))
    return (ct_x, ct_u, *(None,) * len(starts))


def _windows(starts, dims, sizes, axis_size, batched_operand):
    """Index arrays addressing each example's own window: ``start[b] +
    arange(size)`` for each axis, shaped to broadcast to ``(B, *sizes)``,
    after ``arange(B)`` for an operand whose batch axis is first."""
    rank = len(sizes) + 1
    idx = [mx.arange(axis_size, dtype=mx.int32).reshape((axis_size,) + (1,) * (rank - 1))]
    for i, (s, d, n) in enumerate(zip(starts, dims, sizes)):
        s = lax.reshape(move_bdim(s, d, 0, axis_size), (axis_size,) + (1,) * (rank - 1))
        offsets = [1] * rank
        offsets[i + 1] = n
        idx.append(lax.add(s, mx.arange(n, dtype=mx.int32).reshape(offsets)))
    return tuple(idx) if batched_operand else tuple(idx[1:])


@dynamic_slice_p.def_batch
def _slice_batch(vals, dims, axis_size, sizes):
    (x, *starts), (dx, *dstarts) = vals, dims
    if all(d is None for d in dstarts):
        # One window for every example: take the whole batch axis too.
        starts.insert(dx, mx.array(0, mx.int32))
        return dynamic_slice_p.bind(x, *starts, sizes=sizes[:dx] + (axis_size,) + sizes[dx:]), dx
    # Each example has its own window: gather it (starts are in bounds).
    if dx is not None:
        x = move_bdim(x, dx, 0, axis_size)
    idx = _windows(starts, dstarts, sizes, axis_size, dx is not None)
    return lax.gather(x, *idx, spec=(ARRAY,) * len(idx)), 0


@dynamic_update_slice_p.def_batch
def _update_batch(vals, dims, axis_size):
    (x, update, *starts), (dx, du, *dstarts) = vals, dims
    x = move_bdim(x, dx, 0, axis_size)
    update = move_bdim(update, du, 0, axis_size)
    if all(d is None for d in dstarts):
        return dynamic_update_slice_p.bind(x, update, mx.array(0, mx.int32), *starts), 0
    # Each example writes its own window: a scatter (no index repeats).
    idx = _windows(starts, dstarts, shape_of(update)[1:], axis_size, True)
    return lax.scatter(x, update, *idx, spec=(ARRAY,) * len(idx)), 0


# ----------------------------------------------------------------------------
# Checking and clamping arguments
# ----------------------------------------------------------------------------


def _is_int_dtype(dtype: Any) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iu"
    return mx.issubdtype(dtype, mx.integer)


def _start_list(start_indices: Any, ndim: int, fname: str) -> list:
    """``start_indices`` (a sequence of scalars or a 1-d integer array) as a
    list of Python ints and 0-d integer arrays, one per axis."""
    if isinstance(start_indices, _ARRAYS):
        if start_indices.ndim != 1:
            raise ValueError(
                f"{fname}: start_indices must be a sequence of scalars or a 1-d array, got an "
                f"array of shape {tuple(start_indices.shape)}")
        if not _is_int_dtype(start_indices.dtype):
            raise TypeError(
                f"{fname}: start_indices must be integers, got dtype {start_indices.dtype}")
        if isinstance(start_indices, np.ndarray):
            items = [int(v) for v in start_indices]
        else:
            items = [start_indices[i] for i in range(start_indices.shape[0])]
    else:
        try:
            items = list(start_indices)
        except TypeError:
            raise TypeError(
                f"{fname}: start_indices must be a sequence of scalars or a 1-d array, got "
                f"{start_indices!r}") from None
    if len(items) != ndim:
        raise ValueError(
            f"{fname}: start_indices has {len(items)} entries but operand has ndim {ndim}; "
            "give one start index per axis")
    return [_start_scalar(v, f"{fname}: start_indices[{i}]") for i, v in enumerate(items)]


def _start_scalar(value: Any, what: str) -> Any:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    if isinstance(value, _ARRAYS):
        if value.ndim:
            raise ValueError(f"{what} must be a scalar, got an array of shape "
                             f"{tuple(value.shape)}")
        if not _is_int_dtype(value.dtype):
            raise TypeError(f"{what} must be an integer, got dtype {value.dtype}")
        return int(value) if isinstance(value, np.ndarray) else value
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r}") from None


def _negative_flags(allow_negative_indices: bool | Sequence[bool], ndim: int,
                    fname: str) -> list[bool]:
    if isinstance(allow_negative_indices, (bool, np.bool_)):
        return [bool(allow_negative_indices)] * ndim
    flags = [bool(f) for f in allow_negative_indices]
    if len(flags) != ndim:
        raise ValueError(f"{fname}: allow_negative_indices has {len(flags)} entries but "
                         f"operand has ndim {ndim}")
    return flags


def _clamped(start: Any, dim: int, size: int, wrap: bool) -> Any:
    """JAX's start: negative counts once from the end (when ``wrap``), then
    clamped to ``[0, dim - size]``; a 0-d int32 array (or tracer)."""
    if isinstance(start, int):  # static: computed here, no ops
        if wrap and start < 0:
            start += dim
        return mx.array(min(max(start, 0), dim - size), mx.int32)
    if start.dtype not in _WIDE:
        start = lax.astype(start, mx.int32)
    if wrap and not mx.issubdtype(start.dtype, mx.unsignedinteger):
        start = lax.where(lax.less(start, mx.array(0, start.dtype)),
                          lax.add(start, mx.array(dim, start.dtype)), start)
    start = lax.minimum(lax.maximum(start, mx.array(0, start.dtype)),
                        mx.array(dim - size, start.dtype))
    return lax.astype(start, mx.int32)


def _starts(shape: tuple[int, ...], start_indices: Any, sizes: Sequence[int],
            allow_negative_indices: bool | Sequence[bool], fname: str) -> list:
    starts = _start_list(start_indices, len(shape), fname)
    wrap = _negative_flags(allow_negative_indices, len(shape), fname)
    return [_clamped(s, d, n, w) for s, d, n, w in zip(starts, shape, sizes, wrap)]


def _sizes(slice_sizes: Any, fname: str) -> tuple[int, ...]:
    try:
        items = list(slice_sizes)
    except TypeError:
        raise TypeError(
            f"{fname}: slice_sizes must be a sequence of ints, got {slice_sizes!r}") from None
    return tuple(static_int(n, fname, f"slice_sizes[{i}]") for i, n in enumerate(items))


def _axis(axis: Any, ndim: int, fname: str) -> int:
    return check_axis(static_int(axis, fname, "axis"), ndim, fname,
                      of=f"an operand of ndim {ndim}")


# ----------------------------------------------------------------------------
# Public functions
# ----------------------------------------------------------------------------


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """The window of shape ``slice_sizes`` of ``operand`` starting at
    ``start_indices``, as ``jax.lax.dynamic_slice``.

    ``start_indices`` holds one scalar per axis (Python ints or 0-d integer
    arrays, which may be traced: the slice is not re-traced under ``jit``
    when they change) or is a 1-d integer array; ``slice_sizes`` are static
    ints. As in JAX, a negative start counts from the end of its axis (unless
    ``allow_negative_indices`` is False for that axis), and then every start
    is clamped so that the window lies inside ``operand``: asking for too
    much at the end moves the window back instead of shrinking it.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(12).reshape(3, 4)
    >>> lax.dynamic_slice(x, (1, 1), (2, 3)).tolist()
    [[5, 6, 7], [9, 10, 11]]
    >>> lax.dynamic_slice(x, (mx.array(2), -1), (2, 2)).tolist()
    [[6, 7], [10, 11]]
    """
    fname = "dynamic_slice"
    operand = as_array(operand, f"{fname}: operand")
    shape = tuple(operand.shape)
    sizes = _sizes(slice_sizes, fname)
    if len(sizes) != len(shape):
        raise ValueError(f"{fname}: slice_sizes has {len(sizes)} entries but operand has "
                         f"ndim {len(shape)}; give one size per axis")
    for i, (n, d) in enumerate(zip(sizes, shape)):
        if not 0 <= n <= d:
            raise ValueError(f"{fname}: slice_sizes[{i}] = {n} must lie in [0, {d}], the size "
                             f"of operand's axis {i} (shape {shape})")
    starts = _starts(shape, start_indices, sizes, allow_negative_indices, fname)
    if not shape:
        return operand
    return dynamic_slice_p.bind(operand, *starts, sizes=sizes)


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand`` with the window of ``update``'s shape at ``start_indices``
    replaced by ``update``, as ``jax.lax.dynamic_update_slice``.

    ``update`` has ``operand``'s ndim and dtype (a Python scalar takes
    ``operand``'s dtype) and no larger a size on any axis. Start indices are
    as for ``dynamic_slice``: negative ones count from the end, then each is
    clamped so that the whole update fits.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dynamic_update_slice(mx.zeros(6), mx.ones(3), (2,)).tolist()
    [0.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    >>> lax.dynamic_update_slice(mx.zeros(6), mx.ones(3), (mx.array(5),)).tolist()
    [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    """
    fname = "dynamic_update_slice"
    operand = as_array(operand, f"{fname}: operand")
    update = _update_arg(update, operand, fname)
    shape, ushape = tuple(operand.shape), tuple(update.shape)
    if len(ushape) != len(shape):
        raise ValueError(f"{fname}: update must have operand's ndim {len(shape)}, got an update "
                         f"of shape {ushape} for an operand of shape {shape}")
    for i, (n, d) in enumerate(zip(ushape, shape)):
        if n > d:
            raise ValueError(f"{fname}: update (shape {ushape}) is larger than operand "
                             f"(shape {shape}) on axis {i}")
    starts = _starts(shape, start_indices, ushape, allow_negative_indices, fname)
    if not shape:
        return update
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _update_arg(update: Any, operand: Any, fname: str) -> Any:
    if isinstance(update, (bool, int, float, complex)):  # weakly typed, as in JAX
        return mx.array(update, operand.dtype)
    update = as_array(update, f"{fname}: update")
    if update.dtype != operand.dtype:
        raise TypeError(f"{fname}: update must have operand's dtype {operand.dtype}, got "
                        f"{update.dtype}")
    return update


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """``dynamic_slice`` along one axis: ``operand[..., start:start + slice_size]``
    at ``axis``, the start (possibly traced) clamped as ``dynamic_slice`` does.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dynamic_slice_in_dim(mx.arange(5), 4, 3).tolist()
    [2, 3, 4]
    >>> lax.dynamic_slice_in_dim(mx.arange(12).reshape(3, 4), 1, 2, axis=1).tolist()
    [[1, 2], [5, 6], [9, 10]]
    """
    fname = "dynamic_slice_in_dim"
    operand = as_array(operand, f"{fname}: operand")
    axis = _axis(axis, operand.ndim, fname)
    starts: list = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = static_int(slice_size, fname, "slice_size")
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """The slice of ``operand`` at (possibly traced) ``index`` along ``axis``;
    the axis stays, of length 1, unless ``keepdims`` is False. The index is
    clamped into the axis.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(6).reshape(2, 3)
    >>> lax.dynamic_index_in_dim(x, 1, axis=1).tolist()
    [[1], [4]]
    >>> lax.dynamic_index_in_dim(x, mx.array(-1), keepdims=False).tolist()
    [3, 4, 5]
    """
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else lax.squeeze(out, (_axis(axis, out.ndim, "dynamic_index_in_dim"),))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``dynamic_update_slice`` along one axis: ``update`` written at
    ``start_index`` on ``axis`` (at 0 on the others), the start clamped so
    that it fits.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dynamic_update_slice_in_dim(mx.zeros((2, 4)), mx.ones((2, 2)), 3, axis=1).tolist()
    [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
    """
    fname = "dynamic_update_slice_in_dim"
    operand = as_array(operand, f"{fname}: operand")
    axis = _axis(axis, operand.ndim, fname)
    starts: list = [0] * operand.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with its slice at (possibly traced) ``index`` along ``axis``
    replaced by ``update``, which may lack that axis (``operand``'s ndim - 1).
    The index is clamped into the axis.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dynamic_update_index_in_dim(mx.zeros(4), 1.0, 10, axis=0).tolist()
    [0.0, 0.0, 0.0, 1.0]
    >>> lax.dynamic_update_index_in_dim(mx.zeros((2, 2)), mx.ones(2), 0, axis=1).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    fname = "dynamic_update_index_in_dim"
    operand = as_array(operand, f"{fname}: operand")
    axis = _axis(axis, operand.ndim, fname)
    update = _update_arg(update, operand, fname)
    if update.ndim == operand.ndim - 1:
        update = lax.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` holds, else ``on_false``, as ``jax.lax.select``.

    Stricter than ``ftorch.numpy.where``: nothing broadcasts but a scalar
    ``pred``. ``pred`` is boolean with the operands' shape (or a scalar), and
    ``on_true`` and ``on_false`` have one shape and one dtype (a Python scalar
    takes the other operand's dtype).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.select(mx.array([True, False]), mx.array([1.0, 2.0]), mx.array([3.0, 4.0])).tolist()
    [1.0, 4.0]
    """
    on_true, on_false = _cases(on_true, on_false)
    pred = as_array(pred, "select: pred")
    if pred.dtype != mx.bool_:
        raise TypeError(f"select: pred must be a boolean array, got dtype {pred.dtype}")
    if on_true.dtype != on_false.dtype:
        raise TypeError(f"select: on_true and on_false must have the same dtype, got "
                        f"{on_true.dtype} and {on_false.dtype}")
    shape = tuple(on_true.shape)
    if tuple(on_false.shape) != shape:
        raise ValueError(f"select: on_true and on_false must have the same shape, got {shape} "
                         f"and {tuple(on_false.shape)}")
    if pred.ndim and tuple(pred.shape) != shape:
        raise ValueError(f"select: pred must be a scalar or have the operands' shape {shape}, "
                         f"got shape {tuple(pred.shape)}")
    return lax.where(pred, on_true, on_false)


def _cases(on_true: Any, on_false: Any) -> tuple[Any, Any]:
    """Both operands as arrays; a Python scalar takes the other one's dtype."""
    scalar = (bool, int, float, complex)
    if isinstance(on_true, scalar) and not isinstance(on_false, scalar):
        on_false = as_array(on_false, "select: on_false")
        return mx.array(on_true, on_false.dtype), on_false
    if isinstance(on_false, scalar) and not isinstance(on_true, scalar):
        on_true = as_array(on_true, "select: on_true")
        return on_true, mx.array(on_false, on_true.dtype)
    return as_array(on_true, "select: on_true"), as_array(on_false, "select: on_false")
