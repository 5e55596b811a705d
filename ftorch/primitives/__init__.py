"""The primitive layer, one module per family: each primitive's MLX
implementation, its rules (shape, JVP, VJP, batching, lowering) and its
strict wrapper side by side where it is defined; ``ftorch.core.registry``
lists them all. ``ftorch.lax`` is its public face, as ``jax.lax`` is of
``jax._src.lax``.

Nothing in this package imports ``ftorch.numpy``, ``ftorch.nn`` or any
other layer above it (``tests/test_layering.py`` checks the import graph).

Rules call other families' strict wrappers as ``lax.<name>`` (``import
ftorch.primitives as lax``): operands as they are, params already normalised
(non-negative axis tuples, full shapes, MLX dtypes), no promotion. This
module resolves those names on first use rather than importing every family
up front, because families call each other in both directions (an
elementwise VJP sums over broadcast axes, a reduction's VJP broadcasts and
multiplies) and the higher-order families (loops, conditionals) are built
on the graph transforms, which use the elementwise ones: rules run only
after every family is loaded, so no family imports another at import time
in a circle.
"""

from __future__ import annotations

import importlib
from typing import Any

# Every family, in the order their names are looked up.
FAMILIES = (
    "creation", "elementwise", "reduction", "shape", "indexing", "linalg", "barrier", "conv",
    "decompositions", "orthogonal", "matrix_functions", "sorting", "fourier", "special",
    "activations", "sampling", "slicing", "parallel", "conditionals", "loops", "associative",
    "distributed", "bits", "solves", "callback",
    "quantized", "positional",
)


def family(name: str) -> Any:
    """The family module ``ftorch.primitives.<name>``."""
    return importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str) -> Any:
    # Only names not found in this module's globals come here: the first use
    # of each strict wrapper. It is cached, so later uses are plain lookups.
    if name.startswith("__"):
        raise AttributeError(name)
    for fam in FAMILIES:
        module = family(fam)
        if name in module.__all__:
            value = globals()[name] = getattr(module, name)
            return value
    raise AttributeError(f"module {__name__!r} has no primitive {name!r}")
