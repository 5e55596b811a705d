"""NaN and infinity checks: ``ft.config.debug_nans`` / ``debug_infs``, as
JAX's ``jax_debug_nans``.

While a check is on, an observer (``ftorch.core.primitive.add_observer``)
looks at the result of every primitive that runs on concrete arrays. An
eager operation that makes a NaN raises ``FloatingPointError`` at once,
naming the primitive, its operands' shapes, the user's line that wrote it
and its named scope. Under ``grad`` the report says whether the operation
ran in the forward pass or in the backward pass, and which primitive's VJP
rule made it: eager autodiff records each primal operation's line while the
checks are on, and a rule's operations point back at it.

A jitted call runs compiled; when one of its results holds a NaN, its graph
runs again equation by equation, each checked, so the report names the
equation that made the first NaN with the line recorded when the graph was
staged. Nested jitted calls are re-run the same way; a NaN made inside a
loop or a branch is reported at the loop or branch. Checking synchronizes
after every operation, so it is for finding a NaN, not for long runs.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> with ft.debug_nans():
...     fnp.log(mx.array([-1.0]))  # doctest: +ELLIPSIS
Traceback (most recent call last):
FloatingPointError: debug_nans: the result of log (operands f32[1]) holds a NaN, at ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch import core
from ftorch.config import config
from ftorch.core import Primitive, aval_of, format_aval, is_inexact, primitive, provenance
from ftorch.core.primitive import add_observer, remove_observer
from ftorch.graph import Graph, evaluate, subgraphs

__all__: list[str] = []

# Primitives that call a graph on their operands, as a function call: a bad
# result is looked for again inside, equation by equation.
_CALLS = ("jit", "remat")


def _bad(x: Any) -> str | None:
    """What is wrong with the array ``x`` that a check is on for."""
    if not isinstance(x, mx.array) or not is_inexact(x.dtype):
        return None
    if config.debug_nans and mx.any(mx.isnan(x)).item():
        return "a NaN"
    if config.debug_infs and mx.any(mx.isinf(x)).item():
        return "an infinity"
    return None


def _under_grad() -> bool:
    return any(main.trace_type.__name__ == "VJPTrace" for main in core._stack)


def _report(prim: Primitive, args: tuple, what: str, where: provenance.Provenance,
            stage: str | None, note: str = "") -> FloatingPointError:
    operands = "operands " + ", ".join(format_aval(aval_of(a)) for a in args) if args \
        else "no operands"
    flag = "debug_nans" if what == "a NaN" else "debug_infs"
    message = f"{flag}: the result of {prim.name} ({operands}) holds {what}, at " \
              f"{where.location()}"
    if where.function and where.filename:
        message += f" in {where.function}"
    if where.scope:
        message += f", in scope {where.scope_name!r}"
    stage = where.stage or stage
    if stage == "backward":
        message += f", in the backward pass ({where.rule or 'a VJP rule'})"
    elif stage == "forward":
        message += ", in the forward pass (of a gradient)"
    elif where.rule:
        message += f", made by {where.rule}"
    return FloatingPointError(message + note)


# The pass a re-run graph belongs to (vjp_graph tags its two halves).
_graph_stage: str | None = None


def _check(prim: Primitive, args: tuple, params: dict, run: Callable) -> Any:
    out = run(prim, args, params)
    outs = out if prim.multiple_results else [out]
    what = next((w for w in map(_bad, outs) if w is not None), None)
    if what is None:
        return out
    where = provenance.here()
    stage = "forward" if _under_grad() else None
    graph = params.get("graph")
    if prim.name in _CALLS and isinstance(graph, Graph):
        _rerun(graph, args)  # raises at the equation that made it
        note = (" (a compiled call; running its graph equation by equation made none, so "
                "compilation changed the arithmetic)")
        raise _report(prim, args, what, where, stage, note)
    if subgraphs(params) or prim.name in _CALLS:
        raise _report(prim, args, what, where, stage, f" (made inside {prim.name}'s body)")
    raise _report(prim, args, what, where, _graph_stage or stage)


def _rerun(graph: Graph, args: tuple) -> None:
    """Run ``graph`` equation by equation (each checked by ``_check``)."""
    global _graph_stage
    previous = _graph_stage
    _graph_stage = graph.derived.get("stage", previous)
    try:
        evaluate(graph, args)
    finally:
        _graph_stage = previous


def _sync() -> None:
    """Install or remove the observer and eager provenance to match the
    settings."""
    on, installed = config.debug_nans or config.debug_infs, _check in primitive._observers
    if on and not installed:
        add_observer(_check)
        _recording_before[0] = provenance.recording
        provenance.recording = True
    elif not on and installed:
        remove_observer(_check)
        provenance.recording = _recording_before[0]


# Whether eager autodiff recorded provenance before the checks turned it on.
_recording_before = [False]
config._watchers.append(_sync)
_sync()  # FTORCH_DEBUG_NANS / FTORCH_DEBUG_INFS

