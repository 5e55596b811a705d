"""Array creation and dtypes. These make new arrays from shapes and values;
none is a primitive: ``zeros_like(x)`` needs only ``x``'s shape, so it is
constant under every transform, and ``full``/``asarray`` of a traced value
go through differentiable ops.

Shapes and sizes must be Python ints when an op runs (``static_shape``,
``static_int``): a traced size raises its transform's error (under jit,
``ConcretizationError``) naming the op and the argument. Dtypes may be given
in any spelling (``ftorch.dtypes``), and an array too large for the device is
a ``MemoryError`` (``ftorch.memory``)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch.core import Tracer, as_array, aval_of, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.memory import check_fits

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

# MLX stores each dimension as a 32-bit int.
_LARGEST_DIMENSION = 2**31 - 1
_INTEGER_DTYPES = (mx.int8, mx.int16, mx.int32, mx.int64, mx.uint8, mx.uint16, mx.uint32,
                   mx.uint64, mx.bool_)


# ----------------------------------------------------------------------------
# Static arguments: shapes and sizes must be Python ints when the op runs
# ----------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A value as error messages name it."""
    return value.describe() if isinstance(value, Tracer) else repr(value)


def _traced_int(value: Tracer, fname: str, what: str) -> int:
    """The value of an integer tracer, if its transform knows it (grad, jvp).
    Under jit and vmap there is no one value: their error (ConcretizationError,
    or vmap's "varies over the mapped axis"), prefixed with what needed it."""
    if value.ndim or value.dtype not in _INTEGER_DTYPES:
        raise TypeError(f"{fname}: {what} must be an int, got {_show(value)}")
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
        raise TypeError(f"{fname}: {what} must be an int, got {_show(value)}") from None


def _size(value: Any, fname: str, what: str) -> int:
    """A static int that is a length: non-negative, and small enough for MLX."""
    n = static_int(value, fname, what)
    _check_length(n, fname, what)
    return n


def _check_length(n: int, fname: str, what: str, at: str = "") -> None:
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
        _check_length(n, fname, what if single else f"sizes in {what}", at)
        dims.append(n)
    return tuple(dims)


def _not_a_shape(d: Any, fname: str, what: str, at: str) -> str:
    return f"{fname}: {what} must be an int or a sequence of ints, got {_show(d)}{at}"


def _static_number(value: Any, fname: str, what: str) -> int | float:
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
    raise TypeError(f"{fname}: {what} must be a real number, got {_show(value)}")


def _dtype_or(dtype: Any, default: mx.Dtype | None, fname: str) -> mx.Dtype | None:
    """A dtype argument as an MLX dtype; ``default`` when it is None."""
    if dtype is None:
        return default
    return to_mlx_dtype(dtype, f"{fname}: dtype")


# ----------------------------------------------------------------------------
# Creation ops
# ----------------------------------------------------------------------------


def asarray(x: Any, dtype: DTypeLike | None = None) -> Any:
    """``x`` as an array (a traced value stays traced; lists, scalars and
    NumPy arrays become ``mx.array``), cast to ``dtype`` if given.

    >>> import ftorch.numpy as fnp
    >>> fnp.asarray([1.0, 2.0]).tolist()
    [1.0, 2.0]
    >>> fnp.asarray([1, 2], dtype=float).dtype
    mlx.core.float32
    """
    if dtype is not None:  # asarray is on many rules' paths: no call when None
        dtype = to_mlx_dtype(dtype, "asarray: dtype")
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


def _filled(make: Any, shape: Any, dtype: Any, fname: str) -> mx.array:
    """``make(shape, dtype)`` (mx.zeros, mx.ones) after checking the arguments."""
    shape = static_shape(shape, fname)
    dtype = mx.float32 if dtype is None else to_mlx_dtype(dtype, f"{fname}: dtype")
    check_fits(shape, dtype, fname)
    return make(shape, dtype)


def zeros(shape: Shape, dtype: DTypeLike | None = None) -> mx.array:
    """An array of zeros (float32 unless ``dtype`` is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.zeros((2, 3)).shape, fnp.zeros(2, dtype=int).dtype
    ((2, 3), mlx.core.int32)
    """
    return _filled(mx.zeros, shape, dtype, "zeros")


def ones(shape: Shape, dtype: DTypeLike | None = None) -> mx.array:
    """An array of ones (float32 unless ``dtype`` is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.ones(3, dtype=bool).tolist()
    [True, True, True]
    """
    return _filled(mx.ones, shape, dtype, "ones")


def empty(shape: Shape, dtype: DTypeLike | None = None) -> mx.array:
    """An array of ``shape``: zeros, since MLX has no uninitialized arrays.

    >>> import ftorch.numpy as fnp
    >>> fnp.empty((2,), "float16").dtype
    mlx.core.float16
    """
    return _filled(mx.zeros, shape, dtype, "empty")


def full(shape: Shape, fill_value: Any, dtype: DTypeLike | None = None) -> Any:
    """An array filled with ``fill_value`` (differentiable in ``fill_value``).

    >>> import ftorch.numpy as fnp
    >>> fnp.full((2,), 7.0).tolist()
    [7.0, 7.0]
    """
    return _full(static_shape(shape, "full"), fill_value, _dtype_or(dtype, None, "full"), "full")


def _full(shape: tuple[int, ...], fill_value: Any, dtype: mx.Dtype | None, fname: str) -> Any:
    check_fits(shape, aval_of(fill_value).dtype if dtype is None else dtype, fname)
    if isinstance(fill_value, Tracer):
        from ftorch import numpy as fnp

        return fnp.broadcast_to(asarray(fill_value, dtype), shape)
    if dtype is not None:
        # mx.full(shape, v, dtype) keeps v's own dtype for some dtypes (a bool
        # dtype, an int dtype with a float v): cast the value instead.
        fill_value = fill_value.astype(dtype) if isinstance(fill_value, mx.array) else \
            mx.array(fill_value, dtype=dtype)
    return mx.full(shape, fill_value)


def _filled_like(make: Any, x: Any, dtype: Any, fname: str) -> mx.array:
    a = aval_of(x)
    # x may be a broadcast view, which takes no memory: its shape may not fit.
    dtype = a.dtype if dtype is None else to_mlx_dtype(dtype, f"{fname}: dtype")
    check_fits(a.shape, dtype, fname)
    return make(a.shape, dtype)


def zeros_like(x: Any, dtype: DTypeLike | None = None) -> mx.array:
    """Zeros with ``x``'s shape and dtype (constant under every transform).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.zeros_like(mx.ones((2, 1)), dtype="int8").tolist()
    [[0], [0]]
    """
    return _filled_like(mx.zeros, x, dtype, "zeros_like")


def ones_like(x: Any, dtype: DTypeLike | None = None) -> mx.array:
    """Ones with ``x``'s shape and dtype (constant under every transform).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ones_like(mx.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return _filled_like(mx.ones, x, dtype, "ones_like")


def empty_like(x: Any, dtype: DTypeLike | None = None) -> mx.array:
    """``zeros_like``: MLX has no uninitialized arrays.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.empty_like(mx.ones(2)).shape
    (2,)
    """
    return _filled_like(mx.zeros, x, dtype, "empty_like")


def full_like(x: Any, fill_value: Any, dtype: DTypeLike | None = None) -> Any:
    """``fill_value`` with ``x``'s shape (and dtype unless given).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.full_like(mx.zeros(2, mx.int32), 3).tolist()
    [3, 3]
    """
    a = aval_of(x)
    return _full(a.shape, fill_value, _dtype_or(dtype, a.dtype, "full_like"), "full_like")


def arange(start: Any, stop: Any = None, step: Any = None,
           dtype: DTypeLike | None = None) -> mx.array:
    """Evenly spaced values in ``[start, stop)``, as ``numpy.arange``. The
    bounds and step must be known when it runs (not traced under jit or vmap).

    >>> import ftorch.numpy as fnp
    >>> fnp.arange(3).tolist()
    [0, 1, 2]
    >>> fnp.arange(0, 1, 0.25, dtype="float16").tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    dtype = _dtype_or(dtype, None, "arange")
    if stop is None:
        start, stop = 0, _static_number(start, "arange", "stop")
    else:
        start = _static_number(start, "arange", "start")
        stop = _static_number(stop, "arange", "stop")
    args = (start, stop)
    if step is not None:
        step = _static_number(step, "arange", "step")
        args = (start, stop, step)
    if step != 0 and all(math.isfinite(a) for a in args):  # else MLX says what is wrong
        length = max(0, math.ceil((stop - start) / (1 if step is None else step)))
        _check_length(length, "arange", "the length of the result")
        check_fits((length,), mx.float32 if dtype is None else dtype, "arange")
    return mx.arange(*args, dtype=dtype) if dtype is not None else mx.arange(*args)


def linspace(start: Any, stop: Any, num: int = 50,
             dtype: DTypeLike | None = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive
    (float32 unless ``dtype`` is given). ``num`` must be known when it runs;
    ``start`` and ``stop`` may be traced (it is differentiable in them).

    >>> import ftorch.numpy as fnp
    >>> fnp.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    num = _size(num, "linspace", "num")
    dtype = _dtype_or(dtype, mx.float32, "linspace")
    check_fits((num,), dtype, "linspace")
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        return _traced_linspace(start, stop, num, dtype)
    return mx.linspace(_static_number(start, "linspace", "start"),
                       _static_number(stop, "linspace", "stop"), num, dtype=dtype)


def _traced_linspace(start: Any, stop: Any, num: int, dtype: mx.Dtype) -> Any:
    """``linspace`` between traced bounds, from ops that differentiate."""
    from ftorch import numpy as fnp

    for what, bound in (("start", start), ("stop", stop)):
        if aval_of(bound).shape:
            raise TypeError(f"linspace: {what} must be a scalar, got {_show(bound)}")
    fractions = mx.linspace(0, 1, num, dtype=dtype if is_floating(dtype) else mx.float32)
    # Weighted this way, the ends are start and stop exactly.
    out = start * (1 - fractions) + stop * fractions
    return fnp.astype(out, dtype)


def eye(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike | None = None) -> mx.array:
    """The ``N x M`` matrix with ones on diagonal ``k`` (float32 unless ``dtype``
    is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    n = _size(N, "eye", "N")
    m = n if M is None else _size(M, "eye", "M")
    k = static_int(k, "eye", "k")
    dtype = _dtype_or(dtype, mx.float32, "eye")
    check_fits((n, m), dtype, "eye")
    return mx.eye(n, m, k, dtype=dtype)


def identity(n: int, dtype: DTypeLike | None = None) -> mx.array:
    """The ``n x n`` identity matrix (float32 unless ``dtype`` is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.identity(2, dtype=int).tolist()
    [[1, 0], [0, 1]]
    """
    n = _size(n, "identity", "n")
    dtype = _dtype_or(dtype, mx.float32, "identity")
    check_fits((n, n), dtype, "identity")
    return mx.eye(n, dtype=dtype)


def result_type(*args: Any) -> mx.Dtype:
    """The dtype MLX promotes ``args`` to: arrays, Python scalars (weakly
    typed: they do not widen an array's dtype) and dtypes in any spelling
    (Python types are weak too, as in jax.numpy).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.result_type(mx.ones(1, mx.float16), 2.0)
    mlx.core.float16
    >>> fnp.result_type("int8", float), fnp.result_type("int8", "float32")
    (mlx.core.float32, mlx.core.float32)
    """
    if not args:
        raise ValueError("result_type: give at least one array, scalar or dtype")
    placeholders = [_promotion_placeholder(a, i) for i, a in enumerate(args)]
    out = placeholders[0]
    for p in placeholders[1:]:
        out = mx.add(out, p)
    return out.dtype if isinstance(out, mx.array) else mx.array(out).dtype


_WEAK_PLACEHOLDERS = {bool: False, int: 0, float: 0.0, complex: 0j}


def _promotion_placeholder(arg: Any, position: int) -> Any:
    """What takes ``arg``'s part in MLX's promotion: a 0-d array of its dtype,
    or a Python scalar for a Python scalar or type (weakly typed)."""
    if isinstance(arg, (mx.array, Tracer)):
        return mx.zeros((), aval_of(arg).dtype)
    if isinstance(arg, type) and arg in _WEAK_PLACEHOLDERS:
        return _WEAK_PLACEHOLDERS[arg]
    if isinstance(arg, (mx.Dtype, str, type, np.dtype)):
        return mx.zeros((), to_mlx_dtype(arg, f"result_type: argument {position}"))
    return arg
