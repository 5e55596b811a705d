"""``jax.scipy.stats``'s descriptive statistics: ``mode``, ``rankdata`` and
``sem``, composites of ``ftorch.numpy``'s sorts and reductions."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import ftorch.numpy as fnp
import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import is_floating
from ftorch.scipy.stats._common import promote

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")


def _check_nan_policy(fname: str, nan_policy: str, supported: tuple[str, ...]) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"{fname}: nan_policy must be one of {', '.join(_NAN_POLICIES)}, got "
                         f"{nan_policy!r}")
    if nan_policy not in supported:
        raise NotImplementedError(
            f"{fname}: nan_policy={nan_policy!r} is not supported (as in JAX): check for NaNs "
            "before the call (a traced function cannot branch on them)")


class ModeResult(NamedTuple):
    """``mode``'s result: the most frequent values and how often each occurs."""

    mode: Any
    count: Any


def _equal_or_both_nan(a: Any, b: Any) -> Any:
    return (a == b) | (fnp.isnan(a) & fnp.isnan(b)) if is_floating(a.dtype) else a == b


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (over all elements when ``None``)
    and its count (int32), as ``jax.scipy.stats.mode``: of values equally
    frequent, the smallest; NaNs count as one value. Only
    ``nan_policy="propagate"``. Counting compares every pair of a slice's
    elements, so a slice of ``n`` costs ``n**2``.

    >>> import ftorch.scipy.stats as stats, mlx.core as mx
    >>> r = stats.mode(mx.array([[1, 2, 2], [3, 3, 1]]), axis=1)
    >>> r.mode.tolist(), r.count.tolist()
    ([2, 3], [2, 2])
    """
    _check_nan_policy("mode", nan_policy, ("propagate",))
    x = fnp.asarray(a)
    if x.ndim == 0:
        x = fnp.reshape(x, (1,))
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x = fnp.reshape(x, (-1, 1))
    else:
        axis = check_axis(axis, x.ndim, "mode")
        kept = [s for i, s in enumerate(x.shape) if i != axis]
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape)) if keepdims \
            else tuple(kept)
        x = fnp.reshape(fnp.moveaxis(x, axis, 0), (x.shape[axis], math.prod(kept)))
    if x.shape[0] == 0:
        return ModeResult(fnp.full(out_shape, fnp.nan, fnp.float32),
                          fnp.zeros(out_shape, fnp.float32))
    ordered = fnp.sort(x, axis=0)
    # counts[i, j]: how many entries of column j equal its i-th smallest.
    counts = fnp.sum(_equal_or_both_nan(ordered[:, None, :], ordered[None, :, :]), axis=1,
                     dtype=fnp.int32)
    first_most = fnp.argmax(counts, axis=0, keepdims=True)  # the smallest of the most frequent
    values = fnp.take_along_axis(ordered, first_most, axis=0)[0]
    return ModeResult(fnp.reshape(values, out_shape), fnp.reshape(fnp.max(counts, axis=0),
                                                                  out_shape))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """The ranks (from 1, float32) of ``a``'s elements, flattened or along
    ``axis``, as ``jax.scipy.stats.rankdata``: ties get the ``"average"``,
    ``"min"`` or ``"max"`` of their ranks, ``"dense"`` ranks count distinct
    values, ``"ordinal"`` breaks ties by position. A slice with a NaN ranks
    all NaN. Only ``nan_policy="propagate"``.

    >>> import ftorch.scipy.stats as stats, mlx.core as mx
    >>> stats.rankdata(mx.array([3, 1, 3, 2])).tolist()
    [3.5, 1.0, 3.5, 2.0]
    >>> stats.rankdata(mx.array([3, 1, 3, 2]), "dense").tolist()
    [3.0, 1.0, 3.0, 2.0]
    """
    _check_nan_policy("rankdata", nan_policy, ("propagate",))
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: method must be one of {', '.join(_RANK_METHODS)}, got "
                         f"{method!r}")
    x = fnp.asarray(a)
    if axis is None:
        return _ranks_along_last(fnp.ravel(x), method)
    axis = check_axis(axis, max(x.ndim, 1), "rankdata")
    if x.ndim == 0:
        return _ranks_along_last(fnp.reshape(x, (1,)), method)
    return fnp.moveaxis(_ranks_along_last(fnp.moveaxis(x, axis, -1), method), -1, axis)


def _ranks_along_last(x: Any, method: str) -> Any:
    n = x.shape[-1]
    if n == 0:
        return fnp.zeros(x.shape, fnp.float32)
    order = fnp.argsort(x, axis=-1)
    ordered = fnp.take_along_axis(x, order, axis=-1)
    inverse = fnp.argsort(order, axis=-1)
    position = fnp.broadcast_to(fnp.arange(n, dtype=fnp.int32), x.shape)
    if method == "ordinal":
        ranks_sorted = fnp.astype(position + 1, fnp.float32)
    else:
        differs = ordered[..., 1:] != ordered[..., :-1]
        starts = fnp.concatenate([fnp.ones(x.shape[:-1] + (1,), fnp.bool_), differs], axis=-1)
        if method == "dense":
            ranks_sorted = fnp.astype(fnp.cumsum(starts, axis=-1), fnp.float32)
        else:
            ends = fnp.concatenate([differs, fnp.ones(x.shape[:-1] + (1,), fnp.bool_)], axis=-1)
            # A tie group's lowest rank is its first position + 1, its highest its last + 1.
            lowest = lax.cummax(fnp.where(starts, position, 0), axis=x.ndim - 1) + 1
            highest = lax.cummin(fnp.where(ends, position, n), axis=x.ndim - 1,
                                 reverse=True) + 1
            lowest, highest = fnp.astype(lowest, fnp.float32), fnp.astype(highest, fnp.float32)
            ranks_sorted = {"min": lowest, "max": highest,
                            "average": 0.5 * (lowest + highest)}[method]
    ranks = fnp.take_along_axis(ranks_sorted, inverse, axis=-1)
    if is_floating(x.dtype):
        ranks = fnp.where(fnp.any(fnp.isnan(x), axis=-1, keepdims=True), fnp.nan, ranks)
    return ranks


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)`` along ``axis``
    (all elements when ``None``), as ``jax.scipy.stats.sem``; with
    ``nan_policy="omit"``, over the elements that are not NaN.

    >>> import ftorch.scipy.stats as stats, mlx.core as mx
    >>> round(stats.sem(mx.array([1.0, 2.0, 3.0, 5.0])).item(), 6)
    0.853913
    """
    (x,) = promote("sem", a)
    if nan_policy == "propagate":
        size = x.size if axis is None else x.shape[check_axis(axis, x.ndim, "sem")]
        return fnp.std(x, axis, ddof=ddof, keepdims=keepdims) / math.sqrt(size)
    if nan_policy == "omit":
        count = fnp.sum(~fnp.isnan(x), axis, keepdims=keepdims)
        return fnp.nanstd(x, axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(
            fnp.astype(count, x.dtype))
    raise ValueError(f"sem: nan_policy must be 'propagate' or 'omit', got {nan_policy!r}")


