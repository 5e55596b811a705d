"""300 tiny elementwise ops (sin, multiply, add) on an 8-element vector:
what each op costs to dispatch, with no transform."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

N_OPS = 300


def inputs(rng):
    return {"x": rng.standard_normal(8).astype("float32")}


def _chain(sin, mul, add):
    def chain(x):
        for _ in range(N_OPS // 3):
            x = add(mul(sin(x), 1.01), 0.1)
        return x
    return chain


def mlx_like(fw, mode, data):
    side = mlx_side(fw)
    f = _chain(side.lib.sin, side.lib.multiply, side.lib.add)
    if mode == "jit":
        f = side.jit(f)
    x = fw.array(data["x"])
    return lambda: f(x)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    f = jax.jit(_chain(jnp.sin, jnp.multiply, jnp.add))
    x = fw.array(data["x"])
    return lambda: f(x)


def torch_build(fw, mode, data):
    import torch

    f = _chain(torch.sin, torch.mul, torch.add)
    if mode == "jit":
        f = torch.compile(f)
    x = fw.array(data["x"])
    return lambda: f(x)


WORKLOAD = Workload(
    name="chain", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
