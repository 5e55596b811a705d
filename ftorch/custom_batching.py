"""User-defined batching rules: ``custom_vmap``, as
``jax.custom_batching.custom_vmap``.

Calling a decorated function binds one primitive, ``custom_vmap_call``,
whose params carry the function and the rule made flat (lists of leaves),
so every transform sees a single operation:

- outside ``vmap`` it runs the function;
- ``vmap``'s rule calls the user's rule with the batched arguments (batch
  axis first) and which of them are batched;
- forward and reverse mode differentiate the function, and bind
  ``custom_vmap_call`` again with the derivative of the rule as its rule,
  so ``vmap(grad(f))`` and ``vmap(jvp(f))`` still batch through the user's
  rule (differentiated). In those derived rules every argument and result
  is taken as batched (unbatched ones are broadcast first): simple, at the
  cost of some broadcasting.

Under ``jit`` the call is staged as the primitive, so the rule holds there
too. Under nested ``vmap``, the innermost ``vmap`` calls the rule; the
outer ones batch the rule's operations as any others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ftorch.primitives as lax
from ftorch import tree
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import move_bdim
from ftorch.transforms import _util
from ftorch.transforms.jvp import jvp_flat
from ftorch.transforms.vjp import vjp_flat

__all__ = ["custom_vmap"]


def _stacked(x: Any, axis_size: int) -> Any:
    """``x`` repeated ``axis_size`` times along a new leading axis."""
    shape = tuple(aval_of(x).shape)
    return lax.broadcast_to(lax.expand_dims(x, (0,)), (axis_size, *shape))


def _all_batched(rule: Callable, axis_size: int, in_batched: Sequence[bool]) -> Callable:
    """The rule as a function of leaves that are all batched, whose results
    are all batched: what the derived rules differentiate."""
    def run(leaves: list) -> list:
        outs, out_batched = rule(axis_size, list(in_batched), leaves)
        return [o if b else _stacked(o, axis_size) for o, b in zip(outs, out_batched)]
    return run


def _batch_all(leaves: Sequence, batched: Sequence[bool], axis_size: int) -> list:
    return [x if b else _stacked(x, axis_size) for x, b in zip(leaves, batched)]


def _zeros_for(values: Sequence, cts: Sequence) -> list:
    return [lax.zeros_like(v) if c is None else c for v, c in zip(values, cts)]


custom_vmap_call_p = Primitive(
    "custom_vmap_call", lambda *leaves, fun, rule: fun(list(leaves)), multiple_results=True)


@custom_vmap_call_p.def_batch
def _custom_vmap_batch(vals, dims, axis_size, fun, rule):
    vals = [v if d is None else move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]
    outs, out_batched = rule(axis_size, [d is not None for d in dims], vals)
    return outs, [0 if b else None for b in out_batched]


@custom_vmap_call_p.def_jvp
def _custom_vmap_jvp(primals, tangents, fun, rule):
    n = len(primals)
    tangents = _zeros_for(primals, tangents)

    def jvp_fun(leaves):
        outs, t_outs = jvp_flat(fun, leaves[:n], leaves[n:])
        return outs + _zeros_for(outs, t_outs)

    def jvp_rule(axis_size, in_batched, leaves):
        either = [a or b for a, b in zip(in_batched[:n], in_batched[n:])]
        ps = _batch_all(leaves[:n], [b or not e for b, e in zip(in_batched[:n], either)],
                        axis_size)
        ts = _batch_all(leaves[n:], [b or not e for b, e in zip(in_batched[n:], either)],
                        axis_size)
        # Leaves neither batched stay unbatched for the rule; the others are
        # batched together.
        outs, t_outs = jvp_flat(_all_batched(rule, axis_size, either), ps, ts)
        results = outs + _zeros_for(outs, t_outs)
        return results, [True] * len(results)

    outs = custom_vmap_call_p.bind(*primals, *tangents, fun=jvp_fun, rule=jvp_rule)
    half = len(outs) // 2
    return outs[:half], outs[half:]


@custom_vmap_call_p.def_vjp
def _custom_vmap_vjp(cts, out, *primals, fun, rule, needed):
    n = len(primals)
    cts = _zeros_for(out, cts)

    def vjp_fun(leaves):
        ps = leaves[:n]
        _, pullback, _ = vjp_flat(lambda xs: (fun(xs), None), ps)
        return _zeros_for(ps, pullback(leaves[n:]))

    def vjp_rule(axis_size, in_batched, leaves):
        ps = _batch_all(leaves[:n], in_batched[:n], axis_size)
        cs = _batch_all(leaves[n:], in_batched[n:], axis_size)
        batched_rule = _all_batched(rule, axis_size, [True] * n)
        _, pullback, _ = vjp_flat(lambda xs: (batched_rule(xs), None), ps)
        results = _zeros_for(ps, pullback(cs))
        return results, [True] * len(results)

    in_cts = custom_vmap_call_p.bind(*primals, *cts, fun=vjp_fun, rule=vjp_rule)
    return tuple(c if nd else None for c, nd in zip(in_cts, needed))


class custom_vmap:
    """A function with a user-defined batching rule, as
    ``jax.custom_batching.custom_vmap``.

    The rule is ``rule(axis_size, in_batched, *args) -> (out, out_batched)``:
    ``in_batched`` is a pytree of bools like ``args`` (a tuple), True for
    the leaves that ``vmap`` batches, which arrive with the batch axis
    first; ``out_batched`` is a pytree of bools like ``out`` saying which
    results carry the batch axis (first).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> @ft.custom_batching.custom_vmap
    ... def matvec(w, x):
    ...     return w @ x
    >>> @matvec.def_vmap
    ... def matvec_rule(axis_size, in_batched, w, x):
    ...     w_batched, x_batched = in_batched
    ...     assert not w_batched and x_batched
    ...     return x @ w.T, True       # one matmul for the whole batch
    >>> w, xs = mx.eye(3) * 2.0, mx.ones((4, 3))
    >>> ft.vmap(matvec, in_axes=(None, 0))(w, xs).shape
    (4, 3)
    """

    def __init__(self, fun: Callable):
        _util.check_callable(fun, "custom_vmap")
        self.fun = fun
        self.rule: Callable | None = None

    def def_vmap(self, rule: Callable) -> Callable:
        """Set the batching rule; returns it (usable as a decorator)."""
        _util.check_callable(rule, "custom_vmap.def_vmap")
        self.rule = rule
        return rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("custom_vmap: keyword arguments are not supported (as in JAX); "
                            "pass them positionally")
        if self.rule is None:
            raise AttributeError("custom_vmap: no batching rule; define one with @f.def_vmap")
        fun, user_rule = self.fun, self.rule
        leaves, in_tree = _util.flatten_arrays(args, "custom_vmap argument")
        out_tree: list = []

        def flat_fun(xs):
            out_leaves, treedef = _util.flatten_arrays(fun(*tree.unflatten(in_tree, xs)),
                                                       "custom_vmap output")
            out_tree[:] = [treedef]
            return out_leaves

        def flat_rule(axis_size, in_batched, xs):
            batched_tree = tree.unflatten(in_tree, list(in_batched))
            got = user_rule(axis_size, batched_tree, *tree.unflatten(in_tree, xs))
            if not (isinstance(got, tuple) and len(got) == 2):
                raise TypeError("custom_vmap: the rule must return a pair (out, out_batched)")
            out, out_batched = got
            out_leaves, treedef = _util.flatten_arrays(out, "custom_vmap rule output")
            flags, flags_tree = tree.flatten(out_batched)
            if flags_tree != treedef:
                raise TypeError(f"custom_vmap: out_batched has structure {flags_tree}, the "
                                f"rule's output {treedef}")
            names = _util.leaf_names(treedef, "custom_vmap rule output")
            for name, o, b in zip(names, out_leaves, flags):
                if not isinstance(b, bool):
                    raise TypeError(f"custom_vmap: out_batched for {name} must be a bool, "
                                    f"got {b!r}")
                shape = tuple(aval_of(o).shape)
                if b and (not shape or shape[0] != axis_size):
                    raise ValueError(f"custom_vmap: {name} is marked batched but has shape "
                                     f"{shape}; its first axis must be the batch axis of "
                                     f"size {axis_size}")
            if out_tree and out_tree[0] != treedef:
                raise TypeError(f"custom_vmap: the rule's output has structure {treedef}, the "
                                f"function's {out_tree[0]}")
            out_tree[:] = [treedef]
            return out_leaves, flags

        outs = custom_vmap_call_p.bind(*leaves, fun=flat_fun, rule=flat_rule)
        return tree.unflatten(out_tree[0], outs)
