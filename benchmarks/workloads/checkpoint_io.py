"""Checkpoint throughput on 100 MB of float32 parameters (25 layers of a
1024x1024 weight and a bias, in ``{"layers": [...]}``): ``ftorch.save``
against ``mx.save_safetensors`` of the flattened tree (``mlx.utils``'
dotted names), and ``ftorch.load`` against ``mx.load``, on the same
directory. ``ftorch.save`` writes a new file, flushes it to disk and renames
it over the old one (atomic); ``mx.save_safetensors`` overwrites in place
without a flush."""

from __future__ import annotations

import functools
import os
import tempfile

from benchmarks.workloads import Workload

LAYERS, WIDTH = 25, 1024


def inputs(rng):
    out = {}
    for i in range(LAYERS):
        out[f"layers.{i}.weight"] = rng.standard_normal((WIDTH, WIDTH)).astype("float32")
        out[f"layers.{i}.bias"] = rng.standard_normal(WIDTH).astype("float32")
    return out


def _tree(fw, data):
    return {"layers": [{"weight": fw.array(data[f"layers.{i}.weight"]),
                        "bias": fw.array(data[f"layers.{i}.bias"])} for i in range(LAYERS)]}


def _by_name(flat):
    """The loaded arrays in one order for both sides (the results compared)."""
    return [flat[k] for k in sorted(flat)]


@functools.cache
def _directory() -> tempfile.TemporaryDirectory:
    """Where the files go (removed when the process exits)."""
    return tempfile.TemporaryDirectory(prefix="ftorch-bench-ckpt-")


def _path(name):
    return os.path.join(_directory().name, name + ".safetensors")


def mlx_save(fw, mode, data):
    import mlx.core as mx
    from mlx.utils import tree_flatten

    tree = _tree(fw, data)
    mx.eval(tree)
    return lambda: mx.save_safetensors(_path("mlx_save"), dict(tree_flatten(tree)))


def ftorch_save(fw, mode, data):
    import mlx.core as mx

    import ftorch as ft

    tree = _tree(fw, data)
    mx.eval(tree)
    return lambda: ft.save(_path("ftorch_save"), tree)


def mlx_load(fw, mode, data):
    import mlx.core as mx
    from mlx.utils import tree_flatten

    path = _path("mlx_load")
    mx.save_safetensors(path, dict(tree_flatten(_tree(fw, data))))
    return lambda: _by_name(mx.load(path))


def ftorch_load(fw, mode, data):
    from mlx.utils import tree_flatten

    import ftorch as ft

    path = _path("ftorch_load")
    ft.save(path, _tree(fw, data))
    return lambda: _by_name(dict(tree_flatten(ft.load(path))))


WORKLOADS = (
    Workload(name="checkpoint_save", doc=__doc__, modes=("eager",), inputs=inputs,
             builders={"mlx": mlx_save, "ftorch": ftorch_save}, targets=(("eager", 1.1),)),
    Workload(name="checkpoint_load", doc=__doc__, modes=("eager",), inputs=inputs,
             builders={"mlx": mlx_load, "ftorch": ftorch_load}, targets=(("eager", 1.1),),
             rtol=0.0),
)
