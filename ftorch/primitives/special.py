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

import math
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Primitive, Tracer
from ftorch.primitives._rules import derivative, vectorized
from ftorch.primitives.elementwise import accurate_exp as _exp

__all__ = ["lgamma", "digamma", "polygamma", "bessel_i0e", "bessel_i1e", "erfc", "log_ndtr",
           "ndtri", "sinc"]

_LOG_PI = math.log(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)

# Bernoulli numbers B_2, B_4, ..., B_20.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)

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
    ok = a < 1e15  # beyond, the result is 0 (and the head's square overflows)
    hi = mx.where(ok, a.astype(head_dtype).astype(a.dtype), a)
    tail = mx.where(ok, (a - hi) * (a + hi), 0.0)
    return _exp(-(hi * hi)) * _exp(-tail)


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
    z = mx.maximum(x, _STIRLING_FROM)
    inv = 1.0 / z
    stirling = ((z - 0.5) * (mx.log(z) - 1.0) + (_HALF_LOG_2PI - 0.5)
                + inv * _poly(_STIRLING, inv * inv))
    return mx.where(x < _STIRLING_FROM, small, stirling)


@_in_float32
def _lgamma_impl(x: mx.array) -> mx.array:
    positive = _lgamma_positive(mx.where(x > 0, x, 1.0 - x))
    # Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x); +inf at the poles.
    reflected = _LOG_PI - mx.log(mx.abs(_sinpi(x))) - positive
    out = mx.where(x > 0, positive, reflected)
    return mx.where(x == -math.inf, math.inf, out)


lgamma_p = Primitive("lgamma", _lgamma_impl, elementwise=True)
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


digamma_p = Primitive("digamma", _digamma_impl, elementwise=True)
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


polygamma_p = Primitive("polygamma", _polygamma_impl, elementwise=True)
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


bessel_i0e_p = Primitive("bessel_i0e", _i0e_impl, elementwise=True)
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


bessel_i1e_p = Primitive("bessel_i1e", _i1e_impl, elementwise=True)
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


@_in_float32
def _erfc_impl(x: mx.array) -> mx.array:
    out = _erfc_abs(mx.abs(x))
    return mx.where(x < 0, 2.0 - out, out)


erfc_p = Primitive("erfc", _erfc_impl, elementwise=True)
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


log_ndtr_p = Primitive("log_ndtr", _log_ndtr_impl, elementwise=True)
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


ndtri_p = Primitive("ndtri", _ndtri_impl, elementwise=True)
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
