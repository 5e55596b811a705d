"""Indexing as in NumPy / jax.numpy: ``x[idx]`` (``getitem``), ``take``,
``take_along_axis``, ``put_along_axis`` and functional updates
(``fnp.at(x)[idx].set(v)`` and friends), on the gather and scatter
primitives of ``ftorch.primitives.indexing``.

An index expression is parsed here, once, into the primitives' static spec
(see ``ftorch.primitives.indexing``): boolean masks are turned into integer
arrays and ``...`` is expanded while parsing, and static ints are
bounds-checked.

The primitives have MLX's semantics: every index-array entry must lie in
``[-n, n)``. Out-of-range entries are handled here, with JAX's ``mode``
semantics built from ftorch ops on the index arrays (a clamp, a mask) and on
the values or the result (a ``where``), so the primitives' rules stay valid
unchanged and no derivative ever reads or writes out of bounds:

- ``clip``: entries are clamped to the axis.
- ``fill`` (gathers): out-of-range entries read ``fill_value``.
- ``drop`` (scatters; ``fill`` is an alias): out-of-range updates do nothing.
  ``add``/``multiply``/``divide`` clamp the index and update with a neutral
  value (-0.0, 1); ``set``/``min``/``max`` send the update to one padding slot
  that is sliced off (a neutral value could overwrite a real update, or tie).
- ``promise_in_bounds``: the index arrays go to MLX as they are.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.getitem(mx.arange(6).reshape(2, 3), (slice(None), [2, 0])).tolist()
[[2, 0], [5, 3]]
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Tracer, aval_of, is_floating
from ftorch.numpy import _creation, _elementwise, _shape
from ftorch.primitives.indexing import (
    ARRAY,
    Spec,
    along_axis_grid,
    grid_index,
    indexed_shape,
    is_mixed,
)
from ftorch.primitives.reduction import normalize_axes

__all__ = ["getitem", "take", "take_along_axis", "put_along_axis", "at"]

_INDEX_ERROR = (
    "only integers, slices (`:`), ellipsis (`...`), None (`newaxis`) and integer or "
    "boolean arrays are valid indices; got {what}"
)
_MASK_UNDER_TRANSFORM = (
    "a boolean mask whose value is traced has a data-dependent shape and cannot index "
    "here; use fnp.where(mask, x, other) (or fnp.where(mask, x, 0) followed by a sum) instead"
)


# ----------------------------------------------------------------------------
# Parsing index expressions
# ----------------------------------------------------------------------------


def _index_array(a: Any, what: str) -> Any:
    """An integer index array as an mx.array (or a tracer); boolean arrays come
    back as NumPy bool arrays (masks) to be expanded by the caller."""
    if isinstance(a, Tracer):
        if a.dtype == mx.bool_:
            # Autodiff tracers know their value, so the result's shape is known.
            try:
                return np.array(a.concrete())
            except TypeError:
                raise TypeError(_MASK_UNDER_TRANSFORM) from None
        if is_floating(a.dtype):
            raise IndexError(_INDEX_ERROR.format(what=f"a traced {a.dtype} array at {what}"))
        return a
    if isinstance(a, mx.array):
        if a.dtype == mx.bool_:
            return np.array(a)
        if is_floating(a.dtype) or a.dtype == mx.complex64:
            raise IndexError(_INDEX_ERROR.format(what=f"an {a.dtype} array at {what}"))
        return a
    arr = np.asarray(a)
    if arr.dtype == np.bool_:
        return arr
    if arr.size == 0 and arr.dtype == np.float64:  # [] is an empty integer index
        arr = arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        raise IndexError(_INDEX_ERROR.format(what=f"a {arr.dtype} array at {what}"))
    return mx.array(arr)


def _parse(idx: Any, shape: tuple[int, ...]) -> tuple[Spec, list]:
    """``idx`` as a normalized spec and its index-array operands."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    items, consumed, ellipsis = [], 0, False
    for pos, e in enumerate(idx):
        what = f"index position {pos}"
        if e is None or isinstance(e, slice):
            items.append(e)
            consumed += e is not None
        elif e is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            items.append(e)
        elif isinstance(e, (bool, np.bool_)):
            raise IndexError(
                f"boolean scalar index at {what} is not supported; use None to add an "
                "axis or fnp.where for a condition")
        elif isinstance(e, (int, np.integer)):
            items.append(int(e))
            consumed += 1
        elif isinstance(e, (mx.array, Tracer, np.ndarray, list, tuple)):
            a = _index_array(e, what)
            items.append(a)
            consumed += a.ndim if isinstance(a, np.ndarray) and a.dtype == np.bool_ else 1
        elif hasattr(e, "__index__") and not isinstance(e, (float, complex)):
            items.append(operator.index(e))
            consumed += 1
        else:
            raise IndexError(_INDEX_ERROR.format(what=f"{type(e).__name__} {e!r} at {what}"))
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {consumed} "
            "were indexed")
    spec, arrays, axis = [], [], 0
    for e in items:
        if e is None:
            spec.append(None)
        elif e is Ellipsis:
            for _ in range(ndim - consumed):
                spec.append((0, shape[axis], 1))
                axis += 1
        elif isinstance(e, int):
            d = shape[axis]
            if not -d <= e < d:
                raise IndexError(f"index {e} is out of bounds for axis {axis} with size {d}")
            spec.append(e % d)
            axis += 1
        elif isinstance(e, slice):
            start, stop, step = e.indices(shape[axis])
            if not len(range(start, stop, step)):
                # slice(-1, None, -1) would not be empty: use one canonical empty slice
                spec.append((0, 0, 1))
            else:
                spec.append((start, None if stop < 0 else stop, step))
            axis += 1
        elif isinstance(e, np.ndarray):  # a boolean mask over e.ndim axes
            mshape = shape[axis:axis + e.ndim]
            for k, (m, d) in enumerate(zip(e.shape, mshape)):
                if m != d:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + k}; "
                        f"size of axis is {d} but size of corresponding boolean axis is {m}")
            if e.ndim == 0:
                raise IndexError("a 0-d boolean array index is not supported; use fnp.where")
            for nz in np.nonzero(e):
                spec.append(ARRAY)
                arrays.append(mx.array(nz.astype(np.int32)))
            axis += e.ndim
        else:
            spec.append(ARRAY)
            arrays.append(e)
            axis += 1
    # Trailing whole-axis slices are implied; dropping them keeps specs canonical.
    while spec and isinstance(spec[-1], tuple):
        start, stop, step = spec[-1]
        if (start, stop, step) != (0, shape[len(spec) - 1 - spec.count(None)], 1):
            break
        spec.pop()
    return tuple(spec), arrays


# ----------------------------------------------------------------------------
# Out-of-range index arrays: modes
# ----------------------------------------------------------------------------

_GATHER_MODES = ("clip", "fill", "promise_in_bounds")
_SCATTER_MODES = ("drop", "fill", "clip", "promise_in_bounds")
_TAKE_MODES = ("clip", "fill", "wrap", "promise_in_bounds")  # JAX's take also wraps


def _check_mode(mode: Any, default: str, valid: tuple[str, ...], fname: str) -> str:
    """``mode`` (``default`` when None), or a ValueError listing the valid ones."""
    if mode is None:
        return default
    if not isinstance(mode, str) or mode not in valid:
        raise ValueError(
            f"{fname}: unknown mode {mode!r}; the valid modes are "
            f"{', '.join(map(repr, valid))} (default {default!r})")
    return mode


@functools.cache
def _int_range(dtype: mx.Dtype) -> tuple[int, int]:
    return int(mx.iinfo(dtype).min), int(mx.iinfo(dtype).max)


def _clamp(a: Any, n: int, signed: bool) -> Any:
    """``a`` limited to ``[-n, n)``: MLX wraps ``[-n, 0)`` into the axis, so
    an entry below ``-n`` (which wraps once to below 0) reads index 0."""
    if signed:
        a = _elementwise.maximum(a, -n)
    return _elementwise.minimum(a, n - 1)


def _normalize_indices(arrays: Sequence, sizes: Sequence[int | None], mode: str
                       ) -> tuple[list, Any]:
    """Index arrays that MLX can use as they are under ``mode``, and a mask of
    the entries that were in range (broadcast over all arrays; ``None`` when
    the mode needs none or every entry is in range by its dtype).

    ``sizes`` holds the length of the axis each array indexes (``None``: an
    array known to be in range). ``clip``, ``fill`` and ``drop`` clamp the
    entries (negative ones wrap once, as NumPy); ``fill`` and ``drop`` also
    give the mask. ``promise_in_bounds`` changes nothing."""
    if mode == "promise_in_bounds":
        return list(arrays), None
    out, valid = [], None
    for a, n in zip(arrays, sizes):
        if n is None or n == 0:  # an empty axis is the caller's case
            out.append(a)
            continue
        lo, hi = _int_range(aval_of(a).dtype)
        if lo >= -n and hi < n:  # every value of the dtype is in range
            out.append(a)
            continue
        clamped = _clamp(a, n, signed=lo < 0)
        out.append(clamped)
        if mode != "clip":
            ok = _elementwise.equal(clamped, a)
            valid = ok if valid is None else _elementwise.logical_and(valid, ok)
    return out, valid


def _array_axes(spec: Spec) -> list[int]:
    """The axis of ``x`` that each index array of ``spec`` indexes."""
    axes, axis = [], 0
    for e in spec:
        if e is None:
            continue
        if e == ARRAY:
            axes.append(axis)
        axis += 1
    return axes


def _in_indexed_shape(mask: Any, n_out: int, start: int, block: int) -> Any:
    """A mask over the broadcast index arrays reshaped to broadcast against
    the indexed shape (rank ``n_out``, the index block at ``start``)."""
    shape = tuple(aval_of(mask).shape)
    target = (1,) * (start + block - len(shape)) + shape + (1,) * (n_out - start - block)
    return mask if target == shape else lax.reshape(mask, target)


def _fill_constant(fill_value: Any, dtype: mx.Dtype, fname: str) -> mx.array:
    """``fill_value`` as a 0-d array of ``dtype``; by default NaN for inexact
    dtypes, the most negative value for signed integers, the largest for
    unsigned ones and True for bool (JAX's defaults)."""
    if fill_value is None:
        if is_floating(dtype) or dtype == mx.complex64:
            return mx.array(np.nan, dtype=dtype)
        if dtype == mx.bool_:
            return mx.array(True)
        lo, hi = _int_range(dtype)
        # Through NumPy: mx.array(2**64 - 1, dtype=mx.uint64) raises bad_cast.
        return mx.array(np.array(hi if lo == 0 else lo, dtype=str(dtype).rsplit(".", 1)[-1]))
    if isinstance(fill_value, Tracer):
        raise TypeError(f"{fname}: fill_value must be a concrete scalar, not a traced value")
    if np.ndim(fill_value) != 0:
        raise ValueError(
            f"{fname}: fill_value must be a scalar, got shape {tuple(np.shape(fill_value))}")
    value = fill_value if isinstance(fill_value, mx.array) else mx.array(fill_value)
    return value.astype(dtype)


def _read_empty_axis(x: Any, axis: int, out_shape: tuple[int, ...], mode: str,
                     fill_value: Any, fname: str) -> mx.array:
    """A non-empty read from an empty ``axis`` of ``x``: all fill values with
    ``fill``, an IndexError otherwise (there is nothing to clamp to)."""
    if mode != "fill":
        raise IndexError(
            f"{fname}: cannot read with a non-empty index array from an empty axis "
            f"(x has shape {tuple(x.shape)}; axis {axis} has size 0); mode='fill' gives "
            "fill values")
    return mx.full(out_shape, _fill_constant(fill_value, x.dtype, fname))


def _gather_indexed(x: Any, spec: Spec, arrays: list, mode: str, fill_value: Any,
                    fname: str) -> Any:
    """``x[idx]`` for a parsed index with index arrays, under a gather mode."""
    if mode == "promise_in_bounds":
        return _gather_all(x, spec, arrays)
    shape = tuple(x.shape)
    sizes = [shape[ax] for ax in _array_axes(spec)]
    if 0 in sizes:
        out_shape, _, _ = indexed_shape(shape, spec, arrays)
        if 0 not in out_shape:
            axis = _array_axes(spec)[sizes.index(0)]
            return _read_empty_axis(x, axis, out_shape, mode, fill_value, fname)
    arrays, valid = _normalize_indices(arrays, sizes, mode)
    out = _gather_all(x, spec, arrays)
    if valid is None:
        return out
    out_shape, start, block = indexed_shape(shape, spec, arrays)
    return _elementwise.where(_in_indexed_shape(valid, len(out_shape), start, block), out,
                              _fill_constant(fill_value, x.dtype, fname))


def _gather_all(x: Any, spec: Spec, arrays: list) -> Any:
    """The gather of ``x[idx]``, with ints and new axes beside index arrays
    rewritten as index arrays (so that the VJP's scatter sees arrays only)."""
    if is_mixed(spec):
        shape = tuple(x.shape)
        out_shape, start, block = indexed_shape(shape, spec, arrays)
        spec, arrays = grid_index(shape, spec, arrays, out_shape, start, block)
    return lax.gather(x, *arrays, spec=spec)


# ----------------------------------------------------------------------------
# getitem
# ----------------------------------------------------------------------------


def _basic(x: Any, spec: Spec, shape: tuple[int, ...]) -> Any:
    """Ints, slices and new axes: a ``static_slice`` and a ``reshape``."""
    slices, out_shape, axis = [], [], 0
    for e in spec:
        if e is None:
            out_shape.append(1)
        elif isinstance(e, tuple):
            slices.append(slice(*e))
            out_shape.append(len(range(e[0], -1 if e[1] is None else e[1], e[2])))
            axis += 1
        else:
            slices.append(slice(e, e + 1))
            axis += 1
    out_shape.extend(shape[axis:])
    y = lax.static_slice(x, slices) if slices else x
    return lax.reshape(y, tuple(out_shape))


def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` with NumPy's indexing rules; ``Tracer.__getitem__`` calls it.

    ``idx`` may hold ints (negative too), slices with any step, ``None``,
    ``...``, integer arrays (``mx.array``, NumPy arrays, lists; several
    broadcast together, and advanced dimensions go first when advanced
    indices are separated by a slice, as in NumPy) and boolean masks whose
    value is known, also under grad/jvp (they become integer arrays; a mask
    with no single value, as under vmap, raises: use ``fnp.where``).

    Static ints are bounds-checked (IndexError). Index arrays are clamped, as
    JAX's ``x[idx]``: a negative entry counts from the end (it wraps once),
    and an entry still outside the axis reads its first or last element. The
    gradient goes to the element that was read. For other out-of-range
    behaviour use ``fnp.at(x)[idx].get(mode=...)``.

    Basic indices lower to ``static_slice`` and ``reshape``; integer arrays to
    the ``gather`` primitive, whose VJP scatter-adds (repeats accumulate).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.arange(12).reshape(3, 4)
    >>> fnp.getitem(x, (slice(None, None, -1), [0, 0])).tolist()
    [[8, 8], [4, 4], [0, 0]]
    >>> fnp.getitem(mx.array([10, 20, 30]), mx.array([-1, 5, -7])).tolist()
    [30, 30, 10]
    """
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    spec, arrays = _parse(idx, shape)
    if not arrays:
        return _basic(x, spec, shape)
    return _gather_indexed(x, spec, arrays, "clip", None, "getitem")


# ----------------------------------------------------------------------------
# take, take_along_axis, put_along_axis
# ----------------------------------------------------------------------------


def _int_indices(indices: Any, fname: str) -> Any:
    if isinstance(indices, (bool, np.bool_, float, complex)):
        raise TypeError(f"{fname}: indices must be integers, got {indices!r}")
    if isinstance(indices, (int, np.integer)):
        return mx.array(int(indices), dtype=mx.int32)
    if not isinstance(indices, (mx.array, Tracer)):
        a = np.asarray(indices)
        if a.size == 0 and a.dtype == np.float64:
            a = a.astype(np.int32)
        if a.dtype.kind not in "iu":
            raise TypeError(f"{fname}: indices must be integers, got dtype {a.dtype}")
        return mx.array(a)
    if is_floating(indices.dtype) or indices.dtype in (mx.bool_, mx.complex64):
        raise TypeError(f"{fname}: indices must be integers, got dtype {indices.dtype}")
    return indices


def take(x: Any, indices: Any, axis: int | None = None, mode: str | None = None,
         fill_value: Any = None, unique_indices: bool = False,
         indices_are_sorted: bool = False) -> Any:
    """Elements of ``x`` at ``indices`` along ``axis`` (of the flattened ``x``
    when ``None``), as ``jax.numpy.take``.

    Negative indices count from the end (they wrap once). ``mode`` says what
    an index still outside the axis does: ``"fill"`` (the default) reads
    ``fill_value`` (by default NaN for inexact dtypes, the most negative
    value for signed integers, the largest for unsigned ones, True for
    bool) and passes no gradient back; ``"clip"`` reads the nearest end of the
    axis; ``"wrap"`` takes the index modulo the axis length;
    ``"promise_in_bounds"`` passes the indices to MLX unchanged, at no cost,
    and is undefined behaviour if one is out of range. ``unique_indices`` and
    ``indices_are_sorted`` are accepted for JAX compatibility and change
    nothing.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.take(mx.array([[1, 2], [3, 4]]), [1, 1], axis=1).tolist()
    [[2, 2], [4, 4]]
    >>> x = mx.array([1.0, 2.0, 3.0])
    >>> fnp.take(x, mx.array([-1, 3])).tolist()
    [3.0, nan]
    >>> fnp.take(x, mx.array([-1, 3]), mode="clip").tolist()
    [3.0, 3.0]
    """
    mode = _check_mode(mode, "fill", _TAKE_MODES, "take")
    x = _creation.asarray(x)
    indices = _int_indices(indices, "take")
    if axis is None:
        x = _shape.reshape(x, (-1,))
        axis = 0
    else:
        (axis,) = normalize_axes(axis, x.ndim, "take")
    spec = tuple((0, d, 1) for d in x.shape[:axis]) + (ARRAY,)
    if mode == "wrap":
        n = x.shape[axis]  # an empty axis has nothing to wrap onto: clip raises there
        if n:
            indices, mode = _elementwise.remainder(indices, n), "promise_in_bounds"
        else:
            mode = "clip"
    return _gather_indexed(x, spec, [indices], mode, fill_value, "take")


def _along_axis_args(x, indices, axis, fname):
    x = _creation.asarray(x)
    indices = _int_indices(indices, fname)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(
                f"{fname}: with axis=None, indices must be 1-D, got shape {tuple(indices.shape)}")
        return _shape.reshape(x, (-1,)), indices, 0
    if not isinstance(axis, int):
        raise TypeError(f"{fname}: axis must be an int or None, got {axis!r}")
    if indices.ndim != x.ndim:
        raise ValueError(
            f"{fname}: indices (shape {tuple(indices.shape)}) and x (shape {tuple(x.shape)}) "
            "must have the same number of dimensions")
    (axis,) = normalize_axes(axis, x.ndim, fname)
    for i, (d, n) in enumerate(zip(x.shape, indices.shape)):
        if i != axis and d != n and d != 1 and n != 1:
            raise ValueError(
                f"{fname}: indices of shape {tuple(indices.shape)} do not broadcast against x "
                f"of shape {tuple(x.shape)} along axis {i}")
    return x, indices, axis


def take_along_axis(x: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Any:
    """``x`` read at ``indices`` along ``axis``, as ``jax.numpy.take_along_axis``:
    ``indices`` has ``x``'s ndim and broadcasts against it on the other axes
    (``axis=None`` reads the flattened ``x`` with 1-D ``indices``).

    Negative indices count from the end (they wrap once); ``mode`` is as for
    ``take`` (``"fill"`` by default, ``"clip"``, ``"promise_in_bounds"``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([[10, 30, 20]])
    >>> fnp.take_along_axis(x, mx.array([[0, 2, 1]]), axis=1).tolist()
    [[10, 20, 30]]
    >>> fnp.take_along_axis(x, mx.array([[-1, 3]]), axis=1, fill_value=0).tolist()
    [[20, 0]]
    """
    mode = _check_mode(mode, "fill", _GATHER_MODES, "take_along_axis")
    x, indices, axis = _along_axis_args(x, indices, axis, "take_along_axis")
    if mode == "promise_in_bounds":
        return lax.take_along_axis(x, indices, axis)
    shape = tuple(x.shape)
    n = shape[axis]
    if n == 0 and indices.size:
        out_shape = np.broadcast_shapes(shape[:axis] + (1,) + shape[axis + 1:],
                                        tuple(indices.shape))
        if 0 not in out_shape:
            return _read_empty_axis(x, axis, out_shape, mode, fill_value, "take_along_axis")
    (indices,), valid = _normalize_indices([indices], [n], mode)
    out = lax.take_along_axis(x, indices, axis)
    if valid is None:
        return out
    return _elementwise.where(valid, out, _fill_constant(fill_value, x.dtype, "take_along_axis"))


def put_along_axis(x: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """A copy of ``x`` with ``values`` written at ``indices`` along ``axis``
    (functional ``numpy.put_along_axis``; ``x`` is not modified). ``values``
    broadcasts to the shape ``take_along_axis(x, indices, axis)`` has; with
    repeated indices one of the values lands (which one is unspecified).

    Negative indices count from the end (they wrap once). ``mode`` says what
    an index still outside the axis does, as for ``fnp.at(x)[idx].set``:
    ``"drop"`` (the default; ``"fill"`` is the same) skips that update, and
    its value gets no gradient; ``"clip"`` writes at the nearest end of the
    axis; ``"promise_in_bounds"`` is undefined behaviour then. Arrays are
    immutable, so, as in jax.numpy, ``inplace=False`` must be given.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.zeros((2, 3))
    >>> fnp.put_along_axis(x, mx.array([[2], [0]]), 1.0, axis=1, inplace=False).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    >>> fnp.put_along_axis(mx.zeros(3), mx.array([-1, 7]), 1.0, 0, inplace=False).tolist()
    [0.0, 0.0, 1.0]
    """
    if inplace:
        raise ValueError(
            "put_along_axis: arrays are immutable; pass inplace=False and use the result")
    mode = _check_mode(mode, "drop", _SCATTER_MODES, "put_along_axis")
    x0 = _creation.asarray(x)
    x, indices, axis = _along_axis_args(x0, indices, axis, "put_along_axis")
    shape = tuple(x.shape)
    if 0 in shape:  # nothing to write into
        return x0
    (indices,), valid = _normalize_indices([indices], [shape[axis]], mode)
    _, arrays = along_axis_grid(shape, indices, axis)
    out = _scatter_normalized(x, (ARRAY,) * len(arrays), arrays, valid, values, "set",
                              name="put_along_axis", redirect=axis)
    return lax.reshape(out, tuple(x0.shape))


# ----------------------------------------------------------------------------
# Functional updates: fnp.at(x)[idx].set(v)
# ----------------------------------------------------------------------------


class _IndexedUpdate:
    """``x`` with an index, waiting for the update to apply."""

    __slots__ = ("x", "idx")

    def __init__(self, x: Any, idx: Any):
        self.x = x
        self.idx = idx

    def __repr__(self) -> str:
        return f"at(x)[{self.idx!r}]"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: str | None = None, fill_value: Any = None) -> Any:
        """``x[idx]``, with a choice of what out-of-range index-array entries do.

        Negative entries wrap once. ``mode``: ``"clip"`` (the default, as
        ``x[idx]``) reads the nearest end of the axis; ``"fill"`` reads
        ``fill_value`` (by default NaN for inexact dtypes, the most negative
        value for signed integers, the largest for unsigned ones, True for
        bool; it is used in this mode only), and that entry gets no gradient;
        ``"promise_in_bounds"`` passes the indices to MLX unchanged, at no
        cost, and is undefined behaviour if one is out of range.
        ``indices_are_sorted`` and ``unique_indices`` are accepted for JAX
        compatibility and change nothing.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> x = mx.array([1.0, 2.0, 3.0])
        >>> fnp.at(x)[mx.array([0, 4])].get().tolist()
        [1.0, 3.0]
        >>> fnp.at(x)[mx.array([0, 4])].get(mode="fill", fill_value=-1.0).tolist()
        [1.0, -1.0]
        """
        mode = _check_mode(mode, "clip", _GATHER_MODES, "at[...].get")
        x = _creation.asarray(self.x)
        shape = tuple(x.shape)
        spec, arrays = _parse(self.idx, shape)
        if not arrays:
            return _basic(x, spec, shape)
        return _gather_indexed(x, spec, arrays, mode, fill_value, "at[...].get")

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``x[idx]`` replaced by ``values`` (with repeated indices one
        update lands, unspecified which; gradients follow the one that did).
        Out-of-range index-array entries: ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.zeros(3))[mx.array([1, 5])].set(7.0).tolist()
        [0.0, 7.0, 0.0]
        """
        return _update(self.x, self.idx, values, "set", mode)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``values`` added at ``idx``; repeated indices accumulate.
        Out-of-range index-array entries: ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.zeros(3))[mx.array([0, 0, -1, 3])].add(1.0).tolist()
        [2.0, 0.0, 1.0]
        """
        return _update(self.x, self.idx, values, "add", mode)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``values`` subtracted at ``idx``; repeated indices accumulate.
        Out-of-range index-array entries: ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.zeros(3))[mx.array([2, 3])].subtract(1.0, mode="clip").tolist()
        [0.0, 0.0, -2.0]
        """
        return _update(self.x, self.idx, values, "subtract", mode)

    def multiply(self, values: Any, unique_indices: bool = False, *,
                 indices_are_sorted: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``x[idx]`` multiplied by ``values`` (repeats multiply in turn).

        The derivative with respect to ``x`` is always exact. With respect to
        ``values`` it needs unique indices, as in JAX: basic indices always
        are; for index arrays pass ``unique_indices=True`` to promise there are
        no repeats (the result is wrong if there are), otherwise
        differentiating with respect to ``values`` raises NotImplementedError.
        Out-of-range index-array entries: ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.ones(3))[mx.array([0, 0, 9])].multiply(2.0).tolist()
        [4.0, 1.0, 1.0]
        """
        return _update(self.x, self.idx, values, "multiply", mode, unique_indices)

    def divide(self, values: Any, unique_indices: bool = False, *,
               indices_are_sorted: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``x[idx]`` divided by ``values``; derivatives as for ``multiply``.

        As MLX's ``x.at[idx].divide``, it multiplies by ``1 / values``: a
        subnormal divisor (below the dtype's ``finfo.tiny``) gives inf or nan
        even where ``x / values`` would be finite. Out-of-range index-array
        entries: ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.ones(3))[mx.array([1, -4])].divide(2.0).tolist()
        [1.0, 0.5, 1.0]
        """
        return _update(self.x, self.idx, values, "divide", mode, unique_indices)

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``x[idx]`` replaced by ``minimum(x[idx], values)``. The
        gradient goes to whichever of ``x`` and ``values`` is the minimum,
        shared equally among ties (repeated indices included). ``minimum``
        (MLX's name) is the same method. Out-of-range index-array entries:
        ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.zeros(3))[mx.array([1, 3])].min(-1.0).tolist()
        [0.0, -1.0, 0.0]
        """
        return _update(self.x, self.idx, values, "min", mode)

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: str | None = None) -> Any:
        """``x`` with ``x[idx]`` replaced by ``maximum(x[idx], values)``;
        gradients as for ``min``. ``maximum`` (MLX's name) is the same method.
        Out-of-range index-array entries: ``mode``, see ``fnp.at``.

        >>> import ftorch.numpy as fnp, mlx.core as mx
        >>> fnp.at(mx.zeros(3))[mx.array([1, 3])].max(1.0).tolist()
        [0.0, 1.0, 0.0]
        """
        return _update(self.x, self.idx, values, "max", mode)

    minimum = min
    maximum = max


# The strict wrapper of each update, looked up in ``lax`` when called.
_SCATTERS = {"set": "scatter", "add": "scatter_add", "min": "scatter_min",
             "max": "scatter_max", "multiply": "scatter_mul", "divide": "scatter_div"}


def _neutral_update(op: str, dtype: mx.Dtype) -> mx.array | None:
    """The update that leaves every ``x`` as it is under ``op``, where there is
    an exact one: -0.0 for add (``-0.0 + 0.0`` is 0.0 but ``-0.0 + -0.0`` is
    -0.0), 1 for multiply and divide (not complex: ``inf * (1+0j)`` has a nan)."""
    if op == "add":
        return mx.array(complex(-0.0, -0.0) if dtype == mx.complex64 else -0.0).astype(dtype)
    if op in ("multiply", "divide") and dtype != mx.complex64:
        return mx.array(1).astype(dtype)
    return None


def _update(x: Any, idx: Any, values: Any, method: str, mode: str | None,
            unique: bool = False) -> Any:
    """``fnp.at(x)[idx].<method>(values, mode=mode)``."""
    name = f"at[...].{method}"
    mode = _check_mode(mode, "drop", _SCATTER_MODES, name)
    x = _creation.asarray(x)
    shape = tuple(x.shape)
    spec, arrays = _parse(idx, shape)
    op = method
    if method == "subtract":
        op, values = "add", _elementwise.negative(_creation.asarray(values))
    if not arrays or mode == "promise_in_bounds":
        return _apply(x, spec, arrays, values, op, unique, name)
    if 0 in shape:  # nothing to write into
        return x
    arrays, valid = _normalize_indices(arrays, [shape[a] for a in _array_axes(spec)], mode)
    return _scatter_normalized(x, spec, arrays, valid, values, op, unique, name)


def _scatter_normalized(x: Any, spec: Spec, arrays: list, valid: Any, values: Any, op: str,
                        unique: bool = False, name: str | None = None,
                        redirect: int = 0) -> Any:
    """``x`` updated at a parsed index whose arrays went through
    ``_normalize_indices``: the updates where ``valid`` (if given) is False
    have no effect. Where the op has a neutral update (add, multiply, divide)
    they become it; otherwise (set: it would overwrite a real update at the
    clamped position; min/max: a neutral infinity would tie with an infinite
    ``x`` and take part of its gradient) they are sent, through index array
    ``redirect``, to one padding slot past the end of its axis, sliced off
    afterwards."""
    name = name or f"at[...].{op}"
    if valid is None:
        return _apply(x, spec, arrays, values, op, unique, name)
    shape = tuple(x.shape)
    values = _values_as(values, x.dtype)
    out_shape, start, block = indexed_shape(shape, spec, arrays)
    _check_values_shape(values, out_shape, name)
    neutral = _neutral_update(op, x.dtype)
    if neutral is not None:
        keep = _in_indexed_shape(valid, len(out_shape), start, block)
        return _apply(x, spec, arrays, _elementwise.where(keep, values, neutral), op, unique, name)
    axis = _array_axes(spec)[redirect]
    n = shape[axis]
    a = arrays[redirect]
    if _int_range(aval_of(a).dtype)[1] < n:  # the slot's index n must fit the dtype
        a = _elementwise.astype(a, mx.int32)
    arrays = list(arrays)
    # Non-negative first: in the padded axis, MLX would wrap -1 to the slot.
    arrays[redirect] = _elementwise.where(valid, _elementwise.remainder(a, n), n)
    slot = mx.zeros(shape[:axis] + (1,) + shape[axis + 1:], x.dtype)
    out = _apply(lax.concatenate([x, slot], axis), spec, arrays, values, op, unique, name)
    return lax.static_slice(out, (slice(None),) * axis + (slice(0, n),))


def _values_as(values: Any, dtype: mx.Dtype) -> Any:
    """Update values as an array of ``x``'s dtype (as MLX casts them)."""
    if isinstance(values, (mx.array, Tracer)):
        return _elementwise.astype(values, dtype)
    return _creation.asarray(values, dtype)


def _values_shape_error(name: str, values: Any, target: tuple[int, ...]) -> ValueError:
    return ValueError(
        f"{name}: values of shape {tuple(aval_of(values).shape)} cannot be broadcast to "
        f"the indexed shape {tuple(target)}")


def _check_values_shape(values: Any, target: tuple[int, ...], name: str) -> None:
    """Values must broadcast to the indexed shape (extra leading axes of size
    1 allowed), as MLX's scatter requires."""
    shape = tuple(aval_of(values).shape)
    try:
        full = np.broadcast_shapes(shape, target)
    except ValueError:
        raise _values_shape_error(name, values, target) from None
    lead = len(full) - len(target)
    if full[lead:] != tuple(target) or any(d != 1 for d in full[:lead]):
        raise _values_shape_error(name, values, target)


def _apply(x, spec, arrays, values, op, unique=False, name=None):
    """The scatter primitive of ``op`` at a parsed index (index arrays used as
    they are)."""
    dtype = x.dtype
    if arrays and is_mixed(spec):
        out_shape, start, block = indexed_shape(tuple(x.shape), spec, arrays)
        spec, arrays = grid_index(tuple(x.shape), spec, arrays, out_shape, start, block)
    values = _values_as(values, dtype)
    scatter = getattr(lax, _SCATTERS[op])
    params = {"spec": spec}
    if op in ("multiply", "divide"):
        unique = bool(unique) or not arrays
        if not unique:
            values = lax.unique_indices_guard(values)
        params["unique"] = unique
    try:
        return scatter(x, values, *arrays, **params)
    except ValueError as err:
        target = indexed_shape(tuple(x.shape), spec, arrays)[0]
        raise _values_shape_error(name or f"at[...].{op}", values, target) from err


class _Updater:
    """What ``fnp.at(x)`` returns: index it, then call an update method."""

    __slots__ = ("x",)

    def __init__(self, x: Any):
        self.x = x

    def __getitem__(self, idx: Any) -> _IndexedUpdate:
        return _IndexedUpdate(self.x, idx)

    def __repr__(self) -> str:
        return "at(x)"


def at(x: Any) -> _Updater:
    """Functional updates of ``x``, as JAX's ``x.at``: ``fnp.at(x)[idx]``
    followed by ``.set(v)``, ``.add(v)``, ``.subtract(v)``, ``.multiply(v)``,
    ``.divide(v)``, ``.min(v)``, ``.max(v)`` or ``.get()``; MLX's names
    ``.minimum(v)`` and ``.maximum(v)`` work too, so it does everything MLX's
    ``x.at`` does, with the same results for in-range indices. Each returns
    a new array and leaves ``x`` as it is. ``idx`` takes every form
    ``getitem`` does; ``v`` broadcasts to ``x[idx]``'s shape and is cast to
    ``x``'s dtype.

    ``fnp.at(x)[idx].set(v)`` works on ``mx.array`` and on traced values
    alike (inside transforms ``x.at[idx].set(v)`` works too). All updates are
    differentiable with respect to ``x`` and ``v``; see each method for how
    repeated indices are treated.

    Index-array entries outside their axis (after negative entries wrap
    once, as NumPy) follow the ``mode`` keyword of each update method, as in
    JAX: ``"drop"`` (the default; ``"fill"`` is the same) skips the update,
    and its value gets no gradient; ``"clip"`` applies it at the nearest end
    of the axis; ``"promise_in_bounds"`` passes the indices to MLX unchanged,
    at no cost, and is undefined behaviour if one is out of range. The
    methods also take JAX's ``indices_are_sorted`` and ``unique_indices``
    keywords (only ``multiply`` and ``divide`` use ``unique_indices``). For
    ``.get`` see its own documentation.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.zeros(4)
    >>> fnp.at(x)[1:3].set(mx.array([5.0, 6.0])).tolist()
    [0.0, 5.0, 6.0, 0.0]
    >>> fnp.at(x)[mx.array([0, 0])].add(1.0).tolist()
    [2.0, 0.0, 0.0, 0.0]
    >>> fnp.at(x)[mx.array([0, 4])].add(1.0).tolist()
    [1.0, 0.0, 0.0, 0.0]
    >>> fnp.at(x)[mx.array([0, 4])].add(1.0, mode="clip").tolist()
    [1.0, 0.0, 0.0, 1.0]
    """
    return _Updater(x)
