"""What ftorch does for the machine it runs on, in one place.

- ``blas``: loads an optimized BLAS for MLX's CPU matmul on Linux and sets
  its thread count; ``import ftorch`` runs it before ``mlx.core`` is
  imported, so this package imports nothing at import time.
- ``lowering``: turns a staged graph into MLX calls (what ``jit`` runs,
  compiled or not), applying the two below.
- ``cpu_math``: float32 approximations of ``tanh``, ``sigmoid``, ``erf`` and
  ``gelu`` for MLX's fused CPU kernels, and the table of lowering rules that
  use them (``ft.config.fast_cpu_math``).
- ``rewrites``: graph rewrites for MLX's kernels: solves against one
  triangular matrix through its inverse (MLX's CPU ``solve_triangular``
  inverts on every call), and a loop's summed per-step matmuls as one.

The generic modules (the graph IR, the primitives, the transforms) hold
nothing platform-specific: the lowering consults this package.
"""
