"""Quantized matrices and layers against MLX: the same bits as mx.quantize,
mx.dequantize and mx.quantized_matmul in every mode; gradients against
MLX's VJP (scales and biases included, which MLX differentiates in reverse
mode only); vmap over stacks of weights against a loop; mlx.nn's
QuantizedLinear and QuantizedEmbedding exchanging weights both ways; and the
errors for bad input."""

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from mlx.utils import tree_flatten

import ftorch as ft
import ftorch.nn as nn
import ftorch.numpy as fnp
import ftorch.random as random

MODES = [("affine", 64, 4), ("affine", 32, 2), ("affine", 128, 8), ("affine", 32, 3),
         ("affine", 64, 6), ("mxfp4", 32, 4), ("mxfp8", 32, 8), ("nvfp4", 16, 4)]


def _normal(shape, seed=0, dtype=mx.float32):
    return mx.random.normal(shape, key=mx.random.key(seed)).astype(dtype)


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool(mx.array_equal(a, b))


@pytest.mark.parametrize("mode,group_size,bits", MODES)
@pytest.mark.parametrize("dtype", [mx.float32, mx.float16, mx.bfloat16])
def test_bit_for_bit_with_mlx(mode, group_size, bits, dtype):
    kw = dict(group_size=group_size, bits=bits, mode=mode)
    w = _normal((2, 16, 256), dtype=dtype)
    ours, theirs = fnp.quantize(w, **kw), mx.quantize(w, **kw)
    assert len(ours) == len(theirs) == (3 if mode == "affine" else 2)
    assert all(_same(a, b) for a, b in zip(ours, theirs))
    assert _same(fnp.dequantize(*ours, **kw), mx.dequantize(*theirs, **kw))
    x = _normal((3, 5, 256), seed=1, dtype=dtype)
    for transpose in (True, False) if mode == "affine" else (True,):
        weight = ours if transpose else fnp.quantize(_normal((2, 256, 256), 2, dtype), **kw)
        expected = mx.quantized_matmul(x[:2], *weight, transpose=transpose, **kw)
        assert _same(fnp.quantized_matmul(x[:2], *weight, transpose=transpose, **kw), expected)
        assert _same(ft.jit(lambda x, *q, t=transpose: fnp.quantized_matmul(
            x, *q, transpose=t, **kw))(x[:2], *weight), expected)


def test_gradients_match_mlx_including_scales_and_biases():
    w_q, scales, biases = mx.quantize(_normal((24, 128)), 32, 4)
    x = _normal((2, 3, 128), seed=1)

    def loss(np_):
        qmm = fnp.quantized_matmul if np_ is fnp else mx.quantized_matmul
        return lambda x, s, b: np_.sum(np_.sin(qmm(x, w_q, s, b, group_size=32, bits=4)))

    ours = ft.grad(loss(fnp), argnums=(0, 1, 2))(x, scales, biases)
    theirs = mx.grad(loss(mx), argnums=(0, 1, 2))(x, scales, biases)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-4, atol=1e-4)
    # The forward mode agrees with the reverse (MLX has no JVP in the scales).
    ts, tb = _normal(scales.shape, 3), _normal(biases.shape, 4)
    _, t = ft.jvp(lambda s, b: fnp.quantized_matmul(x, w_q, s, b, group_size=32, bits=4),
                  (scales, biases), (ts, tb))
    dense = x @ fnp.dequantize(w_q, ts, tb, group_size=32, bits=4).T
    np.testing.assert_allclose(np.array(t), np.array(dense), rtol=1e-4, atol=1e-4)


def test_vmap_over_a_stack_of_weights_is_gather_qmm():
    kw = dict(group_size=32, bits=4)
    stack = fnp.quantize(_normal((4, 6, 64)), **kw)
    x, xs = _normal((3, 64), 1), _normal((4, 3, 64), 2)

    def loop(f, *operands):
        return mx.stack([f(*(o[i] for o in operands)) for i in range(4)])

    per_weight = ft.vmap(lambda *q: fnp.quantized_matmul(x, *q, **kw))(*stack)
    assert _same(per_weight, loop(lambda *q: mx.quantized_matmul(x, *q, **kw), *stack))
    both = ft.vmap(lambda x, *q: fnp.quantized_matmul(x, *q, **kw), in_axes=(1, 0, 0, 0))(
        mx.swapaxes(xs, 0, 1), *stack)
    assert _same(both, loop(lambda x, *q: mx.quantized_matmul(x, *q, **kw), xs, *stack))
    vectors = ft.vmap(lambda x, *q: fnp.quantized_matmul(x, *q, **kw))(xs[:, 0], *stack)
    assert _same(vectors, loop(lambda x, *q: mx.quantized_matmul(x, *q, **kw), xs[:, 0], *stack))
    # Only the scales vary (several fine-tuned variants of one packed weight).
    w_q, s, b = stack[0][0], stack[1], stack[2]
    variants = ft.vmap(lambda s, b: fnp.quantized_matmul(xs[0], w_q, s, b, **kw))(s, b)
    assert _same(variants, loop(lambda s, b: mx.quantized_matmul(xs[0], w_q, s, b, **kw), s, b))
    # Per-variant gradients, through jit, against a loop of MLX's.
    f = lambda s, b: mx.sum(mx.quantized_matmul(xs[0], w_q, s, b, **kw) ** 2)
    g = lambda s, b: fnp.sum(fnp.quantized_matmul(xs[0], w_q, s, b, **kw) ** 2)
    ours = ft.jit(ft.vmap(ft.grad(g, argnums=(0, 1))))(s, b)
    theirs = [mx.grad(f, argnums=(0, 1))(s[i], b[i]) for i in range(4)]
    for k in range(2):
        np.testing.assert_allclose(np.array(ours[k]), np.stack([t[k] for t in theirs]),
                                   rtol=1e-4, atol=1e-4)


def test_vmap_of_quantize_and_dequantize():
    w = _normal((3, 4, 64))
    parts = ft.vmap(lambda w: fnp.quantize(w, bits=8))(w)
    assert all(_same(a, b) for a, b in zip(parts, mx.quantize(w, bits=8)))
    back = ft.vmap(lambda *p: fnp.dequantize(*p, bits=8), in_axes=(None, 0, 0))(
        parts[0][0], parts[1], parts[2])
    assert _same(back[1], mx.dequantize(parts[0][0], parts[1][1], parts[2][1], bits=8))


def test_float64_activations_match_float32_values():
    w_q, scales, biases = mx.quantize(_normal((8, 64)))
    x = _normal((2, 64), 1)
    y64 = fnp.quantized_matmul(x.astype(mx.float64), w_q, scales.astype(mx.float64),
                               biases.astype(mx.float64))
    assert y64.dtype == mx.float64
    np.testing.assert_allclose(np.array(y64), np.array(mx.quantized_matmul(x, w_q, scales, biases)),
                               rtol=1e-5, atol=1e-5)
    w_q, scales = mx.quantize(_normal((8, 64)), mode="mxfp8")
    exact = mx.dequantize(w_q, scales, mode="mxfp8", dtype=mx.float32)
    assert _same(fnp.dequantize(w_q, scales, mode="mxfp8", dtype=mx.float64),
                 exact.astype(mx.float64))


def test_the_packed_integers_have_no_gradient():
    w_q, scales, biases = fnp.quantize(_normal((8, 64)))
    x = _normal((2, 64), 1)
    with pytest.raises(TypeError, match="argument 1 has dtype mlx.core.uint32"):
        ft.grad(lambda x, w: fnp.sum(fnp.quantized_matmul(x, w, scales, biases)),
                argnums=(0, 1))(x, w_q)


@pytest.mark.parametrize("call,error,message", [
    (lambda w: fnp.quantize(w, group_size=48), ValueError, "group_size must be one of"),
    (lambda w: fnp.quantize(w[:, :96], group_size=64), ValueError,
     "group_size=64 must divide w's last axis"),
    (lambda w: fnp.quantize(w, bits=7), ValueError, "bits must be one of"),
    (lambda w: fnp.quantize(w, mode="int4"), ValueError, "mode must be one of"),
    (lambda w: fnp.quantize(w, mode="mxfp4", bits=8), ValueError, "bits must be one of"),
    (lambda w: fnp.quantize(w[0]), ValueError, "at least 2 dimensions"),
    (lambda w: fnp.quantize(w.astype(mx.int32)), TypeError, "w must be float32"),
    (lambda w: fnp.dequantize(w, w), TypeError, "w must be the packed uint32"),
])
def test_bad_quantize_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call(_normal((4, 128)))


def test_bad_quantized_matrix_arguments():
    w_q, scales, biases = fnp.quantize(_normal((8, 128)))
    x = _normal((2, 128))
    with pytest.raises(ValueError, match=r"scales must have shape \(8, 2\).*got \(8, 1\)"):
        fnp.quantized_matmul(x, w_q, scales[:, :1], biases)
    with pytest.raises(ValueError, match="biases must have shape"):
        fnp.dequantize(w_q, scales, biases[:4])
    with pytest.raises(ValueError, match="'affine' mode needs biases"):
        fnp.quantized_matmul(x, w_q, scales)
    with pytest.raises(ValueError, match="x's last axis must be 128"):
        fnp.quantized_matmul(x[:, :64], w_q, scales, biases)
    with pytest.raises(ValueError, match="scales must have shape"):  # the wrong bits
        fnp.quantized_matmul(x, w_q, scales, biases, bits=8)
    mx_q, mx_scales = fnp.quantize(_normal((8, 128)), mode="mxfp4")
    with pytest.raises(ValueError, match="has no biases"):
        fnp.dequantize(mx_q, mx_scales, mx_scales, mode="mxfp4")


# ----------------------------------------------------------------------------
# Layers, and mlx.nn's
# ----------------------------------------------------------------------------


def _mlx_params(module):
    return dict(tree_flatten(module.parameters()))


@pytest.mark.parametrize("mode,group_size,bits", [("affine", 32, 4), ("affine", 64, 8),
                                                  ("mxfp4", 32, 4), ("nvfp4", 16, 4)])
def test_quantized_linear_exchanges_weights_with_mlx_nn(mode, group_size, bits):
    kw = dict(group_size=group_size, bits=bits, mode=mode)
    mx.random.seed(0)
    theirs = mnn.QuantizedLinear(128, 24, bias=True, **kw)
    theirs.bias = _normal((24,), 5)
    layer = nn.QuantizedLinear(128, 24, **kw)
    x = _normal((3, 128), 1)
    params = nn.utils.unflatten_names(_mlx_params(theirs))
    assert sorted(params) == sorted(layer.init(random.key(0), x)[0])
    assert _same(layer(params, x), theirs(x))
    # ... and back: ftorch's initialised weights into mlx.nn's layer.
    mine, _ = layer.init(random.key(1), x)
    theirs.load_weights(list(nn.utils.flatten_names(mine).items()))
    assert _same(layer(mine, x), theirs(x))


def test_quantize_a_model_as_mlx_nn_quantize():
    mx.random.seed(0)
    theirs = mnn.Sequential(mnn.Embedding(96, 64), mnn.Linear(64, 128), mnn.ReLU(),
                            mnn.Linear(128, 96, bias=False))
    mnn.quantize(theirs, group_size=32, bits=4)
    model = nn.Sequential(nn.Embedding(96, 64), nn.Linear(64, 128), nn.ReLU(),
                          nn.Linear(128, 96, bias=False))
    tokens = mx.array([[1, 5, 7], [0, 95, 3]])
    params, _ = model.init(random.key(0), tokens)
    # The same float weights quantized by each library give the same parameters and logits.
    float_theirs = mnn.Sequential(mnn.Embedding(96, 64), mnn.Linear(64, 128), mnn.ReLU(),
                                  mnn.Linear(128, 96, bias=False))
    float_theirs.load_weights(list(nn.utils.flatten_names(params).items()))
    mnn.quantize(float_theirs, group_size=32, bits=4)
    qmodel, qparams = nn.quantize(model, params, group_size=32, bits=4)
    assert [type(layer).__name__ for layer in qmodel.layers] == [
        "QuantizedEmbedding", "QuantizedLinear", "ReLU", "QuantizedLinear"]
    expected = _mlx_params(float_theirs)
    ours = nn.utils.flatten_names(qparams)
    assert sorted(ours) == sorted(expected)
    assert all(_same(ours[k], expected[k]) for k in ours)
    assert _same(qmodel(qparams, tokens), float_theirs(tokens))
    assert _same(qmodel.layers[0].as_linear(qparams["layers"][0], _normal((2, 64))),
                 float_theirs.layers[0].as_linear(_normal((2, 64))))
    # Nothing else changed: the original model and params still work as before.
    assert type(model.layers[0]).__name__ == "Embedding" and params["layers"][0]["weight"].dtype \
        == mx.float32


def test_quantized_parameters_take_a_fifth_of_the_bytes():
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512))
    params, _ = model.init(random.key(0), mx.zeros((1, 512)))
    _, qparams = nn.quantize(model, params, group_size=64, bits=4)
    nbytes = lambda t: sum(x.nbytes for x in ft.tree.leaves(t))
    assert nbytes(qparams) <= 0.2 * nbytes(params)


def test_quantized_layers_differentiate_in_scales_and_inputs_under_jit_and_vmap():
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8))
    params, _ = model.init(random.key(0), mx.zeros((1, 64)))
    qmodel, qparams = nn.quantize(model, params, group_size=32, bits=4)
    x = _normal((5, 64), 1)
    scales_only, rest = nn.utils.partition(qparams, lambda name, _: name.endswith("scales"))

    def loss(trainable, x):
        return fnp.mean(qmodel(nn.utils.combine(trainable, rest), x) ** 2)

    g = ft.jit(ft.grad(loss))(scales_only, x)
    assert g["layers"][0]["scales"].shape == (64, 2)
    eager = ft.grad(loss)(scales_only, x)
    np.testing.assert_allclose(np.array(g["layers"][2]["scales"]),
                               np.array(eager["layers"][2]["scales"]), rtol=1e-5, atol=1e-6)
    per_example = ft.vmap(ft.grad(lambda x: fnp.sum(qmodel(qparams, x))))(x)
    loop = mx.stack([ft.grad(lambda x: fnp.sum(qmodel(qparams, x)))(x[i]) for i in range(5)])
    np.testing.assert_allclose(np.array(per_example), np.array(loop), rtol=1e-5, atol=1e-6)


def test_bad_quantized_layer_arguments():
    with pytest.raises(ValueError, match="group_size=64 must divide input_dims=96"):
        nn.QuantizedLinear(96, 8)
    with pytest.raises(ValueError, match="bits must be one of"):
        nn.QuantizedEmbedding(10, 64, bits=7)
    model = nn.Sequential(nn.Linear(96, 8))
    params, _ = model.init(random.key(0), mx.zeros((1, 96)))
    with pytest.raises(ValueError, match="cannot quantize 'layers.0' .*predicate="):
        nn.quantize(model, params)
    layer = nn.QuantizedLinear(64, 8)
    qparams, _ = layer.init(random.key(0), mx.zeros(64))
    with pytest.raises(ValueError, match="'scales' has shape"):
        layer({**qparams, "scales": qparams["scales"][:4]}, mx.ones(64))
