"""Where the time and memory of ftorch code go, after ``torch.profiler``:
time and calls per primitive and per named scope (``ft.named_scope``),
``ft.jit``'s traces (cache misses) and compilations, peak memory per step,
a table, and a trace for Perfetto.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> x = mx.ones((32, 32))
>>> with ft.profiler.profile() as prof:
...     for _ in range(3):
...         with ft.named_scope("layer"):
...             y = fnp.tanh(fnp.matmul(x, x))
...         prof.step()
>>> sorted((row.name, row.calls) for row in prof.key_averages())
[('matmul', 3), ('tanh', 3)]
>>> [row.scope for row in prof.key_averages(group_by="scope")]
['layer']
>>> len(prof.steps)
3

What the numbers mean. MLX is lazy: an operation records what to compute,
and the work happens when a result is evaluated, usually many operations at
once. The profiler measures at evaluation boundaries it makes itself:

- An eager primitive (an ftorch operation outside ``ft.jit``, the forward
  and backward operations of an eager ``ft.grad`` included) is timed by
  evaluating its operands first, so that work still pending is not charged
  to it, and its result right after it is computed (``mx.eval``). Its row is
  that operation's kernel time plus its dispatch. A profiled eager run loses
  MLX's lazy batching and its overlap of Python with computation, so it
  runs slower than it does unprofiled. Raw MLX calls (``mx.*``, and
  ``mx.array``'s operators outside transforms) are not ftorch primitives:
  no row shows them, and what they leave pending is evaluated, untimed,
  before the next ftorch operation that reads it.
- A call of an ``ft.jit`` function is timed as a whole, evaluated at its
  end, and is one row named after the function: ``jit(train_step)``.
  Staging a new signature, a cache miss, is a ``trace(train_step)`` row
  (its calls count the misses); the first call of a signature's compiled
  tier (``mx.compile``'s tracing and kernel builds, plus that call's run) is
  a ``compile(train_step)`` row, whose time the ``jit`` row leaves out.
  Graphs that transforms derive from a jitted function (``ft.grad`` of it)
  carry its name, with ``forward`` or ``backward``. While a profile records,
  jitted calls skip the C++ lookup of their compiled signatures (a few
  microseconds a call), so that the profiler sees each.
- ``profile(jit_ops=True)`` runs jitted graphs equation by equation instead,
  uncompiled, each equation timed as an eager primitive, so the time is
  attributed to the primitives and named scopes inside them. That is slower
  than the compiled run (no fusion, an evaluation per equation): it shows
  where the time goes, not how long the compiled step takes. The ``jit``
  rows then hold only the Python of running the graph.

A row's ``total`` includes what ran inside it (a ``remat`` call's
operations, a jitted call's under ``jit_ops``); its ``self`` time does not,
so self times add up to the time spent in timed operations. The rest of
the profiled time is Python between them: the table's last line says how
much. Grouped by scope, an operation counts toward the named scopes around
the line that made it (a backward operation toward its forward operation's
scope); a scope's ``total`` includes its sub-scopes. Operations of other
threads than the one that started the profile are not recorded.

Memory: ``prof.step()`` marks the end of a step, as in ``torch.profiler``.
Each step records its wall time and its peak memory, ``mx.get_peak_memory()``
at its end after ``mx.reset_peak_memory()`` at its start (the block's start
for the first), so the peak includes what was already allocated then (the
parameters). ``memory_summary()`` reports MLX's allocator now.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, overload

import mlx.core as mx

from ftorch.core import Primitive, ShapeDtypeStruct, format_aval, provenance
from ftorch.core import primitive as primitives
from ftorch.graph import Graph, evaluate
from ftorch.transforms import executable as jit_events
from ftorch.transforms.jit import jit_p

__all__ = ["profile", "KeyAverages", "Row", "Event", "Step", "memory_summary", "trace",
           "start_trace", "stop_trace", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function"]


@dataclass
class Event:
    """One timed interval of a profile.

    ``category`` is ``"primitive"`` (an eager primitive), ``"jit"`` (a call
    of a jitted function), ``"trace"`` (``ft.jit`` staging a new signature)
    or ``"compile"`` (a signature's first compiled call). Times are seconds;
    ``start_s`` counts from the profile's start; ``self_s`` is ``duration_s``
    less the events inside it. ``scope`` holds the names of the named scopes
    around it, outermost first; ``args`` what the trace shows beside it
    (operand shapes, the rule that made a derivative's operation).

    >>> Event("tanh", "primitive", 0.0, 2e-6, 2e-6).category
    'primitive'
    """

    name: str
    category: str
    start_s: float
    duration_s: float
    self_s: float
    scope: tuple[str, ...] = ()
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Step:
    """One step of a profile (from its start, or the last ``prof.step()``,
    to the next): its wall time, the peak of MLX's allocated memory in it
    and the memory allocated at its end, in bytes.

    >>> Step(0, 0.0, 0.01, 2**20, 2**19).peak_memory
    1048576
    """

    index: int
    start_s: float
    duration_s: float
    peak_memory: int
    active_memory: int


@dataclass
class Row:
    """One line of ``key_averages()``: a primitive, a jitted function's
    calls, traces or compilations, or a named scope (``scope`` its path;
    ``"(no scope)"`` names operations outside every scope).

    ``total_s`` includes what ran inside (for a scope, its sub-scopes, and
    ``calls`` counts their operations too), ``self_s`` does not;
    ``mean_s`` is ``total_s / calls``; ``percent`` is the row's share of
    all self time.

    >>> Row("matmul", 2, 0.004, 0.004, 0.002, 80.0).mean_s
    0.002
    """

    name: str
    calls: int
    total_s: float
    self_s: float
    mean_s: float
    percent: float
    scope: str = ""


# torch.profiler's names for the columns to sort by, beside ours.
_SORT_KEYS: dict[str, Callable[[Row], Any]] = {
    "total": lambda r: -r.total_s,
    "self": lambda r: -r.self_s,
    "calls": lambda r: -r.calls,
    "mean": lambda r: -r.mean_s,
    "name": lambda r: r.scope or r.name,
}
_TORCH_SORT_KEYS = {"cpu_time_total": "total", "self_cpu_time_total": "self", "count": "calls",
                    "cpu_time": "mean", "device_time_total": "total",
                    "self_device_time_total": "self"}


class KeyAverages(Sequence[Row]):
    """The rows of ``profile.key_averages()``: a sequence of ``Row``
    (``avgs[0]``, or by name: ``avgs["matmul"]``, ``avgs["model/layer1"]``
    grouped by scope), printable as a table (``str(avgs)``,
    ``avgs.table(...)``), and a ``rich`` table where rich is installed
    (``rich.print(avgs)``, or shown in a notebook by rich's console).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> with ft.profiler.profile() as prof:
    ...     _ = fnp.exp(mx.ones(4))
    >>> avgs = prof.key_averages()
    >>> avgs["exp"].calls, len(avgs)
    (1, 1)
    >>> print(avgs.table())  # doctest: +ELLIPSIS
    name  calls  total ms  self ms  mean ms  % self
    exp       1  ...
    self time: ... ms of ... ms profiled (the rest: Python between timed operations)
    """

    def __init__(self, rows: list[Row], group_by: str, profiled_s: float):
        self.rows = rows
        self.group_by = group_by
        self.profiled_s = profiled_s

    @overload
    def __getitem__(self, index: int) -> Row: ...

    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...

    @overload
    def __getitem__(self, index: str) -> Row: ...

    def __getitem__(self, index):
        if isinstance(index, str):
            for row in self.rows:
                if (row.scope if self.group_by == "scope" else row.name) == index:
                    return row
            raise KeyError(f"key_averages: no row {index!r}")
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def sorted(self, sort_by: str = "total") -> list[Row]:
        """The rows sorted by ``"total"`` (the default), ``"self"``,
        ``"calls"``, ``"mean"`` (largest first) or ``"name"``; torch's
        ``"cpu_time_total"``, ``"self_cpu_time_total"`` and ``"count"`` are
        taken too.

        >>> avgs = KeyAverages([Row("a", 1, 1.0, 1.0, 1.0, 50.0),
        ...                     Row("b", 4, 1.0, 1.0, 0.25, 50.0)], "primitive", 2.0)
        >>> avgs.sorted("calls")[0].name
        'b'
        """
        key = _SORT_KEYS.get(_TORCH_SORT_KEYS.get(sort_by, sort_by))
        if key is None:
            raise ValueError(f"key_averages: sort_by must be one of {sorted(_SORT_KEYS)}, got "
                             f"{sort_by!r}")
        return sorted(self.rows, key=key)

    def _cells(self, sort_by: str, row_limit: int | None) -> tuple[list[str], list[list[str]]]:
        rows = self.sorted(sort_by)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        header = ["scope" if self.group_by == "scope" else "name", "calls", "total ms",
                  "self ms", "mean ms", "% self"]
        cells = [[r.scope or r.name if self.group_by == "scope" else r.name, str(r.calls),
                  f"{r.total_s * 1e3:.3f}", f"{r.self_s * 1e3:.3f}", f"{r.mean_s * 1e3:.3f}",
                  f"{r.percent:.1f}"] for r in rows]
        return header, cells

    def _footer(self) -> str:
        self_total = sum(r.self_s for r in self.rows)
        return (f"self time: {self_total * 1e3:.3f} ms of {self.profiled_s * 1e3:.3f} ms "
                "profiled (the rest: Python between timed operations)")

    def table(self, sort_by: str = "total", row_limit: int | None = None) -> str:
        """The rows as a plain-text table, sorted by ``sort_by`` (see
        ``sorted``), the first ``row_limit`` of them (``None`` or a negative
        number: all); the last line is the self time of all rows beside the
        time profiled.

        >>> avgs = KeyAverages([Row("add", 2, 0.001, 0.001, 0.0005, 100.0)], "primitive", 0.002)
        >>> print(avgs.table())
        name  calls  total ms  self ms  mean ms  % self
        add       2     1.000    1.000    0.500   100.0
        self time: 1.000 ms of 2.000 ms profiled (the rest: Python between timed operations)
        """
        header, cells = self._cells(sort_by, row_limit)
        widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(header))]

        def line(values: list[str]) -> str:
            first = values[0].ljust(widths[0])
            rest = [v.rjust(w) for v, w in zip(values[1:], widths[1:])]
            return "  ".join([first, *rest]).rstrip()

        return "\n".join([line(header), *map(line, cells), self._footer()])

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<KeyAverages: {len(self.rows)} rows by {self.group_by}>"

    def __rich__(self) -> Any:
        """A ``rich.table.Table`` of the rows (for rich's console)."""
        from rich.table import Table

        header, cells = self._cells("total", None)
        table = Table(caption=self._footer())
        for i, title in enumerate(header):
            table.add_column(title, justify="left" if i == 0 else "right")
        for values in cells:
            table.add_row(*values)
        return table


# The profile recording now (profiles do not nest).
_active: profile | None = None


class profile:  # noqa: N801  (torch.profiler.profile's name)
    """Record the block's primitives, jitted calls, traces, compilations
    and steps (a context manager, or ``start()`` / ``stop()``); see the
    module for what the times mean.

    Args:
        jit_ops: run jitted graphs equation by equation, uncompiled, so that
            their time is attributed to the primitives and scopes inside
            them (slower than the compiled run). Default: ``False``, a
            jitted call is one row.
        record_shapes: keep each event's operand shapes (shown in the
            trace). Default: ``True``.
        gpu_trace: a path ending in ``.gputrace``: capture the block with
            Metal's GPU capture (``mx.metal.start_capture``), for Xcode.
            Metal only (the process needs ``MTL_CAPTURE_ENABLED=1``).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> f = ft.jit(lambda x: fnp.sum(fnp.sin(x) ** 2))
    >>> with ft.profiler.profile() as prof:
    ...     for n in (3, 3, 4):
    ...         _ = f(mx.ones(n))
    ...         prof.step()
    >>> avgs = prof.key_averages()
    >>> avgs["jit(<lambda>)"].calls, avgs["trace(<lambda>)"].calls  # two signatures
    (3, 2)
    >>> with ft.profiler.profile(jit_ops=True) as prof:
    ...     _ = f(mx.ones(3))
    >>> sorted(row.name for row in prof.key_averages())
    ['jit(<lambda>)', 'power', 'sin', 'sum']
    """

    def __init__(self, *, jit_ops: bool = False, record_shapes: bool = True,
                 gpu_trace: str | os.PathLike | None = None):
        if gpu_trace is not None and not mx.metal.is_available():
            raise RuntimeError(
                "profile(gpu_trace=...): a GPU trace is Metal's capture "
                "(mx.metal.start_capture), and this MLX has no Metal backend; on CUDA, run "
                "the script under Nsight Systems (nsys profile python ...) instead")
        self.jit_ops = jit_ops
        self.record_shapes = record_shapes
        self.gpu_trace = None if gpu_trace is None else os.fspath(gpu_trace)
        #: The steps recorded, one per ``step()`` (and the block's last,
        #: when something ran after the last ``step()``, or none was called).
        self.steps: list[Step] = []
        self._events: list[Event] = []
        # Per open event, the time of the events inside it: self time is
        # duration less this. The bottom entry is the block's top level.
        self._inner: list[float] = [0.0]
        self._origin: float | None = None
        self._end: float | None = None
        self._step_start = 0.0
        self._step_first_event = 0
        self._thread = 0
        self._thread_id = 0  # the system's id of that thread, as traces show threads
        self._recording_before = False

    # -- recording -------------------------------------------------------------

    def start(self) -> None:
        """Start recording (what ``with`` does on entry)."""
        global _active
        if _active is not None:
            raise RuntimeError(
                "ftorch.profiler.profile: another profile is recording; profiles do not "
                "nest (one profile sees everything; mark steps with prof.step())")
        if self._origin is not None:
            raise RuntimeError("ftorch.profiler.profile: this profile has recorded already; "
                               "make a new one")
        if self.gpu_trace is not None:
            mx.metal.start_capture(self.gpu_trace)
        mx.synchronize()  # what ran before is not the first step's
        mx.reset_peak_memory()
        _active = self
        self._thread, self._thread_id = threading.get_ident(), threading.get_native_id()
        # Eager autodiff records where each operation was written, so that
        # a backward operation counts toward its forward operation's scope.
        self._recording_before = provenance.recording
        provenance.recording = True
        jit_events.listeners.append(self._on_jit_event)
        primitives.add_observer(self._observe)
        self._origin = self._step_start = time.perf_counter()

    def stop(self) -> None:
        """Stop recording (what ``with`` does on exit, also when the block
        raised); the block's last step is recorded when anything ran in it."""
        global _active
        if _active is not self:
            return
        try:
            mx.synchronize()
            now = time.perf_counter()
            if len(self._events) > self._step_first_event or not self.steps:
                self._close_step(now)
            self._end = now
        finally:
            primitives.remove_observer(self._observe)
            jit_events.listeners.remove(self._on_jit_event)
            provenance.recording = self._recording_before
            _active = None
            if self.gpu_trace is not None:
                mx.metal.stop_capture()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def step(self) -> None:
        """Mark a step boundary: the step that ends now is recorded with its
        time and peak memory, and the next one starts (its peak counted
        afresh)."""
        if _active is not self:
            raise RuntimeError("prof.step(): this profile is not recording (call it inside "
                               "its `with` block)")
        mx.synchronize()
        self._close_step(time.perf_counter())
        mx.reset_peak_memory()

    def _close_step(self, now: float) -> None:
        self.steps.append(Step(len(self.steps), self._step_start - self._origin,
                               now - self._step_start, mx.get_peak_memory(),
                               mx.get_active_memory()))
        self._step_start = now
        self._step_first_event = len(self._events)

    def _observe(self, prim: Primitive, args: tuple, params: dict, run: Callable) -> Any:
        """Time one primitive on concrete arrays (the observer of
        ``ftorch.core.primitive``): its operands evaluated first, its result
        right after."""
        if threading.get_ident() != self._thread:
            return run(prim, args, params)
        _evaluate(args)
        where = provenance.context
        scope = where.scope if where is not None else provenance.current_scope()
        inner = self._inner
        inner.append(0.0)
        start = time.perf_counter()
        try:
            if prim is jit_p and self.jit_ops:
                out = evaluate(params["graph"], args)
            else:
                out = run(prim, args, params)
            _evaluate(out)
        finally:
            end = time.perf_counter()
            inside = inner.pop()
        duration = end - start
        inner[-1] += duration
        if prim is jit_p:
            name, category = f"jit({_graph_name(params['graph'])})", "jit"
        else:
            name, category = prim.name, "primitive"
        info: dict[str, Any] = {}
        if self.record_shapes:
            info["shapes"] = [_describe(a) for a in args]
        if where is not None and where.rule:
            info["rule"] = where.rule
        self._events.append(Event(name, category, start - self._origin, duration,
                                  duration - inside, scope, info))
        return out

    def _on_jit_event(self, event: str, graph: Graph, seconds: float) -> None:
        """A trace or compilation that just ended (``executable.listeners``)."""
        if threading.get_ident() != self._thread:
            return
        end = time.perf_counter()
        self._inner[-1] += seconds  # the enclosing jitted call's self time leaves it out
        self._events.append(Event(f"{event}({_graph_name(graph)})", event,
                                  end - seconds - self._origin, seconds, seconds,
                                  provenance.current_scope(),
                                  {"equations": len(graph.eqns)}))

    # -- results ---------------------------------------------------------------

    def events(self) -> list[Event]:
        """Every event recorded, in the order they ended (steps are in
        ``steps``).

        >>> import ftorch as ft, mlx.core as mx
        >>> with ft.profiler.profile() as prof:
        ...     _ = ft.numpy.negative(mx.ones(2))
        >>> [(e.name, e.category, e.args["shapes"]) for e in prof.events()]
        [('negative', 'primitive', ['f32[2]'])]
        """
        return list(self._events)

    def profiled_s(self) -> float:
        """Seconds recorded: the block's wall time (so far, while recording)."""
        if self._origin is None:
            return 0.0
        return (self._end if self._end is not None else time.perf_counter()) - self._origin

    def key_averages(self, group_by: str = "primitive") -> KeyAverages:
        """The events summed per name (``group_by="primitive"``: each
        primitive, ``jit(f)``, ``trace(f)``, ``compile(f)``) or per named
        scope (``group_by="scope"``), as ``KeyAverages`` rows.

        >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
        >>> with ft.profiler.profile() as prof:
        ...     with ft.named_scope("model"):
        ...         with ft.named_scope("layer1"):
        ...             _ = fnp.exp(mx.ones(4))
        >>> [(r.scope, r.calls) for r in prof.key_averages(group_by="scope")]
        [('model', 1), ('model/layer1', 1)]
        """
        if group_by == "primitive":
            rows = _rows_by_name(self._events)
        elif group_by == "scope":
            rows = _rows_by_scope(self._events)
        else:
            raise ValueError(f"key_averages: group_by must be 'primitive' or 'scope', got "
                             f"{group_by!r}")
        return KeyAverages(rows, group_by, self.profiled_s())

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the events and steps as trace-event JSON (complete events,
        ``"ph": "X"``, times in microseconds), which Perfetto
        (ui.perfetto.dev) and ``chrome://tracing`` open. Each event's
        ``cat`` is its category or ``"step"``; its ``args`` hold its scope,
        operand shapes, and a step's memory in bytes.

        >>> import ftorch as ft, mlx.core as mx, json, os, tempfile
        >>> with ft.profiler.profile() as prof:
        ...     _ = ft.numpy.negative(mx.ones(2))
        >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
        >>> prof.export_chrome_trace(path)
        >>> sorted(e["cat"] for e in json.load(open(path))["traceEvents"])
        ['primitive', 'step']
        """
        pid, tid = os.getpid(), self._thread_id
        events = []
        for e in self._events:
            args = {"scope": "/".join(e.scope), **e.args, "self_us": _us(e.self_s)}
            events.append({"name": e.name, "cat": e.category, "ph": "X",
                           "ts": _us(e.start_s), "dur": _us(e.duration_s),
                           "pid": pid, "tid": tid, "args": args})
        for s in self.steps:
            events.append({"name": f"ProfilerStep#{s.index}", "cat": "step", "ph": "X",
                           "ts": _us(s.start_s), "dur": _us(s.duration_s), "pid": pid,
                           "tid": tid, "args": {"peak_memory": s.peak_memory,
                                                "active_memory": s.active_memory}})
        # Parents before the events inside them: by start, the longest first.
        events.sort(key=lambda e: (e["ts"], -e["dur"]))
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def _us(seconds: float) -> float:
    """Seconds as the trace's microseconds, to the nanosecond."""
    return round(seconds * 1e6, 3)


def _evaluate(values: Any) -> None:
    """Evaluate the arrays among a primitive's operands or results."""
    if isinstance(values, mx.array):
        mx.eval(values)
        return
    arrays = [v for v in values if isinstance(v, mx.array)] if isinstance(
        values, (list, tuple)) else []
    if arrays:
        mx.eval(*arrays)


def _describe(x: Any) -> str:
    """An operand as the trace shows it: ``f32[2,3]``, or a scalar's value."""
    if isinstance(x, mx.array):
        return format_aval(ShapeDtypeStruct(tuple(x.shape), x.dtype))
    if isinstance(x, (bool, int, float, complex)):
        return repr(x)
    return type(x).__name__


def _graph_name(graph: Graph) -> str:
    """The name of the jitted function a graph was staged from (its first
    equation's function when it was not), with its pass (``forward``,
    ``backward``) when a transform derived it."""
    name = graph.derived.get("name")
    if name is not None:  # a qualified name, less the functions it is local to
        name = name.rsplit(".<locals>.", 1)[-1]
    else:
        name = next((e.provenance.function for e in graph.eqns
                     if e.provenance is not None and e.provenance.function), "graph")
    stage = graph.derived.get("stage")
    return f"{name} {stage}" if stage else name


def _rows_by_name(events: list[Event]) -> list[Row]:
    sums: dict[str, list] = {}  # name -> [calls, total, self]
    for e in events:
        acc = sums.setdefault(e.name, [0, 0.0, 0.0])
        acc[0] += 1
        acc[1] += e.duration_s
        acc[2] += e.self_s
    all_self = sum(acc[2] for acc in sums.values())
    return [Row(name, calls, total, self_s, total / calls,
                100.0 * self_s / all_self if all_self else 0.0)
            for name, (calls, total, self_s) in sums.items()]


def _rows_by_scope(events: list[Event]) -> list[Row]:
    direct: dict[tuple, list] = {}  # scope -> [calls, self] of its own operations
    for e in events:
        acc = direct.setdefault(e.scope, [0, 0.0])
        acc[0] += 1
        acc[1] += e.self_s
    # Every enclosing scope is a row too, its total including its sub-scopes'.
    nested: dict[tuple, list] = {}
    for scope, (calls, self_s) in direct.items():
        for prefix in [scope[:i] for i in range(1, len(scope) + 1)] or [()]:
            acc = nested.setdefault(prefix, [0, 0.0])
            acc[0] += calls
            acc[1] += self_s
    all_self = sum(acc[1] for acc in direct.values())
    rows = []
    for scope, (calls, total) in sorted(nested.items()):
        self_s = direct.get(scope, [0, 0.0])[1]
        rows.append(Row(scope[-1] if scope else "(no scope)", calls, total, self_s,
                        total / calls if calls else 0.0,
                        100.0 * self_s / all_self if all_self else 0.0, "/".join(scope)))
    return rows


def _format_bytes(n: float) -> str:
    """``n`` bytes as people read them: ``'512 B'``, ``'1.5 KiB'``, ``'12.3 MiB'``.

    >>> _format_bytes(512), _format_bytes(1536), _format_bytes(3 * 2**30)
    ('512 B', '1.5 KiB', '3.0 GiB')
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def memory_summary() -> str:
    """MLX's allocator now, as ``torch.cuda.memory_summary``: memory held
    by arrays alive now (``mx.get_active_memory()``), the most held at once
    since the process started or the last ``mx.reset_peak_memory()``
    (``mx.get_peak_memory()``; a profile resets it at each step), freed
    buffers MLX keeps for reuse (``mx.get_cache_memory()``), and the limit
    MLX's allocator works within (``mx.get_memory_limit()``).

    >>> import ftorch as ft
    >>> print(ft.profiler.memory_summary())  # doctest: +ELLIPSIS
    MLX memory on Device(...)
      active  ...  held by arrays alive now
      peak    ...  the most held at once (since the start or mx.reset_peak_memory())
      cache   ...  freed buffers kept for reuse (mx.clear_cache() returns them)
      limit   ...  what the allocator works within (mx.set_memory_limit)
    """
    lines = [
        ("active", mx.get_active_memory(), "held by arrays alive now"),
        ("peak", mx.get_peak_memory(),
         "the most held at once (since the start or mx.reset_peak_memory())"),
        ("cache", mx.get_cache_memory(),
         "freed buffers kept for reuse (mx.clear_cache() returns them)"),
        ("limit", mx.get_memory_limit(), "what the allocator works within (mx.set_memory_limit)"),
    ]
    sizes = [_format_bytes(n) for _, n, _ in lines]
    width = max(map(len, sizes))
    body = [f"  {label:<6}  {size:>{width}}  {what}" for (label, _, what), size in
            zip(lines, sizes)]
    return "\n".join([f"MLX memory on {mx.default_device()}", *body])


# ----------------------------------------------------------------------------
# jax.profiler's names
# ----------------------------------------------------------------------------

# The profile start_trace began, and where stop_trace writes it.
_jax_trace: tuple[profile, str] | None = None


def start_trace(log_dir: str | os.PathLike, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """Start a profile that ``stop_trace`` writes to ``log_dir``, as
    ``jax.profiler.start_trace``: a Chrome trace (``profile``'s, for
    Perfetto), not TensorBoard's format. The options are accepted for JAX
    code; Perfetto opens the file as it is.

    >>> import ftorch as ft, mlx.core as mx, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> ft.profiler.start_trace(folder)
    >>> _ = ft.numpy.sin(mx.ones(3))
    >>> path = ft.profiler.stop_trace()
    >>> os.path.dirname(path) == folder and path.endswith(".trace.json")
    True
    """
    global _jax_trace
    del create_perfetto_link, create_perfetto_trace, profiler_options
    if _jax_trace is not None:
        raise RuntimeError("start_trace: a trace is already being recorded (stop_trace ends it)")
    recording = profile()
    recording.start()
    _jax_trace = (recording, os.fspath(log_dir))


def stop_trace() -> str:
    """Stop the profile ``start_trace`` began and write its Chrome trace to
    ``log_dir/ftorch-<time>.trace.json``; returns the path."""
    global _jax_trace
    if _jax_trace is None:
        raise RuntimeError("stop_trace: no trace is being recorded (start_trace begins one)")
    (recording, log_dir), _jax_trace = _jax_trace, None
    recording.stop()
    os.makedirs(log_dir, exist_ok=True)
    path = os.path.join(log_dir, time.strftime("ftorch-%Y%m%d-%H%M%S") +
                        f"-{os.getpid()}.trace.json")
    recording.export_chrome_trace(path)
    return path


@contextmanager
def trace(log_dir: str | os.PathLike, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False, profiler_options: Any = None) -> Iterator[None]:
    """``start_trace`` and ``stop_trace`` around a block, as
    ``jax.profiler.trace``.

    >>> import ftorch as ft, mlx.core as mx, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> with ft.profiler.trace(folder):
    ...     _ = ft.numpy.cos(mx.ones(3))
    >>> [name.endswith(".trace.json") for name in os.listdir(folder)]
    [True]
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named scope (``ft.named_scope``) as ``jax.profiler.TraceAnnotation``:
    the profile's rows grouped by scope show it.

    >>> import ftorch as ft, mlx.core as mx
    >>> with ft.profiler.profile() as prof:
    ...     with ft.profiler.TraceAnnotation("data"):
    ...         _ = ft.numpy.exp(mx.ones(3))
    >>> [row.scope for row in prof.key_averages(group_by="scope")]
    ['data']
    """

    def __init__(self, name: str, **kwargs: Any):
        if not isinstance(name, str):
            raise TypeError(f"TraceAnnotation: name must be a str, got {type(name).__name__}")
        self.name = name
        self._scope: Any = None

    def __enter__(self) -> TraceAnnotation:
        self._scope = provenance.scope(self.name)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._scope.__exit__(*exc_info)


class StepTraceAnnotation(TraceAnnotation):
    """One training step, as ``jax.profiler.StepTraceAnnotation``: a named
    scope whose end marks a step of the profile recording (``prof.step()``).

    >>> import ftorch as ft, mlx.core as mx
    >>> with ft.profiler.profile() as prof:
    ...     for i in range(2):
    ...         with ft.profiler.StepTraceAnnotation("train", step_num=i):
    ...             _ = ft.numpy.exp(mx.ones(3))
    >>> len(prof.steps)
    2
    """

    def __exit__(self, *exc_info: Any) -> None:
        super().__exit__(*exc_info)
        if _active is not None and exc_info[0] is None:
            _active.step()


def annotate_function(func: Callable, name: str | None = None, **kwargs: Any) -> Callable:
    """``func`` with its operations in a named scope (its name by
    default), as ``jax.profiler.annotate_function``.

    >>> import ftorch as ft, mlx.core as mx
    >>> f = ft.profiler.annotate_function(lambda x: ft.numpy.exp(x), name="activation")
    >>> print(ft.make_graph(f)(mx.ones(2)))
    graph(a:f32[2]) -> f32[2]
      b:f32[2] = exp a  # activation
      return b
    """
    scope_name = name if name is not None else getattr(func, "__name__", "function")

    @functools.wraps(func)
    def annotated(*args: Any, **call_kwargs: Any) -> Any:
        with provenance.scope(scope_name):
            return func(*args, **call_kwargs)

    return annotated
