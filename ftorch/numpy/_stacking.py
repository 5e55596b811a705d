"""Joining and rearranging arrays as in jax.numpy: the ``*stack`` family,
``block``, ``append``, ``concat`` and ``unstack``, the ``atleast_*``
promotions, the named flips and rotations (``fliplr``, ``flipud``,
``rot90``), the array-API spellings of axis permutations
(``permute_dims``, ``matrix_transpose``, ``rollaxis``), ``resize``,
``broadcast_shapes`` and ``copy``.

All of them are composites of ``concatenate``, ``reshape``, ``transpose``
and ``flip``, so they are differentiable and batchable as those are.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.vstack([mx.zeros(3), mx.ones(3)]).shape
(2, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch.core import Tracer
from ftorch.dtypes import DTypeLike
from ftorch.numpy import _creation, _elementwise, _shape
from ftorch.primitives.creation import static_shape

__all__ = [
    "append", "atleast_1d", "atleast_2d", "atleast_3d", "block", "column_stack", "concat",
    "dstack", "hstack", "vstack", "unstack", "fliplr", "flipud", "rot90", "rollaxis",
    "permute_dims", "matrix_transpose", "resize", "broadcast_shapes", "copy",
]


# ----------------------------------------------------------------------------
# atleast_*
# ----------------------------------------------------------------------------


def _at_least(arys: tuple, promote: Any) -> Any:
    """``promote`` applied to each array: one array back for one argument,
    a list for several (as jax.numpy)."""
    out = [promote(_creation.asarray(a)) for a in arys]
    return out[0] if len(out) == 1 else out


def _as_1d(x: Any) -> Any:
    return _shape.reshape(x, (1,)) if x.ndim == 0 else x


def _as_2d(x: Any) -> Any:
    return _shape.reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape)) if x.ndim < 2 else x


def _as_3d(x: Any) -> Any:
    if x.ndim == 0:
        return _shape.reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return _shape.reshape(x, (1, x.shape[0], 1))
    if x.ndim == 2:
        return _shape.reshape(x, (*x.shape, 1))
    return x


def atleast_1d(*arys: Any) -> Any:
    """Each argument as an array of at least one dimension (a scalar becomes
    shape ``(1,)``); one array for one argument, else a list.

    >>> import ftorch.numpy as fnp
    >>> fnp.atleast_1d(3.0).shape
    (1,)
    """
    return _at_least(arys, _as_1d)


def atleast_2d(*arys: Any) -> Any:
    """Each argument as an array of at least two dimensions (a 1-D ``(n,)``
    becomes ``(1, n)``); one array for one argument, else a list.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.atleast_2d(mx.zeros(3)).shape
    (1, 3)
    """
    return _at_least(arys, _as_2d)


def atleast_3d(*arys: Any) -> Any:
    """Each argument as an array of at least three dimensions, as
    ``numpy.atleast_3d``: ``(n,)`` becomes ``(1, n, 1)`` and ``(m, n)``
    becomes ``(m, n, 1)``; one array for one argument, else a list.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [a.shape for a in fnp.atleast_3d(mx.zeros(3), mx.zeros((2, 3)))]
    [(1, 3, 1), (2, 3, 1)]
    """
    return _at_least(arys, _as_3d)


# ----------------------------------------------------------------------------
# Joining
# ----------------------------------------------------------------------------


def _sequence(tup: Any, fname: str) -> list:
    """The arrays of ``tup``: a sequence of arrays, or an array's slices along
    its first axis (jax.numpy accepts both)."""
    if isinstance(tup, (mx.array, Tracer, np.ndarray)):
        x = _creation.asarray(tup)
        if x.ndim == 0:
            raise ValueError(f"{fname}: needs a sequence of arrays, got a 0-d array")
        return unstack(x)
    try:
        arrays = [_creation.asarray(a) for a in tup]
    except TypeError:
        raise TypeError(f"{fname}: needs a sequence of arrays, got {tup!r}") from None
    if not arrays:
        raise ValueError(f"{fname}: needs at least one array")
    return arrays


def _joined(arrays: list, axis: int, dtype: Any, fname: str) -> Any:
    out = _shape.concatenate(arrays, axis)
    if dtype is not None:
        out = _elementwise.astype(out, _creation._dtype_or(dtype, None, fname))
    return out


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """``concatenate`` under the array API's name: join ``arrays`` along an
    existing ``axis`` (flattened first when None).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.concat([mx.zeros((1, 2)), mx.ones((2, 2))]).shape
    (3, 2)
    """
    return _shape.concatenate(arrays, axis)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` joined to the end of ``arr`` along ``axis``; both are
    flattened first when ``axis`` is None.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.append(mx.array([1, 2]), mx.array([[3], [4]])).tolist()
    [1, 2, 3, 4]
    """
    if axis is None:
        return _shape.concatenate([_shape.ravel(arr), _shape.ravel(values)], 0)
    return _shape.concatenate([arr, values], axis)


def vstack(tup: Any, dtype: DTypeLike | None = None) -> Any:
    """The arrays (made at least 2-D) joined along their first axis, as
    ``numpy.vstack``; cast to ``dtype`` if given.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.vstack([mx.array([1, 2]), mx.array([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    return _joined([_as_2d(a) for a in _sequence(tup, "vstack")], 0, dtype, "vstack")


def hstack(tup: Any, dtype: DTypeLike | None = None) -> Any:
    """The arrays joined along their second axis (the first for 1-D arrays),
    as ``numpy.hstack``; cast to ``dtype`` if given.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.hstack([mx.array([1, 2]), mx.array([3])]).tolist()
    [1, 2, 3]
    """
    arrays = [_as_1d(a) for a in _sequence(tup, "hstack")]
    return _joined(arrays, 0 if arrays[0].ndim == 1 else 1, dtype, "hstack")


def dstack(tup: Any, dtype: DTypeLike | None = None) -> Any:
    """The arrays (made at least 3-D, as ``atleast_3d``) joined along their
    third axis, as ``numpy.dstack``; cast to ``dtype`` if given.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.dstack([mx.zeros((2, 3)), mx.ones((2, 3))]).shape
    (2, 3, 2)
    """
    return _joined([_as_3d(a) for a in _sequence(tup, "dstack")], 2, dtype, "dstack")


def column_stack(tup: Any) -> Any:
    """1-D arrays as the columns of a 2-D array (arrays of 2 or more
    dimensions joined along their second axis), as ``numpy.column_stack``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.column_stack([mx.array([1, 2]), mx.array([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    arrays = [_shape.reshape(a, (-1, 1)) if a.ndim < 2 else a
              for a in _sequence(tup, "column_stack")]
    return _shape.concatenate(arrays, 1)


def _block_depth(arrays: Any, index: tuple) -> int:
    """The nesting depth of ``block``'s lists, checked to be the same for
    every leaf."""
    if isinstance(arrays, tuple):
        raise TypeError(f"block: arrays{''.join(f'[{i}]' for i in index)} is a tuple; "
                        "only lists nest blocks")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError(f"block: arrays{''.join(f'[{i}]' for i in index)} is an empty list")
    depths = {_block_depth(a, index + (i,)) for i, a in enumerate(arrays)}
    if len(depths) > 1:
        raise ValueError(f"block: the lists in arrays{''.join(f'[{i}]' for i in index)} "
                         f"are nested to different depths {sorted(depths)}")
    return depths.pop() + 1


def _block_join(arrays: Any, depth: int, ndim: int) -> Any:
    if not isinstance(arrays, list):
        x = _creation.asarray(arrays)
        return _shape.reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))
    # The innermost lists join along the last axis, each outer level one axis before.
    parts = [_block_join(a, depth - 1, ndim) for a in arrays]
    return _shape.concatenate(parts, -depth)


def _max_ndim(arrays: Any) -> int:
    if isinstance(arrays, list):
        return max(_max_ndim(a) for a in arrays)
    return _creation.asarray(arrays).ndim


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks, as ``numpy.block``:
    the innermost lists are joined along the last axis, the lists around
    them along the axis before, and so on; every block first gets leading
    length-1 axes up to the result's ndim.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.block([[mx.eye(2), mx.zeros((2, 1))], [mx.ones((1, 3))]]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    depth = _block_depth(arrays, ())
    if depth == 0:
        return copy(arrays)
    return _block_join(arrays, depth, max(depth, _max_ndim(arrays)))


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple of arrays without that
    axis (the inverse of ``stack``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [r.tolist() for r in fnp.unstack(mx.array([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    x = _creation.asarray(x)
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension, got a 0-d array")
    ax = _shape._axis(axis, x.ndim, "unstack")
    n = x.shape[ax]
    if n == 0:
        return ()
    pieces = _shape.split(x, n, ax)
    return tuple(_shape.squeeze(p, ax) for p in pieces)


# ----------------------------------------------------------------------------
# Flips, rotations and axis permutations
# ----------------------------------------------------------------------------


def _check_min_ndim(x: Any, ndim: int, fname: str, what: str) -> None:
    if x.ndim < ndim:
        raise ValueError(f"{fname}: {what} must have at least {ndim} dimension"
                         f"{'s' if ndim > 1 else ''}, got shape {tuple(x.shape)}")


def fliplr(m: Any) -> Any:
    """``m`` reversed along its second axis (left to right).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fliplr(mx.array([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    m = _creation.asarray(m)
    _check_min_ndim(m, 2, "fliplr", "m")
    return _shape.flip(m, 1)


def flipud(m: Any) -> Any:
    """``m`` reversed along its first axis (up to down).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.flipud(mx.array([[1, 2], [3, 4]])).tolist()
    [[3, 4], [1, 2]]
    """
    m = _creation.asarray(m)
    _check_min_ndim(m, 1, "flipud", "m")
    return _shape.flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from
    the first axis towards the second (counterclockwise for a matrix), as
    ``numpy.rot90``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.rot90(mx.array([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    m = _creation.asarray(m)
    _check_min_ndim(m, 2, "rot90", "m")
    k = _shape._index(k, "rot90", "k") % 4
    plane = _shape._int_tuple(axes, "rot90", "axes")
    if len(plane) != 2:
        raise ValueError(f"rot90: axes must be two axes, got {axes!r}")
    a0, a1 = (_shape._axis(a, m.ndim, "rot90", "axes") for a in plane)
    if a0 == a1:
        raise ValueError(f"rot90: axes must be two different axes, got {axes!r}")
    if k == 0:
        return m
    if k == 2:
        return _shape.flip(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = a1, a0
    if k == 1:
        return _shape.transpose(_shape.flip(m, a1), perm)
    return _shape.flip(_shape.transpose(m, perm), a1)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``a`` with ``axis`` moved to lie before position ``start``, as
    ``numpy.rollaxis`` (``moveaxis`` is the clearer spelling).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.rollaxis(mx.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = _creation.asarray(a)
    ax = _shape._axis(axis, a.ndim, "rollaxis")
    start = _shape._index(start, "rollaxis", "start")
    # start may also be ndim (after the last axis).
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start {start} is out of range for an array of ndim "
                         f"{a.ndim} (it may be from {-a.ndim} to {a.ndim})")
    if start < 0:
        start += a.ndim
    if ax < start:
        start -= 1
    return a if ax == start else _shape.moveaxis(a, ax, start)


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    """``transpose`` under the array API's name, with ``axes`` required.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.permute_dims(mx.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return _shape.transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """The matrices over the last two axes of ``x`` transposed.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.matrix_transpose(mx.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    x = _creation.asarray(x)
    _check_min_ndim(x, 2, "matrix_transpose", "x")
    return _shape.swapaxes(x, -1, -2)


# ----------------------------------------------------------------------------
# resize, broadcast_shapes, copy
# ----------------------------------------------------------------------------


def resize(a: Any, new_shape: int | Sequence[int]) -> Any:
    """An array of ``new_shape`` filled with the flattened ``a``, repeated as
    often as needed, as ``numpy.resize`` (zeros when ``a`` is empty).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.resize(mx.array([1, 2, 3]), (2, 4)).tolist()
    [[1, 2, 3, 1], [2, 3, 1, 2]]
    """
    a = _creation.asarray(a)
    shape = static_shape(new_shape, "resize", "new_shape")
    size = math.prod(shape)
    flat = _shape.ravel(a)
    if a.size == 0 or size == 0:
        return mx.zeros(shape, a.dtype)
    flat = _shape.tile(flat, -(-size // a.size))
    return _shape.reshape(flat[:size], shape)


def broadcast_shapes(*shapes: int | Sequence[int]) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to, by NumPy's rules
    (an int counts as a 1-D shape).

    >>> import ftorch.numpy as fnp
    >>> fnp.broadcast_shapes((2, 1), (3,), 1)
    (2, 3)
    """
    parsed = [static_shape(s, "broadcast_shapes", f"shape {i}") for i, s in enumerate(shapes)]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*parsed))
    except ValueError:
        raise ValueError(
            f"broadcast_shapes: shapes {', '.join(map(str, parsed))} cannot be broadcast "
            "together") from None


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of ``a`` as an array. Arrays are immutable, so this is ``a``
    itself as an array (a new ``mx.array`` for a concrete one); ``order`` is
    accepted for NumPy's signature and changes nothing.

    >>> import ftorch.numpy as fnp
    >>> fnp.copy([1, 2]).tolist()
    [1, 2]
    """
    if order not in (None, "K", "A", "C", "F"):
        raise ValueError(f"copy: order must be one of 'K', 'A', 'C', 'F', got {order!r}")
    a = _creation.asarray(a)
    return mx.array(a) if isinstance(a, mx.array) else a
