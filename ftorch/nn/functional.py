"""The stateless ops behind layers: activation functions and normalized
exponentials, ``one_hot`` and ``dropout``, normalisations (layer, RMS,
group, instance, batch) and scaled dot-product attention.

Names and defaults follow ``mlx.nn`` (and ``mlx.core.fast``), layouts are
channels-last as there, and randomness takes an explicit key as in JAX. All
but a few stability-critical activations (which are primitives with their
own rules) are composed from ``ftorch.numpy``, so every transform applies.

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> F.softmax(mx.array([0.0, 0.0])).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import numpy as fnp
from ftorch.core import is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.nn._conv import (
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv3d,
    conv_general,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool2d,
)
from ftorch.numpy import logsumexp, tanh
from ftorch.primitives.activations import relu, sigmoid
from ftorch.primitives.creation import static_int, static_number, static_size
from ftorch.primitives.reduction import normalize_axes, normalize_axis
from ftorch.random import _check_key, bernoulli
from ftorch.typing import Axis

__all__ = [
    "softmax", "log_softmax", "logsumexp", "sigmoid", "relu", "gelu", "silu", "softplus",
    "elu", "celu", "selu", "leaky_relu", "prelu", "relu6", "relu2", "hard_tanh",
    "hard_sigmoid", "hardswish", "hard_swish", "mish", "glu", "log_sigmoid", "softsign",
    "softshrink", "hard_shrink", "step", "softmin", "gelu_approx", "gelu_fast_approx", "tanh",
    "one_hot", "dropout",
    "layer_norm", "rms_norm", "group_norm", "instance_norm", "batch_norm", "batch_stats",
    "scaled_dot_product_attention",
    # Convolution and pooling (primitives with their rules: ftorch/primitives/conv.py).
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_general", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
]


# ----------------------------------------------------------------------------
# softmax, log_softmax
# ----------------------------------------------------------------------------


def _axes(x: Any, axis: Axis, fname: str) -> tuple[Any, tuple[int, ...]]:
    x = fnp.asarray(x)
    return x, normalize_axes(axis, x.ndim, fname)


def softmax(x: Any, axis: Axis = -1) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis`` (an int, a tuple, or
    ``None`` for all axes), computed stably.

    ``-inf`` entries get probability 0 (with finite gradients); a slice that
    is entirely ``-inf`` gives nan, as ``mx.softmax`` does.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.softmax(mx.array([[1000.0, 1000.0], [0.0, -float("inf")]])).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    x, axes = _axes(x, axis, "softmax")
    return lax.softmax(x, axes)


def log_softmax(x: Any, axis: Axis = -1) -> Any:
    """``x - logsumexp(x)`` over ``axis`` (an int, a tuple, or
    ``None`` for all axes), computed stably.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.log_softmax(mx.array([1000.0, 1000.0])).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """
    x, axes = _axes(x, axis, "log_softmax")
    return lax.log_softmax(x, axes)


# ----------------------------------------------------------------------------
# Elementwise activations
# ----------------------------------------------------------------------------


def gelu(x: Any, approximate: bool = False) -> Any:
    """The Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the normal CDF),
    as ``mlx.nn.gelu``; with ``approximate=True`` the tanh form of
    ``mlx.nn.gelu_approx``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> round(F.gelu(mx.array(1.0)).item(), 4), round(F.gelu(mx.array(1.0), True).item(), 4)
    (0.8413, 0.8412)
    """
    if not isinstance(approximate, bool):
        raise TypeError(f"gelu: approximate must be True or False, got {approximate!r}")
    return lax.gelu(x, approximate)


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (also called swish).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.silu(mx.array([0.0, 1000.0])).tolist()
    [0.0, 1000.0]
    """
    return fnp.multiply(x, sigmoid(x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)`` so it stays exact
    for large ``|x|``; its derivative is ``sigmoid(x)``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.softplus(mx.array([0.0, 1000.0, -1000.0])).tolist()
    [0.6931471824645996, 1000.0, 0.0]
    """
    return fnp.logaddexp(x, 0.0)


# ----------------------------------------------------------------------------
# More activations (mlx.nn's names and defaults), composed from ftorch.numpy
# ----------------------------------------------------------------------------

# SELU's constants as mlx.nn.selu rounds them (Klambauer et al., 2017 give
# 1.6732632... and 1.0507009..., as JAX and PyTorch use: 2e-6 apart).
_SELU_ALPHA = 1.67326
_SELU_SCALE = 1.0507


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """The exponential linear unit: ``x`` where ``x > 0``, else
    ``alpha * (exp(x) - 1)``, as ``mlx.nn.elu``. The negative branch uses
    ``expm1`` of ``x`` where ``x <= 0`` (of 0 elsewhere), so it is exact near
    0 and its gradient stays finite for large ``x``; the derivative at 0 is
    ``alpha``, as in JAX.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> [round(v, 4) for v in F.elu(mx.array([-1.0, 0.0, 2.0])).tolist()]
    [-0.6321, 0.0, 2.0]
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(fnp.where(x > 0, 0.0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """The continuously differentiable ELU:
    ``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``, as ``mlx.nn.celu``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> [round(v, 4) for v in F.celu(mx.array([-1.0, 2.0]), alpha=2.0).tolist()]
    [-0.7869, 2.0]
    """
    x = fnp.asarray(x)
    return fnp.maximum(x, 0) + alpha * fnp.expm1(fnp.minimum(x, 0) / alpha)


def selu(x: Any) -> Any:
    """The scaled ELU ``scale * elu(x, alpha)`` (Klambauer et al., 2017)
    with mlx.nn.selu's constants ``alpha = 1.67326`` and ``scale = 1.0507``
    (JAX and PyTorch use them to more digits, 1.6732632... and 1.0507009...:
    the results differ by about 2e-6 relative).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> [round(v, 4) for v in F.selu(mx.array([-1.0, 1.0])).tolist()]
    [-1.1113, 1.0507]
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x: Any, negative_slope: Any = 0.01) -> Any:
    """``x`` where ``x >= 0``, else ``negative_slope * x``, as
    ``mlx.nn.leaky_relu`` (for any slope, not only slopes below 1); its
    derivative at 0 is taken as 1.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.leaky_relu(mx.array([-2.0, 3.0]), negative_slope=0.5).tolist()
    [-1.0, 3.0]
    """
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def prelu(x: Any, alpha: Any) -> Any:
    """``max(x, 0) + alpha * min(x, 0)`` with an array of slopes ``alpha``
    (broadcast against ``x``; a learned parameter of shape ``(C,)`` for
    channels-last ``x``), as ``mlx.nn.prelu``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.prelu(mx.array([[-2.0, -2.0]]), mx.array([0.5, 0.25])).tolist()
    [[-1.0, -0.5]]
    """
    return fnp.maximum(x, 0) + alpha * fnp.minimum(x, 0)


def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6)``, as ``mlx.nn.relu6``; its derivative is 0 at 0
    and at 6, as in JAX.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.relu6(mx.array([-1.0, 3.0, 9.0])).tolist()
    [0.0, 3.0, 6.0]
    """
    return fnp.where(fnp.greater_equal(x, 6), 6, relu(x))


def relu2(x: Any) -> Any:
    """The squared ReLU ``max(x, 0) ** 2``, as ``mlx.nn.relu2``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.relu2(mx.array([-1.0, 3.0])).tolist()
    [0.0, 9.0]
    """
    return fnp.square(relu(x))


def hard_tanh(x: Any, min_val: Any = -1.0, max_val: Any = 1.0) -> Any:
    """``x`` clipped to ``[min_val, max_val]``, as ``mlx.nn.hard_tanh``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.hard_tanh(mx.array([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    inside = fnp.where(fnp.less(x, min_val), min_val, x)  # derivative 1 at the bounds
    return fnp.where(fnp.greater(x, max_val), max_val, inside)


def hard_sigmoid(x: Any) -> Any:
    """The piecewise-linear sigmoid ``relu6(x + 3) / 6``, as
    ``jax.nn.hard_sigmoid`` (PyTorch's ``hardsigmoid``).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.hard_sigmoid(mx.array([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return relu6(fnp.add(x, 3)) / 6


def hardswish(x: Any) -> Any:
    """``x * relu6(x + 3) / 6``, as ``mlx.nn.hardswish`` (``hard_swish`` is
    the same function by JAX's name).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.hardswish(mx.array([-4.0, 1.0, 4.0])).tolist()
    [-0.0, 0.6666666865348816, 4.0]
    """
    return fnp.multiply(x, hard_sigmoid(x))


hard_swish = hardswish  # jax.nn's name


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))`` (Misra, 2019), as ``mlx.nn.mish``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> round(F.mish(mx.array(1.0)).item(), 4)
    0.8651
    """
    return fnp.multiply(x, fnp.tanh(softplus(x)))


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: ``x`` cut in two halves ``a, b`` along ``axis``
    (whose size must be even), then ``a * sigmoid(b)``, as ``mlx.nn.glu``.
    The result has half of ``x``'s size along ``axis``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.glu(mx.array([[2.0, 4.0, 0.0, 1000.0]])).tolist()
    [[1.0, 4.0]]
    """
    x = fnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("glu: x must have at least one axis to split, got a 0-d array")
    ax = normalize_axis(axis, x.ndim, "glu")
    if x.shape[ax] % 2:
        raise ValueError(f"glu: x must have an even size along axis {axis} to split in "
                         f"halves, got shape {tuple(x.shape)}")
    a, b = fnp.split(x, 2, axis=ax)
    return fnp.multiply(a, sigmoid(b))


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``, exact for large ``|x|`` (about
    ``x`` for very negative ``x``, 0 for very positive), as
    ``mlx.nn.log_sigmoid``; its derivative is ``sigmoid(-x)``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.log_sigmoid(mx.array([-1000.0, 0.0])).tolist()
    [-1000.0, -0.6931471824645996]
    """
    return fnp.negative(softplus(fnp.negative(x)))


def softsign(x: Any) -> Any:
    """``x / (1 + |x|)``, as ``mlx.nn.softsign``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.softsign(mx.array([-3.0, 1.0])).tolist()
    [-0.75, 0.5]
    """
    return fnp.divide(x, fnp.add(fnp.abs(x), 1))


def softshrink(x: Any, lambd: Any = 0.5) -> Any:
    """``x - sign(x) * lambd`` where ``|x| > lambd``, else 0, as
    ``mlx.nn.softshrink``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.softshrink(mx.array([-2.0, 0.25, 1.5])).tolist()
    [-1.5, 0.0, 1.0]
    """
    x = fnp.asarray(x)
    return fnp.where(fnp.abs(x) > lambd, x - fnp.sign(x) * lambd, 0)


def hard_shrink(x: Any, lambd: Any = 0.5) -> Any:
    """``x`` where ``|x| > lambd``, else 0, as ``mlx.nn.hard_shrink``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.hard_shrink(mx.array([-2.0, 0.25, 1.5])).tolist()
    [-2.0, 0.0, 1.5]
    """
    x = fnp.asarray(x)
    return fnp.where(fnp.abs(x) > lambd, x, 0)


def step(x: Any, threshold: Any = 0.0) -> Any:
    """The Heaviside step: 1 where ``x >= threshold``, else 0 (int32, as
    ``mlx.nn.step``); not differentiable (its gradient is 0).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.step(mx.array([-1.0, 0.0, 2.0])).tolist()
    [0, 1, 1]
    """
    return fnp.where(fnp.greater_equal(x, threshold), 1, 0)


def softmin(x: Any, axis: Axis = -1) -> Any:
    """``softmax(-x)`` over ``axis``, as ``mlx.nn.softmin``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.softmin(mx.array([0.0, 1000.0])).tolist()
    [1.0, 0.0]
    """
    return softmax(fnp.negative(x), axis=axis)


def gelu_approx(x: Any) -> Any:
    """The tanh approximation of GELU,
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3)))``, as
    ``mlx.nn.gelu_approx`` (it is ``gelu(x, approximate=True)``).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> round(F.gelu_approx(mx.array(1.0)).item(), 4)
    0.8412
    """
    return gelu(x, approximate=True)


def gelu_fast_approx(x: Any) -> Any:
    """The sigmoid approximation of GELU, ``x * sigmoid(1.702 * x)``, as
    ``mlx.nn.gelu_fast_approx``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> round(F.gelu_fast_approx(mx.array(1.0)).item(), 4)
    0.8458
    """
    return fnp.multiply(x, sigmoid(fnp.multiply(x, 1.702)))


# ----------------------------------------------------------------------------
# one_hot, dropout
# ----------------------------------------------------------------------------


def one_hot(x: Any, num_classes: int, dtype: DTypeLike = mx.float32, axis: int = -1) -> Any:
    """Integer labels ``x`` of shape ``S`` as one-hot vectors: an array of
    shape ``S`` with an axis of size ``num_classes`` inserted at ``axis``
    (the end by default), holding ``x == c`` at class ``c``. As
    ``jax.nn.one_hot``, a label outside ``[0, num_classes)`` (negative ones
    included) gives a row of zeros. Not differentiable (labels are integers).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.one_hot(mx.array([0, 2, 3]), 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    x = fnp.asarray(x)
    if x.dtype == mx.bool_ or is_floating(x.dtype) or x.dtype == mx.complex64:
        raise TypeError(f"one_hot: x must hold integer class labels, got dtype {x.dtype}")
    n = static_size(num_classes, "one_hot", "num_classes")
    dtype = to_mlx_dtype(dtype, "one_hot: dtype")
    ax = normalize_axis(axis, x.ndim + 1, "one_hot")
    classes = mx.arange(n).reshape([n if i == ax else 1 for i in range(x.ndim + 1)])
    return fnp.astype(fnp.equal(fnp.expand_dims(x, ax), classes), dtype)


def dropout(x: Any, rate: float, *, key: Any) -> Any:
    """Each entry of ``x`` zeroed with probability ``rate``, the others
    scaled by ``1 / (1 - rate)`` so the expectation is ``x``:
    ``x * mask / (1 - rate)`` with ``mask ~ Bernoulli(1 - rate)`` drawn from
    ``key`` (``ftorch.random``: the same key gives the same mask; split keys
    for different masks). ``rate`` is a static number in ``[0, 1]``: 0
    returns ``x``, 1 returns zeros. Differentiable in ``x``.

    Args:
        x: the array, of any shape.
        rate: the probability of dropping an entry.
        key: a ``ftorch.random`` key (keyword-only).

    >>> import ftorch.nn.functional as F, ftorch.random as random, mlx.core as mx
    >>> y = F.dropout(mx.ones(1000), 0.5, key=random.key(0))
    >>> sorted(set(y.tolist())), 400 < int((y == 0).sum()) < 600
    ([0.0, 2.0], True)
    """
    _check_key(key, "dropout")
    rate = static_number(rate, "dropout", "rate")
    if not 0 <= rate <= 1:
        raise ValueError(f"dropout: rate must be in [0, 1], got {rate}")
    x = fnp.asarray(x)
    if rate == 0:
        return x
    if rate == 1:
        return fnp.zeros_like(x)
    keep = 1.0 - rate
    mask = bernoulli(key, keep, x.shape)
    return fnp.where(mask, fnp.divide(x, keep), 0)


# ----------------------------------------------------------------------------
# Normalisations (channels-last, as mlx.nn)
# ----------------------------------------------------------------------------


def _stats_input(x: Any) -> Any:
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
    y = _standardize(_stats_input(x), axes, _eps(eps, "layer_norm"))
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
    xs = _stats_input(x)
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
    grouped = fnp.reshape(_stats_input(x), (x.shape[0], -1, g, c // g))
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
    y = _standardize(_stats_input(x), axes, _eps(eps, "instance_norm"))
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


# ----------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------


def _check_attention_shapes(q: Any, k: Any, v: Any) -> int:
    """The number of query heads per key/value head; clear errors for
    shapes ``scaled_dot_product_attention`` cannot combine."""
    fname = "scaled_dot_product_attention"
    shapes = {"q": tuple(q.shape), "k": tuple(k.shape), "v": tuple(v.shape)}
    if not q.ndim == k.ndim == v.ndim >= 3:
        raise ValueError(f"{fname}: q, k and v must have the same ndim, at least 3 "
                         f"((B, H, L, D) or (H, L, D)), got shapes {shapes}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{fname}: q and k must have the same head dimension D (last axis), "
                         f"got shapes {shapes}")
    if k.shape[-3:-1] != v.shape[-3:-1]:
        raise ValueError(f"{fname}: k and v must have the same heads and length (axes -3 and "
                         f"-2), got shapes {shapes}")
    h, h_kv = q.shape[-3], k.shape[-3]
    if h_kv == 0 or h % h_kv:
        raise ValueError(f"{fname}: the {h} query heads must be a multiple of the {h_kv} "
                         f"key/value heads, got shapes {shapes}")
    try:
        np.broadcast_shapes(q.shape[:-3], k.shape[:-3], v.shape[:-3])
    except ValueError:
        raise ValueError(f"{fname}: the batch axes of q, k and v do not broadcast, got shapes "
                         f"{shapes}") from None
    return h // h_kv


def _combine_masks(scores: Any, mask: Any, causal: bool) -> Any:
    """``scores`` with a boolean mask (False: the finite minimum, as MLX)
    or an additive one applied, and the lower-right causal mask."""
    fname = "scaled_dot_product_attention"
    lq, lk = scores.shape[-2:]
    low = float(mx.finfo(scores.dtype).min)
    if causal:
        allowed = mx.arange(lq)[:, None] + (lk - lq) >= mx.arange(lk)[None]
        scores = fnp.where(allowed, scores, low)
    if mask is None:
        return scores
    mask = fnp.asarray(mask)
    try:
        fits = mask.ndim <= scores.ndim and np.broadcast_shapes(
            tuple(mask.shape), tuple(scores.shape)) == tuple(scores.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{fname}: mask of shape {tuple(mask.shape)} does not broadcast "
                         f"against the scores' shape {tuple(scores.shape)} (B, H, L_q, L_kv)")
    if mask.dtype == mx.bool_:
        return fnp.where(mask, scores, low)
    if not is_floating(mask.dtype):
        raise TypeError(f"{fname}: mask must be boolean (True: attend) or an additive float "
                        f"array, got dtype {mask.dtype}")
    return fnp.add(scores, fnp.astype(mask, scores.dtype))


def scaled_dot_product_attention(q: Any, k: Any, v: Any, *, scale: float | None = None,
                                 mask: Any = None, is_causal: bool = False) -> Any:
    """Multi-head attention ``softmax(scale * q @ k^T + mask) @ v`` per head,
    as ``mlx.core.fast.scaled_dot_product_attention``, composed from ftorch
    ops (so it differentiates, vmaps and jits).

    Multi-query and grouped-query attention: ``k`` and ``v`` may have fewer
    heads ``H_kv`` dividing ``H``; query head ``h`` uses key/value head
    ``h // (H / H_kv)`` (do not tile ``k`` and ``v``). The softmax is
    computed in float32 for float16/bfloat16 inputs, as MLX does.

    Args:
        q: queries ``(B, H, L_q, D)`` (any number of batch axes, or none).
        k: keys ``(B, H_kv, L_kv, D)``.
        v: values ``(B, H_kv, L_kv, D_v)``.
        scale: multiplies the scores. Default: ``1 / sqrt(D)``.
        mask: optional, broadcasting against ``(B, H, L_q, L_kv)``: boolean
            (True: attend; a masked score becomes the dtype's finite minimum,
            so a row with nothing to attend averages ``v``, as in MLX) or
            additive (float, added to the scores); ``"causal"`` is
            ``is_causal=True``, MLX's spelling.
        is_causal: apply the causal mask, aligned lower-right as MLX's
            ``"causal"``: query ``i`` attends key ``j`` when
            ``j <= i + L_kv - L_q``. Combines with ``mask``.

    Returns:
        ``(B, H, L_q, D_v)``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> q = k = mx.zeros((1, 1, 2, 4))
    >>> v = mx.array([[[[1.0], [3.0]]]])
    >>> F.scaled_dot_product_attention(q, k, v).tolist()
    [[[[2.0], [2.0]]]]
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
    [[[[1.0], [2.0]]]]
    """
    fname = "scaled_dot_product_attention"
    q, k, v = fnp.asarray(q), fnp.asarray(k), fnp.asarray(v)
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"{fname}: the only mask string is 'causal', got {mask!r}")
        mask, is_causal = None, True
    if not isinstance(is_causal, bool):
        raise TypeError(f"{fname}: is_causal must be True or False, got {is_causal!r}")
    rep = _check_attention_shapes(q, k, v)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else static_number(
        scale, fname, "scale")
    h, lq, lk = q.shape[-3], q.shape[-2], k.shape[-2]
    qs = fnp.multiply(q, scale)
    if rep > 1:  # (..., H_kv, rep, L_q, D) against (..., H_kv, 1, L_kv, D)
        qs = fnp.reshape(qs, (*q.shape[:-3], h // rep, rep, lq, q.shape[-1]))
        k, v = fnp.expand_dims(k, -3), fnp.expand_dims(v, -3)
    scores = fnp.matmul(qs, fnp.swapaxes(k, -1, -2))
    if rep > 1:
        scores = fnp.reshape(scores, (*scores.shape[:-4], h, lq, lk))
    scores = _combine_masks(_stats_input(scores), mask, is_causal)
    p = fnp.astype(softmax(scores, axis=-1), fnp.result_type(q, k, v))
    if rep > 1:
        p = fnp.reshape(p, (*p.shape[:-3], h // rep, rep, lq, lk))
    out = fnp.matmul(p, v)
    if rep > 1:
        out = fnp.reshape(out, (*out.shape[:-4], h, lq, out.shape[-1]))
    return out
