"""Array creation for the primitive layer: the strict constructors rules
and other families build arrays with, and the parsing of static arguments
(shapes and sizes) that both layers share. None is a primitive:
``zeros_like(x)`` needs only ``x``'s shape and dtype, so it is a constant
under every transform, and ``full`` of a traced value broadcasts it with
differentiable ops.

The strict constructors take a full shape (a tuple of non-negative ints) and
an MLX dtype: ``zeros(shape, dtype)``, ``full(shape, fill_value, dtype)``,
``zeros_like(x)``, ``ones_like(x)``, ``full_like(x, fill_value)``.
``ftorch.numpy`` parses shapes and dtype spellings, and has the rest
(``asarray``, ``arange``, ``linspace``, ``eye``...).

Shapes and sizes must be Python ints when an op runs (``static_shape``,
``static_int``): a traced size raises its transform's error (under jit,
``ConcretizationError``) naming the op and the argument. An array too large
for the device is a ``MemoryError`` (``ftorch.memory``).

>>> import ftorch.lax as lax, mlx.core as mx
>>> lax.full((2,), 7.0, mx.float32).tolist(), lax.zeros_like(mx.ones(2, mx.int32)).tolist()
([7.0, 7.0], [0, 0])
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.core import Tracer, aval_of
from ftorch.memory import check_fits

__all__ = ["zeros", "zeros_like", "ones_like", "full", "full_like"]

# MLX stores each dimension as a 32-bit int.
_LARGEST_DIMENSION = 2**31 - 1
_INTEGER_DTYPES = (mx.int8, mx.int16, mx.int32, mx.int64, mx.uint8, mx.uint16, mx.uint32,
                   mx.uint64, mx.bool_)


# ----------------------------------------------------------------------------
# Static arguments: shapes and sizes must be Python ints when the op runs
# ----------------------------------------------------------------------------


def describe_value(value: Any) -> str:
    """A value as error messages name it."""
    return value.describe() if isinstance(value, Tracer) else repr(value)


def _traced_int(value: Tracer, fname: str, what: str) -> int:
    """The value of an integer tracer, if its transform knows it (grad, jvp).
    Under jit and vmap there is no one value: their error (ConcretizationError,
    or vmap's "varies over the mapped axis"), prefixed with what needed it."""
    if value.ndim or value.dtype not in _INTEGER_DTYPES:
        raise TypeError(f"{fname}: {what} must be an int, got {describe_value(value)}")
    try:
        return operator.index(value)
    except TypeError as e:
        e.args = (f"{fname}: {what} must be a static Python int, not a traced value; {e}",)
        raise


def static_int(value: Any, fname: str, what: str) -> int:
    """``value`` as a Python int: an int, a NumPy integer, a 0-d integer array,
    or a traced integer with a concrete value. ``fname`` and ``what`` name the
    function and the argument in errors.

    >>> import mlx.core as mx, numpy as np
    >>> from ftorch.primitives.creation import static_int
    >>> static_int(np.int64(3), "eye", "N"), static_int(mx.array(2), "eye", "N")
    (3, 2)
    """
    if type(value) is int:
        return value
    if isinstance(value, Tracer):
        return _traced_int(value, fname, what)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be an int, got {describe_value(value)}") from None


def static_size(value: Any, fname: str, what: str) -> int:
    """A static int that is a length: non-negative, and small enough for MLX."""
    n = static_int(value, fname, what)
    check_length(n, fname, what)
    return n


def check_length(n: int, fname: str, what: str, at: str = "") -> None:
    if n < 0:
        raise ValueError(f"{fname}: {what} must not be negative, got {n}{at}")
    if n > _LARGEST_DIMENSION:
        raise ValueError(
            f"{fname}: {what} must be at most 2**31 - 1 (MLX's largest dimension), "
            f"got {n}{at}")


def static_shape(shape: Any, fname: str, what: str = "shape") -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative
    Python ints; integer-like values (NumPy integers, 0-d integer arrays)
    count as ints. Errors name ``fname``, ``what`` and the position.

    >>> import numpy as np
    >>> from ftorch.primitives.creation import static_shape
    >>> static_shape(3, "zeros"), static_shape([2, np.int64(3)], "zeros")
    ((3,), (2, 3))
    >>> static_shape((2, 2.5), "zeros")
    Traceback (most recent call last):
    ...
    TypeError: zeros: shape must be an int or a sequence of ints, got 2.5 at position 1
    """
    # The common case, a tuple of valid ints, costs one pass.
    if type(shape) is tuple:
        for d in shape:
            if type(d) is not int or not 0 <= d <= _LARGEST_DIMENSION:
                break
        else:
            return shape
    elif type(shape) is int and 0 <= shape <= _LARGEST_DIMENSION:
        return (shape,)
    return _checked_shape(shape, fname, what)


def _checked_shape(shape: Any, fname: str, what: str) -> tuple[int, ...]:
    """``static_shape`` for everything but a tuple of valid ints: converts,
    or says what is wrong and where."""
    single = isinstance(shape, str) or (
        not isinstance(shape, Sequence) and getattr(shape, "ndim", 0) == 0)
    try:
        items = [shape] if single else list(shape)
    except TypeError:  # not iterable: a float, None, an object
        items, single = [shape], True
    dims = []
    for i, d in enumerate(items):
        at = "" if single else f" at position {i}"
        if type(d) is int:
            n = d
        elif isinstance(d, Tracer):
            if d.ndim or d.dtype not in _INTEGER_DTYPES:
                raise TypeError(_not_a_shape(d, fname, what, at))
            n = _traced_int(d, fname, f"{what}{at}")
        else:
            try:
                n = operator.index(d)
            except TypeError:
                raise TypeError(_not_a_shape(d, fname, what, at)) from None
        check_length(n, fname, what if single else f"sizes in {what}", at)
        dims.append(n)
    return tuple(dims)


def _not_a_shape(d: Any, fname: str, what: str, at: str) -> str:
    return f"{fname}: {what} must be an int or a sequence of ints, got {describe_value(d)}{at}"


def static_number(value: Any, fname: str, what: str) -> int | float:
    """A Python number from a number, a NumPy scalar, a 0-d array or a traced
    0-d value with a concrete value (as ``_traced_int``)."""
    if type(value) in (int, float):
        return value
    number = value
    if isinstance(value, Tracer) and not value.ndim:
        try:
            number = value.item()
        except TypeError as e:
            e.args = (f"{fname}: {what} must be a static Python number, not a traced "
                      f"value; {e}",)
            raise
    elif isinstance(value, (np.generic, np.ndarray, mx.array)) and value.ndim == 0:
        number = value.item()
    if isinstance(number, (int, float)):
        return number
    raise TypeError(f"{fname}: {what} must be a real number, got {describe_value(value)}")


# ----------------------------------------------------------------------------
# Strict constructors
# ----------------------------------------------------------------------------


def zeros(shape: tuple[int, ...], dtype: mx.Dtype) -> mx.array:
    """Zeros of the full ``shape`` and the MLX ``dtype``."""
    check_fits(shape, dtype, "zeros")
    return mx.zeros(shape, dtype)


def _filled_like(make: Any, x: Any, fname: str) -> mx.array:
    a = aval_of(x)
    # x may be a broadcast view, which takes no memory: its shape may not fit.
    check_fits(a.shape, a.dtype, fname)
    return make(a.shape, a.dtype)


def zeros_like(x: Any) -> mx.array:
    """Zeros with ``x``'s shape and dtype: an array, or a tracer, whose value
    it never reads (so the result is a constant under every transform)."""
    return _filled_like(mx.zeros, x, "zeros_like")


def ones_like(x: Any) -> mx.array:
    """Ones with ``x``'s shape and dtype (a constant under every transform)."""
    return _filled_like(mx.ones, x, "ones_like")


def full(shape: tuple[int, ...], fill_value: Any, dtype: mx.Dtype | None) -> Any:
    """``fill_value`` broadcast to the full ``shape``, cast to the MLX
    ``dtype`` (``None``: ``fill_value``'s own); differentiable in a traced
    ``fill_value``."""
    return _full(shape, fill_value, dtype, "full")


def full_like(x: Any, fill_value: Any) -> Any:
    """``fill_value`` with ``x``'s shape and dtype."""
    a = aval_of(x)
    return _full(a.shape, fill_value, a.dtype, "full_like")


def _full(shape: tuple[int, ...], fill_value: Any, dtype: mx.Dtype | None, fname: str) -> Any:
    check_fits(shape, aval_of(fill_value).dtype if dtype is None else dtype, fname)
    if isinstance(fill_value, Tracer):
        if dtype is not None:
            fill_value = lax.astype(fill_value, dtype)
        return lax.broadcast_to(fill_value, shape)
    if dtype is not None:
        # mx.full(shape, v, dtype) keeps v's own dtype for some dtypes (a bool
        # dtype, an int dtype with a float v): cast the value instead.
        fill_value = fill_value.astype(dtype) if isinstance(fill_value, mx.array) else \
            mx.array(fill_value, dtype=dtype)
    return mx.full(shape, fill_value)
