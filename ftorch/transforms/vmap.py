"""Vectorizing map: ``vmap``.

A ``BatchTracer`` carries a value with one extra batch axis (``bdim``; ``None``
when the value does not vary over the batch). Each primitive's batching rule
maps ``(values, bdims)`` to ``(out, out_bdim)``, moving batch axes only when
the operation needs them somewhere in particular.

A vmap may name its axis (``axis_name``). Collectives (``ftorch.lax.psum``
and the others in ``ftorch/lax/parallel.py``) are ``AxisPrimitive``s naming
the axes they work across: the innermost vmap of that name applies the
primitive's ``named_batch`` rule (a reduction or gather over its own batch
axis), and every other trace batches it as an ordinary op.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import api_util, core, tree
from ftorch.core import (
    MainTrace,
    Primitive,
    ShapeDtypeStruct,
    Trace,
    Tracer,
    aval_of,
    call_traced,
    global_random_key,
    new_main,
    user_frame,
)
from ftorch.graph import Graph, evaluate, subgraphs
from ftorch.primitives._rules import move_bdim
from ftorch.primitives.shape import static_slice
from ftorch.transforms.staging import derive


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace: Trace, val: Any, bdim: int | None):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self) -> ShapeDtypeStruct:
        a = aval_of(self.val)
        if self.bdim is None:
            return a
        return ShapeDtypeStruct(a.shape[:self.bdim] + a.shape[self.bdim + 1:], a.dtype)

    # Read straight off the value: these are on every rule's path.
    @property
    def shape(self) -> tuple[int, ...]:
        s = self.val.shape
        return s if self.bdim is None else s[:self.bdim] + s[self.bdim + 1:]

    dtype = property(lambda self: self.val.dtype)
    ndim = property(lambda self: self.val.ndim - (self.bdim is not None))

    def concrete(self):
        raise TypeError(self._varies_message("Python control flow, bool(), int() or .item()"))

    def conversion_error(self, what: str) -> Exception:
        if self.bdim is None:
            return super().conversion_error(what)
        return TypeError(self._varies_message(what))

    def _varies_message(self, what: str) -> str:
        return (
            f"{what} needs one concrete value, but {self.describe()} varies over the mapped "
            f"axis (at {user_frame()}). Select per example with ftorch.numpy.where, or "
            "compute the value outside ft.vmap.")


class Axis(NamedTuple):
    """A vmap's mapped axis (its ``MainTrace``'s data): size and name."""

    size: int
    name: Hashable | None = None


# The name of the axis whose batching rule is running: a higher-order
# primitive's rule re-batches its bodies over that same axis (batch_graph,
# batch_flat), so collectives inside them must see it by its name.
_rule_axis_name: Hashable | None = None


class BatchTrace(Trace):
    __slots__ = ()
    transform = "ft.vmap"

    @property
    def axis_size(self) -> int:
        return self.main.global_data.size

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        global _rule_axis_name
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        axis = self.main.global_data
        if (axis.name is not None and type(prim) is AxisPrimitive
                and axis.name in params["axis_name"]):
            out, out_dim = prim.named_batch(vals, dims, axis.size, axis.name, **params)
            return BatchTracer(self, out, out_dim)
        if dims.count(None) == len(dims):
            return prim.bind(*vals, **params)
        if prim.batch is None:
            raise NotImplementedError(f"primitive {prim.name!r} has no batching rule")
        outer, _rule_axis_name = _rule_axis_name, axis.name
        try:
            out, out_dim = prim.batch(vals, dims, axis_size=axis.size, **params)
        finally:
            _rule_axis_name = outer
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


# ----------------------------------------------------------------------------
# Named axes: what collectives bind through
# ----------------------------------------------------------------------------


def axis_main(name: Hashable, fname: str) -> MainTrace:
    """The innermost active vmap whose axis is called ``name`` (an inner
    vmap of the same name shadows an outer one, as in JAX). A ``NameError``
    naming the function ``fname`` when there is none."""
    for main in reversed(core._stack):
        if main.trace_type is BatchTrace and main.global_data.name == name:
            return main
    raise NameError(
        f"{fname}: unbound axis name: {name!r}. Collectives work across the axis of an "
        f"enclosing ft.vmap(..., axis_name={name!r}); no such vmap is running here.")


class AxisPrimitive(Primitive):
    """A primitive that works across named vmap axes (a collective).

    Its ``axis_name`` param is a tuple of names; the empty tuple marks its
    positional form, which works across an ordinary array axis instead (what
    the named form becomes once a vmap has batched it). ``named_batch(vals,
    dims, axis_size, name, **params) -> (out, out_dim)`` is its rule at the
    vmap called ``name``; its ``batch`` rule is for every other vmap.

    Binding it reaches the innermost vmap of each name even when no operand
    is traced by that vmap or a transform above it (the operand is then the
    same for every example): the operands are lifted into it, and it runs
    there. Under a ``jit`` (or a loop body) being staged inside that vmap,
    it is staged instead, with one more operand: an *anchor*, a value that
    varies over the axis. The anchor keeps the equation from being folded
    as a constant, and makes every staged call holding it (the jitted
    function, its derivatives) vary over the axis, so that the vmap batches
    it and the collective meets its axis again. (The staged function then
    closes over the vmap's value, so jit traces it anew at each call.) Rules
    pass operands past the first ``arity`` on unchanged."""

    __slots__ = ("named_batch", "arity")

    def __init__(self, name: str, impl: Callable, *, arity: int = 1, **kwargs: Any):
        super().__init__(name, impl, **kwargs)
        self.named_batch: Callable | None = None
        self.arity = arity

    def def_named_batch(self, rule: Callable) -> Callable:
        self.named_batch = rule
        return rule

    def bind(self, *args: Any, **params: Any) -> Any:
        names = params["axis_name"]
        if names:
            main = max((axis_main(n, self.name) for n in names), key=lambda m: m.level)
            top = -1
            for a in args:
                if isinstance(a, Tracer):
                    top = max(top, a._trace.main.level)
            dynamic = core._dynamic
            if dynamic is not None and dynamic.level > main.level:
                if len(args) == self.arity:
                    anchor = mx.zeros((main.global_data.size,), mx.int32)
                    args = (*args, BatchTracer(BatchTrace(main), anchor, 0))
            elif main.level > top:
                trace = BatchTrace(main)
                return trace.process_primitive(self, [trace.full_raise(a) for a in args],
                                               params)
        return Primitive.bind(self, *args, **params)


def uses_axis(graph: Graph, name: Hashable) -> bool:
    """Whether a collective in ``graph`` (at any depth) may work across the
    axis ``name``: it names it, or an equation holds a Python function (a
    custom rule), which could."""
    found = graph.derived.get("axis names")
    if found is None:
        names: set = set()
        for eqn in graph.eqns:
            if type(eqn.prim) is AxisPrimitive:
                names.update(eqn.params["axis_name"])
            if any(callable(v) and not isinstance(v, Graph) for v in eqn.params.values()):
                names.add(_OPAQUE)
            for g in subgraphs(eqn.params):
                uses_axis(g, name)
                names |= g.derived["axis names"]
        found = graph.derived["axis names"] = frozenset(names)
    return name in found or _OPAQUE in found


_OPAQUE = object()


_RULE_AXIS: Any = object()  # the default axis name: that of the running batching rule


def batch_flat(f: Callable, vals: list, dims: list, axis_size: int,
               axis_name: Hashable | None = _RULE_AXIS) -> tuple[list, list]:
    """Run ``f`` (a list of leaves -> a list of leaves) on ``vals`` batched
    along ``dims`` (``None``: not batched). Returns the output values and
    their batch axes (``None`` for outputs that do not vary). The axis is
    called ``axis_name``; by default, inside a batching rule, it is the
    rule's own axis (which the rule re-batches a body over)."""
    if axis_name is _RULE_AXIS:
        axis_name = _rule_axis_name
    with new_main(BatchTrace, Axis(axis_size, axis_name)) as main:
        trace = BatchTrace(main)
        outs = call_traced(
            f, [x if d is None else BatchTracer(trace, x, d) for x, d in zip(vals, dims)])
        out_vals, out_dims = [], []
        for o in outs:
            if isinstance(o, Tracer) and o._trace.main is main:
                out_vals.append(o.val)
                out_dims.append(o.bdim)
            else:
                out_vals.append(o)
                out_dims.append(None)
    return out_vals, out_dims


def batch_graph(graph: Graph, in_dims: Sequence[int | None], axis_size: int,
                force: Sequence[bool] | None = None,
                axis_name: Hashable | None = _RULE_AXIS) -> tuple[Graph, list]:
    """``graph`` vectorized over a batch axis of size ``axis_size``, as a graph.

    Input ``i`` carries the batch at axis ``in_dims[i]`` (``None``: it does
    not vary). Returns the batched graph and its outputs' batch axes. With
    ``force`` (one flag per output), every output that varies has its batch
    axis first, and the flagged ones vary even if they do not depend on it
    (broadcast): what a loop needs of its carry. ``axis_name`` is the
    axis's name, as for ``batch_flat`` (it matters only to a graph holding
    collectives over that name). Made once per signature and cached on
    ``graph``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> g = ft.make_graph(lambda x, y: x * y)(mx.ones(3), mx.ones(()))
    >>> batched, out_dims = batch_graph(g, [1, None], 4)
    >>> batched.in_avals[0].shape, out_dims
    ((3, 4), [1])
    """
    dims = tuple(in_dims)
    forced = None if force is None else tuple(bool(f) for f in force)
    if axis_name is _RULE_AXIS:
        axis_name = _rule_axis_name
    if axis_name is not None and not uses_axis(graph, axis_name):
        axis_name = None  # the same graph for any name: share the cache entry

    def make(info):
        def flat_f(leaves):
            outs, out_dims = batch_flat(lambda xs: evaluate(graph, xs), leaves, dims, axis_size,
                                        axis_name)
            if forced is not None:
                outs = [o if d is None and not f else move_bdim(o, d, 0, axis_size)
                        for o, d, f in zip(outs, out_dims, forced)]
                out_dims = [None if d is None and not f else 0
                            for d, f in zip(out_dims, forced)]
            info.append(out_dims)
            return outs
        in_avals = []
        for a, d in zip(graph.in_avals, dims):
            shape = a.shape if d is None else a.shape[:d] + (axis_size,) + a.shape[d:]
            in_avals.append(ShapeDtypeStruct(shape, a.dtype))
        return in_avals, flat_f

    key = ("vmap", dims, axis_size, forced)
    return derive(graph, key if axis_name is None else (*key, axis_name), make)


# ----------------------------------------------------------------------------
# The transform
# ----------------------------------------------------------------------------


def _broadcast_prefix(prefix: Any, full: Any, what: str) -> list:
    """Expand an axes spec given as a pytree prefix of ``full`` to one entry per leaf."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree.leaves(full))
    out: list = []
    try:
        specs = tree.structure(prefix, is_leaf=lambda x: x is None).flatten_up_to(full)
    except ValueError as e:
        raise ValueError(
            f"vmap: {what} {prefix!r} does not match the structure of the values it "
            f"applies to: {e}") from None
    for spec, sub in zip(tree.leaves(prefix, is_leaf=lambda x: x is None), specs):
        if spec is not None and not isinstance(spec, int):
            raise TypeError(f"vmap: {what} entries must be ints or None, got {spec!r}")
        out.extend([spec] * len(tree.leaves(sub)))
    return out


def vmap(
    f: Callable,
    in_axes: int | None | Sequence[Any] = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    chunk_size: int | None = None,
) -> Callable:
    """Vectorize ``f`` over an axis of its arguments, as ``jax.vmap``.

    ``in_axes`` is an int, ``None`` (not mapped), or a tuple with one entry
    per positional argument, each a pytree prefix of that argument; likewise
    ``out_axes`` for the outputs. Keyword arguments are always mapped over
    their axis 0 (``in_axes`` applies to positional arguments only, as in
    JAX): pass unmapped values positionally with ``None``, or close over them.
    ``axis_name`` (any hashable) names the mapped axis, for the collectives
    of ``ftorch.lax`` (``psum``, ``pmean``, ``pmax``, ``pmin``,
    ``all_gather``, ``psum_scatter``, ``axis_index``) to work across it
    inside ``f``; a nested vmap of the same name shadows this one, as in
    JAX. ``axis_size`` gives the batch size when no argument is mapped.
    ``chunk_size`` evaluates the batch ``chunk_size`` examples at a time and
    concatenates (bounded memory for huge batches); it cannot be combined
    with ``axis_name``, since a collective would then see one chunk only.

    Inside ``f``, MLX's global random state (``mx.random.*`` without
    ``key=``) is refused: it would give every example the same numbers.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> dot = lambda x, y: fnp.sum(x * y)
    >>> ft.vmap(dot, in_axes=(0, None))(mx.ones((3, 2)), mx.ones(2)).tolist()
    [2.0, 2.0, 2.0]
    >>> ft.vmap(dot)(mx.ones((3, 2)), y=mx.ones((3, 2))).tolist()  # y is mapped too
    [2.0, 2.0, 2.0]
    >>> center = lambda x: x - ft.lax.pmean(x, "batch")  # across the examples
    >>> ft.vmap(center, axis_name="batch")(mx.array([1.0, 2.0, 6.0])).tolist()
    [-2.0, -1.0, 3.0]
    """
    api_util.check_callable(f, "vmap")
    _check_options(in_axes, axis_name, axis_size, chunk_size)

    def batched_f(*args, **kwargs):
        # Keyword arguments join the tree only when there are some (the common
        # call has none, and flattening an extra level costs on every call).
        leaves, args_tree = (api_util.flatten_arrays((args, kwargs), "(args, kwargs)")
                             if kwargs else api_util.flatten_arrays(args, "args"))
        axes, size = _mapped_axes(in_axes, args, kwargs, leaves, args_tree, axis_size)
        run = functools.partial(_run_batched, f, args_tree=args_tree, with_kwargs=bool(kwargs),
                                out_axes=out_axes, axis_name=axis_name)
        random_key = global_random_key()
        if chunk_size is not None and chunk_size < size:
            out = _run_chunked(run, leaves, axes, size, chunk_size, out_axes)
        else:
            out = run(leaves, axes, size)
        if global_random_key() is not random_key:
            raise RuntimeError(
                f"vmap: {getattr(f, '__qualname__', f)!r} draws from MLX's global random "
                "state (mx.random.* without key=), which would give every example the same "
                "numbers. Pass keys instead (mx.random.split(key, n), mapped over axis 0) "
                "and draw with key=.")
        return out

    return batched_f


def _check_options(in_axes: Any, axis_name: Hashable | None, axis_size: int | None,
                   chunk_size: int | None) -> None:
    """vmap's own arguments, checked once when the function is made."""
    if chunk_size is not None and (type(chunk_size) is not int or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size must be a positive int, got {chunk_size!r}")
    if axis_size is not None and (not isinstance(axis_size, int) or isinstance(axis_size, bool)
                                  or axis_size < 0):
        raise TypeError(f"vmap: axis_size must be a non-negative int or None, got "
                        f"{axis_size!r}")
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(f"vmap: axis_name must be hashable (a string, say), got "
                            f"{axis_name!r}") from None
        if chunk_size is not None:
            raise ValueError(
                "vmap: chunk_size cannot be combined with axis_name: collectives over "
                f"{axis_name!r} would see one chunk of the batch at a time")
    if in_axes is not None and not isinstance(in_axes, (int, tuple, list)):
        raise TypeError(f"vmap: in_axes must be an int, None, or a tuple/list with one entry "
                        f"per positional argument, got {in_axes!r}")


def _mapped_axes(in_axes: Any, args: tuple, kwargs: dict, leaves: list, args_tree: Any,
                 axis_size: int | None) -> tuple[list, int]:
    """Each argument leaf's mapped axis (non-negative, or None) and the batch
    size they agree on; keyword arguments are mapped over axis 0."""
    axes_spec = tuple(in_axes) if isinstance(in_axes, list) else in_axes
    if isinstance(axes_spec, tuple) and len(axes_spec) != len(args):
        raise ValueError(
            f"vmap: in_axes has {len(axes_spec)} entries but the function was called "
            f"with {len(args)} positional arguments")
    axes = _broadcast_prefix(axes_spec, args, "in_axes")
    axes += [0] * (len(leaves) - len(axes))  # keyword arguments: axis 0
    size = axis_size
    norm_axes = []
    for i, (leaf, ax) in enumerate(zip(leaves, axes)):
        if ax is None:
            norm_axes.append(None)
            continue
        shape = aval_of(leaf).shape
        ax = api_util.check_axis(
            ax, len(shape), "vmap", "in_axes",
            of=lambda: f"{_arg_names(args_tree, kwargs)[i]} of shape {shape}")
        if size is None:
            size = shape[ax]
        elif shape[ax] != size:
            sizes = {name: aval_of(x).shape[a % aval_of(x).ndim]
                     for name, x, a in zip(_arg_names(args_tree, kwargs), leaves, axes)
                     if a is not None}
            raise ValueError(
                f"vmap: mapped axes have inconsistent sizes: {sizes}"
                + (f" (axis_size={axis_size})" if axis_size is not None else ""))
        norm_axes.append(ax)
    if size is None:
        raise ValueError("vmap: no argument is mapped (all in_axes are None); "
                         "pass axis_size to say how many times to map")
    return norm_axes, size


def _run_batched(f: Callable, leaves: list, axes: list, size: int, *, args_tree: Any,
                 with_kwargs: bool, out_axes: Any, axis_name: Hashable | None) -> Any:
    """``f`` batched over the argument leaves' ``axes``, its outputs' batch
    axes moved to ``out_axes``."""
    def flatten_out(out):
        out_leaves, out_tree = api_util.flatten_arrays(out, "output")
        return out_leaves, (out_tree, _broadcast_prefix(out_axes, out, "out_axes"))

    flat_f, out_info = api_util.flatten_fun(f, args_tree, flatten_out, kwargs=with_kwargs)
    vals, dims = batch_flat(flat_f, leaves, axes, size, axis_name)
    out_tree, spec = out_info.value
    results = []
    for val, bdim, ax in zip(vals, dims, spec):
        if ax is None:
            if bdim is not None:
                raise ValueError(
                    "vmap: out_axes is None for an output that varies over the mapped axis")
            results.append(val)
            continue
        ndim = aval_of(val).ndim + (bdim is None)
        ax = api_util.check_axis(ax, ndim, "vmap", "out_axes", of=f"an output of ndim {ndim - 1}")
        results.append(move_bdim(val, bdim, ax, size))
    return tree.unflatten(out_tree, results)


def _run_chunked(run: Callable, leaves: list, axes: list, size: int, chunk_size: int,
                 out_axes: Any) -> Any:
    """``run`` on ``chunk_size`` examples at a time, the outputs concatenated."""
    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [x if ax is None else static_slice(
            x, (slice(None),) * ax + (slice(start, stop),)) for x, ax in zip(leaves, axes)]
        pieces.append(run(chunk, axes, stop - start))
    out_tree = tree.structure(pieces[0])
    spec = _broadcast_prefix(out_axes, pieces[0], "out_axes")
    columns = zip(*[tree.leaves(p) for p in pieces])
    joined = [col[0] if ax is None else lax.concatenate(list(col), ax % aval_of(col[0]).ndim)
              for col, ax in zip(columns, spec)]
    return tree.unflatten(out_tree, joined)


def _arg_names(args_tree: Any, with_kwargs: Any) -> list[str]:
    """'args[0]['w']', 'kwargs['y']': each leaf of the arguments' tree, which is
    (args, kwargs) if there are keyword arguments, else args."""
    if not with_kwargs:
        return api_util.leaf_names(args_tree, "args")
    return [("args", "kwargs")[path[0].idx] + tree.keystr(path[1:])
            for path in tree.key_paths(args_tree)]
