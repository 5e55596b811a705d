"""Quantization-aware training: fake quantization against a NumPy version of
PyTorch's definition (round half to even, clamp), its straight-through
gradient, LSQ's step gradient against the paper's formula, jvp/vmap/jit
against eager, observers against NumPy, calibration, and a 4-bit QAT run
reaching the float model's accuracy."""

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


def _np_params(low, high, bits, symmetric):
    """PyTorch's observers' _calculate_qparams, in NumPy."""
    qmin, qmax = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if symmetric else (0, 2 ** bits - 1)
    low, high = np.minimum(low, 0.0), np.maximum(high, 0.0)
    eps = np.finfo(np.float32).eps
    if symmetric:
        return np.maximum(np.maximum(-low, high) / ((qmax - qmin) / 2), eps), 0.0 * low, qmin, \
            qmax
    scale = np.maximum((high - low) / (qmax - qmin), eps)
    return scale, np.clip(qmin - np.round(low / scale), qmin, qmax), qmin, qmax


arrays = st.integers(1, 4).flatmap(lambda r: st.lists(
    st.floats(-4, 4, allow_nan=False, width=32), min_size=8 * r, max_size=8 * r).map(
        lambda v: np.array(v, np.float32).reshape(r, 8)))


@given(x=arrays, bits=st.sampled_from([2, 4, 8]), symmetric=st.booleans(),
       mode=st.sampled_from(["tensor", "channel", "group"]))
def test_fake_quantize_matches_pytorch_semantics(x, bits, symmetric, mode):
    kw = {"tensor": {}, "channel": {"axis": 0}, "group": {"group_size": 4}}[mode]
    got = np.array(F.fake_quantize(mx.array(x), bits=bits, symmetric=symmetric, **kw))
    if mode == "tensor":
        xs, keep = x.reshape(1, -1), x.shape
    elif mode == "channel":
        xs, keep = x, x.shape
    else:
        xs, keep = x.reshape(-1, 4), x.shape
    scale, zp, qmin, qmax = _np_params(xs.min(1, keepdims=True), xs.max(1, keepdims=True), bits,
                                       symmetric)
    expected = _np_fake_quantize(xs, scale, zp, qmin, qmax).reshape(keep)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_straight_through_gradient_is_the_in_range_mask():
    x = mx.array([-3.0, -0.4, 0.0, 0.7, 1.9, 2.5])
    scale, zp = mx.array(0.5), mx.array(2.0)  # unsigned 3 bits: [0, 7] -> x in [-1, 2.5]
    f = lambda x: F.fake_quantize(x, bits=3, symmetric=False, scale=scale, zero_point=zp)
    assert ft.grad(lambda x: fnp.sum(f(x) * fnp.arange(6.0)))(x).tolist() == [
        0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    _, tangent = ft.jvp(f, (x,), (mx.ones(6),))
    assert tangent.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert f(x).tolist() == [-1.0, -0.5, 0.0, 0.5, 2.0, 2.5]


def test_lsq_step_gradient_follows_the_paper():
    rng = np.random.default_rng(0)
    x, s, bits = rng.normal(size=50).astype(np.float32) * 2, 0.3, 4
    qn, qp = 2 ** (bits - 1), 2 ** (bits - 1) - 1
    v = x / s
    # Esser et al. (2019), eq. 3, times the gradient scale 1 / sqrt(N * Q_p).
    slope = np.where(v <= -qn, -qn, np.where(v >= qp, qp, np.round(v) - v))
    ct = rng.normal(size=50).astype(np.float32)
    expected = np.sum(ct * slope) / np.sqrt(50 * qp)
    grad_s = ft.grad(lambda s: fnp.sum(F.fake_quantize_lsq(mx.array(x), s, bits=bits)
                                       * mx.array(ct)))(mx.array(s))
    assert grad_s.item() == pytest.approx(float(expected), rel=1e-4)
    grad_x = ft.grad(lambda x: fnp.sum(F.fake_quantize_lsq(x, mx.array(s), bits=bits)))(
        mx.array(x))
    assert np.array(grad_x).tolist() == ((v > -qn) & (v < qp)).astype(np.float32).tolist()
    out = F.fake_quantize_lsq(mx.array(x), mx.array(s), bits=bits)
    np.testing.assert_allclose(np.array(out), np.clip(np.round(v), -qn, qp) * s, rtol=1e-6)


def test_vmap_and_jit_agree_with_eager():
    x = mx.random.normal((3, 4, 8), key=mx.random.key(0))
    f = lambda x: F.fake_quantize(x, bits=4, axis=0)
    loop = mx.stack([f(x[i]) for i in range(3)])
    assert mx.array_equal(ft.vmap(f)(x), loop)
    assert mx.array_equal(ft.jit(f)(x[0]), f(x[0]))
    g = ft.vmap(ft.grad(lambda x: fnp.sum(f(x) ** 2)))(x)
    assert mx.allclose(g, mx.stack([ft.grad(lambda x: fnp.sum(f(x) ** 2))(x[i])
                                    for i in range(3)]))


def test_observers_against_numpy():
    rng = np.random.default_rng(1)
    batches = [rng.normal(size=(64, 4)).astype(np.float32) * (i + 1) for i in range(3)]
    mm, ma, pc = nn.MinMaxObserver(), nn.MovingAverageMinMaxObserver(0.1), \
        nn.PercentileObserver(99.0)
    s_mm, s_ma, s_pc = mm.init(), ma.init(), pc.init()
    for b in batches:
        s_mm, s_ma, s_pc = mm.update(s_mm, mx.array(b)), ma.update(s_ma, mx.array(b)), \
            pc.update(s_pc, mx.array(b))
    all_ = np.concatenate(batches)
    assert s_mm["low"].item() == all_.min() and s_mm["high"].item() == all_.max()
    high = batches[0].max()
    for b in batches[1:]:
        high = high + 0.1 * (b.max() - high)
    assert s_ma["high"].item() == pytest.approx(high, rel=1e-6)
    expected = np.mean([np.percentile(b, 99.0) for b in batches])
    assert s_pc["high"].item() == pytest.approx(expected, rel=1e-5)
    per_channel = nn.MinMaxObserver(axis=1).update(nn.MinMaxObserver(axis=1).init(),
                                                   mx.array(batches[0]))
    np.testing.assert_array_equal(np.array(per_channel["high"]), batches[0].max(0))


def test_calibration_fills_the_state_and_quantizes_inputs():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    params, _ = model.init(random.key(0), mx.zeros((1, 8)))
    qmodel, qparams, qstate = nn.qat(model, params, weight_bits=8, input_bits=8)
    batches = [mx.random.normal((32, 8), key=mx.random.key(i)) for i in range(3)]
    qstate = nn.calibrate(qmodel, qparams, qstate, batches)
    seen = qstate["layers"][0]["input"]
    assert seen["high"].item() == max(b.max().item() for b in batches)
    assert qstate["layers"][2]["input"]["low"].item() == 0.0  # after a ReLU
    y, same = qmodel.apply(qparams, qstate, batches[0])  # evaluation: the state is read only
    assert all(bool(mx.array_equal(a, b))
               for a, b in zip(ft.tree.leaves(same), ft.tree.leaves(qstate)))
    np.testing.assert_allclose(np.array(y), np.array(model(params, batches[0])), atol=0.05)


def test_quantization_aware_training_at_4_bits_reaches_float_accuracy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(512, 16)).astype(np.float32)
    labels = mx.array(np.argmax(x[:, :4] @ rng.normal(size=(4, 4)), axis=1))
    x = mx.array(x)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    params, _ = model.init(random.key(0), x[:1])
    qmodel, qparams, qstate = nn.qat(model, params, weight_bits=4)
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
        return float(fnp.mean(fnp.argmax(m(p, x), axis=-1) == labels))

    full, quantized = train(model, params), train(qmodel, qparams)
    assert quantized > 0.9 and quantized > full - 0.05, (full, quantized)


def test_bad_fake_quantize_arguments():
    x = mx.ones((4, 6))
    with pytest.raises(ValueError, match=r"bits must be an int in \[2, 16\]"):
        F.fake_quantize(x, bits=1)
    with pytest.raises(ValueError, match="group_size must be a positive int dividing"):
        F.fake_quantize(x, group_size=4)
    with pytest.raises(ValueError, match="axis"):
        F.fake_quantize(x, axis=3)
    with pytest.raises(ValueError, match="scale must be positive"):
        F.fake_quantize(x, scale=mx.array(0.0))
    with pytest.raises(TypeError, match="x must be floating"):
        F.fake_quantize(mx.ones(3, mx.int32))
    with pytest.raises(ValueError, match="group_size=4 must divide input_dims=6"):
        nn.QATLinear(nn.Linear(6, 2), group_size=4)
    with pytest.raises(ValueError, match="percentile must be in"):
        nn.PercentileObserver(20.0)
