"""Rule cases for the bit-level primitives (shifts, population_count, clz,
mulhi, bitcast_convert_type, nextafter, reduce_precision). All but
reduce_precision are integer or bit-level and have no derivative: each case
returns a float output beside them, so the transforms still run through
the primitive (its zero derivative and its batching)."""

import mlx.core as mx
from harness import Case, away_from_integers, floats, shapes

import ftorch.lax as lax
import ftorch.numpy as fnp


def _args(lo=-40.0, hi=40.0):
    return floats(shapes(), lo, hi).map(away_from_integers).map(lambda a: (a,))


def _ints(x, dtype=mx.int32):
    return fnp.astype(x, dtype)


def _beside(op):
    """``op`` of the integers near ``x``, beside a differentiable output."""
    return lambda x: (op(x), x * 2.0)


CASES = [
    Case("shift_left", _beside(lambda x: lax.shift_left(_ints(x), _ints(fnp.abs(x) % 40))),
         _args()),
    Case("shift_right_logical",
         _beside(lambda x: lax.shift_right_logical(_ints(x), _ints(fnp.abs(x) % 40))), _args()),
    Case("shift_right_arithmetic",
         _beside(lambda x: lax.shift_right_arithmetic(_ints(x), _ints(fnp.abs(x) % 40))),
         _args()),
    Case("population_count", _beside(lambda x: lax.population_count(_ints(x))), _args()),
    Case("clz", _beside(lambda x: lax.clz(_ints(x, mx.uint16))), _args(0.0, 40.0)),
    Case("mulhi", _beside(lambda x: lax.mulhi(_ints(x) * 99991, _ints(x) * 7919)), _args()),
    Case("bitcast_convert_type",
         _beside(lambda x: lax.bitcast_convert_type(fnp.astype(x, mx.float32), mx.uint16)),
         _args()),
    Case("nextafter", _beside(lambda x: lax.nextafter(x, fnp.zeros_like(x)) < x), _args()),
    # With the float64 format's own bit counts it rounds nothing, so finite
    # differences see the identity its derivative is.
    Case("reduce_precision", lambda x: lax.reduce_precision(x, 11, 52) * x,
         floats(shapes()).map(lambda a: (a,))),
]
