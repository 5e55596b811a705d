"""Reductions along axes, and scans: the primitive layer.

Each reduction is one primitive whose params are the normalized ``axes`` (a
sorted tuple of non-negative ints) and ``keepdims``; each scan (and argmax,
argmin) works along one non-negative ``axis``. Their strict wrappers take
those params as they are: ``ftorch.numpy`` parses axes, flattens for
``axis=None``, checks arguments and handles ``dtype=``. Rules that need the
output next to the input (max, logsumexp, var) first give the output its
reduced axes back as length-1 axes, so that it broadcasts against the input.

``prod`` and ``cumprod`` never divide by the input: their derivatives are
built from exclusive cumulative products and a linear-recurrence scan, so
they stay exact when the input has zeros.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.sum(mx.ones((2, 3)), (1,)).tolist()
[3.0, 3.0]
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Primitive, is_floating
from ftorch.primitives._rules import linear, nondifferentiable, reducer, shape_of
from ftorch.typing import Axis

__all__ = [
    "sum", "mean", "prod", "max", "min", "all", "any", "logsumexp", "var", "std",
    "argmax", "argmin", "cumsum", "cumprod", "softmax",
]

Axes = tuple[int, ...]


# ----------------------------------------------------------------------------
# Axis normalization (the NumPy layer parses axes with these) and the helpers
# rules share
# ----------------------------------------------------------------------------


def _axis_index(a: Any, axis: Any, fname: str) -> int:
    if isinstance(a, bool):
        raise TypeError(f"{fname}: axis must be an int or a tuple of ints, got {axis!r}")
    try:
        return operator.index(a)
    except TypeError:
        raise TypeError(
            f"{fname}: axis must be an int or a tuple of ints, got {axis!r}") from None


def normalize_axes(axis: Axis, ndim: int, fname: str) -> Axes:
    """``axis`` as a sorted tuple of non-negative axes; a clear error when out of range."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else axis
    if not isinstance(axes, (tuple, list)):
        axes = (_axis_index(axis, axis, fname),)
    out = []
    for a in axes:
        out.append(check_axis(_axis_index(a, axis, fname), ndim, fname))
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def normalize_axis(axis: Any, ndim: int, fname: str) -> int | None:
    """An ``axis`` that must be one int (or None), normalized to be non-negative."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{fname}: axis must be an int or None, got {axis!r}")
    return check_axis(_axis_index(axis, axis, fname), ndim, fname)


def kept_shape(shape: tuple[int, ...], axes: Axes) -> tuple[int, ...]:
    """``shape`` with length-1 axes where ``axes`` were reduced (keepdims)."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _keep(y: Any, shape: tuple[int, ...], axes: Axes, keepdims: bool) -> Any:
    """A reduction's output (or cotangent) with length-1 axes where ``shape`` was
    reduced, ready to broadcast against ``shape`` (a 0-d one already is)."""
    if keepdims or not axes or len(axes) == len(shape):
        return y
    return lax.reshape(y, kept_shape(shape, axes))


def expand_reduced(ct: Any, shape: tuple[int, ...], axes: Axes, keepdims: bool) -> Any:
    """Broadcast a reduction's cotangent back to the input ``shape``."""
    return lax.broadcast_to(_keep(ct, shape, axes, keepdims), shape)


def _count(shape: tuple[int, ...], axes: Axes) -> int:
    return math.prod(shape[a] for a in axes)


def _reduce_impl(fn):
    return lambda x, axes, keepdims: fn(x, axis=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# sum, mean: linear
# ----------------------------------------------------------------------------

sum_p = Primitive("sum", _reduce_impl(mx.sum), autocast="float32")
linear(sum_p, lambda ct, x, *, axes, keepdims: expand_reduced(ct, shape_of(x), axes, keepdims))
reducer(sum_p)


def sum(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Sum over ``axes``."""
    return sum_p.bind(x, axes=axes, keepdims=keepdims)


def _mean_transpose(ct, x, *, axes, keepdims):
    shape = shape_of(x)
    return expand_reduced(lax.divide(ct, _count(shape, axes)), shape, axes, keepdims)


mean_p = Primitive("mean", _reduce_impl(mx.mean), autocast="float32")
linear(mean_p, _mean_transpose)
reducer(mean_p)


def mean(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axes`` (float32 for integer ``x``, as MLX gives it)."""
    return mean_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# max, min: the derivative is shared equally among tied extremes
# ----------------------------------------------------------------------------


def _extreme_weights(x, out, axes, keepdims):
    """1/k at each of the k elements attaining the extreme of their slice, else 0."""
    mask = lax.astype(lax.equal(x, _keep(out, shape_of(x), axes, keepdims)), x.dtype)
    return lax.divide(mask, sum(mask, axes, True))


def _extreme(name: str, impl) -> Primitive:
    prim = Primitive(name, _reduce_impl(impl))

    @prim.def_jvp
    def jvp(primals, tangents, *, axes, keepdims):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes, keepdims=keepdims)
        w = _extreme_weights(x, out, axes, keepdims)
        return out, sum(lax.multiply(t, w), axes, keepdims)

    @prim.def_vjp
    def vjp(ct, out, x, *, needed, axes, keepdims):
        w = _extreme_weights(x, out, axes, keepdims)
        return (lax.multiply(_keep(ct, shape_of(x), axes, keepdims), w),)

    reducer(prim)
    return prim


max_p = _extreme("max", mx.max)


def max(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Maximum over ``axes`` (nonempty); ties share the gradient equally."""
    return max_p.bind(x, axes=axes, keepdims=keepdims)


min_p = _extreme("min", mx.min)


def min(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Minimum over ``axes`` (nonempty); ties share the gradient equally."""
    return min_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# all, any, argmax, argmin: boolean or integer results, no derivative
# ----------------------------------------------------------------------------

all_p = Primitive("all", _reduce_impl(mx.all))
nondifferentiable(all_p)
reducer(all_p)


def all(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Whether every element over ``axes`` is true (nonzero)."""
    return all_p.bind(x, axes=axes, keepdims=keepdims)


any_p = Primitive("any", _reduce_impl(mx.any))
nondifferentiable(any_p)
reducer(any_p)


def any(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Whether some element over ``axes`` is true (nonzero)."""
    return any_p.bind(x, axes=axes, keepdims=keepdims)


def _batch_arg_extreme(prim: Primitive):
    """The batching rule of argmax/argmin: the per-example axis shifts past
    the batch axis, which stays put (one place lower if the axis before it
    goes)."""
    def rule(vals, dims, axis_size, *, axis, keepdims):
        (x,), (bdim,) = vals, dims
        axis = axis + 1 if axis >= bdim else axis
        out = prim.bind(x, axis=axis, keepdims=keepdims)
        return out, bdim if keepdims or axis > bdim else bdim - 1
    return rule


argmax_p = Primitive(
    "argmax", lambda x, axis, keepdims: mx.argmax(x, axis=axis, keepdims=keepdims))
nondifferentiable(argmax_p)
argmax_p.def_batch(_batch_arg_extreme(argmax_p))


def argmax(x: Any, axis: int, keepdims: bool = False) -> Any:
    """Index (``uint32``) of the first maximum along ``axis`` of a nonempty slice."""
    return argmax_p.bind(x, axis=axis, keepdims=keepdims)


argmin_p = Primitive(
    "argmin", lambda x, axis, keepdims: mx.argmin(x, axis=axis, keepdims=keepdims))
nondifferentiable(argmin_p)
argmin_p.def_batch(_batch_arg_extreme(argmin_p))


def argmin(x: Any, axis: int, keepdims: bool = False) -> Any:
    """Index (``uint32``) of the first minimum along ``axis`` of a nonempty slice."""
    return argmin_p.bind(x, axis=axis, keepdims=keepdims)


# ----------------------------------------------------------------------------
# var, std: derivatives from the centered input, so they stay accurate
# ----------------------------------------------------------------------------


def _var_factor(x, axes, ddof):
    """``(x - mean) / (n - ddof)`` with ``x``'s shape: half of d var / d x."""
    n = _count(shape_of(x), axes) - ddof
    centered = lax.subtract(x, mean(x, axes, True))
    return lax.divide(centered, n) if n else lax.multiply(centered, math.inf)


def _var_impl(fn):
    return lambda x, axes, keepdims, ddof: fn(x, axis=axes, keepdims=keepdims, ddof=ddof)


var_p = Primitive("var", _var_impl(mx.var), autocast="float32")


@var_p.def_jvp
def _var_jvp(primals, tangents, *, axes, keepdims, ddof):
    (x,), (t,) = primals, tangents
    out = var(x, axes, keepdims, ddof)
    return out, sum(lax.multiply(2, lax.multiply(t, _var_factor(x, axes, ddof))),
                    axes, keepdims)


@var_p.def_vjp
def _var_vjp(ct, out, x, *, needed, axes, keepdims, ddof):
    kept = _keep(ct, shape_of(x), axes, keepdims)
    return (lax.multiply(2, lax.multiply(kept, _var_factor(x, axes, ddof))),)


reducer(var_p)


def var(x: Any, axes: Axes, keepdims: bool = False, ddof: int = 0) -> Any:
    """Variance over ``axes`` with ``ddof`` delta degrees of freedom."""
    return var_p.bind(x, axes=axes, keepdims=keepdims, ddof=ddof)


def _safe_reciprocal(y):
    """``1 / y``, and 0 where ``y`` is 0 (no inf or nan reaches any derivative)."""
    zero = lax.equal(y, 0)
    return lax.where(zero, 0.0, lax.reciprocal(lax.where(zero, 1.0, y)))


std_p = Primitive("std", _var_impl(mx.std), autocast="float32")


@std_p.def_jvp
def _std_jvp(primals, tangents, *, axes, keepdims, ddof):
    (x,), (t,) = primals, tangents
    out = std(x, axes, keepdims, ddof)
    d = sum(lax.multiply(t, _var_factor(x, axes, ddof)), axes, keepdims)
    return out, lax.multiply(d, _safe_reciprocal(out))


@std_p.def_vjp
def _std_vjp(ct, out, x, *, needed, axes, keepdims, ddof):
    scaled = _keep(lax.multiply(ct, _safe_reciprocal(out)), shape_of(x), axes, keepdims)
    return (lax.multiply(scaled, _var_factor(x, axes, ddof)),)


reducer(std_p)


def std(x: Any, axes: Axes, keepdims: bool = False, ddof: int = 0) -> Any:
    """Standard deviation over ``axes``; its derivative is 0 where it is 0."""
    return std_p.bind(x, axes=axes, keepdims=keepdims, ddof=ddof)


# ----------------------------------------------------------------------------
# Scans: cumsum, cumprod
# ----------------------------------------------------------------------------


def _shift(x: Any, axis: int, reverse: bool, fill: float, d: int = 1) -> Any:
    """``x`` moved ``d`` places along ``axis`` in the scan's direction (towards
    higher indices unless ``reverse``), the vacated places set to ``fill``."""
    shape = shape_of(x)
    n = shape[axis]
    if d >= n:
        return lax.full(shape, fill, x.dtype)
    pad = lax.full(shape[:axis] + (d,) + shape[axis + 1:], fill, x.dtype)
    lead = (slice(None),) * axis
    if reverse:
        return lax.concatenate([lax.static_slice(x, lead + (slice(d, n),)), pad], axis)
    return lax.concatenate([pad, lax.static_slice(x, lead + (slice(0, n - d),))], axis)


def _linear_scan(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    """``h[i] = a[i] * h[i-1] + b[i]`` along ``axis`` (``h[i+1]`` when ``reverse``),
    starting from 0, in log2(n) doubling steps of primitives (so it is
    differentiable and involves no division)."""
    n = shape_of(b)[axis]
    h, d = b, 1
    while d < n:
        h = lax.add(h, lax.multiply(a, _shift(h, axis, reverse, 0.0, d)))
        if 2 * d < n:
            a = lax.multiply(a, _shift(a, axis, reverse, 1.0, d))
        d *= 2
    return h


def _scan_impl(fn):
    return lambda x, axis, reverse, inclusive: fn(x, axis=axis, reverse=reverse,
                                                  inclusive=inclusive)


def _batch_scan(prim: Primitive):
    """The batching rule of a scan: the per-example axis shifts past the
    batch axis, which stays put."""
    def rule(vals, dims, axis_size, *, axis, reverse, inclusive):
        (x,), (bdim,) = vals, dims
        out = prim.bind(x, axis=axis + (axis >= bdim), reverse=reverse, inclusive=inclusive)
        return out, bdim
    return rule


cumsum_p = Primitive("cumsum", _scan_impl(mx.cumsum), autocast="float32")
linear(cumsum_p, lambda ct, x, *, axis, reverse, inclusive: cumsum(
    ct, axis, not reverse, inclusive))
cumsum_p.def_batch(_batch_scan(cumsum_p))


def cumsum(x: Any, axis: int, reverse: bool = False, inclusive: bool = True) -> Any:
    """Cumulative sum along ``axis`` (from the end when ``reverse``; each element
    left out of its own sum unless ``inclusive``)."""
    return cumsum_p.bind(x, axis=axis, reverse=reverse, inclusive=inclusive)


# An inclusive cumprod y obeys y[i] = y[i-1] * x[i], so its tangent obeys the
# linear recurrence dy[i] = x[i] * dy[i-1] + e[i] * dx[i], where e (the
# exclusive cumprod) is y[i-1]. The VJP runs the transposed recurrence the
# other way. An exclusive cumprod is the inclusive one shifted by one place.

cumprod_p = Primitive("cumprod", _scan_impl(mx.cumprod), autocast="float32")


@cumprod_p.def_jvp
def _cumprod_jvp(primals, tangents, *, axis, reverse, inclusive):
    (x,), (t,) = primals, tangents
    out = cumprod(x, axis, reverse, inclusive)
    excl = cumprod(x, axis, reverse, False) if inclusive else out
    dy = _linear_scan(x, lax.multiply(t, excl), axis, reverse)
    return out, dy if inclusive else _shift(dy, axis, reverse, 0.0)


@cumprod_p.def_vjp
def _cumprod_vjp(ct, out, x, *, needed, axis, reverse, inclusive):
    if inclusive:
        excl = cumprod(x, axis, reverse, False)
    else:
        excl, ct = out, _shift(ct, axis, not reverse, 0.0)
    # r[k] = ct[k] + x[k+1] * r[k+1] (directions mirrored when reverse)
    r = _linear_scan(_shift(x, axis, not reverse, 1.0), ct, axis, not reverse)
    return (lax.multiply(excl, r),)


cumprod_p.def_batch(_batch_scan(cumprod_p))


def cumprod(x: Any, axis: int, reverse: bool = False, inclusive: bool = True) -> Any:
    """Cumulative product along ``axis``; derivatives exact with zeros."""
    return cumprod_p.bind(x, axis=axis, reverse=reverse, inclusive=inclusive)


# ----------------------------------------------------------------------------
# prod, logsumexp: derivatives are weighted sums
# ----------------------------------------------------------------------------


def _weighted_sum_rules(prim: Primitive, weights) -> None:
    """Rules of a reduction whose derivative is ``sum(t * weights(x, axes))``
    (prod: the product of the others; logsumexp: the softmax)."""

    @prim.def_jvp
    def jvp(primals, tangents, *, axes, keepdims):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes, keepdims=keepdims)
        return out, sum(lax.multiply(t, weights(x, axes)), axes, keepdims)

    @prim.def_vjp
    def vjp(ct, out, x, *, needed, axes, keepdims):
        return (lax.multiply(_keep(ct, shape_of(x), axes, keepdims), weights(x, axes)),)

    reducer(prim)


def _product_of_others(x: Any, axes: Axes) -> Any:
    """For each element, the product of the other elements of its slice over
    ``axes``: d prod / d x, exact with zeros."""
    shape = shape_of(x)
    if builtins.any(d == 0 for d in shape):
        return lax.zeros_like(x)
    if not axes:
        return lax.ones_like(x)
    if len(axes) == 1 or axes[-1] - axes[0] == len(axes) - 1:
        # Contiguous axes merge into one, so a single pair of scans does.
        first, last = axes[0], axes[-1]
        flat = lax.reshape(x, shape[:first] + (_count(shape, axes),) + shape[last + 1:])
        others = lax.multiply(cumprod(flat, first, False, False),
                              cumprod(flat, first, True, False))
        return lax.reshape(others, shape)
    # The other elements of a slice are those whose index along axes[0]
    # differs (whole sub-slices) and those that share it (a smaller slice).
    rest = axes[1:]
    return lax.multiply(_product_of_others(prod(x, rest, True), axes[:1]),
                        _product_of_others(x, rest))


prod_p = Primitive("prod", _reduce_impl(mx.prod), autocast="float32")
_weighted_sum_rules(prod_p, _product_of_others)


def prod(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """Product over ``axes``; derivatives exact with zeros."""
    return prod_p.bind(x, axes=axes, keepdims=keepdims)


def _softmax_weights(x, axes):
    """``softmax(x)`` over ``axes``: the derivative of logsumexp. A -inf
    entry gets 0, as in the softmax, and so does every entry of a slice that
    is entirely -inf (the result there is the constant -inf), where the
    softmax, and JAX, give nan. -inf entries go into the softmax as the
    lowest finite value (which changes no weight unless a slice's finite
    entries lie within about 100 of it), so that no nan arises in its
    derivative either, and come out as 0. A +inf entry makes the result +inf
    whatever the others are: they get 0 and the +inf entries nan, as in JAX.
    Elementwise masks only: no reduction beyond the softmax's own, so a
    compiled gradient costs what the softmax does."""
    if not is_floating(x.dtype):
        return softmax(x, axes)
    info = mx.finfo(x.dtype)
    neg_inf, pos_inf = lax.equal(x, -math.inf), lax.equal(x, math.inf)
    safe = softmax(lax.where(neg_inf, float(info.min), lax.where(pos_inf, float(info.max), x)),
                   axes)
    return lax.where(neg_inf, 0.0, lax.where(pos_inf, math.nan, safe))


logsumexp_p = Primitive("logsumexp", _reduce_impl(mx.logsumexp), autocast="float32")
_weighted_sum_rules(logsumexp_p, _softmax_weights)


def logsumexp(x: Any, axes: Axes, keepdims: bool = False) -> Any:
    """``log(sum(exp(x)))`` over ``axes`` of a nonempty ``x``, computed stably."""
    return logsumexp_p.bind(x, axes=axes, keepdims=keepdims)


# ----------------------------------------------------------------------------
# softmax: the derivative of logsumexp
# ----------------------------------------------------------------------------


def batch_normalized(prim: Primitive):
    """The batching rule of a normalization over ``axes`` (softmax and the
    like): per-example axes shift past the batch axis, which stays put."""
    def rule(vals, dims, axis_size, *, axes):
        (x,), (bdim,) = vals, dims
        return prim.bind(x, axes=tuple(a + (a >= bdim) for a in axes)), bdim
    return rule


def _softmax_linear(v, y, axes):
    """The softmax Jacobian (symmetric) applied to ``v``: ``y * (v - <v, y>)``."""
    return lax.multiply(y, lax.subtract(v, sum(lax.multiply(v, y), axes, True)))


softmax_p = Primitive("softmax", lambda x, axes: mx.softmax(x, axis=axes), autocast="float32")


@softmax_p.def_jvp
def _softmax_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    y = softmax(x, axes)
    return y, _softmax_linear(t, y, axes)


@softmax_p.def_vjp
def _softmax_vjp(ct, y, x, *, needed, axes):
    return (_softmax_linear(ct, y, axes),)


softmax_p.def_batch(batch_normalized(softmax_p))


def softmax(x: Any, axes: Axes) -> Any:
    """``exp(x - logsumexp(x))`` over ``axes``."""
    return softmax_p.bind(x, axes=axes)
