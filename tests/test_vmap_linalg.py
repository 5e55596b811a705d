"""vmap of matmul and einsum (and the contractions built on them) against
Python loops: batch axes anywhere, unbatched operands, nested vmap, and
vmap composed with grad."""

import itertools

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.primitives.linalg import einsum_p, matmul_p
from ftorch.transforms.vmap import vmap

SIZE = 3
RNG = np.random.default_rng(0)


def arr(x):
    return mx.array(x, dtype=mx.float64)


def rand(shape):
    return RNG.standard_normal(shape)


def batched(x, ax):
    """``SIZE`` perturbed copies of ``x`` stacked at ``ax`` (``None``: ``x``)."""
    if ax is None:
        return x
    return np.stack([x + 0.1 * k for k in range(SIZE)], axis=ax)


def take(x, ax, i):
    return x if ax is None else np.take(x, i, axis=ax)


def loop(f, args, in_axes, out_axis=0):
    outs = [np.array(f(*[arr(take(a, ax, i)) for a, ax in zip(args, in_axes)]))
            for i in range(SIZE)]
    return np.stack(outs, axis=out_axis)


def check(f, args, in_axes, out_axis=0, tol=1e-10):
    got = vmap(f, in_axes=tuple(in_axes), out_axes=out_axis)(*[arr(a) for a in args])
    expected = loop(f, args, in_axes, out_axis)
    got = np.array(got)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


# Per-example shapes of matmul operands: 1-d, 2-d and with broadcast batches.
MATMUL_SHAPES = [
    ((4,), (4,)), ((4,), (4, 5)), ((2, 4), (4,)), ((2, 4), (4, 5)),
    ((3, 2, 4), (4, 5)), ((2, 4), (3, 4, 5)), ((3, 2, 4), (3, 4, 5)),
    ((1, 2, 4), (3, 4, 5)), ((2, 3, 2, 4), (3, 4, 5)), ((4,), (2, 4, 5)), ((3, 2, 4), (4,)),
]


def _axes(sa, sb):
    for da in [None, *range(len(sa) + 1)]:
        for db in [None, *range(len(sb) + 1)]:
            if da is not None or db is not None:
                yield da, db


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_every_batch_axis(sa, sb):
    a, b = rand(sa), rand(sb)
    for da, db in _axes(sa, sb):
        check(fnp.matmul, [batched(a, da), batched(b, db)], [da, db])


def test_matmul_stays_one_matmul():
    seen = []
    orig = matmul_p.impl

    def counting(*args, **params):
        seen.append(tuple(x.shape for x in args))
        return orig(*args, **params)

    matmul_p.impl = counting
    try:
        a, b = rand((SIZE, 2, 4)), rand((4, SIZE, 5))
        vmap(fnp.matmul, in_axes=(0, 1))(arr(a), arr(b))
    finally:
        matmul_p.impl = orig
    assert len(seen) == 1


EINSUMS = ["ij,jk->ik", "ij,kj->ik", "i,i->", "i,j->ij", "ijk,jil->kl", "ij,jk,kl->il",
           "ii->i", "ij,ii->j", "...ij,...jk->...ik", "ab,bc,ca->"]


@pytest.mark.parametrize("subscripts", EINSUMS)
def test_einsum_batch_axes(subscripts):
    lhs = subscripts.split("->")[0].replace("...", "x")
    sizes = dict(zip("ijklabcx", [2, 3, 4, 2, 2, 3, 4, 2]))
    ops = [rand(tuple(sizes[c] for c in term)) for term in lhs.split(",")]

    def f(*xs):
        return fnp.einsum(subscripts, *xs)

    choices = [[None, *range(o.ndim + 1)] for o in ops]
    for k, axes in enumerate(itertools.product(*choices)):
        if all(ax is None for ax in axes):
            continue
        out_axis = k % 2 * -1  # first or last
        check(f, [batched(o, ax) for o, ax in zip(ops, axes)], axes, out_axis)


@pytest.mark.parametrize("f,shapes", [
    (fnp.tensordot, ((3, 4, 5), (4, 5, 2))),
    (fnp.dot, ((2, 3), (4, 3, 5))),
    (fnp.inner, ((2, 3), (4, 3))),
    (fnp.outer, ((3,), (4,))),
    (fnp.vdot, ((2, 3), (6,))),
])
def test_contractions_mixed_in_axes(f, shapes):
    a, b = rand(shapes[0]), rand(shapes[1])
    for da, db in [(0, None), (None, a.ndim - 1 if b.ndim > 1 else 0), (1, 0), (a.ndim, b.ndim)]:
        if da is not None and da > a.ndim:
            continue
        check(f, [batched(a, da), batched(b, db)], [da, db])


def test_einsum_batch_stays_one_einsum():
    seen = []
    orig = einsum_p.impl

    def counting(*args, **params):
        seen.append(params["subscripts"])
        return orig(*args, **params)

    einsum_p.impl = counting
    try:
        vmap(lambda x, y: fnp.einsum("ij,jk->ik", x, y), in_axes=(2, None))(
            arr(rand((2, 3, SIZE))), arr(rand((3, 4))))
    finally:
        einsum_p.impl = orig
    assert len(seen) == 1


def test_nested_vmap():
    # Per-example a (2, 4) and b (4, 5); a mapped over two axes, b over the inner one.
    a, b = rand((3, 2, 2, 4)), rand((2, 4, 5))
    f = vmap(vmap(fnp.matmul, in_axes=(1, 0)), in_axes=(0, None))
    got = np.array(f(arr(a), arr(b)))
    expected = np.stack([np.stack([a[i, :, j] @ b[j] for j in range(2)]) for i in range(3)])
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)

    g = vmap(vmap(lambda x, y: fnp.einsum("ij,j->i", x, y), in_axes=(None, 0)),
             in_axes=(2, 1))
    x, y = rand((2, 4, 3)), rand((5, 3, 4))
    got = np.array(g(arr(x), arr(y)))
    expected = np.stack([np.stack([x[:, :, o] @ y[p, o] for p in range(5)]) for o in range(3)])
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def _loss(w, x):
    h = fnp.tanh(fnp.matmul(x, w))
    return fnp.sum(fnp.einsum("ij,ij->i", h, h))


def test_vmap_of_grad():
    w, x = rand((SIZE, 4, 3)), rand((2, 4))
    got = vmap(ft.grad(_loss), in_axes=(0, None))(arr(w), arr(x))
    expected = np.stack([np.array(ft.grad(_loss)(arr(w[i]), arr(x)))
                         for i in range(SIZE)])
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-10, atol=1e-10)


def test_grad_of_vmap():
    w, x = rand((4, 3)), rand((2, 4, SIZE))

    def total(w, x):
        return fnp.sum(vmap(_loss, in_axes=(None, 2))(w, x))

    got = ft.grad(total, argnums=(0, 1))(arr(w), arr(x))
    per = [ft.grad(_loss, argnums=(0, 1))(arr(w), arr(x[:, :, i])) for i in range(SIZE)]
    np.testing.assert_allclose(np.array(got[0]), sum(np.array(g[0]) for g in per),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.array(got[1]), np.stack([np.array(g[1]) for g in per], axis=2),
                               rtol=1e-10, atol=1e-10)
