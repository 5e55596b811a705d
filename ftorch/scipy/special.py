"""``ftorch.scipy.special``, as ``jax.scipy.special``: gamma and beta
functions, the error function family and the normal distribution function,
scaled modified Bessel functions, entropies, ``xlogy``, ``logsumexp`` and
friends; differentiable under every ftorch transform.

Arguments are promoted as JAX does (integers and booleans to float32;
Python scalars take the other argument's dtype). The functions MLX lacks are
primitives of ``ftorch.primitives.special`` (``ftorch.lax``): ``lgamma``,
``digamma``, ``polygamma``, ``bessel_i0e``, ``bessel_i1e``, ``erfc``,
``log_ndtr``, ``ndtri``, ``sinc``; the rest is built from them. Accuracy,
float64: within about 1e-13 relative of SciPy where the function is well
conditioned, for those primitives and the functions built from them without
``exp``; those that go through ``exp``, ``erf``, ``erfinv``, ``expit`` or
``logaddexp`` (``gamma``, ``beta``, ``i0``, ``i1``, ``expit``, ``log_expit``,
``softplus``, ``erf``, ``erfinv``) inherit the accuracy of MLX's float64
kernels for those, which is float32's.

Beyond ``jax.scipy.special``: ``log_expit`` and ``softplus`` (SciPy's
names), and ``sinc`` (``numpy.sinc``).

>>> import ftorch.scipy.special as fss, mlx.core as mx
>>> [round(v, 6) for v in fss.gammaln(mx.array([0.5, 4.0])).tolist()]
[0.572365, 1.791759]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import numpy as fnp
from ftorch.core import Tracer, aval_of
from ftorch.custom import custom_jvp
from ftorch.numpy._creation import asarray
from ftorch.numpy._elementwise import sinc  # (numpy.sinc; also here for SciPy-style code)
from ftorch.numpy._math import promote_inexact as _inexact
from ftorch.primitives.reduction import normalize_axes
from ftorch.typing import Axis

__all__ = [
    "gammaln", "gamma", "gammasgn", "digamma", "polygamma", "betaln", "beta", "multigammaln",
    "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "logit", "expit", "log_expit",
    "softplus", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e",
    "sinc", "logsumexp", "softmax", "log_softmax",
]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


# ----------------------------------------------------------------------------
# Gamma and beta functions
# ----------------------------------------------------------------------------


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|``, as ``jax.scipy.special.gammaln`` (``+inf`` at the
    poles ``0, -1, -2, ...`` and at ``-inf``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.gammaln(mx.array([1.0, -0.5, 100.0], dtype=mx.float64)).tolist()]
    [0.0, 1.265512, 359.134205]
    """
    (x,) = _inexact("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x: Any) -> Any:
    """The sign of ``Gamma(x)``: 1 for ``x > 0``, ``(-1)^ceil(-x)`` between
    the poles, the sign of the zero at ``+-0``, NaN at the negative integers
    and ``-inf`` (as ``jax.scipy.special.gammasgn``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> fss.gammasgn(mx.array([2.5, -0.5, -1.5])).tolist()
    [1.0, -1.0, 1.0]
    """
    (x,) = _inexact("gammasgn", x)
    floor = lax.floor(x)
    odd = lax.not_equal(lax.remainder(floor, 2.0), 0.0)
    sign = lax.where(lax.logical_or(lax.greater(x, 0.0), lax.logical_not(odd)), 1.0, -1.0)
    zero = lax.equal(x, 0.0)
    # 1/x tells -0.0 from +0.0.
    sign = lax.where(zero, lax.where(lax.greater(lax.reciprocal(x), 0.0), 1.0, -1.0), sign)
    pole = lax.logical_and(lax.less(x, 0.0), lax.equal(x, floor))
    sign = lax.where(lax.logical_or(pole, lax.isnan(x)), math.nan, sign)
    return lax.astype(sign, aval_of(x).dtype)


def gamma(x: Any) -> Any:
    """The gamma function, ``gammasgn(x) * exp(gammaln(x))``, as
    ``jax.scipy.special.gamma`` (``+-inf`` at ``+-0``, NaN at the negative
    integers and ``-inf``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 4) for v in fss.gamma(mx.array([5.0, 0.5, -1.5])).tolist()]
    [24.0, 1.7725, 2.3633]
    """
    (x,) = _inexact("gamma", x)
    return lax.multiply(gammasgn(x), lax.exp(lax.lgamma(x)))


def digamma(x: Any) -> Any:
    """The digamma function ``d/dx log Gamma(x)``, as
    ``jax.scipy.special.digamma`` (NaN at the poles ``0, -1, -2, ...``;
    SciPy gives ``-+inf`` at ``+-0``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.digamma(mx.array([1.0, 2.0])).tolist()]
    [-0.577216, 0.422784]
    """
    (x,) = _inexact("digamma", x)
    return lax.digamma(x)


def _static_order(n: Any) -> list[int] | int:
    """``n`` of ``polygamma`` as a Python int, or the list of a concrete
    integer array's values; a clear error otherwise."""
    if isinstance(n, bool):
        raise TypeError("polygamma: n must be an integer, got a bool")
    if isinstance(n, int):
        values = [n]
    elif isinstance(n, Tracer):
        raise TypeError(
            "polygamma: n must be concrete (a Python int or an integer array outside of "
            "jit/vmap); ftorch's polygamma takes the order as a static parameter")
    else:
        if isinstance(n, float):
            raise TypeError(f"polygamma: n must be of integer type, got the float {n!r}")
        n = asarray(n)
        if not mx.issubdtype(n.dtype, mx.integer):
            raise TypeError(f"polygamma: n must be of integer type, got dtype {n.dtype}")
        values = [int(v) for v in mx.reshape(n, (-1,)).tolist()]
    if any(v < 0 for v in values):
        raise ValueError(f"polygamma: n must be non-negative, got {min(values)}")
    return values[0] if isinstance(n, int) else values


def polygamma(n: Any, x: Any) -> Any:
    """The ``n``-th derivative of ``digamma`` at ``x``, as
    ``jax.scipy.special.polygamma``; exact for negative ``x`` too (as SciPy).

    ``n`` must be of integer type (an int or an integer array, broadcast
    with ``x``) and concrete: it is a static parameter of the ``polygamma``
    primitive, so it cannot be traced by ``jit`` or ``vmap`` (``x`` can).
    ``polygamma(0, x)`` is ``digamma(x)``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.polygamma(1, mx.array([1.0, 0.5])).tolist()]
    [1.644934, 4.934802]
    >>> [round(v, 6) for v in fss.polygamma(mx.array([1, 2]), mx.array(1.0)).tolist()]
    [1.644934, -2.404114]
    """
    orders = _static_order(n)
    (x,) = _inexact("polygamma", x)
    if isinstance(orders, int):
        return lax.polygamma(orders, x)
    n_arr = asarray(n)
    shape = tuple(mx.broadcast_shapes(tuple(n_arr.shape), tuple(aval_of(x).shape)))
    out = None
    for k in sorted(set(orders)):
        val = lax.polygamma(k, x)
        out = val if out is None else lax.where(lax.equal(n_arr, k), val, out)
    return lax.broadcast_to(out, shape) if tuple(aval_of(out).shape) != shape else out


def _stirling_correction(x: Any) -> Any:
    """``lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2)`` for ``x >= 10``:
    Stirling's series in ``1/x``, to float64's precision."""
    bern = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
    coeffs = [b / (2 * k * (2 * k - 1)) for k, b in enumerate(bern, 1)]
    inv = lax.reciprocal(x)
    inv2 = lax.square(inv)
    acc = lax.full_like(x, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = lax.add(lax.multiply(acc, inv2), c)
    return lax.multiply(acc, inv)


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``, ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``, as
    ``jax.scipy.special.betaln``. For positive arguments with one of them
    past 10 the large ``lgamma`` terms cancel analytically (Stirling's series),
    so ``betaln(1e10, 1.0)`` keeps all its digits.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.betaln(mx.array([1.0, 2.0]), mx.array([2.0, 3.0])).tolist()]
    [-0.693147, -2.484907]
    """
    a, b = _inexact("betaln", a, b)
    # The smaller and the larger by selection, not minimum/maximum: at a tie
    # those split the gradient, which is right to first order only.
    a_first = lax.less_equal(a, b)
    p, q = lax.where(a_first, a, b), lax.where(a_first, b, a)
    direct = lax.subtract(lax.add(lax.lgamma(p), lax.lgamma(q)), lax.lgamma(lax.add(p, q)))
    big_q = lax.greater_equal(q, 10.0)
    big_p = lax.greater_equal(p, 10.0)
    mixed = lax.logical_and(big_q, lax.logical_and(lax.greater(p, 0.0),
                                                   lax.logical_not(big_p)))
    # Safe stand-ins where a branch is not taken, so that no branch puts a
    # NaN into the gradient of the one that is.
    qs = lax.where(big_q, q, 10.0)
    ps = lax.where(mixed, p, 1.0)
    pl = lax.where(big_p, p, 10.0)
    ql = lax.where(big_p, q, 10.0)
    # Mixed, q >= 10 > p > 0: lgamma(q) - lgamma(p + q) =
    # -(q - 1/2) log1p(p/q) - p log(p + q) + p + D(q) - D(p + q).
    s = lax.add(ps, qs)
    diff = lax.add(
        lax.subtract(lax.negative(lax.multiply(lax.subtract(qs, 0.5),
                                               lax.log1p(lax.divide(ps, qs)))),
                     lax.multiply(ps, lax.log(s))),
        lax.add(ps, lax.subtract(_stirling_correction(qs), _stirling_correction(s))))
    mixed_val = lax.add(lax.lgamma(ps), diff)
    # Both >= 10: log(2 pi)/2 - log(s)/2 + (p - 1/2) log(p/s) - (q - 1/2) log1p(p/q)
    # + D(p) + D(q) - D(s).
    sl = lax.add(pl, ql)
    large_val = lax.add(
        lax.add(lax.subtract(_HALF_LOG_2PI, lax.multiply(0.5, lax.log(sl))),
                lax.subtract(lax.multiply(lax.subtract(pl, 0.5), lax.log(lax.divide(pl, sl))),
                             lax.multiply(lax.subtract(ql, 0.5),
                                          lax.log1p(lax.divide(pl, ql))))),
        lax.subtract(lax.add(_stirling_correction(pl), _stirling_correction(ql)),
                     _stirling_correction(sl)))
    return lax.where(big_p, large_val, lax.where(mixed, mixed_val, direct))


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``, with its sign,
    as ``jax.scipy.special.beta``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.beta(mx.array([1.0, 2.0]), mx.array([2.0, 3.0])).tolist()]
    [0.5, 0.083333]
    """
    a, b = _inexact("beta", a, b)
    sign = lax.multiply(lax.multiply(gammasgn(a), gammasgn(b)), gammasgn(lax.add(a, b)))
    return lax.multiply(sign, lax.exp(betaln(a, b)))


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension ``d`` (a
    Python int >= 1), ``d(d-1)/4 log(pi) + sum_{i<d} gammaln(a - i/2)``, as
    ``jax.scipy.special.multigammaln``. SciPy raises when some
    ``a <= (d - 1)/2``; here (as JAX) values are not checked.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> round(fss.multigammaln(mx.array(3.0), 3).item(), 6)
    2.694925
    """
    if isinstance(d, bool) or not isinstance(d, int):
        raise TypeError(f"multigammaln: d must be a Python int, got {d!r}")
    if d < 1:
        raise ValueError(f"multigammaln: d must be at least 1, got {d}")
    (a,) = _inexact("multigammaln", a)
    out = lax.lgamma(a)
    for i in range(1, d):
        out = lax.add(out, lax.lgamma(lax.subtract(a, 0.5 * i)))
    return lax.add(out, 0.25 * d * (d - 1) * math.log(math.pi))


# ----------------------------------------------------------------------------
# x log y and entropies (JAX's derivatives: defined at x = 0)
# ----------------------------------------------------------------------------


def _xlog(log: Any, shift: float):
    """``x * log(y + shift)``, 0 where ``x == 0`` (unless ``y`` is NaN), with
    JAX's derivative ``dx log(y + shift) + dy x / (y + shift)``."""

    @custom_jvp
    def f(x, y):
        keep = lax.logical_or(lax.not_equal(x, 0.0), lax.isnan(y))
        return lax.where(keep, lax.multiply(x, log(y)), lax.zeros_like(lax.add(x, y)))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        t = lax.add(lax.multiply(tx, log(y)),
                    lax.divide(lax.multiply(ty, x), lax.add(y, shift) if shift else y))
        return f(x, y), t

    return f


_xlogy = _xlog(lax.log, 0.0)
_xlog1py = _xlog(lax.log1p, 1.0)


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` even at ``y == 0`` (a NaN ``y``
    still gives NaN), as ``jax.scipy.special.xlogy``; its derivative is JAX's
    ``(log(y), x / y)`` everywhere, so at ``x == 0, y > 0`` the gradient in
    ``x`` is ``log(y)`` (and ``-inf`` at ``y == 0``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> fss.xlogy(mx.array([0.0, 2.0]), mx.array([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    x, y = _inexact("xlogy", x, y)
    return _xlogy(x, y)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` even at ``y == -1``, as
    ``jax.scipy.special.xlog1py`` (derivative ``(log1p(y), x / (1 + y))``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> fss.xlog1py(mx.array([0.0, 2.0]), mx.array([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    x, y = _inexact("xlog1py", x, y)
    return _xlog1py(x, y)


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), lax.multiply(t, lax.add(lax.log(x), 1.0))


def entr(x: Any) -> Any:
    """The elementwise entropy ``-x log x``: 0 at 0, ``-inf`` for ``x < 0``,
    as ``jax.scipy.special.entr`` (its derivative ``-(log x + 1)`` is
    ``+inf`` at 0).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.entr(mx.array([0.0, 0.5, -1.0])).tolist()]
    [-0.0, 0.346574, -inf]
    """
    (x,) = _inexact("entr", x)
    return lax.where(lax.less(x, 0.0), -math.inf, lax.negative(_xlogx(x)))


def rel_entr(p: Any, q: Any) -> Any:
    """``p log(p/q)`` for ``p, q > 0``; 0 for ``p == 0, q >= 0``; ``inf``
    otherwise; as ``jax.scipy.special.rel_entr``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.rel_entr(mx.array([0.5, 0.0, 1.0]),
    ...                                    mx.array([0.25, 1.0, 0.0])).tolist()]
    [0.346574, 0.0, inf]
    """
    p, q = _inexact("rel_entr", p, q)
    both = lax.logical_and(lax.greater(p, 0.0), lax.greater(q, 0.0))
    p_zero = lax.logical_and(lax.equal(p, 0.0), lax.greater_equal(q, 0.0))
    sp, sq = lax.where(both, p, 1.0), lax.where(both, q, 1.0)
    val = lax.subtract(_xlogx(sp), _xlogy(sp, sq))
    return lax.where(both, val, lax.where(p_zero, 0.0, math.inf))


def kl_div(p: Any, q: Any) -> Any:
    """``rel_entr(p, q) - p + q``, as ``jax.scipy.special.kl_div``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.kl_div(mx.array([0.5, 0.0]), mx.array([0.25, 1.0])).tolist()]
    [0.096574, 1.0]
    """
    p, q = _inexact("kl_div", p, q)
    return lax.add(lax.subtract(rel_entr(p, q), p), q)


# ----------------------------------------------------------------------------
# Logistic functions
# ----------------------------------------------------------------------------


def logit(x: Any) -> Any:
    """``log(x / (1 - x))``, the inverse of ``expit``, as
    ``jax.scipy.special.logit`` (``-inf``/``inf`` at 0/1, NaN outside).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.logit(mx.array([0.5, 0.75])).tolist()]
    [0.0, 1.098612]
    """
    (x,) = _inexact("logit", x)
    return _logit(x)


@custom_jvp
def _logit(x):
    one_minus = lax.subtract(1.0, x)
    # Around 1/2, log1p((2x - 1) / (1 - x)): 2x - 1 is exact there, so the
    # result keeps its relative accuracy as it goes to 0.
    central = lax.log1p(lax.divide(lax.subtract(lax.multiply(2.0, x), 1.0), one_minus))
    outer = lax.log(lax.divide(x, one_minus))
    return lax.where(lax.less(lax.abs(lax.subtract(x, 0.5)), 0.25), central, outer)


# JAX's derivative 1 / (x (1 - x)): +inf at 0 and 1, where the two branches
# above would give NaN (the unselected one is infinite there).
@_logit.defjvp
def _logit_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _logit(x), lax.divide(t, lax.multiply(x, lax.subtract(1.0, x)))


def expit(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``, as
    ``jax.scipy.special.expit`` (``ftorch.nn.functional.sigmoid``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> fss.expit(mx.array([0.0])).tolist()
    [0.5]
    """
    (x,) = _inexact("expit", x)
    return lax.sigmoid(x)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))`` computed stably as ``max(x, 0) + log1p(exp(-|x|))``
    (``scipy.special.softplus``; ``jax.nn.softplus``); its derivative is
    ``expit(x)``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.softplus(mx.array([0.0, 1000.0, -1000.0])).tolist()]
    [0.693147, 1000.0, 0.0]
    """
    (x,) = _inexact("softplus", x)
    return lax.add(lax.maximum(x, 0.0), lax.log1p(lax.exp(lax.negative(lax.abs(x)))))


def log_expit(x: Any) -> Any:
    """``log(expit(x)) = -softplus(-x)``, exact for large ``|x|``, as
    ``scipy.special.log_expit`` (``jax.nn.log_sigmoid``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.log_expit(mx.array([-1000.0, 0.0])).tolist()]
    [-1000.0, -0.693147]
    """
    (x,) = _inexact("log_expit", x)
    return lax.negative(softplus(lax.negative(x)))


# ----------------------------------------------------------------------------
# Error functions and the normal distribution function
# ----------------------------------------------------------------------------


def erf(x: Any) -> Any:
    """The error function, as ``jax.scipy.special.erf`` (MLX's ``erf``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.erf(mx.array([0.5, 1.0])).tolist()]
    [0.5205, 0.842701]
    """
    (x,) = _inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function ``1 - erf(x)``, accurate where it is
    tiny (``erfc(10)`` is ``2.1e-45``), as ``jax.scipy.special.erfc``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [f"{v:.4e}" for v in fss.erfc(mx.array([0.0, 10.0], dtype=mx.float64)).tolist()]
    ['1.0000e+00', '2.0885e-45']
    """
    (x,) = _inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse error function on (-1, 1), as ``jax.scipy.special.erfinv``
    (MLX's ``erfinv``; ``ndtri`` is accurate in the tails).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.erfinv(mx.array([0.0, 0.5])).tolist()]
    [0.0, 0.476936]
    """
    (x,) = _inexact("erfinv", x)
    return lax.erfinv(x)


def ndtr(x: Any) -> Any:
    """The standard normal CDF ``erfc(-x / sqrt 2) / 2``, accurate in the
    lower tail, as ``jax.scipy.special.ndtr``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [f"{v:.6e}" for v in fss.ndtr(mx.array([0.0, -10.0], dtype=mx.float64)).tolist()]
    ['5.000000e-01', '7.619853e-24']
    """
    (x,) = _inexact("ndtr", x)
    return lax.multiply(0.5, lax.erfc(lax.multiply(x, -math.sqrt(0.5))))


def ndtri(p: Any) -> Any:
    """The inverse of ``ndtr`` (``-inf`` at 0, ``inf`` at 1, NaN outside
    [0, 1]), accurate in both tails, as ``jax.scipy.special.ndtri``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.ndtri(mx.array([0.5, 0.025])).tolist()]
    [0.0, -1.959964]
    """
    (p,) = _inexact("ndtri", p)
    return lax.ndtri(p)


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate for every ``x`` (``-x^2/2 - log(-x) - ...``
    far below 0, ``-ndtr(-x)`` far above), as ``jax.scipy.special.log_ndtr``.

    ``series_order`` is checked as JAX does (an int in [0, 30]) but has no
    effect: ftorch evaluates ``log ndtr`` to full precision everywhere
    rather than with a truncated asymptotic series.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 4) for v in fss.log_ndtr(mx.array([-40.0, 0.0, 10.0], dtype=mx.float64)).tolist()]
    [-804.6084, -0.6931, -0.0]
    """
    if isinstance(series_order, bool) or not isinstance(series_order, int):
        raise TypeError(f"log_ndtr: series_order must be a Python int, got {series_order!r}")
    if not 0 <= series_order <= 30:
        raise ValueError(f"log_ndtr: series_order must be in [0, 30], got {series_order}")
    (x,) = _inexact("log_ndtr", x)
    return lax.log_ndtr(x)


# ----------------------------------------------------------------------------
# Modified Bessel functions of orders 0 and 1
# ----------------------------------------------------------------------------


def i0e(x: Any) -> Any:
    """``exp(-|x|) I0(x)``, as ``jax.scipy.special.i0e``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.i0e(mx.array([0.0, 1.0])).tolist()]
    [1.0, 0.46576]
    """
    (x,) = _inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Any:
    """The modified Bessel function of order 0, ``i0e(x) exp(|x|)``, as
    ``jax.scipy.special.i0``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.i0(mx.array([0.0, 1.0])).tolist()]
    [1.0, 1.266066]
    """
    (x,) = _inexact("i0", x)
    return lax.multiply(lax.bessel_i0e(x), lax.exp(lax.abs(x)))


def i1e(x: Any) -> Any:
    """``exp(-|x|) I1(x)``, as ``jax.scipy.special.i1e``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.i1e(mx.array([0.0, 1.0])).tolist()]
    [0.0, 0.20791]
    """
    (x,) = _inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of order 1, ``i1e(x) exp(|x|)``, as
    ``jax.scipy.special.i1``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.i1(mx.array([0.0, 1.0])).tolist()]
    [0.0, 0.565159]
    """
    (x,) = _inexact("i1", x)
    return lax.multiply(lax.bessel_i1e(x), lax.exp(lax.abs(x)))


# ----------------------------------------------------------------------------
# logsumexp, softmax
# ----------------------------------------------------------------------------


def logsumexp(a: Any, axis: Axis = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably, as
    ``jax.scipy.special.logsumexp``: ``b`` scales the terms (broadcast with
    ``a``; a term with ``b == 0`` counts as absent), ``where`` masks them.
    With ``return_sign`` the result is ``(log|sum|, sign(sum))``; without it
    a negative sum gives NaN.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> round(fss.logsumexp(mx.array([1000.0, 1000.0])).item(), 3)
    1000.693
    >>> out, sign = fss.logsumexp(mx.array([0.0, 1.0]), b=mx.array([1.0, -1.0]),
    ...                           return_sign=True)
    >>> round(out.item(), 6), sign.item()
    (0.541325, -1.0)
    """
    if b is None and where is None and not return_sign:
        (a,) = _inexact("logsumexp", a)
        return fnp.logsumexp(a, axis, keepdims)
    if b is not None:
        a, b = _inexact("logsumexp", a, b)
        shape = tuple(mx.broadcast_shapes(tuple(aval_of(a).shape), tuple(aval_of(b).shape)))
        a, b = fnp.broadcast_to(a, shape), fnp.broadcast_to(b, shape)
        a = lax.where(lax.not_equal(b, 0.0), a, -math.inf)
    else:
        (a,) = _inexact("logsumexp", a)
    if where is not None:
        where = asarray(where)
        a = lax.where(where, a, -math.inf)  # (broadcasts a and where)
    ndim = len(aval_of(a).shape)
    axes = normalize_axes(axis, ndim, "logsumexp")
    if any(aval_of(a).shape[i] == 0 for i in axes):
        raise ValueError("logsumexp: with b, where or return_sign the reduced axes must be "
                         f"non-empty; got shape {tuple(aval_of(a).shape)}")
    amax = lax.stop_gradient(lax.max(a, axes, True))
    amax = lax.where(lax.isfinite(amax), amax, 0.0)
    terms = lax.exp(lax.subtract(a, amax))
    if b is not None:
        terms = lax.multiply(terms, b)
    total = lax.sum(terms, axes, True)
    sign = lax.sign(total)
    out = lax.add(lax.log(lax.abs(total)), amax)
    if not keepdims:
        out, sign = lax.squeeze(out, axes), lax.squeeze(sign, axes)
    if return_sign:
        return out, sign
    return lax.where(lax.less(sign, 0.0), math.nan, out)


def softmax(x: Any, axis: Axis = None) -> Any:
    """``exp(x - logsumexp(x))`` over ``axis`` (all axes by default, as
    ``jax.scipy.special.softmax``; ``ftorch.nn.functional.softmax`` defaults
    to the last).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> fss.softmax(mx.array([[1.0, 1.0], [1.0, 1.0]])).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    (x,) = _inexact("softmax", x)
    return lax.softmax(x, normalize_axes(axis, x.ndim, "softmax"))


def log_softmax(x: Any, axis: Axis = None) -> Any:
    """``x - logsumexp(x)`` over ``axis`` (all axes by default, as
    ``jax.scipy.special.log_softmax``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.log_softmax(mx.array([0.0, 0.0])).tolist()]
    [-0.693147, -0.693147]
    """
    (x,) = _inexact("log_softmax", x)
    return lax.log_softmax(x, normalize_axes(axis, x.ndim, "log_softmax"))
