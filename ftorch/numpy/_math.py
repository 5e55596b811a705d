"""More elementwise math as in jax.numpy: the array API's names for the
inverse trigonometric functions (``acos``, ``atan2``, ...), angles in
degrees, rounding (``trunc``, ``rint``, ``modf``), remainders (``fmod``,
``divmod``), NaN-aware extrema (``fmax``, ``fmin``), the pieces of a float
(``frexp``, ``ldexp``, ``copysign``, ``signbit``, ``nextafter``,
``spacing``), integer ``gcd`` and ``lcm``, and the comparisons ``isclose``,
``allclose``, ``array_equal``, ``array_equiv``.

All are composites of the primitive layer (so they are differentiable where
JAX's are, and batch and jit), except ``cbrt``, ``copysign`` and ``fmod``,
which are the primitives ``lax.cbrt``, ``lax.copysign`` and ``lax.rem``.
Integer and boolean arguments of the floating functions compute in float32,
as in jax.numpy.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.hypot(mx.array([3.0]), mx.array([4.0])).tolist()
[5.0]
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Tracer, as_array, aval_of, is_complex, is_floating
from ftorch.numpy._creation import asarray, result_type
from ftorch.numpy._reduction import all as _all
from ftorch.primitives.elementwise import (
    abs,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    cbrt,
    copysign,
    power,
    signbit,
)
from ftorch.typing import Array, ArrayLike

__all__ = [
    "absolute", "acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "pow",
    "positive", "fabs", "cbrt", "exp2", "float_power", "logaddexp2", "i0",
    "deg2rad", "radians", "rad2deg", "degrees", "hypot", "heaviside",
    "trunc", "rint", "modf", "fmod", "divmod", "fmax", "fmin", "nan_to_num",
    "copysign", "signbit", "frexp", "ldexp", "nextafter", "spacing", "gcd", "lcm",
    "isclose", "allclose", "array_equal", "array_equiv", "isposinf", "isneginf",
    "isscalar", "iterable",
]

absolute = abs
acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atanh, atan2 = arctan, arctanh, arctan2
pow = power

_LN2 = math.log(2.0)


def promoted_operands(fname: str, *args: Any) -> tuple[list[Any], mx.Dtype]:
    """The arguments as arrays of their common dtype, and that dtype; Python
    scalars are weakly typed (they do not widen an array's dtype), as in JAX."""
    for i, a in enumerate(args):
        if isinstance(a, (str, bytes)) or a is None:
            raise TypeError(f"{fname}: argument {i} must be an array or a number, got {a!r}")
    weak = [a if isinstance(a, (bool, int, float, complex)) else as_array(a, f"{fname}: x{i + 1}")
            for i, a in enumerate(args)]
    dtype = result_type(*weak)
    return [asarray(a, dtype) for a in weak], dtype


def promote_inexact(fname: str, *args: Any) -> list[Any]:
    """The arguments as arrays of their common floating dtype (integers and
    booleans promote to float32; complex is refused), as JAX's
    ``promote_args_inexact`` for the real functions."""
    arrays, dtype = promoted_operands(fname, *args)
    if is_complex(dtype):
        raise TypeError(f"{fname}: complex arguments are not supported (got {dtype})")
    if is_floating(dtype):
        return arrays
    return [lax.astype(a, mx.float32) for a in arrays]


def _integers(fname: str, *args: Any) -> list[Any]:
    """The arguments as arrays of their common integer dtype."""
    arrays, dtype = promoted_operands(fname, *args)
    if not mx.issubdtype(dtype, mx.integer):
        raise TypeError(f"{fname}: arguments must be integers, got dtype {dtype}")
    return arrays


# ----------------------------------------------------------------------------
# Real functions of floats
# ----------------------------------------------------------------------------


def positive(x: ArrayLike, /) -> Array:
    """``+x``: the array itself, as ``jax.numpy.positive``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.positive(mx.array([-1, 2])).tolist()
    [-1, 2]
    """
    return as_array(x, "positive: x")


def fabs(x: ArrayLike, /) -> Array:
    """``|x|`` as a float (integers give float32), as ``jax.numpy.fabs``;
    complex input is refused (``abs`` takes it).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fabs(mx.array([-2, 3])).tolist()
    [2.0, 3.0]
    """
    (x,) = promote_inexact("fabs", x)
    return lax.abs(x)


def exp2(x: ArrayLike, /) -> Array:
    """``2 ** x``, as ``jax.numpy.exp2``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.exp2(mx.array([3.0, -1.0])).tolist()
    [8.0, 0.5]
    """
    (x,) = promote_inexact("exp2", x)
    return lax.power(2.0, x)


def float_power(x: ArrayLike, y: ArrayLike, /) -> Array:
    """``x ** y`` computed in floating point (integers give float32), as
    ``jax.numpy.float_power``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.float_power(mx.array([2, 3]), 2).tolist()
    [4.0, 9.0]
    """
    x, y = promote_inexact("float_power", x, y)
    return lax.power(x, y)


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``log2(2 ** x1 + 2 ** x2)`` without overflow, as
    ``jax.numpy.logaddexp2`` (its derivatives as ``logaddexp``'s).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.logaddexp2(mx.array(1.0), mx.array(1.0)).item()
    2.0
    """
    x1, x2 = promote_inexact("logaddexp2", x1, x2)
    return lax.divide(lax.logaddexp(lax.multiply(x1, _LN2), lax.multiply(x2, _LN2)), _LN2)


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 0, as
    ``jax.numpy.i0``: ``exp(|x|) * i0e(x)`` (``lax.bessel_i0e``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> round(fnp.i0(mx.array(1.0)).item(), 5)
    1.26607
    """
    (x,) = promote_inexact("i0", x)
    return lax.multiply(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def deg2rad(x: ArrayLike, /) -> Array:
    """Degrees to radians, as ``jax.numpy.deg2rad`` (``radians`` is this function).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> round(fnp.deg2rad(mx.array(180.0)).item(), 5)
    3.14159
    """
    (x,) = promote_inexact("deg2rad", x)
    return lax.multiply(x, math.pi / 180.0)


def rad2deg(x: ArrayLike, /) -> Array:
    """Radians to degrees, as ``jax.numpy.rad2deg`` (``degrees`` is this function).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> round(fnp.rad2deg(mx.array(3.14159265)).item(), 3)
    180.0
    """
    (x,) = promote_inexact("rad2deg", x)
    return lax.multiply(x, 180.0 / math.pi)


radians, degrees = deg2rad, rad2deg


def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``sqrt(x1**2 + x2**2)`` without overflow or underflow, ``inf`` where
    either is infinite (even beside a NaN), as ``jax.numpy.hypot``. Its
    derivative at ``(0, 0)`` is 0 (JAX's is 1/2 in each).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.hypot(mx.array([3.0, 3e30]), mx.array([4.0, 4e30])).tolist()[0]
    5.0
    >>> round(fnp.hypot(mx.array(3e30), mx.array(4e30)).item() / 1e30, 5)
    5.0
    """
    x1, x2 = promote_inexact("hypot", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = lax.maximum(a, b), lax.minimum(a, b)
    ratio = lax.divide(small, lax.where(lax.equal(big, 0), 1.0, big))
    out = lax.multiply(big, lax.sqrt(lax.add(1.0, lax.square(ratio))))
    return lax.where(lax.logical_or(lax.isinf(a), lax.isinf(b)), math.inf, out)


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The step function: 0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2``
    where ``x1 == 0`` (NaN where ``x1`` is), as ``jax.numpy.heaviside``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.heaviside(mx.array([-1.0, 0.0, 2.0]), 0.5).tolist()
    [0.0, 0.5, 1.0]
    """
    x1, x2 = promote_inexact("heaviside", x1, x2)
    step = lax.where(lax.less(x1, 0), 0.0, lax.where(lax.greater(x1, 0), 1.0, x2))
    return lax.where(lax.isnan(x1), x1, step)


# ----------------------------------------------------------------------------
# Rounding and remainders
# ----------------------------------------------------------------------------


def trunc(x: ArrayLike) -> Array:
    """Round toward zero (integers stay as they are), as ``jax.numpy.trunc``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.trunc(mx.array([-1.7, 1.7])).tolist()
    [-1.0, 1.0]
    """
    x = as_array(x, "trunc: x")
    if not is_floating(aval_of(x).dtype):
        return x
    return lax.where(lax.less(x, 0), lax.ceil(x), lax.floor(x))


def rint(x: ArrayLike, /) -> Array:
    """Round to the nearest integer, halves to even (integers give float32),
    as ``jax.numpy.rint``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.rint(mx.array([0.5, 1.5, -2.5])).tolist()
    [0.0, 2.0, -2.0]
    """
    (x,) = promote_inexact("rint", x)
    return lax.round(x)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Array, Array]:
    """The fractional and integral parts of ``x``, both with its sign (the
    fractional part is NaN at infinities), as ``jax.numpy.modf``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.tolist() for p in fnp.modf(mx.array([-1.5, 2.25]))]
    [[-0.5, 0.25], [-1.0, 2.0]]
    """
    if out is not None:
        raise NotImplementedError("modf: out is not supported (arrays are immutable)")
    (x,) = promote_inexact("modf", x)
    whole = trunc(x)
    return lax.subtract(x, whole), whole


def fmod(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The remainder of truncated division, with the sign of ``x1`` (C's
    ``fmod``; ``remainder`` has the sign of ``x2``), as ``jax.numpy.fmod``:
    the primitive ``lax.rem``. An integer remainder by 0 is 0.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fmod(mx.array([5.5, -5.5]), 2.0).tolist()
    [1.5, -1.5]
    """
    x1, x2 = _numeric("fmod", x1, x2)
    return lax.rem(x1, x2)


def _numeric(fname: str, *args: Any) -> list[Any]:
    """The arguments as arrays of their common dtype (booleans refused)."""
    arrays, dtype = promoted_operands(fname, *args)
    if dtype == mx.bool_:
        raise TypeError(f"{fname}: boolean arguments are not supported")
    return arrays


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:
    """``(floor_divide(x1, x2), remainder(x1, x2))``, as ``jax.numpy.divmod``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.tolist() for p in fnp.divmod(mx.array([7, -7]), 2)]
    [[3, -4], [1, 1]]
    """
    x1, x2 = _numeric("divmod", x1, x2)
    return lax.floor_divide(x1, x2), lax.remainder(x1, x2)


def fmax(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The larger of ``x1`` and ``x2``, ignoring a NaN (NaN only where both
    are), as ``jax.numpy.fmax``; at a tie the gradient goes to ``x2``, as in JAX.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fmax(mx.array([1.0, fnp.nan]), mx.array([fnp.nan, 2.0])).tolist()
    [1.0, 2.0]
    """
    x1, x2 = _numeric("fmax", x1, x2)
    return lax.where(lax.logical_or(lax.greater(x1, x2), lax.isnan(x2)), x1, x2)


def fmin(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The smaller of ``x1`` and ``x2``, ignoring a NaN, as ``jax.numpy.fmin``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fmin(mx.array([1.0, fnp.nan]), mx.array([fnp.nan, 2.0])).tolist()
    [1.0, 2.0]
    """
    x1, x2 = _numeric("fmin", x1, x2)
    return lax.where(lax.logical_or(lax.less(x1, x2), lax.isnan(x2)), x1, x2)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0,
               posinf: ArrayLike | None = None, neginf: ArrayLike | None = None) -> Array:
    """``x`` with NaN replaced by ``nan`` and the infinities by ``posinf``
    and ``neginf`` (the dtype's largest and lowest finite values by
    default), as ``jax.numpy.nan_to_num``; integers and bools are returned
    as they are, and a complex array has each part replaced.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nan_to_num(mx.array([fnp.nan, -fnp.inf, 1.0]), neginf=-9.0).tolist()
    [0.0, -9.0, 1.0]
    """
    del copy  # arrays are immutable: the result is always new
    x = as_array(x, "nan_to_num: x")
    dtype = aval_of(x).dtype
    if is_complex(dtype):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    if not is_floating(dtype):
        return x
    info = mx.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = lax.where(lax.isnan(x), asarray(nan, dtype), x)
    out = lax.where(lax.equal(x, math.inf), asarray(posinf, dtype), out)
    return lax.where(lax.equal(x, -math.inf), asarray(neginf, dtype), out)


# ----------------------------------------------------------------------------
# The pieces of a float
# ----------------------------------------------------------------------------

# Mantissa bits and exponent bias of each floating dtype.
_LAYOUT = {mx.float16: (10, 15), mx.bfloat16: (7, 127), mx.float32: (23, 127),
           mx.float64: (52, 1023)}
_SIGNED = {2: mx.int16, 4: mx.int32, 8: mx.int64}


def _power_of_two(k: Any, dtype: mx.Dtype) -> Any:
    """``2 ** k`` in ``dtype``, exactly, for integer ``k`` of a normal exponent."""
    mantissa_bits, bias = _LAYOUT[dtype]
    ints = _SIGNED[dtype.size]
    bits = lax.shift_left(lax.add(lax.astype(k, ints), bias), mantissa_bits)
    return lax.bitcast_convert_type(bits, dtype)


def _scale_by_power_of_two(x: Any, n: Any) -> Any:
    """``x * 2 ** n`` for integer ``n``, exact unless the result is subnormal:
    three factors, each of a normal exponent (``n`` is clipped to where the
    result has over- or underflowed anyway)."""
    dtype = aval_of(x).dtype
    mantissa_bits, bias = _LAYOUT[dtype]
    limit = 2 * bias + mantissa_bits + 1
    n = lax.maximum(lax.minimum(lax.astype(n, mx.int32), limit), -limit)
    k1 = lax.floor_divide(n, 3)
    k2 = lax.floor_divide(lax.subtract(n, k1), 2)
    k3 = lax.subtract(lax.subtract(n, k1), k2)
    for k in (k1, k2, k3):
        x = lax.multiply(x, _power_of_two(k, dtype))
    return x


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 * 2 ** x2`` for integer ``x2``, as ``jax.numpy.ldexp``
    (differentiable in ``x1``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ldexp(mx.array([1.5, 1.0]), mx.array([3, -2])).tolist()
    [12.0, 0.25]
    """
    x2 = as_array(x2, "ldexp: x2")
    if not mx.issubdtype(aval_of(x2).dtype, mx.integer):
        raise TypeError(f"ldexp: x2 must be an integer array, got dtype {aval_of(x2).dtype}")
    (x1,) = promote_inexact("ldexp", x1)
    shape = mx.broadcast_shapes(tuple(aval_of(x1).shape), tuple(aval_of(x2).shape))
    return _scale_by_power_of_two(lax.broadcast_to(x1, shape), lax.broadcast_to(x2, shape))


def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """``x`` split as ``mantissa * 2 ** exponent`` with ``|mantissa|`` in
    ``[0.5, 1)`` and an int32 ``exponent``, as ``jax.numpy.frexp``; 0,
    infinities and NaN give themselves and exponent 0. The mantissa is
    differentiable (its derivative is ``2 ** -exponent``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.tolist() for p in fnp.frexp(mx.array([8.0, -0.75]))]
    [[0.5, -0.75], [4, 0]]
    """
    (x,) = promote_inexact("frexp", x)
    dtype = aval_of(x).dtype
    mantissa_bits, bias = _LAYOUT[dtype]
    ints = _SIGNED[dtype.size]
    # A subnormal is first scaled up by 2**mantissa_bits into the normal range.
    smallest_normal = 2.0 ** (1 - bias)
    subnormal = lax.logical_and(lax.less(lax.abs(x), smallest_normal), lax.not_equal(x, 0))
    scaled = lax.where(subnormal, lax.multiply(x, 2.0 ** mantissa_bits), x)
    field = lax.bitwise_and(
        lax.shift_right_logical(lax.bitcast_convert_type(scaled, ints), mantissa_bits),
        2 * bias + 1)
    exponent = lax.subtract(lax.subtract(lax.astype(field, mx.int32), bias - 1),
                            lax.where(subnormal, mantissa_bits, 0))
    special = lax.logical_or(lax.equal(x, 0), lax.logical_not(lax.isfinite(x)))
    exponent = lax.where(special, 0, exponent)
    mantissa = lax.where(special, x, _scale_by_power_of_two(x, lax.negative(exponent)))
    return mantissa, exponent


def nextafter(x: ArrayLike, y: ArrayLike, /) -> Array:
    """The next representable number after ``x`` toward ``y``, as
    ``jax.numpy.nextafter`` (no derivative).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.nextafter(mx.array(1.0), mx.array(2.0)).item() - 1.0
    1.1920928955078125e-07
    """
    x, y = promote_inexact("nextafter", x, y)
    shape = mx.broadcast_shapes(tuple(aval_of(x).shape), tuple(aval_of(y).shape))
    x, y = lax.broadcast_to(x, shape), lax.broadcast_to(y, shape)
    dtype = aval_of(x).dtype
    ints = _SIGNED[dtype.size]
    bits = lax.bitcast_convert_type(x, ints)
    # The bits are sign and magnitude: adding one to them, whatever the sign,
    # is a step away from zero.
    away = lax.equal(lax.greater(y, x), lax.greater(x, 0))
    stepped = lax.bitcast_convert_type(lax.add(bits, lax.where(away, 1, -1)), dtype)
    tiniest = lax.bitcast_convert_type(lax.full_like(bits, 1), dtype)
    from_zero = lax.where(lax.less(y, 0), lax.negative(tiniest), tiniest)
    out = lax.where(lax.equal(x, 0), from_zero, stepped)
    out = lax.where(lax.equal(x, y), y, out)
    return lax.where(lax.logical_or(lax.isnan(x), lax.isnan(y)), lax.add(x, y), out)


def spacing(x: ArrayLike, /) -> Array:
    """The distance from ``x`` to the next representable number away from
    zero, with ``x``'s sign (NaN at infinities), as ``jax.numpy.spacing``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.spacing(mx.array([1.0, -1.0])).tolist()
    [1.1920928955078125e-07, -1.1920928955078125e-07]
    """
    (x,) = promote_inexact("spacing", x)
    toward = lax.where(signbit(x), -math.inf, math.inf)
    return lax.subtract(nextafter(x, toward), x)


# ----------------------------------------------------------------------------
# Integer math
# ----------------------------------------------------------------------------


def gcd(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The greatest common divisor of integers (non-negative; ``gcd(0, 0)``
    is 0), as ``jax.numpy.gcd``: Euclid's algorithm in a ``while_loop``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.gcd(mx.array([12, -8, 0]), mx.array([18, 12, 5])).tolist()
    [6, 4, 5]
    """
    x1, x2 = _integers("gcd", x1, x2)
    shape = mx.broadcast_shapes(tuple(aval_of(x1).shape), tuple(aval_of(x2).shape))
    a = lax.broadcast_to(lax.abs(x1), shape)
    b = lax.broadcast_to(lax.abs(x2), shape)

    def more(ab):
        return lax.any(lax.not_equal(ab[1], 0), tuple(range(len(shape))))

    def step(ab):
        a, b = ab
        done = lax.equal(b, 0)
        divisor = lax.where(done, 1, b)
        return lax.where(done, a, b), lax.where(done, 0, lax.remainder(a, divisor))

    return lax.while_loop(more, step, (a, b))[0]


def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The least common multiple of integers (non-negative; 0 if either is
    0), as ``jax.numpy.lcm``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.lcm(mx.array([4, -6, 0]), mx.array([6, 4, 5])).tolist()
    [12, 12, 0]
    """
    x1, x2 = _integers("lcm", x1, x2)
    divisor = gcd(x1, x2)
    zero = lax.equal(divisor, 0)
    out = lax.abs(lax.multiply(lax.floor_divide(x1, lax.where(zero, 1, divisor)), x2))
    return lax.where(zero, 0, out)


# ----------------------------------------------------------------------------
# Comparisons
# ----------------------------------------------------------------------------


def isposinf(x: ArrayLike, /, out: None = None) -> Array:
    """Whether each element is ``+inf``, as ``jax.numpy.isposinf``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isposinf(mx.array([fnp.inf, -fnp.inf, 1.0])).tolist()
    [True, False, False]
    """
    return _is_infinity(x, out, math.inf, "isposinf")


def isneginf(x: ArrayLike, /, out: None = None) -> Array:
    """Whether each element is ``-inf``, as ``jax.numpy.isneginf``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isneginf(mx.array([fnp.inf, -fnp.inf, 1.0])).tolist()
    [False, True, False]
    """
    return _is_infinity(x, out, -math.inf, "isneginf")


def _is_infinity(x: Any, out: Any, infinity: float, fname: str) -> Any:
    if out is not None:
        raise NotImplementedError(f"{fname}: out is not supported (arrays are immutable)")
    x = as_array(x, f"{fname}: x")
    dtype = aval_of(x).dtype
    if is_complex(dtype):
        raise TypeError(f"{fname}: complex input is not supported")
    if not is_floating(dtype):
        return lax.not_equal(x, x)  # all False
    return lax.equal(x, infinity)


def isclose(a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
            equal_nan: bool = False) -> Array:
    """Elementwise ``|a - b| <= atol + rtol * |b|``, as ``jax.numpy.isclose``:
    infinities are close only to themselves, NaNs to each other only with
    ``equal_nan``; integers and bools compare exactly.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isclose(mx.array([1.0, fnp.nan]), mx.array([1.000001, fnp.nan])).tolist()
    [True, False]
    """
    a = as_array(a, "isclose: a")
    b = as_array(b, "isclose: b")
    dtype = result_type(a, b)
    a, b = asarray(a, dtype), asarray(b, dtype)
    if not mx.issubdtype(dtype, mx.inexact):
        return lax.equal(a, b)
    bound = lax.add(atol, lax.multiply(rtol, lax.abs(b)))
    close = lax.less_equal(lax.abs(lax.subtract(a, b)), bound)
    infinite = lax.logical_or(lax.isinf(a), lax.isinf(b))
    close = lax.where(infinite, lax.equal(a, b), close)
    if equal_nan:
        close = lax.logical_or(close, lax.logical_and(lax.isnan(a), lax.isnan(b)))
    return close


def allclose(a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
             equal_nan: bool = False) -> Array:
    """Whether ``isclose`` holds everywhere, as a boolean 0-d array, as
    ``jax.numpy.allclose``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.allclose(mx.array([1.0, 2.0]), mx.array([1.0, 2.000001])).item()
    True
    """
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array:
    """Whether ``a1`` and ``a2`` have one shape and equal elements, as a
    boolean 0-d array (NaNs equal with ``equal_nan``), as
    ``jax.numpy.array_equal``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.array_equal(mx.array([1, 2]), mx.array([1.0, 2.0])).item()
    True
    """
    a1 = as_array(a1, "array_equal: a1")
    a2 = as_array(a2, "array_equal: a2")
    if tuple(aval_of(a1).shape) != tuple(aval_of(a2).shape):
        return mx.array(False)
    same = lax.equal(a1, a2)
    if equal_nan and mx.issubdtype(result_type(a1, a2), mx.inexact):
        same = lax.logical_or(same, lax.logical_and(lax.isnan(a1), lax.isnan(a2)))
    return _all(same)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Whether ``a1`` and ``a2`` are equal after broadcasting, as a boolean
    0-d array, as ``jax.numpy.array_equiv``; shapes that do not broadcast
    are a ``ValueError``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.array_equiv(mx.array([1, 2]), mx.array([[1, 2], [1, 2]])).item()
    True
    """
    a1 = as_array(a1, "array_equiv: a1")
    a2 = as_array(a2, "array_equiv: a2")
    s1, s2 = tuple(aval_of(a1).shape), tuple(aval_of(a2).shape)
    try:
        mx.broadcast_shapes(s1, s2)
    except ValueError:
        raise ValueError(f"array_equiv: shapes {s1} and {s2} do not broadcast") from None
    return _all(lax.equal(a1, a2))


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: a 0-d array or a NumPy scalar
    (Python numbers, strings), as ``jax.numpy.isscalar``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isscalar(mx.array(1.0)), fnp.isscalar(2), fnp.isscalar([1])
    (True, True, False)
    """
    if isinstance(element, (mx.array, Tracer, np.ndarray)):
        return element.ndim == 0
    return builtins.bool(np.isscalar(element))


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works, as ``jax.numpy.iterable``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.iterable([1, 2]), fnp.iterable(3)
    (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True
