"""Forward-mode autodiff: ``jvp``, ``linearize`` and ``jacfwd``.

A ``JVPTracer`` carries a primal and its tangent through the function; each
primitive's JVP rule maps both. A tangent of ``None`` is a symbolic zero:
ops whose inputs all have zero tangents run untraced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import tree
from ftorch.core import (
    ShapeDtypeStruct,
    Trace,
    Tracer,
    aval_of,
    call_traced,
    is_inexact,
    new_main,
)
from ftorch.graph import Graph, evaluate
from ftorch.transforms import _util
from ftorch.transforms.staging import derive
from ftorch.transforms.vmap import vmap


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: Trace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

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


class JVPTrace(Trace):
    __slots__ = ()
    transform = "ft.jvp"

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(t is None for t in tangents):
            return prim.bind(*primals, **params)  # constant in this transform
        if prim.jvp is None:
            raise NotImplementedError(f"primitive {prim.name!r} has no JVP rule")
        out, tangent_out = prim.jvp(primals, tangents, **params)
        if prim.multiple_results:
            return [o if t is None else JVPTracer(self, o, t) for o, t in zip(out, tangent_out)]
        return out if tangent_out is None else JVPTracer(self, out, tangent_out)


def jvp_flat(f: Callable, primals: list, tangents: list) -> tuple[list, list]:
    """Run ``f`` (a function of a list of leaves returning a list of leaves)
    forward with tangents; zero tangents come back as ``None``."""
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        outs = call_traced(f, [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)])
        out_primals, out_tangents = [], []
        for o in outs:
            if isinstance(o, Tracer) and o._trace.main is main:
                out_primals.append(o.primal)
                out_tangents.append(o.tangent)
            else:
                out_primals.append(o)
                out_tangents.append(None)
    return out_primals, out_tangents


def jvp_graph(graph: Graph, nonzero: Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[Graph, list[bool]]:
    """The forward-mode derivative of ``graph``, as a graph.

    It takes the primals and the tangents of the inputs marked ``nonzero``,
    and returns the outputs followed by the tangents of the outputs that are
    not symbolic zeros, which the returned list marks. ``instantiate`` (one
    flag, or one per output) asks for a tangent for those outputs even where
    it is zero. Made once per ``(nonzero, instantiate)`` and cached on
    ``graph``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> g = ft.make_graph(fnp.sin)(mx.ones(2))
    >>> print(jvp_graph(g, [True])[0])
    graph(a:f32[2], b:f32[2]) -> (f32[2], f32[2])
      c:f32[2] = sin a
      d:f32[2] = cos a
      e:f32[2] = multiply b d
      return c, e
    """
    mask = tuple(bool(m) for m in nonzero)
    n_out = len(graph.outs)
    inst = ((bool(instantiate),) * n_out if isinstance(instantiate, bool)
            else tuple(bool(i) for i in instantiate))
    n_in = len(graph.in_vars)

    def make(info):
        def flat_f(leaves):
            it = iter(leaves[n_in:])
            full = [next(it) if m else None for m in mask]
            outs, out_tangents = jvp_flat(lambda xs: evaluate(graph, xs), leaves[:n_in], full)
            out_tangents = [lax.zeros_like(o) if t is None and i else t
                            for o, t, i in zip(outs, out_tangents, inst)]
            info.append([t is not None for t in out_tangents])
            return outs + [t for t in out_tangents if t is not None]
        return graph.in_avals + [a for a, m in zip(graph.in_avals, mask) if m], flat_f

    return derive(graph, ("jvp", mask, inst), make)


def jvp(
    f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False
) -> tuple[Any, Any] | tuple[Any, Any, Any]:
    """Evaluate ``f(*primals)`` and its directional derivative along ``tangents``.

    ``primals`` and ``tangents`` are sequences of the same pytrees; each
    tangent leaf has its primal's shape and dtype.

    >>> import ftorch as ft, mlx.core as mx
    >>> y, dy = ft.jvp(lambda x: x * x, (mx.array(3.0),), (mx.array(1.0),))
    >>> y.item(), dy.item()
    (9.0, 6.0)
    """
    _util.check_callable(f, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (or lists) of arguments")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents")
    p_leaves, p_tree = _util.flatten_arrays(tuple(primals), "primals")
    t_leaves, t_tree = _util.flatten_arrays(tuple(tangents), "tangents")
    if p_tree != t_tree:
        raise ValueError(
            f"jvp: tangents must have the structure of primals; got {t_tree} for primals {p_tree}"
        )
    names = _util.leaf_names(p_tree, "tangents")
    for name, p, t in zip(names, p_leaves, t_leaves):
        _util.check_like(t, p, "jvp", f"{name}")
    t_leaves = [t if is_inexact(aval_of(p).dtype) else None for p, t in zip(p_leaves, t_leaves)]

    def flatten_out(out):
        out, aux = _util.split_aux(out, has_aux, "jvp")
        o_leaves, o_tree = _util.flatten_arrays(out, "output")
        return o_leaves, (o_tree, aux)

    flat_f, out_info = _util.flatten_fun(f, p_tree, flatten_out)
    out_primals, out_tangents = jvp_flat(flat_f, p_leaves, t_leaves)
    o_tree, aux = out_info.value
    out_tangents = [
        lax.zeros_like(p) if t is None else t for p, t in zip(out_primals, out_tangents)
    ]
    result = tree.unflatten(o_tree, out_primals), tree.unflatten(o_tree, out_tangents)
    return (*result, _strip(aux)) if has_aux else result


def _strip(aux: Any) -> Any:
    """Auxiliary outputs leave a transform without its tracers."""

    def primal(x):
        while isinstance(x, JVPTracer) and not x._trace.main.active:
            x = x.primal
        return x

    return tree.map(primal, aux)


def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``f(*primals)`` and the linear map ``tangents -> J @ tangents``.

    The map re-runs ``f`` forward with ``jvp`` on each call.

    >>> import ftorch as ft, mlx.core as mx
    >>> y, f_jvp = ft.linearize(ft.numpy.sin, mx.array(0.0))
    >>> f_jvp(mx.array(2.0)).item()
    2.0
    """
    _util.check_callable(f, "linearize")
    # The output alone: a forward pass with no tangent work.
    p_leaves, p_tree = _util.flatten_arrays(tuple(primals), "primals")
    flat_f, out_tree = _util.flatten_fun(f, p_tree, lambda o: _util.flatten_arrays(o, "output"))
    out_leaves, _ = jvp_flat(flat_f, p_leaves, [None] * len(p_leaves))
    out = tree.unflatten(out_tree.value, out_leaves)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(
                f"linearize: the map takes {len(primals)} tangents, got {len(tangents)}")
        return jvp(f, primals, tangents)[1]

    return out, f_jvp


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``f`` by forward mode: a JVP vmapped over the input basis.

    Each leaf of the result has shape ``out_leaf.shape + in_leaf.shape``,
    nested as the output tree of input trees (a tuple over ``argnums`` when
    it is a sequence). Inputs must be real, or complex with
    ``holomorphic=True`` (then the outputs must be complex too), as in JAX.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.jacfwd(lambda x: x ** 2)(mx.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    _util.check_callable(f, "jacfwd")

    def jacobian(*args, **kwargs):
        nums = _util.normalize_argnums(argnums, len(args), "jacfwd")
        d_leaves, d_tree = _util.flatten_arrays(tuple(args[n] for n in nums), "args")
        _util.check_differentiable(d_leaves, d_tree, "args", "jacfwd",
                                   holomorphic=holomorphic, complex_ok=False)
        def flatten_out(out):
            out, aux = _util.split_aux(out, has_aux, "jacfwd")
            o_leaves, o_tree = _util.flatten_arrays(out, "output")
            return o_leaves, (o_tree, aux)

        flat_f, out_tree = _util.flatten_fun(
            lambda *dargs: f(*_util.substitute(args, nums, dargs), **kwargs), d_tree, flatten_out)

        # One vmapped JVP per input leaf, over the identity basis of that leaf.
        out_primals: list = []
        columns = []  # columns[i][k]: d out_k / d in_i, shape (*out_k.shape, in_i.size)
        for i, leaf in enumerate(d_leaves):
            def push(t, i=i):
                tangents = [None] * len(d_leaves)
                tangents[i] = t
                outs, ts = jvp_flat(flat_f, d_leaves, tangents)
                out_primals[:] = outs
                return [lax.zeros_like(p) if t is None else t for p, t in zip(outs, ts)]

            n = leaf.size
            basis = lax.reshape(mx.eye(n, dtype=leaf.dtype), (n, *leaf.shape))
            if n:
                columns.append(vmap(push, out_axes=-1)(basis))
            else:
                push(lax.zeros(leaf.shape, leaf.dtype))
                columns.append([lax.zeros((*o.shape, 0), o.dtype) for o in out_primals])
        if not d_leaves:
            out_primals = flat_f(d_leaves)
        if holomorphic:
            for o in out_primals:
                _util.check_output_dtype(aval_of(o).dtype, "jacfwd", True)
        o_tree, aux = out_tree.value
        jac = []
        for k, o in enumerate(out_primals):
            row = [lax.reshape(columns[i][k], (*o.shape, *leaf.shape))
                   for i, leaf in enumerate(d_leaves)]
            jac.append(_per_argnums(tree.unflatten(d_tree, row), argnums))
        result = tree.unflatten(o_tree, jac)
        return (result, _strip(aux)) if has_aux else result

    return jacobian


def _per_argnums(dargs: tuple, argnums: int | Sequence[int]) -> Any:
    return dargs[0] if isinstance(argnums, int) else dargs
