"""Sorting, selection and running extremes: the ``sort``, ``argsort``,
``top_k``, ``cummax`` and ``cummin`` primitives, the primitive layer.

Every sort is stable: equal keys keep their order (MLX's sort and argsort
are stable merge sorts; tests check it). NaNs sort after every other value
(``-nan`` too), as in NumPy and JAX; ``-0.0`` and ``0.0`` compare equal, so
they keep their input order. Index results are ``int32``, as JAX gives them.

Rules: each of these ops reads its input at a permutation (or, for the
running extremes, at an index) that is piecewise constant in the input, so
its derivative applies that permutation to the tangent
(``take_along_axis``) and its transpose scatters the cotangent back. The
permutation itself comes from the non-differentiable ``argsort``.

- ``sort`` sorts several operands together by the first ``num_keys`` of
  them (lexicographically), as ``jax.lax.sort``; ``sort_key_val`` is the
  two-operand case.
- ``top_k`` gives the ``k`` largest entries along the last axis in
  descending order and their indices; ties go to the lower index, and NaN
  counts as larger than every number (as in ``jax.lax.top_k``).
- ``cummax`` / ``cummin`` route each output's derivative to the one input
  that holds the running extreme there: at ties, the latest one in scan
  order (PyTorch's ``cummax`` indices make the same choice; JAX splits
  differently). NaNs propagate, and a NaN holds the extreme after it.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.sort(mx.array([3.0, 1.0, 2.0])).tolist()
[1.0, 2.0, 3.0]
>>> [a.tolist() for a in lax.top_k(mx.array([1.0, 5.0, 3.0]), 2)]
[[5.0, 3.0], [1, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Primitive, aval_of, is_floating
from ftorch.primitives._rules import move_bdim, nondifferentiable, shape_of
from ftorch.primitives.indexing import ARRAY, along_axis_grid

__all__ = ["sort", "sort_key_val", "argsort", "top_k", "cummax", "cummin"]


# ----------------------------------------------------------------------------
# Helpers: permutations along an axis, on traced or concrete values
# ----------------------------------------------------------------------------


def _iota(shape: tuple[int, ...], axis: int) -> mx.array:
    """0, 1, ..., n - 1 along ``axis`` (int32), shaped to broadcast against ``shape``."""
    dims = [1] * len(shape)
    dims[axis] = shape[axis]
    return mx.arange(shape[axis], dtype=mx.int32).reshape(dims)


def _unpermute(ct: Any, idx: Any, axis: int, shape: tuple[int, ...]) -> Any:
    """The transpose of ``take_along_axis(x, idx, axis)`` applied to ``ct``:
    each entry of ``ct`` added back where it was read (``x`` has ``shape``)."""
    _, arrays = along_axis_grid(shape, idx, axis)
    zeros = lax.zeros(shape, aval_of(ct).dtype)
    return lax.scatter_add(zeros, ct, *arrays, spec=(ARRAY,) * len(arrays))


def _argsort_impl(x: mx.array, axis: int, descending: bool) -> mx.array:
    if not descending:
        return mx.argsort(x, axis=axis).astype(mx.int32)
    # Descending and stable: sort the reversed array ascending (ties then come
    # latest-first), reverse that order, and map indices back.
    n = x.shape[axis]
    rev = (slice(None),) * axis + (slice(None, None, -1),)
    order = mx.argsort(x[rev], axis=axis)[rev].astype(mx.int32)
    return (n - 1) - order


def _permutation(keys: Sequence[mx.array], axis: int) -> mx.array:
    """The stable permutation sorting ``keys`` lexicographically (the first
    key decides first) along ``axis``."""
    perm = _argsort_impl(keys[-1], axis, False)
    for key in reversed(keys[:-1]):
        perm = mx.take_along_axis(perm, _argsort_impl(
            mx.take_along_axis(key, perm, axis=axis), axis, False), axis=axis)
    return perm


def _traced_permutation(keys: Sequence[Any], axis: int) -> Any:
    """``_permutation`` with ftorch ops, for rules (it has no derivative)."""
    perm = argsort(keys[-1], axis)
    for key in reversed(keys[:-1]):
        perm = lax.take_along_axis(perm, argsort(lax.take_along_axis(key, perm, axis), axis),
                                   axis)
    return perm


def _scan_batch(prim: Primitive):
    """The batching rule of an op along one ``axis`` param (``dimension`` for
    sort) that maps each slice on its own: that axis shifts past the batch
    axis, which stays put; all operands get the same batch axis."""

    def rule(vals, dims, axis_size, **params):
        name = "dimension" if "dimension" in params else "axis"
        bdim = next(d for d in dims if d is not None)
        vals = [move_bdim(v, d, bdim, axis_size) for v, d in zip(vals, dims)]
        params[name] = params[name] + (params[name] >= bdim)
        out = prim.bind(*vals, **params)
        return out, ([bdim] * len(out) if prim.multiple_results else bdim)

    return rule


# ----------------------------------------------------------------------------
# argsort
# ----------------------------------------------------------------------------

argsort_p = Primitive("argsort", _argsort_impl)
nondifferentiable(argsort_p)
argsort_p.def_batch(_scan_batch(argsort_p))


def argsort(x: Any, axis: int, descending: bool = False) -> Any:
    """The stable permutation (``int32``) sorting ``x`` along the non-negative
    ``axis``: ascending with NaNs last, or ``descending`` with NaNs first;
    equal entries keep their order either way.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.argsort(mx.array([2.0, 1.0, 2.0, 0.0]), 0, descending=True).tolist()
    [0, 2, 1, 3]
    """
    return argsort_p.bind(x, axis=axis, descending=descending)


# ----------------------------------------------------------------------------
# sort: several operands, sorted by the first num_keys
# ----------------------------------------------------------------------------


def _sort_impl(*operands: mx.array, dimension: int, num_keys: int) -> list[mx.array]:
    if len(operands) == 1:
        return [mx.sort(operands[0], axis=dimension)]
    perm = _permutation(operands[:num_keys], dimension)
    return [mx.take_along_axis(x, perm, axis=dimension) for x in operands]


sort_p = Primitive("sort", _sort_impl, multiple_results=True)


@sort_p.def_jvp
def _sort_jvp(primals, tangents, *, dimension, num_keys):
    out = sort_p.bind(*primals, dimension=dimension, num_keys=num_keys)
    if all(t is None for t in tangents):
        return out, [None] * len(out)
    perm = _traced_permutation(primals[:num_keys], dimension)
    return out, [None if t is None else lax.take_along_axis(t, perm, dimension)
                 for t in tangents]


@sort_p.def_vjp
def _sort_vjp(cts, outs, *operands, needed, dimension, num_keys):
    if not any(n and ct is not None for n, ct in zip(needed, cts)):
        return (None,) * len(operands)
    perm = _traced_permutation(operands[:num_keys], dimension)
    shape = shape_of(operands[0])
    return tuple(_unpermute(ct, perm, dimension, shape) if n and ct is not None else None
                 for n, ct in zip(needed, cts))


sort_p.def_batch(_scan_batch(sort_p))


def sort(operand: Any | Sequence[Any], dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Any:
    """``operand`` sorted along ``dimension``, as ``jax.lax.sort``: given a
    sequence of same-shaped arrays, all of them are permuted together by
    the lexicographic order of the first ``num_keys``, and a tuple comes
    back. The sort is always stable (``is_stable`` is accepted for JAX's
    signature); NaNs sort last. The derivative permutes the tangent the same
    way.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> keys, vals = lax.sort((mx.array([2, 1, 2]), mx.array([0.0, 1.0, 2.0])))
    >>> keys.tolist(), vals.tolist()
    ([1, 2, 2], [1.0, 0.0, 2.0])
    """
    single = not isinstance(operand, (list, tuple))
    operands = [operand] if single else list(operand)
    if not operands:
        raise ValueError("sort: needs at least one operand")
    shapes = {tuple(shape_of(x)) for x in operands}
    if len(shapes) != 1:
        raise ValueError(f"sort: all operands must have the same shape, got {sorted(shapes)}")
    ndim = len(next(iter(shapes)))
    if ndim == 0:
        raise ValueError("sort: operands must have at least one dimension, got 0-d arrays")
    dimension = check_axis(dimension, ndim, "sort", "dimension", of=f"arrays of ndim {ndim}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys must be between 1 and the number of operands "
                         f"({len(operands)}), got {num_keys}")
    out = sort_p.bind(*operands, dimension=dimension, num_keys=num_keys)
    return out[0] if single else tuple(out)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension``, and ``values`` permuted the same
    way, as ``jax.lax.sort_key_val``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.sort_key_val(mx.array([3, 1, 2]), mx.array([30.0, 10.0, 20.0]))[1].tolist()
    [10.0, 20.0, 30.0]
    """
    return sort((keys, values), dimension, is_stable, 1)


# ----------------------------------------------------------------------------
# top_k: the k largest along the last axis
# ----------------------------------------------------------------------------


def _top_k_impl(x: mx.array, k: int) -> list[mx.array]:
    axis = x.ndim - 1
    idx = _argsort_impl(x, axis, True)[..., :k]
    return [mx.take_along_axis(x, idx, axis=axis), idx]


top_k_p = Primitive("top_k", _top_k_impl, multiple_results=True)


@top_k_p.def_jvp
def _top_k_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    values, idx = top_k_p.bind(x, k=k)
    if t is None:
        return [values, idx], [None, None]
    return [values, idx], [lax.take_along_axis(t, idx, len(shape_of(x)) - 1), None]


@top_k_p.def_vjp
def _top_k_vjp(cts, outs, x, *, needed, k):
    ct = cts[0]
    if ct is None or not needed[0]:
        return (None,)
    shape = shape_of(x)
    return (_unpermute(ct, outs[1], len(shape) - 1, shape),)


@top_k_p.def_batch
def _top_k_batch(vals, dims, axis_size, *, k):
    (x,), (bdim,) = vals, dims
    if bdim == len(shape_of(x)) - 1:  # the batch axis must not be the last
        x, bdim = move_bdim(x, bdim, 0, axis_size), 0
    return top_k_p.bind(x, k=k), [bdim, bdim]


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` largest entries along the last axis of ``operand``, in
    descending order, and their indices (``int32``), as ``jax.lax.top_k``.
    Ties go to the lower index; NaN counts as the largest value. The
    derivative flows to the selected entries.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> values, indices = lax.top_k(mx.array([[1.0, 4.0, 4.0, 2.0]]), 3)
    >>> values.tolist(), indices.tolist()
    ([[4.0, 4.0, 2.0]], [[1, 2, 3]])
    """
    shape = shape_of(operand)
    if not shape:
        raise ValueError("top_k: operand must have at least one dimension, got a 0-d array")
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"top_k: k must be a static int, got {k!r}")
    if not 0 <= k <= shape[-1]:
        raise ValueError(f"top_k: k must be between 0 and the size of the last axis "
                         f"({shape[-1]}), got {k}")
    values, indices = top_k_p.bind(operand, k=k)
    return values, indices


# ----------------------------------------------------------------------------
# cummax, cummin: the derivative goes to the holder of the running extreme
# ----------------------------------------------------------------------------


def _holder(x: Any, out: Any, axis: int, reverse: bool) -> Any:
    """For each position, the index of the input that holds the running
    extreme ``out`` there: the latest (in scan order) position at or before
    it whose input equals its own running extreme (or is NaN)."""
    shape = shape_of(x)
    iota = _iota(shape, axis)
    attains = lax.equal(x, out)
    if is_floating(aval_of(x).dtype):
        attains = lax.logical_or(attains, lax.not_equal(x, x))
    if reverse:
        return cummin(lax.where(attains, iota, shape[axis]), axis, True)
    return cummax(lax.where(attains, iota, -1), axis, False)


def _cumulative_extreme(name: str, impl) -> Primitive:
    prim = Primitive(name, lambda x, axis, reverse: impl(x, axis=axis, reverse=reverse))

    @prim.def_jvp
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        if t is None:
            return out, None
        return out, lax.take_along_axis(t, _holder(x, out, axis, reverse), axis)

    @prim.def_vjp
    def vjp(ct, out, x, *, needed, axis, reverse):
        if not needed[0]:
            return (None,)
        return (_unpermute(ct, _holder(x, out, axis, reverse), axis, shape_of(x)),)

    prim.def_batch(_scan_batch(prim))
    return prim


cummax_p = _cumulative_extreme("cummax", mx.cummax)
cummin_p = _cumulative_extreme("cummin", mx.cummin)


def _cumulative(prim: Primitive, fname: str, operand: Any, axis: int, reverse: bool) -> Any:
    axis = check_axis(axis, len(shape_of(operand)), fname)
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running maximum along ``axis`` (from the end when ``reverse``), as
    ``jax.lax.cummax``. Each output's derivative goes to the input holding
    the running maximum there; at ties, the latest one in scan order.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.cummax(mx.array([1.0, 3.0, 2.0, 4.0])).tolist()
    [1.0, 3.0, 3.0, 4.0]
    """
    return _cumulative(cummax_p, "cummax", operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running minimum along ``axis`` (from the end when ``reverse``), as
    ``jax.lax.cummin``; derivatives as ``cummax``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.cummin(mx.array([3.0, 1.0, 2.0]), reverse=True).tolist()
    [1.0, 1.0, 2.0]
    """
    return _cumulative(cummin_p, "cummin", operand, axis, reverse)
