"""vmap over the shape ops: batched operands at any axis, unbatched operands
mixed in, nested vmap, and vmap composed with grad, against Python loops."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch
import ftorch.numpy as fnp
from ftorch.transforms.vmap import vmap

SIZE = 3


def _take(a, ax, i):
    return a if ax is None else a[(slice(None),) * ax + (i,)]


def loop(f, args, in_axes, out_axis=0, size=SIZE):
    outs = [f(*[_take(a, ax, i) for a, ax in zip(args, in_axes)]) for i in range(size)]
    if isinstance(outs[0], (list, tuple)):
        return [np.stack([np.array(o[k]) for o in outs], axis=out_axis)
                for k in range(len(outs[0]))]
    return np.stack([np.array(o) for o in outs], axis=out_axis)


def batched(shape, ax, seed=0, size=SIZE):
    """A float32 array of per-example ``shape`` with a batch axis at ``ax``."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(shape).astype(np.float32)
    if ax is None:
        return mx.array(base)
    return mx.array(np.stack([base + 0.5 * k for k in range(size)], axis=ax))


def check(f, args, in_axes, out_axes=0):
    got = vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    want = loop(f, args, in_axes, out_axes)
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.array(g), w, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_allclose(np.array(got), want, rtol=1e-6, atol=1e-6)


SHAPE = (2, 3, 4)

UNARY = {
    "reshape": lambda x: fnp.reshape(x, (4, 6)),
    "ravel": fnp.ravel,
    "expand_squeeze": lambda x: fnp.squeeze(fnp.expand_dims(x, (0, 2)), 0),
    "broadcast_to": lambda x: fnp.broadcast_to(fnp.expand_dims(x, 1), (5, 2, 2, 3, 4)),
    "transpose": lambda x: fnp.transpose(x, (2, 0, 1)),
    "moveaxis": lambda x: fnp.moveaxis(x, 0, -1),
    "static_slice": lambda x: x[1:, ::-2, 1:3],
    "flip": lambda x: fnp.flip(x, (0, 2)),
    "split": lambda x: fnp.split(x, [1, 3], axis=-1),
    "split_sections": lambda x: fnp.split(x, 2, axis=0),
    "pad": lambda x: fnp.pad(x, ((1, 0), (0, 2), (1, 1)), constant_values=1.5),
    "pad_reflect": lambda x: fnp.pad(x, 1, mode="reflect"),
    "pad_wrap": lambda x: fnp.pad(x, ((0, 0), (2, 5), (0, 1)), mode="wrap"),
    "roll": lambda x: fnp.roll(x, (1, -2), (0, 2)),
    "roll_flat": lambda x: fnp.roll(x, 5),
    "tile": lambda x: fnp.tile(x, (2, 1, 2)),
    "repeat": lambda x: fnp.repeat(x, [1, 0, 2], axis=1),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("in_axis", [0, 1, 3])
@pytest.mark.parametrize("out_axis", [0, -1])
def test_unary_any_axis(name, in_axis, out_axis):
    f = UNARY[name]
    check(f, [batched(SHAPE, in_axis)], [in_axis], out_axis)


def test_slice_transpose_any_axis():
    from ftorch.primitives.shape import slice_transpose_p

    slices = ((1, 3, 1), (3, None, -2))
    f = lambda ct: slice_transpose_p.bind(ct, slices=slices, shape=(4, 5, 2))  # noqa: E731
    for ax in (0, 1, 2, 3):
        check(f, [batched((2, 2, 2), ax)], [ax], ax % 3)


@pytest.mark.parametrize("axes", [(0, 2, None), (None, 1, 0), (3, None, None), (1, 1, 2)])
def test_concatenate_mixed(axes):
    xs = [batched((2, 3, 4), axes[0], 1), batched((2, 3, 1), axes[1], 2),
          batched((2, 3, 2), axes[2], 3)]
    check(lambda a, b, c: fnp.concatenate([a, b, c], axis=-1), xs, axes, 1)
    axes = tuple(None if a is None else min(a, 2) for a in axes)
    ys = [batched((2, 3), axes[0], 1), batched((2, 3), axes[1], 2), batched((2, 3), axes[2], 3)]
    check(lambda a, b, c: fnp.stack([a, b, c], axis=1), ys, axes, 2)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (2, 0), (1, None)])
def test_pad_traced_value(axes):
    x = batched((3, 2), axes[0], 4)
    c = batched((), axes[1], 5)
    check(lambda x, c: fnp.pad(x, ((1, 2), (0, 1)), constant_values=c), [x, c], axes, 1)


def test_broadcast_mixed():
    x, y = batched((3, 1), 1, 6), batched((4,), None, 7)
    check(lambda x, y: fnp.broadcast_arrays(x, y), [x, y], [1, None], 2)
    check(lambda x, y: fnp.broadcast_arrays(x, y), [y, x], [None, 1], 0)


def test_nested_vmap():
    def f(x, y):
        z = fnp.concatenate([fnp.transpose(x), fnp.reshape(y, (3, 2))], axis=1)
        return fnp.roll(fnp.pad(z[::-1, 1:], ((0, 1), (1, 0))), 1, axis=0)

    rng = np.random.default_rng(8)
    xs = mx.array(rng.standard_normal((5, 2, 4, 3)).astype(np.float32))  # outer 5, inner 4
    ys = mx.array(rng.standard_normal((6, 5)).astype(np.float32))  # outer at axis 1
    got = vmap(vmap(f, in_axes=(1, None), out_axes=2), in_axes=(0, 1), out_axes=0)(xs, ys)
    want = np.stack([
        np.stack([np.array(f(xs[o, :, i], ys[:, o])) for i in range(4)], axis=2)
        for o in range(5)])
    np.testing.assert_allclose(np.array(got), want, rtol=1e-6, atol=1e-6)


def _scalar_f(x):
    """A scalar function of a (2, 3) array built from shape ops."""
    y = fnp.pad(fnp.transpose(x), ((1, 0), (0, 1)), mode="edge")  # (4, 3)
    a, b = fnp.split(fnp.roll(y, 1, axis=1), [2], axis=0)
    z = fnp.ravel(fnp.concatenate([a * b, fnp.broadcast_to(x[:1, 1:2], (2, 3))], axis=0))
    return fnp.reshape(fnp.sin(z[1:2]) * z[3:4] + z[-1:] * z[5:6] ** 2, ())


@pytest.mark.parametrize("ax", [0, 1, 2])
def test_vmap_of_grad(ax):
    xs = batched((2, 3), ax, 9)
    got = vmap(ftorch.grad(_scalar_f), in_axes=ax, out_axes=ax)(xs)
    want = loop(ftorch.grad(_scalar_f), [xs], [ax], ax)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ax", [0, 2])
def test_grad_of_vmap(ax):
    xs = batched((2, 3), ax, 10)
    got = ftorch.grad(lambda x: fnp.sum(vmap(_scalar_f, in_axes=ax)(x)))(xs)
    want = loop(ftorch.grad(_scalar_f), [xs], [ax], ax)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)


def test_vmap_of_grad_pad_value():
    def f(x, c):
        return fnp.reshape(fnp.ravel(fnp.pad(x, 1, constant_values=c))[3:4] * c, ())

    xs, cs = batched((2, 2), 1, 11), batched((), 0, 12)
    got = vmap(ftorch.grad(f, argnums=(0, 1)), in_axes=(1, 0))(xs, cs)
    want = loop(ftorch.grad(f, argnums=(0, 1)), [xs, cs], [1, 0])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.array(g), w, rtol=1e-5, atol=1e-6)
