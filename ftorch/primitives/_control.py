"""What the control-flow primitives share: checking that two pytrees of
avals agree, and small graph surgery (reordering a graph's inputs and
outputs, padding it with inputs it ignores)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ftorch.core import ShapeDtypeStruct, format_aval
from ftorch.graph import Graph, Var


def check_same_avals(fname: str, what: str, names: Sequence[str],
                     first: tuple[Any, Sequence[ShapeDtypeStruct], str],
                     second: tuple[Any, Sequence[ShapeDtypeStruct], str],
                     hint: str = "") -> None:
    """Two pytrees of avals must match in structure, shapes and dtypes.

    ``first`` and ``second`` are (tree, avals, label); the error names the
    first leaf that differs and both its shapes/dtypes, then adds ``hint``."""
    (tree_a, avals_a, label_a), (tree_b, avals_b, label_b) = first, second
    if tree_a != tree_b:
        raise TypeError(f"{fname}: {what} must have the same structure, but it is {tree_a} "
                        f"{label_a} and {tree_b} {label_b}{hint}")
    for name, a, b in zip(names, avals_a, avals_b):
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            raise TypeError(f"{fname}: {what} must have the same shapes and dtypes, but {name} "
                            f"is {format_aval(a)} {label_a} and {format_aval(b)} {label_b}"
                            f"{hint}")


def permuted(graph: Graph, in_order: Sequence[int], out_order: Sequence[int]) -> Graph:
    """``graph`` with its inputs and outputs reordered (no restaging)."""
    return Graph([graph.in_vars[i] for i in in_order], graph.const_vars, graph.consts,
                 graph.eqns, [graph.outs[j] for j in out_order])


def padded(graph: Graph, before: Sequence[ShapeDtypeStruct],
           after: Sequence[ShapeDtypeStruct] = (), at: int = 0) -> Graph:
    """``graph`` taking extra inputs it ignores: ``before`` inserted at input
    position ``at``, ``after`` appended."""
    ins = list(graph.in_vars)
    ins[at:at] = [Var(a) for a in before]
    ins += [Var(a) for a in after]
    return Graph(ins, graph.const_vars, graph.consts, graph.eqns, graph.outs)


def split(seq: Sequence, *sizes: int) -> list[list]:
    """``seq`` cut into consecutive pieces of ``sizes``, then the rest."""
    out, start = [], 0
    for n in sizes:
        out.append(list(seq[start:start + n]))
        start += n
    out.append(list(seq[start:]))
    return out
