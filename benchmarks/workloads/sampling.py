"""Sampling throughput outside transforms: one million standard normal
draws from the same key, ``ftorch.random.normal`` against
``mx.random.normal``."""

from __future__ import annotations

from benchmarks.workloads import Workload

N = 1_000_000


def inputs(rng):
    return {}


def mlx_build(fw, mode, data):
    import mlx.core as mx

    key = mx.random.key(0)
    return lambda: mx.random.normal((N,), key=key)


def ftorch_build(fw, mode, data):
    import ftorch.random as random

    key = random.key(0)
    return lambda: random.normal(key, (N,))


WORKLOAD = Workload(
    name="sampling", doc=__doc__, modes=("eager",), inputs=inputs,
    targets=(("eager", 1.05),), builders={"mlx": mlx_build, "ftorch": ftorch_build})
