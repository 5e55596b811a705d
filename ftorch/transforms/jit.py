"""``jit``: stage a function once per abstract signature, simplify its
graph, and run it compiled.

``jit`` binds the higher-order primitive ``jit_p`` on the staged graph
(staging itself is ``ftorch.transforms.staging``). Outside transforms,
``jit_p`` runs the graph lowered to MLX and handed to ``mx.compile``.
Inside transforms, ``jit_p``'s rules are the graph transforms
(``jvp_graph``, ``vjp_graph``, ``batch_graph``): they make a new graph,
cached on the original, which is bound as ``jit_p`` again, so
``grad(jit(f))`` and ``vmap(jit(f))`` run compiled too.

The common call, outside transforms with pytrees of mx.arrays, skips all of
that Python: it goes to an ``mx.compile`` of a dispatcher (one per input
structure) that MLX traces once per shape signature, looking the staged
graph up and lowering it; later calls are MLX's own signature check, in C++.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import core, tree
from ftorch.config import config, seconds_before_compile
from ftorch.core import (
    Primitive,
    ShapeDtypeStruct,
    Tracer,
    aval_of,
    format_aval,
)
from ftorch.graph import (
    Graph,
    compilable,
    lower,
    needs_host,
    simplify,
)
from ftorch.transforms import _util
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
    setting = graph.derived.get("compile after", config.jit_compile_after)
    if _compile_due(graph.derived, setting):
        return graph.lowered(*args)
    return lower(graph)(*args)  # MLX's lazy graph of the lowered ops: no kernel builds


def _compile_due(store: dict, setting: float | str | None) -> bool:
    """Whether a signature whose first use is recorded in ``store`` runs
    compiled now, under the ``compile_after`` ``setting``. Once its delay
    has run out it stays compiled: later calls return at the first line."""
    if "compiled" in store:
        return True
    after = seconds_before_compile(setting)
    if after == 0.0:
        return True
    if after is None:
        return False
    now = time.perf_counter()
    first = store.setdefault("first call", now)
    if now - first < after:
        return False
    if config.log_compiles:
        logger.warning("jit: compiling a signature in use for %.1f s (compile_after=%r)",
                       now - first, setting)
    store["compiled"] = True
    return True


jit_p = Primitive("jit", _jit_impl, multiple_results=True)
jit_p.def_abstract_eval(lambda *avals, graph: graph.out_avals)
# Inside an enclosing lowered graph, a jitted call is inlined: one compiled
# function for the whole.
jit_p.def_lowering(lambda *args, graph: lower(graph)(*args))


def _inherit(graph: Graph, *derived: Graph) -> None:
    """Graphs derived from a jitted function's graph follow its compile_after."""
    if "compile after" in graph.derived:
        for d in derived:
            d.derived["compile after"] = graph.derived["compile after"]


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
    compile_after: float | str | None = "config",
) -> Callable:
    """Compile ``f``: stage it into a graph once per abstract signature
    (argument structure, shapes, dtypes and static arguments), simplify the
    graph, lower it to MLX and ``mx.compile`` it.

    ``compile_after`` says when the graph goes to ``mx.compile``: ``0`` at
    the first call; ``s`` seconds once a signature has been in use that
    long, running before then as MLX's lazy graph of the lowered ops (no
    kernel builds; the same lowering, so the same bits); ``None`` never; ``"auto"`` 0 on Metal
    and CUDA, 60 seconds on the CPU, where MLX builds every fused kernel
    with ``g++`` (0.6-0.85 s each): a short run never pays for the builds, a
    long one pays once it has spent about that long. ``"config"`` (the
    default) takes ``ft.config.jit_compile_after`` (``"auto"`` unless set).
    Set 0 to time steady-state compiled speed.

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
    if compile_after != "config":
        seconds_before_compile(compile_after)  # a bad setting is an error here, not at a call
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
        # Lowering depends on fast_cpu_math: a new setting is a new trace.
        return (treedef, statics, avals, config.fast_cpu_math), leaves, treedef

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
        def with_statics(*dyn_args, **dyn_kwargs):
            it = iter(dyn_args)
            full_args = [static_args[i] if i in static_args else next(it)
                         for i in range(nargs)]
            return f(*full_args, **dyn_kwargs, **{k: v for k, v in static_args.items()
                                                  if isinstance(k, str)})

        def flatten_out(out):
            out_leaves, out_tree = tree.flatten(out)
            for leaf in out_leaves:
                if not isinstance(leaf, (mx.array, Tracer, np.ndarray, bool, int, float)):
                    raise TypeError(f"jit: {fname!r} returned a {type(leaf).__name__} "
                                    f"({leaf!r}); jitted functions return arrays")
            return [mx.array(x) if isinstance(x, np.ndarray) else x for x in out_leaves], out_tree

        flat_f, out_info = _util.flatten_fun(with_statics, treedef, flatten_out, kwargs=True)
        in_names = [_leaf_name(f, nargs, nums, p) for p in treedef.paths()]
        graph, hoisted = stage(flat_f, [ShapeDtypeStruct(*a[:2]) for a in key[2]], fname,
                               in_names, weak=[len(a) == 3 for a in key[2]])
        return checked(simplify(graph)), hoisted, out_info.value

    def entry_for(args: tuple, kwargs: dict) -> tuple[_Entry, list, list]:
        """The cached trace of a call's signature (traced on a miss), the
        call's array leaves, and the values of enclosing transforms' tracers
        that the trace closes over (then valid for this call only)."""
        key, leaves, treedef = split(args, kwargs)
        entry = cache.get(key)
        if entry is not None:
            return entry, leaves, []
        graph, hoisted, out_tree = trace(len(args), key, treedef)
        if compile_after != "config":
            graph.derived["compile after"] = compile_after
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
            if needs_host(entry.graph) or not compilable(entry.graph):
                # A data-dependent loop (not one mx.compile), or a graph too
                # deep for mx.compile: jit_p runs it.
                raise _TraceError(None)
            record.note(entry.out_tree)
            return lower(entry.graph)(*leaves)

        record = fast[fast_key, config.fast_cpu_math] = _Compiled(mx.compile(dispatch))
        return record

    def jitted(*args, **kwargs):
        if not (nums or names or core._stack) and len(args) > donate_max:
            if not kwargs and _all_mx_arrays(args):
                fast_key, leaves = len(args), args
            else:
                leaves, fast_key = tree.flatten((args, kwargs))
                if not _all_mx_arrays(leaves):  # NumPy arrays, leaked tracers, ...
                    fast_key = None
            record = None if fast_key is None else (
                fast.get((fast_key, config.fast_cpu_math)) or compiled_for(fast_key, args, kwargs))
            if record is not None and record.compiled is not None:
                setting = config.jit_compile_after if compile_after == "config" else compile_after
                if not _compile_due(record.timing, setting):
                    entry, leaves, _ = entry_for(args, kwargs)
                    return _results(entry.out_tree, lower(entry.graph)(*leaves))
                try:
                    outs = record.compiled(*leaves)
                except _TraceError as e:
                    if e.error is not None:
                        raise e.error from None
                    record.compiled = None  # its graph runs as compiled segments
                else:
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
    structure (``None`` once a trace needed the host: those calls take the
    general path), and the output structure its traces share (``None``
    where they differ, ``_UNSET`` before the first trace)."""

    __slots__ = ("compiled", "out_tree", "timing")

    def __init__(self, compiled: Callable):
        self.compiled = compiled
        self.out_tree: Any = _UNSET
        self.timing: dict = {}  # the first call's time, for compile_after

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
    as it is (``None``: the graph needs the host, so cannot be one
    ``mx.compile``)."""

    def __init__(self, error: Exception | None):
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

