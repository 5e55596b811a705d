"""Rule cases for the linear-algebra primitives (matmul, einsum) and the
contractions lowered onto them."""

import mlx.core as mx
from harness import Case, floats
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch.numpy as fnp
from ftorch.numpy._linalg import _einsum_spec
from ftorch.primitives.linalg import _is_identity

LETTERS = "abcde"


def _sides(lo=1, hi=4):
    return st.integers(lo, hi)


@st.composite
def matmul_operands(draw, a_vec=None, b_vec=None, batched=False):
    """Operands of a matmul: 1-d or (batch..., m, k) @ 1-d or (batch..., k, n);
    with ``batched`` the batch shapes broadcast against each other."""
    m, k, n = draw(_sides()), draw(_sides()), draw(_sides())
    a_vec = draw(st.booleans()) if a_vec is None else a_vec
    b_vec = draw(st.booleans()) if b_vec is None else b_vec
    ba, bb = (), ()
    if batched:
        ba, bb = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=3, max_side=3)).input_shapes
    sa = (k,) if a_vec else (*ba, m, k)
    sb = (k,) if b_vec else (*bb, k, n)
    return draw(floats(sa)), draw(floats(sb))


def _terms(subscripts):
    return subscripts.split("->")[0].split(",")


@st.composite
def einsum_operands(draw, subscripts, ones=False):
    """Operands for ``subscripts``: one drawn size per label, broadcastable
    shapes for the ellipses; with ``ones`` some dimensions drop to size 1
    (einsum broadcasts them)."""
    terms = _terms(subscripts)
    sizes = {c: draw(_sides()) for c in sorted(set("".join(terms)) - set(".,"))}
    n_ell = sum("..." in t for t in terms)
    ell = iter(draw(hnp.mutually_broadcastable_shapes(
        num_shapes=max(n_ell, 1), min_dims=0, max_dims=2, max_side=3)).input_shapes)
    shapes = []
    for t in terms:
        pre, dots, post = t.partition("...")
        mid = next(ell) if dots else ()
        shape = [sizes[c] for c in pre] + list(mid) + [sizes[c] for c in post]
        if ones:
            shape = [1 if draw(st.booleans()) else d for d in shape]
        shapes.append(tuple(shape))
    return tuple(draw(floats(s)) for s in shapes)


@st.composite
def random_einsum(draw):
    """A drawn subscripts string (any mix of contraction, diagonal, sum,
    transpose, implicit/explicit output, ellipsis) and its operands."""
    n_ops = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from(LETTERS), max_size=3)) for _ in range(n_ops)]
    used = sorted(set().union(*terms))
    ellipsis = draw(st.booleans())
    if ellipsis:
        for t in terms:
            if draw(st.booleans()):
                t.insert(draw(st.integers(0, len(t))), "...")
    terms = ["".join(t) for t in terms]
    if draw(st.booleans()):
        out = list(draw(st.permutations(used)))[:draw(st.integers(0, len(used)))]
        if any("..." in t for t in terms):
            out.insert(draw(st.integers(0, len(out))), "...")
        subscripts = ",".join(terms) + "->" + "".join(out)
    else:
        subscripts = ",".join(terms)
    ops = draw(einsum_operands(subscripts))
    # An identity ("ab", "a...->a...") binds nothing; it is not a case of the primitive.
    assume(not _is_identity(_einsum_spec(subscripts, tuple(o.shape for o in ops))))
    return (subscripts, *ops)


@st.composite
def tensordot_operands(draw, axes):
    """Operands for ``tensordot(a, b, axes)`` with a pair of axis lists."""
    ax_a, ax_b = axes
    nd_a = draw(st.integers(max([len(ax_a)] + [x + 1 for x in ax_a]), 3))
    nd_b = draw(st.integers(max([len(ax_b)] + [x + 1 for x in ax_b]), 3))
    sa = [draw(_sides()) for _ in range(nd_a)]
    sb = [draw(_sides()) for _ in range(nd_b)]
    for x, y in zip(ax_a, ax_b):
        sb[y] = sa[x]
    return draw(floats(tuple(sa))), draw(floats(tuple(sb)))


@st.composite
def dot_nd_operands(draw):
    """Operands for ``dot`` with a 3-d ``b`` (not a matmul)."""
    k = draw(_sides())
    sa = tuple(draw(_sides()) for _ in range(draw(st.integers(1, 2)))) + (k,)
    sb = (draw(_sides()), k, draw(_sides()))
    return draw(floats(sa)), draw(floats(sb))


@st.composite
def last_axis_pair(draw, a_nd, b_nd):
    """Operands sharing their last dimension (for inner)."""
    k = draw(_sides())
    sa = tuple(draw(_sides()) for _ in range(a_nd - 1)) + (k,)
    sb = tuple(draw(_sides()) for _ in range(b_nd - 1)) + (k,)
    return draw(floats(sa)), draw(floats(sb))


def _einsum_case(subscripts, mlx=True, ones=False, name=None):
    return Case(
        "einsum", lambda *ops: fnp.einsum(subscripts, *ops), einsum_operands(subscripts, ones),
        mlx_fn=(lambda *ops: mx.einsum(subscripts, *ops)) if mlx else None,
        name=name or f"einsum[{subscripts}]")


def _tensordot_case(axes, name):
    return Case("einsum", lambda a, b: fnp.tensordot(a, b, axes),
                tensordot_operands(axes), mlx_fn=lambda a, b: mx.tensordot(a, b, axes),
                name=name)


# Plain contractions, transposes and sums: MLX differentiates these.
CONTRACTIONS = [
    "ij,jk->ik", "ij,kj->ik", "ji,jk->ki", "bij,bjk->bik", "i,i->", "i,j->ij", "ij->ji",
    "ij->", "ijk->kij", "ijk,jil->kl", "ij,jk,kl->il", "ab,bc,ca->", "...ij,...jk->...ik",
    "...i,...i->...", "ij,jk", "ba", "a,b,c", "i...->...",
]
# Repeated labels within an operand (diagonals, traces). MLX's own VJP of
# einsum is wrong for these (it returns a vector for the trace "ii"), so
# they are checked against finite differences and transposition only.
DIAGONALS = ["ii", "ii->i", "iij->j", "iji->ij", "ij,jj->ij", "ii,i->i", "iii->", "ij,ii->j"]

CASES = [
    Case("matmul", fnp.matmul, matmul_operands(a_vec=False, b_vec=False), mlx_fn=mx.matmul,
         name="matmul[2d]"),
    Case("matmul", fnp.matmul, matmul_operands(), mlx_fn=mx.matmul, name="matmul[1d]"),
    Case("matmul", fnp.matmul, matmul_operands(batched=True), mlx_fn=mx.matmul,
         name="matmul[batched]"),
    Case("matmul", fnp.dot, matmul_operands(), mlx_fn=mx.matmul, name="dot[1d/2d]"),
    Case("matmul", fnp.vdot, st.integers(1, 5).flatmap(lambda n: st.tuples(
        floats((n,)), floats((n,)))), mlx_fn=lambda a, b: mx.inner(a, b), name="vdot"),
    Case("matmul", fnp.inner, last_axis_pair(3, 1), mlx_fn=mx.inner, name="inner[nd,1d]"),
    Case("einsum", fnp.inner, last_axis_pair(2, 3), mlx_fn=mx.inner, name="inner[nd,nd]"),
    Case("einsum", fnp.outer, st.tuples(floats((3,)), floats((2, 2))), mlx_fn=mx.outer,
         name="outer"),
    Case("einsum", fnp.dot, dot_nd_operands(), name="dot[nd]"),
    _tensordot_case(([1], [0]), "tensordot[1]"),
    _tensordot_case(([1, 2], [0, 1]), "tensordot[2]"),
    _tensordot_case(([0, 2], [1, 0]), "tensordot[pairs]"),
    _tensordot_case(([], []), "tensordot[0]"),
    *[_einsum_case(s) for s in CONTRACTIONS],
    _einsum_case("ij,ij->ij", ones=True, name="einsum[broadcast ones]"),
    _einsum_case("ij,jk->ik", ones=True, name="einsum[contract ones]"),
    *[_einsum_case(s, mlx=False) for s in DIAGONALS],
    Case("einsum", lambda s, *ops: fnp.einsum(s, *ops), random_einsum(), name="einsum[drawn]"),
]
