"""The graph IR that ``jit`` stages functions into, its passes and its
evaluation.

A ``Graph`` is a typed, straight-line program: input variables, a list of
equations (a primitive applied to variables and literals, with static
params, defining new variables) and outputs. Constants the traced function
closed over are variables bound to concrete arrays. ``str(graph)`` prints
one equation per line with shapes and dtypes::

    graph(a:f32[3]) -> f32[]
      b:f32[3] = sin a
      c:f32[3] = multiply b 2.0
      d:f32[] = sum[axes=(0,), keepdims=False] c
      return d

Passes (``dce``, ``cse``, ``fold_constants``, ``simplify``) return new
graphs. ``evaluate`` interprets a graph with ``bind`` (so under any
transform); ``ftorch.backend.lowering.lower`` turns it into one
straight-line MLX function, what jit runs and ``mx.compile`` traces.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

from ftorch.core import DTYPE_SHORT_NAMES, Primitive, ShapeDtypeStruct, format_aval
from ftorch.core import provenance as provenance_state
from ftorch.core.provenance import Provenance


class Var:
    """A value in a graph, known by its shape and dtype only."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapeDtypeStruct):
        self.aval = aval


class Literal:
    """A Python scalar used in place of a variable (it keeps its weak type)."""

    __slots__ = ("value",)

    def __init__(self, value: bool | int | float | complex):
        self.value = value


Atom = Var | Literal


class Eqn:
    """``outs = prim(*inputs, **params)``, made at ``provenance`` (the user's
    line and named scopes, ``ftorch.core.provenance``)."""

    __slots__ = ("prim", "inputs", "params", "outs", "provenance")

    def __init__(self, prim: Primitive, inputs: list, params: dict, outs: list[Var],
                 provenance: Provenance | None = None):
        self.prim = prim
        self.inputs = inputs
        self.params = params
        self.outs = outs
        self.provenance = provenance


class Graph:
    """A staged function: ``outs = f(*in_vars)``, with ``const_vars`` bound to
    the arrays in ``consts``.

    Graphs are immutable once built; passes return new graphs. ``derived``
    caches what is made from this one once: the graphs of transforms (its
    JVP, VJP and batched versions) and how it runs (its ``Executable``,
    ``ftorch.transforms.executable``).
    """

    # Graphs are primitive params, hashed and compared by identity (the default).
    __slots__ = ("in_vars", "const_vars", "consts", "eqns", "outs", "derived")

    def __init__(self, in_vars: list[Var], const_vars: list[Var], consts: list,
                 eqns: list[Eqn], outs: list):
        self.in_vars = in_vars
        self.const_vars = const_vars
        self.consts = consts
        self.eqns = eqns
        self.outs = outs
        self.derived: dict = {}

    @property
    def in_avals(self) -> list[ShapeDtypeStruct]:
        return [v.aval for v in self.in_vars]

    @property
    def out_avals(self) -> list[ShapeDtypeStruct]:
        return [aval_of_atom(a) for a in self.outs]

    def __repr__(self) -> str:
        return format_graph(self)

    def __str__(self) -> str:
        return format_graph(self)


def aval_of_atom(a: Atom) -> ShapeDtypeStruct:
    if isinstance(a, Literal):
        return ShapeDtypeStruct((), mx.array(a.value).dtype)
    return a.aval


# ----------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------

def _var_names():
    """a, b, ..., z, ba, bb, ...: short names in order of appearance."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    n = 0
    while True:
        name, k = "", n
        while True:
            name = letters[k % 26] + name
            k //= 26
            if k == 0:
                break
        yield name
        n += 1


def _format_param(value: Any) -> str:
    if isinstance(value, Graph):
        return "{ " + format_graph(value, indent="      ") + " }"
    if isinstance(value, mx.Dtype):
        return DTYPE_SHORT_NAMES.get(value, str(value))
    if callable(value) and hasattr(value, "__qualname__"):  # a user's rule or policy
        return value.__qualname__
    return repr(value)


def format_graph(graph: Graph, indent: str = "  ") -> str:
    names: dict[int, str] = {}
    fresh = _var_names()

    def name(a: Atom) -> str:
        if isinstance(a, Literal):
            return repr(a.value)
        if id(a) not in names:
            names[id(a)] = next(fresh)
        return names[id(a)]

    def binder(v: Var) -> str:
        return f"{name(v)}:{format_aval(v.aval)}"

    args = ", ".join(binder(v) for v in graph.in_vars)  # inputs are named first
    lines = []
    if graph.const_vars:
        lines.append(indent + "consts " + " ".join(binder(v) for v in graph.const_vars))
    for eqn in graph.eqns:
        params = ", ".join(f"{k}={_format_param(v)}" for k, v in eqn.params.items())
        head = eqn.prim.name + (f"[{params}]" if params else "")
        lhs = " ".join(binder(v) for v in eqn.outs)
        line = f"{indent}{lhs} = {head} " if eqn.outs else f"{indent}{head} "
        line += " ".join(name(a) for a in eqn.inputs)
        if eqn.provenance is not None and eqn.provenance.scope:
            line += f"  # {eqn.provenance.scope_name}"
        lines.append(line)
    lines.append(indent + "return " + ", ".join(name(a) for a in graph.outs))
    outs = ", ".join(format_aval(aval_of_atom(a)) for a in graph.outs)
    outs = outs if len(graph.outs) == 1 else f"({outs})"
    return f"graph({args}) -> {outs}\n" + "\n".join(lines)


# ----------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------


def evaluate(graph: Graph, args: Sequence) -> list:
    """Run ``graph`` on ``args`` with ``bind``: it works on tracers, so any
    transform can interpret a graph (this is how jit's rules transform it).
    Each equation binds with its provenance as the context, so what a
    transform makes of it points back at the user's line."""
    return interpret(graph, args, _bind_at, with_eqn=True)


def _bind_at(eqn: Eqn, vals: list) -> Any:
    previous = provenance_state.context
    provenance_state.context = eqn.provenance
    try:
        return eqn.prim.bind(*vals, **eqn.params)
    finally:
        provenance_state.context = previous


def subgraphs(params: dict) -> list[Graph]:
    """The graphs among an equation's params (a higher-order primitive's
    bodies and branches)."""
    found = []
    for value in params.values():
        if isinstance(value, Graph):
            found.append(value)
        elif isinstance(value, tuple):
            found.extend(v for v in value if isinstance(v, Graph))
    return found


def needs_host(graph: Graph) -> bool:
    """Whether running ``graph`` reads values on the host: it holds an
    equation that does (``eqn_needs_host``), at any depth."""
    found = graph.derived.get("needs host")
    if found is None:
        found = graph.derived["needs host"] = any(eqn_needs_host(e) for e in graph.eqns)
    return found


def eqn_needs_host(eqn: Eqn) -> bool:
    """Whether running ``eqn`` is driven from the host: its primitive says so
    (for every equation, or for these params: a scan long enough to run
    rolled), or one of its graphs holds such an equation."""
    host = eqn.prim.needs_host
    if host is not False and (host is True or host(**eqn.params)):
        return True
    return any(needs_host(g) for g in subgraphs(eqn.params))


def depth(graph: Graph) -> int:
    """The longest chain of equations from the graph's inputs to its
    outputs, an unrolled scan's body counted once per step (a rolled one,
    driven from the host, counts once),
    computed once per graph: about the depth of the MLX graph ``lower``
    emits, which is that times the few MLX ops an equation lowers to.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> from ftorch.graph import depth
    >>> depth(ft.make_graph(lambda x: fnp.sin(fnp.cos(x)) + x)(mx.ones(3)))
    3
    """
    found = graph.derived.get("depth")
    if found is None:
        level: dict[int, int] = {}
        for eqn in graph.eqns:
            start = max([level.get(id(a), 0) for a in eqn.inputs], default=0)
            end = start + _eqn_depth(eqn)
            level.update((id(v), end) for v in eqn.outs)
        found = graph.derived["depth"] = max(level.values(), default=0)
    return found


def _eqn_depth(eqn: Eqn) -> int:
    inner = [depth(g) for g in subgraphs(eqn.params)]
    if not inner or eqn_needs_host(eqn):  # driven from the host: never inlined
        return 1
    # A ``length`` is a trip count (scan's): the lowering chains that many bodies.
    return 1 + eqn.params.get("length", 1) * max(inner)


def interpret(graph: Graph, args: Sequence, apply: Callable, with_eqn: bool = False) -> list:
    """Run ``graph`` on ``args``, each equation as ``apply(prim, values,
    params)`` returns (``evaluate`` binds; the lowering emits MLX ops);
    ``with_eqn``: as ``apply(eqn, values)`` returns."""
    env: dict[Var, Any] = dict(zip(graph.const_vars, graph.consts))
    env.update(zip(graph.in_vars, args))

    def read(a: Atom) -> Any:
        return a.value if type(a) is Literal else env[a]

    for eqn in graph.eqns:
        if with_eqn:
            out = apply(eqn, [read(a) for a in eqn.inputs])
        else:
            out = apply(eqn.prim, [read(a) for a in eqn.inputs], eqn.params)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outs, out))
        else:
            env[eqn.outs[0]] = out
    return [read(a) for a in graph.outs]


# ----------------------------------------------------------------------------
# Passes
# ----------------------------------------------------------------------------


class GraphTypeError(TypeError):
    """A graph whose equations disagree with their primitives' shape rules,
    or that reads a variable before defining it."""


def typecheck(graph: Graph) -> Graph:
    """Check ``graph`` equation by equation: every input is defined before
    use, and each primitive's shape rule, applied to its inputs' avals, gives
    its outputs' avals. Raises ``GraphTypeError`` naming the first equation
    that breaks (a bad rule or pass shows where it went wrong); returns the
    graph.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> from ftorch.graph import typecheck
    >>> g = typecheck(ft.make_graph(lambda x: fnp.sum(x * 2.0))(mx.ones(3)))
    """
    defined = {id(v) for v in graph.in_vars} | {id(v) for v in graph.const_vars}
    for v, c in zip(graph.const_vars, graph.consts):
        if ShapeDtypeStruct(tuple(c.shape), c.dtype) != v.aval:
            raise GraphTypeError(f"constant of {format_aval(v.aval)} holds an array of "
                                 f"{format_aval(ShapeDtypeStruct(tuple(c.shape), c.dtype))}")

    def where(i: int) -> str:
        lines = format_graph(graph).split("\n")  # the signature, consts, then equations
        line = lines[1 + bool(graph.const_vars) + i].strip()
        return f"at equation {i} ({line}) of\n" + "\n".join(lines)

    for i, eqn in enumerate(graph.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var) and id(a) not in defined:
                raise GraphTypeError(f"an input is used before it is defined {where(i)}")
        avals = [a.value if isinstance(a, Literal) else a.aval for a in eqn.inputs]
        try:
            out = eqn.prim.abstract_eval(*avals, **eqn.params)
        except Exception as e:
            raise GraphTypeError(f"{eqn.prim.name}'s shape rule fails ({e}) {where(i)}") \
                from e
        expected = list(out) if eqn.prim.multiple_results else [out]
        got = [v.aval for v in eqn.outs]
        if [tuple(a) for a in expected] != [tuple(a) for a in got]:
            raise GraphTypeError(
                f"{eqn.prim.name} gives {', '.join(map(format_aval, expected))} but its "
                f"outputs are typed {', '.join(map(format_aval, got))} {where(i)}")
        defined.update(id(v) for v in eqn.outs)
    for a in graph.outs:
        if isinstance(a, Var) and id(a) not in defined:
            raise GraphTypeError(f"an output is never defined in\n{graph}")
    return graph


def split_by_dependence(eqns: Sequence[Eqn], sources: Sequence[Var]
                        ) -> tuple[list[Eqn], list[Eqn], set[int]]:
    """``eqns`` (in order) split into those that do not depend on any of
    ``sources`` and those that do, and the ids of every variable that does
    (the sources included): how the VJP split finds the backward pass and a
    loop finds the work that does not depend on its carry."""
    dependent = {id(v) for v in sources}
    free, tied = [], []
    for eqn in eqns:
        if any(id(a) in dependent for a in eqn.inputs):
            dependent.update(id(v) for v in eqn.outs)
            tied.append(eqn)
        else:
            free.append(eqn)
    return free, tied, dependent


def dce(graph: Graph) -> Graph:
    """Drop equations whose results are never used, and unused constants.
    Inputs stay: they are the graph's signature. An equation without
    results (a host callback: ``ft.debug.print``) runs for its effect, so
    it stays."""
    live = {id(a) for a in graph.outs if isinstance(a, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if not eqn.outs or any(id(v) in live for v in eqn.outs):
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    used = [(v, c) for v, c in zip(graph.const_vars, graph.consts) if id(v) in live]
    return Graph(graph.in_vars, [v for v, _ in used], [c for _, c in used], kept, graph.outs)


# Binary primitives whose operands can swap with the result unchanged (IEEE
# addition and multiplication are commutative, NaNs and signed zeros included).
_COMMUTATIVE = frozenset({"add", "multiply"})


def cse(graph: Graph) -> Graph:
    """Merge equations that apply the same primitive with the same params to
    the same inputs, in any order for ``add`` and ``multiply`` (rules often
    recompute a mask or a shape twice, and derivatives of ``x * x`` give
    ``t * x + x * t``)."""
    rename: dict[int, Atom] = {}
    seen: dict[tuple, Eqn] = {}
    eqns = []

    def sub(a: Atom) -> Atom:
        return rename.get(id(a), a)

    for eqn in graph.eqns:
        inputs = [sub(a) for a in eqn.inputs]
        key = None
        try:
            # Literals by type and repr: 0.0 == -0.0, yet they differ.
            operands = [("lit", type(a.value), repr(a.value)) if isinstance(a, Literal)
                        else ("var", id(a)) for a in inputs]
            if eqn.prim.name in _COMMUTATIVE:  # x * y and y * x: one product
                operands.sort(key=repr)
            key = (eqn.prim, tuple(operands), tuple(sorted(eqn.params.items())))
            hash(key)
        except TypeError:  # unhashable params: never merged
            key = None
        if not eqn.outs:  # run for its effect: each one runs
            key = None
        if key is not None and key in seen:
            for old, new in zip(eqn.outs, seen[key].outs):
                rename[id(old)] = new
            continue
        new_eqn = Eqn(eqn.prim, inputs, eqn.params, eqn.outs, eqn.provenance)
        if key is not None:
            seen[key] = new_eqn
        eqns.append(new_eqn)
    return Graph(graph.in_vars, graph.const_vars, graph.consts, eqns,
                 [sub(a) for a in graph.outs])


# A folded result may be bigger than the constants it comes from (a
# broadcast, an outer product) only up to this many elements: beyond it,
# computing it in each call is cheaper than storing and reading it.
FOLD_GROWTH_LIMIT = 4096


def fold_constants(graph: Graph) -> Graph:
    """Evaluate, once, every equation whose inputs are all constants or
    literals, and bind its results as new constants."""
    values: dict[int, Any] = {id(v): c for v, c in zip(graph.const_vars, graph.consts)}
    const_vars, consts = list(graph.const_vars), list(graph.consts)
    eqns = []
    for eqn in graph.eqns:
        # Collectives and effects (equations without results) run at each call.
        if eqn.outs and not eqn.prim.communicates and all(
                isinstance(a, Literal) or id(a) in values for a in eqn.inputs):
            in_size = max([1] + [math.prod(a.aval.shape) for a in eqn.inputs if isinstance(a, Var)])
            out_size = max(math.prod(v.aval.shape) for v in eqn.outs)
            if out_size <= max(in_size, FOLD_GROWTH_LIMIT):
                vals = [a.value if isinstance(a, Literal) else values[id(a)] for a in eqn.inputs]
                out = eqn.prim.impl(*vals, **eqn.params)
                outs = out if eqn.prim.multiple_results else [out]
                mx.eval(outs)
                for v, o in zip(eqn.outs, outs):
                    values[id(v)] = o
                    const_vars.append(v)
                    consts.append(o)
                continue
        eqns.append(eqn)
    return dce(Graph(graph.in_vars, const_vars, consts, eqns, graph.outs))


def simplify(graph: Graph) -> Graph:
    """The passes jit runs on every graph it stages: constant folding,
    common subexpressions, dead code. (Rewrites for MLX's kernels come at
    lowering: ``ftorch.backend.rewrites``.)"""
    return dce(cse(fold_constants(graph)))
