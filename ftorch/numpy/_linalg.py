"""Linear algebra, as in NumPy / jax.numpy: ``matmul``, ``einsum`` (subscript
parsing, ellipsis broadcasting, implicit output) and the contractions lowered
onto them (``dot``, ``vdot``, ``inner``, ``outer``, ``tensordot``), over the
strict wrappers of ``ftorch.primitives.linalg``. Operands are converted with
``asarray``; a contraction computes in MLX's promoted dtype.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.einsum("...ij,jk", mx.ones((5, 2, 3)), mx.ones((3, 4))).shape
(5, 2, 4)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Tracer, aval_of, is_floating
from ftorch.numpy import _creation, _elementwise, _shape
from ftorch.primitives.linalg import LETTERS, canonical_subscripts, matmul_subscripts
from ftorch.typing import Shape

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "cross"]

_ARRAYS = (mx.array, Tracer)


# ----------------------------------------------------------------------------
# einsum
# ----------------------------------------------------------------------------


def _parse_term(term: str, k: int) -> list[str | None]:
    """A term's labels, with ``None`` standing for its ellipsis."""
    if term.count("...") > 1:
        raise ValueError(f"einsum: term {k} ({term!r}) has more than one ellipsis")
    parts = term.split("...")
    for part in parts:
        for c in part:
            if c == ".":
                raise ValueError(
                    f"einsum: term {k} ({term!r}) has a '.' that is not part of an ellipsis")
            if c not in LETTERS:
                raise ValueError(
                    f"einsum: invalid subscript {c!r} in term {k} ({term!r}); "
                    "subscripts must be letters")
    return list(parts[0]) if len(parts) == 1 else [*parts[0], None, *parts[1]]


@functools.lru_cache(maxsize=4096)
def _einsum_spec(subscripts: str, shapes: tuple[Shape, ...]) -> str:
    """The canonical subscripts for ``subscripts`` applied to operands of ``shapes``."""
    s = "".join(subscripts.split())
    if s.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    explicit = "->" in s
    lhs, out_str = s.split("->") if explicit else (s, "")
    terms = [_parse_term(t, k) for k, t in enumerate(lhs.split(","))]
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
            f"{len(shapes)} were given")
    # Each dimension gets a key: ("l", letter) or ("e", i), the i-th of the
    # broadcast ellipsis dimensions counted from the right.
    keyed: list[list[tuple]] = []
    n_ell = 0
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        n_letters = len(term) - (None in term)
        if len(shape) < n_letters or (None not in term and len(shape) != n_letters):
            raise ValueError(
                f"einsum: operand {k} has shape {shape} ({len(shape)} dimensions) but its "
                f"subscripts {''.join('...' if c is None else c for c in term)!r} "
                f"name {n_letters}")
        keys = []
        for c in term:
            if c is None:
                n = len(shape) - n_letters
                n_ell = max(n_ell, n)
                keys += [("e", n - 1 - j) for j in range(n)]
            else:
                keys.append(("l", c))
        keyed.append(keys)
    sizes: dict[tuple, tuple[int, int]] = {}  # key -> (size, operand that set it)
    for k, (keys, shape) in enumerate(zip(keyed, shapes)):
        for p, (key, d) in enumerate(zip(keys, shape)):
            if keys.index(key) < p and shape[keys.index(key)] != d:
                raise ValueError(
                    f"einsum: label {key[1]!r} repeats in operand {k} with different sizes "
                    f"({shape[keys.index(key)]} and {d}) in its shape {shape}")
            seen = sizes.get(key)
            if seen is None or seen[0] == 1:
                sizes[key] = (d, k)
            elif d not in (1, seen[0]):
                what = f"label {key[1]!r}" if key[0] == "l" else "ellipsis dimensions"
                raise ValueError(
                    f"einsum: {what} of size {seen[0]} in operand {seen[1]} does not "
                    f"match size {d} in operand {k} (shape {shape})")
    ell_keys = [("e", j) for j in range(n_ell - 1, -1, -1)]
    if explicit:
        out_terms = _parse_term(out_str, len(terms))
        out_keys: list[tuple] = []
        for c in out_terms:
            if c is None:
                out_keys += ell_keys
            elif ("l", c) not in sizes:
                raise ValueError(f"einsum: output subscript {c!r} appears in no input")
            elif ("l", c) in out_keys:
                raise ValueError(f"einsum: output subscript {c!r} appears more than once")
            else:
                out_keys.append(("l", c))
        if None not in out_terms and ell_keys:
            raise ValueError(
                "einsum: inputs have ellipsis dimensions but the output has no '...'")
    else:
        letters = [key[1] for keys in keyed for key in keys if key[0] == "l"]
        out_keys = ell_keys + [("l", c) for c in sorted(set(letters)) if letters.count(c) == 1]
    # An operand's size-1 dimension against a larger size broadcasts: give it
    # a label of its own, summed away, so each label has a single size.
    for k, (keys, shape) in enumerate(zip(keyed, shapes)):
        keyed[k] = [("b", k, key) if d == 1 and sizes[key][0] != 1 else key
                    for key, d in zip(keys, shape)]
    return canonical_subscripts(keyed, out_keys)


def einsum(subscripts: str, *operands: Any) -> Any:
    """Einstein summation, as ``numpy.einsum``.

    Implicit (``"ij,jk"``) and explicit (``"ij,jk->ik"``) outputs, ellipsis
    broadcasting, repeated labels within an operand (diagonals) and any
    number of operands. Contractions run as one MLX einsum (matmul-based).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.einsum("ij,jk->ik", mx.ones((2, 3)), mx.ones((3, 4))).shape
    (2, 4)
    >>> fnp.einsum("ii", mx.eye(3)).item()
    3.0
    """
    if not isinstance(subscripts, str):
        raise TypeError(
            f"einsum: subscripts must be a string such as 'ij,jk->ik', got {subscripts!r}")
    ops = [o if isinstance(o, _ARRAYS) else _creation.asarray(o) for o in operands]
    spec = _einsum_spec(subscripts, tuple(tuple(o.shape) for o in ops))
    return lax.einsum(spec, *ops)


# ----------------------------------------------------------------------------
# matmul
# ----------------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    """Matrix product with NumPy's rules, as ``numpy.matmul`` (the ``@`` operator).

    A 1-d ``a`` is a row vector and a 1-d ``b`` a column vector (the added
    axis is removed from the result); leading batch dimensions broadcast.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.matmul(mx.ones((5, 2, 3)), mx.ones((3, 4))).shape
    (5, 2, 4)
    >>> fnp.matmul(mx.ones(3), mx.ones(3)).item()
    3.0
    """
    if not isinstance(a, _ARRAYS):
        a = _creation.asarray(a)
    if not isinstance(b, _ARRAYS):
        b = _creation.asarray(b)
    try:
        return lax.matmul(a, b)
    except ValueError:
        # A clear error when the shapes are at fault.
        matmul_subscripts(tuple(a.shape), tuple(b.shape))
        raise


# ----------------------------------------------------------------------------
# Contractions built on matmul and einsum
# ----------------------------------------------------------------------------


def _axis(axis: int, ndim: int, fname: str, name: str) -> int:
    if not isinstance(axis, int):
        raise TypeError(f"{fname}: {name} must hold ints, got {axis!r}")
    return check_axis(axis, ndim, fname, within=name, of=f"ndim {ndim}")


@functools.lru_cache(maxsize=4096)
def _tensordot_spec(sa: Shape, sb: Shape, axes_a: tuple[int, ...],
                    axes_b: tuple[int, ...]) -> str:
    if len(axes_a) != len(axes_b):
        raise ValueError(
            f"tensordot: axes must pair up, got {len(axes_a)} axes for a and "
            f"{len(axes_b)} for b")
    ax_a = [_axis(x, len(sa), "tensordot", "axes for a") for x in axes_a]
    ax_b = [_axis(x, len(sb), "tensordot", "axes for b") for x in axes_b]
    for name, ax in (("a", ax_a), ("b", ax_b)):
        if len(set(ax)) != len(ax):
            raise ValueError(f"tensordot: repeated axis in the axes for {name}: {ax}")
    for x, y in zip(ax_a, ax_b):
        if sa[x] != sb[y]:
            raise ValueError(
                f"tensordot: shape mismatch: axis {x} of a {sa} has size {sa[x]} but "
                f"axis {y} of b {sb} has size {sb[y]}")
    la = [("c", ax_a.index(p)) if p in ax_a else ("a", p) for p in range(len(sa))]
    lb = [("c", ax_b.index(p)) if p in ax_b else ("b", p) for p in range(len(sb))]
    out = [x for x in la if x[0] == "a"] + [x for x in lb if x[0] == "b"]
    return canonical_subscripts([la, lb], out)


def tensordot(a: Any, b: Any, axes: int | Sequence = 2) -> Any:
    """Sum products over ``axes``, as ``numpy.tensordot``.

    ``axes`` is an int ``N`` (the last ``N`` axes of ``a`` with the first
    ``N`` of ``b``) or a pair ``(axes_a, axes_b)`` of ints or sequences.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.tensordot(mx.ones((2, 3, 4)), mx.ones((3, 4, 5))).shape
    (2, 5)
    >>> fnp.tensordot(mx.ones((2, 3)), mx.ones((3, 2)), axes=([0, 1], [1, 0])).item()
    6.0
    """
    a, b = _creation.asarray(a), _creation.asarray(b)
    sa, sb = tuple(a.shape), tuple(b.shape)
    if isinstance(axes, int):
        if not 0 <= axes <= min(len(sa), len(sb)):
            raise ValueError(
                f"tensordot: axes={axes} must be between 0 and the smaller ndim of a {sa} "
                f"and b {sb}")
        axes_a, axes_b = tuple(range(len(sa) - axes, len(sa))), tuple(range(axes))
    else:
        try:
            if isinstance(axes, str):
                raise TypeError
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise TypeError(
                f"tensordot: axes must be an int or a pair of sequences of ints, got {axes!r}"
            ) from None
        axes_a = (axes_a,) if isinstance(axes_a, int) else tuple(axes_a)
        axes_b = (axes_b,) if isinstance(axes_b, int) else tuple(axes_b)
    return lax.einsum(_tensordot_spec(sa, sb, axes_a, axes_b), a, b)


def dot(a: Any, b: Any) -> Any:
    """Dot product, as ``numpy.dot``: a product for scalars, a matrix product
    for 1-d and 2-d operands, and over the last axis of ``a`` and the
    second-to-last of ``b`` in general.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.dot(mx.ones((2, 3)), mx.ones((4, 3, 5))).shape
    (2, 4, 5)
    """
    a, b = _creation.asarray(a), _creation.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _elementwise.multiply(a, b)
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != k_b:
        raise ValueError(
            f"dot: shapes {tuple(a.shape)} and {tuple(b.shape)} are not aligned: "
            f"{a.shape[-1]} (last dimension of a) != {k_b} "
            f"({'only' if b.ndim == 1 else 'second-to-last'} dimension of b)")
    if a.ndim == 1 or b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


def _flat(x: Any) -> Any:
    return x if x.ndim == 1 else _shape.reshape(x, (-1,))


def vdot(a: Any, b: Any) -> Any:
    """Dot product of the flattened arrays, as ``numpy.vdot`` (real arrays).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.vdot(mx.ones((2, 3)), mx.ones(6)).item()
    6.0
    """
    a, b = _creation.asarray(a), _creation.asarray(b)
    if a.size != b.size:
        raise ValueError(
            f"vdot: a {tuple(a.shape)} and b {tuple(b.shape)} must have the same number of "
            f"elements, got {a.size} and {b.size}")
    return matmul(_flat(a), _flat(b))


def inner(a: Any, b: Any) -> Any:
    """Inner product over the last axes, as ``numpy.inner``: the result has
    shape ``a.shape[:-1] + b.shape[:-1]``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.inner(mx.ones((2, 3)), mx.ones((4, 3))).shape
    (2, 4)
    """
    a, b = _creation.asarray(a), _creation.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _elementwise.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"inner: the last dimensions of a {tuple(a.shape)} and b {tuple(b.shape)} "
            "must match")
    if b.ndim == 1:
        return matmul(a, b)
    if a.ndim == 1:
        return matmul(b, a)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a: Any, b: Any) -> Any:
    """Outer product of the flattened arrays, as ``numpy.outer``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.outer(mx.array([1.0, 2.0]), mx.array([1.0, 10.0, 100.0])).shape
    (2, 3)
    """
    a, b = _creation.asarray(a), _creation.asarray(b)
    return lax.einsum("a,b->ab", _flat(a), _flat(b))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross products of the 2- or 3-vectors along ``axisa`` of ``a`` and
    ``axisb`` of ``b`` (the other dimensions broadcast), as ``numpy.cross``:
    a 2-vector has a zero third component, and two 2-vectors give the
    scalar z-component. The result's vectors lie along ``axisc``; ``axis``,
    when given, sets all three.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.cross(mx.array([1.0, 0.0, 0.0]), mx.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    >>> fnp.cross(mx.array([1.0, 2.0]), mx.array([3.0, 4.0])).item()
    -2.0
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _creation.asarray(a), _creation.asarray(b)
    vecs = []
    for name, x, ax in (("a", a, axisa), ("b", b, axisb)):
        shape = aval_of(x).shape
        ax = _axis(ax, len(shape), "cross", f"axis{name}")
        if shape[ax] not in (2, 3):
            raise ValueError(f"cross: argument {name} must have 2 or 3 components along axis "
                             f"{ax}; got shape {tuple(shape)}")
        vecs.append(_shape.moveaxis(x, ax, -1))
    dtype = _creation.result_type(*vecs)
    a, b = (v if aval_of(v).dtype == dtype else lax.astype(v, dtype) for v in vecs)
    try:
        batch = tuple(mx.broadcast_shapes(tuple(aval_of(a).shape[:-1]),
                                          tuple(aval_of(b).shape[:-1])))
    except ValueError:
        raise ValueError(f"cross: the non-vector dimensions of a {aval_of(a).shape} and b "
                         f"{aval_of(b).shape} do not broadcast") from None

    def parts(x: Any) -> list[Any]:
        n = aval_of(x).shape[-1]
        x = lax.broadcast_to(x, (*batch, n))
        return [lax.squeeze(lax.static_slice(x, (*(slice(None),) * len(batch),
                                                  slice(i, i + 1))), (len(batch),))
                for i in range(n)]

    (a0, a1, *a2), (b0, b1, *b2) = parts(a), parts(b)
    z = lax.subtract(lax.multiply(a0, b1), lax.multiply(a1, b0))
    if not a2 and not b2:
        return z
    a2 = a2[0] if a2 else None
    b2 = b2[0] if b2 else None

    def times(u: Any, v: Any) -> Any:  # u * v, with None a zero component
        return 0.0 if u is None or v is None else lax.multiply(u, v)

    # (one product of each pair is nonzero: a2 or b2 exists)
    x = _elementwise.subtract(times(a1, b2), times(a2, b1))
    y = _elementwise.subtract(times(a2, b0), times(a0, b2))
    out = lax.concatenate([lax.expand_dims(c, (len(batch),)) for c in (x, y, z)], len(batch))
    return _shape.moveaxis(out, -1, _axis(axisc, len(batch) + 1, "cross", "axisc"))


def square_matrices(x: Any, fname: str, argname: str) -> Any:
    """``x`` as a floating array of square matrices (..., n, n), or an error
    naming the function and the argument."""
    x = _creation.asarray(x)
    shape, dtype = aval_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"{fname}: argument {argname} must be a square matrix or a stack of them, "
            f"shape (..., n, n); got shape {tuple(shape)}")
    if not is_floating(dtype):
        x = lax.astype(x, mx.float32)
    return x


def inexact_dtype(*xs: Any) -> mx.Dtype:
    """The common dtype of ``xs``, floating (integers and bools go to float32)."""
    dtype = _creation.result_type(*xs)
    return dtype if mx.issubdtype(dtype, mx.inexact) else mx.float32


def cast(x: Any, dtype: mx.Dtype) -> Any:
    """``x`` in ``dtype`` (itself when it already is)."""
    return x if aval_of(x).dtype == dtype else lax.astype(x, dtype)


def broadcast_batch(fname: str, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` with their batch dimensions (all but the last two)
    broadcast together."""
    sa, sb = aval_of(a).shape, aval_of(b).shape
    try:
        batch = tuple(mx.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    except ValueError:
        raise ValueError(
            f"{fname}: batch dimensions of a {tuple(sa)} and b {tuple(sb)} do not "
            "broadcast") from None
    if tuple(sa[:-2]) != batch:
        a = lax.broadcast_to(a, (*batch, *sa[-2:]))
    if tuple(sb[:-2]) != batch:
        b = lax.broadcast_to(b, (*batch, *sb[-2:]))
    return a, b
