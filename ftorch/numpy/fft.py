"""``ftorch.numpy.fft``, as ``jax.numpy.fft``: discrete Fourier transforms,
differentiable under every transform, over the ``fft`` primitive
(``ftorch.primitives.fourier``).

Every function takes NumPy's arguments: a length ``n`` (or lengths ``s``)
to which the input is cropped or zero-padded, the ``axis`` (or ``axes``),
and ``norm``: ``"backward"`` (the default, ``None`` too: the forward
transform is unscaled, the inverse scaled by ``1/n``), ``"ortho"``
(``1/sqrt(n)`` both ways) or ``"forward"`` (``1/n`` on the forward
transform).

Precision. MLX has no complex128: transforms compute in complex64, and
their real results are float32. A float64 input is refused rather than
silently rounded; cast it (``x.astype(mx.float32)``) to compute in single
precision. Integer and boolean inputs are converted to float32 (complex64).

Derivatives of complex functions follow JAX's convention (see
``ftorch.grad``): a complex value is differentiated as the pair of its real
and imaginary parts; ``ft.jvp`` applies the real-linear derivative,
``ft.vjp`` its transpose for the pairing ``<c, t> = real(sum(c * t))``, and
``ft.grad`` of a real loss of a complex input ``z`` gives
``dL/dre(z) - 1j * dL/dim(z)`` (so ``grad(|z|**2) = 2 * conj(z)``). Every
transform here is linear, so e.g. the gradient of ``sum(|rfft(x)|**2)`` is
exact to float32 rounding.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> x = mx.array([1.0, 2.0, 0.0, -1.0])
>>> fnp.fft.rfft(x).tolist()
[(2+0j), (1-3j), 0j]
>>> ft.grad(lambda x: fnp.sum(fnp.real(fnp.fft.rfft(x)) ** 2))(x).tolist()
[6.0, 4.0, 2.0, 4.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import as_array, aval_of, is_complex, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives.fourier import fft as dft
from ftorch.primitives.reduction import normalize_axis

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")


# ----------------------------------------------------------------------------
# Argument handling
# ----------------------------------------------------------------------------


def _as_input(a: Any, complex_input: bool, fname: str) -> Any:
    """``a`` as complex64 (``complex_input``) or float32, refusing float64."""
    a = as_array(a, f"{fname}: a")
    dtype = aval_of(a).dtype
    if dtype == mx.float64:
        raise TypeError(
            f"{fname}: a has dtype float64, but MLX has no complex128 and the transform would "
            "round it to single precision; cast it with a.astype(mx.float32) to accept that")
    if complex_input:
        return a if is_complex(dtype) else lax.astype(a, mx.complex64)
    if is_complex(dtype):
        raise TypeError(f"{fname}: a must be real, got dtype {dtype} (use fft for complex input)")
    return a if dtype == mx.float32 else lax.astype(a, mx.float32)


def _check_norm(norm: str | None, fname: str) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"{fname}: norm must be one of {_NORMS} or None, got {norm!r}")
    return norm


def _axes_and_lengths(shape: tuple[int, ...], s: Sequence[int] | None,
                      axes: Sequence[int] | None, fname: str,
                      inverse_real: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Non-negative ``axes`` (in the given order: the last one is the real
    axis of rfftn/irfftn) and the transform length along each."""
    ndim = len(shape)
    if s is not None:
        if isinstance(s, int) or not isinstance(s, (tuple, list)):
            raise TypeError(f"{fname}: s must be a sequence of ints, got {s!r}")
        s = tuple(s)
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
        if s is not None and len(s) > ndim:
            raise ValueError(f"{fname}: s={s} has more entries than the input has axes ({ndim})")
    elif isinstance(axes, int) or not isinstance(axes, (tuple, list)):
        raise TypeError(f"{fname}: axes must be a sequence of ints, got {axes!r}")
    axes = tuple(normalize_axis(a, ndim, fname) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axis in axes={axes}")
    if not axes:
        raise ValueError(f"{fname}: no axes to transform (an input of ndim 0, or axes=())")
    if s is None:
        lengths = [shape[a] for a in axes]
        if inverse_real:
            lengths[-1] = 2 * (shape[axes[-1]] - 1)
    else:
        if len(s) != len(axes):
            raise ValueError(f"{fname}: s={s} and axes={axes} must have the same length")
        lengths = list(s)
    for a, n in zip(axes, lengths):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{fname}: lengths must be ints, got {n!r}")
        if n < 1:
            hint = (" (the default output length of an irfft of a length-1 axis is 0: "
                    "give n)" if inverse_real and s is None else "")
            raise ValueError(f"{fname}: invalid transform length {n} along axis {a}; "
                             f"lengths must be >= 1{hint}")
    return axes, tuple(lengths)


def _one_axis(n: int | None, axis: int, fname: str) -> tuple[tuple[int] | None, tuple[int]]:
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{fname}: axis must be an int, got {axis!r} (the n-dimensional "
                        "transforms take axes)")
    return (None if n is None else (n,)), (axis,)


def _resize(x: Any, axis: int, n: int) -> Any:
    """``x`` cropped or zero-padded at the end of ``axis`` to length ``n``."""
    shape = aval_of(x).shape
    d = shape[axis]
    if d == n:
        return x
    if d > n:
        return lax.static_slice(x, (slice(None),) * axis + (slice(0, n),))
    slices = tuple((0, e, 1) for e in shape[:axis]) + ((0, d, 1),)
    return lax.slice_transpose(x, slices, (*shape[:axis], n, *shape[axis + 1:]))


def _transform(a: Any, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str | None,
               fft_type: str, fname: str) -> Any:
    """The ``fft_type`` transform of ``a`` over ``axes`` with lengths ``s``."""
    norm = _check_norm(norm, fname)
    a = _as_input(a, fft_type != "rfft", fname)
    shape = aval_of(a).shape
    axes, lengths = _axes_and_lengths(shape, s, axes, fname, inverse_real=fft_type == "irfft")
    # The transformed axes go last, in order, as the primitive reads them.
    ndim, k = len(shape), len(axes)
    perm = tuple(i for i in range(ndim) if i not in axes) + axes
    x = a if perm == tuple(range(ndim)) else lax.transpose(a, perm)
    want = lengths if fft_type != "irfft" else (*lengths[:-1], lengths[-1] // 2 + 1)
    for i, n in enumerate(want):
        x = _resize(x, ndim - k + i, n)
    out = dft(x, fft_type, lengths)
    scale = _scale(norm, math.prod(lengths), inverse=fft_type in ("ifft", "irfft"))
    if scale != 1.0:
        out = lax.multiply(out, mx.array(scale, mx.float32))
    if perm != tuple(range(ndim)):
        out = lax.transpose(out, tuple(perm.index(i) for i in range(ndim)))
    return out


def _scale(norm: str, n: int, inverse: bool) -> float:
    """The factor on the primitive's result (``ifft`` already divides by n)."""
    if norm == "backward":
        return 1.0
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1.0 / math.sqrt(n)
    return float(n) if inverse else 1.0 / n


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# ----------------------------------------------------------------------------
# One-dimensional transforms
# ----------------------------------------------------------------------------


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional DFT of ``a`` along ``axis``, cropped or zero-padded
    to length ``n``, as ``jax.numpy.fft.fft``; complex64.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.fft(mx.array([1.0, 0.0, 0.0, 0.0]), n=2).tolist()
    [(1+0j), (1+0j)]
    """
    return _transform(a, *_one_axis(n, axis, "fft"), norm, "fft", "fft")


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``fft`` along ``axis`` (length ``n``), as
    ``jax.numpy.fft.ifft``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.ifft(mx.array([2.0, 0.0])).tolist()
    [(1+0j), (1+0j)]
    """
    return _transform(a, *_one_axis(n, axis, "ifft"), norm, "ifft", "ifft")


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The DFT of a real ``a`` along ``axis``: its ``n // 2 + 1`` non-negative
    frequencies, as ``jax.numpy.fft.rfft``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.rfft(mx.array([1.0, 1.0, 1.0])).tolist()
    [(3+0j), 0j]
    """
    return _transform(a, *_one_axis(n, axis, "rfft"), norm, "rfft", "rfft")


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real signal of length ``n`` (default ``2 * (m - 1)`` for ``m``
    input frequencies) whose ``rfft`` is ``a``, as ``jax.numpy.fft.irfft``;
    float32. The imaginary parts of the zero-frequency bin (and, for an even
    ``n``, of the Nyquist bin) are ignored.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.irfft(mx.array([3.0, 0.0]), n=3).tolist()
    [1.0, 1.0, 1.0]
    """
    return _transform(a, *_one_axis(n, axis, "irfft"), norm, "irfft", "irfft")


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The real DFT of a signal with Hermitian symmetry given by its first
    half ``a``: ``irfft(conj(a), n)`` scaled as a forward transform, as
    ``jax.numpy.fft.hfft``; float32.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.hfft(mx.array([1.0, 0.0]), n=3).tolist()
    [1.0, 1.0, 1.0]
    """
    norm = _check_norm(norm, "hfft")
    a = _as_input(a, True, "hfft")
    return _transform(lax.conj(a), *_one_axis(n, axis, "hfft"), _SWAP[norm], "irfft", "hfft")


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``hfft``: ``conj(rfft(a, n))`` scaled as an inverse
    transform, as ``jax.numpy.fft.ihfft``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.hfft(fnp.fft.ihfft(mx.array([1.0, 2.0, 3.0])), n=3).tolist()
    [1.0, 2.0, 3.0]
    """
    norm = _check_norm(norm, "ihfft")
    return lax.conj(_transform(a, *_one_axis(n, axis, "ihfft"), _SWAP[norm], "rfft", "ihfft"))


# ----------------------------------------------------------------------------
# Two- and n-dimensional transforms
# ----------------------------------------------------------------------------


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The n-dimensional DFT over ``axes`` (default: the last ``len(s)``, or
    all), each cropped or zero-padded to the lengths ``s``, as
    ``jax.numpy.fft.fftn``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.fftn(mx.ones((2, 2))).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _transform(a, s, axes, norm, "fft", "fftn")


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The inverse of ``fftn``, as ``jax.numpy.fft.ifftn``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.ifftn(mx.array([[4.0, 0.0], [0.0, 0.0]])).tolist()[1]
    [(1+0j), (1+0j)]
    """
    return _transform(a, s, axes, norm, "ifft", "ifftn")


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The n-dimensional DFT of a real ``a``: the last of ``axes`` keeps its
    ``n // 2 + 1`` non-negative frequencies, as ``jax.numpy.fft.rfftn``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.rfftn(mx.ones((2, 4))).shape
    (2, 3)
    """
    return _transform(a, s, axes, norm, "rfft", "rfftn")


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """The inverse of ``rfftn``: ``s`` gives the output lengths (the last
    defaults to ``2 * (m - 1)``), as ``jax.numpy.fft.irfftn``; float32.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.irfftn(fnp.fft.rfftn(mx.ones((2, 4)))).tolist()[0]
    [1.0, 1.0, 1.0, 1.0]
    """
    return _transform(a, s, axes, norm, "irfft", "irfftn")


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """``fftn`` over two axes (the last two by default), as ``jax.numpy.fft.fft2``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.fft2(mx.ones((3, 2, 2)))[0].tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _transform(a, s, _two(axes, "fft2"), norm, "fft", "fft2")


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """``ifftn`` over two axes, as ``jax.numpy.fft.ifft2``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.ifft2(mx.array([[4.0, 0.0], [0.0, 0.0]])).tolist()[0]
    [(1+0j), (1+0j)]
    """
    return _transform(a, s, _two(axes, "ifft2"), norm, "ifft", "ifft2")


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """``rfftn`` over two axes, as ``jax.numpy.fft.rfft2``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.rfft2(mx.ones((2, 4))).shape
    (2, 3)
    """
    return _transform(a, s, _two(axes, "rfft2"), norm, "rfft", "rfft2")


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """``irfftn`` over two axes, as ``jax.numpy.fft.irfft2``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.irfft2(mx.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]])).tolist()[1]
    [1.0, 1.0, 1.0, 1.0]
    """
    return _transform(a, s, _two(axes, "irfft2"), norm, "irfft", "irfft2")


def _two(axes: Any, fname: str) -> Any:
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise ValueError(f"{fname}: axes must be a pair of axes, got {axes!r} "
                         f"(use {fname[:-1]}n for other counts)")
    return axes


# ----------------------------------------------------------------------------
# Frequencies and shifts
# ----------------------------------------------------------------------------


def _freq_dtype(dtype: DTypeLike | None, fname: str) -> mx.Dtype:
    dtype = mx.float32 if dtype is None else to_mlx_dtype(dtype, f"{fname}: dtype")
    if not is_floating(dtype):
        raise TypeError(f"{fname}: dtype must be a floating dtype, got {dtype}")
    return dtype


def _check_length(n: Any, fname: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{fname}: n must be an int, got {n!r}")
    if n < 1:
        raise ValueError(f"{fname}: n must be >= 1, got {n}")
    return n


def fftfreq(n: int, d: float = 1.0, *, dtype: DTypeLike | None = None) -> mx.array:
    """The frequencies of the ``n`` bins of ``fft`` for sample spacing ``d``
    (cycles per unit): ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -n//2, ..., -1] / (d * n)``,
    as ``jax.numpy.fft.fftfreq``; float32 unless ``dtype``.

    >>> import ftorch.numpy as fnp
    >>> fnp.fft.fftfreq(4, d=0.5).tolist()
    [0.0, 0.5, -1.0, -0.5]
    """
    n = _check_length(n, "fftfreq")
    dtype = _freq_dtype(dtype, "fftfreq")
    k = mx.concatenate([mx.arange(0, (n - 1) // 2 + 1), mx.arange(-(n // 2), 0)])
    return lax.divide(lax.astype(k, dtype), lax.astype(lax.multiply(d, n), dtype))


def rfftfreq(n: int, d: float = 1.0, *, dtype: DTypeLike | None = None) -> mx.array:
    """The frequencies of the ``n // 2 + 1`` bins of ``rfft``:
    ``[0, 1, ..., n // 2] / (d * n)``, as ``jax.numpy.fft.rfftfreq``.

    >>> import ftorch.numpy as fnp
    >>> fnp.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    n = _check_length(n, "rfftfreq")
    dtype = _freq_dtype(dtype, "rfftfreq")
    k = mx.arange(0, n // 2 + 1)
    return lax.divide(lax.astype(k, dtype), lax.astype(lax.multiply(d, n), dtype))


def _shift(x: Any, axes: int | Sequence[int] | None, inverse: bool, fname: str) -> Any:
    x = as_array(x, f"{fname}: x")
    shape = aval_of(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(a, len(shape), fname) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: repeated axis in axes={axes}")
    if not axes:
        return x
    shift = tuple(-(shape[a] // 2) if inverse else shape[a] // 2 for a in axes)
    return lax.roll(x, shift, axes)


def fftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """``x`` rolled so that the zero frequency is in the middle of ``axes``
    (default: all), as ``jax.numpy.fft.fftshift``.

    >>> import ftorch.numpy as fnp
    >>> fnp.fft.fftshift(fnp.fft.fftfreq(5)).tolist()
    [-0.4000000059604645, -0.20000000298023224, 0.0, 0.20000000298023224, 0.4000000059604645]
    """
    return _shift(x, axes, False, "fftshift")


def ifftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """The inverse of ``fftshift``, as ``jax.numpy.fft.ifftshift``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.fft.ifftshift(mx.array([-2, -1, 0, 1, 2])).tolist()
    [0, 1, 2, -2, -1]
    """
    return _shift(x, axes, True, "ifftshift")

