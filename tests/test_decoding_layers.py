"""The Llama-class blocks of ``ftorch.nn`` (``nn.RoPE``, ``nn.SwiGLU``,
``nn.GroupedQueryAttention`` and its ``nn.KVCache``) against mlx.nn's and
mlx-lm's: the same weights give the same outputs, with and without a cache,
eager, jitted and vmapped; ``rope`` differentiates as MLX does; a decoding
step traces once per shape; and bad arguments are errors naming them.
tests/test_llm.py checks the whole model and its generation."""

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models import llama as mlx_llama
from mlx_lm.models.activations import swiglu as mlx_swiglu
from mlx_lm.models.cache import KVCache as MlxKVCache
from mlx_lm.models.cache import make_prompt_cache

import ftorch as ft
import ftorch.nn as nn
import ftorch.nn.functional as F
import ftorch.random as random
from ftorch.models.llama import Llama, LlamaArgs, generate

_rng = np.random.default_rng(0)

CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
          "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
          "rms_norm_eps": 1e-5, "vocab_size": 128, "rope_theta": 10000.0,
          "tie_word_embeddings": False}
TOKENS = mx.array([[3, 17, 99, 5, 42, 7, 1, 64], [0, 127, 12, 12, 8, 30, 2, 77]])


def _x(*shape: int) -> mx.array:
    return mx.array(_rng.standard_normal(shape).astype(np.float32))


def _close(a, b, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=rtol, atol=atol)


def _params_of(module: mnn.Module) -> dict:
    """An mlx.nn module's parameters as ftorch params (the same names)."""
    mx.eval(module.parameters())
    return nn.utils.unflatten_names(dict(tree_flatten(module.parameters())))


# ----------------------------------------------------------------------------
# RoPE
# ----------------------------------------------------------------------------

ROPES = [
    dict(dims=8),
    dict(dims=8, traditional=True),
    dict(dims=4, base=500.0, scale=0.5),          # a partial rotation
    dict(dims=6, traditional=True, scale=2.0),
]


@pytest.mark.parametrize("options", ROPES, ids=str)
@pytest.mark.parametrize("offset", [0, 5, "array"])
def test_rope_layer_matches_mlx_nn_rope(options, offset):
    x = _x(2, 3, 6, 8)
    offset = mx.array(5, mx.int32) if offset == "array" else offset
    theirs = mnn.RoPE(**options)(x, offset)
    ours = nn.RoPE(**options)
    _close(ours({}, x, offset=offset), theirs)
    _close(ft.jit(lambda x, o: ours({}, x, offset=o))(x, offset), theirs)
    assert ours.init(random.key(0), x) == ({}, {})


def test_rope_layer_with_frequencies_matches_mx_fast_rope():
    x, freqs = _x(2, 3, 6, 8), [1.0, 3.0, 50.0, 900.0]
    theirs = mx.fast.rope(x, 8, traditional=False, base=None, scale=1.0, offset=2,
                          freqs=mx.array(freqs))
    layer = nn.RoPE(8, freqs=mx.array(freqs))
    assert layer.freqs == tuple(freqs) and hash(layer) == hash(nn.RoPE(8, freqs=freqs))
    _close(layer({}, x, offset=2), theirs)
    with pytest.raises(ValueError, match="freqs must have dims // 2 = 4 entries"):
        nn.RoPE(8, freqs=freqs[:3])


def test_rope_gradients_match_mlx():
    x, w = _x(2, 2, 5, 8), _x(2, 2, 5, 8)
    offset = mx.array(3, mx.int32)
    ours = ft.grad(lambda x: (F.rope(x, 8, offset=offset) * w).sum())(x)
    theirs = mx.grad(lambda x: (mx.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0,
                                             offset=offset) * w).sum())(x)
    _close(ours, theirs)
    # A rotation: the gradient of |rope(x)|^2 / 2 is x itself.
    _close(ft.grad(lambda x: (F.rope(x, 8, offset=offset) ** 2).sum() / 2)(x), x)


def test_rope_offset_array_under_jit_traces_once():
    traces = []

    def f(x, offset):
        traces.append(1)
        return F.rope(x, 8, offset=offset)

    jitted, x = ft.jit(f), _x(1, 2, 3, 8)
    for offset in range(4):
        _close(jitted(x, mx.array(offset, mx.int32)), mnn.RoPE(8)(x, offset))
    assert len(traces) == 1


def test_rope_vmapped_over_offsets_is_one_per_example():
    x, offsets = _x(3, 1, 2, 4, 8), mx.array([0, 2, 7], mx.int32)
    out = ft.vmap(lambda x, o: F.rope(x, 8, offset=o))(x, offsets)
    for i in range(3):
        _close(out[i], mnn.RoPE(8)(x[i], int(offsets[i])))


def test_bad_rope_arguments_name_them():
    x = _x(1, 4, 8)
    with pytest.raises(ValueError, match="dims must be even"):
        F.rope(x, 5)
    with pytest.raises(ValueError, match="dims must be even"):
        nn.RoPE(16)({}, x)
    with pytest.raises(ValueError, match="x must have at least 3 dimensions"):
        F.rope(x[0], 8)
    with pytest.raises(TypeError, match="x must be floating"):
        F.rope(x.astype(mx.int32), 8)
    with pytest.raises(TypeError, match="offset must be an int or an integer array"):
        F.rope(x, 8, offset=mx.array(1.5))
    with pytest.raises(ValueError, match="offset must be a scalar or one per batch entry"):
        F.rope(x, 8, offset=mx.array([1, 2], mx.int32))


# ----------------------------------------------------------------------------
# SwiGLU and grouped-query attention
# ----------------------------------------------------------------------------


def _args(**overrides) -> mlx_llama.ModelArgs:
    return mlx_llama.ModelArgs.from_dict({**CONFIG, **overrides})


def test_swiglu_matches_mlx_lm():
    gate, x = _x(3, 8), _x(3, 8)
    _close(F.swiglu(gate, x), mlx_swiglu(gate, x))
    for bias in (False, True):
        theirs = mlx_llama.MLP(_args(mlp_bias=bias))
        ours, h = nn.SwiGLU(64, 128, bias), _x(2, 5, 64)
        params = _params_of(theirs)
        assert sorted(nn.utils.flatten_names(params)) == sorted(
            nn.utils.flatten_names(ours.init(random.key(0), h)[0]))
        _close(ours(params, h), theirs(h), atol=1e-4)


ATTENTIONS = [
    dict(),
    dict(num_key_value_heads=1),                    # multi-query
    dict(num_key_value_heads=4),                    # multi-head
    dict(head_dim=32, attention_bias=True),
    dict(rope_traditional=True, rope_theta=500.0),
]


def _attention_pair(overrides: dict) -> tuple[nn.GroupedQueryAttention, dict, mnn.Module]:
    mx.random.seed(1)
    args = _args(**overrides)
    theirs = mlx_llama.Attention(args)
    ours = nn.GroupedQueryAttention(64, args.num_attention_heads, args.num_key_value_heads,
                                    args.head_dim, args.attention_bias, args.rope_theta,
                                    args.rope_traditional)
    return ours, _params_of(theirs), theirs


@pytest.mark.parametrize("overrides", ATTENTIONS, ids=str)
def test_grouped_query_attention_matches_mlx_lm(overrides):
    ours, params, theirs = _attention_pair(overrides)
    x = _x(2, 6, 64)
    _close(ours(params, x), theirs(x, mask="causal"), atol=1e-4)
    # With caches, a prompt then single positions.
    cache = nn.KVCache.empty(2, ours.num_kv_heads, 8, ours.head_dim)
    their_cache = MlxKVCache()
    for chunk in (x[:, :3], x[:, 3:4], x[:, 4:6]):
        mask = "causal" if chunk.shape[1] > 1 else None
        y, cache = ft.jit(lambda p, c, x: ours(p, x, cache=c))(params, cache, chunk)
        _close(y, theirs(chunk, mask=mask, cache=their_cache), atol=1e-4)
    assert cache.offset.item() == 6
    _close(cache.keys[:, :, :6], their_cache.keys[:, :, :6])


def test_attention_vmapped_over_examples_with_caches_equals_the_batch():
    ours, params, _ = _attention_pair({})
    x = _x(3, 5, 64)

    def one(x):  # a prompt of 3, then 2 single steps, into one example's cache
        cache = nn.KVCache.empty(1, 2, 8, 16)
        outs = []
        for chunk in (x[None, :3], x[None, 3:4], x[None, 4:5]):
            y, cache = ours(params, chunk, cache=cache)
            outs.append(y[0])
        return outs

    batched = ft.vmap(one)(x)
    _close(mx.concatenate(batched, axis=1), ours(params, x), atol=1e-5)


def test_bad_attention_and_cache_arguments_name_them():
    with pytest.raises(ValueError, match="num_kv_heads=3 must divide num_heads=4"):
        nn.GroupedQueryAttention(64, 4, 3)
    with pytest.raises(ValueError, match="num_heads"):
        nn.GroupedQueryAttention(64, 0)
    with pytest.raises(ValueError, match="max_len"):
        nn.KVCache.empty(1, 2, 0, 16)
    attn = nn.GroupedQueryAttention(64, 4, 2)
    params, _ = attn.init(random.key(0), _x(1, 2, 64))
    with pytest.raises(ValueError, match="do not fit in max_len=4"):
        attn(params, _x(1, 5, 64), cache=nn.KVCache.empty(1, 2, 4, 16))
    with pytest.raises(ValueError, match="5 new positions do not fit in max_len=4"):
        ft.jit(lambda x, c: attn(params, x, cache=c))(_x(1, 5, 64),
                                                      nn.KVCache.empty(1, 2, 4, 16))
    with pytest.raises(ValueError, match="num_kv_heads=2"):
        attn(params, _x(1, 5, 64), cache=nn.KVCache.empty(1, 4, 8, 16))
    with pytest.raises(TypeError, match="cache must be an nn.KVCache"):
        attn(params, _x(1, 5, 64), cache=(mx.zeros((1, 2, 8, 16)),) * 2)
    with pytest.raises(ValueError, match="x must be"):
        attn(params, _x(5, 64))
    with pytest.raises(ValueError, match="has shape"):
        attn({**params, "k_proj": {"weight": _x(64, 64)}}, _x(1, 5, 64))


# ----------------------------------------------------------------------------
# The model: configurations, vmap and the decoding step's traces
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [
    dict(head_dim=32), dict(attention_bias=True, mlp_bias=True),
    dict(rope_traditional=True, rope_theta=500.0), dict(num_key_value_heads=1),
], ids=str)
def test_llama_configurations_match_mlx_lm(overrides):
    mx.random.seed(2)
    theirs = mlx_llama.Model(_args(**overrides))
    model, params = Llama(LlamaArgs.from_dict({**CONFIG, **overrides})), _params_of(theirs)
    _close(model(params, TOKENS), theirs(TOKENS), rtol=1e-4)
    cache, their_cache = model.cache(2, 8), make_prompt_cache(theirs)
    for chunk in (TOKENS[:, :6], TOKENS[:, 6:7], TOKENS[:, 7:]):
        logits, cache = model(params, chunk, cache=cache)
        _close(logits, theirs(chunk, cache=their_cache), rtol=1e-4)


ROPE_SCALINGS = [
    {"type": "linear", "factor": 2.0},
    {"rope_type": "default"},
    # Llama 3.1's; with this head_dim every frequency is stretched or kept.
    {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
     "original_max_position_embeddings": 8192},
    # A short original context, so that some frequencies are interpolated.
    {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 64},
]


@pytest.mark.parametrize("scaling", ROPE_SCALINGS, ids=str)
def test_llama_rope_scalings_match_mlx_lm(scaling):
    config = {**CONFIG, "rope_theta": 500000.0, "rope_scaling": scaling}
    mx.random.seed(5)
    theirs = mlx_llama.Model(mlx_llama.ModelArgs.from_dict(config))
    model, params = Llama(LlamaArgs.from_dict(config)), _params_of(theirs)
    assert hash(model) == hash(Llama(LlamaArgs.from_dict(config)))
    _close(model(params, TOKENS), theirs(TOKENS), rtol=1e-4)
    cache, their_cache = model.cache(2, 8), make_prompt_cache(theirs)
    for chunk in (TOKENS[:, :6], TOKENS[:, 6:7]):
        logits, cache = ft.jit(lambda p, t, c: model(p, t, cache=c))(params, chunk, cache)
        _close(logits, theirs(chunk, cache=their_cache), rtol=1e-4)


def test_unsupported_rope_scalings_are_named():
    with pytest.raises(ValueError, match="rope_scaling of type 'longrope' is not supported"):
        LlamaArgs.from_dict({**CONFIG, "rope_scaling": {"rope_type": "longrope"}})
    with pytest.raises(ValueError, match="rope_scaling of type 'llama3' needs a 'factor'"):
        LlamaArgs.from_dict({**CONFIG, "rope_scaling": {"rope_type": "llama3"}})


def test_llama_vmapped_over_sequences_equals_the_batch():
    model = Llama(LlamaArgs.from_dict(CONFIG))
    params, _ = model.init(random.key(0), TOKENS)
    batched = ft.vmap(lambda tokens: model(params, tokens[None])[0])(TOKENS)
    _close(batched, model(params, TOKENS), atol=1e-5)


def test_decoding_step_traces_once_per_shape():
    model = Llama(LlamaArgs.from_dict(CONFIG))
    params, _ = model.init(random.key(0), TOKENS)
    traces = []

    def step(params, tokens, cache):
        traces.append(tokens.shape)
        return model(params, tokens, cache=cache)

    step, cache = ft.jit(step), model.cache(2, 12)
    logits, cache = step(params, TOKENS[:, :4], cache)
    for i in range(4, 8):
        logits, cache = step(params, TOKENS[:, i:i + 1], cache)
    assert traces == [(2, 4), (2, 1)]
    _close(logits[:, -1], model(params, TOKENS)[:, -1], atol=1e-5)


def test_bad_model_arguments_name_them():
    model = Llama(LlamaArgs.from_dict(CONFIG))
    params, _ = model.init(random.key(0), TOKENS)
    with pytest.raises(TypeError, match="args must be LlamaArgs"):
        Llama(CONFIG)
    with pytest.raises(TypeError, match="cache must be a list of 2"):
        model(params, TOKENS, cache=model.cache(2, 16)[:1])
    with pytest.raises(ValueError, match="max_len=4 has no room"):
        generate(model, params, mx.array([1, 2, 3]), 5, max_len=4)
    with pytest.raises(ValueError, match="max_tokens must be a positive int"):
        generate(model, params, mx.array([1, 2, 3]), 0)
    with pytest.raises(ValueError, match="needs a key"):
        generate(model, params, mx.array([1, 2, 3]), 2, temperature=0.5)
    with pytest.raises(ValueError, match="lm_head.*has shape"):
        model({**params, "lm_head": {"weight": _x(3, 64)}}, TOKENS)


def test_sampling_is_deterministic_per_key():
    model = Llama(LlamaArgs.from_dict(CONFIG))
    params, _ = model.init(random.key(0), TOKENS)
    prompt = mx.array([5, 9, 100])
    one = generate(model, params, prompt, 6, temperature=1.0, key=random.key(7))
    assert one.tolist() == generate(model, params, prompt, 6, temperature=1.0,
                                    key=random.key(7)).tolist()
    assert one.dtype == mx.int32 and one.shape == (6,)


def test_bfloat16_weights_decode_as_mlx_lm():
    # Checkpoints are mostly bfloat16: the cache keeps the weights' dtype, as
    # mlx-lm's does (a float32 cache gives other logits and, soon, other tokens).
    mx.random.seed(4)
    theirs = mlx_llama.Model(_args())
    theirs.set_dtype(mx.bfloat16)
    theirs.update(nn.utils.unflatten_names({  # larger projections: varied greedy tokens
        k: 3 * v for k, v in tree_flatten(theirs.parameters()) if "proj" in k}))
    model, params = Llama(LlamaArgs.from_dict(CONFIG)), _params_of(theirs)
    cache, their_cache = model.cache(2, 8, mx.bfloat16), make_prompt_cache(theirs)
    for chunk in (TOKENS[:, :5], TOKENS[:, 5:6]):
        logits, cache = model(params, chunk, cache=cache)
        expected = theirs(chunk, cache=their_cache)
        assert logits.dtype == expected.dtype == mx.bfloat16
        _close(logits.astype(mx.float32), expected.astype(mx.float32), rtol=1e-2, atol=1e-2)
    prompt = mx.array([5, 9, 100, 3])
    expected_tokens = [int(t) for t, _ in generate_step(prompt, theirs, max_tokens=12)]
    assert generate(model, params, prompt, 12).tolist() == expected_tokens
