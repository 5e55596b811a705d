"""Bit-level primitives: leading zeros, the high half of a product, the
next float, and rounding floats to fewer exponent and mantissa bits; the
primitive layer (the shifts, the population count and
``bitcast_convert_type`` are elementwise primitives).

MLX has no kernel for these: each is a short composition of MLX's integer
ops in its implementation, so still one primitive (one node under jit).
All are integer or bit-level ops without derivatives, except
``reduce_precision``, whose derivative is itself applied to the tangent (as
in JAX).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.clz(mx.array([1, 256], dtype=mx.int32)).tolist()
[31, 23]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from ftorch.core import Primitive, Tracer
from ftorch.primitives._rules import broadcasting, linear, nondifferentiable, vectorized

__all__ = ["clz", "mulhi", "nextafter", "reduce_precision"]

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


def _binary(name: str, impl, doc: str) -> tuple[Primitive, Any]:
    prim = Primitive(name, impl, elementwise=True)
    nondifferentiable(prim)
    broadcasting(prim)

    def op(x: Any, y: Any) -> Any:
        return prim.bind(x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return prim, op


# ----------------------------------------------------------------------------
# clz
# ----------------------------------------------------------------------------


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
