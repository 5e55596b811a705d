"""User-defined batching rules: ``custom_vmap`` and ``sequential_vmap``, as
``jax.custom_batching``.

Calling a ``custom_vmap`` function binds one primitive, ``custom_vmap_call``,
whose params carry the user's function and rule made flat (lists of leaves in
and out): ``fun(leaves) -> leaves`` and ``rule(axis_size, in_batched,
leaves) -> (leaves, out_batched)``. Outside ``vmap`` it runs ``fun``; ``vmap``
calls the rule instead of batching ``fun``'s operations.

So that the rule stays in force however transforms are composed, every rule
of the primitive binds the primitive again:

- batching, when some transform outside the ``vmap`` also traces the values,
  binds a call whose function is the rule at this batch size and whose rule
  merges an outer batch axis into this one and calls the user's rule on the
  merged batch: ``vmap(vmap(f))`` calls the rule once, with the product of
  the two sizes;
- forward mode binds a call on (primals, tangents) whose function is the JVP
  of ``fun`` and whose rule is the JVP of the rule;
- reverse mode binds a call on (primals, cotangents) whose function is the
  VJP of ``fun`` and whose rule is the VJP of the rule (recomputing the
  forward pass inside the backward one).

Hence ``grad(vmap(f))``, ``vmap(grad(f))``, ``jvp(vmap(f))``,
``vmap(jvp(f))``, ``vmap(vmap(f))`` and any of them under ``jit`` use the
rule (or its derivative) wherever a ``vmap`` meets the call, and the plain
function (or its derivative) elsewhere.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.core import (
    Primitive,
    ShapeDtypeStruct,
    Tracer,
    aval_of,
    format_aval,
    is_inexact,
)
from ftorch.primitives._rules import move_bdim
from ftorch.primitives.loops import map as lax_map
from ftorch.primitives.shape import static_slice
from ftorch.transforms.autocast import as_written
from ftorch.transforms.jvp import jvp_flat
from ftorch.transforms.staging import ConcretizationError, stage
from ftorch.transforms.vjp import vjp_flat

__all__ = ["custom_vmap", "sequential_vmap"]

# Flat forms carried by the primitive's params:
#   fun(leaves: list) -> list
#   rule(axis_size: int, in_batched: list[bool], leaves: list) -> (list, list[bool])
# where batched leaves have the batch axis at 0.
FlatFun = Callable[[list], list]
FlatRule = Callable[[int, list, list], tuple]


custom_vmap_call_p = Primitive(
    "custom_vmap_call", lambda *leaves, fun, rule: fun(list(leaves)), multiple_results=True)


def _batched_at_zero(x: Any, axis_size: int) -> Any:
    return move_bdim(x, None, 0, axis_size)


def _dims(out_batched: Sequence[bool]) -> list:
    return [0 if b else None for b in out_batched]


def _named(f: Callable, name: str) -> Callable:
    """``f`` named for graphs, which print the functions a call carries."""
    f.__qualname__ = name
    return f


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


# ----------------------------------------------------------------------------
# Batching
# ----------------------------------------------------------------------------


@custom_vmap_call_p.def_batch
def _custom_vmap_batch(vals, dims, axis_size, fun, rule):
    vals = [v if d is None else move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    in_batched = [d is not None for d in dims]
    if not any(isinstance(v, Tracer) for v in vals):
        outs, out_batched = rule(axis_size, in_batched, vals)
        return outs, _dims(out_batched)
    # Another transform traces these values: the batched call is a
    # custom_vmap call of its own, so that it keeps the rule (a vmap outside
    # this one merges its axis into this one's) instead of exposing the
    # rule's operations. Its outputs' batch axes must be known now: the rule
    # is traced abstractly once to learn them.
    out_batched = _out_batched(rule, axis_size, in_batched, vals)
    outs = custom_vmap_call_p.bind(
        *vals, fun=_rule_at(rule, axis_size, in_batched, out_batched),
        rule=_merged_rule(rule, axis_size, in_batched, out_batched))
    return outs, _dims(out_batched)


def _out_batched(rule: FlatRule, axis_size: int, in_batched: list, vals: list) -> list:
    """Which outputs ``rule`` marks batched for these inputs, from a trace of
    it on their shapes alone."""
    found: list = []

    def run(leaves):
        outs, out_batched = rule(axis_size, in_batched, leaves)
        found.append(list(out_batched))
        return outs

    stage(run, [aval_of(v) for v in vals], "custom_vmap rule")
    return found[0]


def _rule_at(rule: FlatRule, axis_size: int, in_batched: list, out_batched: list) -> FlatFun:
    """The batched function: ``rule`` at one batch size and ``in_batched``."""
    def fun(leaves):
        outs, got = rule(axis_size, in_batched, leaves)
        if list(got) != out_batched:
            raise ValueError(
                f"custom_vmap: the rule returned out_batched {list(got)}, but {out_batched} "
                "for the same in_batched before; it must depend only on in_batched")
        return outs
    return _named(fun, f"{_name(rule)}[axis_size={axis_size}]")


def _merge_in(x: Any, inner: bool, outer: bool, m: int, n: int) -> Any:
    """One operand with its outer (size ``m``, at axis 0) and inner (size
    ``n``, next) batch axes merged into one of size ``m * n`` (broadcast in
    where it lacks one of them); unchanged when it has neither."""
    if not (inner or outer):
        return x
    shape = aval_of(x).shape
    if inner and outer:
        rest = shape[2:]
    elif inner:
        rest = shape[1:]
        x = lax.broadcast_to(lax.reshape(x, (1, n, *rest)), (m, n, *rest))
    else:
        rest = shape[1:]
        x = lax.broadcast_to(lax.reshape(x, (m, 1, *rest)), (m, n, *rest))
    return lax.reshape(x, (m * n, *rest))


def _split_out(y: Any, merged: bool, inner: bool, m: int, n: int) -> tuple[Any, bool]:
    """One output of the merged rule as the batched call returns it: with
    the inner batch axis exactly where ``inner`` says, and whether it has the
    outer one."""
    shape = aval_of(y).shape
    if merged:
        y = lax.reshape(y, (m, n, *shape[1:]))
        if not inner:  # unbatched at the inner level: the same for every inner index
            y = lax.reshape(static_slice(y, (slice(None), slice(0, 1))), (m, *shape[1:]))
        return y, True
    if inner:
        y = _batched_at_zero(y, n)
    return y, False


def _merged_rule(rule: FlatRule, n: int, inner: list, inner_out: list) -> FlatRule:
    """The rule of the batched call: an outer batch of size ``m`` is merged
    into the inner one and ``rule`` runs on the batch of ``m * n``."""
    def merged(m, outer, leaves):
        xs = [_merge_in(x, i, o, m, n) for x, i, o in zip(leaves, inner, outer)]
        outs, out_batched = rule(m * n, [i or o for i, o in zip(inner, outer)], xs)
        split = [_split_out(y, b, i, m, n) for y, b, i in zip(outs, out_batched, inner_out)]
        return [s[0] for s in split], [s[1] for s in split]
    return _named(merged, f"merged({_name(rule)})")


# ----------------------------------------------------------------------------
# Forward mode
# ----------------------------------------------------------------------------


@custom_vmap_call_p.def_jvp
def _custom_vmap_jvp(primals, tangents, fun, rule):
    # Integer and boolean operands have no tangent: they are left out.
    diff = [is_inexact(aval_of(p).dtype) for p in primals]
    ts = [lax.zeros_like(p) if t is None else t for p, t, d in zip(primals, tangents, diff) if d]
    n_p = len(primals)

    def split(leaves):
        rest = iter(leaves[n_p:])
        return list(leaves[:n_p]), [next(rest) if d else None for d in diff]

    def fun_jvp(leaves):
        ps, full = split(leaves)
        outs, t_outs = jvp_flat(fun, ps, full)
        return outs + [lax.zeros_like(o) if t is None else t for o, t in zip(outs, t_outs)]

    def rule_jvp(axis_size, in_batched, leaves):
        ps, full = split(leaves)
        b_p, b_t = split(in_batched)
        # A primal and its tangent are batched together (the unbatched one
        # broadcast), and so are all outputs: simple, and always valid.
        both = [p or bool(t) for p, t in zip(b_p, b_t)]
        ps = [x if b == c else _batched_at_zero(x, axis_size) for x, b, c in zip(ps, b_p, both)]
        full = [t if t is None or bool(b) == c else _batched_at_zero(t, axis_size)
                for t, b, c in zip(full, b_t, both)]

        def batched(xs):
            outs, out_batched = rule(axis_size, both, xs)
            return [o if b else _batched_at_zero(o, axis_size) for o, b in zip(outs, out_batched)]

        outs, t_outs = jvp_flat(batched, ps, full)
        res = outs + [lax.zeros_like(o) if t is None else t for o, t in zip(outs, t_outs)]
        return res, [True] * len(res)

    res = custom_vmap_call_p.bind(*primals, *ts, fun=_named(fun_jvp, f"jvp({_name(fun)})"),
                                  rule=_named(rule_jvp, f"jvp({_name(rule)})"))
    half = len(res) // 2
    outs = res[:half]
    return outs, [t if is_inexact(aval_of(o).dtype) else None for o, t in zip(outs, res[half:])]


# ----------------------------------------------------------------------------
# Reverse mode
# ----------------------------------------------------------------------------


@custom_vmap_call_p.def_vjp
def _custom_vmap_vjp(cts, out, *primals, fun, rule, needed):
    # Cotangents flow through floating outputs only; only the needed
    # primals get one.
    live = [j for j, o in enumerate(out) if is_inexact(aval_of(o).dtype)]
    cs = [lax.zeros_like(out[j]) if cts[j] is None else cts[j] for j in live]
    wanted = [i for i, n in enumerate(needed) if n]
    n_p, n_out = len(primals), len(out)

    def pull(f, ps, cs):
        _, pullback = vjp_flat(f, ps)
        full = [None] * n_out
        for j, c in zip(live, cs):
            full[j] = c
        in_cts = pullback(full)
        return [lax.zeros_like(ps[i]) if in_cts[i] is None else in_cts[i] for i in wanted]

    def fun_vjp(leaves):
        return pull(fun, list(leaves[:n_p]), list(leaves[n_p:]))

    def rule_vjp(axis_size, in_batched, leaves):
        # The primals that get a cotangent, the cotangents and all results
        # are batched (the unbatched broadcast): each example has its own
        # cotangents. Other primals stay as they are.
        force = [b or i in wanted for i, b in enumerate(in_batched[:n_p])] + [True] * len(cs)
        xs = [x if b else _batched_at_zero(x, axis_size) if f else x
              for x, b, f in zip(leaves, in_batched, force)]

        def batched(ps):
            outs, out_batched = rule(axis_size, force[:n_p], ps)
            return [o if b else _batched_at_zero(o, axis_size) for o, b in zip(outs, out_batched)]

        res = pull(batched, xs[:n_p], xs[n_p:])
        return res, [True] * len(res)

    got = custom_vmap_call_p.bind(*primals, *cs, fun=_named(fun_vjp, f"vjp({_name(fun)})"),
                                  rule=_named(rule_vjp, f"vjp({_name(rule)})"))
    in_cts: list = [None] * n_p
    for i, g in zip(wanted, got):
        in_cts[i] = g
    return tuple(in_cts)


# ----------------------------------------------------------------------------
# The user's API
# ----------------------------------------------------------------------------


class custom_vmap:
    """A function with a user-defined batching rule, as
    ``jax.custom_batching.custom_vmap``.

    The rule, set with ``def_vmap``, is
    ``rule(axis_size, in_batched, *args) -> (out, out_batched)``.
    ``in_batched`` has the structure of ``args`` (a tuple with one pytree of
    bools per argument), ``True`` for the leaves that ``vmap`` maps, which
    arrive with the batch axis at 0; the others arrive unchanged.
    ``out_batched`` has the structure of ``out``, ``True`` for the leaves
    that carry the batch axis at 0 (of size ``axis_size``); ``vmap``
    broadcasts the others. Per example, the rule's results must have the
    structure, shapes and dtypes of the function's (checked against a trace
    of the function on one example's shapes, made once per signature).
    Arguments are positional only; every leaf must be an array (Python
    scalars become arrays).

    Outside ``vmap`` the function itself runs. Under ``vmap`` the rule runs,
    also when ``vmap`` is composed with ``grad``, ``jvp``, ``jit`` or another
    ``vmap`` (see the module's docstring): the derivative of a vmapped call
    is the rule's, ``jacfwd`` and ``jacrev`` (which vmap a derivative) use
    the rule's derivative, and ``vmap(vmap(f))`` calls the rule once on the
    merged batch, of the product of the sizes. So the rule must batch the
    function faithfully for any ``axis_size`` and any ``in_batched``: the
    derived rules batch some leaves that the user's ``vmap`` did not.

    Limits: under a transform outside the ``vmap`` (``grad(vmap(f))``,
    ``vmap(vmap(f))``, ``jit(vmap(f))``) the rule is also traced once on
    abstract values to learn ``out_batched``, which must depend on
    ``in_batched`` only (not on values); reverse mode recomputes the forward
    pass inside the backward one; the function and the rule must not close
    over values traced by a transform applied to the call itself (pass them
    as arguments).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> import ftorch.custom_batching
    >>> @ftorch.custom_batching.custom_vmap
    ... def matvec(w, v):
    ...     return w @ v
    >>> @matvec.def_vmap
    ... def matvec_rule(axis_size, in_batched, w, v):
    ...     w_batched, v_batched = in_batched
    ...     if v_batched and not w_batched:  # one matmul for the whole batch
    ...         return v @ w.T, True
    ...     return fnp.matmul(w, v[..., None])[..., 0], w_batched or v_batched
    >>> w, vs = mx.eye(2), mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> ft.vmap(matvec, in_axes=(None, 0))(w, vs).tolist()
    [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    """

    def __init__(self, fun: Callable):
        api_util.check_callable(fun, "custom_vmap")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None
        # (argument tree, per-example avals) -> the function's output tree and avals.
        self._signatures: dict = {}

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        """Set the batching rule; returns it (usable as a decorator).

        >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
        >>> from ftorch.custom_batching import custom_vmap
        >>> f = custom_vmap(fnp.sin)
        >>> _ = f.def_vmap(lambda axis_size, in_batched, x: (fnp.cos(x), True))
        >>> f(mx.array(0.0)).item(), ft.vmap(f)(mx.zeros(2)).tolist()
        (0.0, [1.0, 1.0])
        """
        api_util.check_callable(vmap_rule, "custom_vmap.def_vmap")
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fun, rule = self.fun, self.vmap_rule
        fname = _name(fun)
        if rule is None:
            raise AttributeError(
                f"custom_vmap: {fname!r} has no batching rule; define one with "
                f"@{getattr(fun, '__name__', 'f')}.def_vmap")
        if kwargs:
            raise TypeError(
                f"custom_vmap: {fname!r} was called with keyword arguments "
                f"{sorted(kwargs)}; they are not supported (as in JAX's rules, which take the "
                "arguments positionally): pass them positionally")
        leaves, in_tree = api_util.flatten_arrays(args, "custom_vmap argument")
        rname = _name(rule)
        out_tree: list = []

        def record(out):
            leaves_, treedef = api_util.flatten_arrays(out, f"the output of {fname!r}")
            out_tree[:] = [treedef]
            return leaves_, treedef

        call_fun, _ = api_util.flatten_fun(fun, in_tree, record)

        def flat_rule(axis_size, in_batched, xs):
            got = rule(axis_size, tree.unflatten(in_tree, list(in_batched)),
                       *tree.unflatten(in_tree, list(xs)))
            if not (isinstance(got, tuple) and len(got) == 2):
                raise TypeError(f"custom_vmap: the rule {rname!r} must return a pair "
                                f"(out, out_batched), got {type(got).__name__}")
            out, out_batched = got
            out_leaves, treedef = api_util.flatten_arrays(out, "the rule's output")
            flags, flags_tree = tree.flatten(out_batched)
            if flags_tree != treedef:
                raise TypeError(
                    f"custom_vmap: out_batched has structure {flags_tree}, but the output of "
                    f"the rule {rname!r} {treedef}; give one bool per output leaf")
            names = api_util.leaf_names(treedef, "out")
            for name, o, b in zip(names, out_leaves, flags):
                if not isinstance(b, (bool, np.bool_)):
                    raise TypeError(f"custom_vmap: the rule {rname!r} gives out_batched "
                                    f"{b!r} for {name}; it must be a bool")
                shape = aval_of(o).shape
                if b and (not shape or shape[0] != axis_size):
                    raise ValueError(
                        f"custom_vmap: {name} of the rule {rname!r} is marked batched but has "
                        f"shape {shape}; its axis 0 must be the batch axis, of size {axis_size}")
            example = [_example_aval(x, b) for x, b in zip(xs, in_batched)]
            per_example = [_example_aval(o, b) for o, b in zip(out_leaves, flags)]
            self._check_like_fun(in_tree, example, treedef, per_example, names, rname)
            out_tree[:] = [treedef]
            return out_leaves, [bool(b) for b in flags]

        # (Both run as written under ft.amp.autocast: the rule's output must
        # have the function's dtypes.)
        outs = custom_vmap_call_p.bind(*leaves, fun=_named(as_written(call_fun), fname),
                                       rule=_named(as_written(flat_rule), rname))
        return tree.unflatten(out_tree[0], outs)

    def _check_like_fun(self, in_tree: Any, example: list, treedef: Any, per_example: list,
                        names: list, rname: str) -> None:
        """The rule's results, per example, must have the structure, shapes
        and dtypes of the function's. The function's are found by tracing it
        on one example's shapes, once per signature (and again before an
        error, in case what it returns has changed since)."""
        key = (in_tree, tuple(example))
        got = (treedef, tuple(per_example))
        fname = _name(self.fun)
        for fresh in (False, True):
            expected = None if fresh else self._signatures.get(key)
            if expected is None:
                run, out_info = api_util.flatten_fun(
                    self.fun, in_tree, api_util.output_flattener(
                        "custom_vmap", what=f"the output of {fname!r}"))
                try:
                    graph, _ = stage(run, example, f"custom_vmap function {fname!r}")
                except ConcretizationError:  # it needs values: nothing to compare with
                    return
                expected = self._signatures[key] = (out_info.value[0], tuple(graph.out_avals))
            if expected == got:
                return
        fun_tree, fun_avals = expected
        if fun_tree != treedef:
            raise TypeError(f"custom_vmap: the output of the rule {rname!r} has structure "
                            f"{treedef}, but {fname!r} returns {fun_tree}")
        for name, have, want in zip(names, per_example, fun_avals):
            if have != want:
                raise ValueError(
                    f"custom_vmap: {name} of the rule {rname!r} is, per example, "
                    f"{format_aval(have)}, but {fname!r} returns {format_aval(want)}")


def _example_aval(x: Any, batched: bool) -> ShapeDtypeStruct:
    """The shape and dtype of one example of ``x``."""
    a = aval_of(x)
    return ShapeDtypeStruct(tuple(a.shape[1:] if batched else a.shape), a.dtype)


def sequential_vmap(f: Callable) -> custom_vmap:
    """``f`` as a ``custom_vmap`` function whose batching rule loops over the
    batch (``ftorch.lax.map``) instead of vectorizing: for functions that
    cannot be batched, or would take too much memory batched, as
    ``jax.custom_batching.sequential_vmap``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> from ftorch.custom_batching import sequential_vmap
    >>> g = sequential_vmap(lambda x, y: fnp.sum(x) * y)
    >>> ft.vmap(g, in_axes=(0, None))(mx.ones((3, 2)), mx.array(2.0)).tolist()
    [4.0, 4.0, 4.0]
    """
    api_util.check_callable(f, "sequential_vmap")
    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size, in_batched, *args):
        flags, flags_tree = tree.flatten(list(in_batched))
        leaves = tree.leaves(list(args))
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(xs):
            it = iter(xs)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return g(*tree.unflatten(flags_tree, full))

        out = lax_map(one, mapped)
        return out, tree.map(lambda _: True, out)

    return g
