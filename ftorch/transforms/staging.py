"""Staging: tracing a function into a ``Graph`` (``stage``, and
``stage_function`` for a user's function of pytrees; ``make_graph``,
``eval_shape``), and deriving graphs from graphs (``derive``).

A ``StagingTracer`` stands for a graph variable: only its shape and dtype
are known. ``StagingTrace.process_primitive`` appends an equation to the
graph under construction instead of computing anything. While a function is
being staged, every op inside it is staged, also ops on constants (the
staging main is "dynamic", see ``core.new_main``); ``simplify`` folds those
back into constants.

``jit``, ``checkpoint`` and the control-flow primitives of ``ftorch.lax``
stage their functions here; the graph transforms (``jvp_graph``, ``vjp_graph``,
``batch_graph``) stage an interpreter running over a graph, through
``derive``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import api_util, core, tree
from ftorch.config import config
from ftorch.core import (
    ShapeDtypeStruct,
    Trace,
    Tracer,
    aval_of,
    call_traced,
    format_aval,
    new_main,
    provenance,
    user_frame,
)
from ftorch.graph import Eqn, Graph, Literal, Var, aval_of_atom, simplify, typecheck

__all__ = ["stage", "derive", "checked", "make_graph", "eval_shape", "ConcretizationError",
           "StagingTracer", "StagingTrace"]


class ConcretizationError(TypeError):
    """Python needed the value of an array that is only known abstractly
    (by shape and dtype) because it is being staged by ``jit``."""


# ----------------------------------------------------------------------------
# The staging trace
# ----------------------------------------------------------------------------


class _Builder:
    """The graph under construction (the staging main's global data)."""

    def __init__(self, fname: str, in_names: list[str]):
        self.fname = fname
        self.in_names = in_names
        self.in_vars: list[Var] = []
        self.eqns: list[Eqn] = []
        self.consts: dict[int, tuple[Var, Any]] = {}  # id(value) -> (var, value)
        # Variables of weak type: Python scalars passed as arguments, and
        # elementwise results of those alone (JAX's weak_type).
        self.weak: set[int] = set()

    def const_var(self, value: Any) -> Var:
        entry = self.consts.get(id(value))
        if entry is None:
            entry = self.consts[id(value)] = (Var(aval_of(value)), value)
        return entry[0]

    def inputs_behind(self, var: Any) -> list[str]:
        """Names of the inputs a variable was computed from (for errors)."""
        producer = {id(v): e for e in self.eqns for v in e.outs}
        names = {id(v): n for v, n in zip(self.in_vars, self.in_names)}
        found, stack, seen = [], [var], set()
        while stack:
            v = stack.pop()
            if id(v) in seen or isinstance(v, Literal):
                continue
            seen.add(id(v))
            if id(v) in names:
                found.append(names[id(v)])
            elif id(v) in producer:
                stack.extend(producer[id(v)].inputs)
        return sorted(found)


class StagingTracer(Tracer):
    # ``atom``, not ``var``: a slot would hide the array method of that name.
    __slots__ = ("atom",)

    def __init__(self, trace: Trace, atom: Var | Literal):
        self._trace = trace
        self.atom = atom

    @property
    def aval(self) -> ShapeDtypeStruct:
        return aval_of_atom(self.atom)

    def describe(self) -> str:
        return f"{super().describe()[:-1]}, {self._origin()})"

    def _origin(self) -> str:
        inputs = self._trace.main.global_data.inputs_behind(self.atom)
        return f"computed from {', '.join(inputs)}" if inputs else "a constant"

    def concrete(self):
        raise ConcretizationError(self._concretization_message())

    # Under jit these conversions fail for want of a value, not to protect a
    # derivative: say so.
    def conversion_error(self, what: str) -> Exception:
        return ConcretizationError(self._concretization_message(what))

    def _concretization_message(self, what: str = "Python control flow, bool(), int() "
                                "or .item()") -> str:
        builder: _Builder = self._trace.main.global_data
        return (
            f"{what} needs the concrete value of an abstract {format_aval(self.aval)} array "
            f"({self._origin()}) while ft.jit traces {builder.fname!r}, at {user_frame()}. "
            "Under jit only shapes and dtypes are known. Mark Python-level arguments static "
            "(static_argnums= / static_argnames=), select data-dependently with "
            "ftorch.numpy.where, or move the value-dependent code out of the jitted function."
        )


class StagingTrace(Trace):
    __slots__ = ()
    transform = "ft.jit"

    def pure(self, val: Any) -> StagingTracer:
        if isinstance(val, (bool, int, float, complex)):
            return StagingTracer(self, Literal(val))
        return StagingTracer(self, self.main.global_data.const_var(val))

    lift = pure  # a lower transform's tracer: a constant here, hoisted to an input later

    def process_primitive(self, prim, tracers, params):
        builder = self.main.global_data
        inputs = [t.atom for t in tracers]
        weak_out = False
        if builder.weak and prim.elementwise:
            inputs, weak_out = self._promote_weak(inputs)
        avals = [a.value if isinstance(a, Literal) else a.aval for a in inputs]
        out = prim.abstract_eval(*avals, **params)
        outs = [Var(a) for a in (out if prim.multiple_results else [out])]
        builder.eqns.append(Eqn(prim, inputs, params, outs, provenance.here()))
        if weak_out:
            builder.weak.update(id(v) for v in outs)
        tracers = [StagingTracer(self, v) for v in outs]
        return tracers if prim.multiple_results else tracers[0]

    def _promote_weak(self, inputs: list) -> tuple[list, bool]:
        """Cast weakly typed operands of an elementwise op to the dtype a
        Python scalar would take beside the other operands (so ``x * lr``
        keeps ``x``'s float16). Arithmetic on weak operands alone stays weak,
        as Python's does on scalars; a unary op's result is strong, as MLX's
        is on a Python scalar (``mx.sqrt(2.0)`` is a float32 array)."""
        weak_ids = self.main.global_data.weak
        weak = [isinstance(a, Var) and id(a) in weak_ids for a in inputs]
        if not any(weak):
            return inputs, False
        strong = [a.aval.dtype for a, w in zip(inputs, weak)
                  if isinstance(a, Var) and not w]
        if not strong:  # weak operands and Python scalars only
            return inputs, len(inputs) > 1
        out = list(inputs)
        for i, (a, w) in enumerate(zip(inputs, weak)):
            if w:
                # MLX's promotion of a Python scalar of the weak operand's kind.
                target = mx.add(mx.zeros((), mx.result_type(*strong)),
                                _python_scalar_like(a.aval.dtype)).dtype
                if target != a.aval.dtype:
                    out[i] = lax.astype(StagingTracer(self, a), target).atom
        return out, False


def stage(f: Callable, in_avals: Sequence[ShapeDtypeStruct], fname: str = "<function>",
          in_names: Sequence[str] | None = None,
          weak: Sequence[bool] = ()) -> tuple[Graph, list]:
    """Trace ``f`` (a list of leaves -> a list of leaves) into a graph.

    ``weak[i]`` marks input ``i`` as weakly typed (a Python scalar argument):
    in elementwise ops it takes the other operands' dtype, as the scalar
    would. Returns the graph and the values of its leading inputs that stand
    for tracers of enclosing transforms that ``f`` closed over (hoisted from
    constants to inputs, so that those transforms see them); the graph's
    other inputs are ``f``'s.
    """
    names = list(in_names) if in_names is not None else [f"input {i}" for i in range(len(in_avals))]
    builder = _Builder(fname, names)
    random_key = core.global_random_key()
    with new_main(StagingTrace, builder, dynamic=True) as main:
        trace = StagingTrace(main)
        builder.in_vars = [Var(ShapeDtypeStruct(tuple(a.shape), a.dtype)) for a in in_avals]
        builder.weak.update(id(v) for v, w in zip(builder.in_vars, weak) if w)
        outs = call_traced(f, [StagingTracer(trace, v) for v in builder.in_vars])
        out_atoms = []
        for o in outs:
            if isinstance(o, (bool, int, float, complex)):
                o = mx.array(o)
            out_atoms.append(trace.full_raise(o).atom)
    if core.global_random_key() is not random_key:
        raise RuntimeError(
            f"ft.jit: {fname!r} draws from MLX's global random state (mx.random.* without "
            "key=); under jit those numbers would be frozen at their trace-time values. Pass "
            "a key as an argument (mx.random.key(seed), split with mx.random.split) instead.")
    hoisted = [(v, c) for v, c in builder.consts.values() if isinstance(c, Tracer)]
    consts = [(v, c) for v, c in builder.consts.values() if not isinstance(c, Tracer)]
    graph = Graph([v for v, _ in hoisted] + builder.in_vars, [v for v, _ in consts],
                  [c for _, c in consts], builder.eqns, out_atoms)
    return graph, [c for _, c in hoisted]


class Staged(NamedTuple):
    """A user function staged into a graph.

    The graph's inputs are ``hoisted`` (values of enclosing transforms the
    function closes over, passed as leading operands) followed by the
    function's argument leaves; ``out_tree`` is the structure of its result
    (whatever ``flatten_out`` made of it)."""

    graph: Graph
    hoisted: list
    out_tree: Any


def stage_function(f: Callable, in_avals: Sequence[ShapeDtypeStruct], in_tree: Any,
                   fname: str, flatten_out: Callable[[Any], tuple[list, Any]]) -> Staged:
    """Stage ``f(*unflatten(in_tree, leaves))`` once, whatever the number of
    times the control flow will run it. ``flatten_out(result)`` returns the
    output leaves and what ``out_tree`` records."""
    flat_f, out_info = api_util.flatten_fun(f, in_tree, flatten_out)
    graph, hoisted = stage(flat_f, in_avals, fname)
    return Staged(checked(simplify(graph)), hoisted, out_info.value)


def _python_scalar_like(dtype: mx.Dtype) -> bool | int | float | complex:
    """A Python scalar of ``dtype``'s kind, to ask MLX's promotion what dtype
    a weakly typed operand of that kind takes beside others."""
    if dtype == mx.bool_:
        return False
    if dtype == mx.complex64:
        return 0j
    return 0.0 if core.is_floating(dtype) else 0


def checked(graph: Graph) -> Graph:
    """``graph``, typechecked first when ``ft.config.check_graphs`` is on."""
    return typecheck(graph) if config.check_graphs else graph


def derive(graph: Graph, key: tuple, make: Callable) -> tuple[Graph, Any]:
    """A graph derived from ``graph`` by a transform, made once and cached on
    it (under ``key``) with what the transform records about it (which
    outputs are zero, their batch axes, ...).

    ``make(info)`` returns the derived graph's input avals and its flat
    function, which appends its record to ``info`` when staged."""
    entry = graph.derived.get(key)
    if entry is None:
        info: list = []
        in_avals, flat_f = make(info)
        derived, hoisted = stage(flat_f, in_avals, f"{key[0]} of a staged function")
        assert not hoisted, "graphs close over no tracers"
        entry = graph.derived[key] = (checked(simplify(derived)), info[0])
    return entry


# ----------------------------------------------------------------------------
# make_graph and eval_shape
# ----------------------------------------------------------------------------


def _abstract_leaves(args: tuple, fname: str) -> tuple[list, list, Any]:
    """The avals of ``args``' leaves, which of them are weakly typed (Python
    scalars, as ``jit`` traces them), and the tree."""
    leaves, treedef = tree.flatten(args, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    avals, weak = [], []
    for i, leaf in enumerate(leaves):
        weak.append(isinstance(leaf, (bool, int, float, complex)))
        if isinstance(leaf, ShapeDtypeStruct):
            avals.append(ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype))
        elif isinstance(leaf, (mx.array, Tracer)) or weak[-1]:
            avals.append(aval_of(leaf))
        elif isinstance(leaf, np.ndarray):
            avals.append(aval_of(mx.array(leaf)))
        else:
            raise TypeError(f"{fname}: {api_util.leaf_names(treedef, 'args')[i]} must be an "
                            "array, a Python scalar or a ShapeDtypeStruct, got "
                            f"{type(leaf).__name__}: {leaf!r}")
    return avals, weak, treedef


def make_graph(f: Callable, static_argnums: int | Sequence[int] = ()) -> Callable[..., Graph]:
    """A function of ``f``'s arguments (arrays, ``ShapeDtypeStruct``s or
    Python scalars, which are weakly typed as under ``jit``) returning the
    graph ``jit`` would stage, before simplification.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> print(ft.make_graph(lambda x: fnp.sum(fnp.sin(x) * 2.0))(mx.ones(3)))
    graph(a:f32[3]) -> f32[]
      b:f32[3] = sin a
      c:f32[3] = multiply b 2.0
      d:f32[] = sum[axes=(0,), keepdims=False] c
      return d
    """
    api_util.check_callable(f, "make_graph")
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    fname = getattr(f, "__qualname__", repr(f))

    def make(*args) -> Graph:
        dynamic = [i for i in range(len(args)) if i not in nums]
        avals, weak, treedef = _abstract_leaves(tuple(args[i] for i in dynamic), "make_graph")
        flat_f, _ = api_util.flatten_fun(api_util.with_static(f, args, dynamic), treedef,
                                         api_util.output_flattener("make_graph"))
        graph, hoisted = stage(flat_f, avals, fname, weak=weak)
        if hoisted:
            raise ValueError("make_graph: the function closes over values traced by an "
                             "enclosing transform; make_graph shows closed functions only")
        return graph

    return make


def eval_shape(f: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``f(*args, **kwargs)``, computing nothing.

    Arguments are arrays, ``ShapeDtypeStruct``s or Python scalars (pytrees
    of them); scalars are weakly typed, as under ``jit``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.eval_shape(lambda x: fnp.outer(x, x), ft.ShapeDtypeStruct((3,), mx.float32))
    ShapeDtypeStruct(shape=(3, 3), dtype=mlx.core.float32)
    """
    api_util.check_callable(f, "eval_shape")
    avals, weak, treedef = _abstract_leaves((args, kwargs), "eval_shape")
    flat_f, out_info = api_util.flatten_fun(f, treedef, api_util.output_flattener("eval_shape"),
                                            kwargs=True)
    graph, _ = stage(flat_f, avals, getattr(f, "__qualname__", repr(f)), weak=weak)
    return tree.unflatten(out_info.value[0], graph.out_avals)
