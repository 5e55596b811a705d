"""vmap of reductions, scans and the normalized exponentials / activations:
each batched call equals a Python loop over the examples."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.nn.functional as F
import ftorch.numpy as fnp
from ftorch.transforms.vmap import vmap


def take(a, ax, i):
    return a if ax is None else a[(slice(None),) * ax + (i,)]


def loop(f, args, in_axes, size, out_axis=0):
    outs = [np.array(f(*[take(a, ax, i) for a, ax in zip(args, in_axes)]))
            for i in range(size)]
    return np.stack(outs, axis=out_axis)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    actual = np.array(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def batched(shape, bdim, size=3, seed=0):
    """A random float32 array of per-example ``shape`` with a batch axis at ``bdim``."""
    rng = np.random.default_rng(seed)
    full = list(shape)
    full.insert(bdim, size)
    return mx.array(rng.uniform(-2.0, 2.0, full).astype(np.float32))


REDUCTIONS = {
    "sum": fnp.sum, "mean": fnp.mean, "prod": fnp.prod, "max": fnp.max, "min": fnp.min,
    "var": fnp.var, "std": fnp.std, "logsumexp": fnp.logsumexp,
    "all": lambda x, **kw: fnp.all(x > 0, **kw), "any": lambda x, **kw: fnp.any(x > 0, **kw),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("bdim", [0, 1, 2, 3])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_at_every_batch_axis(name, bdim, axis, keepdims):
    f = REDUCTIONS[name]
    x = batched((2, 3, 4), bdim)
    g = lambda x: f(x, axis=axis, keepdims=keepdims)  # noqa: E731
    for out_axis in (0, -1):
        got = vmap(g, in_axes=bdim, out_axes=out_axis)(x)
        close(got, loop(g, [x], [bdim], 3, out_axis))


@pytest.mark.parametrize("f", [fnp.argmax, fnp.argmin])
@pytest.mark.parametrize("bdim", [0, 1, 2])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_arg_extremes(f, bdim, axis, keepdims):
    x = batched((3, 4), bdim, seed=1)
    g = lambda x: f(x, axis=axis, keepdims=keepdims)  # noqa: E731
    got = vmap(g, in_axes=bdim)(x)
    assert got.dtype == mx.uint32
    close(got, loop(g, [x], [bdim], 3))


@pytest.mark.parametrize("f", [fnp.cumsum, fnp.cumprod])
@pytest.mark.parametrize("bdim", [0, 1, 2])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("inclusive", [False, True])
def test_scans(f, bdim, axis, reverse, inclusive):
    x = batched((3, 4), bdim, seed=2)
    g = lambda x: f(x, axis=axis, reverse=reverse, inclusive=inclusive)  # noqa: E731
    close(vmap(g, in_axes=bdim, out_axes=1)(x), loop(g, [x], [bdim], 3, 1))


@pytest.mark.parametrize("f", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("bdim", [0, 1, 2])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_normalized_exponentials(f, bdim, axis):
    x = batched((3, 4), bdim, seed=3)
    g = lambda x: f(x, axis=axis)  # noqa: E731
    close(vmap(g, in_axes=bdim)(x), loop(g, [x], [bdim], 3))


@pytest.mark.parametrize("f", [F.sigmoid, F.relu, F.gelu, lambda x: F.gelu(x, True),
                               F.silu, F.softplus])
@pytest.mark.parametrize("bdim", [0, 1, 2])
def test_activations(f, bdim):
    x = batched((3, 4), bdim, seed=4)
    close(vmap(f, in_axes=bdim, out_axes=2)(x), loop(f, [x], [bdim], 3, 2))


def mixed(x, w, b):
    """Uses reductions, a scan and normalized exponentials together."""
    h = F.relu(x * w + b)
    p = F.softmax(h, axis=-1)
    z = fnp.logsumexp(fnp.cumsum(h, axis=0), axis=0) + fnp.var(p, axis=0, ddof=1)
    return fnp.sum(z * fnp.max(F.log_softmax(x, axis=0), axis=0)) + fnp.prod(
        F.sigmoid(x), axis=None) + fnp.std(F.gelu(w))


def test_unbatched_operands_mixed_with_batched():
    x = batched((3, 4), 1, seed=5)
    w = mx.array(np.random.default_rng(6).uniform(-1, 1, (3, 4)).astype(np.float32))
    b = batched((4,), 0, seed=7)
    in_axes = (1, None, 0)
    close(vmap(mixed, in_axes=in_axes)(x, w, b), loop(mixed, [x, w, b], in_axes, 3))
    in_axes = (None, 2, None)
    w2 = batched((3, 4), 2, seed=8)
    x2, b2 = take(x, 1, 0), take(b, 0, 0)
    close(vmap(mixed, in_axes=in_axes)(x2, w2, b2), loop(mixed, [x2, w2, b2], in_axes, 3))


def test_nested_vmap():
    rng = np.random.default_rng(9)
    x = mx.array(rng.uniform(-2, 2, (4, 2, 3, 5)).astype(np.float32))

    def f(x):
        return fnp.sum(F.softmax(x, axis=0) * fnp.cumprod(x, axis=1), axis=1) + fnp.mean(
            x, axis=(0, 1)) + fnp.astype(fnp.argmax(x, axis=1), mx.float32)

    # Per example of the outer vmap: axis 1 is the inner batch.
    got = vmap(vmap(f, in_axes=1, out_axes=0), in_axes=2, out_axes=1)(x)
    expected = np.stack([np.stack([np.array(f(x[:, j, i, :])) for j in range(2)])
                         for i in range(3)], axis=1)
    close(got, expected)


def loss(w, x):
    return fnp.logsumexp(F.log_softmax(x * w, axis=-1), axis=0) + fnp.sum(
        fnp.cumsum(fnp.var(x * w, axis=0, keepdims=True), axis=1) * F.sigmoid(w)) + fnp.max(
        fnp.prod(F.gelu(w), axis=0) + fnp.min(x, axis=0))


def test_vmap_of_grad():
    rng = np.random.default_rng(10)
    w = mx.array(rng.uniform(-1, 1, (3, 4)).astype(np.float32))
    xs = mx.array(rng.uniform(-1, 1, (3, 5, 4)).astype(np.float32))
    g = ft.grad(lambda w, x: fnp.sum(loss(w, x)))
    in_axes = (None, 1)
    close(vmap(g, in_axes=in_axes)(w, xs), loop(g, [w, xs], in_axes, 5), rtol=1e-4, atol=1e-5)
    ws = batched((3, 4), 2, size=5, seed=11)
    x = take(xs, 1, 0)
    in_axes = (2, None)
    close(vmap(g, in_axes=in_axes)(ws, x), loop(g, [ws, x], in_axes, 5), rtol=1e-4, atol=1e-5)


def test_grad_of_vmap():
    rng = np.random.default_rng(12)
    w = mx.array(rng.uniform(-1, 1, (3, 4)).astype(np.float32))
    xs = mx.array(rng.uniform(-1, 1, (3, 5, 4)).astype(np.float32))

    def batched_loss(w):
        return fnp.sum(vmap(loss, in_axes=(None, 1))(w, xs))

    def looped_loss(w):
        return sum(fnp.sum(loss(w, xs[:, i])) for i in range(5))

    close(ft.grad(batched_loss)(w), np.array(ft.grad(looped_loss)(w)), rtol=1e-4, atol=1e-5)
    close(batched_loss(w), np.array(looped_loss(w)), rtol=1e-5)
