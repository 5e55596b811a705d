"""Polynomials as coefficient arrays, highest power first, as in jax.numpy:
``poly``, ``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``,
``polyint``, ``polyval``, ``polyfit`` and ``roots``.

The arithmetic is built from slices, pads and ``convolve``, so it is
differentiable and traceable; ``roots`` (and ``poly`` of a matrix) need
eigenvalues of a general matrix, which MLX computes on the CPU only and
without derivatives, so they run eagerly on concrete values.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.polyval(mx.array([1.0, -3.0, 2.0]), mx.array([0.0, 1.0, 3.0])).tolist()
[2.0, 0.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Tracer
from ftorch.numpy import (
    _creation,
    _elementwise,
    _index_tricks,
    _shape,
    _stacking,
    _statistics,
    linalg,
)

__all__ = [
    "poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyval",
    "polyfit", "roots",
]


def _coefficients(p: Any, fname: str, what: str = "p") -> Any:
    p = _creation.asarray(p)
    if p.ndim != 1:
        raise ValueError(f"{fname}: {what} must be a 1-D array of coefficients, got shape "
                         f"{tuple(p.shape)}")
    return p


def _pad_front(p: Any, n: int) -> Any:
    return lax.pad(p, 0, ((n - p.shape[0], 0),)) if p.shape[0] < n else p


def _strip_leading_zeros(p: Any, fname: str) -> Any:
    """``p`` without its leading zero coefficients (read off its values)."""
    values = _index_tricks.concrete(p, fname, "trimming zeros needs the values of the "
                                              "coefficients; pass trim_leading_zeros=False")
    nonzero = np.flatnonzero(values)
    start = int(nonzero[0]) if nonzero.size else max(values.shape[0] - 1, 0)
    return p[start:] if start else p


def _eigenvalues(matrix: Any, fname: str) -> mx.array:
    """The eigenvalues (complex64) of a concrete square matrix, on MLX's CPU."""
    values = _index_tricks.concrete(matrix, fname, "eigenvalues of a general matrix run "
                                                   "eagerly only (MLX has no derivative rule "
                                                   "for them)")
    a = mx.array(values.astype(np.float32) if values.dtype != np.complex64 else values)
    return mx.linalg.eigvals(a, stream=mx.cpu)


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (1-D),
    or the characteristic polynomial of a square matrix (from its
    eigenvalues, eagerly, on MLX's CPU), as ``numpy.poly``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.poly(mx.array([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    z = _statistics._inexact(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        z = _eigenvalues(z, "poly")
    elif z.ndim != 1 and not (z.ndim == 2 and not z.size):
        raise ValueError(f"poly: seq_of_zeros must be 1-D or a square matrix, got shape "
                         f"{tuple(z.shape)}")
    if z.ndim == 2:
        z = lax.reshape(z, (0,))
    coeffs = lax.full((1,), 1, z.dtype)
    # Each root r multiplies by (x - r): a = [a, 0] - r * [0, a].
    for i in range(z.shape[0]):
        shifted = lax.pad(coeffs, 0, ((1, 0),))
        coeffs = lax.subtract(lax.pad(coeffs, 0, ((0, 1),)), lax.multiply(z[i], shifted))
    return coeffs


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.polyadd(mx.array([1, 2]), mx.array([1, 0, 3])).tolist()
    [1, 1, 5]
    """
    a1, a2 = _coefficients(a1, "polyadd", "a1"), _coefficients(a2, "polyadd", "a2")
    n = max(a1.shape[0], a2.shape[0])
    return _elementwise.add(_pad_front(a1, n), _pad_front(a2, n))


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.polysub(mx.array([1, 2]), mx.array([1, 0, 3])).tolist()
    [-1, 1, -1]
    """
    a1, a2 = _coefficients(a1, "polysub", "a1"), _coefficients(a2, "polysub", "a2")
    n = max(a1.shape[0], a2.shape[0])
    return _elementwise.subtract(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (the convolution of their
    coefficients; floating, as ``convolve``); ``trim_leading_zeros`` drops
    the inputs' leading zeros first (reading their values).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.polymul(mx.array([1.0, 2.0]), mx.array([1.0, -2.0])).tolist()
    [1.0, 0.0, -4.0]
    """
    a1 = _statistics._inexact(_stacking.atleast_1d(a1))
    a2 = _statistics._inexact(_stacking.atleast_1d(a2))
    _coefficients(a1, "polymul", "a1")
    _coefficients(a2, "polymul", "a2")
    if trim_leading_zeros:
        a1, a2 = _strip_leading_zeros(a1, "polymul"), _strip_leading_zeros(a2, "polymul")
    return _statistics.convolve(a1, a2)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """``(quotient, remainder)`` of the polynomial division of ``u`` by
    ``v``, by long division (the remainder keeps ``u``'s length, leading
    zeros included, as in jax.numpy; ``trim_leading_zeros`` drops them,
    reading the values).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> q, r = fnp.polydiv(mx.array([1.0, -3.0, 2.0]), mx.array([1.0, -1.0]))
    >>> q.tolist(), r.tolist()
    ([1.0, -2.0], [0.0, 0.0, 0.0])
    """
    u, v = _statistics._promote_inexact(u, v)
    _coefficients(u, "polydiv", "u")
    _coefficients(v, "polydiv", "v")
    if not v.shape[0]:
        raise ValueError("polydiv: v must have at least one coefficient")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = lax.reciprocal(v[0])
    rem = u
    quotient = []
    for k in range(m - n + 1):
        d = lax.multiply(scale, rem[k])
        quotient.append(d)
        # rem[k:k + n + 1] -= d * v
        rem = lax.subtract(rem, lax.pad(lax.multiply(d, v), 0, ((k, m - n - k),)))
    q = _shape.stack(quotient) if quotient else lax.zeros((1,), u.dtype)
    if trim_leading_zeros:
        rem = _strip_leading_zeros(rem, "polydiv")
    return q, rem


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of the polynomial ``p`` (floating).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.polyder(mx.array([1.0, 2.0, 3.0, 4.0])).tolist()
    [3.0, 4.0, 3.0]
    """
    p = _statistics._inexact(_coefficients(p, "polyder"))
    m = _shape._index(m, "polyder", "m")
    if m < 0:
        raise ValueError(f"polyder: m must not be negative, got {m}")
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return lax.zeros((0,), p.dtype)
        powers = mx.arange(n - 1, 0, -1).astype(p.dtype)
        p = lax.multiply(p[:-1], powers)
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of the polynomial ``p`` (floating), with
    integration constants ``k`` (a scalar for all, or one per integration,
    the first used first; default 0).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.polyint(mx.array([3.0, 2.0]), k=5.0).tolist()
    [1.5, 2.0, 5.0]
    """
    p = _statistics._inexact(_coefficients(p, "polyint"))
    m = _shape._index(m, "polyint", "m")
    if m < 0:
        raise ValueError(f"polyint: m must not be negative, got {m}")
    if m == 0:
        return p
    k = lax.zeros((m,), p.dtype) if k is None else lax.astype(
        _stacking.atleast_1d(_creation.asarray(k)), p.dtype)
    if k.ndim != 1 or k.shape[0] not in (1, m):
        raise ValueError(f"polyint: k must be a scalar or have m={m} values, got shape "
                         f"{tuple(k.shape)}")
    if k.shape[0] == 1:
        k = lax.broadcast_to(k, (m,))
    for i in range(m):
        n = p.shape[0]
        divisors = mx.arange(n, 0, -1).astype(p.dtype)
        p = _shape.concatenate([lax.divide(p, divisors), k[i:i + 1]], 0)
    return p


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial ``p`` evaluated at ``x``, by Horner's scheme
    (``unroll`` is accepted for JAX's signature; the loop is unrolled).

    >>> import ftorch.numpy as fnp
    >>> fnp.polyval([1, 2, 3], 2).item()
    11
    """
    p = _coefficients(p, "polyval")
    x = _creation.asarray(x)
    dtype = _creation.result_type(p, x)
    y = lax.zeros(tuple(x.shape), dtype)
    x = lax.astype(x, dtype)
    for i in range(p.shape[0]):
        y = lax.add(lax.multiply(y, x), lax.astype(p[i], dtype))
    return y


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool | str = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through the points
    ``(x, y)`` (``y`` may hold several columns), as ``numpy.polyfit``:
    optionally weighted by ``w``; ``full`` also returns the residuals, the
    rank, the singular values and ``rcond``; ``cov`` the covariance of the
    coefficients (unscaled with ``cov="unscaled"``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [round(c, 3) for c in fnp.polyfit(mx.array([0.0, 1.0, 2.0]),
    ...                                   mx.array([1.0, 3.0, 5.0]), 1).tolist()]
    [2.0, 1.0]
    """
    x, y = _statistics._promote_inexact(x, y)
    deg = _shape._index(deg, "polyfit", "deg")
    if deg < 0:
        raise ValueError(f"polyfit: deg must not be negative, got {deg}")
    if x.ndim != 1 or not x.shape[0]:
        raise ValueError(f"polyfit: x must be a non-empty 1-D array, got shape "
                         f"{tuple(x.shape)}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise ValueError(f"polyfit: y must be 1-D or 2-D with x's length {x.shape[0]}, got "
                         f"shape {tuple(y.shape)}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.float32).eps)
    lhs = _statistics.vander(x, order)
    rhs = y
    if w is not None:
        w = lax.astype(_creation.asarray(w), x.dtype)
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise ValueError(f"polyfit: w must be 1-D with x's length {x.shape[0]}, got "
                             f"shape {tuple(w.shape)}")
        lhs = lax.multiply(lhs, lax.reshape(w, (w.shape[0], 1)))
        rhs = lax.multiply(rhs, w if y.ndim == 1 else lax.reshape(w, (w.shape[0], 1)))
    # Columns scaled to unit norm: a better conditioned least-squares problem.
    scale = lax.sqrt(lax.sum(lax.multiply(lhs, lhs), (0,)))
    lhs = lax.divide(lhs, scale)
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = lax.divide(c, scale if c.ndim == 1 else lax.reshape(scale, (order, 1)))
    if full:
        return c, resids, rank, s, lax.full((), rcond, x.dtype)
    if not cov:
        return c
    base = lax.divide(linalg.inv(_shape.transpose(lhs) @ lhs),
                      lax.multiply(lax.reshape(scale, (order, 1)), lax.reshape(scale, (1, order))))
    if cov == "unscaled":
        factor = lax.full((), 1.0, x.dtype)
    else:
        if x.shape[0] <= order:
            raise ValueError("polyfit: the data must have more points than the order to "
                             "scale the covariance")
        factor = lax.divide(resids, x.shape[0] - order)
    if y.ndim == 1:
        return c, lax.multiply(base, factor)
    return c, lax.multiply(lax.expand_dims(base, (2,)), factor)


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots (complex64) of the polynomial ``p``: the eigenvalues of its
    companion matrix, computed eagerly on MLX's CPU (MLX has no general
    eigenvalue kernel on the GPU, nor a derivative for it), in MLX's order.
    ``strip_zeros`` drops leading zero coefficients; trailing zeros give
    roots at 0, as ``numpy.roots``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> sorted(r.real for r in fnp.roots(mx.array([1.0, -3.0, 2.0])).tolist())
    [1.0, 2.0]
    """
    p = _coefficients(p, "roots")
    if isinstance(p, Tracer):
        p = mx.array(_index_tricks.concrete(p, "roots", "roots run eagerly only"))
    values = np.array(p.astype(mx.float32) if p.dtype != mx.complex64 else p)
    zeros_at_end = 0
    if strip_zeros:
        nonzero = np.flatnonzero(values)
        if not nonzero.size:
            return mx.zeros((0,), mx.complex64)
        zeros_at_end = values.shape[0] - 1 - int(nonzero[-1])
        values = values[nonzero[0]:nonzero[-1] + 1]
    n = values.shape[0] - 1
    if n < 1:
        found = mx.zeros((0,), mx.complex64)
    else:
        companion = np.eye(n, k=-1, dtype=values.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            companion[0] = -values[1:] / values[0]
        found = _eigenvalues(companion, "roots")
    if zeros_at_end:
        found = mx.concatenate([found, mx.zeros((zeros_at_end,), mx.complex64)])
    return found
