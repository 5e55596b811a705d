"""``jax.lax``'s names that are JAX's spellings of ftorch's primitives, or
short compositions of them: aliases (``neg``, ``sub``, ``eq``...), integer
division rounding toward zero, ``clamp`` and ``select_n``,
the structural ops (``broadcast_in_dim``, ``iota``, ``rev``, ``slice``,
``tile``...) and the reductions over explicit ``axes``. Being compositions,
each is differentiable, batchable and jittable through the primitives it
uses.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.clamp(0.0, mx.array([-1.0, 0.5, 2.0]), 1.0).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as prims
from ftorch.api_util import check_axis
from ftorch.core import Tracer, aval_of, is_floating
from ftorch.dtypes import to_mlx_dtype
from ftorch.primitives.activations import sigmoid
from ftorch.primitives.associative import associative_scan
from ftorch.primitives.elementwise import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    equal,
    greater,
    greater_equal,
    invert,
    isfinite,
    less,
    less_equal,
    negative,
    not_equal,
    power,
    subtract,
)
from ftorch.primitives.sampling import bits_p, fold_in_p

__all__ = [
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "exp2", "is_finite",
    "logistic", "integer_pow", "neg", "sub", "mul", "div", "pow", "eq", "ne", "lt",
    "le", "gt", "ge", "bitwise_not", "convert_element_type", "clamp", "select_n", "broadcast",
    "broadcast_in_dim", "broadcast_to_rank", "broadcast_shapes", "broadcasted_iota", "iota",
    "collapse", "rev", "slice", "slice_in_dim", "index_in_dim", "index_take", "tile", "stack",
    "unstack", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
    "reduce_or", "reduce_xor", "cumlogsumexp", "empty", "dtype", "scatter_sub", "scatter_apply",
    "broadcast_like", "batch_matmul", "shape_as_value", "rng_uniform", "rng_bit_generator",
]

# JAX's names for ftorch's elementwise primitives.
acos, acosh, asin, asinh, atan, atanh = arccos, arccosh, arcsin, arcsinh, arctan, arctanh
atan2, is_finite, neg, sub, pow = arctan2, isfinite, negative, subtract, power
eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal


def _array(x: Any) -> Any:
    return x if isinstance(x, (mx.array, Tracer)) else mx.array(x)


def _no_accuracy(accuracy: Any, fname: str) -> None:
    if accuracy is not None:
        raise NotImplementedError(f"{fname}: accuracy is not supported (MLX has one "
                                  "implementation of each function)")


def logistic(x: Any, *, accuracy: None = None) -> Any:
    """``1 / (1 + exp(-x))``, as ``jax.lax.logistic`` (``lax.sigmoid``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.logistic(mx.array(0.0)).item()
    0.5
    """
    _no_accuracy(accuracy, "logistic")
    return sigmoid(x)


def exp2(x: Any, *, accuracy: None = None) -> Any:
    """``2 ** x``, elementwise, as ``jax.lax.exp2``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.exp2(mx.array([3.0, -1.0])).tolist()
    [8.0, 0.5]
    """
    _no_accuracy(accuracy, "exp2")
    x = _array(x)
    return prims.power(mx.array(2.0, x.dtype), x)


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static Python int ``y``, as ``jax.lax.integer_pow``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.integer_pow(mx.array([2.0, 3.0]), 3).tolist()
    [8.0, 27.0]
    """
    if isinstance(y, bool) or not isinstance(y, int):
        raise TypeError(f"integer_pow: y must be a Python int, got {y!r}")
    x = _array(x)
    if y < 0 and not is_floating(aval_of(x).dtype):
        raise ValueError(f"integer_pow: a negative exponent {y} needs a floating x, got "
                         f"{aval_of(x).dtype}")
    return prims.power(x, y)


def mul(x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    """``x * y``, elementwise, as ``jax.lax.mul``; ``out_dtype`` casts the
    product.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.mul(mx.array([2, 3]), mx.array([4, 5])).tolist()
    [8, 15]
    """
    out = prims.multiply(x, y)
    if out_dtype is None:
        return out
    return prims.astype(out, to_mlx_dtype(out_dtype, "mul: out_dtype"))


def _is_signed_integer(x: Any) -> bool:
    dt = aval_of(x).dtype
    return mx.issubdtype(dt, mx.signedinteger)


def div(x: Any, y: Any) -> Any:
    """``x / y``, elementwise, as ``jax.lax.div``: for integers the quotient
    rounds toward zero (C's), not down as ``//`` does.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.div(mx.array([-7, 7]), mx.array([2, 2])).tolist()
    [-3, 3]
    """
    x, y = _array(x), _array(y)
    if not mx.issubdtype(aval_of(x).dtype, mx.integer):
        return prims.divide(x, y)
    if not _is_signed_integer(x):
        return prims.floor_divide(x, y)
    q = prims.floor_divide(prims.abs(x), prims.abs(y))
    return prims.multiply(prims.multiply(q, prims.sign(x)), prims.sign(y))


def bitwise_not(x: Any) -> Any:
    """The bitwise complement of an integer array (logical not of a boolean
    one), as ``jax.lax.bitwise_not``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.bitwise_not(mx.array([0, 5])).tolist()
    [-1, -6]
    """
    x = _array(x)
    return prims.logical_not(x) if aval_of(x).dtype == mx.bool_ else invert(x)


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """``operand`` cast to ``new_dtype`` (any dtype spelling), as
    ``jax.lax.convert_element_type``; floats cast to integers round toward
    zero.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.convert_element_type(mx.array([-1.7, 2.5]), "int32").tolist()
    [-1, 2]
    """
    operand = _array(operand)
    dt = to_mlx_dtype(new_dtype, "convert_element_type: new_dtype")
    return operand if aval_of(operand).dtype == dt else prims.astype(operand, dt)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """``x`` limited to ``[min, max]`` elementwise, as ``jax.lax.clamp``
    (note the argument order); ``min`` and ``max`` are scalars or have
    ``x``'s shape.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.clamp(mx.array(0), mx.array([-2, 1, 9]), mx.array(5)).tolist()
    [0, 1, 5]
    """
    x = _array(x)
    shape = aval_of(x).shape
    for name, bound in (("min", min), ("max", max)):
        bshape = aval_of(_array(bound)).shape
        if bshape not in ((), shape):
            raise TypeError(f"clamp: {name} must be a scalar or have x's shape {shape}, got "
                            f"shape {bshape}")
    # As JAX's derivative: x gets it strictly inside, a bound strictly past x,
    # and at a tie nobody.
    inside = prims.logical_and(prims.greater(x, min), prims.less(x, max))
    outside = prims.where(prims.greater(min, x), min,
                          prims.where(prims.less(max, x), max, prims.stop_gradient(x)))
    return prims.where(inside, x, outside)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise, as ``jax.lax.select_n``: ``which`` is a
    boolean (two cases at most: False picks ``cases[0]``) or integer array
    of the cases' shape, or a scalar.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.select_n(mx.array([0, 2, 1]), mx.zeros(3), mx.ones(3), mx.full(3, 2.0)).tolist()
    [0.0, 2.0, 1.0]
    """
    if not cases:
        raise ValueError("select_n: needs at least one case")
    which = _array(which)
    wdt = aval_of(which).dtype
    if wdt == mx.bool_ and len(cases) > 2:
        raise TypeError(f"select_n: a boolean which selects from at most 2 cases, got "
                        f"{len(cases)}")
    if wdt != mx.bool_ and not mx.issubdtype(wdt, mx.integer):
        raise TypeError(f"select_n: which must be boolean or integer, got {wdt}")
    first = aval_of(_array(cases[0]))
    for i, c in enumerate(cases[1:], 1):
        if aval_of(_array(c)) != first:
            raise TypeError(f"select_n: every case must have cases[0]'s shape and dtype "
                            f"{first}, but cases[{i}] is {aval_of(_array(c))}")
    wshape = aval_of(which).shape
    if wshape not in ((), first.shape):
        raise TypeError(f"select_n: which must be a scalar or have the cases' shape "
                        f"{first.shape}, got shape {wshape}")
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        pick = which if wdt == mx.bool_ else prims.equal(which, i)
        out = prims.where(pick, c, out)
    return out if len(cases) > 1 else prims.broadcast_to(_array(out), first.shape)


def _ints(values: Any, fname: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be a sequence of ints, got {values!r}") from None


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """``operand`` broadcast with new leading axes of ``sizes``, as
    ``jax.lax.broadcast``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.broadcast(mx.array([1, 2]), (3,)).shape
    (3, 2)
    """
    operand = _array(operand)
    sizes = _ints(sizes, "broadcast", "sizes")
    return prims.broadcast_to(operand, sizes + tuple(aval_of(operand).shape))


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """``operand`` broadcast to ``shape``, its axis ``i`` becoming the
    result's axis ``broadcast_dimensions[i]`` (increasing), as
    ``jax.lax.broadcast_in_dim``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.broadcast_in_dim(mx.array([1, 2]), (2, 3), (0,)).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    operand = _array(operand)
    shape = _ints(shape, "broadcast_in_dim", "shape")
    dims = _ints(broadcast_dimensions, "broadcast_in_dim", "broadcast_dimensions")
    in_shape = aval_of(operand).shape
    if len(dims) != len(in_shape) or any(b <= a for a, b in zip(dims, dims[1:])) or any(
            not 0 <= d < len(shape) for d in dims):
        raise ValueError(
            f"broadcast_in_dim: broadcast_dimensions must be {len(in_shape)} increasing axes "
            f"of the result's {len(shape)}, got {dims}")
    for i, d in enumerate(dims):
        if in_shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: operand axis {i} of length {in_shape[i]} "
                            f"cannot broadcast to result axis {d} of length {shape[d]}")
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = in_shape[i]
    return prims.broadcast_to(prims.reshape(operand, tuple(expanded)), shape)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading length-1 axes added up to ``rank`` axes, as
    ``jax.lax.broadcast_to_rank``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.broadcast_to_rank(mx.ones(3), 3).shape
    (1, 1, 3)
    """
    x = _array(x)
    shape = aval_of(x).shape
    if rank <= len(shape):
        return x
    return prims.reshape(x, (1,) * (rank - len(shape)) + tuple(shape))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives ``shapes``, as
    ``jax.lax.broadcast_shapes``.

    >>> import ftorch.lax as lax
    >>> lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    shapes = [_ints(s, "broadcast_shapes", "each shape") for s in shapes]
    rank = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        sizes = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"broadcast_shapes: incompatible shapes for broadcasting: "
                             f"{tuple(map(tuple, shapes))}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of ``shape`` whose entries count along axis ``dimension``
    (0, 1, 2...), as ``jax.lax.broadcasted_iota``.

    >>> import ftorch.lax as lax
    >>> lax.broadcasted_iota("int32", (2, 3), 1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    dt = to_mlx_dtype(dtype, "broadcasted_iota: dtype")
    shape = _ints(shape, "broadcasted_iota", "shape")
    d = check_axis(dimension, len(shape), "broadcasted_iota", "dimension")
    line = mx.arange(shape[d], dtype=dt)
    return mx.broadcast_to(line.reshape([-1 if i == d else 1 for i in range(len(shape))]), shape)


def iota(dtype: Any, size: int) -> Any:
    """``[0, 1, ..., size - 1]`` in ``dtype``, as ``jax.lax.iota``.

    >>> import ftorch.lax as lax
    >>> lax.iota("float32", 3).tolist()
    [0.0, 1.0, 2.0]
    """
    return mx.arange(operator.index(size), dtype=to_mlx_dtype(dtype, "iota: dtype"))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """``operand`` with axes ``start_dimension`` up to (not including)
    ``stop_dimension`` (the end when None) merged into one, as
    ``jax.lax.collapse``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.collapse(mx.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    operand = _array(operand)
    shape = tuple(aval_of(operand).shape)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"collapse: empty range of axes [{start_dimension}:{stop_dimension}] "
                         f"of shape {shape}")
    return prims.reshape(operand, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """``operand`` with the order of its elements reversed along
    ``dimensions``, as ``jax.lax.rev``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.rev(mx.array([[1, 2], [3, 4]]), (1,)).tolist()
    [[2, 1], [4, 3]]
    """
    operand = _array(operand)
    ndim = len(aval_of(operand).shape)
    axes = {check_axis(d, ndim, "rev", "dimensions")
            for d in _ints(dimensions, "rev", "dimensions")}
    if not axes:
        return operand
    return prims.static_slice(operand, tuple(builtins.slice(None, None, -1) if i in axes
                                             else builtins.slice(None) for i in range(ndim)))


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """``operand[start:limit:stride]`` on every axis, as ``jax.lax.slice``
    (indices in ``[0, length]``, positive strides).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.slice(mx.arange(10), (1,), (8,), (3,)).tolist()
    [1, 4, 7]
    """
    operand = _array(operand)
    shape = aval_of(operand).shape
    start = _ints(start_indices, "slice", "start_indices")
    limit = _ints(limit_indices, "slice", "limit_indices")
    step = (1,) * len(shape) if strides is None else _ints(strides, "slice", "strides")
    if not len(start) == len(limit) == len(step) == len(shape):
        raise TypeError(f"slice: start_indices, limit_indices and strides must each have one "
                        f"entry per axis of the operand of shape {shape}")
    for i, (a, b, s, d) in enumerate(zip(start, limit, step, shape)):
        if not 0 <= a <= b <= d or s < 1:
            raise ValueError(f"slice: axis {i} of length {d} cannot be sliced {a}:{b}:{s} "
                             "(need 0 <= start <= limit <= length and a positive stride)")
    return prims.static_slice(operand, tuple(builtins.slice(a, b, s)
                                             for a, b, s in zip(start, limit, step)))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """``operand[start:limit:stride]`` along ``axis`` (negative indices count
    from the end, None is the whole extent), as ``jax.lax.slice_in_dim``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.slice_in_dim(mx.arange(6).reshape(2, 3), 1, None, axis=1).tolist()
    [[1, 2], [4, 5]]
    """
    operand = _array(operand)
    shape = aval_of(operand).shape
    a = check_axis(axis, len(shape), "slice_in_dim")
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1:
        raise ValueError(f"slice_in_dim: stride must be a positive int, got {stride!r}")
    start, stop, _ = builtins.slice(start_index, limit_index).indices(shape[a])
    stop = builtins.max(start, stop)
    return prims.static_slice(operand, (builtins.slice(None),) * a
                              + (builtins.slice(start, stop, stride),))


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The slice at ``index`` (negative counts from the end) along ``axis``,
    as ``jax.lax.index_in_dim``; ``keepdims=False`` drops that axis.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.index_in_dim(mx.arange(6).reshape(2, 3), -1, axis=1, keepdims=False).tolist()
    [2, 5]
    """
    operand = _array(operand)
    shape = aval_of(operand).shape
    a = check_axis(axis, len(shape), "index_in_dim")
    i = operator.index(index)
    if not -shape[a] <= i < shape[a]:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {axis} of "
                         f"length {shape[a]}")
    i %= shape[a]
    out = prims.static_slice(operand, (builtins.slice(None),) * a + (builtins.slice(i, i + 1),))
    return out if keepdims else prims.squeeze(out, (a,))


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` indexed along ``axes`` by the index arrays ``idxs`` (one 1-d
    array per axis, all of one length ``n``), as ``jax.lax.index_take``: the
    result has shape ``(n, *the other axes)``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(24).reshape(2, 3, 4)
    >>> lax.index_take(x, (mx.array([0, 1]), mx.array([2, 0])), (0, 2)).tolist()
    [[2, 6, 10], [12, 16, 20]]
    """
    src = _array(src)
    shape = aval_of(src).shape
    axes = tuple(check_axis(a, len(shape), "index_take", "axes")
                 for a in _ints(axes, "index_take", "axes"))
    if len(idxs) != len(axes) or len(set(axes)) != len(axes):
        raise ValueError(f"index_take: give one index array per axis (distinct axes), got "
                         f"{len(idxs)} for axes {axes}")
    rest = [a for a in range(len(shape)) if a not in axes]
    moved = prims.transpose(src, (*axes, *rest))
    # The indexed axes flattened into one: the flat index is row-major.
    flat = prims.reshape(moved, (math.prod(shape[a] for a in axes),
                                 *(shape[a] for a in rest)))
    position = None
    for a, idx in zip(axes, idxs):
        idx = _array(idx)
        if aval_of(idx).dtype != mx.int32:
            idx = prims.astype(idx, mx.int32)
        idx = prims.where(prims.less(idx, 0), prims.add(idx, shape[a]), idx)
        position = idx if position is None else prims.add(prims.multiply(position, shape[a]), idx)
    return _take_rows(flat, position)


def _take_rows(x: Any, rows: Any) -> Any:
    """Rows ``rows`` (a 1-d index array) of ``x`` along axis 0."""
    shape = aval_of(x).shape
    index = prims.broadcast_to(prims.reshape(rows, (-1,) + (1,) * (len(shape) - 1)),
                               (aval_of(rows).shape[0], *shape[1:]))
    return prims.take_along_axis(x, index, 0)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each axis ``i``
    (``len(reps)`` is its ndim), as ``jax.lax.tile``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.tile(mx.array([[1, 2]]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    operand = _array(operand)
    shape = tuple(aval_of(operand).shape)
    reps = _ints(reps, "tile", "reps")
    if len(reps) != len(shape):
        raise ValueError(f"tile: reps must have one entry per axis of the operand of shape "
                         f"{shape}, got {reps}")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    # One broadcast of a view with a new length-1 axis before each tiled
    # axis, then one reshape: a single copy, like MLX's own tile.
    inner, wide, out = [], [], []
    for r, s in zip(reps, shape):
        if r != 1 and s != 1:
            inner.append(1)
            wide.append(r)
        inner.append(s)
        wide.append(s * r if s == 1 else s)
        out.append(s * r)
    return prims.reshape(prims.broadcast_to(prims.reshape(operand, tuple(inner)), tuple(wide)),
                         tuple(out))


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Arrays of one shape and dtype joined along a new ``axis``, as
    ``jax.lax.stack``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.stack([mx.zeros(2), mx.ones(2)], axis=1).shape
    (2, 2)
    """
    operands = [_array(x) for x in operands]
    if not operands:
        raise ValueError("stack: needs at least one operand")
    first = aval_of(operands[0])
    for i, x in enumerate(operands[1:], 1):
        if aval_of(x) != first:
            raise TypeError(f"stack: every operand must have operands[0]'s shape and dtype "
                            f"{first}, but operands[{i}] is {aval_of(x)}")
    a = check_axis(axis, len(first.shape) + 1, "stack")
    return prims.concatenate([prims.expand_dims(x, (a,)) for x in operands], a)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple, as ``jax.lax.unstack``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [p.tolist() for p in lax.unstack(mx.array([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    x = _array(x)
    shape = aval_of(x).shape
    a = check_axis(axis, len(shape), "unstack")
    return tuple(index_in_dim(x, i, a, keepdims=False) for i in range(shape[a]))


def _axes(operand: Any, axes: Sequence[int], fname: str) -> tuple[Any, tuple[int, ...]]:
    operand = _array(operand)
    ndim = len(aval_of(operand).shape)
    out = tuple(check_axis(a, ndim, fname, "axes") for a in _ints(axes, fname, "axes"))
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in axes {tuple(axes)}")
    return operand, out


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """The sum over ``axes``, as ``jax.lax.reduce_sum``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_sum(mx.ones((2, 3)), (1,)).tolist()
    [3.0, 3.0]
    """
    return prims.sum(*_axes(operand, axes, "reduce_sum"))


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """The product over ``axes``, as ``jax.lax.reduce_prod``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_prod(mx.array([[1.0, 2.0], [3.0, 4.0]]), (0, 1)).item()
    24.0
    """
    return prims.prod(*_axes(operand, axes, "reduce_prod"))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """The maximum over ``axes``, as ``jax.lax.reduce_max``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_max(mx.array([[1, 5], [3, 2]]), (1,)).tolist()
    [5, 3]
    """
    return prims.max(*_axes(operand, axes, "reduce_max"))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """The minimum over ``axes``, as ``jax.lax.reduce_min``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_min(mx.array([[1, 5], [3, 2]]), (1,)).tolist()
    [1, 2]
    """
    return prims.min(*_axes(operand, axes, "reduce_min"))


def _bitwise_reduce(operand: Any, axes: tuple[int, ...], op, identity: int) -> Any:
    """The reduction of an integer ``operand`` over ``axes`` by the bitwise
    ``op``: pairs combined in halving rounds (MLX has no such reduction)."""
    shape = tuple(aval_of(operand).shape)
    dt = aval_of(operand).dtype
    kept = [a for a in range(len(shape)) if a not in axes]
    n = math.prod(shape[a] for a in axes)
    x = prims.reshape(prims.transpose(operand, (*kept, *axes)),
                      tuple(shape[a] for a in kept) + (n,))
    if n == 0:
        return mx.full(tuple(shape[a] for a in kept), mx.array(identity).astype(dt))
    lead = (builtins.slice(None),) * len(kept)
    while n > 1:
        half = n // 2
        paired = op(prims.static_slice(x, lead + (builtins.slice(0, half),)),
                    prims.static_slice(x, lead + (builtins.slice(half, 2 * half),)))
        if n % 2:
            paired = prims.concatenate(
                [paired, prims.static_slice(x, lead + (builtins.slice(2 * half, n),))], len(kept))
        x, n = paired, half + n % 2
    return prims.squeeze(x, (len(kept),))


def _logical_or_bitwise(fname: str, logical, bitwise, identity: int):
    def reduce(operand: Any, axes: Sequence[int]) -> Any:
        operand, axes = _axes(operand, axes, fname)
        dt = aval_of(operand).dtype
        if dt == mx.bool_:
            return logical(operand, axes)
        if not mx.issubdtype(dt, mx.integer):
            raise TypeError(f"{fname}: expects a boolean or integer operand, got {dt}")
        return _bitwise_reduce(operand, axes, bitwise, identity)

    reduce.__name__ = reduce.__qualname__ = fname
    return reduce


reduce_and = _logical_or_bitwise("reduce_and", prims.all, prims.bitwise_and, -1)
reduce_and.__doc__ = """The logical (boolean) or bitwise (integer) and over ``axes``, as
    ``jax.lax.reduce_and``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_and(mx.array([3, 5, 7]), (0,)).item()
    1
    >>> lax.reduce_and(mx.array([True, False]), (0,)).item()
    False
    """

reduce_or = _logical_or_bitwise("reduce_or", prims.any, prims.bitwise_or, 0)
reduce_or.__doc__ = """The logical (boolean) or bitwise (integer) or over ``axes``, as
    ``jax.lax.reduce_or``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_or(mx.array([1, 2, 4]), (0,)).item()
    7
    """


def _parity(x: Any, axes: tuple[int, ...]) -> Any:
    count = prims.sum(prims.astype(x, mx.int32), axes)
    return prims.not_equal(prims.remainder(count, 2), 0)


reduce_xor = _logical_or_bitwise("reduce_xor", _parity, prims.bitwise_xor, 0)
reduce_xor.__doc__ = """The logical (boolean) or bitwise (integer) exclusive or over
    ``axes``, as ``jax.lax.reduce_xor``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_xor(mx.array([3, 5]), (0,)).item()
    6
    >>> lax.reduce_xor(mx.array([True, True]), (0,)).item()
    False
    """


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running ``log(sum(exp(x)))`` along ``axis`` (from the end with
    ``reverse``), as ``jax.lax.cumlogsumexp``: an associative scan of
    ``logaddexp``, so stable for any range of values and differentiable to
    any order.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 4) for v in lax.cumlogsumexp(mx.array([0.0, 0.0, 0.0])).tolist()]
    [0.0, 0.6931, 1.0986]
    """
    operand = _array(operand)
    a = check_axis(axis, len(aval_of(operand).shape), "cumlogsumexp")
    if not is_floating(aval_of(operand).dtype):
        raise TypeError(f"cumlogsumexp: expects a floating operand, got {aval_of(operand).dtype}")
    return associative_scan(prims.logaddexp, operand, reverse=reverse, axis=a)


def empty(shape: Sequence[int], dtype: Any) -> Any:
    """An array of ``shape`` and ``dtype`` whose values do not matter, as
    ``jax.lax.empty`` (zeros here).

    >>> import ftorch.lax as lax
    >>> lax.empty((2,), "float32").shape
    (2,)
    """
    return mx.zeros(_ints(shape, "empty", "shape"), to_mlx_dtype(dtype, "empty: dtype"))


def dtype(x: Any) -> mx.Dtype:
    """The MLX dtype of ``x`` (an array, a tracer, or a Python or NumPy
    scalar: a Python ``float`` is float32, an ``int`` int32), as
    ``jax.lax.dtype`` without 64-bit mode.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dtype(1.0), lax.dtype(mx.zeros(2, mx.int8))
    (mlx.core.float32, mlx.core.int8)
    """
    if isinstance(x, (mx.array, Tracer)):
        return x.dtype
    if hasattr(x, "dtype"):
        return to_mlx_dtype(x.dtype, "dtype: x")
    if isinstance(x, mx.Dtype) or isinstance(x, (type, str)):
        return to_mlx_dtype(x, "dtype: x")
    return mx.array(x).dtype


def scatter_sub(x: Any, v: Any, *arrays: Any, spec: Any) -> Any:
    """``x`` with ``v`` subtracted at the index ``spec`` (repeated indices
    accumulate): ``scatter_add`` of ``-v``, as ``jax.lax.scatter_sub`` but
    with ftorch's indexing ``spec``, like ``lax.scatter_add``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.scatter_sub(mx.ones(3), mx.array(5.0), spec=(1,)).tolist()
    [1.0, -4.0, 1.0]
    """
    return prims.scatter_add(x, prims.negative(v), *arrays, spec=spec)


def scatter_apply(x: Any, func: Any, *arrays: Any, spec: Any) -> Any:
    """``x`` with ``func`` applied to its entries at the index ``spec`` (once
    each, even where indices repeat), as ``jax.lax.scatter_apply`` but with
    ftorch's indexing ``spec``, like ``lax.scatter``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.scatter_apply(mx.ones(3), lambda v: v * 7, spec=(1,)).tolist()
    [1.0, 7.0, 1.0]
    """
    return prims.scatter(x, func(prims.gather(x, *arrays, spec=spec)), *arrays, spec=spec)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (with new leading axes) to the shape of
    ``like_arr``, as ``jax.lax.broadcast_like``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.broadcast_like(mx.ones(3), mx.zeros((2, 3))).shape
    (2, 3)
    """
    arr = _array(arr)
    shape, target = aval_of(arr).shape, aval_of(_array(like_arr)).shape
    return broadcast_in_dim(arr, target, tuple(range(len(target) - len(shape), len(target))))


def batch_matmul(lhs: Any, rhs: Any, precision: None = None) -> Any:
    """Matrix products of ``lhs`` and ``rhs`` over their equal leading
    (batch) axes, as ``jax.lax.batch_matmul``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.batch_matmul(mx.ones((4, 2, 3)), mx.ones((4, 3, 5))).shape
    (4, 2, 5)
    """
    lhs, rhs = _array(lhs), _array(rhs)
    a, b = aval_of(lhs).shape, aval_of(rhs).shape
    if len(a) != len(b) or len(a) < 2 or a[:-2] != b[:-2]:
        raise ValueError(f"batch_matmul: lhs and rhs must have the same batch axes and at "
                         f"least 2 dimensions, got shapes {a} and {b}")
    return prims.matmul(lhs, rhs)


def shape_as_value(shape: Sequence[int]) -> Any:
    """``shape`` as a 1-d int32 array, as ``jax.lax.shape_as_value``.

    >>> import ftorch.lax as lax
    >>> lax.shape_as_value((2, 3)).tolist()
    [2, 3]
    """
    return mx.array(_ints(shape, "shape_as_value", "shape"), dtype=mx.int32)


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Uniform samples in ``[a, b)`` from MLX's global random state, as
    ``jax.lax.rng_uniform`` (stateful: prefer ``ftorch.random.uniform``
    with a key; like every global-state draw it is refused under ``jit``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.rng_uniform(mx.array(0.0), mx.array(1.0), (3,)).shape
    (3,)
    """
    a, b = _array(a), _array(b)
    if aval_of(a).shape or aval_of(b).shape:
        raise TypeError("rng_uniform: a and b must be scalars")
    return mx.random.uniform(a, b, _ints(shape, "rng_uniform", "shape"), dtype=aval_of(a).dtype)


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = mx.uint32,
                      algorithm: Any = None) -> tuple[Any, Any]:
    """``(new_key, bits)``: random bits of ``shape`` and the unsigned
    ``dtype`` drawn from the uint32 ``key`` (of shape ``(2,)`` or ``(4,)``),
    and the key to draw from next, as ``jax.lax.rng_bit_generator``. The
    bits come from Threefry-2x32 (MLX's and ``ftorch.random``'s cipher), not
    from XLA's algorithms, so they differ from JAX's; ``algorithm`` is
    accepted and ignored.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> key, bits = lax.rng_bit_generator(mx.zeros(4, mx.uint32), (3,), mx.uint8)
    >>> key.shape, bits.shape, bits.dtype
    ((4,), (3,), mlx.core.uint8)
    """
    key = _array(key)
    kshape = aval_of(key).shape
    if aval_of(key).dtype != mx.uint32 or kshape not in ((2,), (4,)):
        raise TypeError(f"rng_bit_generator: key must be a uint32 array of shape (2,) or (4,), "
                        f"got {aval_of(key)}")
    dt = to_mlx_dtype(dtype, "rng_bit_generator: dtype")
    if dt not in (mx.uint8, mx.uint16, mx.uint32, mx.uint64):
        raise TypeError(f"rng_bit_generator: dtype must be an unsigned integer, got {dt}")
    pair = key if kshape == (2,) else prims.bitwise_xor(
        prims.static_slice(key, (builtins.slice(0, 2),)),
        prims.static_slice(key, (builtins.slice(2, 4),)))
    bits = bits_p.bind(fold_in_p.bind(pair, mx.array(0, mx.uint32)),
                       shape=_ints(shape, "rng_bit_generator", "shape"), dtype=dt)
    new_key = bits_p.bind(fold_in_p.bind(pair, mx.array(1, mx.uint32)), shape=kshape,
                          dtype=mx.uint32)
    return new_key, bits
