"""Linear algebra: the matmul and einsum primitives, the primitive layer.

Two primitives carry every contraction. ``matmul`` is MLX's matmul (NumPy's
rules for 1-d operands, broadcast batch dimensions). ``einsum`` is MLX's
einsum on a canonical, fully explicit subscripts string: no ellipsis, an
explicit output, labels renamed in order of first appearance, and every
label with one size (an operand's size-1 dimension that broadcasts gets a
label of its own, which is summed away). Their strict wrappers take operands
as they are and, for ``einsum``, subscripts already in that form:
``ftorch.numpy`` parses subscripts (ellipsis, implicit output), converts operands and
lowers ``dot``, ``vdot``, ``inner``, ``outer`` and ``tensordot`` onto them.

Einsum is multilinear: its JVP is a sum of einsums, one per operand with a
tangent, and the VJP for each operand is a single einsum of the cotangent
with the other operands (identity matrices put it back on a diagonal when a
label repeats within that operand). Matmul is an einsum too, so its VJP is
the einsum VJP, which sums broadcast batch dimensions away inside the same
contraction instead of materializing them.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.einsum("ab,bc->ac", mx.ones((2, 3)), mx.ones((3, 4))).shape
(2, 4)
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import add_tangents, shape_of, tangent_to, unbroadcast
from ftorch.typing import Shape

__all__ = ["matmul", "einsum"]

LETTERS = string.ascii_letters  # the labels an einsum string can use


# ----------------------------------------------------------------------------
# Canonical subscripts (the NumPy layer builds them with these too)
# ----------------------------------------------------------------------------


def _split_spec(spec: str) -> tuple[list[str], str]:
    lhs, out = spec.split("->")
    return lhs.split(","), out


def canonical_subscripts(terms: Sequence[Sequence[Any]], out: Sequence[Any]) -> str:
    """An einsum string for terms of hashable labels, letters given by first appearance."""
    names: dict[Any, str] = {}
    for term in terms:
        for label in term:
            if label not in names:
                if len(names) == len(LETTERS):
                    raise ValueError(
                        f"einsum: the contraction needs more than {len(LETTERS)} distinct "
                        "labels (letters plus ellipsis dimensions)")
                names[label] = LETTERS[len(names)]
    lhs = ",".join("".join(names[label] for label in term) for term in terms)
    return lhs + "->" + "".join(names[label] for label in out)


@functools.lru_cache(maxsize=4096)
def _is_identity(spec: str) -> bool:
    ins, out = _split_spec(spec)
    return len(ins) == 1 and ins[0] == out


def _promoted(ops: Sequence[mx.array]) -> mx.Dtype:
    """The dtype MLX promotes the (concrete) operands to."""
    out = mx.zeros((), ops[0].dtype)
    for o in ops[1:]:
        out = mx.add(out, mx.zeros((), o.dtype))
    return out.dtype


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


einsum_p = Primitive("einsum", _einsum_impl, autocast="low")


def einsum(subscripts: str, *operands: Any) -> Any:
    """The contraction ``subscripts`` of ``operands``, in the canonical form
    (``"ab,bc->ac"``: an explicit output, no ellipsis, letters in order of
    first appearance, one size per label); an identity returns its operand.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.einsum("aa->", mx.eye(3)).item()
    3.0
    """
    if _is_identity(subscripts):
        return operands[0]
    return einsum_p.bind(*operands, subscripts=subscripts)


@einsum_p.def_jvp
def _einsum_jvp(primals, tangents, *, subscripts):
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
    fresh = iter(c for c in LETTERS if c not in spec)
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
    vjp_spec = canonical_subscripts([out, *others, *eyes], target)
    reshape = tuple(kept_shape) if len(target) < len(term) else None
    return vjp_spec, tuple(eye_sizes), reshape


def _operand_ct(ct: Any, ops: Sequence[Any], spec: str, i: int) -> Any:
    x = aval_of(ops[i])
    vjp_spec, eye_sizes, reshape = _operand_ct_plan(spec, i, x.shape)
    dtype = aval_of(ct).dtype
    eyes = [mx.eye(n, dtype=dtype) for n in eye_sizes]
    g = einsum(vjp_spec, ct, *ops[:i], *ops[i + 1:], *eyes)
    if reshape is not None:
        g = lax.broadcast_to(lax.reshape(g, reshape), x.shape)
    return g if aval_of(g).dtype == x.dtype else lax.astype(g, x.dtype)


@einsum_p.def_vjp
def _einsum_vjp(ct, out, *ops, needed, subscripts):
    return tuple(_operand_ct(ct, ops, subscripts, i) if needed[i] else None
                 for i in range(len(ops)))


@functools.lru_cache(maxsize=4096)
def _einsum_batch_spec(spec: str, dims: tuple[int | None, ...]) -> tuple[str, int]:
    """``spec`` with a fresh label for the batch axis, inserted at ``dims[i]``
    in each batched operand's term, and the output position of that label.

    The batch label goes where a tensordot keeps it (among the free labels of
    the single batched operand) so that such contractions stay tensordots;
    otherwise it leads the output."""
    ins, out = _split_spec(spec)
    fresh = next((c for c in LETTERS if c not in spec), None)
    if fresh is None:
        raise ValueError(
            f"einsum: vmap needs a label for the batch axis, but the contraction already "
            f"uses all {len(LETTERS)} labels")
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
    return canonical_subscripts(terms, out_terms), out_dim


@einsum_p.def_batch
def _einsum_batch(vals, dims, axis_size, *, subscripts):
    spec, out_dim = _einsum_batch_spec(subscripts, tuple(dims))
    return einsum_p.bind(*vals, subscripts=spec), out_dim


# ----------------------------------------------------------------------------
# matmul
# ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def matmul_subscripts(sa: Shape, sb: Shape) -> str:
    """``matmul`` of operands of shapes ``sa`` and ``sb`` as a canonical
    einsum string; raises the shape errors."""
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
    return canonical_subscripts([la, lb], lo)


def _matmul_impl(a: mx.array, b: mx.array) -> mx.array:
    try:
        return mx.matmul(a, b)
    except ValueError:
        if mx.issubdtype(_promoted((a, b)), mx.inexact):
            raise
        return _einsum_exact(matmul_subscripts(tuple(a.shape), tuple(b.shape)), a, b)


matmul_p = Primitive("matmul", _matmul_impl, autocast="low")


def matmul(a: Any, b: Any) -> Any:
    """The matrix product of arrays ``a`` and ``b`` with NumPy's rules (a 1-d
    operand is a vector, batch dimensions broadcast), in MLX's promoted dtype.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.matmul(mx.ones((5, 2, 3)), mx.ones((3, 4))).shape
    (5, 2, 4)
    """
    return matmul_p.bind(a, b)


@matmul_p.def_jvp
def _matmul_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    out = matmul(a, b)
    return out, tangent_to(add_tangents(
        None if ta is None else matmul(ta, b),
        None if tb is None else matmul(a, tb)), out)


def _swap_last(x: Any) -> Any:
    """``x`` with its last two axes swapped (its matrices transposed)."""
    n = len(shape_of(x))
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


@matmul_p.def_vjp
def _matmul_vjp(ct, out, a, b, *, needed):
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) >= 2 and len(sb) >= 2 and sa[:-2] == sb[:-2]:
        # The common case: two matmuls with transposed views, no einsum parsing.
        ct_a = lambda: matmul(ct, _swap_last(b))
        ct_b = lambda: matmul(_swap_last(a), ct)
    # Vector-matrix products (per-example gradients hit them under vmap):
    # the outer product as a matmul with an inner size of 1 batches into one
    # BLAS call, where an einsum would become a broadcast multiply.
    elif len(sa) == 1 and len(sb) == 2:
        ct_a = lambda: matmul(b, ct)
        ct_b = lambda: matmul(lax.expand_dims(a, (1,)), lax.expand_dims(ct, (0,)))
    elif len(sa) == 2 and len(sb) == 1:
        ct_a = lambda: matmul(lax.expand_dims(ct, (1,)), lax.expand_dims(b, (0,)))
        ct_b = lambda: matmul(ct, a)
    else:
        spec = matmul_subscripts(sa, sb)
        return tuple(_operand_ct(ct, (a, b), spec, i) if needed[i] else None for i in (0, 1))
    return (unbroadcast(ct_a(), a) if needed[0] else None,
            unbroadcast(ct_b(), b) if needed[1] else None)


def _move_first(x: Any, bdim: int) -> Any:
    return x if bdim == 0 else lax.moveaxis(x, bdim, 0)


def _lead_to(x: Any, bdim: int, n_lead: int) -> Any:
    """``x`` with its batch axis first and ones after it, so that it has
    ``n_lead`` leading (broadcast) axes before its per-example matrix axes."""
    x = _move_first(x, bdim)
    pad = n_lead - (len(shape_of(x)) - 2)
    if pad > 0:
        x = lax.expand_dims(x, tuple(range(1, 1 + pad)))
    return x


@matmul_p.def_batch
def _matmul_batch(vals, dims, axis_size):
    """One batched matmul: the batch axis becomes a leading broadcast axis
    where it is not one already, or a matrix axis of a 1-d operand."""
    (a, b), (da, db) = vals, dims
    ra = len(shape_of(a)) - (da is not None)
    rb = len(shape_of(b)) - (db is not None)
    if db is None:
        if ra == 1:  # rows of a matrix: (N, k) @ b
            out = matmul(_move_first(a, da), b)
            return out, 0 if rb == 1 else rb - 2
        if da <= ra - 2 and rb - 2 <= ra - 2 - da:  # a leading axis b does not reach
            return matmul(a, b), da
        return matmul(_lead_to(a, da, max(ra, rb) - 1), b), 0
    if da is None:
        if rb == 1 and ra == 2:  # rows times the transposed matrix: (N, k) @ a.T
            return matmul(_move_first(b, db), _swap_last(a)), 0
        if rb == 1:  # columns of a matrix: a @ (k, N)
            bt = b if db == 1 else lax.moveaxis(b, db, 1)
            out = matmul(a, bt)
            return out, 0 if ra == 1 else ra - 1
        if db <= rb - 2 and ra - 2 <= rb - 2 - db:
            return matmul(a, b), db
        return matmul(a, _lead_to(b, db, max(ra, rb) - 1)), 0
    if (ra >= 2 and rb >= 2 and da <= ra - 2 and db <= rb - 2
            and ra - da == rb - db):  # the batch axes already line up
        return matmul(a, b), max(ra, rb) - ra + da
    # Both batched: lead with the batch axis, 1-d operands as (N, 1, k) and
    # (N, k, 1), and drop those unit axes afterwards.
    a = _move_first(a, da)
    b = _move_first(b, db)
    if ra == 1:
        a = lax.expand_dims(a, (1,))
    if rb == 1:
        b = lax.expand_dims(b, (2,))
    n_lead = max(ra, rb, 2) - 1
    a = _lead_to(a, 0, n_lead)
    b = _lead_to(b, 0, n_lead)
    out = matmul(a, b)
    if ra == 1 or rb == 1:
        ndim = len(shape_of(out))
        out = lax.squeeze(out, tuple(ax for ax, drop in ((ndim - 2, ra == 1), (ndim - 1, rb == 1))
                                     if drop))
    return out, 0
