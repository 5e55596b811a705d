"""Activation and normalisation functions on arrays."""

from __future__ import annotations

__all__: list[str] = []
