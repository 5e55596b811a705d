"""ftorch.random: the same numbers as mx.random for the same key, eager,
jitted and vmapped; derivatives through location and scale; errors; and
simple statistical checks with fixed seeds.

The statistical tolerances are six standard errors of the statistic (for
100,000 draws), so a correct sampler fails them with probability about
2e-9 per check; the seeds are fixed, so the tests are deterministic."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.random as random

KEY = random.key(0)
N = 100_000


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
     lambda k: mx.random.categorical(mx.array([0.0, 1.0, 2.0]), shape=(4,), key=k)),
    (lambda k: random.truncated_normal(k, -1.0, 1.0, (5,)),
     lambda k: mx.random.truncated_normal(-1.0, 1.0, (5,), key=k)),
    (lambda k: random.split(k, 3), lambda k: mx.random.split(k, 3)),
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
    from ftorch.random import _threefry2x32

    for k, c, expected in [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
                           ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
                           ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3),
                            (0xC4923A9C, 0x483DF7A0))]:
        x0, x1 = _threefry2x32(mx.array(k, mx.uint32), mx.array([c[0]], mx.uint32),
                               mx.array([c[1]], mx.uint32))
        assert (x0.item(), x1.item()) == expected


def test_bits_and_fold_in():
    # MLX's keys come from the same words: split(k, n) is bits(k, (n, 2)).
    for seed in (0, 3):
        k = random.key(seed)
        same(random.bits(k, (5, 2)), mx.random.split(k, 5))
    for dtype in (mx.uint8, mx.uint16, mx.uint32, mx.uint64):
        b = random.bits(KEY, (3, 5), dtype)
        assert b.dtype == dtype and b.shape == (3, 5)
        same(ft.jit(lambda k, d=dtype: random.bits(k, (3, 5), d))(KEY), b)
    # jax.random.fold_in(jax.random.PRNGKey(7), 5) and (PRNGKey(0), 2**32 - 1).
    assert random.fold_in(random.key(7), 5).tolist() == [3583082021, 1947592014]
    folded = [random.fold_in(KEY, i) for i in range(6)]
    assert len({tuple(f.tolist()) for f in folded}) == 6
    same(ft.vmap(lambda i: random.fold_in(KEY, i))(mx.arange(6)), mx.stack(folded))
    same(ft.jit(random.fold_in)(KEY, mx.array(4)), folded[4])
    same(random.fold_in(KEY, -1), random.fold_in(KEY, mx.array(2 ** 32 - 1, mx.uint32)))
    with pytest.raises(TypeError, match="bits: dtype must be one of"):
        random.bits(KEY, (2,), mx.int32)
    with pytest.raises(TypeError, match="fold_in: data must be an int"):
        random.fold_in(KEY, 1.5)


def test_new_samplers_jit_and_vmap_over_keys():
    keys = random.split(KEY, 4)
    draws = [
        lambda k: random.permutation(k, 7),
        lambda k: random.permutation(k, mx.arange(12.0).reshape(3, 4), axis=1, independent=True),
        lambda k: random.choice(k, 9, (3,), replace=False),
        lambda k: random.choice(k, mx.arange(5.0), (4,), p=mx.array([0.1, 0.2, 0.3, 0.2, 0.2])),
        lambda k: random.choice(k, 6, (2,), replace=False, p=mx.array([0.3, 0.1, 0.1, 0.2,
                                                                       0.2, 0.1])),
        lambda k: random.multivariate_normal(k, mx.zeros(2), mx.array([[2.0, 0.3], [0.3, 1.0]]),
                                             (3,)),
        lambda k: random.bits(k, (4,)),
    ]
    for draw in draws:
        same(ft.vmap(draw)(keys), mx.stack([draw(keys[i]) for i in range(4)]))
        same(ft.jit(draw)(keys[1]), draw(keys[1]))


def test_permutation_and_choice_statistics():
    # Where element 0 lands over 6,000 permutations of 6: each position has
    # count 1,000 +- 6 standard deviations (sqrt(6000 * 1/6 * 5/6) = 28.9).
    perms = np.array(ft.vmap(lambda k: random.permutation(k, 6))(random.split(random.key(21),
                                                                              6000)))
    assert (np.sort(perms, axis=1) == np.arange(6)).all()
    counts = np.bincount(np.argmax(perms == 0, axis=1), minlength=6)
    assert np.all(np.abs(counts - 1000) < 6 * 28.9), counts
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = np.array(random.choice(random.key(22), 4, (N,), p=mx.array(p, mx.float32)))
    freq = np.bincount(draws, minlength=4) / N
    assert np.all(np.abs(freq - p) < 6 * np.sqrt(p * (1 - p) / N)), freq
    # Without replacement, with p: the first pick follows p.
    first = np.array(ft.vmap(lambda k: random.choice(k, 4, (2,), replace=False,
                                                     p=mx.array(p, mx.float32))[0])(
        random.split(random.key(23), 20000)))
    assert np.all(np.abs(np.bincount(first, minlength=4) / 20000 - p)
                  < 6 * np.sqrt(p * (1 - p) / 20000))
    rows = np.array(random.choice(random.key(24), mx.arange(10.0), (10,), replace=False))
    assert sorted(rows.tolist()) == list(range(10))


def test_multivariate_normal():
    cov = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 0.5]])
    x = np.array(random.multivariate_normal(random.key(25), mx.array([1.0, -1.0, 0.0]),
                                            mx.array(cov, mx.float32), (N,)), np.float64)
    assert np.all(np.abs(x.mean(0) - [1.0, -1.0, 0.0]) < 6 * np.sqrt(np.diag(cov) / N))
    # The sample covariance's entries have standard error below sqrt(2 * 2 * 2 / N).
    assert np.all(np.abs(np.cov(x.T) - cov) < 6 * np.sqrt(8 / N))
    g = ft.grad(lambda m: fnp.sum(random.multivariate_normal(KEY, m, mx.eye(3))))(mx.zeros(3))
    same(g, mx.ones(3))
    with pytest.raises(NotImplementedError, match="respect to cov"):
        ft.grad(lambda c: fnp.sum(random.multivariate_normal(KEY, mx.zeros(3), c)))(mx.eye(3))
    with pytest.raises(ValueError, match=r"mean must be \(..., n\) and cov \(..., n, n\)"):
        random.multivariate_normal(KEY, mx.zeros(3), mx.eye(2))
    with pytest.raises(ValueError, match="without replacement"):
        random.choice(KEY, 3, (4,), replace=False)
    with pytest.raises(ValueError, match=r"p must have shape \(3,\)"):
        random.choice(KEY, 3, (2,), p=mx.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        random.permutation(KEY, mx.zeros((2, 2)), axis=2)
