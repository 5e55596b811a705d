"""One SGD step of a 784-512-512-10 ReLU MLP with softmax cross-entropy,
batch 128: value and gradient, then the parameter update."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

SIZES = (784, 512, 512, 10)
BATCH = 128
LR = 0.01


def inputs(rng):
    data = {"x": rng.standard_normal((BATCH, SIZES[0])).astype("float32"),
            "y": rng.integers(0, SIZES[-1], BATCH)}
    data["onehot"] = (data["y"][:, None] == range(SIZES[-1])).astype("float32")
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        data[f"w{i}"] = (rng.standard_normal((n_in, n_out)) * (2 / n_in) ** 0.5).astype("float32")
        data[f"b{i}"] = (rng.standard_normal(n_out) * 0.1).astype("float32")
    return data


def params_of(fw, data):
    return [{"w": fw.array(data[f"w{i}"]), "b": fw.array(data[f"b{i}"])}
            for i in range(len(SIZES) - 1)]


def make_loss(lib, relu, logsumexp):
    """The loss for any NumPy-like ``lib`` (``relu``/``logsumexp`` differ in name)."""
    def loss(params, x, onehot):
        h = x
        for layer in params[:-1]:
            h = relu(h @ layer["w"] + layer["b"])
        z = h @ params[-1]["w"] + params[-1]["b"]
        return lib.mean(logsumexp(z) - lib.sum(z * onehot, -1))
    return loss


def mlx_like(fw, mode, data):
    side = mlx_side(fw)
    lib = side.lib
    vg = side.value_and_grad(make_loss(lib, lambda h: lib.maximum(h, 0.0),
                                       lambda z: lib.logsumexp(z, axis=-1)))

    def step(params, x, onehot):
        loss, grads = vg(params, x, onehot)
        return loss, side.tree_map(lambda p, g: p - LR * g, params, grads)

    if mode == "jit":
        step = side.jit(step)
    params, x, onehot = params_of(fw, data), fw.array(data["x"]), fw.array(data["onehot"])
    return lambda: step(params, x, onehot)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    vg = jax.value_and_grad(make_loss(jnp, jax.nn.relu,
                                      lambda z: jax.nn.logsumexp(z, axis=-1)))

    @jax.jit
    def step(params, x, onehot):
        loss, grads = vg(params, x, onehot)
        return loss, jax.tree.map(lambda p, g: p - LR * g, params, grads)

    params, x, onehot = params_of(fw, data), fw.array(data["x"]), fw.array(data["onehot"])
    return lambda: step(params, x, onehot)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad_and_value

    gv = grad_and_value(make_loss(torch, torch.relu, lambda z: torch.logsumexp(z, -1)))

    def step(params, x, onehot):
        grads, loss = gv(params, x, onehot)
        new = [{k: p[k] - LR * g[k] for k in p} for p, g in zip(params, grads)]
        return loss, new

    if mode == "jit":
        step = torch.compile(step)
    params, x, onehot = params_of(fw, data), fw.array(data["x"]), fw.array(data["onehot"])
    return lambda: step(params, x, onehot)


WORKLOAD = Workload(
    name="mlp_train", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
