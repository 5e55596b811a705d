"""lax.associative_scan: values against NumPy and sequential Python loops
(commutative, non-commutative and pytree operators, any axis, reversed),
and every transform through it."""

import mlx.core as mx
import numpy as np
import pytest
from harness import check_jvp_fd, check_vjp_dot
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.primitives import associative_scan


def sequential(fn, xs, reverse=False, axis=0):
    """The scan as a Python loop over slices along ``axis`` (single array),
    built with ftorch ops so that it can be differentiated too."""
    n = xs.shape[axis]
    order = range(n - 1, -1, -1) if reverse else range(n)
    out, acc = {}, None
    for i in order:
        x = xs[(slice(None),) * (axis % xs.ndim) + (slice(i, i + 1),)]
        acc = x if acc is None else fn(acc, x)
        out[i] = acc
    return fnp.concatenate([out[i] for i in range(n)], axis=axis)


def recurrence_op(x, y):
    """h -> a * h + b composed: first (a1, b1), then (a2, b2)."""
    (a1, b1), (a2, b2) = x, y
    return a1 * a2, a2 * b1 + b2


def recurrence_loop(a, b):
    """h_t = a_t * h_{t-1} + b_t from h_{-1} = 0."""
    h, hs = np.zeros(b.shape[1:]), []
    for t in range(b.shape[0]):
        h = a[t] * h + b[t]
        hs.append(h)
    return np.stack(hs) if hs else np.zeros(b.shape)


def f64(a):
    return mx.array(np.asarray(a, np.float64), dtype=mx.float64)


# ----------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------

OPS = {
    "add": (lambda a, b: a + b, np.cumsum, (-3.0, 3.0)),
    "multiply": (fnp.multiply, np.cumprod, (0.5, 1.5)),
    "maximum": (fnp.maximum, np.maximum.accumulate, (-3.0, 3.0)),
}


@st.composite
def scanned(draw, lo=-3.0, hi=3.0):
    """A float64 array with 1-3 dims, an axis of length 0..17, the axis as
    given (possibly negative) and a reverse flag."""
    shape = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    shape[axis] = draw(st.integers(0, 17))
    x = draw(hnp.arrays(np.float64, tuple(shape), elements=st.floats(lo, hi)))
    return x, axis, draw(st.booleans())


@pytest.mark.parametrize("op", sorted(OPS))
@given(data=st.data())
def test_matches_numpy(op, data):
    fn, np_scan, (lo, hi) = OPS[op]
    x, axis, reverse = data.draw(scanned(lo, hi))
    got = associative_scan(fn, f64(x), reverse=reverse, axis=axis)
    want = np.flip(np_scan(np.flip(x, axis), axis=axis), axis) if reverse else np_scan(x, axis=axis)
    assert got.shape == x.shape and got.dtype == mx.float64
    np.testing.assert_allclose(np.array(got), want, rtol=1e-12, atol=1e-12)


@given(n=st.integers(0, 17), reverse=st.booleans())
def test_integer_cumsum_is_exact(n, reverse):
    x = np.arange(1, n + 1, dtype=np.int32) * 7 % 5
    got = associative_scan(lambda a, b: a + b, mx.array(x), reverse=reverse)
    want = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
    assert got.dtype == mx.int32
    np.testing.assert_array_equal(np.array(got), want)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
def test_matmul_is_not_reordered(n, reverse):
    # Matrix products do not commute: every product must keep its order. In
    # reverse, the later element is fn's first argument (as in JAX).
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, 2, 2))
    got = associative_scan(fnp.matmul, f64(m), reverse=reverse)
    want, acc = np.zeros_like(m), None
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        acc = m[i] if acc is None else acc @ m[i]
        want[i] = acc
    np.testing.assert_allclose(np.array(got), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("axis", [1, -3])
def test_matmul_along_inner_axis_keeps_layout(axis):
    # fn sees the arrays in their own layout: here (2, k, 2, 2), batched matmul.
    m = np.random.default_rng(0).standard_normal((2, 6, 2, 2))
    got = associative_scan(fnp.matmul, f64(m), axis=axis)
    for b in range(2):
        acc = np.eye(2)
        for i in range(6):
            acc = acc @ m[b, i]
            np.testing.assert_allclose(np.array(got[b, i]), acc, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 13])
def test_linear_recurrence_pytree(n, reverse):
    # Leaves of different shapes (a broadcasts against b) sharing the axis.
    rng = np.random.default_rng(n)
    a, b = rng.uniform(-1, 1, (n, 1)), rng.standard_normal((n, 3))
    (ga, gb) = associative_scan(recurrence_op, (f64(a), f64(b)), reverse=reverse)
    assert ga.shape == (n, 1) and gb.shape == (n, 3)
    # Reversed, fn's first argument is the later element: the recurrence runs
    # backwards in time.
    want = recurrence_loop(a[::-1], b[::-1])[::-1] if reverse else recurrence_loop(a, b)
    np.testing.assert_allclose(np.array(gb), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.array(ga), np.cumprod(a[::-1], 0)[::-1] if reverse
                               else np.cumprod(a, 0), rtol=1e-10, atol=1e-12)


def test_dict_pytree():
    elems = {"x": mx.arange(4.0), "y": mx.array([1.0, 2.0, 3.0, 4.0])}
    out = associative_scan(lambda p, q: {"x": p["x"] + q["x"], "y": p["y"] * q["y"]}, elems)
    assert out["x"].tolist() == [0.0, 1.0, 3.0, 6.0]
    assert out["y"].tolist() == [1.0, 2.0, 6.0, 24.0]


def test_fn_calls_are_logarithmic_in_depth():
    calls = []

    def add(a, b):
        calls.append(a.shape[0])
        return a + b

    associative_scan(add, mx.arange(1024.0))
    assert len(calls) <= 2 * 10
    assert sum(calls) < 2 * 1024


# ----------------------------------------------------------------------------
# Transforms
# ----------------------------------------------------------------------------


def loss(scan, x):
    """A scalar of a scan (the linear recurrence plus a product scan). Only
    tanh and polynomials: MLX's CPU float64 sin, cos and exp are only
    float32-accurate, too coarse for finite differences."""
    a, b = fnp.tanh(x[:, :1]), x
    _, h = scan(recurrence_op, (a, b))
    p = scan(fnp.multiply, 1.0 + 0.1 * fnp.tanh(x))
    return fnp.sum(fnp.tanh(h) * p + h * h)


def scan_seq(fn, elems):
    """The sequential scan of a pytree, as a Python loop over ftorch ops."""
    leaves, treedef = ft.tree.flatten(elems)
    outs, acc = [], None
    for i in range(leaves[0].shape[0]):
        x = ft.tree.unflatten(treedef, [v[i:i + 1] for v in leaves])
        acc = x if acc is None else fn(acc, x)
        outs.append(ft.tree.leaves(acc))
    return ft.tree.unflatten(treedef, [fnp.concatenate(c) for c in zip(*outs)])


@pytest.mark.parametrize("n", [1, 2, 6, 7])
def test_grad_matches_finite_differences_and_loop(n):
    x = np.random.default_rng(n).uniform(-1, 1, (n, 3))
    g = np.array(ft.grad(lambda v: loss(associative_scan, v))(f64(x)))
    g_seq = np.array(ft.grad(lambda v: loss(scan_seq, v))(f64(x)))
    np.testing.assert_allclose(g, g_seq, rtol=1e-10, atol=1e-12)
    eps, fd = 1e-6, np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        fd[i] = (loss(associative_scan, f64(x + d)).item()
                 - loss(associative_scan, f64(x - d)).item()) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [3, 8])
def test_jvp_and_vjp(n, reverse):
    m = np.random.default_rng(n).standard_normal((n, 2, 2)) * 0.7

    def f(v):
        return associative_scan(fnp.matmul, v, reverse=reverse, axis=0)

    check_jvp_fd(f, (f64(m),))
    check_vjp_dot(f, (f64(m),))
    # Tangents agree with the sequential version's too.
    t = f64(np.random.default_rng(1).standard_normal(m.shape))
    _, got = ft.jvp(f, (f64(m),), (t,))
    _, want = ft.jvp(lambda v: sequential(fnp.matmul, v, reverse), (f64(m),), (t,))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 5, 6])
def test_vmap_matches_loop(in_axis, n):
    m = np.random.default_rng(n).standard_normal((n, 2, 2))
    batch = np.stack([m + 0.1 * k for k in range(3)], axis=in_axis)

    def f(v):
        return associative_scan(fnp.matmul, v, reverse=True)

    got = ft.vmap(f, in_axes=in_axis)(f64(batch))
    want = np.stack([np.array(f(f64(m + 0.1 * k))) for k in range(3)])
    np.testing.assert_allclose(np.array(got), want, rtol=1e-10, atol=1e-12)


def test_vmap_of_pytree_scan_with_unbatched_leaf():
    a = np.random.default_rng(0).uniform(-1, 1, (7, 1))
    b = np.random.default_rng(1).standard_normal((4, 7, 3))

    def f(a, b):
        return associative_scan(recurrence_op, (a, b))[1]

    got = ft.vmap(f, in_axes=(None, 0))(f64(a), f64(b))
    for k in range(4):
        np.testing.assert_allclose(np.array(got[k]), recurrence_loop(a, b[k]), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_jit_equals_eager(n):
    x = np.random.default_rng(n).uniform(-1, 1, (n, 3))

    def f(v):
        return associative_scan(fnp.multiply, 1.0 + 0.1 * v, reverse=True, axis=-2)

    np.testing.assert_allclose(np.array(ft.jit(f)(f64(x))), np.array(f(f64(x))), rtol=1e-12,
                               atol=1e-12)
    if n:
        g = ft.grad(lambda v: loss(associative_scan, v))
        np.testing.assert_allclose(np.array(ft.jit(g)(f64(x))), np.array(g(f64(x))),
                                   rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


def add(a, b):
    return a + b


def test_leaves_of_different_lengths():
    with pytest.raises(ValueError, match=r"same size along axis 0.*\(3,\).*\['b'\].*\(4,\)"):
        associative_scan(add, {"a": mx.zeros(3), "b": mx.zeros(4)})


def test_axis_out_of_range():
    with pytest.raises(ValueError, match=r"axis 1 is out of range for elems\[1\] of shape \(3,\)"):
        associative_scan(add, (mx.zeros((3, 2)), mx.zeros(3)), axis=1)
    with pytest.raises(ValueError, match="axis 0 is out of range.*shape \\(\\)"):
        associative_scan(add, mx.array(1.0))


def test_fn_returning_another_structure():
    with pytest.raises(TypeError, match="structure of elems"):
        associative_scan(lambda p, q: p[0] + q[0], (mx.zeros(3), mx.zeros(3)))


def test_fn_returning_another_shape_or_dtype():
    with pytest.raises(TypeError, match=r"for elems it was given f32\[1\] and returned f32\[\]"):
        associative_scan(lambda a, b: fnp.sum(a + b), mx.zeros(3))
    with pytest.raises(TypeError, match=r"for elems\[1\] it was given i32\[1\] .* f32\[1\]"):
        associative_scan(lambda p, q: (p[0] + q[0], (p[1] + q[1]) * 0.5),
                         (mx.zeros(2), mx.zeros(2, mx.int32)))


def test_bad_arguments():
    with pytest.raises(TypeError, match="expected a function"):
        associative_scan(None, mx.zeros(3))
    with pytest.raises(TypeError, match="axis must be an integer, got 0.5"):
        associative_scan(add, mx.zeros(3), axis=0.5)


def test_empty_pytree():
    assert associative_scan(add, ()) == ()
