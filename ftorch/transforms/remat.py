"""``checkpoint`` (alias ``remat``): trade compute for memory in reverse mode.

``checkpoint(f)`` stages ``f`` into a graph and binds ``remat_p`` on it.
Evaluated, it is ``f``. Differentiated in reverse mode, its forward pass
keeps only what the ``policy`` lets it save, and its backward pass
recomputes the rest from the inputs before running the VJP:

- ``remat_p``'s VJP splits the graph as ``vjp_graph`` does (forward with
  residuals, backward from residuals and cotangents), then asks the policy,
  equation by equation of the forward graph, whether to save its results.
  The forward pass returns the saved values; the backward graph recomputes
  the other residuals from the inputs and the saved values.
- The recomputation starts from values passed through an
  ``optimization_barrier`` together with the incoming cotangents
  (``prevent_cse=True``), so it cannot run before the backward pass
  reaches it, and neither ftorch's CSE nor ``mx.compile`` can merge it
  with the forward pass's identical work: the inputs it reads are new
  values.
- JVP and vmap transform the graph (``jvp_graph``, ``batch_graph``) and
  bind ``remat_p`` again, so the policy still applies to ``grad`` of the
  result; the backward pass is itself a ``remat_p``, so higher-order
  reverse mode recomputes too.

A policy is ``policy(prim, *in_avals, **params) -> bool`` (save this
equation's results?), as ``jax.checkpoint_policies``; the default saves
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.backend.lowering import lower
from ftorch.core import Primitive, aval_of
from ftorch.graph import Graph, aval_of_atom, dce, evaluate
from ftorch.primitives._rules import linear, vectorized
from ftorch.transforms.jvp import jvp_graph
from ftorch.transforms.staging import checked, derive, stage_function
from ftorch.transforms.vjp import vjp_graph
from ftorch.transforms.vmap import batch_graph

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "remat_p"]


# ----------------------------------------------------------------------------
# Policies
# ----------------------------------------------------------------------------


def everything_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save every intermediate: no recomputation (plain reverse mode)."""
    return True


def nothing_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save nothing but the inputs: recompute every intermediate (the default)."""
    return False


def dots_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save the results of matrix products (``matmul``, ``einsum``), the
    expensive part; recompute the elementwise work around them."""
    return prim.name in ("matmul", "einsum")


def dots_with_no_batch_dims_saveable(prim: Primitive, *avals: Any, **params: Any) -> bool:
    """Save matrix products without batch dimensions (a ``matmul`` of
    matrices and vectors, an ``einsum`` whose every output index comes from
    one operand only): weights times activations, not attention scores."""
    if prim.name == "matmul":
        return all(a.ndim <= 2 for a in avals)
    if prim.name == "einsum":
        terms, out = params["subscripts"].split("->")
        operands = terms.split(",")
        return not any(sum(c in op for op in operands) > 1 for c in out)
    return False


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """Save only the values marked with ``checkpoint_name(x, name)`` for one
    of ``names``."""
    wanted = frozenset(names)

    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in wanted

    return policy


def save_any_names_but_these(*names: str) -> Callable[..., bool]:
    """Save every value marked with ``checkpoint_name``, except ``names``."""
    unwanted = frozenset(names)

    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in unwanted

    return policy


def save_from_both_policies(first: Callable, second: Callable) -> Callable[..., bool]:
    """Save what either policy saves."""
    def policy(prim: Primitive, *avals: Any, **params: Any) -> bool:
        return first(prim, *avals, **params) or second(prim, *avals, **params)

    return policy


checkpoint_policies = SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_from_both_policies=save_from_both_policies,
)


# ----------------------------------------------------------------------------
# checkpoint_name: an identity that policies can see
# ----------------------------------------------------------------------------


name_p = Primitive("checkpoint_name", lambda x, name: x)
name_p.def_lowering(lambda x, name: x)
linear(name_p, lambda ct, x, name: ct)
vectorized(name_p)


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` (a pytree of arrays), marked ``name`` for the policies
    ``save_only_these_names`` and ``save_any_names_but_these``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> policy = ft.checkpoint_policies.save_only_these_names("hidden")
    >>> f = ft.checkpoint(lambda x: fnp.sum(fnp.sin(ft.checkpoint_name(x * 2, "hidden"))),
    ...                   policy=policy)
    >>> round(ft.grad(f)(mx.array(0.0)).item(), 4)
    2.0
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a str, got {name!r}")
    leaves, treedef = api_util.flatten_arrays(x, "checkpoint_name value")
    return tree.unflatten(treedef, [name_p.bind(v, name=name) for v in leaves])


# ----------------------------------------------------------------------------
# remat_p: a staged graph whose reverse mode recomputes, and its rules
# ----------------------------------------------------------------------------


def _remat_impl(*args: Any, graph: Graph, policy: Callable, prevent_cse: bool) -> list:
    return evaluate(graph, args)


remat_p = Primitive("remat", _remat_impl, multiple_results=True)
remat_p.def_abstract_eval(lambda *avals, graph, **_: graph.out_avals)
# Inside a lowered graph, the body is inlined; the barriers keep the
# recomputation apart from the forward pass in mx.compile.
remat_p.def_lowering(lambda *args, graph, **_: lower(graph)(*args))


@remat_p.def_jvp
def _remat_jvp(primals, tangents, graph, policy, prevent_cse):
    derived, nonzero = jvp_graph(graph, [t is not None for t in tangents])
    outs = remat_p.bind(*primals, *[t for t in tangents if t is not None], graph=derived,
                        policy=policy, prevent_cse=prevent_cse)
    n_out = len(graph.outs)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if nz else None for nz in nonzero]


@remat_p.def_batch
def _remat_batch(vals, dims, axis_size, graph, policy, prevent_cse):
    derived, out_dims = batch_graph(graph, dims, axis_size)
    return remat_p.bind(*vals, graph=derived, policy=policy, prevent_cse=prevent_cse), out_dims


def _remat_split(graph: Graph, policy: Callable, prevent_cse: bool
                 ) -> tuple[Graph, Graph, list[bool]]:
    """The forward graph (inputs -> outputs and the values the policy
    saves), the backward graph (inputs, saved values and cotangents ->
    the cotangents of the inputs marked in the list, as ``vjp_graph``),
    made once per policy and cached on ``graph``."""

    def make(info):
        fwd, bwd, nonzero = vjp_graph(graph)
        n_out = len(graph.outs)
        residuals = fwd.outs[n_out:]
        saveable, recomputed = [], []
        for eqn in fwd.eqns:
            if policy(eqn.prim, *[aval_of_atom(a) for a in eqn.inputs], **eqn.params):
                saveable += eqn.outs
            else:
                recomputed.append(eqn)
        # What recomputing the residuals reads among the saveable values.
        recompute = dce(Graph(fwd.in_vars + saveable, fwd.const_vars, fwd.consts, recomputed,
                              residuals))
        read = {id(a) for e in recompute.eqns for a in e.inputs} | {id(a) for a in residuals}
        saved = [v for v in saveable if id(v) in read]
        recompute = Graph(fwd.in_vars + saved, recompute.const_vars, recompute.consts,
                          recompute.eqns, residuals)
        forward = dce(Graph(fwd.in_vars, fwd.const_vars, fwd.consts, fwd.eqns,
                            fwd.outs[:n_out] + saved))
        info.append((checked(forward), nonzero))
        n_known = len(recompute.in_vars)

        def backward(leaves):
            known, cts = leaves[:n_known], leaves[n_known:]
            if not prevent_cse:
                return evaluate(bwd, evaluate(recompute, known) + list(cts))
            known = lax.optimization_barrier(*known, *cts)[:n_known]
            # The cotangents leave together: what the pass upstream reads
            # waits for this block's other results (a weight's gradient),
            # so the recomputed values they read are freed before it runs.
            return lax.optimization_barrier(*evaluate(bwd, evaluate(recompute, known) + list(cts)))

        return recompute.in_avals + graph.out_avals, backward

    backward, (forward, nonzero) = derive(graph, ("remat", policy, prevent_cse), make)
    return forward, backward, nonzero


@remat_p.def_vjp_fwd
def _remat_vjp_fwd(primals, graph, policy, prevent_cse):
    forward, backward, nonzero = _remat_split(graph, policy, prevent_cse)
    results = remat_p.bind(*primals, graph=forward, policy=policy, prevent_cse=prevent_cse)
    n_out = len(graph.outs)
    return results[:n_out], [*primals, *results[n_out:]], {
        "graph": backward, "policy": policy, "prevent_cse": prevent_cse,
        "nonzero": tuple(nonzero)}


@remat_p.def_vjp
def _remat_vjp(cts, out, *known, graph, policy, prevent_cse, nonzero, needed):
    cts = [lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)]
    in_cts = iter(remat_p.bind(*known, *cts, graph=graph, policy=policy,
                               prevent_cse=prevent_cse))
    return tuple(c if n else None
                 for c, n in zip((next(in_cts) if nz else None for nz in nonzero), needed))


# ----------------------------------------------------------------------------
# checkpoint
# ----------------------------------------------------------------------------


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """``fun``, recomputed in the backward pass instead of stored, as
    ``jax.checkpoint``.

    Under ``grad`` (and ``vjp``, ``jacrev``, at any depth, with or without
    ``jit``), the forward pass keeps ``fun``'s inputs and the intermediates
    that ``policy(prim, *in_avals, **params)`` saves (default: none; see
    ``ft.checkpoint_policies``), and the backward pass recomputes the others
    when it reaches ``fun``. Values are unchanged; only peak memory and
    compute move. ``static_argnums`` are passed to ``fun`` as they are
    (Python values, not traced). ``prevent_cse=False`` drops the barrier
    that keeps the recomputation apart from the forward pass (safe inside
    a ``scan`` body, which cannot be merged anyway).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> layer = ft.checkpoint(lambda w, x: fnp.tanh(x @ w))
    >>> loss = lambda w, x: fnp.sum(layer(w, layer(w, x)))
    >>> w, x = mx.eye(3) * 0.5, mx.ones((2, 3))
    >>> bool(mx.allclose(ft.grad(loss)(w, x), ft.grad(
    ...     lambda w, x: fnp.sum(fnp.tanh(fnp.tanh(x @ w) @ w)))(w, x)))
    True
    """
    api_util.check_callable(fun, "checkpoint")
    policy = nothing_saveable if policy is None else policy
    if not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function (prim, *avals, **params) -> "
                        f"bool, such as ft.checkpoint_policies.dots_saveable; got {policy!r}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    fname = getattr(fun, "__name__", "<function>")

    def checkpointed(*args: Any) -> Any:
        nums = api_util.normalize_argnums(static, len(args), "checkpoint") if static else ()
        dynamic = tuple(a for i, a in enumerate(args) if i not in nums)
        leaves, in_tree = api_util.flatten_arrays(dynamic, "checkpoint argument")

        def call(*dyn):
            it = iter(dyn)
            return fun(*[args[i] if i in nums else next(it) for i in range(len(args))])

        staged = stage_function(call, [aval_of(x) for x in leaves], in_tree,
                                f"checkpoint of {fname}",
                                lambda out: api_util.flatten_arrays(out, "checkpoint output"))
        outs = remat_p.bind(*staged.hoisted, *leaves, graph=staged.graph, policy=policy,
                            prevent_cse=bool(prevent_cse))
        return tree.unflatten(staged.out_tree, outs)

    checkpointed.__name__ = f"checkpoint({fname})"
    checkpointed.__doc__ = fun.__doc__
    return checkpointed


remat = checkpoint  # JAX's other name
