"""Rule cases for the decomposition primitives (cholesky, triangular_solve,
lu, lu_pivots_to_permutation, solve, det) and their public wrappers
(ftorch.numpy.linalg, ftorch.scipy.linalg), on well-conditioned inputs:
symmetric positive-definite ``M M^T + n I``, triangular matrices with a
dominant diagonal, and row-permuted matrices with a dominant diagonal (so
that pivoting swaps rows, always the same way under small perturbations)."""

import numpy as np
from harness import Case, floats
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch.numpy as fnp
import ftorch.primitives as lax
import ftorch.scipy.linalg as fsl


@st.composite
def spd(draw, max_batch=2):
    """A stack of symmetric positive-definite matrices (batch..., n, n)."""
    n = draw(st.integers(1, 4))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=max_batch, max_side=3))
    m = draw(floats((*batch, n, n), -1.0, 1.0))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


@st.composite
def triangular_system(draw, left_side=True, vector=False):
    """``(a, b)``: ``a`` (batch..., m, m) with a dominant diagonal (both
    triangles filled: the solve reads one) and ``b`` (batch..., m, k), or
    (batch..., k, m) when not ``left_side``, or (batch..., m) when ``vector``."""
    m, k = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    a = draw(floats((*batch, m, m), -1.0, 1.0)) + 4.0 * np.eye(m)
    b_shape = (*batch, m) if vector else (*batch, m, k) if left_side else (*batch, k, m)
    return a, draw(floats(b_shape))


def _solve_case(left_side, lower, transpose_a, unit_diagonal):
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)
    tag = ",".join(k for k, v in params.items() if v) or "default"
    return Case("triangular_solve", lambda a, b: lax.triangular_solve(a, b, **params),
                triangular_system(left_side), name=f"triangular_solve[{tag}]")


@st.composite
def pivoted(draw, max_batch=2, square=True):
    """``P (M + (k + 1) I)`` (batch..., m, n), ``M``'s entries in [-1, 1] and
    ``k = max(m, n)``: a strictly dominant diagonal (so never singular; with
    ``4 I`` a 4x4 ``M`` of -1s off the diagonal was), rows permuted by a fixed
    permutation, so LU's pivots are clear-cut."""
    m = draw(st.integers(1, 4))
    n = m if square else draw(st.integers(1, 4))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=max_batch, max_side=3))
    a = draw(floats((*batch, m, n), -1.0, 1.0)) + (max(m, n) + 1.0) * np.eye(m, n)
    return a[..., draw(st.permutations(range(m))), :]


@st.composite
def pivoted_system(draw, vector=False):
    a = draw(pivoted())
    n, k = a.shape[-1], draw(st.integers(1, 3))
    return a, draw(floats((n,) if vector else (*a.shape[:-2], n, k)))


@st.composite
def pivots(draw):
    """LAPACK-style 0-based pivots (batch..., k) for m rows: pivots[i] in [i, m)."""
    m = draw(st.integers(1, 5))
    k = draw(st.integers(1, m))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    u = draw(hnp.arrays(np.float64, (*batch, k), elements=st.floats(0, 0.999)))
    piv = (np.arange(k) + np.floor(u * (m - np.arange(k)))).astype(np.int32)
    return piv, m


CASES = [
    Case("cholesky", lax.cholesky, st.tuples(spd()), name="cholesky"),
    Case("cholesky", fnp.linalg.cholesky, st.tuples(spd()), name="linalg.cholesky"),
    *[Case("triangular_inverse",
           lambda a, lower=lower, unit=unit: lax.triangular_inverse(a, lower=lower,
                                                                    unit_diagonal=unit),
           triangular_system().map(lambda ab: (ab[0],)),
           name=f"triangular_inverse[lower={lower},unit={unit}]")
      for lower, unit in [(True, False), (False, False), (True, True)]],
    *[_solve_case(*p) for p in [
        (True, True, False, False), (True, False, True, False), (True, True, True, True),
        (False, True, False, False), (False, False, True, False), (False, False, False, True),
    ]],
    Case("triangular_solve", lambda a, b: fsl.solve_triangular(a, b, lower=True),
         triangular_system(vector=True), name="solve_triangular[vector]"),
    Case("triangular_solve", lambda a, b: fsl.solve_triangular(a, b, trans=1),
         triangular_system(), name="solve_triangular[trans]"),
    Case("triangular_solve", lambda a, b: fsl.cho_solve((fnp.linalg.cholesky(a), True), b),
         st.tuples(spd(max_batch=0), st.integers(1, 4)).flatmap(
             lambda ak: st.tuples(st.just(ak[0]), floats((ak[0].shape[-1], ak[1])))),
         name="cho_solve"),
    Case("lu", lax.lu, st.tuples(pivoted()), name="lu"),
    Case("lu", lax.lu, st.tuples(pivoted(max_batch=1, square=False)), name="lu[rectangular]"),
    Case("lu_pivots_to_permutation", lambda p, m: lax.lu_pivots_to_permutation(p, m), pivots(),
         name="lu_pivots_to_permutation"),
    Case("solve", lax.solve, pivoted_system(), name="solve"),
    Case("solve", fnp.linalg.solve, pivoted_system(vector=True), name="linalg.solve[vector]"),
    Case("solve", fnp.linalg.inv, st.tuples(pivoted()), name="linalg.inv"),
    Case("det", lax.det, st.tuples(pivoted()), name="det"),
    Case("det", fnp.linalg.det, st.tuples(pivoted(max_batch=1)), name="linalg.det"),
    Case("lu", lambda a: fnp.linalg.slogdet(a).logabsdet, st.tuples(pivoted()),
         name="linalg.slogdet"),
    Case("lu", lambda a: fsl.lu(a), st.tuples(pivoted(max_batch=1, square=False)),
         name="scipy.lu"),
    Case("lu", lambda a: fsl.lu(a, permute_l=True)[0], st.tuples(pivoted(max_batch=0)),
         name="scipy.lu[permute_l]"),
    Case("triangular_solve", lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=1),
         pivoted_system(), name="lu_solve[trans]"),
    Case("cholesky", lambda a, b: fsl.solve(a, b, assume_a="pos"),
         st.tuples(spd(max_batch=0), st.integers(1, 3)).flatmap(
             lambda ak: st.tuples(st.just(ak[0]), floats((ak[0].shape[-1], ak[1])))),
         name="scipy.solve[pos]"),
]
