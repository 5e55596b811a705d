"""What a layer call costs in Python: 50 eager calls of a 5-layer ReLU MLP
of width 32 (Linear, ReLU, ..., Linear: 9 layer calls) on a batch of 8,
written with each framework's own layers (``ftorch.nn``, ``mlx.nn``,
``torch.nn``) from the same weights, then one wait for all results. The
arithmetic is tiny, so the time is the layers' dispatch."""

from __future__ import annotations

from benchmarks.workloads import Workload

WIDTH, DEPTH, BATCH = 32, 5, 8
CALLS = 50


def inputs(rng):
    data = {"x": rng.standard_normal((BATCH, WIDTH)).astype("float32")}
    for i in range(DEPTH):  # mlx.nn's names: Linear i is layer 2 * i of the Sequential
        scale = WIDTH ** -0.5
        data[f"layers.{2 * i}.weight"] = rng.uniform(-scale, scale, (WIDTH, WIDTH)).astype(
            "float32")
        data[f"layers.{2 * i}.bias"] = rng.uniform(-scale, scale, WIDTH).astype("float32")
    return data


def _weights(fw, data):
    return {k: fw.array(v) for k, v in data.items() if k != "x"}


def _repeat(model, x):
    return lambda: [model(x) for _ in range(CALLS)]


def ftorch_build(fw, mode, data):
    import ftorch.nn as nn

    model = nn.Sequential(*[layer for _ in range(DEPTH)
                            for layer in (nn.Linear(WIDTH, WIDTH), nn.ReLU())][:-1])
    params = nn.utils.unflatten_names(_weights(fw, data))
    return _repeat(lambda x: model(params, x), fw.array(data["x"]))


def mlx_build(fw, mode, data):
    import mlx.nn as nn

    model = nn.Sequential(*[layer for _ in range(DEPTH)
                            for layer in (nn.Linear(WIDTH, WIDTH), nn.ReLU())][:-1])
    model.load_weights(list(_weights(fw, data).items()))
    return _repeat(model, fw.array(data["x"]))


def torch_build(fw, mode, data):
    import torch

    model = torch.nn.Sequential(*[layer for _ in range(DEPTH)
                                  for layer in (torch.nn.Linear(WIDTH, WIDTH),
                                                torch.nn.ReLU())][:-1]).to(fw.target)
    model.load_state_dict(_weights(fw, data))
    x = fw.array(data["x"])

    def step():
        with torch.no_grad():
            return [model(x) for _ in range(CALLS)]

    return step


WORKLOAD = Workload(
    name="mlp_eager_small", doc=__doc__, modes=("eager",), inputs=inputs, calls_per_step=CALLS,
    builders={"mlx": mlx_build, "ftorch": ftorch_build, "torch": torch_build})
