"""``associative_scan``: a parallel prefix scan under any associative binary
function, as ``jax.lax.associative_scan``.

It is a composite of ftorch.numpy ops (strided slices, ``stack`` +
``reshape`` to interleave, ``concatenate``), not a primitive: ``grad``,
``jvp``, ``vmap`` and ``jit`` go through it with no rules of their own.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import ftorch.primitives as lax
from ftorch import tree
from ftorch.api_util import check_axis, check_callable, flatten_arrays, leaf_names
from ftorch.core import aval_of, format_aval
from ftorch.primitives.shape import static_slice

__all__ = ["associative_scan"]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """Inclusive scan of ``elems`` along ``axis`` under the associative ``fn``.

    ``elems`` is a pytree of arrays of equal size ``n`` along ``axis``; the
    result has its structure and shapes, and its ``k``-th slice along
    ``axis`` is ``fn(...fn(fn(e[0], e[1]), e[2])..., e[k])``. ``fn(a, b)``
    takes and returns pytrees like ``elems`` whose leaves still have the
    ``axis`` dimension (of any length, the same in ``a`` and ``b``) and must
    act elementwise along it. With ``reverse=True`` the scan runs from the
    end: ``elems`` is flipped along ``axis``, scanned, and flipped back, so
    the later element is ``fn``'s first argument (as in JAX).

    It calls ``fn`` about ``2 log2(n)`` times, on slices of halving length
    (Blelloch's odd-even recursion), so its depth is logarithmic in ``n``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.associative_scan(lambda a, b: a + b, mx.arange(5.0)).tolist()
    [0.0, 1.0, 3.0, 6.0, 10.0]
    >>> lax.associative_scan(lambda a, b: a + b, mx.arange(5.0), reverse=True).tolist()
    [10.0, 10.0, 9.0, 7.0, 4.0]
    """
    fname = "associative_scan"
    check_callable(fn, fname)
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}: axis must be an integer, got {axis!r}") from None
    leaves, treedef = flatten_arrays(elems, "elems")
    names = leaf_names(treedef, "elems")
    if not leaves:
        return elems
    axes, n = [], None
    for name, x in zip(names, leaves):
        shape = tuple(aval_of(x).shape)
        a = check_axis(axis, len(shape), fname, of=f"{name} of shape {shape}")
        if n is None:
            n, first = shape[a], (name, shape)
        elif shape[a] != n:
            raise ValueError(
                f"{fname}: every leaf of elems must have the same size along axis {axis}, but "
                f"{first[0]} has shape {first[1]} and {name} has shape {shape}")
        axes.append(a)

    def take(xs: list, start: int | None, stop: int | None = None, step: int = 1) -> list:
        return [static_slice(x, (slice(None),) * a + (slice(start, stop, step),))
                for x, a in zip(xs, axes)]

    def combine(xs: list, ys: list) -> list:
        out, out_tree = flatten_arrays(fn(tree.unflatten(treedef, xs),
                                          tree.unflatten(treedef, ys)), "fn's result")
        if out_tree != treedef:
            raise TypeError(f"{fname}: fn must return the structure of elems, {treedef}, "
                            f"but it returned {out_tree}")
        for name, x, o in zip(names, xs, out):
            want, got = aval_of(x), aval_of(o)
            if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
                raise TypeError(
                    f"{fname}: fn must return the shapes and dtypes of its arguments, but for "
                    f"{name} it was given {format_aval(want)} and returned {format_aval(got)}")
        return out

    def interleave(evens: list, odds: list) -> list:
        # evens[i] lands at 2i and odds[i] at 2i+1: stack them on a new axis
        # right after ``axis`` and merge the two.
        out = []
        for e, o, a in zip(evens, odds, axes):
            pair = lax.concatenate([lax.expand_dims(e, (a + 1,)), lax.expand_dims(o, (a + 1,))],
                                   a + 1)
            shape = tuple(e.shape)
            out.append(lax.reshape(pair, shape[:a] + (2 * shape[a],) + shape[a + 1:]))
        return out

    def scan(xs: list) -> list:
        m = tuple(xs[0].shape)[axes[0]]
        if m < 2:
            return xs
        # Combine neighbouring pairs (0,1), (2,3), ...: the scan of those
        # sums is the result at the odd positions 1, 3, ...
        odds = scan(combine(take(xs, 0, -1, 2), take(xs, 1, None, 2)))
        # Each even position 2k > 0 is the odd result before it combined with
        # its own element; position 0 is its element.
        n_even = (m + 1) // 2
        evens = take(xs, 0, 1)
        if n_even > 1:
            rest = combine(take(odds, 0, n_even - 1), take(xs, 2, None, 2))
            evens = [lax.concatenate([e, r], a) for e, r, a in zip(evens, rest, axes)]
        if m % 2 == 0:
            return interleave(evens, odds)
        # Odd length: one more even than odd; interleave the pairs, then append it.
        merged = interleave(take(evens, 0, -1), odds)
        return [lax.concatenate([x, e], a)
                for x, e, a in zip(merged, take(evens, -1), axes)]

    if reverse:
        leaves = [_reversed(x, a) for x, a in zip(leaves, axes)]
    out = scan(leaves)
    if reverse:
        out = [_reversed(x, a) for x, a in zip(out, axes)]
    return tree.unflatten(treedef, out)


def _reversed(x: Any, axis: int) -> Any:
    """``x`` with the order of its elements along ``axis`` reversed."""
    return lax.static_slice(x, (slice(None),) * axis + (slice(None, None, -1),))
