"""Shape primitives: reshaping, broadcasting, joining, reordering axes; the
primitive layer.

The primitives are ``reshape``, ``broadcast_to``, ``transpose``,
``static_slice`` / ``slice_transpose``, ``concatenate``, ``split``, ``pad``
and ``roll``; ``expand_dims``, ``squeeze`` (reshapes) and ``moveaxis`` (a
transpose) are strict composites rules use. Their strict wrappers take
params as they are: full shapes, non-negative axes, tuples. ``ftorch.numpy``
parses shapes and axes (-1, negative axes, ints for tuples), checks
arguments, promotes dtypes and builds the other ops (``flip``, ``tile``,
``repeat``, the modes of ``pad``...) on these, whose derivatives then cost
no more than the forward op.

All but ``pad`` are linear in their operand: a JVP applies the op to the
tangent, and a VJP is the transposed op (the inverse permutation, a
sum back to the unbroadcast shape, a slice of the padded cotangent...).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.moveaxis(lax.reshape(mx.arange(6), (2, 3)), 0, 1).shape
(3, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of, is_inexact, mlx_at, mlx_getitem
from ftorch.memory import check_fits
from ftorch.primitives._rules import linear, move_bdim, shape_of, unbroadcast
from ftorch.typing import Shape

__all__ = [
    "reshape", "transpose", "broadcast_to", "static_slice", "slice_transpose",
    "concatenate", "split", "pad", "roll", "expand_dims", "squeeze", "moveaxis",
]

Slices = tuple[tuple[int | None, int | None, int | None], ...]


def _shift(axis: int, bdim: int) -> int:
    """A per-example axis as an axis of the batched array (batch at ``bdim``)."""
    return axis + (axis >= bdim)


def _with_batch(params: tuple, bdim: int, entry: Any) -> tuple:
    """Per-axis ``params`` with ``entry`` for the batch axis at ``bdim``."""
    return params[:bdim] + (entry,) + params[bdim:]


# ----------------------------------------------------------------------------
# reshape, and the strict composites that only reshape
# ----------------------------------------------------------------------------

reshape_p = Primitive("reshape", lambda x, shape: mx.reshape(x, shape))
linear(reshape_p, lambda ct, x, *, shape: reshape_p.bind(ct, shape=shape_of(x)))


@reshape_p.def_batch
def _reshape_batch(vals, dims, axis_size, *, shape):
    x = move_bdim(vals[0], dims[0], 0, axis_size)
    return reshape_p.bind(x, shape=(axis_size, *shape)), 0


def reshape(x: Any, shape: Shape) -> Any:
    """``x`` with the full ``shape`` (of the same size; no -1); ``x`` itself
    when it has that shape already."""
    return x if shape == shape_of(x) else reshape_p.bind(x, shape=shape)


def expand_dims(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with length-1 axes at the non-negative positions ``axes`` of the
    result."""
    dims = iter(shape_of(x))
    return reshape(x, tuple(1 if i in axes else next(dims)
                            for i in range(len(shape_of(x)) + len(axes))))


def squeeze(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` without its length-1 axes ``axes`` (non-negative)."""
    return reshape(x, tuple(d for i, d in enumerate(shape_of(x)) if i not in axes))


# ----------------------------------------------------------------------------
# transpose, and the strict composite that only permutes axes
# ----------------------------------------------------------------------------


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


transpose_p = Primitive("transpose", lambda x, axes: mx.transpose(x, axes))
linear(transpose_p, lambda ct, x, *, axes: transpose_p.bind(ct, axes=_inverse(axes)))


@transpose_p.def_batch
def _transpose_batch(vals, dims, axis_size, *, axes):
    (x,), (d,) = vals, dims
    return transpose_p.bind(x, axes=_with_batch(tuple(_shift(a, d) for a in axes), d, d)), d


def transpose(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with its axes permuted by ``axes`` (a full permutation of
    non-negative axes); ``x`` itself for the identity."""
    if axes == tuple(range(len(axes))):
        return x
    return transpose_p.bind(x, axes=axes)


def moveaxis(x: Any, source: int, destination: int) -> Any:
    """``x`` with axis ``source`` moved to position ``destination`` (both
    non-negative); the other axes keep their order."""
    perm = [a for a in range(len(shape_of(x))) if a != source]
    perm.insert(destination, source)
    return transpose(x, tuple(perm))


# ----------------------------------------------------------------------------
# broadcast_to
# ----------------------------------------------------------------------------

broadcast_to_p = Primitive("broadcast_to", lambda x, shape: mx.broadcast_to(x, shape))
linear(broadcast_to_p, lambda ct, x, *, shape: unbroadcast(ct, x))


@broadcast_to_p.def_batch
def _broadcast_to_batch(vals, dims, axis_size, *, shape):
    # Right-aligned broadcasting keeps the batch axis at the same distance
    # from the end, so it only needs a slot in the target shape.
    (x,), (d,) = vals, dims
    x_aval = aval_of(x)
    out_dim = d + len(shape) - (x_aval.ndim - 1)
    batched = _with_batch(shape, out_dim, axis_size)
    check_fits(batched, x_aval.dtype, "broadcast_to (under ft.vmap)")
    return broadcast_to_p.bind(x, shape=batched), out_dim


def broadcast_to(x: Any, shape: Shape) -> Any:
    """``x`` broadcast to the full ``shape`` (which it must broadcast to);
    ``x`` itself when it has that shape already. A ``MemoryError`` when the
    result would not fit on the device (checked here: under jit the impl runs
    only later)."""
    if shape == shape_of(x):
        return x
    check_fits(shape, aval_of(x).dtype, "broadcast_to")
    return broadcast_to_p.bind(x, shape=shape)


# ----------------------------------------------------------------------------
# static_slice and its transpose, slice_transpose
# ----------------------------------------------------------------------------

# ``static_slice`` is the primitive behind basic indexing (ints, slices with
# any step): ``slices`` holds one normalized (start, stop, step) per leading
# axis. Its transpose, ``slice_transpose``, adds a cotangent into zeros at the
# sliced positions; the two are each other's VJP.


def _as_slices(slices: Slices) -> tuple[slice, ...]:
    return tuple(slice(*s) for s in slices)


def _is_reversal(slices: Slices, shape: Shape) -> bool:
    """Whether every slice keeps or reverses its whole axis (a flip)."""
    return all(
        (s == (0, d, 1)) or (s == (d - 1, None, -1)) for s, d in zip(slices, shape))


def _static_slice_transpose(ct, x, *, slices):
    shape = shape_of(x)
    if _is_reversal(slices, shape):
        # A flip is its own transpose: no zeros, no scatter.
        return static_slice_p.bind(ct, slices=slices)
    return slice_transpose_p.bind(ct, slices=slices, shape=shape)


static_slice_p = Primitive("static_slice",
                           lambda x, slices: mlx_getitem(x, _as_slices(slices)))
linear(static_slice_p, _static_slice_transpose)


@static_slice_p.def_batch
def _static_slice_batch(vals, dims, axis_size, *, slices):
    (x,), (d,) = vals, dims
    if d < len(slices):
        slices = _with_batch(slices, d, (0, axis_size, 1))
    return static_slice_p.bind(x, slices=slices), d


def static_slice(x: Any, slices: Sequence[slice]) -> Any:
    """``x[slices]`` for a tuple of Python slices over the leading axes
    (``x`` itself when they select everything).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.static_slice(mx.arange(6), (slice(None, None, -2),)).tolist()
    [5, 3, 1]
    """
    shape = shape_of(x)
    if len(slices) > len(shape):
        raise IndexError(f"too many slices ({len(slices)}) for an array of ndim {len(shape)}")
    # Canonical form keeps params hashable and equal for equal slices: an
    # empty slice is (0, 0, 1) (a normalized start of -1 would mean "last"
    # if fed back to a slice), the stop is tight, and a stop before index 0
    # is written None.
    norm = []
    for s, d in zip(slices, shape):
        r = range(*s.indices(d))
        if not r:
            norm.append((0, 0, 1))
        else:
            stop = r.start + len(r) * r.step
            norm.append((r.start, None if stop < 0 else stop, r.step))
    norm = tuple(norm)
    if all(n[0] == 0 and n[1] == d and n[2] == 1 for n, d in zip(norm, shape)):
        return x
    return static_slice_p.bind(x, slices=norm)


slice_transpose_p = Primitive(
    "slice_transpose",
    lambda ct, slices, shape: mlx_at(mx.zeros(shape, ct.dtype))[_as_slices(slices)].add(ct))
linear(slice_transpose_p,
       lambda ct, x, *, slices, shape: static_slice_p.bind(ct, slices=slices))


@slice_transpose_p.def_batch
def _slice_transpose_batch(vals, dims, axis_size, *, slices, shape):
    (ct,), (d,) = vals, dims
    if d < len(slices):
        slices = _with_batch(slices, d, (0, axis_size, 1))
    return slice_transpose_p.bind(ct, slices=slices, shape=_with_batch(shape, d, axis_size)), d


def slice_transpose(ct: Any, slices: Slices, shape: Shape) -> Any:
    """Zeros of ``shape`` with ``ct`` added at the positions that the
    canonical ``slices`` (as ``static_slice`` binds them) select: the
    transpose of that slice."""
    return slice_transpose_p.bind(ct, slices=slices, shape=shape)


# ----------------------------------------------------------------------------
# concatenate and split
# ----------------------------------------------------------------------------


def _concatenate_jvp(primals, tangents, *, axis):
    out = concatenate_p.bind(*primals, axis=axis)
    ts = [lax.zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
    return out, concatenate_p.bind(*ts, axis=axis)


def _concatenate_vjp(ct, out, *xs, needed, axis):
    cts, start = [], 0
    for x, need in zip(xs, needed):
        n = shape_of(x)[axis]
        if need:
            cts.append(static_slice(ct, (slice(None),) * axis + (slice(start, start + n),)))
        else:
            cts.append(None)
        start += n
    return tuple(cts)


concatenate_p = Primitive("concatenate", lambda *xs, axis: mx.concatenate(xs, axis=axis))
concatenate_p.def_jvp(_concatenate_jvp)
concatenate_p.def_vjp(_concatenate_vjp)


@concatenate_p.def_batch
def _concatenate_batch(vals, dims, axis_size, *, axis):
    d = next(d for d in dims if d is not None)
    xs = [move_bdim(x, e, d, axis_size) for x, e in zip(vals, dims)]
    return concatenate_p.bind(*xs, axis=_shift(axis, d)), d


def concatenate(xs: Sequence[Any], axis: int) -> Any:
    """The arrays ``xs`` (of one dtype, equal shapes but along ``axis``, a
    non-negative axis) joined along ``axis``."""
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, axis=axis)


# ``split`` cuts an axis at non-decreasing ``indices`` into consecutive pieces
# in one primitive, so that its VJP is one concatenate of the pieces'
# cotangents (zeros for pieces without one) rather than one full-size
# scatter per piece.

split_p = Primitive(
    "split", lambda x, indices, axis: mx.split(x, list(indices), axis=axis),
    multiple_results=True)


@split_p.def_jvp
def _split_jvp(primals, tangents, *, indices, axis):
    return (split_p.bind(*primals, indices=indices, axis=axis),
            split_p.bind(*tangents, indices=indices, axis=axis))


@split_p.def_vjp
def _split_vjp(cts, outs, x, *, needed, indices, axis):
    if not needed[0]:
        return (None,)
    pieces = [lax.zeros_like(o) if c is None else c for c, o in zip(cts, outs)]
    return (concatenate_p.bind(*pieces, axis=axis),)


@split_p.def_batch
def _split_batch(vals, dims, axis_size, *, indices, axis):
    (x,), (d,) = vals, dims
    outs = split_p.bind(x, indices=indices, axis=_shift(axis, d))
    return outs, [d] * len(outs)


def split(x: Any, indices: tuple[int, ...], axis: int) -> list[Any]:
    """``x`` cut along the non-negative ``axis`` at the non-decreasing
    ``indices`` into consecutive pieces (``[x]`` when there are none)."""
    if not indices:
        return [x]
    return split_p.bind(x, indices=indices, axis=axis)


# ----------------------------------------------------------------------------
# pad
# ----------------------------------------------------------------------------


def _pad_jvp(primals, tangents, *, pad_width):
    x, c = primals
    tx, tc = tangents
    out = pad_p.bind(x, c, pad_width=pad_width)
    if not is_inexact(aval_of(out).dtype):
        return out, None
    if tx is None:
        tx = lax.zeros_like(x)
    return out, pad_p.bind(tx, 0 if tc is None else tc, pad_width=pad_width)


def _pad_vjp(ct, out, x, c, *, needed, pad_width):
    shape = shape_of(x)
    ct_x = ct_c = None
    if needed[0]:
        ct_x = static_slice(ct, tuple(slice(b, b + d) for (b, _), d in zip(pad_width, shape)))
    if needed[1]:
        # The padding value receives the cotangents of every padded position.
        mask = mx.pad(mx.zeros(shape, aval_of(ct).dtype), pad_width, constant_values=1)
        ct_c = reshape(lax.sum(lax.multiply(ct, mask), tuple(range(len(shape)))), shape_of(c))
        if aval_of(ct_c).dtype != aval_of(c).dtype:
            ct_c = lax.astype(ct_c, aval_of(c).dtype)
    return ct_x, ct_c


pad_p = Primitive("pad", lambda x, c, pad_width: mx.pad(x, pad_width, constant_values=c))
pad_p.def_jvp(_pad_jvp)
pad_p.def_vjp(_pad_vjp)


@pad_p.def_batch
def _pad_batch(vals, dims, axis_size, *, pad_width):
    (x, c), (dx, dc) = vals, dims
    if dc is None:
        return pad_p.bind(x, c, pad_width=_with_batch(pad_width, dx, (0, 0))), dx
    # A batched padding value: pad with zeros, then fill the padded positions
    # with each example's value.
    d = 0 if dx is None else dx
    x = move_bdim(x, dx, d, axis_size)
    shape = list(aval_of(x).shape)
    del shape[d]
    out = pad_p.bind(x, 0, pad_width=_with_batch(pad_width, d, (0, 0)))
    mask = mx.pad(mx.zeros(tuple(shape), mx.bool_), pad_width, constant_values=True)
    mask = mx.expand_dims(mask, d)
    c = move_bdim(c, dc, 0, axis_size)
    dtype = aval_of(x).dtype
    if aval_of(c).dtype != dtype:
        c = lax.astype(c, dtype)
    c = reshape(c, (1,) * d + (axis_size,) + (1,) * (len(shape) - d))
    return lax.where(mask, c, out), d


def pad(x: Any, value: Any, pad_width: tuple[tuple[int, int], ...]) -> Any:
    """``x`` extended by ``pad_width`` (one non-negative ``(before, after)``
    pair per axis) with the scalar ``value`` (a Python scalar or a 0-d
    array, which may be traced)."""
    return pad_p.bind(x, value, pad_width=pad_width)


# ----------------------------------------------------------------------------
# roll
# ----------------------------------------------------------------------------

roll_p = Primitive("roll", lambda x, shift, axes: mx.roll(x, shift, axes))
linear(roll_p, lambda ct, x, *, shift, axes: roll_p.bind(
    ct, shift=tuple(-s for s in shift), axes=axes))


@roll_p.def_batch
def _roll_batch(vals, dims, axis_size, *, shift, axes):
    (x,), (d,) = vals, dims
    return roll_p.bind(x, shift=shift, axes=tuple(_shift(a, d) for a in axes)), d


def roll(x: Any, shift: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """``x`` shifted cyclically by ``shift[i]`` along the non-negative axis
    ``axes[i]``."""
    return roll_p.bind(x, shift=shift, axes=axes)
