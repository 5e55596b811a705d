"""Reductions along axes, and scans.

Each reduction is one primitive whose params are the normalized ``axes`` (a
sorted tuple of non-negative ints) and ``keepdims``. Rules that need the
output next to the input (max, logsumexp, var) first give the output its
reduced axes back as length-1 axes, so that it broadcasts against the input.

``prod`` and ``cumprod`` never divide by the input: their derivatives are
built from exclusive cumulative products and a linear-recurrence scan, so
they stay exact when the input has zeros.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from ftorch import numpy as fnp
from ftorch.core import Primitive, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives._rules import shape_of
from ftorch.primitives.shape import static_slice

__all__ = [
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
    "var", "std", "cumsum", "cumprod", "logsumexp",
]

Axis = int | Sequence[int] | None


def _axis_index(a: Any, axis: Any, fname: str) -> int:
    if isinstance(a, bool):
        raise TypeError(f"{fname}: axis must be an int or a tuple of ints, got {axis!r}")
    try:
        return operator.index(a)
    except TypeError:
        raise TypeError(
            f"{fname}: axis must be an int or a tuple of ints, got {axis!r}") from None


def normalize_axes(axis: Axis, ndim: int, fname: str) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative axes; a clear error when out of range."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else axis
    if not isinstance(axes, (tuple, list)):
        axes = (_axis_index(axis, axis, fname),)
    out = []
    for a in axes:
        a = _axis_index(a, axis, fname)
        if not -ndim <= a < ndim:
            raise ValueError(f"{fname}: axis {a} is out of range for an array of ndim {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def _single_axis(axis: Any, ndim: int, fname: str) -> int | None:
    """An ``axis`` that must be one int (or None), normalized to be non-negative."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{fname}: axis must be an int or None, got {axis!r}")
    a = _axis_index(axis, axis, fname)
    if not -ndim <= a < ndim:
        raise ValueError(f"{fname}: axis {a} is out of range for an array of ndim {ndim}")
    return a % ndim


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _keep(y: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """A reduction's output (or cotangent) with length-1 axes where ``shape`` was
    reduced, ready to broadcast against ``shape`` (a 0-d one already is)."""
    if keepdims or not axes or len(axes) == len(shape):
        return y
    return fnp.reshape(y, _kept_shape(shape, axes))


def expand_reduced(ct: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """Broadcast a reduction's cotangent back to the input ``shape``."""
    return fnp.broadcast_to(_keep(ct, shape, axes, keepdims), shape)


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod(shape[a] for a in axes)


def _prepare(x: Any, axis: Axis, keepdims: bool, fname: str) -> tuple[Any, tuple[int, ...], bool]:
    x = fnp.asarray(x)
    return x, normalize_axes(axis, x.ndim, fname), bool(keepdims)


def _in_dtype(reduce: Any, x: Any, dtype: Any, fname: str, **params: Any) -> Any:
    """``reduce.bind(x, **params)`` computed in ``dtype``, as jax.numpy's
    ``dtype=``: the input is cast to it, and so is the result (a mean of
    integers is a float until cast back)."""
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    return fnp.astype(reduce.bind(fnp.astype(x, dtype), **params), dtype)


def _check_nonempty(shape: tuple[int, ...], axes: tuple[int, ...], fname: str) -> None:
    for a in axes:
        if shape[a] == 0:
            raise ValueError(
                f"{fname}: cannot reduce over axis {a} of size 0 (the {fname} of no "
                "elements is undefined)")


# ----------------------------------------------------------------------------
# sum, mean
# ----------------------------------------------------------------------------

sum_p = Primitive("sum", lambda x, axes, keepdims: mx.sum(x, axis=axes, keepdims=keepdims))
sum_p.jvp = lambda primals, tangents, axes, keepdims: (
    sum_p.bind(*primals, axes=axes, keepdims=keepdims),
    sum_p.bind(*tangents, axes=axes, keepdims=keepdims))
sum_p.vjp = lambda ct, out, x, axes, keepdims: (
    expand_reduced(ct, shape_of(x), axes, keepdims) if is_floating(x.dtype) else None,)


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
        return _in_dtype(sum_p, x, dtype, "sum", axes=axes, keepdims=keepdims)
    return sum_p.bind(x, axes=axes, keepdims=keepdims)


mean_p = Primitive("mean", lambda x, axes, keepdims: mx.mean(x, axis=axes, keepdims=keepdims))
mean_p.jvp = lambda primals, tangents, axes, keepdims: (
    mean_p.bind(*primals, axes=axes, keepdims=keepdims),
    mean_p.bind(*tangents, axes=axes, keepdims=keepdims))


@mean_p.def_vjp
def _mean_vjp(ct, out, x, axes, keepdims):
    if not is_floating(x.dtype):
        return (None,)
    shape = shape_of(x)
    return (expand_reduced(fnp.divide(ct, _count(shape, axes)), shape, axes, keepdims),)


def mean(x: Any, axis: Axis = None, keepdims: bool = False, *,
         dtype: DTypeLike | None = None) -> Any:
    """Arithmetic mean over ``axis``, as ``numpy.mean`` (integer inputs give float32).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.mean(mx.array([[1.0, 2.0], [3.0, 5.0]]), axis=-1).tolist()
    [1.5, 4.0]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "mean")
    if dtype is not None:
        return _in_dtype(mean_p, x, dtype, "mean", axes=axes, keepdims=keepdims)
    return mean_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# max, min: the derivative is shared equally among tied extremes
# ----------------------------------------------------------------------------


def _extreme_weights(x, out, axes, keepdims):
    """1/k at each of the k elements attaining the extreme of their slice, else 0."""
    mask = fnp.astype(fnp.equal(x, _keep(out, shape_of(x), axes, keepdims)), x.dtype)
    return mask / sum_p.bind(mask, axes=axes, keepdims=True)


def _extreme(name: str, impl):
    prim = Primitive(name, lambda x, axes, keepdims: impl(x, axis=axes, keepdims=keepdims))

    @prim.def_jvp
    def jvp(primals, tangents, axes, keepdims):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes, keepdims=keepdims)
        w = _extreme_weights(x, out, axes, keepdims)
        return out, sum_p.bind(t * w, axes=axes, keepdims=keepdims)

    @prim.def_vjp
    def vjp(ct, out, x, axes, keepdims):
        if not is_floating(x.dtype):
            return (None,)
        w = _extreme_weights(x, out, axes, keepdims)
        return (_keep(ct, shape_of(x), axes, keepdims) * w,)

    return prim


max_p = _extreme("max", mx.max)
min_p = _extreme("min", mx.min)


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
    return max_p.bind(x, axes=axes, keepdims=keepdims)


def min(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Minimum over ``axis``, as ``numpy.min``; ties share the gradient equally.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.min(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=1, keepdims=True).tolist()
    [[1.0], [2.0]]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "min")
    _check_nonempty(x.shape, axes, "min")
    return min_p.bind(x, axes=axes, keepdims=keepdims)


amax, amin = max, min


# ----------------------------------------------------------------------------
# argmax, argmin, all, any: integer or boolean results, no derivative
# ----------------------------------------------------------------------------


def _nondiff(name: str, impl) -> Primitive:
    prim = Primitive(name, impl)
    prim.jvp = lambda primals, tangents, **params: (prim.bind(*primals, **params), None)
    prim.vjp = lambda ct, out, x, **params: (None,)
    return prim


argmax_p = _nondiff(
    "argmax", lambda x, axis, keepdims: mx.argmax(x, axis=axis, keepdims=keepdims))
argmin_p = _nondiff(
    "argmin", lambda x, axis, keepdims: mx.argmin(x, axis=axis, keepdims=keepdims))
all_p = _nondiff("all", lambda x, axes, keepdims: mx.all(x, axis=axes, keepdims=keepdims))
any_p = _nondiff("any", lambda x, axes, keepdims: mx.any(x, axis=axes, keepdims=keepdims))


def _arg_extreme(prim: Primitive, x: Any, axis: Any, keepdims: bool, fname: str) -> Any:
    x = fnp.asarray(x)
    ax = _single_axis(axis, x.ndim, fname)
    keepdims = bool(keepdims) and x.ndim > 0  # MLX fails on 0-d with keepdims
    if x.size == 0:
        shape = tuple(x.shape)
        if ax is None or shape[ax] == 0:
            where = "an empty array" if ax is None else f"axis {ax} of size 0"
            raise ValueError(f"{fname}: cannot take the {fname} over {where}")
        # Other axes are empty: so is the result (MLX refuses these).
        return mx.zeros(_kept_shape(shape, (ax,)) if keepdims else shape[:ax] + shape[ax + 1:],
                        mx.uint32)
    return prim.bind(x, axis=ax, keepdims=keepdims)


def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the maximum along ``axis`` (of the flattened array when ``None``);
    the first one at ties. Results are ``uint32``, as MLX gives them.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argmax(mx.array([[1.0, 4.0], [3.0, 2.0]]), axis=1).tolist()
    [1, 0]
    """
    return _arg_extreme(argmax_p, x, axis, keepdims, "argmax")


def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the minimum along ``axis`` (of the flattened array when ``None``);
    the first one at ties.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argmin(mx.array([3.0, 1.0, 1.0])).item()
    1
    """
    return _arg_extreme(argmin_p, x, axis, keepdims, "argmin")


def all(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Whether every element along ``axis`` is true (nonzero), as ``numpy.all``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.all(mx.array([[1, 0], [1, 1]]), axis=1).tolist()
    [False, True]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "all")
    return all_p.bind(x, axes=axes, keepdims=keepdims)


def any(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Whether some element along ``axis`` is true (nonzero), as ``numpy.any``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.any(mx.array([[1, 0], [0, 0]]), axis=1).tolist()
    [True, False]
    """
    x, axes, keepdims = _prepare(x, axis, keepdims, "any")
    return any_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# var, std: derivatives from the centered input, so they stay accurate
# ----------------------------------------------------------------------------


def _var_factor(x, axes, ddof):
    """``(x - mean) / (n - ddof)`` with ``x``'s shape: half of d var / d x."""
    n = _count(shape_of(x), axes) - ddof
    centered = x - mean_p.bind(x, axes=axes, keepdims=True)
    return centered / n if n else centered * math.inf


var_p = Primitive(
    "var", lambda x, axes, keepdims, ddof: mx.var(x, axis=axes, keepdims=keepdims, ddof=ddof))
std_p = Primitive(
    "std", lambda x, axes, keepdims, ddof: mx.std(x, axis=axes, keepdims=keepdims, ddof=ddof))


@var_p.def_jvp
def _var_jvp(primals, tangents, axes, keepdims, ddof):
    (x,), (t,) = primals, tangents
    out = var_p.bind(x, axes=axes, keepdims=keepdims, ddof=ddof)
    return out, sum_p.bind(2 * (t * _var_factor(x, axes, ddof)), axes=axes, keepdims=keepdims)


@var_p.def_vjp
def _var_vjp(ct, out, x, axes, keepdims, ddof):
    if not is_floating(x.dtype):
        return (None,)
    return (2 * (_keep(ct, shape_of(x), axes, keepdims) * _var_factor(x, axes, ddof)),)


def _safe_reciprocal(y):
    """``1 / y``, and 0 where ``y`` is 0 (no inf or nan reaches any derivative)."""
    zero = fnp.equal(y, 0)
    return fnp.where(zero, 0.0, fnp.reciprocal(fnp.where(zero, 1.0, y)))


@std_p.def_jvp
def _std_jvp(primals, tangents, axes, keepdims, ddof):
    (x,), (t,) = primals, tangents
    out = std_p.bind(x, axes=axes, keepdims=keepdims, ddof=ddof)
    d = sum_p.bind(t * _var_factor(x, axes, ddof), axes=axes, keepdims=keepdims)
    return out, d * _safe_reciprocal(out)


@std_p.def_vjp
def _std_vjp(ct, out, x, axes, keepdims, ddof):
    if not is_floating(x.dtype):
        return (None,)
    scaled = _keep(ct * _safe_reciprocal(out), shape_of(x), axes, keepdims)
    return (scaled * _var_factor(x, axes, ddof),)


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
        return _in_dtype(var_p, x, dtype, "var", axes=axes, keepdims=keepdims, ddof=ddof)
    return var_p.bind(x, axes=axes, keepdims=keepdims, ddof=ddof)


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
        return _in_dtype(std_p, x, dtype, "std", axes=axes, keepdims=keepdims, ddof=ddof)
    return std_p.bind(x, axes=axes, keepdims=keepdims, ddof=ddof)


# ----------------------------------------------------------------------------
# Scans: cumsum, cumprod
# ----------------------------------------------------------------------------


def _flat(x: Any, axis: int | None) -> tuple[Any, int]:
    """The scan's input and axis: ``axis=None`` scans the flattened array."""
    return (fnp.reshape(x, (-1,)), 0) if axis is None else (x, axis)


def _shift(x: Any, axis: int, reverse: bool, fill: float, d: int = 1) -> Any:
    """``x`` moved ``d`` places along ``axis`` in the scan's direction (towards
    higher indices unless ``reverse``), the vacated places set to ``fill``."""
    shape = shape_of(x)
    n = shape[axis]
    if d >= n:
        return fnp.full(shape, fill, x.dtype)
    pad = fnp.full(shape[:axis] + (d,) + shape[axis + 1:], fill, x.dtype)
    lead = (slice(None),) * axis
    if reverse:
        return fnp.concatenate([static_slice(x, lead + (slice(d, n),)), pad], axis=axis)
    return fnp.concatenate([pad, static_slice(x, lead + (slice(0, n - d),))], axis=axis)


def _linear_scan(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    """``h[i] = a[i] * h[i-1] + b[i]`` along ``axis`` (``h[i+1]`` when ``reverse``),
    starting from 0, in log2(n) doubling steps of ftorch ops (so it is
    differentiable and involves no division)."""
    n = shape_of(b)[axis]
    h, d = b, 1
    while d < n:
        h = h + a * _shift(h, axis, reverse, 0.0, d)
        if 2 * d < n:
            a = a * _shift(a, axis, reverse, 1.0, d)
        d *= 2
    return h


def _scan_impl(fn):
    return lambda x, axis, reverse, inclusive: fn(x, axis=axis, reverse=reverse,
                                                  inclusive=inclusive)


cumsum_p = Primitive("cumsum", _scan_impl(mx.cumsum))
cumprod_p = Primitive("cumprod", _scan_impl(mx.cumprod))

cumsum_p.jvp = lambda primals, tangents, **params: (
    cumsum_p.bind(*primals, **params), cumsum_p.bind(*tangents, **params))


@cumsum_p.def_vjp
def _cumsum_vjp(ct, out, x, axis, reverse, inclusive):
    if not is_floating(x.dtype):
        return (None,)
    ct = cumsum_p.bind(ct, axis=0 if axis is None else axis, reverse=not reverse,
                       inclusive=inclusive)
    return (ct if axis is not None else fnp.reshape(ct, shape_of(x)),)


# An inclusive cumprod y obeys y[i] = y[i-1] * x[i], so its tangent obeys the
# linear recurrence dy[i] = x[i] * dy[i-1] + e[i] * dx[i], where e (the
# exclusive cumprod) is y[i-1]. The VJP runs the transposed recurrence the
# other way. An exclusive cumprod is the inclusive one shifted by one place.


def _exclusive(x, axis, reverse):
    return cumprod_p.bind(x, axis=axis, reverse=reverse, inclusive=False)


@cumprod_p.def_jvp
def _cumprod_jvp(primals, tangents, axis, reverse, inclusive):
    (x,), (t,) = primals, tangents
    out = cumprod_p.bind(x, axis=axis, reverse=reverse, inclusive=inclusive)
    x, ax = _flat(x, axis)
    t, _ = _flat(t, axis)
    excl = _exclusive(x, ax, reverse) if inclusive else out
    dy = _linear_scan(x, t * excl, ax, reverse)
    return out, dy if inclusive else _shift(dy, ax, reverse, 0.0)


@cumprod_p.def_vjp
def _cumprod_vjp(ct, out, x, axis, reverse, inclusive):
    if not is_floating(x.dtype):
        return (None,)
    shape = shape_of(x)
    x, ax = _flat(x, axis)
    if inclusive:
        excl = _exclusive(x, ax, reverse)
    else:
        excl, ct = out, _shift(ct, ax, not reverse, 0.0)
    # r[k] = ct[k] + x[k+1] * r[k+1] (directions mirrored when reverse)
    r = _linear_scan(_shift(x, ax, not reverse, 1.0), ct, ax, not reverse)
    ct_x = excl * r
    return (ct_x if axis is not None else fnp.reshape(ct_x, shape),)


def _scan_args(x: Any, axis: Any, fname: str) -> tuple[Any, int | None]:
    x = fnp.asarray(x)
    if axis is None:
        return x, None
    if x.ndim == 0:
        raise ValueError(f"{fname}: axis {axis} is out of range for an array of ndim 0")
    return x, _single_axis(axis, x.ndim, fname)


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
    x, axis = _scan_args(x, axis, "cumsum")
    params = dict(axis=axis, reverse=bool(reverse), inclusive=bool(inclusive))
    if dtype is not None:
        return _in_dtype(cumsum_p, x, dtype, "cumsum", **params)
    return cumsum_p.bind(x, **params)


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
    x, axis = _scan_args(x, axis, "cumprod")
    params = dict(axis=axis, reverse=bool(reverse), inclusive=bool(inclusive))
    if dtype is not None:
        return _in_dtype(cumprod_p, x, dtype, "cumprod", **params)
    return cumprod_p.bind(x, **params)


# ----------------------------------------------------------------------------
# prod
# ----------------------------------------------------------------------------


def _product_of_others(x: Any, axes: tuple[int, ...]) -> Any:
    """For each element, the product of the other elements of its slice over
    ``axes``: d prod / d x, exact with zeros."""
    shape = shape_of(x)
    if builtins.any(d == 0 for d in shape):
        return fnp.zeros_like(x)
    if not axes:
        return fnp.ones_like(x)
    if len(axes) == 1 or axes[-1] - axes[0] == len(axes) - 1:
        # Contiguous axes merge into one, so a single pair of scans does.
        first, last = axes[0], axes[-1]
        merged = shape[:first] + (_count(shape, axes),) + shape[last + 1:]
        flat = fnp.reshape(x, merged)
        others = _exclusive(flat, first, False) * _exclusive(flat, first, True)
        return fnp.reshape(others, shape)
    # The other elements of a slice are those whose index along axes[0]
    # differs (whole sub-slices) and those that share it (a smaller slice).
    rest = axes[1:]
    sub = prod_p.bind(x, axes=rest, keepdims=True)
    return _product_of_others(sub, axes[:1]) * _product_of_others(x, rest)


prod_p = Primitive("prod", lambda x, axes, keepdims: mx.prod(x, axis=axes, keepdims=keepdims))


def _weighted_sum_rules(prim: Primitive, weights) -> None:
    """Rules of a reduction whose derivative is ``sum(t * weights(x, axes))``
    (prod: the product of the others; logsumexp: the softmax)."""

    def jvp(primals, tangents, axes, keepdims):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes, keepdims=keepdims)
        return out, sum_p.bind(t * weights(x, axes), axes=axes, keepdims=keepdims)

    def vjp(ct, out, x, axes, keepdims):
        if not is_floating(x.dtype):
            return (None,)
        return (_keep(ct, shape_of(x), axes, keepdims) * weights(x, axes),)

    prim.jvp, prim.vjp = jvp, vjp


_weighted_sum_rules(prod_p, _product_of_others)


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
        return _in_dtype(prod_p, x, dtype, "prod", axes=axes, keepdims=keepdims)
    return prod_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# logsumexp and softmax (its derivative)
# ----------------------------------------------------------------------------


softmax_p = Primitive("softmax", lambda x, axes: mx.softmax(x, axis=axes))


def _softmax_linear(v, y, axes):
    """The softmax Jacobian (symmetric) applied to ``v``: ``y * (v - <v, y>)``."""
    return y * (v - sum_p.bind(v * y, axes=axes, keepdims=True))


@softmax_p.def_jvp
def _softmax_jvp(primals, tangents, axes):
    (x,), (t,) = primals, tangents
    y = softmax_p.bind(x, axes=axes)
    return y, _softmax_linear(t, y, axes)


@softmax_p.def_vjp
def _softmax_vjp(ct, y, x, axes):
    if not is_floating(x.dtype):
        return (None,)
    return (_softmax_linear(ct, y, axes),)


def batch_normalized(prim: Primitive):
    """The batching rule of a normalization over ``axes`` (softmax and the
    like): per-example axes shift past the batch axis, which stays put."""
    def rule(vals, dims, axis_size, axes):
        (x,), (bdim,) = vals, dims
        return prim.bind(x, axes=tuple(a + (a >= bdim) for a in axes)), bdim
    return rule


softmax_p.batch = batch_normalized(softmax_p)


def _softmax_weights(x, axes):
    """``softmax(x)`` over ``axes``: the derivative of logsumexp. A -inf
    entry gets 0, as in the softmax, and so does every entry of a slice that
    is entirely -inf (the result there is the constant -inf), where the
    softmax would be nan. -inf entries go into the softmax as the lowest
    finite value (which changes no weight unless a slice's finite entries lie
    within about 100 of it), so that no nan arises in its derivative either,
    and come out as 0. Elementwise masks only: no reduction beyond the
    softmax's own, so a compiled gradient costs what the softmax does."""
    if not is_floating(x.dtype):
        return softmax_p.bind(x, axes=axes)
    neg_inf = fnp.equal(x, -math.inf)
    safe = softmax_p.bind(fnp.where(neg_inf, float(mx.finfo(x.dtype).min), x), axes=axes)
    return fnp.where(neg_inf, 0.0, safe)


logsumexp_p = Primitive(
    "logsumexp", lambda x, axes, keepdims: mx.logsumexp(x, axis=axes, keepdims=keepdims))


_weighted_sum_rules(logsumexp_p, _softmax_weights)


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
        out = _kept_shape(shape, axes) if keepdims else tuple(
            d for i, d in enumerate(shape) if i not in axes)
        dtype = x.dtype if is_floating(x.dtype) else mx.float32
        return mx.full(out, -math.inf, dtype)
    return logsumexp_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# Batching rules: per-example axes shift past the batch axis, which stays put
# unless an axis-less (flattening) form needs it in front.
# ----------------------------------------------------------------------------


def _shift_axis(a: int, bdim: int) -> int:
    """A per-example axis ``a`` as an axis of the batched array."""
    return a + (a >= bdim)


def _reduced_bdim(bdim: int, axes: tuple[int, ...], keepdims: bool) -> int:
    """Where the batch axis lands once ``axes`` (batched positions) are reduced."""
    return bdim if keepdims else bdim - builtins.sum(1 for a in axes if a < bdim)


def _batch_reduce(prim: Primitive):
    def rule(vals, dims, axis_size, axes, keepdims, **params):
        (x,), (bdim,) = vals, dims
        new_axes = tuple(_shift_axis(a, bdim) for a in axes)
        out = prim.bind(x, axes=new_axes, keepdims=keepdims, **params)
        return out, _reduced_bdim(bdim, new_axes, keepdims)
    return rule


def _batch_arg_extreme(prim: Primitive):
    def rule(vals, dims, axis_size, axis, keepdims):
        (x,), (bdim,) = vals, dims
        if axis is None:
            # Over each example's flattened array: batch first, one axis per example.
            ndim = len(shape_of(x)) - 1
            flat = fnp.reshape(_move_to_front(x, bdim), (axis_size, -1))
            out = prim.bind(flat, axis=1, keepdims=False)
            if keepdims:
                out = fnp.reshape(out, (axis_size,) + (1,) * ndim)
            return out, 0
        new_axis = _shift_axis(axis, bdim)
        out = prim.bind(x, axis=new_axis, keepdims=keepdims)
        return out, _reduced_bdim(bdim, (new_axis,), keepdims)
    return rule


def _move_to_front(x: Any, bdim: int) -> Any:
    return x if bdim == 0 else fnp.moveaxis(x, bdim, 0)


def _batch_scan(prim: Primitive):
    def rule(vals, dims, axis_size, axis, reverse, inclusive):
        (x,), (bdim,) = vals, dims
        if axis is None:
            flat = fnp.reshape(_move_to_front(x, bdim), (axis_size, -1))
            return prim.bind(flat, axis=1, reverse=reverse, inclusive=inclusive), 0
        out = prim.bind(x, axis=_shift_axis(axis, bdim), reverse=reverse, inclusive=inclusive)
        return out, bdim
    return rule


for _prim in (sum_p, mean_p, prod_p, max_p, min_p, all_p, any_p, var_p, std_p, logsumexp_p):
    _prim.batch = _batch_reduce(_prim)
for _prim in (argmax_p, argmin_p):
    _prim.batch = _batch_arg_extreme(_prim)
for _prim in (cumsum_p, cumprod_p):
    _prim.batch = _batch_scan(_prim)
del _prim
