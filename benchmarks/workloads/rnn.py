"""An Elman RNN (tanh, hidden 128, input 32, batch 16) unrolled over 128
steps by a Python loop, and its loss's value and gradient."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

STEPS, BATCH, N_IN, HIDDEN = 128, 16, 32, 128


def inputs(rng, steps=STEPS):
    return {"xs": rng.standard_normal((steps, BATCH, N_IN)).astype("float32"),
            "y": rng.standard_normal((BATCH, 1)).astype("float32"),
            "wx": (rng.standard_normal((N_IN, HIDDEN)) * N_IN ** -0.5).astype("float32"),
            "wh": (rng.standard_normal((HIDDEN, HIDDEN)) * HIDDEN ** -0.5).astype("float32"),
            "b": (rng.standard_normal(HIDDEN) * 0.1).astype("float32"),
            "wo": (rng.standard_normal((HIDDEN, 1)) * HIDDEN ** -0.5).astype("float32")}


def make_loss(lib, steps=STEPS):
    def loss(p, xs, y):
        h = lib.tanh(xs[0] @ p["wx"] + p["b"])
        for t in range(1, steps):
            h = lib.tanh(xs[t] @ p["wx"] + h @ p["wh"] + p["b"])
        return lib.mean(lib.square(h @ p["wo"] - y))
    return loss


def _args(fw, data):
    return ({k: fw.array(data[k]) for k in ("wx", "wh", "b", "wo")}, fw.array(data["xs"]),
            fw.array(data["y"]))


def mlx_like(fw, mode, data):
    side = mlx_side(fw)
    f = side.value_and_grad(make_loss(side.lib))
    if mode == "jit":
        f = side.jit(f)
    args = _args(fw, data)
    return lambda: f(*args)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    f = jax.jit(jax.value_and_grad(make_loss(jnp)))
    args = _args(fw, data)
    return lambda: f(*args)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad_and_value

    gv = grad_and_value(make_loss(torch))

    def f(p, xs, y):
        grads, loss = gv(p, xs, y)
        return loss, grads

    if mode == "jit":
        f = torch.compile(f)
    args = _args(fw, data)
    return lambda: f(*args)


WORKLOAD = Workload(
    name="rnn", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
