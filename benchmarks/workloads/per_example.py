"""Per-example gradients: vmap of grad of a 64-128-10 ReLU MLP's
cross-entropy over a batch of 64 examples."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

SIZES = (64, 128, 10)
BATCH = 64


def inputs(rng):
    y = rng.integers(0, SIZES[-1], BATCH)
    return {"w1": (rng.standard_normal(SIZES[:2]) * 0.1).astype("float32"),
            "b1": (rng.standard_normal(SIZES[1]) * 0.1).astype("float32"),
            "w2": (rng.standard_normal(SIZES[1:]) * 0.1).astype("float32"),
            "x": rng.standard_normal((BATCH, SIZES[0])).astype("float32"),
            "onehot": (y[:, None] == range(SIZES[-1])).astype("float32")}


def make_loss(lib, relu, logsumexp):
    """One example's loss (``x`` is a vector) for any NumPy-like ``lib``."""
    def loss(p, x, onehot):
        z = relu(x @ p["w1"] + p["b1"]) @ p["w2"]
        return logsumexp(z) - lib.sum(z * onehot)
    return loss


def _args(fw, data):
    return ({k: fw.array(data[k]) for k in ("w1", "b1", "w2")}, fw.array(data["x"]),
            fw.array(data["onehot"]))


def mlx_like(fw, mode, data):
    side = mlx_side(fw)
    lib = side.lib
    loss = make_loss(lib, lambda h: lib.maximum(h, 0.0), lambda z: lib.logsumexp(z))
    f = side.vmap(side.grad(loss), in_axes=(None, 0, 0))
    if mode == "jit":
        f = side.jit(f)
    args = _args(fw, data)
    return lambda: f(*args)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    loss = make_loss(jnp, jax.nn.relu, jax.nn.logsumexp)
    f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    args = _args(fw, data)
    return lambda: f(*args)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad, vmap

    loss = make_loss(torch, torch.relu, lambda z: torch.logsumexp(z, -1))
    f = vmap(grad(loss), in_dims=(None, 0, 0))
    if mode == "jit":
        f = torch.compile(f)
    args = _args(fw, data)
    return lambda: f(*args)


WORKLOAD = Workload(
    name="per_example", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
