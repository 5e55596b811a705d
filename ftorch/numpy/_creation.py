"""Array creation and dtypes as in NumPy / jax.numpy: ``array`` /
``asarray``, ``zeros``, ``ones``, ``full``, ``empty`` and their ``*_like``
forms, ``arange``, ``linspace``, ``eye``, ``identity``, ``tri`` and the
triangle indices, ``result_type``,
the dtype names and the constants (``pi``, ``inf``, ``newaxis``...).

Shapes, sizes and dtypes are parsed here (a dtype in any spelling,
``ftorch.dtypes``; shapes by ``static_shape`` of the primitive layer, whose
errors name the function and the argument), then handed to the strict
constructors of ``ftorch.primitives.creation`` or to MLX.

>>> import ftorch.numpy as fnp
>>> fnp.zeros((2, 3), dtype="int8").dtype, fnp.arange(3).tolist()
(mlx.core.int8, [0, 1, 2])
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Tracer, as_array, aval_of, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.memory import check_fits
from ftorch.primitives.creation import (
    check_length,
    static_int,
    static_number,
    static_shape,
    static_size,
)
from ftorch.typing import ShapeLike

__all__ = [
    "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
    "empty", "empty_like", "arange", "linspace", "eye", "identity", "tri", "tril_indices",
    "triu_indices", "tril_indices_from", "triu_indices_from", "result_type",
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool_", "complex64", "pi", "e", "inf", "nan",
    "newaxis", "geomspace", "logspace", "frombuffer", "fromiter", "fromstring", "from_dlpack",
]

float16, bfloat16, float32, float64 = mx.float16, mx.bfloat16, mx.float32, mx.float64
int8, int16, int32, int64 = mx.int8, mx.int16, mx.int32, mx.int64
uint8, uint16, uint32, uint64 = mx.uint8, mx.uint16, mx.uint32, mx.uint64
bool_, complex64 = mx.bool_, mx.complex64
pi, e, inf, nan = mx.pi, mx.e, mx.inf, mx.nan
newaxis = None



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
        return lax.astype(x, dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(v, Tracer) for v in x):
        return asarray(stacked([asarray(v) for v in x], 0, "asarray"), dtype)
    return mx.array(x, dtype=dtype) if dtype is not None else as_array(x, "asarray: x")


array = asarray


def stacked(arrays: list, axis: int, fname: str) -> Any:
    """Arrays of one shape joined along a new ``axis``, in their common
    dtype (``stack``, and ``asarray`` of a list of traced values)."""
    shape = tuple(arrays[0].shape)
    for i, a in enumerate(arrays):
        if tuple(a.shape) != shape:
            raise ValueError(f"{fname}: array {i} has shape {tuple(a.shape)}, expected {shape}")
    ndim = len(shape) + 1
    axis = check_axis(axis, ndim, fname, of=f"the result's ndim {ndim}")
    dtype = result_type(*arrays)
    parts = [lax.expand_dims(a if a.dtype == dtype else lax.astype(a, dtype), (axis,))
             for a in arrays]
    return parts[0] if len(parts) == 1 else lax.concatenate(parts, axis)


def _filled(make: Any, shape: Any, dtype: Any, fname: str) -> mx.array:
    """``make(shape, dtype)`` (mx.zeros, mx.ones) after checking the arguments."""
    shape = static_shape(shape, fname)
    dtype = mx.float32 if dtype is None else to_mlx_dtype(dtype, f"{fname}: dtype")
    check_fits(shape, dtype, fname)
    return make(shape, dtype)


def zeros(shape: ShapeLike, dtype: DTypeLike | None = None) -> mx.array:
    """An array of zeros (float32 unless ``dtype`` is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.zeros((2, 3)).shape, fnp.zeros(2, dtype=int).dtype
    ((2, 3), mlx.core.int32)
    """
    return _filled(mx.zeros, shape, dtype, "zeros")


def ones(shape: ShapeLike, dtype: DTypeLike | None = None) -> mx.array:
    """An array of ones (float32 unless ``dtype`` is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.ones(3, dtype=bool).tolist()
    [True, True, True]
    """
    return _filled(mx.ones, shape, dtype, "ones")


def empty(shape: ShapeLike, dtype: DTypeLike | None = None) -> mx.array:
    """An array of ``shape``: zeros, since MLX has no uninitialized arrays.

    >>> import ftorch.numpy as fnp
    >>> fnp.empty((2,), "float16").dtype
    mlx.core.float16
    """
    return _filled(mx.zeros, shape, dtype, "empty")


def full(shape: ShapeLike, fill_value: Any, dtype: DTypeLike | None = None) -> Any:
    """An array filled with ``fill_value`` (differentiable in ``fill_value``).

    >>> import ftorch.numpy as fnp
    >>> fnp.full((2,), 7.0).tolist()
    [7.0, 7.0]
    """
    return _full(static_shape(shape, "full"), fill_value, _dtype_or(dtype, None, "full"), "full")


def _full(shape: tuple[int, ...], fill_value: Any, dtype: mx.Dtype | None, fname: str) -> Any:
    check_fits(shape, aval_of(fill_value).dtype if dtype is None else dtype, fname)
    if isinstance(fill_value, Tracer):  # broadcast by NumPy's rules, with its errors
        fill_value = asarray(fill_value, dtype)
        if tuple(fill_value.shape) != shape:
            check_broadcasts_to(tuple(fill_value.shape), shape, fname)
            fill_value = lax.broadcast_to(fill_value, shape)
        return fill_value
    return lax.full(shape, fill_value, dtype)


def check_broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...], fname: str) -> None:
    """An error naming ``fname`` unless ``shape`` broadcasts to ``target`` by NumPy's rules."""
    if len(shape) > len(target) or any(
            d != s and d != 1 for d, s in zip(shape[::-1], target[::-1])):
        raise ValueError(f"{fname}: cannot broadcast shape {shape} to {target}")


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
        start, stop = 0, static_number(start, "arange", "stop")
    else:
        start = static_number(start, "arange", "start")
        stop = static_number(stop, "arange", "stop")
    args = (start, stop)
    if step is not None:
        step = static_number(step, "arange", "step")
        args = (start, stop, step)
    if step != 0 and all(math.isfinite(a) for a in args):  # else MLX says what is wrong
        length = max(0, math.ceil((stop - start) / (1 if step is None else step)))
        check_length(length, "arange", "the length of the result")
        check_fits((length,), mx.float32 if dtype is None else dtype, "arange")
    return mx.arange(*args, dtype=dtype) if dtype is not None else mx.arange(*args)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: DTypeLike | None = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive unless
    ``endpoint=False``), float32 unless ``dtype`` is given; with ``retstep=True`` also
    the step. ``num`` must be known when it runs; ``start`` and ``stop`` may be traced
    and may be arrays (the values then run along the new ``axis``), as in jax.numpy; it
    is differentiable in them.

    >>> import ftorch.numpy as fnp
    >>> fnp.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    >>> fnp.linspace(0, 1, 4, endpoint=False, retstep=True)[1].item()
    0.25
    """
    num = static_size(num, "linspace", "num")
    dtype = _dtype_or(dtype, mx.float32, "linspace")
    divisions = (num - 1 if endpoint else num) or 1
    simple = (endpoint and not retstep and axis == 0
              and not any(isinstance(b, Tracer) or np.ndim(b) for b in (start, stop)))
    if simple:
        check_fits((num,), dtype, "linspace")
        return mx.linspace(static_number(start, "linspace", "start"),
                           static_number(stop, "linspace", "stop"), num, dtype=dtype)
    out, step = _general_linspace(start, stop, num, divisions, dtype, axis)
    return (out, step) if retstep else out


def _general_linspace(start: Any, stop: Any, num: int, divisions: int, dtype: mx.Dtype,
                      axis: int) -> tuple[Any, Any]:
    """``linspace`` between array or traced bounds, from ops that differentiate."""
    from ftorch.numpy import _elementwise, _shape

    compute = dtype if is_floating(dtype) else mx.float32
    start, stop = (lax.astype(asarray(b), compute) for b in (start, stop))
    start, stop = _shape.broadcast_arrays(start, stop)
    ndim = len(aval_of(start).shape) + 1
    axis = check_axis(axis, ndim, "linspace")
    check_fits((num, *aval_of(start).shape), dtype, "linspace")
    fractions = mx.arange(num, dtype=compute) / divisions
    fractions = fractions.reshape((num,) + (1,) * (ndim - 1))
    # Weighted this way, the ends are start and stop exactly.
    out = (_shape.expand_dims(start, 0) * (1 - fractions)
           + _shape.expand_dims(stop, 0) * fractions)
    step = _elementwise.divide(stop - start, divisions)
    return lax.astype(_shape.moveaxis(out, 0, axis), dtype), step


def eye(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike | None = None) -> mx.array:
    """The ``N x M`` matrix with ones on diagonal ``k`` (float32 unless ``dtype``
    is given).

    >>> import ftorch.numpy as fnp
    >>> fnp.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    n = static_size(N, "eye", "N")
    m = n if M is None else static_size(M, "eye", "M")
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
    n = static_size(n, "identity", "n")
    dtype = _dtype_or(dtype, mx.float32, "identity")
    check_fits((n, n), dtype, "identity")
    return mx.eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike | None = None) -> mx.array:
    """The ``N x M`` matrix with ones on and below diagonal ``k`` and zeros
    above (float32 unless ``dtype`` is given), as ``numpy.tri``.

    >>> import ftorch.numpy as fnp
    >>> fnp.tri(2, 3, k=1, dtype=int).tolist()
    [[1, 1, 0], [1, 1, 1]]
    """
    n = static_size(N, "tri", "N")
    m = n if M is None else static_size(M, "tri", "M")
    k = static_int(k, "tri", "k")
    dtype = _dtype_or(dtype, mx.float32, "tri")
    check_fits((n, m), dtype, "tri")
    return mx.tri(n, m, k, dtype=dtype)


def _triangle_indices(lower: bool, n: Any, k: Any, m: Any, fname: str) -> tuple[mx.array, ...]:
    n = static_size(n, fname, "n")
    m = n if m is None else static_size(m, fname, "m")
    k = static_int(k, fname, "k")
    rows, cols = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    return mx.array(rows, dtype=mx.int32), mx.array(cols, dtype=mx.int32)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[mx.array, mx.array]:
    """The row and column indices (int32) of the elements on and below
    diagonal ``k`` of an ``n x m`` matrix (``m = n`` by default), in row-major
    order, as ``numpy.tril_indices``.

    >>> import ftorch.numpy as fnp
    >>> [i.tolist() for i in fnp.tril_indices(3, k=-1)]
    [[1, 2, 2], [0, 0, 1]]
    """
    return _triangle_indices(True, n, k, m, "tril_indices")


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[mx.array, mx.array]:
    """The row and column indices (int32) of the elements on and above
    diagonal ``k`` of an ``n x m`` matrix, as ``numpy.triu_indices``.

    >>> import ftorch.numpy as fnp
    >>> [i.tolist() for i in fnp.triu_indices(3, k=1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    return _triangle_indices(False, n, k, m, "triu_indices")


def _shape_2d(arr: Any, fname: str) -> tuple[int, int]:
    shape = tuple(aval_of(arr).shape) if isinstance(arr, (mx.array, Tracer)) else tuple(
        getattr(arr, "shape", None) or np.shape(arr))
    if len(shape) != 2:
        raise ValueError(f"{fname}: arr must be 2-D, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[mx.array, mx.array]:
    """``tril_indices`` for the shape of the 2-D ``arr`` (only its shape is read).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [i.tolist() for i in fnp.tril_indices_from(mx.zeros((2, 3)))]
    [[0, 1, 1], [0, 0, 1]]
    """
    n, m = _shape_2d(arr, "tril_indices_from")
    return _triangle_indices(True, n, k, m, "tril_indices_from")


def triu_indices_from(arr: Any, k: int = 0) -> tuple[mx.array, mx.array]:
    """``triu_indices`` for the shape of the 2-D ``arr`` (only its shape is read).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> [i.tolist() for i in fnp.triu_indices_from(mx.zeros((2, 3)), k=1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    n, m = _shape_2d(arr, "triu_indices_from")
    return _triangle_indices(False, n, k, m, "triu_indices_from")


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


# ----------------------------------------------------------------------------
# Log-spaced ranges
# ----------------------------------------------------------------------------


def _spaced_exponents(start: Any, stop: Any, num: Any, endpoint: bool, axis: Any,
                      fname: str) -> tuple[Any, int]:
    """``num`` evenly spaced values from ``start`` to ``stop`` (broadcast
    arrays allowed; ``stop`` left out unless ``endpoint``) along a new axis,
    rounded as jax.numpy.linspace rounds; and that axis."""
    num = static_size(num, fname, "num")
    start, stop = asarray(start), asarray(stop)
    dtype = result_type(start, stop)
    if not is_floating(dtype):
        dtype = mx.float32
    start, stop = lax.astype(start, dtype), lax.astype(stop, dtype)
    bounds = tuple(np.broadcast_shapes(tuple(start.shape), tuple(stop.shape)))
    axis = check_axis(static_int(axis, fname, "axis"), len(bounds) + 1, fname,
                      of=f"the result's ndim {len(bounds) + 1}")
    div = max(num - 1, 1) if endpoint else max(num, 1)
    t = lax.reshape(mx.arange(num, dtype=dtype) / div, (num,) + (1,) * len(bounds))
    out = lax.add(lax.multiply(start, 1 - t), lax.multiply(stop, t))
    if endpoint and num > 1:  # the last value exactly stop
        last = mx.arange(num).reshape((num,) + (1,) * len(bounds)) == num - 1
        out = lax.where(last, lax.broadcast_to(stop, tuple(out.shape[1:])), out)
    return out, axis


def _to_axis(out: Any, axis: int) -> Any:
    if axis == 0:
        return out
    perm = list(range(1, out.ndim))
    perm.insert(axis, 0)
    return lax.transpose(out, tuple(perm))


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: DTypeLike | None = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num, endpoint)``: ``num`` values
    spaced evenly on a log scale from ``base**start`` to ``base**stop``,
    along a new ``axis`` when the bounds are arrays. Differentiable in the
    bounds and ``base``.

    >>> import ftorch.numpy as fnp
    >>> fnp.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    exponents, axis = _spaced_exponents(start, stop, num, endpoint, axis, "logspace")
    base = asarray(base)
    out = lax.power(lax.astype(base, exponents.dtype), exponents)
    out = _to_axis(out, axis)
    dtype = _dtype_or(dtype, None, "logspace")
    return out if dtype is None else lax.astype(out, dtype)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              dtype: DTypeLike | None = None, axis: int = 0) -> Any:
    """``num`` values in a geometric progression from ``start`` to ``stop``
    (both nonzero and of one sign, else NaN, as in jax.numpy; ``stop`` left
    out unless ``endpoint``), along a new ``axis`` when the bounds are arrays.

    >>> import ftorch.numpy as fnp
    >>> [round(v, 3) for v in fnp.geomspace(1, 1000, 4).tolist()]
    [1.0, 10.0, 100.0, 1000.0]
    """
    start, stop = asarray(start), asarray(stop)
    if isinstance(start, mx.array) and isinstance(stop, mx.array) and (
            bool(mx.any(start == 0).item()) or bool(mx.any(stop == 0).item())):
        raise ValueError("geomspace: start and stop must be nonzero")
    kind = result_type(start, stop)
    inexact = kind if is_floating(kind) else mx.float32
    start, stop = lax.astype(start, inexact), lax.astype(stop, inexact)
    sign = lax.sign(start)
    exponents, axis = _spaced_exponents(lax.log10(lax.abs(start)), lax.log10(lax.abs(stop)),
                                        num, endpoint, axis, "geomspace")
    out = lax.multiply(sign, lax.power(lax.full((), 10.0, exponents.dtype), exponents))
    # Bounds of different signs have no geometric progression between them.
    out = lax.where(lax.equal(sign, lax.sign(stop)), out, mx.array(mx.nan, out.dtype))
    out = _to_axis(out, axis)
    dtype = _dtype_or(dtype, None, "geomspace")
    return out if dtype is None else lax.astype(out, dtype)


# ----------------------------------------------------------------------------
# Arrays from buffers, iterables, strings and DLPack
# ----------------------------------------------------------------------------


def _numpy_dtype(dtype: Any, fname: str) -> np.dtype:
    """``dtype`` as the NumPy dtype to read data in (Python's ``float``
    reads doubles, as NumPy; the result is then canonicalized)."""
    if dtype in (float, int, complex, bool):
        return np.dtype(dtype)
    try:
        return np.dtype(str(to_mlx_dtype(dtype, f"{fname}: dtype")).split(".")[-1])
    except TypeError:
        raise TypeError(f"{fname}: unsupported dtype {dtype!r}") from None


def _canonical(values: np.ndarray) -> mx.array:
    """Values read by NumPy as an array of the dtypes arrays default to, as
    jax.numpy without x64: 64-bit ints become 32-bit, doubles float32."""
    if values.dtype in (np.int64, np.uint64):
        values = values.astype(np.int32 if values.dtype == np.int64 else np.uint32)
    return asarray(np.array(values, order="C"))


def frombuffer(buffer: Any, dtype: DTypeLike = float, count: int = -1,
               offset: int = 0) -> mx.array:
    """A 1-D array of the values in ``buffer`` (bytes or any buffer),
    read as ``dtype`` (doubles by default, then float32 as every float),
    ``count`` of them (-1: all) from byte ``offset``, as ``numpy.frombuffer``.

    >>> import ftorch.numpy as fnp
    >>> fnp.frombuffer(b"\\x01\\x02", dtype="uint8").tolist()
    [1, 2]
    """
    values = np.frombuffer(buffer, dtype=_numpy_dtype(dtype, "frombuffer"),
                           count=static_int(count, "frombuffer", "count"),
                           offset=static_int(offset, "frombuffer", "offset"))
    return _canonical(values)


def fromiter(iterable: Any, dtype: DTypeLike = float, count: int = -1) -> mx.array:
    """A 1-D array of the values of ``iterable`` (``count`` of them, -1: all),
    as ``numpy.fromiter`` (jax.numpy refuses it as impure under ``jit``;
    here it runs eagerly).

    >>> import ftorch.numpy as fnp
    >>> fnp.fromiter(range(3), dtype=int).tolist()
    [0, 1, 2]
    """
    return _canonical(np.fromiter(iterable, dtype=_numpy_dtype(dtype, "fromiter"),
                               count=static_int(count, "fromiter", "count")))


def fromstring(string: str, dtype: DTypeLike = float, count: int = -1, *,
               sep: str) -> mx.array:
    """A 1-D array of the numbers in the text ``string`` separated by
    ``sep``, as ``numpy.fromstring`` in text mode.

    >>> import ftorch.numpy as fnp
    >>> fnp.fromstring("1, 2, 3", dtype=int, sep=",").tolist()
    [1, 2, 3]
    """
    if not sep:
        raise ValueError("fromstring: sep must be a non-empty separator; use frombuffer for "
                         "binary data")
    return _canonical(np.fromstring(string, dtype=_numpy_dtype(dtype, "fromstring"),
                                 count=static_int(count, "fromstring", "count"), sep=sep))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> mx.array:
    """An array from an object supporting the DLPack protocol (a NumPy
    array, a PyTorch tensor, ...), copied into an ``mx.array`` (MLX cannot
    share the memory). ``device`` must be None; ``copy=False`` is refused.

    >>> import ftorch.numpy as fnp, numpy as np
    >>> fnp.from_dlpack(np.arange(3)).tolist()
    [0, 1, 2]
    """
    if device is not None:
        raise NotImplementedError("from_dlpack: device is not supported")
    if copy is False:
        raise ValueError("from_dlpack: MLX arrays cannot share a DLPack buffer; the data is "
                         "always copied (pass copy=None or True)")
    if isinstance(x, (mx.array, Tracer)):
        return asarray(x)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not support DLPack")
    return _canonical(np.from_dlpack(x))
