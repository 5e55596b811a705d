"""Elementwise ops as in NumPy / jax.numpy: unary and binary math,
comparisons, logic, ``where``, ``clip``, casts and ``stop_gradient``.

The unary and binary ops, ``where`` and ``round`` are the strict wrappers
of ``ftorch.primitives.elementwise`` themselves (MLX broadcasts and promotes
their operands, Python scalars included). Here are what does more: ``astype``
(a dtype in any spelling), ``clip`` (bounds by either of their names),
``stop_gradient`` (over a pytree), the aliases ``true_divide`` and ``mod``,
and the complex-number helpers (``real``, ``imag``, ``conj``, ``angle``,
``iscomplexobj``, ...), which also take real arrays, as in jax.numpy.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.clip(fnp.exp(mx.zeros(2)), 0.0, 0.5).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import as_array, aval_of, is_complex
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.lax import stop_gradient
from ftorch.primitives.elementwise import (
    abs,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    ceil,
    cos,
    cosh,
    divide,
    equal,
    erf,
    erfinv,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    reciprocal,
    remainder,
    round,
    rsqrt,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    where,
)

__all__ = [
    "negative", "abs", "sign", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
    "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "erf", "erfinv", "floor", "ceil",
    "round", "around", "ndarray", "isnan", "isinf", "isfinite", "logical_not", "invert", "sinc",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "power", "maximum", "minimum", "arctan2", "logaddexp", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "where", "clip", "astype",
    "stop_gradient", "real", "imag", "conj", "conjugate", "angle", "iscomplex", "isreal",
    "iscomplexobj", "isrealobj",
]

true_divide = divide
mod = remainder


def clip(x: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None,
         max: Any = None) -> Any:
    """Limit ``x`` to ``[min, max]`` (either bound may be ``None``). The bounds
    may be given positionally, or by NumPy 2's and jax.numpy's names
    ``min=``/``max=`` or by the older ``a_min=``/``a_max=``.

    At a bound the gradient is shared between ``x`` and the bound, as
    ``minimum``/``maximum`` do.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.clip(mx.array([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()
    [0.0, 0.5, 1.0]
    >>> fnp.clip(mx.array([-2.0, 0.5, 3.0]), max=1.0).tolist()
    [-2.0, 0.5, 1.0]
    """
    lower = _one_bound(a_min, min, "a_min", "min")
    upper = _one_bound(a_max, max, "a_max", "max")
    if lower is None and upper is None:
        raise ValueError("clip: give at least one bound (min= or max=)")
    if lower is not None:
        x = maximum(x, lower)
    if upper is not None:
        x = minimum(x, upper)
    return x


def _one_bound(old: Any, new: Any, old_name: str, new_name: str) -> Any:
    """A bound of ``clip`` given by one of its two names, not both."""
    if old is not None and new is not None:
        raise TypeError(
            f"clip: {old_name} and {new_name} are two names for the same bound; give one")
    return new if old is None else old


def astype(x: Any, dtype: DTypeLike) -> Any:
    """``x`` cast to ``dtype`` (in any spelling: ``mx.int32``, ``int``,
    ``np.int32``, ``"int32"``); gradients flow between floating and complex
    dtypes only (a cast from complex to real keeps the real part).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.astype(mx.array([1.7]), mx.int32).tolist()
    [1]
    >>> fnp.astype(mx.array([1, 2]), float).dtype
    mlx.core.float32
    """
    return lax.astype(x, to_mlx_dtype(dtype, "astype: dtype"))


# ----------------------------------------------------------------------------
# Complex numbers
# ----------------------------------------------------------------------------


def real(x: Any) -> Any:
    """The real part of ``x``: float32 for complex64, ``x`` itself for a real
    array, as ``jax.numpy.real``. Differentiable (its transpose embeds a real
    cotangent as ``ct + 0j``; see ``ftorch.grad`` for the convention).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.real(mx.array([1 + 2j, 3 - 1j])).tolist()
    [1.0, 3.0]
    """
    x = as_array(x, "real: x")
    return lax.real(x) if is_complex(aval_of(x).dtype) else x


def imag(x: Any) -> Any:
    """The imaginary part of ``x``: float32 for complex64, zeros for a real
    array, as ``jax.numpy.imag``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.imag(mx.array([1 + 2j, 3 - 1j])).tolist()
    [2.0, -1.0]
    """
    x = as_array(x, "imag: x")
    return lax.imag(x) if is_complex(aval_of(x).dtype) else lax.zeros_like(x)


def conj(x: Any) -> Any:
    """The complex conjugate of ``x`` (``x`` itself when real), as
    ``jax.numpy.conj``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.conj(mx.array([1 + 2j])).tolist()
    [(1-2j)]
    """
    x = as_array(x, "conj: x")
    return lax.conj(x) if is_complex(aval_of(x).dtype) else x


conjugate = conj


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z`` in ``(-pi, pi]`` (in degrees with ``deg``), as
    ``jax.numpy.angle``: ``arctan2(imag(z), real(z))``; float32 for complex
    input, and for real input ``0`` or ``pi`` by sign.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.angle(mx.array([1j, -1.0]), deg=True).tolist()
    [90.0, 180.0]
    """
    z = as_array(z, "angle: z")
    dtype = aval_of(z).dtype
    if not is_complex(dtype) and dtype not in (mx.float16, mx.bfloat16, mx.float32,
                                               mx.float64):
        z = lax.astype(z, mx.float32)
    out = arctan2(imag(z), real(z))
    return lax.multiply(out, 180.0 / math.pi) if deg else out


def sinc(x: Any) -> Any:
    """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, as
    ``jax.numpy.sinc`` (integers compute in float32); its derivatives at 0
    are the limits, not NaN (``ftorch.lax.sinc``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.sinc(mx.array([0.0, 1.0])).tolist()
    [1.0, 0.0]
    """
    x = as_array(x, "sinc: x")
    if aval_of(x).dtype not in (mx.float16, mx.bfloat16, mx.float32, mx.float64):
        if is_complex(aval_of(x).dtype):
            raise TypeError("sinc: complex input is not supported")
        x = lax.astype(x, mx.float32)
    return lax.sinc(x)


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (its values aside), as
    ``jax.numpy.iscomplexobj``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.iscomplexobj(mx.array([1.0 + 0j])), fnp.iscomplexobj(mx.array([1.0]))
    (True, False)
    """
    return is_complex(aval_of(x).dtype)


def isrealobj(x: Any) -> bool:
    """Whether ``x`` has a non-complex dtype, as ``jax.numpy.isrealobj``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isrealobj(mx.array([1.0]))
    True
    """
    return not iscomplexobj(x)


def iscomplex(x: Any) -> Any:
    """Elementwise: whether the imaginary part is nonzero, as
    ``jax.numpy.iscomplex``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.iscomplex(mx.array([1 + 0j, 1j])).tolist()
    [False, True]
    """
    return not_equal(imag(x), 0)


def isreal(x: Any) -> Any:
    """Elementwise: whether the imaginary part is zero, as ``jax.numpy.isreal``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isreal(mx.array([1 + 0j, 1j])).tolist()
    [True, False]
    """
    return equal(imag(x), 0)


#: ``numpy.around``'s name for ``round``, as jax.numpy has it.
around = round

#: The array type, as ``jax.numpy.ndarray`` (``isinstance(x, fnp.ndarray)``): MLX's array.
ndarray = mx.array
