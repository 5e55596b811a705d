"""Set operations on 1-D arrays as in jax.numpy: ``isin``, ``intersect1d``,
``setdiff1d``, ``setxor1d``, ``union1d``, and ``trim_zeros`` and
``sort_complex``.

Each result is sorted and unique, and its length depends on the data: as
``unique``, without ``size`` it is read off the values eagerly, and under
``jit`` or ``vmap`` pass a static ``size`` (missing entries become
``fill_value``).

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.intersect1d(mx.array([3, 1, 2, 3]), mx.array([3, 2, 5])).tolist()
[2, 3]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.numpy import _creation, _elementwise, _index_tricks, _indexing, _shape, _sorting

__all__ = [
    "isin", "intersect1d", "setdiff1d", "setxor1d", "union1d", "trim_zeros", "sort_complex",
]


def _flat(x: Any) -> Any:
    return _shape.ravel(_creation.asarray(x))


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Any:
    """Whether each entry of ``element`` occurs in ``test_elements`` (a
    boolean array of ``element``'s shape; negated with ``invert``), by a
    binary search of the sorted test elements. ``assume_unique`` and
    ``method`` change nothing.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isin(mx.array([1, 2, 3]), mx.array([3, 1])).tolist()
    [True, False, True]
    """
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: unknown method {method!r}")
    element = _creation.asarray(element)
    tests = _flat(test_elements)
    if tests.shape[0] == 0:
        found = lax.full(tuple(element.shape), False, mx.bool_)
    else:
        dtype = _creation.result_type(element, tests)
        e = lax.stop_gradient(lax.astype(element, dtype))
        ordered = _sorting.sort(lax.stop_gradient(lax.astype(tests, dtype)))
        at = _elementwise.clip(_sorting.searchsorted(ordered, e), 0, ordered.shape[0] - 1)
        found = lax.equal(_indexing.take(ordered, at, mode="promise_in_bounds"), e)
    return lax.logical_not(found) if invert else found


def _sorted_firsts(x: Any) -> tuple[Any, Any, Any]:
    """The sorted ``x`` (1-D), the stable permutation sorting it, and where
    each distinct value first appears in it."""
    perm = _sorting.argsort(x)
    ordered = _indexing.take(x, perm, mode="promise_in_bounds")
    if ordered.shape[0] == 0:
        return ordered, perm, lax.zeros((0,), mx.bool_)
    first = _shape.concatenate(
        [lax.full((1,), True, mx.bool_), lax.not_equal(ordered[1:], ordered[:-1])], 0)
    return ordered, perm, first


def _select(mask: Any, values: Any, size: Any, fill_value: Any, fname: str) -> Any:
    """The entries of ``values`` where ``mask`` holds; with ``size``, the
    first ``size`` of them padded with ``fill_value`` (by default the first
    entry found, 0 when there is none)."""
    found, valid = _index_tricks.true_positions(mask, size, fname)
    out = _indexing.take(values, found, mode="promise_in_bounds") if values.shape[0] else (
        lax.zeros((found.shape[0],), values.dtype))
    if valid is None:
        return out
    if fill_value is None:
        fill_value = out[0] if out.shape[0] and values.shape[0] else 0
    return lax.where(valid, out, lax.astype(_creation.asarray(fill_value), out.dtype))


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in both ``ar1`` and ``ar2`` (flattened), as
    ``jax.numpy.intersect1d``; with ``return_indices``, also where each first
    occurs in each input (``int32``; padded entries get the input's size).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [a.tolist() for a in fnp.intersect1d(mx.array([4, 1, 4]), mx.array([4, 0]),
    ...                                      return_indices=True)]
    [[4], [0], [0]]
    """
    a1, a2 = _flat(ar1), _flat(ar2)
    size = _index_tricks.check_size(size, "intersect1d")
    ordered, perm, first = _sorted_firsts(a1)
    mask = lax.logical_and(first, isin(ordered, a2))
    values = _select(mask, ordered, size, fill_value, "intersect1d")
    if not return_indices:
        return values
    found, valid = _index_tricks.true_positions(mask, size, "intersect1d")
    ind1 = _indexing.take(perm, found, mode="promise_in_bounds") if a1.shape[0] else found
    ordered2, perm2, _ = _sorted_firsts(a2)
    if a2.shape[0]:
        pos = _elementwise.clip(_sorting.searchsorted(ordered2, values), 0, a2.shape[0] - 1)
        ind2 = _indexing.take(perm2, pos, mode="promise_in_bounds")
    else:
        ind2 = found
    if valid is not None:
        ind1 = lax.where(valid, ind1, a1.shape[0])
        ind2 = lax.where(valid, ind2, a2.shape[0])
    return values, ind1, ind2


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The sorted unique values of ``ar1`` not in ``ar2`` (flattened), as
    ``jax.numpy.setdiff1d``; padded with ``fill_value`` (default 0) to
    ``size``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.setdiff1d(mx.array([3, 1, 2, 3]), mx.array([3, 5])).tolist()
    [1, 2]
    """
    a1 = _flat(ar1)
    size = _index_tricks.check_size(size, "setdiff1d")
    ordered, _, first = _sorted_firsts(a1)
    mask = lax.logical_and(first, isin(ordered, ar2, invert=True))
    return _select(mask, ordered, size, 0 if fill_value is None else fill_value, "setdiff1d")


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted unique values in exactly one of ``ar1`` and ``ar2``
    (flattened), as ``jax.numpy.setxor1d``; padded with ``fill_value``
    (default the smallest value found) to ``size``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.setxor1d(mx.array([3, 1, 2, 3]), mx.array([3, 5])).tolist()
    [1, 2, 5]
    """
    a1, a2 = _flat(ar1), _flat(ar2)
    size = _index_tricks.check_size(size, "setxor1d")
    ordered, _, first = _sorted_firsts(_shape.concatenate([a1, a2], 0))
    once = lax.logical_xor(isin(ordered, a1), isin(ordered, a2))
    return _select(lax.logical_and(first, once), ordered, size, fill_value, "setxor1d")


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in either ``ar1`` or ``ar2`` (flattened), as
    ``jax.numpy.union1d``; padded with ``fill_value`` (default the smallest
    value) to ``size``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.union1d(mx.array([3, 1]), mx.array([2, 3])).tolist()
    [1, 2, 3]
    """
    size = _index_tricks.check_size(size, "union1d")
    ordered, _, first = _sorted_firsts(_shape.concatenate([_flat(ar1), _flat(ar2)], 0))
    return _select(first, ordered, size, fill_value, "union1d")


def trim_zeros(filt: Any, trim: str = "fb", axis: int | None = None) -> Any:
    """``filt`` without its leading ("f" in ``trim``) and trailing ("b")
    zeros, as ``numpy.trim_zeros``: along each of ``axis`` (every axis when
    None), the slices that are all zero at the ends are cut. The result's
    shape depends on the values, which are read eagerly (not under jit).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.trim_zeros(mx.array([0, 0, 1, 0, 2, 0])).tolist()
    [1, 0, 2]
    """
    filt = _creation.asarray(filt)
    trim = trim.lower()
    if not set(trim) <= {"f", "b"}:
        raise ValueError(f"trim_zeros: trim must hold only 'f' and 'b', got {trim!r}")
    axes = range(filt.ndim) if axis is None else _shape._axes(axis, filt.ndim, "trim_zeros")
    nonzero = np.argwhere(_index_tricks.concrete(
        filt, "trim_zeros", "the output shape depends on the values; it cannot run under jit "
                            "or vmap"))
    index = [slice(None)] * filt.ndim
    for ax in axes:
        if not nonzero.shape[0]:
            index[ax] = slice(0, 0)
            continue
        start = int(nonzero[:, ax].min()) if "f" in trim else 0
        stop = int(nonzero[:, ax].max()) + 1 if "b" in trim else filt.shape[ax]
        index[ax] = slice(start, stop)
    return lax.static_slice(filt, tuple(index))


def sort_complex(a: Any) -> Any:
    """``a`` sorted along its last axis by real part, then imaginary part,
    as a complex array (as ``numpy.sort_complex``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.sort_complex(mx.array([3, 1, 2])).tolist()
    [(1+0j), (2+0j), (3+0j)]
    """
    a = _elementwise.astype(_creation.asarray(a), mx.complex64)
    if a.ndim == 0:
        return a
    order = _sorting.lexsort([_elementwise.imag(a), _elementwise.real(a)])
    return _indexing.take_along_axis(a, order, -1, mode="promise_in_bounds")
