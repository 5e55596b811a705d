"""``jit``: stage a function once per abstract signature, simplify its
graph, and run it compiled.

A jitted function is a cache from call signature (argument structure,
shapes, dtypes, static arguments) to ``Executable``
(``ftorch.transforms.executable``): the staged graph and how it runs,
uncompiled or compiled, as its ``compile_after`` policy says. A call
flattens its arguments once, finds or stages its signature's executable and
runs it; under enclosing transforms it binds the higher-order primitive
``jit_p`` on the graph instead, whose rules are the graph transforms
(``jvp_graph``, ``vjp_graph``, ``batch_graph``): they make a new graph,
cached on the original, which is bound as ``jit_p`` again and runs as its
own executable, so ``grad(jit(f))`` and ``vmap(jit(f))`` run compiled too.

Once a signature runs compiled, calls of it skip that Python: the
executables of one input structure share one ``mx.compile`` of a
dispatcher (a lane), which MLX traces once per shape signature and then
looks up in C++.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import api_util, core, tree
from ftorch.backend.lowering import lower
from ftorch.config import config, seconds_before_compile
from ftorch.core import (
    Primitive,
    ShapeDtypeStruct,
    Tracer,
    aval_of,
    format_aval,
)
from ftorch.core import primitive as observed_calls
from ftorch.graph import Graph, needs_host, simplify
from ftorch.transforms.executable import Executable, executable, in_tier, listeners, tell
from ftorch.transforms.jvp import jvp_graph
from ftorch.transforms.staging import checked, stage
from ftorch.transforms.vjp import vjp_graph
from ftorch.transforms.vmap import batch_graph

__all__ = ["jit", "jit_p"]

logger = logging.getLogger("ftorch.jit")


# ----------------------------------------------------------------------------
# jit_p: a call of a staged graph, and its rules
# ----------------------------------------------------------------------------


def _jit_impl(*args: Any, graph: Graph) -> list:
    return executable(graph)(*args)


jit_p = Primitive("jit", _jit_impl, multiple_results=True)
jit_p.def_abstract_eval(lambda *avals, graph: graph.out_avals)
# Inside an enclosing lowered graph, a jitted call is inlined: one compiled
# function for the whole; one that holds host-driven loops runs in the
# enclosing executable's tier.
jit_p.def_lowering(
    lambda *args, graph: (in_tier(graph) if needs_host(graph) else lower(graph))(*args))


def _inherit(graph: Graph, *derived: Graph) -> None:
    """Graphs derived from a jitted function's graph follow its compile_after
    and carry its name (for the profiler)."""
    for key in ("compile after", "name"):
        if key in graph.derived:
            for d in derived:
                d.derived[key] = graph.derived[key]


@jit_p.def_jvp
def _jit_jvp(primals, tangents, graph):
    derived, nonzero = jvp_graph(graph, [t is not None for t in tangents])
    _inherit(graph, derived)
    outs = jit_p.bind(*primals, *[t for t in tangents if t is not None], graph=derived)
    n_out = len(graph.outs)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if nz else None for nz in nonzero]


@jit_p.def_vjp_fwd
def _jit_vjp_fwd(primals, graph):
    fwd, bwd, nonzero = vjp_graph(graph)
    _inherit(graph, fwd, bwd)
    results = jit_p.bind(*primals, graph=fwd)
    n_out = len(graph.outs)
    return results[:n_out], results[n_out:], {"graph": bwd, "nonzero": tuple(nonzero)}


@jit_p.def_vjp
def _jit_vjp(cts, out, *residuals, graph, nonzero, needed):
    # Cotangents that are symbolic zeros are passed as zeros: the backward
    # graph was built for all outputs at once.
    cts = [lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)]
    in_cts = iter(jit_p.bind(*residuals, *cts, graph=graph))
    return tuple(next(in_cts) if nz else None for nz in nonzero)



@jit_p.def_batch
def _jit_batch(vals, dims, axis_size, graph):
    derived, out_dims = batch_graph(graph, dims, axis_size)
    _inherit(graph, derived)
    return jit_p.bind(*vals, graph=derived), out_dims


# ----------------------------------------------------------------------------
# jit
# ----------------------------------------------------------------------------


def jit(
    f: Callable,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    compile_after: float | str | None = "config",
) -> Callable:
    """Compile ``f``: stage it into a graph once per abstract signature
    (argument structure, shapes, dtypes and static arguments), simplify the
    graph, lower it to MLX and ``mx.compile`` it.

    ``compile_after`` says when the graph goes to ``mx.compile``: ``0`` at
    the first call; ``s`` seconds once a signature has been in use that
    long, running before then as MLX's lazy graph of the lowered ops (no
    kernel builds; the same lowering, so the same bits); ``None`` never;
    ``"auto"`` 0 on Metal and CUDA, 60 seconds on the CPU, where MLX builds
    every fused kernel with ``g++`` (0.6-0.85 s each): a short run never pays
    for the builds, a long one pays once it has spent about that long.
    ``"config"`` (the default) takes ``ft.config.jit_compile_after``
    (``"auto"`` unless set). Set 0 to time steady-state compiled speed.

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
    api_util.check_callable(f, "jit")
    if compile_after != "config":
        seconds_before_compile(compile_after)  # a bad setting is an error here, not at a call
    cache = _Cache(_Arguments(f, static_argnums, static_argnames, donate_argnums), compile_after)
    lanes, from_lane, call = cache.lanes, cache.from_lane, cache.call

    def jitted(*args, **kwargs):
        if config.disable_jit:
            return f(*args, **kwargs)
        flat = None
        # A compiled signature's call, checked in C++ (unless an observer
        # watches every call: the profiler, the NaN checks).
        if lanes and not core._stack and observed_calls._observer is None:
            result, flat = from_lane(args, kwargs)
            if result is not _MISS:
                return result
        return call(args, kwargs, flat)

    cache.jitted = jitted
    _CACHES.add(cache)
    jitted.trace = cache.traced
    jitted.trace_count = 0
    jitted.cache_size = cache.size
    jitted.clear_cache = cache.clear
    functools.update_wrapper(jitted, f)
    return jitted


# Every jitted function's cache, for clear_caches.
_CACHES: weakref.WeakSet = weakref.WeakSet()


def clear_caches() -> None:
    """Drop every jitted function's staged graphs and compiled executables
    (each traces again at its next call), as ``jax.clear_caches``.

    >>> import ftorch as ft, mlx.core as mx
    >>> f = ft.jit(lambda x: x + 1)
    >>> _ = f(mx.ones(2)); ft.clear_caches(); f.cache_size()
    0
    """
    for cache in list(_CACHES):
        cache.clear()


class _Arguments:
    """How a jitted function's calls are split: which arguments are static
    (by position and by name, as in JAX), which are donated, and their
    names for messages."""

    def __init__(self, f: Callable, static_argnums, static_argnames, donate_argnums):
        self.f, self.fname = f, getattr(f, "__qualname__", repr(f))
        try:
            params = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            params = []
        self.positional = [p.name for p in params
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.defaulted = {p.name for p in params if p.default is not p.empty}
        self.nums, self.names = self._statics(static_argnums, static_argnames)
        donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
        for n in donate:
            if not isinstance(n, int) or n in self.nums:
                raise ValueError(f"jit: donate_argnums entry {n!r} must be the index of a "
                                 "non-static positional argument")
        self.donate = donate
        self.donate_max = max((n if n >= 0 else -n - 1 for n in donate), default=-1)

    def _statics(self, static_argnums, static_argnames) -> tuple[tuple, tuple]:
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        positional = self.positional
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

    def split(self, args: tuple, kwargs: dict) -> tuple[tuple, tuple, dict]:
        """(the static arguments, keyed with their types, and the dynamic
        positional and keyword arguments) of one call."""
        if self.donate_max >= len(args):
            raise ValueError(f"jit: donate_argnums={self.donate!r} is out of range for a call "
                             f"of {self.fname!r} with {len(args)} positional arguments")
        if not (self.nums or self.names):
            return (), args, kwargs
        for i in self.nums:
            # Left out, a static parameter with a default takes it (as in JAX).
            name = self.arg_name(i)
            if i >= len(args) and name not in kwargs and name not in self.defaulted:
                raise ValueError(f"jit: static_argnums contains {i}, but {self.fname!r} was "
                                 f"called with {len(args)} positional arguments")
        # Keyed with their types too: 2 and 2.0 are equal but trace differently.
        statics = tuple((i, type(args[i]), args[i]) for i in self.nums if i < len(args)) + tuple(
            sorted(((k, type(v), v) for k, v in kwargs.items() if k in self.names),
                   key=lambda e: e[0]))
        for k, _, v in statics:
            if not _hashable(v):
                raise TypeError(f"jit: static argument {k!r} of {self.fname!r} must be "
                                f"hashable, got {type(v).__name__}")
        args = tuple(a for i, a in enumerate(args) if i not in self.nums)
        kwargs = {k: v for k, v in kwargs.items() if k not in self.names}
        return statics, args, kwargs

    def arg_name(self, i: int) -> str:
        return self.positional[i] if i < len(self.positional) else f"args[{i}]"

    def leaf_name(self, nargs: int, path: tuple) -> str:
        """'argument x[0]['w']' for a leaf path of ((dyn_args, dyn_kwargs)) of
        a call with ``nargs`` positional arguments."""
        if len(path) < 2:
            return "an argument"
        if path[0] == 1:  # keyword argument
            return f"argument {path[1]}" + "".join(f"[{p!r}]" for p in path[2:])
        dyn = [i for i in range(nargs) if i not in self.nums]
        i = dyn[path[1]] if path[1] < len(dyn) else path[1]
        return f"argument {self.arg_name(i)}" + "".join(f"[{p!r}]" for p in path[2:])

    def with_statics(self, nargs: int, statics: tuple) -> Callable:
        """``f`` as a function of the dynamic arguments of a call with
        ``nargs`` positional arguments and these static ones."""
        static_args = {k: v for k, _, v in statics}
        static_kwargs = {k: v for k, v in static_args.items() if isinstance(k, str)}
        f = self.f

        def call(*dyn_args, **dyn_kwargs):
            it = iter(dyn_args)
            full_args = [static_args[i] if i in static_args else next(it) for i in range(nargs)]
            return f(*full_args, **dyn_kwargs, **static_kwargs)

        return call


class _Cache:
    """A jitted function's executables, one per call signature, and its
    lanes (``_Lane``), one per input structure of calls whose leaves are
    all mx.arrays."""

    def __init__(self, arguments: _Arguments, compile_after: float | str | None):
        self.arguments = arguments
        self.compile_after = compile_after
        self.executables: dict[tuple, Executable] = {}
        self.lanes: dict[tuple, _Lane] = {}
        self.last_keys: list[tuple] = []
        self.jitted: Any = None  # the jitted function, whose trace_count this counts

    def from_lane(self, args: tuple, kwargs: dict) -> tuple[Any, tuple | None]:
        """(a call's results, None) from its lane, or (``_MISS``, its
        arguments' (leaves, treedef) where they were flattened to find out)
        when it has no open lane or its signature is not compiled."""
        if not kwargs and _all_mx_arrays(args):
            flat, leaves = None, args
            lane = self.lanes.get((len(args), config.fast_cpu_math))
        else:
            flat = leaves, treedef = tree.flatten((args, kwargs))
            lane = self.lanes.get((treedef, config.fast_cpu_math)) if _all_mx_arrays(
                leaves) else None
        if lane is None or not lane.open:
            return _MISS, flat
        try:
            outs = lane.function(*leaves)
        except _NotCompiled:
            lane.open = False
            return _MISS, flat
        out_tree = lane.out_tree if lane.out_tree is not None else self.lookup(args, kwargs)
        return _results(out_tree, outs), None

    def call(self, args: tuple, kwargs: dict, flat: tuple | None = None) -> Any:
        """One call: its signature's executable (staged on a miss), run
        outside transforms, else bound as ``jit_p`` for the enclosing
        transforms. ``flat``: the arguments' (leaves, treedef) when the
        lane lookup flattened them already (only without static arguments)."""
        key, leaves, treedef, nargs = self.signature(args, kwargs, flat)
        exe, hoisted = self.executables.get(key), []
        if exe is None:
            exe, hoisted = self.trace(key, treedef, nargs, leaves)
        if core._stack or hoisted or not _all_mx_arrays(leaves) or observed_calls._observer:
            return _results(exe.out_tree, jit_p.bind(*hoisted, *leaves, graph=exe.graph))
        outs = exe(*leaves)
        if exe.compiles_whole and self.lanes:  # its later calls go through its lane
            lane = self.lanes.get((_lane_key(nargs, treedef), key[3]))
            if lane is not None and lane.function is exe.compiled:
                lane.open = True
        return _results(exe.out_tree, outs)

    def signature(self, args: tuple, kwargs: dict,
                  flat: tuple | None = None) -> tuple[tuple, list, Any, int]:
        """(cache key, array leaves, their treedef, number of positional
        arguments) of one call, its arguments flattened once."""
        statics, dyn_args, dyn_kwargs = self.arguments.split(args, kwargs)
        leaves, treedef = flat if flat is not None else tree.flatten((dyn_args, dyn_kwargs))
        avals = tuple([(x.shape, x.dtype) for x in leaves if type(x) is mx.array])
        if len(avals) != len(leaves):
            avals = self._leaf_avals(leaves, treedef, statics, len(args))
        # Lowering depends on fast_cpu_math: a new setting is a new trace.
        return (treedef, statics, avals, config.fast_cpu_math), leaves, treedef, len(args)

    def _leaf_avals(self, leaves: list, treedef: Any, statics: tuple, nargs: int) -> tuple:
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
                name = self.arguments.leaf_name(nargs, treedef.paths()[i])
                raise TypeError(
                    f"jit: {name} of {self.arguments.fname!r} is {leaf!r} of type "
                    f"{type(leaf).__name__}, not an array. Pass it as an array "
                    "(mx.array(...)) to trace it, or mark it static with static_argnums= / "
                    "static_argnames= to compile one version per value.")
            a = aval_of(leaf)
            avals.append((a.shape, a.dtype))
        return tuple(avals)

    def trace(self, key: tuple, treedef: Any, nargs: int,
              leaves: list) -> tuple[Executable, list]:
        """Stage a new signature: its executable, cached unless the trace
        closes over tracers of enclosing transforms (then ``hoisted``, their
        values for this call, are the graph's leading inputs)."""
        fname = self.arguments.fname
        start = time.perf_counter()
        _log_trace(fname, key, self.last_keys)
        self.jitted.trace_count += 1
        flat_f, out_info = api_util.flatten_fun(self.arguments.with_statics(nargs, key[1]), treedef,
                                             functools.partial(_flatten_out, fname), kwargs=True)
        in_names = [self.arguments.leaf_name(nargs, p) for p in treedef.paths()]
        graph, hoisted = stage(flat_f, [ShapeDtypeStruct(*a[:2]) for a in key[2]], fname,
                               in_names, weak=[len(a) == 3 for a in key[2]])
        graph = checked(simplify(graph))
        if self.compile_after != "config":
            graph.derived["compile after"] = self.compile_after
        lane = None
        if self._has_lane(key, hoisted, leaves):
            lane = self._lane(_lane_key(nargs, treedef), treedef, key[3])
        exe = Executable(graph, out_info.value, self.compile_after,
                         None if lane is None else lane.function)
        graph.derived["executable"] = exe  # jit_p's impl runs the same one
        graph.derived["name"] = fname
        if not hoisted:
            self.executables[key] = exe
        if listeners:
            tell("trace", graph, time.perf_counter() - start)
        return exe, hoisted

    def _has_lane(self, key: tuple, hoisted: list, leaves: list) -> bool:
        """Whether a signature's compiled calls may take a lane: its leaves
        are all mx.arrays (no Python scalars, no tracers) and the function
        has no static arguments."""
        return not (hoisted or self.arguments.nums or self.arguments.names) and all(
            type(x) is mx.array and len(a) == 2 for x, a in zip(leaves, key[2]))

    def _lane(self, lane_key: Any, treedef: Any, fast_cpu_math: bool) -> _Lane:
        lane = self.lanes.get((lane_key, fast_cpu_math))
        if lane is None:
            lane = self.lanes[lane_key, fast_cpu_math] = _Lane(treedef, self.executables)
        return lane

    def traced(self, *args: Any, **kwargs: Any) -> Traced:
        """The staged graph of a call with these arguments (arrays,
        ``ShapeDtypeStruct``s, Python scalars; static arguments as for a
        call), staging it if its signature is new, as ``jitted.trace(...)``
        in JAX; nothing runs."""
        statics, dyn_args, dyn_kwargs = self.arguments.split(args, kwargs)
        leaves, treedef = tree.flatten((dyn_args, dyn_kwargs),
                                       is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
        specs = {i: x for i, x in enumerate(leaves) if isinstance(x, ShapeDtypeStruct)}
        stand_ins = [mx.zeros((), x.dtype) if i in specs else x for i, x in enumerate(leaves)]
        avals = list(self._leaf_avals(stand_ins, treedef, statics, len(args)))
        for i, spec in specs.items():
            avals[i] = (tuple(spec.shape), spec.dtype)
        key = (treedef, statics, tuple(avals), config.fast_cpu_math)
        exe = self.executables.get(key)
        if exe is None:
            exe, hoisted = self.trace(key, treedef, len(args), stand_ins)
            if hoisted:
                raise ValueError(f"trace: {self.arguments.fname!r} closes over values traced "
                                 "by an enclosing transform")
        in_names = [self.arguments.leaf_name(len(args), p) for p in treedef.paths()]
        return Traced(exe.graph, treedef, exe.out_tree, in_names, [len(a) == 3 for a in avals])

    def lookup(self, args: tuple, kwargs: dict) -> Any:
        """The output structure of a call whose signature has been staged."""
        return self.executables[self.signature(args, kwargs)[0]].out_tree

    def size(self) -> int:
        return len(self.executables)

    def clear(self) -> None:
        self.executables.clear()
        self.last_keys.clear()
        self.lanes.clear()


class Traced(NamedTuple):
    """A jitted function staged for one call signature (``jitted.trace``):
    its simplified graph, the tree of its dynamic arguments
    ``(args, kwargs)``, the tree of its result, the arguments' leaves'
    names and which of them are weakly typed (Python scalars)."""

    graph: Graph
    in_tree: Any
    out_tree: Any
    in_names: list[str]
    weak: list[bool]


class _Lane:
    """The compiled calls of one input structure of a jitted function: one
    ``mx.compile`` of a dispatcher, shared by the executables of its
    signatures. MLX traces the dispatcher once per shape signature (it
    finds that signature's executable and traces its lowering) and then
    checks a call's shapes and dtypes in C++, so such a call costs no
    Python but this. Open (tried first) while the last signature that met
    it runs compiled as one ``mx.compile``."""

    __slots__ = ("function", "open", "out_tree", "_treedef", "_executables")

    def __init__(self, treedef: Any, executables: dict):
        self._treedef = treedef
        self._executables = executables
        self.function = mx.compile(self._dispatch)
        self.open = False
        # The output structure its signatures share (None where they differ).
        self.out_tree: Any = _UNSET

    def _dispatch(self, *leaves: mx.array) -> list:
        key = (self._treedef, (), tuple([(x.shape, x.dtype) for x in leaves]),
               config.fast_cpu_math)
        exe = self._executables.get(key)
        if exe is None or not exe.compiles_whole:
            raise _NotCompiled  # staged or run uncompiled by the general path
        if self.out_tree is _UNSET:
            self.out_tree = exe.out_tree
        elif self.out_tree is not None and exe.out_tree != self.out_tree:
            self.out_tree = None
        return exe.lowering(*leaves)


class _NotCompiled(Exception):
    """Raised out of a lane's trace: the call's signature has no executable
    in the compiled tier yet."""


_UNSET = object()
_MISS = object()


def _lane_key(nargs: int, treedef: Any) -> Any:
    """The key of a call's lane (see ``_Cache.from_lane``): its number of
    arguments when they are leaves given by position, else its treedef."""
    return nargs if treedef == _positional_leaves(nargs) else treedef


@functools.lru_cache(maxsize=64)
def _positional_leaves(nargs: int) -> Any:
    return tree.structure((tuple(range(nargs)), {}))


def _flatten_out(fname: str, out: Any) -> tuple[list, Any]:
    out_leaves, out_tree = tree.flatten(out)
    for leaf in out_leaves:
        if not isinstance(leaf, (mx.array, Tracer, np.ndarray, bool, int, float)):
            raise TypeError(f"jit: {fname!r} returned a {type(leaf).__name__} "
                            f"({leaf!r}); jitted functions return arrays")
    return [mx.array(x) if isinstance(x, np.ndarray) else x for x in out_leaves], out_tree


def _results(out_tree: Any, outs: list) -> Any:
    """A jitted function's flat results in its output structure."""
    return outs[0] if out_tree.is_leaf() else tree.unflatten(out_tree, outs)


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


def _log_trace(fname: str, key: tuple, last_keys: list) -> None:
    if config.log_compiles:
        logger.warning("ft.jit: tracing %r (%s)", fname, _retrace_reason(key, last_keys))
    last_keys.append(key)
    del last_keys[:-8]


def _retrace_reason(key: tuple, previous: list) -> str:
    if not previous:
        return "first call"
    treedef, statics, avals, fast_cpu_math = key
    last = previous[-1]
    if fast_cpu_math != last[3]:
        return f"ft.config.fast_cpu_math changed: {last[3]} -> {fast_cpu_math}"
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
