"""Activation functions and normalized exponentials, with ``mlx.nn``'s names
and defaults: the stability-critical ones are primitives of their own
(``ftorch.primitives.activations``), the rest composed from ``ftorch.numpy``.

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> F.softmax(mx.array([0.0, 0.0])).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import math
from typing import Any

import ftorch.primitives as lax
from ftorch import numpy as fnp
from ftorch.primitives.activations import relu, sigmoid
from ftorch.primitives.reduction import normalize_axes, normalize_axis
from ftorch.typing import Axis

__all__ = [
    "softmax", "log_softmax", "sigmoid", "relu", "gelu", "silu", "softplus", "elu", "celu",
    "selu", "leaky_relu", "prelu", "relu6", "relu2", "hard_tanh", "hard_sigmoid",
    "hardswish", "hard_swish", "mish", "glu", "log_sigmoid", "softsign", "softshrink",
    "hard_shrink", "step", "softmin", "gelu_approx", "gelu_fast_approx",
    "hard_silu", "swish", "soft_sign", "identity", "log1mexp", "logmeanexp", "sparse_plus",
    "sparse_sigmoid", "squareplus", "standardize", "swiglu",
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


def swiglu(gate: Any, x: Any) -> Any:
    """``silu(gate) * x``: the gated unit of Llama-class MLPs
    (``down(swiglu(gate(h), up(h)))``), as mlx-lm's ``swiglu``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.swiglu(mx.array([0.0, 1000.0]), mx.array([5.0, 2.0])).tolist()
    [0.0, 2000.0]
    """
    return fnp.multiply(silu(gate), x)


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
# jax.nn's further activations
# ----------------------------------------------------------------------------

hard_silu = hardswish  # jax.nn's other name for it
swish = silu  # jax.nn's other name for it
soft_sign = softsign  # jax.nn's name


def identity(x: Any) -> Any:
    """``x`` itself (as an array), as ``jax.nn.identity``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.identity(mx.array([-1.0, 2.0])).tolist()
    [-1.0, 2.0]
    """
    return fnp.asarray(x)


_LOG2 = 0.6931471805599453


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate at both ends (through
    ``log(-expm1(-x))`` below ``log 2`` and ``log1p(-exp(-x))`` above), as
    ``jax.nn.log1mexp``; ``-inf`` at 0, NaN below.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> round(F.log1mexp(mx.array(1.0)).item(), 5)
    -0.45868
    """
    x = fnp.asarray(x)
    small = fnp.less(x, _LOG2)
    return fnp.where(small, fnp.log(fnp.negative(fnp.expm1(fnp.negative(x)))),
                     fnp.log1p(fnp.negative(fnp.exp(fnp.negative(x)))))


def logmeanexp(x: Any, axis: Axis = None, where: Any = None, keepdims: bool = False) -> Any:
    """``log(mean(exp(x)))`` over ``axis``, computed stably as ``logsumexp(x)
    - log(n)``, as ``jax.nn.logmeanexp``; ``where`` keeps only the elements
    where it is true (``n`` counts them).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.logmeanexp(mx.array([1000.0, 1000.0])).item()
    1000.0
    """
    x = fnp.asarray(x)
    if where is None:
        count = math.prod(x.shape[a] for a in normalize_axes(axis, x.ndim, "logmeanexp"))
        lse = fnp.logsumexp(x, axis, keepdims)
        return fnp.subtract(lse, fnp.log(fnp.asarray(float(count), lse.dtype)))
    where = fnp.broadcast_to(fnp.asarray(where), x.shape)
    lse = fnp.logsumexp(fnp.where(where, x, -fnp.inf), axis, keepdims)
    count = fnp.sum(where, axis, keepdims, dtype=lse.dtype)
    return fnp.subtract(lse, fnp.log(count))


def sparse_plus(x: Any) -> Any:
    """The sparse plus function: 0 for ``x <= -1``, ``(x + 1)**2 / 4`` for
    ``-1 < x < 1``, ``x`` for ``x >= 1``, as ``jax.nn.sparse_plus``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.sparse_plus(mx.array([-2.0, 0.0, 2.0])).tolist()
    [0.0, 0.25, 2.0]
    """
    x = fnp.asarray(x)
    quadratic = fnp.multiply(fnp.square(fnp.add(x, 1.0)), 0.25)
    return fnp.where(fnp.less_equal(x, -1.0), fnp.zeros_like(x),
                     fnp.where(fnp.less(x, 1.0), quadratic, x))


def sparse_sigmoid(x: Any) -> Any:
    """The sparse sigmoid ``clip((x + 1) / 2, 0, 1)``, the derivative of
    ``sparse_plus``, as ``jax.nn.sparse_sigmoid``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.sparse_sigmoid(mx.array([-2.0, 0.0, 0.5])).tolist()
    [0.0, 0.5, 0.75]
    """
    return fnp.multiply(fnp.clip(fnp.add(x, 1.0), 0.0, 2.0), 0.5)


def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU, as ``jax.nn.squareplus``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.squareplus(mx.array([0.0, 1.5])).tolist()
    [1.0, 2.0]
    """
    x = fnp.asarray(x)
    return fnp.multiply(fnp.add(x, fnp.sqrt(fnp.add(fnp.square(x), b))), 0.5)


def standardize(x: Any, axis: Axis = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``, as
    ``jax.nn.standardize``; ``mean`` and ``variance`` are computed (over the
    elements where ``where`` holds) unless given. ``algorithm="fast"``
    takes the variance as ``mean(x**2) - mean(x)**2`` (clipped at 0),
    ``"stable"`` as ``mean((x - mean)**2)``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.standardize(mx.array([1.0, 3.0]), epsilon=0.0).tolist()
    [-1.0, 1.0]
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm must be 'fast' or 'stable', got {algorithm!r}")
    x = fnp.asarray(x)
    if mean is None:
        mean = fnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(fnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        else:
            variance = fnp.subtract(fnp.mean(fnp.square(x), axis, keepdims=True, where=where),
                                    fnp.square(mean))
            variance = fnp.maximum(variance, 0.0)  # the difference may round below 0
    return fnp.multiply(fnp.subtract(x, mean), fnp.rsqrt(fnp.add(variance, epsilon)))
