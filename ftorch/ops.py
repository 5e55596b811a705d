"""Segment reductions, as ``jax.ops``: ``segment_sum``, ``segment_prod``,
``segment_max`` and ``segment_min`` reduce the rows of ``data`` that share a
segment id into one row per segment.

``data`` has shape ``segment_ids.shape + rest`` and the result
``(num_segments,) + rest``. Ids outside ``[0, num_segments)`` (negative ones
too) are dropped, as in JAX. An empty segment holds the reduction's
identity: 0 for a sum, 1 for a product, ``-inf`` / ``+inf`` for max / min
(the dtype's lowest / highest value for integers). ``num_segments`` is a
static int; without it, it is ``max(segment_ids) + 1``, read from the data,
which ``jit`` cannot do. ``indices_are_sorted``, ``unique_indices`` and
``bucket_size`` are accepted for JAX's signature; ``unique_indices=True``
also enables the derivative of ``segment_prod`` in ``data``, which is
otherwise refused as in JAX.

Derivatives: ``segment_sum`` is linear (its transpose gathers the
cotangent); ``segment_max`` / ``segment_min`` share each segment's
derivative equally among the rows tied for its extreme (as JAX does).

>>> import ftorch.ops as ops, mlx.core as mx
>>> ops.segment_sum(mx.array([1.0, 2.0, 3.0]), mx.array([0, 0, 2]), num_segments=3).tolist()
[3.0, 0.0, 3.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import is_floating
from ftorch.numpy import _creation, _indexing
from ftorch.numpy._sorting import _index_arg, _int_scalar_from_data

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]

_MODES = (None, "drop", "fill", "clip", "promise_in_bounds")


def _identity(op: str, dtype: mx.Dtype) -> Any:
    if op == "add":
        return 0
    if op == "multiply":
        return 1
    if dtype == mx.bool_:
        return op == "min"
    if is_floating(dtype):
        return -float("inf") if op == "max" else float("inf")
    info = mx.iinfo(dtype)
    return info.min if op == "max" else info.max


def _segment(op: str, fname: str, data: Any, segment_ids: Any, num_segments: Any,
             unique_indices: bool, mode: str | None) -> Any:
    if mode not in _MODES:
        raise ValueError(f"{fname}: mode must be one of {_MODES[1:]}, got {mode!r}")
    data = _creation.asarray(data)
    ids = _creation.asarray(segment_ids)
    if is_floating(ids.dtype) or ids.dtype in (mx.bool_, mx.complex64):
        raise TypeError(f"{fname}: segment_ids must be an integer array, got {ids.dtype}")
    lead = tuple(data.shape[:ids.ndim])
    if lead != tuple(ids.shape):
        raise ValueError(f"{fname}: segment_ids of shape {tuple(ids.shape)} must match the "
                         f"leading axes of data, of shape {tuple(data.shape)}")
    if num_segments is None:
        top = lax.max(lax.astype(ids, mx.int32), tuple(range(ids.ndim))) if ids.size else None
        n = 0 if top is None else _int_scalar_from_data(top, fname, "num_segments") + 1
        num_segments = max(n, 0)
    else:
        num_segments = _index_arg(num_segments, fname, "num_segments")
        if num_segments < 0:
            raise ValueError(f"{fname}: num_segments must not be negative, got {num_segments}")
    ids = lax.astype(ids, mx.int32)
    if mode == "clip":
        ids = lax.minimum(lax.maximum(ids, 0), max(num_segments - 1, 0))
        mode = "promise_in_bounds"
    elif mode != "promise_in_bounds":
        # Negative ids are dropped, not wrapped.
        ids = lax.where(lax.less(ids, 0), num_segments, ids)
        mode = "drop"
    rest = tuple(data.shape[ids.ndim:])
    init = lax.full((num_segments,) + rest, _identity(op, data.dtype), data.dtype)
    if num_segments == 0 or data.size == 0:
        return init
    update = _indexing.at(init)[ids]
    if op == "multiply":
        return update.multiply(data, unique_indices=unique_indices, mode=mode)
    return getattr(update, op)(data, mode=mode)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: str | None = None) -> Any:
    """The sum of the rows of ``data`` in each segment, as ``jax.ops.segment_sum``;
    empty segments are 0 (see the module docstring for the arguments).

    >>> import ftorch.ops as ops, mlx.core as mx
    >>> data = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> ops.segment_sum(data, mx.array([1, 0, 1])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    return _segment("add", "segment_sum", data, segment_ids, num_segments, unique_indices,
                    mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: str | None = None) -> Any:
    """The product of the rows of ``data`` in each segment, as
    ``jax.ops.segment_prod``; empty segments are 1. Differentiating in
    ``data`` needs ``unique_indices=True`` (as in JAX).

    >>> import ftorch.ops as ops, mlx.core as mx
    >>> ops.segment_prod(mx.array([2.0, 3.0, 4.0]), mx.array([0, 0, 2])).tolist()
    [6.0, 1.0, 4.0]
    """
    return _segment("multiply", "segment_prod", data, segment_ids, num_segments,
                    unique_indices, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: str | None = None) -> Any:
    """The maximum of the rows of ``data`` in each segment, as
    ``jax.ops.segment_max``; empty segments are ``-inf`` (the lowest value
    for integers). Ties share the derivative equally.

    >>> import ftorch.ops as ops, mlx.core as mx
    >>> ops.segment_max(mx.array([1.0, 5.0, 3.0]), mx.array([0, 0, 2]), 4).tolist()
    [5.0, -inf, 3.0, -inf]
    """
    return _segment("max", "segment_max", data, segment_ids, num_segments, unique_indices,
                    mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: str | None = None) -> Any:
    """The minimum of the rows of ``data`` in each segment, as
    ``jax.ops.segment_min``; empty segments are ``+inf`` (the highest value
    for integers). Ties share the derivative equally.

    >>> import ftorch.ops as ops, mlx.core as mx
    >>> ops.segment_min(mx.array([1.0, 5.0, 3.0]), mx.array([0, 0, 1])).tolist()
    [1.0, 3.0]
    """
    return _segment("min", "segment_min", data, segment_ids, num_segments, unique_indices,
                    mode)
