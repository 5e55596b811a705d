"""``ftorch.lax``: the primitive layer under ``ftorch.numpy``, as JAX's
``lax`` is under ``jax.numpy``: a strict wrapper per primitive (operands as
they are, static params already normalised: ``lax.sum(x, (0,))``,
``lax.reshape(x, (2, 3))``, ``lax.astype(x, mx.float16)``; no dtype promotion
or axis parsing), control flow as higher-order primitives, and the
structured slicing ops that loops index with, with JAX's names and
semantics.

>>> import ftorch.lax as lax, mlx.core as mx
>>> carry, ys = lax.scan(lambda c, x: (c + x, c), mx.array(0.0), mx.arange(4.0))
>>> carry.item(), ys.tolist()
(6.0, [0.0, 0.0, 1.0, 3.0])
"""

from typing import Any

from ftorch import tree
from ftorch.lax.associative import associative_scan
from ftorch.lax.conditionals import cond, switch
from ftorch.lax.loops import fori_loop, map, scan, while_loop
from ftorch.lax.parallel import (
    all_gather,
    axis_index,
    pmax,
    pmean,
    pmin,
    psum,
    psum_scatter,
)
from ftorch.lax.slicing import (
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice,
    dynamic_update_slice_in_dim,
    select,
)
from ftorch.numpy import stop_gradient as _stop_gradient_of_tree
from ftorch.primitives import *  # noqa: F403  (the strict wrappers)
from ftorch.primitives import __all__ as _primitive_ops
from ftorch.primitives import optimization_barrier as _barrier
from ftorch.transforms import _util

__all__ = [
    "cond", "switch", "while_loop", "fori_loop", "scan", "map", "associative_scan",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "select", "stop_gradient",
    "optimization_barrier", "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter",
    "axis_index",
    *(name for name in _primitive_ops if name not in ("stop_gradient", "optimization_barrier")),
]

# Over pytrees, as jax.lax.stop_gradient (the strict wrapper takes one array).
stop_gradient = _stop_gradient_of_tree


def optimization_barrier(operand: Any) -> Any:
    """``operand`` (a pytree of arrays), unchanged, with every leaf made to
    depend on all of them, as ``jax.lax.optimization_barrier``: nothing
    computed from the result runs before every leaf is ready, and no pass
    merges work on the result with the same work on ``operand``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.optimization_barrier({"a": mx.array(1.0), "b": mx.array(2)})["b"].item()
    2
    """
    leaves, treedef = _util.flatten_arrays(operand, "optimization_barrier operand")
    return tree.unflatten(treedef, _barrier(*leaves) if leaves else [])
