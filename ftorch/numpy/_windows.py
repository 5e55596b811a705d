"""Window functions as in jax.numpy: ``bartlett``, ``blackman``,
``hamming``, ``hanning`` and ``kaiser``, float32 arrays of ``M`` points
(empty for ``M < 1``, ``[1.0]`` for ``M == 1``), symmetric about their
middle. ``kaiser``'s ``beta`` may be traced (and differentiated).

>>> import ftorch.numpy as fnp
>>> fnp.bartlett(5).tolist()
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import math

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.numpy._math import i0, promote_inexact
from ftorch.primitives.creation import static_int
from ftorch.typing import Array, ArrayLike

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _offsets(M: int) -> mx.array | None:
    """The points ``n / (M - 1)`` for ``n = 1 - M, 3 - M, ..., M - 1`` (from
    -1 to 1), or None when ``M < 2`` (the window is then empty or ``[1.0]``)."""
    if M < 2:
        return None
    return mx.arange(1 - M, M, 2, dtype=mx.float32) / (M - 1)


def _short(M: int) -> mx.array:
    return mx.ones((max(M, 0),), dtype=mx.float32)


def _cosine_sum(M: int, coefficients: tuple[float, ...], fname: str) -> mx.array:
    """``sum_k a_k cos(k pi x)`` over the offsets ``x`` of an ``M``-point window."""
    M = static_int(M, fname, "M")
    x = _offsets(M)
    if x is None:
        return _short(M)
    return sum(a * mx.cos(k * math.pi * x) for k, a in enumerate(coefficients))


def bartlett(M: int) -> Array:
    """The triangular (Bartlett) window of ``M`` points, as ``jax.numpy.bartlett``.

    >>> import ftorch.numpy as fnp
    >>> fnp.bartlett(3).tolist()
    [0.0, 1.0, 0.0]
    """
    M = static_int(M, "bartlett", "M")
    x = _offsets(M)
    return _short(M) if x is None else 1.0 - mx.abs(x)


def blackman(M: int) -> Array:
    """The Blackman window ``0.42 + 0.5 cos(pi x) + 0.08 cos(2 pi x)`` of
    ``M`` points, as ``jax.numpy.blackman``.

    >>> import ftorch.numpy as fnp
    >>> [round(v, 4) for v in fnp.blackman(3).tolist()]
    [-0.0, 1.0, -0.0]
    """
    return _cosine_sum(M, (0.42, 0.5, 0.08), "blackman")


def hamming(M: int) -> Array:
    """The Hamming window ``0.54 + 0.46 cos(pi x)`` of ``M`` points, as
    ``jax.numpy.hamming``.

    >>> import ftorch.numpy as fnp
    >>> [round(v, 4) for v in fnp.hamming(3).tolist()]
    [0.08, 1.0, 0.08]
    """
    return _cosine_sum(M, (0.54, 0.46), "hamming")


def hanning(M: int) -> Array:
    """The Hann window ``0.5 + 0.5 cos(pi x)`` of ``M`` points, as
    ``jax.numpy.hanning``.

    >>> import ftorch.numpy as fnp
    >>> [round(v, 4) for v in fnp.hanning(3).tolist()]
    [0.0, 1.0, 0.0]
    """
    return _cosine_sum(M, (0.5, 0.5), "hanning")


def kaiser(M: int, beta: ArrayLike) -> Array:
    """The Kaiser window ``i0(beta sqrt(1 - x**2)) / i0(beta)`` of ``M``
    points, as ``jax.numpy.kaiser``; ``beta`` may be traced.

    >>> import ftorch.numpy as fnp
    >>> [round(v, 4) for v in fnp.kaiser(3, 2.0).tolist()]
    [0.4387, 1.0, 0.4387]
    """
    M = static_int(M, "kaiser", "M")
    (beta,) = promote_inexact("kaiser", beta)
    x = _offsets(M)
    if x is None:
        return _short(M)
    edge = lax.multiply(beta, mx.sqrt(mx.maximum(1.0 - x * x, 0.0)))
    return lax.divide(i0(edge), i0(beta))
