"""ft.test_util: the public rule checks pass on right rules and catch wrong ones."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.custom_batching import custom_vmap

X = mx.array([0.3, -1.2, 2.0], dtype=mx.float64)


def _wrong_jvp():
    @ft.custom_jvp
    def f(x):
        return fnp.tanh(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return fnp.tanh(x), 1.1 * (1 - fnp.tanh(x) ** 2) * t  # 10% off

    return f


@pytest.fixture
def wrong_vjp_tanh():
    """A primitive whose JVP is right and whose VJP is 10% off (unregistered after the test)."""
    import ftorch.primitives as lax
    from ftorch.core import Primitive, registry

    prim = Primitive("test_util_wrong_vjp_tanh", mx.tanh)

    @prim.def_jvp
    def _jvp(primals, tangents):
        y = prim.bind(primals[0])
        return y, lax.multiply(tangents[0], lax.subtract(1.0, lax.square(y)))

    @prim.def_vjp
    def _vjp(ct, y, x, *, needed):
        return (lax.multiply(ct, lax.multiply(0.9, lax.subtract(1.0, lax.square(y)))),)

    @prim.def_batch
    def _batch(vals, dims, axis_size):
        return prim.bind(vals[0]), dims[0]

    yield prim.bind
    del registry[prim.name]


def test_right_rules_pass_to_second_order():
    ft.test_util.check_grads(lambda x, y: fnp.tanh(x) * y ** 2, (X, X + 1.0), order=2)
    ft.test_util.check_grads(lambda p: p["w"] @ p["b"], ({"w": mx.ones((2, 3), mx.float64),
                                                        "b": X},), order=2)


def test_a_wrong_jvp_fails_the_forward_check():
    with pytest.raises(AssertionError, match="finite differences"):
        ft.test_util.check_grads(_wrong_jvp(), (X,), order=1, modes=("fwd",))


def test_a_wrong_vjp_fails_the_reverse_check(wrong_vjp_tanh):
    ft.test_util.check_jvp(wrong_vjp_tanh, (X,))
    with pytest.raises(AssertionError, match="J t"):
        ft.test_util.check_vjp(wrong_vjp_tanh, (X,))


def test_a_wrong_second_derivative_is_caught_at_order_two():
    # Right first derivative, whose own derivative is wrong: stop_gradient
    # hides the dependence of (1 - tanh^2) on x from the second order.
    @ft.custom_jvp
    def f(x):
        return fnp.tanh(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return fnp.tanh(x), ft.stop_gradient(1 - fnp.tanh(x) ** 2) * t

    ft.test_util.check_grads(f, (X,), order=1)
    with pytest.raises(AssertionError):
        ft.test_util.check_grads(f, (X,), order=2)


def test_integer_leaves_are_passed_along():
    idx = mx.array([2, 0])
    ft.test_util.check_grads(lambda x, i: fnp.take(x, i) ** 2, (X, idx), order=2)


def test_batching():
    ft.test_util.check_batching(lambda a, b: fnp.sum(a * b, axis=-1),
                                (mx.ones((4, 3)), mx.ones((3, 4))), in_axes=(0, 1))
    ft.test_util.check_batching(lambda a: (a, a * 2), (mx.ones((2, 3)),), out_axes=(0, 1))


def test_a_wrong_batching_rule_fails():
    f = custom_vmap(lambda x: fnp.sum(x))
    f.def_vmap(lambda axis_size, in_batched, x: (fnp.sum(x, axis=1) * 2.0, True))
    with pytest.raises(AssertionError, match="vmap vs loop"):
        ft.test_util.check_batching(f, (mx.array(np.arange(6.0).reshape(3, 2)),))


@pytest.mark.parametrize("kwargs,match", [
    ({"order": 0}, "order"), ({"modes": ("bwd",)}, "modes")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ft.test_util.check_grads(fnp.tanh, (X,), **kwargs)


def test_check_batching_names_mismatched_sizes():
    with pytest.raises(ValueError, match="batch size"):
        ft.test_util.check_batching(fnp.add, (mx.ones(3), mx.ones(4)))


def test_reverse_mode_alone_checks_custom_vjp_functions():
    @ft.custom_vjp
    def f(x):
        return fnp.tanh(x)

    f.defvjp(lambda x: (fnp.tanh(x), fnp.tanh(x)), lambda y, ct: (ct * (1 - y ** 2),))
    ft.test_util.check_grads(f, (X,), order=2, modes=("rev",))

    @ft.custom_vjp
    def wrong(x):
        return fnp.tanh(x)

    wrong.defvjp(lambda x: (fnp.tanh(x), fnp.tanh(x)), lambda y, ct: (ct * (1 - y ** 2) * 0.9,))
    with pytest.raises(AssertionError, match="J t"):
        ft.test_util.check_grads(wrong, (X,), order=1, modes=("rev",))
