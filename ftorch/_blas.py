"""Loading an optimized BLAS for MLX's CPU backend on Linux (to be written)."""


def load() -> None:
    """Called by ``import ftorch`` before ``mlx.core`` is imported."""
