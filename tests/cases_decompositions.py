"""Rule cases for the decomposition primitives (cholesky, triangular_solve)
and their public wrappers (ftorch.numpy.linalg, ftorch.scipy.linalg), on
well-conditioned inputs: symmetric positive-definite ``M M^T + n I`` and
triangular matrices with a dominant diagonal."""

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


CASES = [
    Case("cholesky", lax.cholesky, st.tuples(spd()), name="cholesky"),
    Case("cholesky", fnp.linalg.cholesky, st.tuples(spd()), name="linalg.cholesky"),
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
]
