"""Rule cases for ``linear_solve`` (``lax.custom_linear_solve``): a solve by
factorisation, whose derivatives come from the implicit rules (in the
matrix the matvec closes over, and in the right-hand side)."""

import numpy as np
from harness import Case, floats
from hypothesis import strategies as st

import ftorch.lax as lax
import ftorch.numpy as fnp


def _well_conditioned(a):
    return a + 4.0 * np.eye(a.shape[-1])


def _system(n=3):
    return st.tuples(floats((n, n)).map(_well_conditioned), floats((n,)))


def _solve(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, lambda mv, r: fnp.linalg.solve(a, r),
                                   lambda vm, r: fnp.linalg.solve(a.T, r))


def _symmetric(a, b):
    s = a + a.T
    return lax.custom_linear_solve(lambda x: s @ x, b, lambda mv, r: fnp.linalg.solve(s, r),
                                   symmetric=True)


CASES = [
    Case("linear_solve", _solve, _system()),
    Case("linear_solve", _symmetric, _system(), name="linear_solve_symmetric"),
]
