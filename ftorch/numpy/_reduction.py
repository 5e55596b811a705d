"""Reductions and scans, as in NumPy / jax.numpy: axis parsing (``None``, an
int or a tuple, negative axes), ``keepdims``, ``dtype=``, argument checks and
the empty-input cases, over the strict wrappers of
``ftorch.primitives.reduction``. ``axis=None`` on a scan or an argmax means
the flattened array.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.sum(mx.ones((2, 3)), axis=-1).tolist()
[3.0, 3.0]
"""

from __future__ import annotations

import math
import operator
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.numpy import _creation, _elementwise
from ftorch.primitives.reduction import Axis, kept_shape, normalize_axes, normalize_axis

__all__ = [
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
    "var", "std", "cumsum", "cumprod", "logsumexp",
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


# ----------------------------------------------------------------------------
# sum, mean, prod
# ----------------------------------------------------------------------------


def sum(x: Any, axis: Axis = None, keepdims: bool = False, *,
        dtype: DTypeLike | None = None) -> Any:
    """Sum over ``axis`` (all axes when ``None``), as ``numpy.sum``. With
    ``dtype`` (in any spelling), the input is cast to it first, and so is the
    result, as in jax.numpy; the other reductions and scans take it too.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.sum(mx.ones((2, 3)), axis=1).tolist()
    [3.0, 3.0]
    >>> fnp.sum(mx.array([True, True, False]), dtype="float16")
    array(2, dtype=float16)
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "sum")
    if dtype is not None:
        return _in_dtype(lax.sum, x, dtype, "sum", axes, keepdims)
    return lax.sum(x, axes, keepdims)


def mean(x: Any, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike | None = None) -> Any:
    """Arithmetic mean over ``axis``, as ``numpy.mean`` (integer inputs give float32).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.mean(mx.array([[1.0, 2.0], [3.0, 5.0]]), axis=-1).tolist()
    [1.5, 4.0]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "mean")
    if dtype is not None:
        return _in_dtype(lax.mean, x, dtype, "mean", axes, keepdims)
    return lax.mean(x, axes, keepdims)


def prod(x: Any, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike | None = None) -> Any:
    """Product over ``axis``, as ``numpy.prod``; derivatives are exact with zeros.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.prod(mx.array([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()
    [3.0, 8.0]
    >>> ft.grad(fnp.prod)(mx.array([2.0, 0.0, 3.0])).tolist()
    [0.0, 6.0, 0.0]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "prod")
    if dtype is not None:
        return _in_dtype(lax.prod, x, dtype, "prod", axes, keepdims)
    return lax.prod(x, axes, keepdims)


# ----------------------------------------------------------------------------
# max, min, argmax, argmin
# ----------------------------------------------------------------------------


def max(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Maximum over ``axis``, as ``numpy.max``.

    Where several elements tie for the maximum, the gradient is shared
    equally among them.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.max(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=0).tolist()
    [3.0, 4.0]
    >>> ft.grad(fnp.max)(mx.array([1.0, 3.0, 3.0])).tolist()
    [0.0, 0.5, 0.5]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "max")
    _check_nonempty(x.shape, axes, "max")
    return lax.max(x, axes, keepdims)


def min(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Minimum over ``axis``, as ``numpy.min``; ties share the gradient equally.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.min(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=1, keepdims=True).tolist()
    [[1.0], [2.0]]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "min")
    _check_nonempty(x.shape, axes, "min")
    return lax.min(x, axes, keepdims)


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


def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the maximum along ``axis`` (of the flattened array when ``None``);
    the first one at ties. Results are ``uint32``, as MLX gives them.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argmax(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=1).tolist()
    [1, 0]
    """
    return _arg_extreme(lax.argmax, x, axis, keepdims, "argmax")


def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the minimum along ``axis`` (of the flattened array when ``None``);
    the first one at ties.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argmin(mx.array([3.0, 1.0, 1.0])).item()
    1
    """
    return _arg_extreme(lax.argmin, x, axis, keepdims, "argmin")


# ----------------------------------------------------------------------------
# all, any
# ----------------------------------------------------------------------------


def all(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Whether every element along ``axis`` is true (nonzero), as ``numpy.all``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.all(mx.array([[1, 0], [1, 1]]), axis=1).tolist()
    [False, True]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "all")
    return lax.all(x, axes, keepdims)


def any(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Whether some element along ``axis`` is true (nonzero), as ``numpy.any``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.any(mx.array([[1, 0], [0, 0]]), axis=1).tolist()
    [True, False]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "any")
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


def var(x: Any, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *,
        dtype: DTypeLike | None = None) -> Any:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom, as ``numpy.var``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.var(mx.array([1.0, 2.0, 3.0, 4.0]), ddof=1).item()
    1.6666666269302368
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "var")
    ddof = _ddof(ddof, "var")
    if dtype is not None:
        return _in_dtype(lax.var, x, dtype, "var", axes, keepdims, ddof)
    return lax.var(x, axes, keepdims, ddof)


def std(x: Any, axis: Axis = None, keepdims: bool = False, ddof: int = 0, *,
        dtype: DTypeLike | None = None) -> Any:
    """Standard deviation over ``axis``, as ``numpy.std``.

    Where the standard deviation is 0 (a constant slice) its gradient is
    taken as 0, as ``abs`` has at 0.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.std(mx.array([1.0, 3.0])).item()
    1.0
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "std")
    ddof = _ddof(ddof, "std")
    if dtype is not None:
        return _in_dtype(lax.std, x, dtype, "std", axes, keepdims, ddof)
    return lax.std(x, axes, keepdims, ddof)


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
    elif x.ndim == 0:
        raise ValueError(f"{fname}: axis {axis} is out of range for an array of ndim 0")
    else:
        axis = normalize_axis(axis, x.ndim, fname)
    if dtype is not None:
        return _in_dtype(scan, x, dtype, fname, axis, bool(reverse), bool(inclusive))
    return scan(x, axis, bool(reverse), bool(inclusive))


def cumsum(x: Any, axis: int | None = None, *, reverse: bool = False,
           inclusive: bool = True, dtype: DTypeLike | None = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array when ``None``).

    ``reverse`` sums from the end; ``inclusive=False`` leaves each element
    out of its own sum (the first result is 0).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cumsum(mx.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0, 6.0]
    >>> fnp.cumsum(mx.array([1.0, 2.0, 3.0]), reverse=True, inclusive=False).tolist()
    [5.0, 3.0, 0.0]
    """
    return _scan(lax.cumsum, x, axis, reverse, inclusive, dtype, "cumsum")


def cumprod(x: Any, axis: int | None = None, *, reverse: bool = False,
            inclusive: bool = True, dtype: DTypeLike | None = None) -> Any:
    """Cumulative product along ``axis`` (of the flattened array when ``None``).

    Its derivatives are exact when ``x`` has zeros (no division by ``x``).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cumprod(mx.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 2.0, 6.0]
    >>> ft.grad(lambda x: fnp.cumprod(x).sum())(mx.array([2.0, 0.0, 3.0])).tolist()
    [1.0, 8.0, 0.0]
    """
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
