"""ftorch.random: the same numbers as mx.random for the same key, eager,
jitted and vmapped; derivatives through location and scale; errors; and
simple statistical checks with fixed seeds.

The statistical tolerances are six standard errors of the statistic (for
100,000 draws unless a test says otherwise), so a correct sampler fails them
with probability about 2e-9 per check (chi-square statistics: their 1e-9
quantile); the seeds are fixed, so the tests are deterministic."""

import re

import mlx.core as mx
import numpy as np
import pytest
from child import run_child

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.random as random

KEY = random.key(0)
N = 100_000
MEAN = mx.array([1.0, -1.0, 0.0])
COV = mx.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 0.5]])


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert mx.array_equal(a, b).item()


@pytest.mark.parametrize("draw, mlx_draw", [
    (lambda k: random.normal(k, (3, 4)), lambda k: mx.random.normal((3, 4), key=k)),
    (lambda k: random.uniform(k, (5,)), lambda k: mx.random.uniform(shape=(5,), key=k)),
    (lambda k: random.gumbel(k, (5,)), lambda k: mx.random.gumbel((5,), key=k)),
    (lambda k: random.bernoulli(k, 0.3, (6,)), lambda k: mx.random.bernoulli(0.3, (6,), key=k)),
    (lambda k: random.randint(k, (6,), 2, 9), lambda k: mx.random.randint(2, 9, (6,), key=k)),
    (lambda k: random.categorical(k, mx.array([0.0, 1.0, 2.0]), shape=(4,)),
     # The same numbers, as int32 (JAX's index dtype) where MLX gives uint32.
     lambda k: mx.random.categorical(mx.array([0.0, 1.0, 2.0]), shape=(4,), key=k).astype(
         mx.int32)),
    (lambda k: random.truncated_normal(k, -1.0, 1.0, (5,)),
     lambda k: mx.random.truncated_normal(-1.0, 1.0, (5,), key=k)),
    (lambda k: random.split(k, 3), lambda k: mx.random.split(k, 3)),
    (lambda k: random.multivariate_normal(k, MEAN, COV, (4,), method="svd"),
     lambda k: mx.random.multivariate_normal(MEAN, COV, (4,), key=k)),
])
def test_same_numbers_as_mlx_eager_and_jitted(draw, mlx_draw):
    for seed in (0, 7):
        k = random.key(seed)
        same(draw(k), mlx_draw(k))
        jitted = ft.jit(draw)
        same(jitted(k), mlx_draw(k))
        same(jitted(random.key(seed + 1)), mlx_draw(random.key(seed + 1)))  # never frozen
        assert jitted.trace_count == 1


def test_keys_are_mlx_keys():
    same(random.key(3), mx.random.key(3))
    assert random.PRNGKey is random.key


def test_vmap_over_keys_equals_a_loop_and_an_unbatched_key_repeats():
    keys = random.split(KEY, 5)
    got = ft.vmap(lambda k: random.normal(k, (3,)))(keys)
    same(got, mx.stack([random.normal(keys[i], (3,)) for i in range(5)]))
    got = ft.jit(ft.vmap(lambda k: random.uniform(k, (2,), minval=-1.0)))(keys)
    same(got, mx.stack([random.uniform(keys[i], (2,), minval=-1.0) for i in range(5)]))
    # An unbatched key: every example draws the same numbers, as in JAX.
    got = ft.vmap(lambda x: random.normal(KEY, (3,)) + x)(mx.zeros(4))
    same(got, mx.broadcast_to(random.normal(KEY, (3,)), (4, 3)))
    # Batched parameters with one key: a loop over the parameters.
    ps = mx.array([0.1, 0.5, 0.9])
    got = ft.vmap(lambda p: random.bernoulli(KEY, p, (8,)))(ps)
    same(got, mx.stack([random.bernoulli(KEY, ps[i], (8,)) for i in range(3)]))


def test_derivatives_through_location_and_scale():
    z = random.normal(KEY, (4,))
    g_loc, g_scale = ft.grad(lambda loc, s: fnp.sum(random.normal(KEY, (4,), loc=loc, scale=s)),
                             argnums=(0, 1))(mx.array(1.0), mx.array(2.0))
    assert g_loc.item() == 4.0
    assert abs(g_scale.item() - fnp.sum(z).item()) < 1e-5
    u = random.uniform(KEY, (4,))
    g_lo, g_hi = ft.grad(lambda lo, hi: fnp.sum(random.uniform(KEY, (4,), minval=lo, maxval=hi)),
                         argnums=(0, 1))(mx.array(1.0), mx.array(3.0))
    assert abs(g_hi.item() - fnp.sum(u).item()) < 1e-5
    assert abs(g_lo.item() - (4 - fnp.sum(u).item())) < 1e-5


def test_errors():
    with pytest.raises(TypeError, match="requires floating-point inputs.*uint32"):
        ft.grad(lambda k: fnp.sum(random.normal(k, (2,))))(KEY)
    with pytest.raises(TypeError, match="mx.random cannot draw from a traced key.*ftorch.random"):
        ft.jit(lambda k: mx.random.normal((2,), key=k))(KEY)
    with pytest.raises(TypeError, match="vmap|traced key"):
        ft.vmap(lambda k: mx.random.normal((2,), key=k))(random.split(KEY, 2))
    with pytest.raises(TypeError, match=r"normal: key must be a uint32 array of shape \(2,\)"):
        random.normal(mx.zeros(2), (2,))
    with pytest.raises(TypeError, match="key must be a key array"):
        random.normal(0, (2,))
    with pytest.raises(ValueError, match="split: num must be a positive int"):
        random.split(KEY, 0)
    with pytest.raises(TypeError, match="uniform: dtype must be a floating dtype"):
        random.uniform(KEY, (2,), mx.int32)
    with pytest.raises(TypeError, match="key: seed must be a Python int"):
        random.key(1.5)
    with pytest.raises(RuntimeError, match="global random state"):
        ft.jit(lambda x: x + mx.random.normal((2,)))(mx.zeros(2))


def test_statistics():
    x = np.array(random.normal(random.key(11), (N,)), np.float64)
    assert abs(x.mean()) < 6 / np.sqrt(N)
    assert abs(x.std() - 1.0) < 6 * np.sqrt(0.5 / N)
    u = np.array(random.uniform(random.key(12), (N,)), np.float64)
    assert abs(u.mean() - 0.5) < 6 * np.sqrt(1 / 12 / N)
    assert u.min() >= 0.0 and u.max() < 1.0
    # Split keys draw independent streams: their correlation is near zero.
    k1, k2 = random.split(random.key(13))
    a = np.array(random.normal(k1, (N,)), np.float64)
    b = np.array(random.normal(k2, (N,)), np.float64)
    assert abs(np.corrcoef(a, b)[0, 1]) < 6 / np.sqrt(N)
    e = np.array(random.exponential(random.key(14), (N,)), np.float64)
    assert abs(e.mean() - 1.0) < 6 / np.sqrt(N)
    bern = np.array(random.bernoulli(random.key(15), 0.3, (N,)), np.float64)
    assert abs(bern.mean() - 0.3) < 6 * np.sqrt(0.21 / N)


def test_threefry_known_answers():
    # Random123's known-answer vectors for Threefry-2x32, 20 rounds.
    from ftorch.primitives.sampling import _threefry2x32

    for k, c, expected in [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
                           ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
                           ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3),
                            (0xC4923A9C, 0x483DF7A0))]:
        x0, x1 = _threefry2x32(mx.array(k, mx.uint32), mx.array([c[0]], mx.uint32),
                               mx.array([c[1]], mx.uint32))
        assert (x0.item(), x1.item()) == expected


def test_bits():
    for seed in (0, 3):
        k = random.key(seed)
        # MLX's keys come from the same words: split(k, n) is bits(k, (n, 2)).
        same(random.bits(k, (5, 2)), mx.random.split(k, 5))
        # MLX's Python API has no bits; its permutation argsorts bits(k, (n,)),
        # which checks odd word counts (their last counter pair is padded).
        for n in (1, 5, 8, 101):
            same(mx.argsort(random.bits(k, (n,))), mx.random.permutation(n, key=k))
    # jax.random.bits(jax.random.PRNGKey(3), (5,), dtype) with
    # jax_threefry_partitionable=False (JAX's original scheme, which MLX's is).
    k3 = random.key(3)
    assert random.bits(k3, (5,), mx.uint8).tolist() == [75, 52, 5, 116, 142]
    assert random.bits(k3, (5,), mx.uint16).tolist() == [52786, 15632, 46739, 1376, 49900]
    assert random.bits(k3, (5,)).tolist() == [877192987, 1614509672, 4140764773, 3448417067,
                                              2823528474]
    assert random.bits(k3, (3,), mx.uint64).tolist() == [
        3767515194893970219, 6934266243139215386, 8375732073827706173]
    keys = random.split(KEY, 4)
    for dtype in (mx.uint8, mx.uint16, mx.uint32, mx.uint64):
        b = random.bits(KEY, (3, 5), dtype)
        assert b.dtype == dtype and b.shape == (3, 5)
        jitted = ft.jit(lambda k, d=dtype: random.bits(k, (3, 5), d))
        same(jitted(KEY), b)
        same(jitted(keys[0]), random.bits(keys[0], (3, 5), dtype))  # never frozen
        assert jitted.trace_count == 1
        same(ft.vmap(lambda k, d=dtype: random.bits(k, (3,), d))(keys),
             mx.stack([random.bits(keys[i], (3,), dtype) for i in range(4)]))
    assert random.bits(KEY, (0, 3)).shape == (0, 3)
    with pytest.raises(TypeError, match="bits: dtype must be one of"):
        random.bits(KEY, (2,), mx.int32)


def test_fold_in():
    # jax.random.fold_in(jax.random.PRNGKey(seed), data) for these three.
    assert random.fold_in(random.key(7), 5).tolist() == [3583082021, 1947592014]
    assert random.fold_in(random.key(0), 2 ** 32 - 1).tolist() == [743310391, 3789761811]
    assert random.fold_in(random.key(123456789), 12345).tolist() == [3531931345, 823798900]
    folded = [random.fold_in(KEY, i) for i in range(6)]
    assert len({tuple(f.tolist()) for f in folded}) == 6
    # Traced data: vmap over indices, eager and jitted, equals the loop.
    same(ft.vmap(lambda i: random.fold_in(KEY, i))(mx.arange(6)), mx.stack(folded))
    jitted = ft.jit(ft.vmap(lambda i: random.fold_in(KEY, i)))
    same(jitted(mx.arange(6)), mx.stack(folded))
    same(jitted(mx.arange(2, 8)), mx.stack(folded[2:] + [random.fold_in(KEY, i)
                                                         for i in (6, 7)]))
    assert jitted.trace_count == 1
    same(ft.jit(random.fold_in)(KEY, mx.array(4)), folded[4])
    # Batched keys, batched keys and data, and nested vmap.
    keys = random.split(KEY, 3)
    same(ft.vmap(lambda k: random.fold_in(k, 2))(keys),
         mx.stack([random.fold_in(keys[i], 2) for i in range(3)]))
    same(ft.vmap(random.fold_in)(keys, mx.array([4, 5, 6])),
         mx.stack([random.fold_in(keys[i], 4 + i) for i in range(3)]))
    grid = ft.vmap(lambda k: ft.vmap(lambda i: random.fold_in(k, i))(mx.arange(2)))(keys)
    same(grid, mx.stack([mx.stack([random.fold_in(keys[i], j) for j in range(2)])
                         for i in range(3)]))
    # Data counts modulo 2**32, whatever its integer dtype.
    same(random.fold_in(KEY, -1), random.fold_in(KEY, mx.array(2 ** 32 - 1, mx.uint32)))
    same(random.fold_in(KEY, mx.array(-1, mx.int32)), random.fold_in(KEY, -1))
    with pytest.raises(TypeError, match="fold_in: data must be an int"):
        random.fold_in(KEY, 1.5)
    with pytest.raises(TypeError, match="fold_in: data must be an integer scalar"):
        random.fold_in(KEY, mx.arange(2))
    with pytest.raises(TypeError, match="fold_in: data must be an integer scalar"):
        random.fold_in(KEY, mx.array(1.0))
    with pytest.raises(TypeError, match="fold_in: key must be a uint32 array"):
        random.fold_in(mx.zeros(2), 1)


def test_new_samplers_jit_and_vmap_over_keys():
    keys = random.split(KEY, 4)
    draws = [
        lambda k: random.permutation(k, 7),
        lambda k: random.permutation(k, mx.arange(12.0).reshape(3, 4), axis=1, independent=True),
        lambda k: random.permutation(k, mx.arange(12.0).reshape(3, 4), axis=-1),
        lambda k: random.choice(k, 9, (3,), replace=False),
        lambda k: random.choice(k, mx.arange(10.0).reshape(2, 5), (3,), axis=1),
        lambda k: random.choice(k, mx.arange(5.0), (4,), p=mx.array([0.1, 0.2, 0.3, 0.2, 0.2])),
        lambda k: random.choice(k, 6, (2,), replace=False, p=mx.array([0.3, 0.1, 0.1, 0.2,
                                                                       0.2, 0.1])),
        lambda k: random.multivariate_normal(k, mx.zeros(2), mx.array([[2.0, 0.3], [0.3, 1.0]]),
                                             (3,)),
        lambda k: random.multivariate_normal(k, MEAN, COV, (2,), method="eigh"),
        lambda k: random.bits(k, (4,)),
        lambda k: random.fold_in(k, 3),
    ]
    for draw in draws:
        loop = mx.stack([draw(keys[i]) for i in range(4)])
        same(ft.vmap(draw)(keys), loop)
        same(ft.jit(ft.vmap(draw))(keys), loop)
        jitted = ft.jit(draw)
        same(jitted(keys[1]), draw(keys[1]))
        same(jitted(keys[2]), draw(keys[2]))  # follows the key, never frozen
        assert not mx.array_equal(draw(keys[1]), draw(keys[2])).item()
        assert jitted.trace_count == 1


def _chi_square_bound(dof):
    """The chi-square quantile six standard normal deviations out (upper tail
    about 1e-9), by Wilson and Hilferty's cube-root approximation."""
    c = 2 / (9 * dof)
    return dof * (1 - c + 6 * np.sqrt(c)) ** 3


def test_permutation_statistics():
    # Where each element lands over 6,000 permutations of 6 (one draw per
    # key, vmapped): each of the 36 counts is 1,000 +- 6 standard deviations
    # (sqrt(6000 * 1/6 * 5/6) = 28.9), and the table's chi-square statistic
    # (25 degrees of freedom) is below its 1e-9 quantile.
    perms = np.array(ft.vmap(lambda k: random.permutation(k, 6))(random.split(random.key(21),
                                                                              6000)))
    assert (np.sort(perms, axis=1) == np.arange(6)).all()

    def check(perms):
        counts = np.stack([np.bincount(np.argmax(perms == e, axis=1), minlength=6)
                           for e in range(6)])
        assert np.all(np.abs(counts - 1000) < 6 * 28.9), counts
        assert ((counts - 1000) ** 2 / 1000).sum() < _chi_square_bound(25)

    check(perms)
    # The same with one draw: 6,000 rows shuffled independently.
    rows = np.array(random.permutation(random.key(26), mx.broadcast_to(mx.arange(6), (6000, 6)),
                                       axis=1, independent=True))
    assert (np.sort(rows, axis=1) == np.arange(6)).all()
    check(rows)
    # Shuffling an array moves whole slices; int and array give the same order.
    x = mx.arange(12.0).reshape(4, 3)
    order = random.permutation(KEY, 4)
    same(random.permutation(KEY, x), x[order])
    assert random.permutation(KEY, 0).shape == (0,)


def test_choice_statistics():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    for key, kwargs, probs in [(random.key(22), {}, np.full(4, 0.25)),
                               (random.key(27), {"p": mx.array(p, mx.float32)}, p)]:
        draws = np.array(random.choice(key, 4, (N,), **kwargs))
        freq = np.bincount(draws, minlength=4) / N
        assert np.all(np.abs(freq - probs) < 6 * np.sqrt(probs * (1 - probs) / N)), freq
    # Without replacement, with p: an ordered pair (i, j) has probability
    # p_i p_j / (1 - p_i), as when drawing one at a time (5,000 draws).
    pairs = np.array(ft.vmap(lambda k: random.choice(k, 4, (2,), replace=False,
                                                     p=mx.array(p, mx.float32)))(
        random.split(random.key(23), 5000)))
    assert (pairs[:, 0] != pairs[:, 1]).all()
    expected = p[:, None] * p[None, :] / (1 - p[:, None])
    np.fill_diagonal(expected, 0.0)
    freq = np.zeros((4, 4))
    np.add.at(freq, (pairs[:, 0], pairs[:, 1]), 1 / 5000)
    assert np.all(np.abs(freq - expected) < 6 * np.sqrt(expected * (1 - expected) / 5000) + 1e-12)
    # Without replacement and without p: distinct elements, every one of them
    # when the whole population is drawn.
    picks = np.array(ft.vmap(lambda k: random.choice(k, 10, (4,), replace=False))(
        random.split(random.key(28), 100)))
    assert all(len(set(row)) == 4 for row in picks.tolist())
    rows = np.array(random.choice(random.key(24), mx.arange(10.0), (10,), replace=False))
    assert sorted(rows.tolist()) == list(range(10))
    # An array is sampled along axis: the output replaces that axis by shape.
    a = mx.arange(10.0).reshape(2, 5)
    assert random.choice(KEY, a, (3, 4), axis=1).shape == (2, 3, 4)
    assert random.choice(KEY, 5).shape == ()
    with pytest.raises(ValueError, match="without replacement"):
        random.choice(KEY, 3, (4,), replace=False)
    with pytest.raises(ValueError, match=r"p must have shape \(3,\)"):
        random.choice(KEY, 3, (2,), p=mx.array([0.5, 0.5]))
    with pytest.raises(TypeError, match="choice: a must be an int or an array"):
        random.choice(KEY, [1, 2, 3])
    with pytest.raises(ValueError, match="choice: axis 1 is out of range"):
        random.choice(KEY, mx.arange(3), axis=1)
    with pytest.raises(ValueError, match="choice: cannot draw from an empty population"):
        random.choice(KEY, 0, (2,))


def test_permutation_errors():
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        random.permutation(KEY, mx.zeros((2, 2)), axis=2)
    with pytest.raises(ValueError, match="permutation: x must be a non-negative int"):
        random.permutation(KEY, -1)
    with pytest.raises(TypeError, match="permutation: x must be an int or an array"):
        random.permutation(KEY, 2.5)
    with pytest.raises(ValueError, match="permutation: x must have at least one dimension"):
        random.permutation(KEY, mx.array(1.0))


def test_permutation_is_differentiable_in_x():
    x = mx.array([1.0, 2.0, 3.0, 4.0])
    w = mx.array([1.0, 10.0, 100.0, 1000.0])
    order = random.permutation(KEY, 4)
    g = ft.grad(lambda x: fnp.sum(random.permutation(KEY, x) * w))(x)
    # d/dx[order[i]] of sum(x[order] * w) is w[i].
    same(g[order], w)
    # Independently along axis 1: out[i, j] = x[i, order[i, j]].
    x2, w2 = mx.ones((2, 4)), mx.stack([w, -w])
    order = np.array(random.permutation(KEY, mx.broadcast_to(mx.arange(4), (2, 4)), axis=1,
                                        independent=True))
    g = ft.grad(lambda x: fnp.sum(random.permutation(KEY, x, axis=1, independent=True) * w2))(x2)
    assert (np.take_along_axis(np.array(g), order, axis=1) == np.array(w2)).all()


def test_multivariate_normal():
    cov = np.array(COV, np.float64)
    for key, method in [(random.key(25), "cholesky"), (random.key(29), "eigh"),
                        (random.key(30), "svd")]:
        x = np.array(random.multivariate_normal(key, MEAN, COV, (N,), method=method), np.float64)
        assert np.all(np.abs(x.mean(0) - np.array(MEAN)) < 6 * np.sqrt(np.diag(cov) / N))
        # The sample covariance's entries have standard error below sqrt(2 * 2 * 2 / N).
        assert np.all(np.abs(np.cov(x.T) - cov) < 6 * np.sqrt(8 / N)), method
    # Batch shapes: the default shape broadcasts mean's and cov's batch axes.
    means, covs = mx.zeros((4, 1, 3)), mx.broadcast_to(COV, (5, 3, 3))
    assert random.multivariate_normal(KEY, means, covs).shape == (4, 5, 3)
    assert random.multivariate_normal(KEY, means, covs, (2, 4, 5)).shape == (2, 4, 5, 3)
    # Each batch member uses its own covariance.
    two = mx.stack([COV, 4.0 * COV])
    x = np.array(random.multivariate_normal(KEY, MEAN, two, (N // 10, 2)), np.float64)
    assert abs(x[:, 1, 0].std() / x[:, 0, 0].std() - 2.0) < 0.1
    # Differentiable in mean (eager, jitted, vmapped); not in cov, loudly.
    g = ft.grad(lambda m: fnp.sum(random.multivariate_normal(KEY, m, mx.eye(3))))(mx.zeros(3))
    same(g, mx.ones(3))
    g = ft.jit(ft.grad(lambda m: fnp.sum(random.multivariate_normal(KEY, m, COV, (4,)))))(MEAN)
    same(g, mx.full((3,), 4.0))
    g = ft.vmap(ft.grad(lambda m: fnp.sum(random.multivariate_normal(KEY, m, COV))))(means[:, 0])
    same(g, mx.ones((4, 3)))
    # In cov: through the Cholesky factor (the default method), against a
    # central difference along a symmetric direction (the other methods: below).
    def draw(c):
        return random.multivariate_normal(KEY, MEAN, c, (6,))

    direction = mx.array([[0.2, 0.1, 0.0], [0.1, -0.1, 0.05], [0.0, 0.05, 0.3]])
    _, tangent = ft.jvp(draw, (COV,), (direction,))
    eps = 1e-2
    fd = (draw(COV + eps * direction) - draw(COV - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.array(tangent), np.array(fd), rtol=2e-2, atol=2e-3)
    g = ft.jit(ft.grad(lambda c: fnp.sum(draw(c) ** 2)))(COV)
    eps_dir = fnp.sum(g * direction).item()
    fd_dir = ((fnp.sum(draw(COV + eps * direction) ** 2) - fnp.sum(draw(COV - eps * direction)
                                                                    ** 2)) / (2 * eps)).item()
    assert eps_dir == pytest.approx(fd_dir, rel=2e-2, abs=1e-3)
    with pytest.raises(ValueError, match=r"mean must be \(..., n\) and cov \(..., n, n\)"):
        random.multivariate_normal(KEY, mx.zeros(3), mx.eye(2))
    with pytest.raises(ValueError, match=r"shape \(7,\) must be a broadcast of the batch"):
        random.multivariate_normal(KEY, means, covs, (7,))
    with pytest.raises(ValueError, match=r"shape \(4, 1\) must be a broadcast of the batch"):
        random.multivariate_normal(KEY, means, covs, (4, 1))
    with pytest.raises(ValueError, match="batch shapes of mean .* do not broadcast"):
        random.multivariate_normal(KEY, mx.zeros((2, 3)), mx.broadcast_to(COV, (3, 3, 3)))
    with pytest.raises(ValueError, match="method must be one of cholesky, eigh, svd"):
        random.multivariate_normal(KEY, MEAN, COV, method="qr")
    with pytest.raises(TypeError, match="multivariate_normal: dtype must be a floating dtype"):
        random.multivariate_normal(KEY, MEAN, COV, dtype=mx.int32)


@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16])
def test_low_precision_samplers_keep_their_dtype_with_python_bounds(dtype):
    k = random.key(3)
    draws = [random.uniform(k, (4,), dtype, 0.5, 2.0), random.normal(k, (4,), dtype, 1.0, 2.0),
             random.gumbel(k, (4,), dtype, 1.0, 2.0),
             random.truncated_normal(k, -1.0, 1.0, (4,), dtype), random.exponential(k, (4,), dtype)]
    assert [x.dtype for x in draws] == [dtype] * len(draws)
    want = mx.random.uniform(0.5, 2.0, (4,), dtype, key=k)
    np.testing.assert_allclose(np.array(draws[0].astype(mx.float32)),
                               np.array(want.astype(mx.float32)), rtol=1e-2)


def test_multivariate_normal_keeps_float64_and_differentiates_cov_with_every_method():
    x = np.linspace(0.0, 4.0, 40)
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / 0.8 ** 2) + 1e-8 * np.eye(40)
    cov = mx.array(k, dtype=mx.float64)
    draw = random.multivariate_normal(random.key(0), mx.zeros(40, mx.float64), cov,
                                      dtype=mx.float64)
    assert draw.dtype == mx.float64 and bool(mx.all(mx.isfinite(draw)))
    m = mx.array([[1.0, 0.2, 0.0], [0.3, 1.5, 0.1], [0.0, -0.4, 0.8]], dtype=mx.float64)
    for method in ("cholesky", "eigh", "svd"):
        ft.test_util.check_grads(
            lambda m, method=method: random.multivariate_normal(
                random.key(1), mx.zeros(3, mx.float64), m @ m.T, (4,), dtype=mx.float64,
                method=method), (m,), order=1)


def test_float64_samplers():
    u = np.array(random.uniform(KEY, (20000,), dtype=mx.float64))
    assert u.dtype == np.float64 and u.min() >= 0.0 and u.max() < 1.0
    assert len(np.unique(u)) == u.size and abs(u.mean() - 0.5) < 0.01
    g = np.array(random.gumbel(KEY, (20000,), dtype=mx.float64))
    assert np.all(np.isfinite(g)) and abs(g.mean() - np.euler_gamma) < 0.05
    e = random.exponential(KEY, (3,), dtype=mx.float64)
    assert e.dtype == mx.float64
    keys = random.split(KEY, 3)
    same(ft.vmap(lambda k: random.uniform(k, (2,), dtype=mx.float64))(keys),
         mx.stack([random.uniform(k, (2,), dtype=mx.float64) for k in keys]))
    with pytest.raises(TypeError, match="truncated_normal: MLX's sampler has no float64"):
        random.truncated_normal(KEY, -1.0, 1.0, (2,), dtype=mx.float64)


# Every sampler with small valid arguments, as a function of the key.
SAMPLERS = {
    "split": lambda k: random.split(k, 3),
    "uniform": lambda k: random.uniform(k, (3,)),
    "normal": lambda k: random.normal(k, (3,)),
    "gumbel": lambda k: random.gumbel(k, (3,)),
    "exponential": lambda k: random.exponential(k, (3,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.5, (3,)),
    "randint": lambda k: random.randint(k, (3,), 0, 5),
    "categorical": lambda k: random.categorical(k, mx.zeros(4), shape=(3,)),
    "truncated_normal": lambda k: random.truncated_normal(k, -1.0, 1.0, (3,)),
    "fold_in": lambda k: random.fold_in(k, 3),
    "bits": lambda k: random.bits(k, (3,)),
    "permutation": lambda k: random.permutation(k, 5),
    "choice": lambda k: random.choice(k, 5, (3,)),
    "multivariate_normal": lambda k: random.multivariate_normal(k, MEAN, COV),
}


def test_samplers_beyond_memory_raise_memory_error():
    # Each case: the sampler the message must name, and the draw. MLX would
    # crash allocating any of them; the vmap cases fit one example at a time.
    out = run_child("""
        import ftorch.random as random
        K = random.key(0)
        BIG = (10**6, 10**6)
        draws = [
            ("split", lambda: random.split(K, 10**12)),
            ("uniform", lambda: random.uniform(K, BIG)),
            ("uniform", lambda: random.uniform(K, BIG, mx.float64)),
            ("normal", lambda: random.normal(K, BIG, loc=1.0)),
            ("gumbel", lambda: random.gumbel(K, BIG)),
            ("gumbel", lambda: random.gumbel(K, BIG, mx.float64)),
            ("exponential", lambda: random.exponential(K, BIG)),
            ("bernoulli", lambda: random.bernoulli(K, 0.5, BIG)),
            ("randint", lambda: random.randint(K, BIG, 0, 3)),
            ("categorical", lambda: random.categorical(K, mx.zeros(3), shape=BIG)),
            ("categorical", lambda: random.categorical(K, mx.zeros(10**6), shape=(10**6,))),
            ("truncated_normal", lambda: random.truncated_normal(K, -1.0, 1.0, BIG)),
            ("bits", lambda: random.bits(K, BIG, mx.uint64)),
            ("permutation", lambda: random.permutation(K, 10**12)),
            # (A broadcast view of 1 byte: only the permutation would allocate.)
            ("permutation", lambda: random.permutation(
                K, mx.broadcast_to(mx.zeros((1, 1), mx.int8), (10**6, 10**5)), axis=1,
                independent=True)),
            ("choice", lambda: random.choice(K, 5, BIG)),
            ("choice", lambda: random.choice(K, mx.zeros((3, 10**6)), (10**6,))),
            ("choice", lambda: random.choice(K, 10**12, (2,), replace=False)),
            ("multivariate_normal",
             lambda: random.multivariate_normal(K, mx.zeros(2), mx.eye(2), BIG)),
            ("normal", lambda: ft.jit(lambda k: random.normal(k, BIG))(K)),
            ("bits (under ft.vmap)",
             lambda: ft.vmap(lambda k: random.bits(k, (10**7,)))(random.split(K, 10**6))),
            ("normal", lambda: ft.vmap(lambda k: random.normal(k, (10**9,)))(
                random.split(K, 1000))),
        ]
        for name, draw in draws:
            try:
                mx.eval(draw())
                print("no error:", name)
            except MemoryError as e:
                print("ok" if str(e).startswith(name) else f"wrong message: {e}")
    """)
    assert out.split() == ["ok"] * 22, out


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("bad, message", [
    (mx.zeros(2), "key must be a uint32 array of shape (2,) (ftorch.random.key(seed) or "
                  "mx.random.key(seed)), got f32[2]"),
    (mx.zeros(3, mx.uint32), "key must be a uint32 array of shape (2,)"),
    (mx.zeros(2, mx.int32), "key must be a uint32 array of shape (2,) (ftorch.random.key(seed) "
                            "or mx.random.key(seed)), got i32[2]; cast raw key data with "
                            ".astype(mx.uint32)"),
    (random.split(KEY, 4), "key must be a single key, of shape (2,), but got a batch of keys "
                           "u32[4,2]; to draw with each key, map over them as in JAX: ft.vmap("),
    (0, "key must be a key array (ftorch.random.key(seed)), got int: 0; pass the key "
        "random.key(0), not the seed"),
    (None, "key must be a key array (ftorch.random.key(seed)), got NoneType"),
], ids=["float", "wrong-shape", "int32", "batch", "seed", "none"])
def test_bad_keys_name_the_sampler(name, bad, message):
    draw = SAMPLERS[name]
    with pytest.raises(TypeError, match=re.escape(f"{name}: {message}")):
        draw(bad)
    if isinstance(bad, mx.array):  # and the same when the key is traced
        with pytest.raises(TypeError, match=re.escape(f"{name}: {message}")):
            ft.jit(draw)(bad)


@pytest.mark.parametrize("name", SAMPLERS)
def test_numpy_keys_draw_what_mlx_keys_draw(name):
    k = random.key(5)
    same(SAMPLERS[name](np.array(k)), SAMPLERS[name](k))


def test_seeds_are_64_bit_integers_as_in_jax():
    # A negative seed is its two's complement int64, split into (high, low)
    # uint32 words as JAX's threefry seeds 64-bit integers.
    for seed, words in [(-1, [2**32 - 1, 2**32 - 1]), (-2, [2**32 - 1, 2**32 - 2]),
                        (-2**63, [2**31, 0]), (-2**32, [2**32 - 1, 0]),
                        (2**63 - 1, [2**31 - 1, 2**32 - 1]), (2**32 + 5, [1, 5])]:
        assert random.key(seed).tolist() == words, seed
        assert random.PRNGKey(seed).tolist() == words, seed
    same(random.key(-1), random.key(2**64 - 1))
    same(random.key(np.int64(-7)), random.key(-7))
    same(random.normal(random.key(-3), (4,)), mx.random.normal((4,), key=random.key(2**64 - 3)))
    for seed in (2**64, -2**63 - 1, 10**30):
        with pytest.raises(OverflowError, match=re.escape(
                "key: seed must fit in 64 bits (-2**63 <= seed < 2**64)")):
            random.key(seed)
    with pytest.raises(TypeError, match="key: seed must be a Python int"):
        random.key(True)


def _shape_error(name, shape, param, param_shape):
    return re.escape(f"{name}: shape argument {shape} must be broadcast-compatible with the shape "
                     f"{param_shape} of {param}")


@pytest.mark.parametrize("name, draw, shape, param, param_shape, fix", [
    ("normal", lambda: random.normal(KEY, (3,), loc=mx.zeros(4)), (3,), "loc", (4,),
     "such as shape=(4,)"),
    ("normal", lambda: random.normal(KEY, (3,), scale=mx.ones((2, 3))), (3,), "scale", (2, 3),
     "pass shape=(2, 3)"),
    ("normal", lambda: random.normal(KEY, loc=mx.zeros(3)), (), "loc", (3,), "pass shape=(3,)"),
    ("uniform", lambda: random.uniform(KEY, (3,), minval=mx.zeros(4)), (3,), "minval", (4,),
     "such as shape=(4,)"),
    ("uniform", lambda: random.uniform(KEY, (2, 1), maxval=np.ones(3)), (2, 1), "maxval", (3,),
     "pass shape=(2, 3)"),
    ("uniform", lambda: random.uniform(KEY, (3,), mx.float64, minval=mx.zeros((2, 3), mx.float64)),
     (3,), "minval", (2, 3), "pass shape=(2, 3)"),
    ("gumbel", lambda: random.gumbel(KEY, (3,), loc=mx.zeros(4)), (3,), "loc", (4,),
     "such as shape=(4,)"),
    ("gumbel", lambda: random.gumbel(KEY, (3,), scale=mx.ones((5, 1))), (3,), "scale", (5, 1),
     "pass shape=(5, 3)"),
    ("bernoulli", lambda: random.bernoulli(KEY, mx.full((4,), 0.5), (3,)), (3,), "p", (4,),
     "such as shape=(4,)"),
    ("bernoulli", lambda: random.bernoulli(KEY, mx.full((2, 3), 0.5), (3,)), (3,), "p", (2, 3),
     "pass shape=(2, 3)"),
    ("categorical", lambda: random.categorical(KEY, mx.zeros((4, 5)), shape=(3,)), (3,),
     "logits (without axis 1)", (4,), "such as shape=(4,)"),
    ("categorical", lambda: random.categorical(KEY, mx.zeros((4, 5)), axis=0, shape=(1,)),
     (1,), "logits (without axis 0)", (5,), "pass shape=(5,)"),
])
def test_shapes_that_do_not_hold_the_parameters_name_both(name, draw, shape, param, param_shape,
                                                           fix):
    with pytest.raises(ValueError, match=_shape_error(name, shape, param, param_shape) + ".*"
                       + re.escape(fix)):
        draw()
    with pytest.raises(ValueError, match=_shape_error(name, shape, param, param_shape)):
        ft.jit(draw)()


def test_shapes_that_hold_the_parameters_broadcast_them():
    assert random.normal(KEY, (2, 3), loc=mx.zeros(3), scale=mx.ones((2, 1))).shape == (2, 3)
    assert random.uniform(KEY, (2, 3), minval=mx.zeros((2, 1)), maxval=2.0).shape == (2, 3)
    assert random.gumbel(KEY, (4, 3), scale=mx.ones(3)).shape == (4, 3)
    assert random.bernoulli(KEY, mx.full((3,), 0.5), (2, 3)).shape == (2, 3)
    assert random.bernoulli(KEY, mx.full((2, 3), 0.5)).shape == (2, 3)
    assert random.categorical(KEY, mx.zeros((4, 5)), shape=(2, 4)).shape == (2, 4)
    assert random.categorical(KEY, mx.zeros((4, 5)), axis=0).shape == (5,)
    # Per example under vmap: the batch axis is not part of the shape argument.
    locs = mx.arange(6.0).reshape(2, 3)
    got = ft.vmap(lambda loc: random.normal(KEY, (3,), loc=loc))(locs)
    same(got, mx.stack([random.normal(KEY, (3,), loc=loc) for loc in locs]))


def test_other_parameter_errors_name_the_sampler():
    with pytest.raises(ValueError, match=re.escape(
            "choice: p must have shape (3,) (one probability per element), got f32[2]")):
        random.choice(KEY, mx.arange(3.0), (2,), p=mx.array([0.5, 0.5]))
    with pytest.raises(ValueError, match=re.escape("choice: p must have shape (4,)")):
        random.choice(KEY, mx.zeros((2, 4)), (2,), p=mx.full((2, 4), 0.125), axis=1)
    with pytest.raises(ValueError, match="categorical: axis 2 is out of range for an array of 2"):
        random.categorical(KEY, mx.zeros((4, 5)), axis=2)
    with pytest.raises(TypeError, match=re.escape(
            "truncated_normal: lower must be a float (arrays of bounds are not supported), got "
            "an array of shape (3,)")):
        random.truncated_normal(KEY, mx.zeros(3), 1.0, (3,))
    with pytest.raises(TypeError, match="exponential: dtype must be a floating dtype"):
        random.exponential(KEY, (2,), mx.int32)
