"""Oracle cases for ``jax.random`` (tests/oracle.py). ftorch's keys are JAX's legacy raw
keys, but the samplers draw other numbers, so samplers are compared on shapes and
dtypes only (``values=False``): each side draws from its own ``key(0)``. Their
distributions are tested against scipy.stats in tests/test_random_distributions.py. The
gamma family's gradients are compared as what they are, the implicit
reparameterisation ``random_gamma_grad(a, sample)`` at each side's own sample."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays


def sampler(name, *ranges, run=None, **kw):
    """``jax.random.NAME(key(0), *params, shape)`` with parameters drawn in ``ranges``
    (scalars or arrays of one drawn shape) and ``shape`` that shape."""
    def args(d):
        shape = d(st.sampled_from([(), (3,), (2, 3)]))
        return tuple(d(arrays(shape if d(st.booleans()) else (), lo=lo, hi=hi))
                     for lo, hi in ranges), {"shape": shape}
    default = (lambda L, fn, *params, shape: fn(L.random.key(0), *params, shape=shape))
    return Oracle(f"jax.random.{name}", args, values=False, run=run or default, **kw)


def _no_params(name, **kw):
    def args(d):
        return (), {"shape": d(st.sampled_from([(), (3,), (2, 3)]))}
    return Oracle(f"jax.random.{name}", args, values=False,
                  run=lambda L, fn, shape: fn(L.random.key(0), shape=shape), **kw)


def _implicit_gradient_ratio(L, fn, a):
    """d sample / d a over random_gamma_grad(a, sample): 1 where the gradient is the
    implicit reparameterisation's."""
    key = L.random.key(0)
    sample = fn(key, a)
    grad = L.jax.grad(lambda a: fn(key, a).sum())(a)
    return grad / L.lax.random_gamma_grad(a, sample)


POS = (0.5, 4.0)
PROB = (0.05, 0.95)

ORACLE = [
    *[sampler(n, POS) for n in ["gamma", "loggamma", "chisquare", "t", "pareto", "rayleigh",
                                "wald", "poisson"]],
    sampler("beta", POS, POS), sampler("f", POS, POS),
    sampler("lognormal", (0.1, 2.0)), sampler("geometric", PROB),
    sampler("binomial", (0.0, 30.0), PROB, run=lambda L, fn, n, p, shape: fn(
        L.random.key(0), np.floor(n), p, shape=shape)),
    sampler("triangular", (-2.0, -1.0), (-0.5, 0.5), (1.0, 2.0)),
    *[_no_params(n) for n in ["cauchy", "laplace", "logistic", "maxwell", "rademacher"]],
    Oracle("jax.random.double_sided_maxwell", lambda d: ((0.5, 2.0), {"shape": (3,)}),
           values=False, run=lambda L, fn, loc, scale, shape: fn(L.random.key(0), loc, scale,
                                                                  shape)),
    Oracle("jax.random.weibull_min", lambda d: ((1.5, 2.0), {"shape": (2, 3)}), values=False,
           run=lambda L, fn, scale, c, shape: fn(L.random.key(0), scale, c, shape)),
    Oracle("jax.random.generalized_normal", lambda d: ((d(st.floats(0.5, 3.0)),),
                                                       {"shape": (4,)}),
           values=False, run=lambda L, fn, p, shape: fn(L.random.key(0), p, shape)),
    Oracle("jax.random.ball", lambda d: ((d(st.integers(1, 4)), d(st.floats(1.0, 3.0))),
                                         {"shape": (3,)}),
           values=False, run=lambda L, fn, dim, p, shape: fn(L.random.key(0), dim, p, shape)),
    Oracle("jax.random.orthogonal", lambda d: ((d(st.integers(1, 4)),),
                                               {"shape": d(st.sampled_from([(), (2,)])),
                                                "m": d(st.none() | st.integers(1, 4))}),
           values=False, run=lambda L, fn, n, shape, m: fn(L.random.key(0), n, shape, m=m)),
    Oracle("jax.random.dirichlet", lambda d: ((d(arrays((3,), lo=0.5, hi=3.0)),),
                                              {"shape": d(st.sampled_from([(), (4,)]))}),
           values=False, run=lambda L, fn, alpha, shape: fn(L.random.key(0), alpha, shape)),
    Oracle("jax.random.multinomial", lambda d: ((d(st.integers(0, 20)),
                                                 np.array([0.2, 0.3, 0.5], np.float32)),
                                                {"shape": d(st.sampled_from([None, (4, 3)]))}),
           values=False, run=lambda L, fn, n, p, shape: fn(L.random.key(0), float(n), p,
                                                           shape=shape)),
    # The gamma family's gradient in its shape parameter is the implicit
    # reparameterisation on both sides (a ratio of 1 at each side's own sample).
    *[Oracle(f"jax.random.{n}", lambda d: ((d(arrays((5,), lo=0.3, hi=5.0)),), {}),
             grad=False, rtol=1e-3, atol=1e-3, run=_implicit_gradient_ratio,
             id="implicit gradient") for n in ["gamma"]],
    # Key data: the same raw words on both sides.
    Oracle("jax.random.key_data", lambda d: ((d(st.integers(0, 2**31 - 1)),), {}),
           run=lambda L, fn, seed: fn(L.random.PRNGKey(seed))),
    Oracle("jax.random.wrap_key_data", lambda d: ((d(st.integers(0, 2**31 - 1)),), {}),
           run=lambda L, fn, seed: L.random.key_data(fn(L.random.key_data(
               L.random.PRNGKey(seed))))),
    Oracle("jax.random.clone", lambda d: ((d(st.integers(0, 2**31 - 1)),), {}),
           run=lambda L, fn, seed: L.random.key_data(fn(L.random.PRNGKey(seed)))),
]

UNCHECKED = {
    "jax.random.key_impl": "returns a name, not an array: "
                           "tests/test_random_distributions.py checks it",
}
