"""Elementwise primitives: unary and binary math, comparisons, logic, casts;
the primitive layer.

Each primitive's strict wrapper takes its operands as they are (arrays or
Python scalars, which MLX promotes itself) and binds it: ``name(x)``,
``name(x, y)``, ``where(condition, x, y)``, ``astype(x, dtype)`` with an MLX
dtype, ``round(x, decimals)``, ``stop_gradient(x)`` of one array.
``ftorch.numpy`` re-exports most of them unchanged, and adds dtype
spellings (``astype``), ``clip``, the aliases ``true_divide`` and ``mod``,
and ``stop_gradient`` over pytrees.

Most unary ops are declared by their derivative ``f'(x)`` (given ``x`` and
the output ``y``), from which both the JVP (``t * f'(x)``) and the VJP
(``ct * f'(x)``) follow. Binary ops broadcast like NumPy; their VJPs sum the
cotangent back to each input's shape (``unbroadcast``), and compute none for
an operand that needs none (``needed``: a constant, data, a Python scalar).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.multiply(lax.exp(mx.zeros(2)), 3.0).tolist()
[3.0, 3.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of, is_complex, is_floating, is_inexact
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives._rules import (
    add_tangents,
    broadcasting,
    derivative,
    linear,
    move_bdim,
    nondifferentiable,
    tangent_to,
    unbroadcast,
    vectorized,
)

__all__ = [
    "negative", "abs", "sign", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
    "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "erf", "erfinv", "floor", "ceil",
    "round", "isnan", "isinf", "isfinite", "logical_not", "invert",
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
    "maximum", "minimum", "arctan2", "logaddexp", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "where", "astype", "stop_gradient",
    "real", "imag", "conj", "complex", "cbrt", "rem", "bitcast_convert_type",
    "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "population_count",
]


# ----------------------------------------------------------------------------
# Unary ops
# ----------------------------------------------------------------------------


def _unary_doc(name: str, example: str) -> str:
    return (
        f"Elementwise ``{name}``, as ``numpy.{name}`` (``ftorch.numpy.{name}`` is this\n"
        f"    function).\n\n"
        f"    >>> import ftorch.lax as lax, mlx.core as mx\n"
        f"    >>> lax.{name}(mx.array([{example}])).shape\n"
        f"    (1,)\n"
    )


def _unary(name: str, impl: Callable, example: str = "0.5",
           autocast: str = "promote") -> tuple[Primitive, Callable]:
    """A unary elementwise primitive (its batch axis stays put) and its
    strict wrapper; its JVP and VJP are declared under it."""
    prim = Primitive(name, impl, elementwise=True, autocast=autocast)
    vectorized(prim)

    def op(x: Any) -> Any:
        return prim.bind(x)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _unary_doc(name, example)
    return prim, op


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

negative_p, negative = _unary("negative", mx.negative)
linear(negative_p, lambda ct, x: negative(ct))

abs_p, abs = _unary("abs", mx.abs)


# |x| of a complex x is real and not holomorphic: its derivative is the real
# linear map t -> real(conj(x) * t) / |x|, whose transpose is ct -> ct *
# conj(x) / |x|; both are taken as 0 at x = 0, as in JAX. Written with
# differentiable ops (not sign(x), whose rules treat it as constant, which
# x / |x| is not for complex x), so that second derivatives are right.
def _complex_abs_denominator(y):
    return where(equal(y, 0), 1.0, y)


@abs_p.def_jvp
def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = abs_p.bind(x)
    if is_complex(aval_of(x).dtype):
        return y, divide(real(multiply(conj(x), t)), _complex_abs_denominator(y))
    return y, multiply(t, sign(x))


@abs_p.def_vjp
def _abs_vjp(ct, y, x, *, needed):
    if is_complex(aval_of(x).dtype):
        return (divide(multiply(ct, conj(x)), _complex_abs_denominator(y)),)
    return (multiply(ct, sign(x)),)


def _sign(x: mx.array) -> mx.array:
    """``mx.sign``, except that (as in NumPy and JAX) a NaN gives NaN, where
    MLX's gives 0, and -0.0 gives -0.0 (JAX's)."""
    s = mx.sign(x)
    if not mx.issubdtype(s.dtype, mx.floating):
        return s
    return mx.where(s == 0, x, s)


sign_p, sign = _unary("sign", _sign)
nondifferentiable(sign_p)

def accurate_exp(x: mx.array) -> mx.array:
    """``mx.exp``, except in float64: MLX's CPU float64 ``exp`` is only
    float32-accurate (relative error ~3e-7, 0 below -88), so there it is
    ``cosh + sinh`` (for ``x < 0``, ``1 / (cosh|x| + sinh|x|)``), accurate to
    a few ulps at 2.5x the cost."""
    if not isinstance(x, mx.array) or x.dtype != mx.float64:  # a Python scalar is float32
        return mx.exp(x)
    c, s = mx.cosh(x), mx.sinh(x)
    return mx.where(x >= 0, c + s, 1.0 / (c - s))


exp_p, exp = _unary("exp", accurate_exp, autocast="float32")
derivative(exp_p, lambda x, y: y)

expm1_p, expm1 = _unary("expm1", mx.expm1, autocast="float32")
derivative(expm1_p, lambda x, y: add(y, 1))

log_p, log = _unary("log", mx.log, autocast="float32")
derivative(log_p, lambda x, y: reciprocal(x))

log1p_p, log1p = _unary("log1p", mx.log1p, autocast="float32")
derivative(log1p_p, lambda x, y: reciprocal(add(x, 1)))

log2_p, log2 = _unary("log2", mx.log2, autocast="float32")
derivative(log2_p, lambda x, y: reciprocal(multiply(x, _LN2)))

log10_p, log10 = _unary("log10", mx.log10, autocast="float32")
derivative(log10_p, lambda x, y: reciprocal(multiply(x, _LN10)))

sqrt_p, sqrt = _unary("sqrt", mx.sqrt)
derivative(sqrt_p, lambda x, y: divide(0.5, y))

rsqrt_p, rsqrt = _unary("rsqrt", mx.rsqrt, autocast="float32")
derivative(rsqrt_p, lambda x, y: divide(multiply(-0.5, y), x))

square_p, square = _unary("square", mx.square)
derivative(square_p, lambda x, y: multiply(2, x))

reciprocal_p, reciprocal = _unary("reciprocal", mx.reciprocal, autocast="float32")
derivative(reciprocal_p, lambda x, y: negative(square(y)))

sin_p, sin = _unary("sin", mx.sin)
derivative(sin_p, lambda x, y: cos(x))

cos_p, cos = _unary("cos", mx.cos)
derivative(cos_p, lambda x, y: negative(sin(x)))

tan_p, tan = _unary("tan", mx.tan, autocast="float32")
derivative(tan_p, lambda x, y: add(1, square(y)))

arcsin_p, arcsin = _unary("arcsin", mx.arcsin, autocast="float32")
derivative(arcsin_p, lambda x, y: rsqrt(subtract(1, multiply(x, x))))

arccos_p, arccos = _unary("arccos", mx.arccos, autocast="float32")
derivative(arccos_p, lambda x, y: negative(rsqrt(subtract(1, multiply(x, x)))))

arctan_p, arctan = _unary("arctan", mx.arctan)
derivative(arctan_p, lambda x, y: reciprocal(add(1, multiply(x, x))))

sinh_p, sinh = _unary("sinh", mx.sinh, autocast="float32")
derivative(sinh_p, lambda x, y: cosh(x))

cosh_p, cosh = _unary("cosh", mx.cosh, autocast="float32")
derivative(cosh_p, lambda x, y: sinh(x))

tanh_p, tanh = _unary("tanh", mx.tanh)
derivative(tanh_p, lambda x, y: subtract(1, square(y)))

arcsinh_p, arcsinh = _unary("arcsinh", mx.arcsinh)
derivative(arcsinh_p, lambda x, y: rsqrt(add(multiply(x, x), 1)))

arccosh_p, arccosh = _unary("arccosh", mx.arccosh, "1.5")
derivative(arccosh_p, lambda x, y: rsqrt(subtract(multiply(x, x), 1)))

arctanh_p, arctanh = _unary("arctanh", mx.arctanh)
derivative(arctanh_p, lambda x, y: reciprocal(subtract(1, multiply(x, x))))

erf_p, erf = _unary("erf", mx.erf)
derivative(erf_p, lambda x, y: multiply(_TWO_OVER_SQRT_PI, exp(negative(multiply(x, x)))))

erfinv_p, erfinv = _unary("erfinv", mx.erfinv, autocast="float32")
derivative(erfinv_p, lambda x, y: multiply(_SQRT_PI_OVER_TWO, exp(multiply(y, y))))

floor_p, floor = _unary("floor", mx.floor)
nondifferentiable(floor_p)

ceil_p, ceil = _unary("ceil", mx.ceil)
nondifferentiable(ceil_p)

isnan_p, isnan = _unary("isnan", mx.isnan)
nondifferentiable(isnan_p)

isinf_p, isinf = _unary("isinf", mx.isinf)
nondifferentiable(isinf_p)

isfinite_p, isfinite = _unary("isfinite", mx.isfinite)
nondifferentiable(isfinite_p)

logical_not_p, logical_not = _unary("logical_not", mx.logical_not)
nondifferentiable(logical_not_p)

invert_p, invert = _unary("invert", mx.bitwise_invert, "1")
nondifferentiable(invert_p)

round_p = Primitive("round", mx.round)
nondifferentiable(round_p)
vectorized(round_p)


def round(x: Any, decimals: int = 0) -> Any:
    """Round to ``decimals`` places (half to even), as ``numpy.round``
    (``ftorch.numpy.round`` is this function; ``ftorch.lax.round`` is JAX's).

    >>> import ftorch.primitives as prims, mlx.core as mx
    >>> prims.round(mx.array([0.5, 1.5, 2.7])).tolist()
    [0.0, 2.0, 3.0]
    """
    return round_p.bind(x, decimals=decimals)


# ----------------------------------------------------------------------------
# Binary ops
# ----------------------------------------------------------------------------


def _binary_doc(name: str) -> str:
    integer = name.startswith(("bitwise", "shift"))
    args = "[1, 2]), mx.array(3)" if integer else "[1.0, 2.0]), mx.array(3.0)"
    return (
        f"Elementwise ``{name}`` with NumPy broadcasting, as ``numpy.{name}``\n"
        f"    (``ftorch.numpy.{name}`` is this function).\n\n"
        f"    >>> import ftorch.lax as lax, mlx.core as mx\n"
        f"    >>> lax.{name}(mx.array({args}).shape\n"
        f"    (2,)\n"
    )


def _binary(name: str, impl: Callable, autocast: str = "promote") -> tuple[Primitive, Callable]:
    """A binary elementwise primitive that broadcasts its operands, and its
    strict wrapper; its JVP and VJP are declared under it."""
    prim = Primitive(name, impl, elementwise=True, autocast=autocast)
    broadcasting(prim)

    def op(x: Any, y: Any) -> Any:
        return prim.bind(x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _binary_doc(name)
    return prim, op


add_p, add = _binary("add", mx.add)


@add_p.def_jvp
def _add_jvp(primals, tangents):
    out = add_p.bind(*primals)
    tx, ty = tangents
    if tx is not None and ty is not None:
        return out, tangent_to(add(tx, ty), out)
    return out, tangent_to(tx if ty is None else ty, out)


@add_p.def_vjp
def _add_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(ct, y) if needed[1] else None)


subtract_p, subtract = _binary("subtract", mx.subtract)


@subtract_p.def_jvp
def _subtract_jvp(primals, tangents):
    out = subtract_p.bind(*primals)
    tx, ty = tangents
    if tx is not None and ty is not None:
        return out, tangent_to(subtract(tx, ty), out)
    return out, tangent_to(tx if ty is None else negative(ty), out)


@subtract_p.def_vjp
def _subtract_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(negative(ct), y) if needed[1] else None)


multiply_p, multiply = _binary("multiply", mx.multiply)


@multiply_p.def_jvp
def _multiply_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = multiply_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else multiply(tx, y), None if ty is None else multiply(x, ty)), out)


@multiply_p.def_vjp
def _multiply_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(multiply(ct, y), x) if needed[0] else None,
            unbroadcast(multiply(x, ct), y) if needed[1] else None)


divide_p, divide = _binary("divide", mx.divide)


@divide_p.def_jvp
def _divide_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = divide_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else divide(tx, y),
        None if ty is None else divide(negative(multiply(ty, out)), y)), out)


@divide_p.def_vjp
def _divide_vjp(ct, out, x, y, *, needed):
    ct_x = divide(ct, y)
    return (unbroadcast(ct_x, x) if needed[0] else None,
            unbroadcast(multiply(negative(ct_x), out), y) if needed[1] else None)


floor_divide_p, floor_divide = _binary("floor_divide", mx.floor_divide)
nondifferentiable(floor_divide_p)

remainder_p, remainder = _binary("remainder", mx.remainder)


@remainder_p.def_jvp
def _remainder_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = remainder_p.bind(x, y)
    return out, tangent_to(add_tangents(
        tx, None if ty is None else multiply(negative(ty), floor_divide(x, y))), out)


@remainder_p.def_vjp
def _remainder_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(multiply(negative(ct), floor_divide(x, y)), y) if needed[1] else None)


power_p, power = _binary("power", mx.power, autocast="float32")


def _power_dx(x, y):
    # d/dx x**y = y * x**(y-1), taken as 0 where y == 0 (also at x == 0).
    return where(equal(y, 0), 0.0, multiply(y, power(x, subtract(y, 1))))


def _power_dy(x, y, out):
    # d/dy x**y = x**y * log(x), taken as 0 at x == 0 (where x**y is constant 0 or 1).
    safe_x = where(equal(x, 0), 1.0, x)
    return multiply(out, log(safe_x))


@power_p.def_jvp
def _power_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = power_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else multiply(tx, _power_dx(x, y)),
        None if ty is None else multiply(ty, _power_dy(x, y, out))), out)


@power_p.def_vjp
def _power_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(multiply(ct, _power_dx(x, y)), x) if needed[0] else None,
            unbroadcast(multiply(ct, _power_dy(x, y, out)), y) if needed[1] else None)


def _selector(x, y, greater: bool):
    """1 where x wins, 0 where y wins, 1/2 at ties (the gradient is shared,
    also between two equal infinities), 0 for both where either is NaN: JAX's
    choice. Two comparisons rather than the sign of ``x - y``, which is NaN at
    equal infinities; complex values compare lexicographically (as in MLX and
    JAX). The selector has ``x``'s floating dtype (or ``y``'s), so that it
    does not widen the tangent it scales."""
    a, b = (x, y) if greater else (y, x)
    dtype = next((d for d in (aval_of(x).dtype, aval_of(y).dtype) if is_floating(d)),
                 mx.float32)
    wins = add(astype(greater_p.bind(a, b), dtype), astype(greater_equal_p.bind(a, b), dtype))
    return multiply(wins, 0.5)


def _extremum(prim: Primitive, greater: bool) -> None:
    """The JVP and VJP of ``maximum`` (``greater``) or ``minimum``."""

    def jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y)
        return out, tangent_to(add_tangents(
            None if tx is None else multiply(tx, _selector(x, y, greater)),
            None if ty is None else multiply(ty, _selector(y, x, greater))), out)

    def vjp(ct, out, x, y, *, needed):
        return (unbroadcast(multiply(ct, _selector(x, y, greater)), x) if needed[0] else None,
                unbroadcast(multiply(ct, _selector(y, x, greater)), y) if needed[1] else None)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


maximum_p, maximum = _binary("maximum", mx.maximum)
_extremum(maximum_p, greater=True)

minimum_p, minimum = _binary("minimum", mx.minimum)
_extremum(minimum_p, greater=False)

arctan2_p, arctan2 = _binary("arctan2", mx.arctan2)


@arctan2_p.def_jvp
def _arctan2_jvp(primals, tangents):
    (y, x), (ty, tx) = primals, tangents
    out = arctan2_p.bind(y, x)
    denom = add(multiply(x, x), multiply(y, y))
    return out, tangent_to(add_tangents(
        None if ty is None else divide(multiply(ty, x), denom),
        None if tx is None else divide(negative(multiply(tx, y)), denom)), out)


@arctan2_p.def_vjp
def _arctan2_vjp(ct, out, y, x, *, needed):
    ct = divide(ct, add(multiply(x, x), multiply(y, y)))
    return (unbroadcast(multiply(ct, x), y) if needed[0] else None,
            unbroadcast(multiply(negative(ct), y), x) if needed[1] else None)


logaddexp_p, logaddexp = _binary("logaddexp", mx.logaddexp, autocast="float32")


# The weight of x is exp(x - out), except at x = +inf, where out is +inf too
# and it is 1 (as in JAX; a finite x next to y = +inf has weight 0, where
# JAX's rule gives exp(x)). Two -inf operands, as in JAX, have NaN weights.
def _logaddexp_weight(x, out):
    return exp(where(equal(x, math.inf), 0.0, subtract(x, out)))


@logaddexp_p.def_jvp
def _logaddexp_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = logaddexp_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else multiply(tx, _logaddexp_weight(x, out)),
        None if ty is None else multiply(ty, _logaddexp_weight(y, out))), out)


@logaddexp_p.def_vjp
def _logaddexp_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(multiply(ct, _logaddexp_weight(x, out)), x) if needed[0] else None,
            unbroadcast(multiply(ct, _logaddexp_weight(y, out)), y) if needed[1] else None)


# Comparisons, logic and bitwise ops: boolean or integer results, no derivative.
equal_p, equal = _binary("equal", mx.equal)
nondifferentiable(equal_p)
not_equal_p, not_equal = _binary("not_equal", mx.not_equal)
nondifferentiable(not_equal_p)
less_p, less = _binary("less", mx.less)
nondifferentiable(less_p)
less_equal_p, less_equal = _binary("less_equal", mx.less_equal)
nondifferentiable(less_equal_p)
greater_p, greater = _binary("greater", mx.greater)
nondifferentiable(greater_p)
greater_equal_p, greater_equal = _binary("greater_equal", mx.greater_equal)
nondifferentiable(greater_equal_p)
logical_and_p, logical_and = _binary("logical_and", mx.logical_and)
nondifferentiable(logical_and_p)
logical_or_p, logical_or = _binary("logical_or", mx.logical_or)
nondifferentiable(logical_or_p)
logical_xor_p, logical_xor = _binary("logical_xor", mx.logical_xor)
nondifferentiable(logical_xor_p)
bitwise_and_p, bitwise_and = _binary("bitwise_and", mx.bitwise_and)
nondifferentiable(bitwise_and_p)
bitwise_or_p, bitwise_or = _binary("bitwise_or", mx.bitwise_or)
nondifferentiable(bitwise_or_p)
bitwise_xor_p, bitwise_xor = _binary("bitwise_xor", mx.bitwise_xor)
nondifferentiable(bitwise_xor_p)


# ----------------------------------------------------------------------------
# where, astype, stop_gradient
# ----------------------------------------------------------------------------

where_p = Primitive("where", mx.where, elementwise=True)
broadcasting(where_p)


@where_p.def_jvp
def _where_jvp(primals, tangents):
    cond, x, y = primals
    _, tx, ty = tangents
    out = where_p.bind(cond, x, y)
    if tx is None:
        tx = lax.zeros_like(out)
    if ty is None:
        ty = lax.zeros_like(out)
    return out, tangent_to(where_p.bind(cond, tx, ty), out)


@where_p.def_vjp
def _where_vjp(ct, out, cond, x, y, *, needed):
    zeros = lax.zeros_like(ct)
    return (None, unbroadcast(where_p.bind(cond, ct, zeros), x) if needed[1] else None,
            unbroadcast(where_p.bind(cond, zeros, ct), y) if needed[2] else None)


def where(condition: Any, x: Any, y: Any) -> Any:
    """``x`` where ``condition`` holds, else ``y`` (all three broadcast);
    ``ftorch.numpy.where`` is this function.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.where(mx.array([True, False]), 1.0, 2.0).tolist()
    [1.0, 2.0]
    """
    return where_p.bind(condition, x, y)


astype_p = Primitive("astype", mx.astype)
vectorized(astype_p)


@astype_p.def_jvp
def _astype_jvp(primals, tangents, *, dtype):
    (x,), (t,) = primals, tangents
    out = astype_p.bind(x, dtype=dtype)
    return out, (astype_p.bind(t, dtype=dtype) if is_inexact(dtype) else None)


@astype_p.def_vjp
def _astype_vjp(ct, out, x, *, needed, dtype):
    # A cast to an integer or boolean dtype passes no gradient back. Casts
    # between real and complex are each other's transposes: a complex
    # cotangent of a real x is cast to its real part.
    return (astype_p.bind(ct, dtype=aval_of(x).dtype) if is_inexact(dtype) else None,)


def astype(x: Any, dtype: mx.Dtype) -> Any:
    """``x`` cast to the MLX ``dtype`` (``x`` itself when it has that dtype);
    gradients flow between floating and complex dtypes only (a cast from
    complex to real keeps the real part). ``ftorch.numpy.astype``
    also takes other spellings of a dtype.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.astype(mx.array([1.7]), mx.int32).tolist()
    [1]
    """
    if aval_of(x).dtype == dtype:
        return x
    return astype_p.bind(x, dtype=dtype)


stop_gradient_p = Primitive("stop_gradient", mx.stop_gradient)
nondifferentiable(stop_gradient_p)
vectorized(stop_gradient_p)


def stop_gradient(x: Any) -> Any:
    """The identity on one array, with derivative zero (``ftorch.stop_gradient``
    and ``ftorch.numpy.stop_gradient`` apply it to every leaf of a pytree).

    >>> import ftorch as ft, ftorch.primitives as lax, mlx.core as mx
    >>> ft.grad(lambda x: x * lax.stop_gradient(x))(mx.array(3.0)).item()
    3.0
    """
    return stop_gradient_p.bind(x)



# ----------------------------------------------------------------------------
# Complex numbers: real, imag, conj, complex
# ----------------------------------------------------------------------------

# All four are linear over the reals. Their VJPs are the transposes for the
# pairing <c, t> = real(sum(c * t)) that ftorch (as JAX) uses for complex
# values (see ``ftorch.grad``): real's is c -> c + 0j, imag's c -> -1j * c,
# conj's is conj, and complex(re, im)'s is c -> (real(c), -imag(c)).


def _check_complex(x: Any, fname: str) -> None:
    dtype = aval_of(x).dtype
    if not is_complex(dtype):
        raise TypeError(f"{fname}: expected a complex64 array, got dtype {dtype} "
                        f"(ftorch.numpy.{fname} also takes real arrays)")


real_p = Primitive("real", mx.real)
vectorized(real_p)
linear(real_p, lambda ct, x: astype(ct, mx.complex64))


def real(x: Any) -> Any:
    """The real part of a complex64 array, as float32 (``ftorch.numpy.real``
    also takes real arrays).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.real(mx.array([1 + 2j])).tolist()
    [1.0]
    """
    _check_complex(x, "real")
    return real_p.bind(x)


imag_p = Primitive("imag", mx.imag)
vectorized(imag_p)
linear(imag_p, lambda ct, x: complex_p.bind(lax.zeros_like(ct), negative(ct)))


def imag(x: Any) -> Any:
    """The imaginary part of a complex64 array, as float32
    (``ftorch.numpy.imag`` also takes real arrays).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.imag(mx.array([1 + 2j])).tolist()
    [2.0]
    """
    _check_complex(x, "imag")
    return imag_p.bind(x)


conj_p = Primitive("conj", mx.conj)
vectorized(conj_p)
linear(conj_p, lambda ct, x: conj_p.bind(ct))


def conj(x: Any) -> Any:
    """The complex conjugate of a complex64 array (``ftorch.numpy.conj`` also
    takes real arrays).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.conj(mx.array([1 + 2j])).tolist()
    [(1-2j)]
    """
    _check_complex(x, "conj")
    return conj_p.bind(x)


def _complex_impl(re: mx.array, im: mx.array) -> mx.array:
    # Interleave the parts and reinterpret the pairs: exact, where re + 1j * im
    # would turn an infinite part into nan (inf * 0).
    re, im = mx.broadcast_arrays(mx.array(re, mx.float32), mx.array(im, mx.float32))
    pairs = mx.stack([re, im], axis=-1)
    return mx.view(pairs, mx.complex64).reshape(re.shape)


complex_p = Primitive("complex", _complex_impl, elementwise=True)
broadcasting(complex_p)


@complex_p.def_jvp
def _complex_jvp(primals, tangents):
    (re, im), (t_re, t_im) = primals, tangents
    out = complex_p.bind(re, im)
    return out, tangent_to(complex_p.bind(lax.zeros_like(re) if t_re is None else t_re,
                                          lax.zeros_like(im) if t_im is None else t_im), out)


@complex_p.def_vjp
def _complex_vjp(ct, out, re, im, *, needed):
    return (unbroadcast(real_p.bind(ct), re) if needed[0] else None,
            unbroadcast(negative(imag_p.bind(ct)), im) if needed[1] else None)


def complex(re: Any, im: Any) -> Any:
    """The complex64 array ``re + 1j * im`` from real floating parts of at
    most 32 bits (they broadcast), as ``jax.lax.complex``. Infinite parts stay
    as they are. MLX has no complex128, so float64 parts are refused: cast
    them to float32 first.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.complex(mx.array([1.0, 2.0]), mx.array(3.0)).tolist()
    [(1+3j), (2+3j)]
    """
    for name, part in (("re", re), ("im", im)):
        dtype = aval_of(part).dtype
        if not is_floating(dtype) or dtype == mx.float64:
            raise TypeError(
                f"complex: {name} must be a real floating array of at most 32 bits, got "
                f"dtype {dtype}" + (" (MLX has no complex128: cast it to float32 first)"
                                    if dtype == mx.float64 else ""))
    return complex_p.bind(re, im)


# ----------------------------------------------------------------------------
# Floating-point pieces: cbrt, copysign, rem, bitcast_convert_type
# ----------------------------------------------------------------------------


def _sign_bit(x: mx.array) -> mx.array:
    """Whether the sign bit of each element is set (also for -0.0 and -NaN):
    the bits read as a signed integer of the same width are negative."""
    if not mx.issubdtype(x.dtype, mx.floating):
        return x < 0
    return mx.view(x, _SIGNED_OF_WIDTH[x.dtype.size]) < 0


def _cbrt(x: mx.array) -> mx.array:
    # MLX has no cube root: |x|**(1/3) with x's sign, refined by one Newton
    # step (which leaves 0, infinities and NaN as they are).
    if not isinstance(x, mx.array):  # a Python or NumPy scalar: float32, as jnp.cbrt
        x = mx.array(x, dtype=mx.float32)
    y = mx.power(mx.abs(x), 1.0 / 3.0)
    refined = y - (y * y * y - mx.abs(x)) / (3.0 * y * y)
    y = mx.where(mx.isfinite(refined), refined, y)
    return mx.where(_sign_bit(x), -y, y)


cbrt_p, cbrt = _unary("cbrt", _cbrt, "8.0")
# d/dx x**(1/3) = 1 / (3 y**2): +inf at 0, as in JAX.
derivative(cbrt_p, lambda x, y: reciprocal(multiply(3.0, square(y))))


def _copysign(x: mx.array, y: mx.array) -> mx.array:
    return mx.where(_sign_bit(y), -mx.abs(x), mx.abs(x))


copysign_p, copysign = _binary("copysign", _copysign)
copysign.__doc__ = """``|x|`` with the sign bit of ``y`` (elementwise, broadcasting), as
    ``numpy.copysign``; ``ftorch.numpy.copysign`` is this function (JAX's lax
    has no namesake).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.copysign(mx.array([1.0, 2.0]), mx.array([-0.0, 3.0])).tolist()
    [-1.0, 2.0]
    """


def _copysign_slope(x, y):
    # The derivative in x is +-1, by y's sign bit and whether x >= 0 (also
    # at x = 0, where it is 1 or -1 rather than 0): JAX's choice.
    flips = not_equal(signbit(y), less(x, 0))
    return where(flips, -1.0, 1.0)


@copysign_p.def_jvp
def _copysign_jvp(primals, tangents):
    (x, y), (tx, _) = primals, tangents
    out = copysign_p.bind(x, y)
    return out, (None if tx is None else tangent_to(multiply(tx, _copysign_slope(x, y)), out))


@copysign_p.def_vjp
def _copysign_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(multiply(ct, _copysign_slope(x, y)), x) if needed[0] else None, None)


def _rem(x: mx.array, y: mx.array) -> mx.array:
    """C's ``fmod``: the remainder of truncated division, with ``x``'s sign
    (MLX's ``remainder`` has ``y``'s)."""
    x, y = mx.array(x), mx.array(y)
    if mx.issubdtype(mx.result_type(x, y), mx.floating):
        # remainder of two non-negative operands is fmod exactly.
        r = mx.remainder(mx.abs(x), mx.abs(y))
        return mx.where(_sign_bit(x), -r, r)
    zero = y == 0  # an integer remainder by zero is 0 (XLA's answer)
    y = mx.where(zero, 1, y)
    r = mx.remainder(x, y)
    r = mx.where((r != 0) & ((r < 0) != (x < 0)), r - y, r)
    return mx.where(zero, 0, r)


rem_p, rem = _binary("rem", _rem)


def _rem_dy(x, y):
    # d/dy (x - y * trunc(x / y)) = -trunc(x / y)
    q = divide(x, y)
    return negative(multiply(sign(q), floor(abs(q))))


@rem_p.def_jvp
def _rem_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = rem_p.bind(x, y)
    return out, tangent_to(add_tangents(
        tx, None if ty is None else multiply(ty, _rem_dy(x, y))), out)


@rem_p.def_vjp
def _rem_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(multiply(ct, _rem_dy(x, y)), y) if needed[1] else None)


_SIGNED_OF_WIDTH = {1: mx.int8, 2: mx.int16, 4: mx.int32, 8: mx.int64}
_UNSIGNED_OF_WIDTH = {1: mx.uint8, 2: mx.uint16, 4: mx.uint32, 8: mx.uint64}

def _bitcast(x: mx.array, dtype: mx.Dtype) -> mx.array:
    old, new = x.dtype.size, dtype.size
    if old == new:
        return mx.view(x, dtype)
    if old > new:  # each element becomes old // new narrower ones, on a new last axis
        return mx.view(x.reshape(*x.shape, 1), dtype).reshape(*x.shape, old // new)
    return mx.view(x, dtype).reshape(x.shape[:-1])  # the last axis (new // old long) goes


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast)
nondifferentiable(bitcast_convert_type_p)


@bitcast_convert_type_p.def_batch
def _bitcast_batch(vals, dims, axis_size, *, dtype):
    # The last axis may change length: keep the batch axis off it.
    x = move_bdim(vals[0], dims[0], 0, axis_size)
    return bitcast_convert_type_p.bind(x, dtype=dtype), 0


def bitcast_convert_type(operand: Any, new_dtype: DTypeLike) -> Any:
    """The bits of ``operand`` read as ``new_dtype`` (in any spelling), as
    ``jax.lax.bitcast_convert_type`` (``mx.view``); no derivative. A
    narrower dtype adds a last axis (of the width ratio), a wider one
    removes the last axis (which must have that length).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.bitcast_convert_type(mx.array([1.0]), mx.int32).tolist()
    [1065353216]
    >>> lax.bitcast_convert_type(mx.array([1.0]), mx.uint8).shape
    (1, 4)
    """
    new_dtype = to_mlx_dtype(new_dtype, "bitcast_convert_type: new_dtype")
    shape, dtype = aval_of(operand)
    if mx.bool_ in (dtype, new_dtype):
        raise TypeError(f"bitcast_convert_type: {dtype} and {new_dtype} must be numeric dtypes")
    if dtype.size < new_dtype.size and (not shape or shape[-1] != new_dtype.size // dtype.size):
        raise ValueError(
            f"bitcast_convert_type: converting {dtype} to the wider {new_dtype} needs a last "
            f"axis of length {new_dtype.size // dtype.size}, got shape {tuple(shape)}")
    if dtype == new_dtype:
        return operand
    return bitcast_convert_type_p.bind(operand, dtype=new_dtype)


def signbit(x: Any) -> Any:
    """Whether the sign bit of each element is set: true for negative
    numbers, ``-0.0`` and ``-nan``, as ``jax.numpy.signbit``
    (``ftorch.numpy.signbit`` is this function).

    >>> from ftorch.primitives.elementwise import signbit
    >>> import mlx.core as mx
    >>> signbit(mx.array([-1.0, -0.0, 0.0, 2.0])).tolist()
    [True, True, False, False]
    """
    dtype = aval_of(x).dtype
    if is_floating(dtype):
        x = bitcast_convert_type(x, _SIGNED_OF_WIDTH[dtype.size])
    return less(x, 0)


# ----------------------------------------------------------------------------
# Integer bits: shifts and population count
# ----------------------------------------------------------------------------


def _bit_width(dtype: mx.Dtype) -> int:
    return 8 * dtype.size


def _shift_left(x: mx.array, y: mx.array) -> mx.array:
    # A shift by a negative amount or by the width or more gives 0 (XLA's
    # answer); MLX, as C, leaves those undefined.
    x, y = mx.array(x), mx.array(y)
    width = _bit_width(mx.result_type(x, y))
    out = mx.left_shift(x, mx.clip(y, 0, width - 1))
    return mx.where((y < 0) | (y >= width), mx.zeros_like(out), out)


def _shift_right_arithmetic(x: mx.array, y: mx.array) -> mx.array:
    # A shift by the width or more (or a negative amount) fills with the sign bit.
    x, y = mx.array(x), mx.array(y)
    width = _bit_width(mx.result_type(x, y))
    too_far = (y < 0) | (y >= width)
    out = mx.right_shift(x, mx.where(too_far, width - 1, y))
    if mx.issubdtype(out.dtype, mx.unsignedinteger):
        out = mx.where(too_far, mx.zeros_like(out), out)
    return out


def _shift_right_logical(x: mx.array, y: mx.array) -> mx.array:
    # Shift the bits read as unsigned, so that zeros come in from the left.
    x, y = mx.array(x), mx.array(y)
    dtype = mx.result_type(x, y)
    unsigned = _UNSIGNED_OF_WIDTH[dtype.size]
    bits = mx.view(x.astype(dtype), unsigned)
    too_far = (y < 0) | (y >= _bit_width(dtype))
    out = mx.right_shift(bits, mx.where(too_far, 0, y).astype(unsigned))
    return mx.view(mx.where(too_far, mx.zeros_like(out), out), dtype)


shift_left_p, shift_left = _binary("shift_left", _shift_left)
nondifferentiable(shift_left_p)
shift_right_arithmetic_p, shift_right_arithmetic = _binary(
    "shift_right_arithmetic", _shift_right_arithmetic)
nondifferentiable(shift_right_arithmetic_p)
shift_right_logical_p, shift_right_logical = _binary(
    "shift_right_logical", _shift_right_logical)
nondifferentiable(shift_right_logical_p)

# SWAR masks (0x55.., 0x33.., 0x0f..) of each unsigned width.
_POPCOUNT_MASKS = {
    w: tuple(int(pattern * (w // 8), 16) for pattern in ("55", "33", "0f"))
    for w in (8, 16, 32, 64)
}


def _population_count(x: mx.array) -> mx.array:
    # Count bits in pairs, nibbles, then bytes on the unsigned view, and sum
    # the bytes by shifting them onto the lowest.
    dtype = x.dtype
    width = _bit_width(dtype)
    unsigned = _UNSIGNED_OF_WIDTH[dtype.size]
    m1, m2, m4 = (mx.array(m, unsigned) for m in _POPCOUNT_MASKS[width])
    v = mx.view(x, unsigned)
    v = v - (mx.right_shift(v, mx.array(1, unsigned)) & m1)
    v = (v & m2) + (mx.right_shift(v, mx.array(2, unsigned)) & m2)
    v = (v + mx.right_shift(v, mx.array(4, unsigned))) & m4
    shift = 8
    while shift < width:
        v = v + mx.right_shift(v, mx.array(shift, unsigned))
        shift *= 2
    return (v & mx.array(0xFF, unsigned)).astype(dtype)


population_count_p, population_count = _unary("population_count", _population_count, "7")
nondifferentiable(population_count_p)
