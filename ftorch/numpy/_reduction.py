"""Reductions and scans, as in NumPy / jax.numpy: axis parsing (``None``, an
int or a tuple, negative axes), ``keepdims``, ``dtype=``, ``where=`` and
``initial=``, argument checks and the empty-input cases, over the strict
wrappers of ``ftorch.primitives.reduction``; ``trace`` and the NaN-ignoring
reductions (``nansum``, ``nanmean``, ``nanvar``, ``nanmax``, ``nanargmax``,
``nancumsum``...) are composites of them. ``axis=None`` on a scan or an
argmax means the flattened array.

Masks (``where=``, the NaNs of the nan-reductions) select before any
arithmetic, so that masked-out elements, NaN or not, get a zero gradient and
put no NaN into the others'.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.sum(mx.ones((2, 3)), axis=-1).tolist()
[3.0, 3.0]
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Tracer, is_complex, is_floating, is_inexact
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.numpy import _creation, _elementwise, _shape
from ftorch.primitives.reduction import kept_shape, normalize_axes, normalize_axis
from ftorch.typing import Axis

__all__ = [
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
    "var", "std", "cumsum", "cumprod", "logsumexp", "trace", "nansum", "nanprod", "nanmean",
    "nanvar", "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin", "nancumsum",
    "nancumprod",
]


def _prepare(x: Any, axis: Axis, keepdims: bool, fname: str) -> tuple[Any, tuple[int, ...], bool]:
    x = _creation.asarray(x)
    return x, normalize_axes(axis, x.ndim, fname), bool(keepdims)


def _in_dtype(reduce: Any, x: Any, dtype: Any, fname: str, *params: Any) -> Any:
    """``reduce(x, *params)`` computed in ``dtype``, as jax.numpy's ``dtype=``:
    the input is cast to it, and so is the result (a mean of integers is a
    float until cast back)."""
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    return _elementwise.astype(reduce(_elementwise.astype(x, dtype), *params), dtype)


def _check_nonempty(shape: tuple[int, ...], axes: tuple[int, ...], fname: str) -> None:
    for a in axes:
        if shape[a] == 0:
            raise ValueError(
                f"{fname}: cannot reduce over axis {a} of size 0 (the {fname} of no "
                "elements is undefined)")


def _flatten(x: Any) -> Any:
    """``x`` as one axis: what ``axis=None`` scans (or searches)."""
    return x if x.ndim == 1 else lax.reshape(x, (x.size,))


def _no_out(out: Any, fname: str) -> None:
    if out is not None:  # as jax.numpy: accepted only as None
        raise NotImplementedError(
            f"{fname}: the 'out' argument is not supported (arrays are immutable); "
            "use the returned array")


def _as(x: Any, dtype: mx.Dtype) -> Any:
    return x if x.dtype == dtype else lax.astype(x, dtype)


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple:
    if keepdims:
        return kept_shape(shape, axes)
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _mask(where: Any, shape: tuple[int, ...], fname: str) -> Any:
    """``where=`` as a boolean array that broadcasts to the input's ``shape``."""
    w = _creation.asarray(where)
    if w.dtype != mx.bool_:
        raise ValueError(f"{fname}: where must be a boolean array, got dtype {w.dtype}")
    ws = tuple(w.shape)
    try:
        fits = np.broadcast_shapes(ws, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{fname}: where of shape {ws} does not broadcast to the input's shape {shape}")
    return w


def _initial(initial: Any, dtype: mx.Dtype, fname: str) -> Any:
    """``initial=`` as a 0-d array of ``dtype`` (a traced one stays traced)."""
    if isinstance(initial, (mx.array, Tracer)):
        if initial.ndim:
            raise ValueError(
                f"{fname}: initial must be a scalar, got an array of shape {tuple(initial.shape)}")
        return _as(initial, dtype)
    value = np.asarray(initial)
    if value.ndim:
        raise ValueError(
            f"{fname}: initial must be a scalar, got an array of shape {value.shape}")
    if value.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: initial must be a number, got {initial!r}")
    return mx.array(value.item(), dtype)


def _extreme_value(dtype: mx.Dtype, lowest: bool) -> Any:
    """The identity of max (``lowest``) or min in ``dtype``."""
    if dtype == mx.bool_:
        return not lowest
    if is_inexact(dtype):
        return -math.inf if lowest else math.inf
    info = mx.iinfo(dtype)
    return info.min if lowest else info.max


def _float_dtypes(dtype: mx.Dtype) -> tuple[mx.Dtype, mx.Dtype]:
    """The dtypes a mean or a variance of ``dtype`` is computed in, and
    returned in: half precisions accumulate in float32, integers become float32."""
    if dtype in (mx.float16, mx.bfloat16):
        return mx.float32, dtype
    if is_inexact(dtype):
        return dtype, dtype
    return mx.float32, mx.float32


def _masked_mean(x: Any, mask: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """The mean of the elements of ``x`` where ``mask`` holds (NaN where none do)."""
    cd, rd = _float_dtypes(x.dtype)
    full = lax.broadcast_to(mask, tuple(x.shape))
    total = lax.sum(lax.where(full, _as(x, cd), mx.array(0, cd)), axes, keepdims)
    count = lax.sum(lax.astype(full, cd), axes, keepdims)
    return _as(lax.divide(total, count), rd)


def _masked_var(x: Any, mask: Any, axes: tuple[int, ...], keepdims: bool, ddof: int,
                fname: str) -> Any:
    """The variance of the elements of ``x`` where ``mask`` holds, with
    ``ddof``; NaN where fewer than ``ddof + 1`` elements are selected."""
    if is_complex(x.dtype):
        raise TypeError(f"{fname}: complex input is not supported with a mask")
    cd, rd = _float_dtypes(x.dtype)
    full = lax.broadcast_to(mask, tuple(x.shape))
    x = _as(x, cd)
    zero = mx.array(0, cd)
    count = lax.sum(lax.astype(full, cd), axes, True)
    # No selected element: a mean of 0 rather than 0/0, whose NaN would reach
    # the gradient through the division.
    mu = lax.divide(lax.sum(lax.where(full, x, zero), axes, True), lax.maximum(count, 1))
    centered = lax.where(full, lax.subtract(x, mu), zero)
    squares = lax.sum(lax.multiply(centered, centered), axes, keepdims)
    dof = lax.subtract(count if keepdims else lax.reshape(count, tuple(squares.shape)), ddof)
    ok = lax.greater(dof, 0)
    out = lax.where(ok, lax.divide(squares, lax.where(ok, dof, 1)), math.nan)
    return _as(out, rd)


def _nan_without_dof(y: Any, dof: int) -> Any:
    """``y`` (a variance) as NaN when it has no degrees of freedom left, as jax.numpy."""
    if dof > 0 or not is_inexact(y.dtype):
        return y
    # Cut off: y's own gradient is 0 * inf there.
    return lax.where(mx.array(False), lax.stop_gradient(y), mx.array(math.nan, y.dtype))


def _safe_sqrt(v: Any) -> Any:
    """``sqrt(v)`` whose gradient is 0 rather than inf where ``v`` is 0 (as ``std``'s)."""
    zero = lax.equal(v, 0)
    return lax.where(zero, 0, lax.sqrt(lax.where(zero, 1, v)))


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[a] for a in axes)


# ----------------------------------------------------------------------------
# sum, mean, prod
# ----------------------------------------------------------------------------


def _sum_or_prod(reduce: Any, combine: Any, identity: int, x: Any, axes: tuple[int, ...],
                 keepdims: bool, dtype: Any, initial: Any, where: Any, fname: str) -> Any:
    """``sum`` or ``prod``: masked-out elements count as the ``identity``, and
    ``combine`` joins ``initial`` to the result."""
    if dtype is not None:
        dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
        x = _elementwise.astype(x, dtype)
    if where is not None:
        x = lax.where(_mask(where, tuple(x.shape), fname), x, mx.array(identity, x.dtype))
    y = reduce(x, axes, keepdims)
    if dtype is not None:
        y = _elementwise.astype(y, dtype)
    if initial is not None:
        y = combine(y, _initial(initial, y.dtype, fname))
    return y


def sum(x: Any, axis: Axis = None, keepdims: bool = False, *,
        dtype: DTypeLike | None = None, out: None = None, initial: Any = None,
        where: Any = None) -> Any:
    """Sum over ``axis`` (all axes when ``None``), as ``numpy.sum``. With
    ``dtype`` (in any spelling), the input is cast to it first, and so is the
    result, as in jax.numpy; the other reductions and scans take it too.
    ``where`` (a boolean array broadcasting to ``x``) leaves elements out
    (an empty sum is 0); ``initial`` is added to the result. ``out`` is not
    supported, as in jax.numpy.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.sum(mx.ones((2, 3)), axis=1).tolist()
    [3.0, 3.0]
    >>> fnp.sum(mx.array([True, True, False]), dtype="float16")
    array(2, dtype=float16)
    >>> fnp.sum(mx.array([1.0, 2.0, 4.0]), where=mx.array([True, False, True]), initial=10).item()
    15.0
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "sum")
    _no_out(out, "sum")
    return _sum_or_prod(lax.sum, lax.add, 0, x, axes, keepdims, dtype, initial, where, "sum")


def prod(x: Any, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike | None = None, out: None = None, initial: Any = None,
         where: Any = None) -> Any:
    """Product over ``axis``, as ``numpy.prod``; derivatives are exact with
    zeros. ``where`` leaves elements out (an empty product is 1);
    ``initial`` multiplies the result.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.prod(mx.array([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()
    [3.0, 8.0]
    >>> ft.grad(fnp.prod)(mx.array([2.0, 0.0, 3.0])).tolist()
    [0.0, 6.0, 0.0]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "prod")
    _no_out(out, "prod")
    return _sum_or_prod(lax.prod, lax.multiply, 1, x, axes, keepdims, dtype, initial, where,
                        "prod")


def _mean(x: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, where: Any,
          fname: str) -> Any:
    if where is None:
        if dtype is not None:
            return _in_dtype(lax.mean, x, dtype, fname, axes, keepdims)
        return lax.mean(x, axes, keepdims)
    mask = _mask(where, tuple(x.shape), fname)
    if dtype is None:
        return _masked_mean(x, mask, axes, keepdims)
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    return _as(_masked_mean(_as(x, dtype), mask, axes, keepdims), dtype)


def mean(x: Any, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike | None = None, out: None = None, where: Any = None) -> Any:
    """Arithmetic mean over ``axis``, as ``numpy.mean`` (integer inputs give
    float32). With ``where``, the mean of the selected elements (NaN where
    none is).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.mean(mx.array([[1.0, 2.0], [3.0, 5.0]]), axis=-1).tolist()
    [1.5, 4.0]
    >>> fnp.mean(mx.array([1.0, 2.0, 6.0]), where=mx.array([True, False, True])).item()
    3.5
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "mean")
    _no_out(out, "mean")
    return _mean(x, axes, keepdims, dtype, where, "mean")


# ----------------------------------------------------------------------------
# max, min, argmax, argmin
# ----------------------------------------------------------------------------


def _extreme(reduce: Any, combine: Any, lowest: bool, x: Any, axes: tuple[int, ...],
             keepdims: bool, initial: Any, where: Any, fname: str) -> Any:
    """``max`` (``lowest``: masked-out elements become the dtype's lowest
    value) or ``min``; ``combine`` joins ``initial`` to the result."""
    shape = tuple(x.shape)
    if initial is None:
        if where is not None:
            raise ValueError(
                f"{fname}: where= needs initial= as well: the {fname} has no identity "
                "to stand for the masked-out elements (as in jax.numpy)")
        _check_nonempty(shape, axes, fname)
        return reduce(x, axes, keepdims)
    init = _initial(initial, x.dtype, fname)
    if builtins.any(shape[a] == 0 for a in axes):
        return lax.broadcast_to(init, _reduced_shape(shape, axes, keepdims))
    if where is not None:
        x = lax.where(_mask(where, shape, fname), x,
                      mx.array(_extreme_value(x.dtype, lowest), x.dtype))
    return combine(reduce(x, axes, keepdims), init)


def max(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None,
        initial: Any = None, where: Any = None) -> Any:
    """Maximum over ``axis``, as ``numpy.max``.

    Where several elements tie for the maximum, the gradient is shared
    equally among them. ``initial`` takes part in the maximum (and is the
    result over an empty axis, which is an error without it); ``where``
    leaves elements out and needs ``initial``, as in jax.numpy.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.max(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=0).tolist()
    [3.0, 4.0]
    >>> ft.grad(fnp.max)(mx.array([1.0, 3.0, 3.0])).tolist()
    [0.0, 0.5, 0.5]
    >>> fnp.max(mx.array([5.0, 1.0]), where=mx.array([False, True]), initial=0.0).item()
    1.0
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "max")
    _no_out(out, "max")
    return _extreme(lax.max, lax.maximum, True, x, axes, keepdims, initial, where, "max")


def min(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None,
        initial: Any = None, where: Any = None) -> Any:
    """Minimum over ``axis``, as ``numpy.min``; ties share the gradient
    equally. ``initial`` and ``where`` as in ``max``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.min(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=1, keepdims=True).tolist()
    [[1.0], [2.0]]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "min")
    _no_out(out, "min")
    return _extreme(lax.min, lax.minimum, False, x, axes, keepdims, initial, where, "min")


amax, amin = max, min


def _arg_extreme(arg: Any, x: Any, axis: Any, keepdims: bool, fname: str) -> Any:
    """``arg`` (lax.argmax or lax.argmin) along ``axis``, or over the flattened
    array when it is ``None``."""
    x = _creation.asarray(x)
    ax = normalize_axis(axis, x.ndim, fname)
    keepdims = bool(keepdims) and x.ndim > 0  # MLX fails on 0-d with keepdims
    if x.size == 0:
        shape = tuple(x.shape)
        if ax is None or shape[ax] == 0:
            where = "an empty array" if ax is None else f"axis {ax} of size 0"
            raise ValueError(f"{fname}: cannot take the {fname} over {where}")
        # Other axes are empty: so is the result (MLX refuses these).
        return lax.zeros(kept_shape(shape, (ax,)) if keepdims else shape[:ax] + shape[ax + 1:],
                         mx.uint32)
    if ax is None:
        out = arg(_flatten(x), 0)
        return lax.reshape(out, (1,) * x.ndim) if keepdims else out
    return arg(x, ax, keepdims)


def argmax(x: Any, axis: int | None = None, keepdims: bool = False, *,
           out: None = None) -> Any:
    """Index of the maximum along ``axis`` (of the flattened array when ``None``);
    the first one at ties. Results are ``uint32``, as MLX gives them.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argmax(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=1).tolist()
    [1, 0]
    """
    _no_out(out, "argmax")
    return _arg_extreme(lax.argmax, x, axis, keepdims, "argmax")


def argmin(x: Any, axis: int | None = None, keepdims: bool = False, *,
           out: None = None) -> Any:
    """Index of the minimum along ``axis`` (of the flattened array when ``None``);
    the first one at ties.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argmin(mx.array([3.0, 1.0, 1.0])).item()
    1
    """
    _no_out(out, "argmin")
    return _arg_extreme(lax.argmin, x, axis, keepdims, "argmin")


# ----------------------------------------------------------------------------
# all, any
# ----------------------------------------------------------------------------


def _truth(x: Any, where: Any, neutral: bool, fname: str) -> Any:
    """``x`` as booleans, ``neutral`` where ``where`` is False."""
    mask = _mask(where, tuple(x.shape), fname)
    if x.dtype != mx.bool_:
        x = lax.not_equal(x, 0)
    return lax.where(mask, x, neutral)


def all(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None,
        where: Any = None) -> Any:
    """Whether every element along ``axis`` is true (nonzero), as ``numpy.all``;
    ``where`` leaves elements out (all of nothing is True).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.all(mx.array([[1, 0], [1, 1]]), axis=1).tolist()
    [False, True]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "all")
    _no_out(out, "all")
    if where is not None:
        x = _truth(x, where, True, "all")
    return lax.all(x, axes, keepdims)


def any(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None,
        where: Any = None) -> Any:
    """Whether some element along ``axis`` is true (nonzero), as ``numpy.any``;
    ``where`` leaves elements out (any of nothing is False).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.any(mx.array([[1, 0], [0, 0]]), axis=1).tolist()
    [True, False]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "any")
    _no_out(out, "any")
    if where is not None:
        x = _truth(x, where, False, "any")
    return lax.any(x, axes, keepdims)


# ----------------------------------------------------------------------------
# var, std
# ----------------------------------------------------------------------------


def _ddof(ddof: Any, fname: str) -> int:
    if isinstance(ddof, bool):
        raise TypeError(f"{fname}: ddof must be an int, got {ddof!r}")
    try:
        return operator.index(ddof)
    except TypeError:
        raise TypeError(f"{fname}: ddof must be an int, got {ddof!r}") from None


def _var(x: Any, axes: tuple[int, ...], keepdims: bool, ddof: int, dtype: Any, where: Any,
         fname: str) -> Any:
    if where is None:
        y = (_in_dtype(lax.var, x, dtype, fname, axes, keepdims, ddof) if dtype is not None
             else lax.var(x, axes, keepdims, ddof))
        return _nan_without_dof(y, _count(tuple(x.shape), axes) - ddof)
    mask = _mask(where, tuple(x.shape), fname)
    if dtype is None:
        return _masked_var(x, mask, axes, keepdims, ddof, fname)
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    return _as(_masked_var(_as(x, dtype), mask, axes, keepdims, ddof, fname), dtype)


def var(x: Any, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *,
        dtype: DTypeLike | None = None, out: None = None, where: Any = None) -> Any:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom, as
    ``numpy.var``; with ``where``, of the selected elements. As in jax.numpy
    (NumPy gives inf there), a slice with no degrees of freedom left (no more
    than ``ddof`` elements) gives NaN, with a zero gradient.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.var(mx.array([1.0, 2.0, 3.0, 4.0]), ddof=1).item()
    1.6666666269302368
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "var")
    ddof = _ddof(ddof, "var")
    _no_out(out, "var")
    return _var(x, axes, keepdims, ddof, dtype, where, "var")


def _std(x: Any, axes: tuple[int, ...], keepdims: bool, ddof: int, dtype: Any, where: Any,
         fname: str) -> Any:
    if where is None:
        y = (_in_dtype(lax.std, x, dtype, fname, axes, keepdims, ddof) if dtype is not None
             else lax.std(x, axes, keepdims, ddof))
        return _nan_without_dof(y, _count(tuple(x.shape), axes) - ddof)
    return _safe_sqrt(_var(x, axes, keepdims, ddof, dtype, where, fname))


def std(x: Any, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *,
        dtype: DTypeLike | None = None, out: None = None, where: Any = None) -> Any:
    """Standard deviation over ``axis``, as ``numpy.std`` (``where`` and the
    slices without degrees of freedom as in ``var``).

    Where the standard deviation is 0 (a constant slice) its gradient is
    taken as 0, as ``abs`` has at 0.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.std(mx.array([1.0, 3.0])).item()
    1.0
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "std")
    ddof = _ddof(ddof, "std")
    _no_out(out, "std")
    return _std(x, axes, keepdims, ddof, dtype, where, "std")


# ----------------------------------------------------------------------------
# cumsum, cumprod
# ----------------------------------------------------------------------------


def _scan(scan: Any, x: Any, axis: Any, reverse: bool, inclusive: bool,
          dtype: DTypeLike | None, fname: str) -> Any:
    """``scan`` (lax.cumsum or lax.cumprod) along ``axis``, or along the
    flattened array when it is ``None``."""
    x = _creation.asarray(x)
    if axis is None:
        x, axis = _flatten(x), 0
    else:
        axis = normalize_axis(axis, x.ndim, fname)
    if dtype is not None:
        return _in_dtype(scan, x, dtype, fname, axis, bool(reverse), bool(inclusive))
    return scan(x, axis, bool(reverse), bool(inclusive))


def cumsum(x: Any, axis: int | None = None, *, reverse: bool = False,
           inclusive: bool = True, dtype: DTypeLike | None = None, out: None = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array when ``None``).

    ``reverse`` sums from the end; ``inclusive=False`` leaves each element
    out of its own sum (the first result is 0).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cumsum(mx.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0, 6.0]
    >>> fnp.cumsum(mx.array([1.0, 2.0, 3.0]), reverse=True, inclusive=False).tolist()
    [5.0, 3.0, 0.0]
    """
    _no_out(out, "cumsum")
    return _scan(lax.cumsum, x, axis, reverse, inclusive, dtype, "cumsum")


def cumprod(x: Any, axis: int | None = None, *, reverse: bool = False,
            inclusive: bool = True, dtype: DTypeLike | None = None, out: None = None) -> Any:
    """Cumulative product along ``axis`` (of the flattened array when ``None``).

    Its derivatives are exact when ``x`` has zeros (no division by ``x``).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cumprod(mx.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 2.0, 6.0]
    >>> ft.grad(lambda x: fnp.cumprod(x).sum())(mx.array([2.0, 0.0, 3.0])).tolist()
    [1.0, 8.0, 0.0]
    """
    _no_out(out, "cumprod")
    return _scan(lax.cumprod, x, axis, reverse, inclusive, dtype, "cumprod")


# ----------------------------------------------------------------------------
# logsumexp
# ----------------------------------------------------------------------------


def logsumexp(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x)))`` over ``axis``, computed stably for large inputs.

    A slice that is entirely ``-inf`` (or empty) gives ``-inf``, and its
    gradient is 0 there rather than nan.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.logsumexp(mx.array([1000.0, 1000.0])).item()
    1000.6931762695312
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "logsumexp")
    if x.size == 0:
        # MLX refuses empty input; the log of an empty sum is -inf.
        shape = tuple(x.shape)
        out = kept_shape(shape, axes) if keepdims else tuple(
            d for i, d in enumerate(shape) if i not in axes)
        dtype = x.dtype if is_floating(x.dtype) else mx.float32
        return lax.full(out, -math.inf, dtype)
    return lax.logsumexp(x, axes, keepdims)


# ----------------------------------------------------------------------------
# trace
# ----------------------------------------------------------------------------


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1,
          dtype: DTypeLike | None = None, out: None = None) -> Any:
    """The sum of diagonal ``offset`` of the matrices over ``axis1`` and
    ``axis2`` (see ``diagonal``), as ``numpy.trace``; ``dtype`` as in ``sum``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.trace(mx.arange(9).reshape(3, 3)).item(), fnp.trace(mx.ones((2, 3)), offset=1).item()
    (12, 2.0)
    >>> ft.grad(fnp.trace)(mx.ones((2, 2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _no_out(out, "trace")
    d = _shape._diagonal(a, offset, axis1, axis2, "trace")
    return _sum_or_prod(lax.sum, lax.add, 0, d, (d.ndim - 1,), False, dtype, None, None,
                        "trace")


# ----------------------------------------------------------------------------
# NaN-ignoring reductions
# ----------------------------------------------------------------------------
#
# NaNs are replaced by the reduction's identity before it runs (a ``where``
# on the input, not on the output): the NaN entries get a zero gradient and
# the others a finite one. Integer and boolean inputs, which hold no NaN,
# take the plain reduction.


def _without_nans(x: Any, value: Any) -> Any:
    return lax.where(lax.isnan(x), mx.array(value, x.dtype), x)


def nansum(x: Any, axis: Axis = None, keepdims: bool = False, *,
           dtype: DTypeLike | None = None, out: None = None, initial: Any = None,
           where: Any = None) -> Any:
    """``sum`` with the NaNs left out (counted as 0), as ``numpy.nansum``;
    their gradient is 0.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([1.0, mx.nan, 2.0])
    >>> fnp.nansum(x).item(), ft.grad(fnp.nansum)(x).tolist()
    (3.0, [1.0, 0.0, 1.0])
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "nansum")
    _no_out(out, "nansum")
    if is_inexact(x.dtype):
        x = _without_nans(x, 0)
    return _sum_or_prod(lax.sum, lax.add, 0, x, axes, keepdims, dtype, initial, where, "nansum")


def nanprod(x: Any, axis: Axis = None, keepdims: bool = False, *,
            dtype: DTypeLike | None = None, out: None = None, initial: Any = None,
            where: Any = None) -> Any:
    """``prod`` with the NaNs left out (counted as 1), as ``numpy.nanprod``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanprod(mx.array([2.0, mx.nan, 3.0])).item()
    6.0
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "nanprod")
    _no_out(out, "nanprod")
    if is_inexact(x.dtype):
        x = _without_nans(x, 1)
    return _sum_or_prod(lax.prod, lax.multiply, 1, x, axes, keepdims, dtype, initial, where,
                        "nanprod")


def _not_nan(x: Any, where: Any, fname: str) -> Any:
    """Where ``x`` is not NaN (and ``where`` holds)."""
    keep = lax.logical_not(lax.isnan(x))
    return keep if where is None else lax.logical_and(keep, _mask(where, tuple(x.shape), fname))


def nanmean(x: Any, axis: Axis = None, keepdims: bool = False, *,
            dtype: DTypeLike | None = None, out: None = None, where: Any = None) -> Any:
    """``mean`` of the elements that are not NaN, as ``numpy.nanmean``: NaN
    (without a warning) where a slice has none.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([1.0, mx.nan, 2.0])
    >>> fnp.nanmean(x).item(), ft.grad(fnp.nanmean)(x).tolist()
    (1.5, [0.5, 0.0, 0.5])
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "nanmean")
    _no_out(out, "nanmean")
    if not is_inexact(x.dtype):
        return _mean(x, axes, keepdims, dtype, where, "nanmean")
    mask = _not_nan(x, where, "nanmean")
    if dtype is None:
        return _masked_mean(x, mask, axes, keepdims)
    dtype = to_mlx_dtype(dtype, "nanmean: dtype")
    return _as(_masked_mean(_as(x, dtype), mask, axes, keepdims), dtype)


def _nan_var_or_std(x: Any, axis: Axis, keepdims: bool, ddof: Any, dtype: Any, out: Any,
                    where: Any, root: bool, fname: str) -> Any:
    """``nanvar``, or ``nanstd`` with ``root``."""
    x, axes, keepdims = _prepare(x, axis, keepdims, fname)
    ddof = _ddof(ddof, fname)
    _no_out(out, fname)
    if not is_inexact(x.dtype):
        return (_std if root else _var)(x, axes, keepdims, ddof, dtype, where, fname)
    mask = _not_nan(x, where, fname)
    if dtype is None:
        y = _masked_var(x, mask, axes, keepdims, ddof, fname)
    else:
        dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
        y = _as(_masked_var(_as(x, dtype), mask, axes, keepdims, ddof, fname), dtype)
    return _safe_sqrt(y) if root else y


def nanvar(x: Any, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *,
           dtype: DTypeLike | None = None, out: None = None, where: Any = None) -> Any:
    """``var`` of the elements that are not NaN, as ``numpy.nanvar``: NaN
    where a slice has no more than ``ddof`` of them. NaN entries get a zero
    gradient.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([1.0, mx.nan, 3.0])
    >>> fnp.nanvar(x).item(), ft.grad(fnp.nanvar)(x).tolist()
    (1.0, [-1.0, 0.0, 1.0])
    """
    return _nan_var_or_std(x, axis, keepdims, ddof, dtype, out, where, False, "nanvar")


def nanstd(x: Any, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *,
           dtype: DTypeLike | None = None, out: None = None, where: Any = None) -> Any:
    """``std`` of the elements that are not NaN, as ``numpy.nanstd`` (the
    square root of ``nanvar``; its gradient is 0 where it is 0, as ``std``'s).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanstd(mx.array([[1.0, mx.nan, 3.0]]), axis=1).tolist()
    [1.0]
    """
    return _nan_var_or_std(x, axis, keepdims, ddof, dtype, out, where, True, "nanstd")


def _nan_extreme(reduce: Any, combine: Any, lowest: bool, x: Any, axis: Axis, keepdims: bool,
                 out: Any, initial: Any, where: Any, fname: str) -> Any:
    x, axes, keepdims = _prepare(x, axis, keepdims, fname)
    _no_out(out, fname)
    if not is_inexact(x.dtype):
        return _extreme(reduce, combine, lowest, x, axes, keepdims, initial, where, fname)
    y = _extreme(reduce, combine, lowest, _without_nans(x, _extreme_value(x.dtype, lowest)),
                 axes, keepdims, initial, where, fname)
    if initial is not None:  # then an all-NaN slice gives initial, as in jax.numpy
        return y
    return lax.where(lax.all(lax.isnan(x), axes, keepdims), math.nan, y)


def nanmax(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None,
           initial: Any = None, where: Any = None) -> Any:
    """``max`` of the elements that are not NaN, as ``numpy.nanmax``: NaN
    (without a warning) where a slice has none, unless ``initial`` is given.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanmax(mx.array([[1.0, mx.nan], [mx.nan, mx.nan]]), axis=1).tolist()
    [1.0, nan]
    """
    return _nan_extreme(lax.max, lax.maximum, True, x, axis, keepdims, out, initial, where,
                        "nanmax")


def nanmin(x: Any, axis: Axis = None, keepdims: bool = False, *, out: None = None,
           initial: Any = None, where: Any = None) -> Any:
    """``min`` of the elements that are not NaN, as ``numpy.nanmin`` (all-NaN
    slices as in ``nanmax``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanmin(mx.array([3.0, mx.nan, 2.0])).item()
    2.0
    """
    return _nan_extreme(lax.min, lax.minimum, False, x, axis, keepdims, out, initial, where,
                        "nanmin")


def _nan_arg_extreme(arg: Any, reduce: Any, lowest: bool, x: Any, axis: Any, keepdims: Any,
                     out: Any, fname: str) -> Any:
    _no_out(out, fname)
    x = _creation.asarray(x)
    if not is_inexact(x.dtype) or x.size == 0:
        return _as(_arg_extreme(arg, x, axis, keepdims, fname), mx.int32)
    ax = normalize_axis(axis, x.ndim, fname)
    flat, a = (_flatten(x), 0) if ax is None else (x, ax)
    nan = lax.isnan(flat)
    filled = lax.where(nan, mx.array(_extreme_value(x.dtype, lowest), x.dtype), flat)
    # The first non-NaN element equal to the extreme: a real -inf (+inf)
    # wins over the NaNs that were replaced by it.
    best = lax.logical_and(lax.equal(filled, reduce(filled, (a,), True)), lax.logical_not(nan))
    idx = lax.astype(lax.argmax(lax.astype(best, mx.uint8), a, True), mx.int32)
    idx = lax.where(lax.all(nan, (a,), True), -1, idx)
    if ax is None:
        return lax.reshape(idx, (1,) * x.ndim if keepdims else ())
    return idx if keepdims else lax.squeeze(idx, (a,))


def nanargmax(x: Any, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """Index of the largest element that is not NaN along ``axis`` (of the
    flattened array when ``None``), as ``numpy.nanargmax``; the first at
    ties. A slice of NaNs only gives -1 (as jax.numpy; NumPy raises), so the
    result is ``int32`` (``argmax`` gives MLX's ``uint32``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanargmax(mx.array([[1.0, mx.nan, 3.0], [mx.nan, mx.nan, mx.nan]]), axis=1).tolist()
    [2, -1]
    """
    return _nan_arg_extreme(lax.argmax, lax.max, True, x, axis, keepdims, out, "nanargmax")


def nanargmin(x: Any, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """Index of the smallest element that is not NaN along ``axis``, as
    ``numpy.nanargmin`` (all-NaN slices and dtype as in ``nanargmax``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nanargmin(mx.array([mx.nan, 2.0, 1.0])).item()
    2
    """
    return _nan_arg_extreme(lax.argmin, lax.min, False, x, axis, keepdims, out, "nanargmin")


def nancumsum(x: Any, axis: int | None = None, dtype: DTypeLike | None = None,
              out: None = None) -> Any:
    """``cumsum`` with the NaNs counted as 0, as ``numpy.nancumsum``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nancumsum(mx.array([1.0, mx.nan, 2.0])).tolist()
    [1.0, 1.0, 3.0]
    """
    _no_out(out, "nancumsum")
    x = _creation.asarray(x)
    if is_inexact(x.dtype):
        x = _without_nans(x, 0)
    return _scan(lax.cumsum, x, axis, False, True, dtype, "nancumsum")


def nancumprod(x: Any, axis: int | None = None, dtype: DTypeLike | None = None,
               out: None = None) -> Any:
    """``cumprod`` with the NaNs counted as 1, as ``numpy.nancumprod``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nancumprod(mx.array([2.0, mx.nan, 3.0])).tolist()
    [2.0, 2.0, 6.0]
    """
    _no_out(out, "nancumprod")
    x = _creation.asarray(x)
    if is_inexact(x.dtype):
        x = _without_nans(x, 1)
    return _scan(lax.cumprod, x, axis, False, True, dtype, "nancumprod")
