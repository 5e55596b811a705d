"""Hessian-vector product, forward over reverse (jvp of grad), of a
128-256-256-10 tanh MLP's cross-entropy w.r.t. its parameters, batch 64."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

SIZES = (128, 256, 256, 10)
BATCH = 64


def inputs(rng):
    y = rng.integers(0, SIZES[-1], BATCH)
    data = {"x": rng.standard_normal((BATCH, SIZES[0])).astype("float32"),
            "onehot": (y[:, None] == range(SIZES[-1])).astype("float32")}
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        for name, shape in ((f"w{i}", (n_in, n_out)), (f"b{i}", (n_out,))):
            data[name] = (rng.standard_normal(shape) * n_in ** -0.5).astype("float32")
            data["v_" + name] = rng.standard_normal(shape).astype("float32")
    return data


def _names():
    return [f"{k}{i}" for i in range(len(SIZES) - 1) for k in "wb"]


def _args(fw, data):
    """Parameters and the direction as flat lists (MLX's jvp takes lists of arrays)."""
    return ([fw.array(data[n]) for n in _names()], [fw.array(data["v_" + n]) for n in _names()],
            fw.array(data["x"]), fw.array(data["onehot"]))


def make_loss(lib, logsumexp):
    def loss(params, x, onehot):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = lib.tanh(h @ params[i] + params[i + 1])
        z = h @ params[-2] + params[-1]
        return lib.mean(logsumexp(z) - lib.sum(z * onehot, -1))
    return loss


def mlx_like(fw, mode, data):
    side = mlx_side(fw)
    grad = side.grad(make_loss(side.lib, lambda z: side.lib.logsumexp(z, axis=-1)))
    if fw.name == "ftorch":
        import ftorch as ft

        def hvp(params, v, x, onehot):
            return ft.jvp(lambda p: grad(p, x, onehot), (params,), (v,))[1]
    else:
        import mlx.core as mx

        def hvp(params, v, x, onehot):
            return mx.jvp(lambda *p: grad(list(p), x, onehot), params, v)[1]
    if mode == "jit":
        hvp = side.jit(hvp)
    args = _args(fw, data)
    return lambda: hvp(*args)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    grad = jax.grad(make_loss(jnp, lambda z: jax.nn.logsumexp(z, axis=-1)))

    @jax.jit
    def hvp(params, v, x, onehot):
        return jax.jvp(lambda p: grad(p, x, onehot), (params,), (v,))[1]

    args = _args(fw, data)
    return lambda: hvp(*args)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad, jvp

    g = grad(make_loss(torch, lambda z: torch.logsumexp(z, -1)))

    def hvp(params, v, x, onehot):
        return jvp(lambda p: g(p, x, onehot), (params,), (v,))[1]

    if mode == "jit":
        hvp = torch.compile(hvp)
    args = _args(fw, data)
    return lambda: hvp(*args)


WORKLOAD = Workload(
    name="hvp", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
