"""``optimization_barrier``: values passed through unchanged, each made to
depend on all of them.

Nothing computed from an output can be scheduled before every input is
ready, and no pass can merge work on the outputs with the same work on the
inputs (the outputs are new values to ftorch's CSE and to ``mx.compile``).
Rematerialisation uses it to keep a backward pass's recomputation behind
the cotangent it waits for. The MLX implementation is ``mx.depends``.
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from ftorch.core import Primitive

__all__ = ["optimization_barrier"]


def _barrier_impl(*operands: mx.array) -> list:
    return list(mx.depends(list(operands), list(operands)))


optimization_barrier_p = Primitive("optimization_barrier", _barrier_impl, multiple_results=True)
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))


def optimization_barrier(*operands: Any) -> list:
    """The operands, unchanged, behind a barrier (strict wrapper: arrays in,
    a list out; ``ftorch.lax.optimization_barrier`` takes a pytree).

    >>> import ftorch.primitives.barrier as barrier, mlx.core as mx
    >>> [v.item() for v in barrier.optimization_barrier(mx.array(1.0), mx.array(2))]
    [1.0, 2]
    """
    return optimization_barrier_p.bind(*operands)


@optimization_barrier_p.def_jvp
def _barrier_jvp(primals, tangents):
    # Primals and tangents behind one barrier, as the forward pass would be.
    nonzero = [t for t in tangents if t is not None]
    outs = optimization_barrier_p.bind(*primals, *nonzero)
    it = iter(outs[len(primals):])
    return outs[:len(primals)], [None if t is None else next(it) for t in tangents]


@optimization_barrier_p.def_vjp
def _barrier_vjp(cts, out, *operands, needed):
    live = [c for c, n in zip(cts, needed) if n and c is not None]
    it = iter(optimization_barrier_p.bind(*live) if live else [])
    return tuple(next(it) if n and c is not None else None for c, n in zip(cts, needed))


@optimization_barrier_p.def_batch
def _barrier_batch(vals, dims, axis_size):
    return optimization_barrier_p.bind(*vals), list(dims)
