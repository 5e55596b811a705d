"""Parameter initialisers, as ``mlx.nn.init``: each factory returns
``init(key, shape, dtype=...) -> array``, drawing from an explicit
``ftorch.random`` key (the same key gives the same array). For code written
for JAX, ``ftorch.nn.initializers`` has ``jax.nn.initializers``' names and
defaults (``normal(stddev=0.01)``, fans of ``(in, out)`` kernels).

The names, parameters and default values follow ``mlx.nn.init`` where it
has them (``constant``, ``normal``, ``uniform``, ``identity``,
``glorot_*``, ``he_*`` with ``mode`` and ``gain``, ``orthogonal`` with
``gain``), and JAX elsewhere (``zeros``, ``ones``, ``truncated_normal``,
``lecun_*``, ``variance_scaling``). Unlike mlx.nn's, whose initialisers take
an array and its dtype from the factory, ours take a shape and a key; the
factory's ``dtype`` is the default of the ``init`` function's.

Fans follow mlx.nn's weight layouts, ``(out, in)`` for a linear layer and
``(out, *kernel, in)`` for a convolution:
``fan_in = shape[-1] * prod(shape[1:-1])`` and
``fan_out = shape[0] * prod(shape[1:-1])``.

>>> import ftorch.nn.init as init, ftorch.random as random
>>> w = init.glorot_uniform()(random.key(0), (64, 32))
>>> w.shape, w.dtype, bool(abs(w).max() <= (6 / (64 + 32)) ** 0.5)
((64, 32), mlx.core.float32, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch import random
from ftorch.core import Tracer, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.memory import check_fits
from ftorch.primitives.creation import static_number, static_shape
from ftorch.random import _check_key

__all__ = [
    "Initializer", "constant", "zeros", "ones", "identity", "uniform", "normal",
    "truncated_normal", "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
    "xavier_normal", "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal",
    "lecun_uniform", "lecun_normal", "orthogonal", "fans",
]

#: ``init(key, shape, dtype) -> array``: what every factory here returns.
Initializer = Callable[..., Any]

# The standard deviation of a standard normal truncated to (-2, 2): a
# truncated normal is divided by it to have the variance asked for.
_TRUNCATED_STD = 0.87962566103423978

_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def _float_dtype(dtype: DTypeLike, fname: str) -> mx.Dtype:
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    if not is_floating(dtype):
        raise TypeError(f"{fname}: dtype must be a floating dtype, got {dtype}")
    return dtype


def _args(key: Any, shape: Sequence[int], dtype: DTypeLike, fname: str,
          needs_key: bool = True) -> tuple[tuple[int, ...], mx.Dtype]:
    """The checked ``shape`` and ``dtype`` of an ``init`` call (and its key);
    a ``MemoryError`` naming the initialiser if the array would not fit in
    the device's memory (MLX would crash allocating it)."""
    if needs_key:
        _check_key(key, fname)
    shape, dtype = static_shape(shape, fname), _float_dtype(dtype, fname)
    check_fits(shape, dtype, fname)
    return shape, dtype


def fans(shape: Sequence[int]) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of ``shape`` in mlx.nn's layouts
    (``(out, in)``, or ``(out, *kernel, in)`` for a convolution), as
    ``mlx.nn.init``: the receptive field ``prod(shape[1:-1])`` times
    ``shape[-1]`` and ``shape[0]``.

    >>> import ftorch.nn.init as init
    >>> init.fans((16, 3, 3, 8))
    (72, 144)
    """
    shape = static_shape(shape, "fans")
    if len(shape) < 2:
        raise ValueError(f"fans: shape must have at least 2 dimensions ((out, in) or "
                         f"(out, *kernel, in)), got {shape}")
    receptive = math.prod(shape[1:-1])
    return shape[-1] * receptive, shape[0] * receptive


# ----------------------------------------------------------------------------
# Constants
# ----------------------------------------------------------------------------


def constant(value: Any, dtype: DTypeLike = mx.float32) -> Initializer:
    """An initialiser filling the array with ``value`` (the key is not used).

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> init.constant(0.5)(random.key(0), (2,)).tolist()
    [0.5, 0.5]
    """
    value = static_number(value, "constant", "value")
    default = _float_dtype(dtype, "constant")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> mx.array:
        shape, dtype = _args(key, shape, dtype, "constant", needs_key=False)
        return fnp.full(shape, value, dtype)

    return init


def zeros(key: Any, shape: Sequence[int], dtype: DTypeLike = mx.float32) -> mx.array:
    """Zeros of ``shape`` (an initialiser itself, as ``jax.nn.initializers.zeros``;
    the key is not used).

    >>> import ftorch.nn.init as init
    >>> init.zeros(None, (2,)).tolist()
    [0.0, 0.0]
    """
    shape, dtype = _args(key, shape, dtype, "zeros", needs_key=False)
    return fnp.zeros(shape, dtype)


def ones(key: Any, shape: Sequence[int], dtype: DTypeLike = mx.float32) -> mx.array:
    """Ones of ``shape`` (an initialiser itself, as ``jax.nn.initializers.ones``;
    the key is not used).

    >>> import ftorch.nn.init as init
    >>> init.ones(None, (2,)).tolist()
    [1.0, 1.0]
    """
    shape, dtype = _args(key, shape, dtype, "ones", needs_key=False)
    return fnp.ones(shape, dtype)


def identity(dtype: DTypeLike = mx.float32) -> Initializer:
    """An initialiser giving the identity matrix of a square 2-d ``shape``,
    as ``mlx.nn.init.identity`` (the key is not used).

    >>> import ftorch.nn.init as init
    >>> init.identity()(None, (2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    default = _float_dtype(dtype, "identity")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> mx.array:
        shape, dtype = _args(key, shape, dtype, "identity", needs_key=False)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"identity: shape must be square and 2-d, got {shape}")
        return fnp.eye(shape[0], dtype=dtype)

    return init


# ----------------------------------------------------------------------------
# Distributions
# ----------------------------------------------------------------------------


def uniform(low: float = 0.0, high: float = 1.0, dtype: DTypeLike = mx.float32) -> Initializer:
    """An initialiser drawing uniformly from ``[low, high)``, as
    ``mlx.nn.init.uniform`` (jax.nn.initializers.uniform(scale) is
    ``uniform(0, scale)`` here).

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.uniform(-1.0, 1.0)(random.key(0), (1000,))
    >>> bool((w >= -1).all() and (w < 1).all()), abs(w.mean().item()) < 0.1
    (True, True)
    """
    low = static_number(low, "uniform", "low")
    high = static_number(high, "uniform", "high")
    if not low <= high:
        raise ValueError(f"uniform: low must not exceed high, got low={low}, high={high}")
    default = _float_dtype(dtype, "uniform")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> Any:
        shape, dtype = _args(key, shape, dtype, "uniform")
        return _uniform(key, shape, dtype, low, high)

    return init


def _uniform(key: Any, shape: tuple[int, ...], dtype: mx.Dtype, low: float, high: float) -> Any:
    """Uniform samples on ``[low, high)`` in ``dtype``: the bounds are
    applied as Python numbers, so a low-precision dtype stays
    (``random.uniform``'s array bounds would promote it to float32)."""
    u = random.uniform(key, shape, dtype)
    return fnp.add(fnp.multiply(u, high - low), low)


def _std(std: Any, fname: str) -> float:
    std = static_number(std, fname, "std")
    if std < 0:
        raise ValueError(f"{fname}: std must not be negative, got {std}")
    return std


def normal(mean: float = 0.0, std: float = 1.0, dtype: DTypeLike = mx.float32) -> Initializer:
    """An initialiser drawing from ``N(mean, std ** 2)``, as
    ``mlx.nn.init.normal``.

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.normal(std=0.02)(random.key(0), (100, 100))
    >>> round(w.std().item(), 2)
    0.02
    """
    mean = static_number(mean, "normal", "mean")
    std = _std(std, "normal")
    default = _float_dtype(dtype, "normal")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> Any:
        shape, dtype = _args(key, shape, dtype, "normal")
        return random.normal(key, shape, dtype, loc=mean or None, scale=std)

    return init


def truncated_normal(std: float = 1.0, mean: float = 0.0, lower: float = -2.0,
                     upper: float = 2.0, dtype: DTypeLike = mx.float32) -> Initializer:
    """An initialiser drawing ``mean + std * z`` with ``z`` a standard
    normal truncated to ``(lower, upper)``, as
    ``jax.nn.initializers.truncated_normal`` (whose ``stddev`` is ``std``;
    the result's standard deviation is below ``std``: about ``0.88 * std``
    for the default bounds).

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.truncated_normal(std=0.5)(random.key(0), (1000,))
    >>> bool((abs(w) < 1.0).all())
    True
    """
    std = _std(std, "truncated_normal")
    mean = static_number(mean, "truncated_normal", "mean")
    lower = static_number(lower, "truncated_normal", "lower")
    upper = static_number(upper, "truncated_normal", "upper")
    if not lower < upper:
        raise ValueError(f"truncated_normal: lower must be below upper, got lower={lower}, "
                         f"upper={upper}")
    default = _float_dtype(dtype, "truncated_normal")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> Any:
        shape, dtype = _args(key, shape, dtype, "truncated_normal")
        z = random.truncated_normal(key, lower, upper, shape, dtype)
        z = fnp.multiply(z, std)
        return fnp.add(z, mean) if mean else z

    return init


def variance_scaling(scale: float, mode: str = "fan_in", distribution: str = "truncated_normal",
                     dtype: DTypeLike = mx.float32) -> Initializer:
    """The general fan-scaled initialiser, as
    ``jax.nn.initializers.variance_scaling``: samples of variance
    ``scale / n``, where ``n`` is ``fan_in``, ``fan_out``, their mean
    (``"fan_avg"``) or their geometric mean (``"fan_geo_avg"``) (see
    ``fans``). ``distribution`` is ``"truncated_normal"`` (a normal
    truncated to two standard deviations, rescaled to that variance),
    ``"normal"`` or ``"uniform"`` (on ``[-sqrt(3 scale / n), sqrt(3 scale / n))``).

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.variance_scaling(2.0, "fan_in", "normal")(random.key(0), (200, 800))
    >>> round(w.var().item() * 800, 1)
    2.0
    """
    scale = static_number(scale, "variance_scaling", "scale")
    if scale < 0:
        raise ValueError(f"variance_scaling: scale must not be negative, got {scale}")
    if mode not in _MODES:
        raise ValueError(f"variance_scaling: mode must be one of {_MODES}, got {mode!r}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"variance_scaling: distribution must be one of {_DISTRIBUTIONS}, "
                         f"got {distribution!r}")
    return _scaled(lambda n: scale / n, mode, distribution,
                   _float_dtype(dtype, "variance_scaling"), "variance_scaling")


def _scaled(variance: Callable[[float], float], mode: str, distribution: str,
            default: mx.Dtype, fname: str) -> Initializer:
    """An initialiser of variance ``variance(n)`` for the fan ``n`` that
    ``mode`` picks, named ``fname`` in its errors."""

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> Any:
        shape, dtype = _args(key, shape, dtype, fname)
        if len(shape) < 2:
            raise ValueError(f"{fname}: shape must have at least 2 dimensions ((out, in) or "
                             f"(out, *kernel, in)) to have fans, got {shape}")
        fan_in, fan_out = fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
             "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]
        var = variance(max(n, 1))
        if distribution == "uniform":
            limit = math.sqrt(3 * var)
            return _uniform(key, shape, dtype, -limit, limit)
        if distribution == "normal":
            return random.normal(key, shape, dtype, scale=math.sqrt(var))
        z = random.truncated_normal(key, -2.0, 2.0, shape, dtype)
        return fnp.multiply(z, math.sqrt(var) / _TRUNCATED_STD)

    return init


def _gain(gain: Any, fname: str) -> float:
    return static_number(gain, fname, "gain")


def _mode(mode: Any, fname: str) -> str:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{fname}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return mode


def glorot_uniform(gain: float = 1.0, dtype: DTypeLike = mx.float32) -> Initializer:
    """Glorot (Xavier) uniform: ``U(-limit, limit)`` with
    ``limit = gain * sqrt(6 / (fan_in + fan_out))``, as
    ``mlx.nn.init.glorot_uniform`` (Glorot and Bengio, 2010). Also named
    ``xavier_uniform``.

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.glorot_uniform()(random.key(0), (30, 20))
    >>> bool(abs(w).max() <= (6 / 50) ** 0.5)
    True
    """
    g = _gain(gain, "glorot_uniform")
    return _scaled(lambda n: g * g / n, "fan_avg", "uniform",
                   _float_dtype(dtype, "glorot_uniform"), "glorot_uniform")


def glorot_normal(gain: float = 1.0, dtype: DTypeLike = mx.float32) -> Initializer:
    """Glorot (Xavier) normal: ``N(0, std ** 2)`` with
    ``std = gain * sqrt(2 / (fan_in + fan_out))``, as
    ``mlx.nn.init.glorot_normal`` (an untruncated normal; JAX's truncates).
    Also named ``xavier_normal``.

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.glorot_normal()(random.key(0), (300, 200))
    >>> round(w.std().item() / (2 / 500) ** 0.5, 1)
    1.0
    """
    g = _gain(gain, "glorot_normal")
    return _scaled(lambda n: g * g / n, "fan_avg", "normal",
                   _float_dtype(dtype, "glorot_normal"), "glorot_normal")


def he_uniform(mode: str = "fan_in", gain: float = 1.0,
               dtype: DTypeLike = mx.float32) -> Initializer:
    """He (Kaiming) uniform: ``U(-limit, limit)`` with
    ``limit = gain * sqrt(3 / fan)`` (``fan`` by ``mode``: ``"fan_in"`` or
    ``"fan_out"``), as ``mlx.nn.init.he_uniform`` (He et al., 2015). Also
    named ``kaiming_uniform``.

    As in mlx.nn the default ``gain`` is 1; the ReLU gain of PyTorch's
    ``kaiming_uniform_`` and ``jax.nn.initializers.he_uniform`` is
    ``gain=math.sqrt(2)``.

    >>> import ftorch.nn.init as init, ftorch.random as random, math
    >>> w = init.he_uniform(gain=math.sqrt(2))(random.key(0), (10, 24))
    >>> bool(abs(w).max() <= math.sqrt(2) * (3 / 24) ** 0.5)
    True
    """
    m = _mode(mode, "he_uniform")
    g = _gain(gain, "he_uniform")
    return _scaled(lambda n: g * g / n, m, "uniform", _float_dtype(dtype, "he_uniform"),
                   "he_uniform")


def he_normal(mode: str = "fan_in", gain: float = 1.0,
              dtype: DTypeLike = mx.float32) -> Initializer:
    """He (Kaiming) normal: ``N(0, std ** 2)`` with ``std = gain / sqrt(fan)``
    (``fan`` by ``mode``: ``"fan_in"`` or ``"fan_out"``), as
    ``mlx.nn.init.he_normal`` (an untruncated normal). Also named
    ``kaiming_normal``.

    As in mlx.nn the default ``gain`` is 1; the ReLU gain of PyTorch's
    ``kaiming_normal_`` (and ``jax.nn.initializers.he_normal``, which
    truncates) is ``gain=math.sqrt(2)``.

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.he_normal(mode="fan_out")(random.key(0), (400, 100))
    >>> round(w.std().item() * 400 ** 0.5, 1)
    1.0
    """
    m = _mode(mode, "he_normal")
    g = _gain(gain, "he_normal")
    return _scaled(lambda n: g * g / n, m, "normal", _float_dtype(dtype, "he_normal"),
                   "he_normal")


def lecun_uniform(dtype: DTypeLike = mx.float32) -> Initializer:
    """LeCun uniform: ``U(-sqrt(3 / fan_in), sqrt(3 / fan_in))``, as
    ``jax.nn.initializers.lecun_uniform`` (mlx.nn has none).

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.lecun_uniform()(random.key(0), (8, 12))
    >>> bool(abs(w).max() <= 0.5)
    True
    """
    return _scaled(lambda n: 1.0 / n, "fan_in", "uniform",
                   _float_dtype(dtype, "lecun_uniform"), "lecun_uniform")


def lecun_normal(dtype: DTypeLike = mx.float32) -> Initializer:
    """LeCun normal: a normal truncated to two standard deviations, with
    variance ``1 / fan_in``, as ``jax.nn.initializers.lecun_normal`` (mlx.nn
    has none).

    >>> import ftorch.nn.init as init, ftorch.random as random
    >>> w = init.lecun_normal()(random.key(0), (400, 100))
    >>> round(w.std().item() * 100 ** 0.5, 1)
    1.0
    """
    return _scaled(lambda n: 1.0 / n, "fan_in", "truncated_normal",
                   _float_dtype(dtype, "lecun_normal"), "lecun_normal")


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# ----------------------------------------------------------------------------
# orthogonal
# ----------------------------------------------------------------------------


def orthogonal(gain: float = 1.0, dtype: DTypeLike = mx.float32) -> Initializer:
    """An initialiser giving ``gain`` times a random matrix with orthonormal
    rows or columns (whichever are fewer), as ``mlx.nn.init.orthogonal``:
    ``Q`` of the QR decomposition of a standard normal matrix, its columns'
    signs corrected by ``sign(diag(R))`` (so the distribution is uniform
    over such matrices; Saxe et al., 2014). A shape of more than 2
    dimensions is orthogonal as the matrix ``(shape[0], prod(shape[1:]))``,
    as PyTorch's ``orthogonal_`` (mlx.nn's takes 2-d shapes only).

    MLX's QR runs eagerly on the CPU and has no ftorch rules, so the key
    must be a concrete array (not traced by ``jit`` or ``vmap``): initialise
    outside those transforms.

    >>> import ftorch.nn.init as init, ftorch.random as random, mlx.core as mx
    >>> w = init.orthogonal()(random.key(0), (3, 5))
    >>> bool(mx.allclose(w @ w.T, mx.eye(3), atol=1e-5))
    True
    """
    g = _gain(gain, "orthogonal")
    default = _float_dtype(dtype, "orthogonal")

    def init(key: Any, shape: Sequence[int], dtype: DTypeLike = default) -> mx.array:
        shape, dtype = _args(key, shape, dtype, "orthogonal")
        if len(shape) < 2:
            raise ValueError(f"orthogonal: shape must have at least 2 dimensions, got {shape}")
        if isinstance(key, Tracer):
            raise TypeError("orthogonal: the key must be a concrete array, not traced by jit "
                            "or vmap (MLX's QR has no ftorch rules); initialise outside "
                            "those transforms")
        rows, cols = shape[0], math.prod(shape[1:])
        if rows * cols == 0:
            return mx.zeros(shape, dtype)
        a = random.normal(key, (max(rows, cols), min(rows, cols)), mx.float32)
        q, r = mx.linalg.qr(a, stream=mx.cpu)
        q = q * mx.sign(mx.diag(r))
        if rows < cols:
            q = q.T
        return (g * q).reshape(shape).astype(dtype)

    return init
