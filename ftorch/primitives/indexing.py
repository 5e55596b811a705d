"""Indexing primitives: gather, the scatters and take_along_axis; the
primitive layer.

An index is a static, hashable *spec* with one entry per index position: an
``int`` (a normalized integer index), a ``(start, stop, step)`` tuple (a
normalized slice), ``None`` (a new axis) or ``"a"`` (``ARRAY``: the next
integer-array operand). The primitives take the index arrays as extra
(non-differentiable) operands and rebuild the MLX index from ``spec``, so
each is one MLX call eagerly:

- ``gather``: ``x[idx]`` with at least one integer array (advanced indexing).
  Purely basic indices lower to ``static_slice`` and ``reshape`` instead.
- ``scatter``, ``scatter_add``, ``scatter_mul``, ``scatter_div``,
  ``scatter_min``, ``scatter_max``: ``x`` with ``x[idx]`` replaced by, added
  to, ... ``values`` (``fnp.at(x)[idx].set(v)`` and friends).
- ``take_along_axis``.
- ``unique_indices_guard``: passes values through; differentiating through
  it raises (the values of a multiply/divide whose indices may repeat).

``gather`` and ``scatter_add`` are each other's transpose, which is how
duplicate indices accumulate in gradients.

The primitives have MLX's semantics: every index-array entry must lie in
``[-n, n)`` (MLX wraps negative entries itself and checks nothing else), and
a scatter's values broadcast to the indexed shape. MLX's scatter misplaces
ints and new axes beside index arrays, so a scatter with index arrays takes
the all-array spec that ``grid_index`` makes. Parsing index expressions and
JAX's modes for out-of-range entries are ``ftorch.numpy``'s
(``ftorch/numpy/_indexing.py``), built on these.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.gather(mx.arange(5), mx.array([4, 0]), spec=("a",)).tolist()
[4, 0]
>>> lax.scatter_add(mx.zeros(3), mx.array(1.0), mx.array([0, 0]), spec=("a",)).tolist()
[2.0, 0.0, 0.0]
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of, is_floating, mlx_at, mlx_getitem, mlx_setitem
from ftorch.primitives._rules import add_tangents, move_bdim, unbroadcast, vectorized

__all__ = [
    "gather", "scatter", "scatter_add", "scatter_mul", "scatter_div", "scatter_min",
    "scatter_max", "take_along_axis", "unique_indices_guard",
]

Spec = tuple  # entries: int | tuple[int, int | None, int] | None | "a"

ARRAY = "a"


# ----------------------------------------------------------------------------
# Index specs
# ----------------------------------------------------------------------------


def _build(spec: Spec, arrays: Sequence) -> tuple:
    """The MLX index tuple for a spec and its concrete index arrays."""
    out, k = [], 0
    for e in spec:
        if e == ARRAY:
            out.append(arrays[k])
            k += 1
        elif isinstance(e, tuple):
            out.append(slice(*e))
        else:
            out.append(e)
    return tuple(out)


def _has_arrays(spec: Spec) -> bool:
    return ARRAY in spec


def _nones(arrays) -> tuple:
    return (None,) * len(arrays)


def indexed_shape(shape, spec, arrays) -> tuple[tuple[int, ...], int, int]:
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


def is_mixed(spec: Spec) -> bool:
    """New axes or ints beside index arrays, which MLX's scatter misplaces."""
    return any(e is None or isinstance(e, int) for e in spec)


def grid_index(shape, spec, arrays, out_shape, start, block) -> tuple[Spec, list]:
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
            grid.append(lax.reshape(a, (1,) * lead + tuple(a.shape) + (1,) * (n_out - start
                                                                             - block)))
        axis += 1
    for d in shape[axis:]:
        grid.append(along(pos(j), mx.arange(d, dtype=mx.int32)))
        j += 1
    return (ARRAY,) * len(grid), grid


def along_axis_grid(x_shape, indices, axis) -> tuple[tuple[int, ...], list]:
    """The result shape of take_along_axis and the index arrays (one per
    axis) that address the same elements through ``gather``."""
    i_shape = aval_of(indices).shape
    out_shape = tuple(n if i == axis else max(d, n)
                      for i, (d, n) in enumerate(zip(x_shape, i_shape)))
    arrays = []
    for i, d in enumerate(out_shape):
        if i == axis:
            arrays.append(lax.broadcast_to(indices, out_shape))
            continue
        ones = [1] * len(out_shape)
        ones[i] = d
        # A size-1 axis of x broadcasts: it is always read at 0.
        arrays.append(mx.arange(d, dtype=mx.int32).reshape(ones) if x_shape[i] == d
                      else mx.zeros(ones, mx.int32))
    return out_shape, arrays


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
    out_shape, start, block = indexed_shape(
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
            consume(lax.reshape(a, shape))
    for d in pe_shape[axis:]:
        consume(along(pos(j), mx.arange(d, dtype=mx.int32)))
        j += 1
    if x_bdim is not None and axis == x_bdim:  # the batch is x's last axis
        grid.append(batch_index())
    return (ARRAY,) * len(grid), grid, out_shape


def _batched_values(v, v_bdim, out_shape, axis_size):
    """Values for a per-example indexed shape ``out_shape``, made to broadcast
    against the batched indexed shape ``(axis_size, *out_shape)``."""
    shape = tuple(aval_of(v).shape)
    if v_bdim is not None:
        v = move_bdim(v, v_bdim, 0, axis_size)
        s = shape[:v_bdim] + shape[v_bdim + 1:]
        extra = max(len(s) - len(out_shape), 0)  # leading size-1 axes
        return lax.reshape(v, (axis_size,) + (1,) * (len(out_shape) - len(s) + extra)
                           + s[extra:])
    extra = len(shape) - len(out_shape)
    return lax.reshape(v, shape[extra:]) if extra > 0 else v


def _values_ct(ct_g: Any, v: Any) -> Any:
    """A cotangent of the gathered shape summed back to the values' shape
    (values may broadcast, with extra leading size-1 axes too)."""
    v_aval, g_shape = aval_of(v), aval_of(ct_g).shape
    if len(v_aval.shape) > len(g_shape):
        ct_g = lax.reshape(ct_g, (1,) * (len(v_aval.shape) - len(g_shape)) + tuple(g_shape))
    return unbroadcast(ct_g, v)


def _scatter_impl(update):
    """An MLX scatter ``update(x, index, v)`` that leaves ``x`` as it is when
    the indexed region is empty (MLX's scatter fails on empty updates)."""

    def impl(x, v, *arrays, **params):
        if 0 in indexed_shape(tuple(x.shape), params["spec"], arrays)[0]:
            return x
        return update(x, _build(params["spec"], arrays), v)

    return impl


def _scatter_batch(prim):
    def rule(vals, dims, axis_size, *, spec, **params):
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


# ----------------------------------------------------------------------------
# gather
# ----------------------------------------------------------------------------

gather_p = Primitive(
    "gather", lambda x, *arrays, spec: mlx_getitem(x, _build(spec, arrays)))


@gather_p.def_jvp
def _gather_jvp(primals, tangents, *, spec):
    x, *arrays = primals
    t = tangents[0]
    return gather(x, *arrays, spec=spec), None if t is None else gather(t, *arrays, spec=spec)


@gather_p.def_vjp
def _gather_vjp(ct, out, x, *arrays, needed, spec):
    ct_x = scatter_add(lax.zeros_like(x), ct, *arrays, spec=spec) if needed[0] else None
    return (ct_x, *_nones(arrays))


@gather_p.def_batch
def _gather_batch(vals, dims, axis_size, *, spec):
    x, *arrays = vals
    x_bdim, *a_dims = dims
    new_spec, grid, _ = _batched_index(
        tuple(aval_of(x).shape), x_bdim, spec, arrays, a_dims, axis_size)
    return gather_p.bind(x, *grid, spec=new_spec), 0


def gather(x: Any, *arrays: Any, spec: Spec) -> Any:
    """``x[idx]`` for the index ``spec`` and its integer index ``arrays``
    (entries in ``[-n, n)``), as MLX indexes."""
    return gather_p.bind(x, *arrays, spec=spec)


# ----------------------------------------------------------------------------
# scatter_add: the transpose of gather
# ----------------------------------------------------------------------------

scatter_add_p = Primitive(
    "scatter_add", _scatter_impl(lambda x, idx, v: mlx_at(x)[idx].add(v)))


@scatter_add_p.def_jvp
def _scatter_add_jvp(primals, tangents, *, spec):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_add(x, v, *arrays, spec=spec)
    if tv is None:
        return out, tx
    return out, scatter_add(lax.zeros_like(x) if tx is None else tx, tv, *arrays, spec=spec)


@scatter_add_p.def_vjp
def _scatter_add_vjp(ct, out, x, v, *arrays, needed, spec):
    ct_v = _values_ct(gather(ct, *arrays, spec=spec), v) if needed[1] else None
    return (ct if needed[0] else None, ct_v, *_nones(arrays))


scatter_add_p.def_batch(_scatter_batch(scatter_add_p))


def scatter_add(x: Any, v: Any, *arrays: Any, spec: Spec) -> Any:
    """``x`` with ``v`` added at the index ``spec`` (repeated indices
    accumulate); ``v`` has ``x``'s dtype and broadcasts to the indexed shape."""
    return scatter_add_p.bind(x, v, *arrays, spec=spec)


# ----------------------------------------------------------------------------
# scatter: x[idx] = v
# ----------------------------------------------------------------------------


def _set(x, idx, v):
    y = copy.copy(x)  # a new handle on the same graph node: the update rebinds only y
    mlx_setitem(y, idx, v)
    return y


scatter_p = Primitive("scatter", _scatter_impl(_set))


@scatter_p.def_jvp
def _scatter_jvp(primals, tangents, *, spec):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter(x, v, *arrays, spec=spec)
    tx = lax.zeros_like(x) if tx is None else tx
    tv = lax.zeros((), aval_of(x).dtype) if tv is None else tv
    return out, scatter(tx, tv, *arrays, spec=spec)


def _winners(arrays, spec, x_shape, g_shape) -> Any:
    """True where an entry of the gathered shape is the update that landed
    (with duplicate indices only one does); found by scattering entry ids."""
    n = 1
    for d in g_shape:
        n *= d
    ids = mx.arange(n, dtype=mx.int32).reshape(g_shape)
    landed = scatter(mx.full(x_shape, -1, mx.int32), ids, *arrays, spec=spec)
    return lax.equal(gather(landed, *arrays, spec=spec), ids)


@scatter_p.def_vjp
def _scatter_vjp(ct, out, x, v, *arrays, needed, spec):
    ct_x = ct_v = None
    if needed[0]:
        ct_x = scatter(ct, lax.zeros((), aval_of(ct).dtype), *arrays, spec=spec)
    if needed[1]:
        ct_g = gather(ct, *arrays, spec=spec)
        if _has_arrays(spec):
            ct_g = lax.where(_winners(arrays, spec, aval_of(x).shape, aval_of(ct_g).shape),
                             ct_g, lax.zeros((), aval_of(ct_g).dtype))
        ct_v = _values_ct(ct_g, v)
    return (ct_x, ct_v, *_nones(arrays))


scatter_p.def_batch(_scatter_batch(scatter_p))


def scatter(x: Any, v: Any, *arrays: Any, spec: Spec) -> Any:
    """``x`` with ``x[idx]`` replaced by ``v`` at the index ``spec`` (with
    repeated indices one update lands); ``v`` has ``x``'s dtype and
    broadcasts to the indexed shape."""
    return scatter_p.bind(x, v, *arrays, spec=spec)


# ----------------------------------------------------------------------------
# scatter_mul, scatter_div: derivatives in the values need unique indices
# ----------------------------------------------------------------------------


def _needs_unique(spec, unique, name):
    if _has_arrays(spec) and not unique:
        raise NotImplementedError(
            f"the derivative of at[...].{name}(values) with respect to values is only "
            "implemented for unique indices: pass unique_indices=True when the index "
            "arrays have no repeated positions")


scatter_mul_p = Primitive(
    "scatter_mul", _scatter_impl(lambda x, idx, v: mlx_at(x)[idx].multiply(v)))


@scatter_mul_p.def_jvp
def _scatter_mul_jvp(primals, tangents, *, spec, unique):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_mul(x, v, *arrays, spec=spec, unique=unique)
    t_x = None if tx is None else scatter_mul(tx, v, *arrays, spec=spec, unique=unique)
    t_v = None
    if tv is not None:
        _needs_unique(spec, unique, "multiply")
        t_v = scatter_add(lax.zeros_like(x), lax.multiply(gather(x, *arrays, spec=spec), tv),
                          *arrays, spec=spec)
    return out, add_tangents(t_x, t_v)


@scatter_mul_p.def_vjp
def _scatter_mul_vjp(ct, out, x, v, *arrays, needed, spec, unique):
    ct_x = scatter_mul(ct, v, *arrays, spec=spec, unique=unique) if needed[0] else None
    # Exact for unique indices; unique_indices_guard refuses the other case.
    ct_v = (_values_ct(gather(lax.multiply(ct, x), *arrays, spec=spec), v) if needed[1]
            else None)
    return (ct_x, ct_v, *_nones(arrays))


scatter_mul_p.def_batch(_scatter_batch(scatter_mul_p))


def scatter_mul(x: Any, v: Any, *arrays: Any, spec: Spec, unique: bool) -> Any:
    """``x`` with ``x[idx]`` multiplied by ``v`` at the index ``spec``.
    ``unique`` promises that the index arrays repeat no position (the
    derivative in ``v`` relies on it); without it, pass ``v`` through
    ``unique_indices_guard`` so that differentiating in ``v`` raises."""
    return scatter_mul_p.bind(x, v, *arrays, spec=spec, unique=unique)


scatter_div_p = Primitive(
    "scatter_div", _scatter_impl(lambda x, idx, v: mlx_at(x)[idx].divide(v)))


@scatter_div_p.def_jvp
def _scatter_div_jvp(primals, tangents, *, spec, unique):
    x, v, *arrays = primals
    tx, tv = tangents[:2]
    out = scatter_div(x, v, *arrays, spec=spec, unique=unique)
    t_x = None if tx is None else scatter_div(tx, v, *arrays, spec=spec, unique=unique)
    t_v = None
    if tv is not None:
        _needs_unique(spec, unique, "divide")
        g = lax.negative(lax.multiply(gather(out, *arrays, spec=spec), tv))
        t_v = scatter_add(lax.zeros_like(x), lax.divide(g, v), *arrays, spec=spec)
    return out, add_tangents(t_x, t_v)


@scatter_div_p.def_vjp
def _scatter_div_vjp(ct, out, x, v, *arrays, needed, spec, unique):
    ct_x = scatter_div(ct, v, *arrays, spec=spec, unique=unique) if needed[0] else None
    ct_v = None
    if needed[1]:
        g = lax.negative(gather(lax.multiply(ct, out), *arrays, spec=spec))
        ct_v = _values_ct(lax.divide(g, v), v)
    return (ct_x, ct_v, *_nones(arrays))


scatter_div_p.def_batch(_scatter_batch(scatter_div_p))


def scatter_div(x: Any, v: Any, *arrays: Any, spec: Spec, unique: bool) -> Any:
    """``x`` with ``x[idx]`` divided by ``v`` at the index ``spec`` (MLX
    multiplies by ``1 / v``); ``unique`` as for ``scatter_mul``."""
    return scatter_div_p.bind(x, v, *arrays, spec=spec, unique=unique)


# ----------------------------------------------------------------------------
# unique_indices_guard
# ----------------------------------------------------------------------------

_GUARD_ERROR = (
    "the derivative of at[...].multiply/divide(values) with respect to values is only "
    "implemented for unique indices: pass unique_indices=True when the index arrays "
    "have no repeated positions")

# Passes values through unchanged; differentiating through it raises. It marks
# the values of a multiply/divide whose indices may repeat (unique_indices=False).
unique_indices_guard_p = Primitive("unique_indices_guard", lambda v: v)
vectorized(unique_indices_guard_p)


@unique_indices_guard_p.def_jvp
def _guard_jvp(primals, tangents):
    raise NotImplementedError(_GUARD_ERROR)


@unique_indices_guard_p.def_vjp
def _guard_vjp(ct, out, v, *, needed):
    if needed[0]:
        raise NotImplementedError(_GUARD_ERROR)
    return (None,)


def unique_indices_guard(v: Any) -> Any:
    """``v`` unchanged; its derivative raises NotImplementedError (the values
    of a ``scatter_mul`` / ``scatter_div`` whose indices may repeat)."""
    return unique_indices_guard_p.bind(v)


# ----------------------------------------------------------------------------
# scatter_min, scatter_max: the derivative is shared equally among ties
# ----------------------------------------------------------------------------


def _extremum_masks(out, x, v, arrays, spec):
    """Where x and the values attain the result, and how many tie there."""
    dtype = aval_of(out).dtype
    on_x = lax.astype(lax.equal(x, out), dtype)
    on_v = lax.astype(lax.equal(v, gather(out, *arrays, spec=spec)), dtype)
    count = lax.add(on_x, scatter_add(lax.zeros_like(out), on_v, *arrays, spec=spec))
    return on_x, on_v, count


def _extremum(name: str, method: str) -> Primitive:
    prim = Primitive(name, _scatter_impl(lambda x, idx, v: getattr(mlx_at(x)[idx], method)(v)))

    @prim.def_jvp
    def jvp(primals, tangents, *, spec):
        x, v, *arrays = primals
        tx, tv = tangents[:2]
        out = prim.bind(x, v, *arrays, spec=spec)
        if not is_floating(aval_of(out).dtype):
            return out, None
        on_x, on_v, count = _extremum_masks(out, x, v, arrays, spec)
        t_x = None if tx is None else lax.multiply(tx, on_x)
        t_v = None if tv is None else scatter_add(
            lax.zeros_like(out), lax.multiply(tv, on_v), *arrays, spec=spec)
        return out, lax.divide(add_tangents(t_x, t_v), count)

    @prim.def_vjp
    def vjp(ct, out, x, v, *arrays, needed, spec):
        on_x, on_v, count = _extremum_masks(out, x, v, arrays, spec)
        ct = lax.divide(ct, count)
        ct_x = lax.multiply(ct, on_x) if needed[0] else None
        ct_v = (_values_ct(lax.multiply(gather(ct, *arrays, spec=spec), on_v), v) if needed[1]
                else None)
        return (ct_x, ct_v, *_nones(arrays))

    prim.def_batch(_scatter_batch(prim))
    return prim


scatter_min_p = _extremum("scatter_min", "minimum")


def scatter_min(x: Any, v: Any, *arrays: Any, spec: Spec) -> Any:
    """``x`` with ``x[idx]`` replaced by ``minimum(x[idx], v)`` at the index
    ``spec``."""
    return scatter_min_p.bind(x, v, *arrays, spec=spec)


scatter_max_p = _extremum("scatter_max", "maximum")


def scatter_max(x: Any, v: Any, *arrays: Any, spec: Spec) -> Any:
    """``x`` with ``x[idx]`` replaced by ``maximum(x[idx], v)`` at the index
    ``spec``."""
    return scatter_max_p.bind(x, v, *arrays, spec=spec)


# ----------------------------------------------------------------------------
# take_along_axis
# ----------------------------------------------------------------------------

take_along_axis_p = Primitive(
    "take_along_axis", lambda x, indices, axis: mx.take_along_axis(x, indices, axis=axis))


@take_along_axis_p.def_jvp
def _take_along_axis_jvp(primals, tangents, *, axis):
    x, indices = primals
    tx = tangents[0]
    out = take_along_axis(x, indices, axis)
    return out, None if tx is None else take_along_axis(tx, indices, axis)


@take_along_axis_p.def_vjp
def _take_along_axis_vjp(ct, out, x, indices, *, needed, axis):
    if not needed[0]:
        return None, None
    _, arrays = along_axis_grid(aval_of(x).shape, indices, axis)
    return scatter_add(lax.zeros_like(x), ct, *arrays, spec=(ARRAY,) * len(arrays)), None


@take_along_axis_p.def_batch
def _take_along_axis_batch(vals, dims, axis_size, *, axis):
    x, indices = vals
    x_bdim, i_bdim = dims
    to = x_bdim if x_bdim is not None else i_bdim
    x = lax.expand_dims(x, (to,)) if x_bdim is None else x
    if i_bdim is None:
        indices = lax.expand_dims(indices, (to,))
    elif i_bdim != to:
        indices = lax.moveaxis(indices, i_bdim, to)
    return take_along_axis(x, indices, axis + (axis >= to)), to


def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    """``x`` read at the integer ``indices`` (entries in ``[-n, n)``, of
    ``x``'s ndim, broadcasting against it off ``axis``) along the
    non-negative ``axis``, as ``mx.take_along_axis``."""
    return take_along_axis_p.bind(x, indices, axis=axis)
