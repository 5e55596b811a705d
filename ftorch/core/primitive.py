"""Primitives: the array operations every ftorch op bottoms out in, and the
registry of all of them.

Outside any transform, ``Primitive.bind`` is one check and one MLX call.
Inside transforms, the innermost (highest-level) trace among the arguments
interprets the primitive with the rules the primitive carries (JVP, VJP,
batching, shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx

import ftorch.core.trace as trace_state
from ftorch.core.avals import ShapeDtypeStruct
from ftorch.core.errors import conversion_error, leak_error
from ftorch.core.helpers import ARRAY_LIKE
from ftorch.core.trace import _stack, check_no_tracers
from ftorch.core.tracer import Tracer

#: Every primitive by name; tests walk it to make sure each has all its rules.
registry: dict[str, Primitive] = {}

# What runs a primitive on concrete arrays while observers (the profiler,
# the NaN checks) watch: ``_observer(prim, args, params)``, the composition
# of ``_observers``; None, the default, costs the eager path one test.
_observers: list[Callable] = []
_observer: Callable | None = None


def add_observer(observer: Callable[[Primitive, tuple, dict, Callable], Any]) -> None:
    """Run every primitive applied to concrete arrays (eager ops, the ops
    transforms' rules apply to concrete values; ``ft.jit`` calls as the
    ``jit`` primitive) through ``observer(prim, args, params, run)`` until
    ``remove_observer``; ``run(prim, args, params)`` computes it, through
    the observers added before."""
    _observers.append(observer)
    _compose()


def remove_observer(observer: Callable) -> None:
    _observers.remove(observer)
    _compose()


def _compose() -> None:
    global _observer
    run = _run
    for observer in _observers:
        run = (lambda obs, inner: lambda prim, args, params: obs(prim, args, params, inner))(
            observer, run)
    _observer = run if _observers else None


def _run(prim: Primitive, args: tuple, params: dict) -> Any:
    try:
        return prim.impl(*args, **params)
    except Exception:
        prim._explain_failure(args)
        raise


class Primitive:
    """An array operation with all its rules side by side.

    - ``impl(*args, **params)``: the MLX implementation on concrete arrays.
    - ``jvp(primals, tangents, **params) -> (out, tangent_out)``: forward mode.
      A tangent of ``None`` is a symbolic zero; the rule may return ``None``.
    - ``vjp(ct, out, *primals, **params) -> tuple``: reverse mode, one
      cotangent (or ``None`` for zero / not differentiable) per primal. It is
      told, as the keyword ``needed`` (a tuple of bools, as MLX's
      ``argnums``), which primals need a cotangent: traced floating values,
      not constants, data, integers or Python scalars, so it computes none
      for the others and never checks dtypes itself.
    - ``vjp_fwd(primals, **params) -> (out, residuals, vjp_params)``: optional,
      for primitives whose VJP needs more than their inputs (``jit``'s
      intermediate values): reverse mode then runs it instead of ``impl`` and
      calls ``vjp(ct, out, *residuals, **vjp_params)``.
    - ``batch(vals, dims, axis_size, **params) -> (out, out_dim)``: vmap's rule
      (``dims[i]`` is the batch axis of ``vals[i]``, or ``None``).
    - ``abstract_eval(*avals, **params)``: the shape/dtype rule. By default it
      runs ``impl`` on lazy MLX placeholders, which computes nothing (MLX is
      lazy) and agrees with MLX's own shape inference by construction.
    - ``lowering(*args, **params)``: optional, what ``graph.lower`` emits for
      it into one straight-line MLX function (``jit`` inlines its graph);
      ``impl`` when absent.
    - ``needs_host``: it reads values on the host while it runs (a loop
      whose trip count depends on data), or is driven from it (a long scan,
      run rolled), so a compiled graph is split at it
      (``executable.segmented``); its ``lowering`` then runs between compiled
      segments, on concrete arrays. A bool, or a function of an equation's
      params that says it per equation.
    - ``communicates``: it exchanges data with other processes (a
      collective), so it runs when the graph runs, never while ``jit``
      stages it (constant folding leaves it alone: processes whose caches
      miss at different times would otherwise disagree on when it runs).
    - ``elementwise``: its operands broadcast and promote to one dtype
      elementwise, so a weakly typed scalar operand (a Python scalar passed to
      ``jit``) takes the dtype of the others.
    - ``autocast``: what mixed precision (``ft.amp.autocast``) does with its
      floating operands, after PyTorch's autocast lists: ``"low"`` runs it
      in the low-precision dtype (products: matmul, convolution), ``"float32"``
      in float32 (what loses accuracy in 16 bits: exp/log/pow, reductions
      that accumulate, softmax, special functions, decompositions),
      ``"promote"`` (the default) in the widest dtype among its operands
      (a multiple-result primitive's operands keep their dtypes). A
      higher-order primitive (graphs or functions among its params) keeps
      its operands' dtypes whatever its category: its bodies run autocast,
      or as written where it is ``"float32"``.

    The constructor takes what the primitive is (``multiple_results``,
    ``elementwise``, ``needs_host``, ``communicates``, ``autocast``); every rule
    is attached one way, by its ``def_<rule>`` method (usable as a decorator),
    in the primitive's block right under its definition. The helpers of
    ``ftorch.primitives._rules`` (``linear``, ``vectorized``, ``derivative``,
    ...) are shorthands that call those methods. Rules are written with
    ftorch ops, so they are differentiable themselves. ``params`` are static,
    hashable keyword arguments (axes, shapes, dtypes).
    """

    __slots__ = (
        "name", "impl", "jvp", "vjp", "vjp_fwd", "batch",
        "_abstract_eval", "multiple_results", "elementwise", "lowering", "needs_host",
        "communicates", "autocast",
    )

    def __init__(
        self,
        name: str,
        impl: Callable,
        *,
        multiple_results: bool = False,
        elementwise: bool = False,
        needs_host: bool | Callable[..., bool] = False,
        communicates: bool = False,
        autocast: str = "promote",
    ):
        if name in registry:
            raise ValueError(f"primitive {name!r} is defined twice")
        if autocast not in ("low", "float32", "promote"):
            raise ValueError(f"primitive {name!r}: autocast must be 'low', 'float32' or "
                             f"'promote', got {autocast!r}")
        self.name = name
        self.impl = impl
        self.jvp: Callable | None = None
        self.vjp: Callable | None = None
        self.vjp_fwd: Callable | None = None
        self.batch: Callable | None = None
        self._abstract_eval: Callable | None = None
        self.lowering: Callable | None = None
        self.multiple_results = multiple_results
        self.elementwise = elementwise
        self.needs_host = needs_host
        self.communicates = communicates
        self.autocast = autocast
        registry[name] = self

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> Any:
        if not _stack:  # the eager fast path: no transform is active
            if _observer is not None:
                return _observer(self, args, params)
            try:
                return self.impl(*args, **params)
            except Exception:
                self._explain_failure(args)
                raise
        # The innermost (highest-level) transform among the arguments
        # interprets the op. Inlined: this runs for every op under a transform.
        trace = None
        for a in args:
            if isinstance(a, Tracer) and (trace is None or a._trace.main.level > trace.main.level):
                trace = a._trace
        dynamic = trace_state._dynamic
        if dynamic is not None and (trace is None or trace.main.level < dynamic.level):
            # Under jit, ops on values the staged function does not trace
            # (constants, outer transforms' values) are staged too.
            trace = dynamic.trace_type(dynamic)
        elif trace is None:
            if _observer is not None:
                return _observer(self, args, params)
            try:
                return self.impl(*args, **params)
            except Exception:
                self._explain_failure(args)
                raise
        main = trace.main
        if not main.active:
            raise leak_error(main)
        try:
            tracers = [a if isinstance(a, Tracer) and a._trace.main is main
                       else trace.full_raise(a) for a in args]
        except (TypeError, OverflowError):
            self._explain_failure(args)
            raise
        return trace.process_primitive(self, tracers, params)

    def _explain_failure(self, args: tuple) -> None:
        """Raise a clearer error than MLX's for operands it refused."""
        check_no_tracers(args)  # a tracer that leaked out of a finished transform
        for i, a in enumerate(args):
            if not isinstance(a, ARRAY_LIKE) and not isinstance(a, Tracer):
                raise TypeError(
                    f"{self.name}: operand {i} must be an array or a Python scalar, got "
                    f"{type(a).__name__}: {a!r}")
            if type(a) is int and not -2**63 <= a < 2**63:
                raise conversion_error(a, f"{self.name}: operand {i}", OverflowError())

    def abstract_eval(self, *avals: Any, **params: Any) -> Any:
        if self._abstract_eval is not None:
            return self._abstract_eval(*avals, **params)
        placeholders = [
            mx.zeros(a.shape, a.dtype) if isinstance(a, ShapeDtypeStruct) else a for a in avals
        ]
        out = self.impl(*placeholders, **params)
        if self.multiple_results:
            return [ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in out]
        return ShapeDtypeStruct(tuple(out.shape), out.dtype)

    # The one way to attach each rule.
    def def_jvp(self, rule: Callable) -> Callable:
        self.jvp = rule
        return rule

    def def_vjp(self, rule: Callable) -> Callable:
        self.vjp = rule
        return rule

    def def_vjp_fwd(self, rule: Callable) -> Callable:
        self.vjp_fwd = rule
        return rule

    def def_batch(self, rule: Callable) -> Callable:
        self.batch = rule
        return rule

    def def_abstract_eval(self, rule: Callable) -> Callable:
        self._abstract_eval = rule
        return rule

    def def_lowering(self, rule: Callable) -> Callable:
        self.lowering = rule
        return rule
