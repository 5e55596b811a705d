"""ftorch.nn.functional: values against NumPy / mlx.nn, stability with large
and -inf inputs, derivatives where they are special, errors."""

import math

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from cases_reduction import axis_choice
from harness import close as _close
from harness import floats, shapes
from hypothesis import given
from hypothesis import strategies as st

import ftorch
import ftorch as ft
import ftorch.nn.functional as F
import ftorch.numpy as fnp

_np = np.array


@st.composite
def softmax_draw(draw):
    x = draw(floats(shapes(min_dims=1), -5.0, 5.0))
    return x, draw(axis_choice(x.ndim))


def _np_log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def test_import_styles():
    assert ftorch.nn.functional is F
    assert F.logsumexp is fnp.logsumexp
    for name in F.__all__:
        assert callable(getattr(F, name))


@given(args=softmax_draw())
def test_softmax_and_log_softmax_match_numpy(args):
    x, axis = args
    expected = _np_log_softmax(x, axis)
    xm = mx.array(x.astype(np.float32))
    got = F.softmax(xm, axis=axis)
    assert isinstance(got, mx.array)
    _close(got, np.exp(expected), atol=1e-6)
    _close(F.log_softmax(xm, axis=axis), expected, atol=1e-5)
    _close(fnp.sum(got, axis=axis), np.ones(np.sum(x, axis=axis).shape), atol=1e-5)


def test_softmax_default_axis_is_last():
    x = mx.array([[1.0, 2.0], [3.0, 5.0]])
    _close(F.softmax(x), F.softmax(x, axis=1))
    _close(F.log_softmax(x), F.log_softmax(x, axis=-1))


def test_softmax_large_inputs_stay_finite():
    x = mx.array([[1000.0, 1000.0, 999.0], [-1000.0, -1000.0, -1000.0]])
    p = F.softmax(x)
    assert np.isfinite(_np(p)).all()
    e = np.exp([0.0, 0.0, -1.0])
    _close(p, [e / e.sum(), [1 / 3] * 3])
    # log_softmax keeps the small normalizer next to a huge input.
    _close(F.log_softmax(mx.array([1e4, 1e4 + 1.0])),
           [-math.log1p(math.e), -math.log1p(1 / math.e)], rtol=1e-6)
    g = ft.grad(lambda v: (F.log_softmax(v) * mx.array([1.0, 0.0, 2.0])).sum())(x)
    assert np.isfinite(_np(g)).all()


def test_softmax_with_minus_inf_entries():
    ninf = -math.inf
    x = mx.array([[0.0, ninf, 0.0], [ninf, ninf, ninf]])
    p = _np(F.softmax(x))
    _close(p[0], [0.5, 0.0, 0.5])
    # An entirely -inf slice has no distribution: nan, as mx.softmax gives.
    assert np.isnan(p[1]).all()
    lp = _np(F.log_softmax(x))
    assert lp[0, 1] == ninf and np.isnan(lp[1]).all()
    _close(lp[0, [0, 2]], [-math.log(2.0)] * 2)
    # Gradients through the masked row are finite and zero at -inf.
    w, row = mx.array([1.0, 5.0, -1.0]), mx.array([0.0, ninf, 0.0])
    g = ft.grad(lambda v: (F.softmax(v) * w).sum())(row)
    _close(g, [0.5, 0.0, -0.5])
    g = ft.grad(lambda v: (F.log_softmax(v) * w).sum())(row)
    assert np.isfinite(_np(g)).all()
    _close(g, [1 - 2.5, 5.0, -1 - 2.5])


@given(args=softmax_draw())
def test_softmax_gradients_match_formulas(args):
    x, axis = args
    rng = np.random.default_rng(0)
    w = rng.standard_normal(x.shape)
    xm, wm = mx.array(x, dtype=mx.float64), mx.array(w, dtype=mx.float64)
    p = np.exp(_np_log_softmax(x, axis))
    g = ft.grad(lambda v: (F.softmax(v, axis=axis) * wm).sum())(xm)
    _close(g, p * (w - np.sum(w * p, axis=axis, keepdims=True)), rtol=1e-4, atol=1e-6)
    g = ft.grad(lambda v: (F.log_softmax(v, axis=axis) * wm).sum())(xm)
    _close(g, w - p * np.sum(w, axis=axis, keepdims=True), rtol=1e-4, atol=1e-6)


def test_softmax_of_integers_is_float():
    p = F.softmax(mx.array([1, 1]))
    assert p.dtype == mx.float32 and p.tolist() == [0.5, 0.5]


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_axis_errors(fn):
    name = fn.__name__
    x = mx.ones((2, 3))
    with pytest.raises(ValueError, match=rf"{name}: axis 2 is out of range .* ndim 2"):
        fn(x, axis=2)
    with pytest.raises(ValueError, match=rf"{name}: repeated axis"):
        fn(x, axis=(0, -2))
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int"):
        fn(x, axis="0")
    with pytest.raises(ValueError, match=rf"{name}: axis -1 is out of range .* ndim 0"):
        fn(mx.array(1.0))


# ----------------------------------------------------------------------------
# Elementwise activations
# ----------------------------------------------------------------------------


@given(x=floats(shapes(), -8.0, 8.0))
def test_activations_match_references(x):
    xm = mx.array(x.astype(np.float32))
    s = 1 / (1 + np.exp(-x))
    _close(F.sigmoid(xm), s, atol=1e-6)
    _close(F.relu(xm), np.maximum(x, 0), atol=1e-6)
    _close(F.silu(xm), x * s, atol=1e-5)
    _close(F.softplus(xm), np.logaddexp(x, 0.0), atol=1e-5)
    erf = np.vectorize(math.erf)(x / math.sqrt(2.0)) if x.size else x
    _close(F.gelu(xm), x * 0.5 * (1 + erf), atol=1e-5)
    _close(F.gelu(xm), mnn.gelu(xm), atol=1e-6)
    _close(F.gelu(xm, approximate=True), mnn.gelu_approx(xm), atol=1e-6)


def test_large_inputs_stay_finite():
    x = mx.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    for fn in (F.sigmoid, F.relu, F.silu, F.softplus, F.gelu,
               lambda v: F.gelu(v, approximate=True)):
        out = fn(x)
        assert np.isfinite(_np(out)).all()
        g = ft.grad(lambda v: fn(v).sum())(x)
        assert np.isfinite(_np(g)).all()
    _close(F.softplus(x), [0.0, 0.0, math.log(2.0), 50.0, 1000.0], atol=1e-6)
    _close(ft.grad(lambda v: F.softplus(v).sum())(x), [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-6)
    _close(F.sigmoid(x), [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-6)


def test_derivatives():
    x = mx.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=mx.float64)
    xn = np.array(x)
    s = 1 / (1 + np.exp(-xn))
    _close(ft.grad(lambda v: F.sigmoid(v).sum())(x), s * (1 - s), rtol=1e-6)
    _close(ft.grad(lambda v: F.silu(v).sum())(x), s + xn * s * (1 - s), rtol=1e-6)
    _close(ft.grad(lambda v: F.softplus(v).sum())(x), s, rtol=1e-6)
    pdf = np.exp(-xn * xn / 2) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(xn / math.sqrt(2)))
    _close(ft.grad(lambda v: F.gelu(v).sum())(x), cdf + xn * pdf, rtol=1e-6)
    # The tanh form against its own central differences.
    eps = 1e-4
    fd = (_np(F.gelu(x + eps, approximate=True)) - _np(F.gelu(x - eps, approximate=True))) / (
        2 * eps)
    _close(ft.grad(lambda v: F.gelu(v, approximate=True).sum())(x), fd, rtol=1e-5, atol=1e-6)
    # Second derivative of sigmoid: s (1 - s) (1 - 2 s).
    _close(ft.grad(lambda v: ft.grad(lambda u: F.sigmoid(u).sum())(v).sum())(x),
           s * (1 - s) * (1 - 2 * s), rtol=1e-5, atol=1e-7)


def test_relu_derivative_at_zero_is_zero():
    x = mx.array([-1.0, 0.0, 1.0])
    _close(ft.grad(lambda v: F.relu(v).sum())(x), [0.0, 0.0, 1.0])
    _, t = ft.jvp(F.relu, (x,), (mx.ones(3),))
    _close(t, [0.0, 0.0, 1.0])


def test_activations_keep_float16():
    x = mx.array([-1.0, 0.5, 2.0], dtype=mx.float16)
    for fn in (F.sigmoid, F.relu, F.gelu, F.silu, F.softplus, F.softmax, F.log_softmax):
        assert fn(x).dtype == mx.float16, fn.__name__
    g = ft.grad(lambda v: F.gelu(v).sum())(x)
    assert g.dtype == mx.float16


def test_gelu_approximate_must_be_a_bool():
    with pytest.raises(TypeError, match=r"gelu: approximate must be True or False, got 'tanh'"):
        F.gelu(mx.ones(2), approximate="tanh")
