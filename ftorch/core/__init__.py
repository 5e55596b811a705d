"""The core of ftorch: primitives, tracers and the stack of active transforms.

Every array operation bottoms out in ``Primitive.bind``. Outside any
transform, ``bind`` is one check and one MLX call. Inside transforms, the
innermost (highest-level) trace among the arguments interprets the primitive
with the rules the primitive carries (JVP, VJP, batching, shape).

This follows the interpreter design of JAX's autodidax: each transform is a
``Trace`` subclass living in ``ftorch/transforms/``; a ``MainTrace`` on a
global stack gives each active transform a level, and tracers from different
levels never mix, which is what rules out perturbation confusion.

One module per job; each imports only those listed before it:

- ``avals``: ``ShapeDtypeStruct``, ``format_aval`` and the dtype classes.
- ``errors``: ``LeakedTracerError``, conversion errors, the user's line.
- ``tracer``: ``Tracer``, what user code sees in place of arrays.
- ``helpers``: ``aval_of``, ``as_array``, ``global_random_key``.
- ``mlx_array``: everything ftorch adds to ``mx.array``; ``install()`` below
  is its one install step.
- ``trace``: ``MainTrace``, ``new_main`` (the stack) and ``Trace``.
- ``primitive``: ``Primitive`` and the ``registry``.

This package re-exports their names: import them from ``ftorch.core``.
"""

from typing import Any

# Names other modules import from here (``X as X`` marks a re-export).
from ftorch.core import trace as _trace
from ftorch.core.avals import DTYPE_SHORT_NAMES as DTYPE_SHORT_NAMES
from ftorch.core.avals import FLOATING as FLOATING
from ftorch.core.avals import INEXACT as INEXACT
from ftorch.core.avals import ShapeDtypeStruct as ShapeDtypeStruct
from ftorch.core.avals import format_aval as format_aval
from ftorch.core.avals import is_complex as is_complex
from ftorch.core.avals import is_floating as is_floating
from ftorch.core.avals import is_inexact as is_inexact
from ftorch.core.errors import LeakedTracerError as LeakedTracerError
from ftorch.core.errors import user_frame as user_frame
from ftorch.core.helpers import as_array as as_array
from ftorch.core.helpers import aval_of as aval_of
from ftorch.core.helpers import global_random_key as global_random_key
from ftorch.core.mlx_array import install
from ftorch.core.mlx_array import mlx_at as mlx_at
from ftorch.core.mlx_array import mlx_getitem as mlx_getitem
from ftorch.core.mlx_array import mlx_setitem as mlx_setitem
from ftorch.core.primitive import Primitive as Primitive
from ftorch.core.primitive import registry as registry
from ftorch.core.trace import MainTrace as MainTrace
from ftorch.core.trace import Trace as Trace
from ftorch.core.trace import _stack as _stack
from ftorch.core.trace import eager_constants as eager_constants
from ftorch.core.trace import new_main as new_main
from ftorch.core.tracer import ARRAY_METHODS as ARRAY_METHODS
from ftorch.core.tracer import PrimalTracer as PrimalTracer
from ftorch.core.tracer import Tracer as Tracer
from ftorch.core.tracer import call_traced as call_traced
from ftorch.core.tracer import install_array_api as install_array_api

__all__ = [
    "Primitive",
    "ShapeDtypeStruct",
    "Trace",
    "Tracer",
    "PrimalTracer",
    "MainTrace",
    "LeakedTracerError",
    "registry",
]

_ARRAY_METHODS = ARRAY_METHODS  # the name it had before the split


def __getattr__(name: str) -> Any:
    # The jit being staged, which new_main rebinds: read it where it lives.
    if name == "_dynamic":
        return _trace._dynamic
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# What importing ftorch adds to mx.array (see ftorch.core.mlx_array).
install()
