"""Dtype arguments: every spelling jax.numpy accepts, as an MLX dtype.

Wherever ftorch takes a dtype, it may be an MLX dtype (``mx.float32``), a
Python type (``float``), a NumPy dtype or scalar type (``np.float32``,
``np.dtype("int64")``) or a dtype name (``"bfloat16"``). Python types map to
MLX's defaults, as jax.numpy maps them to its own: ``bool`` -> bool_,
``int`` -> int32, ``float`` -> float32, ``complex`` -> complex64. Explicit
64-bit NumPy types and names give MLX's 64-bit dtypes.
"""

from __future__ import annotations

import difflib
from typing import Any

import mlx.core as mx
import numpy as np

__all__ = ["to_mlx_dtype", "promote_types", "DTypeLike", "DTYPES_BY_NAME"]

#: What a dtype argument may be (see ``to_mlx_dtype``).
DTypeLike = mx.Dtype | type | str | np.dtype

#: MLX's dtypes by their NumPy names (``bfloat16`` as ml_dtypes spells it).
DTYPES_BY_NAME: dict[str, mx.Dtype] = {
    "bool": mx.bool_, "uint8": mx.uint8, "uint16": mx.uint16, "uint32": mx.uint32,
    "uint64": mx.uint64, "int8": mx.int8, "int16": mx.int16, "int32": mx.int32,
    "int64": mx.int64, "float16": mx.float16, "bfloat16": mx.bfloat16,
    "float32": mx.float32, "float64": mx.float64, "complex64": mx.complex64,
}

# The Python types and their names stand for MLX's default dtype of each kind.
_PYTHON_TYPES = {bool: mx.bool_, int: mx.int32, float: mx.float32, complex: mx.complex64}
_ALL_NAMES = {**DTYPES_BY_NAME, "bool_": mx.bool_, "int": mx.int32, "float": mx.float32,
              "complex": mx.complex64}

_ACCEPTED = (
    "an MLX dtype (mx.float32), a Python type (bool, int, float, complex), a NumPy dtype "
    "or scalar type (np.float32, np.dtype('int64')) or a dtype name ('float32', "
    "'bfloat16', 'int8', 'bool')"
)


def to_mlx_dtype(dtype: Any, where: str) -> mx.Dtype:
    """``dtype``, in any spelling jax.numpy accepts, as an MLX dtype.

    ``where`` names the function and argument for the error, e.g.
    ``"zeros: dtype"``; a dtype MLX cannot represent is a ``TypeError`` that
    lists what is accepted. An MLX dtype costs one type check.

    >>> import mlx.core as mx, numpy as np
    >>> from ftorch.dtypes import to_mlx_dtype
    >>> [to_mlx_dtype(d, "f: dtype") for d in (float, np.int8, "bfloat16", mx.bool_)]
    [mlx.core.float32, mlx.core.int8, mlx.core.bfloat16, mlx.core.bool]
    >>> to_mlx_dtype("flot32", "zeros: dtype")
    Traceback (most recent call last):
    ...
    TypeError: zeros: dtype must be ... got 'flot32' (did you mean 'float32'?)
    """
    if type(dtype) is mx.Dtype:
        return dtype
    return _convert(dtype, where)


def _convert(dtype: Any, where: str) -> mx.Dtype:
    """The slow path of ``to_mlx_dtype``: every spelling but an MLX dtype."""
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]
    if isinstance(dtype, str) and dtype in _ALL_NAMES:
        return _ALL_NAMES[dtype]
    numpy_name = None
    # Only dtype-like objects go to NumPy: it reads None as float64 and
    # many other objects as its "object" dtype.
    if isinstance(dtype, (str, type, np.dtype)):
        try:
            numpy_name = np.dtype(dtype).name
        except (TypeError, ValueError):
            pass
    found = DTYPES_BY_NAME.get(numpy_name) if numpy_name is not None else None
    if found is None:
        raise TypeError(_message(dtype, numpy_name, where))
    return found


def _message(dtype: Any, numpy_name: str | None, where: str) -> str:
    """Why ``dtype`` is refused and what is accepted instead."""
    if numpy_name == "complex128":
        return f"{where}: MLX has no complex128; use complex64 (got {dtype!r})"
    got = f"got {dtype!r}"
    if numpy_name is not None:
        got += f" (NumPy's {numpy_name}, which MLX does not have)"
    elif isinstance(dtype, str):
        close = difflib.get_close_matches(dtype, list(_ALL_NAMES), n=1)
        if close:
            got += f" (did you mean {close[0]!r}?)"
    return f"{where} must be {_ACCEPTED}; {got}"


# NumPy dtypes MLX lacks, and the cast that keeps their values best.
_NUMPY_CASTS = {"complex128": "np.complex64", "complex256": "np.complex64",
                "float128": "np.float64", "longdouble": "np.float64"}


def from_numpy(x: np.ndarray | np.generic, where: str) -> mx.array:
    """A NumPy array (or scalar) as an ``mx.array`` of the same dtype and
    values: float64 stays float64 (where ``mx.array`` alone gives float32),
    any byte order and strides are read. A dtype MLX cannot hold
    (complex128, float128, strings, objects, ...) is a ``TypeError`` saying
    what to cast to; ``where`` names the function and argument, e.g.
    ``"save: tree['w']"``.

    >>> import numpy as np
    >>> from ftorch.dtypes import from_numpy
    >>> from_numpy(np.array([0.5, 1.5]), "f: x").dtype
    mlx.core.float64
    >>> from_numpy(np.zeros(2, np.complex128), "f: x")
    Traceback (most recent call last):
    ...
    TypeError: f: x is a NumPy array of dtype complex128, which MLX cannot hold; cast it ...
    """
    x = np.asarray(x)
    dtype = DTYPES_BY_NAME.get(x.dtype.name)
    if dtype is None:
        cast = _NUMPY_CASTS.get(x.dtype.name)
        fix = (f"cast it first, e.g. .astype({cast})" if cast else
               "give an array of bool, int, float or complex64 numbers")
        raise TypeError(f"{where} is a NumPy array of dtype {x.dtype}, which MLX cannot hold; "
                        f"{fix}")
    # MLX reads native byte order and non-negative strides only.
    x = np.require(x, x.dtype.newbyteorder("="), "C")
    if dtype == mx.bfloat16:  # ml_dtypes' bfloat16: MLX takes its bits
        return mx.array(x.view(np.uint16)).view(mx.bfloat16)
    return mx.array(x, dtype=dtype)


def promote_types(a: mx.Dtype, b: mx.Dtype) -> mx.Dtype:
    """The dtype MLX computes ``a`` and ``b`` operands in.

    >>> import ftorch.dtypes as dtypes, mlx.core as mx
    >>> dtypes.promote_types(mx.int8, mx.float16)
    mlx.core.float16
    """
    return (mx.zeros((), a) + mx.zeros((), b)).dtype
