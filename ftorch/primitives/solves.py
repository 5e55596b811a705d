"""``custom_linear_solve``: a linear solve differentiated implicitly, as
``jax.lax.custom_linear_solve``; the primitive layer.

``x = solve(matvec, b)`` is taken to satisfy ``matvec(x) = b`` for a linear
``matvec`` (a pytree of arrays to one like it), whatever ``solve`` does to
find it (an iterative method, a factorisation): derivatives never go
through ``solve``. Differentiating ``A x = b`` gives ``A dx = db - dA x``,
so the JVP is one more solve, of ``db - dA x`` (``dA x`` is the derivative
of ``matvec`` in the values it closes over, at ``x``); the VJP solves the
transposed system ``A^T u = ct`` with ``transpose_solve`` (given the
transposed ``matvec``; ``solve`` itself when ``symmetric``), and the
cotangent of those closed-over values is ``-u^T dA x``.

The functions are staged into graphs once per call; the values of
enclosing transforms that ``matvec`` closes over become operands (so their
derivatives flow), those ``solve`` and ``transpose_solve`` close over are
operands with no derivative. The primitive's rules are the equations above,
each written as another ``linear_solve`` (so derivatives of any order work)
and the graph transforms of ``matvec``.

>>> import ftorch as ft, ftorch.lax as lax, ftorch.numpy as fnp, mlx.core as mx
>>> a = mx.array([[2.0, 1.0], [1.0, 3.0]])
>>> solve = lambda matvec, b: fnp.linalg.solve(a, b)
>>> f = lambda a, b: lax.custom_linear_solve(lambda x: a @ x, b, solve, symmetric=True)
>>> [round(v, 4) for v in f(a, mx.array([1.0, 2.0])).tolist()]
[0.2, 0.6]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.backend.lowering import lower
from ftorch.core import Primitive, aval_of
from ftorch.graph import Graph, evaluate
from ftorch.primitives._control import check_same_avals, split
from ftorch.primitives._rules import move_bdim
from ftorch.transforms.jvp import jvp_flat
from ftorch.transforms.staging import derive, stage_function
from ftorch.transforms.vjp import vjp_flat
from ftorch.transforms.vmap import batch_graph

__all__ = ["custom_linear_solve", "linear_solve_p"]


def _zeros_like(avals: list) -> list:
    return [lax.zeros(a.shape, a.dtype) for a in avals]


def _matvec_at(graph: Graph, consts: list) -> Callable[[list], list]:
    """The staged ``matvec`` as a function of the leaves of ``x``."""
    return lambda x: evaluate(graph, [*consts, *x])


def _transposed(matvec_graph: Graph, n_consts: int) -> Graph:
    """The graph of ``(consts, y) -> A^T y`` for the linear ``x -> A x`` of
    ``matvec_graph`` (``consts, x -> A x``): its pullback at ``x = 0``."""
    def make(info):
        const_avals = matvec_graph.in_avals[:n_consts]
        x_avals = matvec_graph.in_avals[n_consts:]

        def flat_f(leaves):
            consts, y = leaves[:n_consts], leaves[n_consts:]
            _, pullback = vjp_flat(_matvec_at(matvec_graph, consts), _zeros_like(x_avals))
            info.append(None)
            return [lax.zeros(a.shape, a.dtype) if c is None else c
                    for c, a in zip(pullback(list(y)), x_avals)]
        return [*const_avals, *matvec_graph.out_avals], flat_f

    return derive(matvec_graph, ("transpose", n_consts), make)[0]


def _impl(*ops, matvec, solve, transpose_solve, counts, symmetric):
    mv, own, _, b = split(ops, *counts)
    return evaluate(solve, [*own, *mv, *b])


linear_solve_p = Primitive("linear_solve", _impl, multiple_results=True, autocast="float32")
linear_solve_p.def_abstract_eval(
    lambda *avals, matvec, solve, transpose_solve, counts, symmetric: solve.out_avals)


@linear_solve_p.def_lowering
def _lowering(*ops, matvec, solve, transpose_solve, counts, symmetric):
    mv, own, _, b = split(ops, *counts)
    return lower(solve)(*own, *mv, *b)


@linear_solve_p.def_jvp
def _jvp(primals, tangents, **params):
    outs = linear_solve_p.bind(*primals, **params)
    mv, _, _, b = split(primals, *params["counts"])
    n_x = len(b)  # the solution is like b; aux outputs follow
    t_mv, _, _, t_b = split(tangents, *params["counts"])
    if all(t is None for t in t_mv + t_b):
        return outs, [None] * len(outs)
    rhs = [lax.zeros_like(x) if t is None else t for t, x in zip(t_b, b)]
    if any(t is not None for t in t_mv):
        x = outs[:n_x]
        matvec = params["matvec"]
        _, d_ax = jvp_flat(lambda consts: evaluate(matvec, [*consts, *x]), list(mv),
                           [lax.zeros_like(c) if t is None else t for t, c in zip(t_mv, mv)])
        rhs = [r if d is None else lax.subtract(r, d) for r, d in zip(rhs, d_ax)]
    dx = linear_solve_p.bind(*primals[:len(primals) - len(b)], *rhs, **params)[:n_x]
    return outs, [*dx, *[None] * (len(outs) - n_x)]


def _transpose_params(params: dict) -> dict:
    """The params of the transposed system ``A^T u = c``."""
    n_mv, n_solve, n_tsolve = params["counts"]
    if params["symmetric"]:
        return params
    return dict(params, matvec=_transposed(params["matvec"], n_mv),
                solve=params["transpose_solve"], transpose_solve=params["solve"],
                counts=(n_mv, n_tsolve, n_solve))


@linear_solve_p.def_vjp
def _vjp(cts, outs, *primals, needed, **params):
    if params["transpose_solve"] is None and not params["symmetric"]:
        raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                        "transpose_solve (or symmetric=True)")
    mv, own, other, b = split(primals, *params["counts"])
    n_x = len(b)
    ct_x = [lax.zeros_like(x) if c is None else c for c, x in zip(cts[:n_x], outs[:n_x])]
    t = _transpose_params(params)
    solvers = (own, other) if params["symmetric"] else (other, own)
    u = linear_solve_p.bind(*mv, *solvers[0], *solvers[1], *ct_x, **t)[:n_x]
    ct_mv = [None] * len(mv)
    if any(needed[:len(mv)]):
        x = outs[:n_x]
        _, pullback = vjp_flat(lambda consts: evaluate(params["matvec"], [*consts, *x]), list(mv))
        ct_mv = [None if c is None else lax.negative(c) for c in pullback(u)]
    return (*ct_mv, *[None] * (len(own) + len(other)), *u)


@linear_solve_p.def_batch
def _batch(vals, dims, axis_size, **params):
    n_mv, n_solve, n_tsolve = params["counts"]
    n_operators = n_mv + n_solve + n_tsolve  # the operands before the right-hand side
    # Every batched operand's batch axis first; the right-hand side (and so
    # the solution) always batched, broadcast where it was not.
    new_dims = [0 if i >= n_operators or d is not None else None for i, d in enumerate(dims)]
    vals = [v if nd is None else move_bdim(v, d, 0, axis_size)
            for v, d, nd in zip(vals, dims, new_dims)]
    mv_dims, solve_dims, tsolve_dims, b_dims = split(new_dims, n_mv, n_solve, n_tsolve)

    def batched(graph: Graph | None, own_dims: list) -> Graph | None:
        if graph is None:
            return None
        return batch_graph(graph, [*own_dims, *mv_dims, *b_dims], axis_size,
                           force=[True] * len(graph.outs))[0]

    matvec = batch_graph(params["matvec"], [*mv_dims, *b_dims], axis_size,
                         force=[True] * len(params["matvec"].outs))[0]
    out = linear_solve_p.bind(
        *vals, **dict(params, matvec=matvec, solve=batched(params["solve"], solve_dims),
                      transpose_solve=batched(params["transpose_solve"], tsolve_dims)))
    return out, [0] * len(out)


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """The solution ``x`` of ``matvec(x) = b`` that ``solve(matvec, b)``
    finds, differentiated implicitly, as ``jax.lax.custom_linear_solve``:
    derivatives never go through ``solve`` (an iterative solver, a
    factorisation), only through the linear ``matvec`` (and the values it
    closes over) and ``b``. Forward mode solves once more with ``solve``;
    reverse mode solves the transposed system with
    ``transpose_solve(vecmat, ct)`` (``vecmat`` the transposed ``matvec``),
    or with ``solve`` when ``symmetric``. With ``has_aux``, ``solve`` (and
    ``transpose_solve``) return ``(x, aux)``, and so does this function;
    ``aux`` has no derivative.

    >>> import ftorch as ft, ftorch.lax as lax, ftorch.numpy as fnp, mlx.core as mx
    >>> def f(a, b):
    ...     solve = lambda matvec, b: b / fnp.diag(a)   # exact for a diagonal a
    ...     return lax.custom_linear_solve(lambda x: a @ x, b, solve, symmetric=True).sum()
    >>> ft.grad(f, argnums=1)(mx.diag(mx.array([2.0, 4.0])), mx.ones(2)).tolist()
    [0.5, 0.25]
    """
    fname = "custom_linear_solve"
    for name, f in (("matvec", matvec), ("solve", solve)):
        api_util.check_callable(f, f"{fname}: {name}")
    if transpose_solve is not None:
        api_util.check_callable(transpose_solve, f"{fname}: transpose_solve")
    b_leaves, b_tree = api_util.flatten_arrays(b, "custom_linear_solve b")
    b_avals = [aval_of(x) for x in b_leaves]
    names = api_util.leaf_names(b_tree, "b")

    def like_b(what: str) -> Callable:
        def flatten_out(out):
            leaves, out_tree = api_util.flatten_arrays(out, f"{fname} {what}")
            check_same_avals(fname, f"{what} and b", names,
                             (out_tree, [aval_of(x) for x in leaves], f"from {what}"),
                             (b_tree, b_avals, "in b"))
            return leaves, out_tree
        return flatten_out

    b_shape = tree.unflatten(b_tree, [0] * len(b_avals))
    mv = stage_function(matvec, b_avals, tree.structure((b_shape,)), f"{fname} matvec",
                        like_b("matvec's output"))
    mv_consts = mv.hoisted
    const_avals = [aval_of(c) for c in mv_consts]
    in_tree = tree.structure(([0] * len(mv_consts), b_shape))

    def staged_solver(user_solve: Callable, linear: Callable, what: str):
        def run(consts, rhs):
            def bound(v):
                leaves, _ = api_util.flatten_arrays(v, f"{fname} {what}'s argument")
                return tree.unflatten(b_tree, linear(consts)(leaves))
            return user_solve(bound, rhs)

        def flatten_out(out):
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise TypeError(f"{fname}: with has_aux=True, {what} must return a pair "
                                    f"(solution, aux), got {type(out).__name__}")
                out, aux = out
            x_leaves, _ = like_b(f"{what}'s solution")(out)
            if not has_aux:
                return x_leaves, None
            aux_leaves, aux_tree = api_util.flatten_arrays(aux, f"{fname} {what}'s aux")
            return x_leaves + aux_leaves, aux_tree
        return stage_function(run, const_avals + b_avals, in_tree, f"{fname} {what}",
                              flatten_out)

    def vecmat(consts):
        return _matvec_at(_transposed(mv.graph, len(consts)), consts)

    solve_st = staged_solver(solve, lambda consts: _matvec_at(mv.graph, consts), "solve")
    tsolve_st = None
    if transpose_solve is not None:
        tsolve_st = staged_solver(transpose_solve, vecmat, "transpose_solve")
    outs = linear_solve_p.bind(
        *mv_consts, *solve_st.hoisted, *([] if tsolve_st is None else tsolve_st.hoisted),
        *b_leaves, matvec=mv.graph, solve=solve_st.graph,
        transpose_solve=None if tsolve_st is None else tsolve_st.graph,
        counts=(len(mv_consts), len(solve_st.hoisted),
                0 if tsolve_st is None else len(tsolve_st.hoisted)),
        symmetric=bool(symmetric))
    x = tree.unflatten(b_tree, outs[:len(b_leaves)])
    if has_aux:
        return x, tree.unflatten(solve_st.out_tree, outs[len(b_leaves):])
    return x
