"""LoRA and QLoRA adapters against mlx-lm's: the same weights give the same
outputs and adapter gradients, on a float and on a 4-bit base; adapters
train alone (the base gets no gradient); vmap over a stack of adapters
equals a loop of single ones (MLX cannot vmap its quantized matmul)."""

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from mlx.utils import tree_flatten
from mlx_lm.tuner.lora import LoRALinear as MLXLoRALinear

import ftorch as ft
import ftorch.nn as nn
import ftorch.numpy as fnp
import ftorch.random as random


def _normal(shape, seed=0):
    return mx.random.normal(shape, key=mx.random.key(seed))


def _close(a, b, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("quantized", [False, True])
def test_lora_linear_matches_mlx_lm(quantized):
    mx.random.seed(0)
    base = mnn.Linear(64, 32, bias=False)
    if quantized:
        base = mnn.QuantizedLinear.from_linear(base, group_size=32, bits=4)
    theirs = MLXLoRALinear.from_base(base, r=4, scale=10.0)
    theirs.lora_b = _normal((4, 32), 1) * 0.1  # non-zero, so the update shows
    layer = nn.LoRALinear(nn.QuantizedLinear(64, 32, False, 32, 4) if quantized
                          else nn.Linear(64, 32, bias=False), rank=4, scale=10.0)
    params = nn.utils.unflatten_names(dict(tree_flatten(theirs.parameters())))
    x = _normal((2, 5, 64), 2)
    _close(layer(params, x), theirs(x))

    theirs.freeze()
    theirs.unfreeze(keys=["lora_a", "lora_b"], recurse=False)
    loss = lambda model, x: mx.mean(mx.tanh(model(x)))
    mlx_loss, mlx_grads = mnn.value_and_grad(theirs, loss)(theirs, x)
    adapters, frozen = nn.utils.partition(params, nn.is_lora_param)
    ours, grads = ft.value_and_grad(
        lambda a: fnp.mean(fnp.tanh(layer(nn.utils.combine(a, frozen), x))))(adapters)
    _close(ours, mlx_loss)
    assert sorted(nn.utils.flatten_names(ft.tree.map(lambda g: g, grads))) == ["lora_a", "lora_b"]
    for name in ("lora_a", "lora_b"):
        _close(grads[name], mlx_grads[name], rtol=1e-4)


def test_lora_wraps_the_chosen_layers_and_starts_as_the_base():
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 8))
    params, _ = model.init(random.key(0), mx.zeros((1, 64)))
    qmodel, qparams = nn.quantize(model, params, group_size=32, bits=4)
    lmodel, lparams = nn.lora(qmodel, qparams, random.key(1), rank=2,
                              predicate=lambda path, layer: path != "layers.4")
    assert [type(layer).__name__ for layer in lmodel.layers] == [
        "LoRALinear", "ReLU", "LoRALinear", "ReLU", "QuantizedLinear"]
    x = _normal((3, 64))
    assert bool(mx.array_equal(lmodel(lparams, x), qmodel(qparams, x)))
    # Fresh keys per layer: the two adapters differ.
    assert not bool(mx.array_equal(lparams["layers"][0]["lora_a"], lparams["layers"][2]["lora_a"]))
    assert "lora_a" not in qparams["layers"][0]  # the arguments are unchanged


def test_qlora_step_under_jit_trains_only_the_adapters():
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
    params, _ = model.init(random.key(0), mx.zeros((1, 64)))
    lmodel, lparams = nn.lora(*nn.quantize(model, params, group_size=32), random.key(1), rank=4)
    adapters, base = nn.utils.partition(lparams, nn.is_lora_param)
    x, y = _normal((16, 64), 2), _normal((16, 4), 3)
    loss = lambda a: fnp.mean((lmodel(nn.utils.combine(a, base), x) - y) ** 2)
    step = ft.jit(lambda a: ft.tree.map(lambda p, g: p - 0.01 * g, a, ft.grad(loss)(a)))
    start = float(loss(adapters))
    for _ in range(20):
        adapters = step(adapters)
    assert float(loss(adapters)) < 0.9 * start


def test_vmap_over_a_stack_of_adapters_equals_a_loop():
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
    params, _ = model.init(random.key(0), mx.zeros((1, 64)))
    lmodel, lparams = nn.lora(*nn.quantize(model, params, group_size=32), random.key(1), rank=4)
    adapters, base = nn.utils.partition(lparams, nn.is_lora_param)
    # Three variants: the adapters perturbed differently (lora_b non-zero).
    stack = ft.tree.map(lambda a: None if a is None else mx.stack(
        [a + 0.05 * _normal(a.shape, k) for k in range(3)]), adapters,
        is_leaf=lambda a: a is None)
    x, y = _normal((8, 64), 5), _normal((8, 4), 6)
    loss = lambda a: fnp.mean((lmodel(nn.utils.combine(a, base), x) - y) ** 2)
    values, grads = ft.jit(ft.vmap(ft.value_and_grad(loss)))(stack)
    for k in range(3):
        one = ft.tree.map(lambda a: None if a is None else a[k], stack,
                          is_leaf=lambda a: a is None)
        value, grad = ft.value_and_grad(loss)(one)
        _close(values[k], value)
        _close(grads["layers"][2]["lora_a"][k], grad["layers"][2]["lora_a"], rtol=1e-4)
        _close(grads["layers"][0]["lora_b"][k], grad["layers"][0]["lora_b"], rtol=1e-4)


def test_bad_lora_arguments():
    with pytest.raises(TypeError, match="linear must be a Linear or QuantizedLinear"):
        nn.LoRALinear(nn.ReLU())
    with pytest.raises(ValueError, match="rank"):
        nn.LoRALinear(nn.Linear(4, 4), rank=0)
    model = nn.Sequential(nn.Linear(4, 4))
    params, _ = model.init(random.key(0), mx.zeros((1, 4)))
    with pytest.raises(ValueError, match="no Linear or QuantizedLinear layer was chosen"):
        nn.lora(model, params, random.key(1), predicate=lambda path, layer: False)
