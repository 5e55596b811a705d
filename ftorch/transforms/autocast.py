"""Mixed precision as a transform: ``autocast(f, dtype)`` runs ``f`` with each
primitive's floating operands cast as its ``autocast`` category says
(``Primitive``'s docstring): products (``"low"``: matmul, einsum,
convolution) in ``dtype``, what loses accuracy in 16 bits (``"float32"``:
exp/log/pow, accumulating reductions, softmax and log-softmax, special
functions, decompositions) in float32, the rest (``"promote"``) in the
widest floating dtype among the operands, as PyTorch's autocast does.

Only float32, float16 and bfloat16 operands are cast (float64, integers and
booleans never are, as in PyTorch). The casts are ordinary ``astype``
primitives, so gradients flow through them back to the float32 parameters
in float32: the parameters stay float32 masters.

Primitives whose operands are not combined into one result keep their
operands' dtypes: ``"promote"`` casts only the operands of single-result
primitives (``sort`` of keys and values, ``optimization_barrier`` keep
theirs). Higher-order primitives (``scan``, ``cond``, ``while_loop``,
``jit``, ``checkpoint``) keep their operands' dtypes and run their bodies
under the same policy, each body's outputs cast back to its own dtypes, so
that loop carries keep theirs and ``jit(f)`` gives what ``f`` gives; those
declared ``"float32"`` (``custom_linear_solve``) run their bodies as
written. User-defined rules (``custom_jvp``, ``custom_vjp``,
``custom_vmap``: the function and its rules alike) run as written, in the
dtypes they are given: their outputs must match the function's dtypes,
which autocast could not keep if it reached into them.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> f = lambda w, x: fnp.sum(fnp.tanh(x @ w))
>>> ft.amp.autocast(lambda w, x: x @ w)(mx.ones((3, 2)), mx.ones((4, 3))).dtype
mlx.core.bfloat16
>>> ft.grad(ft.amp.autocast(f))(mx.ones((3, 2)), mx.ones((4, 3))).dtype
mlx.core.float32
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import core, tree
from ftorch.core import Trace, Tracer, call_traced, new_main
from ftorch.core.tracer import PrimalTracer
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.graph import Graph, evaluate
from ftorch.transforms.staging import derive

__all__ = ["autocast", "as_written"]

#: The dtypes autocast casts (float64 is left alone, as PyTorch does).
_CASTABLE = (mx.float32, mx.float16, mx.bfloat16)

# Autocast levels below this one pass every primitive through unchanged:
# set by ``as_written`` while a user-defined rule runs.
_as_written_below = 0


class AutocastTracer(PrimalTracer):
    __slots__ = ()

    def __init__(self, trace: Trace, primal: Any):
        self._trace = trace
        self.primal = primal


class AutocastTrace(Trace):
    __slots__ = ()
    transform = "ft.amp.autocast"

    def pure(self, val: Any) -> AutocastTracer:
        return AutocastTracer(self, val)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        low = self.main.global_data
        vals = [t.primal for t in tracers]
        if self.main.level < _as_written_below:
            pass  # inside a user-defined rule: as written
        elif _is_higher_order(params):
            if prim.autocast != "float32":
                params = {k: _autocast_graphs(v, low) for k, v in params.items()}
        elif not (prim.multiple_results and prim.autocast == "promote"):
            vals = _cast_operands(prim.autocast, vals, low)
        out = prim.bind(*vals, **params)
        if prim.multiple_results:
            return [AutocastTracer(self, o) for o in out]
        return AutocastTracer(self, out)


def _is_higher_order(params: dict) -> bool:
    """Whether a primitive's params hold bodies (graphs) or functions (user
    rules, host callbacks): its operands then go to those as they are."""
    return any(isinstance(v, Graph) or (callable(v) and not isinstance(v, type)) or (
        isinstance(v, tuple) and any(isinstance(x, Graph) for x in v)) for v in params.values())


def as_written(rule: Callable) -> Callable:
    """``rule`` (a user-defined function or derivative rule) made to run as
    written under every autocast active when it is called: its operations
    keep the dtypes they are given. ``custom_jvp``/``custom_vjp``/
    ``custom_vmap`` wrap their function and rules with it.

    >>> import ftorch as ft, mlx.core as mx
    >>> matmul = as_written(lambda w, x: x @ w)
    >>> ft.amp.autocast(matmul)(mx.ones((3, 2)), mx.ones((4, 3))).dtype
    mlx.core.float32
    """
    @functools.wraps(rule)
    def run(*args: Any, **kwargs: Any) -> Any:
        global _as_written_below
        outer, _as_written_below = _as_written_below, len(core._stack)
        try:
            return rule(*args, **kwargs)
        finally:
            _as_written_below = outer
    return run


def _dtype(x: Any) -> Any:
    return x.dtype if isinstance(x, (mx.array, Tracer)) else None


def _cast_operands(category: str, vals: list, low: Any) -> list:
    """The operands cast as ``category`` says (Python scalars and the dtypes
    outside ``_CASTABLE`` as they are)."""
    dtypes = [_dtype(v) for v in vals]
    castable = [d is not None and d in _CASTABLE for d in dtypes]
    if not any(castable):
        return vals
    if category == "low":
        target = low
    elif category == "float32":
        target = mx.float32
    else:  # promote: to the widest castable dtype, where the operands differ
        if len({d for d, c in zip(dtypes, castable) if c}) == 1:
            return vals
        # Two of float32, float16 and bfloat16 promote to float32 (bfloat16 with
        # float16 too, as in PyTorch and MLX: neither holds the other).
        target = mx.float32
    return [lax.astype(v, target) if c and d != target else v
            for v, d, c in zip(vals, dtypes, castable)]


def _autocast_graphs(value: Any, low: Any) -> Any:
    """A higher-order primitive's param with each body graph autocast."""
    if isinstance(value, Graph):
        return autocast_graph(value, low)
    if isinstance(value, tuple) and any(isinstance(v, Graph) for v in value):
        return tuple(autocast_graph(v, low) if isinstance(v, Graph) else v for v in value)
    return value


def autocast_graph(graph: Graph, low: Any) -> Graph:
    """``graph`` run under autocast to ``low``, with its own signature: each
    output cast back to the dtype it had. Made once and cached on ``graph``."""
    out_dtypes = [a.dtype for a in graph.out_avals]

    def make(info):
        def flat_f(leaves):
            outs = autocast_flat(lambda xs: evaluate(graph, xs), leaves, low)
            info.append(None)
            return [lax.astype(o, d) if _dtype(o) is not None and _dtype(o) != d else o
                    for o, d in zip(outs, out_dtypes)]
        return graph.in_avals, flat_f

    return derive(graph, ("autocast", low), make)[0]


def autocast_flat(f: Callable, vals: list, low: Any) -> list:
    """Run ``f`` (a list of leaves -> a list of leaves) under autocast to ``low``."""
    with new_main(AutocastTrace, low) as main:
        trace = AutocastTrace(main)
        outs = call_traced(f, [AutocastTracer(trace, v) for v in vals])
        return [o.primal if isinstance(o, Tracer) and o._trace.main is main else o
                for o in outs]


def autocast(f: Callable, dtype: DTypeLike = mx.bfloat16) -> Callable:
    """``f`` in mixed precision: matmuls and convolutions in ``dtype``
    (``bfloat16`` or ``float16``), accuracy-sensitive ops in float32, the
    rest in the widest dtype of their operands (see the module docstring).

    A transform like the others: ``ft.grad(ft.amp.autocast(loss))`` gives
    float32 gradients for float32 parameters; it composes with ``ft.jit``,
    ``ft.vmap`` and ``ft.checkpoint`` in any order. With float16, scale the
    loss (``ft.amp.DynamicLossScale``) so that small gradients do not
    underflow.

    >>> import ftorch as ft, ftorch.nn.functional as F, mlx.core as mx
    >>> logits = ft.amp.autocast(lambda w, x: F.log_softmax(x @ w))
    >>> logits(mx.ones((3, 2)), mx.ones((4, 3))).dtype
    mlx.core.float32
    """
    low = to_mlx_dtype(dtype, "autocast: dtype")
    if low not in (mx.bfloat16, mx.float16):
        raise ValueError(f"autocast: dtype must be bfloat16 or float16, got {dtype!r}")
    if not callable(f):
        raise TypeError(f"autocast: f must be callable, got {type(f).__name__}")

    @functools.wraps(f)
    def cast_f(*args: Any, **kwargs: Any) -> Any:
        leaves, treedef = tree.flatten((args, kwargs))
        arrays = [i for i, x in enumerate(leaves) if isinstance(x, (mx.array, Tracer))]

        def flat_f(xs: list) -> list:
            full = list(leaves)
            for i, x in zip(arrays, xs):
                full[i] = x
            a, k = tree.unflatten(treedef, full)
            out = f(*a, **k)
            out_leaves, out_tree[0] = tree.flatten(out)
            return out_leaves

        out_tree: list = [None]
        outs = autocast_flat(flat_f, [leaves[i] for i in arrays], low)
        return tree.unflatten(out_tree[0], outs)

    return cast_f
