"""Loops: ``while_loop``, ``fori_loop``, ``scan`` and ``map``, on two
higher-order primitives whose bodies are staged once into graphs.

``while_p(*cond_consts, *body_consts, *init, cond_graph, body_graph, ...)``
runs ``body_graph`` while ``cond_graph`` holds. Its trip count depends on
data, so it reads the predicate on the host: under ``jit`` the compiled
graph is split around it (``executable.segmented``) and the compiled body
runs in chunks of iterations masked by the condition, which is read once a
chunk. Forward mode transforms the body; reverse mode is refused (the
number of residuals is unknown ahead of time), as in JAX; vmap with a
batched predicate runs until every example is done, the finished ones
frozen by a select.

``scan_p(*consts, *init, *xs, graph, n_consts, n_carry, length, reverse,
unroll)`` applies ``graph`` (consts, carry, x_t) -> (carry, y_t) over the
leading axis of ``xs``. Under ``jit`` the body's work that does not depend
on the carry is hoisted out of the loop as one batched computation (the
input projection of every step as one matmul), and what only feeds the
outputs runs batched after it (``_LoopPlan``). The recurrence left is then
unrolled into the one compiled MLX graph when the loop is short, or run
rolled when it is long (``_runs_rolled``): the graph is split at the loop,
and chunks of k steps, compiled once, are called from Python, so neither
the graph nor its compile time grows with the length. Its JVP is a scan of
the body's JVP; its VJP a forward scan that stacks the residuals of each
step and a reverse scan of the body's backward graph; vmap batches the
body. ``fori_loop`` with static bounds and ``map`` are scans, so they are
reverse-mode differentiable; ``fori_loop`` with traced bounds is a
``while_loop``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.backend.lowering import lower
from ftorch.backend.rewrites import fuse_summed_matmuls
from ftorch.core import (
    Primitive,
    ShapeDtypeStruct,
    Tracer,
    as_array,
    aval_of,
    format_aval,
    is_floating,
    is_inexact,
)
from ftorch.dtypes import promote_types
from ftorch.graph import (
    Graph,
    Var,
    dce,
    evaluate,
    needs_host,
    split_by_dependence,
)
from ftorch.primitives._control import (
    check_same_avals,
    padded,
    permuted,
    split,
)
from ftorch.primitives._rules import move_bdim
from ftorch.transforms.executable import compilable, compiling, executable, in_tier
from ftorch.transforms.jvp import jvp_graph
from ftorch.transforms.staging import derive, stage_function
from ftorch.transforms.vjp import vjp_graph
from ftorch.transforms.vmap import batch_graph
from ftorch.transforms.vmap import vmap as _vmap

__all__ = ["while_loop", "fori_loop", "scan", "map", "while_p", "scan_p"]


# ----------------------------------------------------------------------------
# while_loop
# ----------------------------------------------------------------------------


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``, as
    ``jax.lax.while_loop``; returns the final ``val``.

    Both functions are staged once. ``body_fun`` must return the structure,
    shapes and dtypes of ``init_val``; ``cond_fun`` a scalar. Differentiable
    in forward mode only: for ``grad``, bound the loop (``fori_loop`` with
    static bounds, or ``scan``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.while_loop(lambda v: v < 10, lambda v: v * 2, mx.array(1)).item()
    16
    """
    api_util.check_callable(cond_fun, "while_loop")
    api_util.check_callable(body_fun, "while_loop")
    leaves, init_tree = api_util.flatten_arrays(init_val, "init_val")
    in_avals = [aval_of(x) for x in leaves]
    arg_tree = tree.structure((init_val,))
    c = stage_function(cond_fun, in_avals, arg_tree, "while_loop cond_fun", _predicate)
    b = stage_function(body_fun, in_avals, arg_tree, "while_loop body_fun",
                       lambda out: api_util.flatten_arrays(out, "body_fun output"))
    check_same_avals("while_loop", "body_fun's output and init_val",
                     api_util.leaf_names(init_tree, "carry"),
                     (init_tree, in_avals, "in init_val"),
                     (b.out_tree, b.graph.out_avals, "in body_fun's output"),
                     _carry_hint("body_fun", "init_val"))
    outs = while_p.bind(*c.hoisted, *b.hoisted, *leaves, cond_graph=c.graph,
                        body_graph=b.graph, n_cond_consts=len(c.hoisted),
                        n_body_consts=len(b.hoisted))
    return tree.unflatten(init_tree, outs)


def _carry_hint(fn: str, init: str) -> str:
    """What to do when a loop body changes its carry's type."""
    return (f". The carry keeps its type from one iteration to the next: make {fn} return "
            f"{init}'s structure, shapes and dtypes (cast with .astype, or give {init} the dtype "
            f"{fn} produces, e.g. 0.0 rather than 0 for a float carry)")


def _predicate(out: Any) -> tuple[list, Any]:
    """cond_fun's result: one scalar, taken as its truth value."""
    leaves, treedef = tree.flatten(out)
    if len(leaves) != 1:
        raise TypeError(f"while_loop: cond_fun must return a scalar, got {treedef}")
    pred = leaves[0]
    if isinstance(pred, (bool, int, float)):
        pred = mx.array(pred)
    if not isinstance(pred, (mx.array, Tracer)) or pred.shape != ():
        shown = format_aval(aval_of(pred)) if isinstance(pred, (mx.array, Tracer)) else type(
            pred).__name__
        raise TypeError(f"while_loop: cond_fun must return a scalar, got {shown}")
    if pred.dtype != mx.bool_:
        pred = lax.not_equal(pred, lax.zeros((), pred.dtype))
    return [pred], None


def _while_impl(*ops, cond_graph, body_graph, n_cond_consts, n_body_consts):
    cond_consts, body_consts, carry = split(ops, n_cond_consts, n_body_consts)
    while evaluate(cond_graph, cond_consts + carry)[0].item():
        carry = evaluate(body_graph, body_consts + carry)
    return carry


def _while_host(*ops, cond_graph, body_graph, n_cond_consts, n_body_consts):
    """Under jit: the compiled condition is read on the host, then the
    compiled body runs in chunks of k iterations (``_while_chunk``), each
    masked by the condition, so the host waits once per k iterations, not
    once per iteration; at most k - 1 iterations past the end run, and
    leave the carry as it was. A body or condition that reads the host runs
    one iteration per check, as does every loop when the policy compiles
    nothing."""
    cond_consts, body_consts, carry = split(ops, n_cond_consts, n_body_consts)
    if compiling("loop bodies"):
        test, step = executable(cond_graph).compiled, executable(body_graph).compiled
    else:
        test, step = lower(cond_graph), lower(body_graph)
    k = 1
    if _compiles_as_chunks(cond_graph, body_graph):
        k = _steps_per_chunk(len(cond_graph.eqns) + len(body_graph.eqns), MAX_WHILE_CHUNK_STEPS)
    if not test(*cond_consts, *carry)[0].item():
        return list(carry)
    if k == 1:
        carry = step(*body_consts, *carry)
        while test(*cond_consts, *carry)[0].item():
            carry = step(*body_consts, *carry)
        return list(carry)
    chunk = _while_chunk(cond_graph, body_graph, n_cond_consts, n_body_consts, k)
    go = True
    while go:
        *carry, go = chunk(*cond_consts, *body_consts, *carry)
        go = go.item()
    return list(carry)


#: A while_loop checks its condition on the host at most every this many iterations.
MAX_WHILE_CHUNK_STEPS = 16


def _compiles_as_chunks(*graphs: Graph) -> bool:
    """Whether a host-driven loop runs these graphs (its body, its
    condition) as compiled chunks of steps: the running executable compiles
    loop bodies, and none of them reads the host or is too deep for
    ``mx.compile``."""
    return compiling("loop bodies") and all(not needs_host(g) and compilable(g) for g in graphs)


def _while_chunk(cond_graph: Graph, body_graph: Graph, n_cond_consts: int, n_body_consts: int,
                 k: int) -> Callable:
    """``mx.compile`` of k masked iterations: (cond consts, body consts,
    carry) -> (carry, whether the condition still holds). An iteration
    whose condition fails keeps the carry, so every later one does too."""
    key = ("while chunk", body_graph, n_cond_consts, n_body_consts, k)
    found = cond_graph.derived.get(key)
    if found is None:
        test, step = lower(cond_graph), lower(body_graph)

        def chunk(*ops):
            cond_consts, body_consts, carry = split(ops, n_cond_consts, n_body_consts)
            for _ in range(k):
                go = test(*cond_consts, *carry)[0]
                carry = [mx.where(go, new, old)
                         for new, old in zip(step(*body_consts, *carry), carry)]
            return [*carry, test(*cond_consts, *carry)[0]]

        found = cond_graph.derived[key] = mx.compile(chunk)
    return found


while_p = Primitive("while", _while_impl, multiple_results=True, needs_host=True)
while_p.def_abstract_eval(lambda *avals, body_graph, **_: body_graph.out_avals)
while_p.def_lowering(_while_host)


@while_p.def_jvp
def _while_jvp(primals, tangents, cond_graph, body_graph, n_cond_consts, n_body_consts):
    cc, bc, carry = split(primals, n_cond_consts, n_body_consts)
    _, bc_t, carry_t = split(tangents, n_cond_consts, n_body_consts)
    nz_bc = [t is not None for t in bc_t]
    nz_carry = _fixpoint([t is not None for t in carry_t],
                         lambda nz: jvp_graph(body_graph, nz_bc + nz, instantiate=nz)[1])
    body, _ = jvp_graph(body_graph, nz_bc + nz_carry, instantiate=nz_carry)
    n_bc, n_c, n_bct = len(bc), len(carry), sum(nz_bc)
    # jvp inputs: bc, carry, bc_t, carry_t -> bc, bc_t, carry, carry_t.
    order = (list(range(n_bc)) + list(range(n_bc + n_c, n_bc + n_c + n_bct))
             + list(range(n_bc, n_bc + n_c)) + list(range(n_bc + n_c + n_bct, len(body.in_vars))))
    body = permuted(body, order, range(len(body.outs)))
    tangent_avals = [a for a, nz in zip(body_graph.out_avals, nz_carry) if nz]
    cond = padded(cond_graph, (), after=tangent_avals)
    carry_t = [lax.zeros_like(p) if t is None else t
               for p, t, nz in zip(carry, carry_t, nz_carry) if nz]
    outs = while_p.bind(*cc, *bc, *[t for t in bc_t if t is not None], *carry, *carry_t,
                        cond_graph=cond, body_graph=body, n_cond_consts=n_cond_consts,
                        n_body_consts=n_bc + n_bct)
    it = iter(outs[n_c:])
    return outs[:n_c], [next(it) if nz else None for nz in nz_carry]


@while_p.def_vjp_fwd
def _while_vjp_fwd(primals, **params):
    raise ValueError(
        "while_loop: reverse-mode differentiation (grad, vjp) of a loop whose trip count "
        "depends on data is not supported: the residuals of its steps cannot be stored ahead "
        "of time. Bound the loop: use fori_loop with static (Python int) bounds, or scan "
        "with a length, which are reverse-mode differentiable.")




@while_p.def_vjp
def _while_vjp(cts, out, *residuals, needed, **params):
    _while_vjp_fwd(())  # never reached: the forward pass refuses first


@while_p.def_batch
def _while_batch(vals, dims, axis_size, cond_graph, body_graph, n_cond_consts, n_body_consts):
    cc, bc, carry = split(vals, n_cond_consts, n_body_consts)
    cc_d, bc_d, carry_d = split(dims, n_cond_consts, n_body_consts)
    cc = [x if d is None else move_bdim(x, d, 0, axis_size) for x, d in zip(cc, cc_d)]
    bc = [x if d is None else move_bdim(x, d, 0, axis_size) for x, d in zip(bc, bc_d)]
    cc_d = [None if d is None else 0 for d in cc_d]
    bc_d = [None if d is None else 0 for d in bc_d]

    def carry_batched(batched):
        body_b = batch_graph(body_graph, bc_d + _dims(batched), axis_size, force=batched)[1]
        out = [b or d is not None for b, d in zip(batched, body_b)]
        pred_d = batch_graph(cond_graph, cc_d + _dims(out), axis_size)[1][0]
        return [True] * len(out) if pred_d is not None else out

    batched = _fixpoint([d is not None for d in carry_d], carry_batched)
    carry = [move_bdim(x, d, 0, axis_size) if b else x
             for x, d, b in zip(carry, carry_d, batched)]
    cond_b, (pred_d,) = batch_graph(cond_graph, cc_d + _dims(batched), axis_size)
    body_b, _ = batch_graph(body_graph, bc_d + _dims(batched), axis_size, force=batched)
    if pred_d is None:
        outs = while_p.bind(*cc, *bc, *carry, cond_graph=cond_b, body_graph=body_b,
                            n_cond_consts=n_cond_consts, n_body_consts=n_body_consts)
        return outs, _dims(batched)
    # A per-example predicate: loop while any example goes on; the others
    # keep their carry (every carry is batched here).
    n_cc = len(cc)

    def make_cond(info):
        def flat_f(leaves):
            info.append(None)
            go = evaluate(cond_b, leaves)[0]
            return [lax.any(go, tuple(range(aval_of(go).ndim)))]
        return cond_b.in_avals, flat_f

    def make_body(info):
        def flat_f(leaves):
            c, b, state = split(leaves, n_cc, len(bc))
            go = evaluate(cond_b, c + state)[0]
            new = evaluate(body_b, b + state)
            info.append(None)
            return [lax.where(lax.reshape(go, (axis_size,) + (1,) * (aval_of(n).ndim - 1)), n, s)
                    for n, s in zip(new, state)]
        return cond_b.in_avals[:n_cc] + body_b.in_avals, flat_f

    key = ("while any", cond_b, body_b)
    any_cond = derive(cond_b, key, make_cond)[0]
    masked_body = derive(body_b, key, make_body)[0]
    outs = while_p.bind(*cc, *cc, *bc, *carry, cond_graph=any_cond, body_graph=masked_body,
                        n_cond_consts=n_cc, n_body_consts=n_cc + len(bc))
    return outs, [0] * len(outs)


def _dims(batched: list[bool]) -> list:
    return [0 if b else None for b in batched]


def _fixpoint(start: list[bool], step: Callable[[list[bool]], list]) -> list[bool]:
    """The least flags at or above ``start`` that ``step`` keeps: which
    carries have a nonzero tangent (or a batch axis) once the body has run
    any number of times."""
    flags = list(start)
    while True:
        new = [f or bool(s) for f, s in zip(flags, step(flags))]
        if new == flags:
            return flags
        flags = new


# ----------------------------------------------------------------------------
# scan
# ----------------------------------------------------------------------------


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``, as
    ``jax.lax.scan``; returns the final carry and the stacked ``y``s.

    ``f`` is staged once, whatever the length. ``xs`` is a pytree of arrays
    sharing their leading size (or ``None``, with ``length``); ``f`` must
    return a carry of ``init``'s structure, shapes and dtypes. ``reverse``
    runs from the last step to the first (``ys`` stay in step order).
    Under ``jit`` a short loop (up to 16 steps or 256 body equations in
    all) is unrolled into the one compiled graph around it; a longer one
    runs rolled: chunks of ``unroll`` steps (chosen from the body's size
    when 1), each compiled once and called from Python, so neither its
    compile time nor its graph grows with ``length``. ``unroll=True``
    unrolls it whole whatever its length.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> total, partial = lax.scan(lambda c, x: (c + x, c + x), mx.array(0.0), mx.arange(1.0, 4.0))
    >>> total.item(), partial.tolist()
    (6.0, [1.0, 3.0, 6.0])
    """
    api_util.check_callable(f, "scan")
    if not (unroll is None or isinstance(unroll, int)) or (
            isinstance(unroll, int) and not isinstance(unroll, bool) and unroll < 1):
        raise ValueError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    x_leaves, x_tree = api_util.flatten_arrays(xs, "xs")
    length = _scan_length(x_leaves, x_tree, length)
    if isinstance(unroll, bool):
        unroll = builtins.max(length, 1) if unroll else 1
    c_leaves, c_tree = api_util.flatten_arrays(init, "init")
    c_avals = [aval_of(x) for x in c_leaves]
    x_avals = [ShapeDtypeStruct(tuple(aval_of(x).shape[1:]), aval_of(x).dtype) for x in x_leaves]
    in_tree = tree.structure((init, xs))

    def flatten_out(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("scan: f must return a pair (carry, y), got "
                            f"{type(out).__name__}")
        carry_leaves, carry_tree = api_util.flatten_arrays(out[0], "f's output carry")
        y_leaves, y_tree = api_util.flatten_arrays(out[1], "f's output y")
        return carry_leaves + y_leaves, (carry_tree, y_tree)

    body = stage_function(f, c_avals + x_avals, in_tree, "scan f", flatten_out)
    carry_tree, y_tree = body.out_tree
    n_carry = len(c_leaves)
    check_same_avals("scan", "f's output carry and init", api_util.leaf_names(c_tree, "carry"),
                     (c_tree, c_avals, "in init"),
                     (carry_tree, body.graph.out_avals[:carry_tree.num_leaves],
                      "in f's output carry"), _carry_hint("f", "init"))
    outs = scan_p.bind(*body.hoisted, *c_leaves, *x_leaves, graph=body.graph,
                       n_consts=len(body.hoisted), n_carry=n_carry, length=length,
                       reverse=bool(reverse), unroll=int(unroll or 1))
    return tree.unflatten(c_tree, outs[:n_carry]), tree.unflatten(y_tree, outs[n_carry:])


def _scan_length(x_leaves: list, x_tree: Any, length: Any) -> int:
    names = api_util.leaf_names(x_tree, "xs")
    sizes = {}
    for name, x in zip(names, x_leaves):
        if x.ndim == 0:
            raise ValueError(f"scan: {name} is a 0-d array; every leaf of xs needs a leading "
                             "axis to scan over")
        sizes[name] = x.shape[0]
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{n} has {s}" for n, s in sizes.items())
        raise ValueError(f"scan: the leaves of xs must share their leading size, but {shown}")
    if length is not None:
        if isinstance(length, (mx.array, np.ndarray, np.integer)) and not isinstance(
                length, Tracer):
            length = int(length)
        if not isinstance(length, int) or isinstance(length, bool) or length < 0:
            raise TypeError(f"scan: length must be a non-negative Python int, got {length!r}")
        if sizes and next(iter(sizes.values())) != length:
            name, size = next(iter(sizes.items()))
            raise ValueError(f"scan: length={length} but {name} has leading size {size}")
        return length
    if not sizes:
        raise ValueError("scan: with no xs to scan over, pass length=")
    return next(iter(sizes.values()))


def _scan_loop(run: Callable, ops, n_consts, n_carry, length, reverse, y_avals,
               sync_every: int = 0) -> list:
    """The loop of ``run`` (consts, carry, x_t) -> (carry, y_t), one call a
    step, the ``y_t`` stacked. ``sync_every`` > 0 (only outside
    ``mx.compile`` traces) starts evaluating the carry every that many steps,
    so MLX's lazy graph stays short and runs while Python builds the next
    steps."""
    consts, carry, xs = split(ops, n_consts, n_carry)
    ys: list = [None] * length
    for n, i in enumerate(range(length - 1, -1, -1) if reverse else range(length)):
        out = run(*consts, *carry, *[x[i] for x in xs])
        carry, ys[i] = out[:n_carry], out[n_carry:]
        if sync_every and n % sync_every == sync_every - 1:
            mx.async_eval(out)
    if length == 0:
        stacked = [mx.zeros((0, *a.shape), a.dtype) for a in y_avals]
    else:
        stacked = [mx.stack(list(col)) for col in zip(*ys)]
    return list(carry) + stacked


def _scan_impl(*ops, graph, n_consts, n_carry, length, reverse, unroll):
    return _scan_loop(lambda *a: evaluate(graph, a), ops, n_consts, n_carry, length, reverse,
                      graph.out_avals[n_carry:])


def _scan_abstract_eval(*avals, graph, n_consts, n_carry, length, **_):
    outs = graph.out_avals
    return outs[:n_carry] + [ShapeDtypeStruct((length, *a.shape), a.dtype)
                             for a in outs[n_carry:]]


#: A scan of at most ``UNROLL_MAX_STEPS`` steps, or of at most
#: ``UNROLL_MAX_EQNS`` body equations in all (trip count times body size), is
#: unrolled by jit into the one compiled graph around it; a longer one runs
#: rolled (``_rolled_loop``). Measured on a tanh RNN's value and gradient
#: (hidden 32, batch 8; 2-core CPU, compiled): rolled and unrolled take the
#: same time a call up to 16 steps; from 32 steps rolled is faster (2.5 against
#: 2.7 ms at 32, 4.4 against 5.4 at 64, 7.7 against 11.2 at 128), and its first
#: call does not grow with the length (0.03 s against 0.16 s at 256 steps). A
#: short loop stays unrolled so that its function compiles whole (one call
#: into MLX, no Python between segments).
UNROLL_MAX_STEPS = 16
UNROLL_MAX_EQNS = 256
#: About how many body equations one compiled chunk of a rolled scan holds:
#: a chunk of k steps costs one Python call and one compiled-function lookup
#: for k steps, and its compile time grows with k.
CHUNK_EQNS = 64
MAX_CHUNK_STEPS = 32
#: A rolled loop starts evaluating its carry every this many chunks (each: MLX
#: then evaluates one chunk while Python builds the next; measured faster than
#: every 2, 4 or 16 and than never).
SYNC_EVERY_CHUNKS = 1


def _runs_rolled(graph: Graph, length: int, unroll: int, **_) -> bool:
    """Whether jit runs this scan rolled: it is longer than
    ``UNROLL_MAX_STEPS`` steps and ``UNROLL_MAX_EQNS`` body equations in all,
    and not unrolled in full at the caller's request (``unroll=True``)."""
    return (unroll < length and length > UNROLL_MAX_STEPS
            and length * builtins.max(len(graph.eqns), 1) > UNROLL_MAX_EQNS)


scan_p = Primitive("scan", _scan_impl, multiple_results=True, needs_host=_runs_rolled)
scan_p.def_abstract_eval(_scan_abstract_eval)


def _scan_lowering(*ops, graph, n_consts, n_carry, length, reverse, unroll):
    if length == 0:
        return _scan_loop(lower(graph), ops, n_consts, n_carry, length, reverse,
                          graph.out_avals[n_carry:])
    plan = _loop_plan(graph, n_consts, n_carry, length)
    rolled = _runs_rolled(graph, length, unroll)
    run = in_tier if rolled else lower
    consts, carry, xs = split(ops, n_consts, n_carry)
    before = run(plan.before)(*consts, *xs)
    fixed = [v for v, d in zip(before, plan.before_dims) if d is None]
    stacked = [v for v, d in zip(before, plan.before_dims) if d is not None]
    loop_carry = [c for j, c in enumerate(carry) if j not in plan.accumulators]
    loop_xs = [xs[k] for k in plan.loop_xs] + [stacked[k] for k in plan.loop_stacked]
    loop_consts = consts + fixed
    if rolled:
        out = _rolled_loop(plan.loop, loop_consts, loop_carry, loop_xs, length, reverse, unroll)
    else:
        out = _scan_loop(lower(plan.loop), loop_consts + loop_carry + loop_xs, len(loop_consts),
                         len(loop_carry), length, reverse, plan.loop.out_avals[len(loop_carry):])
    emitted = plan.emitted(out[len(loop_carry):], loop_carry, reverse)
    loop_carry = out[:len(loop_carry)]
    acc_init = [carry[j] for j in plan.accumulators]
    after = run(plan.after)(*consts, *fixed, *stacked, *emitted, *xs, *acc_init)
    n_ys = len(graph.outs) - n_carry
    it_loop, it_acc = iter(loop_carry), iter(after[n_ys:])
    final = [next(it_acc) if j in plan.accumulators else next(it_loop) for j in range(n_carry)]
    return final + after[:n_ys]


scan_p.def_lowering(_scan_lowering)


def _rolled_loop(loop: Graph, consts: list, carry: list, xs: list, length: int, reverse: bool,
                 unroll: int) -> list:
    """A scan's recurrence run rolled, driven from Python: chunks of k steps
    (``_chunk_function``), each compiled once and called length/k times,
    their per-step outputs stacked; MLX's graph never holds more than a few
    chunks unevaluated. A body that reads the host, or is too deep to
    compile, or a policy that compiles nothing, runs one step a call in the
    executable's tier."""
    n_consts, n_carry = len(consts), len(carry)
    y_avals = loop.out_avals[n_carry:]
    if not _compiles_as_chunks(loop):
        return _scan_loop(in_tier(loop), consts + carry + xs, n_consts, n_carry, length, reverse,
                          y_avals, sync_every=SYNC_EVERY_CHUNKS * 8)
    k = builtins.min(_chunk_steps(loop, unroll), length)
    starts = list(range(0, length, k))
    pieces: list = [None] * len(starts)
    for n, i in enumerate(reversed(range(len(starts))) if reverse else range(len(starts))):
        s = starts[i]
        e = builtins.min(s + k, length)
        out = _chunk_function(loop, n_consts, n_carry, e - s, reverse)(
            *consts, *carry, *[x[s:e] for x in xs])
        carry, pieces[i] = out[:n_carry], out[n_carry:]
        if n % SYNC_EVERY_CHUNKS == SYNC_EVERY_CHUNKS - 1:
            mx.async_eval(out)
    ys = [col[0] if len(col) == 1 else mx.concatenate(list(col)) for col in zip(*pieces)]
    return list(carry) + ys


def _chunk_steps(loop: Graph, unroll: int) -> int:
    """Steps per chunk: the caller's ``unroll`` when above 1, else about
    ``CHUNK_EQNS`` body equations' worth."""
    if unroll > 1:
        return unroll
    return _steps_per_chunk(len(loop.eqns), MAX_CHUNK_STEPS)


def _steps_per_chunk(n_eqns: int, most: int) -> int:
    """About ``CHUNK_EQNS`` equations' worth of steps of ``n_eqns`` each,
    between 1 and ``most``."""
    return builtins.max(1, builtins.min(most, CHUNK_EQNS // builtins.max(n_eqns, 1)))


def _chunk_function(loop: Graph, n_consts: int, n_carry: int, k: int,
                    reverse: bool) -> Callable:
    """``mx.compile`` of k steps of ``loop`` (consts, carry, x_t) -> (carry,
    y_t): (consts, carry, xs[k]) -> (carry, ys[k]), made once per k.

    Each ``xs`` is split once (its pieces are views) and each step's piece
    squeezed; each ``y_t`` is stacked. (Running the body over a leading step
    axis of 1 instead saves those reshapes but costs two per matmul, where
    MLX folds the extra axis into the product's rows: more in every loop
    measured.)"""
    key = ("rolled chunk", n_consts, n_carry, k, reverse)
    found = loop.derived.get(key)
    if found is None:
        step = lower(loop)

        def chunk(*ops):
            consts, carry, xs = split(ops, n_consts, n_carry)
            per_step = [[mx.squeeze(p, 0) for p in mx.split(x, k)] for x in xs]
            ys: list = [None] * k
            for j in range(k - 1, -1, -1) if reverse else range(k):
                out = step(*consts, *carry, *[p[j] for p in per_step])
                carry, ys[j] = out[:n_carry], out[n_carry:]
            return list(carry) + [mx.stack(list(col)) for col in zip(*ys)]

        found = loop.derived[key] = mx.compile(chunk)
    return found


class _LoopPlan:
    """How ``jit`` runs a scan body: its work split in three phases.

    - ``before``: the equations that do not depend on the carry, batched
      over all steps at once (``x_t @ U`` of every step as one matmul);
      results that depend on the consts alone stay unbatched.
    - ``loop``: the equations the next carry needs (the recurrence), run per
      step; it emits the per-step values the third phase reads.
    - ``after``: everything else (outputs ``y_t`` that do not feed the carry,
      and the terms of accumulator carries ``c + v_t``), batched over all
      steps after the loop; an accumulator's result is ``c_0 + sum_t v_t``,
      where a sum of per-step matmuls becomes one matmul (the weight
      gradients of a backward pass).
    """

    def __init__(self, graph: Graph, n_consts: int, n_carry: int, length: int):
        ins, outs = graph.in_vars, graph.outs
        consts, carry, xs = split(ins, n_consts, n_carry)
        carry_outs, ys = outs[:n_carry], outs[n_carry:]
        uses: dict[int, int] = {}
        for e in graph.eqns:
            for a in e.inputs:
                uses[id(a)] = uses.get(id(a), 0) + 1
        for a in outs:
            uses[id(a)] = uses.get(id(a), 0) + 1
        producer = {id(v): e for e in graph.eqns for v in e.outs}
        # Accumulators: carry j updated as c_j + v with c_j used nowhere else.
        acc_eqns, acc_terms = set(), {}
        for j, (c, o) in enumerate(zip(carry, carry_outs)):
            e = producer.get(id(o))
            if (e is None or e.prim.name != "add" or uses.get(id(c)) != 1 or uses[id(o)] != 1
                    or o.aval != c.aval):
                continue
            a, b = e.inputs
            term = b if a is c else a if b is c else None
            if term is not None and term is not c and isinstance(term, Var) and term.aval == c.aval:
                acc_eqns.add(id(e))
                acc_terms[j] = term
        self.accumulators = sorted(acc_terms)
        # Phase 1: equations that do not depend on the carry.
        first, rest, _ = split_by_dependence(graph.eqns, carry)
        # Phase 2: what the next (non-accumulator) carry needs.
        needed = {id(o) for j, o in enumerate(carry_outs) if j not in acc_terms}
        loop_eqns = []
        for e in reversed(rest):
            if id(e) not in acc_eqns and any(id(v) in needed for v in e.outs):
                loop_eqns.append(e)
                needed.update(id(a) for a in e.inputs)
        loop_eqns.reverse()
        in_loop = {id(e) for e in loop_eqns}
        last = [e for e in rest if id(e) not in in_loop and id(e) not in acc_eqns]
        # Values crossing from phase to phase.
        first_out = [v for e in first for v in e.outs]
        later_reads = {id(a) for e in loop_eqns + last for a in e.inputs} | {
            id(a) for a in list(carry_outs) + list(ys) + list(acc_terms.values())}
        crossing = [v for v in first_out if id(v) in later_reads]
        before = Graph(consts + xs, graph.const_vars, graph.consts, first, crossing)
        before_b, dims = batch_graph(dce(before), [None] * n_consts + [0] * len(xs), length,
                                     force=[False] * len(crossing))
        self.before, self.before_dims = before_b, dims
        fixed = [v for v, d in zip(crossing, dims) if d is None]
        stacked = [v for v, d in zip(crossing, dims) if d is not None]
        loop_carry = [c for j, c in enumerate(carry) if j not in acc_terms]
        loop_reads = {id(a) for e in loop_eqns for a in e.inputs} | {
            id(o) for j, o in enumerate(carry_outs) if j not in acc_terms}
        self.loop_xs = [k for k, x in enumerate(xs) if id(x) in loop_reads]
        self.loop_stacked = [k for k, v in enumerate(stacked) if id(v) in loop_reads]
        defined_in_loop = {id(v) for e in loop_eqns for v in e.outs} | {id(c) for c in loop_carry}
        last_reads = {id(a) for e in last for a in e.inputs} | {
            id(a) for a in list(ys) + list(acc_terms.values())}
        emitted = [v for v in [*loop_carry, *(v for e in loop_eqns for v in e.outs)]
                   if id(v) in defined_in_loop and id(v) in last_reads]
        loop_outs = [o for j, o in enumerate(carry_outs) if j not in acc_terms]
        self.loop = Graph(consts + fixed + loop_carry + [xs[k] for k in self.loop_xs]
                          + [stacked[k] for k in self.loop_stacked], graph.const_vars,
                          graph.consts, loop_eqns, loop_outs + self._emitting(
                              emitted, loop_carry, loop_outs, {id(v) for e in loop_eqns
                                                               for v in e.outs}))
        # Phase 3, batched over the steps, then the accumulators' sums.
        after = Graph(consts + fixed + stacked + emitted + xs, graph.const_vars, graph.consts,
                      last, list(ys) + [acc_terms[j] for j in self.accumulators])
        after_dims = ([None] * (n_consts + len(fixed)) + [0] * (len(stacked) + len(emitted))
                      + [0] * len(xs))
        after_b, _ = batch_graph(dce(after), after_dims, length, force=[True] * len(after.outs))
        n_ys = len(ys)
        acc_avals = [carry[j].aval for j in self.accumulators]

        def make(info):
            def flat_f(leaves):
                out = evaluate(after_b, leaves[:len(after_b.in_vars)])
                init = leaves[len(after_b.in_vars):]
                info.append(None)
                return out[:n_ys] + [lax.add(i, lax.sum(v, (0,))) for i, v in zip(init, out[n_ys:])]
            return after_b.in_avals + acc_avals, flat_f

        summed = derive(after_b, ("scan after", tuple(self.accumulators)), make)[0]
        self.after = fuse_summed_matmuls(summed)

    def _emitting(self, emitted: list, loop_carry: list, loop_outs: list,
                  produced: set) -> list:
        """What the loop emits per step for ``emitted``, the values the
        third phase reads. A carry's value on entering each step (a
        residual reverse mode keeps) is its value on leaving the step
        before, so where the loop emits that, or can, the sequence is that
        one shifted by a step (``self.emit_from``): a copy less per step."""
        position = {id(c): m for m, c in enumerate(loop_carry)}
        out: list = []
        self.emit_from: list[tuple[int, int | None]] = []  # (index in out, carry shifted)
        for v in emitted:
            m = position.get(id(v))
            shift = m if m is not None and id(loop_outs[m]) in produced else None
            src = v if shift is None else loop_outs[m]
            index = next((i for i, a in enumerate(out) if a is src), None)
            if index is None:
                out.append(src)
                index = len(out) - 1
            self.emit_from.append((index, shift))
        return out

    def emitted(self, out: list, loop_init: list, reverse: bool) -> list:
        """The per-step values the third phase reads, from what the loop
        emitted (``out``) and the loop carries' initial values."""
        found = []
        for index, shift in self.emit_from:
            seq = out[index]
            if shift is not None:  # entering step t = leaving step t - 1 (t + 1 reversed)
                first = mx.expand_dims(loop_init[shift], 0)
                seq = (mx.concatenate([seq[1:], first]) if reverse
                       else mx.concatenate([first, seq[:-1]]))
            found.append(seq)
        return found


def _loop_plan(graph: Graph, n_consts: int, n_carry: int, length: int) -> _LoopPlan:
    key = ("scan plan", n_consts, n_carry, length)
    plan = graph.derived.get(key)
    if plan is None:
        plan = graph.derived[key] = _LoopPlan(graph, n_consts, n_carry, length)
    return plan


@scan_p.def_jvp
def _scan_jvp(primals, tangents, graph, n_consts, n_carry, length, reverse, unroll):
    consts, carry, xs = split(primals, n_consts, n_carry)
    consts_t, carry_t, xs_t = split(tangents, n_consts, n_carry)
    nz_consts = [t is not None for t in consts_t]
    nz_xs = [t is not None for t in xs_t]
    n_ys = len(graph.outs) - n_carry

    def step(nz):
        return jvp_graph(graph, nz_consts + nz + nz_xs, instantiate=nz + [False] * n_ys)[1]

    nz_carry = _fixpoint([t is not None for t in carry_t], step)
    jgraph, out_nz = jvp_graph(graph, nz_consts + nz_carry + nz_xs,
                               instantiate=nz_carry + [False] * n_ys)
    nc, nca, nx = len(consts), len(carry), len(xs)
    nct, ncat, nxt = sum(nz_consts), sum(nz_carry), sum(nz_xs)
    p = nc + nca + nx  # jvp inputs: primals, then tangents (consts_t, carry_t, xs_t)
    in_order = [*range(nc), *range(p, p + nct), *range(nc, nc + nca),
                *range(p + nct, p + nct + ncat), *range(nc + nca, p),
                *range(p + nct + ncat, p + nct + ncat + nxt)]
    n_yt = sum(out_nz[n_carry:])
    q = n_carry + n_ys  # jvp outputs: carry, ys, then carry_t, ys_t
    out_order = [*range(n_carry), *range(q, q + ncat), *range(n_carry, q),
                 *range(q + ncat, q + ncat + n_yt)]
    body = permuted(jgraph, in_order, out_order)
    carry_t = [lax.zeros_like(c) if t is None else t
               for c, t, nz in zip(carry, carry_t, nz_carry) if nz]
    outs = scan_p.bind(*consts, *[t for t in consts_t if t is not None], *carry, *carry_t, *xs,
                       *[t for t in xs_t if t is not None], graph=body, n_consts=nc + nct,
                       n_carry=nca + ncat, length=length, reverse=reverse, unroll=unroll)
    out_carry, out_carry_t, ys, ys_t = split(outs, nca, ncat, n_ys)
    it_c, it_y = iter(out_carry_t), iter(ys_t)
    return (out_carry + ys,
            [next(it_c) if nz else None for nz in nz_carry]
            + [next(it_y) if nz else None for nz in out_nz[n_carry:]])


class _VJPPlan:
    """How reverse mode splits a scan body: the body's forward graph emitting
    the residuals that vary per step, a graph of the loop-invariant
    residuals (computed once, from the consts), and the backward graph."""

    def __init__(self, graph: Graph, n_consts: int, n_carry: int):
        fwd, bwd, nonzero = vjp_graph(graph)
        n_out = len(graph.outs)
        res = fwd.outs[n_out:]
        invariant_eqns, _, varying = split_by_dependence(fwd.eqns, fwd.in_vars[n_consts:])
        self.inv_idx = [k for k, r in enumerate(res) if id(r) not in varying]
        self.var_idx = [k for k, r in enumerate(res) if id(r) in varying]
        self.invariant = dce(Graph(fwd.in_vars[:n_consts], fwd.const_vars, fwd.consts,
                                   invariant_eqns, [res[k] for k in self.inv_idx]))
        self.forward = dce(Graph(fwd.in_vars, fwd.const_vars, fwd.consts, fwd.eqns,
                                 fwd.outs[:n_out] + [res[k] for k in self.var_idx]))
        self.backward = bwd
        self.nonzero = nonzero
        self.n_res = len(res)


def _vjp_plan(graph: Graph, n_consts: int, n_carry: int) -> _VJPPlan:
    key = ("scan vjp", n_consts, n_carry)
    plan = graph.derived.get(key)
    if plan is None:
        plan = graph.derived[key] = _VJPPlan(graph, n_consts, n_carry)
    return plan


@scan_p.def_vjp_fwd
def _scan_vjp_fwd(primals, graph, n_consts, n_carry, length, reverse, unroll):
    plan = _vjp_plan(graph, n_consts, n_carry)
    consts = list(primals[:n_consts])
    invariant = evaluate(plan.invariant, consts) if plan.inv_idx else []
    outs = scan_p.bind(*primals, graph=plan.forward, n_consts=n_consts, n_carry=n_carry,
                       length=length, reverse=reverse, unroll=unroll)
    n_out = len(graph.outs)
    params = {"graph": graph, "n_consts": n_consts, "n_carry": n_carry, "length": length,
              "reverse": reverse, "unroll": unroll}
    return outs[:n_out], [*invariant, *outs[n_out:]], params


def _backward_body(graph: Graph, plan: _VJPPlan, n_consts: int, n_carry: int,
                   acc_consts: tuple, ct_ys: tuple, xs_out: tuple) -> Graph:
    """The body of the reverse scan: (invariant residuals; carry
    cotangents, const cotangent sums; varying residuals, y cotangents) ->
    (carry cotangents, const cotangent sums; x cotangents)."""
    in_avals = graph.in_avals
    out_avals = graph.out_avals
    float_carry = [j for j in range(n_carry) if is_inexact(in_avals[n_consts + j].dtype)]
    n_inv, n_var = len(plan.inv_idx), len(plan.var_idx)
    res_avals = (plan.invariant.out_avals
                 + plan.forward.out_avals[len(graph.outs):])

    def make(info):
        def flat_f(leaves):
            inv, ctc, acc, var, cty = split(leaves, n_inv, len(float_carry), len(acc_consts),
                                            n_var)
            res = [None] * plan.n_res
            for k, v in zip(plan.inv_idx + plan.var_idx, inv + var):
                res[k] = v
            given = dict(zip(float_carry, ctc)) | dict(zip((n_carry + k for k in ct_ys), cty))
            cts = [given[j] if j in given else lax.zeros(a.shape, a.dtype)
                   for j, a in enumerate(out_avals)]
            got = iter(evaluate(plan.backward, res + cts))
            in_cts = [next(got) if nz else None for nz in plan.nonzero]

            def ct_or_zeros(i):
                c = in_cts[i]
                return lax.zeros(in_avals[i].shape, in_avals[i].dtype) if c is None else c

            new_ctc = [ct_or_zeros(n_consts + j) for j in float_carry]
            new_acc = [a if in_cts[c] is None else lax.add(a, in_cts[c])
                       for a, c in zip(acc, acc_consts)]
            ct_xs = [ct_or_zeros(n_consts + n_carry + k) for k in xs_out]
            info.append(None)
            return new_ctc + new_acc + ct_xs

        stacked_var = res_avals[n_inv:]
        return (res_avals[:n_inv] + [in_avals[n_consts + j] for j in float_carry]
                + [in_avals[c] for c in acc_consts] + stacked_var
                + [out_avals[n_carry + k] for k in ct_ys]), flat_f

    return derive(graph, ("scan bwd", n_consts, n_carry, acc_consts, ct_ys, xs_out), make)[0]


@scan_p.def_vjp
def _scan_vjp(cts, out, *residuals, graph, n_consts, n_carry, length, reverse, unroll, needed):
    plan = _vjp_plan(graph, n_consts, n_carry)
    in_avals = graph.in_avals
    n_xs = len(in_avals) - n_consts - n_carry
    usable = [nz and is_inexact(a.dtype) for nz, a in zip(plan.nonzero, in_avals)]
    acc_consts = tuple(c for c in range(n_consts) if needed[c] and usable[c])
    xs_out = tuple(k for k in range(n_xs)
                   if needed[n_consts + n_carry + k] and usable[n_consts + n_carry + k])
    ct_ys = tuple(k for k, c in enumerate(cts[n_carry:]) if c is not None)
    body = _backward_body(graph, plan, n_consts, n_carry, acc_consts, ct_ys, xs_out)
    float_carry = [j for j in range(n_carry) if is_inexact(in_avals[n_consts + j].dtype)]
    n_inv = len(plan.inv_idx)
    ct_carry = [lax.zeros_like(out[j]) if cts[j] is None else cts[j] for j in float_carry]
    acc0 = [lax.zeros(in_avals[c].shape, in_avals[c].dtype) for c in acc_consts]
    outs = scan_p.bind(*residuals[:n_inv], *ct_carry, *acc0, *residuals[n_inv:],
                       *[cts[n_carry + k] for k in ct_ys], graph=body, n_consts=n_inv,
                       n_carry=len(ct_carry) + len(acc0), length=length, reverse=not reverse,
                       unroll=unroll)
    ct_init, ct_consts, ct_xs = split(outs, len(ct_carry), len(acc0))
    result: list = [None] * len(in_avals)
    for j, c in zip(float_carry, ct_init):
        result[n_consts + j] = c if needed[n_consts + j] else None
    for c, v in zip(acc_consts, ct_consts):
        result[c] = v
    for k, v in zip(xs_out, ct_xs):
        result[n_consts + n_carry + k] = v
    return tuple(result)




@scan_p.def_batch
def _scan_batch(vals, dims, axis_size, graph, n_consts, n_carry, length, reverse, unroll):
    consts, carry, xs = split(vals, n_consts, n_carry)
    consts_d, carry_d, xs_d = split(dims, n_consts, n_carry)
    consts = [x if d is None else move_bdim(x, d, 0, axis_size) for x, d in zip(consts, consts_d)]
    # Per step, a batched x has its batch axis first: axis 1 of the stack.
    xs = [x if d is None else move_bdim(x, d, 1, axis_size) for x, d in zip(xs, xs_d)]
    consts_d = _dims([d is not None for d in consts_d])
    x_step_d = _dims([d is not None for d in xs_d])
    n_ys = len(graph.outs) - n_carry

    def step(batched):
        out_d = batch_graph(graph, consts_d + _dims(batched) + x_step_d, axis_size,
                            force=batched + [False] * n_ys)[1]
        return [d is not None for d in out_d[:n_carry]]

    batched = _fixpoint([d is not None for d in carry_d], step)
    body, out_d = batch_graph(graph, consts_d + _dims(batched) + x_step_d, axis_size,
                              force=batched + [False] * n_ys)
    carry = [move_bdim(x, d, 0, axis_size) if b else x
             for x, d, b in zip(carry, carry_d, batched)]
    outs = scan_p.bind(*consts, *carry, *xs, graph=body, n_consts=n_consts, n_carry=n_carry,
                       length=length, reverse=reverse, unroll=unroll)
    return outs, _dims(batched) + [None if d is None else 1 for d in out_d[n_carry:]]


# ----------------------------------------------------------------------------
# fori_loop and map: scans (or a while_loop)
# ----------------------------------------------------------------------------


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any,
              unroll: int | bool | None = None) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``, as
    ``jax.lax.fori_loop``; returns the final ``val``.

    With static bounds (Python ints, or concrete arrays) it is a ``scan``,
    differentiable in both modes; with traced bounds a ``while_loop``,
    forward mode only.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.fori_loop(0, 5, lambda i, acc: acc + i, mx.array(0)).item()
    10
    """
    api_util.check_callable(body_fun, "fori_loop")
    body_fun = _checked_fori_body(body_fun, init_val)
    lo, hi = _static_bound(lower), _static_bound(upper)
    if lo is not None and hi is not None:
        dtype = _bound_dtype(lower, upper)

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None

        (_, val), _ = scan(step, (mx.array(lo, dtype), init_val), None,
                           length=builtins.max(hi - lo, 0), unroll=unroll or 1)
        return val
    lower, upper = as_array(lower, "fori_loop: lower"), as_array(upper, "fori_loop: upper")
    for name, b in (("lower", lower), ("upper", upper)):
        if b.shape != () or is_floating(b.dtype) or b.dtype == mx.bool_:
            raise TypeError(f"fori_loop: {name} must be an integer scalar, got "
                            f"{format_aval(aval_of(b))}")
    dtype = promote_types(lower.dtype, upper.dtype)

    def body(carry):
        i, u, val = carry
        return i + 1, u, body_fun(i, val)

    return while_loop(lambda c: c[0] < c[1], body,
                      (lax.astype(lower, dtype), lax.astype(upper, dtype), init_val))[2]


def _checked_fori_body(body_fun: Callable, init_val: Any) -> Callable:
    """``body_fun``, checked to return a val of ``init_val``'s type while it
    is staged: the loop it becomes (a scan or a while_loop) would otherwise
    report the mismatch in terms of its own carry, with the loop index in it."""
    init_leaves, init_tree = api_util.flatten_arrays(init_val, "init_val")
    init_avals = [aval_of(x) for x in init_leaves]
    names = api_util.leaf_names(init_tree, "val")

    def checked(i, val):
        out = body_fun(i, val)
        leaves, out_tree = api_util.flatten_arrays(out, "body_fun's output")
        check_same_avals("fori_loop", "body_fun(i, val)'s output and init_val", names,
                         (init_tree, init_avals, "in init_val"),
                         (out_tree, [aval_of(x) for x in leaves], "in body_fun's output"),
                         _carry_hint("body_fun", "init_val"))
        return out

    return checked


def _static_bound(b: Any) -> int | None:
    if isinstance(b, bool):
        raise TypeError(f"fori_loop: bounds must be integers, got {b!r}")
    if isinstance(b, (int, np.integer)):
        return int(b)
    if isinstance(b, (mx.array, np.ndarray)) and b.shape == () and not is_floating(
            mx.array(b).dtype if isinstance(b, np.ndarray) else b.dtype):
        return int(b.item())
    if isinstance(b, float) or (isinstance(b, (mx.array, np.ndarray)) and b.shape != ()):
        raise TypeError(f"fori_loop: bounds must be integer scalars, got {b!r}")
    return None


def _bound_dtype(lower: Any, upper: Any) -> mx.Dtype:
    for b in (lower, upper):
        if isinstance(b, mx.array):
            return b.dtype
    return mx.int32


def map(f: Callable, xs: Any, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked,
    as ``jax.lax.map``: a ``scan`` with no carry. With ``batch_size``,
    ``f`` is vmapped over chunks of that many slices (fewer steps, more
    memory); the remainder runs as one more vmapped call.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.map(lambda x: x * x, mx.arange(4.0)).tolist()
    [0.0, 1.0, 4.0, 9.0]
    """
    api_util.check_callable(f, "map")
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"map: batch_size must be a positive int, got {batch_size!r}")
    leaves, x_tree = api_util.flatten_arrays(xs, "xs")
    n = _scan_length(leaves, x_tree, None)
    n_main = (n // batch_size) * batch_size
    batched_f = _vmap(f)
    pieces = []
    if n_main:
        chunks = [lax.reshape(x[:n_main], (n // batch_size, batch_size, *x.shape[1:]))
                  for x in leaves]
        ys = scan(lambda _, c: ((), batched_f(tree.unflatten(x_tree, c))), (), chunks)[1]
        pieces.append(tree.map(lambda y: lax.reshape(y, (n_main, *y.shape[2:])), ys))
    if n_main < n:
        pieces.append(batched_f(tree.unflatten(x_tree, [x[n_main:] for x in leaves])))
    if len(pieces) == 1:
        return pieces[0]
    return tree.map(lambda a, b: lax.concatenate([a, b], 0), *pieces)

