"""Oracle cases for ``jax.scipy.stats``: every distribution's functions on drawn values
inside and outside the support and drawn parameters (values and VJPs in the values and
the parameters), and the top-level ``mode``, ``rankdata``, ``sem`` and ``gaussian_kde``
(tests/oracle.py)."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import Oracle, arrays


def _rounded(a):
    return np.round(a).astype(np.float32)


def dist(name, *ranges, integer=(), apart=None, grad=True, **kw):
    """``jax.scipy.stats.NAME`` on arguments drawn with mutually broadcasting shapes, the
    i-th in ``ranges[i]`` (rounded to integers where ``i`` is in ``integer``); with
    ``apart=(i, j)`` argument ``i`` is moved at least 0.1 away from argument ``j``."""
    def args(d):
        shapes = d(hnp.mutually_broadcastable_shapes(num_shapes=len(ranges), max_dims=2,
                                                      max_side=3)).input_shapes
        drawn = []
        for i, ((lo, hi), s) in enumerate(zip(ranges, shapes)):
            a = d(arrays(s, lo=lo, hi=hi))
            drawn.append(_rounded(a) if i in integer else a)
        if apart is not None:
            i, j = apart
            gap = drawn[i] - drawn[j]
            drawn[i] = np.where(np.abs(gap) < 0.1, drawn[j] + 0.1, drawn[i]).astype(np.float32)
        return tuple(drawn), {}
    return Oracle(f"jax.scipy.stats.{name}", args, grad=grad, **kw)


X = (-3.0, 3.0)        # values on both sides of 0
POS = (0.5, 3.0)       # shapes and scales
LOC = (-1.0, 1.0)
PROB = (0.05, 0.95)
Q = (-0.2, 1.2)        # probabilities, some outside [0, 1]
K = (-1.0, 6.0)        # counts, some negative

LOCATION_SCALE = {
    "cauchy": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "expon": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "gumbel_l": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "gumbel_r": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
    "laplace": ["logpdf", "pdf", "cdf"],
    "logistic": ["logpdf", "pdf", "cdf", "sf"],
    "uniform": ["logpdf", "pdf", "cdf"],
}
QUANTILES = {"cauchy": ["ppf", "isf"], "expon": ["ppf"], "gumbel_l": ["ppf"],
             "gumbel_r": ["ppf"], "logistic": ["ppf", "isf"], "uniform": ["ppf"]}

# JAX's gumbel log-densities and quantiles cannot be differentiated (a float0 error in its
# xlogy and xlog1py of the integer -1).
NO_JAX_GRAD = {"gumbel_l.logpdf", "gumbel_l.pdf", "gumbel_r.logpdf", "gumbel_r.pdf",
               "gumbel_l.ppf", "gumbel_r.ppf"}

ORACLE = [
    # x apart from loc: ftorch's |x| has derivative 0 at 0, JAX's 1 (docs/hooks.py).
    *[dist(f"{d}.{f}", X, LOC, POS, apart=(0, 1), grad=f"{d}.{f}" not in NO_JAX_GRAD,
           rtol=1e-4, atol=1e-5) for d, fs in LOCATION_SCALE.items() for f in fs],
    # Quantiles: inside (0, 1) for the gradients, and outside for the NaNs.
    *[dist(f"{d}.{f}", PROB, LOC, POS, grad=f"{d}.{f}" not in NO_JAX_GRAD, rtol=1e-4,
           atol=1e-4, id="inside") for d, fs in QUANTILES.items() for f in fs],
    *[dist(f"{d}.{f}", Q, LOC, POS, grad=False, rtol=1e-4, atol=1e-4, id="edges")
      for d, fs in QUANTILES.items() for f in fs],
    # A non-positive scale: NaN where JAX gives NaN.
    *[dist(f"gumbel_{s}.{f}", X, LOC, (-1.0, 1.0), grad=False, rtol=1e-4, atol=1e-5,
           id="any scale")
      for s in "lr" for f in ["logpdf", "cdf", "logsf"]],
    *[dist(f"pareto.{f}", (-1.0, 6.0), POS, LOC, POS, rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]],
    dist("pareto.ppf", PROB, POS, LOC, POS, rtol=1e-4, atol=1e-4),
    dist("pareto.ppf", Q, POS, LOC, POS, grad=False, rtol=1e-4, atol=1e-4, id="edges"),
    *[dist(f"t.{f}", X, POS, LOC, POS, rtol=1e-4, atol=1e-5) for f in ["logpdf", "pdf"]],
    *[dist(f"chi2.{f}", (-1.0, 8.0), (1.0, 6.0), LOC, POS, rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf"]],
    *[dist(f"chi2.{f}", (-1.0, 8.0), (1.0, 6.0), LOC, POS, rtol=1e-3, atol=1e-4)
      for f in ["cdf", "logcdf", "sf", "logsf"]],
    *[dist(f"gamma.{f}", (-1.0, 6.0), POS, LOC, POS, rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf"]],
    *[dist(f"gamma.{f}", (-1.0, 6.0), POS, LOC, POS, rtol=1e-3, atol=1e-4)
      for f in ["cdf", "logcdf", "sf", "logsf"]],
    *[dist(f"beta.{f}", (-0.2, 1.2), POS, POS, rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf"]],
    dist("beta.logpdf", (-0.5, 1.5), (-1.0, 3.0), POS, (-0.5, 1.0), (-1.0, 2.0), grad=False,
         rtol=1e-4, atol=1e-5, id="any parameters"),
    # Values only: JAX's betainc has no derivative in a and b.
    *[dist(f"beta.{f}", (-0.2, 1.2), POS, POS, LOC, POS, grad=False, rtol=1e-3, atol=1e-4)
      for f in ["cdf", "logcdf", "sf", "logsf"]],
    # Gradients away from x = 0, where |x|^beta's derivative is an edge case.
    *[dist(f"gennorm.{f}", (0.1, 3.0), POS, rtol=1e-4, atol=1e-5) for f in ["logpdf", "pdf"]],
    *[dist(f"gennorm.{f}", X, POS, grad=False, rtol=1e-4, atol=1e-5, id="any x")
      for f in ["logpdf", "pdf"]],
    dist("gennorm.cdf", X, POS, rtol=1e-3, atol=1e-4),
    *[dist(f"vonmises.{f}", X, (-1.0, 5.0), rtol=1e-4, atol=1e-5) for f in ["logpdf", "pdf"]],
    *[dist(f"wrapcauchy.{f}", (-1.0, 7.0), (-0.2, 1.2), rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf"]],
    *[dist(f"truncnorm.{f}", X, (-2.0, 0.5), (-0.5, 2.0), LOC, POS, rtol=1e-3, atol=1e-4)
      for f in ["logpdf", "pdf"]],
    # The distribution functions' gradients inside the bounds (outside them JAX's are
    # sometimes NaN, ftorch's 0: docs/hooks.py), their values everywhere.
    *[dist(f"truncnorm.{f}", (-0.4, 0.4), (-2.0, -0.5), (0.5, 2.0), rtol=1e-3, atol=1e-4)
      for f in ["cdf", "logcdf", "sf", "logsf"]],
    *[dist(f"truncnorm.{f}", X, (-2.0, 0.5), (-0.5, 2.0), LOC, POS, grad=False, rtol=1e-3,
           atol=1e-4, id="any x") for f in ["cdf", "logcdf", "sf", "logsf"]],
    # Bounds deep in a tail, where the mass comes from the tail's side.
    *[dist(f"truncnorm.{f}", (5.1, 5.9), (4.0, 5.0), (6.0, 9.0), rtol=1e-3, atol=1e-4,
           id="upper tail") for f in ["logpdf", "logcdf", "logsf"]],
    # Discrete distributions: integer counts (as floats), parameters inside their range.
    *[dist(f"bernoulli.{f}", (-1.0, 2.0), PROB, LOC, integer=(0, 2), rtol=1e-4, atol=1e-5)
      for f in ["logpmf", "pmf"]],
    dist("bernoulli.cdf", (-1.0, 2.0), (-0.2, 1.2), rtol=1e-5, atol=1e-6),
    dist("bernoulli.ppf", Q, (-0.2, 1.2), rtol=1e-5, atol=1e-6),
    *[dist(f"binom.{f}", K, (0.0, 5.0), PROB, LOC, integer=(0, 1, 3), rtol=1e-4, atol=1e-5)
      for f in ["logpmf", "pmf"]],
    *[dist(f"betabinom.{f}", K, (0.0, 5.0), POS, POS, LOC, integer=(1, 4), rtol=1e-4,
           atol=1e-5) for f in ["logpmf", "pmf"]],
    dist("betabinom.logpmf", K, (-1.0, 5.0), (-1.0, 3.0), (-1.0, 3.0), integer=(0, 1),
         grad=False, rtol=1e-4, atol=1e-5, id="any parameters"),
    *[dist(f"nbinom.{f}", K, POS, PROB, LOC, integer=(0, 3), rtol=1e-4, atol=1e-5)
      for f in ["logpmf", "pmf"]],
    *[dist(f"geom.{f}", K, PROB, LOC, integer=(0, 2), rtol=1e-4, atol=1e-5)
      for f in ["logpmf", "pmf"]],
    *[dist(f"poisson.{f}", K, POS, LOC, integer=(0, 2), rtol=1e-4, atol=1e-5)
      for f in ["logpmf", "pmf"]],
    dist("poisson.logpmf", K, POS, grad=False, rtol=1e-4, atol=1e-5, id="any k"),
    dist("poisson.cdf", K, POS, LOC, integer=(0, 2), rtol=1e-3, atol=1e-4),
    dist("poisson.entropy", (0.0, 150.0), LOC, rtol=1e-4, atol=1e-4),
]


def _simplex(d, k, batch):
    raw = d(arrays((k, *batch), lo=0.1, hi=3.0))
    return (raw / raw.sum(axis=0, keepdims=True)).astype(np.float32)


def _dirichlet_args(d):
    k = d(st.integers(2, 4))
    batch = d(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    x = _simplex(d, k, batch)
    if d(st.booleans()):
        x = x[:-1]  # the last coordinate left implicit
    return (x, d(arrays((k,), lo=0.5, hi=3.0))), {}


def _multinomial_args(d):
    k = d(st.integers(2, 4))
    x = d(arrays((k,), dtype="int32", lo=0, hi=4))
    n = int(x.sum()) + d(st.sampled_from([0, 0, 1]))
    p = d(arrays((k,), lo=0.1, hi=1.0))
    return (x, np.int32(n), (p / p.sum()).astype(np.float32)), {}


def _mvn_args(d):
    n = d(st.integers(1, 3))
    batch = d(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    a = d(arrays((n, n), lo=-1.0, hi=1.0))
    cov = (a @ a.T + n * np.eye(n)).astype(np.float32)
    return (d(arrays((*batch, n))), d(arrays((n,), lo=-1.0, hi=1.0)), cov), {}


def _mvn_scalar_args(d):
    return (d(arrays(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))),
            d(arrays((), lo=-1.0, hi=1.0)), d(arrays((), lo=0.5, hi=2.0))), {}


ORACLE += [
    *[Oracle(f"jax.scipy.stats.dirichlet.{f}", _dirichlet_args, rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf"]],
    *[Oracle(f"jax.scipy.stats.multinomial.{f}", _multinomial_args, rtol=1e-4, atol=1e-5)
      for f in ["logpmf", "pmf"]],
    *[Oracle(f"jax.scipy.stats.multivariate_normal.{f}", _mvn_args, rtol=1e-4, atol=1e-5)
      for f in ["logpdf", "pdf"]],
    *[Oracle(f"jax.scipy.stats.multivariate_normal.{f}", _mvn_scalar_args, rtol=1e-4,
             atol=1e-5, id="scalar") for f in ["logpdf", "pdf"]],
]


def _ints_2d(d):
    return (d(arrays((d(st.integers(2, 6)), 3), "int32", lo=0, hi=3)),), {}


def _distinct_2d(d):
    x = d(arrays((d(st.integers(2, 6)), 3)))
    ranks = np.argsort(np.argsort(x, axis=None)).reshape(x.shape)
    return (ranks.astype(np.float32) * 0.5,), {}


def _kde(L, fn, data, points):
    return fn(data).evaluate(points), fn(data, bw_method="silverman").logpdf(points)


ORACLE += [
    Oracle("jax.scipy.stats.mode", _ints_2d, grad=False),
    Oracle("jax.scipy.stats.rankdata", lambda d: (_ints_2d(d)[0],
                                                  {"method": d(st.sampled_from(
                                                      ["average", "min", "max", "dense",
                                                       "ordinal"])), "axis": 0}),
           grad=False),
    Oracle("jax.scipy.stats.sem", lambda d: (_distinct_2d(d)[0], {"ddof": 1})),
    Oracle("jax.scipy.stats.gaussian_kde",
           lambda d: ((d(arrays((12,))), d(arrays((5,)))), {}), run=_kde, rtol=1e-4,
           atol=1e-5),
]
