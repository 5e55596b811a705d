"""Array creation and dtypes. These make new arrays from shapes and values;
none is a primitive: ``zeros_like(x)`` needs only ``x``'s shape, so it is
constant under every transform, and ``full``/``asarray`` of a traced value
go through differentiable ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from ftorch.core import Tracer, as_array, aval_of

__all__ = [
    "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
    "empty", "empty_like", "arange", "linspace", "eye", "identity", "result_type",
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool_", "complex64", "pi", "e", "inf", "nan",
    "newaxis",
]

float16, bfloat16, float32, float64 = mx.float16, mx.bfloat16, mx.float32, mx.float64
int8, int16, int32, int64 = mx.int8, mx.int16, mx.int32, mx.int64
uint8, uint16, uint32, uint64 = mx.uint8, mx.uint16, mx.uint32, mx.uint64
bool_, complex64 = mx.bool_, mx.complex64
pi, e, inf, nan = mx.pi, mx.e, mx.inf, mx.nan
newaxis = None

Shape = int | Sequence[int]


def _shape(shape: Shape) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def asarray(x: Any, dtype: mx.Dtype | None = None) -> Any:
    """``x`` as an array (a traced value stays traced; lists, scalars and
    NumPy arrays become ``mx.array``).

    >>> import ftorch.numpy as fnp
    >>> fnp.asarray([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    if isinstance(x, (mx.array, Tracer)):
        if dtype is None or x.dtype == dtype:
            return x
        from ftorch import numpy as fnp

        return fnp.astype(x, dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(v, Tracer) for v in x):
        from ftorch import numpy as fnp

        return asarray(fnp.stack([asarray(v) for v in x]), dtype)
    return mx.array(x, dtype=dtype) if dtype is not None else as_array(x, "asarray: x")


array = asarray


def zeros(shape: Shape, dtype: mx.Dtype = mx.float32) -> mx.array:
    """An array of zeros. ``fnp.zeros((2, 3)).shape == (2, 3)``"""
    return mx.zeros(_shape(shape), dtype)


def ones(shape: Shape, dtype: mx.Dtype = mx.float32) -> mx.array:
    """An array of ones. ``fnp.ones(3).tolist() == [1.0, 1.0, 1.0]``"""
    return mx.ones(_shape(shape), dtype)


def full(shape: Shape, fill_value: Any, dtype: mx.Dtype | None = None) -> Any:
    """An array filled with ``fill_value`` (differentiable in ``fill_value``).

    >>> import ftorch.numpy as fnp
    >>> fnp.full((2,), 7.0).tolist()
    [7.0, 7.0]
    """
    if isinstance(fill_value, Tracer):
        from ftorch import numpy as fnp

        return fnp.broadcast_to(asarray(fill_value, dtype), _shape(shape))
    if dtype is None:
        return mx.full(_shape(shape), fill_value)
    return mx.full(_shape(shape), fill_value, dtype)


def zeros_like(x: Any, dtype: mx.Dtype | None = None) -> mx.array:
    """Zeros with ``x``'s shape and dtype (constant under every transform)."""
    a = aval_of(x)
    return mx.zeros(a.shape, dtype or a.dtype)


def ones_like(x: Any, dtype: mx.Dtype | None = None) -> mx.array:
    """Ones with ``x``'s shape and dtype (constant under every transform)."""
    a = aval_of(x)
    return mx.ones(a.shape, dtype or a.dtype)


def full_like(x: Any, fill_value: Any, dtype: mx.Dtype | None = None) -> Any:
    """``fill_value`` with ``x``'s shape (and dtype unless given)."""
    a = aval_of(x)
    return full(a.shape, fill_value, dtype or a.dtype)


empty, empty_like = zeros, zeros_like


def arange(start: float, stop: float | None = None, step: float | None = None,
           dtype: mx.Dtype | None = None) -> mx.array:
    """Evenly spaced values in ``[start, stop)``, as ``numpy.arange``.

    >>> import ftorch.numpy as fnp
    >>> fnp.arange(3).tolist()
    [0, 1, 2]
    """
    if stop is None:
        start, stop = 0, start
    args = (start, stop) if step is None else (start, stop, step)
    return mx.arange(*args, dtype=dtype) if dtype is not None else mx.arange(*args)


def linspace(start: float, stop: float, num: int = 50, dtype: mx.Dtype = mx.float32) -> mx.array:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive.

    >>> import ftorch.numpy as fnp
    >>> fnp.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    return mx.linspace(start, stop, num, dtype=dtype)


def eye(n: int, m: int | None = None, k: int = 0, dtype: mx.Dtype = mx.float32) -> mx.array:
    """The ``n x m`` matrix with ones on diagonal ``k``.

    >>> import ftorch.numpy as fnp
    >>> fnp.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return mx.eye(n, m, k, dtype=dtype)


def identity(n: int, dtype: mx.Dtype = mx.float32) -> mx.array:
    """The ``n x n`` identity matrix."""
    return mx.eye(n, dtype=dtype)


def result_type(*args: Any) -> mx.Dtype:
    """The dtype MLX promotes ``args`` (arrays, scalars or dtypes) to.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.result_type(mx.ones(1, mx.float16), 2.0)
    mlx.core.float16
    """
    placeholders = [mx.zeros((), a) if isinstance(a, mx.Dtype) else
                    (mx.zeros((), aval_of(a).dtype) if isinstance(a, (mx.array, Tracer)) else a)
                    for a in args]
    out = placeholders[0]
    for p in placeholders[1:]:
        out = mx.add(out, p)
    return out.dtype if isinstance(out, mx.array) else mx.array(out).dtype
