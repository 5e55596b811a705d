"""Rule cases for ``jit``: the higher-order primitive whose JVP, VJP and
batching rules transform a whole staged graph."""

import mlx.core as mx
from harness import Case, broadcastable, floats, shapes
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp


def _smooth(lib):
    def f(x, y):
        return lib.sum(lib.sin(x) * y + x * x, axis=-1)
    return f


def _two_outputs(lib):
    def f(x, y):
        return lib.tanh(x) * y, lib.exp(0.5 * x) - y
    return f


def _mlp(lib):
    def f(w, x):
        return lib.tanh(x @ w) @ w.T
    return f


@st.composite
def square_and_batch(draw):
    n = draw(st.integers(1, 4))
    return draw(floats((n, n), -1.0, 1.0)), draw(floats((draw(st.integers(1, 3)), n)))


# MLX's CPU float64 exp, sin and tanh are only float32-accurate.
LOOSE = dict(eps=1e-3, rtol=1e-3, atol=1e-4)

CASES = [
    Case("jit", ft.jit(_smooth(fnp)), broadcastable(2).filter(lambda a: a[0].ndim + a[1].ndim),
         mlx_fn=_smooth(mx),
         name="jit[sum(sin(x)*y+x*x)]", **LOOSE),
    Case("jit", ft.jit(_two_outputs(fnp)), broadcastable(2), mlx_fn=_two_outputs(mx),
         name="jit[two outputs]", **LOOSE),
    Case("jit", ft.jit(_mlp(fnp)), square_and_batch(), mlx_fn=_mlp(mx), name="jit[matmul]",
         **LOOSE),
    Case("jit", ft.jit(lambda x: ft.jit(_smooth(fnp))(x, x)), floats(shapes(min_dims=1)).map(
        lambda a: (a,)), mlx_fn=lambda x: _smooth(mx)(x, x), name="jit[nested]", **LOOSE),
]
