"""``sici`` and ``fresnel`` against SciPy: both branches, both signs, large
arguments, the special points, and the derivatives."""

import math

import mlx.core as mx
import numpy as np
import pytest
import scipy.special as sps

import ftorch
import ftorch.scipy.special as fss

GRID = np.concatenate([np.linspace(-30.0, 30.0, 601), [1e-4, 1.49, 1.5, 1.51, 3.99, 4.0, 4.01,
                                                       100.0, 1e3, -1e3]])


def _np(x):
    return np.array(x)


@pytest.mark.parametrize("dtype,tol", [(mx.float32, 1e-5), (mx.float64, 2e-6)])
def test_sici_matches_scipy(dtype, tol):
    x = GRID[GRID != 0.0]
    with mx.stream(mx.cpu):
        si, ci = fss.sici(mx.array(x, dtype=dtype))
    want_si, want_ci = sps.sici(x)
    scale = np.maximum(np.abs(want_si), 0.1)
    assert np.max(np.abs(_np(si) - want_si) / scale) < tol
    # Ci's real part (SciPy's real sici gives NaN below 0; Ci is even in its real part).
    want_ci = sps.sici(np.abs(x))[1]
    assert np.max(np.abs(_np(ci) - want_ci) / np.maximum(np.abs(want_ci), 0.1)) < 3 * tol


@pytest.mark.parametrize("dtype,tol", [(mx.float32, 5e-5), (mx.float64, 5e-5)])
def test_fresnel_matches_scipy(dtype, tol):
    # (float64 is limited by MLX's float64 sin and cos, which are float32-accurate.)
    with mx.stream(mx.cpu):
        s, c = fss.fresnel(mx.array(GRID, dtype=dtype))
    want_s, want_c = sps.fresnel(GRID)
    assert np.max(np.abs(_np(s) - want_s)) < tol
    assert np.max(np.abs(_np(c) - want_c)) < tol


def test_special_points():
    si, ci = fss.sici(mx.array([0.0, math.inf, -math.inf]))
    assert si.tolist() == [0.0, math.pi / 2, -math.pi / 2] or np.allclose(
        _np(si), [0.0, math.pi / 2, -math.pi / 2])
    assert ci.tolist()[0] == -math.inf and ci.tolist()[1:] == [0.0, 0.0]
    s, c = fss.fresnel(mx.array([0.0, math.inf, -math.inf]))
    assert s.tolist() == [0.0, 0.5, -0.5] and c.tolist() == [0.0, 0.5, -0.5]


def test_derivatives():
    x = mx.array([-5.0, -0.5, 0.7, 3.0, 6.0])
    d_si = ftorch.vmap(ftorch.grad(lambda t: fss.sici(t)[0]))(x)
    d_ci = ftorch.vmap(ftorch.grad(lambda t: fss.sici(t)[1]))(x)
    d_s = ftorch.vmap(ftorch.grad(lambda t: fss.fresnel(t)[0]))(x)
    d_c = ftorch.vmap(ftorch.grad(lambda t: fss.fresnel(t)[1]))(x)
    xn = _np(x)
    np.testing.assert_allclose(_np(d_si), np.sin(xn) / xn, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(d_ci), np.cos(xn) / xn, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(d_s), np.sin(np.pi * xn ** 2 / 2), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(d_c), np.cos(np.pi * xn ** 2 / 2), rtol=1e-4, atol=1e-5)
    assert ftorch.grad(lambda t: fss.sici(t)[0])(mx.array(0.0)).item() == 1.0


def test_jit_matches_eager():
    x = mx.array([-7.0, 0.3, 2.0, 9.0])
    for f in (fss.sici, fss.fresnel):
        for a, b in zip(ftorch.jit(f)(x), f(x)):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype,tol", [(mx.float32, 1e-5), (mx.float64, 1e-12)])
def test_hyp2f1_matches_scipy(dtype, tol):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-2.0, 3.0, 200), rng.uniform(-2.0, 3.0, 200)
    c, x = rng.uniform(0.3, 4.0, 200), rng.uniform(-1.0, 0.95, 200)
    with mx.stream(mx.cpu):
        got = _np(fss.hyp2f1(*(mx.array(v, dtype=dtype) for v in (a, b, c, x))))
    want = sps.hyp2f1(a, b, c, x)
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1.0)) < tol


def test_hyp2f1_edges_and_derivative():
    got = fss.hyp2f1(1.0, 2.0, 3.0, mx.array([-2.0, 1.0, 1.5])).tolist()
    assert math.isnan(got[0]) and got[1] == math.inf and math.isnan(got[2])
    np.testing.assert_allclose(fss.hyp2f1(0.5, 0.25, 2.5, mx.array(1.0)).item(),
                               sps.hyp2f1(0.5, 0.25, 2.5, 1.0), rtol=1e-5)
    # d/dx 2F1(a, b; c; x) = a b / c 2F1(a + 1, b + 1; c + 1; x)
    x = mx.array([-0.7, 0.2, 0.6])
    d = ftorch.vmap(ftorch.grad(lambda t: fss.hyp2f1(0.7, -1.3, 2.1, t)))(x)
    np.testing.assert_allclose(_np(d), 0.7 * -1.3 / 2.1 * sps.hyp2f1(1.7, -0.3, 3.1, _np(x)),
                               rtol=1e-4)


def test_sph_harm_y_matches_scipy():
    rng = np.random.default_rng(1)
    n = rng.integers(0, 8, 300)
    m = np.array([rng.integers(-k, k + 1) for k in n])
    theta, phi = rng.uniform(0.0, np.pi, 300), rng.uniform(0.0, 2 * np.pi, 300)
    got = _np(fss.sph_harm_y(mx.array(n), mx.array(m), mx.array(theta, dtype=mx.float32),
                             mx.array(phi, dtype=mx.float32)))
    assert got.dtype == np.complex64
    assert np.max(np.abs(got - sps.sph_harm_y(n, m, theta, phi))) < 5e-6


def test_sph_harm_y_static_degree_and_errors():
    f = ftorch.jit(lambda *a: fss.sph_harm_y(*a, n_max=3))
    got = f(mx.array([2]), mx.array([-1]), mx.array([0.5]), mx.array([0.3])).item()
    assert abs(got - sps.sph_harm_y(2, -1, 0.5, 0.3)) < 1e-6
    with pytest.raises(TypeError, match="sph_harm_y: n is traced"):
        ftorch.jit(fss.sph_harm_y)(mx.array([1]), mx.array([0]), mx.array([0.5]), mx.array([0.0]))
    with pytest.raises(NotImplementedError, match="diff_n"):
        fss.sph_harm_y(mx.array([1]), mx.array([0]), mx.array([0.5]), mx.array([0.0]), diff_n=1)
