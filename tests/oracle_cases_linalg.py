"""Oracle cases for the ``jax.numpy.linalg`` names of the Array API and the
general eigenproblem, and for ``jax.scipy.linalg`` (tests/oracle.py).

Inputs are drawn where the functions are well defined and well conditioned:
symmetric positive-definite matrices for Cholesky, distinct spectra for
eigen and singular vectors (whose signs are then normalised on both sides),
matrices with norm up to about 5 for ``expm``. Where JAX's rule for a
non-symmetric input differs from ftorch's (``cholesky`` and ``eigh`` read
one triangle and differentiate with respect to it; JAX lets the gradient
flow to the whole matrix), the case symmetrizes its input first, where the
two agree."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays


def _n(d, lo=1, hi=4):
    return d(st.integers(lo, hi))


def _matrix(d, m=None, n=None, batch=(), lo=-3.0, hi=3.0):
    return d(arrays((*batch, m or _n(d), n or _n(d)), lo=lo, hi=hi))


def _batch(d):
    return d(st.sampled_from([(), (2,)]))


def _spd(d, batch=()):
    n = _n(d)
    a = d(arrays((*batch, n, n), lo=-1.0, hi=1.0))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def _separated(d, n, batch=(), start=0.5):
    """n values >= 0.5 apart (per batch entry), the smallest in [start, start + 0.1]."""
    jitter = d(arrays((*batch, n), lo=0.0, hi=0.1))
    return (start + 0.6 * np.arange(n) + jitter).astype(np.float32)


def _orthogonal(d, n, batch=()):
    return np.linalg.qr(d(arrays((*batch, n, n), lo=-1.0, hi=1.0)) + 2 * np.eye(n))[0]


def _symmetric(d, batch=()):
    n = _n(d)
    q = _orthogonal(d, n, batch)
    w = _separated(d, n, batch, start=-1.0)
    return ((q * w[..., None, :]) @ np.swapaxes(q, -1, -2)).astype(np.float32)


def _conditioned(d, batch=(), square=False):
    m = _n(d)
    n = m if square else _n(d)
    k = min(m, n)
    u, v = _orthogonal(d, m, batch)[..., :k], _orthogonal(d, n, batch)[..., :k]
    s = _separated(d, k, batch)
    return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(np.float32)


def _well_conditioned(d, batch=()):
    n = _n(d)
    a = d(arrays((*batch, n, n), lo=-1.0, hi=1.0))
    return (a + (n + 1) * np.eye(n, dtype=np.float32)).astype(np.float32)


def _diagonalizable(d, complex_=False):
    """``Q diag(w) Q^-1`` with well-separated real eigenvalues, or with one
    complex pair when ``complex_``."""
    n = _n(d, 2 if complex_ else 1, 4)
    q = np.eye(n) + d(arrays((n, n), lo=-0.3, hi=0.3))
    w = np.diag(_separated(d, n, start=-1.5 if not complex_ else 0.5).astype(np.float64))
    if complex_:
        w[0, 1], w[1, 0] = 1.0, -1.0  # a rotation block: eigenvalues w0 +- i
        w[1, 1] = w[0, 0]
    return (q @ w @ np.linalg.inv(q)).astype(np.float32)


def _sym(L, a):
    return (a + L.numpy.swapaxes(a, -1, -2)) / 2


def _sign_fixed_columns(L, v):
    """Eigen/singular vectors (columns) with the sign making each column's
    largest-magnitude entry positive."""
    idx = L.numpy.argmax(L.numpy.abs(v), axis=-2, keepdims=True)
    return v * L.numpy.sign(L.numpy.take_along_axis(v, idx, axis=-2))


def _sorted_complex(L, w):
    """Complex eigenvalues in a fixed order (by real part, then imaginary)."""
    key = L.numpy.real(w) * 1000.0 + L.numpy.imag(w)
    return L.numpy.take_along_axis(w, L.numpy.argsort(key, axis=-1), axis=-1)


def _eig_sorted(L, w, v):
    order = L.numpy.argsort(L.numpy.real(w) * 1000.0 + L.numpy.imag(w), axis=-1)
    return (L.numpy.take_along_axis(w, order, axis=-1),
            L.numpy.take_along_axis(L.numpy.abs(v), order[..., None, :], axis=-1))


def _vector(d, n=None, lo=-3.0, hi=3.0, dtype="float32"):
    return d(arrays((n or _n(d),), dtype=dtype, lo=lo, hi=hi))


ORACLE = [
    # ---- jax.numpy.linalg
    Oracle("jax.numpy.linalg.matmul", lambda d: ((_matrix(d, n=3), _matrix(d, m=3)), {})),
    Oracle("jax.numpy.linalg.tensordot",
           lambda d: ((d(arrays((2, 3, 4))), d(arrays((3, 4, 2)))),
                      {"axes": d(st.sampled_from([2, ([1, 2], [0, 1])]))})),
    Oracle("jax.numpy.linalg.outer", lambda d: ((_vector(d), _vector(d)), {})),
    Oracle("jax.numpy.linalg.vecdot",
           lambda d: ((d(arrays((2, 3))), d(arrays((3,)))), {"axis": -1})),
    Oracle("jax.numpy.linalg.matrix_transpose", lambda d: ((_matrix(d, batch=_batch(d)),), {})),
    Oracle("jax.numpy.linalg.diagonal",
           lambda d: ((_matrix(d, batch=_batch(d)),), {"offset": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.linalg.trace",
           lambda d: ((_matrix(d, batch=_batch(d)),), {"offset": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.linalg.svdvals", lambda d: ((_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.cond",
           lambda d: ((_conditioned(d, _batch(d), square=True),),
                      {"p": d(st.sampled_from([None, 2, -2, "fro", 1, np.inf]))}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.eigvals", lambda d: ((_diagonalizable(d),), {}),
           run=lambda L, fn, a: _sorted_complex(L, fn(a)), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.eigvals", lambda d: ((_diagonalizable(d, complex_=True),), {}),
           run=lambda L, fn, a: _sorted_complex(L, fn(a)), rtol=1e-4, atol=1e-4, id="complex"),
    # Both sides run LAPACK's geev (unit columns, largest entry real): compare the
    # eigenvalues in a fixed order and the magnitudes of their vectors in that order.
    Oracle("jax.numpy.linalg.eig", lambda d: ((_diagonalizable(d),), {}),
           run=lambda L, fn, a: _eig_sorted(L, *fn(a)), grad=False, rtol=1e-4, atol=1e-4),
    # ---- jax.scipy.linalg: decompositions
    Oracle("jax.scipy.linalg.cholesky",
           lambda d: ((_spd(d, _batch(d)),), {"lower": d(st.booleans())}),
           run=lambda L, fn, a, lower: fn(_sym(L, a), lower=lower), rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.cholesky", lambda d: ((_spd(d),), {"lower": d(st.booleans())}),
           grad=False, id="values"),
    Oracle("jax.scipy.linalg.cho_factor", lambda d: ((_spd(d),), {"lower": d(st.booleans())}),
           run=lambda L, fn, a, lower: fn(_sym(L, a), lower=lower)[0], rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.qr",
           lambda d: ((_conditioned(d, square=True),), {"mode": d(st.sampled_from(
               ["full", "economic", "r"]))}),
           run=lambda L, fn, a, mode: L.numpy.abs(fn(a, mode=mode)[-1]), rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.qr_multiply",
           lambda d: ((_conditioned(d, square=True),), {}),
           run=lambda L, fn, a: L.numpy.abs(fn(a, a)[1]), grad=False, rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.svd",
           lambda d: ((_conditioned(d, _batch(d)),), {"full_matrices": False}),
           run=lambda L, fn, a, full_matrices: (
               _sign_fixed_columns(L, fn(a, full_matrices=False)[0]),
               fn(a, full_matrices=False)[1]),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.svd", lambda d: ((_conditioned(d),), {"compute_uv": False}),
           rtol=1e-4, atol=1e-4, id="s"),
    Oracle("jax.scipy.linalg.eigh",
           lambda d: ((_symmetric(d, _batch(d)),), {"lower": d(st.booleans())}),
           run=lambda L, fn, a, lower: (fn(_sym(L, a), lower=lower)[0],
                                        _sign_fixed_columns(L, fn(_sym(L, a), lower=lower)[1])),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.eigh", lambda d: ((_symmetric(d),), {"eigvals_only": True}),
           run=lambda L, fn, a, eigvals_only: fn(_sym(L, a), eigvals_only=True),
           rtol=1e-4, atol=1e-4, id="eigvals_only"),
    Oracle("jax.scipy.linalg.eigh_tridiagonal",
           lambda d: ((np.float32([1.0, 2.2, 3.5, 5.1]), np.float32([0.3, -0.2, 0.4])),
                      {"eigvals_only": True}), grad=False, rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.hessenberg", lambda d: ((_conditioned(d, square=True),), {}),
           run=lambda L, fn, a: fn(a, calc_q=True), grad=False, rtol=1e-4, atol=1e-4),
    # ---- jax.scipy.linalg: matrix functions
    Oracle("jax.scipy.linalg.expm",
           lambda d: ((_matrix(d, *(2 * [_n(d)]), batch=_batch(d), lo=-1.2, hi=1.2),), {}),
           rtol=2e-4, atol=2e-4),
    Oracle("jax.scipy.linalg.expm_frechet",
           lambda d: ((_matrix(d, 3, 3, lo=-1.0, hi=1.0), _matrix(d, 3, 3, lo=-1.0, hi=1.0)),
                      {}), rtol=2e-4, atol=2e-4),
    Oracle("jax.scipy.linalg.sqrtm", lambda d: ((_diagonalizable(d),), {}), grad=False,
           rtol=1e-3, atol=1e-3),
    Oracle("jax.scipy.linalg.funm", lambda d: ((_diagonalizable(d),), {}),
           run=lambda L, fn, a: fn(a, L.numpy.exp), grad=False, rtol=1e-3, atol=1e-3),
    Oracle("jax.scipy.linalg.polar", lambda d: ((_conditioned(d, square=True),), {}),
           grad=False, rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.solve_sylvester",
           lambda d: ((_well_conditioned(d), _well_conditioned(d)), {}),
           run=lambda L, fn, a, b: fn(a, b, a[:, :1] * b[:1, :]), grad=False,
           rtol=1e-4, atol=1e-4),
    # ---- jax.scipy.linalg: special matrices
    Oracle("jax.scipy.linalg.toeplitz", lambda d: ((_vector(d),), {"r": _vector(d)})),
    Oracle("jax.scipy.linalg.toeplitz", lambda d: ((d(arrays((2, _n(d)))),), {}), id="batched"),
    Oracle("jax.scipy.linalg.hankel", lambda d: ((_vector(d),), {"r": _vector(d)})),
    Oracle("jax.scipy.linalg.hankel", lambda d: ((_vector(d),), {}), id="no r"),
    Oracle("jax.scipy.linalg.circulant", lambda d: ((d(arrays((_n(d),), min_dims=1)),), {})),
    Oracle("jax.scipy.linalg.companion",
           lambda d: ((np.concatenate([[1.5], _vector(d, _n(d))]).astype(np.float32),), {})),
    Oracle("jax.scipy.linalg.fiedler", lambda d: ((_vector(d),), {}), grad=False),
    Oracle("jax.scipy.linalg.fiedler_companion",
           lambda d: ((np.concatenate([[1.5], _vector(d, _n(d, 1, 6))]).astype(np.float32),),
                      {})),
    Oracle("jax.scipy.linalg.leslie", lambda d: (
        lambda n: ((_vector(d, n), _vector(d, n - 1)), {}))(_n(d, 2, 4))),
    Oracle("jax.scipy.linalg.convolution_matrix",
           lambda d: ((_vector(d),), {"n": _n(d), "mode": d(st.sampled_from(
               ["full", "same", "valid"]))})),
    Oracle("jax.scipy.linalg.block_diag",
           lambda d: ((_matrix(d), d(arrays(())), _vector(d)), {})),
    Oracle("jax.scipy.linalg.dft",
           lambda d: ((_n(d, 0, 5),), {"scale": d(st.sampled_from([None, "sqrtn", "n"]))}),
           grad=False),
    Oracle("jax.scipy.linalg.hadamard", lambda d: ((d(st.sampled_from([1, 2, 4, 8])),), {}),
           grad=False),
    Oracle("jax.scipy.linalg.helmert",
           lambda d: ((_n(d, 1, 5),), {"full": d(st.booleans())}), grad=False),
    Oracle("jax.scipy.linalg.hilbert", lambda d: ((_n(d, 0, 5),), {}), grad=False),
    Oracle("jax.scipy.linalg.invhilbert", lambda d: ((_n(d, 0, 5),), {}), grad=False,
           rtol=1e-4, atol=1e-3),
    Oracle("jax.scipy.linalg.pascal", lambda d: ((_n(d, 0, 5),), {"kind": d(st.sampled_from(
        [None, "lower", "upper"]))}), grad=False),
    Oracle("jax.scipy.linalg.invpascal", lambda d: ((_n(d, 0, 5),), {"kind": d(st.sampled_from(
        [None, "lower", "upper"]))}), grad=False),
]

UNCHECKED: dict[str, str] = {}


# ----------------------------------------------------------------------------
# The names ftorch has had from the start
# ----------------------------------------------------------------------------


def _qr_signs_fixed(L, q, r):
    """``Q`` and ``R`` with ``R``'s diagonal made non-negative (Householder's
    signs are LAPACK's choice)."""
    k = min(r.shape[-2], r.shape[-1])
    sign = L.numpy.sign(L.numpy.diagonal(r[..., :k, :k], axis1=-2, axis2=-1))
    return q[..., :k] * sign[..., None, :], r[..., :k, :] * sign[..., :, None]


def _rhs(d, a, vector=None):
    n = a.shape[-1]
    vector = d(st.booleans()) if vector is None else vector
    return d(arrays((n,) if vector else (*a.shape[:-2], n, _n(d, 1, 3))))


def _triangular(d, lower):
    a = _well_conditioned(d)
    return (np.tril(a) if lower else np.triu(a)).astype(np.float32)


def _solve_triangular_args(d):
    lower = d(st.booleans())
    a = _triangular(d, lower)
    return (a, _rhs(d, a)), {"lower": lower, "trans": d(st.sampled_from([0, 1, "T"]))}


def _lu_solve_run(L, fn, a, b, trans):
    return fn(L.scipy.linalg.lu_factor(a), b, trans=trans)


ORACLE += [
    Oracle("jax.numpy.linalg.cholesky", lambda d: ((_spd(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.cross",
           lambda d: ((d(arrays((2, 3))), d(arrays((3,)))), {"axis": -1})),
    Oracle("jax.numpy.linalg.det", lambda d: ((_well_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.slogdet", lambda d: ((_well_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.inv", lambda d: ((_well_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.solve",
           lambda d: (lambda a: ((a, _rhs(d, a, vector=a.ndim == 2 and d(st.booleans()))), {}))(
               _well_conditioned(d, _batch(d))), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.eigh", lambda d: ((_symmetric(d, _batch(d)),), {}),
           run=lambda L, fn, a: (fn(a)[0], _sign_fixed_columns(L, fn(a)[1])),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.eigvalsh", lambda d: ((_symmetric(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.svd", lambda d: ((_conditioned(d, _batch(d)),), {}),
           run=lambda L, fn, a: (_sign_fixed_columns(L, fn(a, full_matrices=False)[0]),
                                 fn(a, full_matrices=False)[1]), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.qr", lambda d: ((_conditioned(d, _batch(d), square=True),), {}),
           run=lambda L, fn, a: _qr_signs_fixed(L, *fn(a)), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.pinv", lambda d: ((_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.lstsq",
           lambda d: (lambda a: ((a, d(arrays((a.shape[0],)))), {}))(_conditioned(d)),
           run=lambda L, fn, a, b: (fn(a, b)[0], fn(a, b)[2], fn(a, b)[3]),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.matrix_rank", lambda d: ((_conditioned(d, _batch(d)),), {}),
           grad=False),
    Oracle("jax.numpy.linalg.matrix_power",
           lambda d: ((_well_conditioned(d) / 3,), {"n": d(st.integers(-2, 3))}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.multi_dot",
           lambda d: (([_vector(d, 3), _matrix(d, 3, 4), _matrix(d, 4, 2)],), {}),
           rtol=1e-5, atol=1e-4),
    Oracle("jax.numpy.linalg.norm",
           lambda d: ((_conditioned(d),), {"ord": d(st.sampled_from(
               [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]))}), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.norm",
           lambda d: ((d(arrays((3, 4), lo=0.5, hi=3.0)),), {"ord": d(st.sampled_from(
               [None, 1, 2, 3, np.inf])), "axis": d(st.sampled_from([0, 1, -1]))}),
           rtol=1e-4, atol=1e-4, id="vector"),
    Oracle("jax.numpy.linalg.vector_norm",
           lambda d: ((d(arrays((3, 4), lo=0.5, hi=3.0)),), {
               "ord": d(st.sampled_from([1, 2, np.inf])),
               "axis": d(st.sampled_from([None, 0, (0, 1)]))}), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.matrix_norm",
           lambda d: ((_conditioned(d, (2,)),), {"ord": d(st.sampled_from(
               ["fro", "nuc", 1, 2, np.inf]))}), rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.tensorinv",
           lambda d: (((5 * np.eye(4) + d(arrays((4, 4), lo=-1.0, hi=1.0))).astype(
               np.float32).reshape(4, 2, 2),), {"ind": 1}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.numpy.linalg.tensorsolve",
           lambda d: ((np.float32([[3, 1], [0.5, 2]]) + d(arrays((2, 2), lo=-0.3, hi=0.3)),
                       d(arrays((2,)))), {}), rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.det", lambda d: ((_well_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.inv", lambda d: ((_well_conditioned(d, _batch(d)),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.solve",
           lambda d: (lambda a: ((a, _rhs(d, a, vector=False)), {}))(_well_conditioned(d)),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.solve",
           lambda d: (lambda a: ((a, _rhs(d, a, vector=False)), {"assume_a": "pos"}))(_spd(d)),
           run=lambda L, fn, a, b, assume_a: fn(_sym(L, a), b, assume_a=assume_a),
           rtol=1e-4, atol=1e-4, id="pos"),
    Oracle("jax.scipy.linalg.solve_triangular", _solve_triangular_args, rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.cho_solve",
           lambda d: (lambda a: ((a, _rhs(d, a)), {"lower": d(st.booleans())}))(_spd(d)),
           run=lambda L, fn, a, b, lower: fn(
               (L.scipy.linalg.cholesky(_sym(L, a), lower=lower), lower), b),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.lu", lambda d: ((_well_conditioned(d),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.lu_factor", lambda d: ((_well_conditioned(d),), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.linalg.lu_solve",
           lambda d: (lambda a: ((a, _rhs(d, a)), {"trans": d(st.sampled_from([0, 1]))}))(
               _well_conditioned(d)), run=_lu_solve_run, rtol=1e-4, atol=1e-4),
]
