"""The gradient of a deep MLP's loss (32 tanh layers of width 512, batch
2048: activations of 4 MiB) with respect to its weights, every activation
kept for the backward pass: the reference for ``deep_mlp_remat``. The row
also reports each framework's peak memory."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

DEPTH, WIDTH, BATCH = 32, 512, 2048
#: layers per checkpointed segment in deep_mlp_remat
SEGMENT = 4


def inputs(rng):
    data = {"x": rng.standard_normal((BATCH, WIDTH)).astype("float32")}
    for i in range(DEPTH):
        data[f"w{i}"] = (rng.standard_normal((WIDTH, WIDTH)) * WIDTH ** -0.5).astype("float32")
    return data


def _args(fw, data):
    return [fw.array(data[f"w{i}"]) for i in range(DEPTH)], fw.array(data["x"])


def make_loss(lib, checkpoint=None):
    """The loss for any NumPy-like ``lib``; with ``checkpoint``, each
    segment of ``SEGMENT`` layers is checkpointed."""
    def segment(ws, h):
        for w in ws:
            h = lib.tanh(h @ w)
        return h

    block = segment if checkpoint is None else checkpoint(segment)

    def loss(ws, x):
        h = x
        for i in range(0, DEPTH, SEGMENT):
            h = block(ws[i:i + SEGMENT], h)
        return lib.mean(h * h)

    return loss


def builders(remat: bool) -> dict:
    def mlx_like(fw, mode, data):
        side = mlx_side(fw)
        grad = side.grad(make_loss(side.lib, side.checkpoint if remat else None))
        if mode == "jit":
            grad = side.jit(grad)
        ws, x = _args(fw, data)
        return lambda: grad(ws, x)

    def jax_build(fw, mode, data):
        import jax
        import jax.numpy as jnp

        grad = jax.jit(jax.grad(make_loss(jnp, jax.checkpoint if remat else None)))
        ws, x = _args(fw, data)
        return lambda: grad(ws, x)

    return {"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build}


WORKLOAD = Workload(name="deep_mlp", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
                    builders=builders(remat=False), memory=True)
