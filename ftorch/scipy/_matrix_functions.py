"""Matrix functions of ``jax.scipy.linalg``: ``expm`` and ``expm_frechet``
(the ``expm`` primitive: scaling and squaring with Padé approximants,
differentiable), ``sqrtm`` and ``funm`` (from the eigendecomposition),
``polar`` (from the SVD) and ``solve_sylvester``.

>>> import ftorch.scipy.linalg as fsl, mlx.core as mx
>>> [round(v, 4) for v in fsl.expm(mx.array([[0.0, 1.0], [0.0, 0.0]])).reshape(-1).tolist()]
[1.0, 1.0, 0.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
import ftorch.primitives as lax
from ftorch.core import aval_of
from ftorch.numpy._linalg import cast
from ftorch.numpy._linalg_orthogonal import _matrices
from ftorch.primitives import matrix_functions

__all__ = ["expm", "expm_frechet", "sqrtm", "funm", "polar", "solve_sylvester"]


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential of the square matrices ``A`` (..., n, n), as
    ``jax.scipy.linalg.expm``: scaling and squaring with a Padé
    approximant (degree up to 7 in float32, 13 in float64; Higham 2005),
    NaN where more than ``max_squarings`` squarings would be needed.
    ``upper_triangular`` is a hint JAX uses for speed; the result is the
    same without it, so it is accepted and the general method runs.

    Differentiable: the JVP is the Fréchet derivative (``expm_frechet``),
    the VJP ``expm_frechet(A.T, G)``. The squaring count is read on the
    host, so under ``jit`` the graph is split there; the Padé solve runs on
    the CPU stream (LAPACK), the products on the default device (float64 on
    the CPU).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> round(fsl.expm(mx.array([[1.0]])).item(), 5)
    2.71828
    """
    a, dtype = _matrices(A, "expm", "A", square=True)
    if not isinstance(max_squarings, int) or max_squarings < 0:
        raise ValueError(f"expm: max_squarings must be a non-negative int, got {max_squarings!r}")
    return cast(matrix_functions.expm(a, max_squarings=max_squarings), dtype)


def expm_frechet(A: Any, E: Any, *, method: str | None = None,
                 compute_expm: bool = True) -> Any:
    """The Fréchet derivative ``L(A, E)`` of the matrix exponential at ``A``
    in the direction ``E`` (both (..., n, n)), with ``expm(A)`` first when
    ``compute_expm``: ``(expm(A), L)``, else ``L``; as
    ``jax.scipy.linalg.expm_frechet``. Computed as the top-right block of
    ``expm([[A, E], [0, A]])`` (Najfeld and Havel), so it is differentiable
    to any order; ``method`` (None, ``'SPS'`` or ``'blockEnlarge'``) names
    SciPy's algorithms and is accepted for compatibility.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.expm_frechet(mx.zeros((1, 1)), mx.array([[2.0]]), compute_expm=False).item()
    2.0
    """
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got "
                         f"{method!r}")
    a, dtype = _matrices(A, "expm_frechet", "A", square=True)
    e, _ = _matrices(E, "expm_frechet", "E", square=True)
    if aval_of(e).shape != aval_of(a).shape:
        raise ValueError(f"expm_frechet: A and E must have the same shape; got "
                         f"{tuple(aval_of(a).shape)} and {tuple(aval_of(e).shape)}")
    e = lax.astype(e, aval_of(a).dtype) if aval_of(e).dtype != aval_of(a).dtype else e
    frechet = cast(matrix_functions.expm_frechet(a, e), dtype)
    return (cast(matrix_functions.expm(a), dtype), frechet) if compute_expm else frechet


def _spectral(A: Any, fname: str, f: Callable[[Any], Any]) -> Any:
    """``V f(w) V^-1`` from the eigendecomposition ``A = V diag(w) V^-1``,
    complex64; NaN where ``V`` is singular."""
    a, _ = _matrices(A, fname, "A", square=True)
    if aval_of(a).dtype != mx.float32:
        a = lax.astype(a, mx.float32)
    w, v = matrix_functions.eig(a)
    fw = fnp.asarray(f(w))
    if aval_of(fw).shape != aval_of(w).shape:
        raise ValueError(f"{fname}: func must map the eigenvalues elementwise (shape "
                         f"{tuple(aval_of(w).shape)}); got shape {tuple(aval_of(fw).shape)}")
    fw = fnp.asarray(fw, mx.complex64)
    return fnp.matmul(v * fw[..., None, :], matrix_functions.complex_inverse(v))


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal square root of the square matrices ``A`` (..., n, n),
    complex64 as ``jax.scipy.linalg.sqrtm``: ``V sqrt(w) V^-1`` from the
    eigendecomposition (LAPACK, CPU stream), so for diagonalizable ``A``
    (JAX uses the Schur form, which also covers defective matrices; here a
    defective ``A`` gives NaN or an inaccurate root). ``blocksize`` is
    accepted for compatibility. Not differentiable (nor is JAX's).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.sqrtm(mx.array([[4.0, 0.0], [0.0, -1.0]])).tolist()
    [[(2+0j), 0j], [0j, 1j]]
    """
    if not isinstance(blocksize, int) or blocksize < 1:
        raise ValueError(f"sqrtm: blocksize must be a positive int, got {blocksize!r}")
    return _spectral(A, "sqrtm", fnp.sqrt)


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """``func`` of the square matrix ``A``, complex64, as
    ``jax.scipy.linalg.funm``: ``V func(w) V^-1`` from the
    eigendecomposition (LAPACK, CPU stream), with ``func`` applied to the
    complex64 eigenvalues elementwise. For diagonalizable ``A`` (JAX's Schur
    recurrence also covers defective ones); not differentiable. With
    ``disp=False`` returns ``(F, errest)``, ``errest`` the relative residual
    ``||F A - A F||_1 / ||F||_1`` (float32), a check of commutation.

    >>> import ftorch.scipy.linalg as fsl, ftorch.numpy as fnp, mlx.core as mx
    >>> fsl.funm(mx.array([[1.0, 0.0], [0.0, 2.0]]), lambda w: w * w).tolist()
    [[(1+0j), 0j], [0j, (4+0j)]]
    """
    if not callable(func):
        raise TypeError(f"funm: func must be callable, got {func!r}")
    f = _spectral(A, "funm", func)
    if disp:
        return f
    a = fnp.asarray(fnp.asarray(A), mx.complex64)
    commutator = fnp.matmul(f, a) - fnp.matmul(a, f)
    norm1 = lambda x: fnp.max(fnp.sum(fnp.abs(x), axis=-2), axis=-1)  # noqa: E731
    return f, norm1(commutator) / norm1(f)


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """The polar decomposition of the matrices ``a`` (..., m, n), as
    ``jax.scipy.linalg.polar``: ``(u, p)`` with ``u`` (..., m, n) having
    orthonormal columns (rows, when m < n) and ``p`` positive semidefinite:
    ``a = u @ p`` (``side='right'``, ``p`` (..., n, n)) or ``a = p @ u``
    (``'left'``, ``p`` (..., m, m)).

    Computed from the SVD ``a = W S Vh`` (``u = W Vh``, ``p = V S Vh`` or
    ``W S W^T``) for either ``method`` (``'qdwh'``, JAX's default iteration,
    or ``'svd'``): ``eps`` and ``max_iterations`` only tune QDWH and are
    accepted for compatibility. Differentiable through the SVD where ``a``
    has full rank and distinct singular values (JAX's is not
    reverse-differentiable).

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> u, p = fsl.polar(mx.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> u.tolist(), p.tolist()
    ([[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    x, dtype = _matrices(a, "polar", "a")
    w, s, vh = lax.svd(x, full_matrices=False)
    u = fnp.matmul(w, vh)
    if side == "right":
        p = fnp.matmul(fnp.swapaxes(vh, -1, -2) * s[..., None, :], vh)
    else:
        p = fnp.matmul(w * s[..., None, :], fnp.swapaxes(w, -1, -2))
    return cast(u, dtype), cast(p, dtype)


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur",
                    tol: float = 1e-8) -> Any:
    """``X`` (m, n) with ``A @ X + X @ B = C``, for ``A`` (m, m) and ``B``
    (n, n), as ``jax.scipy.linalg.solve_sylvester``; NaN where ``A`` and
    ``-B`` share an eigenvalue (no unique solution).

    Solved as the Kronecker system ``(A ⊗ I + I ⊗ B^T) vec(X) = vec(C)``
    by LU decomposition (CPU stream): exact and differentiable in ``A``,
    ``B`` and ``C`` (JAX's Bartels-Stewart solve is not), but of cost
    ``O((m n)^3)``, for small systems. ``method`` (only ``'schur'``) and
    ``tol`` are accepted for compatibility.

    >>> import ftorch.scipy.linalg as fsl, mlx.core as mx
    >>> fsl.solve_sylvester(2 * mx.eye(2), mx.eye(2), 3 * mx.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if method != "schur":
        raise ValueError(f"solve_sylvester: method must be 'schur', got {method!r}")
    a, _ = _matrices(A, "solve_sylvester", "A", square=True)
    b, _ = _matrices(B, "solve_sylvester", "B", square=True)
    c, _ = _matrices(C, "solve_sylvester", "C")
    sa, sb, sc = (tuple(aval_of(x).shape) for x in (a, b, c))
    if len(sa) != 2 or len(sb) != 2 or sc != (sa[0], sb[0]):
        raise ValueError(f"solve_sylvester: A (m, m), B (n, n) and C (m, n) expected; got "
                         f"shapes {sa}, {sb} and {sc}")
    dtype = fnp.result_type(a, b, c)
    a, b, c = (fnp.asarray(x, dtype) for x in (a, b, c))
    m, n = sc
    eye_m, eye_n = fnp.eye(m, dtype=dtype), fnp.eye(n, dtype=dtype)
    # Row (i, p) and column (k, q) of the system: A[i, k] d(p, q) + d(i, k) B[q, p].
    system = a[:, None, :, None] * eye_n[None, :, None, :] + \
        eye_m[:, None, :, None] * b.T[None, :, None, :]
    system = fnp.reshape(system, (m * n, m * n))
    return fnp.reshape(fnp.linalg.solve(system, fnp.reshape(c, (m * n,))), (m, n))

