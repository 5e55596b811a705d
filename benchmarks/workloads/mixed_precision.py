"""Mixed precision: the ``transformer`` row's SGD step (and ``mlp_train``'s)
under ``ft.amp.autocast`` in bfloat16, in the ftorch column, against the
same step in float32 in raw MLX, in the MLX column. The ratio is what
bfloat16 autocast costs or saves against float32 on this device (MLX's CPU
has no fast bfloat16 matmul, so it costs there), the transform's own
overhead included; the peak memory of each is beside it.
"""

from __future__ import annotations

from benchmarks.workloads import Workload, mlp_train, mlx_side, transformer


def _autocast_vs_float32(module, make_loss_args):
    def build(fw, mode, data):
        side = mlx_side(fw)
        loss = module.make_loss(*make_loss_args(side.lib))
        if fw.name == "ftorch":
            import ftorch as ft

            loss = ft.amp.autocast(loss, "bfloat16")
        vg = side.value_and_grad(loss)
        lr = module.LR

        def step(params, *batch):
            value, grads = vg(params, *batch)
            return value, side.tree_map(lambda p, g: p - lr * g, params, grads)

        step = side.jit(step)
        args = module._args(fw, data) if hasattr(module, "_args") else (
            module.params_of(fw, data), fw.array(data["x"]), fw.array(data["onehot"]))
        return lambda: step(*args)
    return build


WORKLOADS = (
    Workload(name="transformer_bf16", doc=__doc__, modes=("jit",), inputs=transformer.inputs,
             builders={n: _autocast_vs_float32(transformer, lambda lib: (lib,))
                       for n in ("mlx", "ftorch")},
             targets=(), rtol=3e-2, memory=True, compared=1),
    Workload(name="mlp_train_bf16", doc=__doc__, modes=("jit",), inputs=mlp_train.inputs,
             builders={n: _autocast_vs_float32(mlp_train, lambda lib: (
                 lib, lambda h: lib.maximum(h, 0.0), lambda z: lib.logsumexp(z, axis=-1)))
                 for n in ("mlx", "ftorch")},
             targets=(), rtol=3e-2, memory=True, compared=1),
)
