"""Forward-mode autodiff: the JVP interpreter (``jvp_flat``) and its graph
transform (``jvp_graph``); ``ftorch.api`` builds ``jvp``, ``linearize`` and
``jacfwd`` on them.

A ``JVPTracer`` carries a primal and its tangent through the function; each
primitive's JVP rule maps both. A tangent of ``None`` is a symbolic zero:
ops whose inputs all have zero tangents run untraced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ftorch.primitives as lax
from ftorch.core import (
    PrimalTracer,
    Trace,
    Tracer,
    call_traced,
    new_main,
    provenance,
)
from ftorch.graph import Graph, evaluate
from ftorch.transforms.staging import derive


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace: Trace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent


class JVPTrace(Trace):
    __slots__ = ()
    transform = "ft.jvp"

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(t is None for t in tangents):
            return prim.bind(*primals, **params)  # constant in this transform
        if prim.jvp is None:
            raise NotImplementedError(f"primitive {prim.name!r} has no JVP rule")
        if provenance.context is None and not provenance.recording:
            out, tangent_out = prim.jvp(primals, tangents, **params)
        else:  # what the rule makes points back at the primal op
            where = provenance.here()
            previous = provenance.context
            provenance.context = where.in_rule(f"the JVP rule of {prim.name}", where.stage)
            try:
                out, tangent_out = prim.jvp(primals, tangents, **params)
            finally:
                provenance.context = previous
        if prim.multiple_results:
            return [o if t is None else JVPTracer(self, o, t) for o, t in zip(out, tangent_out)]
        return out if tangent_out is None else JVPTracer(self, out, tangent_out)


def jvp_flat(f: Callable, primals: list, tangents: list) -> tuple[list, list]:
    """Run ``f`` (a function of a list of leaves returning a list of leaves)
    forward with tangents; zero tangents come back as ``None``."""
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        outs = call_traced(f, [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
        out_primals, out_tangents = [], []
        for o in outs:
            if isinstance(o, Tracer) and o._trace.main is main:
                out_primals.append(o.primal)
                out_tangents.append(o.tangent)
            else:
                out_primals.append(o)
                out_tangents.append(None)
    return out_primals, out_tangents


def jvp_graph(graph: Graph, nonzero: Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[Graph, list[bool]]:
    """The forward-mode derivative of ``graph``, as a graph.

    It takes the primals and the tangents of the inputs marked ``nonzero``,
    and returns the outputs followed by the tangents of the outputs that are
    not symbolic zeros, which the returned list marks. ``instantiate`` (one
    flag, or one per output) asks for a tangent for those outputs even where
    it is zero. Made once per ``(nonzero, instantiate)`` and cached on
    ``graph``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> g = ft.make_graph(fnp.sin)(mx.ones(2))
    >>> print(jvp_graph(g, [True])[0])
    graph(a:f32[2], b:f32[2]) -> (f32[2], f32[2])
      c:f32[2] = sin a
      d:f32[2] = cos a
      e:f32[2] = multiply b d
      return c, e
    """
    mask = tuple(bool(m) for m in nonzero)
    n_out = len(graph.outs)
    inst = ((bool(instantiate),) * n_out if isinstance(instantiate, bool)
            else tuple(bool(i) for i in instantiate))
    n_in = len(graph.in_vars)

    def make(info):
        def flat_f(leaves):
            it = iter(leaves[n_in:])
            full = [next(it) if m else None for m in mask]
            outs, out_tangents = jvp_flat(lambda xs: evaluate(graph, xs), leaves[:n_in], full)
            out_tangents = [lax.zeros_like(o) if t is None and i else t
                            for o, t, i in zip(outs, out_tangents, inst)]
            info.append([t is not None for t in out_tangents])
            return outs + [t for t in out_tangents if t is not None]
        return graph.in_avals + [a for a, m in zip(graph.in_avals, mask) if m], flat_f

    return derive(graph, ("jvp", mask, inst), make)
