"""Rule cases for the samplers of ftorch.random.

Each case draws from a key given as a float argument (integers plus 0.5, so
finite differences never cross into another key): cast to uint32 inside the
case, the key is traced, and the vmap check batches it (a batch of keys).
The drawn numbers are then used with the case's float argument ``x``, the
differentiable path.
"""

import mlx.core as mx
import numpy as np
from harness import Case, floats, shapes
from hypothesis import strategies as st

import ftorch.numpy as fnp
import ftorch.random as random


def as_key(kf):
    return fnp.astype(kf, mx.uint32)


@st.composite
def x_and_key(draw):
    x = draw(floats(shapes(1, 2)))
    k = np.floor(draw(floats((2,), 0.0, 50.0))) + 0.5
    return x, k


CASES = [
    Case("random_normal", lambda x, k: random.normal(as_key(k), x.shape) * x, x_and_key()),
    Case("random_normal", lambda x, k: random.normal(as_key(k), x.shape, loc=x, scale=x * x),
         x_and_key(), name="random_normal-loc-scale"),
    Case("random_uniform", lambda x, k: random.uniform(as_key(k), x.shape, minval=x,
                                                       maxval=x + 2.0), x_and_key()),
    Case("random_gumbel", lambda x, k: random.gumbel(as_key(k), x.shape) * x, x_and_key()),
    Case("random_bernoulli",
         lambda x, k: fnp.where(random.bernoulli(as_key(k), 0.3, x.shape), x, -x), x_and_key()),
    Case("random_randint",
         lambda x, k: random.randint(as_key(k), x.shape, 0, 5).astype(x.dtype) * x, x_and_key()),
    Case("random_categorical",
         lambda x, k: random.categorical(as_key(k), mx.array([0.0, 1.0, 2.0]), shape=x.shape)
         .astype(x.dtype) * x, x_and_key()),
    Case("random_truncated_normal",
         lambda x, k: random.truncated_normal(as_key(k), -1.0, 2.0, x.shape) * x, x_and_key()),
    Case("random_split",
         lambda x, k: random.normal(random.split(as_key(k), 3)[1], x.shape) * x, x_and_key()),
]

CASES += [
    Case("random_bits", lambda x, k: random.bits(as_key(k), x.shape, mx.uint8).astype(x.dtype) * x,
         x_and_key()),
    Case("random_fold_in", lambda x, k: random.normal(
        random.fold_in(as_key(k), fnp.astype(k[0], mx.int32)), x.shape) * x, x_and_key()),
    Case("random_permutation", lambda x, k: random.permutation(as_key(k), x, axis=-1), x_and_key()),
    Case("random_permutation", lambda x, k: random.permutation(as_key(k), x, axis=-1,
                                                               independent=True),
         x_and_key(), name="random_permutation-independent"),
    Case("random_weighted_sample", lambda x, k: random.choice(
        as_key(k), x, (1,), replace=False, p=mx.array([0.5] * x.shape[0]) if x.ndim else None,
        axis=0) if x.ndim else x, x_and_key()),
    # The default method samples through the cholesky primitive and normal.
    Case("cholesky", lambda x, k: random.multivariate_normal(
        as_key(k), x, mx.array([[2.0, 0.3], [0.3, 1.0]], x.dtype) if x.shape[-1:] == (2,)
        else fnp.eye(x.shape[-1], dtype=x.dtype)), x_and_key(),
        name="random_multivariate_normal-cholesky"),
]

CASES += [
    # The other methods sample through the eigh and svd primitives.
    Case(method, lambda x, k, method=method: random.multivariate_normal(
        as_key(k), x, fnp.eye(x.shape[-1], dtype=x.dtype) * 2.0, method=method), x_and_key(),
        name=f"random_multivariate_normal-{method}")
    for method in ("eigh", "svd")
]

CASES += [
    # The shape is held fixed: its derivative is the implicit reparameterisation's, not
    # the derivative of Marsaglia-Tsang's transform that finite differences would see
    # (both are unbiased in expectation; tests/test_random_distributions.py checks it).
    Case("random_gamma", lambda x, k: random.gamma(as_key(k), mx.array([0.5, 3.0])[
        :x.shape[-1]] if x.shape[-1:] in ((1,), (2,)) else 2.0, x.shape, dtype=x.dtype) * x,
        x_and_key()),
    Case("random_gamma", lambda x, k: random.loggamma(as_key(k), 0.3, x.shape, dtype=x.dtype)
         * x, x_and_key(), name="random_gamma-log"),
    Case("random_poisson", lambda x, k: random.poisson(as_key(k), mx.array([0.5, 30.0])[
        :x.shape[-1]] if x.shape[-1:] in ((1,), (2,)) else 3.0, x.shape).astype(x.dtype) * x,
        x_and_key()),
    Case("random_binomial", lambda x, k: random.binomial(
        as_key(k), 40.0, 0.3, x.shape, dtype=x.dtype) * x, x_and_key()),
]
