"""Reductions along axes, and scans."""

from __future__ import annotations

from typing import Any, Sequence

import mlx.core as mx

from ftorch import numpy as fnp
from ftorch.core import Primitive
from ftorch.primitives._rules import shape_of

__all__ = ["sum"]

Axis = int | Sequence[int] | None


def normalize_axes(axis: Axis, ndim: int, fname: str) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative axes; a clear error when out of range."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int):
            raise TypeError(f"{fname}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise ValueError(f"{fname}: axis {a} is out of range for an array of ndim {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def expand_reduced(ct: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """Broadcast a reduction's cotangent back to the input ``shape``."""
    if not keepdims and axes:
        ct = fnp.reshape(ct, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return fnp.broadcast_to(ct, shape)


sum_p = Primitive("sum", lambda x, axes, keepdims: mx.sum(x, axis=axes, keepdims=keepdims))
sum_p.jvp = lambda primals, tangents, axes, keepdims: (
    sum_p.bind(*primals, axes=axes, keepdims=keepdims),
    sum_p.bind(*tangents, axes=axes, keepdims=keepdims))
sum_p.vjp = lambda ct, out, x, axes, keepdims: (
    expand_reduced(ct, shape_of(x), axes, keepdims),)


def sum(x: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """Sum over ``axis`` (all axes when ``None``), as ``numpy.sum``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.sum(mx.ones((2, 3)), axis=1).tolist()
    [3.0, 3.0]
    """
    x = fnp.asarray(x)
    return sum_p.bind(x, axes=normalize_axes(axis, x.ndim, "sum"), keepdims=keepdims)
