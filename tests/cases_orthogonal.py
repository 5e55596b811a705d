"""Rule cases for the orthogonal decompositions (qr, eigh, svd, pinv) and
their public wrappers in ftorch.numpy.linalg, on well-conditioned inputs
with well-separated spectra (eigenvalues and singular values at least 0.5
apart, singular values at least 0.5).

Eigenvectors and singular vectors are defined up to sign, and finite
differences would see a sign flip as a jump: the cases return quantities
that do not depend on the signs (``V diag(c) V^T`` with fixed distinct ``c``,
which still exercises every coupling between vectors; ``U diag(c) Vh`` for
the coupled signs of the SVD). QR factors are normalised to a positive
diagonal of ``R`` for the same reason (Householder's sign choice flips where
a pivot crosses zero)."""

import mlx.core as mx
import numpy as np
from harness import Case, floats
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch.numpy as fnp
import ftorch.primitives as lax

# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


def _orthogonal(g: np.ndarray) -> np.ndarray:
    """An orthogonal matrix (stack) from any square matrix (stack)."""
    return np.linalg.qr(g)[0]


def _separated(draw, batch, k, start):
    """Values ``start + 0.6 i + [0, 0.1]``, i < k: at least 0.5 apart."""
    jitter = draw(floats((*batch, k), 0.0, 0.1))
    return start + 0.6 * np.arange(k) + jitter


@st.composite
def symmetric(draw, max_batch=2, lo=-2.0, hi=1.0):
    """Symmetric matrices ``Q diag(w) Q^T`` (batch..., n, n), eigenvalues >= 0.5
    apart, the smallest in [lo, hi]."""
    n = draw(st.integers(1, 4))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=max_batch, max_side=3))
    q = _orthogonal(draw(floats((*batch, n, n), -1.0, 1.0)))
    w = _separated(draw, batch, n, draw(st.floats(lo, hi)))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


@st.composite
def conditioned(draw, max_batch=2, square=False):
    """Matrices ``U diag(s) V^T`` (batch..., m, n), singular values >= 0.5 and >= 0.5 apart."""
    m = draw(st.integers(1, 4))
    n = m if square else draw(st.integers(1, 4))
    k = min(m, n)
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=max_batch, max_side=3))
    u = _orthogonal(draw(floats((*batch, m, m), -1.0, 1.0)))[..., :k]
    v = _orthogonal(draw(floats((*batch, n, n), -1.0, 1.0)))[..., :k]
    s = _separated(draw, batch, k, 0.5)
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


@st.composite
def dominant(draw, max_batch=2, tall=None):
    """Matrices (batch..., m, n) with a dominant leading diagonal: their
    leading min(m, n) columns are well-conditioned (what QR's derivative needs)."""
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    if tall is not None and (m >= n) != tall:
        m, n = n, m
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=max_batch, max_side=3))
    return draw(floats((*batch, m, n), -0.5, 0.5)) + 3.0 * np.eye(m, n)


# ----------------------------------------------------------------------------
# Sign-free views of the factors
# ----------------------------------------------------------------------------


def _weights(k: int, dtype) -> mx.array:
    return mx.arange(1.0, k + 1.0, dtype=dtype)


def _gram(x, c):
    """``x diag(c) x^T``: the same for every choice of signs of ``x``'s columns."""
    return fnp.matmul(x * c, fnp.swapaxes(x, -1, -2))


def _eigh_view(w, v):
    return w, _gram(v, _weights(v.shape[-1], v.dtype))


def _svd_view(u, s, vh):
    c = _weights(s.shape[-1], s.dtype)
    v = fnp.swapaxes(vh, -1, -2)
    return s, _gram(u, c), _gram(v, c), fnp.matmul(u * c, vh)


def _qr_view(q, r):
    """Q and R with R's diagonal made positive."""
    k = min(r.shape[-2], r.shape[-1])
    d = fnp.sign(fnp.diagonal(r[..., :k, :k], axis1=-2, axis2=-1))
    return q[..., :k] * d[..., None, :], r[..., :k, :] * d[..., :, None]


def _full_svd_view(a):
    u, s, vh = fnp.linalg.svd(a)
    return _svd_view(u, s, vh)


CASES = [
    # qr
    Case("qr", lambda a: _qr_view(*fnp.linalg.qr(a)), st.tuples(dominant(tall=True)),
         name="linalg.qr[tall]"),
    Case("qr", lambda a: _qr_view(*fnp.linalg.qr(a)), st.tuples(dominant(tall=False)),
         name="linalg.qr[wide]"),
    Case("qr", lambda a: _qr_view(*fnp.linalg.qr(a, mode="complete")),
         st.tuples(dominant(tall=False)), name="linalg.qr[complete,wide]"),
    Case("qr", lambda a: _qr_view(fnp.linalg.qr(a).Q, fnp.linalg.qr(a, mode="r"))[1],
         st.tuples(dominant()), name="linalg.qr[r]"),
    Case("qr", lambda a: _qr_view(*lax.qr(a, full_matrices=False)),
         st.tuples(conditioned(square=True)), name="qr"),
    # eigh
    Case("eigh", lambda a: _eigh_view(*fnp.linalg.eigh(a)), st.tuples(symmetric()),
         name="linalg.eigh"),
    Case("eigh", fnp.linalg.eigvalsh, st.tuples(symmetric()), name="linalg.eigvalsh"),
    # The primitive reads one triangle only: the other is garbage here.
    Case("eigh", lambda a: _eigh_view(*lax.eigh(a + fnp.tril(fnp.ones_like(a), -1) * 7.0,
                                                 lower=False, symmetrize_input=False)[::-1]),
         st.tuples(symmetric()), name="eigh[upper]"),
    Case("eigh", lambda a: fnp.linalg.eigvalsh(a, UPLO="U", symmetrize_input=False),
         st.tuples(symmetric()), name="linalg.eigvalsh[U,no symmetrize]"),
    # svd
    Case("svd", lambda a: _svd_view(*fnp.linalg.svd(a, full_matrices=False)),
         st.tuples(conditioned()), name="linalg.svd[reduced]"),
    Case("svd", _full_svd_view, st.tuples(conditioned(square=True)),
         name="linalg.svd[full,square]"),
    Case("svd", lambda a: fnp.linalg.svd(a, compute_uv=False), st.tuples(conditioned()),
         name="linalg.svd[s]"),
    Case("svd", lambda a: _svd_view(*fnp.linalg.svd(a, full_matrices=False, hermitian=True)),
         st.tuples(symmetric(max_batch=1, lo=0.5)), name="linalg.svd[hermitian]"),
    # pinv and what is built on it
    Case("pinv", fnp.linalg.pinv, st.tuples(conditioned()), name="linalg.pinv"),
    Case("pinv", lambda a: fnp.linalg.pinv(a, hermitian=True),
         st.tuples(symmetric(lo=0.5)),
         name="linalg.pinv[hermitian]"),
    Case("pinv", lambda a, b: fnp.linalg.lstsq(a, b)[:2] + (fnp.linalg.lstsq(a, b)[3],),
         st.tuples(conditioned(max_batch=0), st.integers(1, 3)).flatmap(
             lambda ak: st.tuples(st.just(ak[0]), floats((ak[0].shape[0], ak[1])))),
         name="linalg.lstsq"),
    Case("pinv", lambda a, b: fnp.linalg.lstsq(a, b)[0],
         st.tuples(conditioned(max_batch=0)).flatmap(
             lambda a: st.tuples(st.just(a[0]), floats((a[0].shape[0],)))),
         name="linalg.lstsq[vector]"),
]
