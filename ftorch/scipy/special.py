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
from fractions import Fraction
from typing import Any

import mlx.core as mx
import numpy as np

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
    "sinc", "logsumexp", "softmax", "log_softmax", "gammainc", "gammaincc", "betainc",
    "loggamma", "factorial", "comb", "poch", "bernoulli", "boxcox", "boxcox1p", "erfcx", "expi",
    "exp1", "zeta", "hyp1f1", "dawsn", "expn", "spence", "bessel_jn", "owens_t",
    "sici", "fresnel", "hyp2f1", "sph_harm_y",
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


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function
    ``P(a, x) = 1/Gamma(a) int_0^x t^(a-1) e^-t dt``, as
    ``jax.scipy.special.gammainc`` (``ftorch.lax.igamma``): 0 at ``x == 0``,
    1 at ``x == inf`` and for ``a == 0 < x``, NaN for negative arguments (as
    SciPy). Differentiable in both arguments.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.gammainc(mx.array([1.0, 3.0]), mx.array([1.0, 2.0])).tolist()]
    [0.632121, 0.323324]
    """
    a, x = _inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``,
    accurate where it is tiny, as ``jax.scipy.special.gammaincc``
    (``ftorch.lax.igammac``). Differentiable in both arguments.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [f"{v:.4e}" for v in fss.gammaincc(mx.array([1.0, 3.0]), mx.array([1.0, 40.0])).tolist()]
    ['3.6788e-01', '3.5729e-15']
    """
    a, x = _inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function
    ``I_x(a, b) = 1/B(a, b) int_0^x t^(a-1) (1-t)^(b-1) dt``, as
    ``jax.scipy.special.betainc`` (``ftorch.lax.betainc``): NaN for negative
    ``a``, ``b`` or ``x`` outside [0, 1] (as SciPy). Differentiable in ``x``
    only (as JAX: the derivative in ``a`` or ``b`` raises).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.betainc(2.0, 3.0, mx.array([0.0, 0.4, 1.0])).tolist()]
    [0.0, 0.5248, 1.0]
    """
    a, b, x = _inexact("betainc", a, b, x)
    return lax.betainc(a, b, x)


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


def erfcx(x: Any) -> Any:
    """The scaled complementary error function ``exp(x^2) erfc(x)``, without
    overflow or underflow for large ``x``, as ``jax.scipy.special.erfcx``
    (``ftorch.lax.erfcx``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [f"{v:.6e}" for v in fss.erfcx(mx.array([0.0, 1e4])).tolist()]
    ['1.000000e+00', '5.641896e-05']
    """
    (x,) = _inexact("erfcx", x)
    return lax.erfcx(x)


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
# Factorials, binomial coefficients, Pochhammer symbols, Bernoulli numbers
# ----------------------------------------------------------------------------


def loggamma(x: Any) -> Any:
    """The principal branch of ``log Gamma(x)`` for real ``x``, as
    ``jax.scipy.special.loggamma``: ``gammaln(x)`` for ``x >= 0`` (``inf``
    at 0, as SciPy) and NaN for ``x < 0``, where ``Gamma`` may be negative.
    Complex arguments are not supported (MLX has no complex ``lgamma``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.loggamma(mx.array([0.5, 3.0])).tolist()]
    [0.572365, 0.693147]
    """
    (x,) = _inexact("loggamma", x)
    return lax.where(lax.less(x, 0.0), math.nan, lax.lgamma(x))


def factorial(n: Any, exact: bool = False) -> Any:
    """``n! = Gamma(n + 1)`` as a float (0 for ``n < 0``), as
    ``jax.scipy.special.factorial``; ``exact=True`` (arbitrary-precision
    integers) is not supported, as in JAX.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 3) for v in fss.factorial(mx.array([-1, 0, 4])).tolist()]
    [0.0, 1.0, 24.0]
    """
    if exact:
        raise NotImplementedError("factorial: exact=True is not supported (as in JAX): the "
                                  "result is a float, Gamma(n + 1)")
    (n,) = _inexact("factorial", n)
    return lax.where(lax.less(n, 0.0), 0.0, lax.exp(lax.lgamma(lax.add(n, 1.0))))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """The binomial coefficient ``N! / (k! (N - k)!)`` as a float (``N`` and
    ``k`` may be non-integers), 0 where ``N < 0``, ``k < 0`` or ``k > N``, as
    ``jax.scipy.special.comb``; ``repetition=True`` counts combinations with
    repetition, ``comb(N + k - 1, k)``. Computed as
    ``exp(-log1p(N) - betaln(N - k + 1, k + 1))``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 3) for v in fss.comb(mx.array([5, 10, 5]), mx.array([2, 3, 6])).tolist()]
    [10.0, 120.0, 0.0]
    """
    N, k = _inexact("comb", N, k)
    if repetition:
        N = lax.subtract(lax.add(N, k), 1.0)
    valid = lax.logical_and(lax.logical_and(lax.greater_equal(N, 0.0), lax.greater_equal(k, 0.0)),
                            lax.less_equal(k, N))
    # Safe operands where the result is 0, so that no NaN reaches the gradient.
    Ns, ks = lax.where(valid, N, 1.0), lax.where(valid, k, 0.0)
    log_comb = lax.negative(lax.add(lax.log1p(Ns), betaln(lax.add(lax.subtract(Ns, ks), 1.0),
                                                          lax.add(ks, 1.0))))
    return lax.where(valid, lax.exp(log_comb), 0.0)


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) ``(z)_m = Gamma(z + m) / Gamma(z)``,
    with its sign, as ``jax.scipy.special.poch`` (0 where ``z`` is a pole and
    ``z + m`` is not); its derivatives are ``(z)_m (digamma(z + m) - digamma(z))``
    in ``z`` and ``(z)_m digamma(z + m)`` in ``m``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> z, m = mx.array([1.0, 0.5, 3.0]), mx.array([2.0, 1.0, -1.0])
    >>> [round(v, 6) for v in fss.poch(z, m).tolist()]
    [2.0, 0.5, 0.5]
    """
    z, m = _inexact("poch", z, m)
    zm = lax.add(z, m)
    sign = lax.multiply(gammasgn(zm), gammasgn(z))
    return lax.multiply(sign, lax.exp(lax.subtract(lax.lgamma(zm), lax.lgamma(z))))


def _bernoulli_exact(n: int) -> list[Fraction]:
    """``B_0 ... B_n`` (``B_1 = -1/2``), from
    ``sum_{k<=m} C(m+1, k) B_k = 0`` for ``m >= 1``."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum((math.comb(m + 1, k) * b[k] for k in range(m)), Fraction(0)) / (m + 1))
    return b


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0 ... B_n`` (``n + 1`` of them, with
    ``B_1 = -1/2``) as a float32 array, as ``jax.scipy.special.bernoulli``
    (``inf`` once they pass float32's range, from about ``n = 70``).

    >>> import ftorch.scipy.special as fss
    >>> [round(v, 6) for v in fss.bernoulli(4).tolist()]
    [1.0, -0.5, 0.166667, 0.0, -0.033333]
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"bernoulli: n must be a Python int, got {n!r}")
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}")
    values = []
    for b in _bernoulli_exact(n):
        try:
            values.append(float(b))
        except OverflowError:
            values.append(math.inf if b > 0 else -math.inf)
    return mx.array(values, dtype=mx.float32)


# ----------------------------------------------------------------------------
# Box-Cox transforms
# ----------------------------------------------------------------------------


def _boxcox(log_x: Any, lmbda: Any) -> Any:
    """``expm1(lmbda log_x) / lmbda`` as ``log_x exprel(lmbda log_x)``,
    ``exprel(z) = expm1(z) / z`` by its Taylor series near 0: smooth through
    ``lmbda == 0`` (value ``log_x``, derivative in ``lmbda`` ``log_x^2 / 2``);
    at ``log_x == -inf`` its limit, ``-1/lmbda`` for ``lmbda > 0``, else ``-inf``."""
    at_zero = lax.equal(log_x, -math.inf)
    positive = lax.logical_and(at_zero, lax.greater(lmbda, 0.0))
    limit = lax.where(positive, lax.negative(lax.reciprocal(lax.where(positive, lmbda, 1.0))),
                      -math.inf)
    log_x = lax.where(at_zero, 0.0, log_x)
    z = lax.multiply(lmbda, log_x)
    near = lax.less(lax.abs(z), 1e-3)
    zn, zf = lax.where(near, z, 0.0), lax.where(near, 1.0, z)
    taylor = lax.full_like(zn, 1.0 / math.factorial(6))
    for k in range(5, 0, -1):
        taylor = lax.add(lax.multiply(taylor, zn), 1.0 / math.factorial(k))
    out = lax.multiply(log_x, lax.where(near, taylor, lax.divide(lax.expm1(zf), zf)))
    return lax.where(at_zero, limit, out)


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform ``(x^lmbda - 1) / lmbda`` (``log x`` at
    ``lmbda == 0``), as ``jax.scipy.special.boxcox``; computed as
    ``expm1(lmbda log x) / lmbda``, exact for small ``lmbda``; NaN for ``x < 0``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.boxcox(mx.array([2.0, 2.0]), mx.array([0.0, 0.5])).tolist()]
    [0.693147, 0.828427]
    """
    x, lmbda = _inexact("boxcox", x, lmbda)
    return _boxcox(lax.log(x), lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform of ``1 + x``, ``((1 + x)^lmbda - 1) / lmbda``
    (``log1p(x)`` at ``lmbda == 0``), accurate for small ``x``, as
    ``jax.scipy.special.boxcox1p``; NaN for ``x < -1``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.boxcox1p(mx.array([1.0, 1.0]), mx.array([0.0, 0.5])).tolist()]
    [0.693147, 0.828427]
    """
    x, lmbda = _inexact("boxcox1p", x, lmbda)
    return _boxcox(lax.log1p(x), lmbda)


# ----------------------------------------------------------------------------
# Exponential integrals, the Hurwitz zeta function, Kummer's function
# ----------------------------------------------------------------------------


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x) = -PV int_-x^inf e^-t / t dt``, as
    ``jax.scipy.special.expi`` (``ftorch.lax.expi``; ``-inf`` at 0, as SciPy).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.expi(mx.array([-1.0, 1.0])).tolist()]
    [-0.219384, 1.895118]
    """
    (x,) = _inexact("expi", x)
    return lax.expi(x)


def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x) = int_x^inf e^-t / t dt``, as
    ``jax.scipy.special.exp1`` (``ftorch.lax.exp1``; ``inf`` at 0, NaN below).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.exp1(mx.array([0.5, 1.0])).tolist()]
    [0.559774, 0.219384]
    """
    (x,) = _inexact("exp1", x)
    return lax.exp1(x)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``sum_k (q + k)^-x`` for ``x > 1`` (``inf``
    at ``x == 1``, NaN below), as ``jax.scipy.special.zeta``
    (``ftorch.lax.zeta``); differentiable in both arguments. As in JAX,
    ``q`` is required (the Riemann zeta function is ``zeta(x, 1.0)`` for
    ``x > 1``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.zeta(mx.array([2.0, 4.0]), 1.0).tolist()]
    [1.644934, 1.082323]
    """
    if q is None:
        raise NotImplementedError("zeta: pass q (the Riemann zeta function is zeta(x, 1.0) "
                                  "for x > 1); as in JAX, q=None is not implemented")
    x, q = _inexact("zeta", x, q)
    return lax.zeta(x, q)


def dawsn(x: Any) -> Any:
    """Dawson's integral ``e^(-x^2) int_0^x e^(t^2) dt``, as
    ``jax.scipy.special.dawsn`` (``ftorch.lax.dawsn``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.dawsn(mx.array([0.5, 1.0])).tolist()]
    [0.424436, 0.53808]
    """
    (x,) = _inexact("dawsn", x)
    return lax.dawsn(x)


_EXPN_SERIES_TERMS = 30
_EXPN_FRACTION_TERMS = 80


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x) = int_1^inf e^(-x t) / t^n dt``
    for integer ``n >= 0`` (an int or an integer array, broadcast with ``x``),
    as ``jax.scipy.special.expn``: ``e^-x / x`` for ``n = 0``; for ``x <= 1``
    its power series, ``(-x)^(n-1) / (n-1)! (digamma(n) - log x) -
    sum_{k != n-1} (-x)^k / ((k - n + 1) k!)``; beyond, the continued fraction
    ``e^-x / (x + n - n / (x + n + 2 - 2 (n+1) / (x + n + 4 - ...)))``. NaN
    for ``n < 0`` or ``x < 0``; ``1 / (n - 1)`` at ``x = 0`` for ``n > 1``
    (``inf`` for ``n <= 1``), as SciPy. A composite of ``lax`` ops,
    differentiable in ``x``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.expn(mx.array([0, 1, 2, 5]), mx.array(1.0)).tolist()]
    [0.367879, 0.219384, 0.148496, 0.070454]
    """
    n_arr = asarray(n)
    if not (mx.issubdtype(n_arr.dtype, mx.integer) or isinstance(n, int)):
        raise TypeError(f"expn: n must be of integer type, got dtype {n_arr.dtype}")
    (x,) = _inexact("expn", x)
    dtype = aval_of(x).dtype
    nf = lax.astype(n_arr, dtype)
    shape = _broadcast_shape(nf, x)
    nf, x = lax.broadcast_to(nf, shape), lax.broadcast_to(x, shape)
    positive = lax.greater(nf, 0.0)
    ns = lax.where(positive, nf, 1.0)
    small = lax.less_equal(x, 1.0)
    xs = lax.where(lax.logical_and(small, lax.greater(x, 0.0)), x, 0.5)
    # The series at x <= 1: the k = n - 1 term is the logarithmic one.
    term = lax.ones_like(xs)  # (-x)^k / k!
    total = lax.zeros_like(xs)
    log_term = lax.zeros_like(xs)
    for k in range(_EXPN_SERIES_TERMS):
        if k:
            term = lax.multiply(term, lax.divide(lax.negative(xs), float(k)))
        is_log = lax.equal(ns, float(k + 1))
        denominator = lax.where(is_log, 1.0, lax.subtract(float(k + 1), ns))
        total = lax.subtract(total, lax.where(is_log, 0.0, lax.divide(term, denominator)))
        log_term = lax.where(is_log, term, log_term)
    series = lax.add(total, lax.multiply(log_term, lax.subtract(lax.digamma(ns), lax.log(xs))))
    xf = lax.where(small, 2.0, x)
    f = lax.add(xf, lax.add(ns, 2.0 * _EXPN_FRACTION_TERMS))
    for k in range(_EXPN_FRACTION_TERMS, 0, -1):
        a_k = lax.multiply(float(k), lax.add(ns, float(k - 1)))
        f = lax.subtract(lax.add(xf, lax.add(ns, 2.0 * (k - 1))), lax.divide(a_k, f))
    fraction = lax.divide(lax.exp(lax.negative(xf)), f)
    out = lax.where(small, series, fraction)
    zero_n = lax.divide(lax.exp(lax.negative(x)), x)
    at_zero = lax.where(lax.greater(nf, 1.0), lax.reciprocal(lax.subtract(ns, 1.0)), math.inf)
    out = lax.where(positive, lax.where(lax.equal(x, 0.0), at_zero, out), zero_n)
    return lax.where(lax.logical_or(lax.less(nf, 0.0), lax.less(x, 0.0)), math.nan, out)


def _broadcast_shape(*xs: Any) -> tuple[int, ...]:
    return tuple(mx.broadcast_shapes(*(tuple(aval_of(v).shape) for v in xs)))


_SPENCE_TERMS = 50


def _dilog_series(z: Any) -> Any:
    """``Li2(z) = sum_k z^k / k^2`` for ``|z| <= 1/2``."""
    total, power = lax.zeros_like(z), lax.ones_like(z)
    for k in range(1, _SPENCE_TERMS + 1):
        power = lax.multiply(power, z)
        total = lax.add(total, lax.multiply(power, 1.0 / (k * k)))
    return total


def spence(x: Any) -> Any:
    """Spence's function ``int_1^x log(t) / (1 - t) dt = Li2(1 - x)`` for
    ``x >= 0`` (NaN below), as ``jax.scipy.special.spence``. For ``x > 1``
    it is ``-spence(1/x) - log(x)^2 / 2``; on [1/2, 1] the series of
    ``Li2(1 - x)`` and below 1/2 the reflection
    ``pi^2/6 - log(x) log(1 - x) - Li2(x)``, each series in an argument of at
    most 1/2. A composite of ``lax`` ops: its derivative is
    ``log(x) / (1 - x)``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.spence(mx.array([0.0, 0.5, 1.0, 2.0])).tolist()]
    [1.644934, 0.582241, 0.0, -0.822467]
    """
    (x,) = _inexact("spence", x)
    big = lax.greater(x, 1.0)
    y = lax.where(big, lax.reciprocal(lax.where(big, x, 1.0)), x)  # in [0, 1]
    upper = lax.greater_equal(y, 0.5)
    near_one = _dilog_series(lax.where(upper, lax.subtract(1.0, y), 0.0))
    ys = lax.where(upper, 0.25, lax.maximum(y, 0.0))
    y_log = lax.where(lax.equal(ys, 0.0), 0.0, lax.multiply(lax.log(lax.where(
        lax.equal(ys, 0.0), 1.0, ys)), lax.log1p(lax.negative(ys))))
    reflected = lax.subtract(lax.subtract(math.pi ** 2 / 6, y_log), _dilog_series(ys))
    s = lax.where(upper, near_one, reflected)
    log_x = lax.log(lax.where(big, x, 1.0))
    out = lax.where(big, lax.subtract(lax.negative(s), lax.multiply(0.5, lax.square(log_x))), s)
    return lax.where(lax.less(x, 0.0), math.nan, out)


_HYP1F1_TERMS = 80


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function
    ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!``, as
    ``jax.scipy.special.hyp1f1``: the series (80 terms) at ``|x|``, with
    Kummer's transformation ``1F1(a; b; x) = e^x 1F1(b - a; b; -x)`` for
    ``x < 0`` (so its terms keep one sign for ``0 < a < b``). A composite of
    ``lax`` ops, so differentiable in ``a``, ``b`` and ``x``; accurate for
    ``|x|`` up to about 20 (for larger ``|x|`` the truncated series is not).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.hyp1f1(1.0, 2.0, mx.array([1.0, -3.0])).tolist()]
    [1.718282, 0.316738]
    """
    a, b, x = _inexact("hyp1f1", a, b, x)
    negative = lax.less(x, 0.0)
    top = lax.where(negative, lax.subtract(b, a), a)
    z = lax.where(negative, lax.negative(x), x)  # (|x|, its derivative 1 at 0)
    term = lax.ones_like(lax.add(top, lax.add(b, z)))
    total = term
    for k in range(_HYP1F1_TERMS):
        term = lax.multiply(term, lax.divide(lax.multiply(lax.add(top, float(k)), z),
                                             lax.multiply(lax.add(b, float(k)), float(k + 1))))
        total = lax.add(total, term)
    return lax.where(negative, lax.multiply(lax.exp(x), total), total)


# ----------------------------------------------------------------------------
# Bessel functions of the first kind
# ----------------------------------------------------------------------------

_BESSEL_RESCALE = 1e10
_BESSEL_TINY = 1e-5  # below, five terms of the power series are exact


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """The Bessel functions of the first kind ``J_0(z) ... J_v(z)``, stacked
    on a new leading axis (shape ``(v + 1, *z.shape)``), as
    ``jax.scipy.special.bessel_jn``. Miller's algorithm: the recurrence
    ``J_{k-1} = (2k / z) J_k - J_{k+1}`` run down from order ``v + n_iter``
    (rescaled as it grows), normalised by ``J_0 + 2 sum_k J_2k = 1``; accurate
    while ``|z|`` is well below ``v + n_iter``. ``J_k(-z) = (-1)^k J_k(z)``,
    and below ``|z| = 1e-5`` the power series' first five terms. A composite of
    ``lax`` ops, differentiable in ``z`` (JAX's is NaN for ``|z|`` below
    about 4, and its derivative is not ``J_k'``).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.bessel_jn(mx.array(2.0), v=2).tolist()]
    [0.223891, 0.576725, 0.352834]
    """
    for name, value, least in (("v", v, 0), ("n_iter", n_iter, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"bessel_jn: {name} must be a Python int >= {least}, got {value!r}")
    (z,) = _inexact("bessel_jn", z)
    a = lax.abs(z)
    tiny = lax.less(a, _BESSEL_TINY)
    two_over_z = lax.divide(2.0, lax.where(tiny, 1.0, a))
    start = v + n_iter + (v + n_iter) % 2  # even, so the normalising sum ends on J_0
    above, current = lax.zeros_like(a), lax.full_like(a, 1e-30)
    kept = [None] * (v + 1)
    if start <= v:
        kept[start] = current
    norm = lax.multiply(2.0, current)
    for k in range(start, 0, -1):
        below = lax.subtract(lax.multiply(lax.multiply(float(k), two_over_z), current), above)
        above, current = current, below
        if k - 1 <= v:
            kept[k - 1] = current
        if k - 1 == 0:
            norm = lax.add(norm, current)
        elif (k - 1) % 2 == 0:
            norm = lax.add(norm, lax.multiply(2.0, current))
        # Rescale everything kept so far to J_{k-1} = 1 once the values grow large.
        big = lax.greater(lax.abs(current), _BESSEL_RESCALE)
        scale = lax.stop_gradient(lax.where(big, lax.reciprocal(lax.where(big, lax.abs(
            current), 1.0)), 1.0))
        above, current, norm = (lax.multiply(t, scale) for t in (above, current, norm))
        kept = [None if t is None else lax.multiply(t, scale) for t in kept]
    out = []
    for k, t in enumerate(kept):
        value = lax.divide(t, norm)
        if k % 2:
            value = lax.multiply(value, lax.sign(z))
        # The power series' first terms, in z itself (not |z|): the right sign and
        # derivatives at 0, up to the ninth.
        half = lax.multiply(0.5, z)
        minus_sq = lax.negative(lax.square(half))
        terms, term = lax.ones_like(z), lax.ones_like(z)
        for m in range(1, 5):
            term = lax.multiply(term, lax.divide(minus_sq, float(m * (k + m))))
            terms = lax.add(terms, term)
        leading = lax.full_like(z, 1.0 / math.factorial(k))  # (z/2)^k / k!, by products
        for _ in range(k):
            leading = lax.multiply(leading, half)
        series = lax.multiply(leading, terms)
        out.append(lax.where(tiny, series, value))
    return fnp.stack(out)


# ----------------------------------------------------------------------------
# Owen's T function
# ----------------------------------------------------------------------------

# Gauss-Legendre nodes and weights on [0, 1] (32 points: the integrand of T
# is smooth there, a Gaussian of width 1/h at most as narrow as 1/8 in use).
_LEGENDRE_NODES, _LEGENDRE_WEIGHTS = np.polynomial.legendre.leggauss(32)
_OWENS_NODES = tuple(float(t) for t in 0.5 * (_LEGENDRE_NODES + 1.0))
_OWENS_WEIGHTS = tuple(float(w) for w in 0.5 * _LEGENDRE_WEIGHTS)


def _owens_t_small_a(h: Any, a: Any) -> Any:
    """``T(h, a) = 1/(2 pi) int_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx`` for
    ``0 <= a <= 1``, by Gauss-Legendre quadrature in ``x = a t``."""
    half_h2 = lax.multiply(0.5, lax.square(h))
    total = lax.zeros_like(lax.add(h, a))
    for t, w in zip(_OWENS_NODES, _OWENS_WEIGHTS):
        one_plus = lax.add(1.0, lax.square(lax.multiply(a, t)))
        total = lax.add(total, lax.multiply(
            w, lax.divide(lax.exp(lax.negative(lax.multiply(half_h2, one_plus))), one_plus)))
    return lax.multiply(lax.multiply(a, total), 1.0 / (2.0 * math.pi))


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``,
    as ``jax.scipy.special.owens_t``: even in ``h``, odd in ``a``; quadrature
    for ``|a| <= 1`` and, beyond, ``T(h, a) = (q(h) + q(ah)) / 2 - q(h) q(ah) -
    T(ah, 1/a)`` with ``q(h) = ndtr(-h)`` (no cancellation in either tail). A
    composite of ``lax`` ops, differentiable in both.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.owens_t(mx.array([0.0, 1.0]), mx.array([1.0, 3.0])).tolist()]
    [0.125, 0.0793]
    """
    h, a = _inexact("owens_t", h, a)
    # |h| and |a| as selections, not abs: their derivatives stay 1 at 0.
    h = lax.where(lax.less(h, 0.0), lax.negative(h), h)
    sign = lax.where(lax.less(a, 0.0), -1.0, 1.0)
    a = lax.multiply(a, sign)
    wide = lax.greater(a, 1.0)
    a_small = lax.where(wide, 0.5, a)
    a_big = lax.where(wide, a, 2.0)
    ah = lax.multiply(a_big, h)
    q_h, q_ah = ndtr(lax.negative(h)), ndtr(lax.negative(ah))
    reflected = lax.subtract(
        lax.subtract(lax.multiply(0.5, lax.add(q_h, q_ah)), lax.multiply(q_h, q_ah)),
        _owens_t_small_a(ah, lax.reciprocal(a_big)))
    return lax.multiply(sign, lax.where(wide, reflected, _owens_t_small_a(h, a_small)))


# ----------------------------------------------------------------------------
# Sine, cosine and Fresnel integrals
# ----------------------------------------------------------------------------

_EULER_GAMMA = 0.57721566490153286061
_SICI_SERIES_BELOW = 4.0     # power series below, continued fraction of E1(ix) above
_SICI_SERIES_TERMS = 20
_FRESNEL_SERIES_BELOW = 1.5  # power series below, continued fraction of erfc above
_CONTINUED_FRACTION_TERMS = 60


def _complex_divide(re: Any, im: Any, den_re: Any, den_im: Any) -> tuple[Any, Any]:
    """``(re + i im) / (den_re + i den_im)`` on real arrays."""
    norm = lax.add(lax.square(den_re), lax.square(den_im))
    return (lax.divide(lax.add(lax.multiply(re, den_re), lax.multiply(im, den_im)), norm),
            lax.divide(lax.subtract(lax.multiply(im, den_re), lax.multiply(re, den_im)), norm))


def _odd_power_series(x2: Any, first: Any, ratio) -> Any:
    """``sum_k t_k`` with ``t_0 = first`` and ``t_k = t_(k-1) * x2 * ratio(k)``."""
    term, total = first, first
    for k in range(1, _SICI_SERIES_TERMS):
        term = lax.multiply(term, lax.multiply(x2, ratio(k)))
        total = lax.add(total, term)
    return total


def _sici_series(x: Any) -> tuple[Any, Any]:
    """``Si(x)`` and ``Ci(x) - gamma - log x`` by their power series (``x > 0``)."""
    x2 = lax.negative(lax.square(x))
    # Si: x^(2k+1) / ((2k+1) (2k+1)!); Ci: x^(2k) / (2k (2k)!), both alternating.
    si_terms = _odd_power_series(x2, x, lambda k: (2 * k - 1) / ((2 * k + 1) ** 2 * (2 * k)))
    ci_terms = _odd_power_series(
        x2, lax.multiply(-0.25, lax.square(x)),
        lambda k: (2 * k) / ((2 * k + 2) ** 2 * (2 * k + 1)))
    return si_terms, ci_terms


def _e1_imaginary(x: Any) -> tuple[Any, Any]:
    """``e^(ix) E1(ix)`` for ``x > 0`` by the continued fraction
    ``1 / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - ...)))`` at ``z = ix``, evaluated
    from its tail."""
    re, im = lax.full_like(x, 2.0 * _CONTINUED_FRACTION_TERMS + 1.0), x
    for k in range(_CONTINUED_FRACTION_TERMS, 0, -1):
        q_re, q_im = _complex_divide(lax.full_like(x, float(k * k)), lax.zeros_like(x), re, im)
        re, im = lax.subtract(lax.full_like(x, 2.0 * k - 1.0), q_re), lax.subtract(x, q_im)
    return _complex_divide(lax.ones_like(x), lax.zeros_like(x), re, im)


def _sici_values(x: Any) -> tuple[Any, Any]:
    ax = lax.abs(x)
    small = lax.less(ax, _SICI_SERIES_BELOW)
    x_small = lax.where(small, ax, 1.0)
    x_big = lax.where(small, 2.0 * _SICI_SERIES_BELOW, ax)
    si_series, ci_series = _sici_series(x_small)
    ci_small = lax.add(lax.add(ci_series, _EULER_GAMMA), lax.log(x_small))
    # E1(ix) = -Ci(x) + i (Si(x) - pi/2), and h = e^(ix) E1(ix).
    h_re, h_im = _e1_imaginary(x_big)
    cos, sin = lax.cos(x_big), lax.sin(x_big)
    ci_big = lax.negative(lax.add(lax.multiply(cos, h_re), lax.multiply(sin, h_im)))
    si_big = lax.add(math.pi / 2, lax.subtract(lax.multiply(cos, h_im), lax.multiply(sin, h_re)))
    si = lax.where(small, si_series, si_big)
    ci = lax.where(small, ci_small, ci_big)
    si = lax.where(lax.less(x, 0.0), lax.negative(si), lax.where(lax.equal(x, 0.0), x, si))
    ci = lax.where(lax.equal(x, 0.0), -math.inf, ci)
    inf = lax.equal(ax, math.inf)
    si = lax.where(inf, lax.multiply(math.pi / 2, lax.sign(x)), si)
    ci = lax.where(inf, 0.0, ci)
    return si, ci


# One rule per output: a zero cotangent of Ci must not meet its infinite slope at 0.
@custom_jvp
def _si(x):
    return _sici_values(x)[0]


@_si.defjvp
def _si_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _si(x), lax.multiply(t, lax.sinc(lax.divide(x, math.pi)))


@custom_jvp
def _ci(x):
    return _sici_values(x)[1]


@_ci.defjvp
def _ci_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _ci(x), lax.multiply(t, lax.divide(lax.cos(x), x))


def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals ``(Si(x), Ci(x))``, ``Si(x) = int_0^x
    sin(t) / t dt`` and ``Ci(x) = gamma + log|x| + int_0^x (cos(t) - 1) / t
    dt``, as ``jax.scipy.special.sici``: ``Si`` is odd, ``Ci`` even (its real
    part for ``x < 0``, ``-inf`` at 0). Power series below ``|x| = 4``, the
    continued fraction of ``E1(ix) = -Ci(x) + i (Si(x) - pi/2)`` above;
    derivatives ``sin(x) / x`` and ``cos(x) / x``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> si, ci = fss.sici(mx.array([1.0, 10.0]))
    >>> [round(v, 6) for v in si.tolist()], [round(v, 6) for v in ci.tolist()]
    ([0.946083, 1.658348], [0.337404, -0.045456])
    """
    (x,) = _inexact("sici", x)
    return _si(x), _ci(x)


def _fresnel_series(x: Any) -> tuple[Any, Any]:
    """``(S(x), C(x))`` by their power series in ``u = (pi/2) x^2``:
    ``S = sum (-1)^k u^(2k+1) x / ((2k+1)! (4k+3))``,
    ``C = sum (-1)^k u^(2k) x / ((2k)! (4k+1))``."""
    u = lax.multiply(math.pi / 2, lax.square(x))
    u2 = lax.negative(lax.square(u))
    s = _odd_power_series(u2, lax.multiply(lax.multiply(u, x), 1.0 / 3.0),
                          lambda k: (4 * k - 1) / ((2 * k) * (2 * k + 1) * (4 * k + 3)))
    c = _odd_power_series(u2, x, lambda k: (4 * k - 3) / ((2 * k - 1) * (2 * k) * (4 * k + 1)))
    return s, c


def _fresnel_fraction(x: Any) -> tuple[Any, Any]:
    """``(S(x), C(x))`` for ``x > 0`` from ``C + iS = (1 + i)/2 erf((1 - i) sqrt(pi) x / 2)``
    and the continued fraction of ``erfc``: with ``b = 1 - i pi x^2``,
    ``h = 1 / (b - 1*2 / (b + 4 - 3*4 / (b + 8 - ...)))`` and
    ``C + iS = (1 + i)/2 (1 - e^(i pi x^2 / 2) (1 - i) x h)``."""
    pix2 = lax.multiply(math.pi, lax.square(x))
    n = _CONTINUED_FRACTION_TERMS
    re, im = lax.full_like(x, 1.0 + 4.0 * n), lax.negative(pix2)
    for k in range(n, 0, -1):
        q_re, q_im = _complex_divide(lax.full_like(x, float(-(2 * k - 1) * (2 * k))),
                                     lax.zeros_like(x), re, im)
        re = lax.add(lax.full_like(x, 1.0 + 4.0 * (k - 1)), q_re)
        im = lax.add(lax.negative(pix2), q_im)
    h_re, h_im = _complex_divide(x, lax.negative(x), re, im)   # (1 - i) x h
    cos, sin = lax.cos(lax.multiply(0.5, pix2)), lax.sin(lax.multiply(0.5, pix2))
    w_re = lax.subtract(1.0, lax.subtract(lax.multiply(cos, h_re), lax.multiply(sin, h_im)))
    w_im = lax.negative(lax.add(lax.multiply(cos, h_im), lax.multiply(sin, h_re)))
    # (1 + i)/2 (w_re + i w_im)
    return lax.multiply(0.5, lax.add(w_re, w_im)), lax.multiply(0.5, lax.subtract(w_re, w_im))


@custom_jvp
def _fresnel(x):
    ax = lax.abs(x)
    small = lax.less(ax, _FRESNEL_SERIES_BELOW)
    s_small, c_small = _fresnel_series(lax.where(small, ax, 1.0))
    s_big, c_big = _fresnel_fraction(lax.where(small, 2.0 * _FRESNEL_SERIES_BELOW, ax))
    s, c = lax.where(small, s_small, s_big), lax.where(small, c_small, c_big)
    inf = lax.equal(ax, math.inf)
    s, c = lax.where(inf, 0.5, s), lax.where(inf, 0.5, c)
    negative = lax.less(x, 0.0)
    return lax.where(negative, lax.negative(s), s), lax.where(negative, lax.negative(c), c)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    phase = lax.multiply(math.pi / 2, lax.square(x))
    return _fresnel(x), (lax.multiply(t, lax.sin(phase)), lax.multiply(t, lax.cos(phase)))


def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals ``(S(x), C(x))``, ``S(x) = int_0^x sin(pi t^2 / 2)
    dt`` and ``C(x) = int_0^x cos(pi t^2 / 2) dt``, as
    ``jax.scipy.special.fresnel`` (both odd, tending to ``+-1/2``). Power
    series below ``|x| = 1.5``, the continued fraction of ``erfc`` above;
    derivatives ``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)``.

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> s, c = fss.fresnel(mx.array([0.5, 2.0]))
    >>> [round(v, 6) for v in s.tolist()], [round(v, 6) for v in c.tolist()]
    ([0.064732, 0.343416], [0.492344, 0.488253])
    """
    (x,) = _inexact("fresnel", x)
    return _fresnel(x)


_HYP2F1_TERMS = 500


def _hyp2f1_series(a: Any, b: Any, c: Any, z: Any) -> Any:
    """``sum_n (a)_n (b)_n / ((c)_n n!) z^n``, a fixed number of terms."""
    term, total = lax.ones_like(z), lax.ones_like(z)
    for n in range(_HYP2F1_TERMS):
        ratio = lax.divide(lax.multiply(lax.add(a, float(n)), lax.add(b, float(n))),
                           lax.multiply(lax.add(c, float(n)), float(n + 1)))
        term = lax.multiply(term, lax.multiply(ratio, z))
        total = lax.add(total, term)
    return total


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The Gauss hypergeometric function ``2F1(a, b; c; x) = sum_n (a)_n (b)_n
    / ((c)_n n!) x^n`` on ``-1 <= x <= 1``, as ``jax.scipy.special.hyp2f1``
    (a composite of ``lax`` ops: differentiable in all four arguments).

    For ``x < 0`` Pfaff's transformation ``(1 - x)^-a 2F1(a, c - b; c; x / (x - 1))``
    brings the argument into ``[0, 1/2]``; on ``[0, 1)`` the series is summed
    directly (500 terms: accurate to float32 up to about ``x = 0.95``,
    converging more slowly beyond). At ``x = 1`` Gauss's sum ``Gamma(c)
    Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b))`` where ``c - a - b > 0``,
    else ``inf``. Outside ``[-1, 1]``, where the series diverges, NaN (JAX
    returns ``inf`` or unrelated values there).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> [round(v, 6) for v in fss.hyp2f1(1.0, 2.0, 3.0, mx.array([-1.0, 0.0, 0.5])).tolist()]
    [0.613706, 1.0, 1.545178]
    """
    a, b, c, x = _inexact("hyp2f1", a, b, c, x)
    shape = _broadcast_shape(a, b, c, x)
    a, b, c, x = (lax.broadcast_to(v, shape) for v in (a, b, c, x))
    negative = lax.less(x, 0.0)
    inside = lax.logical_and(lax.greater_equal(x, -1.0), lax.less(x, 1.0))
    x_in = lax.where(inside, x, 0.0)
    z = lax.where(negative, lax.divide(x_in, lax.subtract(x_in, 1.0)), x_in)
    b_series = lax.where(negative, lax.subtract(c, b), b)
    prefactor = lax.where(negative, lax.power(lax.subtract(1.0, x_in), lax.negative(a)), 1.0)
    value = lax.multiply(prefactor, _hyp2f1_series(a, b_series, c, z))
    excess = lax.subtract(lax.subtract(c, a), b)
    converges = lax.greater(excess, 0.0)
    at_one = lax.equal(x, 1.0)
    # Gauss's sum where x = 1 and it converges; elsewhere its Gamma functions see 1.0,
    # so that their poles put no NaN into the derivatives of the other branch.
    use_gauss = lax.logical_and(at_one, converges)
    terms = tuple(lax.where(use_gauss, t, 1.0)
                  for t in (c, excess, lax.subtract(c, a), lax.subtract(c, b)))
    log_gauss = lax.subtract(lax.add(lax.lgamma(terms[0]), lax.lgamma(terms[1])),
                             lax.add(lax.lgamma(terms[2]), lax.lgamma(terms[3])))
    sign = lax.divide(lax.multiply(gammasgn(terms[0]), gammasgn(terms[1])),
                      lax.multiply(gammasgn(terms[2]), gammasgn(terms[3])))
    gauss = lax.where(converges, lax.multiply(sign, lax.exp(log_gauss)), math.inf)
    return lax.where(inside, value, lax.where(at_one, gauss, math.nan))


def _concrete_max_degree(n: Any) -> int:
    """``max(n)`` of a concrete integer ``n``, for ``sph_harm_y``'s ``n_max``."""
    if isinstance(n, Tracer):
        raise TypeError("sph_harm_y: n is traced (under jit or vmap); pass a static n_max")
    n = asarray(n)
    if not mx.issubdtype(n.dtype, mx.integer):
        raise TypeError(f"sph_harm_y: n must be of integer type, got dtype {n.dtype}")
    return int(mx.max(n).item()) if n.size else 0


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonic ``Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) e^(i m phi)``
    of degree ``n >= 0`` and order ``|m| <= n`` (integer arrays), polar angle
    ``theta`` and azimuth ``phi``, orthonormal on the sphere and with the
    Condon-Shortley phase, as ``jax.scipy.special.sph_harm_y`` (complex64).

    The normalized associated Legendre functions come from the stable
    three-term recurrence in the degree, run up to ``n_max`` (``max(n)``, which
    needs a concrete ``n`` unless ``n_max`` is given; larger ``n`` are clipped
    to ``n_max``, as in JAX). ``Y_n^-m = (-1)^m conj(Y_n^m)``. ``diff_n`` is
    not supported (as in JAX).

    >>> import ftorch.scipy.special as fss, mlx.core as mx
    >>> y = fss.sph_harm_y(mx.array([1]), mx.array([1]), mx.array([0.5]), mx.array([0.0]))
    >>> round(y.item().real, 6)
    -0.165639
    """
    if diff_n:
        raise NotImplementedError("sph_harm_y: diff_n is not supported (as in JAX)")
    if n_max is None:
        n_max = _concrete_max_degree(n)
    if isinstance(n_max, bool) or not isinstance(n_max, int) or n_max < 0:
        raise ValueError(f"sph_harm_y: n_max must be a non-negative int, got {n_max!r}")
    theta, phi = _inexact("sph_harm_y", theta, phi)
    real = theta.dtype
    shape = _broadcast_shape(n, m, theta, phi)
    n = lax.minimum(lax.astype(lax.broadcast_to(asarray(n), shape), real),
                    float(n_max))
    m = lax.astype(lax.broadcast_to(asarray(m), shape), real)
    theta, phi = lax.broadcast_to(theta, shape), lax.broadcast_to(phi, shape)
    order = lax.abs(m)
    cos, sin = lax.cos(theta), lax.sin(theta)
    # Normalized P_|m|^|m| = (-1)^|m| sqrt((2|m| + 1)!! / (4 pi (2|m|)!!)) sin^|m|.
    diagonal = lax.full_like(cos, 1.0 / math.sqrt(4.0 * math.pi))
    for k in range(1, n_max + 1):
        step = lax.multiply(-math.sqrt((2 * k + 1) / (2 * k)), sin)
        diagonal = lax.where(lax.less_equal(float(k), order),
                             lax.multiply(diagonal, step), diagonal)
    result = lax.where(lax.equal(n, order), diagonal, 0.0)
    previous, current = lax.zeros_like(cos), diagonal
    # P_l = a_l (cos P_(l-1) - P_(l-2) / a_(l-1)), a_l = sqrt((4 l^2 - 1) / (l^2 - m^2)).
    for degree in range(1, n_max + 1):
        active = lax.greater(float(degree), order)
        m2 = lax.square(order)
        a = lax.sqrt(lax.divide(4.0 * degree ** 2 - 1.0,
                                lax.where(active, lax.subtract(float(degree ** 2), m2), 1.0)))
        lower = (degree - 1) ** 2
        inv_a_lower = lax.sqrt(lax.maximum(
            lax.divide(lax.subtract(float(lower), m2), 4.0 * lower - 1.0 if lower else 1.0), 0.0))
        new = lax.multiply(a, lax.subtract(lax.multiply(cos, current),
                                           lax.multiply(previous, inv_a_lower)))
        previous, current = (lax.where(active, current, previous),
                             lax.where(active, new, current))
        result = lax.where(lax.equal(n, float(degree)), current, result)
    odd_negative = lax.logical_and(lax.less(m, 0.0),
                                   lax.not_equal(lax.rem(order, 2.0), 0.0))
    result = lax.where(odd_negative, lax.negative(result), result)
    angle = lax.multiply(m, phi)
    re = lax.astype(lax.multiply(result, lax.cos(angle)), mx.float32)
    im = lax.astype(lax.multiply(result, lax.sin(angle)), mx.float32)
    return lax.complex(re, im)


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
