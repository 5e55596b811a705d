"""NumPy / jax.numpy-style ops on MLX arrays, differentiable under every
ftorch transform.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.sum(fnp.exp(mx.zeros(3))).item()
3.0
"""

from ftorch.primitives.creation import *  # noqa: F403
from ftorch.primitives.elementwise import *  # noqa: F403
from ftorch.primitives.reduction import *  # noqa: F403
from ftorch.primitives.shape import *  # noqa: F403
from ftorch.primitives.indexing import *  # noqa: F403
from ftorch.primitives.linalg import *  # noqa: F403
from ftorch.primitives import creation, elementwise, indexing, linalg, reduction, shape

__all__ = [
    *creation.__all__, *elementwise.__all__, *reduction.__all__, *shape.__all__,
    *indexing.__all__, *linalg.__all__,
]
