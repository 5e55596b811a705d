"""``jax.nn.initializers``, with JAX's names, parameters and defaults: each
factory returns ``init(key, shape, dtype=float32) -> array``, drawing from
an explicit ``ftorch.random`` key.

This is the namespace to use for code written for JAX (Flax and Equinox
layouts: a dense kernel is ``(in, out)``, so fans are read from
``in_axis=-2`` and ``out_axis=-1``). ``ftorch.nn.init`` is mlx.nn's
namesake instead (``normal(mean, std)``, ``glorot_uniform(gain)``, fans of
mlx.nn's ``(out, in)`` weights), which ``ftorch.nn``'s layers use.

>>> import ftorch.nn.initializers as jinit, ftorch.random as random
>>> w = jinit.glorot_uniform()(random.key(0), (32, 64))
>>> w.shape, bool(abs(w).max() <= (6 / (32 + 64)) ** 0.5)
((32, 64), True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import random
from ftorch.dtypes import DTypeLike
from ftorch.nn.init import _DISTRIBUTIONS, _MODES, _TRUNCATED_STD, _args
from ftorch.nn.init import orthogonal as _mlx_orthogonal

__all__ = [
    "Initializer", "constant", "zeros", "ones", "uniform", "normal", "truncated_normal",
    "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal",
    "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal", "lecun_uniform",
    "lecun_normal", "orthogonal", "delta_orthogonal",
]


class Initializer(Protocol):
    """``init(key, shape, dtype=float32) -> array``: what every factory returns."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: DTypeLike | None = None
                 ) -> Any: ...


def _dtype(dtype: DTypeLike | None, default: DTypeLike | None) -> DTypeLike:
    return dtype if dtype is not None else (default if default is not None else mx.float32)


def constant(value: Any, dtype: DTypeLike | None = None) -> Initializer:
    """An initialiser filling the array with ``value`` (the key is unused).

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> jinit.constant(0.5)(random.key(0), (2,)).tolist()
    [0.5, 0.5]
    """
    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "constant", needs_key=False)
        return fnp.full(shape, value, dt)

    return init


def zeros(key: Any, shape: Sequence[int], dtype: DTypeLike | None = None) -> Any:
    """Zeros of ``shape`` (an initialiser itself; the key is unused).

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> jinit.zeros(random.key(0), (2,)).tolist()
    [0.0, 0.0]
    """
    shape, dt = _args(key, shape, _dtype(dtype, None), "zeros", needs_key=False)
    return mx.zeros(shape, dt)


def ones(key: Any, shape: Sequence[int], dtype: DTypeLike | None = None) -> Any:
    """Ones of ``shape`` (an initialiser itself; the key is unused).

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> jinit.ones(random.key(0), (2,)).tolist()
    [1.0, 1.0]
    """
    shape, dt = _args(key, shape, _dtype(dtype, None), "ones", needs_key=False)
    return mx.ones(shape, dt)


def uniform(scale: float = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """Uniform samples on ``[0, scale)``.

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> w = jinit.uniform(2.0)(random.key(0), (100,))
    >>> bool((w >= 0).all() and (w < 2).all())
    True
    """
    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "uniform")
        return random.uniform(key, shape, dt) * scale

    return init


def normal(stddev: float = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """Normal samples of mean 0 and standard deviation ``stddev``.

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> round(jinit.normal(2.0)(random.key(0), (20000,)).std().item(), 1)
    2.0
    """
    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "normal")
        return random.normal(key, shape, dt) * stddev

    return init


def truncated_normal(stddev: float = 1e-2, dtype: DTypeLike | None = None,
                     lower: float = -2.0, upper: float = 2.0) -> Initializer:
    """``stddev`` times a standard normal truncated to ``[lower, upper]``
    (not rescaled: the spread is below ``stddev``, as in JAX).

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> float(abs(jinit.truncated_normal(1.0)(random.key(0), (1000,))).max()) <= 2.0
    True
    """
    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "truncated_normal")
        return random.truncated_normal(key, lower, upper, shape, dt) * stddev

    return init


def _axes(axis: int | Sequence[int], ndim: int, what: str, shape: tuple[int, ...]) -> list[int]:
    axes = [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"variance_scaling: {what} {a} is out of range for a shape of "
                             f"{ndim} dimensions {shape}")
    return [a % ndim for a in axes]


def _fans(shape: tuple[int, ...], in_axis, out_axis, batch_axis) -> tuple[float, float]:
    """``(fan_in, fan_out)`` as JAX counts them: the named axes' sizes times the
    receptive field (every axis that is not an in, out or batch axis)."""
    ndim = len(shape)
    if ndim < 1:
        raise ValueError(f"variance_scaling: a 0-d shape {shape} has no fans")
    ins, outs = _axes(in_axis, ndim, "in_axis", shape), _axes(out_axis, ndim, "out_axis", shape)
    batch = _axes(batch_axis, ndim, "batch_axis", shape)
    receptive = math.prod(s for i, s in enumerate(shape) if i not in (*ins, *outs, *batch))
    return (math.prod(shape[i] for i in ins) * receptive,
            math.prod(shape[i] for i in outs) * receptive)


def variance_scaling(scale: float, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: DTypeLike | None = None
                     ) -> Initializer:
    """Samples of variance ``scale / n``, ``n`` being the fan ``mode`` names
    (``"fan_in"``, ``"fan_out"``, ``"fan_avg"``, ``"fan_geo_avg"``), as
    ``jax.nn.initializers.variance_scaling``: ``distribution`` is
    ``"truncated_normal"`` (truncated to two standard deviations and
    rescaled), ``"normal"`` or ``"uniform"``.

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> w = jinit.variance_scaling(2.0, "fan_in", "normal")(random.key(0), (800, 200))
    >>> round(w.var().item() * 800, 1)
    2.0
    """
    if mode not in _MODES:
        raise ValueError(f"variance_scaling: mode must be one of {_MODES}, got {mode!r}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"variance_scaling: distribution must be one of {_DISTRIBUTIONS}, "
                         f"got {distribution!r}")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "variance_scaling")
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
             "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]
        variance = scale / max(n, 1)
        if distribution == "truncated_normal":
            z = random.truncated_normal(key, -2.0, 2.0, shape, dt)
            return z * (math.sqrt(variance) / _TRUNCATED_STD)
        if distribution == "normal":
            return random.normal(key, shape, dt) * math.sqrt(variance)
        return random.uniform(key, shape, dt, -1.0, 1.0) * math.sqrt(3 * variance)

    return init


def _preset(name: str, scale: float, mode: str, distribution: str, doc: str):
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (), dtype: DTypeLike | None = None
                ) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"{doc}: ``variance_scaling({scale}, {mode!r}, {distribution!r})``, as "
        f"``jax.nn.initializers.{name}``.\n\n"
        f"    >>> import ftorch.nn.initializers as jinit, ftorch.random as random\n"
        f"    >>> jinit.{name}()(random.key(0), (3, 4)).shape\n"
        f"    (3, 4)\n")
    return factory


glorot_uniform = _preset("glorot_uniform", 1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform")
glorot_normal = _preset("glorot_normal", 1.0, "fan_avg", "truncated_normal",
                        "Glorot (Xavier) normal")
lecun_uniform = _preset("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform")
lecun_normal = _preset("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun normal")
he_uniform = _preset("he_uniform", 2.0, "fan_in", "uniform", "He (Kaiming) uniform")
he_normal = _preset("he_normal", 2.0, "fan_in", "truncated_normal", "He (Kaiming) normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: DTypeLike | None = None
               ) -> Initializer:
    """``scale`` times a uniformly random matrix with orthonormal columns (or
    rows, whichever are fewer), the columns along ``column_axis`` and the
    other axes flattened into rows, as ``jax.nn.initializers.orthogonal``.
    The QR runs on the CPU, eagerly: the key must be concrete.

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random, mlx.core as mx
    >>> w = jinit.orthogonal()(random.key(0), (5, 3))
    >>> bool(mx.allclose(w.T @ w, mx.eye(3), atol=1e-5))
    True
    """
    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "orthogonal")
        if len(shape) < 2:
            raise ValueError(f"orthogonal: shape must have at least 2 dimensions, got {shape}")
        if not -len(shape) <= column_axis < len(shape):
            raise ValueError(f"orthogonal: column_axis {column_axis} is out of range for "
                             f"the shape {shape}")
        cols = shape[column_axis]
        rows = math.prod(shape) // cols if cols else 0
        # mlx.nn's orthogonal of the (cols, rows) matrix is this one's transpose.
        q = _mlx_orthogonal(scale)(key, (cols, rows), dt).T
        others = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        return mx.moveaxis(q.reshape(*others, cols), -1, column_axis)

    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1,
                     dtype: DTypeLike | None = None) -> Initializer:
    """A convolution kernel ``(*window, in, out)`` (1 to 3 spatial axes) that
    is zero but at the window's centre, where it is an orthogonal
    ``(in, out)`` matrix (``in <= out``), as
    ``jax.nn.initializers.delta_orthogonal`` (Xiao et al., 2018).

    >>> import ftorch.nn.initializers as jinit, ftorch.random as random
    >>> w = jinit.delta_orthogonal()(random.key(0), (3, 3, 2, 4))
    >>> float(abs(w[0, 0]).max()), w[1, 1].shape
    (0.0, (2, 4))
    """
    def init(key: Any, shape: Sequence[int], dtype: DTypeLike | None = dtype) -> Any:
        shape, dt = _args(key, shape, _dtype(dtype, None), "delta_orthogonal")
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"delta_orthogonal: shape must have 3, 4 or 5 dimensions "
                             f"(*window, in, out), got {shape}")
        if shape[-2] > shape[-1]:
            raise ValueError(f"delta_orthogonal: the in axis ({shape[-2]}) must not be "
                             f"larger than the out axis ({shape[-1]}) of {shape}")
        middle = tuple(s // 2 for s in shape[:-2])
        centre = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        w = mx.zeros(shape, dt)
        w[middle] = centre
        return w

    return init
