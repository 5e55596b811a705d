"""Linear algebra: matmul and the contractions built on it."""

from __future__ import annotations

__all__: list[str] = []
