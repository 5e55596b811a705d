"""ftorch.nn.functional's activations, one_hot, dropout, normalisations and
attention: values against mlx.nn / mlx.core.fast / NumPy, gradients against
mx.grad (or float64 finite differences), vmap against a loop, jit against
eager, errors. (softmax and the primitive activations: tests/test_functional.py.)"""

import math

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from harness import check_jvp_fd, check_vjp_dot, compiler_off, floats, shapes
from harness import close as _close
from hypothesis import given

import ftorch as ft
import ftorch.nn.functional as F
import ftorch.random as random

_np = np.array
_LOOSE = dict(eps=1e-3, rtol=1e-3, atol=1e-4)


def _f32(x):
    return mx.array(np.asarray(x, dtype=np.float32))


# ----------------------------------------------------------------------------
# Activations
# ----------------------------------------------------------------------------

# (name, ftorch function, mlx.nn function): same arguments, same values.
ACTIVATIONS = [
    ("elu", F.elu, mnn.elu),
    ("elu_alpha", lambda x: F.elu(x, 0.5), lambda x: mnn.elu(x, 0.5)),
    ("celu", lambda x: F.celu(x, 1.5), lambda x: mnn.celu(x, 1.5)),
    ("selu", F.selu, mnn.selu),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: mnn.leaky_relu(x, 0.2)),
    ("prelu", lambda x: F.prelu(x, mx.array(0.3)), lambda x: mnn.prelu(x, mx.array(0.3))),
    ("relu6", F.relu6, mnn.relu6),
    ("relu2", F.relu2, mnn.relu2),
    ("hard_tanh", lambda x: F.hard_tanh(x, -0.5, 2.0), lambda x: mnn.hard_tanh(x, -0.5, 2.0)),
    ("hardswish", F.hardswish, mnn.hardswish),
    ("mish", F.mish, mnn.mish),
    ("log_sigmoid", F.log_sigmoid, mnn.log_sigmoid),
    ("softsign", F.softsign, mnn.softsign),
    ("softshrink", lambda x: F.softshrink(x, 0.7), lambda x: mnn.softshrink(x, 0.7)),
    ("hard_shrink", F.hard_shrink, mnn.hard_shrink),
    ("softmin", F.softmin, mnn.softmin),
    ("gelu_approx", F.gelu_approx, mnn.gelu_approx),
    ("gelu_fast_approx", F.gelu_fast_approx, mnn.gelu_fast_approx),
    ("tanh", F.tanh, mnn.tanh),
    ("glu", F.glu, mnn.glu),
]
_IDS = [a[0] for a in ACTIVATIONS]


def test_all_is_complete():
    for name in F.__all__:
        assert callable(getattr(F, name)), name
    assert F.hard_swish is F.hardswish


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=_IDS)
@given(x=floats(shapes(min_dims=1).map(lambda s: s[:-1] + (2 * s[-1],)), -7.0, 7.0))
def test_activations_match_mlx(name, fn, ref, x):
    xm = _f32(x)
    got = fn(xm)
    assert got.dtype == mx.float32 and isinstance(got, mx.array)
    _close(got, ref(xm), rtol=1e-5, atol=1e-6)


@given(x=floats(shapes(), -7.0, 7.0))
def test_hard_sigmoid_and_step_match_formulas(x):
    xm = _f32(x)
    _close(F.hard_sigmoid(xm), np.clip(x + 3, 0, 6) / 6, atol=1e-6)
    step = F.step(xm, 0.5)
    assert step.dtype == mx.int32
    _close(step, (x.astype(np.float32) >= 0.5).astype(np.int32))
    _close(F.step(xm, 0.5), mnn.step(xm, 0.5))


# Points away from every activation's kinks (0, +-0.5, +-0.7, +-1, +-3, 6...).
_SMOOTH_POINTS = np.array([-6.3, -3.7, -2.2, -1.3, -0.85, -0.2, 0.15, 0.6, 0.9, 1.6, 2.4,
                           4.1, 6.6, 8.0], dtype=np.float32)


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=_IDS)
def test_activation_gradients_match_mx_grad(name, fn, ref):
    x = mx.array(_SMOOTH_POINTS)
    w = mx.array(np.linspace(-1.0, 2.0, x.size, dtype=np.float32)[: x.size // 2 if name == "glu"
                                                                  else x.size])
    got = ft.grad(lambda v: (fn(v) * w).sum())(x)
    expected = mx.grad(lambda v: (ref(v) * w).sum())(x)
    _close(got, expected, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("fn", [F.selu, F.mish, F.log_sigmoid, F.softsign, F.gelu_fast_approx,
                                lambda x: F.celu(x, 0.7)], ids=["selu", "mish", "log_sigmoid",
                                                                "softsign", "gelu_fast", "celu"])
def test_activation_derivatives_float64(fn):
    # MLX's CPU float64 exp and tanh are only float32-accurate: wide steps.
    x = (mx.array([-2.3, -0.4, 0.3, 1.7], dtype=mx.float64),)
    check_jvp_fd(fn, x, **_LOOSE)
    check_vjp_dot(fn, x)
    # Second order: the gradient map against its own finite differences.
    check_jvp_fd(ft.grad(lambda v: fn(v).sum()), x, **_LOOSE)


def test_activations_stay_finite_for_large_inputs():
    x = mx.array([-1000.0, -80.0, 0.0, 80.0, 1000.0])
    for fn in (F.elu, F.celu, F.selu, F.mish, F.log_sigmoid, F.softsign, F.gelu_approx,
               F.gelu_fast_approx, F.hardswish, F.leaky_relu):
        assert np.isfinite(_np(fn(x))).all(), fn.__name__
        g = ft.grad(lambda v, fn=fn: fn(v).sum())(x)
        assert np.isfinite(_np(g)).all(), fn.__name__
    # log_sigmoid is exact at both ends: about x far left, 0 far right, and
    # its derivative sigmoid(-x) is 1 and 0 there.
    _close(F.log_sigmoid(x), [-1000.0, -80.0, -math.log(2.0), 0.0, 0.0], atol=1e-6)
    _close(ft.grad(lambda v: F.log_sigmoid(v).sum())(x), [1.0, 1.0, 0.5, 0.0, 0.0], atol=1e-6)
    # elu's negative branch is expm1: exact near 0.
    _close(F.elu(mx.array([-1e-7], dtype=mx.float32)), [-1e-7], rtol=1e-6)


def test_leaky_relu_any_slope_and_kink_derivative():
    x = mx.array([-2.0, 0.0, 3.0])
    _close(F.leaky_relu(x, negative_slope=2.0), [-4.0, 0.0, 3.0])
    _close(ft.grad(lambda v: F.leaky_relu(v).sum())(x), [0.01, 1.0, 1.0])


def test_activations_keep_low_precision():
    for dtype in (mx.float16, mx.bfloat16):
        x = mx.array([-1.5, 0.5, 2.0, 4.0], dtype=dtype)
        for name, fn, _ in ACTIVATIONS:
            if name != "prelu":  # its float32 alpha promotes
                assert fn(x).dtype == dtype, name
        assert F.prelu(x, mx.array(0.3, dtype)).dtype == dtype
        assert F.hard_sigmoid(x).dtype == dtype
        assert ft.grad(lambda v: F.mish(v).sum())(x).dtype == dtype


def test_glu_errors_and_axis():
    x = mx.arange(12, dtype=mx.float32).reshape(4, 3)
    _close(F.glu(x, axis=0), _np(mnn.glu(x, axis=0)))
    with pytest.raises(ValueError, match=r"glu: x must have an even size along axis -1"):
        F.glu(x)
    with pytest.raises(ValueError, match=r"glu: axis 2 is out of range"):
        F.glu(x, axis=2)
    with pytest.raises(ValueError, match=r"glu: x must have at least one axis"):
        F.glu(mx.array(1.0))


def test_activations_under_vmap_and_jit():
    x = mx.array(np.random.default_rng(0).standard_normal((3, 4, 6)).astype(np.float32))

    def f(v):
        return F.glu(F.mish(v) + F.selu(v) * F.softmin(v) + F.log_sigmoid(v))

    loop = mx.stack([f(x[i]) for i in range(3)])
    _close(ft.vmap(f)(x), loop, rtol=1e-6)
    _close(ft.vmap(f, in_axes=1, out_axes=1)(x), mx.stack([f(x[:, i]) for i in range(4)], 1),
           rtol=1e-6)
    _close(ft.jit(f)(x), f(x), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------
# one_hot
# ----------------------------------------------------------------------------


@given(x=floats(shapes(max_dims=2), -2.0, 6.0))
def test_one_hot_matches_numpy(x):
    labels = np.floor(x).astype(np.int32)
    got = F.one_hot(mx.array(labels), 5)
    assert got.dtype == mx.float32
    _close(got, (labels[..., None] == np.arange(5)).astype(np.float32))


def test_one_hot_out_of_range_axis_dtype():
    y = F.one_hot(mx.array([[-1, 0], [3, 2]]), 3, dtype=mx.int32, axis=0)
    assert y.dtype == mx.int32 and y.shape == (3, 2, 2)
    expected = (np.array([[-1, 0], [3, 2]])[None] == np.arange(3)[:, None, None]).astype(int)
    _close(y, expected)
    assert F.one_hot(mx.array(7, mx.uint8), 4).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert F.one_hot(mx.array([1]), 3, "bfloat16").dtype == mx.bfloat16
    # Under vmap and jit the labels may be traced.
    labels = mx.array([[0, 1], [2, 5]])
    _close(ft.vmap(lambda a: F.one_hot(a, 3))(labels), F.one_hot(labels, 3))
    _close(ft.jit(lambda a: F.one_hot(a, 3))(labels), F.one_hot(labels, 3))


def test_one_hot_errors():
    with pytest.raises(TypeError, match=r"one_hot: x must hold integer class labels, got "
                                        r"dtype mlx.core.float32"):
        F.one_hot(mx.array([1.0]), 3)
    with pytest.raises(ValueError, match=r"one_hot: num_classes must not be negative"):
        F.one_hot(mx.array([1]), -1)
    with pytest.raises(TypeError, match=r"one_hot: num_classes must be an int"):
        F.one_hot(mx.array([1]), 2.5)
    with pytest.raises(ValueError, match=r"one_hot: axis 2 is out of range"):
        F.one_hot(mx.array([1]), 3, axis=2)


# ----------------------------------------------------------------------------
# dropout
# ----------------------------------------------------------------------------


def test_dropout_mask_scale_and_statistics():
    x = mx.arange(1, 20001, dtype=mx.float32) / 1000
    k = random.key(3)
    y = _np(F.dropout(x, 0.3, key=k))
    kept = y != 0
    # Kept entries are scaled by 1 / (1 - rate); about 70% are kept.
    _close(y[kept], _np(x)[kept] / 0.7, rtol=1e-6)
    assert abs(kept.mean() - 0.7) < 0.02
    # The expectation is x: the mean over many entries of y / x is about 1.
    assert abs((y / _np(x)).mean() - 1.0) < 0.03
    # The mask is Bernoulli(1 - rate) from the key.
    _close(kept, _np(random.bernoulli(k, 0.7, x.shape)))


def test_dropout_keys():
    x = mx.ones((64,))
    k1, k2 = random.split(random.key(0))
    a, b = F.dropout(x, 0.5, key=k1), F.dropout(x, 0.5, key=k1)
    assert mx.array_equal(a, b)
    assert not mx.array_equal(a, F.dropout(x, 0.5, key=k2))


def test_dropout_edge_rates_and_dtype():
    x = mx.array([1.0, -2.0, 3.0], dtype=mx.float16)
    k = random.key(0)
    assert F.dropout(x, 0.0, key=k) is x
    y = F.dropout(x, 1.0, key=k)
    assert y.dtype == mx.float16 and y.tolist() == [0.0, 0.0, 0.0]
    assert F.dropout(x, 0.5, key=k).dtype == mx.float16
    assert F.dropout(x, np.float64(0.25), key=k).shape == (3,)


def test_dropout_gradient_is_the_scaled_mask():
    x = mx.array(np.linspace(1.0, 2.0, 50, dtype=np.float32))
    k = random.key(1)
    mask = _np(random.bernoulli(k, 0.6, x.shape))
    g = ft.grad(lambda v: F.dropout(v, 0.4, key=k).sum())(x)
    _close(g, mask / 0.6, rtol=1e-6)
    assert _np(ft.grad(lambda v: F.dropout(v, 1.0, key=k).sum())(x)).sum() == 0


def test_dropout_vmap_over_keys_and_jit():
    x = mx.ones((5, 8))
    keys = random.split(random.key(2), 5)
    loop = mx.stack([F.dropout(x[i], 0.5, key=keys[i]) for i in range(5)])
    _close(ft.vmap(lambda v, k: F.dropout(v, 0.5, key=k))(x, keys), loop)
    # With an unbatched key every example draws the same mask, as in JAX.
    same = ft.vmap(lambda v: F.dropout(v, 0.5, key=keys[0]))(x)
    _close(same, mx.broadcast_to(F.dropout(x[0], 0.5, key=keys[0]), (5, 8)))
    # Under jit the mask follows the key argument (it is never frozen).
    f = ft.jit(lambda v, k: F.dropout(v, 0.5, key=k))
    for i in range(2):
        _close(f(x[0], keys[i]), F.dropout(x[0], 0.5, key=keys[i]))


def test_dropout_errors():
    x, k = mx.ones(3), random.key(0)
    for rate in (-0.1, 1.5):
        with pytest.raises(ValueError, match=rf"dropout: rate must be in \[0, 1\], got {rate}"):
            F.dropout(x, rate, key=k)
    with pytest.raises(TypeError, match=r"dropout: rate must be a real number"):
        F.dropout(x, "0.5", key=k)
    with pytest.raises(TypeError, match=r"dropout: key must be a key array"):
        F.dropout(x, 0.5, key=0)
    with pytest.raises(TypeError, match=r"dropout: key must be a uint32 array of shape \(2,\)"):
        F.dropout(x, 0.5, key=mx.zeros(2))
    with pytest.raises(TypeError, match=r"key"):
        F.dropout(x, 0.5)  # the key is keyword-only and required
    with pytest.raises(TypeError):
        F.dropout(x, 0.5, k)


# ----------------------------------------------------------------------------
# Normalisations
# ----------------------------------------------------------------------------


def _rng_arrays(seed, *shapes_, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [mx.array(rng.standard_normal(s).astype(dtype)) for s in shapes_]


@given(x=floats(shapes(min_dims=1, max_dims=4, min_side=2), -4.0, 4.0))
def test_layer_and_rms_norm_match_mlx_fast(x):
    xm = _f32(x)
    c = x.shape[-1]
    w, b = _rng_arrays(1, (c,), (c,))
    _close(F.layer_norm(xm), mx.fast.layer_norm(xm, None, None, 1e-5), rtol=1e-4, atol=1e-5)
    _close(F.layer_norm(xm, w, b, eps=1e-3), mx.fast.layer_norm(xm, w, b, 1e-3), rtol=1e-4,
           atol=1e-5)
    _close(F.rms_norm(xm, w), mx.fast.rms_norm(xm, w, 1e-5), rtol=1e-4, atol=1e-5)
    _close(F.rms_norm(xm), mx.fast.rms_norm(xm, None, 1e-5), rtol=1e-4, atol=1e-5)


def test_layer_and_rms_norm_over_several_axes():
    (x,) = _rng_arrays(2, (2, 3, 4))
    xn = _np(x).astype(np.float64)
    m = xn.mean(axis=(0, 2), keepdims=True)
    v = xn.var(axis=(0, 2), keepdims=True)
    _close(F.layer_norm(x, axis=(0, 2)), (xn - m) / np.sqrt(v + 1e-5), rtol=1e-5, atol=1e-5)
    ms = (xn ** 2).mean(axis=(1, 2), keepdims=True)
    _close(F.rms_norm(x, axis=(1, 2)), xn / np.sqrt(ms + 1e-5), rtol=1e-5, atol=1e-5)


def test_layer_and_rms_norm_low_precision():
    (x,) = _rng_arrays(3, (4, 64))
    w = mx.ones(64, mx.float16) * 1.5
    for dtype in (mx.float16, mx.bfloat16):
        xh = x.astype(dtype)
        got = F.layer_norm(xh, w.astype(dtype))
        assert got.dtype == dtype
        _close(got.astype(mx.float32), mx.fast.layer_norm(xh, w.astype(dtype), None, 1e-5)
               .astype(mx.float32), rtol=1e-2, atol=1e-2)
        assert F.rms_norm(xh).dtype == dtype
        # A float32 weight promotes, as in mlx.core.fast.
        assert F.layer_norm(xh, mx.ones(64)).dtype == mx.float32


def test_group_and_instance_norm_match_mlx_nn():
    x, w, b = _rng_arrays(4, (2, 5, 3, 12), (12,), (12,))
    for groups in (1, 3, 4, 12):
        gn = mnn.GroupNorm(groups, 12, pytorch_compatible=True)
        gn.weight, gn.bias = w, b
        _close(F.group_norm(x, groups, w, b), gn(x), rtol=1e-4, atol=1e-5)
        gn = mnn.GroupNorm(groups, 12, affine=False, pytorch_compatible=True)
        _close(F.group_norm(x[:, 0], groups), gn(x[:, 0]), rtol=1e-4, atol=1e-5)
    inn = mnn.InstanceNorm(12, affine=True)
    inn.weight, inn.bias = w, b
    _close(F.instance_norm(x, w, b), inn(x), rtol=1e-4, atol=1e-5)
    _close(F.instance_norm(x), mnn.InstanceNorm(12)(x), rtol=1e-4, atol=1e-5)


def test_batch_norm_matches_mlx_nn_train_and_eval():
    x, w, b = _rng_arrays(5, (6, 4, 8), (8,), (8,))
    bn = mnn.BatchNorm(8)
    bn.weight, bn.bias = w, b
    mean, var = F.batch_stats(x)
    _close(F.batch_norm(x, mean, var, w, b), bn(x), rtol=1e-4, atol=1e-5)  # training
    # The running statistics mlx.nn accumulates: (1 - 0.1) * init + 0.1 * batch (ddof=1).
    _, var1 = F.batch_stats(x, ddof=1)
    _close(bn.running_mean, 0.1 * mean, rtol=1e-5, atol=1e-6)
    _close(bn.running_var, 0.9 + 0.1 * var1, rtol=1e-5, atol=1e-6)
    bn.eval()
    _close(F.batch_norm(x, bn.running_mean, bn.running_var, w, b), bn(x), rtol=1e-4, atol=1e-5)
    xn = _np(x).reshape(-1, 8).astype(np.float64)
    _close(mean, xn.mean(0), rtol=1e-5, atol=1e-6)
    _close(var1, xn.var(0, ddof=1), rtol=1e-5, atol=1e-6)


def test_normalisation_gradients_match_mx_grad():
    x, w, b, ct = _rng_arrays(6, (3, 4, 8), (8,), (8,), (3, 4, 8))
    gn = mnn.GroupNorm(2, 8, affine=False, pytorch_compatible=True)

    def mlx_group(x, w, b):
        return gn(x) * w + b

    pairs = [
        (lambda x, w, b: F.layer_norm(x, w, b), lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5)),
        (lambda x, w, b: F.rms_norm(x, w) + b, lambda x, w, b: mx.fast.rms_norm(x, w, 1e-5) + b),
        (lambda x, w, b: F.group_norm(x, 2, w, b), mlx_group),
        (lambda x, w, b: F.batch_norm(x, *F.batch_stats(x), w, b),
         lambda x, w, b: (x - x.mean((0, 1))) * mx.rsqrt(x.var((0, 1)) + 1e-5) * w + b),
    ]
    for ours, theirs in pairs:
        got = ft.grad(lambda *a: (ours(*a) * ct).sum(), argnums=(0, 1, 2))(x, w, b)
        expected = mx.grad(lambda *a: (theirs(*a) * ct).sum(), argnums=(0, 1, 2))(x, w, b)
        for g, e in zip(got, expected):
            _close(g, e, rtol=1e-4, atol=1e-5)


def test_normalisation_derivatives_float64():
    rng = np.random.default_rng(7)
    x = mx.array(rng.standard_normal((2, 3, 4)), dtype=mx.float64)
    w = mx.array(rng.standard_normal(4), dtype=mx.float64)
    for fn in (lambda x, w: F.layer_norm(x, w, w, axis=(1, 2)),
               lambda x, w: F.rms_norm(x, w),
               lambda x, w: F.group_norm(x, 2, w),
               lambda x, w: F.instance_norm(x, w, w)):
        check_jvp_fd(fn, (x, w), rtol=1e-5, atol=1e-6)
        check_vjp_dot(fn, (x, w))


def test_normalisations_under_vmap_and_jit():
    x, w, b = _rng_arrays(8, (3, 2, 5, 8), (8,), (8,))

    def f(v):
        return F.group_norm(v, 4, w, b) + F.layer_norm(v, w) * F.rms_norm(v, b)

    _close(ft.vmap(f)(x), mx.stack([f(x[i]) for i in range(3)]), rtol=1e-5, atol=1e-6)
    _close(ft.vmap(f, in_axes=2, out_axes=2)(x), mx.stack([f(x[:, :, i]) for i in range(5)], 2),
           rtol=1e-5, atol=1e-6)
    with compiler_off():
        _close(ft.jit(f)(x), f(x), rtol=1e-5, atol=1e-6)
        g = ft.jit(ft.grad(lambda v: F.batch_norm(v, *F.batch_stats(v)).sum()))
        _close(g(x), ft.grad(lambda v: F.batch_norm(v, *F.batch_stats(v)).sum())(x), atol=1e-5)


def test_normalisation_errors():
    x = mx.ones((2, 3, 6))
    with pytest.raises(ValueError, match=r"layer_norm: weight of shape \(3,\) does not "
                                         r"broadcast against x of shape \(2, 3, 6\)"):
        F.layer_norm(x, mx.ones(3))
    with pytest.raises(ValueError, match=r"rms_norm: weight of shape \(2, 2, 3, 6\)"):
        F.rms_norm(x, mx.ones((2, 2, 3, 6)))
    with pytest.raises(ValueError, match=r"layer_norm: axis 3 is out of range"):
        F.layer_norm(x, axis=3)
    with pytest.raises(ValueError, match=r"layer_norm: eps must not be negative, got -1"):
        F.layer_norm(x, eps=-1)
    with pytest.raises(ValueError, match=r"group_norm: the 6 channels of x .* num_groups=4"):
        F.group_norm(x, 4)
    with pytest.raises(ValueError, match=r"group_norm: num_groups must be positive, got 0"):
        F.group_norm(x, 0)
    with pytest.raises(TypeError, match=r"group_norm: num_groups must be an int"):
        F.group_norm(x, 2.0)
    with pytest.raises(ValueError, match=r"group_norm: x must be \(N, ..., C\), at least 2-d"):
        F.group_norm(mx.ones(6), 2)
    with pytest.raises(ValueError, match=r"instance_norm: x must be \(N, ..., C\), at least 3-d"):
        F.instance_norm(mx.ones((2, 6)))
    with pytest.raises(ValueError, match=r"batch_norm: mean of shape \(5,\)"):
        F.batch_norm(x, mx.zeros(5), mx.ones(6))
    with pytest.raises(ValueError, match=r"batch_stats: x must have a feature axis"):
        F.batch_stats(mx.array(1.0))


# ----------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------

# (H, H_kv, L_q, L_kv, D, D_v): multi-head, grouped-query, multi-query.
_ATTENTION_SHAPES = [(4, 4, 3, 5, 8, 8), (4, 2, 5, 5, 8, 6), (6, 1, 6, 4, 4, 4)]


def _qkv(seed, h, h_kv, lq, lk, d, dv, b=2):
    return _rng_arrays(seed, (b, h, lq, d), (b, h_kv, lk, d), (b, h_kv, lk, dv))


@pytest.mark.parametrize("dims", _ATTENTION_SHAPES, ids=["mha", "gqa", "mqa"])
def test_attention_matches_mlx_fast(dims):
    q, k, v = _qkv(10, *dims)
    lq, lk = dims[2], dims[3]
    sdpa = mx.fast.scaled_dot_product_attention
    s = dims[4] ** -0.5
    _close(F.scaled_dot_product_attention(q, k, v), sdpa(q, k, v, scale=s), rtol=1e-5,
           atol=1e-6)
    _close(F.scaled_dot_product_attention(q, k, v, scale=0.3), sdpa(q, k, v, scale=0.3),
           rtol=1e-5, atol=1e-6)
    # Lower-right causal masks, by either spelling.
    expected = sdpa(q, k, v, scale=s, mask="causal")
    _close(F.scaled_dot_product_attention(q, k, v, is_causal=True), expected, rtol=1e-5,
           atol=1e-6)
    _close(F.scaled_dot_product_attention(q, k, v, mask="causal"), expected, rtol=1e-5,
           atol=1e-6)
    rng = np.random.default_rng(11)
    for shape in ((lq, lk), (2, 1, lq, lk), (1, dims[0], 1, lk)):
        bool_mask = mx.array(rng.random(shape) < 0.6)
        _close(F.scaled_dot_product_attention(q, k, v, mask=bool_mask),
               sdpa(q, k, v, scale=s, mask=bool_mask), rtol=1e-5, atol=1e-6)
        add_mask = mx.array(rng.standard_normal(shape).astype(np.float32))
        _close(F.scaled_dot_product_attention(q, k, v, mask=add_mask),
               sdpa(q, k, v, scale=s, mask=add_mask), rtol=1e-5, atol=1e-6)
    # A causal mask with a boolean one: both apply.
    bool_mask = mx.array(rng.random((lq, lk)) < 0.7)
    causal = mx.arange(lq)[:, None] + (lk - lq) >= mx.arange(lk)[None]
    _close(F.scaled_dot_product_attention(q, k, v, mask=bool_mask, is_causal=True),
           sdpa(q, k, v, scale=s, mask=bool_mask & causal), rtol=1e-5, atol=1e-6)


def test_attention_fully_masked_rows_average_values_as_mlx():
    q, k, v = _qkv(12, 2, 2, 3, 4, 4, 4)
    mask = mx.array([[True] * 4, [False] * 4, [True, False, False, True]])
    got = F.scaled_dot_product_attention(q, k, v, mask=mask)
    _close(got, mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask=mask), atol=1e-6)
    _close(got[:, :, 1], _np(v).mean(axis=2), rtol=1e-5, atol=1e-6)
    g = ft.grad(lambda q: F.scaled_dot_product_attention(q, k, v, mask=mask).sum())(q)
    assert np.isfinite(_np(g)).all()


def test_attention_low_precision():
    q, k, v = _qkv(13, 4, 2, 4, 6, 8, 8)
    for dtype in (mx.float16, mx.bfloat16):
        qh, kh, vh = (a.astype(dtype) for a in (q, k, v))
        got = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
        assert got.dtype == dtype
        expected = mx.fast.scaled_dot_product_attention(qh, kh, vh, scale=8 ** -0.5,
                                                        mask="causal")
        _close(got.astype(mx.float32), expected.astype(mx.float32), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dims", _ATTENTION_SHAPES, ids=["mha", "gqa", "mqa"])
def test_attention_gradients_match_mx_grad(dims):
    q, k, v = _qkv(14, *dims)
    (ct,) = _rng_arrays(15, (2, dims[0], dims[2], dims[5]))
    mask = mx.array(np.random.default_rng(16).random((dims[2], dims[3])) < 0.7)

    def ours(q, k, v):
        return (F.scaled_dot_product_attention(q, k, v, mask=mask, is_causal=True) * ct).sum()

    def theirs(q, k, v):
        lq, lk = dims[2], dims[3]
        causal = mx.arange(lq)[:, None] + (lk - lq) >= mx.arange(lk)[None]
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=dims[4] ** -0.5,
                                                   mask=mask & causal)
        return (out * ct).sum()

    got = ft.grad(ours, argnums=(0, 1, 2))(q, k, v)
    expected = mx.grad(theirs, argnums=(0, 1, 2))(q, k, v)
    for g, e in zip(got, expected):
        _close(g, e, rtol=1e-4, atol=1e-5)


def test_attention_derivatives_float64_and_additive_mask_gradient():
    rng = np.random.default_rng(17)
    q, k, v, m = (mx.array(rng.standard_normal(s), dtype=mx.float64)
                  for s in ((1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 3), (3, 5)))
    fn = lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, mask=m, is_causal=True)
    check_jvp_fd(fn, (q, k, v, m), **_LOOSE)
    check_vjp_dot(fn, (q, k, v, m))


def test_attention_under_vmap_and_jit():
    q, k, v = _qkv(18, 4, 2, 3, 5, 4, 4, b=3)

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    # Under vmap each example is (H, L, D): any number of batch axes (or none).
    loop = mx.stack([f(q[i], k[i], v[i]) for i in range(3)])
    _close(loop, f(q, k, v), rtol=1e-6, atol=1e-6)
    _close(ft.vmap(f)(q, k, v), loop, rtol=1e-6, atol=1e-6)
    _close(ft.vmap(f, in_axes=(0, None, None), out_axes=1)(q, k[0], v[0]),
           mx.stack([f(q[i], k[0], v[0]) for i in range(3)], 1), rtol=1e-6, atol=1e-6)
    with compiler_off():
        _close(ft.jit(f)(q, k, v), loop, rtol=1e-6, atol=1e-6)


def test_attention_errors():
    q, k, v = _qkv(19, 4, 2, 3, 5, 4, 4)
    sdpa = F.scaled_dot_product_attention
    with pytest.raises(ValueError, match=r"q, k and v must have the same ndim, at least 3"):
        sdpa(q[0, 0], k[0, 0], v[0, 0])
    with pytest.raises(ValueError, match=r"q and k must have the same head dimension"):
        sdpa(q, k[..., :3], v)
    with pytest.raises(ValueError, match=r"k and v must have the same heads and length"):
        sdpa(q, k, v[:, :, :4])
    with pytest.raises(ValueError, match=r"the 4 query heads must be a multiple of the 3 "):
        sdpa(q, mx.concatenate([k, k[:, :1]], 1), mx.concatenate([v, v[:, :1]], 1))
    with pytest.raises(ValueError, match=r"the batch axes of q, k and v do not broadcast"):
        sdpa(q, mx.concatenate([k, k, k]), mx.concatenate([v, v, v]))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 4\) does not broadcast against "
                                         r"the scores' shape \(2, 4, 3, 5\)"):
        sdpa(q, k, v, mask=mx.ones((3, 4), mx.bool_))
    with pytest.raises(TypeError, match=r"mask must be boolean .* got dtype mlx.core.int32"):
        sdpa(q, k, v, mask=mx.ones((3, 5), mx.int32))
    with pytest.raises(ValueError, match=r"the only mask string is 'causal', got 'upper'"):
        sdpa(q, k, v, mask="upper")
    with pytest.raises(TypeError, match=r"is_causal must be True or False"):
        sdpa(q, k, v, is_causal=1)
    with pytest.raises(TypeError, match=r"scale must be a real number"):
        sdpa(q, k, v, scale="0.5")
