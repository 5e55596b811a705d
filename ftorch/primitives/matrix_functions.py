"""Matrix functions and the general eigenproblem: the ``expm`` and ``eig``
primitives, the primitive layer.

``expm(a, max_squarings)`` is the matrix exponential of the square matrices
``a`` (..., n, n) by scaling and squaring with a diagonal Padé approximant
(Higham, "The scaling and squaring method for the matrix exponential
revisited", 2005): each matrix is scaled by ``2^-s`` until its 1-norm is at
most the largest degree's threshold, the lowest degree whose threshold
covers every scaled matrix of the batch is evaluated (``r = q^-1 p`` with
``p = V + U``, ``q = V - U``, ``U`` and ``V`` its odd and even parts), and
each result is squared back ``s`` times. float32 uses the degrees 3, 5 and
7, float64 also 9 and 13, with the thresholds of that paper for the unit
roundoff of each. A matrix that needs more than ``max_squarings``
squarings (or holds a NaN or an infinity) gives NaNs, as JAX's.

The impl reads the number of squarings on the host, so under ``jit`` the
graph is split at it (``needs_host``). The matrix products run on the
default device (float64 on the CPU stream, where MLX has it), the Padé
solve on the CPU stream (LAPACK).

Derivatives: the JVP is the Fréchet derivative ``L(A, dA)``, the top-right
block of ``expm([[A, dA], [0, A]])`` (Najfeld and Havel's block form, so it
is itself differentiable and batchable), with ``dA`` scaled to unit size
for the block's exponential and scaled back. The VJP is the transpose
identity ``<G, L(A, E)> = <L(A^T, G), E>``: ``A_bar = L(A^T, G)``.

``eig(a, vectors)`` is LAPACK's general eigensolver (MLX, CPU stream only):
complex64 eigenvalues and eigenvectors of real matrices. The eigenvalues'
derivative is ``dw = diag(V^-1 dA V)`` (distinct eigenvalues), with the
complex inverse computed as a real system of twice the size; eigenvectors
have no derivative here (JAX's is off by default too).

>>> import mlx.core as mx
>>> from ftorch.primitives import matrix_functions
>>> matrix_functions.expm(mx.array([[0.0, 1.0], [0.0, 0.0]])).tolist()
[[1.0, 1.0], [0.0, 1.0]]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, ShapeDtypeStruct, aval_of
from ftorch.primitives._rules import move_bdim, mT, shape_of
from ftorch.primitives.decompositions import _solve_impl

__all__ = ["expm", "eig"]

# Higham (2005), Table 2.3 and its single-precision analogue: the largest
# 1-norm at which the [m/m] Padé approximant is accurate to the unit roundoff.
_THETAS = {
    mx.float32: ((3, 4.258730016922831e-1), (5, 1.880152677804762e0),
                 (7, 3.925724783138660e0)),
    mx.float64: ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
                 (7, 9.504178996162932e-1), (9, 2.097847961257068e0),
                 (13, 5.371920351148152e0)),
}


def _pade_coefficients(m: int) -> list[float]:
    """``b_j`` of the [m/m] Padé approximant of ``exp``: ``p(x) = sum b_j x^j``."""
    f = math.factorial
    return [f(2 * m - j) * f(m) / (f(2 * m) * f(j) * f(m - j)) for j in range(m + 1)]


def _pade(a: mx.array, m: int, stream: Any) -> mx.array:
    """The [m/m] Padé approximant of ``exp(a)`` (m odd)."""
    b = _pade_coefficients(m)
    eye = mx.eye(a.shape[-1], dtype=a.dtype)
    a2 = mx.matmul(a, a, stream=stream)
    power = eye  # a^(2k), from k = 0
    odd, even = b[1] * eye, b[0] * eye
    for k in range(1, (m - 1) // 2 + 1):
        power = mx.matmul(power, a2, stream=stream)
        odd, even = odd + b[2 * k + 1] * power, even + b[2 * k] * power
    u = mx.matmul(a, odd, stream=stream)
    return _solve_impl(even - u, even + u)


def _expm_impl(a: mx.array, *, max_squarings: int) -> mx.array:
    if a.size == 0:
        return mx.zeros(a.shape, a.dtype)
    stream = mx.cpu if a.dtype == mx.float64 else mx.default_stream(mx.default_device())
    degrees = _THETAS[a.dtype]
    norms = mx.max(mx.sum(mx.abs(a), axis=-2), axis=-1)  # 1-norms, (...)
    squarings = mx.maximum(mx.ceil(mx.log2(norms / degrees[-1][1])), 0)
    finite = mx.isfinite(squarings)
    squarings = mx.where(finite, squarings, max_squarings + 1)
    scale = mx.power(2.0, -mx.minimum(squarings, max_squarings)).astype(a.dtype)
    scaled = a * scale[..., None, None]
    largest = mx.max(mx.where(finite, norms * mx.power(2.0, -squarings), 0)).item()
    degree = next((m for m, theta in degrees if largest <= theta), degrees[-1][0])
    r = _pade(scaled, degree, stream)
    for i in range(int(min(mx.max(squarings).item(), max_squarings))):
        r = mx.where((squarings > i)[..., None, None], mx.matmul(r, r, stream=stream), r)
    return mx.where((squarings > max_squarings)[..., None, None], mx.array(math.nan, a.dtype), r)


expm_p = Primitive("expm", _expm_impl, needs_host=True, autocast="float32")
expm_p.def_abstract_eval(lambda a, **_: ShapeDtypeStruct(tuple(a.shape), a.dtype))


def expm(a: Any, *, max_squarings: int = 16) -> Any:
    """The matrix exponentials of the square float32 or float64 matrices
    ``a`` (..., n, n); NaN where more than ``max_squarings`` squarings
    would be needed.

    >>> import mlx.core as mx
    >>> from ftorch.primitives import matrix_functions
    >>> round(matrix_functions.expm(mx.array([[1.0]])).item(), 5)
    2.71828
    """
    return expm_p.bind(a, max_squarings=max_squarings)


def expm_frechet(a: Any, e: Any, *, max_squarings: int = 16) -> Any:
    """The Fréchet derivative ``L(a, e)`` of the matrix exponential at
    ``a`` in the direction ``e`` (both (..., n, n)): the top-right block of
    ``expm([[a, e], [0, a]])``, with ``e`` scaled to unit size first so that
    the block's norm stays that of ``a``.

    >>> import mlx.core as mx
    >>> from ftorch.primitives import matrix_functions
    >>> matrix_functions.expm_frechet(mx.zeros((1, 1)), mx.array([[2.0]])).item()
    2.0
    """
    shape = shape_of(a)
    nd, n = len(shape), shape[-1]
    # max|e| per matrix, 1 where e is zero (its derivative there is 0 anyway).
    size = lax.max(lax.abs(e), (nd - 2, nd - 1), True)
    size = lax.where(lax.equal(size, 0.0), 1.0, size)
    top = lax.concatenate([a, lax.divide(e, size)], nd - 1)
    bottom = lax.concatenate([lax.zeros_like(a), a], nd - 1)
    block = expm(lax.concatenate([top, bottom], nd - 2), max_squarings=max_squarings)
    corner = lax.static_slice(block, (slice(None),) * (nd - 2) + (slice(0, n), slice(n, 2 * n)))
    return lax.multiply(corner, size)


@expm_p.def_jvp
def _expm_jvp(primals, tangents, *, max_squarings):
    (a,), (da,) = primals, tangents
    out = expm(a, max_squarings=max_squarings)
    if da is None:
        return out, None
    return out, expm_frechet(a, da, max_squarings=max_squarings)


@expm_p.def_vjp
def _expm_vjp(ct, out, a, *, needed, max_squarings):
    return (expm_frechet(mT(a), ct, max_squarings=max_squarings),)


@expm_p.def_batch
def _expm_batch(vals, dims, axis_size, **params):
    return expm_p.bind(move_bdim(vals[0], dims[0], 0, axis_size), **params), 0


# ----------------------------------------------------------------------------
# eig
# ----------------------------------------------------------------------------


def _eig_impl(a: mx.array, *, vectors: bool) -> list:
    *batch, n, _ = a.shape
    if a.size == 0:
        w = mx.zeros((*batch, n), mx.complex64)
        return [w, mx.zeros(a.shape, mx.complex64)] if vectors else [w]
    if vectors:
        return list(mx.linalg.eig(a, stream=mx.cpu))
    return [mx.linalg.eigvals(a, stream=mx.cpu)]


eig_p = Primitive("eig", _eig_impl, multiple_results=True, autocast="float32")


def eig(a: Any, *, vectors: bool = True) -> list:
    """``[w, v]`` (``[w]`` without ``vectors``): the complex64 eigenvalues
    (..., n) and unit eigenvectors (columns of (..., n, n)) of the real
    square matrices ``a``, by LAPACK on the CPU stream. Eigenvalues are
    differentiable (``dw = diag(v^-1 da v)``, for distinct eigenvalues);
    eigenvectors are not (``NotImplementedError``), as in JAX by default.

    >>> import mlx.core as mx
    >>> from ftorch.primitives import matrix_functions
    >>> matrix_functions.eig(mx.array([[2.0, 0.0], [0.0, 3.0]]), vectors=False)[0].tolist()
    [(2+0j), (3+0j)]
    """
    return eig_p.bind(a, vectors=vectors)


def complex_inverse(v: Any) -> Any:
    """The inverses of the complex matrices ``v`` (..., n, n), through the
    real system ``[[Re, -Im], [Im, Re]]`` of twice the size (LAPACK in MLX
    is real only). NaN where ``v`` is singular.

    >>> import mlx.core as mx
    >>> from ftorch.primitives import matrix_functions
    >>> matrix_functions.complex_inverse(mx.array([[2j]])).tolist()
    [[-0.5j]]
    """
    shape = shape_of(v)
    nd, n = len(shape), shape[-1]
    re, im = lax.real(v), lax.imag(v)
    block = lax.concatenate([lax.concatenate([re, lax.negative(im)], nd - 1),
                             lax.concatenate([im, re], nd - 1)], nd - 2)
    eye = mx.eye(2 * n, n, dtype=aval_of(re).dtype)  # [I; 0]
    rhs = lax.broadcast_to(eye, (*shape[:-2], 2 * n, n))
    x = lax.solve(block, rhs)
    rows = (slice(None),) * (nd - 2)
    return lax.complex(lax.static_slice(x, (*rows, slice(0, n), slice(None))),
                       lax.static_slice(x, (*rows, slice(n, 2 * n), slice(None))))


def _eig_vectors_not_differentiable() -> NotImplementedError:
    return NotImplementedError(
        "eig: the derivative of eigenvectors of a non-symmetric matrix is not implemented (it "
        "is defined only up to a complex scale of each vector); differentiate the eigenvalues, "
        "or use eigh for symmetric matrices")


@eig_p.def_jvp
def _eig_jvp(primals, tangents, *, vectors):
    (a,), (da,) = primals, tangents
    w, v = eig_p.bind(a, vectors=True)
    outs = [w, v] if vectors else [w]
    if da is None:
        return outs, [None] * len(outs)
    if vectors:
        raise _eig_vectors_not_differentiable()
    nd = len(shape_of(a))
    dac = lax.astype(da, mx.complex64)
    # dw_i = (v^-1 da v)_ii = sum_j (v^-1 da)_ij v_ji
    left = lax.matmul(complex_inverse(v), dac)
    return outs, [lax.sum(lax.multiply(left, mT(v)), (nd - 1,))]


@eig_p.def_vjp
def _eig_vjp(cts, outs, a, *, needed, vectors):
    if vectors and cts[1] is not None:
        raise _eig_vectors_not_differentiable()
    w_ct = cts[0]
    if w_ct is None:
        return (None,)
    _, v = eig_p.bind(a, vectors=True)
    nd = len(shape_of(a))
    # a_bar = Re(v^-T diag(w_bar) v^T), the transpose of the JVP.
    scaled = lax.multiply(mT(complex_inverse(v)), lax.expand_dims(w_ct, (nd - 2,)))
    return (lax.real(lax.matmul(scaled, mT(v))),)


@eig_p.def_batch
def _eig_batch(vals, dims, axis_size, **params):
    out = eig_p.bind(move_bdim(vals[0], dims[0], 0, axis_size), **params)
    return out, [0] * len(out)
