"""``cond`` and ``switch``: one higher-order primitive, ``cond_p``, that
applies one of several staged branches to its operands.

``cond_p(index, *operands, branches)``: every branch is a graph of the same
inputs (the operands, after the values of enclosing transforms that any
branch closes over) and the same output avals.

- Eagerly it runs the branch ``index`` picks (clamped into range).
- Under ``jit`` (lowering) MLX has no branch node: every branch is computed
  and the results are selected with ``where``, so a jitted ``cond`` costs the
  sum of its branches; a ``cond`` whose branch holds a host loop runs between
  compiled segments and computes only the branch taken.
- JVP: the branches' JVP graphs, with the union of their nonzero tangents.
- VJP: the forward pass runs the branches' forward graphs, each emitting its
  own residuals and zeros in the other branches' slots; the backward pass is
  a ``cond_p`` of their backward graphs on the same index.
- vmap: an unbatched index keeps one ``cond_p`` of batched branches; a
  batched index computes every branch and selects per example.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.backend.lowering import lower
from ftorch.core import Primitive, Tracer, as_array, aval_of, format_aval, is_floating
from ftorch.graph import Graph, evaluate, needs_host
from ftorch.primitives._control import check_same_avals, padded
from ftorch.primitives._rules import move_bdim
from ftorch.transforms.jvp import jvp_graph
from ftorch.transforms.staging import derive, stage_function
from ftorch.transforms.vjp import vjp_graph
from ftorch.transforms.vmap import batch_graph

__all__ = ["cond", "switch", "cond_p"]


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as
    ``jax.lax.cond``.

    ``pred`` is a scalar (a number is taken as its truth value); both
    functions are staged once and must return the same structure, shapes and
    dtypes. Under ``jit`` and ``vmap`` with a batched ``pred`` both branches
    run and the result is selected.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.cond(mx.array(True), lambda x: x + 1, lambda x: x - 1, mx.array(1.0)).item()
    2.0
    """
    for name, fun in (("true_fun", true_fun), ("false_fun", false_fun)):
        if not callable(fun):
            raise TypeError(f"cond: {name} must be callable, got {type(fun).__name__}")
    pred = _scalar_operand(pred, "cond", "pred")
    if pred.dtype != mx.bool_:
        # A number is taken as its truth value, as in JAX.
        pred = lax.not_equal(pred, lax.zeros((), pred.dtype))
    return _switch(lax.astype(pred, mx.int32), (false_fun, true_fun), operands, "cond",
                   ("false_fun", "true_fun"))


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """``branches[index](*operands)``, as ``jax.lax.switch``: ``index`` is an
    integer scalar, clamped into ``[0, len(branches) - 1]``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> fs = [lambda x: x, lambda x: 2 * x, lambda x: 3 * x]
    >>> lax.switch(mx.array(2), fs, mx.array(1.0)).item(), lax.switch(7, fs, mx.array(1.0)).item()
    (3.0, 3.0)
    """
    if not isinstance(branches, (list, tuple)) or not branches:
        raise TypeError("switch: branches must be a non-empty sequence of functions")
    for i, fun in enumerate(branches):
        if not callable(fun):
            raise TypeError(f"switch: branches[{i}] must be callable, got {type(fun).__name__}")
    index = _scalar_operand(index, "switch", "index")
    if is_floating(index.dtype) or index.dtype == mx.bool_:
        raise TypeError("switch: index must be an integer scalar, got "
                        f"{format_aval(aval_of(index))}")
    index = lax.astype(index, mx.int32)
    index = lax.minimum(lax.maximum(index, mx.array(0, mx.int32)),
                        mx.array(len(branches) - 1, mx.int32))
    return _switch(index, tuple(branches), operands, "switch",
                   tuple(f"branches[{i}]" for i in range(len(branches))))


def _scalar_operand(x: Any, fname: str, name: str) -> Any:
    if isinstance(x, (bool, int, float)):
        return mx.array(x)
    if not isinstance(x, (mx.array, Tracer)):
        try:
            x = as_array(x)
        except TypeError:
            raise TypeError(f"{fname}: {name} must be a scalar, got {type(x).__name__}") from None
    if x.shape != ():
        raise TypeError(f"{fname}: {name} must be a scalar, got an array of "
                        f"{format_aval(aval_of(x))}")
    return x


def _switch(index: Any, funs: tuple, operands: tuple, fname: str, names: tuple) -> Any:
    leaves, in_tree = api_util.flatten_arrays(operands, "operands")
    in_avals = [aval_of(x) for x in leaves]
    staged = [stage_function(fun, in_avals, in_tree, f"{fname} {name}",
                             lambda out: api_util.flatten_arrays(out, "output"))
              for fun, name in zip(funs, names)]
    first = staged[0]
    for s, name in zip(staged[1:], names[1:]):
        out_names = api_util.leaf_names(first.out_tree, "output")
        check_same_avals(fname, "the branches' outputs", out_names,
                         (first.out_tree, first.graph.out_avals, f"from {names[0]}"),
                         (s.out_tree, s.graph.out_avals, f"from {name}"))
    # Every branch takes the values of enclosing transforms that any branch
    # closes over, then the operands.
    hoisted = [h for s in staged for h in s.hoisted]
    hoisted_avals = [[aval_of(h) for h in s.hoisted] for s in staged]
    graphs = []
    for i, s in enumerate(staged):
        before = [a for avs in hoisted_avals[:i] for a in avs]
        after_own = [a for avs in hoisted_avals[i + 1:] for a in avs]
        g = padded(s.graph, before, at=0)
        graphs.append(padded(g, after_own, at=len(before) + len(s.hoisted)))
    outs = cond_p.bind(index, *hoisted, *leaves, branches=tuple(graphs))
    return tree.unflatten(first.out_tree, outs)


# ----------------------------------------------------------------------------
# cond_p
# ----------------------------------------------------------------------------


def _taken(index: mx.array, branches: tuple) -> Graph:
    """The branch a concrete index picks, clamped into range."""
    return branches[min(max(int(index.item()), 0), len(branches) - 1)]


def _cond_impl(index, *ops, branches):
    return evaluate(_taken(index, branches), ops)


cond_p = Primitive("cond", _cond_impl, multiple_results=True)
cond_p.def_abstract_eval(lambda index, *avals, branches: branches[0].out_avals)


@cond_p.def_lowering
def _cond_lowering(index, *ops, branches):
    if any(needs_host(g) for g in branches):
        # A branch that reads the host runs between compiled segments, on
        # concrete values: run only the branch taken (another may not end).
        return lower(_taken(index, branches))(*ops)
    outs = [lower(g)(*ops) for g in branches]
    result = outs[-1]
    for i in range(len(branches) - 2, -1, -1):
        pick = mx.equal(index, i)
        result = [mx.where(pick, a, b) for a, b in zip(outs[i], result)]
    return result



@cond_p.def_jvp
def _cond_jvp(primals, tangents, branches):
    index, ops = primals[0], primals[1:]
    nonzero = [t is not None for t in tangents[1:]]
    union = [False] * len(branches[0].outs)
    for g in branches:
        union = [u or nz for u, nz in zip(union, jvp_graph(g, nonzero)[1])]
    jvps = tuple(jvp_graph(g, nonzero, instantiate=union)[0] for g in branches)
    outs = cond_p.bind(index, *ops, *[t for t in tangents[1:] if t is not None], branches=jvps)
    n_out = len(union)
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if u else None for u in union]


def _cond_vjp_graphs(branches: tuple) -> tuple[tuple, tuple, list]:
    """Forward graphs (operands -> outputs and every branch's residual
    slots) and backward graphs (all residual slots and output cotangents ->
    the input cotangents nonzero in some branch), made once."""
    key = ("cond vjp", branches)
    entry = branches[0].derived.get(key)
    if entry is not None:
        return entry
    splits = [vjp_graph(g) for g in branches]
    n_out = len(branches[0].outs)
    res_avals = [fwd.out_avals[n_out:] for fwd, _, _ in splits]
    nonzero = [any(nz[i] for _, _, nz in splits) for i in range(len(branches[0].in_vars))]
    fwds, bwds = [], []
    for k, (fwd, bwd, nz) in enumerate(splits):
        def make_fwd(info, fwd=fwd, k=k):
            def flat_f(ops):
                outs = evaluate(fwd, ops)
                slots = [outs[n_out:] if j == k else [lax.zeros(a.shape, a.dtype) for a in avs]
                         for j, avs in enumerate(res_avals)]
                info.append(None)
                return outs[:n_out] + [r for s in slots for r in s]
            return fwd.in_avals, flat_f

        def make_bwd(info, bwd=bwd, nz=nz, k=k):
            n_res = sum(len(a) for a in res_avals)
            start = sum(len(a) for a in res_avals[:k])

            def flat_f(leaves):
                res, cts = leaves[:n_res], leaves[n_res:]
                got = iter(evaluate(bwd, res[start:start + len(res_avals[k])] + cts))
                in_cts = [next(got) if z else None for z in nz]
                info.append(None)
                return [lax.zeros(a.shape, a.dtype) if c is None else c
                        for c, a, u in zip(in_cts, branches[k].in_avals, nonzero) if u]
            return [a for avs in res_avals for a in avs] + branches[k].out_avals, flat_f

        fwds.append(derive(branches[k], ("cond fwd", branches), make_fwd)[0])
        bwds.append(derive(branches[k], ("cond bwd", branches), make_bwd)[0])
    entry = branches[0].derived[key] = (tuple(fwds), tuple(bwds), nonzero)
    return entry


@cond_p.def_vjp_fwd
def _cond_vjp_fwd(primals, branches):
    fwds, bwds, nonzero = _cond_vjp_graphs(branches)
    n_out = len(branches[0].outs)
    outs = cond_p.bind(*primals, branches=fwds)
    return outs[:n_out], [primals[0], *outs[n_out:]], {"branches": bwds, "nonzero": nonzero}


@cond_p.def_vjp
def _cond_vjp(cts, out, index, *residuals, branches, nonzero, needed):
    cts = [lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)]
    in_cts = iter(cond_p.bind(index, *residuals, *cts, branches=branches))
    return (None, *[next(in_cts) if nz else None for nz in nonzero])




@cond_p.def_batch
def _cond_batch(vals, dims, axis_size, branches):
    index, ops = vals[0], list(vals[1:])
    op_dims = list(dims[1:])
    if dims[0] is None:
        union = [False] * len(branches[0].outs)
        for g in branches:
            union = [u or d is not None for u, d in zip(union, batch_graph(g, op_dims,
                                                                          axis_size)[1])]
        batched = [batch_graph(g, op_dims, axis_size, force=union) for g in branches]
        outs = cond_p.bind(index, *ops, branches=tuple(g for g, _ in batched))
        return outs, batched[0][1]
    # Per-example index: every branch runs on the whole batch, then a select.
    index = move_bdim(index, dims[0], 0, axis_size)
    results = []
    for g in branches:
        bg, _ = batch_graph(g, op_dims, axis_size, force=[True] * len(g.outs))
        results.append(evaluate(bg, ops))
    selected = results[-1]
    for i in range(len(branches) - 2, -1, -1):
        pick = lax.equal(index, i)
        selected = [lax.where(lax.reshape(pick, (axis_size,) + (1,) * (aval_of(a).ndim - 1)), a, b)
                    for a, b in zip(results[i], selected)]
    return selected, [0] * len(selected)

