"""vmap: equal to stacking over a Python loop, for any in/out axes, and
composed with the autodiff transforms."""

import mlx.core as mx
import numpy as np
import pytest
from cases_elementwise import BINARY, UNARY
from harness import broadcastable, to_mx
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.nn.functional as F
import ftorch.numpy as fnp
from ftorch.transforms.vmap import vmap


def loop(f, args, in_axes, out_axis, size):
    outs = []
    for i in range(size):
        outs.append(f(*[a if ax is None else a[(slice(None),) * ax + (i,)]
                        for a, ax in zip(args, in_axes)]))
    return np.stack([np.array(o) for o in outs], axis=out_axis)


@st.composite
def batched_args(draw, n):
    """``n`` broadcastable arrays, each with a batch axis inserted at a drawn
    position (or left unbatched), the axes used, and an out axis."""
    base = draw(broadcastable(n, -2.0, 2.0))
    size = draw(st.integers(1, 3))
    args, axes = [], []
    for a in base:
        ax = draw(st.none() | st.integers(0, a.ndim))
        if ax is not None:
            a = np.stack([a + 0.1 * k for k in range(size)], axis=ax)
        args.append(a)
        axes.append(ax)
    if all(ax is None for ax in axes):
        args[0] = np.stack([args[0]] * size)
        axes[0] = 0
    out_ndim = max(np.ndim(a) for a in base)
    return args, axes, draw(st.integers(-(out_ndim + 1), out_ndim)), size


@pytest.mark.parametrize("name,f", [(n, f) for n, f, _, _ in UNARY if n not in (
    "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "arccosh", "arcsin", "arccos", "arctanh",
    "erfinv")] + [("log", fnp.log), ("sqrt", fnp.sqrt)])
@given(data=st.data())
def test_unary_vmap_matches_loop(name, f, data):
    args, axes, out_axis, size = data.draw(batched_args(1))
    if name in ("log", "sqrt"):
        args = [np.abs(a) + 0.5 for a in args]
    got = vmap(f, in_axes=tuple(axes), out_axes=out_axis)(*to_mx(tuple(args)))
    np.testing.assert_allclose(np.array(got), loop(f, to_mx(tuple(args)), axes, out_axis, size),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,f", [(n, f) for n, f, _, _ in BINARY if n != "power"]
                         + [("where", lambda c, x, y: fnp.where(c > 0, x, y))])
@given(data=st.data())
def test_broadcasting_vmap_matches_loop(name, f, data):
    n = 3 if name == "where" else 2
    args, axes, out_axis, size = data.draw(batched_args(n))
    if name in ("divide", "remainder"):
        args[1] = np.abs(args[1]) + 0.5
    margs = to_mx(tuple(args))
    got = vmap(f, in_axes=tuple(axes), out_axes=out_axis)(*margs)
    np.testing.assert_allclose(np.array(got), loop(f, margs, axes, out_axis, size),
                               rtol=1e-12, atol=1e-12)


def test_nested_vmap_and_pytrees():
    x = mx.arange(6.0).reshape(2, 3)
    y = mx.arange(3.0)
    outer = vmap(vmap(lambda a, b: a * b), in_axes=(0, None))(x, y)
    np.testing.assert_array_equal(np.array(outer), np.array(x) * np.array(y))
    out = vmap(lambda p: {"s": fnp.sin(p["a"]), "c": p["b"] * 2.0},
               in_axes=({"a": 1, "b": None},), out_axes={"s": 0, "c": None})(
        {"a": x, "b": mx.array(1.5)})
    np.testing.assert_allclose(np.array(out["s"]), np.sin(np.array(x)).T, rtol=1e-6)
    assert out["c"].item() == 3.0


def test_closure_over_batched_outer_value():
    xs, ys = mx.array([1.0, 2.0]), mx.array([10.0, 20.0, 30.0])
    table = vmap(lambda x: vmap(lambda y: x * y + fnp.sin(y))(ys))(xs)
    expected = np.array(xs)[:, None] * np.array(ys)[None, :] + np.sin(np.array(ys))[None, :]
    np.testing.assert_allclose(np.array(table), expected, rtol=1e-6)


def test_in_axes_tree_must_match_arguments():
    with pytest.raises(ValueError, match="in_axes"):
        vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": mx.ones(2)})


def test_chunked_equals_unchunked():
    x = mx.arange(10.0).reshape(5, 2)
    f = vmap(lambda a: fnp.exp(a) * 2.0)
    g = vmap(lambda a: fnp.exp(a) * 2.0, chunk_size=2)
    np.testing.assert_allclose(np.array(f(x)), np.array(g(x)), rtol=1e-6)


def test_vmap_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        vmap(fnp.add)(mx.ones(2), mx.ones(3))
    with pytest.raises(ValueError, match="out of range"):
        vmap(fnp.sin, in_axes=2)(mx.ones((2, 2)))
    with pytest.raises(ValueError, match="axis_size"):
        vmap(fnp.sin, in_axes=None)(mx.ones(2))
    with pytest.raises(ValueError, match="in_axes has 2 entries"):
        vmap(fnp.sin, in_axes=(0, 0))(mx.ones(2))
    with pytest.raises(ValueError, match="out_axes is None"):
        vmap(fnp.sin, out_axes=None)(mx.ones(2))
    assert vmap(lambda: mx.ones(2), in_axes=(), axis_size=3)().shape == (3, 2)



# ----------------------------------------------------------------------------
# Composition with autodiff
# ----------------------------------------------------------------------------


def _mlp_params(rng):
    return {"w1": mx.array(rng.standard_normal((4, 8)) * 0.5, dtype=mx.float64),
            "b1": mx.zeros(8, mx.float64),
            "w2": mx.array(rng.standard_normal((8, 3)) * 0.5, dtype=mx.float64)}


def _loss(params, x, y):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"]
    return -fnp.sum(F.log_softmax(logits) * y)


def test_per_example_gradients_equal_a_loop():
    rng = np.random.default_rng(0)
    params = _mlp_params(rng)
    xs = mx.array(rng.standard_normal((5, 4)), dtype=mx.float64)
    ys = mx.array(np.eye(3)[rng.integers(0, 3, 5)], dtype=mx.float64)
    per_example = vmap(ft.grad(_loss), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(5):
        g = ft.grad(_loss)(params, xs[i], ys[i])
        for k in params:
            np.testing.assert_allclose(np.array(per_example[k][i]), np.array(g[k]), rtol=1e-10)


def test_vmap_of_grad_of_grad():
    # MLX's own nested grad inside vmap gave zeros for second derivatives.
    xs = mx.array([0.1, 0.5, -1.2], dtype=mx.float64)
    second = vmap(ft.grad(ft.grad(lambda x: fnp.sin(x) * x ** 3)))(xs)
    x = np.array(xs)
    expected = -np.sin(x) * x ** 3 + 6 * np.cos(x) * x ** 2 + 6 * np.sin(x) * x
    np.testing.assert_allclose(np.array(second), expected, rtol=1e-6)
    nested = vmap(vmap(ft.grad(ft.grad(lambda x: x ** 4))))(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(np.array(nested), 12 * np.array([[1.0, 2.0], [3.0, 4.0]]) ** 2)


def test_grad_of_vmap_and_jvp_of_vmap():
    w = mx.array([0.3, -0.7, 1.1], dtype=mx.float64)
    xs = mx.array(np.arange(12.0).reshape(4, 3) / 10, dtype=mx.float64)

    def total(w):
        return fnp.sum(vmap(lambda x: fnp.sum(fnp.tanh(x * w)))(xs))

    expected = ft.grad(lambda w: fnp.sum(fnp.tanh(xs * w)))(w)
    np.testing.assert_allclose(np.array(ft.grad(total)(w)), np.array(expected), rtol=1e-10)
    _, t = ft.jvp(vmap(lambda x: fnp.exp(x) * 2.0), (xs,), (mx.ones_like(xs),))
    np.testing.assert_allclose(np.array(t), 2 * np.exp(np.array(xs)), rtol=1e-6)
    jac = vmap(ft.jacrev(lambda x: x ** 2 @ w))(xs)
    np.testing.assert_allclose(np.array(jac), 2 * np.array(xs) * np.array(w), rtol=1e-10)
