"""Where an operation came from: the user's source line, the named scopes
around it (``ft.named_scope``), and, for operations a transform made, which
primitive's rule made them and in which pass.

Staging records a ``Provenance`` on every equation it appends; graph
transforms re-stage a graph equation by equation with that equation's
provenance as the ``context``, so a derivative's equations point back at
the line that wrote the primal operation. The profiler groups times by
scope, ``make_graph`` prints scopes, and the NaN checks
(``ft.config.debug_nans``) name the line, the scope and the rule.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The names of the active ``ft.named_scope`` blocks, outermost first.
_scopes: list[str] = []
# The provenance of what is being made now, when a transform re-stages a
# graph or runs a rule (None: find it from the Python stack).
context: Provenance | None = None
# Whether eager transforms record provenance too (the NaN checks are on):
# staging always does; eager autodiff only pays for it when asked.
recording = False


class Provenance:
    """The source of one operation: ``filename``:``lineno`` in ``function``
    (the innermost frame outside ftorch), the ``scope`` names around it,
    and ``rule``, e.g. ``"the VJP rule of log"``, when a transform's rule
    made it (``stage`` is then ``"backward"`` or ``"forward"``)."""

    __slots__ = ("filename", "lineno", "function", "scope", "rule", "stage")

    def __init__(self, filename: str | None, lineno: int, function: str,
                 scope: tuple[str, ...] = (), rule: str | None = None,
                 stage: str | None = None):
        self.filename = filename
        self.lineno = lineno
        self.function = function
        self.scope = scope
        self.rule = rule
        self.stage = stage

    def in_rule(self, rule: str, stage: str | None) -> Provenance:
        """The same source, for an operation a transform's ``rule`` made."""
        return Provenance(self.filename, self.lineno, self.function, self.scope, rule, stage)

    @property
    def line(self) -> str:
        """The source text of the line, if it can be read."""
        return linecache.getline(self.filename, self.lineno).strip() if self.filename else ""

    @property
    def scope_name(self) -> str:
        return "/".join(self.scope)

    def location(self) -> str:
        """``file:line (source)``, as tracebacks show it."""
        if self.filename is None:
            return "an unknown place"
        line = self.line
        return f"{self.filename}:{self.lineno}" + (f" ({line})" if line else "")

    def __repr__(self) -> str:
        extra = f", scope={self.scope_name!r}" if self.scope else ""
        extra += f", rule={self.rule!r}" if self.rule else ""
        return f"Provenance({self.filename}:{self.lineno}{extra})"


# id(code object) -> whether it belongs to ftorch, the stack walk's one test
# (keyed by id: a code object's own hash digests its contents at each call);
# the code objects are kept, so that their ids are never reused.
_inside: dict[int, bool] = {}
_kept: list = []
# The last provenance made from the stack, and what it was made from (code
# object, line, scopes' version): consecutive operations of one line share it.
_last: list = [None, 0, -1, None]
# Bumped whenever the scopes change.
_scopes_version = 0


def here() -> Provenance:
    """The provenance of an operation made now: the ``context`` when a
    transform set one, else the innermost frame outside ftorch and the
    active named scopes."""
    if context is not None:
        return context
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        inside = _inside.get(id(code))
        if inside is None:
            inside = _inside[id(code)] = os.path.abspath(code.co_filename).startswith(
                _PACKAGE_DIR + os.sep)
            _kept.append(code)
        if not inside:
            lineno = frame.f_lineno
            last = _last
            if last[0] is code and last[1] == lineno and last[2] == _scopes_version:
                return last[3]
            made = Provenance(code.co_filename, lineno, code.co_name, tuple(_scopes))
            last[:] = code, lineno, _scopes_version, made
            return made
        frame = frame.f_back
    return Provenance(None, 0, "", tuple(_scopes))


def latest() -> Provenance | None:
    """The provenance ``here`` last found from the stack: that of the
    equation staging just made, for transforms that trace above it."""
    return _last[3]


@contextmanager
def scope(name: str) -> Iterator[None]:
    """The block's operations are in the named scope ``name``."""
    global _scopes_version
    _scopes.append(name)
    _scopes_version += 1
    try:
        yield
    finally:
        _scopes.pop()
        _scopes_version += 1


def current_scope() -> tuple[str, ...]:
    """The names of the active scopes, outermost first."""
    return context.scope if context is not None else tuple(_scopes)

