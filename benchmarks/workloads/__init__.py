"""The workloads, one module each, in the order the table shows them.

A workload makes its inputs once with NumPy (the same numbers for every
framework) and has one builder per framework: ``build(fw, mode, data)``
returns a step, a function of no arguments that computes one result (a
pytree of arrays) without waiting for it. MLX and ftorch share one model
function written against a module of ops (``mlx.core`` or ``ftorch.numpy``,
which has the same names), so the two sides compute the same graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Workload:
    name: str
    doc: str
    modes: tuple[str, ...]
    inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    builders: dict[str, Callable[..., Callable[[], Any]]]
    #: calls of the function under test per step (the table shows per call).
    calls_per_step: int = 1
    #: targets for ftorch / raw MLX, per mode.
    targets: tuple[tuple[str, float], ...] = (("eager", 1.3), ("jit", 1.05))
    #: how far results may differ between frameworks (relative to their largest magnitude).
    rtol: float = 2e-3
    #: also report each framework's peak memory in one step (where it can tell).
    memory: bool = False
    #: how many leading leaves of each step's result must agree (None: all).
    compared: int | None = None
    #: the inputs at a size the tests run in a moment (None: ``inputs``).
    small: Callable[[np.random.Generator], dict[str, np.ndarray]] | None = None


def mlx_side(fw) -> Any:
    """The ops module and transforms of the MLX-like side ``fw`` names."""
    from types import SimpleNamespace

    if fw.name == "ftorch":
        import ftorch as ft
        import ftorch.numpy as fnp

        return SimpleNamespace(lib=fnp, value_and_grad=ft.value_and_grad, grad=ft.grad,
                               vmap=ft.vmap, jit=ft.jit, tree_map=ft.tree.map,
                               checkpoint=ft.checkpoint)
    import mlx.core as mx
    from mlx.utils import tree_map

    return SimpleNamespace(lib=mx, value_and_grad=mx.value_and_grad, grad=mx.grad,
                           vmap=mx.vmap, jit=mx.compile, tree_map=tree_map,
                           checkpoint=mx.checkpoint)


def _all() -> dict[str, Workload]:
    from benchmarks.workloads import (
        chain,
        checkpoint_io,
        deep_mlp,
        deep_mlp_remat,
        gp,
        hvp,
        jit_overhead,
        long_loops,
        mixed_precision,
        mlp_eager_small,
        mlp_train,
        mlx_untouched,
        nn_train,
        optim_update,
        per_example,
        profiler,
        qlora,
        quantized,
        rnn,
        rnn_scan,
        sampling,
        transformer,
    )

    mods = (chain, mlp_train, per_example, hvp, transformer, rnn, rnn_scan, sampling,
            deep_mlp, deep_mlp_remat, optim_update, nn_train, mlp_eager_small, gp,
            checkpoint_io, jit_overhead, mlx_untouched, long_loops, quantized, qlora,
            mixed_precision, profiler)
    # A module defines WORKLOAD, or WORKLOADS for a family of rows.
    found = [w for m in mods for w in getattr(m, "WORKLOADS", None) or (m.WORKLOAD,)]
    return {w.name: w for w in found}


WORKLOADS = _all()
