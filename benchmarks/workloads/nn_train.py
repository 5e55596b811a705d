"""Train steps of whole models written with each framework's own layers and
optimizer: value and gradient of the loss, then an AdamW update (learning
rate 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.01, bias-corrected).
``ftorch.nn`` + ``ftorch.optim`` under ``ft.jit`` (a pure step, its
parameters, state and optimizer state carried from call to call),
``mlx.nn`` + ``mlx.optimizers.AdamW`` under ``mx.compile`` (the model's and
the optimizer's state as the compiled function's inputs and outputs), Flax
(``flax.linen``) + optax under ``jax.jit``, ``torch.nn`` +
``torch.optim.AdamW`` under ``torch.compile``.

Every framework starts from the same NumPy weights (drawn in ``inputs``, in
``mlx.nn``'s names and layouts, transposed for Flax and PyTorch) and data.
Only the loss is compared: Adam's first step is about ``lr * sign(grad)``,
so where a gradient is about 0 the frameworks' updates may differ in sign.
"""

from __future__ import annotations

import importlib.util
import re
from functools import partial

import numpy as np

from benchmarks.workloads import Workload

LR, BETAS, EPS, WEIGHT_DECAY = 1e-3, (0.9, 0.999), 1e-8, 0.01

CNN_DOC = """A train step (AdamW) of the digits CNN of examples/train_digits.py without
its Dropout (random masks cannot agree across frameworks): 3x3 conv 1->32,
BatchNorm (batch statistics), ReLU, 2x2 max pool, 3x3 conv 32->64, BatchNorm,
ReLU, max pool, Linear 256->128, ReLU, Linear 128->10; softmax cross-entropy
on a batch of 64 8x8 images."""
CNN_BATCH = 64

LM_DOC = """A train step (AdamW) of a small causal transformer language model:
vocab 256, token and learned position embeddings, 2 pre-norm encoder layers
(mlx.nn.TransformerEncoder: width 128, 4 heads, ReLU MLP 512, final LayerNorm),
a Linear head; next-token cross-entropy, context 64, batch 16."""
VOCAB, SEQ, LM_BATCH, DIM, HEADS, MLP, LAYERS = 256, 64, 16, 128, 4, 512, 2


# The weights, by mlx.nn's names, in its layouts (Linear (out, in), Conv2d (out, kh, kw, in)).

def _uniform(rng, shape, fan_in):
    return rng.uniform(-fan_in ** -0.5, fan_in ** -0.5, shape).astype("float32")


def _linear(rng, name, n_in, n_out, bias=True):
    out = {f"{name}.weight": _uniform(rng, (n_out, n_in), n_in)}
    if bias:
        out[f"{name}.bias"] = _uniform(rng, (n_out,), n_in)
    return out


def _norm(rng, name, n, running_stats=False):
    out = {f"{name}.weight": (1 + 0.1 * rng.standard_normal(n)).astype("float32"),
           f"{name}.bias": (0.1 * rng.standard_normal(n)).astype("float32")}
    if running_stats:
        out.update({f"{name}.running_mean": np.zeros(n, "float32"),
                    f"{name}.running_var": np.ones(n, "float32")})
    return out


def cnn_inputs(rng):
    w = {}
    for i, (n_in, n_out) in ((0, (1, 32)), (4, (32, 64))):  # conv, then BatchNorm at i + 1
        w[f"layers.{i}.weight"] = _uniform(rng, (n_out, 3, 3, n_in), 9 * n_in)
        w[f"layers.{i}.bias"] = _uniform(rng, (n_out,), 9 * n_in)
        w.update(_norm(rng, f"layers.{i + 1}", n_out, running_stats=True))
    w.update(_linear(rng, "layers.9", 64 * 2 * 2, 128))
    w.update(_linear(rng, "layers.11", 128, 10))
    return {"x": rng.uniform(0, 1, (CNN_BATCH, 8, 8, 1)).astype("float32"),
            "y": rng.integers(0, 10, CNN_BATCH).astype("int32"), **w}


def lm_inputs(rng):
    tokens = rng.integers(0, VOCAB, (LM_BATCH, SEQ + 1)).astype("int32")
    w = {"embedding.weight": (rng.standard_normal((VOCAB, DIM)) * DIM ** -0.5).astype("float32"),
         "position.weight": (rng.standard_normal((SEQ, DIM)) * DIM ** -0.5).astype("float32")}
    for i in range(LAYERS):
        block = f"encoder.layers.{i}"
        for proj in ("query_proj", "key_proj", "value_proj", "out_proj"):
            w.update(_linear(rng, f"{block}.attention.{proj}", DIM, DIM, bias=False))
        w.update({**_norm(rng, f"{block}.ln1", DIM), **_norm(rng, f"{block}.ln2", DIM),
                  **_linear(rng, f"{block}.linear1", DIM, MLP),
                  **_linear(rng, f"{block}.linear2", MLP, DIM)})
    w.update({**_norm(rng, "encoder.ln", DIM), **_linear(rng, "head", DIM, VOCAB)})
    return {"x": tokens[:, :-1], "y": tokens[:, 1:], **w}


def _weights(data):
    return {k: v for k, v in data.items() if k not in ("x", "y")}


# ftorch: ftorch.nn layers, ftorch.optim.adamw, one pure jitted step.

def _ftorch_cnn(weights):
    import mlx.core as mx

    import ftorch as ft
    import ftorch.nn as nn
    import ftorch.random as random

    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm(64), nn.ReLU(), nn.MaxPool2d(2),
        lambda x: x.reshape(x.shape[0], -1),
        nn.Linear(64 * 2 * 2, 128), nn.ReLU(), nn.Linear(128, 10))
    template = ft.eval_shape(model.init, random.key(0),
                             ft.ShapeDtypeStruct((CNN_BATCH, 8, 8, 1), mx.float32))
    params, state = nn.utils.load_weights(weights, *template)
    return partial(model.apply, train=True), params, state


def _ftorch_lm(weights):
    import ftorch.nn as nn
    import ftorch.numpy as fnp

    embedding, position = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
    encoder = nn.TransformerEncoder(LAYERS, DIM, HEADS, mlp_dims=MLP, norm_first=True)
    head = nn.Linear(DIM, VOCAB)

    def apply(params, state, tokens):
        h = (embedding(params["embedding"], tokens)
             + position(params["position"], fnp.arange(SEQ)))
        return head(params["head"], encoder(params["encoder"], h, "causal")), state

    return apply, nn.utils.unflatten_names(weights), {}


def _ftorch_build(model):
    def build(fw, mode, data):
        import ftorch as ft
        import ftorch.nn as nn
        import ftorch.optim as optim

        apply, params, state = model({k: fw.array(v) for k, v in _weights(data).items()})
        opt = optim.adamw(LR, *BETAS, EPS, weight_decay=WEIGHT_DECAY)

        @ft.jit
        def step(params, state, opt_state, x, y):
            def loss_fn(params):
                logits, new_state = apply(params, state, x)
                return nn.losses.cross_entropy(logits, y, reduction="mean"), new_state

            (loss, state), grads = ft.value_and_grad(loss_fn, has_aux=True)(params)
            updates, opt_state = opt.update(grads, opt_state, params)
            return loss, optim.apply_updates(params, updates), state, opt_state

        x, y = fw.array(data["x"]), fw.array(data["y"])
        return _carried(step, (params, state, opt.init(params)), x, y)

    return build


def _carried(step, carry, *batch):
    """A step of no arguments: ``step(*carry, *batch) -> (loss, *carry)``,
    each call's carry fed to the next."""
    box = [carry]

    def run():
        loss, *new = step(*box[0], *batch)
        box[0] = tuple(new)
        return (loss, *new)

    return run


# MLX: mlx.nn modules, mlx.optimizers.AdamW, mx.compile over [model.state, optimizer.state].

def _mlx_cnn():
    import mlx.nn as nn

    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm(64), nn.ReLU(), nn.MaxPool2d(2),
        lambda x: x.reshape(x.shape[0], -1),
        nn.Linear(64 * 2 * 2, 128), nn.ReLU(), nn.Linear(128, 10))


def _mlx_lm():
    import mlx.core as mx
    import mlx.nn as nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding, self.position = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
            self.encoder = nn.TransformerEncoder(LAYERS, DIM, HEADS, mlp_dims=MLP,
                                                 norm_first=True)
            self.head = nn.Linear(DIM, VOCAB)

        def __call__(self, tokens):
            h = self.embedding(tokens) + self.position(mx.arange(SEQ))
            return self.head(self.encoder(h, "causal"))

    return LM()


def _mlx_build(model_fn):
    def build(fw, mode, data):
        import mlx.core as mx
        import mlx.nn as nn
        import mlx.optimizers as optimizers

        model = model_fn()
        model.load_weights([(k, fw.array(v)) for k, v in _weights(data).items()])
        model.train()
        opt = optimizers.AdamW(LR, list(BETAS), EPS, weight_decay=WEIGHT_DECAY,
                               bias_correction=True)
        opt.init(model.trainable_parameters())
        loss_and_grad = nn.value_and_grad(
            model, lambda x, y: nn.losses.cross_entropy(model(x), y, reduction="mean"))
        state = [model.state, opt.state]

        @partial(mx.compile, inputs=state, outputs=state)
        def step(x, y):
            loss, grads = loss_and_grad(x, y)
            opt.update(model, grads)
            return loss

        x, y = fw.array(data["x"]), fw.array(data["y"])
        return lambda: (step(x, y), state)  # evaluating the state runs the update

    return build


# JAX: Flax (linen) modules, optax.adamw, one pure jitted step.

def _flax_cnn():
    import flax.linen as fnn

    class CNN(fnn.Module):
        @fnn.compact
        def __call__(self, x):
            for i, features in ((0, 32), (4, 64)):  # mlx.nn's Sequential indices
                x = fnn.Conv(features, (3, 3), padding=((1, 1), (1, 1)), name=f"layers_{i}")(x)
                x = fnn.BatchNorm(use_running_average=False, momentum=0.9, epsilon=1e-5,
                                  name=f"layers_{i + 1}")(x)
                x = fnn.max_pool(fnn.relu(x), (2, 2), strides=(2, 2))
            x = fnn.relu(fnn.Dense(128, name="layers_9")(x.reshape(x.shape[0], -1)))
            return fnn.Dense(10, name="layers_11")(x)

    return CNN()


def _flax_lm():
    import flax.linen as fnn
    import jax.numpy as jnp

    class Block(fnn.Module):  # mlx.nn.TransformerEncoderLayer, norm_first=True
        @fnn.compact
        def __call__(self, x, mask):
            y = fnn.LayerNorm(epsilon=1e-5, name="ln1")(x)
            x = x + fnn.MultiHeadDotProductAttention(
                HEADS, qkv_features=DIM, use_bias=False, name="attention")(y, mask=mask)
            y = fnn.relu(fnn.Dense(MLP, name="linear1")(fnn.LayerNorm(epsilon=1e-5,
                                                                      name="ln2")(x)))
            return x + fnn.Dense(DIM, name="linear2")(y)

    class Encoder(fnn.Module):
        @fnn.compact
        def __call__(self, x, mask):
            for i in range(LAYERS):
                x = Block(name=f"layers_{i}")(x, mask)
            return fnn.LayerNorm(epsilon=1e-5, name="ln")(x)

    class LM(fnn.Module):
        @fnn.compact
        def __call__(self, tokens):
            h = (fnn.Embed(VOCAB, DIM, name="embedding")(tokens)
                 + fnn.Embed(SEQ, DIM, name="position")(jnp.arange(SEQ)))
            h = Encoder(name="encoder")(h, fnn.make_causal_mask(tokens))
            return fnn.Dense(VOCAB, name="head")(h)

    return LM()


def _flax_variables(weights):
    """mlx.nn-named weights as Flax variables: ``layers.0`` is ``layers_0``;
    Linear ``weight`` (out, in) is Dense ``kernel`` (in, out), Conv2d's
    (out, kh, kw, in) Conv's (kh, kw, in, out); attention projections are
    DenseGeneral kernels split by head; norms' ``weight`` is ``scale``,
    Embedding's ``embedding``; BatchNorm's running statistics are
    ``batch_stats``."""
    heads = {"query_proj": "query", "key_proj": "key", "value_proj": "value"}
    variables = {"params": {}}
    for name, w in weights.items():
        *path, leaf = re.sub(r"\.(\d+)", r"_\1", name).split(".")
        kind = "params"
        if leaf in ("running_mean", "running_var"):
            kind, leaf = "batch_stats", leaf.removeprefix("running_")
        elif path[-1] in heads:
            path[-1], leaf, w = heads[path[-1]], "kernel", w.T.reshape(w.shape[1], HEADS, -1)
        elif path[-1] == "out_proj":
            path[-1], leaf, w = "out", "kernel", w.T.reshape(HEADS, -1, w.shape[0])
        elif leaf == "weight" and w.ndim == 4:
            leaf, w = "kernel", w.transpose(1, 2, 3, 0)
        elif leaf == "weight" and w.ndim == 2:
            leaf, w = ("embedding", w) if path[-1] in ("embedding", "position") else ("kernel", w.T)
        elif leaf == "weight":
            leaf = "scale"
        node = variables.setdefault(kind, {})
        for p in path:
            node = node.setdefault(p, {})
        node[leaf] = w
    return variables


def _jax_build(model_fn):
    def build(fw, mode, data):
        import jax
        import optax

        model = model_fn()
        variables = jax.tree.map(fw.array, _flax_variables(_weights(data)))
        params = variables.pop("params")
        opt = optax.adamw(LR, *BETAS, EPS, weight_decay=WEIGHT_DECAY)

        @jax.jit
        def step(params, stats, opt_state, x, y):
            def loss_fn(params):
                if stats:  # BatchNorm: batch statistics, the running ones updated
                    logits, new = model.apply({"params": params, **stats}, x,
                                              mutable=list(stats))
                else:
                    logits, new = model.apply({"params": params}, x), stats
                return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), new

            (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
            updates, opt_state = opt.update(grads, opt_state, params)
            return loss, optax.apply_updates(params, updates), stats, opt_state

        x, y = fw.array(data["x"]), fw.array(data["y"])
        return _carried(step, (params, variables, opt.init(params)), x, y)

    return build


# PyTorch: torch.nn modules (NCHW inside), torch.optim.AdamW, torch.compile.

def _torch_cnn():
    import torch
    from torch import nn

    class FlattenNHWC(nn.Module):
        def forward(self, x):  # back to channels last, so the Linear sees mlx's order
            return torch.flatten(x.permute(0, 2, 3, 1), 1)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(  # mlx.nn's indices, so its names
                nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                FlattenNHWC(), nn.Linear(64 * 2 * 2, 128), nn.ReLU(), nn.Linear(128, 10))

        def forward(self, x):  # x: NHWC
            return self.layers(x.permute(0, 3, 1, 2))

    return CNN()


def _torch_lm():
    import torch
    from torch import nn

    class Attention(nn.Module):  # mlx.nn.MultiHeadAttention: no biases
        def __init__(self):
            super().__init__()
            self.query_proj, self.key_proj, self.value_proj, self.out_proj = (
                nn.Linear(DIM, DIM, bias=False) for _ in range(4))

        def forward(self, x):
            def heads(t):
                return t.unflatten(-1, (HEADS, -1)).transpose(1, 2)

            q, k, v = (heads(p(x)) for p in (self.query_proj, self.key_proj, self.value_proj))
            o = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out_proj(o.transpose(1, 2).flatten(-2))

    class Block(nn.Module):  # mlx.nn.TransformerEncoderLayer, norm_first=True
        def __init__(self):
            super().__init__()
            self.attention = Attention()
            self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
            self.linear1, self.linear2 = nn.Linear(DIM, MLP), nn.Linear(MLP, DIM)

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.linear2(torch.relu(self.linear1(self.ln2(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln = nn.LayerNorm(DIM)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.ln(x)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding, self.position = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
            self.encoder, self.head = Encoder(), nn.Linear(DIM, VOCAB)
            self.register_buffer("positions", torch.arange(SEQ), persistent=False)

        def forward(self, tokens):
            h = self.embedding(tokens) + self.position(self.positions)
            return self.head(self.encoder(h))

    return LM()


def _torch_build(model_fn):
    def build(fw, mode, data):
        import logging

        import torch

        # Dynamo skips the profiler hook around optimizer.step(), and says so.
        logging.getLogger("torch._dynamo.variables.ctx_manager").setLevel(logging.ERROR)
        model = model_fn().to(fw.target)
        weights = {k: fw.array(v.transpose(0, 3, 1, 2) if v.ndim == 4 else v)  # conv: OIHW
                   for k, v in _weights(data).items()}
        missing, unexpected = model.load_state_dict(weights, strict=False)
        assert not unexpected and all(k.endswith("num_batches_tracked") for k in missing)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), LR, BETAS, EPS, weight_decay=WEIGHT_DECAY)

        @torch.compile
        def step(x, y):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, -2), y.flatten())
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss.detach()

        x, y = fw.array(data["x"]), fw.array(data["y"]).long()
        params = list(model.parameters())
        return lambda: (step(x, y), params)

    return build


def _workload(name, doc, inputs, models):
    ftorch_model, mlx_model, flax_model, torch_model = models
    builders = {"mlx": _mlx_build(mlx_model), "ftorch": _ftorch_build(ftorch_model),
                "torch": _torch_build(torch_model)}
    if all(importlib.util.find_spec(m) for m in ("flax", "optax")):  # with JAX
        builders["jax"] = _jax_build(flax_model)
    return Workload(name=name, doc=doc, modes=("jit",), inputs=inputs, builders=builders,
                    targets=(("jit", 1.05),), compared=1)


WORKLOADS = (
    _workload("digits_cnn", CNN_DOC, cnn_inputs, (_ftorch_cnn, _mlx_cnn, _flax_cnn, _torch_cnn)),
    _workload("transformer_lm", LM_DOC, lm_inputs, (_ftorch_lm, _mlx_lm, _flax_lm, _torch_lm)),
)
