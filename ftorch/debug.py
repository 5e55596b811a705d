"""Host callbacks for debugging inside transformed code, as ``jax.debug``:
``print``, ``log``, ``callback`` and ``breakpoint``.

Each binds the ``debug_callback`` primitive (``ftorch.primitives.callback``),
so it works inside ``jit``, ``vmap``, ``grad`` and loops: ``jit`` splits
its compiled graph around the call and runs it on concrete values at each
call; under ``vmap`` the callback runs once per example, in order; under
``grad`` and ``jvp`` it sees the primal values, in the forward pass. The
calls keep their program order, so ``ordered=True`` is accepted and always
holds.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> @ft.jit
... def f(x):
...     ft.debug.print("x = {}", x)
...     return fnp.sum(x ** 2)
>>> _ = f(mx.array([1.0, 2.0]))
x = [1. 2.]
"""

from __future__ import annotations

import builtins
import logging
import pdb
import string
import sys
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import api_util, tree
from ftorch.core import Tracer
from ftorch.primitives.callback import debug_callback_p

__all__ = ["print", "log", "callback", "breakpoint"]

logger = logging.getLogger("ftorch.debug")


def _is_array(x: Any) -> bool:
    return isinstance(x, (mx.array, Tracer, np.ndarray))


def callback(fn: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Call ``fn(*args, **kwargs)`` on the host for its effect, as
    ``jax.debug.callback``: arrays in the arguments (pytrees) arrive as
    NumPy arrays with their values at run time; other leaves are passed as
    they are. Its result is ignored. Under ``vmap`` it is called once per
    example; under ``grad`` it sees the primal values once. Without ``fn``,
    it returns the call with the options bound (JAX's two-call form:
    ``callback(ordered=True)(fn, x)``).

    >>> import ftorch as ft, mlx.core as mx
    >>> seen = []
    >>> _ = ft.vmap(lambda x: ft.debug.callback(seen.append, x) or x)(mx.arange(3.0))
    >>> [float(s) for s in seen]
    [0.0, 1.0, 2.0]
    """
    del partitioned  # one device: every call sees the whole array
    if fn is None:
        if args or kwargs:
            raise TypeError("debug.callback: the two-call form takes the options only, then "
                            "(fn, *args, **kwargs)")
        return lambda fn, *args, **kwargs: callback(fn, *args, ordered=ordered, **kwargs)
    api_util.check_callable(fn, "debug.callback")
    leaves, treedef = tree.flatten((args, kwargs))
    arrays = [i for i, leaf in enumerate(leaves) if _is_array(leaf)]

    def on_host(host_arrays: list) -> None:
        filled = list(leaves)
        for i, value in zip(arrays, host_arrays):
            filled[i] = value
        call_args, call_kwargs = tree.unflatten(treedef, filled)
        fn(*call_args, **call_kwargs)

    on_host.__qualname__ = getattr(fn, "__qualname__", repr(fn))  # as graphs print it
    debug_callback_p.bind(*[leaves[i] for i in arrays], callback=on_host, ordered=ordered)
    return None


def print(fmt: str | None = None, *args: Any, ordered: bool = False,  # noqa: A001
          partitioned: bool = False, skip_format_check: bool = False,
          **kwargs: Any) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` with the arrays' run-time
    values, from inside ``jit``, ``vmap``, ``grad`` and loops, as
    ``jax.debug.print``. Under ``vmap`` it prints once per example. With
    ``skip_format_check``, a ``fmt`` without placeholders is printed
    followed by the arguments;
    NumPy's print options are those in force where ``print`` was called.
    Arguments that do not fit ``fmt`` (missing, unused) are an error at
    once. Without
    ``fmt``, it returns the call with the options bound
    (``print(ordered=True)("x={x}", x=x)``).

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> def body(carry, x):
    ...     ft.debug.print("step {i}: {c}", i=x, c=carry)
    ...     return carry * 2.0, None
    >>> _ = ft.jit(lambda c: lax.scan(body, c, mx.arange(2)))(mx.array(1.0))
    step 0: 1.0
    step 1: 2.0
    """
    return _formatted(builtins.print, "debug.print", fmt, args, kwargs, ordered,
                      skip_format_check)


def log(fmt: str | None = None, *args: Any, ordered: bool = False,
        partitioned: bool = False, skip_format_check: bool = False,
        **kwargs: Any) -> Callable[..., None] | None:
    """As ``print``, but to the ``ftorch.debug`` logger at INFO level, the
    record carrying the caller's file and line, as ``jax.debug.log``.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.jit(lambda x: ft.debug.log("x = {}", x) or x)(mx.array(1.0)).item()
    1.0
    """
    frame = sys._getframe(1)
    where = (frame.f_code.co_filename, frame.f_lineno)

    def emit(message: str) -> None:
        record = logger.makeRecord(logger.name, logging.INFO, where[0], where[1], message,
                                   (), None)
        logger.handle(record)

    return _formatted(emit, "debug.log", fmt, args, kwargs, ordered, skip_format_check)


def _formatted(emit: Callable[[str], None], fname: str, fmt: str | None, args: tuple,
               kwargs: dict, ordered: bool, skip_format_check: bool
               ) -> Callable[..., None] | None:
    """``emit`` the run-time formatting of ``fmt`` (``print`` and ``log``)."""
    if fmt is None:
        if args or kwargs:
            raise TypeError(f"{fname}: the two-call form takes the options only, then "
                            "(fmt, *args, **kwargs)")
        return lambda fmt, *args, **kwargs: _formatted(emit, fname, fmt, args, kwargs,
                                                       ordered, skip_format_check)
    if not isinstance(fmt, str):
        raise TypeError(f"{fname}: fmt must be a str, got {type(fmt).__name__}")
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(fmt)]
    except ValueError as e:
        raise ValueError(f"{fname}: bad format string {fmt!r}: {e}") from None
    placeholders = any(field is not None for field in fields)
    if not skip_format_check:
        _check_fits(fname, fmt, fields, placeholders, args, kwargs)
    options = np.get_printoptions()

    def show(*host_args: Any, **host_kwargs: Any) -> None:
        with np.printoptions(**options):
            if placeholders:
                emit(fmt.format(*host_args, **host_kwargs))
            else:
                emit(" ".join([fmt, *map(str, host_args)]))

    show.__qualname__ = f"{fname.split('.')[-1]}({fmt!r})"
    callback(show, *args, ordered=ordered, **kwargs)
    return None


def _check_fits(fname: str, fmt: str, fields: list, placeholders: bool, args: tuple,
                kwargs: dict) -> None:
    """Raise now if the arguments do not fit ``fmt`` (not at run time)."""
    stand_ins = [_Stand() for _ in args]
    try:
        fmt.format(*stand_ins, **{k: _Stand() for k in kwargs})
    except (IndexError, KeyError) as e:
        raise ValueError(f"{fname}: {fmt!r} asks for {e}, not among the arguments") from None
    names = {f.split(".")[0].split("[")[0] for f in fields if f}
    unused = sorted(set(kwargs) - names)
    if unused:
        raise ValueError(f"{fname}: keyword arguments {unused} are not used by {fmt!r} (an "
                         "f-string formats too early: pass a plain string and the values)")
    unused_args = [i for i, stand in enumerate(stand_ins) if not stand.used]
    if unused_args:
        raise ValueError(f"{fname}: positional arguments {unused_args} are not used by "
                         f"{fmt!r} (skip_format_check=True prints them after it)")


class _Stand:
    """Stands for an argument while a format is checked (any format spec)."""

    def __init__(self) -> None:
        self.used = False

    def __format__(self, spec: str) -> str:
        self.used = True
        return ""

    def __getattr__(self, name: str) -> _Stand:
        self.used = True
        return self

    def __getitem__(self, key: Any) -> _Stand:
        self.used = True
        return self


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False,
               **kwargs: Any) -> None:
    """Stop in Python's debugger (``pdb``) when this point runs, with the
    caller's local arrays holding their run-time values (NumPy arrays), as
    ``jax.debug.breakpoint``; inside ``jit``, ``vmap`` (once per example),
    ``grad`` and loops. Type ``c`` to continue. Only the calling frame's
    locals are captured: ``num_frames`` and ``filter_frames`` are accepted
    for JAX code; ``backend`` must be ``None`` or ``"cli"``.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.debug.breakpoint  # doctest: +ELLIPSIS
    <function breakpoint at ...>
    """
    if backend not in (None, "cli"):
        raise ValueError(f"debug.breakpoint: backend must be None or 'cli' (pdb), got "
                         f"{backend!r}")
    del filter_frames, num_frames, kwargs
    frame = sys._getframe(1)
    names = [k for k, v in frame.f_locals.items() if _is_array(v)]
    others = {k: v for k, v in frame.f_locals.items() if k not in names}
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    global_vars = frame.f_globals

    def stop(*values: np.ndarray) -> None:
        local_vars = dict(others)
        local_vars.update(zip(names, values))
        debugger = pdb.Pdb()
        debugger.message(f"ft.debug.breakpoint at {where}; arrays: {', '.join(names) or 'none'}"
                         "; 'c' continues")
        debugger.run("pass", global_vars, local_vars)

    callback(stop, *[frame.f_locals[k] for k in names], ordered=ordered)
