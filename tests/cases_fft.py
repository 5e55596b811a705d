"""Rule cases for the ``fft`` primitive and its public wrappers
(ftorch.numpy.fft), and for the complex-number primitives (real, imag, conj,
complex) and the elementwise rules' complex paths.

MLX has no complex128, so these run in single precision: each case takes
float64 arguments (as the harness draws them), casts them to float32, builds
complex64 values with ``complex``, and returns real float32 outputs (real and
imaginary parts), which the float64 checks can compare. The transforms are
linear, and the losses at most quadratic, so central differences with a
large step are exact but for float32 rounding; the tolerances are float32's.
"""

import mlx.core as mx
from harness import Case, away_from_zero, floats, shapes
from hypothesis import strategies as st

import ftorch.numpy as fnp
import ftorch.primitives as lax
from ftorch.primitives.fourier import fft as lax_fft

# float32-level checks: linear or quadratic functions, a large step.
F32 = dict(rtol=1e-4, atol=1e-4, eps=0.25)
# Nonlinear complex functions in float32: a small step, looser tolerances.
F32_NONLINEAR = dict(rtol=2e-3, atol=2e-3, eps=1e-2)


def _z(re, im):
    return lax.complex(lax.astype(re, mx.float32), lax.astype(im, mx.float32))


def _parts(z):
    return lax.real(z), lax.imag(z)


def _pair(shape_strategy, lo=-2.0, hi=2.0):
    """Two float64 arrays of one drawn shape: the real and imaginary parts."""
    return shape_strategy.flatmap(lambda s: st.tuples(floats(s, lo, hi), floats(s, lo, hi)))


def _real(shape_strategy, lo=-2.0, hi=2.0):
    return shape_strategy.flatmap(lambda s: st.tuples(floats(s, lo, hi)))


def _f32(x):
    return lax.astype(x, mx.float32)


def _power(z):
    # |z|**2 as re**2 + im**2: smooth everywhere (abs has a kink at 0).
    return lax.add(lax.square(lax.real(z)), lax.square(lax.imag(z)))


CASES = [
    # The primitive itself, each kind, one to three axes.
    Case("fft", lambda a, b: _parts(lax_fft(_z(a, b), "fft", tuple(a.shape[-1:]))),
         _pair(shapes(1, 3)), name="fft[fft]", **F32),
    Case("fft", lambda a, b: _parts(lax_fft(_z(a, b), "ifft", tuple(a.shape[-2:]))),
         _pair(shapes(2, 3)), name="fft[ifft,2d]", **F32),
    Case("fft", lambda a: _parts(lax_fft(_f32(a), "rfft", tuple(a.shape[-1:]))),
         _real(shapes(1, 3)), name="fft[rfft]", **F32),
    Case("fft", lambda a: _parts(lax_fft(_f32(a), "rfft", tuple(a.shape))),
         _real(shapes(3, 3)), name="fft[rfft,3d]", **F32),
    Case("fft", lambda a, b: lax_fft(_z(a, b), "irfft", (2 * a.shape[-1] - 2 or 1,)),
         _pair(shapes(1, 3)), name="fft[irfft,even]", **F32),
    Case("fft", lambda a, b: lax_fft(_z(a, b), "irfft", (*a.shape[-2:-1], 2 * a.shape[-1] - 1)),
         _pair(shapes(2, 3)), name="fft[irfft,odd,2d]", **F32),
    # The public wrappers: padding, cropping, axes, norms.
    Case("fft", lambda a: _parts(fnp.fft.rfft(_f32(a), n=5, norm="ortho")),
         _real(shapes(1, 2)), name="numpy.fft.rfft[n=5,ortho]", **F32),
    Case("fft", lambda a, b: fnp.fft.irfft(_z(a, b), n=4, axis=0, norm="forward"),
         _pair(shapes(1, 2)), name="numpy.fft.irfft[n=4,axis=0]", **F32),
    Case("fft", lambda a, b: _parts(fnp.fft.fft2(_z(a, b), s=(3, 2), axes=(0, -1))),
         _pair(shapes(2, 3)), name="numpy.fft.fft2[s,axes]", **F32),
    Case("fft", lambda a, b: fnp.fft.irfftn(_z(a, b), s=(*a.shape[:-1], 3)),
         _pair(shapes(1, 3)), name="numpy.fft.irfftn[s]", **F32),
    Case("fft", lambda a, b: fnp.fft.hfft(_z(a, b), n=5),
         _pair(shapes(1, 2)), name="numpy.fft.hfft", **F32),
    Case("fft", lambda a: _parts(fnp.fft.ihfft(_f32(a), norm="ortho")),
         _real(shapes(1, 2)), name="numpy.fft.ihfft", **F32),
    # Quadratic losses: their second derivatives are nonzero.
    Case("fft", lambda a: _power(fnp.fft.rfft(_f32(a), axis=0)),
         _real(shapes(1, 3)), name="numpy.fft.rfft[power]", **F32),
    Case("fft", lambda a, b: fnp.real(fnp.fft.ifftn(_z(a, b)) * fnp.fft.fftn(_z(b, a))),
         _pair(shapes(1, 3)), name="numpy.fft.ifftn[product]", **F32),
    # The complex-number primitives.
    Case("complex", lambda a, b: _parts(_z(a, b)), _pair(shapes(0, 3)), name="complex", **F32),
    Case("complex", lambda a, b: _parts(lax.complex(_f32(a), _f32(b)[..., :1])),
         _pair(shapes(1, 3)), name="complex[broadcast]", **F32),
    Case("real", lambda a, b: lax.real(lax.multiply(_z(a, b), _z(b, a))), _pair(shapes(0, 3)),
         name="real", **F32),
    Case("imag", lambda a, b: lax.imag(lax.multiply(_z(a, b), _z(a, b))), _pair(shapes(0, 3)),
         name="imag", **F32),
    Case("conj", lambda a, b: _parts(lax.multiply(lax.conj(_z(a, b)), _z(b, a))),
         _pair(shapes(0, 3)), name="conj", **F32),
    # Elementwise rules on complex values (a real cast in, the parts out).
    Case("abs", lambda a, b: fnp.abs(_z(a, b)),
         _pair(shapes(0, 2)).map(lambda ab: (away_from_zero(ab[0], 0.3), ab[1])),
         name="abs[complex]", **F32_NONLINEAR),
    Case("exp", lambda a, b: _parts(fnp.exp(_z(a, b))), _pair(shapes(0, 2), -1.0, 1.0),
         name="exp[complex]", **F32_NONLINEAR),
    Case("log", lambda a, b: _parts(fnp.log(_z(a, b))),
         # The right half-plane: away from 0 and from the branch cut.
         _pair(shapes(0, 2)).map(lambda ab: (abs(ab[0]) + 0.5, ab[1])),
         name="log[complex]", **F32_NONLINEAR),
    Case("divide", lambda a, b: _parts(fnp.divide(_z(a, b), _z(b, a) + 3.0)),
         _pair(shapes(0, 2), -1.0, 1.0), name="divide[complex]", **F32_NONLINEAR),
    # Real parts at least 0.3 apart: the step stays on one side of the kink.
    Case("maximum", lambda a, b: _parts(fnp.maximum(_z(a, b), _z(b, a))),
         _pair(shapes(0, 2)).map(lambda ab: (ab[0] + 0.3 * (ab[0] >= ab[1])
                                             - 0.3 * (ab[0] < ab[1]), ab[1])),
         name="maximum[complex]", rtol=1e-4, atol=1e-4, eps=1e-2),
    Case("astype", lambda a, b: lax.astype(_z(a, b) * _z(b, a), mx.float32),
         _pair(shapes(0, 3)), name="astype[complex->real]", **F32),
]
