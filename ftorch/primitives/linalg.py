"""Linear algebra: matmul, einsum and the contractions built on them.

Two primitives carry everything. ``matmul`` is MLX's matmul (NumPy's rules
for 1-d operands, broadcast batch dimensions). ``einsum`` is MLX's einsum on
a canonical, fully explicit subscripts string: no ellipsis, an explicit
output, labels renamed in order of first appearance, and every label with
one size (an operand's size-1 dimension that broadcasts gets a label of its
own, which is summed away). ``dot``, ``vdot``, ``inner``, ``outer`` and
``tensordot`` lower to one of the two.

Einsum is multilinear: its JVP is a sum of einsums, one per operand with a
tangent, and the VJP for each operand is a single einsum of the cotangent
with the other operands (identity matrices put it back on a diagonal when a
label repeats within that operand). Matmul is an einsum too, so its VJP is
the einsum VJP, which sums broadcast batch dimensions away inside the same
contraction instead of materializing them.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from ftorch import numpy as fnp
from ftorch.core import Primitive, Tracer, aval_of, is_floating
from ftorch.primitives._rules import add_tangents, shape_of, tangent_to, unbroadcast

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum"]

_LETTERS = string.ascii_letters
_ARRAYS = (mx.array, Tracer)
Shape = tuple[int, ...]


def _split_spec(spec: str) -> tuple[list[str], str]:
    lhs, out = spec.split("->")
    return lhs.split(","), out


def _canonical(terms: Sequence[Sequence[Any]], out: Sequence[Any]) -> str:
    """An einsum string for terms of hashable labels, letters given by first appearance."""
    names: dict[Any, str] = {}
    for term in terms:
        for label in term:
            if label not in names:
                if len(names) == len(_LETTERS):
                    raise ValueError(
                        f"einsum: the contraction needs more than {len(_LETTERS)} distinct "
                        "labels (letters plus ellipsis dimensions)")
                names[label] = _LETTERS[len(names)]
    lhs = ",".join("".join(names[label] for label in term) for term in terms)
    return lhs + "->" + "".join(names[label] for label in out)


@functools.lru_cache(maxsize=4096)
def _is_identity(spec: str) -> bool:
    ins, out = _split_spec(spec)
    return len(ins) == 1 and ins[0] == out


def _promoted(ops: Sequence[Any]) -> mx.Dtype:
    return fnp.result_type(*ops)


def _einsum_exact(spec: str, *ops: mx.array) -> mx.array:
    """Einsum by broadcasting and summing, for dtypes MLX's matmul refuses (integers)."""
    ins, out = _split_spec(spec)
    labels = list(dict.fromkeys("".join(ins)))
    prod = None
    for term, x in zip(ins, ops):
        term = list(term)
        while len(set(term)) < len(term):  # repeated label: take the diagonal
            p = next(k for k, lab in enumerate(term) if term.count(lab) > 1)
            q = term.index(term[p], p + 1)
            x = mx.diagonal(x, 0, p, q)
            term = [lab for k, lab in enumerate(term) if k not in (p, q)] + [term[p]]
        order = sorted(range(len(term)), key=lambda k: labels.index(term[k]))
        x = mx.transpose(x, order)
        present = {term[k]: d for k, d in zip(order, x.shape)}
        x = mx.reshape(x, [present.get(lab, 1) for lab in labels])
        prod = x if prod is None else prod * x
    summed = [k for k, lab in enumerate(labels) if lab not in out]
    if summed:
        prod = mx.sum(prod, axis=summed)
    kept = [lab for lab in labels if lab in out]
    return mx.transpose(prod, [kept.index(lab) for lab in out]).astype(_promoted(ops))


# ----------------------------------------------------------------------------
# einsum
# ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _tensordot_axes(spec: str) -> tuple[list[int], list[int]] | None:
    """The axes when ``spec`` is exactly a tensordot (two operands, no repeated
    labels, output = a's free labels then b's), which MLX runs with less
    overhead than an einsum; ``None`` otherwise."""
    ins, out = _split_spec(spec)
    if len(ins) != 2:
        return None
    a, b = ins
    shared = [c for c in a if c in b]
    if (len(set(a)) < len(a) or len(set(b)) < len(b) or any(c in out for c in shared)
            or out != "".join(c for c in a + b if c not in shared)):
        return None
    return [a.index(c) for c in shared], [b.index(c) for c in shared]


def _einsum_impl(*ops: mx.array, subscripts: str) -> mx.array:
    if any(o.size == 0 for o in ops):
        # Sums over nothing are 0. (MLX's float64 einsum of an empty operand
        # can hang, e.g. "i->" on shape (0,).)
        ins, out = _split_spec(subscripts)
        sizes = {}
        for term, o in zip(ins, ops):
            for label, d in zip(term, o.shape):
                sizes[label] = max(sizes.get(label, d), d) if d != 0 else 0
        return mx.zeros([sizes[label] for label in out], _promoted(ops))
    try:
        axes = _tensordot_axes(subscripts)
        if axes is not None:
            return mx.tensordot(ops[0], ops[1], axes)
        return mx.einsum(subscripts, *ops)
    except ValueError:
        if mx.issubdtype(_promoted(ops), mx.inexact):
            raise
        return _einsum_exact(subscripts, *ops)


einsum_p = Primitive("einsum", _einsum_impl)


def _bind_einsum(spec: str, *ops: Any) -> Any:
    return ops[0] if _is_identity(spec) else einsum_p.bind(*ops, subscripts=spec)


@einsum_p.def_jvp
def _einsum_jvp(primals, tangents, subscripts):
    out = einsum_p.bind(*primals, subscripts=subscripts)
    t_out = None
    for i, t in enumerate(tangents):
        if t is not None:
            ops = list(primals)
            ops[i] = t
            t_out = add_tangents(t_out, einsum_p.bind(*ops, subscripts=subscripts))
    return out, tangent_to(t_out, out)


@functools.lru_cache(maxsize=4096)
def _operand_ct_plan(spec: str, i: int, shape: Shape) -> tuple[str, tuple[int, ...], Shape | None]:
    """How to get operand ``i``'s cotangent: an einsum of the output cotangent,
    the other operands and identity matrices of the given sizes (one per
    repeat of a label within the operand), then, when some of its labels
    appear nowhere else, a reshape to the returned shape and a broadcast."""
    ins, out = _split_spec(spec)
    term, others = ins[i], ins[:i] + ins[i + 1:]
    available = set(out).union(*others)
    fresh = iter(c for c in _LETTERS if c not in spec)
    target, eyes, eye_sizes, kept_shape = [], [], [], []
    for p, label in enumerate(term):
        if term.index(label) < p:  # a repeat: tie it to the first occurrence
            new = next(fresh)
            eyes.append(label + new)
            eye_sizes.append(shape[p])
            target.append(new)
            kept_shape.append(shape[p])
        elif label in available or term.count(label) > 1:
            target.append(label)
            kept_shape.append(shape[p])
        else:  # summed in this operand only: the cotangent is constant along it
            kept_shape.append(1)
    vjp_spec = _canonical([out, *others, *eyes], target)
    reshape = tuple(kept_shape) if len(target) < len(term) else None
    return vjp_spec, tuple(eye_sizes), reshape


def _operand_ct(ct: Any, ops: Sequence[Any], spec: str, i: int) -> Any:
    x = aval_of(ops[i])
    if not is_floating(x.dtype):
        return None
    vjp_spec, eye_sizes, reshape = _operand_ct_plan(spec, i, x.shape)
    dtype = aval_of(ct).dtype
    eyes = [mx.eye(n, dtype=dtype) for n in eye_sizes]
    g = _bind_einsum(vjp_spec, ct, *ops[:i], *ops[i + 1:], *eyes)
    if reshape is not None:
        g = fnp.broadcast_to(fnp.reshape(g, reshape), x.shape)
    return fnp.astype(g, x.dtype)


@einsum_p.def_vjp
def _einsum_vjp(ct, out, *ops, subscripts, needed):
    return tuple(_operand_ct(ct, ops, subscripts, i) if needed[i] else None
                 for i in range(len(ops)))


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
            if c not in _LETTERS:
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
    return _canonical(keyed, out_keys)


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
    ops = [o if isinstance(o, _ARRAYS) else fnp.asarray(o) for o in operands]
    spec = _einsum_spec(subscripts, tuple(tuple(o.shape) for o in ops))
    return _bind_einsum(spec, *ops)


# ----------------------------------------------------------------------------
# matmul
# ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _matmul_spec(sa: Shape, sb: Shape) -> str:
    """``matmul`` as a canonical einsum string; raises the shape errors."""
    for name, s in (("a", sa), ("b", sb)):
        if not s:
            raise ValueError(
                f"matmul: operand {name} is 0-dimensional; matmul needs arrays with at least "
                "one dimension (use multiply for scalars)")
    k_a, k_b = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise ValueError(
            f"matmul: inner dimensions do not match: a has shape {sa} (contracting its "
            f"last dimension, size {k_a}) and b has shape {sb} (contracting its "
            f"{'only' if len(sb) == 1 else 'second-to-last'} dimension, size {k_b})")
    ba, bb = sa[:-2], sb[:-2]
    n = max(len(ba), len(bb))
    la, lb, lo = [], [], []
    for j in range(n):  # batch dimensions, aligned on the right
        da = ba[j - n + len(ba)] if j >= n - len(ba) else None
        db = bb[j - n + len(bb)] if j >= n - len(bb) else None
        if da is not None and db is not None and 1 not in (da, db) and da != db:
            raise ValueError(
                f"matmul: batch dimensions of a {sa} and b {sb} do not broadcast "
                f"({da} vs {db})")
        size = max(d for d in (da, db) if d is not None)
        if da is not None:
            la.append(("a", j) if da == 1 and size != 1 else j)
        if db is not None:
            lb.append(("b", j) if db == 1 and size != 1 else j)
        lo.append(j)
    if len(sa) > 1:
        la.append("m")
        lo.append("m")
    la.append("k")
    lb.append("k")
    if len(sb) > 1:
        lb.append("n")
        lo.append("n")
    return _canonical([la, lb], lo)


def _matmul_impl(a: mx.array, b: mx.array) -> mx.array:
    try:
        return mx.matmul(a, b)
    except ValueError:
        if mx.issubdtype(_promoted((a, b)), mx.inexact):
            raise
        return _einsum_exact(_matmul_spec(tuple(a.shape), tuple(b.shape)), a, b)


matmul_p = Primitive("matmul", _matmul_impl)


@matmul_p.def_jvp
def _matmul_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    out = matmul_p.bind(a, b)
    return out, tangent_to(add_tangents(
        None if ta is None else matmul_p.bind(ta, b),
        None if tb is None else matmul_p.bind(a, tb)), out)


@matmul_p.def_vjp
def _matmul_vjp(ct, out, a, b, *, needed):
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) >= 2 and len(sb) >= 2 and sa[:-2] == sb[:-2]:
        # The common case: two matmuls with transposed views, no einsum parsing.
        ct_a = lambda: matmul_p.bind(ct, fnp.swapaxes(b, -1, -2))
        ct_b = lambda: matmul_p.bind(fnp.swapaxes(a, -1, -2), ct)
    # Vector-matrix products (per-example gradients hit them under vmap):
    # the outer product as a matmul with an inner size of 1 batches into one
    # BLAS call, where an einsum would become a broadcast multiply.
    elif len(sa) == 1 and len(sb) == 2:
        ct_a = lambda: matmul_p.bind(b, ct)
        ct_b = lambda: matmul_p.bind(fnp.expand_dims(a, 1), fnp.expand_dims(ct, 0))
    elif len(sa) == 2 and len(sb) == 1:
        ct_a = lambda: matmul_p.bind(fnp.expand_dims(ct, 1), fnp.expand_dims(b, 0))
        ct_b = lambda: matmul_p.bind(ct, a)
    else:
        spec = _matmul_spec(sa, sb)
        return tuple(_operand_ct(ct, (a, b), spec, i) if needed[i] else None for i in (0, 1))
    return (unbroadcast(ct_a(), a) if needed[0] else None,
            unbroadcast(ct_b(), b) if needed[1] else None)


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
        a = fnp.asarray(a)
    if not isinstance(b, _ARRAYS):
        b = fnp.asarray(b)
    try:
        return matmul_p.bind(a, b)
    except ValueError:
        _matmul_spec(tuple(a.shape), tuple(b.shape))  # a clear error when shapes are at fault
        raise


# ----------------------------------------------------------------------------
# Contractions built on matmul and einsum
# ----------------------------------------------------------------------------


def _axis(axis: int, ndim: int, fname: str, name: str) -> int:
    if not isinstance(axis, int):
        raise TypeError(f"{fname}: {name} must hold ints, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} in {name} is out of range for ndim {ndim}")
    return axis % ndim


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
    return _canonical([la, lb], out)


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
    a, b = fnp.asarray(a), fnp.asarray(b)
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
    return _bind_einsum(_tensordot_spec(sa, sb, axes_a, axes_b), a, b)


def dot(a: Any, b: Any) -> Any:
    """Dot product, as ``numpy.dot``: a product for scalars, a matrix product
    for 1-d and 2-d operands, and over the last axis of ``a`` and the
    second-to-last of ``b`` in general.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.dot(mx.ones((2, 3)), mx.ones((4, 3, 5))).shape
    (2, 4, 5)
    """
    a, b = fnp.asarray(a), fnp.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return fnp.multiply(a, b)
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
    return x if x.ndim == 1 else fnp.reshape(x, (-1,))


def vdot(a: Any, b: Any) -> Any:
    """Dot product of the flattened arrays, as ``numpy.vdot`` (real arrays).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.vdot(mx.ones((2, 3)), mx.ones(6)).item()
    6.0
    """
    a, b = fnp.asarray(a), fnp.asarray(b)
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
    a, b = fnp.asarray(a), fnp.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return fnp.multiply(a, b)
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
    a, b = fnp.asarray(a), fnp.asarray(b)
    return einsum_p.bind(_flat(a), _flat(b), subscripts="a,b->ab")


# ----------------------------------------------------------------------------
# Batching rules
# ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _einsum_batch_spec(spec: str, dims: tuple[int | None, ...]) -> tuple[str, int]:
    """``spec`` with a fresh label for the batch axis, inserted at ``dims[i]``
    in each batched operand's term, and the output position of that label.

    The batch label goes where a tensordot keeps it (among the free labels of
    the single batched operand) so that such contractions stay tensordots;
    otherwise it leads the output."""
    ins, out = _split_spec(spec)
    fresh = next((c for c in _LETTERS if c not in spec), None)
    if fresh is None:
        raise ValueError(
            f"einsum: vmap needs a label for the batch axis, but the contraction already "
            f"uses all {len(_LETTERS)} labels")
    terms = [term if d is None else term[:d] + fresh + term[d:] for term, d in zip(ins, dims)]
    out_dim = 0
    batched = [i for i, d in enumerate(dims) if d is not None]
    if _tensordot_axes(spec) is not None and len(batched) == 1:
        i = batched[0]
        a_free = [c for c in ins[0] if c in out]
        if i == 0:
            out_dim = sum(c in out for c in ins[0][:dims[0]])
        else:
            out_dim = len(a_free) + sum(c in out for c in ins[1][:dims[1]])
    out_terms = out[:out_dim] + fresh + out[out_dim:]
    return _canonical(terms, out_terms), out_dim


def _einsum_batch(vals, dims, axis_size, subscripts):
    spec, out_dim = _einsum_batch_spec(subscripts, tuple(dims))
    return einsum_p.bind(*vals, subscripts=spec), out_dim


einsum_p.batch = _einsum_batch


def _lead_to(x: Any, bdim: int, n_lead: int) -> Any:
    """``x`` with its batch axis first and ones after it, so that it has
    ``n_lead`` leading (broadcast) axes before its per-example matrix axes."""
    x = _move_first(x, bdim)
    pad = n_lead - (len(shape_of(x)) - 2)
    if pad > 0:
        x = fnp.expand_dims(x, tuple(range(1, 1 + pad)))
    return x


def _move_first(x: Any, bdim: int) -> Any:
    return x if bdim == 0 else fnp.moveaxis(x, bdim, 0)


def _matmul_batch(vals, dims, axis_size):
    """One batched matmul: the batch axis becomes a leading broadcast axis
    where it is not one already, or a matrix axis of a 1-d operand."""
    (a, b), (da, db) = vals, dims
    ra = len(shape_of(a)) - (da is not None)
    rb = len(shape_of(b)) - (db is not None)
    if db is None:
        if ra == 1:  # rows of a matrix: (N, k) @ b
            out = matmul_p.bind(_move_first(a, da), b)
            return out, 0 if rb == 1 else rb - 2
        if da <= ra - 2 and rb - 2 <= ra - 2 - da:  # a leading axis b does not reach
            return matmul_p.bind(a, b), da
        return matmul_p.bind(_lead_to(a, da, max(ra, rb) - 1), b), 0
    if da is None:
        if rb == 1 and ra == 2:  # rows times the transposed matrix: (N, k) @ a.T
            return matmul_p.bind(_move_first(b, db), fnp.swapaxes(a, -1, -2)), 0
        if rb == 1:  # columns of a matrix: a @ (k, N)
            bt = b if db == 1 else fnp.moveaxis(b, db, 1)
            out = matmul_p.bind(a, bt)
            return out, 0 if ra == 1 else ra - 1
        if db <= rb - 2 and ra - 2 <= rb - 2 - db:
            return matmul_p.bind(a, b), db
        return matmul_p.bind(a, _lead_to(b, db, max(ra, rb) - 1)), 0
    if (ra >= 2 and rb >= 2 and da <= ra - 2 and db <= rb - 2
            and ra - da == rb - db):  # the batch axes already line up
        return matmul_p.bind(a, b), max(ra, rb) - ra + da
    # Both batched: lead with the batch axis, 1-d operands as (N, 1, k) and
    # (N, k, 1), and drop those unit axes afterwards.
    a = _move_first(a, da)
    b = _move_first(b, db)
    if ra == 1:
        a = fnp.expand_dims(a, 1)
    if rb == 1:
        b = fnp.expand_dims(b, 2)
    n_lead = max(ra, rb, 2) - 1
    a = _lead_to(a, 0, n_lead)
    b = _lead_to(b, 0, n_lead)
    out = matmul_p.bind(a, b)
    if ra == 1 or rb == 1:
        ndim = len(shape_of(out))
        out = fnp.squeeze(out, tuple(ax for ax, drop in ((ndim - 2, ra == 1), (ndim - 1, rb == 1))
                                     if drop))
    return out, 0


matmul_p.batch = _matmul_batch
