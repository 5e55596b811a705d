"""What the distributions of ``ftorch.scipy.stats`` share: promoting their
arguments as JAX does (one floating dtype, integers and booleans to float32)
and the standardised variable ``(x - loc) / scale``."""

from __future__ import annotations

from typing import Any

import ftorch.numpy as fnp
from ftorch.scipy.special import _inexact as promote

__all__ = ["promote", "standardized", "nan_unless", "minus_inf_where", "clamp"]


def standardized(fname: str, x: Any, loc: Any, scale: Any, *params: Any) -> list[Any]:
    """``[(x - loc) / scale, scale, *params]``, all promoted together."""
    x, loc, scale, *params = promote(fname, x, loc, scale, *params)
    return [fnp.divide(fnp.subtract(x, loc), scale), scale, *params]


def nan_unless(ok: Any, value: Any) -> Any:
    """``value`` where ``ok``, NaN elsewhere (parameters outside their range)."""
    return fnp.where(ok, value, fnp.nan)


def minus_inf_where(outside: Any, value: Any) -> Any:
    """``value``, with ``-inf`` where ``outside`` (log-densities off the support)."""
    return fnp.where(outside, -fnp.inf, value)


def clamp(low: float, x: Any, high: float) -> Any:
    """``x`` clipped to ``[low, high]``, with derivative 0 at the bounds as well as
    beyond them (as ``lax.clamp`` in JAX): a distribution function's infinite slope at
    the edge of its support then gives a zero gradient, not ``inf``."""
    return fnp.where((x > low) & (x < high), x, fnp.clip(fnp.stop_gradient(x), low, high))
