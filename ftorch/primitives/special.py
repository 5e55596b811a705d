"""Special functions: ``lgamma``, ``digamma``, ``polygamma``,
``bessel_i0e``, ``bessel_i1e``, ``erfc``, ``log_ndtr``, ``ndtri`` and
``sinc``; the primitive layer (``ftorch.scipy.special`` builds on them).

MLX has none of these, so each impl is written here from MLX's arithmetic,
and works in the operand's own floating dtype (float16 and bfloat16 are
computed in float32). None of them calls ``mx.exp``, ``mx.sin``,
``mx.cos`` or ``mx.erf`` on float64: MLX's CPU kernels for those are only
float32-accurate. ``exp`` in float64 is ``cosh + sinh`` (both correctly
rounded by the C library) and ``sin(pi x)`` comes from ``tan`` of the half
angle after an exact reduction, so the float64 results are within a few
ulps of the true values wherever the function is well conditioned.

The methods (no fitted coefficients: every constant is a Bernoulli number,
a zeta value or a factorial):

- ``lgamma``: a Taylor series around 2 (coefficients ``(-1)^k (zeta(k)-1)/k``)
  on [1.5, 2.5], reached by the recurrence ``Gamma(x+1) = x Gamma(x)`` from
  (0, 12), and Stirling's series from 12; reflection for ``x <= 0``.
  ``log|Gamma(x)|`` (``+inf`` at the poles, as JAX).
- ``digamma``: the recurrence up to 10 and the asymptotic series;
  reflection for ``x <= 0``; NaN at the poles (as JAX).
- ``polygamma(n, x)`` for a static integer ``n >= 1``: the recurrence and the
  Euler-Maclaurin tail of ``sum_k (x+k)^-(n+1)``; for ``x <= 0`` the
  reflection formula (derivatives of ``pi cot(pi x)`` as polynomials in
  ``cot``), so negative arguments are exact too, as SciPy's.
- ``bessel_i0e``, ``bessel_i1e``: ``exp(-|x|) I_nu(x)`` by the power series
  (nested, so no term underflows) up to 20 and the asymptotic expansion beyond.
- ``erfc``: ``2/sqrt(pi) e^{-x^2} sum 2^k x^{2k+1} / (2k+1)!!`` (all terms
  positive) below 2 and the continued fraction of ``erfc`` from 2;
  ``e^{-x^2}`` with ``x^2`` split so its rounding does not count.
- ``log_ndtr``: ``log(ndtr(x))`` from ``erfc``, ``log1p(-ndtr(-x))`` for
  ``x > 0``, and the asymptotic series of ``log ndtr`` below -20 (float32:
  -10).
- ``ndtri``: Newton's method on ``log_ndtr(x) = log(p)`` (on
  ``erf(x/sqrt 2)/2 = p - 1/2`` around the median) from ``erfinv``'s guess
  or the tail's asymptotic form: accurate in the tails and at 1/2.
- ``sinc``: ``sin(pi x) / (pi x)`` (``numpy.sinc``), 1 at 0.

Every one is elementwise (its batch axis stays put) and declared by its
derivative: ``digamma``, ``polygamma(1, x)``, ``polygamma(n + 1, x)``,
``i1e(x) - sign(x) i0e(x)``, ``i0e(x) - i1e(x) (sign(x) + 1/x)`` (1/2 at 0),
``-2/sqrt(pi) e^{-x^2}``, ``exp(logpdf(x) - log_ndtr(x))``,
``sqrt(2 pi) e^{ndtri(p)^2 / 2}`` and ``(cos(pi x) - sinc(x)) / x`` (its
Taylor series near 0, so every order is right at 0).

>>> import ftorch.lax as lax, mlx.core as mx
>>> [round(v, 6) for v in lax.lgamma(mx.array([0.5, 3.0])).tolist()]
[0.572365, 0.693147]
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Primitive, Tracer, aval_of
from ftorch.dtypes import promote_types
from ftorch.primitives._rules import (
    add_tangents,
    broadcasting,
    derivative,
    is_constant_scalar,
    tangent_to,
    unbroadcast,
    vectorized,
)
from ftorch.primitives.elementwise import accurate_exp as _exp

__all__ = ["lgamma", "digamma", "polygamma", "bessel_i0e", "bessel_i1e", "erfc", "log_ndtr",
           "ndtri", "sinc", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc",
           "erfcx", "expi", "exp1", "zeta", "dawsn"]

_LOG_PI = math.log(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)

# Bernoulli numbers B_2, B_4, ..., B_20.
_BERNOULLI_EXACT = tuple(Fraction(n, d) for n, d in (
    (1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510),
    (43867, 798), (-174611, 330)))
_BERNOULLI = tuple(float(b) for b in _BERNOULLI_EXACT)

# lgamma(2 + w) = sum_k c_k w^k: c_1 = 1 - Euler's gamma, c_k = (-1)^k (zeta(k) - 1) / k.
_LGAMMA_AT_2 = (
    0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
    -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261,
    0.0005096695247430425, -0.00022315475845357939, 9.945751278180853e-05,
    -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
    4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
    -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07,
    4.7698101693639804e-08, -2.2711094608943164e-08, 1.0838659214896955e-08,
    -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
    5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
    -6.4229645638381e-11,
)


# ----------------------------------------------------------------------------
# Building blocks of the impls (MLX arrays in and out, in the operand's dtype)
# ----------------------------------------------------------------------------


def _in_float32(impl: Callable) -> Callable:
    """``impl`` run in float32 for half-precision operands (their range is
    too small for the intermediate sums), its result cast back."""

    def run(x: mx.array, **params: Any) -> mx.array:
        if x.dtype in (mx.float16, mx.bfloat16):
            return impl(x.astype(mx.float32), **params).astype(x.dtype)
        return impl(x, **params)

    run.__name__ = run.__qualname__ = impl.__name__
    return run


def _exp_neg_square(a: mx.array) -> mx.array:
    """``exp(-a^2)`` for ``a >= 0`` without the rounding of ``a^2``: ``a`` is
    split into a head with half the bits (its square exact) and a tail."""
    head_dtype = mx.float32 if a.dtype == mx.float64 else mx.bfloat16
    # Beyond 27.5 the result is 0 in every dtype; there the tail, negative
    # when the head rounds up, could overflow exp (0 * inf).
    ok = a < 27.5
    hi = mx.where(ok, a.astype(head_dtype).astype(a.dtype), 0.0)
    tail = mx.where(ok, (a - hi) * (a + hi), 0.0)
    return mx.where(ok, _exp(-(hi * hi)) * _exp(-tail), 0.0)


def _tan_half_pi_frac(x: mx.array) -> mx.array:
    """``tan(pi r / 2)`` for ``r = x - round(x)`` in [-1/2, 1/2] (exact), from
    which ``sin(pi x)`` and ``cot(pi x)`` follow without MLX's float64 ``sin``."""
    r = x - mx.round(x)
    return mx.tan(r * (0.5 * math.pi))


def _sinpi(x: mx.array) -> mx.array:
    """``sin(pi x)``, accurate for every finite ``x`` (0 at the integers)."""
    n = mx.round(x)
    u = mx.tan((x - n) * (0.5 * math.pi))
    odd = mx.remainder(n, 2.0) != 0
    s = 2.0 * u / (1.0 + u * u)
    return mx.where(odd, 0.0 - s, s)  # (+0.0 at the integers)


def _cotpi(x: mx.array) -> mx.array:
    """``cot(pi x)`` (infinite at the integers)."""
    u = _tan_half_pi_frac(x)
    return (1.0 - u * u) / (2.0 * u)


def _poly(coeffs: tuple[float, ...], z: mx.array) -> mx.array:
    """``sum_k coeffs[k] z^k`` by Horner's rule."""
    out = mx.full(z.shape, coeffs[-1], z.dtype)
    for c in reversed(coeffs[:-1]):
        out = out * z + c
    return out


# ----------------------------------------------------------------------------
# lgamma
# ----------------------------------------------------------------------------

_STIRLING_FROM = 12.0
# lgamma(x) - Stirling's leading terms = sum_k B_2k / (2k (2k - 1) x^(2k - 1)).
_STIRLING = tuple(b / (2 * k * (2 * k - 1)) for k, b in enumerate(_BERNOULLI[:8], 1))


def _lgamma_positive(x: mx.array) -> mx.array:
    """``lgamma`` for ``x > 0`` (other values give garbage, selected away)."""
    big = x >= _STIRLING_FROM
    z = mx.where(big, x, _STIRLING_FROM)
    x = mx.where(big, 2.0, x)  # (no overflow in the series' unused branch)
    # [1.5, 2.5): the Taylor series in w = x - 2 - m, with m the shift that
    # brings x there; w is exact, so the roots at 1 and 2 keep relative accuracy.
    m = mx.clip(mx.floor(x - 1.5), -2.0, _STIRLING_FROM - 2.0)
    w = x - (m + 2.0)
    series = w * _poly(_LGAMMA_AT_2, w)
    # x >= 2.5: lgamma(x) = lgamma(x - m) + log((x - 1) ... (x - m)).
    prod = mx.ones_like(x)
    for i in range(1, int(_STIRLING_FROM) - 1):
        prod = prod * mx.where(m >= i, x - i, 1.0)
    # x < 1.5: lgamma(x) = lgamma(x + 1) - log(x) (and - log(x + 1) below 0.5).
    # log(x) as log1p(w) on [0.5, 1.5) (w = x - 1 there, exact) and as
    # log(x) + log1p(x) below: near the root at 1 the result keeps its
    # relative accuracy (MLX's float64 log is not correctly rounded near 1).
    down = mx.where(m == -1, mx.log1p(w), 0.0) + mx.where(
        m == -2, mx.log(mx.where(m == -2, x, 1.0)) + mx.log1p(x), 0.0)
    small = series + mx.log(prod) - down
    inv = 1.0 / z
    stirling = ((z - 0.5) * (mx.log(z) - 1.0) + (_HALF_LOG_2PI - 0.5)
                + inv * _poly(_STIRLING, inv * inv))
    return mx.where(big, stirling, small)


@_in_float32
def _lgamma_impl(x: mx.array) -> mx.array:
    positive = _lgamma_positive(mx.where(x > 0, x, 1.0 - x))
    # Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x); +inf at the poles.
    # (Its sine at 1/2 for x > 0: MLX's forward mode, which differentiates
    # this impl for igamma_grad_a, lets a NaN tangent through mx.where.)
    reflected = _LOG_PI - mx.log(mx.abs(_sinpi(mx.where(x > 0, 0.5, x)))) - positive
    out = mx.where(x > 0, positive, reflected)
    return mx.where(x == -math.inf, math.inf, out)


lgamma_p = Primitive("lgamma", _lgamma_impl, elementwise=True, autocast="float32")
vectorized(lgamma_p)
derivative(lgamma_p, lambda x, y: digamma(x))


def lgamma(x: Any) -> Any:
    """``log|Gamma(x)|`` of a floating array, as ``jax.lax.lgamma`` (``+inf``
    at the poles ``0, -1, -2, ...`` and at ``-inf``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.lgamma(mx.array([1.0, -0.5, 10.0])).tolist()]
    [0.0, 1.265512, 12.801827]
    """
    return lgamma_p.bind(x)


# ----------------------------------------------------------------------------
# digamma and polygamma
# ----------------------------------------------------------------------------

_DIGAMMA_FROM = 10


def _shift_sum(x: mx.array, start: float, term: Callable) -> tuple[mx.array, mx.array]:
    """``(z, s)``: ``z = x + k`` with ``k`` the fewest steps that bring ``x``
    (> 0) to at least ``start``, and ``s = sum_{i < k} term(x + i)``."""
    s = mx.zeros_like(x)
    z = x
    for _ in range(int(math.ceil(start))):
        step = z < start
        s = s + mx.where(step, term(mx.where(step, z, 1.0)), 0.0)
        z = mx.where(step, z + 1.0, z)
    return z, s


# digamma(z) = log z - 1/(2z) - sum_k B_2k / (2k z^2k).
_DIGAMMA_TAIL = tuple(b / (2 * k) for k, b in enumerate(_BERNOULLI[:9], 1))


@_in_float32
def _digamma_impl(x: mx.array) -> mx.array:
    pos = mx.where(x > 0, x, 1.0 - x)
    z, s = _shift_sum(pos, _DIGAMMA_FROM, lambda v: 1.0 / v)
    inv2 = 1.0 / (z * z)
    positive = mx.log(z) - 0.5 / z - inv2 * _poly(_DIGAMMA_TAIL, inv2) - s
    # Reflection: psi(x) = psi(1 - x) - pi cot(pi x); NaN at the poles, as JAX.
    reflected = positive - math.pi * _cotpi(x)
    out = mx.where(x > 0, positive, reflected)
    return mx.where((x <= 0) & (x == mx.floor(x)), math.nan, out)


digamma_p = Primitive("digamma", _digamma_impl, elementwise=True, autocast="float32")
vectorized(digamma_p)
derivative(digamma_p, lambda x, y: polygamma(1, x))


def digamma(x: Any) -> Any:
    """The digamma function ``psi(x) = d/dx log Gamma(x)`` of a floating
    array, as ``jax.lax.digamma`` (NaN at the poles ``0, -1, -2, ...``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.digamma(mx.array([1.0, 0.5, -0.5])).tolist()]
    [-0.577216, -1.963511, 0.03649]
    """
    return digamma_p.bind(x)


def _cot_derivative_poly(n: int) -> list[int]:
    """Coefficients (in powers of ``c``) of ``Q_n`` with
    ``d^n/dx^n cot(pi x) = pi^n Q_n(cot(pi x))``: ``Q_0 = c``,
    ``Q_{n+1} = -(1 + c^2) Q_n'``."""
    q = [0, 1]
    for _ in range(n):
        d = [k * q[k] for k in range(1, len(q))]  # Q'
        nxt = [0] * (len(d) + 2)
        for k, v in enumerate(d):
            nxt[k] -= v
            nxt[k + 2] -= v
        q = nxt
    return q


def _polygamma_tail(n: int) -> tuple[float, ...]:
    """Euler-Maclaurin coefficients: for large ``z``,
    ``sum_{k>=0} (z+k)^-s = z^-s (z/n + 1/2 + sum_j e_j z^-(2j-1))`` with
    ``s = n + 1`` and ``e_j = B_2j / (2j)! * s (s+1) ... (s+2j-2)``."""
    s = n + 1
    out = []
    for j, b in enumerate(_BERNOULLI[:9], 1):
        rising = math.prod(range(s, s + 2 * j - 1))
        out.append(b / math.factorial(2 * j) * rising)
    return tuple(out)


def _polygamma_impl(x: mx.array, *, n: int) -> mx.array:
    if n == 0:
        return _digamma_impl(x)
    return _polygamma_n(x, n=n)


@_in_float32
def _polygamma_n(x: mx.array, *, n: int) -> mx.array:
    s = n + 1
    try:
        fact = float(math.factorial(n))
    except OverflowError:
        fact = math.inf
    sign = 1.0 if n % 2 else -1.0  # (-1)^(n+1)
    pos = mx.where(x > 0, x, 1.0 - x)
    start = 10.0 + 2.0 * n  # where the tail's series is accurate to an ulp
    z, direct = _shift_sum(pos, start, lambda v: mx.power(v, -float(s)))
    inv = 1.0 / z
    tail = mx.power(z, -float(s)) * (z / n + 0.5 + inv * _poly(_polygamma_tail(n), inv * inv))
    positive = (sign * fact) * (direct + tail)
    # Reflection: psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi^(n+1) Q_n(cot(pi x)).
    cot_terms = _cot_derivative_poly(n)
    reflected = ((-1.0) ** n * positive
                 - math.pi ** (n + 1) * _poly(tuple(float(c) for c in cot_terms), _cotpi(x)))
    out = mx.where(x > 0, positive, reflected)
    return mx.where(x == -math.inf, math.nan, out)


polygamma_p = Primitive("polygamma", _polygamma_impl, elementwise=True, autocast="float32")
vectorized(polygamma_p)


@polygamma_p.def_jvp
def _polygamma_jvp(primals, tangents, *, n):
    (x,), (t,) = primals, tangents
    return polygamma_p.bind(x, n=n), lax.multiply(t, polygamma(n + 1, x))


@polygamma_p.def_vjp
def _polygamma_vjp(ct, y, x, *, needed, n):
    return (lax.multiply(ct, polygamma(n + 1, x)),)


def polygamma(n: int, x: Any) -> Any:
    """The ``n``-th derivative of the digamma function at ``x`` (a floating
    array), for a static order ``n >= 0`` (``polygamma(0, x)`` is
    ``digamma(x)``): a Python int, or, as ``jax.lax.polygamma`` takes it, a
    concrete integral scalar array (not a traced one: the order selects the
    series).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.polygamma(1, mx.array([1.0, -0.5])).tolist()]
    [1.644934, 8.934802]
    """
    if not isinstance(n, (int, Tracer)) and np.ndim(n) == 0 and float(n).is_integer():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(
            f"polygamma: n must be a non-negative Python int or concrete integral scalar, "
            f"got {n!r}")
    return polygamma_p.bind(x, n=n)


# ----------------------------------------------------------------------------
# Modified Bessel functions, exponentially scaled
# ----------------------------------------------------------------------------

_BESSEL_SERIES_TO = 20.0
_BESSEL_SERIES_TERMS = 40
_BESSEL_ASYMPTOTIC_TERMS = 22


def _bessel_ie(x: mx.array, nu: int) -> mx.array:
    """``exp(-|x|) I_nu(|x|)`` for ``nu`` 0 or 1."""
    a = mx.abs(x)
    # Power series: I_nu(a) = (a/2)^nu sum_k (a^2/4)^k / (k! (k + nu)!), nested so
    # that no coefficient underflows; every term is positive.
    small = mx.minimum(a, _BESSEL_SERIES_TO)
    t = 0.25 * small * small
    s = mx.ones_like(a)
    for k in range(_BESSEL_SERIES_TERMS, 0, -1):
        s = 1.0 + s * t * (1.0 / (k * (k + nu)))
    series = _exp(-small) * s * (0.5 * small if nu else 1.0)
    # Asymptotic: e^-a I_nu(a) ~ (2 pi a)^-1/2 sum_k prod_j ((2j-1)^2 - 4nu^2) / (8 j a).
    big = mx.maximum(a, _BESSEL_SERIES_TO)
    s = mx.ones_like(a)
    for k in range(_BESSEL_ASYMPTOTIC_TERMS, 0, -1):
        s = 1.0 + s * (((2 * k - 1) ** 2 - 4 * nu * nu) / (8.0 * k)) / big
    asymptotic = s * mx.rsqrt(big) * (1.0 / math.sqrt(2.0 * math.pi))  # (2 pi big overflows)
    return mx.where(a <= _BESSEL_SERIES_TO, series, asymptotic)


@_in_float32
def _i0e_impl(x: mx.array) -> mx.array:
    return _bessel_ie(x, 0)


@_in_float32
def _i1e_impl(x: mx.array) -> mx.array:
    out = _bessel_ie(x, 1)
    return mx.where(x < 0, -out, out)


bessel_i0e_p = Primitive("bessel_i0e", _i0e_impl, elementwise=True, autocast="float32")
vectorized(bessel_i0e_p)
derivative(bessel_i0e_p, lambda x, y: lax.subtract(bessel_i1e(x), lax.multiply(lax.sign(x), y)))


def bessel_i0e(x: Any) -> Any:
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function
    of order 0, as ``jax.lax.bessel_i0e``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.bessel_i0e(mx.array([0.0, 1.0, -1.0])).tolist()]
    [1.0, 0.46576, 0.46576]
    """
    return bessel_i0e_p.bind(x)


def _i1e_derivative(x: Any, y: Any) -> Any:
    # I1'(x) = I0(x) - I1(x)/x; at 0 the limit of i1e(x)/x is 1/2.
    zero = lax.equal(x, 0)
    safe = lax.where(zero, 1.0, x)
    d = lax.subtract(bessel_i0e(x), lax.multiply(y, lax.add(lax.sign(x), lax.reciprocal(safe))))
    return lax.where(zero, 0.5, d)


bessel_i1e_p = Primitive("bessel_i1e", _i1e_impl, elementwise=True, autocast="float32")
vectorized(bessel_i1e_p)
derivative(bessel_i1e_p, _i1e_derivative)


def bessel_i1e(x: Any) -> Any:
    """``exp(-|x|) I1(x)``, the exponentially scaled modified Bessel function
    of order 1, as ``jax.lax.bessel_i1e`` (odd in ``x``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.bessel_i1e(mx.array([0.0, 1.0, -1.0])).tolist()]
    [0.0, 0.20791, -0.20791]
    """
    return bessel_i1e_p.bind(x)


# ----------------------------------------------------------------------------
# erfc, log_ndtr, ndtri
# ----------------------------------------------------------------------------

# Where erfc switches from 1 - erf to the continued fraction: float32's
# subtraction costs more digits, and its fraction converges earlier.
_ERFC_SPLIT = {mx.float64: 2.0, mx.float32: 1.0}
_ERF_SERIES_TERMS = 34
_ERFC_FRACTION_TERMS = 60


def _erf_erfc_abs(a: mx.array) -> tuple[mx.array, mx.array]:
    """``(erf(a), erfc(a))`` for ``a >= 0``, each without cancellation where
    it is small."""
    split = _ERFC_SPLIT[a.dtype]
    e = _exp_neg_square(a)
    # Below the split, erf's series of positive terms
    # erf(a) = 2/sqrt(pi) e^{-a^2} a sum_k (2a^2)^k / (3 5 ... (2k+1)).
    small = mx.minimum(a, split)
    t = 2.0 * small * small
    s = mx.ones_like(a)
    for k in range(_ERF_SERIES_TERMS, 0, -1):
        s = 1.0 + s * t * (1.0 / (2 * k + 1))
    erf_small = (2.0 / _SQRT_PI) * small * e * s
    # From the split on, the continued fraction
    # erfc(a) = e^{-a^2} / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))).
    big = mx.maximum(a, split)
    f = big
    for k in range(_ERFC_FRACTION_TERMS, 0, -1):
        f = big + (0.5 * k) / f
    erfc_big = e / (_SQRT_PI * f)
    below = a < split
    return mx.where(below, erf_small, 1.0 - erfc_big), mx.where(below, 1.0 - erf_small, erfc_big)


def _erfc_abs(a: mx.array) -> mx.array:
    """``erfc(a)`` for ``a >= 0``."""
    return _erf_erfc_abs(a)[1]


def _erfcx_abs(a: mx.array) -> mx.array:
    """``exp(a^2) erfc(a)`` for ``a >= 0`` (no overflow, no underflow)."""
    split = _ERFC_SPLIT[a.dtype]
    small = mx.minimum(a, split)
    erfc_small = _erfc_abs(small)
    big = mx.maximum(a, split)
    f = big
    for k in range(_ERFC_FRACTION_TERMS, 0, -1):
        f = big + (0.5 * k) / f
    return mx.where(a < split, _exp(small * small) * erfc_small, 1.0 / (_SQRT_PI * f))


@_in_float32
def _erfc_impl(x: mx.array) -> mx.array:
    out = _erfc_abs(mx.abs(x))
    return mx.where(x < 0, 2.0 - out, out)


erfc_p = Primitive("erfc", _erfc_impl, elementwise=True, autocast="float32")
vectorized(erfc_p)
derivative(erfc_p, lambda x, y: lax.multiply(-2.0 / _SQRT_PI, lax.exp(lax.negative(lax.square(x)))))


def erfc(x: Any) -> Any:
    """The complementary error function ``1 - erf(x)`` of a floating array,
    computed without the subtraction (accurate where ``erfc`` is tiny), as
    ``jax.lax.erfc``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [f"{v:.6e}" for v in lax.erfc(mx.array([0.0, 5.0], dtype=mx.float64)).tolist()]
    ['1.000000e+00', '1.537460e-12']
    """
    return erfc_p.bind(x)


@_in_float32
def _erfcx_impl(x: mx.array) -> mx.array:
    # For x < 0, erfcx(x) = 2 e^(x^2) - erfcx(-x) (+inf once e^(x^2) overflows).
    pos = _erfcx_abs(mx.abs(x))
    twice_exp_square = 2.0 / _exp_neg_square(mx.abs(x))
    return mx.where(x < 0, twice_exp_square - pos, pos)


erfcx_p = Primitive("erfcx", _erfcx_impl, elementwise=True, autocast="float32")
vectorized(erfcx_p)
derivative(erfcx_p, lambda x, y: lax.subtract(lax.multiply(lax.multiply(2.0, x), y),
                                              2.0 / _SQRT_PI))


def erfcx(x: Any) -> Any:
    """The scaled complementary error function ``exp(x^2) erfc(x)`` of a
    floating array, without overflow or underflow for large ``x`` (``+inf``
    once ``exp(x^2)`` overflows for negative ``x``), as
    ``jax.scipy.special.erfcx``; derivative ``2 x erfcx(x) - 2/sqrt(pi)``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [f"{v:.6e}" for v in lax.erfcx(mx.array([-1.0, 0.0, 30.0])).tolist()]
    ['5.008980e+00', '1.000000e+00', '1.879589e-02']
    """
    return erfcx_p.bind(x)


_LOG_NDTR_SERIES_TERMS = 10


def _log_ndtr_lower(x: mx.array) -> mx.array:
    """The asymptotic series of ``log ndtr(x)`` for ``x << -1``:
    ``-x^2/2 - log(-x) - log(2 pi)/2 + log(sum_k (-1)^k (2k-1)!! / x^2k)``."""
    x2 = x * x
    s = mx.ones_like(x)
    for k in range(_LOG_NDTR_SERIES_TERMS, 0, -1):
        s = 1.0 - s * (2 * k - 1) / x2
    return -0.5 * x2 - mx.log(-x) - _HALF_LOG_2PI + mx.log(s)


@_in_float32
def _log_ndtr_impl(x: mx.array) -> mx.array:
    lower = -20.0 if x.dtype == mx.float64 else -10.0
    # ndtr(x) = erfc(-x/sqrt 2) / 2; for x > 0 take log1p(-ndtr(-x)).
    ec = _erfc_abs(mx.abs(x) * _SQRT_HALF)
    middle = mx.where(x > 0, mx.log1p(-0.5 * ec), mx.log(0.5 * ec))
    return mx.where(x > lower, middle, _log_ndtr_lower(mx.minimum(x, lower)))


log_ndtr_p = Primitive("log_ndtr", _log_ndtr_impl, elementwise=True, autocast="float32")
vectorized(log_ndtr_p)
# d/dx log ndtr(x) = pdf(x) / ndtr(x), taken in logs (finite for very negative x).
derivative(log_ndtr_p, lambda x, y: lax.exp(
    lax.subtract(lax.multiply(-0.5, lax.square(x)), lax.add(y, _HALF_LOG_2PI))))


def log_ndtr(x: Any) -> Any:
    """``log`` of the standard normal CDF of a floating array, accurate in
    both tails (``-x^2/2 - ...`` far below 0, ``-ndtr(-x)`` far above).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 4) for v in lax.log_ndtr(mx.array([-40.0, 0.0], dtype=mx.float64)).tolist()]
    [-804.6084, -0.6931]
    """
    return log_ndtr_p.bind(x)


_NDTRI_NEWTON_STEPS = 4


@_in_float32
def _ndtri_impl(p: mx.array) -> mx.array:
    # Solve for x <= 0 at the lower tail q = min(p, 1 - p) (1 - p is exact
    # for p >= 1/2), then flip the sign for p > 1/2.
    upper = p > 0.5
    q = mx.where(upper, 1.0 - p, p)
    q = mx.where((q > 0) & (q <= 0.5), q, 0.25)  # keep the iteration finite
    log_q = mx.log(q)
    # Around the median solve erf(-x/sqrt 2) / 2 = 1/2 - q instead (exact
    # difference): x keeps its relative accuracy as p -> 1/2.
    central = q > 0.25
    d = 0.5 - q
    guess = -math.sqrt(2.0) * mx.erfinv(2.0 * d)
    # Tail: q ~ pdf(x) / |x|, so x^2 = -2 log q - log(2 pi) - 2 log|x|, iterated.
    two_l = -2.0 * log_q
    t = mx.sqrt(two_l)
    for _ in range(3):
        t = mx.sqrt(mx.maximum(two_l - 2.0 * _HALF_LOG_2PI - 2.0 * mx.log(t), 1.0))
    x = mx.where(q < 1e-5, -t, guess)
    lower = -20.0 if p.dtype == mx.float64 else -10.0
    for _ in range(_NDTRI_NEWTON_STEPS):
        x = mx.minimum(x, 0.0)
        erf_a, erfc_a = _erf_erfc_abs(-x * _SQRT_HALF)
        log_pdf = -0.5 * x * x - _HALF_LOG_2PI
        # Newton on log ndtr(x) = log q: concave, so it converges from either side.
        ln = mx.where(x > lower, mx.log(0.5 * erfc_a), _log_ndtr_lower(mx.minimum(x, lower)))
        tail_step = (ln - log_q) / _exp(log_pdf - ln)
        central_step = (d - 0.5 * erf_a) / _exp(log_pdf)
        x = x - mx.where(central, central_step, tail_step)
    out = mx.where(upper, -x, x)
    out = mx.where(p == 0, -math.inf, mx.where(p == 1, math.inf, out))
    return mx.where((p < 0) | (p > 1) | mx.isnan(p), math.nan, out)


ndtri_p = Primitive("ndtri", _ndtri_impl, elementwise=True, autocast="float32")
vectorized(ndtri_p)
derivative(ndtri_p, lambda p, y: lax.multiply(_SQRT_2PI, lax.exp(lax.multiply(0.5, lax.square(y)))))


def ndtri(p: Any) -> Any:
    """The inverse of the standard normal CDF of a floating array of
    probabilities (``-inf`` at 0, ``inf`` at 1, NaN outside [0, 1]).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.ndtri(mx.array([0.5, 0.975, 1e-300], dtype=mx.float64)).tolist()]
    [0.0, 1.959964, -37.047096]
    """
    return ndtri_p.bind(p)


# ----------------------------------------------------------------------------
# sinc
# ----------------------------------------------------------------------------


@_in_float32
def _sinc_impl(x: mx.array) -> mx.array:
    zero = x == 0
    safe = mx.where(zero, 1.0, x)
    out = _sinpi(safe) / (math.pi * safe)
    return mx.where(zero, 1.0, mx.where(mx.isinf(x), 0.0, out))


# sinc'(x) = sum_{k>=1} (-1)^k 2k pi^2k x^(2k-1) / (2k+1)!, used for |x| < 1/4
# (exact there to an ulp, and right at 0 to every order).
_SINC_TAYLOR_TO = 0.25
_SINC_DERIVATIVE = tuple((-1) ** k * 2 * k * math.pi ** (2 * k) / math.factorial(2 * k + 1)
                         for k in range(1, 12))


def _sinc_derivative(x: Any, y: Any) -> Any:
    near = lax.less(lax.abs(x), _SINC_TAYLOR_TO)
    # Both branches see safe arguments, so neither puts a NaN in the other's gradient.
    xn = lax.where(near, x, 0.0)
    x2 = lax.square(xn)
    taylor = lax.zeros_like(xn)
    for c in reversed(_SINC_DERIVATIVE):
        taylor = lax.add(lax.multiply(taylor, x2), c)
    taylor = lax.multiply(taylor, xn)
    xf = lax.where(near, 1.0, x)
    far = lax.divide(lax.subtract(lax.cos(lax.multiply(math.pi, xf)), sinc(xf)), xf)
    return lax.where(near, taylor, far)


sinc_p = Primitive("sinc", _sinc_impl, elementwise=True)
vectorized(sinc_p)
derivative(sinc_p, _sinc_derivative)


def sinc(x: Any) -> Any:
    """The normalised sinc function ``sin(pi x) / (pi x)`` of a floating
    array, 1 at 0 (``numpy.sinc``); its derivatives at 0 are those of the
    Taylor series (0, ``-pi^2/3``, ...).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.sinc(mx.array([0.0, 0.5, 1.0])).tolist()]
    [1.0, 0.63662, 0.0]
    """
    return sinc_p.bind(x)


# ----------------------------------------------------------------------------
# Incomplete gamma functions
# ----------------------------------------------------------------------------


def _float_operands(*args: Any) -> list[mx.array]:
    """The operands of a many-argument function as MLX arrays of one
    floating dtype, broadcast together (a Python scalar takes the arrays'
    dtype; integers compute in float32)."""
    dtype = None
    for a in args:
        if isinstance(a, mx.array):
            dtype = a.dtype if dtype is None else promote_types(dtype, a.dtype)
    if dtype is None or not mx.issubdtype(dtype, mx.floating):
        dtype = mx.float32
    return mx.broadcast_arrays(*(a.astype(dtype) if isinstance(a, mx.array) else mx.array(a, dtype)
                                 for a in args))


def _nary(impl: Callable) -> Callable:
    """``impl`` on ``_float_operands``, run in float32 for half-precision
    operands (its result cast back)."""

    def run(*args: Any, **params: Any) -> mx.array:
        args = _float_operands(*args)
        dtype = args[0].dtype
        if dtype in (mx.float16, mx.bfloat16):
            return impl(*(a.astype(mx.float32) for a in args), **params).astype(dtype)
        return impl(*args, **params)

    run.__name__ = run.__qualname__ = impl.__name__
    return run


def _log1pmx_over_square(mu: mx.array) -> mx.array:
    """``(log(1 + mu) - mu) / mu^2`` for ``|mu| <= 1/2`` (-1/2 at 0), without
    the cancellation: with ``w = 1 / (2 + mu)`` and ``z = mu w``,
    ``log(1 + mu) = 2 atanh(z)`` and ``mu - 2 z = z mu``, so it is
    ``w (2 mu w^2 sum_k z^(2k-2) / (2k+1) - 1)``."""
    w = 1.0 / (2.0 + mu)
    z2 = (mu * w) ** 2
    s = mx.zeros_like(mu)
    for k in range(16, 0, -1):
        s = (1.0 / (2 * k + 1)) + z2 * s
    return w * (2.0 * mu * w * w * s - 1.0)


def _lgamma1p(a: mx.array) -> mx.array:
    """``lgamma(1 + a)`` for ``a > 0``, keeping the digits of a small ``a``
    that ``1 + a`` would round away: ``lgamma(2 + a) - log1p(a)`` by the
    Taylor series around 2 below 1/2."""
    small = a < 0.5
    w = mx.where(small, a, 0.0)
    return mx.where(small, w * _poly(_LGAMMA_AT_2, w) - mx.log1p(w), _lgamma_impl(a + 1.0))


def _log_gamma_star(a: mx.array) -> mx.array:
    """``log Gamma*(a) = lgamma(a) - ((a - 1/2) log a - a + log(2 pi)/2)``
    for ``a >= 12``: Stirling's series."""
    inv = 1.0 / a
    return inv * _poly(_STIRLING, inv * inv)


def _log_gamma_prefactor(a: mx.array, x: mx.array) -> mx.array:
    """``log(x^a e^-x / Gamma(a + 1))`` for ``a, x > 0``. From 12 on it is
    ``a (log(x/a) - (x - a)/a) - log(2 pi a)/2 - log Gamma*(a)``, whose terms
    do not cancel as ``a log x``, ``x`` and ``lgamma(a + 1)`` do."""
    big = a >= _STIRLING_FROM
    ab = mx.where(big, a, _STIRLING_FROM)
    mu = (x - ab) / ab
    near = mx.abs(mu) <= 0.5
    mun = mx.where(near, mu, 0.0)
    log1pmx = mx.where(near, mun * mun * _log1pmx_over_square(mun), mx.log(x / ab) - mu)
    stirling = ab * log1pmx - 0.5 * mx.log(2.0 * math.pi * ab) - _log_gamma_star(ab)
    direct = a * mx.log(x) - x - _lgamma1p(a)
    return mx.where(big, stirling, direct)


@functools.cache
def _temme_coefficients() -> tuple[tuple[float, ...], ...]:
    """The Taylor coefficients in ``eta`` of Temme's ``c_k(eta)``,
    ``k < _TEMME_TERMS``, worked out exactly enough (40 digits) from their
    definition: with ``lambda = x/a``, ``mu = lambda - 1`` and
    ``eta^2 / 2 = mu - log(1 + mu)`` (``eta`` of the sign of ``mu``),
    ``c_0 = 1/mu - 1/eta`` and ``c_k = c_{k-1}'(eta) / eta + (-1)^k g_k / mu``,
    ``g_k`` the coefficients of Stirling's series ``Gamma*(a) ~ sum g_k a^-k``."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        D = decimal.Decimal
        n = _TEMME_ETA_TERMS + 2 * _TEMME_TERMS + 2

        def mul(p, q):
            return [sum((p[i] * q[k - i] for i in range(k + 1)), D(0)) for k in range(n)]

        def reciprocal(p):  # p[0] == 1
            out = [D(1)]
            for k in range(1, n):
                out.append(-sum((p[j] * out[k - j] for j in range(1, k + 1)), D(0)))
            return out

        # eta = mu s(mu), s(mu)^2 = 2 (mu - log(1 + mu)) / mu^2 = sum_k 2 (-1)^k mu^k / (k + 2).
        s2 = [D(2 * (-1) ** k) / (k + 2) for k in range(n)]
        s = [D(1)]
        for k in range(1, n):
            s.append((s2[k] - sum((s[j] * s[k - j] for j in range(1, k)), D(0))) / 2)
        # Lagrange inversion: mu = sum_m eta^m / m [w^(m-1)] s(w)^-m.
        inv_s, power, mu_over_eta = reciprocal(s), [D(1)] + [D(0)] * (n - 1), []
        for m in range(1, n + 1):
            power = mul(power, inv_s)
            mu_over_eta.append(power[m - 1] / m)
        c = [reciprocal(mu_over_eta)[1:]]  # c_0 = (eta / mu - 1) / eta
        # Stirling: Gamma*(z) = exp(sum_k B_2k / (2k (2k - 1)) z^(1 - 2k)).
        log_g = [D(0)] * (_TEMME_TERMS + 1)
        for k, b in enumerate(_BERNOULLI_EXACT, 1):
            if 2 * k - 1 <= _TEMME_TERMS:
                log_g[2 * k - 1] = D(b.numerator) / D(b.denominator) / (2 * k * (2 * k - 1))
        g = [D(1)]
        for m in range(1, _TEMME_TERMS + 1):
            g.append(sum((k * log_g[k] * g[m - k] for k in range(1, m + 1)), D(0)) / m)
        for k in range(1, _TEMME_TERMS):
            prev = c[-1]
            c.append([j * prev[j] + (-1) ** k * g[k] * c[0][j - 2]
                      for j in range(2, len(prev))])
        return tuple(tuple(float(v) for v in ck[:_TEMME_ETA_TERMS]) for ck in c)


_TEMME_TERMS = 11  # c_0 ... c_10: enough from a = 20 on
_TEMME_ETA_TERMS = 24  # Taylor terms of each c_k, for |eta| <= 0.35
_TEMME_FROM = 20.0  # a at and above which |x/a - 1| < 0.3 takes Temme's expansion
_TEMME_WIDTH = 0.3
_IGAMMA_SERIES_TERMS = {mx.float64: 120, mx.float32: 64}
_IGAMMA_FRACTION_TERMS = {mx.float64: 120, mx.float32: 64}
_IGAMMA_SMALL_A_TERMS = 30  # of sum (-x)^n / (n! (a + n)) for x < 2


def _igamma_log_tail(a: mx.array, x: mx.array) -> tuple[mx.array, mx.array]:
    """``(log T, T is Q)``: the log of the one of ``P(a, x)`` and ``Q(a, x)``
    computed directly (the other is ``1 - T``), for ``a, x > 0`` finite.

    - ``a >= 20`` and ``|x/a - 1| < 0.3``: Temme's uniform expansion,
      ``Q = erfc(eta sqrt(a/2)) / 2 + e^(-a eta^2/2) / sqrt(2 pi a) sum_k c_k(eta) a^-k``,
      taken for the smaller tail (``Q`` for ``x >= a``) as
      ``phi(t) (M(|t|) +- sum_k c_k a^-k / sqrt(a))``, ``t = eta sqrt(a)``,
      ``M`` Mills' ratio (no cancellation, no underflow before the result's).
    - else ``x < a + 1``: ``P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a+1)...(a+n))``;
      for ``a < 1`` where ``P`` is the larger, ``Q`` directly from
      ``P = x^a / Gamma(a + 1) (1 + a sum_{n>=1} (-x)^n / (n! (a + n)))``:
      ``Q = -expm1(a log x - lgamma(a + 1)) - x^a / Gamma(a + 1) a sum_{n>=1} ...``.
    - else: ``Q`` by Legendre's continued fraction
      ``x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...))``.
    """
    dtype = a.dtype
    mu = (x - a) / a
    temme = (a >= _TEMME_FROM) & (mx.abs(x - a) < _TEMME_WIDTH * a)
    series = ~temme & (x < a + 1.0)
    # Temme: every operand kept in range where the branch is not taken.
    at = mx.where(temme, a, _TEMME_FROM)
    mut = mx.where(temme, mu, 0.0)
    eta = mut * mx.sqrt(-2.0 * _log1pmx_over_square(mut))  # (analytic through 0)
    inv_a = 1.0 / at
    coeffs = _temme_coefficients()
    total = mx.zeros_like(at)
    for ck in reversed(coeffs):
        total = total * inv_a + _poly(ck, eta)
    sign = mx.where(eta >= 0, 1.0, -1.0)
    t = sign * eta * mx.sqrt(at)  # |t| (a product: differentiable at 0 from the tail's side)
    mills = math.sqrt(0.5 * math.pi) * _erfcx_abs(t * _SQRT_HALF)
    log_temme = (-0.5 * t * t - _HALF_LOG_2PI) + mx.log(mills + sign * total * mx.rsqrt(at))
    # The series and the continued fraction, with the prefactor in logs.
    log_pref = _log_gamma_prefactor(a, x)
    xs = mx.where(series, x, a)  # (the series overflows far above a + 1)
    s = mx.ones_like(x)
    for k in range(_IGAMMA_SERIES_TERMS[dtype], 0, -1):
        s = 1.0 + s * (xs / (a + k))
    xf = mx.where(series | temme, a + 2.0, x)  # (the fraction needs x >= a + 1)
    f = xf + (2 * _IGAMMA_FRACTION_TERMS[dtype] + 1) - a
    for k in range(_IGAMMA_FRACTION_TERMS[dtype], 0, -1):
        f = (xf + (2 * k - 1) - a) + (k * (a - k)) / f
    log_fraction = log_pref + mx.log(a) - mx.log(f)
    # Small a, P near 1: Q without the cancellation of 1 - P.
    small_a_q = _igamma_small_a_q(a, x)
    aq, xq = mx.where(small_a_q, a, 0.5), mx.where(small_a_q, x, 0.5)
    y = aq * mx.log(xq) - _lgamma1p(aq)
    term, alternating = mx.ones_like(xq), mx.zeros_like(xq)
    for n in range(1, _IGAMMA_SMALL_A_TERMS + 1):
        term = term * (-xq / n)
        alternating = alternating + term / (aq + n)
    log_q_small = mx.log(-mx.expm1(y) - _exp(y) * aq * alternating)
    log_series = mx.where(small_a_q, log_q_small, log_pref + mx.log(s))
    return mx.where(temme, log_temme, mx.where(series, log_series, log_fraction))


def _igamma_small_a_q(a: mx.array, x: mx.array) -> mx.array:
    """Where the series region computes ``Q`` (``a < 1`` and ``P`` about 1/2
    or more: ``x^a > 1/2``)."""
    return (a < 1.0) & (x < a + 1.0) & (a * mx.log(x) > -math.log(2.0))


def _igamma_tail_is_q(a: mx.array, x: mx.array) -> mx.array:
    """Whether ``_igamma_log_tail`` computes ``Q`` (else ``P``)."""
    temme = (a >= _TEMME_FROM) & (mx.abs(x - a) < _TEMME_WIDTH * a)
    return mx.where(temme, x >= a, (x >= a + 1.0) | _igamma_small_a_q(a, x))


def _igamma_domain(a: mx.array, x: mx.array) -> tuple[mx.array, mx.array, mx.array]:
    """``(inside, a', x')``: where ``a > 0`` and ``0 < x < inf`` are finite,
    with ``a``, ``x`` replaced by 1 elsewhere (so no branch sees them)."""
    inside = (a > 0) & (x > 0) & (a < math.inf) & (x < math.inf)
    return inside, mx.where(inside, a, 1.0), mx.where(inside, x, 1.0)


def _igamma_edges(p: mx.array, a: mx.array, x: mx.array, inside: mx.array) -> mx.array:
    """``P(a, x)`` where ``_igamma_domain`` replaced the operands, as SciPy:
    0 at ``x == 0`` and for ``a == inf``, 1 at ``x == inf`` and for
    ``a == 0``, NaN for negative operands, ``a == x == 0`` or ``a == x == inf``."""
    edge = mx.where((x == 0) | (a == math.inf), 0.0, 1.0)
    bad = (a < 0) | (x < 0) | mx.isnan(a) | mx.isnan(x) | ((a == 0) & (x == 0)) | (
        (a == math.inf) & (x == math.inf))
    return mx.where(inside, p, mx.where(bad, math.nan, edge))


@_nary
def _igamma_impl(a: mx.array, x: mx.array) -> mx.array:
    inside, a1, x1 = _igamma_domain(a, x)
    log_tail, is_q = _igamma_log_tail(a1, x1), _igamma_tail_is_q(a1, x1)
    p = mx.where(is_q, -mx.expm1(log_tail), _exp(log_tail))
    return _igamma_edges(p, a, x, inside)


@_nary
def _igammac_impl(a: mx.array, x: mx.array) -> mx.array:
    inside, a1, x1 = _igamma_domain(a, x)
    log_tail, is_q = _igamma_log_tail(a1, x1), _igamma_tail_is_q(a1, x1)
    q = mx.where(is_q, _exp(log_tail), -mx.expm1(log_tail))
    return mx.where(inside, q, 1.0 - _igamma_edges(q, a, x, inside))


def _log_tail_and_slope_a(a: mx.array, x: mx.array) -> tuple[mx.array, mx.array]:
    """``(log T, d log T / da)``: forward mode (MLX's) through
    ``_igamma_log_tail``, so the slope is as accurate as ``T``'s series,
    fraction or expansion (each differentiated term by term)."""
    (log_tail,), (slope,) = mx.jvp(lambda a_: [_igamma_log_tail(a_, x)], [a], [mx.ones_like(a)])
    return log_tail, slope


@_nary
def _igamma_grad_a_impl(a: mx.array, x: mx.array) -> mx.array:
    inside, a1, x1 = _igamma_domain(a, x)
    log_tail, slope = _log_tail_and_slope_a(a1, x1)
    # dP/da = -dQ/da: T's slope with the sign of P.
    grad = mx.where(_igamma_tail_is_q(a1, x1), -1.0, 1.0) * _exp(log_tail) * slope
    # P is 0 at x == 0 and 1 at x == inf whatever a is.
    flat = ((x == 0) | (x == math.inf)) & (a > 0) & (a < math.inf)
    return mx.where(inside, grad, mx.where(flat, 0.0, math.nan))


@_nary
def _random_gamma_grad_impl(a: mx.array, x: mx.array) -> mx.array:
    inside, a1, x1 = _igamma_domain(a, x)
    log_tail, slope_a = _log_tail_and_slope_a(a1, x1)
    # d log T / dx = +-(dP/dx) / T (+ for T = P), in closed form from the
    # density dP/dx = x^(a-1) e^-x / Gamma(a), in logs so nothing underflows.
    log_density = (a1 - 1.0) * mx.log(x1) - x1 - _lgamma_positive(a1)
    slope_x = mx.where(_igamma_tail_is_q(a1, x1), -1.0, 1.0) * _exp(log_density - log_tail)
    # d sample / d a = -(dP/da) / (dP/dx), the same ratio for T = P or Q and
    # for log T; 0 at x == 0 (the limit).
    grad = -slope_a / slope_x
    at_zero = (x == 0) & (a > 0) & (a < math.inf)
    return mx.where(inside, grad, mx.where(at_zero, 0.0, math.nan))


def _igamma_dx(a: Any, x: Any) -> Any:
    """``dP/dx = x^(a-1) e^-x / Gamma(a)``."""
    return lax.exp(lax.subtract(lax.subtract(lax.multiply(lax.subtract(a, 1.0), lax.log(x)), x),
                                lax.lgamma(a)))


def _scalars_as_arrays(*operands: Any) -> list[Any]:
    """The operands with Python scalars made arrays of the others' dtype, for
    the rules (the unary special functions take arrays only)."""
    dtype = next(aval_of(v).dtype for v in operands if not is_constant_scalar(v))
    return [mx.array(v, dtype) if is_constant_scalar(v) else v for v in operands]


def _a_not_differentiable(name: str) -> str:
    return (f"{name}: the derivative with respect to a is not implemented (as in JAX); "
            "differentiate with respect to x only")


def _binary_special(prim: Primitive, d_a: Callable | None, d_x: Callable) -> None:
    """The JVP and VJP of a broadcasting ``f(a, x)`` given its partial
    derivatives ``d_a(a, x)`` and ``d_x(a, x)`` (written with ``lax``);
    ``d_a=None``: differentiating in ``a`` raises NotImplementedError."""

    def d_a_or_raise(a, x):
        if d_a is None:
            raise NotImplementedError(_a_not_differentiable(prim.name))
        return d_a(a, x)

    @prim.def_jvp
    def jvp(primals, tangents):
        (a, x), (ta, tx) = _scalars_as_arrays(*primals), tangents
        out = prim.bind(a, x)
        return out, tangent_to(add_tangents(
            None if ta is None else lax.multiply(ta, d_a_or_raise(a, x)),
            None if tx is None else lax.multiply(tx, d_x(a, x))), out)

    @prim.def_vjp
    def vjp(ct, out, a, x, *, needed):
        a, x = _scalars_as_arrays(a, x)
        return (unbroadcast(lax.multiply(ct, d_a_or_raise(a, x)), a) if needed[0] else None,
                unbroadcast(lax.multiply(ct, d_x(a, x)), x) if needed[1] else None)

    broadcasting(prim)


igamma_p = Primitive("igamma", _igamma_impl, elementwise=True, autocast="float32")
_binary_special(igamma_p, lambda a, x: igamma_grad_a(a, x), _igamma_dx)


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function
    ``P(a, x) = gamma(a, x) / Gamma(a)``, as ``jax.lax.igamma``
    (``scipy.special.gammainc``): 0 at ``x == 0``, 1 at ``x == inf`` and
    for ``a == 0 < x``, NaN for negative ``a`` or ``x``. Differentiable in
    both (``igamma_grad_a`` in ``a``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.igamma(mx.array([1.0, 3.0]), mx.array([1.0, 2.0])).tolist()]
    [0.632121, 0.323324]
    """
    return igamma_p.bind(a, x)


igammac_p = Primitive("igammac", _igammac_impl, elementwise=True, autocast="float32")
_binary_special(igammac_p, lambda a, x: lax.negative(igamma_grad_a(a, x)),
                lambda a, x: lax.negative(_igamma_dx(a, x)))


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function
    ``Q(a, x) = 1 - P(a, x)``, accurate where it is tiny, as
    ``jax.lax.igammac`` (``scipy.special.gammaincc``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [f"{v:.4e}" for v in lax.igammac(mx.array([1.0, 3.0]), mx.array([1.0, 40.0])).tolist()]
    ['3.6788e-01', '3.5729e-15']
    """
    return igammac_p.bind(a, x)


igamma_grad_a_p = Primitive("igamma_grad_a", _igamma_grad_a_impl, elementwise=True,
                            autocast="float32")
# d/dx dP/da = dP/dx (log x - digamma(a)); in a it is not implemented (as JAX).
_binary_special(igamma_grad_a_p, None, lambda a, x: lax.multiply(
    _igamma_dx(a, x), lax.subtract(lax.log(x), lax.digamma(a))))


def igamma_grad_a(a: Any, x: Any) -> Any:
    """``dP(a, x)/da``, the derivative of ``igamma`` in ``a``, as
    ``jax.lax.igamma_grad_a`` (0 at ``x == 0`` and ``x == inf``).
    Differentiable in ``x`` only.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> round(lax.igamma_grad_a(mx.array(1.5), mx.array(2.0)).item(), 6)
    -0.277434
    """
    return igamma_grad_a_p.bind(a, x)


def _random_gamma_grad_dx(a: Any, x: Any) -> Any:
    # r = -P_a / P_x: dr/dx = -P_ax / P_x - r P_xx / P_x, with
    # P_ax / P_x = log x - digamma(a) and P_xx / P_x = (a - 1) / x - 1.
    r = random_gamma_grad(a, x)
    return lax.negative(lax.add(
        lax.multiply(r, lax.subtract(lax.divide(lax.subtract(a, 1.0), x), 1.0)),
        lax.subtract(lax.log(x), lax.digamma(a))))


random_gamma_grad_p = Primitive("random_gamma_grad", _random_gamma_grad_impl, elementwise=True,
                                autocast="float32")
_binary_special(random_gamma_grad_p, None, _random_gamma_grad_dx)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative of a ``Gamma(a, 1)`` sample ``x`` in ``a`` by implicit
    reparameterisation, ``-(dP/da) / (dP/dx)`` with ``P = igamma``, as
    ``jax.lax.random_gamma_grad``; computed from ``log P`` or ``log Q``, so
    it stays finite in both tails. Differentiable in ``x`` only.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> round(lax.random_gamma_grad(mx.array(1.0), mx.array(1.0)).item(), 5)
    1.17356
    """
    return random_gamma_grad_p.bind(a, x)


# ----------------------------------------------------------------------------
# The regularized incomplete beta function
# ----------------------------------------------------------------------------

_BETAINC_FRACTION_TERMS = {mx.float64: 300, mx.float32: 160}


def _log_beta_prefactor(a: mx.array, b: mx.array, x: mx.array) -> mx.array:
    """``log(x^a (1-x)^b / B(a, b))`` for ``a, b > 0`` and ``0 < x < 1``.
    With both ``a, b >= 12``, Stirling's form
    ``a log(x (a+b)/a) + b log((1-x) (a+b)/b) + log(ab / (2 pi (a+b)))/2
    - log Gamma*(a) - log Gamma*(b) + log Gamma*(a+b)``, whose terms do not
    cancel as the ``lgamma`` values do."""
    big = (a >= _STIRLING_FROM) & (b >= _STIRLING_FROM)
    ab, bb = mx.where(big, a, _STIRLING_FROM), mx.where(big, b, _STIRLING_FROM)
    s = ab + bb
    stirling = (ab * mx.log(x * (s / ab)) + bb * mx.log((1.0 - x) * (s / bb))
                + 0.5 * mx.log(ab * bb / (2.0 * math.pi * s))
                - _log_gamma_star(ab) - _log_gamma_star(bb) + _log_gamma_star(s))
    direct = (a * mx.log(x) + b * mx.log1p(-x)
              - (_lgamma_impl(a) + _lgamma_impl(b) - _lgamma_impl(a + b)))
    return mx.where(big, stirling, direct)


def _betainc_lower(a: mx.array, b: mx.array, x: mx.array) -> mx.array:
    """``I_x(a, b)`` for ``x < (a + 1) / (a + b + 2)``, where the continued
    fraction ``x^a (1-x)^b / (a B(a, b)) / (1 + d_1 / (1 + d_2 / (1 + ...)))``,
    ``d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))``,
    ``d_{2m} = m (b-m) x / ((a+2m-1)(a+2m))``, converges fast; evaluated
    from its tail back."""
    f = mx.ones_like(x)
    for k in range(_BETAINC_FRACTION_TERMS[x.dtype], 0, -1):
        m = k // 2
        if k % 2:
            d = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            d = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        f = 1.0 + d / f
    return _exp(_log_beta_prefactor(a, b, x) - mx.log(a) - mx.log(f))


@_nary
def _betainc_impl(a: mx.array, b: mx.array, x: mx.array) -> mx.array:
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1) & (a < math.inf) & (b < math.inf)
    a1, b1, x1 = (mx.where(inside, v, 0.5) for v in (a, b, x))
    # I_x(a, b) = 1 - I_{1-x}(b, a): the fraction on the side where it converges.
    swap = x1 * (a1 + b1 + 2.0) > a1 + 1.0
    p, q = mx.where(swap, b1, a1), mx.where(swap, a1, b1)
    y = mx.where(swap, 1.0 - x1, x1)
    tail = _betainc_lower(p, q, y)
    out = mx.where(swap, 1.0 - tail, tail)
    # SciPy's edges: 0 at x == 0 or b == 0 < a, 1 at x == 1 or a == 0 < b;
    # NaN for negative or infinite parameters, a == b == 0, x outside [0, 1].
    zero = ((x == 0) | (b == 0)) & (a > 0)
    one = ((x == 1) | (a == 0)) & (b > 0)
    finite = (a < math.inf) & (b < math.inf)
    edge = mx.where(zero & ~one & finite, 0.0, mx.where(one & ~zero & finite, 1.0, math.nan))
    edge = mx.where((a >= 0) & (b >= 0) & (x >= 0) & (x <= 1), edge, math.nan)
    return mx.where(inside, out, edge)


def _betainc_dx(a: Any, b: Any, x: Any) -> Any:
    """``d I_x(a, b) / dx = x^(a-1) (1-x)^(b-1) / B(a, b)``."""
    log_beta = lax.subtract(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))
    return lax.exp(lax.subtract(
        lax.add(lax.multiply(lax.subtract(a, 1.0), lax.log(x)),
                lax.multiply(lax.subtract(b, 1.0), lax.log1p(lax.negative(x)))),
        log_beta))


_BETAINC_AB_ERROR = ("betainc: the derivative with respect to a and b is not implemented (as "
                     "in JAX); differentiate with respect to x only")

betainc_p = Primitive("betainc", _betainc_impl, elementwise=True, autocast="float32")
broadcasting(betainc_p)


@betainc_p.def_jvp
def _betainc_jvp(primals, tangents):
    (a, b, x), (ta, tb, tx) = _scalars_as_arrays(*primals), tangents
    if ta is not None or tb is not None:
        raise NotImplementedError(_BETAINC_AB_ERROR)
    out = betainc_p.bind(a, b, x)
    return out, tangent_to(None if tx is None else lax.multiply(tx, _betainc_dx(a, b, x)), out)


@betainc_p.def_vjp
def _betainc_vjp(ct, out, a, b, x, *, needed):
    if needed[0] or needed[1]:
        raise NotImplementedError(_BETAINC_AB_ERROR)
    a, b, x = _scalars_as_arrays(a, b, x)
    return (None, None,
            unbroadcast(lax.multiply(ct, _betainc_dx(a, b, x)), x) if needed[2] else None)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function
    ``I_x(a, b) = B(x; a, b) / B(a, b)``, as ``jax.lax.betainc``
    (``scipy.special.betainc``): 0 at ``x == 0``, 1 at ``x == 1``, NaN for
    negative ``a``, ``b`` or ``x`` outside [0, 1]. Differentiable in ``x``
    only, as in JAX.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.betainc(mx.array([2.0, 0.5]), 3.0, mx.array([0.4, 0.9])).tolist()]
    [0.5248, 0.999675]
    """
    return betainc_p.bind(a, b, x)


# ----------------------------------------------------------------------------
# Exponential integrals
# ----------------------------------------------------------------------------

_EULER_GAMMA = 0.5772156649015329
_E1_SERIES_TO = 1.0
_E1_SERIES_TERMS = 24
_E1_FRACTION_TERMS = 110
_EI_ASYMPTOTIC_FROM = 40.0
_EI_SERIES_TERMS = 110
_EI_ASYMPTOTIC_TERMS = 40


def _e1_positive(x: mx.array) -> mx.array:
    """``E1(x) = int_x^inf e^-t / t dt`` for ``x > 0``: its power series
    ``-gamma - log x - sum_k (-x)^k / (k k!)`` up to 1, and the continued
    fraction ``e^-x / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - 9 / ...)))`` beyond."""
    small = mx.minimum(x, _E1_SERIES_TO)
    s, term = mx.zeros_like(x), mx.ones_like(x)  # sum_k (-x)^k / (k k!)
    for k in range(1, _E1_SERIES_TERMS + 1):
        term = term * (-small / k)
        s = s + term / k
    series = -_EULER_GAMMA - mx.log(small) - s
    big = mx.maximum(x, _E1_SERIES_TO)
    f = big + (2 * _E1_FRACTION_TERMS + 1)
    for k in range(_E1_FRACTION_TERMS, 0, -1):
        f = big + (2 * k - 1) - (k * k) / f
    return mx.where(x <= _E1_SERIES_TO, series, _exp(-big) / f)


def _ei_positive(x: mx.array) -> mx.array:
    """``Ei(x)`` for ``x > 0``: ``gamma + log x + sum_k x^k / (k k!)`` (all
    terms positive) up to 40, then ``e^x / x sum_k k! / x^k``."""
    small = mx.minimum(x, _EI_ASYMPTOTIC_FROM)
    s, term = mx.zeros_like(x), mx.ones_like(x)  # sum_k x^k / (k k!)
    for k in range(1, _EI_SERIES_TERMS + 1):
        term = term * (small / k)
        s = s + term / k
    series = _EULER_GAMMA + mx.log(small) + s
    big = mx.maximum(x, _EI_ASYMPTOTIC_FROM)
    a = mx.ones_like(x)
    for k in range(_EI_ASYMPTOTIC_TERMS, 0, -1):
        a = 1.0 + a * (k / big)
    return mx.where(x <= _EI_ASYMPTOTIC_FROM, series, _exp(big - mx.log(big)) * a)


@_in_float32
def _exp1_impl(x: mx.array) -> mx.array:
    out = _e1_positive(mx.where(x > 0, x, 1.0))
    return mx.where(x > 0, out, mx.where(x == 0, math.inf, math.nan))


exp1_p = Primitive("exp1", _exp1_impl, elementwise=True, autocast="float32")
vectorized(exp1_p)
derivative(exp1_p, lambda x, y: lax.negative(lax.divide(lax.exp(lax.negative(x)), x)))


def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x) = int_x^inf e^-t / t dt`` of a
    floating array, as ``jax.scipy.special.exp1`` (``inf`` at 0, NaN for
    ``x < 0``); derivative ``-e^-x / x``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.exp1(mx.array([0.1, 1.0, 5.0])).tolist()]
    [1.822924, 0.219384, 0.001148]
    """
    return exp1_p.bind(x)


@_in_float32
def _expi_impl(x: mx.array) -> mx.array:
    # Ei(x) = -E1(-x) for x < 0.
    pos = _ei_positive(mx.where(x > 0, x, 1.0))
    neg = -_e1_positive(mx.where(x < 0, -x, 1.0))
    out = mx.where(x > 0, pos, neg)
    return mx.where(x == 0, -math.inf, out)


expi_p = Primitive("expi", _expi_impl, elementwise=True, autocast="float32")
vectorized(expi_p)
derivative(expi_p, lambda x, y: lax.divide(lax.exp(x), x))


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x) = -PV int_-x^inf e^-t / t dt`` of a
    floating array, as ``jax.scipy.special.expi`` (``-inf`` at 0, as SciPy;
    ``-E1(-x)`` for ``x < 0``); derivative ``e^x / x``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.expi(mx.array([-1.0, 0.5, 2.0])).tolist()]
    [-0.219384, 0.45422, 4.954234]
    """
    return expi_p.bind(x)


# ----------------------------------------------------------------------------
# The Hurwitz zeta function (a composite: its derivatives are those of the sum)
# ----------------------------------------------------------------------------

_ZETA_SHIFT = 12
# Euler-Maclaurin: B_2j / (2j)! for the tail's terms j = 1 ... 9.
_ZETA_TAIL = tuple(b / math.factorial(2 * j) for j, b in enumerate(_BERNOULLI[:9], 1))


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)^-x`` (``x > 1``;
    ``inf`` at ``x == 1``, NaN below), as ``jax.lax.zeta``. The first
    ``12`` terms are summed, the rest by the Euler-Maclaurin formula
    ``a^(1-x) / (x-1) + a^-x / 2 + sum_j B_2j / (2j)! x (x+1) ... (x+2j-2) a^(-x-2j+1)``,
    ``a = q + 12``. A composite of ``lax`` ops, so differentiable in both
    ``x`` and ``q`` (``jax.lax.zeta`` has no derivative; ``jax.scipy.special.zeta``
    has these).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.zeta(mx.array([2.0, 3.0]), mx.array([1.0, 0.5])).tolist()]
    [1.644934, 8.414398]
    """
    direct = lax.power(q, lax.negative(x))
    for k in range(1, _ZETA_SHIFT):
        direct = lax.add(direct, lax.power(lax.add(q, float(k)), lax.negative(x)))
    a = lax.add(q, float(_ZETA_SHIFT))
    a_pow = lax.power(a, lax.negative(x))  # a^-x
    tail = lax.add(lax.divide(lax.multiply(a_pow, a), lax.subtract(x, 1.0)),
                   lax.multiply(0.5, a_pow))
    term = lax.divide(lax.multiply(a_pow, x), a)  # x (x+1) ... (x+2j-2) a^(-x-2j+1), j = 1
    inv_a2 = lax.reciprocal(lax.square(a))
    for j, c in enumerate(_ZETA_TAIL, 1):
        tail = lax.add(tail, lax.multiply(c, term))
        rising = lax.multiply(lax.add(x, float(2 * j - 1)), lax.add(x, float(2 * j)))
        term = lax.multiply(term, lax.multiply(rising, inv_a2))
    out = lax.add(direct, tail)
    return lax.where(lax.less(x, 1.0), math.nan, lax.where(lax.equal(x, 1.0), math.inf, out))


# ----------------------------------------------------------------------------
# Dawson's integral
# ----------------------------------------------------------------------------

_DAWSN_SERIES_TO = 6.0
_DAWSN_SERIES_TERMS = {mx.float64: 120, mx.float32: 80}
_DAWSN_ASYMPTOTIC_TERMS = 30


@_in_float32
def _dawsn_impl(x: mx.array) -> mx.array:
    # D(x) = e^(-x^2) int_0^x e^(t^2) dt, odd: e^(-x^2) sum_k x^(2k+1) / (k! (2k+1))
    # (all terms positive) up to 6, then 1/(2x) sum_k (2k-1)!! / (2x^2)^k.
    a = mx.abs(x)
    small = mx.minimum(a, _DAWSN_SERIES_TO)
    x2 = small * small
    s, term = mx.ones_like(a), mx.ones_like(a)
    for k in range(1, _DAWSN_SERIES_TERMS[a.dtype] + 1):
        term = term * (x2 / k)
        s = s + term / (2 * k + 1)
    series = _exp_neg_square(small) * small * s
    big = mx.maximum(a, _DAWSN_SERIES_TO)
    inv = 1.0 / (2.0 * big * big)
    tail = mx.ones_like(a)
    for k in range(_DAWSN_ASYMPTOTIC_TERMS, 0, -1):
        tail = 1.0 + tail * ((2 * k - 1) * inv)
    out = mx.where(a <= _DAWSN_SERIES_TO, series, tail / (2.0 * big))
    return mx.where(x < 0, -out, out)


dawsn_p = Primitive("dawsn", _dawsn_impl, elementwise=True, autocast="float32")
vectorized(dawsn_p)
derivative(dawsn_p, lambda x, y: lax.subtract(1.0, lax.multiply(lax.multiply(2.0, x), y)))


def dawsn(x: Any) -> Any:
    """Dawson's integral ``D(x) = e^(-x^2) int_0^x e^(t^2) dt`` of a floating
    array, as ``jax.scipy.special.dawsn``; derivative ``1 - 2 x D(x)``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> [round(v, 6) for v in lax.dawsn(mx.array([-1.0, 0.5, 10.0])).tolist()]
    [-0.53808, 0.424436, 0.050254]
    """
    return dawsn_p.bind(x)
