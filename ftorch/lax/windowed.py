"""``jax.lax``'s general reductions: ``reduce`` over axes, ``reduce_window``
over sliding windows, and ``approx_max_k``/``approx_min_k`` (exact here, as
on JAX's CPU).

Everything is a composite of primitives, so it differentiates, batches and
jits. With ``lax.add``, ``lax.multiply``, ``lax.max``/``lax.maximum`` or
``lax.min``/``lax.minimum`` as the computation (a monoid), ``reduce`` is the
matching reduction primitive and ``reduce_window`` folds the window's strided
slices axis by axis (a window is a product of 1-d windows), with the
reduction's identity filling padding and dilation holes. A windowed max or
min keeps the first extreme of each window in row-major order (``where`` of a
strict comparison), so its derivative goes there, as JAX's
``select_and_scatter`` sends it. Any other computation is applied elementwise
to whole slices: ``reduce`` pairs halves of the reduced axis (a tree of
``log2(n)`` calls), ``reduce_window`` folds the window's positions in
row-major order and skips padding; both take pytrees of operands, as JAX's
variadic forms. ``init_value`` is combined once with each result; padding
and holes are never combined (XLA's semantics).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.reduce_window(mx.arange(5.0), -float("inf"), lax.max, (2,), (1,), "VALID").tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as prim
from ftorch import tree
from ftorch.core import Tracer, as_array, aval_of, is_floating
from ftorch.lax.convolution import explicit_pads
from ftorch.primitives.conv import dilate, dilated
from ftorch.primitives.creation import static_int
from ftorch.primitives.reduction import normalize_axes
from ftorch.typing import ArrayLike, Shape

__all__ = ["reduce", "reduce_window", "reduce_window_shape_tuple", "approx_max_k",
           "approx_min_k"]

Pairs = Sequence[tuple[int, int]]


# ----------------------------------------------------------------------------
# Monoids
# ----------------------------------------------------------------------------


def _monoid(computation: Callable) -> str | None:
    """The name of the reduction ``computation`` is, or None for any other function."""
    table = {prim.add: "add", operator.add: "add", prim.multiply: "mul", operator.mul: "mul",
             prim.maximum: "max", prim.max: "max", prim.minimum: "min", prim.min: "min"}
    try:
        return table.get(computation)
    except TypeError:  # unhashable callables are no monoid
        return None


def _identity(kind: str, dtype: mx.Dtype) -> Any:
    if kind in ("add", "mul"):
        return int(kind == "mul")
    if dtype == mx.bool_:
        return kind == "min"
    if is_floating(dtype):
        return -math.inf if kind == "max" else math.inf
    info = mx.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _is_identity(init: Any, kind: str, dtype: mx.Dtype) -> bool:
    if isinstance(init, Tracer):
        return False
    value = np.asarray(init)
    return value.shape == () and bool(value == _identity(kind, dtype))


def _combine(kind: str, acc: Any, x: Any) -> Any:
    """``acc`` combined with ``x``; a max or min keeps ``acc`` on ties (the
    first extreme keeps the derivative) and lets NaN through."""
    if kind == "add":
        return prim.add(acc, x)
    if kind == "mul":
        return prim.multiply(acc, x)
    beats = prim.greater(x, acc) if kind == "max" else prim.less(x, acc)
    if is_floating(aval_of(x).dtype):
        beats = prim.logical_or(beats, prim.isnan(x))
    return prim.where(beats, x, acc)


def _with_init(kind: str | None, computation: Callable, init: Any, y: Any) -> Any:
    """``init`` combined once with the reduction ``y`` (nothing to do for a
    monoid's identity)."""
    dtype = aval_of(y).dtype
    if kind is not None:
        if _is_identity(init, kind, dtype):
            return y
        return _combine(kind, prim.astype(as_array(init), dtype), y)
    return computation(prim.astype(as_array(init), dtype), y)


# ----------------------------------------------------------------------------
# reduce
# ----------------------------------------------------------------------------


def _flat_operands(operands: Any, init_values: Any, fname: str) -> tuple[list, list, Any]:
    leaves, treedef = tree.flatten(operands)
    inits, init_def = tree.flatten(init_values)
    if len(inits) != len(leaves) or not leaves:
        raise ValueError(f"{fname}: operands and init_values must be pytrees of the same "
                         f"structure, got {len(leaves)} operands and {len(inits)} init values")
    leaves = [as_array(x, f"{fname}: operand") for x in leaves]
    shapes = {tuple(aval_of(x).shape) for x in leaves}
    if len(shapes) != 1:
        raise ValueError(f"{fname}: the operands must have one shape, got {sorted(shapes)}")
    return leaves, inits, treedef


def _tree_call(computation: Callable, treedef: Any, a: list, b: list) -> list:
    out = computation(tree.unflatten(treedef, a), tree.unflatten(treedef, b))
    leaves = tree.leaves(out)
    if len(leaves) != len(a):
        raise ValueError(f"computation must return {len(a)} arrays (the operands' structure), "
                         f"got {out!r}")
    return leaves


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """``operands`` reduced over ``dimensions`` by ``computation`` (an
    associative, commutative function of two arguments, applied
    elementwise), starting from ``init_values``, as ``jax.lax.reduce``.

    ``operands`` and ``init_values`` are arrays or matching pytrees of them
    (``computation`` then takes and returns such pytrees). A known monoid
    (``lax.add``, ``lax.multiply``, ``lax.max``, ``lax.min`` and their
    namesakes) on one operand is its reduction primitive: a max shares its
    derivative among ties, as JAX's ``reduce_max``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.reduce(mx.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,)).tolist()
    [3.0, 12.0]
    >>> lax.reduce(mx.array([3.0, 1.0, 2.0]), 1.0, lambda a, b: a * b, (0,)).item()
    6.0
    """
    fname = "reduce"
    leaves, inits, treedef = _flat_operands(operands, init_values, fname)
    shape = aval_of(leaves[0]).shape
    axes = normalize_axes(tuple(dimensions), len(shape), fname)
    if not axes:  # nothing reduced: the operands as they are (init unused), as JAX
        return tree.unflatten(treedef, leaves)
    kind = _monoid(computation) if len(leaves) == 1 else None
    if kind is not None:
        x = leaves[0]
        reducer = {"add": prim.sum, "mul": prim.prod, "max": prim.max, "min": prim.min}[kind]
        return _with_init(kind, computation, inits[0], reducer(x, axes)) if axes else x
    kept = [a for a in range(len(shape)) if a not in axes]
    n = math.prod(shape[a] for a in axes)
    out_shape = tuple(shape[a] for a in kept)
    accs = [prim.reshape(prim.transpose(x, (*kept, *axes)), (*out_shape, n)) for x in leaves]
    last = len(out_shape)
    while n > 1:  # combine the two halves; an odd one out waits for the next round
        h = n // 2
        halves = [[prim.static_slice(a, (slice(None),) * last + (slice(i * h, i * h + h),))
                   for a in accs] for i in (0, 1)]
        combined = _tree_call(computation, treedef, *halves)
        accs = [c if n == 2 * h else prim.concatenate(
            [c, prim.static_slice(a, (slice(None),) * last + (slice(2 * h, n),))], last)
            for c, a in zip(combined, accs)]
        n = h + n % 2
    dtypes = [aval_of(x).dtype for x in leaves]
    start = [prim.broadcast_to(prim.astype(as_array(i), d), out_shape)
             for i, d in zip(inits, dtypes)]
    if n == 0:
        return tree.unflatten(treedef, start)
    accs = [prim.reshape(a, out_shape) for a in accs]
    return tree.unflatten(treedef, _tree_call(computation, treedef, start, accs))


# ----------------------------------------------------------------------------
# reduce_window
# ----------------------------------------------------------------------------


def _window_geometry(shape: Shape, window_dimensions: Sequence[int],
                     window_strides: Sequence[int] | None, padding: Any,
                     base_dilation: Sequence[int] | None, window_dilation: Sequence[int] | None,
                     fname: str) -> tuple:
    nd = len(shape)

    def ints(values, what, default, minimum):
        if values is None:
            return (default,) * nd
        out = tuple(static_int(v, fname, what) for v in values)
        if len(out) != nd or min(out, default=minimum) < minimum:
            raise ValueError(f"{fname}: {what} must be {nd} ints of at least {minimum} (one "
                             f"per operand axis), got {values!r}")
        return out

    window = ints(window_dimensions, "window_dimensions", 1, 0)
    strides = ints(window_strides, "window_strides", 1, 1)
    base = ints(base_dilation, "base_dilation", 1, 1)
    wdil = ints(window_dilation, "window_dilation", 1, 1)
    in_shape = [dilated(n, b) for n, b in zip(shape, base)]
    span = [dilated(k, d) for k, d in zip(window, wdil)]
    # As JAX: a padding string sees the operand before its base dilation.
    pads = explicit_pads(padding, shape, span, strides, fname)
    out = tuple(max(0, (n + lo + hi - k) // s + 1)
                for n, (lo, hi), k, s in zip(in_shape, pads, span, strides))
    return window, strides, base, wdil, pads, out


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Pairs,
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The output shape of ``reduce_window``, as ``jax.lax.reduce_window_shape_tuple``.

    >>> import ftorch.lax as lax
    >>> lax.reduce_window_shape_tuple((5, 6), (2, 2), (1, 2), [(0, 0), (1, 1)])
    (4, 4)
    """
    return _window_geometry(tuple(operand_shape), window_dimensions, window_strides, padding,
                            base_dilation, window_dilation, "reduce_window_shape_tuple")[-1]


def _pad_or_crop(x: Any, pads: Pairs, value: Any) -> Any:
    """``x`` padded by ``pads`` with ``value`` (a negative pad crops)."""
    if any(lo > 0 or hi > 0 for lo, hi in pads):
        x = prim.pad(x, value, tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads))
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        shape = aval_of(x).shape
        x = prim.static_slice(x, tuple(slice(max(-lo, 0), n - max(-hi, 0))
                                       for n, (lo, hi) in zip(shape, pads)))
    return x


def _position(offset: int, d: int, s: int, out: int) -> slice:
    """The elements at window position ``offset`` (dilation ``d``) of ``out``
    windows at steps ``s``."""
    start = offset * d
    return slice(start, start + (out - 1) * s + 1, s)


def _monoid_window(x: Any, kind: str, window, strides, base, wdil, pads, out) -> Any:
    fill = _identity(kind, aval_of(x).dtype)
    x = _pad_or_crop(dilate(x, base, fill, first_axis=0), pads, fill)
    # Last axis first: on ties the lowest row-major position wins.
    for axis in reversed(range(len(window))):
        if window[axis] == 1 and strides[axis] == 1 and aval_of(x).shape[axis] == out[axis]:
            continue
        acc = None
        for j in range(window[axis]):
            position = _position(j, wdil[axis], strides[axis], out[axis])
            part = prim.static_slice(x, (slice(None),) * axis + (position,))
            acc = part if acc is None else _combine(kind, acc, part)
        x = acc
    return x


def _generic_window(leaves: list, inits: list, computation: Callable, treedef: Any, window,
                    strides, base, wdil, pads, out) -> list:
    """Each window's real elements folded in row-major order into ``init``."""
    shape = aval_of(leaves[0]).shape
    # Which positions of the dilated, padded operand are its elements.
    real = np.zeros([dilated(n, b) for n, b in zip(shape, base)], bool)
    real[tuple(slice(None, None, b) for b in base)] = True
    real = np.pad(real, [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    real = real[tuple(slice(max(-lo, 0), n - max(-hi, 0))
                      for n, (lo, hi) in zip(real.shape, pads))]
    xs = [_pad_or_crop(dilate(x, base, 0, first_axis=0), pads, 0) for x in leaves]
    accs = [prim.broadcast_to(prim.astype(as_array(i), aval_of(x).dtype), out)
            for i, x in zip(inits, leaves)]
    for offset in itertools.product(*map(range, window)):
        where = tuple(_position(j, d, s, o) for j, d, s, o in zip(offset, wdil, strides, out))
        mask = real[where]
        if not mask.any():
            continue
        parts = [prim.static_slice(x, where) for x in xs]
        new = _tree_call(computation, treedef, accs, parts)
        accs = new if mask.all() else [prim.where(mx.array(mask), n, a)
                                        for n, a in zip(new, accs)]
    return accs


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Pairs = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """``computation`` over sliding windows of ``operand``, as ``jax.lax.reduce_window``.

    Along each axis the operand is dilated by ``base_dilation`` (holes
    between elements), padded by ``padding`` (``"VALID"``, ``"SAME"``,
    ``"SAME_LOWER"`` or ``(lo, hi)`` pairs), and windows of
    ``window_dimensions`` positions (``window_dilation`` apart) are taken at
    steps of ``window_strides``; each window's elements (never holes or
    padding) are combined with ``init_value`` by ``computation``. A windowed
    max or min sends its derivative to the window's first extreme in
    row-major order. ``operand`` and ``init_value`` may be matching pytrees
    (``computation`` then takes and returns such pytrees).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(4.0)
    >>> lax.reduce_window(x, 0.0, lax.add, (2,), (1,), ((1, 1),)).tolist()
    [0.0, 1.0, 3.0, 5.0, 3.0]
    >>> lax.reduce_window(x, 1.0, lax.multiply, (2,), (2,), "VALID").tolist()
    [0.0, 6.0]
    """
    fname = "reduce_window"
    leaves, inits, treedef = _flat_operands(operand, init_value, fname)
    geometry = _window_geometry(aval_of(leaves[0]).shape, window_dimensions, window_strides,
                                padding, base_dilation, window_dilation, fname)
    out = geometry[-1]
    kind = _monoid(computation) if len(leaves) == 1 else None
    if kind is not None and 0 not in out and 0 not in aval_of(leaves[0]).shape:
        y = _monoid_window(leaves[0], kind, *geometry)
        return _with_init(kind, computation, inits[0], y)
    if kind is not None:  # empty windows: init
        computation = {"add": prim.add, "mul": prim.multiply,
                       "max": prim.maximum, "min": prim.minimum}[kind]
    return tree.unflatten(treedef, _generic_window(leaves, inits, computation, treedef,
                                                   *geometry))


# ----------------------------------------------------------------------------
# approx_max_k, approx_min_k
# ----------------------------------------------------------------------------


def _top_k_along(operand: ArrayLike, k: int, reduction_dimension: int, largest: bool,
                 aggregate_to_topk: bool, fname: str) -> list:
    x = as_array(operand, f"{fname}: operand")
    shape, dtype = aval_of(x)
    axis = normalize_axes(reduction_dimension, len(shape), fname)[0] if shape else None
    if axis is None:
        raise ValueError(f"{fname}: operand must have at least one axis")
    k = static_int(k, fname, "k")
    if not 0 < k <= shape[axis]:
        raise ValueError(f"{fname}: k must be in [1, {shape[axis]}] (the reduced axis' size), "
                         f"got {k}")
    if not aggregate_to_topk:  # every entry, sorted: a superset of the best k
        k = shape[axis]
    last = len(shape) - 1
    x = prim.moveaxis(x, axis, last)
    # The smallest are the largest of the order-reversing map: -x, or ~x for
    # integers (exact at the dtype's minimum).
    flip = prim.negative if is_floating(dtype) else prim.invert
    n = shape[axis]
    if k == 1 and n > 1:  # JAX's CPU picks the last of tied extremes for k = 1
        x = prim.static_slice(x, (slice(None),) * last + (slice(None, None, -1),))
    values, indices = prim.top_k(x if largest else flip(x), k)
    if not largest:
        values = flip(values)
    if k == 1 and n > 1:
        indices = prim.subtract(mx.array(n - 1, aval_of(indices).dtype), indices)
    return [prim.moveaxis(values, last, axis), prim.moveaxis(indices, last, axis)]


def approx_max_k(operand: ArrayLike, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list:
    """The ``k`` largest entries along ``reduction_dimension``, in descending
    order, and their indices, as ``jax.lax.approx_max_k``; exact (as JAX on
    a CPU), so ``recall_target`` and ``reduction_input_size_override``
    change nothing. Ties go to the lower index, but for ``k = 1`` to the
    higher, as JAX's CPU does. With ``aggregate_to_topk``
    False, every entry comes back sorted (JAX's CPU does so for axes up to
    1024 entries and returns a prefix of that for longer ones).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> values, indices = lax.approx_max_k(mx.array([1.0, 5.0, 3.0]), 2)
    >>> values.tolist(), indices.tolist()
    ([5.0, 3.0], [1, 2])
    """
    return _top_k_along(operand, k, reduction_dimension, True, aggregate_to_topk,
                        "approx_max_k")


def approx_min_k(operand: ArrayLike, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list:
    """The ``k`` smallest entries along ``reduction_dimension``, in ascending
    order, and their indices, as ``jax.lax.approx_min_k``; exact (as JAX on
    a CPU), with ``approx_max_k``'s arguments and tie rule.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> values, indices = lax.approx_min_k(mx.array([[1.0, 5.0, 0.0]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[0.0, 1.0]], [[2, 0]])
    """
    return _top_k_along(operand, k, reduction_dimension, False, aggregate_to_topk,
                        "approx_min_k")
