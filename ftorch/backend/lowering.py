"""Lowering: a staged graph as MLX calls for this machine.

``lower(graph)`` is one straight-line MLX function of the graph's inputs,
what jit runs in both of its tiers (``mx.compile`` traces it for the
compiled one; ``ftorch.transforms.executable``). It applies the backend's
graph rewrites (``rewrites.for_lowering``) once per graph, then emits each
equation with ``apply_lowering``: the backend's own rule for the primitive
where it has one for the operands (``cpu_math.LOWERINGS``, the fast CPU
math), else the primitive's ``lowering`` rule (higher-order primitives
inline their graphs), else its MLX ``impl``.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> from ftorch.backend.lowering import lower
>>> f = lower(ft.make_graph(lambda x: fnp.sum(x * 2.0))(mx.ones(3)))
>>> f(mx.array([1.0, 2.0, 3.0]))[0].item()
12.0
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ftorch.backend import cpu_math, rewrites
from ftorch.core import Primitive
from ftorch.graph import Graph, interpret

__all__ = ["lower", "apply_lowering", "portable_ops"]

#: While set (``portable_ops``), lowerings emit only ops that
#: ``mx.export_function`` can write: no strided views (``as_strided``).
portable = False


@contextmanager
def portable_ops() -> Iterator[None]:
    """Lowerings in the block emit only ops an ``.mlxfn`` file can hold
    (``ftorch.export``); a rule with a faster form that cannot be written
    (pooling windows as a strided view) takes a portable one."""
    global portable
    previous, portable = portable, True
    try:
        yield
    finally:
        portable = previous


def lower(graph: Graph) -> Callable:
    """``graph`` as one straight-line MLX function of its inputs (see the
    module); the rewritten graph is kept on ``graph``."""
    rewritten = graph.derived.get("lowered form")
    if rewritten is None:
        rewritten = graph.derived["lowered form"] = rewrites.for_lowering(graph)

    def run(*args):
        return interpret(rewritten, args, apply_lowering)

    return run


def apply_lowering(prim: Primitive, vals: list, params: dict) -> Any:
    """One equation as MLX calls: the backend's rule for ``prim`` where it
    applies to these operands, else ``prim.lowering``, else ``prim.impl``."""
    platform = cpu_math.LOWERINGS.get(prim.name)
    if platform is not None and cpu_math.applies(vals[0]):
        return platform(*vals, **params)
    rule = prim.lowering
    return prim.impl(*vals, **params) if rule is None else rule(*vals, **params)
