"""Statistics, differences and products as in jax.numpy: ``average``,
``cov``, ``corrcoef``, ``count_nonzero``, ``ptp``, the array-API scans
(``cumulative_sum``, ``cumulative_prod``), differences (``diff``,
``ediff1d``, ``gradient``, ``unwrap``), integration and interpolation
(``trapezoid``, ``interp``), multi-dimensional histograms
(``histogram2d``, ``histogramdd``), 1-D ``convolve`` and ``correlate``,
``kron``, ``vander``, the batched products ``matvec``, ``vecmat`` and
``vecdot``, and ``einsum_path``.

All are composites of the reductions, scans, slices and products below
them, so they are differentiable and batchable as those are.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.diff(mx.array([1, 4, 9, 16])).tolist()
[3, 5, 7]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import is_complex, is_floating
from ftorch.dtypes import DTypeLike
from ftorch.numpy import (
    _creation,
    _elementwise,
    _indexing,
    _linalg,
    _reduction,
    _shape,
    _sorting,
    _stacking,
)
from ftorch.typing import Axis

__all__ = [
    "average", "cov", "corrcoef", "count_nonzero", "ptp", "cumulative_sum", "cumulative_prod",
    "diff", "ediff1d", "gradient", "trapezoid", "interp", "histogram2d", "histogramdd",
    "convolve", "correlate", "kron", "vander", "matvec", "vecmat", "vecdot", "unwrap",
    "einsum_path",
]


def _inexact(x: Any) -> Any:
    """``x`` as a floating (or complex) array: integers and bools become float32."""
    x = _creation.asarray(x)
    return x if is_floating(x.dtype) or is_complex(x.dtype) else lax.astype(x, mx.float32)


def _promote_inexact(*xs: Any) -> list[Any]:
    """The arrays in one floating dtype (their common one, float32 at least)."""
    xs = [_creation.asarray(x) for x in xs]
    dtype = _creation.result_type(*xs)
    if not (is_floating(dtype) or is_complex(dtype)):
        dtype = mx.float32
    return [_elementwise.astype(x, dtype) for x in xs]


# ----------------------------------------------------------------------------
# Averages, covariance, counts
# ----------------------------------------------------------------------------


def average(a: Any, axis: Axis = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The mean of ``a`` over ``axis``, weighted by ``weights`` (of ``a``'s
    shape, or 1-D along a single ``axis``), as ``jax.numpy.average``; with
    ``returned``, also the sum of the weights (the count when unweighted),
    broadcast to the average's shape.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.average(mx.array([1.0, 2.0, 4.0]), weights=mx.array([1.0, 1.0, 2.0])).item()
    2.75
    """
    a = _inexact(a)
    if weights is None:
        avg = _reduction.mean(a, axis, keepdims)
        count = a.size // max(avg.size, 1) if a.size else 0
        scale = lax.full(tuple(avg.shape), count, avg.dtype)
    else:
        a, w = _promote_inexact(a, weights)
        if tuple(w.shape) != tuple(a.shape):
            if axis is None or not isinstance(axis, int):
                raise ValueError(f"average: weights of shape {tuple(w.shape)} differ from a's "
                                 f"{tuple(a.shape)}; then axis must be one int")
            ax = _shape._axis(axis, a.ndim, "average")
            if w.ndim != 1 or w.shape[0] != a.shape[ax]:
                raise ValueError(f"average: weights must be 1-D of length {a.shape[ax]} (axis "
                                 f"{axis} of a), got shape {tuple(w.shape)}")
            shape = [1] * a.ndim
            shape[ax] = w.shape[0]
            w = lax.reshape(w, tuple(shape))
        scale = _reduction.sum(lax.broadcast_to(w, tuple(a.shape)), axis, keepdims)
        avg = lax.divide(_reduction.sum(lax.multiply(a, w), axis, keepdims), scale)
    if returned:
        return avg, lax.broadcast_to(scale, tuple(avg.shape))
    return avg


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: Any = None, aweights: Any = None,
        dtype: DTypeLike | None = None) -> Any:
    """The covariance matrix of the variables in the rows of ``m`` (columns
    when ``rowvar=False``), with those of ``y`` appended, as ``numpy.cov``:
    normalised by ``N - 1`` (``N`` with ``bias``, ``N - ddof`` with
    ``ddof``); ``fweights`` (integer repeat counts) and ``aweights``
    (observation weights) weight the observations. One variable gives a
    0-d result.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cov(mx.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    m = _inexact(m)
    x = _stacking.atleast_2d(m)
    if x.ndim > 2:
        raise ValueError(f"cov: m must be at most 2-D, got shape {tuple(x.shape)}")
    if not rowvar and m.ndim == 2:  # a 1-D m is one variable either way
        x = _shape.transpose(x)
    if y is not None:
        y = _inexact(y)
        y2 = _stacking.atleast_2d(y)
        if y2.ndim > 2:
            raise ValueError(f"cov: y must be at most 2-D, got shape {tuple(y2.shape)}")
        if not rowvar and y.ndim == 2:
            y2 = _shape.transpose(y2)
        x = _shape.concatenate([x, y2], 0)
    if dtype is not None:
        x = _elementwise.astype(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        given = _creation.asarray(given)
        if given.ndim != 1 or given.shape[0] != n:
            raise ValueError(f"cov: {name} must be 1-D with one weight per observation "
                             f"({n}), got shape {tuple(given.shape)}")
        if name == "fweights" and (is_floating(given.dtype) or is_complex(given.dtype)):
            raise TypeError(f"cov: fweights must be integers, got dtype {given.dtype}")
        # Negative weights count as positive, as in jax.numpy (NumPy refuses them).
        given = lax.abs(lax.astype(given, x.dtype))
        if name == "aweights":
            aweights = given
        w = given if w is None else lax.multiply(w, given)
    if w is None:
        avg = _reduction.mean(x, 1)
        fact = lax.full((), n - ddof, x.dtype)
    else:
        w_sum = _reduction.sum(w)
        avg = lax.divide(_reduction.sum(lax.multiply(x, w), 1), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = lax.subtract(w_sum, ddof)
        else:
            fact = lax.subtract(w_sum, lax.divide(
                lax.multiply(ddof, _reduction.sum(lax.multiply(w, aweights))), w_sum))
    x = lax.subtract(x, lax.reshape(avg, (x.shape[0], 1)))
    xw = x if w is None else lax.multiply(x, w)
    c = _linalg.matmul(x, _shape.transpose(_elementwise.conj(xw)))
    return _shape.squeeze(lax.divide(c, fact))


def corrcoef(x: Any, y: Any = None, rowvar: bool = True,
             dtype: DTypeLike | None = None) -> Any:
    """The Pearson correlation coefficients of the variables of ``x`` (and
    ``y``): ``cov`` normalised by the standard deviations, clipped to
    [-1, 1], as ``numpy.corrcoef``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.corrcoef(mx.array([1.0, 2.0, 3.0]), mx.array([3.0, 1.0, -1.0])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return lax.divide(c, c)
    std = lax.sqrt(_elementwise.real(_shape.diagonal(c)))
    n = std.shape[0]
    c = lax.divide(lax.divide(c, lax.reshape(std, (n, 1))), lax.reshape(std, (1, n)))
    if is_complex(c.dtype):
        return lax.complex(_elementwise.clip(lax.real(c), -1, 1),
                           _elementwise.clip(lax.imag(c), -1, 1))
    return _elementwise.clip(c, -1, 1)


def count_nonzero(a: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """The number (``int32``) of nonzero entries of ``a`` over ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.count_nonzero(mx.array([[0, 1], [2, 3]]), axis=0).tolist()
    [1, 2]
    """
    a = _creation.asarray(a)
    nonzero = a if a.dtype == mx.bool_ else lax.not_equal(a, mx.zeros((), a.dtype))
    return _reduction.sum(lax.astype(nonzero, mx.int32), axis, keepdims)


def ptp(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    """The range (maximum minus minimum, "peak to peak") over ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ptp(mx.array([[1, 5], [2, 0]]), axis=1).tolist()
    [4, 2]
    """
    _reduction._no_out(out, "ptp")
    a = _creation.asarray(a)
    if a.dtype == mx.bool_:
        raise TypeError("ptp: a must be numeric, got a bool array")
    return lax.subtract(_reduction.max(a, axis, keepdims), _reduction.min(a, axis, keepdims))


# ----------------------------------------------------------------------------
# Array-API scans
# ----------------------------------------------------------------------------


def _cumulative(scan: Any, identity: int, x: Any, axis: Any, dtype: Any,
                include_initial: bool, fname: str) -> Any:
    x = _creation.asarray(x)
    if x.ndim == 0:
        raise ValueError(f"{fname}: x must have at least one dimension, got a 0-d array")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{fname}: axis may be left out only for a 1-D x, got shape "
                             f"{tuple(x.shape)}")
        axis = 0
    ax = _shape._axis(axis, x.ndim, fname)
    if dtype is None and x.dtype == mx.bool_:
        x = lax.astype(x, mx.int32)
    out = scan(x, ax, dtype=dtype)
    if not include_initial:
        return out
    shape = list(out.shape)
    shape[ax] = 1
    return _shape.concatenate([lax.full(tuple(shape), identity, out.dtype), out], ax)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                   include_initial: bool = False) -> Any:
    """The running sums of ``x`` along ``axis`` (which a 1-D ``x`` may leave
    out), as the array API's ``cumulative_sum``; ``include_initial`` starts
    with a 0.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cumulative_sum(mx.array([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return _cumulative(_reduction.cumsum, 0, x, axis, dtype, include_initial,
                       "cumulative_sum")


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                    include_initial: bool = False) -> Any:
    """The running products of ``x`` along ``axis`` (which a 1-D ``x`` may
    leave out), as the array API's ``cumulative_prod``; ``include_initial``
    starts with a 1.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cumulative_prod(mx.array([1, 2, 3])).tolist()
    [1, 2, 6]
    """
    return _cumulative(_reduction.cumprod, 1, x, axis, dtype, include_initial,
                       "cumulative_prod")


# ----------------------------------------------------------------------------
# Differences
# ----------------------------------------------------------------------------


def _edge(value: Any, a: Any, ax: int) -> Any:
    """``diff``'s ``prepend`` or ``append``: a scalar becomes one slice."""
    value = _creation.asarray(value)
    if value.ndim == 0:
        shape = list(a.shape)
        shape[ax] = 1
        value = lax.broadcast_to(value, tuple(shape))
    return value


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th differences of ``a`` along ``axis`` (``a[1:] - a[:-1]``,
    ``n`` times; "not equal" for booleans), after joining ``prepend`` and
    ``append`` (scalars count as one slice) at its ends.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.diff(mx.array([1.0, 2.0, 4.0, 7.0]), n=2).tolist()
    [1.0, 1.0]
    """
    a = _creation.asarray(a)
    if a.ndim == 0:
        raise ValueError("diff: a must have at least one dimension, got a 0-d array")
    n = _shape._index(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff: n must not be negative, got {n}")
    ax = _shape._axis(axis, a.ndim, "diff")
    if n == 0:
        return a
    if prepend is not None or append is not None:
        parts = ([_edge(prepend, a, ax)] if prepend is not None else []) + [a] + (
            [_edge(append, a, ax)] if append is not None else [])
        a = _shape.concatenate(parts, ax)
    for _ in range(n):
        hi = lax.static_slice(a, _shape._along(ax, slice(1, None)))
        lo = lax.static_slice(a, _shape._along(ax, slice(None, -1)))
        a = lax.not_equal(hi, lo) if a.dtype == mx.bool_ else lax.subtract(hi, lo)
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """The differences of the flattened ``ary``, with ``to_begin`` before
    them and ``to_end`` after (flattened, cast to ``ary``'s dtype).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ediff1d(mx.array([1, 2, 4]), to_begin=0).tolist()
    [0, 1, 2]
    """
    flat = _shape.ravel(ary)
    parts = [diff(flat)] if flat.shape[0] else [flat]
    if to_begin is not None:
        parts.insert(0, lax.astype(_shape.ravel(to_begin), flat.dtype))
    if to_end is not None:
        parts.append(lax.astype(_shape.ravel(to_end), flat.dtype))
    return _shape.concatenate(parts, 0)


def _gradient_along(f: Any, ax: int, spacing: Any) -> Any:
    """The derivative of ``f`` along ``ax`` by second-order central
    differences inside and first-order ones at the two ends, with ``spacing``
    a scalar step or the 1-D coordinates along the axis (as NumPy's
    ``edge_order=1``)."""
    def part(s: slice) -> Any:
        return lax.static_slice(f, _shape._along(ax, s))

    def along(v: Any) -> Any:  # a 1-D array laid along ax
        shape = [1] * f.ndim
        shape[ax] = v.shape[0]
        return lax.reshape(v, tuple(shape))

    spacing = _creation.asarray(spacing)
    if spacing.ndim == 0:
        h = lax.astype(spacing, f.dtype)
        inner = lax.divide(lax.subtract(part(slice(2, None)), part(slice(None, -2))),
                           lax.multiply(h, 2))
        first = lax.divide(lax.subtract(part(slice(1, 2)), part(slice(0, 1))), h)
        last = lax.divide(lax.subtract(part(slice(-1, None)), part(slice(-2, -1))), h)
    else:
        dx = lax.astype(diff(spacing), f.dtype)
        hl, hr = dx[:-1], dx[1:]
        total = lax.add(hl, hr)
        below = along(lax.negative(lax.divide(hr, lax.multiply(hl, total))))
        here = along(lax.divide(lax.subtract(hr, hl), lax.multiply(hl, hr)))
        above = along(lax.divide(hl, lax.multiply(hr, total)))
        inner = lax.add(lax.add(lax.multiply(below, part(slice(None, -2))),
                                lax.multiply(here, part(slice(1, -1)))),
                        lax.multiply(above, part(slice(2, None))))
        first = lax.divide(lax.subtract(part(slice(1, 2)), part(slice(0, 1))), dx[0])
        last = lax.divide(lax.subtract(part(slice(-1, None)), part(slice(-2, -1))), dx[-1])
    return _shape.concatenate([first, inner, last], ax)


def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """The derivatives of the sampled ``f`` along ``axis`` (every axis when
    None), by central differences inside and one-sided ones at the ends, as
    ``numpy.gradient`` with ``edge_order=1`` (the only order, as in
    jax.numpy). ``varargs`` gives the sample spacing: one scalar for every
    axis, or one scalar or 1-D coordinate array per axis. One array for one
    axis, else a list.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.gradient(mx.array([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    if edge_order not in (None, 1):
        raise NotImplementedError(f"gradient: edge_order {edge_order!r} is not supported; "
                                  "only 1")
    f = _inexact(f)
    axes = tuple(range(f.ndim)) if axis is None else _shape._axes(axis, f.ndim, "gradient")
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and _creation.asarray(varargs[0]).ndim == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: give one spacing, or one per axis ({len(axes)}), got "
                        f"{len(varargs)}")
    out = []
    for ax, spacing in zip(axes, spacings):
        n = f.shape[ax]
        if n < 2:
            raise ValueError(f"gradient: axis {ax} has {n} samples; at least 2 are needed")
        s = _creation.asarray(spacing)
        if s.ndim and (s.ndim != 1 or s.shape[0] != n):
            raise ValueError(f"gradient: the coordinates for axis {ax} must be 1-D of length "
                             f"{n}, got shape {tuple(s.shape)}")
        out.append(_gradient_along(f, ax, s))
    return out[0] if len(out) == 1 else out


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi) -> Any:
    """``p`` with jumps between neighbours along ``axis`` larger than
    ``discont`` (default ``period / 2``) removed by adding multiples of
    ``period``, as ``numpy.unwrap`` (phase unwrapping).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [round(v, 4) for v in fnp.unwrap(mx.array([0.0, 3.0, 6.5, 1.0])).tolist()]
    [0.0, 3.0, 0.2168, 1.0]
    """
    p = _inexact(p)
    ax = _shape._axis(axis, p.ndim, "unwrap") if p.ndim else 0
    if p.ndim == 0 or p.shape[ax] < 2:
        return p
    half = lax.divide(lax.astype(_creation.asarray(period), p.dtype), 2)
    discont = half if discont is None else lax.maximum(
        lax.astype(_creation.asarray(discont), p.dtype), half)
    dd = diff(p, axis=ax)
    low = lax.negative(half)
    wrapped = lax.add(lax.remainder(lax.subtract(dd, low), lax.multiply(half, 2)), low)
    # The boundary: a jump of exactly +period/2 stays positive.
    wrapped = lax.where(lax.logical_and(lax.equal(wrapped, low), lax.greater(dd, 0)), half,
                        wrapped)
    correction = lax.where(lax.less(lax.abs(dd), discont), lax.zeros((), p.dtype),
                           lax.subtract(wrapped, dd))
    shape = list(p.shape)
    shape[ax] = 1
    correction = _shape.concatenate(
        [lax.zeros(tuple(shape), p.dtype), _reduction.cumsum(correction, ax)], ax)
    return lax.add(p, correction)


# ----------------------------------------------------------------------------
# Integration and interpolation
# ----------------------------------------------------------------------------


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of the samples ``y`` along ``axis`` by the trapezoidal
    rule, at the coordinates ``x`` (1-D, or of ``y``'s shape) or spaced
    ``dx`` apart.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.trapezoid(mx.array([1.0, 2.0, 4.0]), mx.array([0.0, 1.0, 3.0])).item()
    7.5
    """
    y = _inexact(y)
    ax = _shape._axis(axis, y.ndim, "trapezoid")
    if x is None:
        d = lax.astype(_creation.asarray(dx), y.dtype)
    else:
        x = lax.astype(_creation.asarray(x), y.dtype)
        if x.ndim == 1:
            if x.shape[0] != y.shape[ax]:
                raise ValueError(f"trapezoid: x has {x.shape[0]} coordinates for an axis of "
                                 f"{y.shape[ax]} samples")
            d = diff(x)
            shape = [1] * y.ndim
            shape[ax] = d.shape[0]
            d = lax.reshape(d, tuple(shape))
        else:
            d = diff(x, axis=ax)
    hi = lax.static_slice(y, _shape._along(ax, slice(1, None)))
    lo = lax.static_slice(y, _shape._along(ax, slice(None, -1)))
    return _reduction.sum(lax.divide(lax.multiply(d, lax.add(hi, lo)), 2), ax)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """The piecewise-linear interpolant through the points ``(xp, fp)``
    (``xp`` increasing) at ``x``, as ``numpy.interp``: ``left`` and ``right``
    (default ``fp[0]`` and ``fp[-1]``, or "extrapolate" to continue the end
    segments) beyond the ends, or a periodic ``xp`` with ``period``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.interp(mx.array([0.5, 3.0]), mx.array([0.0, 1.0, 2.0]),
    ...            mx.array([0.0, 10.0, 0.0])).tolist()
    [5.0, 0.0]
    """
    x, xp, fp = _promote_inexact(x, xp, fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape[0] != fp.shape[0] or not xp.shape[0]:
        raise ValueError(f"interp: xp and fp must be 1-D of one non-zero length, got shapes "
                         f"{tuple(xp.shape)} and {tuple(fp.shape)}")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right are not used with period")
        period = lax.abs(lax.astype(_creation.asarray(period), x.dtype))
        x = lax.remainder(x, period)
        xp = lax.remainder(xp, period)
        order = _sorting.argsort(lax.stop_gradient(xp))
        xp = _indexing.take(xp, order, mode="promise_in_bounds")
        fp = _indexing.take(fp, order, mode="promise_in_bounds")
        xp = _shape.concatenate([lax.subtract(xp[-1:], period), xp, lax.add(xp[:1], period)],
                                0)
        fp = _shape.concatenate([fp[-1:], fp, fp[:1]], 0)
    n = xp.shape[0]
    if n == 1:
        inner = lax.broadcast_to(fp, tuple(x.shape)) if x.ndim else fp[0]
    else:
        i = _elementwise.clip(_sorting.searchsorted(lax.stop_gradient(xp),
                                                    lax.stop_gradient(x), side="right"),
                              1, n - 1)
        x0 = _indexing.take(xp, lax.subtract(i, 1), mode="promise_in_bounds")
        x1 = _indexing.take(xp, i, mode="promise_in_bounds")
        f0 = _indexing.take(fp, lax.subtract(i, 1), mode="promise_in_bounds")
        f1 = _indexing.take(fp, i, mode="promise_in_bounds")
        width = lax.subtract(x1, x0)
        flat = lax.equal(width, 0)  # a repeated xp: no slope (and no NaN gradient)
        slope = lax.divide(lax.subtract(f1, f0), lax.where(flat, 1, width))
        inner = lax.where(flat, f0, lax.add(f0, lax.multiply(lax.subtract(x, x0), slope)))
    if period is not None:
        return inner
    for side, value, outside, end in (("left", left, lax.less(x, xp[0]), fp[0]),
                                      ("right", right, lax.greater(x, xp[-1]), fp[-1])):
        if isinstance(value, str):
            if value != "extrapolate":
                raise ValueError(f"interp: {side} must be a value or 'extrapolate', got "
                                 f"{value!r}")
            continue  # the end segment's line already continues past the end
        fill = end if value is None else lax.astype(_creation.asarray(value), x.dtype)
        inner = lax.where(outside, fill, inner)
    return inner


# ----------------------------------------------------------------------------
# Multi-dimensional histograms
# ----------------------------------------------------------------------------


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: bool | None = None) -> tuple[Any, list[Any]]:
    """``(hist, edges)``: the counts (``int32``; weight sums with ``weights``;
    a density with ``density``) of the ``N`` points of the ``(N, D)``
    ``sample`` in the cells of a ``D``-dimensional grid, and each axis's bin
    edges, as ``jax.numpy.histogramdd``. ``bins`` is an int, or one int or
    edge array per axis; ``range`` is None or one ``(min, max)`` (or None)
    per axis. Bins along an axis are as ``histogram``'s.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> hist, edges = fnp.histogramdd(mx.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> hist.tolist()
    [[1, 0], [1, 1]]
    """
    sample = _creation.asarray(sample)
    if sample.ndim == 1:
        sample = lax.reshape(sample, (sample.shape[0], 1))
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be an (N, D) array, got shape "
                         f"{tuple(sample.shape)}")
    d = sample.shape[1]
    per_axis = bins if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = [None] * d if range is None else list(range)
    if len(per_axis) != d or len(ranges) != d:
        raise ValueError(f"histogramdd: bins and range must have one entry per dimension "
                         f"({d})")
    edges, counts, cell, outside = [], [], None, None
    for k, (axis_bins, axis_range) in enumerate(zip(per_axis, ranges)):
        column = sample[:, k]
        e = _sorting.histogram_bin_edges(column, axis_bins, axis_range)
        nb = e.shape[0] - 1
        idx = _sorting.bin_indices(column, e)
        out_k = lax.equal(idx, nb)
        cell = idx if cell is None else lax.add(lax.multiply(cell, nb), idx)
        outside = out_k if outside is None else lax.logical_or(outside, out_k)
        edges.append(e)
        counts.append(nb)
    total = math.prod(counts)
    cell = lax.where(outside, total, cell)  # outside some axis's edges: dropped
    if weights is None and not density:
        w, dtype = lax.full((), 1, mx.int32), mx.int32
    else:
        dtype = _creation.result_type(*edges)
        w = lax.full((), 1.0, dtype)
        if weights is not None:
            w = _creation.asarray(weights)
            if tuple(w.shape) != (sample.shape[0],):
                raise ValueError(f"histogramdd: weights must have one weight per point "
                                 f"({sample.shape[0]}), got shape {tuple(w.shape)}")
            dtype = _creation.result_type(w, dtype)
            w = lax.astype(w, dtype)
    hist = _indexing.at(lax.zeros((total,), dtype))[cell].add(w, mode="drop")
    hist = lax.reshape(hist, tuple(counts))
    if density:
        volume = None
        for k, e in enumerate(edges):
            width = lax.astype(diff(e), dtype)
            shape = [1] * d
            shape[k] = counts[k]
            width = lax.reshape(width, tuple(shape))
            volume = width if volume is None else lax.multiply(volume, width)
        hist = lax.divide(lax.divide(hist, _reduction.sum(hist)), volume)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: bool | None = None) -> tuple[Any, Any, Any]:
    """``(hist, xedges, yedges)``: ``histogramdd`` of the points ``(x[i],
    y[i])``; ``bins`` is an int or an edge array for both axes, or a pair of
    them.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> hist, xe, ye = fnp.histogram2d(mx.array([0.0, 1.0]), mx.array([0.0, 1.0]), bins=2)
    >>> hist.tolist()
    [[1, 0], [0, 1]]
    """
    x, y = _creation.asarray(x), _creation.asarray(y)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"histogram2d: x and y must be 1-D of one length, got shapes "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    if isinstance(bins, (list, tuple)) and len(bins) == 2:
        per_axis = list(bins)
    elif isinstance(bins, (int, np.integer)):
        per_axis = [bins, bins]
    else:
        per_axis = [bins, bins]  # one edge array for both axes
    hist, (xedges, yedges) = histogramdd(_shape.stack([x, y], 1), per_axis, range, weights,
                                         density)
    return hist, xedges, yedges


# ----------------------------------------------------------------------------
# Convolution and products
# ----------------------------------------------------------------------------

_CONV_MODES = ("full", "same", "valid")


def _full_correlation(a: Any, v: Any, fname: str) -> Any:
    """``c[k] = sum_n a[n + k - (len(v) - 1)] * v[n]`` for every overlap of
    the 1-D ``a`` and ``v`` (length ``len(a) + len(v) - 1``)."""
    for name, x in (("a", a), ("v", v)):
        if x.ndim != 1 or not x.shape[0]:
            raise ValueError(f"{fname}: {name} must be a non-empty 1-D array, got shape "
                             f"{tuple(x.shape)}")
    if is_complex(a.dtype):
        raise TypeError(f"{fname}: complex inputs are not supported (MLX's convolution is "
                        "real)")
    n, m = a.shape[0], v.shape[0]
    y = lax.conv_general(lax.reshape(a, (1, n, 1)), lax.reshape(v, (1, m, 1)), (1,),
                         ((m - 1,), (m - 1,)), (1,), (1,), 1, False)
    return lax.reshape(y, (n + m - 1,))


def _mode_slice(full: Any, n: int, m: int, mode: str, fname: str) -> Any:
    if mode not in _CONV_MODES:
        raise ValueError(f"{fname}: mode must be one of {_CONV_MODES}, got {mode!r}")
    if mode == "full":
        return full
    short, long = min(n, m), max(n, m)
    start = (short - 1) // 2 if mode == "same" else short - 1
    length = long if mode == "same" else long - short + 1
    return full[start:start + length]


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: DTypeLike | None = None) -> Any:
    """The discrete linear convolution of the 1-D ``a`` and ``v``, as
    ``numpy.convolve``: "full" (every overlap), "same" (the length of the
    longer, centred) or "valid" (full overlaps only). Integer inputs give
    float32, as in jax.numpy; ``precision`` changes nothing.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.convolve(mx.array([1.0, 2.0, 3.0]), mx.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    a, v = _promote_inexact(a, v)
    full = _full_correlation(a, _shape.flip(v), "convolve")
    out = _mode_slice(full, a.shape[0], v.shape[0], mode, "convolve")
    return out if preferred_element_type is None else _elementwise.astype(
        out, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: DTypeLike | None = None) -> Any:
    """The cross-correlation ``c[k] = sum_n a[n + k] * v[n]`` of the 1-D
    ``a`` and ``v``, as ``numpy.correlate``; ``mode`` as in ``convolve``
    (default "valid").

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.correlate(mx.array([1.0, 2.0, 3.0]), mx.array([0.0, 1.0])).tolist()
    [2.0, 3.0]
    """
    a, v = _promote_inexact(a, v)
    full = _full_correlation(a, v, "correlate")
    out = _mode_slice(full, a.shape[0], v.shape[0], mode, "correlate")
    return out if preferred_element_type is None else _elementwise.astype(
        out, preferred_element_type)


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: the blocks ``a[i, j, ...] * b`` laid out in
    ``a``'s pattern (the operands first get leading length-1 axes to one
    ndim), as ``numpy.kron``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.kron(mx.array([1, 10]), mx.array([1, 2, 3])).tolist()
    [1, 2, 3, 10, 20, 30]
    """
    a, b = _creation.asarray(a), _creation.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # Axis i of a and of b side by side, then merged.
    wide_a = lax.reshape(a, tuple(d for s in sa for d in (s, 1)))
    wide_b = lax.reshape(b, tuple(d for s in sb for d in (1, s)))
    return lax.reshape(lax.multiply(wide_a, wide_b), tuple(x * y for x, y in zip(sa, sb)))


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of the 1-D ``x``: its columns the powers
    ``x**(N-1), ..., x, 1`` (from ``1`` up when ``increasing``), ``N``
    defaulting to ``len(x)``. Its gradient is finite at ``x = 0``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.vander(mx.array([2, 3]), 3).tolist()
    [[4, 2, 1], [9, 3, 1]]
    """
    x = _creation.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-D, got shape {tuple(x.shape)}")
    n = x.shape[0] if N is None else _shape._index(N, "vander", "N")
    if n < 0:
        raise ValueError(f"vander: N must not be negative, got {n}")
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    exponents = mx.array(powers, dtype=x.dtype if x.dtype != mx.bool_ else mx.int32)
    return lax.power(lax.reshape(x, (x.shape[0], 1)), lax.reshape(exponents, (1, n)))


def _check_vector_axis(x1: Any, x2: Any, n1: int, n2: int, fname: str) -> None:
    if n1 != n2:
        raise ValueError(f"{fname}: the contracted axes differ in length: {n1} in x1 "
                         f"(shape {tuple(x1.shape)}), {n2} in x2 (shape {tuple(x2.shape)})")


def matvec(x1: Any, x2: Any, /) -> Any:
    """The matrix-vector products of the matrices ``x1`` (``(..., m, n)``)
    and the vectors ``x2`` (``(..., n)``), batch axes broadcast: ``(..., m)``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.matvec(mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    x1, x2 = _creation.asarray(x1), _creation.asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: x1 must be at least 2-D and x2 at least 1-D, got shapes "
                         f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    _check_vector_axis(x1, x2, x1.shape[-1], x2.shape[-1], "matvec")
    out = _linalg.matmul(x1, lax.expand_dims(x2, (x2.ndim,)))
    return lax.squeeze(out, (out.ndim - 1,))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """The vector-matrix products of the (conjugated) vectors ``x1``
    (``(..., n)``) and the matrices ``x2`` (``(..., n, m)``): ``(..., m)``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.vecmat(mx.array([1.0, 1.0]), mx.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [4.0, 6.0]
    """
    x1, x2 = _creation.asarray(x1), _creation.asarray(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: x1 must be at least 1-D and x2 at least 2-D, got shapes "
                         f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    _check_vector_axis(x1, x2, x1.shape[-1], x2.shape[-2], "vecmat")
    row = lax.expand_dims(_elementwise.conj(x1), (x1.ndim - 1,))
    out = _linalg.matmul(row, x2)
    return lax.squeeze(out, (out.ndim - 2,))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: DTypeLike | None = None) -> Any:
    """The dot products ``sum(conj(x1) * x2)`` along ``axis`` of the
    broadcast ``x1`` and ``x2``, as the array API's ``vecdot``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.vecdot(mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    x1, x2 = _creation.asarray(x1), _creation.asarray(x2)
    n1 = x1.shape[_shape._axis(axis, x1.ndim, "vecdot")] if x1.ndim else None
    n2 = x2.shape[_shape._axis(axis, x2.ndim, "vecdot")] if x2.ndim else None
    if n1 is None or n2 is None:
        raise ValueError("vecdot: x1 and x2 must have at least one dimension")
    _check_vector_axis(x1, x2, n1, n2, "vecdot")
    x1, x2 = _shape.broadcast_arrays(x1, x2)
    out = _reduction.sum(lax.multiply(_elementwise.conj(x1), x2), axis)
    return out if preferred_element_type is None else _elementwise.astype(
        out, preferred_element_type)


def einsum_path(subscripts: str, /, *operands: Any,
                optimize: bool | str | list = "auto") -> tuple[list[tuple[int, ...]], str]:
    """An order of pairwise contractions for ``einsum(subscripts, *operands)``
    and a report on its cost, from NumPy's ``einsum_path`` on the operands'
    shapes: ``optimize`` is "optimal", "greedy", "auto" (or True: optimal
    for up to 4 operands, else greedy) or an explicit path. The path is a
    list of tuples of operand positions, as jax.numpy's; the report is
    NumPy's text.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.einsum_path("ij,jk,kl->il", mx.ones((2, 3)), mx.ones((3, 4)), mx.ones((4, 5)))[0]
    [(0, 1), (0, 1)]
    """
    # Zero-strided stand-ins: einsum_path only reads their shapes.
    stand_ins = [np.broadcast_to(np.zeros((), np.float32), tuple(_creation.asarray(o).shape))
                 for o in operands]
    if optimize in ("auto", True):  # as opt_einsum's "auto": exhaustive for few operands
        optimize = "optimal" if len(operands) <= 4 else "greedy"
    elif isinstance(optimize, list):
        optimize = ["einsum_path", *optimize]
    try:
        path, report = np.einsum_path(subscripts, *stand_ins, optimize=optimize)
    except ValueError as e:
        raise ValueError(f"einsum_path: {e}") from None
    return [tuple(step) for step in path[1:]], report
