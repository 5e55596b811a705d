"""Indexing: ``x[idx]``, take, take_along_axis, and functional updates."""

from __future__ import annotations

__all__: list[str] = []
