"""ftorch's Llama against mlx-lm's, on a tiny model built from a config dict
with random weights: the same weights give the same logits (whole
sequences, and step by step with KV caches), the same gradients, the same
greedy tokens from a jitted decoding loop; quantizing both with their own
``quantize`` gives the same parameters and logits; and one QLoRA step gives
mlx-lm's loss and adapter gradients."""

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models import llama as mlx_llama
from mlx_lm.models.cache import make_prompt_cache
from mlx_lm.tuner.trainer import default_loss
from mlx_lm.tuner.utils import linear_to_lora_layers

import ftorch as ft
import ftorch.nn as nn
import ftorch.numpy as fnp
import ftorch.random as random
from ftorch.models.llama import Llama, LlamaArgs, generate

CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
          "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
          "rms_norm_eps": 1e-5, "vocab_size": 128, "rope_theta": 10000.0,
          "tie_word_embeddings": True}


def _mlx_model(**overrides):
    mx.random.seed(0)
    model = mlx_llama.Model(mlx_llama.ModelArgs.from_dict({**CONFIG, **overrides}))
    # Norm weights away from one, so that a mistake in them shows, and larger
    # projections, so that greedy decoding does not repeat one token.
    model.update(nn.utils.unflatten_names({
        k: v + 0.1 * mx.random.normal(v.shape) if k.endswith("norm.weight") else 3.0 * v
        for k, v in tree_flatten(model.parameters()) if "norm" in k or "proj" in k}))
    mx.eval(model.parameters())
    return model


def _ours(mlx_model, **overrides):
    model = Llama(LlamaArgs.from_dict({**CONFIG, **overrides}))
    return model, nn.utils.unflatten_names(dict(tree_flatten(mlx_model.parameters())))


def _close(a, b, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=rtol, atol=atol)


def _masked_lm_loss(logits, lengths):
    """mlx-lm's ``default_loss`` (next-token cross-entropy over the positions
    ``lengths`` marks), on ``logits`` of ``TOKENS[:, :-1]``."""
    steps = fnp.arange(1, TOKENS.shape[1])
    mask = (steps >= lengths[:, :1]) & (steps <= lengths[:, 1:])
    ce = nn.losses.cross_entropy(logits, TOKENS[:, 1:]) * mask
    return fnp.sum(ce) / fnp.sum(mask)


TOKENS = mx.array([[3, 17, 99, 5, 42, 7, 1, 64], [0, 127, 12, 12, 8, 30, 2, 77]])


@pytest.mark.parametrize("tied", [True, False])
def test_logits_match_mlx_lm(tied):
    theirs = _mlx_model(tie_word_embeddings=tied)
    model, params = _ours(theirs, tie_word_embeddings=tied)
    assert sorted(nn.utils.flatten_names(params)) == sorted(
        nn.utils.flatten_names(model.init(random.key(0), TOKENS)[0]))
    _close(model(params, TOKENS), theirs(TOKENS))
    _close(ft.jit(model)(params, TOKENS), theirs(TOKENS))


def test_cached_decoding_matches_mlx_lm():
    theirs = _mlx_model()
    model, params = _ours(theirs)
    their_cache, cache = make_prompt_cache(theirs), model.cache(2, 16)
    step = ft.jit(lambda p, t, c: model(p, t, cache=c))
    for chunk in (TOKENS[:, :5], TOKENS[:, 5:6], TOKENS[:, 6:7], TOKENS[:, 7:]):
        logits, cache = step(params, chunk, cache)
        _close(logits, theirs(chunk, cache=their_cache))
    assert cache[0].offset.item() == 8
    # The cached logits are the whole sequence's.
    _close(logits[:, -1], model(params, TOKENS)[:, -1])


def test_greedy_generation_matches_mlx_lm():
    theirs = _mlx_model()
    model, params = _ours(theirs)
    prompt = mx.array([5, 9, 100, 3])
    expected = [int(t) for t, _ in generate_step(prompt, theirs, max_tokens=12)]
    assert len(set(expected)) > 6  # not a degenerate repetition
    assert generate(model, params, prompt, 12).tolist() == expected


def test_gradients_match_mlx_lm():
    theirs = _mlx_model()
    model, params = _ours(theirs)
    lengths = mx.array([[0, 7], [0, 5]])
    (mlx_loss, _), mlx_grads = mnn.value_and_grad(theirs, default_loss)(theirs, TOKENS, lengths)

    def loss(params):
        return _masked_lm_loss(model(params, TOKENS[:, :-1]), lengths)

    value, grads = ft.jit(ft.value_and_grad(loss))(params)
    _close(value, mlx_loss)
    ours, expected = nn.utils.flatten_names(grads), dict(tree_flatten(mlx_grads))
    assert sorted(ours) == sorted(expected)
    for name in ours:
        _close(ours[name], expected[name], rtol=1e-3, atol=1e-5)


def test_quantizing_both_gives_the_same_parameters_and_logits():
    theirs = _mlx_model()
    model, params = _ours(theirs)
    mnn.quantize(theirs, group_size=32, bits=4)
    qmodel, qparams = nn.quantize(model, params, group_size=32, bits=4)
    ours, expected = nn.utils.flatten_names(qparams), dict(tree_flatten(theirs.parameters()))
    assert sorted(ours) == sorted(expected)
    assert all(bool(mx.array_equal(ours[k], expected[k])) for k in ours)
    _close(qmodel(qparams, TOKENS), theirs(TOKENS))
    prompt = mx.array([5, 9, 100, 3])
    expected_tokens = [int(t) for t, _ in generate_step(prompt, theirs, max_tokens=8)]
    assert generate(qmodel, qparams, prompt, 8).tolist() == expected_tokens


def test_qlora_step_matches_mlx_lm():
    theirs = _mlx_model()
    model, params = _ours(theirs)
    mnn.quantize(theirs, group_size=32, bits=4)
    theirs.freeze()
    linear_to_lora_layers(theirs, 2, {"rank": 4, "scale": 10.0, "dropout": 0.0})
    # Non-zero B, so that every adapter has a gradient.
    theirs.update(nn.utils.unflatten_names({
        k: 0.05 * mx.random.normal(v.shape) for k, v in tree_flatten(theirs.parameters())
        if k.endswith("lora_b")}))
    lengths = mx.array([[0, 7], [0, 5]])
    (mlx_loss, _), mlx_grads = mnn.value_and_grad(theirs, default_loss)(theirs, TOKENS, lengths)

    qmodel, qparams = nn.quantize(model, params, group_size=32, bits=4)
    lmodel, lparams = nn.lora(qmodel, qparams, random.key(0), rank=4, scale=10.0,
                              predicate=lambda path, layer: ".layers." in f".{path}")
    expected_params = dict(tree_flatten(theirs.parameters()))
    assert sorted(nn.utils.flatten_names(lparams)) == sorted(expected_params)
    lparams = nn.utils.unflatten_names(expected_params)  # the same adapters
    adapters, base = nn.utils.partition(lparams, nn.is_lora_param)

    def loss(adapters):
        return _masked_lm_loss(lmodel(nn.utils.combine(adapters, base), TOKENS[:, :-1]),
                               lengths)

    value, grads = ft.jit(ft.value_and_grad(loss))(adapters)
    _close(value, mlx_loss)
    ours = {k: v for k, v in nn.utils.flatten_names(grads).items() if v is not None}
    expected = dict(tree_flatten(mlx_grads))
    assert sorted(ours) == sorted(expected) and len(ours) == 2 * 7 * 2
    for name in ours:
        _close(ours[name], expected[name], rtol=1e-3, atol=1e-5)


def test_bad_llm_arguments():
    model = Llama(LlamaArgs.from_dict(CONFIG))
    params, _ = model.init(random.key(0), TOKENS)
    with pytest.raises(ValueError, match="do not fit in max_len=4"):
        model(params, TOKENS, cache=model.cache(2, 4))
    with pytest.raises(ValueError, match="num_kv_heads=3 must divide num_heads=4"):
        Llama(LlamaArgs.from_dict({**CONFIG, "num_key_value_heads": 3}))
    with pytest.raises(ValueError, match="rope_scaling of type 'yarn' is not supported"):
        LlamaArgs.from_dict({**CONFIG, "rope_scaling": {"type": "yarn", "factor": 2.0}})
    with pytest.raises(ValueError, match="tokens must be"):
        model(params, TOKENS[0])
    with pytest.raises(ValueError, match="'weight' has shape"):
        model({**params, "model": {**params["model"], "norm": {"weight": mx.ones(3)}}}, TOKENS)
    with pytest.raises(ValueError, match="prompt must be a non-empty 1-d integer array"):
        generate(model, params, mx.array([1.0]), 3)
