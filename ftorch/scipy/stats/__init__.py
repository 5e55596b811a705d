"""``ftorch.scipy.stats``, as ``jax.scipy.stats``: distributions' densities
and distribution functions (one module per distribution), differentiable
under every ftorch transform.

>>> import ftorch.scipy.stats as stats, mlx.core as mx
>>> [round(v, 6) for v in stats.norm.pdf(mx.array([0.0])).tolist()]
[0.398942]
"""

from ftorch.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from ftorch.scipy.stats._descriptive import mode, rankdata, sem
from ftorch.scipy.stats._kde import gaussian_kde

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy", "mode", "rankdata", "sem", "gaussian_kde",
]
