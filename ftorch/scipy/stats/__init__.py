"""``ftorch.scipy.stats``, as ``jax.scipy.stats``: distributions' densities
and distribution functions, differentiable under every ftorch transform.
"""

from ftorch.scipy.stats import norm

__all__ = ["norm"]
