"""The stack of active transforms, and the interface of their interpreters.

Each transform is a ``Trace`` subclass (in ``ftorch/transforms/``); while it
runs, a ``MainTrace`` on the stack gives it a level. Tracers from different
levels never mix, which is what rules out perturbation confusion; a tracer
whose main has finished raises ``LeakedTracerError`` on use.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch.core.errors import leak_error
from ftorch.core.mlx_array import hook, unhook
from ftorch.core.tracer import Tracer


class MainTrace:
    """One active transform: its level on the stack and its private data."""

    __slots__ = ("level", "trace_type", "global_data", "active")

    def __init__(self, level: int, trace_type: type, global_data: Any):
        self.level = level
        self.trace_type = trace_type
        self.global_data = global_data
        self.active = True

    def __repr__(self) -> str:
        return f"MainTrace({self.trace_type.__name__}, level={self.level})"


# The active transforms, outermost first. Read it (never rebind it) from
# other modules: Primitive.bind's eager fast path is `if not _stack`.
_stack: list[MainTrace] = []
# The staging transform (jit) being traced, if any: it also takes the ops
# whose arguments no higher transform traces. Rebound by new_main: read it
# as an attribute of this module.
_dynamic: MainTrace | None = None


@contextmanager
def new_main(trace_type: type, global_data: Any = None, dynamic: bool = False):
    """Push a new transform level for the duration of the block.

    ``dynamic=True`` (staging) also routes to it every op whose arguments
    carry no tracer of a higher level, so that constants get staged too.
    The outermost level also hooks ``mx.array`` for tracers for its
    duration (see ``ftorch.core.mlx_array``)."""
    global _dynamic
    main = MainTrace(len(_stack), trace_type, global_data)
    if not _stack:
        hook()
    _stack.append(main)
    previous = _dynamic
    if dynamic:
        _dynamic = main
    try:
        yield main
    finally:
        main.active = False
        _dynamic = previous
        _stack.pop()
        if not _stack:
            unhook()


@contextmanager
def eager_constants():
    """For the duration of the block, ops whose arguments carry no tracer
    run at once on concrete values even while a function is being staged
    (``ft.ensure_compile_time_eval``); ops on traced values are staged as
    before."""
    global _dynamic
    previous, _dynamic = _dynamic, None
    try:
        yield
    finally:
        _dynamic = previous


def check_no_tracers(args: tuple) -> None:
    """Raise ``LeakedTracerError`` if one of ``args`` is a tracer whose
    transform has finished."""
    for a in args:
        if isinstance(a, Tracer) and not a._trace.main.active:
            raise leak_error(a._trace.main)


class Trace:
    """The interpreter of one transform at one level."""

    __slots__ = ("main",)
    transform = "a transform"  # how errors name it: "ft.vmap", ...

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val: Any) -> Tracer:  # a value that does not depend on this transform
        raise NotImplementedError

    lift = pure  # a tracer of a lower level

    def full_raise(self, val: Any) -> Tracer:
        if not isinstance(val, Tracer):
            # NumPy constants become MLX arrays so rules never mix the two.
            if not isinstance(val, (mx.array, bool, int, float, complex)):
                if not isinstance(val, (np.ndarray, np.generic)):
                    raise TypeError(f"an operand must be an array or a Python scalar, got "
                                    f"{type(val).__name__}: {val!r}")
                val = mx.array(val)
            elif type(val) is int and not -2**63 <= val < 2**63:  # MLX: std::bad_cast
                raise OverflowError(f"the Python int {val} does not fit in int64")
            return self.pure(val)
        main = val._trace.main
        if main is self.main:
            return val
        if not main.active:
            raise leak_error(main)
        if main.level < self.main.level:
            return self.lift(val)
        raise leak_error(main)

    def process_primitive(self, prim: Any, tracers: list, params: dict):
        """Interpret ``prim`` (a ``Primitive``) on this level's tracers."""
        raise NotImplementedError
