"""Neural-network building blocks (stateless)."""

from ftorch.nn import functional

__all__ = ["functional"]
