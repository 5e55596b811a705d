"""custom_vmap: the user's batching rule (a distinctive one: cos where the
function computes sin) is what vmap uses, alone and under jit, grad and jvp
in any order; unbatched arguments reach the rule as they are; pytrees; a
realistic rule (one matmul for a batch of matrix-vector products); errors."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp

custom_vmap = ft.custom_batching.custom_vmap
XS = mx.array([0.1, 0.2, 0.3])


def close(a, b):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6)


@custom_vmap
def f(x):
    return fnp.sin(x)


@f.def_vmap
def _f_rule(axis_size, in_batched, x):
    return fnp.cos(x), in_batched[0]  # distinctive: not what f computes


def test_outside_vmap_the_function_runs():
    close(f(XS[0]), fnp.sin(XS[0]))
    close(ft.jit(f)(XS[0]), fnp.sin(XS[0]))
    close(ft.grad(f)(XS[0]), fnp.cos(XS[0]))


@pytest.mark.parametrize("transform", [
    ft.vmap, lambda g: ft.jit(ft.vmap(g)), lambda g: ft.vmap(ft.jit(g)),
    lambda g: lambda xs: ft.vmap(ft.vmap(g))(xs[None])[0],
])
def test_the_rule_batches(transform):
    close(transform(f)(XS), fnp.cos(XS))


@pytest.mark.parametrize("transform", [
    lambda g: g, ft.jit,
])
def test_derivatives_and_vmap_in_any_order_use_the_rule(transform):
    # The rule is cos, so its derivative is -sin, whichever is outermost.
    expected = -fnp.sin(XS)
    close(transform(ft.grad(lambda x: fnp.sum(ft.vmap(f)(x))))(XS), expected)
    close(transform(ft.vmap(ft.grad(f)))(XS), expected)
    close(transform(ft.vmap(lambda x: ft.jvp(f, (x,), (mx.array(1.0),))[1]))(XS), expected)
    close(transform(lambda x: ft.jvp(ft.vmap(f), (x,), (mx.ones(3),))[1])(XS), expected)


def test_unbatched_arguments_and_pytrees():
    seen = []

    @custom_vmap
    def g(params, x):
        return {"y": params["w"] * x + params["b"], "s": fnp.sum(params["w"])}

    @g.def_vmap
    def _g_rule(axis_size, in_batched, params, x):
        seen.append(in_batched)
        out = {"y": params["w"] * x + params["b"], "s": fnp.sum(params["w"])}
        return out, {"y": True, "s": False}

    params = {"w": mx.array([1.0, 2.0]), "b": mx.array([0.5, 0.5])}
    xs = mx.ones((4, 2))
    got = ft.vmap(g, in_axes=(None, 0))(params, xs)
    assert seen[-1] == ({"w": False, "b": False}, True)
    close(got["y"], mx.broadcast_to(params["w"] + 0.5, (4, 2)))
    close(got["s"], mx.full((4,), 3.0))  # an unbatched result is broadcast by vmap


def test_a_rule_that_batches_a_matrix_vector_product_into_one_matmul():
    calls = []

    @custom_vmap
    def matvec(w, x):
        return w @ x

    @matvec.def_vmap
    def _matvec_rule(axis_size, in_batched, w, x):
        calls.append(in_batched)
        if in_batched == (False, True):
            return x @ fnp.transpose(w), True
        w = w if in_batched[0] else fnp.broadcast_to(w, (axis_size, *w.shape))
        x = x if in_batched[1] else fnp.broadcast_to(x, (axis_size, *x.shape))
        return fnp.einsum("bij,bj->bi", w, x), True

    w = mx.array(np.random.default_rng(0).standard_normal((3, 4)), mx.float32)
    xs = mx.array(np.random.default_rng(1).standard_normal((5, 4)), mx.float32)
    close(ft.vmap(matvec, in_axes=(None, 0))(w, xs), mx.stack([w @ xs[i] for i in range(5)]))
    assert calls[-1] == (False, True)
    ws = mx.stack([w, 2 * w])
    close(ft.vmap(matvec, in_axes=(0, None))(ws, xs[0]), mx.stack([w @ xs[0], 2 * w @ xs[0]]))
    # Per-example gradients with respect to the input go through the rule too.
    got = ft.vmap(ft.grad(lambda x: fnp.sum(matvec(w, x) ** 2)))(xs)
    close(got, mx.stack([2 * (w @ xs[i]) @ w for i in range(5)]))


def test_errors():
    @custom_vmap
    def no_rule(x):
        return x

    with pytest.raises(AttributeError, match="no batching rule"):
        no_rule(XS)

    @custom_vmap
    def bad(x):
        return x

    @bad.def_vmap
    def _bad_rule(axis_size, in_batched, x):
        return x, (True, False)

    with pytest.raises(TypeError, match="out_batched has structure"):
        ft.vmap(bad)(XS)

    @custom_vmap
    def unbatched_claim(x):
        return x

    @unbatched_claim.def_vmap
    def _claim_rule(axis_size, in_batched, x):
        return x[0], True

    with pytest.raises(ValueError, match="marked batched but has shape"):
        ft.vmap(unbatched_claim)(XS)
    with pytest.raises(TypeError, match="keyword arguments"):
        f(x=XS)
    with pytest.raises(TypeError, match="expected a function"):
        custom_vmap(3)
