"""One SGD step of a small decoder-only transformer language model: vocab
256, 2 pre-norm layers of width 128 with 4 causal attention heads and a GELU
MLP, context 64, batch 8; cross-entropy on next tokens."""

from __future__ import annotations

import math
from types import SimpleNamespace

from benchmarks.workloads import Workload, mlx_side

VOCAB, SEQ, BATCH, DIM, HEADS, LAYERS = 256, 64, 8, 128, 4, 2
LR = 0.01


def inputs(rng):
    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype("float32")

    tokens = rng.integers(0, VOCAB, (BATCH, SEQ + 1)).astype("int32")
    data = {"tokens": tokens[:, :-1], "targets": tokens[:, 1:],
            "emb": normal(VOCAB, DIM, scale=0.1), "pos": normal(SEQ, DIM, scale=0.1),
            "g_final": 1 + normal(DIM, scale=0.1), "head": normal(DIM, VOCAB, scale=DIM ** -0.5)}
    for i in range(LAYERS):
        data.update({f"{i}.qkv": normal(DIM, 3 * DIM, scale=DIM ** -0.5),
                     f"{i}.out": normal(DIM, DIM, scale=DIM ** -0.5),
                     f"{i}.up": normal(DIM, 4 * DIM, scale=DIM ** -0.5),
                     f"{i}.down": normal(4 * DIM, DIM, scale=(4 * DIM) ** -0.5),
                     f"{i}.g1": 1 + normal(DIM, scale=0.1), f"{i}.g2": 1 + normal(DIM, scale=0.1)})
    return data


def params_of(fw, data):
    layer_keys = ("qkv", "out", "up", "down", "g1", "g2")
    return {"emb": fw.array(data["emb"]), "pos": fw.array(data["pos"]),
            "g_final": fw.array(data["g_final"]), "head": fw.array(data["head"]),
            "layers": [{k: fw.array(data[f"{i}.{k}"]) for k in layer_keys} for i in range(LAYERS)]}


def make_loss(ops):
    """The LM loss written against ``ops``: a NumPy-like module (ftorch.numpy,
    mlx.core, jax.numpy) or the adapter below for PyTorch."""
    dh = DIM // HEADS

    def norm(h, g):
        mu = ops.mean(h, axis=-1, keepdims=True)
        var = ops.mean(ops.square(h - mu), axis=-1, keepdims=True)
        return (h - mu) * ops.rsqrt(var + 1e-5) * g

    def softmax(a):
        e = ops.exp(a - ops.max(a, axis=-1, keepdims=True))
        return e / ops.sum(e, axis=-1, keepdims=True)

    def gelu(u):
        return 0.5 * u * (1 + ops.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u * u * u)))

    def heads(t):  # (batch, seq, dim) -> (batch, heads, seq, dh)
        return ops.transpose(ops.reshape(t, (BATCH, SEQ, HEADS, dh)), (0, 2, 1, 3))

    def block(p, h, mask):
        q, k, v = ops.split(norm(h, p["g1"]) @ p["qkv"], 3, axis=-1)
        att = softmax(heads(q) @ ops.swapaxes(heads(k), -1, -2) * dh ** -0.5 + mask)
        o = ops.reshape(ops.transpose(att @ heads(v), (0, 2, 1, 3)), (BATCH, SEQ, DIM))
        h = h + o @ p["out"]
        return h + gelu(norm(h, p["g2"]) @ p["up"]) @ p["down"]

    def loss(params, tokens, targets, mask):
        h = params["emb"][tokens] + params["pos"]
        for p in params["layers"]:
            h = block(p, h, mask)
        logits = norm(h, params["g_final"]) @ params["head"]
        picked = ops.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
        return ops.mean(ops.logsumexp(logits, axis=-1) - picked)

    return loss


def _args(fw, data):
    import numpy as np

    mask = np.triu(np.full((SEQ, SEQ), -1e9, np.float32), k=1)
    return (params_of(fw, data), fw.array(data["tokens"]), fw.array(data["targets"]),
            fw.array(mask))


def mlx_like(fw, mode, data):
    side = mlx_side(fw)
    vg = side.value_and_grad(make_loss(side.lib))

    def step(params, *batch):
        loss, grads = vg(params, *batch)
        return loss, side.tree_map(lambda p, g: p - LR * g, params, grads)

    if mode == "jit":
        step = side.jit(step)
    args = _args(fw, data)
    return lambda: step(*args)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    ops = SimpleNamespace(**{n: getattr(jnp, n) for n in (
        "mean", "square", "exp", "max", "sum", "tanh", "transpose", "reshape", "split",
        "swapaxes", "take_along_axis")}, rsqrt=jax.lax.rsqrt, logsumexp=jax.nn.logsumexp)
    vg = jax.value_and_grad(make_loss(ops))

    @jax.jit
    def step(params, *batch):
        loss, grads = vg(params, *batch)
        return loss, jax.tree.map(lambda p, g: p - LR * g, params, grads)

    args = _args(fw, data)
    return lambda: step(*args)


def torch_ops():
    import torch

    return SimpleNamespace(
        mean=lambda x, axis=None, keepdims=False: (
            torch.mean(x) if axis is None else torch.mean(x, axis, keepdim=keepdims)),
        sum=lambda x, axis, keepdims=False: torch.sum(x, axis, keepdim=keepdims),
        max=lambda x, axis, keepdims=False: torch.amax(x, axis, keepdim=keepdims),
        logsumexp=lambda x, axis: torch.logsumexp(x, axis),
        split=lambda x, n, axis: torch.chunk(x, n, axis),
        transpose=torch.permute, swapaxes=torch.transpose, reshape=torch.reshape,
        take_along_axis=lambda x, i, axis: torch.take_along_dim(x, i.long(), axis),
        square=torch.square, exp=torch.exp, tanh=torch.tanh, rsqrt=torch.rsqrt)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad_and_value

    gv = grad_and_value(make_loss(torch_ops()))

    def step(params, *batch):
        grads, loss = gv(params, *batch)
        return loss, torch.utils._pytree.tree_map(lambda p, g: p - LR * g, params, grads)

    if mode == "jit":
        step = torch.compile(step)
    params, tokens, targets, mask = _args(fw, data)
    tokens = tokens.long()
    return lambda: step(params, tokens, targets, mask)


WORKLOAD = Workload(
    name="transformer", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
