"""Steady-state call overhead of a compiled function of 10 tiny arrays
(it adds them): 100 calls, then one wait for all results."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

N_ARGS = 10
CALLS = 100


def inputs(rng):
    return {f"x{i}": rng.standard_normal(2).astype("float32") for i in range(N_ARGS)}


def _add_all(*xs):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def _repeat(f, fw, data):
    xs = [fw.array(data[f"x{i}"]) for i in range(N_ARGS)]
    return lambda: [f(*xs) for _ in range(CALLS)]


def mlx_like(fw, mode, data):
    return _repeat(mlx_side(fw).jit(_add_all), fw, data)


def jax_build(fw, mode, data):
    import jax

    return _repeat(jax.jit(_add_all), fw, data)


def torch_build(fw, mode, data):
    import torch

    return _repeat(torch.compile(_add_all), fw, data)


WORKLOAD = Workload(
    name="jit_overhead", doc=__doc__, modes=("jit",), inputs=inputs, calls_per_step=CALLS,
    targets=(("jit", 2.0),),
    builders={"mlx": mlx_like, "ftorch": mlx_like, "jax": jax_build, "torch": torch_build})
