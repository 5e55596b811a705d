"""Host callbacks for debugging inside transformed code, as ``jax.debug``:
``print``, ``callback`` and ``breakpoint``.

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

__all__ = ["print", "callback", "breakpoint"]


def _is_array(x: Any) -> bool:
    return isinstance(x, (mx.array, Tracer, np.ndarray))


def callback(fn: Callable[..., Any], *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> None:
    """Call ``fn(*args, **kwargs)`` on the host for its effect, as
    ``jax.debug.callback``: arrays in the arguments (pytrees) arrive as
    NumPy arrays with their values at run time; other leaves are passed as
    they are. Its result is ignored. Under ``vmap`` it is called once per
    example; under ``grad`` it sees the primal values once.

    >>> import ftorch as ft, mlx.core as mx
    >>> seen = []
    >>> _ = ft.vmap(lambda x: ft.debug.callback(seen.append, x) or x)(mx.arange(3.0))
    >>> [float(s) for s in seen]
    [0.0, 1.0, 2.0]
    """
    api_util.check_callable(fn, "debug.callback")
    del partitioned  # one device: every call sees the whole array
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


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with the arrays' run-time
    values, from inside ``jit``, ``vmap``, ``grad`` and loops, as
    ``jax.debug.print``. Under ``vmap`` it prints once per example.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> def body(carry, x):
    ...     ft.debug.print("step {i}: {c}", i=x, c=carry)
    ...     return carry * 2.0, None
    >>> _ = ft.jit(lambda c: lax.scan(body, c, mx.arange(2)))(mx.array(1.0))
    step 0: 1.0
    step 1: 2.0
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a str, got {type(fmt).__name__}")
    try:  # a bad format string fails here, not at run time
        list(string.Formatter().parse(fmt))
    except ValueError as e:
        raise ValueError(f"debug.print: bad format string {fmt!r}: {e}") from None
    def show(*host_args: Any, **host_kwargs: Any) -> None:
        builtins.print(fmt.format(*host_args, **host_kwargs))

    show.__qualname__ = f"print({fmt!r})"
    callback(show, *args, ordered=ordered, **kwargs)


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
