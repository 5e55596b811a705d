"""vmap over the indexing ops: gathers and scatters with the array, the index
arrays and the values batched at any axis (or not batched), nested vmap, and
vmap composed with grad, against Python loops."""

import itertools

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
    return np.stack([np.array(o) for o in outs], axis=out_axis)


def check(f, args, in_axes, out_axes=0):
    got = vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    want = loop(f, args, in_axes, out_axes)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)


def floats(shape, ax, seed=0, size=SIZE):
    """A float32 array of per-example ``shape`` with a batch axis at ``ax``."""
    rng = np.random.default_rng(seed)
    if ax is None:
        return mx.array(rng.standard_normal(shape).astype(np.float32))
    return mx.array(np.stack([rng.standard_normal(shape).astype(np.float32)
                              for _ in range(size)], axis=ax))


def ints(shape, high, ax, seed=0, size=SIZE, unique=False):
    """An int32 index array of per-example ``shape`` (entries in [-high, high),
    or distinct entries in [0, high) with ``unique``) batched at ``ax``."""
    rng = np.random.default_rng(seed + 100)

    def one():
        if unique:
            n = int(np.prod(shape))
            return rng.permutation(high)[:n].reshape(shape).astype(np.int32)
        return rng.integers(-high, high, shape).astype(np.int32)

    if ax is None:
        return mx.array(one())
    return mx.array(np.stack([one() for _ in range(size)], axis=ax))


SHAPE = (4, 5, 6)

# Index expressions over a (4, 5, 6) array with index arrays i (into axis
# size 4 or 5) and j (2-D, into size 5 or 6).
GATHERS = {
    "lead": lambda x, i, j: fnp.getitem(x, i),
    "middle": lambda x, i, j: fnp.getitem(x, (slice(None), j)),
    "pair": lambda x, i, j: fnp.getitem(x, (i, j)),
    "adjacent_middle": lambda x, i, j: fnp.getitem(x, (slice(1, 3), i, j)),
    "separated": lambda x, i, j: fnp.getitem(x, (i, slice(None, None, -2), j)),
    "int_and_array": lambda x, i, j: fnp.getitem(x, (2, slice(None), j)),
    "newaxis": lambda x, i, j: fnp.getitem(x, (None, i, None, ..., j)),
    "last": lambda x, i, j: fnp.getitem(x, (..., j)),
    "take": lambda x, i, j: fnp.take(x, j, axis=1),
    "take_flat": lambda x, i, j: fnp.take(x, j),
}


@pytest.mark.parametrize("name", sorted(GATHERS))
@pytest.mark.parametrize("x_ax", [None, 0, 1, 3])
@pytest.mark.parametrize("i_ax", [None, 0, 1])
def test_gather(name, x_ax, i_ax):
    j_ax = None if i_ax is None else 2 - i_ax
    if x_ax is None and i_ax is None:
        j_ax = 0
    x = floats(SHAPE, x_ax, 1)
    i = ints((2, 1), 4, None if i_ax is None else min(i_ax, 1), 2)
    j = ints((2, 3), 5, j_ax, 3)
    check(GATHERS[name], [x, i, j], [x_ax, None if i_ax is None else min(i_ax, 1), j_ax],
          out_axes=-1 if x_ax == 3 else 0)


def test_gather_both_mapped():
    x, i = floats((7, 2), 0, 4), ints((5,), 7, 0, 5)
    check(fnp.getitem, [x, i], [0, 0])
    check(fnp.getitem, [floats((7, 2), 2, 4), ints((2, 5), 7, 1, 5)], [2, 1], 1)


UPDATES = ["set", "add", "multiply", "divide", "min", "max", "subtract"]
# (index expression, per-example values shape)
TARGETS = [
    (lambda i: (i,), (3, 5, 6)),
    (lambda i: (slice(None), i), (6,)),
    (lambda i: (1, slice(None, None, -2), i), (3, 3)),
    (lambda i: (i, None, slice(1, 4)), (3, 1, 3, 6)),
    (lambda i: (slice(1, 3), 0), (2, 6)),
    (lambda i: (i,), (1, 3, 1, 6)),  # values with an extra leading axis
]


def _update_fn(op, target):
    def f(x, i, v):
        upd = fnp.at(x)[target(i)]
        if op in ("multiply", "divide"):
            return getattr(upd, op)(v, unique_indices=True)
        return getattr(upd, op)(v)
    return f


@pytest.mark.parametrize("op", UPDATES)
@pytest.mark.parametrize("t", range(len(TARGETS)))
def test_scatter_every_axis(op, t):
    target, v_shape = TARGETS[t]
    for x_ax, i_ax, v_ax in itertools.product([None, 0, 1, 2, 3], [None, 0, 1], [None, 0, 2]):
        if x_ax is None and i_ax is None and v_ax is None:
            continue
        if t == 1 and i_ax is not None:  # per-example index shape () -> only batched at 0
            i_ax = 0
        v_shape_ax = None if v_ax is None else min(v_ax, len(v_shape))
        x = floats(SHAPE, x_ax, 6)
        i_shape = () if t == 1 else (3,)
        i = ints(i_shape, 4 if t != 1 else 5, i_ax, 7, unique=True)
        v = floats(v_shape, v_shape_ax, 8)
        if op == "divide":
            v = mx.abs(v) + 1.0
        check(_update_fn(op, target), [x, i, v], [x_ax, i_ax, v_shape_ax],
              out_axes=1 if x_ax in (None, 1) else 0)


@pytest.mark.parametrize("axes", [(0, 0, None), (None, 1, 0), (2, 0, 0), (3, 1, None)])
def test_scatter_add_duplicates(axes):
    x = floats((5, 2), min(axes[0], 2) if axes[0] is not None else None, 9)
    i = ints((4, 3), 5, axes[1], 10)
    v = floats((4, 3, 2), axes[2], 11)
    check(lambda x, i, v: fnp.at(x)[i].add(v), [x, i, v],
          [None if axes[0] is None else min(axes[0], 2), axes[1], axes[2]])


@pytest.mark.parametrize("axes", [(0, 0), (None, 1), (2, None), (1, 2)])
def test_take_put_along_axis(axes):
    x = floats((3, 4, 2), axes[0], 12)
    idx = ints((3, 2, 2), 4, axes[1], 13) % 4
    check(lambda x, i: fnp.take_along_axis(x, i, axis=1), [x, idx], axes)
    check(lambda x, i: fnp.put_along_axis(x, i, 7.0, axis=-1, inplace=False),
          [x, ints((3, 4, 1), 2, axes[1], 14)], axes, 1)
    check(lambda x, i: fnp.take_along_axis(x, i, axis=None),
          [x, ints((5,), 24, None if axes[1] is None else 0, 15)],
          [axes[0], None if axes[1] is None else 0])


def test_nested_vmap():
    def f(x, i, v):
        return fnp.at(x)[:, i].add(v)[i] * 2.0

    rng = np.random.default_rng(16)
    xs = mx.array(rng.standard_normal((5, 4, 3)).astype(np.float32))  # outer 5 at 0
    is_ = mx.array(rng.integers(0, 3, (2, 4, 5)).astype(np.int32))  # inner 4 at 1, outer at 2
    v = mx.array(rng.standard_normal((2,)).astype(np.float32))
    got = vmap(vmap(f, in_axes=(None, 1, None), out_axes=2), in_axes=(0, 2, None))(xs, is_, v)
    want = np.stack([
        np.stack([np.array(f(xs[o], is_[:, i, o], v)) for i in range(4)], axis=2)
        for o in range(5)])
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)


def _loss(x, i, v):
    y = fnp.at(x)[i, 1:].multiply(v, unique_indices=True)
    y = fnp.at(y)[0, 1:].max(v[0])
    return fnp.sum(fnp.take_along_axis(y[i], fnp.abs(i)[:, None] % 3, axis=1) ** 2) + fnp.sum(
        y[i] * y[-1])


@pytest.mark.parametrize("axes", [(0, 0, None), (1, None, 0), (None, 0, 1), (2, 0, 0)])
def test_vmap_of_grad(axes):
    x = floats((4, 3), None if axes[0] is None else min(axes[0], 2), 17)
    i = ints((2,), 4, axes[1], 18, unique=True)
    v = floats((2, 2), axes[2], 19)
    in_axes = [None if axes[0] is None else min(axes[0], 2), axes[1], axes[2]]
    for argnums in (0, 2):
        g = ftorch.grad(_loss, argnums=argnums)
        check(g, [x, i, v], in_axes, 1)


@pytest.mark.parametrize("axes", [(0, 0, None), (1, None, 0), (None, 0, 1), (2, 0, 0)])
def test_grad_of_vmap(axes):
    in_axes = (None if axes[0] is None else min(axes[0], 2), axes[1], axes[2])
    x = floats((4, 3), in_axes[0], 20)
    i = ints((2,), 4, axes[1], 21, unique=True)
    v = floats((2, 2), axes[2], 22)

    def total(x, v):
        return fnp.sum(vmap(_loss, in_axes=in_axes)(x, i, v))

    gx, gv = ftorch.grad(total, argnums=(0, 1))(x, v)
    wx = np.zeros(x.shape, np.float32)
    wv = np.zeros(v.shape, np.float32)
    for k in range(SIZE):
        args = [_take(a, ax, k) for a, ax in zip((x, i, v), in_axes)]
        ex, ev = ftorch.grad(_loss, argnums=(0, 2))(*args)
        for w, e, ax in ((wx, ex, in_axes[0]), (wv, ev, in_axes[2])):
            if ax is None:
                w += np.array(e)
            else:
                w[(slice(None),) * ax + (k,)] += np.array(e)
    np.testing.assert_allclose(np.array(gx), wx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(gv), wv, rtol=1e-4, atol=1e-5)
