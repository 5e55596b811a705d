"""How a staged graph runs on arrays: ``Executable``, jit's unit of
compilation.

An ``Executable`` holds one graph (a jitted function's trace of one call
signature, or a graph derived from one: its JVP, VJP or batched version,
or a loop's body) and runs it on concrete arrays in one of two tiers:

- uncompiled: the graph's lowering (``ftorch.graph.lower``) run op by op,
  as MLX's lazy graph of the lowered ops, with no kernel builds;
- compiled: that lowering traced by ``mx.compile``, which fuses elementwise
  ops into kernels; a graph that reads values on the host (``needs_host``:
  a data-dependent loop) as compiled segments around those equations; a
  graph deeper than ``ft.config.jit_max_compile_depth`` as the uncompiled
  tier runs it (``mx.compile`` would overflow the C stack).

Both tiers run the same lowering, so they give the same bits. The compile
policy (``compile_after``, see ``ft.jit``) says when an executable moves
from the first to the second, timed from its first call. Loops driven from
the host (a long scan, run rolled; a while_loop) compile their bodies in
both tiers, unless the policy is "never": a body's few kernels run
thousands of times in one call (``compiling``).

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> from ftorch.transforms.executable import executable
>>> run = executable(ft.make_graph(lambda x: fnp.sin(x) * 2.0)(mx.zeros(2)))
>>> run(mx.array([0.0, 0.5]))[0].tolist() == (fnp.sin(mx.array([0.0, 0.5])) * 2.0).tolist()
True
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch.backend.lowering import apply_lowering, lower
from ftorch.config import config, seconds_before_compile
from ftorch.graph import Eqn, Graph, Literal, Var, depth, eqn_needs_host, needs_host

__all__ = ["Executable", "executable", "compilable", "segmented", "compiling", "in_tier"]

logger = logging.getLogger("ftorch.jit")

#: Who hears of jit's traces and compilations (the profiler): each is called
#: ``listener(event, graph, seconds)``, with ``event`` ``"trace"`` (``ft.jit``
#: staged a new signature: a cache miss) or ``"compile"`` (an executable's
#: first call in its compiled tier, evaluated). Empty, nothing is timed.
listeners: list[Callable[[str, Graph, float], None]] = []


def tell(event: str, graph: Graph, seconds: float) -> None:
    """Tell the ``listeners`` that ``event`` took ``seconds`` for ``graph``."""
    for listener in listeners:
        listener(event, graph, seconds)


class Executable:
    """One staged graph and how it runs on arrays (see the module).

    ``out_tree`` is the output structure of the function the graph was
    staged from (``None`` for derived graphs, whose callers know theirs).
    ``compile_after`` is the policy, ``"config"`` to read
    ``ft.config.jit_compile_after`` at each call until it compiles.
    ``shared_compiled`` is the compiled function of the whole graph when
    one is shared (jit's dispatcher for a function's signatures); by
    default it is ``mx.compile`` of the lowering.
    """

    __slots__ = ("graph", "out_tree", "compile_after", "lowering", "compiles_whole",
                 "_shared_compiled", "_compiled", "_first_call")

    def __init__(self, graph: Graph, out_tree: Any = None, compile_after: float | str | None =
                 "config", shared_compiled: Callable | None = None):
        self.graph = graph
        self.out_tree = out_tree
        self.compile_after = compile_after
        #: The graph as one straight-line MLX function: what both tiers run.
        self.lowering = lower(graph)
        #: Whether the compiled tier has begun, as one ``mx.compile`` of the whole.
        self.compiles_whole = False
        self._shared_compiled = shared_compiled
        self._compiled: Callable | None = None
        self._first_call: float | None = None

    def __call__(self, *args: mx.array) -> list:
        """The graph's outputs on ``args``, in the tier the policy says now."""
        if self._compiled is not None or self._compile_due():
            if self._compiled is None and listeners:
                return self._first_compiled_call(args)
            return self.compiled(*args)
        if not needs_host(self.graph):
            return _evaluating(self.lowering(*args))
        token = _TIER.set("loop bodies" if seconds_before_compile(self._setting()) is not None
                          else "nothing")
        try:
            return self.lowering(*args)
        finally:
            _TIER.reset(token)

    def _first_compiled_call(self, args: tuple) -> list:
        """The compiled tier's first call, evaluated and timed for the
        ``listeners``: ``mx.compile`` traces the lowering and builds its
        kernels in it, and runs it once."""
        start = time.perf_counter()
        outs = self.compiled(*args)
        mx.eval(outs)
        tell("compile", self.graph, time.perf_counter() - start)
        return outs

    @property
    def compiled(self) -> Callable:
        """The compiled tier's function, made on first use: one
        ``mx.compile`` of the lowering, compiled segments around equations
        that need the host, or the lowering itself for a graph too deep."""
        if self._compiled is None:
            if needs_host(self.graph):
                self._compiled = segmented(self.graph)
            elif not compilable(self.graph):
                self._compiled = self.lowering
            else:
                self.compiles_whole = True
                self._compiled = (mx.compile(self.lowering) if self._shared_compiled is None
                                  else self._shared_compiled)
        return self._compiled

    def _setting(self) -> float | str | None:
        """The compile policy in force: this executable's, or ft.config's."""
        return config.jit_compile_after if self.compile_after == "config" else self.compile_after

    def _compile_due(self) -> bool:
        """Whether the policy says compile now. Once its delay has run out
        the executable stays compiled (``__call__`` no longer asks)."""
        setting = self._setting()
        after = seconds_before_compile(setting)
        if after == 0.0:
            return True
        if after is None:
            return False
        now = time.perf_counter()
        if self._first_call is None:
            self._first_call = now
        if now - self._first_call < after:
            return False
        if config.log_compiles:
            logger.warning("jit: compiling a signature in use for %.1f s (compile_after=%r)",
                           now - self._first_call, setting)
        return True


def _evaluating(outs: list) -> list:
    """``outs``, their evaluation started together (``mx.async_eval``), as a
    compiled call's outputs are one evaluation. Without it, an uncompiled
    training step whose caller reads only the loss leaves the new
    parameters lazy, each step's graph holding the previous one's: memory
    grew by the step (0.73 MiB a step for the flagship CNN) until something
    evaluated them. Inside MLX's own transforms (``mx.compile`` or
    ``mx.grad`` of a jitted function), where MLX refuses to evaluate, the
    outputs stay lazy."""
    try:
        mx.async_eval(outs)
    except ValueError:  # "Not allowed inside a graph transformation"
        pass
    return outs


def executable(graph: Graph) -> Executable:
    """``graph``'s executable, made once and kept on the graph. A graph
    derived from a jitted function's follows its ``compile_after`` (kept in
    ``graph.derived["compile after"]``)."""
    found = graph.derived.get("executable")
    if found is None:
        found = graph.derived["executable"] = Executable(
            graph, compile_after=graph.derived.get("compile after", "config"))
    return found


#: What the running executable compiles of a graph driven from the host:
#: "everything" (its compiled tier), "loop bodies" (its uncompiled tier) or
#: "nothing" (compile_after=None).
_TIER: contextvars.ContextVar[str] = contextvars.ContextVar("ftorch_tier", default="loop bodies")


def compiling(part: str = "everything") -> bool:
    """Whether the running executable compiles ``part`` of its graph:
    ``"everything"`` (in its compiled tier) or ``"loop bodies"`` (the bodies
    of host-driven loops, compiled in both tiers unless the policy is
    "never")."""
    tier = _TIER.get()
    return tier == "everything" or (part == "loop bodies" and tier == "loop bodies")


def in_tier(graph: Graph) -> Callable:
    """How a host-driven equation runs one of its graphs: compiled
    (``Executable.compiled``) in the compiled tier, else lowered."""
    return executable(graph).compiled if compiling() else lower(graph)


def compilable(graph: Graph) -> bool:
    """Whether ``mx.compile`` can take ``graph`` lowered: its ``depth`` is
    at most ``ft.config.jit_max_compile_depth``. MLX's compile passes recurse
    once per level of the graph on the C stack, so a deeper graph (a long
    chain of ops, or a scan unrolled with ``unroll=True``) would overflow it
    and kill the process; such a graph runs uncompiled, logged once."""
    limit = config.jit_max_compile_depth
    if limit is None or depth(graph) <= limit:
        return True
    if not graph.derived.get("logged too deep"):
        graph.derived["logged too deep"] = True
        logger.warning("ft.jit: a graph %d equations deep runs uncompiled: mx.compile takes "
                       "at most ft.config.jit_max_compile_depth=%d (a scan unrolled in full "
                       "counts each of its steps)", depth(graph), limit)
    return False


def segmented(graph: Graph) -> Callable:
    """``graph`` as compiled straight-line segments, split at the equations
    that need the host (``needs_host``), which run their lowering on
    concrete arrays in between: the plan for a graph holding a loop whose
    trip count depends on data, which ``mx.compile`` cannot contain."""
    steps: list = []  # per step: (compiled segment or host eqn, input atoms, output vars)
    run: list[Eqn] = []

    def close_run(later: list) -> None:
        if not run:
            return
        defined = {id(v) for e in run for v in e.outs}
        needed = {id(a) for e in later for a in e.inputs} | {id(a) for a in graph.outs}
        inputs, seen = [], set()
        for e in run:
            for a in e.inputs:
                if isinstance(a, Var) and id(a) not in defined and id(a) not in seen:
                    seen.add(id(a))
                    inputs.append(a)
        outs = [v for e in run for v in e.outs if id(v) in needed]
        sub = Graph(inputs, [], [], list(run), outs)
        steps.append((mx.compile(lower(sub)) if compilable(sub) else lower(sub), inputs, outs))
        run.clear()

    for i, eqn in enumerate(graph.eqns):
        if eqn_needs_host(eqn):
            close_run(graph.eqns[i:])
            steps.append((eqn, eqn.inputs, eqn.outs))
        else:
            run.append(eqn)
    close_run([])

    def call(*args):
        token = _TIER.set("everything")
        try:
            return run_steps(args)
        finally:
            _TIER.reset(token)

    def run_steps(args):
        env: dict[int, Any] = {id(v): c for v, c in zip(graph.const_vars, graph.consts)}
        env.update((id(v), a) for v, a in zip(graph.in_vars, args))

        def read(a: Any) -> Any:
            return a.value if type(a) is Literal else env[id(a)]

        for step, inputs, outs in steps:
            if isinstance(step, Eqn):
                out = apply_lowering(step.prim, [read(a) for a in inputs], step.params)
                out = out if step.prim.multiple_results else [out]
            else:
                out = step(*[read(a) for a in inputs])
            env.update((id(v), o) for v, o in zip(outs, out))
        return [read(a) for a in graph.outs]

    return call
