"""Rule cases for the elementwise primitives."""

import mlx.core as mx
import numpy as np
from harness import (
    Case,
    away_from_integers,
    away_from_zero,
    broadcastable,
    floats,
    shapes,
)
from hypothesis import strategies as st

import ftorch.lax as lax
import ftorch.numpy as fnp


def unary_args(lo=-3.0, hi=3.0, fix=None):
    s = floats(shapes(), lo, hi)
    if fix is not None:
        s = s.map(fix)
    return s.map(lambda a: (a,))


def binary_args(lo=-3.0, hi=3.0, fix_x=None, fix_y=None):
    def fix(pair):
        x, y = pair
        return (fix_x(x) if fix_x else x, fix_y(y) if fix_y else y)
    return broadcastable(2, lo, hi).map(fix)


# name, ftorch op, MLX op, arguments
UNARY = [
    ("negative", fnp.negative, mx.negative, unary_args()),
    ("abs", fnp.abs, mx.abs, unary_args(fix=away_from_zero)),
    ("sign", fnp.sign, mx.sign, unary_args(fix=away_from_zero)),
    ("exp", fnp.exp, mx.exp, unary_args()),
    ("expm1", fnp.expm1, mx.expm1, unary_args()),
    ("log", fnp.log, mx.log, unary_args(0.2, 4.0)),
    ("log1p", fnp.log1p, mx.log1p, unary_args(-0.7, 4.0)),
    ("log2", fnp.log2, mx.log2, unary_args(0.2, 4.0)),
    ("log10", fnp.log10, mx.log10, unary_args(0.2, 4.0)),
    ("sqrt", fnp.sqrt, mx.sqrt, unary_args(0.2, 4.0)),
    ("rsqrt", fnp.rsqrt, mx.rsqrt, unary_args(0.2, 4.0)),
    ("square", fnp.square, mx.square, unary_args()),
    ("reciprocal", fnp.reciprocal, mx.reciprocal, unary_args(0.3, 3.0)),
    ("sin", fnp.sin, mx.sin, unary_args()),
    ("cos", fnp.cos, mx.cos, unary_args()),
    ("tan", fnp.tan, mx.tan, unary_args(-1.2, 1.2)),
    ("arcsin", fnp.arcsin, mx.arcsin, unary_args(-0.8, 0.8)),
    ("arccos", fnp.arccos, mx.arccos, unary_args(-0.8, 0.8)),
    ("arctan", fnp.arctan, mx.arctan, unary_args()),
    ("sinh", fnp.sinh, mx.sinh, unary_args()),
    ("cosh", fnp.cosh, mx.cosh, unary_args()),
    ("tanh", fnp.tanh, mx.tanh, unary_args()),
    ("arcsinh", fnp.arcsinh, mx.arcsinh, unary_args()),
    ("arccosh", fnp.arccosh, mx.arccosh, unary_args(1.2, 4.0)),
    ("arctanh", fnp.arctanh, mx.arctanh, unary_args(-0.8, 0.8)),
    ("erf", fnp.erf, mx.erf, unary_args()),
    ("erfinv", fnp.erfinv, mx.erfinv, unary_args(-0.8, 0.8)),
    ("floor", fnp.floor, mx.floor, unary_args(fix=away_from_integers)),
    ("ceil", fnp.ceil, mx.ceil, unary_args(fix=away_from_integers)),
    ("round", fnp.round, mx.round, unary_args(fix=lambda a: away_from_integers(a + 0.5) - 0.5)),
    ("cbrt", lax.cbrt, None, unary_args(fix=away_from_zero)),
]

BINARY = [
    ("add", fnp.add, mx.add, binary_args()),
    ("subtract", fnp.subtract, mx.subtract, binary_args()),
    ("multiply", fnp.multiply, mx.multiply, binary_args()),
    ("divide", fnp.divide, mx.divide, binary_args(fix_y=lambda y: away_from_zero(y, 0.5))),
    ("remainder", fnp.remainder, mx.remainder,
     binary_args(0.5, 3.0, fix_x=lambda x: x + 7.1234)),
    ("power", fnp.power, mx.power, binary_args(0.3, 2.0)),
    ("maximum", fnp.maximum, mx.maximum, binary_args(fix_x=lambda x: x + 0.01234)),
    ("minimum", fnp.minimum, mx.minimum, binary_args(fix_x=lambda x: x + 0.01234)),
    ("arctan2", fnp.arctan2, mx.arctan2, binary_args(0.3, 3.0)),
    ("logaddexp", fnp.logaddexp, mx.logaddexp, binary_args()),
    ("copysign", fnp.copysign, None, binary_args(fix_x=away_from_zero, fix_y=away_from_zero)),
    # fmod: away from the jumps at multiples of y
    ("rem", lax.rem, None,
     binary_args(0.5, 3.0, fix_x=lambda x: x + 7.1234, fix_y=lambda y: y + 0.0123)),
]

# Boolean- or integer-valued ops: rules must give zero derivatives; the
# differentiable input is kept so the checks run through the op.
NONDIFF = [
    ("isnan", lambda x: fnp.isnan(x), None),
    ("isinf", lambda x: fnp.isinf(x), None),
    ("isfinite", lambda x: fnp.isfinite(x), None),
    ("logical_not", lambda x: fnp.logical_not(x > 0), None),
    ("invert", lambda x: fnp.invert(x > 0), None),
    ("equal", lambda x: fnp.equal(x, 0.5), None),
    ("not_equal", lambda x: fnp.not_equal(x, 0.5), None),
    ("less", lambda x: fnp.less(x, 0.5), None),
    ("less_equal", lambda x: fnp.less_equal(x, 0.5), None),
    ("greater", lambda x: fnp.greater(x, 0.5), None),
    ("greater_equal", lambda x: fnp.greater_equal(x, 0.5), None),
    ("logical_and", lambda x: fnp.logical_and(x > 0, x < 1), None),
    ("logical_or", lambda x: fnp.logical_or(x > 0, x < -1), None),
    ("logical_xor", lambda x: fnp.logical_xor(x > 0, x < 1), None),
    ("bitwise_and", lambda x: fnp.bitwise_and(fnp.astype(x, mx.int32), 3), None),
    ("bitwise_or", lambda x: fnp.bitwise_or(fnp.astype(x, mx.int32), 3), None),
    ("bitwise_xor", lambda x: fnp.bitwise_xor(fnp.astype(x, mx.int32), 3), None),
    ("shift_left", lambda x: lax.shift_left(fnp.astype(x, mx.int32), 2), None),
    ("shift_right_arithmetic",
     lambda x: lax.shift_right_arithmetic(fnp.astype(x, mx.int32), 1), None),
    ("shift_right_logical", lambda x: lax.shift_right_logical(fnp.astype(x, mx.int32), 1), None),
    ("population_count", lambda x: lax.population_count(fnp.astype(x, mx.int32)), None),
    ("bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, mx.int64), None),
    ("floor_divide", lambda x: fnp.floor_divide(x, 1.0), None),
]


def _with_float(op):
    # Keep a differentiable output beside the boolean one.
    return lambda x: (op(x), x * 2.0)


# MLX's CPU float64 kernels for these are only float32-accurate, so finite
# differences need a larger step and a looser tolerance.
LOW_PRECISION_F64 = {"sin", "cos", "erf", "erfinv", "logaddexp"}
LOOSE = dict(eps=1e-3, rtol=1e-3, atol=1e-4)

CASES = (
    [Case(name, f, args, mlx_fn=g, **(LOOSE if name in LOW_PRECISION_F64 else {}))
     for name, f, g, args in UNARY]
    + [Case(name, f, args, mlx_fn=g, **(LOOSE if name in LOW_PRECISION_F64 else {}))
       for name, f, g, args in BINARY]
    + [Case(name, _with_float(f), unary_args(fix=lambda a: away_from_integers(a)))
       for name, f, _ in NONDIFF]
    + [
        Case("where", lambda c, x, y: fnp.where(c > 0, x, y),
             st.tuples(floats((3, 1)).map(away_from_zero), floats((1, 4)), floats((3, 4))),
             mlx_fn=lambda c, x, y: mx.where(c > 0, x, y)),
        Case("maximum", lambda x: fnp.clip(x, -1.0, 1.0),
             unary_args(fix=lambda a: np.where(np.abs(np.abs(a) - 1) < 0.05, a + 0.2, a)),
             mlx_fn=lambda x: mx.clip(x, -1.0, 1.0), name="clip"),
        Case("astype", lambda x: fnp.astype(x, mx.float32) * 2,
             unary_args(), name="astype_f64_f32", rtol=1e-3, atol=1e-4, eps=1e-3),
        Case("astype", lambda x: fnp.astype(fnp.astype(x, mx.int32), mx.float64) + x,
             unary_args(fix=away_from_integers), name="astype_int"),
        # Finite differences see through stop_gradient, so only the
        # transpose and second-order checks apply; test_transforms.py checks
        # its zero derivative directly.
        Case("stop_gradient", lambda x: fnp.stop_gradient(x) * x, unary_args(), fd=False),
        Case("power", lambda x: fnp.power(x, 3), unary_args(), mlx_fn=lambda x: x ** 3,
             name="power_int_exponent"),
        Case("power", lambda y: fnp.power(2.5, y), unary_args(), name="power_scalar_base"),
    ]
)
