"""The collectives over processes (``mx.distributed``) as primitives, for
``ftorch.distributed``: ``process_all_sum`` (linear, its own transpose),
``process_all_gather`` (its transpose takes this process's block of the
summed cotangent), ``process_all_max`` and ``process_all_min`` (the
derivative flows to the processes holding the extremum). They communicate,
so jit never folds them while it stages a graph.

>>> import ftorch.primitives.distributed as collectives, mlx.core as mx
>>> group = mx.distributed.init()
>>> collectives.all_sum_p.bind(mx.array([1.0, 2.0]), group=group).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import linear, move_bdim, vectorized

__all__ = ["all_sum_p", "all_gather_p", "all_max_p", "all_min_p"]


# ----------------------------------------------------------------------------
# all_sum: linear, its own transpose
# ----------------------------------------------------------------------------

# The primitives are named process_*: lax.psum and lax.all_gather are the
# collectives over a named vmap axis. They communicate: never folded while jit
# stages a graph.
all_sum_p = Primitive("process_all_sum",
                      lambda x, *, group: mx.distributed.all_sum(x, group=group),
                      communicates=True)
# Every process's input reaches every process's output once: the transpose
# sums the cotangents of all processes.
linear(all_sum_p, lambda ct, x, *, group: all_sum_p.bind(ct, group=group))
vectorized(all_sum_p)


# ----------------------------------------------------------------------------
# all_gather: concatenation along axis 0; its transpose takes this process's
# block of the summed cotangent
# ----------------------------------------------------------------------------

all_gather_p = Primitive(
    "process_all_gather", lambda x, *, group: mx.distributed.all_gather(x, group=group),
    communicates=True)


def _all_gather_transpose(ct, x, *, group):
    n = aval_of(x).shape[0]
    r = group.rank()
    # The ring backend has no reduce-scatter (mx.distributed.sum_scatter
    # raises there), so the whole cotangent is summed and sliced.
    return lax.static_slice(all_sum_p.bind(ct, group=group), (slice(r * n, (r + 1) * n),))


linear(all_gather_p, _all_gather_transpose)


@all_gather_p.def_batch
def _all_gather_batch(vals, dims, axis_size, *, group):
    # The gathered axis is each example's first: the batch axis goes behind it.
    x = move_bdim(vals[0], dims[0], 1, axis_size)
    return all_gather_p.bind(x, group=group), 1


# ----------------------------------------------------------------------------
# all_max, all_min: the derivative flows to the processes holding the
# extremum, shared equally among ties (as reduce_max's in JAX)
# ----------------------------------------------------------------------------


def _extremum(name: str, impl: Any) -> Primitive:
    prim = Primitive(name, lambda x, *, group: impl(x, group=group), communicates=True)

    def weights(x, y, group):
        hit = lax.astype(lax.equal(x, y), aval_of(x).dtype)
        return lax.divide(hit, all_sum_p.bind(hit, group=group))

    @prim.def_jvp
    def jvp(primals, tangents, *, group):
        (x,), (t,) = primals, tangents
        y = prim.bind(x, group=group)
        if t is None:
            return y, None
        return y, all_sum_p.bind(lax.multiply(t, weights(x, y, group)), group=group)

    @prim.def_vjp
    def vjp(ct, y, x, *, needed, group):
        return (lax.multiply(all_sum_p.bind(ct, group=group), weights(x, y, group)),)

    vectorized(prim)
    return prim


all_max_p = _extremum("process_all_max", mx.distributed.all_max)
all_min_p = _extremum("process_all_min", mx.distributed.all_min)
