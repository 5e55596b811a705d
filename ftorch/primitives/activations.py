"""The activation primitives that need rules of their own for stability or
speed: ``log_softmax`` (softmax lives with ``logsumexp``, whose derivative it
is), ``sigmoid``, ``relu`` and ``gelu``. ``ftorch.nn.functional`` builds the
user-facing activations on them.

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.relu(mx.array([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive
from ftorch.primitives._rules import derivative, vectorized
from ftorch.primitives.reduction import batch_normalized

__all__ = ["log_softmax", "sigmoid", "relu", "gelu"]


# ----------------------------------------------------------------------------
# log_softmax
# ----------------------------------------------------------------------------


def _log_softmax_impl(x, axes):
    # Shift by the max first: subtracting logsumexp(x) from a large x directly
    # would round away the small normalizer.
    shifted = x - mx.max(x, axis=axes, keepdims=True)
    return shifted - mx.logsumexp(shifted, axis=axes, keepdims=True)


# softmax_p lives with logsumexp, whose derivative it is.
log_softmax_p = Primitive("log_softmax", _log_softmax_impl, autocast="float32")


@log_softmax_p.def_jvp
def _log_softmax_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = log_softmax_p.bind(x, axes=axes)
    return out, lax.subtract(t, lax.sum(lax.multiply(t, lax.exp(out)), axes, True))


@log_softmax_p.def_vjp
def _log_softmax_vjp(ct, out, x, *, needed, axes):
    return (lax.subtract(ct, lax.multiply(lax.exp(out), lax.sum(ct, axes, True))),)


log_softmax_p.def_batch(batch_normalized(log_softmax_p))




def log_softmax(x: Any, axes: tuple[int, ...]) -> Any:
    """``x - logsumexp(x)`` over the non-negative ``axes``, computed stably;
    ``ftorch.nn.functional.log_softmax`` normalises its ``axis`` and calls this.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> lax.log_softmax(mx.array([1000.0, 1000.0]), (0,)).tolist()
    [-0.6931471824645996, -0.6931471824645996]
    """
    return log_softmax_p.bind(x, axes=axes)


# ----------------------------------------------------------------------------
# Elementwise activations
# ----------------------------------------------------------------------------


sigmoid_p = Primitive("sigmoid", mx.sigmoid)
# The derivative comes from the output: y * (1 - y).
derivative(sigmoid_p, lambda x, y: lax.multiply(y, lax.subtract(1, y)))
vectorized(sigmoid_p)


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``; its derivative comes from
    the output, ``y * (1 - y)``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.sigmoid(mx.array([0.0, 1000.0, -1000.0])).tolist()
    [0.5, 1.0, 0.0]
    """
    return sigmoid_p.bind(x)


relu_p = Primitive("relu", lambda x: mx.maximum(x, 0))
# Multiplying by the mask is much faster than a select on MLX's CPU.
derivative(relu_p, lambda x, y: lax.greater(x, 0))
vectorized(relu_p)


def relu(x: Any) -> Any:
    """``max(x, 0)``; its derivative is taken as 0 at 0.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> F.relu(mx.array([-1.0, 0.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    """
    return relu_p.bind(x)


_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_SCALE = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715


def _gelu_impl(x, approximate):
    if approximate:
        return 0.5 * x * (1 + mx.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x**3)))
    return x * (1 + mx.erf(x * _INV_SQRT2)) / 2


gelu_p = Primitive("gelu", _gelu_impl)


def _gelu_derivative(x, approximate):
    mul, add = lax.multiply, lax.add
    x2 = mul(x, x)
    if approximate:
        th = lax.tanh(mul(add(x, mul(mul(x2, x), _TANH_CUBIC)), _TANH_SCALE))
        du = mul(add(mul(x2, 3 * _TANH_CUBIC), 1), _TANH_SCALE)
        return add(mul(add(th, 1), 0.5),
                   mul(mul(x, 0.5), mul(lax.subtract(1, mul(th, th)), du)))
    # Phi(x) + x * phi(x)
    return add(mul(add(lax.erf(mul(x, _INV_SQRT2)), 1), 0.5),
               mul(x, mul(lax.exp(mul(x2, -0.5)), _INV_SQRT_2PI)))


@gelu_p.def_jvp
def _gelu_jvp(primals, tangents, *, approximate):
    (x,), (t,) = primals, tangents
    out = gelu_p.bind(x, approximate=approximate)
    return out, lax.multiply(t, _gelu_derivative(x, approximate))


@gelu_p.def_vjp
def _gelu_vjp(ct, out, x, *, needed, approximate):
    return (lax.multiply(ct, _gelu_derivative(x, approximate)),)


vectorized(gelu_p)


def gelu(x: Any, approximate: bool) -> Any:
    """The Gaussian error linear unit ``x * Phi(x)`` (``Phi`` the normal CDF);
    with ``approximate`` its tanh form. ``ftorch.nn.functional.gelu`` checks
    ``approximate`` and calls this.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> round(lax.gelu(mx.array(1.0), False).item(), 4)
    0.8413
    """
    return gelu_p.bind(x, approximate=approximate)
