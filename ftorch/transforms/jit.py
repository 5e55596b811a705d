"""Staging and compilation: ``jit``, ``make_graph`` and ``eval_shape``.

A ``StagingTracer`` stands for a graph variable: only its shape and dtype
are known. ``StagingTrace.process_primitive`` appends an equation to the
graph under construction instead of computing anything. While a function is
being staged, every op inside it is staged, also ops on constants (the
staging main is "dynamic", see ``core.new_main``); ``simplify`` folds those
back into constants.

``jit`` stages a function once per abstract signature, simplifies the
graph, and binds the higher-order primitive ``jit_p`` on it. Outside
transforms, ``jit_p`` runs the graph lowered to one MLX function and handed
to ``mx.compile``. Inside transforms, ``jit_p``'s rules transform the
graph as a whole (JVP, VJP, batching) into a new graph, cached on the
original, which is bound as ``jit_p`` again: so ``grad(jit(f))`` and
``vmap(jit(f))`` run compiled too.

The common call, outside transforms with pytrees of mx.arrays, skips all of
that Python: it goes to an ``mx.compile`` of a dispatcher (one per input
structure) that MLX traces once per shape signature, looking the staged
graph up and lowering it; later calls are MLX's own signature check, in C++.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

from ftorch import core, tree
from ftorch import numpy as fnp
from ftorch.config import config
from ftorch.core import (
    Primitive,
    ShapeDtypeStruct,
    Trace,
    Tracer,
    aval_of,
    call_traced,
    format_aval,
    new_main,
    user_frame,
)
from ftorch.graph import (
    Eqn,
    Graph,
    Literal,
    Var,
    aval_of_atom,
    dce,
    evaluate,
    lower,
    simplify,
    typecheck,
)
from ftorch.transforms import _util
from ftorch.transforms.jvp import jvp_flat
from ftorch.transforms.vjp import vjp_flat
from ftorch.transforms.vmap import batch_flat

__all__ = ["jit", "make_graph", "eval_shape", "ConcretizationError", "jit_p"]

logger = logging.getLogger("ftorch.jit")


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
        builder.eqns.append(Eqn(prim, inputs, params, outs))
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
                target = fnp.result_type(*strong, _python_scalar_like(a.aval.dtype))
                if target != a.aval.dtype:
                    out[i] = fnp.astype(StagingTracer(self, a), target).atom
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


def _python_scalar_like(dtype: mx.Dtype) -> bool | int | float | complex:
    """A Python scalar of ``dtype``'s kind, to ask MLX's promotion what dtype
    a weakly typed operand of that kind takes beside others."""
    if dtype == mx.bool_:
        return False
    if dtype == mx.complex64:
        return 0j
    return 0.0 if core.is_floating(dtype) else 0


# ----------------------------------------------------------------------------
# jit_p: a call of a staged graph, and its rules
# ----------------------------------------------------------------------------


def _jit_impl(*args: Any, graph: Graph) -> list:
    return graph.lowered(*args)


jit_p = Primitive("jit", _jit_impl, multiple_results=True,
                  abstract_eval=lambda *avals, graph: graph.out_avals)
# Inside an enclosing lowered graph, a jitted call is inlined: one compiled
# function for the whole.
jit_p.lowering = lambda *args, graph: lower(graph)(*args)


def _checked(graph: Graph) -> Graph:
    """``graph``, typechecked first when ``ft.config.check_graphs`` is on."""
    return typecheck(graph) if config.check_graphs else graph


def _derive(graph: Graph, key: tuple, make: Callable) -> tuple[Graph, Any]:
    """A graph derived from ``graph`` by a transform, made once and cached
    on it with whatever the transform records (which outputs are zero, ...)."""
    entry = graph.derived.get(key)
    if entry is None:
        info: list = []
        in_avals, flat_f = make(info)
        derived, hoisted = stage(flat_f, in_avals, f"{key[0]} of a jitted function")
        assert not hoisted, "graphs close over no tracers"
        entry = graph.derived[key] = (_checked(simplify(derived)), info[0])
    return entry


@jit_p.def_jvp
def _jit_jvp(primals, tangents, graph):
    mask = tuple(t is not None for t in tangents)
    n_in = len(primals)

    def make(info):
        def flat_f(leaves):
            it = iter(leaves[n_in:])
            full = [next(it) if m else None for m in mask]
            outs, out_tangents = jvp_flat(lambda xs: evaluate(graph, xs), leaves[:n_in], full)
            info.append([t is not None for t in out_tangents])
            return outs + [t for t in out_tangents if t is not None]
        return graph.in_avals + [a for a, m in zip(graph.in_avals, mask) if m], flat_f

    derived, nonzero = _derive(graph, ("jvp", mask), make)
    outs = jit_p.bind(*primals, *[t for t in tangents if t is not None], graph=derived)
    n_out = len(graph.outs)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if nz else None for nz in nonzero]


def _split_vjp(graph: Graph) -> tuple[Graph, Graph, list[bool]]:
    """The forward graph (inputs -> outputs and residuals) and the backward
    graph (residuals and output cotangents -> input cotangents) of ``graph``.

    Both come from one joint graph of the forward and backward passes: its
    equations that do not depend on a cotangent form the forward graph, and
    the forward values the others use are the residuals. The backward pass
    thus reuses the forward's intermediates instead of recomputing them."""
    entry = graph.derived.get("vjp split")
    if entry is not None:
        return entry
    n_in = len(graph.in_vars)

    def make(info):
        def flat_f(leaves):
            outs, pullback, _ = vjp_flat(lambda xs: (evaluate(graph, xs), None), leaves[:n_in])
            in_cts = pullback(list(leaves[n_in:]))
            info.append([c is not None for c in in_cts])
            return outs + [c for c in in_cts if c is not None]
        return graph.in_avals + graph.out_avals, flat_f

    joint, nonzero = _derive(graph, ("vjp",), make)
    primals, cts = joint.in_vars[:n_in], joint.in_vars[n_in:]
    n_out = len(graph.outs)
    on_ct_path = {id(v) for v in cts}
    fwd_eqns, bwd_eqns = [], []
    for eqn in joint.eqns:
        if any(id(a) in on_ct_path for a in eqn.inputs):
            on_ct_path.update(id(v) for v in eqn.outs)
            bwd_eqns.append(eqn)
        else:
            fwd_eqns.append(eqn)
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
    entry = graph.derived["vjp split"] = (_checked(fwd), _checked(bwd), nonzero)
    return entry


def _jit_vjp_fwd(primals, graph):
    fwd, bwd, nonzero = _split_vjp(graph)
    results = jit_p.bind(*primals, graph=fwd)
    n_out = len(graph.outs)
    return results[:n_out], results[n_out:], {"graph": bwd, "nonzero": tuple(nonzero)}


@jit_p.def_vjp
def _jit_vjp(cts, out, *residuals, graph, nonzero):
    # Cotangents that are symbolic zeros are passed as zeros: the backward
    # graph was built for all outputs at once.
    cts = [fnp.zeros_like(o) if c is None else c for c, o in zip(cts, out)]
    in_cts = iter(jit_p.bind(*residuals, *cts, graph=graph))
    return tuple(next(in_cts) if nz else None for nz in nonzero)


jit_p.vjp_fwd = _jit_vjp_fwd


@jit_p.def_batch
def _jit_batch(vals, dims, axis_size, graph):
    dims = tuple(dims)

    def make(info):
        def flat_f(leaves):
            outs, out_dims = batch_flat(lambda xs: evaluate(graph, xs), leaves, dims, axis_size)
            info.append(out_dims)
            return outs
        return [aval_of(v) for v in vals], flat_f

    derived, out_dims = _derive(graph, ("vmap", dims, axis_size), make)
    return jit_p.bind(*vals, graph=derived), out_dims


# ----------------------------------------------------------------------------
# jit, make_graph, eval_shape
# ----------------------------------------------------------------------------


def _normalize_static(f: Callable, static_argnums, static_argnames) -> tuple[tuple, tuple]:
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i in nums:
        if not isinstance(i, int):
            raise TypeError(f"jit: static_argnums must be ints, got {i!r}")
        if i < 0 and -i > len(positional):
            raise ValueError(
                f"jit: static_argnums entry {i} is out of range for a function with "
                f"{len(positional)} positional parameters")
    nums = tuple(i % len(positional) if i < 0 else i for i in nums)
    # A static argument may be given by position or by name, as in JAX.
    nums += tuple(positional.index(n) for n in names if n in positional)
    names += tuple(positional[i] for i in nums if 0 <= i < len(positional))
    return tuple(sorted(set(nums))), tuple(sorted(set(names)))


def _defaulted_params(f: Callable) -> set[str]:
    try:
        return {p.name for p in inspect.signature(f).parameters.values()
                if p.default is not p.empty}
    except (TypeError, ValueError):
        return set()


def _arg_names(f: Callable, nargs: int) -> list[str]:
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else f"args[{i}]" for i in range(nargs)]


def jit(
    f: Callable,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
) -> Callable:
    """Compile ``f``: stage it into a graph once per abstract signature
    (argument structure, shapes, dtypes and static arguments), simplify the
    graph, lower it to MLX and ``mx.compile`` it.

    Array arguments (and pytrees of them) are traced. Python scalars
    (``bool``, ``int``, ``float``) are traced too, as weakly typed 0-d
    arrays, as in JAX: a new value does not retrace, and ``x * 0.5`` keeps
    ``x``'s dtype as it does outside jit. Other Python values must be
    declared static with ``static_argnums`` / ``static_argnames`` (they must
    be hashable; each new value means a new trace). ``donate_argnums`` names
    arguments the caller will not use again: MLX reuses an input's buffer
    when nothing else holds the array, so drop your own references to them.

    The jitted function has ``trace_count`` (how many times it was staged),
    ``cache_size()`` and ``clear_cache()``; ``ft.config.log_compiles = True``
    logs each trace and its reason.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> f = ft.jit(lambda x, y: fnp.sum(fnp.sin(x) * y))
    >>> round(f(mx.array([0.5, 1.0]), mx.array(2.0)).item(), 4)
    2.6418
    >>> f.trace_count
    1
    """
    _util.check_callable(f, "jit")
    nums, names = _normalize_static(f, static_argnums, static_argnames)
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    for n in donate:
        if not isinstance(n, int) or n in nums:
            raise ValueError(f"jit: donate_argnums entry {n!r} must be the index of a "
                             "non-static positional argument")
    donate_max = max((n if n >= 0 else -n - 1 for n in donate), default=-1)
    fname = getattr(f, "__qualname__", repr(f))
    defaulted = _defaulted_params(f)
    cache: dict[tuple, _Entry] = {}
    last_keys: list[tuple] = []

    def split(args: tuple, kwargs: dict) -> tuple[tuple, list, Any]:
        """(cache key, array leaves, their treedef) of one call."""
        if donate_max >= len(args):
            raise ValueError(f"jit: donate_argnums={donate!r} is out of range for a call of "
                             f"{fname!r} with {len(args)} positional arguments")
        if nums or names:
            statics = _statics(args, kwargs)
            args = tuple(a for i, a in enumerate(args) if i not in nums)
            kwargs = {k: v for k, v in kwargs.items() if k not in names}
        else:
            statics = ()
        leaves, treedef = tree.flatten((args, kwargs))
        avals = tuple([(x.shape, x.dtype) for x in leaves if type(x) is mx.array])
        if len(avals) != len(leaves):
            avals = _leaf_avals(leaves, treedef, statics)
        return (treedef, statics, avals), leaves, treedef

    def _statics(args: tuple, kwargs: dict) -> tuple:
        for i in nums:
            # Left out, a static parameter with a default takes it (as in JAX).
            name = _arg_names(f, i + 1)[i]
            if i >= len(args) and name not in kwargs and name not in defaulted:
                raise ValueError(f"jit: static_argnums contains {i}, but {fname!r} was called "
                                 f"with {len(args)} positional arguments")
        # Keyed with their types too: 2 and 2.0 are equal but trace differently.
        statics = tuple((i, type(args[i]), args[i]) for i in nums if i < len(args)) + tuple(
            sorted(((k, type(v), v) for k, v in kwargs.items() if k in names),
                   key=lambda e: e[0]))
        for k, _, v in statics:
            if not _hashable(v):
                raise TypeError(f"jit: static argument {k!r} of {fname!r} must be hashable, "
                                f"got {type(v).__name__}")
        return statics

    def _leaf_avals(leaves: list, treedef: Any, statics: tuple) -> tuple:
        """Shapes and dtypes of leaves that are not all mx.arrays (NumPy
        arrays are converted in place; tracers have theirs)."""
        avals = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, np.ndarray):
                leaf = leaves[i] = mx.array(leaf)
            elif isinstance(leaf, (bool, int, float, complex)):
                # Traced as a weakly typed 0-d array: no retrace when it changes.
                a = aval_of(leaf)
                leaves[i] = mx.array(leaf, a.dtype)
                avals.append((a.shape, a.dtype, "weak"))
                continue
            elif not isinstance(leaf, (mx.array, Tracer)):
                nargs = max([len(treedef.children()[0].children())] + [
                    k + 1 for k, _, _ in statics if isinstance(k, int)])
                static = tuple(k for k, _, _ in statics if isinstance(k, int))
                name = _leaf_name(f, nargs, static, treedef.paths()[i])
                raise TypeError(
                    f"jit: {name} of {fname!r} is {leaf!r} of type {type(leaf).__name__}, not an "
                    "array. Pass it as an array (mx.array(...)) to trace it, or mark it static "
                    "with static_argnums= / static_argnames= to compile one version per value.")
            a = aval_of(leaf)
            avals.append((a.shape, a.dtype))
        return tuple(avals)

    def trace(nargs: int, key: tuple, treedef: Any) -> tuple[Graph, list, Any]:
        _log_trace(fname, key, last_keys)
        jitted.trace_count += 1
        static_args = {k: v for k, _, v in key[1]}
        out_info = []

        def flat_f(leaves):
            dyn_args, dyn_kwargs = tree.unflatten(treedef, leaves)
            it = iter(dyn_args)
            full_args = [static_args[i] if i in static_args else next(it)
                         for i in range(nargs)]
            full_kwargs = {**dyn_kwargs, **{k: v for k, v in static_args.items()
                                            if isinstance(k, str)}}
            out = f(*full_args, **full_kwargs)
            out_leaves, out_tree = tree.flatten(out)
            for leaf in out_leaves:
                if not isinstance(leaf, (mx.array, Tracer, np.ndarray, bool, int, float)):
                    raise TypeError(f"jit: {fname!r} returned a {type(leaf).__name__} "
                                    f"({leaf!r}); jitted functions return arrays")
            out_info.append(out_tree)
            return [mx.array(x) if isinstance(x, np.ndarray) else x for x in out_leaves]

        in_names = [_leaf_name(f, nargs, nums, p) for p in treedef.paths()]
        graph, hoisted = stage(flat_f, [ShapeDtypeStruct(*a[:2]) for a in key[2]], fname,
                               in_names, weak=[len(a) == 3 for a in key[2]])
        return _checked(simplify(graph)), hoisted, out_info[0]

    def entry_for(args: tuple, kwargs: dict) -> tuple[_Entry, list, list]:
        """The cached trace of a call's signature (traced on a miss), the
        call's array leaves, and the values of enclosing transforms' tracers
        that the trace closes over (then valid for this call only)."""
        key, leaves, treedef = split(args, kwargs)
        entry = cache.get(key)
        if entry is not None:
            return entry, leaves, []
        graph, hoisted, out_tree = trace(len(args), key, treedef)
        entry = _Entry(graph, out_tree)
        if not hoisted:
            cache[key] = entry
        return entry, leaves, hoisted

    # Calls outside transforms whose leaves are all mx.arrays go through one
    # mx.compile per input structure, which checks shapes and dtypes in C++.
    fast: dict[Any, _Compiled] = {}

    def compiled_for(fast_key: Any, args: tuple, kwargs: dict) -> _Compiled:
        treedef = tree.structure((args, kwargs))

        def dispatch(*leaves):  # what mx.compile traces, once per shape signature
            try:
                entry, _, _ = entry_for(*tree.unflatten(treedef, leaves))
            except Exception as e:
                raise _TraceError(e) from e
            record.note(entry.out_tree)
            return lower(entry.graph)(*leaves)

        record = fast[fast_key] = _Compiled(mx.compile(dispatch))
        return record

    def jitted(*args, **kwargs):
        if not (nums or names or core._stack) and len(args) > donate_max:
            if not kwargs and _all_mx_arrays(args):
                fast_key, leaves = len(args), args
            else:
                leaves, fast_key = tree.flatten((args, kwargs))
                if not _all_mx_arrays(leaves):  # NumPy arrays, leaked tracers, ...
                    fast_key = None
            if fast_key is not None:
                record = fast.get(fast_key) or compiled_for(fast_key, args, kwargs)
                try:
                    outs = record.compiled(*leaves)
                except _TraceError as e:
                    raise e.error from None
                out_tree = record.out_tree
                if out_tree is None or out_tree is _UNSET:  # it depends on the shapes
                    out_tree = entry_for(args, kwargs)[0].out_tree
                return _results(out_tree, outs)
        entry, leaves, hoisted = entry_for(args, kwargs)
        return _results(entry.out_tree, jit_p.bind(*hoisted, *leaves, graph=entry.graph))

    jitted.trace_count = 0
    jitted.cache_size = lambda: len(cache)

    def clear_cache() -> None:
        cache.clear()
        last_keys.clear()
        fast.clear()

    jitted.clear_cache = clear_cache
    functools.update_wrapper(jitted, f)
    return jitted


class _Entry(NamedTuple):
    """A cached trace of a jitted function."""

    graph: Graph
    out_tree: Any


class _Compiled:
    """A jitted function's ``mx.compile``d dispatcher for one input
    structure, and the output structure its traces share (``None`` where
    they differ, ``_UNSET`` before the first trace)."""

    __slots__ = ("compiled", "out_tree")

    def __init__(self, compiled: Callable):
        self.compiled = compiled
        self.out_tree: Any = _UNSET

    def note(self, out_tree: Any) -> None:
        if self.out_tree is _UNSET:
            self.out_tree = out_tree
        elif self.out_tree is not None and out_tree != self.out_tree:
            self.out_tree = None


_UNSET = object()


def _results(out_tree: Any, outs: list) -> Any:
    """A jitted function's flat results in its output structure."""
    return outs[0] if out_tree.is_leaf() else tree.unflatten(out_tree, outs)


class _TraceError(Exception):
    """An error raised while tracing inside ``mx.compile``, carried out of it
    as it is."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def _all_mx_arrays(leaves: Sequence) -> bool:
    for x in leaves:
        if type(x) is not mx.array:
            return False
    return True


def _hashable(v: Any) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _leaf_name(f: Callable, nargs: int, static: tuple, path: tuple) -> str:
    """'argument x[0]['w']' for a leaf path of ((dyn_args, dyn_kwargs)) of a
    call with ``nargs`` positional arguments, ``static`` of them static."""
    if len(path) < 2:
        return "an argument"
    if path[0] == 1:  # keyword argument
        return f"argument {path[1]}" + "".join(f"[{p!r}]" for p in path[2:])
    dyn = [i for i in range(nargs) if i not in static]
    i = dyn[path[1]] if path[1] < len(dyn) else path[1]
    return f"argument {_arg_names(f, max(nargs, i + 1))[i]}" + "".join(
        f"[{p!r}]" for p in path[2:])


def _log_trace(fname: str, key: tuple, last_keys: list) -> None:
    if config.log_compiles:
        logger.warning("ft.jit: tracing %r (%s)", fname, _retrace_reason(key, last_keys))
    last_keys.append(key)
    del last_keys[:-8]


def _retrace_reason(key: tuple, previous: list) -> str:
    if not previous:
        return "first call"
    treedef, statics, avals = key
    last = previous[-1]
    if treedef != last[0]:
        return f"argument structure changed: {last[0]} -> {treedef}"
    if statics != last[1]:
        def show(st):
            return ", ".join(f"{'argument ' if isinstance(k, int) else ''}{k}={v!r}"
                             for k, _, v in st)
        return f"static arguments changed: {show(last[1])} -> {show(statics)}"
    changed = [f"leaf {i}: {format_aval(ShapeDtypeStruct(*a[:2]))} -> "
               f"{format_aval(ShapeDtypeStruct(*b[:2]))}"
               for i, (a, b) in enumerate(zip(last[2], avals)) if a != b]
    return "new shapes/dtypes: " + "; ".join(changed) if changed else "cache cleared"


def _abstract_leaves(args: tuple, fname: str) -> tuple[list, list, Any]:
    """The avals of ``args``' leaves, which of them are weakly typed (Python
    scalars, as ``jit`` traces them), and the tree."""
    leaves, treedef = tree.flatten(args, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    avals, weak = [], []
    for path, leaf in zip(treedef.paths(), leaves):
        weak.append(isinstance(leaf, (bool, int, float, complex)))
        if isinstance(leaf, ShapeDtypeStruct):
            avals.append(ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype))
        elif isinstance(leaf, (mx.array, Tracer)) or weak[-1]:
            avals.append(aval_of(leaf))
        elif isinstance(leaf, np.ndarray):
            avals.append(aval_of(mx.array(leaf)))
        else:
            raise TypeError(f"{fname}: args" + "".join(f"[{p!r}]" for p in path)
                            + f" must be an array, a Python scalar or a ShapeDtypeStruct, "
                            f"got {type(leaf).__name__}: {leaf!r}")
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
    _util.check_callable(f, "make_graph")
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    fname = getattr(f, "__qualname__", repr(f))

    def make(*args) -> Graph:
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)
        avals, weak, treedef = _abstract_leaves(dyn, "make_graph")

        def flat_f(leaves):
            it = iter(tree.unflatten(treedef, leaves))
            out = f(*[args[i] if i in nums else next(it) for i in range(len(args))])
            return tree.leaves(out)

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
    _util.check_callable(f, "eval_shape")
    avals, weak, treedef = _abstract_leaves((args, kwargs), "eval_shape")
    out_tree = []

    def flat_f(leaves):
        a, k = tree.unflatten(treedef, leaves)
        leaves_out, out_tree_ = tree.flatten(f(*a, **k))
        out_tree.append(out_tree_)
        return leaves_out

    graph, _ = stage(flat_f, avals, getattr(f, "__qualname__", repr(f)), weak=weak)
    return tree.unflatten(out_tree[0], graph.out_avals)
