"""The incomplete gamma and beta functions, the exponential integrals, erfcx and the
Hurwitz zeta function against SciPy (float64, where ftorch's are accurate to about
1e-13, and float32) beyond the ranges the JAX oracle draws: the far tails, large
parameters, the domain's edges. JAX itself is less accurate there (XLA's float32
igamma and betainc reach relative errors of 1e-2 for parameters in the thousands)."""

import mlx.core as mx
import numpy as np
import pytest
import scipy.special as sp

import ftorch as ft
import ftorch.lax as lax
import ftorch.scipy.special as fss

RNG = np.random.default_rng(0)
DTYPES = {np.float64: (mx.float64, 1e-12, 1e-300), np.float32: (mx.float32, 3e-4, 1e-36)}


def _rel_error(ours, want, floor):
    ours = np.asarray(ours).astype(np.float64)
    keep = np.abs(want) > floor
    return np.max(np.abs(ours[keep] - want[keep]) / np.abs(want[keep]))


def _run(fn, dtype, *args):
    mdt = DTYPES[dtype][0]
    rounded = [a.astype(dtype) for a in args]
    out = np.array(fn(*(mx.array(a, dtype=mdt) for a in rounded)))
    return out, [a.astype(np.float64) for a in rounded]


def _gamma_args(lo, hi, n=2000):
    a = np.exp(RNG.uniform(np.log(lo), np.log(hi), n))
    return a, np.abs(a + RNG.normal(0, 3, n) * np.sqrt(a)) + 1e-3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lo,hi", [(1e-3, 1.0), (0.5, 30.0), (20.0, 1e4)])
def test_igamma_matches_scipy_in_both_tails(dtype, lo, hi):
    _, rtol, floor = DTYPES[dtype]
    a, x = _gamma_args(lo, hi)
    for fn, ref in ((lax.igamma, sp.gammainc), (lax.igammac, sp.gammaincc)):
        out, (a64, x64) = _run(fn, dtype, a, x)
        assert _rel_error(out, ref(a64, x64), floor) < rtol


@pytest.mark.parametrize("lo,hi", [(1e-2, 1.0), (0.1, 20.0), (10.0, 1e3)])
def test_betainc_matches_scipy(lo, hi):
    n = 2000
    a, b = (np.exp(RNG.uniform(np.log(lo), np.log(hi), n)) for _ in range(2))
    x = RNG.uniform(0, 1, n)
    for dtype in (np.float64, np.float32):
        out, args = _run(lax.betainc, dtype, a, b, x)
        # float32 with parameters in the hundreds: the prefactor's exponent, of order
        # a log x, carries an absolute rounding of order a * eps.
        rtol = 1e-3 if dtype == np.float32 and hi > 100 else DTYPES[dtype][1]
        # (Below 1e-200 SciPy's own betainc can be off by 20% for a >> b: at
        # a, b, x = 802.6, 33.58, 0.394 it gives 8.59e-274; the integral is 7.24e-274.)
        floor = max(DTYPES[dtype][2], 1e-200)
        assert _rel_error(out, sp.betainc(*args), floor) < rtol


def test_igamma_grad_a_and_random_gamma_grad_match_differences_of_scipy():
    a, x = _gamma_args(0.05, 200.0, 500)
    h = 1e-6 * a
    small_p = sp.gammainc(a, x) < 0.5
    # Differences of the smaller tail, so that they keep their digits.
    dp = np.where(small_p, sp.gammainc(a + h, x) - sp.gammainc(a - h, x),
                  sp.gammaincc(a - h, x) - sp.gammaincc(a + h, x)) / (2 * h)
    ours = np.array(lax.igamma_grad_a(mx.array(a, dtype=mx.float64), mx.array(x, dtype=mx.float64)))
    assert _rel_error(ours, dp, 1e-250) < 1e-6
    dpdx = np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))
    keep = dpdx > 1e-250
    sample_grad = np.array(lax.random_gamma_grad(mx.array(a, dtype=mx.float64),
                                                 mx.array(x, dtype=mx.float64)))
    assert _rel_error(sample_grad[keep], -dp[keep] / dpdx[keep], 0.0) < 1e-6


def test_random_gamma_grad_is_finite_in_the_far_tails():
    a = mx.array([2.0, 2.0, 50.0, 50.0])
    x = mx.array([1e-30, 1e4, 1.0, 500.0])
    out = np.array(lax.random_gamma_grad(a, x))
    assert np.all(np.isfinite(out))
    # x -> 0: -x (log x - digamma(a + 1)) / a; x -> inf: log x - digamma(a) + O(1/x).
    assert np.isclose(out[0], -1e-30 * (np.log(1e-30) - sp.digamma(3.0)) / 2.0, rtol=1e-4)
    assert np.isclose(out[1], np.log(1e4) - sp.digamma(2.0), rtol=1e-3)


def test_igamma_and_betainc_edges_follow_scipy():
    inf, nan = np.inf, np.nan
    a = np.array([0.0, 0.0, 1.0, 1.0, -1.0, 1.0, inf, nan, 2.0])
    x = np.array([0.0, 1.0, 0.0, inf, 1.0, -1.0, 1.0, 1.0, 1e-30])
    for fn, ref in ((fss.gammainc, sp.gammainc), (fss.gammaincc, sp.gammaincc)):
        np.testing.assert_array_equal(np.array(fn(mx.array(a), mx.array(x))),
                                      ref(a, x).astype(np.float32))
    a = np.array([1.0, 0.0, 1.0, 2.0, -1.0, 1.0, 2.0, 0.0])
    b = np.array([1.0, 1.0, 0.0, 2.0, 1.0, 1.0, 2.0, 0.0])
    x = np.array([0.5, 0.5, 0.5, 0.0, 0.5, -0.1, 1.0, 0.5])
    np.testing.assert_allclose(np.array(fss.betainc(mx.array(a), mx.array(b), mx.array(x))),
                               sp.betainc(a, b, x), rtol=1e-6)


def test_exponential_integrals_erfcx_and_zeta_match_scipy():
    x = np.concatenate([RNG.uniform(-60, 60, 2000), np.exp(RNG.uniform(-20, 5, 2000))])
    s = 1 + np.exp(RNG.uniform(-8, 4, 2000))
    q = np.exp(RNG.uniform(-4, 4, 2000))
    checks = [(lax.expi, sp.expi, (x,)), (lax.exp1, sp.exp1, (np.abs(x),)),
              (lax.erfcx, sp.erfcx, (x[x > -9],)), (lax.zeta, sp.zeta, (s, q))]
    for fn, ref, args in checks:
        for dtype in (np.float64, np.float32):
            out, args64 = _run(fn, dtype, *args)
            want = ref(*args64)
            keep = np.abs(want) < 1e36  # (float32's range)
            # Ei has a root at 0.3725: near it only the absolute error is small.
            err = _rel_error(out[keep], want[keep], DTYPES[dtype][2])
            assert err < (1e-4 if fn is lax.expi and dtype == np.float32 else DTYPES[dtype][1])


def test_special_edges():
    np.testing.assert_array_equal(np.array(fss.expi(mx.array([0.0, -np.inf]))), [-np.inf, 0.0])
    np.testing.assert_array_equal(np.array(fss.exp1(mx.array([0.0, -1.0]))), [np.inf, np.nan])
    np.testing.assert_array_equal(np.array(fss.zeta(mx.array([1.0, 0.5, 2.0]), 1.0)),
                                  [np.inf, np.nan, np.float32(np.pi ** 2 / 6)])
    np.testing.assert_array_equal(np.array(fss.loggamma(mx.array([-1.5, 0.0]))), [np.nan, np.inf])
    np.testing.assert_allclose(np.array(fss.boxcox(mx.array([0.0, 0.0]), mx.array([0.5, -1.0]))),
                               [-2.0, -np.inf])
    with pytest.raises(NotImplementedError, match="zeta"):
        fss.zeta(mx.array(2.0))
    with pytest.raises(NotImplementedError, match="factorial"):
        fss.factorial(3, exact=True)
    np.testing.assert_allclose(np.array(fss.bernoulli(10)),
                               sp.bernoulli(10).astype(np.float32), rtol=1e-6)


def test_derivatives_jax_leaves_undefined_raise():
    x = mx.array([0.3, 0.6])
    with pytest.raises(NotImplementedError, match="betainc"):
        ft.grad(lambda a: fss.betainc(a, 2.0, x).sum())(mx.array(1.5))
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        ft.grad(lambda a: lax.igamma_grad_a(a, x).sum())(mx.array(1.5))
    # In x they are defined.
    g = ft.grad(lambda x: fss.betainc(2.0, 3.0, x).sum())(x)
    assert np.allclose(np.array(g), 12 * np.array(x) * (1 - np.array(x)) ** 2, rtol=1e-5)


def test_boxcox_derivative_in_lmbda_is_smooth_through_zero():
    x = mx.array(2.0, dtype=mx.float64)
    g0 = ft.grad(lambda lm: fss.boxcox(x, lm))(mx.array(0.0, dtype=mx.float64)).item()
    assert np.isclose(g0, np.log(2.0) ** 2 / 2, rtol=1e-12)


def test_bessel_jn_matches_scipy_near_zero_and_its_derivative():
    z = np.array([0.0, 1e-25, 1e-5, 0.1, 0.5, 1.0, 2.0, 5.0, 12.0, 20.0, -3.0])
    want = np.stack([sp.jv(k, z) for k in range(5)])
    for dtype, atol in ((mx.float64, 1e-14), (mx.float32, 3e-7)):
        out = np.array(fss.bessel_jn(mx.array(z, dtype=dtype), v=4))
        np.testing.assert_allclose(out, want, atol=atol)
    slope = ft.grad(lambda t: fss.bessel_jn(t, v=2)[1])(mx.array(5.0, dtype=mx.float64))
    assert np.isclose(slope.item(), sp.jvp(1, 5.0), rtol=1e-10)


def test_owens_t_matches_scipy_and_ndtr_has_no_nan_far_out():
    h = RNG.uniform(-10, 10, 3000)
    a = RNG.uniform(-5, 5, 3000) * np.exp(RNG.uniform(-3, 3, 3000))
    for dtype in (np.float64, np.float32):
        out, args = _run(fss.owens_t, dtype, h, a)
        rtol = 1e-12 if dtype == np.float64 else 3e-5
        assert _rel_error(out, sp.owens_t(*args), DTYPES[dtype][2]) < rtol
    # (erfc's e^(-x^2) once overflowed to 0 * inf far out in float32.)
    np.testing.assert_array_equal(np.array(fss.ndtr(mx.array([-278.0, -95.0]))), [0.0, 0.0])
