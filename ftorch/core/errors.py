"""Errors that name what went wrong and where: a traced value used after its
transform ended, a Python value MLX cannot make an array of, and the user's
line (the innermost frame outside ftorch) that error messages point at."""

from __future__ import annotations

import os
import traceback
from typing import Any


class LeakedTracerError(Exception):
    """A traced value was used after the transform that made it had finished."""


def leak_error(main: Any) -> LeakedTracerError:
    """The error for a value traced by ``main`` (a ``MainTrace`` that has
    finished) being used again."""
    return LeakedTracerError(
        f"a value traced by {main.trace_type.transform} (level {main.level}) was used after "
        "that transform finished. Return traced values from the transformed function "
        "instead of storing them in globals or closures."
    )


# ftorch's own files (this file is ftorch/core/errors.py).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame(tb: Any = None) -> str:
    """``file:line (source)`` of the innermost frame outside ftorch: where the
    user's code is (in the traceback ``tb`` if given, else the current stack).

    >>> user_frame().startswith("<doctest")
    True
    """
    frames = traceback.extract_tb(tb) if tb is not None else traceback.extract_stack()
    for frame in reversed(frames):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR + os.sep):
            return f"{frame.filename}:{frame.lineno} ({frame.line})"
    return "an unknown place"


def conversion_error(x: Any, name: str, error: Exception) -> Exception:
    """Why MLX could not make an array of the Python value ``x`` (the
    argument called ``name``; ``error`` is what MLX raised).

    >>> print(conversion_error([1, 2**70], "x", OverflowError()))
    x: the Python int 1180591620717411303424 does not fit in int64, MLX's widest integer; ...
    """
    def ints(v):
        if isinstance(v, (list, tuple)):
            for item in v:
                yield from ints(item)
        elif type(v) is int:
            yield v

    big = [v for v in ints(x) if not -2**63 <= v < 2**63]
    if big:
        return OverflowError(f"{name}: the Python int {big[0]} does not fit in int64, MLX's "
                             "widest integer; pass it as a float, or split it")
    text = str(error).removeprefix("[array] ")
    return ValueError(f"{name}: cannot make an array of {type(x).__name__} {x!r:.80}: {text} "
                      "(nested lists must be rectangular, of numbers or arrays)")
