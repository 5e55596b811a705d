"""Orthogonal decompositions: the ``qr``, ``eigh``, ``svd`` and ``pinv``
primitives, the primitive layer.

All four run MLX's LAPACK kernels, which exist only on the CPU stream, so the
impls pass ``stream=mx.cpu``. They take leading batch dimensions natively (a
batching rule only moves the batch axis to the front), and an empty input
(a zero dimension anywhere) never reaches LAPACK: its result is built from
its static shape.

``qr(a, full_matrices)`` is Householder QR (LAPACK's sign convention: nothing
normalises the diagonal of ``R``). MLX gives only the reduced factors; the
complete ``Q`` of a tall ``a`` (m > n) is the ``Q`` of ``[a | I]``, whose
first n Householder reflectors are ``a``'s own. Derivatives: for m >= n
the standard rule (``C = Q^T dA R^-1``, ``dR = (C - W) R``,
``dQ = dA R^-1 - Q (C - W)`` with ``W`` the skew part of ``C``'s strict lower
triangle), for m < n the same rule on the leading m x m block ``X`` of
``a = [X | Y]``, with ``dR_Y = dQ^T Y + Q^T dY``. Both need the leading
min(m, n) columns of ``a`` to be linearly independent (``R``'s diagonal
block invertible). The complete ``Q`` of a tall matrix has no unique
derivative (its last m - n columns may rotate among themselves): its JVP,
and a VJP with a cotangent for ``Q``, raise ``NotImplementedError``.

``eigh(a, lower)`` reads only one triangle of ``a`` (LAPACK's ``UPLO``) and
is differentiated with respect to that triangle, as ``cholesky``. Its
eigenvalues are ascending. Derivatives (``P = V^T dS V``): ``dw = diag(P)``,
``dV = V (F o P)`` with ``F[i, j] = 1 / (w[j] - w[i])``.

``svd(a, full_matrices, compute_uv)`` gives descending singular values.
Derivatives (``P = U^T dA V`` on the reduced factors, ``S`` and ``A`` its
symmetric and skew parts): ``ds = diag(P)``, ``dU = U (E o S + D o A)``,
``dV = V (E o S - D o A)``, with ``E[i, j] = 1 / (s[j] - s[i])`` and
``D[i, j] = 1 / (s[j] + s[i])``, plus ``(I - U U^T) dA V S^-1`` in ``dU``
when m > n and ``(I - V V^T) dA^T U S^-1`` in ``dV`` when n > m. This
splitting of JAX's single factor ``1 / (s[j]^2 - s[i]^2)`` keeps the skew
part (a rotation of ``U`` against ``V``, finite whenever ``s[i] + s[j] > 0``)
well-defined at repeated singular values. The full ``U`` or ``Vh`` of a
non-square matrix has no unique derivative: its JVP, and a VJP with a
cotangent for ``U`` or ``Vh``, raise ``NotImplementedError`` (the singular
values alone are always differentiable).

Degenerate spectra. At repeated eigenvalues (singular values) the vectors
are only defined up to a rotation within each eigenspace and ``F`` (``E``)
is infinite; JAX produces inf/NaN there. Here every entry of ``F``, ``E``,
``D`` and ``1/s`` whose denominator is at most ``8 sqrt(n) eps`` times the
largest absolute eigenvalue (singular value) is set to zero instead (LAPACK
returns exactly repeated eigenvalues apart by a few ``eps`` times that
scale). The consequences:

- Eigenvalue (singular value) derivatives are always finite and exact for
  functions symmetric within each repeated cluster (``sum(eigvalsh(a))``:
  gradient ``I``). The derivative of one eigenvalue inside a cluster is
  ``v v^T`` for the eigenvector LAPACK returned: an element of the
  subdifferential (for the largest eigenvalue, a convex function, a valid
  subgradient), which depends on LAPACK's choice of basis.
- Losses that depend on the vectors only through quantities constant
  within each cluster (projectors onto whole eigenspaces, ``V f(w) V^T``
  with ``f`` constant on each cluster) get exact gradients.
- Losses with a within-cluster first-order term lose it: for
  ``V f(w) V^T`` the true derivative includes ``f'(w) (V^T dA V)[i, j]`` for
  ``i != j`` in one cluster, which no rule that sees only the vectors'
  cotangent can recover (``eigh`` of ``I`` says nothing of ``f'``); that
  term is zero here. (For the SVD the skew part survives, see above; the
  symmetric part is lost the same way.) A loss that depends on the choice
  of basis within a cluster (a raw eigenvector entry) has no derivative
  there; it gets a finite value, with zero contribution from within the
  cluster.
- ``1/s`` for a zero singular value of a non-square matrix (the derivative
  of a singular vector that is only defined up to the null space) is zero,
  so even ``U S Vh`` loses the part of its derivative that passes through
  ``u_i s_i`` with ``s_i = 0`` (JAX gives NaN there).

The strict wrappers follow ``jax.lax.linalg``: ``qr`` and ``svd`` give full
matrices by default, ``eigh`` returns ``[v, w]`` and symmetrizes its input
by default (``symmetrize_input=False`` reads one triangle). ``eigvalsh`` and
``pinv`` are ftorch's own.

``pinv(a, rtol)`` is the Moore-Penrose pseudo-inverse from the SVD,
dropping singular values at most ``rtol * max(s)`` (``rtol`` an operand of
shape ``a.shape[:-2]``, not differentiated). Its derivative is Golub and
Pereyra's formula, exact wherever the rank is locally constant, including
rank-deficient matrices.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.eigvalsh(mx.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
[1.0, 3.0]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import (
    add_tangents,
    diag_part,
    move_bdim,
    mT,
    shape_of,
    tri,
)

__all__ = ["qr", "eigh", "eigvalsh", "svd", "pinv"]


# ----------------------------------------------------------------------------
# Helpers on traced or concrete matrices
# ----------------------------------------------------------------------------


def _diag_matrix(v: Any) -> Any:
    """Diagonal matrices with the vectors ``v`` (..., n) on their diagonals."""
    aval = aval_of(v)
    return lax.multiply(lax.expand_dims(v, (aval.ndim,)), mx.eye(aval.shape[-1], dtype=aval.dtype))


def _row(v: Any) -> Any:
    """``v`` (..., k) as (..., 1, k): scales the columns of a matrix."""
    return lax.expand_dims(v, (len(shape_of(v)) - 1,))


def _sym(x: Any) -> Any:
    return lax.multiply(lax.add(x, mT(x)), 0.5)


def _skew(x: Any) -> Any:
    return lax.multiply(lax.subtract(x, mT(x)), 0.5)


def _cols(x: Any, start: int, stop: int) -> Any:
    nd = len(shape_of(x))
    return lax.static_slice(x, (slice(None),) * (nd - 1) + (slice(start, stop),))


def _rows(x: Any, start: int, stop: int) -> Any:
    nd = len(shape_of(x))
    return lax.static_slice(x, (slice(None),) * (nd - 2) + (slice(start, stop),))


def _mm(*xs: Any) -> Any:
    """The matrix product of ``xs``, left to right."""
    out = xs[0]
    for x in xs[1:]:
        out = lax.matmul(out, x)
    return out


def _is_empty(x: Any) -> bool:
    return math.prod(shape_of(x)) == 0


def _degeneracy_tol(vals: Any, n: int) -> Any:
    """The gap below which two eigenvalues (singular values) of ``vals``
    (..., k) count as equal: ``8 sqrt(n) eps`` times the largest absolute
    value, shape (..., 1, 1)."""
    aval = aval_of(vals)
    eps = float(mx.finfo(aval.dtype).eps)
    scale = lax.max(lax.abs(vals), (aval.ndim - 1,), True)
    return lax.expand_dims(lax.multiply(scale, 8.0 * math.sqrt(max(n, 1)) * eps), (aval.ndim,))


def _masked_reciprocal(x: Any, keep: Any) -> Any:
    """``1 / x`` where ``keep``, else 0 (with no inf/NaN in any derivative)."""
    return lax.where(keep, lax.reciprocal(lax.where(keep, x, 1.0)), 0.0)


def _gap_reciprocals(vals: Any, tol: Any) -> Any:
    """``F[..., i, j] = 1 / (vals[j] - vals[i])``, zero where the gap is at most ``tol``."""
    n = len(shape_of(vals))
    diff = lax.subtract(_row(vals), lax.expand_dims(vals, (n,)))
    return _masked_reciprocal(diff, lax.greater(lax.abs(diff), tol))


def _sum_reciprocals(vals: Any, tol: Any) -> Any:
    """``D[..., i, j] = 1 / (vals[j] + vals[i])``, zero where the sum is at most ``tol``."""
    n = len(shape_of(vals))
    tot = lax.add(_row(vals), lax.expand_dims(vals, (n,)))
    return _masked_reciprocal(tot, lax.greater(tot, tol))


def _batch_at_front(prim: Primitive):
    """The batching rule of an op over the matrices in the last two axes:
    every operand's batch axis moves to the front, where the outputs get it."""

    def batch(vals, dims, axis_size, **params):
        moved = [move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]
        out = prim.bind(*moved, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    prim.def_batch(batch)


def _eye_stack(batch: tuple[int, ...], n: int, dtype: mx.Dtype) -> mx.array:
    return mx.broadcast_to(mx.eye(n, dtype=dtype), (*batch, n, n))


# ----------------------------------------------------------------------------
# qr
# ----------------------------------------------------------------------------


def _qr_impl(a: mx.array, *, full_matrices: bool) -> list:
    *batch, m, n = a.shape
    batch = tuple(batch)
    k = min(m, n)
    complete = full_matrices and m > n
    if a.size == 0:
        if complete:
            return [_eye_stack(batch, m, a.dtype), mx.zeros((*batch, m, n), a.dtype)]
        return [mx.zeros((*batch, m, k), a.dtype), mx.zeros((*batch, k, n), a.dtype)]
    if complete:
        aug = mx.concatenate([a, _eye_stack(batch, m, a.dtype)], axis=-1)
        q, r = mx.linalg.qr(aug, stream=mx.cpu)
        return [q, r[..., :n]]
    q, r = mx.linalg.qr(a, stream=mx.cpu)
    return [q, r]


qr_p = Primitive("qr", _qr_impl, multiple_results=True, autocast="float32")


def qr(a: Any, *, full_matrices: bool = True) -> list:
    """``[q, r]``, the QR factors of the matrices ``a`` (..., m, n) (as
    ``jax.lax.linalg.qr``): ``q`` (..., m, m) and upper-triangular ``r``
    (..., m, n) with ``full_matrices``, else ``q`` (..., m, k) with
    orthonormal columns and ``r`` (..., k, n), k = min(m, n).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> q, r = lax.qr(mx.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> round(abs(r[0, 0].item()), 4)
    5.0
    """
    m, n = shape_of(a)[-2:]
    return qr_p.bind(a, full_matrices=full_matrices and m > n)


def _qr_tall_jvp(q: Any, r: Any, da: Any) -> tuple[Any, Any]:
    """``(dQ, dR)`` for the reduced QR of a matrix with m >= n."""
    dar = lax.triangular_solve(r, da, left_side=False, lower=False)  # dA R^-1
    c = lax.matmul(mT(q), dar)
    low = tri(c, lower=True, strict=True)
    c_minus_w = lax.subtract(c, lax.subtract(low, mT(low)))
    return lax.subtract(dar, lax.matmul(q, c_minus_w)), lax.matmul(c_minus_w, r)


def _qr_tall_vjp(q: Any, r: Any, q_ct: Any, r_ct: Any) -> Any:
    """The cotangent of ``a`` (m >= n) for cotangents of its reduced factors."""
    g = None  # Q^T Q_ct - R_ct R^T
    if q_ct is not None:
        g = lax.matmul(mT(q), q_ct)
    if r_ct is not None:
        g = add_tangents(g, lax.negative(lax.matmul(r_ct, mT(r))))
    h = lax.subtract(tri(lax.subtract(g, mT(g)), lower=True, strict=True), g)
    b = add_tangents(q_ct, lax.matmul(q, h))
    # b R^-T: solve x R^T = b.
    return lax.triangular_solve(r, b, left_side=False, lower=False, transpose_a=True)


def _qr_not_unique() -> NotImplementedError:
    return NotImplementedError(
        "qr: the complete Q of a tall matrix (m > n) has no unique derivative: its last "
        "m - n columns may rotate among themselves. Differentiate mode='reduced' (or 'r') "
        "instead.")


@qr_p.def_jvp
def _qr_jvp(primals, tangents, *, full_matrices):
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    if da is None or _is_empty(a):
        return [q, r], [None, None]
    m, n = shape_of(a)[-2:]
    if full_matrices and m > n:
        raise _qr_not_unique()
    if m >= n:
        return [q, r], list(_qr_tall_jvp(q, r, da))
    # a = [X | Y] with X square: Q and R_X are X's factors, R_Y = Q^T Y.
    dq, drx = _qr_tall_jvp(q, _cols(r, 0, m), _cols(da, 0, m))
    dry = lax.add(lax.matmul(mT(dq), _cols(a, m, n)), lax.matmul(mT(q), _cols(da, m, n)))
    return [q, r], [dq, lax.concatenate([drx, dry], len(shape_of(a)) - 1)]


@qr_p.def_vjp
def _qr_vjp(cts, outs, a, *, needed, full_matrices):
    (q_ct, r_ct), (q, r) = cts, outs
    if not needed[0] or (q_ct is None and r_ct is None):
        return (None,)
    if _is_empty(a):
        return (lax.zeros_like(a),)
    m, n = shape_of(a)[-2:]
    if full_matrices and m > n:
        if q_ct is not None:
            raise _qr_not_unique()
        # R = [R1; 0]: only its top n rows depend on a.
        q, r, r_ct = _cols(q, 0, n), _rows(r, 0, n), _rows(r_ct, 0, n)
    if m >= n:
        return (_qr_tall_vjp(q, r, q_ct, r_ct),)
    if r_ct is None:
        return (lax.concatenate([_qr_tall_vjp(q, _cols(r, 0, m), q_ct, None),
                                 lax.zeros_like(_cols(a, m, n))], len(shape_of(a)) - 1),)
    ry_ct = _cols(r_ct, m, n)
    q_ct = add_tangents(q_ct, lax.matmul(_cols(a, m, n), mT(ry_ct)))
    x_ct = _qr_tall_vjp(q, _cols(r, 0, m), q_ct, _cols(r_ct, 0, m))
    return (lax.concatenate([x_ct, lax.matmul(q, ry_ct)], len(shape_of(a)) - 1),)


_batch_at_front(qr_p)


# ----------------------------------------------------------------------------
# eigh
# ----------------------------------------------------------------------------


def _eigh_impl(a: mx.array, *, lower: bool, vectors: bool) -> list:
    if a.size == 0:
        w = mx.zeros(a.shape[:-1], a.dtype)
        return [w, mx.zeros(a.shape, a.dtype)] if vectors else [w]
    uplo = "L" if lower else "U"
    if vectors:
        return list(mx.linalg.eigh(a, UPLO=uplo, stream=mx.cpu))
    return [mx.linalg.eigvalsh(a, UPLO=uplo, stream=mx.cpu)]


eigh_p = Primitive("eigh", _eigh_impl, multiple_results=True, autocast="float32")


def _symmetrized(a: Any) -> Any:
    return lax.multiply(lax.add(a, mT(a)), 0.5)


def eigh(a: Any, *, lower: bool = True, symmetrize_input: bool = True) -> list:
    """``[v, w]`` (as ``jax.lax.linalg.eigh``): the orthonormal eigenvectors
    (..., n, n) (columns) and ascending eigenvalues (..., n) of the symmetric
    matrices ``a`` (..., n, n): ``(a + a^T) / 2`` with ``symmetrize_input``,
    else the matrices whose ``lower`` (else upper) triangle is ``a``'s.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> v, w = lax.eigh(mx.array([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist(), abs(v[1, 0].item())
    ([1.0, 2.0], 1.0)
    """
    if symmetrize_input:
        a = _symmetrized(a)
    w, v = eigh_p.bind(a, lower=lower, vectors=True)
    return [v, w]


def eigvalsh(a: Any, *, lower: bool = True, symmetrize_input: bool = True) -> Any:
    """The ascending eigenvalues (..., n) of the symmetric matrices ``a``
    (..., n, n) (``lower`` and ``symmetrize_input`` as in ``eigh``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.eigvalsh(mx.array([[2.0, 9.0], [1.0, 2.0]]), symmetrize_input=False).tolist()
    [1.0, 3.0]
    """
    if symmetrize_input:
        a = _symmetrized(a)
    return eigh_p.bind(a, lower=lower, vectors=False)[0]


def _symmetric_from(d: Any, lower: bool) -> Any:
    """The symmetric matrices whose ``lower`` (else upper) triangle is ``d``'s."""
    return lax.add(tri(d, lower=lower), mT(tri(d, lower=lower, strict=True)))


@eigh_p.def_jvp
def _eigh_jvp(primals, tangents, *, lower, vectors):
    (a,), (da,) = primals, tangents
    w, v = eigh_p.bind(a, lower=lower, vectors=True)
    outs = [w, v] if vectors else eigh_p.bind(a, lower=lower, vectors=False)
    if da is None or _is_empty(a):
        return outs, [None] * len(outs)
    p = _mm(mT(v), _symmetric_from(da, lower), v)
    dw = diag_part(p)
    if not vectors:
        return outs, [dw]
    f = _gap_reciprocals(w, _degeneracy_tol(w, shape_of(a)[-1]))
    return outs, [dw, lax.matmul(v, lax.multiply(f, p))]


@eigh_p.def_vjp
def _eigh_vjp(cts, outs, a, *, needed, lower, vectors):
    w_ct, v_ct = cts if vectors else (cts[0], None)
    if not needed[0] or (w_ct is None and v_ct is None):
        return (None,)
    if _is_empty(a):
        return (lax.zeros_like(a),)
    w, v = outs if vectors else eigh_p.bind(a, lower=lower, vectors=True)
    inner = None if w_ct is None else _diag_matrix(w_ct)
    if v_ct is not None:
        f = _gap_reciprocals(w, _degeneracy_tol(w, shape_of(a)[-1]))
        inner = add_tangents(inner, lax.multiply(f, lax.matmul(mT(v), v_ct)))
    g = _mm(v, inner, mT(v))  # the cotangent of the symmetric matrix
    # It reaches the read triangle of a through both (i, j) and (j, i).
    return (lax.add(tri(g, lower=lower), tri(mT(g), lower=lower, strict=True)),)


_batch_at_front(eigh_p)


# ----------------------------------------------------------------------------
# svd
# ----------------------------------------------------------------------------


def _svd_impl(a: mx.array, *, full_matrices: bool, compute_uv: bool) -> list:
    *batch, m, n = a.shape
    batch = tuple(batch)
    k = min(m, n)
    if a.size == 0:
        s = mx.zeros((*batch, k), a.dtype)
        if not compute_uv:
            return [s]
        if full_matrices:
            return [_eye_stack(batch, m, a.dtype), s, _eye_stack(batch, n, a.dtype)]
        return [mx.zeros((*batch, m, k), a.dtype), s, mx.zeros((*batch, k, n), a.dtype)]
    # LAPACK fails (an error at evaluation) on a NaN: factor zeros in place
    # of non-finite matrices, then give those NaN factors.
    ok = mx.all(mx.isfinite(a), axis=(-2, -1), keepdims=True)
    safe = mx.where(ok, a, mx.zeros((), a.dtype))
    nan = mx.array(float("nan"), a.dtype)
    if not compute_uv:
        return [mx.where(ok[..., 0], mx.linalg.svd(safe, compute_uv=False, stream=mx.cpu), nan)]
    if full_matrices or m == n:
        u, s, vh = mx.linalg.svd(safe, stream=mx.cpu)
    elif m > n:  # reduced: QR first, so that no m x m factor is formed
        q, r = mx.linalg.qr(safe, stream=mx.cpu)
        ur, s, vh = mx.linalg.svd(r, stream=mx.cpu)
        u = q @ ur
    else:
        q, r = mx.linalg.qr(mx.swapaxes(safe, -1, -2), stream=mx.cpu)
        u, s, vhr = mx.linalg.svd(mx.swapaxes(r, -1, -2), stream=mx.cpu)
        vh = vhr @ mx.swapaxes(q, -1, -2)
    return [mx.where(ok, u, nan), mx.where(ok[..., 0], s, nan), mx.where(ok, vh, nan)]


svd_p = Primitive("svd", _svd_impl, multiple_results=True, autocast="float32")


def svd(a: Any, *, full_matrices: bool = True, compute_uv: bool = True) -> list:
    """``[u, s, vh]`` with ``a = u @ diag(s) @ vh`` for the matrices ``a``
    (..., m, n) (as ``jax.lax.linalg.svd``), ``s`` (..., k) descending,
    k = min(m, n); ``u`` (..., m, m) and ``vh`` (..., n, n) with
    ``full_matrices``, else (..., m, k) and (..., k, n); ``[s]`` without
    ``compute_uv``. NaN factors for a matrix with a NaN or an infinity.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.svd(mx.array([[0.0, 2.0], [1.0, 0.0]]), compute_uv=False)[0].tolist()
    [2.0, 1.0]
    """
    m, n = shape_of(a)[-2:]
    return svd_p.bind(a, full_matrices=full_matrices and compute_uv and m != n,
                      compute_uv=compute_uv)


def _svd_full_not_unique() -> NotImplementedError:
    return NotImplementedError(
        "svd: the full U and Vh of a non-square matrix have no unique derivative (the "
        "columns beyond min(m, n) may rotate among themselves). Differentiate "
        "full_matrices=False, or compute_uv=False for the singular values alone.")


@svd_p.def_jvp
def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if da is None or _is_empty(a):
        return outs, [None] * len(outs)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    if compute_uv and full_matrices and m != n:
        raise _svd_full_not_unique()
    u, s, vh = outs if compute_uv else svd_p.bind(a, full_matrices=False, compute_uv=True)
    v = mT(vh)
    dav = lax.matmul(da, v)
    p = lax.matmul(mT(u), dav)
    ds = diag_part(p)
    if not compute_uv:
        return outs, [ds]
    tol = _degeneracy_tol(s, k)
    e, d = _gap_reciprocals(s, tol), _sum_reciprocals(s, tol)
    sym, skew = lax.multiply(e, _sym(p)), lax.multiply(d, _skew(p))
    du = lax.matmul(u, lax.add(sym, skew))
    dv = lax.matmul(v, lax.subtract(sym, skew))
    s_inv = _row(_masked_reciprocal(s, lax.greater(s, lax.squeeze(tol, (len(shape_of(s)),)))))
    if m > k:  # (I - U U^T) dA V S^-1
        du = lax.add(du, lax.multiply(lax.subtract(dav, lax.matmul(u, p)), s_inv))
    if n > k:  # (I - V V^T) dA^T U S^-1
        datu = lax.matmul(mT(da), u)
        du_v = lax.subtract(datu, lax.matmul(v, mT(p)))
        dv = lax.add(dv, lax.multiply(du_v, s_inv))
    return outs, [du, ds, mT(dv)]


@svd_p.def_vjp
def _svd_vjp(cts, outs, a, *, needed, full_matrices, compute_uv):
    u_ct, s_ct, vh_ct = cts if compute_uv else (None, cts[0], None)
    if not needed[0] or (u_ct is None and s_ct is None and vh_ct is None):
        return (None,)
    if _is_empty(a):
        return (lax.zeros_like(a),)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    if compute_uv:
        u, s, vh = outs
        if full_matrices and m != n:
            if u_ct is not None or vh_ct is not None:
                raise _svd_full_not_unique()
            u, vh = _cols(u, 0, k), _rows(vh, 0, k)
    else:
        u, s, vh = svd_p.bind(a, full_matrices=False, compute_uv=True)
    v = mT(vh)
    tol = _degeneracy_tol(s, k)
    p_ct = None if s_ct is None else _diag_matrix(s_ct)
    gu = None if u_ct is None else lax.matmul(mT(u), u_ct)
    v_ct = None if vh_ct is None else mT(vh_ct)
    gv = None if v_ct is None else lax.matmul(mT(v), v_ct)
    if gu is not None or gv is not None:
        e, d = _gap_reciprocals(s, tol), _sum_reciprocals(s, tol)
        gsum = add_tangents(gu, gv)
        gdiff = add_tangents(gu, None if gv is None else lax.negative(gv))
        p_ct = add_tangents(p_ct, lax.add(_sym(lax.multiply(e, gsum)),
                                          _skew(lax.multiply(d, gdiff))))
    a_ct = _mm(u, p_ct, vh)
    s_inv = _row(_masked_reciprocal(s, lax.greater(s, lax.squeeze(tol, (len(shape_of(s)),)))))
    if m > k and u_ct is not None:  # (I - U U^T) U_ct S^-1 V^T
        a_ct = lax.add(a_ct, lax.matmul(
            lax.multiply(lax.subtract(u_ct, lax.matmul(u, gu)), s_inv), vh))
    if n > k and v_ct is not None:  # U S^-1 ((I - V V^T) V_ct)^T
        a_ct = lax.add(a_ct, lax.matmul(
            lax.multiply(u, s_inv), mT(lax.subtract(v_ct, lax.matmul(v, gv)))))
    return (a_ct,)


_batch_at_front(svd_p)


# ----------------------------------------------------------------------------
# pinv
# ----------------------------------------------------------------------------


def _pinv_impl(a: mx.array, rtol: mx.array) -> mx.array:
    *batch, m, n = a.shape
    if a.size == 0:
        return mx.zeros((*batch, n, m), a.dtype)
    u, s, vh = _svd_impl(a, full_matrices=False, compute_uv=True)
    keep = s > rtol[..., None] * s[..., :1]
    s_inv = mx.where(keep, 1 / mx.where(keep, s, 1), 0).astype(a.dtype)
    return (mx.swapaxes(vh, -1, -2) * s_inv[..., None, :]) @ mx.swapaxes(u, -1, -2)


pinv_p = Primitive("pinv", _pinv_impl, autocast="float32")


def pinv(a: Any, rtol: Any) -> Any:
    """The Moore-Penrose pseudo-inverses (..., n, m) of the matrices ``a``
    (..., m, n), dropping singular values at most ``rtol * max(s)``
    (``rtol`` of shape ``a.shape[:-2]`` and ``a``'s dtype).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.pinv(mx.array([[2.0, 0.0], [0.0, 0.0]]), mx.array(1e-6)).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return pinv_p.bind(a, rtol)


@pinv_p.def_jvp
def _pinv_jvp(primals, tangents):
    (a, rtol), (da, _) = primals, tangents
    p = pinv_p.bind(a, rtol)
    if da is None or _is_empty(a):
        return p, None
    # Golub & Pereyra: dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P.
    dat = mT(da)
    left = _mm(p, mT(p), dat)
    right = _mm(dat, mT(p), p)
    dp = lax.negative(_mm(p, da, p))
    dp = lax.add(dp, lax.subtract(left, _mm(left, a, p)))
    dp = lax.add(dp, lax.subtract(right, _mm(p, a, right)))
    return p, dp


@pinv_p.def_vjp
def _pinv_vjp(ct, p, a, rtol, *, needed):
    if not needed[0]:
        return None, None
    if _is_empty(a):
        return lax.zeros_like(a), None
    # The transpose of the JVP:
    # -P^T C P^T + (I - A P) C^T P P^T + P^T P C^T (I - P A).
    ctt = mT(ct)
    x = _mm(ctt, p, mT(p))
    y = _mm(mT(p), p, ctt)
    out = lax.negative(_mm(mT(p), ct, mT(p)))
    out = lax.add(out, lax.subtract(x, _mm(a, p, x)))
    out = lax.add(out, lax.subtract(y, _mm(y, p, a)))
    return out, None


_batch_at_front(pinv_p)
