"""Indexing: ``x[idx]``, take, take_along_axis, and functional updates.

An index expression is parsed once into a static, hashable *spec* with one
entry per index position: an ``int`` (a normalized integer index), a
``(start, stop, step)`` tuple (a normalized slice), ``None`` (a new axis) or
``"a"`` (the next integer-array operand). Boolean masks are turned into
integer arrays and ``...`` is expanded while parsing. The primitives take the
index arrays as extra (non-differentiable) operands and rebuild the MLX
index from ``spec``, so each is one MLX call eagerly:

- ``gather``: ``x[idx]`` with at least one integer array (advanced indexing).
  Purely basic indices lower to ``static_slice`` and ``reshape`` instead.
- ``scatter``, ``scatter_add``, ``scatter_mul``, ``scatter_div``,
  ``scatter_min``, ``scatter_max``: ``x`` with ``x[idx]`` replaced by, added
  to, ... ``values`` (``fnp.at(x)[idx].set(v)`` and friends).
- ``take_along_axis``.

``gather`` and ``scatter_add`` are each other's transpose, which is how
duplicate indices accumulate in gradients.

The primitives have MLX's semantics: every index-array entry must lie in
``[-n, n)`` (MLX wraps negative entries itself and checks nothing else).
Out-of-range entries are handled by the public functions, with JAX's
``mode`` semantics built from ftorch ops on the index arrays (a clamp, a mask)
and on the values or the result (a ``where``), so the primitives' rules stay
valid unchanged and no derivative ever reads or writes out of bounds:

- ``clip``: entries are clamped to the axis.
- ``fill`` (gathers): out-of-range entries read ``fill_value``.
- ``drop`` (scatters; ``fill`` is an alias): out-of-range updates do nothing.
  ``add``/``multiply``/``divide`` clamp the index and update with a neutral
  value (-0.0, 1); ``set``/``min``/``max`` send the update to one padding slot
  that is sliced off (a neutral value could overwrite a real update, or tie).
- ``promise_in_bounds``: the index arrays go to MLX as they are.
"""

from __future__ import annotations

import copy
import functools
import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import numpy as fnp
from ftorch.core import (
    Primitive,
    Tracer,
    aval_of,
    is_floating,
    mlx_at,
    mlx_getitem,
    mlx_setitem,
)
from ftorch.primitives._rules import add_tangents, batch_unary, move_bdim, unbroadcast
from ftorch.primitives.reduction import normalize_axes
from ftorch.primitives.shape import static_slice

__all__ = ["getitem", "take", "take_along_axis", "put_along_axis", "at"]

Spec = tuple  # entries: int | tuple[int, int | None, int] | None | "a"

_ARRAY = "a"
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
                spec.append(_ARRAY)
                arrays.append(mx.array(nz.astype(np.int32)))
            axis += e.ndim
        else:
            spec.append(_ARRAY)
            arrays.append(e)
            axis += 1
    # Trailing whole-axis slices are implied; dropping them keeps specs canonical.
    while spec and isinstance(spec[-1], tuple):
        start, stop, step = spec[-1]
        if (start, stop, step) != (0, shape[len(spec) - 1 - spec.count(None)], 1):
            break
        spec.pop()
    return tuple(spec), arrays


def _build(spec: Spec, arrays: Sequence) -> tuple:
    """The MLX index tuple for a spec and its concrete index arrays."""
    out, k = [], 0
    for e in spec:
        if e == _ARRAY:
            out.append(arrays[k])
            k += 1
        elif isinstance(e, tuple):
            out.append(slice(*e))
        else:
            out.append(e)
    return tuple(out)


def _has_arrays(spec: Spec) -> bool:
    return _ARRAY in spec


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
        a = fnp.maximum(a, -n)
    return fnp.minimum(a, n - 1)


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
            ok = fnp.equal(clamped, a)
            valid = ok if valid is None else fnp.logical_and(valid, ok)
    return out, valid


def _array_axes(spec: Spec) -> list[int]:
    """The axis of ``x`` that each index array of ``spec`` indexes."""
    axes, axis = [], 0
    for e in spec:
        if e is None:
            continue
        if e == _ARRAY:
            axes.append(axis)
        axis += 1
    return axes


def _in_indexed_shape(mask: Any, n_out: int, start: int, block: int) -> Any:
    """A mask over the broadcast index arrays reshaped to broadcast against
    the indexed shape (rank ``n_out``, the index block at ``start``)."""
    shape = tuple(aval_of(mask).shape)
    target = (1,) * (start + block - len(shape)) + shape + (1,) * (n_out - start - block)
    return mask if target == shape else fnp.reshape(mask, target)


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
        out_shape, _, _ = _indexed_shape(shape, spec, arrays)
        if 0 not in out_shape:
            axis = _array_axes(spec)[sizes.index(0)]
            return _read_empty_axis(x, axis, out_shape, mode, fill_value, fname)
    arrays, valid = _normalize_indices(arrays, sizes, mode)
    out = _gather_all(x, spec, arrays)
    if valid is None:
        return out
    out_shape, start, block = _indexed_shape(shape, spec, arrays)
    return fnp.where(_in_indexed_shape(valid, len(out_shape), start, block), out,
                     _fill_constant(fill_value, x.dtype, fname))


def _gather_all(x: Any, spec: Spec, arrays: list) -> Any:
    """The gather of ``x[idx]``, with ints and new axes beside index arrays
    rewritten as index arrays (so that the VJP's scatter sees arrays only)."""
    if _mixed(spec):
        shape = tuple(x.shape)
        out_shape, start, block = _indexed_shape(shape, spec, arrays)
        spec, arrays = _grid_index(shape, spec, arrays, out_shape, start, block)
    return gather_p.bind(x, *arrays, spec=spec)


# ----------------------------------------------------------------------------
# gather and the scatters
# ----------------------------------------------------------------------------


def _gather(x, arrays, spec):
    return gather_p.bind(x, *arrays, spec=spec)


def _scatter_add(x, v, arrays, spec):
    return scatter_add_p.bind(x, v, *arrays, spec=spec)


def _values_ct(ct_g: Any, v: Any) -> Any:
    """A cotangent of the gathered shape summed back to the values' shape
    (values may broadcast, with extra leading size-1 axes too)."""
    v_aval, g_shape = aval_of(v), aval_of(ct_g).shape
    if len(v_aval.shape) > len(g_shape):
        ct_g = fnp.reshape(ct_g, (1,) * (len(v_aval.shape) - len(g_shape)) + tuple(g_shape))
    return unbroadcast(ct_g, v)


def _scatter_impl(update):
    """An MLX scatter ``update(x, index, v)`` that leaves ``x`` as it is when
    the indexed region is empty (MLX's scatter fails on empty updates)."""

    def impl(x, v, *arrays, **params):
        if 0 in _indexed_shape(tuple(x.shape), params["spec"], arrays)[0]:
            return x
        return update(x, _build(params["spec"], arrays), v)

    return impl


def _nones(arrays) -> tuple:
    return (None,) * len(arrays)


def _gather_jvp(primals, tangents, spec):
    x, *arrays = primals
    out = gather_p.bind(x, *arrays, spec=spec)
    return out, None if tangents[0] is None else _gather(tangents[0], arrays, spec)


def _gather_vjp(ct, out, x, *arrays, spec):
    return (_scatter_add(fnp.zeros_like(x), ct, arrays, spec), *_nones(arrays))


gather_p = Primitive(
    "gather", lambda x, *arrays, spec: mlx_getitem(x, _build(spec, arrays)),
    jvp=_gather_jvp, vjp=_gather_vjp)


def _scatter_add_jvp(primals, tangents, spec):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_add_p.bind(x, v, *arrays, spec=spec)
    if tv is None:
        return out, tx
    return out, _scatter_add(fnp.zeros_like(x) if tx is None else tx, tv, arrays, spec)


def _scatter_add_vjp(ct, out, x, v, *arrays, spec):
    return (ct, _values_ct(_gather(ct, arrays, spec), v), *_nones(arrays))


scatter_add_p = Primitive(
    "scatter_add", _scatter_impl(lambda x, idx, v: mlx_at(x)[idx].add(v)),
    jvp=_scatter_add_jvp, vjp=_scatter_add_vjp)


def _set(x, idx, v):
    y = copy.copy(x)  # a new handle on the same graph node: the update rebinds only y
    mlx_setitem(y, idx, v)
    return y


def _scatter(x, v, arrays, spec):
    return scatter_p.bind(x, v, *arrays, spec=spec)


def _scatter_jvp(primals, tangents, spec):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_p.bind(x, v, *arrays, spec=spec)
    tx = fnp.zeros_like(x) if tx is None else tx
    tv = fnp.zeros((), aval_of(x).dtype) if tv is None else tv
    return out, _scatter(tx, tv, arrays, spec)


def _winners(arrays, spec, x_shape, g_shape) -> Any:
    """True where an entry of the gathered shape is the update that landed
    (with duplicate indices only one does); found by scattering entry ids."""
    n = 1
    for d in g_shape:
        n *= d
    ids = mx.arange(n, dtype=mx.int32).reshape(g_shape)
    landed = _scatter(mx.full(x_shape, -1, mx.int32), ids, arrays, spec)
    return fnp.equal(_gather(landed, arrays, spec), ids)


def _scatter_vjp(ct, out, x, v, *arrays, spec):
    ct_x = _scatter(ct, fnp.zeros((), aval_of(ct).dtype), arrays, spec)
    ct_g = _gather(ct, arrays, spec)
    if _has_arrays(spec):
        ct_g = fnp.where(_winners(arrays, spec, aval_of(x).shape, aval_of(ct_g).shape),
                         ct_g, fnp.zeros((), aval_of(ct_g).dtype))
    return (ct_x, _values_ct(ct_g, v), *_nones(arrays))


scatter_p = Primitive("scatter", _scatter_impl(_set), jvp=_scatter_jvp, vjp=_scatter_vjp)


def _needs_unique(spec, unique, name):
    if _has_arrays(spec) and not unique:
        raise NotImplementedError(
            f"the derivative of at[...].{name}(values) with respect to values is only "
            "implemented for unique indices: pass unique_indices=True when the index "
            "arrays have no repeated positions")


def _scatter_mul_jvp(primals, tangents, spec, unique):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_mul_p.bind(x, v, *arrays, spec=spec, unique=unique)
    t_x = None if tx is None else scatter_mul_p.bind(tx, v, *arrays, spec=spec, unique=unique)
    t_v = None
    if tv is not None:
        _needs_unique(spec, unique, "multiply")
        t_v = _scatter_add(fnp.zeros_like(x), _gather(x, arrays, spec) * tv, arrays, spec)
    return out, add_tangents(t_x, t_v)


def _scatter_mul_vjp(ct, out, x, v, *arrays, spec, unique):
    ct_x = scatter_mul_p.bind(ct, v, *arrays, spec=spec, unique=unique)
    # Exact for unique indices; unique_indices_guard refuses the other case.
    ct_v = _values_ct(_gather(ct * x, arrays, spec), v)
    return (ct_x, ct_v, *_nones(arrays))


scatter_mul_p = Primitive(
    "scatter_mul", _scatter_impl(lambda x, idx, v: mlx_at(x)[idx].multiply(v)),
    jvp=_scatter_mul_jvp, vjp=_scatter_mul_vjp)


def _scatter_div_jvp(primals, tangents, spec, unique):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_div_p.bind(x, v, *arrays, spec=spec, unique=unique)
    t_x = None if tx is None else scatter_div_p.bind(tx, v, *arrays, spec=spec, unique=unique)
    t_v = None
    if tv is not None:
        _needs_unique(spec, unique, "divide")
        t_v = _scatter_add(
            fnp.zeros_like(x), -(_gather(out, arrays, spec) * tv) / v, arrays, spec)
    return out, add_tangents(t_x, t_v)


def _scatter_div_vjp(ct, out, x, v, *arrays, spec, unique):
    ct_x = scatter_div_p.bind(ct, v, *arrays, spec=spec, unique=unique)
    ct_v = _values_ct(-_gather(ct * out, arrays, spec) / v, v)
    return (ct_x, ct_v, *_nones(arrays))


scatter_div_p = Primitive(
    "scatter_div", _scatter_impl(lambda x, idx, v: mlx_at(x)[idx].divide(v)),
    jvp=_scatter_div_jvp, vjp=_scatter_div_vjp)


def _guard_jvp(primals, tangents):
    raise NotImplementedError(
        "the derivative of at[...].multiply/divide(values) with respect to values is only "
        "implemented for unique indices: pass unique_indices=True when the index arrays "
        "have no repeated positions")


def _guard_vjp(ct, out, v):
    _guard_jvp(None, None)


# Passes values through unchanged; differentiating through it raises. It marks
# the values of a multiply/divide whose indices may repeat (unique_indices=False),
# because a VJP rule cannot tell whether its inputs need a cotangent.
unique_indices_guard_p = Primitive(
    "unique_indices_guard", lambda v: v, jvp=_guard_jvp, vjp=_guard_vjp)


def _extremum_masks(out, x, v, arrays, spec):
    """Where x and the values attain the result, and how many tie there."""
    dtype = aval_of(out).dtype
    on_x = fnp.astype(fnp.equal(x, out), dtype)
    on_v = fnp.astype(fnp.equal(v, _gather(out, arrays, spec)), dtype)
    count = on_x + _scatter_add(fnp.zeros_like(out), on_v, arrays, spec)
    return on_x, on_v, count


def _extremum(name: str, method: str):
    prim = Primitive(name, _scatter_impl(lambda x, idx, v: getattr(mlx_at(x)[idx], method)(v)))

    def jvp(primals, tangents, spec):
        x, v, *arrays = primals
        tx, tv = tangents[:2]
        out = prim.bind(x, v, *arrays, spec=spec)
        if not is_floating(aval_of(out).dtype):
            return out, None
        on_x, on_v, count = _extremum_masks(out, x, v, arrays, spec)
        t_x = None if tx is None else tx * on_x
        t_v = None if tv is None else _scatter_add(
            fnp.zeros_like(out), tv * on_v, arrays, spec)
        return out, add_tangents(t_x, t_v) / count

    def vjp(ct, out, x, v, *arrays, spec):
        on_x, on_v, count = _extremum_masks(out, x, v, arrays, spec)
        ct = ct / count
        return (ct * on_x, _values_ct(_gather(ct, arrays, spec) * on_v, v), *_nones(arrays))

    prim.jvp, prim.vjp = jvp, vjp
    return prim


scatter_min_p = _extremum("scatter_min", "minimum")
scatter_max_p = _extremum("scatter_max", "maximum")


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
    y = static_slice(x, slices) if slices else x
    return fnp.reshape(y, tuple(out_shape))


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
    x = fnp.asarray(x)
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
    x = fnp.asarray(x)
    indices = _int_indices(indices, "take")
    if axis is None:
        x = fnp.reshape(x, (-1,))
        axis = 0
    else:
        (axis,) = normalize_axes(axis, x.ndim, "take")
    spec = tuple((0, d, 1) for d in x.shape[:axis]) + (_ARRAY,)
    if mode == "wrap":
        n = x.shape[axis]  # an empty axis has nothing to wrap onto: clip raises there
        indices, mode = (fnp.remainder(indices, n), "promise_in_bounds") if n else (indices, "clip")
    return _gather_indexed(x, spec, [indices], mode, fill_value, "take")


def _along_axis_args(x, indices, axis, fname):
    x = fnp.asarray(x)
    indices = _int_indices(indices, fname)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(
                f"{fname}: with axis=None, indices must be 1-D, got shape {tuple(indices.shape)}")
        return fnp.reshape(x, (-1,)), indices, 0
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


def _grid(x_shape, indices, axis) -> tuple[tuple[int, ...], list]:
    """The result shape of take_along_axis and the index arrays (one per
    axis) that address the same elements through ``gather``."""
    i_shape = aval_of(indices).shape
    out_shape = tuple(n if i == axis else max(d, n)
                      for i, (d, n) in enumerate(zip(x_shape, i_shape)))
    arrays = []
    for i, d in enumerate(out_shape):
        if i == axis:
            arrays.append(fnp.broadcast_to(indices, out_shape))
            continue
        ones = [1] * len(out_shape)
        ones[i] = d
        # A size-1 axis of x broadcasts: it is always read at 0.
        arrays.append(mx.arange(d, dtype=mx.int32).reshape(ones) if x_shape[i] == d
                      else mx.zeros(ones, mx.int32))
    return out_shape, arrays


def _take_along_axis_jvp(primals, tangents, axis):
    x, indices = primals
    out = take_along_axis_p.bind(x, indices, axis=axis)
    tx = tangents[0]
    return out, None if tx is None else take_along_axis_p.bind(tx, indices, axis=axis)


def _take_along_axis_vjp(ct, out, x, indices, axis):
    _, arrays = _grid(aval_of(x).shape, indices, axis)
    return _scatter_add(fnp.zeros_like(x), ct, arrays, (_ARRAY,) * len(arrays)), None


take_along_axis_p = Primitive(
    "take_along_axis", lambda x, indices, axis: mx.take_along_axis(x, indices, axis=axis),
    jvp=_take_along_axis_jvp, vjp=_take_along_axis_vjp)


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
        return take_along_axis_p.bind(x, indices, axis=axis)
    shape = tuple(x.shape)
    n = shape[axis]
    if n == 0 and indices.size:
        out_shape = np.broadcast_shapes(shape[:axis] + (1,) + shape[axis + 1:],
                                        tuple(indices.shape))
        if 0 not in out_shape:
            return _read_empty_axis(x, axis, out_shape, mode, fill_value, "take_along_axis")
    (indices,), valid = _normalize_indices([indices], [n], mode)
    out = take_along_axis_p.bind(x, indices, axis=axis)
    if valid is None:
        return out
    return fnp.where(valid, out, _fill_constant(fill_value, x.dtype, "take_along_axis"))


def put_along_axis(x: Any, indices: Any, values: Any, axis: int | None,
                   mode: str | None = None) -> Any:
    """A copy of ``x`` with ``values`` written at ``indices`` along ``axis``
    (functional ``numpy.put_along_axis``; ``x`` is not modified). ``values``
    broadcasts to the shape ``take_along_axis(x, indices, axis)`` has; with
    repeated indices one of the values lands (which one is unspecified).

    Negative indices count from the end (they wrap once). ``mode`` says what
    an index still outside the axis does, as for ``fnp.at(x)[idx].set``:
    ``"drop"`` (the default; ``"fill"`` is the same) skips that update, and
    its value gets no gradient; ``"clip"`` writes at the nearest end of the
    axis; ``"promise_in_bounds"`` is undefined behaviour then.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.put_along_axis(mx.zeros((2, 3)), mx.array([[2], [0]]), 1.0, axis=1).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    >>> fnp.put_along_axis(mx.zeros(3), mx.array([-1, 7]), 1.0, axis=0).tolist()
    [0.0, 0.0, 1.0]
    """
    mode = _check_mode(mode, "drop", _SCATTER_MODES, "put_along_axis")
    x0 = fnp.asarray(x)
    x, indices, axis = _along_axis_args(x0, indices, axis, "put_along_axis")
    shape = tuple(x.shape)
    if 0 in shape:  # nothing to write into
        return x0
    (indices,), valid = _normalize_indices([indices], [shape[axis]], mode)
    _, arrays = _grid(shape, indices, axis)
    out = _scatter_normalized(x, (_ARRAY,) * len(arrays), arrays, valid, values, "set",
                              name="put_along_axis", redirect=axis)
    return fnp.reshape(out, tuple(x0.shape))


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
        x = fnp.asarray(self.x)
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


_SCATTERS = {"set": scatter_p, "add": scatter_add_p, "min": scatter_min_p,
             "max": scatter_max_p, "multiply": scatter_mul_p, "divide": scatter_div_p}


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
    x = fnp.asarray(x)
    shape = tuple(x.shape)
    spec, arrays = _parse(idx, shape)
    op = method
    if method == "subtract":
        op, values = "add", fnp.negative(fnp.asarray(values))
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
    out_shape, start, block = _indexed_shape(shape, spec, arrays)
    _check_values_shape(values, out_shape, name)
    neutral = _neutral_update(op, x.dtype)
    if neutral is not None:
        keep = _in_indexed_shape(valid, len(out_shape), start, block)
        return _apply(x, spec, arrays, fnp.where(keep, values, neutral), op, unique, name)
    axis = _array_axes(spec)[redirect]
    n = shape[axis]
    a = arrays[redirect]
    if _int_range(aval_of(a).dtype)[1] < n:  # the slot's index n must fit the dtype
        a = fnp.astype(a, mx.int32)
    arrays = list(arrays)
    # Non-negative first: in the padded axis, MLX would wrap -1 to the slot.
    arrays[redirect] = fnp.where(valid, fnp.remainder(a, n), n)
    slot = mx.zeros(shape[:axis] + (1,) + shape[axis + 1:], x.dtype)
    out = _apply(fnp.concatenate([x, slot], axis=axis), spec, arrays, values, op, unique, name)
    return static_slice(out, (slice(None),) * axis + (slice(0, n),))


def _values_as(values: Any, dtype: mx.Dtype) -> Any:
    """Update values as an array of ``x``'s dtype (as MLX casts them)."""
    if isinstance(values, (mx.array, Tracer)):
        return fnp.astype(values, dtype)
    return fnp.asarray(values, dtype)


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


def _indexed_shape(shape, spec, arrays) -> tuple[tuple[int, ...], int, int]:
    """NumPy's shape of ``x[idx]`` (as MLX's gather gives it), with where the
    broadcast block of the advanced indices starts in it and its length."""
    dims, axis, first, adv = [], 0, None, []
    for i, e in enumerate(spec):
        if e is None:
            dims.append(1)
        elif isinstance(e, tuple):
            dims.append(len(range(e[0], -1 if e[1] is None else e[1], e[2])))
            axis += 1
        else:
            axis += 1
            if arrays:
                adv.append(i)
                first = len(dims) if first is None else first
    dims.extend(shape[axis:])
    if not arrays:
        return tuple(dims), 0, 0
    block = np.broadcast_shapes(*[tuple(a.shape) for a in arrays])
    start = first if adv[-1] - adv[0] + 1 == len(adv) else 0
    dims[start:start] = block
    return tuple(dims), start, len(block)


def _mixed(spec: Spec) -> bool:
    """New axes or ints beside index arrays, which MLX's scatter misplaces."""
    return any(e is None or isinstance(e, int) for e in spec)


def _grid_index(shape, spec, arrays, out_shape, start, block):
    """One index array per axis of ``x``, all broadcasting to ``out_shape``,
    addressing what ``spec`` does. MLX's scatter misplaces new axes and ints
    mixed with index arrays; this form leaves it nothing to place."""
    n_out, grid, axis, j, k = len(out_shape), [], 0, 0, 0

    def along(pos, idx):
        dims = [1] * n_out
        dims[pos] = idx.shape[0]
        return idx.reshape(dims)

    def pos(j):
        return j if j < start else j + block

    for e in spec:
        if e is None:
            j += 1
            continue
        if isinstance(e, tuple):
            grid.append(along(pos(j), mx.arange(*(e if e[1] is not None else (e[0], -1, e[2])),
                                                dtype=mx.int32)))
            j += 1
        elif isinstance(e, int):
            grid.append(mx.array(e, dtype=mx.int32))
        else:
            a = arrays[k]
            k += 1
            lead = start + block - len(a.shape)
            grid.append(fnp.reshape(a, (1,) * lead + tuple(a.shape) + (1,) * (n_out - start
                                                                             - block)))
        axis += 1
    for d in shape[axis:]:
        grid.append(along(pos(j), mx.arange(d, dtype=mx.int32)))
        j += 1
    return (_ARRAY,) * len(grid), grid


def _apply(x, spec, arrays, values, op, unique=False, name=None):
    """The scatter primitive of ``op`` at a parsed index (index arrays used as
    they are)."""
    dtype = x.dtype
    if arrays and _mixed(spec):
        out_shape, start, block = _indexed_shape(tuple(x.shape), spec, arrays)
        spec, arrays = _grid_index(tuple(x.shape), spec, arrays, out_shape, start, block)
    values = _values_as(values, dtype)
    prim = _SCATTERS[op]
    params = {"spec": spec}
    if op in ("multiply", "divide"):
        unique = bool(unique) or not arrays
        if not unique:
            values = unique_indices_guard_p.bind(values)
        params["unique"] = unique
    try:
        return prim.bind(x, values, *arrays, **params)
    except ValueError as err:
        target = _indexed_shape(tuple(x.shape), spec, arrays)[0]
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


# ----------------------------------------------------------------------------
# Batching rules
# ----------------------------------------------------------------------------


def _batched_index(x_shape, x_bdim, spec, arrays, a_dims, axis_size):
    """An all-array spec and its index arrays addressing, in a batched ``x``
    (batch axis ``x_bdim``, or unbatched when ``None``), what ``spec`` does in
    each example, with the example number as one more index where ``x`` is
    batched. Every axis of ``x`` gets an index, so the result (of a gather, and
    the indexed region of a scatter) has the batch axis first followed by the
    per-example indexed shape."""
    pe_shape = tuple(d for i, d in enumerate(x_shape) if i != x_bdim)
    pe_arrays = [a if d is None else move_bdim(a, d, 0, axis_size)
                 for a, d in zip(arrays, a_dims)]
    pe_array_shapes = [tuple(aval_of(a).shape)[d is not None:]
                       for a, d in zip(pe_arrays, a_dims)]
    out_shape, start, block = _indexed_shape(
        pe_shape, spec, [np.broadcast_to(np.int32(0), s) for s in pe_array_shapes])
    n_out = 1 + len(out_shape)

    def along(pos, idx):
        dims = [1] * n_out
        dims[1 + pos] = idx.shape[0]
        return idx.reshape(dims)

    def pos(j):
        return j if j < start else j + block

    def batch_index():
        return mx.arange(axis_size, dtype=mx.int32).reshape((axis_size,) + (1,) * (n_out - 1))

    grid, axis, j, k = [], 0, 0, 0

    def consume(entry):
        nonlocal axis
        if x_bdim is not None and axis == x_bdim:
            grid.append(batch_index())
        axis += 1
        grid.append(entry)

    for e in spec:
        if e is None:
            j += 1
        elif isinstance(e, tuple):
            stop = e[1] if e[1] is not None else -1
            consume(along(pos(j), mx.arange(e[0], stop, e[2], dtype=mx.int32)))
            j += 1
        elif isinstance(e, int):
            consume(mx.array(e, dtype=mx.int32))
        else:
            a, s, batched = pe_arrays[k], pe_array_shapes[k], a_dims[k] is not None
            k += 1
            lead = start + block - len(s)
            shape = ((axis_size,) if batched else (1,)) + (1,) * lead + s \
                + (1,) * (len(out_shape) - start - block)
            consume(fnp.reshape(a, shape))
    for d in pe_shape[axis:]:
        consume(along(pos(j), mx.arange(d, dtype=mx.int32)))
        j += 1
    if x_bdim is not None and axis == x_bdim:  # the batch is x's last axis
        grid.append(batch_index())
    return (_ARRAY,) * len(grid), grid, out_shape


def _gather_batch(vals, dims, axis_size, spec):
    x, *arrays = vals
    x_bdim, *a_dims = dims
    new_spec, grid, _ = _batched_index(
        tuple(aval_of(x).shape), x_bdim, spec, arrays, a_dims, axis_size)
    return gather_p.bind(x, *grid, spec=new_spec), 0


def _batched_values(v, v_bdim, out_shape, axis_size):
    """Values for a per-example indexed shape ``out_shape``, made to broadcast
    against the batched indexed shape ``(axis_size, *out_shape)``."""
    shape = tuple(aval_of(v).shape)
    if v_bdim is not None:
        v = move_bdim(v, v_bdim, 0, axis_size)
        s = shape[:v_bdim] + shape[v_bdim + 1:]
        extra = max(len(s) - len(out_shape), 0)  # leading size-1 axes
        return fnp.reshape(v, (axis_size,) + (1,) * (len(out_shape) - len(s) + extra)
                           + s[extra:])
    extra = len(shape) - len(out_shape)
    return fnp.reshape(v, shape[extra:]) if extra > 0 else v


def _scatter_batch(prim):
    def rule(vals, dims, axis_size, spec, **params):
        x, v, *arrays = vals
        x_bdim, v_bdim, *a_dims = dims
        if x_bdim is None:
            x, x_bdim = move_bdim(x, None, 0, axis_size), 0
        x_shape = tuple(aval_of(x).shape)
        new_spec, grid, out_shape = _batched_index(
            x_shape, x_bdim, spec, arrays, a_dims, axis_size)
        v = _batched_values(v, v_bdim, out_shape, axis_size)
        return prim.bind(x, v, *grid, spec=new_spec, **params), x_bdim

    return rule


def _take_along_axis_batch(vals, dims, axis_size, axis):
    x, indices = vals
    x_bdim, i_bdim = dims
    to = x_bdim if x_bdim is not None else i_bdim
    x = fnp.expand_dims(x, to) if x_bdim is None else x
    if i_bdim is None:
        indices = fnp.expand_dims(indices, to)
    elif i_bdim != to:
        indices = fnp.moveaxis(indices, i_bdim, to)
    return take_along_axis_p.bind(x, indices, axis=axis + (axis >= to)), to


gather_p.batch = _gather_batch
for _p in (scatter_p, scatter_add_p, scatter_mul_p, scatter_div_p, scatter_min_p,
           scatter_max_p):
    _p.batch = _scatter_batch(_p)
unique_indices_guard_p.batch = batch_unary(unique_indices_guard_p)
take_along_axis_p.batch = _take_along_axis_batch
