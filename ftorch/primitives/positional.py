"""Rotary position embeddings: ``rope``, on MLX's fused ``mx.fast.rope``.

RoPE rotates pairs of features of each position ``t`` by the angles
``scale * (offset + t) * freq_i``, with ``freq_i = base ** (-2i / dims)``
(or the given ``freqs``); the pairs are ``(i, i + dims/2)`` or, with
``traditional``, consecutive. The input is ``(batch, *, T, D)``: the
positions run along the second-to-last axis, and only the first ``dims``
features turn.

It is linear in ``x`` and a rotation: its JVP is itself, its transpose the
inverse rotation, ``scale -> -scale``. The ``offset`` (a scalar, or one per
batch entry) is an operand, so a decoding step jitted once serves every
position; it and ``freqs`` carry no derivative.

>>> import ftorch.primitives as prims, mlx.core as mx
>>> x = mx.ones((1, 2, 4))
>>> y = prims.rope(x, 0, None, dims=4, traditional=False, base=10000.0, scale=1.0)
>>> y[0, 0].tolist(), [round(v, 4) for v in y[0, 1].tolist()]
([1.0, 1.0, 1.0, 1.0], [-0.3012, 0.99, 1.3818, 1.0099])
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import move_bdim

__all__ = ["rope"]


def _rope_impl(x, offset, freqs=None, *, dims, traditional, base, scale):
    return mx.fast.rope(x, dims, traditional=traditional, base=None if freqs is not None else base,
                        scale=scale, offset=offset, freqs=freqs)


rope_p = Primitive("rope", _rope_impl)


@rope_p.def_jvp
def _rope_jvp(primals, tangents, **params):
    x, *static = primals
    t = tangents[0]
    return rope_p.bind(*primals, **params), (None if t is None else rope_p.bind(t, *static,
                                                                                **params))


@rope_p.def_vjp
def _rope_vjp(ct, out, x, *static, needed, scale, **params):
    # The transpose of a rotation is the rotation by the opposite angles.
    return (rope_p.bind(ct, *static, scale=-scale, **params),) + (None,) * len(static)


@rope_p.def_batch
def _rope_batch(vals, batch_dims, axis_size, **params):
    # (batch_dims, not vmap's usual "dims": rope has a param of that name.)
    x, offset, *freqs = vals
    x_dim, offset_dim, *freqs_dims = batch_dims
    if any(d is not None for d in freqs_dims):
        raise NotImplementedError("rope: vmap over freqs is not supported; map over x instead")
    offset_rank = len(aval_of(offset).shape) - (offset_dim is not None)
    if offset_dim is None:
        # A scalar offset: every leading axis is a batch axis. One per batch
        # entry: the vmapped axis goes second, after the entries.
        x = move_bdim(x, x_dim, 0 if offset_rank == 0 else 1, axis_size)
        return rope_p.bind(x, offset, *freqs, **params), 0 if offset_rank == 0 else 1
    # Offsets that vary with the vmapped axis: MLX's one offset per batch entry,
    # over the vmapped axis (and the entries, flattened with it).
    x = move_bdim(x, x_dim, 0, axis_size)
    offset = move_bdim(offset, offset_dim, 0, axis_size)
    shape = aval_of(x).shape
    if offset_rank == 0:
        return rope_p.bind(x, offset, *freqs, **params), 0
    flat = lax.reshape(x, (shape[0] * shape[1], *shape[2:]))
    out = rope_p.bind(flat, lax.reshape(offset, (shape[0] * shape[1],)), *freqs, **params)
    return lax.reshape(out, shape), 0


def rope(x: Any, offset: Any, freqs: Any = None, *, dims: int, traditional: bool,
         base: float | None, scale: float) -> Any:
    """``x`` (``(batch, *, T, D)``) with its first ``dims`` features rotated by
    position, as ``mx.fast.rope``; ``ftorch.nn.functional.rope`` checks the
    arguments and calls this.

    >>> import ftorch.primitives as prims, mlx.core as mx
    >>> y = prims.rope(mx.ones((1, 3, 2)), mx.array(0), dims=2, traditional=True,
    ...                base=10000.0, scale=1.0)
    >>> [round(v, 4) for v in y[0, 2].tolist()]
    [-1.3254, 0.4932]
    """
    operands = (x, offset) if freqs is None else (x, offset, freqs)
    return rope_p.bind(*operands, dims=dims, traditional=traditional, base=base, scale=scale)
