"""Collectives across named ``vmap`` axes, as ``jax.lax``'s: ``psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
``axis_index`` and ``axis_size``, and the exchanges built on ``all_gather``:
``ppermute``, ``pshuffle``, ``all_to_all`` and ``pswapaxes``.

Inside ``ft.vmap(f, axis_name="i")``, ``psum(x, "i")`` is the sum of ``x``
over all the examples, and every example sees it (the result does not vary
over ``"i"``); ``all_gather`` gives every example the stack of all of them;
``psum_scatter`` sums and hands example ``k`` the ``k``-th block;
``axis_index`` is an example's position. An ``axis_name`` may be a tuple of
names (nested vmaps), combined outermost-first as in JAX. Outside a vmap of
that name they raise ``NameError: unbound axis name``.

Each collective is one ``AxisPrimitive`` (``ftorch/transforms/vmap.py``)
with a named form (``axis_name`` a tuple of names) and a positional form
(``axis_name=()``, the examples along the operand's axis ``batch_axis``):
the vmap called ``"i"`` turns a named collective over ``"i"`` into the
positional one over its own batch axis (a sum, a max, a transpose), which is
what ``jit`` then stages. Every other transform treats a named collective as
an ordinary op of each example. Under ``grad`` inside the vmap, derivatives
flow across examples: the transpose of ``psum`` is ``psum`` (the gradient
for one example sums every example's cotangent), of ``all_gather`` is
``psum_scatter`` and the other way round, as in JAX; ``pmax`` and ``pmin``
share the derivative equally among tied extremes, like ``max``.

``jit(vmap(f, axis_name="i"))`` stages plain reductions: the vmap has
turned the collectives into them. Collectives also work in a function
given to ``jit``, ``lax.scan``, ``lax.cond`` or ``lax.while_loop`` inside
the vmap (``vmap(jit(f), axis_name="i")``, as JAX allows): the staged
collective keeps a data dependence on the axis, so the call is batched over
it whatever its operands. Such a jitted function closes over the vmap's
axis, so ``jit`` traces it anew at every call: put ``jit`` outside the
vmap for speed.

>>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
>>> ft.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(mx.array([1.0, 3.0])).tolist()
[0.25, 0.75]
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import tree
from ftorch.api_util import check_axis
from ftorch.core import ShapeDtypeStruct, Tracer, aval_of, is_inexact
from ftorch.primitives._rules import linear, move_bdim, nondifferentiable, shape_of
from ftorch.transforms.vmap import AxisPrimitive, axis_main

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "axis_index",
           "axis_size", "ppermute", "pshuffle", "all_to_all", "pswapaxes"]

AxisName = Hashable | tuple[Hashable, ...]


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def _names(axis_name: Any, fname: str) -> tuple:
    """``axis_name`` as a tuple of distinct, hashable names."""
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"{fname}: axis_name must be a hashable name or a tuple of them, "
                            f"got {axis_name!r}") from None
        if n is None:
            raise TypeError(f"{fname}: axis_name must name a vmap axis, got None")
    if len(set(names)) != len(names):
        raise ValueError(f"{fname}: repeated axis name in {axis_name!r}")
    return names


def _size(name: Hashable, fname: str) -> int:
    return axis_main(name, fname).global_data.size


def _no_groups(axis_index_groups: Any, fname: str) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"{fname}: axis_index_groups is not supported")


def _unreached(fname: str, names: tuple) -> NameError:
    """The error for a named collective that runs as an MLX op: its axis is
    unbound, or bound by a vmap that the call holding it bypassed."""
    for n in names:
        axis_main(n, fname)  # raises "unbound axis name" if one is
    return NameError(
        f"{fname}: the axis {names[0]!r} is bound, but this collective is evaluated outside "
        "the vmap over it: inside a call (jit, lax.scan, lax.cond, lax.while_loop) that the "
        "vmap does not batch, because no operand of that call varies over the axis, or on "
        "values jit computes from constants alone. Pass the call an operand that varies "
        "over the axis, or compute the collective outside the call.")


def _check_size(fname: str, name: Hashable, traced: int, actual: int) -> None:
    """A staged all_gather or psum_scatter knows the axis size it was traced for."""
    if traced != actual:
        raise ValueError(
            f"{fname}: this call was staged (by jit) for the axis {name!r} of size {traced}, "
            f"but that axis has size {actual} now. Apply jit to the vmapped function, or "
            "use a new jit of the function for each axis size.")


def _aval_rule(impl, named):
    """The shape rule: ``named(x, **params)`` for the named form; MLX's own
    for the positional form (its impl run on placeholders)."""
    def abstract_eval(x, *anchor, axis_name, batch_axis, **params):
        if axis_name:
            return named(x, **params)
        out = impl(mx.zeros(x.shape, x.dtype), axis_name=(), batch_axis=batch_axis, **params)
        return ShapeDtypeStruct(tuple(out.shape), out.dtype)

    return abstract_eval


def _same_aval(x):
    return ShapeDtypeStruct(tuple(x.shape), x.dtype)


def _other_batch(prim, *shifted: str):
    """The batching rule at every vmap but the collective's own: each
    example's collective runs along the operand's other axes, so the batch
    axis moves to the front and the ``shifted`` axis params move past it."""
    def batch(vals, dims, axis_size, **params):
        x = move_bdim(vals[0], dims[0], 0, axis_size)
        for name in shifted:
            if params[name] is not None:
                params[name] += 1
        return prim.bind(x, *_anchors(vals, dims), **params), 0

    return batch


def _anchors(vals: list, dims: list) -> list:
    """The anchor operand (see ``AxisPrimitive``) past the first, to pass on
    to a rebound collective; none if a vmap other than its own batches it
    (binding then anchors anew where needed)."""
    return [] if any(d is not None for d in dims[1:]) else list(vals[1:])


def _broadcast_along(ct: Any, axis: int, shape: tuple[int, ...]) -> Any:
    """``ct`` repeated along a new ``axis``, to ``shape`` (a sum's transpose)."""
    return lax.broadcast_to(lax.expand_dims(ct, (axis,)), shape)


# ----------------------------------------------------------------------------
# psum, pmax, pmin: reductions across the examples
# ----------------------------------------------------------------------------


def _reducer_impl(fn, fname):
    def impl(x, *anchor, axis_name, batch_axis):
        if axis_name:
            raise _unreached(fname, axis_name)
        return fn(x, axis=batch_axis)

    return impl


def _reducer(name: str, fn) -> AxisPrimitive:
    impl = _reducer_impl(fn, name)
    prim = AxisPrimitive(name, impl)
    prim.def_abstract_eval(_aval_rule(impl, _same_aval))
    prim.def_batch(_other_batch(prim, "batch_axis"))

    @prim.def_named_batch
    def named_batch(vals, dims, axis_size, name, *, axis_name, batch_axis):
        x, d = vals[0], dims[0]
        if d is None:  # the same for every example
            out = lax.multiply(x, axis_size) if prim is psum_p else x
        else:
            out = prim.bind(x, axis_name=(), batch_axis=d)
        rest = tuple(n for n in axis_name if n != name)
        return (prim.bind(out, axis_name=rest, batch_axis=None) if rest else out), None

    return prim


def _sum_transpose(ct: Any, x: Any, *anchor: Any, axis_name: tuple,
                   batch_axis: int | None) -> Any:
    """The transpose of ``psum``: a ``psum`` of the cotangent (every example's
    output depends on every example's input), or a broadcast back along the
    positional form's batch axis."""
    if axis_name:
        return psum_p.bind(ct, *anchor, axis_name=axis_name, batch_axis=None)
    return _broadcast_along(ct, batch_axis, shape_of(x))


psum_p = _reducer("psum", mx.sum)
linear(psum_p, _sum_transpose)


def _mean_transpose(ct: Any, x: Any, *anchor: Any, axis_name: tuple,
                    batch_axis: int | None) -> Any:
    """The transpose of ``pmean``: a ``pmean`` of the cotangent, or a share
    of it for each example along the positional form's batch axis."""
    if axis_name:
        return pmean_p.bind(ct, *anchor, axis_name=axis_name, batch_axis=None)
    shape = shape_of(x)
    return _broadcast_along(lax.divide(ct, shape[batch_axis]), batch_axis, shape)


pmean_p = _reducer("pmean", mx.mean)
linear(pmean_p, _mean_transpose)


def _spread(v: Any, batch_axis: int | None) -> Any:
    """A reduction's result made to broadcast against its operand."""
    return v if batch_axis is None else lax.expand_dims(v, (batch_axis,))


def _extreme_weights(x: Any, out: Any, anchor: tuple, axis_name: tuple,
                     batch_axis: int | None) -> Any:
    """1/k at each of the k examples attaining the extreme, else 0."""
    mask = lax.astype(lax.equal(x, _spread(out, batch_axis)), x.dtype)
    count = psum_p.bind(mask, *anchor, axis_name=axis_name, batch_axis=batch_axis)
    return lax.divide(mask, _spread(count, batch_axis))


def _extreme(name: str, fn) -> AxisPrimitive:
    prim = _reducer(name, fn)

    @prim.def_jvp
    def jvp(primals, tangents, **params):
        (x, *anchor), t = primals, tangents[0]
        out = prim.bind(x, *anchor, **params)
        if t is None:
            return out, None
        w = _extreme_weights(x, out, anchor, params["axis_name"], params["batch_axis"])
        return out, psum_p.bind(lax.multiply(t, w), *anchor, **params)

    @prim.def_vjp
    def vjp(ct, out, x, *anchor, needed, **params):
        w = _extreme_weights(x, out, anchor, params["axis_name"], params["batch_axis"])
        return (lax.multiply(w, _sum_transpose(ct, x, *anchor, **params)),
                *(None for _ in anchor))

    return prim


pmax_p = _extreme("pmax", mx.max)
pmin_p = _extreme("pmin", mx.min)


def _reduce(prim: AxisPrimitive, x: Any, axis_name: AxisName, fname: str) -> Any:
    names = _names(axis_name, fname)
    for n in names:
        axis_main(n, fname)  # an unbound name fails here, whatever the operand
    leaves, treedef = tree.flatten(x)
    out = []
    for leaf in leaves:
        leaf = _operand(leaf, fname)
        if prim is psum_p and aval_of(leaf).dtype == mx.bool_:
            leaf = lax.astype(leaf, mx.int32)  # a count, as in JAX
        out.append(prim.bind(leaf, axis_name=names, batch_axis=None) if names else leaf)
    return tree.unflatten(treedef, out)


def psum(x: Any, axis_name: AxisName, *, axis_index_groups: None = None) -> Any:
    """The sum of ``x`` (a pytree of arrays) over the examples of the vmap
    axis ``axis_name`` (a name, or a tuple of names: over all of them), the
    same for every example, as ``jax.lax.psum``. Booleans are counted (an
    int32 sum). ``psum(1, "i")`` is the axis size.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.vmap(lambda x: lax.psum(x, "i"), axis_name="i")(mx.array([1.0, 2.0, 4.0])).tolist()
    [7.0, 7.0, 7.0]
    """
    _no_groups(axis_index_groups, "psum")
    return _reduce(psum_p, x, axis_name, "psum")


def pmean(x: Any, axis_name: AxisName, *, axis_index_groups: None = None) -> Any:
    """The mean of ``x`` (a pytree of arrays) over the examples of the vmap
    axis ``axis_name``, the same for every example, as ``jax.lax.pmean``.
    Integer and boolean inputs give float32 means.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.vmap(lambda x: lax.pmean(x, "i"), axis_name="i")(mx.array([1.0, 2.0, 6.0])).tolist()
    [3.0, 3.0, 3.0]
    """
    _no_groups(axis_index_groups, "pmean")

    def as_float(leaf):
        leaf = _operand(leaf, "pmean")
        return leaf if is_inexact(leaf.dtype) else lax.astype(leaf, mx.float32)

    return _reduce(pmean_p, tree.map(as_float, x), axis_name, "pmean")


def pmax(x: Any, axis_name: AxisName, *, axis_index_groups: None = None) -> Any:
    """The maximum of ``x`` (a pytree of arrays) over the examples of the
    vmap axis ``axis_name``, the same for every example, as
    ``jax.lax.pmax``. Differentiable (JAX's is not): the derivative goes to
    the examples attaining the maximum, shared equally among ties.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.vmap(lambda x: lax.pmax(x, "i"), axis_name="i")(mx.array([1.0, 5.0, 2.0])).tolist()
    [5.0, 5.0, 5.0]
    """
    _no_groups(axis_index_groups, "pmax")
    return _reduce(pmax_p, x, axis_name, "pmax")


def pmin(x: Any, axis_name: AxisName, *, axis_index_groups: None = None) -> Any:
    """The minimum of ``x`` (a pytree of arrays) over the examples of the
    vmap axis ``axis_name``, as ``jax.lax.pmin``; differentiable like ``pmax``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.vmap(lambda x: lax.pmin(x, "i"), axis_name="i")(mx.array([1.0, 5.0, 2.0])).tolist()
    [1.0, 1.0, 1.0]
    """
    _no_groups(axis_index_groups, "pmin")
    return _reduce(pmin_p, x, axis_name, "pmin")


# ----------------------------------------------------------------------------
# all_gather, psum_scatter: each other's transpose
# ----------------------------------------------------------------------------


def _merge(x: Any, axis: int) -> Any:
    """``x`` with axes ``axis`` and ``axis + 1`` merged into one."""
    s = shape_of(x)
    return lax.reshape(x, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])


def _unmerge(x: Any, axis: int, n: int) -> Any:
    """``x`` with axis ``axis`` split into ``(n, rest)``."""
    s = shape_of(x)
    return lax.reshape(x, s[:axis] + (n, s[axis] // n) + s[axis + 1:])


def _gather_impl(x, *anchor, axis_name, batch_axis, axis, tiled, size):
    if axis_name:
        raise _unreached("all_gather", axis_name)
    out = mx.moveaxis(x, batch_axis, axis)
    if tiled:
        s = out.shape
        out = out.reshape(s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])
    return out


def _gather_named_aval(x, *, axis, tiled, size):
    s = x.shape
    shape = (s[:axis] + (size * s[axis],) + s[axis + 1:] if tiled
             else s[:axis] + (size,) + s[axis:])
    return ShapeDtypeStruct(shape, x.dtype)


def _scatter_impl(x, *anchor, axis_name, batch_axis, scatter_dimension, tiled, size):
    if axis_name:
        raise _unreached("psum_scatter", axis_name)
    out = mx.sum(x, axis=batch_axis)
    if tiled:
        s, d = out.shape, scatter_dimension
        out = out.reshape(s[:d] + (size, s[d] // size) + s[d + 1:])
    return out


def _scatter_named_aval(x, *, scatter_dimension, tiled, size):
    s, d = x.shape, scatter_dimension
    shape = s[:d] + ((s[d] // size,) if tiled else ()) + s[d + 1:]
    return ShapeDtypeStruct(shape, x.dtype)


all_gather_p = AxisPrimitive("all_gather", _gather_impl)
all_gather_p.def_abstract_eval(_aval_rule(_gather_impl, _gather_named_aval))
psum_scatter_p = AxisPrimitive("psum_scatter", _scatter_impl)
psum_scatter_p.def_abstract_eval(_aval_rule(_scatter_impl, _scatter_named_aval))


def _gather_transpose(ct, x, *anchor, axis_name, batch_axis, axis, tiled, size):
    if axis_name:
        return psum_scatter_p.bind(ct, *anchor, axis_name=axis_name, batch_axis=None,
                                   scatter_dimension=axis, tiled=tiled, size=size)
    if tiled:
        ct = _unmerge(ct, axis, size)
    return lax.moveaxis(ct, axis, batch_axis)


linear(all_gather_p, _gather_transpose)
all_gather_p.def_batch(_other_batch(all_gather_p, "batch_axis", "axis"))


@all_gather_p.def_named_batch
def _gather_named_batch(vals, dims, n, name, *, axis_name, batch_axis, axis, tiled, size):
    _check_size("all_gather", name, size, n)
    x, d = vals[0], dims[0]
    if d is None:
        x, d = move_bdim(x, None, 0, n), 0
    return all_gather_p.bind(x, axis_name=(), batch_axis=d, axis=axis, tiled=tiled, size=n), None


def _scatter_transpose(ct, x, *anchor, axis_name, batch_axis, scatter_dimension, tiled, size):
    if axis_name:
        return all_gather_p.bind(ct, *anchor, axis_name=axis_name, batch_axis=None,
                                 axis=scatter_dimension, tiled=tiled, size=size)
    if tiled:
        ct = _merge(ct, scatter_dimension)
    return _broadcast_along(ct, batch_axis, shape_of(x))


linear(psum_scatter_p, _scatter_transpose)
psum_scatter_p.def_batch(_other_batch(psum_scatter_p, "batch_axis", "scatter_dimension"))


@psum_scatter_p.def_named_batch
def _scatter_named_batch(vals, dims, n, name, *, axis_name, batch_axis, scatter_dimension,
                         tiled, size):
    _check_size("psum_scatter", name, size, n)
    x, d = vals[0], dims[0]
    if d is None:
        x, d = move_bdim(x, None, 0, n), 0
    out = psum_scatter_p.bind(x, axis_name=(), batch_axis=d, scatter_dimension=scatter_dimension,
                              tiled=tiled, size=n)
    # Example k's block is at index k along the scatter dimension: that is the batch axis.
    return out, scatter_dimension


def _operand(x: Any, fname: str) -> Any:
    if isinstance(x, (mx.array, Tracer)):
        return x
    if isinstance(x, (bool, int, float, complex)) or hasattr(x, "__array__"):
        return mx.array(x)
    raise TypeError(f"{fname}: x must be an array, got {type(x).__name__}: {x!r}")


def all_gather(x: Any, axis_name: AxisName, *, axis_index_groups: None = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every example's ``x`` (a pytree of arrays), stacked along a new
    ``axis`` of the result (of size the axis size), the same for every
    example, as ``jax.lax.all_gather``. ``tiled=True`` concatenates along
    ``x``'s existing ``axis`` instead. A tuple ``axis_name`` gathers over
    all the named axes, outermost first.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> g = ft.vmap(lambda x: lax.all_gather(x, "i"), axis_name="i")(mx.array([1.0, 2.0]))
    >>> g.tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    _no_groups(axis_index_groups, "all_gather")
    names = _names(axis_name, "all_gather")
    if not names:
        raise ValueError("all_gather: axis_name must name at least one axis")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"all_gather: axis must be an int, got {axis!r}")

    def gather(leaf):
        leaf = _operand(leaf, "all_gather")
        shape = shape_of(leaf)
        rank = len(shape) + (0 if tiled else 1)
        a = check_axis(axis, rank, "all_gather", of=f"an operand of shape {shape}" + (
            " (tiled: an existing axis)" if tiled else
            f" (the gathered axis is inserted into a result of ndim {rank})"))
        sizes = [_size(n, "all_gather") for n in names]
        out = leaf
        for n, size in zip(reversed(names), reversed(sizes)):
            out = all_gather_p.bind(out, axis_name=(n,), batch_axis=None, axis=a, tiled=False,
                                    size=size)
        # (n0, n1, ..., shape[a]): merge the gathered axes, and tiled, the operand's.
        for _ in range(len(names) - 1 + tiled):
            out = _merge(out, a)
        return out

    return tree.map(gather, x)


def psum_scatter(x: Any, axis_name: AxisName, *, scatter_dimension: int = 0,
                 axis_index_groups: None = None, tiled: bool = False) -> Any:
    """The sum of ``x`` over the examples of the vmap axis ``axis_name``,
    scattered: example ``k`` gets index ``k`` of its ``scatter_dimension``
    (whose length must be the axis size), as ``jax.lax.psum_scatter``.
    ``tiled=True`` gives it the ``k``-th of that many equal blocks instead
    (the length must be a multiple of the axis size). The transpose of
    ``all_gather``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> f = ft.vmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i")
    >>> f(mx.array([[1.0, 2.0], [10.0, 20.0]])).tolist()
    [11.0, 22.0]
    """
    _no_groups(axis_index_groups, "psum_scatter")
    names = _names(axis_name, "psum_scatter")
    if not names:
        raise ValueError("psum_scatter: axis_name must name at least one axis")
    if isinstance(scatter_dimension, bool) or not isinstance(scatter_dimension, int):
        raise TypeError(f"psum_scatter: scatter_dimension must be an int, got "
                        f"{scatter_dimension!r}")

    def scatter(leaf):
        leaf = _operand(leaf, "psum_scatter")
        shape = shape_of(leaf)
        d = check_axis(scatter_dimension, len(shape), "psum_scatter", "scatter_dimension",
                       of=f"an operand of shape {shape}")
        sizes = [_size(n, "psum_scatter") for n in names]
        total = math.prod(sizes)
        if (shape[d] % total if tiled else shape[d] != total):
            raise ValueError(
                f"psum_scatter: scatter_dimension {scatter_dimension} of the operand of shape "
                f"{shape} has length {shape[d]}, which must be "
                + ("a multiple of" if tiled else "equal to")
                + f" the size {total} of the axis {axis_name!r}")
        if aval_of(leaf).dtype == mx.bool_:
            leaf = lax.astype(leaf, mx.int32)
        out = leaf
        for n, size in zip(names, sizes):  # outermost first: its blocks are the largest
            out = psum_scatter_p.bind(out, axis_name=(n,), batch_axis=None,
                                      scatter_dimension=d, tiled=True, size=size)
        if not tiled:  # a block of length 1: drop it
            s = shape_of(out)
            out = lax.reshape(out, s[:d] + s[d + 1:])
        return out

    return tree.map(scatter, x)


# ----------------------------------------------------------------------------
# axis_index
# ----------------------------------------------------------------------------


def _index_impl(*anchor, axis_name, size):
    if axis_name:
        raise _unreached("axis_index", axis_name)
    return mx.arange(size, dtype=mx.int32)


def _index_aval(*anchor, axis_name, size):
    return ShapeDtypeStruct(() if axis_name else (size,), mx.int32)


axis_index_p = AxisPrimitive("axis_index", _index_impl, arity=0)
axis_index_p.def_abstract_eval(_index_aval)
nondifferentiable(axis_index_p)
# Its only operand is an anchor: another vmap batching that rebinds it afresh.
axis_index_p.def_batch(lambda vals, dims, axis_size, **params: (axis_index_p.bind(**params), None))


@axis_index_p.def_named_batch
def _index_named_batch(vals, dims, n, name, *, axis_name, size):
    return axis_index_p.bind(axis_name=(), size=n), 0


def axis_index(axis_name: AxisName) -> Any:
    """Each example's position (int32) along the vmap axis ``axis_name``,
    as ``jax.lax.axis_index``; for a tuple of names, the position in their
    row-major combination (outermost first).

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.vmap(lambda x: x * lax.axis_index("i"), axis_name="i")(mx.ones(3)).tolist()
    [0.0, 1.0, 2.0]
    """
    names = _names(axis_name, "axis_index")
    if not names:
        raise ValueError("axis_index: axis_name must name at least one axis")
    out = None
    for n in names:
        axis_main(n, "axis_index")
        index = axis_index_p.bind(axis_name=(n,), size=None)
        # The sizes as psums, so that a staged (jitted) index follows the axis size.
        out = index if out is None else lax.add(lax.multiply(out, psum(1, n)), index)
    return out


# ----------------------------------------------------------------------------
# axis_size, and the permutations built on all_gather: ppermute, pshuffle,
# all_to_all, pswapaxes. Each example gathers every example's operand and
# picks its part, so derivatives flow through all_gather's transpose.
# ----------------------------------------------------------------------------


def axis_size(axis_name: AxisName) -> int:
    """The number of examples along the vmap axis ``axis_name`` (for a
    tuple of names, the product), a Python int, as ``jax.lax.axis_size``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> ft.vmap(lambda x: x * lax.axis_size("i"), axis_name="i")(mx.ones(3)).tolist()
    [3.0, 3.0, 3.0]
    """
    return math.prod(_size(n, "axis_size") for n in _names(axis_name, "axis_size"))


def _pick_from(x: Any, axis_name: AxisName, sources: list[int], fname: str) -> Any:
    """Each example's result: the operand of example ``sources[k]`` for
    example ``k``, zeros where that is -1."""
    table = mx.array(sources, dtype=mx.int32)
    index = axis_index(axis_name)
    source = lax.dynamic_index_in_dim(table, index, 0, keepdims=False)

    def pick(leaf):
        gathered = all_gather(_operand(leaf, fname), axis_name)
        out = lax.dynamic_index_in_dim(gathered, lax.maximum(source, 0), 0, keepdims=False)
        if -1 in sources:
            out = lax.where(lax.greater_equal(source, 0), out, lax.zeros_like(out))
        return out

    return tree.map(pick, x)


def ppermute(x: Any, axis_name: AxisName, perm: Any) -> Any:
    """Each example's ``x`` (a pytree of arrays) sent to another: for each
    ``(source, destination)`` pair of ``perm`` (each index at most once on
    each side), example ``destination`` gets example ``source``'s ``x``, and
    an example no pair sends to gets zeros, as ``jax.lax.ppermute``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> shift = lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)])
    >>> ft.vmap(shift, axis_name="i")(mx.array([1.0, 2.0, 3.0])).tolist()
    [3.0, 1.0, 2.0]
    """
    n = axis_size(axis_name)
    sources = [-1] * n
    try:
        pairs = [(int(s), int(d)) for s, d in perm]
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) pairs, "
                        f"got {perm!r}") from None
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if (len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts)
            or any(not 0 <= i < n for i in srcs + dsts)):
        raise ValueError(f"ppermute: perm must name each example of the axis {axis_name!r} "
                         f"(size {n}) at most once as a source and once as a destination, "
                         f"got {perm!r}")
    for s, d in pairs:
        sources[d] = s
    return _pick_from(x, axis_name, sources, "ppermute")


def pshuffle(x: Any, axis_name: AxisName, perm: Any) -> Any:
    """Example ``k`` gets example ``perm[k]``'s ``x`` (``perm`` a
    permutation of the axis), as ``jax.lax.pshuffle``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> f = lambda x: lax.pshuffle(x, "i", [1, 2, 0])
    >>> ft.vmap(f, axis_name="i")(mx.array([1.0, 2.0, 3.0])).tolist()
    [2.0, 3.0, 1.0]
    """
    n = axis_size(axis_name)
    sources = [int(p) for p in perm]
    if sorted(sources) != list(range(n)):
        raise ValueError(f"pshuffle: perm must be a permutation of range({n}) (the size of "
                         f"the axis {axis_name!r}), got {perm!r}")
    return _pick_from(x, axis_name, sources, "pshuffle")


def all_to_all(x: Any, axis_name: AxisName, split_axis: int, concat_axis: int, *,
               axis_index_groups: None = None, tiled: bool = False) -> Any:
    """Every example's ``x`` split along ``split_axis`` into one chunk per
    example, chunk ``k`` going to example ``k``, which joins the chunks it
    receives (in the senders' order) along ``concat_axis``, as
    ``jax.lax.all_to_all``. Untiled, ``split_axis`` has the axis size and
    is removed, and the received chunks are stacked along a new
    ``concat_axis``; ``tiled=True`` splits ``split_axis`` into equal blocks
    and concatenates them along the existing ``concat_axis``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> f = lambda x: lax.all_to_all(x, "i", 0, 0)
    >>> ft.vmap(f, axis_name="i")(mx.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
    fname = "all_to_all"
    _no_groups(axis_index_groups, fname)
    n = axis_size(axis_name)
    index = axis_index(axis_name)

    def exchange(leaf):
        leaf = _operand(leaf, fname)
        shape = shape_of(leaf)
        split = check_axis(split_axis, len(shape), fname, "split_axis",
                           of=f"an operand of shape {shape}")
        rank = len(shape) if tiled else len(shape) - 1  # where concat_axis points
        concat = check_axis(concat_axis, rank + (0 if tiled else 1), fname, "concat_axis",
                            of=f"the result of ndim {rank + (0 if tiled else 1)}")
        if shape[split] % n if tiled else shape[split] != n:
            raise ValueError(
                f"{fname}: split_axis {split_axis} of the operand of shape {shape} has length "
                f"{shape[split]}, which must be " + ("a multiple of" if tiled else "equal to")
                + f" the size {n} of the axis {axis_name!r}")
        gathered = all_gather(leaf, axis_name)  # (senders, *shape)
        if not tiled:
            mine = lax.dynamic_index_in_dim(gathered, index, split + 1, keepdims=False)
            return lax.moveaxis(mine, 0, concat)
        blocks = _unmerge(gathered, split + 1, n)  # (senders, ..., n, block, ...)
        mine = lax.dynamic_index_in_dim(blocks, index, split + 1, keepdims=False)
        return _merge(lax.moveaxis(mine, 0, concat), concat)

    return tree.map(exchange, x)


def pswapaxes(x: Any, axis_name: AxisName, axis: int, *,
              axis_index_groups: None = None) -> Any:
    """The vmap axis ``axis_name`` and the operand's ``axis`` (of the same
    size) swapped: ``all_to_all(x, axis_name, axis, axis)``, as
    ``jax.lax.pswapaxes``.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> f = lambda x: lax.pswapaxes(x, "i", 0)
    >>> ft.vmap(f, axis_name="i")(mx.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
