"""Bit operations as in jax.numpy: shifts (``left_shift``, ``right_shift``
and their array-API names), ``bitwise_count``, the array-API names of
``invert``, and ``packbits`` / ``unpackbits``.

The shifts and the count are the primitives ``lax.shift_left``,
``lax.shift_right_arithmetic``, ``lax.shift_right_logical`` and
``lax.population_count`` (MLX's shifts, with XLA's answer for a shift by a
negative amount or by the width or more); the packing is composed from
them. None has a derivative.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.left_shift(mx.array([1, 3]), 2).tolist()
[4, 12]
"""

from __future__ import annotations

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import as_array, aval_of
from ftorch.numpy._math import promoted_operands
from ftorch.numpy._shape import moveaxis, reshape
from ftorch.primitives.elementwise import invert
from ftorch.primitives.reduction import normalize_axis
from ftorch.typing import Array, ArrayLike

__all__ = [
    "bitwise_invert", "bitwise_not", "left_shift", "right_shift", "bitwise_left_shift",
    "bitwise_right_shift", "bitwise_count", "packbits", "unpackbits",
]

bitwise_invert = bitwise_not = invert


def _integer_operands(fname: str, x: ArrayLike, y: ArrayLike) -> list[Array]:
    (x, y), dtype = promoted_operands(fname, x, y)
    if not mx.issubdtype(dtype, mx.integer):
        raise TypeError(f"{fname}: x and y must be integers, got dtype {dtype}")
    return [x, y]


def left_shift(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x`` shifted left by ``y`` bits (0 for a shift by a negative amount
    or by the width or more), as ``jax.numpy.left_shift``
    (``bitwise_left_shift`` is this function).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.left_shift(mx.array([1, 1]), mx.array([3, 40])).tolist()
    [8, 0]
    """
    x, y = _integer_operands("left_shift", x, y)
    return lax.shift_left(x, y)


def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1`` shifted right by ``x2`` bits, as ``jax.numpy.right_shift``
    (``bitwise_right_shift`` is this function): arithmetic (the sign bit
    fills in) for signed integers, logical for unsigned ones.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.right_shift(mx.array([-8, 8]), 1).tolist()
    [-4, 4]
    """
    x1, x2 = _integer_operands("right_shift", x1, x2)
    if mx.issubdtype(aval_of(x1).dtype, mx.unsignedinteger):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x: ArrayLike, /) -> Array:
    """The number of set bits of each element (of its two's complement for
    negative integers), as uint8, as ``jax.numpy.bitwise_count``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.bitwise_count(mx.array([7, -1])).tolist()
    [3, 32]
    """
    x = as_array(x, "bitwise_count: x")
    dtype = aval_of(x).dtype
    if dtype == mx.bool_:
        return lax.astype(x, mx.uint8)
    if not mx.issubdtype(dtype, mx.integer):
        raise TypeError(f"bitwise_count: x must be an integer or bool array, got dtype {dtype}")
    return lax.astype(lax.population_count(x), mx.uint8)


def _check_bitorder(bitorder: str, fname: str) -> None:
    if bitorder not in ("big", "little"):
        raise ValueError(f"{fname}: bitorder must be 'big' or 'little', got {bitorder!r}")


def _bit_weights(bitorder: str) -> mx.array:
    """The value of each of a byte's 8 bits, first to last."""
    weights = [1 << (7 - i) for i in range(8)]
    return mx.array(weights if bitorder == "big" else weights[::-1], dtype=mx.uint8)


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Array:
    """Each run of 8 elements of ``a`` along ``axis`` (of the flattened
    array when ``None``), nonzero read as 1, packed into one uint8 (the last
    byte padded with zeros), as ``jax.numpy.packbits``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.packbits(mx.array([1, 0, 1, 1, 0, 0, 0, 0, 1])).tolist()
    [176, 128]
    """
    a = as_array(a, "packbits: a")
    dtype = aval_of(a).dtype
    if not (dtype == mx.bool_ or mx.issubdtype(dtype, mx.integer)):
        raise TypeError(f"packbits: a must be an integer or bool array, got dtype {dtype}")
    _check_bitorder(bitorder, "packbits")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = normalize_axis(axis, aval_of(a).ndim, "packbits")
    bits = lax.astype(lax.not_equal(moveaxis(a, axis, -1), 0), mx.uint8)
    shape = tuple(aval_of(bits).shape)
    pad = -shape[-1] % 8
    if pad:
        bits = lax.pad(bits, 0, ((0, 0),) * (len(shape) - 1) + ((0, pad),))
    groups = reshape(bits, (*shape[:-1], (shape[-1] + pad) // 8, 8))
    packed = lax.sum(lax.multiply(groups, _bit_weights(bitorder)), (len(shape),))
    return moveaxis(lax.astype(packed, mx.uint8), -1, axis)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Array:
    """The bits of the uint8 array ``a`` along ``axis`` (of the flattened
    array when ``None``) as a uint8 array 8 times as long, as
    ``jax.numpy.unpackbits``; ``count`` keeps the first ``count`` bits
    (pads with zeros beyond them; a negative ``count`` drops that many from
    the end).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.unpackbits(mx.array([2, 7], dtype=mx.uint8), count=12).tolist()
    [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    """
    a = as_array(a, "unpackbits: a")
    if aval_of(a).dtype != mx.uint8:
        raise TypeError(f"unpackbits: a must be a uint8 array, got dtype {aval_of(a).dtype}")
    _check_bitorder(bitorder, "unpackbits")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = normalize_axis(axis, aval_of(a).ndim, "unpackbits")
    a = moveaxis(a, axis, -1)
    shape = tuple(aval_of(a).shape)
    shifts = 7 - mx.arange(8, dtype=mx.uint8) if bitorder == "big" else mx.arange(
        8, dtype=mx.uint8)
    bits = lax.bitwise_and(lax.shift_right_logical(lax.expand_dims(a, (len(shape),)), shifts), 1)
    bits = reshape(bits, (*shape[:-1], shape[-1] * 8))
    if count is not None:
        total = shape[-1] * 8
        keep = total + count if count < 0 else count
        if keep < 0:
            raise ValueError(f"unpackbits: count={count} drops more than the {total} bits")
        if keep <= total:
            bits = lax.static_slice(bits, (slice(None),) * (len(shape) - 1) + (slice(0, keep),))
        else:
            bits = lax.pad(bits, 0, ((0, 0),) * (len(shape) - 1) + ((0, keep - total),))
    return moveaxis(bits, -1, axis)
