"""Rule cases for the matrix functions (expm) and the general eigenproblem
(eig), and the public functions built on them.

``expm`` is drawn with norms up to about 5, where its Padé degree and
squaring count vary across draws (both are piecewise constant in the input,
so finite differences see the smooth function). ``eig`` computes in
complex64 whatever its input, so its cases compare against finite
differences with a wide step and loose tolerances, on matrices with
well-separated real eigenvalues (``Q diag(w) Q^-1``), through functions
symmetric in the eigenvalues (LAPACK's order is not sorted)."""

import numpy as np
from harness import Case, floats
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch.numpy as fnp
import ftorch.scipy.linalg as fsl
from ftorch.primitives import matrix_functions


@st.composite
def square(draw, max_batch=1, scale=1.5):
    n = draw(st.integers(1, 4))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=max_batch, max_side=2))
    return draw(floats((*batch, n, n), -scale, scale))


@st.composite
def diagonalizable(draw):
    """``Q diag(w) Q^-1``, ``Q`` near the identity, eigenvalues >= 0.5 apart."""
    n = draw(st.integers(1, 3))
    q = np.eye(n) + draw(floats((n, n), -0.3, 0.3))
    w = 0.7 * np.arange(n) + draw(floats((n,), 0.0, 0.1)) - 1.0
    return (q * w) @ np.linalg.inv(q)


def _eig_symmetric(w):
    """A real function of the eigenvalues, symmetric in their order."""
    return fnp.sum(fnp.real(w) ** 2 + fnp.real(w) ** 3 / 3 + fnp.imag(w) ** 2)


CASES = [
    Case("expm", matrix_functions.expm, st.tuples(square()), name="expm"),
    Case("expm", fsl.expm, st.tuples(square(scale=2.5, max_batch=0)), name="scipy.linalg.expm"),
    Case("expm", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
         st.tuples(square(max_batch=0)).flatmap(
             lambda a: st.tuples(st.just(a[0]), floats(a[0].shape, -1.0, 1.0))),
         name="scipy.linalg.expm_frechet", second_order=False),
    Case("eig", lambda a: _eig_symmetric(fnp.linalg.eigvals(a)), st.tuples(diagonalizable()),
         name="linalg.eigvals", eps=1e-3, rtol=2e-3, atol=2e-3, second_order=False),
]
