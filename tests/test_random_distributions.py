"""The distributions of ftorch.random's samplers against scipy.stats: a Kolmogorov-Smirnov
test (continuous) or a chi-square test (discrete) at fixed keys, with a fixed, generous
threshold, for several parameters each; and the implicit-reparameterisation gradients of
the gamma family against analytic gradients of expectations."""

import math

import mlx.core as mx
import numpy as np
import pytest
import scipy.stats as ss
from scipy.special import polygamma

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.random as random

N = 20000
P_MIN = 1e-4  # a correct sampler fails this at one key in ten thousand


def _key(i=0):
    return random.key(1234 + i)


CONTINUOUS = [
    ("gamma", lambda k: random.gamma(k, 0.2, (N,)), ss.gamma(0.2).cdf),
    ("gamma", lambda k: random.gamma(k, 1.0, (N,)), ss.gamma(1.0).cdf),
    ("gamma", lambda k: random.gamma(k, 7.5, (N,)), ss.gamma(7.5).cdf),
    ("gamma-float64", lambda k: random.gamma(k, 2.5, (N,), mx.float64), ss.gamma(2.5).cdf),
    ("loggamma", lambda k: random.loggamma(k, 0.01, (N,)),
     lambda x: ss.gamma(0.01).cdf(np.exp(x))),
    ("beta", lambda k: random.beta(k, 0.5, 0.5, (N,)), ss.beta(0.5, 0.5).cdf),
    ("beta", lambda k: random.beta(k, 2.0, 5.0, (N,)), ss.beta(2.0, 5.0).cdf),
    ("dirichlet", lambda k: random.dirichlet(k, mx.array([1.0, 2.0, 3.0]), (N,))[:, 1],
     ss.beta(2.0, 4.0).cdf),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (N,)), ss.chi2(3.0).cdf),
    ("f", lambda k: random.f(k, 3.0, 7.0, (N,)), ss.f(3.0, 7.0).cdf),
    ("t", lambda k: random.t(k, 2.5, (N,)), ss.t(2.5).cdf),
    ("generalized_normal", lambda k: random.generalized_normal(k, 1.5, (N,)),
     ss.gennorm(1.5).cdf),
    ("cauchy", lambda k: random.cauchy(k, (N,)), ss.cauchy.cdf),
    ("laplace", lambda k: random.laplace(k, (N,)), ss.laplace.cdf),
    ("logistic", lambda k: random.logistic(k, (N,)), ss.logistic.cdf),
    ("lognormal", lambda k: random.lognormal(k, 0.7, (N,)), ss.lognorm(0.7).cdf),
    ("maxwell", lambda k: random.maxwell(k, (N,)), ss.maxwell.cdf),
    ("double_sided_maxwell", lambda k: random.double_sided_maxwell(k, 1.0, 2.0, (N,)),
     lambda x: 0.5 + 0.5 * np.sign(x - 1.0) * ss.maxwell.cdf(np.abs(x - 1.0) / 2.0)),
    ("pareto", lambda k: random.pareto(k, 3.0, (N,)), ss.pareto(3.0).cdf),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)), ss.rayleigh(scale=2.0).cdf),
    ("triangular", lambda k: random.triangular(k, -1.0, 0.5, 2.0, (N,)),
     ss.triang(0.5, loc=-1.0, scale=3.0).cdf),
    ("wald", lambda k: random.wald(k, 1.5, (N,)), ss.invgauss(1.5).cdf),
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.5, (N,)),
     ss.weibull_min(1.5, scale=2.0).cdf),
    ("ball-radius", lambda k: mx.linalg.norm(random.ball(k, 3, shape=(N,)), axis=-1),
     lambda r: np.clip(r, 0, 1) ** 3),
]


@pytest.mark.parametrize("name, draw, cdf", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_sampler_matches_scipy(name, draw, cdf):
    x = np.array(draw(_key()).astype(mx.float64))
    assert np.all(np.isfinite(x))
    assert ss.kstest(x, cdf).pvalue > P_MIN


def _chi2_pvalue(counts, pmf, support):
    observed = np.array([np.sum(counts == k) for k in support], dtype=float)
    expected = N * pmf(np.array(support))
    rest_obs, rest_exp = N - observed.sum(), N - expected.sum()
    keep = expected > 5  # pool sparse cells, as the test requires
    obs = np.append(observed[keep], rest_obs + observed[~keep].sum())
    exp = np.append(expected[keep], rest_exp + expected[~keep].sum())
    return ss.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


DISCRETE = [
    ("poisson", lambda k: random.poisson(k, 0.3, (N,)), ss.poisson(0.3).pmf, range(0, 10)),
    ("poisson", lambda k: random.poisson(k, 7.0, (N,)), ss.poisson(7.0).pmf, range(0, 30)),
    ("poisson", lambda k: random.poisson(k, 10.0, (N,)), ss.poisson(10.0).pmf, range(0, 40)),
    ("poisson", lambda k: random.poisson(k, 250.0, (N,)), ss.poisson(250.0).pmf,
     range(150, 350)),
    ("binomial", lambda k: random.binomial(k, 12.0, 0.3, (N,)), ss.binom(12, 0.3).pmf,
     range(0, 13)),
    ("binomial", lambda k: random.binomial(k, 60.0, 0.8, (N,)), ss.binom(60, 0.8).pmf,
     range(0, 61)),
    ("binomial", lambda k: random.binomial(k, 500.0, 0.4, (N,)), ss.binom(500, 0.4).pmf,
     range(120, 280)),
    ("geometric", lambda k: random.geometric(k, 0.2, (N,)), ss.geom(0.2).pmf, range(1, 60)),
    ("multinomial", lambda k: random.multinomial(k, 9.0, mx.array([0.1, 0.6, 0.3]),
                                                 shape=(N, 3))[:, 1],
     ss.binom(9, 0.6).pmf, range(0, 10)),
]


@pytest.mark.parametrize("name, draw, pmf, support", DISCRETE, ids=[c[0] for c in DISCRETE])
def test_discrete_sampler_matches_scipy(name, draw, pmf, support):
    counts = np.array(draw(_key()).astype(mx.float64))
    assert _chi2_pvalue(counts, pmf, list(support)) > P_MIN


def test_rademacher_and_orthogonal():
    signs = np.array(random.rademacher(_key(), (N,)))
    assert set(np.unique(signs)) == {-1, 1}
    assert ss.binomtest(int(np.sum(signs == 1)), N).pvalue > P_MIN
    q = np.array(random.orthogonal(_key(), 4, (50,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    # Haar: the first entry of a uniform 4-dimensional unit vector has density
    # proportional to (1 - x^2)^(1/2), a Beta(3/2, 3/2) on [-1, 1].
    first = np.array(random.orthogonal(_key(1), 4, (N,)))[:, 0, 0]
    assert ss.kstest(first, ss.beta(1.5, 1.5, loc=-1, scale=2).cdf).pvalue > P_MIN


# Gradients of expectations, E[f(X)] over N samples, against their analytic values.
GRADIENTS = [
    ("gamma mean", lambda k, a: random.gamma(k, a, (N,)).mean(), 0.7, lambda a: 1.0),
    ("gamma mean", lambda k, a: random.gamma(k, a, (N,)).mean(), 4.0, lambda a: 1.0),
    ("gamma second moment", lambda k, a: (random.gamma(k, a, (N,)) ** 2).mean(), 2.0,
     lambda a: 2 * a + 1),
    ("loggamma mean", lambda k, a: random.loggamma(k, a, (N,)).mean(), 1.5,
     lambda a: float(polygamma(1, a))),  # d/da E[log X] = digamma'(a)
    ("beta mean", lambda k, a: random.beta(k, a, 3.0, (N,)).mean(), 2.0,
     lambda a: 3.0 / (a + 3.0) ** 2),
    ("dirichlet mean", lambda k, a: random.dirichlet(
        k, fnp.stack([a, 2.0, 3.0]), (N,))[:, 0].mean(), 1.0,
     lambda a: 5.0 / (a + 5.0) ** 2),
    ("chisquare mean", lambda k, a: random.chisquare(k, a, (N,)).mean(), 3.0, lambda a: 1.0),
    ("t second moment", lambda k, a: (random.t(k, a, (N,)) ** 2).mean(), 8.0,
     lambda a: -2.0 / (a - 2.0) ** 2),
]


@pytest.mark.parametrize("name, f, a, expected", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradient_of_expectation(name, f, a, expected):
    grads = [ft.grad(lambda a: f(_key(i), a))(mx.array(a)).item() for i in range(4)]
    assert abs(np.mean(grads) - expected(a)) < 0.05 * max(1.0, abs(expected(a)))


def test_gamma_gradient_is_implicit_reparameterisation():
    # d x / d a = -(dF/da) / (dF/dx) at the sample: check it by finite differences of
    # the distribution function.
    k, a = _key(), 2.5
    x = np.array(random.gamma(k, a, (8,)).astype(mx.float64))
    g = np.array(ft.jacrev(lambda a: random.gamma(k, a, (8,)))(mx.array(a)))
    eps = 1e-4
    dF_da = (ss.gamma(a + eps).cdf(x) - ss.gamma(a - eps).cdf(x)) / (2 * eps)
    np.testing.assert_allclose(g, -dF_da / ss.gamma(a).pdf(x), rtol=2e-3)


def test_samplers_jit_and_vmap_over_keys_and_parameters():
    keys = random.split(_key(), 3)
    a = mx.array([0.5, 2.0, 9.0])
    batched = ft.vmap(lambda k, a: random.gamma(k, a, (4,)))(keys, a)
    looped = mx.stack([random.gamma(k, ai, (4,)) for k, ai in zip(keys, a)])
    np.testing.assert_array_equal(np.array(batched), np.array(looped))
    jitted = ft.jit(lambda k, lam: random.poisson(k, lam, (4,)))
    np.testing.assert_array_equal(np.array(jitted(keys[0], mx.array(30.0))),
                                  np.array(random.poisson(keys[0], mx.array(30.0), (4,))))
    counts = ft.vmap(lambda k, n: random.binomial(k, n, 0.5, (2,)))(keys, mx.array([1.0, 50.0,
                                                                                     500.0]))
    assert counts.shape == (3, 2)


def test_parameter_errors_name_the_function():
    with pytest.raises(ValueError, match="gamma: shape"):
        random.gamma(_key(), mx.ones(3), (2,))
    with pytest.raises(TypeError, match="poisson: dtype"):
        random.poisson(_key(), 1.0, (2,), dtype=mx.float32)
    with pytest.raises(ValueError, match="dirichlet: alpha"):
        random.dirichlet(_key(), 1.0)
    with pytest.raises(TypeError, match="key_data"):
        random.key_data(mx.array([1.0, 2.0]))
    assert random.key_impl(random.key(0)) == "threefry2x32"
    assert math.isnan(random.binomial(_key(), 5.0, 1.5).item())
