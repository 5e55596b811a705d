"""Quantization-aware training: fake quantization against a NumPy version of
PyTorch's definition (round half to even, clamp), its straight-through
gradient, LSQ's step gradient against the paper's formula, jvp against vjp,
vmap and jit against eager, observers against NumPy, calibration, and 4-bit
QAT runs reaching the float model's accuracy."""

import mlx.core as mx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.nn as nn
import ftorch.nn.functional as F
import ftorch.numpy as fnp
import ftorch.random as random
from ftorch import optim


def _np_fake_quantize(x, scale, zero_point, qmin, qmax):
    """PyTorch's fake_quantize_per_*_affine, in NumPy (nearbyint: half to even)."""
    q = np.clip(np.round(x / scale) + zero_point, qmin, qmax)
    return (q - zero_point) * scale


def _np_range(bits, symmetric):
    return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if symmetric else (0, 2 ** bits - 1)


def _np_params(low, high, bits, symmetric):
    """PyTorch's observers' _calculate_qparams, in NumPy."""
    qmin, qmax = _np_range(bits, symmetric)
    low, high = np.minimum(low, 0.0), np.maximum(high, 0.0)
    eps = np.finfo(np.float32).eps
    if symmetric:
        scale = np.maximum(np.maximum(-low, high) / ((qmax - qmin) / 2), eps)
        return scale, 0.0 * low, qmin, qmax
    scale = np.maximum((high - low) / (qmax - qmin), eps)
    return scale, np.clip(qmin - np.round(low / scale), qmin, qmax), qmin, qmax


def _np_lsq_step_grad(x, s, ct, qn, qp, grad_scale):
    """Esser et al. (2019), eq. 3, times the gradient scale, summed against ``ct``."""
    v = x / s
    slope = np.where(v <= -qn, -qn, np.where(v >= qp, qp, np.round(v) - v))
    return ct * slope * grad_scale


arrays = st.integers(1, 4).flatmap(lambda r: st.lists(
    st.floats(-4, 4, allow_nan=False, width=32), min_size=8 * r, max_size=8 * r).map(
        lambda v: np.array(v, np.float32).reshape(r, 8)))

MODES = {"tensor": {}, "channel": {"axis": 0}, "group": {"group_size": 4}}


@given(x=arrays, bits=st.sampled_from([2, 4, 8]), symmetric=st.booleans(),
       mode=st.sampled_from(sorted(MODES)))
def test_fake_quantize_matches_pytorch_semantics(x, bits, symmetric, mode):
    got = np.array(F.fake_quantize(mx.array(x), bits=bits, symmetric=symmetric, **MODES[mode]))
    blocks = {"tensor": x.reshape(1, -1), "channel": x, "group": x.reshape(-1, 4)}[mode]
    scale, zp, qmin, qmax = _np_params(blocks.min(1, keepdims=True),
                                       blocks.max(1, keepdims=True), bits, symmetric)
    expected = _np_fake_quantize(blocks, scale, zp, qmin, qmax).reshape(x.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_rounding_is_half_to_even_and_given_scales_follow_pytorch_layouts():
    halves = mx.array([0.5, 1.5, 2.5, -0.5, -2.5])
    assert F.fake_quantize(halves, scale=1.0).tolist() == [0.0, 2.0, 2.0, 0.0, -2.0]
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 6)).astype(np.float32) * 3
    # Per channel along axis 1, PyTorch's (C,) scale and zero point, unsigned 4 bits.
    scale, zp = np.array([0.1, 0.5, 1.0, 2.0], np.float32), np.array([0, 3, 8, 15], np.float32)
    got = F.fake_quantize(mx.array(x), bits=4, symmetric=False, axis=1, scale=mx.array(scale),
                          zero_point=mx.array(zp))
    expected = _np_fake_quantize(x, scale[:, None], zp[:, None], 0, 15)
    np.testing.assert_allclose(np.array(got), expected, rtol=1e-6, atol=1e-6)
    # Per group of 3 along the last axis: mx.quantize's (..., groups) scales.
    scale = rng.uniform(0.1, 1.0, size=(3, 4, 2)).astype(np.float32)
    got = F.fake_quantize(mx.array(x), bits=3, group_size=3, scale=mx.array(scale))
    expected = _np_fake_quantize(x.reshape(3, 4, 2, 3), scale[..., None], 0, -4, 3)
    np.testing.assert_allclose(np.array(got), expected.reshape(x.shape), rtol=1e-6, atol=1e-6)


def test_straight_through_gradient_is_the_in_range_mask():
    x = mx.array([-3.0, -0.4, 0.0, 0.7, 1.9, 2.5])
    scale, zp = mx.array(0.5), mx.array(2.0)  # unsigned 3 bits: [0, 7] -> x in [-1, 2.5]
    f = lambda x: F.fake_quantize(x, bits=3, symmetric=False, scale=scale, zero_point=zp)
    assert ft.grad(lambda x: fnp.sum(f(x) * fnp.arange(6.0)))(x).tolist() == [
        0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    _, tangent = ft.jvp(f, (x,), (mx.ones(6),))
    assert tangent.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert f(x).tolist() == [-1.0, -0.5, 0.0, 0.5, 2.0, 2.5]
    # Nothing flows to a given scale or zero point, and inf saturates without NaNs.
    assert ft.grad(lambda s: fnp.sum(F.fake_quantize(x, scale=s)))(mx.array(0.5)).item() == 0
    edge = mx.array([float("inf"), -float("inf"), 1.0])
    assert F.fake_quantize(edge, bits=4, scale=0.5).tolist() == [3.5, -4.0, 1.0]
    assert ft.grad(lambda x: fnp.sum(F.fake_quantize(x, bits=4, scale=0.5)))(edge).tolist() == \
        [0.0, 0.0, 1.0]


def test_lsq_step_gradient_follows_the_paper():
    rng = np.random.default_rng(0)
    x, s, bits = rng.normal(size=50).astype(np.float32) * 2, 0.3, 4
    qn, qp = 2 ** (bits - 1), 2 ** (bits - 1) - 1
    v = x / s
    ct = rng.normal(size=50).astype(np.float32)
    expected = _np_lsq_step_grad(x, s, ct, qn, qp, 1 / np.sqrt(50 * qp)).sum()
    grad_s = ft.grad(lambda s: fnp.sum(F.fake_quantize_lsq(mx.array(x), s, bits=bits)
                                       * mx.array(ct)))(mx.array(s))
    assert grad_s.item() == pytest.approx(float(expected), rel=1e-4)
    grad_x = ft.grad(lambda x: fnp.sum(F.fake_quantize_lsq(x, mx.array(s), bits=bits)))(
        mx.array(x))
    assert np.array(grad_x).tolist() == ((v > -qn) & (v < qp)).astype(np.float32).tolist()
    out = F.fake_quantize_lsq(mx.array(x), mx.array(s), bits=bits)
    np.testing.assert_allclose(np.array(out), np.clip(np.round(v), -qn, qp) * s, rtol=1e-6)


def test_lsq_per_channel_step_gradient_and_unsigned_range():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(5, 12)).astype(np.float32)
    steps = rng.uniform(0.1, 0.4, size=5).astype(np.float32)
    ct = rng.normal(size=(5, 12)).astype(np.float32)
    qp = 127
    grad = ft.grad(lambda s: fnp.sum(F.fake_quantize_lsq(mx.array(w), s, axis=0)
                                     * mx.array(ct)))(mx.array(steps))
    expected = _np_lsq_step_grad(w, steps[:, None], ct, 128, qp, 1 / np.sqrt(12 * qp)).sum(1)
    np.testing.assert_allclose(np.array(grad), expected, rtol=1e-4, atol=1e-6)
    # Unsigned (LSQ's choice after a ReLU): Q_n = 0, Q_p = 2^b - 1; no gradient scale.
    a = rng.uniform(-1, 8, size=40).astype(np.float32)
    grad = ft.grad(lambda s: fnp.sum(F.fake_quantize_lsq(mx.array(a), s, bits=3,
                                                         symmetric=False, grad_scale=1.0)))(
        mx.array(0.5))
    assert grad.item() == pytest.approx(_np_lsq_step_grad(a, 0.5, 1.0, 0, 7, 1.0).sum(),
                                        rel=1e-5)


def _pairing(f, primal, rng):
    """<ct, jvp(t)> and <vjp(ct), t> for random t and ct."""
    t = mx.array(rng.normal(size=primal.shape).astype(np.float32))
    out, tangent = ft.jvp(f, (primal,), (t,))
    ct = mx.array(rng.normal(size=out.shape).astype(np.float32))
    (cotangent,) = ft.vjp(f, primal)[1](ct)
    return fnp.sum(ct * tangent).item(), fnp.sum(cotangent * t).item()


@pytest.mark.parametrize("mode", sorted(MODES))
def test_jvp_agrees_with_vjp(mode):
    rng = np.random.default_rng(4)
    x = mx.array(rng.normal(size=(4, 8)).astype(np.float32) * 2)
    scale = {"tensor": 0.2, "channel": mx.array([0.1, 0.2, 0.3, 0.4]),
             "group": mx.full((4, 2), 0.25)}[mode]
    for f in (lambda x: F.fake_quantize(x, bits=4, **MODES[mode]),
              lambda x: F.fake_quantize(x, bits=4, scale=scale, **MODES[mode])):
        forward, backward = _pairing(f, x, rng)
        assert forward == pytest.approx(backward, rel=1e-5, abs=1e-6)
    for f in (lambda x: F.fake_quantize_lsq(x, mx.array(0.2), bits=4),
              lambda s: F.fake_quantize_lsq(x, s, bits=4, axis=0)):
        primal = x if f.__code__.co_varnames[0] == "x" else mx.array([0.1, 0.2, 0.3, 0.4])
        forward, backward = _pairing(f, primal, rng)
        assert forward == pytest.approx(backward, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_vmap_and_jit_agree_with_eager(mode):
    x = mx.random.normal((3, 4, 8), key=mx.random.key(0))
    f = lambda x: F.fake_quantize(x, bits=4, **MODES[mode])
    loop = mx.stack([f(x[i]) for i in range(3)])
    assert mx.array_equal(ft.vmap(f)(x), loop)
    assert mx.array_equal(ft.jit(f)(x[0]), f(x[0]))
    g = ft.grad(lambda x: fnp.sum(f(x) ** 2))
    assert mx.array_equal(ft.vmap(g)(x), mx.stack([g(x[i]) for i in range(3)]))
    assert mx.array_equal(ft.jit(g)(x[0]), g(x[0]))
    # A batch of given scales, and LSQ's step gradient, batched and compiled.
    scales = mx.array([0.1, 0.3, 0.7])
    h = lambda s: F.fake_quantize(x[0], bits=4, scale=s)
    assert mx.array_equal(ft.vmap(h)(scales), mx.stack([h(s) for s in scales]))
    lsq = ft.grad(lambda s: fnp.sum(F.fake_quantize_lsq(x[0], s, bits=4) ** 2))
    batched = ft.vmap(lsq)(scales)
    assert mx.allclose(batched, mx.stack([lsq(s) for s in scales]), rtol=1e-5)
    assert mx.allclose(ft.jit(lsq)(scales[1]), lsq(scales[1]), rtol=1e-5)


def test_observers_against_numpy():
    rng = np.random.default_rng(1)
    batches = [rng.normal(size=(64, 4)).astype(np.float32) * (i + 1) for i in range(3)]
    mm, ma = nn.MinMaxObserver(), nn.MovingAverageMinMaxObserver(0.1)
    s_mm, s_ma = mm.init(), ma.init()
    for b in batches:
        s_mm, s_ma = mm.update(s_mm, mx.array(b)), ft.jit(ma.update)(s_ma, mx.array(b))
    everything = np.concatenate(batches)
    assert [v.item() for v in mm.range(s_mm)] == [everything.min(), everything.max()]
    high = batches[0].max()
    for b in batches[1:]:
        high = high + 0.1 * (b.max() - high)
    assert s_ma["high"].item() == pytest.approx(high, rel=1e-6)
    scale, zp = ma.calculate_qparams(s_ma, bits=8)
    expected = _np_params(s_ma["low"].item(), s_ma["high"].item(), 8, False)
    assert (scale.item(), zp.item()) == pytest.approx(expected[:2], rel=1e-6)
    per_channel = nn.MinMaxObserver(axis=1)
    state = per_channel.update(per_channel.init(batches[0]), mx.array(batches[0]))
    np.testing.assert_array_equal(np.array(state["high"]), batches[0].max(0))
    before = nn.MinMaxObserver().init()
    assert [v.item() for v in mm.calculate_qparams(before)] == [1.0, 0.0]  # as PyTorch


def test_percentile_observer_against_numpy_percentile():
    rng = np.random.default_rng(5)
    # Heavy tails and a range that grows batch by batch (so the histogram is re-binned).
    batches = [rng.standard_t(3, size=(128, 32)).astype(np.float32) * (1 + i / 2)
               for i in range(5)]
    everything = np.concatenate([b.ravel() for b in batches])
    observer = nn.PercentileObserver(99.0)
    update, state = ft.jit(observer.update), observer.init()
    assert [v.item() for v in observer.range(state)] == [np.inf, -np.inf]
    for b in batches:
        state = update(state, mx.array(b))
    low, high = observer.range(state)
    bin_width = float(everything.max() - everything.min()) / observer.bins
    assert low.item() == pytest.approx(np.percentile(everything, 1.0), abs=2 * bin_width)
    assert high.item() == pytest.approx(np.percentile(everything, 99.0), abs=2 * bin_width)
    assert fnp.sum(state["histogram"]).item() == pytest.approx(everything.size, rel=1e-6)
    eager = observer.init()
    for b in batches:
        eager = observer.update(eager, mx.array(b))
    assert mx.allclose(observer.range(eager)[1], high)
    constant = observer.update(observer.init(), mx.full((10,), 3.0))
    assert [v.item() for v in observer.range(constant)] == [3.0, 3.0]


def test_calibration_fills_the_state_and_quantizes_inputs():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    params, _ = model.init(random.key(0), mx.zeros((1, 8)))
    qmodel, qparams, qstate = nn.qat(model, params, weight_bits=8, input_bits=8)
    batches = [mx.random.normal((32, 8), key=mx.random.key(i)) for i in range(3)]
    # Before calibration the inputs pass through (only the weights are quantized).
    uncalibrated, _ = qmodel.apply(qparams, qstate, batches[0])
    weights_only, _ = nn.qat(model, params, weight_bits=8)[0].apply(qparams, {}, batches[0])
    assert mx.array_equal(uncalibrated, weights_only)
    qstate = nn.calibrate(qmodel, qparams, qstate, batches)
    ranges = nn.observed_ranges(qmodel, qstate)
    assert ranges["layers.0"][1].item() == max(b.max().item() for b in batches)
    assert ranges["layers.2"][0].item() == 0.0  # after a ReLU
    y, same = qmodel.apply(qparams, qstate, batches[0])  # evaluation: the state is read only
    assert all(bool(mx.array_equal(a, b))
               for a, b in zip(ft.tree.leaves(same), ft.tree.leaves(qstate)))
    np.testing.assert_allclose(np.array(y), np.array(model(params, batches[0])), atol=0.05)


def test_fake_quantize_layer_and_qat_keep_the_models_state():
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm(8), nn.ReLU(),
                          nn.FakeQuantize(bits=4, observer=nn.PercentileObserver(99.0)),
                          nn.Linear(8, 2))
    x = mx.random.normal((64, 4), key=mx.random.key(3))
    params, state = model.init(random.key(0), x)
    qmodel, qparams, qstate = nn.qat(model, params, state, input_bits=8)
    assert qstate["layers"][1].keys() == state["layers"][1].keys()  # BatchNorm's, kept
    y, trained = ft.jit(lambda p, s: qmodel.apply(p, s, x, train=True))(qparams, qstate)
    ranges = nn.observed_ranges(qmodel, trained)
    assert sorted(ranges) == ["layers.0", "layers.3", "layers.4"]
    low, high = ranges["layers.3"]
    bin_width = high.item() / qmodel.layers[3].observer.bins
    assert 0.0 <= low.item() <= bin_width < high.item()  # the 1st percentile of ReLU outputs
    # The FakeQuantize's output lies on its 4-bit grid: at most 16 distinct values.
    hidden = nn.Sequential(*qmodel.layers[:4]).apply(
        {"layers": qparams["layers"][:4]}, {"layers": trained["layers"][:4]}, x)[0]
    assert len(np.unique(np.array(hidden))) <= 16
    assert not mx.array_equal(trained["layers"][1]["running_mean"],
                              qstate["layers"][1]["running_mean"])


@pytest.mark.parametrize("learn_step", [False, True])
def test_quantization_aware_training_at_4_bits_reaches_float_accuracy(learn_step):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 16)).astype(np.float32)
    labels = mx.array(np.argmax(x[:, :4] @ rng.normal(size=(4, 4)), axis=1))
    x = mx.array(x)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    params, _ = model.init(random.key(0), x[:1])
    qmodel, qparams, qstate = nn.qat(model, params, weight_bits=4, learn_step=learn_step)
    opt = optim.adam(1e-2)

    def train(m, p):
        state = opt.init(p)

        @ft.jit
        def step(p, state):
            grads = ft.grad(lambda p: fnp.mean(nn.losses.cross_entropy(m(p, x), labels)))(p)
            updates, state = opt.update(grads, state, p)
            return optim.apply_updates(p, updates), state

        for _ in range(200):
            p, state = step(p, state)
        return float(fnp.mean(fnp.argmax(m(p, x), axis=-1) == labels)), p

    (full, _), (quantized, trained) = train(model, params), train(qmodel, qparams)
    assert quantized > 0.9 and quantized > full - 0.05, (full, quantized)
    if learn_step:  # the steps were trained
        assert not mx.allclose(trained["layers"][0]["weight_step"],
                               qparams["layers"][0]["weight_step"])


def test_bad_arguments_name_the_argument():
    x = mx.ones((4, 6))
    with pytest.raises(ValueError, match=r"bits must be an int in \[2, 16\], got 1"):
        F.fake_quantize(x, bits=1)
    with pytest.raises(ValueError, match="bits must be an int"):
        F.fake_quantize(x, bits=True)
    with pytest.raises(ValueError, match="group_size must be a positive int dividing"):
        F.fake_quantize(x, group_size=4)
    with pytest.raises(ValueError, match="give axis .* or group_size .*, not both"):
        F.fake_quantize(x, axis=0, group_size=2)
    with pytest.raises(ValueError, match="axis"):
        F.fake_quantize(x, axis=3)
    with pytest.raises(ValueError, match="scale must be positive"):
        F.fake_quantize(x, scale=mx.array(0.0))
    with pytest.raises(ValueError, match="scale must be positive"):
        F.fake_quantize(x, axis=0, scale=mx.array([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=r"scale must have shape \(4,\)"):
        F.fake_quantize(x, axis=0, scale=mx.ones(6))
    with pytest.raises(ValueError, match=r"scale must have shape \(4, 3\)"):
        F.fake_quantize(x, group_size=2, scale=mx.ones(4))
    with pytest.raises(ValueError, match=r"zero_point must hold integers in \[0, 255\]"):
        F.fake_quantize(x, symmetric=False, scale=1.0, zero_point=256.0)
    with pytest.raises(ValueError, match="zero_point must hold integers"):
        F.fake_quantize(x, symmetric=False, scale=1.0, zero_point=0.5)
    with pytest.raises(ValueError, match="zero_point needs scale"):
        F.fake_quantize(x, zero_point=0.0)
    with pytest.raises(TypeError, match="x must be floating"):
        F.fake_quantize(mx.ones(3, mx.int32))
    with pytest.raises(ValueError, match="step must be positive"):
        F.fake_quantize_lsq(x, mx.array(-0.1))
    with pytest.raises(ValueError, match="step must be a scalar without axis"):
        F.fake_quantize_lsq(x, mx.ones((4, 1)))
    with pytest.raises(ValueError, match="fake_quantize_lsq: bits"):
        F.fake_quantize_lsq(x, mx.array(0.1), bits=17)
    with pytest.raises(ValueError, match="group_size=4 must divide input_dims=6"):
        nn.QATLinear(nn.Linear(6, 2), group_size=4)
    with pytest.raises(ValueError, match="QATLinear: bits"):
        nn.QATLinear(nn.Linear(6, 2), input_bits=20)
    with pytest.raises(ValueError, match="percentile must be in"):
        nn.PercentileObserver(20.0)
    with pytest.raises(ValueError, match="bins must be a positive int"):
        nn.PercentileObserver(bins=0)
    with pytest.raises(ValueError, match="momentum must be in"):
        nn.MovingAverageMinMaxObserver(momentum=0.0)
    with pytest.raises(ValueError, match="init needs x"):
        nn.MinMaxObserver(axis=0).init()
    with pytest.raises(ValueError, match="observer must be per tensor"):
        nn.qat(nn.Linear(2, 2), {}, input_bits=8, observer=nn.MinMaxObserver(axis=-1))
