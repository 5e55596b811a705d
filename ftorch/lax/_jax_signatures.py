"""``jax.lax``'s signatures for the primitives whose strict wrapper takes its
parameters another way: ``max``/``min`` are JAX's elementwise ops (the
reductions are ``reduce_max``/``reduce_min``), ``argmax`` takes an
``index_dtype``, ``split`` sizes, ``pad`` XLA's ``(low, high, interior)``
triples, ``round`` a ``rounding_method``, ``top_k`` an ``axis``, and the
cumulative ops default to ``axis=0``. Inside ftorch the strict wrappers
(``ftorch.primitives``) are used; these are the public face.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as prims
from ftorch.api_util import check_axis
from ftorch.core import aval_of
from ftorch.dtypes import DTypeLike, to_mlx_dtype

__all__ = ["full", "max", "min", "argmax", "argmin", "split", "pad", "round", "RoundingMethod",
           "top_k", "cumsum", "cumprod", "cummax", "cummin", "fft", "FftType"]


def _ndim(x: Any) -> int:
    return len(aval_of(x).shape)


def full(shape: Sequence[int], fill_value: Any, dtype: DTypeLike | None = None) -> Any:
    """An array of ``shape`` filled with ``fill_value``, in ``dtype`` or, by
    default, the value's own (float32 for a Python float, int32 for an int),
    as ``jax.lax.full``.

    >>> import ftorch.lax as lax
    >>> lax.full((2,), 1.5).tolist(), lax.full((1,), 3).dtype
    ([1.5, 1.5], mlx.core.int32)
    """
    if dtype is None:
        dtype = aval_of(fill_value).dtype if hasattr(fill_value, "shape") else (
            mx.bool_ if isinstance(fill_value, bool) else
            mx.int32 if isinstance(fill_value, int) else mx.float32)
    return prims.full(tuple(shape), fill_value, to_mlx_dtype(dtype, "full dtype"))


def max(x: Any, y: Any) -> Any:
    """The elementwise maximum of ``x`` and ``y`` (NaN if either is), as
    ``jax.lax.max``; the reduction is ``lax.reduce_max``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.max(mx.array([1.0, 5.0]), mx.array([3.0, 2.0])).tolist()
    [3.0, 5.0]
    """
    return prims.maximum(x, y)


def min(x: Any, y: Any) -> Any:
    """The elementwise minimum of ``x`` and ``y`` (NaN if either is), as
    ``jax.lax.min``; the reduction is ``lax.reduce_min``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.min(mx.array([1.0, 5.0]), mx.array([3.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    return prims.minimum(x, y)


def _arg_extreme(prim, x: Any, axis: int, index_dtype: DTypeLike, name: str) -> Any:
    axis = check_axis(axis, _ndim(x), name)
    dtype = to_mlx_dtype(index_dtype, f"{name} index_dtype")
    if not mx.issubdtype(dtype, mx.integer):
        raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype!r}")
    return prims.astype(prim(x, axis), dtype)


def argmax(operand: Any, axis: int, index_dtype: DTypeLike) -> Any:
    """The index of the first maximum along ``axis``, in ``index_dtype``, as
    ``jax.lax.argmax``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.argmax(mx.array([[1.0, 3.0, 3.0]]), 1, mx.int32).tolist()
    [1]
    """
    return _arg_extreme(prims.argmax, operand, axis, index_dtype, "argmax")


def argmin(operand: Any, axis: int, index_dtype: DTypeLike) -> Any:
    """The index of the first minimum along ``axis``, in ``index_dtype``, as
    ``jax.lax.argmin``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.argmin(mx.array([[4.0, 1.0, 1.0]]), 1, mx.int32).tolist()
    [1]
    """
    return _arg_extreme(prims.argmin, operand, axis, index_dtype, "argmin")


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """``operand`` cut along ``axis`` into consecutive pieces of the given
    ``sizes`` (which must add up to the axis), as ``jax.lax.split``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [p.tolist() for p in lax.split(mx.arange(5), (2, 3))]
    [[0, 1], [2, 3, 4]]
    """
    shape = aval_of(operand).shape
    axis = check_axis(axis, len(shape), "split")
    sizes = tuple(sizes)
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in sizes):
        raise ValueError(f"split: sizes must be non-negative ints, got {sizes}")
    if builtins.sum(sizes) != shape[axis]:
        raise ValueError(f"split: sizes {sizes} add up to {builtins.sum(sizes)}, but axis "
                         f"{axis} of the operand has size {shape[axis]}")
    points, at = [], 0
    for s in sizes[:-1]:
        at += s
        points.append(at)
    return list(prims.split(operand, tuple(points), axis))


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]
        ) -> Any:
    """``operand`` padded with the scalar ``padding_value`` by one
    ``(low, high, interior)`` triple per axis, as ``jax.lax.pad``: ``interior``
    values go between neighbouring elements, and a negative ``low`` or
    ``high`` removes elements from that end. Differentiable in both.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.pad(mx.array([1.0, 2.0, 3.0]), 0.0, [(1, -1, 1)]).tolist()
    [0.0, 1.0, 0.0, 2.0, 0.0]
    """
    shape = aval_of(operand).shape
    config = [tuple(c) for c in padding_config]
    if len(config) != len(shape) or any(len(c) != 3 for c in config):
        raise ValueError(f"pad: padding_config must have one (low, high, interior) triple per "
                         f"axis of the operand's shape {shape}, got {padding_config}")
    if any(isinstance(v, bool) or not isinstance(v, int) for c in config for v in c):
        raise TypeError(f"pad: padding_config must hold ints, got {padding_config}")
    if any(c[2] < 0 for c in config):
        raise ValueError(f"pad: interior padding must be non-negative, got {padding_config}")
    value = prims.astype(padding_value, aval_of(operand).dtype) if hasattr(
        padding_value, "shape") else padding_value
    x = operand
    for axis, (_, _, interior) in enumerate(config):
        if interior and shape[axis] > 1:
            x = _interleave(x, value, axis, interior)
    widths = tuple((builtins.max(lo, 0), builtins.max(hi, 0)) for lo, hi, _ in config)
    if any(w != (0, 0) for w in widths):
        x = prims.pad(x, value, widths)
    out_shape = aval_of(x).shape
    starts = tuple(-builtins.min(lo, 0) for lo, _, _ in config)
    stops = tuple(n + builtins.min(hi, 0) for n, (_, hi, _) in zip(out_shape, config))
    if any(b > e for b, e in zip(starts, stops)):
        raise ValueError(f"pad: padding_config {padding_config} removes more elements than "
                         f"the operand's shape {shape} has")
    if starts != (0,) * len(shape) or stops != tuple(out_shape):
        x = prims.static_slice(x, [builtins.slice(b, e) for b, e in zip(starts, stops)])
    return x


def _interleave(x: Any, value: Any, axis: int, interior: int) -> Any:
    """``x`` with ``interior`` copies of ``value`` between neighbours along ``axis``."""
    shape = aval_of(x).shape
    n = shape[axis]
    filler = prims.full((*shape[:axis + 1], interior, *shape[axis + 1:]), value,
                        aval_of(x).dtype)
    grouped = prims.concatenate([prims.expand_dims(x, (axis + 1,)), filler], axis + 1)
    merged = prims.reshape(grouped, (*shape[:axis], n * (interior + 1), *shape[axis + 1:]))
    keep = [builtins.slice(None)] * len(shape)
    keep[axis] = builtins.slice(0, n * (interior + 1) - interior)
    return prims.static_slice(merged, keep)


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties, as ``jax.lax.RoundingMethod``."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO
          ) -> Any:
    """``x`` rounded to the nearest integer, ties away from zero (JAX's
    default) or to even (``RoundingMethod.TO_NEAREST_EVEN``, ``numpy.round``'s
    rule), as ``jax.lax.round``. Its derivative is zero.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.round(mx.array([0.5, 1.5, -2.5])).tolist()
    [1.0, 2.0, -3.0]
    >>> lax.round(mx.array([0.5, 1.5]), lax.RoundingMethod.TO_NEAREST_EVEN).tolist()
    [0.0, 2.0]
    """
    method = RoundingMethod(rounding_method)
    if method is RoundingMethod.TO_NEAREST_EVEN:
        return prims.round(x)
    # Ties away from zero: round |x| half up, then restore the sign.
    magnitude = prims.floor(prims.abs(x) + 0.5)
    return prims.stop_gradient(prims.where(x < 0, -magnitude, magnitude))


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``axis`` of ``operand``, in
    descending order, and their ``int32`` indices, as ``jax.lax.top_k``
    (ties to the lower index; NaN is the largest value).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> values, indices = lax.top_k(mx.array([[1.0, 4.0], [3.0, 2.0]]), 1, axis=0)
    >>> values.tolist(), indices.tolist()
    ([[3.0, 4.0]], [[1, 0]])
    """
    ndim = _ndim(operand)
    if ndim == 0:
        raise ValueError("top_k: operand must have at least one dimension, got a 0-d array")
    axis = check_axis(axis, ndim, "top_k")
    if axis == ndim - 1:
        return prims.top_k(operand, k)
    last = ndim - 1
    values, indices = prims.top_k(prims.moveaxis(operand, axis, last), k)
    return prims.moveaxis(values, last, axis), prims.moveaxis(indices, last, axis)


def _cumulative(prim, name: str):
    def op(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        return prim(operand, check_axis(axis, _ndim(operand), name), reverse=reverse)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"The cumulative {name[3:]} along ``axis`` (from the end when ``reverse``), as "
        f"``jax.lax.{name}``.\n\n"
        f"    >>> import ftorch.lax as lax, mlx.core as mx\n"
        f"    >>> lax.{name}(mx.array([1.0, 3.0, 2.0])).tolist()\n"
        f"    {_EXAMPLES[name]}\n")
    return op


_EXAMPLES = {"cumsum": "[1.0, 4.0, 6.0]", "cumprod": "[1.0, 3.0, 6.0]",
             "cummax": "[1.0, 3.0, 3.0]", "cummin": "[1.0, 1.0, 1.0]"}
cumsum = _cumulative(prims.cumsum, "cumsum")
cumprod = _cumulative(prims.cumprod, "cumprod")
cummax = _cumulative(prims.cummax, "cummax")
cummin = _cumulative(prims.cummin, "cummin")


class FftType(enum.IntEnum):
    """The kinds of ``lax.fft``, as ``jax.lax.FftType``."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The DFT of kind ``fft_type`` (an ``FftType``, or its name in either
    case) over the last ``len(fft_lengths)`` axes of ``x``, as
    ``jax.lax.fft``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.fft(mx.ones(4, mx.complex64), lax.FftType.FFT, (4,)).tolist()
    [(4+0j), 0j, 0j, 0j]
    """
    if isinstance(fft_type, str):
        if fft_type.upper() not in FftType.__members__:
            raise ValueError(f"fft: fft_type must be one of {list(FftType.__members__)}, "
                             f"got {fft_type!r}")
        fft_type = FftType[fft_type.upper()]
    return prims.fft(x, FftType(fft_type).name.lower(), tuple(fft_lengths))
