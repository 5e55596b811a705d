"""Shape primitives: reshaping, broadcasting, joining, reordering axes."""

from __future__ import annotations

from typing import Any, Sequence

import mlx.core as mx

from ftorch import numpy as fnp
from ftorch.core import Primitive
from ftorch.primitives._rules import shape_of, unbroadcast

__all__ = ["reshape", "broadcast_to", "expand_dims", "concatenate", "stack"]

Slices = tuple[tuple[int | None, int | None, int | None], ...]


def _shape_arg(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)


reshape_p = Primitive("reshape", lambda x, shape: mx.reshape(x, shape))
reshape_p.jvp = lambda primals, tangents, shape: (
    reshape_p.bind(*primals, shape=shape), reshape_p.bind(*tangents, shape=shape))
reshape_p.vjp = lambda ct, out, x, shape: (reshape_p.bind(ct, shape=shape_of(x)),)


def reshape(x: Any, shape: int | Sequence[int], *more: int) -> Any:
    """``x`` with a new shape of the same size; one dimension may be -1.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.reshape(mx.arange(6), (2, -1)).shape
    (2, 3)
    """
    x = fnp.asarray(x)
    shape = _shape_arg(shape) + tuple(more)
    size = x.size
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only infer one dimension, got shape {shape}")
    if -1 in shape:
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    n = 1
    for d in shape:
        n *= d
    if n != size or any(d < 0 for d in shape):
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
    if shape == tuple(x.shape):
        return x
    return reshape_p.bind(x, shape=shape)


broadcast_to_p = Primitive("broadcast_to", lambda x, shape: mx.broadcast_to(x, shape))
broadcast_to_p.jvp = lambda primals, tangents, shape: (
    broadcast_to_p.bind(*primals, shape=shape), broadcast_to_p.bind(*tangents, shape=shape))
broadcast_to_p.vjp = lambda ct, out, x, shape: (unbroadcast(ct, x),)


def broadcast_to(x: Any, shape: int | Sequence[int]) -> Any:
    """``x`` broadcast to ``shape`` by NumPy's rules.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.broadcast_to(mx.array([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    """
    x = fnp.asarray(x)
    shape = _shape_arg(shape)
    xs = tuple(x.shape)
    if len(xs) > len(shape) or any(
            d != s and d != 1 for d, s in zip(xs[::-1], shape[::-1])):
        raise ValueError(f"broadcast_to: cannot broadcast shape {xs} to {shape}")
    if xs == shape:
        return x
    return broadcast_to_p.bind(x, shape=shape)


def expand_dims(x: Any, axis: int | Sequence[int]) -> Any:
    """``x`` with new length-1 axes at ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.expand_dims(mx.ones(3), 0).shape
    (1, 3)
    """
    x = fnp.asarray(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    norm = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"expand_dims: axis {a} is out of range for the result's ndim {ndim}")
        norm.append(a % ndim)
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims: repeated axis in {axis!r}")
    dims = iter(x.shape)
    return reshape(x, tuple(1 if i in norm else next(dims) for i in range(ndim)))


# ``static_slice`` is the primitive behind basic indexing (ints, slices with
# any step): ``slices`` holds one normalized (start, stop, step) per leading
# axis. Its transpose, ``slice_transpose``, adds a cotangent into zeros at the
# sliced positions; the two are each other's VJP.


def _as_slices(slices: Slices) -> tuple[slice, ...]:
    return tuple(slice(*s) for s in slices)


static_slice_p = Primitive("static_slice", lambda x, slices: x[_as_slices(slices)])
slice_transpose_p = Primitive(
    "slice_transpose",
    lambda ct, slices, shape: mx.zeros(shape, ct.dtype).at[_as_slices(slices)].add(ct))

static_slice_p.jvp = lambda primals, tangents, slices: (
    static_slice_p.bind(*primals, slices=slices), static_slice_p.bind(*tangents, slices=slices))
static_slice_p.vjp = lambda ct, out, x, slices: (
    slice_transpose_p.bind(ct, slices=slices, shape=shape_of(x)),)
slice_transpose_p.jvp = lambda primals, tangents, slices, shape: (
    slice_transpose_p.bind(*primals, slices=slices, shape=shape),
    slice_transpose_p.bind(*tangents, slices=slices, shape=shape))
slice_transpose_p.vjp = lambda ct, out, x, slices, shape: (
    static_slice_p.bind(ct, slices=slices),)


def static_slice(x: Any, slices: Sequence[slice]) -> Any:
    """``x[slices]`` for a tuple of Python slices over the leading axes.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> from ftorch.primitives.shape import static_slice
    >>> static_slice(mx.arange(6), (slice(None, None, -2),)).tolist()
    [5, 3, 1]
    """
    x = fnp.asarray(x)
    if len(slices) > x.ndim:
        raise IndexError(f"too many slices ({len(slices)}) for an array of ndim {x.ndim}")
    norm = tuple(s.indices(d) for s, d in zip(slices, x.shape))
    # Canonical form keeps params hashable and equal for equal slices; a
    # negative stop of -1 would mean "last" to Python, so write None instead.
    norm = tuple((start, None if stop < 0 else stop, step) for start, stop, step in norm)
    if all(n[0] == 0 and n[1] == d and n[2] == 1 for n, d in zip(norm, x.shape)):
        return x
    return static_slice_p.bind(x, slices=norm)


def _concatenate_jvp(primals, tangents, axis):
    out = concatenate_p.bind(*primals, axis=axis)
    ts = [fnp.zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
    return out, concatenate_p.bind(*ts, axis=axis)


def _concatenate_vjp(ct, out, *xs, axis):
    cts, start = [], 0
    for x in xs:
        n = shape_of(x)[axis]
        cts.append(static_slice(ct, (slice(None),) * axis + (slice(start, start + n),)))
        start += n
    return tuple(cts)


concatenate_p = Primitive(
    "concatenate", lambda *xs, axis: mx.concatenate(xs, axis=axis),
    jvp=_concatenate_jvp, vjp=_concatenate_vjp)


def concatenate(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays along an existing ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.concatenate([mx.ones(2), mx.zeros(3)]).shape
    (5,)
    """
    arrays = [fnp.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("concatenate: needs at least one array")
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    if not -ndim <= axis < ndim:
        raise ValueError(f"concatenate: axis {axis} is out of range for arrays of ndim {ndim}")
    axis %= ndim
    dtype = fnp.result_type(*arrays)
    arrays = [fnp.astype(a, dtype) for a in arrays]
    for i, a in enumerate(arrays):
        if a.ndim != ndim or any(
                d != e for j, (d, e) in enumerate(zip(a.shape, arrays[0].shape)) if j != axis):
            raise ValueError(
                f"concatenate: array {i} has shape {a.shape}, incompatible with "
                f"{arrays[0].shape} along axis {axis}")
    if len(arrays) == 1:
        return arrays[0]
    return concatenate_p.bind(*arrays, axis=axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays of equal shape along a new ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.stack([mx.ones(2), mx.zeros(2)]).shape
    (2, 2)
    """
    arrays = [fnp.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("stack: needs at least one array")
    shape = tuple(arrays[0].shape)
    for i, a in enumerate(arrays):
        if tuple(a.shape) != shape:
            raise ValueError(f"stack: array {i} has shape {tuple(a.shape)}, expected {shape}")
    ndim = len(shape) + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"stack: axis {axis} is out of range for the result's ndim {ndim}")
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis % ndim) if len(
        arrays) > 1 else expand_dims(arrays[0], axis)

