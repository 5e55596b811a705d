"""Moved to ``ftorch.api_util``: this name stays only until ``jit.py``
imports from there."""

from ftorch.api_util import check_callable, flatten_fun

__all__ = ["check_callable", "flatten_fun"]
