"""Reverse-mode autodiff from per-op VJP rules: the tape interpreter
(``vjp_flat``) and its graph transform (``vjp_graph``); ``ftorch.api``
builds ``vjp``, ``grad``, ``value_and_grad``, ``jacrev`` and ``hessian`` on them.

The forward pass records one ``Node`` per primitive applied to a traced
value (the tape). The pullback walks the nodes in reverse creation order and
applies each primitive's VJP rule. The rules are ftorch ops, so when the
pullback runs inside an outer transform it is itself traced: grad of grad,
jvp of grad and so on. Cotangents of ``None`` are symbolic zeros.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

import ftorch.core.trace as trace_state
import ftorch.primitives as lax
from ftorch.core import (
    INEXACT,
    PrimalTracer,
    Trace,
    Tracer,
    call_traced,
    new_main,
    provenance,
)
from ftorch.graph import Graph, Var, dce, evaluate, split_by_dependence
from ftorch.transforms.staging import checked, derive

_sequence = itertools.count()


class Node:
    """One primitive application on the tape (``prim is None`` for an input)."""

    __slots__ = ("prim", "params", "saved", "out", "parents", "seq", "provenance")

    def __init__(self, prim, params, saved, out, parents):
        self.prim = prim
        self.params = params
        self.saved = saved  # what the VJP rule takes: the primals, or vjp_fwd's residuals
        self.out = out
        self.parents = parents  # per input: (Node, output index) or None
        self.seq = next(_sequence)  # creation order is a topological order
        # Where the primal op was written: set while a graph is re-staged;
        # while one is staged, its equation's (just made); else found from
        # the stack when the NaN checks ask for it.
        if provenance.context is not None:
            self.provenance = provenance.context
        elif trace_state._dynamic is not None:
            self.provenance = provenance.latest()
        else:
            self.provenance = provenance.here() if provenance.recording else None


class VJPTracer(PrimalTracer):
    __slots__ = ("node", "index")

    def __init__(self, trace: Trace, primal: Any, node: Node | None, index: int = 0):
        self._trace = trace
        self.primal = primal
        self.node = node
        self.index = index


class VJPTrace(Trace):
    __slots__ = ()
    transform = "ft.grad/ft.vjp"

    def pure(self, val: Any) -> VJPTracer:
        return VJPTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        # Only floating and complex values carry cotangents: an integer operand
        # (an index, a count) is a constant here even when computed from inputs.
        parents = [None if t.node is None or t.dtype not in INEXACT else (t.node, t.index)
                   for t in tracers]
        if parents.count(None) == len(parents):
            return prim.bind(*primals, **params)  # constant in this transform
        if prim.vjp is None:
            raise NotImplementedError(f"primitive {prim.name!r} has no VJP rule")
        if prim.vjp_fwd is None:
            out = prim.bind(*primals, **params)
            node = Node(prim, params, primals, out, parents)
        else:
            out, residuals, vjp_params = prim.vjp_fwd(primals, **params)
            node = Node(prim, vjp_params, residuals, out, parents)
        if prim.multiple_results:
            return [VJPTracer(self, o, node, i) for i, o in enumerate(out)]
        return VJPTracer(self, out, node)


def backward(roots: list, cotangents: list, inputs: list[Node]) -> list:
    """Propagate ``cotangents`` from the ``roots`` ((node, index) pairs) back
    to the ``inputs`` nodes; returns one cotangent (or ``None``) per input.

    Nodes that have received a cotangent wait on a heap, latest first: a
    node's consumers were all created after it, so by the time it comes up
    every contribution to its cotangent is in. Nodes no cotangent reaches
    are never visited."""
    acc: dict[int, list] = {}
    ready: list = []  # (-seq, node): a max-heap on creation order

    def accumulate(node: Node, index: int, ct: Any) -> None:
        slots = acc.get(id(node))
        if slots is None:
            if node.prim is None:  # an input: its cotangent is the result
                slots = acc[id(node)] = [None]
            else:
                n_out = len(node.out) if node.prim.multiple_results else 1
                slots = acc[id(node)] = [None] * n_out
                heapq.heappush(ready, (-node.seq, node))
        if slots[index] is None:
            slots[index] = ct
        elif node.provenance is None and not provenance.recording:
            slots[index] = lax.add(slots[index], ct)
        else:  # the sum points back at the op whose result it differentiates
            previous, provenance.context = provenance.context, _in_backward(node, "sum")
            try:
                slots[index] = lax.add(slots[index], ct)
            finally:
                provenance.context = previous

    for (node, index), ct in zip(roots, cotangents):
        if ct is not None:
            accumulate(node, index, ct)
    while ready:
        node = heapq.heappop(ready)[1]
        cts = acc.pop(id(node))
        prim = node.prim
        ct = cts if prim.multiple_results else cts[0]
        needed = tuple(p is not None for p in node.parents)
        if node.provenance is None and not provenance.recording:
            cts_in = prim.vjp(ct, node.out, *node.saved, needed=needed, **node.params)
        else:  # what the rule makes points back at the primal op
            previous, provenance.context = provenance.context, _in_backward(node)
            try:
                cts_in = prim.vjp(ct, node.out, *node.saved, needed=needed, **node.params)
            finally:
                provenance.context = previous
        for parent, ct_in in zip(node.parents, cts_in):
            if parent is not None and ct_in is not None:
                accumulate(parent[0], parent[1], ct_in)
    return [acc.get(id(n), [None])[0] for n in inputs]


def _in_backward(node: Node, what: str = "rule") -> provenance.Provenance:
    """The provenance of what ``node``'s VJP rule makes (``what="rule"``) or
    of the sum of its result's cotangents (``"sum"``): the primal op's line
    and scope, in the backward pass."""
    where = node.provenance
    if where is None:
        where = provenance.Provenance(None, 0, "", provenance.current_scope())
    name = node.prim.name if node.prim is not None else "an input"
    rule = (f"the VJP rule of {name}" if what == "rule" else
            f"the sum of the cotangents of {name}'s result")
    return where.in_rule(rule, "backward")


def vjp_flat(f: Callable, primals: list) -> tuple[list, Callable]:
    """Trace ``f`` (a function of a list of leaves returning a list of
    leaves) onto a tape.

    Returns the output leaves and ``pullback(cotangent leaves) -> input
    cotangent leaves`` (``None`` for zero)."""
    with new_main(VJPTrace) as main:
        trace = VJPTrace(main)
        inputs = [Node(None, None, None, p, ()) for p in primals]
        outs = call_traced(f, [VJPTracer(trace, p, n) for p, n in zip(primals, inputs)])
        out_primals, roots = [], []
        for o in outs:
            if isinstance(o, Tracer) and o._trace.main is main:
                out_primals.append(o.primal)
                roots.append(None if o.node is None else (o.node, o.index))
            else:
                out_primals.append(o)
                roots.append(None)

    def pullback(cotangents: list) -> list:
        live = [(r, c) for r, c in zip(roots, cotangents) if r is not None and c is not None]
        if not live:
            return [None] * len(primals)
        return backward([r for r, _ in live], [c for _, c in live], inputs)

    return out_primals, pullback


def vjp_graph(graph: Graph) -> tuple[Graph, Graph, list[bool]]:
    """The reverse-mode derivative of ``graph``, split in two graphs.

    The forward graph maps the inputs to the outputs followed by residuals;
    the backward graph maps the residuals followed by one cotangent per
    output to the cotangents of the inputs that can have one (floating
    inputs the outputs depend on), which the returned list marks.

    Both come from one joint graph of the forward and backward passes: its
    equations that do not depend on a cotangent form the forward graph, and
    the forward values the others use are the residuals. The backward pass
    thus reuses the forward's intermediates instead of recomputing them.
    Made once and cached on ``graph``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fwd, bwd, nonzero = vjp_graph(ft.make_graph(fnp.sin)(mx.ones(2)))
    >>> print(bwd)
    graph(a:f32[2], b:f32[2]) -> f32[2]
      c:f32[2] = multiply b a
      return c
    """
    entry = graph.derived.get("vjp split")
    if entry is not None:
        return entry
    n_in = len(graph.in_vars)

    def make(info):
        def flat_f(leaves):
            outs, pullback = vjp_flat(lambda xs: evaluate(graph, xs), leaves[:n_in])
            in_cts = pullback(list(leaves[n_in:]))
            info.append([c is not None for c in in_cts])
            return outs + [c for c in in_cts if c is not None]
        return graph.in_avals + graph.out_avals, flat_f

    joint, nonzero = derive(graph, ("vjp",), make)
    primals, cts = joint.in_vars[:n_in], joint.in_vars[n_in:]
    n_out = len(graph.outs)
    fwd_eqns, bwd_eqns, on_ct_path = split_by_dependence(joint.eqns, cts)
    # Residuals: forward values (not constants) that the backward pass reads.
    const_ids = {id(v) for v in joint.const_vars}
    residuals, seen = [], set()
    for a in [a for e in bwd_eqns for a in e.inputs] + joint.outs[n_out:]:
        if (isinstance(a, Var) and id(a) not in on_ct_path and id(a) not in const_ids
                and id(a) not in seen):
            seen.add(id(a))
            residuals.append(a)
    fwd = dce(Graph(primals, joint.const_vars, joint.consts, fwd_eqns,
                    joint.outs[:n_out] + residuals))
    bwd = dce(Graph(residuals + cts, joint.const_vars, joint.consts, bwd_eqns,
                    joint.outs[n_out:]))
    fwd.derived["stage"], bwd.derived["stage"] = "forward", "backward"  # for NaN reports
    entry = graph.derived["vjp split"] = (checked(fwd), checked(bwd), nonzero)
    return entry
