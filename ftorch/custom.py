"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``, as in
JAX.

Calling a decorated function binds one primitive whose params carry the
user's function and rules, made flat (lists of leaves in and out), so every
transform sees a single operation:

- ``custom_jvp_call``: forward mode applies the user's JVP rule; reverse
  mode transposes it (the rule's tangent output is linear in the tangents:
  its pullback with respect to them gives the cotangents); vmap batches the
  function and the rule alike.
- ``custom_vjp_call``: reverse mode runs the user's ``fwd`` (keeping its
  residuals, a pytree) and then ``bwd``; forward mode is an error, as in
  JAX; vmap batches ``fun``, ``fwd`` and ``bwd``.

Under ``jit`` the call is staged as that primitive, so ``grad(jit(f))`` and
``jit(grad(f))`` use the rules too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ftorch.primitives as lax
from ftorch import tree
from ftorch.core import Primitive
from ftorch.primitives._rules import move_bdim
from ftorch.transforms import _util
from ftorch.transforms.vjp import vjp_flat
from ftorch.transforms.vmap import batch_flat

__all__ = ["custom_jvp", "custom_vjp"]


class _Signature:
    """How a call's arguments and results are laid out: the static
    (``nondiff_argnums``) arguments, the tree of the others, and the tree
    of the result, recorded when the function first runs."""

    def __init__(self, args: tuple, nondiff: tuple[int, ...], fname: str):
        self.static = {i: args[i] for i in nondiff if i < len(args)}
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.static)
        self.leaves, self.in_tree = _util.flatten_arrays(dynamic, f"{fname} argument")
        self.nargs = len(args)
        self.out_tree: Any = None

    def dynamic(self, leaves: Sequence) -> tuple:
        return tuple(tree.unflatten(self.in_tree, list(leaves)))

    def full(self, leaves: Sequence) -> list:
        it = iter(self.dynamic(leaves))
        return [self.static[i] if i in self.static else next(it) for i in range(self.nargs)]

    def statics(self) -> list:
        return [self.static[i] for i in sorted(self.static)]

    def flat_out(self, out: Any, what: str) -> list:
        leaves, self.out_tree = _util.flatten_arrays(out, what)
        return leaves


def _at_zero(vals: Sequence, dims: Sequence, axis_size: int) -> list:
    return [move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]


def _batched(f: Callable, axis_size: int) -> Callable:
    """A flat function of leaves all batched at axis 0, with its outputs
    batched at axis 0 too (what a batched rule must return)."""
    def run(*groups):
        leaves = [x for g in groups for x in g]
        sizes = [len(g) for g in groups]

        def inner(xs):
            parts, start = [], 0
            for n in sizes:
                parts.append(xs[start:start + n])
                start += n
            out = f(*parts)
            return [x for o in (out if isinstance(out, tuple) else (out,)) for x in o]

        outs, dims = batch_flat(inner, leaves, [0] * len(leaves), axis_size)
        return [move_bdim(o, d, 0, axis_size) for o, d in zip(outs, dims)]
    return run


# ----------------------------------------------------------------------------
# custom_jvp
# ----------------------------------------------------------------------------


custom_jvp_call_p = Primitive(
    "custom_jvp_call", lambda *leaves, fun, jvp: fun(leaves), multiple_results=True)


@custom_jvp_call_p.def_jvp
def _custom_jvp_jvp(primals, tangents, fun, jvp):
    tangents = [lax.zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
    return jvp(list(primals), tangents)


@custom_jvp_call_p.def_vjp
def _custom_jvp_vjp(cts, out, *primals, fun, jvp, needed):
    # The rule's tangent output is linear in the tangents: its pullback with
    # respect to them is the transpose, the primals' cotangents.
    zeros = [lax.zeros_like(p) for p in primals]
    _, pullback, _ = vjp_flat(lambda ts: (jvp(list(primals), ts)[1], None), zeros)
    in_cts = pullback([lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)])
    return tuple(c if n else None for c, n in zip(in_cts, needed))


@custom_jvp_call_p.def_batch
def _custom_jvp_batch(vals, dims, axis_size, fun, jvp):
    vals = _at_zero(vals, dims, axis_size)
    fun_b = _batched(lambda xs: fun(xs), axis_size)
    jvp_b2 = _batched(lambda ps, ts: tuple(jvp(ps, ts)), axis_size)

    def jvp_b(ps, ts):
        outs = jvp_b2(ps, ts)
        half = len(outs) // 2
        return outs[:half], outs[half:]

    outs = custom_jvp_call_p.bind(*vals, fun=fun_b, jvp=jvp_b)
    return outs, [0] * len(outs)


class custom_jvp:
    """A function with a user-defined JVP rule, as ``jax.custom_jvp``: the
    rule is ``rule(*nondiff_args, primals, tangents) -> (out, tangent_out)``
    (``primals`` and ``tangents`` tuples of the other arguments). Reverse
    mode transposes it.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> @ft.custom_jvp
    ... def f(x):
    ...     return fnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 10.0 * t
    >>> ft.grad(f)(mx.array(0.0)).item(), ft.jvp(f, (mx.array(0.0),), (mx.array(1.0),))[1].item()
    (10.0, 10.0)
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        _util.check_callable(fun, "custom_jvp")
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.rule: Callable | None = None

    def defjvp(self, rule: Callable) -> Callable:
        """Set the JVP rule; returns it (usable as a decorator)."""
        _util.check_callable(rule, "custom_jvp.defjvp")
        self.rule = rule
        return rule

    def __call__(self, *args: Any) -> Any:
        if self.rule is None:
            raise AttributeError("custom_jvp: no JVP rule; define one with @f.defjvp")
        sig = _Signature(args, self.nondiff_argnums, "custom_jvp")
        fun, rule = self.fun, self.rule

        def flat_fun(leaves):
            return sig.flat_out(fun(*sig.full(leaves)), "custom_jvp output")

        def flat_jvp(primals, tangents):
            out, t_out = rule(*sig.statics(), sig.dynamic(primals), sig.dynamic(tangents))
            t_leaves, t_tree = _util.flatten_arrays(t_out, "custom_jvp rule's tangent output")
            out_leaves = sig.flat_out(out, "custom_jvp rule's output")
            if t_tree != sig.out_tree:
                raise TypeError(f"custom_jvp: the rule's tangent output has structure {t_tree}, "
                                f"its primal output {sig.out_tree}")
            return out_leaves, t_leaves

        outs = custom_jvp_call_p.bind(*sig.leaves, fun=flat_fun, jvp=flat_jvp)
        return tree.unflatten(sig.out_tree, outs)


# ----------------------------------------------------------------------------
# custom_vjp
# ----------------------------------------------------------------------------


custom_vjp_call_p = Primitive(
    "custom_vjp_call", lambda *leaves, fun, fwd, bwd: fun(leaves), multiple_results=True)


@custom_vjp_call_p.def_jvp
def _custom_vjp_jvp(primals, tangents, fun, fwd, bwd):
    raise TypeError(
        "custom_vjp: forward-mode differentiation (jvp, jacfwd) of a custom_vjp function "
        "is not supported, as in JAX; give it a custom_jvp rule instead")


@custom_vjp_call_p.def_vjp_fwd
def _custom_vjp_fwd(primals, fun, fwd, bwd):
    out, res = fwd(list(primals))
    return out, res, {"bwd": bwd, "n_out": len(out)}


@custom_vjp_call_p.def_vjp
def _custom_vjp_vjp(cts, out, *res, bwd, n_out, needed):
    cts = [lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)]
    in_cts = bwd(list(res), cts)
    return tuple(c if n else None for c, n in zip(in_cts, needed))


@custom_vjp_call_p.def_batch
def _custom_vjp_batch(vals, dims, axis_size, fun, fwd, bwd):
    vals = _at_zero(vals, dims, axis_size)
    fun_b = _batched(lambda xs: fun(xs), axis_size)
    counts: list = []

    def fwd_flat(xs):
        out, res = fwd(xs)
        counts[:] = [len(out)]
        return out, res

    fwd_b2 = _batched(fwd_flat, axis_size)

    def fwd_b(xs):
        outs = fwd_b2(xs)
        return outs[:counts[0]], outs[counts[0]:]

    def bwd_b(res, cts):
        def flat(r, c):  # per example: None becomes a zero of the example's shape
            return [lax.zeros(x.shape[1:], x.dtype) if g is None else g
                    for g, x in zip(bwd(r, c), vals)]

        return _batched(flat, axis_size)(res, cts)

    outs = custom_vjp_call_p.bind(*vals, fun=fun_b, fwd=fwd_b, bwd=bwd_b)
    return outs, [0] * len(outs)


class custom_vjp:
    """A function with a user-defined VJP, as ``jax.custom_vjp``:
    ``fwd(*args) -> (out, residuals)`` and
    ``bwd(*nondiff_args, residuals, ct_out) -> tuple`` of one cotangent (a
    pytree like the argument, or ``None``) per differentiable argument.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> @ft.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda res, ct: (fnp.clip(ct, -1.0, 1.0),))
    >>> ft.grad(lambda x: 5.0 * clip_gradient(x))(mx.array(2.0)).item()
    1.0
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        _util.check_callable(fun, "custom_vjp")
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the forward and backward functions."""
        _util.check_callable(fwd, "custom_vjp.defvjp")
        _util.check_callable(bwd, "custom_vjp.defvjp")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise AttributeError("custom_vjp: no rule; define one with f.defvjp(fwd, bwd)")
        sig = _Signature(args, self.nondiff_argnums, "custom_vjp")
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        res_tree: list = []

        def flat_fun(leaves):
            return sig.flat_out(fun(*sig.full(leaves)), "custom_vjp output")

        def flat_fwd(leaves):
            got = fwd(*sig.full(leaves))
            if not (isinstance(got, tuple) and len(got) == 2):
                raise TypeError("custom_vjp: fwd must return a pair (output, residuals)")
            out, res = got
            res_leaves, res_tree_ = tree.flatten(res)
            res_tree[:] = [res_tree_]
            return sig.flat_out(out, "custom_vjp fwd output"), res_leaves

        def flat_bwd(res_leaves, cts):
            got = bwd(*sig.statics(), tree.unflatten(res_tree[0], list(res_leaves)),
                      tree.unflatten(sig.out_tree, list(cts)))
            arg_trees = sig.dynamic(list(range(len(sig.leaves))))
            if not isinstance(got, tuple) or len(got) != len(arg_trees):
                raise TypeError(
                    f"custom_vjp: bwd must return a tuple of {len(arg_trees)} cotangents (one "
                    f"per differentiable argument), got {type(got).__name__}")
            leaves: list = []
            for ct, positions in zip(got, arg_trees):
                n = len(tree.leaves(positions))
                leaves.extend([None] * n if ct is None
                              else tree.leaves(ct, is_leaf=lambda x: x is None))
            return leaves

        outs = custom_vjp_call_p.bind(*sig.leaves, fun=flat_fun, fwd=flat_fwd, bwd=flat_bwd)
        return tree.unflatten(sig.out_tree, outs)
