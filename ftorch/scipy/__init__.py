"""SciPy-style functions on MLX arrays, as ``jax.scipy``: differentiable
under every ftorch transform.

>>> import ftorch.scipy.linalg as fsl, mlx.core as mx
>>> fsl.solve_triangular(mx.array([[2.0]]), mx.array([4.0])).tolist()
[2.0]
"""

from ftorch.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
