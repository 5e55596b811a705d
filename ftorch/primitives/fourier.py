"""The discrete Fourier transform over trailing axes, as ``jax.lax.fft``;
the primitive layer.

``fft(x, fft_type, fft_lengths)`` transforms the last ``len(fft_lengths)``
axes of ``x``, which must already have the lengths the transform needs (no
padding, cropping or normalisation here: ``ftorch.numpy.fft`` does those):

- ``"fft"``: complex to complex, unnormalised; trailing shape ``fft_lengths``.
- ``"ifft"``: its inverse, scaled by ``1 / prod(fft_lengths)``.
- ``"rfft"``: float32 to complex, the ``n // 2 + 1`` non-negative
  frequencies of the last axis.
- ``"irfft"``: complex to float32, the inverse of ``"rfft"``: the input's
  last axis has ``fft_lengths[-1] // 2 + 1`` entries, the output
  ``fft_lengths[-1]``. The imaginary parts of the zero-frequency (and for an
  even length, the Nyquist) entries are ignored, as in NumPy.

MLX has no complex128, so every transform computes in single precision.

The four are linear over the reals. Their VJPs are the transposes for the
pairing ``<c, t> = real(sum(c * t))`` (see ``ftorch.grad``): the DFT matrix is
symmetric, so ``"fft"`` and ``"ifft"`` are their own transposes; ``"rfft"``
(crop to the first ``n // 2 + 1`` bins of the full transform of a real
input) transposes to ``real(fft(zero-pad(ct)))``; ``"irfft"`` (which counts
each bin but the zero-frequency and Nyquist ones twice) transposes to
``m * ifft(ct)[..., :n // 2 + 1]`` with ``m`` 1 at those bins and 2 elsewhere.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.real(lax.fft(mx.array([1.0, 2.0, 3.0, 4.0]), "rfft", (4,))).tolist()
[10.0, -2.0, -2.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of, format_aval, is_complex
from ftorch.primitives._rules import linear, move_bdim

__all__ = ["fft", "FFT_TYPES"]

#: The transform kinds ``fft`` takes, as ``jax.lax.FftType``'s members.
FFT_TYPES = ("fft", "ifft", "rfft", "irfft")


def _fft_impl(x: mx.array, *, fft_type: str, fft_lengths: tuple[int, ...]) -> mx.array:
    k = len(fft_lengths)
    axes = list(range(x.ndim - k, x.ndim))
    if fft_type == "fft":
        return mx.fft.fftn(x, axes=axes)
    if fft_type == "ifft":
        return mx.fft.ifftn(x, axes=axes)
    if fft_type == "rfft":
        return mx.fft.rfftn(x, axes=axes)
    return mx.fft.irfftn(x, s=list(fft_lengths), axes=axes)


def _pad_last(x: Any, n: int) -> Any:
    """``x`` zero-padded at the end of its last axis to length ``n``."""
    shape = aval_of(x).shape
    slices = tuple((0, d, 1) for d in shape[:-1]) + ((0, shape[-1], 1),)
    return lax.slice_transpose(x, slices, (*shape[:-1], n))


def _crop_last(x: Any, n: int) -> Any:
    """The first ``n`` entries of ``x``'s last axis."""
    ndim = aval_of(x).ndim
    return lax.static_slice(x, (slice(None),) * (ndim - 1) + (slice(0, n),))


def _irfft_weights(n: int) -> mx.array:
    """How many times irfft of length ``n`` counts each of its input bins."""
    m = mx.full((n // 2 + 1,), 2.0, mx.float32)
    m[0] = 1.0
    if n % 2 == 0:
        m[-1] = 1.0
    return m


def _fft_transpose(ct: Any, x: Any, *, fft_type: str, fft_lengths: tuple[int, ...]) -> Any:
    if fft_type in ("fft", "ifft"):
        return fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)
    n = fft_lengths[-1]
    if fft_type == "rfft":
        full = fft_p.bind(_pad_last(ct, n), fft_type="fft", fft_lengths=fft_lengths)
        return lax.real(full)
    spectrum = fft_p.bind(lax.astype(ct, mx.complex64), fft_type="ifft", fft_lengths=fft_lengths)
    return lax.multiply(_crop_last(spectrum, n // 2 + 1), _irfft_weights(n))


fft_p = Primitive("fft", _fft_impl, autocast="float32")
linear(fft_p, _fft_transpose)


@fft_p.def_batch
def _fft_batch(vals, dims, axis_size, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    # The transform reads the trailing axes: a batch axis among them moves out.
    if d > aval_of(x).ndim - 1 - len(fft_lengths):
        x, d = move_bdim(x, d, 0, axis_size), 0
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), d


def fft(x: Any, fft_type: str, fft_lengths: tuple[int, ...]) -> Any:
    """The DFT of kind ``fft_type`` (``"fft"``, ``"ifft"``, ``"rfft"``,
    ``"irfft"``) over the last ``len(fft_lengths)`` axes of ``x``, whose
    lengths must fit (see the module docstring), as ``jax.lax.fft``.

    ``x`` is complex64, or float32 for ``"rfft"``; ``ftorch.numpy.fft``
    converts other dtypes, pads, crops and normalises.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.fft(mx.array([1 + 0j, 1j]), "fft", (2,)).tolist()
    [(1+1j), (1-1j)]
    """
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    lengths = tuple(fft_lengths) if isinstance(fft_lengths, (tuple, list)) else None
    if not lengths or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1
                              for n in lengths):
        raise ValueError(
            f"fft: fft_lengths must be a non-empty tuple of positive ints, got {fft_lengths!r}")
    aval = aval_of(x)
    k = len(lengths)
    if k > aval.ndim:
        raise ValueError(f"fft: fft_lengths {lengths} has more axes than x ({format_aval(aval)})")
    want = lengths if fft_type != "irfft" else (*lengths[:-1], lengths[-1] // 2 + 1)
    if aval.shape[aval.ndim - k:] != want:
        raise ValueError(f"fft: a {fft_type!r} of lengths {lengths} needs trailing axes {want}, "
                         f"got x of {format_aval(aval)}")
    if fft_type == "rfft":
        if aval.dtype != mx.float32:
            raise TypeError(f"fft: 'rfft' needs a float32 x, got {format_aval(aval)}")
    elif not is_complex(aval.dtype):
        raise TypeError(f"fft: {fft_type!r} needs a complex64 x, got {format_aval(aval)}")
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=lengths)
