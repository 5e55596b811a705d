"""Global settings: ``ft.config``.

>>> import ftorch as ft
>>> ft.config.log_compiles = True    # log each jit trace, and why it happened
>>> ft.config.log_compiles = False

``FTORCH_LOG_COMPILES=1`` in the environment turns the log on at import.
``ft.config.check_graphs = True`` (or ``FTORCH_CHECK_GRAPHS=1``) typechecks
every graph jit stages or derives (``ftorch.graph.typecheck``), so that a bad
rule or pass is caught at the equation it breaks; the test suite turns it on.
Log records go to the ``ftorch.jit`` logger at WARNING level, so they show
without any logging setup.
"""

from __future__ import annotations

import os


class Config:
    __slots__ = ("log_compiles", "check_graphs")

    def __init__(self) -> None:
        self.log_compiles: bool = _flag("FTORCH_LOG_COMPILES")
        self.check_graphs: bool = _flag("FTORCH_CHECK_GRAPHS")

    def __repr__(self) -> str:
        return f"Config(log_compiles={self.log_compiles}, check_graphs={self.check_graphs})"


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


config = Config()
