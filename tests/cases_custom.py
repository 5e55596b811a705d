"""Rule cases for the primitives that carry user rules.

The custom_jvp case's rule is the true derivative, so every check applies
(reverse mode transposes the rule). The custom_vjp case has no forward mode
(as in JAX), so only the vmap check runs here; tests/test_custom.py checks
its reverse mode against the known answer."""

from harness import Case, broadcastable, floats, shapes
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp


@ft.custom_jvp
def tanh_times(x, y):
    return fnp.tanh(x) * y


@tanh_times.defjvp
def _tanh_times_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    t = fnp.tanh(x)
    return t * y, (1 - t * t) * y * tx + t * ty


@ft.custom_vjp
def scaled(x, y):
    return fnp.tanh(x) * y


scaled.defvjp(lambda x, y: (fnp.tanh(x) * y, (x, y)),
              lambda res, ct: (ct * (1 - fnp.tanh(res[0]) ** 2) * res[1], ct * fnp.tanh(res[0])))

@st.composite
def same_shape_pair(draw):
    shape = draw(shapes())
    return draw(floats(shape)), draw(floats(shape))


CASES = [
    Case("custom_jvp_call", tanh_times, broadcastable(2)),
    Case("custom_vjp_call", scaled, same_shape_pair(), fd=False, vjp=False),
]


@ft.custom_batching.custom_vmap
def tanh_times_batched(x, y):
    return fnp.tanh(x) * y


@tanh_times_batched.def_vmap
def _tanh_times_rule(axis_size, in_batched, x, y):
    # Batch axes first, the same shapes otherwise: the product broadcasts.
    return fnp.tanh(x) * y, any(in_batched)


CASES += [Case("custom_vmap_call", tanh_times_batched, same_shape_pair())]


# Pytrees in and out, with a result the rule leaves unbatched when only "b"
# is batched; and the same function under an inner vmap, so that the checks
# (vmap, jvp, vjp, second order) run it under vmap(vmap(f)) (the outer batch
# merged into the inner one) and under derivatives of vmap(f).
@ft.custom_batching.custom_vmap
def tanh_and_product(p):
    return {"prod": p["a"] * p["b"], "t": fnp.tanh(p["a"])}


@tanh_and_product.def_vmap
def _tanh_and_product_rule(axis_size, in_batched, p):
    (batched,) = in_batched
    out = {"prod": p["a"] * p["b"], "t": fnp.tanh(p["a"])}
    return out, {"prod": batched["a"] or batched["b"], "t": batched["a"]}


@st.composite
def same_shape_pair_1d(draw):
    shape = draw(shapes(min_dims=1))
    return draw(floats(shape)), draw(floats(shape))


def _tanh_times_outside_and_inside_vmap(x, y):
    return tanh_times_batched(x, y), ft.vmap(tanh_times_batched)(x, y)


CASES += [
    Case("custom_vmap_call", lambda a, b: tanh_and_product({"a": a, "b": b}), same_shape_pair(),
         name="custom_vmap_call_pytree"),
    Case("custom_vmap_call", _tanh_times_outside_and_inside_vmap, same_shape_pair_1d(),
         name="custom_vmap_call_nested"),
]
