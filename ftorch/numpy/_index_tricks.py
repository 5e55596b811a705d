"""Index helpers as in jax.numpy: the indices of nonzero entries
(``nonzero``, ``argwhere``, ``flatnonzero``) and the selections built on
them (``extract``, ``compress``), picking among choices (``choose``,
``select``, ``piecewise``), functional writes (``place``, ``put``),
``delete`` and ``insert``, index arrays (``indices``, ``diag_indices``,
``ix_``, ``mask_indices``, ``ravel_multi_index``, ``unravel_index``), the
index-expression objects (``r_``, ``c_``, ``s_``, ``index_exp``, ``mgrid``,
``ogrid``), and functions mapped over indices or axes (``fromfunction``,
``apply_along_axis``, ``apply_over_axes``, ``vectorize``), the last ones
built on ``ftorch.vmap``.

The number of nonzero entries depends on the data: without ``size`` it is
read off the values eagerly (also under ``grad``), and under ``jit`` or
``vmap`` it raises an error saying to pass ``size``; with ``size`` (and
``fill_value`` for the missing entries) these functions are traceable.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> fnp.nonzero(mx.array([0, 3, 0, 4]))[0].tolist()
[1, 3]
>>> ft.jit(lambda x: fnp.flatnonzero(x, size=3, fill_value=-1))(mx.array([0, 3, 0, 4])).tolist()
[1, 3, -1]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Tracer, is_floating
from ftorch.dtypes import DTypeLike
from ftorch.numpy import _creation, _elementwise, _indexing, _reduction, _shape, _stacking
from ftorch.primitives.creation import static_shape, static_size
from ftorch.transforms.vmap import vmap

__all__ = [
    "nonzero", "argwhere", "flatnonzero", "extract", "compress", "choose", "select",
    "piecewise", "place", "put", "delete", "insert", "diag_indices", "diag_indices_from",
    "indices", "ix_", "mask_indices", "ravel_multi_index", "unravel_index", "c_", "r_", "s_",
    "index_exp", "mgrid", "ogrid", "fromfunction", "apply_along_axis", "apply_over_axes",
    "vectorize",
]


# ----------------------------------------------------------------------------
# Concrete values and sizes
# ----------------------------------------------------------------------------


def concrete(x: Any, fname: str, hint: str) -> np.ndarray:
    """The value of ``x`` as a NumPy array (a traced value under ``grad`` has
    one); under ``jit`` or ``vmap``, the transform's error prefixed with why
    ``fname`` needs it and ``hint`` (what to pass instead)."""
    if isinstance(x, Tracer):
        try:
            x = x._concrete()
        except TypeError as e:
            e.args = (f"{fname}: {hint}. {e}",)
            raise
    return np.array(x)


def _size_hint(fname: str) -> str:
    return (f"the output size depends on the values of the input; pass size (a static "
            f"int) to use {fname} under jit or vmap")


def _iota(n: int) -> mx.array:
    return mx.arange(n, dtype=mx.int32)


def true_positions(mask: Any, size: int | None, fname: str) -> tuple[Any, Any]:
    """The flat positions (``int32``) where the 1-D boolean ``mask`` holds,
    and which of them are real: None without ``size`` (all are; read off the
    values), else a boolean mask over the ``size`` slots (the first ``size``
    true positions, then zeros)."""
    if size is None:
        found = np.flatnonzero(concrete(mask, fname, _size_hint(fname)))
        return mx.array(found.astype(np.int32)), None
    n = mask.shape[0]
    counts = lax.astype(mask, mx.int32)
    # The k-th true position lands in slot k; slots from size on are dropped.
    slot = lax.where(mask, lax.subtract(lax.cumsum(counts, 0), 1), size)
    found = _indexing.at(lax.zeros((size,), mx.int32))[slot].set(_iota(n), mode="drop")
    return found, lax.less(_iota(size), lax.sum(counts, (0,)))


def check_size(size: Any, fname: str) -> int | None:
    return None if size is None else static_size(size, fname, "size")


def _nonzero_mask(a: Any) -> Any:
    return a if a.dtype == mx.bool_ else lax.not_equal(a, mx.zeros((), a.dtype))


def _filled(x: Any, valid: Any, fill_value: Any, axis: int = 0) -> Any:
    """``x`` with ``fill_value`` in the slots along ``axis`` that ``valid`` marks unreal."""
    if valid is None:
        return x
    shape = [1] * x.ndim
    shape[axis] = valid.shape[0]
    fill = _creation.asarray(fill_value)
    return lax.where(lax.reshape(valid, tuple(shape)), x, lax.astype(fill, x.dtype))


# ----------------------------------------------------------------------------
# nonzero, argwhere, flatnonzero, extract, compress
# ----------------------------------------------------------------------------


def nonzero(a: Any, *, size: int | None = None,
            fill_value: Any = None) -> tuple[Any, ...]:
    """The indices (``int32``, one array per axis) of the nonzero entries of
    ``a``, in row-major order, as ``jax.numpy.nonzero``. With ``size``, the
    first ``size`` of them, padded with ``fill_value`` (default 0; a tuple
    gives one per axis).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [i.tolist() for i in fnp.nonzero(mx.array([[0, 1], [2, 0]]))]
    [[0, 1], [1, 0]]
    >>> fnp.nonzero(mx.array([0, 5]), size=3, fill_value=-1)[0].tolist()
    [1, -1, -1]
    """
    return _nonzero(a, size, fill_value, "nonzero")


def _nonzero(a: Any, size: Any, fill_value: Any, fname: str) -> tuple[Any, ...]:
    a = _creation.asarray(a)
    if a.ndim == 0:
        raise ValueError(f"{fname}: a 0-d array has no axes to index; use "
                         "atleast_1d(a) first")
    size = check_size(size, fname)
    shape = tuple(a.shape)
    flat, valid = true_positions(_shape.ravel(_nonzero_mask(a)), size, fname)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(f"{fname}: fill_value has {len(fills)} entries for an array of "
                         f"ndim {a.ndim}")
    out = []
    stride = math.prod(shape)
    for d, fill in zip(shape, fills):
        stride //= d
        idx = lax.remainder(lax.floor_divide(flat, stride), d) if a.ndim > 1 else flat
        out.append(_filled(idx, valid, 0 if fill is None else fill))
    return tuple(out)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices (``int32``) of the nonzero entries of the flattened ``a``;
    ``size`` and ``fill_value`` as in ``nonzero``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.flatnonzero(mx.array([[0, 1], [2, 0]])).tolist()
    [1, 2]
    """
    return _nonzero(_shape.ravel(a), size, fill_value, "flatnonzero")[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices (``int32``) of the nonzero entries of ``a`` as the rows of
    an ``(n, a.ndim)`` array; ``size`` and ``fill_value`` as in ``nonzero``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.argwhere(mx.array([[0, 1], [2, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    a = _creation.asarray(a)
    if a.ndim == 0:  # one row of no indices if a is nonzero
        (found,) = _nonzero(lax.reshape(a, (1,)), size, fill_value, "argwhere")
        return lax.zeros((found.shape[0], 0), mx.int32)
    return _stacking.column_stack(_nonzero(a, size, fill_value, "argwhere"))


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """The slices of ``a`` along ``axis`` (of the flattened ``a`` when None)
    where the 1-D ``condition`` is true, as ``jax.numpy.compress``; a
    ``condition`` shorter than the axis selects from its start. With
    ``size`` (at most the axis length), the first ``size`` slices, padded
    with ``fill_value``. Differentiable in ``a``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.compress(mx.array([True, False, True]), mx.array([[1, 2], [3, 4], [5, 6]]),
    ...              axis=0).tolist()
    [[1, 2], [5, 6]]
    """
    _reduction._no_out(out, "compress")
    cond = _nonzero_mask(_creation.asarray(condition))
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {tuple(cond.shape)}")
    a = _creation.asarray(a)
    if axis is None:
        a, ax = _shape.ravel(a), 0
    else:
        ax = _shape._axis(axis, a.ndim, "compress")
    n = a.shape[ax]
    if cond.shape[0] > n:
        extra = concrete(cond[n:], "compress", "condition is longer than the axis; cut it")
        if extra.any():
            raise ValueError(
                f"compress: condition has a true entry beyond the axis's length {n}")
        cond = cond[:n]
    if cond.shape[0] < n:
        a = lax.static_slice(a, _shape._along(ax, slice(0, cond.shape[0])))
        n = cond.shape[0]
    size = check_size(size, "compress")
    if size is not None and size > n:
        raise ValueError(f"compress: size must not be greater than the axis length {n}, "
                         f"got {size}")
    found, valid = true_positions(cond, size, "compress")
    picked = _indexing.take(a, found, axis=ax, mode="promise_in_bounds")
    return _filled(picked, valid, fill_value, ax)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The entries of the flattened ``arr`` where the flattened ``condition``
    is nonzero, as ``jax.numpy.extract``; ``size`` and ``fill_value`` as in
    ``compress``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.extract(mx.array([1, 0, 1]), mx.array([5.0, 6.0, 7.0])).tolist()
    [5.0, 7.0]
    """
    return compress(_shape.ravel(condition), _shape.ravel(arr), size=size,
                    fill_value=fill_value)


# ----------------------------------------------------------------------------
# choose, select, piecewise
# ----------------------------------------------------------------------------


def _index_mode(index: Any, n: int, mode: str, fname: str, argname: str) -> Any:
    """An integer index array into ``n`` items under ``mode``: "raise" checks
    the values (so needs them), "wrap" takes them modulo ``n``, "clip" clips."""
    if mode == "wrap":
        return lax.remainder(index, n)
    if mode == "clip":
        return _elementwise.clip(index, 0, n - 1)
    if mode != "raise":
        raise ValueError(f"{fname}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    values = concrete(index, fname, f"mode='raise' checks the values of {argname}; use "
                                    "mode='wrap' or mode='clip' under jit or vmap")
    if ((values < 0) | (values >= n)).any():
        raise ValueError(f"{fname}: {argname} has entries outside [0, {n})")
    return index


def _int_array(x: Any, fname: str, argname: str) -> Any:
    x = _creation.asarray(x)
    if is_floating(x.dtype) or x.dtype in (mx.bool_, mx.complex64):
        raise TypeError(f"{fname}: {argname} must be an integer array, got dtype {x.dtype}")
    return x


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Entry ``i`` of ``choices[a[i]]``, with ``a`` and the choices broadcast
    together, as ``numpy.choose``. ``mode`` handles entries of ``a`` outside
    ``[0, len(choices))``: "raise" (needs ``a``'s values, so not under jit),
    "wrap" or "clip". Differentiable in the choices.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.choose(mx.array([0, 1, 0]), [mx.array([1, 2, 3]), mx.array([10, 20, 30])]).tolist()
    [1, 20, 3]
    """
    _reduction._no_out(out, "choose")
    a = _int_array(a, "choose", "a")
    options = _stacking._sequence(choices, "choose")
    a, *options = _shape.broadcast_arrays(a, *options)
    a = _index_mode(a, len(options), mode, "choose", "a")
    stacked = _shape.stack(options)
    return lax.squeeze(_indexing.take_along_axis(stacked, lax.expand_dims(a, (0,)), 0,
                                                 mode="promise_in_bounds"), (0,))


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """Entry ``i`` of the first ``choicelist[j]`` whose ``condlist[j]`` is
    true at ``i``, else ``default``; all broadcast together, as
    ``numpy.select``. Differentiable in the choices and ``default``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([-2.0, 0.5, 3.0])
    >>> fnp.select([x < 0, x > 1], [-x, x * 10], default=0.0).tolist()
    [2.0, 0.0, 30.0]
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} conditions but choicelist "
                         f"has {len(choicelist)} choices; they must be as many")
    if not condlist:
        raise ValueError("select: condlist must be non-empty")
    out = _creation.asarray(default)
    # The first condition that holds wins, so it is applied last.
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = _elementwise.where(_nonzero_mask(_creation.asarray(cond)), choice, out)
    return out


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``funclist[j](x, *args, **kw)`` where ``condlist[j]`` holds (a later
    condition wins over an earlier one), as ``numpy.piecewise``; a
    ``funclist`` one longer than ``condlist`` ends with the function for the
    entries no condition holds at (else they are 0). An entry of
    ``funclist`` may be a constant. Results take ``x``'s dtype. Every
    function is evaluated on the whole of ``x``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> x = mx.array([-1.0, 0.5, 2.0])
    >>> fnp.piecewise(x, [x < 0, x > 1], [0.0, lambda v: v * v, lambda v: v]).tolist()
    [0.0, 0.5, 4.0]
    """
    x = _creation.asarray(x)
    if isinstance(condlist, (list, tuple)):
        conds = [_nonzero_mask(_creation.asarray(c)) for c in condlist]
    else:
        c = _nonzero_mask(_creation.asarray(condlist))
        conds = [c] if c.ndim == x.ndim else list(_stacking.unstack(c))
    funcs = list(funclist)
    if len(funcs) not in (len(conds), len(conds) + 1):
        raise ValueError(f"piecewise: funclist has {len(funcs)} entries for {len(conds)} "
                         f"conditions; give {len(conds)} or {len(conds) + 1}")

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return lax.broadcast_to(lax.astype(_creation.asarray(v), x.dtype), tuple(x.shape))

    out = value(funcs.pop()) if len(funcs) > len(conds) else lax.zeros(tuple(x.shape), x.dtype)
    for cond, f in zip(conds, funcs):
        out = lax.where(cond, value(f), out)
    return out


# ----------------------------------------------------------------------------
# place, put, delete, insert
# ----------------------------------------------------------------------------


def _not_inplace(inplace: bool, fname: str) -> None:
    if inplace:
        raise ValueError(f"{fname}: arrays are immutable, so it cannot modify one in place; "
                         "pass inplace=False and use the returned array")


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """A copy of ``arr`` whose entries where ``mask`` is true are the values
    of the flattened ``vals`` in order (repeated when there are fewer), as
    ``jax.numpy.place``; ``inplace=False`` must be given. Traceable, and
    differentiable in ``arr`` and ``vals``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.place(mx.zeros(5), mx.array([0, 1, 1, 0, 1]), mx.array([7.0, 8.0]),
    ...           inplace=False).tolist()
    [0.0, 7.0, 8.0, 0.0, 7.0]
    """
    _not_inplace(inplace, "place")
    arr = _creation.asarray(arr)
    mask = _nonzero_mask(_creation.asarray(mask))
    if mask.size != arr.size:
        raise ValueError(f"place: mask has {mask.size} entries but arr has {arr.size}")
    vals = _shape.ravel(vals)
    if vals.size == 0:
        raise ValueError("place: vals must not be empty")
    flat_mask = _shape.ravel(mask)
    rank = lax.subtract(lax.cumsum(lax.astype(flat_mask, mx.int32), 0), 1)
    picked = _indexing.take(lax.astype(vals, arr.dtype), rank, mode="wrap")
    return lax.reshape(lax.where(flat_mask, picked, _shape.ravel(arr)), tuple(arr.shape))


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with the entries of its flattened form at ``ind`` set
    to the values of ``v`` (repeated or cut to ``ind``'s length), as
    ``jax.numpy.put``; ``inplace=False`` must be given. Out-of-range
    indices: by default a negative index counts once from the end, then
    indices are clipped into range; ``mode="clip"`` clips them (negative
    ones to 0), ``"wrap"`` takes them modulo the size. Which of repeated
    indices wins is unspecified.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.put(mx.zeros(4), mx.array([0, 2]), mx.array([5.0, 6.0]), inplace=False).tolist()
    [5.0, 0.0, 6.0, 0.0]
    """
    _not_inplace(inplace, "put")
    if mode == "raise":
        raise NotImplementedError("put: mode 'raise' is not supported; use 'clip' or 'wrap'")
    if mode not in (None, "clip", "wrap"):
        raise ValueError(f"put: mode must be 'clip' or 'wrap', got {mode!r}")
    a = _creation.asarray(a)
    ind = _shape.ravel(_int_array(ind, "put", "ind"))
    v = _shape.ravel(v)
    if not ind.size or not v.size or not a.size:
        return a
    v = _stacking.resize(lax.astype(v, a.dtype), ind.shape)
    if mode == "wrap":
        ind = lax.remainder(ind, mx.array(a.size, ind.dtype))
    elif mode == "clip":
        ind = _elementwise.clip(ind, 0, a.size - 1)
    flat = _indexing.at(_shape.ravel(a))[ind].set(v, mode="clip")
    return lax.reshape(flat, tuple(a.shape))


def _positions(obj: Any, n: int, fname: str, hint: str) -> np.ndarray:
    """``obj`` (an int, a slice, integer or boolean indices) as the 1-D
    non-negative positions it names along an axis of length ``n``."""
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    idx = concrete(_creation.asarray(obj), fname, hint)
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise ValueError(f"{fname}: a boolean obj must have the axis's length {n}, got "
                             f"shape {idx.shape}")
        return np.flatnonzero(idx)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{fname}: obj must be integers, a boolean mask or a slice, got "
                        f"dtype {idx.dtype}")
    idx = idx.reshape(-1).astype(np.int64)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"{fname}: index {idx[bad][0]} is out of bounds for an axis of "
                         f"size {n}")
    return idx % n if n else idx


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries at ``obj`` along ``axis`` (of the
    flattened ``arr`` when None), as ``jax.numpy.delete``: ``obj`` is an
    int, a slice, integer indices or a boolean mask. Its values are needed
    unless ``assume_unique_indices=True`` promises distinct in-bounds
    integer indices, which makes it traceable. Differentiable in ``arr``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.delete(mx.array([1, 2, 3, 4]), mx.array([0, 2])).tolist()
    [2, 4]
    """
    arr = _creation.asarray(arr)
    if axis is None:
        arr, ax = _shape.ravel(arr), 0
    else:
        ax = _shape._axis(axis, arr.ndim, "delete")
    n = arr.shape[ax]
    if assume_unique_indices and not isinstance(obj, slice):
        obj = _int_array(obj, "delete", "obj")
        drop = _shape.ravel(obj)
        keep = _indexing.at(lax.full((n,), True, mx.bool_))[drop].set(False)
        kept, _ = true_positions(keep, n - drop.shape[0], "delete")
    else:
        gone = _positions(obj, n, "delete", "the output size depends on the values of obj; "
                                           "pass assume_unique_indices=True under jit or vmap")
        keep = np.ones(n, bool)
        keep[gone] = False
        if keep.all():
            return arr
        kept = mx.array(np.flatnonzero(keep).astype(np.int32))
    return _indexing.take(arr, kept, axis=ax, mode="promise_in_bounds")


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the positions ``obj`` along
    ``axis`` (of the flattened ``arr`` when None), as ``numpy.insert``.
    ``obj`` is an int (``values`` then go in as a block, their first axis
    along ``axis``), a slice or a sequence of ints (one value slice each,
    broadcast); its values are needed, except for a single int, which may
    be traced. Differentiable in ``arr`` and ``values``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.insert(mx.array([1, 2, 3]), 1, mx.array([8, 9])).tolist()
    [1, 8, 9, 2, 3]
    >>> fnp.insert(mx.array([1, 2, 3]), mx.array([0, 3]), 0).tolist()
    [0, 1, 2, 3, 0]
    """
    arr = _creation.asarray(arr)
    if axis is None:
        arr, ax = _shape.ravel(arr), 0
    else:
        ax = _shape._axis(axis, arr.ndim, "insert")
    n = arr.shape[ax]
    values = lax.astype(_creation.asarray(values), arr.dtype)
    shape = list(arr.shape)
    scalar_obj = not isinstance(obj, slice) and _creation.asarray(obj).ndim == 0
    if scalar_obj:
        # One block: values' first axis goes along the axis.
        values = lax.reshape(values, (1,) * (arr.ndim - values.ndim) + tuple(values.shape))
        values = _shape.moveaxis(values, 0, ax)
        shape[ax] = values.shape[ax]
        values = _shape.broadcast_to(values, shape)
        at = _int_array(obj, "insert", "obj")
        if isinstance(at, Tracer):
            return _insert_block_traced(arr, at, values, ax)
        new = _insert_positions(np.array(at).reshape(1), n)
        new = new[0] + np.arange(shape[ax])
    else:
        if isinstance(obj, slice):
            new = np.arange(n)[obj]
        else:
            new = _insert_positions(concrete(_int_array(obj, "insert", "obj"), "insert",
                                             "obj must be known unless it is one int"), n)
        shape[ax] = new.shape[0]
        values = _shape.broadcast_to(values, shape)
        # As numpy.insert: stably sorted, each index shifted past the ones before it.
        order = np.argsort(new, kind="stable")
        new = new.copy()
        new[order] += np.arange(new.shape[0])
    m = new.shape[0]
    source = np.empty(n + m, np.int32)
    is_new = np.zeros(n + m, bool)
    is_new[new] = True
    source[new] = n + np.arange(m)
    source[~is_new] = np.arange(n)
    joined = _shape.concatenate([arr, values], ax)
    return _indexing.take(joined, mx.array(source), axis=ax, mode="promise_in_bounds")


def _insert_positions(idx: np.ndarray, n: int) -> np.ndarray:
    """Insertion points in ``[-n, n]`` as non-negative ones (a negative one
    counts from the end, so -1 is before the last entry)."""
    idx = idx.reshape(-1).astype(np.int64)
    bad = (idx < -n) | (idx > n)
    if bad.any():
        raise IndexError(f"insert: index {idx[bad][0]} is out of bounds for an axis of "
                         f"size {n}")
    return np.where(idx < 0, idx + n, idx)


def _insert_block_traced(arr: Any, at: Any, values: Any, ax: int) -> Any:
    """``insert`` of a block at a traced position ``at``: each output
    position reads ``arr`` before the block and after it, ``values`` within."""
    n, m = arr.shape[ax], values.shape[ax]
    at = lax.astype(at, mx.int32)
    at = lax.where(lax.less(at, 0), lax.add(at, n), at)
    at = _elementwise.clip(at, 0, n)
    p = _iota(n + m)
    in_block = lax.logical_and(lax.greater_equal(p, at), lax.less(p, lax.add(at, m)))
    from_arr = lax.where(lax.less(p, at), p, lax.subtract(p, m))
    from_values = lax.subtract(p, at)
    joined = _shape.concatenate([arr, values], ax)
    source = lax.where(in_block, lax.add(from_values, n), from_arr)
    return _indexing.take(joined, _elementwise.clip(source, 0, n + m - 1), axis=ax,
                          mode="promise_in_bounds")


# ----------------------------------------------------------------------------
# Index arrays
# ----------------------------------------------------------------------------


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """The indices ``(i, i, ..., i)`` (``ndim`` of them) of the main diagonal
    of an ``n``-sided array, each ``arange(n)`` (``int32``).

    >>> import ftorch.numpy as fnp
    >>> [i.tolist() for i in fnp.diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    n = static_size(n, "diag_indices", "n")
    ndim = static_size(ndim, "diag_indices", "ndim")
    return (_iota(n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``diag_indices`` for ``arr``, which must have 2 or more axes, all of
    one length.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> len(fnp.diag_indices_from(mx.zeros((3, 3, 3))))
    3
    """
    arr = _creation.asarray(arr)
    shape = tuple(arr.shape)
    if arr.ndim < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: arr must have 2 or more axes of one length, "
                         f"got shape {shape}")
    return diag_indices(shape[0], arr.ndim)


def indices(dimensions: Sequence[int], dtype: DTypeLike | None = None,
            sparse: bool = False) -> Any:
    """The index grid of an array of shape ``dimensions``: one array per axis
    holding that axis's index (stacked into one array, or a tuple of arrays
    of length-1 axes elsewhere when ``sparse``); ``int32`` unless ``dtype``.

    >>> import ftorch.numpy as fnp
    >>> fnp.indices((2, 2)).tolist()
    [[[0, 0], [1, 1]], [[0, 1], [0, 1]]]
    """
    dims = static_shape(dimensions, "indices", "dimensions")
    dtype = _creation._dtype_or(dtype, mx.int32, "indices")
    grids = []
    for i, d in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = d
        grid = mx.arange(d, dtype=dtype).reshape(shape)
        grids.append(grid if sparse else mx.broadcast_to(grid, dims))
    if sparse:
        return tuple(grids)
    return mx.stack(grids) if grids else mx.zeros((0,), dtype)


def ix_(*args: Any) -> tuple[Any, ...]:
    """An open mesh from 1-D index arrays: argument ``i`` reshaped to lie
    along axis ``i`` of ``len(args)`` axes, so that ``x[ix_(rows, cols)]``
    picks the cross product. A boolean argument stands for its true
    positions (needs its values).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [a.shape for a in fnp.ix_(mx.array([0, 2]), mx.array([1, 2, 3]))]
    [(2, 1), (1, 3)]
    """
    out = []
    for i, a in enumerate(args):
        a = _creation.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: argument {i} must be 1-D, got shape {tuple(a.shape)}")
        if a.dtype == mx.bool_:
            a = flatnonzero(a)
        shape = [1] * len(args)
        shape[i] = a.shape[0]
        out.append(lax.reshape(a, tuple(shape)))
    return tuple(out)


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """The indices of the nonzero entries of ``mask_func(ones((n, n)), k)``
    (say ``triu``), as ``nonzero`` (``size`` makes it traceable).

    >>> import ftorch.numpy as fnp
    >>> [i.tolist() for i in fnp.mask_indices(2, fnp.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    n = static_size(n, "mask_indices", "n")
    mask = _creation.asarray(mask_func(mx.ones((n, n), mx.int32), k))
    if mask.shape != (n, n):
        raise ValueError(f"mask_indices: mask_func must return an ({n}, {n}) array, got "
                         f"shape {tuple(mask.shape)}")
    return _nonzero(mask, size, None, "mask_indices")


def _strides(dims: tuple[int, ...], order: str, fname: str) -> list[int]:
    if order not in ("C", "F"):
        raise ValueError(f"{fname}: order must be 'C' or 'F', got {order!r}")
    axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    strides, step = [0] * len(dims), 1
    for i in axes:
        strides[i] = step
        step *= dims[i]
    return strides


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: DTypeLike | None = None) -> Any:
    """The flat indices into an array of shape ``dims`` of the coordinates
    ``multi_index`` (one integer array per axis, broadcast together), as
    ``numpy.ravel_multi_index``: row-major (``order="C"``) or column-major
    ("F"). ``mode`` handles out-of-range coordinates: "raise" (needs their
    values, so not under jit), "wrap" or "clip". ``int32`` unless ``dtype``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ravel_multi_index((mx.array([1, 0]), mx.array([2, 1])), (2, 3)).tolist()
    [5, 1]
    """
    dims = static_shape(dims, "ravel_multi_index", "dims")
    coords = [_int_array(c, "ravel_multi_index", "multi_index") for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"ravel_multi_index: multi_index has {len(coords)} arrays for "
                         f"{len(dims)} dims")
    dtype = _creation._dtype_or(dtype, mx.int32, "ravel_multi_index")
    coords = _shape.broadcast_arrays(*coords)
    out = None
    for c, d, stride in zip(coords, dims, _strides(dims, order, "ravel_multi_index")):
        c = lax.astype(_index_mode(c, d, mode, "ravel_multi_index", "multi_index"), dtype)
        term = lax.multiply(c, mx.array(stride, dtype))
        out = term if out is None else lax.add(out, term)
    return out if out is not None else mx.zeros((), dtype)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates (one array per axis) in an array of ``shape`` of the
    flat ``indices``, row-major, as ``jax.numpy.unravel_index``: a negative
    index counts once from the end, and indices still out of range are
    clipped into it.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [c.tolist() for c in fnp.unravel_index(mx.array([5, -1, 1]), (2, 3))]
    [[1, 1, 0], [2, 2, 1]]
    """
    idx = _int_array(indices, "unravel_index", "indices")
    dims = static_shape(shape, "unravel_index", "shape")
    total = math.prod(dims)
    idx = lax.where(lax.less(idx, 0), lax.add(idx, mx.array(total, idx.dtype)), idx)
    idx = _elementwise.clip(idx, 0, max(total - 1, 0))
    out = []
    for d, stride in zip(dims, _strides(dims, "C", "unravel_index")):
        out.append(lax.remainder(lax.floor_divide(idx, stride), d) if d else idx)
    return tuple(out)


# ----------------------------------------------------------------------------
# Index expressions: r_, c_, s_, index_exp, mgrid, ogrid
# ----------------------------------------------------------------------------

s_ = np.s_
index_exp = np.index_exp


def _slice_range(s: slice, fname: str) -> Any:
    """The values a slice names in ``mgrid``-style indexing: ``arange`` of
    its bounds, or ``num`` points from start to stop inclusive when its step
    is the imaginary ``num * 1j``."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        num = int(abs(step))
        return _creation.linspace(start, s.stop, num)
    if s.stop is None:
        raise ValueError(f"{fname}: a slice needs a stop, got {s!r}")
    values = np.arange(start, s.stop, step)
    dtype = mx.int32 if values.dtype.kind in "iu" else mx.float32
    return mx.array(values, dtype)


_DIRECTIVE = re.compile(r"^\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?)?$")


class _Concatenator:
    """``r_`` and ``c_``: index with slices, arrays and scalars to join them
    along an axis; a leading string ``"axis,ndmin,trans1d"`` sets how."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int) -> None:
        self._name, self._defaults = name, (axis, ndmin, trans1d)

    def __getitem__(self, key: Any) -> Any:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self._defaults
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            if directive in ("r", "c"):
                axis, ndmin, trans1d = (0, 2, -1) if directive == "r" else (-1, 2, 0)
                if directive == "r":
                    return _stacking.atleast_2d(self._join(items, 0, 1, -1))
            else:
                match = _DIRECTIVE.match(directive)
                if not match:
                    raise ValueError(f"{self._name}: unknown directive {directive!r}; give "
                                     "'axis[,ndmin[,trans1d]]'")
                axis = int(match[1])
                ndmin = int(match[2]) if match[2] else ndmin
                trans1d = int(match[3]) if match[3] else trans1d
        return self._join(items, axis, ndmin, trans1d)

    def _join(self, items: list, axis: int, ndmin: int, trans1d: int) -> Any:
        parts = []
        for item in items:
            if isinstance(item, slice):
                part = _slice_range(item, self._name)
            elif isinstance(item, str):
                raise ValueError(f"{self._name}: a directive string must come first")
            else:
                part = _creation.asarray(item)
            parts.append(self._promote(part, ndmin, trans1d))
        if not parts:
            return mx.zeros((0,), mx.float32)
        return _shape.concatenate(parts, axis)

    @staticmethod
    def _promote(x: Any, ndmin: int, trans1d: int) -> Any:
        """``x`` with leading length-1 axes up to ``ndmin``; its own axes then
        start at position ``trans1d`` (counted among the new ndim)."""
        if x.ndim >= ndmin:
            return x
        k = ndmin - x.ndim
        x = lax.reshape(x, (1,) * k + tuple(x.shape))
        if trans1d == -1:
            return x
        start = trans1d if trans1d >= 0 else trans1d + k + 1
        axes = list(range(ndmin))
        return _shape.transpose(x, axes[:start] + axes[k:] + axes[start:k])

    def __len__(self) -> int:
        return 0


r_ = _Concatenator("r_", 0, 1, -1)
c_ = _Concatenator("c_", -1, 2, 0)


class _Grid:
    """``mgrid`` (dense) and ``ogrid`` (open): index with slices to get
    their coordinate grids, as ``numpy.mgrid`` and ``numpy.ogrid``."""

    def __init__(self, name: str, sparse: bool) -> None:
        self._name, self._sparse = name, sparse

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_range(key, self._name)
        ranges = [_slice_range(k, self._name) for k in key]
        dtype = _creation.result_type(*ranges) if ranges else mx.int32
        ranges = [lax.astype(r, dtype) for r in ranges]
        grids = _shape.meshgrid(*ranges, indexing="ij", sparse=self._sparse)
        if self._sparse:
            return grids
        return _shape.stack(grids) if grids else mx.zeros((0,), dtype)


mgrid = _Grid("mgrid", sparse=False)
ogrid = _Grid("ogrid", sparse=True)


# ----------------------------------------------------------------------------
# Functions mapped over indices and axes
# ----------------------------------------------------------------------------


def fromfunction(function: Callable[..., Any], shape: Sequence[int], *,
                 dtype: DTypeLike = float, **kwargs: Any) -> Any:
    """``function`` evaluated at every index of an array of ``shape``: it is
    called once, vmapped over each axis, with the coordinates (of ``dtype``,
    float32 by default) as scalars, so an entry's value is
    ``function(i, j, ..., **kwargs)``.

    >>> import ftorch.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int).tolist()
    [[0, 1, 2], [10, 11, 12]]
    """
    dims = static_shape(shape, "fromfunction")
    dtype = _creation._dtype_or(dtype, None, "fromfunction")
    f = lambda *coords: function(*coords, **kwargs)
    # Axis i is mapped over argument i; the innermost vmap maps the last axis.
    for i in range(len(dims) - 1, -1, -1):
        f = vmap(f, in_axes=tuple(0 if j == i else None for j in range(len(dims))))
    return f(*(mx.arange(d, dtype=dtype) for d in dims))


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d(v, *args, **kwargs)`` applied to every 1-D slice ``v`` of
    ``arr`` along ``axis``, vmapped over the other axes, as
    ``jax.numpy.apply_along_axis``: the axes of ``func1d``'s result take the
    place of ``axis``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.apply_along_axis(fnp.sum, 1, mx.ones((2, 3))).tolist()
    [3.0, 3.0]
    """
    arr = _creation.asarray(arr)
    ax = _shape._axis(axis, arr.ndim, "apply_along_axis")
    f = lambda v: func1d(v, *args, **kwargs)
    # Axes after ``axis``: their results go last; axes before it: first.
    for i in range(1, arr.ndim - ax):
        f = vmap(f, in_axes=i, out_axes=-1)
    for _ in range(ax):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """``func(a, axis)`` applied for each of ``axes`` in turn, each result
    kept at ``a``'s ndim (a reduced axis comes back as length 1), as
    ``numpy.apply_over_axes``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.apply_over_axes(fnp.sum, mx.ones((2, 3, 4)), [0, 2]).shape
    (1, 3, 1)
    """
    a = _creation.asarray(a)
    for axis in _shape._int_tuple(axes, "apply_over_axes", "axes"):
        out = _creation.asarray(func(a, axis))
        if out.ndim == a.ndim - 1:
            out = _shape.expand_dims(out, axis % a.ndim)
        elif out.ndim != a.ndim:
            raise ValueError(f"apply_over_axes: func must keep the ndim or reduce one axis, "
                             f"got shape {tuple(out.shape)} from {tuple(a.shape)}")
        a = out
    return a


_CORE = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_CORE}(?:\s*,\s*{_CORE})*\s*->\s*{_CORE}(?:\s*,\s*{_CORE})*\s*$")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """A gufunc signature such as ``"(m,n),(n)->(m)"`` as the core dimension
    names of the inputs and of the outputs."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.split("->")
    parse = lambda side: [tuple(re.findall(r"\w+", group))
                          for group in re.findall(_CORE, side)]
    return parse(ins), parse(outs)


def vectorize(pyfunc: Callable[..., Any], *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` made to broadcast over its arguments, as
    ``jax.numpy.vectorize``, by ``ftorch.vmap`` over the broadcast (loop)
    axes. Without ``signature`` ``pyfunc`` sees scalars; a gufunc
    ``signature`` such as ``"(n),(n)->()"`` gives the trailing core axes
    each argument keeps (sizes of one name must agree) and those of each
    output. ``excluded`` holds the positions or names of arguments passed
    through unchanged; other keyword arguments are vectorized like
    positional ones (as ``numpy.vectorize``), with scalar cores.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> dot = fnp.vectorize(lambda a, b: fnp.sum(a * b), signature="(n),(n)->()")
    >>> dot(mx.ones((4, 3)), mx.ones(3)).shape
    (4,)
    """
    if not callable(pyfunc):
        raise TypeError(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
    excluded = frozenset(excluded)
    ins, outs = _parse_signature(signature) if signature is not None else (None, None)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        static_args = {i: a for i, a in enumerate(args) if i in excluded or a is None}
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        names = [k for k in kwargs if k not in excluded]
        dynamic = [_creation.asarray(a) for i, a in enumerate(args) if i not in static_args]
        dynamic += [_creation.asarray(kwargs[k]) for k in names]
        n_pos = len(args) - len(static_args)
        cores = [()] * len(dynamic) if ins is None else list(ins) + [()] * len(names)
        if len(cores) != len(dynamic):
            raise TypeError(f"vectorize: signature {signature!r} has {len(ins)} inputs, got "
                            f"{n_pos} vectorized positional arguments")
        sizes: dict[str, int] = {}
        loops = []
        for i, (x, core) in enumerate(zip(dynamic, cores)):
            if x.ndim < len(core):
                raise ValueError(f"vectorize: argument {i} has shape {tuple(x.shape)}, fewer "
                                 f"axes than its core dimensions {core}")
            for name, d in zip(core, x.shape[x.ndim - len(core):]):
                if sizes.setdefault(name, d) != d:
                    raise ValueError(f"vectorize: core dimension {name!r} has sizes "
                                     f"{sizes[name]} and {d}")
            loops.append(tuple(x.shape[:x.ndim - len(core)]))
        loop_shape = broadcast = _stacking.broadcast_shapes(*loops) if loops else ()

        def call(*xs: Any) -> Any:
            pos, it = [], iter(xs[:n_pos])
            for i in range(len(args)):
                pos.append(static_args[i] if i in static_args else next(it))
            kw = dict(zip(names, xs[n_pos:]), **static_kw)
            out = pyfunc(*pos, **kw)
            if outs is not None:
                _check_outputs(out, outs, sizes)
            return out

        # Every argument broadcast to the loop shape, then one vmap per loop axis.
        xs = [_shape.broadcast_to(x, broadcast + tuple(x.shape[x.ndim - len(c):]))
              for x, c in zip(dynamic, cores)]
        f = call
        for _ in loop_shape:
            f = vmap(f)
        return f(*xs)

    return wrapped


def _check_outputs(out: Any, outs: list[tuple[str, ...]], sizes: dict[str, int]) -> None:
    results = out if isinstance(out, tuple) else (out,)
    if len(results) != len(outs):
        raise ValueError(f"vectorize: the function returned {len(results)} outputs, the "
                         f"signature has {len(outs)}")
    for i, (r, core) in enumerate(zip(results, outs)):
        shape = tuple(_creation.asarray(r).shape)
        if len(shape) != len(core):
            raise ValueError(f"vectorize: output {i} has shape {shape}, but its core "
                             f"dimensions are {core}")
        for name, d in zip(core, shape):
            if sizes.setdefault(name, d) != d:
                raise ValueError(f"vectorize: core dimension {name!r} of output {i} has "
                                 f"size {d}, expected {sizes[name]}")

