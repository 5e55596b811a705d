"""custom_jvp and custom_vjp: a rule with a distinctive answer (not the
true derivative) is the one used under grad, jvp, vmap, jit and their
compositions; nondiff_argnums, pytree arguments, and the errors."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp

X = mx.array([0.5, 1.0, -2.0])
Y = mx.array([2.0, 3.0, 4.0])


def close(a, b):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6, atol=1e-6)


@ft.custom_jvp
def f(x, y):
    return fnp.sin(x) * y


@f.defjvp
def _f_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return f(x, y), 10.0 * tx + 100.0 * ty  # distinctive: not f's derivative


def loss_f(x, y):
    return fnp.sum(f(x, y))


@pytest.mark.parametrize("transform", [
    lambda g: g, ft.jit, lambda g: ft.jit(ft.jit(g)),
])
def test_custom_jvp_rule_is_used(transform):
    gx, gy = transform(ft.grad(loss_f, argnums=(0, 1)))(X, Y)
    close(gx, 10.0 * mx.ones(3))
    close(gy, 100.0 * mx.ones(3))
    _, t = transform(lambda x, y, tx, ty: ft.jvp(f, (x, y), (tx, ty)))(X, Y, mx.ones(3),
                                                                       mx.ones(3))
    close(t, 110.0 * mx.ones(3))
    close(ft.grad(ft.jit(loss_f))(X, Y), 10.0 * mx.ones(3))


def test_custom_jvp_under_vmap_and_higher_order():
    xs, ys = mx.stack([X, 2 * X]), mx.stack([Y, Y])
    close(ft.vmap(f)(xs, ys), fnp.sin(xs) * ys)
    close(ft.vmap(ft.grad(loss_f))(xs, ys), 10.0 * mx.ones((2, 3)))
    close(ft.grad(lambda x: fnp.sum(ft.vmap(f)(x, ys)))(xs), 10.0 * mx.ones((2, 3)))
    close(ft.jit(ft.vmap(ft.grad(loss_f)))(xs, ys), 10.0 * mx.ones((2, 3)))
    # d/dx sum(x * f(x, y)) by the rule is f + 10 x; its derivative is 10 + 10.
    inner = ft.grad(lambda x: fnp.sum(f(x, Y) * x))
    close(ft.grad(lambda x: fnp.sum(inner(x)))(X), 20.0 * mx.ones(3))


@ft.custom_vjp
def g(x, p):
    return x * p["w"]


def _g_fwd(x, p):
    return x * p["w"], (x, p["w"])


def _g_bwd(res, ct):
    x, w = res
    return ct * 7.0, {"w": ct * 0.0 + 3.0}  # distinctive


g.defvjp(_g_fwd, _g_bwd)


def loss_g(x, p):
    return fnp.sum(g(x, p))


@pytest.mark.parametrize("transform", [lambda h: h, ft.jit])
def test_custom_vjp_rule_is_used(transform):
    gx, gp = transform(ft.grad(loss_g, argnums=(0, 1)))(X, {"w": Y})
    close(gx, 7.0 * mx.ones(3))
    close(gp["w"], 3.0 * mx.ones(3))
    close(ft.grad(ft.jit(loss_g))(X, {"w": Y}), 7.0 * mx.ones(3))


def test_custom_vjp_under_vmap():
    xs, ws = mx.stack([X, 2 * X]), mx.stack([Y, Y])
    close(ft.vmap(g)(xs, {"w": ws}), xs * ws)
    close(ft.vmap(ft.grad(loss_g))(xs, {"w": ws}), 7.0 * mx.ones((2, 3)))
    close(ft.grad(lambda x: fnp.sum(ft.vmap(g)(x, {"w": ws})))(xs), 7.0 * mx.ones((2, 3)))
    close(ft.jit(ft.grad(lambda x: fnp.sum(ft.vmap(g)(x, {"w": ws}))))(xs), 7.0 * mx.ones((2, 3)))


def test_nondiff_argnums():
    scale = ft.custom_vjp(lambda n, x: x * n, nondiff_argnums=(0,))
    scale.defvjp(lambda n, x: (x * n, None), lambda n, res, ct: (ct * n * 2,))
    close(ft.grad(lambda x: fnp.sum(scale(3.0, x)))(X), 6.0 * mx.ones(3))
    power = ft.custom_jvp(lambda k, x: x ** k, nondiff_argnums=(0,))
    power.defjvp(lambda k, primals, tangents: (primals[0] ** k, -tangents[0]))
    close(ft.grad(lambda x: fnp.sum(power(2, x)))(X), -mx.ones(3))


def test_errors():
    with pytest.raises(TypeError, match="forward-mode differentiation .* custom_vjp"):
        ft.jvp(lambda x: g(x, {"w": Y}), (X,), (X,))
    bare = ft.custom_jvp(lambda x: x)
    with pytest.raises(AttributeError, match="no JVP rule"):
        bare(X)
    bad = ft.custom_vjp(lambda x: x)
    bad.defvjp(lambda x: (x, None), lambda res, ct: ct)  # not a tuple
    with pytest.raises(TypeError, match="bwd must return a tuple of 1 cotangents"):
        ft.grad(lambda x: fnp.sum(bad(x)))(X)
    with pytest.raises(TypeError, match="custom_jvp: expected a function"):
        ft.custom_jvp(3)
