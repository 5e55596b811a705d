"""Shape ops as in NumPy / jax.numpy: reshaping (with -1), axis
permutations, broadcasting, joining and splitting, padding with NumPy's
modes, tiling, repeating, flipping and rolling, grids, diagonals and
triangles. Shapes and axes are parsed
here (ints or sequences, negative axes, integer-like values, with errors
that name the function and the argument), then handed to the strict
wrappers of ``ftorch.primitives.shape``; ``flip``, ``tile``, ``repeat``,
the modes of ``pad``, the diagonals (static slices of a reshape) and the
triangles (a ``where`` on a constant mask) are built on those.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.reshape(mx.arange(6), (3, -1)).shape
(3, 2)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Tracer
from ftorch.lax import composites
from ftorch.memory import check_fits
from ftorch.numpy import _creation, _elementwise
from ftorch.primitives.creation import static_int, static_shape

__all__ = [
    "reshape", "ravel", "flatten", "transpose", "moveaxis", "swapaxes", "expand_dims",
    "squeeze", "broadcast_to", "broadcast_arrays", "meshgrid", "concatenate", "stack",
    "split", "array_split", "vsplit", "hsplit", "dsplit", "pad", "tile", "repeat", "flip",
    "roll", "diagonal", "diag", "diagflat", "tril", "triu", "fill_diagonal",
]


# ----------------------------------------------------------------------------
# Parsing ints, shapes and axes
# ----------------------------------------------------------------------------


def _index(value: Any, fname: str, what: str) -> int:
    if isinstance(value, Tracer):  # its own error under jit and vmap, prefixed
        return static_int(value, fname, what)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be an integer, got {value!r}") from None


def _int_tuple(value: Any, fname: str, what: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints."""
    if isinstance(value, Tracer):
        if not value.ndim:
            return (_index(value, fname, what),)
    else:
        try:
            return (operator.index(value),)
        except TypeError:
            pass
    try:
        items = list(value)
    except TypeError:
        raise TypeError(
            f"{fname}: {what} must be an int or a sequence of ints, got {value!r}") from None
    return tuple(_index(v, fname, what) for v in items)


def _axis(axis: Any, ndim: int, fname: str, what: str = "axis") -> int:
    return check_axis(_index(axis, fname, what), ndim, fname, what)


def _axes(axes: Any, ndim: int, fname: str, what: str = "axis") -> tuple[int, ...]:
    """Distinct axes, normalized to non-negative ints, in the order given."""
    out = tuple(_axis(a, ndim, fname, what) for a in _int_tuple(axes, fname, what))
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {what} {axes!r}")
    return out


def _axes_or_all(axis: Any, ndim: int, fname: str) -> tuple[int, ...]:
    """``axis`` (None for every axis) as sorted distinct non-negative axes."""
    return tuple(range(ndim)) if axis is None else tuple(sorted(_axes(axis, ndim, fname)))


def _along(axis: int, s: slice) -> tuple[slice, ...]:
    return (slice(None),) * axis + (s,)


# ----------------------------------------------------------------------------
# reshape and the ops that only reshape
# ----------------------------------------------------------------------------


def _reshape_arg(shape: Any, more: tuple) -> tuple[int, ...]:
    """``reshape``'s shape (an int or a sequence of ints, or ints spread over
    ``shape`` and ``more``) as a tuple of ints; -1 is checked by the caller."""
    if not more and type(shape) is tuple:
        for d in shape:
            if type(d) is not int:
                break
        else:
            return shape
    return _int_tuple(shape, "reshape", "shape") + tuple(
        _index(d, "reshape", "shape") for d in more)


def reshape(x: Any, shape: int | Sequence[int], *more: int) -> Any:
    """``x`` with a new shape of the same size; one dimension may be -1.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.reshape(mx.arange(6), (2, -1)).shape
    (2, 3)
    """
    x = _creation.asarray(x)
    shape = _reshape_arg(shape, more)
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
    return lax.reshape(x, shape)


def ravel(x: Any, order: str = "C") -> Any:
    """``x`` as a 1-D array, in row-major (``order="C"``) or column-major
    (``order="F"``) order.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ravel(mx.array([[1, 2], [3, 4]])).tolist()
    [1, 2, 3, 4]
    """
    x = _creation.asarray(x)
    if order == "F":
        x = lax.transpose(x, tuple(range(x.ndim - 1, -1, -1)))
    elif order != "C":
        raise ValueError(f"ravel: order must be 'C' or 'F', got {order!r}")
    return lax.reshape(x, (x.size,))


def flatten(x: Any, start_axis: int = 0, end_axis: int = -1) -> Any:
    """Merge the axes ``start_axis`` through ``end_axis`` (inclusive) into one;
    with the defaults, ``x`` as a 1-D array (like ``ravel``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.flatten(mx.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    if not shape:  # like MLX, a 0-d array flattens to shape (1,)
        for what, a in (("start_axis", start_axis), ("end_axis", end_axis)):
            check_axis(_index(a, "flatten", what), 1, "flatten", what, of="a 0-d array")
        return lax.reshape(x, (1,))
    start = _axis(start_axis, len(shape), "flatten", "start_axis")
    end = _axis(end_axis, len(shape), "flatten", "end_axis")
    if start > end:
        raise ValueError(
            f"flatten: start_axis {start_axis} comes after end_axis {end_axis} "
            f"for an array of ndim {len(shape)}")
    n = 1
    for d in shape[start:end + 1]:
        n *= d
    return lax.reshape(x, shape[:start] + (n,) + shape[end + 1:])


def expand_dims(x: Any, axis: int | Sequence[int]) -> Any:
    """``x`` with new length-1 axes at ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.expand_dims(mx.ones(3), 0).shape
    (1, 3)
    """
    x = _creation.asarray(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    norm = []
    for a in axes:
        norm.append(check_axis(a, ndim, "expand_dims", of=f"the result's ndim {ndim}"))
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims: repeated axis in {axis!r}")
    return lax.expand_dims(x, tuple(norm))


def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Any:
    """``x`` without its length-1 axes (all of them, or those in ``axis``,
    which must have length 1).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.squeeze(mx.zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    if axis is None:
        return lax.squeeze(x, tuple(i for i, d in enumerate(shape) if d == 1))
    axes = _axes_or_all(axis, len(shape), "squeeze")
    for a in axes:
        if shape[a] != 1:
            raise ValueError(
                f"squeeze: cannot squeeze axis {a} of size {shape[a]} in an array of shape "
                f"{shape}; only axes of size 1 can be removed")
    return lax.squeeze(x, axes)


# ----------------------------------------------------------------------------
# transpose and the ops that only permute axes
# ----------------------------------------------------------------------------


def transpose(x: Any, axes: int | Sequence[int] | None = None, *more: int) -> Any:
    """``x`` with its axes permuted: axis ``i`` of the result is axis
    ``axes[i]`` of ``x`` (reversed when ``axes`` is None). Also accepts the
    axes as separate arguments, as in ``x.transpose(1, 0)``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.transpose(mx.zeros((2, 3, 4)), (1, 2, 0)).shape
    (3, 4, 2)
    """
    x = _creation.asarray(x)
    ndim = x.ndim
    if axes is None:
        if more:
            raise TypeError("transpose: axes given both as None and as extra arguments")
        return lax.transpose(x, tuple(range(ndim - 1, -1, -1)))
    if more:
        if not isinstance(axes, int):
            raise TypeError("transpose: give axes either as one sequence or as separate ints")
        axes = (axes, *more)
    perm = _int_tuple(axes, "transpose", "axes")
    if len(perm) != ndim:
        raise ValueError(
            f"transpose: axes {axes!r} do not match an array of ndim {ndim}; "
            f"give a permutation of {ndim} axes")
    return lax.transpose(x, _axes(perm, ndim, "transpose", "axes"))


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """``x`` with axes ``axis1`` and ``axis2`` interchanged.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.swapaxes(mx.zeros((2, 3, 4)), 0, -1).shape
    (4, 3, 2)
    """
    x = _creation.asarray(x)
    ndim = x.ndim
    a = _axis(axis1, ndim, "swapaxes", "axis1")
    b = _axis(axis2, ndim, "swapaxes", "axis2")
    perm = list(range(ndim))
    perm[a], perm[b] = b, a
    return lax.transpose(x, tuple(perm))


def moveaxis(x: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """``x`` with the axes ``source`` moved to positions ``destination``; the
    other axes keep their order.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.moveaxis(mx.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = _creation.asarray(x)
    ndim = x.ndim
    src = _axes(source, ndim, "moveaxis", "source")
    dst = _axes(destination, ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis: source {source!r} and destination {destination!r} must name "
            "the same number of axes")
    perm = [a for a in range(ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(x, tuple(perm))


# ----------------------------------------------------------------------------
# Broadcasting
# ----------------------------------------------------------------------------


def broadcast_to(x: Any, shape: int | Sequence[int]) -> Any:
    """``x`` broadcast to ``shape`` by NumPy's rules.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.broadcast_to(mx.array([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    """
    x = _creation.asarray(x)
    shape = static_shape(shape, "broadcast_to")
    _creation.check_broadcasts_to(tuple(x.shape), shape, "broadcast_to")
    return lax.broadcast_to(x, shape)


def broadcast_arrays(*arrays: Any) -> list[Any]:
    """The arrays broadcast against each other to one common shape.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [a.shape for a in fnp.broadcast_arrays(mx.zeros((2, 1)), mx.zeros(3))]
    [(2, 3), (2, 3)]
    """
    arrays = [_creation.asarray(a) for a in arrays]
    shapes = [tuple(a.shape) for a in arrays]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"broadcast_arrays: shapes {', '.join(map(str, shapes))} cannot be broadcast "
            "together") from None
    return [lax.broadcast_to(a, shape) for a in arrays]


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Coordinate grids from 1-D coordinate vectors, as ``numpy.meshgrid``.

    With ``indexing="xy"`` (Cartesian) the first two outputs have shape
    ``(len(xi[1]), len(xi[0]), ...)``; with ``"ij"`` (matrix) output ``i``
    varies along axis ``i``. ``sparse=True`` keeps each output's other axes
    at length 1 (they broadcast against each other). Arrays are immutable,
    so ``copy`` changes nothing (jax.numpy refuses ``copy=False``; NumPy's
    views are read-only copies here).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> gx, gy = fnp.meshgrid(mx.array([1, 2, 3]), mx.array([10, 20]))
    >>> gx.tolist(), gy.shape
    ([[1, 2, 3], [1, 2, 3]], (2, 3))
    >>> [g.shape for g in fnp.meshgrid(mx.zeros(3), mx.zeros(2), sparse=True, indexing="ij")]
    [(3, 1), (1, 2)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [_creation.asarray(a) for a in xi]
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(
                f"meshgrid: argument {i} must be 1-D, got an array of shape {tuple(a.shape)}")
    n = len(arrays)
    swap = indexing == "xy" and n >= 2
    # With "xy" the first two coordinates take each other's axes.
    axes = list(range(n))
    if swap:
        axes[0], axes[1] = 1, 0
    sizes = [0] * n
    for a, ax in zip(arrays, axes):
        sizes[ax] = a.shape[0]
    out = []
    for a, ax in zip(arrays, axes):
        shape = [1] * n
        shape[ax] = sizes[ax]
        a = lax.reshape(a, tuple(shape)) if n > 1 else a
        out.append(a if sparse else lax.broadcast_to(a, tuple(sizes)))
    return out


# ----------------------------------------------------------------------------
# Joining, splitting, flipping
# ----------------------------------------------------------------------------


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    """Join arrays along an existing ``axis`` (flattened first when ``axis``
    is None).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.concatenate([mx.ones(2), mx.zeros(3)]).shape
    (5,)
    """
    arrays = [_creation.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("concatenate: needs at least one array")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = check_axis(axis, ndim, "concatenate", of=f"arrays of ndim {ndim}")
    dtype = _creation.result_type(*arrays)
    arrays = [_elementwise.astype(a, dtype) for a in arrays]
    for i, a in enumerate(arrays):
        if a.ndim != ndim or any(
                d != e for j, (d, e) in enumerate(zip(a.shape, arrays[0].shape)) if j != axis):
            raise ValueError(
                f"concatenate: array {i} has shape {a.shape}, incompatible with "
                f"{arrays[0].shape} along axis {axis}")
    if len(arrays) == 1:
        return arrays[0]
    out_shape = list(arrays[0].shape)
    out_shape[axis] = sum(a.shape[axis] for a in arrays)
    check_fits(out_shape, dtype, "concatenate")
    return lax.concatenate(arrays, axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays of equal shape along a new ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.stack([mx.ones(2), mx.zeros(2)]).shape
    (2, 2)
    """
    arrays = [_creation.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("stack: needs at least one array")
    return _creation.stacked(arrays, axis, "stack")


def split(x: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """``x`` cut along ``axis`` into a list of arrays: into that many equal
    sections when ``indices_or_sections`` is an int, else at those indices
    (``x[:i0]``, ``x[i0:i1]``, ..., ``x[ik:]``, with Python's slice rules).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.tolist() for p in fnp.split(mx.arange(5), [2])]
    [[0, 1], [2, 3, 4]]
    """
    return _split(x, indices_or_sections, axis, "split")


def _split(x: Any, indices_or_sections: Any, axis: Any, fname: str) -> list[Any]:
    """``split``, with errors naming ``fname``."""
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    if not shape:
        raise ValueError(f"{fname}: cannot split a zero-dimensional array")
    ax = _axis(axis, len(shape), fname)
    n = shape[ax]
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        sections = None
    if sections is not None:
        if sections <= 0:
            raise ValueError(
                f"{fname}: indices_or_sections must be a positive number of sections, "
                f"got {sections}")
        if n % sections:
            raise ValueError(
                f"{fname}: axis {ax} of size {n} does not divide into {sections} equal "
                "sections")
        size = n // sections
        bounds = [(i * size, (i + 1) * size) for i in range(sections)]
    else:
        idx = _int_tuple(indices_or_sections, fname, "indices_or_sections")
        cuts = (0, *idx, n)
        bounds = [slice(a, b).indices(n)[:2] for a, b in zip(cuts[:-1], cuts[1:])]
        bounds = [(a, max(a, b)) for a, b in bounds]
    if len(bounds) == 1:
        return [x]
    if all(b0[1] == b1[0] for b0, b1 in zip(bounds[:-1], bounds[1:])):
        return lax.split(x, tuple(b[0] for b in bounds[1:]), ax)
    # Decreasing indices make overlapping or out-of-order pieces.
    return [lax.static_slice(x, _along(ax, slice(a, b))) for a, b in bounds]


def array_split(x: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """``split`` that also takes a number of sections that does not divide
    the axis, as ``numpy.array_split``: with ``n`` elements and ``s`` sections,
    the first ``n % s`` sections get one element more than the others (and
    some are empty when ``s > n``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.tolist() for p in fnp.array_split(mx.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        return _split(x, indices_or_sections, axis, "array_split")
    x = _creation.asarray(x)
    if not x.ndim:
        raise ValueError("array_split: cannot split a zero-dimensional array")
    n = x.shape[_axis(axis, x.ndim, "array_split")]
    if sections <= 0:
        raise ValueError(
            f"array_split: indices_or_sections must be a positive number of sections, "
            f"got {sections}")
    each, extra = divmod(n, sections)
    cuts, at = [], 0
    for i in range(sections - 1):
        at += each + (i < extra)
        cuts.append(at)
    return _split(x, cuts, axis, "array_split")


def _split_along(fname: str, x: Any, indices_or_sections: Any, axis: int, min_ndim: int):
    x = _creation.asarray(x)
    if x.ndim < min_ndim:
        raise ValueError(
            f"{fname}: needs an array of {min_ndim} or more dimensions, got shape "
            f"{tuple(x.shape)}")
    return _split(x, indices_or_sections, axis, fname)


def vsplit(x: Any, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """``split`` along axis 0 of an array of 2 or more dimensions.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.shape for p in fnp.vsplit(mx.zeros((4, 3)), 2)]
    [(2, 3), (2, 3)]
    """
    return _split_along("vsplit", x, indices_or_sections, 0, 2)


def hsplit(x: Any, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """``split`` along axis 1 (axis 0 of a 1-D array).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.shape for p in fnp.hsplit(mx.zeros((4, 3)), [1])]
    [(4, 1), (4, 2)]
    """
    x = _creation.asarray(x)
    return _split_along("hsplit", x, indices_or_sections, 0 if x.ndim == 1 else 1, 1)


def dsplit(x: Any, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """``split`` along axis 2 of an array of 3 or more dimensions.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [p.shape for p in fnp.dsplit(mx.zeros((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    return _split_along("dsplit", x, indices_or_sections, 2, 3)


def flip(x: Any, axis: int | Sequence[int] | None = None) -> Any:
    """``x`` with the order of its elements reversed along ``axis`` (all axes
    when None).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.flip(mx.array([[1, 2], [3, 4]]), axis=1).tolist()
    [[2, 1], [4, 3]]
    """
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    axes = _axes_or_all(axis, len(shape), "flip")
    # Reversing an axis of length 0 or 1 changes nothing.
    axes = [a for a in axes if shape[a] > 1]
    if not axes:
        return x
    rev = slice(None, None, -1)
    return lax.static_slice(
        x, tuple(rev if i in axes else slice(None) for i in range(axes[-1] + 1)))


# ----------------------------------------------------------------------------
# Padding
# ----------------------------------------------------------------------------


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_width(pad_width: Any, ndim: int) -> tuple[tuple[int, int], ...]:
    pw = np.asarray(pad_width.tolist() if isinstance(pad_width, mx.array) else pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be of integral type, got {pad_width!r}")
    if pw.ndim > 2:
        raise ValueError(f"pad: pad_width {pad_width!r} has too many dimensions")
    if pw.size == 2 and pw.ndim >= 1 and pw.shape != (2, 1):
        pw = pw.reshape(1, 2)  # one (before, after) pair for every axis, as NumPy
    try:
        pw = np.broadcast_to(pw, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: pad_width {pad_width!r} does not fit an array of ndim {ndim}; give an int, "
            f"a (before, after) pair or {ndim} such pairs") from None
    if (pw < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    return tuple((int(b), int(a)) for b, a in pw)


def _gather_runs(x: Any, axis: int, idx: np.ndarray) -> list[Any]:
    """Pieces whose concatenation along ``axis`` is ``x`` taken at the static
    indices ``idx``: maximal runs of steps +1, -1 (slices) or 0 (broadcasts)."""
    pieces, i, m = [], 0, len(idx)
    shape = list(x.shape)
    while i < m:
        j = i + 1
        step = int(idx[j] - idx[i]) if j < m else 1
        if step in (-1, 0, 1):
            while j < m and idx[j] - idx[j - 1] == step:
                j += 1
        else:
            step = 1
        a, b = int(idx[i]), int(idx[j - 1])
        if step == 1:
            pieces.append(lax.static_slice(x, _along(axis, slice(a, b + 1))))
        elif step == -1:
            pieces.append(lax.static_slice(x, _along(axis, slice(a, b - 1 if b else None, -1))))
        else:
            shape[axis] = j - i
            pieces.append(lax.broadcast_to(
                lax.static_slice(x, _along(axis, slice(a, a + 1))), tuple(shape)))
        i = j
    return pieces


def pad(x: Any, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
        mode: str = "constant", constant_values: Any = 0) -> Any:
    """``x`` extended at the edges of each axis, as ``numpy.pad``.

    ``pad_width`` is an int, a ``(before, after)`` pair or one pair per axis.
    ``mode`` is "constant" (fill with the scalar ``constant_values``, which
    may be a traced value), "edge", "reflect", "symmetric" or "wrap".

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.pad(mx.array([1, 2]), (1, 2)).tolist()
    [0, 1, 2, 0, 0]
    >>> fnp.pad(mx.array([1, 2, 3]), 2, mode="reflect").tolist()
    [3, 2, 1, 2, 3, 2, 1]
    """
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    widths = _pad_width(pad_width, len(shape))
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode {mode!r} is not supported; use one of {_PAD_MODES}")
    if not any(b or a for b, a in widths):
        return x
    check_fits([b + d + a for (b, a), d in zip(widths, shape)], x.dtype, "pad")
    if mode == "constant":
        c = constant_values
        if not isinstance(c, (bool, int, float)):
            c = _creation.asarray(c)
            if c.ndim != 0:
                raise ValueError(
                    f"pad: constant_values must be a scalar, got an array of shape {c.shape}")
        return lax.pad(x, c, widths)
    for i, ((b, a), n) in enumerate(zip(widths, shape)):
        if not (b or a):
            continue
        if n == 0:
            raise ValueError(f"pad: cannot extend the empty axis {i} with mode {mode!r}")
        # NumPy pads an index vector the same way, which gives the gather map.
        idx = np.pad(np.arange(n), (b, a), mode=mode)
        pieces = _gather_runs(x, i, idx[:b]) + [x] + _gather_runs(x, i, idx[b + n:])
        x = lax.concatenate(pieces, i)
    return x


# ----------------------------------------------------------------------------
# roll, tile, repeat
# ----------------------------------------------------------------------------


def roll(x: Any, shift: int | Sequence[int], axis: int | Sequence[int] | None = None) -> Any:
    """``x`` with its elements shifted cyclically by ``shift`` along ``axis``
    (over the flattened array when ``axis`` is None). ``shift`` and ``axis``
    may be sequences of the same length; shifts of a repeated axis add up.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.roll(mx.arange(5), 2).tolist()
    [3, 4, 0, 1, 2]
    """
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    shifts = _int_tuple(shift, "roll", "shift")
    if axis is None:
        if not x.size or not sum(shifts) % x.size:
            return x
        return lax.reshape(roll(ravel(x), sum(shifts), 0), shape)
    axes = _int_tuple(axis, "roll", "axis")
    if len(shifts) == 1:
        shifts *= len(axes)
    elif len(axes) == 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(
            f"roll: shift {shift!r} and axis {axis!r} must have the same length")
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        a = _axis(a, len(shape), "roll")
        total[a] = total.get(a, 0) + s
    # Shifts in [0, n) per axis: equal rolls get equal params.
    norm = sorted((a, s % shape[a]) for a, s in total.items() if shape[a])
    norm = [(a, s) for a, s in norm if s]
    if not norm:
        return x
    return lax.roll(x, tuple(s for _, s in norm), tuple(a for a, _ in norm))


def _repeat_each(x: Any, axis: int, r: int) -> Any:
    """Every element along ``axis`` repeated ``r`` times in a row."""
    shape = tuple(x.shape)
    n = shape[axis]
    if r == 1:
        return x
    out = shape[:axis] + (n * r,) + shape[axis + 1:]
    if n == 1:
        return lax.broadcast_to(x, out)
    inner = shape[:axis + 1] + (1,) + shape[axis + 1:]
    wide = shape[:axis + 1] + (r,) + shape[axis + 1:]
    return lax.reshape(lax.broadcast_to(lax.reshape(x, inner), wide), out)


def tile(x: Any, reps: int | Sequence[int]) -> Any:
    """``x`` repeated ``reps[i]`` times along axis ``i``, as ``numpy.tile``
    (``x`` gets leading length-1 axes when ``reps`` is longer than its ndim).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.tile(mx.array([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = _creation.asarray(x)
    reps = _int_tuple(reps, "tile", "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    shape = tuple(x.shape)
    d = max(len(reps), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    check_fits(tuple(s * r for s, r in zip(shape, reps)), x.dtype, "tile")
    return composites.tile(lax.reshape(x, shape), reps)


def repeat(x: Any, repeats: int | Sequence[int], axis: int | None = None) -> Any:
    """Each element of ``x`` repeated along ``axis`` (of the flattened array
    when ``axis`` is None): ``repeats`` times, or ``repeats[i]`` times for
    element ``i``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.repeat(mx.array([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    >>> fnp.repeat(mx.array([1, 2, 3]), [2, 0, 1]).tolist()
    [1, 1, 3]
    """
    x = _creation.asarray(x)
    if axis is None:
        x, ax = ravel(x), 0
    else:
        ax = _axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    reps = _int_tuple(repeats.tolist() if isinstance(repeats, mx.array) else repeats,
                      "repeat", "repeats")
    if any(r < 0 for r in reps):
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats!r}")
    out_shape = list(x.shape)
    out_shape[ax] = n * reps[0] if len(reps) == 1 else sum(reps)
    check_fits(out_shape, x.dtype, "repeat")
    if len(reps) == 1:
        return _repeat_each(x, ax, reps[0])
    if not n and not reps:
        return x
    if len(reps) != n:
        raise ValueError(
            f"repeat: repeats has {len(reps)} counts but axis {ax} has size {n}")
    # Split at changes of the count, so that each group repeats uniformly.
    starts = [0] + [i for i in range(1, n) if reps[i] != reps[i - 1]]
    groups = lax.split(x, tuple(starts[1:]), ax)
    pieces = [_repeat_each(g, ax, reps[s]) for g, s in zip(groups, starts) if reps[s]]
    if not pieces:
        return lax.static_slice(x, _along(ax, slice(0, 0)))
    return lax.concatenate(pieces, ax)


# ----------------------------------------------------------------------------
# Diagonals and triangles
# ----------------------------------------------------------------------------
#
# A diagonal of an (n, m) matrix is a strided run of its flattened elements,
# and a vector laid on a diagonal is the reverse: so both are static slices,
# pads and reshapes, whose transposes are each other (no gather or scatter).


def _matrix_axes_last(x: Any, axis1: int, axis2: int) -> Any:
    """``x`` with ``axis1`` and ``axis2`` moved to the end, in that order."""
    perm = [a for a in range(x.ndim) if a not in (axis1, axis2)] + [axis1, axis2]
    return x if perm == list(range(x.ndim)) else lax.transpose(x, tuple(perm))


def _diagonal_last(x: Any, offset: int) -> Any:
    """Diagonal ``offset`` of the matrices over ``x``'s last two axes, as the
    last axis of the result."""
    *batch, n, m = x.shape
    batch = tuple(batch)
    size = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    r0, c0 = max(-offset, 0), max(offset, 0)
    keep = (slice(None),) * len(batch)
    square = lax.static_slice(x, keep + (slice(r0, r0 + size), slice(c0, c0 + size)))
    flat = lax.reshape(square, batch + (size * size,))
    return lax.static_slice(flat, keep + (slice(None, None, size + 1),)) if size > 1 else (
        lax.reshape(flat, batch + (size,)))


def _strided(v: Any, start: int, step: int, total: int) -> Any:
    """A 1-D array of length ``total``, zero but at ``start + i * step``,
    where it holds ``v[i]`` (the last of them must lie before ``total``)."""
    n = v.shape[0]
    if step > 1 and n:
        v = lax.reshape(lax.pad(lax.reshape(v, (n, 1)), 0, ((0, 0), (0, step - 1))), (n * step,))
    length = v.shape[0]
    after = total - start - length
    v = lax.pad(v, 0, ((start, max(after, 0)),)) if start or after > 0 else v
    return lax.static_slice(v, (slice(0, total),)) if after < 0 else v


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal ``offset`` (above the main one when positive, below when
    negative) of the matrices over ``axis1`` and ``axis2``, as
    ``numpy.diagonal``: those axes are removed and the diagonal becomes the
    last axis (empty when ``offset`` is past the edge).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.arange(12).reshape(3, 4)
    >>> fnp.diagonal(x).tolist(), fnp.diagonal(x, 1).tolist(), fnp.diagonal(x, -1).tolist()
    ([0, 5, 10], [1, 6, 11], [4, 9])
    >>> fnp.diagonal(mx.zeros((2, 3, 4)), axis1=1, axis2=2).shape
    (2, 3)
    """
    return _diagonal(a, offset, axis1, axis2, "diagonal")


def _diagonal(a: Any, offset: Any, axis1: Any, axis2: Any, fname: str) -> Any:
    """``diagonal`` (and ``trace``'s), with errors naming ``fname``."""
    a = _creation.asarray(a)
    if a.ndim < 2:
        raise ValueError(
            f"{fname}: a must have at least 2 dimensions, got shape {tuple(a.shape)}")
    offset = _index(offset, fname, "offset")
    ax1 = _axis(axis1, a.ndim, fname, "axis1")
    ax2 = _axis(axis2, a.ndim, fname, "axis2")
    if ax1 == ax2:
        raise ValueError(
            f"{fname}: axis1 and axis2 must be different axes, got {axis1} and {axis2} "
            f"(both axis {ax1})")
    return _diagonal_last(_matrix_axes_last(a, ax1, ax2), offset)


def _diag_matrix(v: Any, k: int, fname: str) -> Any:
    """The square matrix with the 1-D ``v`` on diagonal ``k`` and zeros elsewhere."""
    n = v.shape[0] + abs(k)
    check_fits((n, n), v.dtype, fname)
    start = k if k >= 0 else -k * n
    return lax.reshape(_strided(v, start, n + 1, n * n), (n, n))


def diag(v: Any, k: int = 0) -> Any:
    """For a 1-D ``v``, the square matrix with ``v`` on diagonal ``k`` (above
    the main one when positive) and zeros elsewhere; for a 2-D ``v``, its
    diagonal ``k``. As ``numpy.diag``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.diag(mx.array([1, 2]), k=1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    >>> fnp.diag(mx.array([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    v = _creation.asarray(v)
    k = _index(k, "diag", "k")
    if v.ndim == 1:
        return _diag_matrix(v, k, "diag")
    if v.ndim == 2:
        return _diagonal_last(v, k)
    raise ValueError(f"diag: v must be 1-D or 2-D, got an array of shape {tuple(v.shape)}")


def diagflat(v: Any, k: int = 0) -> Any:
    """The square matrix with the flattened ``v`` on diagonal ``k``, as
    ``numpy.diagflat`` (always 2-D, as in jax.numpy).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.diagflat(mx.array([[1, 2]]), -1).tolist()
    [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    """
    v = _creation.asarray(v)
    return _diag_matrix(ravel(v), _index(k, "diagflat", "k"), "diagflat")


def _triangle(m: Any, k: Any, lower: bool, fname: str) -> Any:
    m = _creation.asarray(m)
    if m.ndim < 2:
        raise ValueError(
            f"{fname}: m must have at least 2 dimensions, got shape {tuple(m.shape)}")
    k = _index(k, fname, "k")
    n, cols = m.shape[-2:]
    # A constant mask: the where's VJP masks the cotangent the same way.
    mask = mx.tri(n, cols, k, dtype=mx.bool_) if lower else mx.logical_not(
        mx.tri(n, cols, k - 1, dtype=mx.bool_))
    return lax.where(mask, m, mx.zeros((), m.dtype))


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the elements above diagonal ``k`` of its matrices (over the
    last two axes) set to zero, as ``numpy.tril``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.tril(mx.ones((2, 3), mx.int32)).tolist()
    [[1, 0, 0], [1, 1, 0]]
    """
    return _triangle(m, k, True, "tril")


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the elements below diagonal ``k`` of its matrices (over the
    last two axes) set to zero, as ``numpy.triu``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.triu(mx.ones((2, 3), mx.int32), k=1).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    return _triangle(m, k, False, "triu")


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with its main diagonal (the elements ``a[i, i, ..., i]``)
    set to ``val``, as ``numpy.fill_diagonal``: a scalar, or an array whose
    flattened values are laid along the diagonal, repeated or cut to fit.
    ``a`` is 2-D, or has all its axes of one length. Arrays are immutable,
    so, as in jax.numpy, ``inplace=False`` must be given; ``wrap=True`` (the
    diagonal of a tall matrix restarting below) is not supported either.
    Differentiable in ``a`` and ``val``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fill_diagonal(mx.zeros((2, 3), mx.int32), 7, inplace=False).tolist()
    [[7, 0, 0], [0, 7, 0]]
    """
    if inplace:
        raise NotImplementedError(
            "fill_diagonal: arrays are immutable; pass inplace=False and use the result")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported")
    a = _creation.asarray(a)
    shape = tuple(a.shape)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: a must be at least 2-D, got shape {shape}")
    if a.ndim > 2 and len(set(shape)) != 1:
        raise ValueError(
            f"fill_diagonal: an array of more than 2 dimensions must have all its axes of "
            f"one length, got shape {shape}")
    n = min(shape)
    # Element (i, ..., i) sits at i * step in the flattened array.
    step = shape[1] + 1 if a.ndim == 2 else sum(n ** j for j in range(a.ndim))
    mask = np.zeros(a.size, bool)
    mask[:n * step:step] = True
    mask = mx.array(mask.reshape(shape))
    val = _creation.asarray(val)
    if val.dtype != a.dtype:
        val = lax.astype(val, a.dtype)
    if val.ndim:
        vals = ravel(val)
        if not vals.shape[0]:
            raise ValueError("fill_diagonal: val must not be empty")
        if vals.shape[0] < n:
            vals = tile(vals, -(-n // vals.shape[0]))
        if vals.shape[0] > n:
            vals = lax.static_slice(vals, (slice(0, n),))
        val = lax.reshape(_strided(vals, 0, step, a.size), shape)
    return lax.where(mask, val, a)
