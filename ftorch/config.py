"""Global settings: ``ft.config``.

>>> import ftorch as ft
>>> ft.config.log_compiles = True    # log each jit trace, and why it happened
>>> ft.config.log_compiles = False

``FTORCH_LOG_COMPILES=1`` in the environment turns the log on at import.
Log records go to the ``ftorch.jit`` logger at WARNING level, so they show
without any logging setup.
"""

from __future__ import annotations

import os


class Config:
    __slots__ = ("log_compiles",)

    def __init__(self) -> None:
        self.log_compiles: bool = os.environ.get("FTORCH_LOG_COMPILES", "") not in ("", "0")

    def __repr__(self) -> str:
        return f"Config(log_compiles={self.log_compiles})"


config = Config()
