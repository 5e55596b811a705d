"""``deep_mlp`` with each segment of 4 layers checkpointed (``ft.checkpoint``,
``mx.checkpoint``, ``jax.checkpoint``, default policies): the backward pass
recomputes a segment's activations from its input instead of storing them.
Compare the time and peak memory with the ``deep_mlp`` row."""

from __future__ import annotations

from benchmarks.workloads import Workload, deep_mlp

WORKLOAD = Workload(name="deep_mlp_remat", doc=__doc__, modes=("eager", "jit"),
                    inputs=deep_mlp.inputs, builders=deep_mlp.builders(remat=True), memory=True)
