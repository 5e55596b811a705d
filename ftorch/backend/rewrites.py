"""Graph rewrites for MLX's kernels, applied when a graph is lowered
(``ftorch.backend.lowering``) rather than when it is staged, so that the
graph transforms see the program as written.

- ``share_triangular_inverses``: several triangular solves against one
  matrix as products with its inverse. MLX's ``solve_triangular`` (which
  ftorch runs on the CPU stream on every device) inverts its matrix on every
  call (LAPACK ``trtri``, then a product): 32.9 ms before, 20.7 ms after on
  the ``gp`` benchmark.
- ``fuse_summed_matmuls``: a sum over a loop's steps of per-step matmuls as
  one large matmul (a weight gradient accumulated over a ``scan``), what
  the scan's lowering plan runs after its loop.
"""

from __future__ import annotations

from ftorch.core import ShapeDtypeStruct, registry
from ftorch.graph import Eqn, Graph, Var, cse, dce

__all__ = ["for_lowering", "fuse_summed_matmuls", "share_triangular_inverses"]


def for_lowering(graph: Graph) -> Graph:
    """``graph`` with the rewrites every lowering applies (the same graph
    when none applies)."""
    shared = share_triangular_inverses(graph)
    return graph if shared is graph else dce(cse(shared))


def fuse_summed_matmuls(graph: Graph) -> Graph:
    """Rewrite ``sum(matmul(a, b), axis=0)`` of stacked matrices ``a``
    ``[T, M, K]`` and ``b`` ``[T, K, N]`` as one matmul
    ``[M, T*K] @ [T*K, N]``: a sum over steps of per-step products (a weight
    gradient accumulated over a loop) as a single large product."""
    uses: dict[int, int] = {}
    for e in graph.eqns:
        for a in e.inputs:
            uses[id(a)] = uses.get(id(a), 0) + 1
    for a in graph.outs:
        uses[id(a)] = uses.get(id(a), 0) + 1
    producer = {id(v): e for e in graph.eqns for v in e.outs}
    eqns, changed = [], False
    for eqn in graph.eqns:
        src = eqn.inputs[0] if eqn.inputs else None
        mm = producer.get(id(src)) if eqn.prim.name == "sum" else None
        if (mm is not None and mm.prim.name == "matmul" and uses[id(src)] == 1
                and eqn.params == {"axes": (0,), "keepdims": False}
                and all(isinstance(x, Var) and x.aval.ndim == 3 for x in mm.inputs)
                and mm.inputs[0].aval.shape[0] == mm.inputs[1].aval.shape[0]):
            a, b = mm.inputs
            (t, m, k), n = a.aval.shape, b.aval.shape[2]
            prims = registry
            a_t = Var(ShapeDtypeStruct((m, t, k), a.aval.dtype))
            a_r = Var(ShapeDtypeStruct((m, t * k), a.aval.dtype))
            b_r = Var(ShapeDtypeStruct((t * k, n), b.aval.dtype))
            eqns += [Eqn(prims["transpose"], [a], {"axes": (1, 0, 2)}, [a_t]),
                     Eqn(prims["reshape"], [a_t], {"shape": (m, t * k)}, [a_r]),
                     Eqn(prims["reshape"], [b], {"shape": (t * k, n)}, [b_r]),
                     Eqn(prims["matmul"], [a_r, b_r], {}, eqn.outs)]
            changed = True
            continue
        eqns.append(eqn)
    if not changed:
        return graph
    return dce(Graph(graph.in_vars, graph.const_vars, graph.consts, eqns, graph.outs))


def share_triangular_inverses(graph: Graph) -> Graph:
    """Triangular solves against one matrix as products with its inverse,
    when there are several (``cse`` then computes the inverse once).

    MLX's CPU ``solve_triangular`` inverts its matrix on every call (LAPACK
    ``trtri``, then a product), so a vector solve costs as much as an
    inversion. A Cholesky factor is solved against twice forward and four
    times more in reverse mode; one shared inverse saves all but one of
    those inversions."""
    solve = registry.get("triangular_solve")

    def key(eqn: Eqn) -> tuple | None:
        if eqn.prim is not solve or not all(isinstance(a, Var) for a in eqn.inputs):
            return None
        return id(eqn.inputs[0]), eqn.params["lower"], eqn.params["unit_diagonal"]

    counts: dict[tuple, int] = {}
    for eqn in graph.eqns:
        k = key(eqn)
        if k is not None:
            counts[k] = counts.get(k, 0) + 1
    if all(c < 2 for c in counts.values()):
        return graph
    eqns = []
    for eqn in graph.eqns:
        k = key(eqn)
        if k is None or counts[k] < 2:
            eqns.append(eqn)
            continue
        (a, b), params = eqn.inputs, eqn.params
        inv = Var(a.aval)
        eqns.append(Eqn(registry["triangular_inverse"], [a],
                        {"lower": params["lower"], "unit_diagonal": params["unit_diagonal"]},
                        [inv]))
        if params["transpose_a"]:
            nd = len(a.aval.shape)
            inv_t = Var(a.aval)
            eqns.append(Eqn(registry["transpose"], [inv],
                            {"axes": (*range(nd - 2), nd - 1, nd - 2)}, [inv_t]))
            inv = inv_t
        operands = [inv, b] if params["left_side"] else [b, inv]
        eqns.append(Eqn(registry["matmul"], operands, {}, eqn.outs))
    return Graph(graph.in_vars, graph.const_vars, graph.consts, eqns, graph.outs)
