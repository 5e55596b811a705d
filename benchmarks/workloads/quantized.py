"""Quantized matrices (4-bit affine, group size 64), against MLX's own kernels.

- ``qmm_forward``: a 1024-1024-1024 4-bit MLP's forward pass on 16 rows
  (a decoding-sized batch): three ``quantized_matmul`` calls.
- ``qmm_grad``: the same MLP's loss, its value and its gradients in the
  input and in every layer's scales and biases (MLX differentiates those in
  reverse mode), batch 64.
"""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

WIDTH = 1024
LAYERS = 3
GROUP, BITS = 64, 4


def _inputs(batch, width=WIDTH):
    def make(rng):
        data = {"x": rng.standard_normal((batch, width)).astype("float32")}
        for i in range(LAYERS):
            data[f"w{i}"] = (rng.standard_normal((width, width)) * width ** -0.5).astype("float32")
        return data
    return make


def _quantized(fw, data):
    """Each layer's weight as MLX quantizes it: ``(w, scales, biases)``."""
    import mlx.core as mx

    return [tuple(mx.quantize(fw.array(data[f"w{i}"]), GROUP, BITS)) for i in range(LAYERS)]


def make_mlp(lib):
    def mlp(x, layers):
        for i, (w, scales, biases) in enumerate(layers):
            x = lib.quantized_matmul(x, w, scales, biases, group_size=GROUP, bits=BITS)
            if i < len(layers) - 1:
                x = lib.maximum(x, 0.0)
        return x
    return mlp


def forward(fw, mode, data):
    side = mlx_side(fw)
    mlp = make_mlp(side.lib)
    if mode == "jit":
        mlp = side.jit(mlp)
    x, layers = fw.array(data["x"]), _quantized(fw, data)
    return lambda: mlp(x, layers)


def value_and_grads(fw, mode, data):
    side = mlx_side(fw)
    mlp = make_mlp(side.lib)
    weights = [w for w, _, _ in _quantized(fw, data)]

    def loss(x, scales_biases):
        layers = [(w, s, b) for w, (s, b) in zip(weights, scales_biases)]
        return side.lib.mean(mlp(x, layers) ** 2)

    step = side.value_and_grad(loss, argnums=(0, 1))
    if mode == "jit":
        step = side.jit(step)
    x = fw.array(data["x"])
    scales_biases = [(s, b) for _, s, b in _quantized(fw, data)]
    return lambda: step(x, scales_biases)


WORKLOADS = (
    Workload(name="qmm_forward", doc=__doc__, modes=("eager", "jit"), inputs=_inputs(16),
             builders={"mlx": forward, "ftorch": forward}, rtol=1e-4, small=_inputs(2, 128),
             targets=(("eager", 1.05), ("jit", 1.05))),
    Workload(name="qmm_grad", doc=__doc__, modes=("eager", "jit"), inputs=_inputs(64),
             builders={"mlx": value_and_grads, "ftorch": value_and_grads}, rtol=1e-3,
             small=_inputs(4, 128)),
)
