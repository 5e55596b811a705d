"""Sorting, searching, counting and order statistics as in jax.numpy:
``sort``, ``argsort``, ``lexsort``, ``partition``, ``argpartition``,
``searchsorted``, ``digitize``, ``bincount``, ``unique``, the quantiles
(``median``, ``quantile``, ``percentile`` and their ``nan`` versions) and
``histogram``, on the primitives of ``ftorch.primitives.sorting``.

Sorts are stable and put NaNs last (first when ``descending``); index
results are ``int32``. Sizes that depend on the data (``bincount`` without
``length``, ``unique`` without ``size``) are computed from the values
eagerly; under ``jit`` they raise ``ConcretizationError`` saying which
static argument to pass. Order statistics are differentiable: their
derivative flows through the sorting permutation to the selected entries.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.sort(mx.array([3.0, float("nan"), 1.0])).tolist()
[1.0, 3.0, nan]
>>> fnp.median(mx.array([3.0, 1.0, 2.0, 10.0])).item()
2.5
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Tracer, aval_of, is_floating
from ftorch.numpy import _creation, _indexing, _shape
from ftorch.primitives.creation import describe_value
from ftorch.primitives.reduction import kept_shape, normalize_axes, normalize_axis

__all__ = [
    "sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted", "digitize",
    "bincount", "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
    "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile",
    "histogram", "histogram_bin_edges",
]


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def _index_arg(value: Any, fname: str, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{fname}: {what} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be a static int, got "
                        f"{describe_value(value)}") from None


def _flat(x: Any) -> Any:
    return x if x.ndim == 1 else lax.reshape(x, (x.size,))


def _sort_axis(x: Any, axis: Any, fname: str) -> tuple[Any, int]:
    """``x`` and the axis to sort along (the flattened array for ``None``)."""
    if axis is None:
        return _flat(x), 0
    return x, normalize_axis(axis, x.ndim, fname)


def _reverse(x: Any, axis: int) -> Any:
    return lax.static_slice(x, (slice(None),) * axis + (slice(None, None, -1),))


def _iota(n: int) -> mx.array:
    return mx.arange(n, dtype=mx.int32)


def _int_scalar_from_data(value: Any, fname: str, arg: str) -> int:
    """A size read off the data (``max(ids) + 1``): a Python int eagerly;
    under a transform without values, its error with a hint to pass ``arg``."""
    try:
        return int(value.item()) if isinstance(value, mx.array) else int(value)
    except TypeError as e:
        e.args = (f"{fname}: the output size depends on the values of the input; pass "
                  f"{arg} (a static int) to use {fname} under jit or vmap. {e}",)
        raise


def _concrete_mask(mask: Any, fname: str, arg: str) -> np.ndarray:
    if isinstance(mask, Tracer):
        try:
            mask = mask._concrete()
        except TypeError as e:
            e.args = (f"{fname}: the output size depends on the values of the input; pass "
                      f"{arg} (a static int) to use {fname} under jit or vmap. {e}",)
            raise
    return np.array(mask)


def _nan_less(a: Any, b: Any) -> Any:
    """``a < b`` in sorting order: NaN is larger than every number."""
    less = lax.less(a, b)
    if is_floating(aval_of(a).dtype) or is_floating(aval_of(b).dtype):
        b_nan = lax.not_equal(b, b)
        less = lax.logical_or(less, lax.logical_and(b_nan, lax.equal(a, a)))
    return less


def _inexact(x: Any) -> Any:
    return x if is_floating(x.dtype) else lax.astype(x, mx.float32)


# ----------------------------------------------------------------------------
# sort, argsort, lexsort
# ----------------------------------------------------------------------------


def _check_sort_args(kind: Any, order: Any, fname: str) -> None:
    if order is not None:
        raise NotImplementedError(f"{fname}: order is not supported (arrays have no fields)")
    if kind not in (None, "stable", "mergesort", "quicksort", "heapsort"):
        raise ValueError(f"{fname}: unknown kind {kind!r}")


def sort(a: Any, axis: int | None = -1, *, kind: str | None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """``a`` sorted along ``axis`` (the flattened array when ``None``), as
    ``jax.numpy.sort``: NaNs last (first when ``descending``). The sort is
    always stable; ``kind`` is accepted and ignored. Its derivative moves
    each tangent entry with its value.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.sort(mx.array([[3, 1, 2], [0, 5, 4]]), axis=1).tolist()
    [[1, 2, 3], [0, 4, 5]]
    >>> fnp.sort(mx.array([3.0, 1.0, 2.0]), descending=True).tolist()
    [3.0, 2.0, 1.0]
    """
    _check_sort_args(kind, order, "sort")
    x, ax = _sort_axis(_creation.asarray(a), axis, "sort")
    out = lax.sort(x, ax)
    return _reverse(out, ax) if descending else out


def argsort(a: Any, axis: int | None = -1, *, kind: str | None = None, order: None = None,
            stable: bool = True, descending: bool = False) -> Any:
    """The indices (``int32``) that sort ``a`` along ``axis`` (of the
    flattened array when ``None``), as ``jax.numpy.argsort``. Always stable:
    equal entries keep their order, also when ``descending``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argsort(mx.array([2.0, 1.0, 2.0, 1.0])).tolist()
    [1, 3, 0, 2]
    >>> fnp.argsort(mx.array([2.0, 1.0, 2.0, 1.0]), descending=True).tolist()
    [0, 2, 1, 3]
    """
    _check_sort_args(kind, order, "argsort")
    x, ax = _sort_axis(_creation.asarray(a), axis, "argsort")
    return lax.argsort(x, ax, bool(descending))


def lexsort(keys: Any, axis: int = -1) -> Any:
    """The indices (``int32``) that sort by several ``keys`` (a sequence of
    same-shaped arrays, or the rows of one array), the last key first, as
    ``numpy.lexsort``; stable.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.lexsort((mx.array([1, 0, 1]), mx.array([0, 0, -1]))).tolist()
    [2, 1, 0]
    """
    if isinstance(keys, (list, tuple)):
        keys = [_creation.asarray(k) for k in keys]
    else:
        arr = _creation.asarray(keys)
        if arr.ndim == 0:
            raise ValueError("lexsort: keys must have at least one dimension")
        keys = [arr[i] for i in range(arr.shape[0])]
    if not keys:
        raise TypeError("lexsort: needs at least one key")
    keys = _shape.broadcast_arrays(*keys)
    ndim = keys[0].ndim
    if ndim == 0:
        raise ValueError("lexsort: keys must have at least one dimension, got 0-d keys")
    ax = normalize_axis(axis, ndim, "lexsort")
    shape = tuple(keys[0].shape)
    iota = lax.broadcast_to(
        mx.arange(shape[ax], dtype=mx.int32).reshape(kept_shape(shape, tuple(
            i for i in range(ndim) if i != ax))), shape)
    out = lax.sort([lax.stop_gradient(k) for k in reversed(keys)] + [iota], ax,
                   num_keys=len(keys))
    return out[-1]


# ----------------------------------------------------------------------------
# partition, argpartition
# ----------------------------------------------------------------------------


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """Indices (``int32``) that partition ``a`` along ``axis`` around its
    ``kth`` smallest entry, as ``jax.numpy.argpartition``: the ``kth + 1``
    smallest come first in ascending order (so position ``kth`` holds the
    ``kth`` smallest), then the rest in descending order (JAX's layout;
    NumPy leaves both sides unordered). NaNs count as the largest values.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argpartition(mx.array([5.0, 1.0, 3.0, 2.0, 4.0]), 2).tolist()
    [1, 3, 2, 0, 4]
    """
    x = _creation.asarray(a)
    if x.ndim == 0:
        raise ValueError("argpartition: a must have at least one dimension")
    ax = normalize_axis(axis, x.ndim, "argpartition")
    n = x.shape[ax]
    k = check_axis(_index_arg(kth, "argpartition", "kth"), n, "argpartition", "kth",
                   of=f"axis {ax} of size {n}")
    order = lax.argsort(x, ax)
    lead = (slice(None),) * ax
    low = lax.static_slice(order, lead + (slice(0, k + 1),))
    high = lax.static_slice(order, lead + (slice(n - 1, k, -1),))
    return lax.concatenate([low, high], ax)


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """``a`` partitioned along ``axis`` around its ``kth`` smallest entry, as
    ``jax.numpy.partition``: the ``kth + 1`` smallest in ascending order,
    then the rest in descending order; NaNs count as the largest values.
    Differentiable (each tangent entry moves with its value).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.partition(mx.array([5.0, 1.0, 3.0, 2.0, 4.0]), 2).tolist()
    [1.0, 2.0, 3.0, 5.0, 4.0]
    """
    x = _creation.asarray(a)
    idx = argpartition(x, kth, axis)
    return lax.take_along_axis(x, idx, normalize_axis(axis, x.ndim, "partition"))


# ----------------------------------------------------------------------------
# searchsorted, digitize
# ----------------------------------------------------------------------------

_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Where each ``v`` would go in the sorted 1-D ``a`` to keep it sorted,
    as ``jax.numpy.searchsorted`` (``int32``, ``v``'s shape): ``side="left"``
    gives the first such place, ``"right"`` the last. NaN sorts after every
    number. With ``sorter``, ``a[sorter]`` is the sorted array. ``method``
    ``"compare_all"`` compares every pair (fast for a short ``a``); the
    others run a binary search of ``ceil(log2(len(a) + 1))`` steps.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> a = mx.array([1.0, 2.0, 2.0, 3.0])
    >>> fnp.searchsorted(a, mx.array([2.0, 0.0, 5.0])).tolist()
    [1, 0, 4]
    >>> fnp.searchsorted(a, 2.0, side="right").item()
    3
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"searchsorted: method must be one of {_SEARCH_METHODS}, "
                         f"got {method!r}")
    a, v = _creation.asarray(a), _creation.asarray(v)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {tuple(a.shape)}")
    if sorter is not None:
        a = _indexing.take(a, _creation.asarray(sorter), mode="clip")
    a, v = lax.stop_gradient(a), lax.stop_gradient(v)
    dtype = _creation.result_type(a, v)
    a, v = lax.astype(a, dtype), lax.astype(v, dtype)
    n = a.shape[0]
    shape = tuple(v.shape)
    if n == 0:
        return lax.zeros(shape, mx.int32)

    def goes_right(at: Any) -> Any:  # whether v belongs after the entry ``at``
        return _nan_less(at, v) if side == "left" else lax.logical_not(_nan_less(v, at))

    if method == "compare_all":
        cmp = goes_right(lax.reshape(a, (n,) + (1,) * len(shape)))
        return lax.astype(lax.sum(lax.astype(cmp, mx.int32), (0,)), mx.int32)
    lo = lax.zeros(shape, mx.int32)
    hi = lax.full(shape, n, mx.int32)
    for _ in range(n.bit_length()):
        mid = lax.floor_divide(lax.add(lo, hi), 2)
        at = lax.gather(a, lax.minimum(mid, n - 1), spec=(_indexing.ARRAY,))
        active = lax.less(lo, hi)
        right = goes_right(at)
        lo = lax.where(lax.logical_and(active, right), lax.add(mid, 1), lo)
        hi = lax.where(lax.logical_and(active, lax.logical_not(right)), mid, hi)
    return lo


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """The index (``int32``) of the bin of ``bins`` (1-D, increasing or
    decreasing) each ``x`` falls in, as ``numpy.digitize``: for increasing
    bins, ``bins[i-1] <= x < bins[i]`` (``<`` and ``<=`` swapped when
    ``right``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.digitize(mx.array([0.5, 1.0, 2.5]), mx.array([1.0, 2.0, 3.0])).tolist()
    [0, 1, 2]
    """
    bins = _creation.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {tuple(bins.shape)}")
    x = _creation.asarray(x)
    if bins.shape[0] == 0:
        return lax.zeros(tuple(x.shape), mx.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    up = searchsorted(bins, x, side, **kw)
    down = lax.subtract(bins.shape[0], searchsorted(_reverse(bins, 0), x, side, **kw))
    increasing = lax.greater_equal(bins[-1], bins[0])
    return lax.astype(lax.where(increasing, up, down), mx.int32)


# ----------------------------------------------------------------------------
# bincount
# ----------------------------------------------------------------------------


def _integer_array(x: Any, fname: str, what: str) -> Any:
    x = _creation.asarray(x)
    if is_floating(x.dtype) or x.dtype in (mx.bool_, mx.complex64):
        raise TypeError(f"{fname}: {what} must be an integer array, got {x.dtype}")
    return x


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """How often each value ``0, 1, ..., length - 1`` occurs in the 1-D
    integer ``x`` (the sum of ``weights`` there, if given), as
    ``jax.numpy.bincount``: negative values count in bin 0 and values from
    ``length`` on are dropped. Without ``length``, it is
    ``max(minlength, max(x) + 1)``, read from the data, which ``jit`` cannot
    do: pass ``length`` there.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.bincount(mx.array([1, 1, 3])).tolist()
    [0, 2, 0, 1]
    >>> fnp.bincount(mx.array([0, 1, 1]), mx.array([0.5, 1.0, 2.0]), length=3).tolist()
    [0.5, 3.0, 0.0]
    """
    x = _integer_array(x, "bincount", "x")
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D, got shape {tuple(x.shape)}")
    minlength = _index_arg(minlength, "bincount", "minlength")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must not be negative, got {minlength}")
    if length is None:
        top = _int_scalar_from_data(lax.max(x, (0,)), "bincount", "length") + 1 if x.size else 0
        length = max(minlength, top)
    else:
        length = _index_arg(length, "bincount", "length")
        if length < 0:
            raise ValueError(f"bincount: length must not be negative, got {length}")
    if weights is None:
        w, dtype = lax.full((), 1, mx.int32), mx.int32
    else:
        w = _creation.asarray(weights)
        if tuple(w.shape) != tuple(x.shape):
            raise ValueError(f"bincount: weights must have the shape of x {tuple(x.shape)}, "
                             f"got {tuple(w.shape)}")
        dtype = w.dtype if w.dtype != mx.bool_ else mx.int32
        w = lax.astype(w, dtype)
    idx = lax.maximum(lax.astype(x, mx.int32), 0)
    return _indexing.at(lax.zeros((length,), dtype))[idx].add(w, mode="drop")


# ----------------------------------------------------------------------------
# unique
# ----------------------------------------------------------------------------


def _differs(a: Any, b: Any, equal_nan: bool) -> Any:
    ne = lax.not_equal(a, b)
    if equal_nan and is_floating(aval_of(a).dtype):
        both_nan = lax.logical_and(lax.not_equal(a, a), lax.not_equal(b, b))
        ne = lax.logical_and(ne, lax.logical_not(both_nan))
    return ne


def _sorted_groups(x: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """For ``x`` (n, m): the stable permutation sorting its rows
    lexicographically, the sorted rows, and where each new value starts."""
    n, m = x.shape
    if m == 1:
        perm = lax.argsort(lax.reshape(x, (n,)), 0)
    else:
        cols = [lax.stop_gradient(x[:, j]) for j in range(m)]
        perm = lax.sort(cols + [_iota(n)], 0, num_keys=m)[-1]
    rows = lax.gather(x, perm, spec=(_indexing.ARRAY,))
    if n == 0:
        return perm, rows, lax.zeros((0,), mx.bool_)
    new = lax.any(_differs(rows[1:], rows[:-1], equal_nan), (1,))
    first = lax.concatenate([lax.full((1,), True, mx.bool_), new], 0)
    return perm, rows, first


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted unique values of ``ar`` (flattened, or the unique slices
    along ``axis``), as ``jax.numpy.unique``; optionally with the index of
    each one's first occurrence, the ``inverse`` indices rebuilding ``ar``
    (of ``ar``'s shape when ``axis`` is None) and the counts (all ``int32``).
    NaNs count as one value unless ``equal_nan=False``.

    The number of unique values depends on the data: eagerly it is read off
    it; under ``jit`` pass a static ``size``. With ``size``, the first
    ``size`` unique values are kept, and missing ones are ``fill_value``
    (default: the smallest value), with index ``perm[0]`` and count 0.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> values, counts = fnp.unique(mx.array([3, 1, 3, 2]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 2, 3], [1, 1, 2])
    >>> ft.jit(lambda x: fnp.unique(x, size=4, fill_value=-1))(mx.array([3, 1, 3])).tolist()
    [1, 3, -1, -1]
    """
    x = _creation.asarray(ar)
    if axis is None:
        shape_in, ax = tuple(x.shape), 0
        x = lax.reshape(x, (x.size, 1))
        slice_shape: tuple[int, ...] = ()
    else:
        ax = normalize_axis(axis, x.ndim, "unique")
        x = _shape.moveaxis(x, ax, 0)
        slice_shape = tuple(x.shape[1:])
        x = lax.reshape(x, (x.shape[0], math.prod(slice_shape)))
        shape_in = (x.shape[0],)
    n = x.shape[0]
    if size is not None:
        size = _index_arg(size, "unique", "size")
        if size < 0:
            raise ValueError(f"unique: size must not be negative, got {size}")
        if n == 0 and size and fill_value is None:
            raise ValueError("unique: an empty input with a nonzero size needs fill_value")
    perm, rows, first = _sorted_groups(x, equal_nan)
    group = lax.subtract(lax.cumsum(lax.astype(first, mx.int32), 0), 1)
    if size is None:
        starts = mx.array(np.flatnonzero(_concrete_mask(first, "unique", "size")),
                          dtype=mx.int32)
        k = starts.shape[0]
        valid = None
    else:
        k = size
        # The start of group g lands at g; groups beyond size fall off.
        slot = lax.where(first, group, k)
        starts = _indexing.at(lax.zeros((k,), mx.int32))[slot].set(_iota(n), mode="drop")
        valid = lax.less(_iota(k), lax.sum(lax.astype(first, mx.int32), (0,)))
    values = lax.gather(rows, starts, spec=(_indexing.ARRAY,)) if n else rows
    if valid is not None and fill_value is not None:
        fill = lax.astype(_creation.asarray(fill_value), values.dtype)
        values = (lax.where(lax.reshape(valid, (k, 1)), values, fill) if n
                  else lax.full((k, values.shape[1]), fill, values.dtype))
    values = lax.reshape(values, (k,) + slice_shape)
    if axis is not None:
        values = _shape.moveaxis(values, 0, ax)
    out = [values]
    if return_index:
        out.append(lax.gather(perm, starts, spec=(_indexing.ARRAY,)) if n else perm)
    if return_inverse:
        inv = _indexing.at(lax.zeros((n,), mx.int32))[perm].set(group, mode="promise_in_bounds")
        out.append(lax.reshape(inv, shape_in))
    if return_counts:
        counts = _indexing.at(lax.zeros((k,), mx.int32))[group].add(1, mode="drop")
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of ``x``, flattened (``unique`` with no
    extras), as ``jax.numpy.unique_values``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.unique_values(mx.array([2, 1, 2])).tolist()
    [1, 2]
    """
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x: Any, *, size: int | None = None, fill_value: Any = None) -> tuple:
    """``(values, counts)`` of ``unique``, as ``jax.numpy.unique_counts``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.unique_counts(mx.array([2, 1, 2]))[1].tolist()
    [1, 2]
    """
    return unique(x, return_counts=True, size=size, fill_value=fill_value)


def unique_inverse(x: Any, *, size: int | None = None, fill_value: Any = None) -> tuple:
    """``(values, inverse_indices)`` of ``unique``, the inverse of ``x``'s
    shape, as ``jax.numpy.unique_inverse``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.unique_inverse(mx.array([2, 1, 2]))[1].tolist()
    [1, 0, 1]
    """
    return unique(x, return_inverse=True, size=size, fill_value=fill_value)


def unique_all(x: Any, *, size: int | None = None, fill_value: Any = None) -> tuple:
    """``(values, indices, inverse_indices, counts)`` of ``unique``, as
    ``jax.numpy.unique_all``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [a.tolist() for a in fnp.unique_all(mx.array([2, 1, 2]))]
    [[1, 2], [1, 0], [1, 0, 1], [1, 2]]
    """
    return unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                  fill_value=fill_value)


# ----------------------------------------------------------------------------
# quantiles
# ----------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _to_last(x: Any, axis: Any, fname: str) -> tuple[Any, tuple[int, ...]]:
    """``x`` with the reduced axes merged into one last axis, and those axes."""
    axes = normalize_axes(axis, x.ndim, fname)
    rest = [i for i in range(x.ndim) if i not in axes]
    if list(axes) != list(range(x.ndim - len(axes), x.ndim)):
        x = lax.transpose(x, tuple(rest) + axes)
    shape = tuple(x.shape)
    kept = shape[:len(rest)]
    return lax.reshape(x, kept + (math.prod(shape[len(rest):]),)), axes


def _quantile(fname: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool,
              skip_nans: bool) -> Any:
    if method not in _METHODS:
        raise ValueError(f"{fname}: method must be one of {_METHODS}, got {method!r}")
    x = _creation.asarray(a)
    if not isinstance(q, (mx.array, Tracer)):
        # Python numbers and lists are weakly typed: they take x's precision
        # (built in it directly, so 0.3 is not first rounded to float32).
        q = np.asarray(q)
        if q.dtype.kind == "c" or x.dtype == mx.complex64:
            raise ValueError(f"{fname}: complex input is not supported")
        dtype = x.dtype if is_floating(x.dtype) else mx.float32
        q = mx.array(q.astype(np.float64), dtype=dtype)
    if x.dtype == mx.complex64 or q.dtype == mx.complex64:
        raise ValueError(f"{fname}: complex input is not supported")
    dtype = _creation.result_type(x, q)
    dtype = dtype if is_floating(dtype) else mx.float32
    x, q = lax.astype(x, dtype), lax.astype(q, dtype)
    if isinstance(q, mx.array) and q.size and not bool(mx.all((q >= 0) & (q <= 1)).item()):
        raise ValueError(f"{fname}: quantiles must lie in [0, 1] (percentiles in "
                         f"[0, 100]), got {np.array(q).tolist()}")
    shape = tuple(x.shape)
    flat, axes = _to_last(x, axis, fname)
    n = flat.shape[-1]
    out_rest = kept_shape(shape, axes) if keepdims else tuple(flat.shape[:-1])
    if n == 0:
        return lax.full(tuple(q.shape) + out_rest, math.nan, dtype)
    s = lax.sort(flat, flat.ndim - 1)
    qe = lax.reshape(q, tuple(q.shape) + (1,) * (s.ndim - 1))
    if skip_nans:
        count = lax.astype(lax.sum(lax.astype(lax.equal(s, s), mx.int32), (s.ndim - 1,)), dtype)
        last = lax.subtract(count, 1.0)
        pos = lax.multiply(qe, last)
    else:
        last = float(n - 1)
        pos = lax.multiply(qe, last)
    lo = lax.floor(lax.stop_gradient(pos))
    hi = lax.ceil(lax.stop_gradient(pos))
    lo = lax.minimum(lax.maximum(lo, 0.0), lax.maximum(last, 0.0))
    hi = lax.minimum(lax.maximum(hi, 0.0), lax.maximum(last, 0.0))
    frac = lax.subtract(pos, lo)
    s_b = lax.reshape(s, (1,) * q.ndim + tuple(s.shape))

    def read(i: Any) -> Any:
        idx = lax.expand_dims(lax.astype(i, mx.int32), (q.ndim + s.ndim - 1,))
        return lax.squeeze(lax.take_along_axis(s_b, idx, q.ndim + s.ndim - 1),
                           (q.ndim + s.ndim - 1,))

    lo_v, hi_v = read(lo), read(hi)
    if method == "lower":
        out = lo_v
    elif method == "higher":
        out = hi_v
    elif method == "nearest":  # halfway goes down, as JAX
        out = lax.where(lax.less_equal(frac, 0.5), lo_v, hi_v)
    elif method == "midpoint":
        out = lax.multiply(lax.add(lo_v, hi_v), 0.5)
    else:
        lerp = lax.add(lo_v, lax.multiply(lax.subtract(hi_v, lo_v), frac))
        out = lax.where(lax.equal(lo, hi), lo_v, lerp)
    # NaNs sort last: the largest entry says whether a slice has one.
    largest = lax.squeeze(lax.static_slice(s_b, (slice(None),) * (s_b.ndim - 1)
                                           + (slice(n - 1, n),)), (s_b.ndim - 1,))
    has_nan = lax.not_equal(largest, largest)
    if skip_nans:
        has_nan = lax.equal(count, 0.0)
    out = lax.where(has_nan, math.nan, out)
    return lax.reshape(out, tuple(q.shape) + out_rest)


def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or an array, whose
    shape leads the result's) of ``a`` over ``axis`` (an int, a tuple, or
    ``None`` for all), as ``jax.numpy.quantile``. ``method``: ``"linear"``
    interpolates between the neighbouring order statistics, ``"lower"``,
    ``"higher"`` and ``"nearest"`` pick one (``"nearest"`` picks the lower at
    exactly halfway, as JAX; NumPy rounds half to even), ``"midpoint"``
    averages both. A slice holding a NaN gives NaN. Integer input gives
    float32. Differentiable in ``a`` (through the sort) and in ``q``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([[1.0, 4.0, 2.0], [8.0, 6.0, 7.0]])
    >>> fnp.quantile(x, 0.5, axis=1).tolist()
    [2.0, 7.0]
    >>> fnp.quantile(x, mx.array([0.25, 1.0]), axis=1, method="lower").tolist()
    [[1.0, 6.0], [4.0, 8.0]]
    """
    if out is not None:
        raise NotImplementedError("quantile: out is not supported (arrays are immutable)")
    return _quantile("quantile", a, q, axis, method, keepdims, False)


def percentile(a: Any, q: Any, axis: Any = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:
    """The ``q``-th percentiles (``q`` in [0, 100]) of ``a``: ``quantile`` of
    ``q / 100``, as ``jax.numpy.percentile``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.percentile(mx.array([1.0, 2.0, 3.0, 4.0, 5.0]), 25).item()
    2.0
    """
    if out is not None:
        raise NotImplementedError("percentile: out is not supported (arrays are immutable)")
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False)


def _percent(q: Any) -> Any:
    if not isinstance(q, (mx.array, Tracer)):
        return np.asarray(q, dtype=np.float64) / 100.0
    return lax.divide(q, 100.0) if is_floating(q.dtype) else lax.divide(
        lax.astype(q, mx.float32), 100.0)


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median of ``a`` over ``axis``, as ``jax.numpy.median``: the middle
    value, or the mean of the two middle values; NaN where a slice has a NaN.
    Its gradient goes to the middle value(s).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.median(mx.array([[1.0, 3.0, 2.0], [4.0, 6.0, 5.0]]), axis=1).tolist()
    [2.0, 5.0]
    >>> ft.grad(fnp.median)(mx.array([4.0, 1.0, 3.0, 2.0])).tolist()
    [0.0, 0.0, 0.5, 0.5]
    """
    if out is not None:
        raise NotImplementedError("median: out is not supported (arrays are immutable)")
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """``quantile`` ignoring NaNs, as ``jax.numpy.nanquantile``; an all-NaN
    slice gives NaN.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanquantile(mx.array([1.0, float("nan"), 3.0]), 0.5).item()
    2.0
    """
    if out is not None:
        raise NotImplementedError("nanquantile: out is not supported (arrays are immutable)")
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    """``percentile`` ignoring NaNs, as ``jax.numpy.nanpercentile``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanpercentile(mx.array([1.0, float("nan"), 3.0]), 100).item()
    3.0
    """
    if out is not None:
        raise NotImplementedError("nanpercentile: out is not supported (arrays are immutable)")
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True)


def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """``median`` ignoring NaNs, as ``jax.numpy.nanmedian``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanmedian(mx.array([[1.0, float("nan"), 3.0]]), axis=1).tolist()
    [2.0]
    """
    if out is not None:
        raise NotImplementedError("nanmedian: out is not supported (arrays are immutable)")
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


# ----------------------------------------------------------------------------
# histogram
# ----------------------------------------------------------------------------


def histogram_bin_edges(a: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                        weights: Any = None) -> Any:
    """The edges of ``histogram``'s bins, as ``jax.numpy.histogram_bin_edges``:
    ``bins`` (a static int) equal bins over ``range`` (by default the data's
    min and max, widened by 0.5 each way when they are equal), or the given
    1-D increasing edges.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.histogram_bin_edges(mx.array([0.0, 1.0, 4.0]), bins=4).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0]
    """
    x = _creation.asarray(a)
    dtype = x.dtype if is_floating(x.dtype) else mx.float32
    if not isinstance(bins, (int, np.integer)):
        edges = _creation.asarray(bins)
        wide = _creation.result_type(edges, dtype)
        edges = lax.astype(edges, wide if is_floating(wide) else mx.float32)
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError("histogram: bins must be an int or a 1-D array of at least 2 "
                             f"edges, got shape {tuple(edges.shape)}")
        if isinstance(edges, mx.array) and not bool(mx.all(edges[1:] >= edges[:-1]).item()):
            raise ValueError("histogram: bins must increase monotonically")
        return edges
    nbins = _index_arg(bins, "histogram", "bins")
    if nbins < 1:
        raise ValueError(f"histogram: bins must be a positive int, got {nbins}")
    if range is None:
        flat = lax.stop_gradient(_flat(x))
        if flat.shape[0] == 0:
            lo, hi = lax.full((), 0.0, dtype), lax.full((), 1.0, dtype)
        else:
            lo, hi = lax.astype(lax.min(flat, (0,)), dtype), lax.astype(lax.max(flat, (0,)), dtype)
    else:
        if len(range) != 2:
            raise ValueError(f"histogram: range must be a pair (min, max), got {range!r}")
        lo = lax.astype(_creation.asarray(range[0]), dtype)
        hi = lax.astype(_creation.asarray(range[1]), dtype)
        if isinstance(lo, mx.array) and isinstance(hi, mx.array) and lo.item() > hi.item():
            raise ValueError(f"histogram: range must have min <= max, got {range!r}")
    same = lax.equal(lo, hi)
    lo = lax.where(same, lax.subtract(lo, 0.5), lo)
    hi = lax.where(same, lax.add(hi, 0.5), hi)
    # As jax.numpy.linspace rounds: lo * (1 - t) + hi * t, with t = i / nbins.
    t = mx.arange(nbins + 1, dtype=dtype) / nbins
    return lax.add(lax.multiply(lo, 1 - t), lax.multiply(hi, t))


def bin_indices(x: Any, edges: Any) -> Any:
    """The bin of each value of the 1-D ``x`` among the bins between the
    1-D ``edges``: half-open ``[e[i], e[i+1])`` but the last, which holds its
    right edge; values outside (and NaNs) get the bin count, one past the end."""
    nb = edges.shape[0] - 1
    xv = lax.stop_gradient(lax.astype(x, edges.dtype))
    e = lax.stop_gradient(edges)
    idx = lax.subtract(searchsorted(e, xv, side="right"), 1)
    idx = lax.where(lax.equal(xv, e[-1]), nb - 1, idx)
    inside = lax.logical_and(lax.greater_equal(idx, 0), lax.less(idx, nb))
    return lax.where(inside, idx, nb)


def histogram(a: Any, bins: Any = 10, range: Sequence[Any] | None = None, weights: Any = None,
              density: bool | None = None) -> tuple[Any, Any]:
    """``(hist, bin_edges)``: the number of values of ``a`` (flattened) in
    each bin, or the sum of their ``weights``, as ``jax.numpy.histogram``.
    Bins are half-open ``[e[i], e[i+1])`` except the last, which includes
    its right edge; values outside the edges (and NaNs) are left out. With
    ``density``, ``hist`` is normalised to integrate to 1 over the range.
    ``bins`` and ``range`` as ``histogram_bin_edges``. ``hist`` is floating,
    as JAX gives it.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> hist, edges = fnp.histogram(mx.array([0.0, 1.0, 1.5, 2.0, 4.0]), bins=4)
    >>> hist.tolist(), edges.tolist()
    ([1.0, 2.0, 1.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0])
    """
    x = _flat(_creation.asarray(a))
    edges = histogram_bin_edges(x, bins, range)
    nb = edges.shape[0] - 1
    dtype = edges.dtype
    if weights is None:
        w = lax.full((), 1.0, dtype)
    else:
        w = _flat(_creation.asarray(weights))
        if tuple(w.shape) != tuple(x.shape):
            raise ValueError(f"histogram: weights must have the shape of a {tuple(x.shape)}, "
                             f"got {tuple(w.shape)}")
        wd = _creation.result_type(w, dtype)
        dtype = wd if is_floating(wd) else mx.float32
        w = lax.astype(w, dtype)
    idx = bin_indices(x, edges)
    hist = _indexing.at(lax.zeros((nb,), dtype))[idx].add(w, mode="drop")
    if density:
        widths = lax.subtract(edges[1:], edges[:-1])
        hist = lax.divide(lax.divide(hist, lax.astype(widths, dtype)), lax.sum(hist, (0,)))
    return hist, edges
