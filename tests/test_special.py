"""Values, gradients, transforms and argument errors of ftorch.scipy.special,
ftorch.scipy.stats.norm and the special-function primitives under them,
against SciPy (float64 tight, float32 loose)."""

import math

import mlx.core as mx
import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as sst
from harness import compiler_off
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.primitives as lax
import ftorch.scipy.special as fss
import ftorch.scipy.stats.norm as norm


def f64(x):
    return mx.array(np.asarray(x, dtype=np.float64), dtype=mx.float64)


def f32(x):
    return mx.array(np.asarray(x, dtype=np.float32))


def assert_rel(got, want, rtol, atol=0.0):
    got, want = np.array(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def draws(lo, hi, n=40):
    """hypothesis float64 vectors in [lo, hi]."""
    return hnp.arrays(np.float64, st.integers(1, n),
                      elements=st.floats(lo, hi, allow_nan=False, allow_subnormal=False))


def log_uniform(lo_exp, hi_exp, n=40):
    """hypothesis vectors of 10**u, u in [lo_exp, hi_exp]."""
    return draws(lo_exp, hi_exp, n).map(lambda u: 10.0 ** u)


def off_integers(x, margin=1e-3):
    return x[np.abs(x - np.round(x)) > margin]


# (name, ftorch function, SciPy function, strategy, float64 rtol, float32 rtol).
# gammaln and digamma are also allowed 1e-15 absolute (1e-6, a few float32
# ulps of their O(1) terms, in float32): near their roots SciPy's own values
# are that far off (see test_values_near_roots), and float32 cancels there.
UNARY = [
    ("gammaln", fss.gammaln, sps.gammaln, draws(0.0, 200.0), 1e-13, 2e-5),
    ("gammaln_huge", fss.gammaln, sps.gammaln, log_uniform(-300, 300), 1e-14, 1e-6),
    ("gammaln_neg", fss.gammaln, sps.gammaln, draws(-30.0, 0.0).map(off_integers), 1e-12, 1e-4),
    ("digamma", fss.digamma, sps.digamma, draws(1e-300, 100.0), 1e-12, 2e-5),
    ("digamma_huge", fss.digamma, sps.digamma, log_uniform(-300, 300), 1e-14, 1e-6),
    ("digamma_neg", fss.digamma, sps.digamma, draws(-30.0, 0.0).map(off_integers), 1e-11, 1e-4),
    ("i0e", fss.i0e, sps.i0e, draws(-60.0, 60.0), 1e-14, 5e-6),
    ("i0e_wide", fss.i0e, sps.i0e, log_uniform(-300, 300), 1e-14, 5e-6),
    ("i1e", fss.i1e, sps.i1e, draws(-60.0, 60.0), 1e-14, 5e-6),
    ("i1e_wide", fss.i1e, sps.i1e, log_uniform(-30, 300), 1e-14, 5e-6),
    ("erfc", fss.erfc, sps.erfc, draws(-6.0, 26.0), 1e-12, 2e-5),
    ("ndtr", fss.ndtr, sps.ndtr, draws(-37.0, 10.0), 1e-12, 5e-5),
    ("log_ndtr", fss.log_ndtr, sps.log_ndtr, draws(-40.0, 10.0), 1e-13, 2e-5),
    ("log_ndtr_far", fss.log_ndtr, sps.log_ndtr, log_uniform(1, 150).map(np.negative),
     1e-14, 1e-6),
    ("ndtri", fss.ndtri, sps.ndtri, draws(0.0, 1.0), 1e-12, 2e-5),
    ("ndtri_tail", fss.ndtri, sps.ndtri, log_uniform(-300, -1), 1e-13, 2e-5),
    ("sinc", fss.sinc, np.sinc, draws(-20.0, 20.0).map(off_integers), 1e-12, 1e-5),
    ("logit", fss.logit, sps.logit, draws(0.001, 0.999), 1e-13, 1e-5),
    ("entr", fss.entr, sps.entr, draws(-1.0, 10.0), 1e-14, 1e-6),
]


@pytest.mark.parametrize("name,f,ref,strategy,rtol64,rtol32", UNARY, ids=[u[0] for u in UNARY])
@given(data=st.data())
def test_values_match_scipy(name, f, ref, strategy, rtol64, rtol32, data):
    x = data.draw(strategy)
    want = ref(x)
    out = f(f64(x))
    assert out.dtype == mx.float64
    assert_rel(out, want, rtol64, 1e-15 if name.startswith(("gammaln", "digamma")) else 1e-300)
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    want32 = ref(x32.astype(np.float64))
    out32 = f(f32(x32))
    assert out32.dtype == mx.float32
    ok = np.isfinite(want32) & (np.abs(want32) > 1e-30) & (np.abs(want32) < 1e30)
    atol32 = 1e-6 if name.startswith(("gammaln", "digamma")) else 1e-30
    np.testing.assert_allclose(np.array(out32)[ok], want32[ok], rtol=rtol32, atol=atol32)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
@given(data=st.data())
def test_polygamma_matches_scipy(n, data):
    x = data.draw(st.one_of(draws(1e-3, 60.0), draws(-8.0, 0.0).map(off_integers)).filter(len))
    want = sps.polygamma(n, x)
    # Around a root of psi^(n) (negative x, even n) only absolute accuracy holds.
    scale = np.abs(sps.polygamma(n + 1, x) * np.maximum(np.abs(x), 1))
    assert_rel(fss.polygamma(n, f64(x)), want, 1e-12, 1e-14 * scale.max())


def test_polygamma_array_order_and_zero():
    x = np.array([0.5, 1.5, 7.0])
    assert_rel(fss.polygamma(0, f64(x)), sps.digamma(x), 1e-14)
    n = np.array([[0], [1], [4]])
    assert_rel(fss.polygamma(mx.array(n), f64(x)), sps.polygamma(n, x), 1e-13)


HARD = {
    "gammaln": (fss.gammaln, sps.gammaln,
                [1e-300, 1e-10, 0.5, 1.0, 2.0, 2.5, 11.999, 12.0,
                 1e15, 1e305, -1e-300, -0.5, -1.5, -2.5, -100.5, -1e10 - 0.5]),
    "digamma": (fss.digamma, sps.digamma,
                [1e-300, 1e-8, 1.0, 2.0, 9.99, 10.0, 1e300, -0.5, -1e-8,
                 -1.5, -99.25]),
    "i0e": (fss.i0e, sps.i0e, [0.0, 1e-300, 1e-8, 19.999, 20.0, 20.001, 700.0, 1e300, -20.0]),
    "i1e": (fss.i1e, sps.i1e, [1e-300, 1e-8, 19.999, 20.0, 20.001, 700.0, 1e300, -1e-8]),
    "erfc": (fss.erfc, sps.erfc,
             [0.0, 1e-300, 1e-10, 1.999999, 2.0, 2.000001, 10.0, 26.5, -1e-10, -3.0]),
    "log_ndtr": (fss.log_ndtr, sps.log_ndtr,
                 [-1e150, -1e5, -38.5, -37.5, -20.000001, -20.0, -19.99999, -1.0, 0.0, 1e-20,
                  5.0, 8.0, 9.0, 37.0]),
    "ndtri": (fss.ndtri, sps.ndtri,
              [1e-300, 1e-100, 1e-20, 1e-5 * (1 - 1e-12), 1e-5, 0.3, 0.5, 0.5 + 1e-12,
               0.975, 1 - 1e-16, 1 - 1e-10]),
    "sinc": (fss.sinc, np.sinc, [1e-300, 1e-9, 0.5, 1.5, 2.25, 1e6 + 0.5]),
}


@pytest.mark.parametrize("name", sorted(HARD))
def test_values_at_hard_points(name):
    f, ref, points = HARD[name]
    x = np.array(points)
    assert_rel(f(f64(x)), ref(x), 1e-12, 1e-300)


def test_values_near_roots():
    # lgamma keeps its relative accuracy at its roots 1 and 2 (SciPy's loses
    # it: 4e-4 at 1 - 1e-12); references from mpmath at 40 digits.
    x = np.array([1 + 1e-12, 1 - 1e-12, 2 + 1e-12, 2 - 1e-12, 1 - 1e-9])
    want = [-5.772669797094564e-13, 5.772028958989666e-13, 4.2282192087238456e-13,
            -4.2282192087173953e-13, 5.77215649399226e-10]
    assert_rel(fss.gammaln(f64(x)), want, 1e-14)
    # digamma near its positive root: absolute accuracy.
    root = 1.4616321449683622
    np.testing.assert_allclose(np.array(fss.digamma(f64([root]))), sps.digamma([root]),
                               atol=1e-15)


def test_poles_and_special_values():
    inf, nan = math.inf, math.nan
    x = f64([0.0, -0.0, -1.0, -2.0, inf, -inf, nan])
    assert np.array(fss.gammaln(x)).tolist()[:6] == [inf] * 6
    assert np.isnan(np.array(fss.gammaln(x))[6])
    np.testing.assert_array_equal(np.array(fss.gamma(x)), [inf, -inf, nan, nan, inf, nan, nan])
    np.testing.assert_array_equal(np.array(fss.digamma(x)), [nan, nan, nan, nan, inf, nan, nan])
    np.testing.assert_array_equal(np.array(fss.gammasgn(f64([0.5, -0.5, -1.5, 0.0, -0.0]))),
                                  [1, -1, 1, 1, -1])
    np.testing.assert_array_equal(np.array(fss.erfc(f64([inf, -inf, nan]))), [0, 2, nan])
    np.testing.assert_array_equal(np.array(fss.log_ndtr(f64([inf, -inf]))), [0, -inf])
    np.testing.assert_array_equal(np.array(fss.ndtri(f64([0.0, 1.0, -0.1, 1.1, nan]))),
                                  [-inf, inf, nan, nan, nan])
    np.testing.assert_array_equal(np.array(fss.i0e(f64([inf, -inf]))), [0, 0])
    np.testing.assert_array_equal(np.array(fss.sinc(f64([0.0, 1.0, -2.0]))), [1, 0, 0])
    np.testing.assert_array_equal(np.array(fss.entr(f64([0.0, -1.0]))), [0, -inf])
    np.testing.assert_array_equal(np.array(fss.logit(f64([0.0, 1.0, 2.0]))), [-inf, inf, nan])


def test_gamma_beta_and_friends():
    x = np.array([0.1, 0.5, 3.7, 10.0, 30.0, -0.5, -2.7])
    assert_rel(fss.gamma(f64(x)), sps.gamma(x), 1e-5)  # MLX's float64 exp: float32-accurate
    assert_rel(fss.gammasgn(f64(x)), sps.gammasgn(x), 0)
    a = np.array([0.5, 2.0, 1e10, 1.0, 15.0, 3.0, -0.5, 200.0])
    b = np.array([0.5, 3.0, 1.0, 1e12, 25.0, 1e8, 1.5, 200.0])
    assert_rel(fss.betaln(f64(a), f64(b)), sps.betaln(a, b), 1e-12)
    assert_rel(fss.betaln(f64(b), f64(a)), sps.betaln(a, b), 1e-12)
    # SciPy is 1.5e-11 off here; mpmath at 40 digits gives 6.895665964913892.
    np.testing.assert_allclose(fss.betaln(f64(1e5), f64(1e-3)).item(), 6.895665964913892,
                               rtol=1e-14)
    assert_rel(fss.beta(f64(a[:3]), f64(b[:3])), sps.beta(a[:3], b[:3]), 1e-5)
    assert_rel(fss.multigammaln(f64([3.0, 10.5]), 4), sps.multigammaln(np.array([3.0, 10.5]), 4),
               1e-13)


@given(data=st.data())
def test_betaln_matches_scipy(data):
    a = data.draw(log_uniform(-3, 8, 10))
    b = data.draw(log_uniform(-3, 8, 10).filter(lambda v: True))
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    want = sps.betaln(a, b)
    scale = np.abs(sps.gammaln(np.maximum(a, b)))
    assert_rel(fss.betaln(f64(a), f64(b)), want, 1e-12, 1e-15 * (1 + scale.max()))


def test_xlogy_family_values():
    x = np.array([0.0, 0.0, 0.0, 2.0, 1.5, -1.0])
    y = np.array([0.0, 2.0, np.nan, 3.0, -1.0, 0.5])
    assert_rel(fss.xlogy(f64(x), f64(y)), sps.xlogy(x, y), 1e-15)
    y1 = np.array([-1.0, 2.0, np.nan, 3.0, -2.0, 0.5])
    assert_rel(fss.xlog1py(f64(x), f64(y1)), sps.xlog1py(x, y1), 1e-15)
    p = np.array([0.0, 0.0, 1.0, -1.0, 1.0, 0.3])
    q = np.array([0.0, 1.0, 0.0, 1.0, -1.0, 0.6])
    assert_rel(fss.rel_entr(f64(p), f64(q)), sps.rel_entr(p, q), 1e-15)
    assert_rel(fss.kl_div(f64(p), f64(q)), sps.kl_div(p, q), 1e-15)


def test_logistic_family_values():
    x = np.array([-800.0, -30.0, -1.0, 0.0, 2.0, 40.0, 800.0])
    # expit, log_expit and softplus go through MLX's float64 exp / sigmoid.
    assert_rel(fss.expit(f64(x)), sps.expit(x), 1e-5)
    assert_rel(fss.log_expit(f64(x)), sps.log_expit(x), 1e-5)
    assert_rel(fss.softplus(f64(x)), np.logaddexp(x, 0.0), 1e-5)
    assert_rel(fss.erfinv(f64([-0.5, 0.0, 0.9])), sps.erfinv([-0.5, 0.0, 0.9]), 1e-5)
    assert_rel(fss.erf(f64([-2.0, 0.5, 1.0])), sps.erf([-2.0, 0.5, 1.0]), 1e-5)
    assert_rel(fss.i0(f64([-3.0, 0.5, 10.0])), sps.i0([-3.0, 0.5, 10.0]), 1e-5)
    assert_rel(fss.i1(f64([-3.0, 0.5, 10.0])), sps.i1([-3.0, 0.5, 10.0]), 1e-5)


def test_logsumexp_softmax():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4)) * 10
    b = rng.normal(size=(4,))
    for axis in (None, 0, 1, (0, 1)):
        assert_rel(fss.logsumexp(f64(a), axis=axis), sps.logsumexp(a, axis=axis), 1e-5)
        out, sign = fss.logsumexp(f64(a), axis=axis, b=f64(b), keepdims=True, return_sign=True)
        want, wsign = sps.logsumexp(a, axis=axis, b=b, keepdims=True, return_sign=True)
        assert_rel(out, want, 1e-5)
        assert_rel(sign, wsign, 0)
    with np.errstate(invalid="ignore"):
        want = sps.logsumexp(a, axis=1, b=b)
    assert_rel(fss.logsumexp(f64(a), axis=1, b=f64(b)), want, 1e-5)
    mask = a > 0
    assert_rel(fss.logsumexp(f64(a), axis=1, where=mx.array(mask)),
               sps.logsumexp(np.where(mask, a, -np.inf), axis=1), 1e-5)
    assert_rel(fss.softmax(f64(a)), sps.softmax(a), 1e-5)
    assert_rel(fss.log_softmax(f64(a), axis=1), sps.log_softmax(a, axis=1), 1e-5)


def test_norm_matches_scipy():
    x = np.array([-40.0, -10.0, -1.0, 0.0, 0.5, 3.0, 12.0, 40.0])
    loc, scale = 0.5, 2.0
    ref = sst.norm(loc, scale)
    for name, rtol in [("logpdf", 1e-14), ("cdf", 1e-12), ("logcdf", 1e-13), ("sf", 1e-12),
                       ("logsf", 1e-13)]:
        assert_rel(getattr(norm, name)(f64(x), loc, scale), getattr(ref, name)(x), rtol, 1e-300)
    # pdf is exp(logpdf): MLX's float64 exp is float32's (it is 0 below -88).
    assert_rel(norm.pdf(f64(x[1:-1]), loc, scale), ref.pdf(x[1:-1]), 1e-5)
    q = np.array([0.0, 1e-300, 1e-10, 0.025, 0.5, 0.975, 1 - 1e-10, 1.0])
    assert_rel(norm.ppf(f64(q), loc, scale), ref.ppf(q), 1e-12)
    assert_rel(norm.isf(f64(q), loc, scale), ref.isf(q), 1e-12)
    # Defaults, broadcasting, integer promotion.
    assert norm.cdf(mx.array([0, 1])).dtype == mx.float32
    assert norm.logpdf(f64(np.zeros((2, 1))), f64(np.zeros(3))).shape == (2, 3)


# ----------------------------------------------------------------------------
# Gradients
# ----------------------------------------------------------------------------


def fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


GRAD_POINTS = [
    ("gammaln", fss.gammaln, [1e-3, 0.5, 1.0, 2.0, 11.9, 12.1, 1e4, -0.5, -2.3], sps.digamma),
    ("digamma", fss.digamma, [1e-3, 1.0, 9.9, 10.1, 1e4, -0.5, -2.3],
     lambda x: sps.polygamma(1, x)),
    ("polygamma2", lambda x: fss.polygamma(2, x), [0.05, 1.0, 14.0, 1e3, -0.5],
     lambda x: sps.polygamma(3, x)),
    ("i0e", fss.i0e, [-25.0, -0.3, 1e-3, 1.0, 19.9, 20.1, 300.0],
     lambda x: sps.i1e(x) - np.sign(x) * sps.i0e(x)),
    ("i1e", fss.i1e, [-25.0, -0.3, 1e-3, 1.0, 19.9, 20.1, 300.0],
     lambda x: sps.i0e(x) - sps.i1e(x) * (np.sign(x) + 1 / x)),
    ("log_ndtr", fss.log_ndtr, [-1e4, -40.0, -20.1, -19.9, 0.0, 5.0, 9.0],
     lambda x: np.exp(sst.norm.logpdf(x) - sps.log_ndtr(x))),
    # (not far in the tails: the derivative is exp(y^2/2), and MLX's float64
    # exp overflows from 88.7, as float32's)
    ("ndtri", fss.ndtri, [1e-20, 1e-6, 0.3, 0.5, 0.9],
     lambda p: 1 / sst.norm.pdf(sps.ndtri(p))),
    ("erfc", fss.erfc, [-2.0, 0.0, 1.99, 2.01, 8.0],
     lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x)),
    ("sinc", fss.sinc, [0.0, 1e-8, 0.2, 0.3, 1.0, -2.5],
     lambda x: np.where(np.abs(x) < 1e-4, -np.pi ** 2 * x / 3,
                        (np.cos(np.pi * x) - np.sinc(x)) / np.where(x == 0, 1, x))),
]


@pytest.mark.parametrize("name,f,points,dref", GRAD_POINTS, ids=[g[0] for g in GRAD_POINTS])
def test_gradients_at_hard_points(name, f, points, dref):
    x = np.array(points)
    g = ft.vmap(ft.grad(f))(f64(x))
    # MLX's float64 exp and cos appear in some of these derivatives.
    assert_rel(g, dref(x), 1e-5, 1e-12)


def test_gradients_against_finite_differences():
    x = np.array([0.37, 1.3, 4.2, 15.0])
    for f in (fss.gammaln, fss.digamma, lambda v: fss.polygamma(1, v), fss.i0e, fss.i1e):
        g = np.array(ft.vmap(ft.grad(f))(f64(x)))
        want = np.array(fd(f, f64(x)))
        np.testing.assert_allclose(g, want, rtol=1e-7)


def test_sinc_derivatives_at_zero():
    d1 = ft.grad(fss.sinc)(f64(0.0))
    d2 = ft.grad(ft.grad(fss.sinc))(f64(0.0))
    d3 = ft.grad(ft.grad(ft.grad(fss.sinc)))(f64(0.0))
    assert d1.item() == 0.0
    np.testing.assert_allclose(d2.item(), -math.pi ** 2 / 3, rtol=1e-14)
    assert abs(d3.item()) < 1e-12


def test_xlogy_gradients_as_jax():
    # Reference values from jax.scipy.special (custom JVPs).
    gx = ft.grad(fss.xlogy, argnums=(0, 1))
    assert [v.item() for v in gx(f64(0.0), f64(2.0))] == [math.log(2.0), 0.0]
    assert [v.item() for v in gx(f64(0.0), f64(1.0))] == [0.0, 0.0]
    dx, dy = gx(f64(0.0), f64(0.0))
    assert dx.item() == -math.inf and math.isnan(dy.item())
    g1 = ft.grad(fss.xlog1py, argnums=(0, 1))
    assert [v.item() for v in g1(f64(0.0), f64(1.0))] == [math.log(2.0), 0.0]
    assert ft.grad(fss.entr)(f64(0.0)).item() == math.inf
    assert ft.grad(fss.entr)(f64(1.0)).item() == -1.0
    assert [v.item() for v in ft.grad(fss.rel_entr, argnums=(0, 1))(f64(0.0), f64(1.0))] == [
        0.0, 0.0]


def test_betaln_gradient_in_every_branch():
    for a, b in [(0.7, 2.5), (3.0, 40.0), (40.0, 3.0), (25.0, 60.0), (5.0, 5.0), (20.0, 20.0)]:
        ga, gb = ft.grad(fss.betaln, argnums=(0, 1))(f64(a), f64(b))
        np.testing.assert_allclose(ga.item(), sps.digamma(a) - sps.digamma(a + b), rtol=1e-11)
        np.testing.assert_allclose(gb.item(), sps.digamma(b) - sps.digamma(a + b), rtol=1e-11)


def test_logcdf_gradient_far_tail():
    g = ft.grad(norm.logcdf)(f64(-1e3))
    # (about 1000.001; MLX's float64 exp in the derivative limits the digits)
    np.testing.assert_allclose(g.item(), 1000.000999997, rtol=1e-6)


# ----------------------------------------------------------------------------
# jit, vmap, dtypes, errors
# ----------------------------------------------------------------------------

PUBLIC = [fss.gammaln, fss.gamma, fss.digamma, fss.i0e, fss.i1e, fss.i0, fss.i1, fss.erfc,
          fss.ndtr, fss.log_ndtr, fss.ndtri, fss.sinc, fss.entr, fss.logit, fss.expit,
          fss.log_expit, fss.softplus, fss.erf, fss.erfinv, lambda x: fss.polygamma(2, x),
          lambda x: fss.multigammaln(x + 2, 2), norm.logpdf, norm.pdf, norm.cdf, norm.logcdf,
          norm.sf, norm.logsf, norm.ppf, norm.isf]


@pytest.mark.parametrize("f", PUBLIC)
def test_jit_and_vmap(f):
    x = f64(np.array([[0.15, 0.4], [0.7, 0.9]]))
    want = np.array(f(x))
    # (jit's graph handling is what is checked here: MLX's compiler would
    # build fused CPU kernels for these long graphs, seconds each.)
    with compiler_off():
        np.testing.assert_allclose(np.array(ft.jit(f)(x)), want, rtol=1e-12)
    np.testing.assert_allclose(np.array(ft.vmap(f, in_axes=1, out_axes=1)(x)), want, rtol=1e-12)


def test_jit_and_vmap_binary():
    a, b = f64([[1.5, 20.0], [0.3, 4.0]]), f64([2.0, 30.0])
    for f in (fss.betaln, fss.beta, fss.xlogy, fss.xlog1py, fss.rel_entr, fss.kl_div):
        want = np.array(f(a, b))
        with compiler_off():
            np.testing.assert_allclose(np.array(ft.jit(f)(a, b)), want, rtol=1e-12)
        np.testing.assert_allclose(np.array(ft.vmap(f, in_axes=(0, None))(a, b)), want,
                                   rtol=1e-12)
    with compiler_off():
        out = ft.jit(lambda v: fss.logsumexp(v, axis=1, b=b, return_sign=True))(a)
    want = fss.logsumexp(a, axis=1, b=b, return_sign=True)
    for o, w in zip(out, want):
        np.testing.assert_allclose(np.array(o), np.array(w), rtol=1e-12)


def test_dtypes_and_promotion():
    assert fss.gammaln(mx.array([1, 2])).dtype == mx.float32
    assert fss.gammaln(mx.array([1.0], dtype=mx.float16)).dtype == mx.float16
    assert fss.gammaln(mx.array([1.0], dtype=mx.bfloat16)).dtype == mx.bfloat16
    assert fss.xlogy(2.0, f64([3.0])).dtype == mx.float64
    assert fss.betaln(mx.array([2.0]), f64([3.0])).dtype == mx.float64
    np.testing.assert_allclose(np.array(fss.gammaln(mx.array([5.0], dtype=mx.float16))),
                               [math.log(24)], rtol=1e-3)


def test_bad_arguments():
    with pytest.raises(TypeError, match="polygamma: n must be of integer type"):
        fss.polygamma(1.0, f64([1.0]))
    with pytest.raises(TypeError, match="polygamma: n must be of integer type"):
        fss.polygamma(mx.array([1.5]), f64([1.0]))
    with pytest.raises(ValueError, match="polygamma: n must be non-negative"):
        fss.polygamma(-1, f64([1.0]))
    with pytest.raises(TypeError, match="polygamma: n must be concrete"):
        ft.jit(lambda n, x: fss.polygamma(n, x))(mx.array(1), f64([1.0]))
    with pytest.raises(ValueError, match="polygamma: n must be a non-negative Python int"):
        lax.polygamma(1.5, f64([1.0]))
    with pytest.raises(TypeError, match="multigammaln: d must be a Python int"):
        fss.multigammaln(f64([3.0]), 2.0)
    with pytest.raises(ValueError, match="multigammaln: d must be at least 1"):
        fss.multigammaln(f64([3.0]), 0)
    with pytest.raises(ValueError, match=r"log_ndtr: series_order must be in \[0, 30\]"):
        fss.log_ndtr(f64([1.0]), series_order=31)
    with pytest.raises(TypeError, match="gammaln: complex arguments are not supported"):
        fss.gammaln(mx.array([1 + 1j]))
    with pytest.raises(TypeError, match="erfc: argument 0 must be an array or a number"):
        fss.erfc("x")
    with pytest.raises(ValueError, match="logsumexp"):
        fss.logsumexp(f64([[1.0]]), axis=2, b=f64([1.0]))
