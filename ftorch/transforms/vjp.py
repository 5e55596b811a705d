"""Reverse-mode autodiff from per-op VJP rules: ``vjp``, ``grad``,
``value_and_grad``, ``jacrev`` and ``hessian``.

The forward pass records one ``Node`` per primitive applied to a traced
value (the tape). The pullback walks the nodes in reverse creation order and
applies each primitive's VJP rule. The rules are ftorch ops, so when the
pullback runs inside an outer transform it is itself traced: grad of grad,
jvp of grad and so on. Cotangents of ``None`` are symbolic zeros.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import tree
from ftorch.core import (
    INEXACT,
    ShapeDtypeStruct,
    Trace,
    Tracer,
    aval_of,
    call_traced,
    is_complex,
    is_inexact,
    new_main,
)
from ftorch.graph import Graph, Var, dce, evaluate, split_by_dependence
from ftorch.transforms import _util
from ftorch.transforms.jvp import _per_argnums, jacfwd
from ftorch.transforms.staging import checked, derive
from ftorch.transforms.vmap import vmap

_sequence = itertools.count()


class Node:
    """One primitive application on the tape (``prim is None`` for an input)."""

    __slots__ = ("prim", "params", "saved", "out", "parents", "seq")

    def __init__(self, prim, params, saved, out, parents):
        self.prim = prim
        self.params = params
        self.saved = saved  # what the VJP rule takes: the primals, or vjp_fwd's residuals
        self.out = out
        self.parents = parents  # per input: (Node, output index) or None
        self.seq = next(_sequence)  # creation order is a topological order


class VJPTracer(Tracer):
    __slots__ = ("primal", "node", "index")

    def __init__(self, trace: Trace, primal: Any, node: Node | None, index: int = 0):
        self._trace = trace
        self.primal = primal
        self.node = node
        self.index = index

    @property
    def aval(self) -> ShapeDtypeStruct:
        return aval_of(self.primal)

    # Read straight off the primal: these are on every rule's path.
    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)
    ndim = property(lambda self: self.primal.ndim)

    def concrete(self):
        p = self.primal
        return p.concrete() if isinstance(p, Tracer) else p


class VJPTrace(Trace):
    __slots__ = ()
    transform = "ft.grad/ft.vjp"

    def pure(self, val: Any) -> VJPTracer:
        return VJPTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        # Only floating and complex values carry cotangents: an integer operand
        # (an index, a count) is a constant here even when computed from inputs.
        parents = [None if t.node is None or t.dtype not in INEXACT else (t.node, t.index)
                   for t in tracers]
        if parents.count(None) == len(parents):
            return prim.bind(*primals, **params)  # constant in this transform
        if prim.vjp is None:
            raise NotImplementedError(f"primitive {prim.name!r} has no VJP rule")
        if prim.vjp_fwd is None:
            out = prim.bind(*primals, **params)
            node = Node(prim, params, primals, out, parents)
        else:
            out, residuals, vjp_params = prim.vjp_fwd(primals, **params)
            node = Node(prim, vjp_params, residuals, out, parents)
        if prim.multiple_results:
            return [VJPTracer(self, o, node, i) for i, o in enumerate(out)]
        return VJPTracer(self, out, node)


def backward(roots: list, cotangents: list, inputs: list[Node]) -> list:
    """Propagate ``cotangents`` from the ``roots`` ((node, index) pairs) back
    to the ``inputs`` nodes; returns one cotangent (or ``None``) per input.

    Nodes that have received a cotangent wait on a heap, latest first: a
    node's consumers were all created after it, so by the time it comes up
    every contribution to its cotangent is in. Nodes no cotangent reaches
    are never visited."""
    acc: dict[int, list] = {}
    ready: list = []  # (-seq, node): a max-heap on creation order

    def accumulate(node: Node, index: int, ct: Any) -> None:
        slots = acc.get(id(node))
        if slots is None:
            if node.prim is None:  # an input: its cotangent is the result
                slots = acc[id(node)] = [None]
            else:
                n_out = len(node.out) if node.prim.multiple_results else 1
                slots = acc[id(node)] = [None] * n_out
                heapq.heappush(ready, (-node.seq, node))
        slots[index] = ct if slots[index] is None else lax.add(slots[index], ct)

    for (node, index), ct in zip(roots, cotangents):
        if ct is not None:
            accumulate(node, index, ct)
    while ready:
        node = heapq.heappop(ready)[1]
        cts = acc.pop(id(node))
        prim = node.prim
        ct = cts if prim.multiple_results else cts[0]
        needed = tuple(p is not None for p in node.parents)
        cts_in = prim.vjp(ct, node.out, *node.saved, needed=needed, **node.params)
        for parent, ct_in in zip(node.parents, cts_in):
            if parent is not None and ct_in is not None:
                accumulate(parent[0], parent[1], ct_in)
    return [acc.get(id(n), [None])[0] for n in inputs]


def vjp_flat(f: Callable, primals: list) -> tuple[list, Callable, Any]:
    """Trace ``f`` (list of leaves -> (list of leaves, extra)) onto a tape.

    Returns the output leaves, ``pullback(cotangent leaves) -> input
    cotangent leaves`` (``None`` for zero) and ``f``'s extra value with this
    transform's tracers stripped."""
    with new_main(VJPTrace) as main:
        trace = VJPTrace(main)
        inputs = [Node(None, None, None, p, ()) for p in primals]
        outs, extra = call_traced(f, [VJPTracer(trace, p, n) for p, n in zip(primals, inputs)])
        out_primals, roots = [], []
        for o in outs:
            if isinstance(o, Tracer) and o._trace.main is main:
                out_primals.append(o.primal)
                roots.append(None if o.node is None else (o.node, o.index))
            else:
                out_primals.append(o)
                roots.append(None)
        extra = tree.map(lambda x: x.primal if isinstance(x, VJPTracer) and x._trace.main is main
                         else x, extra)

    def pullback(cotangents: list) -> list:
        live = [(r, c) for r, c in zip(roots, cotangents) if r is not None and c is not None]
        if not live:
            return [None] * len(primals)
        return backward([r for r, _ in live], [c for _, c in live], inputs)

    return out_primals, pullback, extra


def vjp_graph(graph: Graph) -> tuple[Graph, Graph, list[bool]]:
    """The reverse-mode derivative of ``graph``, split in two graphs.

    The forward graph maps the inputs to the outputs followed by residuals;
    the backward graph maps the residuals followed by one cotangent per
    output to the cotangents of the inputs that can have one (floating
    inputs the outputs depend on), which the returned list marks.

    Both come from one joint graph of the forward and backward passes: its
    equations that do not depend on a cotangent form the forward graph, and
    the forward values the others use are the residuals. The backward pass
    thus reuses the forward's intermediates instead of recomputing them.
    Made once and cached on ``graph``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fwd, bwd, nonzero = vjp_graph(ft.make_graph(fnp.sin)(mx.ones(2)))
    >>> print(bwd)
    graph(a:f32[2], b:f32[2]) -> f32[2]
      c:f32[2] = multiply b a
      return c
    """
    entry = graph.derived.get("vjp split")
    if entry is not None:
        return entry
    n_in = len(graph.in_vars)

    def make(info):
        def flat_f(leaves):
            outs, pullback, _ = vjp_flat(lambda xs: (evaluate(graph, xs), None), leaves[:n_in])
            in_cts = pullback(list(leaves[n_in:]))
            info.append([c is not None for c in in_cts])
            return outs + [c for c in in_cts if c is not None]
        return graph.in_avals + graph.out_avals, flat_f

    joint, nonzero = derive(graph, ("vjp",), make)
    primals, cts = joint.in_vars[:n_in], joint.in_vars[n_in:]
    n_out = len(graph.outs)
    fwd_eqns, bwd_eqns, on_ct_path = split_by_dependence(joint.eqns, cts)
    # Residuals: forward values (not constants) that the backward pass reads.
    const_ids = {id(v) for v in joint.const_vars}
    residuals, seen = [], set()
    for a in [a for e in bwd_eqns for a in e.inputs] + joint.outs[n_out:]:
        if (isinstance(a, Var) and id(a) not in on_ct_path and id(a) not in const_ids
                and id(a) not in seen):
            seen.add(id(a))
            residuals.append(a)
    fwd = dce(Graph(primals, joint.const_vars, joint.consts, fwd_eqns,
                    joint.outs[:n_out] + residuals))
    bwd = dce(Graph(residuals + cts, joint.const_vars, joint.consts, bwd_eqns,
                    joint.outs[n_out:]))
    entry = graph.derived["vjp split"] = (checked(fwd), checked(bwd), nonzero)
    return entry


def _trace_for_vjp(f: Callable, primals: tuple, has_aux: bool, fname: str):
    p_leaves, p_tree = _util.flatten_arrays(primals, "primals")

    def flat_f(leaves):
        out = f(*tree.unflatten(p_tree, leaves))
        out, aux = _util.split_aux(out, has_aux, fname)
        o_leaves, o_tree = _util.flatten_arrays(out, "output")
        return o_leaves, (o_tree, aux)

    out_leaves, pullback, (o_tree, aux) = vjp_flat(flat_f, p_leaves)
    return p_leaves, p_tree, out_leaves, o_tree, pullback, aux


def vjp(f: Callable, *primals: Any, has_aux: bool = False):
    """Evaluate ``f(*primals)`` and return it with its pullback.

    ``pullback(cotangent)`` takes a cotangent shaped like the output and
    returns a tuple with one cotangent per primal; it can be called many times.

    >>> import ftorch as ft, mlx.core as mx
    >>> y, pullback = ft.vjp(lambda x: x * x, mx.array(3.0))
    >>> pullback(mx.array(1.0))[0].item()
    6.0
    """
    _util.check_callable(f, "vjp")
    p_leaves, p_tree, out_leaves, o_tree, flat_pullback, aux = _trace_for_vjp(
        f, primals, has_aux, "vjp")

    def pullback(cotangent: Any) -> tuple:
        c_leaves, c_tree = _util.flatten_arrays(cotangent, "cotangent")
        if c_tree != o_tree:
            raise ValueError(
                f"pullback: the cotangent must have the output's structure {o_tree}, got {c_tree}")
        for name, c, o in zip(_util.leaf_names(o_tree, "cotangent"), c_leaves, out_leaves):
            _util.check_like(c, o, "pullback", name)
        c_leaves = [c if is_inexact(aval_of(o).dtype) else None
                    for c, o in zip(c_leaves, out_leaves)]
        cts = flat_pullback(c_leaves)
        cts = [lax.zeros_like(p) if c is None else c for p, c in zip(p_leaves, cts)]
        return tree.unflatten(p_tree, cts)

    out = tree.unflatten(o_tree, out_leaves)
    return (out, pullback, aux) if has_aux else (out, pullback)


def value_and_grad(
    f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """A function returning ``f``'s value and its gradient w.r.t. ``argnums``.

    ``f`` must return a real scalar (with ``has_aux``: a pair ``(scalar, aux)``,
    and the value is that pair), or a complex one with ``holomorphic=True``.
    Keyword arguments are passed through and not differentiated. Complex
    inputs follow JAX's convention (see ``grad``).

    >>> import ftorch as ft, mlx.core as mx
    >>> value, g = ft.value_and_grad(lambda w: (w ** 2).sum())(mx.array([1.0, 2.0]))
    >>> value.item(), g.tolist()
    (5.0, [2.0, 4.0])
    """
    _util.check_callable(f, "value_and_grad")

    def value_and_grad_f(*args, **kwargs):
        nums = _util.normalize_argnums(argnums, len(args), "grad")
        dargs = tuple(args[n] for n in nums)
        p_leaves, p_tree = _util.flatten_arrays(dargs, "args")
        for i, leaf in enumerate(p_leaves):
            dtype = aval_of(leaf).dtype
            if not is_inexact(dtype) or (holomorphic and not is_complex(dtype)):
                path = p_tree.paths()[i]
                name = f"argument {nums[path[0]]}" + "".join(f"[{q!r}]" for q in path[1:])
                if holomorphic:
                    raise TypeError(f"grad with holomorphic=True requires complex inputs, "
                                    f"but {name} has dtype {dtype}")
                raise TypeError(
                    f"grad requires floating-point inputs, but {name} has dtype "
                    f"{dtype}; cast it with .astype(mx.float32) or leave it out of argnums")

        def flat_f(leaves):
            out = f(*_util.substitute(args, nums, tree.unflatten(p_tree, leaves)), **kwargs)
            out, aux = _util.split_aux(out, has_aux, "grad")
            out = _util.as_output(out, "grad: the function's output")
            shape, dtype = aval_of(out).shape, aval_of(out).dtype
            if shape != ():
                raise TypeError(
                    f"grad requires a scalar output (shape ()), got shape {shape}; "
                    "reduce it (e.g. .sum()) or use ft.vjp / ft.jacrev")
            _util.check_output_dtype(dtype, "grad", holomorphic)
            return [out], aux

        (value,), pullback, aux = vjp_flat(flat_f, p_leaves)
        cts = pullback([lax.ones_like(value)])
        grads = [lax.zeros_like(p) if c is None else c for p, c in zip(p_leaves, cts)]
        g = _per_argnums(tree.unflatten(p_tree, grads), argnums)
        return ((value, aux) if has_aux else value), g

    return value_and_grad_f


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of a scalar function ``f`` w.r.t. ``argnums``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.grad(fnp.sin)(mx.array(0.0)).item()
    1.0
    >>> ft.grad(ft.grad(fnp.cos))(mx.array(0.0)).item()
    -1.0

    Complex numbers (JAX's convention). A complex64 value ``z = x + iy`` is
    differentiated as the pair of reals ``(x, y)``:

    - ``ft.jvp`` applies the real-linear derivative to a complex tangent
      ``t``: for ``|z|**2`` it gives ``2 * real(conj(z) * t)``; for a
      holomorphic ``f`` it gives ``f'(z) * t``.
    - ``ft.vjp`` gives the transpose of that map for the pairing
      ``<c, t> = real(sum(c * t))`` (no conjugation): ``ct -> ct * f'(z)`` for
      a holomorphic ``f``, ``conj`` for ``conj``, ``ct -> -1j * ct`` for
      ``imag``, and ``ct -> real(ct * a)`` for the real input of ``x * a``.
    - ``grad`` of a real-valued function of complex inputs is ``vjp`` with
      cotangent 1: ``dL/dx - 1j * dL/dy``, the conjugate of the steepest
      ascent direction. ``grad(lambda z: fnp.abs(z) ** 2)(z)`` is
      ``2 * conj(z)``; a gradient-descent step is ``z - lr * conj(g)``.
    - A complex output needs ``holomorphic=True`` (and complex inputs): the
      result is then ``f'(z)``. Otherwise ``grad`` refuses it, as JAX does;
      take a real part (``fnp.real``, ``fnp.abs``) or use ``ft.vjp``.

    MLX has no complex128: complex values are complex64 throughout.

    >>> z = mx.array(1 + 2j)
    >>> ft.grad(lambda z: fnp.abs(z) ** 2)(z).item()
    (2-4j)
    >>> ft.grad(lambda z: z * z, holomorphic=True)(z).item()
    (2+4j)
    """
    _util.check_callable(f, "grad")
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``f`` by reverse mode: the pullback vmapped over the output basis.

    Same layout as ``jacfwd``: ``out_leaf.shape + in_leaf.shape`` per pair.
    Complex outputs need ``holomorphic=True`` (with complex inputs); real
    outputs of complex inputs give the rows ``grad`` would (see ``grad``).

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.jacrev(lambda x: x ** 2)(mx.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    _util.check_callable(f, "jacrev")

    def jacobian(*args, **kwargs):
        nums = _util.normalize_argnums(argnums, len(args), "jacrev")
        d_leaves, d_tree = _util.flatten_arrays(tuple(args[n] for n in nums), "args")
        _util.check_differentiable(d_leaves, d_tree, "args", "jacrev", holomorphic=holomorphic)

        def flat_f(leaves):
            out = f(*_util.substitute(args, nums, tree.unflatten(d_tree, leaves)), **kwargs)
            out, aux = _util.split_aux(out, has_aux, "jacrev")
            return _util.flatten_arrays(out, "output")[0], (tree.structure(out), aux)

        out_leaves, pullback, (o_tree, aux) = vjp_flat(flat_f, d_leaves)
        for o in out_leaves:
            if holomorphic or is_complex(o.dtype):
                _util.check_output_dtype(o.dtype, "jacrev", holomorphic)
        jac = []
        for k, o in enumerate(out_leaves):
            def pull(c, k=k):
                cts = [None] * len(out_leaves)
                cts[k] = c
                return [lax.zeros_like(leaf) if g is None else g
                        for leaf, g in zip(d_leaves, pullback(cts))]

            n = o.size
            if n:
                basis = lax.reshape(mx.eye(n, dtype=o.dtype), (n, *o.shape))
                rows = vmap(pull)(basis)  # one vmapped pullback over the output basis
            else:
                rows = [lax.zeros((0, *leaf.shape), leaf.dtype) for leaf in d_leaves]
            per_in = [lax.reshape(r, (*o.shape, *leaf.shape)) for r, leaf in zip(rows, d_leaves)]
            jac.append(_per_argnums(tree.unflatten(d_tree, per_in), argnums))
        result = tree.unflatten(o_tree, jac)
        return (result, aux) if has_aux else result

    return jacobian


def hessian(f: Callable, argnums: int | Sequence[int] = 0,
            holomorphic: bool = False) -> Callable:
    """The Hessian of a scalar ``f``: ``jacfwd(jacrev(f))``.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.hessian(lambda x: (x ** 3).sum())(mx.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    _util.check_callable(f, "hessian")
    return jacfwd(jacrev(f, argnums, holomorphic=holomorphic), argnums, holomorphic=holomorphic)
