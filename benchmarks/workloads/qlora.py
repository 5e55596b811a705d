"""One QLoRA training step of a small Llama (hidden 256, 4 blocks, 8 query and
4 key/value heads, vocabulary 512) on a batch of 4 sequences of 64 tokens:
the 4-bit base (group size 64) frozen, rank-8 adapters on every projection,
the masked next-token cross-entropy, its gradient in the adapters and an
Adam update. MLX's side is mlx-lm's trainer step (``nn.value_and_grad``,
``optimizers.Adam``, ``mx.compile`` with the model and optimizer state as
its inputs and outputs); ftorch's is ``ft.jit`` of the pure step over the
adapters and ``optim.adam``'s state. The row's result is the step's loss.
"""

from __future__ import annotations

from benchmarks.workloads import Workload

CONFIG = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
          "intermediate_size": 512, "num_attention_heads": 8, "num_key_value_heads": 4,
          "rms_norm_eps": 1e-5, "vocab_size": 512, "tie_word_embeddings": True}
SMALL = {**CONFIG, "hidden_size": 64, "num_hidden_layers": 1, "intermediate_size": 128,
         "vocab_size": 128}
BATCH, LENGTH, RANK, SCALE, LR = 4, 64, 8, 10.0, 1e-4
GROUP, BITS = 64, 4


def _inputs(config, group):
    def make(rng):
        return {"tokens": rng.integers(0, config["vocab_size"], (BATCH, LENGTH + 1)),
                "lengths": (rng.integers(LENGTH // 2, LENGTH + 1, BATCH)[:, None]
                            * [0, 1]).astype("int32"),
                "config": config, "group": group}
    return make


def _mlx_model(data):
    """mlx-lm's quantized model with adapters, its trainable parameters the adapters."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx_lm.models import llama
    from mlx_lm.tuner.utils import linear_to_lora_layers

    mx.random.seed(0)
    config = data["config"]
    model = llama.Model(llama.ModelArgs.from_dict(config))
    nn.quantize(model, group_size=data["group"], bits=BITS)
    model.freeze()
    linear_to_lora_layers(model, config["num_hidden_layers"],
                          {"rank": RANK, "scale": SCALE, "dropout": 0.0})
    mx.eval(model.parameters())
    return model


def mlx_build(fw, mode, data):
    from functools import partial

    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx_lm.tuner.trainer import default_loss

    model = _mlx_model(data)
    optimizer = optim.Adam(learning_rate=LR, bias_correction=True)
    loss_and_grad = nn.value_and_grad(model, default_loss)
    state = [model.state, optimizer.state]

    @partial(mx.compile, inputs=state, outputs=state)
    def step(tokens, lengths):
        (loss, _), grads = loss_and_grad(model, tokens, lengths)
        optimizer.update(model, grads)
        return loss

    tokens, lengths = mx.array(data["tokens"]), mx.array(data["lengths"])
    return lambda: step(tokens, lengths)


def ftorch_build(fw, mode, data):
    import mlx.core as mx
    from mlx.utils import tree_flatten

    import ftorch as ft
    import ftorch.numpy as fnp
    from ftorch import nn, optim
    from ftorch.models.llama import Llama, LlamaArgs

    # The same weights and adapters as mlx-lm's side, by name.
    weights = dict(tree_flatten(_mlx_model(data).parameters()))
    model = Llama(LlamaArgs.from_dict(data["config"]))
    params, _ = model.init(ft.random.key(0), mx.zeros((1, 2), mx.int32))
    qmodel, qparams = nn.quantize(model, params, group_size=data["group"], bits=BITS)
    lmodel, _ = nn.lora(qmodel, qparams, ft.random.key(1), rank=RANK, scale=SCALE,
                        predicate=lambda path, layer: path.startswith("model.layers."))
    adapters, base = nn.utils.partition(nn.utils.unflatten_names(weights), nn.is_lora_param)
    opt = optim.adam(LR)

    def loss(adapters, tokens, lengths):
        logits = lmodel(nn.utils.combine(adapters, base), tokens[:, :-1])
        steps = fnp.arange(1, tokens.shape[1])
        mask = (steps >= lengths[:, :1]) & (steps <= lengths[:, 1:])
        ce = nn.losses.cross_entropy(logits, tokens[:, 1:]) * mask
        return fnp.sum(ce) / fnp.sum(mask)

    @ft.jit
    def step(adapters, opt_state, tokens, lengths):
        value, grads = ft.value_and_grad(loss)(adapters, tokens, lengths)
        updates, opt_state = opt.update(grads, opt_state, adapters)
        return value, optim.apply_updates(adapters, updates), opt_state

    state = {"adapters": adapters, "opt": opt.init(adapters)}
    tokens, lengths = mx.array(data["tokens"]), mx.array(data["lengths"])

    def run():
        value, state["adapters"], state["opt"] = step(state["adapters"], state["opt"], tokens,
                                                      lengths)
        return value

    return run


WORKLOAD = Workload(
    name="qlora_step", doc=__doc__, modes=("jit",), inputs=_inputs(CONFIG, GROUP),
    builders={"mlx": mlx_build, "ftorch": ftorch_build}, rtol=1e-4, memory=True,
    targets=(("jit", 1.1),), small=_inputs(SMALL, 32))
