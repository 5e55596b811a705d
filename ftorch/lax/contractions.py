"""``jax.lax``'s dot products on ``lax.einsum``: ``dot_general`` names each
axis (batch, contracting, free) and runs one einsum, whose rules (JVP, VJP,
batching) are the einsum primitive's; ``ragged_dot`` multiplies each group of
rows by its own matrix as one einsum against a row-to-group one-hot.

>>> import ftorch.lax as lax, mlx.core as mx
>>> a, b = mx.ones((2, 3, 4)), mx.ones((2, 4, 5))
>>> lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))).shape
(2, 3, 5)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as prim
from ftorch.core import as_array, aval_of
from ftorch.dtypes import promote_types, to_mlx_dtype
from ftorch.primitives.creation import static_int
from ftorch.primitives.linalg import canonical_subscripts
from ftorch.typing import Array, ArrayLike, DTypeLike

__all__ = ["dot_general", "dot", "batch_matmul", "ragged_dot", "DotDimensionNumbers"]

#: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, as JAX's alias.
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]


def _axes(axes: Any, ndim: int, fname: str, what: str) -> tuple[int, ...]:
    try:
        out = tuple(static_int(a, fname, what) for a in axes)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be a sequence of ints, got {axes!r}") from None
    if any(not 0 <= a < ndim for a in out) or len(set(out)) != len(out):
        raise ValueError(f"{fname}: {what} must be distinct axes in [0, {ndim}), got {axes!r}")
    return out


def _result(y: Array, dtype: Any, preferred_element_type: DTypeLike | None,
            fname: str) -> Array:
    if preferred_element_type is not None:
        dtype = to_mlx_dtype(preferred_element_type, f"{fname}: preferred_element_type")
    return y if aval_of(y).dtype == dtype else prim.astype(y, dtype)


def _promoted(lhs: ArrayLike, rhs: ArrayLike, fname: str) -> tuple[Array, Array, Any]:
    lhs, rhs = as_array(lhs, f"{fname}: lhs"), as_array(rhs, f"{fname}: rhs")
    dtype = promote_types(aval_of(lhs).dtype, aval_of(rhs).dtype)
    return prim.astype(lhs, dtype), prim.astype(rhs, dtype), dtype


def dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: DotDimensionNumbers,
                precision: Any = None, preferred_element_type: DTypeLike | None = None
                ) -> Array:
    """The general tensor contraction, as ``jax.lax.dot_general``.

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))``: the contracting axes are summed over in
    pairs, the batch axes pair up elementwise. The result's axes are the
    batch axes (in ``lhs_batch``'s order), then ``lhs``'s other axes, then
    ``rhs``'s, each in order. Operands of different dtypes are promoted;
    ``precision`` is accepted for JAX's signature (MLX has one precision);
    ``preferred_element_type`` is the result's dtype.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dot_general(mx.ones((3, 2)), mx.ones((3, 4)), (((0,), (0,)), ((), ()))).tolist()
    [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    """
    fname = "dot_general"
    lhs, rhs, dtype = _promoted(lhs, rhs, fname)
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: dimension_numbers must be ((lhs_contracting, "
                        f"rhs_contracting), (lhs_batch, rhs_batch)), got "
                        f"{dimension_numbers!r}") from None
    lc, lb = _axes(lc, len(ls), fname, "lhs contracting axes"), _axes(lb, len(ls), fname,
                                                                      "lhs batch axes")
    rc, rb = _axes(rc, len(rs), fname, "rhs contracting axes"), _axes(rb, len(rs), fname,
                                                                      "rhs batch axes")
    for what, a, b in (("contracting", lc, rc), ("batch", lb, rb)):
        if len(a) != len(b) or any(ls[i] != rs[j] for i, j in zip(a, b)):
            raise ValueError(f"{fname}: the {what} axes must pair up with equal sizes, got "
                             f"lhs axes {a} of shape {ls} and rhs axes {b} of shape {rs}")
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise ValueError(f"{fname}: an axis cannot be both contracting and batch, got "
                         f"{dimension_numbers!r}")
    lhs_labels = [("b", lb.index(i)) if i in lb else ("c", lc.index(i)) if i in lc
                  else ("l", i) for i in range(len(ls))]
    rhs_labels = [("b", rb.index(i)) if i in rb else ("c", rc.index(i)) if i in rc
                  else ("r", i) for i in range(len(rs))]
    out = [("b", j) for j in range(len(lb))]
    out += [x for x in lhs_labels if x[0] == "l"] + [x for x in rhs_labels if x[0] == "r"]
    y = prim.einsum(canonical_subscripts([lhs_labels, rhs_labels], out), lhs, rhs)
    return _result(y, dtype, preferred_element_type, fname)


def dot(lhs: ArrayLike, rhs: ArrayLike, *, dimension_numbers: DotDimensionNumbers | None = None,
        precision: Any = None, preferred_element_type: DTypeLike | None = None) -> Array:
    """The vector-vector, matrix-vector or matrix-matrix product (``lhs``'s
    last axis against ``rhs``'s first), as ``jax.lax.dot``; with
    ``dimension_numbers``, ``dot_general``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.dot(mx.array([1.0, 2.0]), mx.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    if dimension_numbers is None:
        ls, rs = aval_of(as_array(lhs, "dot: lhs")).shape, aval_of(as_array(rhs, "dot: rhs")).shape
        if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2):
            raise ValueError(f"dot: give dimension_numbers for anything but vector and matrix "
                             f"products, got shapes {ls} and {rs}")
        dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs: ArrayLike, rhs: ArrayLike, precision: Any = None) -> Array:
    """The matrix products of two stacks of matrices with equal leading
    (batch) axes, as ``jax.lax.batch_matmul``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.batch_matmul(mx.ones((5, 2, 3)), mx.ones((5, 3, 4))).shape
    (5, 2, 4)
    """
    ls = aval_of(as_array(lhs, "batch_matmul: lhs")).shape
    rs = aval_of(as_array(rhs, "batch_matmul: rhs")).shape
    if len(ls) != len(rs) or len(ls) < 2 or ls[:-2] != rs[:-2]:
        raise ValueError(f"batch_matmul: lhs and rhs must be stacks of matrices with the same "
                         f"batch axes, got shapes {ls} and {rs}")
    batch = tuple(range(len(ls) - 2))
    return dot_general(lhs, rhs, (((len(ls) - 1,), (len(rs) - 2,)), (batch, batch)), precision)


def ragged_dot(lhs: ArrayLike, rhs: ArrayLike, group_sizes: ArrayLike, precision: Any = None,
               preferred_element_type: DTypeLike | None = None,
               group_offset: ArrayLike | None = None) -> Array:
    """Each consecutive group of ``lhs``'s rows times its own matrix, as
    ``jax.lax.ragged_dot``: ``lhs`` is ``(m, k)``, ``rhs`` is ``(g, k, n)``,
    ``group_sizes`` ``(g,)`` integers; rows past ``sum(group_sizes)`` give
    zeros. Computed as one contraction against a row-to-group one-hot
    (``g`` times a plain product's work). ``group_offset`` is not
    supported, as in JAX.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> w = mx.stack([mx.eye(2), 2 * mx.eye(2)])
    >>> lax.ragged_dot(mx.ones((3, 2)), w, mx.array([1, 2])).tolist()
    [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
    """
    fname = "ragged_dot"
    if group_offset is not None:
        raise NotImplementedError(f"{fname}: group_offset is not supported")
    lhs, rhs, dtype = _promoted(lhs, rhs, fname)
    sizes = as_array(group_sizes, f"{fname}: group_sizes")
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    m = ls[0] if len(ls) == 2 else 0
    if (len(ls), len(rs)) != (2, 3) or ls[1] != rs[1] or aval_of(sizes).shape != rs[:1]:
        raise ValueError(f"{fname}: lhs (m, k), rhs (g, k, n) and group_sizes (g,) do not "
                         f"match, got shapes {aval_of(lhs).shape}, {aval_of(rhs).shape} and "
                         f"{aval_of(sizes).shape}")
    ends = prim.cumsum(sizes, 0)
    starts = prim.subtract(ends, sizes)
    rows = mx.arange(m, dtype=aval_of(sizes).dtype).reshape(m, 1)
    in_group = prim.logical_and(prim.greater_equal(rows, starts), prim.less(rows, ends))
    one_hot = prim.astype(in_group, dtype)
    y = prim.einsum("mk,gkn,mg->mn", lhs, rhs, one_hot)
    return _result(y, dtype, preferred_element_type, fname)
