"""The random samplers as primitives, for ``ftorch.random``: each draws
with MLX's samplers (or Threefry on MLX arrays) from a key operand, is not
differentiable (reparameterised samplers scale its output with other
primitives), and batches by drawing example by example, which is what a
loop over the examples' keys draws, except the Threefry draws, which are
elementwise in the key and batch in one draw.

>>> import ftorch.primitives.sampling as sampling, mlx.core as mx
>>> sampling.normal_p.bind(mx.random.key(0), shape=(2,), dtype=mx.float32).shape
(2,)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.memory import check_fits
from ftorch.primitives._rules import move_bdim, nondifferentiable
from ftorch.primitives.special import lgamma_p

__all__ = [
    "split_p",
    "uniform_p",
    "normal_p",
    "gumbel_p",
    "bernoulli_p",
    "randint_p",
    "categorical_p",
    "truncated_normal_p",
    "bits_p",
    "fold_in_p",
    "permutation_p",
    "weighted_sample_p",
    "random_gamma_p",
    "random_poisson_p",
    "random_binomial_p",
]


def _sampler(name: str, draw: Callable) -> Primitive:
    """A primitive drawing ``draw(key, *operands, **params)``: not
    differentiable (reparameterised samplers scale its output with ftorch
    ops), batched by drawing example by example, which is what a loop over
    the examples' keys (or parameters) draws."""
    prim = Primitive(f"random_{name}", draw)
    nondifferentiable(prim)

    @prim.def_batch
    def batch(vals, dims, axis_size, **params):
        vals = [v if d is None else move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]
        def example(v, d, i):
            return v if d is None else lax.squeeze(lax.static_slice(v, (slice(i, i + 1),)), (0,))

        draws = [prim.bind(*[example(v, d, i) for v, d in zip(vals, dims)], **params)
                 for i in range(axis_size)]
        if draws:  # each draw is lazy: the batch they stack into is what allocates
            example = aval_of(draws[0])
            _check_batch_fits(prim, (axis_size, *example.shape), example.dtype)
        return lax.concatenate([lax.expand_dims(x, (0,)) for x in draws], 0), 0

    return prim


def _check_batch_fits(prim: Primitive, shape: Sequence[int], dtype: mx.Dtype) -> None:
    # The sampler checked one example's shape; a vmap batch multiplies it.
    check_fits(shape, dtype, f"{prim.name.removeprefix('random_')} (under ft.vmap)")


split_p = _sampler("split", lambda k, num: mx.random.split(k, num))
uniform_p = _sampler("uniform", lambda k, shape, dtype: mx.random.uniform(
    shape=shape, dtype=dtype, key=k))
normal_p = _sampler("normal", lambda k, shape, dtype: mx.random.normal(shape, dtype, key=k))
gumbel_p = _sampler("gumbel", lambda k, shape, dtype: mx.random.gumbel(shape, dtype, key=k))
bernoulli_p = _sampler("bernoulli", lambda k, p, shape: mx.random.bernoulli(p, shape, key=k))
randint_p = _sampler("randint", lambda k, low, high, shape, dtype: mx.random.randint(
    low, high, shape, dtype, key=k))
categorical_p = _sampler("categorical", lambda k, logits, axis, shape: mx.random.categorical(
    logits, axis, shape, key=k))
truncated_normal_p = _sampler(
    "truncated_normal", lambda k, lower, upper, shape, dtype: mx.random.truncated_normal(
        lower, upper, shape, dtype, key=k))


# Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as
# easy as 1, 2, 3", 2011), the block cipher behind MLX's and JAX's keys.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry2x32(key: mx.array, x0: mx.array, x1: mx.array) -> tuple[mx.array, mx.array]:
    """The cipher of the counter pairs ``(x0, x1)`` (uint32, broadcasting)
    under ``key`` (shape ``(..., 2)``, broadcasting against the counters'
    shape)."""
    def u32(v):
        return mx.array(v, mx.uint32)

    def rotate_left(x, r):
        return (x << u32(r)) | (x >> u32(32 - r))

    k0, k1 = key[..., 0], key[..., 1]
    ks = (k0, k1, k0 ^ k1 ^ u32(0x1BD11BDA))
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for j in range(1, 6):
        for r in _ROTATIONS[(j - 1) % 2]:
            x0 = x0 + x1
            x1 = rotate_left(x1, r) ^ x0
        x0, x1 = x0 + ks[j % 3], x1 + ks[(j + 1) % 3] + u32(j)
    return x0, x1


def _bits32(key: mx.array, n: int) -> mx.array:
    """``n`` random 32-bit words per key (``key`` of shape ``(..., 2)``),
    MLX's (and JAX's original, unpartitioned) scheme: the cipher on the
    counters 0..n-1 split in two halves, an odd count padded with a counter
    0 (``mx.random.split(key, m)`` is ``_bits32(key, 2 * m)``)."""
    counters = mx.arange(n + n % 2, dtype=mx.uint32) % max(n, 1)
    half = counters.size // 2
    x0, x1 = _threefry2x32(key[..., None, :], counters[:half], counters[half:])
    return mx.concatenate([x0, x1], axis=-1)[..., :n]


def _draw_bits(k, shape, dtype):
    # A key of shape (..., 2) draws shape (...) + shape: a batch of keys
    # draws in one go what each key draws alone.
    size, lead = math.prod(shape), tuple(k.shape[:-1])
    if dtype == mx.uint64:
        # As JAX: the first half of the words are the high halves.
        words = _bits32(k, 2 * size).astype(mx.uint64)
        return ((words[..., :size] << 32) | words[..., size:]).reshape(lead + shape)
    words = _bits32(k, -(-size * dtype.size // 4))
    return words.view(dtype)[..., :size].reshape(lead + shape)


def _draw_fold_in(k, data):
    # JAX's fold_in: the key's cipher of the counter pair (0, data). Keys of
    # shape (..., 2) with data of shape (...) fold elementwise.
    data = data.astype(mx.uint32)
    x0, x1 = _threefry2x32(k, mx.zeros(data.shape, mx.uint32), data)
    return mx.stack([x0, x1], axis=-1)


def _draw_permutation(k, shape, axis):
    # 64-bit sort keys: ties, which would keep the original order, have
    # probability about n**2 / 2**65. The axis counts from the end, past
    # the leading axes of a batch of keys.
    order = mx.argsort(_draw_bits(k, shape, mx.uint64), axis=axis - len(shape))
    return order.astype(mx.int32)


bits_p = _sampler("bits", _draw_bits)
fold_in_p = _sampler("fold_in", _draw_fold_in)
permutation_p = _sampler("permutation", _draw_permutation)


def _batch_in_one_draw(vals, dims, axis_size, prim, **params):
    # These draws are Threefry on MLX arrays, elementwise in the keys, so a
    # batch draws at once rather than looping over examples (vmap over many
    # keys or indices is the common use); every operand gets the batch axis
    # first, which keeps the key's leading axes equal to data's axes.
    vals = [move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    out = prim.bind(*vals, **params)
    _check_batch_fits(prim, aval_of(out).shape, aval_of(out).dtype)
    return out, 0


for _prim in (bits_p, fold_in_p, permutation_p):
    _prim.def_batch(functools.partial(_batch_in_one_draw, prim=_prim))
del _prim

weighted_sample_p = _sampler("weighted_sample", lambda k, logits, size: mx.argsort(
    -(mx.random.gumbel(logits.shape, logits.dtype, key=k) + logits))[:size].astype(mx.int32))


# Marsaglia and Tsang's gamma sampler ("A simple method for generating gamma
# variables", 2000) accepts a proposal with probability above 0.95 for shapes
# >= 1 (smaller shapes are boosted to a + 1), so this many vectorised rounds
# leave an element without an accepted proposal with probability below
# 0.05**16 ~ 1e-21: the bounded stand-in for the algorithm's loop.
_GAMMA_ROUNDS = 16
_FLOAT32_TINY = 2.0 ** -126


def _draw_log_gamma(k: mx.array, a: mx.array, shape: tuple[int, ...], dtype: mx.Dtype,
                    log_space: bool) -> mx.array:
    """Gamma(a) samples (``a`` of the sample shape), or their logarithms
    with ``log_space`` (exact for tiny ``a``, whose samples underflow)."""
    work = mx.float32 if dtype in (mx.float16, mx.bfloat16) else dtype
    draw_dtype = mx.float32  # MLX's normal and uniform samplers have no float64
    a = mx.broadcast_to(a.astype(work), shape)
    boosted = mx.where(a < 1, a + 1, a)
    d = boosted - 1.0 / 3.0
    c = 1.0 / mx.sqrt(9.0 * d)
    normal_key, uniform_key, boost_key = mx.random.split(k, 3)
    z = mx.random.normal((_GAMMA_ROUNDS, *shape), draw_dtype, key=normal_key).astype(work)
    u = mx.random.uniform(shape=(_GAMMA_ROUNDS, *shape), dtype=draw_dtype,
                          key=uniform_key).astype(work)
    v = (1.0 + c * z) ** 3
    safe_v = mx.where(v > 0, v, 1.0)
    accept = (v > 0) & (mx.log(u) < 0.5 * z * z + d - d * safe_v + d * mx.log(safe_v))
    # The first accepted round of each element (the last round if none was).
    first = mx.argmax(mx.concatenate([accept, mx.ones((1, *shape), mx.bool_)]), axis=0)
    first = mx.minimum(first, _GAMMA_ROUNDS - 1)
    log_v = mx.take_along_axis(mx.log(safe_v), first[None], axis=0)[0]
    log_sample = mx.log(d) + log_v
    # Boosting: Gamma(a) = Gamma(a + 1) * U^(1/a).
    boost_u = mx.random.uniform(shape=shape, dtype=draw_dtype, key=boost_key).astype(work)
    boost_u = mx.maximum(boost_u, _FLOAT32_TINY)  # no log(0)
    log_sample = mx.where(a < 1, log_sample + mx.log(boost_u) / a, log_sample)
    out = log_sample if log_space else mx.exp(log_sample)
    return out.astype(dtype)


random_gamma_p = _sampler("gamma", _draw_log_gamma)


@random_gamma_p.def_jvp
def _random_gamma_jvp(primals, tangents, *, shape, dtype, log_space):
    # Implicit reparameterisation: d sample / d a = -(dP/da) / (dP/dx) at the
    # sample, P the gamma distribution function (lax.random_gamma_grad).
    (k, a), (_, ta) = primals, tangents
    out = random_gamma_p.bind(k, a, shape=shape, dtype=dtype, log_space=log_space)
    if ta is None:
        return out, None
    return out, lax.multiply(ta, _d_sample_d_a(a, out, log_space))


@random_gamma_p.def_vjp
def _random_gamma_vjp(ct, out, k, a, *, needed, shape, dtype, log_space):
    return None, lax.multiply(ct, _d_sample_d_a(a, out, log_space))


def _d_sample_d_a(a, out, log_space):
    sample = lax.exp(out) if log_space else out
    grad = lax.random_gamma_grad(a, sample)
    return lax.divide(grad, sample) if log_space else grad


# Small means count the arrivals of a unit-rate Poisson process in [0, lam]
# (Knuth's method as sums of exponentials), from this many arrivals: more
# than 64 when lam < 10 has probability below 1e-25.
_ARRIVALS = 64
_SMALL_MEAN = 10.0
# Larger means use Hormann's transformed rejection ("The transformed rejection
# method for generating Poisson random variables", 1993; the binomial BTRS,
# 1993), whose proposals are accepted with probability above 0.85: 24 rounds
# leave an element unaccepted with probability below 1e-19.
_REJECTION_ROUNDS = 24


def _first_accepted(accept: mx.array, values: mx.array) -> mx.array:
    """Each element's value from its first accepted round (axis 0), the last
    round's if none was."""
    rounds = accept.shape[0]
    first = mx.argmax(mx.concatenate([accept, mx.ones((1, *accept.shape[1:]), mx.bool_)]),
                      axis=0)
    return mx.take_along_axis(values, mx.minimum(first, rounds - 1)[None], axis=0)[0]


def _lgamma(x: mx.array) -> mx.array:
    return lgamma_p.impl(x)  # the MLX kernel itself: the draws run on MLX arrays


def _poisson_small(k: mx.array, lam: mx.array) -> mx.array:
    shape = lam.shape
    e = -mx.log1p(-mx.random.uniform(shape=(_ARRIVALS, *shape), key=k))
    return mx.sum(mx.cumsum(e, axis=0) <= lam, axis=0).astype(mx.float32)


def _poisson_ptrs(k: mx.array, lam: mx.array) -> mx.array:
    shape = (_REJECTION_ROUNDS, *lam.shape)
    uniform_key, accept_key = mx.random.split(k)
    u = mx.random.uniform(shape=shape, key=uniform_key) - 0.5
    v = mx.random.uniform(shape=shape, key=accept_key)
    b = 0.931 + 2.53 * mx.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    us = 0.5 - mx.abs(u)
    count = mx.floor((2.0 * a / us + b) * u + lam + 0.43)
    squeeze = (us >= 0.07) & (v <= v_r)
    safe = mx.maximum(count, 0.0)
    log_ratio = mx.log(v * inv_alpha / (a / (us * us) + b))
    exact = log_ratio <= -lam + safe * mx.log(lam) - _lgamma(safe + 1.0)
    accept = squeeze | ((count >= 0) & ~((us < 0.013) & (v > us)) & exact)
    return _first_accepted(accept, count)


def _draw_poisson(k, lam, shape, dtype):
    lam = mx.broadcast_to(lam.astype(mx.float32), shape)
    small_key, large_key = mx.random.split(k)
    small = _poisson_small(small_key, mx.where(lam < _SMALL_MEAN, lam, 0.0))
    large = _poisson_ptrs(large_key, mx.where(lam < _SMALL_MEAN, _SMALL_MEAN, lam))
    counts = mx.where(lam < _SMALL_MEAN, small, large)
    counts = mx.where(lam == 0, 0.0, counts)
    return mx.where(lam >= 0, counts, -1.0).astype(dtype)


random_poisson_p = _sampler("poisson", _draw_poisson)


def _binomial_inversion(k: mx.array, n: mx.array, p: mx.array) -> mx.array:
    # Successes = how many cumulative geometric waiting times fit in n trials.
    u = mx.random.uniform(shape=(_ARRIVALS, *p.shape), key=k)
    waits = mx.floor(mx.log1p(-u) / mx.log1p(-p)) + 1.0
    return mx.sum(mx.cumsum(waits, axis=0) <= n, axis=0).astype(mx.float32)


def _binomial_btrs(k: mx.array, n: mx.array, p: mx.array) -> mx.array:
    shape = (_REJECTION_ROUNDS, *p.shape)
    uniform_key, accept_key = mx.random.split(k)
    u = mx.random.uniform(shape=shape, key=uniform_key) - 0.5
    v = mx.random.uniform(shape=shape, key=accept_key)
    q = 1.0 - p
    spq = mx.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    mode = mx.floor((n + 1.0) * p)
    us = 0.5 - mx.abs(u)
    count = mx.floor((2.0 * a / us + b) * u + c)
    inside = (count >= 0) & (count <= n)
    safe = mx.clip(count, 0.0, n)
    log_v = mx.log(v * alpha / (a / (us * us) + b))
    bound = (_lgamma(mode + 1.0) + _lgamma(n - mode + 1.0) - _lgamma(safe + 1.0)
             - _lgamma(n - safe + 1.0) + (safe - mode) * mx.log(p / q))
    accept = inside & (((us >= 0.07) & (v <= v_r)) | (log_v <= bound))
    return _first_accepted(accept, count)


def _draw_binomial(k, n, p, shape, dtype):
    n = mx.broadcast_to(n.astype(mx.float32), shape)
    p = mx.broadcast_to(p.astype(mx.float32), shape)
    flipped = p > 0.5
    low_p = mx.where(flipped, 1.0 - p, p)  # the algorithms want p <= 1/2
    small = n * low_p < _SMALL_MEAN
    small_key, large_key = mx.random.split(k)
    by_inversion = _binomial_inversion(small_key, n, mx.where(small & (low_p > 0), low_p, 0.5))
    by_rejection = _binomial_btrs(large_key, mx.where(small, 100.0, n),
                                  mx.where(small, 0.5, low_p))
    count = mx.where(small, mx.where(low_p > 0, by_inversion, 0.0), by_rejection)
    count = mx.where(flipped, n - count, count)
    valid = (n >= 0) & (p >= 0) & (p <= 1)
    return mx.where(valid, count, math.nan).astype(dtype)


random_binomial_p = _sampler("binomial", _draw_binomial)
