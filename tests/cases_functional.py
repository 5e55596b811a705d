"""Rule cases for ftorch.nn.functional."""

import mlx.core as mx
import mlx.nn as mnn
from cases_reduction import axis_choice, decode, encode
from harness import Case, away_from_zero, floats, shapes
from hypothesis import strategies as st

import ftorch.nn.functional as F


@st.composite
def softmax_args(draw):
    x = draw(floats(shapes(min_dims=1)))
    return x, encode(draw(axis_choice(x.ndim, none=False)), False)


def _axis(f, mlx: bool = False):
    def g(x, spec):
        axis = decode(spec)[0]["axis"]
        return f(x, axis=list(axis) if mlx and isinstance(axis, tuple) else axis)
    return g


def _mlx_log_softmax(x, axis):
    return x - mx.logsumexp(x, axis=axis, keepdims=True)


def unary_args(lo=-3.0, hi=3.0, fix=None):
    s = floats(shapes(), lo, hi)
    if fix is not None:
        s = s.map(fix)
    return s.map(lambda a: (a,))


# MLX's CPU float64 exp, erf and tanh-based kernels are only float32-accurate.
LOOSE = dict(eps=1e-3, rtol=1e-3, atol=1e-4)

CASES = [
    Case("softmax", _axis(F.softmax), softmax_args(), mlx_fn=_axis(mx.softmax, mlx=True),
         **LOOSE),
    Case("log_softmax", _axis(F.log_softmax), softmax_args(),
         mlx_fn=_axis(_mlx_log_softmax, mlx=True), **LOOSE),
    Case("sigmoid", F.sigmoid, unary_args(-6.0, 6.0), mlx_fn=mx.sigmoid, **LOOSE),
    Case("relu", F.relu, unary_args(fix=away_from_zero), mlx_fn=mnn.relu),
    Case("gelu", F.gelu, unary_args(), mlx_fn=mnn.gelu, **LOOSE),
    Case("gelu", lambda x: F.gelu(x, approximate=True), unary_args(),
         mlx_fn=mnn.gelu_approx, name="gelu_tanh", **LOOSE),
    Case("sigmoid", F.silu, unary_args(), mlx_fn=mnn.silu, name="silu", **LOOSE),
    Case("logaddexp", F.softplus, unary_args(-6.0, 6.0), mlx_fn=mnn.softplus,
         name="softplus", **LOOSE),
]
