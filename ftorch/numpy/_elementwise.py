"""Elementwise ops as in NumPy / jax.numpy: unary and binary math,
comparisons, logic, ``where``, ``clip``, casts and ``stop_gradient``.

The unary and binary ops, ``where`` and ``round`` are the strict wrappers
of ``ftorch.primitives.elementwise`` themselves (MLX broadcasts and promotes
their operands, Python scalars included). Here are what does more: ``astype``
(a dtype in any spelling), ``clip`` (bounds by either of their names),
``stop_gradient`` (over a pytree) and the aliases ``true_divide`` and ``mod``.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.clip(fnp.exp(mx.zeros(2)), 0.0, 0.5).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

from typing import Any

import ftorch.primitives as lax
from ftorch import tree
from ftorch.dtypes import DTypeLike, to_mlx_dtype
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
    "round", "isnan", "isinf", "isfinite", "logical_not", "invert",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "power", "maximum", "minimum", "arctan2", "logaddexp", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "where", "clip", "astype",
    "stop_gradient",
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
    ``np.int32``, ``"int32"``); gradients flow between floating dtypes only.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.astype(mx.array([1.7]), mx.int32).tolist()
    [1]
    >>> fnp.astype(mx.array([1, 2]), float).dtype
    mlx.core.float32
    """
    return lax.astype(x, to_mlx_dtype(dtype, "astype: dtype"))


def stop_gradient(x: Any) -> Any:
    """The identity whose derivative is zero; applies to every leaf of a pytree.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.grad(lambda x: x * ft.stop_gradient(x))(mx.array(3.0)).item()
    3.0
    """
    return tree.map(lax.stop_gradient, x)
