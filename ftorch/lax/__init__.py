"""``ftorch.lax``: control flow as higher-order primitives, and the
structured slicing ops that loops index with, with JAX's names and
semantics.

>>> import ftorch.lax as lax, mlx.core as mx
>>> carry, ys = lax.scan(lambda c, x: (c + x, c), mx.array(0.0), mx.arange(4.0))
>>> carry.item(), ys.tolist()
(6.0, [0.0, 0.0, 1.0, 3.0])
"""

from ftorch.lax.associative import associative_scan
from ftorch.lax.conditionals import cond, switch
from ftorch.lax.loops import fori_loop, map, scan, while_loop
from ftorch.lax.slicing import (
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice,
    dynamic_update_slice_in_dim,
    select,
)
from ftorch.primitives.elementwise import stop_gradient

__all__ = [
    "cond", "switch", "while_loop", "fori_loop", "scan", "map", "associative_scan",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "select", "stop_gradient",
]
