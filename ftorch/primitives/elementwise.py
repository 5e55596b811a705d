"""Elementwise primitives: unary and binary math, comparisons, logic, casts.

Most unary ops are declared by their derivative ``f'(x)`` (given ``x`` and
the output ``y``), from which both the JVP (``t * f'(x)``) and the VJP
(``ct * f'(x)``) follow. Binary ops broadcast like NumPy; their VJPs sum the
cotangent back to each input's shape (``unbroadcast``), and compute none for
an operand that needs none (``needed``: a constant, data, a Python scalar).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch import numpy as fnp
from ftorch.core import Primitive, aval_of, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives._rules import (
    add_tangents,
    batch_nary,
    batch_unary,
    tangent_to,
    unbroadcast,
)

__all__ = [
    "negative", "abs", "sign", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
    "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "erf", "erfinv", "floor", "ceil",
    "round", "isnan", "isinf", "isfinite", "logical_not", "invert",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "power", "maximum", "minimum", "arctan2", "logaddexp", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "where", "clip", "astype",
    "stop_gradient",
]


def _unary_doc(name: str, example: str = "0.5") -> str:
    return (
        f"Elementwise ``{name}``, as ``numpy.{name}``.\n\n"
        f"    >>> import ftorch.numpy as fnp, mlx.core as mx\n"
        f"    >>> fnp.{name}(mx.array([{example}])).shape\n"
        f"    (1,)\n"
    )


def _unary(name: str, impl: Callable, derivative: Callable | None, example: str = "0.5"):
    """A unary primitive with ``derivative(x, y) -> f'(x)``; ``None`` means the
    derivative is zero almost everywhere (floor, sign, ...)."""
    prim = Primitive(name, impl, elementwise=True)
    prim.batch = batch_unary(prim)

    if derivative is None:
        prim.jvp = lambda primals, tangents: (prim.bind(*primals), None)
        prim.vjp = lambda ct, out, x: (None,)
    else:
        def jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            y = prim.bind(x)
            return y, t * derivative(x, y)

        def vjp(ct, y, x):
            return (ct * derivative(x, y),)

        prim.jvp, prim.vjp = jvp, vjp

    def op(x: Any) -> Any:
        return prim.bind(x)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _unary_doc(name, example)
    return prim, op


def _linear_unary(name: str, impl: Callable):
    """A unary primitive that is linear: its JVP and VJP apply itself."""
    prim = Primitive(name, impl, elementwise=True)
    prim.batch = batch_unary(prim)
    prim.jvp = lambda primals, tangents: (prim.bind(*primals), prim.bind(*tangents))
    prim.vjp = lambda ct, out, x: (prim.bind(ct),)

    def op(x: Any) -> Any:
        return prim.bind(x)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _unary_doc(name)
    return prim, op


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

negative_p, negative = _linear_unary("negative", mx.negative)
abs_p, abs = _unary("abs", mx.abs, lambda x, y: fnp.sign(x))
sign_p, sign = _unary("sign", mx.sign, None)
exp_p, exp = _unary("exp", mx.exp, lambda x, y: y)
expm1_p, expm1 = _unary("expm1", mx.expm1, lambda x, y: y + 1)
log_p, log = _unary("log", mx.log, lambda x, y: fnp.reciprocal(x))
log1p_p, log1p = _unary("log1p", mx.log1p, lambda x, y: fnp.reciprocal(x + 1))
log2_p, log2 = _unary("log2", mx.log2, lambda x, y: fnp.reciprocal(x * _LN2))
log10_p, log10 = _unary("log10", mx.log10, lambda x, y: fnp.reciprocal(x * _LN10))
sqrt_p, sqrt = _unary("sqrt", mx.sqrt, lambda x, y: 0.5 / y)
rsqrt_p, rsqrt = _unary("rsqrt", mx.rsqrt, lambda x, y: -0.5 * y / x)
square_p, square = _unary("square", mx.square, lambda x, y: 2 * x)
reciprocal_p, reciprocal = _unary("reciprocal", mx.reciprocal, lambda x, y: -fnp.square(y))
sin_p, sin = _unary("sin", mx.sin, lambda x, y: fnp.cos(x))
cos_p, cos = _unary("cos", mx.cos, lambda x, y: -fnp.sin(x))
tan_p, tan = _unary("tan", mx.tan, lambda x, y: 1 + fnp.square(y))
arcsin_p, arcsin = _unary("arcsin", mx.arcsin, lambda x, y: fnp.rsqrt(1 - x * x))
arccos_p, arccos = _unary("arccos", mx.arccos, lambda x, y: -fnp.rsqrt(1 - x * x))
arctan_p, arctan = _unary("arctan", mx.arctan, lambda x, y: fnp.reciprocal(1 + x * x))
sinh_p, sinh = _unary("sinh", mx.sinh, lambda x, y: fnp.cosh(x))
cosh_p, cosh = _unary("cosh", mx.cosh, lambda x, y: fnp.sinh(x))
tanh_p, tanh = _unary("tanh", mx.tanh, lambda x, y: 1 - fnp.square(y))
arcsinh_p, arcsinh = _unary("arcsinh", mx.arcsinh, lambda x, y: fnp.rsqrt(x * x + 1))
arccosh_p, arccosh = _unary("arccosh", mx.arccosh, lambda x, y: fnp.rsqrt(x * x - 1), "1.5")
arctanh_p, arctanh = _unary("arctanh", mx.arctanh, lambda x, y: fnp.reciprocal(1 - x * x))
erf_p, erf = _unary("erf", mx.erf, lambda x, y: _TWO_OVER_SQRT_PI * fnp.exp(-(x * x)))
erfinv_p, erfinv = _unary("erfinv", mx.erfinv, lambda x, y: _SQRT_PI_OVER_TWO * fnp.exp(y * y))
floor_p, floor = _unary("floor", mx.floor, None)
ceil_p, ceil = _unary("ceil", mx.ceil, None)
isnan_p, isnan = _unary("isnan", mx.isnan, None)
isinf_p, isinf = _unary("isinf", mx.isinf, None)
isfinite_p, isfinite = _unary("isfinite", mx.isfinite, None)
logical_not_p, logical_not = _unary("logical_not", mx.logical_not, None)
invert_p, invert = _unary("invert", mx.bitwise_invert, None, "1")

round_p = Primitive("round", mx.round)
round_p.jvp = lambda primals, tangents, decimals: (round_p.bind(*primals, decimals=decimals), None)
round_p.vjp = lambda ct, out, x, decimals: (None,)
round_p.batch = batch_unary(round_p)


def round(x: Any, decimals: int = 0) -> Any:
    """Round to ``decimals`` places (half to even), as ``numpy.round``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.round(mx.array([0.5, 1.5, 2.7])).tolist()
    [0.0, 2.0, 3.0]
    """
    return round_p.bind(x, decimals=decimals)


# ----------------------------------------------------------------------------
# Binary ops
# ----------------------------------------------------------------------------


def _binary_doc(name: str) -> str:
    args = "[1, 2]), mx.array(3)" if name.startswith("bitwise") else "[1.0, 2.0]), mx.array(3.0)"
    return (
        f"Elementwise ``{name}`` with NumPy broadcasting, as ``numpy.{name}``.\n\n"
        f"    >>> import ftorch.numpy as fnp, mlx.core as mx\n"
        f"    >>> fnp.{name}(mx.array({args}).shape\n"
        f"    (2,)\n"
    )


def _binary(name: str, impl: Callable, jvp: Callable | None, vjp: Callable | None):
    """A binary primitive; ``None`` rules mean not differentiable (bool or
    integer results, or a derivative that is zero almost everywhere)."""
    prim = Primitive(name, impl, elementwise=True)
    prim.batch = batch_nary(prim)
    if jvp is None:
        prim.jvp = lambda primals, tangents: (prim.bind(*primals), None)
        prim.vjp = lambda ct, out, x, y: (None, None)
    else:
        prim.jvp, prim.vjp = jvp, vjp

    def op(x: Any, y: Any) -> Any:
        return prim.bind(x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _binary_doc(name)
    return prim, op


def _add_jvp(primals, tangents):
    out = add_p.bind(*primals)
    tx, ty = tangents
    if tx is not None and ty is not None:
        return out, tangent_to(fnp.add(tx, ty), out)
    return out, tangent_to(tx if ty is None else ty, out)


def _subtract_jvp(primals, tangents):
    out = subtract_p.bind(*primals)
    tx, ty = tangents
    if tx is not None and ty is not None:
        return out, tangent_to(fnp.subtract(tx, ty), out)
    return out, tangent_to(tx if ty is None else fnp.negative(ty), out)


def _multiply_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = multiply_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else tx * y, None if ty is None else x * ty), out)


def _divide_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = divide_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else tx / y, None if ty is None else -(ty * out) / y), out)


def _divide_vjp(ct, out, x, y, *, needed):
    ct_x = ct / y
    return (unbroadcast(ct_x, x) if needed[0] else None,
            unbroadcast(-ct_x * out, y) if needed[1] else None)


def _remainder_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = remainder_p.bind(x, y)
    return out, tangent_to(add_tangents(
        tx, None if ty is None else -ty * fnp.floor_divide(x, y)), out)


def _power_dx(x, y):
    # d/dx x**y = y * x**(y-1), taken as 0 where y == 0 (also at x == 0).
    return fnp.where(fnp.equal(y, 0), 0.0, y * fnp.power(x, y - 1))


def _power_dy(x, y, out):
    # d/dy x**y = x**y * log(x), taken as 0 at x == 0 (where x**y is constant 0 or 1).
    safe_x = fnp.where(fnp.equal(x, 0), 1.0, x)
    return out * fnp.log(safe_x)


def _power_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = power_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else tx * _power_dx(x, y),
        None if ty is None else ty * _power_dy(x, y, out)), out)


def _power_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct * _power_dx(x, y), x) if needed[0] else None,
            unbroadcast(ct * _power_dy(x, y, out), y) if needed[1] else None)


def _selector(x, y, greater: bool):
    """1 where x wins, 0 where y wins, 1/2 at ties (the gradient is shared).

    Arithmetic rather than nested ``where``: MLX's CPU select is several
    times slower than a subtract and a sign."""
    diff = fnp.subtract(x, y) if greater else fnp.subtract(y, x)
    return (fnp.sign(diff) + 1) * 0.5


def _extremum_rules(prim: Primitive, greater: bool):
    def jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y)
        s = _selector(x, y, greater)
        return out, tangent_to(add_tangents(
            None if tx is None else tx * s, None if ty is None else ty * (1 - s)), out)

    def vjp(ct, out, x, y, *, needed):
        s = _selector(x, y, greater)
        return (unbroadcast(ct * s, x) if needed[0] else None,
                unbroadcast(ct * (1 - s), y) if needed[1] else None)

    prim.jvp, prim.vjp = jvp, vjp


def _arctan2_jvp(primals, tangents):
    (y, x), (ty, tx) = primals, tangents
    out = arctan2_p.bind(y, x)
    denom = x * x + y * y
    return out, tangent_to(add_tangents(
        None if ty is None else ty * x / denom, None if tx is None else -(tx * y) / denom), out)


def _arctan2_vjp(ct, out, y, x, *, needed):
    ct = ct / (x * x + y * y)
    return (unbroadcast(ct * x, y) if needed[0] else None,
            unbroadcast(-ct * y, x) if needed[1] else None)


def _logaddexp_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = logaddexp_p.bind(x, y)
    return out, tangent_to(add_tangents(
        None if tx is None else tx * fnp.exp(x - out),
        None if ty is None else ty * fnp.exp(y - out)), out)


def _add_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(ct, y) if needed[1] else None)


def _subtract_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(fnp.negative(ct), y) if needed[1] else None)


def _multiply_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct * y, x) if needed[0] else None,
            unbroadcast(x * ct, y) if needed[1] else None)


def _remainder_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct, x) if needed[0] else None,
            unbroadcast(-ct * fnp.floor_divide(x, y), y) if needed[1] else None)


def _logaddexp_vjp(ct, out, x, y, *, needed):
    return (unbroadcast(ct * fnp.exp(x - out), x) if needed[0] else None,
            unbroadcast(ct * fnp.exp(y - out), y) if needed[1] else None)


add_p, add = _binary("add", mx.add, _add_jvp, _add_vjp)
subtract_p, subtract = _binary("subtract", mx.subtract, _subtract_jvp, _subtract_vjp)
multiply_p, multiply = _binary("multiply", mx.multiply, _multiply_jvp, _multiply_vjp)
divide_p, divide = _binary("divide", mx.divide, _divide_jvp, _divide_vjp)
floor_divide_p, floor_divide = _binary("floor_divide", mx.floor_divide, None, None)
remainder_p, remainder = _binary("remainder", mx.remainder, _remainder_jvp, _remainder_vjp)
power_p, power = _binary("power", mx.power, _power_jvp, _power_vjp)
maximum_p, maximum = _binary("maximum", mx.maximum, None, None)
minimum_p, minimum = _binary("minimum", mx.minimum, None, None)
_extremum_rules(maximum_p, greater=True)
_extremum_rules(minimum_p, greater=False)
arctan2_p, arctan2 = _binary("arctan2", mx.arctan2, _arctan2_jvp, _arctan2_vjp)
logaddexp_p, logaddexp = _binary("logaddexp", mx.logaddexp, _logaddexp_jvp, _logaddexp_vjp)
equal_p, equal = _binary("equal", mx.equal, None, None)
not_equal_p, not_equal = _binary("not_equal", mx.not_equal, None, None)
less_p, less = _binary("less", mx.less, None, None)
less_equal_p, less_equal = _binary("less_equal", mx.less_equal, None, None)
greater_p, greater = _binary("greater", mx.greater, None, None)
greater_equal_p, greater_equal = _binary("greater_equal", mx.greater_equal, None, None)
logical_and_p, logical_and = _binary("logical_and", mx.logical_and, None, None)
logical_or_p, logical_or = _binary("logical_or", mx.logical_or, None, None)
logical_xor_p, logical_xor = _binary("logical_xor", mx.logical_xor, None, None)
bitwise_and_p, bitwise_and = _binary("bitwise_and", mx.bitwise_and, None, None)
bitwise_or_p, bitwise_or = _binary("bitwise_or", mx.bitwise_or, None, None)
bitwise_xor_p, bitwise_xor = _binary("bitwise_xor", mx.bitwise_xor, None, None)

true_divide = divide
mod = remainder


# ----------------------------------------------------------------------------
# where, clip, casts, stop_gradient
# ----------------------------------------------------------------------------


def _where_jvp(primals, tangents):
    cond, x, y = primals
    _, tx, ty = tangents
    out = where_p.bind(cond, x, y)
    if tx is None:
        tx = fnp.zeros_like(out)
    if ty is None:
        ty = fnp.zeros_like(out)
    return out, tangent_to(where_p.bind(cond, tx, ty), out)


def _where_vjp(ct, out, cond, x, y, *, needed):
    zeros = fnp.zeros_like(ct)
    return (None, unbroadcast(where_p.bind(cond, ct, zeros), x) if needed[1] else None,
            unbroadcast(where_p.bind(cond, zeros, ct), y) if needed[2] else None)


where_p = Primitive("where", mx.where, jvp=_where_jvp, vjp=_where_vjp, elementwise=True)
where_p.batch = batch_nary(where_p)


def where(condition: Any, x: Any, y: Any) -> Any:
    """``x`` where ``condition`` holds, else ``y`` (all three broadcast).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.where(mx.array([True, False]), 1.0, 2.0).tolist()
    [1.0, 2.0]
    """
    return where_p.bind(condition, x, y)


def clip(x: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None,
         max: Any = None) -> Any:
    """Limit ``x`` to ``[min, max]`` (either bound may be ``None``). The bounds
    may be given positionally, or by NumPy 2's and jax.numpy's names
    ``min=``/``max=`` or by the older ``a_min=``/``a_max=``.

    At a bound the gradient is shared between ``x`` and the bound, as
    ``minimum``/``maximum`` do.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.clip(mx.array([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()
    [0.0, 0.5, 1.0]
    >>> fnp.clip(mx.array([-2.0, 0.5, 3.0]), max=1.0).tolist()
    [-2.0, 0.5, 1.0]
    """
    lower = _one_bound(a_min, min, "a_min", "min")
    upper = _one_bound(a_max, max, "a_max", "max")
    if lower is None and upper is None:
        raise ValueError("clip: give at least one bound (min= or max=)")
    if lower is not None:
        x = maximum(x, lower)
    if upper is not None:
        x = minimum(x, upper)
    return x


def _one_bound(old: Any, new: Any, old_name: str, new_name: str) -> Any:
    """A bound of ``clip`` given by one of its two names, not both."""
    if old is not None and new is not None:
        raise TypeError(
            f"clip: {old_name} and {new_name} are two names for the same bound; give one")
    return new if old is None else old


def _astype_jvp(primals, tangents, dtype):
    (x,), (t,) = primals, tangents
    out = astype_p.bind(x, dtype=dtype)
    return out, (astype_p.bind(t, dtype=dtype) if is_floating(dtype) else None)


def _astype_vjp(ct, out, x, dtype):
    x_dtype = aval_of(x).dtype
    if not is_floating(x_dtype) or not is_floating(dtype):
        return (None,)
    return (astype_p.bind(ct, dtype=x_dtype),)


astype_p = Primitive("astype", mx.astype, jvp=_astype_jvp, vjp=_astype_vjp)
astype_p.batch = batch_unary(astype_p)


def astype(x: Any, dtype: DTypeLike) -> Any:
    """``x`` cast to ``dtype`` (in any spelling: ``mx.int32``, ``int``,
    ``np.int32``, ``"int32"``); gradients flow between floating dtypes only.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.astype(mx.array([1.7]), mx.int32).tolist()
    [1]
    >>> fnp.astype(mx.array([1, 2]), float).dtype
    mlx.core.float32
    """
    dtype = to_mlx_dtype(dtype, "astype: dtype")
    if aval_of(x).dtype == dtype:
        return x
    return astype_p.bind(x, dtype=dtype)


stop_gradient_p = Primitive(
    "stop_gradient", mx.stop_gradient,
    jvp=lambda primals, tangents: (stop_gradient_p.bind(*primals), None),
    vjp=lambda ct, out, x: (None,))
stop_gradient_p.batch = batch_unary(stop_gradient_p)


def stop_gradient(x: Any) -> Any:
    """The identity whose derivative is zero; applies to every leaf of a pytree.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.grad(lambda x: x * ft.stop_gradient(x))(mx.array(3.0)).item()
    3.0
    """
    from ftorch import tree

    return tree.map(stop_gradient_p.bind, x)
