"""Rule cases for rematerialisation: ``remat`` (``ft.checkpoint``) under
each policy, ``optimization_barrier`` and ``checkpoint_name``.

Every check applies: a checkpointed function has the derivatives of the
function itself, whatever it saves."""

import mlx.core as mx
from harness import Case, broadcastable, floats, shapes
from hypothesis import strategies as st

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp

policies = ft.checkpoint_policies


def tanh_layer(w, x):
    return fnp.tanh(x @ w) * x[..., :1]


@st.composite
def weight_and_input(draw):
    n = draw(st.integers(1, 3))
    return draw(floats((n, n))), draw(floats(draw(shapes(1, 2, 1, 3)) + (n,)))


def two_layers(policy):
    layer = ft.checkpoint(tanh_layer, policy=policy)
    return lambda w, x: layer(w, layer(w, x))


CASES = [
    Case("remat", two_layers(None), weight_and_input(), mlx_fn=lambda w, x: tanh_layer(
        w, tanh_layer(w, x)), name="remat-nothing_saveable"),
    Case("remat", two_layers(policies.dots_saveable), weight_and_input(),
         name="remat-dots_saveable"),
    Case("remat", two_layers(policies.everything_saveable), weight_and_input(),
         name="remat-everything_saveable"),
    Case("remat", ft.checkpoint(lambda x, y: {"p": x * y, "s": fnp.tanh(x) + y},
                                prevent_cse=False), broadcastable(2), name="remat-pytree"),
    Case("optimization_barrier", lambda x, y: lax.optimization_barrier((x * y, fnp.tanh(y))),
         broadcastable(2), mlx_fn=lambda x, y: (x * y, mx.tanh(y))),
    Case("checkpoint_name", lambda x: ft.checkpoint(
        lambda x: fnp.tanh(ft.checkpoint_name(x * x, "sq")),
        policy=policies.save_only_these_names("sq"))(x), st.tuples(floats(shapes())),
         mlx_fn=lambda x: mx.tanh(x * x)),
]
