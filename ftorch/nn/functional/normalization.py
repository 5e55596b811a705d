"""Normalisations over channels-last arrays, as ``mlx.nn``'s: layer, RMS,
group, instance and batch normalisation.

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> F.layer_norm(mx.array([1.0, 3.0])).tolist()
[-0.9999949932098389, 0.9999949932098389]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import numpy as fnp
from ftorch.core import is_floating
from ftorch.primitives.creation import static_int, static_number
from ftorch.primitives.reduction import normalize_axes
from ftorch.typing import Axis

__all__ = [
    "layer_norm", "rms_norm", "group_norm", "instance_norm", "batch_norm", "batch_stats",
]

# ----------------------------------------------------------------------------
# Normalisations (channels-last, as mlx.nn)
# ----------------------------------------------------------------------------


def stats_input(x: Any) -> Any:
    """``x`` in the dtype its statistics are computed in: float32 for
    float16, bfloat16 and integers (as mlx.core.fast's kernels accumulate)."""
    return x if x.dtype in (mx.float32, mx.float64) else fnp.astype(x, mx.float32)


def _check_affine(p: Any, x: Any, fname: str, name: str) -> Any:
    """``weight``/``bias``/statistics must broadcast against ``x`` without
    growing it."""
    if p is None:
        return None
    p = fnp.asarray(p)
    shape, pshape = tuple(x.shape), tuple(p.shape)
    try:
        ok = np.broadcast_shapes(shape, pshape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{fname}: {name} of shape {pshape} does not broadcast against x of "
                         f"shape {shape} (features are the last axis)")
    return p


def _affine(y: Any, x: Any, weight: Any, bias: Any) -> Any:
    """``y * weight + bias`` (each optional), in the dtype MLX's fused
    kernels give: that of ``x`` promoted with the parameters."""
    dtype = fnp.result_type(*(a for a in (x, weight, bias) if a is not None))
    if not is_floating(dtype):
        dtype = mx.float32
    if weight is not None:
        y = fnp.multiply(y, weight)
    if bias is not None:
        y = fnp.add(y, bias)
    return fnp.astype(y, dtype)


def _eps(eps: Any, fname: str) -> float:
    eps = static_number(eps, fname, "eps")
    if eps < 0:
        raise ValueError(f"{fname}: eps must not be negative, got {eps}")
    return eps


def _standardize(x: Any, axes: tuple[int, ...], eps: float) -> Any:
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` (two-pass variance)."""
    mean = fnp.mean(x, axes, keepdims=True)
    centered = fnp.subtract(x, mean)
    var = fnp.mean(fnp.square(centered), axes, keepdims=True)
    return fnp.multiply(centered, fnp.rsqrt(fnp.add(var, eps)))


def layer_norm(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5,
               axis: Axis = -1) -> Any:
    """Layer normalisation (Ba et al., 2016) over ``axis`` (the features;
    an int or a tuple):

    ``y = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias``

    with the mean and (biased) variance over ``axis``, as
    ``mlx.core.fast.layer_norm`` / ``mlx.nn.LayerNorm``. Statistics of
    float16/bfloat16 inputs are computed in float32.

    Args:
        x: the input, ``(..., C)`` for the default ``axis=-1``.
        weight: optional scale, broadcasting against ``x`` (``(C,)``).
        bias: optional shift, broadcasting against ``x`` (``(C,)``).
        eps: added to the variance. Default: ``1e-5``.
        axis: the axis or axes normalised over. Default: ``-1``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> [round(v, 3) for v in F.layer_norm(mx.array([1.0, 2.0, 3.0])).tolist()]
    [-1.225, 0.0, 1.225]
    """
    x = fnp.asarray(x)
    axes = normalize_axes(axis, x.ndim, "layer_norm")
    weight = _check_affine(weight, x, "layer_norm", "weight")
    bias = _check_affine(bias, x, "layer_norm", "bias")
    y = _standardize(stats_input(x), axes, _eps(eps, "layer_norm"))
    return _affine(y, x, weight, bias)


def rms_norm(x: Any, weight: Any = None, eps: float = 1e-5, axis: Axis = -1) -> Any:
    """Root-mean-square normalisation (Zhang and Sennrich, 2019) over
    ``axis``:

    ``y = x / sqrt(E[x ** 2] + eps) * weight``

    as ``mlx.core.fast.rms_norm`` / ``mlx.nn.RMSNorm``; the mean of squares
    is accumulated in float32 for float16/bfloat16 inputs.

    Args:
        x: the input, ``(..., C)`` for the default ``axis=-1``.
        weight: optional scale, broadcasting against ``x`` (``(C,)``).
        eps: added to the mean of squares. Default: ``1e-5``.
        axis: the axis or axes normalised over. Default: ``-1``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> [round(v, 3) for v in F.rms_norm(mx.array([3.0, -4.0]), eps=0.0).tolist()]
    [0.849, -1.131]
    """
    x = fnp.asarray(x)
    axes = normalize_axes(axis, x.ndim, "rms_norm")
    weight = _check_affine(weight, x, "rms_norm", "weight")
    xs = stats_input(x)
    ms = fnp.mean(fnp.square(xs), axes, keepdims=True)
    y = fnp.multiply(xs, fnp.rsqrt(fnp.add(ms, _eps(eps, "rms_norm"))))
    return _affine(y, x, weight, None)


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Group normalisation (Wu and He, 2018) of channels-last ``x``
    ``(N, ..., C)``: the ``C`` channels are cut into ``num_groups``
    consecutive groups, and each example's group is standardised over its
    channels and all spatial positions, then ``* weight + bias`` per channel:

    ``y = (x - E_g[x]) / sqrt(Var_g[x] + eps) * weight + bias``

    This is ``mlx.nn.GroupNorm(num_groups, C, pytorch_compatible=True)``
    (PyTorch's grouping, with channels last).

    Args:
        x: the input ``(N, ..., C)``, at least 2-d; ``C`` divisible by ``num_groups``.
        num_groups: the number of channel groups.
        weight: optional per-channel scale ``(C,)``.
        bias: optional per-channel shift ``(C,)``.
        eps: added to the variance. Default: ``1e-5``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> x = mx.array([[1.0, 3.0, 10.0, 30.0]])
    >>> F.group_norm(x, 2, eps=0.0).tolist()
    [[-1.0, 1.0, -1.0, 1.0]]
    """
    x = fnp.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"group_norm: x must be (N, ..., C), at least 2-d, got shape "
                         f"{tuple(x.shape)}")
    g = static_int(num_groups, "group_norm", "num_groups")
    if g < 1:
        raise ValueError(f"group_norm: num_groups must be positive, got {g}")
    c = x.shape[-1]
    if c % g:
        raise ValueError(f"group_norm: the {c} channels of x (its last axis) are not divisible "
                         f"into num_groups={g} groups")
    weight = _check_affine(weight, x, "group_norm", "weight")
    bias = _check_affine(bias, x, "group_norm", "bias")
    grouped = fnp.reshape(stats_input(x), (x.shape[0], -1, g, c // g))
    y = fnp.reshape(_standardize(grouped, (1, 3), _eps(eps, "group_norm")), x.shape)
    return _affine(y, x, weight, bias)


def instance_norm(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Instance normalisation (Ulyanov et al., 2016) of channels-last ``x``
    ``(N, ..., C)``: each example's channel is standardised over the spatial
    axes, then ``* weight + bias`` per channel, as ``mlx.nn.InstanceNorm``.

    Args:
        x: the input ``(N, ..., C)``, at least 3-d.
        weight: optional per-channel scale ``(C,)``.
        bias: optional per-channel shift ``(C,)``.
        eps: added to the variance. Default: ``1e-5``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.instance_norm(mx.array([[[1.0], [3.0]]]), eps=0.0).tolist()
    [[[-1.0], [1.0]]]
    """
    x = fnp.asarray(x)
    if x.ndim < 3:
        raise ValueError(f"instance_norm: x must be (N, ..., C), at least 3-d, got shape "
                         f"{tuple(x.shape)}")
    weight = _check_affine(weight, x, "instance_norm", "weight")
    bias = _check_affine(bias, x, "instance_norm", "bias")
    axes = tuple(range(1, x.ndim - 1))
    y = _standardize(stats_input(x), axes, _eps(eps, "instance_norm"))
    return _affine(y, x, weight, bias)


def batch_stats(x: Any, ddof: int = 0) -> tuple[Any, Any]:
    """The per-feature mean and variance of channels-last ``x`` ``(N, ..., C)``
    over all axes but the last, each of shape ``(C,)``: what
    ``mlx.nn.BatchNorm`` normalises with in training (``ddof=0``) and
    accumulates into its running variance (``ddof=1``).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> mean, var = F.batch_stats(mx.array([[1.0, 10.0], [3.0, 30.0]]))
    >>> mean.tolist(), var.tolist()
    ([2.0, 20.0], [1.0, 100.0])
    """
    x = fnp.asarray(x)
    if x.ndim < 1:
        raise ValueError("batch_stats: x must have a feature axis (its last), got a 0-d array")
    axes = tuple(range(x.ndim - 1))
    return fnp.mean(x, axes), fnp.var(x, axes, ddof=ddof)


def batch_norm(x: Any, mean: Any, var: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Batch normalisation (Ioffe and Szegedy, 2015) of channels-last ``x``
    ``(N, ..., C)`` with the given per-feature statistics:

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``

    as ``mlx.nn.BatchNorm`` computes it. In training pass the batch's own
    statistics, ``batch_stats(x)`` (gradients then flow through them, as in
    mlx.nn); in evaluation the running ones.

    Args:
        x: the input ``(N, ..., C)``.
        mean, var: the statistics, broadcasting against ``x`` (``(C,)``).
        weight: optional per-feature scale ``(C,)``.
        bias: optional per-feature shift ``(C,)``.
        eps: added to the variance. Default: ``1e-5``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> x = mx.array([[1.0, 10.0], [3.0, 30.0]])
    >>> F.batch_norm(x, *F.batch_stats(x), eps=0.0).tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    x = fnp.asarray(x)
    mean = _check_affine(mean, x, "batch_norm", "mean")
    var = _check_affine(var, x, "batch_norm", "var")
    weight = _check_affine(weight, x, "batch_norm", "weight")
    bias = _check_affine(bias, x, "batch_norm", "bias")
    y = fnp.multiply(fnp.subtract(x, mean), fnp.rsqrt(fnp.add(var, _eps(eps, "batch_norm"))))
    if weight is not None:
        y = fnp.multiply(y, weight)
    if bias is not None:
        y = fnp.add(y, bias)
    return y
