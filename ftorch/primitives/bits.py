"""Bit-level primitives: shifts, population count, leading zeros, the high
half of a product, reinterpreting bits as another dtype, the next float, and
rounding floats to fewer exponent and mantissa bits; the primitive layer.

MLX has kernels for the shifts and for ``view`` (reinterpreting bits); the
others are short compositions of MLX's integer ops in the implementation,
so each is still one primitive (one node under jit). All are integer or
bit-level ops, without derivatives, except ``reduce_precision``, whose
derivative is itself applied to the tangent (as in JAX).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.shift_left(mx.array([1, 3]), 2).tolist()
[4, 12]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from ftorch.core import Primitive, Tracer
from ftorch.dtypes import to_mlx_dtype
from ftorch.primitives._rules import broadcasting, linear, move_bdim, nondifferentiable, vectorized

__all__ = [
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "population_count", "clz",
    "mulhi", "bitcast_convert_type", "nextafter", "reduce_precision",
]

_UNSIGNED = {1: mx.uint8, 2: mx.uint16, 4: mx.uint32, 8: mx.uint64}
_SIGNED = {1: mx.int8, 2: mx.int16, 4: mx.int32, 8: mx.int64}
# (exponent bits, mantissa bits) of each float dtype.
_FLOAT_BITS = {mx.float16: (5, 10), mx.bfloat16: (8, 7), mx.float32: (8, 23),
               mx.float64: (11, 52)}


def _check_integer(x: mx.array, fname: str) -> None:
    if not mx.issubdtype(x.dtype, mx.integer):
        raise TypeError(f"{fname}: expects integer operands, got {x.dtype}")


def _as_array(x: Any, like: Any = None) -> Any:
    """``x`` as an array; a Python scalar takes the dtype of ``like``."""
    if isinstance(x, (mx.array, Tracer)):
        return x
    return mx.array(x, dtype=like.dtype if isinstance(like, (mx.array, Tracer)) else None)


def _unsigned(x: mx.array) -> mx.array:
    """``x``'s bits as the unsigned integer dtype of its width."""
    return x if x.dtype == _UNSIGNED[x.dtype.size] else x.view(_UNSIGNED[x.dtype.size])


# ----------------------------------------------------------------------------
# Shifts: a shift by a negative amount or by the bit width or more gives 0
# (or, arithmetic, the sign), as in XLA; C's shifts leave that undefined.
# ----------------------------------------------------------------------------


def _shift_operands(x: Any, y: Any, fname: str) -> tuple[mx.array, mx.array, int]:
    x, y = _as_array(x, y), _as_array(y, x)
    _check_integer(x, fname)
    _check_integer(y, fname)
    if x.dtype != y.dtype:
        raise TypeError(f"{fname}: operands must have the same dtype, got {x.dtype} and "
                        f"{y.dtype}")
    return x, y, 8 * x.dtype.size


def _shift_left_impl(x, y):
    x, y, bits = _shift_operands(x, y, "shift_left")
    in_range = (y >= 0) & (y < bits)
    return mx.where(in_range, mx.left_shift(x, mx.where(in_range, y, 0)), mx.zeros_like(x))


def _shift_right_logical_impl(x, y):
    x, y, bits = _shift_operands(x, y, "shift_right_logical")
    in_range = (y >= 0) & (y < bits)
    shifted = mx.right_shift(_unsigned(x), _unsigned(mx.where(in_range, y, 0)))
    return mx.where(in_range, shifted.view(x.dtype), mx.zeros_like(x))


def _shift_right_arithmetic_impl(x, y):
    x, y, bits = _shift_operands(x, y, "shift_right_arithmetic")
    signed = x.dtype if x.dtype == _SIGNED[x.dtype.size] else _SIGNED[x.dtype.size]
    # Shifting by bits - 1 or more leaves only copies of the sign bit.
    amount = mx.where((y >= 0) & (y < bits), y, bits - 1).astype(signed)
    return mx.right_shift(x.view(signed), amount).view(x.dtype)


def _binary(name: str, impl, doc: str) -> tuple[Primitive, Any]:
    prim = Primitive(name, impl, elementwise=True)
    nondifferentiable(prim)
    broadcasting(prim)

    def op(x: Any, y: Any) -> Any:
        return prim.bind(x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return prim, op


shift_left_p, shift_left = _binary("shift_left", _shift_left_impl, """\
``x << y`` elementwise for integers of one dtype, as ``jax.lax.shift_left``:
    0 where ``y`` is negative or at least the bit width.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.shift_left(mx.array([1, 1]), mx.array([3, 40])).tolist()
    [8, 0]
    """)

shift_right_logical_p, shift_right_logical = _binary(
    "shift_right_logical", _shift_right_logical_impl, """\
``x >> y`` elementwise, filling with zero bits (the bits read as unsigned),
    as ``jax.lax.shift_right_logical``: 0 where ``y`` is negative or at least
    the bit width.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.shift_right_logical(mx.array([-8, 8], dtype=mx.int32), 1).tolist()
    [2147483644, 4]
    """)

shift_right_arithmetic_p, shift_right_arithmetic = _binary(
    "shift_right_arithmetic", _shift_right_arithmetic_impl, """\
``x >> y`` elementwise, filling with copies of the sign bit (the bits read
    as signed), as ``jax.lax.shift_right_arithmetic``; a shift by the bit
    width or more (or a negative one) leaves only the sign.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.shift_right_arithmetic(mx.array([-8, 8], dtype=mx.int32), 1).tolist()
    [-4, 4]
    """)


# ----------------------------------------------------------------------------
# population_count, clz
# ----------------------------------------------------------------------------


def _population_count_impl(x):
    _check_integer(x, "population_count")
    u = _unsigned(x)
    bits = 8 * x.dtype.size
    # Sum the bits in ever wider fields: pairs, nibbles, then bytes.
    m1, m2, m4 = (mx.array(int(p * ((1 << bits) - 1) // 0xFF), u.dtype)
                  for p in (0x55, 0x33, 0x0F))
    u = u - (mx.right_shift(u, 1) & m1)
    u = (u & m2) + (mx.right_shift(u, 2) & m2)
    u = (u + mx.right_shift(u, 4)) & m4
    total = u & 0xFF
    for shift in range(8, bits, 8):
        total = total + (mx.right_shift(u, shift) & 0xFF)
    return total.astype(x.dtype)


population_count_p = Primitive("population_count", _population_count_impl, elementwise=True)
nondifferentiable(population_count_p)
vectorized(population_count_p)


def population_count(x: Any) -> Any:
    """The number of set bits of each element of the integer array ``x``, in
    its dtype, as ``jax.lax.population_count``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.population_count(mx.array([0, 7, -1], dtype=mx.int32)).tolist()
    [0, 3, 32]
    """
    return population_count_p.bind(x)


def _clz_impl(x):
    _check_integer(x, "clz")
    u = _unsigned(x)
    bits = 8 * x.dtype.size
    count = mx.zeros(u.shape, mx.int32)
    # Binary search for the highest set bit: halve the window each step.
    width = bits // 2
    while width:
        empty = mx.right_shift(u, width) == 0
        count = count + mx.where(empty, width, 0)
        u = mx.where(empty, u, mx.right_shift(u, width))
        width //= 2
    count = count + (u == 0)  # the last bit
    return count.astype(x.dtype)


clz_p = Primitive("clz", _clz_impl, elementwise=True)
nondifferentiable(clz_p)
vectorized(clz_p)


def clz(x: Any) -> Any:
    """The number of leading zero bits of each element of the integer array
    ``x`` (its bit width for 0), in its dtype, as ``jax.lax.clz``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.clz(mx.array([0, 1, 255, -1], dtype=mx.int32)).tolist()
    [32, 31, 24, 0]
    """
    return clz_p.bind(x)


# ----------------------------------------------------------------------------
# mulhi
# ----------------------------------------------------------------------------


def _mulhi_impl(x, y):
    x, y = _as_array(x, y), _as_array(y, x)
    _check_integer(x, "mulhi")
    if x.dtype != y.dtype:
        raise TypeError(f"mulhi: operands must have the same dtype, got {x.dtype} and {y.dtype}")
    size = x.dtype.size
    if size == 8:
        raise NotImplementedError("mulhi: 64-bit operands are not supported (MLX has no "
                                  "128-bit product)")
    signed = x.dtype == _SIGNED[size]
    wide = (_SIGNED if signed else _UNSIGNED)[2 * size]
    product = x.astype(wide) * y.astype(wide)
    return mx.right_shift(product, 8 * size).astype(x.dtype)


mulhi_p, mulhi = _binary("mulhi", _mulhi_impl, """\
The high half of the double-width product ``x * y`` of integers of one
    dtype (up to 32 bits), as ``jax.lax.mulhi``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.array([1 << 20], dtype=mx.uint32)
    >>> lax.mulhi(x, x).tolist()
    [256]
    """)


# ----------------------------------------------------------------------------
# bitcast_convert_type
# ----------------------------------------------------------------------------


def _bitcast_impl(x, dtype):
    old, new = x.dtype.size, dtype.size
    if old == new:
        return x.view(dtype)
    if old > new:  # each element becomes old // new narrower ones, on a new last axis
        return x.reshape(*x.shape, 1).view(dtype).reshape(*x.shape, old // new)
    if not x.shape or x.shape[-1] != new // old:
        raise ValueError(
            f"bitcast_convert_type: converting {x.dtype} to the wider {dtype} needs a last "
            f"axis of length {new // old}, got shape {tuple(x.shape)}")
    return x.view(dtype).reshape(x.shape[:-1])


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast_impl)
nondifferentiable(bitcast_convert_type_p)


@bitcast_convert_type_p.def_batch
def _bitcast_batch(vals, dims, axis_size, *, dtype):
    # The last axis may change length: keep the batch axis off it.
    return bitcast_convert_type_p.bind(move_bdim(vals[0], dims[0], 0, axis_size), dtype=dtype), 0


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """``operand``'s bits read as ``new_dtype`` (any dtype spelling), as
    ``jax.lax.bitcast_convert_type``: a narrower dtype adds a last axis (of
    the width ratio), a wider one removes the last axis (which must have
    that length).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.bitcast_convert_type(mx.array(1.0), mx.int32).item()
    1065353216
    """
    return bitcast_convert_type_p.bind(
        _as_array(operand), dtype=to_mlx_dtype(new_dtype, "bitcast_convert_type: new_dtype"))


# ----------------------------------------------------------------------------
# nextafter
# ----------------------------------------------------------------------------


def _nextafter_impl(x, y):
    x, y = _as_array(x, y), _as_array(y, x)
    if x.dtype not in _FLOAT_BITS or x.dtype != y.dtype:
        raise TypeError(f"nextafter: expects two floating operands of one dtype, got {x.dtype} "
                        f"and {y.dtype}")
    x, y = mx.broadcast_arrays(x, y)
    signed = _SIGNED[x.dtype.size]
    bits = x.view(signed)
    # Away from zero is one more in the magnitude's bits, towards it one less.
    step = mx.where((y > x) == (x > 0), 1, -1).astype(signed)
    # From zero, the smallest subnormal with y's sign.
    sign_bit = mx.array(-0.0, x.dtype).view(signed)
    smallest_toward_y = mx.where(y > 0, mx.array(1, signed), sign_bit | 1)
    out = mx.where(x == 0, smallest_toward_y, bits + step).view(x.dtype)
    out = mx.where(x == y, y, out)
    return mx.where(mx.isnan(x) | mx.isnan(y), mx.array(float("nan"), x.dtype), out)


nextafter_p = Primitive("nextafter", _nextafter_impl, elementwise=True)
nondifferentiable(nextafter_p)
broadcasting(nextafter_p)


def nextafter(x1: Any, x2: Any) -> Any:
    """The next floating-point number after ``x1`` in the direction of ``x2``,
    elementwise, as ``jax.lax.nextafter`` (``x2`` where they are equal, NaN
    where either is NaN). Not differentiable.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.nextafter(mx.array(1.0), mx.array(2.0)).item() - 1.0
    1.1920928955078125e-07
    """
    return nextafter_p.bind(x1, x2)


# ----------------------------------------------------------------------------
# reduce_precision
# ----------------------------------------------------------------------------


def _reduce_precision_impl(x, exponent_bits, mantissa_bits):
    if x.dtype not in _FLOAT_BITS:
        raise TypeError(f"reduce_precision: expects a floating operand, got {x.dtype}")
    exp_bits, mant_bits = _FLOAT_BITS[x.dtype]
    width = 8 * x.dtype.size
    udt = _UNSIGNED[x.dtype.size]
    u = x.view(udt)

    def const(v: int) -> mx.array:
        return mx.array(v, udt)

    if mantissa_bits < mant_bits:  # round to nearest, ties to even, on the kept bits
        dropped = mant_bits - mantissa_bits
        last_kept = 1 << dropped
        bias = mx.right_shift(u & const(last_kept), const(dropped)) + const((last_kept >> 1) - 1)
        u = (u + bias) & const(((1 << width) - 1) ^ (last_kept - 1))
    if exponent_bits < exp_bits:  # overflow to infinity, underflow to zero
        sign = const(1 << (width - 1))
        exponent_mask = const(((1 << exp_bits) - 1) << mant_bits)
        bias, reduced_bias = (1 << (exp_bits - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = u & exponent_mask
        overflow = exponent > const((bias + reduced_bias) << mant_bits)
        underflow = exponent <= const((bias - reduced_bias) << mant_bits)
        signed_zero = u & sign
        u = mx.where(overflow, signed_zero | exponent_mask, mx.where(underflow, signed_zero, u))
    out = u.view(x.dtype)
    if mantissa_bits > 0:  # a NaN stays NaN (rounding might have carried it to infinity)
        out = mx.where(mx.isnan(x), x, out)
    return out


reduce_precision_p = Primitive("reduce_precision", _reduce_precision_impl, elementwise=True)
linear(reduce_precision_p, lambda ct, x, **params: reduce_precision_p.bind(ct, **params))
vectorized(reduce_precision_p)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``operand`` rounded to a float format with ``exponent_bits`` exponent
    and ``mantissa_bits`` mantissa bits (ties to even; out of range to
    infinity or zero), kept in its dtype, as ``jax.lax.reduce_precision``.
    Its derivative rounds the tangent the same way, as in JAX.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce_precision(mx.array(1.0 + 2 ** -10), exponent_bits=8, mantissa_bits=7).item()
    1.0
    """
    for name, v in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (1 if name[0] == "e" else 0):
            raise ValueError(f"reduce_precision: {name} must be a "
                             f"{'positive' if name[0] == 'e' else 'non-negative'} int, got {v!r}")
    return reduce_precision_p.bind(_as_array(operand), exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)
